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
 */
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
