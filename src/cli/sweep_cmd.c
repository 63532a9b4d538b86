/* sweep_cmd.c: `attnviz sweep`, its flags (docs/readouts.md#sweeps-attnviz-sweep); the readouts it
 * computes are readouts_cmd.c's.
 */
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
        return 1;
    }
    return avcli_knob_number(kd, text, v); /* the flags' rules; −1 stands for a typed 0 where the knob has one */
}

int avcli_cmd_sweep_main(int argc, char **argv) {
    const char *knob = NULL, *values = NULL, *seeds = NULL, *readout = NULL, **mine[4] = {&knob, &values, &seeds, &readout};
    const char *names[4] = {"--knob", "--values", "--seeds", "--readout"};
    char **rest = malloc(sizeof(char *) * (size_t)(argc + 1));
    int nrest = 0, code = 0;
    if (!rest) return avcli_fail_system("out of memory");
    for (int i = 0; i < argc && !code; i++) { /* the sweep's own flags; the rest are the shared ones */
        int f = 0;
        while (f < 4 && strcmp(argv[i], names[f])) f++;
        if (f == 4) { rest[nrest++] = argv[i]; continue; }
        if (*mine[f]) code = avcli_fail("%s: given twice", names[f]);
        else if (i + 1 >= argc) code = avcli_fail("%s: needs a value", names[f]);
        else *mine[f] = argv[++i];
    }
    avcli_sweep sw = {.knob = -1, .count = 0, .seeds = 1, .readout = AV_R_ERROR_FRO_REL};
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
    if (!code && readout) {
        sw.readout = -1;
        for (int r = 0; r < AV_R_COUNT; r++)
            if (strcmp(av_readout_name(r), readout) == 0) sw.readout = r;
        if (sw.readout < 0) code = avcli_fail("--readout %s: unknown readout (a key of attnviz readouts)", avcli_brief(readout));
    }
    avcli_inputs in;
    if (!code && (code = avcli_parse_inputs(&in, nrest, rest)) == 0) {
        code = avcli_emit_json(&in, sweep_json, &sw);
        avcli_free(&in);
    }
    free(rest);
    return code;
}
