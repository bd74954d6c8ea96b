/*
 * Whisper's log-mel front end, as openai/whisper's audio.py log_mel_spectrogram computes it
 * from 16 kHz mono samples in [-1, 1]: frames of N_FFT 400 samples every HOP 160 under a
 * periodic Hann window, centred (torch.stft(center=True): the signal reflected by 200
 * samples at both ends), power |STFT|^2 of the 201 bins with the last frame dropped, the
 * mel filterbank ([n_mels, 201], 80 or 128 bins, read from whisper's mel_filters.npz), then
 * log10(max(x, 1e-10)), max(x, max over the spectrogram - 8) and (x + 4) / 4. The output is
 * [n_mels][n_frames], frames in a row, as whisper's tensor.
 *
 * n samples followed by pad zeros give (n + pad) / 160 frames, and need n + pad > 200 (the
 * reflection, as torch refuses shorter signals). Work is a frame at a time; only the
 * output grows with the audio. The clamp needs the maximum of the whole spectrogram:
 * vt_whisper_mel_spectrogram computes it in one go; for a long recording in 30 s windows,
 * as whisper's transcribe does (the spectrogram of the audio plus N_SAMPLES of silence,
 * then windows of N_FRAMES starting at seek, the frames past the audio's content zeroed),
 * vt_whisper_mel_max takes one pass for the maximum and vt_whisper_mel_segment gives a
 * window at a time.
 */
#ifndef VT_WHISPER_MEL_H
#define VT_WHISPER_MEL_H

#include <stddef.h>

#define VT_WMEL_SAMPLE_RATE 16000
#define VT_WMEL_N_FFT       400
#define VT_WMEL_HOP         160
#define VT_WMEL_N_BINS      201    /* N_FFT / 2 + 1 */
#define VT_WMEL_N_SAMPLES   480000 /* 30 s: whisper's window */
#define VT_WMEL_N_FRAMES    3000   /* N_SAMPLES / HOP */
/* An .npz larger than this is refused (whisper's is 4 KB). */
#define VT_WMEL_MAX_FILE (16u * 1024 * 1024)
/* Signals longer than this (n + pad samples, about 37 hours) are refused. */
#define VT_WMEL_MAX_SAMPLES ((size_t)1 << 31)

/* A real FFT of 400 points: a complex FFT of 200 (radices 4, 2, 5, 5) and the split. */
struct vt_rfft400 {
    double tw[200][2]; /* exp(-2 pi i k / 200) */
    double sp[201][2]; /* exp(-2 pi i k / 400), for the split */
};
void vt_rfft400_init(struct vt_rfft400 *f);
/* X[k] = sum_n in[n] exp(-2 pi i k n / 400), k = 0..200, into re and im. */
void vt_rfft400(const struct vt_rfft400 *f, const double in[400], double re[201], double im[201]);

struct vt_whisper_mel;

/*
 * Read the filterbank mel_<n_mels>.npy ([n_mels, 201] float32, finite) from the .npz at
 * path (n_mels 80 or 128). 0, or VT_EINVAL / VT_EIO / VT_ENOTFOUND with one line in err.
 * Freed with vt_whisper_mel_free.
 */
int vt_whisper_mel_open(const char *path, int n_mels, struct vt_whisper_mel **out, char *err,
                        size_t errlen);
/* The same from the len bytes of an .npz at data. */
int vt_whisper_mel_load(const void *data, size_t len, int n_mels, struct vt_whisper_mel **out,
                        char *err, size_t errlen);
void vt_whisper_mel_free(struct vt_whisper_mel *m);
int vt_whisper_mel_n_mels(const struct vt_whisper_mel *m);

/* Frames of n samples followed by pad zeros: (n + pad) / HOP. */
size_t vt_whisper_mel_n_frames(size_t n, size_t pad);

/*
 * log10(max(mel, 1e-10)) of frames [first, first + count) of the n samples at x followed by
 * pad zeros, into out[mel * stride + (frame - first)]; *max (if not NULL) gets their
 * maximum. VT_EINVAL with a line in err when the signal is too short or long, or the frames
 * run past the last.
 */
int vt_whisper_mel_log10(const struct vt_whisper_mel *m, const float *x, size_t n, size_t pad,
                         size_t first, size_t count, float *out, size_t stride, float *max,
                         char *err, size_t errlen);
/* The last two steps over count values: max(v, max - 8), then (v + 4) / 4. */
void vt_whisper_mel_normalize(float *v, size_t count, float max);

/*
 * log_mel_spectrogram(x, n_mels, padding=pad): *out (malloc'd) gets [n_mels][*n_frames].
 */
int vt_whisper_mel_spectrogram(const struct vt_whisper_mel *m, const float *x, size_t n, size_t pad,
                               float **out, size_t *n_frames, char *err, size_t errlen);

/*
 * log_mel_spectrogram(pad_or_trim(x)): the first 30 s of x, padded with zeros to
 * N_SAMPLES, into out [n_mels][N_FRAMES] (as whisper's decode and detect_language take
 * one clip). Any n, 0 included.
 */
int vt_whisper_mel_window(const struct vt_whisper_mel *m, const float *x, size_t n, float *out,
                          char *err, size_t errlen);

/*
 * The maximum of log10(max(mel, 1e-10)) over the spectrogram transcribe computes
 * (log_mel_spectrogram(x, padding=N_SAMPLES)), for vt_whisper_mel_segment.
 */
int vt_whisper_mel_max(const struct vt_whisper_mel *m, const float *x, size_t n, float *max,
                       char *err, size_t errlen);
/*
 * transcribe's window at frame seek: pad_or_trim(mel[:, seek:seek + N_FRAMES] limited to
 * the content's n / HOP frames, N_FRAMES) of that spectrogram normalised with max, into
 * out [n_mels][N_FRAMES]; the frames past the content are 0.
 */
int vt_whisper_mel_segment(const struct vt_whisper_mel *m, const float *x, size_t n, float max,
                           size_t seek, float *out, char *err, size_t errlen);

#endif
