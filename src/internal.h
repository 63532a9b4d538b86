/* internal.h: private interfaces between the library's source files. Not installed, not exported.
 *
 * attention.c (av_matrix, av_attend, av_scores) and linear.c (av_linear, av_recurrent_step, av_recurrent,
 * av_chunkwise, av_factors) own the public attention API and dispatch to the per-variant code declared
 * here; which file may call which: docs/architecture.md.
 * Every avi_* function receives *resolved* knobs (av_params_resolve has run: no zero defaults left,
 * ranges checked) and a workspace of at least the bytes its _work twin reports.
 */
#ifndef ATTNVIZ_INTERNAL_H
#define ATTNVIZ_INTERNAL_H

#include <stdint.h>

#include "attnviz.h"

/* --- status.c, util.c ---------------------------------------------------------------------------- */

/* 1 if all count entries are finite. */
int avi_all_finite(const float *x, size_t count);
/* av_readouts_rows by the plain twins of its fused row pass (readouts.c): what the tests compare it with. */
int avi_readouts_ref(double *vals, int *reasons, double *row_entropy, const float *M, const double *sv,
                     double noise_floor, const float *A, const float *V, int n, int dv, int causal, double tau,
                     void *work, size_t work_bytes);
/* Round a byte count up to a multiple of 64 (workspace carving keeps every block aligned). */
static inline size_t avi_align(size_t bytes) { return (bytes + 63u) & ~(size_t)63u; }
/* The chunkwise forms' chunk C: the resolved knob clamped to 1..n. */
static inline int avi_chunk_of(const av_params *p, int n) { return p->chunk < 1 ? 1 : p->chunk > n ? n : p->chunk; }

/* --- the workspace arena -----------------------------------------------------------------------------
 * Every caller-owned workspace is carved by one arena. Blocks start on 64-byte boundaries of the address
 * (the arena first rounds the caller's pointer up, so a function's speed does not depend on where malloc
 * put the buffer), and the same layout code run over a NULL base only counts (count-only mode): where a
 * function lays out its workspace in one place and runs it in both modes (attention.c, lowrank.c,
 * readouts.c), the _work query and the carving cannot disagree; spectrum.c and Performer's features count
 * with the same takes in the same order, written twice. Counting starts at AVI_ARENA_SLACK, the most the rounding
 * can skip. Sizes are 64-bit: a need beyond SIZE_MAX is the caller's AV_ERR_TOO_LARGE. */
typedef struct avi_arena { unsigned char *base; uint64_t used; } avi_arena;
#define AVI_ARENA_SLACK 64u
static inline avi_arena avi_arena_count(void) { return (avi_arena){NULL, AVI_ARENA_SLACK}; }
static inline avi_arena avi_arena_over(void *work) {
    uintptr_t a = (uintptr_t)work, b = (a + 63u) & ~(uintptr_t)63u;
    return (avi_arena){(unsigned char *)work, (uint64_t)(b - a)};
}
/* The next block of `bytes` (NULL in count-only mode, or for 0 bytes). */
static inline void *avi_take(avi_arena *a, uint64_t bytes) {
    void *r = a->base && bytes ? a->base + a->used : NULL;
    a->used += (bytes + 63u) & ~(uint64_t)63u;
    return r;
}

/* --- model.c: the one reason av_model_error() gives, shared with hf_model.c --------------------------- */

/* Set the reason (printf-style, one sentence) and return status. */
int avi_model_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empty the reason (a parse that succeeds leaves none). */
void avi_model_error_clear(void);

/* --- model.c: the forward pass's pieces, shared with swap.c (the swapped pass must repeat av_forward's
 * arithmetic exactly: the same functions, so the same bits). float32 weights, float64 sums. --------------- */

/* 1 when the struct's sizes and pointers are those av_model_parse sets (positive, consistent). */
int avi_model_ok(const av_model *m);
/* Set the sentence av_model_error() returns (for the Hugging Face readers; at most 255 bytes kept). */
void avi_model_set_error(const char *reason);
/* out = RMSNorm(x)·w (ε 1e-5). */
void avi_rmsnorm(double *out, const double *x, const float *w, int n);
/* out[rows] = W[rows×cols]·x. */
void avi_matvec(double *out, const float *W, const double *x, int rows, int cols);
/* RoPE at position pos on a vector of heads of size hs: pairs (2i, 2i+1) of each head rotated by
 * pos·10000^(−2i/hs). */
void avi_rope(double *v, int len, int hs, int pos);
/* Layer l's attention inputs at position pos: xb = RMSNorm(x), q, k, v after RoPE (dim, kv_dim, kv_dim). */
void avi_model_qkv(double *xb, double *q, double *k, double *v, const av_model *m, int l, const double *x, int pos);
/* One head's causal softmax at query t: o[hs] over the float32 keys and values at rows 0..t of kc, vc
 * (row j at j·stride); att: t + 1 doubles of scratch. */
void avi_model_softmax_head(double *o, const double *q, const float *kc, const float *vc, size_t stride, int t,
                            int hs, double scale, double *att);
/* The rest of layer l at one position: x += wo·xb (xb: the heads' outputs), then x += the SwiGLU block;
 * xb, xb2 (dim), hb, hb2 (hidden) are overwritten. */
void avi_model_mlp(double *x, double *xb, double *xb2, double *hb, double *hb2, const av_model *m, int l);
/* logits[vocab] = classifier·RMSNorm(x); xb (dim) scratch. */
void avi_model_logits(float *logits, double *xb, const av_model *m, const double *x);

/* --- weights.c: products with weights in their file's dtype (Hugging Face models) ------------------ */

/* Element (r, c) of a weight (or element r of a vector with c = 0), as float32, exactly. */
float avi_weight_at(const av_weight *w, int64_t r, int64_t c);
/* Element i of a vector weight (a norm's, a bias), exactly. */
float avi_weight_elem(const av_weight *w, int64_t i);
/* A vector weight's len elements in float64. */
void avi_weight_vec(double *out, const av_weight *w, int len);
/* out[t][r] = Σ_c W(r, c)·x[t][c] for T positions (rows of out at t·ldo, of x at t·ldx): W converted a block
 * of rows at a time, float32 products summed in float64 every 64 columns. scratch: avi_wmatmul_scratch(T, cols)
 * floats. */
size_t avi_wmatmul_scratch(int T, int cols);
void avi_wmatmul(double *out, size_t ldo, const av_weight *w, int rows, int cols, const double *x, size_t ldx, int T,
                 float *scratch);
/* The same product in plain float64 (the tests' reference). */
void avi_wmatmul_ref(double *out, size_t ldo, const av_weight *w, int rows, int cols, const double *x, size_t ldx, int T);
/* 1 when every element of the rows × cols weight is finite; else 0 with the first bad element's place. */
int avi_weight_finite(const av_weight *w, int64_t rows, int64_t cols, int64_t *bad_r, int64_t *bad_c);

/* --- model.c: the forward pass over blocks of positions, every architecture ---------------------------
 * The *_rows pieces run T ≤ AVI_MODEL_BLOCK positions at once (HF architectures: the weights read once per
 * block); for llama2.c models they run the per-position pieces above position by position, so the same
 * bits. Widths: x, xb [T][dim]; q, att [T][qdim] (qdim = n_heads·head_size, which HF models may set apart
 * from dim); k, v [T][kv_dim]; hb, hb2 [T][hidden]; scratch avi_model_scratch(m) floats. */
#define AVI_MODEL_BLOCK 32
static inline int avi_qdim(const av_model *m) { return m->n_heads * m->head_size; }
size_t avi_model_scratch(const av_model *m);
/* x[dim] = the embedding of token id at position pos (GPT-2 adds its learned position). */
void avi_model_embed(double *x, const av_model *m, int id, int pos);
/* Layer l's attention inputs at positions pos0..pos0+T−1: xb = the normed x, q, k (after RoPE), v. */
void avi_model_qkv_rows(double *xb, double *q, double *k, double *v, const av_model *m, int l, const double *x,
                        int pos0, int T, float *scratch);
/* The rest of layer l: x += o_proj(att), then x += the MLP of the normed x; att, xb2, hb, hb2 overwritten. */
void avi_model_mlp_rows(double *x, double *att, double *xb2, double *hb, double *hb2, const av_model *m, int l, int T,
                        float *scratch);
/* logits rows (at t·ld) = classifier·norm(x[t]) for T positions; xb [T][dim] scratch. */
void avi_model_logits_rows(float *logits, size_t ld, double *xb, const av_model *m, const double *x, int T,
                           float *scratch);

/* --- random.c: random matrices from the portable stream ----------------------------------------- */

/* The streams of the random matrices (docs/conventions.md): each use of a knob seed s reads its own stream,
 * seeded with domain·2³² + s, so no two uses ever share one, and none shares the generator's (av_generate
 * seeds with s itself, domain 0). Without the separation, Performer's iid ω with feature seed 1 was, row
 * for row, the Gaussian generator's Q with seed 1 divided by its std: features aligned with the queries. */
enum { AVI_STREAM_LINFORMER_F = 1, AVI_STREAM_LINFORMER_E = 2, AVI_STREAM_PERFORMER = 3, AVI_STREAM_DWC = 4,
       AVI_STREAM_RECALL = 5,
       /* the gate generators (gates.c): random gates, the projections' W, random β, the β projection's w */
       AVI_STREAM_GATES = 8, AVI_STREAM_GATE_W = 9, AVI_STREAM_BETAS = 10, AVI_STREAM_BETA_W = 11 };
static inline uint64_t avi_stream(int domain, uint32_t seed) { return ((uint64_t)domain << 32) | seed; }

/* G[rows×cols] with entries N(0, sigma²), drawn row by row from one stream seeded with `seed`. */
void avi_gaussian_matrix(float *G, int rows, int cols, double sigma, uint64_t seed);
/* Performer ω[m×d]: iid N(0, I) rows, or orthogonal: blocks of d rows from the Q of a d×d Gaussian
 * (modified Gram–Schmidt, float64), rows rescaled by the norms of independent N(0, I_d) draws (χ(d)).
 * One stream: avi_stream(AVI_STREAM_PERFORMER, seed). */
size_t avi_performer_omega_work(int m, int d);
void avi_performer_omega(float *W, int m, int d, int orthogonal, uint32_t seed, void *work);

/* The draw cache: a matrix drawn from a seed (Performer's ω, Linformer's E and F) kept in the caller's workspace,
 * so that a caller who passes the same workspace again pays the draw once per seed. The block is a 64-byte header
 * (a magic number, the key, a checksum of the key and of the stored floats) followed by rows×cols floats. A call
 * whose header matches its key and whose checksum holds reuses the floats; any other call (a fresh or a reused
 * workspace, another seed or shape, contents another call overwrote) draws them and seals the header. The floats
 * are the draw's own bits either way, so results are identical with and without a hit. The cache is part of the
 * workspace: like the workspace, it must not be shared by calls running at the same time (no global state). */
typedef struct avi_draw_key { uint32_t kind, seed; int32_t rows, cols; uint32_t flags; } avi_draw_key;
enum { AVI_DRAW_OMEGA = 1, AVI_DRAW_LINFORMER_E = 2, AVI_DRAW_LINFORMER_F = 3 };
#define AVI_DRAW_HEADER 64u
/* Bytes of a cache block of rows×cols floats (a multiple of 64). */
static inline uint64_t avi_draw_bytes(long rows, long cols) {
    return AVI_DRAW_HEADER + (((uint64_t)rows * (uint64_t)cols * 4u + 63u) & ~(uint64_t)63u);
}
/* The floats of a block (64-byte aligned when the block is). */
static inline float *avi_draw_data(void *block) { return (float *)((unsigned char *)block + AVI_DRAW_HEADER); }
/* 1 when the block holds the draw of `key` (header and checksum), else 0. */
int avi_draw_hit(const void *block, const avi_draw_key *key);
/* Write the header of `key` over the floats now in the block. */
void avi_draw_seal(void *block, const avi_draw_key *key);

/* Segment t of m over n tokens (lowrank.c): the first (⌊n/m⌋+1)·m − n segments hold ⌊n/m⌋ tokens, the rest one more. */
void avi_segment(int *start, int *len, int t, int n, int m);
/* focused + DWC's kernel w[k] (random.c): N(0, 1/k), t = 0..k−1, stream avi_stream(AVI_STREAM_DWC, seed). */
void avi_dwc_weights(double *w, const av_params *p);

/* --- variants.c: the registry ------------------------------------------------------------------ */

/* A variant's kernels, beside its public descriptor. NULL where the class has none. */
typedef int (*avi_phi_fn)(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                          const av_params *prm, void *work);
typedef struct avi_variant {
    av_variant_desc desc;
    long (*feature_dim)(const av_params *prm, int d);             /* r (may exceed the cap; saturating) */
    size_t (*features_work)(const av_params *prm, int n, int d);  /* bytes for `features`; NULL: none */
    avi_phi_fn features;                                          /* Φ_Q, Φ_K (n×r); AV_OK or an error */
    /* AV_CLASS_CLOSED_FORM: κ(s) of each score s of row[0..len) in place (computed in double, stored as
     * float); returns the sum of the double values. One call per row, not per entry (an indirect call
     * per entry cost 40% in WASM). */
    double (*kernel_row)(const av_params *prm, float *row, int len);
    double (*feature_cost)(const av_params *prm, double n, double d, double r); /* madds of φ on Q and K */
} avi_variant;

/* The row of a variant (0 ≤ variant < AV_VARIANT_COUNT, checked by the caller). */
const avi_variant *avi_variant_of(int variant);
/* 1 if the variant lists the knob among those it reads. */
int avi_variant_reads(int variant, int knob);
/* A knob's value in av_params, and a store of one (ints truncate; the caller has rounded). */
double avi_knob_get(const av_params *prm, int knob);
void avi_knob_put(av_params *prm, int knob, double value);
/* The C name of a status code ("AV_ERR_SIZE"), or NULL for a number that is not one (status.c). */
const char *avi_status_name(int status);
/* 1 when a knob the variant reads adds a term that is not part of a feature product and removes the causal
 * form and the factors (AV_KF_NO_CAUSAL and nonzero: focused + DWC). Resolved knobs. */
int avi_extra_term(const av_params *prm);
/* 1 unless the variant reads weights (AV_VF_WEIGHTS) and they hold NaN/Inf. Resolved knobs. */
int avi_weights_finite(const av_params *prm, int d);

/* --- features.c, features_random.c: the registry's kernels ----------------------------------------- */

/* Feature dimension r from the registry row (resolved knobs; focused's DWC ignored); 0 for the exact and
 * low-rank classes. May exceed AV_MAX_FEATURE_DIM (taylor, explimit): callers check the cap. */
long avi_feature_dim(const av_params *prm, int d);
size_t avi_features_work(const av_params *prm, int n, int d);
/* Φ_Q, Φ_K (n×r) of any variant with a feature map; AV_OK, AV_ERR_FEATURE_DIM, AV_ERR_NO_LINEAR, or
 * AV_WARN_OVERFLOW when a feature is not finite. */
/* ln φ(q), ln φ(k) (n×r float64) of the variants whose float32 φ can underflow to 0 (focused, exp, hedgehog):
 * the maps' formulas without rounding; 0 (nothing written) for the others. */
int avi_log_features(double *LQ, double *LK, const float *Q, const float *K, int n, int d, const av_params *p);
int avi_has_log_features(const av_params *p);
int avi_features(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                 const av_params *prm, void *work);

long avi_dim_d(const av_params *prm, int d);         /* elu, relu, exp, efficient, focused */
long avi_dim_2d(const av_params *prm, int d);        /* cosformer */
long avi_dim_hedgehog(const av_params *prm, int d);  /* 2·cols */
long avi_dim_performer(const av_params *prm, int d); /* m */
long avi_dim_taylor(const av_params *prm, int d);    /* Σ_{r≤p} d^r */
long avi_dim_explimit(const av_params *prm, int d);  /* (d+1)^N */
size_t avi_performer_work(const av_params *prm, int n, int d);
size_t avi_tensor_work(const av_params *prm, int n, int d);
int avi_phi_elu(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p, void *w);
int avi_phi_relu(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p, void *w);
int avi_phi_exp(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p, void *w);
int avi_phi_efficient(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                      void *w);
int avi_phi_focused(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                    void *w);
int avi_phi_hedgehog(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                     void *w);
int avi_phi_cosformer(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                      void *w);
int avi_phi_performer(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                      void *w);
int avi_phi_taylor(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                   void *w);
int avi_phi_explimit(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                     void *w);
double avi_kernel_taylor(const av_params *prm, double s);   /* T_p(s) = Σ_{r≤p} s^r/r! */
double avi_kernel_explimit(const av_params *prm, double s); /* (1 + s/N)^N */
double avi_kernel_row_taylor(const av_params *prm, float *row, int len);
double avi_kernel_row_explimit(const av_params *prm, float *row, int len);
double avi_cost_elementwise(const av_params *p, double n, double d, double r);
double avi_cost_hedgehog(const av_params *p, double n, double d, double r);
double avi_cost_performer(const av_params *p, double n, double d, double r);
double avi_cost_tensor(const av_params *p, double n, double d, double r);

/* --- lowrank.c: linformer, nystrom ------------------------------------------------------------- */

size_t avi_lowrank_work(const av_params *prm, int n, int d, int dv);
/* The rank of the factors: s (linformer) or landmarks (nystrom). */
long avi_lowrank_rank(const av_params *prm);
/* out[0..3] of av_cost for the low-rank class (out[1], quadratic bytes, is the caller's). */
void avi_lowrank_cost(double *out, const av_params *prm, int n, int d, int dv);
int avi_lowrank_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *prm, void *work);
int avi_lowrank_linear(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                       const av_params *prm, void *work);
int avi_lowrank_factors(float *L, float *R, const float *Q, const float *K, int n, int d,
                        const av_params *prm, void *work);
/* Test hook: the linear output of Linformer, or of Nyström with landmarks < n, by the row-by-row reference form that
 * the tiled one must match bit for bit (AV_ERR_VARIANT otherwise). */
int avi_lowrank_linear_rows(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                            const av_params *prm, void *work);

/* --- recurrent.c: the recurrent families' sequential forms, the delta rule's matrix ---------------- */

enum { AVI_PATH_RECURRENT = 1, AVI_PATH_CHUNKWISE = 2, AVI_PATH_DELTA_MATRIX = 3 };
/* Bytes of workspace of one path (64-bit; the caller turns a need beyond SIZE_MAX into AV_ERR_TOO_LARGE). */
uint64_t avi_recurrent_need(const av_params *prm, int n, int d, int dv, int path);
/* O[n×dv] by the recurrent or the chunkwise form (softmax, the kernel variants, retention, deltanet;
 * causal; resolved knobs, checked inputs). AV_OK, AV_WARN_ZERO_ROW, or a feature map's status. */
int avi_recurrent_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                      const av_params *prm, void *work, int path);
/* The delta rule's n×n matrix (workspace: avi_recurrent_need(…, AVI_PATH_DELTA_MATRIX)). */
int avi_delta_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *prm, void *work);
int avi_phi_retention(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                      void *w);
int avi_phi_delta(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d, const av_params *p,
                  void *w);
double avi_cost_retention(const av_params *p, double n, double d, double r);
double avi_cost_delta(const av_params *p, double n, double d, double r);

/* --- lolcats.c: the hybrid class (a softmax window plus Hedgehog's linear term) ----------------------- */

enum { AVI_LOLCATS_MATRIX = 0, AVI_LOLCATS_RECURRENT = 1 };
/* Bytes of workspace of the matrix or the recurrent scan (av_linear runs the scan too). */
uint64_t avi_lolcats_need(const av_params *prm, int n, int d, int dv, int path);
/* M[n×n] (causal), and O[n×dv] by the cache-plus-state scan; resolved knobs, checked inputs; AV_OK. */
int avi_lolcats_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *prm, void *work);
int avi_lolcats_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                    const av_params *prm, void *work);
/* F[n×2cols] = [softmax(u), softmax(−u)] (LoLCATs' Hedgehog map) and U[n×cols] = u = Wᵀx_i, W float (Wf) or
 * double (Wd), d×cols, or the identity when both are NULL (cols = d). Shared with the distillation (mechanisms.c). */
void avi_lolcats_features(double *F, double *U, const float *X, const float *Wf, const double *Wd, int n, int d,
                          int cols);
/* ln φ(q)·φ(k) from u = W_hᵀx of both, as a log-sum-exp of the 2·cols log-products (every one ≤ 0): for the
 * distillation's log-terms where the product φ(q)·φ(k) is below AVI_LOLCATS_TINY and may have underflowed. */
double avi_lolcats_log_pair(const double *uq, const double *uk, int cols);
#define AVI_LOLCATS_TINY 1e-280

/* --- rows.c: the row rules every path shares ---------------------------------------------------- */

/* Errors win; among events the one that says most about the outputs. */
int avi_merge(int a, int b);
/* The factor a row is multiplied by, given its sum, by the registry's normaliser rule; *zero |= (sum ≤ 0). */
double avi_norm_factor(const av_params *prm, int n, double sum, int *zero);
/* The status of a path's rows from avi_norm_factor's zero bits: AV_WARN_ZERO_ROW, AV_WARN_UNDERFLOW_ROW or AV_OK. */
int avi_zero_status(int zero);

/* --- linear.c: shared by mechanisms.c -------------------------------------------------------------- */
/* The readout half of av_recurrent_step: o = Sᵀφ_q, normalised by the variant's rule (resolved knobs);
 * AV_WARN_ZERO_ROW when the normaliser is ≤ 0, AV_WARN_PRODUCT_OVERFLOW when o holds Inf or NaN
 * (mechanisms.c reads a state it wrote with the step). */
int avi_state_read(float *o, const double *S, const double *z, const float *phiq, long r, int dv, int n,
                   const av_params *p);

/* --- spectrum.c ------------------------------------------------------------------------------- */

/* Test hook: cap the iterations of one solve at `total` in all (QL sweeps of the fast route, dqds
 * transforms of the accurate route; 0 restores the normal limits), so that AV_WARN_NO_CONVERGENCE can be
 * exercised. */
void avi_spectrum_test_maxit(int total);
/* Test hook: the accurate route's bidiagonalisation: 1 the unblocked reference, 2 the blocked one at every n,
 * 0 the choice by size. */
void avi_spectrum_test_bidiag(int route);
/* Test hooks: the singular values of the upper bidiagonal B (diagonal d[0..n), superdiagonal e[0..n−1))
 * into sv[0..n) descending. _dqds: the accurate route's solver (work: 6n + 24 doubles; AV_OK or
 * AV_WARN_NO_CONVERGENCE). _bisect: the plain reference, bisection with Sturm counts on the Golub–Kahan
 * tridiagonal, to high relative accuracy (σ below DBL_MIN·max|b| come out as 0; work: 2n doubles);
 * O(60·n²), for tests only. */
int avi_spectrum_test_dqds(double *sv, const double *d, const double *e, int n, double *work);
void avi_spectrum_test_bisect(double *sv, const double *d, const double *e, int n, double *work);

#endif /* ATTNVIZ_INTERNAL_H */
