/* readouts.c: the readouts of an attention matrix, with the exact definitions of product.md §9.
 *
 * Spectral readouts come from singular values the caller computed (spectrum.c), with the route's noise
 * floor: a rank never counts σ at or below it. Entry readouts (sparsity, keys for 90%, row entropy) read
 * M's allowed entries (all, or j ≤ i when causal). Error readouts compare M with the softmax reference A
 * on the same Q, K and mask. All sums are in float64. An undefined readout is NaN with a reason code.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// names

static const char *const READOUT_NAMES[AV_R_COUNT] = {
    "sigma1", "rank", "rank_tol", "rank_rel_1e-3", "rank_rel_1e-2", "rank_energy_99",
    "effective_rank", "stable_rank", "sparsity_lt_0.01", "sparsity_tau", "keys_for_90",
    "row_entropy_mean", "row_entropy_uniform", "error_fro_rel", "row_kl_mean", "output_error_rel",
    "noise_floor",
};

const char *av_readout_name(int readout) {
    return readout >= 0 && readout < AV_R_COUNT ? READOUT_NAMES[readout] : NULL;
}

const char *av_reason_string(int reason) {
    switch (reason) {
    case AV_REASON_NONE: return "defined";
    case AV_REASON_NEGATIVE: return "the matrix has negative entries, so its rows are not distributions";
    case AV_REASON_ZERO_WHERE_POSITIVE: return "the matrix is zero where the softmax reference is positive";
    case AV_REASON_NO_V: return "no V was given";
    case AV_REASON_NO_REFERENCE: return "no softmax reference (the variant is softmax itself, or none was given)";
    case AV_REASON_ZERO_ROW: return "a row sums to zero, so it cannot be normalised";
    case AV_REASON_NO_SPECTRUM: return "no singular values were given";
    case AV_REASON_NONFINITE: return "an input holds NaN or Inf";
    case AV_REASON_ZERO_MATRIX: return "the matrix is zero (all singular values are 0)";
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

/* The fewest of x[0..m) (non-negative, permuted in place) whose sum reaches `target`: a quickselect on
 * the running sum of the largest entries, expected O(m). `target` > 0 and ≤ Σx. */
static int fewest_reaching(double *x, int m, double target) {
    int count = 0, lo = 0, hi = m;
    while (hi > lo) {
        double a = x[lo], b = x[(lo + hi) / 2], c = x[hi - 1]; // median-of-three pivot
        double piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int g = lo, e = lo, l = hi; // [lo,g) > piv, [g,e) == piv, [l,hi) < piv
        while (e < l) {
            double t = x[e];
            if (t > piv) { x[e] = x[g]; x[g++] = t; e++; }
            else if (t < piv) { x[e] = x[--l]; x[l] = t; }
            else e++;
        }
        double sg = 0.0;
        for (int k = lo; k < g; k++) sg += x[k];
        if (sg >= target) { hi = g; continue; }
        double s = sg;
        for (int k = g; k < e; k++) { // equal entries: one at a time
            s += piv;
            if (s >= target) return count + (g - lo) + (k - g) + 1;
        }
        count += e - lo;
        target -= s;
        lo = l;
    }
    return count; // reached only when rounding left the target a hair above the sum
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

/* Entropy of row i's allowed entries normalised to sum 1 (natural log); *ok = 0 when the row has a
 * negative entry or sums to zero (reason in *why). */
static double row_entropy(const float *row, int m, int *why) {
    double sum = 0.0;
    for (int j = 0; j < m; j++) {
        if (row[j] < 0.0f) { *why = AV_REASON_NEGATIVE; return NAN; }
        sum += row[j];
    }
    if (!(sum > 0.0)) { *why = AV_REASON_ZERO_ROW; return NAN; }
    double h = 0.0, inv = 1.0 / sum;
    for (int j = 0; j < m; j++)
        if (row[j] > 0.0f) {
            double p = row[j] * inv;
            h -= p * log(p);
        }
    *why = AV_REASON_NONE;
    return h;
}

static void entries(double *vals, int *reasons, const float *M, int n, int causal, double tau, double *buf) {
    long below001 = 0, below_tau = 0, allowed_total = 0;
    double keys = 0.0, ent = 0.0, uni = 0.0;
    int why_keys = AV_REASON_NONE, why_ent = AV_REASON_NONE;
    for (int i = 0; i < n; i++) {
        const float *row = M + (size_t)i * n;
        int m = allowed(i, n, causal);
        double t = tau / m; // sparsity_tau: allowed entries below τ/m
        for (int j = 0; j < n; j++) {
            double x = j < m ? row[j] : 0.0; // masked entries count, as zeros
            below001 += x < 0.01;
            if (j < m) below_tau += x < t;
        }
        allowed_total += m;
        uni += log((double)m);
        int why = AV_REASON_NONE;
        double h = row_entropy(row, m, &why);
        if (why) { why_ent = why_ent ? why_ent : why; why_keys = why_keys ? why_keys : why; continue; }
        ent += h;
        double sum = 0.0;
        for (int j = 0; j < m; j++) { buf[j] = row[j]; sum += row[j]; }
        /* 90% of the row's sum, less 1e-12 of it so that rounding in the sum of equal entries cannot add
         * a key (uniform rows: exactly ⌈0.9·m⌉). */
        keys += fewest_reaching(buf, m, 0.9 * sum - 1e-12 * sum);
    }
    vals[AV_R_SPARSITY_LT_001] = (double)below001 / ((double)n * n);
    vals[AV_R_SPARSITY_TAU] = (double)below_tau / (double)allowed_total;
    vals[AV_R_ROW_ENTROPY_UNIFORM] = uni / n;
    if (why_keys) set_undefined(vals, reasons, AV_R_KEYS_FOR_90, why_keys);
    else vals[AV_R_KEYS_FOR_90] = keys / n;
    if (why_ent) set_undefined(vals, reasons, AV_R_ROW_ENTROPY_MEAN, why_ent);
    else vals[AV_R_ROW_ENTROPY_MEAN] = ent / n;
}

// ----------------------------------------------------------------------------------------------------
// error readouts against the softmax reference

static void errors(double *vals, int *reasons, const float *M, const float *A, const float *V, int n, int dv,
                   int causal, double *acc) {
    if (!A) {
        set_undefined(vals, reasons, AV_R_ERROR_FRO_REL, AV_REASON_NO_REFERENCE);
        set_undefined(vals, reasons, AV_R_ROW_KL_MEAN, AV_REASON_NO_REFERENCE);
        set_undefined(vals, reasons, AV_R_OUTPUT_ERROR_REL, AV_REASON_NO_REFERENCE);
        return;
    }
    if (!avi_all_finite(A, (size_t)n * n)) {
        set_undefined(vals, reasons, AV_R_ERROR_FRO_REL, AV_REASON_NONFINITE);
        set_undefined(vals, reasons, AV_R_ROW_KL_MEAN, AV_REASON_NONFINITE);
        set_undefined(vals, reasons, AV_R_OUTPUT_ERROR_REL, AV_REASON_NONFINITE);
        return;
    }
    double diff2 = 0.0, ref2 = 0.0, kl = 0.0;
    int why_kl = AV_REASON_NONE;
    for (int i = 0; i < n; i++) {
        const float *m = M + (size_t)i * n, *a = A + (size_t)i * n;
        for (int j = 0; j < n; j++) {
            double dlt = (double)m[j] - a[j];
            diff2 += dlt * dlt;
            ref2 += (double)a[j] * a[j];
        }
        for (int j = 0; j < allowed(i, n, causal); j++) { // KL(A‖M) over allowed entries
            if (m[j] < 0.0f) why_kl = AV_REASON_NEGATIVE;
            else if (a[j] > 0.0f && m[j] == 0.0f && !why_kl) why_kl = AV_REASON_ZERO_WHERE_POSITIVE;
            else if (a[j] > 0.0f && m[j] > 0.0f) kl += a[j] * log((double)a[j] / m[j]);
        }
    }
    if (ref2 > 0.0) vals[AV_R_ERROR_FRO_REL] = sqrt(diff2 / ref2);
    else set_undefined(vals, reasons, AV_R_ERROR_FRO_REL, AV_REASON_ZERO_ROW);
    if (why_kl) set_undefined(vals, reasons, AV_R_ROW_KL_MEAN, why_kl);
    else vals[AV_R_ROW_KL_MEAN] = kl / n;

    if (!V) { set_undefined(vals, reasons, AV_R_OUTPUT_ERROR_REL, AV_REASON_NO_V); return; }
    if (!avi_all_finite(V, (size_t)n * dv)) {
        set_undefined(vals, reasons, AV_R_OUTPUT_ERROR_REL, AV_REASON_NONFINITE);
        return;
    }
    double num = 0.0, den = 0.0, *dlt = acc, *ref = acc + dv; // rows of (M − A)·V and A·V
    for (int i = 0; i < n; i++) {
        memset(acc, 0, sizeof(double) * 2 * (size_t)dv);
        const float *m = M + (size_t)i * n, *a = A + (size_t)i * n;
        for (int j = 0; j < n; j++) {
            double x = (double)m[j] - a[j], y = a[j];
            const float *v = V + (size_t)j * dv;
            if (x == 0.0 && y == 0.0) continue;
            for (int c = 0; c < dv; c++) { dlt[c] += x * v[c]; ref[c] += y * v[c]; }
        }
        for (int c = 0; c < dv; c++) { num += dlt[c] * dlt[c]; den += ref[c] * ref[c]; }
    }
    if (den > 0.0) vals[AV_R_OUTPUT_ERROR_REL] = sqrt(num / den);
    else set_undefined(vals, reasons, AV_R_OUTPUT_ERROR_REL, AV_REASON_ZERO_ROW);
}

// ----------------------------------------------------------------------------------------------------
// public

size_t av_readouts_work(int n, int dv) {
    if (n < 1 || n > AV_MAX_N || dv < 0 || dv > AV_MAX_D) return 0;
    return avi_align(sizeof(double) * ((size_t)n + 2 * (size_t)dv)) + 64;
}

int av_readouts(double *vals, int *reasons, const float *M, const double *sv, double noise_floor,
                const float *A, const float *V, int n, int dv, int causal, double tau,
                void *work, size_t work_bytes) {
    if (!vals || !reasons || !M || !work) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || dv < 0 || dv > AV_MAX_D || (V && dv < 1)) return AV_ERR_SIZE;
    if (!(tau >= 0.0) || !isfinite(tau)) return AV_ERR_KNOB;
    size_t need = av_readouts_work(n, dv);
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    for (int r = 0; r < AV_R_COUNT; r++) { vals[r] = NAN; reasons[r] = AV_REASON_NONE; }
    if (!avi_all_finite(M, (size_t)n * n)) {
        for (int r = 0; r < AV_R_COUNT; r++) reasons[r] = AV_REASON_NONFINITE;
        return AV_ERR_NONFINITE;
    }
    uintptr_t p = ((uintptr_t)work + 63u) & ~(uintptr_t)63u;
    double *buf = (double *)p;
    spectral(vals, reasons, sv, noise_floor, n);
    entries(vals, reasons, M, n, causal != 0, tau > 0.0 ? tau : 0.1, buf);
    errors(vals, reasons, M, A, V, n, dv, causal != 0, buf + n);
    return AV_OK;
}

int av_error_curve(double *e, const double *sv, int n) {
    if (!e || !sv) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N) return AV_ERR_SIZE;
    if (!all_finite_d(sv, n)) return AV_ERR_NONFINITE;
    e[n] = 0.0; // suffix sums from the smallest σ up: e(r) = Σ_{i>r} σᵢ² / Σσᵢ²
    for (int r = n - 1; r >= 0; r--) e[r] = e[r + 1] + sv[r] * sv[r];
    double total = e[0];
    if (total > 0.0)
        for (int r = 0; r <= n; r++) e[r] /= total;
    return AV_OK;
}

int av_row_entropy_hist(int *counts, int bins, const float *M, int n, int causal) {
    if (!counts || !M) return AV_ERR_NULL;
    if (bins < 1 || n < 1 || n > AV_MAX_N) return AV_ERR_SIZE;
    if (!avi_all_finite(M, (size_t)n * n)) return AV_ERR_NONFINITE;
    memset(counts, 0, sizeof(int) * (size_t)bins);
    double top = log((double)n);
    int status = AV_OK;
    for (int i = 0; i < n; i++) {
        int why = AV_REASON_NONE;
        double h = row_entropy(M + (size_t)i * n, allowed(i, n, causal != 0), &why);
        if (why) { status = AV_WARN_ZERO_ROW; continue; }
        int b = top > 0.0 ? (int)(h / top * bins) : 0;
        counts[b < 0 ? 0 : b >= bins ? bins - 1 : b]++;
    }
    return status;
}
