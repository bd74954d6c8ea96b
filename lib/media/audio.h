/*
 * Decoding a file's audio for speech recognition: the best audio stream, downmixed to mono
 * and resampled to 16 kHz signed 16-bit samples (what PocketSphinx's acoustic models want),
 * placed on the file's own time line so that sample i plays i / VT_AUDIO_RATE_HZ seconds
 * after the file's start.
 */
#ifndef VT_AUDIO_H
#define VT_AUDIO_H

#include "model/stage.h"

#include <stddef.h>
#include <stdint.h>

#define VT_AUDIO_RATE_HZ 16000

struct vt_audio;

/*
 * Open the best audio stream of path (through vt_media_open) for reading with
 * vt_audio_read, in bounded memory whatever its length. Returns 0 with *out to be closed
 * with vt_audio_close, VT_SKIP with "no audio stream" in err, or a negative VT_E* code with
 * the message in err (*out NULL).
 */
int vt_audio_open(const char *path, struct vt_audio **out, char *err, size_t errlen);
/*
 * The next samples of the time line, up to max into buf; *n gets how many, less than max
 * only at the end of the audio (then 0 on every later call). The time line is at most
 * VT_MEDIA_MAX_DURATION_S seconds (the rest is dropped). A stream starting after the file's
 * start is preceded by silence, gaps in its timestamps are filled with silence, overlaps
 * are dropped; jumps of more than 10 minutes forward or 1 s back are taken for timestamp
 * resets and the samples just follow. Returns 0 or a negative VT_E* code with the message
 * in err (a corrupt stream: nothing more should be read).
 */
int vt_audio_read(struct vt_audio *a, int16_t *buf, size_t max, size_t *n, char *err,
                  size_t errlen);
/* The container's duration in seconds (for progress), 0 when it does not say. */
double vt_audio_duration_s(const struct vt_audio *a);
/* Accepts NULL. */
void vt_audio_close(struct vt_audio *a);

/*
 * The whole time line of path's audio (vt_audio_open and vt_audio_read) in one buffer:
 * *pcm, caller frees with free(), *n_samples samples (up to 24 h: 2.8 GB, so only for
 * short files and tests; the stt stage streams). Returns 0, VT_SKIP with "no audio
 * stream" in err, or a negative VT_E* code with the message in err; *pcm is NULL and
 * *n_samples 0 unless 0 is returned.
 */
int vt_audio_load(const char *path, int16_t **pcm, size_t *n_samples, char *err, size_t errlen);

#endif
