/* features_random.c: the feature maps that approximate exp(scale·q·k): Performer FAVOR+ positive random
 * features, the truncated Taylor series T_p and the limit form (1 + s/N)^N (product.md §9, variants.md
 * §3a and §12). Each writes Φ_Q, Φ_K (n×r, row-major float32) from Q, K (n×d); the engine in
 * attention.c normalises Φ_QΦ_Kᵀ (ε = 0 for all three).
 */
#include <limits.h>
#include <math.h>

#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// feature dimensions

// a·b, saturating at LONG_MAX (a, b ≥ 0). long is 32 bits in wasm32, 64 natively.
static long mul_sat(long a, long b) {
    if (a != 0 && b > LONG_MAX / a) return LONG_MAX;
    return a * b;
}

static long add_sat(long a, long b) { return a > LONG_MAX - b ? LONG_MAX : a + b; }

/* performer: m; taylor: Σ_{r≤p} d^r; explimit: (d+1)^N. Saturates at LONG_MAX; 0 for other variants. */
long avi_feature_dim_poly(const av_params *prm, int d) {
    switch (prm->variant) {
    case AV_PERFORMER: return prm->m;
    case AV_TAYLOR: {
        long sum = 0, pw = 1;
        for (int r = 0; r <= prm->order; r++) {
            sum = add_sat(sum, pw);
            pw = mul_sat(pw, d);
        }
        return sum;
    }
    case AV_EXPLIMIT: {
        long pw = 1;
        for (int t = 0; t < prm->N; t++) pw = mul_sat(pw, (long)d + 1);
        return pw;
    }
    default: return 0;
    }
}

// ----------------------------------------------------------------------------------------------------
// closed-form kernels

/* taylor: T_p(s) = Σ_{r≤p} s^r/r! (Horner); explimit: (1 + s/N)^N by N multiplications; NaN otherwise. */
double avi_poly_kernel(const av_params *prm, double s) {
    if (prm->variant == AV_TAYLOR) {
        double t = 1.0;
        for (int r = prm->order; r >= 1; r--) t = 1.0 + t * s / r;
        return t;
    }
    if (prm->variant == AV_EXPLIMIT) {
        double base = 1.0 + s / prm->N, t = 1.0;
        for (int i = 0; i < prm->N; i++) t *= base;
        return t;
    }
    return NAN;
}

// ----------------------------------------------------------------------------------------------------
// workspace

size_t avi_features_random_work(const av_params *prm, int n, int d) {
    size_t xrow = avi_align(((size_t)d + 1) * sizeof(double));           /* x′ (or [1, x′/√N]), one row */
    switch (prm->variant) {
    case AV_PERFORMER:
        return avi_align((size_t)prm->m * (size_t)d * sizeof(float))    /* ω[m×d] */
               + avi_performer_omega_work(prm->m, d)                     /* QR block */
               + xrow
               + avi_align((size_t)n * sizeof(double));                  /* ½‖x′‖² of every key */
    case AV_TAYLOR:
    case AV_EXPLIMIT: return xrow;
    default: return 0;
    }
}

// ----------------------------------------------------------------------------------------------------
// Performer FAVOR+ (google-research performer/fast_attention/jax: nonnegative_softmax_kernel_feature_creator)

// x′ = √scale·x in float64; returns ½‖x′‖².
static double scaled_row(double *xs, const float *x, int d, double rs) {
    double h = 0.0;
    for (int t = 0; t < d; t++) {
        xs[t] = rs * x[t];
        h += xs[t] * xs[t];
    }
    return 0.5 * h;
}

// u[i] = ω_i·x′ for the m rows of ω (float64 accumulation, four partial sums).
static void project_row(double *u_out_max, float *u, const float *W, const double *xs, int m, int d) {
    double mx = -INFINITY;
    for (int i = 0; i < m; i++) {
        const float *w = W + (size_t)i * d;
        double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        int t = 0;
        for (; t + 4 <= d; t += 4) {
            a0 += w[t] * xs[t];
            a1 += w[t + 1] * xs[t + 1];
            a2 += w[t + 2] * xs[t + 2];
            a3 += w[t + 3] * xs[t + 3];
        }
        for (; t < d; t++) a0 += w[t] * xs[t];
        double v = (a0 + a1) + (a2 + a3);
        u[i] = (float)v;
        if (v > mx) mx = v;
    }
    *u_out_max = mx;
}

/* φ(x) = m^{−1/2}(exp(ω·x′ − ½‖x′‖² − c) + 1e-6): c the per-query max over features for Q, one global max
 * over all keys and features for K. Every exponent is ≤ 0, so features lie in [1e-6, 1 + 1e-6]·m^{−1/2}
 * and cannot overflow. The projections u are stored as float in Φ before the exp (a second pass for K,
 * whose c is known only after every key). */
static void performer_features(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                               const av_params *prm, void *work) {
    int m = prm->m;
    char *w = work;
    float *W = (float *)w;
    w += avi_align((size_t)m * (size_t)d * sizeof(float));
    void *qr = w;
    w += avi_performer_omega_work(m, d);
    double *xs = (double *)w;
    w += avi_align((size_t)d * sizeof(double));
    double *hk = (double *)w;                               /* n */
    avi_performer_omega(W, m, d, prm->orthogonal, prm->seed, qr);
    double rs = sqrt(prm->scale), am = 1.0 / sqrt((double)m);
    for (int i = 0; i < n; i++) {
        float *u = PhiQ + (size_t)i * m;
        double h = scaled_row(xs, Q + (size_t)i * d, d, rs), c;
        project_row(&c, u, W, xs, m, d);
        for (int f = 0; f < m; f++) u[f] = (float)(am * (exp((double)u[f] - h - c) + 1e-6));
    }
    double cK = -INFINITY;
    for (int j = 0; j < n; j++) {
        double c;
        hk[j] = scaled_row(xs, K + (size_t)j * d, d, rs);
        project_row(&c, PhiK + (size_t)j * m, W, xs, m, d);
        if (c > cK) cK = c;
    }
    for (int j = 0; j < n; j++) {
        float *u = PhiK + (size_t)j * m;
        for (int f = 0; f < m; f++) u[f] = (float)(am * (exp((double)u[f] - hk[j] - cK) + 1e-6));
    }
}

// ----------------------------------------------------------------------------------------------------
// Taylor and (1 + s/N)^N tensor features (variants.md §12)

/* Taylor: φ(x) = [1, x′, vec(x′⊗x′)/√2!, …, x′^{⊗p}/√p!], blocks in lexicographic index order; block r is
 * block r−1 ⊗ x′/√r, so φ(q)·φ(k) = Σ_r (q′·k′)^r/r!. Returns 0 when every entry is finite. */
static int taylor_row(float *phi, double *xs, const float *x, int d, int order, double rs) {
    for (int t = 0; t < d; t++) xs[t] = rs * x[t];
    phi[0] = 1.0f;
    size_t prev = 0, len = 1, bad = 0;                      /* block r−1 at phi[prev..prev+len) */
    for (int r = 1; r <= order; r++) {
        size_t cur = prev + len;
        double inv = 1.0 / sqrt((double)r);
        for (size_t j = 0; j < len; j++) {
            double pj = phi[prev + j] * inv;
            float *dst = phi + cur + j * (size_t)d;
            for (int t = 0; t < d; t++) dst[t] = (float)(pj * xs[t]);
        }
        prev = cur;
        len *= (size_t)d;
    }
    for (size_t f = 0; f < prev + len; f++) bad |= !isfinite(phi[f]);
    return (int)bad;
}

/* explimit: φ(x) = y^{⊗N}, y = [1, x′/√N] (d+1 entries); built in place, level t from level t−1, back to
 * front so that no entry is overwritten before it is read. φ(q)·φ(k) = (1 + q′·k′/N)^N. */
static int explimit_row(float *phi, double *y, const float *x, int d, int N, double rs) {
    y[0] = 1.0;
    double c = rs / sqrt((double)N);
    for (int t = 0; t < d; t++) y[t + 1] = c * x[t];
    size_t len = 1, e = (size_t)d + 1, bad = 0;
    phi[0] = 1.0f;
    for (int level = 1; level <= N; level++) {
        for (size_t j = len; j-- > 0;) {
            double pj = phi[j];
            for (size_t t = e; t-- > 0;) phi[j * e + t] = (float)(pj * y[t]);
        }
        len *= e;
    }
    for (size_t f = 0; f < len; f++) bad |= !isfinite(phi[f]);
    return (int)bad;
}

/* Φ_Q, Φ_K (n×r). AV_ERR_FEATURE_DIM (nothing written) when a taylor/explimit r exceeds
 * AV_MAX_FEATURE_DIM; AV_WARN_OVERFLOW when a tensor feature overflowed float (entries Inf/NaN);
 * AV_ERR_VARIANT for a variant this file does not own. */
int avi_features_random(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                        const av_params *prm, void *work) {
    int v = prm->variant;
    if (v != AV_PERFORMER && v != AV_TAYLOR && v != AV_EXPLIMIT) return AV_ERR_VARIANT;
    long r = avi_feature_dim_poly(prm, d);
    if (r > AV_MAX_FEATURE_DIM) return AV_ERR_FEATURE_DIM;
    if (v == AV_PERFORMER) {
        performer_features(PhiQ, PhiK, Q, K, n, d, prm, work);
        return AV_OK;
    }
    double *xs = work, rs = sqrt(prm->scale);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float *pq = PhiQ + (size_t)i * r, *pk = PhiK + (size_t)i * r;
        const float *q = Q + (size_t)i * d, *k = K + (size_t)i * d;
        if (v == AV_TAYLOR) {
            bad |= taylor_row(pq, xs, q, d, prm->order, rs);
            bad |= taylor_row(pk, xs, k, d, prm->order, rs);
        } else {
            bad |= explimit_row(pq, xs, q, d, prm->N, rs);
            bad |= explimit_row(pk, xs, k, d, prm->N, rs);
        }
    }
    return bad ? AV_WARN_OVERFLOW : AV_OK;
}
