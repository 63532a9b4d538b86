/* sweep_cmd.c: `attnviz sweep`, its flags (docs/readouts.md#sweeps-attnviz-sweep); the readouts it
 * computes are readouts_cmd.c's.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int sweep_json(const avcli_inputs *in, const void *ctx, FILE *out) { return avcli_cmd_sweep(in, ctx, out); }

/* One value of knob kd from text: an option name or its index, 0/1 for switches, or a number by the flags'
 * rules (avcli_knob_number). */
static int parse_knob_value(const av_knob_desc *kd, const char *text, double *v) {
    if (kd->type == AV_KT_ENUM) {
        int idx = 0;
        size_t len = strlen(text);
        for (const char *o = kd->options; o && *o; idx++) {
            size_t w = strcspn(o, "|");
            if (w == len && strncmp(o, text, len) == 0) { *v = idx; return 1; }
            o = o[w] ? o + w + 1 : NULL;
        }
    }
    if (kd->type == AV_KT_ENUM || kd->type == AV_KT_BOOL) {
        long long iv;
        if (!avcli_parse_long(text, 0, (long long)kd->hi, &iv)) return 0;
        *v = (double)iv;
        if (kd->type == AV_KT_BOOL && (kd->flags & AV_KF_MINUS1_ZERO) && iv == 0) *v = -1; /* off, not the default */
        return 1;
    }
    return avcli_knob_number(kd, text, v); /* the flags' rules; −1 stands for a typed 0 where the knob has one */
}

/* The readouts asked for into sw: --readouts KEY,KEY,… (or all: every readout) or each --readout KEY;
 * several, or --readouts at all, ask for the several-readout shape. 0, or one line and 2. */
static int readout_list(avcli_sweep *sw, const char *list, const char **given, int ngiven) {
    const char *flag = list ? "--readouts" : "--readout";
    if (list && strcmp(list, "all") == 0) {
        for (int r = 0; r < AV_R_COUNT; r++) sw->readout[r] = r;
        sw->nreadouts = AV_R_COUNT;
        sw->multi = 1;
        return 0;
    }
    if (list && !*list) return avcli_fail("--readouts: an empty list (KEY,KEY,... or all)");
    int count = 0;
    for (const char *v = list; v || count < ngiven;) { /* the list's items, or the --readout values */
        char one[64];
        const char *item = list ? v : given[count];
        size_t w = list ? strcspn(v, ",") : strlen(item);
        int pos = count + 1, r = -1;
        snprintf(one, sizeof one, "%.*s", (int)(w < sizeof one ? w : sizeof one - 1), item);
        if (list && w == 0) return avcli_fail("--readouts: readout %d is empty (KEY,KEY,... or all)", pos);
        for (int k = 0; k < AV_R_COUNT && w < sizeof one; k++)
            if (strcmp(av_readout_name(k), one) == 0) r = k;
        if (r < 0 && list) return avcli_fail("--readouts: readout %d \"%s\" is not a key of attnviz readouts", pos, avcli_brief(one));
        if (r < 0) return avcli_fail("--readout %s: unknown readout (a key of attnviz readouts)", avcli_brief(one));
        for (int k = 0; k < count; k++)
            if (sw->readout[k] == r) return avcli_fail("%s: %s given twice", flag, av_readout_name(r));
        if (count == AV_R_COUNT) return avcli_fail("%s: more than %d readouts", flag, AV_R_COUNT);
        sw->readout[count++] = r;
        if (list) v = v[w] ? v + w + 1 : NULL;
    }
    if (count) sw->nreadouts = count;
    sw->multi = list || count > 1;
    return 0;
}

typedef struct text_out { const char *text; size_t len; } text_out;
static int write_text(FILE *f, const void *ctx) {
    const text_out *t = ctx;
    return fwrite(t->text, 1, t->len, f) == t->len ? AV_OK : AV_ERR_IO;
}

/* --all-heads: the sweep of every layer and head of 4-D model tensors, as {"layers", "heads", "kv_heads",
 * "n", "sweeps": [[one object per head] per layer]}, each object what `--layer L --head H` prints, with
 * "layer" and "head" first. Every head is computed before anything is printed or written. */
static int all_heads(avcli_sweep *sw, int argc, char **argv) {
    const char *q = NULL, *k = NULL, *out = NULL;
    char **rest = malloc(sizeof(char *) * (size_t)(argc + 4));
    int nrest = 0, code = 0;
    if (!rest) return avcli_fail_system("out of memory");
    for (int i = 0; i < argc && !code; i++) {
        if (strcmp(argv[i], "--layer") == 0 || strcmp(argv[i], "--head") == 0)
            code = avcli_fail("%s: --all-heads takes every layer and head; drop %s", argv[i], argv[i]);
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
        else {
            if (strcmp(argv[i], "--q") == 0 && i + 1 < argc) q = argv[i + 1];
            if (strcmp(argv[i], "--k") == 0 && i + 1 < argc) k = argv[i + 1];
            rest[nrest++] = argv[i];
        }
    }
    av_npy_info qi, ki;
    if (!code && out) code = avcli_out_check("-o", out);
    if (!code) code = q ? avcli_npy_shape(&qi, "--q", q) : avcli_fail("--q: required (Q.npy)");
    if (!code && qi.ndim != 4) code = avcli_fail("--all-heads: --q %s is not a model's (layers, heads, n, d) tensor", q);
    if (!code) code = k ? avcli_npy_shape(&ki, "--k", k) : avcli_fail("--k: required (K.npy)");
    if (!code && ki.ndim != 4) code = avcli_fail("--all-heads: --k %s is not a model's (layers, kv_heads, n, d) tensor", k);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = code ? NULL : open_memstream(&text, &len);
    if (!code && !mem) code = avcli_fail_system("out of memory");
    char lb[24], hb[24];
    rest[nrest] = "--layer", rest[nrest + 1] = lb, rest[nrest + 2] = "--head", rest[nrest + 3] = hb;
    for (int64_t l = 0; !code && l < qi.shape[0]; l++) {
        fprintf(mem, "%s\n    [", l ? "," : "");
        for (int64_t h = 0; !code && h < qi.shape[1]; h++) {
            snprintf(lb, sizeof lb, "%lld", (long long)l);
            snprintf(hb, sizeof hb, "%lld", (long long)h);
            avcli_inputs in;
            if ((code = avcli_parse_inputs(&in, nrest + 4, rest)) != 0) break;
            sw->layer = (int)l, sw->head = (int)h;
            if (h) fputs(", ", mem);
            code = avcli_cmd_sweep(&in, sw, mem);
            avcli_free(&in);
        }
        fputs("]", mem);
    }
    if (mem) fclose(mem);
    char *all = NULL;
    size_t all_len = 0;
    if (!code) {
        FILE *f = open_memstream(&all, &all_len);
        if (!f) code = avcli_fail_system("out of memory");
        else {
            fprintf(f, "{\n  \"layers\": %lld, \"heads\": %lld, \"kv_heads\": %lld, \"n\": %lld,\n  \"sweeps\": [%s\n  ]\n}\n",
                    (long long)qi.shape[0], (long long)qi.shape[1], (long long)ki.shape[1], (long long)qi.shape[2], text);
            fclose(f);
        }
    }
    if (!code && !out) fwrite(all, 1, all_len, stdout); /* main checks that stdout was written */
    if (!code && out) {
        text_out t = {all, all_len};
        avcli_file file = {"-o", out, NULL, {0}, 0, write_text, &t};
        code = avcli_save(&file, 1);
    }
    free(all); free(text); free(rest);
    return code;
}

int avcli_cmd_sweep_main(int argc, char **argv) {
    const char *knob = NULL, *values = NULL, *seeds = NULL, *list = NULL, **mine[4] = {&knob, &values, &seeds, &list};
    const char *names[4] = {"--knob", "--values", "--seeds", "--readouts"};
    const char *given[AV_R_COUNT + 1]; /* each --readout KEY, in order (repeatable) */
    char **rest = malloc(sizeof(char *) * (size_t)(argc + 1));
    int nrest = 0, code = 0, ngiven = 0, every = 0;
    if (!rest) return avcli_fail_system("out of memory");
    for (int i = 0; i < argc && !code; i++) { /* the sweep's own flags; the rest are the shared ones */
        int f = 0;
        while (f < 4 && strcmp(argv[i], names[f])) f++;
        if (strcmp(argv[i], "--all-heads") == 0) {
            if (every) code = avcli_fail("--all-heads: given twice");
            every = 1;
        } else if (strcmp(argv[i], "--readout") == 0) {
            if (i + 1 >= argc) code = avcli_fail("--readout: needs a value");
            else if (ngiven == AV_R_COUNT) code = avcli_fail("--readout: given more than %d times", AV_R_COUNT);
            else given[ngiven++] = argv[++i];
        } else if (f == 4) {
            rest[nrest++] = argv[i];
        } else if (*mine[f]) code = avcli_fail("%s: given twice", names[f]);
        else if (i + 1 >= argc) code = avcli_fail("%s: needs a value", names[f]);
        else *mine[f] = argv[++i];
    }
    avcli_sweep sw = {.knob = -1, .count = 0, .seeds = 1, .readout = {AV_R_ERROR_FRO_REL}, .nreadouts = 1, .layer = -1, .head = -1};
    if (!code && !knob) code = avcli_fail("--knob: required (a knob key such as p, s, m, order, N, landmarks)");
    for (int k = AV_KNOB_VARIANT + 1; !code && k < AV_KNOB_COUNT; k++)
        if (strcmp(av_knob_info(k)->key, knob) == 0 || strcmp(av_knob_info(k)->flag, knob) == 0) sw.knob = k;
    if (!code && (sw.knob < 0 || sw.knob == AV_KNOB_CAUSAL || sw.knob == AV_KNOB_SCALE))
        code = avcli_fail("--knob %s: not a variant knob (see the knobs in attnviz --help)", avcli_brief(knob));
    const char *vname = NULL;
    for (int i = 0; !code && i < argc - 1; i++)
        if (strcmp(argv[i], "--variant") == 0) vname = argv[i + 1];
    int variant = vname ? av_variant_from_name(vname) : -1, reads = 0;
    for (int i = 0; !code && variant >= 0 && i < av_variant_info(variant)->knob_count; i++)
        reads |= av_variant_info(variant)->knobs[i] == sw.knob;
    if (!code && variant >= 0 && !reads) code = avcli_fail("--knob %s: %s does not read it", knob, vname);
    for (int i = 0; !code && i < argc; i++) /* an array replaces its constant knob: nothing would change */
        if ((sw.knob == AV_KNOB_DECAY && (!strcmp(argv[i], "--gates") || !strcmp(argv[i], "--dt"))) ||
            (sw.knob == AV_KNOB_BETA && !strcmp(argv[i], "--betas")))
            code = avcli_fail("--knob %s: %s replaces it (the constant case is without the array)", knob, argv[i]);
    if (!code && !values) code = avcli_fail("--values: required (V1,V2,...)");
    if (!code && !*values) code = avcli_fail("--values: an empty list (V1,V2,...)");
    /* comma-separated values ("2," has an empty one); a bad one is named by its position and itself, cut
     * short, never by the whole list */
    for (const char *v = values; !code && v;) {
        char one[64];
        size_t w = strcspn(v, ",");
        int pos = sw.count + 1;
        if (w == 0) { code = avcli_fail("--values: value %d is empty (V1,V2,...)", pos); break; }
        if (sw.count == AVCLI_MAX_SWEEP) { code = avcli_fail("--values: more than %d values", AVCLI_MAX_SWEEP); break; }
        memcpy(one, v, w < sizeof one ? w : sizeof one - 1);
        one[w < sizeof one ? w : sizeof one - 1] = 0;
        if (w >= sizeof one) code = avcli_fail("--values: value %d \"%s\" is longer than %zu characters", pos, avcli_brief(one), sizeof one - 1);
        else if (!parse_knob_value(av_knob_info(sw.knob), one, &sw.values[sw.count++]))
            code = avcli_fail("--values: value %d \"%s\" is not a value of %s", pos, avcli_brief(one), av_knob_info(sw.knob)->flag);
        v = v[w] ? v + w + 1 : NULL;
    }
    long long ns = 1;
    if (!code && seeds && !avcli_parse_long(seeds, 1, 10000, &ns)) code = avcli_fail("--seeds %s: not an integer in 1..10000", avcli_brief(seeds));
    sw.seeds = (int)ns;
    for (int i = 0; !code && i < sw.count; i++) /* seeds value + s, or --seed + s, stay in uint32 */
        if (sw.knob == AV_KNOB_SEED && sw.values[i] + (double)ns - 1 > 4294967295.0)
            code = avcli_fail("--values: value %d \"%.10g\": with --seeds %lld the seeds pass 4294967295", i + 1, sw.values[i], ns);
    if (!code && list && ngiven) code = avcli_fail("--readouts: not with --readout (give one list, or --readout once per key)");
    if (!code) code = readout_list(&sw, list, given, ngiven);
    avcli_inputs in;
    if (!code && every) code = all_heads(&sw, nrest, rest);
    else if (!code && (code = avcli_parse_inputs(&in, nrest, rest)) == 0) {
        code = avcli_emit_json(&in, sweep_json, &sw);
        avcli_free(&in);
    }
    free(rest);
    return code;
}
