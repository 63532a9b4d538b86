/* features_random.c: the feature maps that approximate exp(scale·q·k): Performer FAVOR+ positive random
 * features, the truncated Taylor series T_p and the limit form (1 + s/N)^N (docs/variant-formulas.md:
 * performer, taylor, explimit). Each writes Φ_Q, Φ_K (n×r, row-major float32) from Q, K (n×d); the engine in
 * attention.c normalises Φ_QΦ_Kᵀ (ε = 0 for all three).
 */
#include <limits.h>
#include <math.h>

#include "internal.h"
#include "simd.h"

// ----------------------------------------------------------------------------------------------------
// feature dimensions

// a·b, saturating at LONG_MAX (a, b ≥ 0). long is 32 bits in wasm32, 64 natively.
static long mul_sat(long a, long b) {
    if (a != 0 && b > LONG_MAX / a) return LONG_MAX;
    return a * b;
}

static long add_sat(long a, long b) { return a > LONG_MAX - b ? LONG_MAX : a + b; }

/* performer: m; taylor: Σ_{r≤p} d^r; explimit: (d+1)^N. Saturates at LONG_MAX. */
long avi_dim_performer(const av_params *prm, int d) { (void)d; return prm->m; }

long avi_dim_taylor(const av_params *prm, int d) {
    long sum = 0, pw = 1;
    for (int r = 0; r <= prm->order; r++) {
        sum = add_sat(sum, pw);
        pw = mul_sat(pw, d);
    }
    return sum;
}

long avi_dim_explimit(const av_params *prm, int d) {
    long pw = 1;
    for (int t = 0; t < prm->N; t++) pw = mul_sat(pw, (long)d + 1);
    return pw;
}

// ----------------------------------------------------------------------------------------------------
// closed-form kernels and costs

/* taylor: T_p(s) = Σ_{r≤p} s^r/r! (Horner). */
double avi_kernel_taylor(const av_params *prm, double s) {
    double t = 1.0;
    for (int r = prm->order; r >= 1; r--) t = 1.0 + t * s / r;
    return t;
}

/* explimit: (1 + s/N)^N by N multiplications. */
double avi_kernel_explimit(const av_params *prm, double s) {
    double base = 1.0 + s / prm->N, t = 1.0;
    for (int i = 0; i < prm->N; i++) t *= base;
    return t;
}

/* The registry's row forms: κ of each entry in place, the double sum returned. kappa is a constant at each
 * call, so the compiler inlines it: no indirect call per entry. */
static inline double kernel_row(double (*kappa)(const av_params *, double), const av_params *prm, float *row,
                                int len) {
    double sum = 0;
    for (int j = 0; j < len; j++) {
        double kv = kappa(prm, row[j]);
        row[j] = (float)kv;
        sum += kv;
    }
    return sum;
}
double avi_kernel_row_taylor(const av_params *prm, float *row, int len) {
    return kernel_row(avi_kernel_taylor, prm, row, len);
}
double avi_kernel_row_explimit(const av_params *prm, float *row, int len) {
    return kernel_row(avi_kernel_explimit, prm, row, len);
}

/* Multiply-adds of the maps on Q and K: performer 2·n·m·d; tensor features one multiply each, 2·n·r. */
double avi_cost_performer(const av_params *p, double n, double d, double r) { (void)r; return 2 * n * p->m * d; }
double avi_cost_tensor(const av_params *p, double n, double d, double r) { (void)p; (void)d; return 2 * n * r; }

// ----------------------------------------------------------------------------------------------------
// workspace

static uint64_t al64(uint64_t bytes) { return (bytes + 63u) & ~(uint64_t)63u; }

/* 64-bit arithmetic, saturating at SIZE_MAX (size_t is 32 bits in wasm32). */
static size_t sat(uint64_t bytes) { return bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes; }

size_t avi_performer_work(const av_params *prm, int n, int d) {
    uint64_t D = sizeof(double), F = sizeof(float), dd = (uint64_t)d;
    avi_arena a = avi_arena_count(); /* the layout of performer_features */
    avi_take(&a, avi_draw_bytes(prm->m, d));
    avi_take(&a, avi_performer_omega_work(prm->m, d));
    avi_take(&a, (uint64_t)avs_packed_floats(prm->m, d) * F);
    avi_take(&a, 4 * dd * F);
    avi_take(&a, (uint64_t)n * D);
    avi_take(&a, (uint64_t)n * D);
    return sat(a.used);
}

/* taylor, explimit: x′ (or [1, x′/√N]), one row of d + 1 doubles. */
size_t avi_tensor_work(const av_params *prm, int n, int d) {
    (void)prm; (void)n;
    return sat(al64(((uint64_t)d + 1) * sizeof(double)));
}

// ----------------------------------------------------------------------------------------------------
// Performer FAVOR+ (google-research performer/fast_attention/jax: nonnegative_softmax_kernel_feature_creator)

#define HUGE_H 1e4 /* ½‖x′‖² above which e^(u − c − ½‖x′‖²) is 0 in any precision (u − c ≤ 0) */

// max_f ω_f·x′ in float64, for a row whose x′ is so large that float projections could overflow.
static double max_projection_f64(const float *W, const float *x, int m, int d, double rs) {
    double mx = -INFINITY;
    for (int f = 0; f < m; f++) {
        const float *w = W + (size_t)f * d;
        double u = 0.0;
        for (int t = 0; t < d; t++) u += w[t] * (rs * x[t]);
        mx = u > mx ? u : mx;
    }
    return mx;
}

/* Rows [i0, i0+rows) of U (n×m, stride m) ← X′ωᵀ with x′ = √scale·x (float, packed ω in P); h[i] ← ½‖x′‖²
 * and c[i] ← max_f u (in float64 for rows with h > HUGE_H, whose features are the constant ε term). */
static void performer_project(float *U, double *h, double *c, const float *X, int i0, int rows, int m,
                              int d, const float *W, const float *P, float *xs, double rs) {
    for (int r = 0; r < rows; r++) {
        const float *x = X + (size_t)(i0 + r) * d;
        double hh = 0.0;
        for (int t = 0; t < d; t++) {
            xs[(size_t)r * d + t] = (float)(rs * x[t]);
            hh += (double)xs[(size_t)r * d + t] * xs[(size_t)r * d + t];
        }
        h[i0 + r] = 0.5 * hh;
    }
    avs_gemm_strip(U + (size_t)i0 * m, (size_t)m, xs, (size_t)d, rows, P, d, m, d, 1.0f, 0);
    for (int r = 0; r < rows; r++) {
        int i = i0 + r;
        c[i] = h[i] <= HUGE_H ? avs_max(U + (size_t)i * m, m)
                              : max_projection_f64(W, X + (size_t)i * d, m, d, rs);
    }
}

// u[f] ← m^{−1/2}(e^(u[f] − c − h) + ε), the subtraction of c first (exact when u is near c).
static void performer_finish(float *u, int m, double c, double h, double feature_eps) {
    float am = (float)(1.0 / sqrt((double)m)), eps = (float)feature_eps;
    if (!(h <= HUGE_H)) {
        for (int f = 0; f < m; f++) u[f] = am * eps;
        return;
    }
    float cf = (float)c;
    for (int f = 0; f < m; f++) u[f] -= cf;
    avs_exp_sub_sum(u, m, (float)h);
    for (int f = 0; f < m; f++) u[f] = am * (u[f] + eps);
}

/* φ(x) = m^{−1/2}(exp(ω·x′ − ½‖x′‖² − c) + ε) (ε the feature_eps knob, 1e-6 by default): c the per-query max over features for Q, one global max
 * over all keys and features for K. Every exponent is ≤ 0, so features lie in [ε, 1 + ε]·m^{−1/2} (ε the
 * feature_eps knob; with ε = 0 a feature can underflow to 0, and a row to a zero row) and cannot overflow. The projections are computed as one float gemm, X′·ωᵀ, strip by strip; keys
 * take a second pass once their global max is known. ω is the workspace's first block, a draw cache (internal.h):
 * drawn when the workspace does not already hold this seed's ω (for m, d and the orthogonal flag), reused when it does. */
static void performer_features(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                               const av_params *prm, void *work) {
    int m = prm->m;
    avi_arena a = avi_arena_over(work); /* the layout of avi_performer_work */
    void *cache = avi_take(&a, avi_draw_bytes(m, d));                              /* ω, m×d, cached */
    void *qr = avi_take(&a, avi_performer_omega_work(m, d));                       /* the QR block */
    float *P = avi_take(&a, (uint64_t)avs_packed_floats(m, d) * sizeof(float));    /* ω packed */
    float *xs = avi_take(&a, 4u * (uint64_t)d * sizeof(float));                    /* 4×d, a strip of x′ */
    double *h = avi_take(&a, (uint64_t)n * sizeof(double));                        /* n: ½‖x′‖² */
    double *c = avi_take(&a, (uint64_t)n * sizeof(double));                        /* n: max_f u */
    float *W = avi_draw_data(cache);
    avi_draw_key key = {AVI_DRAW_OMEGA, prm->seed, m, d, (uint32_t)prm->orthogonal};
    if (!avi_draw_hit(cache, &key)) {
        avi_performer_omega(W, m, d, prm->orthogonal, prm->seed, qr);
        avi_draw_seal(cache, &key);
    }
    avs_pack_bt(P, W, (size_t)d, m, d);
    double rs = sqrt(prm->scale);
    for (int i0 = 0; i0 < n; i0 += 4) {
        int rows = n - i0 < 4 ? n - i0 : 4;
        performer_project(PhiQ, h, c, Q, i0, rows, m, d, W, P, xs, rs);
        for (int i = i0; i < i0 + rows; i++) performer_finish(PhiQ + (size_t)i * m, m, c[i], h[i], prm->feature_eps);
    }
    double cK = -INFINITY;
    for (int j0 = 0; j0 < n; j0 += 4) {
        int rows = n - j0 < 4 ? n - j0 : 4;
        performer_project(PhiK, h, c, K, j0, rows, m, d, W, P, xs, rs);
        for (int j = j0; j < j0 + rows; j++) cK = c[j] > cK ? c[j] : cK;
    }
    for (int j = 0; j < n; j++) performer_finish(PhiK + (size_t)j * m, m, cK, h[j], prm->feature_eps);
}

// ----------------------------------------------------------------------------------------------------
// Taylor and (1 + s/N)^N tensor features (docs/variant-formulas.md: taylor, explimit)

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

int avi_phi_performer(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                      void *work) {
    performer_features(PhiQ, PhiK, Q, K, n, d, p, work);
    return AV_OK;
}

/* Φ_Q, Φ_K (n×r) row by row with `row` (taylor_row or explimit_row, the power `pw`). AV_ERR_FEATURE_DIM
 * (nothing written) when r exceeds AV_MAX_FEATURE_DIM; AV_WARN_OVERFLOW when a tensor feature overflowed
 * float (entries Inf/NaN). */
static int tensor_features(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, long r,
                           int (*row)(float *, double *, const float *, int, int, double), int pw, double scale,
                           double *xs) {
    if (r > AV_MAX_FEATURE_DIM) return AV_ERR_FEATURE_DIM;
    double rs = sqrt(scale);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        bad |= row(PhiQ + (size_t)i * r, xs, Q + (size_t)i * d, d, pw, rs);
        bad |= row(PhiK + (size_t)i * r, xs, K + (size_t)i * d, d, pw, rs);
    }
    return bad ? AV_WARN_OVERFLOW : AV_OK;
}

int avi_phi_taylor(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                   void *work) {
    return tensor_features(PhiQ, PhiK, Q, K, n, d, avi_dim_taylor(p, d), taylor_row, p->order, p->scale, work);
}

int avi_phi_explimit(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                     void *work) {
    return tensor_features(PhiQ, PhiK, Q, K, n, d, avi_dim_explimit(p, d), explimit_row, p->N, p->scale, work);
}
