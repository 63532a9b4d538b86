/* attnviz.c: the command-line tool over the attnviz library (conventions: docs/conventions.md).
 *
 *   attnviz matrix   --variant NAME --q Q.npy --k K.npy [--v V.npy] [--causal] [knobs] -o M.npy [--out-o O.npy]
 *   attnviz readouts (the same inputs) [--accurate] [--tau X] [-o OUT.json]
 *   attnviz generate --gen NAME --n N --d D [--std X] [--seed S] -o DIR
 *
 * Errors are one line on stderr, "attnviz: <flag or file>: <reason>"; the exit status is 2 for bad input
 * and 1 when the system fails (I/O, out of memory): cli.h. Numerical warnings (positive statuses) print
 * one line too, but the output is written and the status is 0. Outputs are renamed into place only on
 * success (output.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The help text; %VARIANTS% and %KNOBS% are generated from the registry (print_help). */
static const char HELP[] =
    "attnviz: softmax attention and its linear-time relatives, from the command line.\n"
    "\n"
    "usage:\n"
    "  attnviz matrix   --variant NAME --q Q.npy --k K.npy [--v V.npy] [--causal] [knobs] -o M.npy\n"
    "                   [--out-o O.npy [--path quadratic|linear|recurrent|chunkwise]]\n"
    "      Write the variant's n x n attention matrix (or its effective n x n map) as float32 .npy.\n"
    "      With --v and --out-o, also write the output O = M V (n x dv), by the quadratic path (default),\n"
    "      the linear-time path, the recurrent form (token by token; causal) or the chunkwise form\n"
    "      (chunks of --chunk tokens and a carried state; causal).\n"
    "  attnviz readouts --variant NAME --q Q.npy --k K.npy [--v V.npy] [--causal] [knobs]\n"
    "                   [--accurate] [--tau X] [-o OUT.json]\n"
    "      Print the readouts of the matrix (rank, effective rank, sparsity, entropy, error against\n"
    "      softmax, ...) as one JSON object, on stdout or into OUT.json.\n"
    "  attnviz sweep    --variant NAME --knob KNOB --values V1,V2,... [--seeds S] [--readout KEY]\n"
    "                   [--readouts KEY,KEY,...|all] [--all-heads]\n"
    "                   --q Q.npy --k K.npy [--v V.npy] [--causal] [knobs] [--accurate] [--tau X] [-o OUT.json]\n"
    "      One readout (default error_fro_rel) against one knob: for each value, its mean, min and max\n"
    "      over S seeds (the random matrices drawn with --seed ... --seed + S - 1; Q, K, V fixed), as JSON\n"
    "      {\"variant\", \"knob\", \"readout\", \"seeds\", \"values\", \"mean\", \"min\", \"max\", \"defined\",\n"
    "      \"reasons\"} (a null's reason; defined: the seeds it is defined for). Several readouts (--readouts,\n"
    "      or --readout again): {..., \"readouts\": [KEY, ...], \"results\": {KEY: {\"mean\", ...}}}.\n"
    "      --all-heads: every layer and head of 4-D tensors, {\"layers\", \"heads\", \"kv_heads\", \"n\",\n"
    "      \"sweeps\": [[{\"layer\", \"head\", ...} per head] per layer]}.\n"
    "  attnviz generate --gen NAME --n N --d D [--std X] [--seed S] -o DIR\n"
    "      Write seeded synthetic DIR/q.npy, DIR/k.npy, DIR/v.npy, each n x d float32 (the same bits\n"
    "      natively and in the browser).\n"
    "  attnviz capture  --model M.bin --tokenizer T.bin --text \"...\" -o DIR\n"
    "      Run a llama2.c checkpoint over the text (BOS first) and write every layer's and head's\n"
    "      DIR/q.npy (layers, heads, n, head_size; after RoPE), DIR/k.npy and DIR/v.npy (layers,\n"
    "      kv_heads, n, head_size) and DIR/tokens.json {\"ids\", \"pieces\", \"text\"}. With --text-file F\n"
    "      [--lines] in place of --text: one capture a text in DIR/<name>/ (F a file, a folder of .txt files,\n"
    "      or with --lines one text a non-empty line, named by its number), all or none, at most 64.\n"
    "  attnviz table    --variants LIST|all --q Q.npy --k K.npy [--v V.npy] [--causal] [knobs] [--readouts LIST]\n"
    "                   [--format csv|jsonl] [-o OUT]    (or --model M.bin --tokenizer T.bin --text-file F\n"
    "                   [--lines] [--summary] in place of --q, --k, --v)\n"
    "      Every layer x head x variant x scalar readout as rows layer,head,variant,knobs,readout,value,reason\n"
    "      (readouts' JSON keys; no spectra). With --text-file: the texts of F (a folder of .txt files, or\n"
    "      with --lines one text a line) captured and tabled one by one (a text column); --summary: per\n"
    "      head, variant and readout the texts used, nulls, mean, std, min and max over them.\n"
    "  attnviz generate-text --model M.bin --tokenizer T.bin [--text \"...\"] [--steps N]\n"
    "      Print the prompt and the model's greedy continuation (N tokens, default 64; stops at BOS).\n"
    "  attnviz recall   --variant NAME --pairs N --d D [--seeds S] [knobs] [-o OUT.json]\n"
    "      Memory collisions: write N pairs (unit keys, N(0, I) values; drawn S times) into the variant's\n"
    "      memory in order, read every key back from the final memory, and print the mean relative error\n"
    "      ||o_i - v_i|| / ||v_i|| as JSON {\"recall_error_mean\", \"recall_error_min\", \"recall_error_max\", ...}\n"
    "      over the draws. Memories: softmax over the stored pairs, and every variant with a recurrent\n"
    "      state (decay and the delta rule included). --scale is absolute here (default 1); no --causal.\n"
    "  attnviz distill  --q Q.npy --k K.npy [--v V.npy] [--causal] [--layer L --head H] [--hedgehog-w W0.npy]\n"
    "                   [--scale X] --steps N [--lr X] [--holdout Q2.npy K2.npy [V2.npy]]\n"
    "                   [--all-heads [--format json|csv]] -o W.npy\n"
    "      Train hedgehog's W (d x cols; from W0, or the identity) by Adam (default --lr 0.05) on the mean\n"
    "      row KL between softmax attention (this scale and mask) and hedgehog's; write W and print JSON\n"
    "      {\"loss\": [before each step, and at the end], \"loss_start\", \"loss_end\", \"kl_elu\", \"train\",\n"
    "      ...}: \"train\" (and with --holdout \"holdout\" and \"kl_rise\") the readouts row_kl_mean,\n"
    "      error_fro_rel, row_entropy_mean, output_error_rel before and after training. --all-heads: every\n"
    "      head of 4-D tensors, W.npy (layers, heads, d, cols), and a table, one row per head.\n"
    "  attnviz --help   This text.\n"
    "\n"
    "inputs (matrix, readouts):\n"
    "  --q Q.npy --k K.npy --v V.npy   float32 or float64, C order. Either (n, d) [V: (n, dv)], or a real\n"
    "                   model's tensors Q (layers, heads, n, d), K and V (layers, kv_heads, n, d):\n"
    "  --layer L --head H   pick layer L and query head H (0-based); head H reads KV head\n"
    "                   H*kv_heads/heads.\n"
    "  --all-heads      (readouts) every layer and head of 4-D tensors: {\"layers\", \"heads\",\n"
    "                   \"kv_heads\", \"n\", \"readouts\": [[one object per head] per layer]}.\n"
    "  --causal         inclusive autoregressive mask (token i sees keys j <= i).\n"
    "\n"
    "%VARIANTS%"
    "%KNOBS%"
    "readouts only:\n"
    "  --accurate       the accurate (bidiagonalisation) spectrum instead of the fast one\n"
    "  --tau X          sparsity_tau threshold tau/(allowed entries per row), > 0 (default 0.1)\n"
    "  --summary        (with --all-heads) without the spectra: no singular_values, error_curve,\n"
    "                   singular_values_factor arrays.\n"
    "\n"
    "generate:\n"
    "  --gen NAME       gaussian (default): q, k, v ~ N(0, std^2)\n"
    "                   clustered: keys and queries around a few shared centres\n"
    "                   local: positional features, q_i.k_j largest near i = j (a diagonal band)\n"
    "                   lowrank: Q and K of planted rank ceil(min(n, d)/4)\n"
    "                   sink: token 0 is a key every query attends to\n"
    "                   V is always N(0, std^2).\n"
    "  --n N --d D      sequence length 1..16384 and head dimension 1..4096\n"
    "  --std X          spread, > 0 (default 1)\n"
    "  --seed S         0..4294967295 (default 0)\n"
    "  -o DIR           output folder (created if missing)\n"
    "\n"
    "exit status:\n"
    "  0  success. A numerical warning (an overflow, a zero row) prints one line on stderr,\n"
    "     \"attnviz: warning: ...\", and the output is still written.\n"
    "  2  bad input: unknown or malformed flags, knobs out of range, malformed or mismatched .npy\n"
    "     files, NaN or Inf in the inputs, an input that is a folder, a device or a pipe, an output\n"
    "     that is a folder.\n"
    "  1  the system failed: a file cannot be opened, read or written, or memory ran out.\n"
    "  Every error is one line on stderr, \"attnviz: <what>: <reason>\". Outputs go to a temporary file\n"
    "  beside the target and replace it only when the command succeeded: all of a command's files or\n"
    "  none, and (distill) only once stdout was written. An interrupt, a termination or a closed pipe\n"
    "  removes the temporaries and an -o folder the command made; a file past ulimit -f is a write\n"
    "  that failed (1).\n";

// ----------------------------------------------------------------------------------------------------
// errors and number parsing

/* strtod and strtoll skip leading blanks and the end check only sees trailing ones: refuse both alike. */
int avcli_parse_double(const char *s, double *out) {
    char *end;
    if (isspace((unsigned char)*s)) return 0;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

int avcli_parse_long(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    if (isspace((unsigned char)*s)) return 0;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

// ----------------------------------------------------------------------------------------------------
// .npy files

typedef struct npy_array { av_npy_info info; float *data; } npy_array;

/* Read and decode the .npy at `path` (given with `flag`). Returns 0 or prints one line and returns 2. */
static int read_npy(npy_array *a, const char *flag, const char *path) {
    memset(a, 0, sizeof *a);
    unsigned char *buf;
    size_t len;
    int code = avcli_read_file(flag, path, &buf, &len);
    if (code) return code;
    int st = av_npy_parse(&a->info, buf, len);
    if (st != AV_OK) { free(buf); return avcli_fail("%s %s: %s", flag, path, av_npy_error()); }
    a->data = malloc(sizeof(float) * (a->info.count ? a->info.count : 1));
    if (!a->data) { free(buf); return avcli_fail_system("%s %s: out of memory", flag, path); }
    st = av_npy_decode_f32(a->data, &a->info, buf, len);
    free(buf);
    if (st != AV_OK) { free(a->data); a->data = NULL; return avcli_fail("%s %s: %s", flag, path, av_npy_error()); }
    return 0;
}

static int all_finite(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static void shape_text(char *out, size_t cap, const av_npy_info *info) {
    size_t k = (size_t)snprintf(out, cap, "(");
    for (int i = 0; i < info->ndim && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, i ? ", %lld" : "%lld", (long long)info->shape[i]);
    if (k < cap) snprintf(out + k, cap - k, info->ndim == 1 ? ",)" : ")");
}

// ----------------------------------------------------------------------------------------------------
// the shared flags of matrix and readouts

enum { F_Q, F_K, F_V, F_W, F_VARIANT, F_OUT, F_LAYER, F_HEAD, F_TAU, F_NSTR };

typedef struct raw_flags {
    const char *str[F_NSTR];          /* string-valued flags, NULL when absent */
    const char *knob[AV_KNOB_COUNT];  /* knob values as given (bools: "1" or "0"), NULL when absent */
    int accurate;
} raw_flags;

static const char *const STR_NAMES[F_NSTR] = {"--q", "--k", "--v", "--hedgehog-w", "--variant", "-o", "--layer",
                                              "--head", "--tau"};

/* The knob whose flag is `a` ("--p"), or whose negation it is ("--no-orthogonal", *neg = 1); −1 if none. */
static int knob_of_flag(const char *a, int *neg) {
    *neg = 0;
    for (int k = AV_KNOB_VARIANT + 1; k < AV_KNOB_COUNT; k++) {
        const av_knob_desc *kd = av_knob_info(k);
        if (strcmp(a, kd->flag) == 0) return k;
        if (kd->type == AV_KT_BOOL && strncmp(a, "--no-", 5) == 0 && strcmp(a + 5, kd->flag + 2) == 0) {
            *neg = 1;
            return k;
        }
    }
    return -1;
}

static int collect_flags(raw_flags *r, int argc, char **argv) {
    memset(r, 0, sizeof *r);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], **slot = NULL;
        int neg, k = knob_of_flag(a, &neg);
        if (strcmp(a, "--accurate") == 0) {
            if (r->accurate) return avcli_fail("%s: given twice", a);
            r->accurate = 1;
            continue;
        }
        if (k >= 0 && av_knob_info(k)->type == AV_KT_BOOL) { /* a switch: --x sets 1, --no-x sets 0 */
            if (r->knob[k]) return avcli_fail("%s: given twice (or with its --no- form)", a);
            r->knob[k] = neg ? "0" : "1";
            continue;
        }
        if (k >= 0) slot = &r->knob[k];
        for (int f = 0; f < F_NSTR && !slot; f++)
            if (strcmp(a, STR_NAMES[f]) == 0) slot = &r->str[f];
        if (!slot) return avcli_fail("%s: unknown option (see attnviz --help)", avcli_brief(a));
        if (*slot) return avcli_fail("%s: given twice", a);
        if (i + 1 >= argc) return avcli_fail("%s: needs a value", a);
        *slot = argv[++i];
    }
    return 0;
}

/* The range of a knob in words, for messages and help ("1..10", "1..n", "odd, 1..2n-1, or 0 for none"). */
static void range_text(char *out, size_t cap, const av_knob_desc *kd) {
    if (kd->type == AV_KT_BOOL) { snprintf(out, cap, "a switch"); return; }
    if (kd->type == AV_KT_ENUM) {
        snprintf(out, cap, "one of ");
        size_t k = strlen(out);
        for (const char *c = kd->options; *c && k + 3 < cap; c++) {
            if (*c == '|') { out[k++] = ','; out[k++] = ' '; }
            else out[k++] = *c;
        }
        out[k] = 0;
        return;
    }
    char hi[32];
    if (kd->flags & AV_KF_HI_N) snprintf(hi, sizeof hi, "n");
    else if (kd->flags & AV_KF_HI_2N) snprintf(hi, sizeof hi, "2n-1");
    else if (kd->hi > 1e300) hi[0] = 0;
    else snprintf(hi, sizeof hi, "%.10g", kd->hi);
    double lo = (kd->flags & AV_KF_ODD) && kd->lo == 0 ? 1 : kd->lo;
    if (!hi[0]) snprintf(out, cap, "> %.10g", lo);
    else snprintf(out, cap, "%s%.10g..%s%s", kd->flags & AV_KF_ODD ? "odd, " : "", lo, hi,
                  kd->flags & AV_KF_ODD ? ", or 0 for none" : "");
}

/* A number for knob kd from text, checked for its form only (the range is av_params_check's, and only for
 * the knobs the variant reads): an integer ≥ the row's lower bound for int knobs, a number ≥ 0 for real
 * ones; a typed 0 is refused where the library reads 0 as "default" (so it never silently becomes the
 * default), and becomes the library's −1 where that stands for a real 0. */
int avcli_knob_number(const av_knob_desc *kd, const char *text, double *v) {
    long long iv = 0;
    int ok = kd->type == AV_KT_INT ? avcli_parse_long(text, (long long)kd->lo, 4294967295LL, &iv)
                                   : avcli_parse_double(text, v) && *v >= 0;
    if (kd->type == AV_KT_INT) *v = (double)iv;
    if (ok && (kd->flags & AV_KF_ZERO_DEFAULT) && *v == 0 && !(kd->flags & AV_KF_MINUS1_ZERO)) ok = 0;
    if (ok && (kd->flags & AV_KF_MINUS1_ZERO) && *v == 0) *v = -1.0;
    return ok;
}

/* Set the given knobs into in->prm, checking each value's form here and its range in check_knobs. A typed 0
 * for a knob whose 0 means "default" is refused, so it never turns silently into the default. */
static int set_knobs(avcli_inputs *in, const raw_flags *r) {
    char range[96];
    for (int k = AV_KNOB_VARIANT + 1; k < AV_KNOB_COUNT; k++) {
        const av_knob_desc *kd = av_knob_info(k);
        const char *text = r->knob[k];
        double v = 0.0;
        if (!text) continue;
        range_text(range, sizeof range, kd);
        if (kd->type == AV_KT_ENUM) {
            int idx = 0, len = (int)strlen(text);
            const char *o = kd->options;
            while (*o && !(strncmp(o, text, (size_t)len) == 0 && (o[len] == '|' || o[len] == 0))) {
                o = strchr(o, '|');
                if (!o) break;
                o++, idx++;
            }
            if (!o || !*o || !len) return avcli_fail("%s %s: unknown kind (%s)", kd->flag, avcli_brief(text), range);
            v = idx;
        } else if (kd->type == AV_KT_BOOL) {
            v = text[0] == '1';
        } else {
            if (!avcli_knob_number(kd, text, &v)) return avcli_fail("%s %s: not a valid value (%s)", kd->flag, avcli_brief(text), range);
        }
        if (av_params_set(&in->prm, k, v) != AV_OK) return avcli_fail("%s %s: not a valid value (%s)", kd->flag, avcli_brief(text), range);
    }
    return 0;
}

/* Resolve the knobs against n and d; on failure name the flag the library names. */
static int check_knobs(const avcli_inputs *in, const raw_flags *r) {
    av_params res;
    const char *vname = av_variant_name(in->prm.variant);
    int bad = -1, st = av_params_check(&res, &in->prm, in->n, in->d, &bad);
    char range[96];
    if (st == AV_OK) return 0;
    if (st == AV_ERR_NO_CAUSAL) {
        if (bad >= 0 && bad != AV_KNOB_CAUSAL)
            return avcli_fail("--causal: %s with %s has no causal form", vname, av_knob_info(bad)->flag);
        return avcli_fail("--causal: %s has no causal form", vname);
    }
    if (st == AV_ERR_NEEDS_CAUSAL) {
        if (bad >= 0 && bad != AV_KNOB_CAUSAL)
            return avcli_fail("%s %s: needs --causal (a decay exists only causally)", av_knob_info(bad)->flag,
                              r->knob[bad] ? r->knob[bad] : "");
        return avcli_fail("--no-causal: %s exists only causal (it is a recurrence)", vname);
    }
    if (st == AV_ERR_KNOB && bad >= 0) {
        const av_knob_desc *kd = av_knob_info(bad);
        range_text(range, sizeof range, kd);
        if (r->knob[bad])
            return avcli_fail("%s %s: out of range for %s at n = %d (%s)", kd->flag, avcli_brief(r->knob[bad]), vname, in->n, range);
    }
    return avcli_fail("--variant %s: %s (n = %d, d = %d)", vname, av_status_string(st), in->n, in->d);
}

// ----------------------------------------------------------------------------------------------------
// loading Q, K, V (2-D, or 4-D model tensors with --layer/--head)

/* The three input files: index 0 Q, 1 K, 2 V (data NULL when --v is absent). */
typedef struct inputs3 {
    npy_array a[3];
    const char *flag[3], *path[3];
} inputs3;

/* "FLAG PATH: shape S does not match --q's T (why)" (or --k's): one line, returns 2. */
static int shape_mismatch(const inputs3 *t, int i, int ref, const char *why) {
    char s1[160], s2[160];
    shape_text(s1, sizeof s1, &t->a[i].info);
    shape_text(s2, sizeof s2, &t->a[ref].info);
    return avcli_fail("%s %s: shape %s does not match %s's %s (%s)", t->flag[i], t->path[i], s1, t->flag[ref], s2, why);
}

/* For 4-D model tensors: check --layer/--head and the layer and KV-head counts, and give the element
 * offsets of the selected Q head (*qoff) and of its KV head in K (*kvoff, in units of rows). */
static int select_head(const inputs3 *t, const raw_flags *r, size_t *qoff, size_t *kvrow) {
    const av_npy_info *q = &t->a[0].info;
    int64_t L = q->shape[0], H = q->shape[1], KVH = t->a[1].info.shape[1];
    long long layer, head;
    if (!r->str[F_LAYER] || !r->str[F_HEAD]) return avcli_fail("--q %s: 4-D model tensors need --layer and --head", t->path[0]);
    if (!avcli_parse_long(r->str[F_LAYER], 0, L - 1, &layer))
        return avcli_fail("--layer %s: out of range (the tensors have %lld layers: 0..%lld)", avcli_brief(r->str[F_LAYER]), (long long)L, (long long)L - 1);
    if (!avcli_parse_long(r->str[F_HEAD], 0, H - 1, &head))
        return avcli_fail("--head %s: out of range (--q has %lld heads: 0..%lld)", avcli_brief(r->str[F_HEAD]), (long long)H, (long long)H - 1);
    if (t->a[1].info.shape[0] != L || KVH < 1 || H % KVH)
        return shape_mismatch(t, 1, 0, "K is (layers, kv_heads, n, d) with kv_heads dividing heads");
    if (t->a[2].data && (t->a[2].info.shape[0] != L || t->a[2].info.shape[1] != KVH))
        return shape_mismatch(t, 2, 1, "V has K's layers and kv_heads");
    int64_t n = q->shape[2], kvh = head * KVH / H; /* query head h reads KV head h·kv_heads/heads */
    *qoff = (size_t)((layer * H + head) * n * q->shape[3]);
    *kvrow = (size_t)((layer * KVH + kvh) * n);
    return 0;
}

/* Check the (…, n, d) tails: K n×d like Q, V with n rows, sizes within the library's limits. */
static int check_tails(const inputs3 *t, int nd) {
    const int64_t *qs = t->a[0].info.shape + nd - 2, *ks = t->a[1].info.shape + nd - 2;
    if (qs[0] < 1 || qs[0] > AV_MAX_N || qs[1] < 1 || qs[1] > AV_MAX_D)
        return avcli_fail("--q %s: n = %lld, d = %lld outside 1..%d, 1..%d", t->path[0], (long long)qs[0], (long long)qs[1],
                    AV_MAX_N, AV_MAX_D);
    if (ks[0] != qs[0] || ks[1] != qs[1]) return shape_mismatch(t, 1, 0, "K must be n x d like Q");
    const int64_t *vs = t->a[2].info.shape + nd - 2;
    if (t->a[2].data && (vs[0] != qs[0] || vs[1] < 1 || vs[1] > AV_MAX_D))
        return shape_mismatch(t, 2, 0, "V must have n rows and 1..4096 columns");
    return 0;
}

/* Copy count floats from a->data + off into a new buffer (NULL when out of memory). */
static float *take(const npy_array *a, size_t off, size_t count) {
    float *x = malloc(sizeof(float) * count);
    if (x) memcpy(x, a->data + off, sizeof(float) * count);
    return x;
}

/* Copy the selected n×d (n×dv) slices into in->Q, K, V and check that they are finite. */
static int take_slices(avcli_inputs *in, const inputs3 *t, int nd, size_t qoff, size_t kvrow) {
    const int64_t *qs = t->a[0].info.shape + nd - 2;
    in->n = (int)qs[0];
    in->d = (int)qs[1];
    in->dv = t->a[2].data ? (int)t->a[2].info.shape[nd - 1] : 0;
    size_t cnt[3] = {(size_t)in->n * in->d, (size_t)in->n * in->d, (size_t)in->n * in->dv};
    float **dst[3] = {&in->Q, &in->K, &in->V};
    size_t off[3] = {qoff, kvrow * in->d, kvrow * in->dv};
    for (int i = 0; i < 3; i++) {
        if (!t->a[i].data) continue;
        if (!(*dst[i] = take(&t->a[i], off[i], cnt[i]))) return avcli_fail_system("out of memory");
        if (!all_finite(*dst[i], cnt[i]))
            return avcli_fail("%s %s: %s%s", t->flag[i], t->path[i], av_status_string(AV_ERR_NONFINITE),
                        nd == 4 ? " (in the selected layer and head)" : "");
    }
    return 0;
}

static int load_inputs(avcli_inputs *in, const raw_flags *r) {
    inputs3 t = {.flag = {"--q", "--k", "--v"}, .path = {r->str[F_Q], r->str[F_K], r->str[F_V]}};
    int st = 0;
    for (int i = 0; i < 3 && !st; i++)
        if (t.path[i]) st = read_npy(&t.a[i], t.flag[i], t.path[i]);
    int nd = t.a[0].info.ndim;
    size_t qoff = 0, kvrow = 0;
    if (st) {
    } else if (nd != 2 && nd != 4) {
        char s1[160];
        shape_text(s1, sizeof s1, &t.a[0].info);
        st = avcli_fail("--q %s: shape %s is neither (n, d) nor (layers, heads, n, d)", t.path[0], s1);
    } else if (t.a[1].info.ndim != nd || (t.a[2].data && t.a[2].info.ndim != nd)) {
        st = shape_mismatch(&t, t.a[1].info.ndim != nd ? 1 : 2, 0, "the same number of dimensions");
    } else if (nd == 4) {
        st = select_head(&t, r, &qoff, &kvrow);
    } else if (r->str[F_LAYER] || r->str[F_HEAD]) {
        st = avcli_fail("%s: only for 4-D model tensors (--q %s is 2-D)", r->str[F_LAYER] ? "--layer" : "--head", t.path[0]);
    }
    if (!st) st = check_tails(&t, nd);
    if (!st) st = take_slices(in, &t, nd, qoff, kvrow);
    for (int i = 0; i < 3; i++) free(t.a[i].data);
    return st;
}

static int load_hedgehog(avcli_inputs *in, const char *path) {
    npy_array w;
    int st = read_npy(&w, "--hedgehog-w", path);
    if (st) return st;
    char s1[160];
    shape_text(s1, sizeof s1, &w.info);
    if (w.info.ndim != 2 || w.info.shape[0] != in->d || w.info.shape[1] < 1 || w.info.shape[1] > AV_MAX_FEATURE_DIM / 2) {
        free(w.data);
        return avcli_fail("--hedgehog-w %s: shape %s is not (d, cols) with d = %d and cols in 1..%d", path, s1, in->d,
                    AV_MAX_FEATURE_DIM / 2);
    }
    if (!all_finite(w.data, w.info.count)) {
        free(w.data);
        return avcli_fail("--hedgehog-w %s: %s", path, av_status_string(AV_ERR_NONFINITE));
    }
    in->hedgehog_w = w.data;
    av_params_set_hedgehog(&in->prm, in->hedgehog_w, (int)w.info.shape[1]);
    return 0;
}

/* The registry's variant names, joined by sep. */
static void variant_list(char *out, size_t cap, const char *sep) {
    size_t k = 0;
    out[0] = 0;
    for (int v = 0; v < AV_VARIANT_COUNT && k < cap; v++)
        k += (size_t)snprintf(out + k, cap - k, "%s%s", v ? sep : "", av_variant_name(v));
}

/* argv holds the flags after the command name. */
int avcli_parse_inputs(avcli_inputs *in, int argc, char **argv) {
    memset(in, 0, sizeof *in);
    raw_flags r;
    int st = collect_flags(&r, argc, argv);
    if (st) return st;
    char names[512];
    variant_list(names, sizeof names, ", ");
    if (!r.str[F_VARIANT]) return avcli_fail("--variant: required (%s)", names);
    int variant = av_variant_from_name(r.str[F_VARIANT]);
    if (variant < 0) return avcli_fail("--variant %s: unknown variant (%s)", avcli_brief(r.str[F_VARIANT]), names);
    av_params_default(&in->prm, variant);
    if (!r.str[F_Q]) return avcli_fail("--q: required (Q.npy)");
    if (!r.str[F_K]) return avcli_fail("--k: required (K.npy)");
    if ((st = set_knobs(in, &r))) return st;
    if (r.str[F_TAU] && !(avcli_parse_double(r.str[F_TAU], &in->tau) && in->tau > 0))
        return avcli_fail("--tau %s: not a number > 0", avcli_brief(r.str[F_TAU]));
    in->accurate = r.accurate;
    in->out = r.str[F_OUT];
    if ((st = load_inputs(in, &r)) || (r.str[F_W] && (st = load_hedgehog(in, r.str[F_W]))) ||
        (st = check_knobs(in, &r)) || (in->out && (st = avcli_out_check("-o", in->out)))) {
        avcli_free(in);
        return st;
    }
    if ((in->has_head = r.str[F_LAYER] != NULL)) in->layer = atoi(r.str[F_LAYER]), in->head = atoi(r.str[F_HEAD]); /* checked */
    return 0;
}

/* Knob flags only, for commands without input files (recall): --variant, the knobs and -o, into in->prm and
 * in->out, checked at in->n, in->d with the causal mask on (a memory is written in order, so a decay and
 * the causal-only variants are allowed). --causal itself is refused: nothing is masked. */
int avcli_parse_knobs(avcli_inputs *in, int argc, char **argv) {
    raw_flags r;
    int st = collect_flags(&r, argc, argv);
    if (st) return st;
    for (int f = 0; f < F_NSTR; f++)
        if (r.str[f] && f != F_VARIANT && f != F_OUT) return avcli_fail("%s: not an option of this command (see attnviz --help)", STR_NAMES[f]);
    if (r.accurate) return avcli_fail("--accurate: not an option of this command (see attnviz --help)");
    if (r.knob[AV_KNOB_CAUSAL]) return avcli_fail("--causal: not an option of recall (every pair is written in order, then every key read from the final memory)");
    char names[512];
    variant_list(names, sizeof names, ", ");
    if (!r.str[F_VARIANT]) return avcli_fail("--variant: required (%s)", names);
    int variant = av_variant_from_name(r.str[F_VARIANT]);
    if (variant < 0) return avcli_fail("--variant %s: unknown variant (%s)", avcli_brief(r.str[F_VARIANT]), names);
    av_params_default(&in->prm, variant);
    if ((st = set_knobs(in, &r))) return st;
    const av_variant_desc *vd = av_variant_info(variant);
    if (vd->cls != AV_CLASS_EXACT && !(vd->flags & AV_VF_RECURRENT)) {
        char mem[512];
        size_t k = (size_t)snprintf(mem, sizeof mem, "softmax");
        for (int v = 0; v < AV_VARIANT_COUNT && k < sizeof mem; v++)
            if (av_variant_info(v)->flags & AV_VF_RECURRENT) k += (size_t)snprintf(mem + k, sizeof mem - k, ", %s", av_variant_name(v));
        return avcli_fail("--variant %s: no memory to recall from (it has no recurrent state; memories: %s)", vd->name, mem);
    }
    in->prm.causal = 1;
    in->out = r.str[F_OUT];
    av_params res;
    int bad = -1;
    if (av_params_check(&res, &in->prm, in->n, in->d, &bad) == AV_ERR_NO_CAUSAL && bad >= 0 && bad != AV_KNOB_CAUSAL)
        return avcli_fail("%s: %s with it has no recurrent state to recall from", av_knob_info(bad)->flag, vd->name);
    if ((st = check_knobs(in, &r))) return st;
    return in->out ? avcli_out_check("-o", in->out) : 0;
}

void avcli_free(avcli_inputs *in) {
    if (!in) return;
    free(in->Q);
    free(in->K);
    free(in->V);
    free(in->hedgehog_w);
    in->Q = in->K = in->V = in->hedgehog_w = NULL;
    in->prm.hedgehog_w = NULL;
}

// ----------------------------------------------------------------------------------------------------
// commands

/* O by the path --path names (docs/recurrent.md), M by av_matrix: the quadratic path computes both at once. */
static int output_by_path(float *O, float *M, const avcli_inputs *in, int path) {
    int n = in->n, d = in->d, dv = in->dv;
    if (path == AV_PATH_QUADRATIC) {
        size_t wb = av_attend_work(&in->prm, n, d, dv);
        void *w = wb ? malloc(wb) : NULL;
        int st = w ? av_attend(O, M, in->Q, in->K, in->V, n, d, dv, &in->prm, w, wb) : wb ? AV_ERR_NOMEM : AV_ERR_TOO_LARGE;
        free(w);
        return st;
    }
    size_t wm = av_matrix_work(&in->prm, n, d);
    size_t wb = path == AV_PATH_LINEAR ? av_linear_work(&in->prm, n, d, dv)
              : path == AV_PATH_RECURRENT ? av_recurrent_work(&in->prm, n, d, dv) : av_chunkwise_work(&in->prm, n, d, dv);
    if (wb == 0) { /* the reason, from a call with no workspace (the arguments are checked first) */
        int st = path == AV_PATH_LINEAR ? av_linear(O, in->Q, in->K, in->V, n, d, dv, &in->prm, NULL, 0)
               : path == AV_PATH_RECURRENT ? av_recurrent(O, in->Q, in->K, in->V, n, d, dv, &in->prm, NULL, 0)
               : av_chunkwise(O, in->Q, in->K, in->V, n, d, dv, &in->prm, NULL, 0);
        return st < 0 ? st : AV_ERR_TOO_LARGE;
    }
    void *w = malloc(wb > wm ? wb : wm);
    if (!w) return AV_ERR_NOMEM;
    int st = av_matrix(M, in->Q, in->K, n, d, &in->prm, w, wm);
    if (st >= 0) {
        int so = path == AV_PATH_LINEAR ? av_linear(O, in->Q, in->K, in->V, n, d, dv, &in->prm, w, wb)
               : path == AV_PATH_RECURRENT ? av_recurrent(O, in->Q, in->K, in->V, n, d, dv, &in->prm, w, wb)
               : av_chunkwise(O, in->Q, in->K, in->V, n, d, dv, &in->prm, w, wb);
        st = so < 0 || so > st ? so : st;
    }
    free(w);
    return st;
}

static int cmd_matrix(int argc, char **argv) {
    const char *out_o = NULL;
    int path = AV_PATH_QUADRATIC;
    char **rest = malloc(sizeof(char *) * (size_t)(argc + 1));
    int nrest = 0;
    if (!rest) return avcli_fail_system("out of memory");
    for (int i = 0; i < argc; i++) { /* --out-o is matrix's own; the rest are the shared flags */
        if (strcmp(argv[i], "--out-o") == 0) {
            if (out_o) { free(rest); return avcli_fail("--out-o: given twice"); }
            if (i + 1 >= argc) { free(rest); return avcli_fail("--out-o: needs a value"); }
            out_o = argv[++i];
        } else if (strcmp(argv[i], "--path") == 0) {
            static const char *const NAMES[] = {"quadratic", "linear", "recurrent", "chunkwise"};
            if (i + 1 >= argc) { free(rest); return avcli_fail("--path: needs a value"); }
            path = -1;
            for (int k = 0; k < 4; k++)
                if (strcmp(argv[i + 1], NAMES[k]) == 0) path = k;
            if (path < 0) {
                free(rest);
                return avcli_fail("--path %s: not one of quadratic, linear, recurrent, chunkwise", avcli_brief(argv[i + 1]));
            }
            i++;
        } else if (strcmp(argv[i], "--accurate") == 0 || strcmp(argv[i], "--tau") == 0) {
            free(rest);
            return avcli_fail("%s: applies to readouts only", argv[i]);
        } else {
            rest[nrest++] = argv[i];
        }
    }
    avcli_inputs in;
    int st = avcli_parse_inputs(&in, nrest, rest);
    free(rest);
    if (st) return st;
    int code = 0, n = in.n;
    float *M = NULL, *O = NULL;
    void *work = NULL;
    if (!in.out) { code = avcli_fail("-o: required (the output M.npy)"); goto done; }
    if (out_o && !in.V) { code = avcli_fail("--out-o %s: needs --v V.npy", out_o); goto done; }
    if (out_o && (code = avcli_out_check("--out-o", out_o))) goto done;
    if (path != AV_PATH_QUADRATIC && !out_o) { code = avcli_fail("--path: chooses how --out-o's O is computed; give --out-o"); goto done; }
    size_t wb = av_matrix_work(&in.prm, n, in.d);
    M = malloc(sizeof(float) * (size_t)n * n);
    O = out_o ? malloc(sizeof(float) * (size_t)n * in.dv) : NULL;
    work = malloc(wb ? wb : 1);
    if (!M || !work || (out_o && !O)) { code = avcli_fail_system("out of memory (n = %d)", n); goto done; }
    st = out_o ? output_by_path(O, M, &in, path) : av_matrix(M, in.Q, in.K, n, in.d, &in.prm, work, wb);
    if (st == AV_ERR_NOMEM) { code = avcli_fail_system("out of memory (n = %d)", n); goto done; }
    if (st < 0) {
        code = avcli_exit_code(st);
        fprintf(stderr, "attnviz: --variant %s: %s\n", av_variant_name(in.prm.variant), av_status_string(st));
        goto done;
    }
    if (st > 0) fprintf(stderr, "attnviz: warning: %s: %s\n", av_variant_name(in.prm.variant), av_status_string(st));
    avcli_file files[2] = {{"-o", in.out, M, {n, n}, 2, NULL, NULL}, {"--out-o", out_o, O, {n, in.dv}, 2, NULL, NULL}};
    code = avcli_save(files, out_o ? 2 : 1); /* both or neither */
done:
    free(M);
    free(O);
    free(work);
    avcli_free(&in);
    return code;
}

/* Run a JSON-printing command into stdout, or into -o through a temporary renamed only on success. */
int avcli_emit_json(const avcli_inputs *in, int (*cmd)(const avcli_inputs *, const void *, FILE *), const void *ctx) {
    avcli_out o;
    int st;
    if (!in->out) {
        st = cmd(in, ctx, stdout); /* main checks that stdout was written */
    } else if (avcli_out_open(&o, in->out) != 0) {
        st = avcli_out_fail("-o", in->out, errno);
    } else if ((st = cmd(in, ctx, o.f)) != 0) {
        avcli_out_discard(&o); /* the old file, if any, stays as it was */
    } else if (avcli_out_close(&o) != 0 || avcli_out_commit(&o) != 0) {
        st = avcli_out_fail("-o", in->out, errno);
        avcli_out_discard(&o);
    }
    return st;
}

static int readouts_json(const avcli_inputs *in, const void *ctx, FILE *out) {
    (void)ctx;
    return avcli_cmd_readouts(in, out);
}

static int cmd_readouts(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--all-heads") == 0) {
            char **rest = malloc(sizeof(char *) * (size_t)argc);
            if (!rest) return avcli_fail_system("out of memory");
            int nrest = 0;
            for (int j = 0; j < argc; j++)
                if (j != i) rest[nrest++] = argv[j];
            int st = avcli_cmd_all_heads(nrest, rest);
            free(rest);
            return st;
        }
    avcli_inputs in;
    int st = avcli_parse_inputs(&in, argc, argv);
    if (st) return st;
    st = avcli_emit_json(&in, readouts_json, NULL);
    avcli_free(&in);
    return st;
}

static int cmd_generate(int argc, char **argv) {
    const char *names[6] = {"--gen", "--n", "--d", "--std", "--seed", "-o"}, *val[6] = {0};
    for (int i = 0; i < argc; i++) {
        int f = 0;
        while (f < 6 && strcmp(argv[i], names[f])) f++;
        if (f == 6) return avcli_fail("%s: unknown option for generate (see attnviz --help)", avcli_brief(argv[i]));
        if (val[f]) return avcli_fail("%s: given twice", argv[i]);
        if (i + 1 >= argc) return avcli_fail("%s: needs a value", argv[i]);
        val[f] = argv[++i];
    }
    int gen = val[0] ? av_generator_from_name(val[0]) : AV_GEN_GAUSSIAN;
    long long n, d, seed = 0;
    double std = 1.0;
    if (gen < 0) return avcli_fail("--gen %s: unknown generator (gaussian, clustered, local, lowrank, sink)", avcli_brief(val[0]));
    if (!val[1]) return avcli_fail("--n: required (the sequence length, 1..%d)", AV_MAX_N);
    if (!avcli_parse_long(val[1], 1, AV_MAX_N, &n)) return avcli_fail("--n %s: not an integer in 1..%d", avcli_brief(val[1]), AV_MAX_N);
    if (!val[2]) return avcli_fail("--d: required (the head dimension, 1..%d)", AV_MAX_D);
    if (!avcli_parse_long(val[2], 1, AV_MAX_D, &d)) return avcli_fail("--d %s: not an integer in 1..%d", avcli_brief(val[2]), AV_MAX_D);
    if (val[3] && !(avcli_parse_double(val[3], &std) && std > 0 && std <= 1e6)) return avcli_fail("--std %s: not a number in (0, 1e6]", avcli_brief(val[3]));
    if (val[4] && !avcli_parse_long(val[4], 0, 4294967295LL, &seed)) return avcli_fail("--seed %s: not an integer in 0..4294967295", avcli_brief(val[4]));
    if (!val[5]) return avcli_fail("-o: required (the output folder)");
    const char *dir = val[5];
    int code = avcli_dir_check("-o", dir), made = 0;
    if (code) return code;
    size_t count = (size_t)n * (size_t)d, len = strlen(dir) + 8;
    float *x[3] = {malloc(sizeof(float) * count), malloc(sizeof(float) * count), malloc(sizeof(float) * count)};
    char *paths[3] = {malloc(len), malloc(len), malloc(len)};
    if (!x[0] || !x[1] || !x[2] || !paths[0] || !paths[1] || !paths[2]) code = avcli_fail_system("out of memory");
    int st = code ? AV_OK : av_generate(x[0], x[1], x[2], (int)n, (int)d, gen, std, (uint32_t)seed);
    if (!code && st != AV_OK) code = avcli_fail("generate: %s", av_status_string(st));
    /* the folder only now, when there is something to put in it; removed again if the files fail */
    if (!code) code = avcli_dir_make("-o", dir, &made);
    if (!code) {
        const char *names[3] = {"q.npy", "k.npy", "v.npy"};
        avcli_file files[3];
        for (int t = 0; t < 3; t++) {
            snprintf(paths[t], len, "%s/%s", dir, names[t]);
            files[t] = (avcli_file){"-o", paths[t], x[t], {n, d}, 2, NULL, NULL};
        }
        code = avcli_save(files, 3);
        avcli_dir_done(dir, made, code != 0);
    }
    for (int t = 0; t < 3; t++) { free(x[t]); free(paths[t]); }
    return code;
}

/* --help: HELP with the registry's variants and knobs in place of %VARIANTS% and %KNOBS%. */
static void print_help(FILE *out) {
    const char *v = strstr(HELP, "%VARIANTS%"), *k = strstr(HELP, "%KNOBS%");
    fwrite(HELP, 1, (size_t)(v - HELP), out);
    fputs("variants (--variant NAME):\n", out);
    for (int i = 0; i < AV_VARIANT_COUNT; i++) {
        const av_variant_desc *vd = av_variant_info(i);
        fprintf(out, "  %-11s%s (%s)%s\n  %-11s%s\n", vd->name, vd->label, vd->source,
                vd->flags & AV_VF_CAUSAL ? "" : "; no causal form", "", vd->formula);
    }
    fputs("\n", out);
    fwrite(v + 10, 1, (size_t)(k - (v + 10)), out);
    fputs("knobs (a knob a variant does not read is ignored):\n", out);
    char range[96], flag[64];
    for (int kn = AV_KNOB_VARIANT + 1; kn < AV_KNOB_COUNT; kn++) {
        const av_knob_desc *kd = av_knob_info(kn);
        range_text(range, sizeof range, kd);
        if (kd->type == AV_KT_BOOL) snprintf(flag, sizeof flag, "%s, --no-%s", kd->flag, kd->flag + 2);
        else snprintf(flag, sizeof flag, "%s %s", kd->flag, kd->type == AV_KT_ENUM ? "KIND" : "X");
        if (strlen(flag) < 22) fprintf(out, "  %-22s%s.\n  %-22s", flag, kd->meaning, "");
        else fprintf(out, "  %s\n  %-22s%s.\n  %-22s", flag, "", kd->meaning, "");
        if (kd->type != AV_KT_BOOL) fprintf(out, "%s; ", range);
        if (kd->flags & AV_KF_DEF_RSQRT_D) fputs("default 1/sqrt(d)", out);
        else if (kd->flags & AV_KF_DEF_MIN_N) fprintf(out, "default min(n, %g)", kd->def);
        else if (kd->type == AV_KT_BOOL) fputs(kd->def ? "default on" : "default off", out);
        else if (kd->type == AV_KT_ENUM) fprintf(out, "default %.*s", (int)strcspn(kd->options, "|"), kd->options);
        else fprintf(out, "default %g", kd->def);
        int first = 1; /* which variants read it */
        for (int i = 0; i < AV_VARIANT_COUNT; i++) {
            const av_variant_desc *vd = av_variant_info(i);
            int reads = kn == AV_KNOB_SCALE ? !!(vd->flags & AV_VF_SCALED) : 0;
            for (int j = 0; j < vd->knob_count; j++) reads |= vd->knobs[j] == kn;
            if (!reads || kn == AV_KNOB_CAUSAL) continue;
            fprintf(out, "%s%s", first ? "; read by " : ", ", vd->name);
            for (int j = 0; j < vd->knob_count; j++) /* its own default, where it differs */
                if (vd->knobs[j] == kn && vd->defaults[j] != 0) fprintf(out, " (default %g)", vd->defaults[j]);
            first = 0;
        }
        fputc('\n', out);
    }
    fputs("  --hedgehog-w W.npy    hedgehog W, (d, cols); default identity\n\n", out);
    fputs(k + 7, out);
}

int main(int argc, char **argv) {
    avcli_signals();
    if (argc < 2) return avcli_fail("no command (matrix, readouts, sweep, generate, capture, generate-text, recall, distill, table; see attnviz --help)");
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 || (i == 1 && strcmp(argv[i], "help") == 0)) {
            print_help(stdout);
            return avcli_stdout_check(0); /* a write to stdout that failed is an error, not a silent 0 */
        }
    const char *cmd = argv[1];
    int code;
    if (strcmp(cmd, "matrix") == 0) code = cmd_matrix(argc - 2, argv + 2);
    else if (strcmp(cmd, "readouts") == 0) code = cmd_readouts(argc - 2, argv + 2);
    else if (strcmp(cmd, "generate") == 0) code = cmd_generate(argc - 2, argv + 2);
    else if (strcmp(cmd, "sweep") == 0) code = avcli_cmd_sweep_main(argc - 2, argv + 2);
    else if (strcmp(cmd, "capture") == 0) code = avcli_cmd_capture(argc - 2, argv + 2);
    else if (strcmp(cmd, "generate-text") == 0) code = avcli_cmd_generate_text(argc - 2, argv + 2);
    else if (strcmp(cmd, "recall") == 0) code = avcli_cmd_recall(argc - 2, argv + 2);
    else if (strcmp(cmd, "distill") == 0) code = avcli_cmd_distill(argc - 2, argv + 2);
    else if (strcmp(cmd, "table") == 0) code = avcli_cmd_table(argc - 2, argv + 2);
    else return avcli_fail("%s: unknown command (matrix, readouts, sweep, generate, capture, generate-text, recall, distill, table; see attnviz --help)", avcli_brief(cmd));
    return avcli_stdout_check(code);
}
