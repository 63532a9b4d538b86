/* json.c: the strict JSON reader of src/json.h (docs/hf.md "JSON") for config.json, the shard index and
 * tokenizer.json. One scanner serves both passes: avj_nodes runs it without a node array (counting), avj_parse
 * with one (filling). Containers are tracked on an explicit stack of AVJ_MAX_DEPTH entries, so a deeply
 * nested file costs no C stack. Strings are validated completely while scanning (UTF-8, escapes, surrogate
 * pairs, control bytes), so the accessors decode them later without any check that could fail.
 * Nothing is allocated; nothing outside text[0..len) is read; offsets are uint32, so a text is at most
 * 4 GiB − 1 bytes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static char reason[192] = "no error";

const char *avj_error(void) { return reason; }

/* One sentence naming the byte offset; the input itself is never copied into it (at most one byte, as a
 * character when printable ASCII, else in hex, through shown()). */
__attribute__((format(printf, 2, 3))) static void fail(size_t at, const char *fmt, ...) {
    int k = snprintf(reason, sizeof reason, "at byte %zu: ", at);
    va_list ap;
    va_start(ap, fmt);
    if (k > 0 && (size_t)k < sizeof reason) vsnprintf(reason + k, sizeof reason - (size_t)k, fmt, ap);
    va_end(ap);
}

/* A byte as a sentence may show it. */
static const char *shown(unsigned c) {
    static char out[8];
    if (c > 0x20 && c < 0x7f && c != '\'') snprintf(out, sizeof out, "'%c'", (int)c);
    else snprintf(out, sizeof out, "0x%02x", c);
    return out;
}

static int is_ws(unsigned c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int hexval(unsigned c) {
    return c >= '0' && c <= '9' ? (int)(c - '0') : c >= 'a' && c <= 'f' ? (int)(c - 'a' + 10)
         : c >= 'A' && c <= 'F' ? (int)(c - 'A' + 10) : -1;
}

/* Four hex digits at p (the caller checked that they are inside the text), or −1. */
static long hex4(const unsigned char *p) {
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) return -1;
        v = v << 4 | h;
    }
    return v;
}

// ----------------------------------------------------------------------------------------------------
// scanning

/* The UTF-8 sequence at t[i] (a lead byte ≥ 0x80, i < len): its length 2..4, or 0 with the reason set.
 * Overlong forms, encoded surrogates (U+D800..DFFF) and code points past U+10FFFF are refused (RFC 3629). */
static int utf8_seq(const unsigned char *t, size_t len, size_t i) {
    unsigned c = t[i];
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (c == 0xc0 || c == 0xc1) return fail(i, "a string holds an overlong UTF-8 form (lead byte 0x%02x)", c), 0;
    if (!n) return fail(i, "a string holds the byte 0x%02x, which starts no UTF-8 sequence", c), 0;
    if (len - i < (size_t)n) return fail(i, "the text ends inside a UTF-8 sequence"), 0;
    for (int k = 1; k < n; k++)
        if ((t[i + k] & 0xc0) != 0x80)
            return fail(i + k, "a string holds a UTF-8 sequence cut short (byte 0x%02x is no continuation)", t[i + k]), 0;
    if ((c == 0xe0 && t[i + 1] < 0xa0) || (c == 0xf0 && t[i + 1] < 0x90))
        return fail(i, "a string holds an overlong UTF-8 form"), 0;
    if (c == 0xed && t[i + 1] > 0x9f) return fail(i, "a string holds a UTF-8-encoded surrogate (U+D800..U+DFFF)"), 0;
    if (c == 0xf4 && t[i + 1] > 0x8f) return fail(i, "a string holds a code point past U+10FFFF"), 0;
    return n;
}

/* The string whose opening quote is at t[*pos]: validated; *pos moves past the closing quote, *escaped says
 * whether it holds a backslash. 0, or −1 with the reason set. */
static int scan_string(const unsigned char *t, size_t len, size_t *pos, int *escaped) {
    size_t i = *pos + 1;
    *escaped = 0;
    for (;;) {
        /* the common case first: plain ASCII */
        while (i < len && t[i] >= 0x20 && t[i] < 0x80 && t[i] != '"' && t[i] != '\\') i++;
        if (i >= len) return fail(*pos, "a string is not terminated"), -1;
        unsigned c = t[i];
        if (c == '"') break;
        if (c < 0x20) {
            const char *name = c == '\n' ? "newline" : c == '\t' ? "tab" : c == '\r' ? "carriage return" : NULL;
            if (name) return fail(i, "a string holds a raw %s (control bytes must be escaped)", name), -1;
            return fail(i, "a string holds the raw control byte 0x%02x (control bytes must be escaped)", c), -1;
        }
        if (c >= 0x80) {
            int n = utf8_seq(t, len, i);
            if (!n) return -1;
            i += (size_t)n;
            continue;
        }
        /* a backslash */
        *escaped = 1;
        if (len - i < 2) return fail(*pos, "a string is not terminated"), -1;
        unsigned e = t[i + 1];
        if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
            i += 2;
            continue;
        }
        if (e != 'u') return fail(i, "a string holds the unknown escape '\\' followed by %s", shown(e)), -1;
        long cp = len - i >= 6 ? hex4(t + i + 2) : -1;
        if (cp < 0) return fail(i, "a string holds a \\u escape without four hex digits"), -1;
        if (cp >= 0xdc00 && cp <= 0xdfff)
            return fail(i, "a string holds a lone low surrogate \\u%04lx (not preceded by a high one)", cp), -1;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            long lo = len - i >= 12 && t[i + 6] == '\\' && t[i + 7] == 'u' ? hex4(t + i + 8) : -1;
            if (lo < 0xdc00 || lo > 0xdfff)
                return fail(i, "a string holds a high surrogate \\u%04lx not followed by a low one", cp), -1;
            i += 12;
        } else {
            i += 6;
        }
    }
    *pos = i + 1;
    return 0;
}

/* The number at t[*pos] in JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?. The byte after it
 * is left to the caller (a delimiter or an error there). 0, or −1 with the reason set. */
static int scan_number(const unsigned char *t, size_t len, size_t *pos) {
    size_t i = *pos;
#define DIGIT(k) ((k) < len && t[k] >= '0' && t[k] <= '9')
    if (t[i] == '-') i++;
    if (!DIGIT(i)) return fail(i, "a '-' is not followed by a digit"), -1;
    if (t[i] == '0') {
        i++;
        if (DIGIT(i)) return fail(i - 1, "a number has a leading zero"), -1;
    } else {
        while (DIGIT(i)) i++;
    }
    if (i < len && t[i] == '.') {
        i++;
        if (!DIGIT(i)) return fail(i - 1, "a number's '.' is not followed by a digit"), -1;
        while (DIGIT(i)) i++;
    }
    if (i < len && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (i < len && (t[i] == '+' || t[i] == '-')) i++;
        if (!DIGIT(i)) return fail(i, "a number's exponent has no digits"), -1;
        while (DIGIT(i)) i++;
    }
#undef DIGIT
    *pos = i;
    return 0;
}

/* The scanner of both passes: the node count, or 0 with the reason set. With nodes (cap of them) it also
 * fills them; without, it only counts. */
static uint32_t scan(const char *text, size_t len, avj_node *nodes, uint32_t cap) {
    const unsigned char *t = (const unsigned char *)text;
    /* the open containers: their node index, element count and kind */
    uint32_t st_node[AVJ_MAX_DEPTH], st_count[AVJ_MAX_DEPTH];
    unsigned char st_obj[AVJ_MAX_DEPTH];
    int depth = 0;
    uint32_t n = 0;
    size_t i = 0;
    if (!text && len) return fail(0, "no text (a NULL pointer with a nonzero length)"), 0;
    if ((uint64_t)len > UINT32_MAX) return fail(0, "the text is longer than 4 GiB − 1 bytes"), 0;
    if (len >= 3 && t[0] == 0xef && t[1] == 0xbb && t[2] == 0xbf)
        return fail(0, "the text starts with a byte-order mark (JSON texts must not)"), 0;
    if (len >= 2 && ((t[0] == 0xfe && t[1] == 0xff) || (t[0] == 0xff && t[1] == 0xfe)))
        return fail(0, "the text starts with a UTF-16 byte-order mark (JSON texts are UTF-8)"), 0;

/* a new node of type ty at byte `at`, `bytes` long (its `next` is set here for scalars, at the close for
 * containers) */
#define NODE(ty, at, bytes, esc) do {                                                                       \
        if (n >= UINT32_MAX - 1) return fail(at, "the text needs more than 2^32 − 2 nodes"), 0;             \
        if (nodes) {                                                                                         \
            if (n >= cap) return fail(at, "the text needs more than the %u nodes given", (unsigned)cap), 0; \
            nodes[n] = (avj_node){.start = (uint32_t)(at), .len = (uint32_t)(bytes), .next = n + 1,         \
                                  .type = (uint8_t)(ty), .escaped = (uint8_t)(esc)};                         \
        }                                                                                                    \
        n++;                                                                                                 \
    } while (0)

    int after_comma = 0;
value:
    while (i < len && is_ws(t[i])) i++;
    if (i >= len) return fail(i, len ? "the text ends where a value was expected" : "the text is empty"), 0;
    if (depth && !st_obj[depth - 1]) st_count[depth - 1]++; /* an object counts its pairs at their keys */
    switch (t[i]) {
    case '{':
    case '[':
        if (depth == AVJ_MAX_DEPTH) return fail(i, "the text nests deeper than %d arrays and objects", AVJ_MAX_DEPTH), 0;
        NODE(t[i] == '{' ? AVJ_OBJECT : AVJ_ARRAY, i, 0, 0);
        st_node[depth] = n - 1, st_count[depth] = 0, st_obj[depth] = t[i] == '{';
        depth++;
        i++;
        while (i < len && is_ws(t[i])) i++;
        if (i < len && t[i] == (st_obj[depth - 1] ? '}' : ']')) goto close;
        after_comma = 0;
        if (st_obj[depth - 1]) goto key;
        goto value;
    case '"': {
        size_t s = i;
        int esc;
        if (scan_string(t, len, &i, &esc)) return 0;
        NODE(AVJ_STRING, s + 1, i - s - 2, esc);
        goto after;
    }
    case 't':
    case 'f':
    case 'n': {
        const char *w = t[i] == 't' ? "true" : t[i] == 'f' ? "false" : "null";
        size_t k = strlen(w);
        if (len - i < k || memcmp(t + i, w, k)) return fail(i, "a word that is not true, false or null"), 0;
        NODE(t[i] == 't' ? AVJ_TRUE : t[i] == 'f' ? AVJ_FALSE : AVJ_NULL, i, k, 0);
        i += k;
        goto after;
    }
    case ']':
    case '}':
    case ',':
    case ':':
        if (after_comma && t[i] != ',' && t[i] != ':') return fail(i, "a trailing comma before %s", shown(t[i])), 0;
        return fail(i, "%s where a value was expected", shown(t[i])), 0;
    case '\'': return fail(i, "a single-quoted string (JSON strings take double quotes)"), 0;
    case '/': return fail(i, "a comment or a '/' (JSON has no comments)"), 0;
    case '+': return fail(i, "a number with a '+' sign"), 0;
    case '.': return fail(i, "a number without a digit before its '.'"), 0;
    default:
        if (t[i] == '-' || (t[i] >= '0' && t[i] <= '9')) {
            size_t s = i;
            if (scan_number(t, len, &i)) return 0;
            NODE(AVJ_NUMBER, s, i - s, 0);
            goto after;
        }
        return fail(i, "%s starts no JSON value", shown(t[i])), 0;
    }

key:
    while (i < len && is_ws(t[i])) i++;
    if (i >= len) return fail(i, "the text ends where an object's key was expected"), 0;
    if (t[i] == '}') return fail(i, "a trailing comma before '}'"), 0;
    if (t[i] == '\'') return fail(i, "a single-quoted key (JSON keys take double quotes)"), 0;
    if (t[i] != '"') return fail(i, "%s where an object's key (a string) was expected", shown(t[i])), 0;
    {
        size_t s = i;
        int esc;
        if (scan_string(t, len, &i, &esc)) return 0;
        st_count[depth - 1]++;
        NODE(AVJ_STRING, s + 1, i - s - 2, esc);
    }
    while (i < len && is_ws(t[i])) i++;
    if (i >= len) return fail(i, "the text ends where an object's ':' was expected"), 0;
    if (t[i] != ':') return fail(i, "%s where an object's ':' was expected after its key", shown(t[i])), 0;
    i++;
    after_comma = 0;
    goto value;

after:
    while (i < len && is_ws(t[i])) i++;
    if (!depth) {
        if (i < len) return fail(i, "more than whitespace after the top-level value"), 0;
        return n;
    }
    if (i >= len) return fail(i, "the text ends inside %s", st_obj[depth - 1] ? "an object" : "an array"), 0;
    if (t[i] == ',') {
        i++;
        after_comma = 1;
        if (st_obj[depth - 1]) goto key;
        goto value;
    }
    if (t[i] == (st_obj[depth - 1] ? '}' : ']')) goto close;
    return fail(i, "%s where ',' or '%c' was expected", shown(t[i]), st_obj[depth - 1] ? '}' : ']'), 0;

close: /* t[i] closes the innermost container */
    depth--;
    if (nodes) {
        avj_node *c = &nodes[st_node[depth]];
        c->len = (uint32_t)(i + 1 - c->start);
        c->next = n;
        c->count = st_count[depth];
    }
    i++;
    goto after;
#undef NODE
}

uint32_t avj_nodes(const char *text, size_t len) { return scan(text, len, NULL, 0); }

int avj_parse(avj_doc *doc, avj_node *nodes, uint32_t cap, const char *text, size_t len) {
    if (!doc) return fail(0, "no document to parse into (a NULL pointer)"), -1;
    *doc = (avj_doc){0};
    if (!nodes) return fail(0, "no node array (a NULL pointer)"), -1;
    uint32_t n = scan(text, len, nodes, cap);
    if (!n) return -1;
    *doc = (avj_doc){.text = text, .len = len, .node = nodes, .n_nodes = n};
    return 0;
}

// ----------------------------------------------------------------------------------------------------
// accessors

static const avj_node *node_of(const avj_doc *d, uint32_t i, int type) {
    if (!d || !d->node || !d->text || i >= d->n_nodes || d->node[i].type != type) return NULL;
    return &d->node[i];
}

/* The next decoded unit of a validated string's raw bytes p[*k..end): its bytes into u (1..4), *k moved on. */
static int unit(const unsigned char *p, uint32_t *k, unsigned char u[4]) {
    unsigned c = p[*k];
    if (c != '\\') {
        u[0] = (unsigned char)c;
        ++*k;
        return 1;
    }
    unsigned e = p[*k + 1];
    *k += 2;
    switch (e) {
    case 'b': u[0] = '\b'; return 1;
    case 'f': u[0] = '\f'; return 1;
    case 'n': u[0] = '\n'; return 1;
    case 'r': u[0] = '\r'; return 1;
    case 't': u[0] = '\t'; return 1;
    case 'u': break;
    default: u[0] = (unsigned char)e; return 1; /* " \ / */
    }
    unsigned long cp = (unsigned long)hex4(p + *k);
    *k += 4;
    if (cp >= 0xd800 && cp <= 0xdbff) { /* the scan made sure a low surrogate follows */
        cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned long)hex4(p + *k + 2) - 0xdc00);
        *k += 6;
    }
    if (cp < 0x80) return u[0] = (unsigned char)cp, 1;
    if (cp < 0x800) return u[0] = (unsigned char)(0xc0 | cp >> 6), u[1] = (unsigned char)(0x80 | (cp & 0x3f)), 2;
    if (cp < 0x10000) {
        u[0] = (unsigned char)(0xe0 | cp >> 12), u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        u[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    u[0] = (unsigned char)(0xf0 | cp >> 18), u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
    u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f)), u[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

int64_t avj_string_len(const avj_doc *d, uint32_t node) {
    const avj_node *s = node_of(d, node, AVJ_STRING);
    if (!s) return -1;
    if (!s->escaped) return s->len;
    const unsigned char *p = (const unsigned char *)d->text + s->start;
    unsigned char u[4];
    int64_t n = 0;
    for (uint32_t k = 0; k < s->len;) n += unit(p, &k, u);
    return n;
}

int64_t avj_string(const avj_doc *d, uint32_t node, char *out, size_t cap) {
    int64_t n = avj_string_len(d, node);
    if (n < 0 || !out || (uint64_t)n >= (uint64_t)cap) {
        if (out && cap) out[0] = '\0'; /* a caller that ignores −1 still reads a C string */
        return -1;
    }
    const avj_node *s = &d->node[node];
    const unsigned char *p = (const unsigned char *)d->text + s->start;
    if (!s->escaped) {
        memcpy(out, p, s->len);
    } else {
        size_t o = 0;
        unsigned char u[4];
        for (uint32_t k = 0; k < s->len;) {
            int m = unit(p, &k, u);
            memcpy(out + o, u, (size_t)m);
            o += (size_t)m;
        }
    }
    out[n] = '\0';
    return n;
}

int avj_string_eq(const avj_doc *d, uint32_t node, const char *str, size_t n) {
    const avj_node *s = node_of(d, node, AVJ_STRING);
    if (!s || (!str && n)) return 0;
    const unsigned char *p = (const unsigned char *)d->text + s->start;
    if (!s->escaped) return s->len == n && (n == 0 || memcmp(p, str, n) == 0);
    size_t o = 0;
    unsigned char u[4];
    for (uint32_t k = 0; k < s->len;) {
        int m = unit(p, &k, u);
        if (n - o < (size_t)m || memcmp(str + o, u, (size_t)m)) return 0;
        o += (size_t)m;
    }
    return o == n;
}

int64_t avj_get(const avj_doc *d, uint32_t obj, const char *key) {
    const avj_node *o = node_of(d, obj, AVJ_OBJECT);
    if (!o || !key) return -1;
    size_t kn = strlen(key);
    uint32_t i = obj + 1;
    for (uint32_t k = 0; k < o->count && i + 1 < d->n_nodes; k++) {
        if (avj_string_eq(d, i, key, kn)) return (int64_t)i + 1;
        i = d->node[i + 1].next;
    }
    return -1;
}

int64_t avj_at(const avj_doc *d, uint32_t arr, uint32_t idx) {
    const avj_node *a = node_of(d, arr, AVJ_ARRAY);
    if (!a || idx >= a->count) return -1;
    uint32_t i = arr + 1;
    for (uint32_t k = 0; k < idx && i < d->n_nodes; k++) i = d->node[i].next;
    return i < d->n_nodes ? (int64_t)i : -1;
}

// ----------------------------------------------------------------------------------------------------
// numbers

/* A validated number's decimal digits without leading or trailing zeros, as positions in the text, and the
 * power of ten that scales them: value = (−1)^neg · digits · 10^exp10. The digits are read through digit()
 * since a '.' may sit among them. */
typedef struct {
    const unsigned char *p;
    size_t int_len, frac_at, frac_len; /* integer digits p[i0..i0+int_len), fraction digits p[frac_at..+frac_len) */
    size_t i0;
    size_t first, count;               /* significant digits: indices first..first+count of the digit sequence */
    int64_t exp10;
    int neg;
} decimal;

static unsigned digit(const decimal *x, size_t k) {
    return k < x->int_len ? x->p[x->i0 + k] - '0' : x->p[x->frac_at + (k - x->int_len)] - '0';
}

static void decompose(const unsigned char *p, size_t len, decimal *x) {
    size_t i = 0;
    *x = (decimal){.p = p};
    if (p[i] == '-') x->neg = 1, i++;
    x->i0 = i;
    while (i < len && p[i] >= '0' && p[i] <= '9') i++;
    x->int_len = i - x->i0;
    int64_t frac = 0;
    if (i < len && p[i] == '.') {
        x->frac_at = ++i;
        while (i < len && p[i] >= '0' && p[i] <= '9') i++;
        x->frac_len = i - x->frac_at;
        frac = (int64_t)x->frac_len;
    }
    int64_t e = 0;
    if (i < len) { /* e or E: the exponent, saturated far beyond any double's or int64's range */
        int sign = 1;
        i++;
        if (p[i] == '+' || p[i] == '-') sign = p[i] == '-' ? -1 : 1, i++;
        for (; i < len; i++) e = e < 1000000000 ? e * 10 + (p[i] - '0') : e;
        e *= sign;
    }
    size_t total = x->int_len + x->frac_len, a = 0, b = total;
    while (a < total && digit(x, a) == 0) a++;
    while (b > a && digit(x, b - 1) == 0) b--;
    x->first = a, x->count = b - a;
    /* texts are < 2^32 bytes, so every term is far inside int64 */
    x->exp10 = e - frac + (int64_t)(total - b);
}

int avj_number(const avj_doc *d, uint32_t node, double *out) {
    const avj_node *s = node_of(d, node, AVJ_NUMBER);
    if (!s || !out) return -1;
    decimal x;
    decompose((const unsigned char *)d->text + s->start, s->len, &x);
    if (!x.count) return *out = x.neg ? -0.0 : 0.0, 0;
    /* Rewritten as "[-]DIGITSe[-]EXP" with no '.', which strtod reads the same in every locale (the decimal
     * point is its only locale-dependent character), and bounded: past KEEP significant digits the rest is
     * replaced by one sticky '1'. Deciding the rounding of a decimal to a double needs at most 767
     * significant digits (every halfway point between doubles has that many or fewer), and the digits
     * dropped are not all zero (trailing zeros were stripped), so the sticky digit keeps the text on the same
     * side of every halfway point: the conversion stays correctly rounded. */
    enum { KEEP = 780 };
    char buf[KEEP + 40];
    size_t o = 0, take = x.count > KEEP ? KEEP : x.count;
    int64_t e = x.exp10;
    if (x.neg) buf[o++] = '-';
    for (size_t k = 0; k < take; k++) buf[o++] = (char)('0' + digit(&x, x.first + k));
    if (x.count > KEEP) buf[o++] = '1', e += (int64_t)(x.count - KEEP) - 1;
    /* beyond ±100000 the value is 0 or Inf whatever its ≤ 781 digits */
    if (e > 100000) e = 100000;
    if (e < -100000) e = -100000;
    snprintf(buf + o, sizeof buf - o, "e%ld", (long)e);
    *out = strtod(buf, NULL);
    return 0;
}

int avj_int(const avj_doc *d, uint32_t node, int64_t lo, int64_t hi, int64_t *out) {
    const avj_node *s = node_of(d, node, AVJ_NUMBER);
    if (!s || !out) return -1;
    decimal x;
    decompose((const unsigned char *)d->text + s->start, s->len, &x);
    uint64_t m = 0; /* the magnitude, exactly, in decimal arithmetic (never through a double) */
    if (x.count) {
        if (x.exp10 < 0 || (uint64_t)x.exp10 + x.count > 19 + 1) return -1; /* a fraction, or ≥ 10^20 */
        for (size_t k = 0; k < x.count; k++) {
            unsigned dg = digit(&x, x.first + k);
            if (m > (UINT64_MAX - dg) / 10) return -1;
            m = m * 10 + dg;
        }
        for (int64_t k = 0; k < x.exp10; k++) {
            if (m > UINT64_MAX / 10) return -1;
            m *= 10;
        }
    }
    int64_t v;
    if (x.neg) {
        if (m > (uint64_t)INT64_MAX + 1) return -1;
        v = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
    } else {
        if (m > (uint64_t)INT64_MAX) return -1;
        v = (int64_t)m;
    }
    if (v < lo || v > hi) return -1;
    *out = v;
    return 0;
}
