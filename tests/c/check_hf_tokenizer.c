/* check_hf_tokenizer.c: tokenizer.json (src/hf_tokenizer.c) on small hand-made files of each kind.
 *
 * Pre-tokenization is seen through ignore_merges: a pre-token that is in the vocabulary whole is one token,
 * any other falls apart into its bytes. So a vocabulary holding exactly the expected pre-tokens gives one id a
 * pre-token when the boundaries are right, and bytes (ids below 256) when one is not. The expected splits are
 * the regexes' own (checked by hand against Python's `regex` module and Node's RegExp).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"

// ----------------------------------------------------------------------------------------------------
// building files

static char J[1 << 16];

/* GPT-2's byte-to-character map, for writing byte-level pieces. */
static unsigned byte_char(unsigned b) {
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE) return b;
    return 0x100 + (b <= 0x20 ? b : b <= 0xA0 ? b - 0x7F + 33 : 67);
}
/* Append s as a JSON string (s's bytes mapped to byte-level characters when bl). */
static void put_str(char **w, const char *s, size_t n, int bl) {
    *(*w)++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned c = bl ? byte_char((unsigned char)s[i]) : (unsigned char)s[i];
        if (c == '"' || c == '\\') *w += sprintf(*w, "\\%c", c);
        else if (c < 0x20) *w += sprintf(*w, "\\u%04x", c);
        else if (c < 0x80 || !bl) *(*w)++ = (char)c;
        else *w += sprintf(*w, "\\u%04x", c);
    }
    *(*w)++ = '"';
}

/* A byte-level file: ids 0..255 the bytes, then `pieces` (NUL-separated raw bytes, "" ends) from 256 on,
 * merges (raw "a b" pairs, as pairs of NUL-separated pieces), the pre-tokenizer and normalizer JSON, and
 * extra top-level fields. */
static const char *bytelevel(const char *const *pieces, const char *const *merges, const char *pre, const char *norm,
                             const char *extra, int ignore_merges) {
    char *w = J;
    w += sprintf(w, "{\"version\":\"1.0\",%s\"normalizer\":%s,\"pre_tokenizer\":%s,\"decoder\":{\"type\":\"ByteLevel\"},"
                    "\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":null,\"continuing_subword_prefix\":\"\","
                    "\"end_of_word_suffix\":\"\",\"fuse_unk\":false,\"byte_fallback\":false,\"ignore_merges\":%s,\"vocab\":{",
                 extra ? extra : "", norm ? norm : "null", pre, ignore_merges ? "true" : "false");
    for (int b = 0; b < 256; b++) {
        char c = (char)b;
        put_str(&w, &c, 1, 1);
        w += sprintf(w, ":%d,", b);
    }
    int id = 256;
    for (int i = 0; pieces && pieces[i]; i++) {
        put_str(&w, pieces[i], strlen(pieces[i]), 1);
        w += sprintf(w, ":%d,", id++);
    }
    w[-1] = '}';
    w += sprintf(w, ",\"merges\":[");
    for (int i = 0; merges && merges[i]; i += 2) {
        *w++ = '[';
        put_str(&w, merges[i], strlen(merges[i]), 1);
        *w++ = ',';
        put_str(&w, merges[i + 1], strlen(merges[i + 1]), 1);
        w += sprintf(w, "],");
    }
    if (w[-1] == ',') w--;
    sprintf(w, "]}}");
    return J;
}

typedef struct tk { void *work; const av_hf_tokenizer *t; } tk;
static int open_tk(tk *k, const char *json) {
    size_t len = strlen(json), wb = av_hf_tokenizer_work(json, len);
    k->work = NULL, k->t = NULL;
    if (!wb) return AV_ERR_FORMAT;
    k->work = malloc(wb);
    ck_assert_ptr_nonnull(k->work);
    return av_hf_tokenizer_parse(&k->t, k->work, wb, json, len);
}
static tk must_open(const char *json) {
    tk k;
    int st = open_tk(&k, json);
    ck_assert_msg(st == AV_OK, "parse: %d: %s", st, av_model_error());
    return k;
}
static int ids_buf[4096];
/* Encode text (n bytes); the ids in ids_buf, their count returned. */
static int enc(const tk *k, const char *text, size_t n, int add_special, int parse_special) {
    size_t wb = av_hf_encode_work(k->t, n), cap = av_hf_encode_cap(k->t, n);
    ck_assert(wb > 0 && cap > 0 && cap < 4096);
    void *w = malloc(wb);
    int got = -1;
    int st = av_hf_encode(ids_buf, &got, (int)cap, k->t, text, n, add_special, parse_special, w, wb);
    free(w);
    ck_assert_int_eq(st, AV_OK);
    return got;
}
/* The ids as text "1 2 3" for comparisons. */
static const char *ids_text(int n) {
    static char out[8192];
    char *w = out;
    *w = 0;
    for (int i = 0; i < n; i++) w += sprintf(w, i ? " %d" : "%d", ids_buf[i]);
    return out;
}
#define ENC_EQ(k, text, want) ck_assert_str_eq(ids_text(enc(&(k), text, sizeof(text) - 1, 1, 0)), want)

// ----------------------------------------------------------------------------------------------------
// the regexes

static const char GPT2_PRE[] = "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true}";
#define SPLIT_PRE(rx) "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"" rx "\"},"\
    "\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,"\
    "\"use_regex\":false}]}"
#define LLAMA3_RX "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"
#define QWEN2_RX "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"

/* The pre-tokens every regex test may see, ids 256 on (in this order). */
static const char *const PRE_PIECES[] = { /* (one-byte pre-tokens are the bytes' own ids) */
    " hello", "hello", "  ", "\n\n\n", "don", "'t", "DON", "'T", "123456", "123", "456", "\xC2\xA0", "\xC2\xA0" "b",
    "'s", "up", "\xE4\xBD\xA0\xE5\xA5\xBD", "\xF0\x9F\x98\x80", "'\xC5\xBF", "\xC5\xBF", " \n\n", " y", " \n", "!!",
    " !!\n", "\thello", "'S", "UP", NULL};
static int pid(const char *s) {
    if (strlen(s) == 1) return (unsigned char)s[0];
    for (int i = 0; PRE_PIECES[i]; i++)
        if (strcmp(PRE_PIECES[i], s) == 0) return 256 + i;
    return -1;
}
/* The expected ids of a list of pre-tokens, as ids_text gives them. */
static const char *want(const char *const *toks) {
    static char out[1024];
    char *w = out;
    *w = 0;
    for (int i = 0; toks[i]; i++) w += sprintf(w, i ? " %d" : "%d", pid(toks[i]));
    return out;
}
#define SPLITS(k, text, ...) ck_assert_str_eq(ids_text(enc(&(k), text, sizeof(text) - 1, 1, 0)), want((const char *const[]){__VA_ARGS__, NULL}))

START_TEST(test_gpt2_regex) {
    tk k = must_open(bytelevel(PRE_PIECES, NULL, GPT2_PRE, NULL, NULL, 1));
    SPLITS(k, "  hello", " ", " hello");      /* \s+(?!\S) leaves the space before the word to it */
    SPLITS(k, "hello  ", "hello", "  ");      /* at the end, the whole run */
    SPLITS(k, "\n\n\n", "\n\n\n");
    SPLITS(k, "don't", "don", "'t");
    SPLITS(k, "DON'T", "DON", "'", "T");      /* GPT-2's contractions are lower case only */
    SPLITS(k, "123456", "123456");
    SPLITS(k, "a\xC2\xA0" "b", "a", "\xC2\xA0", "b"); /* U+00A0 is \s, and not the optional space */
    SPLITS(k, "'sup", "'s", "up");
    SPLITS(k, "\xE4\xBD\xA0\xE5\xA5\xBD\xF0\x9F\x98\x80", "\xE4\xBD\xA0\xE5\xA5\xBD", "\xF0\x9F\x98\x80");
    SPLITS(k, "\thello", "\t", "hello");
    free(k.work);
}
END_TEST

START_TEST(test_llama3_regex) {
    tk k = must_open(bytelevel(PRE_PIECES, NULL, SPLIT_PRE(LLAMA3_RX), NULL, NULL, 1));
    SPLITS(k, "  hello", " ", " hello");
    SPLITS(k, "hello  ", "hello", "  ");
    SPLITS(k, "\n\n\n", "\n\n\n");
    SPLITS(k, "don't", "don", "'t");
    SPLITS(k, "DON'T", "DON", "'T");          /* (?i:...) */
    SPLITS(k, "123456", "123", "456");        /* \p{N}{1,3} */
    SPLITS(k, "a\xC2\xA0" "b", "a", "\xC2\xA0" "b"); /* [^\r\n\p{L}\p{N}]?\p{L}+ takes U+00A0 */
    SPLITS(k, "'sup", "'s", "up");
    SPLITS(k, "'\xC5\xBF", "'\xC5\xBF");      /* U+017F folds to s */
    SPLITS(k, "'\xC5\xBFup", "'\xC5\xBF", "up"); /* (as a contraction, not [^\r\n\p{L}\p{N}]?\p{L}+) */
    SPLITS(k, "'SUP", "'S", "UP");
    SPLITS(k, "x \n\n y", "x", " \n\n", " y"); /* \s*[\r\n]+ ends at the run's last line break */
    SPLITS(k, "x !!\n", "x", " !!\n");        /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    SPLITS(k, "\thello", "\thello");
    SPLITS(k, "\xE4\xBD\xA0\xE5\xA5\xBD\xF0\x9F\x98\x80", "\xE4\xBD\xA0\xE5\xA5\xBD", "\xF0\x9F\x98\x80");
    free(k.work);
    k = must_open(bytelevel(PRE_PIECES, NULL, SPLIT_PRE(QWEN2_RX), NULL, NULL, 1));
    SPLITS(k, "123456", "1", "2", "3", "4", "5", "6"); /* Qwen2: \p{N} alone */
    SPLITS(k, "DON'T", "DON", "'T");
    free(k.work);
}
END_TEST

START_TEST(test_digits_and_prefix) {
    /* SmolLM: Digits (individual) then ByteLevel with its regex */
    tk k = must_open(bytelevel(PRE_PIECES, NULL,
                               "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\",\"individual_digits\":true},"
                               "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}]}", NULL, NULL, 1));
    SPLITS(k, "123", "1", "2", "3");
    free(k.work);
    /* add_prefix_space: " " before a text that does not start with one */
    k = must_open(bytelevel(PRE_PIECES, NULL, "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"use_regex\":true}", NULL, NULL, 1));
    SPLITS(k, "hello", " hello");
    ck_assert_int_eq(enc(&k, "", 0, 1, 0), 0);
    free(k.work);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// BPE

START_TEST(test_merge_order) {
    static const char *const pieces[] = {"ab", "bc", "aa", NULL}; /* 256, 257, 258 */
    tk k = must_open(bytelevel(pieces, (const char *const[]){"a", "b", "b", "c", NULL}, GPT2_PRE, NULL, NULL, 0));
    ENC_EQ(k, "abc", "256 99");                     /* a b first: ab c */
    free(k.work);
    k = must_open(bytelevel(pieces, (const char *const[]){"b", "c", "a", "b", NULL}, GPT2_PRE, NULL, NULL, 0));
    ENC_EQ(k, "abc", "97 257");                     /* b c first: a bc */
    free(k.work);
    k = must_open(bytelevel(pieces, (const char *const[]){"a", "a", NULL}, GPT2_PRE, NULL, NULL, 0));
    ENC_EQ(k, "aaa", "258 97");                     /* leftmost among equal ranks */
    ENC_EQ(k, "aaaa", "258 258");
    free(k.work);
    /* ignore_merges: a pre-token in the vocabulary whole is one token even if no merge makes it */
    k = must_open(bytelevel((const char *const[]){"abc", NULL}, NULL, GPT2_PRE, NULL, NULL, 1));
    ENC_EQ(k, "abc", "256");
    free(k.work);
    k = must_open(bytelevel((const char *const[]){"abc", NULL}, NULL, GPT2_PRE, NULL, NULL, 0));
    ENC_EQ(k, "abc", "97 98 99");
    free(k.work);
}
END_TEST

START_TEST(test_long_pretoken) {
    /* a 20 000-space run is one pre-token: the queue keeps it n log n (a quadratic loop would take seconds) */
    static const char *const pieces[] = {"  ", "    ", NULL}; /* 256, 257 */
    tk k = must_open(bytelevel(pieces, (const char *const[]){" ", " ", "  ", "  ", NULL}, GPT2_PRE, NULL, NULL, 0));
    enum { N = 20000 };
    char *text = malloc(N);
    memset(text, ' ', N);
    size_t wb = av_hf_encode_work(k.t, N), cap = av_hf_encode_cap(k.t, N);
    int *ids = malloc(sizeof(int) * cap), n = 0;
    void *w = malloc(wb);
    ck_assert_int_eq(av_hf_encode(ids, &n, (int)cap, k.t, text, N, 1, 0, w, wb), AV_OK);
    ck_assert_int_eq(n, N / 4);
    for (int i = 0; i < n; i++) ck_assert_int_eq(ids[i], 257);
    free(text), free(ids), free(w), free(k.work);
}
END_TEST

START_TEST(test_invalid_utf8) {
    tk k = must_open(bytelevel(NULL, NULL, GPT2_PRE, NULL, NULL, 0));
    /* each maximal invalid subsequence is one U+FFFD (EF BF BD): a lone continuation, a truncated 3-byte
     * sequence, an overlong C0 80 (two), a surrogate ED A0 80 (three) */
    ENC_EQ(k, "\x80", "239 191 189");
    ENC_EQ(k, "\xE2\x82", "239 191 189");
    ENC_EQ(k, "\xE2\x82" "a", "239 191 189 97");
    ENC_EQ(k, "\xC0\x80", "239 191 189 239 191 189");
    ENC_EQ(k, "\xED\xA0\x80", "239 191 189 239 191 189 239 191 189");
    free(k.work);
}
END_TEST

START_TEST(test_nfc) {
    static const char *const pieces[] = {"\xC3\xA9", "e\xCC\x81", NULL}; /* é precomposed 256, decomposed 257 */
    tk k = must_open(bytelevel(pieces, NULL, SPLIT_PRE(QWEN2_RX), "{\"type\":\"NFC\"}", NULL, 1));
    ENC_EQ(k, "e\xCC\x81", "256");
    ENC_EQ(k, "\xC3\xA9", "256");
    /* Hangul: U+1100 U+1161 U+11A8 composes to U+AC01 각 (EA B0 81) */
    ENC_EQ(k, "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", "234 176 129");
    /* marks reordered by class: a + U+0301 (230) + U+0323 (220) → ạ́: U+1EA1 U+0301 */
    ENC_EQ(k, "a\xCC\x81\xCC\xA3", "225 186 161 204 129");
    free(k.work);
    k = must_open(bytelevel(pieces, NULL, SPLIT_PRE(QWEN2_RX), NULL, NULL, 1));
    ENC_EQ(k, "e\xCC\x81", "101 204 129");         /* no normalizer: e and the mark are two pre-tokens */
    free(k.work);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// added tokens and the template

START_TEST(test_added_tokens) {
    static const char *const pieces[] = {"<|endoftext|>", NULL}; /* 256 */
    const char *extra = "\"added_tokens\":[{\"id\":256,\"content\":\"<|endoftext|>\",\"single_word\":false,\"lstrip\":false,"
                        "\"rstrip\":false,\"normalized\":true,\"special\":true},{\"id\":257,\"content\":\"<x>\",\"single_word\":false,"
                        "\"lstrip\":false,\"rstrip\":true,\"normalized\":false,\"special\":false},{\"id\":258,\"content\":\"<|end\","
                        "\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":true,\"special\":false}],";
    tk k = must_open(bytelevel(pieces, NULL, GPT2_PRE, NULL, extra, 1));
    ck_assert_int_eq(av_hf_tokenizer_vocab(k.t), 259);
    const char t1[] = "a<|endoftext|>b";
    ck_assert_str_eq(ids_text(enc(&k, t1, sizeof t1 - 1, 1, 1)), "97 256 98");
    /* not parsed: the special token's text is text; the non-special "<|end" inside it is not matched either
     * (the match of the special one is skipped whole, as the library's leftmost-longest iterator does) */
    int n = enc(&k, t1, sizeof t1 - 1, 1, 0);
    ck_assert_int_eq(n, 15); /* a, <|, endoftext, |>, b: their bytes */
    for (int i = 0; i < n; i++) ck_assert_int_lt(ids_buf[i], 256);
    /* a non-special token is always matched; rstrip takes the spaces after it */
    const char t2[] = "a<x>  b";
    ck_assert_str_eq(ids_text(enc(&k, t2, sizeof t2 - 1, 1, 0)), "97 257 98");
    const char t3[] = "<|enda";
    ck_assert_str_eq(ids_text(enc(&k, t3, sizeof t3 - 1, 1, 0)), "258 97");
    free(k.work);
}
END_TEST

/* A Llama 2-style file: metaspace by the normalizer, byte fallback, <s> added by the template. */
static const char *llama2(int byte_fallback, int fuse_unk, const char *norm_pre) {
    char *w = J;
    w += sprintf(w, "{\"added_tokens\":[{\"id\":0,\"content\":\"<unk>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
                    "\"normalized\":false,\"special\":true},{\"id\":1,\"content\":\"<s>\",\"single_word\":false,\"lstrip\":false,"
                    "\"rstrip\":false,\"normalized\":false,\"special\":true}],%s,"
                    "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\",\"type_id\":0}},"
                    "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],\"pair\":[],\"special_tokens\":{\"<s>\":{\"id\":\"<s>\",\"ids\":[1],"
                    "\"tokens\":[\"<s>\"]}}},\"decoder\":{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":"
                    "{\"String\":\"\xE2\x96\x81\"},\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"},{\"type\":\"Strip\","
                    "\"content\":\" \",\"start\":1,\"stop\":0}]},\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":\"<unk>\","
                    "\"continuing_subword_prefix\":null,\"end_of_word_suffix\":null,\"fuse_unk\":%s,\"byte_fallback\":%s,\"vocab\":{"
                    "\"<unk>\":0,\"<s>\":1,\"</s>\":2,",
                 norm_pre, fuse_unk ? "true" : "false", byte_fallback ? "true" : "false");
    for (int b = 0; b < 256; b++) w += sprintf(w, "\"<0x%02X>\":%d,", b, 3 + b);
    /* 259 ▁, 260 h, 261 i, 262 ▁h, 263 ▁hi */
    w += sprintf(w, "\"\xE2\x96\x81\":259,\"h\":260,\"i\":261,\"\xE2\x96\x81h\":262,\"\xE2\x96\x81hi\":263},"
                    "\"merges\":[\"\xE2\x96\x81 h\",\"\xE2\x96\x81h i\"]}}");
    return J;
}
static const char OLD_NORM[] = "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"\xE2\x96\x81\"},"
                               "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\xE2\x96\x81\"}]},\"pre_tokenizer\":null";
static const char NEW_PRE[] = "\"normalizer\":null,\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"\xE2\x96\x81\","
                              "\"prepend_scheme\":\"first\",\"split\":false}";

START_TEST(test_byte_fallback) {
    const char *forms[2] = {OLD_NORM, NEW_PRE};
    for (int f = 0; f < 2; f++) {
        tk k = must_open(llama2(1, 0, forms[f]));
        ck_assert_int_eq(av_hf_tokenizer_vocab(k.t), 264);
        ENC_EQ(k, "hi hi", "1 263 263");
        /* é is not in the vocabulary: its UTF-8 bytes' pieces <0xC3> <0xA9> */
        ENC_EQ(k, "hi\xC3\xA9", "1 263 198 172");
        ck_assert_str_eq(ids_text(enc(&k, "hi", 2, 0, 0)), "263"); /* add_special 0: no <s> */
        const char t[] = "<s>hi";
        /* <s> is split out first; the Prepend normalizer then gives "hi" its ▁ (the old form), the "first"
         * scheme does not (it is not at the text's start) */
        ck_assert_str_eq(ids_text(enc(&k, t, sizeof t - 1, 0, 1)), f == 0 ? "1 263" : "1 260 261");
        // decoding: ▁ is a space, dropped at the very start (Strip), <0x41> is its byte
        char out[64];
        int len = -1;
        ck_assert_int_eq(av_hf_token_bytes(out, &len, 64, k.t, -1, 263), AV_OK);
        ck_assert_int_eq(len, 2);
        ck_assert(memcmp(out, "hi", 2) == 0);
        ck_assert_int_eq(av_hf_token_bytes(out, &len, 64, k.t, 263, 263), AV_OK);
        ck_assert_int_eq(len, 3);
        ck_assert(memcmp(out, " hi", 3) == 0);
        ck_assert_int_eq(av_hf_token_bytes(out, &len, 64, k.t, 263, 3 + 0x41), AV_OK);
        ck_assert_int_eq(len, 1);
        ck_assert_int_eq(out[0], 'A');
        ck_assert_int_eq(av_hf_token_bytes(out, &len, 64, k.t, 263, 264), AV_ERR_SIZE);
        ck_assert_int_eq(av_hf_token_bytes(out, &len, 1, k.t, 263, 263), AV_ERR_SIZE);
        free(k.work);
    }
    /* without byte fallback: unk, one a character, or fused */
    tk k = must_open(llama2(0, 0, OLD_NORM));
    ENC_EQ(k, "hi\xC3\xA9\xC3\xA9", "1 263 0 0");
    free(k.work);
    k = must_open(llama2(0, 1, OLD_NORM));
    ENC_EQ(k, "hi\xC3\xA9\xC3\xA9", "1 263 0");
    free(k.work);
}
END_TEST

START_TEST(test_token_bytes_bytelevel) {
    tk k = must_open(bytelevel((const char *const[]){" hello", NULL}, NULL, GPT2_PRE, NULL, NULL, 1));
    char out[64];
    int len = -1;
    ck_assert_int_eq(av_hf_token_bytes(out, &len, 64, k.t, -1, 256), AV_OK);
    ck_assert_int_eq(len, 6);
        ck_assert(memcmp(out, " hello", 6) == 0);
    ck_assert_int_eq(av_hf_token_bytes(out, &len, 64, k.t, -1, 0xFF), AV_OK);
    ck_assert_int_eq(len, 1);
        ck_assert_int_eq((unsigned char)out[0], 0xFF);
    free(k.work);
}
END_TEST

START_TEST(test_workspace_and_cap) {
    const char *json = bytelevel(NULL, NULL, GPT2_PRE, NULL, NULL, 0);
    size_t len = strlen(json), wb = av_hf_tokenizer_work(json, len);
    void *w = malloc(wb);
    const av_hf_tokenizer *t = NULL;
    ck_assert_int_eq(av_hf_tokenizer_parse(&t, w, wb - 1, json, len), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_hf_tokenizer_parse(&t, w, wb, json, len), AV_OK);
    int ids[8], n = -1;
    size_t ew = av_hf_encode_work(t, 5);
    void *s = malloc(ew);
    ck_assert_int_eq(av_hf_encode(ids, &n, 8, t, "hello", 5, 1, 0, s, ew - 1), AV_ERR_WORKSPACE);
    ck_assert_int_eq(av_hf_encode(ids, &n, 4, t, "hello", 5, 1, 0, s, ew), AV_ERR_SIZE);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(av_hf_encode(ids, &n, 5, t, "hello", 5, 1, 0, s, ew), AV_OK);
    ck_assert_int_eq(n, 5);
    ck_assert_int_eq(av_hf_encode(ids, &n, 5, t, NULL, 0, 1, 0, s, ew), AV_OK);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(av_hf_encode(NULL, &n, 5, t, "hello", 5, 1, 0, s, ew), AV_ERR_NULL);
    free(s), free(w);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// refusals: one sentence naming what

static void refused(const char *json, const char *words) {
    tk k;
    int st = open_tk(&k, json);
    free(k.work);
    ck_assert_int_eq(st, AV_ERR_FORMAT);
    ck_assert_msg(strstr(av_model_error(), words), "reason \"%s\" lacks \"%s\"", av_model_error(), words);
    ck_assert(strlen(av_model_error()) < 250);
}

START_TEST(test_refusals) {
    refused("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"a\":0}}}", "WordPiece");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]},\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":"
            "{\"Regex\":\"\\\\w+\"},\"behavior\":\"Isolated\",\"invert\":false}}", "Split pre-tokenizer's pattern");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"a b c\"]}}", "merge 0");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":[[\"a\"]]}}", "merge 0");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":[\"a b\"]}}", "joins into \"ab\"");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":7},\"merges\":[]}}", "id of \"b\"");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":-1},\"merges\":[]}}", "id of \"b\"");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":0},\"merges\":[]}}", "id 0 to two pieces");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"a\":1},\"merges\":[]}}", "twice");
    refused("{\"model\":{\"type\":\"BPE\",\"dropout\":0.1,\"vocab\":{\"a\":0},\"merges\":[]}}", "dropout");
    refused("{\"model\":{\"type\":\"BPE\",\"continuing_subword_prefix\":\"##\",\"vocab\":{\"a\":0},\"merges\":[]}}",
            "continuing_subword_prefix");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]},\"normalizer\":{\"type\":\"Lowercase\"}}", "Lowercase");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]},\"post_processor\":{\"type\":\"RobertaProcessing\"}}",
            "RobertaProcessing");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]},\"decoder\":{\"type\":\"WordPiece\"}}", "decoder");
    refused("{\"model\":{\"type\":\"BPE\",\"unk_token\":\"<unk>\",\"vocab\":{\"a\":0},\"merges\":[]}}", "unk_token");
    refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]},\"added_tokens\":[{\"id\":5,\"content\":\"x\"}]}",
            "added token 0's id");
    refused("[1,2]", "not a JSON object");
    refused("{\"model\":", "not valid JSON");
    ck_assert_uint_eq(av_hf_tokenizer_work("{\"model\":", 9), 0);
    ck_assert_uint_eq(av_hf_tokenizer_work(NULL, 9), 0);
}
END_TEST

Suite *suite_hf_tokenizer(void) {
    Suite *s = suite_create("hf_tokenizer");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_gpt2_regex);
    tcase_add_test(tc, test_llama3_regex);
    tcase_add_test(tc, test_digits_and_prefix);
    tcase_add_test(tc, test_merge_order);
    tcase_add_test(tc, test_long_pretoken);
    tcase_add_test(tc, test_invalid_utf8);
    tcase_add_test(tc, test_nfc);
    tcase_add_test(tc, test_added_tokens);
    tcase_add_test(tc, test_byte_fallback);
    tcase_add_test(tc, test_token_bytes_bytelevel);
    tcase_add_test(tc, test_workspace_and_cap);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    return s;
}
