/* rng.c: the portable random stream and the elementary functions its transforms use.
 *
 * xoshiro256** (Blackman & Vigna 2018) seeded through splitmix64. The transforms use only +, −, ×, ÷
 * and sqrt (all correctly rounded in IEEE 754), never libm's log/exp/cos, whose last bits differ
 * between glibc and the WASM libc. Built with -ffp-contract=off, so no FMA changes a bit either:
 * the same seed gives the same floats natively and in WebAssembly (docs/conventions.md).
 */
#include <math.h>
#include <string.h>

#include "attnviz.h"

// ----------------------------------------------------------------------------------------------------
// the stream

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void av_rng_seed(av_rng *rng, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&x);
}

uint64_t av_rng_next(av_rng *rng) {
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double av_rng_uniform(av_rng *rng) {
    return (double)(av_rng_next(rng) >> 11) * 0x1.0p-53;
}

// Marsaglia's polar method: one normal per accepted pair (the second is dropped, keeping the stream
// state a plain xoshiro state).
double av_rng_normal(av_rng *rng) {
    for (;;) {
        double u = 2.0 * av_rng_uniform(rng) - 1.0;
        double v = 2.0 * av_rng_uniform(rng) - 1.0;
        double s = u * u + v * v;
        if (s > 0.0 && s < 1.0) return u * sqrt(-2.0 * av_portable_log(s) / s);
    }
}

// ----------------------------------------------------------------------------------------------------
// portable elementary functions (accurate to a few ulp; bit-identical wherever IEEE double is)

static const double LN2_HI = 6.93147180369123816490e-01; /* high bits of ln 2, exact times small ints */
static const double LN2_LO = 1.90821492927058770002e-10;

// ln x = e·ln 2 + 2·atanh(t), t = (m − 1)/(m + 1), with x = m·2^e and m in [√½, √2).
double av_portable_log(double x) {
    if (!(x > 0.0)) return x == 0.0 ? -INFINITY : NAN;
    if (x == INFINITY) return x;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff);
    if (e == 0) { /* subnormal: scale into the normal range first */
        x *= 0x1.0p54;
        memcpy(&bits, &x, sizeof bits);
        e = (int)((bits >> 52) & 0x7ff) - 54;
    }
    e -= 1022;                                          /* x = m·2^e with m in [0.5, 1) */
    bits = (bits & 0x000fffffffffffffull) | 0x3fe0000000000000ull;
    double m;
    memcpy(&m, &bits, sizeof m);
    if (m < 0.70710678118654752440) { m *= 2.0; e -= 1; }
    double t = (m - 1.0) / (m + 1.0), t2 = t * t;       /* |t| ≤ 0.1716 */
    double series = 0.0;
    for (int k = 23; k >= 3; k -= 2) series = (series + 1.0 / k) * t2;
    double atanh2 = 2.0 * t + 2.0 * t * series;
    return (e * LN2_HI + (atanh2 + e * LN2_LO));
}

// e^x = 2^k · e^r, x = k·ln 2 + r with |r| ≤ ln2/2, e^r by its Taylor series to r^15.
double av_portable_exp(double x) {
    if (x != x) return x;
    if (x > 709.78) return INFINITY;
    if (x < -745.2) return 0.0;
    double kd = x * 1.44269504088896340736;
    int k = (int)(kd + (kd >= 0 ? 0.5 : -0.5));
    double r = (x - k * LN2_HI) - k * LN2_LO;
    double term = 1.0, sum = 1.0;
    for (int i = 1; i <= 15; i++) { term = term * r / i; sum += term; }
    /* scale by 2^k in two steps so that subnormal results stay exact-ish */
    int k1 = k / 2, k2 = k - k1;
    uint64_t b1 = (uint64_t)(k1 + 1023) << 52, b2 = (uint64_t)(k2 + 1023) << 52;
    double s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    return sum * s1 * s2;
}

// cos x: reduce by multiples of π/2 (three-part Cody–Waite constant, fine for |x| < 1e5), then the
// Taylor series of sin or cos on [−π/4, π/4]. Beyond |x| = 1e9 (where the quadrant count would leave a
// 32-bit long, as in wasm32, and the reduced argument would not be small) x is first brought below 1e9
// by multiples of the same three-part 2π, a few times over for huge x: the value is then a cosine of an
// argument congruent to x only up to x's own rounding (no double method without Payne–Hanek does
// better), but always in [−1, 1], with the same bits everywhere.
double av_portable_cos(double x) {
    if (x != x || x == INFINITY || x == -INFINITY) return NAN;
    static const double PIO2_1 = 1.57079632673412561417e+00, PIO2_2 = 6.07710050650619224932e-11,
                        PIO2_3 = 2.02226624879595063154e-21, TWO_OVER_PI = 6.36619772367581382433e-01;
    while (x > 1e9 || x < -1e9) {
        /* k = x/(2π) rounded to an integer by + and − only (|k| < 2^51), or x/(2π) itself when it is
         * that large (every such double is an integer) */
        double k = x * (0.25 * TWO_OVER_PI);
        if (k < 0x1p51 && k > -0x1p51) k = (k + 0x1.8p52) - 0x1.8p52;
        x = ((x - k * (4 * PIO2_1)) - k * (4 * PIO2_2)) - k * (4 * PIO2_3);
    }
    double qd = x * TWO_OVER_PI;
    long q = (long)(qd + (qd >= 0 ? 0.5 : -0.5));
    double r = ((x - q * PIO2_1) - q * PIO2_2) - q * PIO2_3, r2 = r * r;
    double c = 1.0, s = 1.0, tc = 1.0, ts = 1.0;
    for (int i = 1; i <= 10; i++) {
        tc = -tc * r2 / ((2 * i - 1) * (2 * i));
        ts = -ts * r2 / ((2 * i) * (2 * i + 1));
        c += tc;
        s += ts;
    }
    s *= r;
    switch (((q % 4) + 4) % 4) {
    case 0: return c;
    case 1: return -s;
    case 2: return -c;
    default: return s;
    }
}
