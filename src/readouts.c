/* readouts.c: the readouts of an attention matrix, with the exact definitions of docs/readouts.md.
 *
 * Spectral readouts come from singular values the caller computed (spectrum.c), with the route's noise
 * floor: a rank never counts σ at or below it. Entry readouts (sparsity, keys for 90%, row entropy) read
 * M's allowed entries (all, or j ≤ i when causal). Error readouts compare M with the softmax reference A
 * on the same Q, K and mask. All sums are in float64. An undefined readout is NaN with a reason code.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "gated.h"
#include "internal.h"
#include "simd.h"

// ----------------------------------------------------------------------------------------------------
// the readouts as data (av_readout_info, docs/adding-a-readout.md): each one's JSON key, label, kind,
// format, its places in the page's table and sweep picker, and the page's plain-words explanation

/* One row per enum av_readout, in its order (the JSON's order). display: the page table's order; sweep:
 * the page sweep picker's order (its first is the default); label and explain: the page's words (UTF-8). */
#define R(key_, label_, kind_, format_, display_, sweep_, explain_)                                          \
    {.key = key_, .label = label_, .kind = AV_RK_##kind_, .format = AV_RF_##format_, .display = display_,  \
     .sweep = sweep_, .explain = explain_}
static const av_readout_desc READOUTS[AV_R_COUNT] = {
    [AV_R_SIGMA1] = R("sigma1", "largest singular value", SPECTRAL, REAL, 0, 0,
        "The largest singular value of M: its operator norm, how much M can stretch a vector."),
    [AV_R_RANK] = R("rank", "numerical rank", SPECTRAL, INTEGER, 1, 8,
        "How many singular values are above the float32 noise of an n×n matrix (σ₁·n·ε₃₂). Linear "
        "attention cannot exceed its feature dimension; softmax usually is close to full rank."),
    [AV_R_RANK_TOL] = R("rank_tol", "tolerance of the numerical rank", SPECTRAL, REAL, 0, 0,
        "The tolerance the numerical rank counts above: σ₁·n·ε₃₂, the size float32 rounding alone "
        "gives an n×n matrix's singular values."),
    [AV_R_RANK_REL_1E3] = R("rank_rel_1e-3", "rank above 10⁻³·σ₁", SPECTRAL, INTEGER, 3, 9,
        "How many singular values exceed 10⁻³·σ₁: a coarser rank that ignores tiny directions."),
    [AV_R_RANK_REL_1E2] = R("rank_rel_1e-2", "rank above 10⁻²·σ₁", SPECTRAL, INTEGER, 0, 0,
        "How many singular values exceed 10⁻²·σ₁: a coarser rank that ignores tiny directions."),
    [AV_R_RANK_ENERGY_99] = R("rank_energy_99", "rank for 99% energy", SPECTRAL, INTEGER, 6, 10,
        "The fewest singular values whose squares hold 99 % of ‖M‖²_F: the rank a truncated SVD needs "
        "for 1 % error."),
    [AV_R_EFFECTIVE_RANK] = R("effective_rank", "effective rank", SPECTRAL, REAL, 4, 11,
        "The exponential of the entropy of the normalised singular values: how many directions carry "
        "the matrix, counted smoothly (Roy & Vetterli 2007). Undefined for the zero matrix."),
    [AV_R_STABLE_RANK] = R("stable_rank", "stable rank", SPECTRAL, REAL, 5, 12,
        "‖M‖²_F / σ₁²: the energy relative to the largest direction; at most the rank, and robust to "
        "tiny singular values. Undefined for the zero matrix."),
    [AV_R_SPARSITY_LT_001] = R("sparsity_lt_0.01", "weights below 0.01", ENTRY, FRACTION, 8, 0,
        "The share of all n² entries below the fixed threshold 0.01 (masked entries count, as zeros). Being "
        "fixed, it depends on n: a flat row's weights are about 1/n, so on a flat n×n map with n > 100 every "
        "weight is below 0.01 and this reads 100 % (the first lesson's elu+1 map at n = 256), and 0 % at "
        "n = 64; \"weights below τ/n\" scales with n instead. The seed article \"Linear Attention\" says "
        "the share of near-zero entries in attention matrices is at most about 60 %, but names no "
        "threshold: 0.01 is this lab's."),
    [AV_R_SPARSITY_TAU] = R("sparsity_tau", "weights below τ/n", ENTRY, FRACTION, 7, 6,
        "The share of allowed weights below τ/n (τ the slider): a uniform row has none; a sharp row "
        "has most of them near zero."),
    [AV_R_KEYS_FOR_90] = R("keys_for_90", "keys for 90% of a row", ENTRY, REAL, 9, 5,
        "The mean, over rows, of the fewest keys whose weights reach 90 % of the row's sum: a few for "
        "sharp attention, most of n for flat. Undefined when a row has a negative weight or sums to "
        "zero."),
    [AV_R_ROW_ENTROPY_MEAN] = R("row_entropy_mean", "row entropy", ENTRY, REAL, 10, 4,
        "The mean entropy of the rows, each normalised to sum 1: low means focused, ln n is a uniform "
        "row. Undefined when a row has a negative weight or sums to zero."),
    [AV_R_ROW_ENTROPY_UNIFORM] = R("row_entropy_uniform", "row entropy of uniform rows", ENTRY, REAL, 11, 0,
        "The mean entropy of uniform rows, the baseline row entropy is read against: ln n, or "
        "ln(n!)/n under the causal mask, where row i sees only i + 1 keys."),
    [AV_R_ERROR_FRO_REL] = R("error_fro_rel", "error vs softmax", COMPARISON, REAL, 13, 1,
        "The Frobenius distance to softmax on the same Q, K, scale and mask, relative to softmax's "
        "norm: 0 is exact."),
    [AV_R_ROW_KL_MEAN] = R("row_kl_mean", "KL(softmax ‖ variant)", COMPARISON, REAL, 14, 3,
        "The mean over rows of the Kullback–Leibler divergence from softmax's row to the variant's. "
        "Undefined where the variant has a negative weight or a zero where softmax is positive."),
    [AV_R_OUTPUT_ERROR_REL] = R("output_error_rel", "output error", COMPARISON, REAL, 15, 2,
        "The relative distance between the outputs MV and AV on the same V: what the next layer would "
        "see."),
    [AV_R_NOISE_FLOOR] = R("noise_floor", "noise floor of the spectrum", SPECTRAL, REAL, 0, 0,
        "The floor of the route that computed the spectrum: singular values at or below it are "
        "rounding, and no rank counts them."),
    [AV_R_ROW_SUM_DEV_MAX] = R("row_sum_dev_max", "largest |row sum − 1|", ENTRY, REAL, 12, 7,
        "The largest distance of a row's sum from 1: rounding for variants whose rows are "
        "distributions, large where E/F projections or a convolution change the sums."),
    [AV_R_SEMISEPARABLE_RANK] = R("semiseparable_rank", "semiseparable rank", SPECTRAL, INTEGER, 2, 0,
        "The rank of the lower-left block M[h:n, 0:h], h = ⌊n/2⌋, at the rank tolerance: how much the "
        "first half of the sequence must pass to the second, so the smallest state a recurrence "
        "producing M needs. At most the feature dimension for linear attention (decayed or not), d "
        "for retention and the delta rule (d − 1 at η = 1), W − 1 for a sliding window of W; full for "
        "softmax. The ceiling in brackets is that structural bound (Dao & Gu 2024, \"Transformers are "
        "SSMs\": semiseparable matrices)."),
};
#undef R

const av_readout_desc *av_readout_info(int readout) {
    return readout >= 0 && readout < AV_R_COUNT ? &READOUTS[readout] : NULL;
}

const char *av_readout_name(int readout) {
    return readout >= 0 && readout < AV_R_COUNT ? READOUTS[readout].key : NULL;
}


const char *av_reason_string(int reason) {
    switch (reason) {
    case AV_REASON_NONE: return "defined";
    case AV_REASON_NEGATIVE: return "the matrix has negative entries, so its rows are not distributions";
    case AV_REASON_ZERO_WHERE_POSITIVE: return "the matrix is zero where the softmax reference is positive";
    case AV_REASON_NO_V: return "no V was given";
    case AV_REASON_NO_REFERENCE: return "no softmax reference (the variant is plain softmax itself: no decay, no window; or none was given)";
    case AV_REASON_ZERO_ROW: return "a row sums to zero, so it cannot be normalised";
    case AV_REASON_NO_SPECTRUM: return "no singular values were given";
    case AV_REASON_NONFINITE: return "an input (the singular values or V) holds NaN or Inf";
    case AV_REASON_ZERO_MATRIX: return "the matrix is zero (all singular values are 0)";
    case AV_REASON_MATRIX_NONFINITE: return "the matrix holds Inf or NaN (its computation overflowed)";
    case AV_REASON_REFERENCE_NONFINITE: return "the softmax reference holds Inf or NaN (its computation overflowed)";
    case AV_REASON_OVERFLOW: return "the readout's sums overflowed (the float32 products of M, A and V)";
    case AV_REASON_NO_BLOCK: return "the block's singular values were not computed (av_semiseparable_rank computes them)";
    default: return "unknown reason";
    }
}

// ----------------------------------------------------------------------------------------------------
// helpers

static int allowed(int i, int n, int causal) { return causal ? i + 1 : n; }

static void set_undefined(double *vals, int *reasons, int r, int reason) {
    vals[r] = NAN;
    reasons[r] = reason;
}

static int all_finite_d(const double *x, int n) {
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* Σ_j p_j·ln p_j over the positive entries of row[0..m), p_j = row[j]·inv, in two lanes (even and odd j)
 * added at the end. Zeros contribute 0 (they are replaced by p = 1, ln 1 = 0 exactly). */
static double sum_p_log_p(const float *row, int m, double inv) {
    avs_f64x2 acc = {0.0, 0.0};
    const avs_f64x2 one = {1.0, 1.0};
    int j = 0;
    for (; j + 2 <= m; j += 2) {
        avs_f64x2 x = avs_load_f32x2(row + j);
        avs_i64x2 pos = x > 0.0;
        avs_f64x2 p = (avs_f64x2)((pos & (avs_i64x2)(x * inv)) | (~pos & (avs_i64x2)one));
        acc += p * avs_log2x(p);
    }
    double t = acc[0] + acc[1];
    for (; j < m; j++)
        if (row[j] > 0.0f) {
            double p = row[j] * inv;
            t += p * avs_log(p);
        }
    return t;
}

/* One radix pass's choice, from the top bucket down: the buckets wholly above the one where the running sum
 * of sum[] reaches *target are taken (their counts added to *count, their sum taken off *target); returns
 * that bucket, or −1 when no bucket reaches the target (rounding left it a hair above the total). */
static int crossing_bucket(const int cnt[256], const double sum[256], double *target, int *count) {
    double above = 0.0;
    int b = 255;
    for (; b >= 0; b--) {
        if (cnt[b] && above + sum[b] >= *target) break;
        above += sum[b];
        *count += cnt[b];
    }
    if (b >= 0) *target -= above;
    return b;
}

/* The fewest of x[0..len) whose sum, largest first, reaches target: x sorted in place (descending, by
 * insertion: len is small) and summed from the top. len when the sum falls short (rounding). */
static int fewest_sorted(float *x, int len, double target) {
    for (int k = 1; k < len; k++) {
        float v = x[k];
        int j = k;
        for (; j > 0 && x[j - 1] < v; j--) x[j] = x[j - 1];
        x[j] = v;
    }
    double s = 0.0;
    for (int k = 0; k < len; k++) {
        s += x[k];
        if (s >= target) return k + 1;
    }
    return len;
}

/* Below this many entries a radix pass (clearing and scanning 256 buckets) costs more than sorting them. */
enum { FEW_SORT = 64 };

static inline uint32_t float_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

/* The fewest entries of row[0..m) (non-negative floats) whose sum reaches `target` (> 0): a radix
 * selection on the float bits, which order non-negative floats as unsigned integers. radix_levels runs
 * passes of a 256-bucket histogram (count and float64 sum per bucket) on the 8-bit digits at SHIFT[0..levels):
 * each pass takes every bucket above the one where the running sum crosses the target and keeps only that
 * bucket's entries (copied to buf, m floats) for the next; after the last pass they are equal and are
 * taken one at a time. No sort, no comparisons per entry. */
static int radix_levels(const float *row, int m, double target, float *buf, const int *SHIFT, int levels) {
    const float *x = row;
    int len = m, count = 0;
    for (int level = 0; level < levels; level++) {
        if (len <= FEW_SORT) { // a few entries left: sort them (in buf)
            if (x != buf) memmove(buf, x, sizeof(float) * (size_t)len);
            return count + fewest_sorted(buf, len, target);
        }
        int cnt[256];
        double sum[256];
        const int sh = SHIFT[level];
        if (len >= 256) {
            /* four histograms, entry j into copy j mod 4, added at the end: the entries of a row share a few
             * exponents, so with one histogram every sum[b] += x waited on the previous one through memory
             * (a store-to-load chain per entry) */
            int c4[4][256];
            double s4[4][256];
            memset(c4, 0, sizeof c4);
            memset(s4, 0, sizeof s4);
            int j = 0;
            for (; j + 4 <= len; j += 4)
                for (int l = 0; l < 4; l++) {
                    int b = (int)((float_bits(x[j + l]) >> sh) & 0xffu);
                    c4[l][b]++;
                    s4[l][b] += x[j + l];
                }
            for (; j < len; j++) {
                int b = (int)((float_bits(x[j]) >> sh) & 0xffu);
                c4[0][b]++;
                s4[0][b] += x[j];
            }
            for (int b = 0; b < 256; b++) {
                cnt[b] = (c4[0][b] + c4[1][b]) + (c4[2][b] + c4[3][b]);
                sum[b] = (s4[0][b] + s4[1][b]) + (s4[2][b] + s4[3][b]);
            }
        } else {
            memset(cnt, 0, sizeof cnt);
            memset(sum, 0, sizeof sum);
            for (int j = 0; j < len; j++) {
                int b = (int)((float_bits(x[j]) >> sh) & 0xffu);
                cnt[b]++;
                sum[b] += x[j];
            }
        }
        int b = crossing_bucket(cnt, sum, &target, &count);
        if (b < 0) return count; // rounding left the target a hair above the sum: every entry
        if (cnt[b] == 1) return count + 1;
        if (level == levels - 1) { // equal entries: one at a time
            float v = 0.0f;
            for (int j = 0; j < len; j++)
                if ((int)(float_bits(x[j]) & 0xffu) == b) { v = x[j]; break; }
            double s = 0.0;
            for (int k = 1; k <= cnt[b]; k++) {
                s += v;
                if (s >= target) return count + k;
            }
            return count + cnt[b];
        }
        int k = 0; // keep bucket b's entries (in place when x == buf: k ≤ j)
        for (int j = 0; j < len; j++) {
            float v = x[j];
            buf[k] = v;
            k += (int)((float_bits(v) >> sh) & 0xffu) == b;
        }
        x = buf;
        len = k;
    }
    return count;
}

/* fewest_reaching's first pass reads 12 bits at once, narrowed to where the entries are: the bucket is the
 * exponent's distance d below the row's largest (d ≤ 14) with the top 4 mantissa bits, so that one pass
 * leaves about 1/16 of a binade (it left the whole top binade, half a row of random weights, for a second
 * pass: 4 of av_readouts' 21 ms at n = 1024 in WASM); the entries 15 or more binades below the largest
 * share bucket 0, which, when the target is crossed there (rare: they hold under 2^-15 of the sum each),
 * goes through the plain four passes. Then bits 18..11, 10..3 and 7..0. */
/* fr_keys: the first pass's bucket of row[0..len), as int32 bits, into key[] (a float buffer: written and
 * read by memcpy, so that the in-place compaction over it keeps its order under strict aliasing), four at a
 * time in i32x4 on the float bits (emax: the row's largest exponent field). */
static inline int fr_key(const float *key, int j) {
    int32_t k;
    memcpy(&k, key + j, sizeof k);
    return k;
}

static inline void fr_keys(float *key, const float *row, int len, int emax) {
    int j = 0;
    const avs_i32x4 em = {emax, emax, emax, emax};
    for (; j + 4 <= len; j += 4) {
        avs_i32x4 u;
        memcpy(&u, row + j, sizeof u);
        avs_i32x4 e = u >> 23, d = em - e; // non-negative floats: the arithmetic shift is the logical one
        avs_i32x4 k = ((15 - d) << 4) | ((u >> 19) & 15);
        k &= d <= 14; // 15 or more binades below the largest: bucket 0
        memcpy(key + j, &k, sizeof k);
    }
    for (; j < len; j++) {
        int32_t u = (int32_t)float_bits(row[j]), d = emax - (u >> 23);
        int32_t k = d <= 14 ? ((15 - d) << 4) | ((u >> 19) & 15) : 0;
        memcpy(key + j, &k, sizeof k);
    }
}

static int fewest_reaching(const float *row, int m, double target, float *buf) {
    static const int SHIFT_LO[3] = {11, 3, 0}, SHIFT_ALL[4] = {23, 15, 7, 0};
    int emax = (int)(float_bits(avs_max(row, m)) >> 23);
    int cnt[256], c2[2][256];
    double sum[256], s2[2][256];
    fr_keys(buf, row, m, emax); // the keys first, then (in place, k ≤ j) the kept entries
    int j = 0;
    if (m >= 512) { // (measured: at n = 256 one copy is faster, 0.26 → 0.18 ms; at 1024 two, 5–10% ahead of four)
        memset(c2, 0, sizeof c2);
        memset(s2, 0, sizeof s2);
        for (; j + 2 <= m; j += 2) // two histograms (entry j into copy j mod 2): no store-to-load chain per entry
            for (int l = 0; l < 2; l++) {
                int b = fr_key(buf, j + l);
                c2[l][b]++;
                s2[l][b] += row[j + l];
            }
        for (; j < m; j++) {
            int b = fr_key(buf, j);
            c2[0][b]++;
            s2[0][b] += row[j];
        }
        for (int b = 0; b < 256; b++) {
            cnt[b] = c2[0][b] + c2[1][b];
            sum[b] = s2[0][b] + s2[1][b];
        }
    } else { // short rows: clearing and adding four copies would cost more than the chain
        memset(cnt, 0, sizeof cnt);
        memset(sum, 0, sizeof sum);
        for (; j < m; j++) {
            int b = fr_key(buf, j);
            cnt[b]++;
            sum[b] += row[j];
        }
    }
    int count = 0, b = crossing_bucket(cnt, sum, &target, &count);
    if (b < 0) return count; // rounding left the target a hair above the sum: every entry
    if (cnt[b] == 1) return count + 1;
    int k = 0; // keep bucket b's entries: key j is read before entry k ≤ j is written over it
    for (j = 0; j < m; j++) {
        int in = fr_key(buf, j) == b;
        buf[k] = row[j];
        k += in;
    }
    return count + (b == 0 ? radix_levels(buf, k, target, buf, SHIFT_ALL, 4) : radix_levels(buf, k, target, buf, SHIFT_LO, 3));
}

// ----------------------------------------------------------------------------------------------------
// spectral readouts

static void spectral(double *vals, int *reasons, const double *sv, double noise_floor, int n) {
    static const int SPEC[] = {AV_R_SIGMA1, AV_R_RANK, AV_R_RANK_TOL, AV_R_RANK_REL_1E3, AV_R_RANK_REL_1E2,
                               AV_R_RANK_ENERGY_99, AV_R_EFFECTIVE_RANK, AV_R_STABLE_RANK, AV_R_NOISE_FLOOR};
    int why = !sv ? AV_REASON_NO_SPECTRUM
                  : (!all_finite_d(sv, n) || !isfinite(noise_floor)) ? AV_REASON_NONFINITE : AV_REASON_NONE;
    if (why) {
        for (size_t k = 0; k < sizeof SPEC / sizeof SPEC[0]; k++) set_undefined(vals, reasons, SPEC[k], why);
        return;
    }
    double s1 = sv[0], floor_ = noise_floor > 0 ? noise_floor : 0.0, tol = s1 * n * (double)FLT_EPSILON;
    double t_tol = fmax(tol, floor_), t3 = fmax(1e-3 * s1, floor_), t2 = fmax(1e-2 * s1, floor_);
    double sum = 0.0, sum2 = 0.0;
    int rank = 0, r3 = 0, r2 = 0;
    for (int i = 0; i < n; i++) {
        rank += sv[i] > t_tol;
        r3 += sv[i] > t3;
        r2 += sv[i] > t2;
        sum += sv[i];
        sum2 += sv[i] * sv[i];
    }
    vals[AV_R_SIGMA1] = s1;
    vals[AV_R_RANK] = rank;
    vals[AV_R_RANK_TOL] = tol;
    vals[AV_R_RANK_REL_1E3] = r3;
    vals[AV_R_RANK_REL_1E2] = r2;
    vals[AV_R_NOISE_FLOOR] = floor_;
    int energy = 0;
    for (double cum = 0.0; energy < n && cum < 0.99 * sum2; energy++) cum += sv[energy] * sv[energy];
    vals[AV_R_RANK_ENERGY_99] = energy;
    if (s1 <= 0.0) {
        set_undefined(vals, reasons, AV_R_EFFECTIVE_RANK, AV_REASON_ZERO_MATRIX);
        set_undefined(vals, reasons, AV_R_STABLE_RANK, AV_REASON_ZERO_MATRIX);
        return;
    }
    double h = 0.0;
    for (int i = 0; i < n; i++) {
        double p = sv[i] / sum;
        if (p > 0.0) h -= p * log(p);
    }
    vals[AV_R_EFFECTIVE_RANK] = exp(h);
    vals[AV_R_STABLE_RANK] = sum2 / (s1 * s1);
}

// ----------------------------------------------------------------------------------------------------
// entry readouts

/* Entropy of row i's allowed entries normalised to sum 1 (natural log), with the row's sum in *sum;
 * NaN with *why set when the row has a negative entry or sums to zero. Exact zeros are skipped (0·ln 0 = 0). */
static double row_entropy(const float *row, int m, int *why, double *sum_out) {
    double sum = 0.0;
    int negative = 0;
    for (int j = 0; j < m; j++) {
        negative |= row[j] < 0.0f;
        sum += row[j];
    }
    *sum_out = sum;
    if (negative) { *why = AV_REASON_NEGATIVE; return NAN; }
    if (!(sum > 0.0)) { *why = AV_REASON_ZERO_ROW; return NAN; }
    *why = AV_REASON_NONE;
    return -sum_p_log_p(row, m, 1.0 / sum);
}

/* --- the fused row pass (what av_readouts runs; entries_ref and errors_ref are the plain twins the tests
 * compare it with) ---
 *
 * Two passes over row i's allowed entries of M (and of A) give everything the entry and error readouts
 * need from them. row_counts: the two threshold counts (f32x4 compares against float thresholds
 * equivalent to the double comparisons), the float64 row sum (in avs_sum_f64's order, so row_sum_dev_max
 * keeps its bits), the negative check and the Frobenius sums. row_pass's logarithm loop: one logarithm of
 * each entry of M and of A (avs_logf_split4: a table, no division), shared by the entropy and the KL:
 *   Σ_j p_j ln p_j = (1/s)·Σ_j m_j ln m_j − ln s   (p = m/s, s the row sum),
 *   KL_row = Σ_{a_j>0} a_j·(ln a_j − ln m_j)       (when defined: a_j > 0 ⇒ m_j > 0),
 * so the division a/m of the direct KL and the multiply by 1/s are gone. The KL is split further as
 * Σ a ln a − Σ a ln m: the first sum depends on the reference alone and comes from its summary
 * (av_reference_summary, computed once per reference), so a row costs no logarithm of A. Where the two
 * sums cancel to less than 2⁻¹⁰ of their size (M near A on that row) the row's KL is summed again as
 * Σ a·(ln a − ln m), with ln a − ln m formed from the logarithms' parts, (k_a − k_m)·ln 2 +
 * (logc_a − logc_m) + (log1p r_a − log1p r_m): near-equal a and m (same bucket) cancel exactly in the first
 * two, so the KL of M ≈ A keeps its digits (row_kl_of). Each sum's rounding is below (m/2 + 1)·2⁻⁵³ of the
 * sum of its terms' sizes, which is the sum's own size where cancellation matters: A's entries are at most
 * 1, so where M is near A every term a ln m is ≤ about 0. A row kept in the split form thus has its KL to
 * n·2⁻⁴³ relative at worst (1e-10 at n = 1024; the rounding errors' random walk makes it far less), and
 * M = A gives 0 exactly either way (the same code sums both shares). The entropy's form cancels when ln s and (1/s)·Σ m ln m are large
 * against H (a nearly one-hot row far from sum 1): row_entropy_of sums such rows by entropy_peaked. In
 * WASM at n = 1024 (docs/performance.md) the two passes take 6.4 ms where entries' loops without
 * fewest_reaching, row_kl and the Frobenius loop they replace took 11.2. */
typedef float rd_f32x4 __attribute__((vector_size(16)));

/* The smallest float ≥ t: for every float x, (double)x < t exactly when x < float_at_least(t) (a float
 * below it is below t by minimality, one at or above it is ≥ t). */
static float float_at_least(double t) {
    float f = (float)t;
    if ((double)f < t) f = nextafterf(f, INFINITY);
    return f;
}

typedef struct row_stats {
    double sum, h, am, d2; // Σ m; Σ m ln m; Σ_{a>0} a ln m and Σ (m − a)² (with a)
    int lt001, lt_tau, negative, zero;
} row_stats;

/* The row's first pass, no logarithms: the counts, the negative check and the row sum in avs_sum_f64's
 * order (its bits), and with a the Frobenius sum Σ (m − a)². Two passes over a row that sits in L1 cost less than one
 * whose many accumulators and the logarithm's constants outnumber the 16 vector registers (V8 spilled them:
 * the single pass was 10.5 ms at n = 1024 against 3.8 + 4.5 for the two). */
static void row_counts(row_stats *st, const float *m, const float *a, int len, float t001, float ttau) {
    const rd_f32x4 t1 = {t001, t001, t001, t001}, tt = {ttau, ttau, ttau, ttau}, z4 = {0, 0, 0, 0};
    avs_i32x4 c1 = {0, 0, 0, 0}, ct = c1, ng = c1;
    avs_f64x2 s0 = {0.0, 0.0}, s1 = s0, s2 = s0, s3 = s0, d2 = s0;
    int j = 0;
    for (; j + 8 <= len; j += 8) {
        rd_f32x4 x0, x1;
        memcpy(&x0, m + j, sizeof x0);
        memcpy(&x1, m + j + 4, sizeof x1);
        c1 += (x0 < t1) + (x1 < t1); // −1 per entry below
        ct += (x0 < tt) + (x1 < tt);
        ng |= (x0 < z4) | (x1 < z4);
        avs_f64x2 y0 = avs_load_f32x2(m + j), y1 = avs_load_f32x2(m + j + 2), y2 = avs_load_f32x2(m + j + 4),
                  y3 = avs_load_f32x2(m + j + 6);
        s0 += y0, s1 += y1, s2 += y2, s3 += y3; // lane pairs j ≡ 0,1 | 2,3 | 4,5 | 6,7 mod 8, as avs_sum_f64
        if (a) {
            avs_f64x2 b0 = avs_load_f32x2(a + j), b1 = avs_load_f32x2(a + j + 2), b2 = avs_load_f32x2(a + j + 4),
                      b3 = avs_load_f32x2(a + j + 6);
            avs_f64x2 e0 = y0 - b0, e1 = y1 - b1, e2 = y2 - b2, e3 = y3 - b3;
            d2 += (e0 * e0 + e1 * e1) + (e2 * e2 + e3 * e3);
        }
    }
    double sum = ((s0[0] + s2[0]) + (s0[1] + s2[1])) + ((s1[0] + s3[0]) + (s1[1] + s3[1]));
    int lt1 = -(c1[0] + c1[1] + c1[2] + c1[3]), ltt = -(ct[0] + ct[1] + ct[2] + ct[3]);
    int neg = (ng[0] | ng[1] | ng[2] | ng[3]) != 0;
    double dd = d2[0] + d2[1];
    for (; j < len; j++) {
        float x = m[j];
        sum += x;
        lt1 += x < t001;
        ltt += x < ttau;
        neg |= x < 0.0f;
        if (a) {
            double e = (double)x - a[j];
            dd += e * e;
        }
    }
    st->sum = sum, st->lt001 = lt1, st->lt_tau = ltt, st->negative = neg, st->d2 = dd;
}

/* What the logarithm pass sums besides Σ m ln m: nothing (ROW_M: no reference), Σ_{a>0} a ln m (ROW_AM:
 * the KL's share of M, against the summary's Σ a ln a), or Σ_{a>0} a·(ln a − ln m) from the logarithms'
 * parts (ROW_KL: the KL itself, where the split form would cancel). */
enum { ROW_M = 0, ROW_AM = 1, ROW_KL = 2 };

/* Two entries' share of the sums from their logarithms' parts (m: km, cm, pm; a: ka, ca, pa); y is a with
 * its non-positive entries zeroed, which the KL leaves out. Where m ≤ 0 < a the term is not left out: the
 * row then makes row_kl_mean undefined (negative m, or m = 0 < a), so it never counts. */
static inline void row_sums2(avs_f64x2 *h, avs_f64x2 *kl, avs_f64x2 x, avs_f64x2 km, avs_f64x2 cm, avs_f64x2 pm,
                             avs_f64x2 y, avs_f64x2 ka, avs_f64x2 ca, avs_f64x2 pa, int mode) {
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    if (mode == ROW_KL) {
        avs_f64x2 dk = ka - km;
        *kl += y * (dk * LN2_HI + (dk * LN2_LO + ((ca - cm) + (pa - pm))));
    }
    avs_f64x2 lm = km * LN2_HI + (km * LN2_LO + (cm + pm));
    if (mode == ROW_AM) *kl += y * lm;
    *h += x * lm; // 0 where x = 0
}

/* Four entries' share of the logarithm pass: m[0..4) (and a[0..4) but for ROW_M). The masks come from
 * f32x4 compares, sign-extended to the f64x2 lanes: clang turned a compare of the promoted doubles into an
 * f32 compare and a 64-bit shift pair, which V8 emulates. */
static inline void row_logs4(avs_f64x2 *h, avs_f64x2 *kl, avs_i32x4 *zero, const float *m, const float *a,
                             int mode) {
    avs_f64x2 km0, cm0, pm0, km1, cm1, pm1, ka0 = {0, 0}, ca0 = ka0, pa0 = ka0, ka1 = ka0, ca1 = ka0, pa1 = ka0;
    avs_f64x2 y0 = ka0, y1 = ka0;
    avs_logf_split4(m, &km0, &cm0, &pm0, &km1, &cm1, &pm1);
    if (mode == ROW_KL) avs_logf_split4(a, &ka0, &ca0, &pa0, &ka1, &ca1, &pa1);
    if (mode != ROW_M) {
        rd_f32x4 x4, y4, z4 = {0, 0, 0, 0};
        memcpy(&x4, m, sizeof x4);
        memcpy(&y4, a, sizeof y4);
        avs_i32x4 pos = y4 > z4;
        *zero |= pos & (x4 == z4);
        y4 = (rd_f32x4)(pos & (avs_i32x4)y4);
        y0 = avs_load_f32x2((const float *)&y4);
        y1 = avs_load_f32x2((const float *)&y4 + 2);
    }
    row_sums2(h, kl, avs_load_f32x2(m), km0, cm0, pm0, y0, ka0, ca0, pa0, mode);
    row_sums2(h, kl, avs_load_f32x2(m + 2), km1, cm1, pm1, y1, ka1, ca1, pa1, mode);
}

/* The logarithm pass over m[0..len) (and a[0..len) but for ROW_M): *h = Σ m ln m, *kl the mode's sum,
 * *zero whether some m = 0 < a. */
static void row_logs(double *h, double *kl, int *zero, const float *m, const float *a, int len, int mode) {
    avs_f64x2 hh = {0.0, 0.0}, kk = hh;
    avs_i32x4 z = {0, 0, 0, 0};
    int j = 0;
    if (mode == ROW_AM)
        for (; j + 4 <= len; j += 4) row_logs4(&hh, &kk, &z, m + j, a + j, ROW_AM);
    else if (mode == ROW_KL)
        for (; j + 4 <= len; j += 4) row_logs4(&hh, &kk, &z, m + j, a + j, ROW_KL);
    else
        for (; j + 4 <= len; j += 4) row_logs4(&hh, &kk, &z, m + j, NULL, ROW_M);
    if (j < len) { // the last entries, with zeros beside them (which add nothing)
        float pm[4] = {0, 0, 0, 0}, pa[4] = {0, 0, 0, 0};
        memcpy(pm, m + j, sizeof(float) * (size_t)(len - j));
        if (mode != ROW_M) memcpy(pa, a + j, sizeof(float) * (size_t)(len - j));
        row_logs4(&hh, &kk, &z, pm, mode != ROW_M ? pa : NULL, mode);
    }
    *h = hh[0] + hh[1];
    *kl = kk[0] + kk[1];
    *zero = (z[0] | z[1] | z[2] | z[3]) != 0;
}

/* The row statistics of m[0..len) (a[0..len) or NULL) with thresholds t001, ttau (float_at_least). */
static void row_pass(row_stats *st, const float *m, const float *a, int len, float t001, float ttau) {
    row_counts(st, m, a, len, t001, ttau);
    row_logs(&st->h, &st->am, &st->zero, m, a, len, a ? ROW_AM : ROW_M);
}

/* Σ_{a>0} a ln a of a reference row: the KL's share of A, summed by the very code that sums M's share
 * Σ_{a>0} a ln m, so that M = A cancels exactly. */
static double row_a_log_a(const float *a, int len) {
    double h, aa;
    int zero;
    row_logs(&h, &aa, &zero, a, a, len, ROW_AM);
    return aa;
}

/* A row's KL from its two shares (aa = Σ a ln a, am = Σ a ln m); where they cancel to less than 2⁻¹⁰ of
 * their size, summed again from the logarithms' parts (the comment above row_counts). */
static double row_kl_of(double aa, double am, const float *m, const float *a, int len) {
    double kl = aa - am;
    if (fabs(kl) > 0x1p-10 * (fabs(aa) + fabs(am))) return kl;
    double h;
    int zero;
    row_logs(&h, &kl, &zero, m, a, len, ROW_KL);
    return kl;
}

/* The entropy of a row where H = ln s − (1/s)·Σ m ln m would cancel (a nearly one-hot row whose sum is
 * far from 1), as Σ_j p_j·ln(s/m_j): the largest entry's ln(s/m) is log1p(rest/m), rest the sum of the
 * others, so that it keeps its digits where s − m would have lost them (the direct Σ p ln p, row_entropy,
 * lost them too: 1e-6 relative on such rows). Scalar: such rows are rare. */
static double entropy_peaked(const float *row, int m) {
    int top = 0;
    for (int j = 1; j < m; j++) top = row[j] > row[top] ? j : top;
    double big = row[top], rest = 0.0;
    for (int j = 0; j < m; j++) rest += j == top ? 0.0 : row[j];
    double s = big + rest, h = big / s * log1p(rest / big);
    for (int j = 0; j < m; j++)
        if (j != top && row[j] > 0.0f) h += row[j] / s * avs_log(s / row[j]);
    return h;
}

/* Row entropy from row_pass's statistics: H = ln s − (1/s)·Σ m ln m. Its rounding is about
 * ε·(|ln s| + Σ|m ln m|/s) against the direct form's ε·H; where that is more than 16 times H (a nearly
 * one-hot row whose sum is far from 1) the row is summed by entropy_peaked. NaN with *why as row_entropy. */
static double row_entropy_of(const row_stats *st, const float *row, int m, int *why) {
    if (st->negative) { *why = AV_REASON_NEGATIVE; return NAN; }
    if (!(st->sum > 0.0)) { *why = AV_REASON_ZERO_ROW; return NAN; }
    *why = AV_REASON_NONE;
    double s = st->sum, ls = avs_log(s), h = ls - st->h / s;
    /* Σ|m ln m|/s is −Σ m ln m/s when every m ≤ 1 (so when s ≤ 1), and at most that + 2·ln s otherwise
     * (the positive terms, m > 1, add up to at most s·ln s) */
    double bound = -st->h / s + (ls > 0.0 ? 2.0 * ls : 0.0) + fabs(ls);
    if (bound <= 16.0 * h) return h;
    return entropy_peaked(row, m);
}

/* The entry readouts from their row sums (entries_fused and its plain twin entries_ref). */
static void entries_store(double *vals, int *reasons, int n, long below001, long below_tau, long allowed_total,
                          double uni, double dev, double keys, int why_keys, double ent, int why_ent) {
    vals[AV_R_SPARSITY_LT_001] = (double)below001 / ((double)n * n);
    vals[AV_R_SPARSITY_TAU] = (double)below_tau / (double)allowed_total;
    vals[AV_R_ROW_ENTROPY_UNIFORM] = uni / n;
    vals[AV_R_ROW_SUM_DEV_MAX] = dev;
    if (why_keys) set_undefined(vals, reasons, AV_R_KEYS_FOR_90, why_keys);
    else vals[AV_R_KEYS_FOR_90] = keys / n;
    if (why_ent) set_undefined(vals, reasons, AV_R_ROW_ENTROPY_MEAN, why_ent);
    else vals[AV_R_ROW_ENTROPY_MEAN] = ent / n;
}

/* row_h: row i's entropy (NaN where undefined) into row_h[i], or NULL. A: the reference (finite) or NULL:
 * then error_fro_rel's ‖M − A‖_F² and row_kl_mean's sum come from the same pass, into *fro_kl, with the
 * rows' Σ a ln a from aa[] (the reference's summary). */
typedef struct fro_kl { double diff2, kl; int why_kl; } fro_kl;

static void entries_fused(double *vals, int *reasons, double *row_h, fro_kl *fk, const float *M, const float *A,
                          const double *aa, int n, int causal, double tau, float *buf) {
    long below001 = 0, below_tau = 0, allowed_total = 0;
    double keys = 0.0, ent = 0.0, uni = 0.0, dev = 0.0, diff2 = 0.0, kl = 0.0;
    int why_keys = AV_REASON_NONE, why_ent = AV_REASON_NONE, why_kl = AV_REASON_NONE;
    const float t001 = float_at_least(0.01);
    for (int i = 0; i < n; i++) {
        const float *row = M + (size_t)i * n, *a = A ? A + (size_t)i * n : NULL;
        int m = allowed(i, n, causal);
        row_stats st;
        row_pass(&st, row, a, m, t001, float_at_least(tau / m));
        below001 += n - m + st.lt001; // masked entries count, as zeros, for sparsity_lt_0.01
        below_tau += st.lt_tau;
        double d1 = fabs(st.sum - 1.0);
        dev = d1 > dev ? d1 : dev;
        allowed_total += m;
        uni += log((double)m);
        if (a) {
            if (st.negative) why_kl = AV_REASON_NEGATIVE;
            else if (st.zero && !why_kl) why_kl = AV_REASON_ZERO_WHERE_POSITIVE;
            if (!why_kl) kl += row_kl_of(aa[i], st.am, row, a, m); // else row_kl_mean is undefined
            diff2 += st.d2;
            for (int j = m; j < n; j++) { // masked entries: error_fro_rel is over all n² entries
                double dlt = (double)row[j] - a[j];
                diff2 += dlt * dlt;
            }
        }
        int why = AV_REASON_NONE;
        double h = row_entropy_of(&st, row, m, &why);
        if (row_h) row_h[i] = h;
        if (why) { why_ent = why_ent ? why_ent : why; why_keys = why_keys ? why_keys : why; continue; }
        ent += h;
        keys += fewest_reaching(row, m, 0.9 * st.sum - 1e-12 * st.sum, buf);
    }
    entries_store(vals, reasons, n, below001, below_tau, allowed_total, uni, dev, keys, why_keys, ent, why_ent);
    *fk = (fro_kl){diff2, kl, why_kl};
}

/* The plain twin of entries_fused (row_entropy, scalar double comparisons, avs_sum_f64): row_h as there. */
static void entries_ref(double *vals, int *reasons, double *row_h, const float *M, int n, int causal, double tau,
                        float *buf) {
    long below001 = 0, below_tau = 0, allowed_total = 0;
    double keys = 0.0, ent = 0.0, uni = 0.0, dev = 0.0;
    int why_keys = AV_REASON_NONE, why_ent = AV_REASON_NONE;
    for (int i = 0; i < n; i++) {
        const float *row = M + (size_t)i * n;
        int m = allowed(i, n, causal);
        double t = tau / m;           // sparsity_tau: allowed entries below τ/m
        int lt001 = n - m, lt_tau = 0; // masked entries count, as zeros, for sparsity_lt_0.01
        for (int j = 0; j < m; j++) {
            double x = row[j];
            lt001 += x < 0.01;
            lt_tau += x < t;
        }
        below001 += lt001;
        below_tau += lt_tau;
        double d1 = fabs(avs_sum_f64(row, m) - 1.0); /* row_sum_dev_max: |Σ allowed − 1|, in float64 */
        dev = d1 > dev ? d1 : dev;
        allowed_total += m;
        uni += log((double)m);
        int why = AV_REASON_NONE;
        double sum = 0.0, h = row_entropy(row, m, &why, &sum);
        if (row_h) row_h[i] = h;
        if (why) { why_ent = why_ent ? why_ent : why; why_keys = why_keys ? why_keys : why; continue; }
        ent += h;
        /* 90% of the row's sum, less 1e-12 of it so that rounding in the sum of equal entries cannot add
         * a key (uniform rows: exactly ⌈0.9·m⌉). */
        keys += fewest_reaching(row, m, 0.9 * sum - 1e-12 * sum, buf);
    }
    entries_store(vals, reasons, n, below001, below_tau, allowed_total, uni, dev, keys, why_keys, ent, why_ent);
}

// ----------------------------------------------------------------------------------------------------
// error readouts against the softmax reference


/* Σ_j a_j·ln(a_j/m_j) over j < len where both are positive (KL(A‖M) of one row). Sets *why to
 * AV_REASON_NEGATIVE for a negative m_j, else to AV_REASON_ZERO_WHERE_POSITIVE for m_j = 0 < a_j. */
static double row_kl(const float *m, const float *a, int len, int *why) {
    int negative = 0, zero = 0;
    for (int j = 0; j < len; j++) {
        negative |= m[j] < 0.0f;
        zero |= a[j] > 0.0f && m[j] == 0.0f;
    }
    if (negative) { *why = AV_REASON_NEGATIVE; return 0.0; }
    if (zero && !*why) *why = AV_REASON_ZERO_WHERE_POSITIVE;
    avs_f64x2 acc = {0.0, 0.0};
    const avs_f64x2 one = {1.0, 1.0};
    int j = 0;
    for (; j + 2 <= len; j += 2) {
        avs_f64x2 x = avs_load_f32x2(a + j), y = avs_load_f32x2(m + j);
        avs_i64x2 both = (x > 0.0) & (y > 0.0);
        avs_f64x2 q = (avs_f64x2)((both & (avs_i64x2)(x / y)) | (~both & (avs_i64x2)one));
        acc += x * avs_log2x(q); // 0 where q = 1
    }
    double t = acc[0] + acc[1];
    for (; j < len; j++)
        if (a[j] > 0.0f && m[j] > 0.0f) t += a[j] * avs_log((double)a[j] / m[j]);
    return t;
}

/* ‖(X − Y)·V‖_F² (Y NULL: ‖X·V‖_F²) by the float32 SIMD gemm of simd.h, four rows at a time: D = X − Y is
 * formed in float (exact where X and Y are within a factor 2, else rounded once), V is packed once, the
 * squares are summed in float64. About 1e-6 relative accuracy, which the readout's few digits never see, at
 * a fraction of a float64 product's cost (n²·dv multiply-adds). Causal rows stop at their last allowed key,
 * each row of a strip at its own (entries past it count as 0 even where X holds others: a strip's rows once
 * read up to its last row's key). Work: P (packed V), D (4×n), a 4×dv output strip. */
typedef struct readout_ws { float *row, *P, *D, *OD; } readout_ws;

/* The workspace of av_readouts, carved (or counted: a->base NULL) by the library's arena: a row buffer
 * (n), packed V, the D strip (4×n) and a 4×dv output strip (dv ≥ 1 even without V). */
static void readout_layout(readout_ws *w, avi_arena *a, int n, int dv) {
    uint64_t d = dv > 0 ? (uint64_t)dv : 1, F = sizeof(float);
    w->row = avi_take(a, F * (uint64_t)n);
    w->P = avi_take(a, F * (uint64_t)avs_packed_floats((int)d, n));
    w->D = avi_take(a, F * 4u * (uint64_t)n);
    w->OD = avi_take(a, F * 4u * d);
}

static double product_norm2(const float *X, const float *Y, const float *V, int n, int dv, int causal,
                            const readout_ws *w) {
    float *P = w->P, *D = w->D, *OD = w->OD;
    avs_pack_b(P, V, (size_t)dv, n, dv);
    double sd = 0.0;
    for (int i0 = 0; i0 < n; i0 += 4) {
        int h = n - i0 < 4 ? n - i0 : 4, k = causal ? i0 + h : n;
        const float *strip = X + (size_t)i0 * n;
        if (Y || causal) { /* causal: each row of the strip to its own last allowed key (zeros after it) */
            for (int r = 0; r < h; r++) {
                const float *x = X + (size_t)(i0 + r) * n, *y = Y ? Y + (size_t)(i0 + r) * n : NULL;
                int kr = causal ? i0 + r + 1 : n;
                float *dr = D + (size_t)r * n;
                if (y)
                    for (int j = 0; j < kr; j++) dr[j] = x[j] - y[j];
                else
                    memcpy(dr, x, sizeof(float) * (size_t)kr);
                for (int j = kr; j < k; j++) dr[j] = 0.0f;
            }
            strip = D;
        }
        avs_gemm_strip(OD, (size_t)dv, strip, (size_t)n, h, P, n, dv, k, 1.0f, 0);
        for (int e = 0; e < h * dv; e++) sd += (double)OD[e] * OD[e];
    }
    return sd;
}

/* The plain twin of entries_fused's error sums: ‖M − A‖_F² entry by entry, row_kl per row. */
static void errors_ref(fro_kl *fk, const float *M, const float *A, int n, int causal) {
    double diff2 = 0.0, kl = 0.0;
    int why_kl = AV_REASON_NONE;
    for (int i = 0; i < n; i++) {
        const float *m = M + (size_t)i * n, *a = A + (size_t)i * n;
        for (int j = 0; j < n; j++) {
            double dlt = (double)m[j] - a[j];
            diff2 += dlt * dlt;
        }
        if (why_kl != AV_REASON_NEGATIVE) kl += row_kl(m, a, allowed(i, n, causal), &why_kl);
    }
    *fk = (fro_kl){diff2, kl, why_kl};
}

static int reference_reason(const float *A, int n) {
    if (!A) return AV_REASON_NO_REFERENCE;
    if (!avi_all_finite(A, (size_t)n * n)) return AV_REASON_REFERENCE_NONFINITE;
    return AV_REASON_NONE;
}

// ----------------------------------------------------------------------------------------------------
// the reference's summary: what the error readouts need of A and V alone

/* Laid out by the arena after the caller's pointer: the header, then Σ a ln a of each row (n doubles). The
 * readouts check the header's magic and sizes; they cannot check that A and V are still the ones it
 * summarises (the caller's promise). */
#define SUMMARY_MAGIC 0x61767266u /* "avrf" */
typedef struct ref_summary {
    uint32_t magic;
    int32_t n, dv, causal;
    int32_t why_ref; /* AV_REASON_NONE, or why A cannot be compared with (no reference, not finite) */
    int32_t why_v;   /* AV_REASON_NONE, AV_REASON_NO_V or AV_REASON_NONFINITE */
    double ref2;     /* ‖A‖_F², all n² entries */
    double av2;      /* ‖A·V‖_F² (causal rows to their last allowed key) */
} ref_summary;

static void summary_layout(ref_summary **head, double **aa, avi_arena *a, int n) {
    *head = avi_take(a, sizeof(ref_summary));
    *aa = avi_take(a, sizeof(double) * (uint64_t)n);
}

size_t av_reference_summary_bytes(int n) {
    if (n < 1 || n > AV_MAX_N) return 0;
    avi_arena a = avi_arena_count();
    ref_summary *h;
    double *aa;
    summary_layout(&h, &aa, &a, n);
    return (size_t)a.used;
}

/* The summary of A (or NULL) and V (or NULL) into head and aa. w: the readouts' workspace (A·V's gemm). */
static void summarize(ref_summary *head, double *aa, const float *A, const float *V, int n, int dv, int causal,
                      const readout_ws *w) {
    *head = (ref_summary){SUMMARY_MAGIC, n, dv, causal, reference_reason(A, n), AV_REASON_NONE, NAN, NAN};
    if (!V) head->why_v = AV_REASON_NO_V;
    else if (!avi_all_finite(V, (size_t)n * dv)) head->why_v = AV_REASON_NONFINITE;
    if (head->why_ref) return;
    double ref2 = 0.0;
    for (int i = 0; i < n; i++) {
        const float *a = A + (size_t)i * n;
        aa[i] = row_a_log_a(a, allowed(i, n, causal));
        avs_f64x2 r2 = {0.0, 0.0};
        int j = 0;
        for (; j + 2 <= n; j += 2) {
            avs_f64x2 b = avs_load_f32x2(a + j);
            r2 += b * b;
        }
        ref2 += r2[0] + r2[1];
        for (; j < n; j++) ref2 += (double)a[j] * a[j];
    }
    head->ref2 = ref2;
    if (!head->why_v) head->av2 = product_norm2(A, NULL, V, n, dv, causal, w);
}

int av_reference_summary(void *summary, size_t summary_bytes, const float *A, const float *V, int n, int dv,
                         int causal, void *work, size_t work_bytes) {
    if (!summary || !work) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || dv < 0 || dv > AV_MAX_D || (V && dv < 1)) return AV_ERR_SIZE;
    if (summary_bytes < av_reference_summary_bytes(n) || work_bytes < av_readouts_work(n, dv)) return AV_ERR_WORKSPACE;
    avi_arena sa = avi_arena_over(summary), wa = avi_arena_over(work);
    ref_summary *head;
    double *aa;
    summary_layout(&head, &aa, &sa, n);
    readout_ws w;
    readout_layout(&w, &wa, n, dv);
    summarize(head, aa, A, V, n, dv, causal != 0, &w);
    return AV_OK;
}

/* The error readouts: A usable, else every one undefined with the reason; error_fro_rel and row_kl_mean
 * from fk and ref2, output_error_rel from num = ‖(M − A)·V‖² and den = ‖A·V‖² (why_v when V is missing
 * or not finite). */
static void errors(double *vals, int *reasons, int n, int why_ref, const fro_kl *fk, double ref2, int why_v,
                   double num, double den) {
    if (why_ref) {
        set_undefined(vals, reasons, AV_R_ERROR_FRO_REL, why_ref);
        set_undefined(vals, reasons, AV_R_ROW_KL_MEAN, why_ref);
        set_undefined(vals, reasons, AV_R_OUTPUT_ERROR_REL, why_ref);
        return;
    }
    if (ref2 > 0.0) vals[AV_R_ERROR_FRO_REL] = sqrt(fk->diff2 / ref2);
    else set_undefined(vals, reasons, AV_R_ERROR_FRO_REL, AV_REASON_ZERO_ROW);
    if (fk->why_kl) set_undefined(vals, reasons, AV_R_ROW_KL_MEAN, fk->why_kl);
    else vals[AV_R_ROW_KL_MEAN] = fk->kl / n;
    if (why_v) set_undefined(vals, reasons, AV_R_OUTPUT_ERROR_REL, why_v);
    else if (den > 0.0) vals[AV_R_OUTPUT_ERROR_REL] = sqrt(num / den);
    else set_undefined(vals, reasons, AV_R_OUTPUT_ERROR_REL, AV_REASON_ZERO_ROW);
}

// ----------------------------------------------------------------------------------------------------
// public

size_t av_readouts_work(int n, int dv) {
    if (n < 1 || n > AV_MAX_N || dv < 0 || dv > AV_MAX_D) return 0;
    avi_arena a = avi_arena_count();
    readout_ws w;
    readout_layout(&w, &a, n, dv);
    ref_summary *head;
    double *aa;
    summary_layout(&head, &aa, &a, n); /* av_readouts summarises its reference in its own workspace */
    return a.used > SIZE_MAX ? 0 : (size_t)a.used;
}

/* The readouts of M against the summary (head, aa) of its reference A: the fused row pass (reference 0)
 * or its plain twins (reference 1: the entry readouts, ‖M − A‖_F² and the KL from M and A directly). */
static void readouts_of(double *vals, int *reasons, double *row_entropy, const float *M, const double *sv,
                        double noise_floor, const float *A, const float *V, const ref_summary *head,
                        const double *aa, int n, int dv, int causal, double tau, const readout_ws *w, int reference) {
    spectral(vals, reasons, sv, noise_floor, n);
    fro_kl fk = {0.0, 0.0, AV_REASON_NONE};
    int why_ref = head->why_ref, why_v = head->why_v;
    if (reference) {
        entries_ref(vals, reasons, row_entropy, M, n, causal, tau, w->row);
        if (!why_ref) errors_ref(&fk, M, A, n, causal);
    } else {
        entries_fused(vals, reasons, row_entropy, &fk, M, why_ref ? NULL : A, aa, n, causal, tau, w->row);
    }
    double num = !why_ref && !why_v ? product_norm2(M, A, V, n, dv, causal, w) : NAN;
    errors(vals, reasons, n, why_ref, &fk, head->ref2, why_v, num, head->av2);
    set_undefined(vals, reasons, AV_R_SEMISEPARABLE_RANK, AV_REASON_NO_BLOCK); /* its own SVD: av_semiseparable_rank */
    for (int r = 0; r < AV_R_COUNT; r++) /* the promise: never ±Inf, never NaN without a reason */
        if (!isfinite(vals[r]) && reasons[r] == AV_REASON_NONE) set_undefined(vals, reasons, r, AV_REASON_OVERFLOW);
}

/* The arguments every readouts entry point shares, checked; then vals and reasons reset and M checked
 * finite (AV_ERR_NONFINITE: every readout undefined, row_entropy NaN). */
static int readouts_begin(double *vals, int *reasons, double *row_entropy, const float *M, int n, int dv,
                          double tau, size_t work_bytes) {
    if (n < 1 || n > AV_MAX_N || dv < 0 || dv > AV_MAX_D) return AV_ERR_SIZE;
    if (!(tau >= 0.0) || !isfinite(tau)) return AV_ERR_KNOB;
    if (work_bytes < av_readouts_work(n, dv)) return AV_ERR_WORKSPACE;
    for (int r = 0; r < AV_R_COUNT; r++) { vals[r] = NAN; reasons[r] = AV_REASON_NONE; }
    if (!avi_all_finite(M, (size_t)n * n)) {
        for (int r = 0; r < AV_R_COUNT; r++) reasons[r] = AV_REASON_MATRIX_NONFINITE;
        if (row_entropy)
            for (int i = 0; i < n; i++) row_entropy[i] = NAN;
        return AV_ERR_NONFINITE;
    }
    return AV_OK;
}

/* av_readouts_rows (reference 0) and its plain twin (reference 1): the reference summarised in the
 * workspace, then readouts_of. */
static int readouts(double *vals, int *reasons, double *row_entropy, const float *M, const double *sv,
                    double noise_floor, const float *A, const float *V, int n, int dv, int causal, double tau,
                    void *work, size_t work_bytes, int reference) {
    if (!vals || !reasons || !M || !work) return AV_ERR_NULL;
    if (V && dv < 1) return AV_ERR_SIZE;
    int st = readouts_begin(vals, reasons, row_entropy, M, n, dv, tau, work_bytes);
    if (st != AV_OK) return st;
    avi_arena a = avi_arena_over(work);
    readout_ws w;
    readout_layout(&w, &a, n, dv);
    ref_summary *head;
    double *aa;
    summary_layout(&head, &aa, &a, n);
    causal = causal != 0;
    summarize(head, aa, A, V, n, dv, causal, &w);
    readouts_of(vals, reasons, row_entropy, M, sv, noise_floor, A, V, head, aa, n, dv, causal, tau > 0.0 ? tau : 0.1,
                &w, reference);
    return AV_OK;
}

int av_readouts_rows(double *vals, int *reasons, double *row_entropy, const float *M, const double *sv,
                     double noise_floor, const float *A, const float *V, int n, int dv, int causal, double tau,
                     void *work, size_t work_bytes) {
    return readouts(vals, reasons, row_entropy, M, sv, noise_floor, A, V, n, dv, causal, tau, work, work_bytes, 0);
}

int avi_readouts_ref(double *vals, int *reasons, double *row_entropy, const float *M, const double *sv,
                     double noise_floor, const float *A, const float *V, int n, int dv, int causal, double tau,
                     void *work, size_t work_bytes) {
    return readouts(vals, reasons, row_entropy, M, sv, noise_floor, A, V, n, dv, causal, tau, work, work_bytes, 1);
}

int av_readouts(double *vals, int *reasons, const float *M, const double *sv, double noise_floor,
                const float *A, const float *V, int n, int dv, int causal, double tau,
                void *work, size_t work_bytes) {
    return av_readouts_rows(vals, reasons, NULL, M, sv, noise_floor, A, V, n, dv, causal, tau, work, work_bytes);
}

int av_readouts_summarised(double *vals, int *reasons, double *row_entropy, const float *M, const double *sv,
                           double noise_floor, const float *A, const float *V, const void *summary,
                           size_t summary_bytes, int n, int dv, int causal, double tau, void *work,
                           size_t work_bytes) {
    if (!vals || !reasons || !M || !summary || !work) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || dv < 0 || dv > AV_MAX_D || (V && dv < 1)) return AV_ERR_SIZE;
    if (summary_bytes < av_reference_summary_bytes(n)) return AV_ERR_WORKSPACE;
    avi_arena sa = avi_arena_over((void *)summary);
    ref_summary *head;
    double *aa;
    summary_layout(&head, &aa, &sa, n);
    causal = causal != 0;
    if (head->magic != SUMMARY_MAGIC) return AV_ERR_FORMAT;
    if (head->n != n || head->dv != dv || head->causal != causal) return AV_ERR_SIZE;
    if ((!head->why_ref && !A) || (!head->why_v && !V)) return AV_ERR_NULL;
    int st = readouts_begin(vals, reasons, row_entropy, M, n, dv, tau, work_bytes);
    if (st != AV_OK) return st;
    avi_arena a = avi_arena_over(work);
    readout_ws w;
    readout_layout(&w, &a, n, dv);
    readouts_of(vals, reasons, row_entropy, M, sv, noise_floor, A, V, head, aa, n, dv, causal, tau > 0.0 ? tau : 0.1,
                &w, 0);
    return AV_OK;
}

/* --- row_kl_mean where M underflowed (av_row_kl) --- */

/* Row i's log-domain weights of the softmax family where M's float32 entry is 0: lam[j] = ℓ_ij − ln Σ_l e^ℓ_il
 * over the row's keys [lo, hi) (the window's, else the allowed ones), ℓ_ij = scale·q_i·k_j + (i − j)·ln γ
 * (decayed: the forgetting softmax), all in float64 from the float32 Q and K. Returns hi and sets *lo; lam is
 * filled on [lo, hi). */
static int softmax_log_row(double *lam, int *lo_out, const float *Q, const float *K, int i, int n, int d,
                           const av_params *p) {
    int len = p->causal ? i + 1 : n, lo = 0, hi = len;
    if (p->window > 0) {
        lo = i - p->window + 1 > 0 ? i - p->window + 1 : 0;
        hi = i + p->window < len ? i + p->window : len;
    }
    const double lg = p->causal && p->decay < 1 ? log(p->decay) : 0.0;
    const float *q = Q + (size_t)i * d;
    double top = -INFINITY;
    for (int j = lo; j < hi; j++) {
        const float *k = K + (size_t)j * d;
        double s = 0.0;
        for (int f = 0; f < d; f++) s += (double)q[f] * k[f];
        lam[j] = p->scale * s + (double)(i - j) * lg;
        top = lam[j] > top ? lam[j] : top;
    }
    double z = 0.0;
    for (int j = lo; j < hi; j++) z += exp(lam[j] - top);
    const double lse = top + log(z);
    for (int j = lo; j < hi; j++) lam[j] -= lse;
    *lo_out = lo;
    return hi;
}

/* fox's (docs/gated.md): lam[j] = ℓ_ij − ln Σ_l e^ℓ_il over j ≤ i, ℓ_ij = q̃_i·k̃_j + seg(i, j) with q̃ = scale·l2norm?(q),
 * k̃ = l2norm?(k) and the bias summed from the diagonal backwards, in float64 from the float32 Q and K. Returns i + 1. */
static int fox_log_row(double *lam, const float *Q, const float *K, int i, int d, const av_params *p) {
    const avi_gates G = avi_gates_of(p);
    const float *q = Q + (size_t)i * d;
    double fq = p->scale, top = -INFINITY, c = 0.0;
    if (p->qk_l2norm > 0) {
        double s = 0.0;
        for (int f = 0; f < d; f++) s += (double)q[f] * q[f];
        fq /= sqrt(s + 1e-6);
    }
    for (int j = i; j >= 0; j--) {
        const float *k = K + (size_t)j * d;
        double s = 0.0, kk = 0.0;
        for (int f = 0; f < d; f++) s += (double)q[f] * k[f], kk += (double)k[f] * k[f];
        lam[j] = fq * s / (p->qk_l2norm > 0 ? sqrt(kk + 1e-6) : 1.0) + c;
        top = lam[j] > top ? lam[j] : top;
        c += avi_gate(&G, j, 0);
    }
    double z = 0.0;
    for (int j = 0; j <= i; j++) z += exp(lam[j] - top);
    const double lse = top + log(z);
    for (int j = 0; j <= i; j++) lam[j] -= lse;
    return i + 1;
}

/* The kernel variants' logarithms where M underflowed: lam[j] = ln(φ(q_i)·φ(k_j)) + (i − j)·ln γ − ln D_i over
 * the allowed j, D_i the variant's normaliser of the decayed row sum, all in float64 (−∞ where the product
 * is not positive: M is truly 0 there). The product comes from ln φ in float64 (LQ, LK: focused, exp and
 * hedgehog, whose float32 φ underflows to 0 where the true product is positive, e.g. focused at p = 8),
 * else the closed form κ(scale·q·k) (taylor, explimit), else the float32 features (PQ, PK). */
/* taylor and explimit: M_ij = κ(scale·q_i·k_j)/Σ, κ in closed form. */
static int closed_form(const av_params *p) { return p->variant == AV_TAYLOR || p->variant == AV_EXPLIMIT; }

typedef struct log_feats {
    const float *PQ, *PK, *Q, *K;
    const double *LQ, *LK; /* ln φ, n×r; then e^{ln φ − m} (n×r) and the row maxima m (n) */
    long r;
    int d, n;
} log_feats;

static double log_product(const log_feats *F, int i, int j, const av_params *p) {
    double s = 0.0;
    if (F->LQ) {
        /* fast: e^{m_q + m_k}·Σ_f φ̃_f(q)·φ̃_f(k), φ̃ = e^{ln φ − m} ≤ 1 (multiplies, no exp per term); exact
         * unless that sum leaves double's normal range, then ln Σ_f e^{ln φ_f(q) + ln φ_f(k)} term by term */
        const size_t nr = (size_t)F->n * F->r;
        const double *ea = F->LQ + nr + (size_t)i * F->r, *eb = F->LK + nr + (size_t)j * F->r;
        for (long f = 0; f < F->r; f++) s += ea[f] * eb[f];
        if (s >= 0x1p-900) return F->LQ[2 * nr + i] + F->LK[2 * nr + j] + log(s);
        s = 0.0;
        const double *a = F->LQ + (size_t)i * F->r, *b = F->LK + (size_t)j * F->r;
        double top = -INFINITY;
        for (long f = 0; f < F->r; f++) top = a[f] + b[f] > top ? a[f] + b[f] : top;
        if (top == -INFINITY) return top;
        for (long f = 0; f < F->r; f++) s += exp(a[f] + b[f] - top);
        return top + log(s);
    }
    if (closed_form(p)) {
        const float *q = F->Q + (size_t)i * F->d, *k = F->K + (size_t)j * F->d;
        for (int f = 0; f < F->d; f++) s += (double)q[f] * k[f];
        s = p->variant == AV_TAYLOR ? avi_kernel_taylor(p, p->scale * s) : avi_kernel_explimit(p, p->scale * s);
        return s > 0.0 ? log(s) : -INFINITY;
    }
    const float *q = F->PQ + (size_t)i * F->r, *k = F->PK + (size_t)j * F->r;
    for (long f = 0; f < F->r; f++) s += (double)q[f] * k[f];
    return s > 0.0 ? log(s) : -INFINITY;
}

/* After ln φ (n×r) in L: e^{ln φ − m_i} (n×r), then the row maxima m_i (n), for log_product's fast sum. */
static void scaled_features(double *L, int n, long r) {
    const size_t nr = (size_t)n * r;
    for (int i = 0; i < n; i++) {
        const double *l = L + (size_t)i * r;
        double m = -INFINITY;
        for (long f = 0; f < r; f++) m = l[f] > m ? l[f] : m;
        m = m > -INFINITY ? m : 0.0; // a row of zeros: its products are 0 either way
        for (long f = 0; f < r; f++) L[nr + (size_t)i * r + f] = exp(l[f] - m);
        L[2 * nr + i] = m;
    }
}

static void kernel_log_row(double *lam, const log_feats *F, int i, int n, const av_params *p) {
    const int len = p->causal ? i + 1 : n;
    const double lg = p->causal && p->decay < 1 ? log(p->decay) : 0.0;
    double top = -INFINITY, sum = 0.0;
    for (int j = 0; j < len; j++) {
        lam[j] = log_product(F, i, j, p) + (double)(i - j) * lg;
        top = lam[j] > top ? lam[j] : top;
    }
    for (int j = 0; top > -INFINITY && j < len; j++) sum += exp(lam[j] - top);
    const double ls = top + log(sum), S = exp(ls); // ln of the decayed row sum, and the sum (0 if below double)
    int zero = 0;
    const double lf = S == 0.0 && av_variant_info(p->variant)->norm == AV_NORM_SUM
                          ? -ls // the normaliser is the sum itself: M_ij = e^{ℓ_ij − ln Σ}, whatever its size
                          : log(avi_norm_factor(p, n, S, &zero));
    for (int j = 0; j < len; j++) lam[j] += lf;
}

/* av_row_kl's workspace: lam (n doubles), and for a kernel variant its features: ln φ (2·n·r doubles) where
 * the variant has them, else 2·n·r floats and the map's own workspace. r = 0 when the variant has no
 * feature map. */
static void row_kl_layout(double **lam, float **PQ, float **PK, double **LQ, double **LK, void **fw, avi_arena *a,
                          const av_params *p, int n, int d, long r) {
    *lam = avi_take(a, sizeof(double) * (uint64_t)n);
    *PQ = *PK = NULL;
    *LQ = *LK = NULL;
    *fw = NULL;
    if (closed_form(p)) return; // ln κ(scale·q·k) from Q and K directly
    if (r > 0 && avi_has_log_features(p)) {
        *LQ = avi_take(a, 8u * (uint64_t)n * (2u * (uint64_t)r + 1u)); // log_feats' three blocks
        *LK = avi_take(a, 8u * (uint64_t)n * (2u * (uint64_t)r + 1u));
    } else if (r > 0) {
        *PQ = avi_take(a, 4u * (uint64_t)n * (uint64_t)r);
        *PK = avi_take(a, 4u * (uint64_t)n * (uint64_t)r);
        *fw = avi_take(a, av_features_work(p, n, d));
    }
}

/* The feature dimension av_row_kl uses: 0 for softmax and the variants without a feature map. */
static long row_kl_dim(const av_params *p, int n, int d) {
    long r = 0;
    if (p->variant == AV_SOFTMAX || av_feature_dim(&r, p, n, d) != AV_OK) return 0;
    return r;
}

size_t av_row_kl_work(const av_params *prm, int n, int d) {
    av_params p;
    if (!prm || av_params_resolve(&p, prm, n, d) != AV_OK) return 0;
    avi_arena a = avi_arena_count();
    double *lam, *LQ, *LK;
    float *PQ, *PK;
    void *fw;
    row_kl_layout(&lam, &PQ, &PK, &LQ, &LK, &fw, &a, &p, n, d, row_kl_dim(&p, n, d));
    return a.used > SIZE_MAX ? 0 : (size_t)a.used;
}

int av_row_kl(double *kl_mean, int *reason, const float *M, const float *A, const float *Q, const float *K, int n,
              int d, const av_params *prm, void *work, size_t work_bytes) {
    if (!kl_mean || !reason || !M || !Q || !K || !prm || !work) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    av_params p;
    int st = av_params_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    if (work_bytes < av_row_kl_work(prm, n, d)) return AV_ERR_WORKSPACE;
    if (!avi_all_finite(Q, (size_t)n * d) || !avi_all_finite(K, (size_t)n * d)) return AV_ERR_NONFINITE;
    *kl_mean = NAN;
    *reason = !avi_all_finite(M, (size_t)n * n) ? AV_REASON_MATRIX_NONFINITE : reference_reason(A, n);
    if (*reason) return AV_OK;
    avi_arena ar = avi_arena_over(work);
    double *lam, *LQ, *LK;
    float *PQ, *PK;
    void *fw;
    const long r = row_kl_dim(&p, n, d);
    row_kl_layout(&lam, &PQ, &PK, &LQ, &LK, &fw, &ar, &p, n, d, r);
    const log_feats F = {PQ, PK, Q, K, LQ, LK, r, d, n};
    const int causal = p.causal != 0;
    int logs = p.variant == AV_SOFTMAX || p.variant == AV_FOX || closed_form(&p), features = 0; // the features are computed at the first row that needs them
    for (int i = 0; i < n; i++) // a negative entry wins over a zero one, as in av_readouts
        for (int j = 0, len = allowed(i, n, causal); j < len; j++)
            if (M[(size_t)i * n + j] < 0.0f) {
                *reason = AV_REASON_NEGATIVE;
                return AV_OK;
            }
    double kl = 0.0;
    int why = AV_REASON_NONE;
    for (int i = 0; i < n; i++) {
        const float *m = M + (size_t)i * n, *a = A + (size_t)i * n;
        const int len = allowed(i, n, causal);
        double h, am;
        int zero;
        row_logs(&h, &am, &zero, m, a, len, ROW_AM);
        for (int j = 0; j < len && !zero; j++) zero = a[j] > 0.0f && m[j] < FLT_MIN; // subnormal: few true bits
        if (!zero) { // av_readouts' own row, so that the mean has its bits where nothing underflowed
            kl += row_kl_of(row_a_log_a(a, len), am, m, a, len);
            continue;
        }
        int lo = 0, hi = 0;
        if (r > 0 && !features && !closed_form(&p)) {
            features = 1;
            logs = LQ ? avi_log_features(LQ, LK, Q, K, n, d, &p)
                      : av_features(PQ, PK, Q, K, n, d, &p, fw, av_features_work(&p, n, d)) == AV_OK;
            for (int t = 0; LQ && t < 2; t++) scaled_features(t ? LK : LQ, n, r);
        }
        if (p.variant == AV_SOFTMAX) hi = softmax_log_row(lam, &lo, Q, K, i, n, d, &p);
        else if (p.variant == AV_FOX) hi = fox_log_row(lam, Q, K, i, d, &p);
        else if (logs) kernel_log_row(lam, &F, i, n, &p), hi = len;
        double t = 0.0;
        for (int j = 0; j < len; j++) {
            if (!(a[j] > 0.0f)) continue;
            if (m[j] >= FLT_MIN) t += a[j] * avs_log((double)a[j] / m[j]);
            else if (j >= lo && j < hi && lam[j] > -INFINITY) t += a[j] * (avs_log((double)a[j]) - lam[j]); // below float32's normals
            else if (m[j] > 0.0f) t += a[j] * avs_log((double)a[j] / m[j]); // subnormal, no log-domain form: as stored
            else why = AV_REASON_ZERO_WHERE_POSITIVE; // truly 0 (outside the window, or no log-domain form)
        }
        if (why) break;
        kl += t;
    }
    if (why) *reason = why;
    else *kl_mean = kl / n;
    if (!why && !isfinite(*kl_mean)) {
        *kl_mean = NAN;
        *reason = AV_REASON_OVERFLOW;
    }
    return AV_OK;
}

int av_error_curve(double *e, const double *sv, int n) {
    if (!e || !sv) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N) return AV_ERR_SIZE;
    if (!all_finite_d(sv, n)) return AV_ERR_NONFINITE;
    /* σ scaled by the power of two 2^−k with max|σ| = m·2^k, m in [0.5, 1): the squares cannot overflow
     * (σ beyond 1e154 made Σσ² Inf and e NaN) nor all underflow, and the ratios are the same bits as
     * unscaled whenever no square over- or underflowed (scaling by a power of two is exact) */
    double big = 0.0;
    for (int r = 0; r < n; r++) big = fabs(sv[r]) > big ? fabs(sv[r]) : big;
    int k = 0;
    if (big > 0.0) frexp(big, &k);
    e[n] = 0.0; // suffix sums from the smallest σ up: e(r) = Σ_{i>r} σᵢ² / Σσᵢ²
    for (int r = n - 1; r >= 0; r--) {
        double s = ldexp(sv[r], -k);
        e[r] = e[r + 1] + s * s;
    }
    double total = e[0];
    if (total > 0.0)
        for (int r = 0; r <= n; r++) e[r] /= total;
    return AV_OK;
}

/* The bin of entropy h (not NaN) among `bins` equal-width bins over [0, top]: the top edge goes in the last
 * bin, anything outside (rounding below 0, a caller's value beyond ln n, ±Inf) in the nearest end bin. The
 * comparisons come before the conversion, which would be undefined for ±Inf. For finite h this is
 * (int)(h/top·bins) clamped to [0, bins − 1], as it always was. */
static int entropy_bin(double h, double top, int bins) {
    double x = top > 0.0 ? h / top * bins : 0.0;
    return x < 1.0 ? 0 : x >= bins ? bins - 1 : (int)x;
}

int av_entropy_hist(int *counts, int bins, const double *h, int n) {
    if (!counts || !h) return AV_ERR_NULL;
    if (bins < 1 || n < 1 || n > AV_MAX_N) return AV_ERR_SIZE;
    memset(counts, 0, sizeof(int) * (size_t)bins);
    double top = log((double)n);
    int status = AV_OK;
    for (int i = 0; i < n; i++) {
        if (isnan(h[i])) { status = AV_WARN_ZERO_ROW; continue; }
        counts[entropy_bin(h[i], top, bins)]++;
    }
    return status;
}

int av_row_entropy_hist(int *counts, int bins, const float *M, int n, int causal) {
    if (!counts || !M) return AV_ERR_NULL;
    if (bins < 1 || n < 1 || n > AV_MAX_N) return AV_ERR_SIZE;
    if (!avi_all_finite(M, (size_t)n * n)) return AV_ERR_NONFINITE;
    memset(counts, 0, sizeof(int) * (size_t)bins);
    double top = log((double)n);
    int status = AV_OK;
    for (int i = 0; i < n; i++) { // the entropies of av_readouts_rows (row_entropy), binned as av_entropy_hist
        const float *row = M + (size_t)i * n;
        int m = allowed(i, n, causal != 0), why = AV_REASON_NONE;
        row_stats st;
        row_pass(&st, row, NULL, m, 1.0f, 1.0f);
        double h = row_entropy_of(&st, row, m, &why);
        if (why) { status = AV_WARN_ZERO_ROW; continue; }
        counts[entropy_bin(h, top, bins)]++;
    }
    return status;
}
