/* fuzz_hf_tokenizer.c: libFuzzer target for the tokenizer.json reader and encoder (src/hf_tokenizer.c):
 * av_hf_tokenizer_work, av_hf_tokenizer_parse, av_hf_tokenizer_vocab, av_hf_encode_work, av_hf_encode_cap,
 * av_hf_encode, av_hf_token_bytes. Seeds: tests/fuzz/corpus_hf_tokenizer (written by
 * tests/fuzz/make_hf_tokenizer_corpus.py). Run by `make fuzz`.
 *
 * The input's first two bytes (little-endian) split the rest: that many bytes (modulo the rest's length + 1)
 * of tokenizer.json, then the text; the high bits of the first byte pick add_special and parse_special. Any
 * file must be refused with a sentence (_work 0 or AV_ERR_FORMAT) or parse; each workspace is exactly its
 * _work size in a private allocation (ASan sees a write past it), one byte less giving AV_ERR_WORKSPACE. A
 * parsed file encodes any text into at most av_hf_encode_cap ids (one fewer is AV_ERR_SIZE), each inside the vocabulary, and every id
 * decodes into at most AV_TOKEN_MAX_LEN·4 bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    size_t rest = size - 2, jl = ((size_t)data[0] | (size_t)data[1] << 8) % (rest + 1);
    int add_special = data[0] >> 7, parse_special = (data[0] >> 6) & 1;
    /* private copies of exactly their sizes, so ASan sees any read past either end */
    char *json = malloc(jl ? jl : 1), *text = malloc(rest - jl ? rest - jl : 1);
    if (!json || !text) { free(json), free(text); return 0; }
    memcpy(json, data + 2, jl);
    memcpy(text, data + 2 + jl, rest - jl);
    size_t tl = rest - jl;
    size_t w = av_hf_tokenizer_work(json, jl);
    if (!w) {
        if (!av_model_error()[0]) abort();
        free(json), free(text);
        return 0;
    }
    void *work = malloc(w);
    const av_hf_tokenizer *t = NULL;
    if (!work) { free(json), free(text); return 0; }
    if (av_hf_tokenizer_parse(&t, work, w - 1, json, jl) != AV_ERR_WORKSPACE) abort();
    int st = av_hf_tokenizer_parse(&t, work, w, json, jl);
    free(json); /* the tokenizer must not point into the file */
    if (st != AV_OK && st != AV_ERR_FORMAT) abort();
    if (st == AV_ERR_FORMAT && !av_model_error()[0]) abort();
    if (st == AV_OK) {
        int vocab = av_hf_tokenizer_vocab(t);
        size_t ew = av_hf_encode_work(t, tl), cap = av_hf_encode_cap(t, tl);
        if (vocab < 1 || !ew || cap < tl) abort();
        if (cap > (1u << 24) || ew > ((size_t)1 << 28)) { free(work), free(text); return 0; } /* a Prepend of a long string */
        int *ids = malloc(sizeof(int) * cap), n = -1;
        void *scratch = malloc(ew);
        if (ids && scratch) {
            if (av_hf_encode(ids, &n, (int)cap, t, text, tl, add_special, parse_special, scratch, ew - 1) != AV_ERR_WORKSPACE) abort();
            if (av_hf_encode(ids, &n, (int)cap, t, text, tl, add_special, parse_special, scratch, ew) != AV_OK) abort();
            if (n < 0 || (size_t)n > cap) abort();
            static char out[4 * AV_TOKEN_MAX_LEN];
            for (int i = 0; i < n; i++) {
                int len = -1;
                if (ids[i] < 0 || ids[i] >= vocab) abort();
                if (av_hf_token_bytes(out, &len, (int)sizeof out, t, i ? ids[i - 1] : -1, ids[i]) != AV_OK) abort();
                if (len < 0 || len > (int)sizeof out) abort();
            }
            if (n > 0 && av_hf_encode(ids, &n, n - 1, t, text, tl, add_special, parse_special, scratch, ew) != AV_ERR_SIZE) abort();
        }
        free(ids), free(scratch);
    }
    free(work);
    free(text);
    return 0;
}
