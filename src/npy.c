/* npy.c: the .npy reader and writer (float32/float64, little-endian, C order, format versions 1 and 2).
 *
 * Format (numpy's NEP 1, "format.py"): the magic "\x93NUMPY", a major and a minor version byte, the
 * header length (uint16 LE in version 1, uint32 LE in version 2), then the header: a Python dict
 * literal {'descr': '<f4', 'fortran_order': False, 'shape': (n, d), } padded with spaces and ended by
 * '\n'; then the raw data. The parser reads that dict literal with a small tokenizer: exactly the
 * three keys, each once, in any order; anything else (a NUL byte anywhere in the header included, as
 * numpy) is an error with a reason (av_npy_error), never a crash. It never reads outside buf[0..len) and never allocates.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// the reason of the last failure

static char npy_reason[200] = "no error";

const char *av_npy_error(void) { return npy_reason; }

static int fail(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(npy_reason, sizeof npy_reason, fmt, ap);
    va_end(ap);
    return status;
}

// ----------------------------------------------------------------------------------------------------
// the header dict: a cursor over buf[p..end)

typedef struct cursor { const unsigned char *p, *end; } cursor;

static void skip_space(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

/* Consume `ch` after optional spaces; 1 if it was there. */
static int accept(cursor *c, char ch) {
    skip_space(c);
    if (c->p < c->end && *c->p == (unsigned char)ch) { c->p++; return 1; }
    return 0;
}

/* A quoted string ('…' or "…", no escapes) into out[cap]; 0 if there is none or it is too long. */
static int read_string(cursor *c, char *out, size_t cap) {
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    unsigned char q = *c->p++;
    size_t k = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || k + 1 >= cap) return 0;
        out[k++] = (char)*c->p++;
    }
    if (c->p >= c->end) return 0;
    c->p++;
    out[k] = 0;
    return 1;
}

/* A bare word (True, False) into out[cap]. */
static int read_word(cursor *c, char *out, size_t cap) {
    skip_space(c);
    size_t k = 0;
    while (c->p < c->end && ((*c->p >= 'A' && *c->p <= 'Z') || (*c->p >= 'a' && *c->p <= 'z'))) {
        if (k + 1 >= cap) return 0;
        out[k++] = (char)*c->p++;
    }
    out[k] = 0;
    return k > 0;
}

#define DIM_LIMIT ((int64_t)1 << 53) /* no single dimension beyond 2^53 (the shape check does the rest) */

/* A shape tuple "(a, b, …)" or "()" or "(a,)" into info->shape / ndim. Returns AV_OK or a failure. */
static int read_shape(cursor *c, av_npy_info *info) {
    if (!accept(c, '(')) return fail(AV_ERR_FORMAT, ".npy header: 'shape' is not a tuple");
    int ndim = 0;
    for (;;) {
        if (accept(c, ')')) break;
        skip_space(c);
        if (c->p < c->end && *c->p == '-') return fail(AV_ERR_FORMAT, ".npy header: negative dimension in 'shape'");
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return fail(AV_ERR_FORMAT, ".npy header: 'shape' holds something other than integers");
        int64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            v = v * 10 + (*c->p++ - '0');
            if (v > DIM_LIMIT) return fail(AV_ERR_FORMAT, ".npy header: a dimension of 'shape' is absurdly large");
        }
        if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++;   /* Python 2's long suffix */
        if (ndim == AV_NPY_MAX_DIM)
            return fail(AV_ERR_FORMAT, ".npy header: more than %d dimensions", AV_NPY_MAX_DIM);
        info->shape[ndim++] = v;
        if (accept(c, ',')) continue;
        if (accept(c, ')')) break;
        return fail(AV_ERR_FORMAT, ".npy header: malformed 'shape' tuple");
    }
    info->ndim = ndim;
    return AV_OK;
}

/* One "key: value" pair; *seen collects the keys (bit 0 descr, 1 fortran_order, 2 shape). */
static int read_pair(cursor *c, av_npy_info *info, int *seen) {
    char key[32], val[32];
    if (!read_string(c, key, sizeof key)) return fail(AV_ERR_FORMAT, ".npy header: expected a quoted key");
    if (!accept(c, ':')) return fail(AV_ERR_FORMAT, ".npy header: expected ':' after '%s'", key);
    int bit = strcmp(key, "descr") == 0 ? 1 : strcmp(key, "fortran_order") == 0 ? 2 : strcmp(key, "shape") == 0 ? 4 : 0;
    if (!bit) return fail(AV_ERR_FORMAT, ".npy header: unexpected key '%s'", key);
    if (*seen & bit) return fail(AV_ERR_FORMAT, ".npy header: key '%s' appears twice", key);
    *seen |= bit;
    if (bit == 1) {
        if (!read_string(c, val, sizeof val)) return fail(AV_ERR_FORMAT, ".npy header: 'descr' is not a simple dtype string");
        if (strcmp(val, "<f4") == 0) info->dtype_bytes = 4;
        else if (strcmp(val, "<f8") == 0) info->dtype_bytes = 8;
        else return fail(AV_ERR_FORMAT, ".npy dtype '%s' is not supported (only little-endian float32 '<f4' or float64 '<f8')", val);
    } else if (bit == 2) {
        if (!read_word(c, val, sizeof val)) return fail(AV_ERR_FORMAT, ".npy header: 'fortran_order' is not True or False");
        if (strcmp(val, "True") == 0) return fail(AV_ERR_FORMAT, ".npy array is in Fortran order (only C order is supported; save np.ascontiguousarray(x))");
        if (strcmp(val, "False") != 0) return fail(AV_ERR_FORMAT, ".npy header: 'fortran_order' is '%s', not True or False", val);
    } else {
        return read_shape(c, info);
    }
    return AV_OK;
}

static int parse_dict(av_npy_info *info, const unsigned char *h, size_t hlen) {
    /* numpy refuses a header holding a NUL (Python's literal_eval will not read one); without this check
     * a descr '<f4\0' would pass as '<f4', the strings being compared as C strings */
    const unsigned char *nul = memchr(h, 0, hlen);
    if (nul) return fail(AV_ERR_FORMAT, ".npy header holds a NUL byte (at header byte %zu)", (size_t)(nul - h));
    cursor c = {h, h + hlen};
    if (!accept(&c, '{')) return fail(AV_ERR_FORMAT, ".npy header is not a dict");
    int seen = 0, st;
    for (;;) {
        if (accept(&c, '}')) break;
        if ((st = read_pair(&c, info, &seen)) != AV_OK) return st;
        if (accept(&c, ',')) continue;
        if (accept(&c, '}')) break;
        return fail(AV_ERR_FORMAT, ".npy header: expected ',' or '}' in the dict");
    }
    skip_space(&c);
    if (c.p != c.end) return fail(AV_ERR_FORMAT, ".npy header: junk after the dict");
    if (seen != 7)
        return fail(AV_ERR_FORMAT, ".npy header: missing key '%s'",
                    !(seen & 1) ? "descr" : !(seen & 2) ? "fortran_order" : "shape");
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// parse, decode, write

int av_npy_parse(av_npy_info *info, const unsigned char *buf, size_t len) {
    if (!info || !buf) return fail(AV_ERR_NULL, ".npy: a required pointer is NULL");
    memset(info, 0, sizeof *info);
    if (len < 6) return fail(AV_ERR_FORMAT, "not a .npy file (too short for the magic string)");
    if (memcmp(buf, "\x93NUMPY", 6) != 0) return fail(AV_ERR_FORMAT, "not a .npy file (bad magic string)");
    if (len < 10) return fail(AV_ERR_FORMAT, ".npy file truncated in its header");
    int major = buf[6];
    size_t hlen, start;
    if (major == 1) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        start = 10;
    } else if (major == 2) {
        if (len < 12) return fail(AV_ERR_FORMAT, ".npy file truncated in its header");
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        start = 12;
    } else {
        return fail(AV_ERR_FORMAT, ".npy format version %d.%d is not supported (only 1.0 and 2.0)", major, buf[7]);
    }
    if (hlen > len - start) return fail(AV_ERR_FORMAT, ".npy file truncated in its header");
    int st = parse_dict(info, buf + start, hlen);
    if (st != AV_OK) { memset(info, 0, sizeof *info); return st; }
    /* in 64 bits: on wasm32 a size_t cast would truncate a dimension of 2^32 (to 0, then divide by it) */
    uint64_t count = 1, limit = ((uint64_t)SIZE_MAX / 8) >> 1;
    for (int i = 0; i < info->ndim; i++) {
        uint64_t s = (uint64_t)info->shape[i];
        if (s != 0 && (s > limit || count > limit / s)) {
            memset(info, 0, sizeof *info);
            return fail(AV_ERR_FORMAT, ".npy shape is absurdly large (the element count overflows)");
        }
        count *= s;
    }
    info->count = count;
    info->data_offset = start + hlen;
    size_t need = count * (size_t)info->dtype_bytes, have = len - info->data_offset;
    if (need > have) {
        memset(info, 0, sizeof *info);
        return fail(AV_ERR_FORMAT, ".npy data truncated: the shape needs %zu bytes of data, the file holds %zu",
                    need, have);
    }
    return AV_OK;
}

static int info_ok(const av_npy_info *info, size_t len) {
    if (info->dtype_bytes != 4 && info->dtype_bytes != 8) return 0;
    if (info->data_offset > len) return 0;
    return info->count <= (len - info->data_offset) / (size_t)info->dtype_bytes;
}

int av_npy_decode_f32(float *out, const av_npy_info *info, const unsigned char *buf, size_t len) {
    if (!out || !info || !buf) return fail(AV_ERR_NULL, ".npy: a required pointer is NULL");
    if (!info_ok(info, len))
        return fail(AV_ERR_FORMAT, ".npy: the buffer does not hold the data its parsed header describes");
    const unsigned char *p = buf + info->data_offset;
    if (info->dtype_bytes == 4) {
        for (size_t i = 0; i < info->count; i++, p += 4) {
            uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
            memcpy(out + i, &u, 4);
        }
    } else {
        for (size_t i = 0; i < info->count; i++, p += 8) {
            uint64_t u = 0;
            for (int b = 7; b >= 0; b--) u = u << 8 | p[b];
            double x;
            memcpy(&x, &u, 8);
            out[i] = (float)x;      /* rounded to nearest; beyond the float range becomes ±Inf */
        }
    }
    return AV_OK;
}

int av_npy_write_header(unsigned char *buf, size_t cap, size_t *header_len, const int64_t *shape,
                        int ndim, int dtype_bytes) {
    if (!buf || !header_len || (!shape && ndim > 0)) return fail(AV_ERR_NULL, ".npy: a required pointer is NULL");
    if (ndim < 0 || ndim > AV_NPY_MAX_DIM) return fail(AV_ERR_SIZE, ".npy: ndim %d is outside 0..%d", ndim, AV_NPY_MAX_DIM);
    if (dtype_bytes != 4 && dtype_bytes != 8) return fail(AV_ERR_FORMAT, ".npy: dtype_bytes must be 4 or 8");
    char dict[400];
    int k = snprintf(dict, sizeof dict, "{'descr': '<f%d', 'fortran_order': False, 'shape': (", dtype_bytes);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || shape[i] > DIM_LIMIT) return fail(AV_ERR_SIZE, ".npy: shape[%d] is negative or absurd", i);
        k += snprintf(dict + k, sizeof dict - (size_t)k, ndim == 1 ? "%lld," : i ? ", %lld" : "%lld", (long long)shape[i]);
    }
    k += snprintf(dict + k, sizeof dict - (size_t)k, "), }");
    size_t total = ((size_t)10 + (size_t)k + 1 + 63) & ~(size_t)63;   /* magic..len + dict + '\n', to 64 */
    if (total > cap) return fail(AV_ERR_SIZE, ".npy: the header needs %zu bytes, the buffer holds %zu", total, cap);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    size_t hlen = total - 10;
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)k);
    memset(buf + 10 + k, ' ', total - 10 - (size_t)k - 1);
    buf[total - 1] = '\n';
    *header_len = total;
    return AV_OK;
}
