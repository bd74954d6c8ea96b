/*
 * Whisper's network on real shapes with generated weights (vt_whisper_model_random): for
 * tiny, base and small (or the shapes named on the command line) the seconds one 30 s
 * window's encoder takes, the seconds per decoded token (one token at a time through the KV
 * cache, after a 3-token start), the weights' bytes and the process's peak RSS so far. Each
 * time is the best of ROUNDS (3) runs: the machine is shared, and the best run is the one
 * least disturbed by others.
 * Usage: whisper_model_bench [THREADS [TOKENS [tiny|base|small|medium ...]]]
 */
#include "base/util.h"
#include "ml/whisper_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

struct shape {
    const char *name;
    int state, head, layer;
};

static const struct shape shapes[] = {
    {"tiny", 384, 6, 4},
    {"base", 512, 8, 6},
    {"small", 768, 12, 12},
    {"medium", 1024, 16, 24},
};

static long peak_rss_mb(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

static int bench(const struct shape *s, int threads, int tokens)
{
    struct vt_whisper_dims d = {80,    1500, s->state, s->head, s->layer,
                                51864, 448,  s->state, s->head, s->layer};
    struct vt_whisper_model *m = NULL;
    struct vt_whisper_kv *kv;
    char err[512];
    float *mel = malloc((size_t)80 * 3000 * sizeof(float));
    float *enc = malloc((size_t)1500 * s->state * sizeof(float));
    float *logits = malloc((size_t)d.n_vocab * sizeof(float));
    int32_t sot[3] = {50257, 50362, 50363}, tok = 220;
    double t0, t_enc = 1e9, t_dec = 1e9;
    const char *env = getenv("ROUNDS");
    int rounds = env ? atoi(env) : 3;

    for (size_t i = 0; i < (size_t)80 * 3000; i++)
        mel[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    if (vt_whisper_model_random(&d, 1, threads, &m, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", s->name, err);
        return 1;
    }
    if (rounds < 1 || rounds > 100)
        rounds = 3;
    for (int r = 0; r < rounds; r++) {
        t0 = vt_monotonic_s();
        if (vt_whisper_encode(m, mel, enc, err, sizeof(err)) != 0) {
            fprintf(stderr, "%s: %s\n", s->name, err);
            return 1;
        }
        t0 = vt_monotonic_s() - t0;
        t_enc = t0 < t_enc ? t0 : t_enc;
    }
    kv = vt_whisper_kv_new(m, enc);
    if (!kv || vt_whisper_decode(kv, sot, 3, &(struct vt_whisper_decode_out){.logits = logits}, err,
                                 sizeof(err)) != 0) {
        fprintf(stderr, "%s: decoder failed\n", s->name);
        return 1;
    }
    for (int r = 0; r < rounds; r++) {
        vt_whisper_kv_rewind(kv, 3);
        t0 = vt_monotonic_s();
        for (int i = 0; i < tokens; i++)
            vt_whisper_decode(kv, &tok, 1, &(struct vt_whisper_decode_out){.logits = logits}, err,
                              sizeof(err));
        t0 = (vt_monotonic_s() - t0) / tokens;
        t_dec = t0 < t_dec ? t0 : t_dec;
    }
    printf("%-6s d=%-4d %2d+%-2d layers  encoder %.3f s/window  decoder %.2f ms/token  weights "
           "%zu MB  peak RSS %ld MB\n",
           s->name, s->state, s->layer, s->layer, t_enc, 1000 * t_dec,
           vt_whisper_model_bytes(m) >> 20, peak_rss_mb());
    fflush(stdout);
    vt_whisper_kv_free(kv);
    vt_whisper_model_free(m);
    free(mel);
    free(enc);
    free(logits);
    return 0;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2, tokens = argc > 2 ? atoi(argv[2]) : 50, rc = 0;

    if (tokens < 1 || tokens > 400)
        tokens = 50;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        int want = argc <= 3;

        for (int a = 3; a < argc; a++)
            want |= strcmp(argv[a], shapes[i].name) == 0;
        if (want && (argc > 3 || i < 3))
            rc |= bench(&shapes[i], threads, tokens);
    }
    return rc;
}
