/* mechanisms.c: the computations behind the mechanism views (docs/mechanisms.md).
 *
 *   recall    N key→value pairs written in order into a memory (a variant's state, or softmax over the
 *             stored pairs), every key read back from the final memory: err_i = ‖o_i − v_i‖ / ‖v_i‖.
 *             The state is written by av_recurrent_step and read by its readout half, so the memory is
 *             exactly the one the stepper and the causal paths run; a gated family's state by av_gated_step
 *             (its gates, β, a, b of token t: prm's arrays, set for N tokens, or the constant knobs), read as
 *             o_i = Sᵀq̃(k_i); fox as softmax over the pairs with its bias Σ_{l=j+1..N−1} g_l.
 *   distill   Hedgehog's W trained by Adam on the mean row KL(A ‖ H) between softmax attention A and
 *             Hedgehog attention H, with the analytic gradient below.
 *
 * The gradient. With u = Wᵀx and φ(x) = exp([u, −u]) (the library's constants c cancel in H), for the
 * allowed pairs S_ij = φ(q_i)·φ(k_j), Z_i = Σ_j S_ij, H_ij = S_ij / Z_i and a_i = Σ_j A_ij (1 up to rounding):
 *   L = (1/n) Σ_i Σ_j A_ij (ln A_ij − ln H_ij)
 *   ∂L/∂S_ij = (a_i/Z_i − A_ij/S_ij) / n =: P_ij
 *   ∂L/∂φ(q_i) = Σ_j P_ij φ(k_j),  ∂L/∂φ(k_j) = Σ_i P_ij φ(q_i)
 *   ∂L/∂u_a = g_a φ_a − g_{a+cols} φ_{a+cols}   (g = ∂L/∂φ)
 *   ∂L/∂W = Σ_i q_i (∂L/∂u(q_i))ᵀ + Σ_j k_j (∂L/∂u(k_j))ᵀ
 * Everything after A is float64; the cost of a step is 3·n²·2cols multiply-adds (half with the mask).
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "gated.h"
#include "internal.h"
#include "simd.h"

// ----------------------------------------------------------------------------------------------------
// recall

int av_recall_draw(float *K, float *V, int N, int d, uint32_t seed) {
    if (!K || !V) return AV_ERR_NULL;
    if (N < 1 || N > AV_MAX_N || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    av_rng rng;
    av_rng_seed(&rng, avi_stream(AVI_STREAM_RECALL, seed));
    for (int i = 0; i < N; i++) {
        float *k = K + (size_t)i * d;
        double ss;
        do { /* a zero draw has probability 0; redrawing keeps the keys unit vectors regardless */
            ss = 0;
            for (int c = 0; c < d; c++) {
                double x = av_rng_normal(&rng);
                k[c] = (float)x;
                ss += (double)k[c] * k[c];
            }
        } while (ss == 0);
        double f = 1.0 / sqrt(ss);
        for (int c = 0; c < d; c++) k[c] = (float)(k[c] * f);
    }
    for (size_t e = 0; e < (size_t)N * d; e++) V[e] = (float)av_rng_normal(&rng);
    return AV_OK;
}

/* The knobs recall runs with: written in order (causal), scale absolute (0 → 1). */
static av_params recall_params(const av_params *prm) {
    av_params p = *prm;
    p.causal = 1;
    if (p.scale == 0) p.scale = 1;
    return p;
}

/* av_params_resolve of the recall knobs; a variant (or knob) without a causal form has no state either. */
static int recall_resolve(av_params *res, const av_params *p, int N, int d) {
    const av_variant_desc *vd = av_variant_info(p->variant);
    if (vd && vd->cls != AV_CLASS_EXACT && !(vd->flags & AV_VF_RECURRENT)) return AV_ERR_NO_LINEAR;
    int st = av_params_resolve(res, p, N, d);
    return st == AV_ERR_NO_CAUSAL ? AV_ERR_NO_LINEAR : st;
}

static int is_exact(const av_params *p) { return av_variant_info(p->variant)->cls == AV_CLASS_EXACT; }
static int is_gated(const av_params *p) { return av_variant_info(p->variant)->cls == AV_CLASS_GATED; }
static int is_hybrid(const av_params *p) { return av_variant_info(p->variant)->cls == AV_CLASS_HYBRID; }

/* The memory's rule: softmax, or a variant with a recurrent state (and a feature dimension under the cap). */
static int recall_rule(const av_params *p, int d, long *r) {
    *r = 0;
    if (is_exact(p) || is_gated(p) || is_hybrid(p)) return AV_OK; /* a cache, gated.c's state (d×d), or both */
    if (!(av_variant_info(p->variant)->flags & AV_VF_RECURRENT) || avi_extra_term(p)) return AV_ERR_NO_LINEAR;
    *r = avi_feature_dim(p, d);
    return *r > AV_MAX_FEATURE_DIM ? AV_ERR_FEATURE_DIM : AV_OK;
}

typedef struct recall_bufs {
    float *phi_q, *phi_k, *o;
    double *S, *z, *row;
    void *fwork;
    size_t fbytes;
} recall_bufs;

static void recall_layout(recall_bufs *b, avi_arena *a, const av_params *p, int N, int d, long r) {
    memset(b, 0, sizeof *b);
    b->o = avi_take(a, sizeof(float) * (uint64_t)d);
    if (is_gated(p)) { /* fox: a row of logits; the state families: S (d×d) */
        if (p->variant == AV_FOX) b->row = avi_take(a, sizeof(double) * (uint64_t)N);
        else b->S = avi_take(a, sizeof(double) * (uint64_t)d * d);
        return;
    }
    if (is_exact(p)) {
        b->row = avi_take(a, sizeof(double) * (uint64_t)N);
        return;
    }
    if (is_hybrid(p)) { /* lolcats: a row of terms, and u = W_hᵀk and φ(k) of every key (3·cols each) */
        b->row = avi_take(a, sizeof(double) * (uint64_t)N);
        b->S = avi_take(a, sizeof(double) * (uint64_t)N * 3u * (uint64_t)(p->hedgehog_w ? p->hedgehog_cols : d));
        return;
    }
    b->phi_q = avi_take(a, sizeof(float) * (uint64_t)N * r);
    b->phi_k = avi_take(a, sizeof(float) * (uint64_t)N * r);
    b->S = avi_take(a, sizeof(double) * (uint64_t)r * d);
    b->z = avi_take(a, sizeof(double) * (uint64_t)r);
    size_t fw = av_features_work(p, N, d);
    b->fbytes = fw;
    b->fwork = avi_take(a, fw);
}

size_t av_recall_work(const av_params *prm, int N, int d) {
    if (!prm || N < 1 || N > AV_MAX_N || d < 1 || d > AV_MAX_D) return 0;
    av_params p = recall_params(prm), res;
    long r;
    if (recall_resolve(&res, &p, N, d) != AV_OK || recall_rule(&res, d, &r) != AV_OK) return 0;
    avi_arena a = avi_arena_count();
    recall_bufs b;
    recall_layout(&b, &a, &p, N, d, r);
    return a.used > SIZE_MAX ? 0 : (size_t)a.used;
}

static double rel_error(const float *o, const float *v, int d) {
    double num = 0, den = 0;
    for (int c = 0; c < d; c++) {
        double e = (double)o[c] - v[c];
        num += e * e;
        den += (double)v[c] * v[c];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Pair i read back from the weights b->row[j0..N) and their sum: o = Σ_j row_j v_j / sum into b->o, err[i] its
 * relative error against v_i. Nonzero when o is not finite. */
static int read_back(double *err, int i, const float *V, int j0, int N, int d, double sum, const recall_bufs *b) {
    for (int c = 0; c < d; c++) {
        double acc = 0;
        for (int j = j0; j < N; j++) acc += b->row[j] * V[(size_t)j * d + c];
        b->o[c] = (float)(acc / sum);
    }
    err[i] = rel_error(b->o, V + (size_t)i * d, d);
    return !avs_all_finite(b->o, (size_t)d);
}

/* Softmax over the stored pairs: o_i = Σ_j w_ij v_j, logits scale·k_i·k_j + (N−1−j)·ln γ, the last W pairs.
 * AV_WARN_PRODUCT_OVERFLOW when some o_i is not finite: a logit scale·k_i·k_j past the double range (an
 * absolute scale near DBL_MAX) makes its row Inf − Inf. */
static int recall_softmax(double *err, const float *K, const float *V, int N, int d, const av_params *p,
                           const recall_bufs *b) {
    int j0 = p->window > 0 && N - p->window > 0 ? N - p->window : 0;
    double lg = p->decay < 1 ? log(p->decay) : 0;
    int st = AV_OK;
    for (int i = 0; i < N; i++) {
        const float *q = K + (size_t)i * d;
        double mx = -INFINITY, sum = 0;
        for (int j = j0; j < N; j++) {
            double s = 0;
            const float *k = K + (size_t)j * d;
            for (int c = 0; c < d; c++) s += (double)q[c] * k[c];
            b->row[j] = p->scale * s + (N - 1 - j) * lg;
            mx = b->row[j] > mx ? b->row[j] : mx;
        }
        for (int j = j0; j < N; j++) sum += b->row[j] = exp(b->row[j] - mx);
        if (read_back(err, i, V, j0, N, d, sum, b)) st = AV_WARN_PRODUCT_OVERFLOW;
    }
    return st;
}

/* fox: o_i = Σ_j softmax_j(scale·k̃_i·k̃_j + Σ_{l=j+1..N−1} g_l) v_j over the stored pairs (qk_l2norm as the
 * knob says), the bias summed from the newest pair back. */
static int recall_fox(double *err, const float *K, const float *V, int N, int d, const av_params *p,
                      const recall_bufs *b) {
    avi_gates G = avi_gates_of(p);
    int st = AV_OK;
    for (int i = 0; i < N; i++) {
        const float *ki = K + (size_t)i * d;
        double mx = -INFINITY, sum = 0, bias = 0, ni = 0;
        for (int c = 0; c < d; c++) ni += (double)ki[c] * ki[c];
        double fi = p->qk_l2norm > 0 ? p->scale / sqrt(ni + 1e-6) : p->scale;
        for (int j = N - 1; j >= 0; j--) {
            const float *kj = K + (size_t)j * d;
            double s = 0, nj = 0;
            for (int c = 0; c < d; c++) s += (double)ki[c] * kj[c], nj += (double)kj[c] * kj[c];
            b->row[j] = fi * s * (p->qk_l2norm > 0 ? 1 / sqrt(nj + 1e-6) : 1) + bias;
            mx = b->row[j] > mx ? b->row[j] : mx;
            bias += avi_gate(&G, j, 0);
        }
        for (int j = 0; j < N; j++) sum += b->row[j] = exp(b->row[j] - mx);
        if (read_back(err, i, V, 0, N, d, sum, b)) st = AV_WARN_PRODUCT_OVERFLOW;
    }
    return st;
}

static double dot(const double *a, const double *b, int len) {
    double s = 0;
    for (int k = 0; k < len; k++) s += a[k] * b[k];
    return s;
}

/* lolcats: key i read as the query of the row after all N pairs, o_i = Σ_j M_j v_j with the last W pairs
 * (j ≥ N − W) by exp(scale·k_i·k_j − m_i), m_i their largest logit, and the older ones by φ(k_i)·φ(k_j), one
 * normaliser (the matrix form's row with the memory as its keys; u = W_hᵀk, then φ of every key, in b->S). */
static int recall_lolcats(double *err, const float *K, const float *V, int N, int d, const av_params *p,
                          const recall_bufs *b) {
    const int cols = p->hedgehog_w ? p->hedgehog_cols : d, r = 2 * cols;
    const int lo = p->window > 0 && N - p->window > 0 ? N - p->window : 0;
    double *U = b->S, *F = b->S + (size_t)N * cols;
    avi_lolcats_features(F, U, K, p->hedgehog_w, NULL, N, d, cols);
    int st = AV_OK;
    for (int i = 0; i < N; i++) {
        const float *q = K + (size_t)i * d;
        double mx = -INFINITY, sum = 0;
        for (int j = lo; j < N; j++) {
            double s = 0;
            for (int c = 0; c < d; c++) s += (double)q[c] * K[(size_t)j * d + c];
            b->row[j] = p->scale * s;
            mx = b->row[j] > mx ? b->row[j] : mx;
        }
        for (int j = lo; j < N; j++) sum += b->row[j] = exp(b->row[j] - mx);
        for (int j = 0; j < lo; j++) sum += b->row[j] = dot(F + (size_t)i * r, F + (size_t)j * r, r);
        if (read_back(err, i, V, 0, N, d, sum, b)) st = AV_WARN_PRODUCT_OVERFLOW;
    }
    return st;
}

/* A gated state family: the N pairs written by av_gated_step with the call's gates (prm's arrays or the constant
 * knobs), each key then read as o_i = Sᵀq̃(k_i), q̃ = scale·l2norm?(k_i). */
static int recall_gated(double *err, const float *K, const float *V, int N, int d, const av_params *prm,
                        const av_params *res, const recall_bufs *b) {
    avi_gates G = avi_gates_of(res);
    int worst = AV_OK;
    memset(b->S, 0, sizeof(double) * (size_t)d * d);
    for (int t = 0; t < N; t++) {
        const size_t td = (size_t)t * d;
        int s1 = av_gated_step(b->o, b->S, K + td, K + td, V + td, G.g ? G.g + (size_t)t * G.gc : NULL, avi_beta(&G, t),
                               G.a ? G.a + td : NULL, G.b ? G.b + td : NULL, d, d, prm);
        if (s1 < 0) return s1;
        worst = avi_merge(worst, s1);
    }
    for (int i = 0; i < N; i++) {
        const float *k = K + (size_t)i * d;
        double ss = 0;
        for (int c = 0; c < d; c++) ss += (double)k[c] * k[c];
        double f = res->qk_l2norm > 0 ? res->scale / sqrt(ss + 1e-6) : res->scale;
        for (int e = 0; e < d; e++) {
            double o = 0;
            for (int c = 0; c < d; c++) o += (double)(float)(k[c] * f) * b->S[(size_t)c * d + e];
            b->o[e] = (float)o;
        }
        if (!avs_all_finite(b->o, (size_t)d)) worst = avi_merge(worst, AV_WARN_PRODUCT_OVERFLOW);
        err[i] = rel_error(b->o, V + (size_t)i * d, d);
    }
    return worst;
}

int av_recall_pairs(double *err, const float *K, const float *V, int N, int d, const av_params *prm, void *work,
                    size_t work_bytes) {
    if (!err || !K || !V || !prm) return AV_ERR_NULL;
    if (N < 1 || N > AV_MAX_N || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    av_params p = recall_params(prm), res;
    long r;
    int st = recall_resolve(&res, &p, N, d);
    if (st != AV_OK) return st;
    if ((st = recall_rule(&res, d, &r)) != AV_OK) return st;
    avi_arena a = avi_arena_count();
    recall_bufs b;
    recall_layout(&b, &a, &p, N, d, r);
    if (!work) return AV_ERR_NULL;
    if (work_bytes < a.used) return AV_ERR_WORKSPACE;
    if (!avs_all_finite(K, (size_t)N * d) || !avs_all_finite(V, (size_t)N * d)) return AV_ERR_NONFINITE;
    a = avi_arena_over(work);
    recall_layout(&b, &a, &p, N, d, r);
    if (is_exact(&res)) return recall_softmax(err, K, V, N, d, &res, &b);
    if (is_hybrid(&res)) return recall_lolcats(err, K, V, N, d, &res, &b);
    if (res.variant == AV_FOX && avi_gated_delegate(&res) == AV_SOFTMAX) { /* constant gates: the forgetting softmax */
        res.variant = AV_SOFTMAX;
        res.window = 0;
        return recall_softmax(err, K, V, N, d, &res, &b);
    }
    if (res.variant == AV_FOX) return recall_fox(err, K, V, N, d, &res, &b);
    if (is_gated(&res)) {
        av_params step = p; /* the step's knobs: prm's, its arrays read here row by row */
        return recall_gated(err, K, V, N, d, &step, &res, &b);
    }
    /* the features of keys as queries and as keys; the state written by the recurrent step */
    if ((st = av_features(b.phi_q, b.phi_k, K, K, N, d, &p, b.fwork, b.fbytes)) < 0) return st;
    int worst = st;
    memset(b.S, 0, sizeof(double) * (size_t)r * d);
    memset(b.z, 0, sizeof(double) * (size_t)r);
    for (int t = 0; t < N; t++) {
        const float *fk = b.phi_k + (size_t)t * r;
        int s1 = av_recurrent_step(b.o, b.S, b.z, fk, fk, V + (size_t)t * d, r, d, N, &p);
        if (s1 < 0) return s1;
        if (s1 == AV_WARN_OVERFLOW || s1 == AV_WARN_PRODUCT_OVERFLOW) worst = avi_merge(worst, s1);
    }
    for (int i = 0; i < N; i++) {
        worst = avi_merge(worst, avi_state_read(b.o, b.S, b.z, b.phi_q + (size_t)i * r, r, d, N, &res));
        err[i] = rel_error(b.o, V + (size_t)i * d, d);
    }
    return worst;
}

// ----------------------------------------------------------------------------------------------------
// distillation

/* The target's knobs: softmax with prm's scale and mask. */
static av_params target_params(const av_params *prm) {
    av_params p;
    av_params_default(&p, AV_SOFTMAX);
    p.scale = prm->scale;
    p.causal = prm->causal;
    return p;
}

typedef struct distill_bufs {
    float *A;                 /* n×n softmax target */
    void *mwork;              /* av_matrix's workspace (used before the rest) */
    size_t mbytes;
    double *S;                /* n×n scores, then P */
    double *Fq, *Fk;          /* n×2cols features */
    double *Gq, *Gk;          /* n×2cols gradients of the features */
    double *grad;             /* d×cols */
    double *Uq, *Uk;          /* lolcats: u = Wᵀx, n×cols each (NULL for hedgehog) */
} distill_bufs;

static void distill_layout(distill_bufs *b, avi_arena *a, const av_params *pt, int n, int d, int cols, int hybrid) {
    uint64_t r = 2u * (uint64_t)cols;
    b->A = avi_take(a, sizeof(float) * (uint64_t)n * n);
    b->mbytes = av_matrix_work(pt, n, d);
    b->mwork = avi_take(a, b->mbytes);
    b->S = avi_take(a, sizeof(double) * (uint64_t)n * n);
    b->Fq = avi_take(a, sizeof(double) * (uint64_t)n * r);
    b->Fk = avi_take(a, sizeof(double) * (uint64_t)n * r);
    b->Gq = avi_take(a, sizeof(double) * (uint64_t)n * r);
    b->Gk = avi_take(a, sizeof(double) * (uint64_t)n * r);
    b->grad = avi_take(a, sizeof(double) * (uint64_t)d * cols);
    if (hybrid) {
        b->Uq = avi_take(a, sizeof(double) * (uint64_t)n * cols);
        b->Uk = avi_take(a, sizeof(double) * (uint64_t)n * cols);
    }
}

/* The student is lolcats when prm says so (its window and scale read, resolved into *ph: it must be causal),
 * else Hedgehog (prm's other knobs ignored). */
static int is_lolcats(const av_params *prm) { return prm->variant == AV_LOLCATS; }

static int distill_args(const av_params *prm, int n, int d, int cols, av_params *pt, av_params *ph) {
    if (n < 1 || n > AV_MAX_N || d < 1 || d > AV_MAX_D || cols < 1 || cols > AV_MAX_FEATURE_DIM / 2) return AV_ERR_SIZE;
    *pt = target_params(prm);
    if (is_lolcats(prm)) {
        av_params h = *prm;
        h.hedgehog_w = NULL; /* the weights trained are the caller's W, not prm's */
        h.hedgehog_cols = 0;
        int st = av_params_resolve(ph, &h, n, d);
        if (st != AV_OK) return st;
    }
    av_params res;
    return av_params_resolve(&res, pt, n, d);
}

size_t av_distill_work(const av_params *prm, int n, int d, int cols) {
    av_params pt, ph;
    if (!prm || distill_args(prm, n, d, cols, &pt, &ph) != AV_OK) return 0;
    avi_arena a = avi_arena_count();
    distill_bufs b;
    distill_layout(&b, &a, &pt, n, d, cols, is_lolcats(prm));
    return a.used > SIZE_MAX ? 0 : (size_t)a.used;
}

/* F[n×2cols] = exp([u, −u] − c) with u = Wᵀx; c = max|u| per row (queries) or over all rows (keys). */
static void features(double *F, const float *X, const double *W, int n, int d, int cols, int per_row) {
    double cg = 0;
    for (int i = 0; i < n; i++) {
        double *u = F + (size_t)i * 2 * cols;
        const float *x = X + (size_t)i * d;
        for (int c = 0; c < cols; c++) u[c] = 0;
        for (int f = 0; f < d; f++) {
            double xf = x[f];
            if (xf == 0) continue;
            const double *w = W + (size_t)f * cols;
            for (int c = 0; c < cols; c++) u[c] += xf * w[c];
        }
        double m = 0;
        for (int c = 0; c < cols; c++) m = fabs(u[c]) > m ? fabs(u[c]) : m;
        u[cols] = m; /* parked until the exponentials (the first negative half slot) */
        cg = m > cg ? m : cg;
    }
    for (int i = 0; i < n; i++) {
        double *u = F + (size_t)i * 2 * cols, c0 = per_row ? u[cols] : cg;
        for (int c = 0; c < cols; c++) {
            double x = u[c];
            u[c] = exp(x - c0);
            u[cols + c] = exp(-x - c0);
        }
    }
}

static void backprop(distill_bufs *b, int cols, const float *Q, const float *K, int n, int d, int causal,
                     int softmax_map);

/* The loss at W and (want_grad) its gradient into b->grad. A is in b->A. */
static double loss_grad(distill_bufs *b, const double *W, int cols, const float *Q, const float *K, int n, int d,
                        int causal, int want_grad) {
    int r = 2 * cols;
    features(b->Fq, Q, W, n, d, cols, 1);
    features(b->Fk, K, W, n, d, cols, 0);
    double L = 0;
    for (int i = 0; i < n; i++) {
        int jn = causal ? i + 1 : n;
        const float *A = b->A + (size_t)i * n;
        double *S = b->S + (size_t)i * n, Z = 0, asum = 0;
        for (int j = 0; j < jn; j++) Z += S[j] = dot(b->Fq + (size_t)i * r, b->Fk + (size_t)j * r, r);
        for (int j = 0; j < jn; j++) {
            double aij = A[j];
            asum += aij;
            if (aij > 0) L += aij * (log(aij) - log(S[j] / Z));
        }
        if (want_grad)
            for (int j = 0; j < jn; j++) S[j] = (asum / Z - A[j] / S[j]) / n; /* P_ij */
    }
    L /= n;
    if (!want_grad) return L;
    backprop(b, cols, Q, K, n, d, causal, 0);
    return L;
}

/* lolcats's loss and P. The row's log-terms x_ij: scale·q_i·k_j − m_i in the window (i − W < j ≤ i; m_i its
 * largest logit, fixed: no weights), before it ln φ(q_i)·φ(k_j) with φ = [softmax(u), softmax(−u)]; M = softmax_j x.
 * ∂L/∂x_ij = (a_i M_ij − A_ij)/n, so ∂L/∂(φ(q_i)·φ(k_j)) = P_ij = ∂L/∂x_ij / φ(q_i)·φ(k_j) on the old keys and 0
 * in the window; backprop carries P through the products and the two feature softmaxes. */
static double loss_grad_lolcats(distill_bufs *b, const double *W, int cols, const float *Q, const float *K, int n,
                                int d, const av_params *ph, int want_grad) {
    const int r = 2 * cols, win = ph->window <= 0 || ph->window > n ? n : ph->window;
    avi_lolcats_features(b->Fq, b->Uq, Q, NULL, W, n, d, cols);
    avi_lolcats_features(b->Fk, b->Uk, K, NULL, W, n, d, cols);
    double L = 0;
    for (int i = 0; i < n; i++) {
        const int lo = i - win + 1 > 0 ? i - win + 1 : 0;
        const float *A = b->A + (size_t)i * n, *q = Q + (size_t)i * d;
        double *x = b->S + (size_t)i * n, mw = -INFINITY, mx = 0, Z = 0, asum = 0;
        for (int j = lo; j <= i; j++) {
            double s = 0;
            for (int c = 0; c < d; c++) s += (double)q[c] * K[(size_t)j * d + c];
            x[j] = ph->scale * s;
            mw = x[j] > mw ? x[j] : mw;
        }
        for (int j = lo; j <= i; j++) x[j] -= mw; /* the window's largest term is e^0 */
        for (int j = 0; j < lo; j++) {
            double t = dot(b->Fq + (size_t)i * r, b->Fk + (size_t)j * r, r);
            /* below AVI_LOLCATS_TINY the product may have underflowed: its logarithm directly */
            x[j] = t >= AVI_LOLCATS_TINY ? log(t) : avi_lolcats_log_pair(b->Uq + (size_t)i * cols, b->Uk + (size_t)j * cols, cols);
            mx = x[j] > mx ? x[j] : mx; /* ≤ ln 2; 0 from the window */
        }
        for (int j = 0; j <= i; j++) Z += exp(x[j] - mx);
        const double lz = mx + log(Z);
        for (int j = 0; j <= i; j++) {
            double aij = A[j];
            asum += aij;
            if (aij > 0) L += aij * (log(aij) - (x[j] - lz));
        }
        if (want_grad)
            for (int j = 0; j <= i; j++) {
                double pij = (asum * exp(x[j] - lz) - A[j]) / n;
                x[j] = j < lo ? pij * exp(-x[j]) : 0;
            }
    }
    L /= n;
    if (want_grad) backprop(b, cols, Q, K, n, d, 1, 1);
    return L;
}

/* ∂L/∂W into b->grad from P (in b->S, row i's allowed entries) and the features Fq, Fk. */
static void backprop(distill_bufs *b, int cols, const float *Q, const float *K, int n, int d, int causal,
                     int softmax_map) {
    int r = 2 * cols;
    memset(b->Gq, 0, sizeof(double) * (size_t)n * r);
    memset(b->Gk, 0, sizeof(double) * (size_t)n * r);
    for (int i = 0; i < n; i++) {
        int jn = causal ? i + 1 : n;
        const double *P = b->S + (size_t)i * n, *fq = b->Fq + (size_t)i * r;
        double *gq = b->Gq + (size_t)i * r;
        for (int j = 0; j < jn; j++) {
            double pij = P[j];
            const double *fk = b->Fk + (size_t)j * r;
            double *gk = b->Gk + (size_t)j * r;
            for (int a = 0; a < r; a++) {
                gq[a] += pij * fk[a];
                gk[a] += pij * fq[a];
            }
        }
    }
    /* ∂L/∂u in place of G's first half, then ∂L/∂W */
    memset(b->grad, 0, sizeof(double) * (size_t)d * cols);
    for (int side = 0; side < 2; side++) {
        const float *X = side ? K : Q;
        double *G = side ? b->Gk : b->Gq;
        const double *F = side ? b->Fk : b->Fq;
        for (int i = 0; i < n; i++) {
            double *g = G + (size_t)i * r;
            const double *f = F + (size_t)i * r;
            if (softmax_map) { /* φ = [p, p̄] = [softmax(u), softmax(−u)]: ∂/∂u_c = p_c(g_c − g·p) − p̄_c(ḡ_c − ḡ·p̄) */
                const double gp = dot(g, f, cols), gn = dot(g + cols, f + cols, cols);
                for (int c = 0; c < cols; c++) g[c] = f[c] * (g[c] - gp) - f[cols + c] * (g[cols + c] - gn);
            } else
                for (int c = 0; c < cols; c++) g[c] = g[c] * f[c] - g[cols + c] * f[cols + c];
            const float *x = X + (size_t)i * d;
            for (int fi = 0; fi < d; fi++) {
                double xf = x[fi];
                if (xf == 0) continue;
                double *gw = b->grad + (size_t)fi * cols;
                for (int c = 0; c < cols; c++) gw[c] += xf * g[c];
            }
        }
    }
}

static double student_loss(distill_bufs *b, const double *W, int cols, const float *Q, const float *K, int n, int d,
                           const av_params *prm, const av_params *ph, int want_grad) {
    if (is_lolcats(prm)) return loss_grad_lolcats(b, W, cols, Q, K, n, d, ph, want_grad);
    return loss_grad(b, W, cols, Q, K, n, d, prm->causal, want_grad);
}

static int all_finite_d(const double *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* Check the arguments, lay out the workspace and compute the target A. */
static int distill_begin(distill_bufs *b, av_params *ph, const double *W, int cols, const float *Q, const float *K,
                         int n, int d, const av_params *prm, void *work, size_t work_bytes) {
    if (!W || !Q || !K || !prm) return AV_ERR_NULL;
    av_params pt;
    int st = distill_args(prm, n, d, cols, &pt, ph);
    if (st != AV_OK) return st;
    avi_arena a = avi_arena_count();
    distill_layout(b, &a, &pt, n, d, cols, is_lolcats(prm));
    if (!work) return AV_ERR_NULL;
    if (work_bytes < a.used) return AV_ERR_WORKSPACE;
    if (!all_finite_d(W, (size_t)d * cols)) return AV_ERR_NONFINITE;
    a = avi_arena_over(work);
    distill_layout(b, &a, &pt, n, d, cols, is_lolcats(prm));
    st = av_matrix(b->A, Q, K, n, d, &pt, b->mwork, b->mbytes);
    return st; /* AV_ERR_NONFINITE for bad Q, K; a warning when the logits overflowed */
}

int av_distill_loss(double *loss, double *grad, const double *W, int cols, const float *Q, const float *K, int n,
                    int d, const av_params *prm, void *work, size_t work_bytes) {
    if (!loss) return AV_ERR_NULL;
    distill_bufs b;
    av_params ph;
    int st = distill_begin(&b, &ph, W, cols, Q, K, n, d, prm, work, work_bytes);
    if (st > 0) *loss = NAN; /* the target is not finite: av_matrix's own warning says why */
    if (st != AV_OK) return st;
    *loss = student_loss(&b, W, cols, Q, K, n, d, prm, &ph, grad != NULL);
    if (grad) memcpy(grad, b.grad, sizeof(double) * (size_t)d * cols);
    return isfinite(*loss) && (!grad || all_finite_d(grad, (size_t)d * cols)) ? AV_OK : AV_WARN_OVERFLOW;
}

/* One Adam update of entry e (step t's bias corrections c1, c2): the new first and second moments and W. */
typedef struct adam_entry { double m, v, w; } adam_entry;
static adam_entry adam(double m, double v, double w, double g, double lr, double c1, double c2) {
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    adam_entry out;
    out.m = b1 * m + (1 - b1) * g;
    out.v = b2 * v + (1 - b2) * g * g;
    out.w = w - lr * (out.m / c1) / (sqrt(out.v / c2) + eps);
    return out;
}

int av_distill(double *W, double *moments, int t0, double *loss, int steps, double lr, int cols, const float *Q,
               const float *K, int n, int d, const av_params *prm, void *work, size_t work_bytes) {
    if (!moments) return AV_ERR_NULL;
    /* t0 + steps must stay an int: the step count t0 + k + 1 feeds the bias corrections */
    if (steps < 0 || t0 < 0 || steps > INT_MAX - t0 || !(lr >= 0) || !isfinite(lr)) return AV_ERR_KNOB;
    if (lr == 0) lr = 0.05;
    distill_bufs b;
    av_params ph;
    int st = distill_begin(&b, &ph, W, cols, Q, K, n, d, prm, work, work_bytes);
    if (st > 0) /* the target is not finite: no step, every loss NaN, av_matrix's own warning */
        for (int k = 0; loss && k < steps; k++) loss[k] = NAN;
    if (st != AV_OK) return st;
    size_t cnt = (size_t)d * cols;
    double *m = moments, *v = moments + cnt;
    if (t0 > 0) { /* the caller's state: finite, and second moments (means of g²) not negative */
        if (!all_finite_d(moments, 2 * cnt)) return AV_ERR_NONFINITE;
        for (size_t e = 0; e < cnt; e++)
            if (v[e] < 0) return AV_ERR_KNOB;
    } else
        memset(moments, 0, sizeof(double) * 2 * cnt);
    for (int k = 0; k < steps; k++) {
        double L = student_loss(&b, W, cols, Q, K, n, d, prm, &ph, 1);
        if (loss) loss[k] = L;
        int t = t0 + k + 1;
        double c1 = 1 - pow(0.9, t), c2 = 1 - pow(0.999, t);
        int ok = isfinite(L) && all_finite_d(b.grad, cnt);
        /* the whole update is computed before any of it is written: a step that would leave the double range
         * (a huge lr) is not taken, so W and the moments stay a state the next call can resume from */
        for (size_t e = 0; ok && e < cnt; e++) {
            adam_entry a = adam(m[e], v[e], W[e], b.grad[e], lr, c1, c2);
            ok = isfinite(a.m) && isfinite(a.v) && isfinite(a.w);
        }
        if (!ok) {
            for (int j = k + 1; loss && j < steps; j++) loss[j] = NAN;
            return isfinite(L) && all_finite_d(b.grad, cnt) ? AV_WARN_PRODUCT_OVERFLOW : AV_WARN_OVERFLOW;
        }
        for (size_t e = 0; e < cnt; e++) {
            adam_entry a = adam(m[e], v[e], W[e], b.grad[e], lr, c1, c2);
            m[e] = a.m, v[e] = a.v, W[e] = a.w;
        }
    }
    return AV_OK;
}
