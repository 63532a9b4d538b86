/* gated.h: the gated families' internal interface (docs/gated.md). gated.c owns the dispatch, the checks of
 * the gate inputs and what the families share (q̃, k̃, the gates of token t); gated_linear.c (simple_gla, gla),
 * gated_delta.c (gdn, kda), dplr.c and fox.c each hold one family's matrix, recurrent and chunkwise forms.
 * Every function receives resolved knobs (av_params_resolve has run, and with it avi_gated_check) and checked
 * Q, K, V.
 */
#ifndef ATTNVIZ_GATED_H
#define ATTNVIZ_GATED_H

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

/* The dispatch (gated.c) and each family's forms, with the workspace each path needs (64-bit counts). */
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

/* One token of the state families (av_gated_step's body): S (d×dv, float64) ← the family's transition with the
 * given gate row g (gc values), β, a, b (d or NULL), then o = Sᵀq̃. q̃, k̃ already normalised and scaled. */
void avi_gated_step_state(double *o, double *S, const float *qt, const float *kt, const float *v, const float *g,
                          int gc, double beta, const float *a, const float *b, int d, int dv, int variant);

#endif /* ATTNVIZ_GATED_H */
