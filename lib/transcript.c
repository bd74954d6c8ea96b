/*
 * Grouping timed words into cues the way a careful subtitler would: a new cue at every
 * real pause, none longer than about seven seconds or two lines of about 42 characters,
 * the two lines broken at the word boundary that balances them best, and never a word cut
 * in two. The input is whatever the recogniser or a caption file gave, so nothing about it
 * is trusted: times may be equal, reversed or NaN, and a single word may be longer than a
 * line (it then gets a cue, or a line, of its own).
 */
#include "transcript.h"

#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A silence at least this long between two words always starts a new cue. */
#define CUE_PAUSE_S 0.6
/* A cue never lasts longer than this (unless one word alone does). */
#define CUE_MAX_S 7.0
/* Characters per line (counted in bytes: close enough for the Latin-script text we get). */
#define CUE_LINE_CHARS 42
#define CUE_MAX_LINES  2

void vt_cue_release(struct vt_cue *c)
{
    if (!c)
        return;
    free(c->text);
    for (size_t i = 0; i < c->n_words; i++)
        free(c->words[i].text);
    free(c->words);
    memset(c, 0, sizeof(*c));
}

void vt_transcript_release(struct vt_transcript *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_cues; i++)
        vt_cue_release(&t->cues[i]);
    free(t->cues);
    t->cues = NULL;
    t->n_cues = 0;
}

/* A time that sorts and subtracts sanely: NaN and negative become 0. */
static double clean_time(double t)
{
    return isfinite(t) && t > 0 ? t : isinf(t) && t > 0 ? 1e9 : 0;
}

static size_t word_len(const struct vt_word *w)
{
    return w->text ? strlen(w->text) : 0;
}

/*
 * Whether words[first..last] (inclusive) fit on at most two lines. *split gets the index
 * of the first word of the second line (last + 1 when one line suffices), chosen so that
 * the longer line is as short as possible.
 */
static int fits_lines(const struct vt_word *words, size_t first, size_t last, size_t *split)
{
    size_t total = 0, best_long = (size_t)-1, left = 0;

    for (size_t i = first; i <= last; i++)
        total += word_len(&words[i]) + (i > first);
    *split = last + 1;
    if (total <= CUE_LINE_CHARS)
        return 1;
    /* Two lines: try every break; left holds the first line's length without spaces after. */
    for (size_t k = first + 1; k <= last; k++) {
        size_t right, longer;

        left += word_len(&words[k - 1]) + (k - 1 > first);
        right = total - left - 1;
        longer = left > right ? left : right;
        if (longer < best_long) {
            best_long = longer;
            *split = k;
        }
    }
    return best_long <= CUE_LINE_CHARS;
}

/* Append the cue made of words[first..last] with its line break before words[split]. */
static void add_cue(struct vt_transcript *t, size_t *cap, const struct vt_word *words, size_t first,
                    size_t last, size_t split)
{
    struct vt_sb sb = {0};
    struct vt_cue *c;
    double end_s = 0;

    vt_grow((void **)&t->cues, cap, t->n_cues + 1, sizeof(*t->cues));
    c = &t->cues[t->n_cues++];
    memset(c, 0, sizeof(*c));
    c->n_words = last - first + 1;
    c->words = vt_xcalloc(c->n_words, sizeof(*c->words));
    for (size_t i = first; i <= last; i++) {
        struct vt_word *w = &c->words[i - first];

        if (i > first)
            vt_sb_addc(&sb, i == split ? '\n' : ' ');
        vt_sb_adds(&sb, words[i].text ? words[i].text : "");
        w->text = vt_xstrdup(words[i].text ? words[i].text : "");
        w->start_s = clean_time(words[i].start_s);
        w->end_s = fmax(w->start_s, clean_time(words[i].end_s));
        w->conf = isfinite(words[i].conf) ? fmin(1, fmax(0, words[i].conf)) : 0;
        end_s = fmax(end_s, w->end_s);
    }
    c->text = vt_sb_detach(&sb);
    c->start_s = c->words[0].start_s;
    c->end_s = fmax(end_s, c->start_s);
}

void vt_cues_from_words(const struct vt_word *words, size_t n, struct vt_transcript *t)
{
    size_t cap = t->n_cues, first = 0;

    /* Words without text (a recogniser's empty token) would make empty cues: skip them. */
    while (first < n) {
        size_t last = first, split = first + 1;
        double start_s = clean_time(words[first].start_s);
        double end_s = fmax(start_s, clean_time(words[first].end_s));

        if (!word_len(&words[first])) {
            first++;
            continue;
        }
        /* Grow the cue word by word while the next word keeps every rule. */
        fits_lines(words, first, last, &split);
        while (last + 1 < n) {
            const struct vt_word *w = &words[last + 1];
            double w_start_s = clean_time(w->start_s);
            double w_end_s = fmax(w_start_s, clean_time(w->end_s));
            size_t s;

            if (!word_len(w))
                break;
            if (w_start_s - end_s >= CUE_PAUSE_S)
                break;
            if (fmax(end_s, w_end_s) - start_s > CUE_MAX_S)
                break;
            if (!fits_lines(words, first, last + 1, &s))
                break;
            last++;
            split = s;
            end_s = fmax(end_s, w_end_s);
        }
        add_cue(t, &cap, words, first, last, split);
        first = last + 1;
    }
}
