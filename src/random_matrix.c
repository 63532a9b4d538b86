/* random_matrix.c: the public view of the random matrices the variants draw (av_random_work,
 * av_random_matrix): Performer's ω, Linformer's E and F (Gaussian draws, or the segment means of
 * lowrank.c's rule), the DWC kernel, each exactly as the variant's own path draws it (random.c).
 */
#include <math.h>

#include "internal.h"

// ----------------------------------------------------------------------------------------------------
// public: the random matrices as the variants use them (include/attnviz.h, av_random_matrix)

/* The shape of `which` for these (resolved) knobs, or AV_ERR_NO_LINEAR when the variant draws none. */
static int random_shape(long *rows, long *cols, int which, const av_params *p, int n, int d) {
    switch (which) {
    case AV_RANDOM_OMEGA:
        if (p->variant != AV_PERFORMER) return AV_ERR_NO_LINEAR;
        *rows = p->m, *cols = d;
        return AV_OK;
    case AV_RANDOM_E:
    case AV_RANDOM_F:
        if (p->variant != AV_LINFORMER) return AV_ERR_NO_LINEAR;
        *rows = p->s, *cols = n;
        return AV_OK;
    case AV_RANDOM_DWC:
        if (p->dwc_kernel <= 0 || !avi_variant_reads(p->variant, AV_KNOB_DWC_KERNEL)) return AV_ERR_NO_LINEAR;
        *rows = 1, *cols = p->dwc_kernel;
        return AV_OK;
    default:
        return AV_ERR_VARIANT;
    }
}

/* Bytes of workspace: orthogonal ω's d×d block, or the DWC kernel in float64; 1 otherwise (> 0 for valid
 * arguments, as every _work function). */
static size_t random_need(int which, const av_params *p, int d) {
    if (which == AV_RANDOM_OMEGA && p->orthogonal) return avi_performer_omega_work(p->m, d);
    if (which == AV_RANDOM_DWC) return avi_align((size_t)p->dwc_kernel * sizeof(double));
    return 1;
}

size_t av_random_work(int which, const av_params *prm, int n, int d) {
    av_params p;
    long rows, cols;
    if (!prm || av_params_resolve(&p, prm, n, d) != AV_OK || random_shape(&rows, &cols, which, &p, n, d) != AV_OK)
        return 0;
    return random_need(which, &p, d);
}

int av_random_matrix(float *out, long *rows, long *cols, int which, const av_params *prm, int n, int d,
                     void *work, size_t work_bytes) {
    if (!rows || !cols || !prm) return AV_ERR_NULL;
    av_params p;
    int st = av_params_resolve(&p, prm, n, d);
    if (st != AV_OK) return st;
    if ((st = random_shape(rows, cols, which, &p, n, d)) != AV_OK) return st;
    if (!out) return AV_OK;
    if (!work) return AV_ERR_NULL;
    if (work_bytes < random_need(which, &p, d)) return AV_ERR_WORKSPACE;
    switch (which) {
    case AV_RANDOM_OMEGA:
        avi_performer_omega(out, p.m, d, p.orthogonal, (uint32_t)p.seed, work);
        break;
    case AV_RANDOM_E:
    case AV_RANDOM_F:
        if (p.ef_kind == AV_EF_MEAN) {               /* row t: 1/|segment t| on segment t's positions */
            for (size_t i = 0; i < (size_t)p.s * (size_t)n; i++) out[i] = 0.0f;
            for (int t = 0; t < p.s; t++) {
                int s0, len;
                avi_segment(&s0, &len, t, n, p.s);
                for (int j = s0; j < s0 + len; j++) out[(size_t)t * n + j] = (float)(1.0 / len);
            }
        } else {
            int stream = which == AV_RANDOM_E || p.ef_shared ? AVI_STREAM_LINFORMER_E : AVI_STREAM_LINFORMER_F;
            avi_gaussian_matrix(out, p.s, n, 1.0 / sqrt((double)p.s), avi_stream(stream, (uint32_t)p.seed));
        }
        break;
    case AV_RANDOM_DWC: {
        double *w = work;
        avi_dwc_weights(w, &p);
        for (int t = 0; t < p.dwc_kernel; t++) out[t] = (float)w[t];
        break;
    }
    }
    return AV_OK;
}
