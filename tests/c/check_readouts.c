/* check_readouts.c: the readouts of docs/readouts.md on hand-checkable matrices, their undefined cases and
 * reasons, the error curve and the row-entropy histogram.
 * readouts covered: sigma1 rank rank_tol rank_rel_1e-3 rank_rel_1e-2 rank_energy_99 effective_rank stable_rank
 * readouts covered: sparsity_lt_0.01 sparsity_tau keys_for_90 row_entropy_mean row_entropy_uniform
 * readouts covered: error_fro_rel row_kl_mean output_error_rel noise_floor row_sum_dev_max
 * (the convention: docs/adding-a-readout.md) */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"
#include "internal.h"
#include "testutil.h"

// ----------------------------------------------------------------------------------------------------
// helpers

typedef struct res { double v[AV_R_COUNT]; int why[AV_R_COUNT]; int status; } res;

// Readouts of M with its accurate spectrum; A, V optional.
static res readouts(const float *M, const float *A, const float *V, int n, int dv, int causal, double tau) {
    res r;
    double *sv = malloc(sizeof(double) * n), fl;
    size_t bs = av_svd_work(n, AV_SVD_ACCURATE), br = av_readouts_work(n, dv);
    void *ws = malloc(bs), *wr = malloc(br);
    ck_assert_int_eq(av_singular_values(sv, &fl, M, n, AV_SVD_ACCURATE, ws, bs), AV_OK);
    r.status = av_readouts(r.v, r.why, M, sv, fl, A, V, n, dv, causal, tau, wr, br);
    free(sv); free(ws); free(wr);
    return r;
}

static float *identity(int n) {
    float *M = calloc((size_t)n * n, sizeof(float));
    for (int i = 0; i < n; i++) M[i * n + i] = 1.0f;
    return M;
}

// Causal softmax-like reference: row i uniform over j ≤ i.
static float *causal_uniform(int n) {
    float *M = calloc((size_t)n * n, sizeof(float));
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) M[i * n + j] = 1.0f / (i + 1);
    return M;
}

// ----------------------------------------------------------------------------------------------------
// hand-checkable matrices

START_TEST(test_identity) {
    const int n = 37;
    float *M = identity(n);
    res r = readouts(M, NULL, NULL, n, 0, 0, 0);
    ck_assert_int_eq(r.status, AV_OK);
    ck_assert_double_eq_tol(r.v[AV_R_SIGMA1], 1.0, 1e-15);
    ck_assert_double_eq(r.v[AV_R_RANK], n);
    ck_assert_double_eq_tol(r.v[AV_R_RANK_TOL], n * FLT_EPSILON, 1e-20);
    ck_assert_double_eq(r.v[AV_R_RANK_REL_1E3], n);
    ck_assert_double_eq(r.v[AV_R_RANK_REL_1E2], n);
    ck_assert_double_eq(r.v[AV_R_RANK_ENERGY_99], n); // 36/37 < 0.99
    ck_assert_double_eq_tol(r.v[AV_R_EFFECTIVE_RANK], n, 1e-12);
    ck_assert_double_eq_tol(r.v[AV_R_STABLE_RANK], n, 1e-12); // ‖I‖_F²/σ₁² = n
    ck_assert_double_eq(r.v[AV_R_ROW_ENTROPY_MEAN], 0.0);
    ck_assert_double_eq_tol(r.v[AV_R_ROW_ENTROPY_UNIFORM], log(n), 1e-14);
    ck_assert_double_eq_tol(r.v[AV_R_SPARSITY_LT_001], (double)(n * n - n) / (n * n), 1e-15);
    ck_assert_double_eq_tol(r.v[AV_R_SPARSITY_TAU], (double)(n - 1) / n, 1e-15);
    ck_assert_double_eq(r.v[AV_R_KEYS_FOR_90], 1.0);
    for (int k = AV_R_ERROR_FRO_REL; k <= AV_R_OUTPUT_ERROR_REL; k++) {
        ck_assert(isnan(r.v[k]));
        ck_assert_int_eq(r.why[k], AV_REASON_NO_REFERENCE);
    }
    ck_assert_double_eq_tol(r.v[AV_R_NOISE_FLOOR], n * DBL_EPSILON, 1e-25);
    free(M);
}
END_TEST

START_TEST(test_uniform) {
    const int n = 130;
    float *M = malloc(sizeof(float) * n * n);
    for (int i = 0; i < n * n; i++) M[i] = 1.0f / n;
    res r = readouts(M, NULL, NULL, n, 0, 0, 0);
    ck_assert_double_eq_tol(r.v[AV_R_SIGMA1], 1.0, 1e-6);
    ck_assert_double_eq(r.v[AV_R_RANK], 1);
    ck_assert_double_eq(r.v[AV_R_RANK_REL_1E3], 1);
    ck_assert_double_eq(r.v[AV_R_RANK_ENERGY_99], 1);
    ck_assert_double_eq_tol(r.v[AV_R_EFFECTIVE_RANK], 1.0, 1e-12);
    ck_assert_double_eq_tol(r.v[AV_R_STABLE_RANK], 1.0, 1e-12);
    ck_assert_double_eq_tol(r.v[AV_R_ROW_ENTROPY_MEAN], log(n), 1e-12);
    ck_assert_double_eq(r.v[AV_R_SPARSITY_LT_001], 1.0); // 1/130 < 0.01
    ck_assert_double_eq(r.v[AV_R_SPARSITY_TAU], 0.0);    // 1/n is not below 0.1/n
    ck_assert_double_eq(r.v[AV_R_KEYS_FOR_90], 117);    // ⌈0.9·130⌉
    res t = readouts(M, NULL, NULL, n, 0, 0, 20.0);       // τ = 20: every entry below 20/n
    ck_assert_double_eq(t.v[AV_R_SPARSITY_TAU], 1.0);
    free(M);
}
END_TEST

// One-hot rows (a permutation plus a repeated key): rank, entropy 0, one key each.
START_TEST(test_one_hot) {
    const int n = 10;
    float M[100] = {0};
    for (int i = 0; i < n; i++) M[i * n + (i < 5 ? i : 0)] = 1.0f; // rows 5.. all point at key 0
    res r = readouts(M, NULL, NULL, n, 0, 0, 0);
    ck_assert_double_eq(r.v[AV_R_RANK], 5);
    ck_assert_double_eq_tol(r.v[AV_R_SIGMA1], sqrt(6.0), 1e-14);
    ck_assert_double_eq_tol(r.v[AV_R_STABLE_RANK], 10.0 / 6.0, 1e-14);
    ck_assert_double_eq(r.v[AV_R_ROW_ENTROPY_MEAN], 0.0);
    ck_assert_double_eq(r.v[AV_R_KEYS_FOR_90], 1.0);
    ck_assert_double_eq(r.v[AV_R_SPARSITY_LT_001], 0.9);
    double p1 = sqrt(6.0) / (sqrt(6.0) + 4), q = 1 / (sqrt(6.0) + 4);
    ck_assert_double_eq_tol(r.v[AV_R_EFFECTIVE_RANK], exp(-p1 * log(p1) - 4 * q * log(q)), 1e-13);
    ck_assert_double_eq(r.v[AV_R_RANK_ENERGY_99], 5); // energies 6,1,1,1,1 of 10
}
END_TEST

// Rank 1 outer product u·vᵀ with known σ₁ = ‖u‖·‖v‖; energy rank 1; the error curve drops to 0 at r = 1.
START_TEST(test_rank_one) {
    const int n = 23;
    float *M = malloc(sizeof(float) * n * n);
    double nu = 0, nv = 0;
    for (int i = 0; i < n; i++) { nu += (i + 1.0) * (i + 1.0); nv += 1.0 / ((i + 2.0) * (i + 2.0)); }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) M[i * n + j] = (float)((i + 1.0) / (j + 2.0));
    res r = readouts(M, NULL, NULL, n, 0, 0, 0);
    ck_assert_double_eq(r.v[AV_R_RANK], 1);
    ck_assert_double_eq(r.v[AV_R_RANK_REL_1E3], 1);
    ck_assert_double_eq(r.v[AV_R_RANK_ENERGY_99], 1);
    ck_assert_double_eq_tol(r.v[AV_R_SIGMA1], sqrt(nu * nv), 1e-6 * sqrt(nu * nv));
    ck_assert_double_eq_tol(r.v[AV_R_STABLE_RANK], 1.0, 1e-6);
    free(M);
}
END_TEST

// Causal definitions: row_entropy_uniform = mean ln i, sparsity_tau over allowed entries only.
START_TEST(test_causal_definitions) {
    const int n = 50;
    float *M = causal_uniform(n);
    res r = readouts(M, NULL, NULL, n, 0, 1, 0);
    double want = 0;
    for (int i = 1; i <= n; i++) want += log(i);
    ck_assert_double_eq_tol(r.v[AV_R_ROW_ENTROPY_UNIFORM], want / n, 1e-13);
    ck_assert_double_eq_tol(r.v[AV_R_ROW_ENTROPY_MEAN], want / n, 1e-6);
    ck_assert_double_eq(r.v[AV_R_SPARSITY_TAU], 0.0); // uniform allowed entries: none below 0.1/i
    long lt = 0;                                     // masked entries count as zeros below 0.01
    for (int i = 0; i < n; i++) lt += (n - 1 - i) + (1.0f / (i + 1) < 0.01f ? i + 1 : 0);
    ck_assert_double_eq_tol(r.v[AV_R_SPARSITY_LT_001], (double)lt / (n * n), 1e-15);
    double keys = 0;
    for (int i = 1; i <= n; i++) keys += ceil(0.9 * i - 1e-9);
    ck_assert_double_eq_tol(r.v[AV_R_KEYS_FOR_90], keys / n, 1e-12);
    ck_assert_double_eq(r.v[AV_R_RANK], n); // lower triangular with positive diagonal
    // a causal readout of a non-causal matrix reads only j ≤ i: an upper entry changes nothing but σ
    M[1] = 0.5f;
    res s = readouts(M, NULL, NULL, n, 0, 1, 0);
    ck_assert_double_eq(s.v[AV_R_ROW_ENTROPY_MEAN], r.v[AV_R_ROW_ENTROPY_MEAN]);
    ck_assert_double_eq(s.v[AV_R_KEYS_FOR_90], r.v[AV_R_KEYS_FOR_90]);
    free(M);
}
END_TEST

// keys_for_90 on rows with distinct weights, against a sort-based count.
/* row_sum_dev_max = max_i |Σ_{allowed j} M_ij − 1|: 0 for distributions, exact for hand-made rows; causal
 * rows read their allowed entries only. */
START_TEST(test_row_sum_dev_max) {
    float *I = identity(5);
    ck_assert(readouts(I, NULL, NULL, 5, 0, 0, 0).v[AV_R_ROW_SUM_DEV_MAX] == 0.0);
    ck_assert(readouts(I, NULL, NULL, 5, 0, 1, 0).v[AV_R_ROW_SUM_DEV_MAX] == 0.0);
    float M[9] = {0.5f, 0.25f, 0.0f, 1.0f, 1.0f, 0.0f, 0.125f, 0.0f, 2.0f};
    ck_assert(readouts(M, NULL, NULL, 3, 0, 0, 0).v[AV_R_ROW_SUM_DEV_MAX] == 1.125); /* row 2: 2.125 − 1 */
    M[8] = 0.5f;                                                                  /* rows: 0.75, 2, 0.625 */
    ck_assert(readouts(M, NULL, NULL, 3, 0, 0, 0).v[AV_R_ROW_SUM_DEV_MAX] == 1.0);
    /* causal: row 1 sees M[1][0..1] = 2 (dev 1), row 0 sees 0.5 (dev 0.5), row 2 sees 0.625 + 0.5 */
    ck_assert(readouts(M, NULL, NULL, 3, 0, 1, 0).v[AV_R_ROW_SUM_DEV_MAX] == 1.0);
    ck_assert_str_eq(av_readout_name(AV_R_ROW_SUM_DEV_MAX), "row_sum_dev_max");
    free(I);
}
END_TEST

START_TEST(test_keys_for_90_random) {
    const int n = 61;
    float *M = malloc(sizeof(float) * n * n);
    av_rng rng;
    av_rng_seed(&rng, 9);
    for (int i = 0; i < n * n; i++) M[i] = (float)(av_rng_uniform(&rng) * av_rng_uniform(&rng));
    for (int i = 0; i < n; i++) M[i * n + (i * 7) % n] = M[i * n + (i * 3) % n]; // some ties
    res r = readouts(M, NULL, NULL, n, 0, 0, 0);
    double want = 0;
    float *row = malloc(sizeof(float) * n);
    for (int i = 0; i < n; i++) {
        double sum = 0, cum = 0;
        for (int j = 0; j < n; j++) { row[j] = M[i * n + j]; sum += row[j]; }
        for (int k = 0; k < n; k++) { // selection sort, descending
            int b = k;
            for (int j = k + 1; j < n; j++) if (row[j] > row[b]) b = j;
            float t = row[k]; row[k] = row[b]; row[b] = t;
        }
        int k = 0;
        while (cum < 0.9 * sum * (1 - 1e-12)) cum += row[k++];
        want += k;
    }
    ck_assert_double_eq_tol(r.v[AV_R_KEYS_FOR_90], want / n, 1e-12);
    free(M); free(row);
}
END_TEST

// The entry and error readouts against plain references (libm log, a full sort, a naive M·V) on
// rows with a wide dynamic range: zeros, subnormal floats, ties, exact powers of two, values near 1.
// Sizes not multiples of 8 so that the column tail of the output error runs.
static float wide_value(av_rng *rng) {
    double u = av_rng_uniform(rng);
    if (u < 0.05) return 0.0f;
    if (u < 0.08) return 1e-44f;                     // subnormal
    if (u < 0.20) return 0.25f;                      // ties
    if (u < 0.30) return (float)ldexp(1.0, -(int)(av_rng_uniform(rng) * 60));
    return (float)pow(av_rng_uniform(rng), 8.0);     // many decades
}

static int fewest_by_sort(const float *row, int m, float *tmp) {
    double sum = 0.0, cum = 0.0;
    for (int j = 0; j < m; j++) { tmp[j] = row[j]; sum += row[j]; }
    for (int k = 1; k < m; k++) { // insertion sort, descending
        float v = tmp[k];
        int j = k;
        for (; j > 0 && tmp[j - 1] < v; j--) tmp[j] = tmp[j - 1];
        tmp[j] = v;
    }
    int k = 0;
    while (k < m && cum < 0.9 * sum * (1 - 1e-12)) cum += tmp[k++];
    return k;
}

START_TEST(test_entries_and_errors_against_references) {
    const int n = 203, dv = 13;
    float *M = malloc(sizeof(float) * n * n), *A = malloc(sizeof(float) * n * n), *V = malloc(sizeof(float) * n * dv);
    float *tmp = malloc(sizeof(float) * n);
    av_rng rng;
    av_rng_seed(&rng, 21);
    for (int i = 0; i < n * n; i++) { M[i] = wide_value(&rng); A[i] = 0.5f + (float)av_rng_uniform(&rng); }
    for (int i = 0; i < n; i++) M[i * n + i] = 0.5f; // no row sums to zero, causal or not
    for (int i = 0; i < n * dv; i++) V[i] = (float)av_rng_normal(&rng);
    for (int causal = 0; causal <= 1; causal++) {
        size_t br = av_readouts_work(n, dv);
        void *wr = malloc(br);
        res r;
        ck_assert_int_eq(av_readouts(r.v, r.why, M, NULL, 0, A, V, n, dv, causal, 0, wr, br), AV_OK);
        double keys = 0, ent = 0, kl = 0, num = 0, den = 0;
        for (int i = 0; i < n; i++) {
            int m = causal ? i + 1 : n;
            const float *row = M + (size_t)i * n, *a = A + (size_t)i * n;
            double sum = 0, h = 0;
            for (int j = 0; j < m; j++) sum += row[j];
            for (int j = 0; j < m; j++) if (row[j] > 0) h -= row[j] / sum * log(row[j] / sum);
            ent += h;
            keys += fewest_by_sort(row, m, tmp);
            for (int j = 0; j < m; j++) if (row[j] > 0) kl += a[j] * log((double)a[j] / row[j]);
            for (int c = 0; c < dv; c++) {
                double d = 0, y = 0;
                for (int j = 0; j < n; j++) {
                    double mm = causal && j > i ? 0.0 : row[j], aa = causal && j > i ? 0.0 : a[j];
                    d += (mm - aa) * V[j * dv + c];
                    y += aa * V[j * dv + c];
                }
                num += d * d;
                den += y * y;
            }
        }
        ck_assert_int_eq(r.why[AV_R_KEYS_FOR_90], AV_REASON_NONE);
        ck_assert_double_eq_tol(r.v[AV_R_KEYS_FOR_90], keys / n, 1e-12);
        ck_assert_double_eq_tol(r.v[AV_R_ROW_ENTROPY_MEAN], ent / n, 1e-13 * (ent / n));
        ck_assert(isnan(r.v[AV_R_ROW_KL_MEAN])); // M has zeros where A is positive
        // the products run in float32 (readouts.c): about 1e-6 relative; causal, M and A hold entries past
        // each row's last key here, which the output error leaves out row by row as the definition does
        // (the products' strips of four rows once read them up to the strip's last key)
        ck_assert_double_eq_tol(r.v[AV_R_OUTPUT_ERROR_REL], sqrt(num / den), 1e-5 * sqrt(num / den));
        (void)kl;
        free(wr);
    }
    // KL on a strictly positive M, against libm
    for (int i = 0; i < n * n; i++) M[i] = M[i] > 0 ? M[i] : 1e-30f;
    res r = readouts(M, A, V, n, dv, 0, 0);
    double kl = 0;
    for (int i = 0; i < n * n; i++) kl += A[i] * log((double)A[i] / M[i]);
    ck_assert_double_eq_tol(r.v[AV_R_ROW_KL_MEAN], kl / n, 1e-13 * fabs(kl / n));
    free(M); free(A); free(V); free(tmp);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// error readouts against a reference

START_TEST(test_errors_against_reference) {
    const int n = 6, dv = 3;
    float A[36], M[36], V[18];
    for (int i = 0; i < 36; i++) A[i] = 1.0f / 6;
    for (int i = 0; i < 18; i++) V[i] = (float)(i % 5) - 1.5f;
    memcpy(M, A, sizeof M);
    res same = readouts(M, A, V, n, dv, 0, 0);
    ck_assert_double_eq(same.v[AV_R_ERROR_FRO_REL], 0.0);
    ck_assert_double_eq(same.v[AV_R_ROW_KL_MEAN], 0.0);
    ck_assert_double_eq(same.v[AV_R_OUTPUT_ERROR_REL], 0.0);
    // M = identity: KL(uniform‖one-hot) has zeros where A > 0
    float *I = identity(n);
    res id = readouts(I, A, V, n, dv, 0, 0);
    ck_assert_double_eq_tol(id.v[AV_R_ERROR_FRO_REL], sqrt(6 * (25.0 / 36) + 30 * (1.0 / 36)) / 1.0, 1e-6);
    ck_assert(isnan(id.v[AV_R_ROW_KL_MEAN]));
    ck_assert_int_eq(id.why[AV_R_ROW_KL_MEAN], AV_REASON_ZERO_WHERE_POSITIVE);
    // M rows (1/2 on key 0, 1/10 elsewhere): KL per row = 1/6·ln(1/3) + 5/6·ln(10/6)
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) M[i * n + j] = j == 0 ? 0.5f : 0.1f;
    res kl = readouts(M, A, V, n, dv, 0, 0);
    double want = (1.0 / 6) * log((1.0 / 6) / 0.5) + (5.0 / 6) * log((1.0 / 6) / 0.1);
    ck_assert_double_eq_tol(kl.v[AV_R_ROW_KL_MEAN], want, 1e-6);
    // output error: (M − A)V and AV, by hand
    double num = 0, den = 0;
    for (int c = 0; c < dv; c++) {
        double mv = 0, av = 0;
        for (int j = 0; j < n; j++) { mv += (double)M[j] * V[j * dv + c]; av += (double)A[j] * V[j * dv + c]; }
        num += n * (mv - av) * (mv - av);
        den += n * av * av;
    }
    ck_assert_double_eq_tol(kl.v[AV_R_OUTPUT_ERROR_REL], sqrt(num / den), 1e-5 * sqrt(num / den));
    // no V
    res nov = readouts(M, A, NULL, n, 0, 0, 0);
    ck_assert(isnan(nov.v[AV_R_OUTPUT_ERROR_REL]));
    ck_assert_int_eq(nov.why[AV_R_OUTPUT_ERROR_REL], AV_REASON_NO_V);
    ck_assert(!isnan(nov.v[AV_R_ERROR_FRO_REL]));
    // negative weights: KL, keys and entropy undefined; Frobenius error still defined
    M[7] = -0.25f;
    res neg = readouts(M, A, V, n, dv, 0, 0);
    ck_assert_int_eq(neg.why[AV_R_ROW_KL_MEAN], AV_REASON_NEGATIVE);
    ck_assert_int_eq(neg.why[AV_R_KEYS_FOR_90], AV_REASON_NEGATIVE);
    ck_assert_int_eq(neg.why[AV_R_ROW_ENTROPY_MEAN], AV_REASON_NEGATIVE);
    ck_assert(isnan(neg.v[AV_R_ROW_KL_MEAN]) && isnan(neg.v[AV_R_KEYS_FOR_90]));
    ck_assert(isfinite(neg.v[AV_R_ERROR_FRO_REL]) && isfinite(neg.v[AV_R_OUTPUT_ERROR_REL]));
    // a zero row: entropy and keys undefined
    M[7] = 0.1f;
    for (int j = 0; j < n; j++) M[2 * n + j] = 0.0f;
    res zr = readouts(M, A, V, n, dv, 0, 0);
    ck_assert_int_eq(zr.why[AV_R_ROW_ENTROPY_MEAN], AV_REASON_ZERO_ROW);
    ck_assert_int_eq(zr.why[AV_R_KEYS_FOR_90], AV_REASON_ZERO_ROW);
    ck_assert_int_eq(zr.why[AV_R_ROW_KL_MEAN], AV_REASON_ZERO_WHERE_POSITIVE);
    // a non-finite reference or V
    A[3] = NAN;
    res na = readouts(M, A, V, n, dv, 0, 0);
    ck_assert_int_eq(na.why[AV_R_ERROR_FRO_REL], AV_REASON_REFERENCE_NONFINITE);
    ck_assert_int_eq(na.why[AV_R_OUTPUT_ERROR_REL], AV_REASON_REFERENCE_NONFINITE);
    A[3] = 1.0f / 6;
    V[4] = INFINITY;
    res nv = readouts(M, A, V, n, dv, 0, 0);
    ck_assert_int_eq(nv.why[AV_R_OUTPUT_ERROR_REL], AV_REASON_NONFINITE);
    ck_assert(isfinite(nv.v[AV_R_ROW_KL_MEAN]) || nv.why[AV_R_ROW_KL_MEAN] != AV_REASON_NONE);
    free(I);
}
END_TEST

// Causal KL and Frobenius error: masked entries of both are zero; KL reads allowed entries only.
START_TEST(test_errors_causal) {
    const int n = 9;
    float *A = causal_uniform(n), *M = causal_uniform(n);
    for (int i = 1; i < n; i++) { M[i * n] += 0.5f / (i + 1); M[i * n + i] -= 0.5f / (i + 1); }
    res r = readouts(M, A, NULL, n, 0, 1, 0);
    double kl = 0;
    for (int i = 1; i < n; i++) {
        double a = 1.0 / (i + 1);
        kl += a * log(a / M[i * n]) + a * log(a / M[i * n + i]);
    }
    ck_assert_double_eq_tol(r.v[AV_R_ROW_KL_MEAN], kl / n, 1e-7);
    free(A); free(M);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// spectral readouts without or with a bad spectrum, the floor, the zero matrix

START_TEST(test_spectral_cases) {
    const int n = 4;
    float M[16] = {0};
    double vals[AV_R_COUNT], sv[4] = {2, 1, 1e-3, 0};
    int why[AV_R_COUNT];
    size_t b = av_readouts_work(n, 0);
    void *w = malloc(b);
    for (int i = 0; i < 4; i++) M[i * 5] = (float)sv[i];
    ck_assert_int_eq(av_readouts(vals, why, M, NULL, 0, NULL, NULL, n, 0, 0, 0, w, b), AV_OK);
    ck_assert(isnan(vals[AV_R_RANK]) && isnan(vals[AV_R_SIGMA1]) && isnan(vals[AV_R_NOISE_FLOOR]));
    ck_assert_int_eq(why[AV_R_EFFECTIVE_RANK], AV_REASON_NO_SPECTRUM);
    ck_assert(isfinite(vals[AV_R_SPARSITY_LT_001]));
    // the floor decides: 1e-3 counts with floor 0, not with floor 1e-3 (σ at the floor is not counted)
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 0.0, NULL, NULL, n, 0, 0, 0, w, b), AV_OK);
    ck_assert_double_eq(vals[AV_R_RANK], 3);
    ck_assert_double_eq(vals[AV_R_RANK_REL_1E3], 2); // 1e-3 is not above 1e-3·σ₁ = 2e-3
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 1e-3, NULL, NULL, n, 0, 0, 0, w, b), AV_OK);
    ck_assert_double_eq(vals[AV_R_RANK], 2);
    ck_assert_double_eq(vals[AV_R_NOISE_FLOOR], 1e-3);
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 1.5, NULL, NULL, n, 0, 0, 0, w, b), AV_OK);
    ck_assert_double_eq(vals[AV_R_RANK], 1);
    ck_assert_double_eq(vals[AV_R_RANK_REL_1E2], 1);
    ck_assert_double_eq(vals[AV_R_RANK_ENERGY_99], 2); // 4, 1 of 5: 0.8 < 0.99 ≤ 1.0
    sv[1] = NAN;
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 0, NULL, NULL, n, 0, 0, 0, w, b), AV_OK);
    ck_assert_int_eq(why[AV_R_RANK], AV_REASON_NONFINITE);
    // the zero matrix: ranks 0, effective and stable rank undefined, error curve all zero
    double z[4] = {0}, e[5];
    memset(M, 0, sizeof M);
    ck_assert_int_eq(av_readouts(vals, why, M, z, 0, NULL, NULL, n, 0, 0, 0, w, b), AV_OK);
    ck_assert_double_eq(vals[AV_R_RANK], 0);
    ck_assert_double_eq(vals[AV_R_RANK_ENERGY_99], 0);
    ck_assert_int_eq(why[AV_R_EFFECTIVE_RANK], AV_REASON_ZERO_MATRIX);
    ck_assert_int_eq(why[AV_R_STABLE_RANK], AV_REASON_ZERO_MATRIX);
    ck_assert_int_eq(why[AV_R_ROW_ENTROPY_MEAN], AV_REASON_ZERO_ROW);
    ck_assert_int_eq(av_error_curve(e, z, n), AV_OK);
    for (int r = 0; r <= n; r++) ck_assert_double_eq(e[r], 0.0);
    free(w);
}
END_TEST

START_TEST(test_error_curve) {
    const double sv[5] = {3, 2, 1, 1, 0};
    double e[6];
    ck_assert_int_eq(av_error_curve(e, sv, 5), AV_OK);
    const double want[6] = {1, 6.0 / 15, 2.0 / 15, 1.0 / 15, 0, 0};
    for (int r = 0; r <= 5; r++) ck_assert_double_eq_tol(e[r], want[r], 1e-16);
    ck_assert_double_eq(e[0], 1.0);
    ck_assert_double_eq(e[5], 0.0);
    ck_assert_int_eq(av_error_curve(NULL, sv, 5), AV_ERR_NULL);
    ck_assert_int_eq(av_error_curve(e, NULL, 5), AV_ERR_NULL);
    ck_assert_int_eq(av_error_curve(e, sv, 0), AV_ERR_SIZE);
    const double bad[2] = {1, INFINITY};
    ck_assert_int_eq(av_error_curve(e, bad, 2), AV_ERR_NONFINITE);
}
END_TEST

/* Found by tests/fuzz/fuzz_api.c: σ beyond 1e154 squared to Inf, so Σσ² was Inf and every e(r) NaN
 * under AV_OK; tiny σ squared to 0 and e(0) was 0. The curve is scale-free: e(c·σ) = e(σ). */
START_TEST(test_error_curve_extreme_scales) {
    const double sv[5] = {3, 2, 1, 1, 0}, want[6] = {1, 6.0 / 15, 2.0 / 15, 1.0 / 15, 0, 0};
    const double scales[] = {1e300 / 3, 1e160, 0x1p-1000, 1e-310}; /* 1e-310: σ subnormal */
    double x[5], e[6];
    for (size_t k = 0; k < sizeof scales / sizeof *scales; k++) {
        for (int i = 0; i < 5; i++) x[i] = sv[i] * scales[k];
        ck_assert_int_eq(av_error_curve(e, x, 5), AV_OK);
        for (int r = 0; r <= 5; r++) {
            ck_assert_msg(isfinite(e[r]), "scale %g: e(%d) = %g", scales[k], r, e[r]);
            ck_assert_double_eq_tol(e[r], want[r], k == 3 ? 1e-3 : 1e-15);
        }
    }
    const double top[2] = {DBL_MAX, -DBL_MAX};
    ck_assert_int_eq(av_error_curve(e, top, 2), AV_OK);
    ck_assert_double_eq(e[0], 1.0);
    ck_assert_double_eq(e[1], 0.5);
    ck_assert_double_eq(e[2], 0.0);
}
END_TEST

START_TEST(test_entropy_hist) {
    const int n = 16;
    float *I = identity(n), *U = malloc(sizeof(float) * n * n), *C = causal_uniform(n);
    for (int i = 0; i < n * n; i++) U[i] = 1.0f / n;
    int counts[4];
    ck_assert_int_eq(av_row_entropy_hist(counts, 4, I, n, 0), AV_OK);
    ck_assert_int_eq(counts[0], n);
    ck_assert_int_eq(av_row_entropy_hist(counts, 4, U, n, 0), AV_OK);
    ck_assert_int_eq(counts[3], n); // entropy ln n: the top edge, in the last bin
    ck_assert_int_eq(av_row_entropy_hist(counts, 4, C, n, 1), AV_OK);
    // row i has entropy ln(i+1): bins of width ln16/4 = ln 2 → ln(i+1)/ln 2 = log2(i+1)
    int want[4] = {0};
    for (int i = 0; i < n; i++) {
        int b = (int)(log((double)(i + 1)) / log(16.0) * 4 + 1e-12);
        want[b > 3 ? 3 : b]++;
    }
    for (int b = 0; b < 4; b++) ck_assert_int_eq(counts[b], want[b]);
    U[3] = -1.0f;
    ck_assert_int_eq(av_row_entropy_hist(counts, 4, U, n, 0), AV_WARN_ZERO_ROW);
    ck_assert_int_eq(counts[0] + counts[1] + counts[2] + counts[3], n - 1);
    ck_assert_int_eq(av_row_entropy_hist(NULL, 4, U, n, 0), AV_ERR_NULL);
    ck_assert_int_eq(av_row_entropy_hist(counts, 4, NULL, n, 0), AV_ERR_NULL);
    ck_assert_int_eq(av_row_entropy_hist(counts, 0, U, n, 0), AV_ERR_SIZE);
    ck_assert_int_eq(av_row_entropy_hist(counts, 4, U, 0, 0), AV_ERR_SIZE);
    U[5] = NAN;
    ck_assert_int_eq(av_row_entropy_hist(counts, 4, U, n, 0), AV_ERR_NONFINITE);
    free(I); free(U); free(C);
}
END_TEST

// Row i's entropy in plain double, as docs/readouts.md defines it: NaN for a negative entry or a zero sum.
static double ref_row_entropy(const float *row, int m) {
    double sum = 0, h = 0;
    for (int j = 0; j < m; j++) {
        if (row[j] < 0) return NAN;
        sum += row[j];
    }
    if (!(sum > 0)) return NAN;
    for (int j = 0; j < m; j++)
        if (row[j] > 0) h -= row[j] / sum * log(row[j] / sum);
    return h;
}

START_TEST(test_readouts_rows) {
    const int n = 157, bins = 20; // odd n: the two-lane loops' tails
    float *M = malloc(sizeof(float) * n * n);
    double *h = malloc(sizeof(double) * n), *h2 = malloc(sizeof(double) * n);
    av_rng rng;
    av_rng_seed(&rng, 33);
    for (int i = 0; i < n * n; i++) M[i] = wide_value(&rng);
    for (int i = 0; i < n; i++) M[i * n + i] = 0.5f;
    for (int j = 0; j < n; j++) M[7 * n + j] = 0.0f; // a zero row
    M[7 * n + 7] = 0.0f;
    M[11 * n + 3] = -0.25f;                          // a negative entry (allowed in both masks)
    size_t br = av_readouts_work(n, 0);
    void *wr = malloc(br);
    for (int causal = 0; causal <= 1; causal++) {
        res r, q;
        ck_assert_int_eq(av_readouts_rows(r.v, r.why, h, M, NULL, 0, NULL, NULL, n, 0, causal, 0, wr, br), AV_OK);
        ck_assert_int_eq(av_readouts_rows(q.v, q.why, NULL, M, NULL, 0, NULL, NULL, n, 0, causal, 0, wr, br), AV_OK);
        for (int k = 0; k < AV_R_COUNT; k++) { // NULL row_entropy: the same readouts, bit for bit
            ck_assert_int_eq(r.why[k], q.why[k]);
            ck_assert(memcmp(&r.v[k], &q.v[k], sizeof(double)) == 0);
        }
        for (int i = 0; i < n; i++) {
            double want = ref_row_entropy(M + (size_t)i * n, causal ? i + 1 : n);
            if (isnan(want)) ck_assert_msg(isnan(h[i]), "row %d: %g, want NaN", i, h[i]);
            else ck_assert_msg(fabs(h[i] - want) <= 1e-13 * fabs(want) + 1e-15, "row %d: %.17g, want %.17g", i, h[i], want);
        }
        ck_assert(isnan(h[7]) && isnan(h[11]));
        // the histogram from these entropies is exactly av_row_entropy_hist's
        int c1[20], c2[20];
        ck_assert_int_eq(av_entropy_hist(c1, bins, h, n), AV_WARN_ZERO_ROW);
        ck_assert_int_eq(av_row_entropy_hist(c2, bins, M, n, causal), AV_WARN_ZERO_ROW);
        for (int b = 0; b < bins; b++) ck_assert_int_eq(c1[b], c2[b]);
    }
    // rows that are distributions: row_entropy_mean is the mean of row_entropy, and no warning
    for (int i = 0; i < n * n; i++) M[i] = fabsf(M[i]) + 1e-3f;
    res r;
    ck_assert_int_eq(av_readouts_rows(r.v, r.why, h, M, NULL, 0, NULL, NULL, n, 0, 0, 0, wr, br), AV_OK);
    double mean = 0;
    for (int i = 0; i < n; i++) mean += h[i];
    ck_assert_double_eq_tol(r.v[AV_R_ROW_ENTROPY_MEAN], mean / n, 1e-14 * (mean / n));
    int c1[20], c2[20];
    ck_assert_int_eq(av_entropy_hist(c1, bins, h, n), AV_OK);
    ck_assert_int_eq(av_row_entropy_hist(c2, bins, M, n, 0), AV_OK);
    for (int b = 0; b < bins; b++) ck_assert_int_eq(c1[b], c2[b]);
    // hand-placed entropies: bins of width ln n / 4, the top edge and beyond in the last, below 0 in the first
    const double top = log(4.0);
    double g[4] = {0.0, top, -1.0, INFINITY};
    int c4[4];
    ck_assert_int_eq(av_entropy_hist(c4, 4, g, 4), AV_OK);
    ck_assert_int_eq(c4[0], 2);
    ck_assert_int_eq(c4[3], 2);
    g[2] = 0.6 * top;
    g[3] = NAN;
    ck_assert_int_eq(av_entropy_hist(c4, 4, g, 4), AV_WARN_ZERO_ROW);
    ck_assert_int_eq(c4[0] + c4[1] + c4[2] + c4[3], 3);
    ck_assert_int_eq(c4[2], 1);
    // n = 1: ln n = 0, every defined row in bin 0
    double one = 0.0;
    ck_assert_int_eq(av_entropy_hist(c4, 4, &one, 1), AV_OK);
    ck_assert_int_eq(c4[0], 1);
    // errors
    ck_assert_int_eq(av_entropy_hist(NULL, 4, g, 4), AV_ERR_NULL);
    ck_assert_int_eq(av_entropy_hist(c4, 4, NULL, 4), AV_ERR_NULL);
    ck_assert_int_eq(av_entropy_hist(c4, 0, g, 4), AV_ERR_SIZE);
    ck_assert_int_eq(av_entropy_hist(c4, 4, g, 0), AV_ERR_SIZE);
    ck_assert_int_eq(av_entropy_hist(c4, 4, g, AV_MAX_N + 1), AV_ERR_SIZE);
    ck_assert_int_eq(av_readouts_rows(NULL, r.why, h, M, NULL, 0, NULL, NULL, n, 0, 0, 0, wr, br), AV_ERR_NULL);
    ck_assert_int_eq(av_readouts_rows(r.v, r.why, h, M, NULL, 0, NULL, NULL, n, 0, 0, 0, wr, br - 1), AV_ERR_WORKSPACE);
    M[5] = INFINITY; // every row entropy NaN with every readout
    h[0] = 1.0;
    ck_assert_int_eq(av_readouts_rows(r.v, r.why, h, M, NULL, 0, NULL, NULL, n, 0, 0, 0, wr, br), AV_ERR_NONFINITE);
    for (int i = 0; i < n; i++) ck_assert(isnan(h[i]));
    (void)h2;
    free(M); free(h); free(h2); free(wr);
}
END_TEST

/* KL(A‖M) of one row in long double, the entries' ratio through log1pl: the reference the fast and the plain
 * row passes are both measured against on near-equal rows. */
static long double kl_row_ld(const float *m, const float *a, int len) {
    long double t = 0;
    for (int j = 0; j < len; j++)
        if (a[j] > 0 && m[j] > 0) t += (long double)a[j] * log1pl(((long double)a[j] - m[j]) / m[j]);
    return t;
}

/* Row entropy in long double, ln(s/m_j) as log1pl(rest_j/m_j) with rest_j = s − m_j summed from the other
 * entries (prefix and suffix sums): accurate even for a nearly one-hot row, where p ln p of the large entry
 * is all cancellation in double. NaN as docs/readouts.md. */
static long double entropy_row_ld(const float *m, int len) {
    long double *pre = malloc(sizeof(long double) * (len + 1)), *suf = malloc(sizeof(long double) * (len + 1));
    pre[0] = 0;
    for (int j = 0; j < len; j++) pre[j + 1] = pre[j] + m[j];
    suf[len] = 0;
    for (int j = len - 1; j >= 0; j--) suf[j] = suf[j + 1] + m[j];
    long double s = pre[len], h = 0;
    int bad = !(s > 0);
    for (int j = 0; j < len; j++) {
        if (m[j] < 0) bad = 1;
        if (m[j] > 0) h += m[j] / s * log1pl((pre[j] + suf[j + 1]) / m[j]);
    }
    free(pre); free(suf);
    return bad ? NAN : h;
}

/* av_readouts_rows (the fused row pass: shared logarithms, float thresholds, one division per two
 * logarithms) against avi_readouts_ref (the plain twins it replaced) on rows of every kind: wide dynamic
 * range with zeros and subnormals, softmax-like, rows far from sum 1, nearly one-hot, negative entries,
 * M = A·(1 + noise) for noise 1e-6, 1e-4 and 3e-3 (the KL's two shares cancel: its rows are summed again
 * from the logarithms' parts); causal and not, sizes off multiples of 8. Counts, sparsities and row_sum_dev_max
 * agree exactly; entropies and KL against long double references within 1e-13 relative (the KL: of the
 * mean of its rows' sizes) or 4× the plain path's own error (nearly one-hot rows and near-equal M and A are ill-conditioned in double for both). */
START_TEST(test_fused_rows_match_reference) {
    const int sizes[] = {1, 7, 64, 203};
    av_rng rng;
    av_rng_seed(&rng, 91);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int kind = 0; kind < 8; kind++)
            for (int causal = 0; causal <= 1; causal++) {
                const int n = sizes[si];
                float *M = malloc(sizeof(float) * n * n), *A = malloc(sizeof(float) * n * n);
                double *h = malloc(sizeof(double) * n), *g = malloc(sizeof(double) * n);
                for (int i = 0; i < n; i++) {
                    double sa = 0, sm = 0;
                    for (int j = 0; j < n; j++) {
                        float e = (float)exp(3 * av_rng_normal(&rng));
                        A[i * n + j] = e;
                        sa += e;
                    }
                    for (int j = 0; j < n; j++) A[i * n + j] = (float)(A[i * n + j] / sa);
                    for (int j = 0; j < n; j++) {
                        float a = A[i * n + j], x;
                        switch (kind) {
                        case 0: x = wide_value(&rng); break;
                        case 1: x = a * (float)(0.5 + av_rng_uniform(&rng)); break;
                        case 2: x = a * (float)(1.0 + 1e-6 * av_rng_normal(&rng)); break;
                        case 3: x = 1000.0f * a; break;                       // far from sum 1
                        case 4: x = j == i / 2 ? 700.0f : 1e-9f * a; break;   // nearly one-hot, sum far from 1
                        case 6: x = a * (float)(1.0 + 1e-4 * av_rng_normal(&rng)); break; // M near A: the KL's
                        case 7: x = a * (float)(1.0 + 3e-3 * av_rng_normal(&rng)); break; // split form cancels
                        default: x = (float)av_rng_normal(&rng) * a; break;  // negative entries
                        }
                        M[i * n + j] = x;
                        sm += x;
                    }
                    (void)sm;
                }
                size_t br = av_readouts_work(n, 0);
                void *wr = malloc(br);
                res f, r;
                ck_assert_int_eq(av_readouts_rows(f.v, f.why, h, M, NULL, 0, A, NULL, n, 0, causal, 0.3, wr, br), AV_OK);
                ck_assert_int_eq(avi_readouts_ref(r.v, r.why, g, M, NULL, 0, A, NULL, n, 0, causal, 0.3, wr, br), AV_OK);
                for (int k = 0; k < AV_R_COUNT; k++) {
                    ck_assert_msg(f.why[k] == r.why[k], "n %d kind %d causal %d: %s reason %d, plain %d", n, kind, causal,
                                  av_readout_name(k), f.why[k], r.why[k]);
                    double x = f.v[k], y = r.v[k];
                    if (isnan(y)) { ck_assert(isnan(x)); continue; }
                    double tol = 0;
                    if (k == AV_R_ROW_ENTROPY_MEAN) {
                        long double ref = 0;
                        for (int i = 0; i < n; i++) ref += entropy_row_ld(M + (size_t)i * n, causal ? i + 1 : n);
                        ref /= n;
                        tol = fmax(1e-13 * fabs((double)ref), 4 * fabs(y - (double)ref));
                        y = (double)ref;
                    }
                    if (k == AV_R_ERROR_FRO_REL) tol = 1e-12 * fabs(y); // n² squares summed in another order
                    if (k == AV_R_ROW_KL_MEAN) {
                        /* relative to the rows' own sizes: rows of M = A·(1 + noise) have KLs of either sign
                         * (M's rows do not sum to 1) that cancel in the mean */
                        long double ref = 0, size = 0;
                        for (int i = 0; i < n; i++) {
                            long double kl = kl_row_ld(M + (size_t)i * n, A + (size_t)i * n, causal ? i + 1 : n);
                            ref += kl;
                            size += fabsl(kl);
                        }
                        ref /= n;
                        size /= n;
                        double plain = fabs(y - (double)ref);
                        tol = fmax(1e-13 * (double)size, 4 * plain);
                        y = (double)ref;
                    }
                    ck_assert_msg(fabs(x - y) <= tol, "n %d kind %d causal %d: %s %.17g, want %.17g", n, kind, causal,
                                  av_readout_name(k), x, y);
                }
                for (int i = 0; i < n; i++) {
                    if (isnan(g[i])) { ck_assert(isnan(h[i])); continue; }
                    double ref = (double)entropy_row_ld(M + (size_t)i * n, causal ? i + 1 : n);
                    ck_assert_msg(fabs(h[i] - ref) <= fmax(1e-13 * ref, 4 * fabs(g[i] - ref)) + 1e-300,
                                  "n %d kind %d causal %d row %d: %.17g, plain %.17g, want %.17g", n, kind, causal, i, h[i], g[i], ref);
                }
                free(M); free(A); free(h); free(g); free(wr);
            }
}
END_TEST

/* av_reference_summary + av_readouts_summarised: the same readouts and row entropies as av_readouts_rows,
 * to the bit, for one summary reused across several M (near A, far from it, with zeros where A is positive,
 * negative); with V, without it and with a non-finite V; with A, without it and with a non-finite A; causal
 * and not. And the summary's checks: another n, dv or mask, a buffer never summarised, a short one, A or V
 * missing where the summary had them. */
START_TEST(test_readouts_summarised) {
    const int n = 45, dv = 5;
    av_rng rng;
    av_rng_seed(&rng, 17);
    float *A = malloc(sizeof(float) * n * n), *M = malloc(sizeof(float) * n * n), *V = malloc(sizeof(float) * n * dv);
    float *Vbad = malloc(sizeof(float) * n * dv), *Abad = malloc(sizeof(float) * n * n);
    for (int i = 0; i < n * dv; i++) V[i] = Vbad[i] = (float)av_rng_normal(&rng);
    Vbad[7] = NAN;
    size_t wb = av_readouts_work(n, dv), sb = av_reference_summary_bytes(n);
    ck_assert_uint_gt(sb, sizeof(double) * n);
    void *work = malloc(wb), *sum = malloc(sb + 8), *summary = (char *)sum + 8; /* 8 bytes off 64 */
    double *h1 = malloc(sizeof(double) * n), *h2 = malloc(sizeof(double) * n);
    for (int causal = 0; causal <= 1; causal++) {
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int j = 0; j < n; j++) s += A[i * n + j] = (float)exp(2 * av_rng_normal(&rng));
            for (int j = 0; j < n; j++) A[i * n + j] = causal && j > i ? 0.0f : (float)(A[i * n + j] / s);
        }
        memcpy(Abad, A, sizeof(float) * n * n);
        Abad[3] = INFINITY;
        for (int ac = 0; ac < 3; ac++)
            for (int vc = 0; vc < 3; vc++) {
                const float *a = ac == 0 ? A : ac == 1 ? NULL : Abad, *v = vc == 0 ? V : vc == 1 ? NULL : Vbad;
                int vdv = v ? dv : 0;
                size_t wv = av_readouts_work(n, vdv);
                ck_assert_int_eq(av_reference_summary(summary, sb, a, v, n, vdv, causal, work, wv), AV_OK);
                for (int kind = 0; kind < 4; kind++) {
                    for (int k = 0; k < n * n; k++) {
                        float x = A[k];
                        M[k] = kind == 0 ? x * (float)(1 + 1e-5 * av_rng_normal(&rng))
                             : kind == 1 ? (float)exp(av_rng_normal(&rng)) / n
                             : kind == 2 ? (k % 3 ? x : 0.0f)
                                         : (float)av_rng_normal(&rng);
                    }
                    res r1, r2;
                    int s1 = av_readouts_rows(r1.v, r1.why, h1, M, NULL, 0, a, v, n, vdv, causal, 0.2, work, wv);
                    int s2 = av_readouts_summarised(r2.v, r2.why, h2, M, NULL, 0, a, v, summary, sb, n, vdv, causal, 0.2, work, wv);
                    ck_assert_int_eq(s1, AV_OK);
                    ck_assert_int_eq(s2, s1);
                    for (int k = 0; k < AV_R_COUNT; k++)
                        ck_assert_msg(r1.why[k] == r2.why[k] && memcmp(&r1.v[k], &r2.v[k], sizeof(double)) == 0,
                                      "causal %d A %d V %d kind %d: %s %.17g (%d), summarised %.17g (%d)", causal, ac, vc, kind,
                                      av_readout_name(k), r1.v[k], r1.why[k], r2.v[k], r2.why[k]);
                    ck_assert(memcmp(h1, h2, sizeof(double) * n) == 0);
                    if (ac == 0 && vc == 0) ck_assert(isfinite(r2.v[AV_R_OUTPUT_ERROR_REL]));
                    if (ac == 0 && kind < 2) ck_assert(isfinite(r2.v[AV_R_ROW_KL_MEAN]));
                }
            }
    }
    /* the checks */
    res r;
    ck_assert_int_eq(av_reference_summary(summary, sb, A, V, n, dv, 1, work, wb), AV_OK);
    ck_assert_int_eq(av_readouts_summarised(r.v, r.why, NULL, A, NULL, 0, A, V, summary, sb, n, dv, 1, 0, work, wb), AV_OK);
    ck_assert_double_eq(r.v[AV_R_ROW_KL_MEAN], 0.0); /* M = A: the two shares cancel exactly */
    ck_assert_double_eq(r.v[AV_R_OUTPUT_ERROR_REL], 0.0);
    ck_assert_int_eq(av_readouts_summarised(r.v, r.why, NULL, A, NULL, 0, A, V, summary, sb, n, dv, 0, 0, work, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_readouts_summarised(r.v, r.why, NULL, A, NULL, 0, A, V, summary, sb, n, dv - 1, 1, 0, work, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_readouts_summarised(r.v, r.why, NULL, A, NULL, 0, A, V, summary, sb, n, dv, 1, 0, work, 64), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_readouts_summarised(r.v, r.why, NULL, A, NULL, 0, A, V, summary, sb - 64, n, dv, 1, 0, work, wb), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_readouts_summarised(r.v, r.why, NULL, A, NULL, 0, NULL, V, summary, sb, n, dv, 1, 0, work, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_readouts_summarised(r.v, r.why, NULL, A, NULL, 0, A, NULL, summary, sb, n, dv, 1, 0, work, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_readouts_summarised(r.v, r.why, NULL, A, NULL, 0, A, V, NULL, sb, n, dv, 1, 0, work, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_readouts_summarised(r.v, r.why, NULL, A, NULL, 0, A, V, summary, sb, n, dv, 1, -1, work, wb), AV_ERR_KNOB);
    memset(summary, 0, sb);
    ck_assert_int_eq(av_readouts_summarised(r.v, r.why, NULL, A, NULL, 0, A, V, summary, sb, n, dv, 1, 0, work, wb), AV_ERR_FORMAT);
    ck_assert_int_eq(av_reference_summary(NULL, sb, A, V, n, dv, 1, work, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_reference_summary(summary, sb, A, V, n, dv, 1, NULL, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_reference_summary(summary, sb - 64, A, V, n, dv, 1, work, wb), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_reference_summary(summary, sb, A, V, n, dv, 1, work, 64), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_reference_summary(summary, sb, A, V, 0, dv, 1, work, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_reference_summary(summary, sb, A, V, n, 0, 1, work, wb), AV_ERR_SIZE);
    ck_assert_uint_eq(av_reference_summary_bytes(0), 0);
    ck_assert_uint_eq(av_reference_summary_bytes(AV_MAX_N + 1), 0);
    free(A); free(M); free(V); free(Vbad); free(Abad); free(work); free(sum); free(h1); free(h2);
}
END_TEST

/* The float thresholds of the row pass count exactly what the double comparisons x < 0.01 and x < τ/m
 * count, on floats at and next to the thresholds. */
START_TEST(test_fused_thresholds_exact) {
    const int n = 37;
    float *M = malloc(sizeof(float) * n * n);
    const double taus[] = {0.1, 0.3, 1.0 / 3, 7.77, 1e-30};
    size_t br = av_readouts_work(n, 0);
    void *wr = malloc(br);
    for (size_t t = 0; t < sizeof taus / sizeof *taus; t++) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                int m = i + 1; // the causal m; the non-causal rows share thresholds with row n − 1
                double thr = (j % 2) ? 0.01 : taus[t] / m;
                float f = (float)thr;
                int step = j % 5 - 2;
                for (; step > 0; step--) f = nextafterf(f, INFINITY);
                for (; step < 0; step++) f = nextafterf(f, 0);
                M[i * n + j] = f;
            }
        for (int causal = 0; causal <= 1; causal++) {
            res f, r;
            ck_assert_int_eq(av_readouts_rows(f.v, f.why, NULL, M, NULL, 0, NULL, NULL, n, 0, causal, taus[t], wr, br), AV_OK);
            ck_assert_int_eq(avi_readouts_ref(r.v, r.why, NULL, M, NULL, 0, NULL, NULL, n, 0, causal, taus[t], wr, br), AV_OK);
            ck_assert(f.v[AV_R_SPARSITY_LT_001] == r.v[AV_R_SPARSITY_LT_001]);
            ck_assert(f.v[AV_R_SPARSITY_TAU] == r.v[AV_R_SPARSITY_TAU]);
            ck_assert(f.v[AV_R_ROW_SUM_DEV_MAX] == r.v[AV_R_ROW_SUM_DEV_MAX]);
            ck_assert(f.v[AV_R_KEYS_FOR_90] == r.v[AV_R_KEYS_FOR_90]);
        }
    }
    free(M); free(wr);
}
END_TEST

/* The readout table (av_readout_info) is whole: a row for every enum value, each key distinct, a label,
 * an explanation, a kind and a format in range; the page's table and sweep places are each used once, counting up from 1. */
START_TEST(test_readout_info) {
    int display[AV_R_COUNT + 1] = {0}, sweep[AV_R_COUNT + 1] = {0}, nd = 0, ns = 0;
    for (int k = 0; k < AV_R_COUNT; k++) {
        const av_readout_desc *r = av_readout_info(k);
        ck_assert_ptr_nonnull(r);
        ck_assert_msg(r->key && r->label && *r->label, "readout %d has no row in READOUTS", k);
        ck_assert_msg(r->explain && strlen(r->explain) > 20, "%s has no explanation", r->key);
        ck_assert_str_eq(av_readout_name(k), r->key);
        for (int j = 0; j < k; j++) ck_assert_str_ne(av_readout_info(j)->key, r->key);
        ck_assert(r->kind >= AV_RK_ENTRY && r->kind <= AV_RK_COMPARISON);
        ck_assert(r->format >= AV_RF_REAL && r->format <= AV_RF_FRACTION);
        ck_assert(r->display >= 0 && r->display <= AV_R_COUNT && r->sweep >= 0 && r->sweep <= AV_R_COUNT);
        if (r->display) { ck_assert_msg(!display[r->display]++, "%s: display place taken", r->key); nd++; }
        if (r->sweep) { ck_assert_msg(!sweep[r->sweep]++, "%s: sweep place taken", r->key); ns++; }
    }
    for (int i = 1; i <= nd; i++) ck_assert_msg(display[i], "display places skip %d", i);
    for (int i = 1; i <= ns; i++) ck_assert_msg(sweep[i], "sweep places skip %d", i);
    ck_assert_ptr_null(av_readout_info(AV_R_COUNT));
    ck_assert_ptr_null(av_readout_info(-1));
    /* the kinds say what av_readouts needs: without A every comparison readout, and only those, says so */
    enum { N = 6 };
    float M[N * N];
    for (int i = 0; i < N * N; i++) M[i] = 1.0f / N;
    double v[AV_R_COUNT];
    int why[AV_R_COUNT];
    size_t wb = av_readouts_work(N, 0);
    void *w = malloc(wb);
    ck_assert_int_eq(av_readouts(v, why, M, NULL, 0, NULL, NULL, N, 0, 0, 0, w, wb), AV_OK);
    for (int k = 0; k < AV_R_COUNT; k++) {
        int kind = av_readout_info(k)->kind;
        if (kind == AV_RK_COMPARISON) ck_assert_int_eq(why[k], AV_REASON_NO_REFERENCE);
        else if (kind == AV_RK_SPECTRAL) ck_assert_msg(why[k] == AV_REASON_NO_SPECTRUM || why[k] == AV_REASON_NO_BLOCK, "%s", av_readout_name(k));
        else ck_assert_msg(why[k] == AV_REASON_NONE, "%s is an entry readout but undefined", av_readout_name(k));
    }
    free(w);
}
END_TEST

START_TEST(test_names_and_status) {
    ck_assert_str_eq(av_readout_name(AV_R_RANK_REL_1E3), "rank_rel_1e-3");
    ck_assert_str_eq(av_readout_name(AV_R_SPARSITY_LT_001), "sparsity_lt_0.01");
    ck_assert_ptr_null(av_readout_name(AV_R_COUNT));
    ck_assert_ptr_null(av_readout_name(-1));
    const char *unknown = av_reason_string(99);
    for (int a = 0; a <= AV_REASON_ZERO_MATRIX; a++) {
        ck_assert_str_ne(av_reason_string(a), unknown);
        for (int b = 0; b < a; b++) ck_assert_str_ne(av_reason_string(a), av_reason_string(b));
    }
    for (int a = 0; a < AV_R_COUNT; a++)
        for (int b = 0; b < a; b++) ck_assert_str_ne(av_readout_name(a), av_readout_name(b));

    float M[4] = {1, 0, 0, 1}, V[2] = {1, 1};
    double vals[AV_R_COUNT], sv[2] = {1, 1};
    int why[AV_R_COUNT];
    size_t b = av_readouts_work(2, 1);
    void *w = malloc(b);
    ck_assert_uint_eq(av_readouts_work(0, 1), 0);
    ck_assert_uint_eq(av_readouts_work(2, -1), 0);
    ck_assert_int_eq(av_readouts(NULL, why, M, sv, 0, NULL, V, 2, 1, 0, 0, w, b), AV_ERR_NULL);
    ck_assert_int_eq(av_readouts(vals, NULL, M, sv, 0, NULL, V, 2, 1, 0, 0, w, b), AV_ERR_NULL);
    ck_assert_int_eq(av_readouts(vals, why, NULL, sv, 0, NULL, V, 2, 1, 0, 0, w, b), AV_ERR_NULL);
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 0, NULL, V, 2, 1, 0, 0, NULL, b), AV_ERR_NULL);
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 0, NULL, V, 0, 1, 0, 0, w, b), AV_ERR_SIZE);
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 0, NULL, V, 2, 0, 0, 0, w, b), AV_ERR_SIZE);
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 0, NULL, V, 2, 1, 0, -1, w, b), AV_ERR_KNOB);
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 0, NULL, V, 2, 1, 0, NAN, w, b), AV_ERR_KNOB);
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 0, NULL, V, 2, 1, 0, 0, w, b - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 0, NULL, V, 2, 1, 0, 0, w, b), AV_OK);
    M[2] = INFINITY;
    ck_assert_int_eq(av_readouts(vals, why, M, sv, 0, NULL, V, 2, 1, 0, 0, w, b), AV_ERR_NONFINITE);
    for (int r = 0; r < AV_R_COUNT; r++) {
        ck_assert(isnan(vals[r]));
        ck_assert_int_eq(why[r], AV_REASON_MATRIX_NONFINITE); /* names M, not "an input" */
    }
    free(w);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// row_kl_mean where M underflowed (av_row_kl)

/* The matrix of prm on Q, K (av_matrix). */
static float *matrix_of(const float *Q, const float *K, int n, int d, const av_params *prm) {
    float *M = malloc(sizeof(float) * (size_t)n * n);
    size_t wb = av_matrix_work(prm, n, d);
    void *w = malloc(wb ? wb : 1);
    int st = av_matrix(M, Q, K, n, d, prm, w, wb);
    ck_assert_msg(st == AV_OK, "av_matrix: %d", st);
    free(w);
    return M;
}

/* KL(A ‖ M) averaged over rows, both causal softmaxes of scale·q·k from their logarithms in long double,
 * M's logits with (i − j)·ln γ added: the formula itself, no float32 anywhere. */
static double kl_decayed_ld(const float *Q, const float *K, int n, int d, double scale, double g) {
    long double total = 0, *la = malloc(sizeof(long double) * n), *lm = malloc(sizeof(long double) * n);
    for (int i = 0; i < n; i++) {
        long double ta = -INFINITY, tm = -INFINITY, za = 0, zm = 0;
        for (int j = 0; j <= i; j++) {
            long double s = 0;
            for (int f = 0; f < d; f++) s += (long double)Q[i * d + f] * K[j * d + f];
            la[j] = scale * s;
            lm[j] = la[j] + (i - j) * logl(g);
            ta = la[j] > ta ? la[j] : ta;
            tm = lm[j] > tm ? lm[j] : tm;
        }
        for (int j = 0; j <= i; j++) za += expl(la[j] - ta), zm += expl(lm[j] - tm);
        for (int j = 0; j <= i; j++) {
            long double a = la[j] - ta - logl(za), m = lm[j] - tm - logl(zm);
            total += expl(a) * (a - m);
        }
    }
    free(la); free(lm);
    return (double)(total / n);
}

/* av_row_kl of the decayed softmax (causal, decay g) against plain softmax; *plain: av_readouts' answer. */
static double row_kl_decayed(int *why, double *plain, int *plain_why, const float *Q, const float *K, int n, int d,
                             double g) {
    av_params pm, pa;
    av_params_default(&pm, AV_SOFTMAX);
    pm.causal = 1;
    pa = pm;
    pm.decay = g;
    float *M = matrix_of(Q, K, n, d, &pm), *A = matrix_of(Q, K, n, d, &pa);
    res r = readouts(M, A, NULL, n, 0, 1, 0);
    *plain = r.v[AV_R_ROW_KL_MEAN];
    *plain_why = r.why[AV_R_ROW_KL_MEAN];
    size_t wb = av_row_kl_work(&pm, n, d);
    void *w = malloc(wb);
    double kl = 0;
    ck_assert_int_eq(av_row_kl(&kl, why, M, A, Q, K, n, d, &pm, w, wb), AV_OK);
    free(w); free(M); free(A);
    return kl;
}

/* The forgetting softmax (decay 0.5) where a far key's weight is below float32's range: q = 10, k_0 = −10,
 * the other keys 0, so A_70 = e^-100/7 (a subnormal float) and M_70 ≈ e^-104.85/1.98 rounds to 0. The true
 * KL is finite: av_readouts can only say "zero where positive" (it has M, not its logarithms); av_row_kl
 * takes ln M_70 from the log domain and meets the long-double formula. With no underflow (decay 0.9,
 * gaussian inputs) it is av_readouts' value, bit for bit; outside a window M is truly 0 and the reason stays. */
START_TEST(test_row_kl_underflow) {
    const int n = 8, d = 1;
    float Q[8], K[8];
    for (int i = 0; i < n; i++) Q[i] = 10.0f, K[i] = 0.0f;
    K[0] = -10.0f;
    int why, pwhy;
    double plain, kl = row_kl_decayed(&why, &plain, &pwhy, Q, K, n, d, 0.5), ref = kl_decayed_ld(Q, K, n, d, 1.0, 0.5);
    ck_assert_msg(isnan(plain) && pwhy == AV_REASON_ZERO_WHERE_POSITIVE, "av_readouts: %g (%d)", plain, pwhy);
    ck_assert_msg(why == AV_REASON_NONE && fabs(kl - ref) <= 1e-6 * ref, "av_row_kl %.17g (%d) vs %.17g", kl, why, ref);

    const int n2 = 37, d2 = 5;
    float *Q2 = malloc(sizeof(float) * n2 * d2), *K2 = malloc(sizeof(float) * n2 * d2);
    tu_fill_normal(Q2, (size_t)n2 * d2, 0, 1, 91);
    tu_fill_normal(K2, (size_t)n2 * d2, 0, 1, 92);
    kl = row_kl_decayed(&why, &plain, &pwhy, Q2, K2, n2, d2, 0.9);
    ck_assert_msg(pwhy == AV_REASON_NONE && why == AV_REASON_NONE && kl == plain, "%.17g vs %.17g", kl, plain);

    av_params pw, pa;
    av_params_default(&pw, AV_SOFTMAX);
    pw.causal = 1;
    pa = pw;
    pw.window = 4;
    float *M = matrix_of(Q2, K2, n2, d2, &pw), *A = matrix_of(Q2, K2, n2, d2, &pa);
    size_t wb = av_row_kl_work(&pw, n2, d2);
    void *w = malloc(wb);
    ck_assert_int_eq(av_row_kl(&kl, &why, M, A, Q2, K2, n2, d2, &pw, w, wb), AV_OK);
    ck_assert_msg(isnan(kl) && why == AV_REASON_ZERO_WHERE_POSITIVE, "window: %g (%d)", kl, why);
    ck_assert_int_eq(av_row_kl(&kl, &why, M, NULL, Q2, K2, n2, d2, &pw, w, wb), AV_OK);
    ck_assert(isnan(kl) && why == AV_REASON_NO_REFERENCE);
    ck_assert_int_eq(av_row_kl(&kl, &why, M, A, Q2, K2, n2, d2, &pw, w, wb - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_row_kl(&kl, &why, NULL, A, Q2, K2, n2, d2, &pw, w, wb), AV_ERR_NULL);
    free(w); free(M); free(A); free(Q2); free(K2);
}
END_TEST

/* A decayed kernel variant (elu, causal, γ = 0.5) at n = 170: γ^{i−j} is below float32's range from
 * i − j = 150 on, so M is 0 there while A > 0 (av_readouts: null). av_row_kl takes ln M from the elu
 * features and meets the long-double formula: M_ij = γ^{i−j}·φ(q_i)·φ(k_j) / (Σ_l γ^{i−l}·φ(q_i)·φ(k_l)
 * + 1e-6), φ = elu + 1, A the causal softmax. */
START_TEST(test_row_kl_underflow_kernel) {
    const int n = 170, d = 4;
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d);
    tu_fill_normal(Q, (size_t)n * d, 0, 1, 93);
    tu_fill_normal(K, (size_t)n * d, 0, 1, 94);
    av_params pm, pa;
    av_params_default(&pm, AV_ELU);
    pm.causal = 1;
    pm.decay = 0.5;
    av_params_default(&pa, AV_SOFTMAX);
    pa.causal = 1;
    float *M = matrix_of(Q, K, n, d, &pm), *A = matrix_of(Q, K, n, d, &pa);
    res rr = readouts(M, A, NULL, n, 0, 1, 0);
    ck_assert_msg(isnan(rr.v[AV_R_ROW_KL_MEAN]) && rr.why[AV_R_ROW_KL_MEAN] == AV_REASON_ZERO_WHERE_POSITIVE,
                  "av_readouts: %g", rr.v[AV_R_ROW_KL_MEAN]);
    size_t wb = av_row_kl_work(&pm, n, d);
    void *w = malloc(wb);
    double kl;
    int why;
    ck_assert_int_eq(av_row_kl(&kl, &why, M, A, Q, K, n, d, &pm, w, wb), AV_OK);
    long double total = 0, *lm = malloc(sizeof(long double) * n), *la = malloc(sizeof(long double) * n);
    for (int i = 0; i < n; i++) {
        long double sum = 0, ta = -INFINITY, za = 0;
        for (int j = 0; j <= i; j++) {
            long double pq = 0, s = 0;
            for (int f = 0; f < d; f++) {
                long double x = Q[i * d + f], y = K[j * d + f];
                pq += (x > 0 ? x + 1 : expl(x)) * (y > 0 ? y + 1 : expl(y));
                s += x * y;
            }
            lm[j] = logl(pq) + (i - j) * logl(0.5L);
            sum += expl(lm[j]);
            la[j] = s / 2; // scale 1/√d
            ta = la[j] > ta ? la[j] : ta;
        }
        for (int j = 0; j <= i; j++) za += expl(la[j] - ta);
        for (int j = 0; j <= i; j++) {
            long double a = la[j] - ta - logl(za);
            total += expl(a) * (a - (lm[j] - logl(sum + 1e-6L)));
        }
    }
    double ref = (double)(total / n);
    ck_assert_msg(why == AV_REASON_NONE && fabs(kl - ref) <= 1e-5 * ref, "av_row_kl %.17g (%d) vs %.17g", kl, why, ref);
    free(lm); free(la); free(w); free(M); free(A); free(Q); free(K);
}
END_TEST

/* ln κ(q, k) of focused (p), exp, hedgehog (identity W) or explimit (N = 16) in long double from the
 * definitions (docs/variant-formulas.md); the stabilisers of exp and hedgehog cancel in their ε-free rows. */
static long double log_kappa_ld(int variant, const float *q, const float *k, int d, double p) {
    long double s = 0;
    if (variant == AV_FOCUSED) {
        long double yq[16], yk[16], nq = 0, nk = 0, nqp = 0, nkp = 0;
        for (int f = 0; f < d; f++) {
            yq[f] = ((q[f] > 0 ? q[f] : 0) + 1e-6L) / logl(2.0L), yk[f] = ((k[f] > 0 ? k[f] : 0) + 1e-6L) / logl(2.0L);
            nq += yq[f] * yq[f], nk += yk[f] * yk[f], nqp += powl(yq[f], 2 * p), nkp += powl(yk[f], 2 * p);
        }
        for (int f = 0; f < d; f++) s += powl(yq[f], p) * powl(yk[f], p);
        return logl(s) + 0.5L * (logl(nq) - logl(nqp) + logl(nk) - logl(nkp));
    }
    for (int f = 0; f < d; f++) {
        if (variant == AV_EXP) s += expl((long double)q[f] + k[f]);
        else if (variant == AV_HEDGEHOG) s += expl((long double)q[f] + k[f]) + expl(-(long double)q[f] - k[f]);
        else s += (long double)q[f] * k[f];
    }
    if (variant == AV_EXPLIMIT) s = powl(1 + s / sqrtl(d) / 16, 16);
    return logl(s);
}

/* Kernel variants whose float32 φ (or κ) underflows to 0 where the true product is positive: focused at
 * p = 8 (u^8 ≈ 1e-48 for an x ≤ 0), exp and hedgehog on wide inputs (e^(x − c) below 1e-45), explimit
 * where (1 + s/N)^N ≈ 1e-64. av_readouts can only say "zero where positive"; av_row_kl meets the long-double
 * KL(causal softmax ‖ M) of the definition (M_ij = κ_ij/(Σ_l κ_il + ε_n), ε_n = n·1e-6 for focused). */
START_TEST(test_row_kl_underflow_features) {
    const int n = 24, d = 4;
    const struct { int variant; double std, p; } cases[] = {
        {AV_FOCUSED, 4, 8}, {AV_EXP, 60, 0}, {AV_HEDGEHOG, 40, 0}, {AV_EXPLIMIT, 0, 0}};
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int v = cases[c].variant;
        if (v == AV_EXPLIMIT) { // s = −16 + 0.0016 (exact in float32) for the first key: κ = 1e-64
            for (int i = 0; i < n * d; i++) Q[i] = 0.0f, K[i] = 0.5f;
            for (int i = 0; i < n; i++) Q[i * d] = 1.0f;
            K[0] = -31.9968f;
        } else {
            tu_fill_normal(Q, (size_t)n * d, 0, cases[c].std, 95 + c);
            tu_fill_normal(K, (size_t)n * d, 0, cases[c].std, 99 + c);
        }
        av_params pm, pa;
        av_params_default(&pm, v);
        pm.causal = 1;
        if (v == AV_FOCUSED) pm.p = cases[c].p;
        if (v == AV_EXPLIMIT) pm.N = 16;
        av_params_default(&pa, AV_SOFTMAX);
        pa.causal = 1;
        float *M = malloc(sizeof(float) * n * n), *A = matrix_of(Q, K, n, d, &pa);
        size_t mb = av_matrix_work(&pm, n, d);
        void *mw = malloc(mb);
        int st = av_matrix(M, Q, K, n, d, &pm, mw, mb); // a row whose products all underflowed warns
        free(mw);
        ck_assert_msg(st == AV_OK || st == AV_WARN_UNDERFLOW_ROW, "%s: av_matrix %d", av_variant_name(v), st);
        res rr = readouts(M, A, NULL, n, 0, 1, 0);
        ck_assert_msg(rr.why[AV_R_ROW_KL_MEAN] == AV_REASON_ZERO_WHERE_POSITIVE, "%s: av_readouts %g (%d)",
                      av_variant_name(v), rr.v[AV_R_ROW_KL_MEAN], rr.why[AV_R_ROW_KL_MEAN]);
        size_t wb = av_row_kl_work(&pm, n, d);
        void *w = malloc(wb);
        double kl;
        int why;
        ck_assert_int_eq(av_row_kl(&kl, &why, M, A, Q, K, n, d, &pm, w, wb), AV_OK);
        long double total = 0, lm[24], la[24];
        for (int i = 0; i < n; i++) {
            long double tm = -INFINITY, sum = 0, ta = -INFINITY, za = 0;
            for (int j = 0; j <= i; j++) {
                long double s = 0;
                for (int f = 0; f < d; f++) s += (long double)Q[i * d + f] * K[j * d + f];
                lm[j] = log_kappa_ld(v, Q + i * d, K + j * d, d, cases[c].p);
                la[j] = s / 2; // scale 1/√d
                tm = lm[j] > tm ? lm[j] : tm;
                ta = la[j] > ta ? la[j] : ta;
            }
            for (int j = 0; j <= i; j++) sum += expl(lm[j] - tm), za += expl(la[j] - ta);
            long double ln_den = v == AV_FOCUSED ? logl(expl(tm) * sum + n * 1e-6L) : tm + logl(sum);
            for (int j = 0; j <= i; j++) {
                long double a = la[j] - ta - logl(za);
                total += expl(a) * (a - (lm[j] - ln_den));
            }
        }
        double ref = (double)(total / n); // + 1e-7: explimit's KL is 1.8e-6, float32 M's rounding 3e-8 of it
        ck_assert_msg(why == AV_REASON_NONE && fabs(kl - ref) <= 1e-5 * ref + 1e-7, "%s: av_row_kl %.17g (%d) vs %.17g",
                      av_variant_name(v), kl, why, ref);
        free(w); free(M); free(A);
    }
    free(Q); free(K);
}
END_TEST

/* stories260K text128, layer 1 head 3, causal, decay 0.9: float32 M underflows to 0 at cells where the
 * plain softmax A is positive (av_readouts: null); av_row_kl is finite and meets the long-double formula
 * (numpy in float64: 0.00747). Skipped with the one SKIPPED form without the shared data. */
START_TEST(test_row_kl_stories_decayed) {
    av_npy_info qi, ki;
    float *q = tu_stories_npy("text128_q.npy", &qi), *k = tu_stories_npy("text128_k.npy", &ki);
    if (!q || !k) {
        tu_skipped("Check suite readouts: decayed softmax row KL on text128 L1H3");
        free(q); free(k);
        return;
    }
    const int H = (int)qi.shape[1], n = (int)qi.shape[2], d = (int)qi.shape[3], KVH = (int)ki.shape[1];
    const float *Qh = q + ((size_t)1 * H + 3) * n * d, *Kh = k + ((size_t)1 * KVH + 3 * KVH / H) * n * d;
    int why, pwhy;
    double plain, kl = row_kl_decayed(&why, &plain, &pwhy, Qh, Kh, n, d, 0.9);
    double ref = kl_decayed_ld(Qh, Kh, n, d, 1.0 / sqrt((double)d), 0.9);
    ck_assert_msg(isnan(plain) && pwhy == AV_REASON_ZERO_WHERE_POSITIVE, "av_readouts: %g (%d)", plain, pwhy);
    ck_assert_msg(why == AV_REASON_NONE && fabs(kl - ref) <= 1e-4 * ref, "av_row_kl %.9g (%d) vs %.9g", kl, why, ref);
    free(q); free(k);
}
END_TEST

Suite *suite_readouts(void) {
    Suite *s = suite_create("readouts");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_identity);
    tcase_add_test(tc, test_uniform);
    tcase_add_test(tc, test_one_hot);
    tcase_add_test(tc, test_rank_one);
    tcase_add_test(tc, test_causal_definitions);
    tcase_add_test(tc, test_row_sum_dev_max);
    tcase_add_test(tc, test_keys_for_90_random);
    tcase_add_test(tc, test_entries_and_errors_against_references);
    tcase_add_test(tc, test_errors_against_reference);
    tcase_add_test(tc, test_errors_causal);
    tcase_add_test(tc, test_spectral_cases);
    tcase_add_test(tc, test_error_curve);
    tcase_add_test(tc, test_error_curve_extreme_scales);
    tcase_add_test(tc, test_entropy_hist);
    tcase_add_test(tc, test_readouts_rows);
    tcase_add_test(tc, test_readouts_summarised);
    tcase_add_test(tc, test_fused_rows_match_reference);
    tcase_add_test(tc, test_fused_thresholds_exact);
    tcase_add_test(tc, test_names_and_status);
    tcase_add_test(tc, test_readout_info);
    tcase_add_test(tc, test_row_kl_underflow);
    tcase_add_test(tc, test_row_kl_underflow_kernel);
    tcase_add_test(tc, test_row_kl_underflow_features);
    tcase_add_test(tc, test_row_kl_stories_decayed);
    suite_add_tcase(s, tc);
    return s;
}
