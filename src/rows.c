/* rows.c: the rules every path applies to a row's outcome, shared by attention.c, recurrent.c,
 * mechanisms.c and readouts.c so their results agree bit for bit: the factor a row's sum is normalised by
 * (the registry's normaliser rule, docs/variant-formulas.md), and which status wins when two merge.
 * It calls only the registry (variants.c).
 */
#include "internal.h"

/* The variants whose every product φ(q)·φ(k) is positive by definition: a row sum of 0 means that all of
 * its float32 products underflowed (AV_WARN_UNDERFLOW_ROW), not that the normaliser is truly ≤ 0. */
static int positive_kernel(const av_params *p) {
    switch (p->variant) {
    case AV_ELU: case AV_EXP: case AV_EFFICIENT: case AV_FOCUSED: case AV_PERFORMER: case AV_HEDGEHOG: return 1;
    default: return 0;
    }
}

/* The factor a row is multiplied by, given its sum, by the registry's normaliser rule (each rule: the
 * file comment of attention.c); *zero |= 1 for a sum ≤ 0, or 2 for a sum of 0 from products that are
 * positive by definition. */
double avi_norm_factor(const av_params *p, int n, double sum, int *zero) {
    const av_variant_desc *v = av_variant_info(p->variant);
    double den;
    if (v->norm == AV_NORM_NONE) return 1.0;
    if (sum <= 0) *zero |= sum == 0 && positive_kernel(p) ? 2 : 1;
    switch (v->norm) {
    case AV_NORM_ADD: den = sum + v->eps; break;
    case AV_NORM_ADD_N: den = sum + n * v->eps; break;
    case AV_NORM_CLAMP: den = sum > v->eps ? sum : v->eps; break;
    default: den = sum; break;
    }
    return den == 0 ? 1.0 : 1.0 / den;
}

/* Errors win; among events the one that says most about the outputs: an overflowed feature (the root
 * cause) over an overflowed product, over no convergence, over a zero row. */
static int event_rank(int st) {
    switch (st) {
    case AV_WARN_OVERFLOW: return 4;
    case AV_WARN_PRODUCT_OVERFLOW: return 3;
    case AV_WARN_NO_CONVERGENCE: return 2;
    case AV_WARN_ZERO_ROW: case AV_WARN_UNDERFLOW_ROW: return 1;
    default: return 0;
    }
}
/* A truly non-positive row wins over one whose products underflowed (avi_norm_factor's two bits). */
int avi_zero_status(int zero) { return zero & 1 ? AV_WARN_ZERO_ROW : zero ? AV_WARN_UNDERFLOW_ROW : AV_OK; }

int avi_merge(int a, int b) {
    if (a < 0 || b < 0) return a < 0 ? a : b;
    return event_rank(a) >= event_rank(b) ? a : b;
}
