/*
 * Tests of the TFLite interpreter (tflite.h), the tflite image-embedding backend
 * (imgembed.h) and the JPEG loader (imgload.h) on the real MobileNet v1 0.25 model of
 * tests/data/mobilenet-v1-0.25-224 (from tensorflow/tflite-support): burger-224.png must
 * be class 934 "cheeseburger" with upstream's p 0.988, the burger's embedding must be
 * close to its mirror image's and far from the sparrow's, and the model file corrupted in
 * each way a hostile file could be (identifier, truncation, offsets, a lying vtable, a
 * vector past the end, an unknown operator, absurd shapes, a short buffer) must fail with
 * its own error. The PNG pictures are decoded here with FFmpeg's PNG decoder (FFmpeg is
 * linked already; the library itself reads only JPEG).
 */
#include "harness.h"
#include "imgembed.h"
#include "imgload.h"
#include "imgutil.h"
#include "tflite.h"
#include "util.h"
#include "vidtheque.h"

#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define MN_DIR "tests/data/mobilenet-v1-0.25-224"
#define MN_FILE MN_DIR "/mobilenet_v1_0.25_224_1_metadata_1.tflite"

/* Decode a PNG file into packed RGB24 (caller frees); NULL on failure. */
static uint8_t *load_png(const char *path, int *w, int *h)
{
    char *data = NULL, err[256];
    size_t len;
    uint8_t *rgb = NULL;
    if (vt_read_file_capped(path, "png", 64u << 20, &data, &len, err, sizeof(err)))
        return NULL;
    const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_PNG);
    AVCodecContext *cx = codec ? avcodec_alloc_context3(codec) : NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *fr = av_frame_alloc();
    if (!cx || avcodec_open2(cx, codec, NULL) < 0 || av_new_packet(pkt, (int)len) < 0)
        goto out;
    memcpy(pkt->data, data, len);
    if (avcodec_send_packet(cx, pkt) < 0 || avcodec_receive_frame(cx, fr) < 0)
        goto out;
    struct SwsContext *sws = sws_getContext(fr->width, fr->height, fr->format, fr->width,
                                            fr->height, AV_PIX_FMT_RGB24, SWS_POINT, NULL, NULL,
                                            NULL);
    if (!sws)
        goto out;
    rgb = vt_xmalloc((size_t)fr->width * fr->height * 3);
    uint8_t *dst[4] = {rgb};
    int ls[4] = {fr->width * 3};
    sws_scale(sws, (const uint8_t *const *)fr->data, fr->linesize, 0, fr->height, dst, ls);
    sws_freeContext(sws);
    *w = fr->width;
    *h = fr->height;
out:
    av_frame_free(&fr);
    av_packet_free(&pkt);
    avcodec_free_context(&cx);
    free(data);
    return rgb;
}

static double dot(const float *a, const float *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

VT_TEST(tflite_burger_is_cheeseburger)
{
    struct vt_tflite *m = NULL;
    char err[512] = "";
    int rc = vt_tflite_open(MN_FILE, &m, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  open: %s\n", err);
    CHECK_INT(rc, 0);
    int w, h, c;
    uint8_t *rgb = load_png(MN_DIR "/burger-224.png", &w, &h);
    CHECK(rgb != NULL);
    if (!m || !rgb)
        goto out;
    int ih, iw, ic;
    vt_tflite_input_shape(m, &ih, &iw, &ic);
    CHECK_INT(ih, 224);
    CHECK_INT(iw, 224);
    CHECK_INT(ic, 3);
    CHECK(vt_tflite_macs(m) > 40000000 && vt_tflite_macs(m) < 42000000);
    int emb = vt_tflite_default_embedding(m);
    CHECK_STR(emb >= 0 ? vt_tflite_tensor_name(m, emb) : "", "MobilenetV1/Logits/AvgPool_1a/AvgPool");
    CHECK_INT(emb >= 0 ? vt_tflite_tensor_count(m, emb) : 0, 256);

    float *in = vt_xmalloc((size_t)ih * iw * 3 * sizeof(float));
    vt_tflite_image_input(rgb, w, h, (size_t)w * 3, iw, ih, 127.5f, 127.5f, in);
    struct vt_tflite_ctx *cx = vt_tflite_ctx_new(m);
    vt_tflite_run(cx, in, -1);
    int o = vt_tflite_output(m);
    CHECK_INT(vt_tflite_tensor_count(m, o), 1001);
    const float *p = vt_tflite_tensor_data(cx, o);
    size_t best = 0;
    double sum = 0;
    for (size_t i = 0; i < 1001; i++) {
        sum += p[i];
        if (p[i] > p[best])
            best = i;
    }
    CHECK_INT(best, 934); /* labels.txt in the model's metadata: "cheeseburger" */
    CHECK_NEAR(p[934], 0.988, 0.01);
    CHECK_NEAR(sum, 1.0, 1e-4);
    vt_tflite_ctx_free(cx);
    free(in);
    (void)c;
out:
    free(rgb);
    vt_tflite_free(m);
}

static struct vt_imgembed *open_mn(int threads)
{
    struct vt_imgembed_spec spec = {.backend = "tflite", .model = MN_DIR, .threads = threads};
    struct vt_imgembed *e = NULL;
    char err[512] = "";
    int rc = vt_imgembed_open(&spec, &e, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  open: %s\n", err);
    CHECK_INT(rc, 0);
    return e;
}

VT_TEST(tflite_embedding_mirror_close_sparrow_far)
{
    struct vt_imgembed *e = open_mn(2);
    int bw, bh, sw, sh;
    uint8_t *burger = load_png(MN_DIR "/burger-224.png", &bw, &bh);
    uint8_t *sparrow = load_png(MN_DIR "/sparrow.png", &sw, &sh);
    CHECK(burger && sparrow);
    if (!e || !burger || !sparrow)
        goto out;
    CHECK_INT(vt_imgembed_dim(e), 256);
    CHECK_STR(vt_imgembed_model(e),
              "tflite mobilenet_v1_0.25_224_1_metadata_1 (256 d, "
              "MobilenetV1/Logits/AvgPool_1a/AvgPool)");
    CHECK(strncmp(vt_imgembed_id(e), "tflite:", 7) == 0);
    CHECK(!vt_imgembed_has_text(e));

    uint8_t *mirror = vt_xmalloc((size_t)bw * bh * 3);
    for (int y = 0; y < bh; y++)
        for (int x = 0; x < bw; x++)
            memcpy(mirror + ((size_t)y * bw + x) * 3, burger + ((size_t)y * bw + bw - 1 - x) * 3,
                   3);
    struct vt_image imgs[4] = {
        {burger, bw, bh, (size_t)bw * 3},
        {mirror, bw, bh, (size_t)bw * 3},
        {sparrow, sw, sh, (size_t)sw * 3},
        {burger, bw, bh, (size_t)bw * 3},
    };
    float v[4 * 256];
    char err[256];
    CHECK_INT(vt_imgembed_images(e, imgs, 4, v, err, sizeof(err)), 0);
    double mirror_cos = dot(v, v + 256, 256), sparrow_cos = dot(v, v + 512, 256);
    double sum = 0;
    for (int i = 0; i < 256; i++)
        sum += v[i];
    CHECK_NEAR(dot(v, v, 256), 1.0, 1e-5);
    CHECK_NEAR(sum, 0.0, 1e-3); /* mean-centred before normalising */
    CHECK_NEAR(dot(v, v + 768, 256), 1.0, 1e-5); /* the same picture on another worker */
    /* measured: mirror 0.965, sparrow -0.03 (the issue asks > 0.95 and < 0.7) */
    CHECK(mirror_cos > 0.95);
    CHECK(sparrow_cos < 0.7);
    if (mirror_cos <= 0.95 || sparrow_cos >= 0.7)
        fprintf(stderr, "  mirror %.4f sparrow %.4f\n", mirror_cos, sparrow_cos);

    /* the same vector through a JPEG round trip of the burger stays close */
    char dir[] = "/tmp/vt-tflite-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *jpg = vt_xasprintf("%s/burger.jpg", dir);
    int64_t bytes;
    CHECK_INT(vt_img_write_jpeg(jpg, burger, bw, bh, bw * 3, 95, &bytes, err, sizeof(err)), 0);
    struct vt_image_buf b;
    CHECK_INT(vt_image_load_jpeg(jpg, &b, err, sizeof(err)), 0);
    CHECK_INT(b.width, bw);
    CHECK_INT(b.height, bh);
    if (b.rgb) {
        struct vt_image ji = {b.rgb, b.width, b.height, b.stride};
        float jv[256];
        CHECK_INT(vt_imgembed_images(e, &ji, 1, jv, err, sizeof(err)), 0);
        CHECK(dot(v, jv, 256) > 0.95);
    }
    vt_image_buf_release(&b);
    unlink(jpg);
    rmdir(dir);
    free(jpg);

    struct vt_image empty = {burger, 0, 10, 0};
    CHECK_INT(vt_imgembed_images(e, &empty, 1, v, err, sizeof(err)), VT_EINVAL);
    free(mirror);
out:
    free(burger);
    free(sparrow);
    vt_imgembed_close(e);
}

VT_TEST(tflite_imgembed_spec_errors)
{
    struct vt_imgembed *e = NULL;
    char err[512] = "";
    struct vt_imgembed_spec spec = {.backend = "openai", .model = "clip"};
    CHECK_INT(vt_imgembed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    spec = (struct vt_imgembed_spec){.backend = "onnx", .model = MN_DIR};
    CHECK_INT(vt_imgembed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "unknown") != NULL);
    spec = (struct vt_imgembed_spec){.backend = "tflite", .model = "tests/data/no-such-model"};
    CHECK_INT(vt_imgembed_open(&spec, &e, err, sizeof(err)), VT_ENOTFOUND);
    spec = (struct vt_imgembed_spec){.backend = "tflite", .model = MN_DIR, .tensor = "nope"};
    CHECK_INT(vt_imgembed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "no tensor named 'nope'") != NULL);
    /* a constant is not an embedding */
    spec.tensor = "MobilenetV1/Conv2d_0/weights";
    CHECK_INT(vt_imgembed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    /* another tensor by name: the logits before the softmax, 1001 values */
    spec.tensor = "MobilenetV1/Logits/SpatialSqueeze";
    int rc = vt_imgembed_open(&spec, &e, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  %s\n", err);
    CHECK_INT(rc, 0);
    if (e)
        CHECK_INT(vt_imgembed_dim(e), 1001);
    vt_imgembed_close(e);
    CHECK(e == NULL || 1);
}

VT_TEST(tflite_jpeg_hostile)
{
    struct vt_image_buf b;
    char err[256] = "";
    static const uint8_t junk[] = {0xff, 0xd8, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 2};
    CHECK_INT(vt_image_decode_jpeg(junk, sizeof(junk), &b, err, sizeof(err)), VT_EMEDIA);
    CHECK(b.rgb == NULL);
    CHECK_INT(vt_image_decode_jpeg((const uint8_t *)"GIF89a", 6, &b, err, sizeof(err)),
              VT_EMEDIA);
    CHECK_INT(vt_image_load_jpeg("tests/data/no-such.jpg", &b, err, sizeof(err)), VT_ENOTFOUND);
    /* a 9000-pixel-wide picture is refused before decoding */
    uint8_t *px = vt_xcalloc(9000 * 8 * 3, 1);
    char dir[] = "/tmp/vt-tflite-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *jpg = vt_xasprintf("%s/wide.jpg", dir);
    int64_t bytes;
    CHECK_INT(vt_img_write_jpeg(jpg, px, 9000, 8, 9000 * 3, 50, &bytes, err, sizeof(err)), 0);
    CHECK_INT(vt_image_load_jpeg(jpg, &b, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "9000x8") != NULL);
    unlink(jpg);
    rmdir(dir);
    free(jpg);
    free(px);
}

/* ---- hostile model files: the real model with one thing broken ---- */

static uint32_t u32at(const uint8_t *d, size_t p)
{
    return (uint32_t)d[p] | (uint32_t)d[p + 1] << 8 | (uint32_t)d[p + 2] << 16 |
           (uint32_t)d[p + 3] << 24;
}

static void put32(uint8_t *d, size_t p, uint32_t v)
{
    d[p] = (uint8_t)v;
    d[p + 1] = (uint8_t)(v >> 8);
    d[p + 2] = (uint8_t)(v >> 16);
    d[p + 3] = (uint8_t)(v >> 24);
}

/* The vtable slot of field id of the table at t, and the field's position (0: absent). */
static size_t vslot(const uint8_t *d, size_t t, int id)
{
    return t - (size_t)(int32_t)u32at(d, t) + 4 + 2 * (size_t)id;
}

static size_t field(const uint8_t *d, size_t t, int id)
{
    size_t s = vslot(d, t, id);
    uint16_t off = (uint16_t)(d[s] | d[s + 1] << 8);
    return off ? t + off : 0;
}

static size_t deref(const uint8_t *d, size_t p)
{
    return p + u32at(d, p);
}

/* Element i of the vector of tables at field id of table t. */
static size_t elem(const uint8_t *d, size_t t, int id, uint32_t i)
{
    size_t v = deref(d, field(d, t, id));
    return deref(d, v + 4 + 4 * (size_t)i);
}

static int parse_err(const uint8_t *d, size_t n, char *err, size_t errlen)
{
    struct vt_tflite *m = NULL;
    err[0] = 0;
    int rc = vt_tflite_parse(d, n, &m, err, errlen);
    vt_tflite_free(m);
    return rc;
}

#define EXPECT_BAD(buf, n, what)                                                                   \
    do {                                                                                           \
        int rc_ = parse_err(buf, n, err, sizeof(err));                                             \
        CHECK_INT(rc_, VT_EINVAL);                                                                 \
        if (!strstr(err, what)) {                                                                  \
            fprintf(stderr, "  %s:%d: error '%s' lacks '%s'\n", __FILE__, __LINE__, err, what);    \
            vt_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)

VT_TEST(tflite_hostile_models)
{
    char *orig = NULL, err[512];
    size_t n;
    CHECK_INT(vt_read_file_capped(MN_FILE, "model", 8u << 20, &orig, &n, err, sizeof(err)), 0);
    if (!orig)
        return;
    const uint8_t *o = (const uint8_t *)orig;
    uint8_t *d = vt_xmalloc(n);
    size_t root = deref(o, 0), sg = elem(o, root, 2, 0);

    CHECK_INT(parse_err(o, n, err, sizeof(err)), 0);

    memcpy(d, o, n);
    d[7] = 'X';
    EXPECT_BAD(d, n, "no TFL3 identifier");
    EXPECT_BAD(o, 6, "no TFL3 identifier");

    /* truncated anywhere: at the root table, in the middle of the weights, before the end */
    EXPECT_BAD(o, 64, "out of range");
    EXPECT_BAD(o, n / 2, "out of range");
    EXPECT_BAD(o, n - 200000, "out of range");

    memcpy(d, o, n);
    put32(d, 0, 0xfffffff0u); /* root offset out of the file */
    EXPECT_BAD(d, n, "root table out of range");

    memcpy(d, o, n);
    put32(d, root, 0x7ffffff0u); /* root's vtable before the file's start */
    EXPECT_BAD(d, n, "root table out of range");

    memcpy(d, o, n);
    size_t s = vslot(o, root, 2); /* the vtable says subgraphs sit past the table's end */
    d[s] = 0xf0;
    d[s + 1] = 0xff;
    EXPECT_BAD(d, n, "out of range");

    memcpy(d, o, n);
    size_t tv = deref(o, field(o, sg, 0)); /* the tensors vector claims 2^30 elements */
    put32(d, tv, 1u << 30);
    EXPECT_BAD(d, n, "tensors missing or out of range");

    memcpy(d, o, n);
    size_t ov = deref(o, field(o, sg, 3)); /* an operator offset pointing past the end */
    put32(d, ov + 4, (uint32_t)(n - ov));
    EXPECT_BAD(d, n, "out of range");

    /* every operator code becomes MAX_POOL_2D (17), in both code fields */
    memcpy(d, o, n);
    size_t cv = deref(o, field(o, root, 1));
    for (uint32_t i = 0; i < u32at(o, cv); i++) {
        size_t ct = deref(o, cv + 4 + 4 * (size_t)i);
        size_t dep = field(o, ct, 0), bc = field(o, ct, 3);
        if (dep)
            d[dep] = 17;
        if (bc)
            put32(d, bc, 17);
    }
    EXPECT_BAD(d, n, "unsupported operator 'MAX_POOL_2D'");

    /* a tensor dimension of 0, of -1, and dimensions whose product overflows */
    size_t t0 = elem(o, sg, 0, 0), shape = deref(o, field(o, t0, 0));
    CHECK(u32at(o, shape) >= 2);
    memcpy(d, o, n);
    put32(d, shape + 4, 0);
    EXPECT_BAD(d, n, "absurd shape");
    put32(d, shape + 4, 0xffffffffu);
    EXPECT_BAD(d, n, "absurd shape");
    memcpy(d, o, n);
    for (uint32_t i = 0; i < u32at(o, shape); i++)
        put32(d, shape + 4 + 4 * (size_t)i, 1u << 20);
    EXPECT_BAD(d, n, "absurd shape");

    /* a tensor that is not float32: the input becomes INT8 (9) */
    memcpy(d, o, n);
    size_t in_idx = u32at(o, deref(o, field(o, sg, 1)) + 4);
    size_t tin = elem(o, sg, 0, (uint32_t)in_idx), ty = field(o, tin, 1);
    if (ty) {
        d[ty] = 9;
        EXPECT_BAD(d, n, "not a float32");
    }

    /* a constant's buffer 4 bytes shorter than its shape says */
    memcpy(d, o, n);
    size_t bv = 0;
    for (uint32_t i = 0; i < u32at(o, tv) && !bv; i++) {
        size_t t = elem(o, sg, 0, i), bf = field(o, t, 2);
        uint32_t bi = bf ? u32at(o, bf) : 0;
        size_t b = bi ? elem(o, root, 4, bi) : 0, df = b ? field(o, b, 0) : 0;
        if (df && u32at(o, deref(o, df)) > 0)
            bv = deref(o, df);
    }
    CHECK(bv != 0);
    if (bv) {
        put32(d, bv, u32at(o, bv) - 4);
        EXPECT_BAD(d, n, "buffer of");
    }

    /* no file at all */
    struct vt_tflite *m = NULL;
    CHECK_INT(vt_tflite_open("tests/data/no-such.tflite", &m, err, sizeof(err)), VT_ENOTFOUND);
    free(d);
    free(orig);
}
