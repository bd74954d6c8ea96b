/*
 * Embeddings: one small interface in front of every backend that turns texts or
 * pictures into vectors. A spec (from the library's config, model/stage_config.c) says what the
 * vectors are of (its kind: texts, or images) and which backend makes them:
 *
 *   model2vec  texts: in-process static embeddings read from a Model2Vec folder
 *              (model.safetensors + tokenizer.json), embed_m2v.c
 *   tflite     images: an in-process TFLite image model (MobileNet-class float32 CNNs),
 *              embed_tflite.c over tflite.c
 *   openai     both: an OpenAI-compatible server, POST {base}/v1/embeddings, embed_openai.c.
 *              Texts: Ollama, llama.cpp's server, TEI, vLLM, LocalAI, Infinity. Images:
 *              a server that embeds base64 pictures (CLIP-class: Infinity, Jina- or
 *              OpenAI-compatible); when its model puts text and images in one space
 *              (joint_text), vt_embed_texts embeds a search query into that space.
 *
 * Vectors are float32, L2-normalised by this interface whatever the backend returns (and
 * image vectors mean-centred first where the model says so), so that a dot product is the
 * cosine. Two handles give comparable vectors only when their vt_embed_id() is equal; the
 * store keeps that id beside every vector.
 *
 * A handle is used by one thread at a time (a backend may use several threads inside
 * one call).
 */
#ifndef VT_EMBED_H
#define VT_EMBED_H

#include <stddef.h>
#include <stdint.h>

struct vt_embed;

/* What a handle's vectors are of: the space it opens. */
enum vt_embed_kind {
    VT_EMBED_TEXTS = 0, /* the default: a zeroed spec is a text spec */
    VT_EMBED_IMAGES = 1,
};

#define VT_IMGEMBED_MAX_BATCH 128 /* openai images: pictures per request, at most */

/* An 8-bit RGB picture of any size: row y starts at rgb + y * stride. */
struct vt_image {
    const uint8_t *rgb;
    int width, height;
    size_t stride;
};

struct vt_embed_spec {
    enum vt_embed_kind kind;
    const char *backend;   /* texts: "model2vec" or "openai"; images: "tflite" or "openai" */
    const char *model;     /* model2vec: the model folder; tflite: the .tflite file (or a
                            * folder holding one); openai: the server's model name */
    const char *tensor;    /* tflite: the tensor that is the embedding (NULL: the input of
                            * the last layer, e.g. MobilenetV1/Logits/AvgPool_1a/AvgPool) */
    const char *base_url;  /* openai: "http://host:port" (or with a path prefix) */
    const char *api_key;   /* openai: sent as a Bearer token when non-NULL and non-empty */
    int joint_text;        /* openai images: the model embeds text into the same space */
    int threads;           /* tflite: threads per call (0: one per core) */
    const char *api_style; /* openai: the request's shape, "openai" (NULL/empty: texts as
                            * strings, images as data URLs with "modality", as Infinity takes
                            * them) or "jina" ([{"image": base64}] / [{"text": ...}]) */
    double timeout_s;      /* openai: per request (0: 60 s) */
    int batch;             /* openai: inputs per request (0: 64 texts, 16 images; at most
                            * 4096 texts, VT_IMGEMBED_MAX_BATCH images) */
    int retries;           /* openai: attempts per request on 5xx/timeouts (0: 3) */
};

/*
 * Open a backend. On failure returns a vidtheque error code (VT_EINVAL: a spec that
 * cannot work, a model file that is not a valid TFLite model, an unsupported operator;
 * VT_ENOTFOUND: no such model folder or file; VT_EIO: a server that cannot be reached,
 * worth retrying later) with one line in err.
 */
int vt_embed_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err,
                  size_t errlen);
void vt_embed_close(struct vt_embed *e);

/* Dimension of the vectors (known after open: a server is asked once). */
int vt_embed_dim(const struct vt_embed *e);
/* What ran, for provenance: e.g. "model2vec potion-base-8M (256 d)",
 * "openai nomic-embed-text at http://127.0.0.1:11434 (768 d)",
 * "tflite mobilenet_v1_0.25_224 (256 d, MobilenetV1/Logits/AvgPool_1a/AvgPool)".
 * Static for e's life. */
const char *vt_embed_model(const struct vt_embed *e);
/* Identity of the vector space: equal ids, comparable vectors. E.g.
 * "model2vec:<hash of model.safetensors, 16 hex>", "openai:<model>@<base_url>",
 * "tflite:<hash of the file>:<tensor>", "openai-image:<model>@<base_url>". */
const char *vt_embed_id(const struct vt_embed *e);

/* Whether texts can be embedded into e's space: always for a text handle; for an image
 * handle, when its model is a joint text-image one. */
int vt_embed_has_texts(const struct vt_embed *e);

/*
 * Embed n texts (UTF-8, NUL-terminated) into out, n * dim floats, each vector
 * L2-normalised (all zero when a text has no token, or is blank for a server). 0 or an
 * error code with one line in err: VT_EIO for what may pass (timeouts, 5xx, connection
 * refused, a truncated answer), VT_EINVAL for what will not (4xx, model missing, wrong
 * dimension, a count that does not match, a handle that cannot embed text, a vector
 * with NaN or infinity: such a vector is never handed back as a result).
 */
int vt_embed_texts(struct vt_embed *e, const char *const *texts, size_t n, float *out, char *err,
                   size_t errlen);

/* Embed n pictures into out (n * dim floats, each unit length) with an image handle.
 * VT_EIO for what may pass (a server), VT_EINVAL for what will not (an image of 0 pixels,
 * a wrong answer, a text handle). */
int vt_embed_images(struct vt_embed *e, const struct vt_image *imgs, size_t n, float *out,
                    char *err, size_t errlen);

/* L2-normalise v in place (left as is when all zero). */
void vt_vec_normalize(float *v, int dim);

/*
 * Linking. The openai backend needs libcurl, which the front binary does not link
 * (Makefile): vt_embed_open refers to it weakly and, where it is absent, refuses an openai
 * spec with a line that says so (the front hands such work to vidtheque-full before it
 * gets here). A program linked with libcurl links the backend in by naming this object,
 * e.g. in a table of pointers (vidtheque-full does in src/cli/vidtheque.c, and so do the
 * test tools). It is not for anything else.
 */
struct vt_embed_backend;
extern const struct vt_embed_backend vt_embed_openai;

#endif
