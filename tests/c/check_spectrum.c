/* check_spectrum.c: both singular-value routes and the factor route against a slow, trusted oracle
 * (one-sided Jacobi in long double on the float32-rounded matrix), on matrices with planted spectra. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"


// ----------------------------------------------------------------------------------------------------
// helpers

/* Random orthogonal Q (n×n, row-major) from the Householder QR of a Gaussian matrix, signs fixed so Q
 * is Haar-distributed. */
static void random_orthogonal(double *Q, int n, av_rng *rng) {
    double *A = malloc(sizeof(double) * n * n), *v = malloc(sizeof(double) * n);
    for (int i = 0; i < n * n; i++) A[i] = av_rng_normal(rng);
    for (int i = 0; i < n * n; i++) Q[i] = (i / n == i % n);
    for (int k = 0; k < n; k++) { // reflect column k of A; accumulate Q ← Q·H_k
        double norm = 0;
        for (int i = k; i < n; i++) norm += A[i * n + k] * A[i * n + k];
        norm = sqrt(norm);
        double alpha = A[k * n + k], beta = alpha > 0 ? -norm : norm, vnorm = 0;
        for (int i = 0; i < n; i++) v[i] = i < k ? 0 : A[i * n + k];
        v[k] = alpha - beta;
        for (int i = k; i < n; i++) vnorm += v[i] * v[i];
        if (vnorm == 0) continue;
        for (int j = k; j < n; j++) {
            double s = 0;
            for (int i = k; i < n; i++) s += v[i] * A[i * n + j];
            for (int i = k; i < n; i++) A[i * n + j] -= 2 * s / vnorm * v[i];
        }
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int j = k; j < n; j++) s += Q[i * n + j] * v[j];
            for (int j = k; j < n; j++) Q[i * n + j] -= 2 * s / vnorm * v[j];
        }
        if (A[k * n + k] < 0)
            for (int i = 0; i < n; i++) Q[i * n + k] = -Q[i * n + k];
    }
    free(A);
    free(v);
}

// M (float32) = U·diag(s)·Vᵀ rounded from float64.
static void planted(float *M, const double *s, int n, uint64_t seed) {
    av_rng rng;
    av_rng_seed(&rng, seed);
    double *U = malloc(sizeof(double) * n * n), *V = malloc(sizeof(double) * n * n);
    random_orthogonal(U, n, &rng);
    random_orthogonal(V, n, &rng);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double t = 0;
            for (int k = 0; k < n; k++) t += U[i * n + k] * s[k] * V[j * n + k];
            M[i * n + j] = (float)t;
        }
    free(U);
    free(V);
}

static int cmp_desc_ld(const void *a, const void *b) {
    long double x = *(const long double *)a, y = *(const long double *)b;
    return (x < y) - (x > y);
}

/* Oracle: singular values of the float matrix M by one-sided Jacobi (Hestenes) in long double, swept
 * until every column pair is orthogonal to 1e-18 relative. Descending into sv. */
static void oracle_sv(double *sv, const float *M, int n) {
    long double *A = malloc(sizeof(long double) * n * n), *s = malloc(sizeof(long double) * n);
    for (int j = 0; j < n; j++) // column-major copy: column j contiguous
        for (int i = 0; i < n; i++) A[j * n + i] = M[i * n + j];
    for (int sweep = 0; sweep < 60; sweep++) {
        int rotated = 0;
        for (int p = 0; p < n - 1; p++)
            for (int q = p + 1; q < n; q++) {
                long double *a = A + p * n, *b = A + q * n, alpha = 0, beta = 0, gamma = 0;
                for (int i = 0; i < n; i++) { alpha += a[i] * a[i]; beta += b[i] * b[i]; gamma += a[i] * b[i]; }
                if (gamma == 0 || fabsl(gamma) <= 1e-18L * sqrtl(alpha * beta)) continue;
                rotated = 1;
                long double zeta = (beta - alpha) / (2 * gamma);
                long double t = (zeta >= 0 ? 1 : -1) / (fabsl(zeta) + sqrtl(1 + zeta * zeta));
                long double c = 1 / sqrtl(1 + t * t), sn = c * t;
                for (int i = 0; i < n; i++) {
                    long double x = a[i], y = b[i];
                    a[i] = c * x - sn * y;
                    b[i] = sn * x + c * y;
                }
            }
        if (!rotated) break;
    }
    for (int j = 0; j < n; j++) {
        long double t = 0;
        for (int i = 0; i < n; i++) t += A[j * n + i] * A[j * n + i];
        s[j] = sqrtl(t);
    }
    qsort(s, n, sizeof *s, cmp_desc_ld);
    for (int j = 0; j < n; j++) sv[j] = (double)s[j];
    free(A);
    free(s);
}

static int run_lowrank(double *sv, double *fl, const float *L, const float *R, int n, long r);
static void check_lowrank(int n, int r, int positive, uint64_t seed);

static int run_route(double *sv, double *floor_, const float *M, int n, int route) {
    size_t bytes = av_svd_work(n, route);
    ck_assert_uint_gt(bytes, 0);
    void *work = malloc(bytes);
    int st = av_singular_values(sv, floor_, M, n, route, work, bytes);
    free(work);
    return st;
}

/* Planted spectra: geometric decay over 12 decades with a cluster, an exact-zero tail, and tiny values. */
static void spectrum_kind(double *s, int n, int kind) {
    for (int i = 0; i < n; i++) {
        double t = (double)i / (n > 1 ? n - 1 : 1);
        if (kind == 0) s[i] = pow(10.0, -12.0 * t);                        // 1 … 1e-12
        else if (kind == 1) s[i] = i < n / 3 ? 1.0 + 1e-9 * i : 1e-3 * (1 - t); // cluster at 1, ramp to 0
        else s[i] = i < 7 ? 5.0 / (i + 1) : 0.0;                            // rank 7
    }
}

// ----------------------------------------------------------------------------------------------------
// accuracy of both routes

static void check_routes(int n, int kind, uint64_t seed) {
    double *s = malloc(sizeof(double) * n), *ref = malloc(sizeof(double) * n);
    double *fast = malloc(sizeof(double) * n), *acc = malloc(sizeof(double) * n);
    float *M = malloc(sizeof(float) * n * n);
    spectrum_kind(s, n, kind);
    planted(M, s, n, seed);
    oracle_sv(ref, M, n);
    double ff, fa;
    ck_assert_int_eq(run_route(fast, &ff, M, n, AV_SVD_FAST), AV_OK);
    ck_assert_int_eq(run_route(acc, &fa, M, n, AV_SVD_ACCURATE), AV_OK);
    double s1 = ref[0];
    ck_assert_double_eq_tol(fa, n * DBL_EPSILON * acc[0], 1e-30);
    ck_assert_double_eq_tol(ff, sqrt(n * DBL_EPSILON) * fast[0], 1e-30);
    for (int i = 0; i < n; i++) {
        ck_assert(fast[i] >= 0 && acc[i] >= 0);
        if (i) ck_assert(fast[i] <= fast[i - 1] && acc[i] <= acc[i - 1]);
        double ef = fabs(fast[i] - ref[i]), ea = fabs(acc[i] - ref[i]);
        // accurate: within a few ε·σ₁ absolute (2√n·ε·σ₁), and within its floor
        ck_assert_msg(ea <= 2 * sqrt(n) * DBL_EPSILON * s1 && ea <= fa, "acc n=%d kind=%d i=%d: %.17g vs %.17g (%g eps)", n,
                      kind, i, acc[i], ref[i], ea / DBL_EPSILON / s1);
        // fast: its contract in docs/readouts.md, and never beyond its floor
        if (ref[i] >= 1e-3 * s1) ck_assert_msg(ef <= 1e-9 * ref[i], "fast rel n=%d i=%d: %.17g vs %.17g", n, i, fast[i], ref[i]);
        else if (ref[i] >= 1e-6 * s1) ck_assert_msg(ef <= 1e-3 * ref[i], "fast n=%d i=%d: %g vs %g", n, i, fast[i], ref[i]);
        ck_assert_msg(ef <= ff, "fast floor n=%d i=%d: %g vs %g (floor %g)", n, i, fast[i], ref[i], ff);
    }
    free(s); free(ref); free(fast); free(acc); free(M);
}

/* Both routes read only what they wrote: a workspace full of NaN gives the bits a zeroed one gives. Found
 * by the fuzzer: on a diagonal-like M the fast route's first sweep read vp, wp (times 0) and a Householder
 * vector that τ = 0 left unwritten, and 0·NaN turned every σ into 0. */
START_TEST(test_workspace_garbage) {
    enum { N = 37 };
    float M[N * N];
    for (int pass = 0; pass < 3; pass++) {
        uint64_t s = 7 + pass;
        for (int i = 0; i < N * N; i++) M[i] = 0.0f;
        for (int i = 0; i < N; i++) {
            if (pass == 0) M[i * N + i] = i % 3 ? 1.0f : 0.0f;             /* diagonal, some zero rows */
            else if (pass == 1) M[i * N + (i * 7) % N] = 1.0f / (1 + i);  /* a scaled permutation */
            else for (int j = 0; j <= i; j++) M[i * N + j] = (float)((s = s * 6364136223846793005u + 1442695040888963407u) >> 40) / 16777216.0f;
        }
        for (int route = AV_SVD_FAST; route <= AV_SVD_ACCURATE; route++) {
            size_t wb = av_svd_work(N, route);
            unsigned char *w0 = calloc(1, wb), *w1 = malloc(wb);
            memset(w1, 0xff, wb); /* NaN in every double */
            double a[N], b[N], fa, fb;
            int sa = av_singular_values(a, &fa, M, N, route, w0, wb), sb = av_singular_values(b, &fb, M, N, route, w1, wb);
            ck_assert_int_eq(sa, AV_OK);
            ck_assert_int_eq(sb, sa);
            ck_assert_msg(memcmp(a, b, sizeof a) == 0 && fa == fb, "pass %d route %d: the workspace's contents changed σ", pass, route);
            free(w0);
            free(w1);
        }
    }
}
END_TEST

START_TEST(test_routes_geometric) {
    const int sizes[] = {1, 2, 3, 5, 37, 130};
    check_routes(sizes[_i], 0, 11 + _i);
}
END_TEST

START_TEST(test_routes_cluster_and_zeros) {
    const int sizes[] = {4, 37, 64, 130};
    check_routes(sizes[_i], 1, 21 + _i);
    check_routes(sizes[_i], 2, 31 + _i);
}
END_TEST

// Noise of the fast route on exact zeros stays well below its floor (the floor is not too tight).
START_TEST(test_fast_floor_margin) {
    int n = 200;
    double *s = calloc(n, sizeof(double)), *sv = malloc(sizeof(double) * n), fl;
    float *M = malloc(sizeof(float) * n * n);
    s[0] = 1;
    s[1] = 0.5;
    planted(M, s, n, 7);
    ck_assert_int_eq(run_route(sv, &fl, M, n, AV_SVD_FAST), AV_OK);
    for (int i = 2; i < n; i++) ck_assert_msg(sv[i] <= 0.25 * fl, "sv[%d] = %g, floor %g", i, sv[i], fl);
    free(s); free(sv); free(M);
}
END_TEST

// Hand-checkable matrices: zero, identity, diagonal with sizes not a multiple of the vector width.
START_TEST(test_simple_matrices) {
    const int n = 7;
    float M[49] = {0};
    double sv[7], fl;
    for (int route = 0; route < 2; route++) {
        memset(M, 0, sizeof M);
        ck_assert_int_eq(run_route(sv, &fl, M, n, route), AV_OK);
        for (int i = 0; i < n; i++) ck_assert_double_eq(sv[i], 0.0);
        ck_assert_double_eq(fl, 0.0);
        for (int i = 0; i < n; i++) M[i * n + i] = (float)(i - 3); // |diag| = 3 2 1 0 1 2 3
        ck_assert_int_eq(run_route(sv, &fl, M, n, route), AV_OK);
        const double want[7] = {3, 3, 2, 2, 1, 1, 0};
        for (int i = 0; i < n; i++) ck_assert_double_eq_tol(sv[i], want[i], 1e-14);
    }
}
END_TEST

/* The same through the blocked bidiagonalisation (n = 45, past the crossover): a zero matrix, a diagonal
 * one, and a permuted diagonal (a single nonzero in each row and column): every reflector is the identity
 * (τ = 0) and σ comes out exact. */
START_TEST(test_simple_matrices_blocked) {
    const int n = 45;
    float *M = calloc((size_t)n * n, sizeof(float));
    double *sv = malloc(sizeof(double) * n), fl;
    ck_assert_int_eq(run_route(sv, &fl, M, n, AV_SVD_ACCURATE), AV_OK);
    for (int i = 0; i < n; i++) ck_assert_double_eq(sv[i], 0.0);
    ck_assert_double_eq(fl, 0.0);
    for (int perm = 0; perm < 2; perm++) {
        memset(M, 0, sizeof(float) * n * n);
        for (int i = 0; i < n; i++) M[i * n + (perm ? (7 * i + 3) % n : i)] = (float)(i - 22); // 22 21 … 1 0 1 … 22
        ck_assert_int_eq(run_route(sv, &fl, M, n, AV_SVD_ACCURATE), AV_OK);
        for (int i = 0; i < n; i++) ck_assert_double_eq_tol(sv[i], (double)(22 - i / 2), 1e-13);
    }
    free(M);
    free(sv);
}
END_TEST

START_TEST(test_svd_status_codes) {
    float M[9] = {1, 2, 3, 4, 5, 6, 7, 8, 10};
    double sv[3], fl;
    size_t b = av_svd_work(3, AV_SVD_ACCURATE);
    ck_assert_uint_ge(b, av_svd_work(3, AV_SVD_FAST));
    char *work = malloc(b + 8);
    ck_assert_uint_eq(av_svd_work(0, AV_SVD_FAST), 0);
    ck_assert_uint_eq(av_svd_work(3, 7), 0);
    ck_assert_uint_eq(av_svd_work(AV_MAX_N + 1, AV_SVD_ACCURATE), 0);
    ck_assert_int_eq(av_singular_values(NULL, &fl, M, 3, 0, work, b), AV_ERR_NULL);
    ck_assert_int_eq(av_singular_values(sv, NULL, M, 3, 0, work, b), AV_ERR_NULL);
    ck_assert_int_eq(av_singular_values(sv, &fl, NULL, 3, 0, work, b), AV_ERR_NULL);
    ck_assert_int_eq(av_singular_values(sv, &fl, M, 3, 0, NULL, b), AV_ERR_NULL);
    ck_assert_int_eq(av_singular_values(sv, &fl, M, 0, 0, work, b), AV_ERR_SIZE);
    ck_assert_int_eq(av_singular_values(sv, &fl, M, 3, 2, work, b), AV_ERR_VARIANT);
    ck_assert_int_eq(av_singular_values(sv, &fl, M, 3, 1, work, b - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_singular_values(sv, &fl, M, 3, 0, work + 8, b), AV_OK); // any 8-byte alignment
    M[4] = NAN;
    ck_assert_int_eq(av_singular_values(sv, &fl, M, 3, 0, work, b), AV_ERR_NONFINITE);
    M[4] = INFINITY;
    ck_assert_int_eq(av_singular_values(sv, &fl, M, 3, 1, work, b), AV_ERR_NONFINITE);
    free(work);
}
END_TEST

START_TEST(test_no_convergence) {
    int n = 37;
    double *s = malloc(sizeof(double) * n), *sv = malloc(sizeof(double) * n), fl;
    float *M = malloc(sizeof(float) * n * n);
    spectrum_kind(s, n, 0);
    planted(M, s, n, 3);
    avi_spectrum_test_maxit(3); // 3 iterations in all (QL sweeps, dqds transforms): far too few for 37 σ
    int st_fast = run_route(sv, &fl, M, n, AV_SVD_FAST);
    int st_acc = run_route(sv, &fl, M, n, AV_SVD_ACCURATE);
    int st_low = run_lowrank(sv, &fl, M, M + n, n - 1, n); // (n−1)×n factors: r ≥ n, the accurate route
    avi_spectrum_test_maxit(0);
    ck_assert_int_eq(st_low, AV_WARN_NO_CONVERGENCE);
    ck_assert_int_eq(st_fast, AV_WARN_NO_CONVERGENCE);
    ck_assert_int_eq(st_acc, AV_WARN_NO_CONVERGENCE);
    for (int i = 0; i < n; i++) ck_assert(isfinite(sv[i]));
    ck_assert_int_eq(run_route(sv, &fl, M, n, AV_SVD_FAST), AV_OK);
    free(s); free(sv); free(M);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// the blocked bidiagonalisation against the unblocked reference

/* Test matrices for the two bidiagonalisations (n×n, float32): 0 Gaussian; 1 rank-deficient (a product
 * of n×r integer factors, r = n/3 + 1, exact in float32); 2 Gaussian with zero columns (the first, the last, and every
 * fifth); 3 Gaussian with zero rows (likewise); 4 rows graded over 12 decades; 5 columns graded likewise;
 * 6 a planted spectrum from 1 to 1e-12 with a cluster (spectrum_kind 1). */
static void bidiag_matrix(float *M, int n, int kind, uint64_t seed) {
    av_rng rng;
    av_rng_seed(&rng, seed);
    if (kind == 6) {
        double *s = malloc(sizeof(double) * n);
        spectrum_kind(s, n, 1);
        planted(M, s, n, seed);
        free(s);
        return;
    }
    if (kind == 1) {
        int r = n / 3 + 1;
        double *L = malloc(sizeof(double) * n * r), *R = malloc(sizeof(double) * n * r);
        for (int i = 0; i < n * r; i++) { // small integers: the product is exact in float32, of rank ≤ r
            L[i] = (double)(av_rng_next(&rng) % 5) - 2.0;
            R[i] = (double)(av_rng_next(&rng) % 5) - 2.0;
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double t = 0;
                for (int k = 0; k < r; k++) t += L[i * r + k] * R[j * r + k];
                M[i * n + j] = (float)t;
            }
        free(L);
        free(R);
        return;
    }
    for (int i = 0; i < n * n; i++) M[i] = (float)av_rng_normal(&rng);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int zc = j == 0 || j == n - 1 || j % 5 == 2, zr = i == 0 || i == n - 1 || i % 5 == 2;
            double t = (double)(n > 1 ? n - 1 : 1);
            if ((kind == 2 && zc) || (kind == 3 && zr)) M[i * n + j] = 0.0f;
            if (kind == 4) M[i * n + j] *= (float)pow(10.0, -12.0 * i / t);
            if (kind == 5) M[i * n + j] *= (float)pow(10.0, -12.0 * j / t);
        }
}

/* σ of one matrix through the accurate route with the unblocked reference and with the blocked
 * bidiagonalisation (avi_spectrum_test_bidiag): they agree to a few n·ε·σ₁ (both are backward stable, and
 * the σ stage after them adds a few ε·σ₁ of its own). Returns max |Δσ| / (n·ε·σ₁). */
static double check_blocked(int n, int kind, uint64_t seed) {
    float *M = malloc(sizeof(float) * n * n);
    double *ref = malloc(sizeof(double) * n), *blk = malloc(sizeof(double) * n), fr, fb;
    bidiag_matrix(M, n, kind, seed);
    avi_spectrum_test_bidiag(1);
    int st_ref = run_route(ref, &fr, M, n, AV_SVD_ACCURATE);
    avi_spectrum_test_bidiag(2);
    int st_blk = run_route(blk, &fb, M, n, AV_SVD_ACCURATE);
    avi_spectrum_test_bidiag(0);
    ck_assert_int_eq(st_ref, AV_OK);
    ck_assert_int_eq(st_blk, AV_OK);
    double unit = n * DBL_EPSILON * ref[0], worst = 0;
    for (int i = 0; i < n; i++) {
        double diff = fabs(blk[i] - ref[i]);
        ck_assert(blk[i] >= 0 && (i == 0 || blk[i] <= blk[i - 1]));
        ck_assert_msg(diff <= 4 * unit, "blocked n=%d kind=%d i=%d: %.17g vs %.17g (%.2f n·eps·s1)", n, kind, i, blk[i],
                      ref[i], diff / unit);
        if (unit > 0 && diff / unit > worst) worst = diff / unit;
    }
    if (kind == 1) // rank r: the trailing values are noise below the floor
        for (int i = n / 3 + 1; i < n; i++) ck_assert_msg(blk[i] <= fb, "n=%d i=%d: %g, floor %g", n, i, blk[i], fb);
    if (kind == 2 || kind == 3) { // zero columns or rows: at least that many exact zeros of the rank
        int zeros = 0;
        for (int k = 0; k < n; k++) zeros += k == 0 || k == n - 1 || k % 5 == 2;
        for (int i = n - zeros; i < n; i++) ck_assert_msg(blk[i] <= fb, "n=%d kind=%d i=%d: %g", n, kind, i, blk[i]);
    }
    free(M); free(ref); free(blk);
    return worst;
}

// Sizes around the panel width (8) and its multiples, and not multiples of it.
START_TEST(test_blocked_bidiag_matches_reference) {
    const int sizes[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 65, 200, 300};
    int n = sizes[_i];
    double worst = 0;
    for (int kind = 0; kind < 7; kind++) {
        double w = check_blocked(n, kind, 100 + 7 * n + kind);
        if (w > worst) worst = w;
    }
    if (getenv("ATTNVIZ_VERBOSE")) printf("blocked vs unblocked bidiagonalisation, n = %d: max |Δσ| = %.3f n·ε·σ₁\n", n, worst);
}
END_TEST

/* The factor route runs the accurate route on an r×r product: with r past the crossover to the blocked
 * bidiagonalisation, its workspace count covers the panel store (the sanitizers check the carving). */
START_TEST(test_blocked_bidiag_in_factor_route) {
    check_lowrank(70, 48, 0, 9);
    check_lowrank(60, 45, 1, 10);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// the bidiagonal solver of the accurate route (dqds) against its plain reference (bisection with Sturm
// counts on the Golub–Kahan tridiagonal), both through test hooks; relative accuracy per σ

// dqds on (d, e): status, and σ descending into sv.
static int run_dqds(double *sv, const double *d, const double *e, int n) {
    double *work = malloc(sizeof(double) * (6 * (size_t)n + 24));
    int st = avi_spectrum_test_dqds(sv, d, e, n, work);
    free(work);
    return st;
}

// The reference on (d, e): σ descending into sv.
static void run_bisect(double *sv, const double *d, const double *e, int n) {
    double *work = malloc(sizeof(double) * 2 * (size_t)n);
    avi_spectrum_test_bisect(sv, d, e, n, work);
    free(work);
}

/* dqds and the reference agree on every σ ≥ 2^−990·max|b| to (8 + 4n)·ε relative: both are relatively
 * accurate (dqds to a few ε in practice, the bisection to about n·ε on graded matrices). Below that the
 * squares dqds works with leave the exponent range, and the route's contract, 2ε·σ₁ absolute, is what
 * is checked. dqds's output is also checked for the promises: AV_OK, finite, ≥ 0, descending. Returns
 * the largest relative difference, in ε. */
static double check_bidiag(const char *what, const double *d, const double *e, int n) {
    double *sv = malloc(sizeof(double) * n), *ref = malloc(sizeof(double) * n), worst = 0, big = 0;
    ck_assert_int_eq(run_dqds(sv, d, e, n), AV_OK);
    run_bisect(ref, d, e, n);
    for (int i = 0; i < n; i++) big = fmax(big, fmax(fabs(d[i]), i + 1 < n ? fabs(e[i]) : 0.0));
    double tol = (8.0 + 4.0 * n) * DBL_EPSILON;
    for (int i = 0; i < n; i++) {
        ck_assert_msg(isfinite(sv[i]) && sv[i] >= 0 && (i == 0 || sv[i] <= sv[i - 1]), "%s n=%d i=%d: %g", what, n, i,
                      sv[i]);
        double err = fabs(sv[i] - ref[i]);
        if (ref[i] >= 0x1p-990 * big) {
            ck_assert_msg(err <= tol * ref[i], "%s n=%d i=%d: dqds %.17g, reference %.17g (%.3g ε relative)", what, n,
                          i, sv[i], ref[i], err / ref[i] / DBL_EPSILON);
            if (err / ref[i] > worst) worst = err / ref[i];
        } else
            ck_assert_msg(err <= 2 * DBL_EPSILON * ref[0] + 4 * DBL_MIN, "%s n=%d i=%d: dqds %g, reference %g, σ₁ %g",
                          what, n, i, sv[i], ref[i], ref[0]);
    }
    free(sv);
    free(ref);
    return worst / DBL_EPSILON;
}

// Gaussian d[0..n), e[0..n−1) (e[n−1] = 0), scaled entrywise by 10^(spread·U(−½, ½)).
static void random_bidiag(double *d, double *e, int n, double spread, uint64_t seed) {
    av_rng rng;
    av_rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) {
        d[i] = av_rng_normal(&rng) * pow(10.0, spread * (av_rng_uniform(&rng) - 0.5));
        e[i] = i + 1 < n ? av_rng_normal(&rng) * pow(10.0, spread * (av_rng_uniform(&rng) - 0.5)) : 0.0;
    }
}

static int cmp_desc_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The reference itself on closed forms: the all-ones bidiagonal has σ_k = 2·cos(kπ/(2n + 1)); a diagonal
 * one has σ = |d|; a 2×2 [[f, g], [0, h]] has σ₁σ₂ = |f·h| and σ₁² + σ₂² = f² + g² + h². dqds too. */
START_TEST(test_bidiag_closed_forms) {
    const int sizes[] = {1, 2, 3, 17, 100};
    for (int t = 0; t < 5; t++) {
        int n = sizes[t];
        double *d = malloc(sizeof(double) * n), *e = malloc(sizeof(double) * n), *ref = malloc(sizeof(double) * n);
        double *sv = malloc(sizeof(double) * n);
        for (int i = 0; i < n; i++) d[i] = e[i] = 1.0;
        run_bisect(ref, d, e, n);
        ck_assert_int_eq(run_dqds(sv, d, e, n), AV_OK);
        for (int k = 1; k <= n; k++) {
            double want = 2.0 * cos(k * 3.14159265358979323846 / (2 * n + 1));
            ck_assert_msg(fabs(ref[k - 1] - want) <= 4 * n * DBL_EPSILON * want, "ones n=%d k=%d: %.17g vs %.17g", n, k,
                          ref[k - 1], want);
            ck_assert_msg(fabs(sv[k - 1] - want) <= 4 * n * DBL_EPSILON * want, "ones dqds n=%d k=%d", n, k);
        }
        for (int i = 0; i < n; i++) {
            d[i] = (i % 2 ? -1.0 : 1.0) * pow(2.0, (i * 37) % 23 - 11);
            e[i] = 0.0;
        }
        run_bisect(ref, d, e, n);
        ck_assert_int_eq(run_dqds(sv, d, e, n), AV_OK);
        for (int i = 0; i < n; i++) d[i] = fabs(d[i]);
        qsort(d, n, sizeof *d, cmp_desc_d);
        for (int i = 0; i < n; i++) {
            ck_assert_double_eq_tol(ref[i], d[i], 2 * DBL_EPSILON * d[i]);
            ck_assert_double_eq(sv[i], d[i]); // diagonal: exact
        }
        free(d); free(e); free(ref); free(sv);
    }
    const double fgh[][3] = {{3, 4, 5}, {1e-3, 1, 1e3}, {2, 1e-9, 2}, {1, 1e8, 1}, {-7, 3, 0.5}};
    for (int t = 0; t < 5; t++) {
        double d[2] = {fgh[t][0], fgh[t][2]}, e[2] = {fgh[t][1], 0}, ref[2], sv[2];
        double p = fabs(fgh[t][0] * fgh[t][2]), s2 = fgh[t][0] * fgh[t][0] + fgh[t][1] * fgh[t][1] + fgh[t][2] * fgh[t][2];
        run_bisect(ref, d, e, 2);
        ck_assert_int_eq(run_dqds(sv, d, e, 2), AV_OK);
        ck_assert_double_eq_tol(ref[0] * ref[1], p, 8 * DBL_EPSILON * p);
        ck_assert_double_eq_tol(ref[0] * ref[0] + ref[1] * ref[1], s2, 8 * DBL_EPSILON * s2);
        ck_assert_double_eq_tol(sv[0] * sv[1], p, 8 * DBL_EPSILON * p);
        ck_assert_double_eq_tol(sv[0] * sv[0] + sv[1] * sv[1], s2, 8 * DBL_EPSILON * s2);
    }
}
END_TEST

START_TEST(test_bidiag_random) {
    const int sizes[] = {1, 2, 3, 17, 256, 1000};
    int n = sizes[_i];
    double *d = malloc(sizeof(double) * n), *e = malloc(sizeof(double) * n);
    random_bidiag(d, e, n, 0.0, 100 + _i);
    check_bidiag("gaussian", d, e, n);
    random_bidiag(d, e, n, 8.0, 200 + _i); // entries over eight decades
    check_bidiag("gaussian, 8 decades", d, e, n);
    free(d); free(e);
}
END_TEST

/* Graded: entries from 1e150 down to 1e-150 (and up, and alternating), so σ spans 300 decades and only
 * a relatively accurate solver gets the small ones (the QL on the Golub–Kahan matrix returned noise of
 * ε·σ₁ = 1e134 for them). */
START_TEST(test_bidiag_graded) {
    const int sizes[] = {2, 3, 17, 100};
    int n = sizes[_i];
    double *d = malloc(sizeof(double) * n), *e = malloc(sizeof(double) * n);
    av_rng rng;
    av_rng_seed(&rng, 300 + _i);
    for (int kind = 0; kind < 3; kind++) {
        for (int i = 0; i < n; i++) {
            double t = (double)i / (n - 1), r = 1 + 0.5 * av_rng_uniform(&rng);
            if (kind == 0) { d[i] = r * pow(10.0, 150 - 300 * t); e[i] = r * pow(10.0, 150 - 300 * t - 150.0 / n); }
            else if (kind == 1) { d[i] = r * pow(10.0, -150 + 300 * t); e[i] = -r * pow(10.0, -150 + 300 * t); }
            else { d[i] = r * pow(10.0, i % 2 ? -150 : 150); e[i] = r; }
        }
        e[n - 1] = 0;
        check_bidiag(kind == 0 ? "graded down" : kind == 1 ? "graded up" : "alternating 1e±150", d, e, n);
    }
    free(d); free(e);
}
END_TEST

/* Zeros: on the diagonal (B singular: det B = Πd = 0, and dqds returns an exact 0), on the superdiagonal
 * (B splits), both, a zero diagonal (σ = |e| and a 0), and all of B. */
START_TEST(test_bidiag_zeros) {
    const int sizes[] = {3, 4, 17, 200};
    int n = sizes[_i];
    double *d = malloc(sizeof(double) * n), *e = malloc(sizeof(double) * n), *sv = malloc(sizeof(double) * n);
    for (int kind = 0; kind < 7; kind++) {
        random_bidiag(d, e, n, 0.0, 400 + 10 * _i + kind);
        if (kind == 0) d[0] = 0;
        if (kind == 1) d[n - 1] = 0;
        if (kind == 2) d[n / 2] = 0;
        if (kind == 3) for (int i = 0; i < n; i += 3) d[i] = 0;
        if (kind == 4) for (int i = 0; i + 1 < n; i += 2) e[i] = 0; // splits into 2×2 blocks
        if (kind == 5) for (int i = 1; i + 2 < n; i += 4) e[i] = d[i + 2] = 0;
        if (kind == 6) for (int i = 0; i < n; i++) d[i] = 0;
        check_bidiag("zeros", d, e, n);
        ck_assert_int_eq(run_dqds(sv, d, e, n), AV_OK);
        int singular = 0;
        for (int i = 0; i < n; i++) singular |= d[i] == 0;
        if (singular) ck_assert_msg(sv[n - 1] == 0.0, "kind %d n=%d: σ_min = %g, want an exact 0", kind, n, sv[n - 1]);
        if (kind == 6) {
            for (int i = 0; i + 1 < n; i++) e[i] = fabs(e[i]);
            qsort(e, n - 1, sizeof *e, cmp_desc_d);
            for (int i = 0; i + 1 < n; i++) ck_assert_double_eq_tol(sv[i], e[i], 4 * DBL_EPSILON * e[i]);
        }
    }
    for (int i = 0; i < n; i++) d[i] = e[i] = 0.0;
    ck_assert_int_eq(run_dqds(sv, d, e, n), AV_OK);
    for (int i = 0; i < n; i++) ck_assert_double_eq(sv[i], 0.0);
    free(d); free(e); free(sv);
}
END_TEST

/* Equal singular values: identical blocks split apart (exact multiplicities), the same blocks coupled by
 * 1e-300 (equal to rounding), and the identity with one coupling. */
START_TEST(test_bidiag_equal) {
    const int n = 60;
    double d[60], e[60], sv[60];
    for (int link = 0; link < 2; link++) {
        for (int i = 0; i < n; i++) {
            d[i] = 1.0 + i % 3;
            e[i] = i % 3 != 2 ? 0.5 : link ? 1e-300 : 0.0;
        }
        e[n - 1] = 0;
        check_bidiag("equal blocks", d, e, n);
        ck_assert_int_eq(run_dqds(sv, d, e, n), AV_OK);
        for (int b = 0; b < 3; b++) // three σ, twenty copies each
            for (int i = 20 * b + 1; i < 20 * (b + 1); i++)
                ck_assert_msg(fabs(sv[i] - sv[20 * b]) <= 4 * DBL_EPSILON * sv[20 * b], "link %d: σ[%d] = %.17g, σ[%d] = %.17g",
                              link, i, sv[i], 20 * b, sv[20 * b]);
    }
    for (int i = 0; i < n; i++) d[i] = 1.0, e[i] = 0.0;
    e[n / 2] = 1e-8;
    check_bidiag("identity with one coupling", d, e, n);
}
END_TEST

/* One huge entry (1e200 and 1e120: the others' squares stay in range after scaling; DBL_MAX: the others
 * fall below the squares' range and are resolved only to ε·σ₁, the route's contract), a tiny matrix and
 * subnormal entries (scaled up exactly). */
START_TEST(test_bidiag_huge_and_tiny) {
    const int n = 40;
    double d[40], e[40], sv[40], ref[40];
    random_bidiag(d, e, n, 0.0, 500);
    d[n / 2] = 1e200;
    check_bidiag("one huge diagonal", d, e, n);
    d[n / 2] = 1.0;
    e[n / 3] = -1e120;
    check_bidiag("one huge superdiagonal", d, e, n);
    e[n / 3] = 1e200; // now σ_min ≈ 1e-204: below the range of relative accuracy, checked to ε·σ₁
    check_bidiag("one huger superdiagonal", d, e, n);
    e[n / 3] = DBL_MAX;
    ck_assert_int_eq(run_dqds(sv, d, e, n), AV_OK);
    run_bisect(ref, d, e, n);
    for (int i = 0; i < n; i++) {
        ck_assert(isfinite(sv[i]) && sv[i] >= 0 && (i == 0 || sv[i] <= sv[i - 1]));
        ck_assert_msg(fabs(sv[i] - ref[i]) <= 2 * DBL_EPSILON * ref[0], "DBL_MAX i=%d: %g vs %g", i, sv[i], ref[i]);
    }
    ck_assert_double_eq_tol(sv[0], DBL_MAX, 2 * DBL_EPSILON * DBL_MAX);
    random_bidiag(d, e, n, 0.0, 501);
    for (int i = 0; i < n; i++) d[i] *= 1e-200, e[i] *= 1e-200;
    check_bidiag("tiny", d, e, n);
    for (int i = 0; i < n; i++) d[i] = 5e-324 * (1 + i % 3), e[i] = i + 1 < n ? 1e-310 : 0;
    check_bidiag("subnormal", d, e, n);
}
END_TEST

// Signs do not matter: dqds sees only squares, so negating entries gives the same bits.
START_TEST(test_bidiag_signs) {
    const int n = 57;
    double d[57], e[57], a[57], b[57];
    random_bidiag(d, e, n, 2.0, 600);
    check_bidiag("negative entries", d, e, n);
    ck_assert_int_eq(run_dqds(a, d, e, n), AV_OK);
    for (int i = 0; i < n; i++) d[i] = fabs(d[i]), e[i] = -fabs(e[i]);
    ck_assert_int_eq(run_dqds(b, d, e, n), AV_OK);
    ck_assert_mem_eq(a, b, sizeof a);
}
END_TEST

// n = 1, 2 (closed form, no dqds), 3, 4 with zero patterns and extreme entries.
START_TEST(test_bidiag_tiny_n) {
    double sv[4];
    const double one[] = {-3.0, 0.0, 5e-324, -DBL_MAX};
    for (int t = 0; t < 4; t++) {
        double e0 = 0;
        ck_assert_int_eq(run_dqds(sv, &one[t], &e0, 1), AV_OK);
        ck_assert_double_eq(sv[0], fabs(one[t]));
    }
    const double vals[] = {0.0, 1.0, -2.5, 1e150, 1e-150}; // entries within the squares' range of each other
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 5; c++) {
                double d2[2] = {vals[a], vals[c]}, e2[2] = {vals[b], 0};
                check_bidiag("n=2", d2, e2, 2);
                double d3[3] = {vals[a], vals[c], vals[b]}, e3[3] = {vals[b], vals[a], 0};
                check_bidiag("n=3", d3, e3, 3);
                double d4[4] = {vals[c], vals[a], vals[b], vals[c]}, e4[4] = {vals[a], 0.5, vals[c], 0};
                check_bidiag("n=4", d4, e4, 4);
            }
}
END_TEST

/* With a tiny transform budget dqds stops early: AV_WARN_NO_CONVERGENCE, σ finite, ≥ 0, descending, and
 * Σσ² still the trace Σd² + Σe² (the unfinished rows report the diagonal of their L·U plus their shift). */
START_TEST(test_bidiag_budget) {
    const int n = 100;
    double d[100], e[100], sv[100];
    random_bidiag(d, e, n, 0.0, 700);
    double trace = 0, sum = 0;
    for (int i = 0; i < n; i++) trace += d[i] * d[i] + e[i] * e[i];
    for (int cap = 1; cap <= 40; cap += 13) {
        avi_spectrum_test_maxit(cap);
        int st = run_dqds(sv, d, e, n);
        avi_spectrum_test_maxit(0);
        ck_assert_int_eq(st, AV_WARN_NO_CONVERGENCE);
        sum = 0;
        for (int i = 0; i < n; i++) {
            ck_assert(isfinite(sv[i]) && sv[i] >= 0 && (i == 0 || sv[i] <= sv[i - 1]));
            sum += sv[i] * sv[i];
        }
        ck_assert_double_eq_tol(sum, trace, 1e-12 * trace);
    }
    ck_assert_int_eq(run_dqds(sv, d, e, n), AV_OK);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// factor route

static int run_lowrank(double *sv, double *fl, const float *L, const float *R, int n, long r) {
    size_t bytes = av_lowrank_svd_work(n, r);
    ck_assert_uint_gt(bytes, 0);
    void *work = malloc(bytes);
    int st = av_lowrank_singular_values(sv, fl, L, R, n, r, work, bytes);
    free(work);
    return st;
}

/* L·Rᵀ with L, R n×r Gaussian (a positive variant mimics kernel features). The factor route agrees with
 * the oracle on the float32-rounded product to the rounding of the product, and has exact zeros past r. */
static void check_lowrank(int n, int r, int positive, uint64_t seed) {
    av_rng rng;
    av_rng_seed(&rng, seed);
    float *L = malloc(sizeof(float) * n * r), *R = malloc(sizeof(float) * n * r), *M = malloc(sizeof(float) * n * n);
    double *sv = malloc(sizeof(double) * n), *ref = malloc(sizeof(double) * n), *full = malloc(sizeof(double) * n);
    for (int i = 0; i < n * r; i++) {
        double a = av_rng_normal(&rng), b = av_rng_normal(&rng);
        L[i] = (float)(positive ? exp(a) / n : a);
        R[i] = (float)(positive ? exp(b) : b);
    }
    double fro2 = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double t = 0;
            for (int k = 0; k < r; k++) t += (double)L[i * r + k] * R[j * r + k];
            M[i * n + j] = (float)t;
            fro2 += t * t;
        }
    double fl, flf;
    ck_assert_int_eq(run_lowrank(sv, &fl, L, R, n, r), AV_OK);
    ck_assert_int_eq(run_route(full, &flf, M, n, AV_SVD_ACCURATE), AV_OK);
    oracle_sv(ref, M, n);
    double tol = 2 * FLT_EPSILON * sqrt(fro2) + fl + 8 * DBL_EPSILON * ref[0]; // M's rounding to float32
    for (int i = 0; i < n; i++) {
        ck_assert_msg(fabs(sv[i] - ref[i]) <= tol, "n=%d r=%d i=%d: %g vs %g (tol %g)", n, r, i, sv[i], ref[i], tol);
        ck_assert_msg(fabs(sv[i] - full[i]) <= tol + flf, "factor vs full n=%d i=%d", n, i);
        if (i >= r) ck_assert_double_eq(sv[i], 0.0);
        if (i) ck_assert(sv[i] <= sv[i - 1]);
    }
    ck_assert(fl < 1e-10 * sv[0]);
    free(L); free(R); free(M); free(sv); free(ref); free(full);
}

START_TEST(test_lowrank_matches) {
    check_lowrank(37, 5, 0, 1);
    check_lowrank(130, 9, 1, 2);
    check_lowrank(64, 1, 0, 3);
    check_lowrank(20, 20, 1, 4); // r = n: formed and solved by the accurate route
    check_lowrank(9, 13, 0, 5);  // r > n
}
END_TEST

/* n = 1000 without forming M: σ² of L·Rᵀ are the eigenvalues of (LᵀL)(RᵀR), so Σσ² is its trace and
 * Πσ² its determinant (3×3, exact in double for these ±1, 0, 2, 0.5 entries). */
START_TEST(test_lowrank_exact) {
    const int n = 1000, r = 3;
    float *L = calloc((size_t)n * r, sizeof(float)), *R = calloc((size_t)n * r, sizeof(float));
    double *sv = malloc(sizeof(double) * n), fl;
    for (int i = 0; i < n; i++) {
        L[i * r + 0] = 1.0f;
        L[i * r + 1] = (i % 2) ? 1.0f : -1.0f;
        L[i * r + 2] = (i < 10) ? 2.0f : 0.0f;
        R[i * r + 0] = 0.5f;
        R[i * r + 1] = (i % 4 < 2) ? 1.0f : -1.0f;
        R[i * r + 2] = (i % 4 == 3) ? 1.0f : 0.0f;
    }
    ck_assert_int_eq(run_lowrank(sv, &fl, L, R, n, r), AV_OK);
    double GL[9] = {0}, GR[9] = {0};
    for (int i = 0; i < n; i++)
        for (int a = 0; a < r; a++)
            for (int b = 0; b < r; b++) {
                GL[a * r + b] += (double)L[i * r + a] * L[i * r + b];
                GR[a * r + b] += (double)R[i * r + a] * R[i * r + b];
            }
    double P[9] = {0};
    for (int a = 0; a < r; a++)
        for (int b = 0; b < r; b++)
            for (int k = 0; k < r; k++) P[a * r + b] += GL[a * r + k] * GR[k * r + b];
    double tr = P[0] + P[4] + P[8];
    double det = P[0] * (P[4] * P[8] - P[5] * P[7]) - P[1] * (P[3] * P[8] - P[5] * P[6]) +
                 P[2] * (P[3] * P[7] - P[4] * P[6]);
    double s2 = sv[0] * sv[0] + sv[1] * sv[1] + sv[2] * sv[2], p2 = sv[0] * sv[0] * sv[1] * sv[1] * sv[2] * sv[2];
    ck_assert_double_eq_tol(s2, tr, 1e-12 * tr);
    ck_assert_double_eq_tol(p2, det, 1e-10 * det);
    for (int i = r; i < n; i++) ck_assert_double_eq(sv[i], 0.0);
    free(L); free(R); free(sv);
}
END_TEST

START_TEST(test_lowrank_status_codes) {
    float L[6] = {1, 2, 3, 4, 5, 6}, R[6] = {1, 0, 0, 1, 1, 1};
    double sv[3], fl;
    size_t b = av_lowrank_svd_work(3, 2);
    void *work = malloc(b);
    ck_assert_uint_eq(av_lowrank_svd_work(3, 0), 0);
    ck_assert_uint_eq(av_lowrank_svd_work(0, 2), 0);
    ck_assert_int_eq(av_lowrank_singular_values(NULL, &fl, L, R, 3, 2, work, b), AV_ERR_NULL);
    ck_assert_int_eq(av_lowrank_singular_values(sv, NULL, L, R, 3, 2, work, b), AV_ERR_NULL);
    ck_assert_int_eq(av_lowrank_singular_values(sv, &fl, NULL, R, 3, 2, work, b), AV_ERR_NULL);
    ck_assert_int_eq(av_lowrank_singular_values(sv, &fl, L, NULL, 3, 2, work, b), AV_ERR_NULL);
    ck_assert_int_eq(av_lowrank_singular_values(sv, &fl, L, R, 3, 2, NULL, b), AV_ERR_NULL);
    ck_assert_int_eq(av_lowrank_singular_values(sv, &fl, L, R, 3, 0, work, b), AV_ERR_SIZE);
    ck_assert_int_eq(av_lowrank_singular_values(sv, &fl, L, R, -1, 2, work, b), AV_ERR_SIZE);
    ck_assert_int_eq(av_lowrank_singular_values(sv, &fl, L, R, 3, 2, work, b - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_lowrank_singular_values(sv, &fl, L, R, 3, 2, work, b), AV_OK);
    ck_assert_double_eq(sv[2], 0.0);
    L[3] = NAN;
    ck_assert_int_eq(av_lowrank_singular_values(sv, &fl, L, R, 3, 2, work, b), AV_ERR_NONFINITE);
    L[3] = 4;
    R[5] = -INFINITY;
    ck_assert_int_eq(av_lowrank_singular_values(sv, &fl, L, R, 3, 2, work, b), AV_ERR_NONFINITE);
    free(work);
}
END_TEST

/* Through the real factors (linear.c's av_factors) of kernel and low-rank variants: the factor
 * spectrum equals the accurate full spectrum of av_matrix's M, with exact zeros past r. */
START_TEST(test_lowrank_through_av_factors) {
    const int n = 45, d = 6;
    const int variants[4][3] = {{AV_ELU, 0, 0}, {AV_PERFORMER, AV_KNOB_M, 16}, {AV_LINFORMER, AV_KNOB_S, 8},
                                {AV_NYSTROM, AV_KNOB_LANDMARKS, 9}};
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *V = malloc(sizeof(float) * n * d);
    ck_assert_int_eq(av_generate(Q, K, V, n, d, AV_GEN_GAUSSIAN, 1.0, 5), AV_OK);
    av_params prm;
    av_params_default(&prm, variants[_i][0]);
    if (variants[_i][1]) av_params_set(&prm, variants[_i][1], variants[_i][2]);
    long r = 0;
    ck_assert_int_eq(av_factor_rank(&r, &prm, n, d), AV_OK);
    ck_assert(r > 0 && r < n);
    float *L = malloc(sizeof(float) * n * r), *R = malloc(sizeof(float) * n * r), *M = malloc(sizeof(float) * n * n);
    size_t wf = av_factors_work(&prm, n, d), wm = av_matrix_work(&prm, n, d);
    void *work = malloc((wf > wm ? wf : wm) + 64);
    ck_assert_int_ge(av_factors(L, R, Q, K, n, d, &prm, work, wf), AV_OK);
    ck_assert_int_ge(av_matrix(M, Q, K, n, d, &prm, work, wm), AV_OK);
    double *sv = malloc(sizeof(double) * n), *full = malloc(sizeof(double) * n), fl, flf;
    ck_assert_int_eq(run_lowrank(sv, &fl, L, R, n, r), AV_OK);
    ck_assert_int_eq(run_route(full, &flf, M, n, AV_SVD_ACCURATE), AV_OK);
    for (int i = 0; i < n; i++)
        ck_assert_msg(fabs(sv[i] - full[i]) <= 1e-5 * full[0], "variant %d i=%d: %g vs %g", variants[_i][0], i,
                      sv[i], full[i]);
    for (int i = (int)r; i < n; i++) ck_assert_double_eq(sv[i], 0.0);
    free(L); free(R); free(M); free(work); free(sv); free(full);
    free(Q); free(K); free(V);
}
END_TEST

Suite *suite_spectrum(void) {
    Suite *s = suite_create("spectrum");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_routes_geometric, 0, 6);
    tcase_add_loop_test(tc, test_routes_cluster_and_zeros, 0, 4);
    tcase_add_test(tc, test_fast_floor_margin);
    tcase_add_test(tc, test_workspace_garbage);
    tcase_add_test(tc, test_simple_matrices);
    tcase_add_test(tc, test_simple_matrices_blocked);
    tcase_add_test(tc, test_svd_status_codes);
    tcase_add_test(tc, test_no_convergence);
    tcase_add_loop_test(tc, test_blocked_bidiag_matches_reference, 0, 16);
    tcase_add_test(tc, test_blocked_bidiag_in_factor_route);
    tcase_add_test(tc, test_bidiag_closed_forms);
    tcase_add_loop_test(tc, test_bidiag_random, 0, 6);
    tcase_add_loop_test(tc, test_bidiag_graded, 0, 4);
    tcase_add_loop_test(tc, test_bidiag_zeros, 0, 4);
    tcase_add_test(tc, test_bidiag_equal);
    tcase_add_test(tc, test_bidiag_huge_and_tiny);
    tcase_add_test(tc, test_bidiag_signs);
    tcase_add_test(tc, test_bidiag_tiny_n);
    tcase_add_test(tc, test_bidiag_budget);
    tcase_add_test(tc, test_lowrank_matches);
    tcase_add_test(tc, test_lowrank_exact);
    tcase_add_test(tc, test_lowrank_status_codes);
    tcase_add_loop_test(tc, test_lowrank_through_av_factors, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}
