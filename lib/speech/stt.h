/*
 * The stt stage: speech recognition with PocketSphinx, in process, or by an OpenAI-compatible
 * transcription server. The audio is cut at pauses, as it is decoded, into segments that are
 * recognised in parallel: on all cores, one decoder per worker thread created once and
 * reused, or as concurrent requests to the server; the words come back with timings on the
 * audio's time line and a confidence, grouped into cues (transcript.h).
 */
#ifndef VT_STT_H
#define VT_STT_H

#include "model/stage.h"
#include "text/transcript.h"

#include <stddef.h>
#include <stdint.h>

struct vt_stt;
struct vt_stt_hints;

/* The longest provenance string of a recogniser (vt_stt_model), with its NUL. */
#define VT_STT_MODEL_MAX 160

/*
 * Load nthreads decoders (0 = number of cores, at most 8: each holds about 95 MB) with the US
 * English model of Debian's pocketsphinx-en-us package, or of $VIDTHEQUE_PS_MODEL_DIR (a directory
 * holding en-us/, en-us.lm.bin and cmudict-en-us.dict). Takes about a second per decoder. NULL with
 * a message in err when the model or the library is missing. PocketSphinx's log is switched off for
 * the whole process.
 */
struct vt_stt *vt_stt_new(int nthreads, char *err, size_t errlen);
/*
 * The same with hints (stt_hints.h, finished): the words a video shows and names, which the
 * decoders expect more than the general model does (interpolated with it) and can say even
 * when the dictionary lacks them (flite's letter-to-sound rules). Only the rare words are
 * used: hints is filtered in place (the words the general model already expects are
 * dropped) and borrowed for the call only; NULL, or no rare word, is vt_stt_new. The model
 * string then ends with "; hints N rare of M word(s) (K new) at W". The decoders know this
 * video's words: free them after it.
 */
struct vt_stt *vt_stt_new_hinted(int nthreads, struct vt_stt_hints *hints, char *err,
                                 size_t errlen);
/* A transcription server: POST {base_url}/v1/audio/transcriptions (OpenAI's API). */
struct vt_stt_server_spec {
    const char *base_url; /* "http://host:port", optionally with a path prefix or "/v1" */
    const char *model;    /* the server's model name, e.g. "whisper-1" */
    const char *api_key;  /* Bearer token when non-NULL and non-empty */
    double timeout_s;     /* per segment's request (0: 300 s) */
    int concurrency;      /* segments in flight (0: 4; at most 16) */
    int retries;          /* attempts per segment on connection errors, timeouts, 429, 5xx (0: 3) */
};

/*
 * A recogniser that sends every segment (16 kHz mono 16-bit WAV, at most 30 s, cut at
 * pauses) to a server, with response_format=verbose_json and word timestamps. Nothing is
 * sent until a run. NULL with one line in err (VT_EINVAL: no URL or model, not http(s)).
 * A run fails with VT_EIO for what may pass (no connection, timeouts, 5xx, an answer that is
 * not verbose_json or whose timings fall outside the segment) and VT_EINVAL for a 4xx.
 * The run's transcript model is "openai-transcribe MODEL at BASE", followed by
 * " (server model NAME)" when the server names the model it used, then "; vad ...".
 */
struct vt_stt *vt_stt_new_server(const struct vt_stt_server_spec *spec, char *err, size_t errlen);
/* Whisper in process (whisper.h): a checkpoint and how to name it in the provenance. */
struct vt_stt_whisper_spec {
    const char *path;     /* a folder with config.json and model.safetensors, or a ggml file */
    const char *name;     /* the model's name for the provenance (NULL: path) */
    const char *revision; /* the pulled commit, NULL when unknown */
    int nthreads;         /* workers (0: one per core, at most 8), each segment on one thread */
};
/*
 * A recogniser that transcribes every segment (at most 30 s, cut at pauses) with Whisper,
 * greedy with temperature fallback and word timings from the cross-attention. The
 * vocabulary and mel filterbank come from the checkpoint's folder, $VIDTHEQUE_WHISPER_ASSETS
 * or the installed ones (base/config.h, VT_WHISPER_ASSETS_DIR). 0 with *out, or a negative
 * VT_E* code with one line in err (a missing or hostile checkpoint names the file and the
 * reason: VT_ENOTFOUND, VT_EINVAL, VT_EIO, VT_ENOMEM). The model string is
 * "whisper NAME (FORMAT, rev COMMIT); greedy, temperatures 0-1.0, beam 1, word timestamps
 * dtw", then "; vad ...".
 */
int vt_stt_new_whisper(const struct vt_stt_whisper_spec *spec, struct vt_stt **out, char *err,
                       size_t errlen);
/*
 * Whisper's initial prompt for the next runs: the words of hints (finished; borrowed for
 * the call), the most frequent first, as many as fit in half the text context. Returns
 * the words used; 0 and no effect for other recognisers.
 */
size_t vt_stt_set_prompt(struct vt_stt *stt, const struct vt_stt_hints *hints);
/* Language hint for the next runs of a server or Whisper recogniser ("en", "en-US" -> "en"; NULL or
 * anything not a language code: none). No effect on PocketSphinx. */
void vt_stt_set_language(struct vt_stt *stt, const char *lang);
/*
 * Which segmenter finds the speech in the next runs: the Silero VAD vad (vad.h, borrowed
 * until set again or stt is freed; its probabilities are computed window by window as the
 * audio is read, and cut by upstream Silero's rules), or NULL: the energy detector, the
 * default. The model strings then end with "; vad silero-16k 6.2.0" or "; vad energy".
 */
struct vt_vad;
void vt_stt_set_vad(struct vt_stt *stt, const struct vt_vad *vad);
/* Provenance, e.g. "pocketsphinx 5prealpha, hmm en-us, lm en-us.lm.bin, dict
 * cmudict-en-us.dict; vad energy"; borrowed for the life of stt. */
const char *vt_stt_model(const struct vt_stt *stt);
void vt_stt_free(struct vt_stt *stt);

/*
 * Recognise n samples of 16 kHz mono audio (audio.h; sample i at i / 16000 s) into *out,
 * zeroed by the caller and released with vt_transcript_release (also after an error).
 * out->model is set. progress (may be NULL) is called on the calling thread only.
 * Returns 0, VT_SKIP with "silence only" in err when no word was heard, or a negative
 * VT_E* code with the message in err. The same audio always gives the same transcript.
 * One call at a time per stt.
 */
int vt_stt_run(struct vt_stt *stt, const int16_t *pcm, size_t n, struct vt_transcript *out,
               vt_progress_fn progress, void *user, char *err, size_t errlen);
/*
 * The same for the audio of the file at path (audio.h), decoded, cut and recognised as it
 * is read: memory stays bounded whatever the duration (about 11 MB of audio look-ahead and
 * two 30 s segments per decoder, besides the words). Also VT_SKIP with "no audio stream".
 */
int vt_stt_run_file(struct vt_stt *stt, const char *path, struct vt_transcript *out,
                    vt_progress_fn progress, void *user, char *err, size_t errlen);

#endif
