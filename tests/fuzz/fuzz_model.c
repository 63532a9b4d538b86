/* fuzz_model.c: libFuzzer target for the llama2.c readers (av_model_parse, av_tokenizer_parse), the
 * encoder and the forward pass (src/model.c). The first byte picks what the rest is:
 *   even: a checkpoint. When it parses, its pointers must lie inside the buffer and a short forward pass
 *         (when the model is small) must give a status, never a crash;
 *   odd:  the next 2 bytes a vocabulary size (1..4096), then a tokenizer. When it parses, every piece
 *         lies inside the buffer, av_token_piece works for every id, and encoding a text made of the
 *         input's own bytes gives ids inside the vocabulary.
 * Seeds: tests/fuzz/corpus_model (written by tests/fuzz/make_model_corpus.py). Run by `make fuzz`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

static int inside(const void *p, size_t bytes, const unsigned char *buf, size_t len) {
    const unsigned char *q = p;
    return q >= buf && q <= buf + len && bytes <= (size_t)(buf + len - q);
}

static void checkpoint(const unsigned char *buf, size_t len) {
    av_model m;
    int st = av_model_parse(&m, buf, len);
    if (st != AV_OK && st != AV_ERR_FORMAT) abort();
    if (st != AV_OK) return;
    size_t D = (size_t)m.dim;
    if (!inside(m.tok_emb, 4 * (size_t)m.vocab_size * D, buf, len) || !inside(m.wcls, 4 * (size_t)m.vocab_size * D, buf, len) ||
        !inside(m.rms_final, 4 * D, buf, len) || !inside(m.w3, 4 * (size_t)m.n_layers * m.hidden_dim * D, buf, len))
        abort();
    size_t wb = av_forward_work(&m);
    if (!wb || wb > (1u << 24)) return;
    void *w = malloc(wb);
    int ids[3] = {0, m.vocab_size - 1, m.vocab_size / 2};
    int n = m.seq_len < 3 ? m.seq_len : 3;
    size_t qn = (size_t)m.n_layers * m.n_heads * n * m.head_size, kn = (size_t)m.n_layers * m.n_kv_heads * n * m.head_size;
    float *Q = malloc(4 * qn + 4), *K = malloc(4 * kn + 4), *V = malloc(4 * kn + 4), *lg = malloc(4 * (size_t)m.vocab_size);
    if (w && Q && K && V && lg) {
        st = av_forward(Q, K, V, lg, &m, ids, 0, n, w, wb);
        if (st != AV_OK && st != AV_WARN_PRODUCT_OVERFLOW) abort();
    }
    free(w), free(Q), free(K), free(V), free(lg);
}

static void tokenizer(const unsigned char *buf, size_t len) {
    if (len < 2) return;
    int vocab = 1 + ((buf[0] | buf[1] << 8) % 4096);
    const unsigned char *tb = buf + 2;
    size_t tlen = len - 2;
    size_t wb = av_tokenizer_work(vocab);
    void *w = malloc(wb);
    if (!w) return;
    av_tokenizer t;
    int st = av_tokenizer_parse(&t, tb, tlen, vocab, w, wb);
    if (st != AV_OK && st != AV_ERR_FORMAT) abort();
    if (st == AV_OK) {
        for (int i = 0; i < vocab; i++) {
            if (!inside(tb + t.offset[i], (size_t)t.len[i], tb, tlen)) abort();
            const char *p;
            int l;
            if (av_token_piece(&p, &l, &t, i ? i - 1 : 1, i) != AV_OK || l < 0 || l > t.len[i]) abort();
        }
        size_t text_len = tlen < 200 ? tlen : 200;
        int *ids = malloc(sizeof(int) * (text_len + 2));
        int n;
        st = av_encode(ids, &n, (int)text_len + 2, &t, (const char *)tb, text_len, 1);
        if (st != AV_OK && st != AV_ERR_FORMAT) abort();
        if (st == AV_OK)
            for (int i = 0; i < n; i++)
                if (ids[i] < 0 || ids[i] >= vocab) abort();
        free(ids);
    }
    free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    /* a private, 4-byte aligned copy of exactly the payload, so ASan sees any read past the end */
    size_t len = size - 1;
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) return 0;
    if (len) memcpy(buf, data + 1, len);
    if (data[0] % 2 == 0) checkpoint(buf, len);
    else tokenizer(buf, len);
    free(buf);
    return 0;
}
