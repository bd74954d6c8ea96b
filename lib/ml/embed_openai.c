/*
 * The "openai" backend of embed.h, for both kinds: an OpenAI-compatible server asked with
 * POST {base}/v1/embeddings in batches of spec->batch inputs, answering
 * {"data": [{"embedding": [...], "index": i}, ...]}.
 *
 *   texts   (Ollama, llama.cpp's server, TEI, vLLM, LocalAI, Infinity)
 *           {"model": M, "input": ["a text", ...]}, 64 per request by default
 *   images  a server that embeds base64 pictures with a CLIP-class model (Infinity,
 *           Jina-compatible or OpenAI-compatible servers), 16 per request by default.
 *           Each picture is shrunk (box average) so that its longer side is at most
 *           MAX_SIDE pixels and sent as a JPEG of quality 90 (libjpeg-turbo), in one of
 *           two request shapes (spec->api_style):
 *             openai  {"model": M, "input": ["data:image/jpeg;base64,..."],
 *                     "modality": "image"} (the default: what Infinity takes for its CLIP
 *                     models; a text query is {"model": M, "input": ["a whiteboard"]})
 *             jina    {"model": M, "input": [{"image": "<base64>"}]} and [{"text": "..."}]
 *
 * Every answer is checked by embed_http.c (the exchange itself: endpoint, request, the
 * answer's checks): one vector per input, every index once, all of the dimension learnt
 * at open; the vectors are put in input order by index. What may pass (no connection,
 * timeouts, 5xx, an answer cut short or not JSON) is VT_EIO; what will not (4xx such as a
 * missing model, a wrong dimension or count) is VT_EINVAL.
 *
 * Open embeds a probe, so the dimension is known from the start and a server that is down
 * or lacks the model fails at open rather than halfway through a video: a short text for
 * a text space; for an image space a small generated picture, and, when the configuration
 * says the model puts text into the same space (spec->joint_text), one short text too,
 * which must come back with the same dimension; only then can vt_embed_texts embed a
 * search query into an image space. Blank texts are not sent (servers refuse them): they
 * get the zero vector, as a text with no token does in model2vec. The API key goes in the
 * Authorization header only, never in a message.
 */
#include "base/util.h"
#include "ml/embed_http.h"
#include "ml/embed_int.h"
#include "vidtheque.h"

#include <jansson.h>
#include <jpeglib.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIDE     512 /* longer side of the picture sent (CLIP models take 224..448) */
#define JPEG_QUALITY 90
#define PROBE_SIDE   32

/* What differs between the two kinds: words in messages, names, batches, the probe. */
static const struct oa_kind {
    const char *what; /* names the client in messages */
    const char *noun; /* "" or "image ": "bad %sembedding batch size" */
    const char *name; /* provenance and space id prefix */
    int default_batch;
    int max_batch;
    const char *probe; /* the probe text of a text space (and of a joint image space) */
} kinds[] = {
    [VT_EMBED_TEXTS] = {"openai embeddings", "", "openai", 64, 4096, "hello"},
    /* with 512 px JPEGs, a request of at most ~25 MB */
    [VT_EMBED_IMAGES] = {"openai image embeddings", "image ", "openai-image", 16,
                         VT_IMGEMBED_MAX_BATCH, "a photo"},
};

struct oa_priv {
    const struct oa_kind *kind;
    char *url; /* {base}/v1/embeddings */
    char *model;
    char *api_key;
    double timeout_s;
    int batch, retries;
    int jina; /* request shape: 0 openai (strings, data URLs + modality), 1 jina (objects) */
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
static int image_item(const struct oa_priv *p, const struct vt_image *im, json_t **item, char *err,
                      size_t errlen)
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

/* One request for items[0..n) (pictures when images, else texts) into out (n * *dim
 * floats; *dim learnt when 0). */
static int post(const struct oa_priv *p, json_t *items, int images, size_t n, int *dim, float *out,
                char *err, size_t errlen)
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

/* The JSON item for one text in the request's "input" (NULL when it is not UTF-8). */
static json_t *text_item(const struct oa_priv *p, const char *text)
{
    json_t *s = json_string(text);

    return s && p->jina ? json_pack("{s:o}", "text", s) : s;
}

static int oa_images(struct vt_embed *e, const struct vt_image *imgs, size_t n, float *out,
                     char *err, size_t errlen)
{
    struct oa_priv *p = e->priv;
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

static int oa_texts(struct vt_embed *e, const char *const *texts, size_t n, float *out, char *err,
                    size_t errlen)
{
    struct oa_priv *p = e->priv;
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
        for (; i < n && m < cap; i++) {
            json_t *item;

            if (blank(texts[i]))
                continue;
            item = text_item(p, texts[i]);
            if (!item) {
                /* a text space names the text by its place in the batch, an image space
                 * by its place in the call (as each client always has) */
                rc = vt_err(err, errlen, VT_EINVAL, "embeddings: text %zu is not UTF-8",
                            p->kind == &kinds[VT_EMBED_IMAGES] ? i : m);
                break;
            }
            json_array_append_new(items, item);
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

static void oa_close(struct vt_embed *e)
{
    struct oa_priv *p = e->priv;

    if (!p)
        return;
    free(p->url);
    free(p->model);
    free(p->api_key);
    free(p);
    e->priv = NULL;
}

/* What each kind of space can embed: a text space texts, an image space pictures, and
 * texts as well when its model is a joint one. */
static const struct vt_embed_ops text_ops = {.texts = oa_texts, .close = oa_close};
static const struct vt_embed_ops image_ops = {.images = oa_images, .close = oa_close};
static const struct vt_embed_ops joint_ops = {
    .texts = oa_texts, .images = oa_images, .close = oa_close};

/* ---- open ---- */

/* Learn the dimension from the probe text into *dim when 0; else (a joint image space)
 * check that a text lands in a space of that dimension. */
static int probe_text(struct oa_priv *p, int *dim, char *err, size_t errlen)
{
    json_t *items = json_array();
    int rc, tdim = 0;

    json_array_append_new(items, text_item(p, p->kind->probe));
    rc = post(p, items, 0, 1, &tdim, NULL, err, errlen);
    if (!rc && *dim && tdim != *dim)
        rc = vt_err(err, errlen, VT_EINVAL,
                    "'%s': text vectors of dimension %d, images %d: not one space", p->url, tdim,
                    *dim);
    else if (!rc)
        *dim = tdim;
    json_decref(items);
    return rc;
}

/* Learn the dimension from a small generated picture (a colour gradient). */
static int probe_image(struct oa_priv *p, int *dim, char *err, size_t errlen)
{
    uint8_t px[PROBE_SIDE * PROBE_SIDE * 3];
    struct vt_image im = {
        .rgb = px, .width = PROBE_SIDE, .height = PROBE_SIDE, .stride = PROBE_SIDE * 3};
    json_t *items = json_array(), *item = NULL;
    int rc;

    for (int y = 0; y < PROBE_SIDE; y++)
        for (int x = 0; x < PROBE_SIDE; x++) {
            uint8_t *q = px + ((size_t)y * PROBE_SIDE + x) * 3;
            q[0] = (uint8_t)(x * 8);
            q[1] = (uint8_t)(y * 8);
            q[2] = (uint8_t)(128 + (x - y) * 2);
        }
    rc = image_item(p, &im, &item, err, errlen);
    if (!rc) {
        json_array_append_new(items, item);
        rc = post(p, items, 1, 1, dim, NULL, err, errlen);
    }
    json_decref(items);
    return rc;
}

/* The spec's settings into a new *out, checked; its endpoint shown as *base. */
static int configure(const struct vt_embed_spec *spec, struct oa_priv **out, char **base, char *err,
                     size_t errlen)
{
    const struct oa_kind *k = &kinds[spec->kind];
    const char *style = spec->api_style && *spec->api_style ? spec->api_style : "openai";
    struct oa_priv *p;
    char *url;
    int rc;

    if (!spec->model || !*spec->model)
        return vt_err(err, errlen, VT_EINVAL, "%s: no model name configured", k->what);
    if (strcmp(style, "openai") && strcmp(style, "jina"))
        return vt_err(err, errlen, VT_EINVAL, "'%s': unknown image API style (openai or jina)",
                      style);
    if (spec->batch < 0 || spec->batch > k->max_batch)
        return vt_err(err, errlen, VT_EINVAL, "'%d': bad %sembedding batch size", spec->batch,
                      k->noun);
    rc = vt_embed_http_target(k->what, spec->base_url, &url, base, err, errlen);
    if (rc)
        return rc;
    p = vt_xcalloc(1, sizeof(*p));
    p->kind = k;
    p->url = url;
    p->model = vt_xstrdup(spec->model);
    p->api_key = vt_xstrdup_or_null(spec->api_key);
    p->timeout_s = spec->timeout_s;
    p->batch = spec->batch > 0 ? spec->batch : k->default_batch;
    p->retries = spec->retries;
    p->jina = !strcmp(style, "jina");
    *out = p;
    return 0;
}

static int oa_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err,
                   size_t errlen)
{
    int images = spec->kind == VT_EMBED_IMAGES, joint = images && spec->joint_text;
    struct oa_priv *p = NULL;
    struct vt_embed *e;
    char *base = NULL;
    int dim = 0, rc = configure(spec, &p, &base, err, errlen);

    if (rc)
        return rc;
    rc = images ? probe_image(p, &dim, err, errlen) : probe_text(p, &dim, err, errlen);
    if (!rc && joint)
        rc = probe_text(p, &dim, err, errlen);
    if (rc) {
        struct vt_embed tmp = {.priv = p};

        oa_close(&tmp);
        free(base);
        return rc;
    }
    e = vt_xcalloc(1, sizeof(*e));
    e->dim = dim;
    e->model = vt_xasprintf("%s %s at %s (%d d)", p->kind->name, p->model, base, dim);
    e->id = vt_xasprintf("%s:%s@%s", p->kind->name, p->model, base);
    e->ops = joint ? &joint_ops : images ? &image_ops : &text_ops;
    e->priv = p;
    free(base);
    *out = e;
    return 0;
}

/* embed.h: named by the programs that link libcurl; embed.c refers to it weakly */
const struct vt_embed_backend vt_embed_openai = {.open = oa_open};
