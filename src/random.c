/* random.c: random matrices from the portable stream (rng.c).
 *
 * Every draw goes through av_rng_normal (only +, −, ×, ÷ and sqrt), and the orthogonalisation below uses
 * the same operations in float64, so a seed gives the same bits natively and in WebAssembly
 * (docs/conventions.md; the build uses -ffp-contract=off).
 */
#include <math.h>

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
