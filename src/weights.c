/* weights.c: products with weights as a file holds them (av_weight: F32, F16 or BF16, rows or Conv1D's
 * transposed columns, unaligned), for the Hugging Face architectures (docs/hf.md "Weights in memory").
 *
 * The weights stay in their file's precision; a block of AVI_WROWS rows is converted to float32 at a time,
 * inside the product, so a 135M-parameter BF16 model costs its 270 MB and a few kB more. The block is then
 * applied to every position of the batch while it sits in cache: the weights are read once per batch, not
 * once per token. Products are float32 in four-lane vectors summed into float64 every AVI_WCHUNK columns;
 * avi_wmatmul_ref is the plain float64 loop the tests hold it to.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

typedef float avw_f4 __attribute__((vector_size(16)));

/* the file's little-endian values are read with native loads (memcpy) */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "weights.c reads little-endian files with native loads");

#define AVI_WROWS 4     /* weight rows converted per block */
#define AVI_WCHUNK 64   /* columns summed in float32 before the float64 sum */


/* F16 bits to float32, exactly and without branches: the magnitude's bits shifted into float32's place and
 * rescaled by 2^112 (exact for normals and subnormals alike), the exponent of Inf/NaN forced to all ones. */
static inline float f16_bits(uint16_t h) {
    uint32_t mag = (uint32_t)(h & 0x7fffu) << 13;
    float f;
    memcpy(&f, &mag, 4);
    f *= 0x1p112f;
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((h & 0x7c00u) == 0x7c00u) u = 0x7f800000u | mag; /* Inf, or NaN with its payload */
    u |= (uint32_t)(h & 0x8000u) << 16;
    memcpy(&f, &u, 4);
    return f;
}

static inline float elem(const unsigned char *p, int dtype, uint64_t i) {
    if (dtype == AV_ST_F32) {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
    if (dtype == AV_ST_BF16) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    return f16_bits(h);
}

float avi_weight_at(const av_weight *w, int64_t r, int64_t c) {
    uint64_t i = w->trans ? (uint64_t)c * (uint64_t)w->ld + (uint64_t)r : (uint64_t)r * (uint64_t)w->ld + (uint64_t)c;
    return elem(w->p, w->dtype, i);
}

float avi_weight_elem(const av_weight *w, int64_t i) { return elem(w->p, w->dtype, (uint64_t)i); }

void avi_weight_vec(double *out, const av_weight *w, int len) {
    for (int i = 0; i < len; i++) out[i] = elem(w->p, w->dtype, (uint64_t)i);
}

/* count contiguous elements from element index i0 into out (float32) */
static void convert_run(float *out, const unsigned char *p, int dtype, uint64_t i0, int count) {
    if (dtype == AV_ST_F32) {
        memcpy(out, p + 4 * i0, 4 * (size_t)count);
        return;
    }
    /* 16-bit loads (the files and both targets are little-endian): clang turns the byte-wise assembly into
     * lane-by-lane byte loads, 5x slower in WebAssembly for the same bits */
    const unsigned char *q = p + 2 * i0;
    if (dtype == AV_ST_BF16) {
        for (int i = 0; i < count; i++) {
            uint16_t h;
            memcpy(&h, q + 2 * i, 2);
            uint32_t u = (uint32_t)h << 16;
            memcpy(out + i, &u, 4);
        }
        return;
    }
    for (int i = 0; i < count; i++) {
        uint16_t h;
        memcpy(&h, q + 2 * i, 2);
        out[i] = f16_bits(h);
    }
}

/* rows r0..r0+R−1 of w (each cols long) into wr[R][cols] */
static void convert_rows(float *wr, const av_weight *w, int r0, int R, int cols) {
    const unsigned char *p = w->p;
    if (!w->trans) {
        for (int r = 0; r < R; r++) convert_run(wr + (size_t)r * cols, p, w->dtype, (uint64_t)(r0 + r) * (uint64_t)w->ld, cols);
        return;
    }
    float run[AVI_WROWS];
    for (int c = 0; c < cols; c++) {
        convert_run(run, p, w->dtype, (uint64_t)c * (uint64_t)w->ld + (uint64_t)r0, R);
        for (int r = 0; r < R; r++) wr[(size_t)r * cols + c] = run[r];
    }
}

/* Σ a[c]·b[c]: float32 products in four lanes of four vectors, each AVI_WCHUNK columns summed into float64
 * in a fixed lane order (the same bits in the SIMD and scalar builds: the vector extension's operations
 * are elementwise IEEE), the tail in float64. */
static double dot(const float *a, const float *b, int cols) {
    double s = 0.0;
    int c = 0;
    for (; c + AVI_WCHUNK <= cols; c += AVI_WCHUNK) {
        avw_f4 acc[4] = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
        for (int k = 0; k < AVI_WCHUNK; k += 16)
            for (int j = 0; j < 4; j++) {
                avw_f4 x, y;
                memcpy(&x, a + c + k + 4 * j, 16);
                memcpy(&y, b + c + k + 4 * j, 16);
                acc[j] += x * y;
            }
        avw_f4 t = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        s += ((double)t[0] + (double)t[1]) + ((double)t[2] + (double)t[3]);
    }
    for (; c < cols; c++) s += (double)a[c] * (double)b[c];
    return s;
}

size_t avi_wmatmul_scratch(int T, int cols) { return ((size_t)T + AVI_WROWS) * (size_t)cols; }

void avi_wmatmul(double *out, size_t ldo, const av_weight *w, int rows, int cols, const double *x, size_t ldx, int T,
                 float *scratch) {
    float *xf = scratch, *wr = scratch + (size_t)T * cols;
    for (int t = 0; t < T; t++)
        for (int c = 0; c < cols; c++) xf[(size_t)t * cols + c] = (float)x[(size_t)t * ldx + c];
    for (int r0 = 0; r0 < rows; r0 += AVI_WROWS) {
        int R = rows - r0 < AVI_WROWS ? rows - r0 : AVI_WROWS;
        convert_rows(wr, w, r0, R, cols);
        for (int t = 0; t < T; t++)
            for (int r = 0; r < R; r++) out[(size_t)t * ldo + r0 + r] = dot(wr + (size_t)r * cols, xf + (size_t)t * cols, cols);
    }
}

void avi_wmatmul_ref(double *out, size_t ldo, const av_weight *w, int rows, int cols, const double *x, size_t ldx, int T) {
    for (int t = 0; t < T; t++)
        for (int r = 0; r < rows; r++) {
            double s = 0.0;
            for (int c = 0; c < cols; c++) s += (double)avi_weight_at(w, r, c) * x[(size_t)t * ldx + c];
            out[(size_t)t * ldo + r] = s;
        }
}

int avi_weight_finite(const av_weight *w, int64_t rows, int64_t cols, int64_t *bad_r, int64_t *bad_c) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            if (!isfinite(avi_weight_at(w, r, c))) {
                *bad_r = r, *bad_c = c;
                return 0;
            }
    return 1;
}
