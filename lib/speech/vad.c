/*
 * The ggml VAD file reader (vad.h): a cursor over the file that refuses to move past its
 * end, hyper-parameters bounded before they size anything, and tensors whose element
 * counts are multiplied with overflow checks before their bytes are taken from the file.
 */
#include "speech/vad.h"

#include "base/bytes.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GGML_MAGIC 0x67676d6cu
/* Bounds on what the header may claim: generous for Silero (129 channels, 512 samples). */
#define MAX_CHANNELS 4096
#define MAX_WINDOW   (1 << 16)
#define MAX_DIM      (1 << 24)

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

static int parse_header(struct vt_vad_file *f, struct vt_bytes *c, char *err, size_t errlen)
{
    int32_t magic, n;
    int rc;

    if (vt_bytes_i32(c, &magic) || (uint32_t)magic != GGML_MAGIC)
        return vt_err(err, errlen, VT_EINVAL, "not a ggml file (bad magic)");
    rc = vt_bytes_field(c, "model type length", 1, (int32_t)sizeof(f->type) - 1, &n, err, errlen);
    if (rc)
        return rc;
    rc = vt_bytes_name(c, (size_t)n, ' ', "the model type", f->type, err, errlen);
    if (rc)
        return rc;
    for (int i = 0; i < 3; i++) {
        rc = vt_bytes_field(c, "version", 0, 1 << 20, &f->version[i], err, errlen);
        if (rc)
            return rc;
    }
    if ((rc = vt_bytes_field(c, "window", 1, MAX_WINDOW, &f->n_window, err, errlen)) ||
        (rc = vt_bytes_field(c, "context", 0, MAX_WINDOW, &f->n_context, err, errlen)) ||
        (rc = vt_bytes_field(c, "encoder layers", 1, VT_VAD_MAX_LAYERS, &f->n_layers, err, errlen)))
        return rc;
    for (int32_t i = 0; i < f->n_layers; i++)
        if ((rc = vt_bytes_field(c, "encoder in channels", 1, MAX_CHANNELS, &f->enc_in[i], err,
                                 errlen)) ||
            (rc = vt_bytes_field(c, "encoder out channels", 1, MAX_CHANNELS, &f->enc_out[i], err,
                                 errlen)) ||
            (rc = vt_bytes_field(c, "kernel size", 1, 64, &f->kernel[i], err, errlen)))
            return rc;
    if ((rc = vt_bytes_field(c, "lstm input size", 1, MAX_CHANNELS, &f->lstm_input, err, errlen)) ||
        (rc = vt_bytes_field(c, "lstm hidden size", 1, MAX_CHANNELS, &f->lstm_hidden, err,
                             errlen)) ||
        (rc = vt_bytes_field(c, "final conv in", 1, MAX_CHANNELS, &f->final_in, err, errlen)) ||
        (rc = vt_bytes_field(c, "final conv out", 1, MAX_CHANNELS, &f->final_out, err, errlen)))
        return rc;
    return 0;
}

static int parse_tensor(struct vt_vad_file *f, struct vt_bytes *c, char *err, size_t errlen)
{
    struct vt_ggml_tensor *t;
    int32_t n_dims, name_len, type;
    size_t esize, at = c->off;
    char why[160];
    int rc;

    if (f->n_tensors == VT_VAD_MAX_TENSORS)
        return vt_err(err, errlen, VT_EINVAL, "more than %d tensors", VT_VAD_MAX_TENSORS);
    t = &f->tensors[f->n_tensors];
    memset(t, 0, sizeof(*t));
    if ((rc = vt_bytes_field(c, "tensor dimensions", 0, VT_GGML_MAX_DIMS, &n_dims, why,
                             sizeof(why))) ||
        (rc = vt_bytes_field(c, "tensor name length", 1, VT_VAD_MAX_NAME - 1, &name_len, why,
                             sizeof(why))) ||
        (rc = vt_bytes_field(c, "tensor type (0 f32, 1 f16)", 0, 1, &type, why, sizeof(why))))
        return vt_err(err, errlen, rc, "tensor %zu at offset %zu: %s", f->n_tensors, at, why);
    t->n_dims = n_dims;
    t->type = (enum vt_ggml_type)type;
    t->count = 1;
    for (int i = 0; i < VT_GGML_MAX_DIMS; i++)
        t->ne[i] = 1;
    for (int i = 0; i < n_dims; i++) {
        int32_t d;

        rc = vt_bytes_field(c, "tensor size", 1, MAX_DIM, &d, why, sizeof(why));
        if (rc)
            return vt_err(err, errlen, rc, "tensor %zu at offset %zu: %s", f->n_tensors, at, why);
        t->ne[i] = d;
        /* d <= 2^24 and at most 4 of them, but the product must also fit the file */
        if (t->count > SIZE_MAX / (size_t)d)
            return vt_err(err, errlen, VT_EINVAL, "tensor %zu: element count overflows",
                          f->n_tensors);
        t->count *= (size_t)d;
    }
    if (vt_bytes_name(c, (size_t)name_len, '!', "its name", t->name, why, sizeof(why)))
        return vt_err(err, errlen, VT_EINVAL, "tensor %zu: %s", f->n_tensors, why);
    if (vt_vad_file_find(f, t->name))
        return vt_err(err, errlen, VT_EINVAL, "tensor '%s' appears twice", t->name);
    esize = t->type == VT_GGML_F16 ? 2 : 4;
    if (t->count > (c->len - c->off) / esize)
        return vt_err(err, errlen, VT_EINVAL,
                      "tensor '%s': %zu elements need %zu more bytes than the file has", t->name,
                      t->count, t->count * esize - (c->len - c->off));
    t->nbytes = t->count * esize;
    vt_bytes_take(c, t->nbytes, &t->data);
    f->n_tensors++;
    return 0;
}

static int parse_owned(unsigned char *buf, size_t len, struct vt_vad_file **out, char *err,
                       size_t errlen)
{
    struct vt_vad_file *f = vt_xcalloc(1, sizeof(*f));
    struct vt_bytes c = {.p = buf, .len = len};
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
            out[i] = half_to_f32(vt_le16(p + 2 * i));
        } else {
            uint32_t bits = vt_le32(p + 4 * i);

            memcpy(&out[i], &bits, sizeof(bits));
        }
    }
}

/* ---- the network ---- */

#define N_LAYERS 4
#define FILTER   256 /* STFT frame */
#define HOP      128
#define N_BINS   (FILTER / 2 + 1)
#define N_FRAMES 4 /* (64 + 512 + 64 - 256) / 128 + 1 */
#define KERNEL   3
#define GATES    (4 * VT_VAD_HIDDEN)
#define MAX_CH   N_BINS

static const int enc_in[N_LAYERS] = {N_BINS, 128, 64, 64};
static const int enc_out[N_LAYERS] = {128, 64, 64, 128};
static const int enc_stride[N_LAYERS] = {1, 2, 2, 1};

struct vt_vad {
    char model[96];
    float *stft;                      /* [2 * N_BINS][FILTER]: real rows, then imaginary */
    float *enc_w[N_LAYERS];           /* [out][in][KERNEL] */
    float *enc_b[N_LAYERS];           /* [out] */
    float *w_ih, *w_hh, *b_ih, *b_hh; /* [GATES][HIDDEN], [GATES]: gates i, f, g, o */
    float *out_w, out_b;              /* [HIDDEN], the final 1x1 conv */
};

void vt_vad_free(struct vt_vad *vad)
{
    if (!vad)
        return;
    free(vad->stft);
    for (int i = 0; i < N_LAYERS; i++) {
        free(vad->enc_w[i]);
        free(vad->enc_b[i]);
    }
    free(vad->w_ih);
    free(vad->w_hh);
    free(vad->b_ih);
    free(vad->b_hh);
    free(vad->out_w);
    free(vad);
}

const char *vt_vad_model(const struct vt_vad *vad)
{
    return vad->model;
}

/* The tensor name with sizes ne0..ne3 (ggml order) as floats, or VT_EINVAL. */
static int weights(const struct vt_vad_file *f, const char *name, int64_t ne0, int64_t ne1,
                   int64_t ne2, float **out, char *err, size_t errlen)
{
    const struct vt_ggml_tensor *t = vt_vad_file_find(f, name);

    if (!t)
        return vt_err(err, errlen, VT_EINVAL, "tensor '%s' missing", name);
    if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != ne2 || t->ne[3] != 1)
        return vt_err(err, errlen, VT_EINVAL,
                      "tensor '%s' is [%lld, %lld, %lld, %lld], expected [%lld, %lld, %lld]", name,
                      (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
                      (long long)t->ne[3], (long long)ne0, (long long)ne1, (long long)ne2);
    *out = vt_xmalloc(t->count * sizeof(**out));
    vt_ggml_to_f32(t, *out);
    return 0;
}

static int check_header(const struct vt_vad_file *f, char *err, size_t errlen)
{
    if (strcmp(f->type, "silero-16k") != 0)
        return vt_err(err, errlen, VT_EINVAL, "model type '%s', expected 'silero-16k'", f->type);
    if (f->n_window != VT_VAD_WINDOW || f->n_context != VT_VAD_CONTEXT)
        return vt_err(err, errlen, VT_EINVAL, "window %d, context %d: expected %d, %d",
                      (int)f->n_window, (int)f->n_context, VT_VAD_WINDOW, VT_VAD_CONTEXT);
    if (f->n_layers != N_LAYERS)
        return vt_err(err, errlen, VT_EINVAL, "%d encoder layers, expected %d", (int)f->n_layers,
                      N_LAYERS);
    for (int i = 0; i < N_LAYERS; i++)
        if (f->enc_in[i] != enc_in[i] || f->enc_out[i] != enc_out[i] || f->kernel[i] != KERNEL)
            return vt_err(err, errlen, VT_EINVAL,
                          "encoder layer %d is %d -> %d (kernel %d), expected %d -> %d (kernel %d)",
                          i, (int)f->enc_in[i], (int)f->enc_out[i], (int)f->kernel[i], enc_in[i],
                          enc_out[i], KERNEL);
    if (f->lstm_input != VT_VAD_HIDDEN || f->lstm_hidden != VT_VAD_HIDDEN ||
        f->final_in != VT_VAD_HIDDEN || f->final_out != 1)
        return vt_err(err, errlen, VT_EINVAL,
                      "lstm %d/%d, final conv %d -> %d: expected Silero v6's", (int)f->lstm_input,
                      (int)f->lstm_hidden, (int)f->final_in, (int)f->final_out);
    return 0;
}

int vt_vad_load(const struct vt_vad_file *f, struct vt_vad **out, char *err, size_t errlen)
{
    struct vt_vad *vad = vt_xcalloc(1, sizeof(*vad));
    float *bias = NULL;
    char name[96];
    size_t known = 0;
    int rc;

    rc = check_header(f, err, errlen);
    if (rc)
        goto out;
    rc = weights(f, "_model.stft.forward_basis_buffer", FILTER, 1, 2 * N_BINS, &vad->stft, err,
                 errlen);
    for (int i = 0; !rc && i < N_LAYERS; i++) {
        snprintf(name, sizeof(name), "_model.encoder.%d.reparam_conv.weight", i);
        rc = weights(f, name, KERNEL, enc_in[i], enc_out[i], &vad->enc_w[i], err, errlen);
        if (rc)
            break;
        snprintf(name, sizeof(name), "_model.encoder.%d.reparam_conv.bias", i);
        rc = weights(f, name, enc_out[i], 1, 1, &vad->enc_b[i], err, errlen);
    }
    if (rc ||
        (rc = weights(f, "_model.decoder.rnn.weight_ih", VT_VAD_HIDDEN, GATES, 1, &vad->w_ih, err,
                      errlen)) ||
        (rc = weights(f, "_model.decoder.rnn.weight_hh", VT_VAD_HIDDEN, GATES, 1, &vad->w_hh, err,
                      errlen)) ||
        (rc = weights(f, "_model.decoder.rnn.bias_ih", GATES, 1, 1, &vad->b_ih, err, errlen)) ||
        (rc = weights(f, "_model.decoder.rnn.bias_hh", GATES, 1, 1, &vad->b_hh, err, errlen)) ||
        (rc = weights(f, "_model.decoder.decoder.2.weight", VT_VAD_HIDDEN, 1, 1, &vad->out_w, err,
                      errlen)) ||
        (rc = weights(f, "_model.decoder.decoder.2.bias", 1, 1, 1, &bias, err, errlen)))
        goto out;
    vad->out_b = bias[0];
    known = 1 + 2 * N_LAYERS + 4 + 2;
    if (f->n_tensors != known) {
        /* names are unique, so some tensor is not one of Silero's */
        for (size_t i = 0; i < f->n_tensors; i++) {
            const char *n = f->tensors[i].name;

            if (strncmp(n, "_model.encoder.", 15) != 0 && strncmp(n, "_model.decoder.", 15) != 0 &&
                strcmp(n, "_model.stft.forward_basis_buffer") != 0) {
                rc = vt_err(err, errlen, VT_EINVAL, "unknown tensor '%s'", n);
                goto out;
            }
        }
        rc = vt_err(err, errlen, VT_EINVAL, "%zu tensors, expected %zu", f->n_tensors, known);
        goto out;
    }
    snprintf(vad->model, sizeof(vad->model), "%s %d.%d.%d", f->type, (int)f->version[0],
             (int)f->version[1], (int)f->version[2]);
out:
    free(bias);
    if (rc) {
        vt_vad_free(vad);
        return rc;
    }
    *out = vad;
    return 0;
}

int vt_vad_open(const char *path, struct vt_vad **out, char *err, size_t errlen)
{
    struct vt_vad_file *f = NULL;
    int rc = vt_vad_file_open(path, &f, err, errlen);

    if (rc)
        return rc;
    rc = vt_vad_load(f, out, err, errlen);
    vt_vad_file_free(f);
    if (rc && err && errlen) {
        char tmp[512];

        snprintf(tmp, sizeof(tmp), "%s", err);
        snprintf(err, errlen, "'%s': %s", path, tmp);
    }
    return rc;
}

void vt_vad_state_init(struct vt_vad_state *st)
{
    memset(st, 0, sizeof(*st));
}

static float sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* Dot product in 8 lanes, which the compiler vectorises (a single sum it may not reorder). */
static float dot(const float *a, const float *b, int n)
{
    float acc[8] = {0};
    int k = 0;

    for (; k + 8 <= n; k += 8)
        for (int l = 0; l < 8; l++)
            acc[l] += a[k + l] * b[k + l];
    for (; k < n; k++)
        acc[0] += a[k] * b[k];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/*
 * 1-d convolution, padding 1 each side, then ReLU: in [cin][len], out [cout][*out_len].
 * Each output frame is one dot product of a weight row ([cin][KERNEL], contiguous) with
 * the input's columns under the kernel.
 */
static void conv_relu(const float *in, int cin, int len, const float *w, const float *b, int cout,
                      int stride, float *out, int *out_len)
{
    int lo = (len + 2 - KERNEL) / stride + 1;
    float col[MAX_CH * KERNEL];

    for (int t = 0; t < lo; t++) {
        for (int i = 0; i < cin; i++)
            for (int k = 0; k < KERNEL; k++) {
                int at = t * stride + k - 1;

                col[i * KERNEL + k] = at >= 0 && at < len ? in[(size_t)i * len + at] : 0;
            }
        for (int o = 0; o < cout; o++) {
            float s = b[o] + dot(w + (size_t)o * cin * KERNEL, col, cin * KERNEL);

            out[(size_t)o * lo + t] = s > 0 ? s : 0;
        }
    }
    *out_len = lo;
}

float vt_vad_window(const struct vt_vad *vad, struct vt_vad_state *st, const float *x,
                    enum vt_vad_framing framing)
{
    enum { PAD = VT_VAD_CONTEXT, LEN = VT_VAD_CONTEXT + VT_VAD_WINDOW + VT_VAD_CONTEXT };
    float buf[LEN], a[MAX_CH * N_FRAMES], b[MAX_CH * N_FRAMES], gates[GATES], x_t[VT_VAD_HIDDEN];
    float *cur = a, *next = b, *tmp;
    int len = N_FRAMES;
    float s;

    /* framing: 640 samples around the window */
    if (framing == VT_VAD_FRAMING_WHISPERCPP) {
        for (int j = 0; j < PAD; j++)
            buf[j] = x[PAD - j];
    } else {
        memcpy(buf, st->context, sizeof(st->context));
    }
    memcpy(buf + PAD, x, VT_VAD_WINDOW * sizeof(*x));
    for (int j = 0; j < PAD; j++)
        buf[PAD + VT_VAD_WINDOW + j] = x[VT_VAD_WINDOW - 2 - j];
    memcpy(st->context, x + VT_VAD_WINDOW - VT_VAD_CONTEXT, sizeof(st->context));

    /* STFT as a strided convolution with the model's basis; magnitudes [N_BINS][N_FRAMES] */
    for (int f = 0; f < N_BINS; f++) {
        const float *re = vad->stft + (size_t)f * FILTER, *im = re + (size_t)N_BINS * FILTER;

        for (int t = 0; t < N_FRAMES; t++) {
            const float *seg = buf + t * HOP;
            float r = dot(re, seg, FILTER), m = dot(im, seg, FILTER);

            cur[f * N_FRAMES + t] = sqrtf(r * r + m * m);
        }
    }

    /* encoder: 4 frames -> 4 -> 2 -> 1 -> 1, ending with 128 channels */
    for (int i = 0; i < N_LAYERS; i++) {
        conv_relu(cur, enc_in[i], len, vad->enc_w[i], vad->enc_b[i], enc_out[i], enc_stride[i],
                  next, &len);
        tmp = cur;
        cur = next;
        next = tmp;
    }

    /* LSTM cell on the first (only) frame, its state carried to the next window */
    for (int j = 0; j < VT_VAD_HIDDEN; j++)
        x_t[j] = cur[j * len];
    for (int g = 0; g < GATES; g++) {
        const float *wi = vad->w_ih + (size_t)g * VT_VAD_HIDDEN;
        const float *wh = vad->w_hh + (size_t)g * VT_VAD_HIDDEN;
        gates[g] = vad->b_ih[g] + vad->b_hh[g] + dot(wi, x_t, VT_VAD_HIDDEN) +
                   dot(wh, st->h, VT_VAD_HIDDEN);
    }
    for (int j = 0; j < VT_VAD_HIDDEN; j++) {
        float ig = sigmoid(gates[j]), fg = sigmoid(gates[VT_VAD_HIDDEN + j]);
        float gg = tanhf(gates[2 * VT_VAD_HIDDEN + j]), og = sigmoid(gates[3 * VT_VAD_HIDDEN + j]);

        st->c[j] = fg * st->c[j] + ig * gg;
        st->h[j] = og * tanhf(st->c[j]);
    }

    /* decoder: ReLU, 1x1 conv to one channel, sigmoid */
    s = vad->out_b;
    for (int j = 0; j < VT_VAD_HIDDEN; j++)
        s += vad->out_w[j] * (st->h[j] > 0 ? st->h[j] : 0);
    return sigmoid(s);
}

size_t vt_vad_probs(const struct vt_vad *vad, const int16_t *pcm, size_t n,
                    enum vt_vad_framing framing, float **probs)
{
    size_t n_probs = (n + VT_VAD_WINDOW - 1) / VT_VAD_WINDOW;
    struct vt_vad_state st;
    float x[VT_VAD_WINDOW];

    *probs = vt_xmalloc((n_probs ? n_probs : 1) * sizeof(**probs));
    vt_vad_state_init(&st);
    for (size_t w = 0; w < n_probs; w++) {
        size_t at = w * VT_VAD_WINDOW;

        for (size_t k = 0; k < VT_VAD_WINDOW; k++)
            x[k] = at + k < n ? pcm[at + k] / 32768.0f : 0;
        (*probs)[w] = vt_vad_window(vad, &st, x, framing);
    }
    return n_probs;
}

/* ---- segments ---- */

void vt_vad_params_default(struct vt_vad_params *p)
{
    p->threshold = 0.5f;
    p->min_speech_ms = 250;
    p->min_silence_ms = 100;
    p->max_speech_s = 0;
    p->speech_pad_ms = 30;
}

/* A segment; split: it ends where max_speech_s cut the speech (never merged again). */
static void push(struct vt_vad_segment **v, size_t *n, size_t *cap, unsigned char **split,
                 size_t *split_cap, size_t start, size_t end, int is_split)
{
    vt_grow((void **)v, cap, *n + 1, sizeof(**v));
    vt_grow((void **)split, split_cap, *n + 1, 1);
    (*v)[*n].start = start;
    (*v)[*n].end = end;
    (*split)[*n] = (unsigned char)is_split;
    (*n)++;
}

/* The limits of vt_vad_segments, in samples. */
struct seg_limits {
    size_t min_silence, min_speech, pad, total, max_speech;
    size_t split_silence; /* a silence where an over-long segment may be split */
    float neg;            /* below this probability is silence */
};

static void seg_limits_init(struct seg_limits *l, size_t n_probs, const struct vt_vad_params *p)
{
    const size_t rate = VT_VAD_RATE_HZ, win = VT_VAD_WINDOW;

    l->min_silence = rate * (size_t)(p->min_silence_ms > 0 ? p->min_silence_ms : 0) / 1000;
    l->min_speech = rate * (size_t)(p->min_speech_ms > 0 ? p->min_speech_ms : 0) / 1000;
    l->pad = rate * (size_t)(p->speech_pad_ms > 0 ? p->speech_pad_ms : 0) / 1000;
    l->total = n_probs * win;
    l->max_speech = SIZE_MAX / 2;
    /* Silero's 98 ms */
    l->split_silence = rate * 98 / 1000;
    l->neg = p->threshold - 0.15f < 0.01f ? 0.01f : p->threshold - 0.15f;
    if (p->max_speech_s > 0) {
        double m = rate * p->max_speech_s - (double)win - 2.0 * (double)l->pad;

        if (m > 0 && m < (double)(SIZE_MAX / 2))
            l->max_speech = (size_t)m;
    }
}

/*
 * Silero's segmentation of the probabilities into *v (*split: which segments end at a
 * max_speech cut), with hysteresis (speech from threshold, silence below neg), a silence
 * of min_silence ending a segment and an over-long one cut at its last long silence.
 */
static size_t find_segments(const float *probs, size_t n_probs, float threshold,
                            const struct seg_limits *l, struct vt_vad_segment **v,
                            unsigned char **split)
{
    const size_t win = VT_VAD_WINDOW;
    size_t n = 0, cap = 0, split_cap = 0, temp_end = 0, prev_end = 0, next_start = 0, start = 0;
    int in_speech = 0, have = 0;

    for (size_t i = 0; i < n_probs; i++) {
        float prob = probs[i];
        size_t at = win * i;

        if (prob >= threshold && temp_end) {
            temp_end = 0;
            if (next_start < prev_end)
                next_start = at;
        }
        if (prob >= threshold && !in_speech) {
            in_speech = have = 1;
            start = at;
            continue;
        }
        if (in_speech && at - start > l->max_speech) {
            if (prev_end) {
                push(v, &n, &cap, split, &split_cap, start, prev_end, 1);
                have = 1;
                if (next_start < prev_end)
                    in_speech = have = 0;
                else
                    start = next_start;
                prev_end = next_start = temp_end = 0;
            } else {
                push(v, &n, &cap, split, &split_cap, start, at, 1);
                prev_end = next_start = temp_end = 0;
                in_speech = have = 0;
                continue;
            }
        }
        if (prob < l->neg && in_speech) {
            if (!temp_end)
                temp_end = at;
            if (at - temp_end > l->split_silence)
                prev_end = temp_end;
            if (at - temp_end < l->min_silence)
                continue;
            if (temp_end - start > l->min_speech)
                push(v, &n, &cap, split, &split_cap, start, temp_end, 0);
            prev_end = next_start = temp_end = 0;
            in_speech = have = 0;
        }
    }
    if (have && l->total - start > l->min_speech)
        push(v, &n, &cap, split, &split_cap, start, l->total, 0);
    return n;
}

/*
 * Merge segments less than 200 ms apart, then drop the short ones. whisper.cpp merges
 * the pieces of a segment cut at max_speech_s too, undoing the cut; not here.
 */
static size_t merge_segments(struct vt_vad_segment *v, unsigned char *split, size_t n,
                             size_t min_speech)
{
    for (size_t i = 0; i + 1 < n;) {
        if (!split[i] && v[i + 1].start < v[i].end + VT_VAD_RATE_HZ / 5) {
            v[i].end = v[i + 1].end;
            split[i] = split[i + 1];
            memmove(v + i + 1, v + i + 2, (n - i - 2) * sizeof(*v));
            memmove(split + i + 1, split + i + 2, n - i - 2);
            n--;
        } else {
            i++;
        }
    }
    for (size_t i = 0; i < n;) {
        if (v[i].end - v[i].start < min_speech) {
            memmove(v + i, v + i + 1, (n - i - 1) * sizeof(*v));
            n--;
        } else {
            i++;
        }
    }
    return n;
}

/* Padding: the full pad where there is room, else half the silence between. */
static void pad_segments(struct vt_vad_segment *v, size_t n, size_t pad, size_t total)
{
    for (size_t i = 0; i < n; i++) {
        if (i == 0)
            v[i].start = v[i].start > pad ? v[i].start - pad : 0;
        if (i + 1 < n) {
            size_t gap = v[i + 1].start - v[i].end;

            if (gap < 2 * pad) {
                v[i].end += gap / 2;
                v[i + 1].start -= gap / 2;
            } else {
                v[i].end = v[i].end + pad < total ? v[i].end + pad : total;
                v[i + 1].start = v[i + 1].start > pad ? v[i + 1].start - pad : 0;
            }
        } else {
            v[i].end = v[i].end + pad < total ? v[i].end + pad : total;
        }
    }
}

size_t vt_vad_segments(const float *probs, size_t n_probs, const struct vt_vad_params *p,
                       struct vt_vad_segment **out)
{
    struct seg_limits l;
    struct vt_vad_segment *v = NULL;
    unsigned char *split = NULL;
    size_t n;

    seg_limits_init(&l, n_probs, p);
    n = find_segments(probs, n_probs, p->threshold, &l, &v, &split);
    n = merge_segments(v, split, n, l.min_speech);
    pad_segments(v, n, l.pad, l.total);
    free(split);
    if (!n) {
        free(v);
        v = NULL;
    }
    *out = v;
    return n;
}

/* ---- segments as a stream ---- */

void vt_vad_cutter_init(struct vt_vad_cutter *c, const struct vt_vad_params *p)
{
    const size_t rate = VT_VAD_RATE_HZ;

    memset(c, 0, sizeof(*c));
    c->threshold = p->threshold;
    c->neg = p->threshold - 0.15f < 0.01f ? 0.01f : p->threshold - 0.15f;
    c->min_speech = rate * (size_t)(p->min_speech_ms > 0 ? p->min_speech_ms : 0) / 1000;
    c->min_silence = rate * (size_t)(p->min_silence_ms > 0 ? p->min_silence_ms : 0) / 1000;
    c->pad = rate * (size_t)(p->speech_pad_ms > 0 ? p->speech_pad_ms : 0) / 1000;
    /* a segment ends min_silence after its speech: half of that is room for both pads */
    if (c->pad > c->min_silence / 2)
        c->pad = c->min_silence / 2;
}

static size_t padded_start(const struct vt_vad_cutter *c)
{
    if (c->no_pad)
        return c->start;
    return c->start > c->pad ? c->start - c->pad : 0;
}

/* The open segment ending at end (unpadded) into *seg if long enough; closes it. */
static int cutter_close(struct vt_vad_cutter *c, size_t end, size_t pad_end,
                        struct vt_vad_segment *seg)
{
    /* the rest of a cut segment is speech whatever its length */
    int keep = end > c->start && (c->no_pad || end - c->start > c->min_speech);

    if (keep) {
        seg->start = padded_start(c);
        seg->end = end + pad_end;
    }
    c->triggered = c->quiet = c->no_pad = 0;
    return keep;
}

int vt_vad_cutter_push(struct vt_vad_cutter *c, float prob, struct vt_vad_segment *seg)
{
    size_t at = c->n_windows++ * VT_VAD_WINDOW;

    if (prob >= c->threshold) {
        c->quiet = 0;
        if (!c->triggered) {
            c->triggered = 1;
            c->start = at;
        }
        return 0;
    }
    if (!c->triggered || prob >= c->neg)
        return 0;
    if (!c->quiet) {
        c->quiet = 1;
        c->temp_end = at;
    }
    if (at - c->temp_end < c->min_silence)
        return 0;
    /* at is min_silence past temp_end, and pad at most half of it: the pad is all audio */
    return cutter_close(c, c->temp_end, c->pad, seg);
}

int vt_vad_cutter_finish(struct vt_vad_cutter *c, size_t n_samples, struct vt_vad_segment *seg)
{
    if (!c->triggered || n_samples <= c->start)
        return c->triggered = c->quiet = c->no_pad = 0;
    /* upstream's last segment runs to the end of the audio, a silence at its end included */
    return cutter_close(c, n_samples, 0, seg);
}

size_t vt_vad_cutter_frontier(const struct vt_vad_cutter *c)
{
    size_t next = c->n_windows * VT_VAD_WINDOW;

    if (c->triggered)
        return padded_start(c);
    return next > c->pad ? next - c->pad : 0;
}

int vt_vad_cutter_open(const struct vt_vad_cutter *c, size_t *start)
{
    if (c->triggered)
        *start = padded_start(c);
    return c->triggered;
}

int vt_vad_cutter_cut(struct vt_vad_cutter *c, size_t at, struct vt_vad_segment *seg)
{
    if (!c->triggered || at <= padded_start(c) || at > c->n_windows * VT_VAD_WINDOW)
        return 0;
    seg->start = padded_start(c);
    seg->end = at;
    c->start = at;
    c->no_pad = 1;
    /* a silence that began before the cut now begins at it */
    if (c->quiet && c->temp_end < at)
        c->temp_end = at;
    return 1;
}
