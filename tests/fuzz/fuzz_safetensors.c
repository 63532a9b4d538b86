/* fuzz_safetensors.c: libFuzzer target for the .safetensors reader (src/safetensors.c): av_st_work,
 * av_st_parse, av_st_find, av_st_rows_f32. Seeds: tests/fuzz/corpus_safetensors (written by
 * tests/fuzz/make_safetensors_corpus.py). Run by `make fuzz`.
 *
 * Any input must be refused with a sentence (av_st_work 0, or AV_ERR_FORMAT) or parse; the workspace is exactly
 * av_st_work bytes of a private allocation (ASan sees any write past it), and one byte less must give
 * AV_ERR_WORKSPACE. A parsed file's tensors must lie inside the buffer, tile the data in order with sizes that
 * match their shapes, be found by name, and convert (their first rows) without a read past the buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

static const unsigned DSIZE[3] = {4, 2, 2};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* a private copy of exactly `size` bytes, so ASan sees any read past the end */
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    size_t w = av_st_work(buf, size);
    if (!w) {
        if (!av_st_error()[0]) abort();
        free(buf);
        return 0;
    }
    if (w > size * 4 + 4096) abort(); /* the workspace grows with the header, never with its claims */
    void *work = malloc(w);
    av_st_file f;
    if (!work) { free(buf); return 0; }
    if (av_st_parse(&f, work, w - 1, buf, size) != AV_ERR_WORKSPACE) abort();
    int st = av_st_parse(&f, work, w, buf, size);
    if (st != AV_OK && st != AV_ERR_FORMAT) abort();
    if (st == AV_ERR_FORMAT && !av_st_error()[0]) abort();
    if (st == AV_OK) {
        uint64_t at = 0;
        if (f.data < buf || f.data + f.data_bytes != buf + size) abort();
        for (int i = 0; i < f.n_tensors; i++) {
            const av_st_tensor *t = &f.tensors[i];
            if (t->dtype < AV_ST_F32 || t->dtype > AV_ST_OTHER) abort();
            /* an AV_ST_OTHER tensor's element is 1, 2, 4 or 8 bytes; the float ones their own */
            uint64_t bytes = t->end - t->begin;
            int sized = t->dtype == AV_ST_OTHER ? (bytes == t->count || bytes == 2 * t->count || bytes == 4 * t->count ||
                                                   bytes == 8 * t->count)
                                                : bytes == t->count * DSIZE[t->dtype];
            if (t->begin != at || !sized || t->data != f.data + t->begin) abort();
            at = t->end;
            if (av_st_find(&f, t->name) != t) abort();
            if (t->dtype == AV_ST_OTHER) { /* kept, never converted */
                float one;
                if (av_st_rows_f32(&one, t, 0, 0) != AV_ERR_FORMAT) abort();
                continue;
            }
            uint64_t rows = t->ndim ? t->shape[0] : 1, row_len = rows ? t->count / rows : 0, take = rows < 4 ? rows : 4;
            if (take * row_len <= (1u << 16)) {
                float *out = malloc(sizeof(float) * (take * row_len ? take * row_len : 1));
                if (out && av_st_rows_f32(out, t, 0, take) != AV_OK) abort();
                if (out && rows && av_st_rows_f32(out, t, rows - 1, 1) != AV_OK) abort();
                free(out);
            }
            if (av_st_rows_f32(NULL, t, 0, 0) != AV_OK || av_st_rows_f32((float *)work, t, rows, 1) != AV_ERR_SIZE) abort();
        }
        if (at != f.data_bytes) abort();
    }
    free(work);
    free(buf);
    return 0;
}
