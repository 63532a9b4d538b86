/* check_recurrent.c: the recurrent families' own claims (docs/recurrent.md). The matrices against their
 * double references and the kernel variants' paths live in check_attention.c; here: softmax's window and
 * forgetting forms by all three paths, the reductions (γ = 1, W ≥ n, β → 0, α = 1), the delta rule's
 * overwrite, the semiseparable rank on planted structure, the refusals and the cost counts.
 * readouts covered: semiseparable_rank (docs/adding-a-readout.md) */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

static void *work_for(size_t bytes) { return malloc(bytes ? bytes : 1); }

static int matrix_of(float *M, const float *Q, const float *K, int n, int d, const av_params *p) {
    size_t wb = av_matrix_work(p, n, d);
    void *w = work_for(wb);
    int st = av_matrix(M, Q, K, n, d, p, w, wb);
    free(w);
    return st;
}

static double max_abs(const float *x, size_t count) {
    double m = 0;
    for (size_t i = 0; i < count; i++) m = fmax(m, fabs(x[i]));
    return m;
}

/* Softmax with a window and a forgetting decay: the matrix against a direct double reference, and the
 * key/value cache and the flash tiling against M·V, on sizes that are not multiples of 4 or of the chunk. */
START_TEST(test_softmax_window_forgetting) {
    static const int WINDOWS[] = {0, 1, 5, 200};
    static const double DECAYS[] = {1, 0.8};
    for (int causal = 0; causal <= 1; causal++)
        for (int wi = 0; wi < 4; wi++)
            for (int di = 0; di < 2; di++) {
                if (!causal && DECAYS[di] < 1) continue;
                int n = 37, d = 6, dv = 5;
                av_params p;
                av_params_default(&p, AV_SOFTMAX);
                p.causal = causal;
                p.window = WINDOWS[wi];
                p.decay = DECAYS[di];
                float Q[37 * 6], K[37 * 6], V[37 * 5], M[37 * 37], O[37 * 5], Oq[37 * 5];
                tu_fill_normal(Q, (size_t)n * d, 0, 1.2, 1);
                tu_fill_normal(K, (size_t)n * d, 0, 1.2, 2);
                tu_fill_normal(V, (size_t)n * dv, 0, 1, 3);
                ck_assert_int_eq(matrix_of(M, Q, K, n, d, &p), AV_OK);
                double scale = 1 / sqrt((double)d), worst = 0;
                for (int i = 0; i < n; i++) {
                    double row[37], mx = -INFINITY, sum = 0;
                    for (int j = 0; j < n; j++) {
                        int in = (!causal || j <= i) && (p.window == 0 || abs(i - j) < p.window);
                        double s = 0;
                        for (int c = 0; c < d; c++) s += (double)Q[i * d + c] * K[j * d + c];
                        row[j] = in ? scale * s + (i - j) * log(p.decay) : -INFINITY;
                        mx = fmax(mx, row[j]);
                    }
                    for (int j = 0; j < n; j++) sum += row[j] = exp(row[j] - mx);
                    for (int j = 0; j < n; j++) worst = fmax(worst, fabs(M[i * n + j] - row[j] / sum));
                }
                ck_assert_msg(worst <= 2e-6, "causal %d W %d decay %g: %g", causal, p.window, p.decay, worst);
                if (!causal) continue;
                size_t wa = av_attend_work(&p, n, d, dv);
                void *w = work_for(wa);
                ck_assert_int_eq(av_attend(Oq, NULL, Q, K, V, n, d, dv, &p, w, wa), AV_OK);
                free(w);
                for (int form = 0; form < 2; form++)
                    for (int chunk = 1; chunk <= 64; chunk = chunk * 4 + 1) {
                        p.chunk = chunk;
                        size_t wb = form ? av_chunkwise_work(&p, n, d, dv) : av_recurrent_work(&p, n, d, dv);
                        w = work_for(wb);
                        int st = form ? av_chunkwise(O, Q, K, V, n, d, dv, &p, w, wb) : av_recurrent(O, Q, K, V, n, d, dv, &p, w, wb);
                        free(w);
                        ck_assert_int_eq(st, AV_OK);
                        double e = tu_max_abs_diff(O, Oq, (size_t)n * dv) / max_abs(Oq, (size_t)n * dv);
                        ck_assert_msg(e <= 1e-5, "form %d chunk %d W %d decay %g: %g", form, chunk, p.window, p.decay, e);
                    }
            }
}
END_TEST

/* γ = 1 is the undecayed variant, W ≥ n is plain softmax, α = 1 is plain DeltaNet: the same bits. */
START_TEST(test_reductions) {
    int n = 29, d = 7;
    float Q[29 * 7], K[29 * 7], A[29 * 29], B[29 * 29];
    tu_fill_normal(Q, (size_t)n * d, 0, 1, 11);
    tu_fill_normal(K, (size_t)n * d, 0, 1, 12);
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        if (!avi_variant_reads(v, AV_KNOB_DECAY) || (av_variant_info(v)->flags & AV_VF_CAUSAL_ONLY)) continue;
        av_params p;
        av_params_default(&p, v);
        p.causal = 1;
        ck_assert_int_eq(matrix_of(A, Q, K, n, d, &p) >= 0, 1);
        p.decay = 1;
        ck_assert_int_eq(matrix_of(B, Q, K, n, d, &p) >= 0, 1);
        ck_assert_msg(memcmp(A, B, sizeof A) == 0, "%s: decay 1", av_variant_name(v));
    }
    av_params p;
    av_params_default(&p, AV_SOFTMAX);
    for (int causal = 0; causal <= 1; causal++) {
        p.causal = causal;
        p.window = 0;
        ck_assert_int_eq(matrix_of(A, Q, K, n, d, &p), AV_OK);
        for (int W = n; W <= n + 5; W += 5) {
            p.window = W;
            ck_assert_int_eq(matrix_of(B, Q, K, n, d, &p), AV_OK);
            ck_assert_msg(memcmp(A, B, sizeof A) == 0, "W = %d, causal %d", W, causal);
        }
    }
    av_params_default(&p, AV_DELTANET);
    ck_assert_int_eq(matrix_of(A, Q, K, n, d, &p), AV_OK);
    p.decay = 1;
    ck_assert_int_eq(matrix_of(B, Q, K, n, d, &p), AV_OK);
    ck_assert(memcmp(A, B, sizeof A) == 0);
    /* β → 0: nothing is written, M → 0 (linearly in β) */
    av_params_default(&p, AV_DELTANET);
    p.beta = 1e-6;
    ck_assert_int_eq(matrix_of(A, Q, K, n, d, &p), AV_OK);
    double m = max_abs(A, (size_t)n * n);
    ck_assert_msg(m > 0 && m <= 1e-6, "beta 1e-6: max |M| %g", m);
    /* retention at γ = 1 is causal linear attention without a normaliser: M = tril(scale·QKᵀ) */
    av_params_default(&p, AV_RETENTION);
    p.decay = 1;
    p.scale = 0.5;
    ck_assert_int_eq(matrix_of(A, Q, K, n, d, &p), AV_OK);
    double worst = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int c = 0; c < d; c++) s += (double)Q[i * d + c] * K[j * d + c];
            worst = fmax(worst, fabs(A[i * n + j] - (j <= i ? 0.5 * s : 0)));
        }
    ck_assert_msg(worst <= 1e-5, "retention gamma 1: %g", worst);
}
END_TEST

/* The delta rule overwrites: with β = 1 and unit keys, a key written twice (k → a, then k → b) reads back b,
 * where linear attention (retention at γ = 1) returns the blend a + b. Keys repeat directions, with
 * different lengths (the rule normalises them). Matrix, recurrent and chunkwise forms agree. */
START_TEST(test_delta_overwrite) {
    enum { n = 6, d = 3, dv = 2 };
    float K[n * d] = {2, 0, 0,  0, 1, 0,  0.5f, 0, 0,  0, 0, 3,  0, 2, 0,  1, 0, 0};
    float Q[n * d] = {1, 0, 0,  0, 1, 0,  1, 0, 0,  0, 0, 1,  0, 1, 0,  1, 0, 0};
    float V[n * dv] = {1, 0,  0, 1,  5, -2,  3, 3,  -1, 4,  7, 7};
    av_params p;
    av_params_default(&p, AV_DELTANET);
    p.beta = 1;
    p.scale = 1;
    float M[n * n], O[n * dv];
    ck_assert_int_eq(matrix_of(M, Q, K, n, d, &p), AV_OK);
    /* row 2 reads k0's direction after the second write: exactly v2 (weight 1 on token 2, 0 on token 0) */
    ck_assert(fabs(M[2 * n + 2] - 1) < 1e-6 && fabs(M[2 * n + 0]) < 1e-6);
    /* row 4 reads e2 after its second write (token 4): v4 */
    ck_assert(fabs(M[4 * n + 4] - 1) < 1e-6 && fabs(M[4 * n + 1]) < 1e-6);
    for (int form = 0; form < 2; form++) {
        p.chunk = 4;
        size_t wb = form ? av_chunkwise_work(&p, n, d, dv) : av_recurrent_work(&p, n, d, dv);
        void *w = work_for(wb);
        ck_assert_int_eq(form ? av_chunkwise(O, Q, K, V, n, d, dv, &p, w, wb) : av_recurrent(O, Q, K, V, n, d, dv, &p, w, wb), AV_OK);
        free(w);
        ck_assert(fabs(O[2 * dv] - 5) < 1e-5 && fabs(O[2 * dv + 1] + 2) < 1e-5);
        ck_assert(fabs(O[5 * dv] - 7) < 1e-5 && fabs(O[5 * dv + 1] - 7) < 1e-5);
    }
    av_params_default(&p, AV_RETENTION); /* linear attention blends: k0 (length 2) and k2 (length 0.5) both answer */
    p.decay = 1;
    p.scale = 1;
    ck_assert_int_eq(matrix_of(M, Q, K, n, d, &p), AV_OK);
    ck_assert(fabs(M[2 * n + 0] - 2) < 1e-6 && fabs(M[2 * n + 2] - 0.5) < 1e-6);
}
END_TEST

/* semiseparable_rank equals the structural rank on planted cases: the state size a recurrence needs. */
static double semisep(const float *M, int n) {
    size_t ws = av_svd_work(n, AV_SVD_ACCURATE), wr = av_semiseparable_work(n, AV_SVD_ACCURATE);
    void *w = work_for(ws > wr ? ws : wr);
    double *sv = malloc(sizeof(double) * n), floor_, rank = -1;
    ck_assert_int_eq(av_singular_values(sv, &floor_, M, n, AV_SVD_ACCURATE, w, ws), AV_OK);
    ck_assert_int_eq(av_semiseparable_rank(&rank, NULL, M, n, sv[0], floor_, AV_SVD_ACCURATE, w, wr), AV_OK);
    free(w);
    free(sv);
    return rank;
}

static long ceiling_of(const av_params *p, int n, int d) {
    long c = -1;
    ck_assert_int_eq(av_semiseparable_ceiling(&c, p, n, d), AV_OK);
    return c;
}

START_TEST(test_semiseparable_planted) {
    int n = 64, d = 6;
    float *Q = malloc(sizeof(float) * n * 16), *K = malloc(sizeof(float) * n * 16), *M = malloc(sizeof(float) * n * n);
    tu_fill_normal(Q, (size_t)n * 16, 0, 1, 21);
    tu_fill_normal(K, (size_t)n * 16, 0, 1, 22);
    av_params p;
    /* a causal window W: the block holds a triangle of W − 1 anti-diagonals */
    for (int W = 1; W <= 9; W += 4) {
        av_params_default(&p, AV_SOFTMAX);
        p.causal = 1;
        p.window = W;
        ck_assert_int_eq(matrix_of(M, Q, K, n, d, &p), AV_OK);
        ck_assert_msg(semisep(M, n) == W - 1, "window %d: %g", W, semisep(M, n));
        ck_assert_int_eq(ceiling_of(&p, n, d), W - 1);
    }
    /* kernel variants, decayed or not: at most the feature dimension (d for elu), and generically equal */
    av_params_default(&p, AV_ELU);
    p.causal = 1;
    for (int t = 0; t < 2; t++) {
        p.decay = t ? 0.95 : 1;
        ck_assert_int_eq(matrix_of(M, Q, K, n, d, &p), AV_OK);
        ck_assert_msg(semisep(M, n) == d, "elu decay %g: %g", p.decay, semisep(M, n));
    }
    ck_assert_int_eq(ceiling_of(&p, n, d), d);
    /* retention: d; the delta rule: d, and d − 1 at β = 1 (each write projects out its own key) */
    av_params_default(&p, AV_RETENTION);
    ck_assert_int_eq(matrix_of(M, Q, K, n, d, &p), AV_OK);
    ck_assert_msg(semisep(M, n) == d, "retention: %g", semisep(M, n));
    av_params_default(&p, AV_DELTANET);
    ck_assert_int_eq(matrix_of(M, Q, K, n, d, &p), AV_OK);
    ck_assert_msg(semisep(M, n) == d, "deltanet: %g", semisep(M, n));
    p.beta = 1;
    p.decay = 0.9;
    ck_assert_int_eq(matrix_of(M, Q, K, n, d, &p), AV_OK);
    ck_assert_msg(semisep(M, n) == d - 1, "deltanet beta 1: %g", semisep(M, n));
    ck_assert_int_eq(ceiling_of(&p, n, d), d - 1);
    /* softmax: full (h = 32) on sharp inputs */
    av_params_default(&p, AV_SOFTMAX);
    p.causal = 1;
    p.scale = 1;
    ck_assert_int_eq(matrix_of(M, Q, K, n, 16, &p), AV_OK);
    ck_assert_msg(semisep(M, n) == n / 2, "softmax: %g", semisep(M, n));
    ck_assert_int_eq(ceiling_of(&p, n, 16), n / 2);
    /* an odd n pads the (h + 1) × h block */
    av_params_default(&p, AV_RETENTION);
    ck_assert_int_eq(matrix_of(M, Q, K, 63, d, &p), AV_OK);
    ck_assert_msg(semisep(M, 63) == d, "odd n: %g", semisep(M, 63));
    free(Q); free(K); free(M);
}
END_TEST

START_TEST(test_semiseparable_refusals) {
    float M[4] = {1, 0, 0, 1};
    double rank, sv[2];
    char w[1 << 14];
    ck_assert_int_eq(av_semiseparable_work(1, AV_SVD_FAST), 0);
    ck_assert_int_eq(av_semiseparable_work(4, 7), 0);
    ck_assert_int_eq(av_semiseparable_rank(&rank, sv, M, 1, 1, 0, AV_SVD_FAST, w, sizeof w), AV_ERR_SIZE);
    ck_assert_int_eq(av_semiseparable_rank(NULL, sv, M, 2, 1, 0, AV_SVD_FAST, w, sizeof w), AV_ERR_NULL);
    ck_assert_int_eq(av_semiseparable_rank(&rank, sv, M, 2, NAN, 0, AV_SVD_FAST, w, sizeof w), AV_ERR_NONFINITE);
    ck_assert_int_eq(av_semiseparable_rank(&rank, sv, M, 2, 1, 0, AV_SVD_FAST, w, 8), AV_ERR_WORKSPACE);
    M[2] = 3; /* the block M[1:2, 0:1] = 3 */
    ck_assert_int_eq(av_semiseparable_rank(&rank, sv, M, 2, -1, 0, AV_SVD_FAST, w, sizeof w), AV_OK);
    ck_assert(rank == 1 && fabs(sv[0] - 3) < 1e-12);
    /* av_readouts leaves it to av_semiseparable_rank, with its reason */
    double vals[AV_R_COUNT];
    int why[AV_R_COUNT];
    size_t wb = av_readouts_work(2, 0);
    void *rw = work_for(wb);
    ck_assert_int_eq(av_readouts(vals, why, M, NULL, 0, NULL, NULL, 2, 0, 0, 0, rw, wb), AV_OK);
    free(rw);
    ck_assert(isnan(vals[AV_R_SEMISEPARABLE_RANK]) && why[AV_R_SEMISEPARABLE_RANK] == AV_REASON_NO_BLOCK);
    ck_assert_str_eq(av_readout_name(AV_R_SEMISEPARABLE_RANK), "semiseparable_rank");
}
END_TEST

/* Non-causal forms of the causal-only families are refused, and so are the sequential forms without the mask
 * or for variants without them. */
START_TEST(test_refusals) {
    enum { n = 8, d = 4, dv = 3 };
    float Q[n * d] = {0}, K[n * d] = {0}, V[n * dv] = {0}, O[n * dv];
    char w[1 << 16];
    av_params p;
    av_params_default(&p, AV_RETENTION);
    p.causal = 0;
    ck_assert_int_eq(av_matrix(O, Q, K, n, d, &p, w, sizeof w), AV_ERR_NEEDS_CAUSAL);
    av_params_default(&p, AV_ELU);
    ck_assert_int_eq(av_recurrent(O, Q, K, V, n, d, dv, &p, w, sizeof w), AV_ERR_NEEDS_CAUSAL);
    ck_assert_int_eq(av_chunkwise(O, Q, K, V, n, d, dv, &p, w, sizeof w), AV_ERR_NEEDS_CAUSAL);
    p.decay = 0.5;
    ck_assert_int_eq(av_matrix(O, Q, K, n, d, &p, w, sizeof w), AV_ERR_NEEDS_CAUSAL);
    av_params_default(&p, AV_LINFORMER);
    p.causal = 1;
    ck_assert_int_eq(av_chunkwise_work(&p, n, d, dv), 0);
    av_params_default(&p, AV_FOCUSED);
    p.causal = 1;
    ck_assert_int_eq(av_recurrent_work(&p, n, d, dv) > 0, 1);
    av_params_default(&p, AV_DELTANET);
    p.beta = 2.5;
    ck_assert_int_eq(av_matrix(O, Q, K, n, d, &p, w, sizeof w), AV_ERR_KNOB);
    p.beta = 0.5;
    p.decay = 1.5;
    ck_assert_int_eq(av_matrix(O, Q, K, n, d, &p, w, sizeof w), AV_ERR_KNOB);
    av_params_default(&p, AV_SOFTMAX);
    p.window = -1;
    ck_assert_int_eq(av_matrix(O, Q, K, n, d, &p, w, sizeof w), AV_ERR_KNOB);
    ck_assert_str_eq(av_status_string(AV_ERR_NEEDS_CAUSAL) != NULL ? "ok" : "", "ok");
}
END_TEST

/* Cost counts: each path exists where the registry says, the chunkwise and recurrent forms are linear in n
 * and overtake the quadratic path, a window makes softmax's cache constant. */
START_TEST(test_costs) {
    av_params p;
    double q[2], c[2], r[2], l[2], q2[2], c2[2];
    av_params_default(&p, AV_DELTANET);
    int d = 64, dv = 64;
    ck_assert_int_eq(av_cost_path(q, AV_PATH_QUADRATIC, &p, 1024, d, dv), AV_OK);
    ck_assert_int_eq(av_cost_path(c, AV_PATH_CHUNKWISE, &p, 1024, d, dv), AV_OK);
    ck_assert_int_eq(av_cost_path(r, AV_PATH_RECURRENT, &p, 1024, d, dv), AV_OK);
    ck_assert_int_eq(av_cost_path(l, AV_PATH_LINEAR, &p, 1024, d, dv), AV_OK);
    ck_assert(c[0] > 0 && c[0] < q[0] && r[0] > 0 && l[0] == c[0] && r[1] == 4.0 * d * dv);
    ck_assert_int_eq(av_cost_path(q2, AV_PATH_QUADRATIC, &p, 2048, d, dv), AV_OK);
    ck_assert_int_eq(av_cost_path(c2, AV_PATH_CHUNKWISE, &p, 2048, d, dv), AV_OK);
    ck_assert(q2[0] > 4 * q[0] && fabs(c2[0] / c[0] - 2) < 1e-12); /* quadratic (and the n³/6 solve) against linear */
    av_params_default(&p, AV_SOFTMAX);
    ck_assert_int_eq(av_cost_path(r, AV_PATH_RECURRENT, &p, 1024, d, dv), AV_OK);
    ck_assert(r[0] == -1); /* non-causal: no sequential form */
    p.causal = 1;
    p.window = 16;
    ck_assert_int_eq(av_cost_path(r, AV_PATH_RECURRENT, &p, 1024, d, dv), AV_OK);
    ck_assert(r[1] == 4.0 * 16 * (d + dv));
    ck_assert_int_eq(av_cost_path(l, AV_PATH_LINEAR, &p, 1024, d, dv), AV_OK);
    ck_assert(l[0] == -1);
    ck_assert_int_eq(av_cost_path(l, 9, &p, 1024, d, dv), AV_ERR_VARIANT);
    double out[4];
    av_params_default(&p, AV_RETENTION);
    ck_assert_int_eq(av_cost(out, &p, 1024, d, dv), AV_OK);
    ck_assert_int_eq(av_cost_path(c, AV_PATH_CHUNKWISE, &p, 1024, d, dv), AV_OK);
    ck_assert(out[2] == c[0] && out[3] == c[1]);
}
END_TEST

Suite *suite_recurrent(void) {
    Suite *s = suite_create("recurrent");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_softmax_window_forgetting);
    tcase_add_test(tc, test_reductions);
    tcase_add_test(tc, test_delta_overwrite);
    tcase_add_test(tc, test_semiseparable_planted);
    tcase_add_test(tc, test_semiseparable_refusals);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_costs);
    suite_add_tcase(s, tc);
    return s;
}
