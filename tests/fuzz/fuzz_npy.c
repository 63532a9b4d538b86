/* fuzz_npy.c: libFuzzer target for the .npy reader (av_npy_parse, av_npy_decode_f32) and writer.
 *
 *   clang -g -O1 -std=c11 -ffp-contract=off -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *         tests/fuzz/fuzz_npy.c src/npy.c -o build/fuzz/fuzz_npy
 *   build/fuzz/fuzz_npy -max_total_time=60 -dict=tests/fuzz/npy.dict build/fuzz/corpus_npy
 *   (make fuzz FUZZ_SECONDS=60 does both, after copying the seeds of tests/fuzz/corpus_npy, written by
 *   tests/fuzz/make_npy_corpus.py, into build/fuzz/corpus_npy)
 *
 * Any input must give AV_OK or AV_ERR_FORMAT, never a crash or an out-of-bounds read; a parsed header
 * must describe data inside the buffer and hold no NUL byte (numpy refuses one), decode must succeed on it,
 * and writing the same shape back and parsing that must give the same shape.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    av_npy_info info;
    /* a private copy of exactly `size` bytes, so ASan sees any read past the end */
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    int st = av_npy_parse(&info, buf, size);
    if (st != AV_OK && st != AV_ERR_FORMAT) abort();
    if (st == AV_OK) {
        if (info.data_offset > size || info.count * (size_t)info.dtype_bytes > size - info.data_offset) abort();
        size_t start = buf[6] == 1 ? 10 : 12; /* numpy refuses a header holding a NUL byte; so must we */
        if (info.data_offset < start || memchr(buf + start, 0, info.data_offset - start)) abort();
        if (info.count <= (1u << 20)) {
            float *out = malloc(sizeof(float) * (info.count ? info.count : 1));
            if (out && av_npy_decode_f32(out, &info, buf, size) != AV_OK) abort();
            free(out);
        }
        unsigned char head[512];
        size_t hl;
        if (av_npy_write_header(head, sizeof head, &hl, info.shape, info.ndim, info.dtype_bytes) != AV_OK) abort();
        av_npy_info back;
        if (av_npy_parse(&back, head, hl) != (info.count ? AV_ERR_FORMAT : AV_OK)) abort();  /* no data */
        if (info.count == 0 && (back.ndim != info.ndim || memcmp(back.shape, info.shape, sizeof info.shape))) abort();
    }
    free(buf);
    return 0;
}
