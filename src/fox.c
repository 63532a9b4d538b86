/* fox.c: the Forgetting Transformer's attention (docs/gated.md "fox"): a causal softmax over j ≤ i of the logits
 * q̃_i·k̃_j + seg(i, j), seg(i, j) = Σ_{l=j+1..i} g_l with one log-gate g_l ≤ 0 per token. Rows sum to 1.
 *
 *   matrix     row by row: the logits in float64, the bias summed from the diagonal backwards, max-subtracted.
 *   recurrent  the key/value cache: for query t an online softmax over j = t, t−1, …, 0, with c += g_j after
 *              visiting j (no state of fixed size: the cache holds every earlier token).
 *   chunkwise  the flash-attention tiling (recurrent.c's softmax_flash) with the bias: key chunks from the
 *              diagonal backwards, each row carrying seg(i, ·) from one key chunk to the next (a segment sum,
 *              no global cumsum).
 *
 * The constant gate without qk_l2norm never reaches this file: attention.c and linear.c hand it to softmax
 * with its decay (avi_gated_delegate), whose forgetting softmax is that case bit for bit. Here g NULL is the
 * constant g0 by the same code as an array.
 */
#include <math.h>
#include <string.h>

#include "gated.h"
#include "simd.h"

static double dot_ff(const float *a, const float *b, int len) {
    avs_f64x2 s0 = {0, 0}, s1 = {0, 0};
    int c = 0;
    for (; c + 4 <= len; c += 4) {
        s0 += avs_load_f32x2(a + c) * avs_load_f32x2(b + c);
        s1 += avs_load_f32x2(a + c + 2) * avs_load_f32x2(b + c + 2);
    }
    s0 += s1;
    double s = s0[0] + s0[1];
    for (; c < len; c++) s += (double)a[c] * b[c];
    return s;
}

/* y[0..len) += w·x[0..len), x float32. */
static void axpy_fd(double *restrict y, double w, const float *restrict x, int len) {
    avs_f64x2 vw = {w, w};
    int k = 0;
    for (; k + 2 <= len; k += 2) {
        avs_f64x2 yv;
        memcpy(&yv, y + k, sizeof yv);
        yv += vw * avs_load_f32x2(x + k);
        memcpy(y + k, &yv, sizeof yv);
    }
    for (; k < len; k++) y[k] += w * x[k];
}

/* y[0..len) = y·f + w·x, x float32. */
static void scale_add(double *restrict y, double f, double w, const float *restrict x, int len) {
    avs_f64x2 vf = {f, f}, vw = {w, w};
    int k = 0;
    for (; k + 2 <= len; k += 2) {
        avs_f64x2 yv;
        memcpy(&yv, y + k, sizeof yv);
        yv = yv * vf + vw * avs_load_f32x2(x + k);
        memcpy(y + k, &yv, sizeof yv);
    }
    for (; k < len; k++) y[k] = y[k] * f + w * x[k];
}


typedef struct fbufs {
    float *Qt, *Kt;      /* q̃, k̃ (n×d) */
    double *row;         /* matrix: one row's logits (n) */
    double *acc;         /* recurrent: one output (dv) */
    double *sc, *Ob;     /* chunkwise: a tile's logits C×C, the chunk's outputs C×dv */
    double *m, *l, *off; /* chunkwise: running max and sum, seg(i, end of the key chunk) (C each) */
} fbufs;

static void flayout(fbufs *b, avi_arena *a, const av_params *p, int n, int d, int dv, int path) {
    memset(b, 0, sizeof *b);
    const uint64_t C = (uint64_t)avi_chunk_of(p, n);
    b->Qt = avi_take(a, 4u * (uint64_t)n * d);
    b->Kt = avi_take(a, 4u * (uint64_t)n * d);
    if (path == AVI_GATED_MATRIX) b->row = avi_take(a, 8u * (uint64_t)n);
    else if (path == AVI_GATED_RECURRENT) b->acc = avi_take(a, 8u * (uint64_t)dv);
    else {
        b->sc = avi_take(a, 8u * C * C);
        b->Ob = avi_take(a, 8u * C * dv);
        b->m = avi_take(a, 8u * C);
        b->l = avi_take(a, 8u * C);
        b->off = avi_take(a, 8u * C);
    }
}

uint64_t avi_fox_need(const av_params *p, int n, int d, int dv, int path) {
    avi_arena a = avi_arena_count();
    fbufs b;
    flayout(&b, &a, p, n, d, path == AVI_GATED_MATRIX ? 1 : dv, path);
    return a.used;
}

int avi_fox_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    avi_arena a = avi_arena_over(work);
    fbufs b;
    flayout(&b, &a, p, n, d, 1, AVI_GATED_MATRIX);
    avi_gated_qk(b.Qt, b.Kt, Q, K, n, d, p);
    const avi_gates G = avi_gates_of(p);
    double *s = b.row;
    for (int i = 0; i < n; i++) {
        const float *q = b.Qt + (size_t)i * d;
        double c = 0, mx = -INFINITY, sum = 0;
        for (int j = i; j >= 0; j--) { /* c = seg(i, j) */
            s[j] = dot_ff(q, b.Kt + (size_t)j * d, d) + c;
            mx = s[j] > mx ? s[j] : mx;
            c += avi_gate(&G, j, 0);
        }
        for (int j = 0; j <= i; j++) sum += s[j] = exp(s[j] - mx);
        float *r = M + (size_t)i * n;
        for (int j = 0; j <= i; j++) r[j] = (float)(s[j] / sum);
        if (i + 1 < n) memset(r + i + 1, 0, sizeof(float) * (size_t)(n - i - 1));
    }
    return AV_OK;
}

/* The key/value cache: query t reads keys t, t−1, …, 0 by an online softmax (running max mx, sum l). */
static void cache(float *O, const float *V, int n, int d, int dv, const avi_gates *G, const fbufs *b) {
    double *acc = b->acc;
    for (int t = 0; t < n; t++) {
        const float *q = b->Qt + (size_t)t * d;
        double c = 0, mx = -INFINITY, l = 0;
        memset(acc, 0, sizeof(double) * (size_t)dv);
        for (int j = t; j >= 0; j--) {
            double s = dot_ff(q, b->Kt + (size_t)j * d, d) + c, f = 1;
            if (s > mx) { /* a new maximum: what is summed so far shrinks by e^{mx − s} */
                f = mx == -INFINITY ? 0 : exp(mx - s);
                mx = s;
            }
            double w = exp(s - mx);
            l = l * f + w;
            scale_add(acc, f, w, V + (size_t)j * dv, dv);
            c += avi_gate(G, j, 0);
        }
        float *o = O + (size_t)t * dv;
        for (int e = 0; e < dv; e++) o[e] = (float)(acc[e] / l);
    }
}

/* The flash tiling: for each query chunk [i0, i0 + rows), key chunks from the diagonal one back to 0. */
static void flash(float *O, const float *V, int n, int d, int dv, int C, const avi_gates *G, const fbufs *b) {
    for (int i0 = 0; i0 < n; i0 += C) {
        const int rows = n - i0 < C ? n - i0 : C;
        memset(b->Ob, 0, sizeof(double) * (size_t)rows * dv);
        for (int j0 = i0; j0 >= 0; j0 -= C) {
            const int cols = j0 == i0 ? rows : C;
            for (int a = 0; a < rows; a++) {
                const int i = i0 + a, last = j0 == i0 ? a : cols - 1; /* the diagonal tile: keys j ≤ i */
                const float *q = b->Qt + (size_t)i * d;
                double *s = b->sc + (size_t)a * C, c = j0 == i0 ? 0 : b->off[a], mx = j0 == i0 ? -INFINITY : b->m[a];
                for (int k = last; k >= 0; k--) { /* c = seg(i, j0 + k) */
                    s[k] = dot_ff(q, b->Kt + (size_t)(j0 + k) * d, d) + c;
                    mx = s[k] > mx ? s[k] : mx;
                    c += avi_gate(G, j0 + k, 0);
                }
                b->off[a] = c; /* seg(i, j0 − 1), where the next key chunk back starts */
                double *o = b->Ob + (size_t)a * dv, shrink = 1;
                if (j0 == i0) b->l[a] = 0;
                else shrink = exp(b->m[a] - mx);
                b->l[a] *= shrink;
                for (int e = 0; e < dv; e++) o[e] *= shrink;
                for (int k = 0; k <= last; k++) {
                    double w = exp(s[k] - mx);
                    b->l[a] += w;
                    axpy_fd(o, w, V + (size_t)(j0 + k) * dv, dv);
                }
                b->m[a] = mx;
            }
        }
        for (int a = 0; a < rows; a++)
            for (int e = 0; e < dv; e++) O[(size_t)(i0 + a) * dv + e] = (float)(b->Ob[(size_t)a * dv + e] / b->l[a]);
    }
}

int avi_fox_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                void *work, int path) {
    avi_arena a = avi_arena_over(work);
    fbufs b;
    flayout(&b, &a, p, n, d, dv, path);
    avi_gated_qk(b.Qt, b.Kt, Q, K, n, d, p);
    const avi_gates G = avi_gates_of(p);
    if (path == AVI_GATED_RECURRENT) cache(O, V, n, d, dv, &G, &b);
    else flash(O, V, n, d, dv, avi_chunk_of(p, n), &G, &b);
    return AV_OK;
}
