/* blockmean.c: the heatmaps of a large low-rank map without the map. A heatmap shows an n×n matrix as
 * c×c cells, each the mean of a b×b block (docs/page.md, "Large n"). For M = L·Rᵀ the block mean is
 * bilinear in the factors: with L̄_I the mean of L's rows in row block I and R̄_J that of R's rows in
 * column block J,
 *
 *     mean_{i∈I, j∈J} M_ij = (1/|I||J|) Σ_i Σ_j L_i·R_j = L̄_I · R̄_J,
 *
 * so the c×c cells cost O(n·r) for the means and O(c²·r) for their products, never O(n²·r): at n = 4096,
 * r = 64, b = 16 that is 0.3 M + 4.2 M multiply-adds against 1.1 G for M itself. Exact for the mean (the
 * page's 'max' mode has no such identity). Means and products are summed in float64.
 *
 * av_downsample, below, gives the same cells from a matrix that is formed (and the 'max' mode, and the
 * cells of a difference M − A), in one ordered read of the matrix.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "simd.h"

static int blocks_of(int n, int b) { return (n + b - 1) / b; }

size_t av_lowrank_block_mean_work(int n, long r, int b) {
    if (n < 1 || n > AV_MAX_N || r < 1 || r > AV_MAX_FEATURE_DIM || b < 1 || b > n) return 0;
    uint64_t c = (uint64_t)blocks_of(n, b);
    avi_arena a = avi_arena_count();
    avi_take(&a, sizeof(double) * c * (uint64_t)r);
    avi_take(&a, sizeof(double) * c * (uint64_t)r);
    return a.used > SIZE_MAX ? 0 : (size_t)a.used;
}

/* Bar[I][k] = mean of X[i][k] over the rows i of block I (X n×r float, Bar c×r double). */
static void block_row_means(double *restrict Bar, const float *restrict X, int n, int r, int b) {
    int c = blocks_of(n, b);
    for (int I = 0; I < c; I++) {
        double *bar = Bar + (size_t)I * r;
        int i0 = I * b, i1 = i0 + b < n ? i0 + b : n;
        memset(bar, 0, sizeof(double) * (size_t)r);
        for (int i = i0; i < i1; i++) {
            const float *x = X + (size_t)i * r;
            for (int k = 0; k < r; k++) bar[k] += x[k];
        }
        double inv = 1.0 / (i1 - i0);
        for (int k = 0; k < r; k++) bar[k] *= inv;
    }
}

int av_lowrank_block_mean(float *out, const float *L, const float *R, int n, long r, int b, void *work,
                          size_t work_bytes) {
    if (!out || !L || !R || !work) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || r < 1 || r > AV_MAX_FEATURE_DIM || b < 1 || b > n) return AV_ERR_SIZE;
    size_t need = av_lowrank_block_mean_work(n, r, b);
    if (need == 0) return AV_ERR_TOO_LARGE;
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    int c = blocks_of(n, b), ri = (int)r;
    avi_arena a = avi_arena_over(work);
    double *Lbar = avi_take(&a, sizeof(double) * (uint64_t)c * ri);
    double *Rbar = avi_take(&a, sizeof(double) * (uint64_t)c * ri);
    block_row_means(Lbar, L, n, ri, b);
    block_row_means(Rbar, R, n, ri, b);
    for (int I = 0; I < c; I++)
        for (int J = 0; J < c; J++)
            out[(size_t)I * c + J] = (float)avs_dot_f64(Lbar + (size_t)I * ri, Rbar + (size_t)J * ri, ri);
    return AV_OK;
}

/* ---------------------------------------------------------------------------------------------------
 * The heatmap cells of a matrix that is formed: av_downsample. A block row of X is read row by row into
 * per-column accumulators (acc[j], j < n: float64 sums, or the float kept by the max rule), which is
 * SIMD-friendly and reads X once, in order; then each block's b columns of acc give its cell. The rules
 * (include/attnviz.h): the mean in float64; the largest entry; for X − Y the entry of largest magnitude,
 * ties to the leftmost column and then the topmost row (the column pass sees rows in order, the cell
 * pass columns in order, and each replaces only on a strictly larger magnitude). The max rules take the
 * first NaN or ±Inf they meet and keep it, so a block with a non-finite entry gives a non-finite cell.
 */
typedef float bm_f32x4 __attribute__((vector_size(16)));
typedef int32_t bm_i32x4 __attribute__((vector_size(16)));

static inline bm_f32x4 bm_load4(const float *p) { bm_f32x4 v; memcpy(&v, p, sizeof v); return v; }
static inline void bm_store4(float *p, bm_f32x4 v) { memcpy(p, &v, sizeof v); }
static inline bm_f32x4 bm_select(bm_i32x4 take, bm_f32x4 a, bm_f32x4 b) {
    return (bm_f32x4)((take & (bm_i32x4)a) | (~take & (bm_i32x4)b));
}
static inline bm_f32x4 bm_abs(bm_f32x4 x) { return (bm_f32x4)((bm_i32x4)x & 0x7fffffff); }
static inline bm_i32x4 bm_finite(bm_f32x4 x) { return bm_abs(x) <= FLT_MAX; }
static inline int finite1(float x) { return fabsf(x) <= FLT_MAX; }

/* acc[j] += x[j] (− y[j]), j < n, in float64 (the difference of two floats is exact there). */
static void column_sums(double *acc, const float *x, const float *y, int n) {
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        avs_f64x2 lo = avs_load_f32x2(x + j), hi = avs_load_f32x2(x + j + 2), a0, a1;
        if (y) lo -= avs_load_f32x2(y + j), hi -= avs_load_f32x2(y + j + 2);
        memcpy(&a0, acc + j, sizeof a0);
        memcpy(&a1, acc + j + 2, sizeof a1);
        a0 += lo, a1 += hi;
        memcpy(acc + j, &a0, sizeof a0);
        memcpy(acc + j + 2, &a1, sizeof a1);
    }
    for (; j < n; j++) acc[j] += y ? (double)x[j] - y[j] : (double)x[j];
}

/* acc[j] ← x[j] where x[j] > acc[j] or x[j] is not finite, unless acc[j] is not finite already. */
static void column_max(float *acc, const float *x, int n) {
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        bm_f32x4 a = bm_load4(acc + j), v = bm_load4(x + j);
        bm_store4(acc + j, bm_select(((v > a) | ~bm_finite(v)) & bm_finite(a), v, a));
    }
    for (; j < n; j++)
        if ((x[j] > acc[j] || !finite1(x[j])) && finite1(acc[j])) acc[j] = x[j];
}

/* acc[j] ← x[j] − y[j] where its magnitude is larger than acc[j]'s or it is not finite, unless acc[j] is
 * not finite already. */
static void column_absmax(float *acc, const float *x, const float *y, int n) {
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        bm_f32x4 a = bm_load4(acc + j), v = bm_load4(x + j) - bm_load4(y + j);
        bm_store4(acc + j, bm_select(((bm_abs(v) > bm_abs(a)) | ~bm_finite(v)) & bm_finite(a), v, a));
    }
    for (; j < n; j++) {
        float v = x[j] - y[j];
        if ((fabsf(v) > fabsf(acc[j]) || !finite1(v)) && finite1(acc[j])) acc[j] = v;
    }
}

size_t av_downsample_work(int n, int b) {
    if (n < 1 || n > AV_MAX_N || b < 1 || b > n) return 0;
    avi_arena a = avi_arena_count();
    avi_take(&a, sizeof(double) * (uint64_t)n);
    return a.used > SIZE_MAX ? 0 : (size_t)a.used;
}

int av_downsample(float *out, const float *X, const float *Y, int n, int b, int mode, void *work,
                  size_t work_bytes) {
    if (!out || !X || !work) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || b < 1 || b > n) return AV_ERR_SIZE;
    if (mode != AV_DS_MEAN && mode != AV_DS_MAX) return AV_ERR_KNOB;
    size_t need = av_downsample_work(n, b);
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    avi_arena ar = avi_arena_over(work);
    double *sum = avi_take(&ar, sizeof(double) * (uint64_t)n);
    float *keep = (float *)sum; /* the max rules keep one float per column */
    int c = blocks_of(n, b);
    for (int I = 0; I < c; I++) {
        int i0 = I * b, i1 = i0 + b < n ? i0 + b : n;
        float *cell = out + (size_t)I * c;
        if (mode == AV_DS_MEAN) {
            memset(sum, 0, sizeof(double) * (size_t)n);
            for (int i = i0; i < i1; i++)
                column_sums(sum, X + (size_t)i * n, Y ? Y + (size_t)i * n : NULL, n);
            for (int J = 0; J < c; J++) {
                int j0 = J * b, j1 = j0 + b < n ? j0 + b : n;
                double s = 0.0;
                for (int j = j0; j < j1; j++) s += sum[j];
                cell[J] = (float)(s / ((double)(i1 - i0) * (j1 - j0)));
            }
            continue;
        }
        for (int j = 0; j < n; j++) keep[j] = Y ? 0.0f : -FLT_MAX;
        for (int i = i0; i < i1; i++) {
            if (Y) column_absmax(keep, X + (size_t)i * n, Y + (size_t)i * n, n);
            else column_max(keep, X + (size_t)i * n, n);
        }
        for (int J = 0; J < c; J++) {
            int j0 = J * b, j1 = j0 + b < n ? j0 + b : n;
            float m = keep[j0];
            for (int j = j0 + 1; j < j1; j++) {
                float v = keep[j];
                int larger = Y ? fabsf(v) > fabsf(m) : v > m;
                if ((larger || !finite1(v)) && finite1(m)) m = v;
            }
            cell[J] = m;
        }
    }
    return AV_OK;
}
