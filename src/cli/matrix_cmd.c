/* matrix_cmd.c: `attnviz matrix`: M by av_matrix, and with --out-o the output O by the path --path
 * names (docs/recurrent.md), written as .npy files into place (output.c). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* O by the path --path names (docs/recurrent.md), M by av_matrix: the quadratic path computes both at once. */
static int output_by_path(float *O, float *M, const avcli_inputs *in, int path) {
    int n = in->n, d = in->d, dv = in->dv;
    if (path == AV_PATH_QUADRATIC) {
        size_t wb = av_attend_work(&in->prm, n, d, dv);
        void *w = wb ? malloc(wb) : NULL;
        int st = w ? av_attend(O, M, in->Q, in->K, in->V, n, d, dv, &in->prm, w, wb) : wb ? AV_ERR_NOMEM : AV_ERR_TOO_LARGE;
        free(w);
        return st;
    }
    size_t wm = av_matrix_work(&in->prm, n, d);
    size_t wb = path == AV_PATH_LINEAR ? av_linear_work(&in->prm, n, d, dv)
              : path == AV_PATH_RECURRENT ? av_recurrent_work(&in->prm, n, d, dv) : av_chunkwise_work(&in->prm, n, d, dv);
    if (wb == 0) { /* the reason, from a call with no workspace (the arguments are checked first) */
        int st = path == AV_PATH_LINEAR ? av_linear(O, in->Q, in->K, in->V, n, d, dv, &in->prm, NULL, 0)
               : path == AV_PATH_RECURRENT ? av_recurrent(O, in->Q, in->K, in->V, n, d, dv, &in->prm, NULL, 0)
               : av_chunkwise(O, in->Q, in->K, in->V, n, d, dv, &in->prm, NULL, 0);
        return st < 0 ? st : AV_ERR_TOO_LARGE;
    }
    void *w = malloc(wb > wm ? wb : wm);
    if (!w) return AV_ERR_NOMEM;
    int st = av_matrix(M, in->Q, in->K, n, d, &in->prm, w, wm);
    if (st >= 0) {
        int so = path == AV_PATH_LINEAR ? av_linear(O, in->Q, in->K, in->V, n, d, dv, &in->prm, w, wb)
               : path == AV_PATH_RECURRENT ? av_recurrent(O, in->Q, in->K, in->V, n, d, dv, &in->prm, w, wb)
               : av_chunkwise(O, in->Q, in->K, in->V, n, d, dv, &in->prm, w, wb);
        st = so < 0 || so > st ? so : st;
    }
    free(w);
    return st;
}

int avcli_cmd_matrix(int argc, char **argv) {
    const char *out_o = NULL;
    int path = AV_PATH_QUADRATIC;
    char **rest = malloc(sizeof(char *) * (size_t)(argc + 1));
    int nrest = 0;
    if (!rest) return avcli_fail_system("out of memory");
    for (int i = 0; i < argc; i++) { /* --out-o is matrix's own; the rest are the shared flags */
        if (strcmp(argv[i], "--out-o") == 0) {
            if (out_o) { free(rest); return avcli_fail("--out-o: given twice"); }
            if (i + 1 >= argc) { free(rest); return avcli_fail("--out-o: needs a value"); }
            out_o = argv[++i];
        } else if (strcmp(argv[i], "--path") == 0) {
            static const char *const NAMES[] = {"quadratic", "linear", "recurrent", "chunkwise"};
            if (i + 1 >= argc) { free(rest); return avcli_fail("--path: needs a value"); }
            path = -1;
            for (int k = 0; k < 4; k++)
                if (strcmp(argv[i + 1], NAMES[k]) == 0) path = k;
            if (path < 0) {
                free(rest);
                return avcli_fail("--path %s: not one of quadratic, linear, recurrent, chunkwise", avcli_brief(argv[i + 1]));
            }
            i++;
        } else if (strcmp(argv[i], "--accurate") == 0 || strcmp(argv[i], "--tau") == 0) {
            free(rest);
            return avcli_fail("%s: applies to readouts only", argv[i]);
        } else {
            rest[nrest++] = argv[i];
        }
    }
    avcli_inputs in;
    int st = avcli_parse_inputs(&in, nrest, rest);
    free(rest);
    if (st) return st;
    int code = 0, n = in.n;
    float *M = NULL, *O = NULL;
    void *work = NULL;
    if (!in.out) { code = avcli_fail("-o: required (the output M.npy)"); goto done; }
    if (out_o && !in.V) { code = avcli_fail("--out-o %s: needs --v V.npy", out_o); goto done; }
    if (out_o && (code = avcli_out_check("--out-o", out_o))) goto done;
    if (path != AV_PATH_QUADRATIC && !out_o) { code = avcli_fail("--path: chooses how --out-o's O is computed; give --out-o"); goto done; }
    size_t wb = av_matrix_work(&in.prm, n, in.d);
    M = malloc(sizeof(float) * (size_t)n * n);
    O = out_o ? malloc(sizeof(float) * (size_t)n * in.dv) : NULL;
    work = malloc(wb ? wb : 1);
    if (!M || !work || (out_o && !O)) { code = avcli_fail_system("out of memory (n = %d)", n); goto done; }
    st = out_o ? output_by_path(O, M, &in, path) : av_matrix(M, in.Q, in.K, n, in.d, &in.prm, work, wb);
    if (st == AV_ERR_NOMEM) { code = avcli_fail_system("out of memory (n = %d)", n); goto done; }
    if (st < 0) {
        code = avcli_exit_code(st);
        fprintf(stderr, "attnviz: --variant %s: %s\n", avcli_variant_label(in.prm.variant, in.alias), av_status_string(st));
        goto done;
    }
    if (st > 0) fprintf(stderr, "attnviz: warning: %s: %s\n", avcli_variant_label(in.prm.variant, in.alias), av_status_string(st));
    avcli_file files[2] = {{"-o", in.out, M, {n, n}, 2, NULL, NULL}, {"--out-o", out_o, O, {n, in.dv}, 2, NULL, NULL}};
    code = avcli_save(files, out_o ? 2 : 1); /* both or neither */
done:
    free(M);
    free(O);
    free(work);
    avcli_free(&in);
    return code;
}
