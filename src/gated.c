/* gated.c: what the gated families share (docs/gated.md): their gates resolved from av_params, the checks of
 * the gate inputs, q̃ and k̃, the one-token step of the state families and its scan (their recurrent form).
 * It calls none of the families' files (they call it): the dispatch and av_gated_step are gated_dispatch.c.
 * The families' forms: gated_linear.c, gated_delta.c, dplr.c, fox.c.
 */
#include <math.h>
#include <string.h>

#include "gated.h"
#include "simd.h"

int avi_is_gated(int variant) { return variant >= 0 && variant < AV_VARIANT_COUNT && av_variant_info(variant)->cls == AV_CLASS_GATED; }

int avi_gated_per_channel(int variant) { return variant == AV_GLA || variant == AV_KDA || variant == AV_DPLR; }

avi_gates avi_gates_of(const av_params *p) {
    avi_gates G = {0};
    G.g = p->gates;
    G.gc = p->gates ? p->gate_channels : 1;
    G.g0 = p->decay < 1 ? log(p->decay) : 0.0;
    G.beta = p->betas;
    G.beta0 = p->beta;
    G.a = p->dplr_a;
    G.b = p->dplr_b;
    return G;
}

/* Every array the family reads, against n and d: shapes first, then values (a non-finite entry is
 * AV_ERR_NONFINITE, as for Q and K; a finite one out of range AV_ERR_GATES). */
int avi_gated_check(const av_params *p, int n, int d) {
    int v = p->variant;
    if (p->gates || p->betas || p->dplr_a || p->dplr_b)
        if (p->gates_n != n) return AV_ERR_GATES;
    if (p->gates) {
        int gc = p->gate_channels;
        if (gc != 1 && !(gc == d && avi_gated_per_channel(v))) return AV_ERR_GATES;
        size_t count = (size_t)n * gc;
        for (size_t e = 0; e < count; e++) {
            if (!isfinite(p->gates[e])) return AV_ERR_NONFINITE;
            if (p->gates[e] > 0) return AV_ERR_GATES;
        }
    }
    if (p->betas && (v == AV_GDN || v == AV_KDA))
        for (int t = 0; t < n; t++) {
            if (!isfinite(p->betas[t])) return AV_ERR_NONFINITE;
            if (!(p->betas[t] > 0 && p->betas[t] <= 2)) return AV_ERR_GATES;
        }
    if (v == AV_DPLR && (!p->dplr_a) != (!p->dplr_b)) return AV_ERR_GATES;
    if (v == AV_DPLR && p->dplr_a)
        for (size_t e = 0; e < (size_t)n * d; e++)
            if (!isfinite(p->dplr_a[e]) || !isfinite(p->dplr_b[e])) return AV_ERR_NONFINITE;
    return AV_OK;
}

void avi_gated_qk(float *Qt, float *Kt, const float *Q, const float *K, int n, int d, const av_params *p) {
    for (int i = 0; i < n; i++) {
        const float *q = Q + (size_t)i * d, *k = K + (size_t)i * d;
        double fq = p->scale, fk = 1.0;
        if (p->qk_l2norm > 0) { /* fla's l2norm: x/√(Σx² + 1e-6), in float64 here */
            double sq = 0, sk = 0;
            for (int c = 0; c < d; c++) {
                sq += (double)q[c] * q[c];
                sk += (double)k[c] * k[c];
            }
            fq /= sqrt(sq + 1e-6);
            fk /= sqrt(sk + 1e-6);
        }
        for (int c = 0; c < d; c++) {
            Qt[(size_t)i * d + c] = (float)(q[c] * fq);
            Kt[(size_t)i * d + c] = (float)(k[c] * fk);
        }
    }
}

int avi_gated_delegate(const av_params *p) {
    if (p->gates || p->qk_l2norm > 0) return -1;
    if (p->variant == AV_SIMPLE_GLA) return AV_RETENTION;
    if (p->variant == AV_FOX) return AV_SOFTMAX;
    return -1;
}

// ----------------------------------------------------------------------------------------------------
// one token of a state family (docs/gated.md's recurrences), float64 state S (d×dv)

void avi_gated_step_state(float *o, double *S, const float *q, const float *k, double fq, double fk, const float *v,
                          const float *g, int gc, double g0, double beta, const float *a, const float *b, int d,
                          int dv, int variant) {
    enum { CB = 64 }; /* every column of S evolves on its own: a block of columns at a time, scratch on the stack */
    const int delta = variant == AV_GDN || variant == AV_KDA, low_rank = variant == AV_DPLR && a && b;
    const double a0 = exp(g0);
    double x[CB], u[CB];
    for (int e0 = 0; e0 < dv; e0 += CB) {
        const int w = dv - e0 < CB ? dv - e0 : CB;
        if (low_rank) { /* x = S_{t−1}ᵀa, read BEFORE the decay */
            for (int e = 0; e < w; e++) x[e] = 0;
            for (int c = 0; c < d; c++) {
                double ac = a[c];
                const double *s = S + (size_t)c * dv + e0;
                if (ac != 0)
                    for (int e = 0; e < w; e++) x[e] += ac * s[e];
            }
        }
        for (int c = 0; c < d; c++) { /* S ← Diag(α)S (+ b xᵀ) */
            double f = g ? exp((double)g[gc > 1 ? c : 0]) : a0, *s = S + (size_t)c * dv + e0;
            if (f != 1)
                for (int e = 0; e < w; e++) s[e] *= f;
            if (low_rank && b[c] != 0)
                for (int e = 0; e < w; e++) s[e] += (double)b[c] * x[e];
        }
        if (delta) { /* u = β(v − S'ᵀk̃) */
            for (int e = 0; e < w; e++) u[e] = v[e0 + e];
            for (int c = 0; c < d; c++) {
                double kc = (float)(k[c] * fk);
                const double *s = S + (size_t)c * dv + e0;
                if (kc != 0)
                    for (int e = 0; e < w; e++) u[e] -= kc * s[e];
            }
            for (int e = 0; e < w; e++) u[e] *= beta;
        } else {
            for (int e = 0; e < w; e++) u[e] = v[e0 + e];
        }
        for (int c = 0; c < d; c++) { /* S += k̃ uᵀ */
            double kc = (float)(k[c] * fk), *s = S + (size_t)c * dv + e0;
            if (kc != 0)
                for (int e = 0; e < w; e++) s[e] += kc * u[e];
        }
        for (int e = 0; e < w; e++) x[e] = 0; /* o = Sᵀq̃ */
        for (int c = 0; c < d; c++) {
            double qc = (float)(q[c] * fq);
            const double *s = S + (size_t)c * dv + e0;
            if (qc != 0)
                for (int e = 0; e < w; e++) x[e] += qc * s[e];
        }
        for (int e = 0; e < w; e++) o[e0 + e] = (float)x[e];
    }
}

static void scan_layout(avi_arena *a, float **Qt, float **Kt, double **S, int n, int d, int dv) {
    *Qt = avi_take(a, 4u * (uint64_t)n * d);
    *Kt = avi_take(a, 4u * (uint64_t)n * d);
    *S = avi_take(a, 8u * (uint64_t)d * dv);
}

uint64_t avi_gated_scan_need(int n, int d, int dv) {
    avi_arena a = avi_arena_count();
    float *Qt, *Kt;
    double *S;
    scan_layout(&a, &Qt, &Kt, &S, n, d, dv);
    return a.used;
}

int avi_gated_scan(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                   void *work) {
    avi_arena a = avi_arena_over(work);
    float *Qt, *Kt;
    double *S;
    scan_layout(&a, &Qt, &Kt, &S, n, d, dv);
    avi_gated_qk(Qt, Kt, Q, K, n, d, p);
    avi_gates G = avi_gates_of(p);
    memset(S, 0, sizeof(double) * (size_t)d * dv);
    for (int t = 0; t < n; t++) {
        const size_t td = (size_t)t * d;
        avi_gated_step_state(O + (size_t)t * dv, S, Qt + td, Kt + td, 1.0, 1.0, V + (size_t)t * dv,
                             G.g ? G.g + (size_t)t * G.gc : NULL, G.gc, G.g0, avi_beta(&G, t), G.a ? G.a + td : NULL,
                             G.b ? G.b + td : NULL, d, dv, p->variant);
    }
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// the gated causal products of a range (gated.h: avi_gprod)

void avi_gprod_take(avi_gprod *k, avi_arena *a, int len_max, int d, int gc, int two) {
    memset(k, 0, sizeof *k);
    uint64_t nb = ((uint64_t)len_max + AVI_GPROD_SB - 1) / AVI_GPROD_SB, ld = (uint64_t)len_max * d;
    k->gl = avi_take(a, 8u * (uint64_t)len_max * gc);
    k->Xa = avi_take(a, 8u * ld);
    k->X2a = two ? avi_take(a, 8u * ld) : NULL;
    k->Ye = avi_take(a, 8u * ld);
    k->T = avi_take(a, 8u * nb * gc);
    k->mid = avi_take(a, 8u * (uint64_t)gc);
    k->fm = avi_take(a, 8u * (uint64_t)gc);
    k->w = avi_take(a, 8u * (uint64_t)d);
}

void avi_gprod_prepare(avi_gprod *k, const float *X, const float *X2, const float *Y, const avi_gates *G, int t0,
                       int len, int d) {
    const int gc = G->g ? G->gc : 1;
    k->len = len, k->d = d, k->gc = gc;
    k->X = X + (size_t)t0 * d, k->X2 = X2 ? X2 + (size_t)t0 * d : NULL, k->Y = Y + (size_t)t0 * d;
    for (int t = 0; t < len; t++)
        for (int c = 0; c < gc; c++) k->gl[(size_t)t * gc + c] = avi_gate(G, t0 + t, c);
    double *cum = k->mid; /* gc sums: scratch here */
    for (int s0 = 0, s = 0; s0 < len; s0 += AVI_GPROD_SB, s++) {
        int s1 = s0 + AVI_GPROD_SB < len ? s0 + AVI_GPROD_SB : len;
        for (int c = 0; c < gc; c++) cum[c] = 0;
        for (int t = s0; t < s1; t++) { /* x_t·exp(Σ_{l=s0..t} g) */
            const double *g = k->gl + (size_t)t * gc;
            for (int c = 0; c < gc; c++) cum[c] += g[c];
            const float *x = k->X + (size_t)t * d, *x2 = k->X2 ? k->X2 + (size_t)t * d : NULL;
            double *xa = k->Xa + (size_t)t * d, *x2a = x2 ? k->X2a + (size_t)t * d : NULL, f = gc == 1 ? exp(cum[0]) : 0;
            for (int c = 0; c < d; c++) {
                double fc = gc == 1 ? f : exp(cum[c]);
                xa[c] = x[c] * fc;
                if (x2) x2a[c] = x2[c] * fc;
            }
        }
        for (int c = 0; c < gc; c++) k->T[(size_t)s * gc + c] = cum[c], cum[c] = 0;
        for (int t = s1 - 1; t >= s0; t--) { /* y_t·exp(Σ_{l=t+1..s1−1} g) */
            const float *y = k->Y + (size_t)t * d;
            double *ye = k->Ye + (size_t)t * d, f = gc == 1 ? exp(cum[0]) : 0;
            for (int c = 0; c < d; c++) ye[c] = y[c] * (gc == 1 ? f : exp(cum[c]));
            const double *g = k->gl + (size_t)t * gc;
            for (int c = 0; c < gc; c++) cum[c] += g[c];
        }
    }
}

void avi_gprod_rows(const avi_gprod *k, int I, double *A, size_t lda, double *A2, size_t lda2) {
    const int d = k->d, gc = k->gc, i0 = I * AVI_GPROD_SB, i1 = i0 + AVI_GPROD_SB < k->len ? i0 + AVI_GPROD_SB : k->len;
    double *mid = k->mid, *fm = k->fm, *w = k->w;
    /* the sub-blocks before I, nearest first: mid sums the gates of the sub-blocks strictly between */
    for (int c = 0; c < gc; c++) mid[c] = 0;
    for (int J = I - 1; J >= 0; J--) {
        if (J < I - 1)
            for (int c = 0; c < gc; c++) mid[c] += k->T[(size_t)(J + 1) * gc + c];
        const int j0 = J * AVI_GPROD_SB;
        for (int c = 0; c < gc; c++) fm[c] = exp(mid[c]); /* the gap's factors, once per pair of sub-blocks */
        const double f = fm[0];
        for (int b = j0; b < j0 + AVI_GPROD_SB; b++) {
            const double *ye = k->Ye + (size_t)b * d, *y = ye;
            if (gc > 1) { /* y_b scaled per channel by the gap's factors */
                for (int c = 0; c < d; c++) w[c] = ye[c] * fm[c];
                y = w;
            }
            for (int a = i0; a < i1; a++) {
                double s = avs_dot_f64(k->Xa + (size_t)a * d, y, d);
                A[(size_t)(a - i0) * lda + b] = gc > 1 ? s : s * f;
                if (A2) {
                    double s2 = avs_dot_f64(k->X2a + (size_t)a * d, y, d);
                    A2[(size_t)(a - i0) * lda2 + b] = gc > 1 ? s2 : s2 * f;
                }
            }
        }
    }
    /* inside the sub-block: each pair's exponent Σ_{l=b+1..a} g summed from the diagonal down (w: per channel) */
    for (int a = i0; a < i1; a++) {
        const float *x = k->X + (size_t)a * d, *x2 = k->X2 ? k->X2 + (size_t)a * d : NULL;
        double *ra = A + (size_t)(a - i0) * lda, *r2 = A2 ? A2 + (size_t)(a - i0) * lda2 : NULL;
        for (int c = 0; c < gc; c++) w[c] = 0;
        for (int b = a; b >= i0; b--) {
            const float *y = k->Y + (size_t)b * d;
            double s = 0, s2 = 0;
            if (gc == 1) {
                for (int c = 0; c < d; c++) {
                    s += (double)x[c] * y[c];
                    if (x2) s2 += (double)x2[c] * y[c];
                }
                double f = exp(w[0]);
                s *= f, s2 *= f;
            } else {
                for (int c = 0; c < d; c++) {
                    double yc = y[c] * exp(w[c]);
                    s += x[c] * yc;
                    if (x2) s2 += x2[c] * yc;
                }
            }
            ra[b] = s;
            if (r2 && b < a) r2[b] = s2;
            const double *g = k->gl + (size_t)b * gc; /* seg(a, b − 1) = seg(a, b) + g_b */
            for (int c = 0; c < gc; c++) w[c] += g[c];
        }
    }
}
