/* engine.h: what the kernel engine's two halves share, attention.c (the quadratic path) and linear.c
 * (the linear-time paths): the row rules by short names, the output checks, one workspace layout for every
 * path (so a _work query and its run cannot disagree), the input checks. Static inline: no file of its own
 * to call back into.
 */
#ifndef ATTNVIZ_ENGINE_H
#define ATTNVIZ_ENGINE_H

#include <float.h>
#include <stdint.h>

#include "classes.h"
#include "gated.h"
#include "internal.h"
#include "simd.h"

// ----------------------------------------------------------------------------------------------------
// variant classes (classes.h), normaliser and status merging (rows.c)

/* The shared row rules (rows.c), by the short names this file uses. */
static inline double norm_factor(const av_params *p, int n, double sum, int *zero) { return avi_norm_factor(p, n, sum, zero); }
static inline int merge(int a, int b) { return avi_merge(a, b); }

/* The status once an output was found to hold Inf/NaN: AV_WARN_OVERFLOW when a feature or an exponential
 * had already overflowed (st says so), else AV_WARN_PRODUCT_OVERFLOW (finite values whose product or sum
 * left float32 range, e.g. q·k of inputs near 1e30). */
static inline int overflowed(int st) { return merge(st, AV_WARN_PRODUCT_OVERFLOW); }

/* st, or overflowed(st) when x[0..count) holds Inf or NaN. */
static inline int check_out(int st, const float *x, size_t count) {
    return st >= 0 && !avs_all_finite(x, count) ? overflowed(st) : st;
}

static inline int zero_status(int zero) { return avi_zero_status(zero); }

// ----------------------------------------------------------------------------------------------------
// workspace sizes (computed in 64 bits; a need beyond SIZE_MAX is AV_ERR_TOO_LARGE, and _work returns 0)

static inline uint64_t packed_bytes(int ncols, long k) { return 4u * (uint64_t)avs_packed_floats(ncols, 1) * k; }
static inline uint64_t dwc_bytes(const av_params *p) { return has_dwc(p) ? 8u * (uint64_t)p->dwc_kernel : 0; }

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
static inline int state_block(long r, int dv) {
    long kb = 6144 / (r + dv);
    return kb < 8 ? 8 : kb > 64 ? 64 : (int)kb;
}
static inline uint64_t linear_block_doubles(long r, int dv) {
    uint64_t st = (uint64_t)state_block(r, dv) * ((uint64_t)r + dv), band = 2u * (uint64_t)r;
    return st > band ? st : band;
}

static inline void layout(bufs *b, avi_arena *a, const av_params *p, int n, int d, int dv, int path) {
    memset(b, 0, sizeof *b);
    if (is_lowrank(p)) {
        b->inner = avi_take(a, avi_lowrank_work(p, n, d, path == PATH_LINEAR ? dv : 1));
        return;
    }
    if (is_gated(p)) { /* the gated families lay out their own (gated.c); their linear path is the chunkwise form */
        b->inner = avi_take(a, avi_gated_need(p, n, d, dv, path == PATH_MATRIX ? AVI_GATED_MATRIX : AVI_GATED_CHUNKWISE));
        return;
    }
    if (is_hybrid(p)) { /* lolcats.c lays out its own; its linear path is the recurrent scan */
        b->inner = avi_take(a, avi_lolcats_need(p, n, d, dv, path == PATH_MATRIX ? AVI_LOLCATS_MATRIX : AVI_LOLCATS_RECURRENT));
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
static inline uint64_t need(const av_params *p, int n, int d, int dv, int path) {
    avi_arena a = avi_arena_count();
    bufs b;
    layout(&b, &a, p, n, d, dv, path);
    return a.used;
}
static inline uint64_t need_attend(const av_params *p, int n, int d, int dv, int with_m) {
    avi_arena a = avi_arena_count();
    bufs b;
    layout(&b, &a, p, n, d, dv, PATH_MATRIX);
    if (!with_m) avi_take(&a, 4u * (uint64_t)n * n);
    avi_take(&a, packed_bytes(dv, n));
    return a.used;
}

static inline size_t to_size(uint64_t need) { return need > (uint64_t)SIZE_MAX ? 0 : (size_t)need; }

/* Common checks of a workspace against its need: AV_ERR_TOO_LARGE, AV_ERR_NULL or AV_ERR_WORKSPACE. */
static inline int check_work(uint64_t need, const void *work, size_t work_bytes) {
    if (need > (uint64_t)SIZE_MAX) return AV_ERR_TOO_LARGE;
    if (need > 0 && !work) return AV_ERR_NULL;
    return work_bytes < need ? AV_ERR_WORKSPACE : AV_OK;
}

/* av_params_resolve, then a gated family's constant case handed to the variant whose code computes it bit for
 * bit (avi_gated_delegate: simple_gla → retention, fox → the forgetting softmax). Every entry point of
 * attention.c and linear.c resolves through here, so the workspace and the run agree on the variant. */
static inline int engine_resolve(av_params *out, const av_params *in, int n, int d) {
    int st = av_params_resolve(out, in, n, d);
    if (st == AV_OK && is_gated(out)) {
        int v = avi_gated_delegate(out);
        if (v >= 0) {
            out->variant = v;
            out->window = 0; /* not a knob of the family: softmax must not read one left in the struct */
        }
    }
    return st;
}

/* Resolve knobs and check Q, K (and W) for NaN/Inf. */
static inline int resolve_inputs(av_params *p, const av_params *prm, const float *Q, const float *K, int n, int d) {
    int st = engine_resolve(p, prm, n, d);
    if (st != AV_OK) return st;
    size_t cnt = (size_t)n * d;
    if (!avs_all_finite(Q, cnt) || !avs_all_finite(K, cnt)) return AV_ERR_NONFINITE;
    if (!avi_weights_finite(p, d)) return AV_ERR_NONFINITE;
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// shared by both paths

/* x ← fac·x. A factor beyond float range (the row's sum was tiny but positive, e.g. exp features of
 * huge inputs) is applied in double: the products are ≤ 1 where it comes from a row sum, so nothing
 * overflows that need not. */
static inline void scale_by(float *x, int len, double fac) {
    if (fac <= FLT_MAX) {
        avs_scale(x, len, (float)fac);
        return;
    }
    for (int j = 0; j < len; j++) x[j] = (float)(x[j] * fac);
}

#endif /* ATTNVIZ_ENGINE_H */
