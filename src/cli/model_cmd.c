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

/* The model and tokenizer of --model and --tokenizer, parsed: a llama2.c checkpoint (a file) or a Hugging
 * Face folder (docs/hf.md "The CLI"); a llama2.c tokenizer.bin or a tokenizer.json (told apart by the first
 * byte: a tokenizer.json is a JSON object), the folder's tokenizer.json by default. */
typedef struct loaded {
    unsigned char *mbuf, *tbuf;
    void *twork;
    av_model m;
    int hf;                      /* --model is a folder */
    avcli_hf folder;
    int tok;                     /* 0 none (a folder without tokenizer.json: --ids only), 1 llama2.c, 2 tokenizer.json */
    av_tokenizer t;
    const av_hf_tokenizer *ht;
    char piece[4 * AV_TOKEN_MAX_LEN + 8];
} loaded;

static void unload(loaded *x) {
    free(x->mbuf);
    free(x->tbuf);
    free(x->twork);
    if (x->hf) avcli_hf_close(&x->folder);
    x->mbuf = x->tbuf = NULL, x->twork = NULL, x->hf = 0;
}

static int load_tokenizer(loaded *x, const char *tpath) {
    size_t tlen;
    int st = avcli_read_file("--tokenizer", tpath, &x->tbuf, &tlen);
    if (st) return st;
    size_t at = 0;
    while (at < tlen && (x->tbuf[at] == ' ' || x->tbuf[at] == '\n' || x->tbuf[at] == '\r' || x->tbuf[at] == '\t')) at++;
    /* a tokenizer.json is JSON: an object, or anything else the JSON reader will name (a byte-order mark, an
     * array); a llama2.c tokenizer.bin starts with its int32 max_token_length (1..1024: bytes 01..04 00 00 00) */
    int json = at < tlen && (x->tbuf[at] == '{' || x->tbuf[at] == '[' || x->tbuf[at] == 0xEF || at == tlen);
    if (json) {
        size_t wb = av_hf_tokenizer_work(x->tbuf, tlen);
        if (!wb) return avcli_fail("--tokenizer %s: %s", tpath, av_model_error());
        if (!(x->twork = malloc(wb))) return avcli_fail_system("out of memory");
        if ((st = av_hf_tokenizer_parse(&x->ht, x->twork, wb, x->tbuf, tlen)) != AV_OK)
            return avcli_fail("--tokenizer %s: %s", tpath, st == AV_ERR_FORMAT ? av_model_error() : av_status_string(st));
        if (av_hf_tokenizer_vocab(x->ht) > x->m.vocab_size)
            return avcli_fail("--tokenizer %s: its ids reach %d, past the model's vocabulary of %d", tpath,
                              av_hf_tokenizer_vocab(x->ht) - 1, x->m.vocab_size);
        x->tok = 2;
        return 0;
    }
    size_t wb = av_tokenizer_work(x->m.vocab_size);
    if (!(x->twork = malloc(wb ? wb : 1))) return avcli_fail_system("out of memory");
    if ((st = av_tokenizer_parse(&x->t, x->tbuf, tlen, x->m.vocab_size, x->twork, wb)) != AV_OK)
        return avcli_fail("--tokenizer %s: %s", tpath, st == AV_ERR_FORMAT ? av_model_error() : av_status_string(st));
    x->tok = 1;
    return 0;
}

/* max_seq: a folder's key/value cache is sized for it (--max-tokens); a llama2.c file has its own seq_len */
static int load_max(loaded *x, const char *mpath, const char *tpath, int max_seq) {
    memset(x, 0, sizeof *x);
    int st;
    if (avcli_is_dir(mpath)) {
        if ((st = avcli_hf_open(&x->folder, &x->m, mpath, max_seq))) return st;
        x->hf = 1;
        if (tpath) return load_tokenizer(x, tpath);
        size_t n = strlen(mpath) + 20;
        char *dflt = malloc(n);
        if (!dflt) return avcli_fail_system("out of memory");
        snprintf(dflt, n, "%s/tokenizer.json", mpath);
        struct stat sb;
        st = stat(dflt, &sb) == 0 ? load_tokenizer(x, dflt) : 0; /* none: only --ids can be run */
        free(dflt);
        return st;
    }
    size_t mlen;
    if ((st = avcli_read_file("--model", mpath, &x->mbuf, &mlen))) return st;
    if ((st = av_model_parse(&x->m, x->mbuf, mlen)) != AV_OK)
        return avcli_fail("--model %s: %s", mpath,
                          st == AV_ERR_FORMAT || st == AV_ERR_NONFINITE ? av_model_error() : av_status_string(st));
    if (!tpath) return avcli_fail("--tokenizer: required with a llama2.c checkpoint (its tokenizer.bin)");
    return load_tokenizer(x, tpath);
}
/* --max-tokens of the command being run (a folder's cache is sized for it) */
static int max_tokens = AVCLI_HF_MAX_TOKENS;
static int load(loaded *x, const char *mpath, const char *tpath) { return load_max(x, mpath, tpath, max_tokens); }

/* --max-tokens N: 0, or one line. At most AV_MAX_N, the longest text the swapped pass (--logits, linearize)
 * and the kernels take. */
static int read_max_tokens(const char *v) {
    long long n;
    if (!v) return 0;
    if (!avcli_parse_long(v, 1, AV_MAX_N, &n))
        return avcli_fail("--max-tokens %s: not an integer in 1..%d", avcli_brief(v), AV_MAX_N);
    max_tokens = (int)n;
    return 0;
}
int avcli_max_tokens(const char *value) { return read_max_tokens(value); }

/* Encode text (checked to be UTF-8) into *ids (malloc'd), at most the model's seq_len: llama2.c's
 * tokenizer with BOS; a tokenizer.json with what its post-processor adds (Llama's BOS; GPT-2 and Qwen add
 * nothing), special tokens written in the text taken as text. `what` names the text in messages. */
static int encode_text(const loaded *x, const char *text, const char *what, int **ids, int *n) {
    size_t len = strlen(text);
    if (!x->tok)
        return avcli_fail("%s: the model folder has no tokenizer.json: give --tokenizer FILE (or --ids)", what);
    if (!valid_utf8((const unsigned char *)text, len)) return avcli_fail("%s: not valid UTF-8", what);
    size_t cap = x->tok == 1 ? len + 2 : av_hf_encode_cap(x->ht, len);
    /* llama2.c's merging is quadratic in the text: refuse one that cannot fit seq_len tokens whatever the merges */
    if (x->tok == 1 && len > (size_t)x->m.seq_len * (size_t)x->t.max_token_length)
        return avcli_fail("%s: %zu bytes, more than the model's seq_len %d tokens can hold", what, len, x->m.seq_len);
    if (cap > (size_t)1 << 30 || len > (size_t)1 << 28) return avcli_fail("%s: %zu bytes, more than the CLI encodes at once", what, len);
    size_t wb = x->tok == 2 ? av_hf_encode_work(x->ht, len) : 0;
    void *work = wb ? malloc(wb) : NULL;
    if (!cap || (x->tok == 2 && !work) || !(*ids = malloc(sizeof(int) * cap))) {
        free(work);
        return avcli_fail_system("out of memory");
    }
    int st = x->tok == 1 ? av_encode(*ids, n, (int)cap, &x->t, text, len, 1)
                         : av_hf_encode(*ids, n, (int)cap, x->ht, text, len, 1, 0, work, wb);
    free(work);
    if (st != AV_OK) return avcli_fail("%s: %s", what, st == AV_ERR_FORMAT ? av_model_error() : av_status_string(st));
    if (*n < 1) return avcli_fail("%s: encodes to no tokens (an empty text, and the tokenizer adds no BOS)", what);
    if (*n > x->m.seq_len && !x->hf)
        return avcli_fail("%s: %d tokens with BOS, more than the model's seq_len %d", what, *n, x->m.seq_len);
    if (*n > x->m.seq_len)
        return avcli_fail("%s: %d tokens, more than the %d this run holds (%s)", what, *n, x->m.seq_len,
                          x->m.sliding_window && x->m.seq_len == x->m.sliding_window ? "the model's sliding window"
                          : x->m.seq_len < x->m.context ? "--max-tokens raises it" : "the model's context");
    return 0;
}
static int encode(const loaded *x, const char *text, int **ids, int *n) { return encode_text(x, text, "--text", ids, n); }

/* The bytes of token id after prev, by whichever tokenizer is loaded: 0, or −1. */
static int piece_of(const loaded *x, int prev, int id, const char **p, int *l) {
    if (x->tok == 1) return av_token_piece(p, l, &x->t, prev, id) == AV_OK ? 0 : -1;
    if (x->tok == 2) {
        loaded *w = (loaded *)x; /* the piece buffer is scratch */
        if (av_hf_token_bytes(w->piece, l, (int)sizeof w->piece, x->ht, prev, id) != AV_OK) return -1;
        *p = w->piece;
        return 0;
    }
    return -1;
}

/* The tokens an encoding put before the text (llama2.c: BOS; a tokenizer.json: its post-processor's prefix):
 * where a printed prompt starts. */
static int prefix_tokens(const loaded *x, const int *ids, int n) {
    if (x->tok == 1) return n > 0 ? 1 : 0;
    int k = 0;
    while (k < n && x->m.bos_id >= 0 && ids[k] == x->m.bos_id) k++;
    return k;
}

/* --ids 5,17,3: token ids as given (no BOS added), each inside the model's vocabulary, at most seq_len */
static int parse_ids(const loaded *x, const char *text, int **ids, int *n) {
    size_t cap = 1;
    for (const char *c = text; *c; c++) cap += *c == ',';
    if (!(*ids = malloc(sizeof(int) * cap))) return avcli_fail_system("out of memory");
    *n = 0;
    const char *c = text;
    for (;;) {
        char *end;
        const char *start = c;
        while (*c == ' ') c++;
        if (*c < '0' || *c > '9') return avcli_fail("--ids %s: not a list of token ids (e.g. 1,42,7)", avcli_brief(text));
        long long v = strtoll(c, &end, 10);
        (void)start;
        if (v >= x->m.vocab_size) return avcli_fail("--ids: id %lld is outside the model's vocabulary (0..%d)", v, x->m.vocab_size - 1);
        (*ids)[(*n)++] = (int)v;
        c = end;
        while (*c == ' ') c++;
        if (!*c) break;
        if (*c++ != ',') return avcli_fail("--ids %s: not a list of token ids (e.g. 1,42,7)", avcli_brief(text));
    }
    if (*n > x->m.seq_len)
        return avcli_fail("--ids: %d tokens, more than the %d this run holds", *n, x->m.seq_len);
    return 0;
}

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

static void print_piece(FILE *out, const loaded *x, int prev, int id) {
    const char *p;
    int l;
    if (piece_of(x, prev, id, &p, &l) == 0) json_string(out, (const unsigned char *)p, (size_t)l);
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
        print_piece(f, t->x, i ? t->ids[i - 1] : -1, t->ids[i]);
    }
    fputs("],\n  \"text\": ", f);
    if (t->text) json_string(f, (const unsigned char *)t->text, strlen(t->text));
    else fputs("null", f); /* --ids: no text was given */
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
    enum { F_MODEL, F_TOK, F_TEXT, F_OUT, F_FILE, F_IDS, F_MAX, F_COUNT };
    static const char *const names[] = {"--model", "--tokenizer", "--text", "-o", "--text-file", "--ids", "--max-tokens"};
    static const char usage[] = "attnviz capture --model M.bin|DIR [--tokenizer T] --text \"...\" -o DIR";
    const char *val[F_COUNT] = {0};
    char **rest = malloc(sizeof(char *) * (size_t)(argc + 1));
    int nrest = 0, lines = 0, want_logits = 0, code = 0;
    if (!rest) return avcli_fail_system("out of memory");
    for (int i = 0; i < argc; i++) { /* --lines and --logits are switches; the rest are NAME VALUE */
        int value = i > 0 && (strcmp(argv[i - 1], "--text") == 0 || strcmp(argv[i - 1], "--ids") == 0);
        if (strcmp(argv[i], "--lines") == 0 && !value) {
            if (lines++) { free(rest); return avcli_fail("--lines: given twice"); }
        } else if (strcmp(argv[i], "--logits") == 0 && !value) {
            if (want_logits++) { free(rest); return avcli_fail("--logits: given twice"); }
        } else rest[nrest++] = argv[i];
    }
    code = flags(nrest, rest, "capture", names, val, F_COUNT);
    free(rest);
    if (code || (code = read_max_tokens(val[F_MAX]))) return code;
    int given = !!val[F_TEXT] + !!val[F_FILE] + !!val[F_IDS];
    if (given > 1) return avcli_fail("--text, --text-file and --ids: give one (a text, a file or folder of texts, or token ids)");
    if (lines && !val[F_FILE]) return avcli_fail("--lines: needs --text-file (one text a line of it)");
    if (!given) return avcli_fail("--text, --text-file or --ids: required (%s)", usage);
    if (!val[F_MODEL] || !val[F_OUT]) return avcli_fail("%s: required (%s)", val[F_MODEL] ? "-o" : "--model", usage);
    if (!val[F_TOK] && !avcli_is_dir(val[F_MODEL]) && !val[F_IDS])
        return avcli_fail("--tokenizer: required with a llama2.c checkpoint (%s)", usage);
    if (want_logits && val[F_FILE]) return avcli_fail("--logits: one text at a time (with --text or --ids)");
    if (val[F_FILE]) return capture_corpus(val[F_MODEL], val[F_TOK], val[F_FILE], lines, val[F_OUT]);
    loaded x;
    int *ids = NULL, n = 0;
    float *Q = NULL, *K = NULL, *V = NULL, *logits = NULL;
    void *work = NULL;
    char *paths[5] = {0};
    const char *dir = val[F_OUT];
    int made = 0;
    if ((code = avcli_dir_check("-o", dir))) return code;
    if (!val[F_TOK] && val[F_IDS] && !avcli_is_dir(val[F_MODEL])) { /* a llama2.c file and ids: no tokenizer needed */
        memset(&x, 0, sizeof x);
        size_t mlen;
        int st;
        if ((code = avcli_read_file("--model", val[F_MODEL], &x.mbuf, &mlen))) goto done;
        if ((st = av_model_parse(&x.m, x.mbuf, mlen)) != AV_OK) {
            code = avcli_fail("--model %s: %s", val[F_MODEL],
                              st == AV_ERR_FORMAT || st == AV_ERR_NONFINITE ? av_model_error() : av_status_string(st));
            goto done;
        }
    } else if ((code = load(&x, val[F_MODEL], val[F_TOK])))
        goto done;
    if ((code = val[F_IDS] ? parse_ids(&x, val[F_IDS], &ids, &n) : encode(&x, val[F_TEXT], &ids, &n))) goto done;
    const av_model *m = &x.m;
    size_t qn = (size_t)m->n_layers * m->n_heads * n * m->head_size, kn = (size_t)m->n_layers * m->n_kv_heads * n * m->head_size;
    Q = malloc(sizeof(float) * qn), K = malloc(sizeof(float) * kn), V = malloc(sizeof(float) * kn);
    if (want_logits) logits = malloc(sizeof(float) * (size_t)n * m->vocab_size);
    size_t plen = strlen(dir) + 16;
    for (int i = 0; i < 5; i++) paths[i] = malloc(plen);
    size_t wb = want_logits ? av_forward_swapped_work(m, n, NULL, AV_SWAP_MATRIX) : av_forward_work(m);
    work = malloc(wb ? wb : 1);
    if (!Q || !K || !V || (want_logits && !logits) || !work || !wb || !paths[0] || !paths[1] || !paths[2] || !paths[3] ||
        !paths[4]) {
        code = avcli_fail_system("out of memory");
        goto done;
    }
    /* the logits at every position: the swapped pass with every head kept (av_forward's arithmetic, bit for bit) */
    int st = want_logits ? av_forward_swapped(logits, Q, K, V, m, ids, n, NULL, AV_SWAP_MATRIX, NULL, work, wb)
                         : av_forward(Q, K, V, NULL, m, ids, 0, n, work, wb);
    if (st < 0) {
        code = avcli_fail("forward pass: %s", av_status_string(st));
        goto done;
    }
    if (st > 0) fprintf(stderr, "attnviz: warning: forward pass: %s (the captured q, k, v hold Inf or NaN)\n", forward_warning(st));
    if ((code = avcli_dir_make("-o", dir, &made))) goto done;
    const char *fn[5] = {"q.npy", "k.npy", "v.npy", "tokens.json", "logits.npy"};
    for (int i = 0; i < 5; i++) snprintf(paths[i], plen, "%s/%s", dir, fn[i]);
    tokens_json tj = {&x, ids, n, val[F_TEXT]};
    avcli_file files[5] = { /* together: all replaced, or none */
        {"-o", paths[0], Q, {m->n_layers, m->n_heads, n, m->head_size}, 4, NULL, NULL},
        {"-o", paths[1], K, {m->n_layers, m->n_kv_heads, n, m->head_size}, 4, NULL, NULL},
        {"-o", paths[2], V, {m->n_layers, m->n_kv_heads, n, m->head_size}, 4, NULL, NULL},
        {"-o", paths[3], NULL, {0}, 0, write_tokens, &tj},
        {"-o", paths[4], logits, {n, m->vocab_size}, 2, NULL, NULL},
    };
    code = avcli_save(files, want_logits ? 5 : 4);
    avcli_dir_done(dir, made, code != 0);
done:
    unload(&x);
    free(ids);
    free(Q);
    free(K);
    free(V);
    free(logits);
    free(work);
    for (int i = 0; i < 5; i++) free(paths[i]);
    return code;
}

int avcli_cmd_generate_text(int argc, char **argv) {
    static const char *const names[] = {"--model", "--tokenizer", "--text", "--steps", "--max-tokens"};
    const char *val[5] = {0};
    int code = flags(argc, argv, "generate-text", names, val, 5);
    if (code || (code = read_max_tokens(val[4]))) return code;
    if (!val[0]) return avcli_fail("--model: required (attnviz generate-text --model M.bin|DIR [--tokenizer T] --steps N)");
    if (!val[1] && !avcli_is_dir(val[0]))
        return avcli_fail("--tokenizer: required with a llama2.c checkpoint (attnviz generate-text --model M.bin --tokenizer T.bin --steps N)");
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
    const long long wanted = (long long)n + steps; /* the prompt and every step asked for */
    int total = wanted > m->seq_len ? m->seq_len : (int)wanted;
    int *all = realloc(ids, sizeof(int) * (size_t)(total > n ? total : n));
    if (all) ids = all;
    logits = malloc(sizeof(float) * m->vocab_size), work = malloc(wb ? wb : 1);
    if (!all || !logits || !work || !wb) {
        code = avcli_fail_system("out of memory");
        goto done;
    }
    // the prompt as given (without BOS), then each greedy token as it comes
    for (int i = prefix_tokens(&x, ids, n); i < n; i++) {
        const char *p;
        int l;
        if (piece_of(&x, i ? ids[i - 1] : -1, ids[i], &p, &l) == 0) fwrite(p, 1, (size_t)l, stdout);
    }
    int st = av_forward(NULL, NULL, NULL, logits, m, ids, 0, n, work, wb);
    while (st == AV_OK && n < total) { /* an argmax over Inf or NaN logits picks nothing the model chose */
        int best = 0;
        for (int v = 1; v < m->vocab_size; v++)
            if (logits[v] > logits[best]) best = v;
        int stop = 0; /* llama2.c: BOS, where the next story begins; a Hugging Face model: its EOS ids */
        for (int e = 0; e < m->n_eos && e < 4; e++) stop |= best == m->eos_id[e];
        if (stop) break;
        const char *p;
        int l;
        if (piece_of(&x, ids[n - 1], best, &p, &l) == 0) fwrite(p, 1, (size_t)l, stdout);
        ids[n++] = best;
        if (n < total) st = av_forward(NULL, NULL, NULL, logits, m, ids, n - 1, n, work, wb);
    }
    fputc('\n', stdout);
    if (st == AV_OK && n == total && n == m->seq_len && wanted > m->seq_len)
        fprintf(stderr, "attnviz: note: stopped at %d tokens, all this run holds%s\n", m->seq_len,
                x.hf && m->seq_len < m->context && !(m->sliding_window && m->seq_len == m->sliding_window) ? " (--max-tokens raises it)" : "");
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
int avcli_model_piece(const avcli_model *mp, int prev, int id, const char **p, int *len) {
    return piece_of(&mp->x, prev, id, p, len);
}
int avcli_model_encode(const avcli_model *mp, const char *text, const char *what, int **ids, int *n) {
    *ids = NULL;
    int code = encode_text(&mp->x, text, what, ids, n);
    if (code) { free(*ids); *ids = NULL; }
    return code;
}
void avcli_json_string(FILE *out, const unsigned char *s, size_t len) { json_string(out, s, len); }
