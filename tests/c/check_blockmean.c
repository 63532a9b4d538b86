/* check_blockmean.c: av_lowrank_block_mean (src/blockmean.c) against the plain definition: form M = L·Rᵀ
 * in float64, average each block. Also against the library's own n×n matrix of a factor variant, which is
 * what the page would otherwise downsample. And av_downsample, the cells of a formed matrix, against its
 * plain twin. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

/* The reference: block means of L·Rᵀ formed entry by entry, in float64. */
static void reference(double *out, const float *L, const float *R, int n, int r, int b) {
    int c = (n + b - 1) / b;
    for (int I = 0; I < c; I++)
        for (int J = 0; J < c; J++) {
            int i1 = I * b + b < n ? I * b + b : n, j1 = J * b + b < n ? J * b + b : n;
            double s = 0.0;
            for (int i = I * b; i < i1; i++)
                for (int j = J * b; j < j1; j++) {
                    double m = 0.0;
                    for (int k = 0; k < r; k++) m += (double)L[(size_t)i * r + k] * R[(size_t)j * r + k];
                    s += m;
                }
            out[(size_t)I * c + J] = s / ((double)(i1 - I * b) * (j1 - J * b));
        }
}

START_TEST(test_matches_definition) {
    static const int cases[][3] = {{1, 1, 1}, {5, 3, 1}, {5, 3, 5}, {17, 4, 4}, {64, 8, 16}, {100, 7, 9}, {257, 16, 16}};
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        int n = cases[t][0], r = cases[t][1], b = cases[t][2], c = (n + b - 1) / b;
        float *L = malloc(sizeof(float) * n * r), *R = malloc(sizeof(float) * n * r), *out = malloc(sizeof(float) * c * c);
        double *ref = malloc(sizeof(double) * c * c);
        tu_fill_normal(L, (size_t)n * r, 0.0, 1.0, 10 + t);
        tu_fill_uniform(R, (size_t)n * r, -1.0, 2.0, 20 + t);
        size_t wb = av_lowrank_block_mean_work(n, r, b);
        ck_assert_uint_gt(wb, 0);
        void *work = malloc(wb + 1);
        /* a workspace one byte off any alignment: the arena aligns it */
        ck_assert_int_eq(av_lowrank_block_mean(out, L, R, n, r, b, (char *)work + 1, wb), AV_OK);
        reference(ref, L, R, n, r, b);
        for (int k = 0; k < c * c; k++) ck_assert_double_le(fabs(out[k] - ref[k]), 1e-6 * (1.0 + fabs(ref[k])));
        free(L); free(R); free(out); free(ref); free(work);
    }
}
END_TEST

/* The cells equal the block means of av_matrix's own M for a factor variant (elu, performer). */
START_TEST(test_matches_matrix) {
    const int n = 96, d = 16, b = 8, c = n / b;
    const int variants[] = {AV_ELU, AV_PERFORMER, AV_LINFORMER};
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *V = malloc(sizeof(float) * n * d);
    float *M = malloc(sizeof(float) * n * n), *cells = malloc(sizeof(float) * c * c);
    av_generate(Q, K, V, n, d, AV_GEN_GAUSSIAN, 1.0, 3);
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        av_params p;
        av_params_default(&p, variants[v]);
        long r;
        ck_assert_int_eq(av_factor_rank(&r, &p, n, d), AV_OK);
        float *L = malloc(sizeof(float) * n * r), *R = malloc(sizeof(float) * n * r);
        size_t wm = av_matrix_work(&p, n, d), wf = av_factors_work(&p, n, d), wc = av_lowrank_block_mean_work(n, r, b);
        size_t wb = wm > wf ? wm : wf;
        wb = wb > wc ? wb : wc;
        void *work = malloc(wb);
        ck_assert_int_ge(av_matrix(M, Q, K, n, d, &p, work, wm), 0);
        ck_assert_int_ge(av_factors(L, R, Q, K, n, d, &p, work, wf), 0);
        ck_assert_int_eq(av_lowrank_block_mean(cells, L, R, n, r, b, work, wc), AV_OK);
        double worst = 0.0, top = 0.0;
        for (int I = 0; I < c; I++)
            for (int J = 0; J < c; J++) {
                double s = 0.0;
                for (int i = I * b; i < I * b + b; i++)
                    for (int j = J * b; j < J * b + b; j++) s += M[(size_t)i * n + j];
                s /= b * b;
                worst = fmax(worst, fabs(s - cells[I * c + J]));
                top = fmax(top, fabs(s));
            }
        ck_assert_msg(worst <= 1e-5 * top, "variant %d: %g against cells up to %g", variants[v], worst, top);
        free(L); free(R); free(work);
    }
    free(Q); free(K); free(V); free(M); free(cells);
}
END_TEST

START_TEST(test_status_codes) {
    float L[4] = {1, 2, 3, 4}, R[4] = {1, 1, 1, 1}, out[4];
    unsigned char work[512];
    ck_assert_int_eq(av_lowrank_block_mean(NULL, L, R, 2, 2, 1, work, sizeof work), AV_ERR_NULL);
    ck_assert_int_eq(av_lowrank_block_mean(out, L, R, 2, 2, 3, work, sizeof work), AV_ERR_SIZE);
    ck_assert_int_eq(av_lowrank_block_mean(out, L, R, 2, 2, 0, work, sizeof work), AV_ERR_SIZE);
    ck_assert_int_eq(av_lowrank_block_mean(out, L, R, 0, 2, 1, work, sizeof work), AV_ERR_SIZE);
    ck_assert_int_eq(av_lowrank_block_mean(out, L, R, 2, 0, 1, work, sizeof work), AV_ERR_SIZE);
    ck_assert_int_eq(av_lowrank_block_mean(out, L, R, 2, 2, 1, work, 8), AV_ERR_WORKSPACE);
    ck_assert_uint_eq(av_lowrank_block_mean_work(2, 2, 3), 0);
    /* n = 2, r = 2, b = 2: one cell, the mean of all four entries of L·Rᵀ = (1+2)·1·… */
    ck_assert_int_eq(av_lowrank_block_mean(out, L, R, 2, 2, 2, work, sizeof work), AV_OK);
    ck_assert_double_eq_tol(out[0], (3.0 + 3.0 + 7.0 + 7.0) / 4.0, 1e-6);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// av_downsample: the cells of a formed matrix, against the plain definition

/* The plain twin: each block's entries one by one, columns outer and rows inner (the documented tie rule:
 * the leftmost column, then the topmost row), the first non-finite entry kept; means in float64. */
static void downsample_ref(float *out, const float *X, const float *Y, int n, int b, int mode) {
    int c = (n + b - 1) / b;
    for (int I = 0; I < c; I++)
        for (int J = 0; J < c; J++) {
            int i1 = I * b + b < n ? I * b + b : n, j1 = J * b + b < n ? J * b + b : n;
            double s = 0.0;
            float m = mode == AV_DS_MAX && !Y ? -FLT_MAX : 0.0f;
            for (int j = J * b; j < j1; j++)
                for (int i = I * b; i < i1; i++) {
                    float x = X[(size_t)i * n + j], y = Y ? Y[(size_t)i * n + j] : 0.0f;
                    s += (double)x - y;
                    float v = x - y;
                    int larger = Y ? fabsf(v) > fabsf(m) : v > m;
                    if ((larger || !isfinite(v)) && isfinite(m)) m = v;
                }
            out[(size_t)I * c + J] = mode == AV_DS_MEAN ? (float)(s / ((double)(i1 - I * b) * (j1 - J * b))) : m;
        }
}

START_TEST(test_downsample_matches_definition) {
    static const int cases[][2] = {{1, 1}, {3, 1}, {5, 2}, {7, 7}, {17, 4}, {64, 8}, {100, 9}, {257, 2}, {1031, 5}};
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        int n = cases[t][0], b = cases[t][1], c = (n + b - 1) / b;
        float *X = malloc(sizeof(float) * n * n), *Y = malloc(sizeof(float) * n * n);
        float *out = malloc(sizeof(float) * c * c), *ref = malloc(sizeof(float) * c * c);
        tu_fill_normal(X, (size_t)n * n, 0.0, 1.0, 30 + t);
        tu_fill_uniform(Y, (size_t)n * n, -1.0, 1.0, 40 + t);
        for (int k = 0; k < n * n; k += 7) Y[k] = X[k] - (k % 2 ? 0.5f : -0.5f); /* ties of opposite signs */
        size_t wb = av_downsample_work(n, b);
        ck_assert_uint_ge(wb, sizeof(double) * n);
        void *work = malloc(wb + 1);
        for (int mode = AV_DS_MEAN; mode <= AV_DS_MAX; mode++)
            for (int diff = 0; diff < 2; diff++) {
                const float *y = diff ? Y : NULL;
                /* a workspace one byte off any alignment */
                ck_assert_int_eq(av_downsample(out, X, y, n, b, mode, (char *)work + 1, wb), AV_OK);
                downsample_ref(ref, X, y, n, b, mode);
                for (int k = 0; k < c * c; k++) {
                    if (mode == AV_DS_MAX) /* a selection: the very entry */
                        ck_assert_msg(out[k] == ref[k], "n %d b %d diff %d cell %d: %.9g, want %.9g", n, b, diff, k, out[k], ref[k]);
                    else /* float64 sums in another order, rounded once to float */
                        ck_assert_msg(fabsf(out[k] - ref[k]) <= 2e-7f * fabsf(ref[k]) + 1e-12f,
                                      "n %d b %d diff %d cell %d: %.9g, want %.9g", n, b, diff, k, out[k], ref[k]);
                }
            }
        free(X); free(Y); free(out); free(ref); free(work);
    }
}
END_TEST

START_TEST(test_downsample_nonfinite_and_status) {
    /* 4×4 by 2×2 blocks: a NaN in cell 0, +Inf in cell 1, −Inf in cell 2, cell 3 finite */
    float X[16], Y[16] = {0}, out[4];
    for (int k = 0; k < 16; k++) X[k] = (float)k;
    X[1] = NAN, X[3] = INFINITY, X[8] = -INFINITY;
    X[0] = 100.0f, X[4] = 200.0f; /* larger entries before and after the NaN: the NaN is kept */
    double work[32];
    ck_assert_uint_le(av_downsample_work(4, 2), sizeof work);
    ck_assert_uint_le(av_downsample_work(6, 3), sizeof work);
    for (int mode = AV_DS_MEAN; mode <= AV_DS_MAX; mode++)
        for (int diff = 0; diff < 2; diff++) {
            ck_assert_int_eq(av_downsample(out, X, diff ? Y : NULL, 4, 2, mode, work, sizeof work), AV_OK);
            ck_assert_msg(isnan(out[0]), "mode %d diff %d: %g", mode, diff, out[0]);
            ck_assert(!isfinite(out[1]));
            ck_assert(!isfinite(out[2]));
            ck_assert(isfinite(out[3]));
        }
    /* the mean is mass-preserving; the max keeps the spike; the difference's max keeps the sign */
    float Z[16] = {0};
    Z[5] = -8.0f, Z[6] = 3.0f;
    ck_assert_int_eq(av_downsample(out, Z, NULL, 4, 4, AV_DS_MEAN, work, sizeof work), AV_OK);
    ck_assert_float_eq(out[0], -5.0f / 16);
    ck_assert_int_eq(av_downsample(out, Z, NULL, 4, 4, AV_DS_MAX, work, sizeof work), AV_OK);
    ck_assert_float_eq(out[0], 3.0f);
    ck_assert_int_eq(av_downsample(out, Y, Z, 4, 4, AV_DS_MAX, work, sizeof work), AV_OK);
    ck_assert_float_eq(out[0], 8.0f);
    ck_assert_int_eq(av_downsample(out, Z, Y, 4, 4, AV_DS_MAX, work, sizeof work), AV_OK);
    ck_assert_float_eq(out[0], -8.0f);
    /* the tie rule, n = 6 (the scalar tails too) by 3×3 blocks: +5 at (1, 0) and −5 at (0, 1) tie in
     * magnitude, the leftmost column wins; in the next block −5 at (0, 4) and +5 at (2, 4) share a column,
     * the topmost row wins. And a NaN and an Inf in the tails (columns 5) stay */
    float T[36] = {0}, Z6[36] = {0}, c6[4];
    T[1 * 6 + 0] = 5.0f, T[0 * 6 + 1] = -5.0f;
    T[0 * 6 + 4] = -5.0f, T[2 * 6 + 4] = 5.0f;
    ck_assert_int_eq(av_downsample(c6, T, Z6, 6, 3, AV_DS_MAX, work, sizeof work), AV_OK);
    ck_assert_float_eq(c6[0], 5.0f);
    ck_assert_float_eq(c6[1], -5.0f);
    T[4 * 6 + 5] = NAN, T[4 * 6 + 3] = 100.0f, T[1 * 6 + 5] = INFINITY;
    for (int mode = AV_DS_MEAN; mode <= AV_DS_MAX; mode++)
        for (int diff = 0; diff < 2; diff++) {
            ck_assert_int_eq(av_downsample(c6, T, diff ? Z6 : NULL, 6, 3, mode, work, sizeof work), AV_OK);
            ck_assert(isfinite(c6[0]) && isfinite(c6[2]));
            ck_assert_msg(!isfinite(c6[1]), "mode %d diff %d: %g", mode, diff, c6[1]);
            ck_assert_msg(isnan(c6[3]), "mode %d diff %d: %g", mode, diff, c6[3]);
        }
    /* bad input: status codes, out untouched */
    out[0] = 42.0f;
    ck_assert_int_eq(av_downsample(NULL, X, NULL, 4, 2, AV_DS_MEAN, work, sizeof work), AV_ERR_NULL);
    ck_assert_int_eq(av_downsample(out, NULL, NULL, 4, 2, AV_DS_MEAN, work, sizeof work), AV_ERR_NULL);
    ck_assert_int_eq(av_downsample(out, X, NULL, 4, 2, AV_DS_MEAN, NULL, sizeof work), AV_ERR_NULL);
    ck_assert_int_eq(av_downsample(out, X, NULL, 4, 5, AV_DS_MEAN, work, sizeof work), AV_ERR_SIZE);
    ck_assert_int_eq(av_downsample(out, X, NULL, 4, 0, AV_DS_MEAN, work, sizeof work), AV_ERR_SIZE);
    ck_assert_int_eq(av_downsample(out, X, NULL, 0, 1, AV_DS_MEAN, work, sizeof work), AV_ERR_SIZE);
    ck_assert_int_eq(av_downsample(out, X, NULL, 4, 2, 2, work, sizeof work), AV_ERR_KNOB);
    ck_assert_int_eq(av_downsample(out, X, NULL, 4, 2, -1, work, sizeof work), AV_ERR_KNOB);
    ck_assert_int_eq(av_downsample(out, X, NULL, 4, 2, AV_DS_MEAN, work, 8), AV_ERR_WORKSPACE);
    ck_assert_float_eq(out[0], 42.0f);
    ck_assert_uint_eq(av_downsample_work(4, 5), 0);
    ck_assert_uint_eq(av_downsample_work(AV_MAX_N + 1, 1), 0);
}
END_TEST

Suite *suite_blockmean(void) {
    Suite *s = suite_create("blockmean");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_matches_definition);
    tcase_add_test(tc, test_matches_matrix);
    tcase_add_test(tc, test_status_codes);
    tcase_add_test(tc, test_downsample_matches_definition);
    tcase_add_test(tc, test_downsample_nonfinite_and_status);
    suite_add_tcase(s, tc);
    return s;
}
