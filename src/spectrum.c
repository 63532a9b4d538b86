/* spectrum.c: singular values of an n×n float32 matrix by two routes, and of a low-rank product L·Rᵀ
 * from its factors.
 *
 * Fast route (live updates): G = M·Mᵀ in float64 (products of float32 are exact in float64), Householder
 * tridiagonalisation of G's lower triangle (Golub & Van Loan §8.3.1, backward, row by row, with the
 * rank-2 update of one step fused with the symmetric matrix-vector product of the next), then the
 * root-free QL iteration of Pal, Walker and Kahan (LAPACK dsterf), σ = √max(λ, 0). The eigenvalues of G
 * are accurate to a few ε·σ₁² absolute, so σ is resolved down to about √ε·σ₁: the noise floor.
 *
 * Accurate route (knob released): Householder bidiagonalisation M = U·B·Vᵀ (Golub & Van Loan §5.4.8),
 * then the eigenvalues ±σ of the 2n×2n Golub–Kahan tridiagonal [0 d₁ e₁ d₂ e₂ … d_n] (zero diagonal) by
 * the same root-free QL. Backward stable: σ to about ε·σ₁ absolute; the floor is n·ε·σ₁.
 *
 * Factor route: M = L·Rᵀ with L, R n×r. Thin Householder QR L = Q_L·R_L, R = Q_R·R_R (float64), then
 * σ(M) = σ(R_L·R_Rᵀ), an r×r problem by the accurate route: O(n·r²) and exact zeros past r.
 *
 * Kernels never allocate: each route takes a workspace of the bytes its _work query reports. Double
 * vectors use GCC/clang vector extensions (f64x2 in WASM SIMD128, 4 lanes with AVX natively, plain scalar
 * code where neither exists); the scalar tails are the plain twins. Work vectors are staggered by 192
 * bytes and matrix rows padded when 8·n is a multiple of 2 KiB, to avoid 4K-aliasing stalls.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "simd.h"

// ----------------------------------------------------------------------------------------------------
// workspace carving

static long test_maxit = 0; // QL sweep budget set by the tests; 0: LAPACK's 30 per eigenvalue

/* Test hook (not exported): cap the QL sweeps of one tridiagonal solve at `total` (≤ 0 restores 30·n),
 * so that the tests can reach AV_WARN_NO_CONVERGENCE. */
void avi_spectrum_test_maxit(int total) { test_maxit = total > 0 ? total : 0; }

enum { ACC_VECS = 10 }; // work vectors of the accurate route

// Leading dimension of an n-column double matrix: even, and not a multiple of 2 KiB.
static int lead_dim(int n) {
    int ld = (n + 1) & ~1;
    if (ld % 256 == 0) ld += 8;
    return ld;
}

// Doubles per work vector: room for n (+ 2n for the Golub–Kahan pair), staggered by 24 doubles.
static size_t vec_stride(int n) { return ((size_t)2 * n + 8 + 63) / 64 * 64 + 24; }

/* The workspace is carved by the library's arena (internal.h); sizes are counted by the same arena. */
static double *take(avi_arena *a, size_t count) { return avi_take(a, (uint64_t)count * sizeof(double)); }

// Bytes for `mats` rows×lead_dim(rows) double matrices and `vecs` staggered vectors, counted by the arena.
static uint64_t count_for(avi_arena *a, int rows, int mats, int vecs) {
    for (int i = 0; i < mats; i++) take(a, (size_t)rows * lead_dim(rows));
    for (int i = 0; i < vecs; i++) take(a, vec_stride(rows));
    return a->used;
}
static size_t bytes_for(int n, int mats, int vecs) {
    avi_arena a = avi_arena_count();
    uint64_t total = count_for(&a, n, mats, vecs);
    return total > (uint64_t)SIZE_MAX ? 0 : (size_t)total;
}

// ----------------------------------------------------------------------------------------------------
// symmetric tridiagonal eigenvalues: root-free QL (Pal–Walker–Kahan, as in LAPACK dsterf)

// Eigenvalues of [[a, b], [b, c]] (LAPACK dlae2): *rt1 the larger in magnitude.
static void eig2(double a, double b, double c, double *rt1, double *rt2) {
    double sm = a + c, df = a - c, adf = fabs(df), tb = b + b, ab = fabs(tb);
    double acmx = fabs(a) > fabs(c) ? a : c, acmn = fabs(a) > fabs(c) ? c : a, rt;
    if (adf > ab) rt = adf * sqrt(1.0 + (ab / adf) * (ab / adf));
    else if (adf < ab) rt = ab * sqrt(1.0 + (adf / ab) * (adf / ab));
    else rt = ab * sqrt(2.0);
    if (sm < 0.0) { *rt1 = 0.5 * (sm - rt); *rt2 = (acmx / *rt1) * acmn - (b / *rt1) * b; }
    else if (sm > 0.0) { *rt1 = 0.5 * (sm + rt); *rt2 = (acmx / *rt1) * acmn - (b / *rt1) * b; }
    else { *rt1 = 0.5 * rt; *rt2 = -0.5 * rt; }
}

/* Eigenvalues of the symmetric tridiagonal T (diagonal d[0..n), off-diagonal e[0..n−1)) into d (unsorted);
 * e is destroyed. An off-diagonal is dropped when |e_m| ≤ ε·√|d_m·d_{m+1}| (relative) or |e_m| ≤ ε·‖T‖
 * (absolute: the eigenvalues then move by at most ε·‖T‖). Returns AV_OK or AV_WARN_NO_CONVERGENCE. */
static int tridiag_eigenvalues(double *restrict d, double *restrict e, int n) {
    double anorm = 0.0;
    for (int i = 0; i < n; i++) anorm = fmax(anorm, fabs(d[i]));
    for (int i = 0; i + 1 < n; i++) anorm = fmax(anorm, fabs(e[i]));
    if (anorm == 0.0 || n == 1) return AV_OK;
    const double inv = 1.0 / anorm, eps = DBL_EPSILON / 2, eps2 = eps * eps;
    for (int i = 0; i < n; i++) d[i] *= inv;
    for (int i = 0; i + 1 < n; i++) { e[i] *= inv; e[i] *= e[i]; } // e holds squares from here on
    long jtot = 0, nmaxit = test_maxit > 0 ? test_maxit : 30L * n;
    int status = AV_OK;
    for (int l = 0; l < n;) {
        int m = l;
        for (; m < n - 1; m++)
            if (e[m] <= eps2 || e[m] <= eps2 * fabs(d[m] * d[m + 1])) break;
        if (m < n - 1) e[m] = 0.0;
        if (m == l) { l++; continue; }
        if (m == l + 1) {
            double rt1, rt2;
            eig2(d[l], sqrt(e[l]), d[l + 1], &rt1, &rt2);
            d[l] = rt1; d[l + 1] = rt2; e[l] = 0.0;
            l += 2;
            continue;
        }
        if (jtot++ >= nmaxit) { status = AV_WARN_NO_CONVERGENCE; break; }
        double rte = sqrt(e[l]), sigma = (d[l + 1] - d[l]) / (2.0 * rte);
        double r = hypot(sigma, 1.0);
        sigma = d[l] - rte / (sigma + copysign(r, sigma));
        /* dsterf's sweep (c = p/r, s = bb/r, γ' = c·(α−σ) − s·γ, p' = γ'²/c) rearranged for latency, the
         * sweep being one long dependence chain: with N = p·(α−σ) − bb·γ, γ' = N/r and p' = γ'·(N/p).
         * The chain then holds one division per step instead of two in a row (s and N/p run beside it);
         * 1.4× faster in WASM and natively. Each quotient stays a true division: a shared reciprocal 1/r
         * cost the accurate route a few ε. c is needed only when p = 0 (dsterf's p' = c_old·bb). */
        double s = 0.0, gamma = d[m] - sigma, p = gamma * gamma, oldp = 1.0, oldr = 1.0; // c = oldp/oldr
        for (int i = m - 1; i >= l; i--) {
            double bb = e[i], alpha = d[i], oldgam = gamma;
            r = p + bb;
            if (i != m - 1) e[i + 1] = s * r;
            double num = p * (alpha - sigma) - bb * oldgam;
            s = bb / r;
            gamma = num / r;
            d[i + 1] = oldgam + (alpha - gamma);
            double np = p != 0.0 ? gamma * (num / p) : (oldp / oldr) * bb;
            oldp = p;
            oldr = r;
            p = np;
        }
        e[l] = s * p;
        d[l] = sigma + gamma;
    }
    for (int i = 0; i < n; i++) d[i] *= anorm;
    return status;
}

static int cmp_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

// ----------------------------------------------------------------------------------------------------
// fast route: Gram matrix and Householder tridiagonalisation

/* G[i][j] = X_i·X_j for j ≤ i (lower triangle plus a few entries above it inside 4×2 blocks).
 * X, G: n×ld. Register-blocked: four rows of X against two, eight vector accumulators. */
static void gram_lower(double *restrict G, const double *restrict X, int n, int ld) {
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        const double *a0 = X + (size_t)i * ld, *a1 = a0 + ld, *a2 = a1 + ld, *a3 = a2 + ld;
        int j = 0;
        for (; j + 2 <= i + 4; j += 2) {
            const double *b0 = X + (size_t)j * ld, *b1 = b0 + ld;
            avs_vd s00 = avs_vsplat(0), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00, s30 = s00, s31 = s00;
            int k = 0;
            for (; k + AVS_VW <= n; k += AVS_VW) {
                avs_vd x0 = avs_vload(a0 + k), x1 = avs_vload(a1 + k), x2 = avs_vload(a2 + k), x3 = avs_vload(a3 + k);
                avs_vd y0 = avs_vload(b0 + k), y1 = avs_vload(b1 + k);
                s00 += x0 * y0; s01 += x0 * y1; s10 += x1 * y0; s11 += x1 * y1;
                s20 += x2 * y0; s21 += x2 * y1; s30 += x3 * y0; s31 += x3 * y1;
            }
            double t[8] = {avs_vsum(s00), avs_vsum(s01), avs_vsum(s10), avs_vsum(s11), avs_vsum(s20), avs_vsum(s21), avs_vsum(s30), avs_vsum(s31)};
            for (; k < n; k++) {
                t[0] += a0[k] * b0[k]; t[1] += a0[k] * b1[k]; t[2] += a1[k] * b0[k]; t[3] += a1[k] * b1[k];
                t[4] += a2[k] * b0[k]; t[5] += a2[k] * b1[k]; t[6] += a3[k] * b0[k]; t[7] += a3[k] * b1[k];
            }
            for (int r = 0; r < 4; r++) {
                G[(size_t)(i + r) * ld + j] = t[2 * r];
                G[(size_t)(i + r) * ld + j + 1] = t[2 * r + 1];
            }
        }
    }
    for (; i < n; i++)
        for (int j = 0; j <= i; j++) G[(size_t)i * ld + j] = avs_dot_f64(X + (size_t)i * ld, X + (size_t)j * ld, n);
}

/* Householder vector for x[0..m) that maps x to β·e_{m−1} (the entry next to the diagonal):
 * H = I − τ·v·vᵀ, v[m−1] = 1, v[k] for k < m−1 written to v. Returns β; *tau = 0 when nothing to do. */
static double house_last(double *restrict v, const double *restrict x, int m, double *tau) {
    double alpha = x[m - 1], sig2 = avs_dot_f64(x, x, m - 1);
    if (sig2 == 0.0) { *tau = 0.0; return alpha; }
    double beta = -copysign(sqrt(alpha * alpha + sig2), alpha), scale = 1.0 / (alpha - beta);
    *tau = (beta - alpha) / beta;
    for (int k = 0; k < m - 1; k++) v[k] = x[k] * scale;
    v[m - 1] = 1.0;
    return beta;
}

/* One row j of the fused sweep of tridiagonalise: a_j[0..j] −= vp_j·wp + wp_j·vp (when pending), then the
 * row's part of p = τ·A·v from the lower triangle: p[0..j) += a_j·τv_j and p[j] += τ·(a_j·v). */
static void sweep_row(double *restrict aj, int j, int pending, double tau, const double *restrict v,
                      double *restrict p, const double *restrict vp, const double *restrict wp) {
    double a = pending ? vp[j] : 0.0, b = pending ? wp[j] : 0.0, vj = tau * v[j];
    avs_vd va = avs_vsplat(a), vb = avs_vsplat(b), vv = avs_vsplat(vj), acc = avs_vsplat(0.0);
    int k = 0;
    for (; k + AVS_VW <= j; k += AVS_VW) {
        avs_vd x = avs_vload(aj + k) - va * avs_vload(wp + k) - vb * avs_vload(vp + k);
        avs_vstore(aj + k, x);
        acc += x * avs_vload(v + k);
        avs_vstore(p + k, avs_vload(p + k) + x * vv);
    }
    double t = avs_vsum(acc);
    for (; k < j; k++) {
        double x = aj[k] - (a * wp[k] + b * vp[k]);
        aj[k] = x;
        t += x * v[k];
        p[k] += x * vj;
    }
    double x = aj[j] - (a * wp[j] + b * vp[j]);
    aj[j] = x;
    p[j] += tau * t + x * vj;
}

/* Rows j and j+1 of the sweep at once: the loads of wp, vp, v and the load/store of p are shared. */
static void sweep_pair(double *restrict A, int ld, int j, int pending, double tau, const double *restrict v,
                       double *restrict p, const double *restrict vp, const double *restrict wp) {
    double *restrict a0 = A + (size_t)j * ld, *restrict a1 = a0 + ld;
    double a = pending ? vp[j] : 0.0, b = pending ? wp[j] : 0.0, v0 = tau * v[j];
    double c = pending ? vp[j + 1] : 0.0, e = pending ? wp[j + 1] : 0.0, v1 = tau * v[j + 1];
    avs_vd va = avs_vsplat(a), vb = avs_vsplat(b), vc = avs_vsplat(c), ve = avs_vsplat(e), w0 = avs_vsplat(v0), w1 = avs_vsplat(v1);
    avs_vd acc0 = avs_vsplat(0.0), acc1 = acc0;
    int k = 0;
    for (; k + AVS_VW <= j; k += AVS_VW) {
        avs_vd W = avs_vload(wp + k), P = avs_vload(vp + k), V = avs_vload(v + k);
        avs_vd x0 = avs_vload(a0 + k) - va * W - vb * P, x1 = avs_vload(a1 + k) - vc * W - ve * P;
        avs_vstore(a0 + k, x0);
        avs_vstore(a1 + k, x1);
        acc0 += x0 * V;
        acc1 += x1 * V;
        avs_vstore(p + k, avs_vload(p + k) + x0 * w0 + x1 * w1);
    }
    double t0 = avs_vsum(acc0), t1 = avs_vsum(acc1);
    for (; k < j; k++) {
        double x0 = a0[k] - (a * wp[k] + b * vp[k]), x1 = a1[k] - (c * wp[k] + e * vp[k]);
        a0[k] = x0;
        a1[k] = x1;
        t0 += x0 * v[k];
        t1 += x1 * v[k];
        p[k] += x0 * v0 + x1 * v1;
    }
    double x0 = a0[j] - (a * wp[j] + b * vp[j]);               // row j's diagonal
    double x1 = a1[j] - (c * wp[j] + e * vp[j]);               // row j+1, column j
    double x2 = a1[j + 1] - (c * wp[j + 1] + e * vp[j + 1]);   // row j+1's diagonal
    a0[j] = x0;
    a1[j] = x1;
    a1[j + 1] = x2;
    t1 += x1 * v[j];
    p[j] += tau * t0 + x0 * v0 + x1 * v1;
    p[j + 1] += tau * t1 + x2 * v1;
}

/* Reduce the symmetric A (lower triangle of n×ld, destroyed) to tridiagonal form: diagonal d[0..n),
 * off-diagonal e[0..n−1) (e[k] couples k and k+1). Rows are reduced from the last up, so each step reads
 * one contiguous row; the pass over rows 0..i−1 applies step i+1's rank-2 update A −= v·wᵀ + w·vᵀ and
 * accumulates p = τ·A·v for step i in the same sweep (symv from the lower triangle: a dot and an axpy
 * per row). v, p, vp, wp: work vectors of n. */
static void tridiagonalise(double *restrict d, double *restrict e, double *restrict A, int n, int ld,
                           double *v, double *p, double *vp, double *wp) {
    int pending = 0;
    for (int i = n - 1; i >= 1; i--) {
        double *ai = A + (size_t)i * ld;
        if (pending) {
            double a = vp[i], b = wp[i];
            avs_vd va = avs_vsplat(a), vb = avs_vsplat(b);
            int k = 0;
            for (; k + AVS_VW <= i + 1; k += AVS_VW)
                avs_vstore(ai + k, avs_vload(ai + k) - va * avs_vload(wp + k) - vb * avs_vload(vp + k));
            for (; k <= i; k++) ai[k] -= a * wp[k] + b * vp[k];
        }
        d[i] = ai[i];
        double tau;
        e[i - 1] = house_last(v, ai, i, &tau);
        memset(p, 0, (size_t)i * sizeof *p);
        int j = 0; // fused: update rows with (vp, wp), then p += τ·A·v over them; two rows share loads
        for (; j + 2 <= i; j += 2) sweep_pair(A, ld, j, pending, tau, v, p, vp, wp);
        if (j < i) sweep_row(A + (size_t)j * ld, j, pending, tau, v, p, vp, wp);
        pending = tau != 0.0;
        if (pending) { // w = p − (τ/2)(pᵀv)·v, kept as (vp, wp) for the next sweep
            double K = 0.5 * tau * avs_dot_f64(p, v, i);
            for (int k = 0; k < i; k++) { wp[k] = p[k] - K * v[k]; vp[k] = v[k]; }
        }
    }
    d[0] = A[0]; // row 0 received its last update in the sweep of i = 1
}

// ----------------------------------------------------------------------------------------------------
// accurate route: Householder bidiagonalisation

/* Householder vector for x (stride `inc`, m entries) mapping it to β·e₀: v[0] = 1, v[1..m) written.
 * Returns β; *tau = 0 when x[1..m) is already zero. */
static double house_first(double *v, const double *x, size_t inc, int m, double *tau) {
    double alpha = x[0], sig2 = 0.0;
    for (int k = 1; k < m; k++) sig2 += x[k * inc] * x[k * inc];
    v[0] = 1.0;
    if (sig2 == 0.0) { *tau = 0.0; return alpha; }
    double beta = -copysign(sqrt(alpha * alpha + sig2), alpha), scale = 1.0 / (alpha - beta);
    *tau = (beta - alpha) / beta;
    for (int k = 1; k < m; k++) v[k] = x[k * inc] * scale;
    return beta;
}

/* X (n×n, ld; destroyed) = U·B·Vᵀ with B upper bidiagonal: diagonal d[0..n), superdiagonal e[0..n−1).
 * Step k: a left reflector I − τ_l·v·vᵀ zeroes column k below the diagonal, then a right one I − τ_r·u·uᵀ
 * zeroes row k right of the superdiagonal. One pass over the trailing rows per step: each row gets the
 * left update (−v_i·w), the right update (−(τ_r·x·u)·u), and then feeds the next step, which needs
 * w' = τ'·Σ_i v'_i·X[i][k+2..] with v'_i = X[i][k+1]/(α' − β'): the pass accumulates the unscaled
 * z = Σ_{i>k+1} X[i][k+1]·X[i][k+2..] and Σ X[i][k+1]², and keeps column k+1 in col.
 * v, w, u, z, z2, col: work vectors of n. */
static void bidiagonalise(double *restrict d, double *restrict e, double *restrict X, int n, int ld,
                          double *v, double *w, double *u, double *z, double *z2, double *col) {
    double sig2 = 0.0;
    memset(z, 0, (size_t)n * sizeof *z);
    for (int i = 1; i < n; i++) { // the accumulations for step 0
        const double *xi = X + (size_t)i * ld;
        col[i] = xi[0];
        sig2 += xi[0] * xi[0];
        avs_axpy_neg_f64(z, -xi[0], xi + 1, n - 1);
    }
    for (int k = 0; k < n; k++) {
        double *xk = X + (size_t)k * ld + k, alpha = xk[0], tl = 0.0, tr = 0.0;
        int m = n - k, c = m - 1; // rows k.., trailing columns k+1..
        d[k] = alpha;
        if (sig2 > 0.0) {
            double beta = -copysign(sqrt(alpha * alpha + sig2), alpha), s = 1.0 / (alpha - beta);
            tl = (beta - alpha) / beta;
            d[k] = beta;
            for (int i = 1; i < m; i++) v[i] = col[k + i] * s;
            for (int j = 0; j < c; j++) w[j] = tl * (xk[1 + j] + s * z[j]);
            for (int j = 0; j < c; j++) xk[1 + j] -= w[j];
        }
        if (c == 0) break;
        e[k] = house_first(u, xk + 1, 1, c, &tr);
        double next = 0.0;
        memset(z2, 0, (size_t)c * sizeof *z2);
        for (int i = 1; i < m; i++) {
            double *xi = xk + (size_t)i * ld + 1;
            if (tl != 0.0) avs_axpy_neg_f64(xi, v[i], w, c);
            if (tr != 0.0) avs_axpy_neg_f64(xi, tr * avs_dot_f64(xi, u, c), u, c);
            col[k + i] = xi[0];
            if (i >= 2) { // rows below the next diagonal: feed step k+1
                next += xi[0] * xi[0];
                avs_axpy_neg_f64(z2, -xi[0], xi + 1, c - 1);
            }
        }
        double *t = z; z = z2; z2 = t;
        sig2 = next;
    }
}

/* Singular values of B (d, e; destroyed) into sv[0..n) descending, through the 2n×2n Golub–Kahan
 * tridiagonal with zero diagonal and off-diagonal (d₀, e₀, d₁, …, d_{n−1}); its eigenvalues are ±σᵢ.
 * d2, e2: work vectors of 2n. */
static int bidiag_singular_values(double *sv, const double *d, const double *e, int n, double *d2, double *e2) {
    for (int i = 0; i < n; i++) {
        d2[2 * i] = d2[2 * i + 1] = 0.0;
        e2[2 * i] = d[i];
        if (i + 1 < n) e2[2 * i + 1] = e[i];
    }
    int status = tridiag_eigenvalues(d2, e2, 2 * n);
    qsort(d2, (size_t)(2 * n), sizeof *d2, cmp_desc);
    for (int i = 0; i < n; i++) sv[i] = d2[i] > 0.0 ? d2[i] : 0.0;
    return status;
}

// ----------------------------------------------------------------------------------------------------
// public: full routes

size_t av_svd_work(int n, int route) {
    if (n < 1 || n > AV_MAX_N) return 0;
    if (route == AV_SVD_FAST) return bytes_for(n, 2, 6);
    if (route == AV_SVD_ACCURATE) return bytes_for(n, 1, ACC_VECS);
    return 0;
}

// Copy float M (n×n) into double X (n×ld).
static void widen(double *restrict X, const float *restrict M, int n, int ld) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) X[(size_t)i * ld + j] = (double)M[(size_t)i * n + j];
}

// Accurate route on a double matrix X (n×ld, destroyed); vectors from c.
static int accurate_route(double *sv, double *noise_floor, double *X, int n, int ld, avi_arena *c) {
    double *d = take(c, vec_stride(n)), *e = take(c, vec_stride(n)), *v = take(c, vec_stride(n));
    double *w = take(c, vec_stride(n)), *u = take(c, vec_stride(n)), *z = take(c, vec_stride(n));
    double *z2 = take(c, vec_stride(n)), *col = take(c, vec_stride(n));
    double *d2 = take(c, vec_stride(n)), *e2 = take(c, vec_stride(n));
    if (!e2) return AV_ERR_WORKSPACE;
    bidiagonalise(d, e, X, n, ld, v, w, u, z, z2, col);
    int status = bidiag_singular_values(sv, d, e, n, d2, e2);
    *noise_floor = (double)n * DBL_EPSILON * sv[0];
    return status;
}

int av_singular_values(double *sv, double *noise_floor, const float *M, int n, int route,
                       void *work, size_t work_bytes) {
    if (!sv || !noise_floor || !M || !work) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N) return AV_ERR_SIZE;
    if (route != AV_SVD_FAST && route != AV_SVD_ACCURATE) return AV_ERR_VARIANT;
    size_t need = av_svd_work(n, route);
    if (need == 0) return AV_ERR_TOO_LARGE; /* valid n, but the workspace exceeds size_t (wasm32) */
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    if (!avi_all_finite(M, (size_t)n * n)) return AV_ERR_NONFINITE;
    int ld = lead_dim(n);
    avi_arena c = avi_arena_over(work);
    double *X = take(&c, (size_t)n * ld);
    if (!X) return AV_ERR_WORKSPACE;
    widen(X, M, n, ld);
    if (route == AV_SVD_ACCURATE) return accurate_route(sv, noise_floor, X, n, ld, &c);

    double *G = take(&c, (size_t)n * ld), *d = take(&c, vec_stride(n)), *e = take(&c, vec_stride(n));
    double *v = take(&c, vec_stride(n)), *p = take(&c, vec_stride(n));
    double *vp = take(&c, vec_stride(n)), *wp = take(&c, vec_stride(n));
    if (!wp) return AV_ERR_WORKSPACE;
    gram_lower(G, X, n, ld);
    tridiagonalise(d, e, G, n, ld, v, p, vp, wp);
    int status = tridiag_eigenvalues(d, e, n);
    qsort(d, (size_t)n, sizeof *d, cmp_desc);
    for (int i = 0; i < n; i++) sv[i] = d[i] > 0.0 ? sqrt(d[i]) : 0.0;
    /* Eigenvalues of G are accurate to about c·ε·λ₁ absolute (c small: measured ≤ 4 on the tests'
     * matrices up to n = 1024), so σ below √(n·ε)·σ₁ is noise. */
    *noise_floor = sqrt((double)n * DBL_EPSILON) * sv[0];
    return status;
}

// ----------------------------------------------------------------------------------------------------
// public: factor route

/* Bytes for the factor route. r < n: two column-major n×r copies, two r×r triangles, the r×r product
 * and the accurate route's vectors for r. r ≥ n: the n×n product and the accurate route. */
size_t av_lowrank_svd_work(int n, long r) {
    if (n < 1 || n > AV_MAX_N || r < 1 || r > AV_MAX_FEATURE_DIM) return 0;
    if (r >= n) return bytes_for(n, 1, ACC_VECS);
    int ri = (int)r, ldc = lead_dim(n);
    avi_arena a = avi_arena_count(); /* the carving order of av_lowrank_singular_values */
    take(&a, (size_t)ri * ldc);
    take(&a, (size_t)ri * ldc);
    uint64_t total = count_for(&a, ri, 3, ACC_VECS);
    return total > (uint64_t)SIZE_MAX ? 0 : (size_t)total;
}

/* Thin Householder QR of the n×r matrix held column-major in C (column j at C + j·ldc): the r×r upper
 * triangle R is written to Rt (row-major, r×r, zeros below the diagonal). C is destroyed. */
static void thin_qr(double *restrict Rt, double *restrict C, int n, int r, int ldc) {
    for (int j = 0; j < r; j++) {
        double *cj = C + (size_t)j * ldc + j, tau;
        int m = n - j;
        double beta = house_first(cj, cj, 1, m, &tau); // v overwrites the column (v[0] = 1)
        for (int k = 0; k < j; k++) Rt[(size_t)j * r + k] = 0.0;
        Rt[(size_t)j * r + j] = beta;
        for (int k = j + 1; k < r; k++) {
            double *ck = C + (size_t)k * ldc + j;
            if (tau != 0.0) avs_axpy_neg_f64(ck, tau * avs_dot_f64(cj, ck, m), cj, m);
            Rt[(size_t)j * r + k] = ck[0];
        }
    }
}

static double fro_f32(const float *x, size_t count) {
    double s = 0.0;
    for (size_t i = 0; i < count; i++) s += (double)x[i] * x[i];
    return sqrt(s);
}

int av_lowrank_singular_values(double *sv, double *noise_floor, const float *L, const float *R, int n,
                               long r, void *work, size_t work_bytes) {
    if (!sv || !noise_floor || !L || !R || !work) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || r < 1 || r > AV_MAX_FEATURE_DIM) return AV_ERR_SIZE;
    size_t need = av_lowrank_svd_work(n, r);
    if (need == 0) return AV_ERR_TOO_LARGE; /* valid sizes, but the workspace exceeds size_t (wasm32) */
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    if (!avi_all_finite(L, (size_t)n * r) || !avi_all_finite(R, (size_t)n * r)) return AV_ERR_NONFINITE;
    avi_arena c = avi_arena_over(work);
    if (r >= n) { // no saving: form L·Rᵀ in double and take the accurate route
        int ld = lead_dim(n);
        double *X = take(&c, (size_t)n * ld);
        if (!X) return AV_ERR_WORKSPACE;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (long k = 0; k < r; k++) s += (double)L[(size_t)i * r + k] * R[(size_t)j * r + k];
                X[(size_t)i * ld + j] = s;
            }
        return accurate_route(sv, noise_floor, X, n, ld, &c);
    }
    int ri = (int)r, ldc = lead_dim(n), ldr = lead_dim(ri);
    double *CL = take(&c, (size_t)ri * ldc), *CR = take(&c, (size_t)ri * ldc);
    double *RL = take(&c, (size_t)ri * ldr), *RR = take(&c, (size_t)ri * ldr), *P = take(&c, (size_t)ri * ldr);
    if (!P) return AV_ERR_WORKSPACE;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ri; k++) {
            CL[(size_t)k * ldc + i] = L[(size_t)i * ri + k];
            CR[(size_t)k * ldc + i] = R[(size_t)i * ri + k];
        }
    thin_qr(RL, CL, n, ri, ldc);
    thin_qr(RR, CR, n, ri, ldc);
    for (int i = 0; i < ri; i++) // P = R_L·R_Rᵀ (both upper triangular)
        for (int j = 0; j < ri; j++) {
            int k0 = i > j ? i : j;
            P[(size_t)i * ldr + j] = avs_dot_f64(RL + (size_t)i * ri + k0, RR + (size_t)j * ri + k0, ri - k0);
        }
    int status = accurate_route(sv, noise_floor, P, ri, ldr, &c);
    for (int i = ri; i < n; i++) sv[i] = 0.0;
    /* Rounding in the two QRs perturbs L·Rᵀ by about (n + r)·ε·‖L‖_F·‖R‖_F. */
    double qr_floor = (double)(n + ri) * DBL_EPSILON * fro_f32(L, (size_t)n * ri) * fro_f32(R, (size_t)n * ri);
    if (qr_floor > *noise_floor) *noise_floor = qr_floor;
    return status;
}

// ----------------------------------------------------------------------------------------------------
// the semiseparable rank (docs/readouts.md): the numerical rank of M[h:n, 0:h], h = ⌊n/2⌋, from the
// singular values of that block, zero-padded to m×m (m = n − h: one zero column when n is odd)

static uint64_t semisep_need(int n, int route, size_t *svd_bytes) {
    int m = n - n / 2;
    *svd_bytes = av_svd_work(m, route);
    avi_arena a = avi_arena_count();
    avi_take(&a, 4u * (uint64_t)m * m);
    avi_take(&a, 8u * (uint64_t)m);
    avi_take(&a, *svd_bytes);
    return a.used;
}

size_t av_semiseparable_work(int n, int route) {
    size_t svd;
    if (n < 2 || n > AV_MAX_N || (route != AV_SVD_FAST && route != AV_SVD_ACCURATE)) return 0;
    uint64_t need = semisep_need(n, route, &svd);
    return svd == 0 || need > (uint64_t)SIZE_MAX ? 0 : (size_t)need;
}

int av_semiseparable_rank(double *rank, double *block_sv, const float *M, int n, double sigma1, double noise_floor,
                          int route, void *work, size_t work_bytes) {
    if (!rank || !M || !work) return AV_ERR_NULL;
    if (n < 2 || n > AV_MAX_N) return AV_ERR_SIZE;
    if (route != AV_SVD_FAST && route != AV_SVD_ACCURATE) return AV_ERR_VARIANT;
    if (!isfinite(sigma1) || !isfinite(noise_floor)) return AV_ERR_NONFINITE;
    size_t svd_bytes;
    uint64_t need = semisep_need(n, route, &svd_bytes);
    if (svd_bytes == 0 || need > (uint64_t)SIZE_MAX) return AV_ERR_TOO_LARGE;
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    int h = n / 2, m = n - h;
    avi_arena a = avi_arena_over(work);
    float *B = avi_take(&a, 4u * (uint64_t)m * m);
    double *sv = avi_take(&a, 8u * (uint64_t)m), floor_b;
    void *w = avi_take(&a, svd_bytes);
    for (int i = 0; i < m; i++) {
        memcpy(B + (size_t)i * m, M + (size_t)(h + i) * n, (size_t)h * sizeof(float));
        if (m > h) B[(size_t)i * m + h] = 0.0f;
    }
    int st = av_singular_values(sv, &floor_b, B, m, route, w, svd_bytes);
    if (st < 0) return st;
    double s1 = sigma1 < 0 ? sv[0] : sigma1, tol = s1 * n * (double)FLT_EPSILON;
    tol = tol > noise_floor ? tol : noise_floor;
    tol = tol > floor_b ? tol : floor_b;
    int count = 0;
    for (int i = 0; i < h; i++) count += sv[i] > tol;
    *rank = count;
    if (block_sv) memcpy(block_sv, sv, (size_t)h * sizeof(double));
    return st;
}
