/*
 * Tests of the reader of whisper.cpp's ggml checkpoints (ml/whisper_ggml.h): whisper.cpp's
 * own weightless test models (tests/data/whisper-assets/for-tests-ggml-tiny*.bin) give the
 * hparams of tiny, a vocabulary that must be the .tiktoken files' token for token (as
 * tiktoken.c reads them) and mel filters that must be mel_filters.npz's (as npz.c reads
 * it); a complete tiny Whisper model written here with F32, F16 and Q8_0 tensors of known
 * values must come back exactly (F16 and Q8_0 dequantised as ggml does) and pass the check
 * of its tensors; and hostile files (truncated at every byte, wrong magic, absurd counts, a
 * tensor past the end, unsupported or unknown types, duplicate names, misshapen models)
 * are refused with VT_EINVAL and one line.
 */
#include "base/util.h"
#include "harness.h"
#include "ml/tiktoken.h"
#include "ml/whisper_ggml.h"
#include "speech/npz.h"
#include "vidtheque.h"

#include <stdint.h>
#include <stdlib.h>

#define ASSETS "tests/data/whisper-assets/"

static struct vt_wggml *open_asset(const char *name)
{
    struct vt_wggml *f = NULL;
    char path[256], err[512] = "";

    snprintf(path, sizeof(path), ASSETS "for-tests-ggml-%s.bin", name);
    if (vt_wggml_open(path, 0, &f, err, sizeof(err)) != 0)
        fprintf(stderr, "  %s\n", err);
    return f;
}

/*
 * How many of the first n ids have other bytes in f's vocabulary than in t. whisper.cpp's
 * converter wrote each token decoded as UTF-8 with errors replaced, so a token that is part
 * of a character (b"\xa1") became U+FFFD: every difference must be such a word.
 */
static int32_t lossy_words(const struct vt_wggml *f, const struct vt_tiktoken *t, int32_t n)
{
    int32_t lossy = 0;

    for (int32_t id = 0; id < n; id++) {
        size_t wl = 0, tl = 0;
        const unsigned char *w = vt_wggml_word(f, id, &wl);
        const char *tok = vt_tiktoken_token(t, id, &tl);

        if (!w || !tok) {
            lossy = -1000000;
        } else if (wl != tl || memcmp(w, tok, wl) != 0) {
            lossy++;
            if (!memmem(w, wl, "\xef\xbf\xbd", 3)) {
                fprintf(stderr, "  word %d differs without U+FFFD\n", (int)id);
                vt_test_failures++;
            }
        }
    }
    return lossy;
}

static void check_tiny_hparams(const struct vt_wggml *f, int32_t n_vocab)
{
    CHECK_INT(f->hp.n_vocab, n_vocab);
    CHECK_INT(f->hp.n_audio_ctx, 1500);
    CHECK_INT(f->hp.n_audio_state, 384);
    CHECK_INT(f->hp.n_audio_head, 6);
    CHECK_INT(f->hp.n_audio_layer, 4);
    CHECK_INT(f->hp.n_text_ctx, 448);
    CHECK_INT(f->hp.n_text_state, 384);
    CHECK_INT(f->hp.n_text_head, 6);
    CHECK_INT(f->hp.n_text_layer, 4);
    CHECK_INT(f->hp.n_mels, 80);
    CHECK_INT(f->hp.ftype, 1);
    CHECK_INT(f->n_mel, 80);
    CHECK_INT(f->n_fft, 201);
    CHECK_INT(f->n_words, 50257);
    CHECK_INT(f->n_tensors, 0);
}

/* The file's filters are mel_filters.npz's mel_80, value for value. */
static void check_filters(const struct vt_wggml *f)
{
    struct vt_npy_f32 npy = {0};
    char *zip = NULL, err[256] = "";
    size_t len = 0, differ = 0;

    CHECK_INT(vt_read_file_capped(ASSETS "mel_filters.npz", "npz", 1u << 20, &zip, &len, err,
                                  sizeof(err)),
              0);
    CHECK_INT(vt_npz_read_f32(zip, len, "mel_80.npy", 1u << 24, &npy, err, sizeof(err)), 0);
    CHECK_INT(npy.count, (size_t)f->n_mel * (size_t)f->n_fft);
    for (size_t i = 0; npy.data && i < npy.count; i++)
        differ += npy.data[i] != f->filters[i];
    CHECK_INT(differ, 0);
    free(npy.data);
    free(zip);
}

VT_TEST(whisper_ggml_weightless_files)
{
    struct vt_wggml *en = open_asset("tiny.en"), *multi = open_asset("tiny");
    struct vt_tiktoken *gpt2 = NULL, *ml = NULL;
    char err[512] = "";
    float *v = NULL;
    size_t len = 0;

    CHECK(en && multi);
    if (!en || !multi)
        goto out;
    check_tiny_hparams(en, 51864);
    check_tiny_hparams(multi, 51865);
    const unsigned char *w = vt_wggml_word(en, 15496, &len);
    CHECK(w && len == 5 && memcmp(w, "Hello", 5) == 0);
    CHECK(vt_wggml_word(en, 50257, &len) == NULL && vt_wggml_word(en, -1, &len) == NULL);
    /* the vocabularies are the .tiktoken files' ranks, then <|endoftext|> (tiny.en) or an
     * empty word (tiny) at 50256; the tokens that are not valid UTF-8 (344 in gpt2, 1476 in
     * multilingual, as Python's bytes.decode counts them) are U+FFFD there */
    CHECK_INT(vt_tiktoken_load(ASSETS "gpt2.tiktoken", 99, &gpt2, err, sizeof(err)), 0);
    CHECK_INT(vt_tiktoken_load(ASSETS "multilingual.tiktoken", 99, &ml, err, sizeof(err)), 0);
    if (gpt2 && ml) {
        CHECK_INT(lossy_words(en, gpt2, 50257), 344);
        CHECK_INT(lossy_words(multi, ml, 50256), 1476);
    }
    CHECK(vt_wggml_word(multi, 50256, &len) != NULL && len == 0);
    check_filters(en);
    check_filters(multi);
    /* weightless: said plainly */
    CHECK_INT(vt_wggml_tensor_f32(en, "encoder.conv1.weight", &v, NULL, err, sizeof(err)),
              VT_ENOTFOUND);
    CHECK(strstr(err, "no tensors") != NULL);
    CHECK_INT(vt_wggml_check_whisper(multi, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "no tensors") != NULL);
out:
    vt_tiktoken_free(gpt2);
    vt_tiktoken_free(ml);
    vt_wggml_free(en);
    vt_wggml_free(multi);
}

/* ---- files written here ---- */

static void put_i32(struct vt_sb *b, int32_t v)
{
    unsigned char le[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                           (unsigned char)((uint32_t)v >> 24)};
    vt_sb_add(b, (const char *)le, 4);
}

static void put_u16(struct vt_sb *b, uint16_t v)
{
    char le[2] = {(char)(v & 0xff), (char)(v >> 8)};
    vt_sb_add(b, le, 2);
}

static void put_f32(struct vt_sb *b, float x)
{
    uint32_t bits;
    memcpy(&bits, &x, 4);
    put_i32(b, (int32_t)bits);
}

/* The tiny model's dimensions: one block each side, 32 states (one Q8_0 block a row). */
enum { ST = 32, ACTX = 3, TCTX = 2, MELS = 4, VOCAB = 6, FFT = 5 };

/* hparams (n_vocab ... ftype), filters (value m * 10 + k) and VOCAB words "w0".. */
static void put_head(struct vt_sb *b, int32_t n_vocab, int32_t n_words)
{
    const int32_t hp[11] = {n_vocab, ACTX, ST, 2, 1, TCTX, ST, 2, 1, MELS, 1};
    put_i32(b, 0x67676d6c);
    for (int i = 0; i < 11; i++)
        put_i32(b, hp[i]);
    put_i32(b, MELS);
    put_i32(b, FFT);
    for (int i = 0; i < MELS * FFT; i++)
        put_f32(b, (float)i * 0.25f);
    put_i32(b, n_words);
    for (int i = 0; i < n_words; i++) {
        char w[16];
        int n = snprintf(w, sizeof(w), "w%d", i);
        put_i32(b, n);
        vt_sb_add(b, w, (size_t)n);
    }
}

static void put_tensor_head(struct vt_sb *b, const char *name, int32_t type, int n_dims,
                            const int32_t *ne)
{
    put_i32(b, n_dims);
    put_i32(b, (int32_t)strlen(name));
    put_i32(b, type);
    for (int i = 0; i < n_dims; i++)
        put_i32(b, ne[i]);
    vt_sb_add(b, name, strlen(name));
}

/* Value k of a tensor seeded by seed, exact in f16: multiples of 1/4 in [-7.5, 7.5]. */
static float value(size_t k, unsigned seed)
{
    return (float)((int)((k * 13 + seed) % 61) - 30) / 4.0f;
}

/* f16 bits of a normal or zero float exact in f16. */
static uint16_t to_half(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, 4);
    if (x == 0)
        return (uint16_t)(bits >> 16);
    return (uint16_t)((bits >> 16 & 0x8000) | (((bits >> 23 & 0xff) - 127 + 15) << 10) |
                      (bits >> 13 & 0x3ff));
}

/* Q8_0: block i's scale is 0.125 * (1 + (i % 4) / 1024) (f16 0x3000 + i % 4), q varies. */
static float q8_scale(size_t blk)
{
    return 0.125f * (1.0f + (float)(blk % 4) / 1024.0f);
}

static int8_t q8_value(size_t k, unsigned seed)
{
    return (int8_t)((int)((k * 29 + seed) % 255) - 127);
}

/* A tensor of count values of type with known values, and those values into want. */
static void put_tensor(struct vt_sb *b, const char *name, int32_t type, int n_dims,
                       const int32_t *ne, unsigned seed, float *want)
{
    size_t count = 1;
    for (int i = 0; i < n_dims; i++)
        count *= (size_t)ne[i];
    put_tensor_head(b, name, type, n_dims, ne);
    for (size_t k = 0; k < count; k++) {
        if (type == VT_WGGML_Q8_0 && k % 32 == 0) {
            put_u16(b, (uint16_t)(0x3000 + k / 32 % 4));
        }
        if (type == VT_WGGML_Q8_0) {
            int8_t q = q8_value(k, seed);
            vt_sb_add(b, (const char *)&q, 1);
            want[k] = (float)q * q8_scale(k / 32);
        } else if (type == VT_WGGML_F16) {
            put_u16(b, to_half(value(k, seed)));
            want[k] = value(k, seed);
        } else {
            put_f32(b, value(k, seed));
            want[k] = value(k, seed);
        }
    }
}

/* The model's tensors as whisper.cpp names and shapes them (N.B. written out here, not
 * taken from the reader's table), with the types some are written in. */
struct spec {
    const char *name;
    int n_dims;
    int32_t ne[3];
    int32_t type;
};

static const struct spec model[] = {
    {"encoder.positional_embedding", 2, {ST, ACTX}, VT_WGGML_F32},
    {"encoder.conv1.weight", 3, {3, MELS, ST}, VT_WGGML_F16},
    {"encoder.conv1.bias", 2, {1, ST}, VT_WGGML_F32},
    {"encoder.conv2.weight", 3, {3, ST, ST}, VT_WGGML_F16},
    {"encoder.conv2.bias", 2, {1, ST}, VT_WGGML_F32},
    {"encoder.ln_post.weight", 1, {ST}, VT_WGGML_F32},
    {"encoder.ln_post.bias", 1, {ST}, VT_WGGML_F32},
    {"decoder.positional_embedding", 2, {ST, TCTX}, VT_WGGML_F32},
    {"decoder.token_embedding.weight", 2, {ST, VOCAB}, VT_WGGML_Q8_0},
    {"decoder.ln.weight", 1, {ST}, VT_WGGML_F32},
    {"decoder.ln.bias", 1, {ST}, VT_WGGML_F32},
};

/* A block's tensors after "encoder.blocks.0." (the first 15) or "decoder.blocks.0.". */
static const struct spec block[] = {
    {"mlp_ln.weight", 1, {ST}, VT_WGGML_F32},
    {"mlp_ln.bias", 1, {ST}, VT_WGGML_F32},
    {"mlp.0.weight", 2, {ST, 4 * ST}, VT_WGGML_F16},
    {"mlp.0.bias", 1, {4 * ST}, VT_WGGML_F32},
    {"mlp.2.weight", 2, {4 * ST, ST}, VT_WGGML_Q8_0},
    {"mlp.2.bias", 1, {ST}, VT_WGGML_F32},
    {"attn_ln.weight", 1, {ST}, VT_WGGML_F32},
    {"attn_ln.bias", 1, {ST}, VT_WGGML_F32},
    {"attn.query.weight", 2, {ST, ST}, VT_WGGML_Q8_0},
    {"attn.query.bias", 1, {ST}, VT_WGGML_F32},
    {"attn.key.weight", 2, {ST, ST}, VT_WGGML_F16},
    {"attn.value.weight", 2, {ST, ST}, VT_WGGML_F32},
    {"attn.value.bias", 1, {ST}, VT_WGGML_F32},
    {"attn.out.weight", 2, {ST, ST}, VT_WGGML_Q8_0},
    {"attn.out.bias", 1, {ST}, VT_WGGML_F32},
    {"cross_attn_ln.weight", 1, {ST}, VT_WGGML_F32},
    {"cross_attn_ln.bias", 1, {ST}, VT_WGGML_F32},
    {"cross_attn.query.weight", 2, {ST, ST}, VT_WGGML_F16},
    {"cross_attn.query.bias", 1, {ST}, VT_WGGML_F32},
    {"cross_attn.key.weight", 2, {ST, ST}, VT_WGGML_Q8_0},
    {"cross_attn.value.weight", 2, {ST, ST}, VT_WGGML_F32},
    {"cross_attn.value.bias", 1, {ST}, VT_WGGML_F32},
    {"cross_attn.out.weight", 2, {ST, ST}, VT_WGGML_F16},
    {"cross_attn.out.bias", 1, {ST}, VT_WGGML_F32},
};

#define N_MODEL (VT_ARRAY_LEN(model) + 15 + VT_ARRAY_LEN(block))

struct written {
    char name[64];
    size_t count;
    float *want;
};

/* Tensor i of the model (0 .. N_MODEL - 1): its name and spec. */
static const struct spec *model_tensor(size_t i, char *name, size_t n)
{
    if (i < VT_ARRAY_LEN(model)) {
        snprintf(name, n, "%s", model[i].name);
        return &model[i];
    }
    i -= VT_ARRAY_LEN(model);
    const char *side = i < 15 ? "encoder" : "decoder";
    if (i >= 15)
        i -= 15;
    snprintf(name, n, "%s.blocks.0.%s", side, block[i].name);
    return &block[i];
}

/* The whole model; tensor skip (or none: N_MODEL) left out; tensor twice written twice;
 * *head_len gets the offset of the first tensor. out[] (N_MODEL) gets the values. */
static char *write_model(size_t *len, size_t skip, size_t twice, size_t *head_len,
                         struct written *out)
{
    struct vt_sb b = {0};

    put_head(&b, VOCAB, VOCAB);
    *head_len = b.len;
    for (size_t i = 0; i < N_MODEL; i++) {
        char name[64];
        const struct spec *s = model_tensor(i, name, sizeof(name));
        size_t count = 1;
        for (int d = 0; d < s->n_dims; d++)
            count *= (size_t)s->ne[d];
        float *want = vt_xmalloc(count * sizeof(*want));
        if (i != skip)
            put_tensor(&b, name, s->type, s->n_dims, s->ne, (unsigned)i, want);
        if (i == twice)
            put_tensor(&b, name, s->type, s->n_dims, s->ne, (unsigned)i, want);
        if (out) {
            snprintf(out[i].name, sizeof(out[i].name), "%s", name);
            out[i].count = count;
            out[i].want = want;
        } else {
            free(want);
        }
    }
    *len = b.len;
    return b.buf;
}

VT_TEST(whisper_ggml_generated_model)
{
    struct written w[N_MODEL];
    size_t len, head, exact = 0, types[9] = {0};
    char *file = write_model(&len, N_MODEL, N_MODEL, &head, w), err[512] = "";
    struct vt_wggml *f = NULL;

    CHECK_INT(vt_wggml_parse(file, len, &f, err, sizeof(err)), 0);
    if (!f) {
        fprintf(stderr, "  %s\n", err);
        goto out;
    }
    CHECK_INT(f->n_tensors, N_MODEL);
    CHECK_INT(f->hp.n_vocab, VOCAB);
    CHECK_INT(f->n_words, VOCAB);
    size_t wl;
    const unsigned char *word = vt_wggml_word(f, 5, &wl);
    CHECK(word && wl == 2 && memcmp(word, "w5", 2) == 0);
    CHECK(f->filters[7] == 1.75f);
    for (size_t i = 0; i < N_MODEL; i++) {
        float *v = NULL;
        size_t n = 0;
        if (vt_wggml_tensor_f32(f, w[i].name, &v, &n, err, sizeof(err)) != 0) {
            fprintf(stderr, "  %s\n", err);
            vt_test_failures++;
            continue;
        }
        exact += n == w[i].count && memcmp(v, w[i].want, n * sizeof(*v)) == 0;
        types[vt_wggml_find(f, w[i].name)->type]++;
        free(v);
    }
    CHECK_INT(exact, N_MODEL);
    CHECK(types[VT_WGGML_F16] >= 6 && types[VT_WGGML_Q8_0] >= 6 && types[VT_WGGML_F32] >= 20);
    CHECK_STR(vt_wggml_type_name(VT_WGGML_Q8_0), "Q8_0");
    CHECK_INT(vt_wggml_check_whisper(f, err, sizeof(err)), 0);
    if (*err)
        fprintf(stderr, "  %s\n", err);
    CHECK_INT(vt_wggml_tensor_f32(f, "decoder.nothing", &(float *){NULL}, NULL, err, sizeof(err)),
              VT_ENOTFOUND);
out:
    vt_wggml_free(f);
    for (size_t i = 0; i < N_MODEL; i++)
        free(w[i].want);
    free(file);
}

/* IEEE half conversion as ggml's: specials, subnormals, extremes, signed zero. */
VT_TEST(whisper_ggml_f16_values)
{
    static const uint16_t h[] = {0x3c00, 0xc000, 0x0001, 0x03ff, 0x0400, 0x7bff,
                                 0x8000, 0x7c00, 0xfc00, 0x3555, 0x8001, 0x0000};
    const float want[] = {
        1.0f,  -2.0f,    1.0f / 16777216.0f, 1023.0f / 16777216.0f, 1.0f / 16384.0f,     65504.0f,
        -0.0f, INFINITY, -INFINITY,          0.333251953125f,       -1.0f / 16777216.0f, 0.0f};
    struct vt_sb b = {0};
    struct vt_wggml *f = NULL;
    char err[256] = "";
    float *v = NULL;
    size_t n = 0;

    put_head(&b, VOCAB, 0);
    put_tensor_head(&b, "h", VT_WGGML_F16, 1, (const int32_t[]){VT_ARRAY_LEN(h)});
    for (size_t i = 0; i < VT_ARRAY_LEN(h); i++)
        put_u16(&b, h[i]);
    CHECK_INT(vt_wggml_parse(b.buf, b.len, &f, err, sizeof(err)), 0);
    if (f && vt_wggml_tensor_f32(f, "h", &v, &n, err, sizeof(err)) == 0) {
        CHECK_INT(n, VT_ARRAY_LEN(h));
        for (size_t i = 0; i < n; i++)
            if (memcmp(&v[i], &want[i], sizeof(float)) != 0) {
                fprintf(stderr, "  half 0x%04x gave %g, expected %g\n", h[i], (double)v[i],
                        (double)want[i]);
                vt_test_failures++;
            }
        free(v);
    }
    vt_wggml_free(f);
    vt_sb_release(&b);
}

/* data refused with VT_EINVAL and one line containing want (NULL: any). */
static void refused(const char *what, const void *data, size_t len, const char *want)
{
    struct vt_wggml *f = NULL;
    char err[512] = "";
    int rc = vt_wggml_parse(data, len, &f, err, sizeof(err));

    if (rc != VT_EINVAL || !*err || strchr(err, '\n') || (want && !strstr(err, want))) {
        fprintf(stderr, "  %s: rc %d, '%s' (expected '%s')\n", what, rc, err, want ? want : "");
        vt_test_failures++;
    }
    vt_wggml_free(f);
}

/* A file of the head, then one tensor written by hand. */
static void refused_tensor(const char *what, int n_dims, const int32_t *ne, int32_t type,
                           const char *name, size_t data_bytes, const char *want)
{
    struct vt_sb b = {0};

    put_head(&b, VOCAB, VOCAB);
    put_tensor_head(&b, name, type, n_dims, ne);
    for (size_t i = 0; i < data_bytes; i++)
        vt_sb_addc(&b, 0);
    refused(what, b.buf, b.len, want);
    vt_sb_release(&b);
}

/* The int32 at byte off of a copy of file set to v, refused. */
static void refused_field(const char *what, const char *file, size_t len, size_t off, int32_t v,
                          const char *want)
{
    char *copy = vt_xmalloc(len);
    memcpy(copy, file, len);
    for (int i = 0; i < 4; i++)
        copy[off + (size_t)i] = (char)((uint32_t)v >> (8 * i));
    refused(what, copy, len, want);
    free(copy);
}

VT_TEST(whisper_ggml_hostile_files)
{
    size_t len, head;
    char *file = write_model(&len, N_MODEL, N_MODEL, &head, NULL), err[512];
    struct vt_wggml *f = NULL;

    /* every prefix: refused inside the header, filters and vocabulary; in the tensors, a
     * prefix that ends between two tensors is a file with fewer, which the model check
     * refuses */
    for (size_t n = 0; n < len; n++) {
        int rc = vt_wggml_parse(file, n, &f, err, sizeof(err));
        if (n < head && rc != VT_EINVAL)
            fprintf(stderr, "  prefix of %zu bytes: rc %d\n", n, rc), vt_test_failures++;
        if (rc == 0) {
            CHECK(n >= head);
            CHECK_INT(vt_wggml_check_whisper(f, err, sizeof(err)), VT_EINVAL);
            vt_wggml_free(f);
            f = NULL;
        }
    }
    refused_field("magic", file, len, 0, 0x46554747, "bad magic");
    refused_field("n_vocab", file, len, 4, INT32_MAX, "n_vocab");
    refused_field("negative n_audio_ctx", file, len, 8, -1, "n_audio_ctx");
    refused_field("n_mels", file, len, 40, 0, "n_mels");
    refused_field("mel filters", file, len, 48, 1025, "mel filter count");
    refused_field("mel bins", file, len, 52, 1 << 16, "truncated in the mel filters");
    refused_field("vocabulary past n_vocab", file, len, 56 + 4 * MELS * FFT, VOCAB + 1,
                  "vocabulary size");
    refused_field("word length", file, len, 60 + 4 * MELS * FFT, 1 << 20, "word length");
    /* the last word ("w5") made longer than what is left of a weightless file */
    refused_field("word past the end", file, head, 60 + 4 * MELS * FFT + 5 * 6, 3, "truncated");
    refused_tensor("5 dimensions", 4, (const int32_t[]){1, 1, 1, 1}, 0, "t", 0, NULL);
    refused_field("n_dims", file, len, head, 5, "tensor dimensions");
    refused_field("name length", file, len, head + 4, 0, "name length");
    refused_field("unsupported type", file, len, head + 8, 7, "Q5_1 (7) is not supported");
    refused_field("unknown type", file, len, head + 8, 99, "unknown ggml type 99");
    refused_field("zero size", file, len, head + 12, 0, "tensor size");
    refused_tensor("tensor past the end", 2, (const int32_t[]){ST, 100}, 0, "t", 4 * ST * 99,
                   "truncated?");
    refused_tensor("overflowing count", 4, (const int32_t[]){1 << 24, 1 << 24, 1 << 24, 1 << 24}, 0,
                   "t", 16, NULL);
    refused_tensor("Q8_0 row not whole blocks", 2, (const int32_t[]){31, 2}, VT_WGGML_Q8_0, "t", 68,
                   "blocks of 32");
    refused_tensor("unprintable name", 1, (const int32_t[]){1}, 0, "a b", 4, "printable");
    free(file);

    /* the same tensor twice */
    file = write_model(&len, N_MODEL, 3, &head, NULL);
    refused("duplicate", file, len, "appears twice");
    free(file);

    /* models that parse but are not whole Whisper models */
    file = write_model(&len, 20, N_MODEL, &head, NULL);
    CHECK_INT(vt_wggml_parse(file, len, &f, err, sizeof(err)), 0);
    if (f) {
        CHECK_INT(vt_wggml_check_whisper(f, err, sizeof(err)), VT_EINVAL);
        CHECK(strstr(err, "missing") != NULL);
        vt_wggml_free(f);
        f = NULL;
    }
    free(file);
    /* n_audio_ctx 4: encoder.positional_embedding is misshapen */
    file = write_model(&len, N_MODEL, N_MODEL, &head, NULL);
    file[8] = ACTX + 1;
    CHECK_INT(vt_wggml_parse(file, len, &f, err, sizeof(err)), 0);
    if (f) {
        CHECK_INT(vt_wggml_check_whisper(f, err, sizeof(err)), VT_EINVAL);
        CHECK_STR(err, "tensor 'encoder.positional_embedding' is [32, 3, 1, 1], expected [32, "
                       "4, 1, 1]");
        vt_wggml_free(f);
        f = NULL;
    }
    free(file);
    /* a tensor Whisper has not */
    struct vt_sb b = {0};
    file = write_model(&len, N_MODEL, N_MODEL, &head, NULL);
    vt_sb_add(&b, file, len);
    put_tensor_head(&b, "encoder.extra", VT_WGGML_F32, 1, (const int32_t[]){1});
    put_f32(&b, 1.0f);
    CHECK_INT(vt_wggml_parse(b.buf, b.len, &f, err, sizeof(err)), 0);
    if (f) {
        CHECK_INT(vt_wggml_check_whisper(f, err, sizeof(err)), VT_EINVAL);
        CHECK_STR(err, "unknown tensor 'encoder.extra'");
        vt_wggml_free(f);
    }
    vt_sb_release(&b);
    free(file);
}
