/*
 * Whisper's log-mel front end (whisper_mel.h). A frame at a time: 400 samples gathered with
 * the reflection at both ends and the zero padding, the Hann window, a real FFT of 400
 * points (a complex FFT of 200 over the even and odd samples, mixed radix 4 x 2 x 5 x 5,
 * then split), the power of the 201 bins, and each mel filter applied over the bins where
 * it is non-zero (a triangle of a few bins: the product costs a few hundred
 * multiplications a frame rather than n_mels x 201). Arithmetic is in double, so the result
 * differs from PyTorch's float32 only by PyTorch's rounding.
 */
#include "speech/whisper_mel.h"

#include "base/util.h"
#include "speech/npz.h"
#include "vidtheque.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HALF      (VT_WMEL_N_FFT / 2) /* 200: the reflection, and the complex FFT's size */
#define LOG_FLOOR 1e-10               /* log10's clamp, audio.py's */
/* Frames of the max pass computed together (a small buffer whatever the duration). */
#define MAX_CHUNK 64

struct vt_whisper_mel {
    int n_mels;
    float *filters; /* [n_mels][201] */
    int *lo, *hi;   /* per filter, the bins [lo, hi) where it is non-zero */
    double window[VT_WMEL_N_FFT];
    struct vt_rfft400 fft;
};

/* ---- the FFT ---- */

/* 200 = 4 x 2 x 5 x 5: the radix of each stage and the length left after it. */
static const int RADIX[4] = {4, 2, 5, 5};
static const int REST[4] = {50, 25, 5, 1};

void vt_rfft400_init(struct vt_rfft400 *f)
{
    for (int k = 0; k < HALF; k++) {
        f->tw[k][0] = cos(2 * M_PI * k / HALF);
        f->tw[k][1] = -sin(2 * M_PI * k / HALF);
    }
    for (int k = 0; k <= HALF; k++) {
        f->sp[k][0] = cos(2 * M_PI * k / VT_WMEL_N_FFT);
        f->sp[k][1] = -sin(2 * M_PI * k / VT_WMEL_N_FFT);
    }
}

/* A DFT of 5 points t into out[u + k m]: the pairs 1, 4 and 2, 3 share their cosines. */
static void radix5(const double t[5][2], double (*out)[2], int u, int m)
{
    const double c1 = 0.30901699437494742, c2 = -0.80901699437494742; /* cos 2pi/5, 4pi/5 */
    const double s1 = 0.95105651629515357, s2 = 0.58778525229247313;  /* sin 2pi/5, 4pi/5 */
    double s14r = t[1][0] + t[4][0], s14i = t[1][1] + t[4][1];
    double d14r = t[1][0] - t[4][0], d14i = t[1][1] - t[4][1];
    double s23r = t[2][0] + t[3][0], s23i = t[2][1] + t[3][1];
    double d23r = t[2][0] - t[3][0], d23i = t[2][1] - t[3][1];
    /* cosine parts a, sine parts b: X1 = a1 - i b1, X4 = a1 + i b1, X2 = a2 - i b2, ... */
    double a1r = t[0][0] + c1 * s14r + c2 * s23r, a1i = t[0][1] + c1 * s14i + c2 * s23i;
    double a2r = t[0][0] + c2 * s14r + c1 * s23r, a2i = t[0][1] + c2 * s14i + c1 * s23i;
    double b1r = s1 * d14r + s2 * d23r, b1i = s1 * d14i + s2 * d23i;
    double b2r = s2 * d14r - s1 * d23r, b2i = s2 * d14i - s1 * d23i;

    out[u][0] = t[0][0] + s14r + s23r;
    out[u][1] = t[0][1] + s14i + s23i;
    out[u + m][0] = a1r + b1i;
    out[u + m][1] = a1i - b1r;
    out[u + 4 * m][0] = a1r - b1i;
    out[u + 4 * m][1] = a1i + b1r;
    out[u + 2 * m][0] = a2r + b2i;
    out[u + 2 * m][1] = a2i - b2r;
    out[u + 3 * m][0] = a2r - b2i;
    out[u + 3 * m][1] = a2i + b2r;
}

/*
 * One stage's butterflies over out[u + q m] (q < p, u < m): each input turned by its
 * twiddle W^(fstride q u) (fstride q u < 200 at every stage of 4 x 2 x 5 x 5), then a
 * DFT of p points.
 */
static void butterfly(const struct vt_rfft400 *f, double (*out)[2], int fstride, int m, int p)
{
    for (int u = 0; u < m; u++) {
        double t[5][2];

        t[0][0] = out[u][0];
        t[0][1] = out[u][1];
        for (int q = 1; q < p; q++) {
            const double *a = out[u + q * m], *w = f->tw[fstride * q * u];

            t[q][0] = a[0] * w[0] - a[1] * w[1];
            t[q][1] = a[0] * w[1] + a[1] * w[0];
        }
        if (p == 2) {
            out[u][0] = t[0][0] + t[1][0];
            out[u][1] = t[0][1] + t[1][1];
            out[u + m][0] = t[0][0] - t[1][0];
            out[u + m][1] = t[0][1] - t[1][1];
            continue;
        }
        if (p == 4) {
            /* X0, X2 = a + c +- (b + d); X1, X3 = a - c -+ i (b - d) */
            double s0r = t[0][0] + t[2][0], s0i = t[0][1] + t[2][1];
            double d0r = t[0][0] - t[2][0], d0i = t[0][1] - t[2][1];
            double s1r = t[1][0] + t[3][0], s1i = t[1][1] + t[3][1];
            double d1r = t[1][0] - t[3][0], d1i = t[1][1] - t[3][1];

            out[u][0] = s0r + s1r;
            out[u][1] = s0i + s1i;
            out[u + 2 * m][0] = s0r - s1r;
            out[u + 2 * m][1] = s0i - s1i;
            out[u + m][0] = d0r + d1i;
            out[u + m][1] = d0i - d1r;
            out[u + 3 * m][0] = d0r - d1i;
            out[u + 3 * m][1] = d0i + d1r;
            continue;
        }
        radix5(t, out, u, m);
    }
}

/* Decimation in time: out (contiguous) gets the DFT of in[0], in[fstride], ... */
static void fft_stage(const struct vt_rfft400 *f, double (*out)[2], const double (*in)[2],
                      int fstride, int stage)
{
    int p = RADIX[stage], m = REST[stage];

    for (int q = 0; q < p; q++) {
        if (m == 1) {
            out[q][0] = in[q * fstride][0];
            out[q][1] = in[q * fstride][1];
        } else {
            fft_stage(f, out + q * m, in + q * fstride, fstride * p, stage + 1);
        }
    }
    butterfly(f, out, fstride, m, p);
}

void vt_rfft400(const struct vt_rfft400 *f, const double in[400], double re[201], double im[201])
{
    double z[HALF][2];

    /* the even samples as real parts, the odd as imaginary: one complex FFT of 200 */
    fft_stage(f, z, (const double(*)[2])in, 1, 0);
    for (int k = 0; k <= HALF; k++) {
        const double *a = z[k % HALF], *b = z[(HALF - k) % HALF], *w = f->sp[k];
        /* even part (a + conj b) / 2, odd part (a - conj b) / 2i */
        double er = (a[0] + b[0]) / 2, ei = (a[1] - b[1]) / 2;
        double odr = (a[1] + b[1]) / 2, odi = -(a[0] - b[0]) / 2;

        re[k] = er + odr * w[0] - odi * w[1];
        im[k] = ei + odr * w[1] + odi * w[0];
    }
}

/* ---- the filterbank ---- */

static int take_filters(struct vt_whisper_mel *m, const struct vt_npy_f32 *a, char *err,
                        size_t errlen)
{
    if (a->n_dims != 2 || a->shape[0] != m->n_mels || a->shape[1] != VT_WMEL_N_BINS) {
        snprintf(err, errlen, "mel_%d.npy is not a [%d, %d] array", m->n_mels, m->n_mels,
                 VT_WMEL_N_BINS);
        return VT_EINVAL;
    }
    for (size_t i = 0; i < a->count; i++) {
        if (!isfinite(a->data[i])) {
            snprintf(err, errlen, "mel_%d.npy holds a value that is not finite", m->n_mels);
            return VT_EINVAL;
        }
    }
    m->filters = a->data;
    for (int i = 0; i < m->n_mels; i++) {
        const float *row = m->filters + (size_t)i * VT_WMEL_N_BINS;
        int lo = 0, hi = VT_WMEL_N_BINS;

        while (lo < hi && row[lo] == 0)
            lo++;
        while (hi > lo && row[hi - 1] == 0)
            hi--;
        m->lo[i] = lo;
        m->hi[i] = hi;
    }
    return 0;
}

int vt_whisper_mel_load(const void *data, size_t len, int n_mels, struct vt_whisper_mel **out,
                        char *err, size_t errlen)
{
    struct vt_npy_f32 a;
    struct vt_whisper_mel *m;
    char member[32];
    int rc;

    *out = NULL;
    if (n_mels != 80 && n_mels != 128) {
        snprintf(err, errlen, "whisper's mel filterbanks have 80 or 128 bins, not %d", n_mels);
        return VT_EINVAL;
    }
    snprintf(member, sizeof(member), "mel_%d.npy", n_mels);
    rc = vt_npz_read_f32(data, len, member, 4u << 20, &a, err, errlen);
    if (rc)
        return rc;
    m = calloc(1, sizeof(*m));
    if (m) {
        m->lo = calloc((size_t)n_mels, sizeof(int));
        m->hi = calloc((size_t)n_mels, sizeof(int));
    }
    if (!m || !m->lo || !m->hi) {
        snprintf(err, errlen, "out of memory");
        rc = VT_EIO;
    } else {
        m->n_mels = n_mels;
        rc = take_filters(m, &a, err, errlen);
    }
    if (rc) {
        free(a.data);
        if (m)
            m->filters = NULL;
        vt_whisper_mel_free(m);
        return rc;
    }
    /* periodic Hann, torch.hann_window(400) */
    for (int i = 0; i < VT_WMEL_N_FFT; i++)
        m->window[i] = 0.5 - 0.5 * cos(2 * M_PI * i / VT_WMEL_N_FFT);
    vt_rfft400_init(&m->fft);
    *out = m;
    return 0;
}

int vt_whisper_mel_open(const char *path, int n_mels, struct vt_whisper_mel **out, char *err,
                        size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    int rc = vt_read_file_capped(path, "mel filterbank file", VT_WMEL_MAX_FILE, &data, &len, err,
                                 errlen);

    *out = NULL;
    if (rc)
        return rc;
    rc = vt_whisper_mel_load(data, len, n_mels, out, err, errlen);
    free(data);
    if (rc && err && errlen) {
        char tmp[512];

        snprintf(tmp, sizeof(tmp), "%s", err);
        snprintf(err, errlen, "'%s': %s", path, tmp);
    }
    return rc;
}

void vt_whisper_mel_free(struct vt_whisper_mel *m)
{
    if (!m)
        return;
    free(m->filters);
    free(m->lo);
    free(m->hi);
    free(m);
}

int vt_whisper_mel_n_mels(const struct vt_whisper_mel *m)
{
    return m->n_mels;
}

/* ---- frames ---- */

size_t vt_whisper_mel_n_frames(size_t n, size_t pad)
{
    return n > SIZE_MAX - pad ? 0 : (n + pad) / VT_WMEL_HOP;
}

/*
 * Frame t's windowed samples of the signal x[0..n) + zeros to len: torch's centred frames,
 * the signal reflected (not repeating the edge sample) by 200 samples at either end.
 */
static void frame_samples(const struct vt_whisper_mel *m, const float *x, size_t n, size_t len,
                          size_t t, double buf[VT_WMEL_N_FFT])
{
    int64_t start = (int64_t)(t * VT_WMEL_HOP) - HALF;

    if (start >= 0 && (size_t)start + VT_WMEL_N_FFT <= n) {
        for (int k = 0; k < VT_WMEL_N_FFT; k++)
            buf[k] = x[start + k] * m->window[k];
        return;
    }
    for (int k = 0; k < VT_WMEL_N_FFT; k++) {
        int64_t j = start + k;

        if (j < 0)
            j = -j;
        if (j >= (int64_t)len)
            j = 2 * ((int64_t)len - 1) - j;
        buf[k] = j < (int64_t)n ? x[j] * m->window[k] : 0;
    }
}

/* log10(max(mel, 1e-10)) of frame t, one value per filter into mel[i * stride]. */
static void frame_log_mel(const struct vt_whisper_mel *m, const float *x, size_t n, size_t len,
                          size_t t, float *mel, size_t stride)
{
    double buf[VT_WMEL_N_FFT], re[VT_WMEL_N_BINS], im[VT_WMEL_N_BINS], power[VT_WMEL_N_BINS];

    frame_samples(m, x, n, len, t, buf);
    vt_rfft400(&m->fft, buf, re, im);
    for (int k = 0; k < VT_WMEL_N_BINS; k++)
        power[k] = re[k] * re[k] + im[k] * im[k];
    for (int i = 0; i < m->n_mels; i++) {
        const float *row = m->filters + (size_t)i * VT_WMEL_N_BINS;
        double s = 0;

        for (int k = m->lo[i]; k < m->hi[i]; k++)
            s += row[k] * power[k];
        mel[(size_t)i * stride] = (float)log10(s > LOG_FLOOR ? s : LOG_FLOOR);
    }
}

/* The signal's length, checked: more than the reflection, within the limit. */
static int signal_len(size_t n, size_t pad, size_t *len, char *err, size_t errlen)
{
    if (n > VT_WMEL_MAX_SAMPLES || pad > VT_WMEL_MAX_SAMPLES || n + pad > VT_WMEL_MAX_SAMPLES) {
        snprintf(err, errlen, "audio of %zu + %zu samples is too long for one spectrogram", n, pad);
        return VT_EINVAL;
    }
    if (n + pad <= HALF) {
        snprintf(err, errlen,
                 "audio of %zu samples is too short: a spectrogram needs more "
                 "than %d",
                 n + pad, HALF);
        return VT_EINVAL;
    }
    *len = n + pad;
    return 0;
}

int vt_whisper_mel_log10(const struct vt_whisper_mel *m, const float *x, size_t n, size_t pad,
                         size_t first, size_t count, float *out, size_t stride, float *max,
                         char *err, size_t errlen)
{
    size_t len;
    float top = -INFINITY;
    int rc = signal_len(n, pad, &len, err, errlen);

    if (rc)
        return rc;
    if (first > len / VT_WMEL_HOP || count > len / VT_WMEL_HOP - first || stride < count) {
        snprintf(err, errlen, "frames %zu to %zu of a spectrogram of %zu frames (row of %zu)",
                 first, first + count, len / VT_WMEL_HOP, stride);
        return VT_EINVAL;
    }
    for (size_t t = 0; t < count; t++) {
        frame_log_mel(m, x, n, len, first + t, out + t, stride);
        for (int i = 0; i < m->n_mels; i++)
            top = fmaxf(top, out[(size_t)i * stride + t]);
    }
    if (max)
        *max = top;
    return 0;
}

void vt_whisper_mel_normalize(float *v, size_t count, float max)
{
    float floor = max - 8.0f;

    for (size_t i = 0; i < count; i++)
        v[i] = ((v[i] > floor ? v[i] : floor) + 4.0f) / 4.0f;
}

int vt_whisper_mel_spectrogram(const struct vt_whisper_mel *m, const float *x, size_t n, size_t pad,
                               float **out, size_t *n_frames, char *err, size_t errlen)
{
    size_t len, frames, total;
    float max, *v;
    int rc = signal_len(n, pad, &len, err, errlen);

    *out = NULL;
    *n_frames = 0;
    if (rc)
        return rc;
    frames = len / VT_WMEL_HOP;
    total = frames * (size_t)m->n_mels;
    v = malloc(total * sizeof(float));
    if (!v) {
        snprintf(err, errlen, "out of memory for a spectrogram of %zu frames", frames);
        return VT_EIO;
    }
    rc = vt_whisper_mel_log10(m, x, n, pad, 0, frames, v, frames, &max, err, errlen);
    if (rc) {
        free(v);
        return rc;
    }
    vt_whisper_mel_normalize(v, total, max);
    *out = v;
    *n_frames = frames;
    return 0;
}

int vt_whisper_mel_window(const struct vt_whisper_mel *m, const float *x, size_t n, float *out,
                          char *err, size_t errlen)
{
    size_t keep = n < VT_WMEL_N_SAMPLES ? n : VT_WMEL_N_SAMPLES;
    float max;
    int rc = vt_whisper_mel_log10(m, x, keep, VT_WMEL_N_SAMPLES - keep, 0, VT_WMEL_N_FRAMES, out,
                                  VT_WMEL_N_FRAMES, &max, err, errlen);

    if (rc == 0)
        vt_whisper_mel_normalize(out, (size_t)m->n_mels * VT_WMEL_N_FRAMES, max);
    return rc;
}

int vt_whisper_mel_max(const struct vt_whisper_mel *m, const float *x, size_t n, float *max,
                       char *err, size_t errlen)
{
    size_t len, frames, live;
    float top = -INFINITY, *buf;
    int rc = signal_len(n, VT_WMEL_N_SAMPLES, &len, err, errlen);

    if (rc)
        return rc;
    /* frames wholly in the silence after the audio are log10(1e-10) = -10: skip them */
    frames = len / VT_WMEL_HOP;
    live = (n + HALF) / VT_WMEL_HOP + 1;
    if (live < frames)
        top = (float)log10(LOG_FLOOR);
    else
        live = frames;
    buf = malloc((size_t)m->n_mels * MAX_CHUNK * sizeof(float));
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return VT_EIO;
    }
    for (size_t t = 0; t < live && rc == 0; t += MAX_CHUNK) {
        size_t count = live - t < MAX_CHUNK ? live - t : MAX_CHUNK;
        float chunk_max;

        rc = vt_whisper_mel_log10(m, x, n, VT_WMEL_N_SAMPLES, t, count, buf, MAX_CHUNK, &chunk_max,
                                  err, errlen);
        top = fmaxf(top, chunk_max);
    }
    free(buf);
    *max = top;
    return rc;
}

int vt_whisper_mel_segment(const struct vt_whisper_mel *m, const float *x, size_t n, float max,
                           size_t seek, float *out, char *err, size_t errlen)
{
    size_t content = n / VT_WMEL_HOP, count;
    int rc = 0;

    if (seek > content) {
        snprintf(err, errlen, "window at frame %zu is past the audio's %zu frames", seek, content);
        return VT_EINVAL;
    }
    count = content - seek < VT_WMEL_N_FRAMES ? content - seek : VT_WMEL_N_FRAMES;
    if (count)
        rc = vt_whisper_mel_log10(m, x, n, VT_WMEL_N_SAMPLES, seek, count, out, VT_WMEL_N_FRAMES,
                                  NULL, err, errlen);
    if (rc)
        return rc;
    for (int i = 0; i < m->n_mels; i++) {
        float *row = out + (size_t)i * VT_WMEL_N_FRAMES;

        vt_whisper_mel_normalize(row, count, max);
        memset(row + count, 0, (VT_WMEL_N_FRAMES - count) * sizeof(float));
    }
    return 0;
}
