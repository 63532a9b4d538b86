/* texts.c: the texts of --text-file (`attnviz table`, `attnviz capture`): a folder's .txt files in name
 * order, a file whole, or with --lines each non-empty line of it. Reads files; computes nothing.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static int ends_with(const char *s, const char *tail) {
    size_t a = strlen(s), b = strlen(tail);
    return a > b && strcmp(s + a - b, tail) == 0;
}

static int add_text(avcli_texts *tx, char *body, const char *name) {
    char **b = realloc(tx->body, sizeof(char *) * (size_t)(tx->count + 1)), **n;
    if (b) tx->body = b;
    n = b ? realloc(tx->name, sizeof(char *) * (size_t)(tx->count + 1)) : NULL;
    if (n) tx->name = n;
    char *nm = n ? strdup(name) : NULL;
    if (!nm) { free(body); return avcli_fail_system("out of memory"); }
    tx->body[tx->count] = body, tx->name[tx->count++] = nm;
    return 0;
}

static void free_texts(avcli_texts *tx) {
    for (int i = 0; i < tx->count; i++) { free(tx->body[i]); free(tx->name[i]); }
    free(tx->body);
    free(tx->name);
}

/* A file's text: its bytes without the line breaks that end it (an editor's last newline is not text). A
 * NUL inside would cut the text short: refused. */
static int file_text(const char *flag, const char *path, char **text) {
    unsigned char *buf;
    size_t len;
    int code = avcli_read_file(flag, path, &buf, &len);
    if (code) return code;
    if (memchr(buf, 0, len)) { free(buf); return avcli_fail("%s %s: holds a NUL byte, not text", flag, path); }
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) len--;
    buf[len] = 0; /* avcli_read_file leaves a byte to spare */
    *text = (char *)buf;
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The texts of --text-file: a folder's .txt files (by name), a file whole, or with --lines each non-empty
 * line of it (named by its line number). */
static int read_texts(avcli_texts *tx, const char *flag, const char *path, int lines) {
    struct stat sb;
    memset(tx, 0, sizeof *tx);
    tx->lines = lines;
    if (!*path) return avcli_fail("%s: an empty path", flag);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        if (lines) return avcli_fail("--lines: %s %s is a folder (one text a file)", flag, path);
        DIR *d = opendir(path);
        if (!d) return avcli_fail_system("%s %s: cannot open (%s)", flag, path, strerror(errno));
        char **names = NULL;
        int count = 0, code = 0;
        for (struct dirent *e; (e = readdir(d)) != NULL && !code;) {
            if (!ends_with(e->d_name, ".txt")) continue;
            char **nn = realloc(names, sizeof(char *) * (size_t)(count + 1));
            if (!nn || !(nn[count] = strdup(e->d_name))) { names = nn ? nn : names; code = avcli_fail_system("out of memory"); break; }
            names = nn, count++;
        }
        closedir(d);
        if (names) qsort(names, (size_t)count, sizeof *names, by_name);
        for (int i = 0; i < count && !code; i++) {
            size_t len = strlen(path) + strlen(names[i]) + 2;
            char *full = malloc(len), *body = NULL;
            if (!full) { code = avcli_fail_system("out of memory"); break; }
            snprintf(full, len, "%s/%s", path, names[i]);
            if (!(code = file_text(flag, full, &body))) code = add_text(tx, body, names[i]);
            free(full);
        }
        for (int i = 0; i < count; i++) free(names[i]);
        free(names);
        if (!code && !tx->count) code = avcli_fail("%s %s: a folder without .txt files", flag, path);
        return code;
    }
    char *body;
    int code = file_text(flag, path, &body);
    if (code) return code;
    if (!lines) {
        const char *slash = strrchr(path, '/');
        return add_text(tx, body, slash ? slash + 1 : path);
    }
    int line = 0;
    for (char *p = body; *p && !code;) {
        size_t w = strcspn(p, "\n");
        char name[24], *one = strndup(p, w);
        line++;
        if (one && w && one[w - 1] == '\r') one[w - 1] = 0;
        snprintf(name, sizeof name, "%d", line);
        if (!one) code = avcli_fail_system("out of memory");
        else if (one[0]) code = add_text(tx, one, name);
        else free(one);
        p += w + (p[w] == '\n');
    }
    free(body);
    if (!code && !tx->count) code = avcli_fail("%s %s: no non-empty line", flag, path);
    return code;
}

int avcli_read_texts(avcli_texts *tx, const char *path, int lines) { return read_texts(tx, "--text-file", path, lines); }
int avcli_read_texts_flag(avcli_texts *tx, const char *flag, const char *path, int lines) { return read_texts(tx, flag, path, lines); }
void avcli_free_texts(avcli_texts *tx) { free_texts(tx); }
