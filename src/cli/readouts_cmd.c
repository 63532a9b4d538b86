/* readouts_cmd.c: `attnviz readouts`, one JSON object with the spectrum and the readouts of a variant's
 * matrix (definitions: docs/readouts.md).
 *
 * Steps: M by av_matrix; the softmax reference A with the same scale and mask, no decay, no window (not
 * for plain softmax itself, which is A);
 * σ(M) by the fast or (--accurate) the accurate route; the readouts; the factor-route spectrum where the
 * variant has low-rank factors; the cost counts. Undefined values print as null beside a "<key>_reason";
 * numerical events are listed in "status". JSON never holds NaN or Inf.
 */
#include <math.h>
#include <stdlib.h>

#include "cli.h"

// ----------------------------------------------------------------------------------------------------
// JSON output

static void put_num(FILE *out, double x) {
    if (isfinite(x)) fprintf(out, "%.17g", x);
    else fputs("null", out);
}

static void put_array(FILE *out, const char *key, const double *x, int count) {
    fprintf(out, ",\n  \"%s\": [", key);
    for (int i = 0; i < count; i++) {
        if (i) fputc(',', out);
        put_num(out, x[i]);
    }
    fputc(']', out);
}

static void put_key_num(FILE *out, const char *key, double x) {
    fprintf(out, ",\n  \"%s\": ", key);
    put_num(out, x);
}

static void put_null_reason(FILE *out, const char *key, const char *reason) {
    fprintf(out, ",\n  \"%s\": null,\n  \"%s_reason\": \"%s\"", key, key, reason);
}

// Up to 8 status lines ("where: sentence") for numerical events and failed optional steps.
// A step that fails because the matrix it reads overflowed says so (upstream_overflow), instead of the
// step's own "the input holds NaN or Inf".
typedef struct notes { const char *where[8]; int code[8]; int count, upstream_overflow; } notes;
static void note(notes *s, const char *where, int code) {
    if (code != AV_OK && s->count < 8) { s->where[s->count] = where; s->code[s->count++] = code; }
}
static const char *note_text(const notes *s, int i) {
    if (s->code[i] == AV_ERR_NONFINITE && s->upstream_overflow) return "the matrix holds Inf or NaN (it overflowed: see matrix)";
    return av_status_string(s->code[i]);
}

// ----------------------------------------------------------------------------------------------------
// the steps

static int overflowed(int st) { return st == AV_WARN_OVERFLOW || st == AV_WARN_PRODUCT_OVERFLOW; }

/* M (n×n) of the variant `prm`; NULL and *status < 0 on failure. */
static float *matrix_of(const av_params *prm, const avcli_inputs *in, int *status) {
    size_t n2 = (size_t)in->n * in->n, wb = av_matrix_work(prm, in->n, in->d);
    float *M = malloc(n2 * sizeof(float));
    void *work = malloc(wb ? wb : 1);
    *status = (!M || !work) ? AV_ERR_NOMEM : av_matrix(M, in->Q, in->K, in->n, in->d, prm, work, wb);
    free(work);
    if (*status < 0) { free(M); return NULL; }
    return M;
}

static int spectrum_of(double *sv, double *floor_, const float *M, int n, int route) {
    size_t wb = av_svd_work(n, route);
    void *work = wb ? malloc(wb) : NULL;
    if (!work) return AV_ERR_NOMEM;
    int st = av_singular_values(sv, floor_, M, n, route, work, wb);
    free(work);
    return st;
}

/* The factor-route spectrum into sv[n]; AV_ERR_NO_LINEAR where the variant has no factors. */
static int factor_spectrum(double *sv, double *floor_, long *r, const avcli_inputs *in) {
    int n = in->n, st = av_factor_rank(r, &in->prm, n, in->d);
    if (st != AV_OK) return st;
    size_t wf = av_factors_work(&in->prm, n, in->d), ws = av_lowrank_svd_work(n, *r);
    float *L = malloc((size_t)n * *r * sizeof(float)), *R = malloc((size_t)n * *r * sizeof(float));
    void *work = malloc(wf > ws ? wf : ws);
    if (!L || !R || !work || !ws) st = AV_ERR_NOMEM;
    else if ((st = av_factors(L, R, in->Q, in->K, n, in->d, &in->prm, work, wf)) >= 0 && !overflowed(st)) {
        int s2 = av_lowrank_singular_values(sv, floor_, L, R, n, *r, work, ws);
        st = s2 != AV_OK ? s2 : st;
    }
    free(L); free(R); free(work);
    return st;
}

/* Why a spectrum is missing, naming what overflowed when that is the cause: "the matrix holds Inf or NaN
 * (<how it overflowed>)" rather than the spectrum's own "the input holds NaN or Inf". */
static const char *why_no_spectrum(char *buf, size_t cap, const char *what, int st, int upstream) {
    if (!overflowed(upstream) || (st != AV_ERR_NONFINITE && !overflowed(st))) return av_status_string(st);
    snprintf(buf, cap, "%s holds Inf or NaN: %s", what, av_status_string(upstream));
    return buf;
}

static void print_readouts(FILE *out, const double *vals, const int *why) {
    for (int k = 0; k < AV_R_COUNT; k++) {
        const char *key = av_readout_name(k);
        if (why[k] != AV_REASON_NONE || !isfinite(vals[k]))
            put_null_reason(out, key, av_reason_string(why[k] ? why[k] : AV_REASON_NONFINITE));
        else put_key_num(out, key, vals[k]);
    }
}

/* The cost counts of the four paths (docs/recurrent.md); null where a path does not exist. */
static void print_cost(FILE *out, const avcli_inputs *in) {
    static const char *const PATHS[4] = {"quad", "linear", "recurrent", "chunkwise"};
    fputs(",\n  \"cost\": {", out);
    for (int path = 0; path < 4; path++) {
        double c[2];
        int st = av_cost_path(c, path, &in->prm, in->n, in->d, in->V ? in->dv : in->d);
        if (st != AV_OK) c[0] = c[1] = -1;
        fprintf(out, "%s\"%s_madds\": ", path ? ", " : "", PATHS[path]);
        put_num(out, c[0] < 0 ? NAN : c[0]); // −1: the variant has no such path
        fprintf(out, ", \"%s_bytes\": ", PATHS[path]);
        put_num(out, c[1] < 0 ? NAN : c[1]);
    }
    fputc('}', out);
}

/* semiseparable_rank from the block's own SVD (av_readouts leaves it undefined): needs M's spectrum (its
 * σ₁ and noise floor set the tolerance) and n ≥ 2; otherwise the reason stays. Returns the status. */
static int semiseparable(double *vals, int *why, const float *M, int n, const double *sv, double floor_, int route) {
    if (!sv) { why[AV_R_SEMISEPARABLE_RANK] = AV_REASON_NO_SPECTRUM; return AV_OK; }
    if (n < 2) return AV_OK;
    size_t wb = av_semiseparable_work(n, route);
    void *w = wb ? malloc(wb) : NULL;
    if (!w) return AV_ERR_NOMEM;
    double rank;
    int st = av_semiseparable_rank(&rank, NULL, M, n, sv[0], floor_, route, w, wb);
    free(w);
    if (st >= 0) {
        vals[AV_R_SEMISEPARABLE_RANK] = rank;
        why[AV_R_SEMISEPARABLE_RANK] = AV_REASON_NONE;
    }
    return st;
}

static void print_entropy_hist(FILE *out, const float *M, int n, int causal, notes *s) {
    enum { BINS = 20 };
    int counts[BINS];
    int st = av_row_entropy_hist(counts, BINS, M, n, causal);
    note(s, "row_entropy_hist", st);
    if (st < 0) return;
    fprintf(out, ",\n  \"row_entropy_hist\": {\"lo\": 0, \"hi\": %.17g, \"counts\": [", log((double)n));
    for (int b = 0; b < BINS; b++) fprintf(out, "%s%d", b ? "," : "", counts[b]);
    fputs("]}", out);
}

// ----------------------------------------------------------------------------------------------------
// the command

/* 1 when the variant is the reference itself: softmax with no decay (γ = 1; 0 means 1) and no window. A
 * decayed or windowed softmax is a different matrix, compared with plain softmax like any variant. */
static int plain_softmax(const av_params *p) {
    return av_variant_info(p->variant)->cls == AV_CLASS_EXACT && (p->decay == 0 || p->decay == 1) && p->window == 0;
}

int avcli_cmd_readouts(const avcli_inputs *in, FILE *out) {
    const int n = in->n, route = in->accurate ? AV_SVD_ACCURATE : AV_SVD_FAST;
    const av_params *prm = &in->prm;
    notes s = {{0}, {0}, 0, 0};
    int st;
    char why_buf[320];
    float *M = matrix_of(prm, in, &st), *A = NULL;
    if (!M) {
        if (st == AV_ERR_NOMEM) return avcli_fail_system("out of memory (n = %d)", n);
        fprintf(stderr, "attnviz: --variant %s: %s\n", av_variant_name(prm->variant), av_status_string(st));
        return avcli_exit_code(st);
    }
    note(&s, "matrix", st);
    const int st_m = st;
    s.upstream_overflow = overflowed(st_m);
    if (!plain_softmax(prm)) { /* the reference: plain softmax, the variant's scale and mask */
        av_params ref;
        av_params_default(&ref, AV_SOFTMAX);
        ref.causal = prm->causal;
        ref.scale = prm->scale;
        A = matrix_of(&ref, in, &st);
        note(&s, "softmax reference", st);
    }
    double *sv = malloc(sizeof(double) * n), *svf = malloc(sizeof(double) * n);
    double *curve = malloc(sizeof(double) * (n + 1)), vals[AV_R_COUNT], floor_ = 0, floor_f = 0;
    int why[AV_R_COUNT], code = 0;
    size_t wr = av_readouts_work(n, in->V ? in->dv : 0);
    void *work = malloc(wr);
    if (!sv || !svf || !curve || !work) {
        code = avcli_fail_system("out of memory (n = %d)", n);
        goto done;
    }
    int st_sv = spectrum_of(sv, &floor_, M, n, route);
    note(&s, "spectrum", st_sv);
    int have_sv = st_sv >= 0;
    note(&s, "readouts", av_readouts(vals, why, M, have_sv ? sv : NULL, floor_, A, in->V, n,
                                     in->V ? in->dv : 0, prm->causal, in->tau, work, wr));
    note(&s, "semiseparable_rank", semiseparable(vals, why, M, n, have_sv ? sv : NULL, floor_, route));

    fprintf(out, "{\n  \"variant\": \"%s\"", av_variant_name(prm->variant));
    if (in->has_head) fprintf(out, ",\n  \"layer\": %d,\n  \"head\": %d", in->layer, in->head);
    fprintf(out, ",\n  \"n\": %d,\n  \"d\": %d,\n  \"causal\": %s,\n  \"route\": \"%s\"", n, in->d,
            prm->causal ? "true" : "false", in->accurate ? "accurate" : "fast");
    /* --summary leaves the spectra out (n numbers each; their readouts stay), but not why one is missing */
    if (!have_sv) put_null_reason(out, "singular_values", why_no_spectrum(why_buf, sizeof why_buf, "the matrix", st_sv, st_m));
    else if (!in->summary) put_array(out, "singular_values", sv, n);
    print_readouts(out, vals, why);
    long ceiling;
    if (av_semiseparable_ceiling(&ceiling, prm, n, in->d) == AV_OK) put_key_num(out, "semiseparable_ceiling", (double)ceiling);
    if (!have_sv || av_error_curve(curve, sv, n) != AV_OK) put_null_reason(out, "error_curve", av_reason_string(AV_REASON_NO_SPECTRUM));
    else if (!in->summary) put_array(out, "error_curve", curve, n + 1);
    print_entropy_hist(out, M, n, prm->causal, &s);
    long r = 0;
    int st_f = factor_spectrum(svf, &floor_f, &r, in);
    if (st_f >= 0 && !overflowed(st_f)) {
        note(&s, "factor spectrum", st_f);
        if (!in->summary) put_array(out, "singular_values_factor", svf, n);
        put_key_num(out, "factor_rank", (double)r);
        put_key_num(out, "noise_floor_factor", floor_f);
    } else {
        if (overflowed(st_f)) note(&s, "factors", st_f);
        put_null_reason(out, "singular_values_factor", why_no_spectrum(why_buf, sizeof why_buf, "the factors", st_f, st_f));
    }
    print_cost(out, in);
    fputs(",\n  \"status\": [", out);
    for (int i = 0; i < s.count; i++)
        fprintf(out, "%s\"%s: %s\"", i ? ", " : "", s.where[i], note_text(&s, i));
    fputs("]\n}\n", out);
    /* numerical warnings also get their line on stderr, as in `matrix`: one per sentence, naming every step
     * it came from (a zero row warns in the matrix and again in its entropies) and the head (--all-heads) */
    for (int i = 0; i < s.count; i++) {
        int first = s.code[i] > 0;
        for (int j = 0; j < i && first; j++) first = s.code[j] != s.code[i];
        if (!first) continue;
        fprintf(stderr, "attnviz: warning: %s%s%s", in->where ? in->where : "", in->where ? ": " : "", s.where[i]);
        for (int j = i + 1; j < s.count; j++)
            if (s.code[j] == s.code[i]) fprintf(stderr, ", %s", s.where[j]);
        fprintf(stderr, ": %s\n", av_status_string(s.code[i]));
    }
done:
    free(M); free(A); free(sv); free(svf); free(curve); free(work);
    return code;
}

// ----------------------------------------------------------------------------------------------------
// attnviz sweep: one readout against one knob, over values and seeds

/* 1 for the readouts that need the spectrum. */
static int spectral_readout(int r) { return r <= AV_R_STABLE_RANK || r == AV_R_NOISE_FLOOR || r == AV_R_SEMISEPARABLE_RANK; }

/* The readout `r` of the variant `prm` on the inputs (NaN when undefined or on a numerical failure of a
 * step); A is the softmax reference (or NULL). Returns 0, or the failing library status (< 0). */
static int one_readout(double *out, const av_params *prm, const avcli_inputs *in, const float *A, int r) {
    int n = in->n, st, why[AV_R_COUNT];
    double vals[AV_R_COUNT], floor_ = 0;
    *out = NAN;
    float *M = matrix_of(prm, in, &st);
    if (!M) return st;
    double *sv = NULL;
    size_t wr = av_readouts_work(n, in->V ? in->dv : 0);
    void *work = malloc(wr);
    if (!work) { free(M); return AV_ERR_NOMEM; }
    if (spectral_readout(r) && (sv = malloc(sizeof(double) * n)) != NULL &&
        spectrum_of(sv, &floor_, M, n, in->accurate ? AV_SVD_ACCURATE : AV_SVD_FAST) < 0) {
        free(sv);
        sv = NULL;
    }
    if (av_readouts(vals, why, M, sv, floor_, plain_softmax(prm) ? NULL : A, in->V, n,
                    in->V ? in->dv : 0, prm->causal, in->tau, work, wr) == AV_OK &&
        (r != AV_R_SEMISEPARABLE_RANK || semiseparable(vals, why, M, n, sv, floor_, in->accurate ? AV_SVD_ACCURATE : AV_SVD_FAST) >= 0) &&
        why[r] == AV_REASON_NONE)
        *out = vals[r];
    free(M); free(sv); free(work);
    return 0;
}

int avcli_cmd_sweep(const avcli_inputs *in, const avcli_sweep *sw, FILE *out) {
    const int k = sw->knob, S = sw->seeds, count = sw->count;
    const av_knob_desc *kd = av_knob_info(k);
    double *mean = malloc(sizeof(double) * count), *lo = malloc(sizeof(double) * count),
           *hi = malloc(sizeof(double) * count);
    float *A = NULL;
    int code = 0, st;
    if (!mean || !lo || !hi) { code = avcli_fail_system("out of memory"); goto done; }
    av_params ref;
    av_params_default(&ref, av_variant_from_name("softmax"));
    ref.causal = in->prm.causal;
    ref.scale = in->prm.scale;
    A = matrix_of(&ref, in, &st); /* the reference does not depend on the swept knob (scale is not swept) */
    for (int v = 0; v < count && !code; v++) {
        double sum = 0, mn = INFINITY, mx = -INFINITY;
        int got = 0;
        for (int s = 0; s < S && !code; s++) {
            av_params p = in->prm, res;
            av_params_set(&p, k, sw->values[v]); /* as parsed: −1 stands for a real 0 where the knob has one */
            if (S > 1) /* the random matrices redrawn with seed + s; Q, K, V fixed */
                p.seed = (k == AV_KNOB_SEED ? (uint32_t)sw->values[v] : in->prm.seed) + (uint32_t)s;
            int bad = -1;
            if ((st = av_params_check(&res, &p, in->n, in->d, &bad)) != AV_OK) {
                double shown = (kd->flags & AV_KF_MINUS1_ZERO) && sw->values[v] == -1 ? 0 : sw->values[v];
                code = avcli_fail("--values: value %d \"%.10g\": %s %s for %s at n = %d", v + 1, shown, bad >= 0 ? av_knob_info(bad)->flag : kd->flag,
                                  st == AV_ERR_KNOB ? "out of range" : av_status_string(st), av_variant_name(p.variant), in->n);
                break;
            }
            double r;
            if ((st = one_readout(&r, &p, in, A, sw->readout)) < 0) {
                code = st == AV_ERR_NOMEM ? avcli_fail_system("out of memory (n = %d)", in->n)
                                          : avcli_fail("--variant %s: %s", av_variant_name(p.variant), av_status_string(st));
                break;
            }
            if (isfinite(r)) {
                sum += r;
                mn = r < mn ? r : mn;
                mx = r > mx ? r : mx;
                got++;
            }
        }
        mean[v] = got ? sum / got : NAN; /* over the seeds where the readout is defined */
        lo[v] = got ? mn : NAN;
        hi[v] = got ? mx : NAN;
    }
    if (code) goto done;
    fprintf(out, "{\n  \"variant\": \"%s\",\n  \"knob\": \"%s\",\n  \"readout\": \"%s\",\n  \"seeds\": %d",
            av_variant_name(in->prm.variant), kd->key, av_readout_name(sw->readout), S);
    fputs(",\n  \"values\": [", out); /* as typed: a real 0 printed as 0, not the library's −1 */
    for (int v = 0; v < count; v++) {
        if (v) fputc(',', out);
        put_num(out, (kd->flags & AV_KF_MINUS1_ZERO) && sw->values[v] == -1 ? 0 : sw->values[v]);
    }
    fputc(']', out);
    put_array(out, "mean", mean, count);
    put_array(out, "min", lo, count);
    put_array(out, "max", hi, count);
    fputs("\n}\n", out);
done:
    free(mean); free(lo); free(hi); free(A);
    return code;
}
