/* check_npy.c: the .npy reader and writer (src/npy.c): round trips, versions 1 and 2, and a clear
 * AV_ERR_FORMAT (never a crash) for every kind of malformed file. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

// ----------------------------------------------------------------------------------------------------
// helpers

/* 1 if the NUL-terminated `str` occurs in buf[0..len). */
static int contains(const unsigned char *buf, size_t len, const char *str) {
    size_t k = strlen(str);
    for (size_t i = 0; i + k <= len; i++)
        if (memcmp(buf + i, str, k) == 0) return 1;
    return 0;
}

/* A file from a version byte and a header dict (padded to 64 with spaces and '\n'), then `data`. */
static size_t make_npy(unsigned char *buf, size_t cap, int version, const char *dict, const void *data,
                       size_t data_bytes) {
    size_t pre = version == 1 ? 10 : 12, k = strlen(dict);
    size_t total = (pre + k + 1 + 63) / 64 * 64;
    ck_assert_uint_le(total + data_bytes, cap);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)version;
    buf[7] = 0;
    size_t hlen = total - pre;
    for (size_t b = 0; b < pre - 8; b++) buf[8 + b] = (unsigned char)(hlen >> (8 * b));
    memcpy(buf + pre, dict, k);
    memset(buf + pre + k, ' ', total - pre - k - 1);
    buf[total - 1] = '\n';
    if (data_bytes) memcpy(buf + total, data, data_bytes);
    return total + data_bytes;
}

/* Parse a version-1 file made from `dict` with `data_bytes` zero bytes of data; expect `want`. */
static int parse_dict_status(const char *dict, size_t data_bytes) {
    static unsigned char buf[8192];
    static const unsigned char zeros[4096];
    size_t len = make_npy(buf, sizeof buf, 1, dict, zeros, data_bytes);
    av_npy_info info;
    return av_npy_parse(&info, buf, len);
}

#define ASSERT_FORMAT_ERROR(dict, bytes, word)                                                       \
    do {                                                                                             \
        ck_assert_int_eq(parse_dict_status(dict, bytes), AV_ERR_FORMAT);                             \
        ck_assert_msg(strstr(av_npy_error(), word) != NULL, "reason '%s' lacks '%s'", av_npy_error(), \
                      word);                                                                         \
    } while (0)

// ----------------------------------------------------------------------------------------------------
// round trips

START_TEST(test_roundtrip_f32) {
    int64_t shape[2] = {5, 7};
    unsigned char buf[64 * 3 + 35 * 4];
    size_t hl = 0;
    ck_assert_int_eq(av_npy_write_header(buf, sizeof buf, &hl, shape, 2, 4), AV_OK);
    ck_assert_uint_eq(hl % 64, 0);
    ck_assert_int_eq(buf[hl - 1], '\n');
    ck_assert(contains(buf, hl, "'shape': (5, 7)"));
    float x[35];
    for (int i = 0; i < 35; i++) x[i] = (float)(i * 0.37 - 3.1);
    x[7] = -0.0f;
    x[8] = 1e-40f; /* subnormal */
    memcpy(buf + hl, x, sizeof x);
    av_npy_info info;
    ck_assert_int_eq(av_npy_parse(&info, buf, hl + sizeof x), AV_OK);
    ck_assert_int_eq(info.ndim, 2);
    ck_assert_int_eq(info.shape[0], 5);
    ck_assert_int_eq(info.shape[1], 7);
    ck_assert_int_eq(info.dtype_bytes, 4);
    ck_assert_uint_eq(info.data_offset, hl);
    ck_assert_uint_eq(info.count, 35);
    float y[35];
    ck_assert_int_eq(av_npy_decode_f32(y, &info, buf, hl + sizeof x), AV_OK);
    ck_assert_int_eq(memcmp(x, y, sizeof x), 0);
}
END_TEST

START_TEST(test_roundtrip_f64) {
    int64_t shape[3] = {3, 1, 5};
    unsigned char buf[128 + 15 * 8];
    size_t hl = 0;
    ck_assert_int_eq(av_npy_write_header(buf, sizeof buf, &hl, shape, 3, 8), AV_OK);
    ck_assert(contains(buf, hl, "'descr': '<f8'"));
    double x[15];
    for (int i = 0; i < 15; i++) x[i] = 1.0 / (i + 3) - 0.1 * i;
    x[4] = 1e300; /* beyond float: decodes to +Inf */
    memcpy(buf + hl, x, sizeof x);
    av_npy_info info;
    ck_assert_int_eq(av_npy_parse(&info, buf, hl + sizeof x), AV_OK);
    ck_assert_int_eq(info.ndim, 3);
    ck_assert_int_eq(info.dtype_bytes, 8);
    ck_assert_uint_eq(info.count, 15);
    float y[15];
    ck_assert_int_eq(av_npy_decode_f32(y, &info, buf, hl + sizeof x), AV_OK);
    for (int i = 0; i < 15; i++) ck_assert(y[i] == (float)x[i]);
    ck_assert(isinf(y[4]));
}
END_TEST

START_TEST(test_shapes_1d_0d_and_empty) {
    unsigned char buf[256];
    size_t hl;
    int64_t s1[1] = {4};
    ck_assert_int_eq(av_npy_write_header(buf, sizeof buf, &hl, s1, 1, 4), AV_OK);
    ck_assert(contains(buf, hl, "(4,)"));
    memset(buf + hl, 0, 16);
    av_npy_info info;
    ck_assert_int_eq(av_npy_parse(&info, buf, hl + 16), AV_OK);
    ck_assert_int_eq(info.ndim, 1);
    ck_assert_uint_eq(info.count, 4);
    ck_assert_int_eq(av_npy_write_header(buf, sizeof buf, &hl, NULL, 0, 8), AV_OK); /* a scalar */
    ck_assert(contains(buf, hl, "'shape': ()"));
    memset(buf + hl, 0, 8);
    ck_assert_int_eq(av_npy_parse(&info, buf, hl + 8), AV_OK);
    ck_assert_int_eq(info.ndim, 0);
    ck_assert_uint_eq(info.count, 1);
    ck_assert_int_eq(parse_dict_status("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", 0), AV_OK);
}
END_TEST

START_TEST(test_version2_and_key_order) {
    unsigned char buf[512];
    float x[6] = {1, 2, 3, 4, 5, 6};
    size_t len = make_npy(buf, sizeof buf, 2, "{'shape': (2, 3), \"fortran_order\": False, 'descr': '<f4'}",
                          x, sizeof x);
    av_npy_info info;
    ck_assert_int_eq(av_npy_parse(&info, buf, len), AV_OK);
    ck_assert_uint_eq(info.data_offset % 64, 0);
    ck_assert_uint_eq(info.data_offset, len - sizeof x);
    ck_assert_int_eq(info.shape[1], 3);
    float y[6];
    ck_assert_int_eq(av_npy_decode_f32(y, &info, buf, len), AV_OK);
    ck_assert_int_eq(memcmp(x, y, sizeof x), 0);
    /* numpy's own version-1 layout, with Python 2's long suffix and trailing data (accepted) */
    len = make_npy(buf, sizeof buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", x, sizeof x);
    ck_assert_int_eq(av_npy_parse(&info, buf, len), AV_OK);
    ck_assert_int_eq(av_npy_parse(&info, buf, len + 4), AV_OK);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// errors

START_TEST(test_bad_magic_version_truncated_header) {
    unsigned char buf[256];
    size_t len = make_npy(buf, sizeof buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "abcd", 4);
    av_npy_info info;
    for (size_t cut = 0; cut < len; cut++) { /* every truncation is an error, never a crash */
        ck_assert_int_eq(av_npy_parse(&info, buf, cut), AV_ERR_FORMAT);
        ck_assert_int_eq(info.ndim, 0);
    }
    ck_assert_int_eq(av_npy_parse(&info, buf, len), AV_OK);
    ck_assert_int_eq(av_npy_parse(&info, buf, 5), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_npy_error(), "short"));
    ck_assert_int_eq(av_npy_parse(&info, buf, 8), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_npy_error(), "truncated"));
    ck_assert_int_eq(av_npy_parse(&info, buf, 70), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_npy_error(), "truncated"));
    buf[1] = 'X';
    ck_assert_int_eq(av_npy_parse(&info, buf, len), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_npy_error(), "magic"));
    buf[1] = 'N';
    buf[6] = 3;
    ck_assert_int_eq(av_npy_parse(&info, buf, len), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_npy_error(), "version 3.0"));
    buf[6] = 1;
    buf[8] = 0xff; /* header length beyond the buffer */
    buf[9] = 0xff;
    ck_assert_int_eq(av_npy_parse(&info, buf, len), AV_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(av_npy_error(), "truncated"));
    buf[6] = 2; /* version 2 with only 11 bytes */
    ck_assert_int_eq(av_npy_parse(&info, buf, 11), AV_ERR_FORMAT);
}
END_TEST

START_TEST(test_truncated_data) {
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }", 59, "truncated");
    ASSERT_FORMAT_ERROR("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), }", 119, "needs 120 bytes");
    ck_assert_int_eq(parse_dict_status("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), }", 120), AV_OK);
}
END_TEST

START_TEST(test_fortran_and_dtypes) {
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 5), }", 60, "Fortran");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3, 5), }", 60, "fortran_order");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': 0, 'shape': (3, 5), }", 60, "fortran_order");
    const char *bad[] = {"<i4", ">f4", ">f8", "<f2", "|u1", "<c8", "float32", "<f16", "", "|b1"};
    char dict[128];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }", bad[i]);
        ASSERT_FORMAT_ERROR(dict, 64, "dtype");
    }
    ASSERT_FORMAT_ERROR("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }", 64, "descr");
}
END_TEST

START_TEST(test_absurd_shapes) {
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", 0, "absurd");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 2), }", 0, "absurd");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 3), }", 0, "truncated");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }", 0, "negative");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }", 4, "dimensions");
    ck_assert_int_eq(parse_dict_status("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 2), }", 8), AV_OK);
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': [3, 4], }", 48, "tuple");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (3.5, 4), }", 56, "shape");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (3 4), }", 48, "shape");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (n, 4), }", 48, "integers");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (3,, 4), }", 48, "integers");
}
END_TEST

START_TEST(test_junk_in_dict) {
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'foo': 1}", 12, "unexpected key 'foo'");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 12, "twice");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'shape': (3,)}", 12, "missing key 'fortran_order'");
    ASSERT_FORMAT_ERROR("{'fortran_order': False, 'shape': (3,)}", 12, "missing key 'descr'");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False}", 12, "missing key 'shape'");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } junk", 12, "junk");
    ASSERT_FORMAT_ERROR("'descr': '<f4', 'fortran_order': False, 'shape': (3,)", 12, "not a dict");
    ASSERT_FORMAT_ERROR("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", 12, "expected");
    ASSERT_FORMAT_ERROR("{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}", 12, "expected");
    ASSERT_FORMAT_ERROR("{'descr' '<f4', 'fortran_order': False, 'shape': (3,)}", 12, "':'");
    ASSERT_FORMAT_ERROR("{descr: '<f4', 'fortran_order': False, 'shape': (3,)}", 12, "quoted key");
    ASSERT_FORMAT_ERROR("{'descr: '<f4', 'fortran_order': False, 'shape': (3,)}", 12, "");
    ASSERT_FORMAT_ERROR("{'descr': '<f4\\', 'fortran_order': False, 'shape': (3,)}", 12, "descr");
    ASSERT_FORMAT_ERROR("", 12, "not a dict");
}
END_TEST

/* numpy rejects a header holding a NUL byte (Python's literal_eval refuses the source); a descr '<f4\0' must
 * not pass as '<f4' because strcmp stops at the NUL. */
START_TEST(test_nul_in_header) {
#define HDR(text) {text, sizeof text - 1}
    static const struct { const char *text; size_t len; } dicts[] = {
        HDR("{'descr': '<f4\0', 'fortran_order': False, 'shape': (3,), }"),
        HDR("{'descr': '<f8\0\0', 'fortran_order': False, 'shape': (3,), }"),
        HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\0"),
        HDR("{'descr': '<f4', 'fortran_order': False, 'sha\0pe': (3,), }"),
        HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (3,),\0}"),
    };
#undef HDR
    unsigned char buf[256];
    static const unsigned char zeros[64];
    for (size_t i = 0; i < sizeof dicts / sizeof *dicts; i++) {
        /* make_npy takes a C string; lay the header out by hand to keep the NUL */
        size_t k = dicts[i].len, total = (10 + k + 1 + 63) / 64 * 64;
        ck_assert_uint_le(total + 64, sizeof buf);
        memcpy(buf, "\x93NUMPY\x01\x00", 8);
        buf[8] = (unsigned char)(total - 10);
        buf[9] = 0;
        memcpy(buf + 10, dicts[i].text, k);
        memset(buf + 10 + k, ' ', total - 10 - k - 1);
        buf[total - 1] = '\n';
        memcpy(buf + total, zeros, 64);
        av_npy_info info;
        ck_assert_msg(av_npy_parse(&info, buf, total + 64) == AV_ERR_FORMAT, "header %zu with a NUL accepted", i);
        ck_assert_msg(strstr(av_npy_error(), "NUL") != NULL, "reason '%s' lacks 'NUL'", av_npy_error());
        ck_assert_int_eq(info.ndim, 0);
    }
    /* the same header without the NUL parses */
    ck_assert_int_eq(parse_dict_status("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 12), AV_OK);
}
END_TEST

START_TEST(test_null_and_bad_arguments) {
    unsigned char buf[256] = {0};
    av_npy_info info;
    size_t hl;
    float out[4];
    int64_t shape[2] = {2, 2};
    ck_assert_int_eq(av_npy_parse(NULL, buf, 10), AV_ERR_NULL);
    ck_assert_int_eq(av_npy_parse(&info, NULL, 10), AV_ERR_NULL);
    ck_assert_ptr_nonnull(strstr(av_npy_error(), "NULL"));
    ck_assert_int_eq(av_npy_write_header(NULL, 256, &hl, shape, 2, 4), AV_ERR_NULL);
    ck_assert_int_eq(av_npy_write_header(buf, 256, NULL, shape, 2, 4), AV_ERR_NULL);
    ck_assert_int_eq(av_npy_write_header(buf, 256, &hl, NULL, 2, 4), AV_ERR_NULL);
    ck_assert_int_eq(av_npy_write_header(buf, 256, &hl, shape, 9, 4), AV_ERR_SIZE);
    ck_assert_int_eq(av_npy_write_header(buf, 256, &hl, shape, -1, 4), AV_ERR_SIZE);
    ck_assert_int_eq(av_npy_write_header(buf, 127, &hl, shape, 2, 4), AV_ERR_SIZE);
    ck_assert_int_eq(av_npy_write_header(buf, 256, &hl, shape, 2, 2), AV_ERR_FORMAT);
    int64_t neg[2] = {2, -2};
    ck_assert_int_eq(av_npy_write_header(buf, 256, &hl, neg, 2, 4), AV_ERR_SIZE);
    ck_assert_int_eq(av_npy_write_header(buf, 128, &hl, shape, 2, 4), AV_OK);
    ck_assert_uint_eq(hl, 128); /* numpy's own size for this header */
    memset(buf + 128, 0, 16);
    ck_assert_int_eq(av_npy_parse(&info, buf, 144), AV_OK);
    ck_assert_int_eq(av_npy_decode_f32(NULL, &info, buf, 144), AV_ERR_NULL);
    ck_assert_int_eq(av_npy_decode_f32(out, NULL, buf, 144), AV_ERR_NULL);
    ck_assert_int_eq(av_npy_decode_f32(out, &info, NULL, 144), AV_ERR_NULL);
    ck_assert_int_eq(av_npy_decode_f32(out, &info, buf, 143), AV_ERR_FORMAT); /* shorter than parsed */
    ck_assert_int_eq(av_npy_decode_f32(out, &info, buf, 20), AV_ERR_FORMAT);
    av_npy_info bad = info;
    bad.dtype_bytes = 2;
    ck_assert_int_eq(av_npy_decode_f32(out, &bad, buf, 144), AV_ERR_FORMAT);
    bad = info;
    bad.count = SIZE_MAX / 2;
    ck_assert_int_eq(av_npy_decode_f32(out, &bad, buf, 144), AV_ERR_FORMAT);
    ck_assert_int_eq(av_npy_decode_f32(out, &info, buf, 144), AV_OK);
}
END_TEST

Suite *suite_npy(void) {
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_roundtrip_f32);
    tcase_add_test(tc, test_roundtrip_f64);
    tcase_add_test(tc, test_shapes_1d_0d_and_empty);
    tcase_add_test(tc, test_version2_and_key_order);
    tcase_add_test(tc, test_bad_magic_version_truncated_header);
    tcase_add_test(tc, test_truncated_data);
    tcase_add_test(tc, test_fortran_and_dtypes);
    tcase_add_test(tc, test_absurd_shapes);
    tcase_add_test(tc, test_junk_in_dict);
    tcase_add_test(tc, test_nul_in_header);
    tcase_add_test(tc, test_null_and_bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}
