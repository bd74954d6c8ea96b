/*
 * Grouping timed words into cues the way a careful subtitler would: a new cue at every
 * real pause, none longer than about seven seconds or two lines of about 42 characters,
 * the two lines broken at the word boundary that balances them best, and never a word cut
 * in two. The input is whatever the recogniser or a caption file gave, so nothing about it
 * is trusted: times may be equal, reversed or NaN, and a single word may be longer than a
 * line (it then gets a cue, or a line, of its own). And bounding any transcript by the
 * media it belongs to (vt_transcript_bound), so a caption file cannot make it unbounded.
 */
#include "text/transcript.h"

#include "base/util.h"

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

/* ---- bounding a transcript by its media ---- */

struct cue_order {
    double start_s;
    size_t i;
};

static int by_start(const void *a, const void *b)
{
    const struct cue_order *x = a, *y = b;

    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Time order, keeping the order of cues that start together. */
static void sort_cues(struct vt_transcript *t)
{
    struct cue_order *o;
    struct vt_cue *sorted;
    size_t i;

    for (i = 1; i < t->n_cues && t->cues[i - 1].start_s <= t->cues[i].start_s; i++)
        ;
    if (i >= t->n_cues)
        return;
    o = vt_xcalloc(t->n_cues, sizeof(*o));
    for (i = 0; i < t->n_cues; i++) {
        o[i].start_s = isfinite(t->cues[i].start_s) ? t->cues[i].start_s : 0;
        o[i].i = i;
    }
    qsort(o, t->n_cues, sizeof(*o), by_start);
    sorted = vt_xcalloc(t->n_cues, sizeof(*sorted));
    for (i = 0; i < t->n_cues; i++)
        sorted[i] = t->cues[o[i].i];
    free(t->cues);
    t->cues = sorted;
    free(o);
}

/* Cut c's text to VT_CUE_MAX_BYTES and its words to those inside it; 1 when cut. */
static int cut_cue(struct vt_cue *c)
{
    size_t len = c->text ? strlen(c->text) : 0, keep = c->n_words, at = 0;
    int cut = 0;

    if (len > VT_CUE_MAX_BYTES) {
        len = VT_CUE_MAX_BYTES;
        while (len && ((unsigned char)c->text[len] & 0xc0) == 0x80)
            len--; /* not inside a character */
        c->text[len] = '\0';
        cut = 1;
        /* the words still in the text, in order */
        for (keep = 0; keep < c->n_words; keep++) {
            const char *w = c->words[keep].text ? c->words[keep].text : "";
            const char *hit = strstr(c->text + at, w);

            if (!hit)
                break;
            at = (size_t)(hit - c->text) + strlen(w);
        }
    }
    if (keep > VT_CUE_MAX_WORDS)
        keep = VT_CUE_MAX_WORDS;
    if (keep < c->n_words) {
        for (size_t k = keep; k < c->n_words; k++)
            free(c->words[k].text);
        c->n_words = keep;
        cut = 1;
    }
    return cut;
}

/* Drop c's words that start at or after end_s, end the others there. */
static void clip_words(struct vt_cue *c, double end_s)
{
    size_t keep = 0;

    for (size_t k = 0; k < c->n_words; k++) {
        if (!(c->words[k].start_s < end_s)) {
            free(c->words[k].text);
            continue;
        }
        c->words[keep] = c->words[k];
        if (c->words[keep].end_s > end_s)
            c->words[keep].end_s = end_s;
        keep++;
    }
    c->n_words = keep;
}

void vt_transcript_bound(struct vt_transcript *t, double duration_s, struct vt_bound_report *rep)
{
    struct vt_bound_report r = {0};
    int known = duration_s > 0 && isfinite(duration_s);
    size_t keep = 0, window = 0;

    sort_cues(t);
    for (size_t i = 0; i < t->n_cues; i++) {
        struct vt_cue *c = &t->cues[i];

        if (known && !(c->start_s < duration_s)) {
            r.past_end++;
            vt_cue_release(c);
            continue;
        }
        /* kept cues t->cues[window..keep) start within the 60 s before this one */
        while (window < keep && !(t->cues[window].start_s > c->start_s - 60.0))
            window++;
        if (keep - window >= VT_CUES_PER_MINUTE) {
            r.over_rate++;
            vt_cue_release(c);
            continue;
        }
        if (known && c->end_s > duration_s) {
            c->end_s = duration_s;
            clip_words(c, duration_s);
        }
        r.cut += cut_cue(c);
        t->cues[keep++] = *c;
    }
    t->n_cues = keep;
    if (!keep) {
        free(t->cues);
        t->cues = NULL;
    }
    if (rep)
        *rep = r;
}
