/* check_variants.c: the registry (variants.c) is consistent with itself and with the library's behaviour:
 * every row's class has the kernels it needs, every listed form exists (and every unlisted one is
 * refused), knob rows resolve as they say, and av_params_check names the offending knob. Every check
 * walks the registry, so a new row is tested without editing this file. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

/* Plain printable ASCII without quotes or backslashes: the JSON writer relies on it. */
static int plain(const char *s) {
    if (!s || !*s) return 0;
    for (; *s; s++)
        if (!isprint((unsigned char)*s) || *s == '"' || *s == '\\') return 0;
    return 1;
}

START_TEST(test_rows_consistent) {
    ck_assert(av_variant_info(-1) == NULL && av_variant_info(AV_VARIANT_COUNT) == NULL);
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        const av_variant_desc *d = av_variant_info(v);
        const avi_variant *row = avi_variant_of(v);
        ck_assert_msg(plain(d->name) && plain(d->label) && plain(d->formula) && plain(d->source), "variant %d strings", v);
        ck_assert_int_eq(av_variant_from_name(d->name), v);
        ck_assert_str_eq(av_variant_name(v), d->name);
        int featured = d->cls == AV_CLASS_KERNEL || d->cls == AV_CLASS_CLOSED_FORM || d->cls == AV_CLASS_RETENTION ||
                       d->cls == AV_CLASS_DELTA;
        ck_assert_msg(featured == (row->feature_dim && row->features && row->feature_cost), "%s: kernels of its class", d->name);
        ck_assert_msg((d->cls == AV_CLASS_CLOSED_FORM) == (row->kernel_row != NULL), "%s: closed form", d->name);
        ck_assert_msg(d->knob_count >= 0 && d->knob_count <= AV_VARIANT_MAX_KNOBS, "%s: knob count", d->name);
        for (int i = 0; i < d->knob_count; i++)
            ck_assert_msg(av_knob_info(d->knobs[i]) != NULL && d->knobs[i] != AV_KNOB_CAUSAL && d->knobs[i] != AV_KNOB_SCALE,
                          "%s: knob %d", d->name, d->knobs[i]);
        ck_assert_msg(!(d->flags & AV_VF_RECURRENT) || (d->flags & AV_VF_CAUSAL), "%s: a recurrence is causal", d->name);
        ck_assert_msg(!(d->flags & AV_VF_CHUNKWISE) || (d->flags & AV_VF_CAUSAL), "%s: chunks are causal", d->name);
        ck_assert_msg(!(d->flags & AV_VF_CAUSAL_ONLY) || (d->flags & AV_VF_CAUSAL), "%s: causal only", d->name);
        ck_assert_msg(d->norm >= AV_NORM_EXACT && d->norm <= AV_NORM_NONE, "%s: norm", d->name);
        ck_assert_msg((d->norm == AV_NORM_NONE) == (d->cls == AV_CLASS_RETENTION || d->cls == AV_CLASS_DELTA ||
                                                    (d->cls == AV_CLASS_GATED && v != AV_FOX)),
                      "%s: unnormalised exactly for the state classes (fox is a softmax)", d->name);
        for (int i = 0; i < d->knob_count; i++) /* a variant's own default is inside the knob's range */
            ck_assert_msg(d->defaults[i] == 0 || (d->defaults[i] >= av_knob_info(d->knobs[i])->lo &&
                                                  d->defaults[i] <= av_knob_info(d->knobs[i])->hi),
                          "%s: default of knob %d", d->name, d->knobs[i]);
        ck_assert_msg((d->norm == AV_NORM_ADD || d->norm == AV_NORM_ADD_N || d->norm == AV_NORM_CLAMP) == (d->eps > 0),
                      "%s: eps belongs to its rule", d->name);
    }
    ck_assert(av_knob_info(AV_KNOB_VARIANT) == NULL && av_knob_info(AV_KNOB_COUNT) == NULL);
    for (int k = AV_KNOB_VARIANT + 1; k < AV_KNOB_COUNT; k++) {
        const av_knob_desc *kd = av_knob_info(k);
        ck_assert_msg(plain(kd->key) && plain(kd->flag) && plain(kd->meaning), "knob %d strings", k);
        ck_assert_msg(strncmp(kd->flag, "--", 2) == 0, "knob %s flag", kd->key);
        ck_assert_msg((kd->type == AV_KT_ENUM) == (kd->options != NULL), "knob %s options", kd->key);
        ck_assert_msg(kd->lo <= kd->hi || (kd->flags & (AV_KF_HI_N | AV_KF_HI_2N)), "knob %s range", kd->key);
    }
}
END_TEST

/* Each flag is true to the library: a form the row lists works, a form it does not list is refused. */
/* knob_count is derived from each row's knob list (KNOBS_OF in variants.c); this catches a count that
 * disagrees with the list: a listed knob past the count, or a slot inside it that names no knob. */
START_TEST(test_knob_count_matches_list) {
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        const av_variant_desc *d = av_variant_info(v);
        for (int i = 0; i < AV_VARIANT_MAX_KNOBS; i++) {
            if (i < d->knob_count) {
                ck_assert_msg(d->knobs[i] != AV_KNOB_VARIANT, "%s: slot %d of %d names no knob", d->name, i, d->knob_count);
                for (int j = 0; j < i; j++)
                    ck_assert_msg(d->knobs[j] != d->knobs[i], "%s: knob %d listed twice", d->name, d->knobs[i]);
            } else {
                ck_assert_msg(d->knobs[i] == AV_KNOB_VARIANT && d->defaults[i] == 0,
                              "%s: knob %d listed past knob_count %d", d->name, d->knobs[i], d->knob_count);
            }
        }
    }
}
END_TEST

START_TEST(test_flags_match_behaviour) {
    enum { n = 9, d = 4, dv = 3 };
    float Q[n * d], K[n * d], V[n * dv], O[n * dv];
    tu_fill_normal(Q, n * d, 0, 1, 1);
    tu_fill_normal(K, n * d, 0, 1, 2);
    tu_fill_normal(V, n * dv, 0, 1, 3);
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        const av_variant_desc *vd = av_variant_info(v);
        av_params p;
        av_params_default(&p, v);
        long r;
        ck_assert_msg((av_factor_rank(&r, &p, n, d) == AV_OK) == !!(vd->flags & AV_VF_FACTORS), "%s factors", vd->name);
        ck_assert_msg((av_linear_work(&p, n, d, dv) > 0) == !!(vd->flags & AV_VF_LINEAR), "%s linear", vd->name);
        ck_assert_msg(p.causal == !!(vd->flags & AV_VF_CAUSAL_ONLY), "%s: causal by default", vd->name);
        p.causal = 0;
        ck_assert_msg((av_params_resolve(&p, &p, n, d) == AV_ERR_NEEDS_CAUSAL) == !!(vd->flags & AV_VF_CAUSAL_ONLY),
                      "%s: non-causal", vd->name);
        p.causal = 1;
        int st = av_params_resolve(&p, &p, n, d);
        ck_assert_msg((st == AV_OK) == !!(vd->flags & AV_VF_CAUSAL), "%s causal: %d", vd->name, st);
        ck_assert_msg((av_chunkwise_work(&p, n, d, dv) > 0) == !!(vd->flags & AV_VF_CHUNKWISE), "%s chunkwise", vd->name);
        ck_assert_msg((av_recurrent_work(&p, n, d, dv) > 0) == ((vd->flags & AV_VF_RECURRENT) || vd->cls == AV_CLASS_EXACT),
                      "%s recurrent (a softmax cache)", vd->name);
        if (st == AV_OK && (vd->flags & AV_VF_LINEAR)) {
            size_t wb = av_linear_work(&p, n, d, dv);
            void *w = malloc(wb);
            ck_assert_msg(av_linear(O, Q, K, V, n, d, dv, &p, w, wb) >= 0, "%s causal linear", vd->name);
            free(w);
        }
        float phi[64] = {0}, o[dv];
        double S[64 * dv] = {0}, z[64] = {0};
        st = av_recurrent_step(o, S, z, phi, phi, V, 4, dv, n, &p);
        if (vd->cls == AV_CLASS_GATED) { /* their step is av_gated_step; fox's recurrence is a cache, no step */
            ck_assert_msg(st == AV_ERR_NO_LINEAR, "%s: av_recurrent_step %d", vd->name, st);
            st = av_gated_step(o, S, Q, K, V, NULL, 0.5, NULL, NULL, d, dv, &p);
            ck_assert_msg((st == AV_OK) == (v != AV_FOX) && (st == AV_OK || st == AV_ERR_NO_LINEAR),
                          "%s av_gated_step: %d", vd->name, st);
            continue;
        }
        if (vd->cls == AV_CLASS_HYBRID) { /* lolcats: its recurrence holds a cache of W keys beside S, z: no step */
            ck_assert_msg(st == AV_ERR_NO_LINEAR && (vd->flags & AV_VF_RECURRENT), "%s: av_recurrent_step %d", vd->name, st);
            continue;
        }
        ck_assert_msg((st != AV_ERR_NO_LINEAR && st != AV_ERR_NO_CAUSAL) == !!(vd->flags & AV_VF_RECURRENT),
                      "%s recurrent: %d", vd->name, st);
    }
}
END_TEST

/* Knob rows: defaults fill zeros, ranges are enforced, and av_params_check names the knob. */
START_TEST(test_knob_rows) {
    const int n = 20, d = 9;
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        const av_variant_desc *vd = av_variant_info(v);
        for (int i = 0; i < vd->knob_count; i++) {
            int k = vd->knobs[i];
            const av_knob_desc *kd = av_knob_info(k);
            av_params p, out;
            av_params_default(&p, v);
            ck_assert_int_eq(av_params_resolve(&out, &p, n, d), AV_OK);
            double want = vd->defaults[i] != 0 ? vd->defaults[i] : kd->flags & AV_KF_DEF_MIN_N ? fmin(n, kd->def) : kd->def;
            ck_assert_msg(av_params_get(&out, k) == want, "%s %s default %g", vd->name, kd->key, av_params_get(&out, k));
            double hi = kd->flags & AV_KF_HI_N ? n : kd->flags & AV_KF_HI_2N ? 2 * n - 1 : kd->hi;
            if (hi < 2147483647.0 && kd->type != AV_KT_BOOL) { /* one past the top is refused, and named */
                double past = hi + (kd->type == AV_KT_REAL ? 0.5 : kd->flags & AV_KF_ODD ? 2 : 1);
                ck_assert_int_eq(av_params_set(&p, k, past), AV_OK);
                int bad = -2;
                ck_assert_msg(av_params_check(&out, &p, n, d, &bad) == AV_ERR_KNOB && bad == k, "%s %s above range: %d",
                              vd->name, kd->key, bad);
            }
        }
    }
    av_params p;
    int bad = -2;
    av_params_default(&p, AV_LINFORMER);
    p.causal = 1;
    ck_assert_int_eq(av_params_check(&p, &p, n, d, &bad), AV_ERR_NO_CAUSAL);
    ck_assert_int_eq(bad, AV_KNOB_CAUSAL);
    av_params_default(&p, AV_FOCUSED);
    p.causal = 1;
    p.dwc_kernel = 3;
    ck_assert_int_eq(av_params_check(&p, &p, n, d, &bad), AV_ERR_NO_CAUSAL);
    ck_assert_int_eq(bad, AV_KNOB_DWC_KERNEL);
    p.dwc_kernel = 0;
    ck_assert_int_eq(av_params_check(&p, &p, n, d, &bad), AV_OK);
    ck_assert_int_eq(bad, -1);
    /* a decay needs the causal mask; retention and the delta rule exist only with it */
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        if (!avi_variant_reads(v, AV_KNOB_DECAY)) continue;
        av_params_default(&p, v);
        p.causal = 1;
        p.decay = 0.9;
        ck_assert_msg(av_params_check(&p, &p, n, d, &bad) == AV_OK, "%s decayed", av_variant_name(v));
        p.causal = 0;
        int want = AV_ERR_NEEDS_CAUSAL, st = av_params_check(&p, &p, n, d, &bad);
        ck_assert_msg(st == want && bad == (av_variant_info(v)->flags & AV_VF_CAUSAL_ONLY ? AV_KNOB_CAUSAL : AV_KNOB_DECAY),
                      "%s: decay without causal: %d, knob %d", av_variant_name(v), st, bad);
        p.decay = 1; /* the knob's own default needs nothing */
        st = av_params_check(&p, &p, n, d, &bad);
        ck_assert_msg(st == (av_variant_info(v)->flags & AV_VF_CAUSAL_ONLY ? AV_ERR_NEEDS_CAUSAL : AV_OK), "%s: decay 1", av_variant_name(v));
    }
}
END_TEST

/* The JSON names every variant and knob, in order, and ends where it should. */
START_TEST(test_registry_json) {
    const char *j = av_registry_json();
    ck_assert(j[0] == '{' && j[strlen(j) - 1] == '}');
    ck_assert(strstr(j, "\"error\"") == NULL);
    const char *at = j;
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        char key[96];
        snprintf(key, sizeof key, "{\"name\":\"%s\"", av_variant_name(v));
        const char *hit = strstr(at, key);
        ck_assert_msg(hit != NULL, "%s missing or out of order", av_variant_name(v));
        at = hit;
    }
    ck_assert(strstr(j, "\"AV_ERR_TOO_LARGE\":-14") != NULL);
    ck_assert(av_registry_json() == j); /* built once */
}
END_TEST

Suite *suite_variants(void) {
    Suite *s = suite_create("variants");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_rows_consistent);
    tcase_add_test(tc, test_knob_count_matches_list);
    tcase_add_test(tc, test_flags_match_behaviour);
    tcase_add_test(tc, test_knob_rows);
    tcase_add_test(tc, test_registry_json);
    suite_add_tcase(s, tc);
    return s;
}
