/*
 * Where small type is on a frame that Tesseract's page layout did not read (the ocr stage's
 * small-text pass, ocr.c): candidate lines found from their strokes, each polarity apart,
 * short pieces that fill a gap in a row, and columns of short pieces (a code editor's line
 * numbers). Pure image work on Leptonica images; the reading is ocr.c's.
 */
#ifndef VT_OCR_FIND_H
#define VT_OCR_FIND_H

#include "model/frames.h"

#include <leptonica/allheaders.h>
#include <stddef.h>

/* A line box this tall or shorter holds small type (about 20 px or less). */
#define VT_OCR_SMALL_LINE_H 28
/* Columns found a frame, at most. */
#define VT_OCR_COLUMN_MAX 4

/* Whether boxes a and b (x, y, w, h) stand on one row: they overlap vertically by half the
 * shorter height. */
int vt_ocr_one_row(const int *a, const int *b);

/* A column of short pieces: its box (x, y, w, h) and the height of its first piece. */
struct vt_ocr_column {
    int box[4];
    int piece_h;
};

/*
 * Candidate lines of small text in grey (tb: Tesseract's binary image of it, or NULL; screen:
 * the frame had a dark part inverted, so it is a screen) outside the n lines already read,
 * dim type too on a plain ground or a screen: a BOXA (caller destroys) or NULL when there is
 * none; and the columns of short pieces in cols[0..*n_cols-1] (room for VT_OCR_COLUMN_MAX).
 * Dark strokes are looked for, and light ones too when the frame has dark areas that could
 * hold light type; each polarity apart, so that light type on a dark band (a lower third)
 * is not joined to the dark gaps between its letters and lines.
 */
BOXA *vt_ocr_find_small_text(PIX *grey, PIX *tb, int screen, const struct vt_ocr_line *lines,
                             size_t n, struct vt_ocr_column *cols, size_t *n_cols);

/* Dark cells holding light type found a frame, at most (more: a picture's dark shapes). */
#define VT_OCR_CELL_MAX 16

/* A dark cell holding light type: its box (x, y, w, h) and its letters' height. */
struct vt_ocr_cell {
    int box[4];
    int letter_h;
};

/*
 * The dark cells holding light type of Tesseract's binary image tb (reverse video: a
 * terminal's key labels, a tag, a button), in cells[0..] (room for VT_OCR_CELL_MAX): how
 * many; 0 when there are none or more than VT_OCR_CELL_MAX.
 */
size_t vt_ocr_find_reverse(PIX *tb, struct vt_ocr_cell *cells);

#endif
