/* gated_delta.c: gdn (one α_t, β_t per token) and kda (α_t per channel, β_t per token), docs/gated.md:
 *   S' = Diag(α_t)S_{t−1}, S_t = S' + β_t k̃_t(v_t − S'ᵀk̃_t)ᵀ,  M = A_qk (I + diag(β) A_kk)⁻¹ diag(β).
 * The recurrent form is gated.c's scan.
 */
#include <string.h>

#include "gated.h"

/* The matrix as the recurrence run on V = I (docs/gated.md: M equals it), an n×n identity in the workspace. */
static uint64_t identity_bytes(int n) { return 4u * (uint64_t)n * n + 64u; }

uint64_t avi_gdelta_need(const av_params *p, int n, int d, int dv, int path) {
    (void)p;
    if (path == AVI_GATED_MATRIX) return identity_bytes(n) + avi_gated_scan_need(n, d, n);
    return avi_gated_scan_need(n, d, dv);
}

int avi_gdelta_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    avi_arena a = avi_arena_over(work);
    float *I = avi_take(&a, 4u * (uint64_t)n * n);
    memset(I, 0, sizeof(float) * (size_t)n * n);
    for (int t = 0; t < n; t++) I[(size_t)t * n + t] = 1;
    int st = avi_gated_scan(M, Q, K, I, n, d, n, p, a.base + a.used);
    /* row i of the scan holds o_i = Σ_j M_ij e_j: M itself, causal by construction */
    return st;
}

int avi_gdelta_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                void *work, int path) {
    (void)path;
    return avi_gated_scan(O, Q, K, V, n, d, dv, p, work);
}
