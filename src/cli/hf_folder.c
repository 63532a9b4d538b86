/* hf_folder.c: a Hugging Face model folder for the CLI's --model DIR (docs/hf.md "The CLI"): config.json,
 * model.safetensors or the shards model.safetensors.index.json names, read whole and bound by the library.
 * Every file is checked by the library's readers before anything is computed; a refusal is one sentence
 * naming the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

int avcli_is_dir(const char *path) {
    struct stat sb;
    return path && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static char *join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

void avcli_hf_close(avcli_hf *h) {
    for (int i = 0; i < h->n; i++) free(h->buf[i]), free(h->work[i]);
    free(h->buf), free(h->work), free(h->files), free(h->ixwork), free(h->bindwork);
    memset(h, 0, sizeof *h);
}

/* One shard: read and parsed into h's slot i. */
static int open_shard(avcli_hf *h, int i, const char *dir, const char *name) {
    char *path = join(dir, name);
    if (!path) return avcli_fail_system("out of memory");
    size_t len;
    int code = avcli_read_file("--model", path, &h->buf[i], &len);
    if (!code) {
        size_t wb = av_st_work(h->buf[i], len);
        if (!wb) code = avcli_fail("--model %s: %s", path, av_st_error());
        else if (!(h->work[i] = malloc(wb))) code = avcli_fail_system("out of memory");
        else if (av_st_parse(&h->files[i], h->work[i], wb, h->buf[i], len) != AV_OK)
            code = avcli_fail("--model %s: %s", path, av_st_error());
    }
    free(path);
    return code;
}

int avcli_hf_open(avcli_hf *h, av_model *m, const char *dir, int max_seq) {
    memset(h, 0, sizeof *h);
    char *cpath = join(dir, "config.json"), *ipath = join(dir, "model.safetensors.index.json");
    unsigned char *cbuf = NULL, *ibuf = NULL;
    size_t clen = 0, ilen = 0;
    int code = 0, st;
    if (!cpath || !ipath) { code = avcli_fail_system("out of memory"); goto done; }
    if (!exists(cpath)) {
        code = avcli_fail("--model %s: the folder has no config.json (a Hugging Face model folder holds config.json, "
                          "model.safetensors and tokenizer.json)", dir);
        goto done;
    }
    if ((code = avcli_read_file("--model", cpath, &cbuf, &clen))) goto done;
    if ((st = av_hf_config_parse(&h->cfg, cbuf, clen)) != AV_OK) {
        code = avcli_fail("--model %s: %s", cpath, st == AV_ERR_FORMAT ? av_model_error() : av_status_string(st));
        goto done;
    }
    if (exists(ipath)) {
        if ((code = avcli_read_file("--model", ipath, &ibuf, &ilen))) goto done;
        size_t wb = av_hf_index_work(ibuf, ilen);
        if (!wb) { code = avcli_fail("--model %s: %s", ipath, av_model_error()); goto done; }
        if (!(h->ixwork = malloc(wb))) { code = avcli_fail_system("out of memory"); goto done; }
        if ((st = av_hf_index_parse(&h->ix, h->ixwork, wb, ibuf, ilen)) != AV_OK) {
            code = avcli_fail("--model %s: %s", ipath, st == AV_ERR_FORMAT ? av_model_error() : av_status_string(st));
            goto done;
        }
        h->has_ix = 1;
        h->n = h->ix.n_shards;
    } else h->n = 1;
    h->buf = calloc((size_t)h->n, sizeof *h->buf), h->work = calloc((size_t)h->n, sizeof *h->work);
    h->files = calloc((size_t)h->n, sizeof *h->files);
    if (!h->buf || !h->work || !h->files) { code = avcli_fail_system("out of memory"); goto done; }
    for (int i = 0; i < h->n && !code; i++) {
        const char *name = h->has_ix ? h->ix.shard[i] : "model.safetensors";
        char *p = join(dir, name);
        if (!p) { code = avcli_fail_system("out of memory"); break; }
        if (!exists(p))
            code = h->has_ix ? avcli_fail("--model %s: the index names the shard %s, which the folder does not hold", dir, name)
                             : avcli_fail("--model %s: the folder has neither model.safetensors nor model.safetensors.index.json", dir);
        free(p);
        if (!code) code = open_shard(h, i, dir, name);
    }
    if (code) goto done;
    size_t bw = av_hf_model_work(&h->cfg);
    if (!bw || !(h->bindwork = malloc(bw))) { code = avcli_fail_system("out of memory"); goto done; }
    st = av_hf_model_bind(m, &h->cfg, h->files, h->n, h->has_ix ? &h->ix : NULL, max_seq, h->bindwork, bw);
    if (st != AV_OK)
        code = avcli_fail("--model %s: %s", dir, st == AV_ERR_FORMAT || st == AV_ERR_NONFINITE ? av_model_error() : av_status_string(st));
done:
    if (code) avcli_hf_close(h);
    free(cpath), free(ipath), free(cbuf), free(ibuf);
    return code;
}
