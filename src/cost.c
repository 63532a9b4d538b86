/* cost.c: what a variant's paths are predicted to cost, from its knobs and sizes alone (no data): the
 * multiply-adds and intermediate bytes of each path (av_cost_path, av_cost), and the semiseparable rank's
 * structural ceiling (av_semiseparable_ceiling). docs/readouts.md states both; tests check them against
 * the paths themselves.
 */
#include "classes.h"
#include "gated.h"
#include "internal.h"

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
//
// The gated families (docs/gated.md; q̃, k̃: F = n·d, 4·n·d with qk_l2norm; a gate array adds nothing counted).
// A constant case that runs as another variant (avi_gated_delegate: simple_gla → retention, fox → softmax with
// its decay) costs what that variant costs. t = 2 for simple_gla and gla (decay, write), 3 for gdn and kda (and
// u = β(v − Sᵀk)), 4 for dplr (and x = Sᵀa); the readout adds one n·d·dv. Left out: the exponentials of
// per-channel gates (about 8.5·n·d per product matrix: gated.c's sub-blocks of 16), small beside the rest.
//   quadratic  simple_gla, gla             F + n²·d + n²·dv                               bytes 4·n²
//              gdn, kda                     F + n²·d + n²·d/2 + n³/6 + n²·dv               bytes 8·n²
//              dplr (a, b given; else gla)  F + 4·n²·d + n³/3 + n²·dv                      bytes 12·n² (M, A_ak, A_ab)
//              fox                          as softmax: n²·d + n²·dv                       bytes 4·n²
//   linear     the chunkwise form (fox: none)
//   recurrent  state families               F + (t + 1)·n·d·dv                             bytes 4·d·dv
//              fox (a cache, the mean n/2)  n·(n/2)·(d + dv)                               bytes 4·n·(d + dv)
//   chunkwise  simple_gla, gla              F + n·C·(d + dv) + 2·n·d·dv                    bytes 4·(d·dv + C²)
//              gdn, kda (U by substitution) F + 2·n·C·(d + dv) + 3·n·d·dv                  bytes 4·(d·dv + 2·C² + C·dv)
//              dplr (a, b given; else gla)  F + n·C·(4·d + 2·dv) + 4·n·d·dv                bytes 4·(d·dv + 4·C² + 2·C·dv + 4·C·d)
//                (the four A's; X = (I − A_ab)⁻¹(Â·S + A_ak·V) and O = Q̂·S + A_qk·V + A_qb·X, each C·dv + d·dv a
//                token; the state's two writes 2·d·dv)
//              fox (flash tiling)           n·n·(d + dv)                                   bytes 4·(C² + C·dv)
//
// The hybrid (lolcats; w = min(W, n) window keys, W 0 meaning n; c the columns of W_h, r = 2·c; F = hedgehog's):
//   quadratic  F + n·w·d + n·(n − w)·r + n²·dv (window logits, then φ products for the older keys)   bytes 4·n²
//   linear     the recurrent scan
//   recurrent  F + n·w·(d + dv) + 2·n·r·dv (cache, then the state's write and read)   bytes 4·(w·(d + dv) + r·dv + r)

/* out[0..1] of one path of a gated family (the table above), knobs resolved and not delegated. */
static void gated_cost(double *out, int path, const av_params *p, double N, double D, double DV, double C) {
    int v = p->variant == AV_DPLR && !p->dplr_a ? AV_GLA : p->variant, delta = v == AV_GDN || v == AV_KDA;
    double F = (p->qk_l2norm > 0 ? 4 : 1) * N * D, t = v == AV_DPLR ? 4 : delta ? 3 : 2, nn = N * N;
    if (v == AV_FOX) {
        if (path == AV_PATH_QUADRATIC) out[0] = nn * (D + DV), out[1] = 4 * nn;
        if (path == AV_PATH_RECURRENT) out[0] = N * (N / 2) * (D + DV), out[1] = 4 * N * (D + DV);
        if (path == AV_PATH_CHUNKWISE) out[0] = nn * (D + DV), out[1] = 4 * (C * C + C * DV);
        return;
    }
    switch (path) {
    case AV_PATH_QUADRATIC:
        out[0] = F + nn * D + nn * DV, out[1] = 4 * nn;
        if (delta) out[0] += nn * D / 2 + nn * N / 6, out[1] = 8 * nn;
        if (v == AV_DPLR) out[0] = F + 4 * nn * D + nn * N / 3 + nn * DV, out[1] = 12 * nn;
        return;
    case AV_PATH_RECURRENT: out[0] = F + (t + 1) * N * D * DV, out[1] = 4 * D * DV; return;
    default: /* chunkwise, and the linear path that runs it */
        out[0] = F + N * C * (D + DV) + 2 * N * D * DV, out[1] = 4 * (D * DV + C * C);
        if (delta) out[0] = F + 2 * N * C * (D + DV) + 3 * N * D * DV, out[1] = 4 * (D * DV + 2 * C * C + C * DV);
        if (v == AV_DPLR)
            out[0] = F + N * C * (4 * D + 2 * DV) + 4 * N * D * DV, out[1] = 4 * (D * DV + 4 * C * C + 2 * C * DV + 4 * C * D);
        return;
    }
}

static int path_cost(double *out, int path, const av_params *p, int n, int d, int dv) {
    double N = n, D = d, DV = dv, nn = N * N;
    out[0] = out[1] = -1;
    if (path < AV_PATH_QUADRATIC || path > AV_PATH_CHUNKWISE) return AV_ERR_VARIANT;
    if (is_gated(p)) {
        int v = avi_gated_delegate(p);
        if (v >= 0) { /* the constant case runs as its delegate: its cost */
            av_params q = *p;
            q.variant = v;
            q.window = 0;
            return path_cost(out, path, &q, n, d, dv);
        }
        if (path == AV_PATH_LINEAR && !has_flag(p, AV_VF_LINEAR)) return AV_OK;
        gated_cost(out, path, p, N, D, DV, p->chunk < 1 ? 1 : p->chunk > n ? N : p->chunk);
        return AV_OK;
    }
    if (is_hybrid(p)) {
        if (path == AV_PATH_CHUNKWISE) return AV_OK;
        const double c = p->hedgehog_w ? p->hedgehog_cols : d, r = 2 * c, F = avi_cost_hedgehog(p, N, D, r);
        const double w = p->window > 0 && p->window < n ? p->window : N;
        if (path == AV_PATH_QUADRATIC) out[0] = F + N * w * D + N * (N - w) * r + nn * DV, out[1] = 4 * nn;
        else out[0] = F + N * w * (D + DV) + 2 * N * r * DV, out[1] = 4 * (w * (D + DV) + r * DV + r);
        return AV_OK;
    }
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
    if (is_gated(&p)) c = p.variant == AV_FOX ? h : d; /* the state S (d×dv) carries all a row sees of the past */
    else if (is_exact(&p)) c = p.window > 0 ? p.window - 1 : h;
    else if (is_hybrid(&p)) /* the window's W − 1 rows plus Φ's rank, 2·cols − 1 (each half of φ sums to 1) */
        c = p.window > 0 && p.window < n ? p.window - 2 + 2L * (p.hedgehog_w ? p.hedgehog_cols : d) : h;
    else if (is_lowrank(&p)) c = avi_lowrank_rank(&p);
    else if (is_delta(&p)) c = p.beta == 1 ? d - 1 : d;
    else {
        c = avi_feature_dim(&p, d);
        if (has_dwc(&p)) c += (p.dwc_kernel - 1) / 2;
    }
    *ceiling = c < h ? c : h;
    return AV_OK;
}
