/* registry.c: the registry as JSON (av_registry_json), the one description of the library the JS loader
 * reads: every variant and knob (variants.c), every readout (readouts.c), the limits and the status codes.
 * Built once into static storage. The variants' and knobs' strings are plain ASCII without quotes or
 * backslashes (the registry test checks them); a readout's label and explanation are UTF-8, escaped here.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

typedef struct { char *p; size_t left; int ok; } jbuf;

static void jput(jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jput(jbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p, b->left, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= b->left) { b->ok = 0; b->left = 0; return; }
    b->p += k;
    b->left -= (size_t)k;
}

static const char *jbool(int x) { return x ? "true" : "false"; }

static void json_variant(jbuf *b, const av_variant_desc *v) {
    static const char *const CLASS[] = {"exact", "kernel", "closed_form", "lowrank", "retention", "delta", "gated", "hybrid"};
    static const char *const NORM[] = {"exact", "sum", "add", "add_n", "clamp", "none"};
    jput(b, "{\"name\":\"%s\",\"label\":\"%s\",\"formula\":\"%s\",\"source\":\"%s\",\"class\":\"%s\",", v->name,
         v->label, v->formula, v->source, CLASS[v->cls]);
    jput(b, "\"causal\":%s,\"linear\":%s,\"recurrent\":%s,\"factors\":%s,\"scaled\":%s,\"weights\":%s,",
         jbool(v->flags & AV_VF_CAUSAL), jbool(v->flags & AV_VF_LINEAR), jbool(v->flags & AV_VF_RECURRENT),
         jbool(v->flags & AV_VF_FACTORS), jbool(v->flags & AV_VF_SCALED), jbool(v->flags & AV_VF_WEIGHTS));
    jput(b, "\"chunkwise\":%s,\"causal_only\":%s,", jbool(v->flags & AV_VF_CHUNKWISE), jbool(v->flags & AV_VF_CAUSAL_ONLY));
    jput(b, "\"norm\":\"%s\",\"eps\":%.17g,\"knobs\":[", NORM[v->norm], v->eps);
    for (int i = 0; i < v->knob_count; i++) jput(b, "%s\"%s\"", i ? "," : "", av_knob_info(v->knobs[i])->key);
    jput(b, "],\"defaults\":{");
    for (int i = 0, first = 1; i < v->knob_count; i++) {
        if (v->defaults[i] == 0) continue;
        jput(b, "%s\"%s\":%.17g", first ? "" : ",", av_knob_info(v->knobs[i])->key, v->defaults[i]);
        first = 0;
    }
    jput(b, "}}");
}

static void json_knob(jbuf *b, const av_knob_desc *k) {
    static const char *const TYPE[] = {"real", "int", "bool", "enum"};
    unsigned f = k->flags;
    const char *hi_rule = f & AV_KF_HI_N ? "n" : f & AV_KF_HI_2N ? "2n-1" : "fixed";
    const char *def_rule = f & AV_KF_DEF_MIN_N ? "min_n" : f & AV_KF_DEF_RSQRT_D ? "rsqrt_d" : "fixed";
    jput(b, "{\"key\":\"%s\",\"flag\":\"%s\",\"type\":\"%s\",\"lo\":%.17g,\"hi\":%.17g,\"hi_rule\":\"%s\",", k->key,
         k->flag, TYPE[k->type], k->lo, k->hi, hi_rule);
    jput(b, "\"def\":%.17g,\"def_rule\":\"%s\",\"zero_default\":%s,\"minus1_zero\":%s,\"odd\":%s,\"no_causal\":%s,",
         k->def, def_rule, jbool(f & AV_KF_ZERO_DEFAULT), jbool(f & AV_KF_MINUS1_ZERO), jbool(f & AV_KF_ODD),
         jbool(f & AV_KF_NO_CAUSAL));
    jput(b, "\"needs_causal\":%s,", jbool(f & AV_KF_NEEDS_CAUSAL));
    jput(b, "\"step\":%.17g,", k->step);
    jput(b, "\"options\":");
    if (!k->options) jput(b, "null");
    else {
        jput(b, "[\"");
        for (const char *c = k->options; *c; c++) jput(b, *c == '|' ? "\",\"" : "%c", *c);
        jput(b, "\"]");
    }
    jput(b, ",\"meaning\":\"%s\"}", k->meaning);
}

/* s as a JSON string: quotes, backslashes and control characters escaped; UTF-8 passes as it is. */
static void jput_string(jbuf *b, const char *s) {
    jput(b, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') jput(b, "\\%c", *c);
        else if (*c < 0x20) jput(b, "\\u%04x", *c);
        else jput(b, "%c", *c);
    }
    jput(b, "\"");
}

static void json_readout(jbuf *b, const av_readout_desc *r, int index) {
    static const char *const KIND[] = {"entry", "spectral", "comparison"};
    static const char *const FORMAT[] = {"real", "integer", "fraction"};
    jput(b, "%s{\"key\":\"%s\",\"label\":", index ? "," : "", r->key);
    jput_string(b, r->label);
    jput(b, ",\"kind\":\"%s\",\"format\":\"%s\",\"display\":%d,\"sweep\":%d,\"explain\":", KIND[r->kind],
         FORMAT[r->format], r->display, r->sweep);
    jput_string(b, r->explain);
    jput(b, "}");
}

const char *av_registry_json(void) {
    static char text[32768];
    static int built = 0;
    if (built) return text;
    jbuf b = {text, sizeof text, 1};
    jput(&b, "{\"variants\":[");
    for (int v = 0; v < AV_VARIANT_COUNT; v++) {
        if (v) jput(&b, ",");
        json_variant(&b, av_variant_info(v));
    }
    jput(&b, "],\"knobs\":[");
    for (int k = AV_KNOB_VARIANT + 1; k < AV_KNOB_COUNT; k++) {
        if (k > AV_KNOB_VARIANT + 1) jput(&b, ",");
        json_knob(&b, av_knob_info(k));
    }
    jput(&b, "],\"readouts\":[");
    for (int r = 0; r < AV_R_COUNT; r++) json_readout(&b, av_readout_info(r), r);
    jput(&b, "],\"limits\":{\"max_n\":%d,\"max_d\":%d,\"max_feature_dim\":%d},\"status\":{", AV_MAX_N, AV_MAX_D,
         AV_MAX_FEATURE_DIM);
    for (int st = AV_STATUS_MIN, first = 1; st <= AV_STATUS_MAX; st++) {
        const char *name = avi_status_name(st);
        if (!name) continue;
        jput(&b, "%s\"%s\":%d", first ? "" : ",", name, st);
        first = 0;
    }
    jput(&b, "}}");
    if (!b.ok) snprintf(text, sizeof text, "{\"error\":\"the registry does not fit its buffer\"}");
    built = 1;
    return text;
}
