/* check_features.c: the feature maps (features.c) against the double-precision φ of docs/variant-formulas.md
 * (tref_features, written in check_attention.c), and their structural facts: f_p preserves the norm
 * and p = 1 is the identity; Efficient Attention's ρ_q rows and ρ_k columns sum to 1; cosFormer's
 * q′·k′ = relu(q)·relu(k)·cos(π(i−j)/(2n)); the exp stabilisers put the largest feature at exactly 1. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attnviz.h"
#include "testutil.h"

long tref_feature_dim(const av_params *p, int d);
void tref_features(double *PQ, double *PK, const float *Q, const float *K, int n, int d, const av_params *p);

typedef struct { float *Q, *K, *PQ, *PK; long r; int n, d, status; } feats;

static feats make(const av_params *p, int n, int d, uint64_t seed, double std) {
    feats f = {0};
    f.n = n;
    f.d = d;
    f.Q = malloc(sizeof(float) * n * d);
    f.K = malloc(sizeof(float) * n * d);
    tu_fill_normal(f.Q, (size_t)n * d, 0, std, seed);
    tu_fill_normal(f.K, (size_t)n * d, 0, std, seed + 1);
    ck_assert_int_eq(av_feature_dim(&f.r, p, n, d), AV_OK);
    f.PQ = malloc(sizeof(float) * n * f.r);
    f.PK = malloc(sizeof(float) * n * f.r);
    size_t wb = av_features_work(p, n, d);
    void *w = malloc(wb ? wb : 1);
    f.status = av_features(f.PQ, f.PK, f.Q, f.K, n, d, p, w, wb);
    free(w);
    return f;
}

static void drop(feats *f) { free(f->Q); free(f->K); free(f->PQ); free(f->PK); }

/* Φ_Q and Φ_K of f against the plain reference (tref_features) to 1e-6 of their largest entry; the
 * reference's Φ_Q into *RQ (the caller frees it) when RQ is not NULL. */
static void check_reference(const feats *f, const av_params *p, const char *what, double **RQ_out) {
    const int n = f->n, d = f->d;
    double *RQ = malloc(sizeof(double) * n * f->r), *RK = malloc(sizeof(double) * n * f->r);
    av_params r;
    av_params_resolve(&r, p, n, d);
    tref_features(RQ, RK, f->Q, f->K, n, d, &r);
    size_t c = (size_t)n * f->r;
    double eq = tu_max_abs_diff_d(f->PQ, RQ, c), ek = tu_max_abs_diff_d(f->PK, RK, c);
    ck_assert_msg(eq <= 1e-6 * tu_max_abs_d(RQ, c) && ek <= 1e-6 * tu_max_abs_d(RK, c), "%s n=%d d=%d: %g %g", what,
                  n, d, eq, ek);
    free(RK);
    if (RQ_out) *RQ_out = RQ;
    else free(RQ);
}

static const int DET[] = {AV_ELU, AV_RELU, AV_EXP, AV_EFFICIENT, AV_FOCUSED, AV_HEDGEHOG, AV_COSFORMER};

START_TEST(test_features_vs_reference) {
    int ns[] = {1, 7, 37, 130}, ds[] = {3, 13, 64};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++) {
            av_params p;
            av_params_default(&p, DET[_i]);
            int n = ns[a], d = ds[b];
            feats f = make(&p, n, d, 100u * n + d, 1.0);
            ck_assert_int_eq(f.status, AV_OK);
            ck_assert_int_eq(f.r, tref_feature_dim(&p, d));
            check_reference(&f, &p, av_variant_name(DET[_i]), NULL);
            drop(&f);
        }
}
END_TEST

START_TEST(test_dims) {
    av_params p;
    long r;
    int d = 13, n = 7;
    av_params_default(&p, AV_ELU);
    ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK); ck_assert_int_eq(r, d);
    av_params_default(&p, AV_HEDGEHOG);
    ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK); ck_assert_int_eq(r, 2 * d);
    av_params_default(&p, AV_COSFORMER);
    ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK); ck_assert_int_eq(r, 2 * d);
    av_params_default(&p, AV_PERFORMER);
    p.m = 33;
    ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK); ck_assert_int_eq(r, 33);
    av_params_default(&p, AV_TAYLOR); /* order 2: 1 + d + d² */
    ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK); ck_assert_int_eq(r, 1 + d + d * d);
    av_params_default(&p, AV_EXPLIMIT); /* N = 2: (d + 1)² */
    ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK); ck_assert_int_eq(r, (d + 1) * (d + 1));
    for (int v = AV_SOFTMAX; v <= AV_NYSTROM; v++) {
        if (v != AV_SOFTMAX && v != AV_LINFORMER && v != AV_NYSTROM) continue;
        av_params_default(&p, v);
        ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_ERR_NO_LINEAR);
        ck_assert_int_eq(av_features_work(&p, n, d), 0);
    }
}
END_TEST

START_TEST(test_focused_fp) {
    double powers[] = {1, 2, 3, 6.5, 10};
    for (int t = 0; t < 5; t++) {
        av_params p;
        av_params_default(&p, AV_FOCUSED);
        p.p = powers[t];
        feats f = make(&p, 37, 13, 5, 2.0);
        ck_assert_int_eq(f.status, AV_OK);
        for (int i = 0; i < f.n; i++) {
            double ny = 0, nphi = 0, id = 0;
            for (int k = 0; k < f.d; k++) {
                float x = f.Q[(size_t)i * f.d + k];
                double y = ((x > 0 ? x : 0) + 1e-6) / log(2.0), phi = f.PQ[(size_t)i * f.d + k];
                ny += y * y;
                nphi += phi * phi;
                id = fmax(id, fabs(phi - y) / fmax(y, 1e-12));
            }
            ck_assert_msg(fabs(sqrt(nphi) - sqrt(ny)) <= 1e-6 * sqrt(ny), "p=%g: norm %g vs %g", p.p, sqrt(nphi),
                          sqrt(ny));
            if (p.p == 1) ck_assert_msg(id <= 1e-6, "p=1 is not the identity: %g", id);
        }
        drop(&f);
    }
}
END_TEST

/* Focused with a fractional p (e^{p·ln u}, the entries x ≤ 0 sharing one power per row) against the plain
 * reference, d past the 256-feature chunk, small inputs (std 0.3) and unit ones. */
START_TEST(test_focused_fractional_vs_reference) {
    const double powers[] = {1.5, 3.3, 6.5};
    const int ds[] = {13, 301};
    const double stds[] = {0.3, 2.0};
    for (int t = 0; t < 3; t++)
        for (int b = 0; b < 2; b++)
            for (int s = 0; s < 2; s++) {
                av_params p;
                av_params_default(&p, AV_FOCUSED);
                p.p = powers[t];
                const int n = 9, d = ds[b];
                feats f = make(&p, n, d, 7u + (uint64_t)d, stds[s]);
                ck_assert_int_eq(f.status, AV_OK);
                char what[64];
                snprintf(what, sizeof what, "focused p=%g std=%g", p.p, stds[s]);
                double *RQ;
                check_reference(&f, &p, what, &RQ);
                size_t c = (size_t)n * f.r;
                int shared = 0; // entries x ≤ 0 with a nonzero φ: the shared power, each to its own precision
                for (size_t i = 0; i < c; i++)
                    if (f.Q[i] <= 0 && f.PQ[i] > 0) {
                        shared++;
                        // φ = (float)u^p · a, a = the row's largest φ (u ≤ 1): a subnormal u^p has a few bits
                        double a = tu_max_abs_d(RQ + i / f.r * f.r, (size_t)f.r);
                        ck_assert_msg(fabs(f.PQ[i] - RQ[i]) <= 1e-6 * RQ[i] + 2 * FLT_TRUE_MIN * a,
                                      "p=%g d=%d: φ %g against %g", p.p, d, (double)f.PQ[i], RQ[i]);
                    }
                if (p.p == 1.5) ck_assert_msg(shared > 0, "p=%g d=%d: no x ≤ 0 entry kept", p.p, d);
                free(RQ);
                drop(&f);
            }
}
END_TEST

START_TEST(test_efficient_sums) {
    av_params p;
    av_params_default(&p, AV_EFFICIENT);
    feats f = make(&p, 130, 13, 6, 3.0);
    for (int i = 0; i < f.n; i++) {
        double s = 0;
        for (int k = 0; k < f.d; k++) s += f.PQ[(size_t)i * f.d + k];
        ck_assert(fabs(s - 1) <= 1e-6);
    }
    for (int k = 0; k < f.d; k++) {
        double s = 0;
        for (int j = 0; j < f.n; j++) s += f.PK[(size_t)j * f.d + k];
        ck_assert(fabs(s - 1) <= 1e-6);
    }
    drop(&f);
}
END_TEST

START_TEST(test_cosformer_identity) {
    av_params p;
    av_params_default(&p, AV_COSFORMER);
    feats f = make(&p, 37, 13, 7, 1.0);
    double worst = 0;
    for (int i = 0; i < f.n; i++)
        for (int j = 0; j < f.n; j++) {
            double lhs = 0, rhs = 0;
            for (long k = 0; k < f.r; k++) lhs += (double)f.PQ[(size_t)i * f.r + k] * f.PK[(size_t)j * f.r + k];
            for (int k = 0; k < f.d; k++) {
                double q = f.Q[(size_t)i * f.d + k], kk = f.K[(size_t)j * f.d + k];
                rhs += (q > 0 ? q : 0) * (kk > 0 ? kk : 0);
            }
            rhs *= cos(3.14159265358979323846 * (i - j) / (2.0 * f.n));
            worst = fmax(worst, fabs(lhs - rhs));
        }
    ck_assert_msg(worst <= 1e-5, "q'.k' identity: %g", worst);
    drop(&f);
}
END_TEST

START_TEST(test_exp_stabilisers) {
    int vs[] = {AV_EXP, AV_HEDGEHOG};
    for (int t = 0; t < 2; t++) {
        av_params p;
        av_params_default(&p, vs[t]);
        feats f = make(&p, 37, 13, 8, 30.0); /* e^x of these would overflow float unstabilised */
        ck_assert_int_eq(f.status, AV_OK);
        float kmax = 0;
        for (int i = 0; i < f.n; i++) {
            float qmax = 0;
            for (long k = 0; k < f.r; k++) {
                qmax = fmaxf(qmax, f.PQ[(size_t)i * f.r + k]);
                kmax = fmaxf(kmax, f.PK[(size_t)i * f.r + k]);
            }
            ck_assert(qmax == 1.0f);
        }
        ck_assert(kmax == 1.0f);
        drop(&f);
    }
}
END_TEST

START_TEST(test_features_status) {
    int n = 7, d = 3;
    float Q[21], K[21], PQ[64 * 7], PK[64 * 7];
    tu_fill_normal(Q, 21, 0, 1, 1);
    tu_fill_normal(K, 21, 0, 1, 2);
    av_params p;
    av_params_default(&p, AV_ELU);
    ck_assert_int_eq(av_features(NULL, PK, Q, K, n, d, &p, NULL, 0), AV_ERR_NULL);
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, NULL, NULL, 0), AV_ERR_NULL);
    ck_assert_int_eq(av_features(PQ, PK, Q, K, 0, d, &p, NULL, 0), AV_ERR_SIZE);
    ck_assert_int_eq(av_feature_dim(NULL, &p, n, d), AV_ERR_NULL);
    /* a map that needs no scratch still takes the workspace its _work query reports (1 byte): the
     * header's promise, "_work > 0 for valid arguments, and a shorter workspace is refused" */
    unsigned char one[1];
    ck_assert_uint_eq(av_features_work(&p, n, d), 1);
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, NULL, 0), AV_ERR_NULL);
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, one, 0), AV_ERR_WORKSPACE);
    K[4] = NAN;
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, one, 1), AV_ERR_NONFINITE);
    K[4] = 0;
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, one, 1), AV_OK);
    av_params_default(&p, AV_PERFORMER);
    p.m = 64;
    size_t wb = av_features_work(&p, n, d);
    ck_assert(wb > 0);
    static unsigned char work[1 << 16];
    ck_assert(wb <= sizeof work);
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, work, wb - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, NULL, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, work, wb), AV_OK);
    av_params_default(&p, AV_FOCUSED);
    p.p = 11;
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, NULL, 0), AV_ERR_KNOB);
    p.p = 3;
    p.dwc_kernel = 3;
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, NULL, 0), AV_ERR_NO_LINEAR);
    av_params_default(&p, AV_SOFTMAX);
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, NULL, 0), AV_ERR_NO_LINEAR);
    p.variant = -1;
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, NULL, 0), AV_ERR_VARIANT);
    /* a hedgehog W that overflows Wᵀx: the features are reported, not hidden */
    float W[9];
    for (int i = 0; i < 9; i++) W[i] = 3e38f;
    av_params_default(&p, AV_HEDGEHOG);
    av_params_set_hedgehog(&p, W, 3);
    for (int i = 0; i < 21; i++) Q[i] = 10.0f;
    ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, one, 1), AV_WARN_OVERFLOW);
}
END_TEST

Suite *suite_features(void) {
    Suite *s = suite_create("features");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_features_vs_reference, 0, (int)(sizeof DET / sizeof DET[0]));
    tcase_add_test(tc, test_dims);
    tcase_add_test(tc, test_focused_fp);
    tcase_add_test(tc, test_focused_fractional_vs_reference);
    tcase_add_test(tc, test_efficient_sums);
    tcase_add_test(tc, test_cosformer_identity);
    tcase_add_test(tc, test_exp_stabilisers);
    tcase_add_test(tc, test_features_status);
    suite_add_tcase(s, tc);
    return s;
}
