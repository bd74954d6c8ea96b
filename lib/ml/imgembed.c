/*
 * The image-embedding interface (imgembed.h): picks a backend by the spec's name, checks
 * the images, and mean-centres (when the backend asks) and L2-normalises whatever the
 * backend returns, so that every caller gets unit vectors whose dot product is the
 * cosine. The backends fill the vtable of imgembed_int.h.
 */
#include "ml/imgembed.h"

#include "ml/embed.h"
#include "ml/imgembed_int.h"
#include "base/util.h"
#include "vidtheque.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The openai backend (imgembed_openai.c) needs libcurl, which the front binary does not
 * link (Makefile): the reference is weak, as embed.c's is for text, so a program links it
 * only when something else names it (src/cli/vidtheque.c does in vidtheque-full). Where it is
 * absent the spec is refused with a line that says so.
 */
extern int vt_imgembed_openai_open(const struct vt_imgembed_spec *spec, struct vt_imgembed **out,
                                   char *err, size_t errlen) __attribute__((weak));

/* Largest picture handed to a backend (pixels per side). */
#define MAX_SIDE 16384

int vt_imgembed_open(const struct vt_imgembed_spec *spec, struct vt_imgembed **out, char *err,
                     size_t errlen)
{
    struct vt_imgembed *e = NULL;
    int rc;

    if (!spec || !spec->backend || !*spec->backend)
        return vt_err(err, errlen, VT_EINVAL, "image embedding backend not set");
    if (strcmp(spec->backend, "tflite") == 0) {
        rc = vt_imgembed_tflite_open(spec, &e, err, errlen);
    } else if (strcmp(spec->backend, "openai") == 0) {
        if (vt_imgembed_openai_open)
            rc = vt_imgembed_openai_open(spec, &e, err, errlen);
        else
            rc = vt_err(err, errlen, VT_EINVAL,
                        "openai image embeddings are not in this program (run vidtheque-full)");
    } else {
        rc = vt_err(err, errlen, VT_EINVAL,
                    "image embedding backend '%s' unknown (tflite or openai)", spec->backend);
    }
    if (rc)
        return rc;
    if (e->dim <= 0 || !e->model || !e->id || !e->images) {
        vt_imgembed_close(e);
        return vt_err(err, errlen, VT_EINVAL, "image embedding backend '%s' gave no dimension",
                      spec->backend);
    }
    *out = e;
    return 0;
}

void vt_imgembed_close(struct vt_imgembed *e)
{
    if (!e)
        return;
    if (e->close)
        e->close(e);
    free(e->model);
    free(e->id);
    free(e);
}

int vt_imgembed_dim(const struct vt_imgembed *e)
{
    return e->dim;
}

const char *vt_imgembed_model(const struct vt_imgembed *e)
{
    return e->model;
}

const char *vt_imgembed_id(const struct vt_imgembed *e)
{
    return e->id;
}

/* Mean-centre (when asked) and L2-normalise n vectors of dim floats. */
static void finish(const struct vt_imgembed *e, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float *v = out + i * (size_t)e->dim;
        if (e->mean_centre) {
            double sum = 0;
            for (int j = 0; j < e->dim; j++)
                sum += v[j];
            float mean = (float)(sum / e->dim);
            for (int j = 0; j < e->dim; j++)
                v[j] -= mean;
        }
        vt_vec_normalize(v, e->dim);
    }
}

int vt_imgembed_images(struct vt_imgembed *e, const struct vt_image *imgs, size_t n, float *out,
                       char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        const struct vt_image *im = &imgs[i];
        if (!im->rgb || im->width <= 0 || im->height <= 0 || im->width > MAX_SIDE ||
            im->height > MAX_SIDE || im->stride < (size_t)im->width * 3)
            return vt_err(err, errlen, VT_EINVAL, "image %zu: %dx%d pixels cannot be embedded", i,
                          im->width, im->height);
    }
    if (!n)
        return 0;
    int rc = e->images(e, imgs, n, out, err, errlen);
    if (rc)
        return rc;
    finish(e, out, n);
    return 0;
}

int vt_imgembed_has_text(const struct vt_imgembed *e)
{
    return e->texts != NULL;
}

int vt_imgembed_texts(struct vt_imgembed *e, const char *const *texts, size_t n, float *out,
                      char *err, size_t errlen)
{
    if (!e->texts)
        return vt_err(err, errlen, VT_EINVAL, "image model '%s' cannot embed text", e->model);
    if (!n)
        return 0;
    int rc = e->texts(e, texts, n, out, err, errlen);
    if (rc)
        return rc;
    /* text vectors are only normalised: centring is a property of the image tensor */
    for (size_t i = 0; i < n; i++)
        vt_vec_normalize(out + i * (size_t)e->dim, e->dim);
    return 0;
}
