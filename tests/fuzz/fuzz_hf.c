/* fuzz_hf.c: libFuzzer target for the Hugging Face model folder readers (src/hf_model.c): config.json, the
 * shard index and the bind of one safetensors file. Seeds: tests/fuzz/corpus_hf (written by
 * tests/fuzz/make_hf_corpus.py). Run by `make fuzz`.
 *
 * Input: two little-endian 16-bit lengths a and b, then a bytes of config.json, b bytes of index, the rest
 * one .safetensors file (each cut to what the input holds), each copied into a private allocation of
 * exactly its size so that ASan sees any read past it. Every refusal must carry a one-line sentence; the
 * index's workspace grows with its text, never with its claims, and one byte less is AV_ERR_WORKSPACE; a
 * parsed index is sorted, unique and in range; a bound model has the config's sizes and every weight view,
 * to its last element, inside the file's data; av_hf_model_bytes never exceeds the data.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

static const unsigned DSIZE[3] = {4, 2, 2};

static unsigned char *copy(const uint8_t *p, size_t n) {
    unsigned char *b = malloc(n ? n : 1);
    if (b && n) memcpy(b, p, n);
    return b;
}

static void one_line(void) {
    const char *e = av_model_error();
    if (!e[0] || strchr(e, '\n')) abort();
}

/* The weight's elements (rows × cols, or a vector of rows) lie inside [lo, hi). */
static void inside(const av_weight *w, int64_t rows, int64_t cols, const unsigned char *lo, const unsigned char *hi) {
    if (!w->p) return;
    if (w->dtype < 0 || w->dtype > 2) abort();
    const unsigned char *p = w->p;
    int64_t last = cols < 0 ? rows - 1 : w->trans ? (cols - 1) * w->ld + rows - 1 : (rows - 1) * w->ld + cols - 1;
    if (p < lo || last < 0 || (uint64_t)(hi - p) < (uint64_t)(last + 1) * DSIZE[w->dtype]) abort();
}

static void check_model(const av_model *m, const av_hf_config *c, const av_st_file *f, int max_seq) {
    const unsigned char *lo = f->data, *hi = f->data + f->data_bytes;
    if (m->dim != c->dim || m->n_layers != c->n_layers || m->vocab_size != c->vocab_size || m->arch != c->arch) abort();
    if (m->seq_len < 1 || m->seq_len > max_seq || m->seq_len > c->context) abort();
    if (c->sliding_window && m->seq_len > c->sliding_window) abort();
    const int64_t D = m->dim, F = m->hidden_dim, QD = (int64_t)m->n_heads * m->head_size, KD = m->kv_dim, V = m->vocab_size;
    if (!m->emb.p || !m->cls.p || !m->final_norm.p || !m->layer) abort();
    inside(&m->emb, V, D, lo, hi);
    inside(&m->cls, V, D, lo, hi);
    inside(&m->final_norm, D, -1, lo, hi);
    inside(&m->final_norm_b, D, -1, lo, hi);
    inside(&m->pos_emb, m->context, D, lo, hi);
    for (int l = 0; l < m->n_layers; l++) {
        const av_weight *w = m->layer + (size_t)l * AV_LW_COUNT;
        if (!w[AV_LW_Q].p || !w[AV_LW_K].p || !w[AV_LW_V].p || !w[AV_LW_O].p || !w[AV_LW_UP].p || !w[AV_LW_DOWN].p) abort();
        inside(&w[AV_LW_ATTN_NORM], D, -1, lo, hi);
        inside(&w[AV_LW_ATTN_NORM_B], D, -1, lo, hi);
        inside(&w[AV_LW_Q], QD, D, lo, hi);
        inside(&w[AV_LW_K], KD, D, lo, hi);
        inside(&w[AV_LW_V], KD, D, lo, hi);
        inside(&w[AV_LW_O], D, QD, lo, hi);
        inside(&w[AV_LW_Q_B], QD, -1, lo, hi);
        inside(&w[AV_LW_K_B], KD, -1, lo, hi);
        inside(&w[AV_LW_V_B], KD, -1, lo, hi);
        inside(&w[AV_LW_O_B], D, -1, lo, hi);
        inside(&w[AV_LW_Q_NORM], m->head_size, -1, lo, hi);
        inside(&w[AV_LW_K_NORM], m->head_size, -1, lo, hi);
        inside(&w[AV_LW_FFN_NORM], D, -1, lo, hi);
        inside(&w[AV_LW_FFN_NORM_B], D, -1, lo, hi);
        inside(&w[AV_LW_GATE], F, D, lo, hi);
        inside(&w[AV_LW_UP], F, D, lo, hi);
        inside(&w[AV_LW_DOWN], D, F, lo, hi);
        inside(&w[AV_LW_GATE_B], F, -1, lo, hi);
        inside(&w[AV_LW_UP_B], F, -1, lo, hi);
        inside(&w[AV_LW_DOWN_B], D, -1, lo, hi);
    }
    if (av_hf_model_bytes(m) > f->data_bytes) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 5) return 0;
    size_t a = (size_t)data[0] | (size_t)data[1] << 8, b = (size_t)data[2] | (size_t)data[3] << 8, rest = size - 5;
    int max_seq = 1 + data[4];
    data += 5;
    if (a > rest) a = rest;
    rest -= a;
    if (b > rest) b = rest;
    rest -= b;
    unsigned char *cj = copy(data, a), *ij = copy(data + a, b), *sb = copy(data + a + b, rest);
    void *iw = NULL, *sw = NULL, *mw = NULL;
    if (!cj || !ij || !sb) goto out;

    av_hf_config c;
    int cst = av_hf_config_parse(&c, cj, a);
    if (cst != AV_OK && cst != AV_ERR_FORMAT) abort();
    if (cst) one_line();

    av_hf_index ix;
    int ist = AV_ERR_FORMAT;
    size_t iwb = av_hf_index_work(ij, b);
    if (!iwb) one_line();
    else {
        if (iwb > 64 * b + 4096) abort(); /* the workspace follows the text */
        if (!(iw = malloc(iwb))) goto out;
        if (av_hf_index_parse(&ix, iw, iwb - 1, ij, b) != AV_ERR_WORKSPACE) abort();
        ist = av_hf_index_parse(&ix, iw, iwb, ij, b);
        if (ist != AV_OK && ist != AV_ERR_FORMAT) abort();
        if (ist) one_line();
        else {
            if (ix.n_tensors < 1 || ix.n_shards < 1 || ix.n_shards > ix.n_tensors) abort();
            for (int i = 0; i < ix.n_tensors; i++) {
                if (ix.tensor_shard[i] < 0 || ix.tensor_shard[i] >= ix.n_shards) abort();
                if (i && strcmp(ix.tensor[i - 1], ix.tensor[i]) >= 0) abort();
            }
            for (int s = 0; s < ix.n_shards; s++)
                if (!ix.shard[s][0] || strchr(ix.shard[s], '/') || strstr(ix.shard[s], "..")) abort();
        }
    }

    av_st_file f;
    size_t swb = av_st_work(sb, rest);
    if (cst || !swb) goto out;
    if (!(sw = malloc(swb)) || av_st_parse(&f, sw, swb, sb, rest) != AV_OK) goto out;
    size_t mwb = av_hf_model_work(&c);
    if (!mwb || mwb > 64 + (size_t)c.n_layers * AV_LW_COUNT * sizeof(av_weight) + 64) abort();
    if (!(mw = malloc(mwb))) goto out;
    av_model m;
    if (av_hf_model_bind(&m, &c, &f, 1, NULL, max_seq, mw, mwb - 1) != AV_ERR_WORKSPACE) abort();
    for (int with_ix = 0; with_ix < 2; with_ix++) {
        if (with_ix && (ist || ix.n_shards != 1)) break;
        int st = av_hf_model_bind(&m, &c, &f, 1, with_ix ? &ix : NULL, max_seq, mw, mwb);
        if (st != AV_OK && st != AV_ERR_FORMAT && st != AV_ERR_NONFINITE) abort();
        if (st) {
            one_line();
            if (m.layer || m.dim) abort(); /* nothing half-bound */
        } else check_model(&m, &c, &f, max_seq);
    }
out:
    free(cj), free(ij), free(sb), free(iw), free(sw), free(mw);
    return 0;
}
