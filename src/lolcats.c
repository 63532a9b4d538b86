/* lolcats.c: the hybrid class (docs/variant-formulas.md "lolcats"): for row i (causal) the W most recent keys
 * i − W < j ≤ i get the softmax term exp(scale·q_i·k_j), the older ones j ≤ i − W Hedgehog's φ(q_i)·φ(k_j) with
 * φ(x) = [exp(u), exp(−u)], u = W_hᵀx, and no stabilising constants of its own: both parts are exps on one
 * scale, divided by one row sum. φ(q)·φ(k) = Σ_c 2·cosh(u_c(q) + u_c(k)).
 *
 *   matrix     row by row in float64: the log-terms x_ij (scale·q·k in the window, ln φ(q_i)·φ(k_j) before it,
 *              as m_q + m_k + ln(φ̃(q)·φ̃(k)) with φ̃ = exp(±u − m), m = max|u| of the row), minus the row's
 *              largest, exponentiated and normalised. Nothing overflows where M is finite.
 *   recurrent  a cache of the last W keys and values plus a float64 state S = Σ e^{m_j − m} φ̃(k_j) v_jᵀ,
 *              z = Σ e^{m_j − m} φ̃(k_j) of the keys that left the window, m the largest m_j so far (S and z
 *              rescaled when it grows); the query's linear part ℓ = m_q + m + ln(φ̃(q)·z) joins the window's
 *              logits under one row constant, the largest of them. av_linear runs this scan too.
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

/* u = W_hᵀx for one row (identity when Wf is NULL). */
static void project(double *u, const float *x, const float *Wf, int d, int cols) {
    if (!Wf) {
        for (int c = 0; c < cols; c++) u[c] = x[c];
        return;
    }
    for (int c = 0; c < cols; c++) u[c] = 0;
    for (int f = 0; f < d; f++) {
        double xf = x[f];
        if (xf != 0)
            for (int c = 0; c < cols; c++) u[c] += xf * Wf[(size_t)f * cols + c];
    }
}

double avi_lolcats_log_pair(const double *uq, const double *uk, int cols) {
    double m = 0, t = 0;
    for (int c = 0; c < cols; c++) m = fabs(uq[c] + uk[c]) > m ? fabs(uq[c] + uk[c]) : m;
    for (int c = 0; c < cols; c++) t += exp(uq[c] + uk[c] - m) + exp(-(uq[c] + uk[c]) - m);
    return m + log(t);
}

void avi_lolcats_features(double *F, double *m, const float *X, const float *Wf, const double *Wd, int n, int d,
                          int cols) {
    for (int i = 0; i < n; i++) {
        double *u = F + (size_t)i * 2 * cols, mx = 0;
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
        for (int c = 0; c < cols; c++) mx = fabs(u[c]) > mx ? fabs(u[c]) : mx;
        for (int c = 0; c < cols; c++) {
            double v = u[c];
            u[c] = exp(v - mx);
            u[cols + c] = exp(-v - mx);
        }
        m[i] = mx;
    }
}

typedef struct lbufs {
    double *Fq, *Fk, *mq, *mk; /* matrix: n×2cols stabilised features and their constants */
    double *Uq, *Uk;           /* u = W_hᵀx: matrix n×cols each; recurrent one row each */
    double *x;                 /* matrix: a row's log-terms (n); recurrent: the window's logits (W) */
    double *S, *z, *lz, *acc;  /* recurrent: state 2cols×dv, z and its per-feature log-scales 2cols, output dv */
} lbufs;

static void llayout(lbufs *b, avi_arena *a, const av_params *p, int n, int d, int dv, int path) {
    memset(b, 0, sizeof *b);
    const uint64_t cols = (uint64_t)cols_of(p, d), r = 2u * cols;
    if (path == AVI_LOLCATS_MATRIX) {
        b->Fq = avi_take(a, 8u * (uint64_t)n * r);
        b->Fk = avi_take(a, 8u * (uint64_t)n * r);
        b->mq = avi_take(a, 8u * (uint64_t)n);
        b->mk = avi_take(a, 8u * (uint64_t)n);
        b->Uq = avi_take(a, 8u * (uint64_t)n * cols);
        b->Uk = avi_take(a, 8u * (uint64_t)n * cols);
        b->x = avi_take(a, 8u * (uint64_t)n);
        return;
    }
    b->Uq = avi_take(a, 8u * cols);
    b->Uk = avi_take(a, 8u * cols);
    b->x = avi_take(a, 8u * (uint64_t)window_of(p, n));
    b->S = avi_take(a, 8u * r * (uint64_t)dv);
    b->z = avi_take(a, 8u * r);
    b->lz = avi_take(a, 8u * r);
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
    avi_lolcats_features(b.Fq, b.mq, Q, p->hedgehog_w, NULL, n, d, cols);
    avi_lolcats_features(b.Fk, b.mk, K, p->hedgehog_w, NULL, n, d, cols);
    for (int i = 0; i < n; i++) {
        project(b.Uq + (size_t)i * cols, Q + (size_t)i * d, p->hedgehog_w, d, cols);
        project(b.Uk + (size_t)i * cols, K + (size_t)i * d, p->hedgehog_w, d, cols);
    }
    double *x = b.x;
    for (int i = 0; i < n; i++) {
        const int lo = i - W + 1 > 0 ? i - W + 1 : 0; /* the window's first key */
        const double *fq = b.Fq + (size_t)i * r;
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < lo; j++) {
            double t = dot_dd(fq, b.Fk + (size_t)j * r, r);
            /* below AVI_LOLCATS_TINY some products may have underflowed (u(q) and u(k) cancel): directly */
            x[j] = t >= AVI_LOLCATS_TINY ? b.mq[i] + b.mk[j] + log(t)
                                         : avi_lolcats_log_pair(b.Uq + (size_t)i * cols, b.Uk + (size_t)j * cols, cols);
            mx = x[j] > mx ? x[j] : mx;
        }
        for (int j = lo; j <= i; j++) {
            x[j] = p->scale * dot_ff(Q + (size_t)i * d, K + (size_t)j * d, d);
            mx = x[j] > mx ? x[j] : mx;
        }
        for (int j = 0; j <= i; j++) sum += x[j] = exp(x[j] - mx);
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
    /* feature a's sums carry their own log-scale lz[a], the largest ±u_a(k) written: S_a = Σ e^{±u_a(k_j) − lz_a} v_j */
    memset(b.S, 0, sizeof(double) * (size_t)r * dv);
    memset(b.z, 0, sizeof(double) * (size_t)r);
    for (int e = 0; e < r; e++) b.lz[e] = -INFINITY;
    for (int t = 0; t < n; t++) {
        const int lo = t - W + 1 > 0 ? t - W + 1 : 0;
        if (lo > 0) { /* key lo − 1 leaves the cache for the state */
            const int j = lo - 1;
            const float *v = V + (size_t)j * dv;
            project(b.Uk, K + (size_t)j * d, p->hedgehog_w, d, cols);
            for (int e = 0; e < r; e++) {
                const double l = e < cols ? b.Uk[e] : -b.Uk[e - cols];
                double *s = b.S + (size_t)e * dv;
                if (l > b.lz[e]) {
                    const double f = b.lz[e] == -INFINITY ? 0 : exp(b.lz[e] - l);
                    for (int c = 0; c < dv; c++) s[c] *= f;
                    b.z[e] *= f;
                    b.lz[e] = l;
                }
                const double w = exp(l - b.lz[e]);
                for (int c = 0; c < dv; c++) s[c] += w * v[c];
                b.z[e] += w;
            }
        }
        double mx = -INFINITY, lin = -INFINITY, big = -INFINITY, dz = 0;
        for (int j = lo; j <= t; j++) {
            double s = p->scale * dot_ff(Q + (size_t)t * d, K + (size_t)j * d, d);
            b.x[j - lo] = s;
            mx = s > mx ? s : mx;
        }
        if (lo > 0) { /* ln Σ_{j ≤ t−W} φ(q_t)·φ(k_j) = big + ln Σ_a e^{±u_a(q) + lz_a − big} z_a */
            project(b.Uq, Q + (size_t)t * d, p->hedgehog_w, d, cols);
            for (int e = 0; e < r; e++) {
                const double g = (e < cols ? b.Uq[e] : -b.Uq[e - cols]) + b.lz[e];
                big = g > big ? g : big;
            }
            for (int e = 0; e < r; e++) dz += exp((e < cols ? b.Uq[e] : -b.Uq[e - cols]) + b.lz[e] - big) * b.z[e];
            lin = big + log(dz); /* dz ≥ 1: the largest feature's z holds its own largest key, e^0 */
        }
        const double c0 = lin > mx ? lin : mx, wl = lin == -INFINITY ? 0 : exp(lin - c0);
        double den = wl;
        for (int c = 0; c < dv; c++) b.acc[c] = 0;
        if (wl > 0)
            for (int e = 0; e < r; e++) { /* the state's mean value, weighted by e^{ℓ − c} */
                const double f = wl * exp((e < cols ? b.Uq[e] : -b.Uq[e - cols]) + b.lz[e] - big) / dz,
                             *s = b.S + (size_t)e * dv;
                if (f != 0)
                    for (int c = 0; c < dv; c++) b.acc[c] += f * s[c];
            }
        for (int j = lo; j <= t; j++) {
            const double w = exp(b.x[j - lo] - c0);
            const float *v = V + (size_t)j * dv;
            den += w;
            for (int c = 0; c < dv; c++) b.acc[c] += w * v[c];
        }
        float *o = O + (size_t)t * dv;
        for (int c = 0; c < dv; c++) o[c] = (float)(b.acc[c] / den);
    }
    return AV_OK;
}
