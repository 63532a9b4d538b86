/* attention.c: the quadratic path, every variant's n×n matrix and its output (av_matrix, av_attend,
 * av_scores). The linear-time paths are in linear.c, what both share in engine.h, the cost model in
 * cost.c. Formulas: docs/variant-formulas.md; ε rules and scalings: docs/conventions.md.
 *
 * Softmax has its own fast kernel: S = scale·Q·Kᵀ by a packed 4×8 register-blocked gemm (simd.h), each
 * strip of 4 rows max-subtracted, exponentiated by the polynomial exp and normalised while in cache.
 * The kernel variants share one engine over Φ_Q, Φ_K (features.c):
 *   quadratic  A = D⁻¹·mask(Φ_Q Φ_Kᵀ), D_ii = the variant's normaliser of row i's sum
 *   linear     O_i = Φ_Q(i)ᵀ[Φ_Kᵀ V] / norm(Φ_Q(i)·Σ_j Φ_K(j))  (non-causal), or a scan of
 *              S ← S + φ(k_t)v_tᵀ, z ← z + φ(k_t), o_t = Sᵀφ(q_t) / norm(φ(q_t)·z) (causal, float64 state)
 *   factors    L = D⁻¹Φ_Q, R = Φ_K (non-causal)
 * norm(x) = x + ε (elu, relu ε = 1e-6; focused n·1e-6; exp, efficient, performer, taylor, explimit,
 * hedgehog ε = 0) or max(x, 1e-6) (cosformer). A row whose sum is ≤ 0 is reported (AV_WARN_ZERO_ROW);
 * when its normaliser is exactly 0 the row is left unnormalised (its numerators), so nothing turns NaN.
 * Taylor and explimit matrices come from the registry row's closed-form kernel κ(scale·q·k), normalised by the
 * row sum; Linformer and Nyström from lowrank.c.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine.h"

// ----------------------------------------------------------------------------------------------------
// the n×n matrices, a 4-row strip at a time

/* What a strip's rows become once their scores are in: finish(row, i, len, ctx) turns the allowed entries
 * row[0..len) of row i into the variant's weights while the strip is in cache (the masked tail is zeroed
 * after) and returns 1 when the row's sum was ≤ 0. */
typedef int (*row_finish)(float *row, int i, int len, int n, const void *ctx);

/* What the row functions read: the resolved knobs and the decay table. tab[t] holds the factor of offset
 * i − j = n − 1 − t, so that row i's entries j = 0..i read the contiguous tab[n − 1 − i .. n − 1]: γ^{i−j}
 * (kernel variants, retention), or (i − j)·ln γ added to the logits (softmax: the forgetting softmax). */
typedef struct row_ctx { const av_params *p; const float *tab; const int *shift; } row_ctx;

static void decay_table(float *tab, int n, const av_params *p, int logarithmic) {
    double g = p->decay, lg = logarithmic ? log(g) : 0, pw = 1;
    for (int t = n - 1; t >= 0; t--) {
        tab[t] = (float)(logarithmic ? (n - 1 - t) * lg : pw);
        pw *= g;
    }
}
static int decayed(const av_params *p) { return p->causal && p->decay < 1; }

/* row[j] ·= γ^{i−j} for j ≤ i (a causal row: len = i + 1). */
static void apply_decay(float *row, int i, const row_ctx *c, int n) {
    const float *t = c->tab + (n - 1 - i);
    for (int j = 0; j <= i; j++) row[j] *= t[j];
}

/* Rows r[0], r[1] of A·Bᵀ (r[1] = r[0] for one row) over columns [0, ncols) into D (2 rows of n doubles),
 * each entry the float64 sum of exact products: the products of φ that float32 would round to subnormals
 * or 0 keep their value (focused's wide rows, focused_shifts). */
static void rows_f64(double *D, int n, const float *A, long k, const int r[2], const float *P, int ncols) {
    double acc[AVS_F64_ROWS][AVS_F64_COLS];
    const size_t step = (size_t)(r[1] - r[0]) * (size_t)k;
    for (int j0 = 0; j0 < ncols; j0 += AVS_PANEL) {
        avs_kernel_f64_ff(acc, A + (size_t)r[0] * k, step, P + (size_t)j0 * k, AVS_PANEL, (int)k);
        int w = ncols - j0 < AVS_PANEL ? ncols - j0 : AVS_PANEL;
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < w; j++) D[(size_t)h * n + j0 + j] = acc[h][j];
    }
}

/* What a wide row becomes: its float64 scores row[0..len) turned into the variant's weights out[0..len)
 * (returns 1 when the row's sum was ≤ 0), as row_finish does for a float row. */
typedef int (*row_finish64)(float *out, double *row, int i, int len, int n, const void *ctx);

/* Rows i0..i0+rows−1 of M (scale 1) where some are wide: those summed and finished in float64, two at a
 * time (D: 2n doubles), the others one by one through the float gemm (a row's entries have the same bits
 * whatever strip it is computed in) and finished by the caller. Returns 1 when a wide row's sum was ≤ 0. */
static int strip_mixed(float *M, const float *A, long k, int n, int causal, int i0, int rows, int ncols,
                       const float *P, const unsigned char *wide, double *D, row_finish64 finish64,
                       const void *ctx) {
    int w[4], nw = 0, zero = 0;
    for (int i = i0; i < i0 + rows; i++) {
        if (wide[i]) w[nw++] = i;
        else
            avs_gemm_strip(M + (size_t)i * n, (size_t)n, A + (size_t)i * k, (size_t)k, 1, P, (int)k, ncols, (int)k,
                           1.0f, 0);
    }
    for (int h = 0; h < nw; h += 2) {
        const int r[2] = {w[h], h + 1 < nw ? w[h + 1] : w[h]};
        rows_f64(D, n, A, k, r, P, ncols);
        for (int e = 0; e < (r[1] != r[0] ? 2 : 1); e++)
            zero |= finish64(M + (size_t)r[e] * n, D + (size_t)e * n, r[e], causal ? r[e] + 1 : n, n, ctx);
    }
    return zero;
}

/* M[n×n]: rows i0..i0+3 ← scale·A·Bᵀ over the allowed columns (causal: j ≤ i), B (n×k) packed into P
 * here, then each row finished and its masked tail zeroed. Returns 1 when some row's sum was ≤ 0.
 * wide (or NULL): rows summed in float64 and finished by finish64 (strip_mixed; scale must then be 1). */
static int matrix_by_strips(float *M, const float *A, const float *B, long k, int n, float scale, int causal,
                            float *P, row_finish finish, const void *ctx, const unsigned char *wide, double *D,
                            row_finish64 finish64) {
    int zero = 0;
    avs_pack_bt(P, B, (size_t)k, n, (int)k);
    for (int i0 = 0; i0 < n; i0 += 4) {
        int rows = n - i0 < 4 ? n - i0 : 4;
        int ncols = causal ? i0 + rows : n, any = 0;
        for (int i = i0; wide && i < i0 + rows; i++) any |= wide[i];
        if (any)
            zero |= strip_mixed(M, A, k, n, causal, i0, rows, ncols, P, wide, D, finish64, ctx);
        else
            avs_gemm_strip(M + (size_t)i0 * n, (size_t)n, A + (size_t)i0 * k, (size_t)k, rows, P, (int)k, ncols,
                           (int)k, scale, 0);
        for (int i = i0; i < i0 + rows; i++) {
            float *row = M + (size_t)i * n;
            int len = causal ? i + 1 : n;
            if (!any || !wide[i]) zero |= finish(row, i, len, n, ctx);
            if (len < n) memset(row + len, 0, (size_t)(n - len) * sizeof(float));
        }
    }
    return zero;
}

// ----------------------------------------------------------------------------------------------------
// softmax: M = rowsoftmax(scale·Q·Kᵀ), max-subtracted, causal inclusive

/* A softmax row over row[lo..hi): the window's keys (all allowed ones without a window), the logits
 * shifted by (i − j)·ln γ when decayed (the forgetting softmax); the rest of row[0..len) zeroed. */
static int softmax_row(float *row, int i, int len, int n, const void *ctx) {
    const row_ctx *c = ctx;
    const av_params *p = c->p;
    int lo = 0, hi = len;
    if (p->window > 0) {
        lo = i - p->window + 1 > 0 ? i - p->window + 1 : 0;
        hi = i + p->window < len ? i + p->window : len;
    }
    if (decayed(p)) {
        const float *t = c->tab + (n - 1 - i);
        for (int j = lo; j < hi; j++) row[j] += t[j];
    }
    float *r = row + lo;
    int m_len = hi - lo;
    float m = avs_max(r, m_len);
    float s = avs_exp_sub_sum(r, m_len, m);
    avs_scale(r, m_len, 1.0f / s);
    if (lo > 0) memset(row, 0, (size_t)lo * sizeof(float));
    if (hi < len) memset(row + hi, 0, (size_t)(len - hi) * sizeof(float));
    return 0;
}

/* M[n×n]; b->P: K packed (packed_bytes(n, d)), b->tab: the decay table. Returns AV_OK; a logit beyond
 * float32 range (Inf or NaN in scale·q·k) leaves NaN in its row, which matrix_resolved reports. */
static int softmax_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, const bufs *b) {
    row_ctx c = {p, b->tab, NULL};
    if (decayed(p)) decay_table(b->tab, n, p, 1);
    matrix_by_strips(M, Q, K, d, n, (float)p->scale, p->causal, b->P, softmax_row, &c, NULL, NULL, NULL);
    return AV_OK;
}

/* Retention: M_ij = γ^{i−j}·scale·q_i·k_j for j ≤ i, no normaliser. */
static int retention_row(float *row, int i, int len, int n, const void *ctx) {
    (void)len;
    apply_decay(row, i, ctx, n);
    return 0;
}
static int retention_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, const bufs *b) {
    row_ctx c = {p, b->tab, NULL};
    decay_table(b->tab, n, p, 0);
    matrix_by_strips(M, Q, K, d, n, (float)p->scale, 1, b->P, retention_row, &c, NULL, NULL, NULL);
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// the kernel engine, quadratic path

/* A kernel matrix's row: the allowed entries (decayed by γ^{i−j}) scaled by the normaliser factor of their sum.
 * A row computed 2^sh times too large (focused_shifts) has its sum and its factor unscaled exactly in float64,
 * so the normaliser's ε and the entries are those of the unscaled products. */
static int normalise_row(float *row, int i, int len, int n, const void *ctx) {
    const row_ctx *c = ctx;
    int zero = 0, sh = c->shift ? c->shift[i] : 0;
    if (decayed(c->p)) apply_decay(row, i, c, n);
    if (!sh) {
        scale_by(row, len, norm_factor(c->p, n, avs_sum_f64(row, len), &zero));
        return zero;
    }
    double f = ldexp(norm_factor(c->p, n, ldexp(avs_sum_f64(row, len), -sh), &zero), -sh);
    if (f >= FLT_MIN) scale_by(row, len, f); // a normal float factor: the SIMD scaling, as for sh = 0
    else
        for (int j = 0; j < len; j++) row[j] = (float)(row[j] * f);
    return zero;
}

/* normalise_row for a wide row's float64 scores: decayed, summed and normalised in float64 and rounded once
 * to float, so that entries far below the row's largest keep their digits. */
static int normalise_row64(float *out, double *row, int i, int len, int n, const void *ctx) {
    const row_ctx *c = ctx;
    int zero = 0, sh = c->shift ? c->shift[i] : 0;
    if (decayed(c->p)) {
        const float *t = c->tab + (n - 1 - i);
        for (int j = 0; j < len; j++) row[j] *= t[j];
    }
    double sum = 0;
    for (int j = 0; j < len; j++) sum += row[j];
    double f = ldexp(norm_factor(c->p, n, ldexp(sum, -sh), &zero), -sh);
    for (int j = 0; j < len; j++) out[j] = (float)(row[j] * f);
    return zero;
}

/* e with 2^e ≤ x < 2^(e+1), for a finite x > 0 (subnormals included). */
static int exponent_of(float x) {
    int e;
    frexpf(x, &e);
    return e - 1;
}

/* The least and largest positive entries of x[len] (0 and 0 when there is none). */
static void positive_range(const float *x, size_t len, float *lo, float *hi) {
    float a = FLT_MAX, b = 0;
    for (size_t k = 0; k < len; k++)
        if (x[k] > 0) {
            a = x[k] < a ? x[k] : a;
            b = x[k] > b ? x[k] : b;
        }
    *lo = b > 0 ? a : 0;
    *hi = b;
}

/* Focused features span ~2^-140 (an x ≤ 0 gives u^p ≈ (1e-6/max y)^p) to ~2^6, so Φ_Q·Φ_Kᵀ in float32
 * makes subnormal operands and products, which x86 and WASM compute 30 to 80 times slower (246 against
 * 7 ms at n = 1024, p = 3.1, in WASM). Scale Φ_K by 2^t and row i of Φ_Q by 2^(s_i − t), powers of two
 * (exact, subnormals included), so that every entry and every product lies in [2^-126, 2^124/r] where
 * that span allows; the rows' normaliser undoes 2^s_i exactly (normalise_row). Where it does not
 * (p ≳ 6: tiny·tiny ≈ 2^-280 beside large·large ≈ 2^5), the scalings stop at the top so that nothing
 * overflows that would not, and the row is marked wide: its products are summed in float64 (rows_f64),
 * where every product of two floats is exact and normal, so no product is lost or slow. No shift is
 * negative, so an overflow the unscaled product would have is kept. shift[i] ← s_i, wide[i] ← 0 or 1. */
static void focused_shifts(float *PhiQ, float *PhiK, int n, long r, int *shift, unsigned char *wide) {
    float klo, khi, qlo, qhi;
    positive_range(PhiK, (size_t)n * r, &klo, &khi);
    positive_range(PhiQ, (size_t)n * r, &qlo, &qhi);
    memset(shift, 0, sizeof(int) * (size_t)n);
    memset(wide, 0, (size_t)n);
    if (!(khi > 0 && qhi > 0) || !(khi <= FLT_MAX && qhi <= FLT_MAX)) return;
    int lr = 0;
    while ((1L << lr) < r) lr++;
    const int top = 124 - lr, ek_lo = exponent_of(klo), ek_hi = exponent_of(khi), eq_hi = exponent_of(qhi);
    int t = -126 - ek_lo; // Φ_K's entries normal, the largest product still below the top
    const int k_short = t > top - 2 - eq_hi - ek_hi || t > 126 - ek_hi; // Φ_K keeps subnormal entries
    if (t > top - 2 - eq_hi - ek_hi) t = top - 2 - eq_hi - ek_hi;
    if (t > 126 - ek_hi) t = 126 - ek_hi;
    if (t < 0) t = 0;
    if (t) avs_scale(PhiK, (int)((size_t)n * r), ldexpf(1.0f, t)); // n·r < 2^31: AV_MAX_N · AV_MAX_FEATURE_DIM
    for (int i = 0; i < n; i++) {
        float *q = PhiQ + (size_t)i * r;
        positive_range(q, (size_t)r, &qlo, &qhi);
        if (!(qhi > 0)) continue;
        const int lo = exponent_of(qlo), hi = exponent_of(qhi);
        int s = -126 - lo - (ek_lo + t); // the least product normal
        if (s < -126 - lo) s = -126 - lo; // and the row's entries
        const int want = s;
        if (s > top - 2 - hi - (ek_hi + t)) s = top - 2 - hi - (ek_hi + t);
        if (s > 126 - hi) s = 126 - hi;
        if (s < 0) s = 0;
        if (s) avs_scale(q, (int)r, ldexpf(1.0f, s));
        shift[i] = s + t;
        wide[i] = k_short || s < want;
    }
}

/* M = D⁻¹·mask(Φ_Q Φ_Kᵀ ⊙ Γ) from features already in PhiQ, PhiK (n×r); b->P: packed Φ_Kᵀ, b->tab: decay.
 * With b->shift (focused) the features are rescaled in place first (focused_shifts). */
static int features_matrix(float *M, float *PhiQ, float *PhiK, int n, long r, const av_params *p, const bufs *b) {
    row_ctx c = {p, b->tab, b->shift};
    if (decayed(p)) decay_table(b->tab, n, p, 0);
    if (b->shift) focused_shifts(PhiQ, PhiK, n, r, b->shift, b->wide);
    return zero_status(matrix_by_strips(M, PhiQ, PhiK, r, n, 1.0f, p->causal, b->P, normalise_row, &c, b->wide, b->wrow,
                                            normalise_row64));
}

/* A closed-form row: each score s becomes κ(s) (in double), decayed by γ^{i−j}, then divided by its sum. */
static int kernel_row(float *row, int i, int len, int n, const void *ctx) {
    const row_ctx *c = ctx;
    const av_params *p = c->p;
    int zero = 0;
    double sum = avi_variant_of(p->variant)->kernel_row(p, row, len);
    if (decayed(p)) {
        apply_decay(row, i, c, n);
        sum = avs_sum_f64(row, len);
    }
    double f = norm_factor(p, n, sum, &zero);
    for (int j = 0; j < len; j++) row[j] = (float)(row[j] * f);
    return zero;
}

/* Taylor / explimit: M_ij = γ^{i−j}κ(scale·q_i·k_j) / Σ_l γ^{i−l}κ(scale·q_i·k_l), no ε (closed form, any order). */
static int poly_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, const bufs *b) {
    row_ctx c = {p, b->tab, NULL};
    if (decayed(p)) decay_table(b->tab, n, p, 0);
    return zero_status(matrix_by_strips(M, Q, K, d, n, (float)p->scale, p->causal, b->P, kernel_row, &c, NULL, NULL, NULL));
}

// ----------------------------------------------------------------------------------------------------
// focused + DWC: T_ij = w[j − i + h], h = (k − 1)/2, for |j − i| ≤ h (a centred 1-D kernel shared by all
// channels, zero padding, no bias, cross-correlation as torch's Conv1d); w_t ~ N(0, 1/k), drawn in order
// t = 0..k−1 with av_rng_normal from the stream avi_stream(AVI_STREAM_DWC, prm->seed) (src/internal.h).

static void dwc_add_matrix(float *M, int n, const double *w, int k) {
    int h = (k - 1) / 2;
    for (int i = 0; i < n; i++)
        for (int t = 0; t < k; t++) {
            int j = i + t - h;
            if (j >= 0 && j < n) M[(size_t)i * n + j] += (float)w[t];
        }
}

/* Any kernel-variant matrix into M (knobs resolved, workspace laid out for PATH_MATRIX). */
static int kernel_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, const bufs *b) {
    if (is_poly(p)) return poly_matrix(M, Q, K, n, d, p, b);
    int st = avi_features(b->PhiQ, b->PhiK, Q, K, n, d, p, b->inner);
    if (st < 0) return st;
    st = merge(st, features_matrix(M, b->PhiQ, b->PhiK, n, avi_feature_dim(p, d), p, b));
    if (has_dwc(p)) {
        avi_dwc_weights(b->w, p);
        dwc_add_matrix(M, n, b->w, p->dwc_kernel);
    }
    return st;
}

// ----------------------------------------------------------------------------------------------------
// public: quadratic path

size_t av_matrix_work(const av_params *prm, int n, int d) {
    av_params p;
    if (!prm || engine_resolve(&p, prm, n, d) != AV_OK) return 0;
    return to_size(need(&p, n, d, 1, PATH_MATRIX));
}

/* The matrix of any variant, knobs resolved, inputs checked, workspace laid out for PATH_MATRIX. */
static int matrix_resolved(float *M, const float *Q, const float *K, int n, int d, const av_params *p,
                           const bufs *b) {
    int st;
    if (is_gated(p)) st = avi_gated_matrix(M, Q, K, n, d, p, b->inner);
    else if (is_hybrid(p)) st = avi_lolcats_matrix(M, Q, K, n, d, p, b->inner);
    else if (is_exact(p)) st = softmax_matrix(M, Q, K, n, d, p, b);
    else if (is_lowrank(p)) st = avi_lowrank_matrix(M, Q, K, n, d, p, b->inner);
    else if (is_delta(p)) st = avi_delta_matrix(M, Q, K, n, d, p, b->inner);
    else if (is_state(p)) st = retention_matrix(M, Q, K, n, d, p, b);
    else st = kernel_matrix(M, Q, K, n, d, p, b);
    return check_out(st, M, (size_t)n * n);
}

int av_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *prm, void *work,
              size_t work_bytes) {
    if (!M || !Q || !K || !prm) return AV_ERR_NULL;
    av_params p;
    int st = engine_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    if ((st = check_work(need(&p, n, d, 1, PATH_MATRIX), work, work_bytes)) != AV_OK) return st;
    if ((st = resolve_inputs(&p, prm, Q, K, n, d)) != AV_OK) return st;
    avi_arena a = avi_arena_over(work);
    bufs b;
    layout(&b, &a, &p, n, d, 1, PATH_MATRIX);
    return matrix_resolved(M, Q, K, n, d, &p, &b);
}

size_t av_attend_work(const av_params *prm, int n, int d, int dv) {
    av_params p;
    if (!prm || dv < 1 || dv > AV_MAX_D || engine_resolve(&p, prm, n, d) != AV_OK) return 0;
    return to_size(need_attend(&p, n, d, dv, 0));
}

/* O[n×dv] = M·V, M n×n (rows beyond the diagonal skipped when causal: they are zero). */
static void matmul_mv(float *O, const float *M, const float *V, int n, int dv, int causal, float *P) {
    avs_pack_b(P, V, (size_t)dv, n, dv);
    for (int i0 = 0; i0 < n; i0 += 4) {
        int rows = n - i0 < 4 ? n - i0 : 4;
        int k = causal ? i0 + rows : n;
        avs_gemm_strip(O + (size_t)i0 * dv, (size_t)dv, M + (size_t)i0 * n, (size_t)n, rows, P, n, dv, k, 1.0f, 0);
    }
}

int av_attend(float *O, float *M, const float *Q, const float *K, const float *V, int n, int d, int dv,
              const av_params *prm, void *work, size_t work_bytes) {
    if (!O || !Q || !K || !V || !prm) return AV_ERR_NULL;
    av_params p;
    int st = engine_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    if (dv < 1 || dv > AV_MAX_D) return AV_ERR_SIZE;
    if ((st = check_work(need_attend(&p, n, d, dv, M != NULL), work, work_bytes)) != AV_OK) return st;
    if ((st = resolve_inputs(&p, prm, Q, K, n, d)) != AV_OK) return st;
    if (!avs_all_finite(V, (size_t)n * dv)) return AV_ERR_NONFINITE;
    avi_arena a = avi_arena_over(work);
    bufs b;
    layout(&b, &a, &p, n, d, dv, PATH_MATRIX);
    float *Mb = M ? M : avi_take(&a, 4u * (uint64_t)n * n);
    float *P = avi_take(&a, packed_bytes(dv, n));
    st = matrix_resolved(Mb, Q, K, n, d, &p, &b);
    if (st < 0) return st;
    matmul_mv(O, Mb, V, n, dv, p.causal, P);
    return check_out(st, O, (size_t)n * dv);
}

int av_scores(float *S, const float *Q, const float *K, int n, int d, double scale, int apply_exp) {
    if (!S || !Q || !K) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    if (!isfinite(scale) || scale < 0) return AV_ERR_KNOB;
    if (apply_exp != 0 && apply_exp != 1) return AV_ERR_KNOB;
    if (!avs_all_finite(Q, (size_t)n * d) || !avs_all_finite(K, (size_t)n * d)) return AV_ERR_NONFINITE;
    float a = (float)(scale == 0 ? 1.0 / sqrt((double)d) : scale);
    enum { KC = 256 };
    float panel[KC * AVS_PANEL]; /* one 8-column panel of Kᵀ, KC rows at a time (no workspace here) */
    for (int j0 = 0; j0 < n; j0 += AVS_PANEL) {
        int w = n - j0 < AVS_PANEL ? n - j0 : AVS_PANEL;
        for (int k0 = 0; k0 < d; k0 += KC) {
            int kc = d - k0 < KC ? d - k0 : KC;
            for (int kk = 0; kk < kc; kk++)
                for (int c = 0; c < AVS_PANEL; c++)
                    panel[kk * AVS_PANEL + c] = c < w ? K[(size_t)(j0 + c) * d + k0 + kk] : 0.0f;
            for (int i0 = 0; i0 < n; i0 += 4) {
                int rows = n - i0 < 4 ? n - i0 : 4;
                avs_gemm_strip(S + (size_t)i0 * n + j0, (size_t)n, Q + (size_t)i0 * d + k0, (size_t)d, rows, panel,
                               kc, w, kc, a, k0 > 0);
            }
        }
    }
    size_t nn = (size_t)n * n;
    if (!avs_all_finite(S, nn)) return AV_WARN_PRODUCT_OVERFLOW; /* q·k beyond float32 range */
    if (apply_exp) {
        float m = avs_max(S, (int)nn);
        for (int i = 0; i < n; i++) avs_exp_sub_sum(S + (size_t)i * n, n, m);
    }
    return AV_OK;
}
