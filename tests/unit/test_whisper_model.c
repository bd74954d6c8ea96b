/*
 * Tests of Whisper's network (ml/whisper_model.h) against the PyTorch reference's outputs for
 * the generated checkpoint tests/data/whisper-test (expected.json, made by
 * tests/tools/whisper_ref.py on jfk.wav's first window): the encoder's output and the
 * decoder's logits to 1e-3 (the tolerance), fed one token at a time through the KV
 * cache and all at once, after a rewind, and along the greedy decoding's tokens; the same
 * checkpoint written here as whisper.cpp ggml files (F16, and Q8_0 quantised as ggml does);
 * the scalar kernels against the vector ones; and broken checkpoints refused with one line.
 */
#include "base/util.h"
#include "harness.h"
#include "ml/safetensors.h"
#include "ml/whisper_kern.h"
#include "ml/whisper_model.h"
#include "vidtheque.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define CKPT     "tests/data/whisper-test"
#define MEL_FILE "tests/data/whisper-mel/jfk-mel80.f32"
#define TOL      1e-3

static json_t *expected(void)
{
    json_error_t je;
    json_t *j = json_load_file(CKPT "/expected.json", 0, &je);

    if (!j)
        fprintf(stderr, "  expected.json: %s\n", je.text);
    return j;
}

/* The window: jfk's 1100 content frames ([80][1100]) then zeros to 3000 (pad_or_trim). */
static float *mel_window(void)
{
    char *data = NULL, err[256] = "";
    size_t len = 0;
    float *mel = calloc(80 * 3000, sizeof(float));

    if (vt_read_file_capped(MEL_FILE, "mel", 1u << 20, &data, &len, err, sizeof(err)) != 0 ||
        len != 80 * 1100 * sizeof(float)) {
        fprintf(stderr, "  %s: %s (%zu bytes)\n", MEL_FILE, err, len);
        free(data);
        free(mel);
        return NULL;
    }
    for (int c = 0; c < 80; c++)
        memcpy(mel + (size_t)c * 3000, data + (size_t)c * 1100 * sizeof(float),
               1100 * sizeof(float));
    free(data);
    return mel;
}

static struct vt_whisper_model *open_model(const char *path)
{
    struct vt_whisper_model *m = NULL;
    char err[512] = "";

    if (vt_whisper_model_open(path, 2, &m, err, sizeof(err)) != 0)
        fprintf(stderr, "  %s: %s\n", path, err);
    return m;
}

/* The largest |got[i] - want[i]| over a JSON array of numbers. */
static double max_diff(const float *got, json_t *want)
{
    double d = 0;

    for (size_t i = 0; i < json_array_size(want); i++) {
        double e = fabs(got[i] - json_number_value(json_array_get(want, i)));

        d = e > d ? e : d;
    }
    return json_array_size(want) ? d : 1e9;
}

#define CHECK_DIFF(got, want, tol)                                                                 \
    do {                                                                                           \
        double d_ = max_diff(got, want);                                                           \
        if (!(d_ <= (tol))) {                                                                      \
            fprintf(stderr, "  %s:%d: %s differs by %g (tolerance %g)\n", __FILE__, __LINE__,      \
                    #got, d_, (double)(tol));                                                      \
            vt_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)

/* The encoder's output against expected.json's: frames 0-7, 1499, every frame's L2 norm and
 * the whole output's mean, std, min and max. */
static void check_encoder(const float *enc, json_t *e, double tol)
{
    const int S = 64, T = 1500;
    float l2[1500];
    double sum = 0, sq = 0, mn = 1e9, mx = -1e9, n = (double)T * S, mean;

    for (int i = 0; i < 8; i++)
        CHECK_DIFF(enc + i * S, json_array_get(json_object_get(e, "first_frames"), i), tol);
    CHECK_DIFF(enc + 1499 * S, json_object_get(e, "frame_1499"), tol);
    for (int t = 0; t < T; t++) {
        double s = 0;

        for (int c = 0; c < S; c++)
            s += (double)enc[t * S + c] * enc[t * S + c];
        l2[t] = (float)sqrt(s);
    }
    CHECK_DIFF(l2, json_object_get(e, "frame_l2"), tol);
    for (int i = 0; i < T * S; i++) {
        sum += enc[i];
        sq += (double)enc[i] * enc[i];
        mn = enc[i] < mn ? enc[i] : mn;
        mx = enc[i] > mx ? enc[i] : mx;
    }
    mean = sum / n;
    CHECK_NEAR(mean, json_number_value(json_object_get(e, "mean")), tol);
    CHECK_NEAR(sqrt((sq - n * mean * mean) / (n - 1)), json_number_value(json_object_get(e, "std")),
               tol);
    CHECK_NEAR(mn, json_number_value(json_object_get(e, "min")), tol);
    CHECK_NEAR(mx, json_number_value(json_object_get(e, "max")), tol);
}

/* Q8_0 weights: logits within ~0.3 of each other may swap places in the top 20. */
static int q8_ids;

/* One position's logits against start_logits[pos]: the top 20 ids identical (in order), their
 * values, logits 0-63 and the specials to tol. */
static void check_logits(const float *lg, int n_vocab, json_t *row, double tol)
{
    json_t *ids = json_object_get(row, "top20_ids");
    int from = (int)json_integer_value(json_object_get(row, "specials_from"));
    int top[20];
    float vals[20];

    for (int k = 0; k < 20; k++) {
        top[k] = -1;
        for (int i = 0; i < n_vocab; i++) {
            int taken = 0;

            for (int j = 0; j < k; j++)
                taken |= top[j] == i;
            if (!taken && (top[k] < 0 || lg[i] > lg[top[k]]))
                top[k] = i;
        }
        vals[k] = lg[top[k]];
        if (!q8_ids)
            CHECK_INT(top[k], json_integer_value(json_array_get(ids, (size_t)k)));
    }
    if (q8_ids) { /* close logits swap places: the reference's best is among our best 5 */
        int found = 0;

        for (int k = 0; k < 5; k++)
            found |= top[k] == json_integer_value(json_array_get(ids, 0));
        CHECK(found);
    } else {
        CHECK_DIFF(vals, json_object_get(row, "top20_values"), tol);
    }
    CHECK_DIFF(lg, json_object_get(row, "first64"), tol);
    CHECK_DIFF(lg + from, json_object_get(row, "specials"), tol);
}

static double fdiff(const float *a, const float *b, size_t n)
{
    double d = 0;

    for (size_t i = 0; i < n; i++)
        d = fabs(a[i] - b[i]) > d ? fabs(a[i] - b[i]) : d;
    return d;
}

/* The decoder on the start sequence, then along the greedy tokens, to tol. */
static void check_decoder(const struct vt_whisper_model *m, const float *enc, json_t *e, double tol,
                          double tol_greedy)
{
    const int V = vt_whisper_model_dims(m)->n_vocab, A = 1500;
    json_t *rows = json_object_get(e, "start_logits"), *g = json_object_get(e, "greedy");
    json_t *toks = json_object_get(g, "tokens"), *steps = json_object_get(g, "steps");
    struct vt_whisper_kv *kv = vt_whisper_kv_new(m, enc);
    float *all = calloc((size_t)3 * V, sizeof(float)), *last = calloc((size_t)V, sizeof(float));
    float *qk3 = calloc((size_t)2 * 3 * A, sizeof(float)),
          *qk1 = calloc((size_t)2 * A, sizeof(float));
    int32_t sot[3] = {50258, 50259, 50359}, bad = V;
    char err[256] = "";
    size_t nsteps = json_array_size(steps);

    CHECK(kv != NULL);
    if (!kv)
        goto out;
    /* all three at once: every position's logits, and the alignment heads' q.k */
    CHECK_INT(vt_whisper_decode(kv, sot, 3,
                                &(struct vt_whisper_decode_out){
                                    .logits_all = all, .logits = last, .cross_qk = qk3},
                                err, sizeof(err)),
              0);
    CHECK_INT(vt_whisper_kv_len(kv), 3);
    for (int p = 0; p < 3; p++)
        check_logits(all + (size_t)p * V, V, json_array_get(rows, (size_t)p), tol);
    CHECK(memcmp(last, all + (size_t)2 * V, (size_t)V * sizeof(float)) == 0);
    /* rewound to nothing, one at a time through the cache: the same logits and q.k */
    vt_whisper_kv_rewind(kv, 0);
    for (int p = 0; p < 3; p++) {
        CHECK_INT(
            vt_whisper_decode(kv, sot + p, 1,
                              &(struct vt_whisper_decode_out){.logits = last, .cross_qk = qk1}, err,
                              sizeof(err)),
            0);
        check_logits(last, V, json_array_get(rows, (size_t)p), tol);
        for (int h = 0; h < 2; h++)
            CHECK(fdiff(qk1 + (size_t)h * A, qk3 + ((size_t)h * 3 + p) * A, A) < 1e-4);
    }
    /* refused without changing the cache: an id out of range, a context overflow */
    CHECK_INT(vt_whisper_decode(kv, &bad, 1, &(struct vt_whisper_decode_out){.logits = last}, err,
                                sizeof(err)),
              VT_EINVAL);
    CHECK(strstr(err, "out of range") != NULL);
    CHECK_INT(vt_whisper_kv_len(kv), 3);
    /* the greedy steps: step i's logits after the start sequence and tokens[:i] */
    for (size_t i = 0; i < nsteps; i++) {
        json_t *st = json_array_get(steps, i);
        int32_t tok = (int32_t)json_integer_value(json_object_get(st, "token"));

        if (i > 0) {
            int32_t prev = (int32_t)json_integer_value(json_array_get(toks, i - 1));

            CHECK_INT(vt_whisper_decode(kv, &prev, 1,
                                        &(struct vt_whisper_decode_out){.logits = last}, err,
                                        sizeof(err)),
                      0);
        }
        if (i == 0)
            memcpy(last, all + (size_t)2 * V, (size_t)V * sizeof(float));
        CHECK_NEAR(last[tok], json_number_value(json_object_get(st, "raw_logit")), tol_greedy);
    }
    CHECK_INT(nsteps, 27);
out:
    vt_whisper_kv_free(kv);
    free(all);
    free(last);
    free(qk3);
    free(qk1);
}

/* The whole check of a model holding the test checkpoint's values. */
static void check_model(const struct vt_whisper_model *m, double tol, double tol_greedy)
{
    json_t *e = expected();
    float *mel = mel_window(), *enc = malloc((size_t)1500 * 64 * sizeof(float));
    char err[256] = "";

    CHECK(e && mel && m);
    if (!e || !mel || !m)
        goto out;
    CHECK_INT(vt_whisper_encode(m, mel, enc, err, sizeof(err)), 0);
    check_encoder(enc, json_object_get(e, "encoder"), tol);
    check_decoder(m, enc, e, tol_greedy, tol_greedy);
out:
    json_decref(e);
    free(mel);
    free(enc);
}

VT_TEST(whisper_model_reference)
{
    struct vt_whisper_model *m = open_model(CKPT);
    const struct vt_whisper_dims *d;
    const int(*heads)[2];
    size_t n = 0;

    CHECK(m != NULL);
    if (!m)
        return;
    d = vt_whisper_model_dims(m);
    CHECK_INT(d->n_mels, 80);
    CHECK_INT(d->n_audio_ctx, 1500);
    CHECK_INT(d->n_text_state, 64);
    CHECK_INT(d->n_text_layer, 2);
    CHECK_INT(d->n_vocab, 51865);
    CHECK_STR(vt_whisper_model_format(m), "safetensors F16");
    heads = vt_whisper_model_alignment_heads(m, &n);
    CHECK(n == 2 && heads[0][0] == 1 && heads[0][1] == 0 && heads[1][0] == 1 && heads[1][1] == 1);
    /* 89 tensors: the matrices F16, the rest F32 */
    CHECK(vt_whisper_model_bytes(m) > 7000000 && vt_whisper_model_bytes(m) < 8000000);
    check_model(m, TOL, TOL);
    vt_whisper_model_free(m);
}

/* The scalar kernels give the same results (what a CPU without AVX2 runs). */
VT_TEST(whisper_model_generic_kernels)
{
    struct vt_whisper_model *m = open_model(CKPT);

    vt_wk_use_generic(1);
    CHECK_STR(vt_wk_kernels(), "generic");
    check_model(m, TOL, TOL);
    vt_wk_use_generic(0);
    vt_whisper_model_free(m);
}

/* ---- the checkpoint as whisper.cpp ggml files ---- */

static void put_i32(struct vt_sb *b, int32_t v)
{
    vt_sb_add(b, (const char *)&v, 4); /* little-endian, as this machine */
}

/* openai's name for transformers' (whisper_ref's hf_name backwards). */
static void openai_name(const char *hf, char *out, size_t n)
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
    char a[160];

    snprintf(a, sizeof(a), "%s", hf + strlen("model."));
    for (int i = (int)(sizeof(map) / sizeof(map[0])) - 1; i >= 0; i--) {
        char *hit = strstr(a, map[i][1]), b[160];

        if (!hit)
            continue;
        snprintf(b, sizeof(b), "%.*s%s%s", (int)(hit - a), a, map[i][0], hit + strlen(map[i][1]));
        snprintf(a, sizeof(a), "%s", b);
    }
    snprintf(out, n, "%s", a);
}

/* ggml's quantize_row_q8_0: per 32 values d = amax / 127 (stored F16), q = round(x / d). */
static void put_q8_0(struct vt_sb *b, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i += 32) {
        float amax = 0, d, id;
        uint16_t dh;

        for (int j = 0; j < 32; j++)
            amax = fabsf(x[i + j]) > amax ? fabsf(x[i + j]) : amax;
        d = amax / 127.0f;
        id = d != 0 ? 1.0f / d : 0.0f;
        dh = vt_wk_f32_to_f16(d);
        vt_sb_add(b, (const char *)&dh, 2);
        for (int j = 0; j < 32; j++) {
            int8_t q = (int8_t)roundf(x[i + j] * id);

            vt_sb_add(b, (const char *)&q, 1);
        }
    }
}

/* One tensor as whisper.cpp's converter (and, q8, its quantize) writes it: 1-D tensors, conv
 * biases ([S] -> ne {1, S}) and positional embeddings F32, 2-D matrices F16 or Q8_0, the
 * convolutions F16. */
static void put_tensor(struct vt_sb *b, const struct vt_st_tensor *t, int q8)
{
    char name[160];
    int64_t ne[3] = {1, 1, 1};
    int nd = t->ndim, type;
    float *v = malloc(t->count * sizeof(float));
    char err[128];

    openai_name(t->name, name, sizeof(name));
    for (int i = 0; i < nd; i++)
        ne[i] = (int64_t)t->shape[nd - 1 - i];
    type = nd == 1 || strstr(name, "positional") ? 0 : q8 && nd == 2 ? 8 : 1;
    if (strstr(name, "conv") && strstr(name, ".bias"))
        nd = 2, ne[1] = ne[0], ne[0] = 1;
    put_i32(b, nd);
    put_i32(b, (int32_t)strlen(name));
    put_i32(b, type);
    for (int i = 0; i < nd; i++)
        put_i32(b, (int32_t)ne[i]);
    vt_sb_add(b, name, strlen(name));
    vt_st_to_f32(t, v, err, sizeof(err));
    for (size_t i = 0; i < t->count; i++) {
        uint16_t h = vt_wk_f32_to_f16(v[i]);

        if (type == 0)
            vt_sb_add(b, (const char *)&v[i], 4);
        else if (type == 1)
            vt_sb_add(b, (const char *)&h, 2);
    }
    if (type == 8)
        put_q8_0(b, v, t->count);
    free(v);
}

/* The test checkpoint as a ggml file at path: F16, or Q8_0 (q8). */
static int write_ggml(const char *path, int q8)
{
    struct vt_safetensors *st = NULL;
    struct vt_sb b = {0};
    const int32_t hp[11] = {51865, 1500, 64, 2, 2, 448, 64, 2, 2, 80, q8 ? 2007 : 1};
    char err[512] = "";
    int rc;

    if (vt_safetensors_open(CKPT "/model.safetensors", 1u << 30, &st, err, sizeof(err)) != 0) {
        fprintf(stderr, "  %s\n", err);
        return -1;
    }
    put_i32(&b, 0x67676d6c);
    for (int i = 0; i < 11; i++)
        put_i32(&b, hp[i]);
    put_i32(&b, 80); /* filters: zeros (not used here) */
    put_i32(&b, 201);
    for (int i = 0; i < 80 * 201; i++)
        put_i32(&b, 0);
    put_i32(&b, 1); /* one word */
    put_i32(&b, 1);
    vt_sb_add(&b, "!", 1);
    for (size_t i = 0; i < st->n; i++)
        put_tensor(&b, &st->tensors[i], q8);
    rc = vt_write_file_atomic(path, b.buf, b.len, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  %s\n", err);
    vt_sb_release(&b);
    vt_safetensors_free(st);
    return rc;
}

VT_TEST(whisper_model_ggml)
{
    char dir[] = "/tmp/vt-wmodel-XXXXXX", f16[64], q8[64];
    struct vt_whisper_model *m;

    CHECK(mkdtemp(dir) != NULL);
    snprintf(f16, sizeof(f16), "%s/ggml-f16.bin", dir);
    snprintf(q8, sizeof(q8), "%s/ggml-q8_0.bin", dir);
    CHECK_INT(write_ggml(f16, 0), 0);
    CHECK_INT(write_ggml(q8, 1), 0);
    /* F16: the very same values as the safetensors file, so the same tolerance */
    m = open_model(f16);
    CHECK(m && strcmp(vt_whisper_model_format(m), "ggml F16") == 0);
    if (m)
        check_model(m, TOL, TOL);
    vt_whisper_model_free(m);
    /* Q8_0: each weight moves by up to d/2 = amax/254 of its block (0.4 % of the block's
     * largest); the logits (spread over some 60 units) move by up to 0.29 here and the
     * encoder's output by less than 0.05, so: 0.05 on the encoder, 0.6 on the logits */
    m = open_model(q8);
    CHECK(m && strcmp(vt_whisper_model_format(m), "ggml Q8_0") == 0);
    q8_ids = 1;
    if (m)
        check_model(m, 0.05, 0.6);
    q8_ids = 0;
    vt_whisper_model_free(m);
    unlink(f16);
    unlink(q8);
    rmdir(dir);
}

/* ---- broken checkpoints ---- */

/* A copy of the test checkpoint in dir with config.json's text cfg (NULL: as is) and
 * model.safetensors cut to keep bytes (0: whole). */
static void copy_ckpt(const char *dir, const char *cfg, size_t keep)
{
    const char *files[] = {"config.json", "generation_config.json", "model.safetensors"};

    for (int i = 0; i < 3; i++) {
        char src[256], dst[256], err[256], *data = NULL;
        size_t len = 0;

        snprintf(src, sizeof(src), CKPT "/%s", files[i]);
        snprintf(dst, sizeof(dst), "%s/%s", dir, files[i]);
        CHECK_INT(vt_read_file_capped(src, "f", 1u << 26, &data, &len, err, sizeof(err)), 0);
        if (i == 0 && cfg)
            CHECK_INT(vt_write_file_atomic(dst, cfg, strlen(cfg), err, sizeof(err)), 0);
        else
            CHECK_INT(
                vt_write_file_atomic(dst, data, i == 2 && keep ? keep : len, err, sizeof(err)), 0);
        free(data);
    }
}

static void refused(const char *path, int code, const char *want)
{
    struct vt_whisper_model *m = NULL;
    char err[512] = "";

    CHECK_INT(vt_whisper_model_open(path, 1, &m, err, sizeof(err)), code);
    CHECK(m == NULL);
    CHECK(strchr(err, '\n') == NULL && strstr(err, want) != NULL);
    if (!strstr(err, want))
        fprintf(stderr, "  got '%s', wanted '%s'\n", err, want);
}

static void with_config(const char *dir, const char *from, const char *to, const char *want)
{
    char *data = NULL, err[256], *hit, buf[4096];
    size_t len = 0;

    vt_read_file_capped(CKPT "/config.json", "f", 1u << 20, &data, &len, err, sizeof(err));
    hit = data ? strstr(data, from) : NULL;
    CHECK(hit != NULL);
    if (hit) {
        snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(hit - data), data, to, hit + strlen(from));
        copy_ckpt(dir, buf, 0);
        refused(dir, VT_EINVAL, want);
    }
    free(data);
}

VT_TEST(whisper_model_hostile)
{
    char dir[] = "/tmp/vt-wmodel-XXXXXX", path[128];

    CHECK(mkdtemp(dir) != NULL);
    refused("/nonexistent/whisper", VT_ENOTFOUND, "no such checkpoint");
    refused("tests/data/whisper-assets/for-tests-ggml-tiny.bin", VT_EINVAL, "no tensors");
    refused("tests/data/whisper-assets/for-tests-ggml-tiny.en.bin", VT_EINVAL, "no tensors");
    /* truncated: in the header, in the data */
    copy_ckpt(dir, NULL, 100);
    refused(dir, VT_EINVAL, "model.safetensors");
    copy_ckpt(dir, NULL, 7000000);
    refused(dir, VT_EINVAL, "model.safetensors");
    /* dimensions that the tensors do not have, or out of bounds */
    with_config(dir, "\"max_target_positions\": 448", "\"max_target_positions\": 224",
                "is 448x64, expected 224x64");
    with_config(dir, "\"encoder_ffn_dim\": 256", "\"encoder_ffn_dim\": 255", "ffn_dim");
    with_config(dir, "\"num_mel_bins\": 80", "\"num_mel_bins\": 81", "n_mels");
    with_config(dir, "\"vocab_size\": 51865", "\"vocab_size\": -1", "vocab_size");
    with_config(dir, "\"decoder_layers\": 2", "\"decoder_layers\": 3", "no tensor");
    with_config(dir, "\"max_source_positions\": 1500", "\"max_source_positions\": 3000",
                "n_audio_ctx");
    with_config(dir, "\"encoder_attention_heads\": 2", "\"encoder_attention_heads\": 3",
                "multiple of the heads");
    with_config(dir, "{", "[", "not a JSON object");
    for (int i = 0; i < 3; i++) {
        const char *f[] = {"config.json", "generation_config.json", "model.safetensors"};

        snprintf(path, sizeof(path), "%s/%s", dir, f[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* Generated weights of any shape; two threads encoding at once on one model agree with one. */
struct enc_run {
    const struct vt_whisper_model *m;
    const float *mel;
    float *out;
    int rc;
};

static void *enc_thread(void *v)
{
    struct enc_run *r = v;
    char err[128];

    r->rc = vt_whisper_encode(r->m, r->mel, r->out, err, sizeof(err));
    return NULL;
}

VT_TEST(whisper_model_random_concurrent)
{
    struct vt_whisper_dims d = {128, 100, 48, 3, 1, 300, 20, 48, 3, 2};
    struct vt_whisper_model *m = NULL;
    char err[256] = "";
    float *mel = malloc((size_t)128 * 200 * sizeof(float)), *out[3];
    struct enc_run r[2];
    pthread_t t[2];

    for (int i = 0; i < 128 * 200; i++)
        mel[i] = sinf((float)i * 0.01f);
    CHECK_INT(vt_whisper_model_random(&d, 7, 2, &m, err, sizeof(err)), 0);
    d.n_mels = 90;
    CHECK_INT(
        vt_whisper_model_random(&d, 7, 2, &(struct vt_whisper_model *){NULL}, err, sizeof(err)),
        VT_EINVAL);
    if (!m)
        goto out;
    CHECK_STR(vt_whisper_model_format(m), "generated");
    for (int i = 0; i < 3; i++)
        out[i] = calloc((size_t)100 * 48, sizeof(float));
    CHECK_INT(vt_whisper_encode(m, mel, out[2], err, sizeof(err)), 0);
    for (int i = 0; i < 2; i++) {
        r[i] = (struct enc_run){m, mel, out[i], -1};
        pthread_create(&t[i], NULL, enc_thread, &r[i]);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK_INT(r[i].rc, 0);
        CHECK(memcmp(out[i], out[2], (size_t)100 * 48 * sizeof(float)) == 0);
    }
    for (int i = 0; i < 3; i++)
        free(out[i]);
out:
    vt_whisper_model_free(m);
    free(mel);
}
