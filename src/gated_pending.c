/* gated_pending.c: TEMPORARY, until E2's dplr.c and fox.c land on g33 (issue 33's split). The registry lists
 * dplr and fox; until their files exist dplr runs its recurrence for every form and fox answers
 * AV_ERR_NO_LINEAR. DELETE this file when merging
 * dplr.c and fox.c (their definitions of the same functions make the link fail otherwise).
 */
#include "gated.h"

/* dplr by its recurrence (gated.c's scan, which runs dplr's step), the matrix as the scan on V = I */
uint64_t avi_dplr_need(const av_params *p, int n, int d, int dv, int path) {
    (void)p;
    if (path == AVI_GATED_MATRIX) return 4u * (uint64_t)n * n + 64u + avi_gated_scan_need(n, d, n);
    return avi_gated_scan_need(n, d, dv);
}
int avi_dplr_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    avi_arena a = avi_arena_over(work);
    float *I = avi_take(&a, 4u * (uint64_t)n * n);
    for (size_t e = 0; e < (size_t)n * n; e++) I[e] = e % ((size_t)n + 1) == 0;
    return avi_gated_scan(M, Q, K, I, n, d, n, p, a.base + a.used);
}
int avi_dplr_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                 void *work, int path) {
    (void)path;
    return avi_gated_scan(O, Q, K, V, n, d, dv, p, work);
}
uint64_t avi_fox_need(const av_params *p, int n, int d, int dv, int path) {
    (void)p, (void)n, (void)d, (void)dv, (void)path;
    return 64;
}
int avi_fox_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    (void)M, (void)Q, (void)K, (void)n, (void)d, (void)p, (void)work;
    return AV_ERR_NO_LINEAR;
}
int avi_fox_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                void *work, int path) {
    (void)O, (void)Q, (void)K, (void)V, (void)n, (void)d, (void)dv, (void)p, (void)work, (void)path;
    return AV_ERR_NO_LINEAR;
}
