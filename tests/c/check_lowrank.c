/* check_lowrank.c: lowrank.c (Linformer, Nyströmformer). References are plain float64 code written here
 * from docs/variant-formulas.md (Linformer, Nyström): softmax, segment means, the Razavi iteration, P̄F, FZB.
 * The random E, F are redrawn here from the public stream (av_rng) by the documented rule.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// helpers

static void fill_normal(float *x, size_t count, double std, uint64_t seed) {
    av_rng r;
    av_rng_seed(&r, seed);
    for (size_t i = 0; i < count; i++) x[i] = (float)(std * av_rng_normal(&r));
}

static av_params lr_params(int variant, int n, int d, int r) {
    av_params p;
    av_params_default(&p, variant);
    if (variant == AV_LINFORMER) p.s = r;
    else p.landmarks = r;
    ck_assert_int_eq(av_params_resolve(&p, &p, n, d), AV_OK);
    return p;
}

#define CANARY 256
enum { PATH_MATRIX, PATH_LINEAR, PATH_FACTORS };

/* Run one path with a workspace of exactly avi_lowrank_work bytes plus a guard that must stay intact. */
static int run(int path, float *out, float *out2, const float *Q, const float *K, const float *V, int n, int d,
               int dv, const av_params *p) {
    size_t wb = avi_lowrank_work(p, n, d, path == PATH_LINEAR ? dv : 0);
    unsigned char *w = malloc(wb + CANARY);
    ck_assert_ptr_nonnull(w);
    memset(w + wb, 0x5A, CANARY);
    int st = path == PATH_MATRIX ? avi_lowrank_matrix(out, Q, K, n, d, p, w)
           : path == PATH_LINEAR ? avi_lowrank_linear(out, Q, K, V, n, d, dv, p, w)
                                 : avi_lowrank_factors(out, out2, Q, K, n, d, p, w);
    for (size_t i = 0; i < CANARY; i++) ck_assert_uint_eq(w[wb + i], 0x5A);
    free(w);
    return st;
}

static double maxabs_d(const double *x, size_t count) {
    double m = 0;
    for (size_t i = 0; i < count; i++) m = fmax(m, fabs(x[i]));
    return m;
}

static double maxdiff_fd(const float *a, const double *b, size_t count) {
    double m = 0;
    for (size_t i = 0; i < count; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

// z ← softmax(z) in place (float64 reference)
static void ref_softmax(double *z, int len) {
    double mx = -INFINITY, s = 0;
    for (int j = 0; j < len; j++) mx = fmax(mx, z[j]);
    for (int j = 0; j < len; j++) s += (z[j] = exp(z[j] - mx));
    for (int j = 0; j < len; j++) z[j] /= s;
}

// P[a×b] = row softmax(scale·X·Yᵀ), X a×d, Y b×d (float64)
static void ref_softmax_xy(double *P, const double *X, const double *Y, int a, int b, int d, double scale) {
    for (int i = 0; i < a; i++) {
        for (int j = 0; j < b; j++) {
            double s = 0;
            for (int t = 0; t < d; t++) s += X[i * d + t] * Y[j * d + t];
            P[i * b + j] = scale * s;
        }
        ref_softmax(P + i * b, b);
    }
}

static double *to_double(const float *x, size_t count) {
    double *y = malloc(sizeof(double) * count);
    for (size_t i = 0; i < count; i++) y[i] = x[i];
    return y;
}

// C[a×c] = A[a×b]·B[b×c] (float64)
static void ref_mm(double *C, const double *A, const double *B, int a, int b, int c) {
    for (int i = 0; i < a; i++)
        for (int j = 0; j < c; j++) {
            double s = 0;
            for (int k = 0; k < b; k++) s += A[i * b + k] * B[k * c + j];
            C[i * c + j] = s;
        }
}

/* Segment sizes by the rule of docs/variant-formulas.md (Nyström), written independently of the library: sizes g for the first
 * (g+1)·m − n segments, then g+1. */
static void ref_segments(int *start, int *len, int n, int m) {
    int g = n / m, shortc = (g + 1) * m - n, pos = 0;
    for (int t = 0; t < m; t++) {
        start[t] = pos;
        len[t] = t < shortc ? g : g + 1;
        pos += len[t];
    }
    ck_assert_int_eq(pos, n);
}

// S[m×n]: row t averages segment t
static double *ref_segment_matrix(int n, int m) {
    int st[256], ln[256];
    ref_segments(st, ln, n, m);
    double *S = calloc((size_t)m * n, sizeof(double));
    for (int t = 0; t < m; t++)
        for (int j = st[t]; j < st[t] + ln[t]; j++) S[t * n + j] = 1.0 / ln[t];
    return S;
}

static double *ref_exact_softmax(const float *Q, const float *K, int n, int d, double scale) {
    double *Qd = to_double(Q, (size_t)n * d), *Kd = to_double(K, (size_t)n * d);
    double *A = malloc(sizeof(double) * n * n);
    ref_softmax_xy(A, Qd, Kd, n, n, d, scale);
    free(Qd);
    free(Kd);
    return A;
}

/* Numerical rank of X (rows×cols, float) by Gaussian elimination with complete pivoting in float64:
 * the number of pivots above tol·max|X|. */
static int ref_rank(const float *X, int rows, int cols, double tol) {
    double *A = to_double(X, (size_t)rows * cols);
    double amax = maxabs_d(A, (size_t)rows * cols);
    int rank = 0;
    for (int k = 0; k < rows && k < cols; k++) {
        int pi = k, pj = k;
        double best = 0;
        for (int i = k; i < rows; i++)
            for (int j = k; j < cols; j++)
                if (fabs(A[i * cols + j]) > best) { best = fabs(A[i * cols + j]); pi = i; pj = j; }
        if (best <= tol * amax) break;
        rank++;
        for (int j = 0; j < cols; j++) { double t = A[k * cols + j]; A[k * cols + j] = A[pi * cols + j]; A[pi * cols + j] = t; }
        for (int i = 0; i < rows; i++) { double t = A[i * cols + k]; A[i * cols + k] = A[i * cols + pj]; A[i * cols + pj] = t; }
        for (int i = k + 1; i < rows; i++) {
            double f = A[i * cols + k] / A[k * cols + k];
            for (int j = k; j < cols; j++) A[i * cols + j] -= f * A[k * cols + j];
        }
    }
    free(A);
    return rank;
}

/* Check the linear path against M·V and the factors against M, for the M the matrix path gives. */
static void check_paths_agree(const float *M, const float *Q, const float *K, int n, int d, const av_params *p) {
    const int dv = 5;
    long r = p->variant == AV_LINFORMER ? p->s : p->landmarks;
    float *V = malloc(sizeof(float) * n * dv), *O = malloc(sizeof(float) * n * dv);
    float *L = malloc(sizeof(float) * n * r), *R = malloc(sizeof(float) * n * r);
    fill_normal(V, (size_t)n * dv, 1.0, 99);
    ck_assert_int_eq(run(PATH_LINEAR, O, NULL, Q, K, V, n, d, dv, p), AV_OK);
    double *Md = to_double(M, (size_t)n * n), *Vd = to_double(V, (size_t)n * dv), *MV = malloc(sizeof(double) * n * dv);
    ref_mm(MV, Md, Vd, n, n, dv);
    double scale = maxabs_d(MV, (size_t)n * dv);
    ck_assert_double_lt(maxdiff_fd(O, MV, (size_t)n * dv), 2e-5 * scale);
    ck_assert_int_eq(run(PATH_FACTORS, L, R, Q, K, NULL, n, d, 0, p), AV_OK);
    double worst = 0, mmax = maxabs_d(Md, (size_t)n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (long t = 0; t < r; t++) s += (double)L[i * r + t] * R[j * r + t];
            worst = fmax(worst, fabs(s - Md[i * n + j]));
        }
    ck_assert_double_lt(worst, 2e-5 * mmax);
    free(V); free(O); free(L); free(R); free(Md); free(Vd); free(MV);
}

// ----------------------------------------------------------------------------------------------------
// Linformer

/* M_ref = softmax(scale·Q(EK)ᵀ)·F in float64, E and F given as s×n. */
static double *ref_linformer(const float *Q, const float *K, const double *E, const double *F, int n, int d, int s,
                             double scale) {
    double *Kd = to_double(K, (size_t)n * d), *Qd = to_double(Q, (size_t)n * d);
    double *EK = malloc(sizeof(double) * s * d), *P = malloc(sizeof(double) * n * s);
    double *M = malloc(sizeof(double) * n * n);
    ref_mm(EK, E, Kd, s, n, d);
    ref_softmax_xy(P, Qd, EK, n, s, d, scale);
    ref_mm(M, P, F, n, s, n);
    free(Kd); free(Qd); free(EK); free(P);
    return M;
}

// E (or F) redrawn here: entries (float)(σ·N(0,1)) of one av_rng stream, row by row, σ = 1/√s.
static double *ref_gaussian(int s, int n, uint64_t seed) {
    av_rng r;
    av_rng_seed(&r, seed);
    double *G = malloc(sizeof(double) * s * n), sigma = 1 / sqrt((double)s);
    for (int i = 0; i < s * n; i++) G[i] = (float)(sigma * av_rng_normal(&r));
    return G;
}

/* The variant `p` on Gaussian Q, K (seeds sq, sk) equals the exact softmax to 1e-6, and its paths agree. */
static void check_equals_softmax(const av_params *p, int n, int d, uint64_t sq, uint64_t sk) {
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *M = malloc(sizeof(float) * n * n);
    fill_normal(Q, (size_t)n * d, 1.0, sq);
    fill_normal(K, (size_t)n * d, 1.0, sk);
    ck_assert_int_eq(run(PATH_MATRIX, M, NULL, Q, K, NULL, n, d, 0, p), AV_OK);
    double *A = ref_exact_softmax(Q, K, n, d, p->scale);
    ck_assert_double_lt(maxdiff_fd(M, A, (size_t)n * n), 1e-6);
    check_paths_agree(M, Q, K, n, d, p);
    free(Q); free(K); free(M); free(A);
}

START_TEST(test_linformer_mean_full_is_softmax) {
    /* s = n with the mean kind: one token per segment, E = F = I, so M = softmax(scale·QKᵀ) */
    const int ns[] = {13, 37, 100}, ds[] = {3, 7, 16};
    for (int a = 0; a < 3; a++) {
        int n = ns[a], d = ds[a];
        av_params p = lr_params(AV_LINFORMER, n, d, n);
        p.ef_kind = AV_EF_MEAN;
        check_equals_softmax(&p, n, d, 1 + a, 11 + a);
    }
}
END_TEST

START_TEST(test_linformer_gaussian_reference) {
    const int n = 37, d = 7, s = 5;
    float Q[37 * 7], K[37 * 7], M[37 * 37];
    fill_normal(Q, sizeof Q / 4, 1.0, 3);
    fill_normal(K, sizeof K / 4, 1.0, 4);
    for (int shared = 0; shared <= 1; shared++) {
        av_params p = lr_params(AV_LINFORMER, n, d, s);
        p.ef_shared = shared;
        p.seed = 1234;
        ck_assert_int_eq(run(PATH_MATRIX, M, NULL, Q, K, NULL, n, d, 0, &p), AV_OK);
        /* E from the stream 2·2³² + seed, F from 2³² + seed, or F = E when shared (docs/conventions.md) */
        double *E = ref_gaussian(s, n, (2ull << 32) + p.seed), *F = shared ? E : ref_gaussian(s, n, (1ull << 32) + p.seed);
        double *Mr = ref_linformer(Q, K, E, F, n, d, s, p.scale);
        ck_assert_double_lt(maxdiff_fd(M, Mr, (size_t)n * n), 1e-5 * maxabs_d(Mr, (size_t)n * n));
        check_paths_agree(M, Q, K, n, d, &p);
        ck_assert_int_eq(ref_rank(M, n, n, 1e-4), s);                  /* rank(P̄F) ≤ s, and = s here */
        if (!shared) free(F);
        free(E);
        free(Mr);
    }
}
END_TEST

START_TEST(test_linformer_rank_bound) {
    const int n = 100, d = 16;
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *M = malloc(sizeof(float) * n * n);
    fill_normal(Q, (size_t)n * d, 1.0, 5);
    fill_normal(K, (size_t)n * d, 1.0, 6);
    const int ss[] = {1, 3, 8, 13};
    for (int kind = 0; kind <= 1; kind++)
        for (int a = 0; a < 4; a++) {
            av_params p = lr_params(AV_LINFORMER, n, d, ss[a]);
            p.ef_kind = kind;
            ck_assert_int_eq(run(PATH_MATRIX, M, NULL, Q, K, NULL, n, d, 0, &p), AV_OK);
            ck_assert_int_eq(ref_rank(M, n, n, 1e-4), ss[a]);
        }
    free(Q); free(K); free(M);
}
END_TEST

START_TEST(test_linformer_mean_uneven_segments) {
    /* n = 37, s = 5: g = 7, the first 8·5 − 37 = 3 segments hold 7 tokens, the last two 8. R = Fᵀ shows it. */
    const int n = 37, d = 3, s = 5;
    float Q[37 * 3], K[37 * 3], M[37 * 37], L[37 * 5], R[37 * 5];
    fill_normal(Q, sizeof Q / 4, 1.0, 7);
    fill_normal(K, sizeof K / 4, 1.0, 8);
    av_params p = lr_params(AV_LINFORMER, n, d, s);
    p.ef_kind = AV_EF_MEAN;
    ck_assert_int_eq(run(PATH_FACTORS, L, R, Q, K, NULL, n, d, 0, &p), AV_OK);
    const int want_len[5] = {7, 7, 7, 8, 8};
    int pos = 0;
    for (int t = 0; t < s; t++) {
        for (int j = 0; j < n; j++) {
            int in = j >= pos && j < pos + want_len[t];
            ck_assert_float_eq_tol(R[j * s + t], in ? 1.0f / want_len[t] : 0.0f, 1e-7);
        }
        pos += want_len[t];
    }
    ck_assert_int_eq(run(PATH_MATRIX, M, NULL, Q, K, NULL, n, d, 0, &p), AV_OK);
    double *S = ref_segment_matrix(n, s), *Mr = ref_linformer(Q, K, S, S, n, d, s, p.scale);
    ck_assert_double_lt(maxdiff_fd(M, Mr, (size_t)n * n), 1e-6);
    check_paths_agree(M, Q, K, n, d, &p);
    free(S); free(Mr);
}
END_TEST

START_TEST(test_linformer_seed) {
    const int n = 13, d = 7;
    float Q[13 * 7], K[13 * 7], M1[13 * 13], M2[13 * 13];
    fill_normal(Q, sizeof Q / 4, 1.0, 9);
    fill_normal(K, sizeof K / 4, 1.0, 10);
    av_params p = lr_params(AV_LINFORMER, n, d, 4);
    run(PATH_MATRIX, M1, NULL, Q, K, NULL, n, d, 0, &p);
    run(PATH_MATRIX, M2, NULL, Q, K, NULL, n, d, 0, &p);
    ck_assert_int_eq(memcmp(M1, M2, sizeof M1), 0);
    p.seed += 1;
    run(PATH_MATRIX, M2, NULL, Q, K, NULL, n, d, 0, &p);
    ck_assert_int_ne(memcmp(M1, M2, sizeof M1), 0);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// Nyström

/* Z after `iters` steps of Z ← ¼Z(13I − AZ(15I − AZ(7I − AZ))) from Z₀ = Aᵀ/max column sum (float64). */
static double *ref_pinv(const double *A, int m, int iters) {
    size_t mm = (size_t)m * m;
    double *Z = malloc(sizeof(double) * mm), *AZ = malloc(sizeof(double) * mm), *T = malloc(sizeof(double) * mm);
    double *U = malloc(sizeof(double) * mm), cmax = 0;
    for (int j = 0; j < m; j++) {
        double c = 0;
        for (int i = 0; i < m; i++) c += A[i * m + j];
        cmax = fmax(cmax, c);
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) Z[i * m + j] = A[j * m + i] / cmax;
    for (int it = 0; it < iters; it++) {
        ref_mm(AZ, A, Z, m, m, m);
        const double coef[3] = {7, 15, 13};
        for (size_t k = 0; k < mm; k++) T[k] = -AZ[k];            /* T = 7I − AZ */
        for (int i = 0; i < m; i++) T[i * m + i] += coef[0];
        for (int c = 1; c < 3; c++) {                             /* T = cI − AZ·T */
            ref_mm(U, AZ, T, m, m, m);
            for (size_t k = 0; k < mm; k++) T[k] = -U[k];
            for (int i = 0; i < m; i++) T[i * m + i] += coef[c];
        }
        ref_mm(U, Z, T, m, m, m);
        for (size_t k = 0; k < mm; k++) Z[k] = 0.25 * U[k];
    }
    free(AZ); free(T); free(U);
    return Z;
}

/* M_ref = F·Z·B of Nyströmformer with segment-mean landmarks (float64). */
static double *ref_nystrom(const float *Q, const float *K, int n, int d, int m, int iters, double scale) {
    double *Qd = to_double(Q, (size_t)n * d), *Kd = to_double(K, (size_t)n * d), *S = ref_segment_matrix(n, m);
    double *Qt = malloc(sizeof(double) * m * d), *Kt = malloc(sizeof(double) * m * d);
    ref_mm(Qt, S, Qd, m, n, d);
    ref_mm(Kt, S, Kd, m, n, d);
    double *F = malloc(sizeof(double) * n * m), *A = malloc(sizeof(double) * m * m), *B = malloc(sizeof(double) * m * n);
    ref_softmax_xy(F, Qd, Kt, n, m, d, scale);
    ref_softmax_xy(A, Qt, Kt, m, m, d, scale);
    ref_softmax_xy(B, Qt, Kd, m, n, d, scale);
    double *Z = ref_pinv(A, m, iters), *FZ = malloc(sizeof(double) * n * m), *M = malloc(sizeof(double) * n * n);
    ref_mm(FZ, F, Z, n, m, m);
    ref_mm(M, FZ, B, n, m, n);
    free(Qd); free(Kd); free(S); free(Qt); free(Kt); free(F); free(A); free(B); free(Z); free(FZ);
    return M;
}

START_TEST(test_nystrom_full_is_softmax) {
    const int ns[] = {13, 37, 100}, ds[] = {3, 7, 16};
    for (int a = 0; a < 3; a++) {
        int n = ns[a], d = ds[a];
        av_params p = lr_params(AV_NYSTROM, n, d, n);
        check_equals_softmax(&p, n, d, 21 + a, 31 + a);
    }
}
END_TEST

START_TEST(test_nystrom_reference) {
    /* m ∤ n (37/5, 100/7, 13/4) and m | n (100/10), zero, one and six iterations */
    const int ns[] = {37, 100, 13, 100}, ds[] = {7, 16, 3, 16}, ms[] = {5, 7, 4, 10}, its[] = {0, 1, 6};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++) {
            int n = ns[a], d = ds[a], m = ms[a];
            av_params p = lr_params(AV_NYSTROM, n, d, m);
            p.iters = its[b];
            float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *M = malloc(sizeof(float) * n * n);
            fill_normal(Q, (size_t)n * d, 1.0, 41 + a);
            fill_normal(K, (size_t)n * d, 1.0, 51 + a);
            ck_assert_int_eq(run(PATH_MATRIX, M, NULL, Q, K, NULL, n, d, 0, &p), AV_OK);
            double *Mr = ref_nystrom(Q, K, n, d, m, p.iters, p.scale);
            double err = maxdiff_fd(M, Mr, (size_t)n * n), mx = maxabs_d(Mr, (size_t)n * n);
            ck_assert_msg(err < 1e-5 * mx, "n=%d m=%d iters=%d: %g of %g", n, m, p.iters, err, mx);
            check_paths_agree(M, Q, K, n, d, &p);
            ck_assert_int_le(ref_rank(M, n, n, 1e-4), m);
            free(Q); free(K); free(M); free(Mr);
        }
}
END_TEST

/* The matrix paths' tiled logits, softmaxes and F·Z (prod_f64 over simd.h's 2×8 float64 kernels) give the bits of
 * the factor paths' row-by-row reference (nys_b_row, nys_l_row, lin_pbar_row: one dot product per entry): M_ij is
 * the float sum, in order of t, of L_it·R_jt, the float gemm's own sum. Nyström, and Linformer with its Gaussian E,
 * F (shared or not). Edge tiles: m not a multiple of 8, n odd, d odd. */
START_TEST(test_lowrank_matrix_bits) {
    static const int SIZES[][3] = {{37, 13, 5}, {64, 16, 8}, {130, 64, 64}, {41, 7, 40}, {9, 3, 1}};
    for (int c = 0; c < 5; c++) {
        int n = SIZES[c][0], d = SIZES[c][1], m = SIZES[c][2];
        float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d);
        float *M = malloc(sizeof(float) * n * n), *L = malloc(sizeof(float) * n * m), *R = malloc(sizeof(float) * n * m);
        fill_normal(Q, (size_t)n * d, 1.0, 5u + c);
        fill_normal(K, (size_t)n * d, 1.0, 50u + c);
        for (int k = 0; k < 3; k++) {
            av_params p = lr_params(k == 0 ? AV_NYSTROM : AV_LINFORMER, n, d, m);
            p.ef_shared = k == 2;
            ck_assert_int_eq(run(PATH_MATRIX, M, NULL, Q, K, NULL, n, d, 0, &p), AV_OK);
            ck_assert_int_eq(run(PATH_FACTORS, L, R, Q, K, NULL, n, d, 0, &p), AV_OK);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    float s = 0.0f;
                    for (int t = 0; t < m; t++) s += L[(size_t)i * m + t] * R[(size_t)j * m + t];
                    ck_assert_msg(memcmp(&s, &M[(size_t)i * n + j], 4) == 0, "%s n=%d d=%d r=%d: M[%d][%d] %a, L·Rᵀ %a",
                                  av_variant_name(p.variant), n, d, m, i, j, M[(size_t)i * n + j], s);
                }
        }
        free(Q); free(K); free(M); free(L); free(R);
    }
}
END_TEST

/* The linear paths' tiled forms give the bits of their row-by-row reference (avi_lowrank_linear_rows): Nyström, and
 * Linformer of both kinds (shared E = F or not). */
START_TEST(test_lowrank_linear_bits) {
    static const int SIZES[][4] = {{37, 13, 5, 7}, {64, 16, 8, 16}, {130, 64, 64, 64}, {41, 7, 40, 3}, {9, 3, 1, 9}};
    for (int c = 0; c < 5; c++) {
        int n = SIZES[c][0], d = SIZES[c][1], m = SIZES[c][2], dv = SIZES[c][3];
        float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *V = malloc(sizeof(float) * n * dv);
        float *O = malloc(sizeof(float) * n * dv), *O2 = malloc(sizeof(float) * n * dv);
        fill_normal(Q, (size_t)n * d, 1.0, 7u + c);
        fill_normal(K, (size_t)n * d, 1.0, 70u + c);
        fill_normal(V, (size_t)n * dv, 1.0, 700u + c);
        for (int k = 0; k < 4; k++) {
            av_params p = lr_params(k == 0 ? AV_NYSTROM : AV_LINFORMER, n, d, m);
            p.ef_kind = k == 3 ? AV_EF_MEAN : AV_EF_GAUSSIAN;
            p.ef_shared = k == 2;
            ck_assert_int_eq(run(PATH_LINEAR, O, NULL, Q, K, V, n, d, dv, &p), AV_OK);
            void *w = malloc(avi_lowrank_work(&p, n, d, dv));
            ck_assert_int_eq(avi_lowrank_linear_rows(O2, Q, K, V, n, d, dv, &p, w), AV_OK);
            ck_assert_msg(memcmp(O, O2, sizeof(float) * n * dv) == 0, "%s kind %d n=%d d=%d r=%d dv=%d",
                          av_variant_name(p.variant), k, n, d, m, dv);
            free(w);
        }
        free(Q); free(K); free(V); free(O); free(O2);
    }
}
END_TEST

START_TEST(test_nystrom_segment_rule) {
    /* d = 1, q_j = j, one key at 1 and the rest at 0: B_t0 = e^{σq̃_t}/(e^{σq̃_t} + n − 1) reveals each
     * landmark q̃_t = the mean position of segment t. n = 37, m = 5: segments [0,7) [7,14) [14,21) [21,29)
     * [29,37), means 3, 10, 17, 24.5, 32.5. */
    const int n = 37, d = 1, m = 5;
    float Q[37], K[37], L[37 * 5], R[37 * 5];
    for (int j = 0; j < n; j++) {
        Q[j] = (float)j;
        K[j] = j == 0 ? 1.0f : 0.0f;
    }
    av_params p = lr_params(AV_NYSTROM, n, d, m);
    p.scale = 0.01;
    ck_assert_int_eq(run(PATH_FACTORS, L, R, Q, K, NULL, n, d, 0, &p), AV_OK);
    const double want[5] = {3, 10, 17, 24.5, 32.5};
    for (int t = 0; t < m; t++) {
        double b = R[0 * m + t], qt = log(b * (n - 1) / (1 - b)) / p.scale;
        ck_assert_double_eq_tol(qt, want[t], 0.02);
    }
}
END_TEST

/* ‖AZA − A‖_F/‖A‖_F of the library's Z: with Q and K constant on each of m segments of g tokens, every row
 * of F is a row of A (F_i = A_t for i in segment t), so the rows of L = F·Z are the rows of AZ. */
static void nystrom_residuals(double *res, const int *iters, int count, double scale) {
    const int m = 64, g = 2, n = m * g, d = 64;
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d);
    float *L = malloc(sizeof(float) * n * m), *R = malloc(sizeof(float) * n * m);
    float qt[64 * 64], kt[64 * 64];
    fill_normal(qt, sizeof qt / 4, 1.0, 61);
    fill_normal(kt, sizeof kt / 4, 1.0, 62);
    for (int i = 0; i < n; i++) {
        memcpy(Q + i * d, qt + (i / g) * d, sizeof(float) * d);
        memcpy(K + i * d, kt + (i / g) * d, sizeof(float) * d);
    }
    double *Qd = to_double(qt, (size_t)m * d), *Kd = to_double(kt, (size_t)m * d), *A = malloc(sizeof(double) * m * m);
    double *AZ = malloc(sizeof(double) * m * m), *AZA = malloc(sizeof(double) * m * m);
    ref_softmax_xy(A, Qd, Kd, m, m, d, scale);
    for (int c = 0; c < count; c++) {
        av_params p = lr_params(AV_NYSTROM, n, d, m);
        p.scale = scale;
        p.iters = iters[c];
        ck_assert_int_eq(run(PATH_FACTORS, L, R, Q, K, NULL, n, d, 0, &p), AV_OK);
        for (int t = 0; t < m; t++)
            for (int u = 0; u < m; u++) AZ[t * m + u] = L[(t * g) * m + u];
        ref_mm(AZA, AZ, A, m, m, m);
        double num = 0, den = 0;
        for (int k = 0; k < m * m; k++) {
            num += (AZA[k] - A[k]) * (AZA[k] - A[k]);
            den += A[k] * A[k];
        }
        res[c] = sqrt(num / den);
    }
    free(Q); free(K); free(L); free(R); free(Qd); free(Kd); free(A); free(AZ); free(AZA);
}

START_TEST(test_nystrom_pinv_converges) {
    const int iters[] = {0, 1, 2, 3, 4, 6, 8, 12, 20};
    const double scales[] = {0.5 / 8, 1.0 / 8};                   /* 0.5/√d and 1/√d at d = 64 */
    for (int a = 0; a < 2; a++) {
        double res[9];
        nystrom_residuals(res, iters, 9, scales[a]);
        printf("nystrom ||AZA-A||/||A||, 64 landmarks, scale %.4f:", scales[a]);
        for (int c = 0; c < 9; c++) printf(" [%d] %.2g", iters[c], res[c]);
        printf("\n");
        for (int c = 1; c < 9; c++) ck_assert_double_le(res[c], res[c - 1] * 1.001 + 1e-6);
        ck_assert_double_gt(res[0], 0.05);
        ck_assert_double_lt(res[8], 1e-4);
    }
}
END_TEST

START_TEST(test_nystrom_rows_sum_to_one_when_converged) {
    /* with Z = A⁻¹ (A1 = 1 ⇒ A⁻¹1 = 1), the rows of F·Z·B sum to 1 (docs/variant-formulas.md, Nyström) */
    const int n = 100, d = 16, m = 10;
    float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *M = malloc(sizeof(float) * n * n);
    fill_normal(Q, (size_t)n * d, 1.0, 71);
    fill_normal(K, (size_t)n * d, 1.0, 72);
    av_params p = lr_params(AV_NYSTROM, n, d, m);
    p.iters = 40;
    ck_assert_int_eq(run(PATH_MATRIX, M, NULL, Q, K, NULL, n, d, 0, &p), AV_OK);
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++) s += M[i * n + j];
        ck_assert_double_eq_tol(s, 1.0, 1e-4);
    }
    free(Q); free(K); free(M);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// status codes

START_TEST(test_lowrank_status) {
    const int n = 13, d = 3, dv = 2;
    float Q[13 * 3], K[13 * 3], V[13 * 2], M[13 * 13], O[13 * 2], L[13 * 13], R[13 * 13];
    fill_normal(Q, sizeof Q / 4, 1.0, 81);
    fill_normal(K, sizeof K / 4, 1.0, 82);
    fill_normal(V, sizeof V / 4, 1.0, 83);
    const int variants[2] = {AV_LINFORMER, AV_NYSTROM};
    for (int a = 0; a < 2; a++) {
        av_params p = lr_params(variants[a], n, d, 4);
        /* resolve rejects causal; the kernels refuse it too */
        p.causal = 1;
        ck_assert_int_eq(avi_lowrank_matrix(M, Q, K, n, d, &p, NULL), AV_ERR_NO_CAUSAL);
        ck_assert_int_eq(avi_lowrank_linear(O, Q, K, V, n, d, dv, &p, NULL), AV_ERR_NO_CAUSAL);
        ck_assert_int_eq(avi_lowrank_factors(L, R, Q, K, n, d, &p, NULL), AV_ERR_NO_CAUSAL);
        p.causal = 0;
        /* a logit beyond float64 range: softmax rows become NaN, reported as a product overflow */
        float Qb[13 * 3], Kb[13 * 3];
        for (int i = 0; i < n * d; i++) Qb[i] = Kb[i] = 1e5f;
        p.scale = 1e300;
        ck_assert_int_eq(run(PATH_MATRIX, M, NULL, Qb, Kb, NULL, n, d, 0, &p), AV_WARN_PRODUCT_OVERFLOW);
        ck_assert_int_eq(run(PATH_LINEAR, O, NULL, Qb, Kb, V, n, d, dv, &p), AV_WARN_PRODUCT_OVERFLOW);
        ck_assert_int_eq(run(PATH_FACTORS, L, R, Qb, Kb, NULL, n, d, 0, &p), AV_WARN_PRODUCT_OVERFLOW);
    }
    av_params s = lr_params(AV_SOFTMAX, n, d, 4);
    ck_assert_int_eq(avi_lowrank_matrix(M, Q, K, n, d, &s, NULL), AV_ERR_VARIANT);
    ck_assert_int_eq(avi_lowrank_linear(O, Q, K, V, n, d, dv, &s, NULL), AV_ERR_VARIANT);
    ck_assert_int_eq(avi_lowrank_factors(L, R, Q, K, n, d, &s, NULL), AV_ERR_VARIANT);
    ck_assert_uint_eq(avi_lowrank_work(&s, n, d, dv), 0);
    /* the largest knobs: five 16383² float64 matrices; the size saturates rather than wraps (wasm32) */
    av_params big = lr_params(AV_NYSTROM, AV_MAX_N, 64, AV_MAX_N - 1);
    size_t wb = avi_lowrank_work(&big, AV_MAX_N, 64, 64);
    ck_assert(wb == SIZE_MAX || (unsigned long long)wb >= 5ull * (AV_MAX_N - 1) * (AV_MAX_N - 1) * 8);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// through the public API (attention.c and linear.c dispatch here)

START_TEST(test_api_lowrank) {
    const int ns[] = {13, 37, 100}, ds[] = {3, 7, 16}, rs[] = {4, 5, 13}, dv = 5;
    for (int a = 0; a < 3; a++)
        for (int variant = 0; variant < 2; variant++) {
            int n = ns[a], d = ds[a];
            av_params p;
            av_params_default(&p, variant ? AV_NYSTROM : AV_LINFORMER);
            if (variant) p.landmarks = rs[a];
            else p.s = rs[a], p.ef_kind = a % 2, p.ef_shared = a == 2;
            float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d), *V = malloc(sizeof(float) * n * dv);
            float *M = malloc(sizeof(float) * n * n), *M2 = malloc(sizeof(float) * n * n), *O = malloc(sizeof(float) * n * dv);
            float *L = malloc(sizeof(float) * n * rs[a]), *R = malloc(sizeof(float) * n * rs[a]);
            fill_normal(Q, (size_t)n * d, 1.0, 91 + a);
            fill_normal(K, (size_t)n * d, 1.0, 92 + a);
            fill_normal(V, (size_t)n * dv, 1.0, 93 + a);
            size_t wb = av_matrix_work(&p, n, d);
            void *w = malloc(wb);
            ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, w, wb), AV_OK);
            free(w);
            av_params r;
            ck_assert_int_eq(av_params_resolve(&r, &p, n, d), AV_OK);
            ck_assert_int_eq(run(PATH_MATRIX, M2, NULL, Q, K, NULL, n, d, 0, &r), AV_OK);
            ck_assert_int_eq(memcmp(M, M2, sizeof(float) * n * n), 0);     /* the API is a thin dispatch */
            wb = av_linear_work(&p, n, d, dv);
            w = malloc(wb);
            ck_assert_int_eq(av_linear(O, Q, K, V, n, d, dv, &p, w, wb), AV_OK);
            free(w);
            long rank;
            ck_assert_int_eq(av_factor_rank(&rank, &p, n, d), AV_OK);
            ck_assert_int_eq(rank, rs[a]);
            wb = av_factors_work(&p, n, d);
            w = malloc(wb);
            ck_assert_int_eq(av_factors(L, R, Q, K, n, d, &p, w, wb), AV_OK);
            free(w);
            double *Md = to_double(M, (size_t)n * n), *Vd = to_double(V, (size_t)n * dv), *MV = malloc(sizeof(double) * n * dv);
            ref_mm(MV, Md, Vd, n, n, dv);
            ck_assert_double_lt(maxdiff_fd(O, MV, (size_t)n * dv), 2e-5 * maxabs_d(MV, (size_t)n * dv));
            double worst = 0;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int t = 0; t < rs[a]; t++) s += (double)L[i * rs[a] + t] * R[j * rs[a] + t];
                    worst = fmax(worst, fabs(s - Md[i * n + j]));
                }
            ck_assert_double_lt(worst, 2e-5 * maxabs_d(Md, (size_t)n * n));
            p.causal = 1;                                                  /* no causal form */
            ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, NULL, 0), AV_ERR_NO_CAUSAL);
            free(Q); free(K); free(V); free(M); free(M2); free(O); free(L); free(R); free(Md); free(Vd); free(MV);
        }
}
END_TEST

Suite *suite_lowrank(void) {
    Suite *s = suite_create("lowrank");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_linformer_mean_full_is_softmax);
    tcase_add_test(tc, test_linformer_gaussian_reference);
    tcase_add_test(tc, test_linformer_rank_bound);
    tcase_add_test(tc, test_linformer_mean_uneven_segments);
    tcase_add_test(tc, test_linformer_seed);
    tcase_add_test(tc, test_nystrom_full_is_softmax);
    tcase_add_test(tc, test_nystrom_reference);
    tcase_add_test(tc, test_lowrank_matrix_bits);
    tcase_add_test(tc, test_lowrank_linear_bits);
    tcase_add_test(tc, test_nystrom_segment_rule);
    tcase_add_test(tc, test_nystrom_pinv_converges);
    tcase_add_test(tc, test_nystrom_rows_sum_to_one_when_converged);
    tcase_add_test(tc, test_lowrank_status);
    tcase_add_test(tc, test_api_lowrank);
    suite_add_tcase(s, tc);
    return s;
}
