/* gated.h: the gated families' internal interface (docs/gated.md). gated.c owns the checks of the gate inputs
 * and what the families share (q̃, k̃, the gates of token t, the step and its scan); gated_dispatch.c the
 * dispatch and av_gated_step (apart, so that no file both calls the families and is called by them);
 * gated_linear.c (simple_gla, gla),
 * gated_delta.c (gdn, kda), dplr.c and fox.c each hold one family's matrix, recurrent and chunkwise forms.
 * Every function receives resolved knobs (av_params_resolve has run, and with it avi_gated_check) and checked
 * Q, K, V.
 */
#ifndef ATTNVIZ_GATED_H
#define ATTNVIZ_GATED_H

#include <math.h>

#include "internal.h"

/* The paths of a gated family: each lays out its workspace by one function that counts and carves. */
enum { AVI_GATED_MATRIX = 0, AVI_GATED_RECURRENT = 1, AVI_GATED_CHUNKWISE = 2 };

/* The gates of one call, resolved: g (n×gc, gc 1 or d) or, when g is NULL, the constant g0 = ln(decay) for every
 * token and channel; beta (n) or the constant beta0; a, b (n×d) or NULL (zero). */
typedef struct avi_gates {
    const float *g;
    int gc;
    double g0;
    const float *beta;
    double beta0;
    const float *a, *b;
} avi_gates;
avi_gates avi_gates_of(const av_params *p);
/* The log-gate of token t, channel c (c ignored for a per-token gate), and β_t. */
static inline double avi_gate(const avi_gates *G, int t, int c) {
    return G->g ? (double)G->g[(size_t)t * G->gc + (G->gc > 1 ? c : 0)] : G->g0;
}
static inline double avi_beta(const avi_gates *G, int t) { return G->beta ? (double)G->beta[t] : G->beta0; }

/* 1 when the variant is one of the gated families; 1 when its gate may be per channel (gla, kda, dplr). */
int avi_is_gated(int variant);
int avi_gated_per_channel(int variant);
/* The family's default of qk_l2norm resolved into p->qk_l2norm (1 or 0) happens in av_params_resolve; this
 * checks the gate inputs against n and d: AV_OK, AV_ERR_GATES (shape, n, a gate > 0, β outside (0, 2]),
 * AV_ERR_NONFINITE. */
int avi_gated_check(const av_params *p, int n, int d);

/* q̃ = scale·l2norm?(q), k̃ = l2norm?(k) (n×d each), as the family's knobs say (docs/gated.md). */
void avi_gated_qk(float *Qt, float *Kt, const float *Q, const float *K, int n, int d, const av_params *p);

/* The dispatch (gated_dispatch.c) and each family's forms, with the workspace each path needs (64-bit counts). */
uint64_t avi_gated_need(const av_params *p, int n, int d, int dv, int path);
int avi_gated_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work);
int avi_gated_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                  void *work, int path);

uint64_t avi_gla_need(const av_params *p, int n, int d, int dv, int path);      /* simple_gla, gla */
int avi_gla_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work);
int avi_gla_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                void *work, int path);
uint64_t avi_gdelta_need(const av_params *p, int n, int d, int dv, int path);   /* gdn, kda */
int avi_gdelta_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work);
int avi_gdelta_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                   const av_params *p, void *work, int path);
uint64_t avi_dplr_need(const av_params *p, int n, int d, int dv, int path);
int avi_dplr_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work);
int avi_dplr_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                 void *work, int path);
uint64_t avi_fox_need(const av_params *p, int n, int d, int dv, int path);
int avi_fox_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work);
int avi_fox_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                void *work, int path);

/* One token of the state families (av_gated_step's body, and the recurrent form of gated_linear.c and
 * gated_delta.c): S (d×dv, float64) ← the family's transition, then o = (float)(Sᵀq̃). q̃_c = (float)(q_c·fq),
 * k̃_c = (float)(k_c·fk), the bits of avi_gated_qk (pass rows of its output with fq = fk = 1). The decay factors
 * are exp(g) of the token's gate row g (gc values: 1, or d per channel), or exp(g0) when g is NULL (the constant
 * case, never rounded to float); β (gdn, kda); a, b (d each, dplr; NULL: zero). Column blocks on the stack:
 * no workspace (the step's public form takes none). */
void avi_gated_step_state(float *o, double *S, const float *q, const float *k, double fq, double fk, const float *v,
                          const float *g, int gc, double g0, double beta, const float *a, const float *b, int d,
                          int dv, int variant);

/* The gated causal products of a range of tokens [t0, t0 + len), what the matrix and chunkwise forms of gla,
 * simple_gla, gdn and kda are made of (docs/gated.md's A's): for a, b in the range,
 *   A[a][b]  = Σ_c x_ac y_bc Γ_abc  (b ≤ a)        A2[a][b] = Σ_c x2_ac y_bc Γ_abc  (b < a; when X2 is given)
 * with Γ_abc = exp(Σ_{l=b+1..a} g_lc). By sub-blocks of AVI_GPROD_SB tokens, every factor ≤ 1 and every exponent
 * a sum of the gates it spans (never a difference of cumulative sums): across sub-blocks J < I,
 * Γ_ab = exp(Σ_{l=i0..a} g) · exp(Σ of the sub-blocks between) · exp(Σ_{l=b+1..j1} g) (x and y scaled by the
 * outer two, float64 dot products); inside a sub-block, each pair's exponent summed from the diagonal down.
 * Rows of sub-block I at a time (avi_gprod_rows), all columns b ≤ a of the range; entries b > a not written. */
enum { AVI_GPROD_SB = 16 };
typedef struct avi_gprod {
    int len, d, gc;          /* the range's length, the head size, the gate's channels (1 or d) */
    const float *X, *X2, *Y; /* rows t0.. of x (q̃), x2 (k̃ or NULL), y (k̃) */
    double *gl;              /* len×gc: the range's gates */
    double *Xa, *X2a, *Ye;   /* len×d: x_a·exp(Σ_{l=i0..a} g), x2 likewise, y_b·exp(Σ_{l=b+1..j1} g) */
    double *T;               /* ⌈len/SB⌉×gc: each sub-block's gate sum */
    double *mid, *fm, *w;    /* gc, gc and d of scratch */
} avi_gprod;
/* Carve (or count, in count-only mode) the buffers for ranges of up to len_max tokens; two: X2 is used. */
void avi_gprod_take(avi_gprod *k, avi_arena *a, int len_max, int d, int gc, int two);
/* Prepare the range [t0, t0 + len) of X, X2 (NULL: none), Y (n×d rows, already q̃, k̃) with the call's gates. */
void avi_gprod_prepare(avi_gprod *k, const float *X, const float *X2, const float *Y, const avi_gates *G, int t0,
                       int len, int d);
/* Rows of sub-block I (tokens I·SB .. of the range) into A (and A2), leading dimensions lda, lda2. */
void avi_gprod_rows(const avi_gprod *k, int I, double *A, size_t lda, double *A2, size_t lda2);
/* The gate channels of a call: 1, or d for a per-channel array. */
static inline int avi_gate_channels(const av_params *p) { return p->gates && p->gate_channels > 1 ? p->gate_channels : 1; }
/* f[c] = e^{e[c]} for the d channels (one exponential when the gate is one per token: gc = 1, e[0]). */
static inline void avi_exp_factors(double *f, const double *e, int gc, int d) {
    if (gc == 1) {
        double x = exp(e[0]);
        for (int c = 0; c < d; c++) f[c] = x;
    } else {
        for (int c = 0; c < d; c++) f[c] = exp(e[c]);
    }
}

/* The recurrent form of the state families: O (n×dv) token by token by avi_gated_step_state, float64 state,
 * with the call's gates (arrays or the constant case). Workspace avi_gated_scan_need bytes (q̃, k̃, S). */
uint64_t avi_gated_scan_need(int n, int d, int dv);
int avi_gated_scan(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                   void *work);

/* The variant whose code computes this call bit for bit, or −1: simple_gla without a gate array and without
 * qk_l2norm is retention with the same decay, fox likewise softmax with that decay (the forgetting softmax).
 * attention.c and linear.c run the delegate (resolved knobs). */
int avi_gated_delegate(const av_params *p);

#endif /* ATTNVIZ_GATED_H */
