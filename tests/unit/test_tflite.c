/*
 * Tests of the TFLite interpreter (tflite.h), the tflite image-embedding backend
 * (embed.h) and the JPEG loader (imgload.h) on the real MobileNet v1 0.25 model of
 * tests/data/mobilenet-v1-0.25-224 (from tensorflow/tflite-support): burger-224.png must
 * be class 934 "cheeseburger" with upstream's p 0.988, the burger's embedding must be
 * close to its mirror image's and far from the sparrow's, and the model file corrupted in
 * each way a hostile file could be (identifier, truncation, offsets, a lying vtable, a
 * vector past the end, an unknown operator, absurd shapes, a short buffer) must fail with
 * its own error; ADD (same shapes, broadcasting, fused activations, a constant operand) is
 * compared with plain loops on a small model built here. The PNG pictures are decoded here with
 * FFmpeg's PNG decoder (FFmpeg is linked already; the library itself reads only JPEG).
 */
#include "base/util.h"
#include "harness.h"
#include "media/imgload.h"
#include "media/imgutil.h"
#include "ml/embed.h"
#include "ml/tflite.h"
#include "vidtheque.h"

#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define MN_DIR  "tests/data/mobilenet-v1-0.25-224"
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
    struct SwsContext *sws =
        sws_getContext(fr->width, fr->height, fr->format, fr->width, fr->height, AV_PIX_FMT_RGB24,
                       SWS_POINT, NULL, NULL, NULL);
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

static void burger_is_cheeseburger(void)
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
    CHECK_STR(emb >= 0 ? vt_tflite_tensor_name(m, emb) : "",
              "MobilenetV1/Logits/AvgPool_1a/AvgPool");
    CHECK_INT(emb >= 0 ? vt_tflite_tensor_count(m, emb) : 0, 256);

    float mean[3], std[3];
    CHECK_INT(vt_tflite_input_norm(m, mean, std), 1); /* from the model's metadata */
    CHECK_NEAR(mean[0], 127.5, 1e-6);
    CHECK_NEAR(std[2], 127.5, 1e-6);
    float *in = vt_xmalloc((size_t)ih * iw * 3 * sizeof(float));
    vt_tflite_image_input(rgb, w, h, (size_t)w * 3, iw, ih, mean, std, in);
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
    CHECK_INT(best, 934);
    /* the label of 934 in labels.txt, stored (not deflated) in the zip after the model */
    char *file = NULL;
    size_t flen;
    const char *label = NULL;
    if (vt_read_file_capped(MN_FILE, "model", 8u << 20, &file, &flen, err, sizeof(err)) == 0) {
        const char *l = memmem(file, flen, "background\ntench", 16);
        for (int line = 0; l && line < 934; line++) {
            l = memchr(l, '\n', flen - (size_t)(l - file));
            l = l ? l + 1 : NULL;
        }
        label = l;
    }
    CHECK(label && strncmp(label, "cheeseburger\n", 13) == 0);
    free(file);
    CHECK_NEAR(p[934], 0.988, 0.01);
    CHECK_NEAR(sum, 1.0, 1e-4);
    vt_tflite_ctx_free(cx);
    free(in);
    (void)c;
out:
    free(rgb);
    vt_tflite_free(m);
}

/* Both builds of the kernels: the AVX2 one (where the CPU has it) and the generic one. */
VT_TEST(tflite_burger_is_cheeseburger)
{
    burger_is_cheeseburger();
    vt_tflite_use_generic_kernels(1);
    burger_is_cheeseburger();
    vt_tflite_use_generic_kernels(0);
}

static struct vt_embed *open_mn(int threads)
{
    struct vt_embed_spec spec = {
        .kind = VT_EMBED_IMAGES, .backend = "tflite", .model = MN_DIR, .threads = threads};
    struct vt_embed *e = NULL;
    char err[512] = "";
    int rc = vt_embed_open(&spec, &e, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  open: %s\n", err);
    CHECK_INT(rc, 0);
    return e;
}

/* The burger's vector v through a JPEG round trip of the burger stays close; JPEGs decode
 * at a reduced size when the model allows */
static void jpeg_round_trip(struct vt_embed *e, const uint8_t *burger, int bw, int bh,
                            const float *v)
{
    char err[256];
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
        CHECK_INT(vt_embed_images(e, &ji, 1, jv, err, sizeof(err)), 0);
        CHECK(dot(v, jv, 256) > 0.95);
    }
    vt_image_buf_release(&b);
    /* decoded at a reduced size for the model: 224 / 2 is too small, so full size; a
     * 1000x900 picture asked for 224x224 decodes at 1/4: 250x225 */
    CHECK_INT(vt_image_load_jpeg_min(jpg, 224, 224, &b, err, sizeof(err)), 0);
    CHECK_INT(b.width, 224);
    vt_image_buf_release(&b);
    uint8_t *big = vt_xcalloc((size_t)1000 * 900 * 3, 1);
    CHECK_INT(vt_img_write_jpeg(jpg, big, 1000, 900, 3000, 80, &bytes, err, sizeof(err)), 0);
    CHECK_INT(vt_image_load_jpeg_min(jpg, 224, 224, &b, err, sizeof(err)), 0);
    CHECK_INT(b.width, 250);
    CHECK_INT(b.height, 225);
    CHECK_INT(b.stride, 750);
    vt_image_buf_release(&b);
    free(big);
    unlink(jpg);
    rmdir(dir);
    free(jpg);
}

VT_TEST(tflite_embedding_mirror_close_sparrow_far)
{
    struct vt_embed *e = open_mn(2);
    int bw, bh, sw, sh;
    uint8_t *burger = load_png(MN_DIR "/burger-224.png", &bw, &bh);
    uint8_t *sparrow = load_png(MN_DIR "/sparrow.png", &sw, &sh);
    CHECK(burger && sparrow);
    if (!e || !burger || !sparrow)
        goto out;
    CHECK_INT(vt_embed_dim(e), 256);
    CHECK_STR(vt_embed_model(e), "tflite mobilenet_v1_0.25_224_1_metadata_1 (256 d, "
                                 "MobilenetV1/Logits/AvgPool_1a/AvgPool)");
    CHECK(strncmp(vt_embed_id(e), "tflite:", 7) == 0);
    CHECK(!vt_embed_has_texts(e));

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
    CHECK_INT(vt_embed_images(e, imgs, 4, v, err, sizeof(err)), 0);
    double mirror_cos = dot(v, v + 256, 256), sparrow_cos = dot(v, v + 512, 256);
    double sum = 0;
    for (int i = 0; i < 256; i++)
        sum += v[i];
    CHECK_NEAR(dot(v, v, 256), 1.0, 1e-5);
    CHECK_NEAR(sum, 0.0, 1e-3);                  /* mean-centred before normalising */
    CHECK_NEAR(dot(v, v + 768, 256), 1.0, 1e-5); /* the same picture on another worker */
    /* measured: mirror 0.965, sparrow -0.04 (the issue asks > 0.95 and < 0.7) */
    CHECK(mirror_cos > 0.95);
    CHECK(sparrow_cos < 0.7);
    if (mirror_cos <= 0.95 || sparrow_cos >= 0.7)
        fprintf(stderr, "  mirror %.4f sparrow %.4f\n", mirror_cos, sparrow_cos);

    jpeg_round_trip(e, burger, bw, bh, v);

    /* the sparrow at half its size (2x2 averages) embeds like the sparrow: block averaging
     * before the bilinear resize keeps large pictures from aliasing */
    int hw = sw / 2, hh = sh / 2;
    uint8_t *half = vt_xmalloc((size_t)hw * hh * 3);
    for (int y = 0; y < hh; y++)
        for (int x = 0; x < hw; x++)
            for (int ch = 0; ch < 3; ch++) {
                const uint8_t *p = sparrow + ((size_t)2 * y * sw + 2 * x) * 3 + ch;
                half[((size_t)y * hw + x) * 3 + ch] =
                    (uint8_t)((p[0] + p[3] + p[(size_t)sw * 3] + p[(size_t)sw * 3 + 3] + 2) / 4);
            }
    struct vt_image hi = {half, hw, hh, (size_t)hw * 3};
    float hv[256];
    CHECK_INT(vt_embed_images(e, &hi, 1, hv, err, sizeof(err)), 0);
    double half_cos = dot(v + 512, hv, 256);
    if (half_cos <= 0.985)
        fprintf(stderr, "  sparrow vs half-size sparrow %.4f\n", half_cos);
    CHECK(half_cos > 0.985); /* 0.995 measured; 0.971 with bilinear alone */
    free(half);

    struct vt_image empty = {burger, 0, 10, 0};
    CHECK_INT(vt_embed_images(e, &empty, 1, v, err, sizeof(err)), VT_EINVAL);
    free(mirror);
out:
    free(burger);
    free(sparrow);
    vt_embed_close(e);
}

VT_TEST(tflite_imgembed_spec_errors)
{
    struct vt_embed *e = NULL;
    char err[512] = "";
    struct vt_embed_spec spec = {.kind = VT_EMBED_IMAGES, .backend = "openai", .model = "clip"};
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    spec = (struct vt_embed_spec){.kind = VT_EMBED_IMAGES, .backend = "onnx", .model = MN_DIR};
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "unknown") != NULL);
    spec = (struct vt_embed_spec){
        .kind = VT_EMBED_IMAGES, .backend = "tflite", .model = "tests/data/no-such-model"};
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_ENOTFOUND);
    spec = (struct vt_embed_spec){
        .kind = VT_EMBED_IMAGES, .backend = "tflite", .model = MN_DIR, .tensor = "nope"};
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "no tensor named 'nope'") != NULL);
    /* a constant is not an embedding */
    spec.tensor = "MobilenetV1/Conv2d_0/weights";
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    /* another tensor by name: the logits before the softmax, 1001 values */
    spec.tensor = "MobilenetV1/Logits/SpatialSqueeze";
    int rc = vt_embed_open(&spec, &e, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  %s\n", err);
    CHECK_INT(rc, 0);
    if (e)
        CHECK_INT(vt_embed_dim(e), 1001);
    vt_embed_close(e);
    CHECK(e == NULL || 1);
}

VT_TEST(tflite_jpeg_hostile)
{
    struct vt_image_buf b;
    char err[256] = "";
    static const uint8_t junk[] = {0xff, 0xd8, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 2};
    CHECK_INT(vt_image_decode_jpeg(junk, sizeof(junk), &b, err, sizeof(err)), VT_EMEDIA);
    CHECK(b.rgb == NULL);
    CHECK_INT(vt_image_decode_jpeg((const uint8_t *)"GIF89a", 6, &b, err, sizeof(err)), VT_EMEDIA);
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

/* The model o of n bytes, copied into d and broken in its framing: the identifier, a
 * truncation, the root table, a lying vtable, vectors and offsets out of range. */
static void hostile_framing(const uint8_t *o, uint8_t *d, size_t n)
{
    char err[512];
    size_t root = deref(o, 0), sg = elem(o, root, 2, 0);

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
}

/* ... in what it computes: an unknown operator, absurd shapes, a tensor not float32 */
static void hostile_operators(const uint8_t *o, uint8_t *d, size_t n)
{
    char err[512];
    size_t root = deref(o, 0), sg = elem(o, root, 2, 0);

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
}

/* ... in its data: a short buffer, broken metadata */
static void hostile_buffers(const uint8_t *o, uint8_t *d, size_t n)
{
    char err[512];
    size_t root = deref(o, 0), sg = elem(o, root, 2, 0);
    size_t tv = deref(o, field(o, sg, 0));

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

    /* the metadata (input normalisation) with a broken identifier */
    memcpy(d, o, n);
    size_t mv = deref(o, field(o, root, 6)), meta = 0;
    for (uint32_t i = 0; i < u32at(o, mv); i++) {
        size_t md = deref(o, mv + 4 + 4 * (size_t)i), nf = field(o, md, 0);
        if (nf && strcmp((const char *)o + deref(o, nf) + 4, "TFLITE_METADATA") == 0) {
            size_t b = elem(o, root, 4, u32at(o, field(o, md, 1)));
            meta = deref(o, field(o, b, 0)) + 4;
        }
    }
    CHECK(meta != 0 && memcmp(o + meta + 4, "M001", 4) == 0);
    if (meta) {
        d[meta + 4] = 'X';
        EXPECT_BAD(d, n, "metadata (input normalisation) out of range");
    }
}

VT_TEST(tflite_hostile_models)
{
    char *orig = NULL, err[512];
    size_t n;
    CHECK_INT(vt_read_file_capped(MN_FILE, "model", 8u << 20, &orig, &n, err, sizeof(err)), 0);
    if (!orig)
        return;
    const uint8_t *o = (const uint8_t *)orig;
    uint8_t *d = vt_xmalloc(n);

    CHECK_INT(parse_err(o, n, err, sizeof(err)), 0);
    hostile_framing(o, d, n);
    hostile_operators(o, d, n);
    hostile_buffers(o, d, n);

    /* no file at all */
    struct vt_tflite *m = NULL;
    CHECK_INT(vt_tflite_open("tests/data/no-such.tflite", &m, err, sizeof(err)), VT_ENOTFOUND);
    free(d);
    free(orig);
}

/* ---- a tiny model built here, checked against plain loops ---- */

/*
 * A forward flatbuffer writer: every object is written after whatever refers to it (so
 * the unsigned offsets are positive), each table's vtable just before it, every field in
 * a 4-byte slot.
 */
struct fbb {
    uint8_t *d;
    size_t n, cap;
};

static size_t fb_alloc(struct fbb *b, size_t n, size_t align)
{
    size_t p = (b->n + align - 1) / align * align;
    if (p + n > b->cap) {
        size_t cap = (p + n) * 2 + 256;
        b->d = vt_xrealloc(b->d, cap);
        memset(b->d + b->cap, 0, cap - b->cap);
        b->cap = cap;
    }
    b->n = p + n;
    return p;
}

static void fb_put16(struct fbb *b, size_t p, uint16_t v)
{
    b->d[p] = (uint8_t)v;
    b->d[p + 1] = (uint8_t)(v >> 8);
}

/* A table of fields 0..nf-1, those in mask present; field i is at t + 4 + 4 * i. */
static size_t fb_tnew(struct fbb *b, int nf, unsigned mask)
{
    size_t vt = fb_alloc(b, 4 + 2 * (size_t)nf, 2);
    size_t t = fb_alloc(b, 4 + 4 * (size_t)nf, 4);
    fb_put16(b, vt, (uint16_t)(4 + 2 * nf));
    fb_put16(b, vt + 2, (uint16_t)(4 + 4 * nf));
    for (int i = 0; i < nf; i++)
        fb_put16(b, vt + 4 + 2 * (size_t)i, mask & (1u << i) ? (uint16_t)(4 + 4 * i) : 0);
    put32(b->d, t, (uint32_t)(t - vt));
    return t;
}

static void fb_tset(struct fbb *b, size_t t, int i, uint32_t v)
{
    put32(b->d, t + 4 + 4 * (size_t)i, v);
}

/* Point the uoffset at position at to target (written later, so after it). */
static void fb_point(struct fbb *b, size_t at, size_t target)
{
    put32(b->d, at, (uint32_t)(target - at));
}

static size_t fb_vnew(struct fbb *b, uint32_t count, size_t elem)
{
    size_t v = fb_alloc(b, 4 + count * elem, 16);
    put32(b->d, v, count);
    return v;
}

static size_t fb_ints(struct fbb *b, const int *v, int n)
{
    size_t p = fb_vnew(b, (uint32_t)n, 4);
    for (int i = 0; i < n; i++)
        put32(b->d, p + 4 + 4 * (size_t)i, (uint32_t)v[i]);
    return p;
}

struct tiny_tensor {
    const char *name;
    int rank, dims[4];
    const float *data; /* NULL: an activation */
};

struct tiny_op {
    int code, opt_type;
    int nin, in[3], out;
    int opt[7]; /* options as 4-byte fields, -1: absent; opt_float: softmax beta */
    int nopt;
    float beta;
};

static size_t tiny_count(const struct tiny_tensor *t)
{
    size_t c = 1;
    for (int i = 0; i < t->rank; i++)
        c *= (size_t)t->dims[i];
    return c;
}

/* TFLite metadata ("M001") whose input normalisation is mean norm[0], std norm[1]. */
static uint8_t *tiny_metadata(const float norm[2], size_t *len)
{
    struct fbb b = {0};
    fb_alloc(&b, 8, 4);
    memcpy(b.d + 4, "M001", 4);
    size_t root = fb_tnew(&b, 4, 0x8);
    fb_point(&b, 0, root);
    size_t v = fb_vnew(&b, 1, 4);
    fb_point(&b, root + 4 + 12, v);
    size_t sg = fb_tnew(&b, 3, 0x4);
    fb_point(&b, v + 4, sg);
    v = fb_vnew(&b, 1, 4);
    fb_point(&b, sg + 4 + 8, v);
    size_t tm = fb_tnew(&b, 5, 0x10);
    fb_point(&b, v + 4, tm);
    v = fb_vnew(&b, 1, 4);
    fb_point(&b, tm + 4 + 16, v);
    size_t pu = fb_tnew(&b, 2, 0x3);
    fb_point(&b, v + 4, pu);
    b.d[pu + 4] = 1; /* NormalizationOptions */
    size_t no = fb_tnew(&b, 2, 0x3);
    fb_point(&b, pu + 8, no);
    for (int i = 0; i < 2; i++) {
        v = fb_vnew(&b, 1, 4);
        memcpy(b.d + v + 4, &norm[i], 4);
        fb_point(&b, no + 4 + 4 * (size_t)i, v);
    }
    *len = b.n;
    return b.d;
}

/* The subgraph sg's operators: op i uses operator code i */
static void tiny_operators(struct fbb *b, size_t sg, const struct tiny_op *ops, int nops)
{
    size_t ov = fb_vnew(b, (uint32_t)nops, 4);
    fb_point(b, sg + 16, ov);
    for (int i = 0; i < nops; i++) {
        const struct tiny_op *o = &ops[i];
        size_t t = fb_tnew(b, 5, o->opt_type ? 0x1f : 0x7);
        fb_point(b, ov + 4 + 4 * (size_t)i, t);
        fb_tset(b, t, 0, (uint32_t)i);
        fb_point(b, t + 8, fb_ints(b, o->in, o->nin));
        fb_point(b, t + 12, fb_ints(b, &o->out, 1));
        if (o->opt_type) {
            b->d[t + 16] = (uint8_t)o->opt_type;
            unsigned mask = 0;
            for (int j = 0; j < o->nopt; j++)
                mask |= o->opt[j] >= 0 ? 1u << j : 0;
            size_t ot = fb_tnew(b, o->nopt, mask);
            fb_point(b, t + 20, ot);
            for (int j = 0; j < o->nopt; j++)
                fb_tset(b, ot, j, (uint32_t)o->opt[j]);
            if (o->opt_type == 9) {
                uint32_t u;
                memcpy(&u, &o->beta, 4);
                fb_tset(b, ot, 0, u);
            }
        }
    }
}

static uint8_t *tiny_build(const struct tiny_tensor *ts, int nt, const struct tiny_op *ops,
                           int nops, int input, int output, const float *norm, size_t *len)
{
    struct fbb b = {0};
    fb_alloc(&b, 8, 4);
    memcpy(b.d + 4, "TFL3", 4);
    size_t model = fb_tnew(&b, 7, norm ? 0x57 : 0x17);
    fb_point(&b, 0, model);
    fb_tset(&b, model, 0, 3);
    /* operator codes: one per op, in op order */
    size_t codes = fb_vnew(&b, (uint32_t)nops, 4);
    fb_point(&b, model + 4 + 4, codes);
    for (int i = 0; i < nops; i++) {
        size_t c = fb_tnew(&b, 4, 0xd);
        fb_point(&b, codes + 4 + 4 * (size_t)i, c);
        b.d[c + 4] = (uint8_t)ops[i].code;
        fb_tset(&b, c, 2, 1);
        fb_tset(&b, c, 3, (uint32_t)ops[i].code);
    }
    size_t sgs = fb_vnew(&b, 1, 4);
    fb_point(&b, model + 4 + 8, sgs);
    size_t sg = fb_tnew(&b, 4, 0xf);
    fb_point(&b, sgs + 4, sg);
    size_t tv = fb_vnew(&b, (uint32_t)nt, 4);
    fb_point(&b, sg + 4, tv);
    for (int i = 0; i < nt; i++) {
        size_t t = fb_tnew(&b, 4, 0xf);
        fb_point(&b, tv + 4 + 4 * (size_t)i, t);
        fb_point(&b, t + 4, fb_ints(&b, ts[i].dims, ts[i].rank));
        fb_tset(&b, t, 2, (uint32_t)i + 1); /* buffer i + 1; buffer 0 is the empty one */
        size_t nl = strlen(ts[i].name);
        size_t s = fb_vnew(&b, (uint32_t)nl, 1);
        memcpy(b.d + s + 4, ts[i].name, nl);
        fb_alloc(&b, 1, 1); /* the NUL */
        fb_point(&b, t + 16, s);
    }
    fb_point(&b, sg + 8, fb_ints(&b, &input, 1));
    fb_point(&b, sg + 12, fb_ints(&b, &output, 1));
    tiny_operators(&b, sg, ops, nops);
    if (norm) { /* metadata entry "TFLITE_METADATA" in buffer nt + 1 */
        size_t mv = fb_vnew(&b, 1, 4);
        fb_point(&b, model + 4 + 24, mv);
        size_t md = fb_tnew(&b, 2, 0x3);
        fb_point(&b, mv + 4, md);
        size_t s = fb_vnew(&b, 15, 1);
        memcpy(b.d + s + 4, "TFLITE_METADATA", 16);
        fb_alloc(&b, 1, 1);
        fb_point(&b, md + 4, s);
        fb_tset(&b, md, 1, (uint32_t)nt + 1);
    }
    size_t bv = fb_vnew(&b, (uint32_t)nt + 1 + (norm != NULL), 4);
    fb_point(&b, model + 4 + 16, bv);
    size_t empty = fb_tnew(&b, 1, 0);
    fb_point(&b, bv + 4, empty);
    for (int i = 0; i < nt; i++) {
        size_t bt = fb_tnew(&b, 1, ts[i].data ? 1 : 0);
        fb_point(&b, bv + 8 + 4 * (size_t)i, bt);
        if (ts[i].data) {
            size_t n = tiny_count(&ts[i]) * 4;
            size_t dv = fb_vnew(&b, (uint32_t)n, 1);
            memcpy(b.d + dv + 4, ts[i].data, n);
            fb_point(&b, bt + 4, dv);
        }
    }
    if (norm) {
        size_t ml;
        uint8_t *meta = tiny_metadata(norm, &ml);
        size_t bt = fb_tnew(&b, 1, 1);
        fb_point(&b, bv + 8 + 4 * (size_t)nt, bt);
        size_t dv = fb_vnew(&b, (uint32_t)ml, 1);
        memcpy(b.d + dv + 4, meta, ml);
        fb_point(&b, bt + 4, dv);
        free(meta);
    }
    *len = b.n;
    return b.d;
}

/* Plain TFLite semantics, one loop nest per operator. */
static void ref_conv(const float *in, int ih, int iw, int ic, const float *w, const float *bias,
                     int kh, int kw, int sh, int sw, int pt, int pl, int oh, int ow, int oc,
                     int mult, int depthwise, int act, float *out)
{
    for (int y = 0; y < oh; y++)
        for (int x = 0; x < ow; x++)
            for (int o = 0; o < oc; o++) {
                double s = bias[o];
                for (int ky = 0; ky < kh; ky++)
                    for (int kx = 0; kx < kw; kx++) {
                        int iy = y * sh - pt + ky, ix = x * sw - pl + kx;
                        if (iy < 0 || iy >= ih || ix < 0 || ix >= iw)
                            continue;
                        if (depthwise)
                            s += in[((size_t)iy * iw + ix) * ic + o / mult] *
                                 w[((size_t)ky * kw + kx) * oc + o];
                        else
                            for (int c = 0; c < ic; c++)
                                s += in[((size_t)iy * iw + ix) * ic + c] *
                                     w[(((size_t)o * kh + ky) * kw + kx) * ic + c];
                    }
                if (act == 1 && s < 0)
                    s = 0;
                if (act == 3)
                    s = s < 0 ? 0 : s > 6 ? 6 : s;
                out[((size_t)y * ow + x) * oc + o] = (float)s;
            }
}

static void fill(float *v, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (float)((int)(seed >> 16 & 1023) - 512) / 256.0f;
    }
}

/* The tiny network: 9x10x3 -> conv 3x3/2 SAME RELU6 (8) -> depthwise 3x3/1 SAME RELU ->
 * depthwise 3x3 VALID x2 (16) -> conv 1x1 (20) -> avg pool 2x2/2 SAME -> reshape [1, 80]
 * -> softmax beta 0.5. Odd paddings, row and column tails of the GEMM, both depthwise
 * paths and partial pooling windows are all on the way. */
static float w0[8 * 3 * 3 * 3], b0[8], w1[9 * 8], b1[8], w2[9 * 16], b2[16], w3[20 * 16], b3[20];

static uint8_t *tiny_model(const float *norm, size_t *len)
{
    fill(w0, VT_ARRAY_LEN(w0), 1);
    fill(b0, 8, 2);
    fill(w1, VT_ARRAY_LEN(w1), 3);
    fill(b1, 8, 4);
    fill(w2, VT_ARRAY_LEN(w2), 5);
    fill(b2, 16, 6);
    fill(w3, VT_ARRAY_LEN(w3), 7);
    fill(b3, 20, 8);
    const struct tiny_tensor ts[] = {
        {"input", 4, {1, 9, 10, 3}, NULL},
        {"w0", 4, {8, 3, 3, 3}, w0},
        {"b0", 1, {8}, b0},
        {"a0", 4, {1, 5, 5, 8}, NULL},
        {"w1", 4, {1, 3, 3, 8}, w1},
        {"b1", 1, {8}, b1},
        {"a1", 4, {1, 5, 5, 8}, NULL},
        {"w2", 4, {1, 3, 3, 16}, w2},
        {"b2", 1, {16}, b2},
        {"a2", 4, {1, 3, 3, 16}, NULL},
        {"w3", 4, {20, 1, 1, 16}, w3},
        {"b3", 1, {20}, b3},
        {"a3", 4, {1, 3, 3, 20}, NULL},
        {"pool", 4, {1, 2, 2, 20}, NULL},
        {"flat", 2, {1, 80}, NULL},
        {"prob", 2, {1, 80}, NULL},
    };
    const struct tiny_op ops[] = {
        {3, 1, 3, {0, 1, 2}, 3, {0, 2, 2, 3, 1, 1}, 6, 0},
        {4, 2, 3, {3, 4, 5}, 6, {0, 1, 1, 1, 1, 1, 1}, 7, 0},
        {4, 2, 3, {6, 7, 8}, 9, {1, 1, 1, 2, 0, 1, 1}, 7, 0},
        {3, 1, 3, {9, 10, 11}, 12, {1, 1, 1, 0, 1, 1}, 6, 0},
        {1, 5, 1, {12}, 13, {0, 2, 2, 2, 2, 0}, 6, 0},
        {22, 0, 1, {13}, 14, {0}, 0, 0},
        {25, 9, 1, {14}, 15, {0}, 1, 0.5f},
    };
    return tiny_build(ts, (int)VT_ARRAY_LEN(ts), ops, (int)VT_ARRAY_LEN(ops), 0, 15, norm, len);
}

/* The tiny network's activations by plain loops, from the input filled with seed 9 */
struct tiny_ref {
    float in[9 * 10 * 3], a0[5 * 5 * 8], a1[5 * 5 * 8], a2[3 * 3 * 16], a3[3 * 3 * 20],
        pool[2 * 2 * 20], prob[80];
};

static void tiny_reference(struct tiny_ref *r)
{
    float *in = r->in, *a0 = r->a0, *a1 = r->a1, *a2 = r->a2, *a3 = r->a3, *pool = r->pool,
          *prob = r->prob;

    fill(in, VT_ARRAY_LEN(r->in), 9);
    /* SAME 3x3 stride 2: 9 -> 5 rows (padding 1 on top), 10 -> 5 columns (0 on the left) */
    ref_conv(in, 9, 10, 3, w0, b0, 3, 3, 2, 2, 1, 0, 5, 5, 8, 1, 0, 3, a0);
    ref_conv(a0, 5, 5, 8, w1, b1, 3, 3, 1, 1, 1, 1, 5, 5, 8, 1, 1, 1, a1);
    ref_conv(a1, 5, 5, 8, w2, b2, 3, 3, 1, 1, 0, 0, 3, 3, 16, 2, 1, 0, a2);
    ref_conv(a2, 3, 3, 16, w3, b3, 1, 1, 1, 1, 0, 0, 3, 3, 20, 1, 0, 0, a3);
    for (int y = 0; y < 2; y++) /* SAME 2x2 stride 2 on 3x3: the last windows half outside */
        for (int x = 0; x < 2; x++)
            for (int c = 0; c < 20; c++) {
                double s = 0;
                int n = 0;
                for (int iy = 2 * y; iy < 2 * y + 2 && iy < 3; iy++)
                    for (int ix = 2 * x; ix < 2 * x + 2 && ix < 3; ix++, n++)
                        s += a3[(iy * 3 + ix) * 20 + c];
                pool[(y * 2 + x) * 20 + c] = (float)(s / n);
            }
    double mx = -1e30, sum = 0;
    for (int i = 0; i < 80; i++)
        mx = pool[i] > mx ? pool[i] : mx;
    for (int i = 0; i < 80; i++)
        sum += prob[i] = (float)exp(0.5 * (pool[i] - mx));
    for (int i = 0; i < 80; i++)
        prob[i] = (float)(prob[i] / sum);
}

/* Run the tiny model m and compare each activation with plain loops' */
static void tiny_run_matches(struct vt_tflite *m)
{
    struct tiny_ref r;
    tiny_reference(&r);
    struct vt_tflite_ctx *cx = vt_tflite_ctx_new(m);
    vt_tflite_run(cx, r.in, -1);
    const struct {
        const char *name;
        const float *want;
        int n;
    } cmp[] = {{"a0", r.a0, 200}, {"a1", r.a1, 200},    {"a2", r.a2, 144},
               {"a3", r.a3, 180}, {"pool", r.pool, 80}, {"prob", r.prob, 80}};
    for (size_t k = 0; k < VT_ARRAY_LEN(cmp); k++) {
        int t = vt_tflite_tensor_find(m, cmp[k].name);
        CHECK(t >= 0);
        if (t < 0)
            continue;
        const float *got = vt_tflite_tensor_data(cx, t);
        double worst = 0;
        for (int i = 0; i < cmp[k].n; i++) {
            double dd = fabs(got[i] - cmp[k].want[i]);
            worst = dd > worst ? dd : worst;
        }
        if (worst > 1e-4)
            fprintf(stderr, "  %s differs by %g\n", cmp[k].name, worst);
        CHECK(worst <= 1e-4);
    }
    vt_tflite_ctx_free(cx);
}

/* a consistent model whose activations would take 2.1 GB: refused at parse time */
static void huge_activations_refused(void)
{
    char err[512] = "";
    size_t len;
    uint8_t *d;
    static float wb[8 * 3 + 8];
    const struct tiny_tensor big[] = {
        {"input", 4, {1, 4096, 4096, 3}, NULL},
        {"w", 4, {8, 1, 1, 3}, wb},
        {"b", 1, {8}, wb + 24},
        {"out", 4, {1, 4096, 4096, 8}, NULL},
    };
    const struct tiny_op conv = {3, 1, 3, {0, 1, 2}, 3, {1, 1, 1, 0, 1, 1}, 6, 0};
    d = tiny_build(big, 4, &conv, 1, 0, 3, NULL, &len);
    EXPECT_BAD(d, len, "activations exceed");
    free(d);
}

/* with metadata saying mean 0, std 255 (a [0, 1] model): one value for all channels */
static void tiny_metadata_norm(const char *seed)
{
    char err[512] = "";
    size_t len;
    float mean[3], std[3];
    const float norm[2] = {0.0f, 255.0f};
    uint8_t *d = tiny_model(norm, &len);
    if (seed) {
        char *p = vt_xasprintf("%s-metadata", seed), e[256];
        vt_write_file_atomic(p, d, len, e, sizeof(e));
        free(p);
    }
    struct vt_tflite *m = NULL;
    int rc = vt_tflite_parse(d, len, &m, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  parse: %s\n", err);
    CHECK_INT(rc, 0);
    if (m) {
        CHECK_INT(vt_tflite_input_norm(m, mean, std), 1);
        CHECK_NEAR(mean[2], 0.0, 1e-9);
        CHECK_NEAR(std[1], 255.0, 1e-9);
    }
    vt_tflite_free(m);
    /* ... and a std of 0 is refused */
    size_t z = 0;
    for (size_t i = len - 4; i > 0 && !z; i--) {
        float f;
        memcpy(&f, d + i, 4);
        if (f == 255.0f)
            z = i;
    }
    CHECK(z != 0);
    memset(d + z, 0, 4);
    EXPECT_BAD(d, len, "metadata (input normalisation) out of range");
    free(d);
}

static void tiny_model_matches_plain_loops(void)
{
    size_t len;
    uint8_t *d = tiny_model(NULL, &len);
    const char *seed = getenv("VT_TFLITE_WRITE_SEED"); /* makes tests/fuzz/corpus_tflite */
    if (seed) {
        char e[256];
        vt_write_file_atomic(seed, d, len, e, sizeof(e));
    }
    struct vt_tflite *m = NULL;
    char err[512] = "";
    int rc = vt_tflite_parse(d, len, &m, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  parse: %s\n", err);
    CHECK_INT(rc, 0);
    if (!m) {
        free(d);
        return;
    }
    float mean[3], std[3];
    CHECK_INT(vt_tflite_input_norm(m, mean, std), 0); /* no metadata: [-1, 1] */
    CHECK_NEAR(mean[1], 127.5, 1e-6);
    tiny_run_matches(m);
    /* back from the softmax, past the reshape: the pool is the last layer, a3 its input */
    CHECK_INT(vt_tflite_default_embedding(m), vt_tflite_tensor_find(m, "a3"));
    vt_tflite_free(m);
    free(d);

    huge_activations_refused();
    tiny_metadata_norm(seed);
}

VT_TEST(tflite_tiny_model_matches_plain_loops)
{
    tiny_model_matches_plain_loops();
    vt_tflite_use_generic_kernels(1);
    tiny_model_matches_plain_loops();
    vt_tflite_use_generic_kernels(0);
}

/* ---- ADD: MobileNet v2's residual connections, and TFLite's broadcasting ---- */

/* Plain broadcasting: out[i] = act(a[ia] + b[ib]), shapes right-aligned, 4-D out. */
static void ref_add(const float *a, const int *ad, int ar, const float *b, const int *bd, int br,
                    const int *od, int act, float *out)
{
    int idx[4];
    for (idx[0] = 0; idx[0] < od[0]; idx[0]++)
        for (idx[1] = 0; idx[1] < od[1]; idx[1]++)
            for (idx[2] = 0; idx[2] < od[2]; idx[2]++)
                for (idx[3] = 0; idx[3] < od[3]; idx[3]++) {
                    size_t ia = 0, ib = 0, io = 0;
                    for (int k = 0; k < 4; k++) {
                        io = io * (size_t)od[k] + (size_t)idx[k];
                        if (k >= 4 - ar) {
                            int d = ad[k - (4 - ar)];
                            ia = ia * (size_t)d + (size_t)(d == 1 ? 0 : idx[k]);
                        }
                        if (k >= 4 - br) {
                            int d = bd[k - (4 - br)];
                            ib = ib * (size_t)d + (size_t)(d == 1 ? 0 : idx[k]);
                        }
                    }
                    double s = (double)a[ia] + (double)b[ib];
                    if (act == 1 && s < 0)
                        s = 0;
                    if (act == 2)
                        s = s < -1 ? -1 : s > 1 ? 1 : s;
                    if (act == 3)
                        s = s < 0 ? 0 : s > 6 ? 6 : s;
                    out[io] = (float)s;
                }
}

static float aw0[6 * 3], ab0[6], aw1[9 * 6], ab1[6], ak6[6], ak4[4], ak5[5];

/* input [1,4,5,3] -> c0 = conv 1x1 (6) -> d1 = depthwise 3x3 SAME -> s1 = ADD(c0, d1) RELU6
 * (same shapes) -> s2 = ADD(s1, const [6]) RELU (per channel) -> s3 = ADD(const [4,1,1],
 * s2) (the constant first, broadcast over two axes) -> p = avg pool 1x5 VALID [1,4,1,6]
 * -> s4 = ADD(p, const [1,1,5,1]) RELU_N1_TO_1 (both sides broadcast) */
static const struct tiny_tensor add_ts[] = {
    {"input", 4, {1, 4, 5, 3}, NULL}, {"w0", 4, {6, 1, 1, 3}, aw0},  {"b0", 1, {6}, ab0},
    {"c0", 4, {1, 4, 5, 6}, NULL},    {"w1", 4, {1, 3, 3, 6}, aw1},  {"b1", 1, {6}, ab1},
    {"d1", 4, {1, 4, 5, 6}, NULL},    {"s1", 4, {1, 4, 5, 6}, NULL}, {"k6", 1, {6}, ak6},
    {"s2", 4, {1, 4, 5, 6}, NULL},    {"k4", 3, {4, 1, 1}, ak4},     {"s3", 4, {1, 4, 5, 6}, NULL},
    {"p", 4, {1, 4, 1, 6}, NULL},     {"k5", 4, {1, 1, 5, 1}, ak5},  {"s4", 4, {1, 4, 5, 6}, NULL},
};
#define ADD_OP(a, b, out, act)                                                                     \
    {                                                                                              \
        0, 11, 2, {a, b}, out, {act}, 1, 0                                                         \
    }
static const struct tiny_op add_ops[] = {
    {3, 1, 3, {0, 1, 2}, 3, {1, 1, 1, 0, 1, 1}, 6, 0},
    {4, 2, 3, {3, 4, 5}, 6, {0, 1, 1, 1, 0, 1, 1}, 7, 0},
    ADD_OP(3, 6, 7, 3),
    ADD_OP(7, 8, 9, 1),
    ADD_OP(10, 9, 11, 0),
    {1, 5, 1, {11}, 12, {1, 1, 1, 5, 1, 0}, 6, 0},
    ADD_OP(12, 13, 14, 2),
};

/* hostile ADDs: each fails with its own line */
static void hostile_adds(void)
{
    char err[512] = "";
    size_t len;
    uint8_t *d;
    struct tiny_tensor ts[VT_ARRAY_LEN(add_ts) + 2];
    struct tiny_op ops[VT_ARRAY_LEN(add_ops)];
    const struct {
        int op;             /* the op changed */
        struct tiny_op set; /* into this */
        int tensor, rank, dims[4];
        const char *what;
    } bad[] = {
        /* [1,4,5,6] + [5]: the last axes differ */
        {3, ADD_OP(7, 8, 9, 1), 8, 1, {5}, "shapes do not broadcast"},
        /* a broadcast into an output of another shape */
        {3, ADD_OP(7, 8, 9, 1), 9, 4, {1, 4, 5, 1}, "shapes do not broadcast"},
        /* the output's rank is not the larger input's */
        {4, ADD_OP(10, 9, 11, 0), 11, 3, {4, 5, 6}, "of ranks 3 and 4 writes a tensor of rank 3"},
        /* a fused TANH (4) is not supported */
        {2, ADD_OP(3, 6, 7, 4), -1, 0, {0}, "fused activation 4 unsupported"},
        /* three inputs */
        {2, {0, 11, 3, {3, 6, 6}, 7, {0}, 1, 0}, -1, 0, {0}, "ADD with 3 inputs"},
        /* one input */
        {2, {0, 11, 1, {3}, 7, {0}, 1, 0}, -1, 0, {0}, "ADD with 1 inputs"},
        /* the second operand is made later */
        {2, ADD_OP(3, 9, 7, 0), -1, 0, {0}, "reads tensor 's2' before anything writes it"},
        /* the output is one of its inputs */
        {2, ADD_OP(3, 6, 6, 0), -1, 0, {0}, "not a fresh activation"},
        /* the options of a convolution */
        {2, {0, 1, 2, {3, 6}, 7, {0}, 1, 0}, -1, 0, {0}, "ADD with options of type 1"},
        /* a second input past the tensors */
        {2, ADD_OP(3, 99, 7, 0), -1, 0, {0}, "input 1 is tensor 99"},
    };
    for (size_t k = 0; k < VT_ARRAY_LEN(bad); k++) {
        memcpy(ts, add_ts, sizeof(add_ts));
        memcpy(ops, add_ops, sizeof(add_ops));
        ops[bad[k].op] = bad[k].set;
        static float big[4 * 5 * 6];
        if (bad[k].tensor >= 0) {
            struct tiny_tensor *t = &ts[bad[k].tensor];
            t->rank = bad[k].rank;
            memcpy(t->dims, bad[k].dims, sizeof(t->dims));
            if (t->data)
                t->data = big;
        }
        d = tiny_build(ts, (int)VT_ARRAY_LEN(add_ts), ops, (int)VT_ARRAY_LEN(ops), 0, 14, NULL,
                       &len);
        EXPECT_BAD(d, len, bad[k].what);
        free(d);
    }
}

/* Run the ADD model m with each kind of kernel and compare with plain loops */
static void add_matches_reference(struct vt_tflite *m)
{
    float in[4 * 5 * 3], c0[120], d1[120], s1[120], s2[120], s3[120], p[24], s4[120];
    const int o4[4] = {1, 4, 5, 6}, d6[1] = {6}, d4[3] = {4, 1, 1}, dp[4] = {1, 4, 1, 6},
              d5[4] = {1, 1, 5, 1};
    fill(in, VT_ARRAY_LEN(in), 18);
    ref_conv(in, 4, 5, 3, aw0, ab0, 1, 1, 1, 1, 0, 0, 4, 5, 6, 1, 0, 0, c0);
    ref_conv(c0, 4, 5, 6, aw1, ab1, 3, 3, 1, 1, 1, 1, 4, 5, 6, 1, 1, 0, d1);
    ref_add(c0, o4, 4, d1, o4, 4, o4, 3, s1);
    ref_add(s1, o4, 4, ak6, d6, 1, o4, 1, s2);
    ref_add(ak4, d4, 3, s2, o4, 4, o4, 0, s3);
    for (int y = 0; y < 4; y++)
        for (int c = 0; c < 6; c++) {
            double s = 0;
            for (int x = 0; x < 5; x++)
                s += s3[(y * 5 + x) * 6 + c];
            p[y * 6 + c] = (float)(s / 5);
        }
    ref_add(p, dp, 4, ak5, d5, 4, o4, 2, s4);
    const struct {
        const char *name;
        const float *want;
    } cmp[] = {{"s1", s1}, {"s2", s2}, {"s3", s3}, {"p", p}, {"s4", s4}};
    for (int generic = 0; generic < 2; generic++) {
        vt_tflite_use_generic_kernels(generic);
        struct vt_tflite_ctx *cx = vt_tflite_ctx_new(m);
        vt_tflite_run(cx, in, -1);
        for (size_t k = 0; k < VT_ARRAY_LEN(cmp); k++) {
            int t = vt_tflite_tensor_find(m, cmp[k].name);
            CHECK(t >= 0);
            if (t < 0)
                continue;
            size_t n = vt_tflite_tensor_count(m, t);
            const float *got = vt_tflite_tensor_data(cx, t);
            double worst = 0;
            int clamped = 0;
            for (size_t i = 0; i < n; i++) {
                double dd = fabs(got[i] - cmp[k].want[i]);
                worst = dd > worst ? dd : worst;
                clamped += cmp[k].want[i] == 6.0f || cmp[k].want[i] == 0.0f ||
                           fabs(cmp[k].want[i]) == 1.0f;
            }
            if (worst > 1e-4)
                fprintf(stderr, "  %s differs by %g\n", cmp[k].name, worst);
            CHECK(worst <= 1e-4);
            if (k == 0 || k == 1 || k == 4)
                CHECK(clamped > 0); /* the fused activations did something */
        }
        /* stopping at an ADD leaves the ops after it unrun */
        vt_tflite_ctx_free(cx);
    }
    vt_tflite_use_generic_kernels(0);
}

VT_TEST(tflite_add_broadcasts_as_tflite)
{
    fill(aw0, VT_ARRAY_LEN(aw0), 11);
    fill(ab0, 6, 12);
    fill(aw1, VT_ARRAY_LEN(aw1), 13);
    fill(ab1, 6, 14);
    fill(ak6, 6, 15);
    fill(ak4, 4, 16);
    fill(ak5, 5, 17);
    size_t len;
    uint8_t *d = tiny_build(add_ts, (int)VT_ARRAY_LEN(add_ts), add_ops, (int)VT_ARRAY_LEN(add_ops),
                            0, 14, NULL, &len);
    const char *seed = getenv("VT_TFLITE_WRITE_SEED");
    if (seed) {
        char *p = vt_xasprintf("%s-add", seed), e[256];
        vt_write_file_atomic(p, d, len, e, sizeof(e));
        free(p);
    }
    struct vt_tflite *m = NULL;
    char err[512] = "";
    int rc = vt_tflite_parse(d, len, &m, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  parse: %s\n", err);
    CHECK_INT(rc, 0);
    if (m) {
        add_matches_reference(m);
        /* the embedding by default: the input of the last layer that computes */
        CHECK_INT(vt_tflite_default_embedding(m), vt_tflite_tensor_find(m, "p"));
        CHECK(vt_tflite_macs(m) > 0);
    }
    vt_tflite_free(m);
    free(d);
    hostile_adds();
}
