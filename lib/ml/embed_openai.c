/*
 * The "openai" text-embedding backend (embed.h, embed_int.h): an OpenAI-compatible server
 * (Ollama, llama.cpp's server, TEI, vLLM, LocalAI, Infinity) asked with
 * POST {base}/v1/embeddings {"model": M, "input": [texts]} in batches of spec->batch,
 * answering {"data": [{"embedding": [...], "index": i}, ...]}. Open embeds one short probe
 * text, so the dimension is known from the start and a server that is down or lacks the
 * model fails at open rather than halfway through a video. Every answer is checked: one
 * vector per text, every index once, all of the same dimension as the probe's; the
 * vectors are put in input order by index. What may pass (no connection, timeouts, 5xx,
 * an answer cut short or not JSON) is VT_EIO; what will not (4xx such as a missing model,
 * a wrong dimension or count) is VT_EINVAL. Empty texts are not sent (servers refuse
 * them): they get the zero vector, as a text with no token does in the other backend.
 * The API key goes in the Authorization header only, never in a message. The exchange
 * itself (endpoint, request, the answer's checks) is embed_http.c, shared with the image
 * client (imgembed_openai.c).
 */
#include "ml/embed_http.h"
#include "ml/embed_int.h"
#include "base/util.h"
#include "vidtheque.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BATCH 64
#define MAX_BATCH     4096
#define PROBE_TEXT    "hello"

struct openai_priv {
    char *url; /* {base}/v1/embeddings */
    char *model;
    char *api_key;
    double timeout_s;
    int batch, retries;
};

static int blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return 0;
    return 1;
}

/*
 * One request for texts[0..n) (none blank) into out (n * *dim floats, *dim learned when 0).
 */
static int embed_batch(struct openai_priv *p, int *dim, const char *const *texts, size_t n,
                       float *out, char *err, size_t errlen)
{
    struct vt_embed_http_call call = {
        .url = p->url, .api_key = p->api_key, .timeout_s = p->timeout_s, .retries = p->retries};
    json_t *req = json_object(), *input = json_array();
    int rc;

    for (size_t i = 0; i < n; i++) {
        json_t *s = json_string(texts[i]);

        if (!s) {
            rc = vt_err(err, errlen, VT_EINVAL, "embeddings: text %zu is not UTF-8", i);
            goto out;
        }
        json_array_append_new(input, s);
    }
    json_object_set_new(req, "model", json_string(p->model));
    json_object_set(req, "input", input);
    rc = vt_embed_http_post(&call, req, n, "texts", dim, out, err, errlen);
out:
    json_decref(input);
    json_decref(req);
    return rc;
}

static int openai_embed(struct vt_embed *e, const char *const *texts, size_t n, float *out,
                        char *err, size_t errlen)
{
    struct openai_priv *p = e->priv;
    size_t dim = (size_t)e->dim, cap = (size_t)p->batch;
    const char **batch = vt_xcalloc(cap, sizeof(*batch));
    size_t *where = vt_xcalloc(cap, sizeof(*where));
    float *vecs = vt_xmalloc(cap * dim * sizeof(*vecs));
    size_t i = 0;
    int rc = 0;

    memset(out, 0, n * dim * sizeof(*out));
    while (i < n) {
        size_t m = 0;
        int d = e->dim;

        /* the next batch of non-blank texts */
        for (; i < n && m < cap; i++) {
            if (blank(texts[i]))
                continue;
            batch[m] = texts[i];
            where[m++] = i;
        }
        if (!m)
            break;
        rc = embed_batch(p, &d, batch, m, vecs, err, errlen);
        if (rc)
            break;
        for (size_t k = 0; k < m; k++)
            memcpy(out + where[k] * dim, vecs + k * dim, dim * sizeof(*out));
    }
    free(vecs);
    free(where);
    free(batch);
    return rc;
}

static void openai_close(struct vt_embed *e)
{
    struct openai_priv *p = e->priv;

    if (!p)
        return;
    free(p->url);
    free(p->model);
    free(p->api_key);
    free(p);
    e->priv = NULL;
}

int vt_embed_openai_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err,
                         size_t errlen)
{
    const char *probe[1] = {PROBE_TEXT};
    struct openai_priv *p;
    struct vt_embed *e;
    char *url, *base;
    int dim = 0, rc;

    if (!spec->model || !*spec->model)
        return vt_err(err, errlen, VT_EINVAL, "openai embeddings: no model name configured");
    if (spec->batch < 0 || spec->batch > MAX_BATCH)
        return vt_err(err, errlen, VT_EINVAL, "'%d': bad embedding batch size", spec->batch);
    rc = vt_embed_http_target("openai embeddings", spec->base_url, &url, &base, err, errlen);
    if (rc)
        return rc;

    p = vt_xcalloc(1, sizeof(*p));
    p->url = url;
    p->model = vt_xstrdup(spec->model);
    p->api_key = vt_xstrdup_or_null(spec->api_key);
    p->timeout_s = spec->timeout_s;
    p->batch = spec->batch > 0 ? spec->batch : DEFAULT_BATCH;
    p->retries = spec->retries;

    rc = embed_batch(p, &dim, probe, 1, NULL, err, errlen);
    if (rc) {
        struct vt_embed tmp = {.priv = p};

        openai_close(&tmp);
        free(base);
        return rc;
    }
    e = vt_xcalloc(1, sizeof(*e));
    e->dim = dim;
    e->model = vt_xasprintf("openai %s at %s (%d d)", p->model, base, dim);
    e->id = vt_xasprintf("openai:%s@%s", p->model, base);
    e->embed = openai_embed;
    e->close = openai_close;
    e->priv = p;
    free(base);
    *out = e;
    return 0;
}
