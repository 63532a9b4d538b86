/* model_native.c: native timing of the forward pass (gcc -O3 -march=native; figures printed, never
 * asserted). bench/model.mjs builds and runs it beside the WASM module in the same run.
 *
 *   model_native CHECKPOINT N...
 * For each N: av_forward over N token ids (BOS, then id (37·t) mod vocab), capturing Q, K and V. One JSON
 * line per N: {"name": "model/forward/native", "n": N, "d": head_size, "ms": …}, the median of calls.
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
    size_t wb = av_forward_work(&m);
    void *work = malloc(wb);
    for (int a = 2; a < argc; a++) {
        int n = atoi(argv[a]);
        if (n < 1 || n > m.seq_len) return 2;
        int *ids = malloc(sizeof(int) * n);
        for (int t = 0; t < n; t++) ids[t] = t ? (37 * t) % m.vocab_size : 1;
        size_t qn = (size_t)m.n_layers * m.n_heads * n * m.head_size, kn = (size_t)m.n_layers * m.n_kv_heads * n * m.head_size;
        float *Q = malloc(4 * qn), *K = malloc(4 * kn), *V = malloc(4 * kn);
        double ms;
        TIME_MEDIAN(ms, 3, 400, av_forward(Q, K, V, NULL, &m, ids, 0, n, work, wb));
        printf("{\"name\": \"model/forward/native\", \"n\": %d, \"d\": %d, \"ms\": %.4f}\n", n, m.head_size, ms);
        free(ids), free(Q), free(K), free(V);
    }
    free(work);
    free(buf);
    return 0;
}
