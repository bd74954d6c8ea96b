/*
 * Whether a line Tesseract read is text or noise: on photo-like frames (a picture, a
 * fractal, moving colour) Tesseract returns short lines of letters at low confidence
 * ("aN Saks ett a ain t"). A line's plausibility is the share of its letters that stand in
 * dictionary words (English: PocketSphinx's CMU dictionary), or without a dictionary the
 * share of its characters in word-shaped tokens; with its confidence it decides the line
 * (thresholds and how they were chosen: docs/MEASUREMENTS.md, "OCR noise floor").
 */
#ifndef VT_OCR_NOISE_H
#define VT_OCR_NOISE_H

#include <stddef.h>

/* A set of lowercase words. */
struct vt_ocr_dict;

/*
 * Load the words of a CMU-style dictionary file (one "word[(n)] PHONES..." a line).
 * Returns the set (caller frees with vt_ocr_dict_free) or NULL with a message in err
 * when the file cannot be read or holds no word.
 */
struct vt_ocr_dict *vt_ocr_dict_load(const char *path, char *err, size_t errlen);
/* Whether the n bytes at word (any case) are a word of d. */
int vt_ocr_dict_has(const struct vt_ocr_dict *d, const char *word, size_t n);
size_t vt_ocr_dict_size(const struct vt_ocr_dict *d);
void vt_ocr_dict_free(struct vt_ocr_dict *d);

struct vt_ocr_plausibility {
    size_t letters;    /* letters and digits in the line */
    size_t long_words; /* words of 3 letters or more, in d if there is one */
    double
        dict_ratio; /* share of letters and digits in dictionary words or numbers; -1 without d */
    double class_ratio; /* share of non-space characters in word-shaped tokens */
};

/* Measure text (UTF-8) against d (NULL: no dictionary). */
void vt_ocr_plausibility(const char *text, const struct vt_ocr_dict *d,
                         struct vt_ocr_plausibility *p);
/* 1 when a line with this text and confidence (0..1) is noise, 0 when it is text. */
int vt_ocr_line_is_noise(const char *text, double conf, const struct vt_ocr_dict *d);

/*
 * The zeros of a line that Tesseract read as '@', mended in place: the dotted or slashed
 * zero of a terminal's font inside a number ("hojicha-2.8.@", "snow-peas-@.8.3"). An '@'
 * is a zero when no letter touches it and a '.' or digits do: after a '.', before a '.'
 * and a digit, or between two digits; an address or a handle ("a@b.c", "@5minute") stays.
 */
void vt_ocr_mend_zeros(char *line);

#endif
