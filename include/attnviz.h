/* attnviz.h: the one public header of the attnviz C library.
 *
 * attnviz computes, for softmax attention and its linear-time relatives, the n×n attention matrix (or
 * the variant's effective n×n map), the output M·V by the quadratic path, by the linear-time path that
 * never forms n×n, and by the recurrent form; and the spectrum and readouts of any such matrix.
 * The same code is built natively (the CLI, the tests) and as WebAssembly with SIMD (the lab page).
 *
 * Conventions (docs/conventions.md settles every "which form?" question; docs/variant-formulas.md gives the
 * formulas and their sources):
 *   - Matrices are row-major. Q, K are n×d, V is n×dv, all float32. Attention matrices are n×n float32.
 *     Spectra and readouts are float64.
 *   - Argument order: outputs, then const inputs, then sizes, then workspace.
 *   - Kernels never allocate. A function that needs scratch has a `_work` query returning the bytes it
 *     needs; the caller passes a buffer of at least that size (8-byte aligned). A caller that passes the same
 *     workspace again saves work: the random matrices drawn from the seed (Performer's ω, Linformer's E and F)
 *     stay in it, checked by a header and checksum, and are reused (the outputs are the same bits either way).
 *     There is no global state: calls on several threads are safe when each has its own workspace.
 *   - Causal means the inclusive autoregressive mask: row i sees keys j ≤ i. Masked entries are 0.
 *   - Zero means "default" in av_params (sokol's habit), except where a field says otherwise.
 *
 * The promises every function keeps, whatever its input (the fuzz target tests/fuzz/fuzz_api.c checks them):
 *   - It returns a status in AV_STATUS_MIN..AV_STATUS_MAX, never exits, aborts or reads out of bounds.
 *     av_status_string() turns any status into one sentence.
 *   - A negative status is an error: bad arguments, nothing useful written.
 *   - AV_OK, AV_WARN_ZERO_ROW and AV_WARN_NO_CONVERGENCE promise finite outputs (every float and double
 *     the function writes). AV_WARN_OVERFLOW and AV_WARN_PRODUCT_OVERFLOW are the only statuses under
 *     which an output may hold Inf or NaN; the function's comment says which outputs.
 *   - A workspace shorter than its `_work` size is refused with AV_ERR_WORKSPACE, and `_work` is > 0 for
 *     valid arguments (0 means the arguments are bad, or AV_ERR_TOO_LARGE: the need exceeds size_t).
 *   - A readout (av_readouts) is never ±Inf, and never finite while it carries a reason: an undefined
 *     readout is NaN with a reason code.
 *   - This header stays source-compatible: existing signatures and named av_params fields stay, new
 *     fields are appended, new status and reason codes get new numbers.
 */
#ifndef ATTNVIZ_H
#define ATTNVIZ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------ */
/* Status codes                                                                                      */

enum av_status {
    AV_OK = 0,
    /* bad arguments (nothing useful was written) */
    AV_ERR_NULL = -1,          /* a required pointer is NULL */
    AV_ERR_SIZE = -2,          /* n, d, dv or a buffer length is out of range or inconsistent */
    AV_ERR_KNOB = -3,          /* a knob the variant reads (any row of av_knob_info) is out of its range */
    AV_ERR_VARIANT = -4,       /* unknown variant, generator or enum value */
    AV_ERR_NO_CAUSAL = -5,     /* this variant (or this knob setting) has no causal form */
    AV_ERR_NONFINITE = -6,     /* NaN or Inf in Q, K, V or another input */
    AV_ERR_WORKSPACE = -7,     /* workspace too small (ask the matching _work function) */
    AV_ERR_FEATURE_DIM = -8,   /* feature dimension too large for the linear path (cap AV_MAX_FEATURE_DIM) */
    AV_ERR_NO_LINEAR = -9,     /* this variant has no linear-time path / no feature map / no factors */
    AV_ERR_FORMAT = -10,       /* malformed file or buffer (.npy header, dtype, order, truncated data) */
    AV_ERR_IO = -12,           /* a file could not be read or written (the CLI's helpers only) */
    AV_ERR_NOMEM = -13,        /* allocation failed (the CLI's helpers only; kernels never allocate) */
    AV_ERR_TOO_LARGE = -14,    /* the sizes are valid but need more memory than this build can address (size_t) */
    AV_ERR_NEEDS_CAUSAL = -15, /* this variant (retention, deltanet) or knob setting (a decay below 1) exists only
                                * with the causal mask */
    AV_ERR_GATES = -16,        /* a gate input (av_params_set_gates, av_params_set_dplr) is outside its range or
                                * its shape does not fit: a log-gate above 0, a beta outside (0, 2], arrays given for
                                * another n, per-channel gates for a family whose gate is one per token */
    /* numerical events (outputs written) */
    AV_WARN_ZERO_ROW = 1,      /* some row's products sum to ≤ 0 (a normaliser ≤ 0 without ε): reported, kept as computed */
    AV_WARN_OVERFLOW = 2,      /* a feature (an exponential or a tensor power) overflowed float range; entries may be Inf/NaN */
    AV_WARN_NO_CONVERGENCE = 3, /* an iterative solver stopped before converging (outputs finite) */
    AV_WARN_PRODUCT_OVERFLOW = 4, /* a product (q·k, φ(q)·φ(k), a power of q·k, a row sum, M·V) exceeded float32
                                   * range although every exponential and feature was finite; entries may be Inf/NaN */
    AV_WARN_UNDERFLOW_ROW = 5  /* some row's products are all 0 in float32 although the variant's are positive by
                                * definition (they underflowed, e.g. focused at p ≳ 6): that row is 0, kept */
};
#define AV_STATUS_MIN AV_ERR_GATES             /* every status is in AV_STATUS_MIN..AV_STATUS_MAX */
#define AV_STATUS_MAX AV_WARN_UNDERFLOW_ROW

/* One English sentence for a status code (never NULL). */
const char *av_status_string(int status);

/* ------------------------------------------------------------------------------------------------ */
/* Variants and their knobs                                                                           */

enum av_variant {
    AV_SOFTMAX = 0,    /* row softmax of scale·QKᵀ, max-subtracted */
    AV_ELU = 1,        /* φ = elu(x)+1, ε = 1e-6 added to the row normaliser */
    AV_RELU = 2,       /* φ = relu(x), ε = 1e-6 */
    AV_EXP = 3,        /* φ = exp(x − c), c per-query max and one global key max (both cancel), ε = 0 */
    AV_EFFICIENT = 4,  /* softmax of each query over its d features × softmax of each key feature over positions; non-causal */
    AV_FOCUSED = 5,    /* φ = f_p((relu(x)+1e-6)/ln 2), ε = n·1e-6; with dwc_kernel > 0, M = A + T (non-causal) */
    AV_LINFORMER = 6,  /* M = softmax(scale·Q(EK)ᵀ)·F, E, F ∈ R^{s×n}; non-causal */
    AV_PERFORMER = 7,  /* FAVOR+ positive random features, m features, ε = 0 in the normaliser */
    AV_TAYLOR = 8,     /* T_p(scale·q·k) = Σ_{r≤p} s^r/r!, order p in 1..4 */
    AV_EXPLIMIT = 9,   /* (1 + scale·q·k/N)^N */
    AV_HEDGEHOG = 10,  /* φ(x) = [exp(Wᵀx − c), exp(−Wᵀx − c)], W default identity */
    AV_NYSTROM = 11,   /* Nyströmformer, segment-mean landmarks, iterative pseudo-inverse; non-causal */
    AV_COSFORMER = 12, /* relu(q)·relu(k)·cos(π(i−j)/(2n)), positions from 1, clamp 1e-6 */
    AV_RETENTION = 13, /* RetNet: M = (scale·QKᵀ) ⊙ D, D_ij = γ^{i−j} (j ≤ i); unnormalised, signed; causal only */
    AV_DELTANET = 14,  /* the delta rule (Gated DeltaNet when decay < 1): S ← αS, S += β·k(v − Sᵀk)ᵀ; causal only */
    /* the gated families (docs/gated.md): gates per token (and per channel) as data, av_params_set_gates */
    AV_SIMPLE_GLA = 15, /* S_t = α_t S_{t−1} + k_t v_tᵀ, α_t = exp(g_t) one per token (Mamba-2 SSD, Gated RetNet) */
    AV_GLA = 16,        /* S_t = Diag(α_t) S_{t−1} + k_t v_tᵀ, α_t ∈ R^d per channel (GLA) */
    AV_GDN = 17,        /* Gated DeltaNet: S' = α_t S_{t−1}, S_t = S' + β_t k̃_t(v_t − S'ᵀk̃_t)ᵀ, one α_t, β_t per token */
    AV_KDA = 18,        /* Kimi Delta Attention: gdn with a per-channel α_t ∈ R^d */
    AV_DPLR = 19,       /* diagonal plus low rank: S_t = (Diag(α_t) + b_t a_tᵀ) S_{t−1} + k_t v_tᵀ (RWKV-7) */
    AV_FOX = 20,        /* Forgetting Transformer: softmax_j≤i(scale·q_i·k_j + Σ_{l=j+1..i} g_l) */
    AV_LOLCATS = 21,    /* window of exp(scale·q·k − m_i) + softmax-feature Hedgehog φ(q)·φ(k) for older keys, one sum */
    AV_VARIANT_COUNT = 22
};

/* ---- the variant registry ------------------------------------------------------------------------
 * One table (src/variants.c) describes every variant: its names, its class, which forms it has, its
 * normaliser rule and the knobs it reads. The library's dispatch, the CLI's flags and help, the page's
 * variant list and knob controls, and the tests' variant lists all read it. docs/variant-formulas.md explains
 * each row; docs/adding-a-variant.md is the checklist for a new one. */

enum av_variant_class {
    AV_CLASS_EXACT = 0,       /* the exact softmax (the reference) */
    AV_CLASS_KERNEL = 1,      /* M = D⁻¹·φ(Q)φ(K)ᵀ with an explicit feature map φ */
    AV_CLASS_CLOSED_FORM = 2, /* M_ij ∝ κ(scale·q_i·k_j) from the closed form; tensor features only below the cap */
    AV_CLASS_LOWRANK = 3,     /* M = softmax-based low-rank factors (projection or landmarks) */
    AV_CLASS_RETENTION = 4,   /* unnormalised decayed linear attention: S ← γS + k vᵀ, o = Sᵀ(scale·q) */
    AV_CLASS_DELTA = 5,       /* the delta rule on unit keys: S ← αS, S += β·k(v − Sᵀk)ᵀ, o = Sᵀ(scale·q) */
    AV_CLASS_GATED = 6,       /* the gated families: per-token (per-channel) gates as data (docs/gated.md) */
    AV_CLASS_HYBRID = 7       /* a softmax window plus a linear (feature-map) term for the older keys (lolcats) */
};
enum av_variant_flag {
    AV_VF_CAUSAL = 1,    /* has a causal (masked) form */
    AV_VF_LINEAR = 2,    /* has the linear-time path av_linear */
    AV_VF_RECURRENT = 4, /* has the recurrent form av_recurrent_step (causal scan of a state) */
    AV_VF_FACTORS = 8,   /* M = L·Rᵀ by av_factors (non-causal) */
    AV_VF_SCALED = 16,   /* reads `scale` (it approximates exp(scale·q·k)) */
    AV_VF_WEIGHTS = 32,  /* reads caller-owned weights (hedgehog_w, av_params_set_hedgehog) */
    AV_VF_CHUNKWISE = 64, /* has the chunkwise form av_chunkwise (causal) */
    AV_VF_CAUSAL_ONLY = 128 /* exists only with the causal mask (av_params_default sets causal = 1) */
};
enum av_norm_rule {
    AV_NORM_EXACT = 0, /* rows of an exact softmax (no ε) */
    AV_NORM_SUM = 1,   /* row sum, no ε (a row summing to exactly 0 is left unnormalised) */
    AV_NORM_ADD = 2,   /* row sum + ε */
    AV_NORM_ADD_N = 3, /* row sum + n·ε */
    AV_NORM_CLAMP = 4, /* max(row sum, ε) */
    AV_NORM_NONE = 5   /* no normaliser: M is the raw (decayed) product, signed (retention, deltanet) */
};
#define AV_VARIANT_MAX_KNOBS 8
typedef struct av_variant_desc {
    const char *name;    /* CLI and link name: "softmax", "elu", ... */
    const char *label;   /* display name: "Performer FAVOR+" */
    const char *formula; /* one line, plain text */
    const char *source;  /* the paper or article */
    int cls;             /* enum av_variant_class */
    unsigned flags;      /* enum av_variant_flag, or-ed */
    int norm;            /* enum av_norm_rule */
    double eps;          /* ε of the rule (0 when the rule has none) */
    int knob_count;
    int knobs[AV_VARIANT_MAX_KNOBS]; /* enum av_knob ids it reads, in display order (scale and causal not listed) */
    double defaults[AV_VARIANT_MAX_KNOBS]; /* this variant's default of knobs[i] where it differs from the knob's
                                            * own (retention's decay 1 − 2⁻⁵); 0: the knob's default */
} av_variant_desc;

enum av_knob_type {
    AV_KT_REAL = 0, /* a real number */
    AV_KT_INT = 1,  /* an integer */
    AV_KT_BOOL = 2, /* 0 or 1 */
    AV_KT_ENUM = 3  /* 0..(options − 1); `options` names them, '|'-separated */
};
enum av_knob_flag {
    AV_KF_ZERO_DEFAULT = 1, /* 0 in av_params means the default (the sokol habit) */
    AV_KF_HI_N = 2,         /* the upper bound is n (hi is ignored) */
    AV_KF_HI_2N = 4,        /* the upper bound is 2n − 1 */
    AV_KF_ODD = 8,          /* nonzero values must be odd */
    AV_KF_DEF_MIN_N = 16,   /* the default is min(n, def) */
    AV_KF_DEF_RSQRT_D = 32, /* the default is 1/√d (def is ignored) */
    AV_KF_NO_CAUSAL = 64,   /* a nonzero value removes the causal form and the factors (focused + DWC) */
    AV_KF_MINUS1_ZERO = 128, /* −1 in av_params stands for a real 0 (0 being the default) */
    AV_KF_NEEDS_CAUSAL = 256 /* a value other than the knob's default needs the causal mask (AV_ERR_NEEDS_CAUSAL) */
};
typedef struct av_knob_desc {
    const char *key;     /* the av_params field and the JS knob key: "p", "dwc_kernel", "m", ... */
    const char *flag;    /* the CLI flag: "--p", "--dwc-kernel"; bool knobs also accept "--no-<name>" */
    int type;            /* enum av_knob_type */
    unsigned flags;      /* enum av_knob_flag, or-ed */
    double lo, hi;       /* the range, inclusive (see AV_KF_HI_N, AV_KF_HI_2N) */
    double def;          /* the default (see AV_KF_DEF_MIN_N, AV_KF_DEF_RSQRT_D) */
    double step;         /* a sensible step for a control */
    const char *options; /* AV_KT_ENUM: the option names, '|'-separated; else NULL */
    const char *meaning; /* one line */
} av_knob_desc;

/* The descriptor of a variant (NULL when out of range) and of a knob (enum av_knob; NULL out of range or
 * for AV_KNOB_VARIANT). Static storage, never freed. */
const av_variant_desc *av_variant_info(int variant);
const av_knob_desc *av_knob_info(int knob);
/* The whole registry as one JSON document (static storage), for callers that cannot read C structs
 * (the JS loader): {"variants": [{name, label, formula, source, class, causal, linear, recurrent,
 * factors, scaled, weights, norm, eps, knobs: [key, …]}, …], "knobs": [{key, flag, type, lo, hi, hi_rule,
 * def, def_rule, zero_default, minus1_zero, odd, no_causal, step, options, meaning}, …], "limits": {…}, "status": {…}}.
 * docs/api.md describes every field. */
const char *av_registry_json(void);

/* Lower-case CLI name of a variant ("softmax", "elu", ..., "cosformer"), or NULL when out of range. */
const char *av_variant_name(int variant);
/* Variant id from its CLI name, or -1. */
int av_variant_from_name(const char *name);

enum av_ef_kind { AV_EF_GAUSSIAN = 0, AV_EF_MEAN = 1 };

#define AV_MAX_FEATURE_DIM 65536 /* the feature-dimension cap (docs/conventions.md; Taylor, explimit) */
#define AV_MAX_N 16384           /* largest sequence length accepted */
#define AV_MAX_D 4096            /* largest head dimension accepted */

/* The build's limits, for callers that cannot read the macros (the JS loader): AV_LIMIT_MAX_N → AV_MAX_N,
 * AV_LIMIT_MAX_D → AV_MAX_D, AV_LIMIT_MAX_FEATURE_DIM → AV_MAX_FEATURE_DIM, AV_LIMIT_STATUS_MIN/MAX → the
 * status range, AV_LIMIT_SIZE_MAX → the largest byte count this build's size_t holds (2³² − 1 in WASM).
 * −1 for an unknown key. */
enum av_limit_key {
    AV_LIMIT_MAX_N = 0, AV_LIMIT_MAX_D, AV_LIMIT_MAX_FEATURE_DIM, AV_LIMIT_STATUS_MIN, AV_LIMIT_STATUS_MAX,
    AV_LIMIT_SIZE_MAX, AV_LIMIT_COUNT
};
double av_limit(int key);

/* Knobs of one variant. Fill with av_params_default() then set what you need (from JS: av_params_set).
 * Zero means default unless a field says otherwise. Fields a variant does not read are ignored. */
typedef struct av_params {
    int variant;          /* enum av_variant */
    int causal;           /* 0 or 1 */
    double scale;         /* multiplies q·k for softmax, linformer, performer, taylor, explimit, nystrom; 0 → 1/√d */
    double p;             /* focused power, 1..10; 0 → 3 */
    int dwc_kernel;       /* focused DWC kernel size, odd, 1..2n−1; 0 means no DWC (not a default) */
    int s;                /* linformer projected length 1..n; 0 → min(n, 64) */
    int ef_kind;          /* enum av_ef_kind; 0 → gaussian */
    int ef_shared;        /* 1: E = F */
    int m;                /* performer random features, 1..65536; 0 → 256 */
    int orthogonal;       /* performer: 1 = orthogonal blocks with χ(d) row norms, 0 = iid */
    uint32_t seed;        /* random matrices (performer ω, linformer E/F, DWC weights); "redraw" is seed + 1 */
    int order;            /* taylor order 1..4; 0 → 2 */
    int N;                /* explimit power 1..64; 0 → 2 */
    const float *hedgehog_w; /* hedgehog's (and lolcats's) W, d×hedgehog_cols row-major; NULL → identity (cols = d) */
    int hedgehog_cols;    /* columns of W (D/2); ignored when hedgehog_w is NULL */
    int landmarks;        /* nystrom landmarks 1..n; 0 → min(n, 64) */
    int iters;            /* nystrom pseudo-inverse iterations 0..100; 0 → 6 (set -1 for zero iterations: Z = Z₀) */
    double feature_eps;   /* performer: the ε added inside φ, 0..1e-2; 0 → 1e-6 (set -1 for a real 0); the
                           * reference PyTorch code uses 1e-4 */
    double decay;         /* γ in (0, 1]: each step multiplies the state by γ (docs/recurrent.md); 0 → 1, retention's
                           * 0 → 1 − 2⁻⁵. Below 1 it needs causal: kernel variants, softmax (the forgetting softmax),
                           * retention, deltanet (α, applied before the delta step) */
    int window;           /* softmax: row i sees keys with |i − j| < window (and j ≤ i when causal), ≥ 1; 0: no window.
                           * lolcats: the exact-softmax window i − W < j ≤ i (av_params_default: 16; 0 or ≥ n:
                           * every key, i.e. causal softmax) */
    double beta;          /* deltanet's write strength β in (0, 2]; 0 → 0.5 */
    int chunk;            /* the chunkwise form's chunk size C ≥ 1, clamped to n; 0 → min(n, 64) */
    /* The gated families' inputs (docs/gated.md), caller-owned like hedgehog_w: set them with
     * av_params_set_gates and av_params_set_dplr, which record the n they were given for; every call checks
     * that n, the shapes and the ranges (AV_ERR_GATES, AV_ERR_NONFINITE) before computing. NULL: the constant
     * case from the knobs, g_t = ln(decay) and β_t = beta for every token, a = b = 0. */
    const float *gates;   /* log-gates g ≤ 0: gates_n values (one per token) or gates_n×d (per token and channel) */
    int gate_channels;    /* 1 or d: the columns of `gates` */
    const float *betas;   /* β_t in (0, 2], gates_n values (gdn, kda) */
    const float *dplr_a;  /* dplr's read vectors a_t (gates_n×d), the state is read with before step t's decay */
    const float *dplr_b;  /* dplr's write vectors b_t (gates_n×d) */
    int gates_n;          /* the sequence length the arrays above were set for */
    int qk_l2norm;        /* q, k ← x/√(Σx² + 1e-6) before the scale: 0 → the variant's default (on for gdn and
                           * kda, off for the others), 1 on, −1 off */
} av_params;

/* Fill *prm with the defaults of `variant` (all knobs zero = default; causal off, or on for a variant that
 * exists only causal: AV_VF_CAUSAL_ONLY). */
int av_params_default(av_params *prm, int variant);

/* Knob keys for av_params_set / av_params_get (the JS side never needs the struct layout). */
enum av_knob {
    AV_KNOB_VARIANT = 0, AV_KNOB_CAUSAL, AV_KNOB_SCALE, AV_KNOB_P, AV_KNOB_DWC_KERNEL, AV_KNOB_S,
    AV_KNOB_EF_KIND, AV_KNOB_EF_SHARED, AV_KNOB_M, AV_KNOB_ORTHOGONAL, AV_KNOB_SEED, AV_KNOB_ORDER,
    AV_KNOB_N, AV_KNOB_LANDMARKS, AV_KNOB_ITERS, AV_KNOB_FEATURE_EPS, AV_KNOB_DECAY, AV_KNOB_WINDOW,
    AV_KNOB_BETA, AV_KNOB_CHUNK, AV_KNOB_QK_L2NORM, AV_KNOB_COUNT
};
/* Set one knob from a double (integers are rounded). AV_ERR_VARIANT for an unknown key. Ranges are
 * checked by the kernels (which know n and d), not here. */
int av_params_set(av_params *prm, int knob, double value);
double av_params_get(const av_params *prm, int knob);
/* Point the Hedgehog W at caller-owned memory (d×cols, row-major); W = NULL restores the identity. */
int av_params_set_hedgehog(av_params *prm, const float *W, int cols);
/* The gated families' inputs (caller-owned, kept while prm is used; docs/gated.md), for sequences of n tokens:
 *   g      log-gates, n values (channels = 1) or n×d row-major (channels = d; d is checked at the call), or NULL
 *          for the constant case g_t = ln(decay);
 *   beta   β_t, n values, or NULL for the constant beta knob.
 * av_params_set_dplr: dplr's a and b (n×d each, both or neither; NULL: zero, the family is then gla).
 * Here only the pointers, n and channels are recorded (AV_ERR_SIZE for n outside 1..AV_MAX_N or channels outside
 * 1..AV_MAX_D; AV_ERR_GATES when the other setter's arrays are set for another n: all share one n); the values
 * are checked by every call that reads them. NULL everywhere clears the arrays. */
int av_params_set_gates(av_params *prm, const float *g, int n, int channels, const float *beta);
int av_params_set_dplr(av_params *prm, const float *a, const float *b, int n);
/* sizeof(av_params), for callers (JS) that allocate it in wasm memory. */
size_t av_params_size(void);

/* Resolve the zero defaults against n and d and check every knob the variant reads: AV_OK,
 * AV_ERR_KNOB, AV_ERR_VARIANT, or AV_ERR_NO_CAUSAL. `out` may alias `in`. */
int av_params_resolve(av_params *out, const av_params *in, int n, int d);
/* av_params_resolve that also says which knob failed: *bad_knob gets the enum av_knob of the first knob
 * out of range (AV_ERR_KNOB), or of the knob that removes the causal form (AV_ERR_NO_CAUSAL: AV_KNOB_CAUSAL
 * when the variant has none at all), or of the knob that needs it (AV_ERR_NEEDS_CAUSAL: AV_KNOB_DECAY, or
 * AV_KNOB_CAUSAL for a variant that exists only causal), else −1. bad_knob may be NULL. */
int av_params_check(av_params *out, const av_params *in, int n, int d, int *bad_knob);

/* ------------------------------------------------------------------------------------------------ */
/* Attention: the quadratic path                                                                      */

/* Bytes of workspace av_matrix / av_attend need for these knobs and sizes (0 on bad arguments). */
size_t av_matrix_work(const av_params *prm, int n, int d);

/* M[n×n] = the variant's attention matrix, or its effective n×n map (Linformer P̄F, Nyström F·Z·B,
 * focused + DWC: A + T). Masked entries (causal, j > i) are 0.
 * [out] M      n×n
 * [in]  Q, K   n×d
 * Returns AV_OK, a negative error, or AV_WARN_ZERO_ROW (M written, finite); AV_WARN_OVERFLOW (a feature
 * or an exponential overflowed) or AV_WARN_PRODUCT_OVERFLOW (q·k, φ(q)·φ(k) or a row sum left float32
 * range): M written, entries may be Inf/NaN. */
int av_matrix(float *M, const float *Q, const float *K, int n, int d,
              const av_params *prm, void *work, size_t work_bytes);

/* O[n×dv] = M·V with M from av_matrix (the quadratic path). M is written too when not NULL;
 * when M is NULL the n×n matrix lives in the workspace (av_matrix_work + n·n·4 bytes: use av_attend_work).
 * Statuses as av_matrix; AV_WARN_PRODUCT_OVERFLOW also when M is finite but M·V leaves float32 range. */
size_t av_attend_work(const av_params *prm, int n, int d, int dv);
int av_attend(float *O, float *M, const float *Q, const float *K, const float *V, int n, int d, int dv,
              const av_params *prm, void *work, size_t work_bytes);

/* The raw scores S[n×n] = scale·QKᵀ (apply_exp = 0), or exp(scale·QKᵀ − max) (apply_exp = 1, one global
 * max subtracted so nothing overflows; the spectrum's shape is unchanged). No mask. These are the QKᵀ
 * and exp(QKᵀ) curves the spectrum view overlays. scale 0 → 1/√d. AV_WARN_PRODUCT_OVERFLOW when some
 * scale·q·k leaves float32 range (S written, entries may be Inf/NaN). */
int av_scores(float *S, const float *Q, const float *K, int n, int d, double scale, int apply_exp);

/* ------------------------------------------------------------------------------------------------ */
/* Attention: feature maps, the linear-time path and the recurrent form                               */

/* Feature dimension r of a kernel variant (elu, relu, exp, efficient, focused, performer, taylor,
 * explimit, hedgehog, cosformer) at these sizes. AV_ERR_NO_LINEAR for softmax, linformer, nystrom and
 * focused + DWC; AV_ERR_FEATURE_DIM (with *r still set) when r > AV_MAX_FEATURE_DIM. */
int av_feature_dim(long *r, const av_params *prm, int n, int d);

/* Φ_Q[n×r], Φ_K[n×r]: the feature maps applied to Q and K (stabilisers included; for cosFormer the
 * position factors sin θ_i, cos θ_i; for Efficient Attention ρ_q(Q), ρ_k(K)). AV_WARN_OVERFLOW when a
 * feature left float range (Φ written, entries may be Inf/NaN). */
size_t av_features_work(const av_params *prm, int n, int d);
int av_features(float *PhiQ, float *PhiK, const float *Q, const float *K, int n, int d,
                const av_params *prm, void *work, size_t work_bytes);

/* The random matrices a variant draws from its feature seed, exactly as it uses them (so that a host, or
 * an exported numpy script, can recompute M from Q, K and these):
 *   AV_RANDOM_OMEGA  Performer's ω, m×d (iid, or orthogonal rows with χ(d) norms: docs/variant-formulas.md)
 *   AV_RANDOM_E      Linformer's E, s×n (ef_kind gaussian: N(0, 1/s); ef_kind mean: the segment means)
 *   AV_RANDOM_F      Linformer's F, s×n (F = E when ef_shared, or for the mean kind)
 *   AV_RANDOM_DWC    focused + DWC's kernel w, 1×k (T_ij = w[j − i + (k−1)/2] for |j − i| ≤ (k−1)/2)
 * *rows, *cols are set whenever the status is AV_OK; `out` (rows·cols floats) may be NULL to ask the shape.
 * AV_ERR_NO_LINEAR when this variant and knob setting draws no such matrix (e.g. OMEGA for softmax, DWC
 * with dwc_kernel = 0); AV_ERR_VARIANT for an unknown `which`. */
enum av_random_kind { AV_RANDOM_OMEGA = 0, AV_RANDOM_E = 1, AV_RANDOM_F = 2, AV_RANDOM_DWC = 3 };
size_t av_random_work(int which, const av_params *prm, int n, int d);
int av_random_matrix(float *out, long *rows, long *cols, int which, const av_params *prm, int n, int d,
                     void *work, size_t work_bytes);

/* The linear-time output that never forms n×n:
 *   non-causal  O_i = Φ_Q(i)ᵀ [Φ_Kᵀ V] / (Φ_Q(i)·Σ_j Φ_K(j) + ε)           O(n·r·dv)
 *   causal      the same with prefix sums over j ≤ i (a scan of av_recurrent_step; decayed when decay < 1)
 * Also Linformer P̄(FV) and Nyström F(Z(BV)), non-causal, and focused + DWC (the above plus T·V, O(n·k·dv)).
 * Retention and deltanet: their chunkwise form (av_chunkwise), the linear-time algorithm they are run by.
 * A row whose normaliser is exactly 0 (ε = 0 variants) is left unnormalised (its numerators), never NaN.
 * AV_WARN_OVERFLOW (a feature overflowed) or AV_WARN_PRODUCT_OVERFLOW (a product left float32 range):
 * O written, entries may be Inf/NaN. */
size_t av_linear_work(const av_params *prm, int n, int d, int dv);
int av_linear(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
              const av_params *prm, void *work, size_t work_bytes);

/* One step of the recurrent form, in float64 state (γ: the decay knob, 1 unless set):
 *   S ← γS + φ(k_t) v_tᵀ   (S is r×dv, row-major)     z ← γz + φ(k_t)   (z has r entries)
 *   o_t = Sᵀφ(q_t) / (φ(q_t)·z + ε)  with the variant's normaliser rule (ε added, n·ε, or a clamp).
 * Retention: the same S, no z and no normaliser (o_t = Sᵀφ(q_t)). Deltanet: S ← αS, u = β(v_t − Sᵀφ(k_t)),
 * S ← S + φ(k_t)uᵀ, o_t = Sᵀφ(q_t) (z untouched). Their features (av_features, r = d) are scale·q and k,
 * for deltanet of the unit-normalised rows.
 * phi_q, phi_k: r features of token t (rows of av_features). `n` is the sequence length (the focused
 * ε is n·1e-6). Start with S = 0, z = 0. Returns AV_WARN_ZERO_ROW when the normaliser is ≤ 0, and
 * AV_WARN_PRODUCT_OVERFLOW when o left float32 range (o may hold Inf/NaN). */
int av_recurrent_step(float *o, double *S, double *z, const float *phi_q, const float *phi_k,
                      const float *v, long r, int dv, int n, const av_params *prm);

/* One token of a gated family's recurrence (docs/gated.md), float64 state S (d×dv, row-major; start at 0):
 * q, k: the token's raw rows (d; the step applies qk_l2norm and the scale as the knobs say), v (dv); g: its
 * log-gate, 1 value or d (gate_channels of prm; NULL: ln(decay)); beta: its β (gdn, kda; ignored otherwise);
 * a, b: its dplr vectors (d each; NULL: zero). o (dv) = S_tᵀq̃_t after the step. prm's gate arrays are not
 * read. AV_ERR_NO_LINEAR for a variant outside the gated families' state forms (fox has no constant-size
 * state), AV_ERR_GATES for g > 0 or β outside (0, 2], AV_ERR_NONFINITE, AV_WARN_PRODUCT_OVERFLOW when o or S
 * left the float range. */
int av_gated_step(float *o, double *S, const float *q, const float *k, const float *v, const float *g, double beta,
                  const float *a, const float *b, int d, int dv, const av_params *prm);

/* RWKV-7's read and write vectors for dplr (docs/gated.md "dplr"; fla's RWKV7Attention): from K (n×d, the layer's
 * k ⊙ k_k), κ̂_t = K_t / max(‖K_t‖, 1e-12) (torch's F.normalize, the layer's default; a zero row stays zero),
 * a_t = −κ̂_t, b_t = κ̂_t ⊙ η_t with η the in-context learning rate: a_icl (n×d, each in [0, 1]: the layer's
 * sigmoid(a_lora x)), or a_icl_const for every entry when a_icl is NULL. a, b: n×d each (then
 * av_params_set_dplr). The rest of RWKV-7 is the caller's: its log-decay, w = −e^{−1/2}·sigmoid(·) per channel,
 * lies in (−e^{−1/2}, 0), so α ∈ (0.545, 1) (av_params_set_gates, channels d); scale 1; the layer's k written
 * is k ⊙ (1 + (η − 1) ⊙ k_a). AV_ERR_NULL, AV_ERR_SIZE (n, d), AV_ERR_NONFINITE (K, a_icl), AV_ERR_GATES (a
 * rate outside [0, 1]); nothing is written unless AV_OK. */
int av_rwkv7_vectors(float *a, float *b, const float *K, int n, int d, const float *a_icl, double a_icl_const);

/* The causal output O[n×dv] by the two forms that read the sequence in order (docs/recurrent.md); both need
 * prm->causal = 1 (else AV_ERR_NEEDS_CAUSAL) and agree with av_attend's M·V to float precision.
 *   av_recurrent   token by token: the state scan of av_recurrent_step (kernel variants, retention,
 *                  deltanet; float64 state), or for softmax a key/value cache: all earlier tokens (their
 *                  weights fading by γ^{t−j} when decay < 1: no constant-size state exists), or the last
 *                  `window` of them (a cache of W entries).
 *   av_chunkwise   chunks of C = min(chunk, n) tokens: within a chunk the masked C×C products, across chunks a
 *                  carried state (kernel variants and retention: S ← γ^C S + Σ γ^{C−1−b} k_b v_bᵀ; deltanet:
 *                  the WY / UT transform, T = (I + stril(β·KKᵀ ⊙ Γ))⁻¹β per chunk), O(n·C·(r + dv) + n·r·dv);
 *                  for softmax the flash-attention tiling (an online softmax over key chunks; with a window
 *                  only the chunks it reaches, O(n·(C + W)·d)).
 * AV_ERR_NO_LINEAR for variants without the form (efficient, linformer, nystrom; focused + DWC; a feature
 * dimension above the cap is AV_ERR_FEATURE_DIM). Statuses otherwise as av_linear. */
size_t av_recurrent_work(const av_params *prm, int n, int d, int dv);
int av_recurrent(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                 const av_params *prm, void *work, size_t work_bytes);
size_t av_chunkwise_work(const av_params *prm, int n, int d, int dv);
int av_chunkwise(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv,
                 const av_params *prm, void *work, size_t work_bytes);

/* ------------------------------------------------------------------------------------------------ */
/* Mechanisms (docs/mechanisms.md): a memory's recall, and Hedgehog's feature map learning softmax     */

/* Recall from a memory of fixed size. The protocol's pairs: K[N×d] unit keys (rows of N(0, I_d) draws,
 * normalised) and V[N×d] ~ N(0, I_d), drawn from their own stream seeded with `seed` (the same bits natively
 * and in WASM). AV_ERR_NULL, AV_ERR_SIZE (N outside 1..AV_MAX_N, d outside 1..AV_MAX_D). */
int av_recall_draw(float *K, float *V, int N, int d, uint32_t seed);
/* err[i] = ‖o_i − v_i‖ / ‖v_i‖ (0 when v_i = 0 = o_i; 1 when v_i = 0 ≠ o_i… never for drawn pairs), where
 * o_i reads pair i's key from the memory after all N pairs (K[N×d], V[N×d]) were written in order:
 *   softmax      o_i = Σ_j softmax_j(scale·k_i·k_j + (N−1−j)·ln γ) v_j over the stored pairs (the last W
 *                with a window), no mask;
 *   recurrent    the variant's state after the N steps of av_recurrent_step (decay, the delta rule's
 *                overwrite), read with φ_q(k_i) by its normaliser rule (av_features with Q = K: query i is
 *                read at position i where features depend on position).
 * `scale` is absolute here: 0 means 1 (not 1/√d), since the keys are unit vectors. The causal flag is
 * ignored (a memory is written in order); decay and the causal-only variants are allowed. AV_ERR_NO_LINEAR
 * for variants without a state (efficient, linformer, nystrom; focused + DWC); AV_ERR_FEATURE_DIM above the
 * cap; AV_ERR_NONFINITE; AV_WARN_ZERO_ROW when some read's normaliser is ≤ 0 (errors written, finite);
 * AV_WARN_OVERFLOW (a feature overflowed) or AV_WARN_PRODUCT_OVERFLOW (a logit scale·k_i·k_j, the state or a
 * read left the float range, e.g. a scale near DBL_MAX) when some err[i] is Inf or NaN. */
size_t av_recall_work(const av_params *prm, int N, int d);
int av_recall_pairs(double *err, const float *K, const float *V, int N, int d, const av_params *prm,
                    void *work, size_t work_bytes);

/* Hedgehog distillation: W (d×cols, row-major, float64) of the Hedgehog feature map φ(x) = exp([Wᵀx, −Wᵀx])
 * (the library's stabilising constants cancel), trained so that its attention H mimics softmax attention A
 * on the same Q, K: A is av_matrix's softmax with prm's scale and mask (prm->causal; its other knobs are
 * ignored). The loss is the mean row KL(A_i ‖ H_i) = cross-entropy − the entropy of A_i (0 for a perfect
 * match), computed in float64.
 *   av_distill_loss  the loss and (grad ≠ NULL) its analytic gradient dL/dW (d×cols).
 *   av_distill       `steps` steps of Adam (β₁ 0.9, β₂ 0.999, ε 1e-8; learning rate lr > 0, 0 → 0.05) from W,
 *                    updated in place; moments (2·d·cols doubles: first, then second) and t0 (steps already
 *                    taken) carry Adam's state across calls (t0 = 0 zeroes the moments; with t0 > 0 they must
 *                    be finite, AV_ERR_NONFINITE, and the second ones ≥ 0, AV_ERR_KNOB). loss[k] (NULL
 *                    allowed) gets the loss at the start of step k. A step whose loss or gradient is not
 *                    finite (AV_WARN_OVERFLOW), or whose update would leave the double range (a huge lr:
 *                    AV_WARN_PRODUCT_OVERFLOW), is not taken: W and the moments as before that step, the
 *                    later loss[] NaN. A target (softmax of QKᵀ) that is not finite takes no step: every
 *                    loss[] NaN, W and the moments untouched, and av_matrix's warning for that target (also
 *                    av_distill_loss's, with *loss NaN). Errors are returned before anything is written.
 * cols in 1..AV_MAX_FEATURE_DIM/2; statuses as av_matrix's plus AV_ERR_KNOB for lr, steps or t0 < 0 and for
 * t0 + steps > INT_MAX.
 * With prm->variant = AV_LOLCATS the student is lolcats (docs/variant-formulas.md): its window and scale from prm
 * (resolved: causal only, else AV_ERR_NEEDS_CAUSAL; prm's hedgehog_w is not read, W is), the window's terms
 * exp(scale·q·k − m_i) fixed and the older keys' φ(q)·φ(k) trained; the same loss, its analytic gradient. */
size_t av_distill_work(const av_params *prm, int n, int d, int cols);
int av_distill_loss(double *loss, double *grad, const double *W, int cols, const float *Q, const float *K, int n,
                    int d, const av_params *prm, void *work, size_t work_bytes);
int av_distill(double *W, double *moments, int t0, double *loss, int steps, double lr, int cols, const float *Q,
               const float *K, int n, int d, const av_params *prm, void *work, size_t work_bytes);

/* ------------------------------------------------------------------------------------------------ */
/* Low-rank factors: M = L·Rᵀ without forming M                                                       */

/* Rank bound r of the factors (feature dimension, s, or landmarks); AV_ERR_NO_LINEAR where none
 * (softmax, causal kernel variants, focused + DWC). */
int av_factor_rank(long *r, const av_params *prm, int n, int d);
/* L[n×r], R[n×r] with M = L·Rᵀ exactly (up to rounding): kernel variants L = c·D⁻¹Φ_Q, R = Φ_K/c, where
 * c = 1 unless D⁻¹Φ_Q would leave float range (huge queries against tiny keys), when c balances the
 * largest entries of L and R; Linformer L = P̄, R = Fᵀ; Nyström L = F·Z, R = Bᵀ.
 * AV_WARN_OVERFLOW / AV_WARN_PRODUCT_OVERFLOW: L or R written, entries may be Inf/NaN. */
size_t av_factors_work(const av_params *prm, int n, int d);
int av_factors(float *L, float *R, const float *Q, const float *K, int n, int d,
               const av_params *prm, void *work, size_t work_bytes);
/* The heatmap of M = L·Rᵀ (L, R n×r, row-major) without forming M: out[c×c], c = ⌈n/b⌉, cell (I, J) the
 * mean of M over rows I·b … and columns J·b … (the last block may be smaller), computed as L̄_I·R̄_J from
 * the factors' block means: O(n·r + c²·r), sums in float64. 1 ≤ b ≤ n. Non-finite factors give
 * non-finite cells. */
size_t av_lowrank_block_mean_work(int n, long r, int b);
int av_lowrank_block_mean(float *out, const float *L, const float *R, int n, long r, int b, void *work,
                          size_t work_bytes);
/* The heatmap of a formed n×n matrix X, or of the difference X − Y when Y is not NULL (both row-major):
 * out[c×c], c = ⌈n/b⌉, cell (I, J) summarising the block of rows I·b … and columns J·b … (the last block
 * may be smaller). AV_DS_MEAN: the block's mean, summed in float64 (of X − Y: the mean of the entries'
 * differences, exact in float64). AV_DS_MAX: the largest entry, so that a spike stays visible; of X − Y the
 * entry of largest magnitude with its sign (ties to the leftmost column, then the topmost row). A block
 * with a NaN or ±Inf entry gives a non-finite cell (in AV_DS_MAX the first such entry, columns taken left
 * to right and each top to bottom): an overflow is never averaged or maxed away. 1 ≤ b ≤ n.
 * AV_ERR_KNOB for another mode. Work: n doubles (av_downsample_work). */
enum av_downsample_mode { AV_DS_MEAN = 0, AV_DS_MAX = 1 };
size_t av_downsample_work(int n, int b);
int av_downsample(float *out, const float *X, const float *Y, int n, int b, int mode, void *work,
                  size_t work_bytes);

/* ------------------------------------------------------------------------------------------------ */
/* Synthetic inputs (docs/conventions.md): seeded, the same bits natively and in WASM                */

enum av_generator {
    AV_GEN_GAUSSIAN = 0,   /* q, k, v ~ N(0, std²) */
    AV_GEN_CLUSTERED = 1,  /* keys around a few centres, queries near those centres */
    AV_GEN_LOCAL = 2,      /* positional pattern: q_i·k_j large when |i − j| small */
    AV_GEN_LOW_RANK = 3,   /* Q, K of planted low rank */
    AV_GEN_SINK = 4,       /* an attention-sink token every query attends to */
    AV_GEN_COUNT = 5
};
const char *av_generator_name(int gen);       /* "gaussian", "clustered", "local", "lowrank", "sink" */
int av_generator_from_name(const char *name); /* or -1 */

/* Q, K, V (each n×d) from generator `gen` with spread `std` in (0, 1e6] and `seed`; V ~ N(0, std²).
 * AV_ERR_NULL, AV_ERR_SIZE, AV_ERR_VARIANT (unknown gen) or AV_ERR_KNOB (std) on bad arguments. */
int av_generate(float *Q, float *K, float *V, int n, int d, int gen, double std, uint32_t seed);

/* Gate generators for the gated families (docs/gated.md, "Generated gates"): seeded, the same bits natively
 * and in WebAssembly (the portable stream and av_portable_log/exp/cos only). g gets log-gates (n×channels,
 * row-major; channels 1 for one gate per token, d for one per token and channel), every value ≤ 0, a reset
 * −30; beta gets n values in (0, 2]. α is the decay factor exp(g). Statuses: AV_ERR_NULL, AV_ERR_SIZE (n
 * outside 1..AV_MAX_N, channels or d outside 1..AV_MAX_D), AV_ERR_KNOB (a knob outside its range: α, lo, hi
 * in (0, 1] with lo ≤ hi; β's in (0, 2]; period < 0; a position outside 0..n−1; rate outside [0, 1];
 * wavelength outside [2, 1e9]; A outside [−1e3, 0); dt outside (0, 10]), AV_ERR_NONFINITE (K holds NaN/Inf). */
enum av_gate_gen {
    AV_GATES_CONSTANT = 0,   /* g = ln α everywhere */
    AV_GATES_UNIFORM = 1,    /* α ~ U[lo, hi], one draw per token and channel */
    AV_GATES_RESETS = 2,     /* g = ln α, and −30 (a reset) at chosen positions, every `period` tokens, at random */
    AV_GATES_SLOW = 3,       /* α between lo and hi along a cosine of `wavelength` tokens, a random phase per channel */
    AV_GATES_PROJECTION = 4, /* fla's GLA layer: g = logsigmoid(K·W)/16, W (d×channels) ~ N(0, 1/d) */
    AV_GATES_MAMBA2 = 5,     /* Mamba-2: Δ = softplus(K·w + softplus⁻¹(dt)), g = A·Δ, and K ← Δ·K */
    AV_GATES_COUNT = 6
};
const char *av_gate_generator_name(int kind);       /* "constant", "uniform", "resets", "slow", "projection", "mamba2" */
int av_gate_generator_from_name(const char *name);  /* or -1 */
int av_gates_constant(float *g, int n, int channels, double alpha);
int av_gates_uniform(float *g, int n, int channels, double lo, double hi, uint32_t seed);
/* Resets (g = −30, every channel) at the union of: at[0..count) (at may be NULL when count is 0), every
 * token t > 0 with t % period = 0 (period 0: none), and each token t > 0 with probability rate (0: none). A
 * reset at t clears the state before token t writes: tokens t.. start a new block of M. */
int av_gates_resets(float *g, int n, int channels, double alpha, int period, const int *at, int count, double rate,
                    uint32_t seed);
int av_gates_slow(float *g, int n, int channels, double lo, double hi, double wavelength, uint32_t seed);
int av_gates_projection(float *g, const float *K, int n, int d, int channels, uint32_t seed);
/* Mamba-2's gate (docs/gated.md, simple_gla): one Δ_t > 0 per token; K (n×d) is scaled in place row by row
 * to Δ_t·k_t (k = Δ·B), g (n) = A·Δ_t; delta (n, or NULL) gets Δ. */
int av_gates_mamba2(float *g, float *delta, float *K, int n, int d, double A, double dt, uint32_t seed);
/* β per token: constant, uniform in [lo, hi] ⊂ (0, 2], or hi·sigmoid(K·w) with w (d) ~ N(0, 1/d) (fla's
 * gdn and kda layers: hi = 1, or 2 with allow_neg_eigval); never 0 (floored at FLT_MIN). */
int av_betas_constant(float *beta, int n, double b);
int av_betas_uniform(float *beta, int n, double lo, double hi, uint32_t seed);
int av_betas_projection(float *beta, const float *K, int n, int d, double hi, uint32_t seed);

/* The portable random stream (xoshiro256** seeded by splitmix64) and its transforms: no libm in the
 * draw, so the same seed gives the same bits on every platform. */
typedef struct av_rng { uint64_t s[4]; } av_rng;
void av_rng_seed(av_rng *rng, uint64_t seed);
uint64_t av_rng_next(av_rng *rng);
double av_rng_uniform(av_rng *rng);  /* [0, 1), 53 bits */
double av_rng_normal(av_rng *rng);   /* N(0, 1), Marsaglia polar with the library's portable log */
double av_portable_log(double x);    /* ln x for x > 0 by +, −, ×, ÷ only; bit-reproducible */
double av_portable_exp(double x);    /* e^x by +, −, ×, ÷ only */
double av_portable_cos(double x);    /* cos x by +, −, ×, ÷ only */

/* ------------------------------------------------------------------------------------------------ */
/* .npy (float32/float64, C order, format versions 1 and 2)                                          */

#define AV_NPY_MAX_DIM 8
typedef struct av_npy_info {
    int ndim;
    int64_t shape[AV_NPY_MAX_DIM];
    int dtype_bytes;      /* 4 (float32) or 8 (float64), little-endian */
    size_t data_offset;   /* bytes from the start of the file to the data */
    size_t count;         /* number of elements (product of shape) */
} av_npy_info;

/* Parse and validate a .npy header in buf[0..len). AV_ERR_FORMAT with a reason for anything else
 * (bad magic, version, Fortran order, dtype, absurd shape, data shorter than the shape says). */
int av_npy_parse(av_npy_info *info, const unsigned char *buf, size_t len);
/* The last parse failure's reason as one sentence (thread-unsafe, static storage). */
const char *av_npy_error(void);
/* Convert the data of a parsed buffer to float32 (out has info->count entries). */
int av_npy_decode_f32(float *out, const av_npy_info *info, const unsigned char *buf, size_t len);
/* Write a version-1 header for a C-order array of float32 (dtype_bytes 4) or float64 (8) into
 * buf[0..cap); *header_len gets its length (a multiple of 64). AV_ERR_SIZE for ndim outside 0..8, a
 * bad shape or a small cap; AV_ERR_FORMAT for dtype_bytes other than 4 or 8. */
int av_npy_write_header(unsigned char *buf, size_t cap, size_t *header_len, const int64_t *shape,
                        int ndim, int dtype_bytes);

/* ------------------------------------------------------------------------------------------------ */
/* Spectrum (routes and noise floors: docs/readouts.md)                                              */

/* Singular values of an n×n float32 matrix (1 ≤ n ≤ AV_MAX_N), descending, into sv[n] (float64, ≥ 0).
 * AV_SVD_FAST:     eigenvalues of M·Mᵀ in float64 (Householder tridiagonalisation + root-free QL),
 *                  σ = √max(λ, 0). Within 1e-9 relative for σ ≥ 1e-3·σ₁ and 1e-3 for σ ≥ 1e-6·σ₁;
 *                  noise floor √(n·ε)·σ₁ (ε = 2⁻⁵², about 1.5e-8·√n·σ₁).
 * AV_SVD_ACCURATE: Householder bidiagonalisation, then the bidiagonal's σ by dqds (LAPACK dlasq's
 *                  algorithm, relatively accurate): within a few ε·σ₁ absolute; noise floor n·ε·σ₁.
 * [out] *noise_floor  the absolute level at and below which the route cannot resolve σ.
 * work: av_svd_work(n, route) bytes (any 8-byte alignment; 0 is returned for bad arguments).
 * Returns AV_OK, AV_ERR_NULL, AV_ERR_SIZE, AV_ERR_VARIANT (unknown route), AV_ERR_WORKSPACE,
 * AV_ERR_NONFINITE, or AV_WARN_NO_CONVERGENCE (sv written, possibly inaccurate). */
enum av_svd_route { AV_SVD_FAST = 0, AV_SVD_ACCURATE = 1 };
size_t av_svd_work(int n, int route);
int av_singular_values(double *sv, double *noise_floor, const float *M, int n, int route,
                       void *work, size_t work_bytes);
/* Exact spectrum of M = L·Rᵀ (L, R n×r row-major float32, 1 ≤ r ≤ AV_MAX_FEATURE_DIM) without forming M:
 * thin Householder QRs of L and R in float64, then σ(R_L·R_Rᵀ) by the accurate route, O(n·r²); sv[n]
 * descending with exact zeros past r. When r ≥ n, L·Rᵀ is formed in float64 and takes the accurate route.
 * *noise_floor: min(n, r)·ε·σ₁, or (n + r)·ε·‖L‖_F·‖R‖_F (the QRs' rounding) when larger and r < n.
 * Status codes as av_singular_values. */
size_t av_lowrank_svd_work(int n, long r);
int av_lowrank_singular_values(double *sv, double *noise_floor, const float *L, const float *R, int n,
                               long r, void *work, size_t work_bytes);

/* The semiseparable rank of M (n×n, n ≥ 2; docs/readouts.md): the numerical rank of the block M[h:n, 0:h],
 * h = ⌊n/2⌋, the state size a recurrence needs to produce M. Counts the block's singular values (by
 * `route`) above max(sigma1·n·FLT_EPSILON, noise_floor, the block route's own floor), where sigma1 and
 * noise_floor are M's (its rank readout's tolerance; pass sigma1 < 0 to have the block's σ₁ stand in).
 * *rank gets the count; block_sv, when not NULL, the block's h singular values (descending).
 * work: av_semiseparable_work(n, route) bytes. Statuses as av_singular_values (AV_ERR_SIZE for n < 2). */
size_t av_semiseparable_work(int n, int route);
int av_semiseparable_rank(double *rank, double *block_sv, const float *M, int n, double sigma1, double noise_floor,
                          int route, void *work, size_t work_bytes);
/* The structural ceiling of that rank for these knobs (never above h = ⌊n/2⌋): the feature dimension for
 * kernel variants (decayed or not; + (k − 1)/2 with a DWC kernel), s or the landmarks for the low-rank
 * class, d for retention, d − 1 for deltanet at β = 1 (each write projects out its key) and d otherwise,
 * W − 1 for softmax with a window W, W − 2 + 2·cols for lolcats with a window W < n (h without), and h for plain
 * softmax. AV_OK or av_params_resolve's errors. */
int av_semiseparable_ceiling(long *ceiling, const av_params *prm, int n, int d);

/* ------------------------------------------------------------------------------------------------ */
/* Readouts (definitions: docs/readouts.md)                                                          */

enum av_readout {
    AV_R_SIGMA1 = 0, AV_R_RANK, AV_R_RANK_TOL, AV_R_RANK_REL_1E3, AV_R_RANK_REL_1E2, AV_R_RANK_ENERGY_99,
    AV_R_EFFECTIVE_RANK, AV_R_STABLE_RANK, AV_R_SPARSITY_LT_001, AV_R_SPARSITY_TAU, AV_R_KEYS_FOR_90,
    AV_R_ROW_ENTROPY_MEAN, AV_R_ROW_ENTROPY_UNIFORM, AV_R_ERROR_FRO_REL, AV_R_ROW_KL_MEAN,
    AV_R_OUTPUT_ERROR_REL, AV_R_NOISE_FLOOR, AV_R_ROW_SUM_DEV_MAX, AV_R_SEMISEPARABLE_RANK, AV_R_COUNT
};
/* Reason codes for readouts that are undefined (the value is then NaN and JSON prints null). */
enum av_reason {
    AV_REASON_NONE = 0, AV_REASON_NEGATIVE = 1, AV_REASON_ZERO_WHERE_POSITIVE = 2, AV_REASON_NO_V = 3,
    AV_REASON_NO_REFERENCE = 4, AV_REASON_ZERO_ROW = 5, AV_REASON_NO_SPECTRUM = 6, AV_REASON_NONFINITE = 7,
    AV_REASON_ZERO_MATRIX = 8,
    AV_REASON_MATRIX_NONFINITE = 9,    /* M itself holds Inf or NaN (its computation overflowed) */
    AV_REASON_REFERENCE_NONFINITE = 10, /* the softmax reference A holds Inf or NaN (its computation overflowed) */
    AV_REASON_OVERFLOW = 11,           /* the readout's own sums overflowed (float32 products of M, A and V) */
    AV_REASON_NO_BLOCK = 12            /* semiseparable_rank: the block's singular values were not computed
                                        * (av_readouts leaves it to av_semiseparable_rank) */
};
const char *av_readout_name(int readout);  /* the JSON key, e.g. "rank_rel_1e-3"; NULL out of range */
/* A readout as data (docs/adding-a-readout.md): the CLI's lists, the page's table, its sweep's choices
 * and the docs' index are derived from these rows, exported in av_registry_json as "readouts". */
enum av_readout_kind {
    AV_RK_ENTRY = 0,      /* reads M's entries (av_readouts) */
    AV_RK_SPECTRAL = 1,   /* reads M's singular values: the page computes it from σ (web/compute/spectral.mjs) */
    AV_RK_COMPARISON = 2  /* compares M with the softmax reference A (av_readouts; undefined without A) */
};
enum av_readout_format { AV_RF_REAL = 0, AV_RF_INTEGER = 1, AV_RF_FRACTION = 2 /* in [0, 1]: shown in % */ };
typedef struct av_readout_desc {
    const char *key;   /* the JSON key (av_readout_name) */
    const char *label; /* plain words, one line */
    int kind;          /* enum av_readout_kind */
    int format;        /* enum av_readout_format */
    int display;       /* its place in the page's readout table (1, 2, ...); 0: not a row there */
    int sweep;         /* its place among the page sweep's readouts (1, 2, ...); 0: not offered there
                        * (`attnviz sweep` takes every readout) */
    const char *explain; /* what the page's info button says: a few plain sentences (UTF-8) */
} av_readout_desc;
const av_readout_desc *av_readout_info(int readout); /* NULL out of range */
const char *av_reason_string(int reason);  /* one sentence (never NULL) */

/* All readouts of M (n×n) into vals[AV_R_COUNT], reasons[AV_R_COUNT] (definitions: docs/readouts.md).
 * sv: M's singular values (descending, n of them) or NULL (spectral readouts: AV_REASON_NO_SPECTRUM);
 * noise_floor: the route's floor. Rank rule: every rank counts σᵢ > max(tol, noise_floor), never a σ at
 * or below the floor: rank (tol = rank_tol = σ₁·n·FLT_EPSILON), rank_rel_1e-3 and rank_rel_1e-2
 * (tol = 1e-3·σ₁, 1e-2·σ₁). effective_rank and stable_rank are undefined (AV_REASON_ZERO_MATRIX) when
 * σ₁ = 0. The entry readouts read allowed entries (j ≤ i when causal); keys_for_90 counts the fewest
 * entries whose sum reaches (0.9 − 1e-12)·(row sum) (the slack absorbs rounding for equal entries);
 * keys_for_90 and row_entropy_mean are undefined when M has a negative entry or an allowed row sums to 0.
 * row_sum_dev_max = max_i |Σ_{allowed j} M_ij − 1| (sums in float64): 0 up to rounding for the variants
 * whose rows are distributions (Efficient Attention's by construction), S/(S + ε) − 1 where ε is added.
 * A: the plain softmax reference (same Q, K, scale and mask; no decay, no window), or NULL for plain
 * softmax itself (error readouts: AV_REASON_NO_REFERENCE).
 * row_kl_mean is undefined when M is negative or zero where A > 0. V (n×dv) or NULL: output_error_rel,
 * whose products (M − A)·V and A·V run in float32 SIMD (about 1e-6 relative).
 * tau: the sparsity_tau threshold (0 → 0.1). work: av_readouts_work(n, dv) bytes (never allocates).
 * Returns AV_OK (undefined readouts are NaN with a reason), AV_ERR_NULL, AV_ERR_SIZE, AV_ERR_KNOB (tau
 * negative or not finite), AV_ERR_WORKSPACE, or AV_ERR_NONFINITE (M holds NaN/Inf: every readout NaN). */
size_t av_readouts_work(int n, int dv);
int av_readouts(double *vals, int *reasons, const float *M, const double *sv, double noise_floor,
                const float *A, const float *V, int n, int dv, int causal, double tau,
                void *work, size_t work_bytes);
/* row_kl_mean of M against A (as av_readouts: M = av_matrix of prm on Q, K; A the plain softmax reference)
 * where M's float32 entries underflowed: an entry that is 0 in M while A > 0 takes its logarithm from the
 * log domain, in float64, where the variant has one: softmax with a decay or a window,
 * ln M_ij = ℓ_ij − ln Σ_l e^ℓ_il with ℓ = scale·q·k + (i − j)·ln γ (fox: ℓ = q̃·k̃ + Σ_{l=j+1..i} g_l, its gates
 * from prm); a kernel variant (a feature map, e.g.
 * decayed), ln M_ij = ln(φ(q_i)·φ(k_j)) + (i − j)·ln γ − ln D_i, the product from ln φ in float64 (focused,
 * exp, hedgehog, whose float32 φ can underflow), κ(scale·q·k) (taylor, explimit) or the float32 features
 * (the others). So the KL is
 * finite and true where av_readouts answers AV_REASON_ZERO_WHERE_POSITIVE only because of float32's range.
 * Rows without such an entry are av_readouts' own, so without underflow *kl_mean has its bits. Undefined
 * (*kl_mean NaN, *reason set): AV_REASON_ZERO_WHERE_POSITIVE where M is truly 0 and A > 0 (outside the
 * window, a product φ·φ of 0: the KL is infinite; or a variant with neither form), AV_REASON_NEGATIVE,
 * AV_REASON_NO_REFERENCE (A NULL), AV_REASON_MATRIX_NONFINITE, AV_REASON_REFERENCE_NONFINITE,
 * AV_REASON_OVERFLOW. work: av_row_kl_work(prm, n, d) bytes (0: bad arguments). Returns AV_OK, AV_ERR_NULL,
 * AV_ERR_SIZE, AV_ERR_KNOB, AV_ERR_VARIANT, AV_ERR_NO_CAUSAL, AV_ERR_NONFINITE (Q or K), AV_ERR_WORKSPACE. */
size_t av_row_kl_work(const av_params *prm, int n, int d);
int av_row_kl(double *kl_mean, int *reason, const float *M, const float *A, const float *Q, const float *K, int n,
              int d, const av_params *prm, void *work, size_t work_bytes);

/* av_readouts, plus the per-row entropies it averages into row_entropy_mean: when row_entropy is not NULL,
 * row_entropy[i] (n of them) = −Σ_j p_ij ln p_ij over row i's allowed entries normalised to sum 1
 * (natural log, zeros contributing 0), NaN for a row with a negative allowed entry or a sum ≤ 0. The page
 * bins them with av_entropy_hist instead of recomputing them (av_row_entropy_hist: n² more logarithms).
 * Same arguments, work size (av_readouts_work) and returns as av_readouts; on AV_ERR_NONFINITE every
 * row_entropy[i] is NaN, on the argument errors (NULL, SIZE, KNOB, WORKSPACE) row_entropy is untouched.
 * av_readouts is this with row_entropy NULL. */
int av_readouts_rows(double *vals, int *reasons, double *row_entropy, const float *M, const double *sv,
                     double noise_floor, const float *A, const float *V, int n, int dv, int causal, double tau,
                     void *work, size_t work_bytes);
/* The reference's share of the readouts, for a caller that compares many matrices M with one reference:
 * whether A and V can be compared with (finite, given), ‖A‖_F², ‖A·V‖_F² and each row's Σ a ln a, kept in
 * `summary` (av_reference_summary_bytes(n) bytes, any 8-byte alignment) by av_reference_summary. Then
 * av_readouts_summarised(…, A, V, summary, summary_bytes, …) gives exactly av_readouts_rows's readouts, to
 * the bit, without that share: one float32 product (M − A)·V instead of two, and no logarithm of A. A, V,
 * n, dv and causal must be those the summary was made with: n, dv and causal are checked (AV_ERR_SIZE), a
 * buffer av_reference_summary never wrote is AV_ERR_FORMAT, A's and V's contents are the caller's promise,
 * and so is av_reference_summary's status (a buffer it refused to write may hold an older summary). The
 * summary is laid out from its buffer's address: read it where it was written (never copied or moved).
 * A or V NULL where the summary had them: AV_ERR_NULL. av_reference_summary's work: av_readouts_work(n, dv)
 * bytes; it returns AV_OK, AV_ERR_NULL, AV_ERR_SIZE or AV_ERR_WORKSPACE (a reference that is not finite is
 * a reason in the readouts, as in av_readouts). */
size_t av_reference_summary_bytes(int n);
int av_reference_summary(void *summary, size_t summary_bytes, const float *A, const float *V, int n, int dv,
                         int causal, void *work, size_t work_bytes);
int av_readouts_summarised(double *vals, int *reasons, double *row_entropy, const float *M, const double *sv,
                           double noise_floor, const float *A, const float *V, const void *summary,
                           size_t summary_bytes, int n, int dv, int causal, double tau, void *work,
                           size_t work_bytes);

/* Truncated-SVD error curve e(r) = Σ_{i>r} σᵢ² / Σσᵢ², r = 0..n, into e[n+1]: e(0) = 1, e(n) = 0
 * (all zeros when every σ is 0). AV_OK, AV_ERR_NULL, AV_ERR_SIZE or AV_ERR_NONFINITE. */
int av_error_curve(double *e, const double *sv, int n);

/* Row-entropy histogram: counts[bins] of the per-row entropies (allowed entries normalised to sum 1)
 * over [0, ln n], equal-width bins, the top edge in the last bin. Rows with a negative entry or a zero
 * sum are left out and AV_WARN_ZERO_ROW is returned. */
int av_row_entropy_hist(int *counts, int bins, const float *M, int n, int causal);
/* The same histogram from given per-row entropies h[0..n) (av_readouts_rows's row_entropy): counts[bins]
 * over [0, ln n], bin (int)(h/ln n·bins) clamped to [0, bins − 1] (±Inf to the end bins); NaN entries are
 * left out and AV_WARN_ZERO_ROW is returned. For the entropies of av_readouts_rows the counts are exactly
 * those of av_row_entropy_hist on the same M and mask (the same per-row function, the same binning).
 * AV_OK, AV_WARN_ZERO_ROW, AV_ERR_NULL or AV_ERR_SIZE (bins < 1, n < 1 or n > AV_MAX_N). */
int av_entropy_hist(int *counts, int bins, const double *h, int n);

/* Cost counts: multiply-adds and bytes of the quadratic and the linear path at these sizes
 * (out[0] quad madds, out[1] quad bytes, out[2] linear madds, out[3] linear bytes; linear −1 if none). */
int av_cost(double *out, const av_params *prm, int n, int d, int dv);
/* The same for each of the four output paths (the formulas: src/cost.c, docs/recurrent.md):
 * out[0] madds, out[1] bytes of the path's intermediate (or state, or cache); both −1 where the path does
 * not exist for these knobs. */
enum av_path { AV_PATH_QUADRATIC = 0, AV_PATH_LINEAR = 1, AV_PATH_RECURRENT = 2, AV_PATH_CHUNKWISE = 3 };
int av_cost_path(double *out, int path, const av_params *prm, int n, int d, int dv);

/* ------------------------------------------------------------------------------------------------ */
/* Real models: llama2.c checkpoints and tokenizers (docs/model.md)                                  */

/* A checkpoint in llama2.c's legacy format, parsed in place: the struct points into the caller's
 * buffer, which must stay alive and unchanged while the model is used, and be 4-byte aligned (malloc's
 * is). The first 11 ints are the configuration, in this order (the JS loader reads them there). */
/* A weight as a file holds it (docs/hf.md "Weights in memory"): the element (r, c) of a matrix is
 * p[r·ld + c] (trans 0: rows are outputs, y = W·x) or p[c·ld + r] (trans 1: GPT-2's Conv1D, y = x·W), in
 * the file's dtype (enum av_st_dtype: F32, F16, BF16) and not necessarily aligned (read by bytes). A vector
 * (a norm's weight, a bias) is p[0..len). p NULL: absent. */
typedef struct av_weight {
    const void *p;
    int dtype, trans;
    int64_t ld;
} av_weight;

/* Architectures (docs/hf.md "Architectures"): llama2.c's legacy file (RoPE on interleaved pairs, the float
 * pointers below); the Llama family of Hugging Face (Llama 1–3, Mistral, SmolLM, Qwen2, Qwen3: RMSNorm,
 * rotate-half RoPE, SwiGLU, optional q/k/v/o biases, optional per-head q/k RMSNorm); GPT-2 (learned
 * positions, LayerNorm, GELU tanh, fused c_attn). */
enum av_arch { AV_ARCH_LLAMA2C = 0, AV_ARCH_LLAMA = 1, AV_ARCH_GPT2 = 2 };

/* One layer's weights for the Hugging Face architectures, indexed by these (absent ones p NULL). GPT-2's
 * fused c_attn is three views (Q, K, V) into the one tensor, and so is its bias. */
enum av_layer_weight {
    AV_LW_ATTN_NORM, AV_LW_ATTN_NORM_B,  /* input_layernorm / ln_1 (GPT-2's has a bias) */
    AV_LW_Q, AV_LW_K, AV_LW_V, AV_LW_O,  /* q_proj (dim → H·hs), k_proj, v_proj (dim → KVH·hs), o_proj (H·hs → dim) */
    AV_LW_Q_B, AV_LW_K_B, AV_LW_V_B, AV_LW_O_B, /* their biases (Qwen2: q, k, v; attention_bias: all four) */
    AV_LW_Q_NORM, AV_LW_K_NORM,          /* Qwen3: RMSNorm over each head's q, k (hs weights), before RoPE */
    AV_LW_FFN_NORM, AV_LW_FFN_NORM_B,    /* post_attention_layernorm / ln_2 */
    AV_LW_GATE, AV_LW_UP, AV_LW_DOWN,    /* SwiGLU: down(silu(gate·x) ⊙ up·x); GPT-2: down(gelu(up·x + b)) + b */
    AV_LW_GATE_B, AV_LW_UP_B, AV_LW_DOWN_B, /* mlp_bias (Llama), GPT-2's c_fc and c_proj biases */
    AV_LW_COUNT
};

typedef struct av_model {
    int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
    int head_size, kv_dim, shared_classifier;   /* derived: dim/n_heads (HF: head_dim), n_kv_heads·head_size, 0 or 1 */
    int reserved;
    const float *tok_emb, *rms_att, *wq, *wk, *wv, *wo, *rms_ffn, *w1, *w2, *w3, *rms_final, *wcls; /* llama2.c */
    /* --- Hugging Face architectures (arch != AV_ARCH_LLAMA2C; av_hf_model_bind sets them) --- */
    int arch;                 /* enum av_arch */
    int context;              /* the model's own context (max_position_embeddings, n_positions); seq_len ≤ it */
    int bos_id, n_eos;        /* BOS (−1: none) and the EOS ids generation stops at (llama2.c: BOS 1, stops at 1) */
    int eos_id[4];
    double norm_eps;          /* rms_norm_eps or layer_norm_epsilon */
    double rope_theta;        /* RoPE base */
    int rope_llama3;          /* 1: rope_scaling type llama3, with the four numbers below */
    double rope_factor, rope_low_freq, rope_high_freq, rope_original_context;
    int sliding_window;       /* 0: none; else attention sees the last sliding_window keys (seq_len ≤ it) */
    int reserved2;
    av_weight emb, pos_emb;   /* embed_tokens / wte (vocab × dim); GPT-2's wpe (context × dim) */
    av_weight final_norm, final_norm_b, cls; /* model.norm / ln_f; the classifier (vocab × dim; emb when tied) */
    const av_weight *layer;   /* [n_layers][AV_LW_COUNT], in the bind's workspace */
} av_model;

/* Limits a checkpoint's header must respect (beyond its length): every size positive and at most
 * AV_MODEL_MAX_DIM (dim, hidden_dim), AV_MODEL_MAX_VOCAB, AV_MODEL_MAX_SEQ, AV_MODEL_MAX_LAYERS. */
#define AV_MODEL_MAX_DIM 16384
#define AV_MODEL_MAX_VOCAB 1048576
#define AV_MODEL_MAX_SEQ 65536
#define AV_MODEL_MAX_LAYERS 1024
#define AV_TOKEN_MAX_LEN 1024      /* a tokenizer's max_token_length must be 1..this */

/* Check and map a checkpoint held in buf[0..len): the header (7 little-endian int32: dim, hidden_dim,
 * n_layers, n_heads, n_kv_heads, vocab_size (negative: a separate classifier), seq_len), the sizes
 * against the limits and against each other (n_kv_heads divides n_heads, n_heads divides dim, an even
 * head size), then the length: exactly the weights, the legacy RoPE tables and the classifier when not
 * shared. Nothing past the header is read before the length is known to hold it. The vocabulary must hold
 * BOS (id 1) and EOS (id 2): |vocab_size| ≥ 3. Every weight the forward pass reads must be finite (the legacy
 * RoPE tables are not read). AV_ERR_FORMAT with a reason (av_model_error) for a bad header, length or
 * vocabulary; AV_ERR_NONFINITE, with the tensor, the value and its index as the reason, for a checkpoint
 * whose form is sound but a weight is NaN or Inf; AV_ERR_SIZE when buf is not 4-byte aligned. */
int av_model_parse(av_model *m, const void *buf, size_t len);
/* The last model or tokenizer parse failure's reason as one sentence (static storage, thread-unsafe). */
const char *av_model_error(void);

/* The forward pass over token ids, in a workspace that keeps its key/value cache between calls:
 * positions start..n−1 are computed (1 ≤ n ≤ seq_len, 0 ≤ start < n); positions below start must have
 * been computed by earlier calls with the same model, ids and workspace (start = 0 begins afresh).
 * RMSNorm (ε 1e-5), RoPE on interleaved pairs (angle pos·10000^(−2i/head_size)), grouped-query causal
 * softmax attention with scale 1/√head_size, SwiGLU; float32 storage, float64 accumulation.
 * Captured, each when not NULL, for positions start..n−1 (a row at position t at index t):
 *   Q  [n_layers][n_heads][n][head_size]     after RoPE, unscaled
 *   K  [n_layers][n_kv_heads][n][head_size]  after RoPE
 *   V  [n_layers][n_kv_heads][n][head_size]
 *   logits [vocab_size] of position n−1.
 * Rows below start are left as they are. AV_ERR_SIZE for n, start or an id out of range. work:
 * av_forward_work(m) bytes (n-independent). AV_WARN_PRODUCT_OVERFLOW when a row written (or a logit) is
 * not finite: finite weights whose products or sums (a projection, the residual stream, a norm) left the
 * float range (e.g. weights near 1e38). */
size_t av_forward_work(const av_model *m);
int av_forward(float *Q, float *K, float *V, float *logits, const av_model *m, const int *ids, int start, int n,
               void *work, size_t work_bytes);

/* A tokenizer in llama2.c's format (int32 max_token_length, then per piece a float32 score, an int32
 * length and the bytes), parsed for a model's vocab_size: the struct points into buf and into the
 * workspace (av_tokenizer_work(vocab_size) bytes), both to be kept while it is used. AV_ERR_FORMAT with a
 * reason (av_model_error) for a vocab_size below 3 (no BOS or EOS), a length past the end, a length of 0
 * or above max_token_length, a score that is not finite, or bytes left over. */
typedef struct av_tokenizer {
    int vocab_size, max_token_length;
    const unsigned char *buf;
    const uint32_t *offset;      /* piece i: buf + offset[i], length len[i] */
    const int32_t *len;
    const float *score;
    const int32_t *sorted;       /* piece ids by bytes, for lookup */
} av_tokenizer;
size_t av_tokenizer_work(int vocab_size);
int av_tokenizer_parse(av_tokenizer *t, const void *buf, size_t len, int vocab_size, void *work, size_t work_bytes);

/* llama2.c's encode: BOS (id 1) when bos, a leading space piece when the text is not empty, each UTF-8
 * character's piece (or its bytes as ids byte + 3 when it has none), then greedy merges of the adjacent
 * pair whose joined piece scores highest, until none joins. ids[cap]; *n_ids the count, every id inside
 * the vocabulary. AV_ERR_SIZE when cap is too small (cap ≥ text_len + 2 always suffices) or the struct's
 * vocab_size is outside 1..AV_MODEL_MAX_VOCAB, AV_ERR_FORMAT
 * (with av_model_error) when the vocabulary lacks BOS, the space piece or a byte piece the text needs (id
 * byte + 3 past the vocabulary, or not "<0xHH>"), or the struct's tables name an id past vocab_size. */
int av_encode(int *ids, int *n_ids, int cap, const av_tokenizer *t, const char *text, size_t text_len, int bos);
/* The text of token `id` as llama2.c prints it after token `prev`: a leading space is dropped after BOS
 * (prev = 1), and a byte piece "<0xHH>" is that byte; BOS and EOS (ids 1, 2) lose the newlines around
 * them ("\n<s>\n" is "<s>"). *piece points into the tokenizer's buffer, or to
 * static storage for a byte piece; *len its length. AV_ERR_SIZE for an id out of range. */
int av_token_piece(const char **piece, int *len, const av_tokenizer *t, int prev, int id);

/* ------------------------------------------------------------------------------------------------ */
/* What the model loses: the forward pass with chosen attention (docs/model.md "Swapped attention")  */

enum av_swap_path { AV_SWAP_MATRIX = 0, AV_SWAP_RECURRENT = 1 };

/* The forward pass over ids[0..n) (1 <= n <= seq_len), computed layer by layer over the whole text, with each
 * query head's attention chosen. heads (NULL: every head the model's) holds n_layers·n_heads pointers, layer
 * by layer: NULL keeps that head's softmax in av_forward's arithmetic (every head NULL: the logits at every
 * position equal av_forward's bit for bit); otherwise the head's output is the variant's on the head's q as
 * captured (after RoPE, unscaled: the variant's own conventions apply, elu+1 takes it raw) and its KV head's
 * k and v (d = dv = head_size, n = this text's length), by av_attend (AV_SWAP_MATRIX, O = M·V) or av_recurrent
 * (AV_SWAP_RECURRENT: the state scan; softmax a KV cache), computed in float32 like the lab's heads. Every
 * given head must be causal (prm->causal = 1, else AV_ERR_NEEDS_CAUSAL) and its knobs resolve for
 * (n, head_size) (AV_ERR_KNOB, AV_ERR_GATES: gate arrays set for another n; weights NaN/Inf AV_ERR_NONFINITE); a
 * variant without a causal form is AV_ERR_NO_CAUSAL, and the path's own refusals apply (AV_ERR_NO_LINEAR without
 * the form, AV_ERR_FEATURE_DIM above the cap on the recurrent path: explimit's (d+1)^N; the matrix path's closed
 * form has none). *bad_head (may be NULL) gets the index l·n_heads + h of the refused head, or −1. AV_ERR_SIZE
 * for n or an id out of range, AV_ERR_VARIANT for another path. Errors are returned before anything is written.
 * Written, each when not NULL: logits [n][vocab] (every position), Q, K, V as av_forward captures them (the
 * swapped model's: after a swapped layer they differ from the original's). Warnings: the heads' merged as the
 * kernels merge theirs (an overflow over a zero row; among equals the first, layer by layer, head by head), and
 * AV_WARN_PRODUCT_OVERFLOW when an output is not finite (a head whose inputs are not finite is not run: its
 * output is NaN); everything written. */
size_t av_forward_swapped_work(const av_model *m, int n, const av_params *const *heads, int path);
int av_forward_swapped(float *logits, float *Q, float *K, float *V, const av_model *m, const int *ids, int n,
                       const av_params *const *heads, int path, int *bad_head, void *work, size_t work_bytes);

/* Next-token measures over positions t = 0..n−2, each predicting ids[t+1], from the logits [n][vocab] of the
 * original model (lo) and the swapped one (ls), by log-softmax in float64 (a probability that underflows never
 * makes a measure undefined): loss_s[t] = −ln p_s(ids[t+1]), loss_o[t] the same under lo,
 * kl[t] = Σ_v p_o(v)·(ln p_o(v) − ln p_s(v)) = KL(original ‖ swapped) (clamped at 0 against rounding),
 * agree[t] = 1 when the two argmaxes (the first of equals) are the same token, else 0. Each per-position
 * array (n − 1 entries) may be NULL. mean[5] = {mean loss_s, mean loss_o, mean kl, mean agree, exp(mean
 * loss_s) (the perplexity)}. The rows read are 0..n−2 (the last position predicts nothing). AV_ERR_NULL,
 * AV_ERR_SIZE (n < 2, vocab < 1, an id of ids[0..n) out of range), AV_ERR_NONFINITE (a logit read NaN or ±Inf);
 * nothing is written on error. */
int av_next_token_measures(double *mean, double *loss_s, double *loss_o, double *kl, int *agree, const float *lo,
                           const float *ls, const int *ids, int n, int vocab);

/* Greedy continuation with chosen attention: from prompt[0..n_prompt) (1 <= n_prompt <= seq_len), up to
 * `steps` tokens (>= 0), each the argmax (the first of equals) of the last position's logits of
 * av_forward_swapped over the text so far (the whole pass again for each token, so a variant that reads n
 * sees the current length; with every head kept, heads NULL or every entry NULL, av_forward's KV cache
 * instead, one position per token: the same bits, as a kept pass is av_forward's), stopping before one of the model's stop ids (eos_id[0..n_eos): llama2.c's BOS, id 1, where the next story begins; a Hugging Face model's EOS ids) or at seq_len tokens, as
 * `attnviz generate-text` does. out (n_prompt + steps entries) gets the prompt, then the tokens; *n_out the
 * total. heads, path and bad_head as av_forward_swapped; the heads are checked for every length a pass will
 * run (n_prompt .. min(n_prompt + steps, seq_len) − 1) before anything is written. Work:
 * av_continue_swapped_work(m, n_prompt + steps, heads, path) bytes (every head kept: av_forward_work(m) and
 * the logits, whatever the length). AV_WARN_PRODUCT_OVERFLOW or AV_WARN_OVERFLOW
 * stops at the step whose logits were not finite, the tokens before it written; a head's AV_WARN_ZERO_ROW is
 * returned and the continuation goes on. */
size_t av_continue_swapped_work(const av_model *m, int n_total, const av_params *const *heads, int path);
int av_continue_swapped(int *out, int *n_out, const av_model *m, const int *prompt, int n_prompt, int steps,
                        const av_params *const *heads, int path, int *bad_head, void *work, size_t work_bytes);

/* Sensitivity: which heads can be swapped. heads as av_forward_swapped gives each head's candidate (NULL: that
 * head stays softmax, its entries 0, 0, 1). For each layer l with all its candidates swapped and every other
 * head the model's: by_layer[l·3 + {0, 1, 2}] = {mean loss swapped − mean loss original, mean KL, top-1
 * agreement} of av_next_token_measures over ids[0..n) (n >= 2); for each head alone: by_head[(l·n_heads + h)·3 + …].
 * At most 1 + n_layers + n_layers·n_heads forward passes (the original once; a layer or head without a
 * candidate is 0, 0, 1 without a pass). Work: av_swap_sensitivity_work(m, n, heads, path). Statuses as
 * av_forward_swapped (the passes' warnings merged; a pass whose logits are not finite gives NaN entries and
 * AV_WARN_PRODUCT_OVERFLOW); AV_ERR_SIZE for n < 2. */
size_t av_swap_sensitivity_work(const av_model *m, int n, const av_params *const *heads, int path);
int av_swap_sensitivity(double *by_layer, double *by_head, const av_model *m, const int *ids, int n,
                        const av_params *const *heads, int path, int *bad_head, void *work, size_t work_bytes);


/* ------------------------------------------------------------------------------------------------ */
/* Hugging Face files: safetensors (docs/hf.md)                                                      */

/* A .safetensors buffer: an 8-byte little-endian header length N, N bytes of JSON header, then the data.
 * The reader checks every entry against the limits, the buffer and the others before anything is used;
 * the structs point into the caller's buffer (the data) and workspace (the decoded names and metadata),
 * which must both stay alive and unchanged while they are used. It never allocates. */
#define AV_ST_MAX_HEADER 100000000 /* the header's N at most this many bytes (as the Hugging Face library) */
#define AV_ST_MAX_DIMS 8           /* a tensor's rank at most this */
/* AV_ST_OTHER: a dtype the library never computes with (I64, I32, U8, BOOL, F64, F8_E4M3, ...): the tensor is
 * sized and placed like any other (a checkpoint may hold integer buffers beside its weights) but never read;
 * av_st_rows_f32 refuses it, and a model that needs it is refused by name. */
enum av_st_dtype { AV_ST_F32 = 0, AV_ST_F16 = 1, AV_ST_BF16 = 2, AV_ST_OTHER = 3 };
typedef struct av_st_tensor {
    const char *name;          /* decoded from the header's JSON, NUL-terminated (in the workspace) */
    int dtype;                 /* enum av_st_dtype */
    int ndim;                  /* 0..AV_ST_MAX_DIMS (0: a scalar, one element) */
    uint64_t shape[AV_ST_MAX_DIMS];
    uint64_t count;            /* the product of shape (1 for a scalar) */
    uint64_t begin, end;       /* data_offsets, relative to the data's start: end − begin = count·dtype size */
    const unsigned char *data; /* the tensor's first byte in the caller's buffer (not aligned: read bytes) */
} av_st_tensor;
typedef struct av_st_meta { const char *key, *value; } av_st_meta;
typedef struct av_st_file {
    int n_tensors, n_meta;
    const av_st_tensor *tensors;   /* in data order (by begin, then end, then name) */
    const av_st_meta *meta;        /* "__metadata__", by key */
    const av_st_tensor *const *by_name; /* the tensors by name (strcmp order), for av_st_find */
    const unsigned char *data;     /* the data's first byte: buf + 8 + N */
    uint64_t data_bytes;           /* len − 8 − N, exactly the last tensor's end */
} av_st_file;

/* The workspace av_st_parse needs for buf[0..len), after checking everything that can be checked one entry at
 * a time (the header length against AV_ST_MAX_HEADER and len, the JSON, every entry's dtype, shape, sizes and
 * offsets against the data's length); 0 with a reason (av_st_error) when the buffer is refused. A header's
 * claim (a 4 GB length, a huge shape) is refused here, so the caller never allocates from it. */
size_t av_st_work(const void *buf, size_t len);
/* Parse buf[0..len) into f: the checks of av_st_work, then the ones across entries: names unique, the
 * tensors' byte ranges tile the data from 0 to its end with no gap and no overlap (the format's rule).
 * AV_OK; AV_ERR_NULL; AV_ERR_WORKSPACE for fewer than av_st_work bytes; AV_ERR_FORMAT with a reason. */
int av_st_parse(av_st_file *f, void *work, size_t work_bytes, const void *buf, size_t len);
/* The tensor called name, or NULL (binary search over by_name). */
const av_st_tensor *av_st_find(const av_st_file *f, const char *name);
/* Rows row0..row0+nrows−1 of t as float32 into out[nrows·row length] (row length: the product of the shape
 * past its first dimension; a scalar is one row of one). F32 as stored; F16 and BF16 exactly (every value,
 * subnormals, ±Inf and NaN, whose payload is kept). No value is refused: NaN and Inf come out as they are.
 * AV_OK, AV_ERR_NULL, AV_ERR_SIZE (rows out of range), AV_ERR_TOO_LARGE (more floats than size_t holds),
 * AV_ERR_FORMAT for an AV_ST_OTHER tensor. */
int av_st_rows_f32(float *out, const av_st_tensor *t, uint64_t row0, uint64_t nrows);
/* One F16 or BF16 value (its bits) as float32, exactly. */
float av_f16_to_f32(uint16_t h);
float av_bf16_to_f32(uint16_t b);
/* The last safetensors refusal as one sentence (static storage, thread-unsafe). */
const char *av_st_error(void);

/* ------------------------------------------------------------------------------------------------ */
/* Hugging Face model folders: config.json, the shard index, binding, tokenizer.json (docs/hf.md)     */

/* config.json as the architectures read it. Absent optional fields take the Hugging Face library's
 * defaults for that architecture (docs/hf.md "config.json"). */
#define AV_HF_MAX_JSON 268435456   /* a config.json, index or tokenizer.json above this many bytes is refused */
typedef struct av_hf_config {
    int arch;                 /* enum av_arch (never AV_ARCH_LLAMA2C) */
    char architecture[64];    /* architectures[0] as written, e.g. "Qwen2ForCausalLM" */
    char model_type[32];      /* "llama", "mistral", "qwen2", "qwen3", "gpt2" */
    int dim, hidden_dim, n_layers, n_heads, n_kv_heads, head_size, vocab_size, context;
    int tie_word_embeddings;  /* 0 or 1 */
    int attention_bias, mlp_bias, qkv_bias, qk_norm; /* 0 or 1: which bias / norm tensors the layers hold */
    int bos_id, n_eos, eos_id[4];
    double norm_eps, rope_theta;
    int rope_llama3;
    double rope_factor, rope_low_freq, rope_high_freq, rope_original_context;
    int sliding_window;       /* 0 when the model does not use one */
} av_hf_config;
/* Parse config.json (UTF-8 JSON, at most AV_HF_MAX_JSON bytes). Every field read is checked against its
 * range and the others (n_kv_heads divides n_heads, head_size even, dim and sizes within AV_MODEL_MAX_*),
 * an architecture other than LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM,
 * GPT2LMHeadModel is refused by name, as are settings the forward pass does not implement (hidden_act other
 * than silu / gelu_new, a rope_scaling type other than llama3). AV_OK; AV_ERR_NULL; AV_ERR_FORMAT with one
 * sentence in av_model_error(). Allocates nothing. */
int av_hf_config_parse(av_hf_config *c, const void *json, size_t len);

/* model.safetensors.index.json: which shard holds which tensor. The struct points into the workspace. */
typedef struct av_hf_index {
    int n_shards, n_tensors;
    const char *const *shard;     /* the distinct shard file names, in the order they first appear */
    const char *const *tensor;    /* tensor names, strcmp order */
    const int *tensor_shard;      /* tensor i lives in shard[tensor_shard[i]] */
} av_hf_index;
/* The workspace av_hf_index_parse needs (0 with a reason in av_model_error() for a refused file). */
size_t av_hf_index_work(const void *json, size_t len);
/* Parse the index: an object with "weight_map" (tensor name → shard file name; optional "metadata"). A
 * shard name must be a plain file name (no '/', '\\', no "..", at most 255 bytes); names unique. AV_OK,
 * AV_ERR_NULL, AV_ERR_WORKSPACE, AV_ERR_FORMAT with a reason. */
int av_hf_index_parse(av_hf_index *ix, void *work, size_t work_bytes, const void *json, size_t len);

/* Bind a parsed config and its parsed safetensors files into a model: every tensor the architecture needs
 * is found by its name (with or without the "model." / "transformer." prefix the writers use), its shape
 * and dtype checked against the config (F32, F16, BF16; every weight of one model need not share a dtype),
 * every value finite (AV_ERR_NONFINITE naming the tensor and index); files[] are the shards, in the index's
 * order when ix is not NULL (each tensor must be in the shard the index names; a tensor in two shards, a
 * shard the index names but not given, are refused), or one file when ix is NULL. Tensors the architecture
 * does not read are ignored. The model's seq_len is min(config's context, max_seq, sliding_window when
 * set); max_seq in 1..AV_MODEL_MAX_SEQ. The model points into the files' buffers and into work
 * (av_hf_model_work(c) bytes, the per-layer weight table), which must all stay alive. AV_OK, AV_ERR_NULL,
 * AV_ERR_SIZE, AV_ERR_WORKSPACE, AV_ERR_FORMAT / AV_ERR_NONFINITE with a reason in av_model_error(). */
size_t av_hf_model_work(const av_hf_config *c);
int av_hf_model_bind(av_model *m, const av_hf_config *c, const av_st_file *files, int n_files,
                     const av_hf_index *ix, int max_seq, void *work, size_t work_bytes);
/* Bytes of weights the bound model reads (for a page's "needs N MB" message: the files' tensors used). */
uint64_t av_hf_model_bytes(const av_model *m);

/* tokenizer.json (docs/hf.md "tokenizer.json"): model BPE, either byte-level (pre_tokenizer ByteLevel,
 * possibly in a Sequence after a Split with a regex: GPT-2, Llama 3, Qwen2/3, SmolLM) or byte-fallback with
 * the metaspace (normalizer Prepend/Replace or pre_tokenizer Metaspace: Llama 2, Mistral); added tokens
 * matched in the text first (special ones only when the caller allows them). A regex, normalizer,
 * pre-tokenizer, decoder or model type not listed in docs/hf.md is refused by name. */
typedef struct av_hf_tokenizer av_hf_tokenizer;   /* opaque: lives in its workspace */
/* The workspace for tokenizer.json's bytes (0 with a reason in av_model_error() when refused). */
size_t av_hf_tokenizer_work(const void *json, size_t len);
/* Parse into work; *t points into work (and not into json: the buffer may be freed after). AV_OK,
 * AV_ERR_NULL, AV_ERR_WORKSPACE, AV_ERR_FORMAT with a reason. */
int av_hf_tokenizer_parse(const av_hf_tokenizer **t, void *work, size_t work_bytes, const void *json, size_t len);
int av_hf_tokenizer_vocab(const av_hf_tokenizer *t);   /* the largest id + 1 (vocabulary and added tokens) */
/* Encode text[0..text_len) (any bytes: each maximal invalid UTF-8 subsequence is first replaced by U+FFFD,
 * as docs/hf.md says) into ids[cap]: add_special 1 adds what the file's post_processor adds (e.g. Llama's
 * BOS), 0 adds nothing; special added tokens written in the text ("<|endoftext|>") are matched when
 * parse_special is 1. *n_ids the count. The scratch (work: av_hf_encode_work(t, text_len) bytes) holds the
 * normalized text and BPE's merge queue, which grow with the text. AV_ERR_SIZE (and *n_ids 0) when cap is too
 * small: cap ≥ av_hf_encode_cap(t, text_len) always suffices (text_len + 8 does without a normalizer or a
 * Metaspace when the text is valid UTF-8; an invalid byte's U+FFFD, NFC, a Prepend or the metaspace can make
 * a byte several symbols). AV_ERR_NULL, AV_ERR_WORKSPACE, AV_ERR_TOO_LARGE. */
size_t av_hf_encode_work(const av_hf_tokenizer *t, size_t text_len);
size_t av_hf_encode_cap(const av_hf_tokenizer *t, size_t text_len);
int av_hf_encode(int *ids, int *n_ids, int cap, const av_hf_tokenizer *t, const char *text, size_t text_len,
                 int add_special, int parse_special, void *work, size_t work_bytes);
/* The bytes token id stands for as the file's decoder gives them when it follows prev (−1: the first
 * token): byte-level pieces mapped back to bytes, "▁" to a space (the first token's leading one dropped when
 * the decoder strips it), byte-fallback "<0xHH>" to its byte. out[cap], *len written. AV_ERR_SIZE for an id
 * out of range or cap too small (AV_TOKEN_MAX_LEN·4 always suffices). */
int av_hf_token_bytes(char *out, int *len, int cap, const av_hf_tokenizer *t, int prev, int id);

#ifdef __cplusplus
}
#endif
#endif /* ATTNVIZ_H */
