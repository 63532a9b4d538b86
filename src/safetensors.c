/* safetensors.c: the .safetensors reader (docs/hf.md): an 8-byte little-endian header length N, N bytes of
 * JSON header, then the data. The header is read by a small strict JSON parser written for it (objects,
 * strings with escapes, arrays of non-negative integers); anything else is refused with one sentence
 * (av_st_error). Every size is checked in 64-bit arithmetic against the buffer before anything is used;
 * nothing is read outside buf[0..len) and nothing is allocated: av_st_work sizes the caller's workspace
 * after the per-entry checks, av_st_parse runs them again, decodes names into that workspace and checks
 * the entries against each other (unique names, byte ranges that tile the data).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static char st_reason[256] = "no error";

const char *av_st_error(void) { return st_reason; }

static int fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st_reason, sizeof st_reason, fmt, ap);
    va_end(ap);
    return AV_ERR_FORMAT;
}

/* A name as a sentence shows it: at most 40 bytes, printable ASCII only (others as '?'). */
static const char *shown(const char *s, size_t n) {
    static char out[48];
    size_t k = 0;
    for (; k < n && k < 40; k++) out[k] = s[k] >= 0x20 && s[k] < 0x7f ? s[k] : '?';
    if (n > 40) out[k++] = '.', out[k++] = '.', out[k++] = '.';
    out[k] = '\0';
    return out;
}

// ----------------------------------------------------------------------------------------------------
// F16 and BF16

float av_bf16_to_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float av_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
    if (e == 0x1f) u = sign | 0x7f800000u | m << 13;       // Inf, or NaN with its payload
    else if (e) u = sign | (e + 112) << 23 | m << 13;       // normal: exponent rebased 15 → 127
    else if (!m) u = sign;                                   // signed zero
    else {                                                   // subnormal m·2^−24: normalise the mantissa
        int ex = 113;                                        // 2^−14 as a float's biased exponent
        while (!(m & 0x400)) m <<= 1, ex--;
        u = sign | (uint32_t)ex << 23 | (m & 0x3ff) << 13;
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// ----------------------------------------------------------------------------------------------------
// the header's JSON

typedef struct {
    const unsigned char *p, *end, *start; // the header (start: its first byte, for offsets in sentences)
    uint64_t data_bytes;
    int fill;                             // 0: count and check; 1: also write into the arrays below
    av_st_tensor *tensors;
    av_st_meta *meta;
    char *str;                            // decoded strings, NUL-terminated
    uint64_t n_tensors, n_meta, str_bytes;
} parser;

static void ws(parser *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

static const char *what(const parser *s) {
    if (s->p >= s->end) return "the header's end";
    switch (*s->p) {
    case '{': return "an object";
    case '[': return "an array";
    case '"': return "a string";
    case 't': case 'f': return "a boolean or other word";
    case 'n': return "null or another word";
    case '-': return "a negative number";
    default: return *s->p >= '0' && *s->p <= '9' ? "a number" : "a byte that starts no JSON value";
    }
}

static int expect(parser *s, unsigned char c, const char *where) {
    ws(s);
    if (s->p < s->end && *s->p == c) return s->p++, AV_OK;
    return fail("the safetensors header has %s at byte %zu where '%c' was expected (%s)", what(s),
                (size_t)(s->p - s->start), c, where);
}

static int hex4(const unsigned char *p, const unsigned char *end, unsigned *v) {
    if (end - p < 4) return 0;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return 0;
        *v = *v << 4 | (unsigned)d;
    }
    return 1;
}

/* Length of a valid UTF-8 sequence at p (2..4), or 0 (overlong forms, surrogates, past U+10FFFF refused). */
static int utf8_len(const unsigned char *p, const unsigned char *end) {
    unsigned c = p[0];
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n || end - p < n) return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && p[1] < 0xa0) return 0;
    if (c == 0xed && p[1] > 0x9f) return 0;
    if (c == 0xf0 && p[1] < 0x90) return 0;
    if (c == 0xf4 && p[1] > 0x8f) return 0;
    return n;
}

/* A JSON string at s->p, decoded into out[0..cap) (the bytes past cap are counted, not written) with its full
 * decoded length in *n. \u0000 is refused: names and values are C strings. */
static int jstr(parser *s, char *out, size_t cap, size_t *n, const char *where) {
    ws(s);
    if (s->p >= s->end || *s->p != '"')
        return fail("the safetensors header has %s at byte %zu where a string was expected (%s)", what(s),
                    (size_t)(s->p - s->start), where);
    const unsigned char *q = s->p + 1;
    size_t k = 0;
#define PUT(ch) do { if (k < cap) out[k] = (char)(ch); k++; } while (0)
    for (;;) {
        if (q >= s->end) return fail("the safetensors header ends inside a string (%s)", where);
        unsigned c = *q;
        if (c == '"') break;
        if (c < 0x20) return fail("the safetensors header has a control byte 0x%02x inside a string at byte %zu", c, (size_t)(q - s->start));
        if (c >= 0x80) {
            int L = utf8_len(q, s->end);
            if (!L) return fail("the safetensors header has invalid UTF-8 at byte %zu", (size_t)(q - s->start));
            for (int i = 0; i < L; i++) PUT(q[i]);
            q += L;
            continue;
        }
        if (c != '\\') { PUT(c); q++; continue; }
        if (q + 1 >= s->end) return fail("the safetensors header ends inside a string (%s)", where);
        unsigned e = q[1], cp;
        q += 2;
        switch (e) {
        case '"': PUT('"'); continue;
        case '\\': PUT('\\'); continue;
        case '/': PUT('/'); continue;
        case 'b': PUT('\b'); continue;
        case 'f': PUT('\f'); continue;
        case 'n': PUT('\n'); continue;
        case 'r': PUT('\r'); continue;
        case 't': PUT('\t'); continue;
        case 'u': break;
        default: return fail("the safetensors header has an unknown escape '\\%c' at byte %zu", e >= 0x20 && e < 0x7f ? (int)e : '?', (size_t)(q - 2 - s->start));
        }
        if (!hex4(q, s->end, &cp)) return fail("the safetensors header has a \\u escape without 4 hex digits at byte %zu", (size_t)(q - 2 - s->start));
        q += 4;
        if (cp >= 0xdc00 && cp <= 0xdfff) return fail("the safetensors header has a lone low surrogate \\u%04x at byte %zu", cp, (size_t)(q - 6 - s->start));
        if (cp >= 0xd800 && cp <= 0xdbff) {
            unsigned lo;
            if (s->end - q < 6 || q[0] != '\\' || q[1] != 'u' || !hex4(q + 2, s->end, &lo) || lo < 0xdc00 || lo > 0xdfff)
                return fail("the safetensors header has a high surrogate \\u%04x not followed by a low one at byte %zu", cp, (size_t)(q - 6 - s->start));
            q += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        if (!cp) return fail("the safetensors header has \\u0000 inside a string at byte %zu: names and metadata must not hold NUL", (size_t)(q - 6 - s->start));
        if (cp < 0x80) PUT(cp);
        else if (cp < 0x800) { PUT(0xc0 | cp >> 6); PUT(0x80 | (cp & 0x3f)); }
        else if (cp < 0x10000) { PUT(0xe0 | cp >> 12); PUT(0x80 | (cp >> 6 & 0x3f)); PUT(0x80 | (cp & 0x3f)); }
        else { PUT(0xf0 | cp >> 18); PUT(0x80 | (cp >> 12 & 0x3f)); PUT(0x80 | (cp >> 6 & 0x3f)); PUT(0x80 | (cp & 0x3f)); }
    }
#undef PUT
    s->p = q + 1;
    *n = k;
    return AV_OK;
}

/* A JSON array of at most cap non-negative integers (each < 2^64) into v, their number in *n. */
static int jints(parser *s, uint64_t *v, int cap, int *n, const char *name, const char *field) {
    int st = expect(s, '[', field);
    if (st) return st;
    *n = 0;
    ws(s);
    if (s->p < s->end && *s->p == ']') return s->p++, AV_OK;
    for (;;) {
        ws(s);
        if (s->p >= s->end || *s->p < '0' || *s->p > '9')
            return fail("the tensor '%s' has %s in its %s where a non-negative integer was expected", name, what(s), field);
        if (*n == cap) return fail("the tensor '%s' has more than %d entries in its %s", name, cap, field);
        uint64_t x = 0;
        const unsigned char *d = s->p;
        for (; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++) {
            unsigned dig = *s->p - '0';
            if (x > (UINT64_MAX - dig) / 10) return fail("the tensor '%s' has an integer past 2^64 in its %s", name, field);
            x = x * 10 + dig;
        }
        if (s->p - d > 1 && *d == '0') return fail("the tensor '%s' has an integer with a leading zero in its %s", name, field);
        if (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E'))
            return fail("the tensor '%s' has a number that is not an integer in its %s", name, field);
        v[(*n)++] = x;
        ws(s);
        if (s->p < s->end && *s->p == ',') { s->p++; continue; }
        return expect(s, ']', field);
    }
}

static const struct { const char *name; int size; } DTYPES[3] = {{"F32", 4}, {"F16", 2}, {"BF16", 2}};
/* the format's other dtypes: sized and kept as AV_ST_OTHER, never read (safetensors' Dtype enum) */
static const struct { const char *name; int size; } OTHER[] = {
    {"BOOL", 1}, {"U8", 1}, {"I8", 1}, {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2},
    {"I32", 4}, {"U32", 4}, {"F64", 8}, {"I64", 8}, {"U64", 8}};

/* One tensor entry {"dtype", "shape", "data_offsets"}, each once, nothing else; name: its decoded name. */
static int entry(parser *s, const char *name, size_t name_len) {
    char nm[48];
    snprintf(nm, sizeof nm, "%s", shown(name, name_len));
    int st, have[3] = {0, 0, 0}, dtype = -1, ndim = 0, noff = 0, esize_of = 0;
    const char *other_name = "";
    uint64_t shape[AV_ST_MAX_DIMS], off[2];
    char dname[16];
    size_t dlen = 0;
    if ((st = expect(s, '{', "a tensor entry"))) return st;
    ws(s);
    if (s->p < s->end && *s->p == '}') return fail("the tensor '%s' has an empty entry: it needs dtype, shape and data_offsets", nm);
    for (;;) {
        char key[16];
        size_t kl;
        if ((st = jstr(s, key, sizeof key, &kl, "a tensor entry's key"))) return st;
        int which = kl == 5 && !memcmp(key, "dtype", 5) ? 0 : kl == 5 && !memcmp(key, "shape", 5) ? 1
                  : kl == 12 && !memcmp(key, "data_offsets", 12) ? 2 : -1;
        if (which < 0) return fail("the tensor '%s' has an unknown field '%s': an entry holds dtype, shape and data_offsets only", nm, shown(key, kl < sizeof key ? kl : sizeof key));
        if (have[which]) return fail("the tensor '%s' has its %s twice", nm, which == 0 ? "dtype" : which == 1 ? "shape" : "data_offsets");
        have[which] = 1;
        if ((st = expect(s, ':', "after a key"))) return st;
        if (which == 0) {
            if ((st = jstr(s, dname, sizeof dname - 1, &dlen, "a dtype"))) return st;
            for (int d = 0; d < 3; d++)
                if (dlen == strlen(DTYPES[d].name) && !memcmp(dname, DTYPES[d].name, dlen)) dtype = d, esize_of = DTYPES[d].size;
            for (size_t d = 0; dtype < 0 && d < sizeof OTHER / sizeof OTHER[0]; d++)
                if (dlen == strlen(OTHER[d].name) && !memcmp(dname, OTHER[d].name, dlen))
                    dtype = AV_ST_OTHER, esize_of = OTHER[d].size, other_name = OTHER[d].name;
            if (dtype < 0) return fail("the tensor '%s' has dtype %s, not one of safetensors' dtypes", nm, shown(dname, dlen < sizeof dname - 1 ? dlen : sizeof dname - 1));
        } else if (which == 1) {
            if ((st = jints(s, shape, AV_ST_MAX_DIMS, &ndim, nm, "shape"))) return st;
        } else {
            if ((st = jints(s, off, 2, &noff, nm, "data_offsets"))) return st;
            if (noff != 2) return fail("the tensor '%s' has %d data_offsets: it needs two, [begin, end]", nm, noff);
        }
        ws(s);
        if (s->p < s->end && *s->p == ',') { s->p++; continue; }
        if ((st = expect(s, '}', "the end of a tensor entry"))) return st;
        break;
    }
    if (!have[0] || !have[1] || !have[2])
        return fail("the tensor '%s' has no %s", nm, !have[0] ? "dtype" : !have[1] ? "shape" : "data_offsets");
    // the shape's product in 64 bits; a zero dimension makes it 0, the others must still not overflow
    uint64_t prod = 1;
    int zero = 0;
    for (int i = 0; i < ndim; i++) {
        if (!shape[i]) { zero = 1; continue; }
        if (prod > UINT64_MAX / shape[i]) return fail("the tensor '%s' has a shape whose product overflows 64 bits", nm);
        prod *= shape[i];
    }
    uint64_t count = zero ? 0 : prod, esize = (uint64_t)esize_of;
    if (count > UINT64_MAX / esize) return fail("the tensor '%s' has a shape whose byte size overflows 64 bits", nm);
    if (off[0] > off[1]) return fail("the tensor '%s' has data_offsets [%llu, %llu]: its end is before its begin", nm, (unsigned long long)off[0], (unsigned long long)off[1]);
    if (off[1] > s->data_bytes)
        return fail("the tensor '%s' ends at byte %llu of the data, past its %llu bytes: a truncated or corrupted file", nm,
                    (unsigned long long)off[1], (unsigned long long)s->data_bytes);
    if (off[1] - off[0] != count * esize)
        return fail("the tensor '%s' has %llu bytes in data_offsets but its %s shape needs %llu", nm,
                    (unsigned long long)(off[1] - off[0]), dtype == AV_ST_OTHER ? other_name : DTYPES[dtype].name, (unsigned long long)(count * esize));
    if (s->fill) {
        av_st_tensor *t = &s->tensors[s->n_tensors];
        memset(t, 0, sizeof *t);
        t->name = name;
        t->dtype = dtype, t->ndim = ndim, t->count = count, t->begin = off[0], t->end = off[1];
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    }
    s->n_tensors++;
    return AV_OK;
}

/* A decoded string: into the workspace when filling (its length is known to fit), else a preview. */
static int jstr_keep(parser *s, char *preview, size_t pcap, const char **out, size_t *n, const char *where) {
    char *dst = s->fill ? s->str + s->str_bytes : preview;
    size_t cap = s->fill ? (size_t)-1 : pcap;
    int st = jstr(s, dst, cap, n, where);
    if (st) return st;
    if (s->fill) dst[*n] = '\0';
    *out = dst;
    s->str_bytes += *n + 1;
    return AV_OK;
}

static int metadata(parser *s) {
    int st = expect(s, '{', "__metadata__");
    if (st) return st;
    ws(s);
    if (s->p < s->end && *s->p == '}') return s->p++, AV_OK;
    for (;;) {
        char pk[48], pv[8];
        const char *k, *v;
        size_t kl, vl;
        if ((st = jstr_keep(s, pk, sizeof pk, &k, &kl, "a __metadata__ key"))) return st;
        if ((st = expect(s, ':', "after a __metadata__ key"))) return st;
        ws(s);
        if (s->p >= s->end || *s->p != '"')
            return fail("the safetensors __metadata__ has %s for the key '%s': its values must be strings", what(s), shown(k, kl < sizeof pk ? kl : sizeof pk));
        if ((st = jstr_keep(s, pv, sizeof pv, &v, &vl, "a __metadata__ value"))) return st;
        if (s->fill) s->meta[s->n_meta].key = k, s->meta[s->n_meta].value = v;
        s->n_meta++;
        ws(s);
        if (s->p < s->end && *s->p == ',') { s->p++; continue; }
        return expect(s, '}', "the end of __metadata__");
    }
}

/* The whole header: the checks of one entry at a time; counts (and, filling, the entries) in s. */
static int header(parser *s, const unsigned char *b, size_t len) {
    if (len < 8) return fail("the safetensors file is %zu bytes, shorter than its 8-byte header length", len);
    uint64_t N = 0;
    for (int i = 7; i >= 0; i--) N = N << 8 | b[i];
    if (N > AV_ST_MAX_HEADER) return fail("the safetensors header claims %llu bytes, more than the %d this reader takes", (unsigned long long)N, AV_ST_MAX_HEADER);
    if (N > len - 8) return fail("the safetensors header claims %llu bytes but the file holds %zu after the length: a truncated file", (unsigned long long)N, len - 8);
    if (N < 2) return fail("the safetensors header is %llu bytes: too short for a JSON object", (unsigned long long)N);
    s->start = s->p = b + 8, s->end = b + 8 + N;
    s->data_bytes = len - 8 - N;
    if (*s->p != '{') return fail("the safetensors header does not start with '{' (byte 0x%02x): not a safetensors file", *s->p);
    s->p++;
    ws(s);
    int st, seen_meta = 0;
    if (s->p < s->end && *s->p == '}') s->p++;
    else
        for (;;) {
            char pk[48];
            const char *k;
            size_t kl;
            if ((st = jstr_keep(s, pk, sizeof pk, &k, &kl, "a tensor name"))) return st;
            if ((st = expect(s, ':', "after a tensor name"))) return st;
            if (kl == 12 && !memcmp(k, "__metadata__", 12)) {
                if (seen_meta++) return fail("the safetensors header has __metadata__ twice");
                s->str_bytes -= kl + 1; // the key itself is not kept
                if ((st = metadata(s))) return st;
            } else if ((st = entry(s, k, kl))) return st;
            ws(s);
            if (s->p < s->end && *s->p == ',') { s->p++; continue; }
            if ((st = expect(s, '}', "the end of the header's object"))) return st;
            break;
        }
    ws(s);
    if (s->p != s->end) return fail("the safetensors header has bytes after its object (byte %zu)", (size_t)(s->p - s->start));
    if (s->n_tensors > INT_MAX || s->n_meta > INT_MAX) return fail("the safetensors header has too many entries");
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// the workspace and the checks across entries

#define ALIGN16(x) (((x) + 15u) & ~(uint64_t)15u)

static uint64_t need(const parser *s) {
    return 16 + ALIGN16(s->n_tensors * sizeof(av_st_tensor)) + ALIGN16(s->n_meta * sizeof(av_st_meta)) +
           ALIGN16(s->n_tensors * sizeof(av_st_tensor *)) + s->str_bytes;
}

size_t av_st_work(const void *buf, size_t len) {
    if (!buf) return 0;
    parser s;
    memset(&s, 0, sizeof s);
    if (header(&s, buf, len)) return 0;
    uint64_t w = need(&s);
    if (w > SIZE_MAX) return fail("the safetensors header needs more memory than this build can address"), 0;
    return (size_t)w;
}

static int by_data(const void *a, const void *b) {
    const av_st_tensor *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name);
}
static int by_name(const void *a, const void *b) {
    return strcmp((*(const av_st_tensor *const *)a)->name, (*(const av_st_tensor *const *)b)->name);
}
static int by_key(const void *a, const void *b) {
    return strcmp(((const av_st_meta *)a)->key, ((const av_st_meta *)b)->key);
}

int av_st_parse(av_st_file *f, void *work, size_t work_bytes, const void *buf, size_t len) {
    if (!f || !buf || !work) return AV_ERR_NULL;
    memset(f, 0, sizeof *f);
    parser s;
    memset(&s, 0, sizeof s);
    int st = header(&s, buf, len);
    if (st) return st;
    if (need(&s) > work_bytes) return AV_ERR_WORKSPACE;
    uint64_t nt = s.n_tensors, nm = s.n_meta;
    unsigned char *w = (unsigned char *)work + ((16 - (uintptr_t)work % 16) % 16);
    av_st_tensor *T = (av_st_tensor *)w;
    w += ALIGN16(nt * sizeof *T);
    av_st_meta *M = (av_st_meta *)w;
    w += ALIGN16(nm * sizeof *M);
    const av_st_tensor **B = (const av_st_tensor **)w;
    w += ALIGN16(nt * sizeof *B);
    memset(&s, 0, sizeof s);
    s.fill = 1, s.tensors = T, s.meta = M, s.str = (char *)w;
    if ((st = header(&s, buf, len))) return st; // the same buffer: cannot fail where the first pass passed
    if (nt) qsort(T, (size_t)nt, sizeof *T, by_data);
    for (uint64_t i = 0; i < nt; i++) B[i] = &T[i];
    if (nt) qsort(B, (size_t)nt, sizeof *B, by_name);
    for (uint64_t i = 1; i < nt; i++)
        if (!strcmp(B[i]->name, B[i - 1]->name)) return fail("the safetensors header names the tensor '%s' twice", shown(B[i]->name, strlen(B[i]->name)));
    if (nm) qsort(M, (size_t)nm, sizeof *M, by_key);
    for (uint64_t i = 1; i < nm; i++)
        if (!strcmp(M[i].key, M[i - 1].key)) return fail("the safetensors __metadata__ has the key '%s' twice", shown(M[i].key, strlen(M[i].key)));
    // the format's rule: sorted by offsets, the byte ranges tile the data from 0 to its end
    uint64_t at = 0;
    for (uint64_t i = 0; i < nt; i++) {
        if (T[i].begin < at) {
            char a[48];
            snprintf(a, sizeof a, "%s", shown(T[i - 1].name, strlen(T[i - 1].name)));
            return fail("the tensors '%s' and '%s' overlap in the data (bytes %llu..%llu)", a, shown(T[i].name, strlen(T[i].name)),
                        (unsigned long long)T[i].begin, (unsigned long long)at);
        }
        if (T[i].begin > at)
            return fail("the data has a gap of bytes %llu..%llu that no tensor covers (before '%s')", (unsigned long long)at,
                        (unsigned long long)T[i].begin, shown(T[i].name, strlen(T[i].name)));
        at = T[i].end;
    }
    if (at != s.data_bytes)
        return fail("the data holds %llu bytes but its tensors end at byte %llu: %llu bytes no tensor covers",
                    (unsigned long long)s.data_bytes, (unsigned long long)at, (unsigned long long)(s.data_bytes - at));
    const unsigned char *data = (const unsigned char *)buf + (len - s.data_bytes);
    for (uint64_t i = 0; i < nt; i++) T[i].data = data + T[i].begin;
    f->n_tensors = (int)nt, f->n_meta = (int)nm;
    f->tensors = T, f->meta = M, f->by_name = B, f->data = data, f->data_bytes = s.data_bytes;
    st_reason[0] = '\0';
    return AV_OK;
}

const av_st_tensor *av_st_find(const av_st_file *f, const char *name) {
    if (!f || !name || !f->by_name) return NULL;
    int lo = 0, hi = f->n_tensors - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(f->by_name[mid]->name, name);
        if (!c) return f->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

int av_st_rows_f32(float *out, const av_st_tensor *t, uint64_t row0, uint64_t nrows) {
    if (!t || (!out && nrows)) return AV_ERR_NULL;
    if (t->dtype == AV_ST_OTHER) return AV_ERR_FORMAT; /* an integer (or F64, F8) buffer: not converted */
    if (t->dtype < 0 || t->dtype > 2 || t->ndim < 0 || t->ndim > AV_ST_MAX_DIMS || !t->data) return AV_ERR_SIZE;
    uint64_t rows = t->ndim ? t->shape[0] : 1, row_len = t->ndim ? (rows ? t->count / rows : 0) : 1;
    if (row0 > rows || nrows > rows - row0) return AV_ERR_SIZE;
    uint64_t n = nrows * row_len; // ≤ count: no overflow
    if (n > SIZE_MAX / sizeof(float)) return AV_ERR_TOO_LARGE;
    int es = DTYPES[t->dtype].size;
    const unsigned char *p = t->data + row0 * row_len * (uint64_t)es;
    for (size_t i = 0; i < (size_t)n; i++, p += es) {
        if (t->dtype == AV_ST_F32) {
            uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
            memcpy(&out[i], &u, sizeof u);
        } else {
            uint16_t h = (uint16_t)(p[0] | p[1] << 8);
            out[i] = t->dtype == AV_ST_F16 ? av_f16_to_f32(h) : av_bf16_to_f32(h);
        }
    }
    return AV_OK;
}
