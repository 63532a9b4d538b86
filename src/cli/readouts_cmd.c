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
#include <string.h>

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

/* Whether a step's warning concerns the readouts asked for (in->only, table --readouts): the steps that
 * serve one readout (its own name, the factor spectrum's two) warn only when it was asked for; the matrix,
 * the reference, the spectrum and av_readouts serve them all. */
static int step_asked(const avcli_inputs *in, const char *step) {
    static const char *const OWN[][3] = {{"row_entropy_hist"}, {"semiseparable_rank"}, {"row_kl_mean"},
                                         {"factor spectrum", "factor_rank", "noise_floor_factor"},
                                         {"factors", "factor_rank", "noise_floor_factor"}};
    if (!in->only) return 1;
    for (size_t o = 0; o < sizeof OWN / sizeof *OWN; o++) {
        if (strcmp(step, OWN[o][0]) != 0) continue;
        for (int r = 0; r < in->nonly; r++)
            for (int k = 0; k < 3; k++)
                if (OWN[o][k] && strcmp(in->only[r], OWN[o][k]) == 0 && (k > 0 || !OWN[o][1])) return 1;
        return 0;
    }
    return 1;
}

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

/* row_kl_mean where av_readouts, which sees M alone, answered "zero where positive": av_row_kl takes such
 * cells' logarithms from the log domain (Q, K and the knobs), so a float32 underflow gives the true, finite
 * KL and only a true 0 (+∞) keeps the reason. Every path that prints a KL calls it. Returns the status. */
static int true_row_kl(double *vals, int *why, const float *M, const float *A, const av_params *prm,
                       const avcli_inputs *in) {
    if (!A || why[AV_R_ROW_KL_MEAN] != AV_REASON_ZERO_WHERE_POSITIVE) return AV_OK;
    size_t wb = av_row_kl_work(prm, in->n, in->d);
    void *w = wb ? malloc(wb) : NULL;
    if (!w) return wb ? AV_ERR_NOMEM : AV_ERR_TOO_LARGE;
    double kl;
    int reason, st = av_row_kl(&kl, &reason, M, A, in->Q, in->K, in->n, in->d, prm, w, wb);
    free(w);
    if (st >= 0) {
        vals[AV_R_ROW_KL_MEAN] = kl;
        why[AV_R_ROW_KL_MEAN] = reason;
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
        fprintf(stderr, "attnviz: --variant %s: %s\n", avcli_variant_label(prm->variant, in->alias), av_status_string(st));
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
    note(&s, "row_kl_mean", true_row_kl(vals, why, M, A, prm, in));

    fprintf(out, "{\n  \"variant\": \"%s\"", avcli_variant_label(prm->variant, in->alias));
    if (in->alias) fprintf(out, ",\n  \"family\": \"%s\"", av_variant_name(prm->variant)); /* a preset's family */
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
     * it came from (a zero row warns in the matrix and again in its entropies) and the head (--all-heads);
     * with table --readouts only the steps the readouts asked for need */
    for (int i = 0; i < s.count; i++) {
        int first = s.code[i] > 0 && step_asked(in, s.where[i]);
        for (int j = 0; j < i && first; j++) first = s.code[j] != s.code[i] || !step_asked(in, s.where[j]);
        if (!first) continue;
        fprintf(stderr, "attnviz: warning: %s%s%s", in->where ? in->where : "", in->where ? ": " : "", s.where[i]);
        for (int j = i + 1; j < s.count; j++)
            if (s.code[j] == s.code[i] && step_asked(in, s.where[j])) fprintf(stderr, ", %s", s.where[j]);
        fprintf(stderr, ": %s\n", av_status_string(s.code[i]));
    }
done:
    free(M); free(A); free(sv); free(svf); free(curve); free(work);
    return code;
}

// ----------------------------------------------------------------------------------------------------
// attnviz sweep: readouts against one knob, over values and seeds

/* 1 for the readouts that need the spectrum (the registry's kind). */
static int spectral_readout(int r) { return av_readout_info(r)->kind == AV_RK_SPECTRAL; }

float *avcli_reference(const avcli_inputs *in, int *status) {
    av_params ref;
    av_params_default(&ref, AV_SOFTMAX);
    ref.causal = in->prm.causal;
    ref.scale = in->prm.scale;
    return matrix_of(&ref, in, status);
}

int avcli_readout_values(double *vals, int *why, const av_params *prm, const avcli_inputs *in, const float *A,
                         int spectral) {
    int n = in->n, st, route = in->accurate ? AV_SVD_ACCURATE : AV_SVD_FAST;
    double floor_ = 0;
    float *M = matrix_of(prm, in, &st);
    if (!M) return st;
    double *sv = NULL;
    size_t wr = av_readouts_work(n, in->V ? in->dv : 0);
    void *work = malloc(wr);
    if (!work || (spectral && !(sv = malloc(sizeof(double) * n)))) { free(M); free(work); return AV_ERR_NOMEM; }
    if (sv && spectrum_of(sv, &floor_, M, n, route) < 0) { /* the spectral readouts say "no spectrum" */
        free(sv);
        sv = NULL;
    }
    st = av_readouts(vals, why, M, sv, floor_, plain_softmax(prm) ? NULL : A, in->V, n, in->V ? in->dv : 0,
                     prm->causal, in->tau, work, wr);
    /* AV_ERR_NONFINITE: M overflowed; every readout is undefined and carries that reason */
    if (st >= 0 && spectral) {
        int s2 = semiseparable(vals, why, M, n, sv, floor_, route);
        if (s2 == AV_ERR_NOMEM) st = s2;
    } else if (st >= 0) {
        why[AV_R_SEMISEPARABLE_RANK] = AV_REASON_NO_SPECTRUM;
    }
    if (st >= 0) { /* as readouts: only a lack of memory fails the caller, else av_readouts' answer stays */
        int s2 = true_row_kl(vals, why, M, plain_softmax(prm) ? NULL : A, prm, in);
        if (s2 == AV_ERR_NOMEM) st = s2;
    }
    for (int r = 0; st >= 0 && r < AV_R_COUNT; r++) /* a value is a number with no reason, or NaN with one */
        if (why[r] == AV_REASON_NONE && !isfinite(vals[r])) why[r] = AV_REASON_NONFINITE;
        else if (why[r] != AV_REASON_NONE) vals[r] = NAN;
    free(M); free(sv); free(work);
    return st == AV_ERR_NONFINITE ? AV_OK : st;
}

/* Per value and readout: the sum, min, max and count of the defined seeds, and the reasons (a bit per
 * av_reason) of the undefined ones. */
typedef struct sweep_cell { double sum, lo, hi; int got, reasons; } sweep_cell;

static void put_reasons(FILE *out, const sweep_cell *c, int count, int stride) {
    fputc('[', out);
    for (int v = 0; v < count; v++) {
        const sweep_cell *x = &c[(size_t)v * stride];
        fputs(v ? "," : "", out);
        if (x->got) { fputs("null", out); continue; } /* defined: nothing to explain */
        fputc('"', out);
        for (int r = 0, first = 1; r < 31; r++) /* every distinct reason of the seeds, in code order */
            if (x->reasons >> r & 1) { fprintf(out, "%s%s", first ? "" : "; ", av_reason_string(r)); first = 0; }
        fputc('"', out);
    }
    fputc(']', out);
}

/* "mean", "min", "max", "defined", "reasons" of readout column `j`, each on its own line after `indent`. */
static void put_stats(FILE *out, const sweep_cell *cells, int count, int stride, const char *indent) {
    static const char *const KEYS[3] = {"mean", "min", "max"};
    for (int k = 0; k < 3; k++) {
        fprintf(out, "%s%s\"%s\": [", k ? ",\n" : "", indent, KEYS[k]);
        for (int v = 0; v < count; v++) {
            const sweep_cell *x = &cells[(size_t)v * stride];
            fputs(v ? "," : "", out);
            put_num(out, !x->got ? NAN : k == 0 ? x->sum / x->got : k == 1 ? x->lo : x->hi);
        }
        fputc(']', out);
    }
    fprintf(out, ",\n%s\"defined\": [", indent);
    for (int v = 0; v < count; v++) fprintf(out, "%s%d", v ? "," : "", cells[(size_t)v * stride].got);
    fprintf(out, "],\n%s\"reasons\": ", indent);
    put_reasons(out, cells, count, stride);
}

int avcli_cmd_sweep(const avcli_inputs *in, const avcli_sweep *sw, FILE *out) {
    const int k = sw->knob, S = sw->seeds, count = sw->count, R = sw->nreadouts;
    const av_knob_desc *kd = av_knob_info(k);
    sweep_cell *cells = calloc((size_t)count * R, sizeof *cells);
    int code = 0, st = AV_OK, spectral = 0;
    for (int j = 0; j < R; j++) spectral |= spectral_readout(sw->readout[j]);
    /* the reference does not depend on the swept knob (scale is not swept) */
    float *A = cells ? avcli_reference(in, &st) : NULL;
    if (!cells || st == AV_ERR_NOMEM) { code = avcli_fail_system("out of memory (n = %d)", in->n); goto done; }
    for (int v = 0; v < count && !code; v++) {
        for (int s = 0; s < S && !code; s++) {
            av_params p = in->prm, res;
            av_params_set(&p, k, sw->values[v]); /* as parsed: −1 stands for a real 0 where the knob has one */
            if (S > 1) /* the random matrices redrawn with seed + s; Q, K, V fixed */
                p.seed = (k == AV_KNOB_SEED ? (uint32_t)sw->values[v] : in->prm.seed) + (uint32_t)s;
            int bad = -1;
            if ((st = av_params_check(&res, &p, in->n, in->d, &bad)) != AV_OK) {
                double shown = (kd->flags & AV_KF_MINUS1_ZERO) && sw->values[v] == -1 ? 0 : sw->values[v];
                code = avcli_fail("--values: value %d \"%.10g\": %s %s for %s at n = %d", v + 1, shown, bad >= 0 ? av_knob_info(bad)->flag : kd->flag,
                                  st == AV_ERR_KNOB ? "out of range" : av_status_string(st), avcli_variant_label(p.variant, in->alias), in->n);
                break;
            }
            double vals[AV_R_COUNT];
            int why[AV_R_COUNT];
            if ((st = avcli_readout_values(vals, why, &p, in, A, spectral)) < 0) {
                code = st == AV_ERR_NOMEM ? avcli_fail_system("out of memory (n = %d)", in->n)
                                          : avcli_fail("--variant %s: %s", avcli_variant_label(p.variant, in->alias), av_status_string(st));
                break;
            }
            for (int j = 0; j < R; j++) {
                sweep_cell *c = &cells[(size_t)v * R + j];
                double r = vals[sw->readout[j]];
                if (why[sw->readout[j]] != AV_REASON_NONE) { c->reasons |= 1 << why[sw->readout[j]]; continue; }
                c->lo = c->got && c->lo < r ? c->lo : r;
                c->hi = c->got && c->hi > r ? c->hi : r;
                c->sum += r;
                c->got++;
            }
        }
    }
    if (code) goto done;
    fputc('{', out);
    if (sw->layer >= 0) fprintf(out, "\n  \"layer\": %d,\n  \"head\": %d,", sw->layer, sw->head);
    fprintf(out, "\n  \"variant\": \"%s\",\n  ", avcli_variant_label(in->prm.variant, in->alias));
    if (in->alias) fprintf(out, "\"family\": \"%s\",\n  ", av_variant_name(in->prm.variant)); /* a preset's family */
    fprintf(out, "\"knob\": \"%s\",\n  ", kd->key);
    if (!sw->multi) fprintf(out, "\"readout\": \"%s\"", av_readout_name(sw->readout[0]));
    else {
        fputs("\"readouts\": [", out);
        for (int j = 0; j < R; j++) fprintf(out, "%s\"%s\"", j ? ", " : "", av_readout_name(sw->readout[j]));
        fputc(']', out);
    }
    fprintf(out, ",\n  \"seeds\": %d,\n  \"values\": [", S); /* as typed: a real 0 printed as 0, not the library's −1 */
    for (int v = 0; v < count; v++) {
        if (v) fputc(',', out);
        put_num(out, (kd->flags & AV_KF_MINUS1_ZERO) && sw->values[v] == -1 ? 0 : sw->values[v]);
    }
    fputs("],\n", out);
    if (!sw->multi) put_stats(out, cells, count, R, "  ");
    else {
        fputs("  \"results\": {", out);
        for (int j = 0; j < R; j++) {
            fprintf(out, "%s\n    \"%s\": {\n", j ? "," : "", av_readout_name(sw->readout[j]));
            put_stats(out, cells + j, count, R, "      ");
            fputs("\n    }", out);
        }
        fputs("\n  }", out);
    }
    fputs("\n}\n", out);
done:
    free(cells); free(A);
    return code;
}
