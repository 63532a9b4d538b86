/* random.c: random matrices from the portable stream (rng.c).
 *
 * Every draw goes through av_rng_normal (only +, −, ×, ÷ and sqrt), and the orthogonalisation below uses
 * the same operations in float64, so a seed gives the same bits natively and in WebAssembly
 * (docs/conventions.md; the build uses -ffp-contract=off).
 */
#include <math.h>
#include <string.h>

#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// Gaussian matrices

void avi_gaussian_matrix(float *G, int rows, int cols, double sigma, uint64_t seed) {
    av_rng rng;
    av_rng_seed(&rng, seed);
    size_t count = (size_t)rows * (size_t)cols;
    for (size_t i = 0; i < count; i++) G[i] = (float)(sigma * av_rng_normal(&rng));
}

// ----------------------------------------------------------------------------------------------------
// Performer ω (Choromanski et al. 2021; google-research performer `GaussianOrthogonalRandomMatrix`)

size_t avi_performer_omega_work(int m, int d) {
    (void)m;
    return avi_align((size_t)d * (size_t)d * sizeof(double));
}

// Fill row v[d] with N(0, 1) draws.
static void draw_row(double *v, int d, av_rng *rng) {
    for (int j = 0; j < d; j++) v[j] = av_rng_normal(rng);
}

// Orthonormalise the rows of B[d×d] in place by modified Gram–Schmidt (Golub & Van Loan §5.2.8), in
// float64. A row that collapses (probability zero for a Gaussian block) is redrawn from the stream.
static void mgs_rows(double *B, int d, av_rng *rng) {
    for (int i = 0; i < d; i++) {
        double *v = B + (size_t)i * d;
        for (int tries = 0;; tries++) {
            for (int j = 0; j < i; j++) {
                const double *q = B + (size_t)j * d;
                double dot = 0.0;
                for (int t = 0; t < d; t++) dot += v[t] * q[t];
                for (int t = 0; t < d; t++) v[t] -= dot * q[t];
            }
            double nrm = 0.0;
            for (int t = 0; t < d; t++) nrm += v[t] * v[t];
            nrm = sqrt(nrm);
            if (nrm > 1e-300 || tries >= 64) {
                double inv = nrm > 1e-300 ? 1.0 / nrm : 0.0;
                for (int t = 0; t < d; t++) v[t] *= inv;
                break;
            }
            draw_row(v, d, rng);
        }
    }
}

/* W[m×d]. iid: m·d draws row by row. Orthogonal: ⌈m/d⌉ blocks, each a d×d Gaussian (d·d draws) whose rows
 * are orthonormalised; the first m rows of the stack are kept; then m more N(0, I_d) draws, in order, whose
 * norms (χ(d)) rescale the rows. One stream, avi_stream(AVI_STREAM_PERFORMER, seed). work: avi_performer_omega_work bytes. */
void avi_performer_omega(float *W, int m, int d, int orthogonal, uint32_t seed, void *work) {
    av_rng rng;
    av_rng_seed(&rng, avi_stream(AVI_STREAM_PERFORMER, seed));
    if (!orthogonal) {
        for (size_t i = 0; i < (size_t)m * (size_t)d; i++) W[i] = (float)av_rng_normal(&rng);
        return;
    }
    double *B = work;                                       /* d×d block */
    for (int r0 = 0; r0 < m; r0 += d) {
        for (int i = 0; i < d; i++) draw_row(B + (size_t)i * d, d, &rng);
        mgs_rows(B, d, &rng);
        int keep = m - r0 < d ? m - r0 : d;
        for (int i = 0; i < keep; i++)
            for (int t = 0; t < d; t++) W[(size_t)(r0 + i) * d + t] = (float)B[(size_t)i * d + t];
    }
    for (int i = 0; i < m; i++) {
        double nrm = 0.0;
        for (int t = 0; t < d; t++) {
            double z = av_rng_normal(&rng);
            nrm += z * z;
        }
        nrm = sqrt(nrm);
        float *w = W + (size_t)i * d;
        for (int t = 0; t < d; t++) w[t] = (float)(w[t] * nrm);
    }
}

// ----------------------------------------------------------------------------------------------------
// the draw cache (internal.h): a 64-byte header, then the floats

#define DRAW_MAGIC 0x3130574152445641ULL /* "AVDRAW01" */

typedef struct draw_header {
    uint64_t magic;
    avi_draw_key key;
    uint32_t pad;
    uint64_t sum;
} draw_header;
_Static_assert(sizeof(draw_header) <= AVI_DRAW_HEADER, "the header fits its 64 bytes");

static uint64_t mix64(uint64_t z) { /* splitmix64's finaliser */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A checksum of the key and of the floats' bits: four lanes h ← (h ⊕ w)·K over the 32-bit words (lane l takes
 * words i ≡ l mod 4; each step is a bijection of h, so a change of any one word always changes the sum), the
 * lanes then mixed together. Four independent lanes keep it at a small fraction of the draw's cost. */
static uint64_t draw_sum(const avi_draw_key *key, const float *x, size_t count) {
    const uint64_t K = 0x9e3779b97f4a7c15ULL;
    uint64_t h[4] = {key->kind | (uint64_t)key->seed << 32, (uint32_t)key->rows | (uint64_t)(uint32_t)key->cols << 32,
                     key->flags, count};
    size_t i = 0;
    for (; i + 4 <= count; i += 4)
        for (int l = 0; l < 4; l++) {
            uint32_t w;
            memcpy(&w, x + i + l, 4);
            h[l] = (h[l] ^ w) * K;
        }
    for (; i < count; i++) {
        uint32_t w;
        memcpy(&w, x + i, 4);
        h[i & 3] = (h[i & 3] ^ w) * K;
    }
    return mix64(mix64(mix64(mix64(h[0]) ^ h[1]) ^ h[2]) ^ h[3]);
}

static size_t draw_count(const avi_draw_key *key) { return (size_t)key->rows * (size_t)key->cols; }

int avi_draw_hit(const void *block, const avi_draw_key *key) {
    draw_header h;
    memcpy(&h, block, sizeof h);
    if (h.magic != DRAW_MAGIC || h.key.kind != key->kind || h.key.seed != key->seed || h.key.rows != key->rows ||
        h.key.cols != key->cols || h.key.flags != key->flags)
        return 0;
    return h.sum == draw_sum(key, avi_draw_data((void *)block), draw_count(key));
}

void avi_draw_seal(void *block, const avi_draw_key *key) {
    draw_header h;
    memset(&h, 0, sizeof h);
    h.magic = DRAW_MAGIC;
    h.key = *key;
    h.sum = draw_sum(key, avi_draw_data(block), draw_count(key));
    memcpy(block, &h, sizeof h);
}

// ----------------------------------------------------------------------------------------------------
// focused + DWC's kernel (attention.c adds it; its formula there)

void avi_dwc_weights(double *w, const av_params *p) {
    av_rng rng;
    av_rng_seed(&rng, avi_stream(AVI_STREAM_DWC, (uint32_t)p->seed));
    double sd = 1.0 / sqrt((double)p->dwc_kernel);
    for (int t = 0; t < p->dwc_kernel; t++) w[t] = sd * av_rng_normal(&rng);
}
