/* util.c: the knobs (defaults, setters, resolution and checks) driven by the registry's knob rows
 * (variants.c). Status strings and limits: status.c. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gated.h"
#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// knobs: every rule below reads the registry's knob rows (variants.c); no variant is named here

int av_params_default(av_params *prm, int variant) {
    if (!prm) return AV_ERR_NULL;
    if (variant < 0 || variant >= AV_VARIANT_COUNT) return AV_ERR_VARIANT;
    memset(prm, 0, sizeof *prm);
    prm->variant = variant;
    for (int k = AV_KNOB_VARIANT + 1; k < AV_KNOB_COUNT; k++) { /* zero is the default unless a row says otherwise */
        const av_knob_desc *kd = av_knob_info(k);
        if (!(kd->flags & AV_KF_ZERO_DEFAULT)) avi_knob_put(prm, k, kd->def);
    }
    /* a variant's own default of a knob whose 0 is a value, not "the default" (lolcats's window 16: 0 there
     * means no window), is written here; a zero-default knob's is filled in by av_params_check */
    const av_variant_desc *vd = av_variant_info(variant);
    for (int i = 0; i < vd->knob_count; i++)
        if (vd->defaults[i] != 0 && !(av_knob_info(vd->knobs[i])->flags & AV_KF_ZERO_DEFAULT))
            avi_knob_put(prm, vd->knobs[i], vd->defaults[i]);
    prm->causal = (av_variant_info(variant)->flags & AV_VF_CAUSAL_ONLY) != 0;
    return AV_OK;
}

size_t av_params_size(void) { return sizeof(av_params); }

int av_params_set(av_params *prm, int knob, double value) {
    if (!prm) return AV_ERR_NULL;
    if (!isfinite(value)) return AV_ERR_KNOB;
    if (knob == AV_KNOB_VARIANT) {
        long v = lround(value > 2e9 ? 2e9 : value < -2e9 ? -2e9 : value); /* rounded, then checked */
        if (v < 0 || v >= AV_VARIANT_COUNT) return AV_ERR_VARIANT;
        prm->variant = (int)v;
        return AV_OK;
    }
    const av_knob_desc *kd = av_knob_info(knob);
    if (!kd) return AV_ERR_VARIANT;
    if (kd->type == AV_KT_REAL) {
        avi_knob_put(prm, knob, value);
    } else if (kd->type == AV_KT_BOOL) { /* rounded like every integer: 0.4 is off, 0.6 on */
        long b = lround(value > 2e9 ? 2e9 : value < -2e9 ? -2e9 : value);
        /* a switch whose 0 means "the variant's default" keeps −1, its explicit off (qk_l2norm) */
        avi_knob_put(prm, knob, (kd->flags & AV_KF_MINUS1_ZERO) && b == -1 ? -1 : b != 0);
    } else if (kd->hi > 2147483647.0) { /* the seed: the whole uint32 range, nothing else */
        if (value < 0 || value > kd->hi) return AV_ERR_KNOB;
        avi_knob_put(prm, knob, (double)llround(value));
    } else { /* an int field: rounded, clamped to ±2e9 so that a later range check still sees it out of range */
        avi_knob_put(prm, knob, (double)lround(value > 2e9 ? 2e9 : value < -2e9 ? -2e9 : value));
    }
    return AV_OK;
}

double av_params_get(const av_params *prm, int knob) {
    if (!prm || knob < 0 || knob >= AV_KNOB_COUNT) return NAN;
    return avi_knob_get(prm, knob);
}

int av_params_set_hedgehog(av_params *prm, const float *W, int cols) {
    if (!prm) return AV_ERR_NULL;
    if (W && (cols < 1 || cols > AV_MAX_FEATURE_DIM / 2)) return AV_ERR_KNOB;
    prm->hedgehog_w = W;
    prm->hedgehog_cols = W ? cols : 0;
    return AV_OK;
}

int av_params_set_gates(av_params *prm, const float *g, int n, int channels, const float *beta) {
    if (!prm) return AV_ERR_NULL;
    if ((g || beta) && (n < 1 || n > AV_MAX_N)) return AV_ERR_SIZE;
    if (g && (channels < 1 || channels > AV_MAX_D)) return AV_ERR_SIZE;
    /* one n for every array: a and b set for another n would be read past their end */
    if ((g || beta) && (prm->dplr_a || prm->dplr_b) && prm->gates_n != n) return AV_ERR_GATES;
    prm->gates = g;
    prm->gate_channels = g ? channels : 0;
    prm->betas = beta;
    if (g || beta) prm->gates_n = n;
    else if (!prm->dplr_a) prm->gates_n = 0;
    return AV_OK;
}

int av_params_set_dplr(av_params *prm, const float *a, const float *b, int n) {
    if (!prm) return AV_ERR_NULL;
    if ((a || b) && (n < 1 || n > AV_MAX_N)) return AV_ERR_SIZE;
    if ((a || b) && (prm->gates || prm->betas) && prm->gates_n != n) return AV_ERR_GATES;
    prm->dplr_a = a;
    prm->dplr_b = b;
    if (a || b) prm->gates_n = n;
    else if (!prm->gates && !prm->betas) prm->gates_n = 0;
    return AV_OK;
}

/* The default of a knob at these sizes: the variant's own where its row gives one (retention's decay). */
static double default_of(const av_knob_desc *kd, int k, int variant, int n, int d) {
    const av_variant_desc *vd = av_variant_info(variant);
    for (int i = 0; i < vd->knob_count; i++)
        if (vd->knobs[i] == k && vd->defaults[i] != 0) return vd->defaults[i];
    if (kd->flags & AV_KF_DEF_RSQRT_D) return 1.0 / sqrt((double)d);
    if (kd->flags & AV_KF_DEF_MIN_N) return n < kd->def ? n : kd->def;
    return kd->def;
}

/* Fill a zero (or −1) field with its meaning; every knob, read or not, as the kernels expect. */
static void fill_default(av_params *p, int k, int n, int d) {
    const av_knob_desc *kd = av_knob_info(k);
    double v = avi_knob_get(p, k);
    if ((kd->flags & AV_KF_ZERO_DEFAULT) && v == 0) avi_knob_put(p, k, default_of(kd, k, p->variant, n, d));
    else if ((kd->flags & AV_KF_MINUS1_ZERO) && v == -1) avi_knob_put(p, k, 0);
}

/* 1 when the (filled) knob is inside its row's range at this n. */
static int in_range(const av_params *p, int k, int n) {
    const av_knob_desc *kd = av_knob_info(k);
    double v = avi_knob_get(p, k), hi = kd->flags & AV_KF_HI_N ? n : kd->flags & AV_KF_HI_2N ? 2.0 * n - 1 : kd->hi;
    if (!isfinite(v)) return 0;
    if (kd->type == AV_KT_BOOL) return 1; /* a switch field: any nonzero int means on, as it always has */
    if ((kd->flags & AV_KF_ODD) && v != 0 && fmod(v, 2.0) == 0) return 0;
    return v >= kd->lo && v <= hi;
}

int avi_extra_term(const av_params *p) {
    const av_variant_desc *vd = av_variant_info(p->variant);
    for (int i = 0; i < vd->knob_count; i++)
        if ((av_knob_info(vd->knobs[i])->flags & AV_KF_NO_CAUSAL) && avi_knob_get(p, vd->knobs[i]) != 0) return 1;
    return 0;
}

int avi_weights_finite(const av_params *p, int d) {
    if (!(av_variant_info(p->variant)->flags & AV_VF_WEIGHTS) || !p->hedgehog_w) return 1;
    return avi_all_finite(p->hedgehog_w, (size_t)d * p->hedgehog_cols);
}

int av_params_check(av_params *out, const av_params *in, int n, int d, int *bad_knob) {
    int bad_local;
    int *bad = bad_knob ? bad_knob : &bad_local;
    *bad = -1;
    if (!out || !in) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    av_params p = *in;
    if (p.variant < 0 || p.variant >= AV_VARIANT_COUNT) return AV_ERR_VARIANT;
    const av_variant_desc *vd = av_variant_info(p.variant);
    if (p.causal != 0 && p.causal != 1) { *bad = AV_KNOB_CAUSAL; return AV_ERR_KNOB; }
    if (!isfinite(p.scale) || p.scale < 0) { *bad = AV_KNOB_SCALE; return AV_ERR_KNOB; } /* read by every path */
    for (int k = AV_KNOB_VARIANT + 1; k < AV_KNOB_COUNT; k++) fill_default(&p, k, n, d);
    for (int i = 0; i < vd->knob_count; i++)
        if (!in_range(&p, vd->knobs[i], n)) { *bad = vd->knobs[i]; return AV_ERR_KNOB; }
    if (vd->flags & AV_VF_WEIGHTS) {
        if (p.hedgehog_w && (p.hedgehog_cols < 1 || p.hedgehog_cols > AV_MAX_FEATURE_DIM / 2)) return AV_ERR_KNOB;
        if (!p.hedgehog_w) p.hedgehog_cols = d;
    }
    if (p.causal && !(vd->flags & AV_VF_CAUSAL)) { *bad = AV_KNOB_CAUSAL; return AV_ERR_NO_CAUSAL; }
    if (!p.causal && (vd->flags & AV_VF_CAUSAL_ONLY)) { *bad = AV_KNOB_CAUSAL; return AV_ERR_NEEDS_CAUSAL; }
    if (!p.causal)
        for (int i = 0; i < vd->knob_count; i++) {
            const av_knob_desc *kd = av_knob_info(vd->knobs[i]);
            if ((kd->flags & AV_KF_NEEDS_CAUSAL) && avi_knob_get(&p, vd->knobs[i]) != kd->def) {
                *bad = vd->knobs[i];
                return AV_ERR_NEEDS_CAUSAL;
            }
        }
    if (p.causal && avi_extra_term(&p)) {
        for (int i = 0; i < vd->knob_count; i++)
            if ((av_knob_info(vd->knobs[i])->flags & AV_KF_NO_CAUSAL) && avi_knob_get(&p, vd->knobs[i]) != 0)
                *bad = vd->knobs[i];
        return AV_ERR_NO_CAUSAL;
    }
    if (vd->cls == AV_CLASS_GATED) {
        int st = avi_gated_check(&p, n, d);
        if (st != AV_OK) return st;
    }
    *out = p;
    return AV_OK;
}

int av_params_resolve(av_params *out, const av_params *in, int n, int d) {
    return av_params_check(out, in, n, d, NULL);
}
