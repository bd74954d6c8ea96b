/*
 * The stt stage: speech recognition with PocketSphinx, in process. The audio is cut at
 * pauses, as it is decoded, into segments that are recognised on all cores in parallel, one
 * decoder per worker thread created once and reused; the words come back with timings on
 * the audio's time line and a confidence, grouped into cues (transcript.h).
 */
#ifndef VT_STT_H
#define VT_STT_H

#include "stage.h"
#include "transcript.h"

#include <stddef.h>
#include <stdint.h>

struct vt_stt;

/*
 * Load nthreads decoders (0 = number of cores, at most 8: each holds about 95 MB) with the US
 * English model of Debian's pocketsphinx-en-us package, or of $VIDTHEQUE_PS_MODEL_DIR (a directory
 * holding en-us/, en-us.lm.bin and cmudict-en-us.dict). Takes about a second per decoder. NULL with
 * a message in err when the model or the library is missing. PocketSphinx's log is switched off for
 * the whole process.
 */
struct vt_stt *vt_stt_new(int nthreads, char *err, size_t errlen);
/* Provenance, e.g. "pocketsphinx 5prealpha, hmm en-us, lm en-us.lm.bin, dict
 * cmudict-en-us.dict"; borrowed for the life of stt. */
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
