/* check_attention.c: the attention API (attention.c, linear.c, simd.h) against plain double-precision references
 * written from docs/variant-formulas.md (not from the library's internals).
 *
 * Sizes are not multiples of 4 or 8 (n = 1, 7, 37, 130; d = 3, 13, 64) so every SIMD tail runs.
 * Tolerances: entries of normalised matrices (≤ 1) are compared as max|M − A| ≤ 2e-5·max|A|: the float
 * gemm's error on a logit of size ~5 at d = 64 is a few 1e-6, and exp carries it relatively.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "simd.h"
#include "testutil.h"

static const double PI = 3.14159265358979323846;

// ----------------------------------------------------------------------------------------------------
// double references (docs/variant-formulas.md)

static double dot_fd(const float *a, const float *b, int d) {
    double s = 0;
    for (int f = 0; f < d; f++) s += (double)a[f] * b[f];
    return s;
}

/* Feature dimension of the deterministic maps the reference knows; 0 for others. */
long tref_feature_dim(const av_params *p, int d) {
    switch (p->variant) {
    case AV_ELU: case AV_RELU: case AV_EXP: case AV_EFFICIENT: case AV_FOCUSED: return d;
    case AV_HEDGEHOG: return 2L * (p->hedgehog_w ? p->hedgehog_cols : d);
    case AV_COSFORMER: return 2L * d;
    default: return 0;
    }
}

/* Row i of one side's φ in double; `key` selects the key-side stabiliser; cmax the global key max. */
static void tref_phi_row(double *phi, const float *X, int i, int n, int d, const av_params *p, int key,
                         double cmax) {
    const float *x = X + (size_t)i * d;
    double p_pow = p->p == 0 ? 3 : p->p;
    switch (p->variant) {
    case AV_ELU: for (int f = 0; f < d; f++) phi[f] = x[f] > 0 ? x[f] + 1.0 : exp(x[f]); break;
    case AV_RELU: for (int f = 0; f < d; f++) phi[f] = x[f] > 0 ? x[f] : 0; break;
    case AV_EXP: {
        double c = x[0];
        for (int f = 1; f < d; f++) c = x[f] > c ? x[f] : c;
        if (key) c = cmax;
        for (int f = 0; f < d; f++) phi[f] = exp(x[f] - c);
        break;
    }
    case AV_FOCUSED: {
        double ny = 0, np = 0;
        for (int f = 0; f < d; f++) {
            double y = ((x[f] > 0 ? x[f] : 0) + 1e-6) / log(2.0);
            phi[f] = pow(y, p_pow);
            ny += y * y;
            np += phi[f] * phi[f];
        }
        for (int f = 0; f < d; f++) phi[f] *= sqrt(ny) / sqrt(np);
        break;
    }
    case AV_HEDGEHOG: {
        int cols = p->hedgehog_w ? p->hedgehog_cols : d;
        double c = 0;
        for (int k = 0; k < cols; k++) {
            double u = 0;
            if (p->hedgehog_w)
                for (int f = 0; f < d; f++) u += (double)x[f] * p->hedgehog_w[(size_t)f * cols + k];
            else u = x[k];
            phi[k] = u;
            c = fabs(u) > c ? fabs(u) : c;
        }
        if (key) c = cmax;
        for (int k = 0; k < cols; k++) {
            double u = phi[k];
            phi[k] = exp(u - c);
            phi[cols + k] = exp(-u - c);
        }
        break;
    }
    case AV_COSFORMER: {
        double th = PI * (i + 1) / (2.0 * n);
        for (int f = 0; f < d; f++) {
            double r = x[f] > 0 ? x[f] : 0;
            phi[f] = r * sin(th);
            phi[d + f] = r * cos(th);
        }
        break;
    }
    default: break;
    }
}

/* The key-side global stabiliser of exp (max over all keys and features) and hedgehog (max |Wᵀk|). */
static double tref_key_max(const float *K, int n, int d, const av_params *p) {
    double c = -INFINITY;
    if (p->variant == AV_EXP)
        for (size_t i = 0; i < (size_t)n * d; i++) c = K[i] > c ? K[i] : c;
    if (p->variant == AV_HEDGEHOG) {
        int cols = p->hedgehog_w ? p->hedgehog_cols : d;
        c = 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < cols; k++) {
                double u = p->hedgehog_w ? 0 : K[(size_t)i * d + k];
                if (p->hedgehog_w)
                    for (int f = 0; f < d; f++) u += (double)K[(size_t)i * d + f] * p->hedgehog_w[(size_t)f * cols + k];
                c = fabs(u) > c ? fabs(u) : c;
            }
    }
    return c;
}

/* Φ_Q, Φ_K (n×r, double) of the deterministic maps. */
void tref_features(double *PQ, double *PK, const float *Q, const float *K, int n, int d, const av_params *p) {
    long r = tref_feature_dim(p, d);
    if (p->variant == AV_EFFICIENT) {
        for (int i = 0; i < n; i++) {
            double m = Q[(size_t)i * d], s = 0;
            for (int f = 1; f < d; f++) m = fmax(m, Q[(size_t)i * d + f]);
            for (int f = 0; f < d; f++) s += PQ[(size_t)i * d + f] = exp(Q[(size_t)i * d + f] - m);
            for (int f = 0; f < d; f++) PQ[(size_t)i * d + f] /= s;
        }
        for (int f = 0; f < d; f++) {
            double m = K[f], s = 0;
            for (int j = 1; j < n; j++) m = fmax(m, K[(size_t)j * d + f]);
            for (int j = 0; j < n; j++) s += PK[(size_t)j * d + f] = exp(K[(size_t)j * d + f] - m);
            for (int j = 0; j < n; j++) PK[(size_t)j * d + f] /= s;
        }
        return;
    }
    double cmax = tref_key_max(K, n, d, p);
    for (int i = 0; i < n; i++) {
        tref_phi_row(PQ + (size_t)i * r, Q, i, n, d, p, 0, 0);
        tref_phi_row(PK + (size_t)i * r, K, i, n, d, p, 1, cmax);
    }
}

static double tref_poly(const av_params *p, double s) {
    if (p->variant == AV_TAYLOR) {
        double t = 0, term = 1;
        for (int r = 0; r <= p->order; r++) {
            t += term;
            term *= s / (r + 1);
        }
        return t;
    }
    return pow(1 + s / p->N, p->N);
}

/* The delta rule's matrix in double by its recurrence on unit rows (docs/recurrent.md), with V = I: row t is
 * o_t for every value at once. S (d×n) ← αS; u = β(e_t − Sᵀk̂_t); S += k̂_t uᵀ; M[t] = Sᵀ(scale·q̂_t). */
static void tref_delta(double *A, const float *Q, const float *K, int n, int d, const av_params *p) {
    double *S = calloc((size_t)d * n, sizeof(double)), *u = malloc(sizeof(double) * n);
    double *k = malloc(sizeof(double) * d), *q = malloc(sizeof(double) * d);
    for (int t = 0; t < n; t++) {
        double nk = 0, nq = 0;
        for (int f = 0; f < d; f++) {
            nk += (double)K[(size_t)t * d + f] * K[(size_t)t * d + f];
            nq += (double)Q[(size_t)t * d + f] * Q[(size_t)t * d + f];
        }
        for (int f = 0; f < d; f++) {
            k[f] = nk > 0 ? K[(size_t)t * d + f] / sqrt(nk) : 0;
            q[f] = nq > 0 ? p->scale * Q[(size_t)t * d + f] / sqrt(nq) : 0;
        }
        for (size_t e = 0; e < (size_t)d * n; e++) S[e] *= p->decay;
        for (int c = 0; c < n; c++) {
            double w = 0;
            for (int f = 0; f < d; f++) w += k[f] * S[(size_t)f * n + c];
            u[c] = p->beta * ((c == t) - w);
        }
        for (int f = 0; f < d; f++)
            for (int c = 0; c < n; c++) S[(size_t)f * n + c] += k[f] * u[c];
        for (int c = 0; c < n; c++) {
            double o = 0;
            for (int f = 0; f < d; f++) o += q[f] * S[(size_t)f * n + c];
            A[(size_t)t * n + c] = o;
        }
    }
    free(S); free(u); free(k); free(q);
}

/* The n×n matrix of a variant in double, from docs/variant-formulas.md and docs/recurrent.md directly. Knobs
 * must be resolved (scale, p, order, decay set). */
static void tref_matrix(double *A, const float *Q, const float *K, int n, int d, const av_params *p) {
    if (p->variant == AV_DELTANET) {
        tref_delta(A, Q, K, n, d, p);
        return;
    }
    long r = p->variant == AV_RETENTION ? 0 : tref_feature_dim(p, d);
    double *PQ = r ? malloc(sizeof(double) * n * r) : NULL, *PK = r ? malloc(sizeof(double) * n * r) : NULL;
    if (r) tref_features(PQ, PK, Q, K, n, d, p);
    for (int i = 0; i < n; i++) {
        double *a = A + (size_t)i * n, sum = 0, mx = -INFINITY;
        int len = p->causal ? i + 1 : n, lo = 0;
        if (p->variant == AV_SOFTMAX && p->window > 0) { /* |i − j| < W */
            lo = i - p->window + 1 > 0 ? i - p->window + 1 : 0;
            len = i + p->window < len ? i + p->window : len;
        }
        double g = p->causal && p->decay > 0 ? p->decay : 1; /* γ^{i−j}, or (i − j)·ln γ added to softmax's logits */
        for (int j = 0; j < n; j++) {
            double s = p->scale * dot_fd(Q + (size_t)i * d, K + (size_t)j * d, d), v;
            if (j >= len || j < lo) { a[j] = 0; continue; }
            if (p->variant == AV_SOFTMAX) v = s + (i - j) * log(g);
            else if (p->variant == AV_RETENTION) v = s;
            else if (p->variant == AV_TAYLOR || p->variant == AV_EXPLIMIT) v = tref_poly(p, s);
            else if (p->variant == AV_COSFORMER) {
                double qk = 0;
                for (int f = 0; f < d; f++) {
                    double q = Q[(size_t)i * d + f], k = K[(size_t)j * d + f];
                    qk += (q > 0 ? q : 0) * (k > 0 ? k : 0);
                }
                v = qk * cos(PI * (i - j) / (2.0 * n));
            } else {
                v = 0;
                for (long f = 0; f < r; f++) v += PQ[(size_t)i * r + f] * PK[(size_t)j * r + f];
            }
            if (p->variant != AV_SOFTMAX) v *= pow(g, i - j);
            a[j] = v;
            mx = v > mx ? v : mx;
        }
        if (p->variant == AV_RETENTION) continue; /* unnormalised */
        if (p->variant == AV_SOFTMAX)
            for (int j = lo; j < len; j++) a[j] = exp(a[j] - mx);
        for (int j = lo; j < len; j++) sum += a[j];
        double den = sum;
        if (p->variant == AV_ELU || p->variant == AV_RELU) den = sum + 1e-6;
        if (p->variant == AV_FOCUSED) den = sum + n * 1e-6;
        if (p->variant == AV_COSFORMER) den = fmax(sum, 1e-6);
        if (den != 0)
            for (int j = lo; j < len; j++) a[j] /= den;
    }
    if (p->variant == AV_FOCUSED && p->dwc_kernel > 0) {
        int k = p->dwc_kernel, h = (k - 1) / 2;
        av_rng rng;
        av_rng_seed(&rng, ((uint64_t)4 << 32) + (uint32_t)p->seed);   /* the DWC stream, docs/conventions.md */
        for (int t = 0; t < k; t++) {
            double w = av_rng_normal(&rng) / sqrt((double)k);
            for (int i = 0; i < n; i++)
                if (i + t - h >= 0 && i + t - h < n) A[(size_t)i * n + i + t - h] += w;
        }
    }
    free(PQ);
    free(PK);
}

// ----------------------------------------------------------------------------------------------------
// helpers

static void *work_for(size_t bytes) { return malloc(bytes ? bytes : 1); }

/* M = av_matrix(prm) with a fresh workspace; returns the status. */
static int run_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *prm) {
    size_t wb = av_matrix_work(prm, n, d);
    void *w = work_for(wb);
    int st = av_matrix(M, Q, K, n, d, prm, w, wb);
    free(w);
    return st;
}

static void inputs(float **Q, float **K, float **V, int n, int d, int dv, uint64_t seed, double std) {
    *Q = malloc(sizeof(float) * n * d);
    *K = malloc(sizeof(float) * n * d);
    *V = malloc(sizeof(float) * n * dv);
    tu_fill_normal(*Q, (size_t)n * d, 0, std, seed);
    tu_fill_normal(*K, (size_t)n * d, 0, std, seed + 1);
    tu_fill_normal(*V, (size_t)n * dv, 0, 1, seed + 2);
}

static const int NS[] = {1, 7, 37, 130};
static const int DS[] = {3, 13, 64};
/* The variants whose formula the double reference above knows. Every other registry variant must be
 * compared with an independent reference elsewhere (test_every_variant_has_a_reference checks this). */
static const int REF_VARIANTS[] = {AV_SOFTMAX, AV_ELU, AV_RELU, AV_EXP, AV_EFFICIENT, AV_FOCUSED,
                                   AV_TAYLOR, AV_EXPLIMIT, AV_HEDGEHOG, AV_COSFORMER, AV_RETENTION, AV_DELTANET};
#define NREF (int)(sizeof REF_VARIANTS / sizeof REF_VARIANTS[0])
/* Compared elsewhere: Performer (random features) by its convergence to softmax in check_random.c;
 * Linformer and Nyström against their own references in check_lowrank.c. */
static const int REF_ELSEWHERE[] = {AV_PERFORMER, AV_LINFORMER, AV_NYSTROM,
                                    /* check_gated.c */ AV_SIMPLE_GLA, AV_GLA, AV_GDN, AV_KDA,
                                    /* check_dplr_fox.c */ AV_DPLR, AV_FOX, /* check_lolcats.c */ AV_LOLCATS};

static const av_variant_desc *vd_of(int v) { return av_variant_info(v); }
/* Rows are distributions of the variant's own normaliser (not the closed forms, whose κ may be negative,
 * nor the low-rank maps). */
static int normalising(int v) { return vd_of(v)->cls == AV_CLASS_EXACT || vd_of(v)->cls == AV_CLASS_KERNEL; }
/* Rows sum to exactly 1: the exact class, and the normalised rules without ε. */
static int eps_free(int v) { return vd_of(v)->norm == AV_NORM_EXACT || (vd_of(v)->norm == AV_NORM_SUM && normalising(v)); }
static int may_zero(int v) { return v == AV_RELU || v == AV_COSFORMER; } /* all-negative rows happen */
static int has_causal(int v) { return (vd_of(v)->flags & AV_VF_CAUSAL) != 0; }
static int causal_only(int v) { return (vd_of(v)->flags & AV_VF_CAUSAL_ONLY) != 0; }

// ----------------------------------------------------------------------------------------------------
// the SIMD exp

/* ulp of the float nearest to y (the spacing at |y|; the subnormal spacing below FLT_MIN). */
static double ulp_at(double y) {
    y = fabs(y);
    if (y < FLT_MIN) return ldexp(1.0, -149);
    int e;
    frexp(y, &e);
    return ldexp(1.0, e - 24);
}

START_TEST(test_exp_ulp) {
    /* Bound: ≤ 2 ulp where e^x is a normal float (x ≥ ln FLT_MIN ≈ −87.34); ≤ 1 subnormal ulp
     * (2^−149) below, 0 below −103.97; +Inf above ln FLT_MAX ≈ 88.7228. */
    double worst = 0, worst_x = 0;
    for (int i = 0; i <= 2000000; i++) {
        float x = (float)(-110.0 + 200.0 * i / 2000000.0);
        double ref = exp((double)x), got = avs_expf(x);
        if (ref > FLT_MAX * (1 + 0x1p-24)) {
            ck_assert_msg(isinf(got) && got > 0, "x=%.9g: %g, expected +Inf", x, got);
            continue;
        }
        double err = fabs(got - ref) / ulp_at(ref);
        if (ref < FLT_MIN) ck_assert_msg(fabs(got - ref) <= ldexp(1.0, -149), "subnormal x=%.9g", x);
        else if (err > worst) worst = err, worst_x = x;
    }
    ck_assert_msg(worst <= 2.0, "worst %.3f ulp at x = %.9g", worst, worst_x);
    ck_assert(avs_expf(0.0f) == 1.0f);
    ck_assert(avs_expf(-1000.0f) == 0.0f);
    ck_assert(avs_expf(-INFINITY) == 0.0f);
    ck_assert(isinf(avs_expf(89.0f)) && isinf(avs_expf(1e30f)) && isinf(avs_expf(INFINITY)));
    ck_assert(isnan(avs_expf(NAN)));
}
END_TEST

/* avs_log2x (the exponent from 32-bit words) gives the bits of avs_log and of its 64-bit-shift twin, lane
 * by lane, over normal doubles from 1e-300 to 1e300, powers of two, and values next to 1. */
START_TEST(test_log2x_matches_scalar) {
    av_rng rng;
    av_rng_seed(&rng, 77);
    for (int t = 0; t < 200000; t++) {
        double a, b;
        if (t % 4 == 0) { a = ldexp(1.0, (int)(av_rng_uniform(&rng) * 2000) - 1000); b = 1.0 + (av_rng_uniform(&rng) - 0.5) * 1e-9; }
        else { a = exp((av_rng_uniform(&rng) - 0.5) * 1380); b = av_rng_uniform(&rng) * 4 + 1e-12; }
        avs_f64x2 x = {a, b}, got = avs_log2x(x), ref = avs_log2x_ref(x);
        ck_assert_msg(memcmp(&got, &ref, sizeof got) == 0, "%.17g, %.17g", a, b);
        ck_assert(got[0] == avs_log(a) && got[1] == avs_log(b));
    }
}
END_TEST

/* avs_logf_split4 against logl: k·ln 2 + logc + log1p(r) within 1 ulp of |ln x| + 1e-17 for floats over
 * every binade (subnormals included), at powers of two, next to 1 and next to the table's bucket edges;
 * non-positive entries give parts within 1e-17 of ln 1 = 0; same-bucket differences are accurate. */
START_TEST(test_logf_split4_against_logl) {
    av_rng rng;
    av_rng_seed(&rng, 78);
    double worst = 0;
    for (int t = 0; t < 400000; t++) {
        float x[4];
        for (int l = 0; l < 4; l++) {
            int kind = (t + l) % 5;
            if (kind == 0) x[l] = (float)exp((av_rng_uniform(&rng) - 0.5) * 2 * 88.7);
            else if (kind == 1) x[l] = (float)ldexp(1.0, (int)(av_rng_uniform(&rng) * 276) - 149); // 2^-149 .. 2^126
            else if (kind == 2) x[l] = 1.0f + (float)ldexp(av_rng_uniform(&rng) - 0.5, -(int)(av_rng_uniform(&rng) * 24));
            else if (kind == 3) { uint32_t u = (uint32_t)(av_rng_uniform(&rng) * 4294967296.0) & 0x7fffffffu; memcpy(&x[l], &u, 4); if (!isfinite(x[l]) || x[l] == 0) x[l] = 1.5f; }
            else { uint32_t u = 0x3f300000u + ((uint32_t)(av_rng_uniform(&rng) * 128) << 16) + (uint32_t)(av_rng_uniform(&rng) * 3) - 1; memcpy(&x[l], &u, 4); }
        }
        avs_f64x2 k[2], c[2], p[2];
        avs_logf_split4(x, &k[0], &c[0], &p[0], &k[1], &c[1], &p[1]);
        for (int l = 0; l < 4; l++) {
            long double got = (long double)k[l / 2][l % 2] * 0.693147180559945309417232121458176568L + c[l / 2][l % 2] + p[l / 2][l % 2];
            long double want = logl((long double)x[l]);
            double err = (double)fabsl(got - want), bound = ldexp(fabs((double)want), -52) + 1e-17;
            worst = err / bound > worst ? err / bound : worst;
            ck_assert_msg(err <= bound, "x = %a: %.20Lg, want %.20Lg", (double)x[l], got, want);
        }
    }
    float z[4] = {0.0f, -0.0f, -1.0f, -1e-30f};
    avs_f64x2 k[2], c[2], p[2];
    avs_logf_split4(z, &k[0], &c[0], &p[0], &k[1], &c[1], &p[1]);
    for (int l = 0; l < 4; l++)
        ck_assert(k[l / 2][l % 2] == 0 && fabs(c[l / 2][l % 2] + p[l / 2][l % 2]) < 1e-17);
    // x ≈ y in one bucket: the parts' difference within 1e-18 of ln(x/y) (about 1.2e-7; a rounded x/y: 1e-16)
    float xy[4] = {0.3f, 0.30000004f, 7.5e-4f, 7.5000006e-4f};
    avs_logf_split4(xy, &k[0], &c[0], &p[0], &k[1], &c[1], &p[1]);
    for (int h = 0; h < 2; h++) {
        long double d = (long double)(k[h][0] - k[h][1]) * 0.693147180559945309417232121458176568L +
                        ((long double)c[h][0] - c[h][1]) + ((long double)p[h][0] - p[h][1]);
        long double want = logl((long double)xy[2 * h]) - logl((long double)xy[2 * h + 1]);
        ck_assert_msg(fabsl(d - want) < 1e-18L, "%.20Lg, want %.20Lg", d, want);
    }
}
END_TEST

/* avs_exp_f64x2 against libm's exp: within 1 ulp over [−708, 709] (fdlibm's bound), both lanes, and
 * clamped outside it; and the focused map at fractional powers (u^p = e^{p·ln u} in two lanes) against
 * the map's own steps with libm's pow: within 2 float ulps of the reference entry (subnormal ones included:
 * no entry is cut off), odd d for the tail lane. */
START_TEST(test_exp_f64x2_and_focused_powers) {
    av_rng rng;
    av_rng_seed(&rng, 78);
    for (int t = 0; t < 200000; t++) {
        double a = (av_rng_uniform(&rng) - 0.5) * 2 * 708, b = t % 3 ? -av_rng_uniform(&rng) * 60 : (av_rng_uniform(&rng) - 0.5) * 1e-6;
        avs_f64x2 got = avs_exp_f64x2((avs_f64x2){a, b});
        double ea = exp(a), eb = exp(b);
        ck_assert_msg(fabs(got[0] - ea) <= 1.0 * (nextafter(ea, INFINITY) - ea), "exp(%.17g)", a);
        ck_assert_msg(fabs(got[1] - eb) <= 1.0 * (nextafter(eb, INFINITY) - eb), "exp(%.17g)", b);
    }
    avs_f64x2 edge = avs_exp_f64x2((avs_f64x2){-1e300, 0.0});
    ck_assert(edge[0] == avs_exp_f64x2((avs_f64x2){-708.0, 0.0})[0] && edge[0] > 0 && edge[1] == 1.0);
    edge = avs_exp_f64x2((avs_f64x2){1e300, 709.0});
    ck_assert(edge[0] == edge[1] && isfinite(edge[0]));

    const double powers[] = {1.1, 2.5, 3.7, 6.05, 9.9};
    int n = 41, d = 13;
    float *Q, *K, *V, *PQ = malloc(sizeof(float) * n * d), *PK = malloc(sizeof(float) * n * d);
    inputs(&Q, &K, &V, n, d, 1, 21, 2.0);
    for (int t = 0; t < 5; t++) {
        av_params p;
        av_params_default(&p, AV_FOCUSED);
        p.p = powers[t];
        size_t wb = av_features_work(&p, n, d);
        void *w = work_for(wb);
        ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, w, wb), AV_OK);
        free(w);
        for (int i = 0; i < n; i++) { // the map's own steps, with libm's pow for u^p
            const float *x = Q + (size_t)i * d;
            double u[13], ymax = 0, ny = 0, nu = 0;
            for (int f = 0; f < d; f++) {
                u[f] = ((x[f] > 0 ? (double)x[f] : 0.0) + 1e-6) * (1.0 / 0.69314718055994530942);
                ymax = u[f] > ymax ? u[f] : ymax;
                ny += u[f] * u[f];
            }
            for (int f = 0; f < d; f++) { u[f] = pow(u[f] / ymax, p.p); nu += u[f] * u[f]; }
            float a = (float)(sqrt(ny) / sqrt(nu));
            for (int f = 0; f < d; f++) {
                float ref = (float)u[f] * a, got = PQ[(size_t)i * d + f]; // below FLT_MIN, (float)u[f] is subnormal
                float tol = 2 * (nextafterf(fabsf(ref), INFINITY) - fabsf(ref)) + 2 * a * FLT_TRUE_MIN;
                ck_assert_msg(fabsf(got - ref) <= tol, "p %g row %d f %d: %.9g vs %.9g", p.p, i, f, got, ref);
            }
        }
    }
    free(Q); free(K); free(V); free(PQ); free(PK);
}
END_TEST

START_TEST(test_exp_row_matches_scalar) {
    enum { L = 1037 };
    float x[L], y[L];
    tu_fill_uniform(x, L, -120, 100, 5);
    memcpy(y, x, sizeof x);
    avs_exp_sub_sum(y, L, 3.0f);
    double s = 0;
    for (int i = 0; i < L; i++) {
        float e = avs_expf(x[i] - 3.0f);
        ck_assert_msg(memcmp(&e, &y[i], 4) == 0 || (isnan(e) && isnan(y[i])), "lane %d", i);
        s += e;
    }
    float m = avs_max(x, L), mr = x[0];
    for (int i = 1; i < L; i++) mr = x[i] > mr ? x[i] : mr;
    ck_assert(m == mr);
    (void)s;
}
END_TEST

/* avs_all_finite flags one Inf or NaN anywhere (vector body or tail); avs_sum_f64 is the documented lane
 * order's float64 sum. */
START_TEST(test_finite_and_sum_helpers) {
    enum { L = 1037 };
    float x[L];
    tu_fill_uniform(x, L, -3e38, 3e38, 9);
    ck_assert(avs_all_finite(x, L));
    const float bad[] = {INFINITY, -INFINITY, NAN};
    const size_t at[] = {0, 5, 8, 517, L - 6, L - 1};
    for (int b = 0; b < 3; b++)
        for (int t = 0; t < 6; t++) {
            float keep = x[at[t]];
            x[at[t]] = bad[b];
            ck_assert_msg(!avs_all_finite(x, L), "bad %d at %zu", b, at[t]);
            x[at[t]] = keep;
        }
    x[3] = FLT_MAX;
    x[4] = -FLT_MIN / 4;
    ck_assert(avs_all_finite(x, L) && avs_all_finite(x, 0));
    for (int len = 0; len <= 40; len++) {
        double lane[8] = {0}, ref;
        int i = 0;
        for (; i + 8 <= len; i += 8)
            for (int l = 0; l < 8; l++) lane[l] += x[i + l];
        ref = ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
        for (; i < len; i++) ref += x[i];
        double got = avs_sum_f64(x, len);
        ck_assert_msg(memcmp(&got, &ref, sizeof got) == 0, "len %d", len);
    }
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// every variant against its double reference; rows sum to 1; causal zeros exact

static void check_against_reference(int variant, int causal, int n, int d, double decay) {
    av_params p, r;
    av_params_default(&p, variant);
    p.causal = causal;
    p.decay = decay;
    if (variant == AV_TAYLOR) p.order = 4; /* even orders: positive normalisers (odd: test_warnings) */
    if (variant == AV_EXPLIMIT) p.N = 4;
    ck_assert_int_eq(av_params_resolve(&r, &p, n, d), AV_OK);
    float *Q, *K, *V;
    inputs(&Q, &K, &V, n, d, 1, 1000u * n + d, 1.0);
    float *M = malloc(sizeof(float) * n * n);
    double *A = malloc(sizeof(double) * n * n);
    int st = run_matrix(M, Q, K, n, d, &p);
    ck_assert_msg(st == AV_OK || (st == AV_WARN_ZERO_ROW && may_zero(variant)), "%s n=%d d=%d causal=%d: %d",
                  av_variant_name(variant), n, d, causal, st);
    tref_matrix(A, Q, K, n, d, &r);
    double scale = tu_max_abs_d(A, (size_t)n * n), err = tu_max_abs_diff_d(M, A, (size_t)n * n);
    ck_assert_msg(err <= 2e-5 * fmax(scale, 1e-30), "%s n=%d d=%d causal=%d: err %g (max %g)",
                  av_variant_name(variant), n, d, causal, err, scale);
    for (int i = 0; i < n; i++) {
        double sm = 0, sa = 0;
        for (int j = 0; j < n; j++) {
            if (causal && j > i) ck_assert_msg(M[(size_t)i * n + j] == 0.0f, "masked entry %d,%d", i, j);
            sm += M[(size_t)i * n + j];
            sa += A[(size_t)i * n + j];
        }
        if (!normalising(variant)) continue;
        /* rows sum to S/(S + ε) (S/max(S, 1e-6) for cosFormer): the reference's own sum; exactly 1 for
         * the ε-free variants; 0 for a reported all-zero row */
        ck_assert_msg(fabs(sm - sa) <= 1e-5, "%s row %d sums %.9g vs %.9g", av_variant_name(variant), i, sm, sa);
        if (eps_free(variant)) ck_assert_msg(fabs(sm - 1) <= 1e-5, "%s row %d sums %.9g", av_variant_name(variant), i, sm);
    }
    free(Q); free(K); free(V); free(M); free(A);
}

START_TEST(test_matrix_vs_reference) {
    int variant = REF_VARIANTS[_i];
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
            for (int causal = 0; causal <= 1; causal++) {
                if ((causal && !has_causal(variant)) || (!causal && causal_only(variant))) continue;
                check_against_reference(variant, causal, NS[a], DS[b], 0);
                if (causal && avi_variant_reads(variant, AV_KNOB_DECAY)) /* decayed (forgetting, gated) */
                    check_against_reference(variant, causal, NS[a], DS[b], 0.9);
            }
}
END_TEST

/* A new registry row fails here until a double reference for its formula exists (a test cannot derive
 * a formula from the code it checks): docs/adding-a-variant.md. */
START_TEST(test_every_variant_has_a_reference) {
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        int found = 0;
        for (int i = 0; i < NREF; i++) found |= REF_VARIANTS[i] == v;
        for (size_t i = 0; i < sizeof REF_ELSEWHERE / sizeof *REF_ELSEWHERE; i++) found |= REF_ELSEWHERE[i] == v;
        ck_assert_msg(found, "%s has no reference comparison", av_variant_name(v));
    }
}
END_TEST

START_TEST(test_focused_dwc_and_powers) {
    double powers[] = {1, 2.5, 3, 10};
    for (int t = 0; t < 4; t++)
        for (int k = 0; k <= 5; k += 5) {
            av_params p, r;
            av_params_default(&p, AV_FOCUSED);
            p.p = powers[t];
            p.dwc_kernel = k == 0 ? 0 : (t == 3 ? 1 : 5);
            p.seed = 77;
            int n = 37, d = 13;
            ck_assert_int_eq(av_params_resolve(&r, &p, n, d), AV_OK);
            float *Q, *K, *V;
            inputs(&Q, &K, &V, n, d, 1, 9, 1.0);
            float *M = malloc(sizeof(float) * n * n);
            double *A = malloc(sizeof(double) * n * n);
            ck_assert_int_eq(run_matrix(M, Q, K, n, d, &p), AV_OK);
            tref_matrix(A, Q, K, n, d, &r);
            double err = tu_max_abs_diff_d(M, A, (size_t)n * n);
            ck_assert_msg(err <= 2e-5 * tu_max_abs_d(A, (size_t)n * n), "p=%g k=%d err %g", p.p, p.dwc_kernel, err);
            free(Q); free(K); free(V); free(M); free(A);
        }
}
END_TEST

START_TEST(test_hedgehog_with_w) {
    int n = 37, d = 13, cols = 7;
    float W[13 * 7];
    tu_fill_normal(W, (size_t)d * cols, 0, 0.5, 3);
    for (int causal = 0; causal <= 1; causal++) {
        av_params p, r;
        av_params_default(&p, AV_HEDGEHOG);
        av_params_set_hedgehog(&p, W, cols);
        p.causal = causal;
        ck_assert_int_eq(av_params_resolve(&r, &p, n, d), AV_OK);
        float *Q, *K, *V;
        inputs(&Q, &K, &V, n, d, 1, 19, 2.0);
        float *M = malloc(sizeof(float) * n * n);
        double *A = malloc(sizeof(double) * n * n);
        ck_assert_int_eq(run_matrix(M, Q, K, n, d, &p), AV_OK);
        tref_matrix(A, Q, K, n, d, &r);
        ck_assert(tu_max_abs_diff_d(M, A, (size_t)n * n) <= 2e-5 * tu_max_abs_d(A, (size_t)n * n));
        long rr;
        ck_assert_int_eq(av_feature_dim(&rr, &p, n, d), AV_OK);
        ck_assert_int_eq(rr, 2 * cols);
        free(Q); free(K); free(V); free(M); free(A);
    }
}
END_TEST

START_TEST(test_softmax_large) {
    /* the fast kernel at a benchmark-like size against the reference, both masks */
    int n = 261, d = 64;
    for (int causal = 0; causal <= 1; causal++) {
        av_params p;
        av_params_default(&p, AV_SOFTMAX);
        p.causal = causal;
        p.scale = 0.3;
        float *Q, *K, *V;
        inputs(&Q, &K, &V, n, d, 1, 42, 1.5);
        float *M = malloc(sizeof(float) * n * n);
        double *A = malloc(sizeof(double) * n * n);
        ck_assert_int_eq(run_matrix(M, Q, K, n, d, &p), AV_OK);
        tref_matrix(A, Q, K, n, d, &p);
        double err = tu_max_abs_diff_d(M, A, (size_t)n * n);
        ck_assert_msg(err <= 2e-5 * tu_max_abs_d(A, (size_t)n * n), "err %g", err);
        free(Q); free(K); free(V); free(M); free(A);
    }
}
END_TEST

START_TEST(test_scores) {
    int n = 37, d = 300; /* d > the 256-row panel chunk */
    float *Q, *K, *V;
    inputs(&Q, &K, &V, n, d, 1, 8, 1.0);
    float *S = malloc(sizeof(float) * n * n), *E = malloc(sizeof(float) * n * n);
    ck_assert_int_eq(av_scores(S, Q, K, n, d, 0, 0), AV_OK);
    ck_assert_int_eq(av_scores(E, Q, K, n, d, 0, 1), AV_OK);
    double mx = -INFINITY, *ref = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            ref[(size_t)i * n + j] = dot_fd(Q + (size_t)i * d, K + (size_t)j * d, d) / sqrt((double)d);
            mx = fmax(mx, ref[(size_t)i * n + j]);
        }
    ck_assert(tu_max_abs_diff_d(S, ref, (size_t)n * n) <= 1e-5);
    for (size_t i = 0; i < (size_t)n * n; i++) ref[i] = exp(ref[i] - mx);
    ck_assert(tu_max_abs_diff_d(E, ref, (size_t)n * n) <= 1e-5);
    free(Q); free(K); free(V); free(S); free(E); free(ref);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// quadratic vs linear vs recurrent; factors; rank

/* The paths agree for every registry variant with a feature map (kernel and closed-form classes). */
/* The gated families' paths and steps (av_gated_step) are compared in check_gated.c and check_dplr_fox.c, the
 * hybrid's (lolcats: no feature map of its own) in check_lolcats.c. */
static int has_features(int v) {
    return vd_of(v)->cls != AV_CLASS_EXACT && vd_of(v)->cls != AV_CLASS_LOWRANK && vd_of(v)->cls != AV_CLASS_GATED &&
           vd_of(v)->cls != AV_CLASS_HYBRID;
}

static double rel_err(const float *a, const float *b, size_t count) {
    double m = 0;
    for (size_t i = 0; i < count; i++) m = fmax(m, fabs(b[i]));
    return tu_max_abs_diff(a, b, count) / fmax(m, 1e-30);
}

/* O by a sequential form (av_recurrent or av_chunkwise) against the quadratic path's Oq. */
static void check_sequential(const av_params *p, const float *Q, const float *K, const float *V, int n, int d, int dv,
                             const float *Oq, int want, int chunkwise) {
    size_t wb = chunkwise ? av_chunkwise_work(p, n, d, dv) : av_recurrent_work(p, n, d, dv);
    ck_assert_msg(wb > 0, "%s: no %s form", av_variant_name(p->variant), chunkwise ? "chunkwise" : "recurrent");
    void *w = work_for(wb);
    float *O = malloc(sizeof(float) * n * dv);
    int st = chunkwise ? av_chunkwise(O, Q, K, V, n, d, dv, p, w, wb) : av_recurrent(O, Q, K, V, n, d, dv, p, w, wb);
    ck_assert_msg(st == want, "%s %s: %d, quadratic %d", av_variant_name(p->variant), chunkwise ? "chunkwise" : "recurrent",
                  st, want);
    double e = rel_err(O, Oq, (size_t)n * dv);
    ck_assert_msg(e <= 1e-5, "%s n=%d d=%d decay=%g chunk=%d: %s vs quadratic %g", av_variant_name(p->variant), n, d,
                  p->decay, p->chunk, chunkwise ? "chunkwise" : "recurrent", e);
    free(w); free(O);
}

static void check_paths(int variant, int causal, int n, int d, int dv, double decay) {
    av_params p;
    av_params_default(&p, variant);
    p.causal = causal;
    p.decay = decay;
    p.m = 19;
    p.order = 2;
    p.N = 2;
    float *Q, *K, *V;
    inputs(&Q, &K, &V, n, d, dv, 31u * n + d, 0.7);
    float *Oq = malloc(sizeof(float) * n * dv), *Ol = malloc(sizeof(float) * n * dv);
    float *M = malloc(sizeof(float) * n * n);
    size_t wa = av_attend_work(&p, n, d, dv), wl = av_linear_work(&p, n, d, dv);
    void *w = work_for(wa > wl ? wa : wl);
    int st = av_attend(Oq, M, Q, K, V, n, d, dv, &p, w, wa);
    ck_assert(st == AV_OK || (st == AV_WARN_ZERO_ROW && may_zero(variant)));
    ck_assert_int_eq(av_linear(Ol, Q, K, V, n, d, dv, &p, w, wl), st);
    double e = rel_err(Ol, Oq, (size_t)n * dv);
    ck_assert_msg(e <= 1e-5, "%s causal=%d n=%d d=%d: linear vs quadratic %g", av_variant_name(variant), causal, n,
                  d, e);
    /* M·V with M given equals M·V with M in the workspace */
    float *O2 = malloc(sizeof(float) * n * dv);
    ck_assert_int_eq(av_attend(O2, NULL, Q, K, V, n, d, dv, &p, w, wa), st);
    ck_assert(tu_max_abs_diff(O2, Oq, (size_t)n * dv) == 0);
    if (causal) { /* the recurrent form, token by token, from av_features */
        long r;
        ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK);
        float *PQ = malloc(sizeof(float) * n * r), *PK = malloc(sizeof(float) * n * r);
        size_t wf = av_features_work(&p, n, d);
        void *fw = work_for(wf);
        ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, fw, wf), AV_OK);
        double *S = calloc((size_t)r * dv, sizeof(double)), *z = calloc((size_t)r, sizeof(double));
        int worst = AV_OK;
        for (int t = 0; t < n; t++) {
            int s1 = av_recurrent_step(O2 + (size_t)t * dv, S, z, PQ + (size_t)t * r, PK + (size_t)t * r,
                                       V + (size_t)t * dv, r, dv, n, &p);
            ck_assert(s1 == AV_OK || s1 == AV_WARN_ZERO_ROW);
            worst = s1 > worst ? s1 : worst;
        }
        ck_assert_int_eq(worst, st);
        e = rel_err(O2, Oq, (size_t)n * dv);
        ck_assert_msg(e <= 1e-5, "%s recurrent vs quadratic %g", av_variant_name(variant), e);
        free(PQ); free(PK); free(fw); free(S); free(z);
        check_sequential(&p, Q, K, V, n, d, dv, Oq, st, 0);
        static const int CHUNKS[] = {0, 1, 5, 64};
        for (int c = 0; c < 4; c++) { /* chunk sizes that do and do not divide n, and one above it */
            p.chunk = CHUNKS[c];
            check_sequential(&p, Q, K, V, n, d, dv, Oq, st, 1);
        }
        p.chunk = 0;
    } else { /* factors: L·Rᵀ = M */
        long r;
        ck_assert_int_eq(av_factor_rank(&r, &p, n, d), AV_OK);
        float *L = malloc(sizeof(float) * n * r), *R = malloc(sizeof(float) * n * r);
        size_t wf = av_factors_work(&p, n, d);
        void *fw = work_for(wf);
        ck_assert_int_eq(av_factors(L, R, Q, K, n, d, &p, fw, wf), st);
        double worst = 0, mx = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (long f = 0; f < r; f++) s += (double)L[(size_t)i * r + f] * R[(size_t)j * r + f];
                worst = fmax(worst, fabs(s - M[(size_t)i * n + j]));
                mx = fmax(mx, fabs(M[(size_t)i * n + j]));
            }
        ck_assert_msg(worst <= 1e-5 * mx, "%s factors %g", av_variant_name(variant), worst / mx);
        free(L); free(R); free(fw);
    }
    free(Q); free(K); free(V); free(Oq); free(Ol); free(O2); free(M); free(w);
}

START_TEST(test_paths_agree) {
    int variant = _i;
    if (!has_features(variant)) return;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 2; b++)
            for (int causal = 0; causal <= 1; causal++) {
                if ((causal && !has_causal(variant)) || (!causal && causal_only(variant))) continue;
                check_paths(variant, causal, NS[a], DS[b], b == 0 ? 5 : 13, 0);
                if (causal && avi_variant_reads(variant, AV_KNOB_DECAY)) check_paths(variant, 1, NS[a], DS[b], 7, 0.85);
            }
}
END_TEST

/* The non-causal linear path's blocked float64 state and readout give the bits of the token-by-token form
 * (S ← S + φ_k vᵀ, z ← z + φ_k over all tokens, then o_i = Sᵀφ_q / norm(φ_q·z)), edge tiles included. */
START_TEST(test_linear_blocked_bits) {
    static const int VARS[] = {AV_ELU, AV_RELU, AV_TAYLOR};
    static const int SIZES[][3] = {{7, 3, 5}, {37, 13, 13}, {130, 64, 64}, {33, 5, 17}};
    for (int v = 0; v < 3; v++)
        for (int t = 0; t < 4; t++) {
            int n = SIZES[t][0], d = SIZES[t][1], dv = SIZES[t][2];
            av_params p;
            av_params_default(&p, VARS[v]);
            p.order = 2;
            long r;
            ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK);
            float *Q, *K, *V;
            inputs(&Q, &K, &V, n, d, dv, 77u * n + d, 0.8);
            float *O = malloc(sizeof(float) * n * dv), *PQ = malloc(sizeof(float) * n * r);
            float *PK = malloc(sizeof(float) * n * r), *Oref = malloc(sizeof(float) * n * dv);
            size_t wl = av_linear_work(&p, n, d, dv), wf = av_features_work(&p, n, d);
            void *w = work_for(wl > wf ? wl : wf);
            int st = av_linear(O, Q, K, V, n, d, dv, &p, w, wl);
            ck_assert(st >= 0);
            ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, w, wf), AV_OK);
            double *S = calloc((size_t)r * dv, sizeof(double)), *z = calloc((size_t)r, sizeof(double));
            for (int j = 0; j < n; j++)
                for (long f = 0; f < r; f++) {
                    double a = PK[(size_t)j * r + f];
                    z[f] += a;
                    for (int c = 0; c < dv; c++) S[(size_t)f * dv + c] += a * V[(size_t)j * dv + c];
                }
            for (int i = 0; i < n; i++) {
                double den = 0;
                for (long f = 0; f < r; f++) den += PQ[(size_t)i * r + f] * z[f];
                double eps = VARS[v] == AV_TAYLOR ? 0 : 1e-6, fac = den + eps == 0 ? 1.0 : 1.0 / (den + eps);
                for (int c = 0; c < dv; c++) {
                    double acc = 0;
                    for (long f = 0; f < r; f++) acc += (double)PQ[(size_t)i * r + f] * S[(size_t)f * dv + c];
                    Oref[(size_t)i * dv + c] = (float)(acc * fac);
                }
            }
            ck_assert_msg(memcmp(O, Oref, sizeof(float) * n * dv) == 0, "%s n=%d d=%d dv=%d",
                          av_variant_name(VARS[v]), n, d, dv);
            free(Q); free(K); free(V); free(O); free(PQ); free(PK); free(Oref); free(w); free(S); free(z);
        }
}
END_TEST

/* avs_kernel_f64_dtd_acc (the non-causal linear path's state and readout tiles) against the plain sums: each
 * entry continued from its start value over kk = 0, 1, … in order, so a split of k into blocks gives the bits of
 * one pass; with products of floats (exact in float64) and values of mixed sign and scale. */
START_TEST(test_kernel_f64_dtd_acc) {
    enum { K = 37, LDA = 5, LDB = 11, LDC = 13 };
    double At[K * LDA], B[K * LDB], C[2 * LDC], R[2 * LDC];
    av_rng g;
    av_rng_seed(&g, 12345);
    for (int i = 0; i < K * LDA; i++) At[i] = (float)(av_rng_normal(&g) * 3);
    for (int i = 0; i < K * LDB; i++) B[i] = (float)ldexp(av_rng_normal(&g), i % 7 - 3);
    for (int split = 0; split <= K; split += 6) {
        for (int i = 0; i < 2 * LDC; i++) C[i] = R[i] = i % 3 ? 0.0 : 0.25 * i;
        for (int a = 0; a < 2; a++)
            for (int c = 0; c < 8; c++)
                for (int kk = 0; kk < K; kk++) R[a * LDC + 2 + c] += At[kk * LDA + 1 + a] * B[kk * LDB + 3 + c];
        avs_kernel_f64_dtd_acc(C + 2, LDC, At + 1, LDA, B + 3, LDB, split);
        avs_kernel_f64_dtd_acc(C + 2, LDC, At + (size_t)split * LDA + 1, LDA, B + (size_t)split * LDB + 3, LDB, K - split);
        ck_assert_msg(memcmp(C, R, sizeof C) == 0, "split %d", split);
    }
}
END_TEST

/* The causal linear path's fused scan (scan_causal, avs_scan_block8) gives the bits of n calls of
 * av_recurrent_step (state_update then state_readout, the reference form), decayed or not, with features that are
 * exactly 0 (relu, cosformer), and edge columns (dv not a multiple of 8). */
START_TEST(test_linear_causal_scan_bits) {
    static const int VARS[] = {AV_ELU, AV_RELU, AV_COSFORMER, AV_PERFORMER};
    static const int SIZES[][3] = {{7, 3, 5}, {37, 13, 13}, {70, 64, 64}, {33, 5, 17}, {20, 8, 8}};
    static const double DECAYS[] = {1.0, 0.9, 0.5};
    for (int v = 0; v < 4; v++)
        for (int t = 0; t < 5; t++)
            for (int g = 0; g < 3; g++) {
                int n = SIZES[t][0], d = SIZES[t][1], dv = SIZES[t][2];
                av_params p;
                av_params_default(&p, VARS[v]);
                p.causal = 1;
                p.decay = DECAYS[g];
                p.m = 24;
                long r;
                ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK);
                float *Q, *K, *V;
                inputs(&Q, &K, &V, n, d, dv, 91u * n + d + g, 0.8);
                float *O = malloc(sizeof(float) * n * dv), *PQ = malloc(sizeof(float) * n * r);
                float *PK = malloc(sizeof(float) * n * r), *Oref = malloc(sizeof(float) * n * dv);
                size_t wl = av_linear_work(&p, n, d, dv), wf = av_features_work(&p, n, d);
                void *w = work_for(wl > wf ? wl : wf);
                ck_assert(av_linear(O, Q, K, V, n, d, dv, &p, w, wl) >= 0);
                ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, w, wf), AV_OK);
                double *S = calloc((size_t)r * dv, sizeof(double)), *z = calloc((size_t)r, sizeof(double));
                for (int i = 0; i < n; i++)
                    ck_assert(av_recurrent_step(Oref + (size_t)i * dv, S, z, PQ + (size_t)i * r, PK + (size_t)i * r,
                                                V + (size_t)i * dv, r, dv, n, &p) >= 0);
                ck_assert_msg(memcmp(O, Oref, sizeof(float) * n * dv) == 0, "%s n=%d d=%d dv=%d decay %g",
                              av_variant_name(VARS[v]), n, d, dv, DECAYS[g]);
                free(Q); free(K); free(V); free(O); free(PQ); free(PK); free(Oref); free(w); free(S); free(z);
            }
}
END_TEST

START_TEST(test_focused_dwc_linear) {
    int n = 37, d = 13, dv = 7;
    av_params p;
    av_params_default(&p, AV_FOCUSED);
    p.dwc_kernel = 9;
    p.seed = 5;
    float *Q, *K, *V;
    inputs(&Q, &K, &V, n, d, dv, 12, 1.0);
    float *Oq = malloc(sizeof(float) * n * dv), *Ol = malloc(sizeof(float) * n * dv);
    size_t wa = av_attend_work(&p, n, d, dv), wl = av_linear_work(&p, n, d, dv);
    void *w = work_for(wa > wl ? wa : wl);
    ck_assert_int_eq(av_attend(Oq, NULL, Q, K, V, n, d, dv, &p, w, wa), AV_OK);
    ck_assert_int_eq(av_linear(Ol, Q, K, V, n, d, dv, &p, w, wl), AV_OK);
    ck_assert(rel_err(Ol, Oq, (size_t)n * dv) <= 1e-5);
    free(Q); free(K); free(V); free(Oq); free(Ol); free(w);
}
END_TEST

/* Numerical rank of a float n×n matrix: modified Gram–Schmidt with column pivoting, in double;
 * a column counts when its residual norm exceeds tol·(largest column norm). */
static int numerical_rank(const float *M, int n, double tol) {
    double *A = malloc(sizeof(double) * n * n), big = 0;
    int *used = calloc((size_t)n, sizeof(int)), rank = 0;
    for (size_t i = 0; i < (size_t)n * n; i++) A[i] = M[i];
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++) s += A[(size_t)i * n + j] * A[(size_t)i * n + j];
        big = fmax(big, sqrt(s));
    }
    for (int step = 0; step < n; step++) {
        int best = -1;
        double bn = 0;
        for (int j = 0; j < n; j++) {
            if (used[j]) continue;
            double s = 0;
            for (int i = 0; i < n; i++) s += A[(size_t)i * n + j] * A[(size_t)i * n + j];
            if (sqrt(s) > bn) bn = sqrt(s), best = j;
        }
        if (best < 0 || bn <= tol * big) break;
        used[best] = 1;
        rank++;
        for (int i = 0; i < n; i++) A[(size_t)i * n + best] /= bn;
        for (int j = 0; j < n; j++) {
            if (used[j]) continue;
            double s = 0;
            for (int i = 0; i < n; i++) s += A[(size_t)i * n + best] * A[(size_t)i * n + j];
            for (int i = 0; i < n; i++) A[(size_t)i * n + j] -= s * A[(size_t)i * n + best];
        }
    }
    free(A);
    free(used);
    return rank;
}

START_TEST(test_rank_bound) {
    int n = 130, d = 3;
    float *Q, *K, *V;
    inputs(&Q, &K, &V, n, d, 1, 77, 1.0);
    float *M = malloc(sizeof(float) * n * n);
    for (int t = 0; t < AV_VARIANT_COUNT; t++) { /* every kernel-class row: rank ≤ its feature dimension */
        if (vd_of(t)->cls != AV_CLASS_KERNEL) continue;
        av_params p;
        av_params_default(&p, t);
        long r;
        ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK);
        run_matrix(M, Q, K, n, d, &p);
        int rk = numerical_rank(M, n, 1e-5);
        ck_assert_msg(rk <= r && rk >= 1, "%s rank %d > r = %ld", av_variant_name(t), rk, r);
    }
    av_params p;
    av_params_default(&p, AV_SOFTMAX);
    p.scale = 1;
    run_matrix(M, Q, K, n, d, &p);
    int rk = numerical_rank(M, n, 1e-5);
    ck_assert_msg(rk > 2 * d, "softmax rank %d", rk); /* exp(QKᵀ) is not rank-limited by d */
    free(Q); free(K); free(V); free(M);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// status codes

START_TEST(test_status_codes) {
    int n = 7, d = 3, dv = 2;
    float *Q, *K, *V;
    inputs(&Q, &K, &V, n, d, dv, 1, 1.0);
    float M[49], O[14], o[2];
    double S[64] = {0}, z[8] = {0}, cost[4];
    static unsigned char work[1 << 16];
    av_params p;
    av_params_default(&p, AV_SOFTMAX);
    size_t wb = av_matrix_work(&p, n, d);
    ck_assert_int_eq(av_matrix(NULL, Q, K, n, d, &p, work, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, NULL, work, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, NULL, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_matrix(M, Q, K, 0, d, &p, work, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_matrix(M, Q, K, n, AV_MAX_D + 1, &p, work, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, wb - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_attend(O, M, Q, K, V, n, d, 0, &p, work, sizeof work), AV_ERR_SIZE);
    ck_assert_int_eq(av_attend(O, NULL, Q, K, V, n, d, dv, &p, work, av_attend_work(&p, n, d, dv) - 1),
                     AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_attend_work(&p, n, d, 0), 0);
    p.scale = -1;
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_ERR_KNOB);
    ck_assert_int_eq(av_matrix_work(&p, n, d), 0);
    ck_assert_int_eq(av_scores(M, Q, K, n, d, -1, 0), AV_ERR_KNOB);
    ck_assert_int_eq(av_scores(M, Q, K, n, d, 0, 2), AV_ERR_KNOB);
    ck_assert_int_eq(av_scores(NULL, Q, K, n, d, 0, 0), AV_ERR_NULL);
    ck_assert_int_eq(av_scores(M, Q, K, n, 0, 0, 0), AV_ERR_SIZE);
    p.scale = 0;
    p.variant = 99;
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_ERR_VARIANT);
    av_params_default(&p, AV_EFFICIENT);
    p.causal = 1;
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_ERR_NO_CAUSAL);
    ck_assert_int_eq(av_linear(O, Q, K, V, n, d, dv, &p, work, sizeof work), AV_ERR_NO_CAUSAL);
    /* NaN / Inf in inputs */
    av_params_default(&p, AV_ELU);
    Q[5] = NAN;
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_ERR_NONFINITE);
    ck_assert_int_eq(av_scores(M, Q, K, n, d, 0, 0), AV_ERR_NONFINITE);
    Q[5] = 0;
    V[3] = INFINITY;
    ck_assert_int_eq(av_attend(O, M, Q, K, V, n, d, dv, &p, work, sizeof work), AV_ERR_NONFINITE);
    ck_assert_int_eq(av_linear(O, Q, K, V, n, d, dv, &p, work, sizeof work), AV_ERR_NONFINITE);
    float phi[3] = {1, NAN, 1}, ok3[3] = {1, 1, 1};
    ck_assert_int_eq(av_recurrent_step(o, S, z, phi, ok3, ok3, 3, dv, n, &p), AV_ERR_NONFINITE);
    V[3] = 0;
    /* workspace of the linear path */
    ck_assert_int_eq(av_linear(O, Q, K, V, n, d, dv, &p, work, av_linear_work(&p, n, d, dv) - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_linear(O, Q, K, V, n, d, dv, &p, NULL, 100), AV_ERR_NULL);
    /* no linear path / no features */
    av_params_default(&p, AV_SOFTMAX);
    long r;
    ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_ERR_NO_LINEAR);
    ck_assert_int_eq(av_linear(O, Q, K, V, n, d, dv, &p, work, sizeof work), AV_ERR_NO_LINEAR);
    ck_assert_int_eq(av_factor_rank(&r, &p, n, d), AV_ERR_NO_LINEAR);
    ck_assert_int_eq(av_recurrent_step(o, S, z, ok3, ok3, ok3, 3, dv, n, &p), AV_ERR_NO_LINEAR);
    ck_assert_int_eq(av_recurrent_step(o, S, z, ok3, ok3, ok3, 0, dv, n, &p), AV_ERR_SIZE);
    ck_assert_int_eq(av_recurrent_step(NULL, S, z, ok3, ok3, ok3, 3, dv, n, &p), AV_ERR_NULL);
    ck_assert_int_eq(av_linear_work(&p, n, d, dv), 0);
    av_params_default(&p, AV_ELU);
    p.causal = 1;
    ck_assert_int_eq(av_factor_rank(&r, &p, n, d), AV_ERR_NO_LINEAR); /* causal kernel: no factors */
    ck_assert_int_eq(av_factors(M, M, Q, K, n, d, &p, work, sizeof work), AV_ERR_NO_LINEAR);
    av_params_default(&p, AV_FOCUSED);
    p.dwc_kernel = 3;
    ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_ERR_NO_LINEAR);
    ck_assert_int_eq(av_factor_rank(&r, &p, n, d), AV_ERR_NO_LINEAR);
    p.dwc_kernel = 4;
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_ERR_KNOB);
    av_params_default(&p, AV_EFFICIENT);
    ck_assert_int_eq(av_recurrent_step(o, S, z, ok3, ok3, ok3, 3, dv, n, &p), AV_ERR_NO_CAUSAL);
    /* feature dimension over the cap: the matrix still works through the closed form */
    int dd = 64, nn = 7;
    float *Q2, *K2, *V2;
    inputs(&Q2, &K2, &V2, nn, dd, dv, 3, 0.3);
    av_params_default(&p, AV_TAYLOR);
    p.order = 4;
    ck_assert_int_eq(av_feature_dim(&r, &p, nn, dd), AV_ERR_FEATURE_DIM);
    ck_assert(r > AV_MAX_FEATURE_DIM);
    ck_assert_int_eq(av_linear(O, Q2, K2, V2, nn, dd, dv, &p, work, sizeof work), AV_ERR_FEATURE_DIM);
    ck_assert_int_eq(av_factor_rank(&r, &p, nn, dd), AV_ERR_FEATURE_DIM);
    float *PQ = malloc(4), *PK = malloc(4);
    ck_assert_int_eq(av_features(PQ, PK, Q2, K2, nn, dd, &p, work, sizeof work), AV_ERR_FEATURE_DIM);
    ck_assert_int_eq(run_matrix(M, Q2, K2, nn, dd, &p), AV_OK);
    double c4[4];
    ck_assert_int_eq(av_cost(c4, &p, nn, dd, dv), AV_OK);
    ck_assert(c4[2] == -1 && c4[3] == -1 && c4[0] > 0);
    free(PQ); free(PK); free(Q2); free(K2); free(V2);
    ck_assert_int_eq(av_cost(NULL, &p, n, d, dv), AV_ERR_NULL);
    ck_assert_int_eq(av_cost(cost, &p, n, d, 0), AV_ERR_SIZE);
    free(Q); free(K); free(V);
}
END_TEST

/* exp and hedgehog features of huge inputs: a row sum can be tiny but positive (normalised in double,
 * so nothing turns Inf/NaN and the row sums to 1) or exactly 0 (all features underflow: reported as an
 * underflow, not as a non-positive normaliser, since these products are positive by definition; relu's
 * row of truly zero products is the other warning). */
START_TEST(test_tiny_row_sums) {
    const int n = 64, d = 16, variants[] = {AV_EXP, AV_HEDGEHOG};
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *M = malloc(sizeof(float) * n * n);
    tu_fill_normal(Q, (size_t)n * d, 0.0, 100.0, 3);
    tu_fill_normal(K, (size_t)n * d, 0.0, 100.0, 4);
    for (int v = 0; v < 2; v++) {
        av_params p;
        av_params_default(&p, variants[v]);
        size_t wb = av_matrix_work(&p, n, d);
        void *work = malloc(wb);
        ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, wb), AV_WARN_UNDERFLOW_ROW);
        int zero_rows = 0, tiny_rows = 0;
        for (int i = 0; i < n; i++) {
            double sum = 0;
            for (int j = 0; j < n; j++) {
                ck_assert(isfinite(M[i * n + j]) && M[i * n + j] >= 0);
                sum += M[i * n + j];
            }
            if (sum == 0) zero_rows++;
            else ck_assert_double_eq_tol(sum, 1.0, 1e-5);
        }
        /* both kinds occur with these inputs: some rows vanish, the others are normalised */
        for (int i = 0; i < n; i++) tiny_rows += M[i * n] != 0 || M[i * n + 1] != 0;
        ck_assert_int_gt(zero_rows, 0);
        ck_assert_int_lt(zero_rows, n);
        ck_assert_int_gt(tiny_rows, 0);
        free(work);
    }
    free(Q); free(K); free(M);
}
END_TEST

START_TEST(test_warnings) {
    int n = 7, d = 3, dv = 2;
    float *Q, *K, *V;
    inputs(&Q, &K, &V, n, d, dv, 1, 1.0);
    float M[49], O[14];
    static unsigned char work[1 << 16];
    av_params p;
    /* relu with an all-negative query row: its weights are 0, reported */
    for (int f = 0; f < d; f++) Q[2 * d + f] = -1.0f - f;
    av_params_default(&p, AV_RELU);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_WARN_ZERO_ROW);
    for (int j = 0; j < n; j++) ck_assert(M[2 * n + j] == 0.0f);
    ck_assert_int_eq(av_linear(O, Q, K, V, n, d, dv, &p, work, sizeof work), AV_WARN_ZERO_ROW);
    ck_assert(O[2 * dv] == 0.0f);
    p.causal = 1;
    ck_assert_int_eq(av_attend(O, M, Q, K, V, n, d, dv, &p, work, sizeof work), AV_WARN_ZERO_ROW);
    /* taylor order 1: T_1(s) = 1 + s is negative for s < −1, the row sum can go ≤ 0 */
    av_params_default(&p, AV_TAYLOR);
    p.order = 1;
    p.scale = 1;
    for (int i = 0; i < n * d; i++) { Q[i] = 2.0f; K[i] = -2.0f; }
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_WARN_ZERO_ROW);
    for (int i = 0; i < n * n; i++) ck_assert(isfinite(M[i]));
    /* overflow: taylor's closed form beyond float, softmax logits beyond float, hedgehog Wᵀx */
    for (int i = 0; i < n * d; i++) { Q[i] = 1e10f; K[i] = 1e10f; }
    av_params_default(&p, AV_TAYLOR);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_WARN_PRODUCT_OVERFLOW);
    for (int i = 0; i < n * d; i++) { Q[i] = 1e20f; K[i] = 1e20f; }
    av_params_default(&p, AV_SOFTMAX);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_WARN_PRODUCT_OVERFLOW);
    ck_assert_int_eq(av_scores(M, Q, K, n, d, 0, 1), AV_WARN_PRODUCT_OVERFLOW);
    ck_assert_int_eq(av_scores(M, Q, K, n, d, 0, 0), AV_WARN_PRODUCT_OVERFLOW);
    Q[0] = -1e20f; /* one q·k of −Inf: the raw scores hold −Inf, so they are not "finite" */
    for (int i = 1; i < n * d; i++) Q[i] = K[i] = 1.0f;
    K[0] = 1e20f;
    ck_assert_int_eq(av_scores(M, Q, K, n, d, 1, 0), AV_WARN_PRODUCT_OVERFLOW);
    for (int i = 0; i < n * d; i++) { Q[i] = 1e20f; K[i] = 1e20f; }
    float W[9];
    for (int i = 0; i < 9; i++) W[i] = 1e30f;
    av_params_default(&p, AV_HEDGEHOG);
    av_params_set_hedgehog(&p, W, 3);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_WARN_OVERFLOW);
    ck_assert_int_eq(av_linear(O, Q, K, V, n, d, dv, &p, work, sizeof work), AV_WARN_OVERFLOW);
    W[0] = NAN;
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_ERR_NONFINITE);
    /* the recurrent step: a zero normaliser is reported */
    av_params_default(&p, AV_RELU);
    float zero3[3] = {0, 0, 0}, one3[3] = {1, 1, 1}, o[2];
    double S[6] = {0}, z[3] = {0};
    ck_assert_int_eq(av_recurrent_step(o, S, z, zero3, one3, one3, 3, dv, n, &p), AV_WARN_ZERO_ROW);
    ck_assert(o[0] == 0.0f && o[1] == 0.0f);
    free(Q); free(K); free(V);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// cost model, low-rank dispatch

/* The promise of the header: AV_OK, AV_WARN_ZERO_ROW and AV_WARN_NO_CONVERGENCE mean finite outputs. Every
 * variant, both masks, on hostile inputs (huge queries against denormal keys, everything near 1e30, mixed
 * signs), through every path that writes floats. */
static int promises_finite(int st) { return st == AV_OK || st == AV_WARN_ZERO_ROW || st == AV_WARN_NO_CONVERGENCE; }
static int all_finite_f(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}
static void hostile(float *Q, float *K, int n, int d, int pattern) {
    for (int i = 0; i < n * d; i++) {
        switch (pattern) {
        case 0: Q[i] = i < d ? 1e33f : 1.0f; K[i] = 1e-40f; break;   /* a reported cosFormer case, generalised */
        case 1: Q[i] = 1e30f; K[i] = 1e30f; break;
        case 2: Q[i] = 1e-40f; K[i] = i % 2 ? 1e33f : -1e33f; break;
        case 3: Q[i] = i % 3 ? -1e30f : 1e30f; K[i] = i % 2 ? 1e30f : 3e-39f; break;
        default: Q[i] = (float)(i % 5) * 1e19f; K[i] = -(float)(i % 7) * 1e19f; break;
        }
    }
}
START_TEST(test_finite_promise) {
    const int n = 5, d = 2, dv = 3, count = AV_VARIANT_COUNT * 2 * 5;
    float Q[10], K[10], V[15], M[25], O[15], L[5 * 64], R[5 * 64];
    for (int i = 0; i < n * dv; i++) V[i] = (float)(i % 4) - 1.5f;
    int checked = 0;
    for (int c = 0; c < count; c++) {
        int v = c / 10, causal = (c / 5) % 2, pattern = c % 5;
        av_params p;
        av_params_default(&p, v);
        p.causal = causal;
        if (av_params_resolve(&p, &p, n, d) != AV_OK) continue;
        hostile(Q, K, n, d, pattern);
        size_t wb = av_attend_work(&p, n, d, dv), wl = av_linear_work(&p, n, d, dv), wf = av_factors_work(&p, n, d);
        size_t big = wb > wl ? wb : wl;
        void *work = malloc((big > wf ? big : wf) + 1);
        int st = av_matrix(M, Q, K, n, d, &p, work, wb);
        ck_assert_msg(!promises_finite(st) || all_finite_f(M, 25), "%s causal %d pattern %d: av_matrix %d with Inf/NaN",
                      av_variant_name(v), causal, pattern, st);
        st = av_attend(O, NULL, Q, K, V, n, d, dv, &p, work, wb);
        ck_assert_msg(!promises_finite(st) || all_finite_f(O, 15), "%s causal %d pattern %d: av_attend %d with Inf/NaN",
                      av_variant_name(v), causal, pattern, st);
        if (wl) {
            st = av_linear(O, Q, K, V, n, d, dv, &p, work, wl);
            ck_assert_msg(!promises_finite(st) || all_finite_f(O, 15), "%s causal %d pattern %d: av_linear %d with Inf/NaN",
                          av_variant_name(v), causal, pattern, st);
        }
        long r;
        if (wf && av_factor_rank(&r, &p, n, d) == AV_OK && r <= 64) {
            st = av_factors(L, R, Q, K, n, d, &p, work, wf);
            ck_assert_msg(!promises_finite(st) || (all_finite_f(L, (size_t)n * r) && all_finite_f(R, (size_t)n * r)),
                          "%s pattern %d: av_factors %d with Inf/NaN", av_variant_name(v), pattern, st);
        }
        free(work);
        checked++;
    }
    ck_assert_int_ge(checked, 100);
}
END_TEST

/* A reported reproduction: cosFormer, n = 2, d = 1, Q = [[1e33], [1]], K = [[1e-40], [1e-40]]. The matrix is
 * finite, so the factors must be too (balanced by c), and L·Rᵀ must equal M. */
START_TEST(test_factors_balanced) {
    float Q[2] = {1e33f, 1.0f}, K[2] = {1e-40f, 1e-40f}, M[4], L[4], R[4];
    av_params p;
    av_params_default(&p, AV_COSFORMER);
    static unsigned char work[4096];
    ck_assert_int_eq(av_matrix(M, Q, K, 2, 1, &p, work, sizeof work), AV_OK);
    long r;
    ck_assert_int_eq(av_factor_rank(&r, &p, 2, 1), AV_OK);
    ck_assert_int_eq(r, 2);
    ck_assert_int_eq(av_factors(L, R, Q, K, 2, 1, &p, work, av_factors_work(&p, 2, 1)), AV_OK);
    for (int i = 0; i < 4; i++) ck_assert(isfinite(L[i]) && isfinite(R[i]));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double lr = (double)L[2 * i] * R[2 * j] + (double)L[2 * i + 1] * R[2 * j + 1];
            ck_assert_msg(fabs(lr - M[2 * i + j]) <= 1e-3 * fabs(M[2 * i + j]) + 1e-30, "L·Rᵀ[%d,%d] = %g, M = %g", i, j,
                          lr, M[2 * i + j]);
        }
    double sv[2], floor_;
    static unsigned char sw[1 << 16];
    ck_assert_int_eq(av_lowrank_singular_values(sv, &floor_, L, R, 2, r, sw, sizeof sw), AV_OK);
    ck_assert(sv[0] > 0 && isfinite(sv[0]));
}
END_TEST

/* Defect: all-1e30 inputs with relu, elu, cosformer and focused overflow q·k (a product), not an exponential;
 * exp-based feature maps that overflow are AV_WARN_OVERFLOW. */
START_TEST(test_overflow_cause) {
    enum { n = 3, d = 4 };
    float Q[n * d], K[n * d], M[n * n];
    static unsigned char work[1 << 16];
    const int product[] = {AV_RELU, AV_ELU, AV_COSFORMER, AV_FOCUSED, AV_SOFTMAX};
    for (int i = 0; i < n * d; i++) Q[i] = K[i] = 1e30f;
    for (size_t t = 0; t < sizeof product / sizeof *product; t++) {
        av_params p;
        av_params_default(&p, product[t]);
        ck_assert_msg(av_matrix(M, Q, K, n, d, &p, work, sizeof work) == AV_WARN_PRODUCT_OVERFLOW, "%s",
                      av_variant_name(product[t]));
    }
    float W[d * d];
    for (int i = 0; i < d * d; i++) W[i] = 1e30f;
    av_params p;
    av_params_default(&p, AV_HEDGEHOG);
    av_params_set_hedgehog(&p, W, d);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, work, sizeof work), AV_WARN_OVERFLOW);
    ck_assert_str_ne(av_status_string(AV_WARN_PRODUCT_OVERFLOW), av_status_string(AV_WARN_OVERFLOW));
}
END_TEST

/* A workspace need beyond size_t is "too large for this build", not "out of range". Natively size_t is
 * 64 bits, so only the status range and the sentence are checked here; tests/js checks the wasm32 case. */
START_TEST(test_status_range) {
    for (int st = AV_STATUS_MIN; st <= AV_STATUS_MAX; st++)
        if (st != -11) ck_assert_str_ne(av_status_string(st), "unknown status code");
    ck_assert_str_eq(av_status_string(AV_STATUS_MAX + 1), "unknown status code");
    ck_assert_str_eq(av_status_string(AV_STATUS_MIN - 1), "unknown status code");
    ck_assert(strstr(av_status_string(AV_ERR_TOO_LARGE), "too large for this build") != NULL);
    ck_assert(av_limit(AV_LIMIT_MAX_N) == AV_MAX_N && av_limit(AV_LIMIT_MAX_D) == AV_MAX_D);
    ck_assert(av_limit(AV_LIMIT_STATUS_MIN) == AV_STATUS_MIN && av_limit(AV_LIMIT_STATUS_MAX) == AV_STATUS_MAX);
    ck_assert(av_limit(AV_LIMIT_SIZE_MAX) == (double)SIZE_MAX && av_limit(AV_LIMIT_COUNT) == -1);
}
END_TEST

START_TEST(test_cost) {
    av_params p;
    double c[4];
    int n = 128, d = 64, dv = 32;
    av_params_default(&p, AV_SOFTMAX);
    ck_assert_int_eq(av_cost(c, &p, n, d, dv), AV_OK);
    ck_assert(c[0] == (double)n * n * (d + dv) && c[1] == 4.0 * n * n && c[2] == -1 && c[3] == -1);
    av_params_default(&p, AV_ELU);
    ck_assert_int_eq(av_cost(c, &p, n, d, dv), AV_OK);
    ck_assert(c[0] == 2.0 * n * d + (double)n * n * (d + dv));
    ck_assert(c[2] == 2.0 * n * d + 2.0 * n * d * dv && c[3] == 4.0 * (d * dv + d));
    av_params_default(&p, AV_LINFORMER);
    p.s = 16;
    ck_assert_int_eq(av_cost(c, &p, n, d, dv), AV_OK);
    ck_assert(c[2] == 2.0 * 16 * n * d + 2.0 * 16 * n * dv);
    /* the crossover: linear pays only when n is well above d (seed "Linear Attention") */
    av_params_default(&p, AV_ELU);
    av_cost(c, &p, 16, 64, 64);
    ck_assert(c[2] > c[0]);
    av_cost(c, &p, 1024, 64, 64);
    ck_assert(c[2] < c[0]);
}
END_TEST

START_TEST(test_lowrank_dispatch) {
    int n = 37, d = 13, dv = 5;
    float *Q, *K, *V;
    inputs(&Q, &K, &V, n, d, dv, 4, 1.0);
    for (int v = AV_LINFORMER; v <= AV_NYSTROM; v += AV_NYSTROM - AV_LINFORMER) {
        av_params p;
        av_params_default(&p, v);
        long r;
        ck_assert_int_eq(av_factor_rank(&r, &p, n, d), AV_OK);
        ck_assert_int_eq(r, n < 64 ? n : 64);
        float *M = malloc(sizeof(float) * n * n), *O = malloc(sizeof(float) * n * dv);
        int st = run_matrix(M, Q, K, n, d, &p);
        ck_assert_msg(st >= 0, "%s: %d", av_variant_name(v), st);
        size_t wl = av_linear_work(&p, n, d, dv);
        void *w = work_for(wl);
        ck_assert(av_linear(O, Q, K, V, n, d, dv, &p, w, wl) >= 0);
        p.causal = 1;
        ck_assert_int_eq(run_matrix(M, Q, K, n, d, &p), AV_ERR_NO_CAUSAL);
        free(M); free(O); free(w);
    }
    free(Q); free(K); free(V);
}
END_TEST

/* KL(A_i ‖ M_i) averaged over rows, in float64 (docs/readouts.md's row_kl_mean): NaN when M is 0 where A > 0. */
static double kl_mean_d(const double *A, const double *M, int n) {
    double t = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double a = A[(size_t)i * n + j], m = M[(size_t)i * n + j];
            if (a > 0) t += m > 0 ? a * log(a / m) : NAN;
        }
    return t / n;
}

/* Focused features far below 2^−63 (an x ≤ 0 next to an x = 8 in its row: φ ≈ 1e-20 at p = 3, 1e-27 at
 * p = 4) are the canonical φ and must reach M: row 0 of the causal matrix has only products with one
 * such factor (q_0 and k_0 are large in different features), so cutting them off leaves a zero row, an
 * AV_WARN_ZERO_ROW and no KL. Every entry against the float64 reference, relative to itself. */
START_TEST(test_focused_tiny_features) {
    const int n = 37, d = 13;
    const double powers[] = {3, 3.1, 4};
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *M = malloc(sizeof(float) * n * n);
    float *S = malloc(sizeof(float) * n * n);
    double *A = malloc(sizeof(double) * n * n), *R = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n; i++)
        for (int f = 0; f < d; f++) {
            Q[(size_t)i * d + f] = f == i % d ? 8.0f : -1.0f - 0.1f * (float)(f % 3);
            K[(size_t)i * d + f] = f == (i + 1 + i / d) % d ? 8.0f : -0.5f;
        }
    for (int t = 0; t < 3; t++)
        for (int causal = 0; causal < 2; causal++) {
            av_params p, r, sm;
            av_params_default(&p, AV_FOCUSED);
            p.p = powers[t];
            p.causal = causal;
            ck_assert_int_eq(av_params_resolve(&r, &p, n, d), AV_OK);
            ck_assert_int_eq(run_matrix(M, Q, K, n, d, &p), AV_OK);
            tref_matrix(A, Q, K, n, d, &r);
            for (size_t e = 0; e < (size_t)n * n; e++)
                ck_assert_msg(fabs(M[e] - A[e]) <= 2e-5 * A[e] + 1e-37, "p=%g causal=%d M[%zu,%zu] %.9g vs %.9g",
                              p.p, causal, e / n, e % n, (double)M[e], A[e]);
            av_params_default(&sm, AV_SOFTMAX);
            sm.causal = causal;
            ck_assert_int_eq(run_matrix(S, Q, K, n, d, &sm), AV_OK);
            double vals[AV_R_COUNT];
            int reasons[AV_R_COUNT];
            size_t wb = av_readouts_work(n, 1);
            void *w = work_for(wb);
            ck_assert_int_eq(av_readouts(vals, reasons, M, NULL, 0, S, NULL, n, 1, causal, 0, w, wb), AV_OK);
            free(w);
            ck_assert_msg(isfinite(vals[AV_R_ROW_KL_MEAN]), "p=%g causal=%d: row_kl_mean undefined (reason %d)", p.p,
                          causal, reasons[AV_R_ROW_KL_MEAN]);
            for (size_t e = 0; e < (size_t)n * n; e++) R[e] = S[e];
            double want = kl_mean_d(R, A, n); // the same KL with the float64 focused matrix
            ck_assert_msg(fabs(vals[AV_R_ROW_KL_MEAN] - want) <= 1e-4 * (1 + want), "p=%g: KL %.9g vs %.9g", p.p,
                          vals[AV_R_ROW_KL_MEAN], want);
        }
    free(Q); free(K); free(M); free(S); free(A); free(R);
}
END_TEST

/* The gemm's power-of-two scalings (src/attention.c, focused_shifts) where their span is capped: inputs of
 * 1e17 (products near 1e36: no room above, so nothing may overflow that the unscaled product would not) and
 * p = 6.5 and 9.5 (tiny·tiny products below float range: the scalings stop at the top). Each matrix against
 * the float64 reference to 2e-5 of its largest entry, status AV_OK. */
START_TEST(test_focused_scaling_capped) {
    const int n = 29, d = 11;
    const double cases[][2] = {{3, 1e17}, {3.1, 1e17}, {6.5, 1}, {9.5, 2}};
    for (int t = 0; t < 4; t++)
        for (int causal = 0; causal < 2; causal++) {
            float *Q, *K, *V, *M = malloc(sizeof(float) * n * n);
            double *A = malloc(sizeof(double) * n * n);
            inputs(&Q, &K, &V, n, d, 1, 300u + (uint64_t)t, cases[t][1]);
            av_params p, r;
            av_params_default(&p, AV_FOCUSED);
            p.p = cases[t][0];
            p.causal = causal;
            ck_assert_int_eq(av_params_resolve(&r, &p, n, d), AV_OK);
            ck_assert_int_eq(run_matrix(M, Q, K, n, d, &p), AV_OK);
            tref_matrix(A, Q, K, n, d, &r);
            double scale = tu_max_abs_d(A, (size_t)n * n), err = tu_max_abs_diff_d(M, A, (size_t)n * n);
            ck_assert_msg(err <= 2e-5 * scale, "p=%g std=%g causal=%d: err %g of %g", p.p, cases[t][1], causal, err, scale);
            free(Q); free(K); free(V); free(M); free(A);
        }
}
END_TEST

/* Focused at p = 6.5 and 8 where every row's products span more than float32's range: each row's largest
 * input c (1.8 at p = 6.5, 0.12 at p = 8) puts φ of its x ≤ 0 entries near 2^-135, so tiny·tiny ≈ 2^-270
 * sits beside large·large ≈ 2^2 and no power-of-two scaling keeps them all normal. Such rows are summed,
 * normalised and rounded once in float64 (src/attention.c, rows_f64, normalise_row64): every entry to half
 * an ulp (2^-24 relative, ·1.004 for the float64 sums) of the float64 product of the library's own float32
 * features (av_features: the canonical φ, subnormals included), normalised with ε = n·1e-6. The float32
 * gemm these rows took before (its sums rounded at every step) was up to 4 ulp away. */
START_TEST(test_focused_wide_rows) {
    const int n = 45, d = 24;
    const double powers[][2] = {{6.5, 1.8}, {8, 0.12}};
    for (int t = 0; t < 2; t++)
        for (int causal = 0; causal < 2; causal++) {
            float *Q, *K, *V, *M = malloc(sizeof(float) * n * n);
            float *PQ = malloc(sizeof(float) * n * d), *PK = malloc(sizeof(float) * n * d);
            inputs(&Q, &K, &V, n, d, 1, 700u + (uint64_t)t, 1.0);
            for (int i = 0; i < 2 * n; i++) { // every row's largest entry exactly c
                float *x = (i < n ? Q : K) + (size_t)(i % n) * d, big = 0;
                for (int f = 0; f < d; f++) big = x[f] > big ? x[f] : big;
                for (int f = 0; f < d; f++) x[f] = x[f] == big ? (float)powers[t][1] : x[f] / big * (float)powers[t][1];
            }
            av_params p;
            av_params_default(&p, AV_FOCUSED);
            p.p = powers[t][0];
            p.causal = causal;
            size_t wb = av_features_work(&p, n, d);
            void *w = work_for(wb);
            ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, w, wb), AV_OK);
            free(w);
            ck_assert_int_eq(run_matrix(M, Q, K, n, d, &p), AV_OK);
            double worst = 0;
            for (int i = 0; i < n; i++) {
                double row[45], sum = 0;
                int len = causal ? i + 1 : n;
                for (int j = 0; j < len; j++) {
                    row[j] = 0;
                    for (int f = 0; f < d; f++) row[j] += (double)PQ[i * d + f] * PK[j * d + f];
                    sum += row[j];
                }
                for (int j = 0; j < n; j++) {
                    double ref = j < len ? row[j] / (sum + n * 1e-6) : 0.0;
                    double e = fabs(M[i * n + j] - ref) / (ref > FLT_MIN ? ref : FLT_MIN);
                    worst = e > worst ? e : worst;
                }
            }
            ck_assert_msg(worst <= 0x1.01p-24, "p=%g causal=%d: an entry %g of itself away", p.p, causal, worst);
            free(Q); free(K); free(V); free(M); free(PQ); free(PK);
        }
}
END_TEST

/* The causal focused matrix (p = 3) of all 40 heads of stories260K's text128 against the float64
 * reference of the formula (tref_matrix): every entry to 2e-5 of itself plus 1e-6 of the row's largest,
 * the readouts' row KL against softmax finite on every head (L1H3 among them: a cut-off of tiny φ once
 * made its row 0 zero) and equal to the reference's KL. */
START_TEST(test_focused_stories_heads) {
    av_npy_info qi, ki;
    float *q = tu_stories_npy("text128_q.npy", &qi), *k = tu_stories_npy("text128_k.npy", &ki);
    if (!q || !k) {
        tu_skipped("Check suite attention: focused on the 40 text128 heads against float64");
        free(q); free(k);
        return;
    }
    const int L = (int)qi.shape[0], H = (int)qi.shape[1], n = (int)qi.shape[2], d = (int)qi.shape[3];
    const int KVH = (int)ki.shape[1];
    ck_assert(qi.ndim == 4 && ki.ndim == 4 && ki.shape[2] == n && ki.shape[3] == d && H % KVH == 0);
    float *M = malloc(sizeof(float) * n * n), *S = malloc(sizeof(float) * n * n);
    double *A = malloc(sizeof(double) * n * n), *R = malloc(sizeof(double) * n * n);
    int heads = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            const float *Qh = q + ((size_t)l * H + h) * n * d, *Kh = k + ((size_t)l * KVH + h * KVH / H) * n * d;
            av_params p, r, sm;
            av_params_default(&p, AV_FOCUSED);
            p.causal = 1;
            ck_assert_int_eq(av_params_resolve(&r, &p, n, d), AV_OK);
            ck_assert_msg(run_matrix(M, Qh, Kh, n, d, &p) == AV_OK, "L%dH%d: a zero row", l, h);
            tref_matrix(A, Qh, Kh, n, d, &r);
            for (int i = 0; i < n; i++) {
                double top = tu_max_abs_d(A + (size_t)i * n, (size_t)n);
                for (int j = 0; j < n; j++) {
                    double a = A[(size_t)i * n + j], m = M[(size_t)i * n + j];
                    ck_assert_msg(fabs(m - a) <= 2e-5 * a + 1e-6 * top, "L%dH%d M[%d,%d] %.9g vs %.9g", l, h, i, j, m, a);
                }
            }
            av_params_default(&sm, AV_SOFTMAX);
            sm.causal = 1;
            ck_assert_int_eq(run_matrix(S, Qh, Kh, n, d, &sm), AV_OK);
            double vals[AV_R_COUNT];
            int reasons[AV_R_COUNT];
            size_t wb = av_readouts_work(n, 1);
            void *w = work_for(wb);
            ck_assert_int_eq(av_readouts(vals, reasons, M, NULL, 0, S, NULL, n, 1, 1, 0, w, wb), AV_OK);
            free(w);
            for (size_t e = 0; e < (size_t)n * n; e++) R[e] = S[e];
            double want = kl_mean_d(R, A, n);
            ck_assert_msg(isfinite(vals[AV_R_ROW_KL_MEAN]) && isfinite(want), "L%dH%d: row KL %g (reason %d), float64 %g",
                          l, h, vals[AV_R_ROW_KL_MEAN], reasons[AV_R_ROW_KL_MEAN], want);
            ck_assert_msg(fabs(vals[AV_R_ROW_KL_MEAN] - want) <= 1e-4 * (1 + want), "L%dH%d: KL %.9g vs %.9g", l, h,
                          vals[AV_R_ROW_KL_MEAN], want);
            heads++;
        }
    ck_assert_int_eq(heads, 40);
    free(q); free(k); free(M); free(S); free(A); free(R);
}
END_TEST

Suite *suite_attention(void) {
    Suite *s = suite_create("attention");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_exp_ulp);
    tcase_add_test(tc, test_exp_row_matches_scalar);
    tcase_add_test(tc, test_log2x_matches_scalar);
    tcase_add_test(tc, test_logf_split4_against_logl);
    tcase_add_test(tc, test_exp_f64x2_and_focused_powers);
    tcase_add_test(tc, test_focused_tiny_features);
    tcase_add_test(tc, test_focused_scaling_capped);
    tcase_add_test(tc, test_focused_wide_rows);
    tcase_add_test(tc, test_focused_stories_heads);
    tcase_add_test(tc, test_finite_and_sum_helpers);
    tcase_add_loop_test(tc, test_matrix_vs_reference, 0, NREF);
    tcase_add_test(tc, test_focused_dwc_and_powers);
    tcase_add_test(tc, test_hedgehog_with_w);
    tcase_add_test(tc, test_softmax_large);
    tcase_add_test(tc, test_scores);
    tcase_add_loop_test(tc, test_paths_agree, 0, AV_VARIANT_COUNT);
    tcase_add_test(tc, test_every_variant_has_a_reference);
    tcase_add_test(tc, test_linear_blocked_bits);
    tcase_add_test(tc, test_kernel_f64_dtd_acc);
    tcase_add_test(tc, test_linear_causal_scan_bits);
    tcase_add_test(tc, test_focused_dwc_linear);
    tcase_add_test(tc, test_rank_bound);
    tcase_add_test(tc, test_status_codes);
    tcase_add_test(tc, test_warnings);
    tcase_add_test(tc, test_tiny_row_sums);
    tcase_add_test(tc, test_cost);
    tcase_add_test(tc, test_finite_promise);
    tcase_add_test(tc, test_factors_balanced);
    tcase_add_test(tc, test_overflow_cause);
    tcase_add_test(tc, test_status_range);
    tcase_add_test(tc, test_lowrank_dispatch);
    suite_add_tcase(s, tc);
    return s;
}
