/* spectrum_gemm.c: the reference rate for the spectrum benchmark, built to WASM beside the library
 * (bench/spectrum.mjs). It times the spectrum's own register-blocked float64 product, `gram_lower`
 * (G = X·Xᵀ, lower triangle: n³ flops), so the routes can be reported as a fraction of the rate the
 * same SIMD128 arithmetic reaches in its best loop: the WASM limit of docs/performance.md.
 *
 *   gemm_setup(n)  allocates X (n×n, filled with a fixed pattern) and G; returns 0, or −1 without memory
 *   gemm_run()     one product
 */
#include <stdlib.h>

#include "../src/spectrum.c"

static double *X, *G;
static int N, LD;

__attribute__((export_name("gemm_setup"))) int gemm_setup(int n) {
    free(X);
    free(G);
    N = n;
    LD = lead_dim(n);
    X = aligned_alloc(64, sizeof(double) * (size_t)n * LD);
    G = aligned_alloc(64, sizeof(double) * (size_t)n * LD);
    if (!X || !G) return -1;
    for (size_t i = 0; i < (size_t)n * LD; i++) X[i] = (double)((i * 2654435761u) % 1000u) / 1000.0 - 0.5;
    return 0;
}

__attribute__((export_name("gemm_run"))) void gemm_run(void) { gram_lower(G, X, N, LD); }
