/*
 * One 30 s window's decoding, as openai/whisper's decoding.py does it with beam size 1:
 * the initial tokens (<|startofprev|> and the prompt's tail, <|startoftranscript|>, the
 * language and task for multilingual models), the logit filters in DecodingTask's order
 * (SuppressBlank, SuppressTokens, ApplyTimestampRules), greedy or temperature sampling
 * (GreedyDecoder), the no-speech probability, sum and average log-probability and the
 * compression ratio of the text; and detect_language. The transcribe loop (whisper.c)
 * drives it window by window; the filter and the text helpers are exposed for the tests.
 */
#ifndef VT_WHISPER_DECODE_H
#define VT_WHISPER_DECODE_H

#include <stddef.h>
#include <stdint.h>

struct vt_whisper_model;
struct vt_whisper_kv;
struct vt_tiktoken;
struct vt_whisper_specials;

/* What a model and its tokenizer decide once: read-only, shared by the windows. */
struct vt_whisper_dec {
    struct vt_tiktoken *tok;              /* borrowed */
    const struct vt_whisper_specials *sp; /* borrowed from tok */
    int n_vocab, n_text_ctx, n_audio_ctx;
    int english;       /* n_vocab 51864: no language and task tokens */
    int32_t *suppress; /* sorted: non-speech tokens and the specials ("-1") */
    size_t n_suppress; /* 88 for Whisper's vocabularies */
    int32_t blank[8];  /* SuppressBlank's encode(" ") + [eot] */
    size_t n_blank;
};

/*
 * Prepare d for tok and a model of those dimensions; VT_EINVAL when the tokenizer's
 * vocabulary is not the model's. (This, the filter, the initial tokens and the text
 * helpers are in whisper_rules.c: they need no network.)
 */
int vt_whisper_dec_init(struct vt_whisper_dec *d, struct vt_tiktoken *tok, int n_vocab,
                        int n_text_ctx, int n_audio_ctx, char *err, size_t errlen);
void vt_whisper_dec_release(struct vt_whisper_dec *d);

/*
 * The logit filters on one row of n_vocab logits: tokens[0..n) are the sequence so far,
 * sample_begin the length of the initial tokens, mit_index max_initial_timestamp in
 * timestamp steps (< 0: none). Suppressed entries become -INFINITY.
 */
void vt_whisper_filter_logits(const struct vt_whisper_dec *d, float *logits, const int32_t *tokens,
                              size_t n, size_t sample_begin, int mit_index);

/*
 * The initial tokens into out (room for n_text_ctx / 2 + 4): [<|startofprev|>, the last
 * n_text_ctx / 2 - 1 prompt tokens] when n_prompt > 0, then the start sequence with
 * lang_token (a language token, or < 0 for English-only models) and the task. Returns
 * their count; *sot_index gets the position of <|startoftranscript|>.
 */
size_t vt_whisper_initial_tokens(const struct vt_whisper_dec *d, int32_t lang_token, int translate,
                                 const int32_t *prompt, size_t n_prompt, int32_t *out,
                                 size_t *sot_index);

/*
 * detect_language on kv (holding no tokens; left holding none): the decoder on
 * <|startoftranscript|>, the logits of the language tokens only; *lang gets the index of
 * the most probable language (vt_whisper_language_code), *prob its probability.
 */
int vt_whisper_detect_language(const struct vt_whisper_dec *d, struct vt_whisper_kv *kv, int *lang,
                               double *prob, char *err, size_t errlen);

/* One decoding's outcome (decoding.py's DecodingResult). */
struct vt_whisper_decoding {
    int32_t *tokens; /* the sampled tokens without <|endoftext|>; caller frees */
    size_t n_tokens;
    char *text; /* their text without timestamps, stripped; caller frees */
    double sum_logprob, avg_logprob, no_speech_prob, compression_ratio, temperature;
};
void vt_whisper_decoding_release(struct vt_whisper_decoding *r);

/*
 * Feed the initial tokens into kv (holding none): first (n_vocab floats) gets the last
 * position's logits and *no_speech_prob the probability of <|nospeech|> at sot_index.
 * Done once per window; each temperature then samples from there.
 */
int vt_whisper_prefix(const struct vt_whisper_dec *d, struct vt_whisper_kv *kv,
                      const int32_t *initial, size_t n_initial, size_t sot_index, float *first,
                      double *no_speech_prob, char *err, size_t errlen);

/*
 * Sample one decoding after vt_whisper_prefix (kv is rewound to n_initial first):
 * greedy at temperature 0, else from softmax(logits / temperature) with *rng (a seeded
 * state, advanced). At most sample_len tokens, and never past n_text_ctx. *out is
 * replaced (released by the caller with vt_whisper_decoding_release).
 */
int vt_whisper_sample(const struct vt_whisper_dec *d, struct vt_whisper_kv *kv,
                      const int32_t *initial, size_t n_initial, const float *first,
                      double no_speech_prob, double temperature, int sample_len, int mit_index,
                      uint64_t *rng, struct vt_whisper_decoding *out, char *err, size_t errlen);

/*
 * Text of ids as tokenizer.py's decode: timestamps left out, bytes read as UTF-8 with
 * Python's errors="replace" (each maximal invalid piece one U+FFFD); strip: leading and
 * trailing white space removed. Caller frees; NULL when an id is out of range.
 */
char *vt_whisper_text(const struct vt_whisper_dec *d, const int32_t *ids, size_t n, int strip);

/* utils.py's compression_ratio: len(text) / len(zlib.compress(text)); 0 for "". */
double vt_whisper_compression_ratio(const char *text, size_t len);

#endif
