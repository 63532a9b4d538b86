/* internal.h: private interfaces between the library's source files. Not installed, not exported.
 *
 * attention.c owns the public attention API (av_matrix, av_attend, av_features, av_linear,
 * av_recurrent_step, av_factors, ...) and dispatches to the per-variant code declared here.
 * Every avi_* function receives *resolved* knobs (av_params_resolve has run: no zero defaults left,
 * ranges checked) and a workspace of at least the bytes its _work twin reports.
 */
#ifndef ATTNVIZ_INTERNAL_H
#define ATTNVIZ_INTERNAL_H

#include "attnviz.h"

/* --- util.c ------------------------------------------------------------------------------------ */

/* 1 if all count entries are finite. */
int avi_all_finite(const float *x, size_t count);
/* Round a byte count up to a multiple of 64 (workspace carving keeps every block aligned). */
static inline size_t avi_align(size_t bytes) { return (bytes + 63u) & ~(size_t)63u; }

/* --- random.c: random matrices from the portable stream ----------------------------------------- */

/* G[rows×cols] with entries N(0, sigma²), drawn row by row from one stream seeded with `seed`. */
void avi_gaussian_matrix(float *G, int rows, int cols, double sigma, uint64_t seed);
/* Performer ω[m×d]: iid N(0, I) rows, or orthogonal: blocks of d rows from the Q of a d×d Gaussian
 * (modified Gram–Schmidt, float64), rows rescaled by the norms of independent N(0, I_d) draws (χ(d)). */
size_t avi_performer_omega_work(int m, int d);
void avi_performer_omega(float *W, int m, int d, int orthogonal, uint32_t seed, void *work);

/* --- features.c: the feature maps of every kernel variant (dispatches to features_random.c) ------ */

/* Feature dimension r (resolved knobs; focused's DWC ignored): elu, relu, exp, efficient, focused d;
 * hedgehog 2·cols; cosformer 2d; performer, taylor, explimit avi_feature_dim_poly. 0 for softmax,
 * linformer, nystrom. May exceed AV_MAX_FEATURE_DIM (taylor, explimit): callers check the cap. */
long avi_feature_dim(const av_params *prm, int d);
size_t avi_features_work(const av_params *prm, int n, int d);
/* Φ_Q, Φ_K (n×r); AV_OK, or AV_WARN_OVERFLOW when a feature is not finite. */
int avi_features(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                 const av_params *prm, void *work);

/* --- features_random.c: performer, taylor, explimit -------------------------------------------- */

/* Feature dimension: performer m; taylor Σ_{r≤p} d^r; explimit (d+1)^N (saturating at LONG_MAX). */
long avi_feature_dim_poly(const av_params *prm, int d);
size_t avi_features_random_work(const av_params *prm, int n, int d);
/* Φ_Q, Φ_K (n×r) for AV_PERFORMER, AV_TAYLOR, AV_EXPLIMIT (taylor/explimit only when r ≤ cap). */
int avi_features_random(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                        const av_params *prm, void *work);
/* The closed-form kernel value of taylor (T_p(s)) and explimit ((1 + s/N)^N) at s = scale·q·k. */
double avi_poly_kernel(const av_params *prm, double s);

/* --- lowrank.c: linformer, nystrom ------------------------------------------------------------- */

size_t avi_lowrank_work(const av_params *prm, int n, int d, int dv);
int avi_lowrank_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *prm, void *work);
int avi_lowrank_linear(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                       const av_params *prm, void *work);
int avi_lowrank_factors(float *L, float *R, const float *Q, const float *K, int n, int d,
                        const av_params *prm, void *work);

/* --- spectrum.c ------------------------------------------------------------------------------- */

/* Test hook: cap the QL iterations at `total` sweeps in all (0 restores the normal limit), so that
 * AV_WARN_NO_CONVERGENCE can be exercised. */
void avi_spectrum_test_maxit(int total);

#endif /* ATTNVIZ_INTERNAL_H */
