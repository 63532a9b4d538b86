/* cli.h: the attnviz command-line tool's shared pieces (native only; not part of the library). */
#ifndef ATTNVIZ_CLI_H
#define ATTNVIZ_CLI_H

#include <stdio.h>
#include "attnviz.h"

/* Inputs common to `attnviz matrix` and `attnviz readouts`, parsed by avcli_parse_inputs. */
typedef struct avcli_inputs {
    av_params prm;          /* variant, causal and knobs from the flags (unresolved: zeros are defaults) */
    float *Q, *K, *V;       /* n×d, n×d, n×dv (V NULL when --v was not given); owned, freed by avcli_free */
    float *hedgehog_w;      /* d×cols from --hedgehog-w, or NULL */
    int n, d, dv;
    const char *out;        /* -o path, or NULL */
    int accurate;           /* --accurate: the accurate spectrum route (readouts) */
    double tau;             /* --tau (readouts), 0 → 0.1 */
} avcli_inputs;

/* Parse the shared flags (see `attnviz --help`), load the .npy files (selecting --layer/--head for
 * 4-D model tensors). On failure prints one line to stderr and returns 2; 0 on success. */
int avcli_parse_inputs(avcli_inputs *in, int argc, char **argv);
void avcli_free(avcli_inputs *in);

/* `attnviz readouts`: print one JSON object to `out` (readouts_cmd.c). Returns the exit status. */
int avcli_cmd_readouts(const avcli_inputs *in, FILE *out);

/* Write a float32 C-order .npy file. Returns AV_OK or AV_ERR_IO. */
int avcli_write_npy_f32(const char *path, const float *data, const int64_t *shape, int ndim);

#endif
