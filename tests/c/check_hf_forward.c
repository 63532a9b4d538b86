/* check_hf_forward.c: the Hugging Face architectures' forward pass (src/model.c's *_rows pieces, src/weights.c).
 * The weight products against their plain float64 twin in every dtype and layout; then one model in two
 * forms: a random llama2.c checkpoint, and the same weights as a Hugging Face Llama (q/k rows permuted for
 * rotate-half RoPE, as transformers' conversion does) in F32 and in BF16, whose Q, K, V and logits must
 * agree with llama2.c's after the permutation is undone. The independent numpy pass over every
 * architecture is tests/oracle/hf_oracle.py. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"
#include "internal.h"

static uint16_t bf16_round(float f) { /* round to nearest even (finite inputs) */
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static float bf16_value(float f) {
    uint32_t u = (uint32_t)bf16_round(f) << 16;
    float g;
    memcpy(&g, &u, 4);
    return g;
}

// ----------------------------------------------------------------------------------------------------
// the products

START_TEST(test_f16_every_pattern) {
    unsigned char b[2];
    av_weight w = {b, AV_ST_F16, 0, 1};
    for (uint32_t h = 0; h < 65536; h++) {
        b[0] = (unsigned char)(h & 255), b[1] = (unsigned char)(h >> 8);
        float got = avi_weight_at(&w, 0, 0), want = av_f16_to_f32((uint16_t)h);
        uint32_t gu, wu;
        memcpy(&gu, &got, 4), memcpy(&wu, &want, 4);
        ck_assert_msg(gu == wu, "F16 0x%04x: 0x%08x, want 0x%08x", h, gu, wu);
    }
}
END_TEST

START_TEST(test_products_against_float64) {
    av_rng r;
    av_rng_seed(&r, 7);
    const int shapes[][3] = {{1, 1, 1}, {3, 5, 1}, {4, 64, 2}, {9, 65, 33}, {17, 130, 7}, {6, 200, 32}};
    for (int s = 0; s < 6; s++)
        for (int dtype = 0; dtype < 3; dtype++)
            for (int trans = 0; trans < 2; trans++) {
                const int rows = shapes[s][0], cols = shapes[s][1], T = shapes[s][2], ld = trans ? rows + 3 : cols + 2;
                const size_t es = dtype == AV_ST_F32 ? 4 : 2, elems = (size_t)(trans ? cols : rows) * ld;
                unsigned char *buf = malloc(elems * es + 1), *p = buf + 1; /* unaligned on purpose */
                for (size_t i = 0; i < elems; i++) {
                    float f = (float)av_rng_normal(&r);
                    if (dtype == AV_ST_F32) memcpy(p + 4 * i, &f, 4);
                    else {
                        uint16_t h = dtype == AV_ST_BF16 ? bf16_round(f) : 0;
                        if (dtype == AV_ST_F16) { /* a random finite F16: sign, exponent 5..24, mantissa */
                            h = (uint16_t)((av_rng_next(&r) & 0x83ffu) | ((5 + av_rng_next(&r) % 20) << 10));
                        }
                        p[2 * i] = (unsigned char)(h & 255), p[2 * i + 1] = (unsigned char)(h >> 8);
                    }
                }
                av_weight w = {p, dtype, trans, ld};
                double *x = malloc(sizeof *x * (size_t)T * (cols + 1)), *got = malloc(sizeof *got * (size_t)T * rows),
                       *want = malloc(sizeof *want * (size_t)T * rows), *absw = malloc(sizeof *absw * (size_t)T * rows);
                for (size_t i = 0; i < (size_t)T * (cols + 1); i++) x[i] = (float)av_rng_normal(&r);
                float *scratch = malloc(sizeof *scratch * avi_wmatmul_scratch(T, cols));
                avi_wmatmul(got, (size_t)rows, &w, rows, cols, x, (size_t)cols + 1, T, scratch);
                avi_wmatmul_ref(want, (size_t)rows, &w, rows, cols, x, (size_t)cols + 1, T);
                for (int t = 0; t < T; t++)
                    for (int i = 0; i < rows; i++) {
                        double a = 0.0;
                        for (int c = 0; c < cols; c++) a += fabs(avi_weight_at(&w, i, c) * x[(size_t)t * (cols + 1) + c]);
                        double e = fabs(got[(size_t)t * rows + i] - want[(size_t)t * rows + i]);
                        /* float32 products and 64-column float32 sums: a few float32 ulps of Σ|w·x| */
                        ck_assert_msg(e <= 1e-6 * a + 1e-30, "shape %d dtype %d trans %d: row %d t %d off by %g (Σ|wx| %g)", s,
                                      dtype, trans, i, t, e, a);
                    }
                free(buf), free(x), free(got), free(want), free(absw), free(scratch);
            }
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// one model in two forms

enum { D = 64, HID = 96, L = 3, H = 4, KVH = 2, VOC = 50, SEQ = 40, HS = D / H, KVD = HS * KVH };

typedef struct twin {
    unsigned char *ckpt; /* the llama2.c file */
    size_t len;
    av_model a, b;        /* a: llama2.c; b: the Hugging Face form */
    av_weight layer[L * AV_LW_COUNT];
    unsigned char *hf;    /* the HF form's tensors */
} twin;

/* llama2.c's row order within a head (pairs 2i, 2i+1) to HF's (i, i + hs/2): HF row j of a head is
 * llama2.c's row perm(j) */
static int perm(int j) { return j < HS / 2 ? 2 * j : 2 * (j - HS / 2) + 1; }

static void put_weight(unsigned char **at, av_weight *w, const float *src, int rows, int cols, int dtype, int permute) {
    const size_t es = dtype == AV_ST_F32 ? 4 : 2;
    *w = (av_weight){*at, dtype, 0, cols};
    for (int r = 0; r < rows; r++) {
        int from = permute ? (r / HS) * HS + perm(r % HS) : r;
        for (int c = 0; c < cols; c++) {
            float f = src[(size_t)from * cols + c];
            unsigned char *p = *at + ((size_t)r * cols + c) * es;
            if (dtype == AV_ST_F32) memcpy(p, &f, 4);
            else {
                uint16_t h = bf16_round(f);
                p[0] = (unsigned char)(h & 255), p[1] = (unsigned char)(h >> 8);
            }
        }
    }
    *at += (size_t)rows * cols * es;
}

static void make_twin(twin *tw, int dtype) {
    size_t floats = (size_t)VOC * D + L * D + (size_t)L * D * D + 2 * (size_t)L * KVD * D + (size_t)L * D * D + L * D +
                    3 * (size_t)L * HID * D + D + (size_t)SEQ * HS;
    tw->len = 28 + 4 * floats;
    tw->ckpt = malloc(tw->len);
    int hdr[7] = {D, HID, L, H, KVH, VOC, SEQ};
    memcpy(tw->ckpt, hdr, sizeof hdr);
    float *w = (float *)(void *)(tw->ckpt + 28);
    av_rng r;
    av_rng_seed(&r, 35);
    for (size_t i = 0; i < floats; i++) w[i] = (float)(0.15 * av_rng_normal(&r));
    ck_assert_int_eq(av_model_parse(&tw->a, tw->ckpt, tw->len), AV_OK);
    av_model *a = &tw->a;
    /* norm weights near 1, and every weight a BF16 value when the twin is BF16 (the same numbers in both) */
    float *norms[] = {(float *)a->rms_att, (float *)a->rms_ffn, (float *)a->rms_final};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < (k < 2 ? L * D : D); i++) norms[k][i] = 1.0f + 0.5f * norms[k][i];
    if (dtype == AV_ST_BF16)
        for (size_t i = 0; i < floats; i++) w[i] = bf16_value(w[i]);
    tw->hf = malloc(4 * floats);
    unsigned char *at = tw->hf;
    tw->b = *a;
    av_model *b = &tw->b;
    b->tok_emb = b->rms_att = b->wq = b->wk = b->wv = b->wo = b->rms_ffn = b->w1 = b->w2 = b->w3 = b->rms_final = b->wcls = NULL;
    b->arch = AV_ARCH_LLAMA, b->rope_theta = 10000.0, b->norm_eps = 1e-5, b->context = SEQ;
    put_weight(&at, &b->emb, a->tok_emb, VOC, D, dtype, 0);
    b->cls = b->emb;
    put_weight(&at, &b->final_norm, a->rms_final, D, 1, dtype, 0);
    for (int l = 0; l < L; l++) {
        av_weight *lw = tw->layer + l * AV_LW_COUNT;
        memset(lw, 0, sizeof *lw * AV_LW_COUNT);
        put_weight(&at, &lw[AV_LW_ATTN_NORM], a->rms_att + (size_t)l * D, D, 1, dtype, 0);
        put_weight(&at, &lw[AV_LW_Q], a->wq + (size_t)l * D * D, D, D, dtype, 1);
        put_weight(&at, &lw[AV_LW_K], a->wk + (size_t)l * KVD * D, KVD, D, dtype, 1);
        put_weight(&at, &lw[AV_LW_V], a->wv + (size_t)l * KVD * D, KVD, D, dtype, 0);
        put_weight(&at, &lw[AV_LW_O], a->wo + (size_t)l * D * D, D, D, dtype, 0);
        put_weight(&at, &lw[AV_LW_FFN_NORM], a->rms_ffn + (size_t)l * D, D, 1, dtype, 0);
        put_weight(&at, &lw[AV_LW_GATE], a->w1 + (size_t)l * HID * D, HID, D, dtype, 0);
        put_weight(&at, &lw[AV_LW_DOWN], a->w2 + (size_t)l * D * HID, D, HID, dtype, 0);
        put_weight(&at, &lw[AV_LW_UP], a->w3 + (size_t)l * HID * D, HID, D, dtype, 0);
    }
    b->layer = tw->layer;
}

static double max_abs(const float *x, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

static void compare_twins(int dtype) {
    twin tw;
    make_twin(&tw, dtype);
    const int n = 37; /* two blocks of positions */
    int ids[n];
    for (int t = 0; t < n; t++) ids[t] = (t * 17 + 3) % VOC;
    size_t qn = (size_t)L * H * n * HS, kn = (size_t)L * KVH * n * HS;
    float *Q[2], *K[2], *Vv[2], *lg[2];
    for (int s = 0; s < 2; s++) {
        Q[s] = calloc(qn, 4), K[s] = calloc(kn, 4), Vv[s] = calloc(kn, 4), lg[s] = calloc(VOC, 4);
        const av_model *m = s ? &tw.b : &tw.a;
        size_t wb = av_forward_work(m);
        ck_assert_uint_gt(wb, 0);
        void *work = malloc(wb);
        ck_assert_int_eq(av_forward(Q[s], K[s], Vv[s], lg[s], m, ids, 0, n, work, wb), AV_OK);
        if (s) { /* incrementally: 20 positions, then the rest on the cache: the same rows and logits, bit for bit */
            float *q2 = calloc(qn, 4), *l2 = calloc(VOC, 4);
            ck_assert_int_eq(av_forward(NULL, NULL, NULL, NULL, m, ids, 0, 20, work, wb), AV_OK);
            ck_assert_int_eq(av_forward(q2, NULL, NULL, l2, m, ids, 20, n, work, wb), AV_OK);
            for (size_t blk = 0; blk < (size_t)L * H; blk++)
                ck_assert_int_eq(memcmp(q2 + (blk * n + 20) * HS, Q[s] + (blk * n + 20) * HS, 4 * (size_t)(n - 20) * HS), 0);
            ck_assert_int_eq(memcmp(l2, lg[s], 4 * VOC), 0);
            free(q2), free(l2);
        }
        free(work);
    }
    /* HF's Q row j of a head is llama2.c's row perm(j); V and the logits are in the same order */
    double eq = 0, ek = 0, ev = 0, el = 0;
    for (size_t blk = 0; blk < (size_t)L * H * n; blk++)
        for (int j = 0; j < HS; j++) eq = fmax(eq, fabs(Q[1][blk * HS + j] - Q[0][blk * HS + perm(j)]));
    for (size_t blk = 0; blk < (size_t)L * KVH * n; blk++)
        for (int j = 0; j < HS; j++) {
            ek = fmax(ek, fabs(K[1][blk * HS + j] - K[0][blk * HS + perm(j)]));
            ev = fmax(ev, fabs(Vv[1][blk * HS + j] - Vv[0][blk * HS + j]));
        }
    for (int v = 0; v < VOC; v++) el = fmax(el, fabs(lg[1][v] - lg[0][v]));
    /* float32 products against llama2.c's float64 sums: relative 1e-5 of each tensor's scale */
    ck_assert_msg(eq <= 1e-5 * max_abs(Q[0], qn), "Q off by %g", eq);
    ck_assert_msg(ek <= 1e-5 * max_abs(K[0], kn), "K off by %g", ek);
    ck_assert_msg(ev <= 1e-5 * max_abs(Vv[0], kn), "V off by %g", ev);
    ck_assert_msg(el <= 1e-5 * max_abs(lg[0], VOC), "logits off by %g", el);

    /* the swapped pass with every head kept is av_forward's arithmetic: the same bits */
    size_t sb = av_forward_swapped_work(&tw.b, n, NULL, AV_SWAP_MATRIX);
    ck_assert_uint_gt(sb, 0);
    void *sw = malloc(sb);
    float *all = malloc(sizeof *all * (size_t)n * VOC), *Qs = malloc(4 * qn);
    ck_assert_int_eq(av_forward_swapped(all, Qs, NULL, NULL, &tw.b, ids, n, NULL, AV_SWAP_MATRIX, NULL, sw, sb), AV_OK);
    ck_assert_int_eq(memcmp(Qs, Q[1], 4 * qn), 0);
    ck_assert_int_eq(memcmp(all + (size_t)(n - 1) * VOC, lg[1], 4 * VOC), 0);
    free(sw), free(all), free(Qs);
    for (int s = 0; s < 2; s++) free(Q[s]), free(K[s]), free(Vv[s]), free(lg[s]);
    free(tw.ckpt), free(tw.hf);
}

START_TEST(test_llama2c_and_hf_f32) { compare_twins(AV_ST_F32); }
END_TEST
START_TEST(test_llama2c_and_hf_bf16) { compare_twins(AV_ST_BF16); }
END_TEST

Suite *suite_hf_forward(void) {
    Suite *s = suite_create("hf_forward");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_f16_every_pattern);
    tcase_add_test(tc, test_products_against_float64);
    tcase_add_test(tc, test_llama2c_and_hf_f32);
    tcase_add_test(tc, test_llama2c_and_hf_bf16);
    suite_add_tcase(s, tc);
    return s;
}
