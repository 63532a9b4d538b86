/* gated_linear.c: simple_gla (one log-gate per token) and gla (one per token and channel), docs/gated.md:
 *   S_t = Diag(α_t) S_{t−1} + k̃_t v_tᵀ,  o_t = S_tᵀ q̃_t,  M_ij = Σ_c q̃_ic k̃_jc Γ_ijc (j ≤ i),
 * Γ_ijc = exp(Σ_{l=j+1..i} g_lc). Three forms:
 *   matrix     M by gated.c's products (avi_gprod) over the whole sequence, a strip of rows at a time;
 *   recurrent  gated.c's scan (float64 state, token by token);
 *   chunkwise  chunks of C tokens [c0, c0 + L), with b_a = Σ_{l=c0..c0+a} g (the chunk's own sums) and
 *              r_a = Σ_{l=c0+a+1..c0+L−1} g:  o_a = (q̃_a ⊙ e^{b_a})ᵀS + Σ_{b≤a} A_ab v_b  (A: avi_gprod of the chunk),
 *              S ← Diag(e^{b_{L−1}}) S + Σ_b (k̃_b ⊙ e^{r_b}) v_bᵀ.
 * A constant simple_gla without qk_l2norm never gets here: it is retention (avi_gated_delegate).
 * Sums in float64; every exponent is a sum of gates (≤ 0), never a difference of cumulative sums.
 */
#include <math.h>
#include <string.h>

#include "gated.h"
#include "simd.h"

typedef struct lbufs {
    float *Qt, *Kt;     /* n×d: q̃, k̃ */
    avi_gprod k;        /* the products of a range (the whole sequence, or a chunk) */
    double *A;          /* a strip SB×n (matrix), or the chunk's C×C */
    double *S, *o, *e;  /* state d×dv, an output row dv, the chunk's exponents d (chunkwise) */
    double *f;          /* e^e, d (chunkwise) */
} lbufs;


/* One layout per path, counted (arena in count-only mode) and carved by the same code. */
static void llayout(lbufs *b, avi_arena *a, const av_params *p, int n, int d, int dv, int path) {
    memset(b, 0, sizeof *b);
    if (path == AVI_GATED_RECURRENT) { /* the scan lays out its own */
        avi_take(a, avi_gated_scan_need(n, d, dv));
        return;
    }
    b->Qt = avi_take(a, 4u * (uint64_t)n * d);
    b->Kt = avi_take(a, 4u * (uint64_t)n * d);
    int len = path == AVI_GATED_MATRIX ? n : avi_chunk_of(p, n), gc = avi_gate_channels(p);
    avi_gprod_take(&b->k, a, len, d, gc, 0);
    if (path == AVI_GATED_MATRIX) {
        b->A = avi_take(a, 8u * AVI_GPROD_SB * (uint64_t)n);
        return;
    }
    b->A = avi_take(a, 8u * (uint64_t)len * len);
    b->S = avi_take(a, 8u * (uint64_t)d * dv);
    b->o = avi_take(a, 8u * (uint64_t)dv);
    b->e = avi_take(a, 8u * (uint64_t)d);
    b->f = avi_take(a, 8u * (uint64_t)d);
}

uint64_t avi_gla_need(const av_params *p, int n, int d, int dv, int path) {
    avi_arena a = avi_arena_count();
    lbufs b;
    llayout(&b, &a, p, n, d, dv, path);
    return a.used;
}

int avi_gla_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    avi_arena a = avi_arena_over(work);
    lbufs b;
    llayout(&b, &a, p, n, d, 1, AVI_GATED_MATRIX);
    avi_gated_qk(b.Qt, b.Kt, Q, K, n, d, p);
    avi_gates G = avi_gates_of(p);
    avi_gprod_prepare(&b.k, b.Qt, NULL, b.Kt, &G, 0, n, d);
    for (int I = 0, i0 = 0; i0 < n; I++, i0 += AVI_GPROD_SB) {
        avi_gprod_rows(&b.k, I, b.A, (size_t)n, NULL, 0);
        for (int i = i0; i < n && i < i0 + AVI_GPROD_SB; i++) {
            const double *r = b.A + (size_t)(i - i0) * n;
            float *m = M + (size_t)i * n;
            for (int j = 0; j <= i; j++) m[j] = (float)r[j];
            if (i + 1 < n) memset(m + i + 1, 0, sizeof(float) * (size_t)(n - i - 1));
        }
    }
    return AV_OK;
}

static int chunkwise(float *O, const float *V, int n, int d, int dv, const av_params *p, lbufs *b) {
    const int C = avi_chunk_of(p, n), gc = avi_gate_channels(p);
    avi_gates G = avi_gates_of(p);
    memset(b->S, 0, sizeof(double) * (size_t)d * dv);
    for (int c0 = 0; c0 < n; c0 += C) {
        const int L = n - c0 < C ? n - c0 : C;
        avi_gprod_prepare(&b->k, b->Qt, NULL, b->Kt, &G, c0, L, d);
        for (int I = 0; I * AVI_GPROD_SB < L; I++)
            avi_gprod_rows(&b->k, I, b->A + (size_t)I * AVI_GPROD_SB * L, (size_t)L, NULL, 0);
        const double *gl = b->k.gl;
        double *e = b->e;
        for (int c = 0; c < d; c++) e[c] = 0;
        for (int t = 0; t < L; t++) { /* o_t = (q̃_t ⊙ e^{b_t})ᵀS + Σ_{s≤t} A_ts v_s */
            for (int c = 0; c < gc; c++) e[c] += gl[(size_t)t * gc + c];
            avi_exp_factors(b->f, e, gc, d);
            double *o = b->o;
            for (int x = 0; x < dv; x++) o[x] = 0;
            for (int c = 0; c < d; c++) {
                double qc = b->Qt[(size_t)(c0 + t) * d + c] * b->f[c];
                if (qc != 0) avs_axpy_neg_f64(o, -qc, b->S + (size_t)c * dv, dv);
            }
            const double *A = b->A + (size_t)t * L;
            for (int s = 0; s <= t; s++) {
                const float *v = V + (size_t)(c0 + s) * dv;
                double w = A[s];
                for (int x = 0; x < dv; x++) o[x] += w * v[x];
            }
            float *out = O + (size_t)(c0 + t) * dv;
            for (int x = 0; x < dv; x++) out[x] = (float)o[x];
        }
        /* S ← Diag(e^{b_{L−1}}) S + Σ_s (k̃_s ⊙ e^{r_s}) v_sᵀ; b->f holds e^{b_{L−1}} */
        for (int c = 0; c < d; c++) {
            double f = b->f[c], *s = b->S + (size_t)c * dv;
            if (f != 1)
                for (int x = 0; x < dv; x++) s[x] *= f;
        }
        for (int c = 0; c < d; c++) e[c] = 0; /* r_s = Σ_{l=s+1..L−1} g */
        for (int s = L - 1; s >= 0; s--) {
            const float *k = b->Kt + (size_t)(c0 + s) * d, *v = V + (size_t)(c0 + s) * dv;
            avi_exp_factors(b->f, e, gc, d);
            for (int c = 0; c < d; c++) {
                double kc = k[c] * b->f[c];
                if (kc == 0) continue;
                double *st = b->S + (size_t)c * dv;
                for (int x = 0; x < dv; x++) st[x] += kc * v[x];
            }
            for (int c = 0; c < gc; c++) e[c] += gl[(size_t)s * gc + c];
        }
    }
    return AV_OK;
}

int avi_gla_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                void *work, int path) {
    if (path == AVI_GATED_RECURRENT) return avi_gated_scan(O, Q, K, V, n, d, dv, p, work);
    avi_arena a = avi_arena_over(work);
    lbufs b;
    llayout(&b, &a, p, n, d, dv, path);
    avi_gated_qk(b.Qt, b.Kt, Q, K, n, d, p);
    return chunkwise(O, V, n, d, dv, p, &b);
}
