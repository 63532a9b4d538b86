/* check_util.c: status strings, names, knobs and their resolution. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "attnviz.h"

START_TEST(test_status_strings) {
    const int codes[] = {AV_OK, AV_ERR_NULL, AV_ERR_SIZE, AV_ERR_KNOB, AV_ERR_VARIANT, AV_ERR_NO_CAUSAL,
                         AV_ERR_NONFINITE, AV_ERR_WORKSPACE, AV_ERR_FEATURE_DIM, AV_ERR_NO_LINEAR,
                         AV_ERR_FORMAT, AV_ERR_IO, AV_ERR_NOMEM, AV_WARN_ZERO_ROW,
                         AV_WARN_OVERFLOW, AV_WARN_NO_CONVERGENCE};
    const char *unknown = av_status_string(12345);
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *s = av_status_string(codes[i]);
        ck_assert_ptr_nonnull(s);
        ck_assert_str_ne(s, unknown);
        for (size_t j = 0; j < i; j++) ck_assert_str_ne(s, av_status_string(codes[j]));
    }
}
END_TEST

START_TEST(test_variant_names) {
    for (int v = 0; v < AV_VARIANT_COUNT; v++) ck_assert_int_eq(av_variant_from_name(av_variant_name(v)), v);
    ck_assert_ptr_null(av_variant_name(AV_VARIANT_COUNT));
    ck_assert_ptr_null(av_variant_name(-1));
    ck_assert_int_eq(av_variant_from_name("softmaxx"), -1);
    ck_assert_int_eq(av_variant_from_name(NULL), -1);
    ck_assert_str_eq(av_variant_name(AV_NYSTROM), "nystrom");
}
END_TEST

START_TEST(test_params_set_get) {
    av_params p;
    ck_assert_int_eq(av_params_default(&p, AV_PERFORMER), AV_OK);
    ck_assert_int_eq(av_params_default(NULL, AV_PERFORMER), AV_ERR_NULL);
    ck_assert_int_eq(av_params_default(&p, AV_VARIANT_COUNT), AV_ERR_VARIANT);
    ck_assert_int_eq(av_params_default(&p, AV_PERFORMER), AV_OK);
    const double vals[AV_KNOB_COUNT] = {7, 1, 0.25, 4.5, 5, 17, 1, 1, 300, 1, 4000000000.0, 3, 4, 9, 12};
    for (int k = 0; k < AV_KNOB_COUNT; k++) ck_assert_int_eq(av_params_set(&p, k, vals[k]), AV_OK);
    for (int k = 0; k < AV_KNOB_COUNT; k++) ck_assert_double_eq(av_params_get(&p, k), vals[k]);
    ck_assert_int_eq(av_params_set(&p, AV_KNOB_COUNT, 1), AV_ERR_VARIANT);
    ck_assert_int_eq(av_params_set(&p, AV_KNOB_VARIANT, 99), AV_ERR_VARIANT);
    ck_assert_int_eq(av_params_set(&p, AV_KNOB_P, NAN), AV_ERR_KNOB);
    ck_assert_int_eq(av_params_set(&p, AV_KNOB_SEED, -1), AV_ERR_KNOB);
    ck_assert_int_eq(av_params_set(NULL, AV_KNOB_P, 1), AV_ERR_NULL);
    ck_assert(isnan(av_params_get(&p, -1)));
    ck_assert(isnan(av_params_get(NULL, AV_KNOB_P)));
    ck_assert_uint_eq(av_params_size(), sizeof(av_params));
    float W[6] = {0};
    ck_assert_int_eq(av_params_set_hedgehog(&p, W, 3), AV_OK);
    ck_assert_int_eq(p.hedgehog_cols, 3);
    ck_assert_int_eq(av_params_set_hedgehog(&p, W, 0), AV_ERR_KNOB);
    ck_assert_int_eq(av_params_set_hedgehog(&p, NULL, 0), AV_OK);
    ck_assert_ptr_null(p.hedgehog_w);
    ck_assert_int_eq(av_params_set_hedgehog(NULL, W, 3), AV_ERR_NULL);
}
END_TEST

/* av_params_set rounds every integer knob, switches included, and checks the variant after rounding;
 * hand-built switch fields keep "nonzero means on"; every knob, feature_eps −1 included, is stored
 * without an out-of-range conversion (UBSan's float-cast-overflow would fire otherwise). */
START_TEST(test_params_set_rounding) {
    av_params p;
    av_params_default(&p, AV_PERFORMER);
    ck_assert_int_eq(av_params_set(&p, AV_KNOB_ORTHOGONAL, 0.4), AV_OK);
    ck_assert_int_eq(p.orthogonal, 0);
    ck_assert_int_eq(av_params_set(&p, AV_KNOB_ORTHOGONAL, 0.6), AV_OK);
    ck_assert_int_eq(p.orthogonal, 1);
    ck_assert_int_eq(av_params_set(&p, AV_KNOB_VARIANT, AV_VARIANT_COUNT - 0.5), AV_ERR_VARIANT);
    ck_assert_int_eq(av_params_set(&p, AV_KNOB_VARIANT, -0.4), AV_OK);
    ck_assert_int_eq(p.variant, 0);
    ck_assert_int_eq(av_params_set(&p, AV_KNOB_FEATURE_EPS, -1), AV_OK);
    ck_assert(p.feature_eps == -1);
    ck_assert_int_eq(av_params_set(&p, AV_KNOB_SCALE, 1e300), AV_OK);
    ck_assert(p.scale == 1e300);
    av_params q, r;
    av_params_default(&q, AV_PERFORMER);
    q.orthogonal = 2; /* a hand-built switch */
    ck_assert_int_eq(av_params_resolve(&r, &q, 8, 4), AV_OK);
    long bytes = (long)av_features_work(&q, 8, 4);
    ck_assert_int_gt(bytes, 0);
    av_params_default(&q, AV_ELU); /* a map that needs no workspace still reports > 0 */
    ck_assert_uint_gt(av_features_work(&q, 8, 4), 0);
}
END_TEST

START_TEST(test_resolve_defaults) {
    av_params p, r;
    av_params_default(&p, AV_FOCUSED);
    ck_assert_int_eq(av_params_resolve(&r, &p, 100, 16), AV_OK);
    ck_assert_double_eq_tol(r.scale, 0.25, 1e-15);
    ck_assert_double_eq(r.p, 3);
    ck_assert_int_eq(r.s, 64);
    ck_assert_int_eq(r.landmarks, 64);
    ck_assert_int_eq(r.m, 256);
    ck_assert_int_eq(r.order, 2);
    ck_assert_int_eq(r.N, 2);
    ck_assert_int_eq(r.iters, 6);
    ck_assert_int_eq(r.dwc_kernel, 0);
    ck_assert_int_eq(av_params_resolve(&r, &p, 10, 16), AV_OK);
    ck_assert_int_eq(r.s, 10);
    p.iters = -1;
    ck_assert_int_eq(av_params_resolve(&p, &p, 10, 16), AV_OK); /* out may alias in */
    ck_assert_int_eq(p.iters, 0);
}
END_TEST

START_TEST(test_resolve_errors) {
    av_params p, r;
    av_params_default(&p, AV_SOFTMAX);
    ck_assert_int_eq(av_params_resolve(NULL, &p, 8, 8), AV_ERR_NULL);
    ck_assert_int_eq(av_params_resolve(&r, &p, 0, 8), AV_ERR_SIZE);
    ck_assert_int_eq(av_params_resolve(&r, &p, 8, AV_MAX_D + 1), AV_ERR_SIZE);
    p.scale = -1;
    ck_assert_int_eq(av_params_resolve(&r, &p, 8, 8), AV_ERR_KNOB);
    struct { int variant, knob; double value; int want; } cases[] = {
        {AV_FOCUSED, AV_KNOB_P, 0.5, AV_ERR_KNOB},       {AV_FOCUSED, AV_KNOB_P, 10.5, AV_ERR_KNOB},
        {AV_FOCUSED, AV_KNOB_DWC_KERNEL, 4, AV_ERR_KNOB}, {AV_FOCUSED, AV_KNOB_DWC_KERNEL, -1, AV_ERR_KNOB},
        {AV_LINFORMER, AV_KNOB_S, 9, AV_ERR_KNOB},        {AV_LINFORMER, AV_KNOB_EF_KIND, 2, AV_ERR_KNOB},
        {AV_PERFORMER, AV_KNOB_M, -3, AV_ERR_KNOB},       {AV_TAYLOR, AV_KNOB_ORDER, 5, AV_ERR_KNOB},
        {AV_EXPLIMIT, AV_KNOB_N, 65, AV_ERR_KNOB},        {AV_NYSTROM, AV_KNOB_LANDMARKS, 9, AV_ERR_KNOB},
        {AV_NYSTROM, AV_KNOB_ITERS, 101, AV_ERR_KNOB},    {AV_FOCUSED, AV_KNOB_P, 10, AV_OK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        av_params_default(&p, cases[i].variant);
        av_params_set(&p, cases[i].knob, cases[i].value);
        ck_assert_msg(av_params_resolve(&r, &p, 8, 8) == cases[i].want, "case %zu", i);
    }
    p.variant = 99;
    ck_assert_int_eq(av_params_resolve(&r, &p, 8, 8), AV_ERR_VARIANT);
}
END_TEST

START_TEST(test_resolve_causal) {
    const int no_causal[] = {AV_EFFICIENT, AV_LINFORMER, AV_NYSTROM};
    av_params p, r;
    for (size_t i = 0; i < 3; i++) {
        av_params_default(&p, no_causal[i]);
        p.causal = 1;
        ck_assert_int_eq(av_params_resolve(&r, &p, 8, 8), AV_ERR_NO_CAUSAL);
    }
    av_params_default(&p, AV_FOCUSED);
    p.causal = 1;
    ck_assert_int_eq(av_params_resolve(&r, &p, 8, 8), AV_OK);
    p.dwc_kernel = 3;
    ck_assert_int_eq(av_params_resolve(&r, &p, 8, 8), AV_ERR_NO_CAUSAL);
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        if (v == AV_EFFICIENT || v == AV_LINFORMER || v == AV_NYSTROM) continue;
        av_params_default(&p, v);
        p.causal = 1;
        ck_assert_msg(av_params_resolve(&r, &p, 8, 8) == AV_OK, "%s causal", av_variant_name(v));
    }
}
END_TEST

Suite *suite_util(void) {
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_status_strings);
    tcase_add_test(tc, test_variant_names);
    tcase_add_test(tc, test_params_set_get);
    tcase_add_test(tc, test_params_set_rounding);
    tcase_add_test(tc, test_resolve_defaults);
    tcase_add_test(tc, test_resolve_errors);
    tcase_add_test(tc, test_resolve_causal);
    suite_add_tcase(s, tc);
    return s;
}
