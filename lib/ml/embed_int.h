/*
 * Inside of the embedding interface (embed.h), shared by embed.c and the backends
 * (embed_m2v.c, embed_tflite.c, embed_openai.c) and by no one else.
 *
 * A backend is a struct vt_embed_backend (its open function) that embed.c lists by name
 * with the kinds it serves. Its open fills a handle: dim, model, id, the table of
 * functions for what it can embed (struct vt_embed_ops: texts, images or both; the rest
 * NULL) and its own state behind priv. embed.c refuses what a handle cannot embed,
 * checks pictures, mean-centres (when the handle asks) and L2-normalises what a backend
 * returns, and frees the strings.
 */
#ifndef VT_EMBED_INT_H
#define VT_EMBED_INT_H

#include "ml/embed.h"

#include <stddef.h>

struct vt_embed_ops {
    /* Embed n texts into out (n * dim floats), not normalised: embed.c does it after a
     * successful call. 0 or a VT_E* code with one line in err. NULL: cannot. */
    int (*texts)(struct vt_embed *e, const char *const *texts, size_t n, float *out, char *err,
                 size_t errlen);
    /* Embed n pictures (checked by embed.c) into out, likewise. NULL: cannot. */
    int (*images)(struct vt_embed *e, const struct vt_image *imgs, size_t n, float *out, char *err,
                  size_t errlen);
    /* Free priv and whatever the backend owns (not model, id or e itself). May be NULL. */
    void (*close)(struct vt_embed *e);
};

struct vt_embed {
    const struct vt_embed_ops *ops;
    enum vt_embed_kind kind; /* the spec's (set by embed.c) */
    int dim;                 /* > 0 once open succeeded */
    int mean_centre;         /* images: subtract each vector's mean over its dim values */
    char *model;             /* provenance string (vt_embed_model); heap, freed by embed.c */
    char *id;                /* vector-space identity (vt_embed_id); heap, freed by embed.c */
    void *priv;              /* backend state */
};

/*
 * A backend's open: fill a struct vt_embed allocated with vt_xcalloc (model and id with
 * vt_xmalloc/vt_xstrdup/vt_xasprintf) for spec->kind and hand it to *out, or return a
 * VT_E* code with one line in err and leave *out untouched (nothing leaked).
 */
struct vt_embed_backend {
    int (*open)(const struct vt_embed_spec *spec, struct vt_embed **out, char *err, size_t errlen);
};

extern const struct vt_embed_backend vt_embed_model2vec; /* embed_m2v.c */
extern const struct vt_embed_backend vt_embed_tflite;    /* embed_tflite.c */
/* vt_embed_openai (embed.h, embed_openai.c) is referenced weakly by embed.c */

#endif
