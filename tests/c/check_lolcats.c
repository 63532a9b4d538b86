/* check_lolcats.c: the hybrid variant lolcats (docs/variant-formulas.md "lolcats") against a float64 reference
 * written from that section: exp(scale·q_i·k_j − m_i) for i − W < j ≤ i, φ(q_i)·φ(k_j) with
 * φ = [softmax(u), softmax(−u)], u = W_hᵀx, for j ≤ i − W, M = term / row sum; every path, causal softmax at W ≥ n, the distillation's gradient
 * against finite differences, and the refusals.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"
#include "testutil.h"

/* M (n×n, float64) from the section's formula; Wh d×cols (float) or NULL (identity, cols = d): in the window
 * exp(scale·q·k − m_i) (m_i the window's largest logit), before it φ(q)·φ(k) with φ = [softmax(u), softmax(−u)],
 * u = W_hᵀx; each row divided by the sum of its terms. */
static void ref_phi(double *phi, const float *x, int d, const float *Wh, int cols) {
    double *u = malloc(sizeof(double) * (size_t)cols), hi = -INFINITY, lo = INFINITY, sp = 0, sn = 0;
    for (int c = 0; c < cols; c++) {
        u[c] = 0;
        for (int f = 0; f < d; f++) u[c] += (Wh ? Wh[f * cols + c] : (f == c)) * (double)x[f];
        hi = fmax(hi, u[c]), lo = fmin(lo, u[c]);
    }
    for (int c = 0; c < cols; c++) sp += exp(u[c] - hi), sn += exp(lo - u[c]);
    for (int c = 0; c < cols; c++) phi[c] = exp(u[c] - hi) / sp, phi[cols + c] = exp(lo - u[c]) / sn;
    free(u);
}

static void ref_matrix(double *M, const float *Q, const float *K, int n, int d, double scale, int W, const float *Wh,
                       int cols) {
    if (W <= 0) W = n;
    double *t = malloc(sizeof(double) * (size_t)n), *pq = malloc(sizeof(double) * 2 * cols),
           *pk = malloc(sizeof(double) * 2 * cols);
    for (int i = 0; i < n; i++) {
        double m = -INFINITY, sum = 0;
        for (int j = 0; j <= i; j++)
            if (j > i - W) {
                double s = 0;
                for (int c = 0; c < d; c++) s += (double)Q[i * d + c] * K[j * d + c];
                t[j] = scale * s;
                m = fmax(m, t[j]);
            }
        ref_phi(pq, Q + (size_t)i * d, d, Wh, cols);
        for (int j = 0; j <= i; j++) {
            if (j > i - W) {
                t[j] = exp(t[j] - m);
            } else {
                ref_phi(pk, K + (size_t)j * d, d, Wh, cols);
                t[j] = 0;
                for (int c = 0; c < 2 * cols; c++) t[j] += pq[c] * pk[c];
            }
            sum += t[j];
        }
        for (int j = 0; j < n; j++) M[(size_t)i * n + j] = j <= i ? t[j] / sum : 0;
    }
    free(t), free(pq), free(pk);
}

static av_params lolcats(int W, const float *Wh, int cols) {
    av_params p;
    av_params_default(&p, AV_LOLCATS);
    p.window = W;
    av_params_set_hedgehog(&p, Wh, cols);
    return p;
}

static float *normal(size_t count, double std, uint64_t seed) {
    float *x = malloc(sizeof(float) * (count ? count : 1));
    tu_fill_normal(x, count, 0, std, seed);
    return x;
}

/* Every path against the reference: n 1..70, W 1, 2, 16 and ≥ n, identity and a trained-like W_h. */
START_TEST(test_reference_every_path) {
    const int d = 5, dv = 3, cols = 4;
    float *Wh = normal((size_t)d * cols, 0.5, 77);
    double worst = 0;
    for (int n = 1; n <= 70; n += (n < 20 ? 1 : 7)) {
        float *Q = normal((size_t)n * d, 1, 10 + n), *K = normal((size_t)n * d, 1, 20 + n), *V = normal((size_t)n * dv, 1, 30 + n);
        float *M = malloc(sizeof(float) * n * n), *O = malloc(sizeof(float) * n * dv), *O2 = malloc(sizeof(float) * n * dv);
        double *R = malloc(sizeof(double) * n * n), *RO = malloc(sizeof(double) * n * dv);
        const int Ws[] = {1, 2, 16, n, n + 5, 0};
        for (int wi = 0; wi < 6; wi++)
            for (int trained = 0; trained < 2; trained++) {
                av_params p = lolcats(Ws[wi], trained ? Wh : NULL, trained ? cols : 0);
                ref_matrix(R, Q, K, n, d, 1 / sqrt(d), Ws[wi], trained ? Wh : NULL, trained ? cols : d);
                for (int i = 0; i < n; i++)
                    for (int c = 0; c < dv; c++) {
                        double s = 0;
                        for (int j = 0; j < n; j++) s += R[(size_t)i * n + j] * V[j * dv + c];
                        RO[i * dv + c] = s;
                    }
                size_t wb = av_attend_work(&p, n, d, dv);
                void *w = malloc(wb);
                ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, w, wb), AV_OK);
                double e = tu_max_abs_diff_d(M, R, (size_t)n * n);
                ck_assert_msg(e < 2e-6, "matrix n=%d W=%d trained=%d: %g", n, Ws[wi], trained, e);
                worst = e > worst ? e : worst;
                ck_assert_int_eq(av_attend(O, NULL, Q, K, V, n, d, dv, &p, w, wb), AV_OK);
                ck_assert_msg(tu_max_abs_diff_d(O, RO, (size_t)n * dv) < 1e-5, "attend n=%d W=%d", n, Ws[wi]);
                free(w);
                wb = av_recurrent_work(&p, n, d, dv);
                ck_assert(wb > 0);
                w = malloc(wb);
                ck_assert_int_eq(av_recurrent(O, Q, K, V, n, d, dv, &p, w, wb), AV_OK);
                e = tu_max_abs_diff_d(O, RO, (size_t)n * dv);
                ck_assert_msg(e < 1e-5, "recurrent n=%d W=%d trained=%d: %g", n, Ws[wi], trained, e);
                free(w);
                wb = av_linear_work(&p, n, d, dv);
                w = malloc(wb);
                ck_assert_int_eq(av_linear(O2, Q, K, V, n, d, dv, &p, w, wb), AV_OK);
                ck_assert_msg(memcmp(O, O2, sizeof(float) * n * dv) == 0, "linear = the recurrent scan n=%d", n);
                free(w);
            }
        free(Q), free(K), free(V), free(M), free(O), free(O2), free(R), free(RO);
    }
    free(Wh);
}
END_TEST

/* W ≥ n (and W = 0) is exact causal softmax: av_matrix's softmax to float rounding, on every path. */
START_TEST(test_full_window_is_softmax) {
    const int n = 40, d = 8, dv = 4;
    float *Q = normal(n * d, 1.5, 1), *K = normal(n * d, 1.5, 2), *V = normal(n * dv, 1, 3);
    float *M = malloc(sizeof(float) * n * n), *A = malloc(sizeof(float) * n * n), *O = malloc(sizeof(float) * n * dv),
          *OA = malloc(sizeof(float) * n * dv);
    av_params s;
    av_params_default(&s, AV_SOFTMAX);
    s.causal = 1;
    s.scale = 0.7;
    size_t wb = av_attend_work(&s, n, d, dv);
    void *w = malloc(wb);
    ck_assert_int_eq(av_attend(OA, A, Q, K, V, n, d, dv, &s, w, wb), AV_OK);
    free(w);
    for (int W = 0; W <= 2 * n; W += n) {
        av_params p = lolcats(W ? W : 0, NULL, 0);
        p.scale = 0.7;
        wb = av_attend_work(&p, n, d, dv);
        w = malloc(wb);
        ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, w, wb), AV_OK);
        free(w);
        ck_assert_msg(tu_max_abs_diff(M, A, (size_t)n * n) < 1e-6, "W=%d: %g", W, tu_max_abs_diff(M, A, (size_t)n * n));
        wb = av_recurrent_work(&p, n, d, dv);
        w = malloc(wb);
        ck_assert_int_eq(av_recurrent(O, Q, K, V, n, d, dv, &p, w, wb), AV_OK);
        free(w);
        ck_assert(tu_max_abs_diff(O, OA, (size_t)n * dv) < 1e-5);
    }
    free(Q), free(K), free(V), free(M), free(A), free(O), free(OA);
}
END_TEST

/* The registry's default window is 16; a W_h so large that the features saturate (u spans hundreds: φ·φ
 * underflows for some pairs) and logits far past exp's range (scale 400) stay finite and match the reference;
 * and two rows by hand: the window's best key counts 1 whatever the logits' size, an old key φ·φ ≤ 2. */
START_TEST(test_defaults_and_stability) {
    av_params p;
    av_params_default(&p, AV_LOLCATS);
    ck_assert_int_eq(p.window, 16);
    ck_assert_int_eq(p.causal, 1);
    const int n = 50, d = 4, dv = 2, cols = 3;
    float *Q = normal(n * d, 1, 5), *K = normal(n * d, 1, 6), *V = normal(n * dv, 1, 7), *Wh = normal(d * cols, 150, 8);
    float *M = malloc(sizeof(float) * n * n), *O = malloc(sizeof(float) * n * dv);
    double *R = malloc(sizeof(double) * n * n);
    for (int big = 0; big < 2; big++) {
        p = lolcats(5, Wh, cols);
        p.scale = big ? 400 : 0.5; /* 400·q·k reaches the thousands: e^s overflows double without m_i */
        size_t wb = av_attend_work(&p, n, d, dv);
        void *w = malloc(wb);
        ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, w, wb), AV_OK);
        free(w);
        ref_matrix(R, Q, K, n, d, p.scale, 5, Wh, cols);
        ck_assert_msg(tu_max_abs_diff_d(M, R, (size_t)n * n) < 2e-6, "%g", tu_max_abs_diff_d(M, R, (size_t)n * n));
        wb = av_recurrent_work(&p, n, d, dv);
        w = malloc(wb);
        ck_assert_int_eq(av_recurrent(O, Q, K, V, n, d, dv, &p, w, wb), AV_OK);
        free(w);
        for (int i = 0; i < n; i++)
            for (int c = 0; c < dv; c++) {
                double s = 0;
                for (int j = 0; j < n; j++) s += R[(size_t)i * n + j] * V[j * dv + c];
                ck_assert_msg(fabs(O[i * dv + c] - s) < 1e-5, "recurrent %d %d: %g vs %g", i, c, O[i * dv + c], s);
            }
    }
    free(Q), free(K), free(V), free(Wh), free(M), free(O), free(R);
    /* d = 1 (cols 1): φ ≡ [1, 1], φ·φ = 2 for any q, k, even u = ±500; W = 1: row 1 = [2, 1] / 3 */
    const float q2[2] = {0, 500}, k2[2] = {-500, 0}, v2[2] = {3, 0};
    float M2[4], O2[2];
    char w2[4096];
    p = lolcats(1, NULL, 0);
    ck_assert_int_eq(av_matrix(M2, q2, k2, 2, 1, &p, w2, sizeof w2), AV_OK);
    ck_assert_msg(fabs(M2[2] - 2.0 / 3) < 1e-6 && fabs(M2[3] - 1.0 / 3) < 1e-6, "cols 1: %g %g", M2[2], M2[3]);
    ck_assert_int_eq(av_recurrent(O2, q2, k2, v2, 2, 1, 1, &p, w2, sizeof w2), AV_OK);
    ck_assert_msg(fabs(O2[1] - 2.0) < 1e-5, "cols 1, recurrent: %g", O2[1]);
    /* d = 2, q_1 = k_0 = (ln 3, 0): φ = [¾, ¼, ¼, ¾], φ·φ = 5/4; the window's key 1 counts e^0 = 1 at any scale:
     * row 1 = [5/4, 1] / (9/4) = [5/9, 4/9] */
    const float q3[4] = {0, 0, (float)log(3), 0}, k3[4] = {(float)log(3), 0, 7, -2};
    float M3[4];
    for (int sc = 0; sc < 2; sc++) {
        p = lolcats(1, NULL, 0);
        p.scale = sc ? 300 : 1;
        ck_assert_int_eq(av_matrix(M3, q3, k3, 2, 2, &p, w2, sizeof w2), AV_OK);
        ck_assert_msg(fabs(M3[2] - 5.0 / 9) < 1e-6 && fabs(M3[3] - 4.0 / 9) < 1e-6, "scale %g: %g %g", p.scale, M3[2],
                      M3[3]);
    }
}
END_TEST

/* The semiseparable ceiling min(h, W − 2 + 2·cols) holds on random inputs, and is reached when it is below h. */
START_TEST(test_semiseparable_ceiling) {
    const int n = 64, d = 3;
    float *Q = normal(n * d, 1, 11), *K = normal(n * d, 1, 12), *M = malloc(sizeof(float) * n * n);
    const int Ws[] = {1, 2, 5, 16, 40, 0};
    for (int wi = 0; wi < 6; wi++) {
        av_params p = lolcats(Ws[wi], NULL, 0);
        long ceil;
        ck_assert_int_eq(av_semiseparable_ceiling(&ceil, &p, n, d), AV_OK);
        long want = Ws[wi] > 0 && Ws[wi] < n ? Ws[wi] - 2 + 2 * d : n / 2;
        ck_assert_int_eq(ceil, want < n / 2 ? want : n / 2);
        size_t wb = av_matrix_work(&p, n, d);
        void *w = malloc(wb);
        ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, w, wb), AV_OK);
        free(w);
        wb = av_semiseparable_work(n, AV_SVD_ACCURATE);
        w = malloc(wb);
        double rank;
        ck_assert_int_eq(av_semiseparable_rank(&rank, NULL, M, n, -1, 0, AV_SVD_ACCURATE, w, wb), AV_OK);
        free(w);
        ck_assert_msg(rank <= ceil, "W=%d: rank %g > ceiling %ld", Ws[wi], rank, ceil);
        if (Ws[wi] >= 1 && Ws[wi] <= 5) ck_assert_msg(rank == ceil, "W=%d: rank %g, ceiling %ld", Ws[wi], rank, ceil);
    }
    free(Q), free(K), free(M);
}
END_TEST

/* av_distill_loss for lolcats: its loss is the mean row KL(A ‖ M) of av_matrix's M; its gradient matches central
 * finite differences; Adam lowers the loss; hedgehog's distillation is unchanged by the variant field. */
START_TEST(test_distill) {
    const int n = 24, d = 4, cols = 3, W = 4;
    float *Q = normal(n * d, 1, 41), *K = normal(n * d, 1, 42);
    double Wd[4 * 3], grad[4 * 3], moments[2 * 4 * 3], loss[40];
    for (int e = 0; e < d * cols; e++) Wd[e] = 0.3 * sin(1.7 * e + 0.4);
    av_params p = lolcats(W, NULL, 0);
    size_t wb = av_distill_work(&p, n, d, cols);
    ck_assert(wb > 0);
    void *w = malloc(wb);
    /* the loss is the mean row KL(A ‖ M), A causal softmax (scale 1/√d), M the reference's with W_h = Wd (float-exact) */
    float Wf[4 * 3], *A = malloc(sizeof(float) * n * n);
    for (int e = 0; e < d * cols; e++) Wd[e] = Wf[e] = (float)Wd[e];
    double *R = malloc(sizeof(double) * n * n), L;
    ck_assert_int_eq(av_distill_loss(&L, grad, Wd, cols, Q, K, n, d, &p, w, wb), AV_OK);
    av_params s;
    av_params_default(&s, AV_SOFTMAX);
    s.causal = 1;
    size_t mb = av_matrix_work(&s, n, d);
    void *mw = malloc(mb);
    ck_assert_int_eq(av_matrix(A, Q, K, n, d, &s, mw, mb), AV_OK);
    free(mw);
    ref_matrix(R, Q, K, n, d, 1 / sqrt(d), W, Wf, cols);
    double want = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            if (A[i * n + j] > 0) want += A[i * n + j] * (log(A[i * n + j]) - log(R[(size_t)i * n + j]));
    want /= n;
    ck_assert_msg(fabs(L - want) < 1e-9 + 1e-7 * want, "loss %.12g, reference %.12g", L, want);
    for (int e = 0; e < d * cols; e++) {
        const double h = 1e-5, keep = Wd[e];
        double lp, lm;
        Wd[e] = keep + h;
        ck_assert_int_eq(av_distill_loss(&lp, NULL, Wd, cols, Q, K, n, d, &p, w, wb), AV_OK);
        Wd[e] = keep - h;
        ck_assert_int_eq(av_distill_loss(&lm, NULL, Wd, cols, Q, K, n, d, &p, w, wb), AV_OK);
        Wd[e] = keep;
        double fd = (lp - lm) / (2 * h);
        ck_assert_msg(fabs(fd - grad[e]) < 1e-6 + 1e-5 * fabs(fd), "grad[%d] %.10g, finite differences %.10g", e, grad[e], fd);
    }
    ck_assert_int_eq(av_distill(Wd, moments, 0, loss, 40, 0.05, cols, Q, K, n, d, &p, w, wb), AV_OK);
    ck_assert_msg(loss[39] < 0.8 * loss[0], "loss %g -> %g", loss[0], loss[39]);
    double after;
    ck_assert_int_eq(av_distill_loss(&after, NULL, Wd, cols, Q, K, n, d, &p, w, wb), AV_OK);
    /* Adam need not lower the loss at every step (it plateaus here near 0.17): the loss at the final W is the one
     * a resumed run reports before its first step */
    ck_assert_msg(after < 0.8 * loss[0], "loss %g -> %g", loss[0], after);
    ck_assert_int_eq(av_distill(Wd, moments, 40, loss, 1, 0.05, cols, Q, K, n, d, &p, w, wb), AV_OK);
    ck_assert_msg(loss[0] == after, "resumed %.17g, after %.17g", loss[0], after);
    free(w), free(A), free(R), free(Q), free(K);
}
END_TEST

START_TEST(test_refusals) {
    const int n = 8, d = 3, dv = 2;
    float *Q = normal(n * d, 1, 1), *K = normal(n * d, 1, 2), *V = normal(n * dv, 1, 3), O[8 * 2], M[64];
    av_params p = lolcats(4, NULL, 0);
    char w[1 << 16];
    p.causal = 0;
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, w, sizeof w), AV_ERR_NEEDS_CAUSAL);
    ck_assert_int_eq(av_distill_work(&p, n, d, 2), 0);
    p.causal = 1;
    p.window = -1;
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, w, sizeof w), AV_ERR_KNOB);
    p.window = 4;
    ck_assert_int_eq(av_chunkwise(O, Q, K, V, n, d, dv, &p, w, sizeof w), AV_ERR_NO_LINEAR);
    long r;
    ck_assert_int_eq(av_factor_rank(&r, &p, n, d), AV_ERR_NO_LINEAR);
    ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_ERR_NO_LINEAR);
    float phi[4] = {1, 1, 1, 1};
    double S[8] = {0}, z[4] = {0};
    ck_assert_int_eq(av_recurrent_step(O, S, z, phi, phi, V, 4, dv, n, &p), AV_ERR_NO_LINEAR);
    const float bad[9] = {1, 0, 0, 0, NAN, 0, 0, 0, 1};
    av_params_set_hedgehog(&p, bad, 3);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, w, sizeof w), AV_ERR_NONFINITE);
    ck_assert_int_eq(av_recurrent(O, Q, K, V, n, d, dv, &p, w, sizeof w), AV_ERR_NONFINITE);
    av_params_set_hedgehog(&p, NULL, 0);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, w, 8), AV_ERR_WORKSPACE);
    free(Q), free(K), free(V);
}
END_TEST

/* Recall: the memory reads the last W pairs by softmax and the older ones by φ; at W ≥ N it is softmax's. */
START_TEST(test_recall) {
    const int N = 20, d = 8;
    float *K = malloc(sizeof(float) * N * d), *V = malloc(sizeof(float) * N * d);
    ck_assert_int_eq(av_recall_draw(K, V, N, d, 3), AV_OK);
    double e1[20], e2[20];
    av_params p = lolcats(N, NULL, 0), s;
    av_params_default(&s, AV_SOFTMAX);
    size_t wb = av_recall_work(&p, N, d);
    ck_assert(wb > 0);
    void *w = malloc(wb);
    ck_assert_int_eq(av_recall_pairs(e1, K, V, N, d, &p, w, wb), AV_OK);
    free(w);
    wb = av_recall_work(&s, N, d);
    w = malloc(wb);
    ck_assert_int_eq(av_recall_pairs(e2, K, V, N, d, &s, w, wb), AV_OK);
    free(w);
    for (int i = 0; i < N; i++) ck_assert_msg(fabs(e1[i] - e2[i]) < 1e-6, "pair %d: %g vs %g", i, e1[i], e2[i]);
    p.window = 4;
    wb = av_recall_work(&p, N, d);
    w = malloc(wb);
    ck_assert_int_eq(av_recall_pairs(e1, K, V, N, d, &p, w, wb), AV_OK);
    free(w);
    for (int i = 0; i < N; i++) ck_assert(isfinite(e1[i]) && e1[i] >= 0);
    free(K), free(V);
}
END_TEST

Suite *suite_lolcats(void) {
    Suite *s = suite_create("lolcats");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_reference_every_path);
    tcase_add_test(tc, test_full_window_is_softmax);
    tcase_add_test(tc, test_defaults_and_stability);
    tcase_add_test(tc, test_semiseparable_ceiling);
    tcase_add_test(tc, test_distill);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_recall);
    suite_add_tcase(s, tc);
    return s;
}
