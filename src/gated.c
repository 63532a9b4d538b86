/* gated.c: what the gated families share (docs/gated.md): their gates resolved from av_params, the checks of
 * the gate inputs, q̃ and k̃. The families' forms: gated_linear.c, gated_delta.c, dplr.c, fox.c.
 */
#include <math.h>
#include <string.h>

#include "gated.h"

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
