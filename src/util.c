/* util.c: status strings, variant names, and the knobs (defaults, setters, resolution and checks). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// status

const char *av_status_string(int status) {
    switch (status) {
    case AV_OK: return "ok";
    case AV_ERR_NULL: return "a required pointer is NULL";
    case AV_ERR_SIZE: return "a size (n, d, dv or a buffer length) is out of range or inconsistent";
    case AV_ERR_KNOB: return "a knob is out of its range for this variant and these sizes";
    case AV_ERR_VARIANT: return "unknown variant, generator or option";
    case AV_ERR_NO_CAUSAL: return "this variant has no causal form (its projection or pooling mixes future tokens)";
    case AV_ERR_NONFINITE: return "the input holds NaN or Inf";
    case AV_ERR_WORKSPACE: return "the workspace is smaller than its _work query says";
    case AV_ERR_FEATURE_DIM: return "the feature dimension is too large for the linear path (over 65536)";
    case AV_ERR_NO_LINEAR: return "this variant has no feature map, linear-time path or low-rank factors";
    case AV_ERR_FORMAT: return "malformed input file or buffer";
    case AV_ERR_IO: return "a file could not be read or written";
    case AV_ERR_NOMEM: return "out of memory";
    case AV_ERR_TOO_LARGE: return "too large for this build: the sizes need more memory than it can address";
    case AV_WARN_ZERO_ROW: return "some row's normaliser is zero or negative, so its weights are undefined";
    case AV_WARN_OVERFLOW: return "an exponential overflowed the float range (entries may be Inf or NaN)";
    case AV_WARN_PRODUCT_OVERFLOW:
        return "a product (q·k, a feature product, a power or a row sum) exceeded the float32 range (entries may be Inf or NaN)";
    case AV_WARN_NO_CONVERGENCE: return "an iterative solver did not converge";
    default: return "unknown status code";
    }
}

double av_limit(int key) {
    switch (key) {
    case AV_LIMIT_MAX_N: return AV_MAX_N;
    case AV_LIMIT_MAX_D: return AV_MAX_D;
    case AV_LIMIT_MAX_FEATURE_DIM: return AV_MAX_FEATURE_DIM;
    case AV_LIMIT_STATUS_MIN: return AV_STATUS_MIN;
    case AV_LIMIT_STATUS_MAX: return AV_STATUS_MAX;
    case AV_LIMIT_SIZE_MAX: return (double)SIZE_MAX;
    default: return -1;
    }
}

int avi_all_finite(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

// ----------------------------------------------------------------------------------------------------
// names

static const char *const VARIANT_NAMES[AV_VARIANT_COUNT] = {
    "softmax", "elu", "relu", "exp", "efficient", "focused", "linformer",
    "performer", "taylor", "explimit", "hedgehog", "nystrom", "cosformer",
};

const char *av_variant_name(int variant) {
    return variant >= 0 && variant < AV_VARIANT_COUNT ? VARIANT_NAMES[variant] : NULL;
}

int av_variant_from_name(const char *name) {
    if (!name) return -1;
    for (int v = 0; v < AV_VARIANT_COUNT; v++)
        if (strcmp(name, VARIANT_NAMES[v]) == 0) return v;
    return -1;
}

// ----------------------------------------------------------------------------------------------------
// knobs

int av_params_default(av_params *prm, int variant) {
    if (!prm) return AV_ERR_NULL;
    if (variant < 0 || variant >= AV_VARIANT_COUNT) return AV_ERR_VARIANT;
    memset(prm, 0, sizeof *prm);
    prm->variant = variant;
    return AV_OK;
}

size_t av_params_size(void) { return sizeof(av_params); }

int av_params_set(av_params *prm, int knob, double value) {
    if (!prm) return AV_ERR_NULL;
    if (!isfinite(value)) return AV_ERR_KNOB;
    int iv = (int)lround(value > 2e9 ? 2e9 : value < -2e9 ? -2e9 : value);
    switch (knob) {
    case AV_KNOB_VARIANT:
        if (iv < 0 || iv >= AV_VARIANT_COUNT) return AV_ERR_VARIANT;
        prm->variant = iv;
        break;
    case AV_KNOB_CAUSAL: prm->causal = iv != 0; break;
    case AV_KNOB_SCALE: prm->scale = value; break;
    case AV_KNOB_P: prm->p = value; break;
    case AV_KNOB_DWC_KERNEL: prm->dwc_kernel = iv; break;
    case AV_KNOB_S: prm->s = iv; break;
    case AV_KNOB_EF_KIND: prm->ef_kind = iv; break;
    case AV_KNOB_EF_SHARED: prm->ef_shared = iv != 0; break;
    case AV_KNOB_M: prm->m = iv; break;
    case AV_KNOB_ORTHOGONAL: prm->orthogonal = iv != 0; break;
    case AV_KNOB_SEED:
        if (value < 0 || value > 4294967295.0) return AV_ERR_KNOB;
        prm->seed = (uint32_t)llround(value);
        break;
    case AV_KNOB_ORDER: prm->order = iv; break;
    case AV_KNOB_N: prm->N = iv; break;
    case AV_KNOB_LANDMARKS: prm->landmarks = iv; break;
    case AV_KNOB_ITERS: prm->iters = iv; break;
    default: return AV_ERR_VARIANT;
    }
    return AV_OK;
}

double av_params_get(const av_params *prm, int knob) {
    if (!prm) return NAN;
    switch (knob) {
    case AV_KNOB_VARIANT: return prm->variant;
    case AV_KNOB_CAUSAL: return prm->causal;
    case AV_KNOB_SCALE: return prm->scale;
    case AV_KNOB_P: return prm->p;
    case AV_KNOB_DWC_KERNEL: return prm->dwc_kernel;
    case AV_KNOB_S: return prm->s;
    case AV_KNOB_EF_KIND: return prm->ef_kind;
    case AV_KNOB_EF_SHARED: return prm->ef_shared;
    case AV_KNOB_M: return prm->m;
    case AV_KNOB_ORTHOGONAL: return prm->orthogonal;
    case AV_KNOB_SEED: return prm->seed;
    case AV_KNOB_ORDER: return prm->order;
    case AV_KNOB_N: return prm->N;
    case AV_KNOB_LANDMARKS: return prm->landmarks;
    case AV_KNOB_ITERS: return prm->iters;
    default: return NAN;
    }
}

int av_params_set_hedgehog(av_params *prm, const float *W, int cols) {
    if (!prm) return AV_ERR_NULL;
    if (W && (cols < 1 || cols > AV_MAX_FEATURE_DIM / 2)) return AV_ERR_KNOB;
    prm->hedgehog_w = W;
    prm->hedgehog_cols = W ? cols : 0;
    return AV_OK;
}

static int imin(int a, int b) { return a < b ? a : b; }

// The variants without a causal form: their projection or pooling mixes future tokens (Linformer,
// Nyström), or they normalise keys over all positions (Efficient), or DWC is centred (focused + DWC).
static int has_causal_form(const av_params *p) {
    switch (p->variant) {
    case AV_EFFICIENT: case AV_LINFORMER: case AV_NYSTROM: return 0;
    case AV_FOCUSED: return p->dwc_kernel == 0;
    default: return 1;
    }
}

int av_params_resolve(av_params *out, const av_params *in, int n, int d) {
    if (!out || !in) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    av_params p = *in;
    if (p.variant < 0 || p.variant >= AV_VARIANT_COUNT) return AV_ERR_VARIANT;
    if (p.causal != 0 && p.causal != 1) return AV_ERR_KNOB;
    if (!isfinite(p.scale) || p.scale < 0) return AV_ERR_KNOB;
    if (p.scale == 0) p.scale = 1.0 / sqrt((double)d);
    if (p.p == 0) p.p = 3;
    if (p.s == 0) p.s = imin(n, 64);
    if (p.m == 0) p.m = 256;
    if (p.order == 0) p.order = 2;
    if (p.N == 0) p.N = 2;
    if (p.landmarks == 0) p.landmarks = imin(n, 64);
    if (p.iters == 0) p.iters = 6;
    else if (p.iters == -1) p.iters = 0;
    switch (p.variant) {
    case AV_FOCUSED:
        if (!(p.p >= 1 && p.p <= 10)) return AV_ERR_KNOB;
        if (p.dwc_kernel < 0 || (p.dwc_kernel > 0 && (p.dwc_kernel % 2 == 0 || p.dwc_kernel > 2 * n - 1)))
            return AV_ERR_KNOB;
        break;
    case AV_LINFORMER:
        if (p.s < 1 || p.s > n || (p.ef_kind != AV_EF_GAUSSIAN && p.ef_kind != AV_EF_MEAN)) return AV_ERR_KNOB;
        break;
    case AV_PERFORMER:
        if (p.m < 1 || p.m > AV_MAX_FEATURE_DIM) return AV_ERR_KNOB;
        break;
    case AV_TAYLOR:
        if (p.order < 1 || p.order > 4) return AV_ERR_KNOB;
        break;
    case AV_EXPLIMIT:
        if (p.N < 1 || p.N > 64) return AV_ERR_KNOB;
        break;
    case AV_HEDGEHOG:
        if (p.hedgehog_w && (p.hedgehog_cols < 1 || p.hedgehog_cols > AV_MAX_FEATURE_DIM / 2)) return AV_ERR_KNOB;
        if (!p.hedgehog_w) p.hedgehog_cols = d;
        break;
    case AV_NYSTROM:
        if (p.landmarks < 1 || p.landmarks > n || p.iters < 0 || p.iters > 100) return AV_ERR_KNOB;
        break;
    default: break;
    }
    if (p.causal && !has_causal_form(&p)) return AV_ERR_NO_CAUSAL;
    *out = p;
    return AV_OK;
}
