/* simd.h: the library's private SIMD kernels (the file that includes wasm_simd128.h; attention.c, which
 * includes this header through engine.h, also has a few intrinsics of its own, under __wasm_simd128__).
 *
 * Every kernel has two bodies selected at compile time: f32x4 intrinsics under __wasm_simd128__, and a
 * plain-C twin written so that gcc -O3 (-march=native) vectorises it (fixed-width lane arrays, no
 * reassociation needed, selects instead of branches). Both bodies perform the same float operations in
 * the same order, so they give the same bits; the tests compare them with double-precision references.
 *
 *   avs_expf          e^x for one float (the scalar twin of the vector exp)
 *   avs_exp_sub_sum   x[i] ← e^(x[i] − c) over a row, returns Σ (8 lane partial sums)
 *   avs_max           max over a row (8 lanes)
 *   avs_elu1          elu(x) + 1 elementwise
 *   avs_col_softmax   softmax of each column over the rows (Efficient Attention's keys)
 *   avs_sum_f64       Σ x[i] in float64 (8 lane partial sums)
 *   avs_all_finite    1 if no entry is Inf or NaN
 *   avs_scale         x[i] ← a·x[i]
 *   avs_pack_bt / avs_pack_b / avs_gemm_strip
 *                     C = α·A·B with B packed into panels of 8 columns (4×8 register blocking)
 *   avs_kernel_f64_dtb / avs_kernel_f64_ab / avs_kernel_f64_ff / avs_kernel_f64_dd / avs_kernel_f64_dtd_acc
 *                     a 2×8 tile of Aᵀ·B or A·B summed in float64 (the linear path's state and readout on
 *                     float64 copies, the low-rank products)
 *   avs_scan_block8 / avs_scan_block8_dense
 *                     one token of the causal (decayed) linear scan on 8 columns of the float64 state, fused
 *   avs_log / avs_log2x   ln x of a positive normal double, scalar and in two lanes (the readouts)
 *   avs_logf_split4   ln x of four floats as k·ln 2 + logc + log1p(r), the parts apart, by a table and
 *                     no division (the readouts' entropy and KL)
 *   avs_dot_f64 / avs_axpy_neg_f64
 *                     float64 dot product and y −= αx on the generic vector type avs_vd (the spectrum)
 * The last two groups use the compiler's generic vector extension, which is f64x2 under -msimd128 and
 * needs no intrinsics; their scalar tails are part of the same function.
 */
#ifndef ATTNVIZ_SIMD_H
#define ATTNVIZ_SIMD_H

#include <stdint.h>
#include <string.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#define AVS_PANEL 8 /* columns per packed panel */

// ----------------------------------------------------------------------------------------------------
// exp: Cody–Waite reduction x = n·ln2 + r, |r| ≤ ln2/2, and the Cephes expf minimax polynomial
// (S. L. Moshier, Cephes Math Library, expf.c); 2^n is applied as two exact power-of-two factors
// 2^(n>>1)·2^(n−(n>>1)), so results in the subnormal range are rounded once and x near the overflow
// threshold does not overflow early. Inputs are clamped to [−104, 89]: below, e^x rounds to 0; above,
// the result is +Inf. NaN propagates. Accuracy (tests): ≤ 2 ulp where e^x is a normal float.

#define AVS_EXP_LO (-104.0f)
#define AVS_EXP_HI 89.0f
#define AVS_LOG2E 1.44269504088896341f
#define AVS_LN2_HI 0.693359375f
#define AVS_LN2_LO (-2.12194440e-4f)
#define AVS_ROUND_MAGIC 12582912.0f /* 1.5·2^23: adding it rounds to an integer (ties to even) */
#define AVS_P0 1.9875691500e-4f
#define AVS_P1 1.3981999507e-3f
#define AVS_P2 8.3334519073e-3f
#define AVS_P3 4.1665795894e-2f
#define AVS_P4 1.6666665459e-1f
#define AVS_P5 5.0000001201e-1f

static inline uint32_t avs_f2u(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline float avs_u2f(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

static inline float avs_expf(float x) {
    x = x < AVS_EXP_LO ? AVS_EXP_LO : x;
    x = x > AVS_EXP_HI ? AVS_EXP_HI : x;
    float t = x * AVS_LOG2E + AVS_ROUND_MAGIC;
    uint32_t n = avs_f2u(t) - avs_f2u(AVS_ROUND_MAGIC); /* the integer n, two's complement */
    float nf = t - AVS_ROUND_MAGIC;
    float r = x - nf * AVS_LN2_HI;
    r = r - nf * AVS_LN2_LO;
    float p = AVS_P0 * r + AVS_P1;
    p = p * r + AVS_P2;
    p = p * r + AVS_P3;
    p = p * r + AVS_P4;
    p = p * r + AVS_P5;
    float y = p * (r * r) + r + 1.0f;
    uint32_t h = (uint32_t)((int32_t)n >> 1);               /* n>>1 (arithmetic) */
    float s1 = avs_u2f((h + 127u) << 23);
    float s2 = avs_u2f((n - h + 127u) << 23);
    return (y * s1) * s2;
}

#ifdef __wasm_simd128__
/* The constants of avs_exp4, read through a volatile table once per call site: LLVM would otherwise
 * rematerialise each v128.const inside the loop, which V8 builds from immediates (several instructions
 * each), costing more than the exp itself. */
static volatile float avs_exp_k[15] __attribute__((unused)) = {
    AVS_EXP_LO, AVS_EXP_HI, AVS_LOG2E, AVS_ROUND_MAGIC, AVS_LN2_HI, AVS_LN2_LO,
    AVS_P0, AVS_P1, AVS_P2, AVS_P3, AVS_P4, AVS_P5, 1.0f, 0.0f, 0.0f};
typedef struct { v128_t lo, hi, log2e, magic, ln2hi, ln2lo, p0, p1, p2, p3, p4, p5, one, bias; } avs_expk;

static inline avs_expk avs_expk_load(void) {
    avs_expk k;
    k.lo = wasm_f32x4_splat(avs_exp_k[0]);
    k.hi = wasm_f32x4_splat(avs_exp_k[1]);
    k.log2e = wasm_f32x4_splat(avs_exp_k[2]);
    k.magic = wasm_f32x4_splat(avs_exp_k[3]);
    k.ln2hi = wasm_f32x4_splat(avs_exp_k[4]);
    k.ln2lo = wasm_f32x4_splat(avs_exp_k[5]);
    k.p0 = wasm_f32x4_splat(avs_exp_k[6]);
    k.p1 = wasm_f32x4_splat(avs_exp_k[7]);
    k.p2 = wasm_f32x4_splat(avs_exp_k[8]);
    k.p3 = wasm_f32x4_splat(avs_exp_k[9]);
    k.p4 = wasm_f32x4_splat(avs_exp_k[10]);
    k.p5 = wasm_f32x4_splat(avs_exp_k[11]);
    k.one = wasm_f32x4_splat(avs_exp_k[12]);
    k.bias = wasm_i32x4_splat(127 + (int)avs_exp_k[13]);
    return k;
}

/* The f32x4 twin of avs_expf (same operations, same order). The clamps are pmax/pmin, whose definitions
 * (x < lo ? lo : x, hi < x ? hi : x) are the scalar selects, NaN included; they compile to one maxps/minps
 * each, where f32x4.max/min take eight instructions in V8. */
static inline v128_t avs_exp4(v128_t x, const avs_expk *k) {
    x = wasm_f32x4_pmax(x, k->lo);
    x = wasm_f32x4_pmin(x, k->hi);
    v128_t t = wasm_f32x4_add(wasm_f32x4_mul(x, k->log2e), k->magic);
    v128_t n = wasm_i32x4_sub(t, k->magic);
    v128_t nf = wasm_f32x4_sub(t, k->magic);
    v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(nf, k->ln2hi));
    r = wasm_f32x4_sub(r, wasm_f32x4_mul(nf, k->ln2lo));
    v128_t p = wasm_f32x4_add(wasm_f32x4_mul(k->p0, r), k->p1);
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), k->p2);
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), k->p3);
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), k->p4);
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), k->p5);
    v128_t y = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(p, wasm_f32x4_mul(r, r)), r), k->one);
    v128_t h = wasm_i32x4_shr(n, 1);
    v128_t s1 = wasm_i32x4_shl(wasm_i32x4_add(h, k->bias), 23);
    v128_t s2 = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_sub(n, h), k->bias), 23);
    return wasm_f32x4_mul(wasm_f32x4_mul(y, s1), s2);
}
#endif

#ifdef __wasm_simd128__
/* the f64x2 pairs (x[0], x[1]) and (x[2], x[3]) of four floats, exactly */
static inline v128_t avs_f64_lo(const float *x) { return wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(x)); }
static inline v128_t avs_f64_hi(const float *x) { return wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(x + 2)); }
#endif

/* x[i] ← e^(x[i] − c), i < len; returns Σ x[i] summed in 8 lanes (lane l takes i ≡ l mod 8), then
 * the lanes pairwise, then the tail in order. */
static inline float avs_exp_sub_sum(float *x, int len, float c) {
    int i = 0;
    float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#ifdef __wasm_simd128__
    avs_expk k = avs_expk_load();
    v128_t vc = wasm_f32x4_splat(c), a0 = wasm_f32x4_splat(0.0f), a1 = a0;
    for (; i + 8 <= len; i += 8) {
        v128_t e0 = avs_exp4(wasm_f32x4_sub(wasm_v128_load(x + i), vc), &k);
        v128_t e1 = avs_exp4(wasm_f32x4_sub(wasm_v128_load(x + i + 4), vc), &k);
        wasm_v128_store(x + i, e0);
        wasm_v128_store(x + i + 4, e1);
        a0 = wasm_f32x4_add(a0, e0);
        a1 = wasm_f32x4_add(a1, e1);
    }
    wasm_v128_store(lane, a0);
    wasm_v128_store(lane + 4, a1);
#else
    for (; i + 8 <= len; i += 8)
        for (int l = 0; l < 8; l++) {
            float e = avs_expf(x[i + l] - c);
            x[i + l] = e;
            lane[l] += e;
        }
#endif
    float s = ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
    for (; i < len; i++) {
        x[i] = avs_expf(x[i] - c);
        s += x[i];
    }
    return s;
}

/* y[i] ← elu(x[i]) + 1, i.e. x[i] + 1 where x[i] > 0 and e^x[i] elsewhere, i < count (x finite). */
static inline void avs_elu1(float *y, const float *x, size_t count) {
    size_t i = 0;
#ifdef __wasm_simd128__
    /* e^min(x, 0) + max(x, 0): e^x + 0 where x ≤ 0 and 1 + x where x > 0 (avs_exp4(0) is exactly 1, adding +0 to
     * e^x > 0 is exact), the bits of the select form in two instructions where the compare and bitselect took
     * four, and with the upper clamp dropped (min(x, 0) is below it) one constant fewer for V8 to keep in a
     * register: 16384 floats in 0.0215 → 0.0200 ms in node (best of 3 runs of each build, back to back). */
    avs_expk k = avs_expk_load();
    v128_t zero = wasm_f32x4_splat(0.0f);
    k.hi = zero;
    for (; i + 4 <= count; i += 4) {
        v128_t v = wasm_v128_load(x + i);
        wasm_v128_store(y + i, wasm_f32x4_add(avs_exp4(v, &k), wasm_f32x4_pmax(v, zero)));
    }
#endif
    for (; i < count; i++) y[i] = x[i] > 0 ? x[i] + 1.0f : avs_expf(x[i]);
}

/* Column softmax over positions: for each of the d columns f of X (n×d, n ≥ 1), y[j][f] ← e^(x[j][f] − c_f)/s_f
 * with c_f = max_j x[j][f] and s_f = Σ_j e^(x[j][f] − c_f) summed in float64 in order of j; the division is a
 * multiplication by the float (1/s_f). Four columns at a time in f32x4/f64x2 lanes. */
static inline void avs_col_softmax(float *Y, const float *X, int n, int d) {
    int f0 = 0;
#ifdef __wasm_simd128__
    avs_expk k = avs_expk_load();
    for (; f0 + 4 <= d; f0 += 4) {
        v128_t c = wasm_v128_load(X + f0);
        for (int j = 1; j < n; j++) c = wasm_f32x4_pmax(c, wasm_v128_load(X + (size_t)j * d + f0));
        v128_t s0 = wasm_f64x2_splat(0.0), s1 = s0;
        for (int j = 0; j < n; j++) {
            v128_t e = avs_exp4(wasm_f32x4_sub(wasm_v128_load(X + (size_t)j * d + f0), c), &k);
            wasm_v128_store(Y + (size_t)j * d + f0, e);
            s0 = wasm_f64x2_add(s0, wasm_f64x2_promote_low_f32x4(e));
            s1 = wasm_f64x2_add(s1, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(e, e, 2, 3, 2, 3)));
        }
        v128_t one = wasm_f64x2_splat(1.0);
        v128_t i0 = wasm_f32x4_demote_f64x2_zero(wasm_f64x2_div(one, s0));
        v128_t i1 = wasm_f32x4_demote_f64x2_zero(wasm_f64x2_div(one, s1));
        v128_t inv = wasm_i32x4_shuffle(i0, i1, 0, 1, 4, 5);
        for (int j = 0; j < n; j++) {
            float *y = Y + (size_t)j * d + f0;
            wasm_v128_store(y, wasm_f32x4_mul(wasm_v128_load(y), inv));
        }
    }
#endif
    for (; f0 < d; f0++) {
        float c = X[f0];
        for (int j = 1; j < n; j++) c = c < X[(size_t)j * d + f0] ? X[(size_t)j * d + f0] : c;
        double s = 0;
        for (int j = 0; j < n; j++) {
            float e = avs_expf(X[(size_t)j * d + f0] - c);
            Y[(size_t)j * d + f0] = e;
            s += e;
        }
        float inv = (float)(1.0 / s);
        for (int j = 0; j < n; j++) Y[(size_t)j * d + f0] *= inv;
    }
}

/* max over x[0..len), len ≥ 1 (both paths skip NaN entries after the first: callers check
 * finiteness separately). */
static inline float avs_max(const float *x, int len) {
    int i = 0;
    float lane[8];
    for (int l = 0; l < 8; l++) lane[l] = x[0];
#ifdef __wasm_simd128__
    v128_t a0 = wasm_f32x4_splat(x[0]), a1 = a0;
    for (; i + 8 <= len; i += 8) {
        a0 = wasm_f32x4_pmax(a0, wasm_v128_load(x + i));
        a1 = wasm_f32x4_pmax(a1, wasm_v128_load(x + i + 4));
    }
    wasm_v128_store(lane, a0);
    wasm_v128_store(lane + 4, a1);
#else
    for (; i + 8 <= len; i += 8)
        for (int l = 0; l < 8; l++) lane[l] = lane[l] < x[i + l] ? x[i + l] : lane[l];
#endif
    float m = lane[0];
    for (int l = 1; l < 8; l++) m = m < lane[l] ? lane[l] : m;
    for (; i < len; i++) m = m < x[i] ? x[i] : m;
    return m;
}

/* Σ x[i] in float64, i < len: 8 lane sums (lane l takes i ≡ l mod 8), then the lanes pairwise, then the
 * tail in order. */
static inline double avs_sum_f64(const float *x, int len) {
    int i = 0;
    double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#ifdef __wasm_simd128__
    v128_t a0 = wasm_f64x2_splat(0.0), a1 = a0, a2 = a0, a3 = a0;
    for (; i + 8 <= len; i += 8) {
        a0 = wasm_f64x2_add(a0, avs_f64_lo(x + i));
        a1 = wasm_f64x2_add(a1, avs_f64_hi(x + i));
        a2 = wasm_f64x2_add(a2, avs_f64_lo(x + i + 4));
        a3 = wasm_f64x2_add(a3, avs_f64_hi(x + i + 4));
    }
    wasm_v128_store(lane, a0);
    wasm_v128_store(lane + 2, a1);
    wasm_v128_store(lane + 4, a2);
    wasm_v128_store(lane + 6, a3);
#else
    for (; i + 8 <= len; i += 8)
        for (int l = 0; l < 8; l++) lane[l] += x[i + l];
#endif
    double s = ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
    for (; i < len; i++) s += x[i];
    return s;
}

/* 1 if no x[i] (i < count) is Inf or NaN: the largest exponent field, taken over 8 lanes, is below all-ones. */
static inline int avs_all_finite(const float *x, size_t count) {
    size_t i = 0;
    uint32_t lane[8] = {0, 0, 0, 0, 0, 0, 0, 0}, m = 0;
#ifdef __wasm_simd128__
    v128_t mask = wasm_i32x4_splat(0x7f800000), a0 = wasm_i32x4_splat(0), a1 = a0;
    v128_t a2 = a0, a3 = a0;
    /* 16 floats a step, four chains: 0.085 → 0.05 ns a float in node (65536 floats in cache, best of 3 runs of each
     * build); the linear path checks Q, K, V and O, 64K floats at n = 256, d = 64 */
    for (; i + 16 <= count; i += 16) {
        a0 = wasm_u32x4_max(a0, wasm_v128_and(wasm_v128_load(x + i), mask));
        a1 = wasm_u32x4_max(a1, wasm_v128_and(wasm_v128_load(x + i + 4), mask));
        a2 = wasm_u32x4_max(a2, wasm_v128_and(wasm_v128_load(x + i + 8), mask));
        a3 = wasm_u32x4_max(a3, wasm_v128_and(wasm_v128_load(x + i + 12), mask));
    }
    a0 = wasm_u32x4_max(a0, a2);
    a1 = wasm_u32x4_max(a1, a3);
    for (; i + 8 <= count; i += 8) {
        a0 = wasm_u32x4_max(a0, wasm_v128_and(wasm_v128_load(x + i), mask));
        a1 = wasm_u32x4_max(a1, wasm_v128_and(wasm_v128_load(x + i + 4), mask));
    }
    wasm_v128_store(lane, a0);
    wasm_v128_store(lane + 4, a1);
#else
    for (; i + 8 <= count; i += 8)
        for (int l = 0; l < 8; l++) {
            uint32_t e = avs_f2u(x[i + l]) & 0x7f800000u;
            lane[l] = lane[l] < e ? e : lane[l];
        }
#endif
    for (int l = 0; l < 8; l++) m = m < lane[l] ? lane[l] : m;
    for (; i < count; i++) {
        uint32_t e = avs_f2u(x[i]) & 0x7f800000u;
        m = m < e ? e : m;
    }
    return m != 0x7f800000u;
}

/* x[i] ← a·x[i], i < len. */
static inline void avs_scale(float *x, int len, float a) {
    for (int i = 0; i < len; i++) x[i] *= a;
}

// ----------------------------------------------------------------------------------------------------
// gemm: C[m×n] = α·A[m×k]·B[k×n], with B pre-packed into ⌈n/8⌉ panels of k×8 floats (zero padded).
// A strip of up to 4 rows of C is computed at a time, 4×8 accumulators per panel (8 f32x4 registers,
// which leaves room for the loads on a 16-register target). Packing costs O(n·k) once; the caller then
// calls avs_gemm_strip for each strip and can post-process the strip while it is in cache (softmax).

static inline size_t avs_packed_floats(int n, int k) {
    return (size_t)((n + AVS_PANEL - 1) / AVS_PANEL) * AVS_PANEL * (size_t)k;
}

/* P ← packed Bᵀ, where Bt is n×k row-major (row j of Bt is column j of B; e.g. K for Q·Kᵀ). */
static inline void avs_pack_bt(float *P, const float *Bt, size_t ldb, int n, int k) {
    for (int j0 = 0; j0 < n; j0 += AVS_PANEL) {
        float *p = P + (size_t)j0 * k;
        for (int c = 0; c < AVS_PANEL; c++) {
            const float *row = j0 + c < n ? Bt + (size_t)(j0 + c) * ldb : NULL;
            for (int kk = 0; kk < k; kk++) p[(size_t)kk * AVS_PANEL + c] = row ? row[kk] : 0.0f;
        }
    }
}

/* P ← packed B, where B is k×n row-major (e.g. V for M·V). */
static inline void avs_pack_b(float *P, const float *B, size_t ldb, int k, int n) {
    for (int j0 = 0; j0 < n; j0 += AVS_PANEL) {
        float *p = P + (size_t)j0 * k;
        int w = n - j0 < AVS_PANEL ? n - j0 : AVS_PANEL;
        for (int kk = 0; kk < k; kk++) {
            const float *row = B + (size_t)kk * ldb + j0;
            for (int c = 0; c < AVS_PANEL; c++) p[(size_t)kk * AVS_PANEL + c] = c < w ? row[c] : 0.0f;
        }
    }
}

/* gcc would vectorise the kk loop below as an in-order reduction (lane by lane, slow); the intended
 * vectorisation is of the 8 columns (SLP), so the loop vectoriser is turned off for this one function. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__wasm_simd128__)
#define AVS_NO_LOOP_VEC __attribute__((optimize("no-tree-loop-vectorize")))
#else
#define AVS_NO_LOOP_VEC
#endif

/* acc[r][0..8) = Σ_kk A[r][kk]·p[kk][0..8) for `rows` (1..4) rows of A (stride lda). */
AVS_NO_LOOP_VEC static inline void avs_kernel_4x8(float acc[4][AVS_PANEL], const float *A, size_t lda, int rows,
                                  const float *p, int k) {
    const float *a0 = A, *a1 = rows > 1 ? A + lda : A, *a2 = rows > 2 ? A + 2 * lda : A;
    const float *a3 = rows > 3 ? A + 3 * lda : A;
#ifdef __wasm_simd128__
    v128_t c00 = wasm_f32x4_splat(0.0f), c01 = c00, c10 = c00, c11 = c00;
    v128_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;
#define AVS_STEP(kk)                                                                                   \
    do {                                                                                               \
        v128_t b0 = wasm_v128_load(p + (size_t)(kk) * AVS_PANEL);                                      \
        v128_t b1 = wasm_v128_load(p + (size_t)(kk) * AVS_PANEL + 4);                                  \
        v128_t x = wasm_v128_load32_splat(a0 + (kk));                                                  \
        c00 = wasm_f32x4_add(c00, wasm_f32x4_mul(x, b0));                                              \
        c01 = wasm_f32x4_add(c01, wasm_f32x4_mul(x, b1));                                              \
        x = wasm_v128_load32_splat(a1 + (kk));                                                         \
        c10 = wasm_f32x4_add(c10, wasm_f32x4_mul(x, b0));                                              \
        c11 = wasm_f32x4_add(c11, wasm_f32x4_mul(x, b1));                                              \
        x = wasm_v128_load32_splat(a2 + (kk));                                                         \
        c20 = wasm_f32x4_add(c20, wasm_f32x4_mul(x, b0));                                              \
        c21 = wasm_f32x4_add(c21, wasm_f32x4_mul(x, b1));                                              \
        x = wasm_v128_load32_splat(a3 + (kk));                                                         \
        c30 = wasm_f32x4_add(c30, wasm_f32x4_mul(x, b0));                                              \
        c31 = wasm_f32x4_add(c31, wasm_f32x4_mul(x, b1));                                              \
    } while (0)
    /* Not unrolled: LLVM would hoist the loads of every unrolled step to the top of the body, and V8,
     * which does not reschedule, would then spill most of them (measured: half the speed). */
#pragma clang loop unroll(disable)
    for (int kk = 0; kk < k; kk++) AVS_STEP(kk);
#undef AVS_STEP
    wasm_v128_store(acc[0], c00); wasm_v128_store(acc[0] + 4, c01);
    wasm_v128_store(acc[1], c10); wasm_v128_store(acc[1] + 4, c11);
    wasm_v128_store(acc[2], c20); wasm_v128_store(acc[2] + 4, c21);
    wasm_v128_store(acc[3], c30); wasm_v128_store(acc[3] + 4, c31);
#else
    float c0[AVS_PANEL] = {0}, c1[AVS_PANEL] = {0}, c2[AVS_PANEL] = {0}, c3[AVS_PANEL] = {0};
    for (int kk = 0; kk < k; kk++) {
        const float *b = p + (size_t)kk * AVS_PANEL;
        float x0 = a0[kk], x1 = a1[kk], x2 = a2[kk], x3 = a3[kk];
        for (int j = 0; j < AVS_PANEL; j++) {
            c0[j] += x0 * b[j];
            c1[j] += x1 * b[j];
            c2[j] += x2 * b[j];
            c3[j] += x3 * b[j];
        }
    }
    memcpy(acc[0], c0, sizeof c0);
    memcpy(acc[1], c1, sizeof c1);
    memcpy(acc[2], c2, sizeof c2);
    memcpy(acc[3], c3, sizeof c3);
#endif
}

/* Rows [0, rows) of C (rows ≤ 4, stride ldc) ← α·A·B (accumulate = 0) or C + α·A·B (accumulate = 1),
 * over columns [0, ncols), from P packed by avs_pack_b/avs_pack_bt with kp rows (kp = the packed k).
 * Only the first k ≤ kp rows of B take part (the rest are known zero, e.g. a causal M·V); A has
 * `rows` rows of at least k floats, stride lda. */
static inline void avs_gemm_strip(float *C, size_t ldc, const float *A, size_t lda, int rows,
                                  const float *P, int kp, int ncols, int k, float alpha, int accumulate) {
    float acc[4][AVS_PANEL];
    for (int j0 = 0; j0 < ncols; j0 += AVS_PANEL) {
        avs_kernel_4x8(acc, A, lda, rows, P + (size_t)j0 * kp, k);
        int w = ncols - j0 < AVS_PANEL ? ncols - j0 : AVS_PANEL;
        for (int r = 0; r < rows; r++) {
            float *c = C + (size_t)r * ldc + j0;
            if (accumulate)
                for (int j = 0; j < w; j++) c[j] += alpha * acc[r][j];
            else if (w == AVS_PANEL)
                for (int j = 0; j < AVS_PANEL; j++) c[j] = alpha * acc[r][j];
            else
                for (int j = 0; j < w; j++) c[j] = alpha * acc[r][j];
        }
    }
}

// ----------------------------------------------------------------------------------------------------
// float64 accumulation of float data (the linear path's state S = Φ_Kᵀ·V and readout Φ_Q·S). A product of
// two floats is exact in float64, so each entry is the float64 sum of exact products, taken in order of
// the shared index (kk = 0, 1, …) from +0: any tiling of the output gives the same bits. The kernels keep
// a 2×8 tile of the output in registers (8 f64x2 accumulators) across the whole shared index.

#define AVS_F64_ROWS 2
#define AVS_F64_COLS 8

/* acc[r][c] = Σ_kk At[kk][r]·B[kk][c], r < 2, c < 8, over kk < k: A given transposed in float64 (At k×2, stride
 * lda; e.g. two columns of Nyström's Bᵀ), B float (k×8, stride ldb; e.g. 8 columns of V). */
AVS_NO_LOOP_VEC static inline void avs_kernel_f64_dtb(double acc[AVS_F64_ROWS][AVS_F64_COLS], const double *At,
                                                      size_t lda, const float *B, size_t ldb, int k) {
#ifdef __wasm_simd128__
    v128_t c00 = wasm_f64x2_splat(0.0), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
#pragma clang loop unroll(disable) /* see avs_kernel_4x8 */
    for (int kk = 0; kk < k; kk++) {
        const double *a = At + (size_t)kk * lda;
        const float *b = B + (size_t)kk * ldb;
        v128_t a0 = wasm_v128_load64_splat(a), a1 = wasm_v128_load64_splat(a + 1);
        v128_t b0 = avs_f64_lo(b), b1 = avs_f64_hi(b), b2 = avs_f64_lo(b + 4), b3 = avs_f64_hi(b + 4);
        c00 = wasm_f64x2_add(c00, wasm_f64x2_mul(a0, b0));
        c01 = wasm_f64x2_add(c01, wasm_f64x2_mul(a0, b1));
        c02 = wasm_f64x2_add(c02, wasm_f64x2_mul(a0, b2));
        c03 = wasm_f64x2_add(c03, wasm_f64x2_mul(a0, b3));
        c10 = wasm_f64x2_add(c10, wasm_f64x2_mul(a1, b0));
        c11 = wasm_f64x2_add(c11, wasm_f64x2_mul(a1, b1));
        c12 = wasm_f64x2_add(c12, wasm_f64x2_mul(a1, b2));
        c13 = wasm_f64x2_add(c13, wasm_f64x2_mul(a1, b3));
    }
    wasm_v128_store(acc[0], c00); wasm_v128_store(acc[0] + 2, c01);
    wasm_v128_store(acc[0] + 4, c02); wasm_v128_store(acc[0] + 6, c03);
    wasm_v128_store(acc[1], c10); wasm_v128_store(acc[1] + 2, c11);
    wasm_v128_store(acc[1] + 4, c12); wasm_v128_store(acc[1] + 6, c13);
#else
    double c0[AVS_F64_COLS] = {0}, c1[AVS_F64_COLS] = {0};
    for (int kk = 0; kk < k; kk++) {
        const double *a = At + (size_t)kk * lda;
        const float *b = B + (size_t)kk * ldb;
        double a0 = a[0], a1 = a[1];
        for (int c = 0; c < AVS_F64_COLS; c++) {
            double bc = b[c];
            c0[c] += a0 * bc;
            c1[c] += a1 * bc;
        }
    }
    memcpy(acc[0], c0, sizeof c0);
    memcpy(acc[1], c1, sizeof c1);
#endif
}

/* acc[r][c] = Σ_kk A[r][kk]·B[kk][c], r < 2, c < 8, over kk < k, A and B float (A 2×k, stride lda; B k×8, stride
 * ldb; e.g. Linformer's E·K and F·V). */
AVS_NO_LOOP_VEC static inline void avs_kernel_f64_ff(double acc[AVS_F64_ROWS][AVS_F64_COLS], const float *A,
                                                     size_t lda, const float *B, size_t ldb, int k) {
    const float *a0p = A, *a1p = A + lda;
#ifdef __wasm_simd128__
    v128_t c00 = wasm_f64x2_splat(0.0), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
#pragma clang loop unroll(disable) /* see avs_kernel_4x8 */
    for (int kk = 0; kk < k; kk++) {
        const float *b = B + (size_t)kk * ldb;
        v128_t a0 = wasm_f64x2_splat(a0p[kk]), a1 = wasm_f64x2_splat(a1p[kk]);
        v128_t b0 = avs_f64_lo(b), b1 = avs_f64_hi(b), b2 = avs_f64_lo(b + 4), b3 = avs_f64_hi(b + 4);
        c00 = wasm_f64x2_add(c00, wasm_f64x2_mul(a0, b0));
        c01 = wasm_f64x2_add(c01, wasm_f64x2_mul(a0, b1));
        c02 = wasm_f64x2_add(c02, wasm_f64x2_mul(a0, b2));
        c03 = wasm_f64x2_add(c03, wasm_f64x2_mul(a0, b3));
        c10 = wasm_f64x2_add(c10, wasm_f64x2_mul(a1, b0));
        c11 = wasm_f64x2_add(c11, wasm_f64x2_mul(a1, b1));
        c12 = wasm_f64x2_add(c12, wasm_f64x2_mul(a1, b2));
        c13 = wasm_f64x2_add(c13, wasm_f64x2_mul(a1, b3));
    }
    wasm_v128_store(acc[0], c00); wasm_v128_store(acc[0] + 2, c01);
    wasm_v128_store(acc[0] + 4, c02); wasm_v128_store(acc[0] + 6, c03);
    wasm_v128_store(acc[1], c10); wasm_v128_store(acc[1] + 2, c11);
    wasm_v128_store(acc[1] + 4, c12); wasm_v128_store(acc[1] + 6, c13);
#else
    double c0[AVS_F64_COLS] = {0}, c1[AVS_F64_COLS] = {0};
    for (int kk = 0; kk < k; kk++) {
        const float *b = B + (size_t)kk * ldb;
        double a0 = a0p[kk], a1 = a1p[kk];
        for (int c = 0; c < AVS_F64_COLS; c++) {
            double bc = b[c];
            c0[c] += a0 * bc;
            c1[c] += a1 * bc;
        }
    }
    memcpy(acc[0], c0, sizeof c0);
    memcpy(acc[1], c1, sizeof c1);
#endif
}

/* acc[r][c] = Σ_kk A[r][kk]·B[kk][c], r < 2, c < 8, over kk < k: A float (2×k, stride lda; e.g. two rows of
 * Φ_Q), B float64 (k×8, stride ldb; e.g. 8 columns of S). */
AVS_NO_LOOP_VEC static inline void avs_kernel_f64_ab(double acc[AVS_F64_ROWS][AVS_F64_COLS], const float *A,
                                                     size_t lda, const double *B, size_t ldb, int k) {
    const float *a0p = A, *a1p = A + lda;
#ifdef __wasm_simd128__
    v128_t c00 = wasm_f64x2_splat(0.0), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
#pragma clang loop unroll(disable) /* see avs_kernel_4x8 */
    for (int kk = 0; kk < k; kk++) {
        const double *b = B + (size_t)kk * ldb;
        v128_t a0 = wasm_f64x2_splat(a0p[kk]), a1 = wasm_f64x2_splat(a1p[kk]);
        v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 2), b2 = wasm_v128_load(b + 4);
        v128_t b3 = wasm_v128_load(b + 6);
        c00 = wasm_f64x2_add(c00, wasm_f64x2_mul(a0, b0));
        c01 = wasm_f64x2_add(c01, wasm_f64x2_mul(a0, b1));
        c02 = wasm_f64x2_add(c02, wasm_f64x2_mul(a0, b2));
        c03 = wasm_f64x2_add(c03, wasm_f64x2_mul(a0, b3));
        c10 = wasm_f64x2_add(c10, wasm_f64x2_mul(a1, b0));
        c11 = wasm_f64x2_add(c11, wasm_f64x2_mul(a1, b1));
        c12 = wasm_f64x2_add(c12, wasm_f64x2_mul(a1, b2));
        c13 = wasm_f64x2_add(c13, wasm_f64x2_mul(a1, b3));
    }
    wasm_v128_store(acc[0], c00); wasm_v128_store(acc[0] + 2, c01);
    wasm_v128_store(acc[0] + 4, c02); wasm_v128_store(acc[0] + 6, c03);
    wasm_v128_store(acc[1], c10); wasm_v128_store(acc[1] + 2, c11);
    wasm_v128_store(acc[1] + 4, c12); wasm_v128_store(acc[1] + 6, c13);
#else
    double c0[AVS_F64_COLS] = {0}, c1[AVS_F64_COLS] = {0};
    for (int kk = 0; kk < k; kk++) {
        const double *b = B + (size_t)kk * ldb;
        double a0 = a0p[kk], a1 = a1p[kk];
        for (int c = 0; c < AVS_F64_COLS; c++) {
            c0[c] += a0 * b[c];
            c1[c] += a1 * b[c];
        }
    }
    memcpy(acc[0], c0, sizeof c0);
    memcpy(acc[1], c1, sizeof c1);
#endif
}

/* acc[r][c] = Σ_kk A[r][kk]·B[kk][c], r < 2, c < 8, over kk < k, all float64 (A 2×k, stride lda; B k×8,
 * stride ldb; e.g. the Nyström m×m products). */
AVS_NO_LOOP_VEC static inline void avs_kernel_f64_dd(double acc[AVS_F64_ROWS][AVS_F64_COLS], const double *A,
                                                     size_t lda, const double *B, size_t ldb, int k) {
    const double *a0p = A, *a1p = A + lda;
#ifdef __wasm_simd128__
    v128_t c00 = wasm_f64x2_splat(0.0), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
#pragma clang loop unroll(disable) /* see avs_kernel_4x8 */
    for (int kk = 0; kk < k; kk++) {
        const double *b = B + (size_t)kk * ldb;
        v128_t a0 = wasm_v128_load64_splat(a0p + kk), a1 = wasm_v128_load64_splat(a1p + kk);
        v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 2), b2 = wasm_v128_load(b + 4);
        v128_t b3 = wasm_v128_load(b + 6);
        c00 = wasm_f64x2_add(c00, wasm_f64x2_mul(a0, b0));
        c01 = wasm_f64x2_add(c01, wasm_f64x2_mul(a0, b1));
        c02 = wasm_f64x2_add(c02, wasm_f64x2_mul(a0, b2));
        c03 = wasm_f64x2_add(c03, wasm_f64x2_mul(a0, b3));
        c10 = wasm_f64x2_add(c10, wasm_f64x2_mul(a1, b0));
        c11 = wasm_f64x2_add(c11, wasm_f64x2_mul(a1, b1));
        c12 = wasm_f64x2_add(c12, wasm_f64x2_mul(a1, b2));
        c13 = wasm_f64x2_add(c13, wasm_f64x2_mul(a1, b3));
    }
    wasm_v128_store(acc[0], c00); wasm_v128_store(acc[0] + 2, c01);
    wasm_v128_store(acc[0] + 4, c02); wasm_v128_store(acc[0] + 6, c03);
    wasm_v128_store(acc[1], c10); wasm_v128_store(acc[1] + 2, c11);
    wasm_v128_store(acc[1] + 4, c12); wasm_v128_store(acc[1] + 6, c13);
#else
    double c0[AVS_F64_COLS] = {0}, c1[AVS_F64_COLS] = {0};
    for (int kk = 0; kk < k; kk++) {
        const double *b = B + (size_t)kk * ldb;
        double a0 = a0p[kk], a1 = a1p[kk];
        for (int c = 0; c < AVS_F64_COLS; c++) {
            c0[c] += a0 * b[c];
            c1[c] += a1 * b[c];
        }
    }
    memcpy(acc[0], c0, sizeof c0);
    memcpy(acc[1], c1, sizeof c1);
#endif
}

/* C[r][c] += Σ_kk At[kk][r]·B[kk][c], r < 2, c < 8 (C stride ldc), over kk < k, all float64, continuing from the
 * sums already in C (the same bits as one pass over the whole shared index when a caller splits it into blocks): A given
 * transposed (At k×2, stride lda; e.g. two columns of a block of Φ_K converted to float64), B k×8 (stride ldb;
 * e.g. 8 columns of a block of V converted). With both sides in float64 the inner step has no conversions: in
 * WASM each promote competes with the adds for V8's two float-add ports. */
AVS_NO_LOOP_VEC static inline void avs_kernel_f64_dtd_acc(double *C, size_t ldc, const double *At, size_t lda,
                                                          const double *B, size_t ldb, int k) {
    double *C1 = C + ldc;
#ifdef __wasm_simd128__
    v128_t c00 = wasm_v128_load(C), c01 = wasm_v128_load(C + 2), c02 = wasm_v128_load(C + 4);
    v128_t c03 = wasm_v128_load(C + 6), c10 = wasm_v128_load(C1), c11 = wasm_v128_load(C1 + 2);
    v128_t c12 = wasm_v128_load(C1 + 4), c13 = wasm_v128_load(C1 + 6);
#pragma clang loop unroll(disable) /* see avs_kernel_4x8 */
    for (int kk = 0; kk < k; kk++) {
        const double *a = At + (size_t)kk * lda, *b = B + (size_t)kk * ldb;
        v128_t a0 = wasm_v128_load64_splat(a), a1 = wasm_v128_load64_splat(a + 1);
        v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 2), b2 = wasm_v128_load(b + 4);
        v128_t b3 = wasm_v128_load(b + 6);
        c00 = wasm_f64x2_add(c00, wasm_f64x2_mul(a0, b0));
        c01 = wasm_f64x2_add(c01, wasm_f64x2_mul(a0, b1));
        c02 = wasm_f64x2_add(c02, wasm_f64x2_mul(a0, b2));
        c03 = wasm_f64x2_add(c03, wasm_f64x2_mul(a0, b3));
        c10 = wasm_f64x2_add(c10, wasm_f64x2_mul(a1, b0));
        c11 = wasm_f64x2_add(c11, wasm_f64x2_mul(a1, b1));
        c12 = wasm_f64x2_add(c12, wasm_f64x2_mul(a1, b2));
        c13 = wasm_f64x2_add(c13, wasm_f64x2_mul(a1, b3));
    }
    wasm_v128_store(C, c00); wasm_v128_store(C + 2, c01);
    wasm_v128_store(C + 4, c02); wasm_v128_store(C + 6, c03);
    wasm_v128_store(C1, c10); wasm_v128_store(C1 + 2, c11);
    wasm_v128_store(C1 + 4, c12); wasm_v128_store(C1 + 6, c13);
#else
    double c0[AVS_F64_COLS], c1[AVS_F64_COLS];
    memcpy(c0, C, sizeof c0);
    memcpy(c1, C1, sizeof c1);
    for (int kk = 0; kk < k; kk++) {
        const double *a = At + (size_t)kk * lda, *b = B + (size_t)kk * ldb;
        double a0 = a[0], a1 = a[1];
        for (int c = 0; c < AVS_F64_COLS; c++) {
            c0[c] += a0 * b[c];
            c1[c] += a1 * b[c];
        }
    }
    memcpy(C, c0, sizeof c0);
    memcpy(C1, c1, sizeof c1);
#endif
}

/* One token of the causal linear scan (linear.c), fused over an 8-column block of the float64 state S (r rows,
 * stride lds): for f = 0, 1, …, r − 1 in order, s_f ← γ·s_f + a_f·v (γ·s_f alone where a_f = 0), then
 * acc += q_f·s_f (skipped where q_f = 0); acc[0..8) starts from +0. Each entry gets the operations of the two-pass
 * form (S ← γS, then S += φ_k vᵀ, then the readout Sᵀφ_q) in the same order, so the same bits, in one pass over S
 * with v and the accumulators held in registers. a = φ(k_t), q = φ(q_t) (r floats), v = 8 floats of v_t. */
AVS_NO_LOOP_VEC static inline void avs_scan_block8(double *S, size_t lds, const float *a, const float *q, long r,
                                                   const float *v, double g, double acc[8]) {
#ifdef __wasm_simd128__
    v128_t v0 = avs_f64_lo(v), v1 = avs_f64_hi(v), v2 = avs_f64_lo(v + 4), v3 = avs_f64_hi(v + 4);
    v128_t gg = wasm_f64x2_splat(g), c0 = wasm_f64x2_splat(0.0), c1 = c0, c2 = c0, c3 = c0;
#pragma clang loop unroll(disable) /* see avs_kernel_4x8 */
    for (long f = 0; f < r; f++) {
        double *s = S + (size_t)f * lds;
        v128_t s0 = wasm_f64x2_mul(wasm_v128_load(s), gg), s1 = wasm_f64x2_mul(wasm_v128_load(s + 2), gg);
        v128_t s2 = wasm_f64x2_mul(wasm_v128_load(s + 4), gg), s3 = wasm_f64x2_mul(wasm_v128_load(s + 6), gg);
        if (a[f] != 0) {
            v128_t af = wasm_f64x2_splat(a[f]);
            s0 = wasm_f64x2_add(s0, wasm_f64x2_mul(af, v0));
            s1 = wasm_f64x2_add(s1, wasm_f64x2_mul(af, v1));
            s2 = wasm_f64x2_add(s2, wasm_f64x2_mul(af, v2));
            s3 = wasm_f64x2_add(s3, wasm_f64x2_mul(af, v3));
        }
        wasm_v128_store(s, s0); wasm_v128_store(s + 2, s1); wasm_v128_store(s + 4, s2); wasm_v128_store(s + 6, s3);
        if (q[f] != 0) {
            v128_t qf = wasm_f64x2_splat(q[f]);
            c0 = wasm_f64x2_add(c0, wasm_f64x2_mul(qf, s0));
            c1 = wasm_f64x2_add(c1, wasm_f64x2_mul(qf, s1));
            c2 = wasm_f64x2_add(c2, wasm_f64x2_mul(qf, s2));
            c3 = wasm_f64x2_add(c3, wasm_f64x2_mul(qf, s3));
        }
    }
    wasm_v128_store(acc, c0); wasm_v128_store(acc + 2, c1); wasm_v128_store(acc + 4, c2); wasm_v128_store(acc + 6, c3);
#else
    /* eight float64 lanes of the generic vector extension (gcc's loop and SLP vectorisers scalarise the
     * accumulators of a plain-array form behind the q_f = 0 branch) */
    typedef double f64x8 __attribute__((vector_size(64)));
    f64x8 vd, gv, c = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < 8; k++) {
        vd[k] = v[k];
        gv[k] = g;
    }
    for (long f = 0; f < r; f++) {
        double *s = S + (size_t)f * lds, af = a[f], qf = q[f];
        f64x8 t;
        memcpy(&t, s, sizeof t);
        t = t * gv;
        if (af != 0) t = t + (f64x8){af, af, af, af, af, af, af, af} * vd;
        memcpy(s, &t, sizeof t);
        if (qf != 0) c = c + (f64x8){qf, qf, qf, qf, qf, qf, qf, qf} * t;
    }
    memcpy(acc, &c, sizeof c);
#endif
}

/* avs_scan_block8 for a token whose φ(k_t) and φ(q_t) have no zero entry (elu, exp, … always), given in float64
 * (ad, qd: r doubles): the same operations without the two tests per feature, which with the float → double
 * conversions were a third of the instructions V8 issued per step of the scan. */
AVS_NO_LOOP_VEC static inline void avs_scan_block8_dense(double *S, size_t lds, const double *ad, const double *qd,
                                                         long r, const float *v, double g, double acc[8]) {
#ifdef __wasm_simd128__
    v128_t v0 = avs_f64_lo(v), v1 = avs_f64_hi(v), v2 = avs_f64_lo(v + 4), v3 = avs_f64_hi(v + 4);
    v128_t gg = wasm_f64x2_splat(g), c0 = wasm_f64x2_splat(0.0), c1 = c0, c2 = c0, c3 = c0;
#pragma clang loop unroll(disable) /* see avs_kernel_4x8 */
    for (long f = 0; f < r; f++) {
        double *s = S + (size_t)f * lds;
        v128_t af = wasm_v128_load64_splat(ad + f), qf = wasm_v128_load64_splat(qd + f);
        v128_t s0 = wasm_f64x2_add(wasm_f64x2_mul(wasm_v128_load(s), gg), wasm_f64x2_mul(af, v0));
        v128_t s1 = wasm_f64x2_add(wasm_f64x2_mul(wasm_v128_load(s + 2), gg), wasm_f64x2_mul(af, v1));
        v128_t s2 = wasm_f64x2_add(wasm_f64x2_mul(wasm_v128_load(s + 4), gg), wasm_f64x2_mul(af, v2));
        v128_t s3 = wasm_f64x2_add(wasm_f64x2_mul(wasm_v128_load(s + 6), gg), wasm_f64x2_mul(af, v3));
        wasm_v128_store(s, s0); wasm_v128_store(s + 2, s1); wasm_v128_store(s + 4, s2); wasm_v128_store(s + 6, s3);
        c0 = wasm_f64x2_add(c0, wasm_f64x2_mul(qf, s0));
        c1 = wasm_f64x2_add(c1, wasm_f64x2_mul(qf, s1));
        c2 = wasm_f64x2_add(c2, wasm_f64x2_mul(qf, s2));
        c3 = wasm_f64x2_add(c3, wasm_f64x2_mul(qf, s3));
    }
    wasm_v128_store(acc, c0); wasm_v128_store(acc + 2, c1); wasm_v128_store(acc + 4, c2); wasm_v128_store(acc + 6, c3);
#else
    typedef double f64x8 __attribute__((vector_size(64)));
    f64x8 vd, gv, c = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < 8; k++) {
        vd[k] = v[k];
        gv[k] = g;
    }
    for (long f = 0; f < r; f++) {
        double *s = S + (size_t)f * lds, af = ad[f], qf = qd[f];
        f64x8 t;
        memcpy(&t, s, sizeof t);
        t = t * gv + (f64x8){af, af, af, af, af, af, af, af} * vd;
        memcpy(s, &t, sizeof t);
        c = c + (f64x8){qf, qf, qf, qf, qf, qf, qf, qf} * t;
    }
    memcpy(acc, &c, sizeof c);
#endif
}

// ----------------------------------------------------------------------------------------------------
// ln x: fdlibm's reduction and polynomial, scalar and in two float64 lanes (the readouts)

/* ln x for a positive, finite, normal double, inline and branch-free, so that O(n²) loops (one
 * logarithm per entry for the readouts' entropy and KL) run without a libm call per entry. The argument
 * reduction and the minimax polynomial are fdlibm's e_log.c (Sun Microsystems, 1993): x = 2^k·z with
 * z ∈ [√2/2, √2), f = z − 1, s = f/(2 + f), ln z = f − f²/2 + s·(f²/2 + R(s²)); error < 1 ulp. The
 * exponent is split without a branch as in musl's log.c, and k is converted to double by the
 * 1.5·2^52 trick (no integer-to-double conversion). Callers never pass 0, subnormals, Inf or NaN. */
static inline double avs_log(double x) {
    static const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    static const double LG1 = 6.666666666666735130e-01, LG2 = 3.999999999940941908e-01,
                        LG3 = 2.857142874366239149e-01, LG4 = 2.222219843214978396e-01,
                        LG5 = 1.818357216161805012e-01, LG6 = 1.531383769920937332e-01,
                        LG7 = 1.479819860511658591e-01;
    uint64_t u, iz, kb;
    memcpy(&u, &x, 8);
    uint64_t tmp = u - 0x3fe6a09e667f3bcdULL; // z's exponent field is that of [√2/2, √2)
    iz = u - (tmp & 0xfffULL << 52);
    kb = 0x4338000000000000ULL + (uint64_t)((int64_t)tmp >> 52); // 1.5·2^52 + k, exactly
    double z, dk;
    memcpy(&z, &iz, 8);
    memcpy(&dk, &kb, 8);
    dk -= 6755399441055744.0; // k
    double f = z - 1.0, s = f / (2.0 + f), s2 = s * s, w = s2 * s2;
    double r = s2 * (LG1 + w * (LG3 + w * (LG5 + w * LG7))) + w * (LG2 + w * (LG4 + w * LG6));
    double hfsq = 0.5 * f * f;
    return dk * LN2_HI - ((hfsq - (s * (hfsq + r) + dk * LN2_LO)) - f);
}

/* Two float64 lanes in GCC/Clang's generic vector extension: wasm f64x2 under -msimd128, SSE2 natively.
 * Lane-wise arithmetic only: each lane computes exactly what the scalar code does. */
typedef double avs_f64x2 __attribute__((vector_size(16)));
typedef int64_t avs_i64x2 __attribute__((vector_size(16)));
typedef uint64_t avs_u64x2 __attribute__((vector_size(16)));
typedef float avs_f32x2 __attribute__((vector_size(8)));

static inline avs_f64x2 avs_load_f32x2(const float *p) {
    avs_f32x2 v;
    memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, avs_f64x2);
}

typedef int32_t avs_i32x4 __attribute__((vector_size(16)));
typedef int32_t avs_i32x2 __attribute__((vector_size(8)));

/* avs_log in two lanes (the same results, lane by lane). The exponent k = tmp >> 52 is taken from the
 * high 32-bit word of each lane (tmp >> 52 = hi(tmp) >> 20, both arithmetic) and converted from int32:
 * WASM SIMD128 has i32x4 shifts and f64x2.convert_low_i32x4_s as single instructions, while V8 lowers a
 * 64-bit arithmetic shift to a sequence (the log was half of the readouts' time at n = 1024). */
static inline avs_f64x2 avs_log2x(avs_f64x2 x) {
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    const double LG1 = 6.666666666666735130e-01, LG2 = 3.999999999940941908e-01,
                 LG3 = 2.857142874366239149e-01, LG4 = 2.222219843214978396e-01,
                 LG5 = 1.818357216161805012e-01, LG6 = 1.531383769920937332e-01,
                 LG7 = 1.479819860511658591e-01;
    avs_u64x2 u = (avs_u64x2)x; // unsigned lanes: the subtractions wrap, as in avs_log
    avs_u64x2 tmp = u - 0x3fe6a09e667f3bcdULL;
    avs_u64x2 iz = u - (tmp & 0xfff0000000000000ULL);
    avs_i32x4 hi = (avs_i32x4)tmp >> 20; // lanes 1 and 3: the high words (little-endian), shifted
    avs_i32x2 k = __builtin_shufflevector(hi, hi, 1, 3);
    avs_f64x2 z = (avs_f64x2)iz, dk = __builtin_convertvector(k, avs_f64x2);
    avs_f64x2 f = z - 1.0, s = f / (2.0 + f), s2 = s * s, w = s2 * s2;
    avs_f64x2 r = s2 * (LG1 + w * (LG3 + w * (LG5 + w * LG7))) + w * (LG2 + w * (LG4 + w * LG6));
    avs_f64x2 hfsq = 0.5 * f * f;
    return dk * LN2_HI - ((hfsq - (s * (hfsq + r) + dk * LN2_LO)) - f);
}

/* The table of avs_logf_split4: row i = {invc_i, logc_i} (see there). */
static inline const double *avs_logf_table(void) {
    static const double T[128][2] __attribute__((aligned(16))) = {
        {0x1.734f0c5000000p+0, -0x1.7cc7f7cfe6a0ep-2},
        {0x1.713786e000000p+0, -0x1.76feecca87175p-2},
        {0x1.6f26017000000p+0, -0x1.713e33a6ca17cp-2},
        {0x1.6d1a627000000p+0, -0x1.6b85b4e61a3fdp-2},
        {0x1.6b1490b000000p+0, -0x1.65d558e52e00bp-2},
        {0x1.691473b000000p+0, -0x1.602d08c4291ecp-2},
        {0x1.6719f36000000p+0, -0x1.5a8cadbbadfa1p-2},
        {0x1.6524f85000000p+0, -0x1.54f431ad1e1a9p-2},
        {0x1.63356b9000000p+0, -0x1.4f637ed0c9810p-2},
        {0x1.614b368000000p+0, -0x1.49da7f32cc41fp-2},
        {0x1.5f66434000000p+0, -0x1.44591dfdb9f49p-2},
        {0x1.5d867c4000000p+0, -0x1.3edf463f9683ep-2},
        {0x1.5babcc6000000p+0, -0x1.396ce34c7bf54p-2},
        {0x1.59d61f1000000p+0, -0x1.3401e1244cba1p-2},
        {0x1.5805601000000p+0, -0x1.2e9e2bbdb2286p-2},
        {0x1.56397ba000000p+0, -0x1.2941af9a46b7cp-2},
        {0x1.54725e7000000p+0, -0x1.23ec599ecba49p-2},
        {0x1.52aff57000000p+0, -0x1.1e9e1689299f4p-2},
        {0x1.50f22e1000000p+0, -0x1.1956d3b65c2fap-2},
        {0x1.4f38f63000000p+0, -0x1.14167efa07783p-2},
        {0x1.4d843bf000000p+0, -0x1.0edd061258081p-2},
        {0x1.4bd3ede000000p+0, -0x1.09aa573fac6d4p-2},
        {0x1.4a27fad000000p+0, -0x1.047e60b7083b8p-2},
        {0x1.4880522000000p+0, -0x1.feb2233e207cdp-3},
        {0x1.46dce34000000p+0, -0x1.f474b111df229p-3},
        {0x1.453d9e3000000p+0, -0x1.ea444a068aaf5p-3},
        {0x1.43a2731000000p+0, -0x1.e020cc8375ab5p-3},
        {0x1.420b526000000p+0, -0x1.d60a17d383515p-3},
        {0x1.40782d1000000p+0, -0x1.cc000c97f3c52p-3},
        {0x1.3ee8f43000000p+0, -0x1.c2028ad5bf9b4p-3},
        {0x1.3d5d992000000p+0, -0x1.b811732e023d2p-3},
        {0x1.3bd60d9000000p+0, -0x1.ae2ca6e832bd4p-3},
        {0x1.3a52438000000p+0, -0x1.a45407fc6ab05p-3},
        {0x1.38d22d3000000p+0, -0x1.9a8778b4faa38p-3},
        {0x1.3755bd2000000p+0, -0x1.90c6dbb64bcd9p-3},
        {0x1.35dce60000000p+0, -0x1.8712139d0e994p-3},
        {0x1.34679ad000000p+0, -0x1.7d6903d835ad0p-3},
        {0x1.32f5ced000000p+0, -0x1.73cb9048bd14dp-3},
        {0x1.3187759000000p+0, -0x1.6a399db4fd383p-3},
        {0x1.301c82b000000p+0, -0x1.60b3102449476p-3},
        {0x1.2eb4ea2000000p+0, -0x1.5737cc9098cddp-3},
        {0x1.2d50a01000000p+0, -0x1.4dc7b8847c1c8p-3},
        {0x1.2bef98e000000p+0, -0x1.4462b9b61b3dcp-3},
        {0x1.2a91c93000000p+0, -0x1.3b08b67abf2a9p-3},
        {0x1.293725c000000p+0, -0x1.31b994f2a4f85p-3},
        {0x1.27dfa39000000p+0, -0x1.28753be9daba5p-3},
        {0x1.268b37d000000p+0, -0x1.1f3b927165d41p-3},
        {0x1.2539d7f000000p+0, -0x1.160c8054f27b1p-3},
        {0x1.23eb797000000p+0, -0x1.0ce7ecd28c28dp-3},
        {0x1.22a0123000000p+0, -0x1.03cdc0cf5ec0dp-3},
        {0x1.2157980000000p+0, -0x1.f57bc799005dbp-4},
        {0x1.2012012000000p+0, -0x1.e3707ee20487bp-4},
        {0x1.1ecf43c000000p+0, -0x1.d179781019364p-4},
        {0x1.1d8f567000000p+0, -0x1.bf9687407ca11p-4},
        {0x1.1c522fc000000p+0, -0x1.adc77ecbaea8cp-4},
        {0x1.1b17c68000000p+0, -0x1.9c0c32e0d2548p-4},
        {0x1.19e011a000000p+0, -0x1.8a6477c61dc29p-4},
        {0x1.18ab084000000p+0, -0x1.78d022c9d82d3p-4},
        {0x1.1778a19000000p+0, -0x1.674f0879e5a7ap-4},
        {0x1.1648d51000000p+0, -0x1.55e1005460384p-4},
        {0x1.151b9a4000000p+0, -0x1.4485e03fbdfadp-4},
        {0x1.13f0e8d000000p+0, -0x1.333d7f5103f4bp-4},
        {0x1.12c8b8a000000p+0, -0x1.2207b5d88549ep-4},
        {0x1.11a301a000000p+0, -0x1.10e45b8fae831p-4},
        {0x1.107fbbe000000p+0, -0x1.ffa69118b9301p-5},
        {0x1.0f5edfb000000p+0, -0x1.dda8ae577ee4ep-5},
        {0x1.0e40656000000p+0, -0x1.bbcec0b48f420p-5},
        {0x1.0d24456000000p+0, -0x1.9a187af13de7cp-5},
        {0x1.0c0a787000000p+0, -0x1.78859682577bap-5},
        {0x1.0af2f72000000p+0, -0x1.5715c4663ceefp-5},
        {0x1.09ddba7000000p+0, -0x1.35c8c0451306bp-5},
        {0x1.08cabb3000000p+0, -0x1.149e3d5d05a8dp-5},
        {0x1.07b9f2a000000p+0, -0x1.e72bf3953ce51p-6},
        {0x1.06ab59c000000p+0, -0x1.a55f52b45c43fp-6},
        {0x1.059eea0000000p+0, -0x1.63d615c690bd6p-6},
        {0x1.04949cc000000p+0, -0x1.228fb1a6a2e28p-6},
        {0x1.038c6b8000000p+0, -0x1.c3173c2c75f05p-7},
        {0x1.02864fc000000p+0, -0x1.41929be6832efp-7},
        {0x1.0182436000000p+0, -0x1.81211c3586b53p-8},
        {0x1.0080402000000p+0, -0x1.0040153d5889ep-9},
        {0x1.fe01fe0000000p-1, 0x1.ff00ac2b10bc0p-9},
        {0x1.fa11caa000000p-1, 0x1.7dc4760010a77p-7},
        {0x1.f6310ad000000p-1, 0x1.3cea43726a575p-6},
        {0x1.f25f644000000p-1, 0x1.b9fc02c2f9198p-6},
        {0x1.ee9c7f8000000p-1, 0x1.1b0d98da3d980p-5},
        {0x1.eae807b000000p-1, 0x1.58a5bab38e4d5p-5},
        {0x1.e741aa6000000p-1, 0x1.95c8307e8e3ecp-5},
        {0x1.e3a917a000000p-1, 0x1.d276b887b0b52p-5},
        {0x1.e01e01e000000p-1, 0x1.0759835a8e471p-4},
        {0x1.dca01dd000000p-1, 0x1.253f62bd21417p-4},
        {0x1.d92f223000000p-1, 0x1.42edcbfae46f0p-4},
        {0x1.d5cac80000000p-1, 0x1.60658ad3750c4p-4},
        {0x1.d272ca4000000p-1, 0x1.7da766d5b12cdp-4},
        {0x1.cf26e5c000000p-1, 0x1.9ab42488033adp-4},
        {0x1.cbe6d96000000p-1, 0x1.b78c82bc0eda1p-4},
        {0x1.c8b265b000000p-1, 0x1.d4313d644b35dp-4},
        {0x1.c5894d1000000p-1, 0x1.f0a30c08962a6p-4},
        {0x1.c26b539000000p-1, 0x1.06715139e596ep-3},
        {0x1.bf583ef000000p-1, 0x1.14785823b42acp-3},
        {0x1.bc4fd66000000p-1, 0x1.2266f16e25accp-3},
        {0x1.b951e2b000000p-1, 0x1.303d719587fd3p-3},
        {0x1.b65e2e4000000p-1, 0x1.3dfc2afbcc62ap-3},
        {0x1.b37484b000000p-1, 0x1.4ba36f2de55e5p-3},
        {0x1.b094b32000000p-1, 0x1.59338d8e02086p-3},
        {0x1.adbe880000000p-1, 0x1.66acd4072ad51p-3},
        {0x1.aaf1d30000000p-1, 0x1.740f8f30037a5p-3},
        {0x1.a82e651000000p-1, 0x1.815c0a22f57ebp-3},
        {0x1.a574107000000p-1, 0x1.8e928e0846d41p-3},
        {0x1.a2c2a88000000p-1, 0x1.9bb362d5dfb83p-3},
        {0x1.a01a01a000000p-1, 0x1.a8becfc902f19p-3},
        {0x1.9d79f17000000p-1, 0x1.b5b51a0a3b5a4p-3},
        {0x1.9ae24ea000000p-1, 0x1.c2968573418c1p-3},
        {0x1.9852f0e000000p-1, 0x1.cf6354bd1c5dcp-3},
        {0x1.95cbb0c000000p-1, 0x1.dc1bca01bec7dp-3},
        {0x1.934c680000000p-1, 0x1.e8c0250aa5a60p-3},
        {0x1.90d4f12000000p-1, 0x1.f550a56537b37p-3},
        {0x1.8e6527b000000p-1, 0x1.00e6c4587501dp-2},
        {0x1.8bfce80000000p-1, 0x1.071b860cd590dp-2},
        {0x1.899c0f6000000p-1, 0x1.0d46b579eb74bp-2},
        {0x1.87427bd000000p-1, 0x1.1368701eda8b0p-2},
        {0x1.84f00c2000000p-1, 0x1.1980d2f10236fp-2},
        {0x1.82a4a02000000p-1, 0x1.1f8ff9cfca2f3p-2},
        {0x1.8060180000000p-1, 0x1.2596011df763ap-2},
        {0x1.7e22551000000p-1, 0x1.2b9303baa9d25p-2},
        {0x1.7beb392000000p-1, 0x1.31871c9d04185p-2},
        {0x1.79baa6c000000p-1, 0x1.3772661f7d85bp-2},
        {0x1.7790812000000p-1, 0x1.3d54fa4adf710p-2},
        {0x1.756cac2000000p-1, 0x1.432ef2a08e814p-2}
    };
    return &T[0][0];
}


/* One f64x2 half of avs_logf_split4: table rows i0, i1, the floats' z and k of those two lanes. */
static inline avs_f64x2 avs_logf_half(int i0, int i1, avs_f32x2 z, avs_i32x2 kk, avs_f64x2 *k, avs_f64x2 *logc) {
    const double *T = avs_logf_table();
    avs_f64x2 t0, t1;
    memcpy(&t0, T + 2 * i0, sizeof t0);
    memcpy(&t1, T + 2 * i1, sizeof t1);
    avs_f64x2 invc = __builtin_shufflevector(t0, t1, 0, 2);
    *logc = __builtin_shufflevector(t0, t1, 1, 3);
    *k = __builtin_convertvector(kk, avs_f64x2);
    avs_f64x2 r = __builtin_convertvector(z, avs_f64x2) * invc - 1.0, r2 = r * r;
    return r + r2 * (-0.5 + r * (1.0 / 3 + r * (-0.25 + r * (0.2 + r * (-1.0 / 6)))));
}

/* ln x for four floats x[0..4) (finite; float subnormals welcome) as k·ln 2 + logc + log1p(r), the three
 * parts apart and no division: musl's log.c reduction with a 128-entry table. x = 2^k·z, z ∈ [0.6875,
 * 1.375) (the offset 0x3f300000 = 0.6875f, as musl's 0x3fe6…), the top 7 mantissa bits of the offset bits
 * pick c_i, the middle of z's bucket, and the table holds invc_i ≈ 1/c_i rounded to 29 significant bits and
 * logc_i = −ln(invc_i) (to double, from 50-digit arithmetic). z has at most 24 significant bits (a float's),
 * so z·invc_i is exact in double and so is r = z·invc_i − 1 (Sterbenz), |r| < 0.00390; log1p(r) is its
 * Taylor series to r⁶ (the rest, |r|⁷/7, is below 3e-18). Outputs: *k0, *k1 = k, *c0, *c1 = logc_i
 * (|·| < 0.38, within 3e-17 of exact), return values *p0, *p1 = log1p(r) (|·| < 0.0039); lanes 0, 1 in the
 * …0 outputs, 2, 3 in the …1. Two entries in the same bucket and binade share k and logc_i exactly, so
 * ln x − ln y = (k_x − k_y)·ln 2 + (logc_x − logc_y) + (log1p r_x − log1p r_y) keeps its digits when x ≈ y
 * (the readouts' KL), where a rounded ln x, or ln(x/y) after a rounded division, loses up to an ulp of
 * ln x. Entries ≤ 0 are taken as 1 (parts within 1e-17 of 0); float subnormals are scaled by 2^23 first
 * (exact) and k lowered by 23. Check test (check_attention.c): k·ln 2 + logc + p within 1 ulp of |ln x| +
 * 1e-17 of logl over all binades. The integer steps run in i32x4 on the float bits, the float64 steps in
 * two f64x2; written without arrays or variable lane indices, which clang would keep in WASM's memory
 * stack. */
static inline void avs_logf_split4(const float *x, avs_f64x2 *k0, avs_f64x2 *c0, avs_f64x2 *p0, avs_f64x2 *k1,
                                   avs_f64x2 *c1, avs_f64x2 *p1) {
    typedef float f32x4 __attribute__((vector_size(16)));
    f32x4 v;
    memcpy(&v, x, sizeof v);
    avs_i32x4 u = (avs_i32x4)v;
    avs_i32x4 pos = u > 0; // +0, negative and −0 (sign bit set: negative as int32) → 1.0f
    u = (pos & u) | (~pos & 0x3f800000);
    avs_i32x4 sub = u < 0x00800000; // subnormal floats
    avs_i32x4 us = (avs_i32x4)((f32x4)u * 8388608.0f);
    u = (sub & us) | (~sub & u);
    avs_i32x4 tmp = u - 0x3f300000, ix = (tmp >> 16) & 127;
    avs_i32x4 kk = (tmp >> 23) + (sub & -23);
    f32x4 z = (f32x4)(u - (tmp & (avs_i32x4){-8388608, -8388608, -8388608, -8388608})); // tmp & 0xff800000
    *p0 = avs_logf_half(ix[0], ix[1], __builtin_shufflevector(z, z, 0, 1), __builtin_shufflevector(kk, kk, 0, 1), k0, c0);
    *p1 = avs_logf_half(ix[2], ix[3], __builtin_shufflevector(z, z, 2, 3), __builtin_shufflevector(kk, kk, 2, 3), k1, c1);
}

/* e^x in two float64 lanes, branch-free: fdlibm's e_exp.c (Sun Microsystems, 1993), error < 1 ulp.
 * x = k·ln 2 + r with |r| ≤ ln 2/2 (k rounded by the 1.5·2^52 trick, ln 2 in two parts so that r is
 * exact), e^r = 1 − ((lo − r·c/(2 − c)) − hi) with c = r − r²·P(r²), then 2^k added to the exponent
 * field (k's low 12 bits, from the same trick, shifted into place: the 64-bit add wraps for k < 0).
 * x is clamped to [−708, 709] first, where the result and the scaling stay normal: e^x below e^−708
 * (~3e−308) comes out as e^−708. Lane-wise arithmetic only, so the bits are the same in WASM and
 * natively (SSE2), under every libm. Used for u^p = e^{p·ln u} (the focused map at a fractional p). */
static inline avs_f64x2 avs_exp_f64x2(avs_f64x2 x) {
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10,
                 INV_LN2 = 1.44269504088896338700e+00, SHIFT = 6755399441055744.0; // 1.5·2^52
    const double P1 = 1.66666666666666019037e-01, P2 = -2.77777777770155933842e-03,
                 P3 = 6.61375632143793436117e-05, P4 = -1.65339022054652515390e-06,
                 P5 = 4.13813679705723846039e-08;
    const avs_f64x2 lo_x = {-708.0, -708.0}, hi_x = {709.0, 709.0};
    avs_i64x2 below = (avs_i64x2)(x < lo_x), above = (avs_i64x2)(x > hi_x); // lanes of all ones where true
    x = (avs_f64x2)(((avs_i64x2)x & ~below) | ((avs_i64x2)lo_x & below));
    x = (avs_f64x2)(((avs_i64x2)x & ~above) | ((avs_i64x2)hi_x & above));
    avs_f64x2 kd = x * INV_LN2 + SHIFT, dk = kd - SHIFT;
    avs_f64x2 hi = x - dk * LN2_HI, lo = dk * LN2_LO, r = hi - lo, t = r * r;
    avs_f64x2 c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
    avs_f64x2 y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    return (avs_f64x2)((avs_u64x2)y + ((avs_u64x2)kd << 52));
}

/* The former avs_log2x (a 64-bit arithmetic shift for k): kept as the plain twin the tests compare with. */
static inline avs_f64x2 avs_log2x_ref(avs_f64x2 x) {
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    const double LG1 = 6.666666666666735130e-01, LG2 = 3.999999999940941908e-01,
                 LG3 = 2.857142874366239149e-01, LG4 = 2.222219843214978396e-01,
                 LG5 = 1.818357216161805012e-01, LG6 = 1.531383769920937332e-01,
                 LG7 = 1.479819860511658591e-01;
    avs_u64x2 u = (avs_u64x2)x; // unsigned lanes: the subtractions wrap, as in avs_log
    avs_u64x2 tmp = u - 0x3fe6a09e667f3bcdULL;
    avs_u64x2 iz = u - (tmp & 0xfff0000000000000ULL);
    avs_u64x2 kb = (avs_u64x2)((avs_i64x2)tmp >> 52) + 0x4338000000000000ULL;
    avs_f64x2 z = (avs_f64x2)iz, dk = (avs_f64x2)kb - 6755399441055744.0;
    avs_f64x2 f = z - 1.0, s = f / (2.0 + f), s2 = s * s, w = s2 * s2;
    avs_f64x2 r = s2 * (LG1 + w * (LG3 + w * (LG5 + w * LG7))) + w * (LG2 + w * (LG4 + w * LG6));
    avs_f64x2 hfsq = 0.5 * f * f;
    return dk * LN2_HI - ((hfsq - (s * (hfsq + r) + dk * LN2_LO)) - f);
}


// ----------------------------------------------------------------------------------------------------
// float64 vectors of the generic vector extension (f64x2 in WASM, AVX's 4 lanes natively where present):
// the spectrum's dot products and updates. Lane-wise arithmetic; the lane count changes the summation
// order natively, not in WASM.

#if defined(__AVX__) && !defined(__wasm__)
#define AVS_VW 4
#else
#define AVS_VW 2
#endif
typedef double avs_vd __attribute__((vector_size(AVS_VW * sizeof(double))));

static inline avs_vd avs_vload(const double *p) { avs_vd v; memcpy(&v, p, sizeof v); return v; }
static inline void avs_vstore(double *p, avs_vd v) { memcpy(p, &v, sizeof v); }
static inline avs_vd avs_vsplat(double x) {
    avs_vd v;
    for (int i = 0; i < AVS_VW; i++) v[i] = x;
    return v;
}
static inline double avs_vsum(avs_vd v) {
    double s = 0.0;
    for (int i = 0; i < AVS_VW; i++) s += v[i];
    return s;
}

// Σ a[k]·b[k], k < n.
static inline double avs_dot_f64(const double *restrict a, const double *restrict b, int n) {
    avs_vd s0 = avs_vsplat(0.0), s1 = avs_vsplat(0.0);
    int k = 0;
    for (; k + 2 * AVS_VW <= n; k += 2 * AVS_VW) {
        s0 += avs_vload(a + k) * avs_vload(b + k);
        s1 += avs_vload(a + k + AVS_VW) * avs_vload(b + k + AVS_VW);
    }
    for (; k + AVS_VW <= n; k += AVS_VW) s0 += avs_vload(a + k) * avs_vload(b + k);
    double s = avs_vsum(s0 + s1);
    for (; k < n; k++) s += a[k] * b[k];
    return s;
}

// y[k] −= alpha·x[k], k < n.
static inline void avs_axpy_neg_f64(double *restrict y, double alpha, const double *restrict x, int n) {
    avs_vd va = avs_vsplat(alpha);
    int k = 0;
    for (; k + AVS_VW <= n; k += AVS_VW) avs_vstore(y + k, avs_vload(y + k) - va * avs_vload(x + k));
    for (; k < n; k++) y[k] -= alpha * x[k];
}

#endif /* ATTNVIZ_SIMD_H */
