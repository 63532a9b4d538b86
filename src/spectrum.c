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
 * then σ(B) by the differential qd algorithm with shifts, dqds (Fernando & Parlett 1994; Parlett &
 * Marques 2000; LAPACK dlasq1–dlasq6), on the qd array of BᵀB, with its transforms run four at a time
 * in a pipeline (see "singular values of the bidiagonal"). dqds gives every σ of B to high relative
 * accuracy; the bidiagonalisation is backward stable, so σ(M) to about ε·σ₁ absolute; the floor is
 * n·ε·σ₁. A bisection on the Golub–Kahan tridiagonal (Sturm counts) stays beside it as the tests'
 * reference.
 *
 * From n = 32 on the bidiagonalisation is blocked as in LAPACK's dgebrd and dlabrd (the reflectors of
 * Golub & Van Loan §5.4.8, accumulated per panel; as backward stable as the unblocked form), applied to
 * Mᵀ so that its columns are M's contiguous rows: panels of 8 columns and rows are reduced against the
 * not-yet-updated trailing matrix plus corrections from the panel's vectors (V, U and dlabrd's X, Y), the
 * two matrix-vector products of each step sharing one pass over the trailing rows (the GEMVT of Howell,
 * Demmel, Fulton, Hammarling and Marmol, "Cache efficient bidiagonalization using BLAS 2.5 operators",
 * ACM TOMS 34(3), 2008); the trailing matrix then takes A −= V·Yᵀ + X·U once per panel in a
 * register-blocked f64 gemm. Half of the 8n³/3 flops move to the gemm and the other half make one
 * read-only pass per step, where the unblocked form (below 32, where it is faster) reads and writes the
 * trailing matrix in each step. Measured figures beside bidiagonalise_blocked.
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

static long test_maxit = 0; // iteration budget set by the tests; 0: the solvers' own

/* Test hook (not exported): cap the iterations of one solve at `total` (≤ 0 restores the normal limits:
 * 30·n QL sweeps for the fast route's tridiagonal, 100·n dqds transforms for the accurate route's
 * bidiagonal), so that the tests can reach AV_WARN_NO_CONVERGENCE. */
void avi_spectrum_test_maxit(int total) { test_maxit = total > 0 ? total : 0; }

static int test_bidiag = 0; // bidiagonalisation chosen by the tests; 0: by size

/* Test hook (not exported): the accurate route's bidiagonalisation: 1 the unblocked reference
 * (bidiagonalise), 2 the blocked one (bidiagonalise_blocked) at every n, 0 (or else) the choice by size. */
void avi_spectrum_test_bidiag(int route) { test_bidiag = route == 1 || route == 2 ? route : 0; }

enum { ACC_VECS = 11 }; // work vectors of the accurate route
/* The blocked bidiagonalisation: panel width, the bound of the panel width, and the smallest n it is used
 * for. Below, the unblocked one is faster (the panel's short kernel calls dominate); measured, unblocked
 * against blocked, WASM: n = 24 6.1 against 6.6 µs, 32 12.4 against 11.5 µs; native: 4.8 against 4.8 µs at
 * 24, 11.7 against 9.6 µs at 32. */
enum { BRD_NB = 8, BRD_MAXNB = 64, BRD_MIN_N = 32 };

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

// Panel width of the blocked bidiagonalisation, and the stride of its panel store's rows.
static int brd_nb(int n) { return n < BRD_NB ? n : BRD_NB; }
static int brd_ldp(int n) { return lead_dim(n); }

/* The accurate route's workspace after its matrix: ACC_VECS work vectors, then the blocked
 * bidiagonalisation's panel store (Y, U, X: 3·nb rows of brd_ldp(n)). Returns the store (NULL when
 * counting). The _work queries count with this same function. */
static double *acc_take(avi_arena *a, int n, double *vec[ACC_VECS]) {
    for (int i = 0; i < ACC_VECS; i++) vec[i] = take(a, vec_stride(n));
    return take(a, (size_t)3 * brd_nb(n) * brd_ldp(n));
}
static size_t acc_bytes(avi_arena *a, int n) {
    double *vec[ACC_VECS];
    acc_take(a, n, vec);
    return a->used > (uint64_t)SIZE_MAX ? 0 : (size_t)a->used;
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
    if (sig2 == 0.0) { // no reflection (τ = 0), and a whole v: the sweep still reads τ·v, and 0·garbage is NaN
        for (int k = 0; k < m - 1; k++) v[k] = 0.0;
        v[m - 1] = 1.0;
        *tau = 0.0;
        return alpha;
    }
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
    // the sweeps read vp, wp (times 0) before the first update sets them: zeros, never the workspace's garbage
    memset(vp, 0, (size_t)n * sizeof *vp);
    memset(wp, 0, (size_t)n * sizeof *wp);
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
    if (sig2 == 0.0) { // no reflection (τ = 0), and a whole v, as house_last
        for (int k = 1; k < m; k++) v[k] = 0.0;
        *tau = 0.0;
        return alpha;
    }
    double beta = -copysign(sqrt(alpha * alpha + sig2), alpha), scale = 1.0 / (alpha - beta);
    *tau = (beta - alpha) / beta;
    for (int k = 1; k < m; k++) v[k] = x[k * inc] * scale;
    return beta;
}

/* X (n×n, ld; destroyed) = U·B·Vᵀ with B upper bidiagonal: diagonal d[0..n), superdiagonal e[0..n−1).
 * Unblocked: used below BRD_MIN_N, and the tests' reference for bidiagonalise_blocked. Step k: a left
 * reflector I − τ_l·v·vᵀ zeroes column k below the diagonal, then a right one I − τ_r·u·uᵀ
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

// ----------------------------------------------------------------------------------------------------
// accurate route, blocked: LAPACK's dgebrd/dlabrd on A = Xᵀ

/* V8 compiles a WASM function as a whole: inlined into the long driver below, the kernels of the blocked
 * bidiagonalisation ran at half speed (register pressure from the driver's live values), so they are kept
 * out of line. Emscripten builds without loop strength reduction: the kernels step pointers rather than
 * multiply indices in their inner loops. */
#define BRD_KERNEL __attribute__((noinline)) static

/* out[r] = s·(y[r] − Σ_{c<cnt} f[c]·row_c[r]) for r < len; out may be y. Rows four at a time (the load
 * and store of out shared); the panel's small level-2 corrections. */
BRD_KERNEL void combo_sub(double *out, const double *y, double s, int len, int cnt, const double *f,
                          const double *const *row) {
    const double *in = y;
    int c = 0;
    do {
        int k = cnt - c >= 4 ? 4 : cnt - c;
        double sc = c + k >= cnt ? s : 1.0; // scale with the last group
        double f0 = k > 0 ? f[c] : 0.0, f1 = k > 1 ? f[c + 1] : 0.0, f2 = k > 2 ? f[c + 2] : 0.0, f3 = k > 3 ? f[c + 3] : 0.0;
        const double *r0 = k > 0 ? row[c] : in, *r1 = k > 1 ? row[c + 1] : r0, *r2 = k > 2 ? row[c + 2] : r0,
                     *r3 = k > 3 ? row[c + 3] : r0;
        avs_vd v0 = avs_vsplat(f0), v1 = avs_vsplat(f1), v2 = avs_vsplat(f2), v3 = avs_vsplat(f3), vs = avs_vsplat(sc);
        int r = 0;
        for (; r + AVS_VW <= len; r += AVS_VW)
            avs_vstore(out + r, (avs_vload(in + r) - v0 * avs_vload(r0 + r) - v1 * avs_vload(r1 + r) -
                                 v2 * avs_vload(r2 + r) - v3 * avs_vload(r3 + r)) * vs);
        for (; r < len; r++) out[r] = (in[r] - f0 * r0[r] - f1 * r1[r] - f2 * r2[r] - f3 * r3[r]) * sc;
        in = out;
        c += k;
    } while (c < cnt);
}

/* out[c] = row_c·x (len entries) for c < cnt; four rows share the loads of x. */
BRD_KERNEL void multi_dot(double *restrict out, int cnt, const double *const *row, const double *x, int len) {
    int c = 0;
    for (; c + 4 <= cnt; c += 4) {
        const double *a0 = row[c], *a1 = row[c + 1], *a2 = row[c + 2], *a3 = row[c + 3];
        avs_vd s0 = avs_vsplat(0.0), s1 = s0, s2 = s0, s3 = s0;
        int r = 0;
        for (; r + AVS_VW <= len; r += AVS_VW) {
            avs_vd v = avs_vload(x + r);
            s0 += avs_vload(a0 + r) * v;
            s1 += avs_vload(a1 + r) * v;
            s2 += avs_vload(a2 + r) * v;
            s3 += avs_vload(a3 + r) * v;
        }
        double t0 = avs_vsum(s0), t1 = avs_vsum(s1), t2 = avs_vsum(s2), t3 = avs_vsum(s3);
        for (; r < len; r++) {
            t0 += a0[r] * x[r];
            t1 += a1[r] * x[r];
            t2 += a2[r] * x[r];
            t3 += a3[r] * x[r];
        }
        out[c] = t0; out[c + 1] = t1; out[c + 2] = t2; out[c + 3] = t3;
    }
    for (; c < cnt; c++) out[c] = avs_dot_f64(row[c], x, len);
}

/* For j < len: C1[j] = Σ_{c<cnt} Y_c[j]·t1[c] + U_c[j]·t2[c] and C2[j] = Σ_{c<cnt} Y_c[j]·a[c] + U_c[j]·b[c]
 * (Y_c = Y + c·ldp, U_c likewise): dlabrd's corrections of A_jᵀv and of row g. Two rows of Y and two of U
 * at a time, C1 and C2 loaded and stored once per pair. */
BRD_KERNEL void combo_two(double *restrict C1, double *restrict C2, int len, int cnt, const double *Y, const double *U,
                          size_t ldp, const double *t1, const double *t2, const double *a, const double *b) {
    memset(C1, 0, (size_t)len * sizeof *C1);
    memset(C2, 0, (size_t)len * sizeof *C2);
    for (int c = 0; c < cnt; c += 2) {
        int two = c + 1 < cnt;
        const double *y0 = Y + c * ldp, *u0 = U + c * ldp, *y1 = two ? y0 + ldp : y0, *u1 = two ? u0 + ldp : u0;
        double p0 = t1[c], q0 = t2[c], r0 = a[c], s0 = b[c];
        double p1 = two ? t1[c + 1] : 0.0, q1 = two ? t2[c + 1] : 0.0, r1 = two ? a[c + 1] : 0.0, s1 = two ? b[c + 1] : 0.0;
        avs_vd P0 = avs_vsplat(p0), Q0 = avs_vsplat(q0), R0 = avs_vsplat(r0), S0 = avs_vsplat(s0);
        avs_vd P1 = avs_vsplat(p1), Q1 = avs_vsplat(q1), R1 = avs_vsplat(r1), S1 = avs_vsplat(s1);
        int j = 0;
        for (; j + AVS_VW <= len; j += AVS_VW) {
            avs_vd ya = avs_vload(y0 + j), ua = avs_vload(u0 + j), yb = avs_vload(y1 + j), ub = avs_vload(u1 + j);
            avs_vstore(C1 + j, avs_vload(C1 + j) + ya * P0 + ua * Q0 + yb * P1 + ub * Q1);
            avs_vstore(C2 + j, avs_vload(C2 + j) + ya * R0 + ua * S0 + yb * R1 + ub * S1);
        }
        for (; j < len; j++) {
            C1[j] += y0[j] * p0 + u0[j] * q0 + y1[j] * p1 + u1[j] * q1;
            C2[j] += y0[j] * r0 + u0[j] * s0 + y1[j] * r1 + u1[j] * s1;
        }
    }
}

/* The two matrix-vector products of dlabrd's step g in one pass over the trailing lines (Howell et al.'s
 * GEMVT, see the top of the file): for each line j > g, read
 * L_j[g..n) (v = L_g[g..n), v[0] = 1):
 *   y_j = τ·(L_j·v − C1[j]) (dlabrd's Y(j, i), to Yi[j]),  x_j = L_j[g] − y_j − C2[j] (row g, to xr[j]),
 * and, while the line is in L1, Q[g..n) += x_j·L_j[g..n) (so that A·u follows from Q once u is known).
 * Four lines share the loads of v and the load and store of Q. The segments start at g0 ≤ g, aligned to the
 * vector width where the lines are (v is copied to vb with zeros in front, Q[g0..g) is left undefined):
 * 5% faster in WASM. Six lines at a time were 2% faster in WASM, eight slower (V8 spills an accumulator),
 * and the passes unrolled by two vectors or the dots of one group beside the axpys of the previous one
 * 20–30% slower. */
BRD_KERNEL void brd_pass(double *restrict Yi, double *restrict xr, double *restrict Q, double *restrict vb,
                         const double *X, int ld, int g, int n, double tau, const double *restrict C1,
                         const double *restrict C2) {
    int align = ld % AVS_VW == 0 ? AVS_VW : 2, g0 = g - g % align, off = g - g0, len = n - g0, j = g + 1;
    for (int r = g0; r < g; r++) vb[r] = 0.0;
    memcpy(vb + g, X + (size_t)g * ld + g, (size_t)(n - g) * sizeof *vb);
    memset(Q + g0, 0, (size_t)len * sizeof *Q);
    const double *v = vb + g0;
    double *q = Q + g0;
    for (; j + 4 <= n; j += 4) {
        const double *l0 = X + (size_t)j * ld + g0, *l1 = l0 + ld, *l2 = l1 + ld, *l3 = l2 + ld;
        avs_vd s0 = avs_vsplat(0.0), s1 = s0, s2 = s0, s3 = s0;
        int r = 0;
        for (; r + AVS_VW <= len; r += AVS_VW) {
            avs_vd w = avs_vload(v + r);
            s0 += avs_vload(l0 + r) * w;
            s1 += avs_vload(l1 + r) * w;
            s2 += avs_vload(l2 + r) * w;
            s3 += avs_vload(l3 + r) * w;
        }
        double t0 = avs_vsum(s0), t1 = avs_vsum(s1), t2 = avs_vsum(s2), t3 = avs_vsum(s3);
        for (; r < len; r++) {
            t0 += l0[r] * v[r];
            t1 += l1[r] * v[r];
            t2 += l2[r] * v[r];
            t3 += l3[r] * v[r];
        }
        double y0 = tau * (t0 - C1[j]), y1 = tau * (t1 - C1[j + 1]), y2 = tau * (t2 - C1[j + 2]), y3 = tau * (t3 - C1[j + 3]);
        double x0 = l0[off] - y0 - C2[j], x1 = l1[off] - y1 - C2[j + 1], x2 = l2[off] - y2 - C2[j + 2];
        double x3 = l3[off] - y3 - C2[j + 3];
        Yi[j] = y0; Yi[j + 1] = y1; Yi[j + 2] = y2; Yi[j + 3] = y3;
        xr[j] = x0; xr[j + 1] = x1; xr[j + 2] = x2; xr[j + 3] = x3;
        avs_vd w0 = avs_vsplat(x0), w1 = avs_vsplat(x1), w2 = avs_vsplat(x2), w3 = avs_vsplat(x3);
        for (r = 0; r + AVS_VW <= len; r += AVS_VW)
            avs_vstore(q + r, avs_vload(q + r) + w0 * avs_vload(l0 + r) + w1 * avs_vload(l1 + r) +
                                  w2 * avs_vload(l2 + r) + w3 * avs_vload(l3 + r));
        for (; r < len; r++) q[r] += x0 * l0[r] + x1 * l1[r] + x2 * l2[r] + x3 * l3[r];
    }
    for (; j < n; j++) {
        const double *l0 = X + (size_t)j * ld + g0;
        double y0 = tau * (avs_dot_f64(l0, v, len) - C1[j]), x0 = l0[off] - y0 - C2[j];
        Yi[j] = y0;
        xr[j] = x0;
        avs_axpy_neg_f64(q, -x0, l0, len);
    }
}

/* The trailing update of dgebrd, A −= V·Yᵀ + X·U, on lines: C_j[r] −= Σ_{c<b} Y_c[j]·V_c[r] + U_c[j]·P_c[r]
 * for j < J, r < R (C_j = C + j·ldc, V_c = V + c·ldv, Y_c = Y + c·ldp, U_c and P_c likewise). Register-blocked
 * like gram_lower: four lines by two vectors, eight accumulators; the panel's coefficients are broadcast. */
BRD_KERNEL void brd_update(double *C, size_t ldc, int J, int R, int b, const double *Y, const double *U, size_t ldp,
                           const double *V, size_t ldv, const double *P) {
    int j = 0;
    for (; j + 4 <= J; j += 4) {
        double *c0 = C + (size_t)j * ldc, *c1 = c0 + ldc, *c2 = c1 + ldc, *c3 = c2 + ldc;
        int r = 0;
        for (; r + 2 * AVS_VW <= R; r += 2 * AVS_VW) {
            avs_vd s00 = avs_vsplat(0.0), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00, s30 = s00, s31 = s00;
            for (int half = 0; half < 2; half++) { // V·Yᵀ, then X·U
                const double *x = half ? P + r : V + r, *f = half ? U + j : Y + j;
                size_t step = half ? ldp : ldv;
                for (int c = 0; c < b; c++, x += step, f += ldp) {
                    avs_vd x0 = avs_vload(x), x1 = avs_vload(x + AVS_VW), a;
                    a = avs_vsplat(f[0]); s00 += a * x0; s01 += a * x1;
                    a = avs_vsplat(f[1]); s10 += a * x0; s11 += a * x1;
                    a = avs_vsplat(f[2]); s20 += a * x0; s21 += a * x1;
                    a = avs_vsplat(f[3]); s30 += a * x0; s31 += a * x1;
                }
            }
            avs_vstore(c0 + r, avs_vload(c0 + r) - s00); avs_vstore(c0 + r + AVS_VW, avs_vload(c0 + r + AVS_VW) - s01);
            avs_vstore(c1 + r, avs_vload(c1 + r) - s10); avs_vstore(c1 + r + AVS_VW, avs_vload(c1 + r + AVS_VW) - s11);
            avs_vstore(c2 + r, avs_vload(c2 + r) - s20); avs_vstore(c2 + r + AVS_VW, avs_vload(c2 + r + AVS_VW) - s21);
            avs_vstore(c3 + r, avs_vload(c3 + r) - s30); avs_vstore(c3 + r + AVS_VW, avs_vload(c3 + r + AVS_VW) - s31);
        }
        for (; r < R; r++)
            for (int k = 0; k < 4; k++) {
                double t = 0.0;
                for (int c = 0; c < b; c++) t += Y[c * ldp + j + k] * V[c * ldv + r];
                for (int c = 0; c < b; c++) t += U[c * ldp + j + k] * P[c * ldp + r];
                C[(size_t)(j + k) * ldc + r] -= t;
            }
    }
    for (; j < J; j++) {
        double *cj = C + (size_t)j * ldc;
        for (int r = 0; r < R; r++) {
            double t = 0.0;
            for (int c = 0; c < b; c++) t += Y[c * ldp + j] * V[c * ldv + r];
            for (int c = 0; c < b; c++) t += U[c * ldp + j] * P[c * ldp + r];
            cj[r] -= t;
        }
    }
}

/* Measured (one run; random n×n; best of 8 rounds; 2 shared cores, so compare within a row):
 *                 WASM SIMD128 in node                native gcc -O3 -march=native (AVX, 4 lanes)
 *     n    unblocked  blocked  gram_lower's rate    unblocked  blocked  gram_lower's rate
 *   256      4.57 ms  2.41 ms  25.3 GF/s              2.37 ms  1.55 ms  27.5 GF/s
 *   512     36.7     18.9      23.7                  19.3     13.2      25.4
 *  1024    299      149        23.3                 166      104        22.1
 * Counting 8n³/3 flops, the blocked form runs at 73%, 80% and 83% of gram_lower's f64 rate in WASM (n = 256,
 * 512, 1024), and at 105–124% natively. At n = 256 in WASM the fused passes take about half the time (~17
 * GF/s: a dot and an axpy per element per step, five loads per four multiply-adds), the trailing updates a
 * third (~25 GF/s), dlabrd's corrections an eighth. Panel widths, best of 6 rounds (ms, WASM | native):
 *     n     nb = 8          12             16             24
 *   256     2.43 | 1.50    2.48 | 1.56    2.56 | 1.56    2.71 | 1.68
 *   512    18.4  | 12.9   19.0  | 12.9   18.9  | 13.1   20.1  | 14.4
 *  1024   146    | 115   146    | 121   147    | 118   156    | 138
 * (natively, widths 4, 6 and 10 were slower than 8 too): wider panels add correction flops (about
 * 2.25·nb/n of the total), narrower ones shorten the gemm's inner products. */

/* X (n×n, ld; destroyed) as A = Xᵀ (line c of A, its column c, is row c of X, contiguous) = Q·B·Pᵀ with B
 * upper bidiagonal: d[0..n), e[0..n−1). LAPACK's dgebrd: panels of nb ≤ BRD_MAXNB lines reduced by dlabrd
 * against the not-yet-updated trailing lines plus corrections from the panel's Y, X, U (Y_c[j], X_c[r],
 * U_c[j]: rows of Yp, Xp, Up, stride ldp), then the trailing update A −= V·Yᵀ + X·U. The left vectors v stay
 * in the panel's lines, the right ones go to Up. C1, C2, xr, Q, vb: work vectors of n. */
static void bidiagonalise_blocked(double *restrict d, double *restrict e, double *X, int n, int ld, int nb,
                                  double *Yp, double *Up, double *Xp, int ldp, double *C1, double *C2, double *xr,
                                  double *Q, double *vb) {
    const double *row[2 * BRD_MAXNB + 1];
    double f[2 * BRD_MAXNB + 1], a[BRD_MAXNB], b2[BRD_MAXNB];
    for (int p = 0; p < n; p += nb) {
        int b = n - p < nb ? n - p : nb;
        const double *V = X + (size_t)p * ld; // V_c = V + c·ld: the panel's lines, v below their diagonal
        for (int i = 0; i < b; i++) {
            int g = p + i, len = n - g;
            double *lg = X + (size_t)g * ld + g, tq = 0.0;
            for (int c = 0; c < i; c++) { // rows g.. of V_c and X_c, and their coefficients in line g
                row[c] = V + (size_t)c * ld + g;
                row[i + c] = Xp + (size_t)c * ldp + g;
                f[c] = Yp[(size_t)c * ldp + g];
                f[i + c] = Up[(size_t)c * ldp + g];
            }
            if (i > 0) combo_sub(lg, lg, 1.0, len, 2 * i, f, row); // A(g:n, g) −= V·Y(g, :)ᵀ + X·U(:, g)
            double alpha = lg[0], sig2 = avs_dot_f64(lg + 1, lg + 1, len - 1);
            d[g] = alpha;
            if (sig2 > 0.0) { // left reflector: v = (1, lg[1..]·s) stays in the line
                double beta = -copysign(sqrt(alpha * alpha + sig2), alpha), s = 1.0 / (alpha - beta);
                tq = (beta - alpha) / beta;
                d[g] = beta;
                for (int r = 1; r < len; r++) lg[r] *= s;
            }
            if (len == 1) break;
            lg[0] = 1.0;
            /* Y(j, i) = τ_q·(A_jᵀv − Y(j, :i)·(Vᵀv) − U(:i, j)ᵀ(Xᵀv)) and row g of A, x_j = A(g, j) −
             * Y(j, :i+1)·A(g, :i+1)ᵀ − U(:i, j)ᵀX(g, :i)ᵀ, both for j > g; f holds Vᵀv, Xᵀv */
            multi_dot(f, 2 * i, row, lg, len);
            for (int c = 0; c < i; c++) { a[c] = row[c][0]; b2[c] = row[i + c][0]; }
            combo_two(C1 + g + 1, C2 + g + 1, len - 1, i, Yp + g + 1, Up + g + 1, ldp, f, f + i, a, b2);
            double *Yi = Yp + (size_t)i * ldp, *Ui = Up + (size_t)i * ldp, *Xi = Xp + (size_t)i * ldp;
            brd_pass(Yi, xr, Q, vb, X, ld, g, n, tq, C1, C2);
            // right reflector of row g: u = (1, x[g+2..]·s)
            alpha = xr[g + 1];
            sig2 = avs_dot_f64(xr + g + 2, xr + g + 2, len - 2);
            Ui[g + 1] = 1.0;
            if (sig2 == 0.0) {
                e[g] = alpha;
                for (int j = g + 2; j < n; j++) Ui[j] = 0.0;
                for (int r = g + 1; r < n; r++) Xi[r] = 0.0;
                continue;
            }
            double beta = -copysign(sqrt(alpha * alpha + sig2), alpha), s = 1.0 / (alpha - beta);
            double tp = (beta - alpha) / beta;
            e[g] = beta;
            for (int j = g + 2; j < n; j++) Ui[j] = xr[j] * s;
            // A(g+1:n, g+1:n)·u = L_{g+1} + s·Σ_{j>g+1} x_j·L_j = s·(Q − β·L_{g+1}), rows g+1..n−1
            const double *l1 = X + (size_t)(g + 1) * ld;
            for (int r = g + 1; r < n; r++) Q[r] = s * (Q[r] - beta * l1[r]);
            // X(r, i) = τ_p·(A·u − V·(Yᵀu) − X·(U·u)), r > g: f = (Y_c·u, c ≤ i; U_c·u, c < i)
            for (int c = 0; c <= i; c++) row[c] = Yp + (size_t)c * ldp + g + 1;
            for (int c = 0; c < i; c++) row[i + 1 + c] = Up + (size_t)c * ldp + g + 1;
            multi_dot(f, 2 * i + 1, row, Ui + g + 1, len - 1);
            for (int c = 0; c <= i; c++) row[c] = V + (size_t)c * ld + g + 1;
            for (int c = 0; c < i; c++) row[i + 1 + c] = Xp + (size_t)c * ldp + g + 1;
            combo_sub(Xi + g + 1, Q + g + 1, tp, len - 1, 2 * i + 1, f, row);
        }
        int q = p + b;
        if (q < n) brd_update(X + (size_t)q * ld + q, ld, n - q, n - q, b, Yp + q, Up + q, ldp, V + q, ld, Xp + q);
    }
}

// ----------------------------------------------------------------------------------------------------
// accurate route: singular values of the bidiagonal by dqds

/* The differential quotient-difference algorithm with shifts (dqds) of Fernando and Parlett ("Accurate
 * singular values and differential qd algorithms", Numer. Math. 67, 1994), as LAPACK implements it in
 * dlasq1–dlasq6 (Parlett and Marques, "An implementation of the dqds algorithm (positive case)", Linear
 * Algebra Appl. 309, 2000); the shift strategy, deflation and split tests, flips and safeguards are
 * LAPACK's, restructured. σ(B)² are the eigenvalues λ of BᵀB = L·U, held as the qd array q_k = d_k²,
 * e_k = e_k² (all ≥ 0). One transform with shift τ maps (q, e) to (q̂, ê) with L̂·Û = U·L − τ·I:
 *     d₀ = q₀ − τ;   q̂_k = d_k + e_k;   t = q_{k+1}/q̂_k;   ê_k = e_k·t;   d_{k+1} = d_k·t − τ;   q̂_last = d_last
 * Only products, quotients, sums of positive terms and the subtraction of τ occur, so while every d ≥ 0
 * each entry is correct to a few ulps relative and every λ, small or large, to high relative accuracy
 * (the property that sets dqds apart from QR or QL on the Golub–Kahan matrix, which resolve σ only to
 * ε·σ₁). A shift with some d < 0 is rejected and retried smaller. e_{n0−1} → 0 at the bottom of the
 * segment n0 being reduced, and λ = q_{n0} + Σ τ deflates.
 *
 * Layout: three qd arrays, each holding (q_k, e_k) at [2k], [2k + 1], in the roles cur (the current
 * iterate), prev (the one before it, for the deflation and split tests) and spare. A transform reads cur
 * and writes another array, so a rejected shift is retried from intact data. The slot e_{n0} past a
 * segment's last e holds the smallest ê of the transform that wrote the array. An e ≤ 0 marks a split
 * and holds −σ, the shift the block above it had accumulated when it split off. Deflated λ go to the q's
 * of the array ping; a block waiting its turn sits in ping (its cur) and pong (its prev).
 *
 * Speed: a transform is one dependence chain, add → divide → multiply → subtract per row, so it runs at
 * the latency of those four operations, the divider mostly idle. Transforms are therefore run in groups
 * of QD_GROUP, pipelined: the first with LAPACK's shift, then QD_GROUP − 1 without shift, each two rows
 * behind the one whose output it reads. Their chains are independent and overlap in the processor, so a
 * group costs little more than one transform. A transform without shift cannot fail (every d stays ≥ 0)
 * and after a good shift it is nearly as effective as a shifted one: e_{n0−1} shrinks by the ratio of
 * the two smallest λ of the shifted array, which the shift has just made small. On the bidiagonals of
 * random 256×256 to 1024×1024 matrices this cuts the sequential sweeps from 3.7 per σ (LAPACK's count,
 * which the transform-at-a-time path here reproduces) to 1.8–1.9, for about 6 transforms per σ in all.
 *
 * Where this departs from LAPACK: the groups; splits are tested after every step, not every second
 * transform; after a flip the deflation tests are skipped, as dlasq3's comment says (its code runs them
 * on shifted indices); when the budget runs out the unfinished rows get an estimate (dqds_unfinished)
 * instead of the restored qd array; a shift that would come out negative after a failure is 0; the
 * retries are bounded. */
#define Q(a, k) (a)[2 * (k)]
#define E(a, k) (a)[2 * (k) + 1]

typedef struct qd_state {
    double *ping, *pong, *third;             // the three qd arrays
    double *cur, *prev, *spare;              // their roles (a permutation of them)
    double sigma, desig;                     // the segment's accumulated shift, and its low-order part
    double qmax;                             // largest q + e of the segment, for the split test
    double dmin, dmin1, dmin2, dn, dn1, dn2; // last transform: min d (all; without the last one; without two), last three d
    double tau, g;                           // the last shift; dlasq4's fraction for shifts of type 6
    int ttype;                               // the last shift's type (dlasq4's case, negated; −11/−12 per failure)
    int guarded;                             // the last step needed the guarded transform: no group next
    long iter, maxit;                        // transforms done, and the budget
} qd_state;

static double min3(double a, double b, double c) { double m = a < b ? a : b; return c < m ? c : m; }
static double max3(double a, double b, double c) { double m = a > b ? a : b; return c > m ? c : m; }

/* One dqds transform of rows i0..n0 (n0 ≥ i0 + 2) of c into o with shift tau (dlasq5). Sets dmin, dmin1,
 * dmin2, dn, dn1, dn2; o's q_{n0} = dn, e_{n0} = min ê. Returns the shift used: one below ε·(σ + τ)/2
 * changes nothing and is taken as 0, and a transform without shift flushes d < ε·σ to zero (noise that
 * would otherwise keep a converged row from deflating). The loop is one dependence chain through d
 * (add, divide, multiply, subtract); the minima run beside it. A NaN is left out of dmin (x < m is
 * false), but it reaches dn: the caller tests dn. */
static double dqds_step(qd_state *s, const double *c, double *o, int i0, int n0, double tau) {
    const double dthresh = DBL_EPSILON * (s->sigma + tau);
    if (tau < 0.5 * dthresh) tau = 0.0;
    double d = Q(c, i0) - tau, dmin = d, emin = Q(c, i0 + 1); // dlasq5 starts emin at q_{i0+1}
    int k = i0;
    if (tau != 0.0) {
        for (; k <= n0 - 3; k++) {
            double qh = d + E(c, k), t = Q(c, k + 1) / qh, eh = E(c, k) * t;
            d = d * t - tau;
            Q(o, k) = qh;
            E(o, k) = eh;
            dmin = d < dmin ? d : dmin;
            emin = eh < emin ? eh : emin;
        }
    } else {
        for (; k <= n0 - 3; k++) {
            double qh = d + E(c, k), t = Q(c, k + 1) / qh, eh = E(c, k) * t;
            d = d * t;
            if (d < dthresh) d = 0.0;
            Q(o, k) = qh;
            E(o, k) = eh;
            dmin = d < dmin ? d : dmin;
            emin = eh < emin ? eh : emin;
        }
    }
    s->dn2 = d; // the last two steps apart: their d and the minima before them steer the next shift
    s->dmin2 = dmin;
    double qh = d + E(c, k);
    Q(o, k) = qh;
    E(o, k) = Q(c, k + 1) * (E(c, k) / qh);
    double dn1 = Q(c, k + 1) * (d / qh) - tau;
    dmin = dn1 < dmin ? dn1 : dmin;
    s->dmin1 = dmin;
    k++;
    qh = dn1 + E(c, k);
    Q(o, k) = qh;
    E(o, k) = Q(c, k + 1) * (E(c, k) / qh);
    double dn = Q(c, k + 1) * (dn1 / qh) - tau;
    dmin = dn < dmin ? dn : dmin;
    Q(o, n0) = dn;
    E(o, n0) = emin;
    s->dn1 = dn1;
    s->dn = dn;
    s->dmin = dmin;
    return tau;
}

/* A transform without shift, guarded against underflow (dlasq6): each quotient is formed in the order
 * that keeps it representable, and a q̂ = 0 restarts the d's. The fallback when a transform produced a
 * NaN or a zero it should not have. Same outputs as dqds_step. */
static void dqd_safe(qd_state *s, const double *c, double *o, int i0, int n0) {
    double d = Q(c, i0), dmin = d, emin = Q(c, i0 + 1);
    for (int k = i0; k < n0; k++) {
        if (k == n0 - 2) { s->dn2 = d; s->dmin2 = dmin; }
        if (k == n0 - 1) { s->dn1 = d; s->dmin1 = dmin; }
        double qh = d + E(c, k), qn = Q(c, k + 1);
        Q(o, k) = qh;
        if (qh == 0.0) {
            E(o, k) = 0.0;
            d = qn;
            dmin = d;
            emin = 0.0;
        } else if (DBL_MIN * qn < qh && DBL_MIN * qh < qn) {
            double t = qn / qh;
            E(o, k) = E(c, k) * t;
            d *= t;
        } else {
            E(o, k) = qn * (E(c, k) / qh);
            d = qn * (d / qh);
        }
        dmin = d < dmin ? d : dmin;
        if (k < n0 - 2) emin = E(o, k) < emin ? E(o, k) : emin;
    }
    Q(o, n0) = d;
    E(o, n0) = emin;
    s->dn = d;
    s->dmin = dmin;
}

/* The sum of (e_k/q_k)·(e_{k+1}/q_{k+1})⋯ going up from row k0 to i0, starting from b2 (and a2 = the
 * sum so far): dlasq4's estimate of the norm² of the Rayleigh-quotient residual. Returns 0 when some
 * e_k > q_k (no estimate: the caller keeps its previous shift), else 1 with *a2 set. */
static int shift_residual(const double *c, int k0, int i0, double b2, double *a2) {
    double b1, sum = *a2;
    for (int k = k0; k >= i0; k--) {
        if (b2 == 0.0) break;
        b1 = b2;
        if (E(c, k) > Q(c, k)) return 0;
        b2 *= E(c, k) / Q(c, k);
        sum += b2;
        if (100.0 * (b2 > b1 ? b2 : b1) < sum || 0.563 < sum) break;
    }
    *a2 = sum;
    return 1;
}

/* The next shift for rows i0..n0 of c, o the previous iterate, n0in the bottom row before this step's
 * deflations (dlasq4): from the last transform's d's, a lower bound on the smallest λ of the shifted
 * array, as close to it as the information allows (cases 2–12 of Parlett & Marques). Where LAPACK
 * returns early without setting the shift, the previous shift is kept, as there. */
static double dqds_shift(qd_state *s, const double *c, const double *o, int i0, int n0, int n0in) {
    const double cnst1 = 0.563, cnst2 = 1.01, cnst3 = 1.05, third = 0.333;
    const double dmin = s->dmin, dmin1 = s->dmin1, dmin2 = s->dmin2, dn = s->dn, dn1 = s->dn1, dn2 = s->dn2;
    const double keep = s->tau;
    double sh = 0.0, a2, b1, b2, gam, gap1, gap2;
    if (dmin <= 0.0) { // a negative dmin is minus the shift to use (the start of a segment, or after a flip)
        s->ttype = -1;
        return -dmin;
    }
    if (n0in == n0) { // no deflation
        if (dmin == dn || dmin == dn1) {
            b1 = sqrt(Q(c, n0)) * sqrt(E(c, n0 - 1));
            b2 = sqrt(Q(c, n0 - 1)) * sqrt(E(c, n0 - 2));
            a2 = Q(c, n0 - 1) + E(c, n0 - 1);
            if (dmin == dn && dmin1 == dn1) { // cases 2 and 3
                gap2 = dmin2 - a2 - dmin2 * 0.25;
                gap1 = gap2 > 0.0 && gap2 > b2 ? a2 - dn - (b2 / gap2) * b2 : a2 - dn - (b1 + b2);
                if (gap1 > 0.0 && gap1 > b1) {
                    sh = dn - (b1 / gap1) * b1;
                    if (sh < 0.5 * dmin) sh = 0.5 * dmin;
                    s->ttype = -2;
                } else {
                    sh = dn > b1 ? dn - b1 : 0.0;
                    if (a2 > b1 + b2 && a2 - (b1 + b2) < sh) sh = a2 - (b1 + b2);
                    if (sh < third * dmin) sh = third * dmin;
                    s->ttype = -3;
                }
            } else { // case 4
                s->ttype = -4;
                sh = 0.25 * dmin;
                int k0;
                if (dmin == dn) {
                    gam = dn;
                    a2 = 0.0;
                    if (E(c, n0 - 1) > Q(c, n0 - 1)) return keep;
                    b2 = E(c, n0 - 1) / Q(c, n0 - 1);
                    k0 = n0 - 2;
                } else {
                    gam = dn1;
                    if (E(o, n0 - 1) > Q(o, n0)) return keep;
                    a2 = E(o, n0 - 1) / Q(o, n0);
                    if (E(c, n0 - 2) > Q(c, n0 - 2)) return keep;
                    b2 = E(c, n0 - 2) / Q(c, n0 - 2);
                    k0 = n0 - 3;
                }
                a2 += b2;
                if (!shift_residual(c, k0, i0, b2, &a2)) return keep;
                a2 *= cnst3;
                if (a2 < cnst1) sh = gam * (1.0 - sqrt(a2)) / (1.0 + a2);
            }
        } else if (dmin == dn2) { // case 5
            s->ttype = -5;
            sh = 0.25 * dmin;
            b1 = Q(o, n0);
            b2 = Q(o, n0 - 1);
            gam = dn2;
            if (E(o, n0 - 2) > b2 || E(o, n0 - 1) > b1) return keep;
            a2 = (E(o, n0 - 2) / b2) * (1.0 + E(o, n0 - 1) / b1);
            if (n0 - i0 > 2) {
                b2 = E(c, n0 - 3) / Q(c, n0 - 3);
                a2 += b2;
                if (!shift_residual(c, n0 - 4, i0, b2, &a2)) return keep;
                a2 *= cnst3;
            }
            if (a2 < cnst1) sh = gam * (1.0 - sqrt(a2)) / (1.0 + a2);
        } else { // case 6: nothing to go on; a growing fraction of dmin while this repeats
            if (s->ttype == -6) s->g += third * (1.0 - s->g);
            else if (s->ttype == -18) s->g = 0.25 * third;
            else s->g = 0.25;
            sh = s->g * dmin;
            s->ttype = -6;
        }
    } else if (n0in == n0 + 1) { // one λ deflated: dmin1, dn1 stand for dmin, dn
        if (dmin1 == dn1 && dmin2 == dn2) { // cases 7 and 8
            s->ttype = -7;
            sh = third * dmin1;
            if (E(c, n0 - 1) > Q(c, n0 - 1)) return keep;
            b1 = E(c, n0 - 1) / Q(c, n0 - 1);
            b2 = b1;
            if (b2 != 0.0)
                for (int k = n0 - 2; k >= i0; k--) {
                    a2 = b1;
                    if (E(c, k) > Q(c, k)) return keep;
                    b1 *= E(c, k) / Q(c, k);
                    b2 += b1;
                    if (100.0 * (b1 > a2 ? b1 : a2) < b2) break;
                }
            b2 = sqrt(cnst3 * b2);
            a2 = dmin1 / (1.0 + b2 * b2);
            gap2 = 0.5 * dmin2 - a2;
            double t;
            if (gap2 > 0.0 && gap2 > b2 * a2) t = a2 * (1.0 - cnst2 * a2 * (b2 / gap2) * b2);
            else { t = a2 * (1.0 - cnst2 * b2); s->ttype = -8; }
            if (t > sh) sh = t;
        } else { // case 9
            sh = dmin1 == dn1 ? 0.5 * dmin1 : 0.25 * dmin1;
            s->ttype = -9;
        }
    } else if (n0in == n0 + 2) { // two λ deflated: dmin2, dn2 stand for dmin, dn
        if (dmin2 == dn2 && 2.0 * E(c, n0 - 1) < Q(c, n0 - 1)) { // case 10
            s->ttype = -10;
            sh = third * dmin2;
            b1 = E(c, n0 - 1) / Q(c, n0 - 1);
            b2 = b1;
            if (b2 != 0.0)
                for (int k = n0 - 2; k >= i0; k--) {
                    if (E(c, k) > Q(c, k)) return keep;
                    b1 *= E(c, k) / Q(c, k);
                    b2 += b1;
                    if (100.0 * b1 < b2) break;
                }
            b2 = sqrt(cnst3 * b2);
            a2 = dmin2 / (1.0 + b2 * b2);
            gap2 = Q(c, n0 - 1) + E(c, n0 - 2) - sqrt(Q(c, n0 - 2)) * sqrt(E(c, n0 - 2)) - a2;
            double t = gap2 > 0.0 && gap2 > b2 * a2 ? a2 * (1.0 - cnst2 * a2 * (b2 / gap2) * b2) : a2 * (1.0 - cnst2 * b2);
            if (t > sh) sh = t;
        } else { // case 11
            sh = 0.25 * dmin2;
            s->ttype = -11;
        }
    } else { // case 12: more than two deflated, no information
        sh = 0.0;
        s->ttype = -12;
    }
    return sh;
}

// Reverse rows i0..n0 of a qd array: the q's, and the e's between them.
static void qd_reverse(double *a, int i0, int n0) {
    for (int i = i0, j = n0; i < j; i++, j--) { double t = Q(a, i); Q(a, i) = Q(a, j); Q(a, j) = t; }
    for (int i = i0, j = n0 - 1; i < j; i++, j--) { double t = E(a, i); E(a, i) = E(a, j); E(a, j) = t; }
}

// σ += τ, with the rounding error carried in desig (dlasq3)
static void qd_add_shift(qd_state *s, double tau) {
    if (tau < s->sigma) {
        s->desig += tau;
        double t = s->sigma + s->desig;
        s->desig -= t - s->sigma;
        s->sigma = t;
    } else {
        double t = s->sigma + tau;
        s->desig = s->sigma - (t - tau) + s->desig;
        s->sigma = t;
    }
    s->tau = tau;
}

/* One transform of a pipelined group: its d, the minima of its d and ê, and (from row n0 − 2 on) the
 * quantities dqds_step reports. The minima are kept as the bit patterns of the doubles, compared as
 * signed integers: for x, y ≥ 0 the order is the same, a negative d has a negative pattern (it rejects
 * the group, which is all the group needs to know of it), and the select compiles to a conditional move.
 * A select of doubles does not in V8 (it becomes a branch, mispredicted whenever the minimum moves),
 * which ran the groups 2× slower in WASM than natively. */
typedef struct qd_chain { double d, dn1, dn2; int64_t dmin, emin, dmin1, dmin2; } qd_chain;

static inline int64_t f64_bits(double x) { int64_t b; memcpy(&b, &x, sizeof b); return b; }
static inline double bits_f64(int64_t b) { double x; memcpy(&x, &b, sizeof x); return x; }
static inline int64_t min_bits(int64_t a, int64_t b) { return a < b ? a : b; }

/* Row k ≤ n0 − 3 of a transform: dqds_step's loop body (without the flush of a transform without shift).
 * No restrict here: in a group one transform's output array is another's input. */
static inline void chain_row(qd_chain *ch, const double *in, double *out, int k, double tau) {
    double qh = ch->d + E(in, k), t = Q(in, k + 1) / qh, eh = E(in, k) * t;
    ch->d = ch->d * t - tau;
    Q(out, k) = qh;
    E(out, k) = eh;
    ch->dmin = min_bits(ch->dmin, f64_bits(ch->d));
    ch->emin = min_bits(ch->emin, f64_bits(eh));
}

// Row k of rows i0..n0 − 1 of a transform, whichever it is: its start, a row, or one of dqds_step's last two.
static inline void chain_any(qd_chain *ch, const double *in, double *out, int k, int i0, int n0, double tau) {
    if (k < i0 || k >= n0) return;
    if (k == i0) {
        ch->d = Q(in, i0) - tau;
        ch->dmin = f64_bits(ch->d);
        ch->emin = f64_bits(Q(in, i0 + 1));
    }
    if (k <= n0 - 3) {
        chain_row(ch, in, out, k, tau);
        return;
    }
    if (k == n0 - 2) {
        ch->dn2 = ch->d;
        ch->dmin2 = ch->dmin;
    }
    double qh = ch->d + E(in, k);
    Q(out, k) = qh;
    E(out, k) = Q(in, k + 1) * (E(in, k) / qh);
    ch->d = Q(in, k + 1) * (ch->d / qh) - tau;
    ch->dmin = min_bits(ch->dmin, f64_bits(ch->d));
    if (k == n0 - 2) {
        ch->dn1 = ch->d;
        ch->dmin1 = ch->dmin;
    } else {
        Q(out, n0) = ch->d;
        E(out, n0) = bits_f64(ch->emin);
    }
}

enum { QD_GROUP = 4, QD_GROUP_MIN = 16 }; // transforms per group; the shortest segment given groups

/* Wavefront k of a group: transform j on row k − 2j (rows outside i0..n0 − 1 are skipped). */
static inline void group_wave(qd_chain *c0, qd_chain *c1, qd_chain *c2, qd_chain *c3, double *x0, double *x1,
                              double *x2, int k, int i0, int n0, double tau) {
    chain_any(c0, x0, x1, k, i0, n0, tau);
    chain_any(c1, x1, x2, k - 2, i0, n0, 0.0);
    chain_any(c2, x2, x1, k - 4, i0, n0, 0.0);
    chain_any(c3, x1, x2, k - 6, i0, n0, 0.0);
}

// A transform of a group kept every d ≥ 0 (dmin ≥ +0, dmin1 > 0, and no NaN, which reaches the last d).
static inline int chain_ok(const qd_chain *ch) { return !isnan(ch->d) && ch->dmin >= 0 && ch->dmin1 > 0; }

/* A group of QD_GROUP transforms of rows i0..n0: the first with shift tau from cur into prev, the others
 * without shift, alternately into spare and prev (each reads its input two rows behind the transform that
 * writes it, and overwrites an array two rows behind the transform that reads it). Wavefront k runs
 * transform j on row k − 2j. When every transform kept its d ≥ 0 the group is taken: the roles rotate
 * (the last output becomes cur, the one before it prev) and the state holds the last transform's d's;
 * returns 1. Else returns 0 with cur intact: the caller redoes the step one transform at a time, with
 * LAPACK's retries. The four chains are named locals, not an array: an array indexed in a loop stays in
 * memory (in WASM, on the stack in linear memory), and each d then makes a store and a load per row on
 * its dependence chain. */
static int dqds_group(qd_state *s, int i0, int n0, double tau) {
    _Static_assert(QD_GROUP == 4, "group_wave and the steady loop run four transforms");
    double *x0 = s->cur, *x1 = s->prev, *x2 = s->spare;
    qd_chain c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}; // set by the first wave (zeroed for gcc -O3, which cannot see it)
    int k = i0;
    for (; k <= i0 + 6; k++) group_wave(&c0, &c1, &c2, &c3, x0, x1, x2, k, i0, n0, tau); // transform j joins at i0 + 2j
    for (; k <= n0 - 3; k++) { // every transform on a row of its loop
        chain_row(&c0, x0, x1, k, tau);
        chain_row(&c1, x1, x2, k - 2, 0.0);
        chain_row(&c2, x2, x1, k - 4, 0.0);
        chain_row(&c3, x1, x2, k - 6, 0.0);
    }
    for (; k <= n0 + 5; k++) group_wave(&c0, &c1, &c2, &c3, x0, x1, x2, k, i0, n0, tau); // the last rows of each
    if (!(chain_ok(&c0) && chain_ok(&c1) && chain_ok(&c2) && chain_ok(&c3))) return 0;
    s->dmin = bits_f64(c3.dmin);
    s->dmin1 = bits_f64(c3.dmin1);
    s->dmin2 = bits_f64(c3.dmin2);
    s->dn = c3.d;
    s->dn1 = c3.dn1;
    s->dn2 = c3.dn2;
    s->cur = x2; // QD_GROUP even: the last transform wrote x2, the one before it x1
    s->prev = x1;
    s->spare = x0;
    return 1;
}

enum { QD_STEPPED, QD_BUDGET, QD_FINISHED };

/* One step on the segment i0..*n0 (dlasq3): deflate the converged rows at the bottom (their λ = q + σ go
 * to ping), reverse the segment when its larger end is at the bottom, choose a shift and transform (a
 * group when the segment is long enough), retrying with smaller shifts until every d ≥ 0.
 * `flipped`: the caller has just reversed the segment (dlasq3's PP = 2), skip the deflation tests.
 * Returns QD_STEPPED (cur and prev are the new iterates), QD_FINISHED (the segment is all deflated), or
 * QD_BUDGET (the transform budget is spent; cur is intact). */
static int dqds_iteration(qd_state *s, int i0, int *pn0, int flipped) {
    const double tol = 100.0 * DBL_EPSILON, tol2 = tol * tol;
    double *ping = s->ping, *c = s->cur, *o = s->prev;
    int n0 = *pn0, n0in = n0;
    while (!flipped) {
        if (n0 < i0) { *pn0 = n0; return QD_FINISHED; }
        if (n0 == i0) {
            Q(ping, n0) = Q(c, n0) + s->sigma;
            n0--;
            continue;
        }
        if (n0 > i0 + 1) {
            // e_{n0−1} negligible, now and in the previous iterate: q_{n0} is converged
            if (!(E(c, n0 - 1) > tol2 * (s->sigma + Q(c, n0)) && E(o, n0 - 1) > tol2 * Q(c, n0 - 1))) {
                Q(ping, n0) = Q(c, n0) + s->sigma;
                n0--;
                continue;
            }
            if (E(c, n0 - 2) > tol2 * s->sigma && E(o, n0 - 2) > tol2 * Q(c, n0 - 2)) break; // nothing to deflate
        }
        /* The bottom 2×2 of L·U splits off: its λ from λ₁ + λ₂ = q₁ + e₁ + q₂, λ₁·λ₂ = q₁·q₂ (symmetric in
         * q₁, q₂, so they may be ordered), with λ₂ = q₁·q₂/λ₁ to keep it relatively accurate. */
        double *qa = &Q(c, n0 - 1), *qb = &Q(c, n0), eb = E(c, n0 - 1);
        if (*qb > *qa) { double t = *qb; *qb = *qa; *qa = t; }
        if (eb > *qb * tol2) {
            double t = 0.5 * ((*qa - *qb) + eb), r = *qb * (eb / t);
            if (r <= t) r = *qb * (eb / (t * (1.0 + sqrt(1.0 + r / t))));
            else r = *qb * (eb / (t + sqrt(t) * sqrt(t + r)));
            t = *qa + (r + eb);
            *qb = *qb * (*qa / t);
            *qa = t;
        }
        Q(ping, n0 - 1) = *qa + s->sigma;
        Q(ping, n0) = *qb + s->sigma;
        n0 -= 2;
    }

    // reverse when the larger end is at the bottom (dqds converges at the bottom, fastest to small λ)
    if (s->dmin <= 0.0 || n0 < n0in) {
        if (1.5 * Q(c, i0) < Q(c, n0)) {
            qd_reverse(c, i0, n0);
            qd_reverse(o, i0, n0);
            if (n0 - i0 <= 4) {
                E(c, n0) = E(c, i0);
                E(o, n0) = E(o, i0);
            }
            if (E(c, n0) < s->dmin2) s->dmin2 = E(c, n0);
            E(c, n0) = min3(E(c, n0), E(c, i0), E(c, i0 + 1));
            E(o, n0) = min3(E(o, n0), E(o, i0), E(o, i0 + 1));
            s->qmax = max3(s->qmax, Q(c, i0), Q(c, i0 + 1));
            s->dmin = -0.0; // no shift on the reversed array
        }
    }

    double tau = dqds_shift(s, c, o, i0, n0, n0in);
    /* A group, unless the last step needed the guarded transform: a q̂ = 0 (an e that underflowed to 0
     * next to a d = 0) makes NaN, and it would fail the group again, every step, in arrays graded beyond
     * the exponent range. */
    if (!s->guarded && n0 - i0 + 1 >= QD_GROUP_MIN && s->iter + QD_GROUP <= s->maxit) {
        s->iter += QD_GROUP;
        double t = tau < 0.5 * DBL_EPSILON * (s->sigma + tau) ? 0.0 : tau; // as dqds_step takes it
        if (dqds_group(s, i0, n0, t)) {
            qd_add_shift(s, t);
            *pn0 = n0;
            return QD_STEPPED;
        }
    }
    for (int tries = 0, safe = 0;; tries++) {
        if (s->iter >= s->maxit) { *pn0 = n0; return QD_BUDGET; }
        s->iter++;
        s->guarded = safe || tries >= 8;
        if (s->guarded) { // (LAPACK's rules reach this within four tries; 8 only bounds the loop)
            dqd_safe(s, c, o, i0, n0);
            tau = 0.0;
            break;
        }
        tau = dqds_step(s, c, o, i0, n0, tau);
        int nan = isnan(s->dn);
        if (!nan && s->dmin >= 0.0 && s->dmin1 > 0.0) break; // accepted
        if (!nan && s->dmin < 0.0 && s->dmin1 > 0.0 && E(o, n0 - 1) < tol * (s->sigma + s->dn1) &&
            fabs(s->dn) < tol * s->sigma) { // only dn < 0, and it is noise on a converged λ: accept with dn = 0
            Q(o, n0) = 0.0;
            s->dmin = 0.0;
            break;
        }
        if (s->dmin < 0.0) { // τ too big
            if (s->ttype < -22) tau = 0.0; // failed twice: no shift
            else if (s->dmin1 > 0.0) { // only the last d failed: τ + dn is an excellent shift
                tau = (tau + s->dmin) * (1.0 - 2.0 * DBL_EPSILON);
                s->ttype -= 11;
            } else { // early failure
                tau *= 0.25;
                s->ttype -= 12;
            }
            if (!(tau >= 0.0)) tau = 0.0; // (dmin = −∞ after an overflow)
            continue;
        }
        if (nan && tau != 0.0) { tau = 0.0; continue; }
        safe = 1; // a NaN without shift, or a d that underflowed to 0: the guarded transform
    }
    qd_add_shift(s, tau);
    s->cur = o;
    s->prev = c;
    *pn0 = n0;
    return QD_STEPPED;
}

/* A split at row `split` leaves the block i0..split (and any blocks split off inside it) waiting for a
 * later pass, which looks for it in ping (cur) and pong (prev): move its rows there from cur and prev.
 * The segment below goes on in rows split + 1.., which no copy touches. */
static void qd_park(qd_state *s, int i0, int split) {
    double *cur = s->cur, *prev = s->prev, *ping = s->ping, *pong = s->pong;
    size_t at = 2 * (size_t)i0, len = 2 * (size_t)(split - i0 + 1);
    if (cur == pong && prev == ping) {
        for (size_t k = at; k < at + len; k++) { double t = ping[k]; ping[k] = pong[k]; pong[k] = t; }
        return;
    }
    if (prev == ping) { // (cur is the third array)
        memcpy(pong + at, ping + at, len * sizeof *ping);
        prev = pong;
    }
    if (cur != ping) memcpy(ping + at, cur + at, len * sizeof *ping);
    if (prev != pong) memcpy(pong + at, prev + at, len * sizeof *ping);
}

/* The budget ran out with rows i0..n0 unfinished in c (shift sigma) and the blocks above them in ping,
 * each ending in its mark −σ. Each row gets the diagonal of its L·U plus its shift, q_k + e_{k−1} + σ:
 * finite and ≥ 0, the trace kept, accurate only where the array is nearly diagonal. */
static void dqds_unfinished(double *ping, const double *c, int i0, int n0, double sigma) {
    for (int k = n0; k >= i0; k--) Q(ping, k) = Q(c, k) + (k > i0 ? E(c, k - 1) : 0.0) + sigma;
    double shift = 0.0;
    for (int k = i0 - 1; k >= 0; k--) {
        if (E(ping, k) <= 0.0) shift = -E(ping, k); // the last row of a block: its mark
        Q(ping, k) += (k > 0 && E(ping, k - 1) > 0.0 ? E(ping, k - 1) : 0.0) + shift;
    }
}

/* The λ of the positive qd array in ping (q_k at [2k], e_k at [2k + 1], e_{n−1} = 0, n ≥ 3) into its
 * q's, unsorted (dlasq2). pong, third: scratch of 2n each. AV_OK, or AV_WARN_NO_CONVERGENCE when the
 * transform budget (test_maxit, else 100 per row) ran out: see dqds_unfinished. */
static int dqds_eigenvalues(double *ping, double *pong, double *third, int n) {
    const double tol = 100.0 * DBL_EPSILON, tol2 = tol * tol;
    double esum = 0.0;
    for (int k = 0; k + 1 < n; k++) esum += E(ping, k);
    if (esum == 0.0) return AV_OK; // diagonal (the e's underflowed when squared)
    memset(pong, 0, (size_t)(2 * n) * sizeof *pong);
    if (1.5 * Q(ping, 0) < Q(ping, n - 1)) qd_reverse(ping, 0, n - 1);

    /* Two transforms without shift (ping → pong → ping), each after a sweep from the bottom, splitting
     * wherever e_k ≤ tol²·d_k: the d's of the sweeps are the exact (to rounding) bounds of Li's test, so
     * a split there changes no λ by more than a few ulps relative. Marks are −0. */
    for (int pp = 0; pp < 2; pp++) {
        double *c = pp ? pong : ping, *o = pp ? ping : pong, d = Q(c, n - 1);
        for (int k = n - 2; k >= 0; k--) {
            if (E(c, k) <= tol2 * d) { E(c, k) = -0.0; d = Q(c, k); }
            else d = Q(c, k) * (d / (d + E(c, k)));
        }
        d = Q(c, 0);
        for (int k = 0; k < n - 1; k++) {
            double qn = Q(c, k + 1);
            Q(o, k) = d + E(c, k);
            if (E(c, k) <= tol2 * d) {
                E(c, k) = -0.0;
                Q(o, k) = d;
                E(o, k) = 0.0;
                d = qn;
            } else if (DBL_MIN * qn < Q(o, k) && DBL_MIN * Q(o, k) < qn) {
                double t = qn / Q(o, k);
                E(o, k) = E(c, k) * t;
                d *= t;
            } else {
                E(o, k) = qn * (E(c, k) / Q(o, k));
                d = qn * (d / Q(o, k));
            }
        }
        Q(o, n - 1) = d;
    }

    qd_state s = {.ping = ping, .pong = pong, .third = third, .maxit = test_maxit > 0 ? test_maxit : 100L * n};
    int n0 = n - 1;
    while (n0 >= 0) { // one segment, the bottom block, per pass
        s.cur = ping;
        s.prev = pong;
        s.spare = third;
        s.desig = 0.0;
        s.sigma = n0 == n - 1 ? 0.0 : -E(ping, n0);
        if (!(s.sigma >= 0.0)) s.sigma = 0.0; // (marks hold −σ ≤ 0)
        /* Its top row i0 (the first mark above), the largest q + e, and a Gershgorin-type lower bound
         * qmin − 2√(qmin·emax) on its λ from the bottom rows while q dominates e: the first shift. */
        double emax = 0.0, qmin = Q(ping, n0), qmax = qmin;
        int i0 = n0;
        for (; i0 > 0 && E(ping, i0 - 1) > 0.0; i0--) {
            if (qmin >= 4.0 * emax) {
                if (Q(ping, i0) < qmin) qmin = Q(ping, i0);
                if (E(ping, i0 - 1) > emax) emax = E(ping, i0 - 1);
            }
            double t = Q(ping, i0 - 1) + E(ping, i0 - 1);
            if (t > qmax) qmax = t;
        }
        /* Reverse the segment when the smallest d of a transform without shift (the last pivot of the
         * reversed factorisation) sits in its top third and is small: the small λ then converge at the
         * bottom. */
        int flipped = 0;
        if (n0 - i0 > 1) {
            double dee = Q(ping, i0), deemin = dee;
            int kmin = i0;
            for (int k = i0 + 1; k <= n0; k++) {
                dee = Q(ping, k) * (dee / (dee + E(ping, k - 1)));
                if (dee <= deemin) { deemin = dee; kmin = k; }
            }
            if (2 * (kmin - i0) < n0 - kmin && deemin <= 0.5 * Q(ping, n0)) {
                qd_reverse(ping, i0, n0);
                qd_reverse(pong, i0, n0);
                flipped = 1;
            }
        }
        double lb = qmin - 2.0 * sqrt(qmin) * sqrt(emax);
        s.dmin = lb > 0.0 ? -lb : -0.0;
        s.qmax = qmax;
        for (;;) {
            int r = dqds_iteration(&s, i0, &n0, flipped);
            if (r == QD_FINISHED) break;
            if (r == QD_BUDGET) {
                dqds_unfinished(ping, s.cur, i0, n0, s.sigma);
                return AV_WARN_NO_CONVERGENCE;
            }
            flipped = 0;
            /* A small e somewhere: split where e_k ≤ tol²·q_k in the previous iterate (Li's test with the
             * last transform's d, since q̂_k = d_k + e_k), or e_k ≤ tol²·σ now (negligible against the shift
             * every λ below has absorbed). The rows above the last split become a block of their own,
             * marked with −σ; the segment goes on below. (LAPACK tests after every second transform.) */
            double *c = s.cur, *o = s.prev;
            if (n0 - i0 >= 3 && (E(o, n0) <= tol2 * s.qmax || E(c, n0) <= tol2 * s.sigma)) {
                int split = i0 - 1;
                double qm = Q(c, i0), emin = E(c, i0), oldemin = E(o, i0);
                for (int k = i0; k <= n0 - 3; k++) {
                    if (E(o, k) <= tol2 * Q(c, k) || E(c, k) <= tol2 * s.sigma) {
                        E(c, k) = -s.sigma;
                        split = k;
                        qm = 0.0;
                        emin = E(c, k + 1);
                        oldemin = E(o, k + 1);
                    } else {
                        if (Q(c, k + 1) > qm) qm = Q(c, k + 1);
                        if (E(c, k) < emin) emin = E(c, k);
                        if (E(o, k) < oldemin) oldemin = E(o, k);
                    }
                }
                E(c, n0) = emin;
                E(o, n0) = oldemin;
                if (split >= i0) qd_park(&s, i0, split);
                i0 = split + 1;
                s.qmax = qm;
            }
        }
    }
    return AV_OK;
}

/* Singular values of [[f, g], [0, h]] (LAPACK dlas2), *smin ≤ *smax, to high relative accuracy and
 * without overflow for any finite entries. */
static void sv2(double f, double g, double h, double *smin, double *smax) {
    double fa = fabs(f), ga = fabs(g), ha = fabs(h);
    double fhmn = fa < ha ? fa : ha, fhmx = fa < ha ? ha : fa;
    if (fhmn == 0.0) {
        *smin = 0.0;
        if (fhmx == 0.0) *smax = ga;
        else {
            double mx = fhmx > ga ? fhmx : ga, mn = fhmx > ga ? ga : fhmx;
            *smax = mx * sqrt(1.0 + (mn / mx) * (mn / mx));
        }
    } else if (ga < fhmx) {
        double as = 1.0 + fhmn / fhmx, at = (fhmx - fhmn) / fhmx, au = (ga / fhmx) * (ga / fhmx);
        double c = 2.0 / (sqrt(as * as + au) + sqrt(at * at + au));
        *smin = fhmn * c;
        *smax = fhmx / c;
    } else {
        double au = fhmx / ga;
        if (au == 0.0) { // g dwarfs f and h: the general formula would underflow
            *smin = (fhmn * fhmx) / ga;
            *smax = ga;
        } else {
            double as = 1.0 + fhmn / fhmx, at = (fhmx - fhmn) / fhmx;
            double c = 1.0 / (sqrt(1.0 + (as * au) * (as * au)) + sqrt(1.0 + (at * au) * (at * au)));
            *smin = 2.0 * ((fhmn * c) * au);
            *smax = ga / (c + c);
        }
    }
}

/* Singular values of the upper bidiagonal B (diagonal d[0..n), superdiagonal e[0..n−1)) into sv[0..n)
 * descending, to high relative accuracy (dlasq1). The |entries| are scaled by a power of two (exact) to
 * put the largest in [2^495, 2^496): the squares stay below 2^992 and their sums over n ≤ AV_MAX_N rows
 * finite, and squares down to 2^−1022, σ down to 2^−1007·σ₁, stay normal. Then λ = σ² of the qd array
 * by dqds, σ = √λ unscaled. ping, pong, third: work vectors of 2n. AV_OK or AV_WARN_NO_CONVERGENCE. */
static int bidiag_singular_values(double *sv, const double *d, const double *e, int n, double *ping, double *pong,
                                  double *third) {
    if (n == 1) { sv[0] = fabs(d[0]); return AV_OK; }
    if (n == 2) { sv2(d[0], e[0], d[1], &sv[1], &sv[0]); return AV_OK; }
    double big = 0.0;
    for (int k = 0; k + 1 < n; k++) big = fabs(e[k]) > big ? fabs(e[k]) : big;
    if (big == 0.0) { // diagonal
        for (int k = 0; k < n; k++) sv[k] = fabs(d[k]);
        qsort(sv, (size_t)n, sizeof *sv, cmp_desc);
        return AV_OK;
    }
    for (int k = 0; k < n; k++) big = fabs(d[k]) > big ? fabs(d[k]) : big;
    int ex;
    frexp(big, &ex); // big = f·2^ex, ½ ≤ f < 1
    const int scale = 496 - ex;
    for (int k = 0; k < n; k++) {
        double x = ldexp(d[k], scale), y = k + 1 < n ? ldexp(e[k], scale) : 0.0;
        Q(ping, k) = x * x;
        E(ping, k) = y * y;
    }
    int status = dqds_eigenvalues(ping, pong, third, n);
    for (int k = 0; k < n; k++) sv[k] = ldexp(sqrt(Q(ping, k) > 0.0 ? Q(ping, k) : 0.0), -scale);
    qsort(sv, (size_t)n, sizeof *sv, cmp_desc);
    return status;
}

#undef Q
#undef E

/* Test hook (not exported): bidiag_singular_values on (d, e). work: 6n + 24 doubles. */
int avi_spectrum_test_dqds(double *sv, const double *d, const double *e, int n, double *work) {
    size_t v = 2 * (size_t)n + 8;
    return bidiag_singular_values(sv, d, e, n, work, work + v, work + 2 * v);
}

/* How many singular values of B lie below x > 0. The Golub–Kahan tridiagonal T (zero diagonal, off-diagonal
 * d₀, e₀, d₁, …, d_{n−1}) has the eigenvalues ±σ, so n + #{σ < x} of them lie below x: the number of
 * negative pivots of T − x·I (Sylvester's inertia). The pivots p' = −x − b·(b/p) are computed with
 * relative accuracy in IEEE arithmetic (Demmel & Kahan 1990); a zero pivot is taken as −0, counted, and
 * its successor is then +∞ (b/−0 = ∓∞), after which b/∞ = 0 restarts the recurrence at −x. */
static int gk_count_below(const double *d, const double *e, int n, double x) {
    int neg = 1; // p = −x
    double p = -x;
    for (int j = 0; j < 2 * n - 1; j++) {
        double b = (j & 1) ? e[j >> 1] : d[j >> 1];
        p = b == 0.0 ? -x : -x - b * (b / p);
        if (p == 0.0) p = -0.0;
        neg += signbit(p) != 0;
    }
    return neg - n;
}

/* Test hook (not exported): the plain reference for bidiag_singular_values. B is first scaled by a power
 * of two to largest entry 1 (exactly), so that b·(b/p) overflows only where the limit ±∞ is right; then
 * σ_k (descending) by bisection on gk_count_below, geometric while the bracket spans more than a factor
 * 2, to adjacent doubles. σ below DBL_MIN (after scaling) come out as 0. O(n²·60) operations: tests only. */
void avi_spectrum_test_bisect(double *sv, const double *d, const double *e, int n, double *work) {
    double big = 0.0, *ds = work, *es = work + n;
    for (int k = 0; k < n; k++) big = fmax(big, fabs(d[k]));
    for (int k = 0; k + 1 < n; k++) big = fmax(big, fabs(e[k]));
    int ex = 0;
    if (big > 0.0) frexp(big, &ex);
    for (int k = 0; k < n; k++) {
        ds[k] = ldexp(d[k], -ex);
        es[k] = k + 1 < n ? ldexp(e[k], -ex) : 0.0;
    }
    double hi = 2.5; // σ₁ ≤ √(‖B‖₁·‖B‖_∞) ≤ 2·max|b| ≤ 2
    for (int k = 0; k < n; k++) { // σ_k is the least x with n − k values below (σ_k ≤ σ_{k−1} < hi)
        double lo = 0.0;
        for (int it = 0; it < 4000 && big > 0.0; it++) {
            double mid;
            if (lo == 0.0) {
                if (hi < DBL_MIN) break;
                mid = hi * 0x1p-32;
            } else mid = hi > 2.0 * lo ? sqrt(lo) * sqrt(hi) : lo + 0.5 * (hi - lo);
            if (!(mid > lo && mid < hi)) break;
            if (gk_count_below(ds, es, n, mid) >= n - k) hi = mid;
            else lo = mid;
        }
        sv[k] = lo == 0.0 ? 0.0 : ldexp(lo + 0.5 * (hi - lo), ex);
    }
}

// ----------------------------------------------------------------------------------------------------
// public: full routes

size_t av_svd_work(int n, int route) {
    if (n < 1 || n > AV_MAX_N) return 0;
    if (route == AV_SVD_FAST) return bytes_for(n, 2, 6);
    if (route == AV_SVD_ACCURATE) {
        avi_arena a = avi_arena_count();
        take(&a, (size_t)n * lead_dim(n));
        return acc_bytes(&a, n);
    }
    return 0;
}

// Copy float M (n×n) into double X (n×ld).
static void widen(double *restrict X, const float *restrict M, int n, int ld) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) X[(size_t)i * ld + j] = (double)M[(size_t)i * n + j];
}

// Accurate route on a double matrix X (n×ld, destroyed); vectors from c.
/* B = (d, e) of X (n×ld, destroyed) by the bidiagonalisation for n (or the tests' choice); w[2..7]: work
 * vectors, P: the panel store (acc_take). */
static void bidiagonalise_any(double *d, double *e, double *X, int n, int ld, double *const *w, double *P) {
    if (test_bidiag == 1 || (test_bidiag == 0 && n < BRD_MIN_N)) {
        bidiagonalise(d, e, X, n, ld, w[2], w[3], w[4], w[5], w[6], w[7]);
        return;
    }
    int nb = brd_nb(n), ldp = brd_ldp(n);
    bidiagonalise_blocked(d, e, X, n, ld, nb, P, P + (size_t)nb * ldp, P + (size_t)2 * nb * ldp, ldp, w[2], w[3], w[4],
                          w[5], w[6]);
}

static int accurate_route(double *sv, double *noise_floor, double *X, int n, int ld, avi_arena *c) {
    double *w[ACC_VECS], *P = acc_take(c, n, w), *d = w[0], *e = w[1];
    if (!P) return AV_ERR_WORKSPACE;
    bidiagonalise_any(d, e, X, n, ld, w, P);
    int status = bidiag_singular_values(sv, d, e, n, w[8], w[9], w[10]);
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
    avi_arena a = avi_arena_count(); /* the carving order of av_lowrank_singular_values */
    if (r >= n) {
        take(&a, (size_t)n * lead_dim(n));
        return acc_bytes(&a, n);
    }
    int ri = (int)r, ldc = lead_dim(n), ldr = lead_dim(ri);
    take(&a, (size_t)ri * ldc);
    take(&a, (size_t)ri * ldc);
    for (int i = 0; i < 3; i++) take(&a, (size_t)ri * ldr);
    return acc_bytes(&a, ri);
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
