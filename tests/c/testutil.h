/* testutil.h: small helpers shared by the Check suites (seeded inputs, differences). Header-only,
 * static inline, so a suite that does not use a helper gets no warning. */
#ifndef ATTNVIZ_TESTUTIL_H
#define ATTNVIZ_TESTUTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "attnviz.h"

/* The real-model data: $ATTNVIZ_SHARED/data/stories260K, ATTNVIZ_SHARED defaulting to ../shared (relative
 * to the repository root, where the tests run). */
static inline const char *tu_stories_dir(void) {
    static char dir[4096];
    const char *s = getenv("ATTNVIZ_SHARED");
    snprintf(dir, sizeof dir, "%s/data/stories260K", s && *s ? s : "../shared");
    return dir;
}

/* The one form every layer skips real-model checks in (README, "The real-model data"). */
static inline void tu_skipped(const char *what) {
    fprintf(stderr, "SKIPPED: real-model checks (%s): %s not found; set ATTNVIZ_SHARED=/path/to/shared\n", what,
            tu_stories_dir());
}

/* One .npy of the stories260K folder decoded to float32 (malloc'd; *info its header), or NULL when it is
 * absent, unreadable or not a .npy the library reads (av_npy_error() says why for the last). */
static inline float *tu_stories_npy(const char *name, av_npy_info *info) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", tu_stories_dir(), name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    float *x = NULL;
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (len > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = (unsigned char *)malloc((size_t)len)) &&
        fread(buf, 1, (size_t)len, f) == (size_t)len && av_npy_parse(info, buf, (size_t)len) == AV_OK &&
        (x = (float *)malloc(sizeof(float) * (info->count ? info->count : 1))) &&
        av_npy_decode_f32(x, info, buf, (size_t)len) != AV_OK) {
        free(x);
        x = NULL;
    }
    fclose(f);
    free(buf);
    return x;
}

/* x[count] ~ N(mean, std²) from the library's portable stream seeded with `seed`. */
static inline void tu_fill_normal(float *x, size_t count, double mean, double std, uint64_t seed) {
    av_rng rng;
    av_rng_seed(&rng, seed);
    for (size_t i = 0; i < count; i++) x[i] = (float)(mean + std * av_rng_normal(&rng));
}

/* x[count] ~ U[lo, hi). */
static inline void tu_fill_uniform(float *x, size_t count, double lo, double hi, uint64_t seed) {
    av_rng rng;
    av_rng_seed(&rng, seed);
    for (size_t i = 0; i < count; i++) x[i] = (float)(lo + (hi - lo) * av_rng_uniform(&rng));
}

/* max |a − b| (NaN anywhere gives +Inf, so a comparison against a tolerance fails). */
static inline double tu_max_abs_diff(const float *a, const float *b, size_t count) {
    double m = 0;
    for (size_t i = 0; i < count; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        if (!(e <= m)) m = isnan(e) ? INFINITY : e;
    }
    return m;
}

/* max |a − b| for a float array against a double reference. */
static inline double tu_max_abs_diff_d(const float *a, const double *b, size_t count) {
    double m = 0;
    for (size_t i = 0; i < count; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (!(e <= m)) m = isnan(e) ? INFINITY : e;
    }
    return m;
}

/* max |x| over a double array. */
static inline double tu_max_abs_d(const double *x, size_t count) {
    double m = 0;
    for (size_t i = 0; i < count; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

#endif /* ATTNVIZ_TESTUTIL_H */
