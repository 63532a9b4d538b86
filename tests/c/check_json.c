/* check_json.c: the strict JSON reader (src/json.c, src/json.h, docs/hf.md "JSON"): documents of every kind
 * with their nodes checked field by field, every escape and surrogate pair, numbers against strtod and
 * against exact decimal values, ~70 invalid texts in the spirit of JSONTestSuite's n_ cases (each refused
 * with one sentence naming the right byte), nesting at the limit, every truncation of a mid-sized document,
 * and the accessors at their boundaries (duplicate keys, indexes out of range, string capacities, avj_int's
 * exactness). Every text is parsed from a private heap copy of exactly its length, so the sanitizer build
 * sees any read past it. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

// ----------------------------------------------------------------------------------------------------
// helpers

static avj_node g_nodes[4096];

/* A text held in an exact-length heap copy (freed at the next call): what every parse here reads. */
static const char *held(const char *text, size_t len) {
    static char *copy;
    free(copy);
    copy = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(copy);
    if (len) memcpy(copy, text, len);
    return copy;
}

/* Parse text[0..len) (both passes; they must agree); 0 or −1. */
static int parse_n(avj_doc *d, const char *text, size_t len) {
    const char *t = held(text, len);
    uint32_t n = avj_nodes(t, len);
    ck_assert_uint_le(n, sizeof g_nodes / sizeof g_nodes[0]);
    int r = avj_parse(d, g_nodes, sizeof g_nodes / sizeof g_nodes[0], t, len);
    ck_assert_int_eq(r, n ? 0 : -1);
    if (!r) ck_assert_uint_eq(d->n_nodes, n);
    return r;
}

static int parse(avj_doc *d, const char *text) { return parse_n(d, text, strlen(text)); }

/* The structure's invariants: nodes in document order, containers' children and counts, `next`. */
static void check_tree(const avj_doc *d) {
    for (uint32_t i = 0; i < d->n_nodes; i++) {
        const avj_node *x = &d->node[i];
        ck_assert_uint_le((uint64_t)x->start + x->len, d->len);
        ck_assert_uint_gt(x->next, i);
        ck_assert_uint_le(x->next, d->n_nodes);
        if (x->type == AVJ_ARRAY || x->type == AVJ_OBJECT) {
            uint32_t j = i + 1, k = 0;
            for (; j < x->next; j = d->node[j].next, k++) {
                if (x->type == AVJ_OBJECT && k % 2 == 0) ck_assert_int_eq(d->node[j].type, AVJ_STRING);
                ck_assert_uint_ge(d->node[j].start, x->start);
            }
            ck_assert_uint_eq(j, x->next);
            ck_assert_uint_eq(k, x->type == AVJ_OBJECT ? 2 * x->count : x->count);
            ck_assert_int_eq(d->text[x->start], x->type == AVJ_OBJECT ? '{' : '[');
            ck_assert_int_eq(d->text[x->start + x->len - 1], x->type == AVJ_OBJECT ? '}' : ']');
        } else {
            ck_assert_uint_eq(x->next, i + 1);
            ck_assert_uint_eq(x->count, 0);
        }
    }
    ck_assert_uint_eq(d->node[0].next, d->n_nodes);
}

/* text[0..len) is refused by both passes, with one sentence that starts "at byte <at>:" and holds want. */
static void refused_n(const char *text, size_t len, size_t at, const char *want) {
    avj_doc d;
    const char *t = held(text, len);
    ck_assert_msg(avj_nodes(t, len) == 0, "accepted by avj_nodes: %.*s", (int)len, text);
    const char *why = avj_error();
    char head[40];
    snprintf(head, sizeof head, "at byte %zu: ", at);
    ck_assert_msg(strncmp(why, head, strlen(head)) == 0, "for %.*s: \"%s\" does not start with \"%s\"", (int)len, text,
                  why, head);
    ck_assert_msg(strstr(why, want), "for %.*s: \"%s\" lacks \"%s\"", (int)len, text, why, want);
    ck_assert_msg(!strchr(why, '\n'), "more than one line: %s", why);
    ck_assert_int_eq(avj_parse(&d, g_nodes, sizeof g_nodes / sizeof g_nodes[0], t, len), -1);
    ck_assert_str_eq(avj_error(), why); // the same sentence from both passes
    ck_assert_uint_eq(d.n_nodes, 0);
}

static void refused(const char *text, size_t at, const char *want) { refused_n(text, strlen(text), at, want); }

static double num(const char *text) {
    avj_doc d;
    ck_assert_msg(parse(&d, text) == 0, "refused %s: %s", text, avj_error());
    ck_assert_int_eq(d.node[0].type, AVJ_NUMBER);
    double v;
    ck_assert_int_eq(avj_number(&d, 0, &v), 0);
    return v;
}

/* avj_int of the number text with bounds [lo, hi]: its status, the value in *v. */
static int int_of(const char *text, int64_t lo, int64_t hi, int64_t *v) {
    avj_doc d;
    ck_assert_msg(parse(&d, text) == 0, "refused %s: %s", text, avj_error());
    *v = 12345;
    int r = avj_int(&d, 0, lo, hi, v);
    if (r) ck_assert_int_eq(*v, 12345); // untouched on refusal
    return r;
}

static uint64_t bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

// ----------------------------------------------------------------------------------------------------
// valid documents

static const char DOC[] =
    " {\"model_type\": \"llama\", \"hidden_size\": 4096, \"rope_theta\": 5e5,\n"
    "  \"layers\": [1, -2.5, true, false, null, \"x\", [], {}, [[[0]]]],\n"
    "  \"nested\": {\"a\": {\"b\": [\"\\u00e9\", \"\\ud83d\\ude00\"]}, \"\": 0},\n"
    "  \"tie\": true } \r\n\t";

START_TEST(test_document) {
    avj_doc d;
    ck_assert_int_eq(parse(&d, DOC), 0);
    check_tree(&d);
    ck_assert_uint_eq(d.len, strlen(DOC));
    ck_assert_int_eq(d.node[0].type, AVJ_OBJECT);
    ck_assert_uint_eq(d.node[0].count, 6);
    ck_assert_uint_eq(d.node[0].start, 1);
    ck_assert_uint_eq(d.node[0].start + d.node[0].len, (uint32_t)(strrchr(DOC, '}') - DOC) + 1);
    // every node, in document order: 1 object, then key/value pairs
    static const int types[] = {AVJ_OBJECT, AVJ_STRING, AVJ_STRING, AVJ_STRING, AVJ_NUMBER, AVJ_STRING, AVJ_NUMBER,
                                AVJ_STRING, AVJ_ARRAY, AVJ_NUMBER, AVJ_NUMBER, AVJ_TRUE, AVJ_FALSE, AVJ_NULL,
                                AVJ_STRING, AVJ_ARRAY, AVJ_OBJECT, AVJ_ARRAY, AVJ_ARRAY, AVJ_ARRAY, AVJ_NUMBER,
                                AVJ_STRING, AVJ_OBJECT, AVJ_STRING, AVJ_OBJECT, AVJ_STRING, AVJ_ARRAY, AVJ_STRING,
                                AVJ_STRING, AVJ_STRING, AVJ_NUMBER, AVJ_STRING, AVJ_TRUE};
    ck_assert_uint_eq(d.n_nodes, sizeof types / sizeof types[0]);
    for (uint32_t i = 0; i < d.n_nodes; i++) ck_assert_msg(d.node[i].type == types[i], "node %u", i);

    char s[64];
    int64_t v = avj_get(&d, 0, "model_type");
    ck_assert_int_eq(v, 2);
    ck_assert_int_eq(avj_string(&d, 2, s, sizeof s), 5);
    ck_assert_str_eq(s, "llama");
    ck_assert_int_eq(d.node[2].escaped, 0);
    ck_assert_uint_eq(d.node[2].start, (uint32_t)(strstr(DOC, "llama") - DOC)); // inside the quotes
    ck_assert_uint_eq(d.node[2].len, 5);

    int64_t x;
    ck_assert_int_eq(avj_int(&d, (uint32_t)avj_get(&d, 0, "hidden_size"), 1, 1 << 20, &x), 0);
    ck_assert_int_eq(x, 4096);
    double th;
    ck_assert_int_eq(avj_number(&d, (uint32_t)avj_get(&d, 0, "rope_theta"), &th), 0);
    ck_assert(th == 500000.0);
    ck_assert_int_eq(avj_int(&d, (uint32_t)avj_get(&d, 0, "rope_theta"), 0, INT64_MAX, &x), 0);
    ck_assert_int_eq(x, 500000);

    int64_t L = avj_get(&d, 0, "layers");
    ck_assert_int_eq(d.node[L].count, 9);
    ck_assert_int_eq(avj_number(&d, (uint32_t)avj_at(&d, (uint32_t)L, 1), &th), 0);
    ck_assert(th == -2.5);
    ck_assert_int_eq(d.node[avj_at(&d, (uint32_t)L, 6)].count, 0);
    ck_assert_int_eq(d.node[avj_at(&d, (uint32_t)L, 7)].count, 0);
    int64_t deep = avj_at(&d, (uint32_t)L, 8);
    ck_assert_int_eq(d.node[deep].len, 7);
    deep = avj_at(&d, (uint32_t)avj_at(&d, (uint32_t)avj_at(&d, (uint32_t)deep, 0), 0), 0);
    ck_assert_int_eq(avj_int(&d, (uint32_t)deep, 0, 0, &x), 0);
    ck_assert_int_eq(avj_at(&d, (uint32_t)L, 9), -1);

    int64_t b = avj_get(&d, (uint32_t)avj_get(&d, (uint32_t)avj_get(&d, 0, "nested"), "a"), "b");
    ck_assert_int_eq(avj_string(&d, (uint32_t)avj_at(&d, (uint32_t)b, 0), s, sizeof s), 2);
    ck_assert_str_eq(s, "\xc3\xa9");
    ck_assert_int_eq(avj_string(&d, (uint32_t)avj_at(&d, (uint32_t)b, 1), s, sizeof s), 4);
    ck_assert_str_eq(s, "\xf0\x9f\x98\x80");
    ck_assert_int_eq(avj_get(&d, (uint32_t)avj_get(&d, 0, "nested"), ""), avj_get(&d, 0, "nested") + 8);
    ck_assert_int_eq(avj_get(&d, 0, "tie"), d.n_nodes - 1);
    ck_assert_int_eq(avj_get(&d, 0, "absent"), -1);
    ck_assert_int_eq(avj_get(&d, 0, "Model_type"), -1);
    ck_assert_int_eq(avj_get(&d, 0, "model_typ"), -1);
}
END_TEST

START_TEST(test_small_and_empty) {
    static const struct { const char *text; int type; uint32_t n; } cases[] = {
        {"[]", AVJ_ARRAY, 1}, {"{}", AVJ_OBJECT, 1}, {" [ ] ", AVJ_ARRAY, 1}, {"{ }", AVJ_OBJECT, 1},
        {"[[]]", AVJ_ARRAY, 2}, {"[{}]", AVJ_ARRAY, 2}, {"{\"a\":{}}", AVJ_OBJECT, 3}, {"{\"a\":[]}", AVJ_OBJECT, 3},
        {"0", AVJ_NUMBER, 1}, {"-0", AVJ_NUMBER, 1}, {" 7 ", AVJ_NUMBER, 1}, {"\"\"", AVJ_STRING, 1},
        {"\"x\"", AVJ_STRING, 1}, {"null", AVJ_NULL, 1}, {"true", AVJ_TRUE, 1}, {"false", AVJ_FALSE, 1},
        {"[null,true,false]", AVJ_ARRAY, 4}, {"{\"\":\"\"}", AVJ_OBJECT, 3}, {"\n\r\t [1]\n\r\t ", AVJ_ARRAY, 2},
        {"[1,[2,[3,[4]]],5]", AVJ_ARRAY, 9}, {"{\"a\":1,\"b\":{\"c\":[1,{}]}}", AVJ_OBJECT, 9},
        {"1e308", AVJ_NUMBER, 1}, {"[-1.5E+3,1e-0]", AVJ_ARRAY, 3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        avj_doc d;
        ck_assert_msg(parse(&d, cases[c].text) == 0, "refused %s: %s", cases[c].text, avj_error());
        ck_assert_msg(d.node[0].type == cases[c].type && d.n_nodes == cases[c].n, "%s: type %d, %u nodes",
                      cases[c].text, d.node[0].type, d.n_nodes);
        check_tree(&d);
    }
    avj_doc d;
    ck_assert_int_eq(parse(&d, "\"\""), 0);
    char s[4] = "zz";
    ck_assert_int_eq(avj_string(&d, 0, s, 1), 0);
    ck_assert_str_eq(s, "");
    ck_assert_int_eq(avj_string_len(&d, 0), 0);
    ck_assert_int_eq(avj_string_eq(&d, 0, "", 0), 1);
    ck_assert_int_eq(avj_string_eq(&d, 0, NULL, 0), 1);
    ck_assert_int_eq(avj_string_eq(&d, 0, "a", 1), 0);
}
END_TEST

START_TEST(test_escapes) {
    /* every escape, \u forms in both cases, BMP and astral code points, \u0000, and raw UTF-8 of 2, 3, 4
     * bytes kept as written */
    static const char text[] = "\"\\\"\\\\\\/\\b\\f\\n\\r\\t|\\u0041\\u00e9\\u00E9\\u20AC\\uffff\\ud83d\\ude00\\uDBFF\\uDFFF"
                               "\\u0000|\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"";
    static const char want[] = "\"\\/\b\f\n\r\t|A\xc3\xa9\xc3\xa9\xe2\x82\xac\xef\xbf\xbf\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf"
                               "\0|\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf";
    size_t wn = sizeof want - 1;
    avj_doc d;
    ck_assert_int_eq(parse(&d, text), 0);
    ck_assert_int_eq(d.node[0].escaped, 1);
    ck_assert_uint_eq(d.node[0].len, sizeof text - 3);
    ck_assert_int_eq(avj_string_len(&d, 0), (int64_t)wn);
    char out[128];
    memset(out, 'X', sizeof out);
    ck_assert_int_eq(avj_string(&d, 0, out, sizeof out), (int64_t)wn);
    ck_assert_int_eq(memcmp(out, want, wn + 1), 0); // with its terminating NUL
    ck_assert_int_eq(avj_string_eq(&d, 0, want, wn), 1);
    ck_assert_int_eq(avj_string_eq(&d, 0, want, wn - 1), 0);
    char other[sizeof want];
    memcpy(other, want, sizeof want);
    other[20] ^= 1;
    ck_assert_int_eq(avj_string_eq(&d, 0, other, wn), 0);
    ck_assert_int_eq(avj_string_eq(&d, 0, want, wn + 1), 0); // the NUL past the end is not part of it
    // the capacity boundary: cap must exceed the length (room for the NUL)
    ck_assert_int_eq(avj_string(&d, 0, out, wn), -1);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(avj_string(&d, 0, out, wn + 1), (int64_t)wn);
    ck_assert_int_eq(avj_string(&d, 0, out, 0), -1);
    ck_assert_int_eq(avj_string(&d, 0, NULL, 100), -1);

    // an escaped key is found by its decoded bytes
    ck_assert_int_eq(parse(&d, "{\"a\\u0062\":1,\"\\u00e9t\\u00e9\":2,\"q\\\"\":3}"), 0);
    ck_assert_int_eq(avj_get(&d, 0, "ab"), 2);
    ck_assert_int_eq(avj_get(&d, 0, "\xc3\xa9t\xc3\xa9"), 4);
    ck_assert_int_eq(avj_get(&d, 0, "q\""), 6);
    ck_assert_int_eq(avj_get(&d, 0, "a\\u0062"), -1);
}
END_TEST

START_TEST(test_string_cap) {
    avj_doc d;
    ck_assert_int_eq(parse(&d, "[\"abc\", \"a\\nc\", 5]"), 0);
    char out[8];
    for (uint32_t node = 1; node <= 2; node++) {
        ck_assert_int_eq(avj_string_len(&d, node), 3);
        for (size_t cap = 0; cap <= 3; cap++) ck_assert_int_eq(avj_string(&d, node, out, cap), -1);
        memset(out, 'X', sizeof out);
        ck_assert_int_eq(avj_string(&d, node, out, 4), 3);
        ck_assert_int_eq(out[3], '\0');
        ck_assert_int_eq(out[4], 'X'); // nothing written past the NUL
    }
    ck_assert_str_eq(out, "a\nc");
    // not a string, out of range, no document
    ck_assert_int_eq(avj_string(&d, 0, out, sizeof out), -1);
    ck_assert_int_eq(avj_string(&d, 3, out, sizeof out), -1);
    ck_assert_int_eq(avj_string(&d, 4, out, sizeof out), -1);
    ck_assert_int_eq(avj_string(NULL, 1, out, sizeof out), -1);
    ck_assert_int_eq(avj_string_len(&d, 3), -1);
    ck_assert_int_eq(avj_string_len(&d, 99), -1);
    ck_assert_int_eq(avj_string_eq(&d, 3, "5", 1), 0);
    ck_assert_int_eq(avj_string_eq(&d, 1, NULL, 3), 0);
    ck_assert_int_eq(avj_string_eq(NULL, 1, "abc", 3), 0);
}
END_TEST

START_TEST(test_get_at) {
    avj_doc d;
    ck_assert_int_eq(parse(&d, "{\"a\":1,\"b\":[10,[20,21],{\"k\":[]},30],\"a\":2,\"c\":{\"a\":3}}"), 0);
    check_tree(&d);
    int64_t x, a = avj_get(&d, 0, "a");
    ck_assert_int_eq(avj_int(&d, (uint32_t)a, 0, 9, &x), 0);
    ck_assert_int_eq(x, 1); // duplicate keys: the first
    ck_assert_int_eq(avj_int(&d, (uint32_t)avj_get(&d, (uint32_t)avj_get(&d, 0, "c"), "a"), 0, 9, &x), 0);
    ck_assert_int_eq(x, 3);
    int64_t b = avj_get(&d, 0, "b");
    ck_assert_int_eq(d.node[b].count, 4);
    static const int at_type[] = {AVJ_NUMBER, AVJ_ARRAY, AVJ_OBJECT, AVJ_NUMBER};
    for (uint32_t i = 0; i < 4; i++) ck_assert_int_eq(d.node[avj_at(&d, (uint32_t)b, i)].type, at_type[i]);
    ck_assert_int_eq(avj_int(&d, (uint32_t)avj_at(&d, (uint32_t)b, 3), 0, 99, &x), 0);
    ck_assert_int_eq(x, 30);
    ck_assert_int_eq(avj_at(&d, (uint32_t)b, 4), -1);
    ck_assert_int_eq(avj_at(&d, (uint32_t)b, UINT32_MAX), -1);
    ck_assert_int_eq(avj_at(&d, 0, 0), -1);              // an object is not an array
    ck_assert_int_eq(avj_get(&d, (uint32_t)b, "a"), -1); // nor an array an object
    ck_assert_int_eq(avj_get(&d, 1, "a"), -1);           // a key string
    ck_assert_int_eq(avj_get(&d, 0, NULL), -1);
    ck_assert_int_eq(avj_get(&d, d.n_nodes, "a"), -1);
    ck_assert_int_eq(avj_get(&d, UINT32_MAX, "a"), -1);
    ck_assert_int_eq(avj_at(&d, d.n_nodes, 0), -1);
    ck_assert_int_eq(avj_get(NULL, 0, "a"), -1);
    ck_assert_int_eq(avj_at(NULL, 0, 0), -1);
    // empty containers
    ck_assert_int_eq(parse(&d, "[[],{}]"), 0);
    ck_assert_int_eq(avj_at(&d, 1, 0), -1);
    ck_assert_int_eq(avj_get(&d, 2, ""), -1);
    ck_assert_int_eq(avj_at(&d, 0, 1), 2);
}
END_TEST

START_TEST(test_numbers) {
    double z = num("-0");
    ck_assert(z == 0 && signbit(z));
    z = num("-0.0e5");
    ck_assert(z == 0 && signbit(z));
    ck_assert(!signbit(num("0")));
    ck_assert(num("1e308") == 1e308);
    ck_assert(num("1E-5") == 1e-5);
    ck_assert(num("0.5") == 0.5);
    ck_assert(num("0.1") == 0.1);
    ck_assert(num("-2.5e+2") == -250.0);
    ck_assert(num("1E400") == INFINITY);
    ck_assert(num("-1e309") == -INFINITY);
    ck_assert(num("1e-400") == 0);
    ck_assert(num("4.9e-324") == 4.9e-324);          // the smallest subnormal
    ck_assert(num("2.2250738585072014e-308") == 2.2250738585072014e-308);
    ck_assert(num("1.7976931348623157e308") == 1.7976931348623157e308);
    ck_assert(num("1.7976931348623159e308") == INFINITY); // rounds past the largest double
    ck_assert(num("123456789012345678901234567890") == 123456789012345678901234567890.0);
    ck_assert(num("0.000000000000000000000000000001") == 1e-30);
    ck_assert(num("1e99999999999999999999") == INFINITY);  // an exponent past any integer type
    ck_assert(num("1e-99999999999999999999") == 0);
    ck_assert(num("0e99999999999999999999") == 0);
    ck_assert(num("9007199254740993") == 9007199254740992.0); // the halfway case rounds to even

    /* long digit strings: 2^53 + 1 followed by 2000 zeros and then a 1 sits just above the halfway point
     * between 2^53 and 2^53 + 2, so it rounds up; without the final 1 it ties to even (down). The reader
     * keeps 780 significant digits plus a sticky one; these check that the tail still decides the rounding. */
    static char big[4200];
    int k = snprintf(big, sizeof big, "9007199254740993.");
    memset(big + k, '0', 2000);
    big[k + 2000] = '\0';
    ck_assert(num(big) == 9007199254740992.0);
    big[k + 2000] = '1', big[k + 2001] = '\0';
    ck_assert(num(big) == 9007199254740994.0);
    // 1 followed by 3000 zeros, scaled back by e-3000: exactly 1
    big[0] = '1';
    memset(big + 1, '0', 3000);
    snprintf(big + 3001, 16, "e-3000");
    ck_assert(num(big) == 1.0);
    // 0.000…0001e+3000 with 2999 zeros after the point: 1
    k = snprintf(big, sizeof big, "0.");
    memset(big + k, '0', 2999);
    snprintf(big + k + 2999, 16, "1e3000");
    ck_assert(num(big) == 1.0);

    /* against strtod (the machine's, correctly rounded in the C locale the tests run in) on numbers of
     * every shape: the reader's rewriting must not change a bit */
    srand(35);
    for (int t = 0; t < 3000; t++) {
        char s[80];
        int o = 0, nd = 1 + rand() % 25;
        if (rand() % 2) s[o++] = '-';
        s[o++] = (char)('1' + rand() % 9);
        for (int i = 1; i < nd; i++) s[o++] = (char)('0' + rand() % 10);
        if (rand() % 2) {
            s[o++] = '.';
            for (int i = 0, f = 1 + rand() % 20; i < f; i++) s[o++] = (char)('0' + rand() % 10);
        }
        if (rand() % 2) o += snprintf(s + o, sizeof s - (size_t)o, "e%d", rand() % 700 - 350);
        s[o] = '\0';
        double v = num(s), want = strtod(s, NULL);
        ck_assert_msg(bits(v) == bits(want), "%s: %.17g, strtod %.17g", s, v, want);
    }

    // not a number
    avj_doc d;
    double v = 7;
    ck_assert_int_eq(parse(&d, "[\"1\", null]"), 0);
    ck_assert_int_eq(avj_number(&d, 0, &v), -1);
    ck_assert_int_eq(avj_number(&d, 1, &v), -1);
    ck_assert_int_eq(avj_number(&d, 2, &v), -1);
    ck_assert_int_eq(avj_number(&d, 3, &v), -1);
    ck_assert(v == 7);
    ck_assert_int_eq(parse(&d, "1"), 0);
    ck_assert_int_eq(avj_number(&d, 0, NULL), -1);
    ck_assert_int_eq(avj_number(NULL, 0, &v), -1);
}
END_TEST

START_TEST(test_int) {
    int64_t v;
    ck_assert_int_eq(int_of("1e5", INT64_MIN, INT64_MAX, &v), 0);
    ck_assert_int_eq(v, 100000);
    ck_assert_int_eq(int_of("2.0", INT64_MIN, INT64_MAX, &v), 0);
    ck_assert_int_eq(v, 2);
    ck_assert_int_eq(int_of("2.5", INT64_MIN, INT64_MAX, &v), -1);
    ck_assert_int_eq(int_of("9007199254740993", INT64_MIN, INT64_MAX, &v), 0);
    ck_assert_int_eq(v, 9007199254740993); // exact, not through a double
    ck_assert_int_eq(int_of("1.5e1", 0, 100, &v), 0);
    ck_assert_int_eq(v, 15);
    ck_assert_int_eq(int_of("100e-2", 0, 100, &v), 0);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(int_of("12.30e1", 0, 1000, &v), 0);
    ck_assert_int_eq(v, 123);
    ck_assert_int_eq(int_of("1e-1", INT64_MIN, INT64_MAX, &v), -1);
    ck_assert_int_eq(int_of("1.25e1", INT64_MIN, INT64_MAX, &v), -1);
    ck_assert_int_eq(int_of("0.0000001", INT64_MIN, INT64_MAX, &v), -1);
    ck_assert_int_eq(int_of("-0", -5, 5, &v), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(int_of("0e999999999999", -5, 5, &v), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(int_of("-0.0", 0, 0, &v), 0);
    ck_assert_int_eq(v, 0);
    // int64's ends, exactly
    ck_assert_int_eq(int_of("9223372036854775807", INT64_MIN, INT64_MAX, &v), 0);
    ck_assert_int_eq(v, INT64_MAX);
    ck_assert_int_eq(int_of("9223372036854775808", INT64_MIN, INT64_MAX, &v), -1);
    ck_assert_int_eq(int_of("-9223372036854775808", INT64_MIN, INT64_MAX, &v), 0);
    ck_assert_int_eq(v, INT64_MIN);
    ck_assert_int_eq(int_of("-9223372036854775809", INT64_MIN, INT64_MAX, &v), -1);
    ck_assert_int_eq(int_of("922337203685477580.7e1", INT64_MIN, INT64_MAX, &v), 0);
    ck_assert_int_eq(v, INT64_MAX);
    ck_assert_int_eq(int_of("1e18", INT64_MIN, INT64_MAX, &v), 0);
    ck_assert_int_eq(v, 1000000000000000000);
    ck_assert_int_eq(int_of("1e19", INT64_MIN, INT64_MAX, &v), -1);
    ck_assert_int_eq(int_of("18446744073709551616", INT64_MIN, INT64_MAX, &v), -1); // 2^64
    ck_assert_int_eq(int_of("99999999999999999999999", INT64_MIN, INT64_MAX, &v), -1);
    ck_assert_int_eq(int_of("1e999999999999", INT64_MIN, INT64_MAX, &v), -1);
    // the bounds, inclusive
    ck_assert_int_eq(int_of("7", 7, 7, &v), 0);
    ck_assert_int_eq(int_of("7", 8, 100, &v), -1);
    ck_assert_int_eq(int_of("7", 0, 6, &v), -1);
    ck_assert_int_eq(int_of("-3", -3, -1, &v), 0);
    ck_assert_int_eq(int_of("-3", -2, 5, &v), -1);
    ck_assert_int_eq(int_of("1", 5, 0, &v), -1); // an empty range
    // not a number
    avj_doc d;
    ck_assert_int_eq(parse(&d, "[\"1\", true]"), 0);
    ck_assert_int_eq(avj_int(&d, 1, 0, 9, &v), -1);
    ck_assert_int_eq(avj_int(&d, 2, 0, 9, &v), -1);
    ck_assert_int_eq(avj_int(&d, 0, 0, 9, &v), -1);
    ck_assert_int_eq(avj_int(&d, 3, 0, 9, &v), -1);
    ck_assert_int_eq(parse(&d, "1"), 0);
    ck_assert_int_eq(avj_int(&d, 0, 0, 9, NULL), -1);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// refusals

START_TEST(test_refusals) {
    static const struct { const char *text; size_t at; const char *want; } cases[] = {
        // structure
        {"", 0, "empty"}, {"   ", 3, "ends where a value"}, {"[1,]", 3, "trailing comma"},
        {"{\"a\":1,}", 7, "trailing comma"}, {"[,1]", 1, "where a value"}, {"[1,,2]", 3, "where a value"},
        {"[1 2]", 3, "where ',' or ']'"}, {"{\"a\" 1}", 5, "':'"}, {"{\"a\":}", 5, "where a value"},
        {"{\"a\"}", 4, "':'"}, {"{\"a\":1 \"b\":2}", 7, "where ',' or '}'"}, {"{1:2}", 1, "key"},
        {"{a:1}", 1, "key"}, {"{'a':1}", 1, "single-quoted key"}, {"['a']", 1, "single-quoted"},
        {"[1]]", 3, "after the top-level value"}, {"[1] [2]", 4, "after the top-level value"},
        {"1 2", 2, "after the top-level value"}, {"{}{}", 2, "after the top-level value"},
        {"[1}", 2, "where ',' or ']'"}, {"{\"a\":1]", 6, "where ',' or '}'"}, {"]", 0, "where a value"},
        {"[", 1, "ends where a value"}, {"[1", 2, "ends inside an array"}, {"{\"a\":1", 6, "ends inside an object"},
        {"{", 1, "ends where an object's key"}, {"{\"a\"", 4, "ends where an object's ':'"},
        {"[1,", 3, "ends where a value"}, {"/* c */ 1", 0, "comment"}, {"[1] // c", 4, "after the top-level"},
        {"[1,/**/2]", 3, "comment"}, {"[\"a\":1]", 4, "where ',' or ']'"}, {"{\"a\":1:2}", 6, "where ',' or '}'"},
        {"{\"a\",\"b\"}", 4, "':'"},
        // words
        {"tru", 0, "not true, false or null"}, {"truee", 4, "after the top-level"}, {"True", 0, "starts no JSON value"},
        {"nul", 0, "not true"}, {"NaN", 0, "starts no JSON value"}, {"Infinity", 0, "starts no JSON value"},
        {"[-Infinity]", 2, "'-' is not followed by a digit"}, {"undefined", 0, "starts no JSON value"},
        {"[fals]", 1, "not true"},
        // numbers
        {"01", 0, "leading zero"}, {"-01", 1, "leading zero"}, {"[00]", 1, "leading zero"}, {"1.", 1, "'.' is not"},
        {"1.e5", 1, "'.' is not"}, {".5", 0, "before its '.'"}, {"+1", 0, "'+' sign"}, {"-", 1, "'-' is not"},
        {"- 1", 1, "'-' is not"}, {"1e", 2, "exponent has no digits"}, {"1e+", 3, "exponent has no digits"},
        {"1E-", 3, "exponent has no digits"}, {"0x10", 1, "after the top-level"}, {"1.5.5", 3, "after the top-level"},
        {"[1e5e5]", 4, "where ',' or ']'"}, {"1,000", 1, "after the top-level"}, {"--1", 1, "'-' is not"},
        {"[.1]", 1, "before its '.'"}, {"2.", 1, "'.' is not"},
        // strings
        {"\"abc", 0, "not terminated"}, {"[\"abc]", 1, "not terminated"}, {"\"\\", 0, "not terminated"},
        {"\"\\\"", 0, "not terminated"}, {"\"a\tb\"", 2, "raw tab"}, {"\"a\nb\"", 2, "raw newline"},
        {"\"a\rb\"", 2, "raw carriage return"}, {"\"\x01\"", 1, "control byte 0x01"}, {"\"\x1f\"", 1, "0x1f"},
        {"\"\\x41\"", 1, "unknown escape"}, {"\"\\a\"", 1, "unknown escape"}, {"\"\\U0041\"", 1, "unknown escape"},
        {"\"\\'\"", 1, "unknown escape"}, {"\"\\u12\"", 1, "four hex digits"}, {"\"\\u12G4\"", 1, "four hex digits"},
        {"\"\\u", 1, "four hex digits"},
        // surrogates
        {"\"\\ud800\"", 1, "high surrogate"}, {"\"\\ud800x\"", 1, "high surrogate"}, {"\"\\udc00\"", 1, "lone low"},
        {"\"\\ud800\\ud800\"", 1, "high surrogate"}, {"\"\\udc00\\ud800\"", 1, "lone low"},
        {"\"a\\uDFFF\"", 2, "lone low"}, {"\"\\ud83d\\u0041\"", 1, "high surrogate"},
        {"\"\\ud83d\\n\"", 1, "high surrogate"}, {"\"\\ud83d\\ude0\"", 1, "high surrogate"},
        // UTF-8 in strings
        {"\"\xc0\x80\"", 1, "overlong"}, {"\"\xc1\xbf\"", 1, "overlong"}, {"\"\xe0\x80\x80\"", 1, "overlong"},
        {"\"\xe0\x9f\xbf\"", 1, "overlong"}, {"\"\xf0\x80\x80\x80\"", 1, "overlong"},
        {"\"\xf0\x8f\xbf\xbf\"", 1, "overlong"}, {"\"\xed\xa0\x80\"", 1, "surrogate"},
        {"\"\xed\xbf\xbf\"", 1, "surrogate"}, {"\"\xf4\x90\x80\x80\"", 1, "past U+10FFFF"},
        {"\"\xf5\x80\x80\x80\"", 1, "starts no UTF-8"}, {"\"\xff\"", 1, "starts no UTF-8"},
        {"\"\x80\"", 1, "starts no UTF-8"}, {"\"\xbf\"", 1, "starts no UTF-8"}, {"\"\xc3\"", 2, "cut short"},
        {"\"\xe2\x82\"", 3, "cut short"}, {"\"\xe2\x28\xa1\"", 2, "cut short"}, {"\"\xc3\xa9\xc3", 3, "ends inside a UTF-8"},
        // invalid bytes outside strings are invalid JSON
        {"\xc3\xa9", 0, "0xc3 starts no JSON value"}, {"[1,\xe2\x80\x8b 2]", 3, "0xe2"}, {"[1]\x0c", 3, "after the top-level"},
        {"\x0b[]", 0, "0x0b starts no"}, {"\xa0[]", 0, "0xa0"},
        // byte-order marks
        {"\xef\xbb\xbf{}", 0, "starts with a byte-order mark"}, {"\xef\xbb\xbf", 0, "byte-order mark"},
        {"\xfe\xff\x00[", 0, "UTF-16 byte-order mark"}, {"\xff\xfe[\x00", 0, "UTF-16 byte-order mark"},
        {"\xef\xbb", 0, "0xef starts no JSON value"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) refused(cases[c].text, cases[c].at, cases[c].want);
    // NUL bytes: raw in a string, and as a value
    refused_n("\"a\0b\"", 5, 2, "control byte 0x00");
    refused_n("[1,\0]", 5, 3, "0x00 starts no JSON value");
    refused_n("[1]\0", 4, 3, "after the top-level");
    // the sentence never quotes the input: a long refused text leaves no trace of itself in it
    char longtext[600];
    memset(longtext, 'Q', sizeof longtext - 1);
    longtext[0] = '[', longtext[sizeof longtext - 1] = '\0';
    refused(longtext, 1, "'Q' starts no JSON value");
    ck_assert_ptr_null(strstr(avj_error(), "QQ"));
    // NULL and absurd arguments
    ck_assert_uint_eq(avj_nodes(NULL, 0), 0);
    ck_assert_ptr_nonnull(strstr(avj_error(), "empty"));
    ck_assert_uint_eq(avj_nodes(NULL, 5), 0);
    ck_assert_ptr_nonnull(strstr(avj_error(), "NULL"));
    ck_assert_uint_eq(avj_nodes("[]", (size_t)UINT32_MAX + 1), 0); // refused on its length alone, never read
    ck_assert_ptr_nonnull(strstr(avj_error(), "4 GiB"));
}
END_TEST

/* Nesting: 64 levels of arrays or objects (or both, alternating) parse; 65 are refused at the 65th
 * opening bracket; nothing in between depends on the C stack. */
START_TEST(test_depth) {
    static char text[AVJ_MAX_DEPTH * 8 + 16];
    for (int kind = 0; kind < 3; kind++) {
        for (int depth = AVJ_MAX_DEPTH - 1; depth <= AVJ_MAX_DEPTH + 1; depth++) {
            size_t o = 0, at65 = 0;
            for (int i = 0; i < depth; i++) {
                int obj = kind == 1 || (kind == 2 && i % 2);
                if (i == AVJ_MAX_DEPTH) at65 = o;
                if (obj) memcpy(text + o, "{\"k\":", 5), o += 5;
                else text[o++] = '[';
            }
            text[o++] = '1';
            for (int i = depth - 1; i >= 0; i--) text[o++] = kind == 1 || (kind == 2 && i % 2) ? '}' : ']';
            avj_doc d;
            if (depth <= AVJ_MAX_DEPTH) {
                ck_assert_int_eq(parse_n(&d, text, o), 0);
                check_tree(&d);
            } else {
                refused_n(text, o, at65, "nests deeper than 64");
            }
        }
    }
    // JSONTestSuite's n_structure_100000_opening_arrays, and the same closed: refused at the 65th
    static char deep[100001];
    memset(deep, '[', 100000);
    refused_n(deep, 100000, 64, "nests deeper");
    // many siblings at depth 64 are fine: depth is nesting, not count
    size_t o = 0;
    for (int i = 0; i < AVJ_MAX_DEPTH; i++) text[o++] = '[';
    memcpy(text + o, "1,2,[]", 6), o += 6;
    refused_n(text, o, o - 2, "nests deeper"); // the [] inside would be the 65th
}
END_TEST

/* A mid-sized document cut at every length: each prefix is refused with a sentence, or (only the prefixes
 * that end inside the trailing whitespace, and the number-only cases below) parses; a copy of exactly
 * that length is parsed, so a read past it fails under the sanitizers. */
START_TEST(test_truncations) {
    size_t len = strlen(DOC), close = (size_t)(strrchr(DOC, '}') - DOC) + 1;
    for (size_t k = 0; k < len; k++) {
        avj_doc d;
        int r = parse_n(&d, DOC, k);
        if (k < close) {
            ck_assert_msg(r == -1, "a prefix of %zu bytes accepted", k);
            ck_assert_msg(strncmp(avj_error(), "at byte ", 8) == 0, "%s", avj_error());
        } else {
            ck_assert_int_eq(r, 0);
            ck_assert_uint_eq(d.n_nodes, 33);
        }
    }
    // prefixes of a lone number are valid shorter numbers, or refused
    static const char n[] = "-12.5e+7";
    static const int ok[] = {0, 0, 1, 1, 0, 1, 0, 0, 1}; // "", "-", "-1", "-12", "-12.", "-12.5", "-12.5e", "-12.5e+", all
    for (size_t k = 0; k <= strlen(n); k++) {
        avj_doc d;
        ck_assert_msg(parse_n(&d, n, k) == (ok[k] ? 0 : -1), "%zu bytes of %s", k, n);
    }
}
END_TEST

START_TEST(test_parse_cap) {
    avj_doc d;
    const char *t = held(DOC, strlen(DOC));
    uint32_t n = avj_nodes(t, strlen(DOC));
    ck_assert_uint_eq(n, 33);
    static avj_node nodes[40];
    for (uint32_t cap = 0; cap < n; cap++) {
        memset(nodes, 0xab, sizeof nodes);
        ck_assert_int_eq(avj_parse(&d, nodes, cap, t, strlen(DOC)), -1);
        ck_assert_ptr_nonnull(strstr(avj_error(), "nodes given"));
        ck_assert_uint_eq(d.n_nodes, 0);
        ck_assert_int_eq(((unsigned char *)&nodes[cap])[0], 0xab); // nothing written past cap
    }
    ck_assert_int_eq(avj_parse(&d, nodes, n, t, strlen(DOC)), 0);
    ck_assert_uint_eq(d.n_nodes, n);
    ck_assert_ptr_eq(d.node, nodes);
    ck_assert_ptr_eq(d.text, t);
    check_tree(&d);
    ck_assert_int_eq(avj_parse(NULL, nodes, n, t, strlen(DOC)), -1);
    ck_assert_ptr_nonnull(strstr(avj_error(), "NULL"));
    ck_assert_int_eq(avj_parse(&d, NULL, n, t, strlen(DOC)), -1);
    ck_assert_ptr_nonnull(strstr(avj_error(), "NULL"));
    ck_assert_int_eq(avj_parse(&d, nodes, n, NULL, 3), -1);
    ck_assert_int_eq(avj_parse(&d, nodes, n, "[]", (size_t)UINT32_MAX + 1), -1);
    ck_assert_ptr_nonnull(strstr(avj_error(), "4 GiB"));
}
END_TEST

Suite *suite_json(void) {
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_document);
    tcase_add_test(tc, test_small_and_empty);
    tcase_add_test(tc, test_escapes);
    tcase_add_test(tc, test_string_cap);
    tcase_add_test(tc, test_get_at);
    tcase_add_test(tc, test_numbers);
    tcase_add_test(tc, test_int);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_depth);
    tcase_add_test(tc, test_truncations);
    tcase_add_test(tc, test_parse_cap);
    suite_add_tcase(s, tc);
    return s;
}
