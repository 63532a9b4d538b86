/* classes.h: a variant's class and flags from its registry row, the tests the engine's files
 * (attention.c, cost.c) branch on. */
#ifndef ATTNVIZ_CLASSES_H
#define ATTNVIZ_CLASSES_H

#include "internal.h"

static inline const av_variant_desc *desc(const av_params *p) { return av_variant_info(p->variant); }
static inline int is_exact(const av_params *p) { return desc(p)->cls == AV_CLASS_EXACT; }
static inline int is_lowrank(const av_params *p) { return desc(p)->cls == AV_CLASS_LOWRANK; }
static inline int is_poly(const av_params *p) { return desc(p)->cls == AV_CLASS_CLOSED_FORM; }
/* Retention and the delta rule: a state without a normaliser (recurrent.c runs their sequential forms). */
static inline int is_state(const av_params *p) { return desc(p)->cls == AV_CLASS_RETENTION || desc(p)->cls == AV_CLASS_DELTA; }
static inline int is_delta(const av_params *p) { return desc(p)->cls == AV_CLASS_DELTA; }
/* The gated families (docs/gated.md): gated.c dispatches their forms. */
static inline int is_gated(const av_params *p) { return desc(p)->cls == AV_CLASS_GATED; }
/* The hybrids (lolcats): a softmax window plus a feature-map term; lolcats.c computes their forms. */
static inline int is_hybrid(const av_params *p) { return desc(p)->cls == AV_CLASS_HYBRID; }
static inline int has_flag(const av_params *p, unsigned f) { return (desc(p)->flags & f) != 0; }
/* The depthwise convolution on V: a variant that reads the dwc_kernel knob, with a kernel (focused). */
static inline int has_dwc(const av_params *p) { return p->dwc_kernel > 0 && avi_variant_reads(p->variant, AV_KNOB_DWC_KERNEL); }

#endif /* ATTNVIZ_CLASSES_H */
