/* lolcats.c: the hybrid class (docs/variant-formulas.md "lolcats"), LoLCATs' conventions: for row i (causal) the
 * W most recent keys i − W < j ≤ i get exp(scale·q_i·k_j − m_i), m_i the largest of those logits (so the largest
 * window term is 1), the older ones j ≤ i − W Hedgehog's φ(q_i)·φ(k_j) with the softmax-normalised map
 * φ(x) = [softmax(u), softmax(−u)], u = W_hᵀx (each half sums to 1: φ·φ ∈ (0, 2]); one row sum divides both.
 *
 *   matrix     row by row in float64: the window's terms, then the old keys' φ products, divided by their sum
 *              (≥ 1, the window's largest term): nothing to stabilise beyond m_i.
 *   recurrent  a cache of the last W keys and values plus a float64 state S = Σ φ(k_j) v_jᵀ, z = Σ φ(k_j) over
 *              the keys that left the window (bounded: every φ entry is ≤ 1, no rescaling); query t adds φ(q_t)ᵀS
 *              and φ(q_t)·z to the window's sums. av_linear runs this scan too.
 *
 * Every function receives resolved knobs (window 0 or ≥ n: every key in the window, i.e. causal softmax) and
 * checked inputs; attention.c and linear.c own the entry points, statuses and workspace checks.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* The window length in effect: 0 (no window) or anything ≥ n reaches every key. */
static int window_of(const av_params *p, int n) { return p->window <= 0 || p->window > n ? n : p->window; }
static int cols_of(const av_params *p, int d) { return p->hedgehog_w ? p->hedgehog_cols : d; }

static double dot_ff(const float *a, const float *b, int len) {
    double s = 0;
    for (int c = 0; c < len; c++) s += (double)a[c] * b[c];
    return s;
}
static double dot_dd(const double *a, const double *b, int len) {
    double s = 0;
    for (int c = 0; c < len; c++) s += a[c] * b[c];
    return s;
}

/* φ of one row from u (cols): [softmax(u), softmax(−u)] into f (2·cols), each half by its own maximum. */
static void softmax_halves(double *f, const double *u, int cols) {
    double hi = u[0], lo = u[0], sp = 0, sn = 0;
    for (int c = 1; c < cols; c++) hi = u[c] > hi ? u[c] : hi, lo = u[c] < lo ? u[c] : lo;
    for (int c = 0; c < cols; c++) sp += f[c] = exp(u[c] - hi), sn += f[cols + c] = exp(lo - u[c]);
    for (int c = 0; c < cols; c++) f[c] /= sp, f[cols + c] /= sn;
}

double avi_lolcats_log_pair(const double *uq, const double *uk, int cols) {
    /* ln Σ_c p_c(q)p_c(k) + ln-sum of the negative half, every exponent taken relative to its log-normaliser */
    double hq = uq[0], lq = uq[0], hk = uk[0], lk = uk[0], sq = 0, sk = 0, nq = 0, nk = 0;
    for (int c = 1; c < cols; c++) {
        hq = uq[c] > hq ? uq[c] : hq, lq = uq[c] < lq ? uq[c] : lq;
        hk = uk[c] > hk ? uk[c] : hk, lk = uk[c] < lk ? uk[c] : lk;
    }
    for (int c = 0; c < cols; c++) {
        sq += exp(uq[c] - hq), sk += exp(uk[c] - hk);
        nq += exp(lq - uq[c]), nk += exp(lk - uk[c]);
    }
    const double zp = hq + hk + log(sq) + log(sk), zn = -lq - lk + log(nq) + log(nk); /* ln Z(q)Z(k) per half */
    double big = -INFINITY, t = 0;
    for (int c = 0; c < cols; c++) {
        const double a = uq[c] + uk[c] - zp, b = -uq[c] - uk[c] - zn; /* both ≤ 0 */
        big = a > big ? a : big, big = b > big ? b : big;
    }
    for (int c = 0; c < cols; c++) t += exp(uq[c] + uk[c] - zp - big) + exp(-uq[c] - uk[c] - zn - big);
    return big + log(t);
}

void avi_lolcats_features(double *F, double *U, const float *X, const float *Wf, const double *Wd, int n, int d,
                          int cols) {
    for (int i = 0; i < n; i++) {
        double *u = U + (size_t)i * cols;
        const float *x = X + (size_t)i * d;
        if (!Wf && !Wd) {
            for (int c = 0; c < cols; c++) u[c] = x[c];
        } else {
            for (int c = 0; c < cols; c++) u[c] = 0;
            for (int f = 0; f < d; f++) {
                double xf = x[f];
                if (xf == 0) continue;
                if (Wd)
                    for (int c = 0; c < cols; c++) u[c] += xf * Wd[(size_t)f * cols + c];
                else
                    for (int c = 0; c < cols; c++) u[c] += xf * Wf[(size_t)f * cols + c];
            }
        }
        softmax_halves(F + (size_t)i * 2 * cols, u, cols);
    }
}

typedef struct lbufs {
    double *Fq, *Fk;  /* matrix: n×2cols features; recurrent: one row (the query's, then the leaving key's) */
    double *Uq, *Uk;  /* u = W_hᵀx: matrix n×cols each; recurrent one row each */
    double *x;        /* matrix: a row's terms (n); recurrent: the window's logits (W) */
    double *S, *z, *acc; /* recurrent: state 2cols×dv, z 2cols, output dv */
} lbufs;

static void llayout(lbufs *b, avi_arena *a, const av_params *p, int n, int d, int dv, int path) {
    memset(b, 0, sizeof *b);
    const uint64_t cols = (uint64_t)cols_of(p, d), r = 2u * cols, rows = path == AVI_LOLCATS_MATRIX ? (uint64_t)n : 1;
    b->Fq = avi_take(a, 8u * rows * r);
    b->Fk = avi_take(a, 8u * rows * r);
    b->Uq = avi_take(a, 8u * rows * cols);
    b->Uk = avi_take(a, 8u * rows * cols);
    if (path == AVI_LOLCATS_MATRIX) {
        b->x = avi_take(a, 8u * (uint64_t)n);
        return;
    }
    b->x = avi_take(a, 8u * (uint64_t)window_of(p, n));
    b->S = avi_take(a, 8u * r * (uint64_t)dv);
    b->z = avi_take(a, 8u * r);
    b->acc = avi_take(a, 8u * (uint64_t)dv);
}

uint64_t avi_lolcats_need(const av_params *p, int n, int d, int dv, int path) {
    avi_arena a = avi_arena_count();
    lbufs b;
    llayout(&b, &a, p, n, d, path == AVI_LOLCATS_MATRIX ? 1 : dv, path);
    return a.used;
}

int avi_lolcats_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    avi_arena a = avi_arena_over(work);
    lbufs b;
    llayout(&b, &a, p, n, d, 1, AVI_LOLCATS_MATRIX);
    const int cols = cols_of(p, d), r = 2 * cols, W = window_of(p, n);
    avi_lolcats_features(b.Fq, b.Uq, Q, p->hedgehog_w, NULL, n, d, cols);
    avi_lolcats_features(b.Fk, b.Uk, K, p->hedgehog_w, NULL, n, d, cols);
    double *x = b.x;
    for (int i = 0; i < n; i++) {
        const int lo = i - W + 1 > 0 ? i - W + 1 : 0; /* the window's first key */
        const double *fq = b.Fq + (size_t)i * r;
        double mx = -INFINITY, sum = 0;
        for (int j = lo; j <= i; j++) {
            x[j] = p->scale * dot_ff(Q + (size_t)i * d, K + (size_t)j * d, d);
            mx = x[j] > mx ? x[j] : mx;
        }
        for (int j = lo; j <= i; j++) sum += x[j] = exp(x[j] - mx);
        for (int j = 0; j < lo; j++) sum += x[j] = dot_dd(fq, b.Fk + (size_t)j * r, r);
        float *row = M + (size_t)i * n;
        for (int j = 0; j <= i; j++) row[j] = (float)(x[j] / sum);
        if (i + 1 < n) memset(row + i + 1, 0, sizeof(float) * (size_t)(n - i - 1));
    }
    return AV_OK;
}

int avi_lolcats_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                    void *work) {
    avi_arena a = avi_arena_over(work);
    lbufs b;
    llayout(&b, &a, p, n, d, dv, AVI_LOLCATS_RECURRENT);
    const int cols = cols_of(p, d), r = 2 * cols, W = window_of(p, n);
    memset(b.S, 0, sizeof(double) * (size_t)r * dv);
    memset(b.z, 0, sizeof(double) * (size_t)r);
    for (int t = 0; t < n; t++) {
        const int lo = t - W + 1 > 0 ? t - W + 1 : 0;
        if (lo > 0) { /* key lo − 1 leaves the cache for the state */
            const int j = lo - 1;
            const float *v = V + (size_t)j * dv;
            avi_lolcats_features(b.Fk, b.Uk, K + (size_t)j * d, p->hedgehog_w, NULL, 1, d, cols);
            for (int e = 0; e < r; e++) {
                const double f = b.Fk[e];
                double *s = b.S + (size_t)e * dv;
                for (int c = 0; c < dv; c++) s[c] += f * v[c];
                b.z[e] += f;
            }
        }
        double mx = -INFINITY, den = 0;
        for (int j = lo; j <= t; j++) {
            double s = p->scale * dot_ff(Q + (size_t)t * d, K + (size_t)j * d, d);
            b.x[j - lo] = s;
            mx = s > mx ? s : mx;
        }
        for (int c = 0; c < dv; c++) b.acc[c] = 0;
        if (lo > 0) { /* the old keys: φ(q)ᵀS over φ(q)·z */
            avi_lolcats_features(b.Fq, b.Uq, Q + (size_t)t * d, p->hedgehog_w, NULL, 1, d, cols);
            for (int e = 0; e < r; e++) {
                const double f = b.Fq[e], *s = b.S + (size_t)e * dv;
                den += f * b.z[e];
                for (int c = 0; c < dv; c++) b.acc[c] += f * s[c];
            }
        }
        for (int j = lo; j <= t; j++) {
            const double w = exp(b.x[j - lo] - mx);
            const float *v = V + (size_t)j * dv;
            den += w;
            for (int c = 0; c < dv; c++) b.acc[c] += w * v[c];
        }
        float *o = O + (size_t)t * dv;
        for (int c = 0; c < dv; c++) o[c] = (float)(b.acc[c] / den);
    }
    return AV_OK;
}
