/* variants.c: the variant registry, the single source of truth for every variant and knob.
 *
 * One row per variant: its public descriptor (names, class, forms, normaliser rule, knobs; see
 * av_variant_desc in attnviz.h) and its kernels (feature dimension, feature map, closed-form kernel, cost
 * of the feature map). One row per knob: its key, flag, type, range, default and meaning, and where it
 * lives in av_params. util.c resolves knobs from these rows, attention.c dispatches on them, the CLI
 * builds its flags and help from them, and registry.c writes them as JSON for the JS loader.
 * Formulas and sources: docs/variant-formulas.md. Adding a variant: docs/adding-a-variant.md.
 */
#include <float.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// knobs

#define KF_Z AV_KF_ZERO_DEFAULT
static const av_knob_desc KNOBS[AV_KNOB_COUNT] = {
    [AV_KNOB_VARIANT] = {.key = "variant", .flag = "--variant", .type = AV_KT_ENUM, .lo = 0, .hi = AV_VARIANT_COUNT - 1,
                         .def = 0, .step = 1, .meaning = "the variant (enum av_variant)"},
    [AV_KNOB_CAUSAL] = {.key = "causal", .flag = "--causal", .type = AV_KT_BOOL, .lo = 0, .hi = 1, .def = 0, .step = 1,
                        .meaning = "inclusive autoregressive mask: token i sees keys j <= i"},
    [AV_KNOB_SCALE] = {.key = "scale", .flag = "--scale", .type = AV_KT_REAL, .flags = KF_Z | AV_KF_DEF_RSQRT_D,
                       .lo = 0, .hi = DBL_MAX, .def = 0, .step = 0.05,
                       .meaning = "multiplies q.k in the variants that approximate exp"},
    [AV_KNOB_P] = {.key = "p", .flag = "--p", .type = AV_KT_REAL, .flags = KF_Z, .lo = 1, .hi = 10, .def = 3,
                   .step = 0.1, .meaning = "focusing power p of f_p"},
    [AV_KNOB_DWC_KERNEL] = {.key = "dwc_kernel", .flag = "--dwc-kernel", .type = AV_KT_INT,
                            .flags = AV_KF_ODD | AV_KF_HI_2N | AV_KF_NO_CAUSAL, .lo = 0, .hi = 0, .def = 0, .step = 2,
                            .meaning = "depthwise-conv kernel size on V, odd, up to 2n-1; 0 means no DWC"},
    [AV_KNOB_S] = {.key = "s", .flag = "--s", .type = AV_KT_INT, .flags = KF_Z | AV_KF_HI_N | AV_KF_DEF_MIN_N, .lo = 1,
                   .hi = 0, .def = 64, .step = 1, .meaning = "projected length s of E, F (default min(n, 64))"},
    [AV_KNOB_EF_KIND] = {.key = "ef_kind", .flag = "--ef", .type = AV_KT_ENUM, .lo = 0, .hi = 1, .def = 0, .step = 1,
                         .options = "gaussian|mean", .meaning = "E/F: gaussian N(0, 1/s) entries, or segment means"},
    [AV_KNOB_EF_SHARED] = {.key = "ef_shared", .flag = "--ef-shared", .type = AV_KT_BOOL, .lo = 0, .hi = 1, .def = 0,
                           .step = 1, .meaning = "share one projection: E = F"},
    [AV_KNOB_M] = {.key = "m", .flag = "--m", .type = AV_KT_INT, .flags = KF_Z, .lo = 1, .hi = AV_MAX_FEATURE_DIM,
                   .def = 256, .step = 1, .meaning = "number of random features m"},
    [AV_KNOB_ORTHOGONAL] = {.key = "orthogonal", .flag = "--orthogonal", .type = AV_KT_BOOL, .lo = 0, .hi = 1, .def = 0,
                            .step = 1, .meaning = "orthogonal blocks with chi(d) row norms instead of iid rows"},
    [AV_KNOB_SEED] = {.key = "seed", .flag = "--seed", .type = AV_KT_INT, .lo = 0, .hi = 4294967295.0, .def = 0,
                      .step = 1,
                      .meaning = "seed of the random matrices (omega, E/F, DWC weights); redraw is seed + 1"},
    [AV_KNOB_ORDER] = {.key = "order", .flag = "--order", .type = AV_KT_INT, .flags = KF_Z, .lo = 1, .hi = 4, .def = 2,
                       .step = 1, .meaning = "Taylor order p of sum s^r/r!"},
    [AV_KNOB_N] = {.key = "N", .flag = "--N", .type = AV_KT_INT, .flags = KF_Z, .lo = 1, .hi = 64, .def = 2, .step = 1,
                   .meaning = "power N of (1 + x/N)^N"},
    [AV_KNOB_LANDMARKS] = {.key = "landmarks", .flag = "--landmarks", .type = AV_KT_INT,
                           .flags = KF_Z | AV_KF_HI_N | AV_KF_DEF_MIN_N, .lo = 1, .hi = 0, .def = 64, .step = 1,
                           .meaning = "Nystrom landmarks (segment means; default min(n, 64))"},
    [AV_KNOB_ITERS] = {.key = "iters", .flag = "--iters", .type = AV_KT_INT, .flags = KF_Z | AV_KF_MINUS1_ZERO, .lo = 0,
                       .hi = 100, .def = 6, .step = 1, .meaning = "iterations of the pseudo-inverse Z"},
    [AV_KNOB_FEATURE_EPS] = {.key = "feature_eps", .flag = "--feature-eps", .type = AV_KT_REAL,
                             .flags = KF_Z | AV_KF_MINUS1_ZERO, .lo = 0, .hi = 1e-2, .def = 1e-6, .step = 1e-6,
                             .meaning = "the epsilon added inside Performer's phi (the reference PyTorch code uses 1e-4)"},
    [AV_KNOB_DECAY] = {.key = "decay", .flag = "--decay", .type = AV_KT_REAL, .flags = KF_Z | AV_KF_NEEDS_CAUSAL,
                       .lo = 0, .hi = 1, .def = 1, .step = 0.001,
                       .meaning = "decay gamma in (0, 1]: each step multiplies the state by gamma (half-life ln(1/2)/ln(gamma)); "
                                  "below 1 it needs --causal"},
    [AV_KNOB_WINDOW] = {.key = "window", .flag = "--window", .type = AV_KT_INT, .lo = 0, .hi = AV_MAX_N, .def = 0,
                        .step = 1,
                        .meaning = "sliding window W: row i sees keys with |i - j| < W (and j <= i when causal); 0 means none"},
    [AV_KNOB_BETA] = {.key = "beta", .flag = "--beta", .type = AV_KT_REAL, .flags = KF_Z, .lo = 0, .hi = 2, .def = 0.5,
                      .step = 0.05,
                      .meaning = "delta-rule write strength beta in (0, 2]; 1 overwrites the value stored under a key"},
    [AV_KNOB_CHUNK] = {.key = "chunk", .flag = "--chunk", .type = AV_KT_INT, .flags = KF_Z | AV_KF_DEF_MIN_N, .lo = 1,
                       .hi = AV_MAX_N, .def = 64, .step = 1,
                       .meaning = "chunk size C of the chunkwise form (every variant's --path chunkwise reads it; default min(n, 64); above n it is n)"},
    /* 0 is the variant's default (its row's .defaults: on for gdn and kda), -1 off (AV_KF_MINUS1_ZERO) */
    [AV_KNOB_QK_L2NORM] = {.key = "qk_l2norm", .flag = "--qk-l2norm", .type = AV_KT_BOOL,
                           .flags = KF_Z | AV_KF_MINUS1_ZERO, .lo = 0, .hi = 1, .def = 0, .step = 1,
                           .meaning = "gated families: q, k <- x/sqrt(sum x^2 + 1e-6) before the scale (default on for gdn and kda, "
                                      "off for the others; --no-qk-l2norm turns it off)"},
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
    [AV_KNOB_QK_L2NORM] = {offsetof(av_params, qk_l2norm), 'i'},
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
#define GATED (AV_VF_CAUSAL | AV_VF_LINEAR | AV_VF_RECURRENT | AV_VF_CHUNKWISE | AV_VF_SCALED | AV_VF_CAUSAL_ONLY)
#define D AV_KNOB_DECAY
#define L2 AV_KNOB_QK_L2NORM
/* The knobs a row reads, in display order, and their count taken from the same list, so the two cannot
 * disagree (a list longer than AV_VARIANT_MAX_KNOBS is an excess initializer: an error under -Werror).
 * A row's .defaults[i], where present, is its own default of knobs[i]. */
#define KNOBS_OF(...) .knob_count = (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int)), .knobs = {__VA_ARGS__}
static const avi_variant VARIANTS[AV_VARIANT_COUNT] = {
    [AV_SOFTMAX] = {.desc = {.name = "softmax", .label = "softmax, the reference",
                             .formula = "row softmax of beta*QK^T, max-subtracted (beta: the scale)",
                             .source = "Vaswani et al. 2017", .cls = AV_CLASS_EXACT,
                             .flags = AV_VF_CAUSAL | AV_VF_SCALED | AV_VF_CHUNKWISE, .norm = AV_NORM_EXACT,
                             KNOBS_OF(D, AV_KNOB_WINDOW)}},
    [AV_ELU] = {.desc = {.name = "elu", .label = "linear, phi = elu+1", .formula = "phi(x) = elu(x) + 1",
                         .source = "Katharopoulos et al. 2020", .cls = AV_CLASS_KERNEL, .flags = CAUSAL_LINEAR,
                         .norm = AV_NORM_ADD, .eps = 1e-6, KNOBS_OF(D)},
                .feature_dim = avi_dim_d, .features = avi_phi_elu, .feature_cost = avi_cost_elementwise},
    [AV_RELU] = {.desc = {.name = "relu", .label = "linear, phi = relu", .formula = "phi(x) = relu(x)",
                          .source = "seed article 'Linear Attention'", .cls = AV_CLASS_KERNEL, .flags = CAUSAL_LINEAR,
                          .norm = AV_NORM_ADD, .eps = 1e-6, KNOBS_OF(D)},
                 .feature_dim = avi_dim_d, .features = avi_phi_relu, .feature_cost = avi_cost_elementwise},
    [AV_EXP] = {.desc = {.name = "exp", .label = "linear, phi = exp",
                         .formula = "phi(x) = exp(x - c), c a per-query and one global key stabiliser",
                         .source = "seed article 'Linear Attention'", .cls = AV_CLASS_KERNEL, .flags = CAUSAL_LINEAR,
                         .norm = AV_NORM_SUM, KNOBS_OF(D)},
                .feature_dim = avi_dim_d, .features = avi_phi_exp, .feature_cost = avi_cost_elementwise},
    [AV_EFFICIENT] = {.desc = {.name = "efficient", .label = "Efficient Attention",
                               .formula = "softmax of each query over its features x softmax of each key feature over positions",
                               .source = "Shen et al. 2021", .cls = AV_CLASS_KERNEL, .flags = AV_VF_LINEAR | AV_VF_FACTORS,
                               .norm = AV_NORM_SUM}, /* no knobs */
                      .feature_dim = avi_dim_d, .features = avi_phi_efficient, .feature_cost = avi_cost_elementwise},
    [AV_FOCUSED] = {.desc = {.name = "focused", .label = "focused (FLatten)",
                             .formula = "phi(x) = f_p((relu(x) + 1e-6)/ln 2), f_p(y) = |y| y^p/|y^p|",
                             .source = "Han et al. 2023", .cls = AV_CLASS_KERNEL, .flags = CAUSAL_LINEAR,
                             .norm = AV_NORM_ADD_N, .eps = 1e-6, KNOBS_OF(AV_KNOB_P, AV_KNOB_DWC_KERNEL, AV_KNOB_SEED, D)},
                    .feature_dim = avi_dim_d, .features = avi_phi_focused, .feature_cost = avi_cost_elementwise},
    [AV_LINFORMER] = {.desc = {.name = "linformer", .label = "Linformer",
                               .formula = "softmax(beta*Q(EK)^T) F, E, F in R^{s x n} (beta: the scale)",
                               .source = "Wang et al. 2020", .cls = AV_CLASS_LOWRANK,
                               .flags = AV_VF_LINEAR | AV_VF_FACTORS | AV_VF_SCALED, .norm = AV_NORM_EXACT,
                               KNOBS_OF(AV_KNOB_S, AV_KNOB_EF_KIND, AV_KNOB_EF_SHARED, AV_KNOB_SEED)}},
    [AV_PERFORMER] = {.desc = {.name = "performer", .label = "Performer FAVOR+",
                               .formula = "phi(x) = m^-1/2 (exp(w_i.x' - |x'|^2/2 - c) + eps), x' = sqrt(scale) x",
                               .source = "Choromanski et al. 2021", .cls = AV_CLASS_KERNEL,
                               .flags = CAUSAL_LINEAR | AV_VF_SCALED, .norm = AV_NORM_SUM,
                               KNOBS_OF(AV_KNOB_M, AV_KNOB_ORTHOGONAL, AV_KNOB_SEED, AV_KNOB_FEATURE_EPS, D)},
                      .feature_dim = avi_dim_performer, .features_work = avi_performer_work,
                      .features = avi_phi_performer, .feature_cost = avi_cost_performer},
    [AV_TAYLOR] = {.desc = {.name = "taylor", .label = "Taylor series of exp",
                            .formula = "sum_{r<=order} x^r/r!, x = beta*q.k (beta: the scale)",
                            .source = "seed article 'infinite-dimensional linear attention'",
                            .cls = AV_CLASS_CLOSED_FORM, .flags = CAUSAL_LINEAR | AV_VF_SCALED, .norm = AV_NORM_SUM,
                            KNOBS_OF(AV_KNOB_ORDER, D)},
                   .feature_dim = avi_dim_taylor, .features_work = avi_tensor_work, .features = avi_phi_taylor,
                   .kernel_row = avi_kernel_row_taylor, .feature_cost = avi_cost_tensor},
    [AV_EXPLIMIT] = {.desc = {.name = "explimit", .label = "(1 + s/N)^N",
                              .formula = "(1 + x/N)^N, x = beta*q.k (beta: the scale), an N-fold tensor power of [1, x/sqrt(N)]",
                              .source = "seed article 'infinite-dimensional linear attention'",
                              .cls = AV_CLASS_CLOSED_FORM, .flags = CAUSAL_LINEAR | AV_VF_SCALED, .norm = AV_NORM_SUM,
                              KNOBS_OF(AV_KNOB_N, D)},
                     .feature_dim = avi_dim_explimit, .features_work = avi_tensor_work, .features = avi_phi_explimit,
                     .kernel_row = avi_kernel_row_explimit, .feature_cost = avi_cost_tensor},
    [AV_HEDGEHOG] = {.desc = {.name = "hedgehog", .label = "Hedgehog",
                              .formula = "phi(x) = [exp(W^T x - c), exp(-W^T x - c)], W default identity",
                              .source = "Zhang et al. 2024", .cls = AV_CLASS_KERNEL, .flags = CAUSAL_LINEAR | AV_VF_WEIGHTS,
                              .norm = AV_NORM_SUM, KNOBS_OF(D)},
                     .feature_dim = avi_dim_hedgehog, .features = avi_phi_hedgehog, .feature_cost = avi_cost_hedgehog},
    [AV_NYSTROM] = {.desc = {.name = "nystrom", .label = "Nystromformer",
                             .formula = "F Z B: softmax blocks through m segment-mean landmarks, Z ~ pinv",
                             .source = "Xiong et al. 2021", .cls = AV_CLASS_LOWRANK,
                             .flags = AV_VF_LINEAR | AV_VF_FACTORS | AV_VF_SCALED, .norm = AV_NORM_EXACT,
                             KNOBS_OF(AV_KNOB_LANDMARKS, AV_KNOB_ITERS)}},
    [AV_COSFORMER] = {.desc = {.name = "cosformer", .label = "cosFormer",
                               .formula = "relu(q).relu(k) cos(pi(i - j)/(2n)), positions from 1",
                               .source = "Qin et al. 2022", .cls = AV_CLASS_KERNEL, .flags = CAUSAL_LINEAR,
                               .norm = AV_NORM_CLAMP, .eps = 1e-6, KNOBS_OF(D)},
                      .feature_dim = avi_dim_2d, .features = avi_phi_cosformer, .feature_cost = avi_cost_elementwise},
    [AV_RETENTION] = {.desc = {.name = "retention", .label = "retention (RetNet)",
                               .formula = "M = (beta*QK^T) * gamma^(i-j) for j <= i, unnormalised (beta: the scale)",
                               .source = "Sun et al. 2023", .cls = AV_CLASS_RETENTION, .flags = STATE_ONLY,
                               .norm = AV_NORM_NONE, KNOBS_OF(D, AV_KNOB_CHUNK),
                               .defaults = {[0] = 1.0 - 1.0 / 32.0}}, /* its decay: knobs[0] */
                      .feature_dim = avi_dim_d, .features = avi_phi_retention, .feature_cost = avi_cost_retention},
    [AV_DELTANET] = {.desc = {.name = "deltanet", .label = "delta rule (DeltaNet)",
                              .formula = "S <- alpha S; S += beta k (v - S^T k)^T; o = S^T (scale q), unit q and k (alpha: the decay)",
                              .source = "Schlag et al. 2021; Yang et al. 2024", .cls = AV_CLASS_DELTA, .flags = STATE_ONLY,
                              .norm = AV_NORM_NONE, KNOBS_OF(AV_KNOB_BETA, D, AV_KNOB_CHUNK)},
                     .feature_dim = avi_dim_d, .features = avi_phi_delta, .feature_cost = avi_cost_delta},
    /* The gated families (docs/gated.md): the gates are data (av_params_set_gates, _dplr); the decay and beta
     * knobs are the constant case when no array is given. No feature map: gated.c dispatches their forms. */
    [AV_SIMPLE_GLA] = {.desc = {.name = "simple_gla", .label = "simple GLA (Mamba-2 SSD)",
                                .formula = "S_t = exp(g_t) S_{t-1} + k_t v_t^T, o_t = S_t^T (scale q_t); one log-gate g_t <= 0 per token",
                                .source = "fla; Dao & Gu 2024 (Mamba-2); Sun et al. 2023", .cls = AV_CLASS_GATED,
                                .flags = GATED, .norm = AV_NORM_NONE, KNOBS_OF(D, AV_KNOB_CHUNK, L2)}},
    [AV_GLA] = {.desc = {.name = "gla", .label = "GLA (per-channel gate)",
                         .formula = "S_t = Diag(exp(g_t)) S_{t-1} + k_t v_t^T, o_t = S_t^T (scale q_t); g_t in R^d, <= 0",
                         .source = "fla; Yang et al. 2024 (GLA)", .cls = AV_CLASS_GATED, .flags = GATED,
                         .norm = AV_NORM_NONE, KNOBS_OF(D, AV_KNOB_CHUNK, L2)}},
    [AV_GDN] = {.desc = {.name = "gdn", .label = "Gated DeltaNet",
                         .formula = "S' = a_t S_{t-1}; S_t = S' + b_t k_t (v_t - S'^T k_t)^T, o_t = S_t^T (scale q_t); l2-normed q, k",
                         .source = "fla; Yang et al. 2025 (Gated DeltaNet)", .cls = AV_CLASS_GATED, .flags = GATED,
                         .norm = AV_NORM_NONE, KNOBS_OF(AV_KNOB_BETA, D, AV_KNOB_CHUNK, L2),
                         .defaults = {[3] = 1}}}, /* qk_l2norm on: knobs[3] */
    [AV_KDA] = {.desc = {.name = "kda", .label = "Kimi Delta Attention",
                         .formula = "S' = Diag(a_t) S_{t-1}; S_t = S' + b_t k_t (v_t - S'^T k_t)^T, o_t = S_t^T (scale q_t); a_t in R^d",
                         .source = "fla; Kimi Linear 2025", .cls = AV_CLASS_GATED, .flags = GATED,
                         .norm = AV_NORM_NONE, KNOBS_OF(AV_KNOB_BETA, D, AV_KNOB_CHUNK, L2),
                         .defaults = {[3] = 1}}}, /* qk_l2norm on: knobs[3] */
    [AV_DPLR] = {.desc = {.name = "dplr", .label = "DPLR (RWKV-7 transition)",
                          .formula = "x_t = S_{t-1}^T a_t; S_t = Diag(exp(g_t)) S_{t-1} + b_t x_t^T + k_t v_t^T, o_t = S_t^T (scale q_t)",
                          .source = "fla; Peng et al. 2025 (RWKV-7)", .cls = AV_CLASS_GATED, .flags = GATED,
                          .norm = AV_NORM_NONE, KNOBS_OF(D, AV_KNOB_CHUNK, L2)}},
    [AV_FOX] = {.desc = {.name = "fox", .label = "Forgetting Transformer (FoX)",
                         .formula = "softmax over j <= i of scale q_i.k_j + sum_{l=j+1..i} g_l, g_l <= 0 per token",
                         .source = "fla; Lin et al. 2025 (FoX)", .cls = AV_CLASS_GATED,
                         .flags = AV_VF_CAUSAL | AV_VF_RECURRENT | AV_VF_CHUNKWISE | AV_VF_SCALED | AV_VF_CAUSAL_ONLY,
                         .norm = AV_NORM_EXACT, KNOBS_OF(D, AV_KNOB_CHUNK, L2)}},
    /* A hybrid (docs/variant-formulas.md "lolcats"): no feature map of its own; lolcats.c computes its forms. */
    [AV_LOLCATS] = {.desc = {.name = "lolcats", .label = "Window + linear (LoLCATs)",
                             .formula = "exp(scale q.k) for the last W keys, phi(q).phi(k) before them, phi = hedgehog's "
                                        "[exp(W^T x), exp(-W^T x)]; one row normaliser",
                             .source = "Zhang et al. 2024 (LoLCATs)", .cls = AV_CLASS_HYBRID,
                             .flags = AV_VF_CAUSAL | AV_VF_LINEAR | AV_VF_RECURRENT | AV_VF_SCALED | AV_VF_WEIGHTS |
                                      AV_VF_CAUSAL_ONLY,
                             .norm = AV_NORM_EXACT, KNOBS_OF(AV_KNOB_WINDOW), .defaults = {[0] = 16}}},
};
#undef KNOBS_OF
#undef CAUSAL_LINEAR
#undef STATE_ONLY
#undef GATED
#undef D
#undef L2

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
