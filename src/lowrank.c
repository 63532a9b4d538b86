/* lowrank.c: the two variants whose effective n×n map is a product of thin factors: Linformer
 * (Wang et al. 2020) and Nyströmformer (Xiong et al. 2021). Definitions: docs/variant-formulas.md (Linformer, Nyström).
 *
 *   Linformer  M = P̄·F,    P̄ = softmax(scale·Q(EK)ᵀ) (n×s, row softmax), E, F ∈ R^{s×n}
 *   Nyström    M = F·Z·B,  F = softmax(scale·QK̃ᵀ) (n×m), A = softmax(scale·Q̃K̃ᵀ) (m×m),
 *                          B = softmax(scale·Q̃Kᵀ) (m×n), Z ≈ A⁺ by the iteration of Razavi et al.
 *
 * Each variant has three paths: the n×n matrix, the linear-time output (P̄(FV), F(Z(BV))) and the factors
 * M = L·Rᵀ. Logits and the m×m pseudo-inverse are computed in float64; the n×n products use the float
 * gemm of simd.h. The matrix and linear paths take the thin float64 products (the logits, F·Z, Z·BV, B·V, P̄·FV) in
 * simd.h's 2×8 tiles, each sum over the same index in the same order as the row-by-row form the factor paths keep
 * (one dot product per entry), so the bits are the same (tests/c compare them). Both variants are non-causal
 * (av_params_resolve rejects causal).
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "simd.h"

// ----------------------------------------------------------------------------------------------------
// workspace layout (one layout serves the matrix, linear and factor paths)

typedef struct {
    void *Ec, *Fc;  /* linformer gaussian: the draw caches of E and F (s×n; no F block when shared) */
    float *X;       /* linformer gaussian: F (s×n, in Fc or Ec)          | nystrom: Bᵀ (n×m)        */
    float *PX;      /* X packed for avs_gemm_strip                                                  */
    float *strip;   /* 4 rows of P̄ or of F·Z (4×r, float)                                           */
    double *C;      /* linformer: EK (s×d)                              | nystrom: Q̃ (m×d)         */
    double *C2;     /* nystrom: K̃ (m×d)                                                            */
    double *CT, *CT2; /* linformer: (EK)ᵀ (d×s)                          | nystrom: Q̃ᵀ, K̃ᵀ (d×m)    */
    double *G;      /* nystrom: the logits of Bᵀ (n×m), then their exponentials (the linear path: Bᵀ) */
    double *fs, *ls;/* 4 rows of P̄ or F, and of F·Z (4×m); the linear paths: of P̄·FV or F·(Z·BV) (4×dv) */
    double *mat[5]; /* nystrom: A, Z and three m×m temporaries                                      */
    double *row;    /* max(n, r) + the row of F·Z (r); nystrom: B's column maxima and sums (2·m)      */
    double *Y;      /* linformer: FV (s×dv)                             | nystrom: BV (m×dv)       */
    double *Y2;     /* nystrom: Z·BV (m×dv)                                                          */
    double *orow;   /* dv                                                                           */
    double *blk;    /* linformer: float64 copies, a block of E or F (transposed) and of K or V (gemm_f64), then
                     * four rows of Q (the linear path's logits)                                     */
} lr_ws;

// The rank r of the factors: s (linformer) or the landmarks (nystrom).
static int lr_rank(const av_params *prm) { return prm->variant == AV_LINFORMER ? prm->s : prm->landmarks; }

long avi_lowrank_rank(const av_params *prm) { return lr_rank(prm); }

/* Cost counts (cost.c's model): linformer (s) quadratic 2·s·n·d + s·n² + n²·dv, linear
 * 2·s·n·d + 2·s·n·dv, bytes 4·(n·s + s·d + s·dv); nystrom (m landmarks, t iterations) core
 * 2·n·m·d + m²·d + 4·t·m³, quadratic core + n·m² + m·n² + n²·dv, linear core + 2·n·m·dv + m²·dv,
 * bytes 4·(2·n·m + m² + m·dv). */
void avi_lowrank_cost(double *out, const av_params *prm, int n, int d, int dv) {
    double N = n, D = d, DV = dv, nn = N * N;
    if (prm->variant == AV_LINFORMER) {
        double s = prm->s;
        out[0] = 2 * s * N * D + s * nn + nn * DV;
        out[2] = 2 * s * N * D + 2 * s * N * DV;
        out[3] = 4 * (N * s + s * D + s * DV);
    } else {
        double m = prm->landmarks, core = 2 * N * m * D + m * m * D + 4.0 * prm->iters * m * m * m;
        out[0] = core + N * m * m + m * nn + nn * DV;
        out[2] = core + 2 * N * m * DV + m * m * DV;
        out[3] = 4 * (2 * N * m + m * m + m * DV);
    }
}

/* Tokens per block of gemm_f64: the block's rows of G (transposed) and X in float64 take about 48 kB. */
static int gemm_block(int r, int c) {
    long kb = 6144 / ((long)r + c);
    return kb < 8 ? 8 : kb > 64 ? 64 : (int)kb;
}

/* The workspace layout, carved (work) or counted (work NULL) by the shared arena; returns the bytes. */
static uint64_t lr_layout(lr_ws *ws, void *work, const av_params *prm, int n, int d, int dv) {
    avi_arena a = work ? avi_arena_over(work) : avi_arena_count();
    uint64_t r = (uint64_t)lr_rank(prm), nn = (uint64_t)n, D = sizeof(double), F = sizeof(float);
    int lin = prm->variant == AV_LINFORMER, exact = !lin && prm->landmarks == n;
    int dense = lin ? prm->ef_kind == AV_EF_GAUSSIAN : !exact;
    *ws = (lr_ws){0};
    if (dense && lin) { /* E and F first: the same place for every path, so a workspace passed again keeps them */
        ws->Ec = avi_take(&a, avi_draw_bytes((long)r, n));
        if (!prm->ef_shared) ws->Fc = avi_take(&a, avi_draw_bytes((long)r, n));
    } else if (dense) {
        ws->X = avi_take(&a, r * nn * F);
    }
    if (dense) ws->PX = avi_take(&a, (uint64_t)avs_packed_floats(n, (int)r) * F);
    ws->strip = avi_take(&a, 4 * r * F);
    ws->C = avi_take(&a, r * (uint64_t)d * D);
    if (lin) {
        ws->CT = avi_take(&a, r * (uint64_t)d * D);
        ws->fs = avi_take(&a, 4 * r * D);
        ws->ls = avi_take(&a, 4 * (r > (uint64_t)dv ? r : (uint64_t)dv) * D);
    }
    if (!lin && !exact) {
        ws->C2 = avi_take(&a, r * (uint64_t)d * D);
        ws->CT = avi_take(&a, r * (uint64_t)d * D);
        ws->CT2 = avi_take(&a, r * (uint64_t)d * D);
        for (int k = 0; k < 5; k++) ws->mat[k] = avi_take(&a, r * r * D);
        ws->G = avi_take(&a, r * nn * D);
        ws->fs = avi_take(&a, 4 * r * D);
        ws->ls = avi_take(&a, 4 * (r > (uint64_t)dv ? r : (uint64_t)dv) * D);
    }
    ws->row = avi_take(&a, ((nn > r ? nn : r) + r) * D);
    ws->Y = avi_take(&a, r * (uint64_t)dv * D);
    ws->Y2 = avi_take(&a, r * (uint64_t)dv * D);
    ws->orow = avi_take(&a, (uint64_t)dv * D);
    if (lin && dense) {
        uint64_t c = (uint64_t)(d > dv ? d : dv), g = (uint64_t)gemm_block((int)r, (int)c) * (r + c);
        ws->blk = avi_take(&a, (g > 4u * (uint64_t)d ? g : 4u * (uint64_t)d) * D);
    } else if (lin) {
        ws->blk = avi_take(&a, 4u * (uint64_t)d * D);
    }
    return a.used;
}

size_t avi_lowrank_work(const av_params *prm, int n, int d, int dv) {
    if (prm->variant != AV_LINFORMER && prm->variant != AV_NYSTROM) return 0;
    lr_ws ws;
    uint64_t bytes = lr_layout(&ws, NULL, prm, n, d, dv < 0 ? 0 : dv);
    return bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

static int lr_check(const av_params *prm) {
    if (prm->variant != AV_LINFORMER && prm->variant != AV_NYSTROM) return AV_ERR_VARIANT;
    if (prm->causal) return AV_ERR_NO_CAUSAL;
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// small kernels

/* Segment t of m over n tokens: with g = ⌊n/m⌋, the first (g+1)·m − n segments hold g tokens and the rest
 * g+1 (docs/variant-formulas.md, Nyström; the T2T-ViT Nyströmformer rule). */
void avi_segment(int *start, int *len, int t, int n, int m) {
    int g = n / m, a = (g + 1) * m - n;
    if (t < a) {
        *start = t * g;
        *len = g;
    } else {
        *start = a * g + (t - a) * (g + 1);
        *len = g + 1;
    }
}

// Y[m×c] = segment means of the rows of X[n×c] (float64).
static void segment_means(double *Y, const float *X, int n, int m, int c) {
    for (int t = 0; t < m; t++) {
        int s0, len;
        avi_segment(&s0, &len, t, n, m);
        double *y = Y + (size_t)t * c;
        for (int k = 0; k < c; k++) y[k] = 0.0;
        for (int j = s0; j < s0 + len; j++)
            for (int k = 0; k < c; k++) y[k] += X[(size_t)j * c + k];
        for (int k = 0; k < c; k++) y[k] /= len;
    }
}

/* Y[r×c] = G[r×n]·X[n×c], float64 accumulation, each entry summed over j in order from +0. The full 2×8 tiles run
 * block by block of j on float64 copies in blk (the block of G transposed, of X as is) by simd.h's
 * avs_kernel_f64_dtd_acc, each tile's sums continued from the previous block's in Y; the edge entries one by one
 * (the same sums). The copies take the float → double conversions out of the kernel's inner step, where in WASM
 * they competed with the adds (with the rows of Q converted for the logits, Linformer's linear path at n = 256,
 * s = d = 64 went from 0.63 to 0.55 ms in WASM, 0.31 to 0.27 ms natively). */
static void gemm_f64(double *Y, double *blk, const float *G, const float *X, int r, int n, int c) {
    int r2 = r / AVS_F64_ROWS * AVS_F64_ROWS, c8 = c / AVS_F64_COLS * AVS_F64_COLS, kb = gemm_block(r, c);
    double *Gt = blk, *Xd = blk + (size_t)kb * r;
    for (int t = 0; t < r2; t++) memset(Y + (size_t)t * c, 0, (size_t)c8 * sizeof(double));
    if (r2 > 0 && c8 > 0)
        for (int j0 = 0; j0 < n; j0 += kb) {
            int kn = n - j0 < kb ? n - j0 : kb;
            for (int t = 0; t < r2; t++) {
                const float *g = G + (size_t)t * n + j0;
                for (int j = 0; j < kn; j++) Gt[(size_t)j * r + t] = g[j];
            }
            const float *x = X + (size_t)j0 * c;
            for (int j = 0; j < kn; j++)
                for (int k = 0; k < c8; k++) Xd[(size_t)j * c + k] = x[(size_t)j * c + k];
            for (int t0 = 0; t0 < r2; t0 += AVS_F64_ROWS)
                for (int k0 = 0; k0 < c8; k0 += AVS_F64_COLS)
                    avs_kernel_f64_dtd_acc(Y + (size_t)t0 * c + k0, (size_t)c, Gt + t0, (size_t)r, Xd + k0, (size_t)c, kn);
        }
    for (int t = 0; t < r; t++)
        for (int k = t < r2 ? c8 : 0; k < c; k++) {
            double sum = 0.0;
            for (int j = 0; j < n; j++) sum += (double)G[(size_t)t * n + j] * X[(size_t)j * c + k];
            Y[(size_t)t * c + k] = sum;
        }
}

/* The plain form of gemm_f64 (the reference of linformer_linear_rows): the same sums, a row of Y at a time. */
static void gemm_f64_rows(double *Y, const float *G, const float *X, int r, int n, int c) {
    for (int t = 0; t < r; t++) {
        double *y = Y + (size_t)t * c;
        for (int k = 0; k < c; k++) y[k] = 0.0;
        for (int j = 0; j < n; j++) {
            double g = G[(size_t)t * n + j];
            const float *x = X + (size_t)j * c;
            for (int k = 0; k < c; k++) y[k] += g * x[k];
        }
    }
}

static double dot_fd(const float *a, const double *b, int d) {
    double s = 0.0;
    for (int t = 0; t < d; t++) s += a[t] * b[t];
    return s;
}

/* C[rows×cols] (stride ldc) = A·B, float64 sums over the shared index in order from +0: each entry has the bits of a
 * dot product (dot_fd's loop; in float64 for Ad) of a row of A and a column of B. A is float (Af) or float64 (Ad),
 * rows×k, stride lda; B float64, k×cols, stride ldb. 2×8 tiles by simd.h's kernels, the edge entries one by one. */
static void prod_f64(double *C, size_t ldc, const float *Af, const double *Ad, size_t lda, const double *B, size_t ldb,
                     int rows, int cols, int k) {
    double acc[AVS_F64_ROWS][AVS_F64_COLS];
    for (int i0 = 0; i0 < rows; i0 += AVS_F64_ROWS) {
        int h = rows - i0 < AVS_F64_ROWS ? rows - i0 : AVS_F64_ROWS;
        for (int j0 = 0; j0 < cols; j0 += AVS_F64_COLS) {
            int w = cols - j0 < AVS_F64_COLS ? cols - j0 : AVS_F64_COLS;
            if (h == AVS_F64_ROWS && w == AVS_F64_COLS) {
                if (Af) avs_kernel_f64_ab(acc, Af + (size_t)i0 * lda, lda, B + j0, ldb, k);
                else avs_kernel_f64_dd(acc, Ad + (size_t)i0 * lda, lda, B + j0, ldb, k);
            } else {
                for (int a = 0; a < h; a++)
                    for (int c = 0; c < w; c++) {
                        double s = 0.0;
                        const double *b = B + j0 + c;
                        if (Af)
                            for (int t = 0; t < k; t++) s += Af[(size_t)(i0 + a) * lda + t] * b[(size_t)t * ldb];
                        else
                            for (int t = 0; t < k; t++) s += Ad[(size_t)(i0 + a) * lda + t] * b[(size_t)t * ldb];
                        acc[a][c] = s;
                    }
            }
            for (int a = 0; a < h; a++) memcpy(C + (size_t)(i0 + a) * ldc + j0, acc[a], (size_t)w * sizeof(double));
        }
    }
}

// Y[c×r] = Xᵀ for X r×c (float64).
static void transpose_f64(double *Y, const double *X, int r, int c) {
    for (int i = 0; i < r; i++)
        for (int j = 0; j < c; j++) Y[(size_t)j * r + i] = X[(size_t)i * c + j];
}

// z[0..len) ← softmax(z), max-subtracted (an Inf logit gives NaN, which the caller reports).
static void softmax_f64(double *z, int len) {
    double mx = z[0], sum = 0.0;
    for (int j = 1; j < len; j++) mx = z[j] > mx ? z[j] : mx;
    for (int j = 0; j < len; j++) {
        z[j] = exp(z[j] - mx);
        sum += z[j];
    }
    double inv = 1.0 / sum;
    for (int j = 0; j < len; j++) z[j] *= inv;
}

/* z[t] = scale·(a_t·b_t), t < r, with a_t = A + t·lda (float) and b_t = B + t·ldb (float64); a stride of 0
 * repeats one row. Each dot is summed in order (the bits of dot_fd); four dots run at a time, as
 * independent chains, so that the adds overlap instead of waiting on one another's latency. */
static void scaled_dots(double *z, const float *A, size_t lda, const double *B, size_t ldb, int r, int d,
                        double scale) {
    int t = 0;
    for (; t + 4 <= r; t += 4) {
        const float *a0 = A + t * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        const double *b0 = B + t * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (int k = 0; k < d; k++) {
            s0 += a0[k] * b0[k];
            s1 += a1[k] * b1[k];
            s2 += a2[k] * b2[k];
            s3 += a3[k] * b3[k];
        }
        z[t] = scale * s0;
        z[t + 1] = scale * s1;
        z[t + 2] = scale * s2;
        z[t + 3] = scale * s3;
    }
    for (; t < r; t++) z[t] = scale * dot_fd(A + t * lda, B + t * ldb, d);
}

// z = softmax(scale·x·Cᵀ) over the r rows of C (r×d float64), x a float row.
static void softmax_row_fd(double *z, const float *x, const double *C, int r, int d, double scale) {
    scaled_dots(z, x, 0, C, (size_t)d, r, d, scale);
    softmax_f64(z, r);
}

// z = softmax(scale·c·Xᵀ) over the n rows of X (n×d float), c a float64 row.
static void softmax_row_df(double *z, const double *c, const float *X, int n, int d, double scale) {
    scaled_dots(z, X, (size_t)d, c, 0, n, d, scale);
    softmax_f64(z, n);
}

// y[c] = Σ_t p[t]·Y[t][0..c), t < r.
static void vec_mat(double *y, const double *p, const double *Y, int r, int c) {
    for (int k = 0; k < c; k++) y[k] = 0.0;
    for (int t = 0; t < r; t++)
        for (int k = 0; k < c; k++) y[k] += p[t] * Y[(size_t)t * c + k];
}

static void to_float(float *dst, const double *src, size_t count) {
    for (size_t i = 0; i < count; i++) dst[i] = (float)src[i];
}

// ----------------------------------------------------------------------------------------------------
// Linformer (lucidrains/linformer LinformerSelfAttention.forward; E, F as docs/variant-formulas.md)

typedef struct {
    const float *Q;
    const double *EK;
    double *row, scale;
    int s, d;
} lin_ctx;

// Row i of P̄ = softmax(scale·q_i·(EK)ᵀ), as float.
static void lin_pbar_row(float *dst, int i, void *vctx) {
    lin_ctx *c = vctx;
    softmax_row_fd(c->row, c->Q + (size_t)i * c->d, c->EK, c->s, c->d, c->scale);
    to_float(dst, c->row, (size_t)c->s);
}

/* A Gaussian s×n matrix N(0, 1/s) from `stream`, in the draw cache `block` (internal.h): drawn unless the block
 * already holds it. Returns its floats. */
static float *lin_draw(void *block, int kind, int stream, int s, int n, uint32_t seed) {
    avi_draw_key key = {(uint32_t)kind, seed, s, n, 0};
    float *G = avi_draw_data(block);
    if (!avi_draw_hit(block, &key)) {
        avi_gaussian_matrix(G, s, n, 1.0 / sqrt((double)s), avi_stream(stream, seed));
        avi_draw_seal(block, &key);
    }
    return G;
}

/* Common set-up: EK (s×d) into ws->C; for gaussian E, F, ws->X points at F (s×n) on return. E is drawn from
 * avi_stream(AVI_STREAM_LINFORMER_E, seed), F from avi_stream(AVI_STREAM_LINFORMER_F, seed) (never the same
 * stream as E's, nor the generator's), or F = E when ef_shared; each kept in its draw cache, so a workspace
 * passed again with the same seed, s and n draws neither. The mean kind needs no matrix: E = F = segment means. */
static void lin_setup(lr_ws *ws, const float *K, int n, int d, const av_params *prm) {
    int s = prm->s;
    if (prm->ef_kind == AV_EF_MEAN) {
        segment_means(ws->C, K, n, s, d);
        return;
    }
    uint32_t seed = (uint32_t)prm->seed;
    float *E = lin_draw(ws->Ec, AVI_DRAW_LINFORMER_E, AVI_STREAM_LINFORMER_E, s, n, seed);
    gemm_f64(ws->C, ws->blk, E, K, s, n, d);
    ws->X = prm->ef_shared ? E : lin_draw(ws->Fc, AVI_DRAW_LINFORMER_F, AVI_STREAM_LINFORMER_F, s, n, seed);
}

/* Rows i0 .. i0 + rows of P̄ = softmax(scale·Q·(EK)ᵀ) into ws->fs (rows×s, float64), ws->CT holding (EK)ᵀ: the
 * rows of Q in float64 (the same products), so the logits' kernel has no conversion in its inner step. */
static void lin_pbar_block(lr_ws *ws, const float *Q, int i0, int rows, int d, int s, double scale) {
    const float *q = Q + (size_t)i0 * d;
    for (size_t e = 0; e < (size_t)rows * d; e++) ws->blk[e] = q[e];
    prod_f64(ws->fs, (size_t)s, NULL, ws->blk, (size_t)d, ws->CT, (size_t)s, rows, s, d);
    for (int a = 0; a < rows; a++) {
        double *f = ws->fs + (size_t)a * s;
        for (int t = 0; t < s; t++) f[t] = scale * f[t];
        softmax_f64(f, s);
    }
}

static int linformer_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *prm,
                            lr_ws *ws) {
    int s = prm->s;
    lin_setup(ws, K, n, d, prm);
    if (prm->ef_kind == AV_EF_GAUSSIAN) {       /* M = P̄·F, P̄ four rows at a time (the bits of lin_pbar_row) */
        avs_pack_b(ws->PX, ws->X, (size_t)n, s, n);
        transpose_f64(ws->CT, ws->C, s, d);
        for (int i0 = 0; i0 < n; i0 += 4) {
            int rows = n - i0 < 4 ? n - i0 : 4;
            lin_pbar_block(ws, Q, i0, rows, d, s, prm->scale);
            to_float(ws->strip, ws->fs, (size_t)rows * s);
            avs_gemm_strip(M + (size_t)i0 * n, (size_t)n, ws->strip, (size_t)s, rows, ws->PX, s, n, s, 1.0f, 0);
        }
        return AV_OK;
    }
    for (int i = 0; i < n; i++) {                           /* M[i, j] = P̄[i, seg(j)] / |seg(j)| */
        softmax_row_fd(ws->row, Q + (size_t)i * d, ws->C, s, d, prm->scale);
        for (int t = 0; t < s; t++) {
            int s0, len;
            avi_segment(&s0, &len, t, n, s);
            float v = (float)(ws->row[t] / len);
            for (int j = s0; j < s0 + len; j++) M[(size_t)i * n + j] = v;
        }
    }
    return AV_OK;
}

/* O = P̄·(FV), four rows at a time: P̄'s logits scale·Q·(EK)ᵀ and the rows of P̄·FV in 2×8 tiles, the bits of the
 * row-by-row form (softmax_row_fd, vec_mat: linformer_linear_rows). */
static void linformer_linear(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                             const av_params *prm, lr_ws *ws) {
    int s = prm->s;
    lin_setup(ws, K, n, d, prm);
    if (prm->ef_kind == AV_EF_GAUSSIAN) gemm_f64(ws->Y, ws->blk, ws->X, V, s, n, dv);
    else segment_means(ws->Y, V, n, s, dv);
    transpose_f64(ws->CT, ws->C, s, d);
    for (int i0 = 0; i0 < n; i0 += 4) {
        int rows = n - i0 < 4 ? n - i0 : 4;
        lin_pbar_block(ws, Q, i0, rows, d, s, prm->scale);
        prod_f64(ws->ls, (size_t)dv, NULL, ws->fs, (size_t)s, ws->Y, (size_t)dv, rows, dv, s);
        to_float(O + (size_t)i0 * dv, ws->ls, (size_t)rows * dv);
    }
}

/* The row-by-row reference of linformer_linear (tests/c compare the bits through avi_lowrank_linear_rows). */
static void linformer_linear_rows(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                                  const av_params *prm, lr_ws *ws) {
    int s = prm->s;
    lin_setup(ws, K, n, d, prm);
    if (prm->ef_kind == AV_EF_GAUSSIAN) {                   /* EK and FV by the plain products */
        gemm_f64_rows(ws->C, avi_draw_data(ws->Ec), K, s, n, d);
        gemm_f64_rows(ws->Y, ws->X, V, s, n, dv);
    }
    else segment_means(ws->Y, V, n, s, dv);
    for (int i = 0; i < n; i++) {
        softmax_row_fd(ws->row, Q + (size_t)i * d, ws->C, s, d, prm->scale);
        vec_mat(ws->orow, ws->row, ws->Y, s, dv);
        to_float(O + (size_t)i * dv, ws->orow, (size_t)dv);
    }
}

static void linformer_factors(float *L, float *R, const float *Q, const float *K, int n, int d,
                              const av_params *prm, lr_ws *ws) {
    int s = prm->s;
    lin_setup(ws, K, n, d, prm);
    lin_ctx c = {Q, ws->C, ws->row, prm->scale, s, d};
    for (int i = 0; i < n; i++) lin_pbar_row(L + (size_t)i * s, i, &c);
    if (prm->ef_kind == AV_EF_GAUSSIAN) {
        for (int t = 0; t < s; t++)
            for (int j = 0; j < n; j++) R[(size_t)j * s + t] = ws->X[(size_t)t * n + j];
        return;
    }
    memset(R, 0, (size_t)n * s * sizeof(float));
    for (int t = 0; t < s; t++) {
        int s0, len;
        avi_segment(&s0, &len, t, n, s);
        for (int j = s0; j < s0 + len; j++) R[(size_t)j * s + t] = (float)(1.0 / len);
    }
}

// ----------------------------------------------------------------------------------------------------
// Nyströmformer (mlpen/Nystromformer NystromAttention.forward, iterative_inv)

/* C[m×m] = A·B (float64), each entry summed over k in order from +0; 2×8 tiles in registers, edge tiles
 * entry by entry (the same sums). */
static void matmul_f64(double *C, const double *A, const double *B, int m) {
    double acc[AVS_F64_ROWS][AVS_F64_COLS];
    for (int i0 = 0; i0 < m; i0 += AVS_F64_ROWS) {
        int h = m - i0 < AVS_F64_ROWS ? m - i0 : AVS_F64_ROWS;
        for (int j0 = 0; j0 < m; j0 += AVS_F64_COLS) {
            int w = m - j0 < AVS_F64_COLS ? m - j0 : AVS_F64_COLS;
            if (h == AVS_F64_ROWS && w == AVS_F64_COLS) {
                avs_kernel_f64_dd(acc, A + (size_t)i0 * m, (size_t)m, B + j0, (size_t)m, m);
            } else {
                for (int a = 0; a < h; a++)
                    for (int c = 0; c < w; c++) {
                        double s = 0.0;
                        for (int k = 0; k < m; k++) s += A[(size_t)(i0 + a) * m + k] * B[(size_t)k * m + j0 + c];
                        acc[a][c] = s;
                    }
            }
            for (int a = 0; a < h; a++) memcpy(C + (size_t)(i0 + a) * m + j0, acc[a], (size_t)w * sizeof(double));
        }
    }
}

// T ← αI − T.
static void shift_neg(double *T, double alpha, int m) {
    for (size_t i = 0; i < (size_t)m * m; i++) T[i] = -T[i];
    for (int i = 0; i < m; i++) T[(size_t)i * m + i] += alpha;
}

/* Z ≈ A⁺ by `iters` steps of Z ← ¼Z(13I − AZ(15I − AZ(7I − AZ))) from Z₀ = Aᵀ/max_j Σ_i A_ij (Razavi et
 * al. 2014, as in Nyströmformer's iterative_inv). A = mat[0]; returns the buffer that holds Z. */
static double *nystrom_pinv(double **mat, int m, int iters) {
    double *A = mat[0], *Z = mat[1], *AZ = mat[2], *T = mat[3], *U = mat[4];
    double cmax = 0.0;
    for (int j = 0; j < m; j++) {
        double cs = 0.0;
        for (int i = 0; i < m; i++) cs += A[(size_t)i * m + j];
        cmax = cs > cmax ? cs : cmax;
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) Z[(size_t)i * m + j] = A[(size_t)j * m + i] / cmax;
    for (int it = 0; it < iters; it++) {
        matmul_f64(AZ, A, Z, m);
        memcpy(T, AZ, (size_t)m * m * sizeof(double));
        shift_neg(T, 7.0, m);                               /* T = 7I − AZ */
        matmul_f64(U, AZ, T, m);
        shift_neg(U, 15.0, m);                              /* U = 15I − AZ(7I − AZ) */
        matmul_f64(T, AZ, U, m);
        shift_neg(T, 13.0, m);                              /* T = 13I − AZ(15I − AZ(7I − AZ)) */
        matmul_f64(U, Z, T, m);
        for (size_t k = 0; k < (size_t)m * m; k++) U[k] *= 0.25;
        double *tmp = Z;                                    /* Z ← U */
        Z = U;
        U = tmp;
    }
    mat[1] = Z;
    mat[4] = U;
    return Z;
}

/* Landmarks Q̃ (ws->C), K̃ (ws->C2) and their transposes, A and Z = pinv(A); returns Z. A's logits are the tiled
 * product Q̃·K̃ᵀ (each entry the bits of an in-order float64 dot product). */
static double *nystrom_setup(lr_ws *ws, const float *Q, const float *K, int n, int d, const av_params *prm) {
    int m = prm->landmarks;
    segment_means(ws->C, Q, n, m, d);
    segment_means(ws->C2, K, n, m, d);
    transpose_f64(ws->CT, ws->C, m, d);
    transpose_f64(ws->CT2, ws->C2, m, d);
    double *A = ws->mat[0];
    prod_f64(A, (size_t)m, NULL, ws->C, (size_t)d, ws->CT2, (size_t)m, m, m, d);
    for (int t = 0; t < m; t++) {
        double *a = A + (size_t)t * m;
        for (int u = 0; u < m; u++) a[u] = prm->scale * a[u];
        softmax_f64(a, m);
    }
    return nystrom_pinv(ws->mat, m, prm->iters);
}

typedef struct {
    const float *Q;
    const double *Kt, *Z;
    double *row, *lrow, scale;
    int m, d;
} nys_ctx;

// Row i of L = F·Z, F_i = softmax(scale·q_i·K̃ᵀ), as float.
static void nys_l_row(float *dst, int i, void *vctx) {
    nys_ctx *c = vctx;
    softmax_row_fd(c->row, c->Q + (size_t)i * c->d, c->Kt, c->m, c->d, c->scale);
    vec_mat(c->lrow, c->row, c->Z, c->m, c->m);
    to_float(dst, c->lrow, (size_t)c->m);
}

// z = softmax(scale·q·Kᵀ) over the n keys: a row of the exact softmax matrix (landmarks = n).
static void exact_row(double *z, const float *q, const float *K, int n, int d, double scale) {
    for (int j = 0; j < n; j++) {
        const float *k = K + (size_t)j * d;
        double s = 0.0;
        for (int t = 0; t < d; t++) s += (double)q[t] * k[t];
        z[j] = scale * s;
    }
    softmax_f64(z, n);
}

// B_t = softmax(scale·q̃_t·Kᵀ) into row (n doubles).
static void nys_b_row(double *row, int t, const float *K, int n, int d, const lr_ws *ws, double scale) {
    softmax_row_df(row, ws->C + (size_t)t * d, K, n, d, scale);
}

/* B = softmax over the keys of scale·Q̃Kᵀ, computed transposed: G = Bᵀ's logits scale·K·Q̃ᵀ (n×m, in 2×8 tiles), then
 * each column's softmax in the operations of softmax_f64 (nys_b_row): the max, e = exp(z − max) into G, the sum in
 * order of j. Returns 1/sum of each column (m doubles in ws->row): B_tj = G[j][t]·inv[t]. */
static double *nystrom_bt(lr_ws *ws, const float *K, int n, int d, int m, double sc) {
    double *G = ws->G, *mx = ws->row, *sum = ws->row + m;
    prod_f64(G, (size_t)m, K, NULL, (size_t)d, ws->CT, (size_t)m, n, m, d);
    for (int t = 0; t < m; t++) {
        mx[t] = sc * G[t];
        sum[t] = 0.0;
    }
    for (int j = 0; j < n; j++)
        for (int t = 0; t < m; t++) {
            double z = sc * G[(size_t)j * m + t];
            G[(size_t)j * m + t] = z;
            mx[t] = z > mx[t] ? z : mx[t];
        }
    for (int j = 0; j < n; j++)
        for (int t = 0; t < m; t++) {
            double e = exp(G[(size_t)j * m + t] - mx[t]);
            G[(size_t)j * m + t] = e;
            sum[t] += e;
        }
    for (int t = 0; t < m; t++) sum[t] = 1.0 / sum[t];
    return sum;
}

/* Rows [i0, i0 + rows) of F = softmax(scale·Q·K̃ᵀ) into ws->fs (rows×m): the logits in 2×8 tiles (the bits of
 * softmax_row_fd), each row's softmax by softmax_f64. */
static void nystrom_f_rows(lr_ws *ws, const float *Q, int i0, int rows, int d, int m, double sc) {
    prod_f64(ws->fs, (size_t)m, Q + (size_t)i0 * d, NULL, (size_t)d, ws->CT2, (size_t)m, rows, m, d);
    for (int a = 0; a < rows; a++) {
        double *f = ws->fs + (size_t)a * m;
        for (int t = 0; t < m; t++) f[t] = sc * f[t];
        softmax_f64(f, m);
    }
}

static void nystrom_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *prm,
                           lr_ws *ws) {
    int m = prm->landmarks;
    if (m == n) {                                           /* exact softmax (the canonical special case) */
        for (int i = 0; i < n; i++) {
            exact_row(ws->row, Q + (size_t)i * d, K, n, d, prm->scale);
            to_float(M + (size_t)i * n, ws->row, (size_t)n);
        }
        return;
    }
    double *Z = nystrom_setup(ws, Q, K, n, d, prm), *G = ws->G, sc = prm->scale;
    double *inv = nystrom_bt(ws, K, n, d, m, sc);          /* Bᵀ as float in X, packed as the gemm's B */
    for (size_t j = 0; j < (size_t)n; j++)
        for (int t = 0; t < m; t++) ws->X[j * m + t] = (float)(G[j * m + t] * inv[t]);
    avs_pack_bt(ws->PX, ws->X, (size_t)m, n, m);
    /* M = L·B, L = F·Z four rows at a time: F's logits scale·Q·K̃ᵀ and L's rows in 2×8 tiles (the bits of
     * nys_l_row), then the float gemm */
    for (int i0 = 0; i0 < n; i0 += 4) {
        int rows = n - i0 < 4 ? n - i0 : 4;
        nystrom_f_rows(ws, Q, i0, rows, d, m, sc);
        prod_f64(ws->ls, (size_t)m, NULL, ws->fs, (size_t)m, Z, (size_t)m, rows, m, m);
        to_float(ws->strip, ws->ls, (size_t)rows * m);
        avs_gemm_strip(M + (size_t)i0 * n, (size_t)n, ws->strip, (size_t)m, rows, ws->PX, m, n, m, 1.0f, 0);
    }
}

static void nystrom_linear(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                           const av_params *prm, lr_ws *ws) {
    int m = prm->landmarks;
    if (m == n) {                                           /* O_i = Σ_j softmax_ij v_j */
        for (int i = 0; i < n; i++) {
            exact_row(ws->row, Q + (size_t)i * d, K, n, d, prm->scale);
            for (int k = 0; k < dv; k++) ws->orow[k] = 0.0;
            for (int j = 0; j < n; j++)
                for (int k = 0; k < dv; k++) ws->orow[k] += ws->row[j] * V[(size_t)j * dv + k];
            to_float(O + (size_t)i * dv, ws->orow, (size_t)dv);
        }
        return;
    }
    /* The bits of the row-by-row form (nys_b_row, softmax_row_fd, vec_mat): every sum runs over the same index in
     * the same order, by the tiled products of the matrix path. */
    double *Z = nystrom_setup(ws, Q, K, n, d, prm), *G = ws->G, sc = prm->scale;
    double *inv = nystrom_bt(ws, K, n, d, m, sc);
    for (size_t j = 0; j < (size_t)n; j++)                 /* G ← Bᵀ */
        for (int t = 0; t < m; t++) G[j * m + t] *= inv[t];
    double acc[AVS_F64_ROWS][AVS_F64_COLS];                 /* BV = B·V (m×dv), each sum in order of j from +0 */
    for (int t0 = 0; t0 < m; t0 += AVS_F64_ROWS) {
        int h = m - t0 < AVS_F64_ROWS ? m - t0 : AVS_F64_ROWS;
        for (int c0 = 0; c0 < dv; c0 += AVS_F64_COLS) {
            int w = dv - c0 < AVS_F64_COLS ? dv - c0 : AVS_F64_COLS;
            if (h == AVS_F64_ROWS && w == AVS_F64_COLS) {
                avs_kernel_f64_dtb(acc, G + t0, (size_t)m, V + c0, (size_t)dv, n);
            } else {
                for (int a = 0; a < h; a++)
                    for (int c = 0; c < w; c++) {
                        double sum = 0.0;
                        for (int j = 0; j < n; j++) sum += G[(size_t)j * m + t0 + a] * V[(size_t)j * dv + c0 + c];
                        acc[a][c] = sum;
                    }
            }
            for (int a = 0; a < h; a++) memcpy(ws->Y + (size_t)(t0 + a) * dv + c0, acc[a], (size_t)w * sizeof(double));
        }
    }
    prod_f64(ws->Y2, (size_t)dv, NULL, Z, (size_t)m, ws->Y, (size_t)dv, m, dv, m); /* Z·BV */
    for (int i0 = 0; i0 < n; i0 += 4) {                     /* O_i = F_i·(Z·BV) */
        int rows = n - i0 < 4 ? n - i0 : 4;
        nystrom_f_rows(ws, Q, i0, rows, d, m, sc);
        prod_f64(ws->ls, (size_t)dv, NULL, ws->fs, (size_t)m, ws->Y2, (size_t)dv, rows, dv, m);
        to_float(O + (size_t)i0 * dv, ws->ls, (size_t)rows * dv);
    }
}

/* The row-by-row reference of nystrom_linear's tiled form (m < n): a dot product per logit, a softmax per row,
 * vec_mat per output row. The same bits (tests/c compare them through avi_lowrank_linear_rows). */
static void nystrom_linear_rows(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                                const av_params *prm, lr_ws *ws) {
    int m = prm->landmarks;
    double *Z = nystrom_setup(ws, Q, K, n, d, prm);
    for (int t = 0; t < m; t++) {                           /* BV = B·V (m×dv) */
        nys_b_row(ws->row, t, K, n, d, ws, prm->scale);
        double *y = ws->Y + (size_t)t * dv;
        for (int k = 0; k < dv; k++) y[k] = 0.0;
        for (int j = 0; j < n; j++)
            for (int k = 0; k < dv; k++) y[k] += ws->row[j] * V[(size_t)j * dv + k];
    }
    for (int t = 0; t < m; t++) vec_mat(ws->Y2 + (size_t)t * dv, Z + (size_t)t * m, ws->Y, m, dv);
    for (int i = 0; i < n; i++) {                           /* O_i = F_i·(Z·BV) */
        softmax_row_fd(ws->row, Q + (size_t)i * d, ws->C2, m, d, prm->scale);
        vec_mat(ws->orow, ws->row, ws->Y2, m, dv);
        to_float(O + (size_t)i * dv, ws->orow, (size_t)dv);
    }
}

static void nystrom_factors(float *L, float *R, const float *Q, const float *K, int n, int d,
                            const av_params *prm, lr_ws *ws) {
    int m = prm->landmarks;
    if (m == n) {                                           /* L = the softmax matrix, R = I */
        for (int i = 0; i < n; i++) {
            exact_row(ws->row, Q + (size_t)i * d, K, n, d, prm->scale);
            to_float(L + (size_t)i * n, ws->row, (size_t)n);
        }
        memset(R, 0, (size_t)n * n * sizeof(float));
        for (int i = 0; i < n; i++) R[(size_t)i * n + i] = 1.0f;
        return;
    }
    double *Z = nystrom_setup(ws, Q, K, n, d, prm);
    for (int t = 0; t < m; t++) {                           /* R = Bᵀ */
        nys_b_row(ws->row, t, K, n, d, ws, prm->scale);
        for (int j = 0; j < n; j++) R[(size_t)j * m + t] = (float)ws->row[j];
    }
    size_t big = (size_t)(n > m ? n : m);
    nys_ctx c = {Q, ws->C2, Z, ws->row, ws->row + big, prm->scale, m, d};
    for (int i = 0; i < n; i++) nys_l_row(L + (size_t)i * m, i, &c);
}

// ----------------------------------------------------------------------------------------------------
// the entry points (resolved knobs; work of avi_lowrank_work bytes)

/* M[n×n], the effective map. AV_WARN_PRODUCT_OVERFLOW when an entry is not finite (a logit beyond float64
 * range, e.g. an enormous scale, gives NaN rows). */
int avi_lowrank_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *prm, void *work) {
    int st = lr_check(prm);
    if (st != AV_OK) return st;
    lr_ws ws;
    lr_layout(&ws, work, prm, n, d, 0);
    if (prm->variant == AV_LINFORMER) linformer_matrix(M, Q, K, n, d, prm, &ws);
    else nystrom_matrix(M, Q, K, n, d, prm, &ws);
    return avs_all_finite(M, (size_t)n * n) ? AV_OK : AV_WARN_PRODUCT_OVERFLOW;
}

/* O[n×dv] = P̄(FV) or F(Z(BV)) without forming n×n. */
int avi_lowrank_linear(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                       const av_params *prm, void *work) {
    int st = lr_check(prm);
    if (st != AV_OK) return st;
    lr_ws ws;
    lr_layout(&ws, work, prm, n, d, dv);
    if (prm->variant == AV_LINFORMER) linformer_linear(O, Q, K, V, n, d, dv, prm, &ws);
    else nystrom_linear(O, Q, K, V, n, d, dv, prm, &ws);
    return avs_all_finite(O, (size_t)n * dv) ? AV_OK : AV_WARN_PRODUCT_OVERFLOW;
}

/* Test hook: the linear output by the row-by-row reference form (Linformer; Nyström with landmarks < n), in the
 * same workspace. */
int avi_lowrank_linear_rows(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                            const av_params *prm, void *work) {
    int st = lr_check(prm);
    if (st != AV_OK) return st;
    if (prm->variant == AV_NYSTROM && prm->landmarks >= n) return AV_ERR_VARIANT;
    lr_ws ws;
    lr_layout(&ws, work, prm, n, d, dv);
    if (prm->variant == AV_LINFORMER) linformer_linear_rows(O, Q, K, V, n, d, dv, prm, &ws);
    else nystrom_linear_rows(O, Q, K, V, n, d, dv, prm, &ws);
    return AV_OK;
}

/* L, R (n×r) with M = L·Rᵀ: linformer L = P̄, R = Fᵀ (r = s); nystrom L = F·Z, R = Bᵀ (r = landmarks;
 * with landmarks = n, L = the softmax matrix and R = I). */
int avi_lowrank_factors(float *L, float *R, const float *Q, const float *K, int n, int d,
                        const av_params *prm, void *work) {
    int st = lr_check(prm);
    if (st != AV_OK) return st;
    lr_ws ws;
    lr_layout(&ws, work, prm, n, d, 0);
    if (prm->variant == AV_LINFORMER) linformer_factors(L, R, Q, K, n, d, prm, &ws);
    else nystrom_factors(L, R, Q, K, n, d, prm, &ws);
    size_t cnt = (size_t)n * lr_rank(prm);
    return avs_all_finite(L, cnt) && avs_all_finite(R, cnt) ? AV_OK : AV_WARN_PRODUCT_OVERFLOW;
}
