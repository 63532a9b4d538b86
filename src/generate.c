/* generate.c: seeded synthetic Q, K, V (docs/conventions.md).
 *
 * Every draw comes from the library's portable stream (av_rng_*, xoshiro256** + Marsaglia polar with
 * the portable log) and the only transcendental used is av_portable_cos, so with -ffp-contract=off the
 * same (gen, n, d, std, seed) gives the same bits natively and in WebAssembly (docs/conventions.md).
 *
 * One stream, seeded with `seed`, is read in this fixed order: the generator's structure (centres,
 * frequencies, basis, sink direction), then Q row by row, then K row by row, then V row by row.
 * V is always N(0, std²) entries, the last n·d normals drawn. Structure parameters are parked in the
 * V buffer (it holds n·d floats, enough for each of them) and overwritten when V is drawn, so the
 * generator never allocates.
 *
 * `std` (> 0, ≤ 1e6) scales every generator's spread: all entries of Q and K scale linearly with it,
 * so the logits q·k scale with std².
 */
#include <math.h>

#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// names

static const char *const GEN_NAMES[AV_GEN_COUNT] = {"gaussian", "clustered", "local", "lowrank", "sink"};

const char *av_generator_name(int gen) {
    return gen >= 0 && gen < AV_GEN_COUNT ? GEN_NAMES[gen] : NULL;
}

int av_generator_from_name(const char *name) {
    if (!name) return -1;
    for (int g = 0; g < AV_GEN_COUNT; g++) {
        const char *a = name, *b = GEN_NAMES[g];
        while (*a && *a == *b) a++, b++;
        if (*a == 0 && *b == 0) return g;
    }
    return -1;
}

// ----------------------------------------------------------------------------------------------------
// helpers

#define LOCAL_WIDTH 4.0      /* local: E[q_i·k_j] = std²·(d/2)·exp(−(i−j)²/(2·4²)) */
#define NOISE 0.1            /* clustered, local: jitter around the structure, relative to std */
#define SINK_QUERY 3.0       /* sink: every query carries 3·std along the sink direction u */
#define SINK_KEY 2.0         /* sink: k_0 = 2·√d·std·u, so its logit is about 6·std² at scale 1/√d */

/* x[count] = std·N(0, 1), in order. */
static void fill_normal(float *x, size_t count, double std, av_rng *rng) {
    for (size_t i = 0; i < count; i++) x[i] = (float)(std * av_rng_normal(rng));
}

/* A uniform integer in [0, k) from the top 32 bits (k ≤ 2^31: the bias is below 2^-32·k). */
static int uniform_int(av_rng *rng, int k) {
    return (int)(((av_rng_next(rng) >> 32) * (uint64_t)k) >> 32);
}

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

// ----------------------------------------------------------------------------------------------------
// the generators (each writes Q and K; V is drawn afterwards by av_generate)

// clustered: c = clamp(n/16, 2, 8) (at most n) centres C_a ~ N(0, std²·I) parked in V; every key and
// every query picks a centre uniformly and adds N(0, (0.1·std)²) jitter. A query attends to the keys of
// its own cluster (logit gap about d·std² per unit scale).
static void gen_clustered(float *Q, float *K, float *scratch, int n, int d, double std, av_rng *rng) {
    int c = imin(n, imax(2, imin(8, n / 16)));
    fill_normal(scratch, (size_t)c * d, std, rng);                  /* centres, c×d */
    float *X[2] = {Q, K};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < n; i++) {
            const float *centre = scratch + (size_t)uniform_int(rng, c) * d;
            for (int j = 0; j < d; j++)
                X[t][(size_t)i * d + j] = (float)(centre[j] + NOISE * std * av_rng_normal(rng));
        }
}

// local: random Fourier features of position. F = ⌊d/2⌋ frequencies ω_f ~ N(0, 1/4²) (parked in V);
// q_i = k_i = √2·std·[cos ω_f i, sin ω_f i]_f (entries of variance std², as for gaussian), then each
// gets its own N(0, (0.1·std)²) jitter (an odd d's last coordinate is jitter only). So
// q_i·k_j ≈ 2·std²·Σ_f cos(ω_f (i − j)), whose mean is std²·2F·exp(−(i − j)²/32): largest at i = j
// and decaying over a few tokens, a diagonal band.
static void gen_local(float *Q, float *K, float *scratch, int n, int d, double std, av_rng *rng) {
    int F = d / 2;
    fill_normal(scratch, (size_t)F, 1.0 / LOCAL_WIDTH, rng);       /* ω, F entries */
    double amp = 1.41421356237309504880 * std;
    float *X[2] = {Q, K};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < n; i++) {
            float *x = X[t] + (size_t)i * d;
            for (int f = 0; f < F; f++) {
                double a = (double)scratch[f] * (i + 1);              /* positions from 1 */
                x[2 * f] = (float)(amp * av_portable_cos(a) + NOISE * std * av_rng_normal(rng));
                x[2 * f + 1] = (float)(amp * av_portable_cos(a - 1.57079632679489661923) +
                                       NOISE * std * av_rng_normal(rng));
            }
            if (d % 2) x[d - 1] = (float)(NOISE * std * av_rng_normal(rng));
        }
}

// lowrank: r = ⌈min(n, d)/4⌉. A shared basis W ~ N(0, 1) (r×d, parked in V); q_i = std/√r·Σ_t u_it W_t
// and k_j likewise with independent u ~ N(0, 1), each row's sum in float64 then rounded once. Q, K and
// QKᵀ have rank r (exactly, before the final rounding to float32); entries have variance ≈ std².
static void gen_lowrank(float *Q, float *K, float *W, int n, int d, double std, av_rng *rng) {
    int r = (imin(n, d) + 3) / 4;
    fill_normal(W, (size_t)r * d, 1.0, rng);                         /* basis, r×d */
    double u[AV_MAX_D / 4];
    double c = std / sqrt((double)r);
    float *X[2] = {Q, K};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < r; k++) u[k] = av_rng_normal(rng);
            for (int j = 0; j < d; j++) {
                double s = 0.0;
                for (int k = 0; k < r; k++) s += u[k] * W[(size_t)k * d + j];
                X[t][(size_t)i * d + j] = (float)(c * s);
            }
        }
}

// sink: a random unit direction u (parked in V). q_i = std·(g_i + 3u), k_0 = std·(2√d·u + 0.1·g_0),
// k_j = std·g_j for j ≥ 1, g ~ N(0, I). Every query's logit on key 0 is about 6·std² at scale 1/√d,
// well above the rest: token 0 is an attention sink (a dominant first column).
static void gen_sink(float *Q, float *K, float *u, int n, int d, double std, av_rng *rng) {
    double norm2 = 0.0;
    do {
        fill_normal(u, (size_t)d, 1.0, rng);
        norm2 = 0.0;
        for (int j = 0; j < d; j++) norm2 += (double)u[j] * u[j];
    } while (!(norm2 > 1e-12));
    double inv = 1.0 / sqrt(norm2);
    for (int j = 0; j < d; j++) u[j] = (float)(u[j] * inv);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < d; j++)
            Q[(size_t)i * d + j] = (float)(std * (av_rng_normal(rng) + SINK_QUERY * u[j]));
    double key = SINK_KEY * sqrt((double)d);
    for (int j = 0; j < d; j++) K[j] = (float)(std * (key * u[j] + NOISE * av_rng_normal(rng)));
    fill_normal(K + d, (size_t)(n - 1) * d, std, rng);
}

// ----------------------------------------------------------------------------------------------------
// entry point

int av_generate(float *Q, float *K, float *V, int n, int d, int gen, double std, uint32_t seed) {
    if (!Q || !K || !V) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    if (gen < 0 || gen >= AV_GEN_COUNT) return AV_ERR_VARIANT;
    if (!(std > 0.0 && std <= 1e6)) return AV_ERR_KNOB;
    av_rng rng;
    av_rng_seed(&rng, seed);
    size_t nd = (size_t)n * d;
    switch (gen) {
    case AV_GEN_GAUSSIAN:
        fill_normal(Q, nd, std, &rng);
        fill_normal(K, nd, std, &rng);
        break;
    case AV_GEN_CLUSTERED: gen_clustered(Q, K, V, n, d, std, &rng); break;
    case AV_GEN_LOCAL: gen_local(Q, K, V, n, d, std, &rng); break;
    case AV_GEN_LOW_RANK: gen_lowrank(Q, K, V, n, d, std, &rng); break;
    default: gen_sink(Q, K, V, n, d, std, &rng); break;
    }
    fill_normal(V, nd, std, &rng);
    return AV_OK;
}
