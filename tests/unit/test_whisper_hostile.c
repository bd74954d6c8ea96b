/*
 * Hostile Whisper checkpoints (ml/whisper_model.h), each a copy of the generated
 * tests/data/whisper-test with one thing wrong: refused with VT_EINVAL and one line naming
 * what, never loaded. Non-finite weights (a NaN or an infinity in a matrix kept as F16, or in
 * a bias widened to F32) would make every output NaN; integer tensors relabelled as weights,
 * a config.json that lies about its dimensions (larger than its tensors, or as large as the
 * loader allows: refused by the shape check before anything is allocated), alignment heads
 * outside the decoder, a ggml file quantised as Q5_1, and a device given as the checkpoint.
 */
#include "base/util.h"
#include "harness.h"
#include "ml/safetensors.h"
#include "ml/whisper_model.h"
#include "vidtheque.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define CKPT "tests/data/whisper-test"

/* What to change in the copy: text replaced in config.json and in model.safetensors' header
 * (same length there), generation_config.json's text, one F16 value's bits. */
struct edit {
    const char *cfg_from, *cfg_to;
    const char *gen;
    const char *hdr_from, *hdr_to;
    const char *tensor; /* HF name of the tensor whose element 7 becomes bits */
    uint16_t bits;
};

static char *replaced(const char *data, const char *from, const char *to)
{
    const char *hit = strstr(data, from);
    size_t n = strlen(data) + strlen(to) + 1;
    char *out = malloc(n);

    CHECK(hit != NULL);
    if (!hit || !out) {
        free(out);
        return NULL;
    }
    snprintf(out, n, "%.*s%s%s", (int)(hit - data), data, to, hit + strlen(from));
    return out;
}

/* Patch the safetensors bytes st_data (len) as e says. */
static void patch_st(char *st_data, size_t len, const struct edit *e)
{
    struct vt_safetensors *st = NULL;
    char err[256] = "";

    if (e->hdr_from) {
        char *hit = memmem(st_data, len < 20000 ? len : 20000, e->hdr_from, strlen(e->hdr_from));

        CHECK(hit != NULL && strlen(e->hdr_from) == strlen(e->hdr_to));
        if (hit)
            memcpy(hit, e->hdr_to, strlen(e->hdr_to));
    }
    if (!e->tensor)
        return;
    CHECK_INT(vt_safetensors_parse(st_data, len, &st, err, sizeof(err)), 0);
    if (st) {
        const struct vt_st_tensor *t = vt_safetensors_find(st, e->tensor);

        CHECK(t && t->dtype == VT_ST_F16 && t->count > 7);
        if (t)
            memcpy(st_data + (t->data - st->buf) + 2 * 7, &e->bits, 2);
    }
    vt_safetensors_free(st);
}

/* The test checkpoint copied into dir, edited as e says. */
static void copy_edited(const char *dir, const struct edit *e)
{
    const char *files[] = {"config.json", "generation_config.json", "model.safetensors"};

    for (int i = 0; i < 3; i++) {
        char src[256], dst[256], err[256] = "", *data = NULL, *out = NULL;
        size_t len = 0;

        snprintf(src, sizeof(src), CKPT "/%s", files[i]);
        snprintf(dst, sizeof(dst), "%s/%s", dir, files[i]);
        CHECK_INT(vt_read_file_capped(src, "f", 1u << 26, &data, &len, err, sizeof(err)), 0);
        if (!data)
            continue;
        if (i == 0 && e->cfg_from)
            out = replaced(data, e->cfg_from, e->cfg_to);
        if (i == 1 && e->gen)
            out = strdup(e->gen);
        if (i == 2)
            patch_st(data, len, e);
        if (out)
            CHECK_INT(vt_write_file_atomic(dst, out, strlen(out), err, sizeof(err)), 0);
        else
            CHECK_INT(vt_write_file_atomic(dst, data, len, err, sizeof(err)), 0);
        free(out);
        free(data);
    }
}

/* path refused with code, err one line holding want. */
static void refused(const char *path, int code, const char *want)
{
    struct vt_whisper_model *m = NULL;
    char err[512] = "";

    CHECK_INT(vt_whisper_model_open(path, 1, &m, err, sizeof(err)), code);
    CHECK(m == NULL);
    CHECK(strchr(err, '\n') == NULL && strstr(err, want) != NULL);
    if (!strstr(err, want))
        fprintf(stderr, "  got '%s', wanted '%s'\n", err, want);
    vt_whisper_model_free(m);
}

static void refused_edit(const char *dir, const struct edit *e, const char *want)
{
    copy_edited(dir, e);
    refused(dir, VT_EINVAL, want);
}

static void remove_dir(const char *dir)
{
    const char *f[] = {"config.json", "generation_config.json", "model.safetensors", "q5.bin"};
    char path[128];

    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, f[i]);
        unlink(path);
    }
    rmdir(dir);
}

VT_TEST(whisper_hostile_weights)
{
    char dir[] = "/tmp/vt-whard-XXXXXX";
    struct vt_whisper_model *m = NULL;
    char err[512] = "";
    /* F16 bits: +inf, a quiet NaN, -inf, and the largest finite (accepted) */
    struct edit nan_matrix = {.tensor = "model.decoder.layers.1.fc1.weight", .bits = 0x7e00};
    struct edit inf_bias = {.tensor = "model.encoder.layers.0.fc1.bias", .bits = 0x7c00};
    struct edit ninf_pos = {.tensor = "model.decoder.embed_positions.weight", .bits = 0xfc00};
    struct edit big = {.tensor = "model.encoder.conv1.weight", .bits = 0x7bff};

    CHECK(mkdtemp(dir) != NULL);
    refused_edit(dir, &nan_matrix,
                 "'model.decoder.layers.1.fc1.weight' has a value that is not finite (at 7)");
    refused_edit(dir, &inf_bias,
                 "'model.encoder.layers.0.fc1.bias' has a value that is not finite (at 7)");
    refused_edit(dir, &ninf_pos, "not finite");
    /* the same copy with a large but finite weight opens: the test above is the NaN's */
    copy_edited(dir, &big);
    CHECK_INT(vt_whisper_model_open(dir, 1, &m, err, sizeof(err)), 0);
    if (!m)
        fprintf(stderr, "  %s\n", err);
    vt_whisper_model_free(m);
    remove_dir(dir);
}

VT_TEST(whisper_hostile_labels)
{
    char dir[] = "/tmp/vt-whard-XXXXXX";
    /* an integer tensor where a weight is: I16 has F16's size, so only the label is wrong */
    struct edit i16 = {.hdr_from = "\"model.encoder.layers.0.fc1.bias\":{\"dtype\":\"F16\"",
                       .hdr_to = "\"model.encoder.layers.0.fc1.bias\":{\"dtype\":\"I16\""};
    struct edit i16_matrix = {.hdr_from = "\"model.encoder.conv2.weight\":{\"dtype\":\"F16\"",
                              .hdr_to = "\"model.encoder.conv2.weight\":{\"dtype\":\"I16\""};
    /* a config.json as large as the loader allows: the first tensor checked says so */
    struct edit huge = {.cfg_from = "\"d_model\": 64", .cfg_to = "\"d_model\": 2048"};
    struct edit layers = {.cfg_from = "\"encoder_layers\": 2", .cfg_to = "\"encoder_layers\": 64"};
    struct edit vocab = {.cfg_from = "\"vocab_size\": 51865", .cfg_to = "\"vocab_size\": 131072"};
    struct edit vocab_over = {.cfg_from = "\"vocab_size\": 51865",
                              .cfg_to = "\"vocab_size\": 131073"};
    struct edit heads_out = {.gen = "{\"alignment_heads\": [[2, 0]]}"};
    struct edit heads_neg = {.gen = "{\"alignment_heads\": [[1, -1]]}"};
    struct edit heads_rep = {.gen = "{\"alignment_heads\": [[1, 0], [1, 0]]}"};
    struct edit heads_many = {.gen = "{\"alignment_heads\": [[0,0],[0,1],[1,0],[1,1],[1,1]]}"};
    struct edit heads_str = {.gen = "{\"alignment_heads\": \"all\"}"};
    struct edit gen_bad = {.gen = "{\"alignment_heads\": [[1, 0]"};

    CHECK(mkdtemp(dir) != NULL);
    refused_edit(dir, &i16, "'model.encoder.layers.0.fc1.bias' is I16, not F32, F16 or BF16");
    refused_edit(dir, &i16_matrix, "'model.encoder.conv2.weight' is I16");
    refused_edit(dir, &huge, "ffn_dim"); /* 4 x d_model no more */
    refused_edit(dir, &layers, "no tensor 'model.encoder.layers.2.");
    refused_edit(dir, &vocab,
                 "'model.decoder.embed_tokens.weight' is 51865x64, expected 131072x64");
    refused_edit(dir, &vocab_over, "n_vocab 131073 out of range");
    refused_edit(dir, &heads_out, "alignment_heads[0] is not a [layer, head]");
    refused_edit(dir, &heads_neg, "alignment_heads[0] is not a [layer, head]");
    refused_edit(dir, &heads_rep, "alignment_heads[1] repeated");
    refused_edit(dir, &heads_many, "alignment_heads: not 1 to 4 pairs");
    refused_edit(dir, &heads_str, "alignment_heads: not 1 to 4 pairs");
    refused_edit(dir, &gen_bad, "generation_config.json': not a JSON object");
    remove_dir(dir);
}

static void put_i32(struct vt_sb *b, int32_t v)
{
    vt_sb_add(b, (const char *)&v, 4);
}

VT_TEST(whisper_hostile_files)
{
    char dir[] = "/tmp/vt-whard-XXXXXX", path[128], err[256] = "";
    const int32_t hp[11] = {8, 2, 32, 1, 1, 4, 32, 1, 1, 80, 9};
    struct vt_sb b = {0};

    CHECK(mkdtemp(dir) != NULL);
    refused("/dev/null", VT_EINVAL, "'/dev/null': not a checkpoint file or directory");
    /* a ggml file with a Q5_1 tensor (ggml type 7: 32 values in 24 bytes) */
    put_i32(&b, 0x67676d6c);
    for (int i = 0; i < 11; i++)
        put_i32(&b, hp[i]);
    put_i32(&b, 1); /* one filter of one bin */
    put_i32(&b, 1);
    put_i32(&b, 0);
    put_i32(&b, 0); /* no words */
    put_i32(&b, 1); /* a tensor: 1 dim, its name's length, type Q5_1, 32 values */
    put_i32(&b, 18);
    put_i32(&b, 7);
    put_i32(&b, 32);
    vt_sb_add(&b, "decoder.ln.weight.", 18);
    for (int i = 0; i < 24; i++)
        vt_sb_add(&b, "", 1);
    snprintf(path, sizeof(path), "%s/q5.bin", dir);
    CHECK_INT(vt_write_file_atomic(path, b.buf, b.len, err, sizeof(err)), 0);
    refused(path, VT_EINVAL, "Q5_1");
    vt_sb_release(&b);
    remove_dir(dir);
}
