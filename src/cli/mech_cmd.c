/* mech_cmd.c: `attnviz recall` and `attnviz distill`, the mechanism views' computations from the command
 * line (docs/mechanisms.md).
 *
 *   attnviz recall  --variant NAME --pairs N --d D [--seeds S] [knobs] [-o OUT.json]
 *   attnviz distill --q Q.npy --k K.npy [--v V.npy] [--causal] [--layer L --head H] [--hedgehog-w W0.npy]
 *                   [--scale X] --steps N [--lr X] [--holdout Q2.npy K2.npy [V2.npy]]
 *                   [--all-heads [--format json|csv]] -o W.npy
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void put_num(FILE *out, double x) {
    if (isfinite(x)) fprintf(out, "%.17g", x);
    else fputs("null", out);
}

static void put_array(FILE *out, const double *x, int count) {
    fputc('[', out);
    for (int i = 0; i < count; i++) {
        if (i) fputc(',', out);
        put_num(out, x[i]);
    }
    fputc(']', out);
}

/* Split argv into the command's own flags (names[k] → *val[k]) and the rest. 0 or the exit status. */
static int own_flags(int argc, char **argv, const char *const *names, const char **val, int count, char **rest,
                     int *nrest) {
    *nrest = 0;
    for (int i = 0; i < argc; i++) {
        int f = 0;
        while (f < count && strcmp(argv[i], names[f])) f++;
        if (f == count) { rest[(*nrest)++] = argv[i]; continue; }
        if (val[f]) return avcli_fail("%s: given twice", names[f]);
        if (i + 1 >= argc) return avcli_fail("%s: needs a value", names[f]);
        val[f] = argv[++i];
    }
    return 0;
}

static int parse_int(const char *s, long lo, long hi, long *out) {
    long long v;
    if (!avcli_parse_long(s, lo, hi, &v)) return 0;
    *out = (long)v;
    return 1;
}

// ----------------------------------------------------------------------------------------------------
// recall

typedef struct recall_run recall_run;
static int recall_out(avcli_inputs *in, const recall_run *rr);

typedef struct recall_run {
    int pairs, d, seeds;
    const float *K, *V; /* the reader's own pairs (--k, --v), or NULL: the protocol's draws */
} recall_run;

/* The numerical warnings a status can be, in code order, and a bit for each. */
static const int WARNINGS[] = {AV_WARN_ZERO_ROW, AV_WARN_OVERFLOW, AV_WARN_NO_CONVERGENCE, AV_WARN_PRODUCT_OVERFLOW,
                                AV_WARN_UNDERFLOW_ROW};
enum { NWARN = sizeof WARNINGS / sizeof *WARNINGS };

/* Draw the pairs S times, recall every key, print the per-seed mean errors and their mean, min, max and
 * sample std. A statistic is over all S draws or not given: when some draw's error is Inf or NaN they are
 * null, and recall_error_finite says how many draws were finite (docs/mechanisms.md). */
static int recall_json(avcli_inputs *in, const recall_run *rr, FILE *out) {
    int N = rr->pairs, d = rr->d;
    size_t wb = av_recall_work(&in->prm, N, d);
    float *K = malloc(sizeof(float) * (size_t)N * d), *V = malloc(sizeof(float) * (size_t)N * d);
    double *err = malloc(sizeof(double) * (size_t)N), *per = malloc(sizeof(double) * (size_t)rr->seeds);
    void *w = wb ? malloc(wb) : NULL;
    int code = 0, finite = 0, seen[NWARN] = {0}; /* seen[k]: draws that returned WARNINGS[k] */
    if (!K || !V || !err || !per || !w) code = wb ? avcli_fail_system("out of memory") : avcli_fail("recall: %s", av_status_string(AV_ERR_TOO_LARGE));
    double mean = 0, lo = INFINITY, hi = -INFINITY;
    for (int s = 0; !code && s < rr->seeds; s++) {
        if (!rr->K) av_recall_draw(K, V, N, d, (uint32_t)s);
        if (in->ab_made && (code = avcli_rwkv7_ab(in, rr->K ? rr->K : K, N, d))) break; /* rwkv7's a, b from these keys */
        int st = av_recall_pairs(err, rr->K ? rr->K : K, rr->K ? rr->V : V, N, d, &in->prm, w, wb);
        if (st < 0) { code = avcli_fail("--variant %s: %s", avcli_variant_label(in->prm.variant, in->alias), av_status_string(st)); break; }
        for (int k = 0; k < NWARN; k++) seen[k] += st == WARNINGS[k];
        double m = 0;
        for (int i = 0; i < N; i++) m += err[i];
        per[s] = m / N;
        finite += isfinite(per[s]) != 0;
        mean += per[s];
        lo = per[s] < lo ? per[s] : lo;
        hi = per[s] > hi ? per[s] : hi;
    }
    if (!code) {
        int all = finite == rr->seeds;
        mean /= rr->seeds;
        double var = 0;
        for (int s = 0; s < rr->seeds; s++) var += (per[s] - mean) * (per[s] - mean);
        /* one line per warning on stderr; "status" the sentence of each, or "ok" */
        for (int k = 0; k < NWARN; k++)
            if (seen[k])
                fprintf(stderr, "attnviz: warning: recall: %s (in %d of %d draws)\n", av_status_string(WARNINGS[k]), seen[k], rr->seeds);
        double scale = in->prm.scale == 0 ? 1.0 : in->prm.scale;
        fprintf(out, "{\n  \"variant\": \"%s\",\n  ", avcli_variant_label(in->prm.variant, in->alias));
        if (in->alias) fprintf(out, "\"family\": \"%s\",\n  ", av_variant_name(in->prm.variant)); /* a preset's family */
        fprintf(out, "\"pairs\": %d,\n  \"d\": %d,\n  \"seeds\": %d,\n  \"scale\": ", N, d, rr->seeds);
        put_num(out, scale);
        fputs(",\n  \"recall_error_mean\": ", out);
        put_num(out, all ? mean : NAN);
        fputs(",\n  \"recall_error_min\": ", out);
        put_num(out, all ? lo : NAN);
        fputs(",\n  \"recall_error_max\": ", out);
        put_num(out, all ? hi : NAN);
        fputs(",\n  \"recall_error_std\": ", out); /* sample std: undefined for one draw */
        put_num(out, all && rr->seeds > 1 ? sqrt(var / (rr->seeds - 1)) : NAN);
        fprintf(out, ",\n  \"recall_error_finite\": %d", finite);
        fputs(",\n  \"recall_error\": ", out);
        put_array(out, per, rr->seeds);
        if (rr->K) { /* one error per pair of the reader's own */
            fputs(",\n  \"errors\": ", out);
            put_array(out, err, N);
        }
        fputs(",\n  \"linear_state_law\": ", out); /* √((N−1)/d): the linear state's expected error */
        put_num(out, sqrt((N - 1.0) / d));
        fputs(",\n  \"status\": \"", out);
        int said = 0;
        for (int k = 0; k < NWARN; k++)
            if (seen[k]) fprintf(out, "%s%s", said++ ? "; " : "", av_status_string(WARNINGS[k]));
        fprintf(out, "%s\"\n}\n", said ? "" : av_status_string(AV_OK));
    }
    free(K); free(V); free(err); free(per); free(w);
    return code;
}

/* --k K.npy --v V.npy: the reader's own pairs, N×d each, float32 or float64, finite. */
static int read_pairs(float **out, int64_t *shape, const char *flag, const char *path) {
    unsigned char *buf;
    size_t len;
    int code = avcli_read_file(flag, path, &buf, &len);
    if (code) return code;
    av_npy_info info;
    if (av_npy_parse(&info, buf, len) != AV_OK) { free(buf); return avcli_fail("%s %s: %s", flag, path, av_npy_error()); }
    if (info.ndim != 2 || info.shape[0] < 1 || info.shape[0] > AV_MAX_N || info.shape[1] < 1 || info.shape[1] > AV_MAX_D) {
        free(buf);
        return avcli_fail("%s %s: not a 2-D (N, d) array with N in 1..%d and d in 1..%d", flag, path, AV_MAX_N, AV_MAX_D);
    }
    *out = malloc(sizeof(float) * info.count);
    if (!*out) { free(buf); return avcli_fail_system("%s %s: out of memory", flag, path); }
    int st = av_npy_decode_f32(*out, &info, buf, len);
    free(buf);
    if (st != AV_OK) return avcli_fail("%s %s: %s", flag, path, av_npy_error());
    for (size_t e = 0; e < info.count; e++)
        if (!isfinite((*out)[e])) return avcli_fail("%s %s: %s", flag, path, av_status_string(AV_ERR_NONFINITE));
    shape[0] = info.shape[0];
    shape[1] = info.shape[1];
    return 0;
}

int avcli_cmd_recall(int argc, char **argv) {
    static const char *const names[5] = {"--pairs", "--d", "--seeds", "--k", "--v"};
    const char *val[5] = {0};
    char **rest = malloc(sizeof(char *) * (size_t)(argc + 1));
    if (!rest) return avcli_fail_system("out of memory");
    int nrest, code = own_flags(argc, argv, names, val, 5, rest, &nrest);
    long N = 0, d = 0, seeds = 1;
    float *Kown = NULL, *Vown = NULL;
    if (!code && (val[3] || val[4])) { /* the reader's own pairs instead of the protocol's draws */
        int64_t ks[2], vs[2];
        if (!val[3] || !val[4]) code = avcli_fail("%s: needs %s too (keys and values, both (N, d))", val[3] ? "--k" : "--v", val[3] ? "--v" : "--k");
        else if (val[0] || val[1] || val[2]) code = avcli_fail("%s: not with --k and --v (their shape gives N and d)", val[0] ? "--pairs" : val[1] ? "--d" : "--seeds");
        if (!code) code = read_pairs(&Kown, ks, "--k", val[3]);
        if (!code) code = read_pairs(&Vown, vs, "--v", val[4]);
        if (!code && (ks[0] != vs[0] || ks[1] != vs[1])) code = avcli_fail("--v %s: shape does not match --k's (N, d)", val[4]);
        if (!code) { N = ks[0]; d = ks[1]; }
    }
    if (!code && !Kown && !val[0]) code = avcli_fail("--pairs: required (the number of key-value pairs written, 1..%d)", AV_MAX_N);
    if (!code && !Kown && !parse_int(val[0], 1, AV_MAX_N, &N)) code = avcli_fail("--pairs %s: not an integer in 1..%d", avcli_brief(val[0]), AV_MAX_N);
    if (!code && !Kown && !val[1]) code = avcli_fail("--d: required (the key and value dimension, 1..%d)", AV_MAX_D);
    if (!code && !Kown && !parse_int(val[1], 1, AV_MAX_D, &d)) code = avcli_fail("--d %s: not an integer in 1..%d", avcli_brief(val[1]), AV_MAX_D);
    if (!code && val[2] && !parse_int(val[2], 1, 10000, &seeds)) code = avcli_fail("--seeds %s: not an integer in 1..10000", avcli_brief(val[2]));
    avcli_inputs in;
    memset(&in, 0, sizeof in);
    in.n = (int)N;
    in.d = (int)d;
    if (!code) code = avcli_parse_knobs(&in, nrest, rest);
    free(rest);
    if (!code) code = recall_out(&in, &(recall_run){(int)N, (int)d, (int)seeds, Kown, Vown});
    avcli_free(&in);
    free(Kown);
    free(Vown);
    return code;
}

static int recall_out(avcli_inputs *in, const recall_run *rr) {
    int code;
    size_t wb = av_recall_work(&in->prm, in->n, in->d);
    if (!wb) { /* the reason, from a call that checks the arguments first */
        double e;
        float one = 0;
        int st = av_recall_pairs(&e, &one, &one, 1, 1, &in->prm, NULL, 0);
        if (st == AV_ERR_NO_LINEAR || st == AV_ERR_FEATURE_DIM || st >= 0)
            return avcli_fail("--variant %s: no memory to recall from (%s; softmax or a variant with a recurrent state)",
                              avcli_variant_label(in->prm.variant, in->alias), av_status_string(st == AV_ERR_NULL || st >= 0 ? AV_ERR_NO_LINEAR : st));
        return avcli_fail("--variant %s: %s", avcli_variant_label(in->prm.variant, in->alias), av_status_string(st));
    }
    if (!in->out) return recall_json(in, rr, stdout);
    avcli_out o;
    if (avcli_out_open(&o, in->out) != 0) return avcli_out_fail("-o", in->out, errno);
    if ((code = recall_json(in, rr, o.f)) != 0) {
        avcli_out_discard(&o);
    } else if (avcli_out_close(&o) != 0 || avcli_out_commit(&o) != 0) {
        code = avcli_out_fail("-o", in->out, errno);
        avcli_out_discard(&o);
    }
    return code;
}

// ----------------------------------------------------------------------------------------------------
// distill

/* Mean row KL(A ‖ M) over the allowed entries (M's rows normalised), or NaN where M is not a distribution
 * where A is positive. */
static double mean_kl(const float *A, const float *M, int n, int causal) {
    double kl = 0;
    for (int i = 0; i < n; i++) {
        int jn = causal ? i + 1 : n;
        double s = 0;
        for (int j = 0; j < jn; j++) s += M[(size_t)i * n + j];
        for (int j = 0; j < jn; j++) {
            double a = A[(size_t)i * n + j], m = M[(size_t)i * n + j] / s;
            if (a > 0) kl += m > 0 ? a * (log(a) - log(m)) : INFINITY;
        }
    }
    return kl / n;
}

/* The softmax target A distill trains against (av_distill's: softmax with this scale and mask): its status,
 * A written when A is not NULL. */
static int target_of(float *A, const avcli_inputs *in) {
    av_params ps;
    av_params_default(&ps, AV_SOFTMAX);
    ps.causal = in->prm.causal;
    ps.scale = in->prm.scale;
    size_t n2 = (size_t)in->n * in->n, wa = av_matrix_work(&ps, in->n, in->d);
    float *own = A ? NULL : malloc(sizeof(float) * n2);
    void *w = malloc(wa ? wa : 1);
    int st = (A || own) && w && wa ? av_matrix(A ? A : own, in->Q, in->K, in->n, in->d, &ps, w, wa) : AV_ERR_NOMEM;
    free(own); free(w);
    return st;
}

/* KL of another variant (elu+1, the comparison the docs quote) to the same softmax; NaN when either matrix
 * is not finite. */
static double kl_of(int variant, const avcli_inputs *in) {
    av_params p;
    av_params_default(&p, variant);
    p.causal = in->prm.causal;
    size_t n2 = (size_t)in->n * in->n, wm = av_matrix_work(&p, in->n, in->d);
    float *A = malloc(sizeof(float) * n2), *M = malloc(sizeof(float) * n2);
    void *w = malloc(wm ? wm : 1);
    double kl = NAN;
    if (A && M && w && wm && target_of(A, in) == AV_OK && av_matrix(M, in->Q, in->K, in->n, in->d, &p, w, wm) >= 0)
        kl = mean_kl(A, M, in->n, p.causal);
    free(A); free(M); free(w);
    return kl;
}

/* Why a step was refused: the library's status, or the CLI's own refusal of an update past float32's range. */
enum { WHY_LIBRARY, WHY_FLOAT32 };

/* What stopped the training, in words, into why[size]: which step, what was not finite, and which W was
 * kept. taken: steps taken; loss[taken] the loss at the start of the refused step (NaN when not finite).
 * The library's status sentences name kernels' causes (a feature, q·k), which are not distill's. */
static void distill_why(char *why, size_t size, int why_kind, int st, int tst, int taken, const double *loss) {
    const char *s = taken == 1 ? "" : "s";
    if (tst > 0)
        snprintf(why, size, "the softmax target (this scale and mask) is not finite (%s); no step was taken, so W.npy "
                            "holds the starting W", av_status_string(tst));
    else if (why_kind == WHY_FLOAT32)
        snprintf(why, size, "step %d's update would take W past float32's range; W.npy holds W after %d step%s",
                 taken + 1, taken, s);
    else if (st == AV_WARN_PRODUCT_OVERFLOW)
        snprintf(why, size, "step %d's update would take W past the double range (the learning rate is too large); "
                            "W.npy holds W after %d step%s", taken + 1, taken, s);
    else
        snprintf(why, size, "the %s at the start of step %d is not finite; W.npy holds W after %d step%s",
                 isfinite(loss[taken]) ? "gradient" : "loss", taken + 1, taken, s);
}

/* Whether every entry of W survives W.npy's float32 (|w| ≤ FLT_MAX; a larger one would be written as Inf). */
static int fits_float32(const double *W, size_t cnt) {
    for (size_t e = 0; e < cnt; e++)
        if (!(fabs(W[e]) <= FLT_MAX)) return 0;
    return 1;
}

/* The distillation metrics: readouts of Hedgehog's matrix (with a given W) against the softmax target, the
 * same numbers `attnviz readouts --variant hedgehog --hedgehog-w W.npy` prints for those inputs. */
static const int METRICS[] = {AV_R_ROW_KL_MEAN, AV_R_ERROR_FRO_REL, AV_R_ROW_ENTROPY_MEAN, AV_R_OUTPUT_ERROR_REL};
enum { NMET = AVCLI_DISTILL_METRICS, BEFORE = AVCLI_BEFORE, AFTER = AVCLI_AFTER, TRAIN = AVCLI_TRAIN, HOLDOUT = AVCLI_HOLDOUT };
_Static_assert(sizeof METRICS / sizeof *METRICS == AVCLI_DISTILL_METRICS, "cli.h's metric count");
typedef avcli_distill_result distill_result; /* cli.h: one head's distillation (linearize --distill reuses it) */
typedef avcli_distill_run distill_run;

/* Hedgehog's metrics on `in` with W (NULL: the identity) into met/why. 0 or the failing status. */
static int distill_metrics(double *met, int *why, const avcli_inputs *in, const float *W, int cols) {
    av_params p = in->prm;
    double vals[AV_R_COUNT];
    int all[AV_R_COUNT], st;
    if (W) av_params_set_hedgehog(&p, W, cols);
    float *A = avcli_reference(in, &st);
    if (!A) return st;
    st = avcli_readout_values(vals, all, &p, in, A, 0);
    free(A);
    for (int k = 0; k < NMET && st >= 0; k++) met[k] = vals[METRICS[k]], why[k] = all[METRICS[k]];
    return st;
}

/* Train W on `in` (--steps Adam steps; the loop of one head), then the metrics on `in` and `ho` (or NULL).
 * Warnings go to stderr, prefixed by run->where. 0, or one line and the exit status. */
int avcli_distill_head(distill_result *res, const distill_run *run, const avcli_inputs *in, const avcli_inputs *ho) {
    int n = in->n, d = in->d, cols = in->prm.hedgehog_w ? in->prm.hedgehog_cols : d, code = 0;
    long steps = run->steps;
    size_t cnt = (size_t)d * cols, wb = av_distill_work(&in->prm, n, d, cols);
    double *W = malloc(sizeof(double) * cnt), *mom = malloc(sizeof(double) * 2 * cnt), *Wbefore = malloc(sizeof(double) * cnt);
    void *w = wb ? malloc(wb) : NULL;
    double *loss = res->loss;
    if (!W || !mom || !Wbefore || !w) code = wb ? avcli_fail_system("out of memory") : avcli_fail("distill: %s", av_status_string(AV_ERR_TOO_LARGE));
    for (size_t e = 0; !code && e < cnt; e++) /* the start: --hedgehog-w, or the identity */
        W[e] = in->prm.hedgehog_w ? in->prm.hedgehog_w[e] : (e / (size_t)cols == e % (size_t)cols);
    int st = AV_OK, tst = AV_OK, taken = 0, why_kind = WHY_LIBRARY;
    for (long k = 0; k <= steps; k++) loss[k] = NAN; /* av_distill leaves them when A overflowed */
    /* One step a call, Adam's state carried (the same bits as one call), so the step that was refused and
     * the W that was kept are known, not inferred from the losses. A target that is not finite takes none. */
    if (!code && (tst = target_of(NULL, in)) != AV_OK) st = tst;
    for (; !code && st == AV_OK && taken < steps; taken += st == AV_OK) {
        memcpy(Wbefore, W, sizeof(double) * cnt);
        st = av_distill(W, mom, taken, &loss[taken], 1, run->lr, cols, in->Q, in->K, n, d, &in->prm, w, wb);
        /* W is float64 but W.npy float32: an update past its range (a huge --lr) is refused here, as the
         * library refuses one past the double range, so W.npy never holds Inf */
        if (st == AV_OK && !fits_float32(W, cnt)) {
            memcpy(W, Wbefore, sizeof(double) * cnt);
            st = AV_WARN_OVERFLOW, why_kind = WHY_FLOAT32;
        }
    }
    if (!code && st < 0) code = st == AV_ERR_NOMEM ? avcli_fail_system("out of memory") : avcli_fail("distill: %s", av_status_string(st));
    snprintf(res->why, sizeof res->why, "%s", av_status_string(AV_OK));
    if (!code && st > 0) {
        distill_why(res->why, sizeof res->why, why_kind, st, tst, taken, loss);
        fprintf(stderr, "attnviz: warning: distill: %s%s\n", run->where, res->why);
    }
    if (!code && tst == AV_OK) { /* the loss at the W written; a step refused above left it at that step's */
        int st2 = av_distill_loss(&loss[steps], NULL, W, cols, in->Q, in->K, n, d, &in->prm, w, wb);
        if (st2 < 0) code = avcli_fail("distill: %s", av_status_string(st2));
        else if (st2 > 0 && st == AV_OK) {
            st = st2;
            snprintf(res->why, sizeof res->why, "the loss at the W in W.npy is not finite");
            fprintf(stderr, "attnviz: warning: distill: %s%s\n", run->where, res->why);
        }
    }
    for (size_t e = 0; !code && e < cnt; e++) res->Wf[e] = (float)W[e];
    res->taken = taken;
    res->st = st;
    res->n_holdout = ho ? ho->n : 0;
    const avcli_inputs *sets[2] = {in, ho};
    for (int set = 0; !code && set < 2; set++) /* before: the starting W; after: W.npy's float32 W */
        for (int ba = 0; !code && ba < 2 && sets[set]; ba++) {
            int sm = distill_metrics(res->met[set][ba], res->met_why[set][ba], sets[set],
                                     ba == AFTER ? res->Wf : in->prm.hedgehog_w, cols); /* the training's W0 on both */
            if (sm < 0) code = sm == AV_ERR_NOMEM ? avcli_fail_system("out of memory") : avcli_fail("distill: %s", av_status_string(sm));
        }
    if (!code) res->kl_elu = kl_of(AV_ELU, in);
    if (!code) res->kl_elu_holdout = ho ? kl_of(AV_ELU, ho) : NAN;
    free(W); free(mom); free(Wbefore); free(w);
    return code;
}

/* {"row_kl_mean": x, "error_fro_rel": ..., "<key>_reason": "..." where a value is undefined}. */
static void put_metrics(FILE *out, const double *met, const int *why) {
    fputc('{', out);
    for (int k = 0; k < NMET; k++) {
        fprintf(out, "%s\"%s\": ", k ? ", " : "", av_readout_name(METRICS[k]));
        put_num(out, why[k] ? NAN : met[k]);
        if (why[k]) fprintf(out, ", \"%s_reason\": \"%s\"", av_readout_name(METRICS[k]), av_reason_string(why[k]));
    }
    fputc('}', out);
}

/* The held-out KL after training over the training KL after, less 1 (the rise on unseen text), or NaN. */
static double kl_rise(const distill_result *r) {
    if (!r->n_holdout || r->met_why[TRAIN][AFTER][0] || r->met_why[HOLDOUT][AFTER][0] || r->met[TRAIN][AFTER][0] <= 0) return NAN;
    return r->met[HOLDOUT][AFTER][0] / r->met[TRAIN][AFTER][0] - 1;
}

static const char *kl_rise_reason(const distill_result *r) {
    if (!r->n_holdout) return "no held-out inputs (--holdout)";
    if (r->met_why[TRAIN][AFTER][0]) return "the training KL after training is undefined";
    if (r->met_why[HOLDOUT][AFTER][0]) return "the held-out KL after training is undefined";
    return "the training KL after training is 0";
}

static void put_sets(FILE *out, const distill_result *r, int n) {
    fprintf(out, ",\n  \"train\": {\"n\": %d, \"before\": ", n);
    put_metrics(out, r->met[TRAIN][BEFORE], r->met_why[TRAIN][BEFORE]);
    fputs(", \"after\": ", out);
    put_metrics(out, r->met[TRAIN][AFTER], r->met_why[TRAIN][AFTER]);
    fputc('}', out);
    if (r->n_holdout) {
        fprintf(out, ",\n  \"holdout\": {\"n\": %d, \"before\": ", r->n_holdout);
        put_metrics(out, r->met[HOLDOUT][BEFORE], r->met_why[HOLDOUT][BEFORE]);
        fputs(", \"after\": ", out);
        put_metrics(out, r->met[HOLDOUT][AFTER], r->met_why[HOLDOUT][AFTER]);
        fputs("},\n  \"kl_rise\": ", out);
        put_num(out, kl_rise(r));
        if (!isfinite(kl_rise(r))) fprintf(out, ",\n  \"kl_rise_reason\": \"%s\"", kl_rise_reason(r));
    }
}

/* The argv of the held-out inputs: the training argv with --q, --k, --v replaced by the --holdout files
 * (and without -o and --hedgehog-w, which are the training's). */
static int holdout_argv(char **ho, int nrest, char **rest, const char *const *files) {
    int m = 0;
    for (int i = 0; i < nrest; i++) {
        const char *a = rest[i];
        int f = strcmp(a, "--q") == 0 ? 0 : strcmp(a, "--k") == 0 ? 1 : strcmp(a, "--v") == 0 ? 2 : -1;
        if (f >= 0 || strcmp(a, "-o") == 0 || strcmp(a, "--hedgehog-w") == 0) { i++; continue; }
        ho[m++] = rest[i];
    }
    for (int f = 0; f < 3; f++)
        if (files[f]) ho[m++] = (char *)(const char *[]){"--q", "--k", "--v"}[f], ho[m++] = (char *)files[f];
    return m;
}

typedef struct table_ctx { const distill_result *res; int L, H; const avcli_inputs *in; long steps; } table_ctx;

/* The table's number columns: the KLs (row_kl_mean), kl_rise, and the training loss at both ends. */
static const char *const TABLE_COLS[] = {"train_kl_before", "train_kl_after", "holdout_kl_before", "holdout_kl_after",
                                         "kl_rise", "loss_start", "loss_end"};
enum { NCOLS = sizeof TABLE_COLS / sizeof *TABLE_COLS, COL_RISE = 4, COL_LOSS = 5 };

/* Column c of head r's row, and *why, its reason, when it is NaN (null in JSON, empty in CSV). */
static double table_value(const distill_result *r, int c, long steps, const char **why) {
    if (c == COL_RISE) { *why = kl_rise_reason(r); return kl_rise(r); }
    if (c >= COL_LOSS) { *why = r->why; return r->loss[c == COL_LOSS ? 0 : steps]; } /* the status says why */
    int set = c / 2, ba = c % 2;
    if (set == HOLDOUT && !r->n_holdout) { *why = "no held-out inputs (--holdout)"; return NAN; }
    *why = r->met_why[set][ba][0] ? av_reason_string(r->met_why[set][ba][0]) : NULL;
    return *why ? NAN : r->met[set][ba][0];
}

/* --all-heads, JSON: one flat object per head (layer-major), a null with its "<column>_reason". */
static void put_table_json(FILE *out, const table_ctx *t, double lr) {
    const avcli_inputs *in = t->in;
    fprintf(out, "{\n  \"steps\": %ld,\n  \"lr\": ", t->steps);
    put_num(out, lr);
    fprintf(out, ",\n  \"layers\": %d,\n  \"heads\": %d,\n  \"n\": %d,\n  \"n_holdout\": %d,\n  \"d\": %d,\n  \"causal\": %s,\n  \"scale\": ",
            t->L, t->H, in->n, t->res[0].n_holdout, in->d, in->prm.causal ? "true" : "false");
    put_num(out, in->prm.scale == 0 ? 1 / sqrt(in->d) : in->prm.scale);
    fputs(",\n  \"table\": [", out);
    for (int i = 0; i < t->L * t->H; i++) {
        const distill_result *r = &t->res[i];
        fprintf(out, "%s\n    {\"layer\": %d, \"head\": %d", i ? "," : "", i / t->H, i % t->H);
        for (int c = 0; c < NCOLS; c++) {
            const char *why;
            double v = table_value(r, c, t->steps, &why);
            if (c == COL_LOSS) fprintf(out, ", \"steps_taken\": %d", r->taken);
            fprintf(out, ", \"%s\": ", TABLE_COLS[c]);
            put_num(out, v);
            if (!isfinite(v)) fprintf(out, ", \"%s_reason\": \"%s\"", TABLE_COLS[c], why);
        }
        fprintf(out, ", \"status\": \"%s\"}", r->why);
    }
    fputs("\n  ]\n}\n", out);
}

/* --all-heads --format csv: the same table, one row per head; an empty cell's reason in "reasons". */
static void put_table_csv(FILE *out, const table_ctx *t) {
    fputs("layer,head", out);
    for (int c = 0; c < NCOLS; c++) fprintf(out, "%s,%s", c == COL_LOSS ? ",steps_taken" : "", TABLE_COLS[c]);
    fputs(",status,reasons\n", out);
    for (int i = 0; i < t->L * t->H; i++) {
        const distill_result *r = &t->res[i];
        char reasons[1024] = "";
        size_t k = 0;
        fprintf(out, "%d,%d", i / t->H, i % t->H);
        for (int c = 0; c < NCOLS; c++) {
            const char *why;
            double v = table_value(r, c, t->steps, &why);
            if (c == COL_LOSS) fprintf(out, ",%d", r->taken);
            fputc(',', out);
            if (isfinite(v)) fprintf(out, "%.17g", v);
            else if (k < sizeof reasons)
                k += (size_t)snprintf(reasons + k, sizeof reasons - k, "%s%s: %s", k ? "; " : "", TABLE_COLS[c], why);
        }
        fputc(',', out); /* quoted only where needed (RFC 4180), as the table's text fields */
        avcli_csv_field(out, r->why);
        fputc(',', out);
        avcli_csv_field(out, reasons);
        fputc('\n', out);
    }
}

int avcli_cmd_distill(int argc, char **argv) {
    static const char *const names[4] = {"--steps", "--lr", "--variant", "--format"};
    const char *val[4] = {0}, *hold[3] = {0};
    char **rest = malloc(sizeof(char *) * (size_t)(argc + 8)), **own = malloc(sizeof(char *) * (size_t)(argc + 1));
    if (!rest || !own) { free(rest); free(own); return avcli_fail_system("out of memory"); }
    int nown = 0, every = 0, code = 0;
    for (int i = 0; i < argc && !code; i++) { /* --holdout Q2 K2 [V2] and --all-heads; the rest below */
        if (strcmp(argv[i], "--all-heads") == 0) {
            if (every) code = avcli_fail("--all-heads: given twice");
            every = 1;
        } else if (strcmp(argv[i], "--holdout") == 0) {
            if (hold[0]) code = avcli_fail("--holdout: given twice");
            else if (i + 2 >= argc || argv[i + 1][0] == '-' || argv[i + 2][0] == '-')
                code = avcli_fail("--holdout: needs Q2.npy K2.npy [V2.npy] (the held-out inputs)");
            else {
                hold[0] = argv[++i], hold[1] = argv[++i];
                if (i + 1 < argc && argv[i + 1][0] != '-') hold[2] = argv[++i];
            }
        } else own[nown++] = argv[i];
    }
    int nrest = 0;
    if (!code) code = own_flags(nown, own, names, val, 4, rest, &nrest);
    free(own);
    long steps = 0;
    double lr = 0.05;
    int csv = 0;
    if (!code && val[2] && strcmp(val[2], "hedgehog") != 0)
        code = avcli_fail("--variant %s: distill trains hedgehog's W (leave --variant out)", avcli_brief(val[2]));
    if (!code && !val[0]) code = avcli_fail("--steps: required (Adam steps, 0..100000)");
    if (!code && !parse_int(val[0], 0, 100000, &steps)) code = avcli_fail("--steps %s: not an integer in 0..100000", avcli_brief(val[0]));
    if (!code && val[1] && !(avcli_parse_double(val[1], &lr) && lr > 0)) code = avcli_fail("--lr %s: not a number > 0", avcli_brief(val[1]));
    if (!code && val[3] && strcmp(val[3], "json") && strcmp(val[3], "csv"))
        code = avcli_fail("--format %s: not json or csv", avcli_brief(val[3]));
    if (!code && val[3] && !every) code = avcli_fail("--format: the table's format, with --all-heads only");
    csv = val[3] && strcmp(val[3], "csv") == 0;
    rest[nrest++] = "--variant";
    rest[nrest++] = "hedgehog";
    if (code) { free(rest); return code; }
    /* the heads: one (the inputs' own, or --layer/--head), or every one (--all-heads) */
    int L = 1, H = 1, nd = 2, d0 = 0;
    const char *qpath = NULL, *opath = NULL;
    for (int i = 0; i + 1 < nrest; i++) {
        if (strcmp(rest[i], "--q") == 0) qpath = rest[i + 1];
        if (strcmp(rest[i], "-o") == 0) opath = rest[i + 1];
        if (every && (strcmp(rest[i], "--layer") == 0 || strcmp(rest[i], "--head") == 0))
            code = avcli_fail("%s: --all-heads takes every layer and head; drop %s", rest[i], rest[i]);
    }
    av_npy_info qi, hi;
    if (!code && qpath) code = avcli_npy_shape(&qi, "--q", qpath);
    if (!code && qpath) nd = qi.ndim, d0 = (int)qi.shape[qi.ndim - 1];
    if (!code && every && qpath && nd != 4) code = avcli_fail("--all-heads: --q %s is not a model's (layers, heads, n, d) tensor", qpath);
    if (!code && every && qpath) L = (int)qi.shape[0], H = (int)qi.shape[1];
    if (!code && hold[0]) code = avcli_npy_shape(&hi, "--holdout", hold[0]);
    if (!code && hold[0] && qpath && hi.ndim != nd)
        code = avcli_fail("--holdout %s: %d-D, but --q is %d-D (the held-out inputs are shaped like the training ones)", hold[0], hi.ndim, nd);
    if (!code && hold[0] && qpath && hi.shape[hi.ndim - 1] != d0)
        code = avcli_fail("--holdout %s: head size %lld, but --q's is %d (W is d x cols)", hold[0], (long long)hi.shape[hi.ndim - 1], d0);
    if (!code && hold[0] && qpath && nd == 4 && (hi.shape[0] != qi.shape[0] || hi.shape[1] != qi.shape[1]))
        code = avcli_fail("--holdout %s: %lld layers and %lld heads, but --q has %lld and %lld", hold[0], (long long)hi.shape[0],
                          (long long)hi.shape[1], (long long)qi.shape[0], (long long)qi.shape[1]);
    char **ho = malloc(sizeof(char *) * (size_t)(nrest + 12)), lb[24], hb[24];
    int nho = ho ? holdout_argv(ho, nrest, rest, hold) : 0;
    distill_result *res = calloc((size_t)L * H, sizeof *res);
    if (!code && (!ho || !res)) code = avcli_fail_system("out of memory");
    avcli_inputs first;
    memset(&first, 0, sizeof first);
    int cols = 0;
    for (int i = 0; !code && i < L * H; i++) {
        char where[48] = "";
        char **a = rest, **b = ho;
        int na = nrest, nb = nho;
        if (every) { /* --layer l --head h after each argv */
            snprintf(lb, sizeof lb, "%d", i / H);
            snprintf(hb, sizeof hb, "%d", i % H);
            snprintf(where, sizeof where, "L%dH%d: ", i / H, i % H);
            rest[na++] = "--layer", rest[na++] = lb, rest[na++] = "--head", rest[na++] = hb;
            ho[nb++] = "--layer", ho[nb++] = lb, ho[nb++] = "--head", ho[nb++] = hb;
        }
        avcli_inputs in, hin;
        memset(&hin, 0, sizeof hin);
        if ((code = avcli_parse_inputs(&in, na, a)) != 0) break;
        if (!in.out) code = avcli_fail("-o: required (W.npy, the trained (d, cols) matrix)");
        if (!code && hold[0]) code = avcli_parse_inputs(&hin, nb, b);
        if (!code && i == 0) cols = in.prm.hedgehog_w ? in.prm.hedgehog_cols : in.d;
        res[i].loss = malloc(sizeof(double) * (size_t)(steps + 1));
        res[i].Wf = malloc(sizeof(float) * (size_t)in.d * cols);
        if (!code && (!res[i].loss || !res[i].Wf)) code = avcli_fail_system("out of memory");
        distill_run run = {steps, lr, where};
        if (!code) code = avcli_distill_head(&res[i], &run, &in, hold[0] ? &hin : NULL);
        avcli_free(&hin);
        if (i == 0) first = in; /* kept for the output's n, d, scale, mask */
        else avcli_free(&in);
    }
    float *Wall = NULL;
    avcli_saving saving;
    if (!code) { /* W.npy to its temporary, then stdout, then W.npy into place only if stdout took it all */
        size_t per = (size_t)first.d * cols;
        avcli_file file = {"-o", opath, res[0].Wf, {first.d, cols}, 2, NULL, NULL};
        if (every) { /* (layers, heads, d, cols): W[l, h] is head (l, h)'s */
            if (!(Wall = malloc(sizeof(float) * per * (size_t)L * H))) code = avcli_fail_system("out of memory");
            for (int i = 0; !code && i < L * H; i++) memcpy(Wall + per * (size_t)i, res[i].Wf, sizeof(float) * per);
            file = (avcli_file){"-o", opath, Wall, {L, H, first.d, cols}, 4, NULL, NULL};
        }
        if (!code) code = avcli_save_begin(&saving, &file, 1);
    }
    if (!code) {
        const distill_result *r = &res[0];
        if (every && csv) put_table_csv(stdout, &(table_ctx){res, L, H, &first, steps});
        else if (every) put_table_json(stdout, &(table_ctx){res, L, H, &first, steps}, lr);
        else {
            printf("{\n  \"steps\": %ld,\n  \"lr\": ", steps);
            put_num(stdout, lr);
            printf(",\n  \"n\": %d,\n  \"d\": %d,\n  \"cols\": %d,\n  \"causal\": %s,\n  \"scale\": ", first.n, first.d, cols,
                   first.prm.causal ? "true" : "false");
            put_num(stdout, first.prm.scale == 0 ? 1 / sqrt(first.d) : first.prm.scale);
            printf(",\n  \"steps_taken\": %d,\n  \"loss\": ", r->taken);
            put_array(stdout, r->loss, (int)steps + 1);
            static const char *const ENDS[2] = {"loss_start", "loss_end"};
            for (int e = 0; e < 2; e++) { /* a null end: the status says why */
                printf(",\n  \"%s\": ", ENDS[e]);
                put_num(stdout, r->loss[e ? steps : 0]);
                if (!isfinite(r->loss[e ? steps : 0])) printf(",\n  \"%s_reason\": \"%s\"", ENDS[e], r->why);
            }
            printf(",\n  \"kl_elu\": ");
            put_num(stdout, r->kl_elu);
            if (!isfinite(r->kl_elu)) printf(",\n  \"kl_elu_reason\": \"elu+1's matrix or the softmax target is not finite\"");
            put_sets(stdout, r, first.n);
            printf(",\n  \"status\": \"%s\"\n}\n", r->why); /* the warning's sentence, or "ok" */
        }
        code = avcli_stdout_check(0);
        int saved = avcli_save_end(&saving, code == 0); /* stdout failed: the old W.npy stays */
        if (!code) code = saved;
    }
    for (int i = 0; res && i < L * H; i++) { free(res[i].loss); free(res[i].Wf); }
    free(res); free(ho); free(rest); free(Wall);
    avcli_free(&first);
    return code;
}
