/* fuzz_json.c: libFuzzer target for the strict JSON reader (src/json.c, src/json.h). Seeds:
 * tests/fuzz/corpus_json. Run by `make fuzz`.
 *
 * Any input is refused by avj_nodes with a one-line sentence starting "at byte ", or counted; then
 * avj_parse with one node fewer must refuse, and with exactly that many must succeed with that count. Every
 * node is then walked with every accessor: the tree's invariants (`next`, `count`, spans inside the text),
 * strings decoded into buffers of exactly their length + 1 (one byte less refused) that compare equal
 * through avj_string_eq, keys found again by avj_get (the first of duplicates), elements by avj_at, and
 * numbers through avj_number and avj_int (an integer from avj_int must equal the double when it is exact).
 * The text, the nodes and the string buffers are private allocations of exactly their size, so ASan sees
 * any access past them.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void walk_strings(const avj_doc *d, uint32_t i) {
    int64_t n = avj_string_len(d, i);
    CHECK(n >= 0 && n <= d->node[i].len);
    if (!d->node[i].escaped) CHECK(n == d->node[i].len);
    char *out = malloc((size_t)n + 1);
    if (!out) return;
    CHECK(avj_string(d, i, out, (size_t)n) == -1);
    CHECK(avj_string(d, i, out, (size_t)n + 1) == n);
    CHECK(out[n] == '\0');
    CHECK(avj_string_eq(d, i, out, (size_t)n) == 1);
    if (n) CHECK(avj_string_eq(d, i, out, (size_t)n - 1) == 0);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    uint32_t n = avj_nodes(text, size);
    if (!n) {
        const char *why = avj_error();
        CHECK(strncmp(why, "at byte ", 8) == 0 && !strchr(why, '\n'));
        free(text);
        return 0;
    }
    CHECK(n <= size); /* every node holds at least one byte of its own */
    avj_node *nodes = malloc(sizeof *nodes * n);
    avj_doc d;
    if (!nodes) { free(text); return 0; }
    CHECK(avj_parse(&d, nodes, n - 1, text, size) == -1);
    CHECK(avj_parse(&d, nodes, n, text, size) == 0);
    CHECK(d.n_nodes == n && d.node == nodes && d.text == text && d.len == size);
    CHECK(nodes[0].next == n);
    for (uint32_t i = 0; i < n; i++) {
        const avj_node *x = &nodes[i];
        CHECK((uint64_t)x->start + x->len <= size && x->next > i && x->next <= n && x->type <= AVJ_OBJECT);
        double v;
        int64_t iv;
        int isnum = x->type == AVJ_NUMBER;
        CHECK((avj_number(&d, i, &v) == 0) == isnum);
        if (isnum) {
            int r = avj_int(&d, i, INT64_MIN, INT64_MAX, &iv);
            /* an integer within 2^53 is exact as a double: both readings agree */
            if (r == 0 && iv > -(INT64_C(1) << 53) && iv < (INT64_C(1) << 53)) CHECK((double)iv == v);
            if (r == 0) CHECK(avj_int(&d, i, iv, iv, &iv) == 0);
            if (r == 0 && iv < INT64_MAX) CHECK(avj_int(&d, i, iv + 1, INT64_MAX, &iv) == -1);
            CHECK(!isnan(v));
        } else {
            CHECK(avj_int(&d, i, INT64_MIN, INT64_MAX, &iv) == -1);
        }
        CHECK((avj_string_len(&d, i) >= 0) == (x->type == AVJ_STRING));
        if (x->type == AVJ_STRING) walk_strings(&d, i);
        if (x->type == AVJ_ARRAY) {
            uint32_t j = i + 1, k = 0;
            for (; j < x->next; j = nodes[j].next, k++) CHECK(avj_at(&d, i, k) == j);
            CHECK(j == x->next && k == x->count && avj_at(&d, i, k) == -1);
            CHECK(avj_get(&d, i, "") == -1);
        } else if (x->type == AVJ_OBJECT) {
            uint32_t j = i + 1, k = 0;
            for (; j < x->next; j = nodes[j + 1].next, k++) {
                CHECK(nodes[j].type == AVJ_STRING && j + 1 < x->next);
                /* a key without NUL bytes is found again: here, or at an earlier duplicate */
                int64_t len = avj_string_len(&d, j);
                char *key = malloc((size_t)len + 1);
                if (key && avj_string(&d, j, key, (size_t)len + 1) == len && strlen(key) == (size_t)len) {
                    int64_t at = avj_get(&d, i, key);
                    CHECK(at > i && at <= j + 1 && avj_string_eq(&d, (uint32_t)at - 1, key, (size_t)len));
                }
                free(key);
            }
            CHECK(j == x->next && k == x->count && avj_at(&d, i, 0) == -1);
        } else {
            CHECK(x->count == 0 && x->next == i + 1);
        }
    }
    CHECK(avj_get(&d, n, "") == -1 && avj_at(&d, n, 0) == -1 && avj_string_len(&d, n) == -1);
    free(nodes);
    free(text);
    return 0;
}
