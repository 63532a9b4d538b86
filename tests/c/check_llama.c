/* check_llama.c: the llama2.c checkpoint and tokenizer readers, the encoder and the forward pass
 * (src/model.c). A tiny checkpoint and tokenizer are built here in memory (random weights from the
 * library's portable stream), so the hostile-file checks and the forward pass's own identities run on
 * every clone; the stories260K facts (../shared/data/stories260K/README.md: text128's captured Q/K/V and
 * ids, the greedy story, the next-token loss) run when that folder is present. The independent numpy
 * forward pass is tests/oracle/model_oracle.py. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnviz.h"
#include "testutil.h"

// ----------------------------------------------------------------------------------------------------
// a tiny model in memory: dim 8, hidden 12, 2 layers, 4 heads, 2 kv heads, vocab 300, seq_len 16

enum { T_DIM = 8, T_HID = 12, T_L = 2, T_H = 4, T_KVH = 2, T_V = 300, T_SEQ = 16 };

typedef struct blob { unsigned char *b; size_t len; } blob;

static void put_i32(unsigned char *p, int32_t v) { memcpy(p, &v, 4); } /* the test machines are little-endian */
static void put_f32(unsigned char *p, float v) { memcpy(p, &v, 4); }

/* The checkpoint: header, weights N(0, 0.3²) (norm weights near 1), RoPE tables, classifier if unshared. */
static blob tiny_model(int shared) {
    const int hs = T_DIM / T_H, kvd = hs * T_KVH;
    size_t floats = (size_t)T_V * T_DIM + T_L * T_DIM + T_L * T_DIM * T_DIM + 2 * T_L * kvd * T_DIM + T_L * T_DIM * T_DIM +
                    T_L * T_DIM + 3 * (size_t)T_L * T_HID * T_DIM + T_DIM + (size_t)T_SEQ * hs + (shared ? 0 : (size_t)T_V * T_DIM);
    blob out = {malloc(28 + 4 * floats), 28 + 4 * floats};
    int hdr[7] = {T_DIM, T_HID, T_L, T_H, T_KVH, shared ? T_V : -T_V, T_SEQ};
    for (int i = 0; i < 7; i++) put_i32(out.b + 4 * i, hdr[i]);
    av_rng r;
    av_rng_seed(&r, 2024);
    for (size_t i = 0; i < floats; i++) put_f32(out.b + 28 + 4 * i, (float)(0.3 * av_rng_normal(&r)));
    /* RMSNorm weights: 1 + small */
    size_t rms_att = (size_t)T_V * T_DIM, rms_ffn = rms_att + T_L * T_DIM + 2 * T_L * T_DIM * T_DIM + 2 * T_L * kvd * T_DIM;
    size_t rms_final = rms_ffn + T_L * T_DIM + 3 * (size_t)T_L * T_HID * T_DIM;
    for (int i = 0; i < T_L * T_DIM; i++) {
        put_f32(out.b + 28 + 4 * (rms_att + i), 1.0f + 0.05f * i);
        put_f32(out.b + 28 + 4 * (rms_ffn + i), 1.0f - 0.02f * i);
    }
    for (int i = 0; i < T_DIM; i++) put_f32(out.b + 28 + 4 * (rms_final + i), 1.0f);
    return out;
}

/* The tokenizer: ids 0..2 "<unk>", "\n<s>\n", "\n</s>\n"; 3..258 the byte pieces "<0xHH>"; then " ",
 * letters and a few merges with rising scores. */
static blob tiny_tokenizer(void) {
    static const char *extra[] = {" ", "a", "b", "c", "ab", "abc", " a", " ab", " abc", "é", "ba"};
    const int nextra = (int)(sizeof extra / sizeof extra[0]);
    blob out = {malloc(8192), 4};
    put_i32(out.b, 16);
    for (int id = 0; id < T_V; id++) {
        char piece[32];
        if (id == 0) strcpy(piece, "<unk>");
        else if (id == 1) strcpy(piece, "\n<s>\n");
        else if (id == 2) strcpy(piece, "\n</s>\n");
        else if (id < 259) snprintf(piece, sizeof piece, "<0x%02X>", id - 3);
        else if (id - 259 < nextra) strcpy(piece, extra[id - 259]);
        else snprintf(piece, sizeof piece, "zz%d", id);
        int l = (int)strlen(piece);
        put_f32(out.b + out.len, id < 259 ? 0.0f : (float)(id - 259));
        put_i32(out.b + out.len + 4, l);
        memcpy(out.b + out.len + 8, piece, (size_t)l);
        out.len += 8 + (size_t)l;
    }
    return out;
}

static int parse_tok(av_tokenizer *t, void **work, const blob *b, int vocab) {
    size_t wb = av_tokenizer_work(vocab);
    *work = malloc(wb ? wb : 1);
    return av_tokenizer_parse(t, b->b, b->len, vocab, *work, wb);
}

// ----------------------------------------------------------------------------------------------------
// the readers against hostile files

START_TEST(test_model_parse_and_refusals) {
    for (int shared = 0; shared <= 1; shared++) {
        blob b = tiny_model(shared);
        av_model m;
        ck_assert_int_eq(av_model_parse(&m, b.b, b.len), AV_OK);
        ck_assert_int_eq(m.head_size, 2);
        ck_assert_int_eq(m.kv_dim, 4);
        ck_assert_int_eq(m.vocab_size, T_V);
        ck_assert_int_eq(m.shared_classifier, shared);
        ck_assert(shared ? m.wcls == m.tok_emb : m.wcls == (const float *)(const void *)(b.b + b.len) - (size_t)T_V * T_DIM);
        /* every truncation, and one byte too many */
        for (size_t cut = 0; cut < b.len; cut += (cut < 64 ? 1 : 97)) {
            ck_assert_int_eq(av_model_parse(&m, b.b, cut), AV_ERR_FORMAT);
            ck_assert_ptr_null(m.tok_emb);
        }
        unsigned char *more = malloc(b.len + 4);
        memcpy(more, b.b, b.len);
        ck_assert_int_eq(av_model_parse(&m, more, b.len + 4), AV_ERR_FORMAT);
        ck_assert_ptr_nonnull(strstr(av_model_error(), "left over"));
        free(more);
        free(b.b);
    }
    blob b = tiny_model(1);
    av_model m;
    /* a bad value in each header field: zero, negative, huge; and the relations between them */
    const int32_t bad[] = {0, -1, -7, 1 << 30, INT32_MIN, INT32_MAX};
    for (int f = 0; f < 7; f++)
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            if (f == 5 && (bad[k] == -1 || bad[k] == -7)) continue; /* a negative vocab is a legal "unshared" */
            int32_t old;
            memcpy(&old, b.b + 4 * f, 4);
            put_i32(b.b + 4 * f, bad[k]);
            ck_assert_msg(av_model_parse(&m, b.b, b.len) == AV_ERR_FORMAT, "field %d = %d", f, bad[k]);
            ck_assert(strlen(av_model_error()) > 10);
            put_i32(b.b + 4 * f, old);
        }
    put_i32(b.b + 12, 3); /* n_heads 3: dim 8 is not a multiple */
    ck_assert_int_eq(av_model_parse(&m, b.b, b.len), AV_ERR_FORMAT);
    put_i32(b.b + 12, 8); /* head size 1: odd */
    put_i32(b.b + 16, 8);
    ck_assert_int_eq(av_model_parse(&m, b.b, b.len), AV_ERR_FORMAT);
    put_i32(b.b + 12, T_H);
    put_i32(b.b + 16, 3); /* kv heads 3 does not divide 4 */
    ck_assert_int_eq(av_model_parse(&m, b.b, b.len), AV_ERR_FORMAT);
    put_i32(b.b + 16, T_KVH);
    ck_assert_int_eq(av_model_parse(&m, b.b, b.len), AV_OK);
    ck_assert_int_eq(av_model_parse(&m, b.b + 1, b.len - 1), AV_ERR_SIZE); /* unaligned */
    ck_assert_int_eq(av_model_parse(NULL, b.b, b.len), AV_ERR_NULL);
    ck_assert_int_eq(av_model_parse(&m, NULL, b.len), AV_ERR_NULL);
    free(b.b);
}
END_TEST

START_TEST(test_tokenizer_parse_and_refusals) {
    blob b = tiny_tokenizer();
    av_tokenizer t;
    void *w;
    ck_assert_int_eq(parse_tok(&t, &w, &b, T_V), AV_OK);
    free(w);
    ck_assert_int_eq(parse_tok(&t, &w, &b, T_V + 1), AV_ERR_FORMAT); /* ends inside a piece */
    ck_assert_ptr_nonnull(strstr(av_model_error(), "ends inside piece"));
    free(w);
    ck_assert_int_eq(parse_tok(&t, &w, &b, T_V - 1), AV_ERR_FORMAT); /* bytes left over */
    free(w);
    for (size_t cut = 0; cut < b.len; cut += 37) {
        blob c = {b.b, cut};
        ck_assert_int_eq(parse_tok(&t, &w, &c, T_V), AV_ERR_FORMAT);
        free(w);
    }
    /* piece 5's length: 0, negative, past max_token_length, past the end of the file */
    size_t at = 4;
    for (int i = 0; i < 5; i++) {
        int32_t l;
        memcpy(&l, b.b + at + 4, 4);
        at += 8 + (size_t)l;
    }
    const int32_t lens[] = {0, -5, 17, 1 << 30};
    for (int k = 0; k < 4; k++) {
        int32_t old;
        memcpy(&old, b.b + at + 4, 4);
        put_i32(b.b + at + 4, lens[k]);
        ck_assert_int_eq(parse_tok(&t, &w, &b, T_V), AV_ERR_FORMAT);
        free(w);
        put_i32(b.b + at + 4, old);
    }
    put_f32(b.b + at, NAN);
    ck_assert_int_eq(parse_tok(&t, &w, &b, T_V), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_model_error(), "score"));
    free(w);
    put_f32(b.b + at, 0.0f);
    put_i32(b.b, 0); /* max_token_length */
    ck_assert_int_eq(parse_tok(&t, &w, &b, T_V), AV_ERR_FORMAT);
    free(w);
    put_i32(b.b, 16);
    size_t wb = av_tokenizer_work(T_V);
    w = malloc(wb);
    ck_assert_int_eq(av_tokenizer_parse(&t, b.b, b.len, T_V, w, wb - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_tokenizer_parse(&t, b.b, b.len, 0, w, wb), AV_ERR_SIZE);
    ck_assert_uint_eq(av_tokenizer_work(0), 0);
    free(w);
    free(b.b);
}
END_TEST

START_TEST(test_encode_and_pieces) {
    blob b = tiny_tokenizer();
    av_tokenizer t;
    void *w;
    ck_assert_int_eq(parse_tok(&t, &w, &b, T_V), AV_OK);
    int ids[64], n;
    const int SP = 259, A = 260, B = 261, C = 262, SABC = 267, E_ACUTE = 268;
    /* "abc" merges all the way, the highest-scoring pair first: " a" (6), " ab" (7), " abc" (8) */
    ck_assert_int_eq(av_encode(ids, &n, 64, &t, "abc", 3, 1), AV_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(ids[0], 1);
    ck_assert_int_eq(ids[1], SABC);
    /* "cab": only "ab" joins ("ba", the best piece, is never adjacent); the leading space stays alone */
    ck_assert_int_eq(av_encode(ids, &n, 64, &t, "cab", 3, 0), AV_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(ids[0], SP);
    ck_assert_int_eq(ids[1], C);
    ck_assert_int_eq(ids[2], 263); /* "ab" */
    (void)A, (void)B;
    /* a character with a piece (é), and one without (ü: its two bytes as byte pieces) */
    ck_assert_int_eq(av_encode(ids, &n, 64, &t, "\xc3\xa9\xc3\xbc", 4, 0), AV_OK);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(ids[1], E_ACUTE);
    ck_assert_int_eq(ids[2], 0xC3 + 3);
    ck_assert_int_eq(ids[3], 0xBC + 3);
    /* empty text: BOS only; no room: AV_ERR_SIZE */
    ck_assert_int_eq(av_encode(ids, &n, 64, &t, "", 0, 1), AV_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(av_encode(ids, &n, 2, &t, "abc", 3, 1), AV_ERR_SIZE);
    ck_assert_int_eq(av_encode(ids, &n, 64, &t, NULL, 3, 1), AV_ERR_NULL);
    /* pieces: BOS as "<s>", the space dropped after BOS, byte pieces as their byte */
    const char *p;
    int l;
    ck_assert_int_eq(av_token_piece(&p, &l, &t, -1, 1), AV_OK);
    ck_assert(l == 3 && memcmp(p, "<s>", 3) == 0);
    ck_assert_int_eq(av_token_piece(&p, &l, &t, 1, SABC), AV_OK);
    ck_assert(l == 3 && memcmp(p, "abc", 3) == 0);
    ck_assert_int_eq(av_token_piece(&p, &l, &t, 5, SABC), AV_OK);
    ck_assert(l == 4 && memcmp(p, " abc", 4) == 0);
    ck_assert_int_eq(av_token_piece(&p, &l, &t, 5, 0x0A + 3), AV_OK);
    ck_assert(l == 1 && p[0] == '\n');
    ck_assert_int_eq(av_token_piece(&p, &l, &t, 5, T_V), AV_ERR_SIZE);
    ck_assert_int_eq(av_token_piece(&p, &l, &t, 5, -1), AV_ERR_SIZE);
    free(w);
    /* a vocabulary without a space piece cannot encode text */
    put_i32(b.b, 16);
    free(b.b);
}
END_TEST

/* issue 27: the checkpoint of the report, header (8, 8, 1, 1, 1, vocab, 8) and 544 floats of 0.1 (dim 8,
 * one layer, one head: 8 + 8 + 4·64 + 8 + 3·64 + 8 + 64 floats; the vocabulary's embedding is 8·vocab). */
static blob small_model(int vocab) {
    size_t floats = 536 + 8 * (size_t)vocab;
    blob out = {malloc(28 + 4 * floats), 28 + 4 * floats};
    int hdr[7] = {8, 8, 1, 1, 1, vocab, 8};
    for (int i = 0; i < 7; i++) put_i32(out.b + 4 * i, hdr[i]);
    for (size_t i = 0; i < floats; i++) put_f32(out.b + 28 + 4 * i, 0.1f);
    return out;
}

/* A vocabulary without BOS (1) and EOS (2) is refused by both readers, with a sentence: encoding pushes
 * BOS, and reading its piece past a one-piece vocabulary read uninitialised workspace (issue 27). */
START_TEST(test_vocabulary_needs_bos_eos) {
    av_model m;
    for (int vocab = 1; vocab <= 3; vocab++) {
        blob b = small_model(vocab);
        ck_assert_uint_eq(b.len, vocab == 1 ? 28 + 4 * 544 : b.len);
        int st = av_model_parse(&m, b.b, b.len);
        if (vocab < 3) {
            ck_assert_int_eq(st, AV_ERR_FORMAT);
            ck_assert_ptr_nonnull(strstr(av_model_error(), "BOS"));
            ck_assert_ptr_null(m.tok_emb);
        } else
            ck_assert_int_eq(st, AV_OK);
        free(b.b);
    }
    /* the tokenizer of the report: one piece, " " (hex 04000000 00000000 01000000 20) */
    static const unsigned char one[] = {4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, ' '};
    blob tb = {(unsigned char *)one, sizeof one};
    av_tokenizer t;
    void *w;
    ck_assert_int_eq(parse_tok(&t, &w, &tb, 1), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_model_error(), "BOS"));
    free(w);
}
END_TEST

/* av_encode on its own (defence in depth): a tokenizer struct whose vocabulary is smaller than the ids its
 * tables hold never yields, nor reads the tables at, an id ≥ vocab_size. */
START_TEST(test_encode_stays_inside_vocabulary) {
    unsigned char buf[64];
    blob b = {buf, 4};
    put_i32(buf, 8);
    static const char *pieces[] = {"<unk>", "\n<s>\n", " "};
    for (int i = 0; i < 3; i++) {
        int l = (int)strlen(pieces[i]);
        put_f32(buf + b.len, 0.0f);
        put_i32(buf + b.len + 4, l);
        memcpy(buf + b.len + 8, pieces[i], (size_t)l);
        b.len += 8 + (size_t)l;
    }
    av_tokenizer t;
    void *w;
    ck_assert_int_eq(parse_tok(&t, &w, &b, 3), AV_OK);
    int ids[8], n = -1;
    ck_assert_int_eq(av_encode(ids, &n, 8, &t, " ", 1, 1), AV_OK);
    ck_assert_int_eq(n, 3); /* BOS, the space prefix, the space */
    for (int vocab = 1; vocab <= 2; vocab++) {
        av_tokenizer small = t;
        small.vocab_size = vocab;
        for (int bos = 0; bos <= 1; bos++) {
            n = -1;
            int st = av_encode(ids, &n, 8, &small, " ", 1, bos);
            ck_assert_msg(st == AV_ERR_FORMAT, "vocab %d bos %d: status %d", vocab, bos, st);
            ck_assert(strlen(av_model_error()) > 10);
            ck_assert_int_eq(n, 0);
        }
    }
    free(w);
}
END_TEST

/* A byte a text needs and the vocabulary has no piece for is refused at encode, naming the byte: an id
 * past the vocabulary, or an id byte + 3 that holds another piece, is never used. */
START_TEST(test_encode_byte_fallback) {
    av_tokenizer t;
    void *w;
    int ids[16], n;
    /* five pieces: "b" has no piece, and its byte piece would be id 0x62 + 3, past the vocabulary */
    unsigned char small[128];
    blob s5 = {small, 4};
    put_i32(small, 8);
    static const char *pieces[] = {"<unk>", "\n<s>\n", "\n</s>\n", " ", "a"};
    for (int i = 0; i < 5; i++) {
        int l = (int)strlen(pieces[i]);
        put_f32(small + s5.len, 0.0f);
        put_i32(small + s5.len + 4, l);
        memcpy(small + s5.len + 8, pieces[i], (size_t)l);
        s5.len += 8 + (size_t)l;
    }
    ck_assert_int_eq(parse_tok(&t, &w, &s5, 5), AV_OK);
    ck_assert_int_eq(av_encode(ids, &n, 16, &t, "a", 1, 1), AV_OK);
    ck_assert_int_eq(av_encode(ids, &n, 16, &t, "ab", 2, 1), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_model_error(), "0x62"));
    free(w);
    blob b = tiny_tokenizer();
    size_t at;
    /* id 0x41 + 3 renamed: "A" has no piece and its byte piece is not <0x41> */
    at = 4;
    for (int i = 0; i < 0x41 + 3; i++) {
        int32_t l;
        memcpy(&l, b.b + at + 4, 4);
        at += 8 + (size_t)l;
    }
    ck_assert(memcmp(b.b + at + 8, "<0x41>", 6) == 0);
    memcpy(b.b + at + 8, "<0x40>", 6);
    ck_assert_int_eq(parse_tok(&t, &w, &b, T_V), AV_OK);
    ck_assert_int_eq(av_encode(ids, &n, 16, &t, "A", 1, 1), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_model_error(), "0x41"));
    ck_assert_int_eq(av_encode(ids, &n, 16, &t, "B", 1, 1), AV_OK); /* its own byte piece is there */
    ck_assert_int_eq(ids[n - 1], 0x42 + 3);
    free(w);
    free(b.b);
}
END_TEST

/* A non-finite weight anywhere the forward pass reads is refused at load, naming the tensor, the value and
 * the index (issue 27: NaN weights gave NaN captures and <unk> text with exit 0). */
START_TEST(test_model_nonfinite_weights) {
    const int hs = T_DIM / T_H, kvd = hs * T_KVH;
    const size_t sizes[] = {(size_t)T_V * T_DIM, T_L * T_DIM, T_L * T_DIM * T_DIM, (size_t)T_L * kvd * T_DIM,
                            (size_t)T_L * kvd * T_DIM, T_L * T_DIM * T_DIM, T_L * T_DIM, (size_t)T_L * T_HID * T_DIM,
                            (size_t)T_L * T_DIM * T_HID, (size_t)T_L * T_HID * T_DIM, T_DIM, (size_t)T_SEQ * hs,
                            (size_t)T_V * T_DIM};
    static const char *names[] = {"token_embedding", "rms_att", "wq", "wk", "wv", "wo", "rms_ffn", "w1", "w2", "w3",
                                  "rms_final", NULL, "classifier"};
    const float bad[] = {NAN, INFINITY, -INFINITY};
    static const char *said[] = {"(NaN)", "(Inf)", "(-Inf)"};
    blob b = tiny_model(0);
    av_model m;
    size_t start = 0;
    for (int k = 0; k < 13; k++) {
        size_t idx = (size_t)k * 7 % sizes[k];
        size_t off = 28 + 4 * (start + idx);
        float old;
        memcpy(&old, b.b + off, 4);
        put_f32(b.b + off, bad[k % 3]);
        int st = av_model_parse(&m, b.b, b.len);
        if (!names[k]) /* the legacy RoPE tables are read past, never used */
            ck_assert_int_eq(st, AV_OK);
        else {
            char want[128];
            snprintf(want, sizeof want, "tensor %s holds a non-finite value %s at index %zu", names[k], said[k % 3], idx);
            ck_assert_int_eq(st, AV_ERR_NONFINITE);
            ck_assert_msg(strstr(av_model_error(), want) != NULL, "got: %s; want: %s", av_model_error(), want);
            ck_assert_ptr_null(m.tok_emb);
        }
        put_f32(b.b + off, old);
        start += sizes[k];
    }
    ck_assert_int_eq(av_model_parse(&m, b.b, b.len), AV_OK);
    free(b.b);
}
END_TEST

/* Finite weights whose products leave float range (issue 27 follow-up): now that non-finite weights are
 * refused at load, a non-finite capture can only come from a matvec, a residual sum or a norm that left the
 * range, never from an exponential (the softmax and SiLU stay bounded), so the status is the product's. */
START_TEST(test_forward_huge_finite_weights) {
    blob b = small_model(4);
    for (size_t i = 0; i < (b.len - 28) / 4; i++) put_f32(b.b + 28 + 4 * i, 1e38f);
    av_model m;
    ck_assert_int_eq(av_model_parse(&m, b.b, b.len), AV_OK);
    size_t wb = av_forward_work(&m);
    void *w = malloc(wb);
    const int ids[] = {1, 3, 0};
    float Q[3 * 8], K[3 * 8], V[3 * 8], logits[4];
    ck_assert_int_eq(av_forward(Q, K, V, logits, &m, ids, 0, 3, w, wb), AV_WARN_PRODUCT_OVERFLOW);
    int nonfinite = 0;
    for (int i = 0; i < 24; i++) nonfinite += !isfinite(Q[i]);
    ck_assert_int_gt(nonfinite, 0);
    /* the same model at 0.1 everywhere: nothing overflows */
    for (size_t i = 0; i < (b.len - 28) / 4; i++) put_f32(b.b + 28 + 4 * i, 0.1f);
    ck_assert_int_eq(av_forward(Q, K, V, logits, &m, ids, 0, 3, w, wb), AV_OK);
    free(w);
    free(b.b);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// the forward pass: its own identities (the numpy oracle checks the numbers)

START_TEST(test_forward_incremental_and_refusals) {
    blob b = tiny_model(0);
    av_model m;
    ck_assert_int_eq(av_model_parse(&m, b.b, b.len), AV_OK);
    size_t wb = av_forward_work(&m);
    ck_assert_uint_gt(wb, 0);
    void *w = malloc(wb), *w2 = malloc(wb);
    const int n = 11, ids[] = {1, 260, 261, 5, 299, 0, 42, 259, 260, 7, 100, 3, 3, 3, 3, 3, 3};
    size_t qn = (size_t)T_L * T_H * n * 2, kn = (size_t)T_L * T_KVH * n * 2;
    float *Q = calloc(qn, 4), *K = calloc(kn, 4), *V = calloc(kn, 4), *Q2 = calloc(qn, 4), *K2 = calloc(kn, 4), *V2 = calloc(kn, 4);
    float logits[T_V], logits2[T_V];
    ck_assert_int_eq(av_forward(Q, K, V, logits, &m, ids, 0, n, w, wb), AV_OK);
    /* the same in three calls with the cache in the workspace: identical bits */
    ck_assert_int_eq(av_forward(Q2, K2, V2, NULL, &m, ids, 0, 4, w2, wb), AV_OK);
    ck_assert_int_eq(av_forward(NULL, NULL, NULL, NULL, &m, ids, 4, 5, w2, wb), AV_OK);
    float *Q3 = calloc(qn, 4), *K3 = calloc(kn, 4), *V3 = calloc(kn, 4);
    ck_assert_int_eq(av_forward(Q3, K3, V3, logits2, &m, ids, 5, n, w2, wb), AV_OK);
    ck_assert_int_eq(memcmp(logits, logits2, sizeof logits), 0);
    /* position 0 of the first layer's first head: RoPE at 0 is the identity, so Q is wq·rmsnorm(x) there */
    for (int l = 0; l < T_L; l++)
        for (int h = 0; h < T_H; h++)
            for (int t = 5; t < n; t++)
                for (int i = 0; i < 2; i++) {
                    size_t at = (((size_t)l * T_H + h) * n + t) * 2 + i;
                    ck_assert(Q[at] == Q3[at]);
                }
    /* causality: a later token changes nothing before it */
    int ids2[16];
    memcpy(ids2, ids, sizeof ids2);
    ids2[n - 1] = 250;
    float *Q4 = calloc(qn, 4);
    ck_assert_int_eq(av_forward(Q4, NULL, NULL, NULL, &m, ids2, 0, n, w2, wb), AV_OK);
    for (int l = 0; l < T_L; l++)
        for (int h = 0; h < T_H; h++)
            for (int t = 0; t < n; t++) {
                size_t at = (((size_t)l * T_H + h) * n + t) * 2;
                if (t < n - 1) ck_assert(Q4[at] == Q[at] && Q4[at + 1] == Q[at + 1]);
                else if (l > 0) ck_assert(Q4[at] != Q[at] || Q4[at + 1] != Q[at + 1]);
            }
    /* RoPE keeps norms: each query pair's length at layer 0 is that of the unrotated projection, which
     * is the same vector at every position for the same token (ids 3..: token 3 at positions 11+) */
    /* refusals */
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &m, ids, 0, T_SEQ + 1, w, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &m, ids, 0, 0, w, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &m, ids, n, n, w, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &m, ids, -1, n, w, wb), AV_ERR_SIZE);
    int badids[] = {1, T_V};
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &m, badids, 0, 2, w, wb), AV_ERR_SIZE);
    badids[1] = -3;
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &m, badids, 0, 2, w, wb), AV_ERR_SIZE);
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &m, ids, 0, n, w, wb - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &m, ids, 0, n, NULL, wb), AV_ERR_NULL);
    av_model zero;
    memset(&zero, 0, sizeof zero);
    ck_assert_uint_eq(av_forward_work(&zero), 0);
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &zero, ids, 0, n, w, wb), AV_ERR_SIZE);
    free(Q); free(K); free(V); free(Q2); free(K2); free(V2); free(Q3); free(K3); free(V3); free(Q4);
    free(w); free(w2); free(b.b);
}
END_TEST

/* A call from start k writes rows k..n−1 of each capture and its status speaks of those: rows below k are
 * the caller's (an earlier call's, or not filled at all) and stay as they were, NaN included. av_forward
 * checked every row 0..n−1 and said AV_WARN_OVERFLOW for a finite pass (fuzz_api, issue 27). */
START_TEST(test_forward_status_covers_written_rows) {
    blob b = tiny_model(1);
    av_model m;
    ck_assert_int_eq(av_model_parse(&m, b.b, b.len), AV_OK);
    size_t wb = av_forward_work(&m);
    void *w = malloc(wb);
    const int n = 6, k = 2, ids[] = {1, 260, 261, 5, 299, 42};
    const int hs = T_DIM / T_H;
    size_t qn = (size_t)T_L * T_H * n * hs, kn = (size_t)T_L * T_KVH * n * hs;
    float *Q = malloc(4 * qn), *K = malloc(4 * kn), *V = malloc(4 * kn), *Qf = calloc(qn, 4);
    ck_assert_int_eq(av_forward(Qf, NULL, NULL, NULL, &m, ids, 0, n, w, wb), AV_OK);
    for (size_t i = 0; i < qn; i++) Q[i] = NAN;
    for (size_t i = 0; i < kn; i++) K[i] = V[i] = NAN;
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &m, ids, k, n, w, wb), AV_OK);
    for (int blk = 0; blk < T_L * T_H; blk++)
        for (int t = 0; t < n; t++)
            for (int i = 0; i < hs; i++) {
                size_t at = ((size_t)blk * n + t) * hs + i;
                if (t < k) ck_assert(isnan(Q[at]));
                else ck_assert(Q[at] == Qf[at]);
            }
    for (size_t i = 0; i < kn; i++) ck_assert(isnan(K[i]) == ((i / hs) % n < (size_t)k));
    free(Q); free(K); free(V); free(Qf); free(w); free(b.b);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// stories260K (../shared/data/stories260K/README.md), when present


static blob read_all(const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", tu_stories_dir(), name);
    FILE *f = fopen(path, "rb");
    blob b = {NULL, 0};
    if (!f) return b;
    fseek(f, 0, SEEK_END);
    b.len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    b.b = malloc(b.len + 1);
    ck_assert(fread(b.b, 1, b.len, f) == b.len);
    b.b[b.len] = 0;
    fclose(f);
    return b;
}

static float *npy(const char *name, size_t count) {
    blob b = read_all(name);
    av_npy_info info;
    ck_assert_int_eq(av_npy_parse(&info, b.b, b.len), AV_OK);
    ck_assert_uint_eq(info.count, count);
    float *x = malloc(4 * count);
    ck_assert_int_eq(av_npy_decode_f32(x, &info, b.b, b.len), AV_OK);
    free(b.b);
    return x;
}

/* The JSON string value of "key" in text (no escapes in this file's text). */
static char *json_text(const char *json, const char *key) {
    const char *p = strstr(json, key);
    ck_assert_ptr_nonnull(p);
    p = strchr(p + strlen(key) + 1, '"') + 1;
    const char *e = strchr(p, '"');
    char *out = malloc((size_t)(e - p) + 1);
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = 0;
    return out;
}

START_TEST(test_stories260k_facts) {
    struct stat sb;
    if (stat(tu_stories_dir(), &sb) != 0) {
        tu_skipped("Check suite llama: stories260K forward-pass facts");
        return;
    }
    blob mb = read_all("stories260K.bin"), tb = read_all("tok512.bin"), jb = read_all("text128_tokens.json");
    av_model m;
    ck_assert_int_eq(av_model_parse(&m, mb.b, mb.len), AV_OK);
    ck_assert(m.dim == 64 && m.hidden_dim == 172 && m.n_layers == 5 && m.n_heads == 8 && m.n_kv_heads == 4 &&
              m.vocab_size == 512 && m.seq_len == 512 && m.shared_classifier);
    av_tokenizer t;
    void *tw;
    ck_assert_int_eq(parse_tok(&t, &tw, &tb, m.vocab_size), AV_OK);
    /* the ids of text128 exactly */
    char *text = json_text((const char *)jb.b, "\"text\"");
    int ids[600], n;
    ck_assert_int_eq(av_encode(ids, &n, 600, &t, text, strlen(text), 1), AV_OK);
    ck_assert_int_eq(n, 128);
    const char *p = strstr((const char *)jb.b, "\"ids\"");
    p = strchr(p, '[') + 1;
    for (int i = 0; i < n; i++) {
        char *end;
        long v = strtol(p, &end, 10);
        ck_assert_int_eq(ids[i], (int)v);
        p = end + 1;
    }
    /* Q, K, V to 1e-4 */
    size_t wb = av_forward_work(&m);
    void *w = malloc(wb);
    size_t qn = 5 * 8 * 128 * 8, kn = 5 * 4 * 128 * 8;
    float *Q = malloc(4 * qn), *K = malloc(4 * kn), *V = malloc(4 * kn);
    ck_assert_int_eq(av_forward(Q, K, V, NULL, &m, ids, 0, n, w, wb), AV_OK);
    float *rq = npy("text128_q.npy", qn), *rk = npy("text128_k.npy", kn), *rv = npy("text128_v.npy", kn);
    double dq = 0, dk = 0, dv = 0;
    for (size_t i = 0; i < qn; i++) dq = fmax(dq, fabs(Q[i] - rq[i]));
    for (size_t i = 0; i < kn; i++) dk = fmax(dk, fabs(K[i] - rk[i])), dv = fmax(dv, fabs(V[i] - rv[i]));
    ck_assert_msg(dq < 1e-4 && dk < 1e-4 && dv < 1e-4, "q %g k %g v %g", dq, dk, dv);
    /* the next-token loss over the text, one position at a time (the cache in the workspace), and the
     * argmax after the last token: the README's 1.0739 nats and id 13 */
    float logits[512];
    double nll = 0;
    for (int pos = 0; pos < n; pos++) {
        ck_assert_int_eq(av_forward(NULL, NULL, NULL, logits, &m, ids, pos, pos + 1, w, wb), AV_OK);
        double mx = -INFINITY, s = 0;
        for (int v = 0; v < 512; v++) mx = fmax(mx, logits[v]);
        for (int v = 0; v < 512; v++) s += exp(logits[v] - mx);
        if (pos + 1 < n) nll += -(logits[ids[pos + 1]] - mx - log(s));
        else {
            int best = 0;
            for (int v = 1; v < 512; v++) best = logits[v] > logits[best] ? v : best;
            ck_assert_int_eq(best, 13);
        }
    }
    ck_assert_double_eq_tol(nll / (n - 1), 1.0739221572875977, 1e-3);
    /* greedy from BOS: the published story's first sentence */
    int g[40] = {1};
    int gn = 1;
    char story[512] = "";
    size_t sl = 0;
    ck_assert_int_eq(av_forward(NULL, NULL, NULL, logits, &m, g, 0, 1, w, wb), AV_OK);
    while (gn < 40) {
        int best = 0;
        for (int v = 1; v < 512; v++) best = logits[v] > logits[best] ? v : best;
        const char *pc;
        int pl;
        ck_assert_int_eq(av_token_piece(&pc, &pl, &t, g[gn - 1], best), AV_OK);
        memcpy(story + sl, pc, (size_t)pl);
        sl += (size_t)pl;
        story[sl] = 0;
        g[gn++] = best;
        ck_assert_int_eq(av_forward(NULL, NULL, NULL, logits, &m, g, gn - 1, gn, w, wb), AV_OK);
    }
    const char *want = "Once upon a time, there was a little girl named Lily.";
    ck_assert_msg(strncmp(story, want, strlen(want)) == 0, "greedy: %s", story);
    free(Q); free(K); free(V); free(rq); free(rk); free(rv); free(w); free(tw); free(text);
    free(mb.b); free(tb.b); free(jb.b);
}
END_TEST

Suite *suite_llama(void) {
    Suite *s = suite_create("llama");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_model_parse_and_refusals);
    tcase_add_test(tc, test_tokenizer_parse_and_refusals);
    tcase_add_test(tc, test_encode_and_pieces);
    tcase_add_test(tc, test_vocabulary_needs_bos_eos);
    tcase_add_test(tc, test_encode_stays_inside_vocabulary);
    tcase_add_test(tc, test_encode_byte_fallback);
    tcase_add_test(tc, test_model_nonfinite_weights);
    tcase_add_test(tc, test_forward_incremental_and_refusals);
    tcase_add_test(tc, test_forward_huge_finite_weights);
    tcase_add_test(tc, test_forward_status_covers_written_rows);
    tcase_add_test(tc, test_stories260k_facts);
    suite_add_tcase(s, tc);
    return s;
}
