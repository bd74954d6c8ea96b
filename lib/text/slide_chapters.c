/*
 * Chapters from the slides (slide_chapters.h): a frame's title from its OCR lines' boxes,
 * then topics from the titles in time order, a title folded to a key (lower case, words
 * only, no trailing page number or "cont.") compared with the keys that opened chapters
 * before, with a banded edit distance for misreads.
 */
#include "text/slide_chapters.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define TITLE_MIN_CONF     0.5
#define TITLE_SIZE_SHARE   0.8 /* a candidate is this tall next to the tallest line */
#define TITLE_TOP_SHARE    0.6 /* its middle is in this top share of the frame */
#define TITLE_MAX_CHAPTERS 1000

/* Letters and digits in s: ASCII ones, and each UTF-8 character beyond ASCII. */
static size_t alnum_count(const char *s)
{
    size_t k = 0;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z') || (*p >= 0xc0))
            k++;
    return k;
}

static int line_qualifies(const struct vt_ocr_line *l)
{
    return l->text && !l->noise && l->conf >= TITLE_MIN_CONF && l->box[3] > 0 &&
           strlen(l->text) <= VT_SLIDE_TITLE_MAX && alnum_count(l->text) >= 3;
}

/* The tallest qualifying line's height, 0 when none qualifies. */
static int tallest(const struct vt_ocr_page *page)
{
    int h = 0;

    for (size_t i = 0; i < page->n_lines; i++)
        if (line_qualifies(&page->lines[i]) && page->lines[i].box[3] > h)
            h = page->lines[i].box[3];
    return h;
}

/* The top-most (then left-most) qualifying line at least min_h tall, -1 when none. */
static long top_line(const struct vt_ocr_page *page, double min_h)
{
    long best = -1;

    for (size_t i = 0; i < page->n_lines; i++) {
        const struct vt_ocr_line *l = &page->lines[i];

        if (!line_qualifies(l) || l->box[3] < min_h)
            continue;
        if (best < 0 || l->box[1] < page->lines[best].box[1] ||
            (l->box[1] == page->lines[best].box[1] && l->box[0] < page->lines[best].box[0]))
            best = (long)i;
    }
    return best;
}

/* A line of the title's size that starts within 0.8 of its height under it and overlaps
 * it sideways: the title's second line. -1 when none. */
static long second_line(const struct vt_ocr_page *page, const struct vt_ocr_line *t)
{
    int h = t->box[3], bottom = t->box[1] + t->box[3];
    long best = -1;

    for (size_t i = 0; i < page->n_lines; i++) {
        const struct vt_ocr_line *l = &page->lines[i];

        if (l == t || !line_qualifies(l) || l->box[3] < TITLE_SIZE_SHARE * h ||
            l->box[3] * TITLE_SIZE_SHARE > h || l->box[1] < t->box[1] + h / 2 ||
            l->box[1] - bottom > TITLE_SIZE_SHARE * h || l->box[0] >= t->box[0] + t->box[2] ||
            l->box[0] + l->box[2] <= t->box[0])
            continue;
        if (best < 0 || l->box[1] < page->lines[best].box[1])
            best = (long)i;
    }
    return best;
}

/* a and b (b may be NULL) joined by one space, runs of whitespace collapsed, trimmed */
static char *collapse(const char *a, const char *b)
{
    char *s = vt_xasprintf("%s %s", a, b ? b : ""), *w = s;
    int space = 1;

    for (const char *p = s; *p; p++) {
        int sp = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';

        if (sp && !space)
            *w++ = ' ';
        else if (!sp)
            *w++ = *p;
        space = sp;
    }
    while (w > s && w[-1] == ' ')
        w--;
    *w = '\0';
    return s;
}

char *vt_slide_title(const struct vt_ocr_page *page, int height)
{
    const struct vt_ocr_line *t;
    long i, j;
    char *s;
    int h;

    if (!page || !page->n_lines)
        return NULL;
    h = tallest(page);
    if (!h)
        return NULL;
    i = top_line(page, TITLE_SIZE_SHARE * h);
    t = &page->lines[i];
    if (height > 0 && t->box[1] + t->box[3] / 2.0 > TITLE_TOP_SHARE * height)
        return NULL;
    j = second_line(page, t);
    s = collapse(t->text, j >= 0 ? page->lines[j].text : NULL);
    if (strlen(s) > VT_SLIDE_TITLE_MAX) {
        free(s);
        s = collapse(t->text, NULL);
    }
    return s;
}

/* ---- topics ---- */

static int is_filler(const char *w, size_t n)
{
    static const char *const fill[] = {"cont", "contd", "continued", "ctd"};
    size_t d = 0;

    while (d < n && w[d] >= '0' && w[d] <= '9')
        d++;
    if (d == n)
        return 1; /* a page number: "(2/3)", "Results 2" */
    for (size_t i = 0; i < sizeof(fill) / sizeof(*fill); i++)
        if (strlen(fill[i]) == n && !memcmp(fill[i], w, n))
            return 1;
    return 0;
}

/* title folded: ASCII lower case, words (letters, digits, bytes beyond ASCII) one space
 * apart, trailing page numbers and "cont." dropped. "" when nothing is left. */
static char *fold(const char *title)
{
    size_t n = strlen(title), k = 0, last;
    char *key = vt_xmalloc(n + 1);

    for (const unsigned char *p = (const unsigned char *)title; *p; p++) {
        unsigned c = *p;

        if (c >= 'A' && c <= 'Z')
            c |= 0x20;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80)
            key[k++] = (char)c;
        else if (k && key[k - 1] != ' ')
            key[k++] = ' ';
    }
    for (;;) {
        while (k && key[k - 1] == ' ')
            k--;
        last = k;
        while (last && key[last - 1] != ' ')
            last--;
        if (!k || !is_filler(key + last, k - last))
            break;
        k = last;
    }
    key[k] = '\0';
    return key;
}

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;

    return m < c ? m : c;
}

/* Whether a and b are within one edit in eight of the longer one (Levenshtein, banded:
 * only cells within that many of the diagonal). */
static int near_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), k = (la > lb ? la : lb) / 8, *prev, *cur;
    size_t far = (size_t)-1 / 2;
    int ok;

    if ((la > lb ? la - lb : lb - la) > k)
        return 0;
    if (!k)
        return !strcmp(a, b);
    prev = vt_xcalloc(lb + 1, sizeof(*prev));
    cur = vt_xcalloc(lb + 1, sizeof(*cur));
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j <= k ? j : far;
    for (size_t i = 1; i <= la; i++) {
        size_t lo = i > k ? i - k : 1, hi = i + k < lb ? i + k : lb, best = far;

        for (size_t j = 0; j <= lb; j++)
            cur[j] = far;
        cur[0] = i <= k ? i : far;
        for (size_t j = lo; j <= hi; j++) {
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]));
            best = cur[j] < best ? cur[j] : best;
        }
        memcpy(prev, cur, (lb + 1) * sizeof(*prev));
        if (best > k)
            break;
    }
    ok = prev[lb] <= k;
    free(prev);
    free(cur);
    return ok;
}

/* Whether key is the topic of one of the chapters opened so far. */
static int seen(char *const *keys, size_t n, const char *key)
{
    for (size_t i = n; i-- > 0;)
        if (near_equal(keys[i], key))
            return 1;
    return 0;
}

size_t vt_slide_chapters(const struct vt_slide_frame *f, size_t n, double duration_s,
                         struct vt_chapter **out, size_t *n_out)
{
    struct vt_chapter *c = NULL;
    char **keys = NULL;
    size_t k = 0;

    for (size_t i = 0; i < n && k < TITLE_MAX_CHAPTERS; i++) {
        char *key;

        if (!f[i].title || (k && f[i].start_s <= c[k - 1].start_s))
            continue;
        key = fold(f[i].title);
        if (!*key || seen(keys, k, key)) {
            free(key);
            continue;
        }
        c = vt_xrealloc(c, (k + 1) * sizeof(*c));
        keys = vt_xrealloc(keys, (k + 1) * sizeof(*keys));
        keys[k] = key;
        c[k++] = (struct vt_chapter){f[i].start_s, 0, collapse(f[i].title, NULL)};
    }
    for (size_t i = 0; i < k; i++) {
        free(keys[i]);
        c[i].end_s = i + 1 < k ? c[i + 1].start_s : duration_s;
        if (c[i].end_s < c[i].start_s)
            c[i].end_s = c[i].start_s;
    }
    free(keys);
    if (k < 2) {
        for (size_t i = 0; i < k; i++)
            free(c[i].title);
        free(c);
        c = NULL;
        k = 0;
    }
    *out = c;
    *n_out = k;
    return k;
}
