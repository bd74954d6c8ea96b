/*
 * What every captions reader shares, below them all: the lexical helpers (markup tags,
 * timestamps, tidy cue text), sorting cues, the cue builder that turns raw cue text into a
 * cue's text and timed words, and the cue collector the SubRip and WebVTT readers feed.
 * It calls nothing of the readers: a reader hands the collector its own cue text reader
 * (struct cap_parser's cue_text), so calls go one way, captions.c to the readers to here.
 */
#include "base/util.h"
#include "captions/captions.h"
#include "captions/captions_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Lexical helpers shared by the reader and the writers                                */

static char *xstrndup(const char *s, size_t n)
{
    char *p = vt_xmalloc(n + 1);

    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/*
 * Length of the SubRip markup tag at s (n bytes to the end of the line): "<i>", "</i>",
 * "<font color=red>", "<c.colorE5E5E5>", "<v Joe>", "<00:01.000>". 0 when the '<' is
 * literal text: "a < b", "<3", "1 <2 and 3> 0", a '<' never closed on its line. A tag is a
 * name (letters and digits, starting with a letter) then the end or white space, '.' or
 * '=' and more up to '>', or a timestamp. Stopping at the next '<' keeps the scan linear
 * over a line full of unclosed '<'. With gt_later (a '>' follows somewhere on the line),
 * non-zero when the '<' would open a tag once every later '<' is escaped: the writer's
 * question, answered without a scan.
 */
size_t vt_cap_tag_scan(const char *s, size_t n, int gt_later)
{
    size_t i = 1;

    if (n < 3 || s[0] != '<')
        return 0;
    if (is_digit(s[1])) {
        const char *q = s + 1;

        return vt_cap_parse_ts(&q, s + n) >= 0 && q < s + n && *q == '>' ? (size_t)(q - s) + 1 : 0;
    }
    if (s[1] == '/')
        i++;
    if (i >= n || !is_alpha(s[i]))
        return 0;
    while (i < n && (is_alpha(s[i]) || is_digit(s[i])))
        i++;
    if (i < n && s[i] == '>')
        return i + 1;
    if (i >= n || !(is_blank(s[i]) || s[i] == '.' || s[i] == '='))
        return 0;
    if (gt_later)
        return 1;
    for (; i < n; i++) {
        if (s[i] == '>')
            return i + 1;
        if (s[i] == '<')
            return 0;
    }
    return 0;
}

/* Digits at *p (1 to max_digits of them) as a number, *p moved past them; -1 when not so. */
static int64_t read_num(const char **p, const char *end, int max_digits)
{
    const char *s = *p;
    int64_t v = 0;
    int n = 0;

    while (s < end && is_digit(*s)) {
        if (n == max_digits)
            return -1;
        v = v * 10 + (*s++ - '0');
        n++;
    }
    if (n == 0)
        return -1;
    *p = s;
    return v;
}

/*
 * The timestamp "[HHHHH:]MM:SS[.mmm]" at *p (SubRip's ',' accepted for '.', 1 to 9
 * fraction digits, of which the first three count): its value in ms, *p moved past it.
 * -1 when malformed: minutes or seconds above 59, hours above MAX_HOURS, a sign.
 */
int64_t vt_cap_parse_ts(const char **p, const char *end)
{
    const char *s = *p;
    int64_t g[3], frac_ms = 0, h, m, sec;
    int n = 0;

    for (;;) {
        int64_t v = read_num(&s, end, n == 0 ? 5 : 2);

        if (v < 0)
            return -1;
        g[n++] = v;
        if (n == 3 || s >= end || *s != ':')
            break;
        s++;
    }
    if (n < 2)
        return -1;
    if (s < end && (*s == '.' || *s == ',')) {
        int64_t scale = 100;
        int k = 0;

        for (s++; s < end && is_digit(*s); s++, k++) {
            if (k == 9)
                return -1;
            frac_ms += (*s - '0') * scale;
            scale /= 10;
        }
        if (k == 0)
            return -1;
    }
    h = n == 3 ? g[0] : 0;
    m = g[n - 2];
    sec = g[n - 1];
    if (h > MAX_HOURS || m > 59 || sec > 59)
        return -1;
    *p = s;
    return ((h * 60 + m) * 60 + sec) * 1000 + frac_ms;
}

/*
 * Text made fit for a cue: valid UTF-8, each line's spaces and tabs collapsed and
 * trimmed, empty lines dropped, lines joined with '\n'. Caller frees.
 */
char *vt_cap_tidy_text(const char *s)
{
    char *clean = vt_utf8_clean(s);
    struct vt_sb sb = {0};
    int pending_sp = 0, pending_nl = 0;

    vt_sb_add(&sb, "", 0);
    for (const char *p = clean; *p; p++) {
        if (*p == '\n') {
            pending_nl = 1;
            pending_sp = 0;
        } else if (is_blank(*p)) {
            pending_sp = 1;
        } else {
            if (sb.len && (pending_nl || pending_sp))
                vt_sb_addc(&sb, pending_nl ? '\n' : ' ');
            pending_nl = pending_sp = 0;
            vt_sb_addc(&sb, *p);
        }
    }
    free(clean);
    return vt_sb_detach(&sb);
}

/* Sort cues by start, then end, keeping the file's order among equals. */
struct cue_key {
    double start_s, end_s;
    size_t index;
};

static int cmp_cue_key(const void *a, const void *b)
{
    const struct cue_key *x = a, *y = b;

    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    if (x->end_s != y->end_s)
        return x->end_s < y->end_s ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void vt_cap_sort_cues(struct vt_transcript *t)
{
    struct cue_key *keys;
    struct vt_cue *sorted;
    size_t i;

    for (i = 1; i < t->n_cues; i++)
        if (cmp_cue_key(&(struct cue_key){t->cues[i - 1].start_s, t->cues[i - 1].end_s, 0},
                        &(struct cue_key){t->cues[i].start_s, t->cues[i].end_s, 1}) > 0)
            break;
    if (i >= t->n_cues)
        return;
    keys = vt_xcalloc(t->n_cues, sizeof(*keys));
    sorted = vt_xcalloc(t->n_cues, sizeof(*sorted));
    for (i = 0; i < t->n_cues; i++)
        keys[i] = (struct cue_key){t->cues[i].start_s, t->cues[i].end_s, i};
    qsort(keys, t->n_cues, sizeof(*keys), cmp_cue_key);
    for (i = 0; i < t->n_cues; i++)
        sorted[i] = t->cues[keys[i].index];
    free(t->cues);
    t->cues = sorted;
    free(keys);
}

/* ---------------------------------------------------------------------------------- */
/* Building cues: the cue builder (every reader) and the cue collector (SubRip, WebVTT) */

void vt_cap_cb_emit(struct cue_builder *b, const char *s, size_t n)
{
    int starts_word = b->text.len == 0 || b->pending_sp || b->pending_nl;

    if (b->text.len && (b->pending_nl || b->pending_sp))
        vt_sb_addc(&b->text, b->pending_nl ? '\n' : ' ');
    b->pending_sp = b->pending_nl = 0;
    if (starts_word) {
        vt_grow((void **)&b->word_seg, &b->cap_word_seg, b->n_word_seg + 1, sizeof(size_t));
        b->word_seg[b->n_word_seg++] = b->n_seg - 1;
    }
    vt_sb_add(&b->text, s, n);
}

/* A timestamp tag: a new segment, kept within the cue and never before the previous one. */
void vt_cap_cb_segment(struct cue_builder *b, int64_t t_ms, int64_t end_ms)
{
    if (t_ms > end_ms)
        t_ms = end_ms;
    if (t_ms < b->seg_ms[b->n_seg - 1])
        t_ms = b->seg_ms[b->n_seg - 1];
    vt_grow((void **)&b->seg_ms, &b->cap_seg, b->n_seg + 1, sizeof(int64_t));
    b->seg_ms[b->n_seg++] = t_ms;
}

/*
 * One byte of raw cue text: a line break, white space (form feed and the like included),
 * a control character (U+FFFD) or text.
 */
void vt_cap_cb_byte(struct cue_builder *b, const char *s)
{
    unsigned char c = (unsigned char)*s;

    if (c == '\n')
        b->pending_nl = 1;
    else if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r')
        b->pending_sp = 1;
    else if (c < 0x20 || c == 0x7f)
        vt_cap_cb_emit(b, "\xef\xbf\xbd", 3);
    else
        vt_cap_cb_emit(b, s, 1);
}

/*
 * A character from a character reference: U+00A0 (&nbsp;) becomes a plain space, since it
 * separates words for search, the invisible direction marks U+200E and U+200F (&lrm;
 * &rlm;) nothing, control characters as in vt_cap_cb_byte.
 */
void vt_cap_cb_codepoint(struct cue_builder *b, uint32_t cp)
{
    char ub[4];

    if (cp == 0xa0)
        b->pending_sp = 1;
    else if (cp == 0x200e || cp == 0x200f)
        return;
    else if (cp < 0x80)
        vt_cap_cb_byte(b, &(char){(char)cp});
    else if (cp < 0xa0)
        vt_cap_cb_emit(b, "\xef\xbf\xbd", 3);
    else
        vt_cap_cb_emit(b, ub, vt_cap_utf8_put(cp, ub));
}

/*
 * Words of b's text with times. A segment's span (from its tag to the next tag, or the
 * cue's end) is shared evenly among the words that start in it; each word then lasts until
 * the next word starts (the last until the cue's end), so that a tag in mid-word or two
 * tags in a row still give words that follow each other without gaps, which is also what
 * the WebVTT writer can express.
 */
void vt_cap_cb_words(struct cue_builder *b, int64_t end_ms, struct vt_cue *c)
{
    const char *p = b->text.buf;
    size_t i = 0;

    c->n_words = b->n_word_seg;
    c->words = vt_xcalloc(c->n_words, sizeof(*c->words));
    for (size_t w = 0; w < c->n_words; w++) {
        size_t len = strcspn(p, " \n");

        c->words[w].text = xstrndup(p, len);
        c->words[w].conf = 1;
        p += len;
        if (*p)
            p++;
    }
    while (i < c->n_words) {
        size_t seg = b->word_seg[i], j = i, n;
        int64_t a_ms = b->seg_ms[seg], z_ms = seg + 1 < b->n_seg ? b->seg_ms[seg + 1] : end_ms;

        while (j < c->n_words && b->word_seg[j] == seg)
            j++;
        n = j - i;
        for (size_t k = 0; k < n; k++)
            c->words[i + k].start_s =
                (double)(a_ms + (z_ms - a_ms) * (int64_t)k / (int64_t)n) / 1000;
        i = j;
    }
    for (i = 0; i < c->n_words; i++)
        c->words[i].end_s = i + 1 < c->n_words ? c->words[i + 1].start_s : (double)end_ms / 1000;
}

/* Turn the collected lines into a cue; cues left empty by markup removal are dropped. */
void vt_cap_finish_cue(struct cap_parser *p)
{
    struct cue_builder b = {0};
    struct vt_cue c = {0};
    const char *s = p->raw.buf;

    if (!p->in_cue)
        return;
    p->in_cue = 0;
    if (!p->raw.len)
        goto out;
    vt_grow((void **)&b.seg_ms, &b.cap_seg, 1, sizeof(int64_t));
    b.seg_ms[b.n_seg++] = p->start_ms;
    p->cue_text(&b, s, s + p->raw.len, p->end_ms);
    if (!b.text.len)
        goto out;
    if (p->out->n_cues >= VT_CAPTIONS_MAX_CUES) {
        p->full = 1;
        goto out;
    }
    if (b.n_seg > 1) {
        if (p->n_words + b.n_word_seg > VT_CAPTIONS_MAX_WORDS) {
            p->full = 2;
            goto out;
        }
        p->n_words += b.n_word_seg;
        vt_cap_cb_words(&b, p->end_ms, &c);
    }
    c.start_s = (double)p->start_ms / 1000;
    c.end_s = (double)p->end_ms / 1000;
    c.text = vt_sb_detach(&b.text);
    vt_grow((void **)&p->out->cues, &p->cap_cues, p->out->n_cues + 1, sizeof(c));
    p->out->cues[p->out->n_cues++] = c;
out:
    p->raw.len = 0;
    if (p->raw.buf)
        p->raw.buf[0] = '\0';
    p->last_line_off = 0;
    vt_sb_release(&b.text);
    free(b.word_seg);
    free(b.seg_ms);
}

void vt_cap_add_raw_line(struct cap_parser *p, const char *s, const char *le)
{
    if (p->raw.len)
        vt_sb_addc(&p->raw, '\n');
    p->last_line_off = p->raw.len;
    vt_sb_add(&p->raw, s, (size_t)(le - s));
}

/*
 * A timing line right after text, without the blank line between: the cue number of
 * SubRip (or a numeric WebVTT identifier) was read as the text's last line. Drop it.
 */
void vt_cap_drop_number_line(struct cap_parser *p)
{
    const char *s;

    if (!p->raw.len)
        return;
    s = p->raw.buf + p->last_line_off;
    while (is_blank(*s))
        s++;
    if (!is_digit(*s))
        return;
    while (is_digit(*s))
        s++;
    while (is_blank(*s))
        s++;
    if (*s)
        return;
    p->raw.len = p->last_line_off ? p->last_line_off - 1 : 0;
    p->raw.buf[p->raw.len] = '\0';
}

void vt_cap_note_bad_line(struct cap_parser *p, long lineno, const char *what, const char *s,
                          const char *le)
{
    size_t n = (size_t)(le - s);

    if (p->bad_line)
        return;
    /* quote at most 40 bytes, cut at a character boundary */
    if (n > 40) {
        n = 40;
        while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
    }
    p->bad_line = lineno;
    snprintf(p->bad_msg, sizeof(p->bad_msg), "%s '%.*s%s'", what, (int)n, s,
             n < (size_t)(le - s) ? "..." : "");
}
