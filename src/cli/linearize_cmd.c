/* linearize_cmd.c: `attnviz linearize`, what a model loses when some heads' softmax is swapped for a
 * variant (docs/model.md "Swapped attention: what the model loses"):
 *
 *   attnviz linearize --model M.bin --tokenizer T.bin (--text "…" | --text-file F [--lines]) --variant V [knobs]
 *                     [--layers L] [--heads H] [--path matrix|recurrent] [--prompt "…"] [--steps N]
 *                     [--sensitivity] [--distill STEPS --train-file F [--lr X] [--save-w W.npy]] [-o OUT.json]
 *
 * Everything is read and checked first (flags, model, texts, every chosen head's knobs at every text's
 * length), then the passes run, then the JSON (and --save-w) are written together: all, or none.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static void put_num(FILE *out, double x) {
    if (isfinite(x)) fprintf(out, "%.17g", x);
    else fputs("null", out);
}

static void put_doubles(FILE *out, const double *x, int count) {
    fputc('[', out);
    for (int i = 0; i < count; i++) {
        if (i) fputs(", ", out);
        put_num(out, x[i]);
    }
    fputc(']', out);
}

static void put_ints(FILE *out, const int *x, int count) {
    fputc('[', out);
    for (int i = 0; i < count; i++) fprintf(out, "%s%d", i ? ", " : "", x[i]);
    fputc(']', out);
}

// ----------------------------------------------------------------------------------------------------
// flags

enum { O_MODEL, O_TOKENIZER, O_TEXT, O_TEXT_FILE, O_LAYERS, O_HEADS, O_PATH, O_PROMPT, O_STEPS, O_DISTILL, O_TRAIN,
       O_LR, O_SAVE_W, O_MAX_TOKENS, O_COUNT };
static const char *const OWN[O_COUNT] = {"--model", "--tokenizer", "--text", "--text-file", "--layers", "--heads",
                                         "--path", "--prompt", "--steps", "--distill", "--train-file", "--lr",
                                         "--save-w", "--max-tokens"};
static const char USAGE[] = "attnviz linearize --model M.bin|DIR [--tokenizer T] --text \"...\" --variant V";

/* A comma list of distinct integers in 0..count−1 into sel[] (sel[i] = 1 when listed); `what` names the unit
 * ("layers", "heads") in the refusal, with the model's range. */
static int index_list(int *sel, const char *flag, const char *text, int count, const char *what) {
    memset(sel, 0, sizeof(int) * (size_t)count);
    const char *p = text;
    if (!*p) return avcli_fail("%s: an empty list (comma-separated %s, 0..%d)", flag, what, count - 1);
    while (1) {
        size_t w = strcspn(p, ",");
        char item[32];
        long long v;
        if (w == 0 || w >= sizeof item) return avcli_fail("%s %s: not a comma-separated list of %s (0..%d)", flag, avcli_brief(text), what, count - 1);
        memcpy(item, p, w);
        item[w] = 0;
        if (!avcli_parse_long(item, -2147483647LL, 2147483647LL, &v))
            return avcli_fail("%s %s: %s is not an integer (comma-separated %s, 0..%d)", flag, avcli_brief(text), avcli_brief(item), what, count - 1);
        if (v < 0 || v >= count)
            return avcli_fail("%s %s: %s out of range (the model has %d %s: 0..%d)", flag, avcli_brief(text), avcli_brief(item), count, what, count - 1);
        if (sel[v]) return avcli_fail("%s %s: %lld listed twice", flag, avcli_brief(text), v);
        sel[v] = 1;
        if (!p[w]) break;
        p += w + 1;
    }
    return 0;
}

/* One evaluated text: its ids, and its measures (NaN when its logits were not finite). */
typedef struct lz_text {
    const char *name;   /* in the JSON: "text", the file's name, or the line's number */
    char what[96];      /* in messages: "--text", "--text-file F", "--text-file line 3" */
    int *ids, n;
    double mean[5];
    double *loss_s, *loss_o, *kl; /* n − 1 each */
    int *agree;
    int defined;
} lz_text;

typedef struct lz {
    avcli_model *mp;
    const av_model *m;
    avcli_inputs in;   /* the variant and its knobs (prm), -o */
    int nknob;         /* the knob flags (argv for avcli_check_head_knobs, avcli_knobs_text) */
    char **knob;
    int path, steps, sensitivity, lines;
    int *chosen, nchosen;  /* L·H: 1 for a swapped head */
    av_params *prm;        /* L·H: each chosen head's parameters (its own W after --distill) */
    const av_params **heads;
    lz_text *tx;
    int ntx, txcap, positions; /* texts read, allocated; predicted positions over all */
    int *prompt, nprompt;
    int *cont[2], ncont[2]; /* original, swapped: the prompt then the tokens */
    double *by_layer, *by_head; /* L·3, L·H·3, over the texts (weighted by positions) */
    /* --distill */
    long dsteps;
    double lr;
    int *train_ids, ntrain;
    avcli_distill_result *dres; /* L·H (chosen heads only filled) */
    float *W;                   /* (L, H, d, d) for --save-w */
    double *curve;
    char knobs[512];
} lz;

// ----------------------------------------------------------------------------------------------------
// warnings: the pass's status in words, naming the text, and what it means for the numbers

static void warn_pass(const char *what, const char *pass, int st, int defined) {
    const char *means = st == AV_WARN_NO_CONVERGENCE ? "the outputs are finite; the measures include them"
                        : defined ? "the logits stayed finite; the measures include those rows as computed"
                                  : "the logits are not finite, so this text's measures are null";
    fprintf(stderr, "attnviz: warning: %s: %s: %s (%s)\n", what, pass, av_status_string(st), means);
}

/* A library error from a pass: the refused head named when the library names it. */
static int pass_error(const lz *z, int st, int bad, const char *what) {
    if (st == AV_ERR_NOMEM) return avcli_fail_system("out of memory");
    const char *v = avcli_variant_label(z->in.prm.variant, z->in.alias);
    if (bad >= 0)
        return avcli_fail("%s: layer %d head %d, %s%s: %s", what, bad / z->m->n_heads, bad % z->m->n_heads, v,
                          z->path == AV_SWAP_RECURRENT ? " on the recurrent path" : "", av_status_string(st));
    return avcli_fail("%s: %s: %s", what, v, av_status_string(st));
}

// ----------------------------------------------------------------------------------------------------
// the passes

/* Logits [n][vocab] of the text under `heads` (NULL: the original model). */
static int logits_of(float *lg, int *status, const lz *z, const lz_text *t, const av_params *const *heads, void **work,
                     size_t *wcap) {
    size_t wb = av_forward_swapped_work(z->m, t->n, heads, z->path);
    if (!wb) return avcli_fail("%s: %s", t->what, av_status_string(AV_ERR_TOO_LARGE));
    if (wb > *wcap) {
        void *w = realloc(*work, wb);
        if (!w) return avcli_fail_system("out of memory");
        *work = w, *wcap = wb;
    }
    int bad = -1, st = av_forward_swapped(lg, NULL, NULL, NULL, z->m, t->ids, t->n, heads, z->path, &bad, *work, wb);
    if (st < 0) return pass_error(z, st, bad, t->what);
    *status = st;
    return 0;
}

/* Every text's measures, original against swapped. */
static int measure_texts(lz *z) {
    const int vocab = z->m->vocab_size;
    void *work = NULL;
    size_t wcap = 0;
    int code = 0;
    for (int i = 0; i < z->ntx && !code; i++) {
        lz_text *t = &z->tx[i];
        size_t cnt = (size_t)t->n * vocab;
        float *lo = malloc(sizeof(float) * cnt), *ls = malloc(sizeof(float) * cnt);
        t->loss_s = malloc(sizeof(double) * (size_t)(t->n - 1)), t->loss_o = malloc(sizeof(double) * (size_t)(t->n - 1));
        t->kl = malloc(sizeof(double) * (size_t)(t->n - 1)), t->agree = malloc(sizeof(int) * (size_t)(t->n - 1));
        int so = 0, ss = 0;
        if (!lo || !ls || !t->loss_s || !t->loss_o || !t->kl || !t->agree) code = avcli_fail_system("out of memory");
        if (!code) code = logits_of(lo, &so, z, t, NULL, &work, &wcap);
        if (!code) code = logits_of(ls, &ss, z, t, z->heads, &work, &wcap);
        if (!code) {
            int st = av_next_token_measures(t->mean, t->loss_s, t->loss_o, t->kl, t->agree, lo, ls, t->ids, t->n, vocab);
            t->defined = st == AV_OK;
            if (st < 0 && st != AV_ERR_NONFINITE) code = avcli_fail("%s: %s", t->what, av_status_string(st));
            if (!t->defined)
                for (int k = 0; k < 5; k++) t->mean[k] = NAN;
            if (so) warn_pass(t->what, "the original model", so, t->defined);
            if (ss) warn_pass(t->what, "the swapped model", ss, t->defined);
        }
        free(lo);
        free(ls);
    }
    free(work);
    return code;
}

/* The greedy continuations of the prompt, by the original model and the swapped one. */
static int continue_both(lz *z) {
    for (int s = 0; s < 2; s++) {
        const av_params *const *heads = s ? z->heads : NULL;
        size_t wb = av_continue_swapped_work(z->m, z->nprompt + z->steps, heads, z->path);
        void *w = wb ? malloc(wb) : NULL;
        z->cont[s] = malloc(sizeof(int) * (size_t)(z->nprompt + z->steps));
        if (!wb) { free(w); return avcli_fail("--prompt: %s", av_status_string(AV_ERR_TOO_LARGE)); }
        if (!w || !z->cont[s]) { free(w); return avcli_fail_system("out of memory"); }
        int bad = -1, st = av_continue_swapped(z->cont[s], &z->ncont[s], z->m, z->prompt, z->nprompt, z->steps, heads,
                                               z->path, &bad, w, wb);
        free(w);
        if (st < 0) return pass_error(z, st, bad, "--prompt");
        if (st > 0)
            fprintf(stderr, "attnviz: warning: the prompt's continuation by the %s model: %s (%s)\n", s ? "swapped" : "original",
                    av_status_string(st),
                    st == AV_WARN_ZERO_ROW ? "the continuation went on" : "it stopped at the step whose logits were not finite");
    }
    return 0;
}

/* The sensitivity table over the texts: each text's entries weighted by its positions. */
static int sensitivity(lz *z) {
    const int L = z->m->n_layers, LH = L * z->m->n_heads;
    double *bl = malloc(sizeof(double) * 3 * (size_t)L), *bh = malloc(sizeof(double) * 3 * (size_t)LH);
    z->by_layer = calloc(3 * (size_t)L, sizeof(double)), z->by_head = calloc(3 * (size_t)LH, sizeof(double));
    int code = !bl || !bh || !z->by_layer || !z->by_head ? avcli_fail_system("out of memory") : 0;
    for (int i = 0; i < z->ntx && !code; i++) {
        const lz_text *t = &z->tx[i];
        size_t wb = av_swap_sensitivity_work(z->m, t->n, z->heads, z->path);
        void *w = wb ? malloc(wb) : NULL;
        if (!wb) code = avcli_fail("%s: %s", t->what, av_status_string(AV_ERR_TOO_LARGE));
        else if (!w) code = avcli_fail_system("out of memory");
        int bad = -1, st = code ? AV_OK : av_swap_sensitivity(bl, bh, z->m, t->ids, t->n, z->heads, z->path, &bad, w, wb);
        free(w);
        if (!code && st < 0) code = pass_error(z, st, bad, t->what);
        if (code) break;
        if (st > 0) warn_pass(t->what, "sensitivity", st, st != AV_WARN_PRODUCT_OVERFLOW);
        double wgt = (double)(t->n - 1) / z->positions;
        for (int k = 0; k < 3 * L; k++) z->by_layer[k] += wgt * bl[k];
        for (int k = 0; k < 3 * LH; k++) z->by_head[k] += wgt * bh[k];
    }
    free(bl);
    free(bh);
    return code;
}

// ----------------------------------------------------------------------------------------------------
// --distill: every chosen head's W trained on the training text, against its own softmax

/* One head's n×d rows of a captured tensor [layers][heads][n][d], copied. */
static float *head_rows(const float *X, int heads, int layer, int head, int n, int d) {
    size_t cnt = (size_t)n * d;
    float *r = malloc(sizeof(float) * cnt);
    if (r) memcpy(r, X + ((size_t)layer * heads + head) * cnt, sizeof(float) * cnt);
    return r;
}

/* The original model's Q and K of a text (the tensors av_forward captures). */
static int capture_qk(const lz *z, const int *ids, int n, float **Q, float **K) {
    const av_model *m = z->m;
    size_t wb = av_forward_work(m);
    void *w = malloc(wb ? wb : 1);
    *Q = malloc(sizeof(float) * (size_t)m->n_layers * m->n_heads * n * m->head_size);
    *K = malloc(sizeof(float) * (size_t)m->n_layers * m->n_kv_heads * n * m->head_size);
    int code = !w || !*Q || !*K || !wb ? avcli_fail_system("out of memory") : 0;
    int st = code ? AV_OK : av_forward(*Q, *K, NULL, NULL, m, ids, 0, n, w, wb);
    free(w);
    if (!code && st != AV_OK) /* a trained W on non-finite q, k is no W at all */
        code = avcli_fail("--train-file: the original model's forward pass: %s", av_status_string(st));
    return code;
}

static int distill_all(lz *z, const float *Qt, const float *Kt, const float *Qh, const float *Kh) {
    const av_model *m = z->m;
    const int H = m->n_heads, KVH = m->n_kv_heads, d = m->head_size, L = m->n_layers;
    size_t per = (size_t)d * d;
    int code = 0, counted = 0;
    z->dres = calloc((size_t)L * H, sizeof *z->dres);
    z->W = calloc(per * (size_t)L * H, sizeof(float));
    z->curve = calloc((size_t)z->dsteps + 1, sizeof(double));
    if (!z->dres || !z->W || !z->curve) return avcli_fail_system("out of memory");
    for (int i = 0; i < L * H && !code; i++) {
        if (!z->chosen[i]) continue;
        int l = i / H, h = i % H, kvh = h / (H / KVH);
        avcli_inputs tr, ho;
        memset(&tr, 0, sizeof tr);
        memset(&ho, 0, sizeof ho);
        tr.prm = ho.prm = z->prm[i]; /* the variant's knobs, causal, W the identity */
        tr.prm.hedgehog_w = ho.prm.hedgehog_w = NULL;
        tr.n = z->ntrain, ho.n = z->tx[0].n, tr.d = ho.d = d;
        tr.Q = head_rows(Qt, H, l, h, tr.n, d), tr.K = head_rows(Kt, KVH, l, kvh, tr.n, d);
        ho.Q = head_rows(Qh, H, l, h, ho.n, d), ho.K = head_rows(Kh, KVH, l, kvh, ho.n, d);
        avcli_distill_result *r = &z->dres[i];
        r->loss = malloc(sizeof(double) * (size_t)(z->dsteps + 1));
        r->Wf = z->W + per * (size_t)i;
        char where[48];
        snprintf(where, sizeof where, "layer %d head %d: ", l, h);
        if (!tr.Q || !tr.K || !ho.Q || !ho.K || !r->loss) code = avcli_fail_system("out of memory");
        else code = avcli_distill_head(r, &(avcli_distill_run){z->dsteps, z->lr, where}, &tr, &ho);
        avcli_free(&tr);
        avcli_free(&ho);
        if (code) break;
        for (long k = 0; k <= z->dsteps; k++) z->curve[k] += r->loss[k];
        counted++;
        av_params_set_hedgehog(&z->prm[i], r->Wf, d); /* the measures use this head's trained W */
    }
    for (long k = 0; !code && k <= z->dsteps; k++) z->curve[k] /= counted;
    return code;
}

// ----------------------------------------------------------------------------------------------------
// the JSON

static void put_tokens(FILE *out, const lz *z, const int *ids, int from, int to) {
    fputs("{\"ids\": ", out);
    put_ints(out, ids + from, to - from);
    fputs(", \"text\": ", out);
    /* the pieces joined first, so a character split over byte pieces is whole again */
    size_t len = 0, cap = 64;
    char *s = malloc(cap);
    for (int i = from; i < to && s; i++) {
        const char *p;
        int l;
        if (avcli_model_piece(z->mp, ids[i - 1], ids[i], &p, &l) != 0) continue;
        if (len + (size_t)l > cap) {
            char *g = realloc(s, cap = 2 * (len + (size_t)l));
            if (!g) { free(s); s = NULL; break; }
            s = g;
        }
        memcpy(s + len, p, (size_t)l);
        len += (size_t)l;
    }
    avcli_json_string(out, (const unsigned char *)(s ? s : ""), s ? len : 0);
    free(s);
    fputc('}', out);
}

static void put_entry(FILE *out, const double *e) {
    fputs(", \"delta_loss\": ", out);
    put_num(out, e[0]);
    fputs(", \"kl_mean\": ", out);
    put_num(out, e[1]);
    fputs(", \"top1_agreement\": ", out);
    put_num(out, e[2]);
    fputc('}', out);
}

static int write_json(FILE *out, const void *ctx) {
    const lz *z = ctx;
    const av_model *m = z->m;
    const int L = m->n_layers, H = m->n_heads;
    fprintf(out, "{\n  \"model\": {\"layers\": %d, \"heads\": %d, \"kv_heads\": %d, \"head_size\": %d, \"vocab\": %d, \"seq_len\": %d},\n",
            L, H, m->n_kv_heads, m->head_size, m->vocab_size, m->seq_len);
    fprintf(out, "  \"variant\": \"%s\",\n", avcli_variant_label(z->in.prm.variant, z->in.alias));
    if (z->in.alias) fprintf(out, "  \"family\": \"%s\",\n", av_variant_name(z->in.prm.variant));
    fputs("  \"knobs\": ", out);
    avcli_json_string(out, (const unsigned char *)z->knobs, strlen(z->knobs));
    fprintf(out, ",\n  \"path\": \"%s\",\n  \"swapped\": [", z->path == AV_SWAP_RECURRENT ? "recurrent" : "matrix");
    for (int i = 0, k = 0; i < L * H; i++)
        if (z->chosen[i]) fprintf(out, "%s[%d, %d]", k++ ? ", " : "", i / H, i % H);
    /* the corpus means: every predicted position of every text counts once */
    double sum[4] = {0};
    for (int i = 0; i < z->ntx; i++)
        for (int k = 0; k < 4; k++) sum[k] += z->tx[i].mean[k] * (z->tx[i].n - 1);
    for (int k = 0; k < 4; k++) sum[k] /= z->positions;
    fprintf(out, "],\n  \"positions\": %d,\n  \"loss\": ", z->positions);
    put_num(out, sum[0]);
    fputs(",\n  \"loss_original\": ", out);
    put_num(out, sum[1]);
    fputs(",\n  \"perplexity\": ", out);
    put_num(out, exp(sum[0]));
    fputs(",\n  \"perplexity_original\": ", out);
    put_num(out, exp(sum[1]));
    fputs(",\n  \"kl_mean\": ", out);
    put_num(out, sum[2]);
    fputs(",\n  \"top1_agreement\": ", out);
    put_num(out, sum[3]);
    fputs(",\n  \"texts\": [", out);
    for (int i = 0; i < z->ntx; i++) {
        const lz_text *t = &z->tx[i];
        fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
        avcli_json_string(out, (const unsigned char *)t->name, strlen(t->name));
        fprintf(out, ", \"n\": %d, \"loss\": ", t->n);
        put_num(out, t->mean[0]);
        fputs(", \"loss_original\": ", out);
        put_num(out, t->mean[1]);
        fputs(", \"kl_mean\": ", out);
        put_num(out, t->mean[2]);
        fputs(", \"top1_agreement\": ", out);
        put_num(out, t->mean[3]);
        if (!t->defined) {
            fputs(", \"per_position\": null, \"reason\": \"the logits are not finite\"}", out);
            continue;
        }
        fputs(",\n     \"per_position\": {\"loss\": ", out);
        put_doubles(out, t->loss_s, t->n - 1);
        fputs(",\n                      \"loss_original\": ", out);
        put_doubles(out, t->loss_o, t->n - 1);
        fputs(",\n                      \"kl\": ", out);
        put_doubles(out, t->kl, t->n - 1);
        fputs(",\n                      \"agree\": ", out);
        put_ints(out, t->agree, t->n - 1);
        fputs("}}", out);
    }
    fputs("\n  ],\n  \"continuation\": {\"prompt_ids\": ", out);
    put_ints(out, z->prompt, z->nprompt);
    fprintf(out, ", \"steps\": %d,\n    \"original\": ", z->steps);
    put_tokens(out, z, z->cont[0], z->nprompt, z->ncont[0]);
    fputs(",\n    \"swapped\": ", out);
    put_tokens(out, z, z->cont[1], z->nprompt, z->ncont[1]);
    int first = -1, common = (z->ncont[0] < z->ncont[1] ? z->ncont[0] : z->ncont[1]) - z->nprompt;
    for (int i = 0; i < common && first < 0; i++)
        if (z->cont[0][z->nprompt + i] != z->cont[1][z->nprompt + i]) first = i;
    fputs(",\n    \"first_difference\": ", out);
    if (first >= 0) fprintf(out, "%d}", first);
    else fputs("null}", out);
    if (z->sensitivity) {
        fputs(",\n  \"sensitivity\": {\"by_layer\": [", out);
        for (int l = 0, k = 0; l < L; l++) {
            int any = 0;
            for (int h = 0; h < H; h++) any |= z->chosen[l * H + h];
            if (!any) continue;
            fprintf(out, "%s\n    {\"layer\": %d", k++ ? "," : "", l);
            put_entry(out, z->by_layer + 3 * l);
        }
        fputs("],\n   \"by_head\": [", out);
        for (int i = 0, k = 0; i < L * H; i++) {
            if (!z->chosen[i]) continue;
            fprintf(out, "%s\n    {\"layer\": %d, \"head\": %d", k++ ? "," : "", i / H, i % H);
            put_entry(out, z->by_head + 3 * i);
        }
        fputs("]}", out);
    }
    if (z->dres) {
        fprintf(out, ",\n  \"distill\": {\"steps\": %ld, \"lr\": ", z->dsteps);
        put_num(out, z->lr);
        fprintf(out, ", \"train_n\": %d, \"heldout_text\": ", z->ntrain);
        avcli_json_string(out, (const unsigned char *)z->tx[0].name, strlen(z->tx[0].name));
        fputs(", \"loss_curve\": ", out);
        put_doubles(out, z->curve, (int)z->dsteps + 1);
        fputs(",\n    \"heads\": [", out);
        for (int i = 0, k = 0; i < L * H; i++) {
            if (!z->chosen[i]) continue;
            const avcli_distill_result *r = &z->dres[i];
            fprintf(out, "%s\n      {\"layer\": %d, \"head\": %d, \"steps_taken\": %d, \"train_kl_before\": ", k++ ? "," : "",
                    i / H, i % H, r->taken);
            put_num(out, r->met[AVCLI_TRAIN][AVCLI_BEFORE][0]);
            fputs(", \"train_kl_after\": ", out);
            put_num(out, r->met[AVCLI_TRAIN][AVCLI_AFTER][0]);
            fputs(", \"heldout_kl\": ", out);
            put_num(out, r->met[AVCLI_HOLDOUT][AVCLI_AFTER][0]);
            fputs(", \"heldout_kl_elu\": ", out);
            put_num(out, r->kl_elu_holdout);
            fputs(", \"status\": ", out);
            avcli_json_string(out, (const unsigned char *)r->why, strlen(r->why));
            fputc('}', out);
        }
        fputs("]}", out);
    }
    fputs("\n}\n", out);
    return ferror(out) ? AV_ERR_IO : AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// the command

/* The training text of --train-file: one file, whole (trailing line breaks dropped). */
static int train_text(avcli_texts *tx, const char *path) {
    struct stat sb;
    memset(tx, 0, sizeof *tx);
    if (*path && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return avcli_fail("--train-file %s: a folder; the training text is one file", avcli_brief(path));
    return avcli_read_texts_flag(tx, "--train-file", path, 0);
}

static int run(lz *z, const char *const *val, avcli_saving *saving) {
    const av_model *m = z->m;
    const int L = m->n_layers, H = m->n_heads, d = m->head_size;
    int code = 0;
    /* the heads: --layers and --heads against the model's ranges */
    int *ls = malloc(sizeof(int) * (size_t)L), *hs = malloc(sizeof(int) * (size_t)H);
    z->chosen = calloc((size_t)L * H, sizeof(int));
    z->prm = calloc((size_t)L * H, sizeof(av_params));
    z->heads = calloc((size_t)L * H, sizeof(av_params *));
    if (!ls || !hs || !z->chosen || !z->prm || !z->heads) code = avcli_fail_system("out of memory");
    if (!code && val[O_LAYERS]) code = index_list(ls, "--layers", val[O_LAYERS], L, "layers");
    if (!code && val[O_HEADS]) code = index_list(hs, "--heads", val[O_HEADS], H, "heads");
    for (int i = 0; !code && i < L * H; i++) {
        z->chosen[i] = (!val[O_LAYERS] || ls[i / H]) && (!val[O_HEADS] || hs[i % H]);
        z->nchosen += z->chosen[i];
        z->prm[i] = z->in.prm;
        z->heads[i] = z->chosen[i] ? &z->prm[i] : NULL;
    }
    free(ls);
    free(hs);
    if (code) return code;
    /* the texts, each encoded with BOS; at least two tokens to predict one */
    avcli_texts texts, train;
    memset(&texts, 0, sizeof texts);
    memset(&train, 0, sizeof train);
    if (val[O_TEXT_FILE]) code = avcli_read_texts(&texts, val[O_TEXT_FILE], z->lines);
    int count = val[O_TEXT_FILE] ? texts.count : 1;
    char **names = calloc((size_t)count, sizeof(char *));
    z->tx = calloc((size_t)count, sizeof *z->tx);
    if (!code && (!z->tx || !names)) code = avcli_fail_system("out of memory");
    if (z->tx) z->txcap = count;
    for (int i = 0; !code && i < count; i++) {
        lz_text *t = &z->tx[i];
        char *what = t->what;
        if (val[O_TEXT]) snprintf(what, sizeof t->what, "--text");
        else snprintf(what, sizeof t->what, "--text-file %s%s", z->lines ? "line " : "", avcli_brief(texts.name[i]));
        if (!(names[i] = strdup(val[O_TEXT] ? "text" : texts.name[i]))) { code = avcli_fail_system("out of memory"); break; }
        t->name = names[i];
        if ((code = avcli_model_encode(z->mp, val[O_TEXT] ? val[O_TEXT] : texts.body[i], what, &t->ids, &t->n))) break;
        if (t->n < 2) code = avcli_fail("%s: no token after BOS (the measures need a token to predict)", what);
        z->ntx++;
        z->positions += t->n - 1;
    }
    if (!code && val[O_PROMPT]) code = avcli_model_encode(z->mp, val[O_PROMPT], "--prompt", &z->prompt, &z->nprompt);
    else if (!code) { /* the first text is the prompt */
        if (!(z->prompt = malloc(sizeof(int) * (size_t)z->tx[0].n))) code = avcli_fail_system("out of memory");
        else memcpy(z->prompt, z->tx[0].ids, sizeof(int) * (size_t)z->tx[0].n), z->nprompt = z->tx[0].n;
    }
    if (!code && val[O_DISTILL] && !(code = train_text(&train, val[O_TRAIN])))
        code = avcli_model_encode(z->mp, train.body[0], "--train-file", &z->train_ids, &z->ntrain);
    if (!code && val[O_DISTILL] && z->ntrain < 2) code = avcli_fail("--train-file: no token after BOS (nothing to train on)");
    /* every chosen head's knobs at every length it will see, before any pass */
    for (int i = 0; !code && i < z->ntx; i++) code = avcli_check_head_knobs(&z->in, z->nknob, z->knob, z->tx[i].n, d);
    if (!code && z->steps) code = avcli_check_head_knobs(&z->in, z->nknob, z->knob, z->nprompt, d);
    if (!code && val[O_DISTILL]) code = avcli_check_head_knobs(&z->in, z->nknob, z->knob, z->ntrain, d);
    if (!code) {
        z->in.n = z->tx[0].n, z->in.d = d;
        avcli_knobs_text(z->knobs, sizeof z->knobs, &z->in, z->nknob, z->knob, 1);
        if (val[O_DISTILL]) { /* the W the measures use */
            char *w = strstr(z->knobs, "W=identity");
            if (w) { /* "W=identity" → "W=distilled", the rest moved along */
                char rest[512];
                snprintf(rest, sizeof rest, "%s", w + 10);
                snprintf(w, sizeof z->knobs - (size_t)(w - z->knobs), "W=distilled%s", rest);
            }
        }
    }
    /* the work */
    if (!code && val[O_DISTILL]) {
        /* the measures are held out only when the training text is none of the evaluated ones: say so */
        for (int i = 0; i < z->ntx; i++)
            if (z->tx[i].n == z->ntrain && !memcmp(z->tx[i].ids, z->train_ids, sizeof(int) * (size_t)z->ntrain))
                fprintf(stderr, "attnviz: warning: linearize: the evaluated text \"%s\" is the training text: its measures are not held out\n", z->tx[i].name);
        float *Qt = NULL, *Kt = NULL, *Qh = NULL, *Kh = NULL;
        code = capture_qk(z, z->train_ids, z->ntrain, &Qt, &Kt);
        if (!code) code = capture_qk(z, z->tx[0].ids, z->tx[0].n, &Qh, &Kh);
        if (!code) code = distill_all(z, Qt, Kt, Qh, Kh);
        free(Qt), free(Kt), free(Qh), free(Kh);
    }
    if (!code) code = measure_texts(z);
    if (!code && z->steps) code = continue_both(z);
    else if (!code) { /* no continuation: the prompt alone */
        for (int s = 0; s < 2 && !code; s++) {
            if (!(z->cont[s] = malloc(sizeof(int) * (size_t)z->nprompt))) code = avcli_fail_system("out of memory");
            else memcpy(z->cont[s], z->prompt, sizeof(int) * (size_t)z->nprompt), z->ncont[s] = z->nprompt;
        }
    }
    if (!code && z->sensitivity) code = sensitivity(z);
    /* the outputs: -o and --save-w together, all or none; without -o the JSON on stdout, then --save-w */
    avcli_file files[2];
    int nf = 0;
    if (!code && z->in.out) files[nf++] = (avcli_file){"-o", z->in.out, NULL, {0}, 0, write_json, z};
    if (!code && val[O_SAVE_W]) files[nf++] = (avcli_file){"--save-w", val[O_SAVE_W], z->W, {L, H, d, d}, 4, NULL, NULL};
    if (!code && z->in.out) code = avcli_save(files, nf);
    else if (!code && !nf) {
        write_json(stdout, z);
        code = avcli_stdout_check(0);
    } else if (!code && !(code = avcli_save_begin(saving, files, nf))) {
        write_json(stdout, z);
        code = avcli_stdout_check(0);
        int saved = avcli_save_end(saving, code == 0); /* stdout failed: the old W.npy stays */
        if (!code) code = saved;
    }
    for (int i = 0; names && i < count; i++) free(names[i]);
    free(names);
    avcli_free_texts(&texts);
    avcli_free_texts(&train);
    return code;
}

int avcli_cmd_linearize(int argc, char **argv) {
    const char *val[O_COUNT] = {0};
    lz z;
    memset(&z, 0, sizeof z);
    z.knob = malloc(sizeof(char *) * (size_t)(argc + 1));
    if (!z.knob) return avcli_fail_system("out of memory");
    int code = 0;
    for (int i = 0; i < argc && !code; i++) { /* the command's own flags; the rest are the variant's */
        const char *a = argv[i];
        int f = 0;
        if (strcmp(a, "--lines") == 0 || strcmp(a, "--sensitivity") == 0) {
            int *sw = a[2] == 'l' ? &z.lines : &z.sensitivity;
            if ((*sw)++) code = avcli_fail("%s: given twice", a);
            continue;
        }
        while (f < O_COUNT && strcmp(a, OWN[f])) f++;
        if (f == O_COUNT) {
            z.knob[z.nknob++] = argv[i];
            if (a[0] == '-' && i + 1 < argc && argv[i + 1][0] != '-') z.knob[z.nknob++] = argv[++i]; /* its value */
            continue;
        }
        if (val[f]) code = avcli_fail("%s: given twice", a);
        else if (i + 1 >= argc) code = avcli_fail("%s: needs a value", a);
        else val[f] = argv[++i];
    }
    long long v;
    if (!code) code = avcli_parse_head_knobs(&z.in, z.nknob, z.knob);
    if (!code && !val[O_MODEL]) code = avcli_fail("--model: required (%s)", USAGE);
    if (!code && !val[O_TOKENIZER] && !avcli_is_dir(val[O_MODEL]))
        code = avcli_fail("--tokenizer: required with a llama2.c checkpoint (%s)", USAGE);
    if (!code && val[O_TEXT] && val[O_TEXT_FILE]) code = avcli_fail("--text and --text-file: give one (a text, or a file or folder of texts)");
    if (!code && !val[O_TEXT] && !val[O_TEXT_FILE]) code = avcli_fail("--text or --text-file: required (%s)", USAGE);
    if (!code && z.lines && !val[O_TEXT_FILE]) code = avcli_fail("--lines: needs --text-file (one text a line of it)");
    z.path = AV_SWAP_MATRIX;
    if (!code && val[O_PATH]) {
        if (strcmp(val[O_PATH], "recurrent") == 0) z.path = AV_SWAP_RECURRENT;
        else if (strcmp(val[O_PATH], "matrix") != 0) code = avcli_fail("--path %s: not matrix or recurrent", avcli_brief(val[O_PATH]));
    }
    const av_variant_desc *vd = code ? NULL : av_variant_info(z.in.prm.variant);
    if (!code && z.path == AV_SWAP_RECURRENT && vd->cls != AV_CLASS_EXACT && !(vd->flags & AV_VF_RECURRENT))
        code = avcli_fail("--path recurrent: %s has no recurrent form (use --path matrix)", vd->name);
    z.steps = 32;
    if (!code && val[O_STEPS]) {
        if (!avcli_parse_long(val[O_STEPS], 0, AV_MODEL_MAX_SEQ, &v)) code = avcli_fail("--steps %s: not an integer in 0..%d", avcli_brief(val[O_STEPS]), AV_MODEL_MAX_SEQ);
        else z.steps = (int)v;
    }
    z.lr = 0.05;
    if (!code && val[O_DISTILL]) {
        if (!avcli_parse_long(val[O_DISTILL], 0, 100000, &v)) code = avcli_fail("--distill %s: not an integer in 0..100000 (Adam steps)", avcli_brief(val[O_DISTILL]));
        else z.dsteps = (long)v;
        if (!code && !(vd->flags & AV_VF_WEIGHTS)) {
            char names[256] = "";
            size_t k = 0;
            for (int i = 0; i < AV_VARIANT_COUNT && k < sizeof names; i++)
                if (av_variant_info(i)->flags & AV_VF_WEIGHTS) k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? ", " : "", av_variant_name(i));
            code = avcli_fail("--distill: %s has no weights to train (the variants with weights: %s)", vd->name, names);
        }
        if (!code && !val[O_TRAIN]) code = avcli_fail("--train-file: required with --distill (the text the heads are trained on)");
        if (!code && val[O_LR] && !(avcli_parse_double(val[O_LR], &z.lr) && z.lr > 0)) code = avcli_fail("--lr %s: not a number > 0", avcli_brief(val[O_LR]));
    }
    for (int f = O_TRAIN; !code && f <= O_SAVE_W; f++)
        if (val[f] && !val[O_DISTILL]) code = avcli_fail("%s: only with --distill STEPS", OWN[f]);
    if (!code && val[O_SAVE_W]) code = avcli_out_check("--save-w", val[O_SAVE_W]);
    if (!code) code = avcli_max_tokens(val[O_MAX_TOKENS]);
    if (!code) code = avcli_model_open(&z.mp, val[O_MODEL], val[O_TOKENIZER]);
    avcli_saving saving;
    if (!code) {
        z.m = avcli_model_weights(z.mp);
        code = run(&z, val, &saving);
    }
    for (int i = 0; z.tx && i < z.txcap; i++)
        free(z.tx[i].ids), free(z.tx[i].loss_s), free(z.tx[i].loss_o), free(z.tx[i].kl), free(z.tx[i].agree);
    for (int i = 0; z.dres && z.m && i < z.m->n_layers * z.m->n_heads; i++) free(z.dres[i].loss);
    free(z.tx), free(z.prompt), free(z.cont[0]), free(z.cont[1]), free(z.by_layer), free(z.by_head), free(z.chosen);
    free(z.prm), free(z.heads), free(z.train_ids), free(z.dres), free(z.W), free(z.curve), free(z.knob);
    avcli_free(&z.in);
    avcli_model_close(z.mp);
    return code;
}
