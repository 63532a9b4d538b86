/* swap_native.c: native timing of the swapped forward pass (gcc -O3 -march=native; figures printed, never
 * asserted). bench/swap.mjs builds and runs it beside the WASM module in the same run.
 *
 *   swap_native CHECKPOINT N
 * av_forward_swapped over N token ids (BOS, then id (37·t) mod vocab) with every head elu+1 (causal), by the
 * matrix path and the recurrent path, and with every head kept. One JSON line each:
 * {"name": "swap/<elu-matrix|elu-recurrent|kept>/native", "n": N, "ms": …}, the median of calls.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attnviz.h"
#include "bench_time.h"

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 1;
    fseek(f, 0, SEEK_END);
    size_t len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(len);
    if (!buf || fread(buf, 1, len, f) != len) return 1;
    fclose(f);
    av_model m;
    if (av_model_parse(&m, buf, len) != AV_OK) return fprintf(stderr, "%s\n", av_model_error()), 1;
    int n = atoi(argv[2]);
    if (n < 1 || n > m.seq_len) return 2;
    int *ids = malloc(sizeof(int) * n), LH = m.n_layers * m.n_heads;
    for (int t = 0; t < n; t++) ids[t] = t ? (37 * t) % m.vocab_size : 1;
    av_params elu;
    av_params_default(&elu, AV_ELU);
    elu.causal = 1;
    const av_params **all = malloc(sizeof *all * LH);
    for (int i = 0; i < LH; i++) all[i] = &elu;
    float *lg = malloc(sizeof(float) * n * m.vocab_size);
    const char *names[3] = {"elu-matrix", "elu-recurrent", "kept"};
    for (int c = 0; c < 3; c++) {
        const av_params *const *heads = c == 2 ? NULL : all;
        int path = c == 1 ? AV_SWAP_RECURRENT : AV_SWAP_MATRIX;
        size_t wb = av_forward_swapped_work(&m, n, heads, path);
        void *w = malloc(wb);
        double ms;
        TIME_MEDIAN(ms, 3, 400, av_forward_swapped(lg, NULL, NULL, NULL, &m, ids, n, heads, path, NULL, w, wb));
        printf("{\"name\": \"swap/%s/native\", \"n\": %d, \"ms\": %.4f}\n", names[c], n, ms);
        free(w);
    }
    free(lg), free(all), free(ids), free(buf);
    return 0;
}
