/* generate_cmd.c: `attnviz generate`: Q, K, V from one of the library's generators (av_generate), written
 * as q.npy, k.npy, v.npy into a folder made only when they are ready (output.c). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int avcli_cmd_generate(int argc, char **argv) {
    const char *names[6] = {"--gen", "--n", "--d", "--std", "--seed", "-o"}, *val[6] = {0};
    for (int i = 0; i < argc; i++) {
        int f = 0;
        while (f < 6 && strcmp(argv[i], names[f])) f++;
        if (f == 6) return avcli_fail("%s: unknown option for generate (see attnviz --help)", avcli_brief(argv[i]));
        if (val[f]) return avcli_fail("%s: given twice", argv[i]);
        if (i + 1 >= argc) return avcli_fail("%s: needs a value", argv[i]);
        val[f] = argv[++i];
    }
    int gen = val[0] ? av_generator_from_name(val[0]) : AV_GEN_GAUSSIAN;
    long long n, d, seed = 0;
    double std = 1.0;
    if (gen < 0) return avcli_fail("--gen %s: unknown generator (gaussian, clustered, local, lowrank, sink)", avcli_brief(val[0]));
    if (!val[1]) return avcli_fail("--n: required (the sequence length, 1..%d)", AV_MAX_N);
    if (!avcli_parse_long(val[1], 1, AV_MAX_N, &n)) return avcli_fail("--n %s: not an integer in 1..%d", avcli_brief(val[1]), AV_MAX_N);
    if (!val[2]) return avcli_fail("--d: required (the head dimension, 1..%d)", AV_MAX_D);
    if (!avcli_parse_long(val[2], 1, AV_MAX_D, &d)) return avcli_fail("--d %s: not an integer in 1..%d", avcli_brief(val[2]), AV_MAX_D);
    if (val[3] && !(avcli_parse_double(val[3], &std) && std > 0 && std <= 1e6)) return avcli_fail("--std %s: not a number in (0, 1e6]", avcli_brief(val[3]));
    if (val[4] && !avcli_parse_long(val[4], 0, 4294967295LL, &seed)) return avcli_fail("--seed %s: not an integer in 0..4294967295", avcli_brief(val[4]));
    if (!val[5]) return avcli_fail("-o: required (the output folder)");
    const char *dir = val[5];
    int code = avcli_dir_check("-o", dir), made = 0;
    if (code) return code;
    size_t count = (size_t)n * (size_t)d, len = strlen(dir) + 8;
    float *x[3] = {malloc(sizeof(float) * count), malloc(sizeof(float) * count), malloc(sizeof(float) * count)};
    char *paths[3] = {malloc(len), malloc(len), malloc(len)};
    if (!x[0] || !x[1] || !x[2] || !paths[0] || !paths[1] || !paths[2]) code = avcli_fail_system("out of memory");
    int st = code ? AV_OK : av_generate(x[0], x[1], x[2], (int)n, (int)d, gen, std, (uint32_t)seed);
    if (!code && st != AV_OK) code = avcli_fail("generate: %s", av_status_string(st));
    /* the folder only now, when there is something to put in it; removed again if the files fail */
    if (!code) code = avcli_dir_make("-o", dir, &made);
    if (!code) {
        const char *names[3] = {"q.npy", "k.npy", "v.npy"};
        avcli_file files[3];
        for (int t = 0; t < 3; t++) {
            snprintf(paths[t], len, "%s/%s", dir, names[t]);
            files[t] = (avcli_file){"-o", paths[t], x[t], {n, d}, 2, NULL, NULL};
        }
        code = avcli_save(files, 3);
        avcli_dir_done(dir, made, code != 0);
    }
    for (int t = 0; t < 3; t++) { free(x[t]); free(paths[t]); }
    return code;
}
