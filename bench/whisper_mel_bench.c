/*
 * Whisper's log-mel front end on one core: the time of one 30 s window (3000 frames,
 * vt_whisper_mel_window: pad_or_trim then log_mel_spectrogram) for 80 and 128 bins, the
 * best of ROUNDS in CPU seconds of this thread (a busy machine's neighbours count less),
 * and the same per second of audio for transcribe's way over a whole file (the max pass,
 * then windows). bench/whisper_mel_bench.sh builds and runs it;
 * tests/tools/whisper_mel_ref.py --bench gives PyTorch's time for the same window.
 *
 * usage: whisper_mel_bench NPZ AUDIO [ROUNDS]
 */
#include "media/audio.h"
#include "speech/whisper_mel.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* transcribe's way: the max pass, then every window of the file */
static int transcribe_pass(const struct vt_whisper_mel *m, const float *x, size_t n, float *out,
                           char *err, size_t errlen)
{
    float max;
    int rc = vt_whisper_mel_max(m, x, n, &max, err, errlen);

    for (size_t seek = 0; rc == 0 && seek < n / VT_WMEL_HOP; seek += VT_WMEL_N_FRAMES)
        rc = vt_whisper_mel_segment(m, x, n, max, seek, out, err, errlen);
    return rc;
}

static int bench(const char *npz, int n_mels, const float *x, size_t n, int rounds)
{
    struct vt_whisper_mel *m = NULL;
    char err[512];
    float *out = malloc((size_t)n_mels * VT_WMEL_N_FRAMES * sizeof(float));
    double best_w = 1e9, best_t = 1e9;
    int rc = out ? vt_whisper_mel_open(npz, n_mels, &m, err, sizeof(err)) : -1;

    for (int r = 0; rc == 0 && r < rounds; r++) {
        double t0 = cpu_s(), t1;

        rc = vt_whisper_mel_window(m, x, n, out, err, sizeof(err));
        t1 = cpu_s();
        rc = rc ? rc : transcribe_pass(m, x, n, out, err, sizeof(err));
        best_w = t1 - t0 < best_w ? t1 - t0 : best_w;
        best_t = cpu_s() - t1 < best_t ? cpu_s() - t1 : best_t;
    }
    if (rc == 0)
        printf("whisper_mel %d bins: one 30 s window (3000 frames) %.2f ms; transcribe's way "
               "over %.1f s of audio %.2f ms (%.0fx real time)\n",
               n_mels, best_w * 1000, n / 16000.0, best_t * 1000, n / 16000.0 / best_t);
    else
        fprintf(stderr, "whisper_mel_bench: %s\n", err);
    vt_whisper_mel_free(m);
    free(out);
    return rc;
}

int main(int argc, char **argv)
{
    int16_t *pcm = NULL;
    size_t n = 0;
    float *x;
    char err[512];
    int rounds = argc > 3 ? atoi(argv[3]) : 20;

    if (argc < 3) {
        fprintf(stderr, "usage: whisper_mel_bench NPZ AUDIO [ROUNDS]\n");
        return 2;
    }
    if (vt_audio_load(argv[2], &pcm, &n, err, sizeof(err)) != 0) {
        fprintf(stderr, "whisper_mel_bench: %s\n", err);
        return 1;
    }
    x = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; x && i < n; i++)
        x[i] = pcm[i] / 32768.0f;
    free(pcm);
    if (!x || bench(argv[1], 80, x, n, rounds) || bench(argv[1], 128, x, n, rounds))
        return 1;
    free(x);
    return 0;
}
