/*
 * imgembeddump: the embedding interface (embed.h) for images alone, for tests: opens a
 * backend, embeds the JPEG files named on the lines of stdin (or, with -T, the lines of
 * stdin as texts, through vt_embed_texts) in batches as the backend makes them, and
 * prints {"model", "id", "dim", "has_text", "vectors": [[...], ...]} on stdout. On
 * failure it prints "imgembeddump: code N: MESSAGE" (N the VT_E* code) on stderr and
 * exits 1.
 *
 * Usage: imgembeddump [-b BATCH] [-t TIMEOUT_S] [-r RETRIES] [-s API_STYLE] [-j] [-T]
 *                     BACKEND MODEL [BASE_URL]
 *   -j  the model embeds text into the images' space (spec.joint_text)
 *   -T  embed the lines of stdin as texts instead of reading them as files
 * The API key, if any, comes from $EMBEDDUMP_API_KEY (so it is on no command line).
 */
#include "base/util.h"
#include "media/imgload.h"
#include "ml/embed.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The openai backend is weakly referenced by embed.c (the front binary goes without
 * libcurl): naming it here links it in. */
void *const imgembeddump_backends[] = {(void *)&vt_embed_openai};

int main(int argc, char **argv)
{
    struct vt_embed_spec spec = {.kind = VT_EMBED_IMAGES};
    struct vt_embed *e = NULL;
    struct vt_image_buf *bufs = NULL;
    struct vt_image *imgs = NULL;
    char **lines = NULL, *line = NULL, err[1024] = "";
    size_t n = 0, cap = 0, lcap = 0;
    float *vecs = NULL;
    json_t *out, *arr;
    int i = 1, rc = 0, status = 1, as_text = 0, dim;
    ssize_t len;

    while (i < argc && argv[i][0] == '-') {
        if (!strcmp(argv[i], "-j")) {
            spec.joint_text = 1;
            i++;
            continue;
        }
        if (!strcmp(argv[i], "-T")) {
            as_text = 1;
            i++;
            continue;
        }
        if (i + 1 >= argc)
            break;
        if (!strcmp(argv[i], "-b"))
            spec.batch = (int)strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-t"))
            spec.timeout_s = strtod(argv[i + 1], NULL);
        else if (!strcmp(argv[i], "-r"))
            spec.retries = (int)strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-s"))
            spec.api_style = argv[i + 1];
        else
            break;
        i += 2;
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: imgembeddump [-b N] [-t S] [-r N] [-s STYLE] [-j] [-T] "
                        "BACKEND MODEL [BASE_URL]\n");
        return 2;
    }
    spec.backend = argv[i];
    spec.model = argv[i + 1];
    spec.base_url = argc - i > 2 ? argv[i + 2] : NULL;
    spec.api_key = getenv("EMBEDDUMP_API_KEY");
    while ((len = getline(&line, &lcap, stdin)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = 0;
        vt_grow((void **)&lines, &cap, n + 1, sizeof(*lines));
        lines[n++] = vt_xstrdup(line);
    }
    free(line);
    if (!as_text) {
        bufs = vt_xcalloc(n ? n : 1, sizeof(*bufs));
        imgs = vt_xcalloc(n ? n : 1, sizeof(*imgs));
        for (size_t k = 0; k < n && !rc; k++) {
            rc = vt_image_load_jpeg(lines[k], &bufs[k], err, sizeof(err));
            imgs[k] = (struct vt_image){bufs[k].rgb, bufs[k].width, bufs[k].height, bufs[k].stride};
        }
        if (rc)
            goto out;
    }
    rc = vt_embed_open(&spec, &e, err, sizeof(err));
    if (rc)
        goto out;
    dim = vt_embed_dim(e);
    vecs = vt_xcalloc(n ? n : 1, (size_t)dim * sizeof(*vecs));
    if (as_text)
        rc = vt_embed_texts(e, (const char *const *)lines, n, vecs, err, sizeof(err));
    else
        rc = vt_embed_images(e, imgs, n, vecs, err, sizeof(err));
    if (rc)
        goto out;
    arr = json_array();
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array();

        for (int j = 0; j < dim; j++)
            json_array_append_new(v, json_real(vecs[k * (size_t)dim + (size_t)j]));
        json_array_append_new(arr, v);
    }
    out = json_pack("{s:s, s:s, s:i, s:b, s:o}", "model", vt_embed_model(e), "id", vt_embed_id(e),
                    "dim", dim, "has_text", vt_embed_has_texts(e), "vectors", arr);
    json_dumpf(out, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(out);
    status = 0;
out:
    if (rc)
        fprintf(stderr, "imgembeddump: code %d: %s\n", rc, err);
    if (e)
        vt_embed_close(e);
    for (size_t k = 0; k < n; k++) {
        free(lines[k]);
        if (bufs)
            vt_image_buf_release(&bufs[k]);
    }
    free(lines);
    free(bufs);
    free(imgs);
    free(vecs);
    return status;
}
