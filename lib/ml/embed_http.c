/*
 * The /v1/embeddings exchange of the text and image client of OpenAI-compatible servers
 * (embed_http.h, embed_openai.c): the endpoint made from a base URL, and one request whose
 * answer is checked item by item before any vector is trusted.
 */
#include "ml/embed_http.h"

#include "base/http.h"
#include "base/util.h"
#include "vidtheque.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIM 65536

int vt_embed_http_target(const char *what, const char *base_url, char **url, char **shown,
                         char *err, size_t errlen)
{
    char *base;
    size_t len;

    if (!base_url || !*base_url)
        return vt_err(err, errlen, VT_EINVAL, "%s: no server URL configured", what);
    if (strncmp(base_url, "http://", 7) && strncmp(base_url, "https://", 8))
        return vt_err(err, errlen, VT_EINVAL, "'%s': not an http(s) URL", base_url);
    base = vt_xstrdup(base_url);
    len = strlen(base);
    while (len > 0 && base[len - 1] == '/')
        base[--len] = 0;
    /* "https://api.openai.com/v1" is also how people write the base */
    *url = vt_xasprintf("%s%s/embeddings", base,
                        len >= 3 && !strcmp(base + len - 3, "/v1") ? "" : "/v1");
    vt_http_url_drop_userinfo(base);
    *shown = base;
    return 0;
}

/* Check one item of "data" (the k-th of n) and copy its vector into out's row. */
static int read_item(const char *url, json_t *item, size_t k, size_t n, unsigned char *seen,
                     int *dim, float *out, char *err, size_t errlen)
{
    json_t *idx = json_object_get(item, "index"), *vec = json_object_get(item, "embedding");
    size_t i = k, d;

    if (idx) {
        json_int_t v = json_is_integer(idx) ? json_integer_value(idx) : -1;

        if (v < 0 || (size_t)v >= n)
            return vt_err(err, errlen, VT_EINVAL, "'%s': item %zu has index out of 0..%zu", url, k,
                          n - 1);
        i = (size_t)v;
    }
    if (seen[i])
        return vt_err(err, errlen, VT_EINVAL, "'%s': index %zu given twice", url, i);
    seen[i] = 1;
    if (!json_is_array(vec))
        return vt_err(err, errlen, VT_EIO, "'%s': item %zu has no \"embedding\" array", url, k);
    d = json_array_size(vec);
    if (*dim == 0) {
        if (d == 0 || d > MAX_DIM)
            return vt_err(err, errlen, VT_EINVAL, "'%s': vectors of dimension %zu", url, d);
        *dim = (int)d;
    }
    if (d != (size_t)*dim)
        return vt_err(err, errlen, VT_EINVAL,
                      "'%s': wrong dimension: a vector of %zu where the model gave %d", url, d,
                      *dim);
    for (size_t j = 0; j < d; j++) {
        json_t *x = json_array_get(vec, j);
        double v = json_number_value(x);

        if (!json_is_number(x) || !isfinite(v) || fabs(v) > 3.0e38)
            return vt_err(err, errlen, VT_EIO, "'%s': item %zu: element %zu is not a number", url,
                          k, j);
        if (out)
            out[i * d + j] = (float)v;
    }
    return 0;
}

int vt_embed_http_post(const struct vt_embed_http_call *c, json_t *req, size_t n, const char *noun,
                       int *dim, float *out, char *err, size_t errlen)
{
    struct vt_http_resp resp = {0};
    unsigned char *seen = NULL;
    json_t *root = NULL, *data;
    char *body = json_dumps(req, JSON_COMPACT);
    json_error_t jerr;
    int rc;

    if (!body)
        return vt_err(err, errlen, VT_EINVAL, "embeddings: cannot encode the request");
    {
        struct vt_http_req hr = {.method = "POST",
                                 .url = c->url,
                                 .bearer = c->api_key,
                                 .content_type = "application/json",
                                 .body = body,
                                 .body_len = strlen(body),
                                 .timeout_s = c->timeout_s,
                                 .max_bytes = c->max_bytes,
                                 .retries = c->retries};

        rc = vt_http_do(&hr, &resp, err, errlen);
        if (rc)
            goto out;
    }
    root = json_loadb(resp.body, resp.len, 0, &jerr);
    if (!root) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': answer is not JSON (%s, at byte %d of %zu)", c->url,
                    jerr.text, jerr.position, resp.len);
        goto out;
    }
    data = json_object_get(root, "data");
    if (!json_is_array(data)) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': answer has no \"data\" array", c->url);
        goto out;
    }
    if (json_array_size(data) != n) {
        rc = vt_err(err, errlen, VT_EINVAL, "'%s': %zu vectors for %zu %s", c->url,
                    json_array_size(data), n, noun);
        goto out;
    }
    seen = vt_xcalloc(n, 1);
    for (size_t k = 0; k < n; k++) {
        rc = read_item(c->url, json_array_get(data, k), k, n, seen, dim, out, err, errlen);
        if (rc)
            goto out;
    }
    rc = 0;
out:
    free(seen);
    json_decref(root);
    vt_http_resp_release(&resp);
    free(body);
    return rc;
}
