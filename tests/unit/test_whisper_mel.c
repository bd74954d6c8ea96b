/*
 * Tests of Whisper's log-mel front end (whisper_mel.h) against PyTorch: the spectrogram of
 * tests/data/speech/jfk.wav with the real filterbanks (tests/data/whisper-assets) must
 * match what tests/tools/whisper_mel_ref.py computed with torch.stft
 * (tests/data/whisper-mel) to 1e-4, for 80 bins as transcribe computes it and for 128
 * bins with the reflection at both ends; the FFT must match a direct DFT; short, empty
 * and silent audio; and filterbank files broken in each way a hostile one could be
 * (truncated, corrupted, a wrong shape, type, order, values) refused with one line.
 */
#include "base/util.h"
#include "harness.h"
#include "media/audio.h"
#include "speech/npz.h"
#include "speech/whisper_mel.h"
#include "vidtheque.h"

#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#define NPZ_FILE "tests/data/whisper-assets/mel_filters.npz"
#define JFK_FILE "tests/data/speech/jfk.wav"
#define REF_DIR  "tests/data/whisper-mel/"
#define TOL      1e-4

static struct vt_whisper_mel *load_mel(int n_mels)
{
    struct vt_whisper_mel *m = NULL;
    char err[512] = "";

    if (vt_whisper_mel_open(NPZ_FILE, n_mels, &m, err, sizeof(err)) != 0)
        fprintf(stderr, "  %s\n", err);
    return m;
}

/* jfk.wav as whisper's load_audio gives it: 16-bit samples / 32768. */
static float *load_jfk(size_t *n)
{
    int16_t *pcm = NULL;
    float *x = NULL;
    char err[512];

    *n = 0;
    if (vt_audio_load(JFK_FILE, &pcm, n, err, sizeof(err)) != 0) {
        fprintf(stderr, "  %s\n", err);
        return NULL;
    }
    x = malloc(*n * sizeof(float));
    for (size_t i = 0; x && i < *n; i++)
        x[i] = pcm[i] / 32768.0f;
    free(pcm);
    return x;
}

/* A reference file of rows x cols floats (little-endian, as this machine). */
static float *load_ref(const char *name, size_t rows, size_t cols)
{
    char path[256], err[512], *data = NULL;
    size_t len = 0;

    snprintf(path, sizeof(path), REF_DIR "%s", name);
    if (vt_read_file_capped(path, "reference", 1u << 24, &data, &len, err, sizeof(err)) != 0) {
        fprintf(stderr, "  %s\n", err);
        return NULL;
    }
    if (len != rows * cols * sizeof(float)) {
        fprintf(stderr, "  %s: %zu bytes, expected %zu\n", path, len, rows * cols * 4);
        free(data);
        return NULL;
    }
    return (float *)data;
}

/* max |got[i][first + j] - want[i][j]| over rows x cols, got's rows of got_stride. */
static double max_diff(const float *got, size_t got_stride, size_t first, const float *want,
                       size_t rows, size_t cols)
{
    double d = 0;

    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            d = fmax(d, fabs((double)got[i * got_stride + first + j] - want[i * cols + j]));
    return d;
}

VT_TEST(whisper_mel_jfk_80_transcribe)
{
    struct vt_whisper_mel *m = load_mel(80);
    size_t n, frames = 0;
    float *x = load_jfk(&n), *ref = load_ref("jfk-mel80.f32", 80, 1100), *seg, *whole = NULL;
    float max = 0;
    char err[512];

    seg = malloc(80 * VT_WMEL_N_FRAMES * sizeof(float));
    CHECK(m && x && ref && seg);
    if (!m || !x || !ref || !seg)
        goto out;
    CHECK_INT(n, 176000);
    /* transcribe's way: the maximum over audio + 30 s of silence, then window 0 */
    CHECK_INT(vt_whisper_mel_max(m, x, n, &max, err, sizeof(err)), 0);
    CHECK_INT(vt_whisper_mel_segment(m, x, n, max, 0, seg, err, sizeof(err)), 0);
    double d = max_diff(seg, VT_WMEL_N_FRAMES, 0, ref, 80, 1100);
    fprintf(stderr, "  80 bins, transcribe's window 0: max |C - torch| = %.3g\n", d);
    CHECK(d <= TOL);
    for (size_t i = 0; i < 80; i++)
        for (size_t t = 1100; t < VT_WMEL_N_FRAMES; t++)
            if (seg[i * VT_WMEL_N_FRAMES + t] != 0)
                vt_test_failures++;
    /* the whole padded spectrogram at once agrees, and has 1100 + 3000 frames */
    CHECK_INT(
        vt_whisper_mel_spectrogram(m, x, n, VT_WMEL_N_SAMPLES, &whole, &frames, err, sizeof(err)),
        0);
    CHECK_INT(frames, 4100);
    if (whole)
        CHECK(max_diff(whole, frames, 0, ref, 80, 1100) <= TOL);
    /* one 30 s clip (pad_or_trim): the same frames, then silence at the floor */
    CHECK_INT(vt_whisper_mel_window(m, x, n, seg, err, sizeof(err)), 0);
    CHECK(max_diff(seg, VT_WMEL_N_FRAMES, 0, ref, 80, 1100) <= TOL);
    CHECK_NEAR(seg[5 * VT_WMEL_N_FRAMES + 2000], (max - 8.0 + 4.0) / 4.0, 1e-6);
    /* a later window of a long recording: seek past the content is refused */
    CHECK_INT(vt_whisper_mel_segment(m, x, n, max, 1101, seg, err, sizeof(err)), VT_EINVAL);
out:
    free(whole);
    free(seg);
    free(ref);
    free(x);
    vt_whisper_mel_free(m);
}

VT_TEST(whisper_mel_jfk_128_reflect)
{
    struct vt_whisper_mel *m = load_mel(128);
    size_t n, frames = 0;
    float *x = load_jfk(&n), *head = load_ref("jfk-mel128-head.f32", 128, 300),
          *tail = load_ref("jfk-mel128-tail.f32", 128, 20), *v = NULL;
    char err[512];

    CHECK(m && x && head && tail);
    if (!m || !x || !head || !tail)
        goto out;
    CHECK_INT(vt_whisper_mel_n_mels(m), 128);
    CHECK_INT(vt_whisper_mel_spectrogram(m, x, n, 0, &v, &frames, err, sizeof(err)), 0);
    CHECK_INT(frames, 1100);
    if (v && frames == 1100) {
        double dh = max_diff(v, frames, 0, head, 128, 300);
        double dt = max_diff(v, frames, 1080, tail, 128, 20);

        fprintf(stderr,
                "  128 bins, no padding: max |C - torch| = %.3g (first 3 s), %.3g "
                "(last 20 frames)\n",
                dh, dt);
        CHECK(dh <= TOL);
        CHECK(dt <= TOL);
    }
out:
    free(v);
    free(head);
    free(tail);
    free(x);
    vt_whisper_mel_free(m);
}

VT_TEST(whisper_mel_fft_is_a_dft)
{
    struct vt_rfft400 f;
    double in[400], re[201], im[201];
    uint64_t s = 0x9e3779b97f4a7c15ULL;

    vt_rfft400_init(&f);
    for (int round = 0; round < 3; round++) {
        double worst = 0;

        for (int i = 0; i < 400; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            in[i] = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
        }
        if (round == 2)
            for (int i = 0; i < 400; i++)
                in[i] = i == 7; /* an impulse: X[k] = exp(-2 pi i 7 k / 400) */
        vt_rfft400(&f, in, re, im);
        for (int k = 0; k <= 200; k++) {
            long double sr = 0, si = 0;

            for (int i = 0; i < 400; i++) {
                long double a = -2 * 3.14159265358979323846264338327950288L * k * i / 400;

                sr += in[i] * cosl(a);
                si += in[i] * sinl(a);
            }
            worst = fmax(worst, fabs((double)(re[k] - sr)) + fabs((double)(im[k] - si)));
        }
        CHECK(worst < 1e-10);
    }
}

VT_TEST(whisper_mel_short_empty_silent)
{
    struct vt_whisper_mel *m = load_mel(80);
    float *out = malloc(80 * VT_WMEL_N_FRAMES * sizeof(float)), *v = NULL;
    float *zero = calloc(16000, sizeof(float)), max = 0;
    size_t frames = 7;
    char err[512] = "";

    CHECK(m && out && zero);
    if (!m || !out || !zero)
        goto out;
    /* torch.stft refuses a signal no longer than its reflection: so do we, with a line */
    CHECK_INT(vt_whisper_mel_spectrogram(m, NULL, 0, 0, &v, &frames, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "too short") != NULL && !strchr(err, '\n'));
    CHECK(v == NULL && frames == 0);
    CHECK_INT(vt_whisper_mel_spectrogram(m, zero, 200, 0, &v, &frames, err, sizeof(err)),
              VT_EINVAL);
    /* 201 samples: one frame (the second, of the stft's two, is dropped) */
    CHECK_INT(vt_whisper_mel_spectrogram(m, zero, 201, 0, &v, &frames, err, sizeof(err)), 0);
    CHECK_INT(frames, 1);
    free(v);
    v = NULL;
    /* silence: log10 clamps at 1e-10, so every value is (-10 + 4) / 4 */
    CHECK_INT(vt_whisper_mel_spectrogram(m, zero, 16000, 0, &v, &frames, err, sizeof(err)), 0);
    CHECK_INT(frames, 100);
    for (size_t i = 0; v && i < 80 * frames; i++)
        if (v[i] != -1.5f)
            vt_test_failures++;
    /* an empty clip is a 30 s window of silence; so is a window of 100 samples of it */
    CHECK_INT(vt_whisper_mel_window(m, NULL, 0, out, err, sizeof(err)), 0);
    CHECK(out[0] == -1.5f && out[80 * VT_WMEL_N_FRAMES - 1] == -1.5f);
    CHECK_INT(vt_whisper_mel_window(m, zero, 100, out, err, sizeof(err)), 0);
    CHECK(out[0] == -1.5f);
    /* transcribe's path on empty audio: no content frames, a window of zeros */
    CHECK_INT(vt_whisper_mel_max(m, NULL, 0, &max, err, sizeof(err)), 0);
    CHECK_NEAR(max, -10.0, 1e-6);
    CHECK_INT(vt_whisper_mel_segment(m, NULL, 0, max, 0, out, err, sizeof(err)), 0);
    CHECK(out[0] == 0 && out[80 * VT_WMEL_N_FRAMES - 1] == 0);
    /* frames asked past the end, or a row shorter than the frames */
    CHECK_INT(vt_whisper_mel_log10(m, zero, 16000, 0, 90, 11, out, 11, NULL, err, sizeof(err)),
              VT_EINVAL);
    CHECK_INT(vt_whisper_mel_log10(m, zero, 16000, 0, 0, 10, out, 9, NULL, err, sizeof(err)),
              VT_EINVAL);
    CHECK_INT(vt_whisper_mel_log10(m, zero, SIZE_MAX, 1, 0, 1, out, 1, NULL, err, sizeof(err)),
              VT_EINVAL);
out:
    free(v);
    free(zero);
    free(out);
    vt_whisper_mel_free(m);
}

/* ---- hostile filterbank files ---- */

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    put16(p, v & 0xffff);
    put16(p + 2, v >> 16);
}

/* A one-member stored zip of data under name, into z (returns its length). */
static size_t make_zip(unsigned char *z, const char *name, const void *data, size_t len)
{
    size_t nl = strlen(name), off = 0, cd;
    uint32_t crc = (uint32_t)crc32(0L, data, (uInt)len);

    memset(z, 0, 30 + nl + len + 46 + nl + 22);
    put32(z, 0x04034b50);
    put16(z + 4, 20);
    put32(z + 14, crc);
    put32(z + 18, (uint32_t)len);
    put32(z + 22, (uint32_t)len);
    put16(z + 26, (unsigned)nl);
    memcpy(z + 30, name, nl);
    memcpy(z + 30 + nl, data, len);
    cd = 30 + nl + len;
    off = cd;
    put32(z + off, 0x02014b50);
    put16(z + off + 4, 20);
    put16(z + off + 6, 20);
    put32(z + off + 16, crc);
    put32(z + off + 20, (uint32_t)len);
    put32(z + off + 24, (uint32_t)len);
    put16(z + off + 28, (unsigned)nl);
    memcpy(z + off + 46, name, nl);
    off += 46 + nl;
    put32(z + off, 0x06054b50);
    put16(z + off + 8, 1);
    put16(z + off + 10, 1);
    put32(z + off + 12, (uint32_t)(46 + nl));
    put32(z + off + 16, (uint32_t)cd);
    return off + 22;
}

/* An .npy with the header dictionary dict and count floats of value v. */
static size_t make_npy(unsigned char *p, const char *dict, size_t count, float v)
{
    size_t hl = strlen(dict);

    memcpy(p, "\x93NUMPY\x01\x00", 8);
    put16(p + 8, (unsigned)hl);
    memcpy(p + 10, dict, hl);
    for (size_t i = 0; i < count; i++)
        memcpy(p + 10 + hl + 4 * i, &v, 4);
    return 10 + hl + 4 * count;
}

/* Load a stored npz of one crafted mel_80.npy; returns the code, err gets the line. */
static int load_crafted(const char *dict, size_t count, float v, char *err, size_t errlen)
{
    size_t cap = 128 + 4 * count + 256;
    unsigned char *npy = malloc(cap), *z = malloc(cap + 200);
    struct vt_whisper_mel *m = NULL;
    int rc = VT_EIO;

    if (npy && z) {
        size_t nl = make_npy(npy, dict, count, v), zl = make_zip(z, "mel_80.npy", npy, nl);

        rc = vt_whisper_mel_load(z, zl, 80, &m, err, errlen);
    }
    vt_whisper_mel_free(m);
    free(npy);
    free(z);
    return rc;
}

#define DICT(descr, fo, shape)                                                                     \
    "{'descr': '" descr "', 'fortran_order': " fo ", 'shape': " shape ", }\n"

VT_TEST(whisper_mel_hostile_filterbank)
{
    char err[512] = "", *data = NULL;
    size_t len = 0;
    struct vt_whisper_mel *m = NULL;

    /* a crafted file with the right shape loads: the checks below are what refuses */
    CHECK_INT(load_crafted(DICT("<f4", "False", "(80, 201)"), 80 * 201, 0.5f, err, sizeof(err)), 0);
    static const struct {
        const char *dict;
        size_t count;
        float v;
        const char *says;
    } bad[] = {
        {DICT("<f4", "False", "(80, 200)"), 80 * 200, 0, "[80, 201]"},
        {DICT("<f4", "False", "(16080,)"), 80 * 201, 0, "[80, 201]"},
        {DICT("<f8", "False", "(80, 201)"), 80 * 201 * 2, 0, "float32"},
        {DICT(">f4", "False", "(80, 201)"), 80 * 201, 0, "float32"},
        {DICT("<f4", "True", "(80, 201)"), 80 * 201, 0, "Fortran"},
        {DICT("<f4", "False", "(80, 201)"), 80 * 201 - 1, 0, "shape needs"},
        {DICT("<f4", "False", "(80, 201)"), 80 * 201, NAN, "not finite"},
        {DICT("<f4", "False", "(4294967296, 4294967296)"), 0, 0, "shape"},
        {DICT("<f4", "False", "(-80, 201)"), 0, 0, "shape"},
        {"{'shape': (80, 201)}\n", 80 * 201, 0, "lacks"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        CHECK_INT(load_crafted(bad[i].dict, bad[i].count, bad[i].v, err, sizeof(err)), VT_EINVAL);
        if (!strstr(err, bad[i].says) || strchr(err, '\n'))
            fprintf(stderr, "  case %zu: \"%s\" lacks \"%s\"\n", i, err, bad[i].says),
                vt_test_failures++;
    }
    CHECK_INT(vt_whisper_mel_open(NPZ_FILE, 81, &m, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "80 or 128") != NULL);
    CHECK_INT(vt_whisper_mel_open("tests/data/speech/jfk.wav", 80, &m, err, sizeof(err)),
              VT_EINVAL);
    CHECK(strstr(err, "jfk.wav") != NULL && strstr(err, "zip") != NULL);
    CHECK(m == NULL);
    /* the real file truncated anywhere, or with any byte changed: refused or read, no crash */
    CHECK_INT(vt_read_file_capped(NPZ_FILE, "npz", 1u << 20, &data, &len, err, sizeof(err)), 0);
    for (size_t cut = 0; data && cut < len; cut += 3) {
        CHECK(vt_whisper_mel_load(data, cut, 80, &m, err, sizeof(err)) != 0);
        CHECK(m == NULL && !strchr(err, '\n'));
    }
    for (size_t at = 0; data && at < len; at += 2) {
        unsigned char keep = (unsigned char)data[at];

        data[at] = (char)(keep ^ 0x5a);
        if (vt_whisper_mel_load(data, len, 128, &m, err, sizeof(err)) == 0)
            vt_whisper_mel_free(m);
        else
            CHECK(m == NULL && err[0] && !strchr(err, '\n'));
        m = NULL;
        data[at] = (char)keep;
    }
    free(data);
}
