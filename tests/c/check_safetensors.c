/* check_safetensors.c: the .safetensors reader (src/safetensors.c, docs/hf.md): hand-built buffers, valid
 * and broken in every field, truncated at every length, overlapping or gapped data, unknown dtypes, shapes
 * that overflow; and F16/BF16 → float32 for all 65536 bit patterns against references written from the
 * IEEE 754 definitions (sign, biased exponent, mantissa), not from the reader's bit shifts. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

// ----------------------------------------------------------------------------------------------------
// helpers

/* A file: N (the JSON's length) little-endian, the JSON, then data_bytes of data (zeros when data is NULL). */
static size_t mk(unsigned char *buf, size_t cap, const char *json, const void *data, size_t data_bytes) {
    size_t n = strlen(json);
    ck_assert_uint_le(8 + n + data_bytes, cap);
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(buf + 8, json, n);
    if (data) memcpy(buf + 8 + n, data, data_bytes);
    else memset(buf + 8 + n, 0, data_bytes);
    return 8 + n + data_bytes;
}

static unsigned char g_buf[1 << 16];
static unsigned char g_work[1 << 16];

/* Parse buf[0..len) with a workspace of av_st_work bytes; the status (AV_ERR_FORMAT when av_st_work refused). */
static int parse(av_st_file *f, const unsigned char *buf, size_t len) {
    size_t w = av_st_work(buf, len);
    if (!w) {
        ck_assert_msg(av_st_error()[0] != '\0', "a refusal without a sentence");
        return AV_ERR_FORMAT;
    }
    ck_assert_uint_le(w, sizeof g_work);
    return av_st_parse(f, g_work, w, buf, len);
}

/* The file made of json and data_bytes zero bytes is refused with a sentence containing want. */
static void refused(const char *json, size_t data_bytes, const char *want) {
    size_t len = mk(g_buf, sizeof g_buf, json, NULL, data_bytes);
    av_st_file f;
    int st = parse(&f, g_buf, len);
    ck_assert_msg(st == AV_ERR_FORMAT, "accepted (%d): %s", st, json);
    ck_assert_msg(strstr(av_st_error(), want), "for %s: the sentence \"%s\" lacks \"%s\"", json, av_st_error(), want);
    ck_assert_msg(!strchr(av_st_error(), '\n'), "more than one line: %s", av_st_error());
}

static const char VALID[] =
    "{\"__metadata__\":{\"format\":\"pt\",\"a\\\"b\":\"\\u00e9\"},"
    " \"w\" : {\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
    "\"b\":{\"shape\":[2],\"dtype\":\"BF16\",\"data_offsets\":[24,28]},"
    "\"h\":{\"data_offsets\":[28,30],\"dtype\":\"F16\",\"shape\":[]},"
    "\"z\":{\"dtype\":\"F16\",\"shape\":[0,5],\"data_offsets\":[30,30]}}   ";

static size_t make_valid(unsigned char *buf, size_t cap) {
    unsigned char data[30];
    float w[6] = {1, -2, 0.5f, 3e-39f, INFINITY, -0.0f};
    memcpy(data, w, 24); // the test machine is little-endian, as the format
    data[24] = 0x80, data[25] = 0x3f; // BF16 1.0
    data[26] = 0x00, data[27] = 0xc0; // BF16 −2.0
    data[28] = 0x01, data[29] = 0x00; // F16 smallest subnormal 2^−24
    return mk(buf, cap, VALID, data, sizeof data);
}

// ----------------------------------------------------------------------------------------------------
// valid files

START_TEST(test_valid) {
    size_t len = make_valid(g_buf, sizeof g_buf);
    av_st_file f;
    ck_assert_int_eq(parse(&f, g_buf, len), AV_OK);
    ck_assert_int_eq(f.n_tensors, 4);
    ck_assert_int_eq(f.n_meta, 2);
    ck_assert_str_eq(f.meta[0].key, "a\"b");
    ck_assert_str_eq(f.meta[0].value, "\xc3\xa9");
    ck_assert_str_eq(f.meta[1].key, "format");
    ck_assert_uint_eq(f.data_bytes, 30);
    // data order
    ck_assert_str_eq(f.tensors[0].name, "w");
    ck_assert_str_eq(f.tensors[3].name, "z");
    const av_st_tensor *w = av_st_find(&f, "w"), *b = av_st_find(&f, "b"), *h = av_st_find(&f, "h"), *z = av_st_find(&f, "z");
    ck_assert_ptr_nonnull(w); ck_assert_ptr_nonnull(b); ck_assert_ptr_nonnull(h); ck_assert_ptr_nonnull(z);
    ck_assert_ptr_null(av_st_find(&f, "x"));
    ck_assert_ptr_null(av_st_find(&f, "__metadata__"));
    ck_assert_int_eq(w->dtype, AV_ST_F32); ck_assert_int_eq(w->ndim, 2);
    ck_assert_uint_eq(w->shape[0], 2); ck_assert_uint_eq(w->shape[1], 3); ck_assert_uint_eq(w->count, 6);
    ck_assert_ptr_eq(w->data, g_buf + 8 + strlen(VALID));
    float out[6];
    ck_assert_int_eq(av_st_rows_f32(out, w, 1, 1), AV_OK);
    ck_assert(out[0] == 3e-39f && isinf(out[1]) && out[2] == 0 && signbit(out[2]));
    ck_assert_int_eq(av_st_rows_f32(out, w, 0, 2), AV_OK);
    ck_assert(out[0] == 1 && out[1] == -2 && out[2] == 0.5f);
    ck_assert_int_eq(av_st_rows_f32(out, b, 0, 2), AV_OK);
    ck_assert(out[0] == 1 && out[1] == -2);
    ck_assert_int_eq(h->ndim, 0); ck_assert_uint_eq(h->count, 1);
    ck_assert_int_eq(av_st_rows_f32(out, h, 0, 1), AV_OK);
    ck_assert(out[0] == ldexpf(1, -24));
    ck_assert_uint_eq(z->count, 0);
    ck_assert_int_eq(av_st_rows_f32(out, z, 0, 0), AV_OK);
    // rows out of range, NULLs
    ck_assert_int_eq(av_st_rows_f32(out, w, 1, 2), AV_ERR_SIZE);
    ck_assert_int_eq(av_st_rows_f32(out, w, 3, 0), AV_ERR_SIZE);
    ck_assert_int_eq(av_st_rows_f32(out, z, 0, 1), AV_ERR_SIZE);
    ck_assert_int_eq(av_st_rows_f32(out, h, 0, 2), AV_ERR_SIZE);
    ck_assert_int_eq(av_st_rows_f32(NULL, w, 0, 1), AV_ERR_NULL);
    ck_assert_int_eq(av_st_rows_f32(out, NULL, 0, 1), AV_ERR_NULL);
}
END_TEST

START_TEST(test_empty_and_escapes) {
    av_st_file f;
    size_t len = mk(g_buf, sizeof g_buf, "{}", NULL, 0);
    ck_assert_int_eq(parse(&f, g_buf, len), AV_OK);
    ck_assert_int_eq(f.n_tensors, 0);
    ck_assert_ptr_null(av_st_find(&f, "a"));
    // a name with every escape, a surrogate pair and raw UTF-8
    len = mk(g_buf, sizeof g_buf,
             "{\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u4e2d\\ud83d\\ude00\xe4\xb8\xad\":"
             "{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]}}",
             NULL, 2);
    ck_assert_int_eq(parse(&f, g_buf, len), AV_OK);
    ck_assert_str_eq(f.tensors[0].name, "a\"\\/\b\f\n\r\tA\xe4\xb8\xad\xf0\x9f\x98\x80\xe4\xb8\xad");
    ck_assert_ptr_nonnull(av_st_find(&f, "a\"\\/\b\f\n\r\tA\xe4\xb8\xad\xf0\x9f\x98\x80\xe4\xb8\xad"));
}
END_TEST

/* Integer and other buffers (position ids, masks) are sized and kept as AV_ST_OTHER, never converted */
START_TEST(test_other_dtypes_kept) {
    static const char *const names[] = {"BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "I32", "U32", "F64", "I64", "U64"};
    static const int sizes[] = {1, 1, 1, 1, 1, 2, 2, 4, 4, 8, 8, 8};
    for (int i = 0; i < 12; i++) {
        char json[200];
        snprintf(json, sizeof json,
                 "{\"ids\":{\"dtype\":\"%s\",\"shape\":[1,3],\"data_offsets\":[0,%d]},"
                 "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[%d,%d]}}",
                 names[i], 3 * sizes[i], 3 * sizes[i], 3 * sizes[i] + 4);
        av_st_file f;
        size_t len = mk(g_buf, sizeof g_buf, json, NULL, (size_t)(3 * sizes[i] + 4));
        ck_assert_msg(parse(&f, g_buf, len) == AV_OK, "%s refused: %s", names[i], av_st_error());
        const av_st_tensor *t = av_st_find(&f, "ids");
        ck_assert_int_eq(t->dtype, AV_ST_OTHER);
        ck_assert_uint_eq(t->end - t->begin, (uint64_t)(3 * sizes[i]));
        float out[3];
        ck_assert_int_eq(av_st_rows_f32(out, t, 0, 1), AV_ERR_FORMAT);
        ck_assert_int_eq(av_st_find(&f, "w")->dtype, AV_ST_F32);
        /* its size is its dtype's: one byte short is refused */
        snprintf(json, sizeof json, "{\"ids\":{\"dtype\":\"%s\",\"shape\":[1,3],\"data_offsets\":[0,%d]}}", names[i], 3 * sizes[i] - 1);
        refused(json, (size_t)(3 * sizes[i] - 1), "bytes in data_offsets");
    }
}
END_TEST

START_TEST(test_workspace_and_nulls) {
    size_t len = make_valid(g_buf, sizeof g_buf);
    size_t w = av_st_work(g_buf, len);
    ck_assert_uint_gt(w, 0);
    av_st_file f;
    ck_assert_int_eq(av_st_parse(&f, g_work, w - 1, g_buf, len), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_st_parse(&f, g_work + 3, w, g_buf, len), AV_OK); // an unaligned workspace is aligned inside
    ck_assert_int_eq(av_st_parse(NULL, g_work, w, g_buf, len), AV_ERR_NULL);
    ck_assert_int_eq(av_st_parse(&f, NULL, w, g_buf, len), AV_ERR_NULL);
    ck_assert_int_eq(av_st_parse(&f, g_work, w, NULL, len), AV_ERR_NULL);
    ck_assert_uint_eq(av_st_work(NULL, len), 0);
    ck_assert_ptr_null(av_st_find(NULL, "w"));
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// hostile files

START_TEST(test_truncated_everywhere) {
    size_t len = make_valid(g_buf, sizeof g_buf);
    static unsigned char cut[1 << 12];
    for (size_t k = 0; k < len; k++) {
        memcpy(cut, g_buf, k);
        av_st_file f;
        ck_assert_msg(parse(&f, cut, k) == AV_ERR_FORMAT, "accepted at %zu of %zu bytes", k, len);
    }
    // the header shortened (N too) at every length: never accepted, never a read past it
    for (size_t n = 0; n < (size_t)(strrchr(VALID, '}') - VALID); n++) { // past the '}', only spaces go
        char j[sizeof VALID];
        memcpy(j, VALID, n), j[n] = '\0';
        size_t l = mk(g_buf, sizeof g_buf, j, NULL, 30);
        av_st_file f;
        ck_assert_msg(parse(&f, g_buf, l) == AV_ERR_FORMAT, "a header cut at %zu accepted", n);
    }
}
END_TEST

START_TEST(test_header_length) {
    av_st_file f;
    unsigned char b[64] = {0};
    ck_assert_int_eq(parse(&f, b, 7), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_st_error(), "shorter than its 8-byte"));
    // a 4 GB claim: refused by av_st_work itself, before the caller allocates anything
    b[4] = 1; // N = 2^32
    memcpy(b + 8, "{}", 2);
    ck_assert_uint_eq(av_st_work(b, sizeof b), 0);
    ck_assert_ptr_nonnull(strstr(av_st_error(), "4294967296"));
    memset(b, 0, 8);
    b[0] = 0xff, b[1] = 0xff, b[2] = 0xff, b[3] = 0xff, b[4] = 0xff, b[5] = 0xff, b[6] = 0xff, b[7] = 0xff;
    ck_assert_uint_eq(av_st_work(b, sizeof b), 0);
    ck_assert_ptr_nonnull(strstr(av_st_error(), "more than the"));
    memset(b, 0, 8), b[0] = 57; // past the buffer by one
    ck_assert_uint_eq(av_st_work(b, 64), 0);
    ck_assert_ptr_nonnull(strstr(av_st_error(), "truncated"));
    memset(b, 0, 8), b[0] = 1;
    ck_assert_uint_eq(av_st_work(b, 64), 0);
    ck_assert_ptr_nonnull(strstr(av_st_error(), "too short"));
}
END_TEST

START_TEST(test_every_field_wrong) {
    // JSON form
    refused("[]", 0, "does not start with '{'");
    refused(" {}", 0, "does not start with '{'");
    refused("{} x", 0, "bytes after its object");
    refused("{\"a\"}", 0, "':' was expected");
    refused("{\"a\":1}", 0, "a number");
    refused("{\"a\":\"F32\"}", 0, "a string");
    refused("{\"a\":[1]}", 0, "an array");
    refused("{\"a\":true}", 0, "boolean");
    refused("{\"a\":null}", 0, "null");
    refused("{a:{}}", 0, "where a string was expected");
    refused("{\"a\":{},}", 0, "empty entry");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},}", 4, "where a string was expected");
    refused("{\"a\x01\":{}}", 0, "control byte 0x01");
    refused("{\"a\xff\":{}}", 0, "invalid UTF-8");
    refused("{\"a\xc0\x80\":{}}", 0, "invalid UTF-8");          // overlong NUL
    refused("{\"a\xed\xa0\x80\":{}}", 0, "invalid UTF-8");      // an encoded surrogate
    refused("{\"a\\x\":{}}", 0, "unknown escape");
    refused("{\"a\\u12\":{}}", 0, "4 hex digits");
    refused("{\"a\\udc00\":{}}", 0, "lone low surrogate");
    refused("{\"a\\ud800x\":{}}", 0, "not followed by a low one");
    refused("{\"a\\u0000\":{}}", 0, "\\u0000");
    refused("{\"a", 0, "ends inside a string");
    // the entry's fields
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "has no data_offsets");
    refused("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "has no shape");
    refused("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "has no dtype");
    refused("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "dtype twice");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4, "unknown field 'x'");
    refused("{\"a\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "dtype f32");
    refused("{\"a\":{\"dtype\":\"BF16BF16BF16BF16BF16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2, "dtype BF16BF16BF16BF1");
    refused("{\"a\":{\"dtype\":3,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "a number");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "a negative number");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4, "not an integer");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1e0],\"data_offsets\":[0,4]}}", 4, "not an integer");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", 4, "leading zero");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[[1]],\"data_offsets\":[0,4]}}", 4, "an array in its shape");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,],\"data_offsets\":[0,4]}}", 4, "in its shape");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4, "'[' was expected");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, "more than 8 entries");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[18446744073709551616],\"data_offsets\":[0,4]}}", 4, "past 2^64");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, "1 data_offsets");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8, "more than 2 entries");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, "end is before its begin");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 3, "past its 3 bytes");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "needs 8");
    refused("{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "needs 4");
    // __metadata__
    refused("{\"__metadata__\":{\"k\":1}}", 0, "values must be strings");
    refused("{\"__metadata__\":{\"k\":{}}}", 0, "values must be strings");
    refused("{\"__metadata__\":[]}", 0, "'{' was expected (__metadata__)");
    refused("{\"__metadata__\":{},\"__metadata__\":{}}", 0, "__metadata__ twice");
    refused("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}", 0, "key 'k' twice");
}
END_TEST

START_TEST(test_overflow_shapes) {
    // 2^32 · 2^32 = 2^64: the product itself overflows
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}", 4, "product overflows");
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[65536,65536,65536,65536],\"data_offsets\":[0,4]}}", 4, "product overflows");
    // 2^62 elements of 4 bytes: the byte size overflows
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]}}", 4, "byte size overflows");
    // a zero dimension does not hide an overflow in the others
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[0,4294967296,4294967296],\"data_offsets\":[0,0]}}", 0, "product overflows");
    // 32-bit sizes: 2^32 elements (16 GB) claimed, consistent with its offsets, past a small buffer
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[65536,65536],\"data_offsets\":[0,17179869184]}}", 16, "past its 16 bytes");
    // sizes that wrap modulo 2^32 (2^32 + 1 elements vs 4 bytes): refused, not wrapped
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967297],\"data_offsets\":[0,4]}}", 4, "needs 17179869188");
}
END_TEST

START_TEST(test_tiling) {
    const char *T = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[%d,%d]},"
                    "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[%d,%d]}}";
    char j[256];
    snprintf(j, sizeof j, T, 0, 8, 4, 8);
    refused(j, 8, "overlap");
    snprintf(j, sizeof j, T, 0, 8, 0, 4);
    refused(j, 8, "overlap");
    snprintf(j, sizeof j, T, 0, 8, 12, 16);
    refused(j, 16, "gap of bytes 8..12");
    snprintf(j, sizeof j, T, 4, 12, 0, 4);
    av_st_file f;
    size_t len = mk(g_buf, sizeof g_buf, j, NULL, 12);
    ck_assert_int_eq(parse(&f, g_buf, len), AV_OK); // out of order in the header is fine: sorted by offset
    ck_assert_str_eq(f.tensors[0].name, "b");
    refused(j, 13, "1 bytes no tensor covers");
    snprintf(j, sizeof j, T, 4, 12, 4, 8);
    refused(j, 12, "gap of bytes 0..4");
    // a zero-size tensor inside another's range overlaps it; at a boundary it does not
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
            "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}", 8, "overlap");
    len = mk(g_buf, sizeof g_buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
             "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]}}", NULL, 8);
    ck_assert_int_eq(parse(&f, g_buf, len), AV_OK);
    refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
            "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "'a' twice");
    refused("{}", 1, "1 bytes no tensor covers");
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// F16 and BF16, every bit pattern

/* IEEE 754 binary16: sign, 5-bit exponent (bias 15), 10-bit mantissa; exponent 0: m·2^−24; 31: Inf or NaN. */
static double f16_value(unsigned h) {
    unsigned s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, (int)e - 25);
    return s ? -v : v;
}
/* bfloat16: float32's upper half: sign, 8-bit exponent (bias 127), 7-bit mantissa; exponent 0: m·2^−133. */
static double bf16_value(unsigned b) {
    unsigned s = b >> 15, e = (b >> 7) & 255, m = b & 127;
    double v = e == 0 ? ldexp(m, -133) : e == 255 ? (m ? NAN : INFINITY) : ldexp(128 + m, (int)e - 134);
    return s ? -v : v;
}

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

START_TEST(test_f16_all) {
    int nan = 0, sub = 0;
    for (unsigned h = 0; h < 65536; h++) {
        float got = av_f16_to_f32((uint16_t)h);
        double want = f16_value(h);
        if (isnan(want)) {
            // docs/hf.md: a NaN keeps its sign and payload (the mantissa moved to float32's top bits)
            ck_assert_msg(isnan(got), "0x%04x: not NaN", h);
            ck_assert_uint_eq(bits(got), (uint32_t)(h & 0x8000) << 16 | 0x7f800000u | (uint32_t)(h & 1023) << 13);
            nan++;
            continue;
        }
        if (((h >> 10) & 31) == 0 && (h & 1023)) sub++;
        ck_assert_msg((double)got == want && !signbit(got) == !signbit(want), "0x%04x: %.9g, want %.9g", h, got, want);
    }
    ck_assert_int_eq(nan, 2 * 1023);
    ck_assert_int_eq(sub, 2 * 1023);
    ck_assert(av_f16_to_f32(0x3c00) == 1.0f && av_f16_to_f32(0x7bff) == 65504.0f && av_f16_to_f32(0xc000) == -2.0f);
}
END_TEST

START_TEST(test_bf16_all) {
    for (unsigned b = 0; b < 65536; b++) {
        float got = av_bf16_to_f32((uint16_t)b);
        double want = bf16_value(b);
        if (isnan(want)) {
            ck_assert_msg(isnan(got), "0x%04x: not NaN", b);
            ck_assert_uint_eq(bits(got), (uint32_t)b << 16);
            continue;
        }
        ck_assert_msg((double)got == want && !signbit(got) == !signbit(want), "0x%04x: %.9g, want %.9g", b, got, want);
    }
    ck_assert(av_bf16_to_f32(0x3f80) == 1.0f && av_bf16_to_f32(0x0001) == ldexpf(1, -133));
}
END_TEST

/* Rows of an F16 and a BF16 tensor of every bit pattern: the same values as the scalar functions. */
START_TEST(test_rows_all_patterns) {
    static unsigned char buf[8 + 256 + 2 * 131072];
    static float out[65536];
    uint16_t v[65536];
    for (unsigned i = 0; i < 65536; i++) v[i] = (uint16_t)i;
    const char *j = "{\"f\":{\"dtype\":\"F16\",\"shape\":[256,256],\"data_offsets\":[0,131072]},"
                    "\"b\":{\"dtype\":\"BF16\",\"shape\":[256,16,16],\"data_offsets\":[131072,262144]}}";
    size_t n = strlen(j);
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(n >> (8 * i));
    memcpy(buf + 8, j, n);
    memcpy(buf + 8 + n, v, sizeof v);
    memcpy(buf + 8 + n + sizeof v, v, sizeof v);
    static unsigned char work[4096];
    size_t len = 8 + n + 2 * sizeof v, w = av_st_work(buf, len);
    ck_assert_uint_gt(w, 0); ck_assert_uint_le(w, sizeof work);
    av_st_file f;
    ck_assert_int_eq(av_st_parse(&f, work, w, buf, len), AV_OK);
    const av_st_tensor *tf = av_st_find(&f, "f"), *tb = av_st_find(&f, "b");
    ck_assert_int_eq(av_st_rows_f32(out, tf, 0, 256), AV_OK);
    for (unsigned i = 0; i < 65536; i++) ck_assert_uint_eq(bits(out[i]), bits(av_f16_to_f32((uint16_t)i)));
    ck_assert_int_eq(av_st_rows_f32(out, tb, 100, 3), AV_OK);
    for (unsigned i = 0; i < 3 * 256; i++) ck_assert_uint_eq(bits(out[i]), bits(av_bf16_to_f32((uint16_t)(100 * 256 + i))));
}
END_TEST

Suite *suite_safetensors(void) {
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_valid);
    tcase_add_test(tc, test_empty_and_escapes);
    tcase_add_test(tc, test_workspace_and_nulls);
    tcase_add_test(tc, test_other_dtypes_kept);
    tcase_add_test(tc, test_truncated_everywhere);
    tcase_add_test(tc, test_header_length);
    tcase_add_test(tc, test_every_field_wrong);
    tcase_add_test(tc, test_overflow_shapes);
    tcase_add_test(tc, test_tiling);
    tcase_add_test(tc, test_f16_all);
    tcase_add_test(tc, test_bf16_all);
    tcase_add_test(tc, test_rows_all_patterns);
    suite_add_tcase(s, tc);
    return s;
}
