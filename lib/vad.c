/*
 * The ggml VAD file reader (vad.h): a cursor over the file that refuses to move past its
 * end, hyper-parameters bounded before they size anything, and tensors whose element
 * counts are multiplied with overflow checks before their bytes are taken from the file.
 */
#include "vad.h"

#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GGML_MAGIC 0x67676d6cu
/* Bounds on what the header may claim: generous for Silero (129 channels, 512 samples). */
#define MAX_CHANNELS 4096
#define MAX_WINDOW   (1 << 16)
#define MAX_DIM      (1 << 24)

struct cursor {
    const unsigned char *p;
    size_t len, off;
};

static int take(struct cursor *c, size_t n, const unsigned char **out)
{
    if (n > c->len - c->off)
        return -1;
    *out = c->p + c->off;
    c->off += n;
    return 0;
}

static int get_i32(struct cursor *c, int32_t *v)
{
    const unsigned char *b;

    if (take(c, 4, &b))
        return -1;
    *v = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                   (uint32_t)b[3] << 24);
    return 0;
}

/* An int32 field in [lo, hi], or VT_EINVAL naming it. */
static int get_field(struct cursor *c, const char *what, int32_t lo, int32_t hi, int32_t *v,
                     char *err, size_t errlen)
{
    if (get_i32(c, v))
        return vt_err(err, errlen, VT_EINVAL, "truncated at %s (offset %zu)", what, c->off);
    if (*v < lo || *v > hi)
        return vt_err(err, errlen, VT_EINVAL, "%s %d out of range [%d, %d]", what, (int)*v, (int)lo,
                      (int)hi);
    return 0;
}

void vt_vad_file_free(struct vt_vad_file *f)
{
    if (!f)
        return;
    free(f->buf);
    free(f);
}

const struct vt_ggml_tensor *vt_vad_file_find(const struct vt_vad_file *f, const char *name)
{
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i];
    return NULL;
}

static int parse_header(struct vt_vad_file *f, struct cursor *c, char *err, size_t errlen)
{
    const unsigned char *b;
    int32_t magic, n;
    int rc;

    if (get_i32(c, &magic) || (uint32_t)magic != GGML_MAGIC)
        return vt_err(err, errlen, VT_EINVAL, "not a ggml file (bad magic)");
    rc = get_field(c, "model type length", 1, (int32_t)sizeof(f->type) - 1, &n, err, errlen);
    if (rc)
        return rc;
    if (take(c, (size_t)n, &b))
        return vt_err(err, errlen, VT_EINVAL, "truncated in the model type");
    for (int32_t i = 0; i < n; i++)
        if (b[i] < 0x20 || b[i] > 0x7e)
            return vt_err(err, errlen, VT_EINVAL, "model type is not printable ASCII");
    memcpy(f->type, b, (size_t)n);
    f->type[n] = 0;
    for (int i = 0; i < 3; i++) {
        rc = get_field(c, "version", 0, 1 << 20, &f->version[i], err, errlen);
        if (rc)
            return rc;
    }
    if ((rc = get_field(c, "window", 1, MAX_WINDOW, &f->n_window, err, errlen)) ||
        (rc = get_field(c, "context", 0, MAX_WINDOW, &f->n_context, err, errlen)) ||
        (rc = get_field(c, "encoder layers", 1, VT_VAD_MAX_LAYERS, &f->n_layers, err, errlen)))
        return rc;
    for (int32_t i = 0; i < f->n_layers; i++)
        if ((rc = get_field(c, "encoder in channels", 1, MAX_CHANNELS, &f->enc_in[i], err,
                            errlen)) ||
            (rc = get_field(c, "encoder out channels", 1, MAX_CHANNELS, &f->enc_out[i], err,
                            errlen)) ||
            (rc = get_field(c, "kernel size", 1, 64, &f->kernel[i], err, errlen)))
            return rc;
    if ((rc = get_field(c, "lstm input size", 1, MAX_CHANNELS, &f->lstm_input, err, errlen)) ||
        (rc = get_field(c, "lstm hidden size", 1, MAX_CHANNELS, &f->lstm_hidden, err, errlen)) ||
        (rc = get_field(c, "final conv in", 1, MAX_CHANNELS, &f->final_in, err, errlen)) ||
        (rc = get_field(c, "final conv out", 1, MAX_CHANNELS, &f->final_out, err, errlen)))
        return rc;
    return 0;
}

static int parse_tensor(struct vt_vad_file *f, struct cursor *c, char *err, size_t errlen)
{
    struct vt_ggml_tensor *t;
    const unsigned char *b;
    int32_t n_dims, name_len, type;
    size_t esize, at = c->off;
    char why[160];
    int rc;

    if (f->n_tensors == VT_VAD_MAX_TENSORS)
        return vt_err(err, errlen, VT_EINVAL, "more than %d tensors", VT_VAD_MAX_TENSORS);
    t = &f->tensors[f->n_tensors];
    memset(t, 0, sizeof(*t));
    if ((rc = get_field(c, "tensor dimensions", 0, VT_GGML_MAX_DIMS, &n_dims, why, sizeof(why))) ||
        (rc = get_field(c, "tensor name length", 1, VT_VAD_MAX_NAME - 1, &name_len, why,
                        sizeof(why))) ||
        (rc = get_field(c, "tensor type (0 f32, 1 f16)", 0, 1, &type, why, sizeof(why))))
        return vt_err(err, errlen, rc, "tensor %zu at offset %zu: %s", f->n_tensors, at, why);
    t->n_dims = n_dims;
    t->type = (enum vt_ggml_type)type;
    t->count = 1;
    for (int i = 0; i < VT_GGML_MAX_DIMS; i++)
        t->ne[i] = 1;
    for (int i = 0; i < n_dims; i++) {
        int32_t d;

        rc = get_field(c, "tensor size", 1, MAX_DIM, &d, why, sizeof(why));
        if (rc)
            return vt_err(err, errlen, rc, "tensor %zu at offset %zu: %s", f->n_tensors, at, why);
        t->ne[i] = d;
        /* d <= 2^24 and at most 4 of them, but the product must also fit the file */
        if (t->count > SIZE_MAX / (size_t)d)
            return vt_err(err, errlen, VT_EINVAL, "tensor %zu: element count overflows",
                          f->n_tensors);
        t->count *= (size_t)d;
    }
    if (take(c, (size_t)name_len, &b))
        return vt_err(err, errlen, VT_EINVAL, "tensor %zu: truncated in its name", f->n_tensors);
    for (int32_t i = 0; i < name_len; i++)
        if (b[i] < 0x21 || b[i] > 0x7e)
            return vt_err(err, errlen, VT_EINVAL, "tensor %zu: name is not printable ASCII",
                          f->n_tensors);
    memcpy(t->name, b, (size_t)name_len);
    t->name[name_len] = 0;
    if (vt_vad_file_find(f, t->name))
        return vt_err(err, errlen, VT_EINVAL, "tensor '%s' appears twice", t->name);
    esize = t->type == VT_GGML_F16 ? 2 : 4;
    if (t->count > (c->len - c->off) / esize)
        return vt_err(err, errlen, VT_EINVAL,
                      "tensor '%s': %zu elements need %zu more bytes than the file has", t->name,
                      t->count, t->count * esize - (c->len - c->off));
    t->nbytes = t->count * esize;
    take(c, t->nbytes, &t->data);
    f->n_tensors++;
    return 0;
}

static int parse_owned(unsigned char *buf, size_t len, struct vt_vad_file **out, char *err,
                       size_t errlen)
{
    struct vt_vad_file *f = vt_xcalloc(1, sizeof(*f));
    struct cursor c = {.p = buf, .len = len};
    int rc;

    f->buf = buf;
    f->len = len;
    rc = parse_header(f, &c, err, errlen);
    while (!rc && c.off < len)
        rc = parse_tensor(f, &c, err, errlen);
    if (!rc && f->n_tensors == 0)
        rc = vt_err(err, errlen, VT_EINVAL, "no tensors");
    if (rc) {
        vt_vad_file_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int vt_vad_file_parse(const void *data, size_t len, struct vt_vad_file **out, char *err,
                      size_t errlen)
{
    unsigned char *buf = vt_xmalloc(len ? len : 1);

    if (len)
        memcpy(buf, data, len);
    return parse_owned(buf, len, out, err, errlen);
}

int vt_vad_file_open(const char *path, struct vt_vad_file **out, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    int rc = vt_read_file_capped(path, "VAD model", VT_VAD_MAX_FILE, &data, &len, err, errlen);

    if (rc)
        return rc;
    rc = parse_owned((unsigned char *)data, len, out, err, errlen);
    if (rc && err && errlen) {
        char tmp[512];

        snprintf(tmp, sizeof(tmp), "%s", err);
        snprintf(err, errlen, "'%s': %s", path, tmp);
    }
    return rc;
}

/* IEEE half to float, subnormals and infinities included. */
static float half_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    float f;

    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (!man) {
            bits = sign;
        } else {
            /* subnormal: normalise */
            int e = -1;

            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
        }
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    memcpy(&f, &bits, sizeof(f));
    return f;
}

void vt_ggml_to_f32(const struct vt_ggml_tensor *t, float *out)
{
    const unsigned char *p = t->data;

    for (size_t i = 0; i < t->count; i++) {
        if (t->type == VT_GGML_F16) {
            out[i] = half_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
        } else {
            uint32_t bits = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                            (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;

            memcpy(&out[i], &bits, sizeof(bits));
        }
    }
}
