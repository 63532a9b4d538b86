/* fuzz_model.c: libFuzzer target for the llama2.c readers (av_model_parse, av_tokenizer_parse), the
 * encoder and the forward pass (src/model.c). Every successful parse goes on to av_encode and av_forward.
 * The first byte picks what the rest is (mod 4):
 *   0:    a checkpoint. When it parses, its pointers must lie inside the buffer; a tokenizer made here for
 *         its vocabulary (byte pieces when there is room) encodes a text made of the checkpoint's first
 *         bytes, and the forward pass runs on those ids and on three fixed ones (when the model is small);
 *   1, 3: the next 2 bytes a vocabulary size (1..4096), then a tokenizer. When it parses, every piece lies
 *         inside the buffer, av_token_piece works for every id, encoding a text made of the input's own
 *         bytes gives ids inside the vocabulary, and a small model made here for that vocabulary runs on them;
 *   2:    a pair: a u32 checkpoint length L and a u16 text length T, the text, the checkpoint (L bytes), then
 *         the tokenizer (the rest) for the checkpoint's vocabulary: the text encoded, the ids run.
 * The forward pass must return AV_OK (finite captures and logits) or AV_WARN_PRODUCT_OVERFLOW for valid ids.
 * The swapped pass (av_forward_swapped) runs on the same ids with a few heads swapped, chosen from the input's
 * bytes (which heads, elu or retention, the path): with every head kept its last logits must be av_forward's.
 * Seeds: tests/fuzz/corpus_model (written by tests/fuzz/make_model_corpus.py). Run by `make fuzz`.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

static int inside(const void *p, size_t bytes, const unsigned char *buf, size_t len) {
    const unsigned char *q = p;
    return q >= buf && q <= buf + len && bytes <= (size_t)(buf + len - q);
}

static void finite_or_abort(const float *x, size_t count) {
    for (size_t i = 0; x && i < count; i++)
        if (!isfinite(x[i])) abort();
}

/* The input's bytes, which choose the swapped heads. */
static const unsigned char *g_in;
static size_t g_in_len;
static unsigned in_byte(size_t i) { return g_in_len ? g_in[i % g_in_len] : 0; }

/* av_forward_swapped over ids[0..n) with heads chosen by the input (n ≥ 1, ≤ seq_len); lg0: av_forward's last
 * logits (AV_OK), which the pass must equal bit for bit when no head is swapped. */
static void swapped(const av_model *m, const int *ids, int n, const float *lg0) {
    int LH = m->n_layers * m->n_heads;
    if (LH > 1024 || (double)n * m->vocab_size > (1 << 22)) return;
    av_params elu, ret;
    av_params_default(&elu, AV_ELU), av_params_default(&ret, AV_RETENTION);
    elu.causal = 1, ret.causal = 1;
    const av_params **heads = calloc((size_t)LH, sizeof *heads);
    int any = 0, path = in_byte(1) & 1;
    for (int i = 0; heads && i < LH; i++) {
        unsigned b = in_byte(7 + (size_t)i);
        heads[i] = b % 5 == 0 ? &elu : b % 5 == 1 ? &ret : NULL;
        any |= heads[i] != NULL;
    }
    size_t wb = heads ? av_forward_swapped_work(m, n, heads, path) : 0;
    if (!wb) {
        if (heads) abort(); /* valid heads for a parsed model */
        return;
    }
    void *w = wb <= (1u << 26) ? malloc(wb) : NULL;
    float *lg = malloc(4 * (size_t)n * m->vocab_size);
    if (w && lg) {
        int bad = 5;
        int st = av_forward_swapped(lg, NULL, NULL, NULL, m, ids, n, heads, path, &bad, w, wb);
        if (bad != -1 || st < 0) abort();
        if (st == AV_OK || st == AV_WARN_ZERO_ROW) finite_or_abort(lg, (size_t)n * m->vocab_size);
        if (!any && lg0 && memcmp(lg0, lg + (size_t)(n - 1) * m->vocab_size, 4 * (size_t)m->vocab_size)) abort();
    }
    free(w), free(lg), free(heads);
}

/* The forward pass over ids[0..n) (n clipped to seq_len): AV_OK with finite outputs, or AV_WARN_PRODUCT_OVERFLOW. */
static void forward(const av_model *m, const int *ids, int n) {
    if (n > m->seq_len) n = m->seq_len;
    if (n < 1) return;
    size_t wb = av_forward_work(m);
    if (!wb) abort();
    if (wb > (1u << 24)) return;
    void *w = malloc(wb);
    size_t qn = (size_t)m->n_layers * m->n_heads * n * m->head_size, kn = (size_t)m->n_layers * m->n_kv_heads * n * m->head_size;
    if ((double)qn > 1 << 22) { free(w); return; }
    float *Q = malloc(4 * qn + 4), *K = malloc(4 * kn + 4), *V = malloc(4 * kn + 4), *lg = malloc(4 * (size_t)m->vocab_size);
    if (w && Q && K && V && lg) {
        int st = av_forward(Q, K, V, lg, m, ids, 0, n, w, wb);
        if (st != AV_OK && st != AV_WARN_PRODUCT_OVERFLOW) abort();
        if (st == AV_OK) {
            finite_or_abort(Q, qn), finite_or_abort(K, kn), finite_or_abort(V, kn);
            finite_or_abort(lg, (size_t)m->vocab_size);
        }
        swapped(m, ids, n, st == AV_OK ? lg : NULL);
    }
    free(w), free(Q), free(K), free(V), free(lg);
}

/* Parse tb[0..tlen) for `vocab`; when it parses, check its pieces, encode text[0..text_len) and return the
 * ids (malloc'ed, *n their count), else NULL. */
static int *tokenize(int *n, const unsigned char *tb, size_t tlen, int vocab, const char *text, size_t text_len) {
    *n = 0;
    size_t wb = av_tokenizer_work(vocab);
    void *w = malloc(wb ? wb : 1);
    if (!w) return NULL;
    av_tokenizer t;
    int st = av_tokenizer_parse(&t, tb, tlen, vocab, w, wb);
    if (st != AV_OK && st != AV_ERR_FORMAT && st != AV_ERR_SIZE) abort();
    int *ids = NULL;
    if (st == AV_OK) {
        for (int i = 0; i < vocab; i++) {
            if (!inside(tb + t.offset[i], (size_t)t.len[i], tb, tlen)) abort();
            const char *p;
            int l;
            if (av_token_piece(&p, &l, &t, i ? i - 1 : 1, i) != AV_OK || l < 0 || l > t.len[i]) abort();
        }
        ids = malloc(sizeof(int) * (text_len + 2));
        if (ids) {
            st = av_encode(ids, n, (int)text_len + 2, &t, text, text_len, 1);
            if (st != AV_OK && st != AV_ERR_FORMAT) abort();
            if (st != AV_OK) *n = 0;
            for (int i = 0; i < *n; i++)
                if (ids[i] < 0 || ids[i] >= vocab) abort();
        }
    }
    free(w);
    return ids;
}

static void put_i32(unsigned char *p, int32_t v) { memcpy(p, &v, 4); }

/* A tokenizer for `vocab` pieces made here: <unk>, BOS, EOS, the 256 byte pieces when vocab > 259 (then
 * " "), else " " and letters; then two-letter pieces. *len its bytes. */
static unsigned char *make_tokenizer(int vocab, size_t *len) {
    unsigned char *b = malloc(4 + (size_t)vocab * 16);
    if (!b) return NULL;
    size_t at = 4;
    int bytes = vocab > 259;
    for (int i = 0; i < vocab; i++) {
        char p[8];
        int l;
        if (i == 0) l = snprintf(p, sizeof p, "<unk>");
        else if (i == 1) l = snprintf(p, sizeof p, "\n<s>\n");
        else if (i == 2) l = snprintf(p, sizeof p, "\n</s>\n");
        else if (bytes && i < 259) l = snprintf(p, sizeof p, "<0x%02X>", i - 3);
        else {
            int k = i - (bytes ? 259 : 3); /* " ", then a..z, then two letters */
            if (k == 0) l = snprintf(p, sizeof p, " ");
            else if (k <= 26) l = snprintf(p, sizeof p, "%c", 'a' + k - 1);
            else l = snprintf(p, sizeof p, "%c%c", 'a' + (k / 26) % 26, 'a' + k % 26);
        }
        float score = (float)(i % 13) - 6.0f;
        memcpy(b + at, &score, 4), put_i32(b + at + 4, l), memcpy(b + at + 8, p, (size_t)l);
        at += 8 + (size_t)l;
    }
    put_i32(b, 6);
    *len = at;
    return b;
}

/* A small model made here for `vocab` (dim 4, two heads sharing one kv head, hidden 4, one layer, seq_len 8,
 * shared classifier), weights from `seed` bytes. */
static unsigned char *make_checkpoint(int vocab, const unsigned char *seed, size_t seed_len, size_t *len) {
    const int dim = 4, hid = 4, L = 1, H = 2, KV = 1, seq = 8, hs = dim / H, kvd = hs * KV;
    size_t floats = (size_t)vocab * dim + (size_t)L * (2 * dim + 2 * dim * dim + 2 * kvd * dim + 3 * hid * dim) + dim + (size_t)seq * hs;
    unsigned char *b = malloc(28 + 4 * floats);
    if (!b) return NULL;
    int32_t head[7] = {dim, hid, L, H, KV, vocab, seq};
    memcpy(b, head, sizeof head);
    for (size_t i = 0; i < floats; i++) {
        float x = seed_len ? (float)((int)(seed[i % seed_len] % 17) - 8) / 16.0f : 0.25f;
        memcpy(b + 28 + 4 * i, &x, 4);
    }
    *len = 28 + 4 * floats;
    return b;
}

static int parse_model(av_model *m, const unsigned char *buf, size_t len) {
    int st = av_model_parse(m, buf, len);
    if (st != AV_OK && st != AV_ERR_FORMAT && st != AV_ERR_NONFINITE && st != AV_ERR_TOO_LARGE) abort();
    if (st != AV_OK) return 0;
    size_t D = (size_t)m->dim;
    if (!inside(m->tok_emb, 4 * (size_t)m->vocab_size * D, buf, len) || !inside(m->wcls, 4 * (size_t)m->vocab_size * D, buf, len) ||
        !inside(m->rms_final, 4 * D, buf, len) || !inside(m->w3, 4 * (size_t)m->n_layers * m->hidden_dim * D, buf, len))
        abort();
    return 1;
}

static void checkpoint(const unsigned char *buf, size_t len) {
    av_model m;
    if (!parse_model(&m, buf, len)) return;
    int fixed[3] = {0, m.vocab_size - 1, m.vocab_size / 2};
    forward(&m, fixed, 3);
    if (m.vocab_size > 65536) return; /* the tokenizer made here stays small */
    size_t tlen;
    unsigned char *tb = make_tokenizer(m.vocab_size, &tlen);
    if (!tb) return;
    /* the text: the checkpoint's first bytes (raw bytes for the byte pieces), or letters when there are none */
    char text[24];
    size_t text_len = len - 28 < sizeof text ? len - 28 : sizeof text;
    for (size_t i = 0; i < text_len; i++)
        text[i] = m.vocab_size > 259 ? (char)buf[28 + i] : (char)(i % 3 == 2 ? ' ' : 'a' + buf[28 + i] % 26);
    int n;
    int *ids = tokenize(&n, tb, tlen, m.vocab_size, text, text_len);
    if (ids) forward(&m, ids, n);
    free(ids);
    free(tb);
}

static void tokenizer(const unsigned char *buf, size_t len) {
    if (len < 2) return;
    int vocab = 1 + ((buf[0] | buf[1] << 8) % 4096);
    const unsigned char *tb = buf + 2;
    size_t tlen = len - 2, text_len = tlen < 200 ? tlen : 200;
    int n;
    int *ids = tokenize(&n, tb, tlen, vocab, (const char *)tb, text_len);
    if (ids && n) {
        size_t clen;
        unsigned char *cb = make_checkpoint(vocab, tb, tlen, &clen);
        av_model m;
        if (cb && !parse_model(&m, cb, clen)) abort(); /* made valid here */
        if (cb) forward(&m, ids, n);
        free(cb);
    }
    free(ids);
}

static void pair(const unsigned char *buf, size_t len) {
    if (len < 6) return;
    uint32_t L;
    memcpy(&L, buf, 4);
    size_t T = (size_t)(buf[4] | buf[5] << 8);
    buf += 6, len -= 6;
    if (T > len || L > len - T) return;
    const char *text = (const char *)buf;
    /* the checkpoint in its own exact, 4-byte aligned buffer (ASan sees a read past it) */
    unsigned char *cb = malloc(L ? L : 1);
    if (!cb) return;
    memcpy(cb, buf + T, L);
    av_model m;
    if (parse_model(&m, cb, L)) {
        int n;
        int *ids = tokenize(&n, buf + T + L, len - T - L, m.vocab_size, text, T);
        if (ids) forward(&m, ids, n);
        free(ids);
    }
    free(cb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    /* a private, 4-byte aligned copy of exactly the payload, so ASan sees any read past the end */
    size_t len = size - 1;
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) return 0;
    if (len) memcpy(buf, data + 1, len);
    g_in = data, g_in_len = size;
    switch (data[0] % 4) {
    case 0: checkpoint(buf, len); break;
    case 2: pair(buf, len); break;
    default: tokenizer(buf, len); break;
    }
    free(buf);
    return 0;
}
