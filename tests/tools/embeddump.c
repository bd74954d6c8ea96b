/*
 * embeddump: the text-embedding interface (embed.h) alone, for tests: opens a backend,
 * embeds the lines of stdin (one text per line, in batches as the backend makes them)
 * and prints {"model", "id", "dim", "vectors": [[...], ...]} on stdout. On failure it
 * prints "embeddump: code N: MESSAGE" (N the VT_E* code) on stderr and exits 1.
 *
 * Usage: embeddump [-b BATCH] [-t TIMEOUT_S] [-r RETRIES] BACKEND MODEL [BASE_URL]
 * The API key, if any, comes from $EMBEDDUMP_API_KEY (so it is on no command line).
 */
#include "base/util.h"
#include "ml/embed.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The openai backend is weakly referenced by embed.c (the front binary goes without
 * libcurl): naming it here links it in. */
void *const embeddump_backends[] = {(void *)&vt_embed_openai};

int main(int argc, char **argv)
{
    struct vt_embed_spec spec = {0};
    struct vt_embed *e = NULL;
    char **texts = NULL, *line = NULL, err[1024] = "";
    size_t n = 0, cap = 0, lcap = 0;
    float *vecs = NULL;
    json_t *out, *arr;
    int i = 1, rc, status = 1;
    ssize_t len;

    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "-b"))
            spec.batch = (int)strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-t"))
            spec.timeout_s = strtod(argv[i + 1], NULL);
        else if (!strcmp(argv[i], "-r"))
            spec.retries = (int)strtol(argv[i + 1], NULL, 10);
        else
            break;
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: embeddump [-b N] [-t S] [-r N] BACKEND MODEL [BASE_URL]\n");
        return 2;
    }
    spec.backend = argv[i];
    spec.model = argv[i + 1];
    spec.base_url = argc - i > 2 ? argv[i + 2] : NULL;
    spec.api_key = getenv("EMBEDDUMP_API_KEY");
    while ((len = getline(&line, &lcap, stdin)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = 0;
        vt_grow((void **)&texts, &cap, n + 1, sizeof(*texts));
        texts[n++] = vt_xstrdup(line);
    }
    free(line);
    rc = vt_embed_open(&spec, &e, err, sizeof(err));
    if (rc)
        goto out;
    vecs = vt_xcalloc(n ? n : 1, (size_t)vt_embed_dim(e) * sizeof(*vecs));
    rc = vt_embed_texts(e, (const char *const *)texts, n, vecs, err, sizeof(err));
    if (rc)
        goto out;
    arr = json_array();
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array();

        for (int j = 0; j < vt_embed_dim(e); j++)
            json_array_append_new(v, json_real(vecs[k * (size_t)vt_embed_dim(e) + (size_t)j]));
        json_array_append_new(arr, v);
    }
    out = json_pack("{s:s, s:s, s:i, s:o}", "model", vt_embed_model(e), "id", vt_embed_id(e), "dim",
                    vt_embed_dim(e), "vectors", arr);
    json_dumpf(out, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(out);
    status = 0;
out:
    if (rc)
        fprintf(stderr, "embeddump: code %d: %s\n", rc, err);
    if (e)
        vt_embed_close(e);
    for (size_t k = 0; k < n; k++)
        free(texts[k]);
    free(texts);
    free(vecs);
    return status;
}
