/* check_swap.c: the forward pass with chosen attention and its measures (src/swap.c; docs/model.md
 * "Swapped attention"). A small model is built here in memory, so every identity runs on every clone:
 * every head kept is av_forward bit for bit at every position; softmax swapped in equals it to float
 * precision; the matrix and recurrent paths agree; a plain float64 pass written from the docs agrees with
 * elu+1 swapped in; the measures match a plain reference; every refusal writes nothing. stories260K's
 * facts run when $ATTNVIZ_SHARED holds it. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnviz.h"
#include "testutil.h"

// ----------------------------------------------------------------------------------------------------
// a small model: dim 16, hidden 24, 2 layers, 4 heads (head size 4), 2 kv heads, vocab 40, seq_len 24

enum { S_DIM = 16, S_HID = 24, S_L = 2, S_H = 4, S_KVH = 2, S_V = 40, S_SEQ = 24, S_HS = S_DIM / S_H,
       S_KVD = S_HS * S_KVH };

typedef struct smodel { float *buf; av_model m; } smodel;

static smodel small_model(uint64_t seed, double std) {
    size_t floats = (size_t)S_V * S_DIM + S_L * S_DIM + 2 * (size_t)S_L * S_DIM * S_DIM + 2 * (size_t)S_L * S_KVD * S_DIM +
                    S_L * S_DIM + 3 * (size_t)S_L * S_HID * S_DIM + S_DIM + (size_t)S_SEQ * S_HS;
    smodel s;
    s.buf = malloc(28 + 4 * floats);
    int32_t hdr[7] = {S_DIM, S_HID, S_L, S_H, S_KVH, S_V, S_SEQ};
    memcpy(s.buf, hdr, 28);
    float *w = (float *)((unsigned char *)s.buf + 28);
    tu_fill_normal(w, floats, 0.0, std, seed);
    /* the norm weights near 1: rms_att after the embedding, rms_ffn after wq wk wv wo, rms_final last */
    float *rms_att = w + (size_t)S_V * S_DIM;
    float *rms_ffn = rms_att + S_L * S_DIM + 2 * (size_t)S_L * S_DIM * S_DIM + 2 * (size_t)S_L * S_KVD * S_DIM;
    float *rms_final = rms_ffn + S_L * S_DIM + 3 * (size_t)S_L * S_HID * S_DIM;
    for (int i = 0; i < S_L * S_DIM; i++) rms_att[i] = 1.0f + 0.03f * (i % 7), rms_ffn[i] = 1.0f - 0.02f * (i % 5);
    for (int i = 0; i < S_DIM; i++) rms_final[i] = 1.0f;
    ck_assert_int_eq(av_model_parse(&s.m, s.buf, 28 + 4 * floats), AV_OK);
    return s;
}

static void some_ids(int *ids, int n, uint64_t seed) {
    av_rng r;
    av_rng_seed(&r, seed);
    ids[0] = 1;
    for (int t = 1; t < n; t++) ids[t] = 3 + (int)(av_rng_uniform(&r) * (S_V - 3));
}

/* The swapped pass into fresh buffers (logits n×vocab; Q, K, V when asked). */
static int swapped(float *logits, float *Q, float *K, float *V, const av_model *m, const int *ids, int n,
                   const av_params *const *heads, int path) {
    size_t wb = av_forward_swapped_work(m, n, heads, path);
    ck_assert_msg(wb > 0, "work 0 for n %d", n);
    void *w = malloc(wb);
    int bad = 99;
    int st = av_forward_swapped(logits, Q, K, V, m, ids, n, heads, path, &bad, w, wb);
    ck_assert_int_eq(bad, -1);
    free(w);
    return st;
}

static av_params causal_params(int variant) {
    av_params p;
    av_params_default(&p, variant);
    p.causal = 1;
    return p;
}

// ----------------------------------------------------------------------------------------------------
// every head kept: av_forward at every position, bit for bit

START_TEST(test_kept_heads_are_av_forward) {
    smodel s = small_model(7, 0.4);
    const av_model *m = &s.m;
    int ids[S_SEQ];
    some_ids(ids, S_SEQ, 3);
    const int T = S_SEQ;
    float *lg = malloc(sizeof(float) * T * S_V), *one = malloc(sizeof(float) * S_V);
    size_t qn = (size_t)S_L * S_H * T * S_HS, kn = (size_t)S_L * S_KVH * T * S_HS;
    float *Q = malloc(4 * qn), *K = malloc(4 * kn), *V = malloc(4 * kn);
    float *Q0 = malloc(4 * qn), *K0 = malloc(4 * kn), *V0 = malloc(4 * kn);
    const av_params *none[S_L * S_H] = {0};
    size_t fb = av_forward_work(m);
    void *fw = malloc(fb);
    for (int path = 0; path <= 1; path++)
        for (int with_array = 0; with_array <= 1; with_array++) {
            ck_assert_int_eq(swapped(lg, Q, K, V, m, ids, T, with_array ? none : NULL, path), AV_OK);
            for (int n = 1; n <= T; n++) {
                ck_assert_int_eq(av_forward(NULL, NULL, NULL, one, m, ids, 0, n, fw, fb), AV_OK);
                ck_assert_msg(memcmp(one, lg + (size_t)(n - 1) * S_V, sizeof(float) * S_V) == 0,
                              "logits at position %d differ from av_forward's", n - 1);
            }
            ck_assert_int_eq(av_forward(Q0, K0, V0, NULL, m, ids, 0, T, fw, fb), AV_OK);
            ck_assert(memcmp(Q, Q0, 4 * qn) == 0 && memcmp(K, K0, 4 * kn) == 0 && memcmp(V, V0, 4 * kn) == 0);
        }
    /* a shorter text: its own pass, again bit for bit */
    ck_assert_int_eq(swapped(lg, NULL, NULL, NULL, m, ids, 5, NULL, AV_SWAP_MATRIX), AV_OK);
    ck_assert_int_eq(av_forward(NULL, NULL, NULL, one, m, ids, 0, 5, fw, fb), AV_OK);
    ck_assert(memcmp(one, lg + 4 * S_V, sizeof(float) * S_V) == 0);
    free(lg); free(one); free(Q); free(K); free(V); free(Q0); free(K0); free(V0); free(fw); free(s.buf);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// softmax swapped in: the kept heads to float precision; the two paths agree

START_TEST(test_softmax_swapped_equals_kept) {
    smodel s = small_model(11, 0.4);
    int ids[S_SEQ];
    some_ids(ids, S_SEQ, 5);
    av_params sm = causal_params(AV_SOFTMAX);
    const av_params *all[S_L * S_H];
    for (int i = 0; i < S_L * S_H; i++) all[i] = &sm;
    float *lo = malloc(sizeof(float) * S_SEQ * S_V), *ls = malloc(sizeof(float) * S_SEQ * S_V);
    ck_assert_int_eq(swapped(lo, NULL, NULL, NULL, &s.m, ids, S_SEQ, NULL, AV_SWAP_MATRIX), AV_OK);
    for (int path = 0; path <= 1; path++) {
        ck_assert_int_eq(swapped(ls, NULL, NULL, NULL, &s.m, ids, S_SEQ, all, path), AV_OK);
        double d = tu_max_abs_diff(lo, ls, (size_t)S_SEQ * S_V);
        fprintf(stderr, "swap: softmax swapped in (%s) vs kept: max |Δ logit| %.3g\n", path ? "recurrent" : "matrix", d);
        ck_assert_msg(d < 1e-5, "path %d: %g", path, d);
    }
    free(lo); free(ls); free(s.buf);
}
END_TEST

START_TEST(test_matrix_and_recurrent_agree) {
    smodel s = small_model(13, 0.4);
    int ids[S_SEQ];
    some_ids(ids, S_SEQ, 9);
    float W[S_HS * 6];
    tu_fill_normal(W, S_HS * 6, 0.0, 0.5, 21);
    av_params ps[5];
    ps[0] = causal_params(AV_ELU);
    ps[1] = causal_params(AV_PERFORMER);
    ps[1].seed = 1234;
    ps[1].m = 32;
    ps[2] = causal_params(AV_HEDGEHOG);
    av_params_set_hedgehog(&ps[2], W, 6);
    ps[3] = causal_params(AV_RETENTION);
    ps[4] = causal_params(AV_SIMPLE_GLA);
    ps[4].decay = 0.9; /* the constant gate g = ln 0.9 */
    const char *names[5] = {"elu", "performer", "hedgehog", "retention", "simple_gla"};
    float *a = malloc(sizeof(float) * S_SEQ * S_V), *b = malloc(sizeof(float) * S_SEQ * S_V);
    double worst = 0;
    for (int v = 0; v < 5; v++) {
        const av_params *all[S_L * S_H];
        for (int i = 0; i < S_L * S_H; i++) all[i] = &ps[v];
        ck_assert_int_eq(swapped(a, NULL, NULL, NULL, &s.m, ids, S_SEQ, all, AV_SWAP_MATRIX), AV_OK);
        ck_assert_int_eq(swapped(b, NULL, NULL, NULL, &s.m, ids, S_SEQ, all, AV_SWAP_RECURRENT), AV_OK);
        double d = tu_max_abs_diff(a, b, (size_t)S_SEQ * S_V);
        fprintf(stderr, "swap: %s matrix vs recurrent: max |Δ logit| %.3g\n", names[v], d);
        ck_assert_msg(d < 1e-5, "%s: %g", names[v], d);
        worst = d > worst ? d : worst;
    }
    fprintf(stderr, "swap: matrix vs recurrent, worst over the five: %.3g\n", worst);
    free(a); free(b); free(s.buf);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// a plain float64 pass from docs/model.md, with elu+1 (ε 1e-6) in the chosen heads

static void ref_rmsnorm(double *o, const double *x, const float *w, int n) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    double r = 1 / sqrt(ss / n + 1e-5);
    for (int i = 0; i < n; i++) o[i] = w[i] * x[i] * r;
}
static void ref_mv(double *o, const float *W, const double *x, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        o[r] = 0;
        for (int c = 0; c < cols; c++) o[r] += (double)W[(size_t)r * cols + c] * x[c];
    }
}
static double elu1(double x) { return x > 0 ? x + 1 : exp(x); }

/* logits [n][vocab] of the model with heads swap[l·H + h] = 1 replaced by causal elu+1 attention. */
static void ref_pass(double *logits, const av_model *m, const int *ids, int n, const int *swap) {
    const int D = m->dim, HD = m->hidden_dim, hs = m->head_size, kvd = m->kv_dim, H = m->n_heads;
    double *x = calloc((size_t)n * D, 8), *q = calloc((size_t)n * D, 8), *k = calloc((size_t)n * kvd, 8),
           *v = calloc((size_t)n * kvd, 8), *o = calloc((size_t)n * D, 8), xb[64], t1[64], t2[64], h1[64], h2[64];
    for (int t = 0; t < n; t++)
        for (int i = 0; i < D; i++) x[t * D + i] = m->tok_emb[(size_t)ids[t] * D + i];
    for (int l = 0; l < m->n_layers; l++) {
        for (int t = 0; t < n; t++) {
            ref_rmsnorm(xb, x + t * D, m->rms_att + l * D, D);
            ref_mv(q + t * D, m->wq + (size_t)l * D * D, xb, D, D);
            ref_mv(k + t * kvd, m->wk + (size_t)l * kvd * D, xb, kvd, D);
            ref_mv(v + t * kvd, m->wv + (size_t)l * kvd * D, xb, kvd, D);
            for (int pass = 0; pass < 2; pass++) {
                double *vec = pass ? k + t * kvd : q + t * D;
                for (int j = 0; j < (pass ? kvd : D); j += 2) {
                    double a = t * pow(10000.0, -(double)(j % hs) / hs), c = cos(a), sn = sin(a);
                    double x0 = vec[j], x1 = vec[j + 1];
                    vec[j] = x0 * c - x1 * sn, vec[j + 1] = x0 * sn + x1 * c;
                }
            }
        }
        for (int h = 0; h < H; h++) {
            int g = h / (H / m->n_kv_heads);
            for (int t = 0; t < n; t++) {
                double w[64], sum = 0;
                for (int j = 0; j <= t; j++) {
                    double dot = 0;
                    for (int i = 0; i < hs; i++) {
                        double qi = q[t * D + h * hs + i], ki = k[j * kvd + g * hs + i];
                        dot += swap[l * H + h] ? elu1(qi) * elu1(ki) : qi * ki;
                    }
                    w[j] = swap[l * H + h] ? dot : exp(dot / sqrt((double)hs));
                    sum += w[j];
                }
                if (swap[l * H + h]) sum += 1e-6;
                for (int i = 0; i < hs; i++) {
                    double acc = 0;
                    for (int j = 0; j <= t; j++) acc += w[j] / sum * v[j * kvd + g * hs + i];
                    o[t * D + h * hs + i] = acc;
                }
            }
        }
        for (int t = 0; t < n; t++) {
            ref_mv(t1, m->wo + (size_t)l * D * D, o + t * D, D, D);
            for (int i = 0; i < D; i++) x[t * D + i] += t1[i];
            ref_rmsnorm(xb, x + t * D, m->rms_ffn + l * D, D);
            ref_mv(h1, m->w1 + (size_t)l * HD * D, xb, HD, D);
            ref_mv(h2, m->w3 + (size_t)l * HD * D, xb, HD, D);
            for (int i = 0; i < HD; i++) h1[i] = h1[i] / (1 + exp(-h1[i])) * h2[i];
            ref_mv(t2, m->w2 + (size_t)l * D * HD, h1, D, HD);
            for (int i = 0; i < D; i++) x[t * D + i] += t2[i];
        }
    }
    for (int t = 0; t < n; t++) {
        ref_rmsnorm(xb, x + t * D, m->rms_final, D);
        ref_mv(logits + (size_t)t * m->vocab_size, m->wcls, xb, m->vocab_size, D);
    }
    free(x); free(q); free(k); free(v); free(o);
}

START_TEST(test_plain_float64_reference) {
    smodel s = small_model(17, 0.4);
    int ids[S_SEQ];
    some_ids(ids, S_SEQ, 2);
    av_params elu = causal_params(AV_ELU);
    int pick[S_L * S_H] = {1, 0, 0, 1, 0, 1, 1, 0}; /* heads of both kv groups, both layers */
    const av_params *heads[S_L * S_H];
    for (int i = 0; i < S_L * S_H; i++) heads[i] = pick[i] ? &elu : NULL;
    double *ref = malloc(sizeof(double) * S_SEQ * S_V);
    float *lg = malloc(sizeof(float) * S_SEQ * S_V);
    for (int path = 0; path <= 1; path++) {
        ref_pass(ref, &s.m, ids, S_SEQ, pick);
        ck_assert_int_eq(swapped(lg, NULL, NULL, NULL, &s.m, ids, S_SEQ, heads, path), AV_OK);
        double d = tu_max_abs_diff_d(lg, ref, (size_t)S_SEQ * S_V);
        fprintf(stderr, "swap: elu+1 in 4 of 8 heads (%s) vs the float64 reference: max |Δ logit| %.3g\n",
                path ? "recurrent" : "matrix", d);
        ck_assert_msg(d < 1e-5, "%g", d);
        /* and the same reference with no head swapped: the original */
        int none[S_L * S_H] = {0};
        ref_pass(ref, &s.m, ids, S_SEQ, none);
        ck_assert_int_eq(swapped(lg, NULL, NULL, NULL, &s.m, ids, S_SEQ, NULL, path), AV_OK);
        ck_assert_double_le(tu_max_abs_diff_d(lg, ref, (size_t)S_SEQ * S_V), 1e-4);
    }
    /* the swap changes the logits: the test could fail */
    float *lo = malloc(sizeof(float) * S_SEQ * S_V);
    ck_assert_int_eq(swapped(lo, NULL, NULL, NULL, &s.m, ids, S_SEQ, NULL, 0), AV_OK);
    ck_assert_int_eq(swapped(lg, NULL, NULL, NULL, &s.m, ids, S_SEQ, heads, 0), AV_OK);
    ck_assert_double_gt(tu_max_abs_diff(lo, lg, (size_t)S_SEQ * S_V), 1e-2);
    free(ref); free(lg); free(lo); free(s.buf);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// the measures against a plain reference

static void ref_measures(double *mean, double *lss, double *lso, double *kls, int *agr, const float *lo,
                         const float *ls, const int *ids, int n, int V) {
    double sums[4] = {0};
    for (int t = 0; t + 1 < n; t++) {
        double po[64], ps[64], zo = 0, zs = 0;
        for (int v = 0; v < V; v++) zo += exp(lo[t * V + v]), zs += exp(ls[t * V + v]);
        int ao = 0, as = 0;
        for (int v = 0; v < V; v++) {
            po[v] = exp(lo[t * V + v]) / zo, ps[v] = exp(ls[t * V + v]) / zs;
            if (lo[t * V + v] > lo[t * V + ao]) ao = v;
            if (ls[t * V + v] > ls[t * V + as]) as = v;
        }
        double kl = 0;
        for (int v = 0; v < V; v++) kl += po[v] * log(po[v] / ps[v]);
        lss[t] = -log(ps[ids[t + 1]]), lso[t] = -log(po[ids[t + 1]]), kls[t] = kl, agr[t] = ao == as;
        sums[0] += lss[t], sums[1] += lso[t], sums[2] += kl, sums[3] += agr[t];
    }
    for (int i = 0; i < 4; i++) mean[i] = sums[i] / (n - 1);
    mean[4] = exp(mean[0]);
}

START_TEST(test_measures) {
    enum { N = 5, V = 6 };
    const float lo[N * V] = {1, 2, 3, 0, -1, 0.5f,  0, 0, 0, 0, 0, 0,  5, 1, 1, 1, 1, 1,  -2, 3, 3, 0, 1, 2,  9, 9, 9, 9, 9, 9};
    const float ls[N * V] = {1, 2, 2.5f, 0.3f, -1, 0.5f,  0, 0, 0, 0, 0, 0,  1, 5, 1, 1, 1, 1,  -2, 3, 3, 0, 1, 2,  0, 0, 0, 0, 0, 0};
    const int ids[N] = {1, 2, 0, 1, 4};
    double mean[5], l1[N], l2[N], kl[N], rm[5], r1[N], r2[N], rk[N];
    int ag[N], ra[N];
    ck_assert_int_eq(av_next_token_measures(mean, l1, l2, kl, ag, lo, ls, ids, N, V), AV_OK);
    ref_measures(rm, r1, r2, rk, ra, lo, ls, ids, N, V);
    for (int i = 0; i < 5; i++) ck_assert_double_eq_tol(mean[i], rm[i], 1e-12);
    for (int t = 0; t < N - 1; t++) {
        ck_assert_double_eq_tol(l1[t], r1[t], 1e-12);
        ck_assert_double_eq_tol(l2[t], r2[t], 1e-12);
        ck_assert_double_eq_tol(kl[t], rk[t], 1e-12);
        ck_assert_int_eq(ag[t], ra[t]);
        ck_assert(kl[t] >= 0);
    }
    /* equal rows: KL exactly 0, agreement 1 (rows 1 and 3: row 3 ties ids 1 and 2, the first taken); row 2 differs */
    ck_assert(kl[1] == 0 && kl[3] == 0 && ag[1] == 1 && ag[3] == 1);
    ck_assert_int_eq(ag[2], 0);
    ck_assert_double_eq_tol(l1[1], log(6.0), 1e-12); /* uniform over 6 */
    /* the same logits: loss = loss_original, KL 0, agreement 1, perplexity exp(loss) */
    ck_assert_int_eq(av_next_token_measures(mean, NULL, NULL, NULL, NULL, lo, lo, ids, N, V), AV_OK);
    ck_assert(mean[0] == mean[1] && mean[2] == 0 && mean[3] == 1 && mean[4] == exp(mean[0]));
    /* a probability that underflows in float64 still gives a finite loss: logits 0 and −2000 */
    float big_o[2 * 2] = {0, -2000, 0, 0}, big_s[2 * 2] = {-2000, 0, 0, 0};
    int ids2[2] = {0, 1};
    ck_assert_int_eq(av_next_token_measures(mean, l1, l2, kl, ag, big_o, big_s, ids2, 2, 2), AV_OK);
    ck_assert_double_eq_tol(l1[0], 0, 1e-12);
    ck_assert_double_eq_tol(l2[0], 2000, 1e-9);
    ck_assert_double_eq_tol(kl[0], 2000, 1e-9);
    /* refusals: nothing written */
    double sent[5] = {-7, -7, -7, -7, -7};
    int bad_ids[N] = {1, 2, 6, 1, 4};
    float nan_lo[N * V];
    memcpy(nan_lo, lo, sizeof lo);
    nan_lo[7] = NAN;
    ck_assert_int_eq(av_next_token_measures(sent, l1, l2, kl, ag, lo, ls, bad_ids, N, V), AV_ERR_SIZE);
    ck_assert_int_eq(av_next_token_measures(sent, l1, l2, kl, ag, lo, ls, ids, 1, V), AV_ERR_SIZE);
    ck_assert_int_eq(av_next_token_measures(sent, l1, l2, kl, ag, lo, ls, ids, N, 0), AV_ERR_SIZE);
    ck_assert_int_eq(av_next_token_measures(sent, l1, l2, kl, ag, nan_lo, ls, ids, N, V), AV_ERR_NONFINITE);
    ck_assert_int_eq(av_next_token_measures(sent, l1, l2, kl, ag, ls, nan_lo, ids, N, V), AV_ERR_NONFINITE);
    ck_assert_int_eq(av_next_token_measures(NULL, l1, l2, kl, ag, lo, ls, ids, N, V), AV_ERR_NULL);
    ck_assert_int_eq(av_next_token_measures(sent, l1, l2, kl, ag, NULL, ls, ids, N, V), AV_ERR_NULL);
    for (int i = 0; i < 5; i++) ck_assert(sent[i] == -7);
    /* the last row is not read: NaN there is no error */
    nan_lo[7] = lo[7];
    nan_lo[(N - 1) * V] = NAN;
    ck_assert_int_eq(av_next_token_measures(sent, NULL, NULL, NULL, NULL, nan_lo, ls, ids, N, V), AV_OK);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// refusals: one clear status, the refused head named, nothing written

#define SENT 12345.0f
static void fill_sent(float *x, size_t count) {
    for (size_t i = 0; i < count; i++) x[i] = SENT;
}
static int all_sent(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (x[i] != SENT) return 0;
    return 1;
}

START_TEST(test_refusals_write_nothing) {
    smodel s = small_model(19, 0.4);
    const av_model *m = &s.m;
    int ids[S_SEQ];
    some_ids(ids, S_SEQ, 4);
    const int n = 10;
    size_t ln = (size_t)n * S_V, qn = (size_t)S_L * S_H * n * S_HS, kn = (size_t)S_L * S_KVH * n * S_HS;
    float *lg = malloc(4 * ln), *Q = malloc(4 * qn), *K = malloc(4 * kn), *V = malloc(4 * kn);
    av_params elu = causal_params(AV_ELU), noncausal, knob = causal_params(AV_PERFORMER), lin, ex = causal_params(AV_EXPLIMIT),
              hh = causal_params(AV_HEDGEHOG), gl = causal_params(AV_SIMPLE_GLA);
    av_params_default(&noncausal, AV_ELU);
    knob.m = -3;
    av_params_default(&lin, AV_LINFORMER);
    lin.causal = 1;
    ex.N = 8; /* (d + 1)^N = 5^8 features: above the cap on the recurrent path; the matrix path's closed form has none */
    float Wnan[S_HS * S_HS];
    tu_fill_normal(Wnan, S_HS * S_HS, 0, 1, 3);
    Wnan[5] = NAN;
    av_params_set_hedgehog(&hh, Wnan, S_HS);
    float gates[S_SEQ];
    for (int t = 0; t < S_SEQ; t++) gates[t] = -0.1f;
    av_params_set_gates(&gl, gates, n + 1, 1, NULL); /* set for another length */
    struct { const av_params *p; int at, path, want; } cases[] = {
        {&knob, 3, AV_SWAP_MATRIX, AV_ERR_KNOB},
        {&noncausal, 6, AV_SWAP_MATRIX, AV_ERR_NEEDS_CAUSAL},
        {&lin, 1, AV_SWAP_RECURRENT, AV_ERR_NO_CAUSAL},
        {&ex, 7, AV_SWAP_RECURRENT, AV_ERR_FEATURE_DIM},
        {&hh, 2, AV_SWAP_MATRIX, AV_ERR_NONFINITE},
        {&gl, 4, AV_SWAP_RECURRENT, AV_ERR_GATES},
    };
    size_t wb_ok;
    {
        const av_params *all[S_L * S_H];
        for (int i = 0; i < S_L * S_H; i++) all[i] = &elu;
        wb_ok = av_forward_swapped_work(m, n, all, AV_SWAP_MATRIX) + 4096;
    }
    void *w = malloc(wb_ok);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const av_params *heads[S_L * S_H];
        for (int i = 0; i < S_L * S_H; i++) heads[i] = i == 0 ? &elu : NULL;
        heads[cases[c].at] = cases[c].p;
        fill_sent(lg, ln), fill_sent(Q, qn), fill_sent(K, kn), fill_sent(V, kn);
        int bad = 99;
        ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, m, ids, n, heads, cases[c].path, &bad, w, wb_ok), cases[c].want);
        ck_assert_int_eq(bad, cases[c].at);
        ck_assert_uint_eq(av_forward_swapped_work(m, n, heads, cases[c].path), 0);
        ck_assert(all_sent(lg, ln) && all_sent(Q, qn) && all_sent(K, kn) && all_sent(V, kn));
    }
    /* explimit N = 8 is fine on the matrix path */
    {
        const av_params *heads[S_L * S_H] = {0};
        heads[7] = &ex;
        ck_assert_uint_gt(av_forward_swapped_work(m, n, heads, AV_SWAP_MATRIX), 0);
    }
    /* the arguments: n, ids, path, workspace, NULL */
    const av_params *heads[S_L * S_H] = {&elu};
    size_t need = av_forward_swapped_work(m, n, heads, AV_SWAP_MATRIX);
    int bad_ids[S_SEQ];
    memcpy(bad_ids, ids, sizeof ids);
    bad_ids[4] = S_V;
    fill_sent(lg, ln), fill_sent(Q, qn), fill_sent(K, kn), fill_sent(V, kn);
    int bad = 99;
    ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, m, ids, 0, heads, 0, &bad, w, wb_ok), AV_ERR_SIZE);
    ck_assert_int_eq(bad, -1);
    ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, m, ids, S_SEQ + 1, heads, 0, &bad, w, wb_ok), AV_ERR_SIZE);
    ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, m, bad_ids, n, heads, 0, &bad, w, wb_ok), AV_ERR_SIZE);
    bad_ids[4] = -1;
    ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, m, bad_ids, n, heads, 0, &bad, w, wb_ok), AV_ERR_SIZE);
    ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, m, ids, n, heads, 2, &bad, w, wb_ok), AV_ERR_VARIANT);
    ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, m, ids, n, heads, 0, &bad, w, need - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, m, ids, n, heads, 0, NULL, NULL, need), AV_ERR_NULL);
    ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, NULL, ids, n, heads, 0, NULL, w, need), AV_ERR_NULL);
    ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, m, NULL, n, heads, 0, NULL, w, need), AV_ERR_NULL);
    ck_assert_uint_eq(av_forward_swapped_work(m, 0, heads, 0), 0);
    ck_assert_uint_eq(av_forward_swapped_work(m, S_SEQ + 1, heads, 0), 0);
    ck_assert_uint_eq(av_forward_swapped_work(NULL, n, heads, 0), 0);
    ck_assert(all_sent(lg, ln) && all_sent(Q, qn) && all_sent(K, kn) && all_sent(V, kn));
    /* the workspace it asked for is enough, anywhere in memory (an unaligned start) */
    ck_assert_int_eq(av_forward_swapped(lg, Q, K, V, m, ids, n, heads, 0, &bad, (char *)w + 8, need), AV_OK);
    ck_assert(!all_sent(lg, ln));
    free(lg); free(Q); free(K); free(V); free(w); free(s.buf);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// the greedy continuation

/* av_forward's incremental greedy loop, as attnviz generate-text runs it. */
static int greedy_reference(int *out, const av_model *m, const int *prompt, int n, int steps) {
    size_t wb = av_forward_work(m);
    void *w = malloc(wb);
    float lg[S_V];
    memcpy(out, prompt, sizeof(int) * (size_t)n);
    int total = n + steps > m->seq_len ? m->seq_len : n + steps;
    ck_assert_int_eq(av_forward(NULL, NULL, NULL, lg, m, out, 0, n, w, wb), AV_OK);
    while (n < total) {
        int best = 0;
        for (int v = 1; v < m->vocab_size; v++)
            if (lg[v] > lg[best]) best = v;
        if (best == 1) break;
        out[n++] = best;
        if (n < total) ck_assert_int_eq(av_forward(NULL, NULL, NULL, lg, m, out, n - 1, n, w, wb), AV_OK);
    }
    free(w);
    return n;
}

static int continue_swapped(int *out, const av_model *m, const int *prompt, int n, int steps,
                            const av_params *const *heads, int path, int *status) {
    size_t wb = av_continue_swapped_work(m, n + steps, heads, path);
    ck_assert_uint_gt(wb, 0);
    void *w = malloc(wb);
    int n_out = -1;
    *status = av_continue_swapped(out, &n_out, m, prompt, n, steps, heads, path, NULL, w, wb);
    free(w);
    return n_out;
}

START_TEST(test_continuation) {
    smodel s = small_model(23, 0.6);
    const av_model *m = &s.m;
    int prompt[S_SEQ], a[S_SEQ + 8], b[S_SEQ + 8], st;
    some_ids(prompt, S_SEQ, 8);
    /* every head kept: generate-text's tokens, from several prompts, up to seq_len */
    int checked = 0;
    for (int np = 1; np <= 20; np += 3)
        for (int path = 0; path <= 1; path++) {
            int nr = greedy_reference(a, m, prompt, np, 10);
            int ns = continue_swapped(b, m, prompt, np, 10, NULL, path, &st);
            ck_assert_int_eq(st, AV_OK);
            ck_assert_int_eq(ns, nr);
            ck_assert(memcmp(a, b, sizeof(int) * (size_t)nr) == 0);
            checked += nr - np;
        }
    ck_assert_int_gt(checked, 20); /* tokens were generated, not only BOS stops */
    /* every entry NULL is the original model too (the incremental path): the same tokens, steps reaching
     * seq_len, and the workspace holds av_forward's (its KV cache) whatever n_total */
    const av_params *none[S_L * S_H] = {0};
    int reached = 0;
    for (int np = 1; np <= S_SEQ; np += 5)
        for (int path = 0; path <= 1; path++) {
            int nr = greedy_reference(a, m, prompt, np, S_SEQ);
            reached += nr == S_SEQ && np < S_SEQ - 4;
            int ns = continue_swapped(b, m, prompt, np, S_SEQ, none, path, &st);
            ck_assert_int_eq(st, AV_OK);
            ck_assert_int_eq(ns, nr);
            ck_assert(memcmp(a, b, sizeof(int) * (size_t)nr) == 0);
        }
    ck_assert_int_gt(reached, 0); /* a continuation ran to seq_len, not only BOS stops */
    for (int total = 2; total <= S_SEQ + 4; total++) {
        ck_assert_uint_ge(av_continue_swapped_work(m, total, NULL, 0), av_forward_work(m));
        ck_assert_uint_ge(av_continue_swapped_work(m, total, none, 1), av_forward_work(m));
    }
    /* elu everywhere: each token the argmax of the last row of av_forward_swapped over the text so far */
    av_params elu = causal_params(AV_ELU);
    const av_params *all[S_L * S_H];
    for (int i = 0; i < S_L * S_H; i++) all[i] = &elu;
    for (int path = 0; path <= 1; path++) {
        int ns = continue_swapped(b, m, prompt, 4, 12, all, path, &st);
        ck_assert_int_eq(st, AV_OK);
        int n = 4;
        memcpy(a, prompt, 4 * sizeof(int));
        float *lg = malloc(sizeof(float) * S_SEQ * S_V);
        while (n < 16) {
            ck_assert_int_eq(swapped(lg, NULL, NULL, NULL, m, a, n, all, path), AV_OK);
            int best = 0;
            for (int v = 1; v < S_V; v++)
                if (lg[(size_t)(n - 1) * S_V + v] > lg[(size_t)(n - 1) * S_V + best]) best = v;
            if (best == 1) break;
            a[n++] = best;
        }
        ck_assert_int_eq(ns, n);
        ck_assert(memcmp(a, b, sizeof(int) * (size_t)n) == 0);
        free(lg);
    }
    /* steps 0, and a prompt at seq_len: the prompt alone */
    ck_assert_int_eq(continue_swapped(b, m, prompt, 5, 0, all, 0, &st), 5);
    ck_assert_int_eq(continue_swapped(b, m, prompt, S_SEQ, 5, all, 0, &st), S_SEQ);
    /* refusals before anything is written: gates set for the prompt's length only (the next pass is longer) */
    av_params gl = causal_params(AV_SIMPLE_GLA);
    float gates[6] = {-0.1f, -0.1f, -0.1f, -0.1f, -0.1f, -0.1f};
    av_params_set_gates(&gl, gates, 6, 1, NULL);
    const av_params *one[S_L * S_H] = {0};
    one[5] = &gl;
    int sent[S_SEQ], n_out = -7, bad = 99;
    for (int i = 0; i < S_SEQ; i++) sent[i] = -7;
    size_t wb = av_continue_swapped_work(m, 12, all, 0) + 4096;
    void *w = malloc(wb);
    ck_assert_int_eq(av_continue_swapped(sent, &n_out, m, prompt, 6, 6, one, 0, &bad, w, wb), AV_ERR_GATES);
    ck_assert_int_eq(bad, 5);
    ck_assert_int_eq(av_continue_swapped(sent, &n_out, m, prompt, 6, -1, NULL, 0, &bad, w, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_continue_swapped(sent, &n_out, m, prompt, 0, 3, NULL, 0, &bad, w, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_continue_swapped(sent, &n_out, m, prompt, 6, 3, NULL, 0, &bad, w, 100), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_continue_swapped(sent, &n_out, m, prompt, 6, 3, NULL, 5, &bad, w, wb), AV_ERR_VARIANT);
    for (int i = 0; i < S_SEQ; i++) ck_assert_int_eq(sent[i], -7);
    ck_assert_int_eq(n_out, -7);
    /* with gates for exactly one length and one step, the one pass runs */
    ck_assert_int_eq(av_continue_swapped(sent, &n_out, m, prompt, 6, 1, one, 0, &bad, w, wb), AV_OK);
    ck_assert_int_ge(n_out, 6);
    free(w);
    free(s.buf);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// sensitivity: each entry is the measures of its own pass

START_TEST(test_sensitivity) {
    smodel s = small_model(29, 0.5);
    const av_model *m = &s.m;
    int ids[S_SEQ];
    some_ids(ids, S_SEQ, 12);
    const int n = 16;
    av_params elu = causal_params(AV_ELU), ret = causal_params(AV_RETENTION);
    const av_params *cand[S_L * S_H] = {&elu, &ret, NULL, NULL, NULL, &elu, NULL, NULL};
    for (int path = 0; path <= 1; path++) {
        size_t wb = av_swap_sensitivity_work(m, n, cand, path);
        ck_assert_uint_gt(wb, 0);
        void *w = malloc(wb);
        double by_layer[S_L * 3], by_head[S_L * S_H * 3];
        int bad = 99;
        ck_assert_int_eq(av_swap_sensitivity(by_layer, by_head, m, ids, n, cand, path, &bad, w, wb), AV_OK);
        ck_assert_int_eq(bad, -1);
        float *lo = malloc(sizeof(float) * n * S_V), *ls = malloc(sizeof(float) * n * S_V);
        ck_assert_int_eq(swapped(lo, NULL, NULL, NULL, m, ids, n, NULL, path), AV_OK);
        for (int l = 0; l < S_L; l++) {
            const av_params *heads[S_L * S_H] = {0};
            for (int h = 0; h < S_H; h++) heads[l * S_H + h] = cand[l * S_H + h];
            ck_assert_int_eq(swapped(ls, NULL, NULL, NULL, m, ids, n, heads, path), AV_OK);
            double mean[5];
            ck_assert_int_eq(av_next_token_measures(mean, NULL, NULL, NULL, NULL, lo, ls, ids, n, S_V), AV_OK);
            ck_assert(by_layer[l * 3] == mean[0] - mean[1] && by_layer[l * 3 + 1] == mean[2] && by_layer[l * 3 + 2] == mean[3]);
            ck_assert(mean[2] > 0); /* the swap changed something: the comparison could fail */
        }
        for (int i = 0; i < S_L * S_H; i++) {
            if (!cand[i]) {
                ck_assert(by_head[i * 3] == 0 && by_head[i * 3 + 1] == 0 && by_head[i * 3 + 2] == 1);
                continue;
            }
            const av_params *heads[S_L * S_H] = {0};
            heads[i] = cand[i];
            ck_assert_int_eq(swapped(ls, NULL, NULL, NULL, m, ids, n, heads, path), AV_OK);
            double mean[5];
            ck_assert_int_eq(av_next_token_measures(mean, NULL, NULL, NULL, NULL, lo, ls, ids, n, S_V), AV_OK);
            ck_assert(by_head[i * 3] == mean[0] - mean[1] && by_head[i * 3 + 1] == mean[2] && by_head[i * 3 + 2] == mean[3]);
        }
        /* refusals write nothing */
        double sl[S_L * 3], sh[S_L * S_H * 3];
        for (int i = 0; i < S_L * 3; i++) sl[i] = -7;
        for (int i = 0; i < S_L * S_H * 3; i++) sh[i] = -7;
        av_params nc;
        av_params_default(&nc, AV_ELU);
        const av_params *badc[S_L * S_H] = {&elu, NULL, NULL, NULL, NULL, NULL, &nc, NULL};
        ck_assert_int_eq(av_swap_sensitivity(sl, sh, m, ids, n, badc, path, &bad, w, wb), AV_ERR_NEEDS_CAUSAL);
        ck_assert_int_eq(bad, 6);
        ck_assert_int_eq(av_swap_sensitivity(sl, sh, m, ids, 1, cand, path, &bad, w, wb), AV_ERR_SIZE);
        ck_assert_int_eq(av_swap_sensitivity(sl, sh, m, ids, n, cand, path, &bad, w, wb - 1), AV_ERR_WORKSPACE);
        for (int i = 0; i < S_L * 3; i++) ck_assert(sl[i] == -7);
        for (int i = 0; i < S_L * S_H * 3; i++) ck_assert(sh[i] == -7);
        free(lo); free(ls); free(w);
    }
    free(s.buf);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// huge finite weights: the status says the logits are not finite, and the measures refuse them

START_TEST(test_overflow_status) {
    smodel s = small_model(31, 0.4);
    /* a final norm weight of 1e38 (finite): the classifier's sums leave the float range */
    for (int i = 0; i < S_DIM; i++) ((float *)s.m.rms_final)[i] = 1e38f;
    int ids[8];
    some_ids(ids, 8, 1);
    av_params elu = causal_params(AV_ELU);
    const av_params *all[S_L * S_H];
    for (int i = 0; i < S_L * S_H; i++) all[i] = &elu;
    float *lg = malloc(sizeof(float) * 8 * S_V);
    int st0 = swapped(lg, NULL, NULL, NULL, &s.m, ids, 8, NULL, 0);
    int finite0 = 1;
    for (int i = 0; i < 8 * S_V; i++) finite0 &= isfinite(lg[i]) != 0;
    ck_assert_int_eq(st0, finite0 ? AV_OK : AV_WARN_PRODUCT_OVERFLOW);
    ck_assert(!finite0); /* the case is the overflow */
    int st = swapped(lg, NULL, NULL, NULL, &s.m, ids, 8, all, 0);
    ck_assert(st == AV_WARN_PRODUCT_OVERFLOW || st == AV_WARN_OVERFLOW);
    /* the continuation stops at the first step (no argmax of Inf or NaN), kept heads (av_forward) or elu */
    for (int c = 0; c < 2; c++) {
        int out[12], cst, nc = continue_swapped(out, &s.m, ids, 8, 4, c ? all : NULL, 0, &cst);
        ck_assert_int_eq(nc, 8);
        ck_assert(cst == AV_WARN_PRODUCT_OVERFLOW || (c && cst == AV_WARN_OVERFLOW));
    }
    free(lg);
    free(s.buf);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// stories260K (when $ATTNVIZ_SHARED holds it): the README's loss, and what elu+1 everywhere costs

static unsigned char *read_shared(const char *name, size_t *len) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", tu_stories_dir(), name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s", path);
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)l + 1);
    ck_assert_uint_eq(fread(b, 1, (size_t)l, f), (size_t)l);
    b[l] = 0;
    fclose(f);
    *len = (size_t)l;
    return b;
}

START_TEST(test_stories260k) {
    struct stat sb;
    if (stat(tu_stories_dir(), &sb) != 0) {
        tu_skipped("Check suite swap: stories260K losses");
        return;
    }
    size_t ml, jl;
    unsigned char *mb = read_shared("stories260K.bin", &ml), *jb = read_shared("text128_tokens.json", &jl);
    av_model m;
    ck_assert_int_eq(av_model_parse(&m, mb, ml), AV_OK);
    int ids[128], n = 0;
    const char *p = strchr(strstr((const char *)jb, "\"ids\""), '[') + 1;
    while (n < 128 && *p != ']') {
        char *end;
        ids[n++] = (int)strtol(p, &end, 10);
        p = end + (*end == ',');
        while (*p == ' ') p++;
    }
    ck_assert_int_eq(n, 128);
    float *lo = malloc(sizeof(float) * 128 * 512), *ls = malloc(sizeof(float) * 128 * 512);
    size_t wb = av_forward_swapped_work(&m, n, NULL, 0);
    void *w = malloc(wb);
    ck_assert_int_eq(av_forward_swapped(lo, NULL, NULL, NULL, &m, ids, n, NULL, 0, NULL, w, wb), AV_OK);
    free(w);
    double mean[5];
    ck_assert_int_eq(av_next_token_measures(mean, NULL, NULL, NULL, NULL, lo, lo, ids, n, 512), AV_OK);
    ck_assert_double_eq_tol(mean[1], 1.0739, 1e-4);
    av_params elu = causal_params(AV_ELU);
    const av_params *all[40];
    for (int i = 0; i < 40; i++) all[i] = &elu;
    for (int path = 0; path <= 1; path++) {
        ck_assert_int_eq(swapped(ls, NULL, NULL, NULL, &m, ids, n, all, path), AV_OK);
        ck_assert_int_eq(av_next_token_measures(mean, NULL, NULL, NULL, NULL, lo, ls, ids, n, 512), AV_OK);
        fprintf(stderr, "swap: stories260K text128, elu+1 in all 40 heads (%s): loss %.4f (original %.4f), KL %.4f, "
                "top-1 agreement %.3f, perplexity %.2f\n", path ? "recurrent" : "matrix", mean[0], mean[1], mean[2],
                mean[3], mean[4]);
        ck_assert_double_gt(mean[0], mean[1] + 0.1);
        ck_assert_double_gt(mean[2], 0.05);
    }
    free(lo); free(ls); free(mb); free(jb);
}
END_TEST

Suite *suite_swap(void) {
    Suite *s = suite_create("swap");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_kept_heads_are_av_forward);
    tcase_add_test(tc, test_softmax_swapped_equals_kept);
    tcase_add_test(tc, test_matrix_and_recurrent_agree);
    tcase_add_test(tc, test_plain_float64_reference);
    tcase_add_test(tc, test_measures);
    tcase_add_test(tc, test_refusals_write_nothing);
    tcase_add_test(tc, test_continuation);
    tcase_add_test(tc, test_sensitivity);
    tcase_add_test(tc, test_overflow_status);
    tcase_add_test(tc, test_stories260k);
    suite_add_tcase(s, tc);
    return s;
}
