/* gated_dispatch.c: the gated families' forms dispatched to each family's file (attention.c and linear.c call
 * these), and av_gated_step, the public one-token step of the state families. Apart from gated.c because the
 * families' files call gated.c's shared parts, and util.c calls its checks: a file that both dispatched to the
 * families and was called by them would be a cycle (docs/architecture.md).
 */
#include <math.h>
#include <string.h>

#include "gated.h"

// ----------------------------------------------------------------------------------------------------
// the dispatch: one family per file

uint64_t avi_gated_need(const av_params *p, int n, int d, int dv, int path) {
    switch (p->variant) {
    case AV_SIMPLE_GLA:
    case AV_GLA: return avi_gla_need(p, n, d, dv, path);
    case AV_GDN:
    case AV_KDA: return avi_gdelta_need(p, n, d, dv, path);
    case AV_DPLR: return avi_dplr_need(p, n, d, dv, path);
    default: return avi_fox_need(p, n, d, dv, path);
    }
}

int avi_gated_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    switch (p->variant) {
    case AV_SIMPLE_GLA:
    case AV_GLA: return avi_gla_matrix(M, Q, K, n, d, p, work);
    case AV_GDN:
    case AV_KDA: return avi_gdelta_matrix(M, Q, K, n, d, p, work);
    case AV_DPLR: return avi_dplr_matrix(M, Q, K, n, d, p, work);
    default: return avi_fox_matrix(M, Q, K, n, d, p, work);
    }
}

int avi_gated_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                  void *work, int path) {
    switch (p->variant) {
    case AV_SIMPLE_GLA:
    case AV_GLA: return avi_gla_run(O, Q, K, V, n, d, dv, p, work, path);
    case AV_GDN:
    case AV_KDA: return avi_gdelta_run(O, Q, K, V, n, d, dv, p, work, path);
    case AV_DPLR: return avi_dplr_run(O, Q, K, V, n, d, dv, p, work, path);
    default: return avi_fox_run(O, Q, K, V, n, d, dv, p, work, path);
    }
}

// ----------------------------------------------------------------------------------------------------
// av_gated_step

static int all_finite(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

int av_gated_step(float *o, double *S, const float *q, const float *k, const float *v, const float *g, double beta,
                  const float *a, const float *b, int d, int dv, const av_params *prm) {
    if (!o || !S || !q || !k || !v || !prm) return AV_ERR_NULL;
    if (d < 1 || d > AV_MAX_D || dv < 1 || dv > AV_MAX_D) return AV_ERR_SIZE;
    if (prm->variant < 0 || prm->variant >= AV_VARIANT_COUNT) return AV_ERR_VARIANT;
    if (!avi_is_gated(prm->variant) || prm->variant == AV_FOX) return AV_ERR_NO_LINEAR; /* fox: a KV cache */
    av_params p = *prm; /* the step's own inputs stand for the arrays: those of prm are not read */
    p.gates = p.betas = p.dplr_a = p.dplr_b = NULL;
    p.gates_n = 0;
    p.causal = 1;
    int st = av_params_resolve(&p, &p, 1, d);
    if (st != AV_OK) return st;
    const int gc = g && prm->gate_channels > 1 ? prm->gate_channels : 1, v_ = p.variant;
    if (gc != 1 && !(gc == d && avi_gated_per_channel(v_))) return AV_ERR_GATES;
    if (v_ == AV_DPLR && (!a) != (!b)) return AV_ERR_GATES;
    if (!all_finite(q, (size_t)d) || !all_finite(k, (size_t)d) || !all_finite(v, (size_t)dv)) return AV_ERR_NONFINITE;
    const int delta = v_ == AV_GDN || v_ == AV_KDA; /* β is read by these only */
    if ((g && !all_finite(g, (size_t)gc)) || (delta && !isfinite(beta))) return AV_ERR_NONFINITE;
    if (v_ == AV_DPLR && a && (!all_finite(a, (size_t)d) || !all_finite(b, (size_t)d))) return AV_ERR_NONFINITE;
    for (int c = 0; g && c < gc; c++)
        if (g[c] > 0) return AV_ERR_GATES;
    if (delta && !(beta > 0 && beta <= 2)) return AV_ERR_GATES;
    double fq = p.scale, fk = 1.0; /* avi_gated_qk's factors, for this row */
    if (p.qk_l2norm > 0) {
        double sq = 0, sk = 0;
        for (int c = 0; c < d; c++) {
            sq += (double)q[c] * q[c];
            sk += (double)k[c] * k[c];
        }
        fq /= sqrt(sq + 1e-6);
        fk /= sqrt(sk + 1e-6);
    }
    avi_gated_step_state(o, S, q, k, fq, fk, v, g, gc, log(p.decay), beta, a, b, d, dv, v_);
    if (!all_finite(o, (size_t)dv)) return AV_WARN_PRODUCT_OVERFLOW;
    for (size_t e = 0; e < (size_t)d * dv; e++)
        if (!isfinite(S[e])) return AV_WARN_PRODUCT_OVERFLOW;
    return AV_OK;
}
