/* check_rng.c: the portable random stream and its elementary functions. */
#include <check.h>
#include <float.h>
#include <math.h>

#include "attnviz.h"

// distance in units in the last place between two doubles of the same sign
static double ulps(double a, double b) {
    if (a == b) return 0;
    return fabs(a - b) / (nextafter(fabs(b), INFINITY) - fabs(b));
}

START_TEST(test_stream_golden) {
    /* xoshiro256** from splitmix64(0): the first outputs are fixed forever (the WASM test repeats them) */
    av_rng r;
    av_rng_seed(&r, 42);
    uint64_t a = av_rng_next(&r), b = av_rng_next(&r);
    av_rng r2;
    av_rng_seed(&r2, 42);
    ck_assert_uint_eq(av_rng_next(&r2), a);
    ck_assert_uint_eq(av_rng_next(&r2), b);
    av_rng_seed(&r2, 43);
    ck_assert_uint_ne(av_rng_next(&r2), a);
}
END_TEST

START_TEST(test_uniform_range_and_moments) {
    av_rng r;
    av_rng_seed(&r, 7);
    double sum = 0, sum2 = 0;
    const int N = 200000;
    for (int i = 0; i < N; i++) {
        double u = av_rng_uniform(&r);
        ck_assert(u >= 0.0 && u < 1.0);
        sum += u;
        sum2 += u * u;
    }
    double mean = sum / N, var = sum2 / N - mean * mean;
    ck_assert_double_eq_tol(mean, 0.5, 5e-3);
    ck_assert_double_eq_tol(var, 1.0 / 12, 2e-3);
}
END_TEST

START_TEST(test_normal_moments) {
    av_rng r;
    av_rng_seed(&r, 11);
    double s1 = 0, s2 = 0, s4 = 0;
    const int N = 200000;
    for (int i = 0; i < N; i++) {
        double z = av_rng_normal(&r);
        s1 += z; s2 += z * z; s4 += z * z * z * z;
    }
    ck_assert_double_eq_tol(s1 / N, 0.0, 1e-2);
    ck_assert_double_eq_tol(s2 / N, 1.0, 1.5e-2);
    ck_assert_double_eq_tol(s4 / N, 3.0, 0.1); /* Gaussian kurtosis */
}
END_TEST

START_TEST(test_portable_log) {
    double worst = 0;
    for (double x = 1e-300; x < 1e300; x *= 1.37) worst = fmax(worst, ulps(av_portable_log(x), log(x)));
    for (double x = 0.5; x < 2.0; x += 1e-4) {
        if (fabs(log(x)) < 1e-3) continue; /* near 1 the absolute error matters, checked below */
        worst = fmax(worst, ulps(av_portable_log(x), log(x)));
    }
    ck_assert_msg(worst <= 4, "portable log off by %g ulp", worst);
    for (double x = 0.999; x < 1.001; x += 1e-6) ck_assert(fabs(av_portable_log(x) - log(x)) < 1e-19 + 4e-16 * fabs(log(x)));
    ck_assert(av_portable_log(1.0) == 0.0);
    ck_assert(isinf(av_portable_log(0.0)) && av_portable_log(0.0) < 0);
    ck_assert(isnan(av_portable_log(-1.0)));
    ck_assert_double_eq_tol(av_portable_log(DBL_TRUE_MIN), log(DBL_TRUE_MIN), 1e-12);
}
END_TEST

START_TEST(test_portable_exp) {
    double worst = 0;
    for (double x = -700; x < 700; x += 0.0731) worst = fmax(worst, ulps(av_portable_exp(x), exp(x)));
    ck_assert_msg(worst <= 4, "portable exp off by %g ulp", worst);
    ck_assert(av_portable_exp(0.0) == 1.0);
    ck_assert(isinf(av_portable_exp(710)));
    ck_assert(av_portable_exp(-800) == 0.0);
    ck_assert(isnan(av_portable_exp(NAN)));
}
END_TEST

START_TEST(test_portable_cos) {
    double worst = 0;
    for (double x = -1000; x < 1000; x += 0.00917) worst = fmax(worst, fabs(av_portable_cos(x) - cos(x)));
    ck_assert_msg(worst < 1e-15, "portable cos off by %g", worst);
    ck_assert(av_portable_cos(0.0) == 1.0);
    ck_assert(isnan(av_portable_cos(INFINITY)));
}
END_TEST

/* Found by tests/fuzz/fuzz_api.c: beyond |x| ≈ 1e18 the reduced argument was no longer small and the
 * series returned values like 1.6e25 (cos(1e18)); beyond 2^63·π/2 (2^31·π/2 with wasm32's long) the
 * quadrant count overflowed its integer (undefined behaviour). Any finite x gives a value in [−1, 1], even
 * in x, and moderately large x stay close to cos. */
START_TEST(test_portable_cos_huge) {
    const double xs[] = {3.4e9, 5e9, 1e12, 1e15, 1e17, 1e18, 1e19, 0x1p63, 0x1p64, 1e100, 1e300, DBL_MAX};
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
        double c = av_portable_cos(xs[i]);
        ck_assert_msg(c >= -1.0 && c <= 1.0, "cos(%g) = %g", xs[i], c);
        ck_assert(av_portable_cos(-xs[i]) == c);
    }
    double worst = 0;
    for (double x = 1e9; x < 1e11; x *= 1.000731) worst = fmax(worst, fabs(av_portable_cos(x) - cos(x)));
    ck_assert_msg(worst < 1e-5, "portable cos off by %g between 1e9 and 1e11", worst);
}
END_TEST

Suite *suite_rng(void) {
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_stream_golden);
    tcase_add_test(tc, test_uniform_range_and_moments);
    tcase_add_test(tc, test_normal_moments);
    tcase_add_test(tc, test_portable_log);
    tcase_add_test(tc, test_portable_exp);
    tcase_add_test(tc, test_portable_cos);
    tcase_add_test(tc, test_portable_cos_huge);
    suite_add_tcase(s, tc);
    return s;
}
