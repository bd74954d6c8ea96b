/*
 * The words of a video: words with timings grouped into cues (like subtitles), whether
 * they come from speech recognition or from captions, and the chunks (passages of
 * consecutive cues) that retrieval embeds. Written by lib/speech, lib/captions and
 * lib/text (chunk.c), stored and read back by the store. What works on them lives with
 * the algorithms (text/transcript.h, text/chunk.h).
 */
#ifndef VT_MODEL_TRANSCRIPT_H
#define VT_MODEL_TRANSCRIPT_H

#include <stddef.h>

struct vt_word {
    char *text; /* owned, UTF-8, no spaces */
    double start_s, end_s;
    double conf; /* 0..1; 1 when the source gives no confidence */
};

struct vt_cue {
    double start_s, end_s;
    char *text;            /* owned, UTF-8; lines joined with '\n' (two lines at most from
                            * recognition, captions keep as many as they had) */
    struct vt_word *words; /* owned; NULL when the source has no word timings */
    size_t n_words;
};

/* vt_transcript_release, vt_cue_release: text/transcript.h. */
struct vt_transcript {
    struct vt_cue *cues; /* owned, in time order */
    size_t n_cues;
    char model[160]; /* provenance, e.g. "pocketsphinx 5prealpha en-us (...)" or "captions:srt" */
};

/* A passage of consecutive cues (vt_chunks_free: store.h). */
struct vt_chunk {
    double start_s, end_s;
    char *text; /* owned */
    int first_cue, last_cue;
};

#endif
