/* gates.c: seeded gate generators for the gated families (docs/gated.md, "Generated gates"): log-gates g ≤ 0
 * (n×channels) and β (n) from a few knobs, the page's and the tests' inputs.
 *
 * As generate.c: every draw from the portable stream, and no libm transcendental (av_portable_log, _exp,
 * _cos), so with -ffp-contract=off the same arguments give the same bits natively and in WebAssembly. Each
 * generator reads its own stream (avi_stream), so a gate seed s shares no draw with the inputs' seed s.
 * Nothing is allocated: the projections accumulate K·W into the output itself, one entry of W at a time.
 */
#include <float.h>
#include <math.h>

#include "internal.h"

#define RESET_LOG_GATE (-30.0)  /* docs/gated.md: exp(−30) = 9.4e-14, the state is gone */
#define GLA_NORMALIZER 16.0     /* fla's GLA layer: gate_logit_normalizer = 16 */
#define TWO_PI 6.28318530717958647692

static const char *const NAMES[AV_GATES_COUNT] = {"constant", "uniform", "resets", "slow", "projection", "mamba2"};

const char *av_gate_generator_name(int kind) { return kind >= 0 && kind < AV_GATES_COUNT ? NAMES[kind] : NULL; }

int av_gate_generator_from_name(const char *name) {
    if (!name) return -1;
    for (int k = 0; k < AV_GATES_COUNT; k++) {
        const char *a = name, *b = NAMES[k];
        while (*a && *a == *b) a++, b++;
        if (*a == 0 && *b == 0) return k;
    }
    return -1;
}

// ----------------------------------------------------------------------------------------------------
// helpers

static int finite(const float *x, size_t count) {
    for (size_t e = 0; e < count; e++)
        if (!isfinite(x[e])) return 0;
    return 1;
}
static int sizes_bad(int n, int channels) { return n < 1 || n > AV_MAX_N || channels < 1 || channels > AV_MAX_D; }
/* α (or a range end) in (0, 1]; NaN fails every comparison, so it is refused too. */
static int alpha_ok(double a) { return a > 0 && a <= 1; }
static int range_ok(double lo, double hi, double top) { return lo > 0 && lo <= hi && hi <= top; }

/* ln α as a log-gate: never above 0 (ln 1 is 0; a float cannot round a negative to a positive). */
static float log_gate(double alpha) {
    double g = av_portable_log(alpha);
    return g < 0 ? (float)g : 0.0f;
}

/* log σ(x) = min(x, 0) − ln(1 + e^{−|x|}), < 0 for every finite x, without overflow. */
static double log_sigmoid(double x) {
    double ax = x < 0 ? -x : x;
    return (x < 0 ? x : 0.0) - av_portable_log(1.0 + av_portable_exp(-ax));
}
static double sigmoid(double x) {
    return x >= 0 ? 1.0 / (1.0 + av_portable_exp(-x)) : av_portable_exp(x) / (1.0 + av_portable_exp(x));
}
static double softplus(double x) { return x > 30 ? x : av_portable_log(1.0 + av_portable_exp(x)); }

/* out[t·cols + c] = Σ_j K[t, j]·W[j, c], W (d×cols) ~ N(0, 1/d) drawn row-major from `stream`, accumulated in
 * float in j order (the draw order): deterministic everywhere. W is never held whole: each row is drawn in pieces
 * of PIECE channels, each added along every token's row (contiguous: 0.2 s in WASM at n = 4096, d = channels = 256,
 * against 2.3 s a channel at a time; the same sums in the same order, so the same bits). */
#define PIECE 256
static void project(float *out, const float *K, int n, int d, int cols, uint64_t stream) {
    av_rng rng;
    av_rng_seed(&rng, stream);
    double sd = 1.0 / sqrt((double)d);
    float w[PIECE];
    for (size_t e = 0; e < (size_t)n * cols; e++) out[e] = 0.0f;
    for (int j = 0; j < d; j++)
        for (int c0 = 0; c0 < cols; c0 += PIECE) {
            int m = cols - c0 < PIECE ? cols - c0 : PIECE;
            for (int c = 0; c < m; c++) w[c] = (float)(sd * av_rng_normal(&rng));
            for (int t = 0; t < n; t++) {
                float x = K[(size_t)t * d + j], *o = out + (size_t)t * cols + c0;
                for (int c = 0; c < m; c++) o[c] += x * w[c];
            }
        }
}

// ----------------------------------------------------------------------------------------------------
// log-gates

int av_gates_constant(float *g, int n, int channels, double alpha) {
    if (!g) return AV_ERR_NULL;
    if (sizes_bad(n, channels)) return AV_ERR_SIZE;
    if (!alpha_ok(alpha)) return AV_ERR_KNOB;
    float v = log_gate(alpha);
    for (size_t e = 0; e < (size_t)n * channels; e++) g[e] = v;
    return AV_OK;
}

int av_gates_uniform(float *g, int n, int channels, double lo, double hi, uint32_t seed) {
    if (!g) return AV_ERR_NULL;
    if (sizes_bad(n, channels)) return AV_ERR_SIZE;
    if (!range_ok(lo, hi, 1.0)) return AV_ERR_KNOB;
    av_rng rng;
    av_rng_seed(&rng, avi_stream(AVI_STREAM_GATES, seed));
    for (size_t e = 0; e < (size_t)n * channels; e++) g[e] = log_gate(lo + (hi - lo) * av_rng_uniform(&rng));
    return AV_OK;
}

int av_gates_resets(float *g, int n, int channels, double alpha, int period, const int *at, int count, double rate,
                    uint32_t seed) {
    if (!g || (count > 0 && !at)) return AV_ERR_NULL;
    if (sizes_bad(n, channels) || count < 0) return AV_ERR_SIZE;
    if (!alpha_ok(alpha) || period < 0 || !(rate >= 0 && rate <= 1)) return AV_ERR_KNOB;
    for (int i = 0; i < count; i++)
        if (at[i] < 0 || at[i] >= n) return AV_ERR_KNOB;
    av_gates_constant(g, n, channels, alpha);
    av_rng rng;
    av_rng_seed(&rng, avi_stream(AVI_STREAM_GATES, seed));
    for (int t = 1; t < n; t++) { /* one draw per token t ≥ 1 whatever the rate: the positions nest as it grows */
        int reset = (period > 0 && t % period == 0) | (av_rng_uniform(&rng) < rate);
        if (reset)
            for (int c = 0; c < channels; c++) g[(size_t)t * channels + c] = (float)RESET_LOG_GATE;
    }
    for (int i = 0; i < count; i++)
        for (int c = 0; c < channels; c++) g[(size_t)at[i] * channels + c] = (float)RESET_LOG_GATE;
    return AV_OK;
}

int av_gates_slow(float *g, int n, int channels, double lo, double hi, double wavelength, uint32_t seed) {
    if (!g) return AV_ERR_NULL;
    if (sizes_bad(n, channels)) return AV_ERR_SIZE;
    if (!range_ok(lo, hi, 1.0) || !(wavelength >= 2 && wavelength <= 1e9)) return AV_ERR_KNOB;
    av_rng rng;
    av_rng_seed(&rng, avi_stream(AVI_STREAM_GATES, seed));
    for (int c = 0; c < channels; c++) {
        double phase = av_rng_uniform(&rng); /* in turns */
        for (int t = 0; t < n; t++) {
            double turns = t / wavelength + phase;
            turns -= floor(turns); /* the cosine's argument kept in [0, 2π): exact, and accurate at any t */
            double a = lo + (hi - lo) * 0.5 * (1.0 + av_portable_cos(TWO_PI * turns));
            g[(size_t)t * channels + c] = log_gate(a < lo ? lo : a > hi ? hi : a);
        }
    }
    return AV_OK;
}

int av_gates_projection(float *g, const float *K, int n, int d, int channels, uint32_t seed) {
    if (!g || !K) return AV_ERR_NULL;
    if (sizes_bad(n, channels) || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    if (!finite(K, (size_t)n * d)) return AV_ERR_NONFINITE;
    project(g, K, n, d, channels, avi_stream(AVI_STREAM_GATE_W, seed));
    for (size_t e = 0; e < (size_t)n * channels; e++) {
        double x = g[e];
        g[e] = isfinite(x) ? (float)(log_sigmoid(x) / GLA_NORMALIZER) : x > 0 ? 0.0f : (float)RESET_LOG_GATE;
        if (g[e] > 0) g[e] = 0.0f;
    }
    return AV_OK;
}

int av_gates_mamba2(float *g, float *delta, float *K, int n, int d, double A, double dt, uint32_t seed) {
    if (!g || !K) return AV_ERR_NULL;
    if (sizes_bad(n, 1) || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    if (!(A >= -1e3 && A < 0) || !(dt > 0 && dt <= 10)) return AV_ERR_KNOB;
    if (!finite(K, (size_t)n * d)) return AV_ERR_NONFINITE;
    /* dt_bias = softplus⁻¹(dt) = ln(e^dt − 1), so that Δ = dt where K·w = 0 (Mamba's initialisation of Δ) */
    double bias = dt > 30 ? dt : av_portable_log(av_portable_exp(dt) - 1.0);
    project(g, K, n, d, 1, avi_stream(AVI_STREAM_GATE_W, seed));
    for (int t = 0; t < n; t++) {
        double x = g[t];
        double D = isfinite(x) ? softplus(x + bias) : x > 0 ? 1e30 : 0.0;
        if (!(D > 0)) D = FLT_MIN; /* Δ > 0: softplus underflows only for x far below 0 */
        float Df = (float)D;
        if (delta) delta[t] = Df;
        double lg = A * (double)Df;
        g[t] = lg < RESET_LOG_GATE ? (float)RESET_LOG_GATE : (float)lg;
        for (int j = 0; j < d; j++) K[(size_t)t * d + j] *= Df;
    }
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// β

int av_betas_constant(float *beta, int n, double b) {
    if (!beta) return AV_ERR_NULL;
    if (sizes_bad(n, 1)) return AV_ERR_SIZE;
    if (!(b > 0 && b <= 2)) return AV_ERR_KNOB;
    float v = (float)b > 0 ? (float)b : FLT_MIN; /* a β below float's range is not 0 */
    for (int t = 0; t < n; t++) beta[t] = v;
    return AV_OK;
}

int av_betas_uniform(float *beta, int n, double lo, double hi, uint32_t seed) {
    if (!beta) return AV_ERR_NULL;
    if (sizes_bad(n, 1)) return AV_ERR_SIZE;
    if (!range_ok(lo, hi, 2.0)) return AV_ERR_KNOB;
    av_rng rng;
    av_rng_seed(&rng, avi_stream(AVI_STREAM_BETAS, seed));
    for (int t = 0; t < n; t++) {
        float b = (float)(lo + (hi - lo) * av_rng_uniform(&rng));
        beta[t] = b > 0 ? b : FLT_MIN;
    }
    return AV_OK;
}

int av_betas_projection(float *beta, const float *K, int n, int d, double hi, uint32_t seed) {
    if (!beta || !K) return AV_ERR_NULL;
    if (sizes_bad(n, 1) || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    if (!(hi > 0 && hi <= 2)) return AV_ERR_KNOB;
    if (!finite(K, (size_t)n * d)) return AV_ERR_NONFINITE;
    project(beta, K, n, d, 1, avi_stream(AVI_STREAM_BETA_W, seed));
    for (int t = 0; t < n; t++) {
        double x = beta[t];
        float b = (float)(hi * (isfinite(x) ? sigmoid(x) : x > 0 ? 1.0 : 0.0));
        beta[t] = b > 0 ? (b <= hi ? b : (float)hi) : FLT_MIN;
    }
    return AV_OK;
}
