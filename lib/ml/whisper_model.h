/*
 * Whisper's network, in process: the encoder-decoder as openai/whisper's model.py defines
 * it, with its weights from a Hugging Face checkpoint (a directory holding config.json and
 * model.safetensors, F32, F16 or BF16, tensor names as transformers' WhisperForConditional-
 * Generation) or a whisper.cpp ggml file (whisper_ggml.h: F32, F16, Q8_0).
 *
 *   encoder: log-mel [n_mels][2 n_audio_ctx] -> conv1 (k3, GELU) -> conv2 (k3, stride 2,
 *            GELU) -> + positional embedding -> n_audio_layer pre-norm blocks (self-attention,
 *            MLP with GELU) -> LayerNorm: the audio features [n_audio_ctx][n_audio_state];
 *   decoder: token embedding + positional embedding -> n_text_layer pre-norm blocks (masked
 *            self-attention with a KV cache, cross-attention over the features, MLP) ->
 *            LayerNorm -> logits against the token embedding (tied).
 *
 * A model is read-only once opened and may be shared by threads; each thread decoding holds
 * its own vt_whisper_kv. Matrix products run on AVX2/FMA when the CPU has them.
 */
#ifndef VT_WHISPER_MODEL_H
#define VT_WHISPER_MODEL_H

#include <stddef.h>
#include <stdint.h>

struct vt_whisper_dims {
    int n_mels, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer;
    int n_vocab, n_text_ctx, n_text_state, n_text_head, n_text_layer;
};

struct vt_whisper_model;

/*
 * Open the checkpoint at path: a directory with config.json and model.safetensors (HF), or
 * a ggml file. n_threads (0: one per core, at most 8) is how many threads one encoder call
 * and one decoder call use. Every file is hostile: shapes must agree with the dimensions,
 * which are bounded; VT_ENOTFOUND / VT_EINVAL / VT_EIO / VT_ENOMEM with one line in err.
 */
int vt_whisper_model_open(const char *path, int n_threads, struct vt_whisper_model **out,
                          char *err, size_t errlen);
/*
 * A model of dimensions d with generated weights (normal, seeded, scaled as whisper_ref.py's
 * make_model does), for benchmarks on real shapes without trained weights.
 */
int vt_whisper_model_random(const struct vt_whisper_dims *d, uint64_t seed, int n_threads,
                            struct vt_whisper_model **out, char *err, size_t errlen);
void vt_whisper_model_free(struct vt_whisper_model *m);

const struct vt_whisper_dims *vt_whisper_model_dims(const struct vt_whisper_model *m);
/* "safetensors F16", "ggml Q8_0", "generated": where the weights came from; borrowed. */
const char *vt_whisper_model_format(const struct vt_whisper_model *m);
/* Bytes the weights take in memory. */
size_t vt_whisper_model_bytes(const struct vt_whisper_model *m);
/*
 * The cross-attention heads that align text to audio, as (layer, head) pairs: the
 * checkpoint's generation_config.json "alignment_heads" when it has them, else model.py's
 * default (every head of the last half of the decoder layers). *n gets their count.
 */
const int (*vt_whisper_model_alignment_heads(const struct vt_whisper_model *m, size_t *n))[2];

/*
 * The encoder on one window: mel is [n_mels][2 n_audio_ctx] (row-major, one row per mel
 * bin), out gets [n_audio_ctx][n_audio_state]. Allocates its scratch per call (bounded by
 * the dimensions), so calls from several threads may run at once. 0 or VT_ENOMEM.
 */
int vt_whisper_encode(const struct vt_whisper_model *m, const float *mel, float *out, char *err,
                      size_t errlen);

/*
 * One decoding's state: the cross-attention keys and values of one window's features
 * (computed once) and the self-attention cache of the tokens fed so far (at most
 * n_text_ctx).
 */
struct vt_whisper_kv;
/* features ([n_audio_ctx][n_audio_state]) are read here, not kept. NULL on ENOMEM. */
struct vt_whisper_kv *vt_whisper_kv_new(const struct vt_whisper_model *m, const float *features);
void vt_whisper_kv_free(struct vt_whisper_kv *kv);
/* Tokens in the cache. */
int vt_whisper_kv_len(const struct vt_whisper_kv *kv);
/* Forget every token past the first n (n <= the length): a prefix shared by two decodings
 * (the prompt and start sequence) is computed once. */
void vt_whisper_kv_rewind(struct vt_whisper_kv *kv, int n);

struct vt_whisper_decode_out {
    float *logits;     /* n_vocab: the last position's logits, or NULL */
    float *logits_all; /* n x n_vocab: every fed position's logits, or NULL */
    /*
     * n_heads x n x n_audio_ctx: for each alignment head (vt_whisper_model_alignment_heads,
     * in that order) the scaled q.k of every fed token against every audio frame, before the
     * softmax (what timing.py's hooks record as QKs), or NULL.
     */
    float *cross_qk;
};

/*
 * Feed n tokens (ids below n_vocab) at positions kv_len .. kv_len + n - 1 and fill what out
 * asks for. VT_EINVAL with one line when an id is out of range or the context would pass
 * n_text_ctx (the cache is then unchanged); VT_ENOMEM.
 */
int vt_whisper_decode(struct vt_whisper_kv *kv, const int32_t *tokens, int n,
                      const struct vt_whisper_decode_out *out, char *err, size_t errlen);

#endif
