/* kernels_native.c: the native baseline of `make bench` (gcc -O3 -march=native).
 *
 *   kernels_native N D VARIANT [KNOB VALUE]...      (KNOB: an enum av_knob number)
 * prints one JSON object: {"matrix_ms": …, "linear_ms": … or null}, the median of repeated calls on
 * Q, K, V from the gaussian generator (std 1, seed 1), after a warm-up. bench/kernels.mjs runs it and
 * times the WASM module on the same inputs in the same run.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attnviz.h"
#include "bench_time.h"


int main(int argc, char **argv) {
    if (argc < 4 || argc % 2) {
        fprintf(stderr, "usage: kernels_native N D VARIANT [KNOB VALUE]...\n");
        return 2;
    }
    int n = atoi(argv[1]), d = atoi(argv[2]);
    av_params prm;
    if (av_params_default(&prm, atoi(argv[3])) != AV_OK) return 2;
    for (int i = 4; i + 1 < argc; i += 2) av_params_set(&prm, atoi(argv[i]), atof(argv[i + 1]));
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *V = malloc(sizeof(float) * n * d);
    float *M = malloc(sizeof(float) * n * n), *O = malloc(sizeof(float) * n * d);
    size_t wm = av_matrix_work(&prm, n, d), wl = av_linear_work(&prm, n, d, d);
    void *work = malloc((wm > wl ? wm : wl) + 64);
    if (!Q || !K || !V || !M || !O || !work) return 3;
    av_generate(Q, K, V, n, d, AV_GEN_GAUSSIAN, 1.0, 1);
    int st = av_matrix(M, Q, K, n, d, &prm, work, wm);
    if (st < 0) {
        fprintf(stderr, "kernels_native: %s\n", av_status_string(st));
        return 1;
    }
    double matrix_ms, linear_ms = -1, chunk_ms = -1;
    TIME_MEDIAN(matrix_ms, 5, 300, av_matrix(M, Q, K, n, d, &prm, work, wm));
    if (av_linear(O, Q, K, V, n, d, d, &prm, work, wl) >= 0)
        TIME_MEDIAN(linear_ms, 5, 300, av_linear(O, Q, K, V, n, d, d, &prm, work, wl));
    size_t wc = av_chunkwise_work(&prm, n, d, d); /* the chunkwise form, where the variant has one (causal) */
    void *cwork = wc ? malloc(wc) : NULL;
    if (cwork && av_chunkwise(O, Q, K, V, n, d, d, &prm, cwork, wc) >= 0)
        TIME_MEDIAN(chunk_ms, 5, 300, av_chunkwise(O, Q, K, V, n, d, d, &prm, cwork, wc));
    printf("{\"matrix_ms\": %.4f", matrix_ms);
    if (linear_ms < 0) printf(", \"linear_ms\": null");
    else printf(", \"linear_ms\": %.4f", linear_ms);
    if (chunk_ms < 0) printf(", \"chunkwise_ms\": null}\n");
    else printf(", \"chunkwise_ms\": %.4f}\n", chunk_ms);
    free(Q); free(K); free(V); free(M); free(O); free(work); free(cwork);
    return 0;
}
