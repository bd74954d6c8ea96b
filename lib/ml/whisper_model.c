/*
 * Whisper's network (whisper_model.h): loading a Hugging Face or whisper.cpp checkpoint into
 * one in-memory layout, and the encoder and decoder passes of openai/whisper's model.py on
 * it. Weight matrices are kept as F16 (a Q8_0 file is widened to it; an F32 or BF16 file is
 * rounded to it, as whisper.cpp's F16 files are), biases, norms and positional embeddings as
 * F32; the kernels (whisper_kern.c) widen F16 as they multiply and sum in F32.
 */
#include "ml/whisper_model.h"

#include "base/util.h"
#include "ml/safetensors.h"
#include "ml/whisper_ggml.h"
#include "ml/whisper_kern.h"
#include "vidtheque.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_STATE    2048 /* large-v3: 1280 */
#define MAX_HEAD     64
#define MAX_LAYER    64
#define MAX_VOCAB    131072
#define MAX_TEXT_CTX 1024 /* Whisper: 448 */
#define MAX_AUDIO    1500 /* 30 s of 20 ms frames */
#define MAX_CONFIG   (1u << 20)
#define MAX_ST_FILE  ((size_t)8 << 30)

/* One pre-norm block; the cross_* fields are the decoder's. */
struct block {
    float *attn_ln_w, *attn_ln_b, *q_b, *v_b, *o_b;
    uint16_t *q_w, *k_w, *v_w, *o_w;
    float *x_ln_w, *x_ln_b, *xq_b, *xv_b, *xo_b;
    uint16_t *xq_w, *xk_w, *xv_w, *xo_w;
    float *mlp_ln_w, *mlp_ln_b, *fc1_b, *fc2_b;
    uint16_t *fc1_w, *fc2_w;
};

struct vt_whisper_model {
    struct vt_whisper_dims d;
    int n_threads;
    char format[32];
    size_t bytes;
    uint16_t *conv1_w, *conv2_w, *tok_emb;
    float *conv1_b, *conv2_b, *enc_pos, *enc_ln_w, *enc_ln_b, *dec_pos, *dec_ln_w, *dec_ln_b;
    struct block *enc, *dec;
    int (*align)[2];
    size_t n_align;
};

/* ---- the tensors, by openai's names ---- */

enum shape { SH_S, SH_SS, SH_F, SH_FS, SH_SF, SH_CONV1, SH_CONV2, SH_APOS, SH_TPOS, SH_EMB };

struct tspec {
    char name[96];
    enum shape shape;
    int half;   /* kept as F16 (a matrix), else F32 */
    void **dst; /* the model's field */
};

struct bspec {
    const char *name;
    size_t off;
    enum shape shape;
    int half;
};

#define B(name, field, shape, half)                                                                \
    {                                                                                              \
        name, offsetof(struct block, field), shape, half                                           \
    }
static const struct bspec bspecs[] = {
    B("attn_ln.weight", attn_ln_w, SH_S, 0),
    B("attn_ln.bias", attn_ln_b, SH_S, 0),
    B("attn.query.weight", q_w, SH_SS, 1),
    B("attn.query.bias", q_b, SH_S, 0),
    B("attn.key.weight", k_w, SH_SS, 1),
    B("attn.value.weight", v_w, SH_SS, 1),
    B("attn.value.bias", v_b, SH_S, 0),
    B("attn.out.weight", o_w, SH_SS, 1),
    B("attn.out.bias", o_b, SH_S, 0),
    B("mlp_ln.weight", mlp_ln_w, SH_S, 0),
    B("mlp_ln.bias", mlp_ln_b, SH_S, 0),
    B("mlp.0.weight", fc1_w, SH_FS, 1),
    B("mlp.0.bias", fc1_b, SH_F, 0),
    B("mlp.2.weight", fc2_w, SH_SF, 1),
    B("mlp.2.bias", fc2_b, SH_S, 0),
    /* the decoder's cross-attention */
    B("cross_attn_ln.weight", x_ln_w, SH_S, 0),
    B("cross_attn_ln.bias", x_ln_b, SH_S, 0),
    B("cross_attn.query.weight", xq_w, SH_SS, 1),
    B("cross_attn.query.bias", xq_b, SH_S, 0),
    B("cross_attn.key.weight", xk_w, SH_SS, 1),
    B("cross_attn.value.weight", xv_w, SH_SS, 1),
    B("cross_attn.value.bias", xv_b, SH_S, 0),
    B("cross_attn.out.weight", xo_w, SH_SS, 1),
    B("cross_attn.out.bias", xo_b, SH_S, 0),
};
#undef B
#define ENCODER_BSPECS 15

/* The shape in PyTorch's order (outermost first) into s; the number of dimensions. */
static int shape_of(const struct vt_whisper_dims *d, enum shape sh, int64_t s[3])
{
    int64_t S = d->n_audio_state, F = 4 * (int64_t)S;

    switch (sh) {
    case SH_S:
        s[0] = S;
        return 1;
    case SH_SS:
        s[0] = S, s[1] = S;
        return 2;
    case SH_F:
        s[0] = F;
        return 1;
    case SH_FS:
        s[0] = F, s[1] = S;
        return 2;
    case SH_SF:
        s[0] = S, s[1] = F;
        return 2;
    case SH_CONV1:
        s[0] = S, s[1] = d->n_mels, s[2] = 3;
        return 3;
    case SH_CONV2:
        s[0] = S, s[1] = S, s[2] = 3;
        return 3;
    case SH_APOS:
        s[0] = d->n_audio_ctx, s[1] = S;
        return 2;
    case SH_TPOS:
        s[0] = d->n_text_ctx, s[1] = S;
        return 2;
    case SH_EMB:
        s[0] = d->n_vocab, s[1] = S;
        return 2;
    }
    return 0;
}

static size_t count_of(const struct vt_whisper_dims *d, enum shape sh)
{
    int64_t s[3];
    int n = shape_of(d, sh, s);
    size_t c = 1;

    for (int i = 0; i < n; i++)
        c *= (size_t)s[i]; /* bounded dimensions: at most 131072 x 2048 */
    return c;
}

/* A matrix's rows (its outermost dimension) and the count of each (the rest). */
static void rows_cols(const struct vt_whisper_dims *d, enum shape sh, int *N, int *K)
{
    int64_t s[3];

    shape_of(d, sh, s);
    *N = (int)s[0];
    *K = (int)(count_of(d, sh) / (size_t)s[0]);
}

/* The count of the largest tensor. */
static size_t largest(const struct vt_whisper_dims *d)
{
    size_t big = 0;

    for (int sh = SH_S; sh <= SH_EMB; sh++)
        if (count_of(d, (enum shape)sh) > big)
            big = count_of(d, (enum shape)sh);
    return big;
}

typedef int (*visit_fn)(void *ctx, const struct tspec *t, char *err, size_t errlen);

static int visit_top(struct vt_whisper_model *m, visit_fn fn, void *ctx, char *err, size_t errlen)
{
    const struct {
        const char *name;
        void *dst;
        enum shape shape;
        int half;
    } top[] = {
        {"encoder.conv1.weight", &m->conv1_w, SH_CONV1, 1},
        {"encoder.conv1.bias", &m->conv1_b, SH_S, 0},
        {"encoder.conv2.weight", &m->conv2_w, SH_CONV2, 1},
        {"encoder.conv2.bias", &m->conv2_b, SH_S, 0},
        {"encoder.positional_embedding", &m->enc_pos, SH_APOS, 0},
        {"encoder.ln_post.weight", &m->enc_ln_w, SH_S, 0},
        {"encoder.ln_post.bias", &m->enc_ln_b, SH_S, 0},
        {"decoder.token_embedding.weight", &m->tok_emb, SH_EMB, 1},
        {"decoder.positional_embedding", &m->dec_pos, SH_TPOS, 0},
        {"decoder.ln.weight", &m->dec_ln_w, SH_S, 0},
        {"decoder.ln.bias", &m->dec_ln_b, SH_S, 0},
    };

    for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
        struct tspec t = {.shape = top[i].shape, .half = top[i].half, .dst = top[i].dst};
        int rc;

        snprintf(t.name, sizeof(t.name), "%s", top[i].name);
        rc = fn(ctx, &t, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

/* Call fn on every tensor the model holds, in a fixed order. */
static int visit(struct vt_whisper_model *m, visit_fn fn, void *ctx, char *err, size_t errlen)
{
    int rc = visit_top(m, fn, ctx, err, errlen);

    for (int side = 0; !rc && side < 2; side++) {
        int n_layer = side ? m->d.n_text_layer : m->d.n_audio_layer;
        size_t n_spec = side ? sizeof(bspecs) / sizeof(bspecs[0]) : ENCODER_BSPECS;

        for (int l = 0; !rc && l < n_layer; l++) {
            struct block *b = side ? &m->dec[l] : &m->enc[l];

            for (size_t i = 0; !rc && i < n_spec; i++) {
                struct tspec t = {.shape = bspecs[i].shape,
                                  .half = bspecs[i].half,
                                  .dst = (void **)((char *)b + bspecs[i].off)};

                snprintf(t.name, sizeof(t.name), "%s.blocks.%d.%s", side ? "decoder" : "encoder", l,
                         bspecs[i].name);
                rc = fn(ctx, &t, err, errlen);
            }
        }
    }
    return rc;
}

static int alloc_one(void *ctx, const struct tspec *t, char *err, size_t errlen)
{
    struct vt_whisper_model *m = ctx;
    size_t n = count_of(&m->d, t->shape) * 4;
    int N, K;

    if (t->half) { /* packed for the products (whisper_kern.h) */
        rows_cols(&m->d, t->shape, &N, &K);
        n = vt_wk_packed_count(N, K) * 2;
    }

    *t->dst = malloc(n);
    if (!*t->dst)
        return vt_err(err, errlen, VT_ENOMEM, "'%s': out of memory (%zu bytes)", t->name, n);
    m->bytes += n;
    return 0;
}

static int free_one(void *ctx, const struct tspec *t, char *err, size_t errlen)
{
    free(*t->dst);
    *t->dst = NULL;
    return 0;
}

void vt_whisper_model_free(struct vt_whisper_model *m)
{
    if (!m)
        return;
    if (m->enc && m->dec)
        visit(m, free_one, NULL, NULL, 0);
    free(m->enc);
    free(m->dec);
    free(m->align);
    free(m);
}

static int check_dims(const struct vt_whisper_dims *d, const char *what, char *err, size_t errlen)
{
    const struct {
        const char *name;
        int v, lo, hi;
    } b[] = {
        {"n_mels", d->n_mels, 80, 128},
        {"n_audio_ctx", d->n_audio_ctx, 1, MAX_AUDIO},
        {"n_audio_state", d->n_audio_state, 1, MAX_STATE},
        {"n_audio_head", d->n_audio_head, 1, MAX_HEAD},
        {"n_audio_layer", d->n_audio_layer, 1, MAX_LAYER},
        {"n_vocab", d->n_vocab, 1, MAX_VOCAB},
        {"n_text_ctx", d->n_text_ctx, 1, MAX_TEXT_CTX},
        {"n_text_state", d->n_text_state, 1, MAX_STATE},
        {"n_text_head", d->n_text_head, 1, MAX_HEAD},
        {"n_text_layer", d->n_text_layer, 1, MAX_LAYER},
    };

    for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
        if (b[i].v < b[i].lo || b[i].v > b[i].hi)
            return vt_err(err, errlen, VT_EINVAL, "%s: %s %d out of range [%d, %d]", what,
                          b[i].name, b[i].v, b[i].lo, b[i].hi);
    if (d->n_mels != 80 && d->n_mels != 128)
        return vt_err(err, errlen, VT_EINVAL, "%s: n_mels %d is neither 80 nor 128", what,
                      d->n_mels);
    if (d->n_text_state != d->n_audio_state)
        return vt_err(err, errlen, VT_EINVAL, "%s: text state %d differs from audio state %d", what,
                      d->n_text_state, d->n_audio_state);
    if (d->n_audio_state % d->n_audio_head || d->n_text_state % d->n_text_head)
        return vt_err(err, errlen, VT_EINVAL, "%s: state %d not a multiple of the heads", what,
                      d->n_audio_state);
    return 0;
}

/*
 * A model of dimensions d with every tensor allocated, not filled. check (when not NULL) is
 * called on every tensor first: the dimensions come from a file that may lie, so the
 * checkpoint must hold every tensor at its shape before its gigabytes are allocated (the
 * memory then stays within a small multiple of the file's size).
 */
static int model_new(const struct vt_whisper_dims *d, int n_threads, visit_fn check, void *ctx,
                     struct vt_whisper_model **out, char *err, size_t errlen)
{
    struct vt_whisper_model *m = calloc(1, sizeof(*m));
    int rc;

    *out = NULL;
    if (!m)
        return vt_err(err, errlen, VT_ENOMEM, "whisper model: out of memory");
    m->d = *d;
    if (n_threads <= 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);

        n_threads = nc < 1 ? 1 : nc > 8 ? 8 : (int)nc;
    }
    m->n_threads = n_threads > 64 ? 64 : n_threads;
    m->enc = calloc((size_t)d->n_audio_layer, sizeof(struct block));
    m->dec = calloc((size_t)d->n_text_layer, sizeof(struct block));
    if (!m->enc || !m->dec) {
        vt_whisper_model_free(m);
        return vt_err(err, errlen, VT_ENOMEM, "whisper model: out of memory");
    }
    rc = check ? visit(m, check, ctx, err, errlen) : 0;
    rc = rc ? rc : visit(m, alloc_one, m, err, errlen);
    if (rc) {
        vt_whisper_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* model.py's default alignment heads: every head of the last half of the decoder layers. */
static int default_alignment(struct vt_whisper_model *m, char *err, size_t errlen)
{
    int l0 = m->d.n_text_layer / 2;
    size_t n = (size_t)(m->d.n_text_layer - l0) * m->d.n_text_head, i = 0;

    free(m->align);
    m->align = malloc(n * sizeof(*m->align));
    if (!m->align)
        return vt_err(err, errlen, VT_ENOMEM, "whisper model: out of memory");
    for (int l = l0; l < m->d.n_text_layer; l++)
        for (int h = 0; h < m->d.n_text_head; h++) {
            m->align[i][0] = l;
            m->align[i][1] = h;
            i++;
        }
    m->n_align = n;
    return 0;
}

/* ---- filling the tensors ---- */

/* count values at v into t's field: F16 ones are rounded, must fit in F16's range, and are
 * packed (K: the matrix's columns). */
static int put(const struct tspec *t, size_t count, int K, const float *v, char *err, size_t errlen)
{
    if (!t->half) {
        memcpy(*t->dst, v, count * sizeof(float));
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        uint16_t h = vt_wk_f32_to_f16(v[i]);

        if ((h & 0x7c00) == 0x7c00)
            return vt_err(err, errlen, VT_EINVAL, "'%s': value %g at %zu is not a finite F16",
                          t->name, (double)v[i], i);
        vt_wk_pack_put(*t->dst, K, i, h);
    }
    return 0;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static float normal(uint64_t *s)
{
    double u1 = ((splitmix(s) >> 11) + 1.0) / 9007199254740993.0;
    double u2 = (splitmix(s) >> 11) / 9007199254740992.0;

    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);

    return n >= k && strcmp(s + n - k, tail) == 0;
}

struct random_ctx {
    const struct vt_whisper_dims *d;
    uint64_t seed;
    float *buf; /* the largest tensor's count */
};

/* model.py's sinusoids: the encoder's positional embedding, which checkpoints store. */
static void sinusoids(float *out, int length, int channels)
{
    int half = channels / 2;
    double inc = half > 1 ? log(10000.0) / (half - 1) : 0;

    for (int t = 0; t < length; t++)
        for (int i = 0; i < half; i++) {
            double a = t * exp(-inc * i);

            out[(size_t)t * channels + i] = (float)sin(a);
            out[(size_t)t * channels + half + i] = (float)cos(a);
        }
}

/* whisper_ref.py's make_model scales (the test checkpoint's, before its F16 rounding). */
static int random_one(void *ctx, const struct tspec *t, char *err, size_t errlen)
{
    struct random_ctx *r = ctx;
    int64_t s[3];
    size_t n = count_of(r->d, t->shape);
    float scale = 1.0f / sqrtf((float)n / (float)(shape_of(r->d, t->shape, s) ? s[0] : 1));
    float base = 0;
    int N, K;

    rows_cols(r->d, t->shape, &N, &K);
    if (strcmp(t->name, "encoder.positional_embedding") == 0) {
        sinusoids(r->buf, r->d->n_audio_ctx, r->d->n_audio_state);
        return put(t, n, K, r->buf, err, errlen);
    }
    if (ends_with(t->name, "ln.weight") || ends_with(t->name, "ln_post.weight"))
        base = 1.0f, scale = 0.1f;
    else if (ends_with(t->name, ".bias"))
        scale = 0.1f;
    else if (strcmp(t->name, "decoder.token_embedding.weight") == 0)
        scale = 0.5f;
    else if (strcmp(t->name, "decoder.positional_embedding") == 0)
        scale = 0.3f;
    for (size_t i = 0; i < n; i++)
        r->buf[i] = base + scale * normal(&r->seed);
    return put(t, n, K, r->buf, err, errlen);
}

int vt_whisper_model_random(const struct vt_whisper_dims *d, uint64_t seed, int n_threads,
                            struct vt_whisper_model **out, char *err, size_t errlen)
{
    struct random_ctx r = {.d = d, .seed = seed};
    struct vt_whisper_model *m = NULL;
    size_t big;
    int rc;

    *out = NULL;
    rc = check_dims(d, "whisper model", err, errlen);
    if (rc)
        return rc;
    rc = model_new(d, n_threads, NULL, NULL, &m, err, errlen);
    if (rc)
        return rc;
    big = largest(d);
    r.buf = malloc(big * sizeof(float));
    rc = r.buf ? visit(m, random_one, &r, err, errlen)
               : vt_err(err, errlen, VT_ENOMEM, "whisper model: out of memory");
    free(r.buf);
    if (!rc)
        rc = default_alignment(m, err, errlen);
    if (rc) {
        vt_whisper_model_free(m);
        return rc;
    }
    snprintf(m->format, sizeof(m->format), "generated");
    *out = m;
    return 0;
}

/* ---- reading checkpoints ---- */

/* Whether the shapes a (na dims) and b (nb) agree once their dimensions of size 1 are dropped
 * (ggml writes a bias as [1, S], a checkpoint as [S]: the same values in the same order). */
static int same_shape(const int64_t *a, int na, const int64_t *b, int nb)
{
    int i = 0, j = 0;

    for (;;) {
        while (i < na && a[i] == 1)
            i++;
        while (j < nb && b[j] == 1)
            j++;
        if (i == na || j == nb)
            return i == na && j == nb;
        if (a[i++] != b[j++])
            return 0;
    }
}

static void shape_str(char *buf, size_t n, const int64_t *s, int ns)
{
    size_t k = 0;

    buf[0] = 0;
    for (int i = 0; i < ns && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "x" : "", (long long)s[i]);
}

struct source {
    const char *file; /* for messages */
    struct vt_safetensors *st;
    struct vt_wggml *gg;
    const struct vt_whisper_dims *d;
    float *buf; /* the largest tensor's count */
};

/* transformers' name for openai's (as convert_openai_to_hf.py maps them; whisper_ref's hf_name). */
static void hf_name(const char *name, char *out, size_t n)
{
    static const char *const map[][2] = {
        {"blocks", "layers"},
        {"mlp.0", "fc1"},
        {"mlp.2", "fc2"},
        {"mlp_ln", "final_layer_norm"},
        {".attn.query", ".self_attn.q_proj"},
        {".attn.key", ".self_attn.k_proj"},
        {".attn.value", ".self_attn.v_proj"},
        {".attn_ln", ".self_attn_layer_norm"},
        {".attn.out", ".self_attn.out_proj"},
        {".cross_attn.query", ".encoder_attn.q_proj"},
        {".cross_attn.key", ".encoder_attn.k_proj"},
        {".cross_attn.value", ".encoder_attn.v_proj"},
        {".cross_attn_ln", ".encoder_attn_layer_norm"},
        {".cross_attn.out", ".encoder_attn.out_proj"},
        {"decoder.ln.", "decoder.layer_norm."},
        {"encoder.ln_post.", "encoder.layer_norm."},
        {"token_embedding", "embed_tokens"},
        {"encoder.positional_embedding", "encoder.embed_positions.weight"},
        {"decoder.positional_embedding", "decoder.embed_positions.weight"},
    };
    char a[160], b[160];

    snprintf(a, sizeof(a), "%s", name);
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        const char *from = map[i][0], *to = map[i][1], *p = a, *hit;
        size_t k = 0;

        while ((hit = strstr(p, from)) && k < sizeof(b)) {
            k += (size_t)snprintf(b + k, sizeof(b) - k, "%.*s%s", (int)(hit - p), p, to);
            p = hit + strlen(from);
        }
        if (k < sizeof(b))
            snprintf(b + k, sizeof(b) - k, "%s", p);
        snprintf(a, sizeof(a), "%s", b);
    }
    snprintf(out, n, "model.%s", a);
}

/* The index of the first of n F16 values at p that is an infinity or a NaN, or n. */
static size_t f16_nonfinite(const void *p, size_t n)
{
    const unsigned char *b = p; /* a file's tensor need not be 2-byte aligned */

    for (size_t i = 0; i < n; i++) {
        uint16_t h;

        memcpy(&h, b + i * 2, 2);
        if ((h & 0x7c00) == 0x7c00)
            return i;
    }
    return n;
}

/* The index of the first of n floats at v that is an infinity or a NaN, or n. */
static size_t f32_nonfinite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return i;
    return n;
}

/* t's tensor in the safetensors file, of t's shape and a float dtype, into *out. */
static int st_tensor(struct source *s, const struct tspec *t, const struct vt_st_tensor **out,
                     char *err, size_t errlen)
{
    char hf[192], got[64], exp[64];
    const struct vt_st_tensor *x;
    int64_t shape[VT_ST_MAX_DIMS], want[3];
    int nw = shape_of(s->d, t->shape, want);

    hf_name(t->name, hf, sizeof(hf));
    x = vt_safetensors_find(s->st, hf);
    if (!x)
        return vt_err(err, errlen, VT_EINVAL, "'%s': no tensor '%s'", s->file, hf);
    for (int i = 0; i < x->ndim; i++)
        shape[i] = (int64_t)x->shape[i];
    if (!same_shape(shape, x->ndim, want, nw) || x->count != count_of(s->d, t->shape)) {
        shape_str(got, sizeof(got), shape, x->ndim);
        shape_str(exp, sizeof(exp), want, nw);
        return vt_err(err, errlen, VT_EINVAL, "'%s': tensor '%s' is %s, expected %s", s->file, hf,
                      got, exp);
    }
    /* an integer tensor (which vt_st_to_f32 would widen) is a mislabelled file, not weights */
    if (x->dtype != VT_ST_F32 && x->dtype != VT_ST_F16 && x->dtype != VT_ST_BF16)
        return vt_err(err, errlen, VT_EINVAL, "'%s': tensor '%s' is %s, not F32, F16 or BF16",
                      s->file, hf, vt_st_dtype_name(x->dtype));
    *out = x;
    return 0;
}

/* t's tensor in the ggml file, of t's shape, into *out (the reader read only float types). */
static int gg_tensor(struct source *s, const struct tspec *t, const struct vt_wggml_tensor **out,
                     char *err, size_t errlen)
{
    const struct vt_wggml_tensor *x = vt_wggml_find(s->gg, t->name);
    int64_t shape[VT_WGGML_MAX_DIMS], want[3];
    int nw = shape_of(s->d, t->shape, want);

    if (!x)
        return vt_err(err, errlen, VT_EINVAL, "'%s': no tensor '%s'", s->file, t->name);
    for (int i = 0; i < x->n_dims; i++) /* ggml's order is innermost first */
        shape[i] = x->ne[x->n_dims - 1 - i];
    if (!same_shape(shape, x->n_dims, want, nw) || x->count != count_of(s->d, t->shape))
        return vt_err(err, errlen, VT_EINVAL, "'%s': tensor '%s' has the wrong shape", s->file,
                      t->name);
    *out = x;
    return 0;
}

/* Whether the checkpoint holds t at its shape (model_new's check, before any allocation). */
static int check_one(void *ctx, const struct tspec *t, char *err, size_t errlen)
{
    struct source *s = ctx;
    const struct vt_st_tensor *x;
    const struct vt_wggml_tensor *g;

    return s->st ? st_tensor(s, t, &x, err, errlen) : gg_tensor(s, t, &g, err, errlen);
}

/*
 * Fill t's field: F16 bits copied as they are, anything else through s->buf as float. A
 * weight that is an infinity or a NaN would make every output NaN (and a NaN transcript or
 * vector must never be stored as done): such a checkpoint is refused, naming the tensor.
 */
static int load_one(void *ctx, const struct tspec *t, char *err, size_t errlen)
{
    struct source *s = ctx;
    const struct vt_st_tensor *x = NULL;
    const struct vt_wggml_tensor *g = NULL;
    size_t n = count_of(s->d, t->shape), bad;
    int rc = s->st ? st_tensor(s, t, &x, err, errlen) : gg_tensor(s, t, &g, err, errlen);
    int N, K;

    if (rc)
        return rc;
    rows_cols(s->d, t->shape, &N, &K);
    if (t->half && (x ? x->dtype == VT_ST_F16 : g->type == VT_WGGML_F16)) {
        /* little-endian F16, as this machine's, packed into the kernels' panels */
        const void *src = x ? x->data : g->data;

        bad = f16_nonfinite(src, n);
        if (bad == n)
            vt_wk_pack(src, N, K, *t->dst);
    } else {
        if (x)
            rc = vt_st_to_f32(x, s->buf, err, errlen);
        else
            vt_wggml_to_f32(g, s->buf);
        bad = rc ? n : f32_nonfinite(s->buf, n);
        rc = rc || bad < n ? rc : put(t, n, K, s->buf, err, errlen);
    }
    if (!rc && bad < n)
        rc = vt_err(err, errlen, VT_EINVAL,
                    "'%s': tensor '%s' has a value that is not finite (at %zu)", s->file,
                    x ? x->name : g->name, bad);
    return rc;
}

/* Fill m's tensors from s (whose shapes model_new checked). */
static int load_all(struct vt_whisper_model *m, struct source *s, char *err, size_t errlen)
{
    size_t big = largest(&m->d);
    int rc;

    s->buf = malloc(big * sizeof(float));
    if (!s->buf)
        return vt_err(err, errlen, VT_ENOMEM, "whisper model: out of memory");
    rc = visit(m, load_one, s, err, errlen);
    free(s->buf);
    s->buf = NULL;
    return rc;
}

/* ---- Hugging Face checkpoints ---- */

static int read_json(const char *path, int optional, json_t **out, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    json_error_t je;
    int rc = vt_read_file_capped(path, "file", MAX_CONFIG, &data, &len, err, errlen);

    *out = NULL;
    if (rc == VT_ENOTFOUND && optional)
        return 0;
    if (rc)
        return rc;
    *out = json_loadb(data, len, 0, &je);
    free(data);
    if (!*out || !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return vt_err(err, errlen, VT_EINVAL, "'%s': not a JSON object (line %d)", path, je.line);
    }
    return 0;
}

static int json_int(json_t *o, const char *key, const char *file, int *v, char *err, size_t errlen)
{
    json_t *x = json_object_get(o, key);

    if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > 1000000)
        return vt_err(err, errlen, VT_EINVAL, "'%s': \"%s\" missing or not a small integer", file,
                      key);
    *v = (int)json_integer_value(x);
    return 0;
}

static int hf_dims(const char *file, json_t *c, struct vt_whisper_dims *d, char *err, size_t errlen)
{
    int ffn_e = 0, ffn_d = 0, rc = 0;

    rc = rc ? rc : json_int(c, "d_model", file, &d->n_audio_state, err, errlen);
    rc = rc ? rc : json_int(c, "encoder_layers", file, &d->n_audio_layer, err, errlen);
    rc = rc ? rc : json_int(c, "encoder_attention_heads", file, &d->n_audio_head, err, errlen);
    rc = rc ? rc : json_int(c, "encoder_ffn_dim", file, &ffn_e, err, errlen);
    rc = rc ? rc : json_int(c, "decoder_layers", file, &d->n_text_layer, err, errlen);
    rc = rc ? rc : json_int(c, "decoder_attention_heads", file, &d->n_text_head, err, errlen);
    rc = rc ? rc : json_int(c, "decoder_ffn_dim", file, &ffn_d, err, errlen);
    rc = rc ? rc : json_int(c, "num_mel_bins", file, &d->n_mels, err, errlen);
    rc = rc ? rc : json_int(c, "max_source_positions", file, &d->n_audio_ctx, err, errlen);
    rc = rc ? rc : json_int(c, "max_target_positions", file, &d->n_text_ctx, err, errlen);
    rc = rc ? rc : json_int(c, "vocab_size", file, &d->n_vocab, err, errlen);
    if (rc)
        return rc;
    d->n_text_state = d->n_audio_state;
    rc = check_dims(d, file, err, errlen);
    if (rc)
        return rc;
    if (ffn_e != 4 * d->n_audio_state || ffn_d != 4 * d->n_text_state)
        return vt_err(err, errlen, VT_EINVAL, "'%s': ffn_dim %d/%d is not 4 x d_model %d", file,
                      ffn_e, ffn_d, d->n_audio_state);
    return 0;
}

/* generation_config.json's "alignment_heads", when it has them. */
static int hf_alignment(struct vt_whisper_model *m, const char *file, json_t *g, char *err,
                        size_t errlen)
{
    json_t *a = g ? json_object_get(g, "alignment_heads") : NULL;
    size_t n = json_array_size(a), max = (size_t)m->d.n_text_layer * m->d.n_text_head;

    if (!a)
        return default_alignment(m, err, errlen);
    if (!json_is_array(a) || n == 0 || n > max)
        return vt_err(err, errlen, VT_EINVAL, "'%s': alignment_heads: not 1 to %zu pairs", file,
                      max);
    m->align = calloc(n, sizeof(*m->align));
    if (!m->align)
        return vt_err(err, errlen, VT_ENOMEM, "whisper model: out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_array_get(a, i);
        json_t *l = json_array_get(p, 0), *h = json_array_get(p, 1);

        if (json_array_size(p) != 2 || !json_is_integer(l) || !json_is_integer(h) ||
            json_integer_value(l) < 0 || json_integer_value(l) >= m->d.n_text_layer ||
            json_integer_value(h) < 0 || json_integer_value(h) >= m->d.n_text_head)
            return vt_err(err, errlen, VT_EINVAL,
                          "'%s': alignment_heads[%zu] is not a [layer, head]", file, i);
        m->align[i][0] = (int)json_integer_value(l);
        m->align[i][1] = (int)json_integer_value(h);
        for (size_t j = 0; j < i; j++) /* the pairs index per-head outputs: no repeats */
            if (m->align[j][0] == m->align[i][0] && m->align[j][1] == m->align[i][1])
                return vt_err(err, errlen, VT_EINVAL, "'%s': alignment_heads[%zu] repeated", file,
                              i);
    }
    m->n_align = n;
    return 0;
}

/* An untied proj_out.weight would change the logits: refused rather than ignored. */
static int hf_tied(struct vt_safetensors *st, const char *file, char *err, size_t errlen)
{
    const struct vt_st_tensor *p = vt_safetensors_find(st, "proj_out.weight");
    const struct vt_st_tensor *e = vt_safetensors_find(st, "model.decoder.embed_tokens.weight");

    if (!p)
        return 0;
    if (!e || p->dtype != e->dtype || p->nbytes != e->nbytes ||
        memcmp(p->data, e->data, p->nbytes) != 0)
        return vt_err(err, errlen, VT_EINVAL, "'%s': proj_out.weight is not tied to the embedding",
                      file);
    return 0;
}

static int open_hf(const char *dir, int n_threads, struct vt_whisper_model **out, char *err,
                   size_t errlen)
{
    char cfg[4096], gen[4096], st_path[4096];
    json_t *c = NULL, *g = NULL;
    struct vt_whisper_dims d = {0};
    struct vt_whisper_model *m = NULL;
    struct source s = {.file = st_path, .d = &d};
    const struct vt_st_tensor *fc1;
    int rc;

    snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
    snprintf(gen, sizeof(gen), "%s/generation_config.json", dir);
    snprintf(st_path, sizeof(st_path), "%s/model.safetensors", dir);
    rc = read_json(cfg, 0, &c, err, errlen);
    rc = rc ? rc : hf_dims(cfg, c, &d, err, errlen);
    rc = rc ? rc : read_json(gen, 1, &g, err, errlen);
    rc = rc ? rc : vt_safetensors_open(st_path, MAX_ST_FILE, &s.st, err, errlen);
    rc = rc ? rc : hf_tied(s.st, st_path, err, errlen);
    rc = rc ? rc : model_new(&d, n_threads, check_one, &s, &m, err, errlen);
    rc = rc ? rc : hf_alignment(m, gen, g, err, errlen);
    rc = rc ? rc : load_all(m, &s, err, errlen);
    if (!rc) {
        fc1 = vt_safetensors_find(s.st, "model.encoder.layers.0.fc1.weight");
        snprintf(m->format, sizeof(m->format), "safetensors %s",
                 fc1 ? vt_st_dtype_name(fc1->dtype) : "?");
        *out = m;
        m = NULL;
    }
    vt_whisper_model_free(m);
    vt_safetensors_free(s.st);
    json_decref(c);
    json_decref(g);
    return rc;
}

/* ---- whisper.cpp's ggml files ---- */

static int open_ggml(const char *path, int n_threads, struct vt_whisper_model **out, char *err,
                     size_t errlen)
{
    struct vt_whisper_dims d;
    struct source s = {.file = path, .d = &d};
    struct vt_whisper_model *m = NULL;
    const struct vt_wggml_tensor *fc1;
    int rc = vt_wggml_open(path, 0, &s.gg, err, errlen);

    if (rc)
        return rc;
    d = (struct vt_whisper_dims){.n_mels = s.gg->hp.n_mels,
                                 .n_audio_ctx = s.gg->hp.n_audio_ctx,
                                 .n_audio_state = s.gg->hp.n_audio_state,
                                 .n_audio_head = s.gg->hp.n_audio_head,
                                 .n_audio_layer = s.gg->hp.n_audio_layer,
                                 .n_vocab = s.gg->hp.n_vocab,
                                 .n_text_ctx = s.gg->hp.n_text_ctx,
                                 .n_text_state = s.gg->hp.n_text_state,
                                 .n_text_head = s.gg->hp.n_text_head,
                                 .n_text_layer = s.gg->hp.n_text_layer};
    rc = check_dims(&d, path, err, errlen);
    if (!rc && vt_wggml_check_whisper(s.gg, err, errlen) != 0) {
        char tmp[512];

        snprintf(tmp, sizeof(tmp), "%s", err);
        rc = vt_err(err, errlen, VT_EINVAL, "'%s': %s", path, tmp);
    }
    rc = rc ? rc : model_new(&d, n_threads, check_one, &s, &m, err, errlen);
    rc = rc ? rc : default_alignment(m, err, errlen);
    rc = rc ? rc : load_all(m, &s, err, errlen);
    if (!rc) {
        fc1 = vt_wggml_find(s.gg, "encoder.blocks.0.mlp.0.weight");
        snprintf(m->format, sizeof(m->format), "ggml %s",
                 fc1 ? vt_wggml_type_name(fc1->type) : "?");
        *out = m;
        m = NULL;
    }
    vt_whisper_model_free(m);
    vt_wggml_free(s.gg);
    return rc;
}

int vt_whisper_model_open(const char *path, int n_threads, struct vt_whisper_model **out, char *err,
                          size_t errlen)
{
    struct stat st;

    *out = NULL;
    if (stat(path, &st) != 0)
        return vt_err(err, errlen, VT_ENOTFOUND, "'%s': no such checkpoint", path);
    if (S_ISDIR(st.st_mode))
        return open_hf(path, n_threads, out, err, errlen);
    if (!S_ISREG(st.st_mode)) /* a device or a pipe would be read up to the 8 GB cap */
        return vt_err(err, errlen, VT_EINVAL, "'%s': not a checkpoint file or directory", path);
    return open_ggml(path, n_threads, out, err, errlen);
}

const struct vt_whisper_dims *vt_whisper_model_dims(const struct vt_whisper_model *m)
{
    return &m->d;
}

const char *vt_whisper_model_format(const struct vt_whisper_model *m)
{
    return m->format;
}

size_t vt_whisper_model_bytes(const struct vt_whisper_model *m)
{
    return m->bytes;
}

const int (*vt_whisper_model_alignment_heads(const struct vt_whisper_model *m, size_t *n))[2]
{
    *n = m->n_align;
    return (const int(*)[2])m->align;
}

/* ---- the passes ---- */

static void scale(float *x, size_t n, float s)
{
    for (size_t i = 0; i < n; i++)
        x[i] *= s;
}

/* model.py scales q and k by d_head^-0.25 each; here q alone by d_head^-0.5: the same q.k. */
static float qk_scale(int state, int head)
{
    return (float)(1.0 / sqrt((double)(state / head)));
}

struct enc_buf {
    float *x, *h, *q, *k, *v, *a, *f, *s;
};

/* One encoder block on x [ctx][S], in place. */
static void enc_block(const struct vt_whisper_model *m, const struct block *b, struct enc_buf *e,
                      struct vt_wk_pool *p)
{
    int S = m->d.n_audio_state, T = m->d.n_audio_ctx, H = m->d.n_audio_head;
    struct vt_wk_attn a = {.q = e->q,
                           .k = e->k,
                           .v = e->v,
                           .ldq = S,
                           .ldk = S,
                           .ldv = S,
                           .ldo = S,
                           .n_q = T,
                           .n_kv = T,
                           .n_head = H,
                           .d_head = S / H,
                           .causal = -1,
                           .out = e->a,
                           .scratch = e->s};

    vt_wk_layernorm(e->x, b->attn_ln_w, b->attn_ln_b, e->h, T, S);
    vt_wk_matmul(p, e->h, S, T, S, b->q_w, b->q_b, e->q, S, S, 0);
    vt_wk_matmul(p, e->h, S, T, S, b->k_w, NULL, e->k, S, S, 0);
    vt_wk_matmul(p, e->h, S, T, S, b->v_w, b->v_b, e->v, S, S, 0);
    scale(e->q, (size_t)T * S, qk_scale(S, H));
    vt_wk_attention(p, &a);
    vt_wk_matmul(p, e->a, S, T, S, b->o_w, b->o_b, e->x, S, S, VT_WK_ACC);
    vt_wk_layernorm(e->x, b->mlp_ln_w, b->mlp_ln_b, e->h, T, S);
    vt_wk_matmul(p, e->h, S, T, S, b->fc1_w, b->fc1_b, e->f, 4 * S, 4 * S, VT_WK_GELU);
    vt_wk_matmul(p, e->f, 4 * S, T, 4 * S, b->fc2_w, b->fc2_b, e->x, S, S, VT_WK_ACC);
}

/* The stem: conv1 (k3, pad 1) and conv2 (k3, stride 2, pad 1) as products over im2col rows
 * (row t holds input channel c's taps at c * 3 + k, the weights' own order), GELU after
 * each, then the stored positional embedding. col holds 2T x 3 max(n_mels, S) floats. */
static void enc_stem(const struct vt_whisper_model *m, const float *mel, struct enc_buf *e,
                     float *col, struct vt_wk_pool *p)
{
    int S = m->d.n_audio_state, T = m->d.n_audio_ctx, C = m->d.n_mels, T2 = 2 * T;
    float *h1 = e->f; /* [2T][S] fits in [T][4S] */

    for (int t = 0; t < T2; t++)
        for (int c = 0; c < C; c++)
            for (int k = 0; k < 3; k++) {
                int i = t + k - 1;

                col[(size_t)t * 3 * C + 3 * c + k] = i < 0 || i >= T2 ? 0 : mel[(size_t)c * T2 + i];
            }
    vt_wk_matmul(p, col, 3 * C, T2, 3 * C, m->conv1_w, m->conv1_b, h1, S, S, VT_WK_GELU);
    for (int t = 0; t < T; t++)
        for (int c = 0; c < S; c++)
            for (int k = 0; k < 3; k++) {
                int i = 2 * t + k - 1;

                col[(size_t)t * 3 * S + 3 * c + k] = i < 0 || i >= T2 ? 0 : h1[(size_t)i * S + c];
            }
    vt_wk_matmul(p, col, 3 * S, T, 3 * S, m->conv2_w, m->conv2_b, e->x, S, S, VT_WK_GELU);
    for (size_t i = 0; i < (size_t)T * S; i++)
        e->x[i] += m->enc_pos[i];
}

int vt_whisper_encode(const struct vt_whisper_model *m, const float *mel, float *out, char *err,
                      size_t errlen)
{
    size_t S = (size_t)m->d.n_audio_state, T = (size_t)m->d.n_audio_ctx;
    size_t wide = (size_t)3 * (m->d.n_mels > (int)S ? (size_t)m->d.n_mels : S);
    struct vt_wk_pool *p = vt_wk_pool_new(m->n_threads);
    struct enc_buf e;
    float *mem = NULL, *col;
    size_t n, att;

    if (!p)
        return vt_err(err, errlen, VT_ENOMEM, "whisper encoder: out of memory");
    att = vt_wk_attn_scratch(p, (int)T, (int)T, m->d.n_audio_head, (int)S / m->d.n_audio_head);
    n = 6 * T * S + 4 * T * S + att + 2 * T * wide;
    mem = malloc(n * sizeof(float));
    if (!mem) {
        vt_wk_pool_free(p);
        return vt_err(err, errlen, VT_ENOMEM, "whisper encoder: out of memory (%zu floats)", n);
    }
    e.x = mem, e.h = e.x + T * S, e.q = e.h + T * S, e.k = e.q + T * S, e.v = e.k + T * S;
    e.a = e.v + T * S, e.f = e.a + T * S, e.s = e.f + 4 * T * S;
    col = e.s + att;
    enc_stem(m, mel, &e, col, p);
    for (int l = 0; l < m->d.n_audio_layer; l++)
        enc_block(m, &m->enc[l], &e, p);
    vt_wk_layernorm(e.x, m->enc_ln_w, m->enc_ln_b, out, (int)T, (int)S);
    free(mem);
    vt_wk_pool_free(p);
    return 0;
}

/* ---- the decoder ---- */

struct vt_whisper_kv {
    const struct vt_whisper_model *m;
    struct vt_wk_pool *pool;
    int len;
    float *self_k, *self_v; /* [layer][n_text_ctx][S] */
    float *cross_k;         /* [layer][vt_wk_attn_keys_count]: packed once, read per token */
    float *cross_v;         /* [layer][n_audio_ctx][S] */
};

void vt_whisper_kv_free(struct vt_whisper_kv *kv)
{
    if (!kv)
        return;
    vt_wk_pool_free(kv->pool);
    free(kv->self_k);
    free(kv->self_v);
    free(kv->cross_k);
    free(kv->cross_v);
    free(kv);
}

struct vt_whisper_kv *vt_whisper_kv_new(const struct vt_whisper_model *m, const float *features)
{
    struct vt_whisper_kv *kv = calloc(1, sizeof(*kv));
    size_t S = (size_t)m->d.n_text_state, L = (size_t)m->d.n_text_layer;
    size_t self = L * (size_t)m->d.n_text_ctx * S, cross = L * (size_t)m->d.n_audio_ctx * S;
    size_t kt =
        vt_wk_attn_keys_count(m->d.n_audio_ctx, m->d.n_text_head, (int)S / m->d.n_text_head);
    float *tmp = malloc((size_t)m->d.n_audio_ctx * S * sizeof(float));

    if (!kv || !tmp) {
        free(kv);
        free(tmp);
        return NULL;
    }
    kv->m = m;
    kv->pool = vt_wk_pool_new(m->n_threads);
    kv->self_k = malloc(self * sizeof(float));
    kv->self_v = malloc(self * sizeof(float));
    kv->cross_k = malloc(L * kt * sizeof(float));
    kv->cross_v = malloc(cross * sizeof(float));
    if (!kv->pool || !kv->self_k || !kv->self_v || !kv->cross_k || !kv->cross_v) {
        vt_whisper_kv_free(kv);
        free(tmp);
        return NULL;
    }
    for (size_t l = 0; l < L; l++) {
        const struct block *b = &m->dec[l];
        size_t off = l * (size_t)m->d.n_audio_ctx * S;
        int T = m->d.n_audio_ctx;

        vt_wk_matmul(kv->pool, features, (int)S, T, (int)S, b->xk_w, NULL, tmp, (int)S, (int)S, 0);
        vt_wk_attn_pack_keys(kv->pool, tmp, (int)S, T, m->d.n_text_head, (int)S / m->d.n_text_head,
                             kv->cross_k + l * kt);
        vt_wk_matmul(kv->pool, features, (int)S, T, (int)S, b->xv_w, b->xv_b, kv->cross_v + off,
                     (int)S, (int)S, 0);
    }
    free(tmp);
    return kv;
}

int vt_whisper_kv_len(const struct vt_whisper_kv *kv)
{
    return kv->len;
}

void vt_whisper_kv_rewind(struct vt_whisper_kv *kv, int n)
{
    if (n >= 0 && n < kv->len)
        kv->len = n;
}

struct dec_buf {
    float *x, *h, *q, *a, *f, *s;
    int n;
};

/* One decoder block on the n new rows of x; qk[h]: where head h's cross q.k go, or NULL. */
static void dec_block(struct vt_whisper_kv *kv, int l, struct dec_buf *d, float **qk)
{
    const struct vt_whisper_model *m = kv->m;
    const struct block *b = &m->dec[l];
    int S = m->d.n_text_state, H = m->d.n_text_head, n = d->n;
    float *sk = kv->self_k + (size_t)l * m->d.n_text_ctx * S + (size_t)kv->len * S;
    float *sv = kv->self_v + (size_t)l * m->d.n_text_ctx * S + (size_t)kv->len * S;
    size_t coff = (size_t)l * m->d.n_audio_ctx * S;
    size_t kt = vt_wk_attn_keys_count(m->d.n_audio_ctx, H, S / H);
    struct vt_wk_attn a = {.q = d->q,
                           .ldq = S,
                           .ldk = S,
                           .ldv = S,
                           .ldo = S,
                           .n_q = n,
                           .n_head = H,
                           .d_head = S / H,
                           .out = d->a,
                           .scratch = d->s};

    vt_wk_layernorm(d->x, b->attn_ln_w, b->attn_ln_b, d->h, n, S);
    vt_wk_matmul(kv->pool, d->h, S, n, S, b->q_w, b->q_b, d->q, S, S, 0);
    vt_wk_matmul(kv->pool, d->h, S, n, S, b->k_w, NULL, sk, S, S, 0);
    vt_wk_matmul(kv->pool, d->h, S, n, S, b->v_w, b->v_b, sv, S, S, 0);
    scale(d->q, (size_t)n * S, qk_scale(S, H));
    a.k = sk - (size_t)kv->len * S;
    a.v = sv - (size_t)kv->len * S;
    a.n_kv = kv->len + n;
    a.causal = kv->len;
    vt_wk_attention(kv->pool, &a);
    vt_wk_matmul(kv->pool, d->a, S, n, S, b->o_w, b->o_b, d->x, S, S, VT_WK_ACC);

    vt_wk_layernorm(d->x, b->x_ln_w, b->x_ln_b, d->h, n, S);
    vt_wk_matmul(kv->pool, d->h, S, n, S, b->xq_w, b->xq_b, d->q, S, S, 0);
    scale(d->q, (size_t)n * S, qk_scale(S, H));
    a.k = NULL;
    a.kt = kv->cross_k + (size_t)l * kt;
    a.v = kv->cross_v + coff;
    a.n_kv = m->d.n_audio_ctx;
    a.causal = -1;
    a.qk = qk;
    vt_wk_attention(kv->pool, &a);
    vt_wk_matmul(kv->pool, d->a, S, n, S, b->xo_w, b->xo_b, d->x, S, S, VT_WK_ACC);

    vt_wk_layernorm(d->x, b->mlp_ln_w, b->mlp_ln_b, d->h, n, S);
    vt_wk_matmul(kv->pool, d->h, S, n, S, b->fc1_w, b->fc1_b, d->f, 4 * S, 4 * S, VT_WK_GELU);
    vt_wk_matmul(kv->pool, d->f, 4 * S, n, 4 * S, b->fc2_w, b->fc2_b, d->x, S, S, VT_WK_ACC);
}

/* The final norm and the logits against the token embedding: every row, or the last. */
static void dec_logits(struct vt_whisper_kv *kv, struct dec_buf *d,
                       const struct vt_whisper_decode_out *out)
{
    const struct vt_whisper_model *m = kv->m;
    int S = m->d.n_text_state, V = m->d.n_vocab, n = d->n;

    vt_wk_layernorm(d->x, m->dec_ln_w, m->dec_ln_b, d->h, n, S);
    if (out->logits_all) {
        vt_wk_matmul(kv->pool, d->h, S, n, S, m->tok_emb, NULL, out->logits_all, V, V, 0);
        if (out->logits)
            memcpy(out->logits, out->logits_all + (size_t)(n - 1) * V, (size_t)V * sizeof(float));
    } else if (out->logits) {
        vt_wk_matmul(kv->pool, d->h + (size_t)(n - 1) * S, S, 1, S, m->tok_emb, NULL, out->logits,
                     V, V, 0);
    }
}

int vt_whisper_decode(struct vt_whisper_kv *kv, const int32_t *tokens, int n,
                      const struct vt_whisper_decode_out *out, char *err, size_t errlen)
{
    const struct vt_whisper_model *m = kv->m;
    size_t S = (size_t)m->d.n_text_state, A = (size_t)m->d.n_audio_ctx, nn = (size_t)n;
    size_t keys = A > (size_t)m->d.n_text_ctx ? A : (size_t)m->d.n_text_ctx;
    struct dec_buf d = {.n = n};
    float *mem, *qk[MAX_HEAD];

    if (n < 1 || n > m->d.n_text_ctx - kv->len)
        return vt_err(err, errlen, VT_EINVAL,
                      "whisper decoder: %d tokens after %d pass the %d of the context", n, kv->len,
                      m->d.n_text_ctx);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= m->d.n_vocab)
            return vt_err(err, errlen, VT_EINVAL, "whisper decoder: token %d out of range [0, %d)",
                          (int)tokens[i], m->d.n_vocab);
    mem = malloc((8 * nn * S + vt_wk_attn_scratch(kv->pool, n, (int)keys, m->d.n_text_head,
                                                  (int)S / m->d.n_text_head)) *
                 sizeof(float));
    if (!mem)
        return vt_err(err, errlen, VT_ENOMEM, "whisper decoder: out of memory");
    d.x = mem, d.h = d.x + nn * S, d.q = d.h + nn * S, d.a = d.q + nn * S, d.f = d.a + nn * S;
    d.s = d.f + 4 * nn * S;
    for (size_t i = 0; i < nn; i++)
        for (size_t c = 0; c < S; c++)
            d.x[i * S + c] = vt_wk_packed_get(m->tok_emb, (int)S, tokens[i], (int)c) +
                             m->dec_pos[((size_t)kv->len + i) * S + c];
    for (int l = 0; l < m->d.n_text_layer; l++) {
        for (int h = 0; h < m->d.n_text_head; h++)
            qk[h] = NULL;
        for (size_t i = 0; out->cross_qk && i < m->n_align; i++)
            if (m->align[i][0] == l)
                qk[m->align[i][1]] = out->cross_qk + i * nn * A;
        dec_block(kv, l, &d, qk);
    }
    dec_logits(kv, &d, out);
    kv->len += n;
    free(mem);
    return 0;
}
