/* check_hf_model.c: Hugging Face model folders (src/hf_model.c, docs/hf.md): config.json for each
 * architecture (defaults, ranges, every refusal naming its field), model.safetensors.index.json, and the
 * binding of small safetensors files built here in memory: every architecture binds with its weights'
 * views on the right bytes (GPT-2's fused c_attn split into three), in F32, F16, BF16 and a mix, whole or
 * sharded, with and without the writers' prefixes; and every refusal (a missing tensor, a wrong shape, a
 * vocabulary that disagrees, NaN or Inf in each dtype, shards the index contradicts) has its test. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

// ----------------------------------------------------------------------------------------------------
// helpers: configs

static int cfg(av_hf_config *c, const char *json) { return av_hf_config_parse(c, json, strlen(json)); }

/* json is refused (AV_ERR_FORMAT) with one line containing want. */
static void cfg_refused(const char *json, const char *want) {
    av_hf_config c;
    int st = cfg(&c, json);
    ck_assert_msg(st == AV_ERR_FORMAT, "accepted (%d): %s", st, json);
    ck_assert_msg(strstr(av_model_error(), want), "for %s: the sentence \"%s\" lacks \"%s\"", json, av_model_error(), want);
    ck_assert_msg(!strchr(av_model_error(), '\n'), "more than one line: %s", av_model_error());
    ck_assert_int_eq(c.arch, 0); /* nothing half-filled */
}

#define LLAMA_SIZES "\"hidden_size\":8,\"intermediate_size\":12,\"num_hidden_layers\":2,\"num_attention_heads\":2," \
                    "\"vocab_size\":16,\"max_position_embeddings\":32"

// ----------------------------------------------------------------------------------------------------
// helpers: safetensors files in memory

typedef struct tspec {
    char name[96];
    int dtype; /* enum av_st_dtype */
    int ndim;
    uint64_t shape[2];
} tspec;

static const unsigned DSZ[3] = {4, 2, 2};
static const char *const DNAME[3] = {"F32", "F16", "BF16"};

/* Element i of tensor k: a multiple of 1/4 in [−30, 32.5], exact in F32, F16 and BF16. */
static float value_of(int k, uint64_t i) { return (float)((i * 7 + (uint64_t)k * 3) % 251) * 0.25f - 30.0f; }

static void put(unsigned char *p, int dtype, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    if (dtype == AV_ST_F32) {
        for (int b = 0; b < 4; b++) p[b] = (unsigned char)(u >> (8 * b));
        return;
    }
    uint16_t h;
    if (dtype == AV_ST_BF16) h = (uint16_t)(u >> 16); /* exact for these values */
    else if ((u & 0x7fffffffu) == 0) h = (uint16_t)(u >> 16);
    else h = (uint16_t)((u >> 16 & 0x8000u) | ((((u >> 23) & 0xffu) - 127 + 15) << 10) | ((u >> 13) & 0x3ffu));
    p[0] = (unsigned char)h, p[1] = (unsigned char)(h >> 8);
}

/* A .safetensors file of ts[0..n) (data in that order, values value_of) into a malloc'd buffer. */
static unsigned char *st_build(size_t *len, const tspec *ts, int n) {
    size_t hcap = 256 + (size_t)n * 200, at = 0;
    char *h = malloc(hcap);
    uint64_t off = 0;
    at += (size_t)snprintf(h + at, hcap - at, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int k = 0; k < n; k++) {
        uint64_t count = 1;
        for (int d = 0; d < ts[k].ndim; d++) count *= ts[k].shape[d];
        uint64_t bytes = count * DSZ[ts[k].dtype];
        at += (size_t)snprintf(h + at, hcap - at, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", ts[k].name, DNAME[ts[k].dtype]);
        for (int d = 0; d < ts[k].ndim; d++) at += (size_t)snprintf(h + at, hcap - at, "%s%llu", d ? "," : "", (unsigned long long)ts[k].shape[d]);
        at += (size_t)snprintf(h + at, hcap - at, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off, (unsigned long long)(off + bytes));
        off += bytes;
    }
    at += (size_t)snprintf(h + at, hcap - at, "}");
    while (at % 8) h[at++] = ' ';
    unsigned char *buf = malloc(8 + at + off + 1);
    for (int b = 0; b < 8; b++) buf[b] = (unsigned char)((uint64_t)at >> (8 * b));
    memcpy(buf + 8, h, at);
    unsigned char *p = buf + 8 + at;
    for (int k = 0; k < n; k++) {
        uint64_t count = 1;
        for (int d = 0; d < ts[k].ndim; d++) count *= ts[k].shape[d];
        for (uint64_t i = 0; i < count; i++, p += DSZ[ts[k].dtype]) put(p, ts[k].dtype, value_of(k, i));
    }
    free(h);
    *len = 8 + at + off;
    return buf;
}

/* A parsed file and the memory behind it. */
typedef struct stf {
    unsigned char *buf;
    void *work;
    size_t len;
    av_st_file f;
} stf;

static void st_open(stf *s, const tspec *ts, int n) {
    s->buf = st_build(&s->len, ts, n);
    size_t w = av_st_work(s->buf, s->len);
    ck_assert_msg(w > 0, "av_st_work refused the test's file: %s", av_st_error());
    s->work = malloc(w);
    ck_assert_int_eq(av_st_parse(&s->f, s->work, w, s->buf, s->len), AV_OK);
}
static void st_close(stf *s) {
    free(s->buf);
    free(s->work);
}

/* The model a test builds: sizes, flags, names' prefix, dtypes. */
typedef struct mspec {
    int gpt2;
    int D, F, H, KV, HS, V, L, ctx;
    int tie, qkv_bias, o_bias, mlp_bias, qk_norm;
    int lm_head_too;      /* write lm_head.weight even when tied */
    const char *prefix;   /* "model.", "transformer." or "" */
    int mix;              /* dtypes cycle F32, F16, BF16 tensor by tensor; else all `dtype` */
    int dtype;
    int extras;           /* tensors the architectures do not read (rotary inv_freq, GPT-2's attn.bias) */
} mspec;

static int add(tspec *ts, int n, const mspec *s, const char *pre, const char *name, uint64_t r, int64_t c) {
    snprintf(ts[n].name, sizeof ts[n].name, "%s%s", pre, name);
    ts[n].dtype = s->mix ? n % 3 : s->dtype;
    ts[n].ndim = c < 0 ? 1 : 2;
    ts[n].shape[0] = r, ts[n].shape[1] = c < 0 ? 0 : (uint64_t)c;
    return n + 1;
}

/* The tensors of the model s describes, in a natural order. */
static int model_tensors(tspec *ts, const mspec *s) {
    int n = 0;
    char nm[96];
    const char *p = s->prefix;
    if (s->gpt2) {
        uint64_t D = (uint64_t)s->D, F = (uint64_t)s->F;
        n = add(ts, n, s, p, "wte.weight", (uint64_t)s->V, s->D);
        n = add(ts, n, s, p, "wpe.weight", (uint64_t)s->ctx, s->D);
        for (int l = 0; l < s->L; l++) {
#define G(suffix, r, c) snprintf(nm, sizeof nm, "h.%d.%s", l, suffix), n = add(ts, n, s, p, nm, r, c)
            G("ln_1.weight", D, -1); G("ln_1.bias", D, -1);
            if (s->extras) G("attn.bias", 1, (int64_t)s->ctx);
            G("attn.c_attn.weight", D, (int64_t)(3 * D)); G("attn.c_attn.bias", 3 * D, -1);
            G("attn.c_proj.weight", D, (int64_t)D); G("attn.c_proj.bias", D, -1);
            G("ln_2.weight", D, -1); G("ln_2.bias", D, -1);
            G("mlp.c_fc.weight", D, (int64_t)F); G("mlp.c_fc.bias", F, -1);
            G("mlp.c_proj.weight", F, (int64_t)D); G("mlp.c_proj.bias", D, -1);
#undef G
        }
        n = add(ts, n, s, p, "ln_f.weight", D, -1);
        n = add(ts, n, s, p, "ln_f.bias", D, -1);
        if (!s->tie || s->lm_head_too) n = add(ts, n, s, "", "lm_head.weight", (uint64_t)s->V, s->D);
        return n;
    }
    uint64_t D = (uint64_t)s->D, F = (uint64_t)s->F, QD = (uint64_t)(s->H * s->HS), KD = (uint64_t)(s->KV * s->HS);
    n = add(ts, n, s, p, "embed_tokens.weight", (uint64_t)s->V, s->D);
    for (int l = 0; l < s->L; l++) {
#define G(suffix, r, c) snprintf(nm, sizeof nm, "layers.%d.%s", l, suffix), n = add(ts, n, s, p, nm, r, c)
        G("input_layernorm.weight", D, -1);
        G("self_attn.q_proj.weight", QD, (int64_t)D);
        G("self_attn.k_proj.weight", KD, (int64_t)D);
        G("self_attn.v_proj.weight", KD, (int64_t)D);
        G("self_attn.o_proj.weight", D, (int64_t)QD);
        if (s->qkv_bias) { G("self_attn.q_proj.bias", QD, -1); G("self_attn.k_proj.bias", KD, -1); G("self_attn.v_proj.bias", KD, -1); }
        if (s->o_bias) G("self_attn.o_proj.bias", D, -1);
        if (s->qk_norm) { G("self_attn.q_norm.weight", (uint64_t)s->HS, -1); G("self_attn.k_norm.weight", (uint64_t)s->HS, -1); }
        if (s->extras) G("self_attn.rotary_emb.inv_freq", (uint64_t)s->HS / 2, -1);
        G("post_attention_layernorm.weight", D, -1);
        G("mlp.gate_proj.weight", F, (int64_t)D);
        G("mlp.up_proj.weight", F, (int64_t)D);
        G("mlp.down_proj.weight", D, (int64_t)F);
        if (s->mlp_bias) { G("mlp.gate_proj.bias", F, -1); G("mlp.up_proj.bias", F, -1); G("mlp.down_proj.bias", D, -1); }
#undef G
    }
    n = add(ts, n, s, p, "norm.weight", D, -1);
    if (!s->tie || s->lm_head_too) n = add(ts, n, s, "", "lm_head.weight", (uint64_t)s->V, s->D);
    return n;
}

static tspec g_ts[512];

/* Bind one file made of ts[0..n) under config json; the status (the model and the file stay for checks). */
typedef struct bound {
    av_hf_config c;
    stf s;
    av_model m;
    void *work;
    int st;
} bound;

static void bind_one(bound *b, const char *json, const tspec *ts, int n, int max_seq) {
    ck_assert_msg(cfg(&b->c, json) == AV_OK, "config refused: %s (%s)", av_model_error(), json);
    st_open(&b->s, ts, n);
    size_t w = av_hf_model_work(&b->c);
    ck_assert_uint_gt(w, 0);
    b->work = malloc(w);
    b->st = av_hf_model_bind(&b->m, &b->c, &b->s.f, 1, NULL, max_seq, b->work, w);
}
static void unbind(bound *b) {
    st_close(&b->s);
    free(b->work);
}

/* The element (r, c) of weight w as float (r: output, c: input), or element r of a vector (c = −1). */
static float weight_at(const av_weight *w, int64_t r, int64_t c) {
    int64_t i = c < 0 ? r : w->trans ? c * w->ld + r : r * w->ld + c;
    const unsigned char *p = (const unsigned char *)w->p + i * (int64_t)DSZ[w->dtype];
    if (w->dtype == AV_ST_F32) {
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    uint16_t h = (uint16_t)(p[0] | p[1] << 8);
    return w->dtype == AV_ST_F16 ? av_f16_to_f32(h) : av_bf16_to_f32(h);
}

/* The value the file holds at [a][b] of tensor `name` (k its position in ts), as built. */
static int tensor_index(const tspec *ts, int n, const char *name) {
    for (int k = 0; k < n; k++)
        if (!strcmp(ts[k].name, name)) return k;
    ck_abort_msg("no tensor %s in the test's list", name);
    return -1;
}

/* Weight w is tensor `name` itself (trans 0, row-major, ld its row length): pointer, dtype and values. */
static void is_tensor(const av_weight *w, const bound *b, const tspec *ts, int n, const char *name) {
    int k = tensor_index(ts, n, name);
    const av_st_tensor *t = av_st_find(&b->s.f, name);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(w->p == (const void *)t->data, "%s: the weight does not point at the tensor's data", name);
    ck_assert_int_eq(w->dtype, ts[k].dtype);
    ck_assert_int_eq(w->trans, 0);
    int64_t cols = ts[k].ndim == 2 ? (int64_t)ts[k].shape[1] : -1;
    ck_assert_int_eq(w->ld, cols < 0 ? (int64_t)ts[k].shape[0] : cols);
    uint64_t rows = ts[k].shape[0];
    for (uint64_t r = 0; r < rows; r += rows > 5 ? rows / 5 : 1)
        for (int64_t c = cols < 0 ? -1 : 0; c < (cols < 0 ? 0 : cols); c++)
            ck_assert_float_eq(weight_at(w, (int64_t)r, c), value_of(k, cols < 0 ? r : r * (uint64_t)cols + (uint64_t)c));
}

static uint64_t bytes_of(const tspec *ts, int n, int skip_lm_head) {
    uint64_t total = 0;
    for (int k = 0; k < n; k++) {
        if (strstr(ts[k].name, "inv_freq") || (strstr(ts[k].name, "attn.bias") && !strstr(ts[k].name, "c_attn"))) continue;
        if (skip_lm_head && !strcmp(ts[k].name, "lm_head.weight")) continue;
        total += ts[k].shape[0] * (ts[k].ndim == 2 ? ts[k].shape[1] : 1) * DSZ[ts[k].dtype];
    }
    return total;
}

// ----------------------------------------------------------------------------------------------------
// config.json

START_TEST(test_config_llama) {
    av_hf_config c;
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"LlamaForCausalLM\"]," LLAMA_SIZES ",\"unknown_field\":[1,{\"x\":null}]}"), AV_OK);
    ck_assert_int_eq(c.arch, AV_ARCH_LLAMA);
    ck_assert_str_eq(c.architecture, "LlamaForCausalLM");
    ck_assert_str_eq(c.model_type, "llama");
    ck_assert_int_eq(c.dim, 8); ck_assert_int_eq(c.hidden_dim, 12); ck_assert_int_eq(c.n_layers, 2);
    ck_assert_int_eq(c.n_heads, 2); ck_assert_int_eq(c.n_kv_heads, 2); ck_assert_int_eq(c.head_size, 4);
    ck_assert_int_eq(c.vocab_size, 16); ck_assert_int_eq(c.context, 32);
    ck_assert_int_eq(c.tie_word_embeddings, 0);
    ck_assert_int_eq(c.attention_bias + c.mlp_bias + c.qkv_bias + c.qk_norm, 0);
    ck_assert_int_eq(c.bos_id, 1); ck_assert_int_eq(c.n_eos, 1); ck_assert_int_eq(c.eos_id[0], 2);
    ck_assert_double_eq(c.norm_eps, 1e-6); ck_assert_double_eq(c.rope_theta, 10000.0);
    ck_assert_int_eq(c.rope_llama3, 0); ck_assert_int_eq(c.sliding_window, 0);
    /* everything given; model_type alone decides when architectures is absent; 2.0 is an integer */
    ck_assert_int_eq(cfg(&c, "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":3,"
                             "\"num_attention_heads\":8,\"num_key_value_heads\":2.0,\"head_dim\":16,\"vocab_size\":300,"
                             "\"max_position_embeddings\":131072,\"rms_norm_eps\":1e-5,\"rope_theta\":500000.0,"
                             "\"tie_word_embeddings\":true,\"attention_bias\":true,\"mlp_bias\":true,\"hidden_act\":\"silu\","
                             "\"bos_token_id\":null,\"eos_token_id\":[7,8,9,10,11,12],\"torch_dtype\":\"bfloat16\","
                             "\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":8.0,\"low_freq_factor\":1.0,"
                             "\"high_freq_factor\":4.0,\"original_max_position_embeddings\":8192}}"),
                     AV_OK);
    ck_assert_str_eq(c.architecture, "LlamaForCausalLM");
    ck_assert_int_eq(c.n_kv_heads, 2); ck_assert_int_eq(c.head_size, 16); ck_assert_int_eq(c.context, 131072);
    ck_assert_int_eq(c.tie_word_embeddings, 1);
    ck_assert_int_eq(c.attention_bias, 1); ck_assert_int_eq(c.qkv_bias, 1); ck_assert_int_eq(c.mlp_bias, 1);
    ck_assert_int_eq(c.bos_id, -1); ck_assert_int_eq(c.n_eos, 4);
    ck_assert_int_eq(c.eos_id[0], 7); ck_assert_int_eq(c.eos_id[3], 10);
    ck_assert_double_eq(c.norm_eps, 1e-5); ck_assert_double_eq(c.rope_theta, 500000.0);
    ck_assert_int_eq(c.rope_llama3, 1);
    ck_assert_double_eq(c.rope_factor, 8); ck_assert_double_eq(c.rope_low_freq, 1); ck_assert_double_eq(c.rope_high_freq, 4);
    ck_assert_double_eq(c.rope_original_context, 8192);
    /* transformers 5's rope_parameters, with the older "type" key; eos null */
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"LlamaForCausalLM\"]," LLAMA_SIZES ",\"eos_token_id\":null,"
                             "\"rope_parameters\":{\"rope_theta\":123.0,\"type\":\"llama3\",\"factor\":2,\"low_freq_factor\":1,"
                             "\"high_freq_factor\":2,\"original_max_position_embeddings\":16}}"),
                     AV_OK);
    ck_assert_double_eq(c.rope_theta, 123.0); ck_assert_int_eq(c.rope_llama3, 1); ck_assert_int_eq(c.n_eos, 0);
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"LlamaForCausalLM\"]," LLAMA_SIZES ",\"rope_scaling\":{\"rope_type\":\"default\"},"
                             "\"rope_theta\":77}"),
                     AV_OK);
    ck_assert_int_eq(c.rope_llama3, 0); ck_assert_double_eq(c.rope_theta, 77);
    /* a default id past a small vocabulary is dropped; a written one is refused (below) */
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":8,\"intermediate_size\":12,"
                             "\"num_hidden_layers\":1,\"num_attention_heads\":2,\"vocab_size\":2}"),
                     AV_OK);
    ck_assert_int_eq(c.bos_id, 1); ck_assert_int_eq(c.n_eos, 0);
}
END_TEST

START_TEST(test_config_family) {
    av_hf_config c;
    /* Mistral: head_dim apart from hidden/heads, kv heads default 8, the window 4096 unless null */
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"MistralForCausalLM\"],\"model_type\":\"mistral\",\"hidden_size\":40,"
                             "\"intermediate_size\":12,\"num_hidden_layers\":1,\"num_attention_heads\":16,\"head_dim\":6,"
                             "\"vocab_size\":16}"),
                     AV_OK);
    ck_assert_int_eq(c.n_kv_heads, 8); ck_assert_int_eq(c.head_size, 6); ck_assert_int_eq(c.sliding_window, 4096);
    ck_assert_int_eq(c.context, 131072); ck_assert_int_eq(c.qkv_bias, 0);
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"MistralForCausalLM\"]," LLAMA_SIZES ",\"num_key_value_heads\":null,"
                             "\"sliding_window\":null,\"attention_bias\":true}"),
                     AV_OK);
    ck_assert_int_eq(c.n_kv_heads, 2); ck_assert_int_eq(c.sliding_window, 0); ck_assert_int_eq(c.attention_bias, 0);
    /* Qwen2: q/k/v biases always, no o bias; the window only with use_sliding_window */
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"Qwen2ForCausalLM\"]," LLAMA_SIZES ",\"num_key_value_heads\":1,"
                             "\"sliding_window\":64,\"tie_word_embeddings\":true}"),
                     AV_OK);
    ck_assert_int_eq(c.qkv_bias, 1); ck_assert_int_eq(c.attention_bias, 0); ck_assert_int_eq(c.qk_norm, 0);
    ck_assert_int_eq(c.sliding_window, 0); ck_assert_int_eq(c.bos_id, -1); ck_assert_int_eq(c.n_eos, 0);
    ck_assert_int_eq(c.tie_word_embeddings, 1);
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"Qwen2ForCausalLM\"]," LLAMA_SIZES ",\"num_key_value_heads\":1,"
                             "\"use_sliding_window\":true,\"sliding_window\":64,\"max_window_layers\":0}"),
                     AV_OK);
    ck_assert_int_eq(c.sliding_window, 64);
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"Qwen2ForCausalLM\"]," LLAMA_SIZES ",\"num_key_value_heads\":1,"
                             "\"use_sliding_window\":true,\"sliding_window\":64,\"max_window_layers\":2}"),
                     AV_OK);
    ck_assert_int_eq(c.sliding_window, 0); /* no layer past max_window_layers */
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"Qwen2ForCausalLM\"]," LLAMA_SIZES ",\"num_key_value_heads\":1,"
                             "\"use_sliding_window\":true,\"sliding_window\":64,"
                             "\"layer_types\":[\"sliding_attention\",\"sliding_attention\"]}"),
                     AV_OK);
    ck_assert_int_eq(c.sliding_window, 64);
    /* Qwen3: head_dim 128 when absent, q/k norms, attention_bias read */
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"Qwen3ForCausalLM\"],\"hidden_size\":8,\"intermediate_size\":12,"
                             "\"num_hidden_layers\":1,\"num_attention_heads\":2,\"num_key_value_heads\":1,\"vocab_size\":16,"
                             "\"attention_bias\":true,\"eos_token_id\":15}"),
                     AV_OK);
    ck_assert_int_eq(c.head_size, 128); ck_assert_int_eq(c.qk_norm, 1); ck_assert_int_eq(c.attention_bias, 1);
    ck_assert_int_eq(c.qkv_bias, 1); ck_assert_int_eq(c.n_eos, 1); ck_assert_int_eq(c.eos_id[0], 15);
    /* GPT-2: n_inner null is 4·n_embd, tied by default, the ids 50256 dropped for a small vocabulary */
    ck_assert_int_eq(cfg(&c, "{\"architectures\":[\"GPT2LMHeadModel\"],\"model_type\":\"gpt2\",\"n_embd\":12,\"n_layer\":2,"
                             "\"n_head\":3,\"n_positions\":20,\"n_inner\":null,\"vocab_size\":30,\"n_ctx\":20,"
                             "\"activation_function\":\"gelu_new\",\"scale_attn_weights\":true}"),
                     AV_OK);
    ck_assert_int_eq(c.arch, AV_ARCH_GPT2);
    ck_assert_int_eq(c.dim, 12); ck_assert_int_eq(c.hidden_dim, 48); ck_assert_int_eq(c.n_heads, 3);
    ck_assert_int_eq(c.n_kv_heads, 3); ck_assert_int_eq(c.head_size, 4); ck_assert_int_eq(c.context, 20);
    ck_assert_int_eq(c.tie_word_embeddings, 1); ck_assert_int_eq(c.bos_id, -1); ck_assert_int_eq(c.n_eos, 0);
    ck_assert_double_eq(c.norm_eps, 1e-5);
    ck_assert_int_eq(cfg(&c, "{\"model_type\":\"gpt2\",\"n_embd\":12,\"n_layer\":1,\"n_head\":4,\"n_inner\":7,"
                             "\"activation_function\":\"gelu_pytorch_tanh\",\"tie_word_embeddings\":false}"),
                     AV_OK);
    ck_assert_int_eq(c.hidden_dim, 7); ck_assert_int_eq(c.head_size, 3); /* an odd head is fine without RoPE */
    ck_assert_int_eq(c.vocab_size, 50257); ck_assert_int_eq(c.bos_id, 50256); ck_assert_int_eq(c.eos_id[0], 50256);
    ck_assert_int_eq(c.tie_word_embeddings, 0);
}
END_TEST

START_TEST(test_config_refusals) {
    const char *A = "{\"architectures\":[\"LlamaForCausalLM\"]," LLAMA_SIZES;
    char j[1024];
#define R(extra, want) snprintf(j, sizeof j, "%s%s}", A, extra), cfg_refused(j, want)
    cfg_refused("{\"architectures\":[\"Phi3ForCausalLM\"],\"model_type\":\"phi3\"}",
                "the model's architecture Phi3ForCausalLM is not one attnviz runs (Llama, Mistral, Qwen2, Qwen3, SmolLM, GPT-2)");
    cfg_refused("{\"model_type\":\"phi3\"}", "the model's type phi3 is not one attnviz runs");
    cfg_refused("{\"hidden_size\":8}", "names neither");
    cfg_refused("{\"architectures\":[\"Qwen2ForCausalLM\"],\"model_type\":\"llama\"}", "does not go with its model_type llama");
    cfg_refused("{\"architectures\":[\"Line\\nBreak\"]}", "Line?Break");
    cfg_refused("{\"architectures\":[]}", "architectures is not a list");
    cfg_refused("{\"architectures\":[7]}", "architectures[0] is a number, where a string belongs");
    cfg_refused("{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":\"64\"}", "hidden_size is a string, where an integer belongs");
    R(",\"num_key_value_heads\":1.5", "num_key_value_heads is 1.5, not an integer");
    R(",\"num_key_value_heads\":3", "key/value heads is 3, outside 1..2");
    cfg_refused("{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":16,\"num_attention_heads\":4,\"num_key_value_heads\":3}",
                "4 attention heads are not a multiple of its 3 key/value heads");
    R(",\"head_dim\":5", "head size 5 is odd");
    R(",\"head_dim\":true", "head_dim is a boolean");
    cfg_refused("{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":9,\"num_attention_heads\":2}",
                "hidden_size 9 is not a multiple of num_attention_heads 2");
    cfg_refused("{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":99999}", "hidden_size is 99999, not an integer in 1..16384");
    cfg_refused("{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":null}", "gives null");
    cfg_refused("{\"architectures\":[\"LlamaForCausalLM\"],\"num_hidden_layers\":0}", "num_hidden_layers is 0");
    cfg_refused("{\"architectures\":[\"LlamaForCausalLM\"],\"vocab_size\":2000000}", "vocab_size is 2000000");
    R(",\"hidden_act\":\"gelu\"", "hidden_act gelu is not one attnviz implements");
    R(",\"rms_norm_eps\":0", "rms_norm_eps is 0");
    R(",\"rms_norm_eps\":\"1e-5\"", "rms_norm_eps is a string, where a number belongs");
    R(",\"rope_theta\":-1", "rope_theta is -1");
    R(",\"tie_word_embeddings\":1", "tie_word_embeddings is a number, where true or false belongs");
    R(",\"rope_scaling\":{\"type\":\"linear\",\"factor\":2.0}", "rope_scaling type linear is not one attnviz implements (only llama3)");
    R(",\"rope_scaling\":{\"rope_type\":\"yarn\",\"factor\":4.0}", "type yarn is not one");
    R(",\"rope_scaling\":{\"rope_type\":\"dynamic\",\"factor\":4.0}", "type dynamic is not one");
    R(",\"rope_parameters\":{\"rope_type\":\"longrope\"}", "rope_parameters type longrope");
    R(",\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":8.0,\"low_freq_factor\":1.0,\"high_freq_factor\":4.0}",
      "lacks original_max_position_embeddings");
    R(",\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":8.0,\"low_freq_factor\":4.0,\"high_freq_factor\":4.0,"
      "\"original_max_position_embeddings\":8192}",
      "are not 0 < low < high");
    R(",\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":0.5,\"low_freq_factor\":1.0,\"high_freq_factor\":4.0,"
      "\"original_max_position_embeddings\":8192}",
      "factor 0.5");
    R(",\"rope_scaling\":[1]", "rope_scaling is an array");
    R(",\"bos_token_id\":16", "bos_token_id is 16, not an integer in 0..15");
    R(",\"eos_token_id\":[1,\"2\"]", "eos_token_id[1] is not an id");
    R(",\"eos_token_id\":\"2\"", "eos_token_id is a string");
    cfg_refused("{\"architectures\":[\"Qwen2ForCausalLM\"]," LLAMA_SIZES ",\"use_sliding_window\":true,\"sliding_window\":4,"
                "\"max_window_layers\":1}",
                "gives 1 of the 2 layers a sliding window of 4");
    cfg_refused("{\"architectures\":[\"Qwen3ForCausalLM\"]," LLAMA_SIZES ",\"layer_types\":[\"full_attention\",\"chunked\"]}",
                "layer_types[1] is neither");
    cfg_refused("{\"architectures\":[\"Qwen3ForCausalLM\"]," LLAMA_SIZES ",\"layer_types\":[\"full_attention\"]}",
                "layer_types has 1 entries for 2 layers");
    cfg_refused("{\"architectures\":[\"GPT2LMHeadModel\"],\"activation_function\":\"relu\"}", "activation_function relu is not one");
    cfg_refused("{\"architectures\":[\"GPT2LMHeadModel\"],\"scale_attn_by_inverse_layer_idx\":true}", "scale_attn_by_inverse_layer_idx");
    /* reorder_and_upcast_attn is precision only: accepted */
    {
        av_hf_config rc;
        static const char js[] = "{\"architectures\":[\"GPT2LMHeadModel\"],\"reorder_and_upcast_attn\":true}";
        ck_assert_int_eq(av_hf_config_parse(&rc, js, sizeof js - 1), AV_OK);
    }
    cfg_refused("{\"architectures\":[\"GPT2LMHeadModel\"],\"scale_attn_weights\":false}", "scale_attn_weights is false");
    cfg_refused("{\"architectures\":[\"GPT2LMHeadModel\"],\"n_embd\":10,\"n_head\":4}", "n_embd 10 is not a multiple of n_head 4");
    cfg_refused("{\"architectures\":[\"GPT2LMHeadModel\"],\"n_embd\":8192}", "4 times n_embd");
    cfg_refused("[1,2]", "config.json is an array");
    cfg_refused("{\"architectures\":[\"LlamaForCausalLM\"],}", "not valid JSON");
    cfg_refused("", "not valid JSON");
#undef R
    /* more values than a config holds */
    size_t cap = 9000 * 2 + 64;
    char *big = malloc(cap);
    size_t at = (size_t)snprintf(big, cap, "{\"x\":[");
    for (int i = 0; i < 9000; i++) big[at++] = '0', big[at++] = ',';
    big[at - 1] = ']', big[at++] = '}', big[at] = '\0';
    cfg_refused(big, "more than the 8192");
    free(big);
    av_hf_config c;
    ck_assert_int_eq(av_hf_config_parse(NULL, "{}", 2), AV_ERR_NULL);
    ck_assert_int_eq(av_hf_config_parse(&c, NULL, 2), AV_ERR_NULL);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// the index

static int index_parse(av_hf_index *ix, void **work, const char *json) {
    size_t w = av_hf_index_work(json, strlen(json));
    *work = NULL;
    if (!w) return AV_ERR_FORMAT;
    *work = malloc(w);
    ck_assert_int_eq(av_hf_index_parse(ix, *work, w - 1, json, strlen(json)), AV_ERR_WORKSPACE);
    return av_hf_index_parse(ix, *work, w, json, strlen(json));
}

static void index_refused(const char *json, const char *want) {
    av_hf_index ix;
    void *work;
    int st = index_parse(&ix, &work, json);
    free(work);
    ck_assert_msg(st == AV_ERR_FORMAT, "accepted (%d): %s", st, json);
    ck_assert_msg(strstr(av_model_error(), want), "for %s: the sentence \"%s\" lacks \"%s\"", json, av_model_error(), want);
}

START_TEST(test_index) {
    av_hf_index ix;
    void *work;
    ck_assert_int_eq(index_parse(&ix, &work,
                                 "{\"metadata\":{\"total_size\":123},\"weight_map\":{\"z.w\":\"b.safetensors\",\"a.w\":\"a.safetensors\","
                                 "\"m.w\":\"b.safetensors\",\"b\\u00e9\":\"c\\u00e9.safetensors\",\"c.w\":\"a.safetensors\"}}"),
                     AV_OK);
    ck_assert_int_eq(ix.n_shards, 3); ck_assert_int_eq(ix.n_tensors, 5);
    ck_assert_str_eq(ix.shard[0], "b.safetensors"); /* in the order they first appear */
    ck_assert_str_eq(ix.shard[1], "a.safetensors");
    ck_assert_str_eq(ix.shard[2], "c\xc3\xa9.safetensors");
    const char *want[5] = {"a.w", "b\xc3\xa9", "c.w", "m.w", "z.w"};
    const int shard[5] = {1, 2, 1, 0, 0};
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(ix.tensor[i], want[i]);
        ck_assert_int_eq(ix.tensor_shard[i], shard[i]);
    }
    free(work);
    index_refused("{\"weight_map\":{\"a\":\"x.safetensors\",\"b\":\"y.safetensors\",\"a\":\"y.safetensors\"}}", "lists the tensor a twice");
    index_refused("{\"weight_map\":{\"a\":\"../x.safetensors\"}}", "not a plain file name");
    index_refused("{\"weight_map\":{\"a\":\"dir/x.safetensors\"}}", "not a plain file name");
    index_refused("{\"weight_map\":{\"a\":\"dir\\\\x.safetensors\"}}", "not a plain file name");
    index_refused("{\"weight_map\":{\"a\":\"\"}}", "not a plain file name");
    index_refused("{\"weight_map\":{\"a\":3}}", "gives a a number, where a shard's file name belongs");
    index_refused("{\"weight_map\":{\"\":\"x\"}}", "an empty name");
    index_refused("{\"weight_map\":{\"a\\u0000b\":\"x\"}}", "holding NUL");
    index_refused("{\"weight_map\":{}}", "names no tensor");
    index_refused("{\"weight_map\":[]}", "weight_map is an array");
    index_refused("{\"metadata\":{}}", "has no weight_map");
    index_refused("{\"metadata\":3,\"weight_map\":{\"a\":\"x\"}}", "metadata is a number");
    index_refused("[]", "the index is an array");
    index_refused("{\"weight_map\":", "not valid JSON");
    ck_assert_uint_eq(av_hf_index_work(NULL, 0), 0);
    ck_assert_int_eq(av_hf_index_parse(NULL, &ix, 1, "{}", 2), AV_ERR_NULL);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// binding

static const char LLAMA_GQA[] =
    "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":8,\"intermediate_size\":12,\"num_hidden_layers\":2,"
    "\"num_attention_heads\":2,\"num_key_value_heads\":1,\"vocab_size\":16,\"max_position_embeddings\":32,"
    "\"rms_norm_eps\":1e-5,\"bos_token_id\":1,\"eos_token_id\":[2,3]}";
static const mspec LLAMA_GQA_SPEC = {0, 8, 12, 2, 1, 4, 16, 2, 32, 0, 0, 0, 0, 0, 0, "model.", 0, AV_ST_F32, 1};

START_TEST(test_bind_llama) {
    int dt = _i; /* F32, F16, BF16, then a mix */
    mspec s = LLAMA_GQA_SPEC;
    s.dtype = dt < 3 ? dt : 0, s.mix = dt == 3;
    int n = model_tensors(g_ts, &s);
    bound b;
    bind_one(&b, LLAMA_GQA, g_ts, n, 1000);
    ck_assert_msg(b.st == AV_OK, "%s", av_model_error());
    av_model *m = &b.m;
    ck_assert_int_eq(m->arch, AV_ARCH_LLAMA);
    ck_assert_int_eq(m->dim, 8); ck_assert_int_eq(m->hidden_dim, 12); ck_assert_int_eq(m->n_layers, 2);
    ck_assert_int_eq(m->n_heads, 2); ck_assert_int_eq(m->n_kv_heads, 1); ck_assert_int_eq(m->head_size, 4);
    ck_assert_int_eq(m->kv_dim, 4); ck_assert_int_eq(m->vocab_size, 16); ck_assert_int_eq(m->seq_len, 32);
    ck_assert_int_eq(m->context, 32); ck_assert_int_eq(m->shared_classifier, 0);
    ck_assert_int_eq(m->bos_id, 1); ck_assert_int_eq(m->n_eos, 2); ck_assert_int_eq(m->eos_id[1], 3);
    ck_assert_double_eq(m->norm_eps, 1e-5); ck_assert_double_eq(m->rope_theta, 10000);
    ck_assert_ptr_null(m->tok_emb); ck_assert_ptr_null(m->wq); ck_assert_ptr_null(m->wcls);
    is_tensor(&m->emb, &b, g_ts, n, "model.embed_tokens.weight");
    is_tensor(&m->final_norm, &b, g_ts, n, "model.norm.weight");
    is_tensor(&m->cls, &b, g_ts, n, "lm_head.weight");
    ck_assert_ptr_null(m->pos_emb.p); ck_assert_ptr_null(m->final_norm_b.p);
    static const char *const names[AV_LW_COUNT] = {
        [AV_LW_ATTN_NORM] = "input_layernorm.weight", [AV_LW_Q] = "self_attn.q_proj.weight",
        [AV_LW_K] = "self_attn.k_proj.weight", [AV_LW_V] = "self_attn.v_proj.weight", [AV_LW_O] = "self_attn.o_proj.weight",
        [AV_LW_FFN_NORM] = "post_attention_layernorm.weight", [AV_LW_GATE] = "mlp.gate_proj.weight",
        [AV_LW_UP] = "mlp.up_proj.weight", [AV_LW_DOWN] = "mlp.down_proj.weight"};
    for (int l = 0; l < 2; l++)
        for (int w = 0; w < AV_LW_COUNT; w++) {
            const av_weight *x = &m->layer[l * AV_LW_COUNT + w];
            if (!names[w]) {
                ck_assert_ptr_null(x->p);
                continue;
            }
            char nm[96];
            snprintf(nm, sizeof nm, "model.layers.%d.%s", l, names[w]);
            is_tensor(x, &b, g_ts, n, nm);
        }
    ck_assert_uint_eq(av_hf_model_bytes(m), bytes_of(g_ts, n, 0));
    unbind(&b);
}
END_TEST

/* Llama with every bias, no prefix (a bare LlamaModel's names), tied with an lm_head in the file anyway:
 * the classifier is the embedding, as transformers ties it; max_seq below the context. */
START_TEST(test_bind_llama_biases_tied) {
    mspec s = LLAMA_GQA_SPEC;
    s.qkv_bias = s.o_bias = s.mlp_bias = 1, s.tie = 1, s.lm_head_too = 1, s.prefix = "", s.mix = 1;
    int n = model_tensors(g_ts, &s);
    bound b;
    bind_one(&b, "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":8,\"intermediate_size\":12,\"num_hidden_layers\":2,"
                 "\"num_attention_heads\":2,\"num_key_value_heads\":1,\"vocab_size\":16,\"max_position_embeddings\":32,"
                 "\"attention_bias\":true,\"mlp_bias\":true,\"tie_word_embeddings\":true}",
             g_ts, n, 7);
    ck_assert_msg(b.st == AV_OK, "%s", av_model_error());
    ck_assert_int_eq(b.m.seq_len, 7); ck_assert_int_eq(b.m.shared_classifier, 1);
    ck_assert(b.m.cls.p == b.m.emb.p);
    is_tensor(&b.m.emb, &b, g_ts, n, "embed_tokens.weight");
    const int slot[7] = {AV_LW_Q_B, AV_LW_K_B, AV_LW_V_B, AV_LW_O_B, AV_LW_GATE_B, AV_LW_UP_B, AV_LW_DOWN_B};
    const char *nm[7] = {"layers.1.self_attn.q_proj.bias", "layers.1.self_attn.k_proj.bias", "layers.1.self_attn.v_proj.bias",
                         "layers.1.self_attn.o_proj.bias", "layers.1.mlp.gate_proj.bias", "layers.1.mlp.up_proj.bias",
                         "layers.1.mlp.down_proj.bias"};
    for (int i = 0; i < 7; i++) is_tensor(&b.m.layer[AV_LW_COUNT + slot[i]], &b, g_ts, n, nm[i]);
    ck_assert_uint_eq(av_hf_model_bytes(&b.m), bytes_of(g_ts, n, 1)); /* the unread lm_head is not counted */
    unbind(&b);
}
END_TEST

START_TEST(test_bind_mistral_qwen) {
    /* Mistral: head_dim 6 ≠ 16/4, its window caps seq_len */
    mspec s = {0, 16, 12, 4, 2, 6, 16, 1, 64, 0, 0, 0, 0, 0, 0, "model.", 0, AV_ST_BF16, 1};
    int n = model_tensors(g_ts, &s);
    bound b;
    bind_one(&b, "{\"architectures\":[\"MistralForCausalLM\"],\"hidden_size\":16,\"intermediate_size\":12,\"num_hidden_layers\":1,"
                 "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"head_dim\":6,\"vocab_size\":16,"
                 "\"max_position_embeddings\":64,\"sliding_window\":20,\"rope_theta\":1000000.0}",
             g_ts, n, 50);
    ck_assert_msg(b.st == AV_OK, "%s", av_model_error());
    ck_assert_int_eq(b.m.seq_len, 20); ck_assert_int_eq(b.m.sliding_window, 20); ck_assert_int_eq(b.m.head_size, 6);
    ck_assert_int_eq(b.m.kv_dim, 12); ck_assert_double_eq(b.m.rope_theta, 1e6);
    is_tensor(&b.m.layer[AV_LW_Q], &b, g_ts, n, "model.layers.0.self_attn.q_proj.weight");
    is_tensor(&b.m.layer[AV_LW_O], &b, g_ts, n, "model.layers.0.self_attn.o_proj.weight");
    ck_assert_uint_eq(av_hf_model_bytes(&b.m), bytes_of(g_ts, n, 0));
    unbind(&b);
    /* Qwen2: q/k/v biases, tied */
    mspec q2 = {0, 8, 12, 2, 1, 4, 16, 2, 32, 1, 1, 0, 0, 0, 0, "model.", 1, AV_ST_F32, 0};
    n = model_tensors(g_ts, &q2);
    bind_one(&b, "{\"architectures\":[\"Qwen2ForCausalLM\"]," LLAMA_SIZES ",\"num_key_value_heads\":1,\"tie_word_embeddings\":true,"
                 "\"rope_theta\":1000000.0,\"eos_token_id\":15}",
             g_ts, n, 100);
    ck_assert_msg(b.st == AV_OK, "%s", av_model_error());
    is_tensor(&b.m.layer[AV_LW_COUNT + AV_LW_K_B], &b, g_ts, n, "model.layers.1.self_attn.k_proj.bias");
    ck_assert_ptr_null(b.m.layer[AV_LW_O_B].p);
    ck_assert(b.m.cls.p == b.m.emb.p);
    ck_assert_int_eq(b.m.bos_id, -1); ck_assert_int_eq(b.m.n_eos, 1);
    unbind(&b);
    /* Qwen3: q/k norms over head_dim 6 ≠ 8/2, no biases */
    mspec q3 = {0, 8, 12, 2, 1, 6, 16, 1, 32, 0, 0, 0, 0, 1, 0, "model.", 1, AV_ST_F32, 0};
    n = model_tensors(g_ts, &q3);
    bind_one(&b, "{\"architectures\":[\"Qwen3ForCausalLM\"],\"hidden_size\":8,\"intermediate_size\":12,\"num_hidden_layers\":1,"
                 "\"num_attention_heads\":2,\"num_key_value_heads\":1,\"head_dim\":6,\"vocab_size\":16,\"max_position_embeddings\":32}",
             g_ts, n, 100);
    ck_assert_msg(b.st == AV_OK, "%s", av_model_error());
    is_tensor(&b.m.layer[AV_LW_Q_NORM], &b, g_ts, n, "model.layers.0.self_attn.q_norm.weight");
    is_tensor(&b.m.layer[AV_LW_K_NORM], &b, g_ts, n, "model.layers.0.self_attn.k_norm.weight");
    is_tensor(&b.m.layer[AV_LW_Q], &b, g_ts, n, "model.layers.0.self_attn.q_proj.weight");
    ck_assert_ptr_null(b.m.layer[AV_LW_Q_B].p);
    ck_assert_uint_eq(av_hf_model_bytes(&b.m), bytes_of(g_ts, n, 0));
    unbind(&b);
}
END_TEST

static const char GPT2_CFG[] =
    "{\"architectures\":[\"GPT2LMHeadModel\"],\"n_embd\":6,\"n_layer\":2,\"n_head\":2,\"n_positions\":10,\"vocab_size\":20,"
    "\"n_inner\":10,\"bos_token_id\":19,\"eos_token_id\":19}";

/* GPT-2, with and without "transformer.", each dtype: the Conv1D views land on the right bytes. */
START_TEST(test_bind_gpt2) {
    int prefixed = _i % 2, dt = _i / 2; /* dt 3: a mix */
    mspec s = {1, 6, 10, 2, 2, 3, 20, 2, 10, 1, 0, 0, 0, 0, 0, prefixed ? "transformer." : "", dt == 3, dt < 3 ? dt : 0, 1};
    int n = model_tensors(g_ts, &s);
    bound b;
    bind_one(&b, GPT2_CFG, g_ts, n, 100);
    ck_assert_msg(b.st == AV_OK, "%s", av_model_error());
    const av_model *m = &b.m;
    const char *p = s.prefix;
    char nm[96];
    ck_assert_int_eq(m->arch, AV_ARCH_GPT2); ck_assert_int_eq(m->seq_len, 10); ck_assert_int_eq(m->context, 10);
    ck_assert_int_eq(m->head_size, 3); ck_assert_int_eq(m->kv_dim, 6); ck_assert_int_eq(m->hidden_dim, 10);
    ck_assert_int_eq(m->bos_id, 19); ck_assert_int_eq(m->eos_id[0], 19);
    ck_assert_double_eq(m->rope_theta, 0);
#define T(w, suffix) snprintf(nm, sizeof nm, "%s%s", p, suffix), is_tensor(w, &b, g_ts, n, nm)
    T(&m->emb, "wte.weight");
    T(&m->pos_emb, "wpe.weight");
    T(&m->final_norm, "ln_f.weight");
    T(&m->final_norm_b, "ln_f.bias");
    ck_assert(m->cls.p == m->emb.p);
    for (int l = 0; l < 2; l++) {
        const av_weight *w = m->layer + l * AV_LW_COUNT;
        char s2[64];
#define TL(slot, suffix) snprintf(s2, sizeof s2, "h.%d.%s", l, suffix), T(&w[slot], s2)
        TL(AV_LW_ATTN_NORM, "ln_1.weight");
        TL(AV_LW_ATTN_NORM_B, "ln_1.bias");
        TL(AV_LW_FFN_NORM, "ln_2.weight");
        TL(AV_LW_FFN_NORM_B, "ln_2.bias");
        TL(AV_LW_O_B, "attn.c_proj.bias");
        TL(AV_LW_UP_B, "mlp.c_fc.bias");
        TL(AV_LW_DOWN_B, "mlp.c_proj.bias");
#undef TL
        /* Conv1D [in, out]: element (r, c) of the projection is stored at [c][r] */
        struct { int slot; const char *name; int64_t rows, cols, off, ld; } conv[5] = {
            {AV_LW_Q, "attn.c_attn.weight", 6, 6, 0, 18}, {AV_LW_K, "attn.c_attn.weight", 6, 6, 6, 18},
            {AV_LW_V, "attn.c_attn.weight", 6, 6, 12, 18}, {AV_LW_O, "attn.c_proj.weight", 6, 6, 0, 6},
            {AV_LW_UP, "mlp.c_fc.weight", 10, 6, 0, 10}};
        for (int i = 0; i < 6; i++) {
            const av_weight *x = i < 5 ? &w[conv[i].slot] : &w[AV_LW_DOWN];
            const char *name = i < 5 ? conv[i].name : "mlp.c_proj.weight";
            int64_t rows = i < 5 ? conv[i].rows : 6, cols = i < 5 ? conv[i].cols : 10, off = i < 5 ? conv[i].off : 0,
                    ld = i < 5 ? conv[i].ld : 6;
            snprintf(nm, sizeof nm, "%sh.%d.%s", p, l, name);
            int k = tensor_index(g_ts, n, nm);
            const av_st_tensor *t = av_st_find(&b.s.f, nm);
            ck_assert_int_eq(x->trans, 1); ck_assert_int_eq(x->ld, ld); ck_assert_int_eq(x->dtype, g_ts[k].dtype);
            ck_assert(x->p == (const void *)(t->data + off * DSZ[t->dtype]));
            for (int64_t r = 0; r < rows; r++)
                for (int64_t c = 0; c < cols; c++)
                    ck_assert_float_eq(weight_at(x, r, c), value_of(k, (uint64_t)(c * ld + off + r)));
        }
        /* the fused bias: three slices */
        snprintf(nm, sizeof nm, "%sh.%d.attn.c_attn.bias", p, l);
        int k = tensor_index(g_ts, n, nm);
        const int bs[3] = {AV_LW_Q_B, AV_LW_K_B, AV_LW_V_B};
        for (int j = 0; j < 3; j++)
            for (int r = 0; r < 6; r++) ck_assert_float_eq(weight_at(&w[bs[j]], r, -1), value_of(k, (uint64_t)(6 * j + r)));
    }
#undef T
    ck_assert_uint_eq(av_hf_model_bytes(m), bytes_of(g_ts, n, 0));
    unbind(&b);
}
END_TEST

START_TEST(test_bind_gpt2_untied) {
    mspec s = {1, 6, 10, 2, 2, 3, 20, 1, 10, 0, 0, 0, 0, 0, 0, "transformer.", 1, 0, 0};
    int n = model_tensors(g_ts, &s);
    bound b;
    bind_one(&b, "{\"architectures\":[\"GPT2LMHeadModel\"],\"n_embd\":6,\"n_layer\":1,\"n_head\":2,\"n_positions\":10,"
                 "\"vocab_size\":20,\"n_inner\":10,\"tie_word_embeddings\":false}",
             g_ts, n, 4);
    ck_assert_msg(b.st == AV_OK, "%s", av_model_error());
    is_tensor(&b.m.cls, &b, g_ts, n, "lm_head.weight");
    ck_assert(b.m.cls.p != b.m.emb.p);
    ck_assert_int_eq(b.m.seq_len, 4); ck_assert_int_eq(b.m.shared_classifier, 0);
    ck_assert_uint_eq(av_hf_model_bytes(&b.m), bytes_of(g_ts, n, 0));
    unbind(&b);
}
END_TEST

/* Bind ts[0..n) under json and expect status want with a sentence containing text. */
static void bind_refused(const char *json, const tspec *ts, int n, int want, const char *text) {
    bound b;
    bind_one(&b, json, ts, n, 100);
    ck_assert_msg(b.st == want, "status %d, not %d (%s)", b.st, want, av_model_error());
    ck_assert_msg(strstr(av_model_error(), text), "the sentence \"%s\" lacks \"%s\"", av_model_error(), text);
    ck_assert_int_eq(b.m.dim, 0);
    ck_assert_ptr_null(b.m.layer);
    unbind(&b);
}

START_TEST(test_bind_refusals) {
    mspec s = LLAMA_GQA_SPEC;
    int n = model_tensors(g_ts, &s);
    tspec t[512];
    /* a missing tensor */
    int k = tensor_index(g_ts, n, "model.layers.1.mlp.up_proj.weight");
    memcpy(t, g_ts, sizeof(tspec) * (size_t)n);
    memmove(t + k, t + k + 1, sizeof(tspec) * (size_t)(n - k - 1));
    bind_refused(LLAMA_GQA, t, n - 1, AV_ERR_FORMAT, "has no tensor model.layers.1.mlp.up_proj.weight");
    /* untied without lm_head */
    memcpy(t, g_ts, sizeof(tspec) * (size_t)n);
    bind_refused(LLAMA_GQA, t, n - 1, AV_ERR_FORMAT, "has no tensor lm_head.weight");
    /* wrong shapes: a transposed matrix, a vector of the wrong length, a matrix where a vector belongs */
    memcpy(t, g_ts, sizeof(tspec) * (size_t)n);
    k = tensor_index(t, n, "model.layers.0.self_attn.k_proj.weight");
    t[k].shape[0] = 8, t[k].shape[1] = 4;
    bind_refused(LLAMA_GQA, t, n, AV_ERR_FORMAT, "model.layers.0.self_attn.k_proj.weight has shape [8, 4], the config needs [4, 8]");
    memcpy(t, g_ts, sizeof(tspec) * (size_t)n);
    k = tensor_index(t, n, "model.norm.weight");
    t[k].shape[0] = 9;
    bind_refused(LLAMA_GQA, t, n, AV_ERR_FORMAT, "model.norm.weight has shape [9], the config needs [8]");
    memcpy(t, g_ts, sizeof(tspec) * (size_t)n);
    t[k].ndim = 2, t[k].shape[0] = 1, t[k].shape[1] = 8;
    bind_refused(LLAMA_GQA, t, n, AV_ERR_FORMAT, "has shape [1, 8]");
    /* the vocabulary: both numbers */
    memcpy(t, g_ts, sizeof(tspec) * (size_t)n);
    t[tensor_index(t, n, "model.embed_tokens.weight")].shape[0] = 17;
    bind_refused(LLAMA_GQA, t, n, AV_ERR_FORMAT, "vocab_size is 16 but model.embed_tokens.weight has 17 rows");
    /* a bias the config asks for (attention_bias) and the file lacks */
    bind_refused("{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":8,\"intermediate_size\":12,\"num_hidden_layers\":2,"
                 "\"num_attention_heads\":2,\"num_key_value_heads\":1,\"vocab_size\":16,\"max_position_embeddings\":32,"
                 "\"attention_bias\":true}",
                 g_ts, n, AV_ERR_FORMAT, "has no tensor model.layers.0.self_attn.q_proj.bias");
    /* GPT-2: wpe shorter than n_positions; a c_attn that is not fused */
    mspec g = {1, 6, 10, 2, 2, 3, 20, 2, 10, 1, 0, 0, 0, 0, 0, "transformer.", 0, AV_ST_F32, 0};
    n = model_tensors(t, &g);
    t[tensor_index(t, n, "transformer.wpe.weight")].shape[0] = 9;
    bind_refused(GPT2_CFG, t, n, AV_ERR_FORMAT, "transformer.wpe.weight has shape [9, 6], the config needs [10, 6]");
    n = model_tensors(t, &g);
    t[tensor_index(t, n, "transformer.h.1.attn.c_attn.weight")].shape[1] = 6;
    bind_refused(GPT2_CFG, t, n, AV_ERR_FORMAT, "transformer.h.1.attn.c_attn.weight has shape [6, 6], the config needs [6, 18]");
}
END_TEST

/* NaN or ±Inf in each dtype, at a chosen element: AV_ERR_NONFINITE naming the tensor and the index. */
START_TEST(test_bind_nonfinite) {
    static const struct { int dtype; uint32_t bits; const char *what; } cases[] = {
        {AV_ST_BF16, 0x7fc1, "NaN"}, {AV_ST_BF16, 0xff80, "-Inf"}, {AV_ST_BF16, 0x7f81, "NaN"},
        {AV_ST_F16, 0x7c00, "+Inf"}, {AV_ST_F16, 0xfe00, "NaN"}, {AV_ST_F16, 0x7c01, "NaN"},
        {AV_ST_F32, 0x7f800000u, "+Inf"}, {AV_ST_F32, 0xffc00000u, "NaN"}, {AV_ST_F32, 0x7f800001u, "NaN"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mspec s = LLAMA_GQA_SPEC;
        s.dtype = cases[c].dtype;
        int n = model_tensors(g_ts, &s);
        bound b;
        bind_one(&b, LLAMA_GQA, g_ts, n, 100);
        ck_assert_int_eq(b.st, AV_OK);
        const av_st_tensor *t = av_st_find(&b.s.f, "model.layers.1.mlp.down_proj.weight");
        unsigned char *p = (unsigned char *)t->data + 37 * DSZ[s.dtype];
        for (unsigned i = 0; i < DSZ[s.dtype]; i++) p[i] = (unsigned char)(cases[c].bits >> (8 * i));
        size_t w = av_hf_model_work(&b.c);
        ck_assert_int_eq(av_hf_model_bind(&b.m, &b.c, &b.s.f, 1, NULL, 100, b.work, w), AV_ERR_NONFINITE);
        char want[160];
        snprintf(want, sizeof want, "model.layers.1.mlp.down_proj.weight holds %s at index 37 (a %s value)", cases[c].what,
                 DNAME[s.dtype]);
        ck_assert_msg(strstr(av_model_error(), want), "\"%s\" lacks \"%s\"", av_model_error(), want);
        ck_assert_ptr_null(b.m.layer);
        /* the largest finite values and subnormals are weights like any other */
        const uint32_t fine = s.dtype == AV_ST_F32 ? 0xff7fffffu : s.dtype == AV_ST_F16 ? 0xfbffu : 0x7f7fu;
        for (unsigned i = 0; i < DSZ[s.dtype]; i++) p[i] = (unsigned char)(fine >> (8 * i));
        ck_assert_int_eq(av_hf_model_bind(&b.m, &b.c, &b.s.f, 1, NULL, 100, b.work, w), AV_OK);
        unbind(&b);
    }
}
END_TEST

/* Two shards and their index. */
START_TEST(test_bind_sharded) {
    mspec s = LLAMA_GQA_SPEC;
    s.mix = 1;
    int n = model_tensors(g_ts, &s), half = n / 2;
    char *json = malloc(16384);
    size_t at = (size_t)snprintf(json, 16384, "{\"metadata\":{\"total_size\":1},\"weight_map\":{");
    for (int k = 0; k < n; k++)
        at += (size_t)snprintf(json + at, 16384 - at, "%s\"%s\":\"model-0000%d-of-00002.safetensors\"", k ? "," : "", g_ts[k].name,
                               k < half ? 2 : 1); /* the second shard's names come first */
    snprintf(json + at, 16384 - at, "}}");
    av_hf_index ix;
    void *ixw;
    ck_assert_int_eq(index_parse(&ix, &ixw, json), AV_OK);
    ck_assert_int_eq(ix.n_shards, 2);
    ck_assert_str_eq(ix.shard[0], "model-00002-of-00002.safetensors");
    av_hf_config c;
    ck_assert_int_eq(cfg(&c, LLAMA_GQA), AV_OK);
    stf sh[2];
    st_open(&sh[0], g_ts, half); /* shard[0] holds the first half */
    st_open(&sh[1], g_ts + half, n - half);
    av_st_file files[2] = {sh[0].f, sh[1].f};
    size_t w = av_hf_model_work(&c);
    void *work = malloc(w);
    av_model m;
    ck_assert_msg(av_hf_model_bind(&m, &c, files, 2, &ix, 100, work, w) == AV_OK, "%s", av_model_error());
    ck_assert(m.emb.p == av_st_find(&files[0], "model.embed_tokens.weight")->data);
    ck_assert(m.cls.p == av_st_find(&files[1], "lm_head.weight")->data);
    ck_assert(m.layer[AV_LW_COUNT + AV_LW_DOWN].p == av_st_find(&files[1], "model.layers.1.mlp.down_proj.weight")->data);
    uint64_t total = bytes_of(g_ts, n, 0);
    ck_assert_uint_eq(av_hf_model_bytes(&m), total);
    /* a shard the index names but not given */
    ck_assert_int_eq(av_hf_model_bind(&m, &c, files, 1, &ix, 100, work, w), AV_ERR_FORMAT);
    ck_assert_msg(strstr(av_model_error(), "names 2 shards but 1 files were given"), "%s", av_model_error());
    /* the shards swapped: the index puts tensors where they are not */
    av_st_file swapped[2] = {sh[1].f, sh[0].f};
    ck_assert_int_eq(av_hf_model_bind(&m, &c, swapped, 2, &ix, 100, work, w), AV_ERR_FORMAT);
    ck_assert_msg(strstr(av_model_error(), "the index puts model.embed_tokens.weight in model-00002-of-00002.safetensors, which does not hold it"),
                  "%s", av_model_error());
    /* a tensor in two shards */
    stf dup;
    st_open(&dup, g_ts, half + 1); /* the first half and one tensor of the second */
    av_st_file files2[2] = {dup.f, sh[1].f};
    ck_assert_int_eq(av_hf_model_bind(&m, &c, files2, 2, &ix, 100, work, w), AV_ERR_FORMAT);
    char want[200];
    snprintf(want, sizeof want, "the tensor %s is in two shards, model-00001-of-00002.safetensors and model-00002-of-00002.safetensors",
             g_ts[half].name);
    ck_assert_msg(strstr(av_model_error(), want), "%s", av_model_error());
    /* a tensor the index does not list is missing, even when a shard holds it */
    free(ixw);
    char *cut = strstr(json, ",\"model.norm.weight\"");
    ck_assert_ptr_nonnull(cut);
    char *end = strchr(cut + 1, ',');
    memmove(cut, end ? end : cut + strlen(cut) - 2, strlen(end ? end : cut + strlen(cut) - 2) + 1);
    ck_assert_int_eq(index_parse(&ix, &ixw, json), AV_OK);
    ck_assert_int_eq(av_hf_model_bind(&m, &c, files, 2, &ix, 100, work, w), AV_ERR_FORMAT);
    ck_assert_msg(strstr(av_model_error(), "has no tensor model.norm.weight"), "%s", av_model_error());
    /* two files without an index */
    ck_assert_int_eq(av_hf_model_bind(&m, &c, files, 2, NULL, 100, work, w), AV_ERR_SIZE);
    free(ixw);
    free(work);
    free(json);
    st_close(&sh[0]), st_close(&sh[1]), st_close(&dup);
}
END_TEST

START_TEST(test_bind_arguments) {
    mspec s = LLAMA_GQA_SPEC;
    int n = model_tensors(g_ts, &s);
    bound b;
    bind_one(&b, LLAMA_GQA, g_ts, n, 100);
    ck_assert_int_eq(b.st, AV_OK);
    size_t w = av_hf_model_work(&b.c);
    ck_assert_int_eq(av_hf_model_bind(&b.m, &b.c, &b.s.f, 1, NULL, 100, b.work, w - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_hf_model_bind(&b.m, &b.c, &b.s.f, 1, NULL, 0, b.work, w), AV_ERR_SIZE);
    ck_assert_int_eq(av_hf_model_bind(&b.m, &b.c, &b.s.f, 1, NULL, AV_MODEL_MAX_SEQ + 1, b.work, w), AV_ERR_SIZE);
    ck_assert_int_eq(av_hf_model_bind(&b.m, &b.c, &b.s.f, 1, NULL, AV_MODEL_MAX_SEQ, b.work, w), AV_OK);
    ck_assert_int_eq(b.m.seq_len, 32);
    ck_assert_int_eq(av_hf_model_bind(NULL, &b.c, &b.s.f, 1, NULL, 100, b.work, w), AV_ERR_NULL);
    ck_assert_int_eq(av_hf_model_bind(&b.m, NULL, &b.s.f, 1, NULL, 100, b.work, w), AV_ERR_NULL);
    ck_assert_int_eq(av_hf_model_bind(&b.m, &b.c, NULL, 1, NULL, 100, b.work, w), AV_ERR_NULL);
    ck_assert_int_eq(av_hf_model_bind(&b.m, &b.c, &b.s.f, 1, NULL, 100, NULL, w), AV_ERR_NULL);
    /* a config the caller changed is checked again */
    av_hf_config bad = b.c;
    bad.n_kv_heads = 3;
    ck_assert_uint_eq(av_hf_model_work(&bad), 0);
    ck_assert_int_eq(av_hf_model_bind(&b.m, &bad, &b.s.f, 1, NULL, 100, b.work, w), AV_ERR_FORMAT);
    bad = b.c, bad.arch = AV_ARCH_LLAMA2C;
    ck_assert_uint_eq(av_hf_model_work(&bad), 0);
    ck_assert_uint_eq(av_hf_model_work(NULL), 0);
    ck_assert_uint_eq(av_hf_model_bytes(NULL), 0);
    av_model legacy;
    memset(&legacy, 0, sizeof legacy);
    ck_assert_uint_eq(av_hf_model_bytes(&legacy), 0);
    /* an I64 tensor (a position-id buffer) is kept by the safetensors reader as AV_ST_OTHER, never read */
    static const char hdr[] = "{\"w\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}";
    unsigned char buf[8 + sizeof hdr - 1 + 8];
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((sizeof hdr - 1) >> (8 * i));
    memcpy(buf + 8, hdr, sizeof hdr - 1);
    memset(buf + 8 + sizeof hdr - 1, 0, 8);
    size_t ow = av_st_work(buf, sizeof buf);
    ck_assert_uint_gt(ow, 0);
    void *owork = malloc(ow);
    av_st_file of;
    ck_assert_int_eq(av_st_parse(&of, owork, ow, buf, sizeof buf), AV_OK);
    ck_assert_int_eq(av_st_find(&of, "w")->dtype, AV_ST_OTHER);
    /* kept, but no weight: a file holding only it binds to nothing (the embedding is missing) */
    ck_assert_int_eq(av_hf_model_bind(&b.m, &b.c, &of, 1, NULL, 100, b.work, w), AV_ERR_FORMAT);
    free(owork);
    unbind(&b);
}
END_TEST

/* Tensors the architectures do not read are ignored, and a prefixed name wins over a bare one. */
START_TEST(test_bind_extras) {
    mspec s = LLAMA_GQA_SPEC;
    s.extras = 1;
    int n = model_tensors(g_ts, &s);
    n = add(g_ts, n, &s, "", "norm.weight", 8, -1); /* a bare twin of model.norm.weight */
    bound b;
    bind_one(&b, LLAMA_GQA, g_ts, n, 100);
    ck_assert_msg(b.st == AV_OK, "%s", av_model_error());
    is_tensor(&b.m.final_norm, &b, g_ts, n, "model.norm.weight");
    unbind(&b);
}
END_TEST

Suite *suite_hf_model(void) {
    Suite *s = suite_create("hf_model");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_config_llama);
    tcase_add_test(tc, test_config_family);
    tcase_add_test(tc, test_config_refusals);
    tcase_add_test(tc, test_index);
    tcase_add_loop_test(tc, test_bind_llama, 0, 4);
    tcase_add_test(tc, test_bind_llama_biases_tied);
    tcase_add_test(tc, test_bind_mistral_qwen);
    tcase_add_loop_test(tc, test_bind_gpt2, 0, 8);
    tcase_add_test(tc, test_bind_gpt2_untied);
    tcase_add_test(tc, test_bind_refusals);
    tcase_add_test(tc, test_bind_nonfinite);
    tcase_add_test(tc, test_bind_sharded);
    tcase_add_test(tc, test_bind_arguments);
    tcase_add_test(tc, test_bind_extras);
    suite_add_tcase(s, tc);
    return s;
}
