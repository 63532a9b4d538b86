/* linear.c: the kernel engine's linear-time paths, over Φ_Q, Φ_K (features.c): the linear path
 * (av_linear: a float64 state S = Φ_Kᵀ V, z = Σ Φ_K, or its causal scan), the recurrent step
 * (av_recurrent_step), the sequential forms' entry points (av_recurrent, av_chunkwise; recurrent.c runs
 * them) and the low-rank factors (av_factors: L = D⁻¹Φ_Q, R = Φ_K). The formulas and normaliser rules are
 * in attention.c's file comment and docs/variant-formulas.md; the workspace layout in engine.h.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine.h"

// ----------------------------------------------------------------------------------------------------
// focused + DWC on the output (T as in attention.c)

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
    if (is_lowrank(p) || is_hybrid(p)) return AV_OK;
    return avi_feature_dim(p, d) > AV_MAX_FEATURE_DIM ? AV_ERR_FEATURE_DIM : AV_OK;
}

size_t av_linear_work(const av_params *prm, int n, int d, int dv) {
    av_params p;
    if (!prm || dv < 1 || dv > AV_MAX_D || engine_resolve(&p, prm, n, d) != AV_OK) return 0;
    if (linear_rule(&p, d) != AV_OK) return 0;
    return to_size(need(&p, n, d, dv, PATH_LINEAR));
}

int av_linear(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
              const av_params *prm, void *work, size_t work_bytes) {
    if (!O || !Q || !K || !V || !prm) return AV_ERR_NULL;
    av_params p;
    int st = engine_resolve(&p, prm, n, d);
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
    else if (is_gated(&p)) st = avi_gated_run(O, Q, K, V, n, d, dv, &p, b.inner, AVI_GATED_CHUNKWISE);
    else if (is_hybrid(&p)) st = avi_lolcats_run(O, Q, K, V, n, d, dv, &p, b.inner);
    else if (is_state(&p)) st = avi_recurrent_run(O, Q, K, V, n, d, dv, &p, b.inner, AVI_PATH_CHUNKWISE);
    else st = kernel_linear(O, Q, K, V, n, d, dv, &p, &b);
    return check_out(st, O, (size_t)n * dv);
}

int av_recurrent_step(float *o, double *S, double *z, const float *phi_q, const float *phi_k, const float *v,
                      long r, int dv, int n, const av_params *prm) {
    if (!o || !S || !z || !phi_q || !phi_k || !v || !prm) return AV_ERR_NULL;
    if (r < 1 || r > AV_MAX_FEATURE_DIM || dv < 1 || dv > AV_MAX_D) return AV_ERR_SIZE;
    if (avi_is_gated(prm->variant)) return AV_ERR_NO_LINEAR; /* their step is av_gated_step (gates, β, a, b) */
    if (prm->variant >= 0 && prm->variant < AV_VARIANT_COUNT && av_variant_info(prm->variant)->cls == AV_CLASS_HYBRID)
        return AV_ERR_NO_LINEAR; /* lolcats: a cache of W keys beside the state, no step of S and z alone */
    av_params p = *prm;
    p.causal = 1; /* the recurrent form is the causal scan */
    int st = engine_resolve(&p, &p, n, 1);
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
    return !is_exact(p) && !is_hybrid(p) && avi_feature_dim(p, d) > AV_MAX_FEATURE_DIM ? AV_ERR_FEATURE_DIM : AV_OK;
}

/* The workspace of a sequential form: recurrent.c's, or a gated family's (gated.c). */
static uint64_t seq_need(const av_params *p, int n, int d, int dv, int path) {
    if (is_gated(p)) return avi_gated_need(p, n, d, dv, path == AVI_PATH_RECURRENT ? AVI_GATED_RECURRENT : AVI_GATED_CHUNKWISE);
    if (is_hybrid(p)) return avi_lolcats_need(p, n, d, dv, AVI_LOLCATS_RECURRENT);
    return avi_recurrent_need(p, n, d, dv, path);
}

static size_t sequential_work(const av_params *prm, int n, int d, int dv, unsigned flag, int path) {
    av_params p;
    if (!prm || dv < 1 || dv > AV_MAX_D || engine_resolve(&p, prm, n, d) != AV_OK) return 0;
    if (sequential_rule(&p, d, flag) != AV_OK) return 0;
    return to_size(seq_need(&p, n, d, dv, path));
}

static int sequential(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                      const av_params *prm, void *work, size_t work_bytes, unsigned flag, int path) {
    if (!O || !Q || !K || !V || !prm) return AV_ERR_NULL;
    av_params p;
    int st = engine_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    if (dv < 1 || dv > AV_MAX_D) return AV_ERR_SIZE;
    if ((st = sequential_rule(&p, d, flag)) != AV_OK) return st;
    if ((st = check_work(seq_need(&p, n, d, dv, path), work, work_bytes)) != AV_OK) return st;
    if ((st = resolve_inputs(&p, prm, Q, K, n, d)) != AV_OK) return st;
    if (!avs_all_finite(V, (size_t)n * dv)) return AV_ERR_NONFINITE;
    if (is_gated(&p))
        return check_out(avi_gated_run(O, Q, K, V, n, d, dv, &p, work,
                                       path == AVI_PATH_RECURRENT ? AVI_GATED_RECURRENT : AVI_GATED_CHUNKWISE),
                         O, (size_t)n * dv);
    if (is_hybrid(&p)) return check_out(avi_lolcats_run(O, Q, K, V, n, d, dv, &p, work), O, (size_t)n * dv);
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
    int st = engine_resolve(&p, prm, n, d);
    return st != AV_OK ? st : factor_rule(r, &p, d);
}

size_t av_factors_work(const av_params *prm, int n, int d) {
    av_params p;
    long r;
    if (!prm || engine_resolve(&p, prm, n, d) != AV_OK || factor_rule(&r, &p, d) != AV_OK) return 0;
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
    int st = engine_resolve(&p, prm, n, d);
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
