/* gated_linear.c: simple_gla (one log-gate per token) and gla (one per token and channel), docs/gated.md:
 *   S_t = Diag(α_t) S_{t−1} + k̃_t v_tᵀ,  o_t = S_tᵀ q̃_t,  M_ij = Σ_c q̃_ic k̃_jc Γ_ijc (j ≤ i).
 * The recurrent form is gated.c's scan.
 */
#include <string.h>

#include "gated.h"

/* The matrix as the recurrence run on V = I (docs/gated.md: M equals it), an n×n identity in the workspace. */
static uint64_t identity_bytes(int n) { return 4u * (uint64_t)n * n + 64u; }

uint64_t avi_gla_need(const av_params *p, int n, int d, int dv, int path) {
    (void)p;
    if (path == AVI_GATED_MATRIX) return identity_bytes(n) + avi_gated_scan_need(n, d, n);
    return avi_gated_scan_need(n, d, dv);
}

int avi_gla_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    avi_arena a = avi_arena_over(work);
    float *I = avi_take(&a, 4u * (uint64_t)n * n);
    memset(I, 0, sizeof(float) * (size_t)n * n);
    for (int t = 0; t < n; t++) I[(size_t)t * n + t] = 1;
    int st = avi_gated_scan(M, Q, K, I, n, d, n, p, a.base + a.used);
    /* row i of the scan holds o_i = Σ_j M_ij e_j: M itself, causal by construction */
    return st;
}

int avi_gla_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                void *work, int path) {
    (void)path;
    return avi_gated_scan(O, Q, K, V, n, d, dv, p, work);
}
