/*
 * Inside of the text-embedding interface (embed.h), shared by embed.c and the backends
 * (embed_m2v.c, embed_openai.c) and by no one else. A handle is a small vtable: each
 * backend's open function fills dim, model, id and the two functions, and keeps its own
 * state behind priv. embed.c dispatches on spec->backend, L2-normalises what a backend
 * returns and frees the strings.
 */
#ifndef VT_EMBED_INT_H
#define VT_EMBED_INT_H

#include "ml/embed.h"

#include <stddef.h>

struct vt_embed {
    int dim;     /* > 0 once open succeeded */
    char *model; /* provenance string (embed.h, vt_embed_model); heap, freed by embed.c */
    char *id;    /* vector-space identity (vt_embed_id); heap, freed by embed.c */
    /* Embed n texts into out (n * dim floats). The backend need not normalise: embed.c
     * does it after a successful call. 0 or a VT_E* code with one line in err. */
    int (*embed)(struct vt_embed *e, const char *const *texts, size_t n, float *out, char *err,
                 size_t errlen);
    /* Free priv and whatever the backend owns (not model, id or e itself). May be NULL. */
    void (*close)(struct vt_embed *e);
    void *priv; /* backend state */
};

/*
 * Backends' open functions: fill a struct vt_embed allocated with vt_xcalloc (model and
 * id with vt_xmalloc/vt_xstrdup/vt_xasprintf) and hand it to *out, or return a VT_E*
 * code with one line in err and leave *out untouched (nothing leaked).
 */
int vt_embed_m2v_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err,
                      size_t errlen);
int vt_embed_openai_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err,
                         size_t errlen);

#endif
