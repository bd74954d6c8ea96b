/*
 * Inside of the stt stage (stt.h), shared by stt.c (the streaming segmenter and the worker
 * threads) and stt_openai.c (the transcription-server client that recognises one segment),
 * and the unit tests of both; by no one else.
 */
#ifndef VT_STT_INT_H
#define VT_STT_INT_H

#include "text/transcript.h"

#include <stddef.h>
#include <stdint.h>

/* A transcription server, as the client needs it; strings owned by the struct. */
struct vt_stt_openai {
    char *url;      /* {base}/v1/audio/transcriptions */
    char *model;    /* the server's model name */
    char *api_key;  /* NULL or "": none */
    char *language; /* ISO 639-1/3 code hint, NULL: none */
    double timeout_s;
    int retries;
};

/*
 * Send n samples of 16 kHz mono audio (which start seg_start_s into the file) as a WAV to
 * the server and append the words it heard, on the file's time line, to *words (grown with
 * vt_grow; texts owned by the caller). reported (reported_len bytes) gets the model name
 * the server says it used, "" if none. 0, or VT_EIO (may pass: no connection, timeouts,
 * 5xx, an answer that is not verbose_json, timings outside the segment) or VT_EINVAL (4xx)
 * with one line in err.
 */
int vt_stt_openai_segment(const struct vt_stt_openai *cfg, const int16_t *pcm, size_t n,
                          double seg_start_s, struct vt_word **words, size_t *n_words,
                          size_t *cap_words, char *reported, size_t reported_len, char *err,
                          size_t errlen);

/*
 * Parse a verbose_json answer for a segment of dur_s seconds starting seg_start_s into the
 * file (the network-free half of vt_stt_openai_segment, for tests): word timings when the
 * answer has them (top-level "words", or "words" inside each segment), else each segment's
 * words spread evenly over its span. Times more than VT_STT_TIMING_SLACK_S outside
 * [0, dur_s] reject the answer (VT_EIO); within that slack they are clamped.
 */
#define VT_STT_TIMING_SLACK_S 0.5
int vt_stt_openai_parse(const char *body, size_t len, double seg_start_s, double dur_s,
                        struct vt_word **words, size_t *n_words, size_t *cap_words, char *reported,
                        size_t reported_len, char *err, size_t errlen);

/*
 * The in-process Whisper recogniser (stt_whisper.c): one model and filterbank shared by the
 * workers, a tokenizer per worker.
 */
struct vt_stt_whisper;
struct vt_stt_hints;
/*
 * Open the checkpoint at path (whisper_model.h: an HF folder or a ggml file) for n_workers
 * workers, each call of the network using n_threads (0: one per core), with the vocabulary
 * and filterbank found beside it, in $VIDTHEQUE_WHISPER_ASSETS or VT_WHISPER_ASSETS_DIR.
 * 0, or a negative VT_E* code with one line in err.
 */
int vt_stt_whisper_open(const char *path, int n_workers, int n_threads, struct vt_stt_whisper **out,
                        char *err, size_t errlen);
void vt_stt_whisper_free(struct vt_stt_whisper *w);
/* "safetensors F16", "ggml Q8_0": the weights' format; borrowed. */
const char *vt_stt_whisper_format(const struct vt_stt_whisper *w);
/* The language of the next segments (an ISO 639-1 code Whisper knows; NULL or another:
 * detected). An English-only model always transcribes English. */
void vt_stt_whisper_set_language(struct vt_stt_whisper *w, const char *code);
/*
 * The initial prompt of the next segments from the hints' words (finished; borrowed for
 * the call), the most frequent first, as many as fit in n_text_ctx / 2 - 1 tokens (what
 * decoding.py keeps of a prompt); NULL or no word: none. Returns the words used.
 */
size_t vt_stt_whisper_set_prompt(struct vt_stt_whisper *w, const struct vt_stt_hints *h);
/*
 * Transcribe one segment (n samples of 16 kHz audio starting seg_start_s into the file) on
 * worker number worker (0 .. n_workers - 1; one call per worker at a time), appending its
 * words on the file's time line to *words (grown with vt_grow; texts owned by the caller).
 * 0, or a negative VT_E* code with one line in err.
 */
int vt_stt_whisper_segment(struct vt_stt_whisper *w, int worker, const int16_t *pcm, size_t n,
                           double seg_start_s, struct vt_word **words, size_t *n_words,
                           size_t *cap_words, char *err, size_t errlen);

struct vt_vad;

/* For tests: the segments the streaming segmenter cuts, noted instead of recognised. */
struct vt_stt_cuts {
    struct {
        size_t start, end; /* samples */
    } * seg;               /* caller frees */
    size_t n, cap;
    size_t pcm_peak; /* the most samples of audio held at once */
};

/*
 * Cut n samples of 16 kHz audio into segments as vt_stt_run would, with Silero (vad) or
 * the energy detector (NULL), reading them in blocks of block samples (1 to 4 s' worth; the
 * stage reads 4 s), into out (zeroed by the caller). 0 or VT_EINVAL.
 */
int vt_stt_cut(const struct vt_vad *vad, const int16_t *pcm, size_t n, size_t block,
               struct vt_stt_cuts *out, char *err, size_t errlen);
/* The same with the segment lengths of a Whisper recogniser (whisper non-zero): pauses up
 * to 3 s inside a segment, cut between 20 and 29 s. */
int vt_stt_cut_for(const struct vt_vad *vad, int whisper, const int16_t *pcm, size_t n,
                   size_t block, struct vt_stt_cuts *out, char *err, size_t errlen);

#endif
