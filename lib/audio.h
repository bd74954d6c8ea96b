/*
 * Decoding a file's audio for speech recognition: the best audio stream, downmixed to mono
 * and resampled to 16 kHz signed 16-bit samples (what PocketSphinx's acoustic models want),
 * placed on the file's own time line so that sample i plays i / VT_AUDIO_RATE_HZ seconds
 * after the file's start.
 */
#ifndef VT_AUDIO_H
#define VT_AUDIO_H

#include "stage.h"

#include <stddef.h>
#include <stdint.h>

#define VT_AUDIO_RATE_HZ 16000

/*
 * Decode the best audio stream of path (opened through vt_media_open) into *pcm, caller
 * frees with free(); *n_samples gets its length, at most VT_MEDIA_MAX_DURATION_S seconds
 * (the rest is dropped). A stream starting after the file's start is preceded by silence,
 * gaps in its timestamps are filled with silence, overlaps are dropped; jumps of more than
 * 10 minutes forward or 1 s back are taken for timestamp resets and the samples just follow.
 * Returns 0, VT_SKIP with "no audio stream" in err, or a negative VT_E* code with the
 * message in err; *pcm is NULL and *n_samples 0 unless 0 is returned.
 */
int vt_audio_load(const char *path, int16_t **pcm, size_t *n_samples, char *err, size_t errlen);

#endif
