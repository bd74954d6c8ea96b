/*
 * The in-process TFLite image-embedding backend (embed.h, backend "tflite"): loads a
 * float32 MobileNet-class model with tflite.c, squashes each picture to the model's input
 * size (bilinear, no crop, as the TFLite task library's classifier does), normalises RGB
 * as the model's metadata says (MobileNet: mean 127.5 and std 127.5, so [-1, 1]; the same
 * when a model has no metadata), runs the
 * model up to the embedding tensor and hands its values to embed.c, which mean-centres
 * and L2-normalises them. A batch is spread over spec->threads workers (workpool.h), each
 * with its own run state; the parsed model is shared read-only.
 */
#include "ml/embed_int.h"
#include "ml/tflite.h"
#include "base/util.h"
#include "vidtheque.h"
#include "base/workpool.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MAX_DIM     65536

struct tfl {
    struct vt_tflite *m;
    float mean[3], std[3];
    int tensor;
    int h, w;
    size_t workers;
    struct vt_tflite_ctx **ctx; /* one per worker */
    float **input;              /* one h*w*3 buffer per worker */
};

struct batch {
    struct tfl *t;
    const struct vt_image *imgs;
    float *out;
    int dim;
};

static int embed_one(void *user, size_t worker, size_t item, char *err, size_t errlen)
{
    struct batch *b = user;
    struct tfl *t = b->t;
    const struct vt_image *im = &b->imgs[item];
    vt_tflite_image_input(im->rgb, im->width, im->height, im->stride, t->w, t->h, t->mean, t->std,
                          t->input[worker]);
    vt_tflite_run(t->ctx[worker], t->input[worker], t->tensor);
    memcpy(b->out + item * (size_t)b->dim, vt_tflite_tensor_data(t->ctx[worker], t->tensor),
           (size_t)b->dim * sizeof(float));
    return 0;
}

static int tfl_images(struct vt_embed *e, const struct vt_image *imgs, size_t n, float *out,
                      char *err, size_t errlen)
{
    struct tfl *t = e->priv;
    struct batch b = {t, imgs, out, e->dim};
    struct vt_pool pool = {
        .n_items = n,
        .n_workers = n < t->workers ? n : t->workers,
        .task = embed_one,
        .user = &b,
        .caller_works = 1,
    };
    return vt_pool_run(&pool, err, errlen);
}

static void tfl_close(struct vt_embed *e)
{
    struct tfl *t = e->priv;
    if (!t)
        return;
    for (size_t i = 0; i < t->workers; i++) {
        vt_tflite_ctx_free(t->ctx[i]);
        free(t->input[i]);
    }
    free(t->ctx);
    free(t->input);
    vt_tflite_free(t->m);
    free(t);
    e->priv = NULL;
}

/* The model file: spec->model itself, or the one .tflite file in that folder (caller
 * frees). */
static int find_model(const char *path, char **file, char *err, size_t errlen)
{
    struct stat sb;
    if (!path || !*path)
        return vt_err(err, errlen, VT_EINVAL, "tflite: no model file set");
    if (stat(path, &sb) != 0)
        return vt_err(err, errlen, VT_ENOTFOUND, "'%s': no such model file", path);
    if (!S_ISDIR(sb.st_mode)) {
        *file = vt_xstrdup(path);
        return 0;
    }
    DIR *d = opendir(path);
    if (!d)
        return vt_err(err, errlen, VT_EIO, "'%s': cannot read the model folder", path);
    char *found = NULL;
    int several = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l > 7 && strcmp(de->d_name + l - 7, ".tflite") == 0) {
            if (found) {
                several = 1;
                break;
            }
            found = vt_xasprintf("%s/%s", path, de->d_name);
        }
    }
    closedir(d);
    if (several) {
        free(found);
        return vt_err(err, errlen, VT_EINVAL, "'%s': several .tflite files, name one", path);
    }
    if (!found)
        return vt_err(err, errlen, VT_ENOTFOUND, "'%s': no .tflite file in the folder", path);
    *file = found;
    return 0;
}

static const struct vt_embed_ops tfl_ops = {.images = tfl_images, .close = tfl_close};

static int tfl_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err,
                    size_t errlen)
{
    char *file = NULL, *data = NULL;
    size_t len;
    struct tfl *t = NULL;
    struct vt_embed *e = NULL;
    char sub[384];
    int rc = find_model(spec->model, &file, err, errlen);
    if (rc)
        return rc;
    rc = vt_read_file_capped(file, "tflite model", VT_TFLITE_MAX_FILE, &data, &len, err, errlen);
    if (rc)
        goto out;
    t = vt_xcalloc(1, sizeof(*t));
    rc = vt_tflite_parse((const uint8_t *)data, len, &t->m, sub, sizeof(sub));
    if (rc) {
        vt_err(err, errlen, rc, "'%s': %s", file, sub);
        goto out;
    }
    int c;
    vt_tflite_input_shape(t->m, &t->h, &t->w, &c);
    vt_tflite_input_norm(t->m, t->mean, t->std);
    if (spec->tensor && *spec->tensor) {
        t->tensor = vt_tflite_tensor_find(t->m, spec->tensor);
        if (t->tensor < 0) {
            rc = vt_err(err, errlen, VT_EINVAL, "'%s': no tensor named '%s'", file, spec->tensor);
            goto out;
        }
    } else {
        t->tensor = vt_tflite_default_embedding(t->m);
        if (t->tensor < 0) {
            rc = vt_err(err, errlen, VT_EINVAL,
                        "'%s': no embedding tensor found (name one in frame_embed.tensor)", file);
            goto out;
        }
    }
    size_t dim = vt_tflite_tensor_count(t->m, t->tensor);
    const char *tname = vt_tflite_tensor_name(t->m, t->tensor);
    if (!vt_tflite_tensor_is_activation(t->m, t->tensor) || dim < 2 || dim > MAX_DIM) {
        rc = vt_err(err, errlen, VT_EINVAL,
                    "'%s': tensor '%s' (%zu values) is not a computed vector of 2 to %d values",
                    file, tname, dim, MAX_DIM);
        goto out;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nw = spec->threads > 0 ? (size_t)spec->threads : cores > 0 ? (size_t)cores : 1;
    t->workers = nw > MAX_THREADS ? MAX_THREADS : nw;
    t->ctx = vt_xcalloc(t->workers, sizeof(*t->ctx));
    t->input = vt_xcalloc(t->workers, sizeof(*t->input));
    for (size_t i = 0; i < t->workers; i++) {
        t->ctx[i] = vt_tflite_ctx_new(t->m);
        t->input[i] = vt_xmalloc((size_t)t->h * t->w * 3 * sizeof(float));
    }
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t blen = strlen(base);
    if (blen > 7 && strcmp(base + blen - 7, ".tflite") == 0)
        blen -= 7;
    e = vt_xcalloc(1, sizeof(*e));
    e->dim = (int)dim;
    e->mean_centre = 1;
    e->model = vt_xasprintf("tflite %.*s (%zu d, %s)", (int)blen, base, dim, tname);
    e->id = vt_xasprintf("tflite:%016llx:%s",
                         (unsigned long long)vt_fnv1a64(VT_FNV64_INIT, data, len), tname);
    e->ops = &tfl_ops;
    e->priv = t;
    t = NULL;
    *out = e;
out:
    if (t) {
        struct vt_embed tmp = {.priv = t};
        tfl_close(&tmp);
    }
    free(data);
    free(file);
    return rc;
}

const struct vt_embed_backend vt_embed_tflite = {.open = tfl_open};
