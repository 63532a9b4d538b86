/* check_model.c: real tensors from stories260K (../shared/data/stories260K, see its README) through the
 * .npy reader and av_matrix: causal softmax of five captured heads against the exact attention stored
 * with them. The folder is found at $ATTNVIZ_SHARED/data/stories260K (ATTNVIZ_SHARED defaults to
 * ../shared, relative to the repository root where the tests run); when the folder is absent the tests
 * pass without checking and the runner prints one SKIPPED line at its end. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnviz.h"
#include "testutil.h"

// ----------------------------------------------------------------------------------------------------
// helpers

static int have_data(void) {
    struct stat st;
    return stat(tu_stories_dir(), &st) == 0 && S_ISDIR(st.st_mode);
}

/* One loud line after the runner's summary, from the runner only (forked test children exit too). */
static pid_t runner_pid;
static void print_skipped(void) {
    if (getpid() != runner_pid) return;
    tu_skipped("Check suite model: stories260K .npy headers, causal softmax of 5 text128 heads");
}

/* Read and decode one .npy of the data folder (present: the caller checked); *info gets its header. */
static float *load(const char *name, av_npy_info *info) {
    float *x = tu_stories_npy(name, info);
    ck_assert_msg(x != NULL, "%s/%s: cannot read it as a .npy (%s)", tu_stories_dir(), name, av_npy_error());
    return x;
}

// ----------------------------------------------------------------------------------------------------
// tests

START_TEST(test_headers) {
    if (!have_data()) return;
    av_npy_info qi, ki, ai;
    float *q = load("text128_q.npy", &qi), *k = load("text128_k.npy", &ki), *a = load("text128_att_selected.npy", &ai);
    const int64_t qs[4] = {5, 8, 128, 8}, ks[4] = {5, 4, 128, 8}, as[3] = {5, 128, 128};
    ck_assert_int_eq(qi.ndim, 4);
    ck_assert_int_eq(ki.ndim, 4);
    ck_assert_int_eq(ai.ndim, 3);
    for (int i = 0; i < 4; i++) ck_assert(qi.shape[i] == qs[i] && ki.shape[i] == ks[i]);
    for (int i = 0; i < 3; i++) ck_assert(ai.shape[i] == as[i]);
    ck_assert_int_eq(qi.dtype_bytes, 4);
    ck_assert_uint_eq(qi.data_offset, 128); /* version 1.0 with a 128-byte header (README) */
    free(q); free(k); free(a);
}
END_TEST

START_TEST(test_selected_heads_causal_softmax) {
    if (!have_data()) return;
    av_npy_info qi, ki, ai;
    float *q = load("text128_q.npy", &qi), *k = load("text128_k.npy", &ki), *a = load("text128_att_selected.npy", &ai);
    const int heads[5][2] = {{0, 1}, {1, 3}, {2, 6}, {3, 0}, {4, 0}}; /* L0H1, L1H3, L2H6, L3H0, L4H0 */
    const int n = 128, d = 8, H = 8, KVH = 4;
    av_params prm;
    ck_assert_int_eq(av_params_default(&prm, AV_SOFTMAX), AV_OK);
    prm.causal = 1; /* scale 0 → 1/√8 */
    size_t wb = av_matrix_work(&prm, n, d);
    void *work = malloc(wb ? wb : 1);
    float *M = malloc(sizeof(float) * n * n);
    for (int s = 0; s < 5; s++) {
        int L = heads[s][0], h = heads[s][1], kvh = h * KVH / H; /* query head h reads KV head h/2 */
        const float *Q = q + ((size_t)L * H + h) * n * d, *K = k + ((size_t)L * KVH + kvh) * n * d;
        ck_assert_int_eq(av_matrix(M, Q, K, n, d, &prm, work, wb), AV_OK);
        const float *ref = a + (size_t)s * n * n;
        double worst = 0.0;
        for (int i = 0; i < n * n; i++) worst = fmax(worst, fabs((double)M[i] - ref[i]));
        ck_assert_msg(worst <= 1e-5, "L%dH%d: max |M - A| = %g", L, h, worst);
        for (int i = 0; i < n; i++) /* the mask: nothing above the diagonal */
            for (int j = i + 1; j < n; j++) ck_assert(M[i * n + j] == 0.0f);
    }
    /* a wrong KV head (h instead of h/2) is far off, so the comparison above can fail */
    const float *Q = q + ((size_t)1 * H + 3) * n * d, *K = k + ((size_t)1 * KVH + 3) * n * d;
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &prm, work, wb), AV_OK);
    double worst = 0.0;
    for (int i = 0; i < n * n; i++) worst = fmax(worst, fabs((double)M[i] - a[(size_t)1 * n * n + i]));
    ck_assert(worst > 1e-2);
    free(M); free(work); free(q); free(k); free(a);
}
END_TEST

Suite *suite_model(void) {
    if (!have_data()) {
        runner_pid = getpid();
        atexit(print_skipped);
    }
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("stories260K");
    tcase_add_test(tc, test_headers);
    tcase_add_test(tc, test_selected_heads_causal_softmax);
    suite_add_tcase(s, tc);
    return s;
}
