/* spectrum_native.c: native timing of the spectrum routes (gcc -O3 -march=native; figures printed,
 * never asserted). bench/spectrum.mjs builds and runs it beside the WASM module in the same run.
 *
 *   spectrum_native [N...]      (default 256 512 1024)
 * For each n: the softmax matrix of gaussian Q, K (n×64, std 1, seed 1) through the fast and the
 * accurate route; then the factor route on the ELU factors L, R (n = 4096, d = r = 64). One JSON line
 * per timing: {"name": "spectrum/fast/native", "n": …, "d": 64, "ms": …}, the median of repeated calls.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attnviz.h"
#include "bench_time.h"


enum { D = 64 };

static void qk(float **Q, float **K, int n) {
    *Q = malloc(sizeof(float) * n * D);
    *K = malloc(sizeof(float) * n * D);
    float *V = malloc(sizeof(float) * n * D);
    av_generate(*Q, *K, V, n, D, AV_GEN_GAUSSIAN, 1.0, 1);
    free(V);
}

static int bench_full(int n) {
    float *Q, *K, *M = malloc(sizeof(float) * n * n);
    qk(&Q, &K, n);
    av_params prm;
    av_params_default(&prm, AV_SOFTMAX);
    size_t wm = av_matrix_work(&prm, n, D), wf = av_svd_work(n, AV_SVD_FAST), wa = av_svd_work(n, AV_SVD_ACCURATE);
    size_t wb = wm > wf ? wm : wf;
    wb = wb > wa ? wb : wa;
    void *work = malloc(wb);
    double *sv = malloc(sizeof(double) * n), fl, ms;
    if (!M || !work || !sv || av_matrix(M, Q, K, n, D, &prm, work, wm) < 0) return 1;
    const char *names[2] = {"fast", "accurate"};
    for (int route = 0; route < 2; route++) {
        int st = av_singular_values(sv, &fl, M, n, route, work, wb);
        if (st < 0) return 1;
        TIME_MEDIAN(ms, 3, n >= 1024 ? 1500 : 400, av_singular_values(sv, &fl, M, n, route, work, wb));
        printf("{\"name\": \"spectrum/%s/native\", \"n\": %d, \"d\": %d, \"ms\": %.4f, \"sigma1\": %.17g}\n",
               names[route], n, D, ms, sv[0]);
    }
    free(Q); free(K); free(M); free(work); free(sv);
    return 0;
}

static int bench_factor(int n) {
    float *Q, *K;
    qk(&Q, &K, n);
    av_params prm;
    av_params_default(&prm, AV_ELU);
    long r;
    if (av_factor_rank(&r, &prm, n, D) != AV_OK) return 1;
    float *L = malloc(sizeof(float) * n * r), *R = malloc(sizeof(float) * n * r);
    size_t wf = av_factors_work(&prm, n, D), ws = av_lowrank_svd_work(n, r);
    void *work = malloc(wf > ws ? wf : ws);
    double *sv = malloc(sizeof(double) * n), fl, ms;
    if (!L || !R || !work || !sv || av_factors(L, R, Q, K, n, D, &prm, work, wf) < 0) return 1;
    TIME_MEDIAN(ms, 3, 400, av_lowrank_singular_values(sv, &fl, L, R, n, r, work, ws));
    printf("{\"name\": \"spectrum/factor/native\", \"n\": %d, \"d\": %d, \"r\": %ld, \"ms\": %.4f}\n", n, D, r, ms);
    free(Q); free(K); free(L); free(R); free(work); free(sv);
    return 0;
}

int main(int argc, char **argv) {
    int sizes[16] = {256, 512, 1024}, count = 3;
    if (argc > 1) {
        count = 0;
        for (int i = 1; i < argc && count < 16; i++) sizes[count++] = atoi(argv[i]);
    }
    for (int i = 0; i < count; i++)
        if (sizes[i] < 1 || sizes[i] > AV_MAX_N || bench_full(sizes[i])) {
            fprintf(stderr, "spectrum_native: n = %d failed\n", sizes[i]);
            return 1;
        }
    if (bench_factor(4096)) {
        fprintf(stderr, "spectrum_native: factor route failed\n");
        return 1;
    }
    return 0;
}
