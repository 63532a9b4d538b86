/* attnviz.c: the command-line tool's entry point: --help, and the dispatch of each command to its file
 * (matrix_cmd.c, generate_cmd.c, readouts_cmd.c, ...; readouts' parse-and-print step is here). The
 * usage is HELP below; conventions: docs/conventions.md; which CLI file calls which: docs/architecture.md.
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
    "  attnviz matrix   --variant NAME --q Q.npy --k K.npy [--v V.npy] [--causal] [knobs] [gated inputs]\n"
    "                   -o M.npy\n"
    "                   [--out-o O.npy [--path quadratic|linear|recurrent|chunkwise]]\n"
    "      Write the variant's n x n attention matrix (or its effective n x n map) as float32 .npy.\n"
    "      With --v and --out-o, also write the output O = M V (n x dv), by the quadratic path (default),\n"
    "      the linear-time path, the recurrent form (token by token; causal) or the chunkwise form\n"
    "      (chunks of --chunk tokens and a carried state; causal).\n"
    "  attnviz readouts --variant NAME --q Q.npy --k K.npy [--v V.npy] [--causal] [knobs] [gated inputs]\n"
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
    "      --all-heads: every layer and head of 4-D tensors (or of a text's capture: --model M.bin|DIR\n"
    "      [--tokenizer T] --text \"...\" in place of --q, --k, --v), {\"layers\", \"heads\", \"kv_heads\", \"n\",\n"
    "      \"sweeps\": [[{\"layer\", \"head\", ...} per head] per layer]}.\n"
    "  attnviz generate --gen NAME --n N --d D [--std X] [--seed S] -o DIR\n"
    "      Write seeded synthetic DIR/q.npy, DIR/k.npy, DIR/v.npy, each n x d float32 (the same bits\n"
    "      natively and in the browser).\n"
    "  attnviz capture  --model M.bin|DIR [--tokenizer T] (--text \"...\" | --ids 1,42,7) [--logits]\n"
    "                   [--max-tokens N] -o DIR\n"
    "      Run a model over the text (as its tokenizer encodes it: llama2.c's with BOS first) and write\n"
    "      every layer's and head's DIR/q.npy (layers, heads, n, head_size; after RoPE, in the model's own\n"
    "      head layout), DIR/k.npy and DIR/v.npy (layers, kv_heads, n, head_size) and DIR/tokens.json\n"
    "      {\"ids\", \"pieces\", \"text\"}; --logits also DIR/logits.npy (n, vocab), every position.\n"
    "      --model: a llama2.c checkpoint (with --tokenizer T.bin) or a Hugging Face folder (config.json,\n"
    "      model.safetensors or its shards; Llama, Mistral, SmolLM, Qwen2, Qwen3, GPT-2), whose\n"
    "      tokenizer.json is the default --tokenizer; --max-tokens (default 2048) sizes its cache.\n"
    "      --ids: token ids as given, no BOS added. With --text-file F\n"
    "      [--lines] in place of --text: one capture a text in DIR/<name>/ (F a file, a folder of .txt files,\n"
    "      or with --lines one text a non-empty line, named by its number), all or none, at most 64.\n"
    "  attnviz table    --variants LIST|all --q Q.npy --k K.npy [--v V.npy] [--causal] [knobs] [--readouts LIST]\n"
    "                   [--format csv|jsonl] [-o OUT]    (or --model M.bin|DIR [--tokenizer T] --text-file F\n"
    "                   [--lines] [--summary] in place of --q, --k, --v)\n"
    "      Every layer x head x variant x scalar readout as rows layer,head,variant,knobs,readout,value,reason\n"
    "      (readouts' JSON keys; no spectra). With --text-file: the texts of F (a folder of .txt files, or\n"
    "      with --lines one text a line) captured and tabled one by one (a text column); --summary: per\n"
    "      head, variant and readout the texts used, nulls, mean, std, min and max over them.\n"
    "  attnviz generate-text --model M.bin|DIR [--tokenizer T] [--text \"...\"] [--steps N]\n"
    "      Print the prompt and the model's greedy continuation (N tokens, default 64; stops at BOS for\n"
    "      a llama2.c model, at the config's EOS ids for a Hugging Face folder).\n"
    "  attnviz recall   --variant NAME --pairs N --d D [--seeds S] [knobs] [gated inputs] [-o OUT.json]\n"
    "      Memory collisions: write N pairs (unit keys, N(0, I) values; drawn S times) into the variant's\n"
    "      memory in order, read every key back from the final memory, and print the mean relative error\n"
    "      ||o_i - v_i|| / ||v_i|| as JSON {\"recall_error_mean\", \"recall_error_min\", \"recall_error_max\", ...}\n"
    "      over the draws. Memories: softmax over the stored pairs, and every variant with a recurrent\n"
    "      state (decay and the delta rule included, the gated families with their gates per pair).\n"
    "      --scale is absolute here (default 1); no --causal.\n"
    "  attnviz distill  --q Q.npy --k K.npy [--v V.npy] [--causal] [--layer L --head H] [--hedgehog-w W0.npy]\n"
    "                   [--scale X] --steps N [--lr X] [--holdout Q2.npy K2.npy [V2.npy]]\n"
    "                   [--all-heads [--format json|csv]] -o W.npy\n"
    "      Train hedgehog's W (d x cols; from W0, or the identity) by Adam (default --lr 0.05) on the mean\n"
    "      row KL between softmax attention (this scale and mask) and hedgehog's; write W and print JSON\n"
    "      {\"loss\": [before each step, and at the end], \"loss_start\", \"loss_end\", \"kl_elu\", \"train\",\n"
    "      ...}: \"train\" (and with --holdout \"holdout\" and \"kl_rise\") the readouts row_kl_mean,\n"
    "      error_fro_rel, row_entropy_mean, output_error_rel before and after training. --all-heads: every\n"
    "      head of 4-D tensors, W.npy (layers, heads, d, cols), and a table, one row per head.\n"
    "  attnviz linearize --model M.bin|DIR [--tokenizer T] (--text \"...\" | --text-file F [--lines]) --variant V\n"
    "                   [knobs] [--layers L] [--heads H] [--path matrix|recurrent] [--prompt \"...\"] [--steps N]\n"
    "                   [--sensitivity] [--distill STEPS --train-file F [--lr X] [--save-w W.npy]] [-o OUT.json]\n"
    "      What the model loses: run it with the chosen heads' softmax swapped for the variant (causal; its\n"
    "      own conventions on each head's q, k, v) and print JSON {\"loss\", \"loss_original\", \"perplexity\",\n"
    "      \"kl_mean\", \"top1_agreement\", \"texts\" (per position), \"continuation\", ...} over the texts'\n"
    "      next-token predictions. --layers 0,2 / --heads 1,3 (from 0): --layers alone every head of those\n"
    "      layers, --heads alone those heads in every layer, neither every head. --path: the variant's\n"
    "      n x n matrix (default) or its recurrent state scan. --prompt (default the first text) and --steps\n"
    "      (default 32, 0 for none): the greedy continuations of both models. --sensitivity: each layer's\n"
    "      heads, then each head, swapped alone (delta_loss, kl_mean, top1_agreement). --distill STEPS (hedgehog\n"
    "      and the variants with weights): first train every chosen head's W (identity start, Adam, --lr\n"
    "      default 0.05) on --train-file's text against its own softmax; --save-w writes the Ws\n"
    "      (layers, heads, d, d).\n"
    "  attnviz tokenize --tokenizer FILE (--text \"...\" | --text-file F | --texts F) [--no-special]\n"
    "                   [--parse-special] [--model M.bin] [-o OUT]\n"
    "      Encode text with a Hugging Face tokenizer.json (docs/hf.md: BPE, byte-level as GPT-2, Llama 3,\n"
    "      Qwen2 and SmolLM, or byte fallback and the metaspace as Llama 2 and Mistral), or with --model\n"
    "      a llama2.c tokenizer.bin (for that checkpoint's vocab_size). --text S or --text-file F (the file's\n"
    "      bytes, one text): one JSON object {\"ids\": [...], \"pieces\": [...]}, each piece the bytes its\n"
    "      token decodes to after the one before, as a JSON string (bytes that are not valid UTF-8 as\n"
    "      U+FFFD). --texts F: F's texts separated by NUL bytes (n NULs, n + 1 texts; each raw bytes), one\n"
    "      JSON line {\"ids\": [...]} a text, in order. A text that is not valid UTF-8 has each maximal\n"
    "      invalid subsequence replaced by U+FFFD first (as TextDecoder does). --no-special: without what\n"
    "      the post-processor adds (Llama's BOS); --parse-special: special tokens written in the text\n"
    "      (\"<|endoftext|>\") become their ids (by default they are text). Every text is encoded before\n"
    "      anything is written.\n"
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
    "gated inputs (matrix, readouts, sweep, table; recall with N in place of n; docs/gated.md):\n"
    "  --gates G.npy    the log-gates g <= 0 (the decay is exp(g); a reset is -30): (n,) or (n, 1), one\n"
    "                   per token (every gated family), or (n, d), one per channel (gla, kda, dplr).\n"
    "  --betas B.npy    the write strengths beta in (0, 2], (n,) (gdn, kda).\n"
    "  --a A.npy --b B.npy  dplr's read and write vectors, (n, d) each, both or neither.\n"
    "                   float32 or float64. None is required: an array not given is the constant case,\n"
    "                   g = ln(--decay), beta = --beta, a = b = 0 (an array given replaces its knob).\n"
    "                   With 4-D tensors an array serves every head, or each head its own with (layers,\n"
    "                   heads) in front: (L, H, n), (L, H, n, d).\n"
    "                   The gated families exist only causal: the mask is on, --no-causal is refused.\n"
    "\n"
    "presets (--variant NAME; the JSON says \"variant\": the preset, \"family\": what it computes):\n"
    "  mamba2           simple_gla with scale 1 (--scale still sets it): q = C (--q), k = dt*B (--k is B),\n"
    "                   g = A*dt from --dt DT.npy ((n,), dt > 0) and --A X (X < 0), both or neither;\n"
    "                   without them the gates come from --gates or --decay. V is x; no D*x skip in M.\n"
    "  rwkv7            dplr with scale 1: a = -kappa, b = kappa*a_icl, kappa = k/|k| of each row of --k,\n"
    "                   unless --a and --b are given; a_icl from --a-icl X (in (0, 1], default 0.5) or\n"
    "                   --a-icl-file A.npy ((n, d), in (0, 1]); the decay w from --gates (log w) or --decay.\n"
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
// readouts: the shared inputs parsed here, the object printed by readouts_cmd.c (or table_cmd.c for --all-heads)

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

/* --help: HELP with the registry's variants and knobs in place of %VARIANTS% and %KNOBS%. */
static void print_help(FILE *out) {
    const char *v = strstr(HELP, "%VARIANTS%"), *k = strstr(HELP, "%KNOBS%");
    fwrite(HELP, 1, (size_t)(v - HELP), out);
    fputs("variants (--variant NAME):\n", out);
    for (int i = 0; i < AV_VARIANT_COUNT; i++) {
        const av_variant_desc *vd = av_variant_info(i);
        fprintf(out, "  %-12s%s (%s)%s\n  %-12s%s\n", vd->name, vd->label, vd->source,
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
                if (vd->knobs[j] == kn && vd->defaults[j] != 0) {
                    if (kd->type == AV_KT_BOOL) fprintf(out, " (default %s)", vd->defaults[j] > 0 ? "on" : "off");
                    else fprintf(out, " (default %g)", vd->defaults[j]);
                }
            first = 0;
        }
        fputc('\n', out);
    }
    fputs("  --hedgehog-w W.npy    hedgehog W, (d, cols); default identity\n\n", out);
    fputs(k + 7, out);
}

int main(int argc, char **argv) {
    avcli_signals();
    if (argc < 2) return avcli_fail("no command (matrix, readouts, sweep, generate, capture, generate-text, recall, distill, table, linearize, tokenize; see attnviz --help)");
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 || (i == 1 && strcmp(argv[i], "help") == 0)) {
            print_help(stdout);
            return avcli_stdout_check(0); /* a write to stdout that failed is an error, not a silent 0 */
        }
    const char *cmd = argv[1];
    int code;
    if (strcmp(cmd, "matrix") == 0) code = avcli_cmd_matrix(argc - 2, argv + 2);
    else if (strcmp(cmd, "readouts") == 0) code = cmd_readouts(argc - 2, argv + 2);
    else if (strcmp(cmd, "generate") == 0) code = avcli_cmd_generate(argc - 2, argv + 2);
    else if (strcmp(cmd, "sweep") == 0) code = avcli_cmd_sweep_main(argc - 2, argv + 2);
    else if (strcmp(cmd, "capture") == 0) code = avcli_cmd_capture(argc - 2, argv + 2);
    else if (strcmp(cmd, "generate-text") == 0) code = avcli_cmd_generate_text(argc - 2, argv + 2);
    else if (strcmp(cmd, "recall") == 0) code = avcli_cmd_recall(argc - 2, argv + 2);
    else if (strcmp(cmd, "distill") == 0) code = avcli_cmd_distill(argc - 2, argv + 2);
    else if (strcmp(cmd, "table") == 0) code = avcli_cmd_table(argc - 2, argv + 2);
    else if (strcmp(cmd, "linearize") == 0) code = avcli_cmd_linearize(argc - 2, argv + 2);
    else if (strcmp(cmd, "tokenize") == 0) code = avcli_cmd_tokenize(argc - 2, argv + 2);
    else return avcli_fail("%s: unknown command (matrix, readouts, sweep, generate, capture, generate-text, recall, distill, table, linearize, tokenize; see attnviz --help)", avcli_brief(cmd));
    return avcli_stdout_check(code);
}
