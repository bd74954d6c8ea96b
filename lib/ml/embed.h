/*
 * Text embeddings: one small interface in front of every backend that turns texts
 * into vectors. A backend is chosen by a spec (from the library's config, config.h):
 *
 *   model2vec  in-process static embeddings read from a Model2Vec folder
 *              (model.safetensors + tokenizer.json), embed_m2v.c
 *   openai     an OpenAI-compatible server, POST {base}/v1/embeddings
 *              (Ollama, llama.cpp's server, TEI, vLLM, LocalAI, Infinity), embed_openai.c
 *
 * Vectors are float32, L2-normalised by this interface whatever the backend returns,
 * so that a dot product is the cosine. Two handles give comparable vectors only when
 * their vt_embed_id() is equal; the store keeps that id beside every vector.
 *
 * A handle is used by one thread at a time.
 */
#ifndef VT_EMBED_H
#define VT_EMBED_H

#include <stddef.h>

struct vt_embed;

struct vt_embed_spec {
    const char *backend;  /* "model2vec" or "openai" */
    const char *model;    /* model2vec: the model folder; openai: the server's model name */
    const char *base_url; /* openai: "http://host:port" (or with a path prefix) */
    const char *api_key;  /* openai: sent as a Bearer token when non-NULL and non-empty */
    double timeout_s;     /* openai: per request (0: 60 s) */
    int batch;            /* openai: texts per request (0: 64) */
    int retries;          /* openai: attempts per request on 5xx/timeouts (0: 3) */
};

/*
 * Open a backend. On failure returns a vidtheque error code (VT_EINVAL: a spec that
 * cannot work; VT_ENOTFOUND: no such model folder; VT_EIO: a server that cannot be
 * reached, worth retrying later) with one line in err.
 */
int vt_embed_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err,
                  size_t errlen);
void vt_embed_close(struct vt_embed *e);

/* Dimension of the vectors (known after open: a server is asked once). */
int vt_embed_dim(const struct vt_embed *e);
/* What ran, for provenance: e.g. "model2vec potion-base-8M (256 d)",
 * "openai nomic-embed-text at http://127.0.0.1:11434 (768 d)". Static for e's life. */
const char *vt_embed_model(const struct vt_embed *e);
/* Identity of the vector space: equal ids, comparable vectors. E.g.
 * "model2vec:<sha256 of model.safetensors, 16 hex>" or "openai:<model>@<base_url>". */
const char *vt_embed_id(const struct vt_embed *e);

/*
 * Embed n texts (UTF-8, NUL-terminated) into out, n * dim floats, each vector
 * L2-normalised (all zero when a text has no token). 0 or an error code with one
 * line in err: VT_EIO for what may pass (timeouts, 5xx, connection refused, a
 * truncated answer), VT_EINVAL for what will not (4xx, model missing, wrong
 * dimension, a count that does not match).
 */
int vt_embed_texts(struct vt_embed *e, const char *const *texts, size_t n, float *out, char *err,
                   size_t errlen);

/* L2-normalise v in place (left as is when all zero). */
void vt_vec_normalize(float *v, int dim);

#endif
