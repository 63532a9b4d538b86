/* check_gates.c: the gate generators (src/gates.c, docs/gated.md "Generated gates"): refusals by status,
 * ranges (g ≤ 0 always, α and β where asked), the resets where asked, the shape per channel, determinism,
 * the projections against a float64 reference drawn from the documented streams, and golden hashes of the
 * bits (tests/js/gates.test.mjs holds the WASM build to the same hashes). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

// ----------------------------------------------------------------------------------------------------
// helpers

static float *fl(size_t count) {
    float *x = malloc(sizeof(float) * (count ? count : 1));
    ck_assert(x);
    for (size_t e = 0; e < count; e++) x[e] = NAN; /* an entry left unwritten shows */
    return x;
}

/* FNV-1a over the bytes of x[0..count) (little-endian floats on every platform the lab runs on). */
static uint64_t fnv(const float *x, size_t count) {
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *b = (const unsigned char *)x;
    for (size_t i = 0; i < count * sizeof(float); i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static float *keys(int n, int d, uint32_t seed) {
    float *Q = fl((size_t)n * d), *K = fl((size_t)n * d), *V = fl((size_t)n * d);
    ck_assert_int_eq(av_generate(Q, K, V, n, d, AV_GEN_GAUSSIAN, 1.0, seed), AV_OK);
    free(Q);
    free(V);
    return K;
}

/* W (rows×cols) ~ N(0, 1/rows) row-major from the stream domain·2³² + seed, in float64 (the reference). */
static double *draw_w(int rows, int cols, uint64_t domain, uint32_t seed) {
    double *W = malloc(sizeof(double) * rows * cols);
    av_rng rng;
    av_rng_seed(&rng, (domain << 32) | seed);
    for (int e = 0; e < rows * cols; e++) W[e] = (double)(float)(av_rng_normal(&rng) / sqrt((double)rows));
    return W;
}

static int all_le0(const float *g, size_t count) {
    for (size_t e = 0; e < count; e++)
        if (!(g[e] <= 0)) return 0;
    return 1;
}

// ----------------------------------------------------------------------------------------------------
// refusals

START_TEST(test_refusals) {
    float *g = fl(64 * 4), *K = keys(64, 4, 1);
    int at[2] = {3, 64};
    ck_assert_int_eq(av_gates_constant(NULL, 8, 1, 0.9), AV_ERR_NULL);
    ck_assert_int_eq(av_gates_constant(g, 0, 1, 0.9), AV_ERR_SIZE);
    ck_assert_int_eq(av_gates_constant(g, AV_MAX_N + 1, 1, 0.9), AV_ERR_SIZE);
    ck_assert_int_eq(av_gates_constant(g, 8, 0, 0.9), AV_ERR_SIZE);
    ck_assert_int_eq(av_gates_constant(g, 8, AV_MAX_D + 1, 0.9), AV_ERR_SIZE);
    ck_assert_int_eq(av_gates_constant(g, 8, 1, 0.0), AV_ERR_KNOB);
    ck_assert_int_eq(av_gates_constant(g, 8, 1, 1.0001), AV_ERR_KNOB);
    ck_assert_int_eq(av_gates_constant(g, 8, 1, NAN), AV_ERR_KNOB);
    ck_assert_int_eq(av_gates_uniform(g, 8, 1, 0.9, 0.8, 1), AV_ERR_KNOB);   /* lo > hi */
    ck_assert_int_eq(av_gates_uniform(g, 8, 1, 0.0, 0.8, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_gates_uniform(g, 8, 1, 0.5, 1.5, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_gates_resets(g, 8, 1, 0.9, -1, NULL, 0, 0, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_gates_resets(g, 8, 1, 0.9, 0, NULL, 0, 1.5, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_gates_resets(g, 8, 1, 0.9, 0, NULL, 1, 0, 1), AV_ERR_NULL);
    ck_assert_int_eq(av_gates_resets(g, 8, 1, 0.9, 0, at, -1, 0, 1), AV_ERR_SIZE);
    ck_assert_int_eq(av_gates_resets(g, 64, 1, 0.9, 0, at, 2, 0, 1), AV_ERR_KNOB); /* 64 is past n */
    ck_assert_int_eq(av_gates_slow(g, 8, 1, 0.5, 0.9, 1.5, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_gates_slow(g, 8, 1, 0.5, 0.9, INFINITY, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_gates_projection(g, NULL, 8, 4, 1, 1), AV_ERR_NULL);
    ck_assert_int_eq(av_gates_projection(g, K, 8, 0, 1, 1), AV_ERR_SIZE);
    ck_assert_int_eq(av_gates_mamba2(g, NULL, K, 8, 4, 0.0, 0.01, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_gates_mamba2(g, NULL, K, 8, 4, -1.0, 0.0, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_betas_constant(g, 8, 0.0), AV_ERR_KNOB);
    ck_assert_int_eq(av_betas_constant(g, 8, 2.5), AV_ERR_KNOB);
    ck_assert_int_eq(av_betas_uniform(g, 8, 0.5, 2.01, 1), AV_ERR_KNOB);
    ck_assert_int_eq(av_betas_projection(g, K, 8, 4, 0.0, 1), AV_ERR_KNOB);
    K[5] = NAN;
    ck_assert_int_eq(av_gates_projection(g, K, 8, 4, 1, 1), AV_ERR_NONFINITE);
    ck_assert_int_eq(av_betas_projection(g, K, 8, 4, 1.0, 1), AV_ERR_NONFINITE);
    ck_assert_int_eq(av_gates_mamba2(g, NULL, K, 8, 4, -1.0, 0.01, 1), AV_ERR_NONFINITE);
    ck_assert(isnan(g[0])); /* a refusal writes nothing */
    ck_assert_str_eq(av_gate_generator_name(AV_GATES_RESETS), "resets");
    ck_assert_int_eq(av_gate_generator_from_name("projection"), AV_GATES_PROJECTION);
    ck_assert_int_eq(av_gate_generator_from_name("reset"), -1);
    ck_assert_ptr_null(av_gate_generator_name(AV_GATES_COUNT));
    free(g);
    free(K);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// values

START_TEST(test_constant) {
    float *g = fl(10 * 3);
    ck_assert_int_eq(av_gates_constant(g, 10, 3, 1.0), AV_OK);
    for (int e = 0; e < 30; e++) ck_assert(g[e] == 0.0f && !signbit(g[e]));
    ck_assert_int_eq(av_gates_constant(g, 10, 3, 0.9), AV_OK);
    for (int e = 0; e < 30; e++) ck_assert_float_eq_tol(g[e], log(0.9), 1e-7);
    free(g);
}
END_TEST

START_TEST(test_uniform_range_and_channels) {
    int n = 500, ch = 8;
    float *g = fl((size_t)n * ch), *h = fl((size_t)n * ch);
    ck_assert_int_eq(av_gates_uniform(g, n, ch, 0.6, 0.95, 7), AV_OK);
    ck_assert(all_le0(g, (size_t)n * ch));
    double lo = 1, hi = 0, mean = 0;
    for (int e = 0; e < n * ch; e++) {
        double a = exp(g[e]);
        lo = fmin(lo, a), hi = fmax(hi, a), mean += a / (n * ch);
    }
    ck_assert(lo >= 0.6 * (1 - 1e-6) && hi <= 0.95 * (1 + 1e-6));
    ck_assert(lo < 0.61 && hi > 0.94);                  /* it spans the range */
    ck_assert_float_eq_tol(mean, 0.775, 0.01);          /* U[0.6, 0.95]: sd of the mean 0.0016 */
    int differ = 0; /* per channel: the channels of one token are separate draws */
    for (int t = 0; t < n; t++) differ += g[t * ch] != g[t * ch + 1];
    ck_assert_int_gt(differ, n - 3);
    ck_assert_int_eq(av_gates_uniform(h, n, ch, 0.6, 0.95, 7), AV_OK);
    ck_assert_mem_eq(g, h, sizeof(float) * n * ch);
    ck_assert_int_eq(av_gates_uniform(h, n, ch, 0.6, 0.95, 8), AV_OK);
    ck_assert(memcmp(g, h, sizeof(float) * n * ch) != 0);
    ck_assert_int_eq(av_gates_uniform(h, n, ch, 0.8, 0.8, 8), AV_OK); /* lo = hi: the constant gate */
    for (int e = 0; e < n * ch; e++) ck_assert(h[e] == h[0]);
    ck_assert_float_eq_tol(h[0], log(0.8), 1e-7);
    free(g);
    free(h);
}
END_TEST

static int is_reset(const float *g, int t, int ch) {
    for (int c = 0; c < ch; c++)
        if (g[(size_t)t * ch + c] != -30.0f) return 0;
    return 1;
}

START_TEST(test_resets_where_asked) {
    int n = 100, ch = 3, at[3] = {0, 7, 41};
    float *g = fl((size_t)n * ch);
    ck_assert_int_eq(av_gates_resets(g, n, ch, 0.99, 16, at, 3, 0.0, 1), AV_OK);
    float open = (float)log(0.99);
    for (int t = 0; t < n; t++) {
        int want = t == 0 || t == 7 || t == 41 || (t > 0 && t % 16 == 0);
        if (want) ck_assert_msg(is_reset(g, t, ch), "token %d should reset", t);
        else
            for (int c = 0; c < ch; c++) ck_assert_msg(fabsf(g[t * ch + c] - open) < 1e-8f, "token %d", t);
    }
    /* at random: about rate·(n − 1) resets, never token 0, and a higher rate keeps the lower one's resets */
    int N = 4096;
    float *lo = fl(N), *hi = fl(N);
    ck_assert_int_eq(av_gates_resets(lo, N, 1, 1.0, 0, NULL, 0, 0.05, 3), AV_OK);
    ck_assert_int_eq(av_gates_resets(hi, N, 1, 1.0, 0, NULL, 0, 0.2, 3), AV_OK);
    int cl = 0, chh = 0;
    ck_assert(lo[0] == 0.0f && hi[0] == 0.0f);
    for (int t = 0; t < N; t++) {
        ck_assert(lo[t] == 0.0f || lo[t] == -30.0f);
        cl += lo[t] < 0, chh += hi[t] < 0;
        if (lo[t] < 0) ck_assert(hi[t] < 0);
    }
    ck_assert_int_gt(cl, 4095 * 0.05 - 4 * 14); ck_assert_int_lt(cl, 4095 * 0.05 + 4 * 14);  /* sd √(n·p·q) ≈ 14 */
    ck_assert_int_gt(chh, 4095 * 0.2 - 4 * 26); ck_assert_int_lt(chh, 4095 * 0.2 + 4 * 26);
    ck_assert_int_eq(av_gates_resets(lo, N, 1, 1.0, 0, NULL, 0, 0.0, 3), AV_OK);
    for (int t = 0; t < N; t++) ck_assert(lo[t] == 0.0f);
    free(g);
    free(lo);
    free(hi);
}
END_TEST

START_TEST(test_slow) {
    int n = 300, ch = 4;
    double lam = 64, lo = 0.5, hi = 0.99;
    float *g = fl((size_t)n * ch);
    ck_assert_int_eq(av_gates_slow(g, n, ch, lo, hi, lam, 5), AV_OK);
    ck_assert(all_le0(g, (size_t)n * ch));
    for (int c = 0; c < ch; c++) {
        double mn = 1, mx = 0;
        for (int t = 0; t < n; t++) {
            double a = exp(g[t * ch + c]);
            ck_assert(a >= lo * (1 - 1e-6) && a <= hi * (1 + 1e-6));
            mn = fmin(mn, a), mx = fmax(mx, a);
            if (t > 0) ck_assert(fabs(a - exp(g[(t - 1) * ch + c])) <= (hi - lo) * 3.14159265358979323846 / lam + 1e-6); /* smooth */
            if (t >= 64) ck_assert_float_eq_tol(a, exp(g[(t - 64) * ch + c]), 1e-6);                   /* period λ */
        }
        ck_assert(mn < lo + 0.01 && mx > hi - 0.01); /* over 300 tokens it reaches both ends */
    }
    ck_assert(g[0] != g[1] && g[1] != g[2]); /* a phase per channel */
    free(g);
}
END_TEST

START_TEST(test_projection_reference) {
    int n = 40, d = 12, ch = 12;
    float *K = keys(n, d, 3), *g = fl((size_t)n * ch), *one = fl(n);
    ck_assert_int_eq(av_gates_projection(g, K, n, d, ch, 9), AV_OK);
    ck_assert_int_eq(av_gates_projection(one, K, n, d, 1, 9), AV_OK);
    double *W = draw_w(d, ch, 9, 9), *w1 = draw_w(d, 1, 9, 9);
    for (int t = 0; t < n; t++) {
        for (int c = 0; c < ch; c++) {
            double x = 0;
            for (int j = 0; j < d; j++) x += (double)K[t * d + j] * W[j * ch + c];
            double want = -log1p(exp(-x)) / 16;
            ck_assert(g[t * ch + c] < 0);
            ck_assert_msg(fabs(g[t * ch + c] - want) < 1e-6 * (1 + fabs(want)), "t %d c %d: %g vs %g", t, c,
                          g[t * ch + c], want);
        }
        double x = 0;
        for (int j = 0; j < d; j++) x += (double)K[t * d + j] * w1[j];
        ck_assert(fabs(one[t] - (-log1p(exp(-x)) / 16)) < 1e-6);
    }
    /* huge logits: still ≤ 0 and finite */
    for (int e = 0; e < n * d; e++) K[e] *= 1e30f;
    ck_assert_int_eq(av_gates_projection(g, K, n, d, ch, 9), AV_OK);
    for (int e = 0; e < n * ch; e++) ck_assert(g[e] <= 0 && isfinite(g[e]));
    free(K), free(g), free(one), free(W), free(w1);
}
END_TEST

START_TEST(test_mamba2) {
    int n = 50, d = 6;
    double A = -2.0, dt = 0.05;
    float *K = keys(n, d, 4), *K0 = keys(n, d, 4), *g = fl(n), *D = fl(n);
    ck_assert_int_eq(av_gates_mamba2(g, D, K, n, d, A, dt, 11), AV_OK);
    double *w = draw_w(d, 1, 9, 11);
    double bias = log(expm1(dt));
    for (int t = 0; t < n; t++) {
        double x = 0;
        for (int j = 0; j < d; j++) x += (double)K0[t * d + j] * w[j];
        double want = log1p(exp(x + bias));
        ck_assert(D[t] > 0 && g[t] < 0);
        ck_assert_msg(fabs(D[t] - want) < 1e-5 * want, "Δ_%d %g vs %g", t, D[t], want);
        ck_assert_float_eq_tol(g[t], A * D[t], 1e-6 * fabs(A * D[t]));
        for (int j = 0; j < d; j++) ck_assert(K[t * d + j] == K0[t * d + j] * D[t]);
    }
    free(K), free(K0), free(g), free(D), free(w);
}
END_TEST

START_TEST(test_betas) {
    int n = 400, d = 8;
    float *b = fl(n), *K = keys(n, d, 2);
    ck_assert_int_eq(av_betas_constant(b, n, 2.0), AV_OK);
    for (int t = 0; t < n; t++) ck_assert(b[t] == 2.0f);
    ck_assert_int_eq(av_betas_constant(b, n, 1e-300), AV_OK); /* below float's range: floored, never 0 */
    for (int t = 0; t < n; t++) ck_assert(b[t] == FLT_MIN);
    ck_assert_int_eq(av_betas_uniform(b, n, 0.2, 1.8, 3), AV_OK);
    double mn = 3, mx = 0;
    for (int t = 0; t < n; t++) mn = fmin(mn, b[t]), mx = fmax(mx, b[t]);
    ck_assert(mn >= 0.2f && mx <= 1.8f && mn < 0.25 && mx > 1.75);
    ck_assert_int_eq(av_betas_projection(b, K, n, d, 2.0, 6), AV_OK);
    double *w = draw_w(d, 1, 11, 6);
    for (int t = 0; t < n; t++) {
        double x = 0;
        for (int j = 0; j < d; j++) x += (double)K[t * d + j] * w[j];
        ck_assert(b[t] > 0 && b[t] <= 2);
        ck_assert_float_eq_tol(b[t], 2.0 / (1 + exp(-x)), 1e-6);
    }
    for (int e = 0; e < n * d; e++) K[e] *= 1e30f; /* σ saturates: never 0, never above hi */
    ck_assert_int_eq(av_betas_projection(b, K, n, d, 1.0, 6), AV_OK);
    for (int t = 0; t < n; t++) ck_assert(b[t] > 0 && b[t] <= 1);
    free(b), free(K), free(w);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// golden bits: tests/js/gates.test.mjs asserts the same hashes of the WASM build's outputs

START_TEST(test_golden) {
    int n = 37, d = 13, at[2] = {5, 20};
    float *g = fl((size_t)n * d), *K = keys(n, d, 42), *D = fl(n);
    uint64_t h[9];
    ck_assert_int_eq(av_gates_constant(g, n, d, 0.97), AV_OK); h[0] = fnv(g, (size_t)n * d);
    ck_assert_int_eq(av_gates_uniform(g, n, d, 0.5, 1.0, 42), AV_OK); h[1] = fnv(g, (size_t)n * d);
    ck_assert_int_eq(av_gates_resets(g, n, 1, 0.99, 8, at, 2, 0.1, 42), AV_OK); h[2] = fnv(g, n);
    ck_assert_int_eq(av_gates_slow(g, n, d, 0.8, 0.999, 16, 42), AV_OK); h[3] = fnv(g, (size_t)n * d);
    ck_assert_int_eq(av_gates_projection(g, K, n, d, d, 42), AV_OK); h[4] = fnv(g, (size_t)n * d);
    ck_assert_int_eq(av_betas_uniform(g, n, 0.1, 2.0, 42), AV_OK); h[5] = fnv(g, n);
    ck_assert_int_eq(av_betas_projection(g, K, n, d, 1.0, 42), AV_OK); h[6] = fnv(g, n);
    ck_assert_int_eq(av_gates_mamba2(g, D, K, n, d, -1.0, 0.01, 42), AV_OK); h[7] = fnv(g, n); h[8] = fnv(K, (size_t)n * d);
    static const uint64_t golden[9] = {0x4430ccfab1cc3424ull, 0xe3bd39b8c61149ebull, 0xfc72b04c5eb3c66dull,
                                       0x1a8138bd0a63d0d9ull, 0x111b9baddfbcb629ull, 0x17bbf58887a637e0ull,
                                       0xb0080f5707a45a7cull, 0x8c4112f159789bf3ull, 0xb2d2bf03cae6edaeull};
    for (int i = 0; i < 9; i++) ck_assert_msg(h[i] == golden[i], "hash %d: 0x%016llx", i, (unsigned long long)h[i]);
    free(g), free(K), free(D);
}
END_TEST

Suite *suite_gates(void) {
    Suite *s = suite_create("gates");
    TCase *tc = tcase_create("gates");
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_constant);
    tcase_add_test(tc, test_uniform_range_and_channels);
    tcase_add_test(tc, test_resets_where_asked);
    tcase_add_test(tc, test_slow);
    tcase_add_test(tc, test_projection_reference);
    tcase_add_test(tc, test_mamba2);
    tcase_add_test(tc, test_betas);
    tcase_add_test(tc, test_golden);
    suite_add_tcase(s, tc);
    return s;
}
