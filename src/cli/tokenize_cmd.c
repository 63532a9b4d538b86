/* tokenize_cmd.c: `attnviz tokenize` (docs/hf.md "tokenizer.json"):
 *   attnviz tokenize --tokenizer FILE (--text S | --text-file F | --texts F) [--no-special] [--parse-special]
 *                    [--model M.bin] [-o OUT]
 * FILE is a tokenizer.json, or with --model a llama2.c tokenizer.bin (for the model's vocab_size). --text and
 * --text-file print one JSON object {"ids", "pieces"}; --texts F (texts separated by NUL bytes) prints one JSON
 * line {"ids"} a text. Every text is encoded before anything is written: all or none.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The tokenizer of --tokenizer: a tokenizer.json, or llama2.c's format with --model. */
typedef struct tok {
    unsigned char *json, *bin, *mbuf;
    void *work;
    const av_hf_tokenizer *hf;
    av_model m;
    av_tokenizer l2;
    size_t scratch_bytes;
    void *scratch;
} tok;

static void tok_free(tok *k) {
    free(k->json), free(k->bin), free(k->mbuf), free(k->work), free(k->scratch);
}

static int tok_open(tok *k, const char *path, const char *model) {
    memset(k, 0, sizeof *k);
    size_t len;
    int st;
    if (model) {
        size_t mlen;
        if ((st = avcli_read_file("--model", model, &k->mbuf, &mlen)) || (st = avcli_read_file("--tokenizer", path, &k->bin, &len)))
            return st;
        if ((st = av_model_parse(&k->m, k->mbuf, mlen)) != AV_OK)
            return avcli_fail("--model %s: %s", model, st == AV_ERR_FORMAT || st == AV_ERR_NONFINITE ? av_model_error() : av_status_string(st));
        size_t wb = av_tokenizer_work(k->m.vocab_size);
        if (!(k->work = malloc(wb ? wb : 1))) return avcli_fail_system("out of memory");
        if ((st = av_tokenizer_parse(&k->l2, k->bin, len, k->m.vocab_size, k->work, wb)) != AV_OK)
            return avcli_fail("--tokenizer %s: %s", path, st == AV_ERR_FORMAT ? av_model_error() : av_status_string(st));
        return 0;
    }
    if ((st = avcli_read_file("--tokenizer", path, &k->json, &len))) return st;
    size_t wb = av_hf_tokenizer_work(k->json, len);
    if (!wb) return avcli_fail("--tokenizer %s: %s", path, av_model_error());
    if (!(k->work = malloc(wb))) return avcli_fail_system("--tokenizer %s: out of memory (%zu bytes of workspace)", path, wb);
    if ((st = av_hf_tokenizer_parse(&k->hf, k->work, wb, k->json, len)) != AV_OK)
        return avcli_fail("--tokenizer %s: %s", path, st == AV_ERR_FORMAT ? av_model_error() : av_status_string(st));
    free(k->json), k->json = NULL; /* the parsed tokenizer lives in its workspace */
    return 0;
}

/* Each maximal invalid UTF-8 subsequence as U+FFFD (the library's rule for tokenizer.json, applied here
 * before llama2.c's encoder, which takes bytes). out has room for 3·len bytes. */
static size_t fix_utf8(unsigned char *out, const unsigned char *s, size_t len) {
    size_t w = 0;
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        size_t need = 0, j = 1;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80) { out[w++] = (unsigned char)c, i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) need = 1;
        else if (c >= 0xE0 && c <= 0xEF) need = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        else if (c >= 0xF0 && c <= 0xF4) need = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        for (; need && j <= need && i + j < len; j++)
            if (s[i + j] < (j == 1 ? lo : 0x80) || s[i + j] > (j == 1 ? hi : 0xBF)) break;
        if (need && j == need + 1) memcpy(out + w, s + i, j), w += j;
        else memcpy(out + w, "\xEF\xBF\xBD", 3), w += 3;
        i += need ? j : 1;
    }
    return w;
}

/* Encode one text into *ids (malloc'd). `what` names it in messages. */
static int tok_encode(tok *k, const unsigned char *text, size_t len, int add_special, int parse_special, const char *what,
                      int **ids, int *n) {
    *ids = NULL, *n = 0;
    if (!k->hf) {
        unsigned char *fixed = malloc(3 * len + 1);
        size_t fl = fixed ? fix_utf8(fixed, text, len) : 0;
        size_t cap = fl + 2;
        if (!fixed || cap > (size_t)INT32_MAX || !(*ids = malloc(sizeof(int) * cap))) {
            free(fixed);
            return avcli_fail_system("%s: out of memory", what);
        }
        int st = av_encode(*ids, n, (int)cap, &k->l2, (const char *)fixed, fl, add_special);
        free(fixed);
        if (st != AV_OK) return avcli_fail("%s: %s", what, st == AV_ERR_FORMAT ? av_model_error() : av_status_string(st));
        return 0;
    }
    size_t wb = av_hf_encode_work(k->hf, len), cap = av_hf_encode_cap(k->hf, len);
    if (!wb || !cap || cap > (size_t)INT32_MAX) return avcli_fail("%s: %zu bytes, too long a text to encode", what, len);
    if (wb > k->scratch_bytes) {
        free(k->scratch);
        if (!(k->scratch = malloc(wb))) return k->scratch_bytes = 0, avcli_fail_system("%s: out of memory", what);
        k->scratch_bytes = wb;
    }
    if (!(*ids = malloc(sizeof(int) * cap))) return avcli_fail_system("%s: out of memory", what);
    int st = av_hf_encode(*ids, n, (int)cap, k->hf, (const char *)text, len, add_special, parse_special, k->scratch, wb);
    if (st != AV_OK) return avcli_fail("%s: %s", what, av_status_string(st));
    return 0;
}

typedef struct result {
    tok *k;
    int count, pieces;  /* pieces: the single-text object with "pieces" */
    int **ids, *n;
} result;

static int write_result(const avcli_inputs *in, const void *ctx, FILE *f) {
    (void)in;
    const result *r = ctx;
    char buf[4 * AV_TOKEN_MAX_LEN];
    for (int t = 0; t < r->count; t++) {
        fputs("{\"ids\": [", f);
        for (int i = 0; i < r->n[t]; i++) fprintf(f, i ? ", %d" : "%d", r->ids[t][i]);
        fputc(']', f);
        if (r->pieces) {
            fputs(", \"pieces\": [", f);
            for (int i = 0; i < r->n[t]; i++) {
                int prev = i ? r->ids[t][i - 1] : -1, id = r->ids[t][i], len = 0;
                if (i) fputs(", ", f);
                if (r->k->hf) {
                    if (av_hf_token_bytes(buf, &len, (int)sizeof buf, r->k->hf, prev, id) != AV_OK) len = 0;
                    avcli_json_string(f, (const unsigned char *)buf, (size_t)len);
                } else {
                    const char *p;
                    if (av_token_piece(&p, &len, &r->k->l2, prev, id) != AV_OK) p = "", len = 0;
                    avcli_json_string(f, (const unsigned char *)p, (size_t)len);
                }
            }
            fputc(']', f);
        }
        fputs("}\n", f);
    }
    return ferror(f) ? AVCLI_EXIT_SYSTEM : 0;
}

static const char USAGE[] = "attnviz tokenize --tokenizer FILE (--text S | --text-file F | --texts F)";

int avcli_cmd_tokenize(int argc, char **argv) {
    enum { F_TOKENIZER, F_TEXT, F_TEXT_FILE, F_TEXTS, F_MODEL, F_OUT, F_COUNT };
    static const char *const names[F_COUNT] = {"--tokenizer", "--text", "--text-file", "--texts", "--model", "-o"};
    const char *val[F_COUNT] = {0};
    int add_special = 1, parse_special = 0, no_special_seen = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--no-special") == 0) {
            if (no_special_seen++) return avcli_fail("--no-special: given twice");
            add_special = 0;
            continue;
        }
        if (strcmp(argv[i], "--parse-special") == 0) {
            if (parse_special++) return avcli_fail("--parse-special: given twice");
            continue;
        }
        int f = 0;
        while (f < F_COUNT && strcmp(argv[i], names[f])) f++;
        if (f == F_COUNT) return avcli_fail("%s: unknown option for tokenize (see attnviz --help)", avcli_brief(argv[i]));
        if (val[f]) return avcli_fail("%s: given twice", argv[i]);
        if (i + 1 >= argc) return avcli_fail("%s: needs a value", argv[i]);
        val[f] = argv[++i];
    }
    if (!val[F_TOKENIZER]) return avcli_fail("--tokenizer: required (%s)", USAGE);
    int given = !!val[F_TEXT] + !!val[F_TEXT_FILE] + !!val[F_TEXTS];
    if (given != 1) return avcli_fail("--text, --text-file or --texts: give exactly one (%s)", USAGE);
    if (parse_special && val[F_MODEL]) return avcli_fail("--parse-special: a llama2.c tokenizer has no special tokens to parse");
    int code;
    if (val[F_OUT] && (code = avcli_out_check("-o", val[F_OUT]))) return code;
    tok k;
    unsigned char *file = NULL;
    size_t flen = 0;
    result r = {&k, 0, !val[F_TEXTS], NULL, NULL};
    if ((code = tok_open(&k, val[F_TOKENIZER], val[F_MODEL]))) goto done;
    if (val[F_TEXT]) {
        flen = strlen(val[F_TEXT]);
        if ((file = malloc(flen + 1))) memcpy(file, val[F_TEXT], flen + 1);
    }
    else if ((code = avcli_read_file(val[F_TEXTS] ? "--texts" : "--text-file", val[F_TEXTS] ? val[F_TEXTS] : val[F_TEXT_FILE], &file, &flen)))
        goto done;
    if (!file) { code = avcli_fail_system("out of memory"); goto done; }
    // the texts: the whole, or split at every NUL (n NULs, n + 1 texts)
    size_t count = 1;
    if (val[F_TEXTS])
        for (size_t i = 0; i < flen; i++) count += file[i] == 0;
    if (count > (size_t)INT32_MAX / 2) { code = avcli_fail("--texts: too many texts"); goto done; }
    r.ids = calloc(count, sizeof(int *)), r.n = calloc(count, sizeof(int));
    if (!r.ids || !r.n) { code = avcli_fail_system("out of memory"); goto done; }
    char what[64];
    for (size_t t = 0, from = 0; t < count; t++) {
        size_t to = from;
        if (val[F_TEXTS]) while (to < flen && file[to]) to++;
        else to = flen;
        if (val[F_TEXTS]) snprintf(what, sizeof what, "--texts: text %zu", t + 1);
        else snprintf(what, sizeof what, "%s", val[F_TEXT] ? "--text" : "--text-file");
        r.count = (int)t + 1; /* freed at the end, whether or not it was encoded */
        if ((code = tok_encode(&k, file + from, to - from, add_special, parse_special, what, &r.ids[t], &r.n[t]))) goto done;
        from = to + 1;
    }
    avcli_inputs in;
    memset(&in, 0, sizeof in);
    in.out = val[F_OUT];
    code = avcli_emit_json(&in, write_result, &r);
done:
    for (int t = 0; t < r.count; t++) free(r.ids[t]);
    free(r.ids), free(r.n), free(file);
    tok_free(&k);
    return code;
}
