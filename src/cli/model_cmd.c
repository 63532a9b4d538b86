/* model_cmd.c: the real-model commands (docs/model.md).
 *   attnviz capture       --model M.bin --tokenizer T.bin --text "…" -o DIR
 *   attnviz capture       --model M.bin --tokenizer T.bin --text-file F [--lines] -o DIR   (DIR/<name>/ a text)
 *   attnviz generate-text --model M.bin --tokenizer T.bin [--text "…"] --steps N
 * and `attnviz readouts --all-heads`, the readouts of every layer and head of captured tensors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Whether bytes s[0..len) are valid UTF-8 (no overlongs, no surrogates, at most U+10FFFF). */
static size_t utf8_char(const unsigned char *s, size_t len) {
    unsigned c = s[0];
    size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!k || k > len) return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (k == 2 && c < 0xC2) return 0;
    if (k == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0))) return 0;
    if (k == 4 && ((c == 0xF0 && s[1] < 0x90) || c > 0xF4 || (c == 0xF4 && s[1] >= 0x90))) return 0;
    return k;
}
static int valid_utf8(const unsigned char *s, size_t len) {
    for (size_t i = 0; i < len;) {
        size_t k = utf8_char(s + i, len - i);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

/* A JSON string: quotes, backslashes and control characters escaped; bytes that are not valid UTF-8 (a
 * byte piece alone, part of a character) written as U+FFFD. */
static void json_string(FILE *out, const unsigned char *s, size_t len) {
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c), i++;
        else if (c == '\n') fputs("\\n", out), i++;
        else if (c < 0x20) fprintf(out, "\\u%04x", c), i++;
        else {
            size_t k = utf8_char(s + i, len - i);
            if (k) fwrite(s + i, 1, k, out), i += k;
            else fputs("\\ufffd", out), i++;
        }
    }
    fputc('"', out);
}

/* The model and tokenizer of --model and --tokenizer, parsed. */
typedef struct loaded {
    unsigned char *mbuf, *tbuf;
    void *twork;
    av_model m;
    av_tokenizer t;
} loaded;

static void unload(loaded *x) {
    free(x->mbuf);
    free(x->tbuf);
    free(x->twork);
}

static int load(loaded *x, const char *mpath, const char *tpath) {
    memset(x, 0, sizeof *x);
    size_t mlen, tlen;
    int st = avcli_read_file("--model", mpath, &x->mbuf, &mlen);
    if (!st) st = avcli_read_file("--tokenizer", tpath, &x->tbuf, &tlen);
    if (st) return st;
    if ((st = av_model_parse(&x->m, x->mbuf, mlen)) != AV_OK)
        return avcli_fail("--model %s: %s", mpath,
                          st == AV_ERR_FORMAT || st == AV_ERR_NONFINITE ? av_model_error() : av_status_string(st));
    size_t wb = av_tokenizer_work(x->m.vocab_size);
    if (!(x->twork = malloc(wb ? wb : 1))) return avcli_fail_system("out of memory");
    if ((st = av_tokenizer_parse(&x->t, x->tbuf, tlen, x->m.vocab_size, x->twork, wb)) != AV_OK)
        return avcli_fail("--tokenizer %s: %s", tpath, st == AV_ERR_FORMAT ? av_model_error() : av_status_string(st));
    return 0;
}

/* Encode text (checked to be UTF-8) with BOS into *ids (malloc'd), at most the model's seq_len. `what` names
 * the text in messages ("--text"). */
static int encode_text(const loaded *x, const char *text, const char *what, int **ids, int *n) {
    size_t len = strlen(text);
    if (!valid_utf8((const unsigned char *)text, len)) return avcli_fail("%s: not valid UTF-8", what);
    size_t cap = len + 2;
    /* merging is quadratic in the text: refuse one that cannot fit seq_len tokens whatever the merges */
    if (len > (size_t)x->m.seq_len * (size_t)x->t.max_token_length)
        return avcli_fail("%s: %zu bytes, more than the model's seq_len %d tokens can hold", what, len, x->m.seq_len);
    if (!(*ids = malloc(sizeof(int) * cap))) return avcli_fail_system("out of memory");
    int st = av_encode(*ids, n, (int)cap, &x->t, text, len, 1);
    if (st != AV_OK) return avcli_fail("%s: %s", what, st == AV_ERR_FORMAT ? av_model_error() : av_status_string(st));
    if (*n > x->m.seq_len)
        return avcli_fail("%s: %d tokens with BOS, more than the model's seq_len %d", what, *n, x->m.seq_len);
    return 0;
}
static int encode(const loaded *x, const char *text, int **ids, int *n) { return encode_text(x, text, "--text", ids, n); }

/* Flags NAME VALUE from argv into val[] (names[] in the same order). */
static int flags(int argc, char **argv, const char *cmd, const char *const *names, const char **val, int count) {
    for (int i = 0; i < argc; i++) {
        int f = 0;
        while (f < count && strcmp(argv[i], names[f])) f++;
        if (f == count) return avcli_fail("%s: unknown option for %s (see attnviz --help)", avcli_brief(argv[i]), cmd);
        if (val[f]) return avcli_fail("%s: given twice", argv[i]);
        if (i + 1 >= argc) return avcli_fail("%s: needs a value", argv[i]);
        val[f] = argv[++i];
    }
    return 0;
}

static void print_piece(FILE *out, const av_tokenizer *t, int prev, int id) {
    const char *p;
    int l;
    if (av_token_piece(&p, &l, t, prev, id) == AV_OK) json_string(out, (const unsigned char *)p, (size_t)l);
    else fputs("null", out);
}

/* tokens.json: {"ids": […], "pieces": […], "text": "…"}. */
typedef struct tokens_json {
    const loaded *x;
    const int *ids;
    int n;
    const char *text;
} tokens_json;

static int write_tokens(FILE *f, const void *ctx) {
    const tokens_json *t = ctx;
    fputs("{\n  \"ids\": [", f);
    for (int i = 0; i < t->n; i++) fprintf(f, "%s%d", i ? ", " : "", t->ids[i]);
    fputs("],\n  \"pieces\": [", f);
    for (int i = 0; i < t->n; i++) {
        if (i) fputs(", ", f);
        print_piece(f, &t->x->t, i ? t->ids[i - 1] : -1, t->ids[i]);
    }
    fputs("],\n  \"text\": ", f);
    json_string(f, (const unsigned char *)t->text, strlen(t->text));
    fputs("\n}\n", f);
    return ferror(f) ? AV_ERR_IO : AV_OK;
}

/* av_forward's warning in words: with the weights checked finite at load, a non-finite output is a product
 * or sum that left the range (huge finite weights), which the kernels' sentence (q·k, features) misnames. */
static const char *forward_warning(int st) {
    return st == AV_WARN_PRODUCT_OVERFLOW ? "a product or sum of the weights and activations left the float32 range"
                                          : av_status_string(st);
}

/* One text's capture in memory: the tensors, its ids and the four files' paths under DIR/<name>/. */
typedef struct one_capture {
    float *Q, *K, *V;
    int *ids, n, made;
    char *dir, *paths[4];
    tokens_json tj;
} one_capture;

/* The folder name of text `name`: a file's name without ".txt" (the whole name if that leaves nothing, "."
 * or ".."), a line's number as it is. */
static char *text_dir(const char *out, const char *name) {
    size_t len = strlen(name);
    if (len > 4 && strcmp(name + len - 4, ".txt") == 0 && strcmp(name, "..txt") != 0 && strcmp(name, "...txt") != 0)
        len -= 4;
    size_t cap = strlen(out) + len + 2;
    char *d = malloc(cap);
    if (d) snprintf(d, cap, "%s/%.*s", out, (int)len, name);
    return d;
}

/* capture --text-file F [--lines] -o DIR: every text is encoded and run first (a refusal or a failed forward
 * pass writes nothing), then the 4·T files are committed together by one avcli_save: all, or none. */
static int capture_corpus(const char *model, const char *tokenizer, const char *path, int lines, const char *dir) {
    avcli_texts tx;
    loaded x;
    int code = avcli_dir_check("-o", dir), made = 0, loaded_ok = 0;
    if (code) return code;
    if ((code = avcli_read_texts(&tx, path, lines))) return code;
    one_capture *c = NULL;
    avcli_file *files = NULL;
    if (tx.count > AVCLI_MAX_TEXTS) {
        code = avcli_fail("--text-file %s: %d texts; capture writes at most %d in one call", avcli_brief(path), tx.count,
                          AVCLI_MAX_TEXTS);
        goto done;
    }
    c = calloc((size_t)tx.count, sizeof *c), files = calloc((size_t)tx.count * 4, sizeof *files);
    if (!c || !files) { code = avcli_fail_system("out of memory"); goto done; }
    if ((code = load(&x, model, tokenizer))) goto done;
    loaded_ok = 1;
    const av_model *m = &x.m;
    size_t wb = av_forward_work(m);
    void *work = malloc(wb ? wb : 1);
    if (!work || !wb) { free(work); code = avcli_fail_system("out of memory"); goto done; }
    for (int t = 0; t < tx.count && !code; t++) {
        char what[96];
        snprintf(what, sizeof what, "--text-file %s%s", lines ? "line " : "", avcli_brief(tx.name[t]));
        one_capture *o = &c[t];
        if ((code = encode_text(&x, tx.body[t], what, &o->ids, &o->n))) break;
        size_t qn = (size_t)m->n_layers * m->n_heads * o->n * m->head_size;
        size_t kn = (size_t)m->n_layers * m->n_kv_heads * o->n * m->head_size;
        o->Q = malloc(sizeof(float) * qn), o->K = malloc(sizeof(float) * kn), o->V = malloc(sizeof(float) * kn);
        o->dir = text_dir(dir, tx.name[t]);
        for (int i = 0; i < 4 && o->dir; i++) o->paths[i] = malloc(strlen(o->dir) + 16);
        if (!o->Q || !o->K || !o->V || !o->dir || !o->paths[0] || !o->paths[1] || !o->paths[2] || !o->paths[3]) {
            code = avcli_fail_system("out of memory");
            break;
        }
        int st = av_forward(o->Q, o->K, o->V, NULL, m, o->ids, 0, o->n, work, wb);
        if (st < 0) code = avcli_fail("%s: forward pass: %s", what, av_status_string(st));
        else if (st > 0)
            fprintf(stderr, "attnviz: warning: %s: forward pass: %s (the captured q, k, v hold Inf or NaN)\n", what,
                    forward_warning(st));
    }
    free(work);
    if (code || (code = avcli_dir_make("-o", dir, &made))) goto done;
    for (int t = 0; t < tx.count && !code; t++) { /* the folders first: the temporaries go beside their targets */
        one_capture *o = &c[t];
        if ((code = avcli_dir_make("-o", o->dir, &o->made))) break;
        const char *fn[4] = {"q.npy", "k.npy", "v.npy", "tokens.json"};
        for (int i = 0; i < 4; i++) snprintf(o->paths[i], strlen(o->dir) + 16, "%s/%s", o->dir, fn[i]);
        o->tj = (tokens_json){&x, o->ids, o->n, tx.body[t]};
        const int64_t L = m->n_layers, H = m->n_heads, KVH = m->n_kv_heads, n = o->n, hs = m->head_size;
        avcli_file *f = files + 4 * t;
        f[0] = (avcli_file){"-o", o->paths[0], o->Q, {L, H, n, hs}, 4, NULL, NULL};
        f[1] = (avcli_file){"-o", o->paths[1], o->K, {L, KVH, n, hs}, 4, NULL, NULL};
        f[2] = (avcli_file){"-o", o->paths[2], o->V, {L, KVH, n, hs}, 4, NULL, NULL};
        f[3] = (avcli_file){"-o", o->paths[3], NULL, {0}, 0, write_tokens, &o->tj};
    }
    if (!code) code = avcli_save(files, 4 * tx.count);
done:
    for (int t = c ? tx.count - 1 : -1; t >= 0; t--) { /* folders made here and left empty go again */
        avcli_dir_done(c[t].dir, c[t].made, code != 0);
        free(c[t].Q), free(c[t].K), free(c[t].V), free(c[t].ids), free(c[t].dir);
        for (int i = 0; i < 4; i++) free(c[t].paths[i]);
    }
    avcli_dir_done(dir, made, code != 0);
    if (loaded_ok) unload(&x);
    free(c);
    free(files);
    avcli_free_texts(&tx);
    return code;
}

int avcli_cmd_capture(int argc, char **argv) {
    static const char *const names[] = {"--model", "--tokenizer", "--text", "-o", "--text-file"};
    const char *val[5] = {0};
    char **rest = malloc(sizeof(char *) * (size_t)(argc + 1));
    int nrest = 0, lines = 0, code = 0;
    if (!rest) return avcli_fail_system("out of memory");
    for (int i = 0; i < argc; i++) { /* --lines is a switch; the rest are NAME VALUE */
        if (strcmp(argv[i], "--lines") == 0 && (i == 0 || strcmp(argv[i - 1], "--text") != 0)) {
            if (lines++) { free(rest); return avcli_fail("--lines: given twice"); }
        } else rest[nrest++] = argv[i];
    }
    code = flags(nrest, rest, "capture", names, val, 5);
    free(rest);
    if (code) return code;
    if (val[2] && val[4]) return avcli_fail("--text and --text-file: give one (a text, or a file or folder of texts)");
    if (lines && !val[4]) return avcli_fail("--lines: needs --text-file (one text a line of it)");
    if (!val[2] && !val[4]) return avcli_fail("--text or --text-file: required (attnviz capture --model M.bin --tokenizer T.bin --text \"...\" -o DIR)");
    for (int i = 0; i < 4; i++)
        if (!val[i] && i != 2) return avcli_fail("%s: required (attnviz capture --model M.bin --tokenizer T.bin --text \"...\" -o DIR)", names[i]);
    if (val[4]) return capture_corpus(val[0], val[1], val[4], lines, val[3]);
    loaded x;
    int *ids = NULL, n = 0;
    float *Q = NULL, *K = NULL, *V = NULL;
    void *work = NULL;
    char *paths[4] = {0};
    const char *dir = val[3];
    int made = 0;
    if ((code = avcli_dir_check("-o", dir))) return code;
    if ((code = load(&x, val[0], val[1])) || (code = encode(&x, val[2], &ids, &n))) goto done;
    const av_model *m = &x.m;
    size_t qn = (size_t)m->n_layers * m->n_heads * n * m->head_size, kn = (size_t)m->n_layers * m->n_kv_heads * n * m->head_size;
    size_t wb = av_forward_work(m);
    Q = malloc(sizeof(float) * qn), K = malloc(sizeof(float) * kn), V = malloc(sizeof(float) * kn), work = malloc(wb ? wb : 1);
    size_t plen = strlen(dir) + 16;
    for (int i = 0; i < 4; i++) paths[i] = malloc(plen);
    if (!Q || !K || !V || !work || !wb || !paths[0] || !paths[1] || !paths[2] || !paths[3]) {
        code = avcli_fail_system("out of memory");
        goto done;
    }
    int st = av_forward(Q, K, V, NULL, m, ids, 0, n, work, wb);
    if (st < 0) {
        code = avcli_fail("forward pass: %s", av_status_string(st));
        goto done;
    }
    if (st > 0) fprintf(stderr, "attnviz: warning: forward pass: %s (the captured q, k, v hold Inf or NaN)\n", forward_warning(st));
    if ((code = avcli_dir_make("-o", dir, &made))) goto done;
    const char *fn[4] = {"q.npy", "k.npy", "v.npy", "tokens.json"};
    for (int i = 0; i < 4; i++) snprintf(paths[i], plen, "%s/%s", dir, fn[i]);
    tokens_json tj = {&x, ids, n, val[2]};
    avcli_file files[4] = { /* the four together: all replaced, or none */
        {"-o", paths[0], Q, {m->n_layers, m->n_heads, n, m->head_size}, 4, NULL, NULL},
        {"-o", paths[1], K, {m->n_layers, m->n_kv_heads, n, m->head_size}, 4, NULL, NULL},
        {"-o", paths[2], V, {m->n_layers, m->n_kv_heads, n, m->head_size}, 4, NULL, NULL},
        {"-o", paths[3], NULL, {0}, 0, write_tokens, &tj},
    };
    code = avcli_save(files, 4);
    avcli_dir_done(dir, made, code != 0);
done:
    unload(&x);
    free(ids);
    free(Q);
    free(K);
    free(V);
    free(work);
    for (int i = 0; i < 4; i++) free(paths[i]);
    return code;
}

int avcli_cmd_generate_text(int argc, char **argv) {
    static const char *const names[] = {"--model", "--tokenizer", "--text", "--steps"};
    const char *val[4] = {0};
    int code = flags(argc, argv, "generate-text", names, val, 4);
    if (code) return code;
    for (int i = 0; i < 2; i++)
        if (!val[i]) return avcli_fail("%s: required (attnviz generate-text --model M.bin --tokenizer T.bin --steps N)", names[i]);
    long long steps = 64;
    if (val[3] && !avcli_parse_long(val[3], 1, AV_MODEL_MAX_SEQ, &steps))
        return avcli_fail("--steps %s: not an integer in 1..%d", avcli_brief(val[3]), AV_MODEL_MAX_SEQ);
    loaded x;
    int *ids = NULL, n = 0;
    float *logits = NULL;
    void *work = NULL;
    if ((code = load(&x, val[0], val[1])) || (code = encode(&x, val[2] ? val[2] : "", &ids, &n))) goto done;
    const av_model *m = &x.m;
    size_t wb = av_forward_work(m);
    int total = n + (int)steps > m->seq_len ? m->seq_len : n + (int)steps;
    int *all = realloc(ids, sizeof(int) * (size_t)(total > n ? total : n));
    if (all) ids = all;
    logits = malloc(sizeof(float) * m->vocab_size), work = malloc(wb ? wb : 1);
    if (!all || !logits || !work || !wb) {
        code = avcli_fail_system("out of memory");
        goto done;
    }
    // the prompt as given (without BOS), then each greedy token as it comes
    for (int i = 1; i < n; i++) {
        const char *p;
        int l;
        if (av_token_piece(&p, &l, &x.t, ids[i - 1], ids[i]) == AV_OK) fwrite(p, 1, (size_t)l, stdout);
    }
    int st = av_forward(NULL, NULL, NULL, logits, m, ids, 0, n, work, wb);
    while (st == AV_OK && n < total) { /* an argmax over Inf or NaN logits picks nothing the model chose */
        int best = 0;
        for (int v = 1; v < m->vocab_size; v++)
            if (logits[v] > logits[best]) best = v;
        if (best == 1) break; /* BOS: llama2.c's end of a story */
        const char *p;
        int l;
        if (av_token_piece(&p, &l, &x.t, ids[n - 1], best) == AV_OK) fwrite(p, 1, (size_t)l, stdout);
        ids[n++] = best;
        if (n < total) st = av_forward(NULL, NULL, NULL, logits, m, ids, n - 1, n, work, wb);
    }
    fputc('\n', stdout);
    if (st < 0) code = avcli_fail("forward pass: %s", av_status_string(st));
    else if (st > 0)
        fprintf(stderr, "attnviz: warning: forward pass: %s (the logits hold Inf or NaN); stopped generating\n",
                forward_warning(st));
done:
    unload(&x);
    free(ids);
    free(logits);
    free(work);
    return code;
}

// ----------------------------------------------------------------------------------------------------
// captures in memory, one model for many texts (attnviz table --text-file)

struct avcli_model { loaded x; };

int avcli_model_open(avcli_model **mp, const char *model, const char *tokenizer) {
    if (!(*mp = calloc(1, sizeof **mp))) return avcli_fail_system("out of memory");
    int code = load(&(*mp)->x, model, tokenizer);
    if (code) { avcli_model_close(*mp); *mp = NULL; }
    return code;
}

void avcli_model_close(avcli_model *mp) {
    if (!mp) return;
    unload(&mp->x);
    free(mp);
}

int avcli_model_capture(const avcli_model *mp, const char *text, const char *what, avcli_capture *c) {
    const av_model *m = &mp->x.m;
    int *ids = NULL, n = 0, code;
    memset(c, 0, sizeof *c);
    if ((code = encode_text(&mp->x, text, what, &ids, &n))) { free(ids); return code; }
    size_t qn = (size_t)m->n_layers * m->n_heads * n * m->head_size, kn = (size_t)m->n_layers * m->n_kv_heads * n * m->head_size;
    size_t wb = av_forward_work(m);
    void *work = malloc(wb ? wb : 1);
    c->Q = malloc(sizeof(float) * qn), c->K = malloc(sizeof(float) * kn), c->V = malloc(sizeof(float) * kn);
    if (!c->Q || !c->K || !c->V || !work || !wb) code = avcli_fail_system("out of memory");
    int st = code ? AV_OK : av_forward(c->Q, c->K, c->V, NULL, m, ids, 0, n, work, wb);
    if (st < 0) code = avcli_fail("%s: forward pass: %s", what, av_status_string(st));
    else if (st > 0) fprintf(stderr, "attnviz: warning: %s: forward pass: %s (the captured q, k, v hold Inf or NaN)\n", what, forward_warning(st));
    free(ids);
    free(work);
    if (code) { avcli_capture_free(c); return code; }
    int64_t q[4] = {m->n_layers, m->n_heads, n, m->head_size}, kv[4] = {m->n_layers, m->n_kv_heads, n, m->head_size};
    memcpy(c->shape_q, q, sizeof q);
    memcpy(c->shape_kv, kv, sizeof kv);
    return 0;
}

void avcli_capture_free(avcli_capture *c) {
    free(c->Q);
    free(c->K);
    free(c->V);
    c->Q = c->K = c->V = NULL;
}

const av_model *avcli_model_weights(const avcli_model *mp) { return &mp->x.m; }
const av_tokenizer *avcli_model_tokenizer(const avcli_model *mp) { return &mp->x.t; }
int avcli_model_encode(const avcli_model *mp, const char *text, const char *what, int **ids, int *n) {
    *ids = NULL;
    int code = encode_text(&mp->x, text, what, ids, n);
    if (code) { free(*ids); *ids = NULL; }
    return code;
}
void avcli_json_string(FILE *out, const unsigned char *s, size_t len) { json_string(out, s, len); }
