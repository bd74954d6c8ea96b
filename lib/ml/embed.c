/*
 * The text-embedding interface (embed.h): picks a backend by the spec's name, and
 * L2-normalises whatever the backend returns so that every caller gets unit vectors.
 * The backends fill the vtable of embed_int.h.
 */
#include "ml/embed.h"

#include "ml/embed_int.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The openai backend (embed_openai.c) needs libcurl, which the front binary does not
 * link (Makefile): the reference is weak, so a program links it only when something
 * else names it (src/cli/vidtheque.c does in vidtheque-full). Where it is absent the spec
 * is refused with a line that says so; the front hands such searches to the full
 * binary before it gets here (src/cli/cmd_search.c).
 */
extern int vt_embed_openai_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err,
                                size_t errlen) __attribute__((weak));

int vt_embed_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err, size_t errlen)
{
    struct vt_embed *e = NULL;
    int rc;

    if (!spec || !spec->backend || !*spec->backend)
        return vt_err(err, errlen, VT_EINVAL, "embedding backend not set");
    if (strcmp(spec->backend, "model2vec") == 0) {
        rc = vt_embed_m2v_open(spec, &e, err, errlen);
    } else if (strcmp(spec->backend, "openai") == 0) {
        if (vt_embed_openai_open)
            rc = vt_embed_openai_open(spec, &e, err, errlen);
        else
            rc = vt_err(err, errlen, VT_EINVAL,
                        "openai embeddings are not in this program "
                        "(run vidtheque-full)");
    } else {
        rc = vt_err(err, errlen, VT_EINVAL, "embedding backend '%s' unknown (model2vec or openai)",
                    spec->backend);
    }
    if (rc)
        return rc;
    if (e->dim <= 0 || !e->model || !e->id || !e->embed) {
        vt_embed_close(e);
        return vt_err(err, errlen, VT_EINVAL, "embedding backend '%s' gave no dimension",
                      spec->backend);
    }
    *out = e;
    return 0;
}

void vt_embed_close(struct vt_embed *e)
{
    if (!e)
        return;
    if (e->close)
        e->close(e);
    free(e->model);
    free(e->id);
    free(e);
}

int vt_embed_dim(const struct vt_embed *e)
{
    return e->dim;
}

const char *vt_embed_model(const struct vt_embed *e)
{
    return e->model;
}

const char *vt_embed_id(const struct vt_embed *e)
{
    return e->id;
}

int vt_embed_texts(struct vt_embed *e, const char *const *texts, size_t n, float *out, char *err,
                   size_t errlen)
{
    if (!n)
        return 0;
    int rc = e->embed(e, texts, n, out, err, errlen);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        vt_vec_normalize(out + i * (size_t)e->dim, e->dim);
    return 0;
}

void vt_vec_normalize(float *v, int dim)
{
    double ss = 0;
    for (int i = 0; i < dim; i++)
        ss += (double)v[i] * v[i];
    if (ss <= 0 || !isfinite(ss))
        return;
    float inv = (float)(1.0 / sqrt(ss));
    for (int i = 0; i < dim; i++)
        v[i] *= inv;
}
