/* kernels_native.c: the native baseline of `make bench` (gcc -O3 -march=native).
 *
 *   kernels_native N D VARIANT [KNOB VALUE]...      (KNOB: an enum av_knob number)
 * KNOB −1 gives a gated family gate arrays with VALUE channels (1 or D): α ~ U[0.9, 0.999] (av_gates_uniform,
 * seed 7), β ~ U[0.2, 1.5] (seed 8) and for dplr a = −k̂, b = k̂/2 (k̂ = k/‖k‖): the same arrays as
 * bench/kernels.mjs gives the WASM side.
 * prints one JSON object: {"matrix_ms": …, "linear_ms": … or null}, the median of repeated calls on
 * Q, K, V from the gaussian generator (std 1, seed 1), after a warm-up.
 *   kernels_native readouts N D B
 * prints {"readouts_ms", "summarised_ms", "summary_ms", "downsample_ms"}: the plain readouts
 * (av_readouts_rows, no spectrum) of the focused matrix at its defaults against the softmax reference and V,
 * the same against a kept reference summary (av_readouts_summarised), making that summary, and the heatmap
 * cells of M − A by B×B blocks (av_downsample). bench/kernels.mjs runs it and times the WASM module on the
 * same inputs in the same run.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnviz.h"
#include "bench_time.h"


/* kernels_native readouts N D B: the page's per-frame readouts and heatmap cells (see above). */
static int readouts_main(int n, int d, int b) {
    av_params prm, ref;
    av_params_default(&prm, AV_FOCUSED);
    av_params_default(&ref, AV_SOFTMAX);
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *V = malloc(sizeof(float) * n * d);
    float *M = malloc(sizeof(float) * n * n), *A = malloc(sizeof(float) * n * n), *cells = malloc(sizeof(float) * n * n);
    size_t wm = av_matrix_work(&prm, n, d), wa = av_matrix_work(&ref, n, d), wr = av_readouts_work(n, d);
    size_t sb = av_reference_summary_bytes(n), wd = av_downsample_work(n, b), w = wm;
    w = w > wa ? w : wa;
    w = w > wr ? w : wr;
    w = w > wd ? w : wd;
    void *work = malloc(w), *summary = malloc(sb);
    double *rows = malloc(sizeof(double) * n), vals[AV_R_COUNT];
    int reasons[AV_R_COUNT];
    if (!Q || !K || !V || !M || !A || !cells || !work || !summary || !rows) return 3;
    av_generate(Q, K, V, n, d, AV_GEN_GAUSSIAN, 1.0, 1);
    if (av_matrix(M, Q, K, n, d, &prm, work, wm) < 0 || av_matrix(A, Q, K, n, d, &ref, work, wa) < 0) return 1;
    double readouts_ms, summarised_ms, summary_ms, downsample_ms;
    TIME_MEDIAN(readouts_ms, 5, 300, av_readouts_rows(vals, reasons, rows, M, NULL, 0, A, V, n, d, 0, 0, work, wr));
    TIME_MEDIAN(summary_ms, 5, 300, av_reference_summary(summary, sb, A, V, n, d, 0, work, wr));
    TIME_MEDIAN(summarised_ms, 5, 300,
                av_readouts_summarised(vals, reasons, rows, M, NULL, 0, A, V, summary, sb, n, d, 0, 0, work, wr));
    TIME_MEDIAN(downsample_ms, 5, 300, av_downsample(cells, M, A, n, b, AV_DS_MEAN, work, wd));
    printf("{\"readouts_ms\": %.4f, \"summarised_ms\": %.4f, \"summary_ms\": %.4f, \"downsample_ms\": %.4f}\n",
           readouts_ms, summarised_ms, summary_ms, downsample_ms);
    free(Q); free(K); free(V); free(M); free(A); free(cells); free(work); free(summary); free(rows);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && !strcmp(argv[1], "readouts")) return readouts_main(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    if (argc < 4 || argc % 2) {
        fprintf(stderr, "usage: kernels_native N D VARIANT [KNOB VALUE]...\n");
        return 2;
    }
    int n = atoi(argv[1]), d = atoi(argv[2]);
    av_params prm;
    if (av_params_default(&prm, atoi(argv[3])) != AV_OK) return 2;
    int channels = 0;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (atoi(argv[i]) == -1) channels = atoi(argv[i + 1]);
        else av_params_set(&prm, atoi(argv[i]), atof(argv[i + 1]));
    }
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *V = malloc(sizeof(float) * n * d);
    float *M = malloc(sizeof(float) * n * n), *O = malloc(sizeof(float) * n * d);
    if (!Q || !K || !V || !M || !O) return 3;
    av_generate(Q, K, V, n, d, AV_GEN_GAUSSIAN, 1.0, 1);
    float *g = NULL, *beta = NULL, *a = NULL, *b = NULL;
    if (channels > 0) {
        g = malloc(sizeof(float) * n * channels), beta = malloc(sizeof(float) * n);
        a = malloc(sizeof(float) * n * d), b = malloc(sizeof(float) * n * d);
        if (!g || !beta || !a || !b) return 3;
        av_gates_uniform(g, n, channels, 0.9, 0.999, 7);
        av_betas_uniform(beta, n, 0.2, 1.5, 8);
        av_params_set_gates(&prm, g, n, channels, beta);
        if (prm.variant == AV_DPLR) {
            for (int t = 0; t < n; t++) {
                double ss = 0;
                for (int c = 0; c < d; c++) ss += (double)K[t * d + c] * K[t * d + c];
                double inv = ss > 0 ? 1 / sqrt(ss) : 0;
                for (int c = 0; c < d; c++) {
                    a[t * d + c] = (float)(-K[t * d + c] * inv);
                    b[t * d + c] = (float)(0.5 * K[t * d + c] * inv);
                }
            }
            av_params_set_dplr(&prm, a, b, n);
        }
    }
    /* sized after the gates: a gated family's constant case runs as another variant, with its workspace */
    size_t wm = av_matrix_work(&prm, n, d), wl = av_linear_work(&prm, n, d, d);
    void *work = malloc((wm > wl ? wm : wl) + 64);
    if (!work) return 3;
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
    free(Q); free(K); free(V); free(M); free(O); free(work); free(cwork); free(g); free(beta); free(a); free(b);
    return 0;
}
