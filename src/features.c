/* features.c: the feature maps φ of the kernel (linear-attention) variants (docs/variant-formulas.md).
 *
 * Φ_Q, Φ_K are n×r row-major float32. The maps here take raw q and k (no `scale`):
 *   elu        φ = elu(x) + 1                                   r = d   (Katharopoulos et al. 2020)
 *   relu       φ = relu(x)                                      r = d
 *   exp        φ = e^(x − c): c = max_f q_f per query, one global max over all keys and features for
 *              keys (both cancel in A; they keep φ ≤ 1)        r = d
 *   efficient  ρ_q = softmax of each query over its d features; ρ_k = softmax of each key feature over
 *              the n positions                                  r = d   (Shen et al. 2021)
 *   focused    φ = f_p(y), y = (relu(x) + 1e-6)/ln 2, f_p(y) = ‖y‖·y^p/‖y^p‖, computed as
 *              ‖y‖·u^p/‖u^p‖ with u = y/max(y) (exact: f_p is homogeneous)   r = d   (Han et al. 2023)
 *   hedgehog   u = Wᵀx (W d×cols, NULL = identity), φ = [e^(u − c), e^(−u − c)], c = max|u| per query,
 *              one global max over all keys                      r = 2·cols   (Zhang et al. 2024)
 *   cosformer  φ_i = [relu(x) sin θ_i, relu(x) cos θ_i], θ_i = π·i/(2n), i = 1..n   r = 2d  (Qin et al. 2022)
 * performer, taylor and explimit come from features_random.c (they apply √scale themselves).
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "simd.h"

// ----------------------------------------------------------------------------------------------------
// dimension, workspace and cost: generic over the registry row (variants.c)

long avi_dim_d(const av_params *prm, int d) { (void)prm; return d; }
long avi_dim_2d(const av_params *prm, int d) { (void)prm; return 2L * d; }
long avi_dim_hedgehog(const av_params *prm, int d) { return 2L * (prm->hedgehog_w ? prm->hedgehog_cols : d); }

long avi_feature_dim(const av_params *prm, int d) {
    const avi_variant *v = avi_variant_of(prm->variant);
    return v->feature_dim ? v->feature_dim(prm, d) : 0;
}

size_t avi_features_work(const av_params *prm, int n, int d) {
    const avi_variant *v = avi_variant_of(prm->variant);
    return v->features_work ? v->features_work(prm, n, d) : 0;
}

/* Multiply-adds of the feature map on Q and K together (see cost.c's model). */
double avi_cost_elementwise(const av_params *p, double n, double d, double r) { (void)p; (void)r; return 2 * n * d; }
double avi_cost_hedgehog(const av_params *p, double n, double d, double r) { (void)p; return 2 * n * d * (r / 2) + 2 * n * r; }

// ----------------------------------------------------------------------------------------------------
// elementwise maps

/* phi[n×d] = elu(x)+1 (kind 0) or relu(x) (kind 1). */
static void map_elementwise(float *phi, const float *X, size_t count, int kind) {
    if (kind == 0)
        avs_elu1(phi, X, count);
    else
        for (size_t i = 0; i < count; i++) phi[i] = X[i] > 0 ? X[i] : 0.0f;
}

/* phi[n×d] = e^(x − c): c per row (per_row = 1) or one max over all of X. */
static void map_exp(float *phi, const float *X, int n, int d, int per_row) {
    float c = per_row ? 0.0f : avs_max(X, n * d);
    for (int i = 0; i < n; i++) {
        float *p = phi + (size_t)i * d;
        memcpy(p, X + (size_t)i * d, (size_t)d * sizeof(float));
        avs_exp_sub_sum(p, d, per_row ? avs_max(p, d) : c);
    }
}

/* Efficient Attention: rows of ρ_q are softmaxes over features, columns of ρ_k softmaxes over positions. */
static void map_efficient(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d) {
    for (int i = 0; i < n; i++) {
        float *p = PhiQ + (size_t)i * d;
        memcpy(p, Q + (size_t)i * d, (size_t)d * sizeof(float));
        float s = avs_exp_sub_sum(p, d, avs_max(p, d));
        avs_scale(p, d, 1.0f / s);
    }
    avs_col_softmax(PhiK, K, n, d);
}

/* u^p for u ∈ (0, 1] and a whole p: repeated squaring (at most 5 roundings for p ≤ 10). */
static double pow_unit_whole(double u, int e) {
    double r = 1.0;
    for (;;) {
        if (e & 1) r *= u;
        e >>= 1;
        if (!e) return r;
        u *= u;
    }
}

/* map_focused's row for a fractional p: out[f] = (float)u_f^p and Σ u_f^{2p} summed in f order, each power
 * as e^{p·ln u} in two float64 lanes. The entries with x ≤ 0 share one u (1e-6/ln 2/ymax), so its power is
 * taken once per row: about half of the transcendental work on centred inputs (the lanes are
 * independent, so every power has the bits it had when each entry took its own). */
enum { FOCUSED_CHUNK = 256 };
static double focused_row_powers(float *out, const float *x, int d, double inv_ln2, double ymax, avs_f64x2 pp) {
    avs_f64x2 c = {1e-6 * inv_ln2 / ymax, 1e-6 * inv_ln2 / ymax}; // (0 + 1e-6)·(1/ln 2)/ymax, as for x ≤ 0
    const double cp = avs_exp_f64x2(pp * avs_log2x(c))[0];
    double nu = 0.0, ub[FOCUSED_CHUNK];
    int pos[FOCUSED_CHUNK];
    for (int f0 = 0; f0 < d; f0 += FOCUSED_CHUNK) {
        const int len = d - f0 < FOCUSED_CHUNK ? d - f0 : FOCUSED_CHUNK;
        int np = 0;
        for (int f = 0; f < len; f++) {
            const float v = x[f0 + f];
            if (v > 0) {
                ub[f] = ((double)v + 1e-6) * inv_ln2 / ymax;
                pos[np++] = f;
            } else {
                ub[f] = cp;
            }
        }
        int k = 0;
        for (; k + 2 <= np; k += 2) {
            avs_f64x2 u = {ub[pos[k]], ub[pos[k + 1]]};
            u = avs_exp_f64x2(pp * avs_log2x(u));
            ub[pos[k]] = u[0];
            ub[pos[k + 1]] = u[1];
        }
        if (k < np) {
            avs_f64x2 u = {ub[pos[k]], 1.0};
            ub[pos[k]] = avs_exp_f64x2(pp * avs_log2x(u))[0];
        }
        for (int f = 0; f < len; f++) {
            out[f0 + f] = (float)ub[f];
            nu += ub[f] * ub[f];
        }
    }
    return nu;
}

/* y = (relu(x) + 1e-6)/ln 2 of two entries, in two float64 lanes: each lane the scalar expression
 * ((x > 0 ? x : 0) + 1e-6)·(1/ln 2) (NaN and −0 give 0 + 1e-6, as there). */
static inline avs_f64x2 focused_y2(const float *x, double inv_ln2) {
    avs_f64x2 v = avs_load_f32x2(x);
    v = (avs_f64x2)((avs_i64x2)(v > 0.0) & (avs_i64x2)v);
    return (v + 1e-6) * inv_ln2;
}

/* out[f] ← a·out[f], four floats at a time (lane by lane the scalar product). Entries below FLT_MIN stay,
 * subnormal: they are the canonical φ (a cut-off once zeroed whole rows of products on real heads). */
typedef float ft_f32x4 __attribute__((vector_size(16)));
static void scale_row(float *out, int d, float a) {
    const ft_f32x4 a4 = {a, a, a, a};
    int f = 0;
    for (; f + 4 <= d; f += 4) {
        ft_f32x4 v;
        memcpy(&v, out + f, sizeof v);
        v *= a4;
        memcpy(out + f, &v, sizeof v);
    }
    for (; f < d; f++) out[f] *= a;
}

/* u^e of two lanes by repeated squaring: lane by lane the operations of pow_unit_whole. */
static inline avs_f64x2 pow_unit_whole2(avs_f64x2 u, int e) {
    avs_f64x2 r = {1.0, 1.0};
    for (;;) {
        if (e & 1) r *= u;
        e >>= 1;
        if (!e) return r;
        u *= u;
    }
}

/* FLatten: phi[n×d] = f_p((relu(x) + 1e-6)/ln 2), in double per row, with u = y/ymax ∈ (0, 1] raised to
 * p (no overflow or underflow to 0 for p ≤ 10). A whole p by repeated squaring; a fractional one as
 * e^{p·ln u} in two float64 lanes (avs_log2x, avs_exp_f64x2: fdlibm's, < 1 ulp each, so u^p to about
 * (p·|ln u| + 2)·ε relative, far below the float output's rounding). libm's pow was three quarters of the
 * focused matrix's time in WASM (15 of 18 ms at n = 1024). Either way the same bits under every libm.
 * The entries' arithmetic runs two to a float64 vector (and the last scaling four to a float one), lane
 * by lane the scalar expressions; the sums ‖y‖² and ‖u^p‖² stay in f order, one entry after another, so
 * every feature has the bits of the scalar loops this replaced (2.36 → 0.67 ms for Q and K at n = 1024,
 * d = 64, whole p, WASM in node). */
static void map_focused(float *phi, const float *X, int n, int d, double p) {
    const double inv_ln2 = 1.0 / 0.69314718055994530942;
    const int whole = (double)(int)p == p;
    const avs_f64x2 pp = {p, p};
    const int d2 = d & ~1;
    for (int i = 0; i < n; i++) {
        const float *x = X + (size_t)i * d;
        float *out = phi + (size_t)i * d;
        double ymax = 0, ny = 0, nu = 0;
        int f = 0;
        for (; f < d2; f += 2) {
            avs_f64x2 y = focused_y2(x + f, inv_ln2), y2 = y * y;
            ymax = y[0] > ymax ? y[0] : ymax;
            ymax = y[1] > ymax ? y[1] : ymax;
            ny += y2[0];
            ny += y2[1];
        }
        for (; f < d; f++) {
            double y = ((x[f] > 0 ? (double)x[f] : 0.0) + 1e-6) * inv_ln2;
            ymax = y > ymax ? y : ymax;
            ny += y * y;
        }
        if (whole) {
            const avs_f64x2 ym = {ymax, ymax};
            for (f = 0; f < d2; f += 2) {
                avs_f64x2 u = pow_unit_whole2(focused_y2(x + f, inv_ln2) / ym, (int)p), u2 = u * u;
                out[f] = (float)u[0];
                out[f + 1] = (float)u[1];
                nu += u2[0];
                nu += u2[1];
            }
            for (; f < d; f++) {
                double u = pow_unit_whole(((x[f] > 0 ? (double)x[f] : 0.0) + 1e-6) * inv_ln2 / ymax, (int)p);
                out[f] = (float)u;
                nu += u * u;
            }
        } else {
            nu = focused_row_powers(out, x, d, inv_ln2, ymax, pp);
        }
        scale_row(out, d, (float)(sqrt(ny) / sqrt(nu)));
    }
}

/* Hedgehog: u = Wᵀx into the first cols entries of each 2·cols row. */
static void hedgehog_project(float *phi, const float *X, int n, int d, const float *W, int cols) {
    for (int i = 0; i < n; i++) {
        const float *x = X + (size_t)i * d;
        float *u = phi + (size_t)i * 2 * cols;
        if (!W) {
            memcpy(u, x, (size_t)d * sizeof(float));
            continue;
        }
        for (int c = 0; c < cols; c++) u[c] = 0;
        for (int f = 0; f < d; f++) {
            const float *w = W + (size_t)f * cols;
            for (int c = 0; c < cols; c++) u[c] += x[f] * w[c];
        }
    }
}

static float abs_max(const float *u, int len) {
    float m = 0;
    for (int c = 0; c < len; c++) {
        float a = fabsf(u[c]);
        m = m < a ? a : m;
    }
    return m;
}

static void hedgehog_exp_row(float *phi, int cols, float c) {
    for (int k = 0; k < cols; k++) phi[cols + k] = -phi[k];
    avs_exp_sub_sum(phi, 2 * cols, c);
}

static void map_hedgehog(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                         const av_params *prm) {
    const float *W = prm->hedgehog_w;
    int cols = W ? prm->hedgehog_cols : d;
    hedgehog_project(PhiQ, Q, n, d, W, cols);
    hedgehog_project(PhiK, K, n, d, W, cols);
    float ck = 0;
    for (int i = 0; i < n; i++) {
        float a = abs_max(PhiK + (size_t)i * 2 * cols, cols);
        ck = ck < a ? a : ck;
    }
    for (int i = 0; i < n; i++) {
        float *pq = PhiQ + (size_t)i * 2 * cols;
        hedgehog_exp_row(pq, cols, abs_max(pq, cols));
        hedgehog_exp_row(PhiK + (size_t)i * 2 * cols, cols, ck);
    }
}

/* cosFormer: phi[n×2d], positions i = 1..n, θ_i = π·i/(2n). */
static void map_cosformer(float *phi, const float *X, int n, int d) {
    const double pi = 3.14159265358979323846;
    for (int i = 0; i < n; i++) {
        double th = pi * (i + 1) / (2.0 * n), s = sin(th), c = cos(th);
        const float *x = X + (size_t)i * d;
        float *out = phi + (size_t)i * 2 * d;
        for (int f = 0; f < d; f++) {
            double r = x[f] > 0 ? x[f] : 0.0;
            out[f] = (float)(r * s);
            out[d + f] = (float)(r * c);
        }
    }
}

// ----------------------------------------------------------------------------------------------------
// the registry's entry points: Φ_Q, Φ_K (n×r) of one variant (resolved knobs)

int avi_phi_elu(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p, void *w) {
    (void)p; (void)w;
    map_elementwise(PhiQ, Q, (size_t)n * d, 0);
    map_elementwise(PhiK, K, (size_t)n * d, 0);
    return AV_OK;
}
int avi_phi_relu(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p, void *w) {
    (void)p; (void)w;
    map_elementwise(PhiQ, Q, (size_t)n * d, 1);
    map_elementwise(PhiK, K, (size_t)n * d, 1);
    return AV_OK;
}
int avi_phi_exp(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p, void *w) {
    (void)p; (void)w;
    map_exp(PhiQ, Q, n, d, 1);
    map_exp(PhiK, K, n, d, 0);
    return AV_OK;
}
int avi_phi_efficient(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                      void *w) {
    (void)p; (void)w;
    map_efficient(PhiQ, PhiK, Q, K, n, d);
    return AV_OK;
}
int avi_phi_focused(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                    void *w) {
    (void)w;
    map_focused(PhiQ, Q, n, d, p->p);
    map_focused(PhiK, K, n, d, p->p);
    return AV_OK;
}
int avi_phi_hedgehog(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                     void *w) {
    (void)w;
    map_hedgehog(PhiQ, PhiK, Q, K, n, d, p);
    return AV_OK;
}
int avi_phi_cosformer(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                      void *w) {
    (void)p; (void)w;
    map_cosformer(PhiQ, Q, n, d);
    map_cosformer(PhiK, K, n, d);
    return AV_OK;
}

/* Any kernel variant's features; AV_WARN_OVERFLOW when a feature is not finite. */
int avi_features(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                 const av_params *prm, void *work) {
    const avi_variant *v = avi_variant_of(prm->variant);
    if (!v->features) return AV_ERR_NO_LINEAR;
    int st = v->features(PhiQ, PhiK, Q, K, n, d, prm, work);
    if (st < 0) return st;
    size_t rc = (size_t)n * (size_t)avi_feature_dim(prm, d);
    return avs_all_finite(PhiQ, rc) && avs_all_finite(PhiK, rc) ? st : AV_WARN_OVERFLOW;
}

// ----------------------------------------------------------------------------------------------------
// ln φ in float64 (av_row_kl): the same formulas as the maps above without rounding φ to float32, whose
// entries underflow to 0 on real heads (focused at p = 8: u^p ≈ 1e-48) where the true product is positive

/* ln of focused's φ(x): ln‖y‖ − ln‖u^p‖ + p·ln u_f, u = y/max(y), y = (relu(x) + 1e-6)/ln 2 (map_focused). */
static void log_focused(double *L, const float *X, int n, int d, double p) {
    const double inv_ln2 = 1.0 / 0.69314718055994530942;
    for (int i = 0; i < n; i++) {
        const float *x = X + (size_t)i * d;
        double *l = L + (size_t)i * d, ymax = 0, ny = 0, nu = 0;
        for (int f = 0; f < d; f++) {
            l[f] = ((x[f] > 0 ? (double)x[f] : 0.0) + 1e-6) * inv_ln2;
            ymax = l[f] > ymax ? l[f] : ymax;
            ny += l[f] * l[f];
        }
        for (int f = 0; f < d; f++) {
            l[f] = p * log(l[f] / ymax);
            nu += exp(2 * l[f]); // u^{2p} ≥ 1 for the largest entry: the sum is at least 1
        }
        const double c = 0.5 * (log(ny) - log(nu));
        for (int f = 0; f < d; f++) l[f] += c;
    }
}

/* ln of exp's φ: x − c (map_exp: c the row's max for queries, one max over all keys). */
static void log_exp(double *L, const float *X, int n, int d, int per_row) {
    double c = per_row ? 0.0 : avs_max(X, n * d);
    for (int i = 0; i < n; i++) {
        const float *x = X + (size_t)i * d;
        double cr = per_row ? avs_max(x, d) : c;
        for (int f = 0; f < d; f++) L[(size_t)i * d + f] = (double)x[f] - cr;
    }
}

/* ln of hedgehog's φ: [u − c, −u − c], u = Wᵀx in float64, c = max|u| per query, one over all keys. */
static void log_hedgehog(double *L, const float *X, int n, int d, const av_params *prm, int per_row) {
    const float *W = prm->hedgehog_w;
    const int cols = W ? prm->hedgehog_cols : d;
    double top = 0;
    for (int i = 0; i < n; i++) {
        const float *x = X + (size_t)i * d;
        double *u = L + (size_t)i * 2 * cols;
        for (int c = 0; c < cols; c++) {
            double s = 0;
            if (!W) s = x[c];
            else
                for (int f = 0; f < d; f++) s += (double)x[f] * W[(size_t)f * cols + c];
            u[c] = s;
            top = fabs(s) > top ? fabs(s) : top;
        }
    }
    for (int i = 0; i < n; i++) {
        double *u = L + (size_t)i * 2 * cols, c = 0;
        for (int k = 0; per_row && k < cols; k++) c = fabs(u[k]) > c ? fabs(u[k]) : c;
        c = per_row ? c : top;
        for (int k = 0; k < cols; k++) {
            u[cols + k] = -u[k] - c;
            u[k] -= c;
        }
    }
}

int avi_log_features(double *LQ, double *LK, const float *Q, const float *K, int n, int d, const av_params *p) {
    switch (p->variant) {
    case AV_FOCUSED:
        log_focused(LQ, Q, n, d, p->p);
        log_focused(LK, K, n, d, p->p);
        return 1;
    case AV_EXP:
        log_exp(LQ, Q, n, d, 1);
        log_exp(LK, K, n, d, 0);
        return 1;
    case AV_HEDGEHOG:
        log_hedgehog(LQ, Q, n, d, p, 1);
        log_hedgehog(LK, K, n, d, p, 0);
        return 1;
    default: return 0;
    }
}

int avi_has_log_features(const av_params *p) {
    return p->variant == AV_FOCUSED || p->variant == AV_EXP || p->variant == AV_HEDGEHOG;
}

// ----------------------------------------------------------------------------------------------------
// public: av_feature_dim, av_features_work, av_features

/* The public contract shared by the three: no feature map for the exact and low-rank classes, nor when a
 * knob adds a term that is not a feature product (focused + DWC). */
static int public_dim(long *r, const av_params *p, int d) {
    if (avi_extra_term(p)) return AV_ERR_NO_LINEAR;
    *r = avi_feature_dim(p, d);
    if (*r == 0) return AV_ERR_NO_LINEAR;
    return *r > AV_MAX_FEATURE_DIM ? AV_ERR_FEATURE_DIM : AV_OK;
}

int av_feature_dim(long *r, const av_params *prm, int n, int d) {
    if (!r || !prm) return AV_ERR_NULL;
    av_params p;
    int st = av_params_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    return public_dim(r, &p, d);
}

size_t av_features_work(const av_params *prm, int n, int d) {
    av_params p;
    long r;
    if (!prm || av_params_resolve(&p, prm, n, d) != AV_OK || public_dim(&r, &p, d) != AV_OK) return 0;
    size_t need = avi_features_work(&p, n, d);
    return need ? need : 1; /* > 0 for valid arguments (the header's promise), as av_features checks */
}

int av_features(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                const av_params *prm, void *work, size_t work_bytes) {
    if (!PhiQ || !PhiK || !Q || !K || !prm) return AV_ERR_NULL;
    av_params p;
    long r;
    int st = av_params_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    if ((st = public_dim(&r, &p, d)) != AV_OK) return st;
    size_t need = avi_features_work(&p, n, d);
    need = need ? need : 1; /* what av_features_work reports: a workspace is always required, as everywhere */
    if (!work) return AV_ERR_NULL;
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    size_t cnt = (size_t)n * d;
    if (!avs_all_finite(Q, cnt) || !avs_all_finite(K, cnt)) return AV_ERR_NONFINITE;
    if (!avi_weights_finite(&p, d)) return AV_ERR_NONFINITE;
    return avi_features(PhiQ, PhiK, Q, K, n, d, &p, work);
}
