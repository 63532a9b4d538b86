/* fuzz_api.c: libFuzzer target for the whole public API of include/attnviz.h, checking the promises stated
 * at the top of the header on every call.
 *
 *   clang -g -O1 -std=c11 -ffp-contract=off -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *         tests/fuzz/fuzz_api.c src/[a-z]*.c -lm -o build/fuzz/fuzz_api
 *   build/fuzz/fuzz_api -max_total_time=60 build/fuzz/corpus_api
 *   (make fuzz FUZZ_SECONDS=60 does both, after copying the seeds of tests/fuzz/corpus_api, written by
 *   tests/fuzz/make_api_corpus.py, into build/fuzz/corpus_api; a finding's input replays with
 *   build/fuzz/fuzz_api FILE, which prints the broken promise and the decoded input)
 *
 * One input is decoded (a small FuzzedDataProvider-style byte reader; missing bytes read as 0) into a
 * variant, knobs set through av_params_set (out-of-range, non-integer, NaN and Inf values included, and a
 * few raw pokes into the struct), optional Hedgehog weights, sizes n, d ≤ 40 and dv ≤ 8, and Q, K, V from
 * hostile values (±1e30, 1e33, 1e-40 denormals, NaN bit patterns, ±Inf, zeros, raw bits) or from
 * av_generate with a few hostile entries. Then it drives av_matrix, av_attend, av_scores, av_features,
 * av_linear, av_recurrent_step, av_factor_rank, av_factors, av_feature_dim, av_singular_values (both
 * routes), av_lowrank_singular_values, av_lowrank_block_mean, av_downsample, av_readouts, av_readouts_rows,
 * av_reference_summary, av_readouts_summarised, av_error_curve, av_row_entropy_hist, av_entropy_hist, av_cost,
 * av_generate, av_limit, the portable stream and functions (av_rng_*, av_portable_*) and the registry
 * queries, each with a workspace that is exact, one byte short, 64 bytes short, NULL (with 0 bytes or the
 * full size), or exact at an 8-byte (not 64-byte) alignment; every required pointer NULL in turn; and the
 * spectrum's solver capped at a few sweeps (AV_WARN_NO_CONVERGENCE). A time budget halves n and d when
 * the knobs (m = 65536, a large tensor feature dimension) would make one input take seconds.
 *
 * It aborts, after printing what broke and the decoded input, when a promise is broken:
 *   - a status outside AV_STATUS_MIN..AV_STATUS_MAX;
 *   - a non-finite value in an output under AV_OK, AV_WARN_ZERO_ROW or AV_WARN_NO_CONVERGENCE (outputs are
 *     pre-filled with NaN, so an entry left unwritten counts as non-finite too);
 *   - a workspace shorter than the `_work` size accepted (a status ≥ 0), a workspace of the `_work` size
 *     refused with AV_ERR_WORKSPACE, or `_work` returning 0 where the function then succeeds (it is given
 *     a large buffer then);
 *   - a readout that is ±Inf, NaN without a reason, or finite with a reason;
 *   - a NULL required pointer or an invalid size accepted;
 * and when a documented property of an output fails: singular values negative or not descending, or not
 * exactly 0 past the factor rank; a rank/feature query that disagrees with the function it describes; a
 * causal matrix with a nonzero masked entry; exp scores outside [0, 1]; an error curve that does not fall
 * from 1 (or 0) to 0; a defined readout outside its definition's range (docs/readouts.md); a generator
 * that gives different bits for the same seed; cos outside [−1, 1], ln or exp not finite where they are.
 * ASan and UBSan catch the rest (every buffer is malloc'ed at its exact size).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"
#include "internal.h" /* avi_spectrum_test_maxit: the test hook that makes AV_WARN_NO_CONVERGENCE reachable */

// ----------------------------------------------------------------------------------------------------
// the byte reader

typedef struct reader { const uint8_t *p; size_t left; } reader;

static unsigned rd_u8(reader *r) {
    if (!r->left) return 0;
    r->left--;
    return *r->p++;
}
static unsigned rd_u16(reader *r) {
    unsigned lo = rd_u8(r);
    return lo | rd_u8(r) << 8;
}
static uint32_t rd_u32(reader *r) {
    uint32_t lo = rd_u16(r);
    return lo | (uint32_t)rd_u16(r) << 16;
}
static uint64_t rd_u64(reader *r) {
    uint64_t lo = rd_u32(r);
    return lo | (uint64_t)rd_u32(r) << 32;
}
/* An integer in lo..hi (hi − lo < 65536). */
static int rd_range(reader *r, int lo, int hi) {
    unsigned span = (unsigned)(hi - lo) + 1;
    return lo + (int)((span <= 256 ? rd_u8(r) : rd_u16(r)) % span);
}

static float f32_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static double f64_bits(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }

/* The hostile float32 values: extremes, denormals, NaN bit patterns (quiet, signalling, negative, payload),
 * the exp overflow edge (88.72), zeros of both signs. */
static float special_f32(unsigned k) {
    static const uint32_t nan_bits[] = {0x7fc00000u, 0x7f800001u, 0xffc00000u, 0xffffffffu, 0x7fa5a5a5u};
    static const float vals[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, 0.5f, 1e30f, -1e30f, 1e33f, -1e33f, 1e-40f,
                                 -1e-40f, 1e-45f, FLT_MIN, FLT_MAX, -FLT_MAX, 1e19f, 1e20f, -1e19f, 88.72f, 89.0f,
                                 -88.0f, 100.0f, 1e4f, 1e10f, 1e15f, 1e-20f, 3.0f, -3.0f, 1e-6f, 1e36f, 1e38f};
    const unsigned nv = sizeof vals / sizeof *vals, nn = sizeof nan_bits / sizeof *nan_bits;
    k %= nv + nn + 2;
    if (k < nv) return vals[k];
    if (k < nv + nn) return f32_bits(nan_bits[k - nv]);
    return k == nv + nn ? INFINITY : -INFINITY;
}

/* One float input: mostly small, often special, sometimes any magnitude or any bits. */
static float rd_f32(reader *r) {
    unsigned c = rd_u8(r);
    if (c < 96) return (float)(int8_t)rd_u8(r) / 16.0f;
    if (c < 176) return special_f32(c - 96);
    if (c < 232) return (float)((double)(int8_t)rd_u8(r) * pow(10.0, (int)rd_u8(r) % 90 - 50));
    return f32_bits(rd_u32(r));
}

/* One double for a knob, scale, std, tau or noise floor: the edges of every knob's range at these sizes. */
static double rd_f64(reader *r, int n, int d) {
    unsigned c = rd_u8(r);
    if (c < 64) return (double)c - 8.0;
    if (c < 80) return ((double)(c - 64) - 4.0) / 4.0 + (double)rd_u8(r) / 256.0; /* non-integers */
    if (c >= 248) return f64_bits(rd_u64(r));
    const double vals[] = {0.0, -0.0, n, n + 1.0, n - 1.0, 2.0 * n - 1, 2.0 * n, 2.0 * n + 1, d, 1.0 / sqrt(d), 63,
                           64, 65, 100, 101, 255, 256, 4096, 65535, 65536, 65537, 1e6, 1e6 + 1, 1e7, 2147483647.0,
                           2147483648.0, -2147483649.0, 2e9, 3e9, -3e9, 4294967295.0, 4294967296.0, 1e18, 1e300,
                           -1e300, 1e-300, 5e-324, DBL_MAX, -DBL_MAX, DBL_MIN, NAN, -NAN, INFINITY, -INFINITY,
                           0.49999999999999994, 1.5, 2.5, -0.5, -1.5, 1e-7, 1e30, 88.0, 1e-3};
    return vals[(c - 80) % (sizeof vals / sizeof *vals)];
}

/* Fill x[count]: per-entry values, one constant, or av_generate's data; then a few hostile overrides. */
static void rd_fill(reader *r, float *x, size_t count, int d) {
    unsigned mode = rd_u8(r) % 4;
    if (mode == 0) {
        for (size_t i = 0; i < count; i++) x[i] = rd_f32(r);
    } else if (mode == 1) {
        float c = rd_f32(r);
        for (size_t i = 0; i < count; i++) x[i] = c;
    } else {
        /* av_generate writes three n×d buffers; keep the first (the spread and seed come from the input) */
        int rows = (int)(count / (size_t)d);
        float *tmp = malloc(sizeof(float) * 2 * count + 1);
        double std = mode == 2 ? 1.0 : pow(10.0, (int)(rd_u8(r) % 13) - 6);
        int gen = (int)(rd_u8(r) % AV_GEN_COUNT);
        uint32_t seed = rd_u8(r);
        if (!tmp || rows < 1 || (size_t)rows * d != count || av_generate(x, tmp, tmp + count, rows, d, gen, std, seed) != AV_OK)
            for (size_t i = 0; i < count; i++) x[i] = 0.25f * (float)(i % 7) - 0.5f;
        free(tmp);
    }
    for (unsigned k = rd_u8(r) % 4; k > 0 && count; k--) {
        size_t i = rd_u16(r) % count;
        x[i] = special_f32(rd_u8(r));
    }
}

// ----------------------------------------------------------------------------------------------------
// the decoded input, printed when a promise breaks

static struct {
    av_params prm;
    int n, d, dv, hh_cols;
    const float *Q, *K, *V, *W;
    const char *stage;
} g;

static void print_floats(const char *name, const float *x, int rows, int cols) {
    if (!x) return;
    fprintf(stderr, "  %s (%d x %d) =", name, rows, cols);
    for (int i = 0; i < rows; i++) {
        fprintf(stderr, i ? ",\n    [" : " [[");
        for (int j = 0; j < cols; j++) fprintf(stderr, "%s%.9g", j ? ", " : "", x[(size_t)i * cols + j]);
        fprintf(stderr, "]");
    }
    fprintf(stderr, "]\n");
}

static void print_input(void) {
    const av_params *p = &g.prm;
    const char *vn = av_variant_name(p->variant);
    fprintf(stderr, "  variant %d (%s)", p->variant, vn ? vn : "?");
    for (int k = AV_KNOB_VARIANT + 1; k < AV_KNOB_COUNT; k++) /* every knob the registry has, by its key */
        fprintf(stderr, "%s %s %.17g", k % 8 ? "" : "\n ", av_knob_info(k)->key, av_params_get(p, k));
    fprintf(stderr, "\n  hedgehog_w %s cols %d; n %d d %d dv %d\n", p->hedgehog_w ? "set" : "NULL", p->hedgehog_cols,
            g.n, g.d, g.dv);
    if (g.n >= 1 && g.d >= 1 && (long)g.n * g.d <= 2048) { /* the values of small inputs (minimised findings) */
        print_floats("Q", g.Q, g.n, g.d);
        print_floats("K", g.K, g.n, g.d);
        if (g.dv >= 1 && g.dv <= 64) print_floats("V", g.V, g.n, g.dv);
        if (g.W && g.hh_cols >= 1) print_floats("W", g.W, g.d, g.hh_cols);
    }
}

static void broken(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "\nfuzz_api: PROMISE BROKEN in %s: ", g.stage);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    print_input();
    fflush(stderr);
    abort();
}

// ----------------------------------------------------------------------------------------------------
// the promises

/* A status in range; returns it. */
static int status(const char *fn, int st) {
    g.stage = fn;
    if (st < AV_STATUS_MIN || st > AV_STATUS_MAX) broken("status %d outside AV_STATUS_MIN..AV_STATUS_MAX", st);
    if (!av_status_string(st)) broken("av_status_string(%d) is NULL", st);
    return st;
}

/* The statuses that promise finite outputs. */
static int finite_status(int st) { return st == AV_OK || st == AV_WARN_ZERO_ROW || st == AV_WARN_NO_CONVERGENCE; }

/* AV_WARN_OVERFLOW says an exponential or a feature overflowed; softmax (max-subtracted), elu + 1, relu and
 * cosFormer (relu times a sine) have no exponential or feature that can leave float range from finite
 * inputs, so their overflows are products (AV_WARN_PRODUCT_OVERFLOW; issue 7, item 7). */
static void check_overflow_kind(int st, const av_params *prm) {
    int v = prm->variant;
    if (st == AV_WARN_OVERFLOW && (v == AV_SOFTMAX || v == AV_ELU || v == AV_RELU || v == AV_COSFORMER))
        broken("AV_WARN_OVERFLOW (an exponential or a feature) from %s, which has none that can overflow",
               av_variant_name(v));
}

static void check_f32(int st, const char *what, const float *x, size_t count) {
    if (!finite_status(st) || !x) return;
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) broken("status %d (%s) but %s[%zu] = %g", st, av_status_string(st), what, i, x[i]);
}
static void check_f64(int st, const char *what, const double *x, size_t count) {
    if (!finite_status(st) || !x) return;
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) broken("status %d (%s) but %s[%zu] = %g", st, av_status_string(st), what, i, x[i]);
}

static float *alloc_f32(size_t count) {
    float *x = malloc(sizeof(float) * (count ? count : 1));
    if (!x) abort();
    for (size_t i = 0; i < count; i++) x[i] = NAN; /* an entry left unwritten is caught as non-finite */
    return x;
}
static double *alloc_f64(size_t count) {
    double *x = malloc(sizeof(double) * (count ? count : 1));
    if (!x) abort();
    for (size_t i = 0; i < count; i++) x[i] = NAN;
    return x;
}

// ----------------------------------------------------------------------------------------------------
// workspaces

enum { WS_EXACT, WS_SHORT1, WS_SHORT64, WS_NULL, WS_MISALIGNED, WS_NULL_SIZED, WS_MODES };
#define BIG_WORK ((size_t)16 << 20) /* given when _work said 0: the call must still fail (one buffer, kept) */
static void *big_work(void) {
    static void *big;
    if (!big && !(big = malloc(BIG_WORK))) abort();
    return big;
}

typedef struct workspace { void *base, *ptr; size_t bytes; int mode; size_t need; } workspace;

/* A workspace for a function whose _work query returned `need`, in the mode the input asks for. */
static workspace ws_make(reader *r, size_t need) {
    workspace w = {NULL, NULL, 0, rd_u8(r) % WS_MODES, need};
    if (need == 0) {
        w.bytes = BIG_WORK;
        w.ptr = big_work();
        return w;
    }
    switch (w.mode) {
    case WS_EXACT: w.bytes = need; break;
    case WS_SHORT1: w.bytes = need - 1; break;
    case WS_SHORT64: w.bytes = need > 64 ? need - 64 : 0; break;
    case WS_NULL: return w;
    case WS_NULL_SIZED: w.bytes = need; return w; /* NULL, yet a size that would do */
    default: w.bytes = need; break;
    }
    /* the buffer ends exactly at bytes, so ASan sees a read or write past it; misaligned: 8 mod 64 */
    size_t off = w.mode == WS_MISALIGNED ? 8 : 0;
    w.base = malloc(w.bytes + off + 1);
    if (!w.base) abort();
    w.ptr = (unsigned char *)w.base + off;
    return w;
}

/* The workspace promises after the call; frees the buffer. `short_ok`: a shorter buffer may legitimately
 * suffice (av_attend given M). */
static void ws_check(workspace *w, const char *fn, int st, int short_ok) {
    status(fn, st);
    if (w->need == 0) {
        if (st >= 0) broken("the _work query returned 0, yet %s returned %d with a %zu-byte workspace", fn, st, w->bytes);
    } else if (w->mode == WS_EXACT || w->mode == WS_MISALIGNED) {
        if (st == AV_ERR_WORKSPACE || st == AV_ERR_NULL)
            broken("a workspace of the _work size (%zu bytes%s) refused with %d", w->need,
                   w->mode == WS_MISALIGNED ? ", 8 mod 64" : "", st);
    } else if (!short_ok && st >= 0) {
        broken("a workspace of %zu bytes (%s) accepted with status %d; _work says %zu", w->bytes,
               w->mode == WS_NULL || w->mode == WS_NULL_SIZED ? "NULL" : "short", st, w->need);
    }
    free(w->base);
    w->base = w->ptr = NULL;
}

// ----------------------------------------------------------------------------------------------------
// the calls

static void registry_queries(reader *r, const av_params *prm, int n, int d, int dv) {
    static int once;
    if (!once) {
        once = 1;
        const char *js = av_registry_json();
        if (!js || js[0] != '{') broken("av_registry_json is not a JSON object");
    }
    for (int k = -2; k <= AV_LIMIT_COUNT + 1; k++) {
        double v = av_limit(k);
        g.stage = "av_limit";
        if (!isfinite(v) || (k >= 0 && k < AV_LIMIT_COUNT && v < (k == AV_LIMIT_STATUS_MIN ? AV_STATUS_MIN : 0)))
            broken("av_limit(%d) = %g", k, v);
    }
    if (av_limit(AV_LIMIT_STATUS_MIN) != AV_STATUS_MIN || av_limit(AV_LIMIT_STATUS_MAX) != AV_STATUS_MAX)
        broken("av_limit's status range differs from AV_STATUS_MIN..AV_STATUS_MAX");
    int v = rd_range(r, -2, AV_VARIANT_COUNT + 1), k = rd_range(r, -2, AV_KNOB_COUNT + 1);
    const av_variant_desc *vd = av_variant_info(v);
    const av_knob_desc *kd = av_knob_info(k);
    if ((vd != NULL) != (v >= 0 && v < AV_VARIANT_COUNT)) broken("av_variant_info(%d)", v);
    if (vd && av_variant_from_name(vd->name) != v) broken("av_variant_from_name(av_variant_name(%d))", v);
    if (kd && !kd->key) broken("av_knob_info(%d) has no key", k);
    (void)av_variant_name(v);
    (void)av_generator_name(rd_range(r, -1, AV_GEN_COUNT));
    (void)av_readout_name(rd_range(r, -1, AV_R_COUNT));
    g.stage = "av_reason_string";
    if (!av_reason_string(rd_range(r, -2, 20))) broken("av_reason_string is NULL");
    g.stage = "av_status_string";
    if (!av_status_string(rd_range(r, -30, 30))) broken("av_status_string is NULL");
    (void)av_params_size();
    for (int q = 0; q < AV_KNOB_COUNT; q++) (void)av_params_get(prm, q);

    av_params out;
    int bad = -2;
    int st = status("av_params_check", av_params_check(&out, prm, n, d, &bad));
    if ((st == AV_ERR_KNOB || st == AV_ERR_NO_CAUSAL) && bad != -1 && (bad < 0 || bad >= AV_KNOB_COUNT))
        broken("av_params_check: bad_knob %d", bad);
    if (st == AV_OK && bad != -1) broken("av_params_check: AV_OK with bad_knob %d", bad);
    status("av_params_resolve", av_params_resolve(&out, prm, n, d));

    long rr = -7;
    status("av_feature_dim", av_feature_dim(&rr, prm, n, d));
    status("av_factor_rank", av_factor_rank(&rr, prm, n, d));
    double cost[4] = {NAN, NAN, NAN, NAN};
    st = status("av_cost", av_cost(cost, prm, n, d, dv));
    check_f64(st, "cost", cost, 4);
}

/* Masked entries (causal, j > i) are 0 whatever the status (attnviz.h, the conventions). */
static void check_masked(int st, const char *what, const float *M, int n, int causal) {
    if (st < 0 || !M || !causal) return;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (M[(size_t)i * n + j] != 0.0f) broken("causal, yet %s[%d][%d] = %g", what, i, j, M[(size_t)i * n + j]);
}

/* av_matrix; *M_out gets M (the caller frees it) or NULL when the call failed. */
static int run_matrix(reader *r, float **M_out, const av_params *prm, const float *Q, const float *K, int n, int d) {
    workspace w = ws_make(r, av_matrix_work(prm, n, d));
    float *M = alloc_f32((size_t)n * n);
    int st = av_matrix(M, Q, K, n, d, prm, w.ptr, w.bytes);
    ws_check(&w, "av_matrix", st, 0);
    check_overflow_kind(st, prm);
    check_f32(st, "M", M, (size_t)n * n);
    check_masked(st, "M", M, n, prm->causal == 1);
    if (st < 0) { free(M); M = NULL; }
    *M_out = M;
    return st;
}

static void run_attend(reader *r, const av_params *prm, const float *Q, const float *K, const float *V, int n,
                       int d, int dv) {
    int with_m = rd_u8(r) & 1;
    workspace w = ws_make(r, av_attend_work(prm, n, d, dv));
    float *O = alloc_f32((size_t)n * dv), *M = with_m ? alloc_f32((size_t)n * n) : NULL;
    int st = av_attend(O, M, Q, K, V, n, d, dv, prm, w.ptr, w.bytes);
    ws_check(&w, with_m ? "av_attend (with M)" : "av_attend (M NULL)", st, with_m);
    check_overflow_kind(st, prm);
    check_f32(st, "O", O, (size_t)n * dv);
    check_f32(st, "M", M, (size_t)n * n);
    check_masked(st, "M", M, n, prm->causal == 1);
    free(O);
    free(M);
}

static void run_scores(reader *r, const float *Q, const float *K, int n, int d) {
    double scale = rd_f64(r, n, d);
    int apply_exp = rd_range(r, -1, 2);
    float *S = alloc_f32((size_t)n * n);
    int st = status("av_scores", av_scores(S, Q, K, n, d, scale, apply_exp));
    check_f32(st, "S", S, (size_t)n * n);
    if (st == AV_OK && apply_exp == 1) /* one global max subtracted: every entry in [0, 1] */
        for (size_t i = 0; i < (size_t)n * n; i++)
            if (!(S[i] >= 0.0f && S[i] <= 1.0f)) broken("exp scores: S[%zu] = %g", i, S[i]);
    free(S);
}

/* av_features; *phi gets Φ_Q then Φ_K (2·n·r floats, the caller frees) and *r_out r, or NULL. */
static void run_features(reader *r, float **phi, long *r_out, const av_params *prm, const float *Q, const float *K,
                         int n, int d) {
    long rf = -1;
    int dst = status("av_feature_dim", av_feature_dim(&rf, prm, n, d));
    *phi = NULL;
    *r_out = 0;
    long ra = dst == AV_OK && rf >= 1 ? rf : 1; /* a refused dimension: a small buffer, the call must fail */
    if (dst == AV_OK && (rf < 1 || rf > AV_MAX_FEATURE_DIM)) broken("av_feature_dim: AV_OK with r = %ld", rf);
    workspace w = ws_make(r, av_features_work(prm, n, d));
    float *P = alloc_f32((size_t)2 * n * ra);
    int st = av_features(P, P + (size_t)n * ra, Q, K, n, d, prm, w.ptr, w.bytes);
    ws_check(&w, "av_features", st, 0);
    check_overflow_kind(st, prm);
    if (st >= 0 && dst != AV_OK) broken("av_features returned %d where av_feature_dim returned %d", st, dst);
    check_f32(st, "PhiQ/PhiK", P, (size_t)2 * n * ra);
    if (st < 0) { free(P); return; }
    *phi = P;
    *r_out = ra;
}

static void run_linear(reader *r, const av_params *prm, const float *Q, const float *K, const float *V, int n, int d,
                       int dv) {
    workspace w = ws_make(r, av_linear_work(prm, n, d, dv));
    float *O = alloc_f32((size_t)n * dv);
    int st = av_linear(O, Q, K, V, n, d, dv, prm, w.ptr, w.bytes);
    ws_check(&w, "av_linear", st, 0);
    check_overflow_kind(st, prm);
    check_f32(st, "O", O, (size_t)n * dv);
    free(O);
}

/* The causal scan, from av_features' Φ (when there is one) or from the input's own feature rows. */
static void run_recurrent(reader *r, const float *phi, long rphi, const av_params *prm, const float *V, int n,
                          int dv) {
    long rr = phi ? rphi : rd_range(r, 0, 9);
    if (rr < 0 || rr > 4096) return;
    size_t ra = rr > 0 ? (size_t)rr : 1;
    float *own = NULL;
    if (!phi) {
        own = alloc_f32(2 * (size_t)n * ra);
        rd_fill(r, own, 2 * (size_t)n * ra, (int)ra);
        phi = own;
    }
    double *S = alloc_f64(ra * dv), *z = alloc_f64(ra);
    for (size_t i = 0; i < ra * dv; i++) S[i] = 0.0;
    for (size_t i = 0; i < ra; i++) z[i] = 0.0;
    float *o = alloc_f32((size_t)dv);
    for (int t = 0; t < n; t++) {
        for (int c = 0; c < dv; c++) o[c] = NAN;
        int st = status("av_recurrent_step",
                        av_recurrent_step(o, S, z, phi + (size_t)t * ra, phi + (size_t)(n + t) * ra,
                                          V + (size_t)t * dv, rr, dv, n, prm));
        if (st < 0) break;
        if (st == AV_WARN_OVERFLOW) broken("AV_WARN_OVERFLOW, yet the features are given (a product overflowed)");
        check_f32(st, "o", o, (size_t)dv);
        check_f64(st, "S", S, ra * dv);
        check_f64(st, "z", z, ra);
        if (!finite_status(st)) break;
    }
    free(o);
    free(S);
    free(z);
    free(own);
}

static void check_sv(int st, const char *fn, const double *sv, double floor_, int n) {
    g.stage = fn;
    if (!finite_status(st)) return;
    check_f64(st, "sv", sv, (size_t)n);
    check_f64(st, "noise_floor", &floor_, 1);
    for (int i = 0; i < n; i++) {
        if (sv[i] < 0) broken("sv[%d] = %g is negative", i, sv[i]);
        if (i && sv[i] > sv[i - 1]) broken("sv not descending: sv[%d] = %.17g > sv[%d] = %.17g", i, sv[i], i - 1, sv[i - 1]);
    }
    if (floor_ < 0) broken("noise floor %g is negative", floor_);
}

/* av_factors and the factor route of the spectrum. */
static void run_factors(reader *r, const av_params *prm, const float *Q, const float *K, int n, int d) {
    long rk = -1;
    int kst = status("av_factor_rank", av_factor_rank(&rk, prm, n, d));
    if (kst == AV_OK && (rk < 1 || rk > AV_MAX_FEATURE_DIM)) broken("av_factor_rank: AV_OK with r = %ld", rk);
    long ra = kst == AV_OK ? rk : 1;
    workspace w = ws_make(r, av_factors_work(prm, n, d));
    float *L = alloc_f32((size_t)n * ra), *R = alloc_f32((size_t)n * ra);
    int st = av_factors(L, R, Q, K, n, d, prm, w.ptr, w.bytes);
    ws_check(&w, "av_factors", st, 0);
    check_overflow_kind(st, prm);
    if (st >= 0 && kst != AV_OK) broken("av_factors returned %d where av_factor_rank returned %d", st, kst);
    check_f32(st, "L", L, (size_t)n * ra);
    check_f32(st, "R", R, (size_t)n * ra);
    if (st >= 0) {
        workspace ws = ws_make(r, av_lowrank_svd_work(n, ra));
        double *sv = alloc_f64((size_t)n), nf = NAN;
        int sst = av_lowrank_singular_values(sv, &nf, L, R, n, ra, ws.ptr, ws.bytes);
        ws_check(&ws, "av_lowrank_singular_values", sst, 0);
        check_sv(sst, "av_lowrank_singular_values", sv, nf, n);
        for (long i = ra; finite_status(sst) && i < n; i++) /* exact zeros past r */
            if (sv[i] != 0.0) broken("r = %ld, yet sv[%ld] = %g", ra, i, sv[i]);
        free(sv);
        /* the heatmap's block means from the factors (b from 0, refused, to n) */
        int b = rd_range(r, 0, n);
        size_t c = b > 0 ? (size_t)((n + b - 1) / b) : 1;
        workspace wb = ws_make(r, av_lowrank_block_mean_work(n, ra, b));
        float *cells = alloc_f32(c * c);
        int bst = av_lowrank_block_mean(cells, L, R, n, ra, b, wb.ptr, wb.bytes);
        ws_check(&wb, "av_lowrank_block_mean", bst, 0);
        if (b < 1 && bst >= 0) broken("av_lowrank_block_mean: b = %d accepted (%d)", b, bst);
        free(cells);
    }
    free(L);
    free(R);
}

/* The factor route on factors straight from the input (any r, hostile values). */
static void run_lowrank_raw(reader *r, int n) {
    long rr = rd_range(r, -1, 48);
    size_t ra = rr > 0 ? (size_t)rr : 1;
    float *L = alloc_f32((size_t)n * ra), *R = alloc_f32((size_t)n * ra);
    rd_fill(r, L, (size_t)n * ra, (int)ra);
    rd_fill(r, R, (size_t)n * ra, (int)ra);
    workspace ws = ws_make(r, av_lowrank_svd_work(n, rr));
    double *sv = alloc_f64((size_t)n), nf = NAN;
    int st = av_lowrank_singular_values(sv, &nf, L, R, n, rr, ws.ptr, ws.bytes);
    ws_check(&ws, "av_lowrank_singular_values (raw factors)", st, 0);
    check_sv(st, "av_lowrank_singular_values (raw factors)", sv, nf, n);
    for (long i = rr; finite_status(st) && i < n; i++) /* exact zeros past r */
        if (sv[i] != 0.0) broken("r = %ld, yet sv[%ld] = %g", rr, i, sv[i]);
    free(sv);
    free(L);
    free(R);
}

/* Both spectrum routes on M; *sv_out gets the last successful spectrum (the caller frees). */
static void run_spectrum(reader *r, double **sv_out, double *nf_out, const float *M, int n) {
    *sv_out = NULL;
    for (int route = -1; route <= 2; route++) {
        if (route < 0 || route > 1) { /* unknown routes: refused */
            double sv1[1], nf;
            char work[64];
            status("av_singular_values (bad route)", av_singular_values(sv1, &nf, M, n, route, work, sizeof work));
            continue;
        }
        workspace w = ws_make(r, av_svd_work(n, route));
        double *sv = alloc_f64((size_t)n), nf = NAN;
        int st = av_singular_values(sv, &nf, M, n, route, w.ptr, w.bytes);
        const char *fn = route ? "av_singular_values (accurate)" : "av_singular_values (fast)";
        ws_check(&w, fn, st, 0);
        check_sv(st, fn, sv, nf, n);
        if (finite_status(st)) {
            free(*sv_out);
            *sv_out = sv;
            *nf_out = nf;
        } else {
            free(sv);
        }
    }
}

/* A defined readout outside the range its definition allows (docs/readouts.md); `own_sv`: the spectrum came
 * from the library's route (descending, ≥ 0), not from the input. */
static void check_readout_ranges(const double *v, const double *sv, int own_sv, int n) {
    const double slack = 1e-9, ln_n = log((double)n);
    const int ranks[] = {AV_R_RANK, AV_R_RANK_REL_1E3, AV_R_RANK_REL_1E2, AV_R_RANK_ENERGY_99};
#define OUTSIDE(k, lo, hi) (isfinite(v[k]) && !(v[k] >= (lo) && v[k] <= (hi)))
#define RANGE(k, lo, hi)                                                                                   \
    do {                                                                                                   \
        if (OUTSIDE(k, lo, hi)) broken("readout %s = %.17g outside [%g, %g]", av_readout_name(k), v[k], (double)(lo), (double)(hi)); \
    } while (0)
    RANGE(AV_R_SPARSITY_LT_001, 0, 1);
    RANGE(AV_R_SPARSITY_TAU, 0, 1);
    RANGE(AV_R_KEYS_FOR_90, 1, n);
    RANGE(AV_R_ROW_ENTROPY_MEAN, -slack, ln_n * (1 + slack) + slack);
    RANGE(AV_R_ROW_ENTROPY_UNIFORM, 0, ln_n * (1 + slack) + slack);
    RANGE(AV_R_ERROR_FRO_REL, 0, INFINITY);
    RANGE(AV_R_OUTPUT_ERROR_REL, 0, INFINITY);
    if (!own_sv) return;
    RANGE(AV_R_SIGMA1, sv[0], sv[0]);
    RANGE(AV_R_NOISE_FLOOR, 0, INFINITY);
    for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
        RANGE(ranks[i], 0, n);
        if (isfinite(v[ranks[i]]) && v[ranks[i]] != floor(v[ranks[i]])) broken("readout %s = %g is not a count", av_readout_name(ranks[i]), v[ranks[i]]);
    }
    RANGE(AV_R_EFFECTIVE_RANK, 1 - slack, n * (1 + slack));
    RANGE(AV_R_STABLE_RANK, 1 - slack, n * (1 + slack));
    if (isfinite(v[AV_R_RANK_REL_1E2]) && isfinite(v[AV_R_RANK_REL_1E3]) && v[AV_R_RANK_REL_1E2] > v[AV_R_RANK_REL_1E3])
        broken("rank_rel_1e-2 %g > rank_rel_1e-3 %g", v[AV_R_RANK_REL_1E2], v[AV_R_RANK_REL_1E3]);
#undef RANGE
#undef OUTSIDE
}

/* The heatmap cells of M (or of M − A): b from 0 (refused) to n, the mode from −1 to 2 (two refused). A
 * block with a non-finite entry must give a non-finite cell. */
static void run_downsample(reader *r, const float *M, const float *A, int n) {
    int b = rd_range(r, 0, n), mode = rd_range(r, -1, 2);
    size_t c = b > 0 ? (size_t)((n + b - 1) / b) : 1;
    workspace w = ws_make(r, av_downsample_work(n, b));
    float *cells = alloc_f32(c * c);
    int st = av_downsample(cells, M, A, n, b, mode, w.ptr, w.bytes);
    ws_check(&w, "av_downsample", st, 0);
    if ((b < 1 || mode < 0 || mode > 1) && st >= 0) broken("av_downsample: b = %d, mode %d accepted (%d)", b, mode, st);
    if (st >= 0)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                size_t k = (size_t)i * n + j;
                if ((!isfinite(M[k]) || (A && !isfinite(A[k]))) && isfinite(cells[(i / b) * c + j / b]))
                    broken("av_downsample: entry (%d, %d) is not finite, its cell %g is", i, j, cells[(i / b) * c + j / b]);
            }
    free(cells);
}

static void run_readouts(reader *r, const float *M, const double *sv, int own_sv, double nf, const float *A,
                         const float *V, int n, int dv, int causal) {
    int vdv = V ? dv : rd_range(r, -1, 2);
    double tau = rd_f64(r, n, 1);
    workspace w = ws_make(r, av_readouts_work(n, vdv));
    double vals[AV_R_COUNT];
    int reasons[AV_R_COUNT];
    for (int k = 0; k < AV_R_COUNT; k++) { vals[k] = 12345.0; reasons[k] = -99; }
    int st = av_readouts(vals, reasons, M, sv, nf, A, V, n, vdv, causal, tau, w.ptr, w.bytes);
    /* av_readouts_rows on the same workspace: the same status and readouts, bit for bit, and per-row
     * entropies in [0, ln m] (up to rounding) or NaN, which av_entropy_hist bins exactly as
     * av_row_entropy_hist does */
    double rv[AV_R_COUNT], *h = alloc_f64((size_t)n);
    int rr[AV_R_COUNT];
    int st2 = av_readouts_rows(rv, rr, h, M, sv, nf, A, V, n, vdv, causal, tau, w.ptr, w.bytes);
    if (st2 != st) broken("av_readouts_rows returned %d, av_readouts %d", st2, st);
    ws_check(&w, "av_readouts", st, 0);
    if (st < 0) { free(h); return; }
    for (int k = 0; k < AV_R_COUNT; k++)
        if (rr[k] != reasons[k] || memcmp(&rv[k], &vals[k], sizeof(double)))
            broken("av_readouts_rows: readout %s = %.17g (reason %d), av_readouts %.17g (%d)", av_readout_name(k),
                   rv[k], rr[k], vals[k], reasons[k]);
    for (int i = 0; i < n; i++) {
        double top = log(causal ? i + 1.0 : (double)n);
        if (!isnan(h[i]) && !(h[i] >= -1e-9 && h[i] <= top * (1 + 1e-9) + 1e-9))
            broken("row %d's entropy %.17g is outside [0, ln m = %.17g]", i, h[i], top);
    }
    /* the same through the reference's summary: the same readouts and entropies, bit for bit */
    size_t sb = av_reference_summary_bytes(n), wb2 = av_readouts_work(n, vdv);
    void *summary = malloc(sb), *w2 = malloc(wb2);
    double sv2[AV_R_COUNT], *h2 = alloc_f64((size_t)n);
    int sr[AV_R_COUNT];
    if (!summary || !w2) abort();
    int st0 = status("av_reference_summary", av_reference_summary(summary, sb, A, V, n, vdv, causal, w2, wb2));
    if (st0 != AV_OK) broken("av_reference_summary returned %d where av_readouts returned %d", st0, st);
    int st3 = av_readouts_summarised(sv2, sr, h2, M, sv, nf, A, V, summary, sb, n, vdv, causal, tau, w2, wb2);
    if (st3 != st) broken("av_readouts_summarised returned %d, av_readouts %d", st3, st);
    for (int k = 0; k < AV_R_COUNT; k++)
        if (sr[k] != reasons[k] || memcmp(&sv2[k], &vals[k], sizeof(double)))
            broken("av_readouts_summarised: readout %s = %.17g (reason %d), av_readouts %.17g (%d)", av_readout_name(k),
                   sv2[k], sr[k], vals[k], reasons[k]);
    if (memcmp(h, h2, sizeof(double) * (size_t)n)) broken("av_readouts_summarised: other row entropies");
    free(summary);
    free(w2);
    free(h2);
    int c1[7], c2[7], s1 = av_entropy_hist(c1, 7, h, n), s2 = av_row_entropy_hist(c2, 7, M, n, causal);
    if (s1 != s2 || memcmp(c1, c2, sizeof c1))
        broken("av_entropy_hist (%d) and av_row_entropy_hist (%d) disagree", s1, s2);
    free(h);
    for (int k = 0; k < AV_R_COUNT; k++) {
        const char *name = av_readout_name(k);
        if (isinf(vals[k])) broken("readout %s = %g (never ±Inf)", name, vals[k]);
        if (isnan(vals[k]) && reasons[k] == AV_REASON_NONE) broken("readout %s is NaN without a reason", name);
        if (isfinite(vals[k]) && reasons[k] != AV_REASON_NONE)
            broken("readout %s = %g is finite but carries reason %d", name, vals[k], reasons[k]);
        if (reasons[k] < 0) broken("readout %s: reason %d", name, reasons[k]);
    }
    check_readout_ranges(vals, sv, own_sv && sv, n);
}

static void run_error_curve_hist(reader *r, const double *sv, const float *M, int n, int causal) {
    if (sv) {
        double *e = alloc_f64((size_t)n + 1);
        int st = status("av_error_curve", av_error_curve(e, sv, n));
        check_f64(st, "e", e, (size_t)n + 1);
        if (st == AV_OK) {
            if (e[n] != 0.0 || (e[0] != 1.0 && e[0] != 0.0)) broken("e(0) = %.17g, e(n) = %.17g", e[0], e[n]);
            for (int i = 0; i < n; i++)
                if (e[i + 1] > e[i]) broken("e(%d) = %.17g > e(%d) = %.17g", i + 1, e[i + 1], i, e[i]);
        }
        free(e);
    }
    if (M) {
        int bins = rd_range(r, -1, 70);
        int *counts = malloc(sizeof(int) * (size_t)(bins > 0 ? bins : 1));
        if (!counts) abort();
        int st = status("av_row_entropy_hist", av_row_entropy_hist(counts, bins, M, n, causal));
        if (st >= 0) {
            long total = 0;
            for (int b = 0; b < bins; b++) {
                if (counts[b] < 0) broken("counts[%d] = %d", b, counts[b]);
                total += counts[b];
            }
            if (total > n) broken("the histogram counts %ld rows of %d", total, n);
        }
        free(counts);
    }
}

static void run_generate(reader *r, int n, int d) {
    int gen = rd_range(r, -1, AV_GEN_COUNT);
    double std = rd_f64(r, n, d);
    uint32_t seed = rd_u32(r);
    float *Q = alloc_f32((size_t)n * d), *K = alloc_f32((size_t)n * d), *V = alloc_f32((size_t)n * d);
    int st = status("av_generate", av_generate(Q, K, V, n, d, gen, std, seed));
    check_f32(st, "Q", Q, (size_t)n * d);
    check_f32(st, "K", K, (size_t)n * d);
    check_f32(st, "V", V, (size_t)n * d);
    if (st == AV_OK) { /* seeded: the same call gives the same bits */
        float *Q2 = alloc_f32((size_t)n * d), *K2 = alloc_f32((size_t)n * d), *V2 = alloc_f32((size_t)n * d);
        av_generate(Q2, K2, V2, n, d, gen, std, seed);
        size_t b = sizeof(float) * n * d;
        if (memcmp(Q, Q2, b) || memcmp(K, K2, b) || memcmp(V, V2, b)) broken("av_generate is not deterministic");
        free(Q2), free(K2), free(V2);
    }
    free(Q);
    free(K);
    free(V);
}

/* The portable stream and elementary functions: a uniform in [0, 1), finite normals, ln x finite for
 * finite x > 0, e^x finite and ≥ 0 below 709, cos x in [−1, 1] for finite x. And the name lookups on
 * any string. */
static void run_rng(reader *r) {
    g.stage = "av_rng";
    av_rng rng;
    av_rng_seed(&rng, rd_u64(r));
    for (int i = 0; i < 4; i++) {
        double u = av_rng_uniform(&rng), z = av_rng_normal(&rng);
        (void)av_rng_next(&rng);
        if (!(u >= 0.0 && u < 1.0)) broken("av_rng_uniform = %.17g", u);
        if (!isfinite(z)) broken("av_rng_normal = %g", z);
    }
    for (int i = 0; i < 3; i++) {
        double x = rd_f64(r, 1, 1);
        if (rd_u8(r) & 1) x *= pow(10.0, (int)(rd_u8(r) % 40) - 20);
        double l = av_portable_log(x), e = av_portable_exp(x), c = av_portable_cos(x);
        g.stage = "av_portable_log";
        if (isfinite(x) && x > 0 && !isfinite(l)) broken("ln(%.17g) = %g", x, l);
        g.stage = "av_portable_exp";
        if (x <= 709.0 && !(e >= 0.0 && isfinite(e))) broken("exp(%.17g) = %g", x, e);
        g.stage = "av_portable_cos";
        if (isfinite(x) && !(c >= -1.0 && c <= 1.0)) broken("cos(%.17g) = %.17g", x, c);
    }
    char name[16];
    size_t k = 0;
    for (unsigned len = rd_u8(r) % sizeof name; k < len; k++) name[k] = (char)rd_u8(r);
    name[k] = 0;
    int v = av_variant_from_name(name), gen = av_generator_from_name(name);
    g.stage = "av_variant_from_name";
    if (v != -1 && (v < 0 || v >= AV_VARIANT_COUNT || strcmp(av_variant_name(v), name))) broken("'%s' → %d", name, v);
    g.stage = "av_generator_from_name";
    if (gen != -1 && (gen < 0 || gen >= AV_GEN_COUNT || strcmp(av_generator_name(gen), name))) broken("'%s' → %d", name, gen);
    if (av_variant_from_name(NULL) != -1 || av_generator_from_name(NULL) != -1) broken("a NULL name found something");
}

/* Every required pointer NULL in turn, with the input's knobs: AV_ERR_NULL (or another error), never a crash. */
static void run_nulls(const av_params *prm) {
    enum { NN = 3, DD = 2, DV = 2 };
    static float Q[NN * DD] = {1, 2, 3, 4, 5, 6}, K[NN * DD] = {1, 0, 0, 1, 1, 1}, V[NN * DV] = {1, 2, 3, 4, 5, 6};
    static float M[NN * NN], O[NN * DV], P[2 * NN * 4096], o[DV];
    static double sv[NN], S[4096 * DV], z[4096], vals[AV_R_COUNT], e[NN + 1], cost[4];
    static int reasons[AV_R_COUNT], counts[4];
    static double work[1 << 16];
    const size_t wb = sizeof work;
    double nf;
    long r;
#define MUST_FAIL(call)                                                                                 \
    do {                                                                                                \
        if (status(#call, call) >= 0) broken("a NULL argument accepted");                            \
    } while (0)
    MUST_FAIL(av_matrix(NULL, Q, K, NN, DD, prm, work, wb));
    MUST_FAIL(av_matrix(M, NULL, K, NN, DD, prm, work, wb));
    MUST_FAIL(av_matrix(M, Q, NULL, NN, DD, prm, work, wb));
    MUST_FAIL(av_matrix(M, Q, K, NN, DD, NULL, work, wb));
    MUST_FAIL(av_attend(NULL, M, Q, K, V, NN, DD, DV, prm, work, wb));
    MUST_FAIL(av_attend(O, M, NULL, K, V, NN, DD, DV, prm, work, wb));
    MUST_FAIL(av_attend(O, M, Q, NULL, V, NN, DD, DV, prm, work, wb));
    MUST_FAIL(av_attend(O, M, Q, K, NULL, NN, DD, DV, prm, work, wb));
    MUST_FAIL(av_attend(O, M, Q, K, V, NN, DD, DV, NULL, work, wb));
    MUST_FAIL(av_scores(NULL, Q, K, NN, DD, 0, 0));
    MUST_FAIL(av_scores(M, NULL, K, NN, DD, 0, 0));
    MUST_FAIL(av_scores(M, Q, NULL, NN, DD, 0, 1));
    MUST_FAIL(av_features(NULL, P, Q, K, NN, DD, prm, work, wb));
    MUST_FAIL(av_features(P, NULL, Q, K, NN, DD, prm, work, wb));
    MUST_FAIL(av_features(P, P + NN * 4096, NULL, K, NN, DD, prm, work, wb));
    MUST_FAIL(av_features(P, P + NN * 4096, Q, NULL, NN, DD, prm, work, wb));
    MUST_FAIL(av_features(P, P + NN * 4096, Q, K, NN, DD, NULL, work, wb));
    MUST_FAIL(av_linear(NULL, Q, K, V, NN, DD, DV, prm, work, wb));
    MUST_FAIL(av_linear(O, NULL, K, V, NN, DD, DV, prm, work, wb));
    MUST_FAIL(av_linear(O, Q, NULL, V, NN, DD, DV, prm, work, wb));
    MUST_FAIL(av_linear(O, Q, K, NULL, NN, DD, DV, prm, work, wb));
    MUST_FAIL(av_linear(O, Q, K, V, NN, DD, DV, NULL, work, wb));
    MUST_FAIL(av_recurrent_step(NULL, S, z, P, P, V, 2, DV, NN, prm));
    MUST_FAIL(av_recurrent_step(o, NULL, z, P, P, V, 2, DV, NN, prm));
    MUST_FAIL(av_recurrent_step(o, S, NULL, P, P, V, 2, DV, NN, prm));
    MUST_FAIL(av_recurrent_step(o, S, z, NULL, P, V, 2, DV, NN, prm));
    MUST_FAIL(av_recurrent_step(o, S, z, P, NULL, V, 2, DV, NN, prm));
    MUST_FAIL(av_recurrent_step(o, S, z, P, P, NULL, 2, DV, NN, prm));
    MUST_FAIL(av_recurrent_step(o, S, z, P, P, V, 2, DV, NN, NULL));
    MUST_FAIL(av_factors(NULL, P, Q, K, NN, DD, prm, work, wb));
    MUST_FAIL(av_factors(P, NULL, Q, K, NN, DD, prm, work, wb));
    MUST_FAIL(av_factors(P, P + NN * 4096, NULL, K, NN, DD, prm, work, wb));
    MUST_FAIL(av_factors(P, P + NN * 4096, Q, NULL, NN, DD, prm, work, wb));
    MUST_FAIL(av_factors(P, P + NN * 4096, Q, K, NN, DD, NULL, work, wb));
    MUST_FAIL(av_feature_dim(NULL, prm, NN, DD));
    MUST_FAIL(av_feature_dim(&r, NULL, NN, DD));
    MUST_FAIL(av_factor_rank(NULL, prm, NN, DD));
    MUST_FAIL(av_factor_rank(&r, NULL, NN, DD));
    MUST_FAIL(av_cost(NULL, prm, NN, DD, DV));
    MUST_FAIL(av_cost(cost, NULL, NN, DD, DV));
    MUST_FAIL(av_params_check(NULL, prm, NN, DD, NULL));
    MUST_FAIL(av_params_check((av_params *)(void *)work, NULL, NN, DD, NULL));
    MUST_FAIL(av_params_set(NULL, AV_KNOB_P, 1));
    MUST_FAIL(av_params_set_hedgehog(NULL, NULL, 0));
    if (av_matrix_work(NULL, NN, DD) || av_attend_work(NULL, NN, DD, DV) || av_features_work(NULL, NN, DD) ||
        av_linear_work(NULL, NN, DD, DV) || av_factors_work(NULL, NN, DD))
        broken("a _work query of NULL knobs is not 0");
    if (!isnan(av_params_get(NULL, AV_KNOB_P))) broken("av_params_get(NULL) is not NaN");
    MUST_FAIL(av_singular_values(NULL, &nf, M, NN, 0, work, wb));
    MUST_FAIL(av_singular_values(sv, NULL, M, NN, 1, work, wb));
    MUST_FAIL(av_singular_values(sv, &nf, NULL, NN, 0, work, wb));
    MUST_FAIL(av_singular_values(sv, &nf, M, NN, 1, NULL, wb));
    MUST_FAIL(av_lowrank_singular_values(NULL, &nf, P, P, NN, 2, work, wb));
    MUST_FAIL(av_lowrank_singular_values(sv, NULL, P, P, NN, 2, work, wb));
    MUST_FAIL(av_lowrank_singular_values(sv, &nf, NULL, P, NN, 2, work, wb));
    MUST_FAIL(av_lowrank_singular_values(sv, &nf, P, NULL, NN, 2, work, wb));
    MUST_FAIL(av_lowrank_singular_values(sv, &nf, P, P, NN, 2, NULL, wb));
    MUST_FAIL(av_readouts(NULL, reasons, M, sv, 0, M, V, NN, DV, 0, 0, work, wb));
    MUST_FAIL(av_readouts(vals, NULL, M, sv, 0, M, V, NN, DV, 0, 0, work, wb));
    MUST_FAIL(av_readouts(vals, reasons, NULL, sv, 0, M, V, NN, DV, 0, 0, work, wb));
    MUST_FAIL(av_readouts(vals, reasons, M, sv, 0, M, V, NN, DV, 0, 0, NULL, wb));
    MUST_FAIL(av_error_curve(NULL, sv, NN));
    MUST_FAIL(av_error_curve(e, NULL, NN));
    MUST_FAIL(av_row_entropy_hist(NULL, 4, M, NN, 0));
    MUST_FAIL(av_row_entropy_hist(counts, 4, NULL, NN, 0));
    MUST_FAIL(av_readouts_rows(NULL, reasons, sv, M, sv, 0, M, V, NN, DV, 0, 0, work, wb));
    MUST_FAIL(av_readouts_rows(vals, reasons, sv, NULL, sv, 0, M, V, NN, DV, 0, 0, work, wb));
    MUST_FAIL(av_downsample(NULL, M, M, NN, 1, AV_DS_MEAN, work, wb));
    MUST_FAIL(av_downsample(P, NULL, M, NN, 1, AV_DS_MEAN, work, wb));
    MUST_FAIL(av_downsample(P, M, M, NN, 1, AV_DS_MEAN, NULL, wb));
    MUST_FAIL(av_reference_summary(NULL, wb, M, V, NN, DV, 0, work, wb));
    MUST_FAIL(av_reference_summary(work, wb, M, V, NN, DV, 0, NULL, wb));
    MUST_FAIL(av_readouts_summarised(vals, reasons, NULL, M, sv, 0, M, V, NULL, wb, NN, DV, 0, 0, work, wb));
    MUST_FAIL(av_readouts_summarised(vals, reasons, NULL, NULL, sv, 0, M, V, work, wb, NN, DV, 0, 0, work, wb));
    MUST_FAIL(av_entropy_hist(NULL, 4, sv, NN));
    MUST_FAIL(av_entropy_hist(counts, 4, NULL, NN));
    MUST_FAIL(av_generate(NULL, P, P, NN, DD, 0, 1, 0));
    MUST_FAIL(av_generate(P, NULL, P, NN, DD, 0, 1, 0));
    MUST_FAIL(av_generate(P, P, NULL, NN, DD, 0, 1, 0));
#undef MUST_FAIL
}

// ----------------------------------------------------------------------------------------------------
// one input

enum {
    OP_REGISTRY = 1, OP_MATRIX = 2, OP_ATTEND = 4, OP_SCORES = 8, OP_FEATURES = 16, OP_LINEAR = 32,
    OP_RECURRENT = 64, OP_FACTORS = 128, OP_SPECTRUM = 256, OP_READOUTS = 512, OP_CURVE = 1024,
    OP_GENERATE = 2048, OP_RNG = 4096, OP_LOWRANK_RAW = 8192, OP_RAW_M = 16384, OP_MAXIT = 32768,
    OP_DEFAULT = 0x1fff /* every call; the raw factors and M, and the capped solver, when the input asks */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader rd = {data, size}, *r = &rd;
    memset(&g, 0, sizeof g);
    unsigned ops = rd_u16(r) ^ OP_DEFAULT; /* an empty input runs OP_DEFAULT */

    /* sizes: mostly valid and small; rarely larger (n to 100, d to 300: the kernels' blocking over d, the
     * spectrum's longer sweeps); sometimes out of range (every call must refuse them) */
    unsigned sz = rd_u8(r);
    int n = 1 + (int)(rd_u8(r) % 40), d = 1 + (int)(rd_u8(r) % 40), dv = 1 + (int)(rd_u8(r) % 8);
    if (sz >= 244 && sz < 250) n += 60 * (sz & 1), d += 260 * (sz >> 1 & 1);
    if (sz >= 250) {
        const int odd[] = {0, -1, AV_MAX_N + 1, INT32_MIN, 0, -3};
        if (sz & 1) n = odd[sz - 250]; else d = odd[sz - 250];
    }
    g.n = n, g.d = d, g.dv = dv;

    /* variant and knobs */
    av_params prm;
    int variant = (int)(rd_u8(r) % AV_VARIANT_COUNT);
    status("av_params_default", av_params_default(&prm, variant));
    status("av_params_default (bad variant)", av_params_default(NULL, variant));
    av_params scratch;
    status("av_params_default (bad variant)", av_params_default(&scratch, rd_range(r, -2, AV_VARIANT_COUNT + 2)));
    int causal = rd_u8(r) & 1;
    status("av_params_set", av_params_set(&prm, AV_KNOB_CAUSAL, causal));
    for (unsigned k = rd_u8(r) % 8; k > 0; k--) {
        int knob = rd_range(r, -1, AV_KNOB_COUNT);
        double value = rd_f64(r, n, d);
        status("av_params_set", av_params_set(&prm, knob, value));
    }
    unsigned poke = rd_u8(r); /* raw writes into the struct, as a careless caller would */
    if (poke == 0xf1) prm.variant = AV_VARIANT_COUNT;
    if (poke == 0xf2) prm.variant = -1;
    if (poke == 0xf3) prm.causal = 2;
    if (poke == 0xf4) prm.scale = NAN;
    if (poke == 0xf5) prm.iters = -2;
    if (poke == 0xf6) prm.hedgehog_cols = -1;

    /* a time budget: halve n and d (down to 1) while one pass of the variant exceeds about 5e6: av_cost's
     * quadratic and linear multiply-adds, r·d for drawing random features and r·n feature exponentials at
     * 50 each (under the sanitizers' comparison tracing an exp costs that much; every input makes about ten
     * passes). Performer with m = 65536 at n = 14, d = 1 took 11 s under the old 2e7 without the
     * exponentials (issue 27, item 8); now it takes n = 1 and well under a second. The knobs may then be out
     * of range for the smaller n, which the calls must refuse. */
    for (double c[4]; av_cost(c, &prm, n, d, dv) == AV_OK && (n > 1 || d > 1);) {
        long rf = 0;
        double work = c[0] + (c[2] > 0 ? c[2] : 0) +
                      (av_feature_dim(&rf, &prm, n, d) == AV_OK ? (double)rf * (20.0 * d + 50.0 * n) : 0);
        if (work <= 5e6) break;
        n = (n + 1) / 2, d = (d + 1) / 2;
        g.n = n, g.d = d;
    }
    int sane = n >= 1 && d >= 1 && n <= 100 && d <= 300; /* else: the sizes are invalid, the buffers 1 float */
    size_t nd = sane ? (size_t)n * d : 1, ndv = sane ? (size_t)n * dv : 1;
    float *W = NULL;
    if (rd_u8(r) & 1) { /* Hedgehog weights W (d×cols), for any variant (the others ignore them) */
        int cols = rd_range(r, -1, 2 * (sane ? d : 1) + 1);
        size_t wc = (size_t)(cols > 0 ? cols : 1) * (sane ? (size_t)d : 1);
        W = alloc_f32(wc);
        rd_fill(r, W, wc, cols > 0 ? cols : 1);
        status("av_params_set_hedgehog", av_params_set_hedgehog(&prm, rd_u8(r) == 7 ? NULL : W, cols));
        g.W = W, g.hh_cols = cols;
    }
    g.prm = prm;

    float *Q = alloc_f32(nd), *K = alloc_f32(nd), *V = alloc_f32(ndv);
    rd_fill(r, Q, nd, sane ? d : 1);
    rd_fill(r, K, nd, sane ? d : 1);
    rd_fill(r, V, ndv, dv);
    g.Q = Q, g.K = K, g.V = V;

    if (ops & OP_REGISTRY) {
        registry_queries(r, &prm, n, d, dv);
        run_nulls(&prm);
    }
    if (!sane) { /* invalid sizes: the buffers are 1 float; each call must refuse */
        float M1[1], O1[1];
        double D1[1], nf1, wk[64];
        int I1[1];
        const size_t wb = sizeof wk;
#define MUST_REFUSE(call)                                                                                \
    do {                                                                                                 \
        if (status(#call, call) >= 0) broken("accepted n = %d, d = %d", n, d);                          \
    } while (0)
        MUST_REFUSE(av_matrix(M1, Q, K, n, d, &prm, wk, wb));
        MUST_REFUSE(av_attend(O1, M1, Q, K, V, n, d, dv, &prm, wk, wb));
        MUST_REFUSE(av_scores(M1, Q, K, n, d, 0, 0));
        MUST_REFUSE(av_features(M1, O1, Q, K, n, d, &prm, wk, wb));
        MUST_REFUSE(av_linear(O1, Q, K, V, n, d, dv, &prm, wk, wb));
        MUST_REFUSE(av_factors(M1, O1, Q, K, n, d, &prm, wk, wb));
        MUST_REFUSE(av_generate(M1, O1, M1, n, d, 0, 1.0, 0));
        if (n < 1 || n > AV_MAX_N) {
            MUST_REFUSE(av_singular_values(D1, &nf1, M1, n, AV_SVD_FAST, wk, wb));
            MUST_REFUSE(av_singular_values(D1, &nf1, M1, n, AV_SVD_ACCURATE, wk, wb));
            MUST_REFUSE(av_lowrank_singular_values(D1, &nf1, M1, O1, n, 1, wk, wb));
            MUST_REFUSE(av_readouts(D1, I1, M1, NULL, 0, NULL, NULL, n, 0, 0, 0, wk, wb));
            MUST_REFUSE(av_error_curve(D1, D1, n));
            MUST_REFUSE(av_row_entropy_hist(I1, 1, M1, n, 0));
            MUST_REFUSE(av_entropy_hist(I1, 1, D1, n));
        }
#undef MUST_REFUSE
        free(Q), free(K), free(V), free(W);
        return 0;
    }

    float *M = NULL, *A = NULL, *phi = NULL;
    double *sv = NULL, nf = 0;
    long rphi = 0;
    if (ops & OP_MATRIX) run_matrix(r, &M, &prm, Q, K, n, d);
    if (ops & OP_ATTEND) run_attend(r, &prm, Q, K, V, n, d, dv);
    if (ops & OP_SCORES) run_scores(r, Q, K, n, d);
    if (ops & OP_FEATURES) run_features(r, &phi, &rphi, &prm, Q, K, n, d);
    if (ops & OP_LINEAR) run_linear(r, &prm, Q, K, V, n, d, dv);
    if (ops & OP_RECURRENT) run_recurrent(r, phi, rphi, &prm, V, n, dv);
    if (ops & OP_FACTORS) run_factors(r, &prm, Q, K, n, d);
    if (ops & OP_LOWRANK_RAW) run_lowrank_raw(r, n);
    if (ops & OP_RAW_M) { /* M straight from the input (negative entries, NaN, huge values) */
        free(M);
        M = alloc_f32((size_t)n * n);
        rd_fill(r, M, (size_t)n * n, n);
    }
    if (ops & OP_MAXIT) avi_spectrum_test_maxit(1 + (int)(rd_u8(r) % 8)); /* a few iterations in all */
    if (M && (ops & OP_SPECTRUM)) run_spectrum(r, &sv, &nf, M, n);
    if (M && (ops & OP_FACTORS) && (ops & OP_MAXIT)) run_factors(r, &prm, Q, K, n, d);
    if (ops & OP_MAXIT) avi_spectrum_test_maxit(0);
    if (M && (ops & OP_READOUTS)) {
        /* the softmax reference on the same Q, K and mask (it may hold Inf: a reason, not a crash) */
        av_params ref;
        av_params_default(&ref, AV_SOFTMAX);
        ref.causal = prm.causal == 1;
        ref.scale = isfinite(prm.scale) && prm.scale >= 0 ? prm.scale : 0;
        av_params saved = g.prm;
        g.prm = ref;
        run_matrix(r, &A, &ref, Q, K, n, d);
        g.prm = saved;
        unsigned pick = rd_u8(r);
        double *raw_sv = NULL;
        if (pick & 1) { /* hostile singular values and noise floor */
            raw_sv = alloc_f64((size_t)n);
            for (int i = 0; i < n; i++) raw_sv[i] = rd_f64(r, n, d);
            nf = rd_f64(r, n, d);
        }
        run_readouts(r, M, raw_sv ? raw_sv : sv, !raw_sv, nf, (pick & 2) ? NULL : A, (pick & 4) ? NULL : V, n, dv,
                     prm.causal == 1);
        run_downsample(r, M, (pick & 2) ? NULL : A, n);
        if (raw_sv && (ops & OP_CURVE)) run_error_curve_hist(r, raw_sv, NULL, n, 0);
        free(raw_sv);
    }
    if (ops & OP_CURVE) run_error_curve_hist(r, sv, M, n, prm.causal == 1);
    if (ops & OP_GENERATE) run_generate(r, n, d);
    if (ops & OP_RNG) run_rng(r);

    free(M), free(A), free(phi), free(sv);
    free(Q), free(K), free(V), free(W);
    return 0;
}
