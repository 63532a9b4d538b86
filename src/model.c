/* model.c: real models (docs/model.md): llama2.c's legacy checkpoint format parsed in place, its
 * tokenizer format, the tokenizer's encode, and the forward pass that captures every layer's and head's
 * Q (after RoPE), K (after RoPE) and V.
 *
 * Files are untrusted: every size in a header is checked against the limits and against the buffer's
 * length, in 64-bit arithmetic, before anything past the header is read; a failure leaves one sentence in
 * av_model_error(). The forward pass is the plain loop (float32 storage, float64 sums), about 2·params
 * multiply-adds per token: 0.5 M for stories260K, so a 512-token text is a fraction of a second.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "simd.h"

static char model_error[256];

static int fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(model_error, sizeof model_error, fmt, ap);
    va_end(ap);
    return AV_ERR_FORMAT;
}

const char *av_model_error(void) { return model_error; }
/* The other readers of model files (hf_tokenizer.c) leave their reasons here too. */
void avi_model_set_error(const char *reason) { snprintf(model_error, sizeof model_error, "%s", reason); }

/* hf_model.c's refusals land in the same sentence (internal.h). */
int avi_model_fail(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(model_error, sizeof model_error, fmt, ap);
    va_end(ap);
    return status;
}
void avi_model_error_clear(void) { model_error[0] = '\0'; }

static int32_t read_i32(const unsigned char *p) {
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    int32_t out;
    memcpy(&out, &v, sizeof out);
    return out;
}
static float read_f32(const unsigned char *p) {
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float out;
    memcpy(&out, &v, sizeof out);
    return out;
}

// ----------------------------------------------------------------------------------------------------
// the checkpoint

static int in_range(const char *name, int v, int hi) {
    if (v < 1 || v > hi) return fail("the checkpoint's %s is %d, outside 1..%d: not a llama2.c checkpoint, or a corrupted one", name, v, hi);
    return AV_OK;
}

/* The tensors in file order, named as docs/model.md's table names them (11: the legacy RoPE tables). */
static const char *const TENSOR_NAMES[13] = {"token_embedding", "rms_att", "wq", "wk", "wv", "wo", "rms_ffn", "w1",
                                             "w2", "w3", "rms_final", "freq_cis", "classifier"};

int av_model_parse(av_model *m, const void *buf, size_t len) {
    if (!m || !buf) return AV_ERR_NULL;
    model_error[0] = '\0';
    memset(m, 0, sizeof *m);
    if ((uintptr_t)buf % 4) return AV_ERR_SIZE;
    const unsigned char *b = buf;
    if (len < 28) return fail("the checkpoint is %zu bytes, shorter than its 28-byte header", len);
    int h[7];
    for (int i = 0; i < 7; i++) h[i] = read_i32(b + 4 * i);
    int shared = h[5] > 0;
    int vocab = h[5] == INT32_MIN ? 0 : (h[5] < 0 ? -h[5] : h[5]);
    int st;
    if ((st = in_range("dim", h[0], AV_MODEL_MAX_DIM)) || (st = in_range("hidden_dim", h[1], 4 * AV_MODEL_MAX_DIM)) ||
        (st = in_range("n_layers", h[2], AV_MODEL_MAX_LAYERS)) || (st = in_range("n_heads", h[3], h[0] > 0 ? h[0] : 1)) ||
        (st = in_range("n_kv_heads", h[4], h[3] > 0 ? h[3] : 1)) || (st = in_range("vocab_size", vocab, AV_MODEL_MAX_VOCAB)) ||
        (st = in_range("seq_len", h[6], AV_MODEL_MAX_SEQ)))
        return st;
    if (vocab < 3) return fail("the checkpoint's vocab_size is %d: a llama2.c vocabulary needs at least 3 pieces (BOS is id 1, EOS id 2)", vocab);
    int dim = h[0], hidden = h[1], L = h[2], H = h[3], KVH = h[4], seq = h[6];
    if (dim % H) return fail("the checkpoint's dim %d is not a multiple of n_heads %d", dim, H);
    if (H % KVH) return fail("the checkpoint's n_heads %d is not a multiple of n_kv_heads %d", H, KVH);
    int hs = dim / H;
    if (hs % 2) return fail("the checkpoint's head size %d is odd: RoPE rotates pairs", hs);
    int kv_dim = hs * KVH;
    uint64_t D = (uint64_t)dim, HD = (uint64_t)hidden, LL = (uint64_t)L, KV = (uint64_t)kv_dim;
    uint64_t sizes[] = {
        (uint64_t)vocab * D,                       /* tok_emb */
        LL * D,                                    /* rms_att */
        LL * D * D, LL * KV * D, LL * KV * D, LL * D * D, /* wq wk wv wo */
        LL * D,                                    /* rms_ffn */
        LL * HD * D, LL * D * HD, LL * HD * D,     /* w1 w2 w3 */
        D,                                         /* rms_final */
        (uint64_t)seq * (uint64_t)(hs / 2) * 2,    /* freq_cis_real, freq_cis_imag (legacy; not read) */
        shared ? 0 : (uint64_t)vocab * D,          /* wcls */
    };
    uint64_t floats = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) floats += sizes[i]; /* each < 2^50: no overflow */
    uint64_t want = 28 + 4 * floats;
    if ((uint64_t)len != want) {
        return fail("the checkpoint is %zu bytes; its header (dim %d, hidden %d, %d layers, %d heads, %d kv heads, vocab %d%s, seq_len %d) "
                    "needs exactly %llu: %s", len, dim, hidden, L, H, KVH, vocab, shared ? "" : " unshared", seq,
                    (unsigned long long)want, (uint64_t)len < want ? "truncated" : "bytes left over");
    }
    if (want > SIZE_MAX) return AV_ERR_TOO_LARGE;
    const float *p = (const float *)(const void *)(b + 28);
    const float *at[13];
    for (size_t i = 0; i < 13; i++) {
        at[i] = p;
        p += sizes[i];
    }
    /* every weight the forward pass reads must be finite: one NaN makes every capture NaN (the legacy RoPE
     * tables, never read, are not checked). stories260K: 0.12 ms natively, 0.03 ms in wasm. */
    for (size_t i = 0; i < 13; i++) {
        if (i == 11 || avs_all_finite(at[i], (size_t)sizes[i])) continue;
        size_t k = 0;
        while (isfinite(at[i][k])) k++;
        fail("the checkpoint's tensor %s holds a non-finite value (%s) at index %zu", TENSOR_NAMES[i],
             isnan(at[i][k]) ? "NaN" : at[i][k] > 0 ? "Inf" : "-Inf", k);
        return AV_ERR_NONFINITE; /* a checkpoint in form, refused for its content (a loader need not try the other file) */
    }
    const float **fields[] = {&m->tok_emb, &m->rms_att, &m->wq, &m->wk, &m->wv, &m->wo, &m->rms_ffn, &m->w1, &m->w2,
                              &m->w3, &m->rms_final};
    for (size_t i = 0; i < 11; i++) *fields[i] = at[i];
    m->wcls = shared ? m->tok_emb : at[12];
    m->dim = dim, m->hidden_dim = hidden, m->n_layers = L, m->n_heads = H, m->n_kv_heads = KVH;
    m->vocab_size = vocab, m->seq_len = seq, m->head_size = hs, m->kv_dim = kv_dim, m->shared_classifier = shared;
    m->arch = AV_ARCH_LLAMA2C, m->context = seq;
    m->bos_id = 1, m->n_eos = 1, m->eos_id[0] = 1; /* llama2.c's stories end where the next one's BOS begins */
    m->norm_eps = 1e-5, m->rope_theta = 10000.0;
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// the forward pass

/* The workspace: the key/value cache (layers × seq_len × kv_dim, twice), then x, xb, xb2, q (dim each),
 * k, v (kv_dim), hb, hb2 (hidden), att (seq_len) in float64. */
typedef struct fw_ws {
    float *kc, *vc;
    double *x, *xb, *xb2, *q, *k, *v, *hb, *hb2, *att;
} fw_ws;

/* web/wasm/model.mjs reserves this many bytes for the struct in the module's memory */
_Static_assert(sizeof(av_model) <= 512, "web/wasm/model.mjs's MODEL_STRUCT_BYTES must hold av_model");

int avi_model_ok(const av_model *m) {
    int sizes = m->dim > 0 && m->hidden_dim > 0 && m->n_layers > 0 && m->n_heads > 0 && m->n_kv_heads > 0 &&
                m->vocab_size > 0 && m->seq_len > 0 && m->head_size > 0 && m->n_heads % m->n_kv_heads == 0 &&
                m->kv_dim == m->head_size * m->n_kv_heads && m->head_size <= AV_MODEL_MAX_DIM &&
                (int64_t)m->n_heads * m->head_size <= 4 * AV_MODEL_MAX_DIM;
    if (!sizes) return 0;
    if (m->arch == AV_ARCH_LLAMA2C)
        return m->dim == m->head_size * m->n_heads && m->tok_emb && m->wcls && m->rms_att && m->wq && m->wk && m->wv &&
               m->wo && m->rms_ffn && m->w1 && m->w2 && m->w3 && m->rms_final;
    if (m->arch != AV_ARCH_LLAMA && m->arch != AV_ARCH_GPT2) return 0;
    if (!m->layer || !m->emb.p || !m->cls.p || !m->final_norm.p || !(m->norm_eps > 0)) return 0;
    if (m->arch == AV_ARCH_GPT2) return m->pos_emb.p && m->final_norm_b.p && m->seq_len <= m->context;
    return m->head_size % 2 == 0 && m->rope_theta > 0;
}

static uint64_t forward_bytes(const av_model *m, fw_ws *ws, unsigned char *base) {
    uint64_t cache = (uint64_t)m->n_layers * (uint64_t)m->seq_len * (uint64_t)m->kv_dim;
    uint64_t doubles[] = {(uint64_t)m->dim, (uint64_t)m->dim, (uint64_t)m->dim, (uint64_t)m->dim, (uint64_t)m->kv_dim,
                          (uint64_t)m->kv_dim, (uint64_t)m->hidden_dim, (uint64_t)m->hidden_dim, (uint64_t)m->seq_len};
    double **dst[] = {&ws->x, &ws->xb, &ws->xb2, &ws->q, &ws->k, &ws->v, &ws->hb, &ws->hb2, &ws->att};
    uint64_t at = 0;
    for (int i = 0; i < 2; i++) {
        if (base) *(i ? &ws->vc : &ws->kc) = (float *)(void *)(base + at);
        at += (cache * 4 + 63) & ~(uint64_t)63;
    }
    for (int i = 0; i < 9; i++) {
        if (base) *dst[i] = (double *)(void *)(base + at);
        at += (doubles[i] * 8 + 63) & ~(uint64_t)63;
    }
    return at;
}

struct hf_ws;
static uint64_t hf_layout(const av_model *m, struct hf_ws *ws, void *work);
static uint64_t hf_need(const av_model *m);
size_t av_forward_work(const av_model *m) {
    if (!m || !avi_model_ok(m)) return 0;
    if (m->arch != AV_ARCH_LLAMA2C) {
        uint64_t b = hf_need(m);
        return b > SIZE_MAX ? 0 : (size_t)b;
    }
    fw_ws ws;
    uint64_t b = forward_bytes(m, &ws, NULL);
    return b > SIZE_MAX ? 0 : (size_t)b;
}

void avi_rmsnorm(double *out, const double *x, const float *w, int n) {
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    double r = 1.0 / sqrt(ss / n + 1e-5);
    for (int i = 0; i < n; i++) out[i] = w[i] * (r * x[i]);
}

void avi_matvec(double *out, const float *W, const double *x, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        const float *w = W + (size_t)r * cols;
        double s = 0.0;
        for (int c = 0; c < cols; c++) s += w[c] * x[c];
        out[r] = s;
    }
}

void avi_rope(double *v, int len, int hs, int pos) {
    for (int j = 0; j < len; j += 2) {
        int i2 = j % hs;
        double freq = 1.0 / pow(10000.0, (double)i2 / hs);
        double a = pos * freq, c = cos(a), s = sin(a);
        double x0 = v[j], x1 = v[j + 1];
        v[j] = x0 * c - x1 * s;
        v[j + 1] = x0 * s + x1 * c;
    }
}

void avi_model_qkv(double *xb, double *q, double *k, double *v, const av_model *m, int l, const double *x, int pos) {
    const int dim = m->dim, kvd = m->kv_dim;
    avi_rmsnorm(xb, x, m->rms_att + (size_t)l * dim, dim);
    avi_matvec(q, m->wq + (size_t)l * dim * dim, xb, dim, dim);
    avi_matvec(k, m->wk + (size_t)l * kvd * dim, xb, kvd, dim);
    avi_matvec(v, m->wv + (size_t)l * kvd * dim, xb, kvd, dim);
    avi_rope(q, dim, m->head_size, pos);
    avi_rope(k, kvd, m->head_size, pos);
}

void avi_model_softmax_head(double *o, const double *q, const float *kc, const float *vc, size_t stride, int t,
                            int hs, double scale, double *att) {
    double mx = -INFINITY;
    for (int j = 0; j <= t; j++) {
        const float *k = kc + (size_t)j * stride;
        double s = 0.0;
        for (int i = 0; i < hs; i++) s += q[i] * k[i];
        att[j] = s * scale;
        mx = att[j] > mx ? att[j] : mx;
    }
    double sum = 0.0;
    for (int j = 0; j <= t; j++) sum += (att[j] = exp(att[j] - mx));
    for (int i = 0; i < hs; i++) o[i] = 0.0;
    for (int j = 0; j <= t; j++) {
        const float *v = vc + (size_t)j * stride;
        double a = att[j] / sum;
        for (int i = 0; i < hs; i++) o[i] += a * v[i];
    }
}

void avi_model_mlp(double *x, double *xb, double *xb2, double *hb, double *hb2, const av_model *m, int l) {
    const int dim = m->dim, hd = m->hidden_dim;
    avi_matvec(xb2, m->wo + (size_t)l * dim * dim, xb, dim, dim);
    for (int i = 0; i < dim; i++) x[i] += xb2[i];
    avi_rmsnorm(xb, x, m->rms_ffn + (size_t)l * dim, dim);
    avi_matvec(hb, m->w1 + (size_t)l * hd * dim, xb, hd, dim);
    avi_matvec(hb2, m->w3 + (size_t)l * hd * dim, xb, hd, dim);
    for (int i = 0; i < hd; i++) hb[i] = hb[i] / (1.0 + exp(-hb[i])) * hb2[i]; /* SiLU(w1·x) ⊙ w3·x */
    for (int i = 0; i < dim; i++) {
        const float *w = m->w2 + ((size_t)l * dim + i) * hd;
        double s = 0.0;
        for (int c = 0; c < hd; c++) s += w[c] * hb[c];
        x[i] += s;
    }
}

void avi_model_logits(float *logits, double *xb, const av_model *m, const double *x) {
    const int dim = m->dim;
    avi_rmsnorm(xb, x, m->rms_final, dim);
    for (int r = 0; r < m->vocab_size; r++) {
        const float *w = m->wcls + (size_t)r * dim;
        double s = 0.0;
        for (int c = 0; c < dim; c++) s += w[c] * xb[c];
        logits[r] = (float)s;
    }
}

// ----------------------------------------------------------------------------------------------------
// the pieces over blocks of positions (every architecture; docs/hf.md "Architectures")

#define LOGIT_CHUNK 256 /* classifier rows per float64 block in avi_model_logits_rows */

static int max3(int a, int b, int c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

/* scratch floats: the weight products' (a block's x and AVI_WROWS weight rows), RoPE's frequencies
 * (head_size/2 doubles) and the logits' float64 block (AVI_MODEL_BLOCK × LOGIT_CHUNK doubles) */
size_t avi_model_scratch(const av_model *m) {
    int cols = max3(m->dim, avi_qdim(m), m->hidden_dim);
    size_t w = avi_wmatmul_scratch(AVI_MODEL_BLOCK, cols);
    w += w % 2; /* the doubles after it stay 8-byte aligned */
    return w + (size_t)m->head_size + 2 * (size_t)AVI_MODEL_BLOCK * LOGIT_CHUNK;
}
static double *scratch_freq(const av_model *m, float *scratch) {
    int cols = max3(m->dim, avi_qdim(m), m->hidden_dim);
    size_t w = avi_wmatmul_scratch(AVI_MODEL_BLOCK, cols);
    return (double *)(void *)(scratch + w + w % 2);
}

void avi_model_embed(double *x, const av_model *m, int id, int pos) {
    const int dim = m->dim;
    if (m->arch == AV_ARCH_LLAMA2C) {
        const float *e = m->tok_emb + (size_t)id * dim;
        for (int i = 0; i < dim; i++) x[i] = e[i];
        return;
    }
    for (int i = 0; i < dim; i++) x[i] = avi_weight_at(&m->emb, id, i);
    if (m->arch == AV_ARCH_GPT2)
        for (int i = 0; i < dim; i++) x[i] += avi_weight_at(&m->pos_emb, pos, i);
}

/* out = norm(x)·w (+ b): RMSNorm for the Llama family, LayerNorm (biased variance) for GPT-2; ε the model's */
static void norm_row(double *out, const double *x, const av_model *m, const av_weight *w, const av_weight *b, int len) {
    double r, mean = 0.0;
    if (m->arch == AV_ARCH_GPT2) {
        for (int i = 0; i < len; i++) mean += x[i];
        mean /= len;
        double var = 0.0;
        for (int i = 0; i < len; i++) var += (x[i] - mean) * (x[i] - mean);
        r = 1.0 / sqrt(var / len + m->norm_eps);
    } else {
        double ss = 0.0;
        for (int i = 0; i < len; i++) ss += x[i] * x[i];
        r = 1.0 / sqrt(ss / len + m->norm_eps);
    }
    for (int i = 0; i < len; i++) out[i] = (double)avi_weight_elem(w, i) * (r * (x[i] - mean));
    if (b && b->p)
        for (int i = 0; i < len; i++) out[i] += avi_weight_elem(b, i);
}

static void add_bias(double *y, size_t ld, const av_weight *b, int len, int T) {
    if (!b->p) return;
    for (int t = 0; t < T; t++)
        for (int i = 0; i < len; i++) y[(size_t)t * ld + i] += avi_weight_elem(b, i);
}

/* RoPE's inverse frequencies θ^(−2i/hs), i < hs/2, with Llama 3's rescaling of the long wavelengths
 * (transformers' _compute_llama3_parameters: wavelengths above original/low_freq_factor divided by factor,
 * below original/high_freq_factor kept, between them interpolated) */
static void rope_freqs(double *inv, const av_model *m) {
    const int half = m->head_size / 2;
    for (int i = 0; i < half; i++) {
        double f = 1.0 / pow(m->rope_theta, (double)(2 * i) / m->head_size);
        if (m->rope_llama3) {
            const double pi = 3.14159265358979323846;
            double wavelen = 2 * pi / f, low_wl = m->rope_original_context / m->rope_low_freq,
                   high_wl = m->rope_original_context / m->rope_high_freq;
            if (wavelen > low_wl) f = f / m->rope_factor;
            else if (!(wavelen < high_wl)) {
                double smooth = (m->rope_original_context / wavelen - m->rope_low_freq) / (m->rope_high_freq - m->rope_low_freq);
                f = (1 - smooth) * f / m->rope_factor + smooth * f;
            }
        }
        inv[i] = f;
    }
}

/* rotate-half RoPE on each head of v: (v[i], v[i + hs/2]) rotated by pos·inv[i] */
static void rope_half(double *v, int heads, int hs, const double *inv, int pos) {
    const int half = hs / 2;
    for (int i = 0; i < half; i++) {
        double a = pos * inv[i], c = cos(a), s = sin(a);
        for (int h = 0; h < heads; h++) {
            double *x = v + (size_t)h * hs;
            double x0 = x[i], x1 = x[i + half];
            x[i] = x0 * c - x1 * s;
            x[i + half] = x1 * c + x0 * s;
        }
    }
}

/* RMSNorm over each head of v (Qwen3's q_norm, k_norm), ε the model's */
static void head_norm(double *v, int heads, int hs, const av_weight *w, double eps) {
    for (int h = 0; h < heads; h++) {
        double *x = v + (size_t)h * hs, ss = 0.0;
        for (int i = 0; i < hs; i++) ss += x[i] * x[i];
        double r = 1.0 / sqrt(ss / hs + eps);
        for (int i = 0; i < hs; i++) x[i] = (double)avi_weight_elem(w, i) * (r * x[i]);
    }
}

void avi_model_qkv_rows(double *xb, double *q, double *k, double *v, const av_model *m, int l, const double *x,
                        int pos0, int T, float *scratch) {
    const int dim = m->dim, qd = avi_qdim(m), kvd = m->kv_dim, hs = m->head_size;
    if (m->arch == AV_ARCH_LLAMA2C) {
        for (int t = 0; t < T; t++)
            avi_model_qkv(xb + (size_t)t * dim, q + (size_t)t * qd, k + (size_t)t * kvd, v + (size_t)t * kvd, m, l,
                          x + (size_t)t * dim, pos0 + t);
        return;
    }
    const av_weight *w = m->layer + (size_t)l * AV_LW_COUNT;
    for (int t = 0; t < T; t++)
        norm_row(xb + (size_t)t * dim, x + (size_t)t * dim, m, &w[AV_LW_ATTN_NORM], &w[AV_LW_ATTN_NORM_B], dim);
    avi_wmatmul(q, (size_t)qd, &w[AV_LW_Q], qd, dim, xb, (size_t)dim, T, scratch);
    avi_wmatmul(k, (size_t)kvd, &w[AV_LW_K], kvd, dim, xb, (size_t)dim, T, scratch);
    avi_wmatmul(v, (size_t)kvd, &w[AV_LW_V], kvd, dim, xb, (size_t)dim, T, scratch);
    add_bias(q, (size_t)qd, &w[AV_LW_Q_B], qd, T);
    add_bias(k, (size_t)kvd, &w[AV_LW_K_B], kvd, T);
    add_bias(v, (size_t)kvd, &w[AV_LW_V_B], kvd, T);
    if (m->arch == AV_ARCH_GPT2) return; /* learned positions: no rotation */
    double *inv = scratch_freq(m, scratch);
    rope_freqs(inv, m);
    for (int t = 0; t < T; t++) {
        double *qt = q + (size_t)t * qd, *kt = k + (size_t)t * kvd;
        if (w[AV_LW_Q_NORM].p) head_norm(qt, m->n_heads, hs, &w[AV_LW_Q_NORM], m->norm_eps);
        if (w[AV_LW_K_NORM].p) head_norm(kt, m->n_kv_heads, hs, &w[AV_LW_K_NORM], m->norm_eps);
        rope_half(qt, m->n_heads, hs, inv, pos0 + t);
        rope_half(kt, m->n_kv_heads, hs, inv, pos0 + t);
    }
}

/* GPT-2's "gelu_new": the tanh approximation of GELU */
static double gelu_tanh(double x) {
    const double c = 0.79788456080286535588; /* √(2/π) */
    return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
}

void avi_model_mlp_rows(double *x, double *att, double *xb2, double *hb, double *hb2, const av_model *m, int l, int T,
                        float *scratch) {
    const int dim = m->dim, qd = avi_qdim(m), hd = m->hidden_dim;
    if (m->arch == AV_ARCH_LLAMA2C) {
        for (int t = 0; t < T; t++)
            avi_model_mlp(x + (size_t)t * dim, att + (size_t)t * qd, xb2 + (size_t)t * dim, hb + (size_t)t * hd,
                          hb2 + (size_t)t * hd, m, l);
        return;
    }
    const av_weight *w = m->layer + (size_t)l * AV_LW_COUNT;
    avi_wmatmul(xb2, (size_t)dim, &w[AV_LW_O], dim, qd, att, (size_t)qd, T, scratch);
    add_bias(xb2, (size_t)dim, &w[AV_LW_O_B], dim, T);
    for (size_t i = 0; i < (size_t)T * dim; i++) x[i] += xb2[i];
    for (int t = 0; t < T; t++)
        norm_row(xb2 + (size_t)t * dim, x + (size_t)t * dim, m, &w[AV_LW_FFN_NORM], &w[AV_LW_FFN_NORM_B], dim);
    avi_wmatmul(hb, (size_t)hd, &w[AV_LW_UP], hd, dim, xb2, (size_t)dim, T, scratch);
    add_bias(hb, (size_t)hd, &w[AV_LW_UP_B], hd, T);
    if (m->arch == AV_ARCH_GPT2) {
        for (size_t i = 0; i < (size_t)T * hd; i++) hb[i] = gelu_tanh(hb[i]);
    } else {
        avi_wmatmul(hb2, (size_t)hd, &w[AV_LW_GATE], hd, dim, xb2, (size_t)dim, T, scratch);
        add_bias(hb2, (size_t)hd, &w[AV_LW_GATE_B], hd, T);
        for (size_t i = 0; i < (size_t)T * hd; i++) hb[i] = hb2[i] / (1.0 + exp(-hb2[i])) * hb[i]; /* SiLU(gate) ⊙ up */
    }
    avi_wmatmul(xb2, (size_t)dim, &w[AV_LW_DOWN], dim, hd, hb, (size_t)hd, T, scratch);
    add_bias(xb2, (size_t)dim, &w[AV_LW_DOWN_B], dim, T);
    for (size_t i = 0; i < (size_t)T * dim; i++) x[i] += xb2[i];
}

void avi_model_logits_rows(float *logits, size_t ld, double *xb, const av_model *m, const double *x, int T,
                           float *scratch) {
    const int dim = m->dim, V = m->vocab_size;
    if (m->arch == AV_ARCH_LLAMA2C) {
        for (int t = 0; t < T; t++) avi_model_logits(logits + (size_t)t * ld, xb, m, x + (size_t)t * dim);
        return;
    }
    for (int t = 0; t < T; t++) norm_row(xb + (size_t)t * dim, x + (size_t)t * dim, m, &m->final_norm, &m->final_norm_b, dim);
    double *blk = scratch_freq(m, scratch) + m->head_size / 2;
    for (int r0 = 0; r0 < V; r0 += LOGIT_CHUNK) {
        int R = V - r0 < LOGIT_CHUNK ? V - r0 : LOGIT_CHUNK;
        av_weight rows = m->cls;
        /* rows r0.. of the classifier: a view that starts r0 rows (or columns, transposed) in */
        rows.p = (const unsigned char *)m->cls.p + (size_t)r0 * (size_t)(m->cls.trans ? 1 : m->cls.ld) *
                                                       (m->cls.dtype == AV_ST_F32 ? 4 : 2);
        avi_wmatmul(blk, (size_t)LOGIT_CHUNK, &rows, R, dim, xb, (size_t)dim, T, scratch);
        for (int t = 0; t < T; t++)
            for (int r = 0; r < R; r++) logits[(size_t)t * ld + r0 + r] = (float)blk[(size_t)t * LOGIT_CHUNK + r];
    }
}

// ----------------------------------------------------------------------------------------------------
// the forward pass of the Hugging Face architectures: blocks of positions, layer by layer

/* The key/value cache (as llama2.c's), then one block's rows: x, xb, xb2 [B][dim], q, att [B][qdim],
 * k, v [B][kv_dim], hb, hb2 [B][hidden] in float64, the scores (seq_len doubles), the products' scratch. */
struct hf_ws {
    float *kc, *vc, *scratch;
    double *x, *xb, *xb2, *q, *att, *k, *v, *hb, *hb2, *score;
};
typedef struct hf_ws hf_ws;

static uint64_t hf_layout(const av_model *m, hf_ws *ws, void *work) {
    avi_arena a = work ? avi_arena_over(work) : avi_arena_count();
    const uint64_t B = AVI_MODEL_BLOCK, cache = (uint64_t)m->n_layers * (uint64_t)m->seq_len * (uint64_t)m->kv_dim;
    const uint64_t dim = (uint64_t)m->dim, qd = (uint64_t)avi_qdim(m), kvd = (uint64_t)m->kv_dim, hd = (uint64_t)m->hidden_dim;
    ws->kc = avi_take(&a, 4 * cache);
    ws->vc = avi_take(&a, 4 * cache);
    ws->x = avi_take(&a, 8 * B * dim);
    ws->xb = avi_take(&a, 8 * B * dim);
    ws->xb2 = avi_take(&a, 8 * B * dim);
    ws->q = avi_take(&a, 8 * B * qd);
    ws->att = avi_take(&a, 8 * B * qd);
    ws->k = avi_take(&a, 8 * B * kvd);
    ws->v = avi_take(&a, 8 * B * kvd);
    ws->hb = avi_take(&a, 8 * B * hd);
    ws->hb2 = avi_take(&a, 8 * B * hd);
    ws->score = avi_take(&a, 8 * (uint64_t)m->seq_len);
    ws->scratch = avi_take(&a, 4 * (uint64_t)avi_model_scratch(m));
    return a.used;
}

static uint64_t hf_need(const av_model *m) {
    hf_ws ws;
    return hf_layout(m, &ws, NULL);
}

static int hf_forward(float *Q, float *K, float *V, float *logits, const av_model *m, const int *ids, int start, int n,
                      void *work, size_t work_bytes) {
    hf_ws ws;
    uint64_t need = hf_layout(m, &ws, NULL);
    if (need > SIZE_MAX) return AV_ERR_TOO_LARGE;
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    hf_layout(m, &ws, work);
    const int dim = m->dim, hs = m->head_size, qd = avi_qdim(m), kvd = m->kv_dim, H = m->n_heads, KVH = m->n_kv_heads;
    const int group = H / KVH, S = m->seq_len;
    const double scale = 1.0 / sqrt((double)hs);
    for (int t0 = start; t0 < n; t0 += AVI_MODEL_BLOCK) {
        const int T = n - t0 < AVI_MODEL_BLOCK ? n - t0 : AVI_MODEL_BLOCK;
        for (int t = 0; t < T; t++) avi_model_embed(ws.x + (size_t)t * dim, m, ids[t0 + t], t0 + t);
        for (int l = 0; l < m->n_layers; l++) {
            avi_model_qkv_rows(ws.xb, ws.q, ws.k, ws.v, m, l, ws.x, t0, T, ws.scratch);
            float *kl = ws.kc + (size_t)l * S * kvd, *vl = ws.vc + (size_t)l * S * kvd;
            for (int t = 0; t < T; t++) {
                const int pos = t0 + t;
                float *kc = kl + (size_t)pos * kvd, *vc = vl + (size_t)pos * kvd;
                for (int i = 0; i < kvd; i++) kc[i] = (float)ws.k[(size_t)t * kvd + i], vc[i] = (float)ws.v[(size_t)t * kvd + i];
                for (int h = 0; h < H && Q; h++)
                    for (int i = 0; i < hs; i++) Q[(((size_t)l * H + h) * n + pos) * hs + i] = (float)ws.q[(size_t)t * qd + h * hs + i];
                for (int h = 0; h < KVH; h++)
                    for (int i = 0; i < hs; i++) {
                        size_t at = (((size_t)l * KVH + h) * n + pos) * hs + i;
                        if (K) K[at] = kc[h * hs + i];
                        if (V) V[at] = vc[h * hs + i];
                    }
            }
            /* each position attends to the cache up to itself: the block's own rows are already in it */
            for (int t = 0; t < T; t++)
                for (int h = 0; h < H; h++)
                    avi_model_softmax_head(ws.att + (size_t)t * qd + h * hs, ws.q + (size_t)t * qd + h * hs,
                                           kl + (h / group) * hs, vl + (h / group) * hs, (size_t)kvd, t0 + t, hs, scale,
                                           ws.score);
            avi_model_mlp_rows(ws.x, ws.att, ws.xb2, ws.hb, ws.hb2, m, l, T, ws.scratch);
        }
        if (logits && t0 + T == n)
            avi_model_logits_rows(logits, (size_t)m->vocab_size, ws.xb, m, ws.x + (size_t)(T - 1) * dim, 1, ws.scratch);
    }
    const size_t rows = (size_t)(n - start) * hs;
    for (int b = 0; b < m->n_layers * H; b++)
        if (Q && !avs_all_finite(Q + ((size_t)b * n + start) * hs, rows)) return AV_WARN_PRODUCT_OVERFLOW;
    for (int b = 0; b < m->n_layers * KVH; b++)
        if ((K && !avs_all_finite(K + ((size_t)b * n + start) * hs, rows)) ||
            (V && !avs_all_finite(V + ((size_t)b * n + start) * hs, rows)))
            return AV_WARN_PRODUCT_OVERFLOW;
    if (logits && !avs_all_finite(logits, (size_t)m->vocab_size)) return AV_WARN_PRODUCT_OVERFLOW;
    return AV_OK;
}

int av_forward(float *Q, float *K, float *V, float *logits, const av_model *m, const int *ids, int start, int n,
               void *work, size_t work_bytes) {
    if (!m || !ids || !work) return AV_ERR_NULL;
    if (!avi_model_ok(m)) return AV_ERR_SIZE;
    if (n < 1 || n > m->seq_len || start < 0 || start >= n) return AV_ERR_SIZE;
    for (int t = 0; t < n; t++)
        if (ids[t] < 0 || ids[t] >= m->vocab_size) return AV_ERR_SIZE;
    if (m->arch != AV_ARCH_LLAMA2C) return hf_forward(Q, K, V, logits, m, ids, start, n, work, work_bytes);
    fw_ws ws;
    uint64_t need = forward_bytes(m, &ws, NULL);
    if (need > SIZE_MAX) return AV_ERR_TOO_LARGE;
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    forward_bytes(m, &ws, work);
    const int dim = m->dim, hs = m->head_size, kvd = m->kv_dim, H = m->n_heads, KVH = m->n_kv_heads;
    const int group = H / KVH, S = m->seq_len;
    const double scale = 1.0 / sqrt((double)hs);
    for (int t = start; t < n; t++) {
        const float *e = m->tok_emb + (size_t)ids[t] * dim;
        for (int i = 0; i < dim; i++) ws.x[i] = e[i];
        for (int l = 0; l < m->n_layers; l++) {
            avi_model_qkv(ws.xb, ws.q, ws.k, ws.v, m, l, ws.x, t);
            float *kc = ws.kc + ((size_t)l * S + t) * kvd, *vc = ws.vc + ((size_t)l * S + t) * kvd;
            for (int i = 0; i < kvd; i++) kc[i] = (float)ws.k[i], vc[i] = (float)ws.v[i];
            for (int h = 0; h < H; h++)
                if (Q)
                    for (int i = 0; i < hs; i++) Q[(((size_t)l * H + h) * n + t) * hs + i] = (float)ws.q[h * hs + i];
            for (int h = 0; h < KVH; h++)
                for (int i = 0; i < hs; i++) {
                    size_t at = (((size_t)l * KVH + h) * n + t) * hs + i;
                    if (K) K[at] = kc[h * hs + i];
                    if (V) V[at] = vc[h * hs + i];
                }
            // attention, head by head, over the cached keys 0..t (the cache holds float32, as captured)
            const float *kl = ws.kc + (size_t)l * S * kvd, *vl = ws.vc + (size_t)l * S * kvd;
            for (int h = 0; h < H; h++)
                avi_model_softmax_head(ws.xb + h * hs, ws.q + h * hs, kl + (h / group) * hs, vl + (h / group) * hs,
                                       (size_t)kvd, t, hs, scale, ws.att);
            avi_model_mlp(ws.x, ws.xb, ws.xb2, ws.hb, ws.hb2, m, l);
        }
    }
    if (logits) avi_model_logits(logits, ws.xb, m, ws.x);
    /* the status speaks of what this call wrote: rows start..n−1 of each block (rows below are the caller's).
     * The weights are finite (av_model_parse) and the softmax and SiLU exponentials stay bounded, so a
     * non-finite output is a product or sum that left the float (or double) range. */
    const size_t rows = (size_t)(n - start) * hs;
    for (int b = 0; b < m->n_layers * H; b++)
        if (Q && !avs_all_finite(Q + ((size_t)b * n + start) * hs, rows)) return AV_WARN_PRODUCT_OVERFLOW;
    for (int b = 0; b < m->n_layers * KVH; b++)
        if ((K && !avs_all_finite(K + ((size_t)b * n + start) * hs, rows)) ||
            (V && !avs_all_finite(V + ((size_t)b * n + start) * hs, rows)))
            return AV_WARN_PRODUCT_OVERFLOW;
    if (logits && !avs_all_finite(logits, (size_t)m->vocab_size)) return AV_WARN_PRODUCT_OVERFLOW;
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// the tokenizer

typedef struct tok_ws {
    uint32_t *offset;
    int32_t *len, *sorted;
    float *score;
} tok_ws;

static uint64_t tok_bytes(int vocab, tok_ws *ws, unsigned char *base) {
    uint64_t each = ((uint64_t)vocab * 4 + 63) & ~(uint64_t)63;
    if (base) {
        ws->offset = (uint32_t *)(void *)base;
        ws->len = (int32_t *)(void *)(base + each);
        ws->sorted = (int32_t *)(void *)(base + 2 * each);
        ws->score = (float *)(void *)(base + 3 * each);
    }
    return 4 * each;
}

size_t av_tokenizer_work(int vocab_size) {
    if (vocab_size < 1 || vocab_size > AV_MODEL_MAX_VOCAB) return 0;
    tok_ws ws;
    return (size_t)tok_bytes(vocab_size, &ws, NULL);
}

static int piece_cmp(const unsigned char *a, int la, const unsigned char *b, int lb) {
    int c = memcmp(a, b, (size_t)(la < lb ? la : lb));
    return c ? c : (la > lb) - (la < lb);
}

static int id_cmp(const av_tokenizer *t, int a, int b) {
    return piece_cmp(t->buf + t->offset[a], t->len[a], t->buf + t->offset[b], t->len[b]);
}

/* Sort piece ids by bytes (heap sort: no allocation, no recursion, O(V log V)). */
static void sort_ids(const av_tokenizer *t, int32_t *ids, int n) {
    for (int i = 0; i < n; i++) ids[i] = i;
    for (int end = n, i = n / 2 - 1; end > 1;) {
        int root;
        if (i >= 0) root = i--;
        else {
            int32_t tmp = ids[0];
            ids[0] = ids[--end], ids[end] = tmp;
            root = 0;
        }
        for (;;) {
            int c = 2 * root + 1;
            if (c >= end) break;
            if (c + 1 < end && id_cmp(t, ids[c + 1], ids[c]) > 0) c++;
            if (id_cmp(t, ids[c], ids[root]) <= 0) break;
            int32_t tmp = ids[c];
            ids[c] = ids[root], ids[root] = tmp;
            root = c;
        }
    }
}

int av_tokenizer_parse(av_tokenizer *t, const void *buf, size_t len, int vocab_size, void *work, size_t work_bytes) {
    if (!t || !buf || !work) return AV_ERR_NULL;
    model_error[0] = '\0';
    memset(t, 0, sizeof *t);
    if (vocab_size < 1 || vocab_size > AV_MODEL_MAX_VOCAB) return AV_ERR_SIZE;
    if (vocab_size < 3) return fail("a vocabulary of %d pieces has no BOS (id 1) or EOS (id 2): llama2.c's needs at least 3", vocab_size);
    tok_ws ws;
    if (work_bytes < tok_bytes(vocab_size, &ws, NULL)) return AV_ERR_WORKSPACE;
    tok_bytes(vocab_size, &ws, work);
    const unsigned char *b = buf;
    if (len < 4) return fail("the tokenizer is %zu bytes, shorter than its 4-byte header", len);
    int maxlen = read_i32(b);
    if (maxlen < 1 || maxlen > AV_TOKEN_MAX_LEN)
        return fail("the tokenizer's max_token_length is %d, outside 1..%d: not a llama2.c tokenizer, or a corrupted one", maxlen, AV_TOKEN_MAX_LEN);
    if (len > UINT32_MAX) return fail("the tokenizer is %zu bytes, more than 4 GiB", len);
    size_t at = 4;
    for (int i = 0; i < vocab_size; i++) {
        if (len - at < 8) return fail("the tokenizer ends inside piece %d of %d (at byte %zu of %zu): truncated, or made for a smaller vocabulary", i, vocab_size, at, len);
        float sc = read_f32(b + at);
        int32_t l = read_i32(b + at + 4);
        at += 8;
        if (!isfinite(sc)) return fail("the tokenizer's piece %d has a score that is not a finite number", i);
        if (l < 1 || l > maxlen) return fail("the tokenizer's piece %d has length %d, outside 1..%d (max_token_length)", i, l, maxlen);
        if (len - at < (size_t)l) return fail("the tokenizer's piece %d (length %d) runs past the end of the file (%zu bytes): truncated", i, l, len);
        ws.offset[i] = (uint32_t)at, ws.len[i] = l, ws.score[i] = sc;
        at += (size_t)l;
    }
    if (at != len) return fail("the tokenizer has %zu bytes left over after its %d pieces: made for a larger vocabulary, or not a tokenizer", len - at, vocab_size);
    t->vocab_size = vocab_size, t->max_token_length = maxlen, t->buf = b;
    t->offset = ws.offset, t->len = ws.len, t->score = ws.score;
    sort_ids(t, ws.sorted, vocab_size);
    t->sorted = ws.sorted;
    return AV_OK;
}

/* The id of the piece with exactly these bytes, or −1 (binary search of the sorted ids); LOOKUP_BAD when the
 * sorted table names an id outside the vocabulary (a struct not made by av_tokenizer_parse). */
enum { LOOKUP_BAD = -2 };
static int lookup(const av_tokenizer *t, const unsigned char *s, int l) {
    int lo = 0, hi = t->vocab_size - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, id = t->sorted[mid];
        if (id < 0 || id >= t->vocab_size) return LOOKUP_BAD;
        int c = piece_cmp(t->buf + t->offset[id], t->len[id], s, l);
        if (c == 0) return id;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int hexval(unsigned char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Whether id is inside the vocabulary and is the byte piece "<0xHH>" of byte: id byte + 3 by llama2.c's
 * convention, which a vocabulary without byte pieces does not follow (its id byte + 3 is another piece). */
static int byte_piece(const av_tokenizer *t, int id, unsigned char byte) {
    if (id >= t->vocab_size || t->len[id] != 6) return 0;
    const unsigned char *p = t->buf + t->offset[id];
    return p[0] == '<' && p[1] == '0' && p[2] == 'x' && p[5] == '>' && hexval(p[3]) == byte >> 4 && hexval(p[4]) == (byte & 15);
}

static int past_vocabulary(const av_tokenizer *t) {
    return fail("the tokenizer's tables name an id past its vocabulary of %d pieces", t->vocab_size);
}

int av_encode(int *ids, int *n_ids, int cap, const av_tokenizer *t, const char *text, size_t text_len, int bos) {
    if (!ids || !n_ids || !t || (!text && text_len)) return AV_ERR_NULL;
    if (!t->buf || !t->sorted) return AV_ERR_NULL;
    model_error[0] = '\0';
    *n_ids = 0;
    const unsigned char *s = (const unsigned char *)text;
    int n = 0;
    if (t->vocab_size < 1 || t->vocab_size > AV_MODEL_MAX_VOCAB) return AV_ERR_SIZE;
    /* every id pushed is inside the vocabulary, so the merges below never read its tables past it (a
     * struct whose sorted ids exceed vocab_size, or a vocabulary without BOS, is refused here) */
#define PUSH(id)                                                                                         \
    do {                                                                                                 \
        if ((id) >= t->vocab_size) return past_vocabulary(t);                                          \
        if (n >= cap) return AV_ERR_SIZE;                                                                \
        ids[n++] = (id);                                                                                 \
    } while (0)
    if (bos && t->vocab_size < 2) return fail("the vocabulary of %d piece has no BOS (id 1)", t->vocab_size);
    if (bos) PUSH(1);
    if (text_len) {
        int sp = lookup(t, (const unsigned char *)" ", 1);
        if (sp == LOOKUP_BAD) return past_vocabulary(t);
        if (sp < 0) return fail("the tokenizer has no piece for a space, which encoding puts first");
        PUSH(sp);
    }
    // one UTF-8 character at a time: a lead byte and its continuation bytes (at most 4 in all)
    for (size_t i = 0; i < text_len;) {
        size_t j = i + 1;
        while (j < text_len && (s[j] & 0xC0) == 0x80 && j - i < 4) j++;
        int id = lookup(t, s + i, (int)(j - i));
        if (id == LOOKUP_BAD) return past_vocabulary(t);
        if (id >= 0) PUSH(id);
        else
            for (size_t k = i; k < j; k++) {
                int bid = s[k] + 3;
                if (bid >= t->vocab_size)
                    return fail("the tokenizer has no byte piece for byte 0x%02X (id %d is past its %d pieces)", s[k], bid, t->vocab_size);
                if (!byte_piece(t, bid, s[k]))
                    return fail("the tokenizer has no byte piece for byte 0x%02X (its id %d is not <0x%02X>)", s[k], bid, s[k]);
                PUSH(bid);
            }
        i = j;
    }
#undef PUSH
    // greedy merges: the adjacent pair whose joined piece scores highest (the first of equals), again
    unsigned char joined[2 * AV_TOKEN_MAX_LEN];
    for (;;) {
        float best = -INFINITY;
        int best_id = -1, best_at = -1;
        for (int i = 0; i + 1 < n; i++) {
            int a = ids[i], b = ids[i + 1], la = t->len[a], lb = t->len[b];
            if (la + lb > t->max_token_length) continue;   /* no piece is longer */
            memcpy(joined, t->buf + t->offset[a], (size_t)la);
            memcpy(joined + la, t->buf + t->offset[b], (size_t)lb);
            int id = lookup(t, joined, la + lb);
            if (id == LOOKUP_BAD) return past_vocabulary(t);
            if (id >= 0 && t->score[id] > best) best = t->score[id], best_id = id, best_at = i;
        }
        if (best_at < 0) break;
        ids[best_at] = best_id;
        memmove(ids + best_at + 1, ids + best_at + 2, sizeof *ids * (size_t)(n - best_at - 2));
        n--;
    }
    *n_ids = n;
    return AV_OK;
}

static const unsigned char BYTES[256] = {
#define R16(b) b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8, b + 9, b + 10, b + 11, b + 12, b + 13, b + 14, b + 15
    R16(0), R16(16), R16(32), R16(48), R16(64), R16(80), R16(96), R16(112),
    R16(128), R16(144), R16(160), R16(176), R16(192), R16(208), R16(224), R16(240)
#undef R16
};

int av_token_piece(const char **piece, int *len, const av_tokenizer *t, int prev, int id) {
    if (!piece || !len || !t || !t->buf) return AV_ERR_NULL;
    if (id < 0 || id >= t->vocab_size) return AV_ERR_SIZE;
    const unsigned char *p = t->buf + t->offset[id];
    int l = t->len[id];
    if ((id == 1 || id == 2) && l >= 2 && p[0] == '\n' && p[l - 1] == '\n') p++, l -= 2; /* "\n<s>\n" → "<s>" */
    if (prev == 1 && l > 0 && p[0] == ' ') p++, l--;
    if (l == 6 && p[0] == '<' && p[1] == '0' && p[2] == 'x' && p[5] == '>' && hexval(p[3]) >= 0 && hexval(p[4]) >= 0) {
        *piece = (const char *)&BYTES[hexval(p[3]) * 16 + hexval(p[4])];
        *len = 1;
        return AV_OK;
    }
    *piece = (const char *)p;
    *len = l;
    return AV_OK;
}
