/* variants.c: the variant registry, the single source of truth for every variant and knob.
 *
 * One row per variant: its public descriptor (names, class, forms, normaliser rule, knobs; see
 * av_variant_desc in attnviz.h) and its kernels (feature dimension, feature map, closed-form kernel, cost
 * of the feature map). One row per knob: its key, flag, type, range, default and meaning, and where it
 * lives in av_params. util.c resolves knobs from these rows, attention.c dispatches on them, the CLI
 * builds its flags and help from them, and the JS loader reads them as JSON (av_registry_json).
 * Formulas and sources: docs/variant-formulas.md. Adding a variant: docs/adding-a-variant.md.
 */
#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// knobs

#define KF_Z AV_KF_ZERO_DEFAULT
static const av_knob_desc KNOBS[AV_KNOB_COUNT] = {
    [AV_KNOB_VARIANT] = {"variant", "--variant", AV_KT_ENUM, 0, 0, AV_VARIANT_COUNT - 1, 0, 1, NULL,
                         "the variant (enum av_variant)"},
    [AV_KNOB_CAUSAL] = {"causal", "--causal", AV_KT_BOOL, 0, 0, 1, 0, 1, NULL,
                        "inclusive autoregressive mask: token i sees keys j <= i"},
    [AV_KNOB_SCALE] = {"scale", "--scale", AV_KT_REAL, KF_Z | AV_KF_DEF_RSQRT_D, 0, DBL_MAX, 0, 0.05, NULL,
                       "multiplies q.k in the variants that approximate exp"},
    [AV_KNOB_P] = {"p", "--p", AV_KT_REAL, KF_Z, 1, 10, 3, 0.1, NULL, "focusing power p of f_p"},
    [AV_KNOB_DWC_KERNEL] = {"dwc_kernel", "--dwc-kernel", AV_KT_INT, AV_KF_ODD | AV_KF_HI_2N | AV_KF_NO_CAUSAL, 0, 0, 0,
                            2, NULL, "depthwise-conv kernel size on V, odd, up to 2n-1; 0 means no DWC"},
    [AV_KNOB_S] = {"s", "--s", AV_KT_INT, KF_Z | AV_KF_HI_N | AV_KF_DEF_MIN_N, 1, 0, 64, 1, NULL,
                   "projected length s of E, F (default min(n, 64))"},
    [AV_KNOB_EF_KIND] = {"ef_kind", "--ef", AV_KT_ENUM, 0, 0, 1, 0, 1, "gaussian|mean",
                         "E/F: gaussian N(0, 1/s) entries, or segment means"},
    [AV_KNOB_EF_SHARED] = {"ef_shared", "--ef-shared", AV_KT_BOOL, 0, 0, 1, 0, 1, NULL, "share one projection: E = F"},
    [AV_KNOB_M] = {"m", "--m", AV_KT_INT, KF_Z, 1, AV_MAX_FEATURE_DIM, 256, 1, NULL, "number of random features m"},
    [AV_KNOB_ORTHOGONAL] = {"orthogonal", "--orthogonal", AV_KT_BOOL, 0, 0, 1, 0, 1, NULL,
                            "orthogonal blocks with chi(d) row norms instead of iid rows"},
    [AV_KNOB_SEED] = {"seed", "--seed", AV_KT_INT, 0, 0, 4294967295.0, 0, 1, NULL,
                      "seed of the random matrices (omega, E/F, DWC weights); redraw is seed + 1"},
    [AV_KNOB_ORDER] = {"order", "--order", AV_KT_INT, KF_Z, 1, 4, 2, 1, NULL, "Taylor order p of sum s^r/r!"},
    [AV_KNOB_N] = {"N", "--N", AV_KT_INT, KF_Z, 1, 64, 2, 1, NULL, "power N of (1 + x/N)^N"},
    [AV_KNOB_LANDMARKS] = {"landmarks", "--landmarks", AV_KT_INT, KF_Z | AV_KF_HI_N | AV_KF_DEF_MIN_N, 1, 0, 64, 1, NULL,
                           "Nystrom landmarks (segment means; default min(n, 64))"},
    [AV_KNOB_ITERS] = {"iters", "--iters", AV_KT_INT, KF_Z | AV_KF_MINUS1_ZERO, 0, 100, 6, 1, NULL,
                       "iterations of the pseudo-inverse Z"},
    [AV_KNOB_FEATURE_EPS] = {"feature_eps", "--feature-eps", AV_KT_REAL, KF_Z | AV_KF_MINUS1_ZERO, 0, 1e-2, 1e-6, 1e-6,
                             NULL, "the epsilon added inside Performer's phi (the reference PyTorch code uses 1e-4)"},
    [AV_KNOB_DECAY] = {"decay", "--decay", AV_KT_REAL, KF_Z | AV_KF_NEEDS_CAUSAL, 0, 1, 1, 0.001, NULL,
                       "decay gamma in (0, 1]: each step multiplies the state by gamma (half-life ln(1/2)/ln(gamma)); "
                       "below 1 it needs --causal"},
    [AV_KNOB_WINDOW] = {"window", "--window", AV_KT_INT, 0, 0, AV_MAX_N, 0, 1, NULL,
                        "sliding window W: row i sees keys with |i - j| < W (and j <= i when causal); 0 means none"},
    [AV_KNOB_BETA] = {"beta", "--beta", AV_KT_REAL, KF_Z, 0, 2, 0.5, 0.05, NULL,
                      "delta-rule write strength beta in (0, 2]; 1 overwrites the value stored under a key"},
    [AV_KNOB_CHUNK] = {"chunk", "--chunk", AV_KT_INT, KF_Z | AV_KF_DEF_MIN_N, 1, AV_MAX_N, 64, 1, NULL,
                       "chunk size C of the chunkwise form (every variant's --path chunkwise reads it; default min(n, 64); above n it is n)"},
};
#undef KF_Z

/* Where each knob lives in av_params: 'i' int, 'd' double, 'u' uint32_t. */
static const struct { size_t off; char kind; } FIELDS[AV_KNOB_COUNT] = {
    [AV_KNOB_VARIANT] = {offsetof(av_params, variant), 'i'}, [AV_KNOB_CAUSAL] = {offsetof(av_params, causal), 'i'},
    [AV_KNOB_SCALE] = {offsetof(av_params, scale), 'd'},     [AV_KNOB_P] = {offsetof(av_params, p), 'd'},
    [AV_KNOB_DWC_KERNEL] = {offsetof(av_params, dwc_kernel), 'i'}, [AV_KNOB_S] = {offsetof(av_params, s), 'i'},
    [AV_KNOB_EF_KIND] = {offsetof(av_params, ef_kind), 'i'}, [AV_KNOB_EF_SHARED] = {offsetof(av_params, ef_shared), 'i'},
    [AV_KNOB_M] = {offsetof(av_params, m), 'i'},             [AV_KNOB_ORTHOGONAL] = {offsetof(av_params, orthogonal), 'i'},
    [AV_KNOB_SEED] = {offsetof(av_params, seed), 'u'},       [AV_KNOB_ORDER] = {offsetof(av_params, order), 'i'},
    [AV_KNOB_N] = {offsetof(av_params, N), 'i'},             [AV_KNOB_LANDMARKS] = {offsetof(av_params, landmarks), 'i'},
    [AV_KNOB_ITERS] = {offsetof(av_params, iters), 'i'},   [AV_KNOB_FEATURE_EPS] = {offsetof(av_params, feature_eps), 'd'},
    [AV_KNOB_DECAY] = {offsetof(av_params, decay), 'd'},     [AV_KNOB_WINDOW] = {offsetof(av_params, window), 'i'},
    [AV_KNOB_BETA] = {offsetof(av_params, beta), 'd'},       [AV_KNOB_CHUNK] = {offsetof(av_params, chunk), 'i'},
};

double avi_knob_get(const av_params *p, int knob) {
    const unsigned char *base = (const unsigned char *)p + FIELDS[knob].off;
    int i;
    double x;
    uint32_t u;
    switch (FIELDS[knob].kind) {
    case 'd': memcpy(&x, base, sizeof x); return x;
    case 'u': memcpy(&u, base, sizeof u); return u;
    default: memcpy(&i, base, sizeof i); return i;
    }
}

void avi_knob_put(av_params *p, int knob, double v) {
    unsigned char *base = (unsigned char *)p + FIELDS[knob].off;
    switch (FIELDS[knob].kind) { /* each conversion only for its own field: the value is in range there */
    case 'd': memcpy(base, &v, sizeof v); break;
    case 'u': {
        uint32_t u = (uint32_t)v;
        memcpy(base, &u, sizeof u);
        break;
    }
    default: {
        int i = (int)v;
        memcpy(base, &i, sizeof i);
        break;
    }
    }
}

// ----------------------------------------------------------------------------------------------------
// variants

#define CAUSAL_LINEAR (AV_VF_CAUSAL | AV_VF_LINEAR | AV_VF_RECURRENT | AV_VF_FACTORS | AV_VF_CHUNKWISE)
#define STATE_ONLY (AV_VF_CAUSAL | AV_VF_LINEAR | AV_VF_RECURRENT | AV_VF_CHUNKWISE | AV_VF_SCALED | AV_VF_CAUSAL_ONLY)
#define D AV_KNOB_DECAY
static const avi_variant VARIANTS[AV_VARIANT_COUNT] = {
    [AV_SOFTMAX] = {{"softmax", "softmax, the reference", "row softmax of beta*QK^T, max-subtracted (beta: the scale)",
                     "Vaswani et al. 2017", AV_CLASS_EXACT, AV_VF_CAUSAL | AV_VF_SCALED | AV_VF_CHUNKWISE, AV_NORM_EXACT, 0,
                     2, {D, AV_KNOB_WINDOW}, {0}},
                    NULL, NULL, NULL, NULL, NULL},
    [AV_ELU] = {{"elu", "linear, phi = elu+1", "phi(x) = elu(x) + 1", "Katharopoulos et al. 2020", AV_CLASS_KERNEL,
                 CAUSAL_LINEAR, AV_NORM_ADD, 1e-6, 1, {D}, {0}},
                avi_dim_d, NULL, avi_phi_elu, NULL, avi_cost_elementwise},
    [AV_RELU] = {{"relu", "linear, phi = relu", "phi(x) = relu(x)", "seed article 'Linear Attention'", AV_CLASS_KERNEL,
                  CAUSAL_LINEAR, AV_NORM_ADD, 1e-6, 1, {D}, {0}},
                 avi_dim_d, NULL, avi_phi_relu, NULL, avi_cost_elementwise},
    [AV_EXP] = {{"exp", "linear, phi = exp", "phi(x) = exp(x - c), c a per-query and one global key stabiliser",
                 "seed article 'Linear Attention'", AV_CLASS_KERNEL, CAUSAL_LINEAR, AV_NORM_SUM, 0, 1, {D}, {0}},
                avi_dim_d, NULL, avi_phi_exp, NULL, avi_cost_elementwise},
    [AV_EFFICIENT] = {{"efficient", "Efficient Attention",
                       "softmax of each query over its features x softmax of each key feature over positions",
                       "Shen et al. 2021", AV_CLASS_KERNEL, AV_VF_LINEAR | AV_VF_FACTORS, AV_NORM_SUM, 0, 0, {0}, {0}},
                      avi_dim_d, NULL, avi_phi_efficient, NULL, avi_cost_elementwise},
    [AV_FOCUSED] = {{"focused", "focused (FLatten)", "phi(x) = f_p((relu(x) + 1e-6)/ln 2), f_p(y) = |y| y^p/|y^p|",
                     "Han et al. 2023", AV_CLASS_KERNEL, CAUSAL_LINEAR, AV_NORM_ADD_N, 1e-6, 4,
                     {AV_KNOB_P, AV_KNOB_DWC_KERNEL, AV_KNOB_SEED, D}, {0}},
                    avi_dim_d, NULL, avi_phi_focused, NULL, avi_cost_elementwise},
    [AV_LINFORMER] = {{"linformer", "Linformer", "softmax(beta*Q(EK)^T) F, E, F in R^{s x n} (beta: the scale)", "Wang et al. 2020",
                       AV_CLASS_LOWRANK, AV_VF_LINEAR | AV_VF_FACTORS | AV_VF_SCALED, AV_NORM_EXACT, 0, 4,
                       {AV_KNOB_S, AV_KNOB_EF_KIND, AV_KNOB_EF_SHARED, AV_KNOB_SEED}, {0}},
                      NULL, NULL, NULL, NULL, NULL},
    [AV_PERFORMER] = {{"performer", "Performer FAVOR+", "phi(x) = m^-1/2 (exp(w_i.x' - |x'|^2/2 - c) + eps), x' = sqrt(scale) x",
                       "Choromanski et al. 2021", AV_CLASS_KERNEL, CAUSAL_LINEAR | AV_VF_SCALED, AV_NORM_SUM, 0, 5,
                       {AV_KNOB_M, AV_KNOB_ORTHOGONAL, AV_KNOB_SEED, AV_KNOB_FEATURE_EPS, D}, {0}},
                      avi_dim_performer, avi_performer_work, avi_phi_performer, NULL, avi_cost_performer},
    [AV_TAYLOR] = {{"taylor", "Taylor series of exp", "sum_{r<=order} x^r/r!, x = beta*q.k (beta: the scale)",
                    "seed article 'infinite-dimensional linear attention'", AV_CLASS_CLOSED_FORM,
                    CAUSAL_LINEAR | AV_VF_SCALED, AV_NORM_SUM, 0, 2, {AV_KNOB_ORDER, D}, {0}},
                   avi_dim_taylor, avi_tensor_work, avi_phi_taylor, avi_kernel_row_taylor, avi_cost_tensor},
    [AV_EXPLIMIT] = {{"explimit", "(1 + s/N)^N", "(1 + x/N)^N, x = beta*q.k (beta: the scale), an N-fold tensor power of [1, x/sqrt(N)]",
                      "seed article 'infinite-dimensional linear attention'", AV_CLASS_CLOSED_FORM,
                      CAUSAL_LINEAR | AV_VF_SCALED, AV_NORM_SUM, 0, 2, {AV_KNOB_N, D}, {0}},
                     avi_dim_explimit, avi_tensor_work, avi_phi_explimit, avi_kernel_row_explimit, avi_cost_tensor},
    [AV_HEDGEHOG] = {{"hedgehog", "Hedgehog", "phi(x) = [exp(W^T x - c), exp(-W^T x - c)], W default identity",
                      "Zhang et al. 2024", AV_CLASS_KERNEL, CAUSAL_LINEAR | AV_VF_WEIGHTS, AV_NORM_SUM, 0, 1, {D}, {0}},
                     avi_dim_hedgehog, NULL, avi_phi_hedgehog, NULL, avi_cost_hedgehog},
    [AV_NYSTROM] = {{"nystrom", "Nystromformer", "F Z B: softmax blocks through m segment-mean landmarks, Z ~ pinv",
                     "Xiong et al. 2021", AV_CLASS_LOWRANK, AV_VF_LINEAR | AV_VF_FACTORS | AV_VF_SCALED, AV_NORM_EXACT,
                     0, 2, {AV_KNOB_LANDMARKS, AV_KNOB_ITERS}, {0}},
                    NULL, NULL, NULL, NULL, NULL},
    [AV_COSFORMER] = {{"cosformer", "cosFormer", "relu(q).relu(k) cos(pi(i - j)/(2n)), positions from 1",
                       "Qin et al. 2022", AV_CLASS_KERNEL, CAUSAL_LINEAR, AV_NORM_CLAMP, 1e-6, 1, {D}, {0}},
                      avi_dim_2d, NULL, avi_phi_cosformer, NULL, avi_cost_elementwise},
    [AV_RETENTION] = {{"retention", "retention (RetNet)", "M = (beta*QK^T) * gamma^(i-j) for j <= i, unnormalised (beta: the scale)",
                       "Sun et al. 2023", AV_CLASS_RETENTION, STATE_ONLY, AV_NORM_NONE, 0, 2, {D, AV_KNOB_CHUNK},
                       {1.0 - 1.0 / 32.0, 0}},
                      avi_dim_d, NULL, avi_phi_retention, NULL, avi_cost_retention},
    [AV_DELTANET] = {{"deltanet", "delta rule (DeltaNet)",
                      "S <- alpha S; S += beta k (v - S^T k)^T; o = S^T (scale q), unit q and k (alpha: the decay)",
                      "Schlag et al. 2021; Yang et al. 2024", AV_CLASS_DELTA, STATE_ONLY, AV_NORM_NONE, 0, 3,
                      {AV_KNOB_BETA, D, AV_KNOB_CHUNK}, {0}},
                     avi_dim_d, NULL, avi_phi_delta, NULL, avi_cost_delta},
};
#undef CAUSAL_LINEAR
#undef STATE_ONLY
#undef D

const avi_variant *avi_variant_of(int variant) { return &VARIANTS[variant]; }

const av_variant_desc *av_variant_info(int variant) {
    return variant >= 0 && variant < AV_VARIANT_COUNT ? &VARIANTS[variant].desc : NULL;
}

const av_knob_desc *av_knob_info(int knob) {
    return knob > AV_KNOB_VARIANT && knob < AV_KNOB_COUNT ? &KNOBS[knob] : NULL;
}

const char *av_variant_name(int variant) {
    return variant >= 0 && variant < AV_VARIANT_COUNT ? VARIANTS[variant].desc.name : NULL;
}

int av_variant_from_name(const char *name) {
    if (!name) return -1;
    for (int v = 0; v < AV_VARIANT_COUNT; v++)
        if (strcmp(name, VARIANTS[v].desc.name) == 0) return v;
    return -1;
}

int avi_variant_reads(int variant, int knob) {
    const av_variant_desc *v = &VARIANTS[variant].desc;
    for (int i = 0; i < v->knob_count; i++)
        if (v->knobs[i] == knob) return 1;
    return 0;
}

// ----------------------------------------------------------------------------------------------------
// the registry as JSON (built once into static storage; every string in the tables is plain ASCII
// without quotes or backslashes, which the registry test checks)

typedef struct { char *p; size_t left; int ok; } jbuf;

static void jput(jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void jput(jbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p, b->left, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= b->left) { b->ok = 0; b->left = 0; return; }
    b->p += k;
    b->left -= (size_t)k;
}

static const char *jbool(int x) { return x ? "true" : "false"; }

static void json_variant(jbuf *b, const av_variant_desc *v) {
    static const char *const CLASS[] = {"exact", "kernel", "closed_form", "lowrank", "retention", "delta"};
    static const char *const NORM[] = {"exact", "sum", "add", "add_n", "clamp", "none"};
    jput(b, "{\"name\":\"%s\",\"label\":\"%s\",\"formula\":\"%s\",\"source\":\"%s\",\"class\":\"%s\",", v->name,
         v->label, v->formula, v->source, CLASS[v->cls]);
    jput(b, "\"causal\":%s,\"linear\":%s,\"recurrent\":%s,\"factors\":%s,\"scaled\":%s,\"weights\":%s,",
         jbool(v->flags & AV_VF_CAUSAL), jbool(v->flags & AV_VF_LINEAR), jbool(v->flags & AV_VF_RECURRENT),
         jbool(v->flags & AV_VF_FACTORS), jbool(v->flags & AV_VF_SCALED), jbool(v->flags & AV_VF_WEIGHTS));
    jput(b, "\"chunkwise\":%s,\"causal_only\":%s,", jbool(v->flags & AV_VF_CHUNKWISE), jbool(v->flags & AV_VF_CAUSAL_ONLY));
    jput(b, "\"norm\":\"%s\",\"eps\":%.17g,\"knobs\":[", NORM[v->norm], v->eps);
    for (int i = 0; i < v->knob_count; i++) jput(b, "%s\"%s\"", i ? "," : "", KNOBS[v->knobs[i]].key);
    jput(b, "],\"defaults\":{");
    for (int i = 0, first = 1; i < v->knob_count; i++) {
        if (v->defaults[i] == 0) continue;
        jput(b, "%s\"%s\":%.17g", first ? "" : ",", KNOBS[v->knobs[i]].key, v->defaults[i]);
        first = 0;
    }
    jput(b, "}}");
}

static void json_knob(jbuf *b, const av_knob_desc *k) {
    static const char *const TYPE[] = {"real", "int", "bool", "enum"};
    unsigned f = k->flags;
    const char *hi_rule = f & AV_KF_HI_N ? "n" : f & AV_KF_HI_2N ? "2n-1" : "fixed";
    const char *def_rule = f & AV_KF_DEF_MIN_N ? "min_n" : f & AV_KF_DEF_RSQRT_D ? "rsqrt_d" : "fixed";
    jput(b, "{\"key\":\"%s\",\"flag\":\"%s\",\"type\":\"%s\",\"lo\":%.17g,\"hi\":%.17g,\"hi_rule\":\"%s\",", k->key,
         k->flag, TYPE[k->type], k->lo, k->hi, hi_rule);
    jput(b, "\"def\":%.17g,\"def_rule\":\"%s\",\"zero_default\":%s,\"minus1_zero\":%s,\"odd\":%s,\"no_causal\":%s,",
         k->def, def_rule, jbool(f & AV_KF_ZERO_DEFAULT), jbool(f & AV_KF_MINUS1_ZERO), jbool(f & AV_KF_ODD),
         jbool(f & AV_KF_NO_CAUSAL));
    jput(b, "\"needs_causal\":%s,", jbool(f & AV_KF_NEEDS_CAUSAL));
    jput(b, "\"step\":%.17g,", k->step);
    jput(b, "\"options\":");
    if (!k->options) jput(b, "null");
    else {
        jput(b, "[\"");
        for (const char *c = k->options; *c; c++) jput(b, *c == '|' ? "\",\"" : "%c", *c);
        jput(b, "\"]");
    }
    jput(b, ",\"meaning\":\"%s\"}", k->meaning);
}

const char *av_registry_json(void) {
    static char text[32768];
    static int built = 0;
    if (built) return text;
    jbuf b = {text, sizeof text, 1};
    jput(&b, "{\"variants\":[");
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        if (v) jput(&b, ",");
        json_variant(&b, &VARIANTS[v].desc);
    }
    jput(&b, "],\"knobs\":[");
    for (int k = AV_KNOB_VARIANT + 1; k < AV_KNOB_COUNT; k++) {
        if (k > AV_KNOB_VARIANT + 1) jput(&b, ",");
        json_knob(&b, &KNOBS[k]);
    }
    jput(&b, "],\"limits\":{\"max_n\":%d,\"max_d\":%d,\"max_feature_dim\":%d},\"status\":{", AV_MAX_N, AV_MAX_D,
         AV_MAX_FEATURE_DIM);
    for (int st = AV_STATUS_MIN, first = 1; st <= AV_STATUS_MAX; st++) {
        const char *name = avi_status_name(st);
        if (!name) continue;
        jput(&b, "%s\"%s\":%d", first ? "" : ",", name, st);
        first = 0;
    }
    jput(&b, "}}");
    if (!b.ok) snprintf(text, sizeof text, "{\"error\":\"the registry does not fit its buffer\"}");
    built = 1;
    return text;
}
