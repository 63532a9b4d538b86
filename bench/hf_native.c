/* hf_native.c: native timing of a Hugging Face model folder (gcc -O3 -march=native; figures printed, never
 * asserted). bench/hf.mjs builds and runs it beside the WASM module in the same run, the sides alternating.
 *
 *   hf_native run DIR N
 *     DIR/config.json and DIR/model.safetensors read into memory (not timed), then one of each:
 *       load     av_st_work + av_st_parse + av_hf_config_parse + av_hf_model_bind (max_seq N), the bind's
 *                finiteness scan of every weight included (the median of 3 calls; also parse and bind apart)
 *       forward  av_forward over N token ids (BOS 0, then (37·t) mod vocab), Q, K, V captured and the last
 *                position's logits (one call)
 *       logits   av_forward_swapped with every head kept: the logits at every position (one call)
 *     {"name": "hf/<parse|bind|load|forward|logits-all>/native", "n": N, "ms": wall, "cpu_ms": this process's CPU}
 *     {"name": "hf/memory/native", "maxrss": bytes, "file": bytes, "model": av_hf_model_bytes, "work": …}
 *   hf_native products DIR
 *     the forward pass's weight products alone, on one block of AVI_MODEL_BLOCK positions: every layer's
 *     q, k, v, o, gate, up, down by avi_wmatmul (as src/model.c calls it), against the memory bandwidth (the
 *     best of 3 reads of the file's buffer) and the weights' bytes: says whether the kernel is compute- or
 *     bandwidth-bound; the weights' conversion to float32 that every block repeats, and the block's x's; the
 *     attention of a whole N = 256 pass (every layer, head, position) on random q, k, v. Also the variants
 *     proposed in docs/performance.md ("Hugging Face models"), each checked first to give the library's bits:
 *     {"name": "hf/<bandwidth|products-KERNEL|products-wconvert-HOW|products-xconvert|attention-HEAD>/native", …}
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "attnviz.h"
#include "bench_time.h"
#include "internal.h"

/* The products mode also builds to WebAssembly (bench/hf.mjs, ATTNVIZ_HF=wasm-products: emcc as the
 * library's build, the module instantiated under node's WASI), its figures named …/wasm. */
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#define SIDE "wasm"
#define EXPORT EMSCRIPTEN_KEEPALIVE
#else
#define SIDE "native"
#define EXPORT
#endif

/* this process's CPU time in ms: on a shared machine the wall time counts the other processes' turns too, the
 * CPU time (nearly) only ours */
static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* wall and CPU ms of `call`, each the least over `calls` calls (after none: the calls are long) */
#define TIME_LEAST(wall, cpu, calls, call)                                                 \
    do {                                                                                   \
        wall = cpu = 1e300;                                                                \
        for (int k_ = 0; k_ < (calls); k_++) {                                             \
            double w0_ = now_ms(), c0_ = cpu_ms();                                         \
            call;                                                                          \
            double c_ = cpu_ms() - c0_, w_ = now_ms() - w0_;                               \
            if (w_ < wall) wall = w_;                                                      \
            if (c_ < cpu) cpu = c_;                                                        \
        }                                                                                  \
    } while (0)

static void *read_file(const char *dir, const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return fprintf(stderr, "hf_native: cannot open %s\n", path), NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(*len ? *len : 1);
    if (!buf || fread(buf, 1, *len, f) != *len) return fclose(f), free(buf), NULL;
    fclose(f);
    return buf;
}

typedef struct folder {
    void *cfg_buf, *st_buf, *st_work, *bind_work;
    size_t cfg_len, st_len, st_bytes, bind_bytes;
    av_st_file st;
    av_hf_config c;
    av_model m;
} folder;

/* parse (safetensors and config.json) then bind; the workspaces allocated on the first call */
static double parse_ms, bind_ms;
static int load(folder *f, int max_seq) {
    double t0 = now_ms();
    f->st_bytes = av_st_work(f->st_buf, f->st_len);
    if (!f->st_bytes) return fprintf(stderr, "hf_native: %s\n", av_st_error()), 1;
    if (!f->st_work) f->st_work = malloc(f->st_bytes);
    if (av_st_parse(&f->st, f->st_work, f->st_bytes, f->st_buf, f->st_len) != AV_OK)
        return fprintf(stderr, "hf_native: %s\n", av_st_error()), 1;
    if (av_hf_config_parse(&f->c, f->cfg_buf, f->cfg_len) != AV_OK) return fprintf(stderr, "hf_native: %s\n", av_model_error()), 1;
    double t1 = now_ms();
    f->bind_bytes = av_hf_model_work(&f->c);
    if (!f->bind_work) f->bind_work = malloc(f->bind_bytes);
    int st = av_hf_model_bind(&f->m, &f->c, &f->st, 1, NULL, max_seq, f->bind_work, f->bind_bytes);
    if (st != AV_OK) return fprintf(stderr, "hf_native: %s\n", av_model_error()), 1;
    double t2 = now_ms();
    parse_ms = t1 - t0, bind_ms = t2 - t1;
    return 0;
}

static int run(folder *f, int n) {
    double ms[3], cms[3], pms[3], bms[3];
    int rc = 0;
    for (int i = 0; i < 3; i++) { /* the median of 3: the load is a fraction of a second */
        double t0 = now_ms(), c0 = cpu_ms();
        if (load(f, n)) return 1;
        ms[i] = now_ms() - t0, cms[i] = cpu_ms() - c0, pms[i] = parse_ms, bms[i] = bind_ms;
    }
    qsort(ms, 3, sizeof(double), cmp_double), qsort(cms, 3, sizeof(double), cmp_double);
    qsort(pms, 3, sizeof(double), cmp_double);
    qsort(bms, 3, sizeof(double), cmp_double);
    printf("{\"name\": \"hf/parse/native\", \"n\": %d, \"ms\": %.4f}\n", n, pms[1]);
    printf("{\"name\": \"hf/bind/native\", \"n\": %d, \"ms\": %.4f}\n", n, bms[1]);
    printf("{\"name\": \"hf/load/native\", \"n\": %d, \"ms\": %.4f, \"cpu_ms\": %.4f}\n", n, ms[1], cms[1]);
    const av_model *m = &f->m;
    if (n < 1 || n > m->seq_len) return 2;
    int *ids = malloc(sizeof(int) * n);
    for (int t = 0; t < n; t++) ids[t] = t ? (37 * t) % m->vocab_size : (m->bos_id >= 0 ? m->bos_id : 0);
    const size_t L = m->n_layers, H = m->n_heads, KVH = m->n_kv_heads, d = m->head_size, V = m->vocab_size;
    float *Q = malloc(4 * L * H * n * d), *K = malloc(4 * L * KVH * n * d), *Vv = malloc(4 * L * KVH * n * d);
    float *lg = malloc(4 * (size_t)n * V);
    size_t fwb = av_forward_work(m), swb = av_forward_swapped_work(m, n, NULL, AV_SWAP_MATRIX);
    void *fw = malloc(fwb), *sw = malloc(swb);
    double wall, cpu;
    int st = 0;
    TIME_LEAST(wall, cpu, 1, st = av_forward(Q, K, Vv, lg, m, ids, 0, n, fw, fwb));
    if (st != AV_OK) fprintf(stderr, "hf_native: av_forward returned %d\n", st), rc = 1;
    printf("{\"name\": \"hf/forward/native\", \"n\": %d, \"ms\": %.4f, \"cpu_ms\": %.4f}\n", n, wall, cpu);
    TIME_LEAST(wall, cpu, 1, st = av_forward_swapped(lg, NULL, NULL, NULL, m, ids, n, NULL, AV_SWAP_MATRIX, NULL, sw, swb));
    if (st != AV_OK) fprintf(stderr, "hf_native: av_forward_swapped returned %d\n", st), rc = 1;
    printf("{\"name\": \"hf/logits-all/native\", \"n\": %d, \"ms\": %.4f, \"cpu_ms\": %.4f}\n", n, wall, cpu);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* a checksum of the logits, so both sides can be seen to compute the same model */
    double sum = 0;
    for (size_t i = 0; i < (size_t)n * V; i++) sum += lg[i];
    printf("{\"name\": \"hf/memory/native\", \"n\": %d, \"maxrss\": %.0f, \"file\": %zu, \"model\": %llu, "
           "\"forward_work\": %zu, \"swapped_work\": %zu, \"st_work\": %zu, \"bind_work\": %zu, \"logits_sum\": %.17g}\n",
           n, 1024.0 * ru.ru_maxrss, f->st_len, (unsigned long long)av_hf_model_bytes(m), fwb, swb, f->st_bytes,
           f->bind_bytes, sum);
    free(ids), free(Q), free(K), free(Vv), free(lg), free(fw), free(sw);
    return rc;
}

/* ---------------------------------------------------------------------------------------------------- */
/* the products alone */

/* The best of 3 reads of buf (64-bit sums, which gcc vectorises): bytes per ms. */
static double read_bandwidth(const void *buf, size_t len) {
    const uint64_t *p = buf;
    size_t n = len / 8;
    double best = 1e30;
    volatile uint64_t sink = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = now_ms();
        uint64_t a = 0, b = 0, c = 0, e = 0;
        size_t i = 0;
        for (; i + 4 <= n; i += 4) a += p[i], b += p[i + 1], c += p[i + 2], e += p[i + 3];
        sink += a + b + c + e;
        double t = now_ms() - t0;
        if (t < best) best = t;
    }
    (void)sink;
    return (double)len / best;
}

typedef void (*matmul_fn)(double *out, size_t ldo, const av_weight *w, int rows, int cols, const double *x, size_t ldx,
                          int T, float *scratch);

/* ---- a proposed kernel: the same sums in the same order for every output (so avi_wmatmul's bits), with a
 * 4-row × 2-position tile: each weight vector loaded once for two positions and each x vector once for four
 * rows, 32 products per 12 loads instead of per 64. Only the order across outputs changes. Its rows are
 * converted by 16-bit loads (bf16_rows_u16, below: the other proposal). */
typedef float f4 __attribute__((vector_size(16)));
#define WCHUNK 64

static inline f4 ld4(const float *p) {
    f4 v;
    memcpy(&v, p, 16);
    return v;
}

/* one output's fold of its four lane accumulators into float64, as weights.c's dot() */
static inline double fold(f4 a0, f4 a1, f4 a2, f4 a3) {
    f4 t = (a0 + a1) + (a2 + a3);
    return ((double)t[0] + (double)t[1]) + ((double)t[2] + (double)t[3]);
}

/* s[r][p] += Σ over one 64-column chunk of w[r]·x[p], for R = 4 rows and P = 2 positions: per output the
 * four accumulators acc[j] (columns 16k + 4j..+3) exactly as dot() keeps them. 32 accumulators do not fit
 * in 16 registers, so the chunk runs j by j: for each j, 8 accumulators over the 4 steps k. */
static inline void chunk_4x2(double s[4][2], const float *w0, const float *w1, const float *w2, const float *w3,
                             const float *x0, const float *x1) {
    f4 acc[4][2][4];
    for (int j = 0; j < 4; j++) {
        f4 a00 = {0, 0, 0, 0}, a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
        for (int k = 0; k < WCHUNK; k += 16) {
            int o = k + 4 * j;
            f4 y0 = ld4(x0 + o), y1 = ld4(x1 + o), v;
            v = ld4(w0 + o), a00 += v * y0, a01 += v * y1;
            v = ld4(w1 + o), a10 += v * y0, a11 += v * y1;
            v = ld4(w2 + o), a20 += v * y0, a21 += v * y1;
            v = ld4(w3 + o), a30 += v * y0, a31 += v * y1;
        }
        acc[0][0][j] = a00, acc[0][1][j] = a01, acc[1][0][j] = a10, acc[1][1][j] = a11;
        acc[2][0][j] = a20, acc[2][1][j] = a21, acc[3][0][j] = a30, acc[3][1][j] = a31;
    }
    for (int r = 0; r < 4; r++)
        for (int p = 0; p < 2; p++) s[r][p] += fold(acc[r][p][0], acc[r][p][1], acc[r][p][2], acc[r][p][3]);
}

static double dot_tail(const float *a, const float *b, int c0, int cols, double s) {
    for (int c = c0; c < cols; c++) s += (double)a[c] * (double)b[c];
    return s;
}

/* the weights.c dot() (for the edges of the tile) */
static double dot1(const float *a, const float *b, int cols) {
    double s = 0.0;
    int c = 0;
    for (; c + WCHUNK <= cols; c += WCHUNK) {
        f4 acc[4] = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
        for (int k = 0; k < WCHUNK; k += 16)
            for (int j = 0; j < 4; j++) acc[j] += ld4(a + c + k + 4 * j) * ld4(b + c + k + 4 * j);
        s += fold(acc[0], acc[1], acc[2], acc[3]);
    }
    return dot_tail(a, b, c, cols, s);
}

/* ---- the weights' conversion to float32, which every block repeats (AVI_WROWS rows at a time): weights.c's
 * (bytes assembled into a 16-bit value) and a proposed one (a 16-bit load, which compilers turn into vector
 * loads and widenings); both give the same floats. sink keeps the work from being dropped. */
static volatile float conv_sink;
static void bf16_rows_bytes(float *out, const unsigned char *q, int count) {
    for (int i = 0; i < count; i++) {
        uint32_t u = (uint32_t)(q[2 * i] | q[2 * i + 1] << 8) << 16;
        memcpy(out + i, &u, 4);
    }
}
static void bf16_rows_u16(float *out, const unsigned char *q, int count) {
    for (int i = 0; i < count; i++) {
        uint16_t h;
        memcpy(&h, q + 2 * i, 2); /* little-endian hosts: x86, ARM, WebAssembly */
        uint32_t u = (uint32_t)h << 16;
        memcpy(out + i, &u, 4);
    }
}
typedef void (*conv_fn)(float *out, const unsigned char *q, int count);
static void convert_all(conv_fn fn, const av_model *m, float *wr) {
    static const int which[7] = {AV_LW_Q, AV_LW_K, AV_LW_V, AV_LW_O, AV_LW_UP, AV_LW_GATE, AV_LW_DOWN};
    const int dim = m->dim, qd = m->n_heads * m->head_size, kvd = m->kv_dim, hd = m->hidden_dim;
    const int rows[7] = {qd, kvd, kvd, dim, hd, hd, dim}, cols[7] = {dim, dim, dim, qd, dim, dim, hd};
    for (int l = 0; l < m->n_layers; l++)
        for (int k = 0; k < 7; k++) {
            const av_weight *w = m->layer + (size_t)l * AV_LW_COUNT + which[k];
            for (int r0 = 0; r0 < rows[k]; r0 += 4)
                for (int r = 0; r < 4 && r0 + r < rows[k]; r++)
                    fn(wr + (size_t)r * cols[k], (const unsigned char *)w->p + 2 * (size_t)(r0 + r) * (size_t)w->ld, cols[k]);
            conv_sink += wr[0];
        }
}

static void wmatmul_tiled(double *out, size_t ldo, const av_weight *w, int rows, int cols, const double *x, size_t ldx,
                          int T, float *scratch) {
    float *xf = scratch, *wr = scratch + (size_t)T * cols;
    for (int t = 0; t < T; t++)
        for (int c = 0; c < cols; c++) xf[(size_t)t * cols + c] = (float)x[(size_t)t * ldx + c];
    for (int r0 = 0; r0 < rows; r0 += 4) {
        int R = rows - r0 < 4 ? rows - r0 : 4;
        /* the 4 rows in float32 by 16-bit loads (BF16 rows, not transposed: the case this bench's model has) */
        for (int r = 0; r < R; r++)
            bf16_rows_u16(wr + (size_t)r * cols, (const unsigned char *)w->p + 2 * ((size_t)(r0 + r) * (size_t)w->ld), cols);
        int t = 0;
        if (R == 4) {
            const float *w0 = wr, *w1 = wr + cols, *w2 = wr + 2 * cols, *w3 = wr + 3 * cols;
            for (; t + 2 <= T; t += 2) {
                const float *x0 = xf + (size_t)t * cols, *x1 = x0 + cols;
                double s[4][2] = {{0}};
                int c = 0;
                for (; c + WCHUNK <= cols; c += WCHUNK) chunk_4x2(s, w0 + c, w1 + c, w2 + c, w3 + c, x0 + c, x1 + c);
                for (int r = 0; r < 4; r++)
                    for (int p = 0; p < 2; p++)
                        out[(size_t)(t + p) * ldo + r0 + r] = dot_tail(wr + (size_t)r * cols, x0 + (size_t)p * cols, c, cols, s[r][p]);
            }
        }
        for (; t < T; t++)
            for (int r = 0; r < R; r++) out[(size_t)t * ldo + r0 + r] = dot1(wr + (size_t)r * cols, xf + (size_t)t * cols, cols);
    }
}

/* ---- a proposed attention: avi_model_softmax_head with the scores of 4 keys computed side by side. Each
 * score's sum runs over i in the same order (so the same bits), but the 4 chains are independent: the
 * float64 additions no longer wait on each other's latency (one chain of hs dependent adds per key is what
 * bounds the score loop, which strict IEEE order keeps the compiler from vectorising). */
static void softmax_head4(double *o, const double *q, const float *kc, const float *vc, size_t stride, int t, int hs,
                          double scale, double *att) {
    double mx = -INFINITY;
    int j = 0;
    for (; j + 4 <= t + 1; j += 4) {
        const float *k0 = kc + (size_t)j * stride, *k1 = k0 + stride, *k2 = k1 + stride, *k3 = k2 + stride;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (int i = 0; i < hs; i++) s0 += q[i] * k0[i], s1 += q[i] * k1[i], s2 += q[i] * k2[i], s3 += q[i] * k3[i];
        att[j] = s0 * scale, att[j + 1] = s1 * scale, att[j + 2] = s2 * scale, att[j + 3] = s3 * scale;
    }
    for (; j <= t; j++) {
        const float *k = kc + (size_t)j * stride;
        double s = 0.0;
        for (int i = 0; i < hs; i++) s += q[i] * k[i];
        att[j] = s * scale;
    }
    for (j = 0; j <= t; j++) mx = att[j] > mx ? att[j] : mx; /* the same max, in the same order */
    double sum = 0.0;
    for (j = 0; j <= t; j++) sum += (att[j] = exp(att[j] - mx));
    for (int i = 0; i < hs; i++) o[i] = 0.0;
    for (j = 0; j <= t; j++) {
        const float *v = vc + (size_t)j * stride;
        double a = att[j] / sum;
        for (int i = 0; i < hs; i++) o[i] += a * v[i];
    }
}

typedef void (*head_fn)(double *o, const double *q, const float *kc, const float *vc, size_t stride, int t, int hs,
                        double scale, double *att);

/* the attention of a whole pass over n positions (every layer, head and position), on random q, k, v */
static void pass_attention(head_fn fn, const av_model *m, int n, double *o, const double *q, const float *kc,
                           const float *vc, double *att) {
    const int H = m->n_heads, hs = m->head_size, kvd = m->kv_dim, group = m->n_heads / m->n_kv_heads;
    for (int l = 0; l < m->n_layers; l++)
        for (int t = 0; t < n; t++)
            for (int h = 0; h < H; h++)
                fn(o + (size_t)h * hs, q + (size_t)t * H * hs + h * hs, kc + (h / group) * hs, vc + (h / group) * hs,
                   (size_t)kvd, t, hs, 1.0 / sqrt((double)hs), att);
}

static int attention(const av_model *m, int n) {
    const int H = m->n_heads, hs = m->head_size, kvd = m->kv_dim;
    double *q = malloc(sizeof(double) * n * H * hs), *o1 = malloc(sizeof(double) * H * hs);
    double *o2 = malloc(sizeof(double) * H * hs), *att = malloc(sizeof(double) * n);
    float *kc = malloc(sizeof(float) * n * kvd), *vc = malloc(sizeof(float) * n * kvd);
    for (int i = 0; i < n * H * hs; i++) q[i] = (double)((i * 7919) % 2001 - 1000) / 400.0;
    for (int i = 0; i < n * kvd; i++) kc[i] = (float)((i * 104729) % 2003 - 1001) / 400.0f, vc[i] = (float)((i * 31) % 1999 - 999) / 1000.0f;
    for (int t = 0; t < n; t += 37) /* the bits first */
        for (int h = 0; h < H; h++) {
            avi_model_softmax_head(o1, q + (size_t)t * H * hs + h * hs, kc, vc, (size_t)kvd, t, hs, 0.125, att);
            softmax_head4(o2, q + (size_t)t * H * hs + h * hs, kc, vc, (size_t)kvd, t, hs, 0.125, att);
            if (memcmp(o1, o2, sizeof(double) * hs)) return fprintf(stderr, "hf_native: softmax_head4 differs\n"), 1;
        }
    static const struct { const char *name; head_fn fn; } heads[] = {{"avi_model_softmax_head", avi_model_softmax_head},
                                                                     {"softmax_head4", softmax_head4}};
    for (int k = 0; k < 2; k++) {
        double wall, cpu;
        TIME_LEAST(wall, cpu, 2, pass_attention(heads[k].fn, m, n, o1, q, kc, vc, att));
        printf("{\"name\": \"hf/attention-%s/" SIDE "\", \"n\": %d, \"ms\": %.4f, \"cpu_ms\": %.4f}\n", heads[k].name, n,
               wall, cpu);
    }
    free(q), free(o1), free(o2), free(att), free(kc), free(vc);
    return 0;
}

/* the products of one block of T positions through every layer, as src/model.c calls them (the inputs are
 * random rather than the layer's activations: the time does not depend on the values) */
static void block_products(matmul_fn mm, const av_model *m, int T, double *x, double *y, float *scratch) {
    const int dim = m->dim, qd = m->n_heads * m->head_size, kvd = m->kv_dim, hd = m->hidden_dim;
    for (int l = 0; l < m->n_layers; l++) {
        const av_weight *w = m->layer + (size_t)l * AV_LW_COUNT;
        mm(y, (size_t)qd, &w[AV_LW_Q], qd, dim, x, (size_t)dim, T, scratch);
        mm(y, (size_t)kvd, &w[AV_LW_K], kvd, dim, x, (size_t)dim, T, scratch);
        mm(y, (size_t)kvd, &w[AV_LW_V], kvd, dim, x, (size_t)dim, T, scratch);
        mm(y, (size_t)dim, &w[AV_LW_O], dim, qd, x, (size_t)qd, T, scratch);
        mm(y, (size_t)hd, &w[AV_LW_UP], hd, dim, x, (size_t)dim, T, scratch);
        mm(y, (size_t)hd, &w[AV_LW_GATE], hd, dim, x, (size_t)dim, T, scratch);
        mm(y, (size_t)dim, &w[AV_LW_DOWN], dim, hd, x, (size_t)hd, T, scratch);
    }
}

static int products(folder *f) {
    if (load(f, AVI_MODEL_BLOCK)) return 1;
    const av_model *m = &f->m;
    const int T = AVI_MODEL_BLOCK, dim = m->dim, qd = m->n_heads * m->head_size, kvd = m->kv_dim, hd = m->hidden_dim;
    int widest = dim > hd ? dim : hd;
    if (qd > widest) widest = qd;
    double *x = malloc(sizeof(double) * T * widest), *y = malloc(sizeof(double) * T * widest);
    double *y2 = malloc(sizeof(double) * T * widest);
    float *scratch = malloc(sizeof(float) * avi_wmatmul_scratch(T, widest));
    for (int i = 0; i < T * widest; i++) x[i] = (double)((i * 7919) % 2001 - 1000) / 1000.0;
    /* the products' size: multiply-adds and weight bytes per block (the classifier is not in the layers) */
    double macs = 0, wbytes = 0;
    const double per_layer = (double)qd * dim + 2.0 * kvd * dim + (double)dim * qd + 3.0 * hd * dim;
    macs = per_layer * m->n_layers * T;
    wbytes = per_layer * m->n_layers * (m->emb.dtype == AV_ST_F32 ? 4 : 2);
    double bw = read_bandwidth(f->st_buf, f->st_len); /* bytes per ms */
    printf("{\"name\": \"hf/bandwidth/" SIDE "\", \"bytes_per_ms\": %.0f, \"weight_bytes_per_block\": %.0f, "
           "\"macs_per_block\": %.0f, \"ms_bound\": %.4f}\n",
           bw, wbytes, macs, wbytes / bw);
    /* the bits: the tiled kernel against avi_wmatmul on every shape it meets (and an odd T, cols tail) */
    const av_weight *w0 = m->layer;
    for (int tt = 1; tt <= T; tt += 15) {
        avi_wmatmul(y, (size_t)hd, &w0[AV_LW_UP], hd, dim, x, (size_t)dim, tt, scratch);
        wmatmul_tiled(y2, (size_t)hd, &w0[AV_LW_UP], hd, dim, x, (size_t)dim, tt, scratch);
        if (memcmp(y, y2, sizeof(double) * tt * hd)) return fprintf(stderr, "hf_native: the tiled kernel differs (T %d)\n", tt), 1;
        avi_wmatmul(y, (size_t)dim, &w0[AV_LW_DOWN], dim, hd - 5, x, (size_t)hd, tt, scratch);
        wmatmul_tiled(y2, (size_t)dim, &w0[AV_LW_DOWN], dim, hd - 5, x, (size_t)hd, tt, scratch);
        if (memcmp(y, y2, sizeof(double) * tt * dim)) return fprintf(stderr, "hf_native: the tiled kernel differs (tail)\n"), 1;
    }
    static const struct { const char *name; matmul_fn fn; } kernels[] = {{"avi_wmatmul", avi_wmatmul}, {"tiled-4x2", wmatmul_tiled}};
    for (int k = 0; k < 2; k++) {
        double wall, cpu;
        TIME_LEAST(wall, cpu, 3, block_products(kernels[k].fn, m, T, x, y, scratch));
        printf("{\"name\": \"hf/products-%s/" SIDE "\", \"n\": %d, \"ms\": %.4f, \"cpu_ms\": %.4f, \"gmacs_cpu\": %.3f, "
               "\"ms_bound\": %.4f}\n", kernels[k].name, T, wall, cpu, macs / cpu / 1e6, wbytes / bw);
    }
    /* converting the weights of the layers to float32, as every block does (BF16 models) */
    if (m->layer[AV_LW_Q].dtype == AV_ST_BF16) {
        static const struct { const char *name; conv_fn fn; } convs[] = {{"bytes", bf16_rows_bytes}, {"u16", bf16_rows_u16}};
        float *a = scratch + (size_t)T * widest, *b = malloc(sizeof(float) * 4 * widest);
        const unsigned char *q = m->layer[AV_LW_UP].p;
        bf16_rows_bytes(a, q, 4 * widest > hd * dim ? hd * dim : 4 * widest);
        bf16_rows_u16(b, q, 4 * widest > hd * dim ? hd * dim : 4 * widest);
        if (memcmp(a, b, sizeof(float) * 4 * widest)) return fprintf(stderr, "hf_native: the u16 conversion differs\n"), 1;
        free(b);
        for (int k = 0; k < 2; k++) {
            double wall, cpu;
            TIME_LEAST(wall, cpu, 3, convert_all(convs[k].fn, m, a));
            printf("{\"name\": \"hf/products-wconvert-%s/" SIDE "\", \"n\": %d, \"ms\": %.4f, \"cpu_ms\": %.4f}\n",
                   convs[k].name, T, wall, cpu);
        }
    }
    /* converting the block's x to float32 (what each call repeats): its share of a block */
    double conv_ms;
    float *xf = scratch;
    TIME_MEDIAN(conv_ms, 5, 300, for (int l = 0; l < 7 * m->n_layers; l++) for (int i = 0; i < T * dim; i++) xf[i] = (float)x[i]);
    printf("{\"name\": \"hf/products-xconvert/" SIDE "\", \"n\": %d, \"ms\": %.4f}\n", T, conv_ms);
    free(x), free(y), free(y2), free(scratch);
    return attention(m, 256);
}

/* the products mode on buffers the caller filled (the WASM build's entry point) */
EXPORT int hf_products_buffers(void *cfg, size_t cfg_len, void *st, size_t st_len) {
    folder f = {0};
    f.cfg_buf = cfg, f.cfg_len = cfg_len, f.st_buf = st, f.st_len = st_len;
    int rc = products(&f);
    free(f.st_work), free(f.bind_work);
    fflush(stdout);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 3) return fprintf(stderr, "usage: hf_native run DIR N | products DIR\n"), 2;
    folder f = {0};
    f.cfg_buf = read_file(argv[2], "config.json", &f.cfg_len);
    f.st_buf = read_file(argv[2], "model.safetensors", &f.st_len);
    if (!f.cfg_buf || !f.st_buf) return 1;
    int rc = 2;
    if (!strcmp(argv[1], "run") && argc >= 4) rc = run(&f, atoi(argv[3]));
    else if (!strcmp(argv[1], "products")) rc = products(&f);
    free(f.cfg_buf), free(f.st_buf), free(f.st_work), free(f.bind_work);
    return rc;
}
