/*
 * MobileNet v1 0.25 (224x224) image embedding throughput through embed.h, on 1 and on
 * 2 threads, next to a plain GEMM of the same multiply-adds per frame (the blocked GEMM
 * the convolutions use, vt_tflite_sgemm, 256x256x256, on as many threads) so the ratio
 * to what this machine's arithmetic allows shows. Frames are synthetic 224x224 pictures
 * (no resize) and 1280x720 ones (the keyframe stage's size: resize included). Prints
 * frames/s and whether 2 threads meet the target of 150 frames/s. OpenBLAS is not a
 * dependency (not installed where this was written), so the GEMM baseline is our own.
 *
 * usage: tflite_bench MODEL.tflite [FRAMES [ROUNDS]]
 */
#include "base/util.h"
#include "ml/embed.h"
#include "ml/tflite.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *picture(int w, int h, unsigned seed)
{
    uint8_t *p = vt_xmalloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                p[((size_t)y * w + x) * 3 + c] =
                    (uint8_t)((x * (c + 1) + y * (3 - c) + (int)seed * 37 + ((x ^ y) & 15)) & 255);
    return p;
}

/* Best frames/s over rounds of embedding frames pictures (batches of 32). */
static double embed_fps(const char *model, int threads, int w, int h, int frames, int rounds)
{
    struct vt_embed_spec spec = {
        .kind = VT_EMBED_IMAGES, .backend = "tflite", .model = model, .threads = threads};
    struct vt_embed *e;
    char err[512];
    if (vt_embed_open(&spec, &e, err, sizeof(err))) {
        fprintf(stderr, "tflite_bench: %s\n", err);
        exit(1);
    }
    enum { B = 32 };
    struct vt_image imgs[B];
    uint8_t *px[B];
    for (int i = 0; i < B; i++) {
        px[i] = picture(w, h, (unsigned)i);
        imgs[i] = (struct vt_image){px[i], w, h, (size_t)w * 3};
    }
    float *out = vt_xmalloc(sizeof(float) * B * (size_t)vt_embed_dim(e));
    double best = 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = vt_monotonic_s();
        for (int done = 0; done < frames; done += B)
            if (vt_embed_images(e, imgs, B, out, err, sizeof(err))) {
                fprintf(stderr, "tflite_bench: %s\n", err);
                exit(1);
            }
        double fps = ((frames + B - 1) / B * B) / (vt_monotonic_s() - t0);
        best = fps > best ? fps : best;
    }
    for (int i = 0; i < B; i++)
        free(px[i]);
    free(out);
    vt_embed_close(e);
    return best;
}

struct gemm_job {
    int reps;
    float *a, *b, *c;
};

#define GN 256

static void *gemm_thread(void *arg)
{
    struct gemm_job *j = arg;
    for (int r = 0; r < j->reps; r++)
        vt_tflite_sgemm(GN, GN, GN, j->a, j->b, j->c);
    return NULL;
}

/* Multiply-adds per second of 256^3 GEMMs on n threads (best of rounds). */
static double gemm_macs(int n, int reps, int rounds)
{
    struct gemm_job j[2];
    pthread_t tid[2];
    for (int i = 0; i < n; i++) {
        j[i].reps = reps;
        j[i].a = vt_xmalloc(sizeof(float) * GN * GN);
        j[i].b = vt_xmalloc(sizeof(float) * GN * GN);
        j[i].c = vt_xmalloc(sizeof(float) * GN * GN);
        for (int x = 0; x < GN * GN; x++) {
            j[i].a[x] = (float)((x * 7) % 13) / 13.0f;
            j[i].b[x] = (float)((x * 5) % 11) / 11.0f;
        }
    }
    double best = 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = vt_monotonic_s();
        for (int i = 0; i < n; i++)
            pthread_create(&tid[i], NULL, gemm_thread, &j[i]);
        for (int i = 0; i < n; i++)
            pthread_join(tid[i], NULL);
        double macs = (double)n * reps * GN * GN * GN / (vt_monotonic_s() - t0);
        best = macs > best ? macs : best;
    }
    for (int i = 0; i < n; i++) {
        free(j[i].a);
        free(j[i].b);
        free(j[i].c);
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tflite_bench MODEL [FRAMES [ROUNDS]]\n");
        return 2;
    }
    const char *model = argv[1];
    int frames = argc > 2 ? atoi(argv[2]) : 640, rounds = argc > 3 ? atoi(argv[3]) : 3;
    if (frames < 32 || rounds < 1)
        return 2;
    struct vt_tflite *m;
    char err[512];
    struct vt_embed_spec spec = {
        .kind = VT_EMBED_IMAGES, .backend = "tflite", .model = model, .threads = 1};
    struct vt_embed *e;
    if (vt_embed_open(&spec, &e, err, sizeof(err))) {
        fprintf(stderr, "tflite_bench: %s\n", err);
        return 1;
    }
    printf("model: %s\n", vt_embed_model(e));
    vt_embed_close(e);
    /* the MACs of one frame, from the model file itself */
    if (vt_tflite_open(model, &m, err, sizeof(err))) {
        fprintf(stderr, "tflite_bench: %s\n", err);
        return 1;
    }
    double macs = (double)vt_tflite_macs(m);
    vt_tflite_free(m);
    printf("multiply-adds per frame: %.1f M\n\n", macs / 1e6);

    printf("%-34s %12s %16s %8s\n", "", "frames/s", "GEMM frames/s", "ratio");
    for (int th = 1; th <= 2; th++) {
        double g = gemm_macs(th, 40, rounds) / macs;
        double f224 = embed_fps(model, th, 224, 224, frames, rounds);
        double f720 = embed_fps(model, th, 1280, 720, frames / 2, rounds);
        printf("%d thread%s, 224x224 frames %13s %12.0f %16.0f %8.2f\n", th, th > 1 ? "s" : " ", "",
               f224, g, f224 / g);
        printf("%d thread%s, 1280x720 (with resize) %6s %12.0f %16.0f %8.2f\n", th,
               th > 1 ? "s" : " ", "", f720, g, f720 / g);
        if (th == 2)
            printf("\ntarget >= 150 frames/s at 224x224 on 2 threads: %s (%.0f)\n",
                   f224 >= 150 ? "met" : "NOT met", f224);
    }
    return 0;
}
