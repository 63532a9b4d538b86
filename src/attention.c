/* attention.c: the public attention API: the quadratic path (av_matrix, av_attend, av_scores), the
 * linear-time path (av_linear), the recurrent form (av_recurrent_step), low-rank factors (av_factors)
 * and the cost model (av_cost). Formulas: docs/variant-formulas.md; ε rules and scalings: docs/conventions.md.
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

#include "internal.h"
#include "simd.h"

// ----------------------------------------------------------------------------------------------------
// variant classes, normaliser, status merging

static const av_variant_desc *desc(const av_params *p) { return av_variant_info(p->variant); }
static int is_exact(const av_params *p) { return desc(p)->cls == AV_CLASS_EXACT; }
static int is_lowrank(const av_params *p) { return desc(p)->cls == AV_CLASS_LOWRANK; }
static int is_poly(const av_params *p) { return desc(p)->cls == AV_CLASS_CLOSED_FORM; }
/* Retention and the delta rule: a state without a normaliser (recurrent.c runs their sequential forms). */
static int is_state(const av_params *p) { return desc(p)->cls == AV_CLASS_RETENTION || desc(p)->cls == AV_CLASS_DELTA; }
static int is_delta(const av_params *p) { return desc(p)->cls == AV_CLASS_DELTA; }
static int has_flag(const av_params *p, unsigned f) { return (desc(p)->flags & f) != 0; }
/* The depthwise convolution on V: a variant that reads the dwc_kernel knob, with a kernel (focused). */
static int has_dwc(const av_params *p) { return p->dwc_kernel > 0 && avi_variant_reads(p->variant, AV_KNOB_DWC_KERNEL); }

/* The variants whose every product φ(q)·φ(k) is positive by definition: a row sum of 0 means that all of
 * its float32 products underflowed (AV_WARN_UNDERFLOW_ROW), not that the normaliser is truly ≤ 0. */
static int positive_kernel(const av_params *p) {
    switch (p->variant) {
    case AV_ELU: case AV_EXP: case AV_EFFICIENT: case AV_FOCUSED: case AV_PERFORMER: case AV_HEDGEHOG: return 1;
    default: return 0;
    }
}

/* The factor a row is multiplied by, given its sum, by the registry's normaliser rule (see the file
 * comment); *zero |= 1 for a sum ≤ 0, or 2 for a sum of 0 from products that are positive by definition. */
static double norm_factor(const av_params *p, int n, double sum, int *zero) {
    const av_variant_desc *v = desc(p);
    double den;
    if (v->norm == AV_NORM_NONE) return 1.0;
    if (sum <= 0) *zero |= sum == 0 && positive_kernel(p) ? 2 : 1;
    switch (v->norm) {
    case AV_NORM_ADD: den = sum + v->eps; break;
    case AV_NORM_ADD_N: den = sum + n * v->eps; break;
    case AV_NORM_CLAMP: den = sum > v->eps ? sum : v->eps; break;
    default: den = sum; break;
    }
    return den == 0 ? 1.0 : 1.0 / den;
}

/* Errors win; among events the one that says most about the outputs: an overflowed feature (the root
 * cause) over an overflowed product, over no convergence, over a zero row. */
static int event_rank(int st) {
    switch (st) {
    case AV_WARN_OVERFLOW: return 4;
    case AV_WARN_PRODUCT_OVERFLOW: return 3;
    case AV_WARN_NO_CONVERGENCE: return 2;
    case AV_WARN_ZERO_ROW: case AV_WARN_UNDERFLOW_ROW: return 1;
    default: return 0;
    }
}
static int merge(int a, int b) {
    if (a < 0 || b < 0) return a < 0 ? a : b;
    return event_rank(a) >= event_rank(b) ? a : b;
}
int avi_merge(int a, int b) { return merge(a, b); }
double avi_norm_factor(const av_params *p, int n, double sum, int *zero) { return norm_factor(p, n, sum, zero); }

/* The status once an output was found to hold Inf/NaN: AV_WARN_OVERFLOW when a feature or an exponential
 * had already overflowed (st says so), else AV_WARN_PRODUCT_OVERFLOW (finite values whose product or sum
 * left float32 range, e.g. q·k of inputs near 1e30). */
static int overflowed(int st) { return merge(st, AV_WARN_PRODUCT_OVERFLOW); }

/* st, or overflowed(st) when x[0..count) holds Inf or NaN. */
static int check_out(int st, const float *x, size_t count) {
    return st >= 0 && !avs_all_finite(x, count) ? overflowed(st) : st;
}

/* A truly non-positive row wins over one whose products underflowed (norm_factor's two bits). */
static int zero_status(int zero) { return zero & 1 ? AV_WARN_ZERO_ROW : zero ? AV_WARN_UNDERFLOW_ROW : AV_OK; }

// ----------------------------------------------------------------------------------------------------
// workspace sizes (computed in 64 bits; a need beyond SIZE_MAX is AV_ERR_TOO_LARGE, and _work returns 0)

static uint64_t packed_bytes(int ncols, long k) { return 4u * (uint64_t)avs_packed_floats(ncols, 1) * k; }
static uint64_t dwc_bytes(const av_params *p) { return has_dwc(p) ? 8u * (uint64_t)p->dwc_kernel : 0; }

/* The workspace of one path, laid out by one function that both counts (arena in count-only mode) and
 * carves, so the _work queries and the kernels here cannot disagree. NULL for the blocks a path does not use. */
enum { PATH_MATRIX, PATH_LINEAR, PATH_FACTORS };
typedef struct bufs {
    float *PhiQ, *PhiK;  /* n×r features (matrix, linear) */
    float *P;            /* packed Kᵀ or Φ_Kᵀ (matrix) */
    float *tab;          /* n per-offset factors of the decay (matrix): see decay_table */
    double *S, *z, *fac; /* state r×dv (linear), z r (linear, factors), row factors n (factors) */
    int *shift;          /* per-row power-of-two scalings of Φ_Q·Φ_Kᵀ (matrix, focused): see focused_shifts */
    unsigned char *wide; /* rows whose products the scalings cannot keep normal (matrix, focused): float64 */
    double *wrow;        /* two rows of float64 scores for those (matrix, focused) */
    double *w;           /* DWC weights */
    double *blk;         /* float64 copies (linear): a block of Φ_K and V, then a band of Φ_Q (non-causal), or a
                          * token's φ(k_t), φ(q_t) (the causal scan) */
    void *inner;         /* the feature map's workspace, or the low-rank kernels' */
} bufs;

/* Tokens per block of the non-causal state (state_full): Φ_K's and V's rows of a block, in float64, take about
 * 48 kB (the block is read once per 2×8 tile of S). */
static int state_block(long r, int dv) {
    long kb = 6144 / (r + dv);
    return kb < 8 ? 8 : kb > 64 ? 64 : (int)kb;
}
static uint64_t linear_block_doubles(long r, int dv) {
    uint64_t st = (uint64_t)state_block(r, dv) * ((uint64_t)r + dv), band = 2u * (uint64_t)r;
    return st > band ? st : band;
}

static void layout(bufs *b, avi_arena *a, const av_params *p, int n, int d, int dv, int path) {
    memset(b, 0, sizeof *b);
    if (is_lowrank(p)) {
        b->inner = avi_take(a, avi_lowrank_work(p, n, d, path == PATH_LINEAR ? dv : 1));
        return;
    }
    if (is_state(p) && path != PATH_MATRIX) { /* retention, deltanet: their linear path is the chunkwise form */
        b->inner = avi_take(a, avi_recurrent_need(p, n, d, dv, AVI_PATH_CHUNKWISE));
        return;
    }
    if (path == PATH_MATRIX && is_delta(p)) {
        b->inner = avi_take(a, avi_recurrent_need(p, n, d, dv, AVI_PATH_DELTA_MATRIX));
        return;
    }
    if (path == PATH_MATRIX && (is_exact(p) || is_poly(p) || is_state(p))) { /* the closed forms: packed K */
        b->tab = avi_take(a, 4u * (uint64_t)n);
        b->P = avi_take(a, packed_bytes(n, d));
        return;
    }
    /* The feature map's workspace comes first on every path (and first in recurrent.c's layouts), so that a
     * random matrix it caches there (Performer's ω, internal.h's draw cache) sits at the same place whichever
     * path a caller runs with the same workspace. */
    b->inner = avi_take(a, avi_features_work(p, n, d));
    if (path == PATH_MATRIX) b->tab = avi_take(a, 4u * (uint64_t)n);
    long r = avi_feature_dim(p, d);
    uint64_t nr = 4u * (uint64_t)n * r;
    if (path != PATH_FACTORS) {
        b->PhiQ = avi_take(a, nr);
        b->PhiK = avi_take(a, nr);
    }
    if (path == PATH_MATRIX) b->P = avi_take(a, packed_bytes(n, r));
    if (path == PATH_MATRIX && p->variant == AV_FOCUSED) {
        b->shift = avi_take(a, 4u * (uint64_t)n);
        b->wide = avi_take(a, (uint64_t)n);
        b->wrow = avi_take(a, 16u * (uint64_t)n);
    }
    if (path == PATH_LINEAR) b->S = avi_take(a, 8u * (uint64_t)r * dv);
    if (path != PATH_MATRIX) b->z = avi_take(a, 8u * (uint64_t)r);
    if (path == PATH_FACTORS) b->fac = avi_take(a, 8u * (uint64_t)n);
    if (path != PATH_FACTORS) b->w = avi_take(a, dwc_bytes(p));
    if (path == PATH_LINEAR) b->blk = avi_take(a, 8u * (uint64_t)linear_block_doubles(r, dv));
}

/* Bytes a path needs (64-bit; see to_size). av_attend adds its n×n M (unless the caller gives one) and
 * packed V after the matrix path's blocks. */
static uint64_t need(const av_params *p, int n, int d, int dv, int path) {
    avi_arena a = avi_arena_count();
    bufs b;
    layout(&b, &a, p, n, d, dv, path);
    return a.used;
}
static uint64_t need_attend(const av_params *p, int n, int d, int dv, int with_m) {
    avi_arena a = avi_arena_count();
    bufs b;
    layout(&b, &a, p, n, d, dv, PATH_MATRIX);
    if (!with_m) avi_take(&a, 4u * (uint64_t)n * n);
    avi_take(&a, packed_bytes(dv, n));
    return a.used;
}

static size_t to_size(uint64_t need) { return need > (uint64_t)SIZE_MAX ? 0 : (size_t)need; }

/* Common checks of a workspace against its need: AV_ERR_TOO_LARGE, AV_ERR_NULL or AV_ERR_WORKSPACE. */
static int check_work(uint64_t need, const void *work, size_t work_bytes) {
    if (need > (uint64_t)SIZE_MAX) return AV_ERR_TOO_LARGE;
    if (need > 0 && !work) return AV_ERR_NULL;
    return work_bytes < need ? AV_ERR_WORKSPACE : AV_OK;
}

/* Resolve knobs and check Q, K (and W) for NaN/Inf. */
static int resolve_inputs(av_params *p, const av_params *prm, const float *Q, const float *K, int n, int d) {
    int st = av_params_resolve(p, prm, n, d);
    if (st != AV_OK) return st;
    size_t cnt = (size_t)n * d;
    if (!avs_all_finite(Q, cnt) || !avs_all_finite(K, cnt)) return AV_ERR_NONFINITE;
    if (!avi_weights_finite(p, d)) return AV_ERR_NONFINITE;
    return AV_OK;
}

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

/* x ← fac·x. A factor beyond float range (the row's sum was tiny but positive, e.g. exp features of
 * huge inputs) is applied in double: the products are ≤ 1 where it comes from a row sum, so nothing
 * overflows that need not. */
static void scale_by(float *x, int len, double fac) {
    if (fac <= FLT_MAX) {
        avs_scale(x, len, (float)fac);
        return;
    }
    for (int j = 0; j < len; j++) x[j] = (float)(x[j] * fac);
}

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

void avi_dwc_weights(double *w, const av_params *p) {
    av_rng rng;
    av_rng_seed(&rng, avi_stream(AVI_STREAM_DWC, (uint32_t)p->seed));
    double sd = 1.0 / sqrt((double)p->dwc_kernel);
    for (int t = 0; t < p->dwc_kernel; t++) w[t] = sd * av_rng_normal(&rng);
}

static void dwc_add_matrix(float *M, int n, const double *w, int k) {
    int h = (k - 1) / 2;
    for (int i = 0; i < n; i++)
        for (int t = 0; t < k; t++) {
            int j = i + t - h;
            if (j >= 0 && j < n) M[(size_t)i * n + j] += (float)w[t];
        }
}

/* O += T·V (n×dv). */
static void dwc_add_output(float *O, const float *V, int n, int dv, const double *w, int k) {
    int h = (k - 1) / 2;
    for (int i = 0; i < n; i++)
        for (int t = 0; t < k; t++) {
            int j = i + t - h;
            if (j < 0 || j >= n) continue;
            float wt = (float)w[t];
            for (int c = 0; c < dv; c++) O[(size_t)i * dv + c] += wt * V[(size_t)j * dv + c];
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
    if (!prm || av_params_resolve(&p, prm, n, d) != AV_OK) return 0;
    return to_size(need(&p, n, d, 1, PATH_MATRIX));
}

/* The matrix of any variant, knobs resolved, inputs checked, workspace laid out for PATH_MATRIX. */
static int matrix_resolved(float *M, const float *Q, const float *K, int n, int d, const av_params *p,
                           const bufs *b) {
    int st;
    if (is_exact(p)) st = softmax_matrix(M, Q, K, n, d, p, b);
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
    int st = av_params_resolve(&p, prm, n, d);
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
    if (!prm || dv < 1 || dv > AV_MAX_D || av_params_resolve(&p, prm, n, d) != AV_OK) return 0;
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
    int st = av_params_resolve(&p, prm, n, d);
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

// ----------------------------------------------------------------------------------------------------
// the kernel engine: recurrent state, linear path, factors

/* S ← γS + φ_k vᵀ (S r×dv float64), z ← γz + φ_k. */
static void state_update(double *S, double *z, const float *phik, const float *v, long r, int dv, double g) {
    if (g != 1) {
        for (size_t e = 0; e < (size_t)r * dv; e++) S[e] *= g;
        for (long f = 0; f < r; f++) z[f] *= g;
    }
    for (long f = 0; f < r; f++) {
        double a = phik[f];
        z[f] += a;
        if (a == 0) continue;
        double *s = S + (size_t)f * dv;
        for (int c = 0; c < dv; c++) s[c] += a * v[c];
    }
}

/* o = Sᵀφ_q · norm-factor(φ_q·z). Returns 1 when φ_q·z ≤ 0. */
static int state_readout(float *o, const double *S, const double *z, const float *phiq, long r, int dv, int n,
                         const av_params *p) {
    enum { CB = 128 };
    double den = 0, acc[CB];
    for (long f = 0; f < r; f++) den += phiq[f] * z[f];
    int zero = 0;
    double fac = norm_factor(p, n, den, &zero);
    for (int c0 = 0; c0 < dv; c0 += CB) {
        int w = dv - c0 < CB ? dv - c0 : CB;
        for (int c = 0; c < w; c++) acc[c] = 0;
        for (long f = 0; f < r; f++) {
            double a = phiq[f];
            if (a == 0) continue;
            const double *s = S + (size_t)f * dv + c0;
            for (int c = 0; c < w; c++) acc[c] += a * s[c];
        }
        for (int c = 0; c < w; c++) o[c0 + c] = (float)(acc[c] * fac);
    }
    return zero;
}

int avi_state_read(float *o, const double *S, const double *z, const float *phiq, long r, int dv, int n,
                   const av_params *p) {
    /* as av_recurrent_step: a read that leaves float range is reported, never returned as AV_OK */
    return check_out(zero_status(state_readout(o, S, z, phiq, r, dv, n, p)), o, (size_t)dv);
}

/* One float64 product in AVS_F64_ROWS × AVS_F64_COLS tiles: C = Aᵀ·B (transposed: A is k×rows float, B k×cols
 * float, the state Φ_Kᵀ·V) or C = A·B (A rows×k float, B k×cols double, the readout Φ_Q·S). state_full and
 * readout_full run the full tiles in the SIMD kernel on float64 copies, the edge tiles here (the same bits). */
typedef struct f64_product {
    const float *A;
    size_t lda;
    int transposed;
    const float *Bf;  /* B when transposed */
    const double *Bd; /* B otherwise */
    size_t ldb;
    long k;
} f64_product;

/* The plain form of a tile: each entry's sum over t = 0, 1, … from +0, entry by entry (the edge tiles, and the
 * reference of the SIMD kernels' bits). */
static void f64_tile_ref(double acc[AVS_F64_ROWS][AVS_F64_COLS], const f64_product *m, long r0, int c0, int h, int w) {
    for (int a = 0; a < h; a++)
        for (int c = 0; c < w; c++) {
            double s = 0;
            if (m->transposed)
                for (long t = 0; t < m->k; t++) s += (double)m->A[(size_t)t * m->lda + r0 + a] * m->Bf[(size_t)t * m->ldb + c0 + c];
            else
                for (long t = 0; t < m->k; t++) s += (double)m->A[(size_t)(r0 + a) * m->lda + t] * m->Bd[(size_t)t * m->ldb + c0 + c];
            acc[a][c] = s;
        }
}

typedef struct { double *S; int dv; } state_ctx;
static void store_state(const double acc[AVS_F64_ROWS][AVS_F64_COLS], long r0, int c0, int h, int w, void *ctx) {
    const state_ctx *c = ctx;
    for (int a = 0; a < h; a++) memcpy(c->S + (size_t)(r0 + a) * c->dv + c0, acc[a], (size_t)w * sizeof(double));
}

/* Non-causal state: S = Φ_Kᵀ·V (r×dv) and z = Σ_j Φ_K(j), float64, each entry summed over j = 0, 1, … from +0:
 * the same bits as n calls of state_update (its skipped a = 0 terms add ±0, which changes no sum). The full 2×8
 * tiles run block by block of tokens, on float64 copies of the block's rows of Φ_K and V (blk), each tile's sums
 * continued from the previous block's in S (the same order, so the same bits); the edge tiles take f64_tile. */
static void state_full(double *S, double *z, double *blk, const float *PhiK, const float *V, int n, long r, int dv) {
    long r2 = r / AVS_F64_ROWS * AVS_F64_ROWS;
    int c8 = dv / AVS_F64_COLS * AVS_F64_COLS, kb = state_block(r, dv);
    double *Kd = blk, *Vd = blk + (size_t)kb * r;
    for (long f = 0; f < r2; f++) memset(S + (size_t)f * dv, 0, (size_t)c8 * sizeof(double));
    memset(z, 0, (size_t)r * sizeof(double));
    for (int j0 = 0; j0 < n; j0 += kb) {
        int kn = n - j0 < kb ? n - j0 : kb;
        const float *pk = PhiK + (size_t)j0 * r, *pv = V + (size_t)j0 * dv;
        for (int j = 0; j < kn; j++) /* z summed while the block is converted (rows in order: the same bits) */
            for (long f = 0; f < r; f++) {
                double a = pk[(size_t)j * r + f];
                Kd[(size_t)j * r + f] = a;
                z[f] += a;
            }
        if (c8 == 0) continue;
        for (size_t e = 0; e < (size_t)kn * dv; e++) Vd[e] = pv[e];
        for (long r0 = 0; r0 < r2; r0 += AVS_F64_ROWS)
            for (int c0 = 0; c0 < c8; c0 += AVS_F64_COLS)
                avs_kernel_f64_dtd_acc(S + (size_t)r0 * dv + c0, (size_t)dv, Kd + r0, (size_t)r, Vd + c0, (size_t)dv, kn);
    }
    f64_product m = {PhiK, (size_t)r, 1, V, NULL, (size_t)dv, n};
    state_ctx c = {S, dv};
    double acc[AVS_F64_ROWS][AVS_F64_COLS];
    for (long r0 = 0; r0 < r; r0 += AVS_F64_ROWS) {
        int h = r - r0 < AVS_F64_ROWS ? (int)(r - r0) : AVS_F64_ROWS;
        for (int c0 = r0 < r2 ? c8 : 0; c0 < dv; c0 += AVS_F64_COLS) {
            int w = dv - c0 < AVS_F64_COLS ? dv - c0 : AVS_F64_COLS;
            f64_tile_ref(acc, &m, r0, c0, h, w);
            store_state(acc, r0, c0, h, w, &c);
        }
    }
}

/* Two rows' φ_q·z: lane-wise, each the float64 sum over f = 0, 1, … from +0 of the exact products (the bits of
 * state_readout's den), with the rows interleaved in qd (qd[2f + a] = φ_q(row a)[f]) so one f64x2 chain carries
 * both (the chain is bound by the add's latency). */
static void den_pair(double den[2], const double *qd, const double *z, long r) {
#ifdef __wasm_simd128__
    v128_t d = wasm_f64x2_splat(0.0);
    for (long f = 0; f < r; f++) d = wasm_f64x2_add(d, wasm_f64x2_mul(wasm_v128_load(qd + 2 * f), wasm_v128_load64_splat(z + f)));
    wasm_v128_store(den, d);
#else
    double d0 = 0, d1 = 0;
    for (long f = 0; f < r; f++) {
        d0 += qd[2 * f] * z[f];
        d1 += qd[2 * f + 1] * z[f];
    }
    den[0] = d0;
    den[1] = d1;
#endif
}

/* O = rows of Φ_Q·S, each scaled by its norm-factor(φ_q·z) (the bits of state_readout), two rows at a time: the
 * band's two rows of Φ_Q converted to float64 once, interleaved in blk (blk[2f + a]), which serves both the
 * normalisers (den_pair) and the 2×8 tiles (the kernel reads the band as a transposed k×2 A). The edge
 * (an odd last row, dv mod 8 columns) takes f64_tile_ref. Returns 1 when some φ_q·z ≤ 0. */
static int readout_full(float *O, const double *S, const double *z, double *blk, const float *PhiQ, int n, long r,
                        int dv, const av_params *p) {
    f64_product m = {PhiQ, (size_t)r, 0, NULL, S, (size_t)dv, r};
    double acc[AVS_F64_ROWS][AVS_F64_COLS], den[AVS_F64_ROWS], fac[AVS_F64_ROWS];
    int zero = 0;
    for (long r0 = 0; r0 < n; r0 += AVS_F64_ROWS) {
        int h = n - r0 < AVS_F64_ROWS ? (int)(n - r0) : AVS_F64_ROWS;
        const float *q0 = PhiQ + (size_t)r0 * r;
        if (h == AVS_F64_ROWS) {
            for (long f = 0; f < r; f++) {
                blk[2 * f] = q0[f];
                blk[2 * f + 1] = q0[r + f];
            }
            den_pair(den, blk, z, r);
        } else {
            den[0] = 0;
            for (long f = 0; f < r; f++) den[0] += q0[f] * z[f];
        }
        for (int a = 0; a < h; a++) fac[a] = norm_factor(p, n, den[a], &zero);
        for (int c0 = 0; c0 < dv; c0 += AVS_F64_COLS) {
            int w = dv - c0 < AVS_F64_COLS ? dv - c0 : AVS_F64_COLS;
            if (h == AVS_F64_ROWS && w == AVS_F64_COLS) {
                memset(acc, 0, sizeof acc);
                avs_kernel_f64_dtd_acc(acc[0], AVS_F64_COLS, blk, AVS_F64_ROWS, S + c0, (size_t)dv, (int)r);
            } else {
                f64_tile_ref(acc, &m, r0, c0, h, w);
            }
            for (int a = 0; a < h; a++)
                for (int k = 0; k < w; k++) O[(size_t)(r0 + a) * dv + c0 + k] = (float)(acc[a][k] * fac[a]);
        }
    }
    return zero;
}

/* The causal linear path: per token t, S ← γS + φ(k_t)v_tᵀ, z ← γz + φ(k_t), o_t = Sᵀφ(q_t)·norm-factor(φ(q_t)·z),
 * one pass over S per token (avs_scan_block8 on 8 columns at a time, the edge columns entry by entry; a token whose
 * φ(k_t) and φ(q_t) have no zero takes avs_scan_block8_dense on float64 copies of them in blk). The bits of
 * state_update then state_readout, token by token (av_recurrent_step's reference form; tests/c compare them).
 * Returns 1 when some φ(q_t)·z ≤ 0. */
static int scan_causal(float *O, double *S, double *z, double *blk, const float *PhiQ, const float *PhiK, const float *V,
                       int n, long r, int dv, const av_params *p) {
    double g = p->decay, acc[8], *ad = blk, *qd = blk + r;
    int zero = 0, c8 = dv / 8 * 8;
    memset(S, 0, (size_t)r * dv * sizeof(double));
    memset(z, 0, (size_t)r * sizeof(double));
    for (int t = 0; t < n; t++) {
        const float *a = PhiK + (size_t)t * r, *q = PhiQ + (size_t)t * r, *v = V + (size_t)t * dv;
        float *o = O + (size_t)t * dv;
        double den = 0;
        int dense = 1;
        for (long f = 0; f < r; f++) {
            z[f] = z[f] * g + a[f];
            den += q[f] * z[f];
            ad[f] = a[f];
            qd[f] = q[f];
            dense &= (a[f] != 0) & (q[f] != 0);
        }
        double fac = norm_factor(p, n, den, &zero);
        for (int c0 = 0; c0 < c8; c0 += 8) {
            if (dense) avs_scan_block8_dense(S + c0, (size_t)dv, ad, qd, r, v + c0, g, acc);
            else avs_scan_block8(S + c0, (size_t)dv, a, q, r, v + c0, g, acc);
            for (int c = 0; c < 8; c++) o[c0 + c] = (float)(acc[c] * fac);
        }
        for (int c = c8; c < dv; c++) {
            double sum = 0;
            for (long f = 0; f < r; f++) {
                double *s = S + (size_t)f * dv + c;
                *s = a[f] != 0 ? *s * g + (double)a[f] * v[c] : *s * g;
                if (q[f] != 0) sum += q[f] * *s;
            }
            o[c] = (float)(sum * fac);
        }
    }
    return zero;
}

static int kernel_linear(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                         const av_params *p, const bufs *b) {
    long r = avi_feature_dim(p, d);
    float *PhiQ = b->PhiQ, *PhiK = b->PhiK;
    double *S = b->S, *z = b->z, *w = b->w;
    int st = avi_features(PhiQ, PhiK, Q, K, n, d, p, b->inner), zero = 0;
    if (st < 0) return st;
    if (!p->causal) {
        state_full(S, z, b->blk, PhiK, V, n, r, dv);
        zero = readout_full(O, S, z, b->blk, PhiQ, n, r, dv, p);
    } else {
        zero = scan_causal(O, S, z, b->blk, PhiQ, PhiK, V, n, r, dv, p);
    }
    if (has_dwc(p)) {
        avi_dwc_weights(w, p);
        dwc_add_output(O, V, n, dv, w, p->dwc_kernel);
    }
    return merge(st, zero_status(zero));
}

/* av_linear's own rule: the registry's linear flag; focused + DWC has a linear path too (A·V by features,
 * plus the O(n·k·dv) conv). */
static int linear_rule(const av_params *p, int d) {
    if (!has_flag(p, AV_VF_LINEAR)) return AV_ERR_NO_LINEAR;
    if (is_lowrank(p)) return AV_OK;
    return avi_feature_dim(p, d) > AV_MAX_FEATURE_DIM ? AV_ERR_FEATURE_DIM : AV_OK;
}

size_t av_linear_work(const av_params *prm, int n, int d, int dv) {
    av_params p;
    if (!prm || dv < 1 || dv > AV_MAX_D || av_params_resolve(&p, prm, n, d) != AV_OK) return 0;
    if (linear_rule(&p, d) != AV_OK) return 0;
    return to_size(need(&p, n, d, dv, PATH_LINEAR));
}

int av_linear(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
              const av_params *prm, void *work, size_t work_bytes) {
    if (!O || !Q || !K || !V || !prm) return AV_ERR_NULL;
    av_params p;
    int st = av_params_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    if (dv < 1 || dv > AV_MAX_D) return AV_ERR_SIZE;
    if ((st = linear_rule(&p, d)) != AV_OK) return st;
    if ((st = check_work(need(&p, n, d, dv, PATH_LINEAR), work, work_bytes)) != AV_OK) return st;
    if ((st = resolve_inputs(&p, prm, Q, K, n, d)) != AV_OK) return st;
    if (!avs_all_finite(V, (size_t)n * dv)) return AV_ERR_NONFINITE;
    avi_arena a = avi_arena_over(work);
    bufs b;
    layout(&b, &a, &p, n, d, dv, PATH_LINEAR);
    if (is_lowrank(&p)) st = avi_lowrank_linear(O, Q, K, V, n, d, dv, &p, b.inner);
    else if (is_state(&p)) st = avi_recurrent_run(O, Q, K, V, n, d, dv, &p, b.inner, AVI_PATH_CHUNKWISE);
    else st = kernel_linear(O, Q, K, V, n, d, dv, &p, &b);
    return check_out(st, O, (size_t)n * dv);
}

int av_recurrent_step(float *o, double *S, double *z, const float *phi_q, const float *phi_k, const float *v,
                      long r, int dv, int n, const av_params *prm) {
    if (!o || !S || !z || !phi_q || !phi_k || !v || !prm) return AV_ERR_NULL;
    if (r < 1 || r > AV_MAX_FEATURE_DIM || dv < 1 || dv > AV_MAX_D) return AV_ERR_SIZE;
    av_params p = *prm;
    p.causal = 1; /* the recurrent form is the causal scan */
    int st = av_params_resolve(&p, &p, n, 1);
    if (st != AV_OK) return st;
    if (!has_flag(&p, AV_VF_RECURRENT)) return AV_ERR_NO_LINEAR;
    if (!avs_all_finite(phi_q, (size_t)r) || !avs_all_finite(phi_k, (size_t)r) || !avs_all_finite(v, (size_t)dv))
        return AV_ERR_NONFINITE;
    if (is_delta(&p)) { /* S ← αS, u = β(v − Sᵀk), S += k uᵀ (z is not read) */
        enum { CB = 128 };
        for (size_t e = 0; e < (size_t)r * dv; e++) S[e] *= p.decay;
        for (int c0 = 0; c0 < dv; c0 += CB) {
            int w = dv - c0 < CB ? dv - c0 : CB;
            double u[CB];
            for (int c = 0; c < w; c++) {
                double acc = 0;
                for (long f = 0; f < r; f++) acc += (double)phi_k[f] * S[(size_t)f * dv + c0 + c];
                u[c] = p.beta * (v[c0 + c] - acc);
            }
            for (long f = 0; f < r; f++)
                for (int c = 0; c < w; c++) S[(size_t)f * dv + c0 + c] += phi_k[f] * u[c];
        }
    } else if (is_state(&p)) {
        for (size_t e = 0; e < (size_t)r * dv; e++) S[e] *= p.decay;
        for (long f = 0; f < r; f++)
            for (int c = 0; c < dv; c++) S[(size_t)f * dv + c] += (double)phi_k[f] * v[c];
    } else {
        state_update(S, z, phi_k, v, r, dv, p.decay);
    }
    st = zero_status(state_readout(o, S, z, phi_q, r, dv, n, &p));
    return check_out(st, o, (size_t)dv);
}

/* The sequential forms' rule: causal, and a form the registry lists (kernel variants without a DWC term and
 * with a feature dimension under the cap; softmax; retention; deltanet). */
static int sequential_rule(const av_params *p, int d, unsigned flag) {
    if (!has_flag(p, flag) && !(flag == AV_VF_RECURRENT && is_exact(p))) return AV_ERR_NO_LINEAR;
    if (avi_extra_term(p)) return AV_ERR_NO_LINEAR;
    if (!p->causal) return AV_ERR_NEEDS_CAUSAL;
    return !is_exact(p) && avi_feature_dim(p, d) > AV_MAX_FEATURE_DIM ? AV_ERR_FEATURE_DIM : AV_OK;
}

static size_t sequential_work(const av_params *prm, int n, int d, int dv, unsigned flag, int path) {
    av_params p;
    if (!prm || dv < 1 || dv > AV_MAX_D || av_params_resolve(&p, prm, n, d) != AV_OK) return 0;
    if (sequential_rule(&p, d, flag) != AV_OK) return 0;
    return to_size(avi_recurrent_need(&p, n, d, dv, path));
}

static int sequential(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                      const av_params *prm, void *work, size_t work_bytes, unsigned flag, int path) {
    if (!O || !Q || !K || !V || !prm) return AV_ERR_NULL;
    av_params p;
    int st = av_params_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    if (dv < 1 || dv > AV_MAX_D) return AV_ERR_SIZE;
    if ((st = sequential_rule(&p, d, flag)) != AV_OK) return st;
    if ((st = check_work(avi_recurrent_need(&p, n, d, dv, path), work, work_bytes)) != AV_OK) return st;
    if ((st = resolve_inputs(&p, prm, Q, K, n, d)) != AV_OK) return st;
    if (!avs_all_finite(V, (size_t)n * dv)) return AV_ERR_NONFINITE;
    return check_out(avi_recurrent_run(O, Q, K, V, n, d, dv, &p, work, path), O, (size_t)n * dv);
}

size_t av_recurrent_work(const av_params *prm, int n, int d, int dv) {
    return sequential_work(prm, n, d, dv, AV_VF_RECURRENT, AVI_PATH_RECURRENT);
}
int av_recurrent(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                 const av_params *prm, void *work, size_t work_bytes) {
    return sequential(O, Q, K, V, n, d, dv, prm, work, work_bytes, AV_VF_RECURRENT, AVI_PATH_RECURRENT);
}
size_t av_chunkwise_work(const av_params *prm, int n, int d, int dv) {
    return sequential_work(prm, n, d, dv, AV_VF_CHUNKWISE, AVI_PATH_CHUNKWISE);
}
int av_chunkwise(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                 const av_params *prm, void *work, size_t work_bytes) {
    return sequential(O, Q, K, V, n, d, dv, prm, work, work_bytes, AV_VF_CHUNKWISE, AVI_PATH_CHUNKWISE);
}

/* Factor rule: the registry's factors flag, non-causal and without an extra term (DWC); the low-rank
 * class's rank is its projection length or landmarks (lowrank.c). */
static int factor_rule(long *r, const av_params *p, int d) {
    if (!has_flag(p, AV_VF_FACTORS) || avi_extra_term(p) || p->causal) return AV_ERR_NO_LINEAR;
    if (is_lowrank(p)) { *r = avi_lowrank_rank(p); return AV_OK; }
    *r = avi_feature_dim(p, d);
    return *r > AV_MAX_FEATURE_DIM ? AV_ERR_FEATURE_DIM : AV_OK;
}

int av_factor_rank(long *r, const av_params *prm, int n, int d) {
    if (!r || !prm) return AV_ERR_NULL;
    av_params p;
    int st = av_params_resolve(&p, prm, n, d);
    return st != AV_OK ? st : factor_rule(r, &p, d);
}

size_t av_factors_work(const av_params *prm, int n, int d) {
    av_params p;
    long r;
    if (!prm || av_params_resolve(&p, prm, n, d) != AV_OK || factor_rule(&r, &p, d) != AV_OK) return 0;
    return to_size(need(&p, n, d, 1, PATH_FACTORS));
}

/* Largest |x| of x[0..count) (0 for none). */
static double abs_max(const float *x, size_t count) {
    double m = 0;
    for (size_t i = 0; i < count; i++) m = fabs((double)x[i]) > m ? fabs((double)x[i]) : m;
    return m;
}

/* L = c·D⁻¹Φ_Q, R = Φ_K/c with D from z = Σ_j Φ_K(j). c = 1 unless D⁻¹Φ_Q would leave float range (tiny
 * keys against huge queries: the row factors are huge although every M_ij is ≤ 1); then c balances the
 * largest entries of L and R, so M = L·Rᵀ stays representable. fac: n doubles of workspace. */
static int kernel_factors(float *L, float *R, const float *Q, const float *K, int n, int d, const av_params *p,
                          const bufs *b) {
    long r = avi_feature_dim(p, d);
    double *z = b->z, *fac = b->fac;
    int st = avi_features(L, R, Q, K, n, d, p, b->inner), zero = 0;
    if (st < 0) return st;
    memset(z, 0, (size_t)r * sizeof(double));
    for (int j = 0; j < n; j++)
        for (long f = 0; f < r; f++) z[f] += R[(size_t)j * r + f];
    double lmax = 0;
    for (int i = 0; i < n; i++) {
        const float *l = L + (size_t)i * r;
        double den = 0;
        for (long f = 0; f < r; f++) den += l[f] * z[f];
        fac[i] = norm_factor(p, n, den, &zero);
        double m = fac[i] * abs_max(l, (size_t)r);
        lmax = m > lmax ? m : lmax;
    }
    double rmax = abs_max(R, (size_t)n * r), c = 1;
    if (lmax > FLT_MAX && rmax > 0 && isfinite(lmax)) {
        c = sqrt(rmax / lmax);
        for (size_t e = 0; e < (size_t)n * r; e++) R[e] = (float)(R[e] / c);
    }
    for (int i = 0; i < n; i++) scale_by(L + (size_t)i * r, (int)r, fac[i] * c);
    return check_out(check_out(merge(st, zero_status(zero)), L, (size_t)n * r), R, (size_t)n * r);
}

int av_factors(float *L, float *R, const float *Q, const float *K, int n, int d, const av_params *prm,
               void *work, size_t work_bytes) {
    if (!L || !R || !Q || !K || !prm) return AV_ERR_NULL;
    av_params p;
    long r;
    int st = av_params_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    if ((st = factor_rule(&r, &p, d)) != AV_OK) return st;
    if ((st = check_work(need(&p, n, d, 1, PATH_FACTORS), work, work_bytes)) != AV_OK) return st;
    if ((st = resolve_inputs(&p, prm, Q, K, n, d)) != AV_OK) return st;
    avi_arena a = avi_arena_over(work);
    bufs b;
    layout(&b, &a, &p, n, d, 1, PATH_FACTORS);
    if (is_lowrank(&p)) return avi_lowrank_factors(L, R, Q, K, n, d, &p, b.inner);
    return kernel_factors(L, R, Q, K, n, d, &p, &b);
}

// ----------------------------------------------------------------------------------------------------
// cost model
//
// Multiply-adds (one per multiply; exp, max, compare count as one) and bytes of the path's n-dependent
// intermediate (float32 = 4 bytes). F is the feature map's cost on Q and K together:
//   F = 2·n·d (elu, relu, exp, efficient, focused, cosformer), 2·n·d·c + 2·n·r (hedgehog, W d×c, r = 2c),
//       2·n·m·d (performer), 2·n·r (taylor, explimit: one multiply per tensor feature), n·d (retention:
//       the scale), 4·n·d (deltanet: norms and scales).
// quadratic:
//   softmax, taylor, explimit (closed form)  n²·d + n²·dv                     bytes 4·n²
//   kernel variants, retention               F + n²·r + n²·dv                  bytes 4·n²
//   deltanet                                 F + n²·d + n²·d/2 + n³/6 + n²·dv  bytes 8·n² (M and L)
//   linformer (s)                            2·s·n·d + s·n² + n²·dv            bytes 4·n²
//   nystrom (m landmarks, t iterations)      2·n·m·d + m²·d + 4·t·m³ + n·m² + m·n² + n²·dv    bytes 4·n²
// linear (−1 when there is none):
//   kernel variants                          F + 2·n·r·dv (state update + readout)   bytes 4·(r·dv + r)
//   retention, deltanet                      their chunkwise form
//   linformer                                2·s·n·d + 2·s·n·dv                bytes 4·(n·s + s·d + s·dv)
//   nystrom                                  2·n·m·d + m²·d + 4·t·m³ + 2·n·m·dv + m²·dv   bytes 4·(2·n·m + m² + m·dv)
// recurrent (causal only; γ < 1 adds the state's rescaling, n·r·dv):
//   kernel variants                          F + 2·n·r·dv                      bytes 4·(r·dv + r)
//   retention                                F + 2·n·d·dv                      bytes 4·d·dv
//   deltanet                                 F + 3·n·d·dv                      bytes 4·d·dv
//   softmax (a cache of w keys: w = W with a window, else the mean n/2)   n·w·(d + dv)   bytes 4·W·(d + dv)
//                                            (the whole cache, 4·n·(d + dv), without a window)
// chunkwise (C the chunk size; the mask inside a chunk not modelled):
//   kernel variants, retention               F + n·C·(r + dv) + 2·n·r·dv       bytes 4·(r·dv + C²)
//   deltanet                                 the same + n·(C²/6 + 2·C·d + C·dv + d·dv)   bytes 4·(d·dv + 2·C² + C·d)
//   softmax (key chunks reached: all, or the W + C before a query chunk)  n·k·(d + dv), k = n or min(n, W + C)
//                                            bytes 4·(C² + C·dv)
// focused + DWC adds n·k·dv to the quadratic and linear paths. The causal mask is not modelled (same counts).

static int path_cost(double *out, int path, const av_params *p, int n, int d, int dv) {
    double N = n, D = d, DV = dv, nn = N * N;
    out[0] = out[1] = -1;
    long rl = is_exact(p) || is_lowrank(p) ? 0 : avi_feature_dim(p, d);
    double r = (double)rl, F = rl ? avi_variant_of(p->variant)->feature_cost(p, N, D, r) : 0;
    double C = p->chunk < 1 ? 1 : p->chunk > n ? N : p->chunk, rescale = p->causal && p->decay < 1 ? N * r * DV : 0;
    int seq_ok = p->causal && !avi_extra_term(p) && rl <= AV_MAX_FEATURE_DIM;
    switch (path) {
    case AV_PATH_QUADRATIC:
        out[0] = nn * D + nn * DV;
        out[1] = 4 * nn;
        if (is_lowrank(p)) {
            double lr[4];
            avi_lowrank_cost(lr, p, n, d, dv);
            out[0] = lr[0];
        } else if (is_delta(p)) {
            out[0] = F + nn * D * 1.5 + nn * N / 6 + nn * DV;
            out[1] = 8 * nn;
        } else if (!is_exact(p) && !is_poly(p)) {
            out[0] = F + nn * r + nn * DV;
        }
        if (has_dwc(p)) out[0] += N * p->dwc_kernel * DV;
        return AV_OK;
    case AV_PATH_LINEAR:
        if (is_state(p)) return path_cost(out, AV_PATH_CHUNKWISE, p, n, d, dv);
        if (is_lowrank(p)) {
            double lr[4];
            avi_lowrank_cost(lr, p, n, d, dv);
            out[0] = lr[2];
            out[1] = lr[3];
        } else if (!is_exact(p) && rl <= AV_MAX_FEATURE_DIM) {
            out[0] = F + 2 * N * r * DV + N * p->dwc_kernel * DV * has_dwc(p) + rescale;
            out[1] = 4 * (r * DV + r);
        }
        return AV_OK;
    case AV_PATH_RECURRENT:
        if (!seq_ok) return AV_OK;
        if (is_exact(p)) {
            double w = p->window > 0 ? (p->window < n ? p->window : N) : N / 2, cache = p->window > 0 ? w : N;
            out[0] = N * w * (D + DV);
            out[1] = 4 * cache * (D + DV);
        } else if (has_flag(p, AV_VF_RECURRENT)) {
            out[0] = F + (is_delta(p) ? 3 : 2) * N * r * DV + rescale;
            out[1] = 4 * (r * DV + (is_state(p) ? 0 : r));
        }
        return AV_OK;
    case AV_PATH_CHUNKWISE:
        if (!seq_ok || !has_flag(p, AV_VF_CHUNKWISE)) return AV_OK;
        if (is_exact(p)) {
            double k = p->window > 0 && p->window + C < N ? p->window + C : N;
            out[0] = N * k * (D + DV);
            out[1] = 4 * (C * C + C * DV);
            return AV_OK;
        }
        out[0] = F + N * C * (r + DV) + 2 * N * r * DV;
        out[1] = 4 * (r * DV + C * C);
        if (is_delta(p)) {
            out[0] += N * (C * C / 6 + 2 * C * D + C * DV + D * DV);
            out[1] = 4 * (D * DV + 2 * C * C + C * D);
        }
        return AV_OK;
    default: return AV_ERR_VARIANT;
    }
}

int av_cost_path(double *out, int path, const av_params *prm, int n, int d, int dv) {
    if (!out || !prm) return AV_ERR_NULL;
    av_params p;
    int st = av_params_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    if (dv < 1 || dv > AV_MAX_D) return AV_ERR_SIZE;
    return path_cost(out, path, &p, n, d, dv);
}

int av_cost(double *out, const av_params *prm, int n, int d, int dv) {
    if (!out || !prm) return AV_ERR_NULL;
    int st = av_cost_path(out, AV_PATH_QUADRATIC, prm, n, d, dv);
    if (st != AV_OK) return st;
    return av_cost_path(out + 2, AV_PATH_LINEAR, prm, n, d, dv);
}

// ----------------------------------------------------------------------------------------------------
// the semiseparable rank's structural ceiling (docs/readouts.md)

int av_semiseparable_ceiling(long *ceiling, const av_params *prm, int n, int d) {
    if (!ceiling || !prm) return AV_ERR_NULL;
    av_params p;
    int st = av_params_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    long h = n / 2, c = h;
    if (is_exact(&p)) c = p.window > 0 ? p.window - 1 : h;
    else if (is_lowrank(&p)) c = avi_lowrank_rank(&p);
    else if (is_delta(&p)) c = p.beta == 1 ? d - 1 : d;
    else {
        c = avi_feature_dim(&p, d);
        if (has_dwc(&p)) c += (p.dwc_kernel - 1) / 2;
    }
    *ceiling = c < h ? c : h;
    return AV_OK;
}
