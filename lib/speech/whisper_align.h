/*
 * Word timings from Whisper's cross-attention (openai/whisper's timing.py): the decoder is
 * run once over the start sequence, <|notimestamps|>, a window's text tokens and
 * <|endoftext|>; the scaled q.k of the alignment heads (ml/whisper_model.h) over the
 * window's frames are softmaxed, normalised per head (mean and std over tokens), median-
 * filtered (width 7) and averaged; dynamic time warping over minus that matrix gives each
 * token its frames; tokens are grouped into words (split at spaces and punctuation, or per
 * character for languages without spaces), punctuation is merged into its neighbour, and
 * transcribe.py's corrections apply (words longer than twice the median duration cut at
 * sentence ends, the first and last word of a segment held to the segment's timestamps).
 */
#ifndef VT_WHISPER_ALIGN_H
#define VT_WHISPER_ALIGN_H

#include "speech/whisper.h"

#include <stddef.h>
#include <stdint.h>

/*
 * Time the words of the segments seg[0..n) decoded from one window: features are the
 * window's encoder output, sot the start sequence used (n_sot ids), num_frames the window's
 * content frames (mel frames, 100 per second), t0 the window's start in seconds on the
 * caller's time line. Each segment's words and n_words are set (words owned by the segment).
 * 0, VT_ENOMEM or VT_EINVAL with one line in err; on error the segments keep no words.
 */
int vt_whisper_align(const struct vt_whisper_model *model, struct vt_tiktoken *tok,
                     const float *features, const int32_t *sot, size_t n_sot,
                     struct vt_whisper_segment *seg, size_t n, int num_frames, double t0,
                     char *err, size_t errlen);

#endif
