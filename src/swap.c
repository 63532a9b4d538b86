/* swap.c: what the model loses (docs/model.md "Swapped attention"): the forward pass with chosen heads'
 * attention replaced by a variant, the next-token measures against the original, the greedy continuation
 * and the per-layer and per-head sensitivity.
 *
 * The pass runs layer by layer over the whole text, since a swapped head needs every position's q, k and v
 * of its layer at once. A kept head is model.c's own code (avi_model_*), so with every head kept the logits
 * are av_forward's bit for bit. Every given head is checked before anything is written: its knobs for
 * (n, head_size), the causal mask, and the kernel's own rules (asked of the kernel itself, see probe()).
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "simd.h"

// ----------------------------------------------------------------------------------------------------
// the heads' checks

/* The kernel's refusal of these knobs at these sizes. av_attend and av_recurrent check the knobs and the
 * form's rules, then the workspace, and only then read their inputs: a call with no workspace returns the
 * rule's error, or AV_ERR_WORKSPACE when the rules hold. The inputs are never read. */
static int probe(const av_params *p, int n, int hs, int path) {
    float dummy = 0;
    unsigned char none;
    int st = path == AV_SWAP_MATRIX ? av_attend(&dummy, NULL, &dummy, &dummy, &dummy, n, hs, hs, p, &none, 0)
                                    : av_recurrent(&dummy, &dummy, &dummy, &dummy, n, hs, hs, p, &none, 0);
    return st == AV_ERR_WORKSPACE ? AV_OK : st < 0 ? st : AV_ERR_TOO_LARGE;
}

/* One head for a pass over n tokens; *bytes its kernel's workspace. */
static int check_head(uint64_t *bytes, const av_params *p, int n, int hs, int path) {
    av_params c = *p, r;
    c.causal = 1; /* a variant without a causal form says so (AV_ERR_NO_CAUSAL) before the flag is judged */
    int st = av_params_check(&r, &c, n, hs, NULL);
    if (st != AV_OK) return st;
    if (p->causal != 1) return AV_ERR_NEEDS_CAUSAL;
    if (!avi_weights_finite(&r, hs)) return AV_ERR_NONFINITE;
    size_t w = path == AV_SWAP_MATRIX ? av_attend_work(p, n, hs, hs) : av_recurrent_work(p, n, hs, hs);
    if (w == 0) return (st = probe(p, n, hs, path)) != AV_OK ? st : AV_ERR_TOO_LARGE;
    if ((st = probe(p, n, hs, path)) != AV_OK) return st;
    *bytes = w;
    return AV_OK;
}

static int model_fits(const av_model *m) { return m && avi_model_ok(m); }

/* The arguments of a pass over n tokens, and every given head: *head_bytes the largest kernel workspace. */
static int check_pass(uint64_t *head_bytes, const av_model *m, int n, const av_params *const *heads, int path,
                      int *bad) {
    *bad = -1;
    *head_bytes = 0;
    if (!m) return AV_ERR_NULL;
    if (!model_fits(m)) return AV_ERR_SIZE;
    if (path != AV_SWAP_MATRIX && path != AV_SWAP_RECURRENT) return AV_ERR_VARIANT;
    if (n < 1 || n > m->seq_len || n > AV_MAX_N) return AV_ERR_SIZE;
    if (!heads) return AV_OK;
    for (int i = 0; i < m->n_layers * m->n_heads; i++) {
        if (!heads[i]) continue;
        uint64_t b = 0;
        int st = check_head(&b, heads[i], n, m->head_size, path);
        if (st != AV_OK) {
            *bad = i;
            return st;
        }
        *head_bytes = b > *head_bytes ? b : *head_bytes;
    }
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// the workspace of one pass

typedef struct sw_ws {
    double *x, *xb;                /* n×dim: the residual stream; the normed input */
    double *q, *ao;                /* n×qdim: the queries; the heads' outputs */
    double *k, *v;                 /* B×kv_dim: a block's k and v before rounding */
    float *kc, *vc;                /* n×kv_dim: this layer's k and v in float32 (av_forward's cache) */
    double *xb2, *hb, *hb2, *att;  /* B×dim, B×hidden, B×hidden, n */
    float *hq, *hk, *hv, *ho;      /* n×head_size: a swapped head's q, k, v and output */
    float *scratch;                /* the block pieces' (avi_model_scratch) */
    void *head;                    /* the kernel's workspace */
    size_t head_bytes;
} sw_ws;

static void lay_out(sw_ws *ws, avi_arena *a, const av_model *m, int n, uint64_t head_bytes) {
    uint64_t N = (uint64_t)n, B = AVI_MODEL_BLOCK, nd = N * (uint64_t)m->dim, nq = N * (uint64_t)avi_qdim(m);
    uint64_t nk = N * (uint64_t)m->kv_dim, nh = N * (uint64_t)m->head_size;
    ws->x = avi_take(a, 8 * nd);
    ws->xb = avi_take(a, 8 * nd);
    ws->q = avi_take(a, 8 * nq);
    ws->ao = avi_take(a, 8 * nq);
    ws->k = avi_take(a, 8 * B * (uint64_t)m->kv_dim);
    ws->v = avi_take(a, 8 * B * (uint64_t)m->kv_dim);
    ws->kc = avi_take(a, 4 * nk);
    ws->vc = avi_take(a, 4 * nk);
    ws->xb2 = avi_take(a, 8 * B * (uint64_t)m->dim);
    ws->hb = avi_take(a, 8 * B * (uint64_t)m->hidden_dim);
    ws->hb2 = avi_take(a, 8 * B * (uint64_t)m->hidden_dim);
    ws->att = avi_take(a, 8 * N);
    ws->hq = avi_take(a, 4 * nh);
    ws->hk = avi_take(a, 4 * nh);
    ws->hv = avi_take(a, 4 * nh);
    ws->ho = avi_take(a, 4 * nh);
    ws->scratch = avi_take(a, 4 * (uint64_t)avi_model_scratch(m));
    ws->head = avi_take(a, head_bytes);
    ws->head_bytes = (size_t)head_bytes; /* checked against SIZE_MAX with the whole need */
}

static uint64_t pass_need(const av_model *m, int n, uint64_t head_bytes) {
    avi_arena a = avi_arena_count();
    sw_ws ws;
    lay_out(&ws, &a, m, n, head_bytes);
    return a.used;
}

// ----------------------------------------------------------------------------------------------------
// the pass

/* The swapped pass over ids[0..n), arguments checked. logits (when not NULL) gets the rows of positions
 * from..n−1, row t at (t − from)·vocab. */
static int run_pass(float *logits, int from, float *Q, float *K, float *V, const av_model *m, const int *ids, int n,
                    const av_params *const *heads, int path, sw_ws *ws) {
    const int dim = m->dim, qd = avi_qdim(m), hs = m->head_size, kvd = m->kv_dim, H = m->n_heads, KVH = m->n_kv_heads;
    const int group = H / KVH;
    const double scale = 1.0 / sqrt((double)hs);
    const size_t nh = (size_t)n * hs;
    int st = AV_OK;
    for (int t = 0; t < n; t++) avi_model_embed(ws->x + (size_t)t * dim, m, ids[t], t);
    for (int l = 0; l < m->n_layers; l++) {
        for (int t0 = 0; t0 < n; t0 += AVI_MODEL_BLOCK) {
            const int T = n - t0 < AVI_MODEL_BLOCK ? n - t0 : AVI_MODEL_BLOCK;
            avi_model_qkv_rows(ws->xb + (size_t)t0 * dim, ws->q + (size_t)t0 * qd, ws->k, ws->v, m, l,
                               ws->x + (size_t)t0 * dim, t0, T, ws->scratch);
            for (int b = 0; b < T; b++) {
                const int t = t0 + b;
                const double *q = ws->q + (size_t)t * qd;
                float *kc = ws->kc + (size_t)t * kvd, *vc = ws->vc + (size_t)t * kvd;
                for (int i = 0; i < kvd; i++) kc[i] = (float)ws->k[(size_t)b * kvd + i], vc[i] = (float)ws->v[(size_t)b * kvd + i];
                if (Q)
                    for (int h = 0; h < H; h++)
                        for (int i = 0; i < hs; i++) Q[(((size_t)l * H + h) * n + t) * hs + i] = (float)q[h * hs + i];
                for (int h = 0; h < KVH; h++)
                    for (int i = 0; i < hs; i++) {
                        size_t at = (((size_t)l * KVH + h) * n + t) * hs + i;
                        if (K) K[at] = kc[h * hs + i];
                        if (V) V[at] = vc[h * hs + i];
                    }
            }
        }
        for (int h = 0; h < H; h++) {
            const av_params *p = heads ? heads[l * H + h] : NULL;
            const int kvh = h / group;
            if (!p) {
                for (int t = 0; t < n; t++)
                    avi_model_softmax_head(ws->ao + (size_t)t * qd + h * hs, ws->q + (size_t)t * qd + h * hs,
                                           ws->kc + kvh * hs, ws->vc + kvh * hs, (size_t)kvd, t, hs, scale, ws->att);
                continue;
            }
            for (int t = 0; t < n; t++)
                for (int i = 0; i < hs; i++) {
                    ws->hq[(size_t)t * hs + i] = (float)ws->q[(size_t)t * qd + h * hs + i];
                    ws->hk[(size_t)t * hs + i] = ws->kc[(size_t)t * kvd + kvh * hs + i];
                    ws->hv[(size_t)t * hs + i] = ws->vc[(size_t)t * kvd + kvh * hs + i];
                }
            int hst;
            if (!avs_all_finite(ws->hq, nh) || !avs_all_finite(ws->hk, nh) || !avs_all_finite(ws->hv, nh)) {
                /* the stream left the float range before this head: its output is undefined, as the logits */
                for (size_t e = 0; e < nh; e++) ws->ho[e] = NAN;
                hst = AV_WARN_PRODUCT_OVERFLOW;
            } else {
                hst = path == AV_SWAP_MATRIX
                          ? av_attend(ws->ho, NULL, ws->hq, ws->hk, ws->hv, n, hs, hs, p, ws->head, ws->head_bytes)
                          : av_recurrent(ws->ho, ws->hq, ws->hk, ws->hv, n, hs, hs, p, ws->head, ws->head_bytes);
                if (hst < 0) return hst; /* unreachable: check_pass asked the kernel's rules, the inputs are finite */
            }
            st = avi_merge(st, hst);
            for (int t = 0; t < n; t++)
                for (int i = 0; i < hs; i++) ws->ao[(size_t)t * qd + h * hs + i] = ws->ho[(size_t)t * hs + i];
        }
        for (int t0 = 0; t0 < n; t0 += AVI_MODEL_BLOCK) {
            const int T = n - t0 < AVI_MODEL_BLOCK ? n - t0 : AVI_MODEL_BLOCK;
            avi_model_mlp_rows(ws->x + (size_t)t0 * dim, ws->ao + (size_t)t0 * qd, ws->xb2, ws->hb, ws->hb2, m, l, T,
                               ws->scratch);
        }
    }
    int finite = 1;
    if (logits)
        for (int t0 = from; t0 < n; t0 += AVI_MODEL_BLOCK) {
            const int T = n - t0 < AVI_MODEL_BLOCK ? n - t0 : AVI_MODEL_BLOCK;
            float *row = logits + (size_t)(t0 - from) * m->vocab_size;
            avi_model_logits_rows(row, (size_t)m->vocab_size, ws->xb, m, ws->x + (size_t)t0 * dim, T, ws->scratch);
            finite = finite && avs_all_finite(row, (size_t)T * m->vocab_size);
        }
    const size_t qn = (size_t)m->n_layers * H * nh, kn = (size_t)m->n_layers * KVH * nh;
    finite = finite && !(Q && !avs_all_finite(Q, qn)) && !(K && !avs_all_finite(K, kn)) && !(V && !avs_all_finite(V, kn));
    /* a status that promises finite outputs (AV_OK, a head's zero row) must not cover Inf or NaN */
    return finite ? st : avi_merge(st, AV_WARN_PRODUCT_OVERFLOW);
}

/* check_pass, then the workspace against the need (the pass's, plus `extra` bytes of the caller's blocks):
 * *ws laid out over work, *a left after it for those blocks. */
static int prepare(sw_ws *ws, avi_arena *a, const av_model *m, int n, const av_params *const *heads, int path,
                   int *bad, void *work, size_t work_bytes, uint64_t extra) {
    uint64_t hb;
    int st = check_pass(&hb, m, n, heads, path, bad);
    if (st != AV_OK) return st;
    uint64_t need = pass_need(m, n, hb) + extra;
    if (need > SIZE_MAX) return AV_ERR_TOO_LARGE;
    if (!work) return AV_ERR_NULL;
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    *a = avi_arena_over(work);
    lay_out(ws, a, m, n, hb);
    return AV_OK;
}

static size_t work_of(const av_model *m, int n, const av_params *const *heads, int path, uint64_t extra) {
    uint64_t hb;
    int bad;
    if (check_pass(&hb, m, n, heads, path, &bad) != AV_OK) return 0;
    uint64_t need = pass_need(m, n, hb) + extra;
    return need > SIZE_MAX ? 0 : (size_t)need;
}

static int ids_ok(const int *ids, int n, int vocab) {
    for (int t = 0; t < n; t++)
        if (ids[t] < 0 || ids[t] >= vocab) return 0;
    return 1;
}

size_t av_forward_swapped_work(const av_model *m, int n, const av_params *const *heads, int path) {
    return work_of(m, n, heads, path, 0);
}

int av_forward_swapped(float *logits, float *Q, float *K, float *V, const av_model *m, const int *ids, int n,
                       const av_params *const *heads, int path, int *bad_head, void *work, size_t work_bytes) {
    int bad_local, *bad = bad_head ? bad_head : &bad_local;
    *bad = -1;
    if (!m || !ids) return AV_ERR_NULL;
    sw_ws ws;
    avi_arena a;
    int st = prepare(&ws, &a, m, n, heads, path, bad, work, work_bytes, 0);
    if (st != AV_OK) return st;
    if (!ids_ok(ids, n, m->vocab_size)) return AV_ERR_SIZE;
    return run_pass(logits, 0, Q, K, V, m, ids, n, heads, path, &ws);
}

// ----------------------------------------------------------------------------------------------------
// the measures

/* ln Σ_v exp(row[v]) in float64 (the max taken out); *arg the first argmax. */
static double log_sum_exp(int *arg, const float *row, int vocab) {
    int best = 0;
    for (int v = 1; v < vocab; v++)
        if (row[v] > row[best]) best = v;
    double mx = row[best], s = 0;
    for (int v = 0; v < vocab; v++) s += exp((double)row[v] - mx);
    *arg = best;
    return mx + log(s);
}

int av_next_token_measures(double *mean, double *loss_s, double *loss_o, double *kl, int *agree, const float *lo,
                           const float *ls, const int *ids, int n, int vocab) {
    if (!mean || !lo || !ls || !ids) return AV_ERR_NULL;
    if (n < 2 || vocab < 1 || !ids_ok(ids, n, vocab)) return AV_ERR_SIZE;
    const size_t rows = (size_t)(n - 1) * vocab; /* the last position predicts nothing: its row is not read */
    if (!avs_all_finite(lo, rows) || !avs_all_finite(ls, rows)) return AV_ERR_NONFINITE;
    double sum[4] = {0, 0, 0, 0};
    for (int t = 0; t + 1 < n; t++) {
        const float *o = lo + (size_t)t * vocab, *s = ls + (size_t)t * vocab;
        int ao, as;
        double zo = log_sum_exp(&ao, o, vocab), zs = log_sum_exp(&as, s, vocab);
        double d = 0;
        for (int v = 0; v < vocab; v++) {
            double lpo = (double)o[v] - zo, lps = (double)s[v] - zs;
            d += exp(lpo) * (lpo - lps);
        }
        d = d > 0 ? d : 0;
        double ls_t = zs - s[ids[t + 1]], lo_t = zo - o[ids[t + 1]];
        if (loss_s) loss_s[t] = ls_t;
        if (loss_o) loss_o[t] = lo_t;
        if (kl) kl[t] = d;
        if (agree) agree[t] = ao == as;
        sum[0] += ls_t, sum[1] += lo_t, sum[2] += d, sum[3] += ao == as;
    }
    for (int i = 0; i < 4; i++) mean[i] = sum[i] / (n - 1);
    mean[4] = exp(mean[0]);
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// the greedy continuation

/* The passes run over lengths n_prompt..last − 1, last = min(n_total, seq_len): each gives one token. */
static int last_length(const av_model *m, long long n_total) {
    return n_total > m->seq_len ? m->seq_len : (int)n_total;
}

/* Every head kept (heads NULL or every entry NULL): the original model, whose passes are av_forward's bit for
 * bit, so the continuation runs av_forward incrementally on its KV cache (one position per token instead of
 * the whole pass again): the logits and av_forward's workspace. */
static int all_kept(const av_model *m, const av_params *const *heads) {
    if (heads)
        for (int i = 0; i < m->n_layers * m->n_heads; i++)
            if (heads[i]) return 0;
    return 1;
}

/* The ids generation stops at: llama2.c's BOS (id 1, where the next story begins), a Hugging Face model's EOS ids */
static int is_stop(const av_model *m, int id) {
    for (int i = 0; i < m->n_eos && i < 4; i++)
        if (id == m->eos_id[i]) return 1;
    return 0;
}

static uint64_t kept_need(const av_model *m) {
    if (!av_forward_work(m)) return UINT64_MAX; /* the cache does not fit this build: too large, not small */
    avi_arena a = avi_arena_count();
    avi_take(&a, 4 * (uint64_t)m->vocab_size);
    avi_take(&a, (uint64_t)av_forward_work(m));
    return a.used;
}

size_t av_continue_swapped_work(const av_model *m, int n_total, const av_params *const *heads, int path) {
    if (!m || !model_fits(m) || n_total < 1) return 0;
    int top = last_length(m, n_total) - 1;
    uint64_t logits = 4 * (uint64_t)m->vocab_size + 64;
    if (top < 1) return (size_t)logits; /* no pass runs */
    if (all_kept(m, heads)) {
        uint64_t hb;
        int bad;
        if (check_pass(&hb, m, top, NULL, path, &bad) != AV_OK) return 0; /* the pass's refusals, kept */
        uint64_t need = kept_need(m);
        return need > SIZE_MAX ? 0 : (size_t)need;
    }
    return work_of(m, top, heads, path, logits);
}

/* The greedy loop of the original model: av_forward over the prompt, then one position per token. */
static int continue_kept(int *out, int *n_out, int n, int last, const av_model *m, void *work) {
    avi_arena a = avi_arena_over(work);
    float *logits = avi_take(&a, 4 * (uint64_t)m->vocab_size);
    void *fw = avi_take(&a, (uint64_t)av_forward_work(m));
    const size_t fb = av_forward_work(m);
    int st = AV_OK, start = 0;
    while (n < last) {
        int pst = av_forward(NULL, NULL, NULL, logits, m, out, start, n, fw, fb);
        if (pst < 0) return pst; /* unreachable: the arguments were checked */
        st = avi_merge(st, pst);
        if (pst == AV_WARN_PRODUCT_OVERFLOW) break; /* no argmax of Inf or NaN logits */
        int best = 0;
        for (int v = 1; v < m->vocab_size; v++)
            if (logits[v] > logits[best]) best = v;
        if (is_stop(m, best)) break;
        out[n++] = best;
        start = n - 1;
    }
    *n_out = n;
    return st;
}

int av_continue_swapped(int *out, int *n_out, const av_model *m, const int *prompt, int n_prompt, int steps,
                        const av_params *const *heads, int path, int *bad_head, void *work, size_t work_bytes) {
    int bad_local, *bad = bad_head ? bad_head : &bad_local;
    *bad = -1;
    if (!out || !n_out || !m || !prompt) return AV_ERR_NULL;
    if (!model_fits(m)) return AV_ERR_SIZE;
    if (path != AV_SWAP_MATRIX && path != AV_SWAP_RECURRENT) return AV_ERR_VARIANT;
    if (n_prompt < 1 || n_prompt > m->seq_len || steps < 0 || !ids_ok(prompt, n_prompt, m->vocab_size))
        return AV_ERR_SIZE;
    const int last = last_length(m, (long long)n_prompt + steps);
    const uint64_t logit_bytes = 4 * (uint64_t)m->vocab_size + 64;
    /* the workspace as av_continue_swapped_work sizes it (at the longest pass n_prompt + steps would allow),
     * then every pass's heads and need, before anything is written (a knob bounded by n, gates set for one n) */
    uint64_t hb, need = logit_bytes;
    int st;
    const int kept = all_kept(m, heads);
    if (kept) {
        if (last - 1 >= 1 && (st = check_pass(&hb, m, last - 1, NULL, path, bad)) != AV_OK) return st;
        if (last - 1 >= 1) need = kept_need(m);
    } else if (last - 1 >= 1) {
        if ((st = check_pass(&hb, m, last - 1, heads, path, bad)) != AV_OK) return st;
        need += pass_need(m, last - 1, hb);
    }
    for (int len = n_prompt; !kept && len < last; len++) {
        if ((st = check_pass(&hb, m, len, heads, path, bad)) != AV_OK) return st;
        uint64_t here = pass_need(m, len, hb) + logit_bytes;
        need = here > need ? here : need;
    }
    if (need > SIZE_MAX) return AV_ERR_TOO_LARGE;
    if (!work) return AV_ERR_NULL;
    if (work_bytes < need) return AV_ERR_WORKSPACE;
    memcpy(out, prompt, sizeof *out * (size_t)n_prompt);
    if (kept) return continue_kept(out, n_out, n_prompt, last, m, work);
    int n = n_prompt;
    st = AV_OK;
    while (n < last) {
        avi_arena a = avi_arena_over(work);
        float *logits = avi_take(&a, 4 * (uint64_t)m->vocab_size);
        sw_ws ws;
        check_pass(&hb, m, n, heads, path, bad); /* passed above: the head workspace at this length */
        lay_out(&ws, &a, m, n, hb);
        int pst = run_pass(logits, n - 1, NULL, NULL, NULL, m, out, n, heads, path, &ws);
        if (pst < 0) {
            st = pst;
            break;
        }
        if (pst == AV_WARN_OVERFLOW || pst == AV_WARN_PRODUCT_OVERFLOW) { /* no argmax of Inf or NaN logits */
            st = avi_merge(st, pst);
            break;
        }
        st = avi_merge(st, pst);
        int best = 0;
        for (int v = 1; v < m->vocab_size; v++)
            if (logits[v] > logits[best]) best = v;
        if (is_stop(m, best)) break;
        out[n++] = best;
    }
    *n_out = n;
    return st;
}

// ----------------------------------------------------------------------------------------------------
// sensitivity

/* Beside the pass: the original logits, this pass's logits (n×vocab each) and the pass's heads. */
static uint64_t sens_extra(const av_model *m, int n) {
    uint64_t lg = 4 * (uint64_t)n * (uint64_t)m->vocab_size, hp = sizeof(void *) * (uint64_t)m->n_layers * m->n_heads;
    return 2 * ((lg + 63) & ~(uint64_t)63) + ((hp + 63) & ~(uint64_t)63) + 64;
}

size_t av_swap_sensitivity_work(const av_model *m, int n, const av_params *const *heads, int path) {
    if (!m || !model_fits(m) || n < 2) return 0;
    return work_of(m, n, heads, path, sens_extra(m, n));
}

/* entry[0..3) from the measures of ls against lo; NaN when a pass's logits are not finite. */
static void sens_entry(double *entry, const float *lo, const float *ls, const int *ids, int n, int vocab) {
    double mean[5];
    if (av_next_token_measures(mean, NULL, NULL, NULL, NULL, lo, ls, ids, n, vocab) != AV_OK) {
        entry[0] = entry[1] = entry[2] = NAN;
        return;
    }
    entry[0] = mean[0] - mean[1], entry[1] = mean[2], entry[2] = mean[3];
}

int av_swap_sensitivity(double *by_layer, double *by_head, const av_model *m, const int *ids, int n,
                        const av_params *const *heads, int path, int *bad_head, void *work, size_t work_bytes) {
    int bad_local, *bad = bad_head ? bad_head : &bad_local;
    *bad = -1;
    if (!by_layer || !by_head || !m || !ids) return AV_ERR_NULL;
    if (model_fits(m) && n < 2) return AV_ERR_SIZE;
    sw_ws ws;
    avi_arena a;
    int st = model_fits(m) ? prepare(&ws, &a, m, n, heads, path, bad, work, work_bytes, sens_extra(m, n)) : AV_ERR_SIZE;
    if (st != AV_OK) return st;
    if (!ids_ok(ids, n, m->vocab_size)) return AV_ERR_SIZE;
    const int L = m->n_layers, H = m->n_heads, vocab = m->vocab_size;
    float *lo = avi_take(&a, 4 * (uint64_t)n * vocab), *ls = avi_take(&a, 4 * (uint64_t)n * vocab);
    const av_params **chosen = avi_take(&a, sizeof(void *) * (uint64_t)L * H);
    st = run_pass(lo, 0, NULL, NULL, NULL, m, ids, n, NULL, path, &ws);
    if (st < 0) return st;
    /* a head kept everywhere in a pass gives the original's logits bit for bit: 0, 0, 1 without a pass (NaN
     * when the original's logits are not finite) */
    const double same[3] = {st == AV_WARN_PRODUCT_OVERFLOW ? NAN : 0, st == AV_WARN_PRODUCT_OVERFLOW ? NAN : 0,
                            st == AV_WARN_PRODUCT_OVERFLOW ? NAN : 1};
    for (int l = 0; l < L; l++) {
        int any = 0;
        for (int i = 0; i < L * H; i++) chosen[i] = NULL;
        for (int h = 0; h < H; h++) {
            const av_params *p = heads ? heads[l * H + h] : NULL;
            chosen[l * H + h] = p;
            any |= p != NULL;
        }
        double *e = by_layer + (size_t)l * 3;
        if (!any) {
            memcpy(e, same, sizeof same);
            continue;
        }
        int pst = run_pass(ls, 0, NULL, NULL, NULL, m, ids, n, chosen, path, &ws);
        if (pst < 0) return pst;
        st = avi_merge(st, pst);
        sens_entry(e, lo, ls, ids, n, vocab);
    }
    for (int i = 0; i < L * H; i++) {
        double *e = by_head + (size_t)i * 3;
        const av_params *p = heads ? heads[i] : NULL;
        if (!p) {
            memcpy(e, same, sizeof same);
            continue;
        }
        for (int j = 0; j < L * H; j++) chosen[j] = j == i ? p : NULL;
        int pst = run_pass(ls, 0, NULL, NULL, NULL, m, ids, n, chosen, path, &ws);
        if (pst < 0) return pst;
        st = avi_merge(st, pst);
        sens_entry(e, lo, ls, ids, n, vocab);
    }
    return st;
}
