/* swap_native.c: native timing of "what the model loses" (gcc -O3 -march=native; figures printed, never
 * asserted). bench/swap.mjs builds and runs it beside the WASM module in the same run, the sides alternating.
 *
 *   swap_native pass CHECKPOINT N
 *     av_forward_swapped over N token ids (BOS, then id (37·t) mod vocab) with every head elu+1 (causal), by
 *     the matrix path and the recurrent path, and with every head kept:
 *     {"name": "swap/<elu-matrix|elu-recurrent|kept>/native", "n": N, "ms": …}
 *   swap_native distill CHECKPOINT STEPS CHUNK ID…
 *     the page's distillation of every head: av_forward over the ids (Q, K captured), then per head W from
 *     the identity (d×d) and STEPS steps of av_distill (Hedgehog, causal, lr 0.05) in calls of CHUNK steps:
 *     {"name": "swap/distill-all/native", "n": n, "ms": …, "loss_after": the mean over the heads}
 *   swap_native continue CHECKPOINT STEPS ID…
 *     greedy continuations of STEPS tokens after the prompt ID…: the original's (av_continue_swapped, heads
 *     NULL: av_forward on its KV cache), the same tokens by a whole pass per token (av_forward from position
 *     0 for each token: what av_continue_swapped did for the original before it kept the cache), and with
 *     elu+1 in every head (matrix path, a whole swapped pass per token):
 *     {"name": "swap/continue-<kept|kept-rerun|elu>/native", "n": prompt length, "ms": …, "tokens": …}
 * Each figure is the median of calls (bench_time.h).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnviz.h"
#include "bench_time.h"

static void *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(*len ? *len : 1);
    if (!buf || fread(buf, 1, *len, f) != *len) return fclose(f), free(buf), NULL;
    fclose(f);
    return buf;
}

static int pass(const av_model *m, int n) {
    if (n < 1 || n > m->seq_len) return 2;
    int *ids = malloc(sizeof(int) * n), LH = m->n_layers * m->n_heads;
    for (int t = 0; t < n; t++) ids[t] = t ? (37 * t) % m->vocab_size : 1;
    av_params elu;
    av_params_default(&elu, AV_ELU);
    elu.causal = 1;
    const av_params **all = malloc(sizeof *all * LH);
    for (int i = 0; i < LH; i++) all[i] = &elu;
    float *lg = malloc(sizeof(float) * n * m->vocab_size);
    const char *names[3] = {"elu-matrix", "elu-recurrent", "kept"};
    for (int c = 0; c < 3; c++) {
        const av_params *const *heads = c == 2 ? NULL : all;
        int path = c == 1 ? AV_SWAP_RECURRENT : AV_SWAP_MATRIX;
        size_t wb = av_forward_swapped_work(m, n, heads, path);
        void *w = malloc(wb);
        double ms;
        TIME_MEDIAN(ms, 3, 400, av_forward_swapped(lg, NULL, NULL, NULL, m, ids, n, heads, path, NULL, w, wb));
        printf("{\"name\": \"swap/%s/native\", \"n\": %d, \"ms\": %.4f}\n", names[c], n, ms);
        free(w);
    }
    free(lg), free(all), free(ids);
    return 0;
}

/* The capture, then every head's distillation; the mean over the heads of the loss after the last step. */
static double distill_all(const av_model *m, const int *ids, int n, int steps, int chunk, float *Q, float *K,
                          void *fw, size_t fwb, double *W, double *mom, double *loss, void *dw, size_t dwb,
                          float *hq, float *hk, const av_params *prm) {
    const int L = m->n_layers, H = m->n_heads, KVH = m->n_kv_heads, d = m->head_size;
    if (av_forward(Q, K, NULL, NULL, m, ids, 0, n, fw, fwb) != AV_OK) return -1;
    double sum = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            int kvh = h / (H / KVH);
            memcpy(hq, Q + ((size_t)l * H + h) * n * d, sizeof(float) * n * d);
            memcpy(hk, K + ((size_t)l * KVH + kvh) * n * d, sizeof(float) * n * d);
            for (int i = 0; i < d * d; i++) W[i] = i % (d + 1) == 0;
            for (int t = 0; t < steps; t += chunk) {
                int k = steps - t < chunk ? steps - t : chunk;
                if (av_distill(W, mom, t, loss, k, 0.05, d, hq, hk, n, d, prm, dw, dwb) < 0) return -1;
            }
            double after;
            if (av_distill_loss(&after, NULL, W, d, hq, hk, n, d, prm, dw, dwb) < 0) return -1;
            sum += after;
        }
    return sum / (L * H);
}

static int distill(const av_model *m, int steps, int chunk, const int *ids, int n) {
    const int L = m->n_layers, H = m->n_heads, KVH = m->n_kv_heads, d = m->head_size;
    av_params prm;
    av_params_default(&prm, AV_HEDGEHOG);
    prm.causal = 1;
    size_t fwb = av_forward_work(m), dwb = av_distill_work(&prm, n, d, d);
    void *fw = malloc(fwb), *dw = malloc(dwb);
    float *Q = malloc(sizeof(float) * L * H * n * d), *K = malloc(sizeof(float) * L * KVH * n * d);
    float *hq = malloc(sizeof(float) * n * d), *hk = malloc(sizeof(float) * n * d);
    double *W = malloc(sizeof(double) * d * d), *mom = malloc(sizeof(double) * 2 * d * d);
    double *loss = malloc(sizeof(double) * chunk), ms, after = 0;
    TIME_MEDIAN(ms, 3, 2000,
                after = distill_all(m, ids, n, steps, chunk, Q, K, fw, fwb, W, mom, loss, dw, dwb, hq, hk, &prm));
    if (after < 0) return 1;
    printf("{\"name\": \"swap/distill-all/native\", \"n\": %d, \"ms\": %.4f, \"loss_after\": %.17g}\n", n, ms, after);
    free(fw), free(dw), free(Q), free(K), free(hq), free(hk), free(W), free(mom), free(loss);
    return 0;
}

/* The original's tokens by av_forward from position 0 for each token (no cache kept); the count. */
static int rerun(int *out, const av_model *m, const int *prompt, int n, int steps, float *lg, void *fw, size_t fwb) {
    memcpy(out, prompt, sizeof(int) * n);
    int last = n + steps > m->seq_len ? m->seq_len : n + steps;
    while (n < last) {
        if (av_forward(NULL, NULL, NULL, lg, m, out, 0, n, fw, fwb) != AV_OK) return -1;
        int best = 0;
        for (int v = 1; v < m->vocab_size; v++)
            if (lg[v] > lg[best]) best = v;
        if (best == 1) break;
        out[n++] = best;
    }
    return n;
}

static int cont(const av_model *m, int steps, const int *prompt, int n) {
    const int LH = m->n_layers * m->n_heads;
    av_params elu;
    av_params_default(&elu, AV_ELU);
    elu.causal = 1;
    const av_params **all = malloc(sizeof *all * LH);
    for (int i = 0; i < LH; i++) all[i] = &elu;
    int *out = malloc(sizeof(int) * (n + steps)), *ref = malloc(sizeof(int) * (n + steps)), got = 0;
    float *lg = malloc(sizeof(float) * m->vocab_size);
    size_t fwb = av_forward_work(m);
    void *fw = malloc(fwb);
    double ms;
    for (int c = 0; c < 3; c++) {
        const av_params *const *heads = c == 2 ? all : NULL;
        size_t wb = av_continue_swapped_work(m, n + steps, heads, AV_SWAP_MATRIX);
        void *w = malloc(wb);
        if (c == 1) {
            TIME_MEDIAN(ms, 3, 1000, got = rerun(ref, m, prompt, n, steps, lg, fw, fwb));
            if (got < 0 || memcmp(ref, out, sizeof(int) * got) != 0) return fprintf(stderr, "rerun differs\n"), 1;
        } else {
            int st = 0;
            TIME_MEDIAN(ms, 3, 1000, st = av_continue_swapped(out, &got, m, prompt, n, steps, heads, AV_SWAP_MATRIX,
                                                             NULL, w, wb));
            if (st < 0) return fprintf(stderr, "av_continue_swapped: %d\n", st), 1;
        }
        static const char *names[3] = {"kept", "kept-rerun", "elu"};
        printf("{\"name\": \"swap/continue-%s/native\", \"n\": %d, \"ms\": %.4f, \"tokens\": %d}\n", names[c], n, ms,
               got - n);
        free(w);
    }
    free(all), free(out), free(ref), free(lg), free(fw);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    size_t len;
    void *buf = read_file(argv[2], &len);
    if (!buf) return 1;
    av_model m;
    if (av_model_parse(&m, buf, len) != AV_OK) return fprintf(stderr, "%s\n", av_model_error()), 1;
    int rc = 2;
    if (!strcmp(argv[1], "pass")) rc = pass(&m, atoi(argv[3]));
    else if (!strcmp(argv[1], "distill") || !strcmp(argv[1], "continue")) {
        int dist = argv[1][0] == 'd', first = dist ? 5 : 4, n = argc - first;
        int *ids = malloc(sizeof(int) * (n > 0 ? n : 1));
        for (int i = 0; i < n; i++) ids[i] = atoi(argv[first + i]);
        if (n >= 1 && n <= m.seq_len)
            rc = dist ? distill(&m, atoi(argv[3]), atoi(argv[4]), ids, n) : cont(&m, atoi(argv[3]), ids, n);
        free(ids);
    }
    free(buf);
    return rc;
}
