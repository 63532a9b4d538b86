/* output.c: the CLI's output files and its error lines.
 *
 * Every file a command writes goes to a temporary file beside its target (same folder, so the final
 * rename is atomic) and is renamed into place only when the whole command succeeded: a failure, an out of
 * memory or a kill never leaves a half-written or emptied file where the old one was (a signal that ends
 * the process, CAUGHT, removes the temporaries, and an -o folder the command made, before it ends). A
 * command's several files are renamed all or none (avcli_out_commit_all), and a command that also prints
 * renames them only after stdout was written (avcli_save_begin, avcli_save_end). A target that exists keeps its
 * mode; a symbolic link is written through (the file it names is replaced, beside itself); a target that
 * is not a regular file (/dev/null, a pipe) is written directly, and one that is a folder is refused.
 * Inputs are read whole, from regular files only (avcli_read_file); numbers from flags are parsed whole
 * (avcli_parse_double, avcli_parse_long).
 */
#define _XOPEN_SOURCE 700 /* realpath, fchmod, mkstemp */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

// ----------------------------------------------------------------------------------------------------
// numbers from flags

/* strtod and strtoll skip leading blanks and the end check only sees trailing ones: refuse both alike. */
int avcli_parse_double(const char *s, double *out) {
    char *end;
    if (isspace((unsigned char)*s)) return 0;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

int avcli_parse_long(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    if (isspace((unsigned char)*s)) return 0;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

// ----------------------------------------------------------------------------------------------------
// error lines: "attnviz: <what>: <reason>"

static void vline(const char *fmt, va_list ap) {
    fputs("attnviz: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int avcli_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vline(fmt, ap);
    va_end(ap);
    return AVCLI_EXIT_INPUT;
}

int avcli_fail_system(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vline(fmt, ap);
    va_end(ap);
    return AVCLI_EXIT_SYSTEM;
}

int avcli_exit_code(int status) {
    if (status >= 0) return AVCLI_EXIT_OK;
    return status == AV_ERR_NOMEM || status == AV_ERR_IO ? AVCLI_EXIT_SYSTEM : AVCLI_EXIT_INPUT;
}

// ----------------------------------------------------------------------------------------------------
// outputs through a temporary file

// The temporaries in flight and the -o folder this command made, removed by a signal handler if the
// process is interrupted or terminated (rmdir removes the folder only while it is empty).
static char *volatile pending[AVCLI_MAX_OUTPUTS + 1];
static const char *volatile made_dir;

static void remove_pending(int sig) {
    for (int i = 0; i <= AVCLI_MAX_OUTPUTS; i++)
        if (pending[i]) unlink(pending[i]); /* async-signal-safe, like rmdir */
    if (made_dir) rmdir(made_dir);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The signals that end the process and that a user can plausibly send or cause while files are written:
 * an interrupt, a termination, a hang-up, a quit, a CPU-time limit (ulimit -t), an alarm or a user
 * signal (timeout -s, kill -USR1), and a pipe whose reader left (a FIFO as an output, `| head`). Each removes the temporaries and the new folder, then is raised
 * again, so the exit status stays the conventional one (a pipeline's writer ends silently on SIGPIPE;
 * ignoring it would let generate-text compute on for no reader). SIGXFSZ (ulimit -f) is ignored instead
 * (avcli_signals): a file that outgrows the limit is a write that fails (EFBIG) like a full disk, and the
 * normal path names the file, removes what it made and exits 1. */
static const int CAUGHT[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXCPU, SIGALRM, SIGUSR1, SIGUSR2};

static void install(void) {
    static int installed = 0;
    if (installed) return;
    installed = 1;
    for (size_t i = 0; i < sizeof CAUGHT / sizeof *CAUGHT; i++) {
        struct sigaction old;
        /* a signal the caller ignores (a background job's SIGINT) stays ignored */
        if (sigaction(CAUGHT[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) signal(CAUGHT[i], remove_pending);
    }
}

void avcli_signals(void) {
    signal(SIGXFSZ, SIG_IGN);
    install();
}

/* Hold back the caught signals while files are renamed or a folder is made and recorded, so that the
 * handler never sees half of it; they are delivered by unblock. */
static void block(sigset_t *old) {
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof CAUGHT / sizeof *CAUGHT; i++) sigaddset(&set, CAUGHT[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}
static void unblock(const sigset_t *old) { sigprocmask(SIG_SETMASK, old, NULL); }

static void track(char *tmp, int on) {
    install();
    for (int i = 0; i <= AVCLI_MAX_OUTPUTS; i++)
        if (on ? pending[i] == NULL : pending[i] == tmp) {
            pending[i] = on ? tmp : NULL;
            return;
        }
}

int avcli_out_fail(const char *flag, const char *path, int err) {
    if (!*path) return avcli_fail("%s: an empty path", flag);
    if (err == EISDIR) return avcli_fail("%s %s: a folder, not a file", flag, path);
    return avcli_fail_system("%s %s: cannot write (%s)", flag, path, strerror(err ? err : EIO));
}

int avcli_out_check(const char *flag, const char *path) {
    struct stat sb;
    if (!*path || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))) return avcli_out_fail(flag, path, EISDIR);
    return 0;
}

int avcli_out_open(avcli_out *o, const char *path) {
    memset(o, 0, sizeof *o);
    o->path = path;
    if (!*path) { errno = ENOENT; return -1; }
    struct stat sb, lb;
    int exists = stat(path, &sb) == 0;
    if (exists && S_ISDIR(sb.st_mode)) { errno = EISDIR; return -1; } /* refused before anything is written */
    if (exists && !S_ISREG(sb.st_mode)) { /* a device or a pipe: no rename */
        o->f = fopen(path, "wb");
        return o->f ? 0 : -1;
    }
    if (exists && lstat(path, &lb) == 0 && S_ISLNK(lb.st_mode)) { /* write through the link */
        if (!(o->real = realpath(path, NULL))) return -1;
        o->path = o->real;
    }
    size_t len = strlen(o->path) + sizeof ".tmp-XXXXXX";
    if (!(o->tmp = malloc(len))) { free(o->real); o->real = NULL; errno = ENOMEM; return -1; }
    snprintf(o->tmp, len, "%s.tmp-XXXXXX", o->path);
    sigset_t old;
    install();
    block(&old); /* the temporary is made and recorded as one step: a signal between would leave it */
    int fd = mkstemp(o->tmp), e = errno;
    if (fd >= 0) track(o->tmp, 1);
    unblock(&old);
    if (fd < 0) { free(o->tmp); free(o->real); o->tmp = o->real = NULL; errno = e; return -1; }
    mode_t mask = umask(0); /* mkstemp makes 0600: the old file's mode, or the one fopen would give */
    umask(mask);
    fchmod(fd, exists ? (sb.st_mode & 07777) : (0666 & ~mask));
    if (!(o->f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        avcli_out_discard(o);
        errno = e;
        return -1;
    }
    return 0;
}

void avcli_out_discard(avcli_out *o) {
    if (o->f) fclose(o->f);
    if (o->tmp) {
        unlink(o->tmp);
        track(o->tmp, 0);
        free(o->tmp);
    }
    free(o->real);
    memset(o, 0, sizeof *o);
}

int avcli_out_close(avcli_out *o) {
    if (!o->f) { errno = EBADF; return -1; }
    int bad = ferror(o->f), e = errno;
    if (fclose(o->f) != 0) { bad = 1; e = errno; }
    o->f = NULL;
    if (bad) { errno = e ? e : EIO; return -1; }
    return 0;
}

int avcli_out_commit(avcli_out *o) {
    int st = 0;
    if (o->tmp && rename(o->tmp, o->path) != 0) {
        int e = errno;
        unlink(o->tmp);
        errno = e;
        st = -1;
    }
    if (o->tmp) track(o->tmp, 0);
    free(o->tmp);
    free(o->real);
    o->tmp = o->real = NULL;
    return st;
}

/* Whether two destinations are one directory entry, which rename replaces: the same final name in the same
 * folder (dev and inode, so ./m.npy, a/../m.npy and m.npy agree). A symbolic link was resolved by
 * avcli_out_open. Each folder holds its temporary, so stat fails only if it went away: then the strings. */
static int same_target(const char *a, const char *b) {
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    const char *na = sa ? sa + 1 : a, *nb = sb ? sb + 1 : b;
    if (strcmp(na, nb) != 0) return 0;
    char *da = sa ? strndup(a, sa == a ? 1 : (size_t)(sa - a)) : strdup(".");
    char *db = sb ? strndup(b, sb == b ? 1 : (size_t)(sb - b)) : strdup(".");
    struct stat xa, xb;
    int same = da && db && stat(da, &xa) == 0 && stat(db, &xb) == 0 ? xa.st_dev == xb.st_dev && xa.st_ino == xb.st_ino
                                                                     : strcmp(a, b) == 0;
    free(da);
    free(db);
    return same;
}

/* Whether a file system refused a hard link because it has none (then that file cannot be put back). */
static int no_links_here(int e) { return e == EPERM || e == ENOTSUP || e == EOPNOTSUPP || e == EMLINK; }

int avcli_out_commit_all(avcli_out *o, const char *const *flags, int count) {
    char *bak[AVCLI_MAX_OUTPUTS] = {0}; /* a second name of each old file, to put it back */
    int existed[AVCLI_MAX_OUTPUTS] = {0}, code = 0, done = 0;
    sigset_t old;
    block(&old);
    for (int i = 0; i < count && !code; i++) { /* every destination checked before the first rename */
        struct stat sb;
        if (!o[i].tmp) continue; /* a device or a pipe, written already */
        for (int j = 0; j < i && !code; j++)
            if (o[j].tmp && same_target(o[j].path, o[i].path))
                code = avcli_fail("%s %s: the same file as %s", flags[i], o[i].path, flags[j]);
        if (code) break;
        existed[i] = lstat(o[i].path, &sb) == 0;
        if (existed[i] && S_ISDIR(sb.st_mode)) { code = avcli_out_fail(flags[i], o[i].path, EISDIR); break; }
        if (!existed[i] || count == 1) continue; /* one rename is atomic: nothing to undo */
        size_t len = strlen(o[i].tmp) + sizeof ".old";
        if (!(bak[i] = malloc(len))) { code = avcli_fail_system("out of memory"); break; }
        snprintf(bak[i], len, "%s.old", o[i].tmp); /* beside its unique temporary: unique too */
        if (link(o[i].path, bak[i]) != 0) {
            int e = errno;
            free(bak[i]);
            bak[i] = NULL;
            if (!no_links_here(e)) code = avcli_out_fail(flags[i], o[i].path, e);
        }
    }
    while (!code && done < count) { /* done: how many are in place */
        if (o[done].tmp && rename(o[done].tmp, o[done].path) != 0) code = avcli_out_fail(flags[done], o[done].path, errno);
        else done++;
    }
    int kept[AVCLI_MAX_OUTPUTS] = {0}; /* an old file that could not be put back: its second name stays */
    for (int i = code ? done - 1 : -1; i >= 0; i--) { /* undo: the old file back, a new one removed */
        if (!o[i].tmp) continue;
        if (bak[i] && rename(bak[i], o[i].path) == 0) { free(bak[i]); bak[i] = NULL; }
        else if (bak[i]) { /* the only copy of the old file now: never removed, and said where it is */
            kept[i] = 1;
            avcli_fail_system("%s %s: holds the new file, as the old one could not be put back (%s); the old file is %s",
                              flags[i], o[i].path, strerror(errno), bak[i]);
        } else if (existed[i]) { /* no second name (a file system without hard links): the old file is gone */
            avcli_fail_system("%s %s: holds the new file; the old one could not be kept on this file system", flags[i], o[i].path);
        } else if (unlink(o[i].path) != 0) {
            avcli_fail_system("%s %s: holds the new file, which could not be removed (%s)", flags[i], o[i].path, strerror(errno));
        }
    }
    for (int i = 0; i < count; i++) {
        if (bak[i] && !kept[i]) unlink(bak[i]);
        free(bak[i]);
        if (code && i >= done && o[i].tmp) unlink(o[i].tmp);
        if (o[i].tmp) track(o[i].tmp, 0);
        free(o[i].tmp);
        free(o[i].real);
        o[i].tmp = o[i].real = NULL;
    }
    unblock(&old);
    return code;
}

int avcli_dir_check(const char *flag, const char *dir) {
    struct stat sb;
    if (!*dir) return avcli_fail("%s: an empty path", flag);
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) return avcli_fail("%s %s: not a folder", flag, dir);
    return 0;
}

int avcli_dir_make(const char *flag, const char *dir, int *made) {
    sigset_t old;
    struct stat sb;
    *made = 0;
    install();
    block(&old);
    int ok = mkdir(dir, 0777) == 0, e = errno;
    if (ok) made_dir = dir, *made = 1;
    unblock(&old);
    if (ok || (e == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))) return 0;
    return e == EEXIST ? avcli_fail("%s %s: not a folder", flag, dir)
                       : avcli_fail_system("%s %s: cannot create (%s)", flag, dir, strerror(e));
}

void avcli_dir_done(const char *dir, int made, int failed) {
    sigset_t old;
    if (!made) return;
    block(&old);
    if (failed) rmdir(dir); /* only when empty: whatever else was put there stays */
    made_dir = NULL;
    unblock(&old);
}

// ----------------------------------------------------------------------------------------------------
// .npy output

int avcli_write_npy_f32(FILE *f, const float *data, const int64_t *shape, int ndim) {
    unsigned char head[512];
    size_t hl, count = 1;
    if (!f || !data || av_npy_write_header(head, sizeof head, &hl, shape, ndim, 4) != AV_OK) return AV_ERR_IO;
    for (int i = 0; i < ndim; i++) count *= (size_t)shape[i];
    int ok = fwrite(head, 1, hl, f) == hl;
    unsigned char chunk[4096];
    for (size_t i = 0; ok && i < count;) { /* little-endian bytes whatever the host */
        size_t k = 0;
        for (; k < sizeof chunk / 4 && i < count; k++, i++) {
            uint32_t u;
            memcpy(&u, data + i, 4);
            for (int b = 0; b < 4; b++) chunk[4 * k + b] = (unsigned char)(u >> (8 * b));
        }
        ok = fwrite(chunk, 4, k, f) == k;
    }
    return ok ? AV_OK : AV_ERR_IO;
}

int avcli_save_begin(avcli_saving *s, const avcli_file *files, int count) {
    int code = 0, opened = 0;
    s->count = 0;
    if (count < 1 || count > AVCLI_MAX_OUTPUTS) return avcli_fail_system("internal: %d outputs", count);
    for (; opened < count; opened++) { /* every destination opened (and checked) before anything is written */
        s->flags[opened] = files[opened].flag;
        if (avcli_out_open(&s->out[opened], files[opened].path) != 0) {
            code = avcli_out_fail(files[opened].flag, files[opened].path, errno);
            break;
        }
    }
    for (int i = 0; i < count && !code; i++) { /* then every file to its temporary */
        const avcli_file *a = &files[i];
        errno = 0;
        int st = a->write ? a->write(s->out[i].f, a->ctx) : avcli_write_npy_f32(s->out[i].f, a->data, a->shape, a->ndim);
        if (st != AV_OK || avcli_out_close(&s->out[i]) != 0) code = avcli_out_fail(a->flag, a->path, errno);
    }
    if (code) {
        for (int i = 0; i < opened; i++) avcli_out_discard(&s->out[i]);
        return code;
    }
    s->count = count;
    return 0;
}

int avcli_save_end(avcli_saving *s, int keep) {
    int count = s->count;
    s->count = 0;
    if (keep) return avcli_out_commit_all(s->out, s->flags, count); /* all into place, or none */
    for (int i = 0; i < count; i++) avcli_out_discard(&s->out[i]);
    return 0;
}

int avcli_save(const avcli_file *files, int count) {
    avcli_saving s;
    int code = avcli_save_begin(&s, files, count);
    return code ? code : avcli_save_end(&s, 1);
}

int avcli_stdout_check(int code) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int e = errno;
        return code ? code : avcli_fail_system("standard output: cannot write (%s)", strerror(e ? e : EIO));
    }
    return code;
}

const char *avcli_brief(const char *s) {
    static char ring[4][AVCLI_BRIEF * 4 + 8]; /* a few in one message; UTF-8 takes up to 4 bytes a character */
    static int next;
    size_t i = 0, chars = 0;
    int plain = 1;
    for (; s[i] && chars < AVCLI_BRIEF; chars++) { /* the first AVCLI_BRIEF characters, whole */
        plain &= ((unsigned char)s[i] >= 0x20 || s[i] == '\t') && s[i] != 0x7f;
        i++;
        for (int c = 0; c < 3 && ((unsigned char)s[i] & 0xc0) == 0x80; c++) i++; /* ≤ 4 bytes, even if malformed */
    }
    if (!s[i] && plain) return s;
    char *b = ring[next++ % 4];
    for (size_t k = 0; k < i; k++) /* a control character would break the one line */
        b[k] = ((unsigned char)s[k] < 0x20 && s[k] != '\t') || s[k] == 0x7f ? '?' : s[k];
    strcpy(b + i, s[i] ? "\xe2\x80\xa6" : ""); /* … */
    return b;
}

int avcli_read_file(const char *flag, const char *path, unsigned char **buf, size_t *len) {
    *buf = NULL;
    *len = 0;
    if (!*path) return avcli_fail("%s: an empty path", flag);
    /* O_NONBLOCK: opening a pipe with no writer returns at once instead of waiting, so it can be refused */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return errno == EISDIR ? avcli_fail("%s %s: a folder, not a file", flag, path)
                                      : avcli_fail_system("%s %s: cannot open (%s)", flag, path, strerror(errno));
    struct stat sb;
    int code = 0;
    if (fstat(fd, &sb) != 0) code = avcli_fail_system("%s %s: cannot read (%s)", flag, path, strerror(errno));
    else if (S_ISDIR(sb.st_mode)) code = avcli_fail("%s %s: a folder, not a file", flag, path);
    /* a device or a pipe has no end to read to (/dev/zero would be read until memory runs out) */
    else if (!S_ISREG(sb.st_mode)) code = avcli_fail("%s %s: not a regular file (a device, a pipe or a socket)", flag, path);
    else if ((uintmax_t)sb.st_size >= SIZE_MAX / 2) code = avcli_fail_system("%s %s: out of memory", flag, path);
    if (code) { close(fd); return code; }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    /* the size fstat gives, plus one byte to see the end (a file that grows meanwhile is read whole too) */
    size_t cap = (size_t)sb.st_size + 1;
    int e = 0;
    if (!(*buf = malloc(cap))) goto oom;
    for (;;) {
        if (*len == cap) {
            unsigned char *nb = cap <= SIZE_MAX / 2 ? realloc(*buf, 2 * cap) : NULL;
            if (!nb) goto oom;
            *buf = nb;
            cap *= 2;
        }
        ssize_t got = read(fd, *buf + *len, cap - *len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) { e = errno; break; }
        if (got == 0) break;
        *len += (size_t)got;
    }
    close(fd);
    if (!e) return 0;
    free(*buf);
    *buf = NULL;
    return avcli_fail_system("%s %s: cannot read (%s)", flag, path, strerror(e));
oom:
    free(*buf);
    *buf = NULL; /* the caller frees *buf too */
    close(fd);
    return avcli_fail_system("%s %s: out of memory", flag, path);
}

int avcli_npy_shape(av_npy_info *info, const char *flag, const char *path) {
    unsigned char *buf;
    size_t len;
    int code = avcli_read_file(flag, path, &buf, &len);
    if (code) return code;
    if (av_npy_parse(info, buf, len) != AV_OK) code = avcli_fail("%s %s: %s", flag, path, av_npy_error());
    free(buf);
    return code;
}

int avcli_npy_load(av_npy_info *info, float **data, const char *flag, const char *path) {
    unsigned char *buf;
    size_t len;
    *data = NULL;
    int code = avcli_read_file(flag, path, &buf, &len);
    if (code) return code;
    if (av_npy_parse(info, buf, len) != AV_OK) { free(buf); return avcli_fail("%s %s: %s", flag, path, av_npy_error()); }
    *data = malloc(sizeof(float) * (info->count ? info->count : 1));
    if (!*data) { free(buf); return avcli_fail_system("%s %s: out of memory", flag, path); }
    int st = av_npy_decode_f32(*data, info, buf, len);
    free(buf);
    if (st != AV_OK) { free(*data); *data = NULL; return avcli_fail("%s %s: %s", flag, path, av_npy_error()); }
    return 0;
}

int avcli_emit_json(const avcli_inputs *in, int (*cmd)(const avcli_inputs *, const void *, FILE *), const void *ctx) {
    avcli_out o;
    int st;
    if (!in->out) {
        st = cmd(in, ctx, stdout); /* main checks that stdout was written */
    } else if (avcli_out_open(&o, in->out) != 0) {
        st = avcli_out_fail("-o", in->out, errno);
    } else if ((st = cmd(in, ctx, o.f)) != 0) {
        avcli_out_discard(&o); /* the old file, if any, stays as it was */
    } else if (avcli_out_close(&o) != 0 || avcli_out_commit(&o) != 0) {
        st = avcli_out_fail("-o", in->out, errno);
        avcli_out_discard(&o);
    }
    return st;
}

void avcli_csv_field(FILE *f, const char *s) {
    if (!s) return;
    if (!strpbrk(s, ",\"\n\r")) { fputs(s, f); return; }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
