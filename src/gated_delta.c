/* gated_delta.c: gdn (Gated DeltaNet: one α_t, β_t per token) and kda (Kimi Delta Attention: α_t per channel,
 * one β_t per token), docs/gated.md: S' = Diag(α_t) S_{t−1}, u_t = β_t(v_t − S'ᵀk̃_t), S_t = S' + k̃_t u_tᵀ,
 * o_t = S_tᵀq̃_t. With A_qk = tril(Q̃K̃ᵀ ⊙ Γ) and A_kk = stril(K̃K̃ᵀ ⊙ Γ) (gated.c's products, avi_gprod):
 *   matrix     M = A_qk (I + diag(β) A_kk)⁻¹ diag(β): row i solves x (I + diag(β) A_kk) = a_i by back
 *              substitution from x_i down (m_il = β_l x_l is final once x_l is; then
 *              x[0..l) −= m_il · A_kk[l][0..l)), A_kk kept in float (n×n) as the delta rule's;
 *   recurrent  gated.c's scan;
 *   chunkwise  chunks [c0, c0 + L) with the chunk's own sums b_a, r_a (as gated_linear.c) and the UT transform:
 *              the written values U = (I + diag(β) A_kk)⁻¹ diag(β) (V − K_b S), K_b rows k̃_a ⊙ e^{b_a}, by forward
 *              substitution (β scales the ROWS of A_kk: row a is token a), then
 *              o_a = (q̃_a ⊙ e^{b_a})ᵀS + Σ_{b≤a} (A_qk)_ab u_b,  S ← Diag(e^{b_{L−1}}) S + Σ_b (k̃_b ⊙ e^{r_b}) u_bᵀ.
 * With constant gates and β (no arrays) this is the delta rule with decay α and β, but on fla's keys
 * x/√(Σx² + 1e-6) (qk_l2norm, on by default) where deltanet has exact unit rows: docs/gated.md, tests.
 */
#include <math.h>
#include <string.h>

#include "gated.h"
#include "simd.h"

typedef struct dbufs {
    float *Qt, *Kt;    /* n×d: q̃, k̃ */
    avi_gprod k;       /* the products of a range, A_qk and A_kk at once */
    double *Aq, *Ak;   /* strips SB×n (matrix) or the chunk's C×C */
    float *L;          /* A_kk, n×n (matrix) */
    double *S, *U, *e; /* state d×dv, the chunk's written values C×dv, exponents d (chunkwise) */
    double *f;         /* e^e, d (chunkwise) */
} dbufs;


static void dlayout(dbufs *b, avi_arena *a, const av_params *p, int n, int d, int dv, int path) {
    memset(b, 0, sizeof *b);
    if (path == AVI_GATED_RECURRENT) { /* the scan lays out its own */
        avi_take(a, avi_gated_scan_need(n, d, dv));
        return;
    }
    b->Qt = avi_take(a, 4u * (uint64_t)n * d);
    b->Kt = avi_take(a, 4u * (uint64_t)n * d);
    int len = path == AVI_GATED_MATRIX ? n : avi_chunk_of(p, n);
    avi_gprod_take(&b->k, a, len, d, avi_gate_channels(p), 1);
    uint64_t rows = path == AVI_GATED_MATRIX ? AVI_GPROD_SB : (uint64_t)len;
    b->Aq = avi_take(a, 8u * rows * len);
    b->Ak = avi_take(a, 8u * rows * len);
    if (path == AVI_GATED_MATRIX) {
        b->L = avi_take(a, 4u * (uint64_t)n * n);
        return;
    }
    b->S = avi_take(a, 8u * (uint64_t)d * dv);
    b->U = avi_take(a, 8u * (uint64_t)len * dv);
    b->e = avi_take(a, 8u * (uint64_t)d);
    b->f = avi_take(a, 8u * (uint64_t)d);
}

uint64_t avi_gdelta_need(const av_params *p, int n, int d, int dv, int path) {
    avi_arena a = avi_arena_count();
    dbufs b;
    dlayout(&b, &a, p, n, d, dv, path);
    return a.used;
}

/* y[0..len) −= α·x[0..len), x float (a row of A_kk), y float64; two lanes at a time. */
static void axpy_neg_fd(double *restrict y, double alpha, const float *restrict x, int len) {
    int k = 0;
    avs_f64x2 va = {alpha, alpha};
    for (; k + 2 <= len; k += 2) {
        avs_f64x2 yv;
        memcpy(&yv, y + k, sizeof yv);
        yv -= va * avs_load_f32x2(x + k);
        memcpy(y + k, &yv, sizeof yv);
    }
    for (; k < len; k++) y[k] -= alpha * x[k];
}

int avi_gdelta_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    avi_arena a = avi_arena_over(work);
    dbufs b;
    dlayout(&b, &a, p, n, d, 1, AVI_GATED_MATRIX);
    avi_gated_qk(b.Qt, b.Kt, Q, K, n, d, p);
    avi_gates G = avi_gates_of(p);
    avi_gprod_prepare(&b.k, b.Qt, b.Kt, b.Kt, &G, 0, n, d);
    for (int I = 0, i0 = 0; i0 < n; I++, i0 += AVI_GPROD_SB) {
        const int i1 = i0 + AVI_GPROD_SB < n ? i0 + AVI_GPROD_SB : n;
        avi_gprod_rows(&b.k, I, b.Aq, (size_t)n, b.Ak, (size_t)n);
        for (int i = i0; i < i1; i++) { /* A_kk's rows of this strip first: the solves below read them */
            const double *r = b.Ak + (size_t)(i - i0) * n;
            float *l = b.L + (size_t)i * n;
            for (int j = 0; j < i; j++) l[j] = (float)r[j];
        }
        for (int i = i0; i < i1; i++) {
            double *x = b.Aq + (size_t)(i - i0) * n; /* a_i, then x, then m_i in place */
            for (int l = i; l > 0; l--) {
                x[l] *= avi_beta(&G, l);
                if (x[l] != 0) axpy_neg_fd(x, x[l], b.L + (size_t)l * n, l);
            }
            x[0] *= avi_beta(&G, 0);
            float *m = M + (size_t)i * n;
            for (int j = 0; j <= i; j++) m[j] = (float)x[j];
            if (i + 1 < n) memset(m + i + 1, 0, sizeof(float) * (size_t)(n - i - 1));
        }
    }
    return AV_OK;
}

static int chunkwise(float *O, const float *V, int n, int d, int dv, const av_params *p, dbufs *b) {
    const int C = avi_chunk_of(p, n), gc = avi_gate_channels(p);
    avi_gates G = avi_gates_of(p);
    double *S = b->S, *e = b->e, *f = b->f;
    memset(S, 0, sizeof(double) * (size_t)d * dv);
    for (int c0 = 0; c0 < n; c0 += C) {
        const int L = n - c0 < C ? n - c0 : C;
        avi_gprod_prepare(&b->k, b->Qt, b->Kt, b->Kt, &G, c0, L, d);
        for (int I = 0; I * AVI_GPROD_SB < L; I++) {
            size_t off = (size_t)I * AVI_GPROD_SB * L;
            avi_gprod_rows(&b->k, I, b->Aq + off, (size_t)L, b->Ak + off, (size_t)L);
        }
        const double *gl = b->k.gl;
        /* U by forward substitution: u_a = β_a (v_a − (k̃_a ⊙ e^{b_a})ᵀS − Σ_{s<a} (A_kk)_as u_s) */
        for (int c = 0; c < d; c++) e[c] = 0;
        for (int t = 0; t < L; t++) {
            for (int c = 0; c < gc; c++) e[c] += gl[(size_t)t * gc + c];
            avi_exp_factors(f, e, gc, d);
            const float *k = b->Kt + (size_t)(c0 + t) * d, *v = V + (size_t)(c0 + t) * dv;
            double *u = b->U + (size_t)t * dv;
            for (int x = 0; x < dv; x++) u[x] = v[x];
            for (int c = 0; c < d; c++) {
                double kc = k[c] * f[c];
                if (kc != 0) avs_axpy_neg_f64(u, kc, S + (size_t)c * dv, dv);
            }
            const double *Ak = b->Ak + (size_t)t * L;
            for (int s = 0; s < t; s++)
                if (Ak[s] != 0) avs_axpy_neg_f64(u, Ak[s], b->U + (size_t)s * dv, dv);
            double beta = avi_beta(&G, c0 + t);
            for (int x = 0; x < dv; x++) u[x] *= beta;
        }
        /* outputs: o_a = (q̃_a ⊙ e^{b_a})ᵀS + Σ_{s≤a} (A_qk)_as u_s, 64 columns at a time (an accumulator on the stack) */
        for (int c = 0; c < d; c++) e[c] = 0;
        for (int t = 0; t < L; t++) {
            for (int c = 0; c < gc; c++) e[c] += gl[(size_t)t * gc + c];
            avi_exp_factors(f, e, gc, d);
            const float *q = b->Qt + (size_t)(c0 + t) * d;
            float *out = O + (size_t)(c0 + t) * dv;
            double acc[64];
            for (int x0 = 0; x0 < dv; x0 += 64) {
                const int w = dv - x0 < 64 ? dv - x0 : 64;
                for (int x = 0; x < w; x++) acc[x] = 0;
                for (int c = 0; c < d; c++) {
                    double qc = q[c] * f[c];
                    if (qc != 0) avs_axpy_neg_f64(acc, -qc, S + (size_t)c * dv + x0, w);
                }
                const double *Aq = b->Aq + (size_t)t * L;
                for (int s = 0; s <= t; s++)
                    if (Aq[s] != 0) avs_axpy_neg_f64(acc, -Aq[s], b->U + (size_t)s * dv + x0, w);
                for (int x = 0; x < w; x++) out[x0 + x] = (float)acc[x];
            }
        }
        /* S ← Diag(e^{b_{L−1}}) S + Σ_s (k̃_s ⊙ e^{r_s}) u_sᵀ; e holds b_{L−1} for every channel (gc = 1: e[0]) */
        for (int c = 0; c < d; c++) { /* f holds e^{b_{L−1}} */
            double fc = f[c], *s = S + (size_t)c * dv;
            if (fc != 1)
                for (int x = 0; x < dv; x++) s[x] *= fc;
        }
        for (int c = 0; c < d; c++) e[c] = 0;
        for (int s = L - 1; s >= 0; s--) {
            const float *k = b->Kt + (size_t)(c0 + s) * d;
            const double *u = b->U + (size_t)s * dv;
            avi_exp_factors(f, e, gc, d);
            for (int c = 0; c < d; c++) {
                double kc = k[c] * f[c];
                if (kc != 0) avs_axpy_neg_f64(S + (size_t)c * dv, -kc, u, dv);
            }
            for (int c = 0; c < gc; c++) e[c] += gl[(size_t)s * gc + c];
        }
    }
    return AV_OK;
}

int avi_gdelta_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                   const av_params *p, void *work, int path) {
    if (path == AVI_GATED_RECURRENT) return avi_gated_scan(O, Q, K, V, n, d, dv, p, work);
    avi_arena a = avi_arena_over(work);
    dbufs b;
    dlayout(&b, &a, p, n, d, dv, path);
    avi_gated_qk(b.Qt, b.Kt, Q, K, n, d, p);
    return chunkwise(O, V, n, d, dv, p, &b);
}
