/*
 * Inside of the image-embedding interface (imgembed.h), shared by imgembed.c and the
 * backends (imgembed_tflite.c, imgembed_openai.c) and by no one else. A handle is a
 * small vtable like the text one (embed_int.h): each backend's open function fills dim,
 * model, id and the functions and keeps its state behind priv; imgembed.c dispatches on
 * spec->backend, mean-centres and L2-normalises what a backend returns when it asks so,
 * and frees the strings.
 */
#ifndef VT_IMGEMBED_INT_H
#define VT_IMGEMBED_INT_H

#include "ml/imgembed.h"

#include <stddef.h>

struct vt_imgembed {
    int dim;         /* > 0 once open succeeded */
    int mean_centre; /* 1: subtract each vector's mean over its dim values before L2 */
    char *model;     /* provenance (vt_imgembed_model); heap, freed by imgembed.c */
    char *id;        /* vector-space identity (vt_imgembed_id); heap, freed by imgembed.c */
    /* Embed n images into out (n * dim floats), not normalised: imgembed.c does it after
     * a successful call. 0 or a VT_E* code with one line in err. */
    int (*images)(struct vt_imgembed *e, const struct vt_image *imgs, size_t n, float *out,
                  char *err, size_t errlen);
    /* Embed texts into the images' space; NULL when the backend cannot. */
    int (*texts)(struct vt_imgembed *e, const char *const *texts, size_t n, float *out, char *err,
                 size_t errlen);
    /* Free priv and whatever the backend owns (not model, id or e itself). May be NULL. */
    void (*close)(struct vt_imgembed *e);
    void *priv;
};

/*
 * Backends' open functions: fill a struct vt_imgembed allocated with vt_xcalloc and hand
 * it to *out, or return a VT_E* code with one line in err and leave *out untouched.
 */
int vt_imgembed_tflite_open(const struct vt_imgembed_spec *spec, struct vt_imgembed **out,
                            char *err, size_t errlen);
int vt_imgembed_openai_open(const struct vt_imgembed_spec *spec, struct vt_imgembed **out,
                            char *err, size_t errlen);

#endif
