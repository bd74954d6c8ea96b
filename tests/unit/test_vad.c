/*
 * Tests of the Silero VAD (vad.h) on the real v6.2.0 weights of tests/data/silero-vad (from
 * whisper.cpp): jfk.wav must give upstream's 344 window probabilities and 4 speech segments
 * (whisper.cpp's tests/test-vad.cpp) that cover the speech, with both framings; silence and
 * faint noise give none; whisper.cpp's segment rules on made-up probabilities; half floats;
 * and the model file corrupted in each way a hostile file could be (magic, truncation,
 * absurd counts and sizes, a lying shape, an unknown type, a renamed tensor) must fail with
 * one line of error.
 */
#include "base/util.h"
#include "harness.h"
#include "media/audio.h"
#include "speech/vad.h"
#include "vidtheque.h"

#include <stdint.h>
#include <stdlib.h>

#define VAD_FILE "tests/data/silero-vad/for-tests-silero-v6.2.0-ggml.bin"
#define JFK_FILE "tests/data/speech/jfk.wav"

static struct vt_vad *load_vad(void)
{
    struct vt_vad *vad = NULL;
    char err[512] = "";

    if (vt_vad_open(VAD_FILE, &vad, err, sizeof(err)) != 0)
        fprintf(stderr, "  %s\n", err);
    return vad;
}

VT_TEST(vad_jfk_four_segments)
{
    struct vt_vad *vad = load_vad();
    int16_t *pcm = NULL;
    size_t n = 0;
    char err[512];

    CHECK(vad != NULL);
    CHECK_INT(vt_audio_load(JFK_FILE, &pcm, &n, err, sizeof(err)), 0);
    if (!vad || !pcm)
        goto out;
    CHECK_STR(vt_vad_model(vad), "silero-16k 6.2.0");
    for (int framing = VT_VAD_FRAMING_SILERO; framing <= VT_VAD_FRAMING_WHISPERCPP; framing++) {
        struct vt_vad_params p;
        struct vt_vad_segment *seg = NULL;
        float *probs = NULL;
        size_t n_probs = vt_vad_probs(vad, pcm, n, framing, &probs), n_seg;
        double covered = 0;

        CHECK_INT(n_probs, 344); /* 11 s: upstream's count */
        vt_vad_params_default(&p);
        n_seg = vt_vad_segments(probs, n_probs, &p, &seg);
        CHECK_INT(n_seg, 4);
        if (n_seg == 4) {
            /*
             * "And so, my fellow Americans | ask not | what your country can do for you |
             * ask what you can do for your country": the speech runs from 0.3 to 10.6 s.
             * whisper.cpp's README (examples/vad-speech-segments) prints 0.29-2.21,
             * 3.30-3.77, 4.00-4.35, 5.38-7.65, 8.16-10.59 for this file and model (its
             * second and third segments are one here, as in its test's count of 4).
             */
            static const double want[4][2] = {
                {0.29, 2.21}, {3.30, 4.35}, {5.38, 7.65}, {8.16, 10.59}};

            for (int i = 0; i < 4; i++) {
                CHECK_NEAR(seg[i].start / 16000.0, want[i][0], 0.1);
                CHECK_NEAR(seg[i].end / 16000.0, want[i][1], 0.15);
                CHECK(i == 0 || seg[i].start >= seg[i - 1].end);
                covered += (double)(seg[i].end - seg[i].start) / 16000.0;
            }
        }
        /* speech, not the whole file: ~8.4 s of the 11 */
        CHECK(covered > 7.5 && covered < 9.5);
        free(seg);
        free(probs);
    }
out:
    free(pcm);
    vt_vad_free(vad);
}

VT_TEST(vad_silence_and_noise)
{
    struct vt_vad *vad = load_vad();
    size_t n = 5 * 16000;
    int16_t *pcm = vt_xcalloc(n, sizeof(*pcm));
    uint32_t seed = 12345;

    CHECK(vad != NULL);
    if (!vad)
        goto out;
    for (int pass = 0; pass < 2; pass++) {
        struct vt_vad_params p;
        struct vt_vad_segment *seg = NULL;
        float *probs = NULL, max = 0;
        size_t n_probs = vt_vad_probs(vad, pcm, n, VT_VAD_FRAMING_SILERO, &probs);

        for (size_t i = 0; i < n_probs; i++)
            max = probs[i] > max ? probs[i] : max;
        CHECK(max < 0.5f);
        vt_vad_params_default(&p);
        CHECK_INT(vt_vad_segments(probs, n_probs, &p, &seg), 0);
        CHECK(seg == NULL);
        free(probs);
        /* then faint white noise (a quiet room, about -50 dBFS) */
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            pcm[i] = (int16_t)((int)(seed >> 16 & 0x7ff) - 0x400) / 4;
        }
    }
    /* nothing at all */
    {
        float *probs = NULL;

        CHECK_INT(vt_vad_probs(vad, pcm, 0, VT_VAD_FRAMING_SILERO, &probs), 0);
        free(probs);
    }
out:
    free(pcm);
    vt_vad_free(vad);
}

/* Probabilities: runs of (count, value). */
static size_t fill(float *p, const int (*runs)[2], size_t n_runs, float hi)
{
    size_t n = 0;

    for (size_t r = 0; r < n_runs; r++)
        for (int i = 0; i < runs[r][0]; i++)
            p[n++] = runs[r][1] ? hi : 0.02f;
    return n;
}

VT_TEST(vad_segment_rules)
{
    struct vt_vad_params p;
    struct vt_vad_segment *seg = NULL;
    float probs[200];
    size_t n;

    vt_vad_params_default(&p);
    /* one run of 20 windows (640 ms), padded by 30 ms (480 samples) on both sides */
    {
        static const int r[][2] = {{10, 0}, {20, 1}, {10, 0}};

        n = fill(probs, r, 3, 0.9f);
        CHECK_INT(vt_vad_segments(probs, n, &p, &seg), 1);
        CHECK_INT(seg[0].start, 10 * 512 - 480);
        CHECK_INT(seg[0].end, 30 * 512 + 480);
        free(seg);
    }
    /* a 160 ms burst is shorter than 250 ms: dropped */
    {
        static const int r[][2] = {{10, 0}, {5, 1}, {20, 0}};

        n = fill(probs, r, 3, 0.9f);
        CHECK_INT(vt_vad_segments(probs, n, &p, &seg), 0);
    }
    /* a 96 ms pause is shorter than 100 ms of silence, and a 160 ms one is merged (< 200 ms) */
    {
        static const int r[][2] = {{10, 0}, {20, 1}, {3, 0}, {20, 1}, {5, 0}, {20, 1}, {10, 0}};

        n = fill(probs, r, 7, 0.9f);
        CHECK_INT(vt_vad_segments(probs, n, &p, &seg), 1);
        CHECK_INT(seg[0].start, 10 * 512 - 480);
        CHECK_INT(seg[0].end, 78 * 512 + 480);
        free(seg);
    }
    /* a 320 ms pause splits; below the threshold nothing is speech; speech to the end */
    {
        static const int r[][2] = {{10, 0}, {20, 1}, {10, 0}, {20, 1}};

        n = fill(probs, r, 4, 0.9f);
        CHECK_INT(vt_vad_segments(probs, n, &p, &seg), 2);
        CHECK_INT(seg[0].end, 30 * 512 + 480);
        CHECK_INT(seg[1].start, 40 * 512 - 480);
        CHECK_INT(seg[1].end, 60 * 512);
        free(seg);
        n = fill(probs, r, 4, 0.45f);
        CHECK_INT(vt_vad_segments(probs, n, &p, &seg), 0);
    }
    /* max_speech_s splits 5 s of speech */
    {
        static const int r[][2] = {{10, 0}, {160, 1}, {10, 0}};

        n = fill(probs, r, 3, 0.9f);
        p.max_speech_s = 2.0;
        n = vt_vad_segments(probs, n, &p, &seg);
        CHECK(n >= 3);
        for (size_t i = 0; i < n; i++)
            CHECK(seg[i].end - seg[i].start <= 2 * 16000);
        free(seg);
    }
}

/* Little-endian int32 at b + off. */
static void put_i32(unsigned char *b, size_t off, int32_t v)
{
    for (int i = 0; i < 4; i++)
        b[off + i] = (unsigned char)((uint32_t)v >> (8 * i));
}

VT_TEST(vad_reader_small_file)
{
    /* magic, "t", 1.2.3, window 4, context 0, one layer 1 -> 1 (kernel 1), 1, 1, 1, 1, then
     * a 2x2 f16 tensor "w" and a scalar f32 "b" */
    unsigned char b[] = {0x6c, 0x6d, 0x67, 0x67, 1, 0, 0, 0, 't', 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0,
                         0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,
                         1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,
                         /* w */
                         2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 'w', 0x00,
                         0x3c, 0x00, 0xc0, 0x01, 0x00, 0x00, 0x7c,
                         /* b */
                         0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 'b', 0x00, 0x00, 0x80, 0x3e};
    struct vt_vad_file *f = NULL;
    struct vt_vad *vad = NULL;
    char err[256] = "";
    float v[4];

    CHECK_INT(vt_vad_file_parse(b, sizeof(b), &f, err, sizeof(err)), 0);
    if (!f) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK_STR(f->type, "t");
    CHECK_INT(f->version[2], 3);
    CHECK_INT(f->n_tensors, 2);
    CHECK_INT(f->tensors[0].count, 4);
    CHECK_INT(f->tensors[0].type, VT_GGML_F16);
    vt_ggml_to_f32(&f->tensors[0], v);
    CHECK_NEAR(v[0], 1.0, 0);
    CHECK_NEAR(v[1], -2.0, 0);
    CHECK_NEAR(v[2], 5.9604645e-08, 1e-12); /* the smallest subnormal */
    CHECK(isinf(v[3]) && v[3] > 0);
    CHECK_INT(f->tensors[1].n_dims, 0);
    vt_ggml_to_f32(&f->tensors[1], v);
    CHECK_NEAR(v[0], 0.25, 0);
    CHECK(vt_vad_file_find(f, "b") == &f->tensors[1]);
    CHECK(vt_vad_file_find(f, "c") == NULL);
    /* a ggml file, but not Silero */
    CHECK_INT(vt_vad_load(f, &vad, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "model type 't'") != NULL);
    vt_vad_file_free(f);
    /* the same name twice */
    b[sizeof(b) - 5] = 'w';
    CHECK_INT(vt_vad_file_parse(b, sizeof(b), &f, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "'w' appears twice") != NULL);
}

/* Each corruption of the real file must be refused by the reader or the loader. */
VT_TEST(vad_hostile_files)
{
    struct {
        const char *what;
        size_t off; /* where an int32 is replaced (SIZE_MAX: truncate at value) */
        int32_t value;
        const char *msg; /* in the error */
    } cases[] = {
        {"bad magic", 0, 0x46554747, "bad magic"},
        {"model type length", 4, 1 << 30, "model type length"},
        {"negative type length", 4, -1, "model type length"},
        {"window", 30, 256, "window 256"},
        {"layers", 38, 100, "encoder layers 100"},
        {"layer channels", 42, 0, "encoder in channels"},
        {"layer shape", 42, 130, "encoder layer 0"},
        {"tensor dims", 106, 5, "tensor dimensions 5"},
        {"tensor name length", 110, 100000, "tensor name length"},
        {"tensor type", 114, 2, "tensor type"},
        {"huge size", 122, 0x7fffffff, "tensor size"},
        {"size past the end", 126, 1 << 24, "more bytes than the file has"},
        {"lying shape", 122, 128, ""}, /* 3x128x128: the next header is read from data */
        {"truncated header", SIZE_MAX, 100, "truncated"},
        {"truncated tensor", SIZE_MAX, 800000, "more bytes than the file has"},
        {"header only", SIZE_MAX, 106, "no tensors"},
        {"empty", SIZE_MAX, 0, "bad magic"},
    };
    char *orig = NULL, err[512];
    size_t len = 0;

    CHECK_INT(
        vt_read_file_capped(VAD_FILE, "VAD model", VT_VAD_MAX_FILE, &orig, &len, err, sizeof(err)),
        0);
    if (!orig)
        return;
    for (size_t i = 0; i < VT_ARRAY_LEN(cases); i++) {
        unsigned char *b = vt_xmalloc(len);
        size_t n = len;
        struct vt_vad_file *f = NULL;
        struct vt_vad *vad = NULL;
        int rc;

        memcpy(b, orig, len);
        if (cases[i].off == SIZE_MAX)
            n = (size_t)cases[i].value;
        else
            put_i32(b, cases[i].off, cases[i].value);
        err[0] = 0;
        rc = vt_vad_file_parse(b, n, &f, err, sizeof(err));
        if (rc == 0) {
            rc = vt_vad_load(f, &vad, err, sizeof(err));
            vt_vad_file_free(f);
            vt_vad_free(vad);
        }
        if (rc != VT_EINVAL || !err[0] || strchr(err, '\n') || !strstr(err, cases[i].msg))
            fprintf(stderr, "  case '%s': rc %d, \"%s\"\n", cases[i].what, rc, err);
        CHECK_INT(rc, VT_EINVAL);
        CHECK(err[0] && !strchr(err, '\n'));
        CHECK(strstr(err, cases[i].msg) != NULL);
        free(b);
    }
    /* a shape that still parses but is not Silero's: exchange encoder 0's in and out sizes */
    {
        unsigned char *b = vt_xmalloc(len);
        struct vt_vad_file *f = NULL;
        struct vt_vad *vad = NULL;

        memcpy(b, orig, len);
        put_i32(b, 122, 128);
        put_i32(b, 126, 129);
        CHECK_INT(vt_vad_file_parse(b, len, &f, err, sizeof(err)), 0);
        CHECK_INT(vt_vad_load(f, &vad, err, sizeof(err)), VT_EINVAL);
        CHECK(strstr(err, "'_model.encoder.0.reparam_conv.weight' is [3, 128, 129, 1]") != NULL);
        /* a renamed tensor */
        b[130 + 7] = 'E';
        vt_vad_file_free(f);
        CHECK_INT(vt_vad_file_parse(b, len, &f, err, sizeof(err)), 0);
        CHECK_INT(vt_vad_load(f, &vad, err, sizeof(err)), VT_EINVAL);
        CHECK(strstr(err, "missing") != NULL || strstr(err, "unknown") != NULL);
        vt_vad_file_free(f);
        free(b);
    }
    free(orig);
    CHECK_INT(vt_vad_open("tests/data/no-such-vad.bin", &(struct vt_vad *){NULL}, err, sizeof(err)),
              VT_ENOTFOUND);
}
