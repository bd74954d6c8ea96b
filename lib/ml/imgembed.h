/*
 * Image embeddings: one small interface in front of every backend that turns pictures
 * into vectors, the same shape as the text one (embed.h). A backend is chosen by a spec
 * (from the library's config: frame_embed.backend, .model, .url, .api_key):
 *
 *   tflite  an in-process TFLite image model (MobileNet-class float32 CNNs), tflite.c
 *   openai  a server that embeds base64 images (CLIP-class: Infinity, Jina- or
 *           OpenAI-compatible), imgembed_openai.c; when its model puts text and images
 *           in one space, vt_imgembed_texts embeds a search query into that space
 *
 * Vectors are float32, mean-centred where the model says so, and L2-normalised by this
 * interface, so that a dot product is the cosine. Two handles give comparable vectors
 * only when their vt_imgembed_id() is equal. A handle is used by one thread at a time
 * (a backend may use several threads inside one call).
 */
#ifndef VT_IMGEMBED_H
#define VT_IMGEMBED_H

#include <stddef.h>
#include <stdint.h>

struct vt_imgembed;

#define VT_IMGEMBED_MAX_BATCH 128 /* openai: pictures per request, at most */

/* An 8-bit RGB picture of any size: row y starts at rgb + y * stride. */
struct vt_image {
    const uint8_t *rgb;
    int width, height;
    size_t stride;
};

struct vt_imgembed_spec {
    const char *backend;   /* "tflite" or "openai" */
    const char *model;     /* tflite: the .tflite file (or a folder holding one);
                            * openai: the server's model name */
    const char *tensor;    /* tflite: the tensor that is the embedding (NULL: the input of
                            * the last layer, e.g. MobilenetV1/Logits/AvgPool_1a/AvgPool) */
    const char *base_url;  /* openai */
    const char *api_key;   /* openai: Bearer token when non-empty */
    int joint_text;        /* openai: the model embeds text into the same space (config) */
    int threads;           /* tflite: threads per call (0: one per core) */
    const char *api_style; /* openai: the request's shape, "openai" (NULL/empty: input is
                            * data URLs and "modality", as Infinity takes them) or "jina"
                            * (input is [{"image": base64}] / [{"text": ...}]) */
    double timeout_s;      /* openai: per request (0: 60 s) */
    int batch;             /* openai: images per request (0: 16; at most VT_IMGEMBED_MAX_BATCH) */
    int retries;           /* openai: attempts per request on 5xx/timeouts (0: 3) */
};

/* Open a backend: 0, or a VT_E* code with one line in err (a model file that is not a
 * valid TFLite model, an unsupported operator, a server that cannot be reached). */
int vt_imgembed_open(const struct vt_imgembed_spec *spec, struct vt_imgembed **out, char *err,
                     size_t errlen);
void vt_imgembed_close(struct vt_imgembed *e);
int vt_imgembed_dim(const struct vt_imgembed *e);
/* Provenance, e.g. "tflite mobilenet_v1_0.25_224 (256 d, MobilenetV1/Logits/AvgPool_1a/AvgPool)".
 */
const char *vt_imgembed_model(const struct vt_imgembed *e);
/* Identity of the vector space, e.g. "tflite:<hash of the file>:<tensor>". */
const char *vt_imgembed_id(const struct vt_imgembed *e);
/* Embed n images into out (n * dim floats, each unit length). VT_EIO for what may pass
 * (a server), VT_EINVAL for what will not (an image of 0 pixels, a wrong answer). */
int vt_imgembed_images(struct vt_imgembed *e, const struct vt_image *imgs, size_t n, float *out,
                       char *err, size_t errlen);
/* Whether texts can be embedded into the images' space (joint text-image models). */
int vt_imgembed_has_text(const struct vt_imgembed *e);
/* Embed n texts into the images' space; VT_EINVAL when vt_imgembed_has_text is 0. */
int vt_imgembed_texts(struct vt_imgembed *e, const char *const *texts, size_t n, float *out,
                      char *err, size_t errlen);

#endif
