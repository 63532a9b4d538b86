/* bench_time.h: the timing helper shared by the native benchmarks (figures printed, never asserted). */
#ifndef ATTNVIZ_BENCH_TIME_H
#define ATTNVIZ_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* result = the median time of `call` over at least `min_calls` calls and about `budget` ms, after one
 * warm-up call (at most 200 samples). */
#define TIME_MEDIAN(result, min_calls, budget, call)                                       \
    do {                                                                                   \
        double samples_[200];                                                              \
        int k_ = 0;                                                                        \
        call;                                                                              \
        double start_ = now_ms();                                                          \
        while (k_ < 200 && (k_ < (min_calls) || now_ms() - start_ < (budget))) {          \
            double t0_ = now_ms();                                                         \
            call;                                                                          \
            samples_[k_++] = now_ms() - t0_;                                               \
        }                                                                                  \
        qsort(samples_, k_, sizeof(double), cmp_double);                                   \
        result = samples_[k_ / 2];                                                         \
    } while (0)

#endif
