/* table_cmd.c: `attnviz readouts --all-heads` and `attnviz table`, the readouts of every layer and head.
 *
 * The table runs `attnviz readouts` itself (avcli_cmd_readouts, without the spectra) for every layer ×
 * head × variant and reads its scalar keys back, so every value is the one `readouts` prints for that head
 * and variant, digit for digit, and every key the readouts JSON gains (an estimate's `<key>_method`, a
 * bound's `<key>_bound`) reaches the table without a list kept here. Rows are long format:
 * [text,]layer,head,variant,knobs,readout,value,reason (docs/model.md#attnviz-table).
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream, strdup, fileno */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

// ----------------------------------------------------------------------------------------------------
// small helpers

/* The shape of the .npy at `path` (its header only is kept). 0, or one line and the exit status. */
static int npy_shape(av_npy_info *info, const char *flag, const char *path) {
    unsigned char *buf;
    size_t len;
    int code = avcli_read_file(flag, path, &buf, &len);
    if (code) return code;
    int st = av_npy_parse(info, buf, len);
    free(buf);
    return st == AV_OK ? 0 : avcli_fail("%s %s: %s", flag, path, av_npy_error());
}

/* The value of flag `name` in argv (NULL when absent). */
static const char *flag_value(int argc, char **argv, const char *name) {
    for (int i = 0; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return NULL;
}

/* A row's variant id: the registry's variant, or a preset of it (variant + AV_VARIANT_COUNT·alias), so that
 * mamba2 and simple_gla are two variants of the table. Its family, preset and printed name: */
static int id_family(int id) { return id % AV_VARIANT_COUNT; }
static int id_alias(int id) { return id / AV_VARIANT_COUNT; }
static const char *id_name(int id) { return avcli_variant_label(id_family(id), id_alias(id)); }

/* Run `readouts` on `in` into a string (malloc'd, *text). 0 or the exit status. */
static int readouts_text(const avcli_inputs *in, char **text) {
    size_t len;
    *text = NULL;
    FILE *mem = open_memstream(text, &len);
    if (!mem) return avcli_fail_system("out of memory");
    int code = avcli_cmd_readouts(in, mem);
    if (fclose(mem) != 0 && !code) code = avcli_fail_system("out of memory");
    if (code) { free(*text); *text = NULL; }
    return code;
}

/* Write text to -o through a temporary renamed into place on success, or to stdout. */
static int put_output(const char *out, const char *text, size_t len) {
    if (!out) {
        fwrite(text, 1, len, stdout); /* main checks that stdout was written */
        return 0;
    }
    avcli_out o;
    if (avcli_out_open(&o, out) != 0) return avcli_out_fail("-o", out, errno);
    fwrite(text, 1, len, o.f);
    if (avcli_out_close(&o) != 0 || avcli_out_commit(&o) != 0) {
        int e = errno;
        avcli_out_discard(&o);
        return avcli_out_fail("-o", out, e);
    }
    return 0;
}

// ----------------------------------------------------------------------------------------------------
// attnviz readouts --all-heads

static int all_heads(int argc, char **argv, const char *model, const char *tokenizer, const char *text);
static int capture_files(const avcli_capture *c, FILE *f[3], char paths[3][40]);

/* readouts --all-heads --model M|DIR [--tokenizer T] --text "...": the text captured (as `attnviz capture`
 * would) into unlinked temporary .npy files, then every head's readouts of them. */
int avcli_cmd_all_heads(int argc, char **argv) {
    const char *model = NULL, *tokenizer = NULL, *text = NULL;
    char **args = malloc(sizeof(char *) * (size_t)(argc + 7));
    int nargs = 0, code = 0;
    if (!args) return avcli_fail_system("out of memory");
    for (int i = 0; i < argc && !code; i++) {
        const char **slot = !strcmp(argv[i], "--model") ? &model : !strcmp(argv[i], "--tokenizer") ? &tokenizer
                          : !strcmp(argv[i], "--text") ? &text : NULL;
        if (!slot) { args[nargs++] = argv[i]; continue; }
        if (*slot) code = avcli_fail("%s: given twice", argv[i]);
        else if (i + 1 >= argc) code = avcli_fail("%s: needs a value", argv[i]);
        else *slot = argv[++i];
    }
    for (int i = 0; i < nargs && !code && model; i++)
        if (!strcmp(args[i], "--q") || !strcmp(args[i], "--k") || !strcmp(args[i], "--v"))
            code = avcli_fail("%s: with --model the text's capture is the input (drop %s, or --model)", args[i], args[i]);
    if (!code && (tokenizer || text) && !model) code = avcli_fail("%s: needs --model", tokenizer ? "--tokenizer" : "--text");
    if (!code && model && !text) code = avcli_fail("--text: required with --model (the text whose heads are read)");
    if (!code && model && !tokenizer && !avcli_is_dir(model))
        code = avcli_fail("--tokenizer: required with a llama2.c checkpoint (a Hugging Face folder has its tokenizer.json)");
    if (code || !model) {
        if (!code) code = all_heads(nargs, args, NULL, NULL, NULL);
        free(args);
        return code;
    }
    code = all_heads(nargs, args, model, tokenizer, text);
    free(args);
    return code;
}

static int all_heads(int argc, char **argv, const char *model, const char *tokenizer, const char *input) {
    const char *q = NULL, *out = NULL;
    char **rest = malloc(sizeof(char *) * (size_t)(argc + 10));
    int nrest = 0, summary = 0;
    if (!rest) return avcli_fail_system("out of memory");
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--layer") == 0 || strcmp(argv[i], "--head") == 0) {
            free(rest);
            return avcli_fail("%s: --all-heads takes every layer and head; drop %s", argv[i], argv[i]);
        }
        if (strcmp(argv[i], "--summary") == 0) { summary = 1; continue; }
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) { out = argv[++i]; continue; }
        if (strcmp(argv[i], "--q") == 0 && i + 1 < argc) q = argv[i + 1];
        rest[nrest++] = argv[i];
    }
    av_npy_info qi, ki;
    int st = out ? avcli_out_check("-o", out) : 0;
    FILE *cf[3] = {0};
    char cpaths[3][40];
    if (!st && model) { /* the capture, as files the shared reader opens */
        avcli_model *mp = NULL;
        avcli_capture c = {0};
        if (!(st = avcli_model_open(&mp, model, tokenizer)) && !(st = avcli_model_capture(mp, input, "--text", &c)))
            st = capture_files(&c, cf, cpaths);
        avcli_capture_free(&c);
        avcli_model_close(mp);
        static const char *const names[3] = {"--q", "--k", "--v"};
        for (int i = 0; i < 3 && !st; i++) rest[nrest++] = (char *)names[i], rest[nrest++] = cpaths[i];
        q = cpaths[0];
    }
    if (st) {
        for (int i = 0; i < 3; i++)
            if (cf[i]) fclose(cf[i]);
        free(rest);
        return st;
    }
    if (!st) st = q ? npy_shape(&qi, "--q", q) : avcli_fail("--q: required (Q.npy)");
    if (st) { free(rest); return st; }
    if (qi.ndim != 4) { free(rest); return avcli_fail("--all-heads: --q %s is not a model's (layers, heads, n, d) tensor", q); }
    int64_t L = qi.shape[0], H = qi.shape[1], n = qi.shape[2], kvh = 0;
    char *text = NULL, lb[24], hb[24], where[64];
    size_t text_len = 0;
    FILE *mem = open_memstream(&text, &text_len);
    if (!mem) { free(rest); return avcli_fail_system("out of memory"); }
    rest[nrest] = "--layer", rest[nrest + 1] = lb, rest[nrest + 2] = "--head", rest[nrest + 3] = hb;
    for (int64_t l = 0; l < L && !st; l++) {
        fprintf(mem, "%s\n    [", l ? "," : "");
        for (int64_t h = 0; h < H && !st; h++) {
            snprintf(lb, sizeof lb, "%lld", (long long)l);
            snprintf(hb, sizeof hb, "%lld", (long long)h);
            snprintf(where, sizeof where, "layer %lld head %lld", (long long)l, (long long)h);
            avcli_inputs in;
            if ((st = avcli_parse_inputs(&in, nrest + 4, rest)) != 0) break;
            in.summary = summary;
            in.where = where; /* a warning names its head */
            if (h) fputs(", ", mem);
            st = avcli_cmd_readouts(&in, mem);
            avcli_free(&in);
        }
        fputs("]", mem);
    }
    const char *k = flag_value(nrest, rest, "--k");
    if (!st && k && (st = npy_shape(&ki, "--k", k)) == 0) kvh = ki.shape[1]; /* the KV heads, from --k's header */
    fclose(mem);
    free(rest);
    if (!st) {
        char *all = NULL;
        size_t all_len = 0;
        FILE *f = open_memstream(&all, &all_len);
        if (!f) st = avcli_fail_system("out of memory");
        else {
            fprintf(f, "{\n  \"layers\": %lld, \"heads\": %lld, \"kv_heads\": %lld, \"n\": %lld,\n  \"readouts\": [%s\n  ]\n}\n",
                    (long long)L, (long long)H, (long long)kvh, (long long)n, text);
            fclose(f);
            st = all ? put_output(out, all, all_len) : avcli_fail_system("out of memory");
        }
        free(all);
    }
    free(text);
    for (int i = 0; i < 3; i++)
        if (cf[i]) fclose(cf[i]);
    return st;
}

// ----------------------------------------------------------------------------------------------------
// the readouts object's top-level keys

/* One top-level pair of the readouts object: the key and the value's JSON text (both malloc'd). */
typedef struct pair { char *key, *val; } pair;

static const char *skip_ws(const char *p) {
    while (isspace((unsigned char)*p)) p++;
    return p;
}

/* The end of the JSON value at p (a string, a number, a literal, an array or an object). */
static const char *value_end(const char *p) {
    int depth = 0;
    do {
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1]) p++;
            if (*p) p++;
        } else if (*p == '[' || *p == '{') depth++, p++;
        else if (*p == ']' || *p == '}') depth--, p++;
        else if (depth == 0) {
            while (*p && *p != ',' && *p != '}' && !isspace((unsigned char)*p)) p++;
        } else p++;
    } while (*p && depth > 0);
    return p;
}

/* The pairs of the flat object `text` (written by avcli_cmd_readouts) into *out (count returned; −1 out of
 * memory). */
static int object_pairs(const char *text, pair **out) {
    int count = 0, cap = 64;
    pair *ps = malloc(sizeof(pair) * (size_t)cap);
    const char *p = skip_ws(text);
    if (!ps || *p != '{') { free(ps); return -1; }
    for (p = skip_ws(p + 1); *p == '"';) {
        const char *k0 = p + 1, *k1 = strchr(k0, '"'); /* keys are plain: no escapes */
        const char *v0 = skip_ws(skip_ws(k1 + 1) + 1), *v1 = value_end(v0);
        if (count == cap) {
            pair *np = realloc(ps, sizeof(pair) * (size_t)(cap *= 2));
            if (!np) break;
            ps = np;
        }
        ps[count].key = strndup(k0, (size_t)(k1 - k0));
        ps[count].val = strndup(v0, (size_t)(v1 - v0));
        count++;
        p = skip_ws(v1);
        if (*p == ',') p = skip_ws(p + 1);
    }
    *out = ps;
    return count;
}

static void free_pairs(pair *ps, int count) {
    for (int i = 0; i < count; i++) { free(ps[i].key); free(ps[i].val); }
    free(ps);
}

static const pair *find_pair(const pair *ps, int count, const char *key) {
    for (int i = 0; i < count; i++)
        if (strcmp(ps[i].key, key) == 0) return &ps[i];
    return NULL;
}

static int ends_with(const char *s, const char *tail) {
    size_t a = strlen(s), b = strlen(tail);
    return a > b && strcmp(s + a - b, tail) == 0;
}

/* The table's scalar readouts, one list for the rows, the "no causal form" rows and --readouts' error: the
 * library's readouts, then the numbers `readouts` prints beside them (docs/model.md). */
static const char *const BESIDE[] = {"semiseparable_ceiling", "factor_rank", "noise_floor_factor"};
enum { SCALARS = AV_R_COUNT + (int)(sizeof BESIDE / sizeof *BESIDE) };
static const char *scalar_name(int i) { return i < AV_R_COUNT ? av_readout_name(i) : BESIDE[i - AV_R_COUNT]; }

static int registry_readout(const char *key) {
    for (int r = 0; r < SCALARS; r++)
        if (strcmp(scalar_name(r), key) == 0) return 1;
    return 0;
}

/* A row of the table: the scalar readouts (registry_readout, null or not) and the marks of an estimate or a
 * bound (string values). */
static int is_row_key(const pair *p) {
    if (ends_with(p->key, "_bound") || ends_with(p->key, "_method")) return p->val[0] == '"';
    return registry_readout(p->key);
}

/* A JSON string's text without its quotes and escapes (the readouts writer escapes nothing else). */
static char *unquote(const char *v) {
    size_t len = strlen(v);
    char *s = malloc(len + 1), *o = s;
    if (!s) return NULL;
    for (const char *p = v + 1; p < v + len - 1; p++) {
        if (*p == '\\' && p[1]) p++;
        *o++ = *p;
    }
    *o = 0;
    return s;
}

// ----------------------------------------------------------------------------------------------------
// rows

typedef struct trow {
    int text, layer, head, variant;
    char *knobs, *readout;
    char *value;  /* the JSON text of the value (a number, or a quoted string for a mark); NULL: empty */
    char *reason; /* plain text, or NULL */
} trow;

typedef struct table {
    trow *rows;
    size_t count, cap;
    int oom;
} table;

static void add_row(table *t, int text, int layer, int head, int variant, const char *knobs, const char *readout,
                    const char *value, const char *reason) {
    if (t->oom) return;
    if (t->count == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        trow *nr = realloc(t->rows, sizeof(trow) * cap);
        if (!nr) { t->oom = 1; return; }
        t->rows = nr, t->cap = cap;
    }
    trow *r = &t->rows[t->count];
    *r = (trow){text, layer, head, variant, strdup(knobs), strdup(readout), value ? strdup(value) : NULL,
                reason ? strdup(reason) : NULL};
    if (!r->knobs || !r->readout || (value && !r->value) || (reason && !r->reason)) t->oom = 1;
    t->count++;
}

static void free_table(table *t) {
    for (size_t i = 0; i < t->count; i++) {
        free(t->rows[i].knobs); free(t->rows[i].readout); free(t->rows[i].value); free(t->rows[i].reason);
    }
    free(t->rows);
}

/* The run's settings, from the table's own flags. */
typedef struct run {
    int variants[AV_VARIANT_COUNT * AVCLI_ALIAS_COUNT], nvariants; /* each once: row ids (row_variant) */
    char **readouts; /* --readouts names, or NULL: every scalar readout */
    int nreadouts;
    int causal;      /* --causal given */
    int checked;     /* --readouts names checked against the first head's keys */
    char **rest;     /* the shared flags (knobs, --causal, --accurate, --tau, --hedgehog-w) */
    int nrest;
} run;

/* The knobs the variant read, resolved ("p=3;m=64"): the registry's list for the variant, then scale where
 * it was given and the variant reads it, hedgehog's W, and a mask the table did not ask for. */
void avcli_knobs_text(char *out, size_t cap, const avcli_inputs *in, int nflags, char **flags, int causal_given) {
    const av_variant_desc *vd = av_variant_info(in->prm.variant);
    av_params res;
    int bad, k = 0;
    out[0] = 0;
    if (av_params_check(&res, &in->prm, in->n, in->d, &bad) != AV_OK) res = in->prm;
    for (int i = 0; i < vd->knob_count && (size_t)k < cap; i++) {
        const av_knob_desc *kd = av_knob_info(vd->knobs[i]);
        /* a gated family given arrays does not read their constant knobs */
        if ((vd->knobs[i] == AV_KNOB_DECAY && in->gates) || (vd->knobs[i] == AV_KNOB_BETA && in->betas)) continue;
        double v = av_params_get(&res, vd->knobs[i]);
        const char *sep = k ? ";" : "";
        if ((kd->flags & AV_KF_MINUS1_ZERO) && v == -1) v = 0;
        if (kd->type == AV_KT_ENUM) {
            const char *o = kd->options;
            for (int j = 0; j < (int)v && strchr(o, '|'); j++) o = strchr(o, '|') + 1;
            k += snprintf(out + k, cap - (size_t)k, "%s%s=%.*s", sep, kd->key, (int)strcspn(o, "|"), o);
        } else k += snprintf(out + k, cap - (size_t)k, "%s%s=%.10g", sep, kd->key, v);
    }
    if ((vd->flags & AV_VF_SCALED) && flag_value(nflags, flags, "--scale") && (size_t)k < cap)
        k += snprintf(out + k, cap - (size_t)k, "%sscale=%.10g", k ? ";" : "", res.scale);
    /* the arrays as given; mamba2's gates from dt, rwkv7's a, b from K (docs/gated.md) */
    const char *dt = in->alias == AVCLI_MAMBA2 ? flag_value(nflags, flags, "--dt") : NULL;
    static const char *const ARRAYS[3] = {"gates", "betas", "ab"};
    const float *given[3] = {dt ? NULL : in->gates, in->betas, in->ab_made ? NULL : in->dplr_a};
    for (int i = 0; i < 3; i++)
        if (given[i] && (size_t)k < cap) k += snprintf(out + k, cap - (size_t)k, "%s%s=given", k ? ";" : "", ARRAYS[i]);
    if (dt && (size_t)k < cap)
        k += snprintf(out + k, cap - (size_t)k, "%sdt=given;A=%s", k ? ";" : "", flag_value(nflags, flags, "--A"));
    if (in->ab_made && (size_t)k < cap) {
        if (in->a_icl) k += snprintf(out + k, cap - (size_t)k, "%sa_icl=given", k ? ";" : "");
        else k += snprintf(out + k, cap - (size_t)k, "%sa_icl=%.10g", k ? ";" : "", in->a_icl_const);
    }
    if ((vd->flags & AV_VF_WEIGHTS) && (size_t)k < cap)
        k += snprintf(out + k, cap - (size_t)k, "%sW=%s", k ? ";" : "", in->hedgehog_w ? "given" : "identity");
    if (in->prm.causal && !causal_given && (size_t)k < cap) /* a variant that exists only causal */
        snprintf(out + k, cap - (size_t)k, "%scausal=1", k ? ";" : "");
}

static void knobs_text(char *out, size_t cap, const avcli_inputs *in, const run *ru) {
    avcli_knobs_text(out, cap, in, ru->nrest, ru->rest, ru->causal);
}

/* Why the variant has no causal form with these flags, into why; 0 when it has one. */
static int no_causal_form(char *why, size_t cap, int variant, const run *ru) {
    const av_variant_desc *vd = av_variant_info(variant);
    if (!(vd->flags & AV_VF_CAUSAL)) return snprintf(why, cap, "%s has no causal form", vd->name), 1;
    for (int i = 0; i < vd->knob_count; i++) { /* a knob that removes it (focused's DWC) */
        const av_knob_desc *kd = av_knob_info(vd->knobs[i]);
        const char *v = flag_value(ru->nrest, ru->rest, kd->flag);
        if ((kd->flags & AV_KF_NO_CAUSAL) && v && strcmp(v, "0") != 0)
            return snprintf(why, cap, "%s with %s has no causal form", vd->name, kd->flag), 1;
    }
    return 0;
}

/* The rows of one head and variant from its readouts object. */
static void object_rows(table *t, const run *ru, int text, int layer, int head, int variant, const char *knobs,
                        const pair *ps, int count) {
    char key[128], why[160];
    if (!ru->readouts) {
        for (int i = 0; i < count; i++) {
            if (!is_row_key(&ps[i])) continue;
            const char *v = ps[i].val;
            snprintf(key, sizeof key, "%s_reason", ps[i].key);
            const pair *rs = strcmp(v, "null") == 0 ? find_pair(ps, count, key) : NULL;
            char *reason = rs ? unquote(rs->val) : NULL;
            add_row(t, text, layer, head, variant, knobs, ps[i].key, strcmp(v, "null") ? v : NULL, reason);
            free(reason);
        }
        return;
    }
    for (int r = 0; r < ru->nreadouts; r++) { /* the names asked for, each with its marks */
        const char *name = ru->readouts[r];
        const pair *p = find_pair(ps, count, name);
        if (!p || !is_row_key(p)) { /* absent, or not a scalar readout (variant, n, the spectra) */
            snprintf(why, sizeof why, "readouts prints no %s for %s", name, id_name(variant));
            add_row(t, text, layer, head, variant, knobs, name, NULL, why);
            continue;
        }
        snprintf(key, sizeof key, "%s_reason", name);
        const pair *rs = strcmp(p->val, "null") == 0 ? find_pair(ps, count, key) : NULL;
        char *reason = rs ? unquote(rs->val) : NULL;
        add_row(t, text, layer, head, variant, knobs, name, strcmp(p->val, "null") ? p->val : NULL, reason);
        free(reason);
        for (int m = 0; m < 2; m++) {
            snprintf(key, sizeof key, "%s%s", name, m ? "_method" : "_bound");
            const pair *mk = find_pair(ps, count, key);
            if (mk && mk->val[0] == '"') add_row(t, text, layer, head, variant, knobs, key, mk->val, NULL);
        }
    }
}

/* The readout names of --readouts that neither the library nor the first head's objects know. */
static int check_readouts(run *ru, const table *t) {
    ru->checked = 1;
    for (int r = 0; r < ru->nreadouts; r++) {
        const char *name = ru->readouts[r];
        int known = registry_readout(name);
        for (size_t i = 0; i < t->count && !known; i++)
            known = t->rows[i].value && strcmp(t->rows[i].readout, name) == 0; /* printed by readouts */
        if (!known) {
            char names[1024];
            size_t k = 0;
            for (int j = 0; j < SCALARS && k < sizeof names; j++)
                k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", j ? ", " : "", scalar_name(j));
            return avcli_fail("--readouts %s: not a scalar readout (one of %s)", avcli_brief(name), names);
        }
    }
    return 0;
}

/* The gated input flag `a` is (AVCLI_G_*), or −1. */
static int gate_flag(const char *a) {
    for (int f = 0; f < AVCLI_G_COUNT; f++)
        if (strcmp(a, AVCLI_GATE_FLAGS[f]) == 0) return f;
    return -1;
}

/* The rows of every layer × head × variant of the inputs --q q --k k [--v v]; text is the text's index
 * (−1 without texts) and tname its name in warnings. */
static int table_of(table *t, run *ru, const char *q, const char *k, const char *v, int text, const char *tname) {
    av_npy_info qi;
    int code = npy_shape(&qi, "--q", q);
    if (code) return code;
    int four = qi.ndim == 4, L = four ? (int)qi.shape[0] : 1, H = four ? (int)qi.shape[1] : 1;
    char **argv = malloc(sizeof(char *) * (size_t)(ru->nrest + 12));
    if (!argv) return avcli_fail_system("out of memory");
    char lb[24], hb[24], where[192], knobs[512], why[160];
    for (int l = 0; l < L && !code; l++)
        for (int h = 0; h < H && !code; h++) {
            for (int vi = 0; vi < ru->nvariants && !code; vi++) {
                int variant = ru->variants[vi], argc = 0;
                int nc = ru->causal && no_causal_form(why, sizeof why, id_family(variant), ru);
                for (int i = 0; i < ru->nrest; i++) {
                    int gf = gate_flag(ru->rest[i]);
                    if (gf >= 0 && !avcli_gate_flag_read(id_family(variant), id_alias(variant), gf)) { i++; continue; } /* not its array */
                    if (!nc || strcmp(ru->rest[i], "--causal")) argv[argc++] = ru->rest[i]; /* its knobs, unmasked */
                }
                argv[argc++] = "--variant", argv[argc++] = (char *)id_name(variant);
                argv[argc++] = "--q", argv[argc++] = (char *)q, argv[argc++] = "--k", argv[argc++] = (char *)k;
                if (v) argv[argc++] = "--v", argv[argc++] = (char *)v;
                snprintf(lb, sizeof lb, "%d", l);
                snprintf(hb, sizeof hb, "%d", h);
                if (four) argv[argc++] = "--layer", argv[argc++] = lb, argv[argc++] = "--head", argv[argc++] = hb;
                avcli_inputs in;
                if ((code = avcli_parse_inputs(&in, argc, argv)) != 0) break;
                knobs_text(knobs, sizeof knobs, &in, ru);
                if (nc) { /* rows all the same: empty, with the reason */
                    for (int r = 0; r < (ru->readouts ? ru->nreadouts : SCALARS); r++)
                        add_row(t, text, l, h, variant, knobs, ru->readouts ? ru->readouts[r] : scalar_name(r), NULL, why);
                    avcli_free(&in);
                    continue;
                }
                size_t w = tname ? (size_t)snprintf(where, sizeof where, "text %s, ", avcli_brief(tname)) : 0;
                if (four) w += (size_t)snprintf(where + w, sizeof where - w, "layer %d head %d, ", l, h);
                snprintf(where + w, sizeof where - w, "%s", id_name(variant));
                in.summary = 1; /* the spectra are not rows */
                in.where = where; /* a warning names its text, head and variant */
                in.only = ru->readouts, in.nonly = ru->nreadouts; /* and concerns a readout asked for */
                char *json;
                code = readouts_text(&in, &json);
                avcli_free(&in);
                if (code) break;
                pair *ps = NULL;
                int count = object_pairs(json, &ps);
                free(json);
                if (count < 0) { code = avcli_fail_system("out of memory"); break; }
                object_rows(t, ru, text, l, h, variant, knobs, ps, count);
                free_pairs(ps, count);
            }
            if (!code && t->oom) code = avcli_fail_system("out of memory");
            if (!code && ru->readouts && !ru->checked) code = check_readouts(ru, t); /* before the other heads' work */
        }
    free(argv);
    return code;
}

// ----------------------------------------------------------------------------------------------------
// writing rows and summaries

static void csv_field(FILE *f, const char *s) { avcli_csv_field(f, s); }

/* A JSON string (the texts here are plain UTF-8: quotes, backslashes and control characters escaped). */
static void json_str(FILE *f, const char *s) {
    if (!s) { fputs("null", f); return; }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

/* The texts: their names, and whether each is a line number (a number in JSON) or a file name. */
typedef avcli_texts texts;

static void write_rows(FILE *f, const table *t, const texts *tx, int jsonl) {
    if (!jsonl) fprintf(f, "%slayer,head,variant,knobs,readout,value,reason\n", tx ? "text," : "");
    for (size_t i = 0; i < t->count; i++) {
        const trow *r = &t->rows[i];
        char *val = r->value && r->value[0] == '"' ? unquote(r->value) : NULL;
        if (jsonl) {
            fputc('{', f);
            if (tx) {
                fputs("\"text\": ", f);
                if (tx->lines) fputs(tx->name[r->text], f);
                else json_str(f, tx->name[r->text]);
                fputs(", ", f);
            }
            fprintf(f, "\"layer\": %d, \"head\": %d, \"variant\": \"%s\", \"knobs\": ", r->layer, r->head, id_name(r->variant));
            json_str(f, r->knobs);
            fprintf(f, ", \"readout\": \"%s\", \"value\": %s, \"reason\": ", r->readout, r->value ? r->value : "null");
            json_str(f, r->reason);
            fputs("}\n", f);
        } else {
            if (tx) { csv_field(f, tx->name[r->text]); fputc(',', f); }
            fprintf(f, "%d,%d,%s,", r->layer, r->head, id_name(r->variant));
            csv_field(f, r->knobs);
            fprintf(f, ",%s,", r->readout);
            csv_field(f, val ? val : r->value);
            fputc(',', f);
            csv_field(f, r->reason);
            fputc('\n', f);
        }
        free(val);
    }
}

/* One summary group: a layer, head, variant and readout over the texts. */
typedef struct group {
    size_t first;          /* its first row */
    int texts, nulls;      /* texts with a number, texts with none */
    double sum, min, max;  /* over the numbers */
    double *vals;          /* the numbers, for the standard deviation */
    char *knobs;           /* the knobs, "|"-joined where texts resolved them differently (n-bound defaults) */
} group;

static uint64_t group_hash(const trow *r) {
    uint64_t h = 1469598103934665603ULL;
    int ids[3] = {r->layer, r->head, r->variant};
    for (int i = 0; i < 3; i++) h = (h ^ (uint64_t)(unsigned)ids[i]) * 1099511628211ULL;
    for (const char *s = r->readout; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int same_group(const trow *a, const trow *b) {
    return a->layer == b->layer && a->head == b->head && a->variant == b->variant && strcmp(a->readout, b->readout) == 0;
}

/* Whether `s` is one of the '|'-separated entries of `list`. */
static int listed(const char *list, const char *s) {
    size_t len = strlen(s);
    for (const char *p = list;; p++) {
        size_t w = strcspn(p, "|");
        if (w == len && strncmp(p, s, len) == 0) return 1;
        if (!p[w]) return 0;
        p += w;
    }
}

/* Per layer, head, variant and readout over the texts: texts used (a number) and nulls (left out of the
 * statistics, counted), the mean, the population standard deviation (numpy's np.std), min and max. */
static int write_summary(FILE *f, const table *t, const texts *tx, int jsonl) {
    size_t slots = 16;
    while (slots < 2 * t->count) slots *= 2;
    long *slot = malloc(sizeof(long) * slots);
    group *g = calloc(t->count ? t->count : 1, sizeof(group));
    int ng = 0, code = 0;
    if (!slot || !g) { free(slot); free(g); return avcli_fail_system("out of memory"); }
    for (size_t i = 0; i < slots; i++) slot[i] = -1;
    for (size_t i = 0; i < t->count && !code; i++) {
        const trow *r = &t->rows[i];
        size_t s = (size_t)group_hash(r) & (slots - 1);
        while (slot[s] >= 0 && !same_group(&t->rows[g[slot[s]].first], r)) s = (s + 1) & (slots - 1);
        if (slot[s] < 0) {
            slot[s] = ng;
            g[ng] = (group){i, 0, 0, 0, INFINITY, -INFINITY, malloc(sizeof(double) * (size_t)tx->count), strdup(r->knobs)};
            if (!g[ng].vals || !g[ng].knobs) code = avcli_fail_system("out of memory");
            ng++;
        }
        group *gr = &g[slot[s]];
        double x = r->value && r->value[0] != '"' ? strtod(r->value, NULL) : NAN;
        if (isfinite(x)) {
            gr->vals[gr->texts++] = x;
            gr->sum += x;
            gr->min = x < gr->min ? x : gr->min;
            gr->max = x > gr->max ? x : gr->max;
        } else gr->nulls++;
        if (!listed(gr->knobs, r->knobs)) { /* another text resolved them otherwise */
            size_t kl = strlen(gr->knobs);
            char *nk = realloc(gr->knobs, kl + strlen(r->knobs) + 2);
            if (!nk) code = avcli_fail_system("out of memory");
            else sprintf(nk + kl, "|%s", r->knobs), gr->knobs = nk;
        }
    }
    if (!jsonl && !code) fputs("layer,head,variant,knobs,readout,used,nulls,mean,std,min,max,reason\n", f);
    for (int i = 0; i < ng && !code; i++) {
        const group *gr = &g[i];
        const trow *r = &t->rows[gr->first];
        double mean = gr->texts ? gr->sum / gr->texts : NAN, ss = 0;
        for (int j = 0; j < gr->texts; j++) ss += (gr->vals[j] - mean) * (gr->vals[j] - mean);
        double sd = gr->texts ? sqrt(ss / gr->texts) : NAN, st[4] = {mean, sd, gr->min, gr->max};
        char reason[640] = "";
        const char *first_reason = NULL, *mark = r->value && r->value[0] == '"' ? r->value : NULL;
        for (size_t j = gr->first; j < t->count && !first_reason; j++)
            if (same_group(&t->rows[j], r) && t->rows[j].reason) first_reason = t->rows[j].reason;
        if (mark) snprintf(reason, sizeof reason, "a mark, not a number: %s (first text)", mark);
        else if (gr->nulls) snprintf(reason, sizeof reason, "null in %d of %d texts, left out of the statistics%s%s", gr->nulls,
                                     gr->nulls + gr->texts, first_reason ? ": " : "", first_reason ? first_reason : "");
        if (jsonl) {
            fprintf(f, "{\"layer\": %d, \"head\": %d, \"variant\": \"%s\", \"knobs\": ", r->layer, r->head, id_name(r->variant));
            json_str(f, gr->knobs);
            fprintf(f, ", \"readout\": \"%s\", \"used\": %d, \"nulls\": %d", r->readout, gr->texts, gr->nulls);
            static const char *const NAMES[4] = {"mean", "std", "min", "max"};
            for (int s = 0; s < 4; s++) {
                if (gr->texts) fprintf(f, ", \"%s\": %.17g", NAMES[s], st[s]);
                else fprintf(f, ", \"%s\": null", NAMES[s]);
            }
            fputs(", \"reason\": ", f);
            json_str(f, reason[0] ? reason : NULL);
            fputs("}\n", f);
        } else {
            fprintf(f, "%d,%d,%s,", r->layer, r->head, id_name(r->variant));
            csv_field(f, gr->knobs);
            fprintf(f, ",%s,%d,%d", r->readout, gr->texts, gr->nulls);
            for (int s = 0; s < 4; s++) {
                if (gr->texts) fprintf(f, ",%.17g", st[s]);
                else fputc(',', f);
            }
            fputc(',', f);
            csv_field(f, reason);
            fputc('\n', f);
        }
    }
    for (int i = 0; i < ng; i++) { free(g[i].vals); free(g[i].knobs); }
    free(g);
    free(slot);
    return code;
}

/* A capture's tensors as .npy files the shared input reader opens by name: unlinked temporary files
 * (tmpfile) named through /proc/self/fd, which vanish with the process whatever ends it. */
static int capture_files(const avcli_capture *c, FILE *f[3], char paths[3][40]) {
    const float *data[3] = {c->Q, c->K, c->V};
    const int64_t *shape[3] = {c->shape_q, c->shape_kv, c->shape_kv};
    for (int i = 0; i < 3; i++) {
        if (!(f[i] = tmpfile())) return avcli_fail_system("a temporary file: cannot create (%s)", strerror(errno));
        if (avcli_write_npy_f32(f[i], data[i], shape[i], 4) != AV_OK || fflush(f[i]) != 0)
            return avcli_fail_system("a temporary file: cannot write (%s)", strerror(errno));
        snprintf(paths[i], 40, "/proc/self/fd/%d", fileno(f[i]));
    }
    return 0;
}

// ----------------------------------------------------------------------------------------------------
// attnviz table

int avcli_cmd_table(int argc, char **argv) {
    static const char *const OWN[] = {"--variants", "--readouts", "--format", "-o", "--model", "--tokenizer", "--text-file"};
    enum { O_VARIANTS, O_READOUTS, O_FORMAT, O_OUT, O_MODEL, O_TOKENIZER, O_TEXTS, O_COUNT };
    const char *val[O_COUNT] = {0};
    int lines = 0, summary = 0, code = 0;
    run ru = {.nvariants = 0};
    ru.rest = malloc(sizeof(char *) * (size_t)(argc + 1));
    if (!ru.rest) return avcli_fail_system("out of memory");
    for (int i = 0; i < argc && !code; i++) {
        const char *a = argv[i];
        int f = 0;
        while (f < O_COUNT && strcmp(a, OWN[f])) f++;
        if (!strcmp(a, "--lines") || !strcmp(a, "--summary")) {
            int *sw = a[2] == 'l' ? &lines : &summary;
            if (*sw) code = avcli_fail("%s: given twice", a);
            *sw = 1;
        } else if (!strcmp(a, "--variant") || !strcmp(a, "--layer") || !strcmp(a, "--head") || !strcmp(a, "--all-heads")) {
            code = avcli_fail("%s: not an option of table (it takes --variants, and every layer and head)", a);
        } else if (f < O_COUNT) {
            if (val[f]) code = avcli_fail("%s: given twice", a);
            else if (i + 1 >= argc) code = avcli_fail("%s: needs a value", a);
            else val[f] = argv[++i];
        } else {
            ru.causal |= strcmp(a, "--causal") == 0;
            ru.rest[ru.nrest++] = argv[i];
        }
    }
    char names[640];
    size_t nk = 0;
    for (int v = 0; v < AV_VARIANT_COUNT && nk < sizeof names; v++)
        nk += (size_t)snprintf(names + nk, sizeof names - nk, "%s%s", v ? ", " : "", av_variant_name(v));
    if (nk < sizeof names) snprintf(names + nk, sizeof names - nk, "; presets %s", avcli_alias_list());
    if (!code && !val[O_VARIANTS]) code = avcli_fail("--variants: required (all, or some of %s)", names);
    int alias;
    for (const char *v = val[O_VARIANTS]; !code && v;) { /* a comma list, or all (the registry's; no presets) */
        char one[64];
        size_t w = strcspn(v, ",");
        snprintf(one, sizeof one, "%.*s", (int)(w < sizeof one ? w : sizeof one - 1), v);
        if (strcmp(one, "all") == 0 && w == 3) {
            if (ru.nvariants || v[w]) code = avcli_fail("--variants all: all alone, or a list of names");
            for (int k = 0; k < AV_VARIANT_COUNT && !code; k++) ru.variants[ru.nvariants++] = k;
        }
        else if (w >= sizeof one || avcli_variant_lookup(one, &alias) < 0)
            code = avcli_fail("--variants %s: unknown variant (all, or some of %s)", avcli_brief(w >= sizeof one ? v : one), names);
        else {
            int id = avcli_variant_lookup(one, &alias) + AV_VARIANT_COUNT * alias, twice = 0;
            for (int j = 0; j < ru.nvariants; j++) twice |= ru.variants[j] == id;
            if (twice) code = avcli_fail("--variants %s: given twice", one); /* a head's rows once each */
            else ru.variants[ru.nvariants++] = id;
        }
        v = v[w] ? v + w + 1 : NULL;
    }
    for (int i = 0; !code && i < ru.nrest; i++) { /* each gated input goes to the variants that read it: one must */
        int gf = gate_flag(ru.rest[i]), reads = 0;
        for (int j = 0; gf >= 0 && j < ru.nvariants; j++)
            reads |= avcli_gate_flag_read(id_family(ru.variants[j]), id_alias(ru.variants[j]), gf);
        if (gf >= 0 && !reads) code = avcli_fail("%s: no variant of --variants reads it", ru.rest[i]);
        else if (gf >= 0 && (val[O_TEXTS] || val[O_MODEL]))
            code = avcli_fail("%s: not with --text-file (each text has its own length n; table the captures one by one)", ru.rest[i]);
    }
    char *rlist = val[O_READOUTS] ? strdup(val[O_READOUTS]) : NULL;
    if (!code && val[O_READOUTS]) {
        ru.readouts = rlist ? malloc(sizeof(char *) * (strlen(rlist) + 1)) : NULL;
        if (!ru.readouts) code = avcli_fail_system("out of memory");
        for (char *p = rlist; !code && p;) {
            char *comma = strchr(p, ',');
            if (comma) *comma = 0;
            if (!*p) code = avcli_fail("--readouts: readout %d is empty (KEY1,KEY2,...)", ru.nreadouts + 1);
            for (int j = 0; j < ru.nreadouts && !code; j++)
                if (strcmp(ru.readouts[j], p) == 0) code = avcli_fail("--readouts %s: given twice", avcli_brief(p));
            ru.readouts[ru.nreadouts++] = p;
            p = comma ? comma + 1 : NULL;
        }
    }
    int jsonl = 0;
    if (!code && val[O_FORMAT] && !(jsonl = strcmp(val[O_FORMAT], "jsonl") == 0) && strcmp(val[O_FORMAT], "csv"))
        code = avcli_fail("--format %s: not csv or jsonl", avcli_brief(val[O_FORMAT]));
    const char *q = flag_value(ru.nrest, ru.rest, "--q"), *k = flag_value(ru.nrest, ru.rest, "--k"), *v = flag_value(ru.nrest, ru.rest, "--v");
    int corpus = val[O_TEXTS] || val[O_MODEL] || val[O_TOKENIZER];
    if (!code && corpus && (q || k || v)) code = avcli_fail("%s: the texts' captures are the inputs; drop --q, --k and --v", q ? "--q" : k ? "--k" : "--v");
    if (!code && corpus && !val[O_TEXTS]) code = avcli_fail("--text-file: required with --model (a .txt file, a folder of them)");
    if (!code && corpus && !val[O_MODEL]) code = avcli_fail("--model: required with --text-file");
    if (!code && corpus && !val[O_TOKENIZER] && !avcli_is_dir(val[O_MODEL]))
        code = avcli_fail("--tokenizer: required with a llama2.c checkpoint (a Hugging Face folder has its tokenizer.json)");
    if (!code && !corpus && (lines || summary)) code = avcli_fail("%s: needs --text-file (it is about several texts)", lines ? "--lines" : "--summary");
    if (!code && !corpus && !q) code = avcli_fail("--q: required (Q.npy), or --model, --tokenizer and --text-file");
    if (!code && !corpus && !k) code = avcli_fail("--k: required (K.npy)");
    if (!code && val[O_OUT]) code = avcli_out_check("-o", val[O_OUT]);
    /* --q, --k, --v go in by table_of; the rest stay */
    int kept = 0;
    for (int i = 0; i < ru.nrest; i++) {
        const char *a = ru.rest[i];
        if ((!strcmp(a, "--q") || !strcmp(a, "--k") || !strcmp(a, "--v")) && i + 1 < ru.nrest) { i++; continue; }
        ru.rest[kept++] = ru.rest[i];
    }
    ru.nrest = kept;
    table t = {0};
    texts tx = {0};
    avcli_model *model = NULL;
    if (!code && !corpus) code = table_of(&t, &ru, q, k, v, -1, NULL);
    if (!code && corpus && !(code = avcli_read_texts(&tx, val[O_TEXTS], lines))) code = avcli_model_open(&model, val[O_MODEL], val[O_TOKENIZER]);
    for (int i = 0; corpus && !code && i < tx.count; i++) {
        char what[96];
        snprintf(what, sizeof what, "--text-file %s%s", tx.lines ? "line " : "", avcli_brief(tx.name[i]));
        avcli_capture c;
        FILE *f[3] = {0};
        char paths[3][40];
        if (!(code = avcli_model_capture(model, tx.body[i], what, &c)) && !(code = capture_files(&c, f, paths)))
            code = table_of(&t, &ru, paths[0], paths[1], paths[2], i, tx.name[i]);
        avcli_capture_free(&c);
        for (int j = 0; j < 3; j++)
            if (f[j]) fclose(f[j]);
    }
    avcli_model_close(model);
    if (!code) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) code = avcli_fail_system("out of memory");
        else {
            if (summary) code = write_summary(f, &t, &tx, jsonl);
            else write_rows(f, &t, corpus ? &tx : NULL, jsonl);
            if (fclose(f) != 0 && !code) code = avcli_fail_system("out of memory");
        }
        if (!code) code = put_output(val[O_OUT], text, len);
        free(text);
    }
    free_table(&t);
    avcli_free_texts(&tx);
    free(ru.readouts);
    free(rlist);
    free(ru.rest);
    return code;
}
