/* hf_model.c: Hugging Face model folders (docs/hf.md "config.json", "Shards and binding"): config.json read
 * as the transformers config classes of the five architectures read it, model.safetensors.index.json, and
 * the binding of parsed safetensors files into an av_model (weights in their files' dtypes, in place).
 *
 * Files are untrusted: every number is checked against its range before it is used, every size is
 * computed in 64-bit arithmetic, and a refusal is one sentence in av_model_error() that names the field or
 * the tensor (names are printed cut short and with control bytes replaced, never the input itself).
 * Nothing here allocates: the config's JSON nodes live in a static array (config.json files hold a few
 * hundred values; more is refused), the index and the layer table in the caller's workspace.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "json.h"

#define FAIL(...) avi_model_fail(AV_ERR_FORMAT, __VA_ARGS__)

/* A name from a file made printable for a sentence: at most 80 bytes, control bytes as '?'. */
static const char *clean(char *dst, size_t cap, const char *src) {
    size_t n = 0, lim = cap > 4 ? cap - 4 : 0;
    for (; src[n] && n < lim && n < 80; n++) {
        unsigned char ch = (unsigned char)src[n];
        dst[n] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    if (src[n] && cap >= 4) memcpy(dst + n, "...", 3), n += 3;
    dst[n] = '\0';
    return dst;
}

static const char *json_type_name(int t) {
    switch (t) {
    case AVJ_NULL: return "null";
    case AVJ_FALSE: case AVJ_TRUE: return "a boolean";
    case AVJ_NUMBER: return "a number";
    case AVJ_STRING: return "a string";
    case AVJ_ARRAY: return "an array";
    default: return "an object";
    }
}

// ----------------------------------------------------------------------------------------------------
// config.json

/* config.json files hold tens to a few hundred values (a layer_types list adds one per layer). */
#define CONFIG_MAX_NODES 8192
static avj_node config_nodes[CONFIG_MAX_NODES];

enum { T_LLAMA, T_MISTRAL, T_QWEN2, T_QWEN3, T_GPT2, T_COUNT };
static const struct {
    const char *arch, *type;
    int av_arch;
    /* the config class's defaults (transformers' configuration_<type>.py) */
    int vocab, hidden, inter, layers, heads, kv_absent, context, bos, eos, head_dim_absent, tie, sliding;
} ARCH[T_COUNT] = {
    /*            vocab  hidden inter  L   H   KV  ctx     bos eos hd tie sliding  (kv −1: = heads; hd 0: hidden/heads) */
    {"LlamaForCausalLM", "llama", AV_ARCH_LLAMA, 32000, 4096, 11008, 32, 32, -1, 2048, 1, 2, 0, 0, 0},
    {"MistralForCausalLM", "mistral", AV_ARCH_LLAMA, 32000, 4096, 14336, 32, 32, 8, 131072, 1, 2, 0, 0, 4096},
    {"Qwen2ForCausalLM", "qwen2", AV_ARCH_LLAMA, 151936, 4096, 22016, 32, 32, 32, 32768, -1, -1, 0, 0, 4096},
    {"Qwen3ForCausalLM", "qwen3", AV_ARCH_LLAMA, 151936, 4096, 22016, 32, 32, 32, 32768, -1, -1, 128, 0, 4096},
    {"GPT2LMHeadModel", "gpt2", AV_ARCH_GPT2, 50257, 768, 0, 12, 12, -1, 1024, 50256, 50256, 0, 1, 0},
};
#define ARCH_LIST "(Llama, Mistral, Qwen2, Qwen3, SmolLM, GPT-2)"

typedef struct cfg_reader {
    const avj_doc *d;
    uint32_t obj;       /* the object read from */
    const char *where;  /* "config.json" or "config.json's rope_scaling" */
} cfg_reader;

/* The value of key, or −1 when absent. */
static int64_t cfg_get(const cfg_reader *r, const char *key) { return avj_get(r->d, r->obj, key); }
static int cfg_type(const cfg_reader *r, int64_t v) { return v < 0 ? -1 : r->d->node[v].type; }

/* An integer in lo..hi: absent gives def, null gives def_null. */
static int cfg_int(int *out, const cfg_reader *r, const char *key, int def, int def_null, int64_t lo, int64_t hi) {
    int64_t v = cfg_get(r, key), x;
    int t = cfg_type(r, v);
    if (t < 0 || t == AVJ_NULL) {
        *out = t < 0 ? def : def_null;
        return AV_OK;
    }
    if (t != AVJ_NUMBER) return FAIL("%s's %s is %s, where an integer belongs", r->where, key, json_type_name(t));
    if (avj_int(r->d, (uint32_t)v, lo, hi, &x) != 0) {
        double dv = 0;
        avj_number(r->d, (uint32_t)v, &dv);
        return FAIL("%s's %s is %.17g, not an integer in %lld..%lld", r->where, key, dv, (long long)lo, (long long)hi);
    }
    *out = (int)x;
    return AV_OK;
}

/* A finite number in (lo, hi] (lo_open) or [lo, hi]; absent or null gives def. */
static int cfg_num(double *out, const cfg_reader *r, const char *key, double def, double lo, double hi, int lo_open) {
    int64_t v = cfg_get(r, key);
    int t = cfg_type(r, v);
    if (t < 0 || t == AVJ_NULL) {
        *out = def;
        return AV_OK;
    }
    if (t != AVJ_NUMBER) return FAIL("%s's %s is %s, where a number belongs", r->where, key, json_type_name(t));
    double x = 0;
    avj_number(r->d, (uint32_t)v, &x);
    if (!(isfinite(x) && (lo_open ? x > lo : x >= lo) && x <= hi))
        return FAIL("%s's %s is %.17g, outside %s%g, %g]", r->where, key, x, lo_open ? "(" : "[", lo, hi);
    *out = x;
    return AV_OK;
}

/* true or false; absent gives def, null false (Python's None). */
static int cfg_bool(int *out, const cfg_reader *r, const char *key, int def) {
    int64_t v = cfg_get(r, key);
    int t = cfg_type(r, v);
    if (t < 0) *out = def;
    else if (t == AVJ_NULL || t == AVJ_FALSE) *out = 0;
    else if (t == AVJ_TRUE) *out = 1;
    else return FAIL("%s's %s is %s, where true or false belongs", r->where, key, json_type_name(t));
    return AV_OK;
}

/* A string into out[cap] (NUL-free); absent or null gives 0 with out = "", present 1. Too long for out: the
 * start of it, still 1, with *cut set. */
static int cfg_str(char *out, size_t cap, int *present, const cfg_reader *r, int64_t v, const char *key) {
    int t = cfg_type(r, v);
    out[0] = '\0';
    *present = 0;
    if (t < 0 || t == AVJ_NULL) return AV_OK;
    if (t != AVJ_STRING) return FAIL("%s's %s is %s, where a string belongs", r->where, key, json_type_name(t));
    int64_t n = avj_string_len(r->d, (uint32_t)v);
    char tmp[256];
    if (n >= (int64_t)sizeof tmp) {
        /* a name this long matches nothing attnviz knows; keep a recognisable start for the sentence */
        memcpy(tmp, r->d->text + r->d->node[v].start, 80);
        tmp[80] = '\0';
    } else if (avj_string(r->d, (uint32_t)v, tmp, sizeof tmp) < 0) {
        return FAIL("%s's %s could not be decoded", r->where, key);
    } else if ((int64_t)strlen(tmp) != n) {
        return FAIL("%s's %s holds a NUL character", r->where, key);
    }
    snprintf(out, cap, "%s", tmp);
    *present = 1;
    return AV_OK;
}

/* The ranges every config must respect, parsed or handed to the bind (a struct the caller changed). */
static int config_check(const av_hf_config *c) {
    const char *who = "the config";
    if (c->arch != AV_ARCH_LLAMA && c->arch != AV_ARCH_GPT2) return FAIL("%s's arch %d is not a Hugging Face architecture", who, c->arch);
#define RANGE(field, name, lo, hi) \
    if ((int64_t)c->field < (lo) || (int64_t)c->field > (hi)) \
        return FAIL("%s's %s is %d, outside %lld..%lld", who, name, c->field, (long long)(lo), (long long)(hi));
    RANGE(dim, "hidden size", 1, AV_MODEL_MAX_DIM)
    RANGE(hidden_dim, "intermediate size", 1, AV_MODEL_MAX_DIM)
    RANGE(n_layers, "number of layers", 1, AV_MODEL_MAX_LAYERS)
    RANGE(n_heads, "number of attention heads", 1, AV_MODEL_MAX_DIM)
    RANGE(n_kv_heads, "number of key/value heads", 1, c->n_heads)
    RANGE(head_size, "head size", 1, AV_MODEL_MAX_DIM)
    RANGE(vocab_size, "vocabulary size", 1, AV_MODEL_MAX_VOCAB)
    RANGE(context, "context length", 1, INT32_MAX)
    RANGE(tie_word_embeddings, "tie_word_embeddings", 0, 1)
    RANGE(attention_bias, "attention_bias", 0, 1)
    RANGE(mlp_bias, "mlp_bias", 0, 1)
    RANGE(qkv_bias, "qkv_bias", 0, 1)
    RANGE(qk_norm, "qk_norm", 0, 1)
    RANGE(n_eos, "number of EOS ids", 0, 4)
    RANGE(bos_id, "BOS id", -1, c->vocab_size - 1)
    RANGE(rope_llama3, "rope_llama3", 0, 1)
    RANGE(sliding_window, "sliding window", 0, INT32_MAX)
#undef RANGE
    for (int i = 0; i < c->n_eos; i++)
        if (c->eos_id[i] < 0 || c->eos_id[i] >= c->vocab_size)
            return FAIL("%s's EOS id %d is outside the vocabulary 0..%d", who, c->eos_id[i], c->vocab_size - 1);
    if (c->n_heads % c->n_kv_heads)
        return FAIL("%s's %d attention heads are not a multiple of its %d key/value heads", who, c->n_heads, c->n_kv_heads);
    if ((int64_t)c->n_heads * c->head_size > AV_MODEL_MAX_DIM)
        return FAIL("%s's %d heads of size %d make %lld query features, above %d", who, c->n_heads, c->head_size,
                    (long long)c->n_heads * c->head_size, AV_MODEL_MAX_DIM);
    if (!(isfinite(c->norm_eps) && c->norm_eps > 0 && c->norm_eps < 1))
        return FAIL("%s's norm epsilon %g is outside (0, 1)", who, c->norm_eps);
    if (c->arch == AV_ARCH_GPT2) {
        if (c->n_heads * c->head_size != c->dim)
            return FAIL("%s's n_embd %d is not n_head %d times a head size", who, c->dim, c->n_heads);
        if (c->n_kv_heads != c->n_heads || c->rope_llama3 || c->sliding_window || c->qk_norm)
            return FAIL("%s holds settings GPT-2 does not have (grouped heads, RoPE scaling, a window, q/k norms)", who);
        return AV_OK;
    }
    if (c->head_size % 2) return FAIL("%s's head size %d is odd: rotary embeddings rotate pairs", who, c->head_size);
    if (!(isfinite(c->rope_theta) && c->rope_theta > 0)) return FAIL("%s's rope_theta %g is not a positive number", who, c->rope_theta);
    if (c->rope_llama3) {
        if (!(isfinite(c->rope_factor) && c->rope_factor >= 1 && c->rope_factor <= 1e6))
            return FAIL("%s's llama3 rope factor %g is outside [1, 1e6]", who, c->rope_factor);
        if (!(isfinite(c->rope_low_freq) && isfinite(c->rope_high_freq) && c->rope_low_freq > 0 &&
              c->rope_high_freq > c->rope_low_freq && c->rope_high_freq <= 1e6))
            return FAIL("%s's llama3 low_freq_factor %g and high_freq_factor %g are not 0 < low < high", who,
                        c->rope_low_freq, c->rope_high_freq);
        if (!(isfinite(c->rope_original_context) && c->rope_original_context >= 1 && c->rope_original_context <= INT32_MAX &&
              c->rope_original_context == floor(c->rope_original_context)))
            return FAIL("%s's llama3 original_max_position_embeddings %g is not a positive integer", who, c->rope_original_context);
    }
    return AV_OK;
}

/* rope_scaling (transformers 4) or rope_parameters (5): default or llama3, nothing else. */
static int read_rope(av_hf_config *c, const avj_doc *d, double theta_default) {
    cfg_reader top = {d, 0, "config.json"};
    int64_t rp = cfg_get(&top, "rope_parameters"), rs = cfg_get(&top, "rope_scaling");
    int st = cfg_num(&c->rope_theta, &top, "rope_theta", theta_default, 0, 1e300, 1);
    if (st) return st;
    int64_t node = cfg_type(&top, rp) > AVJ_NULL ? rp : rs;
    const char *name = node == rp ? "rope_parameters" : "rope_scaling";
    int t = cfg_type(&top, node);
    if (t < 0 || t == AVJ_NULL) return AV_OK;
    if (t != AVJ_OBJECT) return FAIL("config.json's %s is %s, where an object belongs", name, json_type_name(t));
    char where[64];
    snprintf(where, sizeof where, "config.json's %s", name);
    cfg_reader r = {d, (uint32_t)node, where};
    if (node == rp && (st = cfg_num(&c->rope_theta, &r, "rope_theta", c->rope_theta, 0, 1e300, 1))) return st;
    char type[64], shown[96];
    int present;
    int64_t tv = cfg_get(&r, "rope_type");
    if ((st = cfg_str(type, sizeof type, &present, &r, tv < 0 ? cfg_get(&r, "type") : tv, tv < 0 ? "type" : "rope_type")))
        return st;
    if (!present || !strcmp(type, "default")) return AV_OK;
    if (strcmp(type, "llama3"))
        return FAIL("config.json's %s type %s is not one attnviz implements (only llama3)", name, clean(shown, sizeof shown, type));
    const char *need[4] = {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"};
    double *dst[4] = {&c->rope_factor, &c->rope_low_freq, &c->rope_high_freq, &c->rope_original_context};
    for (int i = 0; i < 4; i++) {
        if (cfg_type(&r, cfg_get(&r, need[i])) <= AVJ_NULL) return FAIL("%s of type llama3 lacks %s", where, need[i]);
        if ((st = cfg_num(dst[i], &r, need[i], 0, 0, 1e9, 1))) return st;
    }
    c->rope_llama3 = 1;
    return AV_OK;
}

/* bos_token_id and eos_token_id (an id, a list of ids, or null); a default past the vocabulary is dropped
 * (GPT-2's 50256 in a small model), a value the file writes is checked. */
static int read_special_ids(av_hf_config *c, const avj_doc *d, int ty) {
    cfg_reader top = {d, 0, "config.json"};
    int st = cfg_int(&c->bos_id, &top, "bos_token_id", ARCH[ty].bos, -1, 0, c->vocab_size - 1);
    if (st) return st;
    if (c->bos_id >= c->vocab_size) c->bos_id = -1; /* the class's default does not fit this vocabulary */
    int64_t v = cfg_get(&top, "eos_token_id");
    int t = cfg_type(&top, v);
    c->n_eos = 0;
    if (t < 0) {
        if (ARCH[ty].eos >= 0 && ARCH[ty].eos < c->vocab_size) c->eos_id[c->n_eos++] = ARCH[ty].eos;
        return AV_OK;
    }
    if (t == AVJ_NULL) return AV_OK;
    int64_t x;
    if (t == AVJ_NUMBER) {
        if (avj_int(d, (uint32_t)v, 0, c->vocab_size - 1, &x))
            return FAIL("config.json's eos_token_id is not an id in 0..%d", c->vocab_size - 1);
        c->eos_id[c->n_eos++] = (int)x;
        return AV_OK;
    }
    if (t != AVJ_ARRAY) return FAIL("config.json's eos_token_id is %s, where an id or a list of ids belongs", json_type_name(t));
    uint32_t n = d->node[v].count;
    int64_t e = n ? (int64_t)v + 1 : -1;
    for (uint32_t i = 0; i < n; i++, e = d->node[e].next) {
        if (d->node[e].type != AVJ_NUMBER || avj_int(d, (uint32_t)e, 0, c->vocab_size - 1, &x))
            return FAIL("config.json's eos_token_id[%u] is not an id in 0..%d", i, c->vocab_size - 1);
        if (c->n_eos < 4) c->eos_id[c->n_eos++] = (int)x; /* generation stops at the first four */
    }
    return AV_OK;
}

/* Qwen2/3: which layers slide (use_sliding_window, sliding_window, max_window_layers or layer_types). */
static int read_qwen_window(av_hf_config *c, const avj_doc *d) {
    cfg_reader top = {d, 0, "config.json"};
    int use = 0, window = 0, st; /* set on every path that reads them; gcc -O3 cannot see it */
    if ((st = cfg_bool(&use, &top, "use_sliding_window", 0))) return st;
    if ((st = cfg_int(&window, &top, "sliding_window", 4096, 0, 1, INT32_MAX))) return st;
    if (!use) window = 0; /* the config class drops the window unless use_sliding_window */
    int64_t lt = cfg_get(&top, "layer_types");
    int t = cfg_type(&top, lt), n_sliding = 0;
    if (t > AVJ_NULL) {
        if (t != AVJ_ARRAY) return FAIL("config.json's layer_types is %s, where a list belongs", json_type_name(t));
        if (d->node[lt].count != (uint32_t)c->n_layers)
            return FAIL("config.json's layer_types has %u entries for %d layers", d->node[lt].count, c->n_layers);
        int64_t e = (int64_t)lt + 1;
        for (int i = 0; i < c->n_layers; i++, e = d->node[e].next) {
            if (avj_string_eq(d, (uint32_t)e, "sliding_attention", 17)) n_sliding++;
            else if (!avj_string_eq(d, (uint32_t)e, "full_attention", 14))
                return FAIL("config.json's layer_types[%d] is neither full_attention nor sliding_attention", i);
        }
    } else {
        int mwl;
        if ((st = cfg_int(&mwl, &top, "max_window_layers", 28, 28, 0, INT32_MAX))) return st;
        n_sliding = mwl >= c->n_layers ? 0 : c->n_layers - mwl;
    }
    if (!window || !n_sliding) return AV_OK;
    if (n_sliding != c->n_layers)
        return FAIL("config.json gives %d of the %d layers a sliding window of %d and the others full attention: "
                    "attnviz runs one kind of attention in every layer", n_sliding, c->n_layers, window);
    c->sliding_window = window;
    return AV_OK;
}

static int parse_llama_family(av_hf_config *c, const avj_doc *d, int ty) {
    cfg_reader top = {d, 0, "config.json"};
    int st;
    char act[64], shown[96];
    int present;
    if ((st = cfg_int(&c->vocab_size, &top, "vocab_size", ARCH[ty].vocab, -1, 1, AV_MODEL_MAX_VOCAB)) ||
        (st = cfg_int(&c->dim, &top, "hidden_size", ARCH[ty].hidden, -1, 1, AV_MODEL_MAX_DIM)) ||
        (st = cfg_int(&c->hidden_dim, &top, "intermediate_size", ARCH[ty].inter, -1, 1, AV_MODEL_MAX_DIM)) ||
        (st = cfg_int(&c->n_layers, &top, "num_hidden_layers", ARCH[ty].layers, -1, 1, AV_MODEL_MAX_LAYERS)) ||
        (st = cfg_int(&c->n_heads, &top, "num_attention_heads", ARCH[ty].heads, -1, 1, AV_MODEL_MAX_DIM)) ||
        (st = cfg_int(&c->n_kv_heads, &top, "num_key_value_heads", ARCH[ty].kv_absent < 0 ? c->n_heads : ARCH[ty].kv_absent,
                      c->n_heads, 1, AV_MODEL_MAX_DIM)) ||
        (st = cfg_int(&c->context, &top, "max_position_embeddings", ARCH[ty].context, -1, 1, INT32_MAX)))
        return st;
    /* the sizes that were null came back −1: the config classes would fail on them */
    if (c->vocab_size < 0 || c->dim < 0 || c->hidden_dim < 0 || c->n_layers < 0 || c->n_heads < 0 || c->context < 0)
        return FAIL("config.json gives null for one of vocab_size, hidden_size, intermediate_size, num_hidden_layers, "
                    "num_attention_heads, max_position_embeddings");
    /* head_dim: absent, Qwen3's class says 128; otherwise (and null) hidden_size / num_attention_heads */
    if ((st = cfg_int(&c->head_size, &top, "head_dim", ARCH[ty].head_dim_absent, 0, 1, AV_MODEL_MAX_DIM))) return st;
    if (!c->head_size) {
        if (c->dim % c->n_heads)
            return FAIL("config.json's hidden_size %d is not a multiple of num_attention_heads %d, and head_dim is not given",
                        c->dim, c->n_heads);
        c->head_size = c->dim / c->n_heads;
    }
    if ((st = cfg_num(&c->norm_eps, &top, "rms_norm_eps", 1e-6, 0, 1, 1))) return st;
    if (c->norm_eps >= 1) return FAIL("config.json's rms_norm_eps is %g, not below 1", c->norm_eps);
    if ((st = cfg_bool(&c->tie_word_embeddings, &top, "tie_word_embeddings", ARCH[ty].tie))) return st;
    if ((st = cfg_str(act, sizeof act, &present, &top, cfg_get(&top, "hidden_act"), "hidden_act"))) return st;
    if (present && strcmp(act, "silu"))
        return FAIL("config.json's hidden_act %s is not one attnviz implements for %s (only silu)", clean(shown, sizeof shown, act),
                    ARCH[ty].arch);
    if (ty == T_LLAMA || ty == T_QWEN3)
        if ((st = cfg_bool(&c->attention_bias, &top, "attention_bias", 0))) return st;
    if (ty == T_LLAMA && (st = cfg_bool(&c->mlp_bias, &top, "mlp_bias", 0))) return st;
    c->qkv_bias = c->attention_bias || ty == T_QWEN2; /* Qwen2's q/k/v projections always have biases, o_proj none */
    c->qk_norm = ty == T_QWEN3;
    if ((st = read_rope(c, d, 10000.0))) return st;
    if (ty == T_MISTRAL) {
        if ((st = cfg_int(&c->sliding_window, &top, "sliding_window", ARCH[ty].sliding, 0, 1, INT32_MAX))) return st;
    } else if (ty == T_QWEN2 || ty == T_QWEN3) {
        if ((st = read_qwen_window(c, d))) return st;
    }
    return read_special_ids(c, d, ty);
}

static int parse_gpt2(av_hf_config *c, const avj_doc *d) {
    cfg_reader top = {d, 0, "config.json"};
    int st, flag, present;
    char act[64], shown[96];
    if ((st = cfg_int(&c->vocab_size, &top, "vocab_size", 50257, -1, 1, AV_MODEL_MAX_VOCAB)) ||
        (st = cfg_int(&c->dim, &top, "n_embd", 768, -1, 1, AV_MODEL_MAX_DIM)) ||
        (st = cfg_int(&c->n_layers, &top, "n_layer", 12, -1, 1, AV_MODEL_MAX_LAYERS)) ||
        (st = cfg_int(&c->n_heads, &top, "n_head", 12, -1, 1, AV_MODEL_MAX_DIM)) ||
        (st = cfg_int(&c->context, &top, "n_positions", 1024, -1, 1, AV_MODEL_MAX_SEQ)))
        return st;
    if (c->vocab_size < 0 || c->dim < 0 || c->n_layers < 0 || c->n_heads < 0 || c->context < 0)
        return FAIL("config.json gives null for one of vocab_size, n_embd, n_layer, n_head, n_positions");
    if ((st = cfg_int(&c->hidden_dim, &top, "n_inner", 0, 0, 1, AV_MODEL_MAX_DIM))) return st;
    if (!c->hidden_dim) {
        if (4 * c->dim > AV_MODEL_MAX_DIM) return FAIL("config.json's n_inner (4 times n_embd: %d) is above %d", 4 * c->dim, AV_MODEL_MAX_DIM);
        c->hidden_dim = 4 * c->dim;
    }
    if (c->dim % c->n_heads) return FAIL("config.json's n_embd %d is not a multiple of n_head %d", c->dim, c->n_heads);
    c->n_kv_heads = c->n_heads;
    c->head_size = c->dim / c->n_heads;
    if ((st = cfg_num(&c->norm_eps, &top, "layer_norm_epsilon", 1e-5, 0, 1, 1))) return st;
    if (c->norm_eps >= 1) return FAIL("config.json's layer_norm_epsilon is %g, not below 1", c->norm_eps);
    if ((st = cfg_str(act, sizeof act, &present, &top, cfg_get(&top, "activation_function"), "activation_function"))) return st;
    if (present && strcmp(act, "gelu_new") && strcmp(act, "gelu_pytorch_tanh"))
        return FAIL("config.json's activation_function %s is not one attnviz implements for GPT-2 (gelu_new, gelu_pytorch_tanh)",
                    clean(shown, sizeof shown, act));
    if ((st = cfg_bool(&flag, &top, "scale_attn_weights", 1))) return st;
    if (!flag) return FAIL("config.json's scale_attn_weights is false: attnviz scales GPT-2's attention by 1/sqrt(head size)");
    if ((st = cfg_bool(&flag, &top, "scale_attn_by_inverse_layer_idx", 0))) return st;
    if (flag) return FAIL("config.json's scale_attn_by_inverse_layer_idx is true: attnviz does not scale attention by layer");
    /* reorder_and_upcast_attn only makes transformers compute the scores in float32 under half precision:
     * the same scale·q·k and softmax, which this pass computes in float32 and float64 anyway */
    if ((st = cfg_bool(&flag, &top, "reorder_and_upcast_attn", 0))) return st;
    if ((st = cfg_bool(&c->tie_word_embeddings, &top, "tie_word_embeddings", 1))) return st;
    c->attention_bias = c->mlp_bias = c->qkv_bias = 1; /* every GPT-2 projection and norm has a bias */
    return read_special_ids(c, d, T_GPT2);
}

int av_hf_config_parse(av_hf_config *c, const void *json, size_t len) {
    if (!c || !json) return AV_ERR_NULL;
    memset(c, 0, sizeof *c);
    avi_model_error_clear();
    if (len > AV_HF_MAX_JSON) return FAIL("config.json is %zu bytes, above the %d-byte limit", len, AV_HF_MAX_JSON);
    uint32_t nn = avj_nodes(json, len);
    if (!nn) return FAIL("config.json is not valid JSON: %s", avj_error());
    if (nn > CONFIG_MAX_NODES) return FAIL("config.json holds %u values, more than the %d a config has", nn, CONFIG_MAX_NODES);
    avj_doc doc;
    if (avj_parse(&doc, config_nodes, CONFIG_MAX_NODES, json, len) != 0) return FAIL("config.json is not valid JSON: %s", avj_error());
    const avj_doc *d = &doc;
    if (d->node[0].type != AVJ_OBJECT) return FAIL("config.json is %s, where an object belongs", json_type_name(d->node[0].type));
    cfg_reader top = {d, 0, "config.json"};
    char arch[256], type[64], shown[96];
    int has_arch = 0, has_type = 0, st;
    int64_t av = cfg_get(&top, "architectures");
    int t = cfg_type(&top, av);
    if (t > AVJ_NULL) {
        if (t != AVJ_ARRAY || !d->node[av].count) return FAIL("config.json's architectures is not a list of names");
        if ((st = cfg_str(arch, sizeof arch, &has_arch, &top, (int64_t)av + 1, "architectures[0]"))) return st;
    }
    if ((st = cfg_str(type, sizeof type, &has_type, &top, cfg_get(&top, "model_type"), "model_type"))) return st;
    int ty = -1;
    for (int i = 0; i < T_COUNT; i++)
        if (has_arch ? !strcmp(arch, ARCH[i].arch) : has_type && !strcmp(type, ARCH[i].type)) ty = i;
    if (ty < 0) {
        if (has_arch)
            return FAIL("the model's architecture %s is not one attnviz runs " ARCH_LIST, clean(shown, sizeof shown, arch));
        if (has_type) return FAIL("the model's type %s is not one attnviz runs " ARCH_LIST, clean(shown, sizeof shown, type));
        return FAIL("config.json names neither its architectures nor its model_type");
    }
    /* the type picks the config class and so every default: it must be the architecture's */
    if (has_type && strcmp(type, ARCH[ty].type))
        return FAIL("config.json's architecture %s does not go with its model_type %s", ARCH[ty].arch, clean(shown, sizeof shown, type));
    c->arch = ARCH[ty].av_arch;
    snprintf(c->architecture, sizeof c->architecture, "%s", ARCH[ty].arch);
    snprintf(c->model_type, sizeof c->model_type, "%s", ARCH[ty].type);
    st = ty == T_GPT2 ? parse_gpt2(c, d) : parse_llama_family(c, d, ty);
    if (!st) st = config_check(c);
    if (st) {
        char keep[256];
        snprintf(keep, sizeof keep, "%s", av_model_error());
        memset(c, 0, sizeof *c);
        return avi_model_fail(st, "%s", keep);
    }
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// heapsort (qsort may allocate): idx[0..n) ordered by cmp(ctx, a, b) < 0

typedef int (*cmp_fn)(const void *ctx, int a, int b);
static void sift(int *idx, int root, int n, cmp_fn cmp, const void *ctx) {
    for (;;) {
        int child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && cmp(ctx, idx[child], idx[child + 1]) < 0) child++;
        if (cmp(ctx, idx[root], idx[child]) >= 0) return;
        int t = idx[root];
        idx[root] = idx[child], idx[child] = t;
        root = child;
    }
}
static void heapsort_idx(int *idx, int n, cmp_fn cmp, const void *ctx) {
    for (int i = n / 2 - 1; i >= 0; i--) sift(idx, i, n, cmp, ctx);
    for (int end = n - 1; end > 0; end--) {
        int t = idx[0];
        idx[0] = idx[end], idx[end] = t;
        sift(idx, 0, end, cmp, ctx);
    }
}
/* names: strcmp, then the index (so equal names keep document order) */
static int cmp_names(const void *ctx, int a, int b) {
    const char *const *s = ctx;
    int r = strcmp(s[a], s[b]);
    return r ? r : (a > b) - (a < b);
}

// ----------------------------------------------------------------------------------------------------
// model.safetensors.index.json

typedef struct index_layout {
    avj_node *nodes;
    const char **name_doc, **shard_doc, **tensor, **shard;
    int *perm, *first, *sid, *ts_doc, *tensor_shard;
    char *pool;
} index_layout;

/* The workspace for an index of nn JSON values in len bytes: the nodes, then per weight_map entry (at most
 * nn/2) four name pointers and five ints, then every decoded string (no longer than its JSON text, plus a
 * NUL). Counting (work NULL) and carving take the same blocks. */
static uint64_t index_carve(index_layout *L, void *work, uint32_t nn, size_t len) {
    avi_arena a = work ? avi_arena_over(work) : avi_arena_count();
    uint64_t m = (uint64_t)nn / 2 + 1, P = sizeof(char *) * m, I = sizeof(int) * m;
    L->nodes = avi_take(&a, (uint64_t)nn * sizeof(avj_node));
    L->name_doc = avi_take(&a, P), L->shard_doc = avi_take(&a, P), L->tensor = avi_take(&a, P), L->shard = avi_take(&a, P);
    L->perm = avi_take(&a, I), L->first = avi_take(&a, I), L->sid = avi_take(&a, I), L->ts_doc = avi_take(&a, I);
    L->tensor_shard = avi_take(&a, I);
    L->pool = avi_take(&a, (uint64_t)len + nn + 1);
    return a.used;
}

size_t av_hf_index_work(const void *json, size_t len) {
    avi_model_error_clear();
    if (!json) return (size_t)avi_model_fail(0, "no index was given");
    if (len > AV_HF_MAX_JSON) return (size_t)avi_model_fail(0, "the index is %zu bytes, above the %d-byte limit", len, AV_HF_MAX_JSON);
    uint32_t nn = avj_nodes(json, len);
    if (!nn) return (size_t)avi_model_fail(0, "the index is not valid JSON: %s", avj_error());
    index_layout L;
    uint64_t need = index_carve(&L, NULL, nn, len);
    if (need > SIZE_MAX) return (size_t)avi_model_fail(0, "the index needs %llu bytes of workspace, more than this build can address",
                                                       (unsigned long long)need);
    return (size_t)need;
}

/* A shard's name must stay inside the model's folder: a plain file name. */
static int plain_file_name(const char *s, size_t n) {
    if (!n || n > 255 || strlen(s) != n || strstr(s, "..")) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '/' || s[i] == '\\' || (unsigned char)s[i] < 0x20) return 0;
    return 1;
}

int av_hf_index_parse(av_hf_index *ix, void *work, size_t work_bytes, const void *json, size_t len) {
    if (!ix || !work || !json) return AV_ERR_NULL;
    memset(ix, 0, sizeof *ix);
    size_t need = av_hf_index_work(json, len);
    if (!need) return AV_ERR_FORMAT;
    if (work_bytes < need) return avi_model_fail(AV_ERR_WORKSPACE, "the index needs %zu bytes of workspace, %zu were given", need, work_bytes);
    uint32_t nn = avj_nodes(json, len);
    index_layout L;
    index_carve(&L, work, nn, len);
    avj_doc doc;
    if (avj_parse(&doc, L.nodes, nn, json, len) != 0) return FAIL("the index is not valid JSON: %s", avj_error());
    const avj_doc *d = &doc;
    if (d->node[0].type != AVJ_OBJECT) return FAIL("the index is %s, where an object belongs", json_type_name(d->node[0].type));
    int64_t meta = avj_get(d, 0, "metadata"), wm = avj_get(d, 0, "weight_map");
    if (meta >= 0 && d->node[meta].type != AVJ_OBJECT && d->node[meta].type != AVJ_NULL)
        return FAIL("the index's metadata is %s, where an object belongs", json_type_name(d->node[meta].type));
    if (wm < 0) return FAIL("the index has no weight_map");
    if (d->node[wm].type != AVJ_OBJECT) return FAIL("the index's weight_map is %s, where an object belongs", json_type_name(d->node[wm].type));
    int n = (int)d->node[wm].count;
    if (!n) return FAIL("the index's weight_map names no tensor");
    char *pool = L.pool, *pool_end = L.pool + len + nn + 1, shown[96];
    uint32_t k = (uint32_t)wm + 1;
    for (int i = 0; i < n; i++) {
        uint32_t v = d->node[k].next;
        int64_t kl = avj_string(d, k, pool, (size_t)(pool_end - pool));
        if (kl < 0) return FAIL("the index's weight_map entry %d could not be decoded", i);
        if (!kl || (int64_t)strlen(pool) != kl) return FAIL("the index's weight_map entry %d has an empty name or one holding NUL", i);
        L.name_doc[i] = pool;
        pool += kl + 1;
        if (d->node[v].type != AVJ_STRING)
            return FAIL("the index's weight_map gives %s %s, where a shard's file name belongs", clean(shown, sizeof shown, L.name_doc[i]),
                        json_type_name(d->node[v].type));
        int64_t vl = avj_string(d, v, pool, (size_t)(pool_end - pool));
        if (vl < 0 || !plain_file_name(pool, (size_t)vl))
            return FAIL("the index puts %s in a shard whose name is not a plain file name (empty, a path, \"..\" or over 255 bytes)",
                        clean(shown, sizeof shown, L.name_doc[i]));
        L.shard_doc[i] = pool;
        pool += vl + 1;
        k = d->node[v].next;
    }
    /* the distinct shards, in the order they first appear: group the entries by shard name (a sort,
     * equal names in document order), then number each group when its first entry comes by */
    for (int i = 0; i < n; i++) L.perm[i] = i;
    heapsort_idx(L.perm, n, cmp_names, L.shard_doc);
    for (int j = 0; j < n; j++) {
        int i = L.perm[j];
        L.first[i] = j && !strcmp(L.shard_doc[i], L.shard_doc[L.perm[j - 1]]) ? L.first[L.perm[j - 1]] : i;
    }
    int n_shards = 0;
    for (int i = 0; i < n; i++) {
        if (L.first[i] == i) L.sid[i] = n_shards, L.shard[n_shards++] = L.shard_doc[i];
        L.ts_doc[i] = L.sid[L.first[i]];
    }
    /* the tensors by name, each once */
    for (int i = 0; i < n; i++) L.perm[i] = i;
    heapsort_idx(L.perm, n, cmp_names, L.name_doc);
    for (int j = 0; j < n; j++) {
        L.tensor[j] = L.name_doc[L.perm[j]];
        L.tensor_shard[j] = L.ts_doc[L.perm[j]];
        if (j && !strcmp(L.tensor[j], L.tensor[j - 1]))
            return FAIL("the index lists the tensor %s twice", clean(shown, sizeof shown, L.tensor[j]));
    }
    ix->n_shards = n_shards;
    ix->n_tensors = n;
    ix->shard = L.shard;
    ix->tensor = L.tensor;
    ix->tensor_shard = L.tensor_shard;
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// binding

static const unsigned DTYPE_BYTES[3] = {4, 2, 2};
static const char *const DTYPE_NAME[3] = {"F32", "F16", "BF16"};

size_t av_hf_model_work(const av_hf_config *c) {
    avi_model_error_clear();
    if (!c) return 0;
    if (config_check(c)) return 0;
    avi_arena a = avi_arena_count();
    avi_take(&a, (uint64_t)c->n_layers * AV_LW_COUNT * sizeof(av_weight));
    return (size_t)a.used;
}

typedef struct bind_ctx {
    const av_hf_config *c;
    const av_st_file *files;
    int n_files;
    const av_hf_index *ix;
    const char *prefix;   /* "model." or "transformer.": the writers save with or without it */
    int scan;             /* 0: find and check shapes; 1: also check every value is finite */
} bind_ctx;

/* ix's entry for name, or −1 (binary search: tensor[] is in strcmp order). */
static int index_find(const av_hf_index *ix, const char *name) {
    int lo = 0, hi = ix->n_tensors - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, r = strcmp(ix->tensor[mid], name);
        if (!r) return mid;
        if (r < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* The tensor called name (with the prefix first when prefixed), in the shard the index names and no other;
 * NULL with *st set: AV_OK when it is simply absent, an error otherwise. */
static const av_st_tensor *find_tensor(const bind_ctx *b, const char *name, int prefixed, int *st) {
    char full[2][256], shown[96], shown2[96];
    int nv = 0;
    if (prefixed) snprintf(full[nv++], sizeof full[0], "%s%s", b->prefix, name);
    snprintf(full[nv++], sizeof full[0], "%s", name);
    *st = AV_OK;
    for (int v = 0; v < nv; v++) {
        const char *nm = full[v];
        int s = 0;
        if (b->ix) {
            int e = index_find(b->ix, nm);
            if (e < 0) continue;
            s = b->ix->tensor_shard[e];
        }
        const av_st_tensor *t = av_st_find(&b->files[s], nm);
        if (!t) {
            if (!b->ix) continue;
            *st = FAIL("the index puts %s in %s, which does not hold it", nm, clean(shown, sizeof shown, b->ix->shard[s]));
            return NULL;
        }
        for (int f = 0; f < b->n_files; f++)
            if (f != s && av_st_find(&b->files[f], nm)) {
                *st = FAIL("the tensor %s is in two shards, %s and %s", nm, clean(shown, sizeof shown, b->ix->shard[s]),
                           clean(shown2, sizeof shown2, b->ix->shard[f]));
                return NULL;
            }
        return t;
    }
    return NULL;
}

/* The shape as "[a, b]". */
static const char *shape_str(char *out, size_t cap, const av_st_tensor *t) {
    size_t at = 0;
    out[at++] = '[';
    out[at] = '\0';
    for (int i = 0; i < t->ndim && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s%llu", i ? ", " : "", (unsigned long long)t->shape[i]);
    if (at < cap - 1) out[at++] = ']', out[at] = '\0';
    return out;
}

/* 1 when the element's bits are NaN or ±Inf (exponent all ones); *neg its sign, *nan whether NaN. */
static int nonfinite_at(const unsigned char *p, int dtype, int *neg, int *nan_) {
    if (dtype == AV_ST_F32) {
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        *neg = (int)(u >> 31), *nan_ = (u & 0x7fffffu) != 0;
        return (u >> 23 & 0xffu) == 0xffu;
    }
    uint16_t h = (uint16_t)(p[0] | p[1] << 8);
    *neg = h >> 15;
    if (dtype == AV_ST_F16) return *nan_ = (h & 0x3ff) != 0, (h >> 10 & 0x1f) == 0x1f;
    return *nan_ = (h & 0x7f) != 0, (h >> 7 & 0xff) == 0xff;
}

static int check_finite(const av_st_tensor *t, const char *name) {
    unsigned sz = DTYPE_BYTES[t->dtype];
    const unsigned char *p = t->data;
    /* the exponent lies in the top bytes (little-endian): a quick test of those, the exact one on a hit */
    const int f16 = t->dtype == AV_ST_F16;
    for (uint64_t i = 0; i < t->count; i++, p += sz) {
        int neg, is_nan;
        if (f16 ? (p[1] & 0x7c) != 0x7c : (p[sz - 1] & 0x7f) != 0x7f || !(p[sz - 2] & 0x80)) continue;
        if (nonfinite_at(p, t->dtype, &neg, &is_nan))
            return avi_model_fail(AV_ERR_NONFINITE, "the tensor %s holds %s at index %llu (a %s value): every weight must be finite",
                                  name, is_nan ? "NaN" : neg ? "-Inf" : "+Inf", (unsigned long long)i, DTYPE_NAME[t->dtype]);
    }
    return AV_OK;
}

/* Find name (required or not), check its shape is [rows] (cols < 0) or [rows, cols], scan it when the pass
 * scans; *out the tensor, NULL when absent and optional. */
static int need(const bind_ctx *b, const av_st_tensor **out, const char *name, int prefixed, int required, int64_t rows, int64_t cols) {
    int st;
    char full[256], got[200];
    const av_st_tensor *t = find_tensor(b, name, prefixed, &st);
    *out = t;
    if (st) return st;
    snprintf(full, sizeof full, "%s%s", prefixed ? b->prefix : "", name);
    if (!t) return required ? FAIL("the checkpoint has no tensor %s", full) : AV_OK;
    if (t->dtype != AV_ST_F32 && t->dtype != AV_ST_F16 && t->dtype != AV_ST_BF16)
        return FAIL("the tensor %s is stored in a dtype attnviz does not compute with (its weights must be F32, F16 or BF16)", t->name);
    int ok = cols < 0 ? t->ndim == 1 && t->shape[0] == (uint64_t)rows
                      : t->ndim == 2 && t->shape[0] == (uint64_t)rows && t->shape[1] == (uint64_t)cols;
    if (!ok) {
        if (cols < 0) return FAIL("the tensor %s has shape %s, the config needs [%lld]", t->name, shape_str(got, sizeof got, t), (long long)rows);
        return FAIL("the tensor %s has shape %s, the config needs [%lld, %lld]", t->name, shape_str(got, sizeof got, t),
                    (long long)rows, (long long)cols);
    }
    return b->scan ? check_finite(t, t->name) : AV_OK;
}

/* A weight over tensor t starting `offset` elements in. */
static av_weight view(const av_st_tensor *t, int trans, int64_t ld, int64_t offset) {
    av_weight w = {NULL, 0, 0, 0};
    if (!t) return w;
    w.p = t->data + (uint64_t)offset * DTYPE_BYTES[t->dtype];
    w.dtype = t->dtype, w.trans = trans, w.ld = ld;
    return w;
}

static int bind_llama(const bind_ctx *b, av_model *m, av_weight *layer) {
    const av_hf_config *c = b->c;
    const int64_t D = c->dim, F = c->hidden_dim, QD = (int64_t)c->n_heads * c->head_size,
                  KD = (int64_t)c->n_kv_heads * c->head_size, HS = c->head_size, V = c->vocab_size;
    const av_st_tensor *t;
    int st;
    char nm[128];
    t = find_tensor(b, "embed_tokens.weight", 1, &st);
    if (st) return st;
    if (t && t->ndim == 2 && t->shape[0] != (uint64_t)V && t->shape[1] == (uint64_t)D)
        return FAIL("config.json's vocab_size is %d but %s has %llu rows", c->vocab_size, t->name, (unsigned long long)t->shape[0]);
    if ((st = need(b, &t, "embed_tokens.weight", 1, 1, V, D))) return st;
    m->emb = view(t, 0, D, 0);
    if ((st = need(b, &t, "norm.weight", 1, 1, D, -1))) return st;
    m->final_norm = view(t, 0, D, 0);
    if (c->tie_word_embeddings) m->cls = m->emb; /* as transformers ties them: an lm_head in the file is not read */
    else {
        if ((st = need(b, &t, "lm_head.weight", 0, 1, V, D))) return st;
        m->cls = view(t, 0, D, 0);
    }
    static const struct { const char *name; int slot, kind; } L[] = {
        /* kind: 0 always; 1 qkv_bias; 2 attention_bias; 3 qk_norm; 4 mlp_bias */
        {"input_layernorm.weight", AV_LW_ATTN_NORM, 0}, {"self_attn.q_proj.weight", AV_LW_Q, 0},
        {"self_attn.k_proj.weight", AV_LW_K, 0}, {"self_attn.v_proj.weight", AV_LW_V, 0},
        {"self_attn.o_proj.weight", AV_LW_O, 0}, {"self_attn.q_proj.bias", AV_LW_Q_B, 1},
        {"self_attn.k_proj.bias", AV_LW_K_B, 1}, {"self_attn.v_proj.bias", AV_LW_V_B, 1},
        {"self_attn.o_proj.bias", AV_LW_O_B, 2}, {"self_attn.q_norm.weight", AV_LW_Q_NORM, 3},
        {"self_attn.k_norm.weight", AV_LW_K_NORM, 3}, {"post_attention_layernorm.weight", AV_LW_FFN_NORM, 0},
        {"mlp.gate_proj.weight", AV_LW_GATE, 0}, {"mlp.up_proj.weight", AV_LW_UP, 0},
        {"mlp.down_proj.weight", AV_LW_DOWN, 0}, {"mlp.gate_proj.bias", AV_LW_GATE_B, 4},
        {"mlp.up_proj.bias", AV_LW_UP_B, 4}, {"mlp.down_proj.bias", AV_LW_DOWN_B, 4},
    };
    const int on[5] = {1, c->qkv_bias, c->attention_bias, c->qk_norm, c->mlp_bias};
    for (int l = 0; l < c->n_layers; l++) {
        av_weight *w = layer + (size_t)l * AV_LW_COUNT;
        for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
            if (!on[L[i].kind]) continue;
            int64_t rows, cols = -1;
            switch (L[i].slot) {
            case AV_LW_Q: rows = QD, cols = D; break;
            case AV_LW_K: case AV_LW_V: rows = KD, cols = D; break;
            case AV_LW_O: rows = D, cols = QD; break;
            case AV_LW_Q_B: rows = QD; break;
            case AV_LW_K_B: case AV_LW_V_B: rows = KD; break;
            case AV_LW_Q_NORM: case AV_LW_K_NORM: rows = HS; break;
            case AV_LW_GATE: case AV_LW_UP: rows = F, cols = D; break;
            case AV_LW_DOWN: rows = D, cols = F; break;
            case AV_LW_GATE_B: case AV_LW_UP_B: rows = F; break;
            default: rows = D; break; /* the norms, o_proj's and down_proj's biases */
            }
            snprintf(nm, sizeof nm, "layers.%d.%s", l, L[i].name);
            if ((st = need(b, &t, nm, 1, 1, rows, cols))) return st;
            w[L[i].slot] = view(t, 0, cols < 0 ? rows : cols, 0);
        }
    }
    return AV_OK;
}

static int bind_gpt2(const bind_ctx *b, av_model *m, av_weight *layer) {
    const av_hf_config *c = b->c;
    const int64_t D = c->dim, F = c->hidden_dim, V = c->vocab_size;
    const av_st_tensor *t;
    int st;
    char nm[128];
    t = find_tensor(b, "wte.weight", 1, &st);
    if (st) return st;
    if (t && t->ndim == 2 && t->shape[0] != (uint64_t)V && t->shape[1] == (uint64_t)D)
        return FAIL("config.json's vocab_size is %d but %s has %llu rows", c->vocab_size, t->name, (unsigned long long)t->shape[0]);
    if ((st = need(b, &t, "wte.weight", 1, 1, V, D))) return st;
    m->emb = view(t, 0, D, 0);
    if ((st = need(b, &t, "wpe.weight", 1, 1, c->context, D))) return st;
    m->pos_emb = view(t, 0, D, 0);
    if ((st = need(b, &t, "ln_f.weight", 1, 1, D, -1))) return st;
    m->final_norm = view(t, 0, D, 0);
    if ((st = need(b, &t, "ln_f.bias", 1, 1, D, -1))) return st;
    m->final_norm_b = view(t, 0, D, 0);
    if (c->tie_word_embeddings) m->cls = m->emb;
    else {
        if ((st = need(b, &t, "lm_head.weight", 0, 1, V, D))) return st;
        m->cls = view(t, 0, D, 0);
    }
    for (int l = 0; l < c->n_layers; l++) {
        av_weight *w = layer + (size_t)l * AV_LW_COUNT;
#define GET(suffix, rows, cols) \
    snprintf(nm, sizeof nm, "h.%d.%s", l, suffix); \
    if ((st = need(b, &t, nm, 1, 1, rows, cols))) return st;
        GET("ln_1.weight", D, -1) w[AV_LW_ATTN_NORM] = view(t, 0, D, 0);
        GET("ln_1.bias", D, -1) w[AV_LW_ATTN_NORM_B] = view(t, 0, D, 0);
        /* Conv1D stores [in, out] and computes x·W: the fused c_attn is three column blocks, Q K V */
        GET("attn.c_attn.weight", D, 3 * D)
        w[AV_LW_Q] = view(t, 1, 3 * D, 0), w[AV_LW_K] = view(t, 1, 3 * D, D), w[AV_LW_V] = view(t, 1, 3 * D, 2 * D);
        GET("attn.c_attn.bias", 3 * D, -1)
        w[AV_LW_Q_B] = view(t, 0, D, 0), w[AV_LW_K_B] = view(t, 0, D, D), w[AV_LW_V_B] = view(t, 0, D, 2 * D);
        GET("attn.c_proj.weight", D, D) w[AV_LW_O] = view(t, 1, D, 0);
        GET("attn.c_proj.bias", D, -1) w[AV_LW_O_B] = view(t, 0, D, 0);
        GET("ln_2.weight", D, -1) w[AV_LW_FFN_NORM] = view(t, 0, D, 0);
        GET("ln_2.bias", D, -1) w[AV_LW_FFN_NORM_B] = view(t, 0, D, 0);
        GET("mlp.c_fc.weight", D, F) w[AV_LW_UP] = view(t, 1, F, 0);
        GET("mlp.c_fc.bias", F, -1) w[AV_LW_UP_B] = view(t, 0, F, 0);
        GET("mlp.c_proj.weight", F, D) w[AV_LW_DOWN] = view(t, 1, D, 0);
        GET("mlp.c_proj.bias", D, -1) w[AV_LW_DOWN_B] = view(t, 0, D, 0);
#undef GET
    }
    return AV_OK;
}

int av_hf_model_bind(av_model *m, const av_hf_config *c, const av_st_file *files, int n_files, const av_hf_index *ix,
                     int max_seq, void *work, size_t work_bytes) {
    if (!m || !c || !files || !work) return AV_ERR_NULL;
    memset(m, 0, sizeof *m);
    avi_model_error_clear();
    if (max_seq < 1 || max_seq > AV_MODEL_MAX_SEQ)
        return avi_model_fail(AV_ERR_SIZE, "max_seq %d is outside 1..%d", max_seq, AV_MODEL_MAX_SEQ);
    if (ix ? n_files != ix->n_shards : n_files != 1) {
        if (ix) return FAIL("the index names %d shards but %d files were given", ix->n_shards, n_files);
        return avi_model_fail(AV_ERR_SIZE, "%d files were given without an index: one file, or an index for several", n_files);
    }
    if (ix && (ix->n_tensors < 1 || !ix->tensor || !ix->tensor_shard || !ix->shard)) return AV_ERR_NULL;
    size_t need_bytes = av_hf_model_work(c);
    if (!need_bytes) return AV_ERR_FORMAT; /* the config's reason is set */
    if (work_bytes < need_bytes)
        return avi_model_fail(AV_ERR_WORKSPACE, "the model needs %zu bytes of workspace, %zu were given", need_bytes, work_bytes);
    for (int f = 0; f < n_files; f++)
        if (files[f].n_tensors < 0 || (files[f].n_tensors && !files[f].by_name)) return AV_ERR_NULL;
    if (ix)
        for (int e = 0; e < ix->n_tensors; e++)
            if (ix->tensor_shard[e] < 0 || ix->tensor_shard[e] >= ix->n_shards) return avi_model_fail(AV_ERR_SIZE, "the index is not one av_hf_index_parse wrote");
    avi_arena a = avi_arena_over(work);
    av_weight *layer = avi_take(&a, (uint64_t)c->n_layers * AV_LW_COUNT * sizeof(av_weight));
    bind_ctx b = {c, files, n_files, ix, c->arch == AV_ARCH_GPT2 ? "transformer." : "model.", 0};
    int st = AV_OK;
    /* every tensor found and its shape right before any value is read */
    for (b.scan = 0; b.scan < 2 && !st; b.scan++) {
        memset(layer, 0, (size_t)c->n_layers * AV_LW_COUNT * sizeof(av_weight));
        st = c->arch == AV_ARCH_GPT2 ? bind_gpt2(&b, m, layer) : bind_llama(&b, m, layer);
    }
    if (st) {
        char keep[256];
        snprintf(keep, sizeof keep, "%s", av_model_error());
        memset(m, 0, sizeof *m);
        return avi_model_fail(st, "%s", keep);
    }
    m->dim = c->dim, m->hidden_dim = c->hidden_dim, m->n_layers = c->n_layers, m->n_heads = c->n_heads;
    m->n_kv_heads = c->n_kv_heads, m->vocab_size = c->vocab_size, m->head_size = c->head_size;
    m->kv_dim = c->n_kv_heads * c->head_size, m->shared_classifier = c->tie_word_embeddings;
    int seq = c->context < max_seq ? c->context : max_seq;
    if (c->sliding_window && c->sliding_window < seq) seq = c->sliding_window;
    m->seq_len = seq;
    m->arch = c->arch, m->context = c->context;
    m->bos_id = c->bos_id, m->n_eos = c->n_eos;
    memcpy(m->eos_id, c->eos_id, sizeof m->eos_id);
    m->norm_eps = c->norm_eps, m->rope_theta = c->arch == AV_ARCH_GPT2 ? 0 : c->rope_theta;
    m->rope_llama3 = c->rope_llama3, m->rope_factor = c->rope_factor, m->rope_low_freq = c->rope_low_freq;
    m->rope_high_freq = c->rope_high_freq, m->rope_original_context = c->rope_original_context;
    m->sliding_window = c->sliding_window;
    m->layer = layer;
    return AV_OK;
}

/* The elements of weight slot s of a layer, from the model's sizes. */
static uint64_t layer_weight_count(const av_model *m, int s) {
    uint64_t D = (uint64_t)m->dim, F = (uint64_t)m->hidden_dim, QD = (uint64_t)m->n_heads * (uint64_t)m->head_size,
             KD = (uint64_t)m->kv_dim;
    switch (s) {
    case AV_LW_Q: return QD * D;
    case AV_LW_K: case AV_LW_V: return KD * D;
    case AV_LW_O: return D * QD;
    case AV_LW_Q_B: return QD;
    case AV_LW_K_B: case AV_LW_V_B: return KD;
    case AV_LW_Q_NORM: case AV_LW_K_NORM: return (uint64_t)m->head_size;
    case AV_LW_GATE: case AV_LW_UP: case AV_LW_DOWN: return F * D;
    case AV_LW_GATE_B: case AV_LW_UP_B: return F;
    default: return D;
    }
}

static uint64_t weight_bytes(const av_weight *w, uint64_t count) {
    return w->p && w->dtype >= 0 && w->dtype <= 2 ? count * DTYPE_BYTES[w->dtype] : 0;
}

uint64_t av_hf_model_bytes(const av_model *m) {
    if (!m || (m->arch != AV_ARCH_LLAMA && m->arch != AV_ARCH_GPT2) || !m->layer || m->n_layers < 1 ||
        m->n_layers > AV_MODEL_MAX_LAYERS)
        return 0;
    uint64_t D = (uint64_t)(m->dim > 0 ? m->dim : 0), V = (uint64_t)(m->vocab_size > 0 ? m->vocab_size : 0);
    uint64_t total = weight_bytes(&m->emb, V * D) + weight_bytes(&m->final_norm, D) + weight_bytes(&m->final_norm_b, D);
    if (m->pos_emb.p) total += weight_bytes(&m->pos_emb, (uint64_t)(m->context > 0 ? m->context : 0) * D);
    if (m->cls.p != m->emb.p) total += weight_bytes(&m->cls, V * D); /* tied: the same bytes */
    for (int l = 0; l < m->n_layers; l++)
        for (int s = 0; s < AV_LW_COUNT; s++) total += weight_bytes(&m->layer[(size_t)l * AV_LW_COUNT + s], layer_weight_count(m, s));
    return total;
}
