/*
 * The reader of whisper.cpp's ggml checkpoints (whisper_ggml.h): a cursor that refuses to
 * move past the end of the file, every count bounded before it sizes anything, tensors
 * whose bytes are computed with overflow checks before they are taken, names indexed in
 * sorted order (duplicates found there, lookups by binary search), and the check of a
 * whole Whisper model's tensors against its hparams.
 */
#include "ml/whisper_ggml.h"

#include "base/bytes.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GGML_MAGIC 0x67676d6cu
/* Bounds on what the header may claim: well above large-v3 (n_vocab 51866, 1500 audio
 * positions, 1280 states, 20 heads, 32 layers, 128 mels, 201 filter bins). */
#define MAX_VOCAB  (1 << 20)
#define MAX_CTX    (1 << 16)
#define MAX_STATE  (1 << 16)
#define MAX_HEADS  1024
#define MAX_LAYERS 1024
#define MAX_MELS   1024
#define MAX_FFT    (1 << 16)
#define MAX_DIM    (1 << 24)
#define QNT_FACTOR 1000 /* ftype = qntvr * 1000 + file type (GGML_QNT_VERSION_FACTOR) */

void vt_wggml_free(struct vt_wggml *f)
{
    if (!f)
        return;
    free(f->filters);
    free(f->word_off);
    free(f->word_len);
    free(f->tensors);
    free(f->by_name);
    free(f->buf);
    free(f);
}

static int parse_hparams(struct vt_wggml *f, struct vt_bytes *c, char *err, size_t errlen)
{
    struct vt_wggml_hparams *h = &f->hp;
    const unsigned char *b;
    int rc;

    if (vt_bytes_take(c, 4, &b) || vt_le32(b) != GGML_MAGIC)
        return vt_err(err, errlen, VT_EINVAL, "not a ggml file (bad magic)");
    if ((rc = vt_bytes_field(c, "n_vocab", 1, MAX_VOCAB, &h->n_vocab, err, errlen)) ||
        (rc = vt_bytes_field(c, "n_audio_ctx", 1, MAX_CTX, &h->n_audio_ctx, err, errlen)) ||
        (rc = vt_bytes_field(c, "n_audio_state", 1, MAX_STATE, &h->n_audio_state, err, errlen)) ||
        (rc = vt_bytes_field(c, "n_audio_head", 1, MAX_HEADS, &h->n_audio_head, err, errlen)) ||
        (rc = vt_bytes_field(c, "n_audio_layer", 1, MAX_LAYERS, &h->n_audio_layer, err, errlen)) ||
        (rc = vt_bytes_field(c, "n_text_ctx", 1, MAX_CTX, &h->n_text_ctx, err, errlen)) ||
        (rc = vt_bytes_field(c, "n_text_state", 1, MAX_STATE, &h->n_text_state, err, errlen)) ||
        (rc = vt_bytes_field(c, "n_text_head", 1, MAX_HEADS, &h->n_text_head, err, errlen)) ||
        (rc = vt_bytes_field(c, "n_text_layer", 1, MAX_LAYERS, &h->n_text_layer, err, errlen)) ||
        (rc = vt_bytes_field(c, "n_mels", 1, MAX_MELS, &h->n_mels, err, errlen)) ||
        (rc = vt_bytes_field(c, "ftype", 0, 100 * QNT_FACTOR - 1, &h->ftype, err, errlen)))
        return rc;
    h->qntvr = h->ftype / QNT_FACTOR;
    h->ftype %= QNT_FACTOR;
    return 0;
}

static int parse_filters(struct vt_wggml *f, struct vt_bytes *c, char *err, size_t errlen)
{
    const unsigned char *b = NULL;
    size_t n;
    int rc;

    if ((rc = vt_bytes_field(c, "mel filter count", 1, MAX_MELS, &f->n_mel, err, errlen)) ||
        (rc = vt_bytes_field(c, "mel filter bins", 1, MAX_FFT, &f->n_fft, err, errlen)))
        return rc;
    n = (size_t)f->n_mel * (size_t)f->n_fft; /* at most 2^26: no overflow */
    if (n > (c->len - c->off) / 4 || vt_bytes_take(c, 4 * n, &b))
        return vt_err(err, errlen, VT_EINVAL, "truncated in the mel filters (%d x %d floats)",
                      (int)f->n_mel, (int)f->n_fft);
    f->filters = vt_xmalloc(n * sizeof(*f->filters));
    for (size_t i = 0; i < n; i++) {
        uint32_t bits = vt_le32(b + 4 * i);

        memcpy(&f->filters[i], &bits, sizeof(bits));
    }
    return 0;
}

static int parse_vocab(struct vt_wggml *f, struct vt_bytes *c, char *err, size_t errlen)
{
    const unsigned char *b;
    int rc;

    rc = vt_bytes_field(c, "vocabulary size", 0, f->hp.n_vocab, &f->n_words, err, errlen);
    if (rc)
        return rc;
    /* each word takes at least its 4-byte length: a count the file cannot hold is refused
     * before it sizes the arrays */
    if ((size_t)f->n_words > (c->len - c->off) / 4)
        return vt_err(err, errlen, VT_EINVAL, "truncated in the vocabulary (%d words)",
                      (int)f->n_words);
    f->word_off = vt_xmalloc(((size_t)f->n_words + 1) * sizeof(*f->word_off));
    f->word_len = vt_xmalloc(((size_t)f->n_words + 1) * sizeof(*f->word_len));
    for (int32_t i = 0; i < f->n_words; i++) {
        char why[160];
        int32_t len;

        if (vt_bytes_field(c, "word length", 0, VT_WGGML_MAX_WORD, &len, why, sizeof(why)))
            return vt_err(err, errlen, VT_EINVAL, "vocabulary word %d: %s", (int)i, why);
        if (vt_bytes_take(c, (size_t)len, &b))
            return vt_err(err, errlen, VT_EINVAL, "vocabulary word %d: truncated", (int)i);
        f->word_off[i] = (size_t)(b - c->p);
        f->word_len[i] = (uint32_t)len;
    }
    return 0;
}

/* ggml's type numbers, for the names of those refused. */
static const char *const ggml_type_names[] = {
    "F32",     "F16",    "Q4_0",    "Q4_1",  "Q4_2",   "Q4_3",  "Q5_0",  "Q5_1",
    "Q8_0",    "Q8_1",   "Q2_K",    "Q3_K",  "Q4_K",   "Q5_K",  "Q6_K",  "Q8_K",
    "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
    "I8",      "I16",    "I32",     "I64",   "F64",    "IQ1_M", "BF16",
};

const char *vt_wggml_type_name(enum vt_wggml_type type)
{
    return (size_t)type < VT_ARRAY_LEN(ggml_type_names) ? ggml_type_names[type] : "?";
}

/* Bytes of t's data (type, ne and count set), or VT_EINVAL for a type not read or a row
 * that is not whole blocks. */
static int tensor_bytes(const struct vt_wggml_tensor *t, int32_t type, size_t *nbytes, char *err,
                        size_t errlen)
{
    switch (type) {
    case VT_WGGML_F32:
        *nbytes = t->count * 4; /* count < 2^60 bytes: checked against the file after */
        return t->count > SIZE_MAX / 4 ? vt_err(err, errlen, VT_EINVAL, "size overflows") : 0;
    case VT_WGGML_F16:
        *nbytes = t->count * 2;
        return t->count > SIZE_MAX / 2 ? vt_err(err, errlen, VT_EINVAL, "size overflows") : 0;
    case VT_WGGML_Q8_0:
        if (t->ne[0] % VT_WGGML_QK8_0)
            return vt_err(err, errlen, VT_EINVAL, "Q8_0 rows of %lld values, not blocks of %d",
                          (long long)t->ne[0], VT_WGGML_QK8_0);
        if (t->count / VT_WGGML_QK8_0 > SIZE_MAX / 34)
            return vt_err(err, errlen, VT_EINVAL, "size overflows");
        *nbytes = t->count / VT_WGGML_QK8_0 * 34;
        return 0;
    default:
        if (type >= 0 && (size_t)type < VT_ARRAY_LEN(ggml_type_names))
            return vt_err(err, errlen, VT_EINVAL,
                          "type %s (%d) is not supported (F32, F16 and Q8_0 are)",
                          ggml_type_names[type], (int)type);
        return vt_err(err, errlen, VT_EINVAL, "unknown ggml type %d", (int)type);
    }
}

/* The fields before the name: n_dims, name length, type and sizes into t. */
static int tensor_header(struct vt_bytes *c, struct vt_wggml_tensor *t, int32_t *name_len,
                         int32_t *type, char *err, size_t errlen)
{
    int32_t n_dims;
    int rc;

    if ((rc = vt_bytes_field(c, "tensor dimensions", 1, VT_WGGML_MAX_DIMS, &n_dims, err, errlen)) ||
        (rc = vt_bytes_field(c, "tensor name length", 1, VT_WGGML_MAX_NAME - 1, name_len, err,
                             errlen)) ||
        (rc = vt_bytes_field(c, "tensor type", 0, INT32_MAX, type, err, errlen)))
        return rc;
    t->n_dims = n_dims;
    t->count = 1;
    for (int i = 0; i < VT_WGGML_MAX_DIMS; i++)
        t->ne[i] = 1;
    for (int i = 0; i < n_dims; i++) {
        int32_t d;

        if ((rc = vt_bytes_field(c, "tensor size", 1, MAX_DIM, &d, err, errlen)))
            return rc;
        t->ne[i] = d;
        /* at most 4 sizes of at most 2^24: the product fits 64 bits, not every size_t */
        if (t->count > SIZE_MAX / (size_t)d)
            return vt_err(err, errlen, VT_EINVAL, "element count overflows");
        t->count *= (size_t)d;
    }
    return 0;
}

static int parse_tensor(struct vt_wggml *f, struct vt_bytes *c, size_t *cap, char *err,
                        size_t errlen)
{
    struct vt_wggml_tensor *t;
    int32_t name_len, type;
    size_t at = c->off, nbytes = 0;
    char why[200];

    vt_grow((void **)&f->tensors, cap, f->n_tensors + 1, sizeof(*f->tensors));
    t = &f->tensors[f->n_tensors];
    memset(t, 0, sizeof(*t));
    if (tensor_header(c, t, &name_len, &type, why, sizeof(why)))
        return vt_err(err, errlen, VT_EINVAL, "tensor %zu at offset %zu: %s", f->n_tensors, at,
                      why);
    if (vt_bytes_name(c, (size_t)name_len, '!', "its name", t->name, why, sizeof(why)))
        return vt_err(err, errlen, VT_EINVAL, "tensor %zu: %s", f->n_tensors, why);
    if (tensor_bytes(t, type, &nbytes, why, sizeof(why)))
        return vt_err(err, errlen, VT_EINVAL, "tensor '%s': %s", t->name, why);
    if (vt_bytes_take(c, nbytes, &t->data))
        return vt_err(err, errlen, VT_EINVAL,
                      "tensor '%s': %zu bytes of %s data, the file has %zu left (truncated?)",
                      t->name, nbytes, ggml_type_names[type], c->len - c->off);
    t->type = (enum vt_wggml_type)type;
    t->nbytes = nbytes;
    f->n_tensors++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const struct vt_wggml_tensor *const *)a)->name,
                  (*(const struct vt_wggml_tensor *const *)b)->name);
}

/* Sort the names (a duplicate sits next to its twin). */
static int index_names(struct vt_wggml *f, char *err, size_t errlen)
{
    f->by_name = vt_xmalloc((f->n_tensors + 1) * sizeof(*f->by_name));
    for (size_t i = 0; i < f->n_tensors; i++)
        f->by_name[i] = &f->tensors[i];
    qsort(f->by_name, f->n_tensors, sizeof(*f->by_name), by_name);
    for (size_t i = 1; i < f->n_tensors; i++)
        if (strcmp(f->by_name[i]->name, f->by_name[i - 1]->name) == 0)
            return vt_err(err, errlen, VT_EINVAL, "tensor '%s' appears twice", f->by_name[i]->name);
    return 0;
}

/* Takes buf (heap, len bytes) whatever happens. */
static int parse_owned(unsigned char *buf, size_t len, struct vt_wggml **out, char *err,
                       size_t errlen)
{
    struct vt_wggml *f = vt_xcalloc(1, sizeof(*f));
    struct vt_bytes c = {.p = buf, .len = len};
    size_t cap = 0;
    int rc;

    f->buf = buf;
    f->len = len;
    rc = parse_hparams(f, &c, err, errlen);
    if (!rc)
        rc = parse_filters(f, &c, err, errlen);
    if (!rc)
        rc = parse_vocab(f, &c, err, errlen);
    while (!rc && c.off < len)
        rc = parse_tensor(f, &c, &cap, err, errlen);
    if (!rc)
        rc = index_names(f, err, errlen);
    if (rc) {
        vt_wggml_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int vt_wggml_parse(const void *data, size_t len, struct vt_wggml **out, char *err, size_t errlen)
{
    unsigned char *buf = vt_xmalloc(len ? len : 1);

    if (len)
        memcpy(buf, data, len);
    return parse_owned(buf, len, out, err, errlen);
}

int vt_wggml_open(const char *path, size_t max_bytes, struct vt_wggml **out, char *err,
                  size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    int rc =
        vt_read_file_capped(path, "whisper ggml model", max_bytes ? max_bytes : VT_WGGML_MAX_FILE,
                            &data, &len, err, errlen);

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

const unsigned char *vt_wggml_word(const struct vt_wggml *f, int32_t id, size_t *len)
{
    if (id < 0 || id >= f->n_words)
        return NULL;
    *len = f->word_len[id];
    return f->buf + f->word_off[id];
}

const struct vt_wggml_tensor *vt_wggml_find(const struct vt_wggml *f, const char *name)
{
    size_t lo = 0, hi = f->n_tensors;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct vt_wggml_tensor *t = f->by_name[mid];
        int cmp = strcmp(name, t->name);

        if (!cmp)
            return t;
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* IEEE half to float, exactly (ggml's GGML_FP16_TO_FP32): subnormals and infinities too. */
static float half_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    float f;

    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        /* zero or subnormal: man * 2^-24, exact in float */
        f = (float)man * (1.0f / 16777216.0f);
        return sign ? -f : f;
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    memcpy(&f, &bits, sizeof(f));
    return f;
}

void vt_wggml_to_f32(const struct vt_wggml_tensor *t, float *out)
{
    const unsigned char *p = t->data;

    if (t->type == VT_WGGML_Q8_0) {
        for (size_t blk = 0; blk < t->count / VT_WGGML_QK8_0; blk++, p += 34) {
            float d = half_to_f32(vt_le16(p));

            for (int j = 0; j < VT_WGGML_QK8_0; j++)
                out[blk * VT_WGGML_QK8_0 + (size_t)j] = (float)(int8_t)p[2 + j] * d;
        }
        return;
    }
    for (size_t i = 0; i < t->count; i++) {
        if (t->type == VT_WGGML_F16) {
            out[i] = half_to_f32(vt_le16(p + 2 * i));
        } else {
            uint32_t bits = vt_le32(p + 4 * i);

            memcpy(&out[i], &bits, sizeof(bits));
        }
    }
}

int vt_wggml_tensor_f32(const struct vt_wggml *f, const char *name, float **out, size_t *count,
                        char *err, size_t errlen)
{
    const struct vt_wggml_tensor *t = vt_wggml_find(f, name);

    if (!t) {
        if (!f->n_tensors)
            return vt_err(err, errlen, VT_ENOTFOUND,
                          "no tensor '%s': the file has no tensors (header, mel filters and "
                          "vocabulary only)",
                          name);
        return vt_err(err, errlen, VT_ENOTFOUND, "no tensor '%s' in the file", name);
    }
    *out = vt_xmalloc((t->count ? t->count : 1) * sizeof(**out));
    vt_wggml_to_f32(t, *out);
    if (count)
        *count = t->count;
    return 0;
}

/* ---- the tensors of a Whisper model ---- */

/* What a size in the table stands for. */
enum dim { D1 = 1, D3 = 3, S = -1, S4 = -2, CTX = -3, MELS = -4, VOCAB = -5 };

struct expect {
    const char *name; /* after "encoder." / "decoder." or the block's prefix */
    int dims[3];      /* ggml order; 0 ends */
};

static const struct expect encoder_top[] = {
    {"positional_embedding", {S, CTX}},
    {"conv1.weight", {D3, MELS, S}},
    {"conv1.bias", {D1, S}},
    {"conv2.weight", {D3, S, S}},
    {"conv2.bias", {D1, S}},
    {"ln_post.weight", {S}},
    {"ln_post.bias", {S}},
};
static const struct expect decoder_top[] = {
    {"positional_embedding", {S, CTX}},
    {"token_embedding.weight", {S, VOCAB}},
    {"ln.weight", {S}},
    {"ln.bias", {S}},
};
/* A block: the first 15 are the encoder's, the decoder's add the cross-attention. */
static const struct expect block[] = {
    {"mlp_ln.weight", {S}},
    {"mlp_ln.bias", {S}},
    {"mlp.0.weight", {S, S4}},
    {"mlp.0.bias", {S4}},
    {"mlp.2.weight", {S4, S}},
    {"mlp.2.bias", {S}},
    {"attn_ln.weight", {S}},
    {"attn_ln.bias", {S}},
    {"attn.query.weight", {S, S}},
    {"attn.query.bias", {S}},
    {"attn.key.weight", {S, S}},
    {"attn.value.weight", {S, S}},
    {"attn.value.bias", {S}},
    {"attn.out.weight", {S, S}},
    {"attn.out.bias", {S}},
    {"cross_attn_ln.weight", {S}},
    {"cross_attn_ln.bias", {S}},
    {"cross_attn.query.weight", {S, S}},
    {"cross_attn.query.bias", {S}},
    {"cross_attn.key.weight", {S, S}},
    {"cross_attn.value.weight", {S, S}},
    {"cross_attn.value.bias", {S}},
    {"cross_attn.out.weight", {S, S}},
    {"cross_attn.out.bias", {S}},
};
#define ENCODER_BLOCK 15

struct side {
    const char *prefix; /* "encoder" */
    int64_t state, ctx, mels, vocab;
    unsigned char *seen; /* per tensor index */
};

static int64_t dim_value(const struct side *s, int d)
{
    switch (d) {
    case S:
        return s->state;
    case S4:
        return 4 * s->state;
    case CTX:
        return s->ctx;
    case MELS:
        return s->mels;
    case VOCAB:
        return s->vocab;
    default:
        return d;
    }
}

static int check_one(const struct vt_wggml *f, struct side *s, const char *name,
                     const struct expect *e, char *err, size_t errlen)
{
    const struct vt_wggml_tensor *t = vt_wggml_find(f, name);
    int64_t want[VT_WGGML_MAX_DIMS] = {1, 1, 1, 1};

    if (!t)
        return vt_err(err, errlen, VT_EINVAL, "tensor '%s' missing", name);
    for (int i = 0; i < 3 && e->dims[i]; i++)
        want[i] = dim_value(s, e->dims[i]);
    for (int i = 0; i < VT_WGGML_MAX_DIMS; i++)
        if (t->ne[i] != want[i])
            return vt_err(err, errlen, VT_EINVAL,
                          "tensor '%s' is [%lld, %lld, %lld, %lld], expected [%lld, %lld, %lld, "
                          "%lld]",
                          name, (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
                          (long long)t->ne[3], (long long)want[0], (long long)want[1],
                          (long long)want[2], (long long)want[3]);
    s->seen[t - f->tensors] = 1;
    return 0;
}

/* The tensors of one side: its top ones, then n_layer blocks of n_block. */
static int check_side(const struct vt_wggml *f, struct side *s, const struct expect *top,
                      size_t n_top, int32_t n_layer, size_t n_block, char *err, size_t errlen)
{
    char name[VT_WGGML_MAX_NAME];
    int rc;

    for (size_t i = 0; i < n_top; i++) {
        snprintf(name, sizeof(name), "%s.%s", s->prefix, top[i].name);
        if ((rc = check_one(f, s, name, &top[i], err, errlen)))
            return rc;
    }
    for (int32_t l = 0; l < n_layer; l++)
        for (size_t i = 0; i < n_block; i++) {
            snprintf(name, sizeof(name), "%s.blocks.%d.%s", s->prefix, (int)l, block[i].name);
            if ((rc = check_one(f, s, name, &block[i], err, errlen)))
                return rc;
        }
    return 0;
}

static int check_hparams(const struct vt_wggml_hparams *h, char *err, size_t errlen)
{
    if (h->n_audio_state % h->n_audio_head || h->n_text_state % h->n_text_head)
        return vt_err(
            err, errlen, VT_EINVAL, "states %d / %d are not multiples of their heads %d / %d",
            (int)h->n_audio_state, (int)h->n_text_state, (int)h->n_audio_head, (int)h->n_text_head);
    /* the decoder's cross-attention reads the encoder's output with n_text_state weights */
    if (h->n_audio_state != h->n_text_state)
        return vt_err(err, errlen, VT_EINVAL, "n_audio_state %d differs from n_text_state %d",
                      (int)h->n_audio_state, (int)h->n_text_state);
    return 0;
}

int vt_wggml_check_whisper(const struct vt_wggml *f, char *err, size_t errlen)
{
    const struct vt_wggml_hparams *h = &f->hp;
    struct side enc = {"encoder", h->n_audio_state, h->n_audio_ctx, h->n_mels, 0, NULL};
    struct side dec = {"decoder", h->n_text_state, h->n_text_ctx, 0, h->n_vocab, NULL};
    int rc;

    if (!f->n_tensors)
        return vt_err(err, errlen, VT_EINVAL,
                      "the file has no tensors (header, mel filters and vocabulary only)");
    if ((rc = check_hparams(h, err, errlen)))
        return rc;
    enc.seen = dec.seen = vt_xcalloc(f->n_tensors, 1);
    rc = check_side(f, &enc, encoder_top, VT_ARRAY_LEN(encoder_top), h->n_audio_layer,
                    ENCODER_BLOCK, err, errlen);
    if (!rc)
        rc = check_side(f, &dec, decoder_top, VT_ARRAY_LEN(decoder_top), h->n_text_layer,
                        VT_ARRAY_LEN(block), err, errlen);
    for (size_t i = 0; !rc && i < f->n_tensors; i++)
        if (!enc.seen[i])
            rc = vt_err(err, errlen, VT_EINVAL, "unknown tensor '%s'", f->tensors[i].name);
    free(enc.seen);
    return rc;
}
