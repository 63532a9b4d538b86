/* status.c: the status codes (their messages and C names), the build's limits and the finiteness test:
 * the facts every other file may use, calling none of them. */
#include <math.h>
#include <stdint.h>

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
    case AV_ERR_NEEDS_CAUSAL: return "this variant or knob setting exists only with the causal mask (a decay, retention, the delta rule, the gated families)";
    case AV_ERR_GATES:
        return "a gate input is out of range or does not fit: a log-gate above 0, a beta outside (0, 2], arrays for another n, or per-channel gates for a family with one gate per token";
    case AV_WARN_ZERO_ROW: return "some row's products sum to zero or less, so its weights are zero or undefined";
    case AV_WARN_UNDERFLOW_ROW:
        return "some row's products all underflowed float32 (the true ones are positive), so its weights are zero";
    case AV_WARN_OVERFLOW: return "a feature (an exponential or a tensor power) overflowed the float range (entries may be Inf or NaN)";
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

/* The C names of the status codes, for the registry's JSON (the JS loader's named constants). */
const char *avi_status_name(int status) {
    switch (status) {
    case AV_OK: return "AV_OK";
    case AV_ERR_NULL: return "AV_ERR_NULL";
    case AV_ERR_SIZE: return "AV_ERR_SIZE";
    case AV_ERR_KNOB: return "AV_ERR_KNOB";
    case AV_ERR_VARIANT: return "AV_ERR_VARIANT";
    case AV_ERR_NO_CAUSAL: return "AV_ERR_NO_CAUSAL";
    case AV_ERR_NONFINITE: return "AV_ERR_NONFINITE";
    case AV_ERR_WORKSPACE: return "AV_ERR_WORKSPACE";
    case AV_ERR_FEATURE_DIM: return "AV_ERR_FEATURE_DIM";
    case AV_ERR_NO_LINEAR: return "AV_ERR_NO_LINEAR";
    case AV_ERR_FORMAT: return "AV_ERR_FORMAT";
    case AV_ERR_IO: return "AV_ERR_IO";
    case AV_ERR_NOMEM: return "AV_ERR_NOMEM";
    case AV_ERR_TOO_LARGE: return "AV_ERR_TOO_LARGE";
    case AV_ERR_NEEDS_CAUSAL: return "AV_ERR_NEEDS_CAUSAL";
    case AV_ERR_GATES: return "AV_ERR_GATES";
    case AV_WARN_ZERO_ROW: return "AV_WARN_ZERO_ROW";
    case AV_WARN_UNDERFLOW_ROW: return "AV_WARN_UNDERFLOW_ROW";
    case AV_WARN_OVERFLOW: return "AV_WARN_OVERFLOW";
    case AV_WARN_NO_CONVERGENCE: return "AV_WARN_NO_CONVERGENCE";
    case AV_WARN_PRODUCT_OVERFLOW: return "AV_WARN_PRODUCT_OVERFLOW";
    default: return NULL;
    }
}
