/*
 * Chapters from the slides, for a video whose source gives none: a kept frame's title
 * is its largest, top-most OCR line (vt_slide_title); a title that starts a new topic
 * opens a chapter where its shot starts, and a title seen before (the same slide again,
 * its next page, a misread copy) does not (vt_slide_chapters).
 */
#ifndef VT_SLIDE_CHAPTERS_H
#define VT_SLIDE_CHAPTERS_H

#include "model/frames.h"
#include "model/video.h"

#include <stddef.h>

/* The rule's name and version, for the ocr stage's provenance. */
#define VT_SLIDE_CHAPTERS_ALGO "vidtheque-slide-chapters 1"

/* A title has at most this many bytes (a longer top line is prose, not a title). */
#define VT_SLIDE_TITLE_MAX 120

/*
 * The title of a frame height pixels tall (0: unknown) from its OCR lines: among the lines
 * that are not noise, read with confidence >= 0.5 and hold three letters or digits, those
 * at least 0.8 times the tallest one's height, the top-most; a line of the same size right
 * under it continues it (a title on two lines). It must sit in the frame's upper 60 %
 * (a caption at the bottom is not a title) and fit VT_SLIDE_TITLE_MAX. Whitespace is
 * collapsed. NULL when no line qualifies; the caller frees the string.
 */
char *vt_slide_title(const struct vt_ocr_page *page, int height);

/* A kept frame as the chapter rule sees it, in time order. */
struct vt_slide_frame {
    double start_s;    /* when the frame's shot starts: where its chapter would start */
    const char *title; /* vt_slide_title's, NULL for none */
};

/*
 * Chapters of a video duration_s long from its frames' titles, in time order: a title
 * opens a chapter unless it is the same topic as one that opened a chapter before (titles
 * equal once case, punctuation, a trailing page number or "cont." are folded away, within
 * one edit in eight for misreads), or its shot starts no later than the last chapter. A
 * chapter ends where the next starts, the last at duration_s. Fewer than two chapters say
 * nothing about the video's parts: then none. *out (titles owned; free each title, then
 * the array) and *n; returns *n.
 */
size_t vt_slide_chapters(const struct vt_slide_frame *f, size_t n, double duration_s,
                         struct vt_chapter **out, size_t *n_out);

#endif
