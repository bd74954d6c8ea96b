/*
 * The /v1/embeddings exchange of the client of OpenAI-compatible embedding servers
 * (embed_openai.c), for texts and images alike. It turns a base URL into
 * the endpoint and the form shown to people, and it posts one request and checks its
 * answer {"data": [{"embedding": [...], "index": i}, ...]}: one vector per input, every
 * index once, all of one dimension, finite numbers, put in input order by index. What may
 * pass (no connection, timeouts, 5xx, an answer cut short or not JSON) is VT_EIO; what
 * will not (4xx such as a missing model, a wrong dimension or count) is VT_EINVAL. Used
 * only by code that links libcurl (vidtheque-full), never by the front.
 */
#ifndef VT_EMBED_HTTP_H
#define VT_EMBED_HTTP_H

#include <jansson.h>
#include <stddef.h>

/*
 * From base_url ("http://host:port", with a path prefix, or ending in "/v1"), make
 * *url = "{base}/v1/embeddings" and *shown = the base without trailing slashes or
 * "user:password@" (for provenance and ids); both caller-frees. VT_EINVAL with one line
 * in err (what names the client, e.g. "openai embeddings") when base_url is not http(s).
 */
int vt_embed_http_target(const char *what, const char *base_url, char **url, char **shown,
                         char *err, size_t errlen);

struct vt_embed_http_call {
    const char *url;     /* the endpoint, from vt_embed_http_target */
    const char *api_key; /* Bearer token when non-empty; never put in a message */
    double timeout_s;    /* per request (0: 60 s) */
    int retries;         /* attempts on 5xx/timeouts (0: 3) */
    size_t max_bytes;    /* answer cap (0: vt_http's default) */
};

/*
 * POST req (borrowed JSON, sent compact) and read n vectors into out (n * *dim floats
 * in input order; out may be NULL to only learn the dimension). *dim == 0: learnt from
 * the answer (1..65536); else every vector must have *dim values. noun names the inputs
 * in messages ("texts", "images"). 0 or VT_EIO / VT_EINVAL with one line in err.
 */
int vt_embed_http_post(const struct vt_embed_http_call *c, json_t *req, size_t n, const char *noun,
                       int *dim, float *out, char *err, size_t errlen);

#endif
