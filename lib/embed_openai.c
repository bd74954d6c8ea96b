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
 * The API key goes in the Authorization header only, never in a message.
 */
#include "embed_int.h"
#include "http.h"
#include "util.h"
#include "vidtheque.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BATCH 64
#define MAX_BATCH     4096
#define MAX_DIM       65536
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
    json_t *req = json_object(), *input = json_array(), *root = NULL, *data;
    struct vt_http_resp resp = {0};
    unsigned char *seen = NULL;
    char *body = NULL;
    json_error_t jerr;
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
    body = json_dumps(req, JSON_COMPACT);
    if (!body) {
        rc = vt_err(err, errlen, VT_EINVAL, "embeddings: cannot encode the request");
        goto out;
    }
    {
        struct vt_http_req hr = {.method = "POST",
                                 .url = p->url,
                                 .bearer = p->api_key,
                                 .content_type = "application/json",
                                 .body = body,
                                 .body_len = strlen(body),
                                 .timeout_s = p->timeout_s,
                                 .retries = p->retries};

        rc = vt_http_do(&hr, &resp, err, errlen);
        if (rc)
            goto out;
    }
    root = json_loadb(resp.body, resp.len, 0, &jerr);
    if (!root) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': answer is not JSON (%s, at byte %d of %zu)", p->url,
                    jerr.text, jerr.position, resp.len);
        goto out;
    }
    data = json_object_get(root, "data");
    if (!json_is_array(data)) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': answer has no \"data\" array", p->url);
        goto out;
    }
    if (json_array_size(data) != n) {
        rc = vt_err(err, errlen, VT_EINVAL, "'%s': %zu vectors for %zu texts", p->url,
                    json_array_size(data), n);
        goto out;
    }
    seen = vt_xcalloc(n, 1);
    for (size_t k = 0; k < n; k++) {
        json_t *item = json_array_get(data, k), *idx, *vec;
        size_t i = k, d;

        idx = json_object_get(item, "index");
        vec = json_object_get(item, "embedding");
        if (idx) {
            json_int_t v = json_is_integer(idx) ? json_integer_value(idx) : -1;

            if (v < 0 || (size_t)v >= n) {
                rc = vt_err(err, errlen, VT_EINVAL, "'%s': item %zu has index out of 0..%zu",
                            p->url, k, n - 1);
                goto out;
            }
            i = (size_t)v;
        }
        if (seen[i]) {
            rc = vt_err(err, errlen, VT_EINVAL, "'%s': index %zu given twice", p->url, i);
            goto out;
        }
        seen[i] = 1;
        if (!json_is_array(vec)) {
            rc =
                vt_err(err, errlen, VT_EIO, "'%s': item %zu has no \"embedding\" array", p->url, k);
            goto out;
        }
        d = json_array_size(vec);
        if (*dim == 0) {
            if (d == 0 || d > MAX_DIM) {
                rc = vt_err(err, errlen, VT_EINVAL, "'%s': vectors of dimension %zu", p->url, d);
                goto out;
            }
            *dim = (int)d;
        }
        if (d != (size_t)*dim) {
            rc = vt_err(err, errlen, VT_EINVAL,
                        "'%s': wrong dimension: a vector of %zu where the model gave %d", p->url, d,
                        *dim);
            goto out;
        }
        for (size_t j = 0; j < d; j++) {
            json_t *x = json_array_get(vec, j);
            double v = json_number_value(x);

            if (!json_is_number(x) || !isfinite(v) || fabs(v) > 3.0e38) {
                rc = vt_err(err, errlen, VT_EIO, "'%s': item %zu: element %zu is not a number",
                            p->url, k, j);
                goto out;
            }
            if (out)
                out[i * d + j] = (float)v;
        }
    }
    rc = 0;
out:
    free(seen);
    json_decref(root);
    vt_http_resp_release(&resp);
    free(body);
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
    char *base;
    size_t len;
    int dim = 0, rc;

    if (!spec->model || !*spec->model)
        return vt_err(err, errlen, VT_EINVAL, "openai embeddings: no model name configured");
    if (!spec->base_url || !*spec->base_url)
        return vt_err(err, errlen, VT_EINVAL, "openai embeddings: no server URL configured");
    if (strncmp(spec->base_url, "http://", 7) && strncmp(spec->base_url, "https://", 8))
        return vt_err(err, errlen, VT_EINVAL, "'%s': not an http(s) URL", spec->base_url);
    if (spec->batch < 0 || spec->batch > MAX_BATCH)
        return vt_err(err, errlen, VT_EINVAL, "'%d': bad embedding batch size", spec->batch);
    base = vt_xstrdup(spec->base_url);
    len = strlen(base);
    while (len > 0 && base[len - 1] == '/')
        base[--len] = 0;

    p = vt_xcalloc(1, sizeof(*p));
    /* "https://api.openai.com/v1" is also how people write the base */
    p->url = vt_xasprintf("%s%s/embeddings", base,
                          len >= 3 && !strcmp(base + len - 3, "/v1") ? "" : "/v1");
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
    vt_http_url_drop_userinfo(base);
    e->model = vt_xasprintf("openai %s at %s (%d d)", p->model, base, dim);
    e->id = vt_xasprintf("openai:%s@%s", p->model, base);
    e->embed = openai_embed;
    e->close = openai_close;
    e->priv = p;
    free(base);
    *out = e;
    return 0;
}
