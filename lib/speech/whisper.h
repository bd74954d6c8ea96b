/*
 * Whisper's transcription, in process (openai/whisper's transcribe.py and decoding.py, in C):
 * 30 s windows of log-mel (whisper_mel.h) through the network (ml/whisper_model.h), decoded
 * greedily with the reference decoder's rules (the start sequence with language and task,
 * timestamp tokens and their pairing rules, suppressed tokens, the no-speech probability,
 * temperature fallback on compression ratio and average log-probability), the window
 * advancing to the last complete timestamp; words timed by the cross-attention alignment
 * (whisper_align.h).
 *
 * Owned here: the recogniser (a model, its tokenizer and filterbank) and the transcription
 * of a stretch of audio into segments of words. The stt stage (stt.c) cuts the audio at
 * pauses and hands each stretch to vt_whisper_transcribe on a worker thread; a recogniser is
 * shared by the workers (read-only), each call holds its own state.
 */
#ifndef VT_WHISPER_H
#define VT_WHISPER_H

#include <stddef.h>
#include <stdint.h>

struct vt_whisper_model;
struct vt_tiktoken;
struct vt_whisper_mel;

/* The decoding settings; vt_whisper_opts_default gives transcribe.py's defaults. */
struct vt_whisper_opts {
    const char *language; /* "en", "fr"...; NULL: detected per stretch (multilingual) */
    int translate;        /* task translate instead of transcribe */
    double temperatures[8];
    int n_temperatures;                 /* 0, 0.2, 0.4, 0.6, 0.8, 1.0 */
    double compression_ratio_threshold; /* 2.4; <= 0: no check */
    double logprob_threshold;           /* -1.0; NaN: no check */
    double no_speech_threshold;         /* 0.6; NaN: no check */
    int condition_on_previous_text;     /* 1 */
    const char *initial_prompt;         /* NULL: none */
    int word_timestamps;                /* 1: the alignment times each word */
    double max_initial_timestamp;       /* 1.0 s */
    int sample_len;                     /* 0: n_text_ctx / 2 */
    uint64_t seed;                      /* of the sampling at temperatures above 0 */
};
void vt_whisper_opts_default(struct vt_whisper_opts *o);

struct vt_whisper_word {
    double start, end; /* seconds on the caller's time line */
    char *text;        /* as spoken, with its leading space: " Ask" */
    float prob;        /* the mean probability of its tokens */
};

struct vt_whisper_segment {
    double start, end;
    char *text;
    int32_t *tokens; /* text and timestamp tokens */
    size_t n_tokens;
    double avg_logprob, compression_ratio, no_speech_prob, temperature;
    struct vt_whisper_word *words;
    size_t n_words;
};

struct vt_whisper_result {
    struct vt_whisper_segment *seg;
    size_t n, cap;
    char language[8]; /* the language used (given or detected) */
};
void vt_whisper_result_release(struct vt_whisper_result *r);

/*
 * Transcribe n samples of 16 kHz mono audio (floats in [-1, 1]) into *out (zeroed by the
 * caller, released with vt_whisper_result_release also after an error), times offset by
 * t0 seconds. tok must be the model's vocabulary, mel its filterbank (n_mels bins). 0, or a
 * negative VT_E* code with one line in err. Memory is bounded by one window whatever n.
 */
int vt_whisper_transcribe(const struct vt_whisper_model *model, struct vt_tiktoken *tok,
                          const struct vt_whisper_mel *mel, const float *pcm, size_t n, double t0,
                          const struct vt_whisper_opts *opts, struct vt_whisper_result *out,
                          char *err, size_t errlen);

#endif
