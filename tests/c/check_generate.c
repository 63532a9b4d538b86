/* check_generate.c: the seeded synthetic inputs (src/generate.c): bit-exact determinism, golden values
 * (the same bits must come out of the WASM build), and each generator's planted structure. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

// ----------------------------------------------------------------------------------------------------
// helpers

typedef struct qkv { float *Q, *K, *V; int n, d; } qkv;

static qkv make(int gen, int n, int d, double std, uint32_t seed) {
    qkv x = {malloc(sizeof(float) * n * d), malloc(sizeof(float) * n * d), malloc(sizeof(float) * n * d), n, d};
    ck_assert(x.Q && x.K && x.V);
    ck_assert_int_eq(av_generate(x.Q, x.K, x.V, n, d, gen, std, seed), AV_OK);
    return x;
}

static void drop(qkv *x) { free(x->Q); free(x->K); free(x->V); }

static int same_bits(const qkv *a, const qkv *b) {
    size_t bytes = sizeof(float) * a->n * a->d;
    return !memcmp(a->Q, b->Q, bytes) && !memcmp(a->K, b->K, bytes) && !memcmp(a->V, b->V, bytes);
}

/* A[n×n] = row softmax of QKᵀ/√d in double. */
static double *softmax_double(const qkv *x) {
    int n = x->n, d = x->d;
    double *A = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n; i++) {
        double mx = -INFINITY, sum = 0.0;
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < d; k++) s += (double)x->Q[i * d + k] * x->K[j * d + k];
            A[i * n + j] = s / sqrt((double)d);
            if (A[i * n + j] > mx) mx = A[i * n + j];
        }
        for (int j = 0; j < n; j++) sum += A[i * n + j] = exp(A[i * n + j] - mx);
        for (int j = 0; j < n; j++) A[i * n + j] /= sum;
    }
    return A;
}

/* Singular values (descending) of X[n×d] in double: eigenvalues of XᵀX by cyclic Jacobi
 * (Golub & Van Loan §8.5), σ = √λ. */
static void singular_values(double *sv, const float *X, int n, int d) {
    double *G = calloc((size_t)d * d, sizeof(double));
    for (int a = 0; a < d; a++)
        for (int b = 0; b < d; b++)
            for (int i = 0; i < n; i++) G[a * d + b] += (double)X[i * d + a] * X[i * d + b];
    for (int sweep = 0; sweep < 60; sweep++) {
        double off = 0.0;
        for (int p = 0; p < d; p++)
            for (int q = p + 1; q < d; q++) off += G[p * d + q] * G[p * d + q];
        if (off < 1e-300) break;
        for (int p = 0; p < d; p++)
            for (int q = p + 1; q < d; q++) {
                if (G[p * d + q] == 0.0) continue;
                double theta = (G[q * d + q] - G[p * d + p]) / (2.0 * G[p * d + q]);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < d; k++) { /* G ← JᵀGJ, columns then rows */
                    double gp = G[k * d + p], gq = G[k * d + q];
                    G[k * d + p] = c * gp - s * gq;
                    G[k * d + q] = s * gp + c * gq;
                }
                for (int k = 0; k < d; k++) {
                    double gp = G[p * d + k], gq = G[q * d + k];
                    G[p * d + k] = c * gp - s * gq;
                    G[q * d + k] = s * gp + c * gq;
                }
            }
    }
    for (int a = 0; a < d; a++) sv[a] = sqrt(fmax(G[a * d + a], 0.0));
    for (int a = 0; a < d; a++) /* insertion sort, descending */
        for (int b = a; b > 0 && sv[b] > sv[b - 1]; b--) { double t = sv[b]; sv[b] = sv[b - 1]; sv[b - 1] = t; }
    free(G);
}

// ----------------------------------------------------------------------------------------------------
// names and statuses

START_TEST(test_names) {
    const char *names[AV_GEN_COUNT] = {"gaussian", "clustered", "local", "lowrank", "sink"};
    for (int g = 0; g < AV_GEN_COUNT; g++) {
        ck_assert_str_eq(av_generator_name(g), names[g]);
        ck_assert_int_eq(av_generator_from_name(names[g]), g);
    }
    ck_assert_ptr_null(av_generator_name(-1));
    ck_assert_ptr_null(av_generator_name(AV_GEN_COUNT));
    ck_assert_int_eq(av_generator_from_name("gauss"), -1);
    ck_assert_int_eq(av_generator_from_name("gaussians"), -1);
    ck_assert_int_eq(av_generator_from_name(""), -1);
    ck_assert_int_eq(av_generator_from_name(NULL), -1);
}
END_TEST

START_TEST(test_statuses) {
    float Q[12], K[12], V[12];
    ck_assert_int_eq(av_generate(NULL, K, V, 3, 4, 0, 1.0, 1), AV_ERR_NULL);
    ck_assert_int_eq(av_generate(Q, NULL, V, 3, 4, 0, 1.0, 1), AV_ERR_NULL);
    ck_assert_int_eq(av_generate(Q, K, NULL, 3, 4, 0, 1.0, 1), AV_ERR_NULL);
    ck_assert_int_eq(av_generate(Q, K, V, 0, 4, 0, 1.0, 1), AV_ERR_SIZE);
    ck_assert_int_eq(av_generate(Q, K, V, 3, 0, 0, 1.0, 1), AV_ERR_SIZE);
    ck_assert_int_eq(av_generate(Q, K, V, AV_MAX_N + 1, 1, 0, 1.0, 1), AV_ERR_SIZE);
    ck_assert_int_eq(av_generate(Q, K, V, 1, AV_MAX_D + 1, 0, 1.0, 1), AV_ERR_SIZE);
    ck_assert_int_eq(av_generate(Q, K, V, 3, 4, -1, 1.0, 1), AV_ERR_VARIANT);
    ck_assert_int_eq(av_generate(Q, K, V, 3, 4, AV_GEN_COUNT, 1.0, 1), AV_ERR_VARIANT);
    ck_assert_int_eq(av_generate(Q, K, V, 3, 4, 0, 0.0, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_generate(Q, K, V, 3, 4, 0, -1.0, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_generate(Q, K, V, 3, 4, 0, NAN, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_generate(Q, K, V, 3, 4, 0, INFINITY, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_generate(Q, K, V, 3, 4, 0, 2e6, 1), AV_ERR_KNOB);
    for (int g = 0; g < AV_GEN_COUNT; g++) { /* the smallest sizes work for every generator */
        ck_assert_int_eq(av_generate(Q, K, V, 1, 1, g, 1.0, 1), AV_OK);
        ck_assert_int_eq(av_generate(Q, K, V, 3, 4, g, 1e6, 1), AV_OK);
        ck_assert(isfinite(Q[0]) && isfinite(K[0]) && isfinite(V[0]));
    }
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// determinism and golden values

START_TEST(test_deterministic) {
    for (int g = 0; g < AV_GEN_COUNT; g++) {
        qkv a = make(g, 37, 13, 0.7, 12345), b = make(g, 37, 13, 0.7, 12345), c = make(g, 37, 13, 0.7, 12346);
        ck_assert_msg(same_bits(&a, &b), "%s: same seed, different bits", av_generator_name(g));
        ck_assert_msg(memcmp(a.Q, c.Q, sizeof(float) * 37 * 13) != 0, "%s: Q ignores the seed", av_generator_name(g));
        ck_assert_msg(memcmp(a.K, c.K, sizeof(float) * 37 * 13) != 0, "%s: K ignores the seed", av_generator_name(g));
        ck_assert_msg(memcmp(a.V, c.V, sizeof(float) * 37 * 13) != 0, "%s: V ignores the seed", av_generator_name(g));
        for (int i = 0; i < 37 * 13; i++) ck_assert(isfinite(a.Q[i]) && isfinite(a.K[i]) && isfinite(a.V[i]));
        drop(&a); drop(&b); drop(&c);
    }
}
END_TEST

/* First floats of Q, K, V for n = 37, d = 13, std = 1, seed = 42 (checked natively and in an emcc
 * -O3 -msimd128 build under node: identical bits). A change here breaks every shared link's data. */
START_TEST(test_golden) {
    static const float golden[AV_GEN_COUNT][6] = {
        /* Q[0..3], K[0], V[0] */
        {-0x1.73d2fep-1f, 0x1.c5e22p-3f, 0x1.db514cp-2f, 0x1.79eb7cp+0f, -0x1.0df1a6p+0f, 0x1.15a9dap-2f},
        {-0x1.8b1dep-1f, 0x1.6be8e2p-2f, 0x1.95ce86p-2f, 0x1.7206f2p+0f, -0x1.99607ep-1f, 0x1.2bac0ep-2f},
        {0x1.6d94a8p+0f, -0x1.c42b96p-3f, 0x1.83df1ep+0f, -0x1.8b53e2p-5f, 0x1.6a8c52p+0f, -0x1.884b7cp-1f},
        {0x1.0e18f6p+0f, -0x1.37fc82p-1f, -0x1.ef7a9ep-2f, -0x1.fd8c32p-2f, 0x1.8b826ep+0f, 0x1.ef26fap-1f},
        {-0x1.df940ap+0f, 0x1.dd30dcp-1f, 0x1.7328dcp-2f, 0x1.97d654p+0f, -0x1.8353eap+0f, 0x1.055438p+0f},
    };
    for (int g = 0; g < AV_GEN_COUNT; g++) {
        qkv x = make(g, 37, 13, 1.0, 42);
        float got[6] = {x.Q[0], x.Q[1], x.Q[2], x.Q[3], x.K[0], x.V[0]};
        for (int i = 0; i < 6; i++)
            ck_assert_msg(memcmp(&got[i], &golden[g][i], 4) == 0, "%s[%d]: %a, golden %a", av_generator_name(g),
                          i, got[i], golden[g][i]);
        drop(&x);
    }
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// statistics and planted structure

START_TEST(test_gaussian_statistics) {
    const double std = 1.7;
    qkv x = make(AV_GEN_GAUSSIAN, 257, 67, std, 7);
    const float *M[3] = {x.Q, x.K, x.V};
    size_t N = 257 * 67;
    for (int t = 0; t < 3; t++) {
        double s = 0.0, s2 = 0.0;
        for (size_t i = 0; i < N; i++) { s += M[t][i]; s2 += (double)M[t][i] * M[t][i]; }
        double mean = s / N, sd = sqrt(s2 / N - mean * mean);
        ck_assert_msg(fabs(mean) < 4.0 * std / sqrt((double)N), "mean %g", mean); /* 4 standard errors */
        ck_assert_msg(fabs(sd / std - 1.0) < 0.03, "std %g, asked %g", sd, std);
    }
    drop(&x);
}
END_TEST

START_TEST(test_lowrank_planted_rank) {
    const int sizes[3][2] = {{45, 23}, {9, 30}, {101, 7}};
    for (int c = 0; c < 3; c++) {
        int n = sizes[c][0], d = sizes[c][1], mn = n < d ? n : d, r = (mn + 3) / 4;
        qkv x = make(AV_GEN_LOW_RANK, n, d, 0.9, 3);
        double sv[64];
        const float *M[2] = {x.Q, x.K};
        for (int t = 0; t < 2; t++) {
            singular_values(sv, M[t], n, d);
            ck_assert_msg(sv[r - 1] > 1e-2 * sv[0], "n %d d %d: sigma_r/sigma_1 = %g", n, d, sv[r - 1] / sv[0]);
            if (r < d) /* past r only the float32 rounding of the entries remains */
                ck_assert_msg(sv[r] < 1e-6 * sv[0], "n %d d %d: sigma_{r+1}/sigma_1 = %g", n, d, sv[r] / sv[0]);
        }
        drop(&x);
    }
    /* the gaussian generator at the same size is full rank, so the test above can fail */
    qkv g = make(AV_GEN_GAUSSIAN, 45, 23, 0.9, 3);
    double sv[23];
    singular_values(sv, g.Q, 45, 23);
    ck_assert(sv[22] > 1e-2 * sv[0]);
    drop(&g);
}
END_TEST

START_TEST(test_sink_column) {
    int n = 101, d = 19;
    qkv x = make(AV_GEN_SINK, n, d, 1.0, 11);
    double *A = softmax_double(&x);
    double col0 = 0.0, other = 0.0;
    for (int i = 0; i < n; i++) col0 += A[i * n] / n;
    for (int j = 1; j < n; j++) {
        double c = 0.0;
        for (int i = 0; i < n; i++) c += A[i * n + j] / n;
        if (c > other) other = c;
    }
    ck_assert_msg(col0 > 0.3 && col0 > 10.0 * other, "sink column mean %g, largest other %g", col0, other);
    free(A);
    drop(&x);
    /* the gaussian generator has no such column */
    qkv g = make(AV_GEN_GAUSSIAN, n, d, 1.0, 11);
    A = softmax_double(&g);
    col0 = 0.0;
    for (int i = 0; i < n; i++) col0 += A[i * n] / n;
    ck_assert(col0 < 0.1);
    free(A);
    drop(&g);
}
END_TEST

/* Mean softmax mass within |i − j| ≤ w. */
static double band_mass(const qkv *x, int w) {
    int n = x->n;
    double *A = softmax_double(x), m = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (abs(i - j) <= w) m += A[i * n + j] / n;
    free(A);
    return m;
}

START_TEST(test_local_diagonal) {
    int n = 91, d = 27;
    qkv x = make(AV_GEN_LOCAL, n, d, 1.0, 5);
    double local = band_mass(&x, 6);
    int near = 0; /* rows whose largest logit is within 2 of the diagonal */
    for (int i = 0; i < n; i++) {
        int arg = 0;
        double best = -INFINITY;
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < d; k++) s += (double)x.Q[i * d + k] * x.K[j * d + k];
            if (s > best) best = s, arg = j;
        }
        near += abs(arg - i) <= 2;
    }
    drop(&x);
    qkv g = make(AV_GEN_GAUSSIAN, n, d, 1.0, 5);
    double base = band_mass(&g, 6);
    drop(&g);
    ck_assert_msg(local > 0.5 && base < 0.25, "band mass local %g, gaussian %g", local, base);
    ck_assert_msg(near == n, "%d of %d rows peak near the diagonal", near, n);
}
END_TEST

START_TEST(test_clustered_groups) {
    int n = 150, d = 21, c = 8; /* c = clamp(n/16, 2, 8) = 8 centres at most */
    const double std = 2.0, small = 0.1 * d * std * std;
    qkv x = make(AV_GEN_CLUSTERED, n, d, std, 9);
    int reps[150], nrep = 0;
    for (int i = 0; i < n; i++) { /* group keys greedily: within `small` of a representative */
        int found = 0;
        for (int r = 0; r < nrep && !found; r++) {
            double dist = 0.0;
            for (int k = 0; k < d; k++) dist += pow(x.K[i * d + k] - x.K[reps[r] * d + k], 2);
            if (dist < small) found = 1;
            else ck_assert_msg(dist > 3.0 * small, "keys neither together nor apart: %g", dist);
        }
        if (!found) reps[nrep++] = i;
    }
    ck_assert_msg(nrep >= 2 && nrep <= c, "%d key groups", nrep);
    for (int i = 0; i < n; i++) { /* every query sits in one of the key groups */
        double best = INFINITY;
        for (int r = 0; r < nrep; r++) {
            double dist = 0.0;
            for (int k = 0; k < d; k++) dist += pow(x.Q[i * d + k] - x.K[reps[r] * d + k], 2);
            if (dist < best) best = dist;
        }
        ck_assert_msg(best < small, "query %d is %g from every key group", i, best);
    }
    drop(&x);
}
END_TEST

Suite *suite_generate(void) {
    Suite *s = suite_create("generate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_statuses);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_golden);
    tcase_add_test(tc, test_gaussian_statistics);
    tcase_add_test(tc, test_lowrank_planted_rank);
    tcase_add_test(tc, test_sink_column);
    tcase_add_test(tc, test_local_diagonal);
    tcase_add_test(tc, test_clustered_groups);
    suite_add_tcase(s, tc);
    return s;
}
