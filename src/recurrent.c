/* recurrent.c: the recurrent families (docs/recurrent.md): decayed kernel attention, the forgetting and
 * sliding-window softmax, retention and the delta rule, by their two sequential forms:
 *
 *   recurrent   token by token. A state S (r×dv, float64) for the kernel variants, retention and the delta
 *               rule; for softmax a key/value cache (every earlier token, or the last W).
 *   chunkwise   chunks of C tokens: inside a chunk the masked C×C products, across chunks a carried state
 *               (the algorithm of flash-linear-attention's chunk kernels); for the delta rule the UT
 *               transform T = (I + stril(β·KKᵀ ⊙ Γ))⁻¹β that turns a chunk's sequential writes into
 *               matrix products (the WY representation W = T·diag(g)·K). For softmax, the flash-attention
 *               tiling: an online softmax over key chunks.
 *
 * and the delta rule's n×n matrix M = (tril(QKᵀ) ⊙ Γ)·(I + stril(β·KKᵀ ⊙ Γ))⁻¹·β by back substitution,
 * row by row. (Retention's and the decayed variants' matrices are attention.c's strips with a decay factor.)
 *
 * Every function here receives resolved knobs (av_params_resolve has run) and checked inputs; linear.c
 * owns the public entry points, the statuses and the workspace checks. Sums run in float64.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "simd.h"

// ----------------------------------------------------------------------------------------------------
// feature maps of retention (scale·q, k) and the delta rule (scale·q/‖q‖, k/‖k‖; a zero row stays zero)

int avi_phi_retention(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                      void *w) {
    (void)w;
    float s = (float)p->scale;
    for (size_t e = 0; e < (size_t)n * d; e++) {
        PhiQ[e] = s * Q[e];
        PhiK[e] = K[e];
    }
    return AV_OK;
}

/* y = a·x/‖x‖ for one row (‖x‖ in float64); a zero row stays zero. */
static void unit_row(float *y, const float *x, int d, double a) {
    double ss = 0;
    for (int c = 0; c < d; c++) ss += (double)x[c] * x[c];
    double f = ss > 0 ? a / sqrt(ss) : 0;
    for (int c = 0; c < d; c++) y[c] = (float)(x[c] * f);
}

int avi_phi_delta(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                  void *w) {
    (void)w;
    for (int i = 0; i < n; i++) {
        unit_row(PhiQ + (size_t)i * d, Q + (size_t)i * d, d, p->scale);
        unit_row(PhiK + (size_t)i * d, K + (size_t)i * d, d, 1.0);
    }
    return AV_OK;
}

/* Madds of the maps on Q and K: a scale (retention), norms and scales (delta). */
double avi_cost_retention(const av_params *p, double n, double d, double r) { (void)p; (void)r; return n * d; }
double avi_cost_delta(const av_params *p, double n, double d, double r) { (void)p; (void)r; return 4 * n * d; }

// ----------------------------------------------------------------------------------------------------
// small dense helpers (float64)

static double dot_ff(const float *a, const float *b, int len) {
    double s = 0;
    for (int c = 0; c < len; c++) s += (double)a[c] * b[c];
    return s;
}

/* y[0..len) −= a·x[0..len) with x float32, y float64, two lanes at a time. */
static void axpy_neg_fd(double *restrict y, double a, const float *restrict x, int len) {
    int k = 0;
    avs_f64x2 va = {a, a};
    for (; k + 2 <= len; k += 2) {
        avs_f64x2 yv;
        memcpy(&yv, y + k, sizeof yv);
        yv -= va * avs_load_f32x2(x + k);
        memcpy(y + k, &yv, sizeof yv);
    }
    for (; k < len; k++) y[k] -= a * x[k];
}

/* pw[t] = γ^t, t = 0..len, by repeated products (the same bits on every platform). */
static void powers(double *pw, int len, double gamma) {
    pw[0] = 1;
    for (int t = 1; t <= len; t++) pw[t] = pw[t - 1] * gamma;
}

// ----------------------------------------------------------------------------------------------------
// workspace: one layout per path, counted and carved by the same code (internal.h's arena)

typedef struct rbufs {
    float *PhiQ, *PhiK;     /* n×r features (kernel class, retention, delta) */
    float *Vx;              /* n×(dv + 1): V with a column of ones (normalised kernel variants) */
    double *S, *pw;         /* state r×dvx; γ^t for t = 0..max(n, C) */
    double *T, *Wm, *U, *Ob;/* chunk buffers: T C×C, W C×r, U C×dvx, outputs C×dvx */
    double *sc;             /* scores C×C (chunkwise), or n (a softmax cache row) */
    double *m, *l;          /* softmax's running max and sum, C each */
    float *L;               /* the delta matrix's stril(β·KKᵀ ⊙ Γ), n×n */
    double *x;              /* one row of the back substitution, n */
    void *inner;            /* the feature map's workspace */
} rbufs;

static int cls(const av_params *p) { return av_variant_info(p->variant)->cls; }
static int normalised(const av_params *p) { return cls(p) == AV_CLASS_KERNEL || cls(p) == AV_CLASS_CLOSED_FORM; }

static void rlayout(rbufs *b, avi_arena *a, const av_params *p, int n, int d, int dv, int path) {
    memset(b, 0, sizeof *b);
    int C = avi_chunk_of(p, n);
    if (path == AVI_PATH_DELTA_MATRIX) {
        b->PhiQ = avi_take(a, 4u * (uint64_t)n * d);
        b->PhiK = avi_take(a, 4u * (uint64_t)n * d);
        b->L = avi_take(a, 4u * (uint64_t)n * n);
        b->x = avi_take(a, 8u * (uint64_t)n);
        b->pw = avi_take(a, 8u * ((uint64_t)n + 1));
        return;
    }
    if (cls(p) == AV_CLASS_EXACT) { /* softmax: a cache row (recurrent), or one tile and its running sums */
        if (path == AVI_PATH_RECURRENT) b->sc = avi_take(a, 8u * (uint64_t)n);
        else {
            b->sc = avi_take(a, 8u * (uint64_t)C * C);
            b->Ob = avi_take(a, 8u * (uint64_t)C * dv);
            b->m = avi_take(a, 8u * (uint64_t)C);
            b->l = avi_take(a, 8u * (uint64_t)C);
        }
        return;
    }
    long r = avi_feature_dim(p, d);
    int dvx = dv + normalised(p);
    b->inner = avi_take(a, avi_features_work(p, n, d)); /* first, as in engine.h: a cached ω stays put */
    b->PhiQ = avi_take(a, 4u * (uint64_t)n * r);
    b->PhiK = avi_take(a, 4u * (uint64_t)n * r);
    if (normalised(p)) b->Vx = avi_take(a, 4u * (uint64_t)n * dvx);
    b->S = avi_take(a, 8u * (uint64_t)r * dvx);
    if (path == AVI_PATH_RECURRENT) {
        b->Ob = avi_take(a, 8u * (uint64_t)dvx);
        return;
    }
    b->pw = avi_take(a, 8u * ((uint64_t)C + 1));
    b->sc = avi_take(a, 8u * (uint64_t)C * C);
    b->Ob = avi_take(a, 8u * (uint64_t)C * dvx);
    if (cls(p) == AV_CLASS_DELTA) {
        b->T = avi_take(a, 8u * (uint64_t)C * C);
        b->Wm = avi_take(a, 8u * (uint64_t)C * r);
        b->U = avi_take(a, 8u * (uint64_t)C * dvx);
    }
}

uint64_t avi_recurrent_need(const av_params *p, int n, int d, int dv, int path) {
    avi_arena a = avi_arena_count();
    rbufs b;
    rlayout(&b, &a, p, n, d, dv, path);
    return a.used;
}

// ----------------------------------------------------------------------------------------------------
// softmax: a key/value cache (recurrent) and the flash tiling (chunkwise); logits scale·q·k + (i − j)·ln γ
// over keys j ≤ i with i − j < W (a window W > 0)

static int first_key(const av_params *p, int i) { return p->window > 0 && i - p->window + 1 > 0 ? i - p->window + 1 : 0; }

static void softmax_cache(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                          const av_params *p, const rbufs *b) {
    double lg = p->decay < 1 ? log(p->decay) : 0, *s = b->sc;
    for (int i = 0; i < n; i++) {
        int j0 = first_key(p, i);
        double mx = -INFINITY, sum = 0;
        for (int j = j0; j <= i; j++) {
            s[j] = p->scale * dot_ff(Q + (size_t)i * d, K + (size_t)j * d, d) + (i - j) * lg;
            mx = s[j] > mx ? s[j] : mx;
        }
        for (int j = j0; j <= i; j++) sum += (s[j] = exp(s[j] - mx));
        float *o = O + (size_t)i * dv;
        for (int c = 0; c < dv; c++) {
            double acc = 0;
            for (int j = j0; j <= i; j++) acc += s[j] * V[(size_t)j * dv + c];
            o[c] = (float)(acc / sum);
        }
    }
}

static void softmax_flash(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                          const av_params *p, const rbufs *b) {
    int C = avi_chunk_of(p, n);
    double lg = p->decay < 1 ? log(p->decay) : 0;
    for (int i0 = 0; i0 < n; i0 += C) {
        int rows = n - i0 < C ? n - i0 : C;
        for (int a = 0; a < rows; a++) { b->m[a] = -INFINITY; b->l[a] = 0; }
        memset(b->Ob, 0, (size_t)rows * dv * sizeof(double));
        int k_lo = first_key(p, i0) / C * C; /* the first key chunk any row of this chunk reaches */
        for (int j0 = k_lo; j0 < i0 + rows; j0 += C) {
            int cols = n - j0 < C ? n - j0 : C;
            for (int a = 0; a < rows; a++) {
                int i = i0 + a, lo = first_key(p, i);
                double *s = b->sc + (size_t)a * C, mx = b->m[a];
                int any = 0;
                for (int c = 0; c < cols; c++) {
                    int j = j0 + c;
                    if (j > i || j < lo) { s[c] = -INFINITY; continue; }
                    s[c] = p->scale * dot_ff(Q + (size_t)i * d, K + (size_t)j * d, d) + (i - j) * lg;
                    mx = s[c] > mx ? s[c] : mx;
                    any = 1;
                }
                if (!any) continue;
                double shrink = b->m[a] == -INFINITY ? 0 : exp(b->m[a] - mx), *o = b->Ob + (size_t)a * dv;
                b->l[a] *= shrink;
                for (int e = 0; e < dv; e++) o[e] *= shrink;
                for (int c = 0; c < cols; c++) {
                    if (s[c] == -INFINITY) continue;
                    double w = exp(s[c] - mx);
                    b->l[a] += w;
                    const float *v = V + (size_t)(j0 + c) * dv;
                    for (int e = 0; e < dv; e++) o[e] += w * v[e];
                }
                b->m[a] = mx;
            }
        }
        for (int a = 0; a < rows; a++)
            for (int e = 0; e < dv; e++) O[(size_t)(i0 + a) * dv + e] = (float)(b->Ob[(size_t)a * dv + e] / b->l[a]);
    }
}

// ----------------------------------------------------------------------------------------------------
// the state families: features Φ_Q, Φ_K (n×r), values Vx (n×dvx; the kernel variants carry a column of
// ones whose output is the normaliser)

/* O's rows from the float64 outputs ob (rows×dvx): the kernel variants divide by their normaliser column
 * by the registry's rule; retention and the delta rule copy. Returns avi_norm_factor's zero bits. */
static int emit_rows(float *O, const double *ob, int rows, int dv, int dvx, int n, const av_params *p) {
    int zero = 0;
    for (int a = 0; a < rows; a++) {
        const double *o = ob + (size_t)a * dvx;
        double f = dvx > dv ? avi_norm_factor(p, n, o[dv], &zero) : 1.0;
        for (int c = 0; c < dv; c++) O[(size_t)a * dv + c] = (float)(o[c] * f);
    }
    return zero;
}

/* Token by token: S ← γS + φ(k_t)v_tᵀ (delta: S ← αS, u = β(v_t − Sᵀφ(k_t)), S += φ(k_t)uᵀ), o_t = Sᵀφ(q_t). */
static int state_scan(float *O, const float *Vx, int n, long r, int dv, int dvx, const av_params *p, const rbufs *b) {
    double *S = b->S, *o = b->Ob, g = p->decay;
    int delta = cls(p) == AV_CLASS_DELTA, zero = 0;
    memset(S, 0, (size_t)r * dvx * sizeof(double));
    for (int t = 0; t < n; t++) {
        const float *fk = b->PhiK + (size_t)t * r, *fq = b->PhiQ + (size_t)t * r, *v = Vx + (size_t)t * dvx;
        if (g != 1)
            for (size_t e = 0; e < (size_t)r * dvx; e++) S[e] *= g;
        if (delta) { /* o ← u = β(v − Sᵀk) as scratch */
            for (int c = 0; c < dvx; c++) o[c] = v[c];
            for (long f = 0; f < r; f++) {
                double kf = fk[f];
                if (kf != 0)
                    for (int c = 0; c < dvx; c++) o[c] -= kf * S[(size_t)f * dvx + c];
            }
            for (int c = 0; c < dvx; c++) o[c] *= p->beta;
        }
        for (long f = 0; f < r; f++) {
            double kf = fk[f];
            if (kf == 0) continue;
            double *s = S + (size_t)f * dvx;
            if (delta)
                for (int c = 0; c < dvx; c++) s[c] += kf * o[c];
            else
                for (int c = 0; c < dvx; c++) s[c] += kf * v[c];
        }
        for (int c = 0; c < dvx; c++) o[c] = 0;
        for (long f = 0; f < r; f++) {
            double qf = fq[f];
            if (qf != 0)
                for (int c = 0; c < dvx; c++) o[c] += qf * S[(size_t)f * dvx + c];
        }
        zero |= emit_rows(O + (size_t)t * dv, o, 1, dv, dvx, n, p);
    }
    return zero;
}

/* One chunk of decayed linear attention (kernel variants, retention), rows c0..c0+C'−1:
 *   o_a = γ^{a+1}·Sᵀφq_a + Σ_{b≤a} γ^{a−b}(φq_a·φk_b)v_b,   S ← γ^{C'}S + Σ_b γ^{C'−1−b}φk_b v_bᵀ. */
static void chunk_linear(double *ob, const float *Fq, const float *Fk, const float *Vc, int rows, long r, int dvx,
                         const rbufs *b) {
    const double *pw = b->pw;
    double *S = b->S, *sc = b->sc;
    for (int a = 0; a < rows; a++) { /* intra: the masked, decayed scores */
        for (int c = 0; c <= a; c++) sc[(size_t)a * rows + c] = dot_ff(Fq + (size_t)a * r, Fk + (size_t)c * r, (int)r) * pw[a - c];
        double *o = ob + (size_t)a * dvx;
        for (int e = 0; e < dvx; e++) o[e] = 0;
        for (int c = 0; c <= a; c++) {
            double w = sc[(size_t)a * rows + c];
            const float *v = Vc + (size_t)c * dvx;
            for (int e = 0; e < dvx; e++) o[e] += w * v[e];
        }
        for (long f = 0; f < r; f++) { /* inter: the state entering the chunk */
            double qf = Fq[(size_t)a * r + f] * pw[a + 1];
            if (qf != 0)
                for (int e = 0; e < dvx; e++) o[e] += qf * S[(size_t)f * dvx + e];
        }
    }
    for (size_t e = 0; e < (size_t)r * dvx; e++) S[e] *= pw[rows];
    for (int c = 0; c < rows; c++)
        for (long f = 0; f < r; f++) {
            double kf = Fk[(size_t)c * r + f] * pw[rows - 1 - c];
            if (kf == 0) continue;
            const float *v = Vc + (size_t)c * dvx;
            double *s = S + (size_t)f * dvx;
            for (int e = 0; e < dvx; e++) s[e] += kf * v[e];
        }
}

/* One chunk of the delta rule by the UT transform (g_a = α^{a+1}, Γ_ab = α^{a−b}):
 *   T = (I + stril(β·K_cK_cᵀ ⊙ Γ))⁻¹β, W = T·diag(g)·K_c, U = T·V_c − W·S
 *   o_a = g_a·Sᵀq_a + Σ_{b≤a} α^{a−b}(q_a·k_b)u_b,   S ← α^{C'}S + Σ_b α^{C'−1−b} k_b u_bᵀ. */
static void chunk_delta(double *ob, const float *Fq, const float *Fk, const float *Vc, int rows, long r, int dv,
                        const av_params *p, const rbufs *b) {
    const double *pw = b->pw;
    double *S = b->S, *T = b->T, *W = b->Wm, *U = b->U, beta = p->beta;
    /* T by forward substitution: row a of X = (I + L)⁻¹ is e_a − Σ_{c<a} L_ac·X_c (X lower triangular);
     * then T = βX */
    for (int a = 0; a < rows; a++) {
        double *t = T + (size_t)a * rows;
        for (int c = 0; c < rows; c++) t[c] = c == a;
        for (int c = 0; c < a; c++) {
            double lac = beta * pw[a - c] * dot_ff(Fk + (size_t)a * r, Fk + (size_t)c * r, (int)r);
            if (lac != 0) avs_axpy_neg_f64(t, lac, T + (size_t)c * rows, c + 1);
        }
    }
    for (size_t e = 0; e < (size_t)rows * rows; e++) T[e] *= beta;
    for (int a = 0; a < rows; a++) { /* W = T·diag(g)·K_c (C'×r), U = T·V_c − W·S (C'×dv) */
        const double *t = T + (size_t)a * rows;
        double *w = W + (size_t)a * r, *u = U + (size_t)a * dv;
        for (long f = 0; f < r; f++) w[f] = 0;
        for (int e = 0; e < dv; e++) u[e] = 0;
        for (int c = 0; c <= a; c++) {
            double tg = t[c] * pw[c + 1], tv = t[c];
            const float *k = Fk + (size_t)c * r, *v = Vc + (size_t)c * dv;
            for (long f = 0; f < r; f++) w[f] += tg * k[f];
            for (int e = 0; e < dv; e++) u[e] += tv * v[e];
        }
        for (long f = 0; f < r; f++)
            if (w[f] != 0)
                for (int e = 0; e < dv; e++) u[e] -= w[f] * S[(size_t)f * dv + e];
    }
    for (int a = 0; a < rows; a++) { /* outputs */
        double *o = ob + (size_t)a * dv;
        for (int e = 0; e < dv; e++) o[e] = 0;
        for (int c = 0; c <= a; c++) {
            double s = dot_ff(Fq + (size_t)a * r, Fk + (size_t)c * r, (int)r) * pw[a - c];
            const double *u = U + (size_t)c * dv;
            for (int e = 0; e < dv; e++) o[e] += s * u[e];
        }
        for (long f = 0; f < r; f++) {
            double qf = Fq[(size_t)a * r + f] * pw[a + 1];
            if (qf != 0)
                for (int e = 0; e < dv; e++) o[e] += qf * S[(size_t)f * dv + e];
        }
    }
    for (size_t e = 0; e < (size_t)r * dv; e++) S[e] *= pw[rows];
    for (int c = 0; c < rows; c++)
        for (long f = 0; f < r; f++) {
            double kf = Fk[(size_t)c * r + f] * pw[rows - 1 - c];
            if (kf == 0) continue;
            const double *u = U + (size_t)c * dv;
            double *s = S + (size_t)f * dv;
            for (int e = 0; e < dv; e++) s[e] += kf * u[e];
        }
}

/* The state families' recurrent or chunkwise output. */
static int state_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                     const av_params *p, const rbufs *b, int path) {
    long r = avi_feature_dim(p, d);
    int st = avi_features(b->PhiQ, b->PhiK, Q, K, n, d, p, b->inner);
    if (st < 0) return st;
    int dvx = dv + normalised(p), zero = 0;
    const float *Vx = V;
    if (b->Vx) {
        for (int t = 0; t < n; t++) {
            memcpy(b->Vx + (size_t)t * dvx, V + (size_t)t * dv, (size_t)dv * sizeof(float));
            b->Vx[(size_t)t * dvx + dv] = 1.0f;
        }
        Vx = b->Vx;
    }
    if (path == AVI_PATH_RECURRENT) return avi_merge(st, avi_zero_status(state_scan(O, Vx, n, r, dv, dvx, p, b)));
    int C = avi_chunk_of(p, n);
    powers(b->pw, C, p->decay);
    memset(b->S, 0, (size_t)r * dvx * sizeof(double));
    for (int c0 = 0; c0 < n; c0 += C) {
        int rows = n - c0 < C ? n - c0 : C;
        const float *Fq = b->PhiQ + (size_t)c0 * r, *Fk = b->PhiK + (size_t)c0 * r, *Vc = Vx + (size_t)c0 * dvx;
        if (cls(p) == AV_CLASS_DELTA) chunk_delta(b->Ob, Fq, Fk, Vc, rows, r, dvx, p, b);
        else chunk_linear(b->Ob, Fq, Fk, Vc, rows, r, dvx, b);
        zero |= emit_rows(O + (size_t)c0 * dv, b->Ob, rows, dv, dvx, n, p);
    }
    return avi_merge(st, avi_zero_status(zero));
}

int avi_recurrent_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                      const av_params *p, void *work, int path) {
    avi_arena a = avi_arena_over(work);
    rbufs b;
    rlayout(&b, &a, p, n, d, dv, path);
    if (cls(p) == AV_CLASS_EXACT) {
        if (path == AVI_PATH_RECURRENT) softmax_cache(O, Q, K, V, n, d, dv, p, &b);
        else softmax_flash(O, Q, K, V, n, d, dv, p, &b);
        return AV_OK;
    }
    return state_run(O, Q, K, V, n, d, dv, p, &b, path);
}

// ----------------------------------------------------------------------------------------------------
// the delta rule's matrix: row i of M solves m·(I + L) = β·a_i, a_ij = α^{i−j}(scale·q̂_i·k̂_j) for j ≤ i,
// L = stril(β·K̂K̂ᵀ ⊙ Γ); back substitution from m_i down, column-oriented: once m_k is final,
// m[0..k) −= m_k·L[k][0..k), a contiguous row of L.

int avi_delta_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    avi_arena a = avi_arena_over(work);
    rbufs b;
    rlayout(&b, &a, p, n, d, 1, AVI_PATH_DELTA_MATRIX);
    avi_phi_delta(b.PhiQ, b.PhiK, Q, K, n, d, p, NULL);
    powers(b.pw, n, p->decay);
    double beta = p->beta, *x = b.x;
    for (int k = 0; k < n; k++) {
        float *l = b.L + (size_t)k * n;
        for (int j = 0; j < k; j++) l[j] = (float)(beta * b.pw[k - j] * dot_ff(b.PhiK + (size_t)k * d, b.PhiK + (size_t)j * d, d));
    }
    for (int i = 0; i < n; i++) {
        const float *q = b.PhiQ + (size_t)i * d;
        for (int j = 0; j <= i; j++) x[j] = beta * b.pw[i - j] * dot_ff(q, b.PhiK + (size_t)j * d, d);
        for (int k = i; k > 0; k--)
            if (x[k] != 0) axpy_neg_fd(x, x[k], b.L + (size_t)k * n, k);
        float *m = M + (size_t)i * n;
        for (int j = 0; j <= i; j++) m[j] = (float)x[j];
        if (i + 1 < n) memset(m + i + 1, 0, (size_t)(n - i - 1) * sizeof(float));
    }
    return AV_OK;
}
