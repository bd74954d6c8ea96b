/*
 * Transcripts: words with timings grouped into cues (like subtitles), whether they
 * come from speech recognition (stt.c) or from captions (captions.c). The types are
 * lib/model/transcript.h's; these are the functions that build and bound them.
 */
#ifndef VT_TRANSCRIPT_H
#define VT_TRANSCRIPT_H

#include "model/transcript.h"

#include <stddef.h>

/* struct vt_word, vt_cue and vt_transcript are model/transcript.h's. */

void vt_transcript_release(struct vt_transcript *t);
void vt_cue_release(struct vt_cue *c);

/*
 * Group words into cues like good subtitles: split at pauses, at most about 7 s and
 * 2 lines of text (about 42 characters each), never cutting a word.
 * Appends to t (words are copied).
 */
void vt_cues_from_words(const struct vt_word *words, size_t n, struct vt_transcript *t);

/* At most this many cues start within any 60 s of media: two a second, faster than anyone
 * reads. Captions are written for people, so more is padding or an attack. */
#define VT_CUES_PER_MINUTE 120
/* A cue's text is cut at this many bytes (a subtitle holds 2 lines of about 42 characters;
 * a paragraph-long cue still fits); at most this many of its words are kept. */
#define VT_CUE_MAX_BYTES 1000
#define VT_CUE_MAX_WORDS 200

/* What vt_transcript_bound dropped or cut. */
struct vt_bound_report {
    size_t past_end;  /* cues starting at or after the media's end */
    size_t over_rate; /* cues over VT_CUES_PER_MINUTE */
    size_t cut;       /* cues whose text or words were cut */
};

/*
 * Bound a transcript by the media it belongs to, in place: cues that start at or after
 * duration_s are dropped and those that run past it end there (no cut when duration_s is
 * not > 0: unknown), cues are put in time order, then a cue is dropped when
 * VT_CUES_PER_MINUTE kept cues already start in the 60 s before it, and each cue's text
 * is cut to VT_CUE_MAX_BYTES (at a character boundary) and its words to those inside the
 * kept text, at most VT_CUE_MAX_WORDS. Words follow their cue's cut to the duration.
 * rep (may be NULL) gets the counts.
 */
void vt_transcript_bound(struct vt_transcript *t, double duration_s, struct vt_bound_report *rep);

#endif
