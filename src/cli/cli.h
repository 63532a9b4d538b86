/* cli.h: the attnviz command-line tool's shared pieces (native only; not part of the library). */
#ifndef ATTNVIZ_CLI_H
#define ATTNVIZ_CLI_H

#include <stdio.h>
#include "attnviz.h"

/* Inputs common to `attnviz matrix` and `attnviz readouts`, parsed by avcli_parse_inputs. */
typedef struct avcli_inputs {
    av_params prm;          /* variant, causal and knobs from the flags (unresolved: zeros are defaults) */
    float *Q, *K, *V;       /* n×d, n×d, n×dv (V NULL when --v was not given); owned, freed by avcli_free */
    float *hedgehog_w;      /* d×cols from --hedgehog-w, or NULL */
    int n, d, dv;
    const char *out;        /* -o path, or NULL */
    int accurate;           /* --accurate: the accurate spectrum route (readouts) */
    double tau;             /* --tau (readouts), 0 → 0.1 */
    int has_head, layer, head; /* 4-D inputs: the selected layer and head, printed in the readouts object */
    int summary;            /* readouts without the spectra (singular values, error curve): --summary */
    const char *where;      /* names the head in warnings ("layer 1 head 3"), or NULL */
    char **only;            /* table --readouts: the readouts asked for (warnings of steps only others need are */
    int nonly;              /* left out), or NULL */
    int alias;              /* AVCLI_MAMBA2, AVCLI_RWKV7 (--variant names a preset of prm.variant), or 0 */
    float *gates, *betas, *dplr_a, *dplr_b; /* the gated families' arrays (gated_inputs.c), owned; NULL: none given */
    float *a_icl;           /* rwkv7: the in-context learning rates (n×d) of --a-icl-file, owned, or NULL: */
    double a_icl_const;     /* the constant of --a-icl (default 0.5) */
    int ab_made;            /* rwkv7: dplr_a, dplr_b were built from K (avcli_rwkv7_ab), not given */
} avcli_inputs;

// ----------------------------------------------------------------------------------------------------
// the gated families' arrays and presets (gated_inputs.c; docs/gated.md)

/* The presets: mamba2 is simple_gla with scale 1 (q = C, k = Δ·B, g = A·Δ with --dt, --A), rwkv7 is dplr with
 * scale 1 (a = −κ̂, b = κ̂ ⊙ a_icl from K unless --a, --b are given). */
enum { AVCLI_NO_ALIAS = 0, AVCLI_MAMBA2 = 1, AVCLI_RWKV7 = 2, AVCLI_ALIAS_COUNT = 3 };
/* A --variant name: the registry's variant it computes (−1: unknown), and *alias the preset it names (or 0). */
int avcli_variant_lookup(const char *name, int *alias);
/* The name a command prints for the variant: the preset's, else the registry's. */
const char *avcli_variant_label(int variant, int alias);
/* The presets' names, joined by ", " (for the refusals that list the variants). */
const char *avcli_alias_list(void);

/* The flags of the gated inputs, as given (NULL when absent). */
enum { AVCLI_G_GATES, AVCLI_G_BETAS, AVCLI_G_A, AVCLI_G_B, AVCLI_G_DT, AVCLI_G_AMAMBA, AVCLI_G_AICL, AVCLI_G_AICL_FILE,
       AVCLI_G_COUNT };
extern const char *const AVCLI_GATE_FLAGS[AVCLI_G_COUNT]; /* "--gates", "--betas", "--a", "--b", "--dt", "--A", ... */
/* 1 when the variant (with the preset `alias`) reads gate flag f: --gates every gated family, --betas gdn and
 * kda, --a and --b dplr, --dt and --A mamba2, --a-icl and --a-icl-file rwkv7. */
int avcli_gate_flag_read(int variant, int alias, int f);
/* The refusals that need no file: a flag the variant does not read, --a without --b, --dt without --A or with
 * --gates, --a-icl with --a-icl-file or with --a/--b, --A or --a-icl out of range. 0, or one line and 2. */
int avcli_gates_flags_check(const char *const *flag, int variant, int alias);
/* Where the arrays' rows come from: (n, d) inputs, or 4-D ones (L layers × H query heads) of which layer and
 * head are taken; an array may then be shared by every head or given per head, (L, H, ...) in front. */
typedef struct avcli_geom { int n, d, four, layer, head; int64_t L, H; } avcli_geom;
/* Read, check and set the arrays the flags name into in (in->gates, ... and in->prm by av_params_set_gates and
 * av_params_set_dplr), after Q and K were loaded: shapes against n, d (one sentence naming the array, its
 * shape and the shapes it may have), values (the first bad entry and its index), then the presets' mapping
 * (mamba2: K's rows scaled by Δ, g = A·Δ; rwkv7: a and b from K). 0, or one line and the exit status. */
int avcli_gates_load(avcli_inputs *in, const char *const *flag, const avcli_geom *g);
/* rwkv7 without --a, --b: in->dplr_a, dplr_b (n×d, allocated once) ← −κ̂, κ̂ ⊙ a_icl of these keys (K n×d;
 * recall calls it again for each draw of its keys), set into in->prm. 0, or one line and the exit status. */
int avcli_rwkv7_ab(avcli_inputs *in, const float *K, int n, int d);

/* Parse the shared flags (see `attnviz --help`; inputs.c), load the .npy files (selecting --layer/--head for
 * 4-D model tensors). On failure prints one line to stderr and returns 2; 0 on success. */
int avcli_parse_inputs(avcli_inputs *in, int argc, char **argv);
void avcli_free(avcli_inputs *in);
/* Knob flags only (--variant, knobs, -o) for commands without input files, checked at in->n, in->d with the
 * causal mask on; --causal is refused. 0, or one line on stderr and the exit status. */
int avcli_parse_knobs(avcli_inputs *in, int argc, char **argv);
/* Knob flags for a model's heads (linearize): --variant, knobs, -o; --causal implied, --no-causal, a variant
 * without a causal form and the file flags refused. 0, or one line on stderr and the exit status. */
int avcli_parse_head_knobs(avcli_inputs *in, int argc, char **argv);
/* Those knobs (the same argv) checked for a text of n tokens and head size d, causal. 0, or one line and 2. */
int avcli_check_head_knobs(avcli_inputs *in, int argc, char **argv, int n, int d);

/* `attnviz matrix` (matrix_cmd.c) and `attnviz generate` (generate_cmd.c): argv after the command. Exit status. */
int avcli_cmd_matrix(int argc, char **argv);
int avcli_cmd_generate(int argc, char **argv);

/* `attnviz recall` and `attnviz distill` (mech_cmd.c): argv after the command. Exit status. */
int avcli_cmd_recall(int argc, char **argv);
int avcli_cmd_distill(int argc, char **argv);
/* One head's distillation (mech_cmd.c; `distill` and `linearize --distill`): the losses (steps + 1, the caller
 * allocates), W as written (d×cols float32, the caller allocates), the steps taken, why it stopped ("ok" or the
 * warning's sentence), and the metrics row_kl_mean, error_fro_rel, row_entropy_mean, output_error_rel on the
 * training and held-out inputs, before (the starting W) and after (W), NaN with a reason; kl_elu is elu+1's
 * mean row KL to the same softmax on the training inputs, kl_elu_holdout on the held-out ones (NaN without). */
enum { AVCLI_DISTILL_METRICS = 4, AVCLI_BEFORE = 0, AVCLI_AFTER = 1, AVCLI_TRAIN = 0, AVCLI_HOLDOUT = 1 };
typedef struct avcli_distill_result {
    double *loss;
    float *Wf;
    int taken, st;
    char why[320];
    double met[2][2][AVCLI_DISTILL_METRICS]; /* [TRAIN|HOLDOUT][BEFORE|AFTER][metric], NaN with a reason */
    int met_why[2][2][AVCLI_DISTILL_METRICS];
    int n_holdout;                           /* 0: no held-out inputs */
    double kl_elu, kl_elu_holdout;
} avcli_distill_result;
typedef struct avcli_distill_run { long steps; double lr; const char *where; /* "" or "L1H3: " for warnings */ } avcli_distill_run;
/* Train W on `in` (Q, K, n, d, prm: hedgehog or another variant with weights, its start prm.hedgehog_w or the
 * identity), then the metrics on `in` and `ho` (NULL: none). 0, or one line and the exit status. */
int avcli_distill_head(avcli_distill_result *res, const avcli_distill_run *run, const avcli_inputs *in,
                       const avcli_inputs *ho);

/* `attnviz readouts`: print one JSON object to `out` (readouts_cmd.c). Returns the exit status. */
int avcli_cmd_readouts(const avcli_inputs *in, FILE *out);
/* `attnviz readouts --all-heads` and `attnviz table` (table_cmd.c): argv after the command, without
 * --all-heads for the first. Exit status. */
int avcli_cmd_all_heads(int argc, char **argv);
int avcli_cmd_table(int argc, char **argv);
/* `attnviz linearize` (linearize_cmd.c): the model with some heads' attention swapped for a variant, measured
 * against the original (docs/model.md "Swapped attention"). argv after the command. Exit status. */
int avcli_cmd_linearize(int argc, char **argv);
/* The knobs the variant of `in` reads, resolved at in->n, in->d, as the table's knobs column spells them
 * ("p=3;m=64"; scale where --scale is among flags, the arrays given, W=given|identity, causal=1 where the mask is
 * on but causal_given is 0) (table_cmd.c). */
void avcli_knobs_text(char *out, size_t cap, const avcli_inputs *in, int nflags, char **flags, int causal_given);

/* The plain softmax reference of readouts (the inputs' scale and mask, no decay, no window): n×n, or NULL
 * with *status < 0. */
float *avcli_reference(const avcli_inputs *in, int *status);
/* Every readout of variant `prm` on the inputs, against A (NULL: none), into vals and why (AV_R_COUNT
 * each): a number with reason AV_REASON_NONE, or NaN with the library's reason; the spectrum (and the
 * spectral readouts) only when `spectral`, else their reason is "no spectrum". 0 (AV_OK), or the failing
 * library status (< 0). */
int avcli_readout_values(double *vals, int *why, const av_params *prm, const avcli_inputs *in, const float *A,
                         int spectral);

/* `attnviz sweep`: readouts against one knob's values, over seeds (readouts_cmd.c). */
enum { AVCLI_MAX_SWEEP = 256 };
typedef struct avcli_sweep {
    int knob;                        /* enum av_knob */
    double values[AVCLI_MAX_SWEEP];  /* the knob's values, as typed (0 is a real 0 where the knob allows it) */
    int count;
    int seeds;                       /* ≥ 1: the random matrices drawn with seed … seed + seeds − 1 */
    int readout[AV_R_COUNT];         /* enum av_readout, in the order asked, each once */
    int nreadouts;                   /* ≥ 1 */
    int multi;                       /* 1: the several-readout shape ({"readouts", "results"}), else one readout's */
    int layer, head;                 /* ≥ 0: printed first (a record of --all-heads); −1: not printed */
} avcli_sweep;
/* Print one JSON object to `out`: {"variant", "knob", "readout", "seeds", "values", "mean", "min", "max",
 * "defined", "reasons"} for one readout, or {"variant", "knob", "readouts", "seeds", "values", "results":
 * {KEY: {"mean", "min", "max", "defined", "reasons"}}} (multi): per value the mean, min and max of the
 * readout over the seeds where it is defined, how many those were, and where none was (null) the library's
 * reason. Returns the exit status. */
int avcli_cmd_sweep(const avcli_inputs *in, const avcli_sweep *sw, FILE *out);
/* `attnviz sweep` from argv after the command: its own flags, then avcli_cmd_sweep (sweep_cmd.c). */
int avcli_cmd_sweep_main(int argc, char **argv);

/* Shared by the commands in attnviz.c and sweep_cmd.c: a knob's number from text by the flags' rules (an
 * integer ≥ the row's lower bound, a real ≥ 0, a typed 0 refused where 0 means the default); 1 on success
 * (inputs.c). avcli_range_text: a knob's range in words, for messages and help (inputs.c).
 * avcli_emit_json runs a JSON-printing command into stdout, or -o through a temporary (output.c). */
int avcli_knob_number(const av_knob_desc *kd, const char *text, double *v);
void avcli_range_text(char *out, size_t cap, const av_knob_desc *kd);
int avcli_emit_json(const avcli_inputs *in, int (*cmd)(const avcli_inputs *, const void *, FILE *), const void *ctx);

/* `attnviz tokenize` (tokenize_cmd.c): argv after the command. Exit status. */
int avcli_cmd_tokenize(int argc, char **argv);

/* `attnviz capture` and `attnviz generate-text` (model_cmd.c): argv after the command. Exit status. */
int avcli_cmd_capture(int argc, char **argv);
int avcli_cmd_generate_text(int argc, char **argv);
/* A checkpoint and tokenizer loaded once for several captures (model_cmd.c): open (0, or one line and the
 * exit status), capture a text (`what` names it in messages; Q (layers, heads, n, head_size) after RoPE, K
 * and V (layers, kv_heads, n, head_size), as `attnviz capture` writes them), close. */
typedef struct avcli_model avcli_model;
typedef struct avcli_capture { float *Q, *K, *V; int64_t shape_q[4], shape_kv[4]; } avcli_capture;
int avcli_model_open(avcli_model **m, const char *model, const char *tokenizer);
int avcli_model_capture(const avcli_model *m, const char *text, const char *what, avcli_capture *c);
void avcli_capture_free(avcli_capture *c);
void avcli_model_close(avcli_model *m);
/* The loaded model's weights and tokenizer; a text encoded with BOS (UTF-8, at most seq_len tokens; *ids
 * malloc'd, `what` names it in messages): 0, or one line and the exit status. */
const av_model *avcli_model_weights(const avcli_model *m);
/* The bytes token id stands for after prev (the tokenizer's own decoding; *p valid until the next call):
 * 0, or −1 for an id the tokenizer cannot print. */
int avcli_model_piece(const avcli_model *m, int prev, int id, const char **p, int *len);
int avcli_model_encode(const avcli_model *m, const char *text, const char *what, int **ids, int *n);
/* A Hugging Face model folder (hf_folder.c): config.json, the shards (model.safetensors, or the index's),
 * read whole, parsed and bound into *m with seq_len at most max_seq. 0, or one line and the exit status
 * (nothing kept). The struct owns the buffers the model points into: close it after the model's last use. */
typedef struct avcli_hf {
    av_hf_config cfg;
    int n, has_ix;
    unsigned char **buf;
    void **work, *ixwork, *bindwork;
    av_st_file *files;
    av_hf_index ix;
} avcli_hf;
int avcli_is_dir(const char *path);
int avcli_hf_open(avcli_hf *h, av_model *m, const char *dir, int max_seq);
void avcli_hf_close(avcli_hf *h);
#define AVCLI_HF_MAX_TOKENS 2048 /* --max-tokens' default: the key/value cache is sized for it */
/* --max-tokens VALUE (NULL: keep the default) for the models avcli_model_open loads next: 0, or one line */
int avcli_max_tokens(const char *value);
/* A JSON string of bytes: escapes, and U+FFFD for bytes that are not valid UTF-8 (model_cmd.c). */
void avcli_json_string(FILE *out, const unsigned char *s, size_t len);

// ----------------------------------------------------------------------------------------------------
// exit statuses and error lines (output.c)

/* The one exit-status rule of every command: 0 success (numerical warnings print one line on stderr and
 * still exit 0); 2 bad input (flags, knobs, malformed or mismatched files, NaN/Inf in inputs); 1 the
 * system failed (a file cannot be opened, read or written, out of memory). */
enum { AVCLI_EXIT_OK = 0, AVCLI_EXIT_SYSTEM = 1, AVCLI_EXIT_INPUT = 2 };
/* Print "attnviz: <formatted>" as one line on stderr; return AVCLI_EXIT_INPUT (fail) or
 * AVCLI_EXIT_SYSTEM (fail_system). */
int avcli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int avcli_fail_system(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The exit status for a library status: AV_ERR_NOMEM and AV_ERR_IO are the system's, other errors the input's. */
int avcli_exit_code(int status);

// ----------------------------------------------------------------------------------------------------
// outputs: written to a temporary file beside the target, renamed into place only on success (output.c)

enum { AVCLI_MAX_TEXTS = 64 }; /* texts `capture --text-file` writes in one call, all or none */
enum { AVCLI_MAX_OUTPUTS = 4 * AVCLI_MAX_TEXTS }; /* files one command writes at once */

typedef struct avcli_out {
    const char *path; /* the target (the file a symbolic link names, when the target is one) */
    char *tmp;        /* the temporary beside it (NULL when the target is a device or a pipe) */
    char *real;       /* the resolved path of a symbolic link target, or NULL (owned) */
    FILE *f;          /* open for writing until avcli_out_close */
} avcli_out;
/* Open a temporary for `path`. 0, or −1 with errno set (EISDIR: the target is a folder, refused before
 * anything is written). */
int avcli_out_open(avcli_out *o, const char *path);
/* Flush and close o->f; −1 with errno when any write or the close failed. */
int avcli_out_close(avcli_out *o);
/* Rename the closed temporary into place; −1 with errno (the temporary is removed). */
int avcli_out_commit(avcli_out *o);
/* Close and remove the temporary; the target is untouched. */
void avcli_out_discard(avcli_out *o);
/* The one line for output `path` (given with `flag`) that failed with errno `err`: an empty path or a
 * folder is bad input (2), anything else the system's failure (1). Returns the exit status. */
int avcli_out_fail(const char *flag, const char *path, int err);
/* An output file's path checked early, before the work (an empty path, a folder: one line, 2). 0 if fine. */
int avcli_out_check(const char *flag, const char *path);
/* Rename count closed temporaries into place, all or none: every destination is checked first (a folder,
 * two outputs naming one file), the old files keep a second name (a hard link) until all are in place,
 * and a rename that fails puts back those renamed before it. Signals wait until it is done. 0, or one
 * line and the exit status (the temporaries are removed either way). */
int avcli_out_commit_all(avcli_out *o, const char *const *flags, int count);

/* An -o folder: avcli_dir_check refuses an empty path or one that is not a folder (2), before anything is
 * read; avcli_dir_make creates it when missing (*made = 1), after every input was read and checked, and
 * an interrupt or a termination from then on removes it again while it is empty; avcli_dir_done removes
 * it if the command failed (and it is empty) and forgets it. */
int avcli_dir_check(const char *flag, const char *dir);
int avcli_dir_make(const char *flag, const char *dir, int *made);
void avcli_dir_done(const char *dir, int made, int failed);

/* The whole regular file at `path` (named by `flag` in messages) in a malloc'd buffer (*buf, *len; the
 * caller frees it; malloc's alignment suits av_model_parse). An empty path, a folder, a device or a pipe
 * is refused before anything is read (2). 0, or one line on stderr and the exit status; *buf is NULL then. */
int avcli_read_file(const char *flag, const char *path, unsigned char **buf, size_t *len);
/* The header of the .npy at `path` (read whole; for a command that needs a shape before it loads the
 * inputs). 0, or one line on stderr and the exit status. */
int avcli_npy_shape(av_npy_info *info, const char *flag, const char *path);

/* The .npy at `path` read whole and decoded to float32 (*data malloc'd, info->count entries; float32 or
 * float64 files). 0, or one line on stderr and the exit status; *data is NULL then. */
int avcli_npy_load(av_npy_info *info, float **data, const char *flag, const char *path);

/* Numbers from flags: the whole of `s` (no leading blanks), a finite double, or an integer in [lo, hi]
 * (output.c). 1 on success. */
int avcli_parse_double(const char *s, double *out);
int avcli_parse_long(const char *s, long long lo, long long hi, long long *out);

/* Write a float32 C-order .npy to f. Returns AV_OK or AV_ERR_IO. */
int avcli_write_npy_f32(FILE *f, const float *data, const int64_t *shape, int ndim);

/* One output file of a command: the flag that named it (for messages), its path, and either a float32
 * .npy (data and shape) or what `write` puts into it (returning AV_OK or AV_ERR_IO). */
typedef struct avcli_file {
    const char *flag, *path;
    const float *data;
    int64_t shape[4];
    int ndim;
    int (*write)(FILE *f, const void *ctx);
    const void *ctx;
} avcli_file;
/* Open every file's temporary (checking its destination), write them all, then rename all into place
 * (avcli_out_commit_all): when anything fails none is replaced. 0, or one line and the exit status. */
int avcli_save(const avcli_file *files, int count);
/* avcli_save in two halves, for a command that also prints to stdout: begin writes every temporary (0, or
 * one line and the exit status, nothing left); end renames them all into place (keep = 1: 0 or one line and
 * the exit status) or removes them (keep = 0, after stdout failed: 0). Between the two a signal that ends
 * the process removes the temporaries, so the old files stay. */
typedef struct avcli_saving {
    avcli_out out[AVCLI_MAX_OUTPUTS];
    const char *flags[AVCLI_MAX_OUTPUTS];
    int count;
} avcli_saving;
int avcli_save_begin(avcli_saving *s, const avcli_file *files, int count);
int avcli_save_end(avcli_saving *s, int keep);

/* Flush stdout and check it: `code` when it is not 0, else 0, or one line and 1 when a write to stdout
 * failed (a full disk, a closed pipe whose SIGPIPE is ignored). */
int avcli_stdout_check(int code);
/* Set the process's signals up: those that end it clean up the temporaries first (output.c). */
void avcli_signals(void);

/* An echoed value for a message: s itself, or its first AVCLI_BRIEF characters and "…" (a message names
 * the bad value, never dumps the input); a line break shows as '?'. Valid until four more calls. */
enum { AVCLI_BRIEF = 40 };
const char *avcli_brief(const char *s);

/* The texts of --text-file F (texts.c): a folder's .txt files in name order, F whole, or with lines = 1
 * each non-empty line of F (named by its line number). 0, or one line on stderr and the exit status. */
typedef struct avcli_texts {
    char **body, **name;
    int count, lines;
} avcli_texts;
int avcli_read_texts(avcli_texts *tx, const char *path, int lines);
/* The same, with the refusals naming `flag` (linearize --train-file) in place of --text-file. */
int avcli_read_texts_flag(avcli_texts *tx, const char *flag, const char *path, int lines);
void avcli_free_texts(avcli_texts *tx);

/* A CSV field (RFC 4180): quoted only when it holds a comma, a quote or a line break; NULL writes nothing. */
void avcli_csv_field(FILE *f, const char *s);

#endif
