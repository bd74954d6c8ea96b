/*
 * Transcripts: words with timings grouped into cues (like subtitles), whether they
 * come from speech recognition (stt.c) or from captions (captions.c). Shared by the
 * stt and chunk stages, the store and the exports.
 */
#ifndef VT_TRANSCRIPT_H
#define VT_TRANSCRIPT_H

#include <stddef.h>

struct vt_word {
    char *text; /* owned, UTF-8, no spaces */
    double start_s, end_s;
    double conf; /* 0..1; 1 when the source gives no confidence */
};

struct vt_cue {
    double start_s, end_s;
    char *text;            /* owned, UTF-8, may hold one '\n' between its two lines */
    struct vt_word *words; /* owned; NULL when the source has no word timings */
    size_t n_words;
};

struct vt_transcript {
    struct vt_cue *cues; /* owned, in time order */
    size_t n_cues;
    char model[160]; /* provenance, e.g. "pocketsphinx 5prealpha en-us (...)" or "captions:srt" */
};

void vt_transcript_release(struct vt_transcript *t);
void vt_cue_release(struct vt_cue *c);

/*
 * Group words into cues like good subtitles: split at pauses, at most about 7 s and
 * 2 lines of text (about 42 characters each), never cutting a word.
 * Appends to t (words are copied).
 */
void vt_cues_from_words(const struct vt_word *words, size_t n, struct vt_transcript *t);

#endif
