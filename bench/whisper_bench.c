/*
 * Whisper's cost on real shapes without trained weights (bench/whisper_bench.sh drives it):
 * the audio of a WAV cut by the stt stage's own segmenter (vt_stt_cut_for, energy, with the
 * lengths it uses for Whisper: segments of 20 to 29 s where pauses allow), each
 * segment on one of W worker threads (one per core, as the stage runs them), through what
 * vt_whisper_transcribe does per 30 s window: the log-mel window, the encoder, the decoder
 * fed the start sequence and then one token at a time, and the alignment's pass (the
 * decoder over the whole text with the alignment heads' cross-attention recorded).
 *
 * Random weights (vt_whisper_model_random) decode nonsense and stop wherever they stop, so
 * the number of tokens decoded per segment is fixed instead: the real transcript's tokens
 * (TRANSCRIPT, the text said in the WAV, encoded with gpt2.tiktoken) per second of the
 * segments' audio, times the segment's duration, plus two timestamp tokens. Tokens are fed greedily
 * (the argmax of the logits, which costs what the real decoder's argmax costs; its logit filters
 * are a few passes over n_vocab floats and are not counted).
 *
 * Usage: whisper_bench WAV tiny|base|small ASSETS_DIR TRANSCRIPT WORKERS
 * (ASSETS_DIR holds mel_filters.npz and gpt2.tiktoken)
 * Prints one line: audio_s wall_s mel_s encoder_s decoder_s align_s segments tokens
 * (the phase times are summed over the workers: their shares are what counts).
 */
#include "base/util.h"
#include "media/audio.h"
#include "ml/tiktoken.h"
#include "ml/whisper_model.h"
#include "speech/stt_int.h"
#include "speech/whisper_mel.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct bench {
    const struct vt_whisper_model *m;
    const struct vt_whisper_mel *mel;
    const int16_t *pcm;
    struct vt_stt_cuts cuts;
    double tokens_per_s;
    pthread_mutex_t mu;
    size_t next;
    double mel_s, enc_s, dec_s, align_s;
    long tokens;
    int failed;
};

static int argmax(const float *v, int n)
{
    int b = 0;

    for (int i = 1; i < n; i++)
        if (v[i] > v[b])
            b = i;
    return b;
}

/* One segment: mel, encoder, n_text greedy steps, the alignment pass. */
static int run_segment(struct bench *b, size_t start, size_t end, double t[4], long *tokens)
{
    const struct vt_whisper_dims *d = vt_whisper_model_dims(b->m);
    size_t n = end - start;
    int n_text = (int)lround(b->tokens_per_s * (double)n / 16000.0) + 2;
    int limit = d->n_text_ctx / 2 - 4, rc = -1;
    float *x = vt_xmalloc(n * sizeof(*x));
    float *mel = vt_xmalloc((size_t)d->n_mels * VT_WMEL_N_FRAMES * sizeof(*mel));
    float *feat = vt_xmalloc((size_t)d->n_audio_ctx * d->n_audio_state * sizeof(*feat));
    int32_t *seq = vt_xmalloc((size_t)d->n_text_ctx * sizeof(*seq));
    struct vt_whisper_kv *kv = NULL;
    char err[256];
    double t0;
    int n_seq = 0;

    if (n_text > limit)
        n_text = limit;
    for (size_t i = 0; i < n; i++)
        x[i] = b->pcm[start + i] / 32768.0f;
    t0 = now_s();
    if (vt_whisper_mel_window(b->mel, x, n, mel, err, sizeof(err)))
        goto out;
    t[0] += now_s() - t0;
    t0 = now_s();
    if (vt_whisper_encode(b->m, mel, feat, err, sizeof(err)))
        goto out;
    t[1] += now_s() - t0;
    t0 = now_s();
    kv = vt_whisper_kv_new(b->m, feat);
    if (!kv)
        goto out;
    /* <|startoftranscript|><|en|><|transcribe|> on a multilingual vocabulary, or sot */
    seq[n_seq++] = 50258;
    if (d->n_vocab > 51864) {
        seq[n_seq++] = 50259;
        seq[n_seq++] = 50359;
    }
    {
        float *logits = vt_xmalloc((size_t)d->n_vocab * sizeof(*logits));
        struct vt_whisper_decode_out o = {.logits = logits};
        int fed = 0;

        for (int k = 0; k < n_text; k++) {
            if (vt_whisper_decode(kv, seq + fed, n_seq - fed, &o, err, sizeof(err))) {
                free(logits);
                goto out;
            }
            fed = n_seq;
            /* any text token: the random model's choice, kept below the specials */
            seq[n_seq++] = argmax(logits, d->n_vocab) % 50000;
        }
        free(logits);
    }
    t[2] += now_s() - t0;
    t0 = now_s();
    {
        size_t n_heads;
        vt_whisper_model_alignment_heads(b->m, &n_heads);
        float *qk = vt_xmalloc(n_heads * (size_t)(n_seq + 2) * d->n_audio_ctx * sizeof(*qk));
        struct vt_whisper_decode_out o = {.cross_qk = qk};

        vt_whisper_kv_rewind(kv, 0);
        seq[n_seq++] = 50257; /* <|endoftext|>, as timing.py feeds it */
        rc = vt_whisper_decode(kv, seq, n_seq, &o, err, sizeof(err));
        free(qk);
    }
    t[3] += now_s() - t0;
    *tokens += n_text;
out:
    if (rc)
        fprintf(stderr, "whisper_bench: %s\n", err);
    vt_whisper_kv_free(kv);
    free(seq);
    free(feat);
    free(mel);
    free(x);
    return rc;
}

static void *worker(void *arg)
{
    struct bench *b = arg;
    double t[4] = {0};
    long tokens = 0;

    for (;;) {
        size_t i;

        pthread_mutex_lock(&b->mu);
        i = b->next++;
        pthread_mutex_unlock(&b->mu);
        if (i >= b->cuts.n)
            break;
        if (run_segment(b, b->cuts.seg[i].start, b->cuts.seg[i].end, t, &tokens)) {
            b->failed = 1;
            break;
        }
    }
    pthread_mutex_lock(&b->mu);
    b->mel_s += t[0];
    b->enc_s += t[1];
    b->dec_s += t[2];
    b->align_s += t[3];
    b->tokens += tokens;
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* The tokens of the text file at path (into *tokens, as a double). */
static int count_tokens(const char *vocab, const char *path, double *tokens, char *err,
                        size_t errlen)
{
    struct vt_tiktoken *t = NULL;
    char *text = NULL;
    size_t len = 0, k = 0;
    const int32_t *ids;
    int rc = vt_tiktoken_load(vocab, 0, &t, err, errlen);

    if (!rc)
        rc = vt_read_file_capped(path, "transcript", 1 << 24, &text, &len, err, errlen);
    if (!rc)
        rc = vt_tiktoken_encode(t, text, len, &ids, &k);
    *tokens = (double)k;
    free(text);
    vt_tiktoken_free(t);
    return rc;
}

/* openai/whisper's published dimensions (model.py's ModelDimensions of each checkpoint). */
static int shape(const char *name, struct vt_whisper_dims *d)
{
    int state = 0, head = 0, layer = 0;

    if (!strcmp(name, "tiny"))
        state = 384, head = 6, layer = 4;
    else if (!strcmp(name, "base"))
        state = 512, head = 8, layer = 6;
    else if (!strcmp(name, "small"))
        state = 768, head = 12, layer = 12;
    else
        return -1;
    *d = (struct vt_whisper_dims){80, 1500, state, head, layer, 51864, 448, state, head, layer};
    return 0;
}

int main(int argc, char **argv)
{
    struct bench b = {0};
    struct vt_whisper_dims d;
    struct vt_whisper_model *m = NULL;
    struct vt_whisper_mel *mel = NULL;
    int16_t *pcm = NULL;
    size_t n = 0;
    char err[512];
    int workers = argc == 6 ? atoi(argv[5]) : 0;
    pthread_t tid[16];
    double t0;

    if (argc != 6 || shape(argv[2], &d) || workers < 1 || workers > 16) {
        fprintf(stderr, "usage: whisper_bench WAV tiny|base|small ASSETS_DIR TRANSCRIPT WORKERS\n");
        return 2;
    }
    char *mel_path = vt_xasprintf("%s/mel_filters.npz", argv[3]);
    char *tok_path = vt_xasprintf("%s/gpt2.tiktoken", argv[3]);
    if (vt_audio_load(argv[1], &pcm, &n, err, sizeof(err)) ||
        vt_whisper_mel_open(mel_path, d.n_mels, &mel, err, sizeof(err)) ||
        count_tokens(tok_path, argv[4], &b.tokens_per_s, err, sizeof(err)) ||
        vt_stt_cut_for(NULL, 1, pcm, n, 4 * 16000, &b.cuts, err, sizeof(err)) ||
        vt_whisper_model_random(&d, 23, workers > 1 ? 1 : 0, &m, err, sizeof(err))) {
        fprintf(stderr, "whisper_bench: %s\n", err);
        return 1;
    }
    b.m = m;
    b.mel = mel;
    b.pcm = pcm;
    {
        double speech_s = 0;

        for (size_t i = 0; i < b.cuts.n; i++)
            speech_s += (double)(b.cuts.seg[i].end - b.cuts.seg[i].start) / 16000.0;
        b.tokens_per_s = speech_s > 0 ? b.tokens_per_s / speech_s : 0;
    }
    free(mel_path);
    free(tok_path);
    pthread_mutex_init(&b.mu, NULL);
    t0 = now_s();
    for (int i = 0; i < workers; i++)
        pthread_create(&tid[i], NULL, worker, &b);
    for (int i = 0; i < workers; i++)
        pthread_join(tid[i], NULL);
    printf("%.2f %.3f %.3f %.3f %.3f %.3f %zu %ld\n", (double)n / 16000.0, now_s() - t0, b.mel_s,
           b.enc_s, b.dec_s, b.align_s, b.cuts.n, b.tokens);
    free(b.cuts.seg);
    vt_whisper_model_free(m);
    vt_whisper_mel_free(mel);
    free(pcm);
    return b.failed;
}
