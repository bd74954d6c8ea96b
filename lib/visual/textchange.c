/*
 * Text that changes inside a shot (textchange.h). Every analysed frame carries a text grid:
 * 16x6 cells of the 320x180 analysis image, each the number of pixels that step to their
 * right neighbour by a stroke's contrast. Type is dense in such steps and a plain ground has
 * none, so a bullet, a typed word or a title changes the counts of the cells it lands in
 * and leaves the others; the cells average over 20x30 px, so compression noise moves them
 * little. A shot's text is in a state while no cell moves far from the state's first frame
 * for TC_SETTLE_S while the picture holds still (a pan over foliage drifts through states of
 * its own; a change that comes back within TC_SETTLE_S, a blinking cursor, does not end one);
 * each state that differs from every frame taken so far by a local change from its
 * neighbouring state, or for a shot's only state from the shot's chosen frame (some cells,
 * not most: a camera that moved and stopped changes them all) gives one more
 * frame, at the moment it settled (for a fade, where the counts come within a third of the
 * tolerance of the state's middle frame). A screen recording that scrolls and stops would make a
 * state of every stop: at most one frame per TC_PER_S seconds of the shot and
 * VT_TC_MAX_EXTRA in all, the largest change of each stretch of the shot first (spread).
 * States are disjoint and each held TC_SETTLE_S, so their frames are that far apart without
 * a rule of their own. On a screen, a state is also cut where only the finer line grid
 * changes (steps: a tab's page replaced in a box), and text shown again takes a frame that
 * the stage marks a duplicate. Text that never holds (output scrolling past on a screen)
 * gets frames as it passes (turnovers), under the same bounds.
 */
#include "visual/textchange.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TC_EDGE 40 /* a step of this many grey levels to the next pixel is a stroke's */
#define TC_CELL 12 /* a cell changed: its count moved by more than this */
/* A state lasts about half a second at least (a title held, a bullet read, a prompt
 * answered): its first frame to the next state's, on analysed frames 0.04-0.08 s apart, so
 * a state shown 0.5 s can measure a sample less. */
#define TC_SETTLE_S  0.44
#define TC_PER_S     0.5 /* at most one extra frame per this many seconds of the shot */
#define TC_LOCAL     0.5 /* a change of text leaves at least half the cells alone */
#define TC_STILL     2.0 /* a state's picture moves less than this (mean d1, grey levels) */
#define TC_RETYPED   2   /* other type in the same place: this many cells moved a little */
#define TC_BLIP      2   /* a blip (a cursor's blink) changes at most this many cells */
#define TC_LINE_MOVE 3   /* a line grid cell moved by more than this holds other type */
#define TC_LINES     4   /* other type in the same lines: this many line grid cells moved */

/* The cells of two grids of n cells that differ by more than thr, and how much they differ. */
static int grid_changed(const uint8_t *a, const uint8_t *b, int n_cells, int thr, int *amount)
{
    int n = 0, sum = 0;

    for (int i = 0; i < n_cells; i++) {
        int d = abs((int)a[i] - (int)b[i]);

        if (d > thr) {
            n++;
            sum += d;
        }
    }
    if (amount)
        *amount = sum;
    return n;
}

/* The cells of two text grids that differ by more than thr, and how much they differ. */
static int changed_cells(const uint8_t *a, const uint8_t *b, int thr, int *amount)
{
    return grid_changed(a, b, VT_SD_TEXT, thr, amount);
}

/*
 * How far a state's frame a is from a frame taken before (b): the text grid's changed
 * cells, or 1 when none changed but TC_RETYPED cells that hold type in either moved by more
 * than a third of TC_CELL (another name in the same lower third: "Harbor Yogurt" and
 * "Glacier Otter" differ by 6-10 in 3 cells, while a state seen again moves a few counts),
 * or, on a screen, TC_LINES cells of the finer line grid (shotdetect.h) moved by more than
 * TC_LINE_MOVE (a terminal cleared and typed again: other commands in the same lines give
 * the coarse cells the same counts; in a picture that is no screen they move with anything
 * that moves a little, and gave four frames of nothing in the real set's films); *amount
 * the change.
 */
static int distance(const struct vt_sd_feat *fa, const struct vt_sd_feat *fb, int *amount)
{
    const uint8_t *a = fa->text, *b = fb->text;
    int n = changed_cells(a, b, TC_CELL, amount), moved = 0, sum = 0;

    if (n)
        return n;
    for (int i = 0; i < VT_SD_TEXT; i++) {
        int d = abs((int)a[i] - (int)b[i]);

        if ((a[i] >= TC_CELL || b[i] >= TC_CELL) && d > TC_CELL / 3) {
            moved++;
            sum += d;
        }
    }
    if (moved < TC_RETYPED &&
        (vt_sd_screen_ground(fa, fb) < 0 ||
         grid_changed(fa->line, fb->line, VT_SD_LINE, TC_LINE_MOVE, &sum) < TC_LINES))
        return 0;
    *amount = sum;
    return 1;
}

/* The type a frame holds: its text grid's counts summed. */
static int ink(const struct vt_sd_feat *f)
{
    int sum = 0;

    for (int i = 0; i < VT_SD_TEXT; i++)
        sum += f->text[i];
    return sum;
}

struct cand {
    size_t at;  /* the analysed frame where the state settled */
    int amount; /* its change from the nearest frame taken before it */
};

/* Whether the picture of frames (s, e] holds still: its mean difference frame to frame. */
static int still(const struct vt_sd_feat *f, size_t s, size_t e)
{
    double sum = 0;

    for (size_t j = s + 1; j <= e; j++)
        sum += f[j].d1;
    return e <= s || sum / (double)(e - s) < TC_STILL;
}

/*
 * Whether frame i's change from the state that began at s is a blip: at most TC_BLIP cells
 * changed, and a frame within TC_SETTLE_S after it (no later than b) shows the state's text
 * again. A blinking cursor or caret (a terminal's or a text field's) takes a cell out and
 * back every 0.3-0.6 s and would otherwise cut every state of a screen recording shorter
 * than TC_SETTLE_S; what comes back that soon could never have been a state of its own,
 * while typed text, a new line or a bullet stays and is not one. The cells bound keeps a
 * page scrolled by a few lines out: its grid may look like the one before once it stops.
 */
static int blip(const struct vt_sd_feat *f, size_t s, size_t i, size_t b)
{
    if (changed_cells(f[i].text, f[s].text, TC_CELL, NULL) > TC_BLIP)
        return 0;
    for (size_t j = i + 1; j <= b && f[j].t_s - f[i].t_s < TC_SETTLE_S; j++)
        if (!changed_cells(f[j].text, f[s].text, TC_CELL, NULL))
            return 1;
    return 0;
}

/*
 * Whether the text that began at s and was changed at i by at most TC_BLIP cells held as a
 * state, though not for TC_SETTLE_S: on a screen, text shown at once (more than TC_BLIP
 * cells changed at s), left alone TC_HOLD_S and still, whose next change is its cursor's
 * (blinking off, or typing starting in the field) and which nothing larger replaces within
 * TC_SETTLE_S of s. A prompt's placeholder is shown for half a second before it is typed
 * over, and its cursor blinks off in between: gum's "What is your name?" and "Details of
 * this change" held 0.32 s, then 0.24-0.28 s more, and had no frame. Typed text changes a
 * cell at a time, so it never begins such a state.
 */
#define TC_HOLD_S 0.28

static int held_to_cursor(const struct vt_sd_feat *f, size_t a, size_t s, size_t i, size_t b)
{
    if (s == a || i > b || f[i].t_s - f[s].t_s < TC_HOLD_S || !still(f, s, i - 1) ||
        changed_cells(f[s].text, f[s - 1].text, TC_CELL, NULL) <= TC_BLIP ||
        changed_cells(f[i].text, f[s].text, TC_CELL, NULL) > TC_BLIP ||
        vt_sd_screen_ground(&f[s], &f[i - 1]) < 0)
        return 0;
    for (size_t j = i + 1; j <= b && f[j].t_s - f[s].t_s < TC_SETTLE_S; j++)
        if (changed_cells(f[j].text, f[s].text, TC_CELL, NULL) > TC_BLIP)
            return 0;
    return 1;
}

struct state {
    size_t first, last; /* its analysed frames */
    size_t at;          /* the one it settled on */
    double end;         /* when the next began */
};

/*
 * The settled states of [a, b] into st (room for b - a + 1): their number. A state lasts
 * from its first frame to the next one's (the last to one frame after b).
 */
static size_t settled(const struct vt_sd_feat *f, size_t a, size_t b, struct state *st)
{
    size_t n = 0, s = a;

    for (size_t i = a + 1; i <= b + 1; i++) {
        double end;
        int cursor = 0;

        if (i <= b && (!changed_cells(f[i].text, f[s].text, TC_CELL, NULL) || blip(f, s, i, b)))
            continue;
        end = i <= b ? f[i].t_s : 2 * f[b].t_s - f[b - 1].t_s;
        if ((end - f[s].t_s >= TC_SETTLE_S && still(f, s, i - 1)) ||
            (cursor = held_to_cursor(f, a, s, i, b))) {
            size_t m = s, mid = s + (i - s) / 2;

            /* not a blip's frame (a cursor blinked off) */
            while (mid + 1 < i && changed_cells(f[mid].text, f[s].text, TC_CELL, NULL))
                mid++;
            /* the end of a fade within the tolerance: where the middle of the state is
             * reached more closely (its end may hold the next change's start); when the
             * state did not begin there, the frame after it, for a line drawn in steps or
             * typed reaches the tolerance a step early (the last letter of "you." moves a
             * cell less than a third of it) */
            while (m < mid && changed_cells(f[m].text, f[mid].text, TC_CELL / 3, NULL))
                m++;
            if (m > s && m < mid)
                m++;
            /* held until its cursor blinked off (a cell's worth of type less): the frame
             * after, where the letter the block covered shows ("Details", not "Betails") */
            if (cursor && ink(&f[s]) - ink(&f[i]) > TC_CELL)
                m = i;
            st[n++] = (struct state){s, i - 1, m, end};
        }
        s = i;
    }
    return n;
}

/*
 * Whether state k of the n in st came from or went to a neighbouring state by a local
 * change; a shot's only state, which has no neighbour, by its change from the shot's chosen
 * frame (a screen whose text is typed, then held once: the chosen frame, often mid-typing,
 * shows part of it).
 */
static int local(const struct vt_sd_feat *f, const struct state *st, size_t n, size_t k,
                 size_t chosen)
{
    int lim = (int)(TC_LOCAL * VT_SD_TEXT);
    const uint8_t *t = f[st[k].at].text;

    if (n == 1)
        return changed_cells(t, f[chosen].text, TC_CELL, NULL) <= lim;
    if (k > 0 && changed_cells(t, f[st[k - 1].at].text, TC_CELL, NULL) <= lim)
        return 1;
    return k + 1 < n && changed_cells(t, f[st[k + 1].at].text, TC_CELL, NULL) <= lim;
}

/*
 * The steps of a screen's state st that only its line grid tells apart, appended to the n
 * candidates in c: their new number. A tab bar's page or a list's selected line replaced in
 * a box changes no text grid cell by TC_CELL (one short line in 20x30 px cells) but
 * TC_LINES cells of the line grid or more, in one frame (vhs's tabs: 4-8 where a frame
 * without a step moves none). Each step that then holds TC_SETTLE_S is a candidate, but for
 * the one that holds the state's own frame or the shot's chosen one; its frame is the first
 * whose line grid its last frame's matches (a line drawn in steps is taken complete), its
 * amount the count of line cells moved (below the text grid's changes). A step back to a
 * page seen before is taken too: the line grid cannot tell two pages of one box apart with
 * certainty (3 cells of "Eye Shadow Tab" and "Foundation Tab" moved), the page is shown
 * again at that moment, and the stage's duplicate check, on the frames themselves, marks
 * it a duplicate at no cost of OCR. Only on screens: in other pictures the line grid moves
 * with anything that moves a little.
 */
static size_t steps(const struct vt_sd_feat *f, const struct state *st, size_t chosen,
                    struct cand *c, size_t n)
{
    size_t u = st->first;
    int step = 0;

    if (vt_sd_screen_ground(&f[st->first], &f[st->last]) < 0)
        return n;
    for (size_t j = u + 1; j <= st->last + 1; j++) {
        double until = j <= st->last ? f[j].t_s : st->end;
        int next =
            j <= st->last ? grid_changed(f[j].line, f[u].line, VT_SD_LINE, TC_LINE_MOVE, NULL) : 0;
        size_t m = u;

        if (j <= st->last && next < TC_LINES)
            continue;
        if ((st->at < u || st->at >= j) && (chosen < u || chosen >= j) &&
            until - f[u].t_s >= TC_SETTLE_S && still(f, u, j - 1)) {
            while (m + 1 < j &&
                   grid_changed(f[m].line, f[j - 1].line, VT_SD_LINE, TC_LINE_MOVE, NULL) > 1)
                m++;
            c[n++] = (struct cand){m, step ? step : next};
        }
        step = next;
        u = j;
    }
    return n;
}

/*
 * The new states of [a, b] in time order into c (room for b - a + 1): each settled state
 * reached by a local change that differs from every frame taken before it (chosen, and the
 * new states before it) by the change from the nearest. A later state that holds the
 * chosen frame is new too: the chosen frame shows its text, but from its own time, often
 * a second or more after the text settled (the sharpest frame of a terminal's last output
 * before a cut); taken at its settling, it keeps the frame and the chosen one becomes its
 * duplicate.
 */
static size_t states(const struct vt_sd_feat *f, size_t a, size_t b, size_t chosen, struct cand *c)
{
    struct state *st = malloc((b - a + 1) * sizeof(*st));
    size_t ns, n = 0;

    if (!st)
        return 0;
    ns = settled(f, a, b, st);
    for (size_t k = 0; k < ns; k++) {
        size_t at = st[k].at;
        int holds = k > 0 && at < chosen && (k + 1 == ns || chosen < st[k + 1].at);
        int am, amount, near = distance(&f[at], &f[holds ? st[k - 1].at : chosen], &amount);

        for (size_t j = 0; j < n && near; j++) {
            int m = distance(&f[at], &f[c[j].at], &am);

            if (m < near) {
                near = m;
                amount = am;
            }
        }
        /* text shown again (a name, a pane toggled back): its frame repeats one, which the
         * stage marks a duplicate at no cost of OCR, at the moment it is shown; text gone
         * (a lower third taken off) shows nothing new */
        if (!near && k > 0 && ink(&f[at]) > ink(&f[st[k - 1].at]) &&
            distance(&f[at], &f[st[k - 1].at], &am))
            near = -1, amount = 0;
        if (near && at != chosen && local(f, st, ns, k, chosen))
            c[n++] = (struct cand){at, amount};
        n = steps(f, &st[k], chosen, c, n);
    }
    free(st);
    return n;
}

/*
 * Text that passes without stopping: a command's output scrolling up a screen a few lines
 * at a time is never held TC_SETTLE_S, so it makes no state. On a screen (a flat ground,
 * where nothing else moves), a frame that holds still for a sample (under TC_LINES cells of
 * the line grid moved to the next) in which TC_TURN of the cells that held type in the last
 * one taken moved is taken too, unless a state's frame is within TC_SETTLE_S of it (the
 * first frame compared is the first that holds TC_TURN_INK cells of type). Scrolled by a
 * line, every row of a screen holds another line, so this takes a frame at nearly every
 * stop; the shot's bound (TC_PER_S, VT_TC_MAX_EXTRA, the largest changes first) spaces them.
 * On vhs's package manager (28 lines passing in 3 s): 31 of 33 words, 13 before. Appended
 * to the n candidates in c (room for b - a + 1); their new number.
 */
#define TC_TURN     0.3 /* this share of the type's cells moved */
#define TC_TURN_INK 24  /* the last frame taken holds type in this many cells at least */

static size_t turnovers(const struct vt_sd_feat *f, size_t a, size_t b, struct cand *c, size_t n)
{
    size_t ref = a, states = n;

    for (size_t i = a + 1; i < b && n <= b - a; i++) {
        int g = vt_sd_screen_ground(&f[ref], &f[i]), ink = 0, moved = 0, near = 0;

        if (g < 0 ||
            grid_changed(f[i].line, f[i + 1].line, VT_SD_LINE, TC_LINE_MOVE, NULL) >= TC_LINES)
            continue;
        for (int k = 0; k < VT_SD_LINE; k++)
            if (abs((int)f[ref].line[k] - g) > VT_SD_SCREEN_INK) {
                ink++;
                moved += abs((int)f[ref].line[k] - (int)f[i].line[k]) > TC_LINE_MOVE;
            }
        if (ink < TC_TURN_INK) { /* nothing to pass yet: from here */
            ref = i;
            continue;
        }
        if (moved < TC_TURN * ink)
            continue;
        for (size_t j = 0; j < states; j++)
            near |= fabs(f[c[j].at].t_s - f[i].t_s) < TC_SETTLE_S;
        if (!near)
            c[n++] = (struct cand){i, moved};
        ref = i;
    }
    return n;
}

/*
 * A card on the flat ground of the fade that began shot s (a title, a credit or a copyright
 * line on black between two pictures, or on white): the longest run of the fade's frames
 * that are flat and hold type (a cell of at least TC_CELL) with no cell changing, held
 * TC_SETTLE_S, gives its middle frame, or the shot's first when the middle is before it
 * (the black before a fade in belongs to the shot it leads to). Over a picture such a line
 * is small type on a busy ground; alone on black it reads whole (leaves_fades' copyright
 * line: `Copyright © 2013 Brandon Castellano www.bcastell.com` on 30 black frames, read as
 * `2003)B andon` and `beastell` over the photographs). Appended to the n candidates in c,
 * first of all; their new number.
 */
static int flat(const struct vt_sd_feat *f)
{
    return vt_sd_is_black(f) || vt_sd_is_white(f);
}

static int has_type(const struct vt_sd_feat *f)
{
    for (int i = 0; i < VT_SD_TEXT; i++)
        if (f->text[i] >= TC_CELL)
            return 1;
    return 0;
}

static size_t card(const struct vt_sd_feat *f, const struct vt_sd_shot *s, struct cand *c, size_t n)
{
    size_t best = 0, best_len = 0;

    if (s->kind != VT_SD_FADE)
        return n;
    for (size_t i = s->span0; i <= s->span1;) {
        size_t j = i;

        if (!flat(&f[i]) || !has_type(&f[i])) {
            i++;
            continue;
        }
        while (j + 1 <= s->span1 && flat(&f[j + 1]) &&
               !changed_cells(f[j + 1].text, f[i].text, TC_CELL, NULL))
            j++;
        if (f[j].t_s - f[i].t_s >= TC_SETTLE_S && j - i + 1 > best_len) {
            best = i + (j - i) / 2;
            best_len = j - i + 1;
            if (best < s->first)
                best = s->first <= j ? s->first : j;
        }
        i = j + 1;
    }
    if (best_len)
        c[n++] = (struct cand){best, INT_MAX};
    return n;
}

static int by_amount(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;

    if (a->amount != b->amount)
        return a->amount > b->amount ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

static int by_time(const void *pa, const void *pb)
{
    const size_t *a = pa, *b = pb;

    return *a < *b ? -1 : *a > *b;
}

/*
 * Up to cap of the n candidates in c (sorted by amount) into out: their number. With more
 * candidates than room, the shot [a, b] is cut into cap equal stretches and each stretch's
 * largest change goes first, then the largest of the rest: a screen typed on for twenty
 * seconds makes a state of every word, and the largest changes alone all fell in its first
 * three quarters (vhs's typing: the last command, held a second, had no frame).
 */
static size_t spread(const struct vt_sd_feat *f, size_t a, size_t b, struct cand *c, size_t n,
                     size_t cap, size_t *out)
{
    double span = f[b].t_s - f[a].t_s;
    unsigned char *seen = calloc(cap, 1);
    size_t k = 0;

    for (size_t i = 0; seen && i < n && k < cap; i++) {
        double x = span > 0 ? (f[c[i].at].t_s - f[a].t_s) / span * (double)cap : 0;
        size_t w = 0;

        if (x >= (double)cap)
            w = cap - 1;
        else if (x > 0)
            w = (size_t)x;
        if (!seen[w]) {
            seen[w] = 1;
            out[k++] = c[i].at;
            c[i].amount = -1; /* taken */
        }
    }
    for (size_t i = 0; i < n && k < cap; i++)
        if (c[i].amount >= 0)
            out[k++] = c[i].at;
    free(seen);
    return k;
}

size_t vt_tc_extra(const struct vt_sd_feat *f, const struct vt_sd_shot *s, size_t *out)
{
    size_t a = s->stable_first, b = s->stable_last, n, k, cap;
    struct cand *c;

    if (b <= a)
        return 0;
    cap = (size_t)((f[b].t_s - f[a].t_s) / TC_PER_S);
    if (cap > VT_TC_MAX_EXTRA)
        cap = VT_TC_MAX_EXTRA;
    if (!cap)
        return 0;
    c = malloc((b - a + 2) * sizeof(*c)); /* a state per frame, and a card */
    if (!c)
        return 0; /* no extra frames is what the stage did before them */
    n = states(f, a, b, s->chosen, c);
    n = turnovers(f, a, b, c, n);
    n = card(f, s, c, n);
    qsort(c, n, sizeof(*c), by_amount);
    k = spread(f, a, b, c, n, cap, out);
    free(c);
    qsort(out, k, sizeof(*out), by_time);
    return k;
}

void vt_tc_grid(const uint8_t *grey, int w, int h, int ls, uint8_t *text)
{
    int cw = w / VT_SD_TEXT_W, ch = h / VT_SD_TEXT_H;

    for (int gy = 0; gy < VT_SD_TEXT_H; gy++) {
        int acc[VT_SD_TEXT_W] = {0};

        for (int y = gy * ch; y < (gy + 1) * ch; y += 2) {
            const uint8_t *p = grey + (size_t)y * ls;

            for (int gx = 0; gx < VT_SD_TEXT_W; gx++) {
                int x0 = gx * cw, x1 = x0 + cw < w ? x0 + cw : w - 1, m = 0;

                for (int x = x0; x < x1; x++)
                    m += abs((int)p[x + 1] - (int)p[x]) >= TC_EDGE;
                acc[gx] += m;
            }
        }
        for (int gx = 0; gx < VT_SD_TEXT_W; gx++)
            text[gy * VT_SD_TEXT_W + gx] = (uint8_t)(acc[gx] > 255 ? 255 : acc[gx]);
    }
}
