/*
 * The embedding interface (embed.h): picks a backend by the spec's kind and name, refuses
 * what a handle cannot embed, checks pictures, and mean-centres (when the handle asks) and
 * L2-normalises whatever the backend returns, so that every caller gets unit vectors
 * whose dot product is the cosine. The backends fill the table of embed_int.h.
 */
#include "ml/embed.h"

#include "base/util.h"
#include "ml/embed_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The openai backend (embed_openai.c) needs libcurl, which the front binary does not
 * link (Makefile): the reference is weak, so a program links it only when something
 * else names it (embed.h; src/cli/vidtheque.c does in vidtheque-full). Where it is absent
 * the spec is refused with a line that says so; the front hands such work to the full
 * binary before it gets here (src/cli/cmd_search.c).
 */
extern const struct vt_embed_backend vt_embed_openai __attribute__((weak));

#define KIND_BIT(k) (1u << (k))

/* The backends by name, with the kinds of vector each makes. */
static const struct backend {
    const char *name;
    unsigned kinds;                      /* KIND_BIT of each kind served */
    const struct vt_embed_backend *impl; /* NULL: not linked into this program */
} backends[] = {
    {"model2vec", KIND_BIT(VT_EMBED_TEXTS), &vt_embed_model2vec},
    {"tflite", KIND_BIT(VT_EMBED_IMAGES), &vt_embed_tflite},
    {"openai", KIND_BIT(VT_EMBED_TEXTS) | KIND_BIT(VT_EMBED_IMAGES), &vt_embed_openai},
};

#define N_BACKENDS (sizeof(backends) / sizeof(backends[0]))

/* Largest picture handed to a backend (pixels per side). */
#define MAX_SIDE 16384

/* How messages name a kind's embeddings: "embedding backend ...", "image embedding ...". */
static const char *kind_word(enum vt_embed_kind kind)
{
    return kind == VT_EMBED_IMAGES ? "image " : "";
}

/* The names of the backends of a kind, "a or b", into buf. */
static const char *names_of(enum vt_embed_kind kind, char *buf, size_t len)
{
    size_t at = 0;

    buf[0] = 0;
    for (size_t i = 0; i < N_BACKENDS; i++)
        if (backends[i].kinds & KIND_BIT(kind) && at < len)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? " or " : "", backends[i].name);
    return buf;
}

static const struct backend *find(enum vt_embed_kind kind, const char *name)
{
    for (size_t i = 0; i < N_BACKENDS; i++)
        if (backends[i].kinds & KIND_BIT(kind) && !strcmp(backends[i].name, name))
            return &backends[i];
    return NULL;
}

/* Whether a handle can embed inputs of a kind. */
static int can(const struct vt_embed *e, enum vt_embed_kind kind)
{
    return kind == VT_EMBED_IMAGES ? e->ops->images != NULL : e->ops->texts != NULL;
}

int vt_embed_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err, size_t errlen)
{
    enum vt_embed_kind kind = spec ? spec->kind : VT_EMBED_TEXTS;
    const char *kw = kind_word(kind);
    const struct backend *b;
    struct vt_embed *e = NULL;
    char names[128];
    int rc;

    if (kind != VT_EMBED_TEXTS && kind != VT_EMBED_IMAGES)
        return vt_err(err, errlen, VT_EINVAL, "embedding kind %d unknown", (int)kind);
    if (!spec || !spec->backend || !*spec->backend)
        return vt_err(err, errlen, VT_EINVAL, "%sembedding backend not set", kw);
    b = find(kind, spec->backend);
    if (!b)
        return vt_err(err, errlen, VT_EINVAL, "%sembedding backend '%s' unknown (%s)", kw,
                      spec->backend, names_of(kind, names, sizeof(names)));
    if (!b->impl)
        return vt_err(err, errlen, VT_EINVAL,
                      "%s %sembeddings are not in this program (run vidtheque-full)", b->name, kw);
    rc = b->impl->open(spec, &e, err, errlen);
    if (rc)
        return rc;
    e->kind = kind;
    if (e->dim <= 0 || !e->model || !e->id || !e->ops || !can(e, kind)) {
        vt_embed_close(e);
        return vt_err(err, errlen, VT_EINVAL, "%sembedding backend '%s' gave no dimension", kw,
                      spec->backend);
    }
    *out = e;
    return 0;
}

void vt_embed_close(struct vt_embed *e)
{
    if (!e)
        return;
    if (e->ops && e->ops->close)
        e->ops->close(e);
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

int vt_embed_has_texts(const struct vt_embed *e)
{
    return can(e, VT_EMBED_TEXTS);
}

/* VT_EINVAL naming the first of n vectors that holds NaN or infinity (a backend's
 * overflow: huge weights, a mutated model), so that no such vector is stored or
 * searched with; 0 when all are finite. */
static int check_finite(const struct vt_embed *e, const float *out, size_t n, char *err,
                        size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < e->dim; j++)
            if (!isfinite(out[i * (size_t)e->dim + (size_t)j]))
                return vt_err(err, errlen, VT_EINVAL,
                              "model '%s' gave a vector with NaN or infinity (input %zu of %zu)",
                              e->model, i + 1, n);
    return 0;
}

/* Mean-centre (when the handle asks) and L2-normalise n vectors of dim floats. */
static void finish(const struct vt_embed *e, int centre, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float *v = out + i * (size_t)e->dim;
        if (centre && e->mean_centre) {
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

int vt_embed_texts(struct vt_embed *e, const char *const *texts, size_t n, float *out, char *err,
                   size_t errlen)
{
    if (!can(e, VT_EMBED_TEXTS))
        return vt_err(err, errlen, VT_EINVAL, "%smodel '%s' cannot embed text", kind_word(e->kind),
                      e->model);
    if (!n)
        return 0;
    int rc = e->ops->texts(e, texts, n, out, err, errlen);
    if (!rc)
        rc = check_finite(e, out, n, err, errlen);
    if (rc)
        return rc;
    /* text vectors are only normalised: centring is a property of the image tensor */
    finish(e, 0, out, n);
    return check_finite(e, out, n, err, errlen);
}

int vt_embed_images(struct vt_embed *e, const struct vt_image *imgs, size_t n, float *out,
                    char *err, size_t errlen)
{
    if (!can(e, VT_EMBED_IMAGES))
        return vt_err(err, errlen, VT_EINVAL, "%smodel '%s' cannot embed images",
                      kind_word(e->kind), e->model);
    for (size_t i = 0; i < n; i++) {
        const struct vt_image *im = &imgs[i];
        if (!im->rgb || im->width <= 0 || im->height <= 0 || im->width > MAX_SIDE ||
            im->height > MAX_SIDE || im->stride < (size_t)im->width * 3)
            return vt_err(err, errlen, VT_EINVAL, "image %zu: %dx%d pixels cannot be embedded", i,
                          im->width, im->height);
    }
    if (!n)
        return 0;
    int rc = e->ops->images(e, imgs, n, out, err, errlen);
    if (!rc)
        rc = check_finite(e, out, n, err, errlen);
    if (rc)
        return rc;
    finish(e, 1, out, n);
    /* centring can overflow what the backend gave (a mean of huge values) */
    return check_finite(e, out, n, err, errlen);
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
