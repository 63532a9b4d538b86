/* fuzz_npy.c: libFuzzer target for the .npy reader (av_npy_parse, av_npy_decode_f32) and writer.
 *
 *   clang -g -O1 -std=c11 -ffp-contract=off -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *         tests/fuzz/fuzz_npy.c src/npy.c -o build/native/fuzz_npy
 *   build/native/fuzz_npy -max_total_time=60 -max_len=4096
 *
 * Any input must give AV_OK or AV_ERR_FORMAT, never a crash or an out-of-bounds read; a parsed header
 * must describe data inside the buffer, decode must succeed on it, and writing the same shape back
 * and parsing that must give the same shape.
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
