/* hf_tokenizer.c: tokenizer.json (docs/hf.md "tokenizer.json"): the BPE files of GPT-2, Llama 2 and 3,
 * Mistral, Qwen2/3 and SmolLM, parsed into the caller's workspace and encoded as the Hugging Face library
 * encodes them: added tokens split out first (leftmost, longest), the normalizer, the pre-tokenizer (the
 * three regexes the files use, matched by hand-written matchers with the regex's leftmost-first semantics;
 * Digits; ByteLevel; Metaspace), then BPE per pre-token (lowest rank first, leftmost among equals, with the
 * library's own queue so that even its tie-breaking is the same), byte fallback and unk, and the template's
 * special tokens.
 *
 * Nothing is allocated: av_hf_tokenizer_work sizes the workspace from the JSON's node count (a bound on the
 * entries, merges and strings the file can hold), av_hf_encode_work the scratch of one encode from the text's
 * length (a bound on what normalization and the pre-tokenizers can make of it). Byte-level vocabularies are
 * stored with their pieces mapped back to bytes, so that the text is never mapped to GPT-2's printable
 * alphabet: a byte is a symbol and a pre-token's bytes are the key of its whole-word lookup.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "json.h"
#include "unicode_tables.h"

// ----------------------------------------------------------------------------------------------------
// refusals

static int fail(const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    avi_model_set_error(msg);
    return AV_ERR_FORMAT;
}

/* A piece or name for a message: at most 32 bytes, quotes, backslashes and control bytes escaped (never a
 * dump of the input). Valid until four more calls. */
static const char *brief(const char *s, size_t n) {
    static char ring[4][80];
    static int k;
    char *o = ring[k++ & 3];
    size_t j = 0;
    for (size_t i = 0; i < n && j < 64; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == 32) {
            while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80 && j < 70) o[j++] = s[i++]; /* finish a character */
            memcpy(o + j, "...", 3), j += 3;
            break;
        }
        if (c == '"' || c == '\\') o[j++] = '\\', o[j++] = (char)c;
        else if (c < 0x20 || c == 0x7F) j += (size_t)snprintf(o + j, 8, "\\x%02X", c);
        else o[j++] = (char)c;
    }
    o[j] = '\0';
    return o;
}

// ----------------------------------------------------------------------------------------------------
// Unicode: UTF-8, the classes of the regexes, NFC

static uint32_t utf8_dec(const unsigned char *s, size_t n, size_t *len) { /* valid UTF-8 only */
    unsigned c = s[0];
    if (c < 0x80 || n < 2) return *len = 1, c;
    if (c < 0xE0) return *len = 2, (c & 0x1Fu) << 6 | (s[1] & 0x3Fu);
    if (c < 0xF0 || n < 4) return *len = 3, (c & 0x0Fu) << 12 | (s[1] & 0x3Fu) << 6 | (s[2] & 0x3Fu);
    return *len = 4, (c & 0x07u) << 18 | (s[1] & 0x3Fu) << 12 | (s[2] & 0x3Fu) << 6 | (s[3] & 0x3Fu);
}
static size_t utf8_enc(unsigned char *o, uint32_t c) {
    if (c < 0x80) return o[0] = (unsigned char)c, 1;
    if (c < 0x800) return o[0] = (unsigned char)(0xC0 | c >> 6), o[1] = (unsigned char)(0x80 | (c & 0x3F)), 2;
    if (c < 0x10000) {
        o[0] = (unsigned char)(0xE0 | c >> 12), o[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
        o[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | c >> 18), o[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
    o[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F)), o[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

/* The length of the longest prefix of s[0..n) that is the start of a valid sequence, or 0 for a byte that
 * starts none: the WHATWG decoder's "maximal subpart", which becomes one U+FFFD. *ok is 1 when the
 * returned bytes are a whole valid character. */
static size_t utf8_maximal(const unsigned char *s, size_t n, int *ok) {
    unsigned c = s[0];
    *ok = 0;
    if (c < 0x80) return *ok = 1, 1;
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c >= 0xE0 && c <= 0xEF) need = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) need = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return 1;
    size_t i = 1;
    for (; i <= need; i++) {
        if (i >= n) return i;
        unsigned b = s[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return i;
    }
    *ok = 1;
    return i;
}

static int in_ranges(const uint32_t (*r)[2], size_t n, uint32_t c) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (r[m][1] < c) lo = m + 1;
        else if (r[m][0] > c) hi = m;
        else return 1;
    }
    return 0;
}
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
static int is_letter(uint32_t c) {
    if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    return in_ranges(avu_letter, COUNT(avu_letter), c);
}
static int is_number(uint32_t c) {
    if (c < 0x80) return c >= '0' && c <= '9';
    return in_ranges(avu_number, COUNT(avu_number), c);
}
static int is_space(uint32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 9 && c <= 13);
    return in_ranges(avu_space, COUNT(avu_space), c);
}

static int ccc_of(uint32_t c) {
    if (c < 0x300) return 0;
    size_t lo = 0, hi = COUNT(avu_ccc);
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (avu_ccc[m][1] < c) lo = m + 1;
        else if (avu_ccc[m][0] > c) hi = m;
        else return (int)avu_ccc[m][2];
    }
    return 0;
}
enum { S_BASE = 0xAC00, L_BASE = 0x1100, V_BASE = 0x1161, T_BASE = 0x11A7, L_COUNT = 19, V_COUNT = 21, T_COUNT = 28,
       N_COUNT = V_COUNT * T_COUNT, S_COUNT = L_COUNT * N_COUNT };
/* The full canonical decomposition of c into o[] (at most 4 code points): its length. */
static size_t decompose(uint32_t *o, uint32_t c) {
    if (c >= S_BASE && c < S_BASE + S_COUNT) {
        uint32_t s = c - S_BASE;
        o[0] = L_BASE + s / N_COUNT, o[1] = V_BASE + (s % N_COUNT) / T_COUNT;
        if (s % T_COUNT) return o[2] = T_BASE + s % T_COUNT, 3;
        return 2;
    }
    if (c >= 0xC0) {
        size_t lo = 0, hi = COUNT(avu_decomp);
        while (lo < hi) {
            size_t m = (lo + hi) / 2;
            if (avu_decomp[m][0] < c) lo = m + 1;
            else if (avu_decomp[m][0] > c) hi = m;
            else {
                for (uint32_t i = 0; i < avu_decomp[m][2]; i++) o[i] = avu_decomp_cp[avu_decomp[m][1] + i];
                return avu_decomp[m][2];
            }
        }
    }
    o[0] = c;
    return 1;
}
static uint32_t compose(uint32_t a, uint32_t b) { /* 0: none */
    if (a >= L_BASE && a < L_BASE + L_COUNT && b >= V_BASE && b < V_BASE + V_COUNT)
        return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT;
    if (a >= S_BASE && a < S_BASE + S_COUNT && (a - S_BASE) % T_COUNT == 0 && b > T_BASE && b < T_BASE + T_COUNT)
        return a + (b - T_BASE);
    size_t lo = 0, hi = COUNT(avu_compose);
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        uint64_t k = (uint64_t)avu_compose[m][0] << 32 | avu_compose[m][1], want = (uint64_t)a << 32 | b;
        if (k < want) lo = m + 1;
        else if (k > want) hi = m;
        else return avu_compose[m][2];
    }
    return 0;
}
/* NFC of valid UTF-8 s[0..n) into o (room for AVU_NFC_MAX_GROWTH·n bytes), using cp[] (room for 2·n + 4 code
 * points): decompose, order the marks by class (a stable insertion sort of each run), compose (UAX #15). */
static size_t nfc(unsigned char *o, uint32_t *cp, const unsigned char *s, size_t n) {
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t l;
        uint32_t c = utf8_dec(s + i, n - i, &l);
        i += l;
        m += decompose(cp + m, c);
    }
    for (size_t i = 1; i < m; i++) { /* canonical order: runs of non-zero classes, stable */
        int cc = ccc_of(cp[i]);
        if (!cc) continue;
        uint32_t c = cp[i];
        size_t j = i;
        while (j > 0 && ccc_of(cp[j - 1]) > cc) cp[j] = cp[j - 1], j--;
        cp[j] = c;
    }
    size_t w = 0;
    if (m) {
        size_t starter = 0;
        int last = ccc_of(cp[0]) ? 256 : 0;
        w = 1;
        for (size_t i = 1; i < m; i++) {
            uint32_t ch = cp[i];
            int cl = ccc_of(ch);
            uint32_t k = compose(cp[starter], ch);
            if (k && (last < cl || last == 0)) cp[starter] = k;
            else {
                if (cl == 0) starter = w;
                last = cl;
                cp[w++] = ch;
            }
        }
    }
    size_t len = 0;
    for (size_t i = 0; i < w; i++) len += utf8_enc(o + len, cp[i]);
    return len;
}

// ----------------------------------------------------------------------------------------------------
// the parsed file

enum { N_NONE, N_NFC, N_PREPEND, N_REPLACE };
enum { P_BYTELEVEL, P_SPLIT, P_DIGITS, P_METASPACE };
enum { RX_GPT2, RX_LLAMA3, RX_QWEN2 };
enum { PS_ALWAYS, PS_FIRST, PS_NEVER };
enum { D_NONE, D_BYTELEVEL, D_METASPACE, D_SEQUENCE };
enum { DS_REPLACE, DS_BYTEFALLBACK, DS_FUSE, DS_STRIP };
enum { MAX_STEPS = 8, MAX_TEMPLATE = 8 };
#define TOK_MAGIC 0x4B4F5448u /* "HTOK" */

typedef struct str_ref { uint32_t off, len; } str_ref;   /* bytes in the string area */
typedef struct norm_step { int kind; str_ref a, b; } norm_step;
typedef struct pre_step { int kind, regex, prefix_space, use_regex, individual, scheme, split; } pre_step;
typedef struct dec_step { int kind; str_ref a, b; int start, stop, fused; } dec_step;
typedef struct added_tok { int32_t id; str_ref raw, norm; uint8_t special, lstrip, rstrip, normalized; } added_tok;
typedef struct merge_slot { int32_t a, b, rank; } merge_slot;

struct av_hf_tokenizer {
    uint32_t magic;
    int vocab;                    /* largest id + 1 */
    int n_ids;                    /* the per-id arrays' length */
    int byte_level, byte_fallback, fuse_unk, ignore_merges, unk_id;
    int byte_id[256];             /* "<0xHH>" pieces (−1: absent) */
    int n_merges;
    int32_t *rank_new;            /* the merged id of each rank */
    str_ref *piece;               /* [n_ids] each id's text as written (len UINT32_MAX: no such id) */
    str_ref *key;                 /* [n_ids] the model's key (byte-level: the piece's bytes; len UINT32_MAX: none) */
    char *str;
    uint64_t *vhash;              /* open addressing over key: the key's hash << 32 | (id + 1), 0 empty */
    uint32_t vmask;
    merge_slot *mhash;            /* (a, b) → rank; a = −1 empty */
    uint32_t mmask;
    int n_norm, n_pre, n_dec, dec_kind, dec_scheme;
    uint32_t dec_repl;            /* Metaspace decoder's replacement */
    uint32_t meta_repl;           /* Metaspace pre-tokenizer's */
    norm_step norm[MAX_STEPS];
    pre_step pre[MAX_STEPS];
    dec_step dec[MAX_STEPS];
    int n_added, added_first_any; /* added_first_any: 1 when some added token is normalized */
    added_tok *added;
    uint8_t first_byte[2][256];   /* [normalized]: 1 when an added token starts with this byte */
    int n_prefix, n_suffix, prefix[MAX_TEMPLATE], suffix[MAX_TEMPLATE];
};

static uint32_t hash_bytes(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h ^ (h >> 15);
}
static uint32_t hash_pair(int32_t a, int32_t b) {
    uint64_t x = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ull, x ^= x >> 33;
    return (uint32_t)x;
}
static int vocab_find(const av_hf_tokenizer *t, const char *s, size_t n) {
    uint32_t hv = hash_bytes(s, n);
    for (uint32_t h = hv & t->vmask;; h = (h + 1) & t->vmask) {
        uint64_t v = t->vhash[h];
        if (!v) return -1;
        int id = (int)(uint32_t)v - 1;
        if ((uint32_t)(v >> 32) == hv && t->key[id].len == n && memcmp(t->str + t->key[id].off, s, n) == 0) return id;
    }
}
static int merge_find(const av_hf_tokenizer *t, int32_t a, int32_t b) { /* the rank, or −1 */
    for (uint32_t h = hash_pair(a, b) & t->mmask;; h = (h + 1) & t->mmask) {
        const merge_slot *m = &t->mhash[h];
        if (m->a < 0) return -1;
        if (m->a == a && m->b == b) return m->rank;
    }
}

// ----------------------------------------------------------------------------------------------------
// GPT-2's byte-to-character map: the printable Latin-1 bytes stand for themselves, the others (0–32,
// 127–160, 173) for U+0100 onwards in order

static int char_byte(uint32_t c) { /* −1: not in the alphabet */
    if ((c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF)) return (int)c;
    if (c < 0x100 || c > 0x143) return -1;
    unsigned n = c - 0x100;
    return n <= 0x20 ? (int)n : n <= 66 ? (int)(n - 33 + 0x7F) : 0xAD;
}
/* A piece's characters mapped to bytes, into o: the length, or −1 when a character is not in the alphabet. */
static long bytes_of_piece(char *o, const char *s, size_t n) {
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        size_t l;
        int b = char_byte(utf8_dec((const unsigned char *)s + i, n - i, &l));
        if (b < 0) return -1;
        o[w++] = (char)b;
        i += l;
    }
    return (long)w;
}

// ----------------------------------------------------------------------------------------------------
// the workspace

typedef struct layout {
    uint32_t nodes;
    uint64_t n_ids, vslots, mslots, n_added, str_bytes;
} layout;

static uint64_t pow2_above(uint64_t x) {
    uint64_t p = 16;
    while (p < x) p <<= 1;
    return p;
}
/* The workspace's blocks in order (count-only when base is NULL). */
static uint64_t carve(const layout *L, void *work, av_hf_tokenizer **t, avj_node **nodes) {
    avi_arena a = work ? avi_arena_over(work) : avi_arena_count();
    av_hf_tokenizer *tk = avi_take(&a, sizeof(av_hf_tokenizer));
    void *rank_new = avi_take(&a, 4 * (uint64_t)L->nodes + 4);
    void *piece = avi_take(&a, sizeof(str_ref) * L->n_ids), *key = avi_take(&a, sizeof(str_ref) * L->n_ids);
    void *vh = avi_take(&a, 8 * L->vslots), *mh = avi_take(&a, sizeof(merge_slot) * L->mslots);
    void *added = avi_take(&a, sizeof(added_tok) * (L->n_added + 1));
    void *str = avi_take(&a, L->str_bytes);
    void *nd = avi_take(&a, sizeof(avj_node) * (uint64_t)L->nodes);
    if (tk) {
        memset(tk, 0, sizeof *tk);
        tk->rank_new = rank_new, tk->piece = piece, tk->key = key, tk->vhash = vh, tk->mhash = mh;
        tk->added = added, tk->str = str, tk->vmask = (uint32_t)(L->vslots - 1), tk->mmask = (uint32_t)(L->mslots - 1);
        *t = tk, *nodes = nd;
    }
    return a.used;
}
static int plan(layout *L, const void *json, size_t len) {
    memset(L, 0, sizeof *L);
    if (!json) return AV_ERR_NULL;
    if (len > AV_HF_MAX_JSON) return fail("tokenizer.json is %zu bytes, more than the %d bytes read", len, AV_HF_MAX_JSON);
    uint32_t n = avj_nodes(json, len);
    if (!n) return fail("tokenizer.json is not valid JSON: %s", avj_error());
    L->nodes = n;
    /* every vocabulary entry takes two nodes, every merge and added token at least one */
    L->n_ids = n < AV_MODEL_MAX_VOCAB ? n : AV_MODEL_MAX_VOCAB;
    L->vslots = pow2_above(2 * (uint64_t)L->n_ids);
    L->mslots = pow2_above(2 * (uint64_t)n);
    L->n_added = n;
    /* the strings: the pieces and their byte-level keys (each within the file's bytes), the other strings, a
     * merge's text (the file's length at the end), the normalized added tokens */
    L->str_bytes = 3 * (uint64_t)len + 4096;
    return AV_OK;
}

size_t av_hf_tokenizer_work(const void *json, size_t len) {
    layout L;
    if (plan(&L, json, len) != AV_OK) return 0;
    uint64_t need = carve(&L, NULL, NULL, NULL);
    return need > SIZE_MAX ? 0 : (size_t)need;
}

// ----------------------------------------------------------------------------------------------------
// parsing

typedef struct parser {
    const avj_doc *d;
    av_hf_tokenizer *t;
    uint64_t str_used, str_cap;
    char *scratch;          /* a merge's decoded text */
    uint64_t n_entries;     /* vocabulary entries + added tokens: ids must be below */
} parser;

static int64_t get(const parser *p, int64_t obj, const char *key) { return obj < 0 ? -1 : avj_get(p->d, (uint32_t)obj, key); }
static int type_of(const parser *p, int64_t node) { return node < 0 ? -1 : p->d->node[node].type; }
static int is_null(const parser *p, int64_t node) { return node < 0 || p->d->node[node].type == AVJ_NULL; }
static int eq(const parser *p, int64_t node, const char *s) {
    return node >= 0 && avj_string_eq(p->d, (uint32_t)node, s, strlen(s));
}
/* A boolean field: absent or null give def; 1/0, or −1 when another type. */
static int boolean(const parser *p, int64_t obj, const char *key, int def) {
    int64_t v = get(p, obj, key);
    if (is_null(p, v)) return def;
    int ty = type_of(p, v);
    return ty == AVJ_TRUE ? 1 : ty == AVJ_FALSE ? 0 : -1;
}
/* Copy a string node into the string area: 0, or an error. */
static int store(parser *p, int64_t node, str_ref *r, const char *what) {
    if (type_of(p, node) != AVJ_STRING) return fail("%s is not a string", what);
    int64_t n = avj_string_len(p->d, (uint32_t)node);
    if (n < 0 || p->str_used + (uint64_t)n + 1 > p->str_cap) return fail("%s does not fit the workspace", what);
    avj_string(p->d, (uint32_t)node, p->t->str + p->str_used, (size_t)n + 1);
    r->off = (uint32_t)p->str_used, r->len = (uint32_t)n;
    p->str_used += (uint64_t)n + 1;
    return 0;
}
static int int_of(const parser *p, int64_t node, int64_t lo, int64_t hi, int64_t *out) {
    return node < 0 ? -1 : avj_int(p->d, (uint32_t)node, lo, hi, out);
}
static const char *S(const parser *p, str_ref r) { return p->t->str + r.off; }
/* The "type" of a component, as a brief string for messages. */
static const char *type_name(const parser *p, int64_t obj) {
    int64_t ty = get(p, obj, "type");
    if (type_of(p, ty) != AVJ_STRING) return "(no type)";
    const avj_node *nd = &p->d->node[ty];
    return brief(p->d->text + nd->start, nd->len);
}

static int vocab_insert(av_hf_tokenizer *t, int id) { /* 0, or 1 when the key is there already */
    str_ref k = t->key[id];
    if (vocab_find(t, t->str + k.off, k.len) >= 0) return 1;
    uint32_t hv = hash_bytes(t->str + k.off, k.len), h = hv & t->vmask;
    while (t->vhash[h]) h = (h + 1) & t->vmask;
    t->vhash[h] = (uint64_t)hv << 32 | (uint32_t)(id + 1);
    return 0;
}

static int parse_model(parser *p, int64_t model) {
    av_hf_tokenizer *t = p->t;
    if (type_of(p, model) != AVJ_OBJECT) return fail("tokenizer.json has no \"model\" object");
    int64_t ty = get(p, model, "type");
    if (ty >= 0 && !eq(p, ty, "BPE"))
        return fail("the model's type is \"%s\": only BPE is supported (docs/hf.md)", type_name(p, model));
    if (!is_null(p, get(p, model, "dropout")))
        return fail("the BPE model's dropout is set: only null is supported (encoding must be deterministic)");
    static const char *const affix[2] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int i = 0; i < 2; i++) {
        int64_t v = get(p, model, affix[i]);
        if (!is_null(p, v) && !eq(p, v, "")) return fail("the BPE model's %s is set: only null or \"\" is supported", affix[i]);
    }
    if ((t->byte_fallback = boolean(p, model, "byte_fallback", 0)) < 0) return fail("the BPE model's byte_fallback is not a boolean");
    if ((t->fuse_unk = boolean(p, model, "fuse_unk", 0)) < 0) return fail("the BPE model's fuse_unk is not a boolean");
    if ((t->ignore_merges = boolean(p, model, "ignore_merges", 0)) < 0) return fail("the BPE model's ignore_merges is not a boolean");
    int64_t vocab = get(p, model, "vocab"), merges = get(p, model, "merges");
    if (type_of(p, vocab) != AVJ_OBJECT) return fail("the BPE model has no \"vocab\" object");
    if (type_of(p, merges) != AVJ_ARRAY) return fail("the BPE model has no \"merges\" array");
    // the vocabulary: piece → id
    const avj_node *N = p->d->node;
    uint32_t count = N[vocab].count;
    for (int i = 0; i < t->n_ids; i++) t->piece[i].len = t->key[i].len = UINT32_MAX;
    memset(t->vhash, 0, sizeof(uint64_t) * ((size_t)t->vmask + 1));
    for (uint32_t k = (uint32_t)vocab + 1, e = 0; e < count; e++) {
        uint32_t v = N[k].next;
        int64_t id;
        if (avj_int(p->d, v, 0, INT32_MAX, &id) != 0 || (uint64_t)id >= p->n_entries) {
            const avj_node *kn = &N[k];
            return fail("the vocabulary's id of \"%s\" is not an integer in 0..%llu (the entries and added tokens there are)",
                        brief(p->d->text + kn->start, kn->len), (unsigned long long)(p->n_entries - 1));
        }
        if (t->piece[id].len != UINT32_MAX) return fail("the vocabulary gives id %lld to two pieces", (long long)id);
        int st = store(p, k, &t->piece[id], "a vocabulary piece");
        if (st) return st;
        if (t->byte_level) {
            if (p->str_used + t->piece[id].len > p->str_cap) return fail("the vocabulary does not fit the workspace");
            long b = bytes_of_piece(t->str + p->str_used, S(p, t->piece[id]), t->piece[id].len);
            if (b >= 0) t->key[id].off = (uint32_t)p->str_used, t->key[id].len = (uint32_t)b, p->str_used += (uint64_t)b;
        } else t->key[id] = t->piece[id];
        if (t->key[id].len != UINT32_MAX && vocab_insert(t, (int)id))
            return fail("the vocabulary holds the piece \"%s\" twice", brief(S(p, t->piece[id]), t->piece[id].len));
        if (id + 1 > t->vocab) t->vocab = (int)id + 1;
        k = N[v].next;
    }
    // byte fallback's pieces, and unk
    char name[8];
    for (int b = 0; b < 256; b++) {
        snprintf(name, sizeof name, "<0x%02X>", b);
        t->byte_id[b] = vocab_find(t, name, 6);
    }
    t->unk_id = -1;
    int64_t unk = get(p, model, "unk_token");
    if (!is_null(p, unk)) {
        str_ref r;
        int st = store(p, unk, &r, "the BPE model's unk_token");
        if (st) return st;
        /* the model's key domain: a byte-level vocabulary's keys are bytes */
        char *kb = p->scratch;
        long kl = t->byte_level ? bytes_of_piece(kb, S(p, r), r.len) : (memcpy(kb, S(p, r), r.len), (long)r.len);
        if (kl < 0 || (t->unk_id = vocab_find(t, kb, (size_t)kl)) < 0)
            return fail("the BPE model's unk_token \"%s\" is not in the vocabulary", brief(S(p, r), r.len));
    }
    // merges: "a b" (one space) or ["a", "b"]; a "#version" line is skipped; a pair given twice keeps the later rank
    for (uint32_t i = 0; i <= t->mmask; i++) t->mhash[i].a = -1;
    int rank = 0;
    for (uint32_t k = (uint32_t)merges + 1, e = 0; e < N[merges].count; e++, k = N[k].next) {
        const char *pa, *pb;
        size_t la, lb;
        char *buf = p->scratch;
        if (N[k].type == AVJ_STRING) {
            int64_t n = avj_string(p->d, k, buf, (size_t)p->d->len + 1);
            if (n >= 8 && memcmp(buf, "#version", 8) == 0) continue;
            char *sp = n >= 0 ? memchr(buf, ' ', (size_t)n) : NULL;
            if (!sp || memchr(sp + 1, ' ', (size_t)(buf + n - sp - 1)))
                return fail("merge %u is \"%s\": not two pieces separated by one space", e, brief(buf, n > 0 ? (size_t)n : 0));
            pa = buf, la = (size_t)(sp - buf), pb = sp + 1, lb = (size_t)(buf + n - sp - 1);
        } else if (N[k].type == AVJ_ARRAY && N[k].count == 2 && N[k + 1].type == AVJ_STRING &&
                   N[N[k + 1].next].type == AVJ_STRING) {
            int64_t n1 = avj_string(p->d, k + 1, buf, (size_t)p->d->len + 1);
            int64_t n2 = n1 < 0 ? -1 : avj_string(p->d, N[k + 1].next, buf + n1 + 1, (size_t)p->d->len + 1 - (size_t)n1 - 1);
            if (n2 < 0) return fail("merge %u's pieces do not fit the workspace", e);
            pa = buf, la = (size_t)n1, pb = buf + n1 + 1, lb = (size_t)n2;
        } else return fail("merge %u is neither a string \"a b\" nor a pair [\"a\", \"b\"]", e);
        /* ids by key: a byte-level merge's halves are mapped to bytes like the pieces */
        char *ka = p->t->str + p->str_used;
        if (p->str_used + 2 * (la + lb) + 2 > p->str_cap) return fail("the merges do not fit the workspace");
        long kla = t->byte_level ? bytes_of_piece(ka, pa, la) : (memcpy(ka, pa, la), (long)la);
        long klb = kla < 0 ? -1 : t->byte_level ? bytes_of_piece(ka + kla, pb, lb) : (memcpy(ka + kla, pb, lb), (long)lb);
        int a = kla < 0 ? -1 : vocab_find(t, ka, (size_t)kla), b = klb < 0 ? -1 : vocab_find(t, ka + kla, (size_t)klb);
        if (a < 0 || b < 0)
            return fail("merge %u names \"%s\", which is not in the vocabulary", e, a < 0 ? brief(pa, la) : brief(pb, lb));
        int m = vocab_find(t, ka, (size_t)(kla + klb));
        if (m < 0) {
            memmove(buf + la, pb, lb); /* for the message: the joined piece */
            return fail("merge %u joins into \"%s\", which is not in the vocabulary", e, brief(buf, la + lb));
        }
        t->rank_new[rank] = m;
        for (uint32_t h = hash_pair(a, b) & t->mmask;; h = (h + 1) & t->mmask) {
            merge_slot *s = &t->mhash[h];
            if (s->a < 0) { s->a = a, s->b = b, s->rank = rank; break; }
            if (s->a == a && s->b == b) { s->rank = rank; break; }
        }
        rank++;
    }
    t->n_merges = rank;
    return 0;
}

/* The three regexes, recognized by their exact text. */
static const char RX_TEXT_GPT2[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
static const char RX_TEXT_LLAMA3[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char RX_TEXT_QWEN2[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* A Metaspace's replacement: one character (its code point), or an error. */
static int one_char(const parser *p, int64_t node, uint32_t *c, const char *what) {
    char buf[8];
    int64_t n = type_of(p, node) == AVJ_STRING ? avj_string(p->d, (uint32_t)node, buf, sizeof buf) : -1;
    size_t l;
    int ok;
    if (n <= 0 || utf8_maximal((const unsigned char *)buf, (size_t)n, &ok) != (size_t)n || !ok)
        return fail("%s is not one character", what);
    *c = utf8_dec((const unsigned char *)buf, (size_t)n, &l);
    return 0;
}
static int scheme_of(const parser *p, int64_t obj, int *scheme) {
    int64_t s = get(p, obj, "prepend_scheme");
    if (s < 0) { /* older files: add_prefix_space */
        int a = boolean(p, obj, "add_prefix_space", 1);
        if (a < 0) return fail("Metaspace's add_prefix_space is not a boolean");
        *scheme = a ? PS_ALWAYS : PS_NEVER;
        return 0;
    }
    if (eq(p, s, "always")) *scheme = PS_ALWAYS;
    else if (eq(p, s, "first")) *scheme = PS_FIRST;
    else if (eq(p, s, "never")) *scheme = PS_NEVER;
    else return fail("Metaspace's prepend_scheme is not \"always\", \"first\" or \"never\"");
    return 0;
}

static int parse_pre_one(parser *p, int64_t obj) {
    av_hf_tokenizer *t = p->t;
    if (type_of(p, obj) != AVJ_OBJECT) return fail("a pre-tokenizer is not an object");
    if (t->n_pre == MAX_STEPS) return fail("the pre-tokenizer Sequence has more than %d steps", MAX_STEPS);
    pre_step *s = &t->pre[t->n_pre];
    memset(s, 0, sizeof *s);
    int64_t ty = get(p, obj, "type");
    if (eq(p, ty, "ByteLevel")) {
        s->kind = P_BYTELEVEL;
        if ((s->prefix_space = boolean(p, obj, "add_prefix_space", 1)) < 0 || (s->use_regex = boolean(p, obj, "use_regex", 1)) < 0)
            return fail("the ByteLevel pre-tokenizer's add_prefix_space or use_regex is not a boolean");
        s->regex = RX_GPT2;
        t->byte_level = 1;
    } else if (eq(p, ty, "Split")) {
        s->kind = P_SPLIT;
        int64_t pat = get(p, obj, "pattern"), rx = get(p, pat, "Regex");
        if (eq(p, rx, RX_TEXT_GPT2)) s->regex = RX_GPT2;
        else if (eq(p, rx, RX_TEXT_LLAMA3)) s->regex = RX_LLAMA3;
        else if (eq(p, rx, RX_TEXT_QWEN2)) s->regex = RX_QWEN2;
        else return fail("the Split pre-tokenizer's pattern is not one of the regexes of GPT-2, Llama 3 and Qwen2 (docs/hf.md)");
        if (!eq(p, get(p, obj, "behavior"), "Isolated")) return fail("the Split pre-tokenizer's behavior is not \"Isolated\"");
        if (boolean(p, obj, "invert", 0) != 0) return fail("the Split pre-tokenizer's invert is not false");
    } else if (eq(p, ty, "Digits")) {
        s->kind = P_DIGITS;
        if ((s->individual = boolean(p, obj, "individual_digits", 0)) < 0) return fail("Digits' individual_digits is not a boolean");
    } else if (eq(p, ty, "Metaspace")) {
        s->kind = P_METASPACE;
        int st;
        if ((st = one_char(p, get(p, obj, "replacement"), &t->meta_repl, "the Metaspace pre-tokenizer's replacement")) ||
            (st = scheme_of(p, obj, &s->scheme)))
            return st;
        if ((s->split = boolean(p, obj, "split", 1)) < 0) return fail("Metaspace's split is not a boolean");
    } else return fail("the pre-tokenizer \"%s\" is not supported (docs/hf.md)", type_name(p, obj));
    t->n_pre++;
    return 0;
}

static int parse_norm_one(parser *p, int64_t obj, int depth) {
    av_hf_tokenizer *t = p->t;
    if (type_of(p, obj) != AVJ_OBJECT) return fail("a normalizer is not an object");
    int64_t ty = get(p, obj, "type");
    if (eq(p, ty, "Sequence") && depth == 0) {
        int64_t arr = get(p, obj, "normalizers");
        if (type_of(p, arr) != AVJ_ARRAY) return fail("the normalizer Sequence has no \"normalizers\" array");
        for (uint32_t k = (uint32_t)arr + 1, e = 0; e < p->d->node[arr].count; e++, k = p->d->node[k].next) {
            int st = parse_norm_one(p, k, 1);
            if (st) return st;
        }
        return 0;
    }
    if (t->n_norm == MAX_STEPS) return fail("the normalizer Sequence has more than %d steps", MAX_STEPS);
    norm_step *s = &t->norm[t->n_norm];
    memset(s, 0, sizeof *s);
    int st = 0;
    if (eq(p, ty, "NFC")) s->kind = N_NFC;
    else if (eq(p, ty, "Prepend")) s->kind = N_PREPEND, st = store(p, get(p, obj, "prepend"), &s->a, "the Prepend normalizer's prepend");
    else if (eq(p, ty, "Replace")) {
        s->kind = N_REPLACE;
        int64_t pat = get(p, obj, "pattern"), str = get(p, pat, "String");
        if (str < 0) return fail("the Replace normalizer's pattern is not {\"String\": ...}: regex patterns are not supported");
        if ((st = store(p, str, &s->a, "the Replace normalizer's pattern")) || (st = store(p, get(p, obj, "content"), &s->b, "the Replace normalizer's content")))
            return st;
        if (s->a.len == 0) return fail("the Replace normalizer's pattern is empty");
    } else return fail("the normalizer \"%s\" is not supported (docs/hf.md)", type_name(p, obj));
    if (st) return st;
    t->n_norm++;
    return 0;
}

static int parse_dec_one(parser *p, int64_t obj, int *fused) {
    av_hf_tokenizer *t = p->t;
    if (type_of(p, obj) != AVJ_OBJECT) return fail("a decoder is not an object");
    if (t->n_dec == MAX_STEPS) return fail("the decoder Sequence has more than %d steps", MAX_STEPS);
    dec_step *s = &t->dec[t->n_dec];
    memset(s, 0, sizeof *s);
    int64_t ty = get(p, obj, "type");
    int st = 0;
    if (eq(p, ty, "Replace")) {
        s->kind = DS_REPLACE;
        int64_t str = get(p, get(p, obj, "pattern"), "String");
        if (str < 0) return fail("the Replace decoder's pattern is not {\"String\": ...}");
        if ((st = store(p, str, &s->a, "the Replace decoder's pattern")) || (st = store(p, get(p, obj, "content"), &s->b, "the Replace decoder's content")))
            return st;
        if (s->a.len == 0) return fail("the Replace decoder's pattern is empty");
    } else if (eq(p, ty, "ByteFallback")) s->kind = DS_BYTEFALLBACK;
    else if (eq(p, ty, "Fuse")) s->kind = DS_FUSE, *fused = 1;
    else if (eq(p, ty, "Strip")) {
        s->kind = DS_STRIP;
        int64_t a, b;
        uint32_t c;
        if ((st = one_char(p, get(p, obj, "content"), &c, "the Strip decoder's content"))) return st;
        if (int_of(p, get(p, obj, "start"), 0, 1 << 20, &a) || int_of(p, get(p, obj, "stop"), 0, 1 << 20, &b))
            return fail("the Strip decoder's start or stop is not a small integer");
        if (b != 0) return fail("the Strip decoder's stop is %lld: only 0 is supported (a token cannot know it is the last)", (long long)b);
        s->a.off = c, s->start = (int)a, s->fused = *fused;
    } else return fail("the decoder \"%s\" is not supported in a Sequence (docs/hf.md)", type_name(p, obj));
    t->n_dec++;
    return 0;
}

static int parse_template(parser *p, int64_t obj) {
    av_hf_tokenizer *t = p->t;
    int64_t single = get(p, obj, "single"), specials = get(p, obj, "special_tokens");
    if (type_of(p, single) != AVJ_ARRAY) return fail("TemplateProcessing has no \"single\" array");
    int seen = 0;
    for (uint32_t k = (uint32_t)single + 1, e = 0; e < p->d->node[single].count; e++, k = p->d->node[k].next) {
        int64_t seq = get(p, k, "Sequence"), sp = get(p, k, "SpecialToken");
        if (seq >= 0) {
            if (!eq(p, get(p, seq, "id"), "A") || seen) return fail("TemplateProcessing's single template holds a sequence other than one A");
            seen = 1;
            continue;
        }
        int64_t name = get(p, sp, "id");
        if (type_of(p, name) != AVJ_STRING) return fail("TemplateProcessing's single template holds an item that is neither Sequence nor SpecialToken");
        /* its ids in special_tokens[name] */
        char nm[256];
        int64_t ln = avj_string(p->d, (uint32_t)name, nm, sizeof nm), entry = -1;
        if (ln < 0) return fail("TemplateProcessing names a special token longer than 255 bytes");
        if (type_of(p, specials) == AVJ_OBJECT)
            for (uint32_t kk = (uint32_t)specials + 1, j = 0; j < p->d->node[specials].count; j++) {
                uint32_t v = p->d->node[kk].next;
                if (avj_string_eq(p->d, kk, nm, (size_t)ln)) { entry = v; break; }
                kk = p->d->node[v].next;
            }
        int64_t ids = get(p, entry, "ids");
        if (type_of(p, ids) != AVJ_ARRAY) return fail("TemplateProcessing's special token \"%s\" has no ids in special_tokens",
                                                      brief(p->d->text + p->d->node[name].start, p->d->node[name].len));
        for (uint32_t q = (uint32_t)ids + 1, j = 0; j < p->d->node[ids].count; j++, q = p->d->node[q].next) {
            int64_t id;
            if (avj_int(p->d, q, 0, (int64_t)p->n_entries - 1, &id)) return fail("TemplateProcessing's special token ids are not ids of the file");
            if (t->n_prefix + t->n_suffix == MAX_TEMPLATE) return fail("TemplateProcessing adds more than %d tokens", MAX_TEMPLATE);
            if (seen) t->suffix[t->n_suffix++] = (int)id;
            else t->prefix[t->n_prefix++] = (int)id;
        }
    }
    if (!seen) return fail("TemplateProcessing's single template has no sequence A");
    return 0;
}
static int parse_post(parser *p, int64_t obj, int depth) {
    if (is_null(p, obj)) return 0;
    int64_t ty = get(p, obj, "type");
    if (eq(p, ty, "ByteLevel")) return 0; /* offsets only */
    if (eq(p, ty, "TemplateProcessing")) return parse_template(p, obj);
    if (eq(p, ty, "Sequence") && depth == 0) {
        int64_t arr = get(p, obj, "processors");
        if (type_of(p, arr) != AVJ_ARRAY) return fail("the post-processor Sequence has no \"processors\" array");
        for (uint32_t k = (uint32_t)arr + 1, e = 0; e < p->d->node[arr].count; e++, k = p->d->node[k].next) {
            int st = parse_post(p, k, 1);
            if (st) return st;
        }
        return 0;
    }
    return fail("the post-processor \"%s\" is not supported (docs/hf.md)", type_name(p, obj));
}

static size_t normalize(const av_hf_tokenizer *t, char *o, uint32_t *cp, char *tmp, const char *s, size_t n);

static int parse_added(parser *p, int64_t arr) {
    av_hf_tokenizer *t = p->t;
    if (is_null(p, arr)) return 0;
    if (type_of(p, arr) != AVJ_ARRAY) return fail("added_tokens is not an array");
    const avj_node *N = p->d->node;
    for (uint32_t k = (uint32_t)arr + 1, e = 0; e < N[arr].count; e++, k = N[k].next) {
        added_tok *a = &t->added[t->n_added];
        memset(a, 0, sizeof *a);
        int64_t id;
        if (int_of(p, get(p, k, "id"), 0, (int64_t)p->n_entries - 1, &id))
            return fail("added token %u's id is not an integer in 0..%llu", e, (unsigned long long)(p->n_entries - 1));
        a->id = (int32_t)id;
        int st = store(p, get(p, k, "content"), &a->raw, "an added token's content");
        if (st) return st;
        int f[5];
        static const char *const names[5] = {"special", "lstrip", "rstrip", "normalized", "single_word"};
        for (int i = 0; i < 5; i++)
            if ((f[i] = boolean(p, k, names[i], i == 3)) < 0) return fail("added token %u's %s is not a boolean", e, names[i]);
        if (f[4]) return fail("added token \"%s\" has single_word true: not supported", brief(S(p, a->raw), a->raw.len));
        a->special = (uint8_t)f[0], a->lstrip = (uint8_t)f[1], a->rstrip = (uint8_t)f[2], a->normalized = (uint8_t)f[3];
        for (int j = 0; j < t->n_added; j++)
            if (t->added[j].raw.len == a->raw.len && memcmp(S(p, t->added[j].raw), S(p, a->raw), a->raw.len) == 0)
                return fail("the added token \"%s\" is listed twice", brief(S(p, a->raw), a->raw.len));
        t->piece[id] = a->raw; /* decoding shows the added token's content, as the library's id_to_token */
        if (id + 1 > t->vocab) t->vocab = (int)id + 1;
        t->n_added++;
    }
    return 0;
}

/* A bound on the bytes the normalizer makes of x bytes (each gap at least one byte): 0 past 2^56. */
static uint64_t norm_bound(const av_hf_tokenizer *t, uint64_t x) {
    for (int k = 0; k < t->n_norm && x; k++) {
        const norm_step *s = &t->norm[k];
        if (s->kind == N_NFC) x *= AVU_NFC_MAX_GROWTH;
        else if (s->kind == N_PREPEND) x *= 1 + (uint64_t)s->a.len;
        else x *= s->b.len > s->a.len ? (s->b.len + s->a.len - 1) / s->a.len : 1;
        if (x > (uint64_t)1 << 56) return 0;
    }
    return x;
}

/* The normalized forms of the normalized added tokens (matched in normalized text), each kept at its length;
 * the normalizer's scratch is the string area's free end. */
static int normalize_added(parser *p) {
    av_hf_tokenizer *t = p->t;
    for (int i = 0; i < t->n_added; i++) {
        added_tok *a = &t->added[i];
        a->norm = a->raw;
        if (!a->normalized || !t->n_norm || !a->raw.len) continue;
        uint64_t x = norm_bound(t, a->raw.len), o0 = p->str_used, c0 = (o0 + x + 8 + 7) & ~(uint64_t)7;
        uint64_t t0 = c0 + 4 * (2 * x + 8);
        if (!x || t0 + x + 8 > p->str_cap)
            return fail("the added token \"%s\" is too long to normalize in the workspace", brief(S(p, a->raw), a->raw.len));
        size_t n = normalize(t, t->str + o0, (uint32_t *)(void *)(t->str + c0), t->str + t0, S(p, a->raw), a->raw.len);
        a->norm.off = (uint32_t)o0, a->norm.len = (uint32_t)n;
        p->str_used += n + 1;
    }
    for (int i = 0; i < t->n_added; i++) {
        str_ref c = t->added[i].normalized ? t->added[i].norm : t->added[i].raw;
        if (c.len) t->first_byte[t->added[i].normalized][(unsigned char)t->str[c.off]] = 1;
    }
    return 0;
}

int av_hf_tokenizer_parse(const av_hf_tokenizer **tp, void *work, size_t work_bytes, const void *json, size_t len) {
    if (!tp || !work || !json) return AV_ERR_NULL;
    *tp = NULL;
    layout L;
    int st = plan(&L, json, len);
    if (st) return st;
    if (carve(&L, NULL, NULL, NULL) > work_bytes) return AV_ERR_WORKSPACE;
    av_hf_tokenizer *t;
    avj_node *nodes;
    carve(&L, work, &t, &nodes);
    avj_doc doc;
    if (avj_parse(&doc, nodes, L.nodes, json, len) != 0) return fail("tokenizer.json is not valid JSON: %s", avj_error());
    parser P = {&doc, t, 0, L.str_bytes, NULL, 0};
    parser *p = &P;
    if (doc.node[0].type != AVJ_OBJECT) return fail("tokenizer.json is not a JSON object");
    /* a scratch for one merge's text at the string area's end */
    P.str_cap -= (uint64_t)len + 16;
    P.scratch = t->str + P.str_cap;
    int64_t model = get(p, 0, "model"), added = get(p, 0, "added_tokens");
    uint64_t nv = type_of(p, get(p, model, "vocab")) == AVJ_OBJECT ? doc.node[get(p, model, "vocab")].count : 0;
    uint64_t na = type_of(p, added) == AVJ_ARRAY ? doc.node[added].count : 0;
    P.n_entries = nv + na;
    if (P.n_entries > L.n_ids) P.n_entries = L.n_ids;
    if (P.n_entries == 0) return fail("tokenizer.json has no vocabulary");
    /* the tables at the size the file's counts need, within the blocks reserved (untouched memory costs nothing) */
    int64_t mg = get(p, model, "merges");
    uint64_t nm = type_of(p, mg) == AVJ_ARRAY ? doc.node[mg].count : 0;
    t->n_ids = (int)P.n_entries;
    t->vmask = (uint32_t)(pow2_above(2 * P.n_entries) - 1);
    t->mmask = (uint32_t)(pow2_above(2 * nm + 2) - 1);
    // the pre-tokenizer first: whether the model's pieces are byte-level
    int64_t pre = get(p, 0, "pre_tokenizer");
    if (!is_null(p, pre)) {
        if (eq(p, get(p, pre, "type"), "Sequence")) {
            int64_t arr = get(p, pre, "pretokenizers");
            if (type_of(p, arr) != AVJ_ARRAY) return fail("the pre-tokenizer Sequence has no \"pretokenizers\" array");
            for (uint32_t k = (uint32_t)arr + 1, e = 0; e < doc.node[arr].count; e++, k = doc.node[k].next)
                if ((st = parse_pre_one(p, k))) return st;
        } else if ((st = parse_pre_one(p, pre))) return st;
    }
    int64_t norm = get(p, 0, "normalizer");
    if (!is_null(p, norm) && (st = parse_norm_one(p, norm, 0))) return st;
    if ((st = parse_model(p, model)) || (st = parse_added(p, added)) || (st = normalize_added(p)) ||
        (st = parse_post(p, get(p, 0, "post_processor"), 0)))
        return st;
    // the decoder
    int64_t dec = get(p, 0, "decoder");
    if (is_null(p, dec)) t->dec_kind = D_NONE;
    else if (eq(p, get(p, dec, "type"), "ByteLevel")) t->dec_kind = D_BYTELEVEL;
    else if (eq(p, get(p, dec, "type"), "Metaspace")) {
        t->dec_kind = D_METASPACE;
        if ((st = one_char(p, get(p, dec, "replacement"), &t->dec_repl, "the Metaspace decoder's replacement")) ||
            (st = scheme_of(p, dec, &t->dec_scheme)))
            return st;
    } else if (eq(p, get(p, dec, "type"), "Sequence")) {
        t->dec_kind = D_SEQUENCE;
        int64_t arr = get(p, dec, "decoders");
        int fused = 0;
        if (type_of(p, arr) != AVJ_ARRAY) return fail("the decoder Sequence has no \"decoders\" array");
        for (uint32_t k = (uint32_t)arr + 1, e = 0; e < doc.node[arr].count; e++, k = doc.node[k].next)
            if ((st = parse_dec_one(p, k, &fused))) return st;
    } else return fail("the decoder \"%s\" is not supported (docs/hf.md)", type_name(p, dec));
    t->magic = TOK_MAGIC;
    *tp = t;
    return AV_OK;
}

int av_hf_tokenizer_vocab(const av_hf_tokenizer *t) { return t && t->magic == TOK_MAGIC ? t->vocab : 0; }

// ----------------------------------------------------------------------------------------------------
// normalizers

/* Apply the normalizer steps to s[0..n) into o (room: hf_norm_bound); cp and tmp are scratch (cp: 2·room + 8
 * code points, tmp: room bytes). The length. */
static size_t normalize(const av_hf_tokenizer *t, char *o, uint32_t *cp, char *tmp, const char *s, size_t n) {
    if (o != s) memmove(o, s, n);
    for (int k = 0; k < t->n_norm; k++) {
        const norm_step *st = &t->norm[k];
        if (n == 0) break; /* every step leaves an empty text empty (Prepend adds to a non-empty one only) */
        if (st->kind == N_NFC) {
            memcpy(tmp, o, n);
            n = nfc((unsigned char *)o, cp, (const unsigned char *)tmp, n);
        } else if (st->kind == N_PREPEND) {
            memmove(o + st->a.len, o, n);
            memcpy(o, t->str + st->a.off, st->a.len);
            n += st->a.len;
        } else { /* Replace: every non-overlapping occurrence, left to right */
            const char *pat = t->str + st->a.off, *rep = t->str + st->b.off;
            memcpy(tmp, o, n);
            size_t w = 0;
            for (size_t i = 0; i < n;) {
                if (i + st->a.len <= n && memcmp(tmp + i, pat, st->a.len) == 0) {
                    memcpy(o + w, rep, st->b.len), w += st->b.len, i += st->a.len;
                } else o[w++] = tmp[i++];
            }
            n = w;
        }
    }
    return n;
}

// ----------------------------------------------------------------------------------------------------
// the regexes: the end of the match that starts at p (p when none does), leftmost-first like the regex

typedef struct text { const unsigned char *s; size_t n; } text;
static uint32_t at(const text *x, size_t i, size_t *l) { return utf8_dec(x->s + i, x->n - i, l); }
enum { C_L, C_N, C_OTHER }; /* "other": neither \s, \p{L} nor \p{N} */
static int is_other(uint32_t c) { return !is_space(c) && !is_letter(c) && !is_number(c); }
static int in_class(uint32_t c, int k) { return k == C_L ? is_letter(c) : k == C_N ? is_number(c) : is_other(c); }
static size_t run(const text *x, size_t i, int k, int max) { /* the end of a run of class k from i (at most max chars) */
    for (int m = 0; i < x->n && m < max; m++) {
        size_t l;
        if (!in_class(at(x, i, &l), k)) break;
        i += l;
    }
    return i;
}
/* 's 't 're 've 'm 'll 'd at p (s[p] is '\''), case-insensitive when ci (then 's also matches U+017F ſ, which
 * folds to s): the end, or p. */
static size_t contraction(const text *x, size_t p, int ci) {
    static const char *const alts[7] = {"s", "t", "re", "ve", "m", "ll", "d"};
    for (int a = 0; a < 7; a++) {
        size_t i = p + 1;
        const char *w = alts[a];
        for (; *w; w++) {
            if (i >= x->n) break;
            unsigned char c = x->s[i];
            if (c == (unsigned char)*w || (ci && c == (unsigned char)(*w - 32))) { i++; continue; }
            if (ci && *w == 's' && c == 0xC5 && i + 1 < x->n && x->s[i + 1] == 0xBF) { i += 2; continue; }
            break;
        }
        if (!*w) return i;
    }
    return p;
}
/* \s+(?!\S) then \s+ from p (a whitespace character): the run, less its last character when a non-space
 * follows and the run is longer than it. */
static size_t space_tail(const text *x, size_t p) {
    size_t i = p, last = p, l;
    while (i < x->n && is_space(at(x, i, &l))) last = i, i += l;
    if (i < x->n && last > p) return last;
    return i;
}
static size_t match_gpt2(const text *x, size_t p) {
    size_t l0, l1;
    uint32_t c0 = at(x, p, &l0);
    if (c0 == '\'') {
        size_t e = contraction(x, p, 0);
        if (e > p) return e;
    }
    for (int k = C_L; k <= C_OTHER; k++) { /* ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+' */
        if (c0 == ' ' && p + 1 < x->n && in_class(at(x, p + 1, &l1), k)) return run(x, p + 1, k, 1 << 30);
        if (in_class(c0, k)) return run(x, p, k, 1 << 30);
    }
    if (is_space(c0)) return space_tail(x, p);
    return p;
}
static size_t match_llama3(const text *x, size_t p, int digits) {
    size_t l0, l1;
    uint32_t c0 = at(x, p, &l0);
    if (c0 == '\'') {
        size_t e = contraction(x, p, 1);
        if (e > p) return e;
    }
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    if (is_letter(c0)) return run(x, p, C_L, 1 << 30);
    if (c0 != '\r' && c0 != '\n' && !is_number(c0) && p + l0 < x->n && is_letter(at(x, p + l0, &l1)))
        return run(x, p + l0, C_L, 1 << 30);
    /* \p{N}{1,3} (Qwen2: \p{N}) */
    if (is_number(c0)) return run(x, p, C_N, digits);
    /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    size_t q = c0 == ' ' && p + 1 < x->n && is_other(at(x, p + 1, &l1)) ? p + 1 : p;
    if (is_other(at(x, q, &l1))) {
        size_t e = run(x, q, C_OTHER, 1 << 30);
        while (e < x->n && (x->s[e] == '\r' || x->s[e] == '\n')) e++;
        return e;
    }
    if (!is_space(c0)) return p;
    /* \s*[\r\n]+: through the run's last line break */
    size_t i = p, nl = 0, l;
    while (i < x->n && is_space(at(x, i, &l))) {
        if (x->s[i] == '\r' || x->s[i] == '\n') nl = i + 1;
        i += l;
    }
    if (nl) return nl;
    return space_tail(x, p);
}
static size_t match_at(int regex, const text *x, size_t p) {
    return regex == RX_GPT2 ? match_gpt2(x, p) : match_llama3(x, p, regex == RX_LLAMA3 ? 3 : 1);
}

// ----------------------------------------------------------------------------------------------------
// encoding

typedef struct enc {
    const av_hf_tokenizer *t;
    int *ids, n, cap, overflow;
    char *stage_buf[MAX_STEPS];   /* each pre-tokenizer step's rewritten text */
    int32_t *sym, *prev, *next;   /* BPE symbols */
    uint64_t *heap;               /* (rank << 32 | pos) */
} enc;

static void emit(enc *e, int id) {
    if (e->n < e->cap) e->ids[e->n] = id;
    else e->overflow = 1;
    e->n++;
}

static void heap_push(uint64_t *h, size_t *n, uint64_t v) {
    size_t i = (*n)++;
    while (i > 0) {
        size_t u = (i - 1) / 2;
        if (h[u] <= v) break;
        h[i] = h[u], i = u;
    }
    h[i] = v;
}
static uint64_t heap_pop(uint64_t *h, size_t *n) {
    uint64_t top = h[0], v = h[--*n];
    size_t i = 0, m = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c], i = c;
    }
    if (m) h[i] = v;
    return top;
}

/* One pre-token through the BPE model (the library's merge_word and merge_all). */
static void bpe(enc *e, const char *s, size_t n) {
    const av_hf_tokenizer *t = e->t;
    if (!n) return;
    if (t->ignore_merges) {
        int id = vocab_find(t, s, n);
        if (id >= 0) { emit(e, id); return; }
    }
    int32_t *sym = e->sym;
    size_t m = 0;
    int unk = -1; /* a pending unk (fused or not) */
    for (size_t i = 0; i < n;) {
        size_t l = 1;
        if (!t->byte_level) {
            int ok;
            l = utf8_maximal((const unsigned char *)s + i, n - i, &ok);
        }
        int id = vocab_find(t, s + i, l);
        if (id >= 0) {
            if (unk >= 0) sym[m++] = unk, unk = -1;
            sym[m++] = id;
        } else {
            int fell = 0;
            if (t->byte_fallback) {
                size_t b = 0;
                while (b < l && t->byte_id[(unsigned char)s[i + b]] >= 0) b++;
                if (b == l) { /* the bytes' pieces, the pending unk left pending as the library does */
                    for (b = 0; b < l; b++) sym[m++] = t->byte_id[(unsigned char)s[i + b]];
                    fell = 1;
                }
            }
            if (!fell && t->unk_id >= 0) {
                if (unk >= 0 && !t->fuse_unk) sym[m++] = unk;
                unk = t->unk_id;
            }
        }
        i += l;
    }
    if (unk >= 0) sym[m++] = unk;
    // merge_all: a queue of (rank, position); an entry is stale when the pair there no longer makes its id
    int32_t *prev = e->prev, *next = e->next;
    uint64_t *h = e->heap;
    size_t hn = 0;
    for (size_t i = 0; i < m; i++) prev[i] = (int32_t)i - 1, next[i] = i + 1 < m ? (int32_t)i + 1 : -1;
    for (size_t i = 0; i + 1 < m; i++) {
        int r = merge_find(t, sym[i], sym[i + 1]);
        if (r >= 0) heap_push(h, &hn, (uint64_t)r << 32 | i);
    }
    while (hn) {
        uint64_t top = heap_pop(h, &hn);
        int rank = (int)(top >> 32);
        int32_t pos = (int32_t)(top & 0xFFFFFFFFu);
        if (sym[pos] < 0 || next[pos] < 0) continue;
        int32_t nx = next[pos];
        int r = merge_find(t, sym[pos], sym[nx]);
        if (r < 0 || t->rank_new[r] != t->rank_new[rank]) continue;
        sym[pos] = t->rank_new[rank];
        sym[nx] = -1;
        next[pos] = next[nx];
        if (next[nx] >= 0) prev[next[nx]] = pos;
        if (prev[pos] >= 0) {
            int q = merge_find(t, sym[prev[pos]], sym[pos]);
            if (q >= 0) heap_push(h, &hn, (uint64_t)q << 32 | (uint32_t)prev[pos]);
        }
        if (next[pos] >= 0) {
            int q = merge_find(t, sym[pos], sym[next[pos]]);
            if (q >= 0) heap_push(h, &hn, (uint64_t)q << 32 | (uint32_t)pos);
        }
    }
    for (size_t i = 0; i < m; i++)
        if (sym[i] >= 0) emit(e, sym[i]);
}

/* Pre-tokenizer step k on s[0..n) (at_start: the piece begins the original text), then the model. */
static void pretok(enc *e, const char *s, size_t n, int k, int at_start) {
    const av_hf_tokenizer *t = e->t;
    if (!n) return;
    if (k == t->n_pre) { bpe(e, s, n); return; }
    const pre_step *st = &t->pre[k];
    text x = {(const unsigned char *)s, n};
    switch (st->kind) {
    case P_BYTELEVEL:
        if (st->prefix_space && s[0] != ' ') {
            char *b = e->stage_buf[k];
            b[0] = ' ';
            memcpy(b + 1, s, n);
            s = b, n++, x.s = (const unsigned char *)b, x.n = n;
        }
        if (!st->use_regex) { pretok(e, s, n, k + 1, at_start); return; }
        /* the GPT-2 regex: */
        /* fall through */
    case P_SPLIT:
        for (size_t p = 0; p < n;) {
            size_t q = match_at(st->regex, &x, p);
            if (q == p) { /* no match here: the gap up to the next match is a piece of its own */
                size_t g = p, l;
                while (g < n && match_at(st->regex, &x, g) == g) at(&x, g, &l), g += l;
                pretok(e, s + p, g - p, k + 1, at_start && p == 0);
                p = g;
                continue;
            }
            pretok(e, s + p, q - p, k + 1, at_start && p == 0);
            p = q;
        }
        return;
    case P_DIGITS:
        for (size_t p = 0; p < n;) {
            size_t l, q = p;
            int dig = is_number(at(&x, p, &l));
            if (dig && st->individual) q = p + l;
            else
                while (q < n && is_number(at(&x, q, &l)) == dig) q += l;
            pretok(e, s + p, q - p, k + 1, at_start && p == 0);
            p = q;
        }
        return;
    default: { /* Metaspace: spaces become the replacement, then it is prepended per the scheme when the text
                * does not start with it, then the text is split before each replacement (MergedWithNext) */
        unsigned char r[4];
        size_t rl = utf8_enc(r, t->meta_repl), w = rl;
        char *b = e->stage_buf[k];
        for (size_t i = 0; i < n; i++) {
            if (s[i] == ' ') memcpy(b + w, r, rl), w += rl;
            else b[w++] = s[i];
        }
        int starts = w - rl >= rl && memcmp(b + rl, r, rl) == 0;
        int pre = !starts && (st->scheme == PS_ALWAYS || (st->scheme == PS_FIRST && at_start));
        if (pre) memcpy(b, r, rl);
        else b += rl, w -= rl;
        if (!st->split) { pretok(e, b, w, k + 1, at_start); return; }
        size_t from = 0;
        for (size_t i = 0; i + rl <= w;) {
            if (memcmp(b + i, r, rl) == 0) {
                if (i > from) pretok(e, b + from, i - from, k + 1, at_start && from == 0);
                if (i > from) from = i;
                i += rl;
            } else i++;
        }
        pretok(e, b + from, w - from, k + 1, at_start && from == 0);
        return;
    }
    }
}

/* Leftmost-longest added token at or after p in s[0..n) among those with normalized == norm: its index, *at its
 * start; −1 when none. */
static int find_added(const av_hf_tokenizer *t, const char *s, size_t n, size_t p, int norm, size_t *at_pos) {
    for (size_t i = p; i < n; i++) {
        if (!t->first_byte[norm][(unsigned char)s[i]]) continue;
        int best = -1;
        size_t blen = 0;
        for (int a = 0; a < t->n_added; a++) {
            const added_tok *k = &t->added[a];
            if (k->normalized != norm) continue;
            str_ref c = norm ? k->norm : k->raw;
            if (c.len == 0 || c.len <= blen || c.len > n - i) continue;
            if (memcmp(s + i, t->str + c.off, c.len) == 0) best = a, blen = c.len;
        }
        if (best >= 0) return *at_pos = i, best;
    }
    return -1;
}

typedef struct scratch { char *norm; uint32_t *cp; char *tmp; } scratch;

/* Split s[0..n) on the added tokens (normalized == norm), each gap going on (to the normalizer, or to the
 * pre-tokenizer); at_start as above. */
static void split_added(enc *e, const scratch *sc, const char *s, size_t n, int norm, int at_start, int parse_special) {
    const av_hf_tokenizer *t = e->t;
    size_t from = 0, p = 0;
    for (;;) {
        size_t start = n, stop = n;
        int a = -1;
        while (p < n && (a = find_added(t, s, n, p, norm, &start)) >= 0) {
            const added_tok *k = &t->added[a];
            stop = start + (norm ? k->norm.len : k->raw.len);
            if (k->special && !parse_special) { p = stop, a = -1, start = stop = n; continue; } /* skipped, not re-searched */
            break;
        }
        if (a < 0) start = stop = n;
        else {
            const added_tok *k = &t->added[a];
            if (k->lstrip) {
                size_t b = start;
                while (b > from) { /* back over whitespace characters */
                    size_t c = b - 1, l;
                    while (c > from && ((unsigned char)s[c] & 0xC0) == 0x80) c--;
                    text x = {(const unsigned char *)s, n};
                    if (!is_space(at(&x, c, &l))) break;
                    b = c;
                }
                start = b;
            }
            if (k->rstrip) {
                text x = {(const unsigned char *)s, n};
                size_t l;
                while (stop < n && is_space(at(&x, stop, &l))) stop += l;
            }
        }
        if (start > from) {
            const char *g = s + from;
            size_t gl = start - from;
            int st0 = at_start && from == 0;
            if (!norm) {
                size_t nl = normalize(t, sc->norm, sc->cp, sc->tmp, g, gl);
                /* the normalized gap, split on the normalized added tokens (it lives in sc->norm until done) */
                split_added(e, sc, sc->norm, nl, 1, st0, parse_special);
            } else pretok(e, g, gl, 0, st0);
        }
        if (a < 0) return;
        emit(e, t->added[a].id);
        from = p = stop;
    }
}

// the scratch of one encode: the text with U+FFFD, the normalizer's output and scratch, the pre-tokenizers'
// rewritten texts, the BPE symbols and queue

typedef struct enc_plan { uint64_t fixed, norm, pre, sym, total; } enc_plan;
static int enc_sizes(const av_hf_tokenizer *t, size_t text_len, enc_plan *P) {
    const uint64_t lim = (uint64_t)1 << 56;
    uint64_t x = 3 * (uint64_t)text_len + 4; /* each invalid byte becomes U+FFFD's 3 */
    if ((uint64_t)text_len > lim / 64) return -1;
    P->fixed = x;
    if (!(x = norm_bound(t, x))) return -1;
    P->norm = x;
    uint64_t pre = 0;
    for (int k = 0; k < t->n_pre; k++) {
        const pre_step *s = &t->pre[k];
        if (s->kind == P_BYTELEVEL && s->prefix_space) x *= 2;
        else if (s->kind == P_METASPACE) x = s->scheme == PS_ALWAYS ? 8 * x : 4 * x + 4;
        if (x > lim) return -1;
        if (x > pre) pre = x;
    }
    P->pre = pre;
    P->sym = x; /* every symbol stands for at least one byte */
    return 0;
}
static uint64_t enc_carve(const av_hf_tokenizer *t, const enc_plan *P, void *work, enc *e, scratch *sc, char **fixed) {
    avi_arena a = work ? avi_arena_over(work) : avi_arena_count();
    *fixed = avi_take(&a, P->fixed);
    sc->norm = avi_take(&a, P->norm + 8);
    sc->tmp = avi_take(&a, P->norm + 8);
    sc->cp = avi_take(&a, t->n_norm ? 4 * (2 * P->norm + 8) : 0);
    for (int k = 0; k < t->n_pre; k++) e->stage_buf[k] = avi_take(&a, P->pre + 8);
    e->sym = avi_take(&a, 4 * P->sym + 4);
    e->prev = avi_take(&a, 4 * P->sym + 4);
    e->next = avi_take(&a, 4 * P->sym + 4);
    e->heap = avi_take(&a, 8 * 3 * P->sym + 8);
    return a.used;
}

size_t av_hf_encode_work(const av_hf_tokenizer *t, size_t text_len) {
    if (!t || t->magic != TOK_MAGIC) return 0;
    enc_plan P;
    enc e;
    scratch sc;
    char *f;
    if (enc_sizes(t, text_len, &P)) return 0;
    uint64_t need = enc_carve(t, &P, NULL, &e, &sc, &f);
    return need > SIZE_MAX ? 0 : (size_t)need;
}
size_t av_hf_encode_cap(const av_hf_tokenizer *t, size_t text_len) {
    if (!t || t->magic != TOK_MAGIC) return 0;
    enc_plan P;
    if (enc_sizes(t, text_len, &P)) return 0;
    uint64_t c = P.sym + MAX_TEMPLATE;
    return c > SIZE_MAX ? 0 : (size_t)c;
}

int av_hf_encode(int *ids, int *n_ids, int cap, const av_hf_tokenizer *t, const char *text, size_t text_len,
                 int add_special, int parse_special, void *work, size_t work_bytes) {
    if (!ids || !n_ids || !t || (!text && text_len) || !work) return AV_ERR_NULL;
    *n_ids = 0;
    if (t->magic != TOK_MAGIC || cap < 0) return AV_ERR_SIZE;
    enc_plan P;
    if (enc_sizes(t, text_len, &P)) return AV_ERR_TOO_LARGE;
    enc e = {0};
    scratch sc;
    char *fixed;
    if (enc_carve(t, &P, NULL, &e, &sc, &fixed) > work_bytes) return AV_ERR_WORKSPACE;
    enc_carve(t, &P, work, &e, &sc, &fixed);
    e.t = t, e.ids = ids, e.cap = cap;
    // invalid UTF-8: each maximal invalid subsequence becomes U+FFFD (the WHATWG decoder's rule)
    size_t fl = 0;
    for (size_t i = 0; i < text_len;) {
        int ok;
        size_t l = utf8_maximal((const unsigned char *)text + i, text_len - i, &ok);
        if (ok) memcpy(fixed + fl, text + i, l), fl += l;
        else memcpy(fixed + fl, "\xEF\xBF\xBD", 3), fl += 3;
        i += l;
    }
    if (add_special)
        for (int i = 0; i < t->n_prefix; i++) emit(&e, t->prefix[i]);
    split_added(&e, &sc, fixed, fl, 0, 1, parse_special);
    if (add_special)
        for (int i = 0; i < t->n_suffix; i++) emit(&e, t->suffix[i]);
    *n_ids = e.overflow ? 0 : e.n;
    return e.overflow ? AV_ERR_SIZE : AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// decoding one token

int av_hf_token_bytes(char *out, int *len, int cap, const av_hf_tokenizer *t, int prev, int id) {
    if (!out || !len || !t) return AV_ERR_NULL;
    *len = 0;
    if (t->magic != TOK_MAGIC || id < 0 || id >= t->vocab || prev < -1 || prev >= t->vocab || cap < 0) return AV_ERR_SIZE;
    str_ref pr = t->piece[id];
    if (pr.len == UINT32_MAX) return AV_OK; /* an id no piece has */
    const char *s = t->str + pr.off;
    size_t n = pr.len, w = 0;
    char buf[4 * AV_TOKEN_MAX_LEN];
    if (n > sizeof buf / 2) n = sizeof buf / 2; /* a piece longer than any decoder output kept: cut */
    if (t->dec_kind == D_BYTELEVEL) {
        long b = bytes_of_piece(buf, s, n);
        if (b < 0) memcpy(buf, s, n), w = n;
        else w = (size_t)b;
    } else if (t->dec_kind == D_METASPACE) {
        unsigned char r[4];
        size_t rl = utf8_enc(r, t->dec_repl);
        for (size_t i = 0; i < n;) {
            if (i + rl <= n && memcmp(s + i, r, rl) == 0) {
                if (!(prev == -1 && t->dec_scheme != PS_NEVER)) buf[w++] = ' ';
                i += rl;
            } else buf[w++] = s[i++];
        }
    } else {
        memcpy(buf, s, n), w = n;
        for (int k = 0; k < t->n_dec; k++) {
            const dec_step *d = &t->dec[k];
            if (d->kind == DS_REPLACE) {
                char tmp[sizeof buf];
                size_t o = 0;
                for (size_t i = 0; i < w && o + d->b.len < sizeof tmp;) {
                    if (i + d->a.len <= w && memcmp(buf + i, t->str + d->a.off, d->a.len) == 0)
                        memcpy(tmp + o, t->str + d->b.off, d->b.len), o += d->b.len, i += d->a.len;
                    else tmp[o++] = buf[i++];
                }
                memcpy(buf, tmp, o), w = o;
            } else if (d->kind == DS_BYTEFALLBACK) {
                unsigned v = 0;
                int ok = w == 6 && memcmp(buf, "<0x", 3) == 0 && buf[5] == '>';
                for (int i = 3; ok && i < 5; i++) {
                    char c = buf[i];
                    int dgt = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
                    if (dgt < 0) ok = 0;
                    v = v * 16 + (unsigned)dgt;
                }
                if (ok) buf[0] = (char)v, w = 1;
            } else if (d->kind == DS_STRIP && (prev == -1 || !d->fused)) {
                /* after Fuse the text is one string: only the first token's start is its start */
                unsigned char r[4];
                size_t rl = utf8_enc(r, d->a.off), cut = 0;
                for (int i = 0; i < d->start && cut + rl <= w && memcmp(buf + cut, r, rl) == 0; i++) cut += rl;
                memmove(buf, buf + cut, w - cut), w -= cut;
            }
        }
    }
    if (w > (size_t)cap) return AV_ERR_SIZE;
    memcpy(out, buf, w);
    *len = (int)w;
    return AV_OK;
}
