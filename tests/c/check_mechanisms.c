/* check_mechanisms.c: the mechanism views' computations (docs/mechanisms.md).
 *   stepper   av_recurrent_step, token by token, gives the masked matrix's rows times V for every variant
 *             with a recurrent form, decayed ones and the delta rule included (the page's stepper runs it);
 *   recall    the linear state follows √((N−1)/d) on many draws; the delta rule at β = 1 recalls orthonormal
 *             keys exactly for N ≤ d and beats the linear state at every N; softmax against a direct reference;
 *   distill   the analytic gradient against central differences; Adam resumed across calls is the same
 *             run; the loss falls and the trained W beats elu+1 on KL to softmax (synthetic, and on a
 *             real head of text128 when ../shared/data/stories260K is present). */
#include <check.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnviz.h"
#include "testutil.h"

static void *work_for(size_t bytes) { return malloc(bytes ? bytes : 1); }

// ----------------------------------------------------------------------------------------------------
// stepper

/* o_t from av_recurrent_step equals row t of M·V (M from av_matrix, causal), for every recurrent variant, at
 * γ = 1 and γ = 0.9 where the variant reads the decay. */
START_TEST(test_stepper_rows) {
    int n = 29, d = 6, dv = 5, checked = 0;
    float Q[29 * 6], K[29 * 6], V[29 * 5], M[29 * 29], o[5];
    tu_fill_normal(Q, (size_t)n * d, 0, 0.8, 11);
    tu_fill_normal(K, (size_t)n * d, 0, 0.8, 12);
    tu_fill_normal(V, (size_t)n * dv, 0, 1, 13);
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        const av_variant_desc *vd = av_variant_info(v);
        if (!(vd->flags & AV_VF_RECURRENT) || vd->cls == AV_CLASS_GATED) continue; /* av_gated_step: check_gated.c */
        if (vd->cls == AV_CLASS_HYBRID) continue; /* no step (a cache beside the state): check_lolcats.c */
        int reads_decay = 0;
        for (int k = 0; k < vd->knob_count; k++) reads_decay |= vd->knobs[k] == AV_KNOB_DECAY;
        for (int g = 0; g < 1 + reads_decay; g++) {
            av_params p;
            av_params_default(&p, v);
            p.causal = 1;
            if (g) p.decay = 0.9;
            if (v == AV_DELTANET) p.beta = 0.7;
            size_t wm = av_matrix_work(&p, n, d), wf = av_features_work(&p, n, d);
            void *w = work_for(wm > wf ? wm : wf);
            int st = av_matrix(M, Q, K, n, d, &p, w, wm);
            ck_assert_msg(st == AV_OK || st == AV_WARN_ZERO_ROW, "%s: %d", vd->name, st);
            long r;
            ck_assert_int_eq(av_feature_dim(&r, &p, n, d), AV_OK);
            float *PQ = malloc(sizeof(float) * n * r), *PK = malloc(sizeof(float) * n * r);
            ck_assert_int_eq(av_features(PQ, PK, Q, K, n, d, &p, w, wf), AV_OK);
            double *S = calloc((size_t)r * dv, sizeof(double)), *z = calloc((size_t)r, sizeof(double)), worst = 0, mx = 0;
            for (int t = 0; t < n; t++) {
                int s1 = av_recurrent_step(o, S, z, PQ + (size_t)t * r, PK + (size_t)t * r, V + (size_t)t * dv, r, dv, n, &p);
                ck_assert(s1 == AV_OK || s1 == AV_WARN_ZERO_ROW);
                for (int c = 0; c < dv; c++) {
                    double ref = 0;
                    for (int j = 0; j <= t; j++) ref += (double)M[t * n + j] * V[j * dv + c];
                    worst = fmax(worst, fabs(o[c] - ref));
                    mx = fmax(mx, fabs(ref));
                }
            }
            ck_assert_msg(worst <= 2e-5 * fmax(mx, 1), "%s decay %g: stepper rows differ from M·V by %g", vd->name, p.decay, worst);
            checked++;
            free(PQ); free(PK); free(S); free(z); free(w);
        }
    }
    ck_assert_int_ge(checked, 12);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// recall

/* Mean recall error over `seeds` protocol draws (and its standard error). */
static double recall_mean(const av_params *p, int N, int d, int seeds, double *sem) {
    float *K = malloc(sizeof(float) * N * d), *V = malloc(sizeof(float) * N * d);
    double *err = malloc(sizeof(double) * N), s1 = 0, s2 = 0;
    size_t wb = av_recall_work(p, N, d);
    ck_assert(wb > 0);
    void *w = work_for(wb);
    for (int s = 0; s < seeds; s++) {
        ck_assert_int_eq(av_recall_draw(K, V, N, d, (uint32_t)s), AV_OK);
        ck_assert_int_eq(av_recall_pairs(err, K, V, N, d, p, w, wb), AV_OK);
        double m = 0;
        for (int i = 0; i < N; i++) m += err[i];
        m /= N;
        s1 += m;
        s2 += m * m;
    }
    double mean = s1 / seeds;
    if (sem) *sem = sqrt(fmax(s2 / seeds - mean * mean, 0) / seeds);
    free(K); free(V); free(err); free(w);
    return mean;
}

static av_params linear_state(void) { /* retention at γ = 1, scale 1: S = Σ k vᵀ */
    av_params p;
    av_params_default(&p, AV_RETENTION);
    p.decay = 1;
    return p;
}

static av_params delta_rule(double beta) {
    av_params p;
    av_params_default(&p, AV_DELTANET);
    p.decay = 1;
    p.beta = beta;
    return p;
}

START_TEST(test_recall_draw) {
    int N = 50, d = 7;
    float K[50 * 7], V[50 * 7], K2[50 * 7], V2[50 * 7];
    ck_assert_int_eq(av_recall_draw(K, V, N, d, 3), AV_OK);
    ck_assert_int_eq(av_recall_draw(K2, V2, N, d, 3), AV_OK);
    ck_assert(memcmp(K, K2, sizeof K) == 0 && memcmp(V, V2, sizeof V) == 0);
    double vs = 0;
    for (int i = 0; i < N; i++) {
        double ss = 0;
        for (int c = 0; c < d; c++) ss += (double)K[i * d + c] * K[i * d + c];
        ck_assert(fabs(ss - 1) < 1e-6);
    }
    for (int e = 0; e < N * d; e++) vs += (double)V[e] * V[e];
    ck_assert(fabs(vs / (N * d) - 1) < 0.25); /* values N(0, 1) */
    ck_assert_int_eq(av_recall_draw(K2, V2, N, d, 4), AV_OK);
    ck_assert(memcmp(K, K2, sizeof K) != 0);
    ck_assert_int_eq(av_recall_draw(NULL, V, N, d, 0), AV_ERR_NULL);
    ck_assert_int_eq(av_recall_draw(K, V, 0, d, 0), AV_ERR_SIZE);
}
END_TEST

/* The linear state's error follows √((N−1)/d): over 200 draws the mean is within 4% (and a few standard
 * errors) of the law, below and above N = d. */
START_TEST(test_recall_linear_law) {
    static const int NS[] = {9, 65, 257};
    av_params p = linear_state();
    for (int k = 0; k < 3; k++) {
        int N = NS[k], d = 64;
        double sem, m = recall_mean(&p, N, d, N > 100 ? 60 : 200, &sem), law = sqrt((N - 1.0) / d);
        ck_assert_msg(fabs(m - law) <= 0.04 * law + 3 * sem, "N = %d: mean %g against the law %g (sem %g)", N, m, law, sem);
    }
}
END_TEST

/* Orthonormal keys (the rows of an orthogonal matrix): the delta rule at β = 1 and the linear state recall
 * exactly for N ≤ d; one key more and the linear state collides. */
START_TEST(test_recall_orthonormal) {
    int d = 12;
    float A[12 * 12], K[13 * 12], V[13 * 12];
    tu_fill_normal(A, (size_t)d * d, 0, 1, 21);
    for (int i = 0; i < d; i++) { /* modified Gram–Schmidt, in double */
        double row[12], ss = 0;
        for (int c = 0; c < d; c++) row[c] = A[i * d + c];
        for (int j = 0; j < i; j++) {
            double dot = 0;
            for (int c = 0; c < d; c++) dot += row[c] * K[j * d + c];
            for (int c = 0; c < d; c++) row[c] -= dot * K[j * d + c];
        }
        for (int c = 0; c < d; c++) ss += row[c] * row[c];
        for (int c = 0; c < d; c++) K[i * d + c] = (float)(row[c] / sqrt(ss));
    }
    tu_fill_normal(V, 13 * 12, 0, 1, 22);
    double err[13];
    for (int N = 1; N <= d; N++) {
        av_params ps[2] = {delta_rule(1), linear_state()};
        for (int m = 0; m < 2; m++) {
            size_t wb = av_recall_work(&ps[m], N, d);
            void *w = work_for(wb);
            ck_assert_int_eq(av_recall_pairs(err, K, V, N, d, &ps[m], w, wb), AV_OK);
            for (int i = 0; i < N; i++) ck_assert_msg(err[i] < 1e-5, "N = %d, memory %d, pair %d: %g", N, m, i, err[i]);
            free(w);
        }
    }
    /* a 13th key, a repeat of key 0 with another value: the delta rule returns the newest value for it */
    memcpy(K + 12 * d, K, sizeof(float) * d);
    av_params p = delta_rule(1), q = linear_state();
    size_t wb = av_recall_work(&p, 13, d), wq = av_recall_work(&q, 13, d);
    void *w = work_for(wb > wq ? wb : wq);
    ck_assert_int_eq(av_recall_pairs(err, K, V, 13, d, &p, w, wb), AV_OK);
    ck_assert(err[12] < 1e-5 && err[0] > 0.1); /* v′ recalled for k; the old v is gone */
    ck_assert_int_eq(av_recall_pairs(err, K, V, 13, d, &q, w, wq), AV_OK);
    ck_assert(err[12] > 0.1 && err[0] > 0.1); /* the linear state returns the sum v + v′ for both */
    free(w);
}
END_TEST

/* With β = 1 the delta rule beats the linear state at every N (random unit keys, below and far above d). */
START_TEST(test_recall_delta_beats_linear) {
    static const int NS[] = {2, 4, 8, 16, 32, 64, 128, 512};
    av_params lin = linear_state(), del = delta_rule(1);
    for (int k = 0; k < 8; k++) {
        int N = NS[k], d = 32;
        double ml = recall_mean(&lin, N, d, 6, NULL), md = recall_mean(&del, N, d, 6, NULL);
        ck_assert_msg(md < ml, "N = %d: delta %g, linear %g", N, md, ml);
    }
}
END_TEST

/* Softmax over the stored pairs against a direct double reference (scale, decay, window); a sharp scale
 * recalls far beyond d pairs. */
START_TEST(test_recall_softmax) {
    int N = 40, d = 8;
    float K[40 * 8], V[40 * 8];
    ck_assert_int_eq(av_recall_draw(K, V, N, d, 9), AV_OK);
    double err[40];
    static const double SCALES[] = {0, 3}, DECAYS[] = {1, 0.9};
    static const int WINDOWS[] = {0, 7};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 2; c++) {
                av_params p;
                av_params_default(&p, AV_SOFTMAX);
                p.scale = SCALES[a];
                p.decay = DECAYS[b];
                p.window = WINDOWS[c];
                size_t wb = av_recall_work(&p, N, d);
                void *w = work_for(wb);
                ck_assert_int_eq(av_recall_pairs(err, K, V, N, d, &p, w, wb), AV_OK);
                double scale = SCALES[a] ? SCALES[a] : 1, worst = 0;
                int j0 = WINDOWS[c] ? N - WINDOWS[c] : 0;
                for (int i = 0; i < N; i++) {
                    double wts[40], mx = -INFINITY, sum = 0, num = 0, den = 0;
                    for (int j = j0; j < N; j++) {
                        double s = 0;
                        for (int f = 0; f < d; f++) s += (double)K[i * d + f] * K[j * d + f];
                        wts[j] = scale * s + (N - 1 - j) * log(DECAYS[b]);
                        mx = fmax(mx, wts[j]);
                    }
                    for (int j = j0; j < N; j++) sum += wts[j] = exp(wts[j] - mx);
                    for (int f = 0; f < d; f++) {
                        double o = 0;
                        for (int j = j0; j < N; j++) o += wts[j] / sum * V[j * d + f];
                        num += (o - V[i * d + f]) * (o - V[i * d + f]);
                        den += (double)V[i * d + f] * V[i * d + f];
                    }
                    worst = fmax(worst, fabs(err[i] - sqrt(num / den)));
                }
                ck_assert_msg(worst < 1e-5, "scale %g decay %g window %d: %g", scale, DECAYS[b], WINDOWS[c], worst);
                free(w);
            }
    av_params p;
    av_params_default(&p, AV_SOFTMAX);
    p.scale = 30;
    ck_assert(recall_mean(&p, 256, 64, 2, NULL) < 1e-3);
}
END_TEST

START_TEST(test_recall_refusals) {
    av_params p;
    float K[4] = {1, 0, 0, 1}, V[4] = {1, 2, 3, 4}, bad[4] = {1, NAN, 0, 1};
    double err[2];
    char w[4096];
    static const int NONE[] = {AV_EFFICIENT, AV_LINFORMER, AV_NYSTROM};
    for (int k = 0; k < 3; k++) {
        av_params_default(&p, NONE[k]);
        ck_assert_int_eq(av_recall_work(&p, 2, 2), 0);
        ck_assert_int_eq(av_recall_pairs(err, K, V, 2, 2, &p, w, sizeof w), AV_ERR_NO_LINEAR);
    }
    av_params_default(&p, AV_FOCUSED);
    p.dwc_kernel = 3;
    ck_assert_int_eq(av_recall_pairs(err, K, V, 2, 2, &p, w, sizeof w), AV_ERR_NO_LINEAR);
    av_params_default(&p, AV_ELU);
    size_t wb = av_recall_work(&p, 2, 2);
    ck_assert(wb > 0 && wb <= sizeof w);
    ck_assert_int_eq(av_recall_pairs(NULL, K, V, 2, 2, &p, w, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_recall_pairs(err, K, V, 0, 2, &p, w, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_recall_pairs(err, K, V, 2, 2, &p, w, wb - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_recall_pairs(err, bad, V, 2, 2, &p, w, wb), AV_ERR_NONFINITE);
    p.decay = 1.5;
    ck_assert_int_eq(av_recall_pairs(err, K, V, 2, 2, &p, w, sizeof w), AV_ERR_KNOB);
    av_params_default(&p, AV_DELTANET); /* causal-only variants and decays are memories: no causal flag needed */
    p.decay = 0.5;
    wb = av_recall_work(&p, 2, 2);
    ck_assert_int_eq(av_recall_pairs(err, K, V, 2, 2, &p, w, wb), AV_OK);
}
END_TEST

/* The header's promise on recall: AV_OK and AV_WARN_ZERO_ROW mean every error is finite; an overflow is a
 * warning (issue 27: softmax at scale DBL_MAX gave 2 NaN errors of 4 with AV_OK, retention at 1e38 an Inf). */
START_TEST(test_recall_overflow_reported) {
    int N = 4, d = 4;
    float K[16], V[16];
    ck_assert_int_eq(av_recall_draw(K, V, N, d, 0), AV_OK);
    double err[4];
    char w[1 << 16];
    av_params p;
    av_params_default(&p, AV_SOFTMAX);
    p.scale = DBL_MAX;
    ck_assert_int_eq(av_recall_pairs(err, K, V, N, d, &p, w, sizeof w), AV_WARN_PRODUCT_OVERFLOW);
    av_params_default(&p, AV_RETENTION);
    p.scale = 1e38;
    int st = av_recall_pairs(err, K, V, N, d, &p, w, sizeof w);
    ck_assert_msg(st == AV_WARN_OVERFLOW || st == AV_WARN_PRODUCT_OVERFLOW, "retention at 1e38: status %d", st);
    /* every memory at huge scales: a status that promises finite errors has finite errors */
    static const double SCALES[] = {1e10, 1e19, 1e30, 1e38, 1e300, DBL_MAX};
    int warned = 0;
    for (int v = 0; v < AV_VARIANT_COUNT; v++)
        for (int k = 0; k < 6; k++) {
            av_params_default(&p, v);
            p.scale = SCALES[k];
            size_t wb = av_recall_work(&p, N, d);
            if (!wb || wb > sizeof w) continue;
            st = av_recall_pairs(err, K, V, N, d, &p, w, wb);
            if (st < 0) continue;
            warned += st == AV_WARN_OVERFLOW || st == AV_WARN_PRODUCT_OVERFLOW;
            if (st == AV_OK || st == AV_WARN_ZERO_ROW)
                for (int i = 0; i < N; i++)
                    ck_assert_msg(isfinite(err[i]), "%s scale %g: err[%d] = %g with status %d", av_variant_name(v),
                                  SCALES[k], i, err[i], st);
        }
    ck_assert_int_gt(warned, 0);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// distillation

/* The analytic gradient against central differences of the loss, causal and not, cols ≠ d. */
START_TEST(test_distill_gradient) {
    int n = 9, d = 3, cols = 4, cnt = 12;
    float Q[27], K[27];
    tu_fill_normal(Q, 27, 0, 1, 31);
    tu_fill_normal(K, 27, 0, 1, 32);
    double W[12], G[12], Wp[12];
    float Wf[12];
    tu_fill_normal(Wf, 12, 0, 0.7, 33);
    for (int e = 0; e < cnt; e++) W[e] = Wf[e];
    for (int causal = 0; causal <= 1; causal++) {
        av_params p;
        av_params_default(&p, AV_HEDGEHOG);
        p.causal = causal;
        p.scale = 0.8;
        size_t wb = av_distill_work(&p, n, d, cols);
        void *w = work_for(wb);
        double L, Lp, Lm, worst = 0, gmax = 0;
        ck_assert_int_eq(av_distill_loss(&L, G, W, cols, Q, K, n, d, &p, w, wb), AV_OK);
        ck_assert(L > 0);
        for (int e = 0; e < cnt; e++) {
            const double h = 1e-6;
            memcpy(Wp, W, sizeof W);
            Wp[e] = W[e] + h;
            ck_assert_int_eq(av_distill_loss(&Lp, NULL, Wp, cols, Q, K, n, d, &p, w, wb), AV_OK);
            Wp[e] = W[e] - h;
            ck_assert_int_eq(av_distill_loss(&Lm, NULL, Wp, cols, Q, K, n, d, &p, w, wb), AV_OK);
            worst = fmax(worst, fabs((Lp - Lm) / (2 * h) - G[e]));
            gmax = fmax(gmax, fabs(G[e]));
        }
        ck_assert_msg(worst <= 1e-6 * fmax(gmax, 1), "causal %d: gradient off by %g (max %g)", causal, worst, gmax);
        free(w);
    }
}
END_TEST

/* The loss is the KL to softmax of the library's own hedgehog matrix with that W (the same H). */
static double mean_kl(int variant, const float *W, int cols, const float *Q, const float *K, int n, int d, int causal) {
    av_params p, ps;
    av_params_default(&p, variant);
    av_params_default(&ps, AV_SOFTMAX);
    p.causal = ps.causal = causal;
    if (W) av_params_set_hedgehog(&p, W, cols);
    float *M = malloc(sizeof(float) * n * n), *A = malloc(sizeof(float) * n * n);
    size_t wm = av_matrix_work(&p, n, d), wa = av_matrix_work(&ps, n, d);
    void *w = work_for(wm > wa ? wm : wa);
    ck_assert(av_matrix(M, Q, K, n, d, &p, w, wm) >= 0);
    ck_assert_int_eq(av_matrix(A, Q, K, n, d, &ps, w, wa), AV_OK);
    double kl = 0;
    for (int i = 0; i < n; i++) {
        int jn = causal ? i + 1 : n;
        double s = 0;
        for (int j = 0; j < jn; j++) s += M[i * n + j];
        for (int j = 0; j < jn; j++)
            if (A[i * n + j] > 0) kl += A[i * n + j] * (log(A[i * n + j]) - log(M[i * n + j] / s));
    }
    free(M); free(A); free(w);
    return kl / n;
}

/* Train from the identity for `steps`; the loss falls by half and the trained map beats elu+1. */
static void distill_claim(const float *Q, const float *K, int n, int d, int causal, int steps, const char *what) {
    int cols = d;
    double *W = calloc((size_t)d * cols, sizeof(double)), *mom = malloc(sizeof(double) * 2 * d * cols);
    double *loss = malloc(sizeof(double) * steps), Lend;
    for (int i = 0; i < d; i++) W[i * cols + i] = 1;
    av_params p;
    av_params_default(&p, AV_HEDGEHOG);
    p.causal = causal;
    size_t wb = av_distill_work(&p, n, d, cols);
    void *w = work_for(wb);
    ck_assert_int_eq(av_distill(W, mom, 0, loss, steps, 0, cols, Q, K, n, d, &p, w, wb), AV_OK);
    ck_assert_int_eq(av_distill_loss(&Lend, NULL, W, cols, Q, K, n, d, &p, w, wb), AV_OK);
    float *Wf = malloc(sizeof(float) * d * cols);
    for (int e = 0; e < d * cols; e++) Wf[e] = (float)W[e];
    double kl_h = mean_kl(AV_HEDGEHOG, Wf, cols, Q, K, n, d, causal), kl_e = mean_kl(AV_ELU, NULL, 0, Q, K, n, d, causal);
    ck_assert_msg(Lend < 0.5 * loss[0], "%s: loss %g → %g", what, loss[0], Lend);
    ck_assert_msg(fabs(kl_h - Lend) < 1e-3 * fmax(Lend, 1e-3), "%s: the matrix's KL %g is not the loss %g", what, kl_h, Lend);
    ck_assert_msg(kl_h < kl_e, "%s: hedgehog KL %g does not beat elu+1's %g", what, kl_h, kl_e);
    free(W); free(mom); free(loss); free(w); free(Wf);
}

START_TEST(test_distill_synthetic) {
    int n = 64, d = 16;
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *V = malloc(sizeof(float) * n * d);
    ck_assert_int_eq(av_generate(Q, K, V, n, d, AV_GEN_CLUSTERED, 1, 5), AV_OK);
    distill_claim(Q, K, n, d, 1, 150, "clustered, causal");
    ck_assert_int_eq(av_generate(Q, K, V, n, d, AV_GEN_GAUSSIAN, 1, 6), AV_OK);
    distill_claim(Q, K, n, d, 0, 150, "gaussian");
    free(Q); free(K); free(V);
}
END_TEST

/* Adam resumed across calls (t0, the moments) is the same run as one call, bit for bit. */
START_TEST(test_distill_resume) {
    int n = 10, d = 4, cols = 4;
    float Q[40], K[40];
    tu_fill_normal(Q, 40, 0, 1, 41);
    tu_fill_normal(K, 40, 0, 1, 42);
    double W1[16] = {0}, W2[16] = {0}, m1[32], m2[32], l1[10], l2[10];
    for (int i = 0; i < 4; i++) W1[i * 5] = W2[i * 5] = 1;
    av_params p;
    av_params_default(&p, AV_HEDGEHOG);
    size_t wb = av_distill_work(&p, n, d, cols);
    void *w = work_for(wb);
    ck_assert_int_eq(av_distill(W1, m1, 0, l1, 10, 0.02, cols, Q, K, n, d, &p, w, wb), AV_OK);
    ck_assert_int_eq(av_distill(W2, m2, 0, l2, 4, 0.02, cols, Q, K, n, d, &p, w, wb), AV_OK);
    ck_assert_int_eq(av_distill(W2, m2, 4, l2 + 4, 6, 0.02, cols, Q, K, n, d, &p, w, wb), AV_OK);
    ck_assert(memcmp(W1, W2, sizeof W1) == 0 && memcmp(l1, l2, sizeof l1) == 0);
    ck_assert(l1[9] < l1[0]);
    /* refusals */
    ck_assert_int_eq(av_distill(W1, m1, 0, l1, -1, 0.02, cols, Q, K, n, d, &p, w, wb), AV_ERR_KNOB);
    ck_assert_int_eq(av_distill(W1, m1, 0, l1, 1, -1, cols, Q, K, n, d, &p, w, wb), AV_ERR_KNOB);
    ck_assert_int_eq(av_distill(W1, NULL, 0, l1, 1, 0.02, cols, Q, K, n, d, &p, w, wb), AV_ERR_NULL);
    ck_assert_int_eq(av_distill(W1, m1, 0, l1, 1, 0.02, cols, Q, K, n, d, &p, w, wb - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_distill(W1, m1, 0, l1, 1, 0.02, 0, Q, K, n, d, &p, w, wb), AV_ERR_SIZE);
    double Wbad[16] = {NAN};
    ck_assert_int_eq(av_distill(Wbad, m1, 0, l1, 1, 0.02, cols, Q, K, n, d, &p, w, wb), AV_ERR_NONFINITE);
    double L;
    Q[3] = INFINITY;
    ck_assert_int_eq(av_distill_loss(&L, NULL, W1, cols, Q, K, n, d, &p, w, wb), AV_ERR_NONFINITE);
    free(w);
}
END_TEST

/* Adam's arguments are checked before anything is written, and a step whose update leaves the double
 * range is not taken (issue 27: lr 1e308 gave W = [inf inf −inf −inf] with AV_OK; NaN or negative moments
 * a NaN W; t0 = INT_MAX a signed overflow). */
START_TEST(test_distill_bad_state_and_overflow) {
    int n = 4, d = 2, cols = 2;
    float Q[8], K[8];
    tu_fill_normal(Q, 8, 0, 1, 51);
    tu_fill_normal(K, 8, 0, 1, 52);
    av_params p;
    av_params_default(&p, AV_HEDGEHOG);
    size_t wb = av_distill_work(&p, n, d, cols);
    void *w = work_for(wb);
    const double W0[4] = {1, 0, 0, 1};
    double W[4], mom[8], mom0[8] = {0}, loss[2];
    /* lr 1e308 from zero moments at t0 = 10⁶: the first update overflows; W and the moments stay */
    memcpy(W, W0, sizeof W);
    memcpy(mom, mom0, sizeof mom);
    int st = av_distill(W, mom, 1000000, loss, 1, 1e308, cols, Q, K, n, d, &p, w, wb);
    ck_assert_int_eq(st, AV_WARN_PRODUCT_OVERFLOW);
    ck_assert(memcmp(W, W0, sizeof W) == 0 && memcmp(mom, mom0, sizeof mom) == 0);
    ck_assert(isfinite(loss[0]));
    /* the same for a later step: the steps before it are kept, the rest of loss[] is NaN */
    memcpy(W, W0, sizeof W);
    double l3[3];
    st = av_distill(W, mom, 0, l3, 3, 1e308, cols, Q, K, n, d, &p, w, wb);
    ck_assert_int_ge(st, AV_WARN_OVERFLOW);
    for (int e = 0; e < 4; e++) ck_assert(isfinite(W[e]));
    for (int e = 0; e < 8; e++) ck_assert(isfinite(mom[e]));
    /* NaN, Inf or negative caller-supplied moments, t0 + steps past INT_MAX: refused, nothing written */
    const double badm[] = {NAN, INFINITY, -1};
    const int where[] = {1, 6, 5}; /* a first moment, a second moment, a second moment */
    const int want[] = {AV_ERR_NONFINITE, AV_ERR_NONFINITE, AV_ERR_KNOB};
    for (int k = 0; k < 3; k++) {
        memcpy(W, W0, sizeof W);
        memcpy(mom, mom0, sizeof mom);
        mom[where[k]] = badm[k];
        loss[0] = 7;
        ck_assert_int_eq(av_distill(W, mom, 5, loss, 1, 0.02, cols, Q, K, n, d, &p, w, wb), want[k]);
        ck_assert(memcmp(W, W0, sizeof W) == 0 && loss[0] == 7);
        ck_assert(mom[where[k]] == badm[k] || isnan(badm[k]));
    }
    mom[5] = 0; /* a negative first moment is a legal state */
    mom[1] = -1;
    ck_assert_int_eq(av_distill(W, mom, 5, loss, 1, 0.02, cols, Q, K, n, d, &p, w, wb), AV_OK);
    memcpy(W, W0, sizeof W);
    memcpy(mom, mom0, sizeof mom);
    ck_assert_int_eq(av_distill(W, mom, INT_MAX, loss, 1, 0.02, cols, Q, K, n, d, &p, w, wb), AV_ERR_KNOB);
    ck_assert_int_eq(av_distill(W, mom, INT_MAX - 5, loss, 6, 0.02, cols, Q, K, n, d, &p, w, wb), AV_ERR_KNOB);
    ck_assert(memcmp(W, W0, sizeof W) == 0);
    ck_assert_int_eq(av_distill(W, mom, INT_MAX - 1, loss, 1, 0.02, cols, Q, K, n, d, &p, w, wb), AV_OK);
    ck_assert(memcmp(W, W0, sizeof W) != 0); /* the last representable step is taken */
    free(w);
}
END_TEST

/* A target softmax that is not finite (a huge scale): no step, loss[] all NaN (it was left unwritten), W and
 * the moments untouched, and the status av_matrix gives that target (it was always AV_WARN_OVERFLOW). */
START_TEST(test_distill_target_overflow) {
    int n = 4, d = 2, cols = 2;
    float Q[8], K[8];
    tu_fill_normal(Q, 8, 0, 1, 51);
    tu_fill_normal(K, 8, 0, 1, 52);
    av_params p, ps;
    av_params_default(&p, AV_HEDGEHOG);
    p.scale = 1e300;
    av_params_default(&ps, AV_SOFTMAX);
    ps.scale = 1e300;
    float A[16];
    size_t mb = av_matrix_work(&ps, n, d);
    void *mw = work_for(mb);
    int target = av_matrix(A, Q, K, n, d, &ps, mw, mb);
    ck_assert_int_gt(target, AV_OK);
    size_t wb = av_distill_work(&p, n, d, cols);
    void *w = work_for(wb);
    const double W0[4] = {1, 0, 0, 1};
    double W[4], mom[8] = {1, 2, 3, 4, 5, 6, 7, 8}, loss[3] = {7, 7, 7}, g[4];
    memcpy(W, W0, sizeof W);
    ck_assert_int_eq(av_distill(W, mom, 0, loss, 3, 0.02, cols, Q, K, n, d, &p, w, wb), target);
    for (int k = 0; k < 3; k++) ck_assert(isnan(loss[k]));
    ck_assert(memcmp(W, W0, sizeof W) == 0 && mom[0] == 1 && mom[7] == 8);
    double L = 7;
    ck_assert_int_eq(av_distill_loss(&L, g, W, cols, Q, K, n, d, &p, w, wb), target);
    ck_assert(isnan(L));
    free(w);
    free(mw);
}
END_TEST

// stories260K (../shared/data/stories260K/README.md), when present: L1H3, the previous-token head

START_TEST(test_distill_text128) {
    av_npy_info qi, ki;
    float *q = tu_stories_npy("text128_q.npy", &qi), *k = tu_stories_npy("text128_k.npy", &ki);
    if (!q || !k) {
        tu_skipped("Check suite mechanisms: distillation on text128 L1H3");
        free(q); free(k);
        return;
    }
    int n = 128, d = 8, L = 1, H = 3; /* query head 3 reads KV head 1 */
    distill_claim(q + (size_t)(L * 8 + H) * n * d, k + (size_t)(L * 4 + H / 2) * n * d, n, d, 1, 300, "text128 L1H3");
    free(q); free(k);
}
END_TEST

Suite *suite_mechanisms(void) {
    Suite *s = suite_create("mechanisms");
    TCase *tc = tcase_create("mechanisms");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_stepper_rows);
    tcase_add_test(tc, test_recall_draw);
    tcase_add_test(tc, test_recall_linear_law);
    tcase_add_test(tc, test_recall_orthonormal);
    tcase_add_test(tc, test_recall_delta_beats_linear);
    tcase_add_test(tc, test_recall_softmax);
    tcase_add_test(tc, test_recall_refusals);
    tcase_add_test(tc, test_recall_overflow_reported);
    tcase_add_test(tc, test_distill_gradient);
    tcase_add_test(tc, test_distill_synthetic);
    tcase_add_test(tc, test_distill_resume);
    tcase_add_test(tc, test_distill_bad_state_and_overflow);
    tcase_add_test(tc, test_distill_target_overflow);
    tcase_add_test(tc, test_distill_text128);
    suite_add_tcase(s, tc);
    return s;
}
