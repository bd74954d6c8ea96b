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
 * caller's time line. Each segment's words and n_words are set (words owned by the segment;
 * words it held are freed) and, as transcribe.py does, its start and end move to its first
 * and last word's unless those are too long. last_speech is where the speech before the
 * window ended, on the caller's time line (transcribe.py's last_speech_timestamp: the end of
 * the last word timed so far, or the start of the audio). Those corrections clamp at 0
 * and halve times as transcribe.py does, so times should count from the start of the
 * audio (whisper.c passes them so and moves the results to its t0 afterwards).
 * 0, VT_ENOMEM or VT_EINVAL with one line in err; on error the segments keep no words.
 */
int vt_whisper_align(const struct vt_whisper_model *model, struct vt_tiktoken *tok,
                     const float *features, const int32_t *sot, size_t n_sot,
                     struct vt_whisper_segment *seg, size_t n, int num_frames, double t0,
                     double last_speech, char *err, size_t errlen);

/*
 * The steps, exposed for the unit tests (which check each against whisper_align_ref.py).
 *
 * vt_whisper_align_matrix: qk holds [n_heads][n_tok][n_frames], the scaled q.k of the n_tok
 * tokens fed (n_sot start tokens, <|notimestamps|>, the text, <|endoftext|>; n_tok >= n_sot
 * + 2) over the window's first n_frames audio positions; out gets [n_tok - n_sot - 1]
 * [n_frames]: the heads' softmaxed, normalised, median-filtered mean, for <|notimestamps|>
 * and the text tokens.
 */
void vt_whisper_align_matrix(const float *qk, int n_heads, int n_tok, int n_frames, int n_sot,
                             float *out);
/* timing.py's median_filter of one row of n values into out (reflect padding; a copy when
 * n <= width / 2; NaN sorts last, as torch's sort). */
void vt_whisper_median_filter(const double *x, int n, int width, double *out);
/* timing.py's dtw_cpu and backtrace over the n x m costs x (minus the matrix): the path's
 * text and time indices into ti and tj (room for n + m each; a time index may be -1 where
 * the path runs along the border), its length returned. */
size_t vt_whisper_dtw(const float *x, int n, int m, int32_t *ti, int32_t *tj);
/*
 * vt_whisper_align past the network: qk as vt_whisper_align_matrix's (n_tok = n_sot + 2 +
 * the segments' text tokens), probs the text tokens' probabilities (softmax over the
 * ordinary tokens of the logits at the position before each), n_frames audio positions.
 */
int vt_whisper_align_qk(struct vt_tiktoken *tok, const int32_t *sot, size_t n_sot, const float *qk,
                        int n_heads, int n_frames, const double *probs,
                        struct vt_whisper_segment *seg, size_t n, double t0, double last_speech,
                        char *err, size_t errlen);

#endif
