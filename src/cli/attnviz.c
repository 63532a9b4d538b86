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
    "      kv_heads, n, head_size) and DIR/tokens.json {\"ids\", \"pieces\", \"text\"}.\n"
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
        avcli_range_text(range, sizeof range, kd);
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
