/* gated_inputs.c: the gated families' arrays on the command line (docs/gated.md): --gates, --betas, --a, --b, and the
 * presets mamba2 (--dt, --A) and rwkv7 (--a-icl, --a-icl-file). Which variant reads which flag, each array's
 * shape against Q's and its values, each refused with one sentence before anything is computed; then the
 * presets' mapped inputs, and the arrays handed to the library (av_params_set_gates, av_params_set_dplr).
 * It calls output.c and the library; inputs.c and the commands call it.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *const AVCLI_GATE_FLAGS[AVCLI_G_COUNT] = {"--gates", "--betas", "--a", "--b", "--dt", "--A", "--a-icl",
                                                     "--a-icl-file"};

static const struct { const char *name; int family; } ALIASES[AVCLI_ALIAS_COUNT] = {
    [AVCLI_MAMBA2] = {"mamba2", AV_SIMPLE_GLA}, [AVCLI_RWKV7] = {"rwkv7", AV_DPLR}};

int avcli_variant_lookup(const char *name, int *alias) {
    *alias = AVCLI_NO_ALIAS;
    for (int a = 1; a < AVCLI_ALIAS_COUNT; a++)
        if (strcmp(name, ALIASES[a].name) == 0) return *alias = a, ALIASES[a].family;
    return av_variant_from_name(name);
}

const char *avcli_variant_label(int variant, int alias) {
    return alias > 0 && alias < AVCLI_ALIAS_COUNT ? ALIASES[alias].name : av_variant_name(variant);
}

const char *avcli_alias_list(void) { return "mamba2, rwkv7"; }

static int is_gated(int v) { return v >= 0 && v < AV_VARIANT_COUNT && av_variant_info(v)->cls == AV_CLASS_GATED; }
/* The families whose gate may be one per channel (docs/gated.md): gla, kda, dplr; the others take one per token. */
static int per_channel(int v) { return v == AV_GLA || v == AV_KDA || v == AV_DPLR; }

int avcli_gate_flag_read(int variant, int alias, int f) {
    switch (f) {
    case AVCLI_G_GATES: return is_gated(variant);
    case AVCLI_G_BETAS: return variant == AV_GDN || variant == AV_KDA;
    case AVCLI_G_A: case AVCLI_G_B: return variant == AV_DPLR;
    case AVCLI_G_DT: case AVCLI_G_AMAMBA: return alias == AVCLI_MAMBA2;
    default: return alias == AVCLI_RWKV7;
    }
}

/* Who reads flag f, for the refusal of a variant that does not. */
static const char *readers(int f) {
    static const char *const WHO[AVCLI_G_COUNT] = {
        "the gated families: simple_gla, gla, gdn, kda, dplr, fox, and the presets mamba2, rwkv7", "gdn and kda",
        "dplr and rwkv7", "dplr and rwkv7", "the preset mamba2", "the preset mamba2", "the preset rwkv7", "the preset rwkv7"};
    return WHO[f];
}

int avcli_gates_flags_check(const char *const *flag, int variant, int alias) {
    const char *name = avcli_variant_label(variant, alias);
    for (int f = 0; f < AVCLI_G_COUNT; f++)
        if (flag[f] && !avcli_gate_flag_read(variant, alias, f))
            return avcli_fail("%s: %s does not read it (read by %s)", AVCLI_GATE_FLAGS[f], name, readers(f));
    if (!flag[AVCLI_G_A] != !flag[AVCLI_G_B]) /* dplr's read and write vectors come in pairs */
        return avcli_fail("%s: needs %s too (dplr's read vectors a and write vectors b, both (n, d))",
                          flag[AVCLI_G_A] ? "--a" : "--b", flag[AVCLI_G_A] ? "--b" : "--a");
    if (!flag[AVCLI_G_DT] != !flag[AVCLI_G_AMAMBA])
        return avcli_fail("%s: needs %s too (mamba2's gates are g = A*dt)", flag[AVCLI_G_DT] ? "--dt" : "--A",
                          flag[AVCLI_G_DT] ? "--A X (a number < 0)" : "--dt DT.npy (the step sizes, (n,))");
    if (flag[AVCLI_G_DT] && flag[AVCLI_G_GATES])
        return avcli_fail("--gates: not with --dt and --A (mamba2's gates are then g = A*dt)");
    if (flag[AVCLI_G_AICL] && flag[AVCLI_G_AICL_FILE])
        return avcli_fail("--a-icl: not with --a-icl-file (one in-context learning rate: a constant or an array)");
    if ((flag[AVCLI_G_AICL] || flag[AVCLI_G_AICL_FILE]) && flag[AVCLI_G_A])
        return avcli_fail("%s: not with --a and --b (a_icl only builds rwkv7's a and b when they are not given)",
                          flag[AVCLI_G_AICL] ? "--a-icl" : "--a-icl-file");
    double x;
    if (flag[AVCLI_G_AMAMBA] && !(avcli_parse_double(flag[AVCLI_G_AMAMBA], &x) && x < 0))
        return avcli_fail("--A %s: not a number < 0 (Mamba-2's A; the gates are g = A*dt <= 0)", avcli_brief(flag[AVCLI_G_AMAMBA]));
    if (flag[AVCLI_G_AICL] && !(avcli_parse_double(flag[AVCLI_G_AICL], &x) && x > 0 && x <= 1))
        return avcli_fail("--a-icl %s: not a number in (0, 1] (RWKV-7's in-context learning rate)", avcli_brief(flag[AVCLI_G_AICL]));
    return 0;
}

// ----------------------------------------------------------------------------------------------------
// the arrays: shapes and values

/* What an array holds per token: one value (betas, dt), a gate (one value or one per channel), d values (a, b,
 * a_icl). */
enum { ONE, GATE, ROW };

typedef struct array {
    const char *flag, *path;
    av_npy_info info;
    float *data;    /* the whole file */
    float *x;       /* the selected n × cols slice (malloc'd, owned by the caller once taken) */
    int cols, lead; /* 1 or d; 2 when the file is per head, (L, H, ...) in front */
} array;

static void shape_text(char *out, size_t cap, const int64_t *shape, int ndim) {
    size_t k = (size_t)snprintf(out, cap, "(");
    for (int i = 0; i < ndim && k < cap; i++) k += (size_t)snprintf(out + k, cap - k, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (k < cap) snprintf(out + k, cap - k, ndim == 1 ? ",)" : ")");
}

/* The shapes an array may have, in words ("(8,) or (8, 1)", and per head "(2, 4, 8)"). */
static void expected_text(char *out, size_t cap, int kind, int chan, const avcli_geom *g) {
    char tail[3][48];
    int count = 0;
    if (kind != ROW) snprintf(tail[count++], sizeof tail[0], "%d", g->n);
    if (kind == GATE) snprintf(tail[count++], sizeof tail[0], "%d, 1", g->n);
    if (kind == ROW || (kind == GATE && chan && g->d > 1)) snprintf(tail[count++], sizeof tail[0], "%d, %d", g->n, g->d);
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < count && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s(%s%s)", i == 0 ? "" : i == count - 1 ? " or " : ", ", tail[i],
                              strchr(tail[i], ',') ? "" : ",");
    if (g->four && k < cap) {
        k += (size_t)snprintf(out + k, cap - k, "; per head ");
        for (int i = 0; i < count && k < cap; i++)
            k += (size_t)snprintf(out + k, cap - k, "%s(%lld, %lld, %s)", i == 0 ? "" : i == count - 1 ? " or " : ", ",
                                  (long long)g->L, (long long)g->H, tail[i]);
    }
}

/* Read a->path and take the selected head's n × cols slice into a->x. kind: ONE, GATE (chan: the family may
 * take one gate per channel), ROW. 0, or one line and the exit status. */
static int load(array *a, int kind, int chan, const char *family, const avcli_geom *g) {
    int code = avcli_npy_load(&a->info, &a->data, a->flag, a->path);
    if (code) return code;
    const av_npy_info *in = &a->info;
    a->lead = g->four && in->ndim >= 3 && in->shape[0] == g->L && in->shape[1] == g->H ? 2 : 0;
    int tail = in->ndim - a->lead;
    const int64_t *s = in->shape + a->lead;
    a->cols = 0;
    if (tail >= 1 && tail <= 2 && s[0] == g->n) {
        if (tail == 1 && kind != ROW) a->cols = 1;
        else if (tail == 2 && kind == GATE && s[1] == 1) a->cols = 1; /* (n, 1): one gate per token */
        else if (tail == 2 && kind != ONE && s[1] == g->d && (kind == ROW || chan)) a->cols = g->d;
    }
    char got[160], want[256];
    shape_text(got, sizeof got, in->shape, in->ndim);
    if (!a->cols && kind == GATE && !chan && tail == 2 && s[0] == g->n && s[1] == g->d) {
        expected_text(want, sizeof want, kind, chan, g);
        return avcli_fail("%s %s: shape %s gives one gate per channel, but %s has one gate per token: %s", a->flag, a->path,
                          got, family, want);
    }
    if (!a->cols) {
        expected_text(want, sizeof want, kind, chan, g);
        return avcli_fail("%s %s: shape %s does not fit n = %d, d = %d (expected %s)", a->flag, a->path, got, g->n, g->d, want);
    }
    size_t count = (size_t)g->n * a->cols, off = a->lead ? ((size_t)g->layer * g->H + g->head) * count : 0;
    if (!(a->x = malloc(sizeof(float) * count))) return avcli_fail_system("%s %s: out of memory", a->flag, a->path);
    memcpy(a->x, a->data + off, sizeof(float) * count);
    return 0;
}

/* The index in the file of the slice's entry e ("[5]", "[5, 2]", "[1, 3, 5, 0]"). */
static void index_text(char *out, size_t cap, const array *a, size_t e, const avcli_geom *g) {
    size_t t = e / (size_t)a->cols, c = e % (size_t)a->cols;
    size_t k = a->lead ? (size_t)snprintf(out, cap, "[%d, %d, ", g->layer, g->head) : (size_t)snprintf(out, cap, "[");
    if (a->info.ndim - a->lead == 2) snprintf(out + k, cap - k, "%zu, %zu]", t, c);
    else snprintf(out + k, cap - k, "%zu]", t);
}

/* Every entry of the slice finite and inside (lo, hi] (lo_open) or [lo, hi]: else the first that is not, by
 * its index and value, and what the range means. */
static int check_values(const array *a, double lo, int lo_open, double hi, const char *range, const avcli_geom *g) {
    size_t count = (size_t)g->n * a->cols;
    for (size_t e = 0; e < count; e++) {
        double x = a->x[e];
        if (isfinite(x) && (lo_open ? x > lo : x >= lo) && x <= hi) continue;
        char at[96];
        index_text(at, sizeof at, a, e, g);
        return avcli_fail("%s %s: entry %s is %.9g, %s (%s)", a->flag, a->path, at, x,
                          isfinite(x) ? "out of range" : "not finite", range);
    }
    return 0;
}

static void drop(array *a) {
    free(a->data);
    free(a->x);
    a->data = a->x = NULL;
}

int avcli_gates_load(avcli_inputs *in, const char *const *flag, const avcli_geom *g) {
    int v = in->prm.variant, code = 0, chan = per_channel(v);
    const char *family = av_variant_name(v);
    array arr[AVCLI_G_COUNT];
    memset(arr, 0, sizeof arr);
    static const int KIND[AVCLI_G_COUNT] = {GATE, ONE, ROW, ROW, ONE, ONE, ONE, ROW};
    for (int f = 0; f < AVCLI_G_COUNT && !code; f++) {
        if (!flag[f] || f == AVCLI_G_AMAMBA || f == AVCLI_G_AICL) continue; /* those two are numbers */
        arr[f].flag = AVCLI_GATE_FLAGS[f], arr[f].path = flag[f];
        code = load(&arr[f], KIND[f], chan, family, g);
        free(arr[f].data);
        arr[f].data = NULL;
    }
    /* the ranges (docs/gated.md): g <= 0, β in (0, 2], Δ > 0, a_icl in (0, 1]; a and b any finite numbers */
    if (!code && arr[AVCLI_G_GATES].x)
        code = check_values(&arr[AVCLI_G_GATES], -INFINITY, 1, 0, "a log-gate is <= 0: the decay exp(g) is at most 1; a reset is -30", g);
    if (!code && arr[AVCLI_G_BETAS].x) code = check_values(&arr[AVCLI_G_BETAS], 0, 1, 2, "beta is in (0, 2]", g);
    for (int f = AVCLI_G_A; !code && f <= AVCLI_G_B; f++)
        if (arr[f].x) code = check_values(&arr[f], -INFINITY, 1, INFINITY, "dplr's vectors are finite", g);
    if (!code && arr[AVCLI_G_DT].x) code = check_values(&arr[AVCLI_G_DT], 0, 1, INFINITY, "Mamba-2's step size dt is > 0", g);
    if (!code && arr[AVCLI_G_AICL_FILE].x)
        code = check_values(&arr[AVCLI_G_AICL_FILE], 0, 1, 1, "RWKV-7's in-context learning rate is in (0, 1]", g);
    int n = g->n, d = g->d;
    if (!code && arr[AVCLI_G_DT].x) { /* mamba2: k_t = dt_t B_t (--k is B), g_t = A dt_t (docs/gated.md) */
        double A;
        avcli_parse_double(flag[AVCLI_G_AMAMBA], &A);
        float *dt = arr[AVCLI_G_DT].x;
        for (int t = 0; t < n && !code; t++) {
            for (int c = 0; c < d; c++)
                if (!isfinite(in->K[(size_t)t * d + c] *= dt[t]) && !code)
                    code = avcli_fail("--dt %s: dt*B at token %d leaves the float range", flag[AVCLI_G_DT], t);
            dt[t] = (float)(A * dt[t]); /* dt becomes the gates */
            if (!isfinite(dt[t])) code = avcli_fail("--A %s: A*dt at token %d is below the float range", flag[AVCLI_G_AMAMBA], t);
        }
    }
    if (!code && in->alias == AVCLI_RWKV7 && !arr[AVCLI_G_A].x) { /* a, b from K: here, or per draw (recall) */
        in->a_icl = arr[AVCLI_G_AICL_FILE].x;
        arr[AVCLI_G_AICL_FILE].x = NULL;
        in->a_icl_const = 0.5;
        if (flag[AVCLI_G_AICL]) avcli_parse_double(flag[AVCLI_G_AICL], &in->a_icl_const);
        in->ab_made = 1;
        if (in->K) code = avcli_rwkv7_ab(in, in->K, n, d);
        else if (!(in->dplr_a = calloc((size_t)n * d, sizeof(float))) || !(in->dplr_b = calloc((size_t)n * d, sizeof(float))))
            code = avcli_fail_system("rwkv7: out of memory (n = %d, d = %d)", n, d);
        else av_params_set_dplr(&in->prm, in->dplr_a, in->dplr_b, n); /* recall's keys come later: per draw */
    }
    if (!code) {
        in->gates = arr[AVCLI_G_GATES].x ? arr[AVCLI_G_GATES].x : arr[AVCLI_G_DT].x;
        in->betas = arr[AVCLI_G_BETAS].x;
        if (arr[AVCLI_G_A].x) in->dplr_a = arr[AVCLI_G_A].x, in->dplr_b = arr[AVCLI_G_B].x;
        int gc = arr[AVCLI_G_GATES].x ? arr[AVCLI_G_GATES].cols : 1;
        if (in->gates || in->betas) av_params_set_gates(&in->prm, in->gates, n, gc, in->betas);
        if (in->dplr_a) av_params_set_dplr(&in->prm, in->dplr_a, in->dplr_b, n);
        arr[AVCLI_G_GATES].x = arr[AVCLI_G_DT].x = arr[AVCLI_G_BETAS].x = arr[AVCLI_G_A].x = arr[AVCLI_G_B].x = NULL;
    }
    for (int f = 0; f < AVCLI_G_COUNT; f++) drop(&arr[f]);
    return code;
}

int avcli_rwkv7_ab(avcli_inputs *in, const float *K, int n, int d) {
    size_t count = (size_t)n * d;
    if (!in->dplr_a) in->dplr_a = malloc(sizeof(float) * count);
    if (!in->dplr_b) in->dplr_b = malloc(sizeof(float) * count);
    if (!in->dplr_a || !in->dplr_b) return avcli_fail_system("rwkv7: out of memory (n = %d, d = %d)", n, d);
    int st = av_rwkv7_vectors(in->dplr_a, in->dplr_b, K, n, d, in->a_icl, in->a_icl_const);
    if (st < 0) return avcli_fail("--variant rwkv7: %s", av_status_string(st));
    av_params_set_dplr(&in->prm, in->dplr_a, in->dplr_b, n);
    return 0;
}
