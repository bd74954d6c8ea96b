/*
 * Tests of Whisper's kernels (ml/whisper_kern.h) on the shapes the reference checkpoint does
 * not reach (its heads are 32 wide, every real model's 64): the products against a naive
 * double-precision one for ragged sizes (strips of 6 and single rows, a last panel cut short,
 * a bias, GELU, the residual) on both kernel sets; and a generated model with 64-wide heads
 * whose encoder output, logits (one token at a time, a few, and many at once: packed keys,
 * causal) and cross-attention scores the vector kernels must give as the scalar ones do.
 */
#include "harness.h"
#include "ml/whisper_kern.h"
#include "ml/whisper_model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static float hashf(size_t i, uint32_t salt)
{
    uint32_t h = (uint32_t)i * 2654435761u ^ salt * 40503u;

    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return (float)(h % 2001) / 1000.0f - 1.0f;
}

static double max_diff(const float *a, const float *b, size_t n)
{
    double d = 0;

    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);

        d = e > d || isnan(e) ? e : d;
    }
    return d;
}

/* vt_wk_matmul against the naive product for M rows, N x K weights, with flags. */
static double matmul_error(struct vt_wk_pool *p, int M, int N, int K, int flags)
{
    uint16_t *w = malloc((size_t)N * K * 2), *pw = malloc(vt_wk_packed_count(N, K) * 2);
    float *x = malloc((size_t)M * K * sizeof(float)), *b = malloc((size_t)N * sizeof(float));
    float *y = malloc((size_t)M * N * sizeof(float)), *want = malloc((size_t)M * N * sizeof(float));
    double err;

    for (size_t i = 0; i < (size_t)N * K; i++)
        w[i] = vt_wk_f32_to_f16(hashf(i, 1));
    for (size_t i = 0; i < (size_t)M * K; i++)
        x[i] = hashf(i, 2);
    for (int n = 0; n < N; n++)
        b[n] = hashf((size_t)n, 3);
    for (size_t i = 0; i < (size_t)M * N; i++)
        y[i] = want[i] = hashf(i, 4);
    vt_wk_pack(w, N, K, pw);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = b[n];

            for (int k = 0; k < K; k++)
                s += (double)x[(size_t)m * K + k] * vt_wk_f16_to_f32(w[(size_t)n * K + k]);
            if (flags & VT_WK_GELU)
                s = 0.5 * s * (1 + erf(s / sqrt(2.0)));
            want[(size_t)m * N + n] =
                (float)((flags & VT_WK_ACC ? want[(size_t)m * N + n] : 0) + s);
        }
    vt_wk_matmul(p, x, K, M, K, pw, b, y, N, N, flags);
    err = max_diff(y, want, (size_t)M * N);
    free(w);
    free(pw);
    free(x);
    free(b);
    free(y);
    free(want);
    return err;
}

VT_TEST(whisper_kern_matmul)
{
    static const int ms[] = {1, 2, 5, 6, 7, 13, 50, 97};
    struct vt_wk_pool *p = vt_wk_pool_new(2);

    for (int generic = 0; generic < 2; generic++) {
        vt_wk_use_generic(generic);
        for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
            CHECK(matmul_error(p, ms[i], 37, 19, 0) < 1e-4);
            CHECK(matmul_error(p, ms[i], 48, 64, VT_WK_GELU) < 1e-4);
            CHECK(matmul_error(p, ms[i], 70, 130, VT_WK_ACC) < 1e-4);
        }
    }
    vt_wk_use_generic(0);
    vt_wk_pool_free(p);
}

struct run {
    float *enc, *logits, *qk;
};

#define TOKS 60 /* 3, then 1, then 56: the last are many (packed keys) */

/* Encode a generated mel and decode TOKS tokens in three calls; logits of every position. */
static int run_model(const struct vt_whisper_model *m, struct run *r)
{
    const struct vt_whisper_dims *d = vt_whisper_model_dims(m);
    size_t S = (size_t)d->n_audio_state, A = (size_t)d->n_audio_ctx, V = (size_t)d->n_vocab;
    size_t nh = 0;
    float *mel = malloc((size_t)d->n_mels * 2 * A * sizeof(float));
    struct vt_whisper_kv *kv = NULL;
    int32_t tok[TOKS];
    char err[256];
    int rc = -1, at = 0;
    const int parts[3] = {3, 1, TOKS - 4};

    vt_whisper_model_alignment_heads(m, &nh);
    r->enc = malloc(A * S * sizeof(float));
    r->logits = malloc(TOKS * V * sizeof(float));
    r->qk = malloc(nh * TOKS * A * sizeof(float));
    for (size_t i = 0; i < (size_t)d->n_mels * 2 * A; i++)
        mel[i] = hashf(i, 5);
    for (int i = 0; i < TOKS; i++)
        tok[i] = (int32_t)((i * 7919u) % V);
    if (vt_whisper_encode(m, mel, r->enc, err, sizeof(err)) != 0)
        goto out;
    kv = vt_whisper_kv_new(m, r->enc);
    if (!kv)
        goto out;
    for (int i = 0; i < 3; i++) {
        float *qk = malloc(nh * (size_t)parts[i] * A * sizeof(float));
        struct vt_whisper_decode_out o = {.logits_all = r->logits + (size_t)at * V, .cross_qk = qk};

        if (!qk || vt_whisper_decode(kv, tok + at, parts[i], &o, err, sizeof(err)) != 0) {
            free(qk);
            goto out;
        }
        for (size_t h = 0; h < nh; h++) /* [head][token][frame], whatever the calls */
            memcpy(r->qk + (h * TOKS + (size_t)at) * A, qk + h * parts[i] * A,
                   (size_t)parts[i] * A * sizeof(float));
        free(qk);
        at += parts[i];
    }
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "  run_model: %s\n", err);
    vt_whisper_kv_free(kv);
    free(mel);
    return rc;
}

static void run_free(struct run *r)
{
    free(r->enc);
    free(r->logits);
    free(r->qk);
}

VT_TEST(whisper_kern_heads_64)
{
    /* 2 heads of 64; 150 frames (not a multiple of 16, above the packing threshold);
     * a vocabulary whose last panel is cut short */
    struct vt_whisper_dims d = {80, 150, 128, 2, 2, 1003, 64, 128, 2, 2};
    struct vt_whisper_model *m = NULL;
    struct run v = {0}, g = {0};
    char err[256];
    size_t nh = 0;

    CHECK(vt_whisper_model_random(&d, 7, 2, &m, err, sizeof(err)) == 0);
    if (!m)
        return;
    vt_whisper_model_alignment_heads(m, &nh);
    vt_wk_use_generic(0);
    CHECK(run_model(m, &v) == 0);
    vt_wk_use_generic(1);
    CHECK(run_model(m, &g) == 0);
    vt_wk_use_generic(0);
    if (v.qk && g.qk) {
        double e_enc = max_diff(v.enc, g.enc, (size_t)150 * 128);
        double e_log = max_diff(v.logits, g.logits, (size_t)TOKS * 1003);
        double e_qk = max_diff(v.qk, g.qk, nh * TOKS * 150);

        fprintf(stderr, "  vector vs scalar: encoder %.2g, logits %.2g, cross q.k %.2g\n", e_enc,
                e_log, e_qk);
        CHECK(e_enc < 1e-3);
        CHECK(e_log < 1e-3);
        CHECK(e_qk < 1e-3);
    }
    run_free(&v);
    run_free(&g);
    vt_whisper_model_free(m);
}
