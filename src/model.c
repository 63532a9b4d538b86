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

int avi_model_ok(const av_model *m) {
    return m->dim > 0 && m->n_layers > 0 && m->n_heads > 0 && m->n_kv_heads > 0 && m->vocab_size > 0 && m->seq_len > 0 &&
           m->head_size > 0 && m->kv_dim == m->head_size * m->n_kv_heads && m->tok_emb && m->wcls;
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

size_t av_forward_work(const av_model *m) {
    if (!m || !avi_model_ok(m)) return 0;
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

int av_forward(float *Q, float *K, float *V, float *logits, const av_model *m, const int *ids, int start, int n,
               void *work, size_t work_bytes) {
    if (!m || !ids || !work) return AV_ERR_NULL;
    if (!avi_model_ok(m)) return AV_ERR_SIZE;
    if (n < 1 || n > m->seq_len || start < 0 || start >= n) return AV_ERR_SIZE;
    for (int t = 0; t < n; t++)
        if (ids[t] < 0 || ids[t] >= m->vocab_size) return AV_ERR_SIZE;
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
