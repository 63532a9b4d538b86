/* inputs.c: the CLI's input parsing, shared by every command that reads Q, K, V and knobs: numbers,
 * the .npy inputs (2-D, or 4-D model tensors with --layer/--head), the shared flags and the knobs, with
 * one-line messages for what is wrong (conventions: docs/conventions.md). It calls only output.c and the
 * library; the commands call it.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

// ----------------------------------------------------------------------------------------------------
// .npy files

typedef struct npy_array { av_npy_info info; float *data; } npy_array;

/* Read and decode the .npy at `path` (given with `flag`). Returns 0 or prints one line and returns 2. */
static int read_npy(npy_array *a, const char *flag, const char *path) {
    memset(a, 0, sizeof *a);
    return avcli_npy_load(&a->info, &a->data, flag, path);
}

static int all_finite(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static void shape_text(char *out, size_t cap, const av_npy_info *info) {
    size_t k = (size_t)snprintf(out, cap, "(");
    for (int i = 0; i < info->ndim && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, i ? ", %lld" : "%lld", (long long)info->shape[i]);
    if (k < cap) snprintf(out + k, cap - k, info->ndim == 1 ? ",)" : ")");
}

// ----------------------------------------------------------------------------------------------------
// the shared flags of matrix and readouts

enum { F_Q, F_K, F_V, F_W, F_VARIANT, F_OUT, F_LAYER, F_HEAD, F_TAU, F_G0, F_NSTR = F_G0 + AVCLI_G_COUNT };

typedef struct raw_flags {
    const char *str[F_NSTR];          /* string-valued flags, NULL when absent */
    const char *knob[AV_KNOB_COUNT];  /* knob values as given (bools: "1" or "0"), NULL when absent */
    int accurate;
} raw_flags;

static const char *const STR_NAMES[F_G0] = {"--q", "--k", "--v", "--hedgehog-w", "--variant", "-o", "--layer",
                                            "--head", "--tau"};
/* The string flags: STR_NAMES, then the gated inputs' (gated_inputs.c), F_G0 + AVCLI_G_*. */
static const char *str_name(int f) { return f < F_G0 ? STR_NAMES[f] : AVCLI_GATE_FLAGS[f - F_G0]; }

/* The knob whose flag is `a` ("--p"), or whose negation it is ("--no-orthogonal", *neg = 1); −1 if none. */
static int knob_of_flag(const char *a, int *neg) {
    *neg = 0;
    for (int k = AV_KNOB_VARIANT + 1; k < AV_KNOB_COUNT; k++) {
        const av_knob_desc *kd = av_knob_info(k);
        if (strcmp(a, kd->flag) == 0) return k;
        if (kd->type == AV_KT_BOOL && strncmp(a, "--no-", 5) == 0 && strcmp(a + 5, kd->flag + 2) == 0) {
            *neg = 1;
            return k;
        }
    }
    return -1;
}

static int collect_flags(raw_flags *r, int argc, char **argv) {
    memset(r, 0, sizeof *r);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], **slot = NULL;
        int neg, k = knob_of_flag(a, &neg);
        if (strcmp(a, "--accurate") == 0) {
            if (r->accurate) return avcli_fail("%s: given twice", a);
            r->accurate = 1;
            continue;
        }
        if (k >= 0 && av_knob_info(k)->type == AV_KT_BOOL) { /* a switch: --x sets 1, --no-x sets 0 */
            if (r->knob[k]) return avcli_fail("%s: given twice (or with its --no- form)", a);
            r->knob[k] = neg ? "0" : "1";
            continue;
        }
        if (k >= 0) slot = &r->knob[k];
        for (int f = 0; f < F_NSTR && !slot; f++)
            if (strcmp(a, str_name(f)) == 0) slot = &r->str[f];
        if (!slot) return avcli_fail("%s: unknown option (see attnviz --help)", avcli_brief(a));
        if (*slot) return avcli_fail("%s: given twice", a);
        if (i + 1 >= argc) return avcli_fail("%s: needs a value", a);
        *slot = argv[++i];
    }
    return 0;
}

/* The range of a knob in words, for messages and help ("1..10", "1..n", "odd, 1..2n-1, or 0 for none"). */
void avcli_range_text(char *out, size_t cap, const av_knob_desc *kd) {
    if (kd->type == AV_KT_BOOL) { snprintf(out, cap, "a switch"); return; }
    if (kd->type == AV_KT_ENUM) {
        snprintf(out, cap, "one of ");
        size_t k = strlen(out);
        for (const char *c = kd->options; *c && k + 3 < cap; c++) {
            if (*c == '|') { out[k++] = ','; out[k++] = ' '; }
            else out[k++] = *c;
        }
        out[k] = 0;
        return;
    }
    char hi[32];
    if (kd->flags & AV_KF_HI_N) snprintf(hi, sizeof hi, "n");
    else if (kd->flags & AV_KF_HI_2N) snprintf(hi, sizeof hi, "2n-1");
    else if (kd->hi > 1e300) hi[0] = 0;
    else snprintf(hi, sizeof hi, "%.10g", kd->hi);
    double lo = (kd->flags & AV_KF_ODD) && kd->lo == 0 ? 1 : kd->lo;
    if (!hi[0]) snprintf(out, cap, "> %.10g", lo);
    else snprintf(out, cap, "%s%.10g..%s%s", kd->flags & AV_KF_ODD ? "odd, " : "", lo, hi,
                  kd->flags & AV_KF_ODD ? ", or 0 for none" : "");
}

/* A number for knob kd from text, checked for its form only (the range is av_params_check's, and only for
 * the knobs the variant reads): an integer ≥ the row's lower bound for int knobs, a number ≥ 0 for real
 * ones; a typed 0 is refused where the library reads 0 as "default" (so it never silently becomes the
 * default), and becomes the library's −1 where that stands for a real 0. */
int avcli_knob_number(const av_knob_desc *kd, const char *text, double *v) {
    long long iv = 0;
    int ok = kd->type == AV_KT_INT ? avcli_parse_long(text, (long long)kd->lo, 4294967295LL, &iv)
                                   : avcli_parse_double(text, v) && *v >= 0;
    if (kd->type == AV_KT_INT) *v = (double)iv;
    if (ok && (kd->flags & AV_KF_ZERO_DEFAULT) && *v == 0 && !(kd->flags & AV_KF_MINUS1_ZERO)) ok = 0;
    if (ok && (kd->flags & AV_KF_MINUS1_ZERO) && *v == 0) *v = -1.0;
    return ok;
}

/* Set the given knobs into in->prm, checking each value's form here and its range in check_knobs. A typed 0
 * for a knob whose 0 means "default" is refused, so it never turns silently into the default. */
static int set_knobs(avcli_inputs *in, const raw_flags *r) {
    char range[96];
    for (int k = AV_KNOB_VARIANT + 1; k < AV_KNOB_COUNT; k++) {
        const av_knob_desc *kd = av_knob_info(k);
        const char *text = r->knob[k];
        double v = 0.0;
        if (!text) continue;
        avcli_range_text(range, sizeof range, kd);
        if (kd->type == AV_KT_ENUM) {
            int idx = 0, len = (int)strlen(text);
            const char *o = kd->options;
            while (*o && !(strncmp(o, text, (size_t)len) == 0 && (o[len] == '|' || o[len] == 0))) {
                o = strchr(o, '|');
                if (!o) break;
                o++, idx++;
            }
            if (!o || !*o || !len) return avcli_fail("%s %s: unknown kind (%s)", kd->flag, avcli_brief(text), range);
            v = idx;
        } else if (kd->type == AV_KT_BOOL) { /* --no-x where 0 means the variant's default: −1, a real off */
            v = text[0] == '1' ? 1 : (kd->flags & AV_KF_MINUS1_ZERO) ? -1 : 0;
        } else {
            if (!avcli_knob_number(kd, text, &v)) return avcli_fail("%s %s: not a valid value (%s)", kd->flag, avcli_brief(text), range);
        }
        if (av_params_set(&in->prm, k, v) != AV_OK) return avcli_fail("%s %s: not a valid value (%s)", kd->flag, avcli_brief(text), range);
    }
    return 0;
}

/* Resolve the knobs against n and d; on failure name the flag the library names. */
static int check_knobs(const avcli_inputs *in, const raw_flags *r) {
    av_params res;
    const char *vname = avcli_variant_label(in->prm.variant, in->alias);
    int bad = -1, st = av_params_check(&res, &in->prm, in->n, in->d, &bad);
    char range[96];
    if (st == AV_OK) return 0;
    if (st == AV_ERR_NO_CAUSAL) {
        if (bad >= 0 && bad != AV_KNOB_CAUSAL)
            return avcli_fail("--causal: %s with %s has no causal form", vname, av_knob_info(bad)->flag);
        return avcli_fail("--causal: %s has no causal form", vname);
    }
    if (st == AV_ERR_NEEDS_CAUSAL) {
        if (bad >= 0 && bad != AV_KNOB_CAUSAL)
            return avcli_fail("%s %s: needs --causal (a decay exists only causally)", av_knob_info(bad)->flag,
                              r->knob[bad] ? r->knob[bad] : "");
        if (av_variant_info(in->prm.variant)->cls == AV_CLASS_GATED) /* fox too: its gates sum over earlier tokens */
            return avcli_fail("--no-causal: %s exists only causal (a gated family: each token's gate decays what came before it)", vname);
        return avcli_fail("--no-causal: %s exists only causal (it is a recurrence)", vname);
    }
    if (st == AV_ERR_KNOB && bad >= 0) {
        const av_knob_desc *kd = av_knob_info(bad);
        avcli_range_text(range, sizeof range, kd);
        if (r->knob[bad])
            return avcli_fail("%s %s: out of range for %s at n = %d (%s)", kd->flag, avcli_brief(r->knob[bad]), vname, in->n, range);
    }
    return avcli_fail("--variant %s: %s (n = %d, d = %d)", vname, av_status_string(st), in->n, in->d);
}

// ----------------------------------------------------------------------------------------------------
// loading Q, K, V (2-D, or 4-D model tensors with --layer/--head)

/* The three input files: index 0 Q, 1 K, 2 V (data NULL when --v is absent). */
typedef struct inputs3 {
    npy_array a[3];
    const char *flag[3], *path[3];
} inputs3;

/* "FLAG PATH: shape S does not match --q's T (why)" (or --k's): one line, returns 2. */
static int shape_mismatch(const inputs3 *t, int i, int ref, const char *why) {
    char s1[160], s2[160];
    shape_text(s1, sizeof s1, &t->a[i].info);
    shape_text(s2, sizeof s2, &t->a[ref].info);
    return avcli_fail("%s %s: shape %s does not match %s's %s (%s)", t->flag[i], t->path[i], s1, t->flag[ref], s2, why);
}

/* For 4-D model tensors: check --layer/--head and the layer and KV-head counts, and give the element
 * offsets of the selected Q head (*qoff) and of its KV head in K (*kvoff, in units of rows). */
static int select_head(const inputs3 *t, const raw_flags *r, size_t *qoff, size_t *kvrow) {
    const av_npy_info *q = &t->a[0].info;
    int64_t L = q->shape[0], H = q->shape[1], KVH = t->a[1].info.shape[1];
    long long layer, head;
    if (!r->str[F_LAYER] || !r->str[F_HEAD]) return avcli_fail("--q %s: 4-D model tensors need --layer and --head", t->path[0]);
    if (!avcli_parse_long(r->str[F_LAYER], 0, L - 1, &layer))
        return avcli_fail("--layer %s: out of range (the tensors have %lld layers: 0..%lld)", avcli_brief(r->str[F_LAYER]), (long long)L, (long long)L - 1);
    if (!avcli_parse_long(r->str[F_HEAD], 0, H - 1, &head))
        return avcli_fail("--head %s: out of range (--q has %lld heads: 0..%lld)", avcli_brief(r->str[F_HEAD]), (long long)H, (long long)H - 1);
    if (t->a[1].info.shape[0] != L || KVH < 1 || H % KVH)
        return shape_mismatch(t, 1, 0, "K is (layers, kv_heads, n, d) with kv_heads dividing heads");
    if (t->a[2].data && (t->a[2].info.shape[0] != L || t->a[2].info.shape[1] != KVH))
        return shape_mismatch(t, 2, 1, "V has K's layers and kv_heads");
    int64_t n = q->shape[2], kvh = head * KVH / H; /* query head h reads KV head h·kv_heads/heads */
    *qoff = (size_t)((layer * H + head) * n * q->shape[3]);
    *kvrow = (size_t)((layer * KVH + kvh) * n);
    return 0;
}

/* Check the (…, n, d) tails: K n×d like Q, V with n rows, sizes within the library's limits. */
static int check_tails(const inputs3 *t, int nd) {
    const int64_t *qs = t->a[0].info.shape + nd - 2, *ks = t->a[1].info.shape + nd - 2;
    if (qs[0] < 1 || qs[0] > AV_MAX_N || qs[1] < 1 || qs[1] > AV_MAX_D)
        return avcli_fail("--q %s: n = %lld, d = %lld outside 1..%d, 1..%d", t->path[0], (long long)qs[0], (long long)qs[1],
                    AV_MAX_N, AV_MAX_D);
    if (ks[0] != qs[0] || ks[1] != qs[1]) return shape_mismatch(t, 1, 0, "K must be n x d like Q");
    const int64_t *vs = t->a[2].info.shape + nd - 2;
    if (t->a[2].data && (vs[0] != qs[0] || vs[1] < 1 || vs[1] > AV_MAX_D))
        return shape_mismatch(t, 2, 0, "V must have n rows and 1..4096 columns");
    return 0;
}

/* Copy count floats from a->data + off into a new buffer (NULL when out of memory). */
static float *take(const npy_array *a, size_t off, size_t count) {
    float *x = malloc(sizeof(float) * count);
    if (x) memcpy(x, a->data + off, sizeof(float) * count);
    return x;
}

/* Copy the selected n×d (n×dv) slices into in->Q, K, V and check that they are finite. */
static int take_slices(avcli_inputs *in, const inputs3 *t, int nd, size_t qoff, size_t kvrow) {
    const int64_t *qs = t->a[0].info.shape + nd - 2;
    in->n = (int)qs[0];
    in->d = (int)qs[1];
    in->dv = t->a[2].data ? (int)t->a[2].info.shape[nd - 1] : 0;
    size_t cnt[3] = {(size_t)in->n * in->d, (size_t)in->n * in->d, (size_t)in->n * in->dv};
    float **dst[3] = {&in->Q, &in->K, &in->V};
    size_t off[3] = {qoff, kvrow * in->d, kvrow * in->dv};
    for (int i = 0; i < 3; i++) {
        if (!t->a[i].data) continue;
        if (!(*dst[i] = take(&t->a[i], off[i], cnt[i]))) return avcli_fail_system("out of memory");
        if (!all_finite(*dst[i], cnt[i]))
            return avcli_fail("%s %s: %s%s", t->flag[i], t->path[i], av_status_string(AV_ERR_NONFINITE),
                        nd == 4 ? " (in the selected layer and head)" : "");
    }
    return 0;
}

/* Q, K, V into in; *g: where the gated inputs' rows come from (n, d, and with 4-D tensors the head taken). */
static int load_inputs(avcli_inputs *in, const raw_flags *r, avcli_geom *g) {
    inputs3 t = {.flag = {"--q", "--k", "--v"}, .path = {r->str[F_Q], r->str[F_K], r->str[F_V]}};
    int st = 0;
    for (int i = 0; i < 3 && !st; i++)
        if (t.path[i]) st = read_npy(&t.a[i], t.flag[i], t.path[i]);
    int nd = t.a[0].info.ndim;
    size_t qoff = 0, kvrow = 0;
    if (st) {
    } else if (nd != 2 && nd != 4) {
        char s1[160];
        shape_text(s1, sizeof s1, &t.a[0].info);
        st = avcli_fail("--q %s: shape %s is neither (n, d) nor (layers, heads, n, d)", t.path[0], s1);
    } else if (t.a[1].info.ndim != nd || (t.a[2].data && t.a[2].info.ndim != nd)) {
        st = shape_mismatch(&t, t.a[1].info.ndim != nd ? 1 : 2, 0, "the same number of dimensions");
    } else if (nd == 4) {
        st = select_head(&t, r, &qoff, &kvrow);
    } else if (r->str[F_LAYER] || r->str[F_HEAD]) {
        st = avcli_fail("%s: only for 4-D model tensors (--q %s is 2-D)", r->str[F_LAYER] ? "--layer" : "--head", t.path[0]);
    }
    if (!st) st = check_tails(&t, nd);
    if (!st) st = take_slices(in, &t, nd, qoff, kvrow);
    if (!st) {
        *g = (avcli_geom){.n = in->n, .d = in->d, .four = nd == 4};
        if (nd == 4) { /* --layer and --head were checked by select_head */
            g->L = t.a[0].info.shape[0], g->H = t.a[0].info.shape[1];
            g->layer = atoi(r->str[F_LAYER]), g->head = atoi(r->str[F_HEAD]);
        }
    }
    for (int i = 0; i < 3; i++) free(t.a[i].data);
    return st;
}

static int load_hedgehog(avcli_inputs *in, const char *path) {
    npy_array w;
    int st = read_npy(&w, "--hedgehog-w", path);
    if (st) return st;
    char s1[160];
    shape_text(s1, sizeof s1, &w.info);
    if (w.info.ndim != 2 || w.info.shape[0] != in->d || w.info.shape[1] < 1 || w.info.shape[1] > AV_MAX_FEATURE_DIM / 2) {
        free(w.data);
        return avcli_fail("--hedgehog-w %s: shape %s is not (d, cols) with d = %d and cols in 1..%d", path, s1, in->d,
                    AV_MAX_FEATURE_DIM / 2);
    }
    if (!all_finite(w.data, w.info.count)) {
        free(w.data);
        return avcli_fail("--hedgehog-w %s: %s", path, av_status_string(AV_ERR_NONFINITE));
    }
    in->hedgehog_w = w.data;
    av_params_set_hedgehog(&in->prm, in->hedgehog_w, (int)w.info.shape[1]);
    return 0;
}

/* The registry's variant names, joined by sep. */
static void variant_list(char *out, size_t cap, const char *sep) {
    size_t k = 0;
    out[0] = 0;
    for (int v = 0; v < AV_VARIANT_COUNT && k < cap; v++)
        k += (size_t)snprintf(out + k, cap - k, "%s%s", v ? sep : "", av_variant_name(v));
}

/* --variant, required and known, into *variant (and the preset it names into *alias); the refusal names every
 * variant and preset. */
static int variant_flag(int *variant, int *alias, const raw_flags *r) {
    char names[640];
    variant_list(names, sizeof names, ", ");
    size_t k = strlen(names);
    snprintf(names + k, sizeof names - k, "; presets %s", avcli_alias_list());
    if (!r->str[F_VARIANT]) return avcli_fail("--variant: required (%s)", names);
    *variant = avcli_variant_lookup(r->str[F_VARIANT], alias);
    if (*variant < 0) return avcli_fail("--variant %s: unknown variant (%s)", avcli_brief(r->str[F_VARIANT]), names);
    return 0;
}

/* The variant's defaults, and a preset's scale 1 (docs/gated.md: the Mamba-2 mapping and RWKV-7 use scale 1;
 * --scale still sets it). */
static void defaults(avcli_inputs *in, int variant, int alias) {
    av_params_default(&in->prm, variant);
    in->alias = alias;
    if (alias) av_params_set(&in->prm, AV_KNOB_SCALE, 1.0);
}

int avcli_parse_inputs(avcli_inputs *in, int argc, char **argv) {
    memset(in, 0, sizeof *in);
    raw_flags r;
    int st = collect_flags(&r, argc, argv);
    if (st) return st;
    int variant, alias;
    if ((st = variant_flag(&variant, &alias, &r))) return st;
    defaults(in, variant, alias);
    if ((st = avcli_gates_flags_check(r.str + F_G0, variant, alias))) return st;
    if (!r.str[F_Q]) return avcli_fail("--q: required (Q.npy)");
    if (!r.str[F_K]) return avcli_fail("--k: required (K.npy)");
    if ((st = set_knobs(in, &r))) return st;
    if (r.str[F_TAU] && !(avcli_parse_double(r.str[F_TAU], &in->tau) && in->tau > 0))
        return avcli_fail("--tau %s: not a number > 0", avcli_brief(r.str[F_TAU]));
    in->accurate = r.accurate;
    in->out = r.str[F_OUT];
    avcli_geom g;
    if ((st = load_inputs(in, &r, &g)) || (st = avcli_gates_load(in, r.str + F_G0, &g)) ||
        (r.str[F_W] && (st = load_hedgehog(in, r.str[F_W]))) ||
        (st = check_knobs(in, &r)) || (in->out && (st = avcli_out_check("-o", in->out)))) {
        avcli_free(in);
        return st;
    }
    if ((in->has_head = r.str[F_LAYER] != NULL)) in->layer = atoi(r.str[F_LAYER]), in->head = atoi(r.str[F_HEAD]); /* checked */
    return 0;
}

/* Knob flags only, for commands without input files (recall): --variant, the knobs and -o, into in->prm and
 * in->out, checked at in->n, in->d with the causal mask on (a memory is written in order, so a decay and
 * the causal-only variants are allowed). --causal itself is refused: nothing is masked. */
int avcli_parse_knobs(avcli_inputs *in, int argc, char **argv) {
    raw_flags r;
    int st = collect_flags(&r, argc, argv);
    if (st) return st;
    for (int f = 0; f < F_NSTR; f++)
        if (r.str[f] && f != F_VARIANT && f != F_OUT && f < F_G0) return avcli_fail("%s: not an option of this command (see attnviz --help)", str_name(f));
    if (r.accurate) return avcli_fail("--accurate: not an option of this command (see attnviz --help)");
    if (r.knob[AV_KNOB_CAUSAL]) return avcli_fail("--causal: not an option of recall (every pair is written in order, then every key read from the final memory)");
    for (int f = AVCLI_G_DT; f <= AVCLI_G_AMAMBA; f++)
        if (r.str[F_G0 + f]) return avcli_fail("%s: not an option of recall (its keys are the pairs'; mamba2's gates by --gates)", str_name(F_G0 + f));
    int variant, alias;
    if ((st = variant_flag(&variant, &alias, &r))) return st;
    defaults(in, variant, alias);
    if ((st = avcli_gates_flags_check(r.str + F_G0, variant, alias))) return st;
    if ((st = set_knobs(in, &r))) return st;
    const av_variant_desc *vd = av_variant_info(variant);
    if (vd->cls != AV_CLASS_EXACT && !(vd->flags & AV_VF_RECURRENT)) {
        char mem[512];
        size_t k = (size_t)snprintf(mem, sizeof mem, "softmax");
        for (int v = 0; v < AV_VARIANT_COUNT && k < sizeof mem; v++)
            if (av_variant_info(v)->flags & AV_VF_RECURRENT) k += (size_t)snprintf(mem + k, sizeof mem - k, ", %s", av_variant_name(v));
        return avcli_fail("--variant %s: no memory to recall from (it has no recurrent state; memories: %s)", vd->name, mem);
    }
    in->prm.causal = 1;
    in->out = r.str[F_OUT];
    /* the gated inputs of the N pairs: (N,), (N, 1) or (N, d) like a sequence of N tokens */
    if ((st = avcli_gates_load(in, r.str + F_G0, &(avcli_geom){.n = in->n, .d = in->d}))) return st;
    av_params res;
    int bad = -1;
    if (av_params_check(&res, &in->prm, in->n, in->d, &bad) == AV_ERR_NO_CAUSAL && bad >= 0 && bad != AV_KNOB_CAUSAL)
        return avcli_fail("%s: %s with it has no recurrent state to recall from", av_knob_info(bad)->flag, vd->name);
    if ((st = check_knobs(in, &r))) return st;
    return in->out ? avcli_out_check("-o", in->out) : 0;
}

void avcli_free(avcli_inputs *in) {
    if (!in) return;
    free(in->Q);
    free(in->K);
    free(in->V);
    free(in->hedgehog_w);
    free(in->gates);
    free(in->betas);
    free(in->dplr_a);
    free(in->dplr_b);
    free(in->a_icl);
    in->Q = in->K = in->V = in->hedgehog_w = in->gates = in->betas = in->dplr_a = in->dplr_b = in->a_icl = NULL;
    in->prm.hedgehog_w = NULL;
    av_params_set_gates(&in->prm, NULL, 0, 0, NULL);
    av_params_set_dplr(&in->prm, NULL, NULL, 0);
}

/* The knob flags of a model's heads (`attnviz linearize`): --variant, its knobs and -o into in->prm and in->out,
 * with the causal mask on (--causal is implied, --no-causal refused: a language model is causal). No input
 * files: the heads' q, k, v are the model's, so --q, --k, --v, --layer, --head and the gated arrays (one per
 * token of one text) are not options. A variant without a causal form is refused by name. 0, or one line and 2. */
int avcli_parse_head_knobs(avcli_inputs *in, int argc, char **argv) {
    raw_flags r;
    memset(in, 0, sizeof *in);
    int st = collect_flags(&r, argc, argv);
    if (st) return st;
    for (int f = 0; f < F_NSTR; f++)
        if (r.str[f] && f != F_VARIANT && f != F_OUT)
            return avcli_fail("%s: not an option of linearize (each head's q, k and v are the model's own%s)", str_name(f),
                              f >= F_G0 ? "; the gated families take their constant knobs" : "");
    if (r.accurate) return avcli_fail("--accurate: not an option of linearize (see attnviz --help)");
    if (r.knob[AV_KNOB_CAUSAL] && r.knob[AV_KNOB_CAUSAL][0] == '0')
        return avcli_fail("--no-causal: a language model is causal; linearize swaps in causal attention only");
    int variant, alias;
    if ((st = variant_flag(&variant, &alias, &r))) return st;
    if (alias == AVCLI_RWKV7)
        return avcli_fail("--variant rwkv7: its a and b come from each head's keys, which linearize does not build (use dplr)");
    const av_variant_desc *vd = av_variant_info(variant);
    if (!(vd->flags & AV_VF_CAUSAL))
        return avcli_fail("--variant %s: has no causal form, and a language model is causal (token t sees tokens 0..t)", vd->name);
    defaults(in, variant, alias);
    if ((st = set_knobs(in, &r))) return st;
    in->prm.causal = 1;
    in->out = r.str[F_OUT];
    return in->out ? avcli_out_check("-o", in->out) : 0;
}

/* The knobs of avcli_parse_head_knobs (the same argv) resolved for a text of n tokens and heads of size d: a
 * knob that removes the causal form, or out of range at this n. 0, or one line and 2. */
int avcli_check_head_knobs(avcli_inputs *in, int argc, char **argv, int n, int d) {
    raw_flags r;
    int st = collect_flags(&r, argc, argv);
    if (st) return st;
    av_params res;
    int bad = -1;
    in->n = n, in->d = d;
    if (av_params_check(&res, &in->prm, n, d, &bad) == AV_ERR_NO_CAUSAL && bad >= 0 && bad != AV_KNOB_CAUSAL)
        return avcli_fail("%s: %s with it has no causal form, and a language model is causal", av_knob_info(bad)->flag,
                          avcli_variant_label(in->prm.variant, in->alias));
    return check_knobs(in, &r);
}
