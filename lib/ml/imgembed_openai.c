/*
 * The "openai" image-embedding backend (imgembed.h, imgembed_int.h): a server that embeds
 * base64 images with a CLIP-class model (Infinity, Jina-compatible or OpenAI-compatible
 * servers), asked with POST {base}/v1/embeddings in batches of spec->batch images. Each
 * picture is shrunk (box average) so that its longer side is at most MAX_SIDE pixels and
 * sent as a JPEG of quality 90 (libjpeg-turbo), in one of two request shapes
 * (spec->api_style):
 *
 *   openai  {"model": M, "input": ["data:image/jpeg;base64,..."], "modality": "image"}
 *           (the default: what Infinity takes for its CLIP models; a text query is
 *           {"model": M, "input": ["a whiteboard"]})
 *   jina    {"model": M, "input": [{"image": "<base64>"}]} and [{"text": "..."}]
 *
 * The answer is the OpenAI one, checked by embed_http.c exactly as for the text client
 * (embed_openai.c): one vector per image, every index once, one dimension; VT_EIO for
 * what may pass (no connection, timeouts, 5xx, an answer cut short or not JSON), VT_EINVAL
 * for what will not (4xx, a wrong dimension or count). Open embeds a small generated
 * picture so the dimension is known from the start, and, when the configuration says the
 * model puts text into the same space (spec->joint_text), one short text too, which must
 * come back with the same dimension; only then can vt_imgembed_texts embed a search query.
 * Blank texts are not sent (servers refuse them): they get the zero vector. The API key
 * goes in the Authorization header only, never in a message.
 */
#include "ml/embed_http.h"
#include "ml/imgembed_int.h"
#include "base/util.h"
#include "vidtheque.h"

#include <jansson.h>
#include <jpeglib.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BATCH 16
#define MAX_BATCH     VT_IMGEMBED_MAX_BATCH /* with 512 px JPEGs, a request of at most ~25 MB */
#define MAX_SIDE      512 /* longer side of the picture sent (CLIP models take 224..448) */
#define JPEG_QUALITY  90
#define PROBE_SIDE    32
#define PROBE_TEXT    "a photo"

struct oimg_priv {
    char *url; /* {base}/v1/embeddings */
    char *model;
    char *api_key;
    double timeout_s;
    int batch, retries;
    int jina; /* request shape: 0 openai (data URLs + modality), 1 jina (objects) */
};

/* ---- pictures to base64 JPEG ---- */

/* Box-average src down to dw x dh (each no larger than the source's) into dst (packed). */
static void shrink(const struct vt_image *src, uint8_t *dst, int dw, int dh)
{
    for (int y = 0; y < dh; y++) {
        int y0 = (int)((int64_t)y * src->height / dh);
        int y1 = (int)((int64_t)(y + 1) * src->height / dh);

        for (int x = 0; x < dw; x++) {
            int x0 = (int)((int64_t)x * src->width / dw);
            int x1 = (int)((int64_t)(x + 1) * src->width / dw);
            uint32_t sum[3] = {0, 0, 0}, cnt = (uint32_t)((y1 - y0) * (x1 - x0));

            for (int yy = y0; yy < y1; yy++) {
                const uint8_t *p = src->rgb + (size_t)yy * src->stride + (size_t)x0 * 3;
                for (int xx = x0; xx < x1; xx++, p += 3) {
                    sum[0] += p[0];
                    sum[1] += p[1];
                    sum[2] += p[2];
                }
            }
            for (int c = 0; c < 3; c++)
                dst[((size_t)y * dw + x) * 3 + c] = (uint8_t)((sum[c] + cnt / 2) / cnt);
        }
    }
}

struct jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
};

static void on_jpeg_error(j_common_ptr c)
{
    longjmp(((struct jerr *)c->err)->jump, 1);
}

/* Encode packed RGB (w x h) as JPEG into *mem (malloc'd, *len bytes). 0 or VT_EINVAL. */
static int encode_jpeg(const uint8_t *rgb, int w, int h, unsigned char **mem, unsigned long *len,
                       char *err, size_t errlen)
{
    struct jpeg_compress_struct c;
    struct jerr j;
    unsigned char *volatile buf = NULL;
    unsigned long n = 0;

    memset(&c, 0, sizeof(c));
    c.err = jpeg_std_error(&j.pub);
    j.pub.error_exit = on_jpeg_error;
    if (setjmp(j.jump)) {
        jpeg_destroy_compress(&c);
        free(buf);
        return vt_err(err, errlen, VT_EINVAL, "image: cannot encode a %dx%d JPEG", w, h);
    }
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, (unsigned char **)&buf, &n);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, JPEG_QUALITY, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)c.next_scanline * (size_t)w * 3);

        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *mem = buf;
    *len = n;
    return 0;
}

/* Standard base64 (RFC 4648, padded) of data[0..n), after prefix; caller frees. */
static char *base64(const char *prefix, const unsigned char *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t plen = strlen(prefix);
    char *out = vt_xmalloc(plen + (n + 2) / 3 * 4 + 1), *o = out + plen;

    memcpy(out, prefix, plen);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16;

        if (i + 1 < n)
            v |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < n)
            v |= data[i + 2];
        *o++ = tab[v >> 18 & 63];
        *o++ = tab[v >> 12 & 63];
        *o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? tab[v & 63] : '=';
    }
    *o = 0;
    return out;
}

/* The JSON item for one picture in the request's "input". */
static int image_item(const struct oimg_priv *p, const struct vt_image *im, json_t **item,
                      char *err, size_t errlen)
{
    int longer = im->width > im->height ? im->width : im->height;
    int w = im->width, h = im->height, rc;
    uint8_t *packed = NULL;
    unsigned char *jpg = NULL;
    unsigned long jlen = 0;
    char *b64;

    if (longer > MAX_SIDE) {
        w = (int)((int64_t)im->width * MAX_SIDE / longer);
        h = (int)((int64_t)im->height * MAX_SIDE / longer);
        w = w < 1 ? 1 : w;
        h = h < 1 ? 1 : h;
    }
    packed = vt_xmalloc((size_t)w * (size_t)h * 3);
    shrink(im, packed, w, h);
    rc = encode_jpeg(packed, w, h, &jpg, &jlen, err, errlen);
    free(packed);
    if (rc)
        return rc;
    b64 = base64(p->jina ? "" : "data:image/jpeg;base64,", jpg, jlen);
    free(jpg);
    *item = p->jina ? json_pack("{s:s}", "image", b64) : json_string(b64);
    free(b64);
    return 0;
}

/* ---- requests ---- */

/* One request for items[0..n) (kind "images" or "texts") into out (n * *dim floats). */
static int post(const struct oimg_priv *p, json_t *items, int images, size_t n, int *dim,
                float *out, char *err, size_t errlen)
{
    struct vt_embed_http_call call = {
        .url = p->url, .api_key = p->api_key, .timeout_s = p->timeout_s, .retries = p->retries};
    json_t *req = json_pack("{s:s, s:O}", "model", p->model, "input", items);
    int rc;

    /* Infinity reads "modality" (default text); servers that do not know it ignore it */
    if (images && !p->jina)
        json_object_set_new(req, "modality", json_string("image"));
    rc = vt_embed_http_post(&call, req, n, images ? "images" : "texts", dim, out, err, errlen);
    json_decref(req);
    return rc;
}

static int oimg_images(struct vt_imgembed *e, const struct vt_image *imgs, size_t n, float *out,
                       char *err, size_t errlen)
{
    struct oimg_priv *p = e->priv;
    size_t cap = (size_t)p->batch, dim = (size_t)e->dim;
    int rc = 0;

    for (size_t i = 0; i < n && !rc; i += cap) {
        size_t m = n - i < cap ? n - i : cap;
        json_t *items = json_array();
        int d = e->dim;

        for (size_t k = 0; k < m && !rc; k++) {
            json_t *item = NULL;

            rc = image_item(p, &imgs[i + k], &item, err, errlen);
            if (!rc)
                json_array_append_new(items, item);
        }
        if (!rc)
            rc = post(p, items, 1, m, &d, out + i * dim, err, errlen);
        json_decref(items);
    }
    return rc;
}

static int blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return 0;
    return 1;
}

static int oimg_texts(struct vt_imgembed *e, const char *const *texts, size_t n, float *out,
                      char *err, size_t errlen)
{
    struct oimg_priv *p = e->priv;
    size_t cap = (size_t)p->batch, dim = (size_t)e->dim, i = 0;
    size_t *where = vt_xcalloc(cap, sizeof(*where));
    float *vecs = vt_xmalloc(cap * dim * sizeof(*vecs));
    int rc = 0;

    memset(out, 0, n * dim * sizeof(*out));
    while (i < n && !rc) {
        json_t *items = json_array();
        size_t m = 0;
        int d = e->dim;

        /* the next batch of non-blank texts */
        for (; i < n && m < cap && !rc; i++) {
            json_t *s;

            if (blank(texts[i]))
                continue;
            s = json_string(texts[i]);
            if (!s) {
                rc = vt_err(err, errlen, VT_EINVAL, "embeddings: text %zu is not UTF-8", i);
                break;
            }
            json_array_append_new(items, p->jina ? json_pack("{s:o}", "text", s) : s);
            where[m++] = i;
        }
        if (!rc && m)
            rc = post(p, items, 0, m, &d, vecs, err, errlen);
        json_decref(items);
        for (size_t k = 0; !rc && k < m; k++)
            memcpy(out + where[k] * dim, vecs + k * dim, dim * sizeof(*out));
    }
    free(vecs);
    free(where);
    return rc;
}

static void oimg_close(struct vt_imgembed *e)
{
    struct oimg_priv *p = e->priv;

    if (!p)
        return;
    free(p->url);
    free(p->model);
    free(p->api_key);
    free(p);
    e->priv = NULL;
}

/* Learn the dimension from a small generated picture (a colour gradient), and check that
 * a text lands in a space of the same dimension when the model is said to take text. */
static int probe(struct oimg_priv *p, int joint_text, int *dim, char *err, size_t errlen)
{
    uint8_t px[PROBE_SIDE * PROBE_SIDE * 3];
    struct vt_image im = {
        .rgb = px, .width = PROBE_SIDE, .height = PROBE_SIDE, .stride = PROBE_SIDE * 3};
    json_t *items = json_array(), *item = NULL;
    int rc, tdim = 0;

    for (int y = 0; y < PROBE_SIDE; y++)
        for (int x = 0; x < PROBE_SIDE; x++) {
            uint8_t *q = px + ((size_t)y * PROBE_SIDE + x) * 3;
            q[0] = (uint8_t)(x * 8);
            q[1] = (uint8_t)(y * 8);
            q[2] = (uint8_t)(128 + (x - y) * 2);
        }
    rc = image_item(p, &im, &item, err, errlen);
    if (rc)
        goto out;
    json_array_append_new(items, item);
    rc = post(p, items, 1, 1, dim, NULL, err, errlen);
    if (rc || !joint_text)
        goto out;
    json_array_clear(items);
    json_array_append_new(items, p->jina ? json_pack("{s:s}", "text", PROBE_TEXT)
                                         : json_string(PROBE_TEXT));
    rc = post(p, items, 0, 1, &tdim, NULL, err, errlen);
    if (!rc && tdim != *dim)
        rc = vt_err(err, errlen, VT_EINVAL,
                    "'%s': text vectors of dimension %d, images %d: not one space", p->url, tdim,
                    *dim);
out:
    json_decref(items);
    return rc;
}

int vt_imgembed_openai_open(const struct vt_imgembed_spec *spec, struct vt_imgembed **out,
                            char *err, size_t errlen)
{
    const char *style = spec->api_style && *spec->api_style ? spec->api_style : "openai";
    struct oimg_priv *p;
    struct vt_imgembed *e;
    char *url, *base;
    int dim = 0, rc;

    if (!spec->model || !*spec->model)
        return vt_err(err, errlen, VT_EINVAL, "openai image embeddings: no model name configured");
    if (strcmp(style, "openai") && strcmp(style, "jina"))
        return vt_err(err, errlen, VT_EINVAL, "'%s': unknown image API style (openai or jina)",
                      style);
    if (spec->batch < 0 || spec->batch > MAX_BATCH)
        return vt_err(err, errlen, VT_EINVAL, "'%d': bad image embedding batch size", spec->batch);
    rc = vt_embed_http_target("openai image embeddings", spec->base_url, &url, &base, err, errlen);
    if (rc)
        return rc;

    p = vt_xcalloc(1, sizeof(*p));
    p->url = url;
    p->model = vt_xstrdup(spec->model);
    p->api_key = vt_xstrdup_or_null(spec->api_key);
    p->timeout_s = spec->timeout_s;
    p->batch = spec->batch > 0 ? spec->batch : DEFAULT_BATCH;
    p->retries = spec->retries;
    p->jina = !strcmp(style, "jina");

    rc = probe(p, spec->joint_text, &dim, err, errlen);
    if (rc) {
        struct vt_imgembed tmp = {.priv = p};

        oimg_close(&tmp);
        free(base);
        return rc;
    }
    e = vt_xcalloc(1, sizeof(*e));
    e->dim = dim;
    e->model = vt_xasprintf("openai-image %s at %s (%d d)", p->model, base, dim);
    e->id = vt_xasprintf("openai-image:%s@%s", p->model, base);
    e->images = oimg_images;
    e->texts = spec->joint_text ? oimg_texts : NULL;
    e->close = oimg_close;
    e->priv = p;
    free(base);
    *out = e;
    return 0;
}
