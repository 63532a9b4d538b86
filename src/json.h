/* json.h: a strict JSON reader for the Hugging Face files (config.json, the shard index, tokenizer.json).
 * Private to the library. The text is parsed once into a flat array of nodes in the caller's workspace
 * (no allocation, no recursion: nesting is bounded by AVJ_MAX_DEPTH and walked with an explicit stack);
 * strings are decoded on demand into caller buffers. RFC 8259 exactly: UTF-8 checked (no overlong forms,
 * no surrogates), escapes including surrogate pairs, numbers in JSON's grammar, one top-level value,
 * nothing but whitespace after it. Duplicate keys are allowed by the grammar; avj_get returns the first.
 */
#ifndef ATTNVIZ_JSON_H
#define ATTNVIZ_JSON_H

#include <stddef.h>
#include <stdint.h>

#define AVJ_MAX_DEPTH 64

enum avj_type { AVJ_NULL, AVJ_FALSE, AVJ_TRUE, AVJ_NUMBER, AVJ_STRING, AVJ_ARRAY, AVJ_OBJECT };

/* One value. Nodes are in document order; a container's children follow it; an object's children
 * alternate key (a string node) and value. `next` is the index of the node after this value's whole subtree
 * (so siblings are walked by i = node[i].next). */
typedef struct avj_node {
    uint32_t start, len;   /* the value's bytes in the text (a string: inside the quotes, still escaped) */
    uint32_t next;         /* index past this subtree */
    uint32_t count;        /* arrays: elements; objects: key/value pairs; else 0 */
    uint8_t type;          /* enum avj_type */
    uint8_t escaped;       /* strings: 1 when the raw bytes hold a backslash (decode with avj_string) */
    uint16_t reserved;
} avj_node;

typedef struct avj_doc {
    const char *text;
    size_t len;
    const avj_node *node;  /* node[0] is the top-level value */
    uint32_t n_nodes;
} avj_doc;

/* Nodes the text needs, or 0 with a reason in avj_error() when the text is not valid JSON (or longer
 * than 4 GiB − 1, or nested deeper than AVJ_MAX_DEPTH). A counting pass: the bytes to give avj_parse
 * are avj_nodes(text, len) * sizeof(avj_node). */
uint32_t avj_nodes(const char *text, size_t len);
/* Parse into nodes[cap]: 0, or −1 with a reason in avj_error() (cap too small, invalid JSON). */
int avj_parse(avj_doc *doc, avj_node *nodes, uint32_t cap, const char *text, size_t len);
/* The last reason as one sentence naming the byte offset ("at byte 1234: a string holds a raw newline"). */
const char *avj_error(void);

/* The value of key `key` in object node `obj` (its first occurrence), or −1 (not an object, or absent). */
int64_t avj_get(const avj_doc *d, uint32_t obj, const char *key);
/* The i-th element of array node `arr`, or −1. Walks siblings: O(i). */
int64_t avj_at(const avj_doc *d, uint32_t arr, uint32_t i);
/* A string node's decoded bytes into out[cap] with a terminating NUL: its byte length (which may include
 * NUL bytes from \u0000), or −1 when not a string or cap ≤ the length. */
int64_t avj_string(const avj_doc *d, uint32_t node, char *out, size_t cap);
/* The decoded byte length of a string node (−1 when not a string). */
int64_t avj_string_len(const avj_doc *d, uint32_t node);
/* 1 when string node `node` decodes to exactly s[0..n) (no buffer needed), else 0. */
int avj_string_eq(const avj_doc *d, uint32_t node, const char *s, size_t n);
/* A number node as a double (strtod semantics on JSON's grammar; ±overflow gives ±Inf): 0, or −1 when the
 * node is not a number. */
int avj_number(const avj_doc *d, uint32_t node, double *out);
/* A number node that is an integer in [lo, hi] written without fraction or exponent (or with an exponent
 * or ".0" that keeps it an exact integer, e.g. 1e5, 2.0): 0; −1 otherwise. */
int avj_int(const avj_doc *d, uint32_t node, int64_t lo, int64_t hi, int64_t *out);

#endif
