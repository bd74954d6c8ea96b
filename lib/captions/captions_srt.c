/*
 * Reading SubRip, which has no specification, as the common readers (FFmpeg, pysrt, srt)
 * take it: the timing lines, the cue blocks around them, and cue text with its markup
 * tags, ASS override blocks and character references removed or decoded.
 */
#include "captions/captions_int.h"
#include "base/util.h"

#include <string.h>

/* tag_len: the SubRip tag at s, if any */
static size_t tag_len(const char *s, size_t n)
{
    return vt_cap_tag_scan(s, n, 0);
}

/* Length of an ASS override block "{\an8}" at s (n bytes to the end of the line), or 0. */
static size_t override_len(const char *s, size_t n)
{
    if (n < 3 || s[0] != '{' || s[1] != '\\')
        return 0;
    for (size_t i = 2; i < n; i++) {
        if (s[i] == '}')
            return i + 1;
        if (s[i] == '{')
            return 0;
    }
    return 0;
}

/* A cue timing line "START --> END [settings]": 0, 1 when end < start, -1 when malformed. */
static int parse_timing(const char *s, const char *end, int64_t *start_ms, int64_t *end_ms)
{
    while (s < end && is_blank(*s))
        s++;
    *start_ms = vt_cap_parse_ts(&s, end);
    if (*start_ms < 0)
        return -1;
    while (s < end && is_blank(*s))
        s++;
    if (end - s < 3 || memcmp(s, "-->", 3))
        return -1;
    s += 3;
    while (s < end && is_blank(*s))
        s++;
    *end_ms = vt_cap_parse_ts(&s, end);
    if (*end_ms < 0 || (s < end && !is_blank(*s)))
        return -1;
    return *end_ms < *start_ms ? 1 : 0;
}

/*
 * One line of SubRip cue text: markup tags (<i>, <font ...>, <00:00:01.000>) and ASS
 * overrides ({\an8}) removed, character references that end with ';' decoded.
 */
static void srt_cue_line(struct cue_builder *b, const char *s, const char *le, int64_t end_ms)
{
    b->pending_nl = 1;
    while (s < le) {
        size_t n = (size_t)(le - s);
        uint32_t cp[2];
        int ncp = 0;
        size_t tag = *s == '<' ? tag_len(s, n) : 0;
        size_t override = *s == '{' ? override_len(s, n) : 0;
        size_t entity = *s == '&' ? vt_cap_html_charref(s, n, cp, &ncp, 1) : 0;

        if (tag) {
            const char *q = s + 1;
            int64_t t_ms = vt_cap_parse_ts(&q, s + tag - 1);

            if (t_ms >= 0 && q == s + tag - 1)
                vt_cap_cb_segment(b, t_ms, end_ms);
            s += tag;
        } else if (override) {
            s += override;
        } else if (entity) {
            for (int i = 0; i < ncp; i++)
                vt_cap_cb_codepoint(b, cp[i]);
            s += entity;
        } else {
            vt_cap_cb_byte(b, s++);
        }
    }
}

/* The cue text s..end (lines joined by '\n') into b, line by line: the collector's cue_text. */
static void srt_cue_text(struct cue_builder *b, const char *s, const char *end, int64_t end_ms)
{
    for (;;) {
        const char *nl = strchr(s, '\n'), *le = nl ? nl : s + strlen(s);

        srt_cue_line(b, s, le, end_ms);
        if (!nl)
            break;
        s = nl + 1;
    }
}

/*
 * Whether the line s..le (holding "-->") was meant as a timing line: a time, possibly
 * negative or out of range, before its "-->"; "x --> y" is text.
 */
int vt_cap_timing_like(const char *s, const char *le)
{
    if (s < le && *s == '-')
        s++;
    if (s >= le || !is_digit(*s))
        return 0;
    while (s < le && (is_digit(*s) || *s == ':' || *s == ',' || *s == '.'))
        s++;
    while (s < le && is_blank(*s))
        s++;
    return le - s >= 3 && !memcmp(s, "-->", 3);
}

/*
 * SubRip as the common readers (FFmpeg, pysrt, srt) take it: a cue is an optional number
 * line, a timing line "START --> END" (',' or '.' before the ms, anything after the end
 * time) and the text after it up to the next timing line, blank lines included; the number
 * line just before a timing line belongs to the next cue. A line that holds "-->" but is
 * no timing is text within a cue unless it starts with a time (then it ends the cue and
 * starts a block that is skipped, as it does outside a cue).
 */
void vt_cap_parse_srt(struct cap_parser *p, const char *buf, size_t len, int *any_timing,
                      long *first_content)
{
    enum { IDLE, CUE, SKIP } state = IDLE;
    const char *s = buf, *end = buf + len;
    long lineno = 0;

    p->cue_text = srt_cue_text;
    while (s <= end && !p->full) {
        const char *nl = memchr(s, '\n', (size_t)(end - s)), *le = nl ? nl : end, *t = s;
        int64_t a_ms, b_ms;
        int r;

        lineno++;
        while (t < le && is_blank(*t))
            t++;
        if (t == le) {
            if (state == CUE)
                vt_cap_add_raw_line(p, s, le); /* the cue goes on after a blank line */
            else
                state = IDLE;
        } else if (memmem(t, (size_t)(le - t), "-->", 3)) {
            r = parse_timing(t, le, &a_ms, &b_ms);
            if (r == 0) {
                *any_timing = 1;
                vt_cap_drop_number_line(p);
                vt_cap_finish_cue(p);
                p->in_cue = 1;
                p->start_ms = a_ms;
                p->end_ms = b_ms;
                state = CUE;
            } else if (r < 0 && state == CUE && !vt_cap_timing_like(t, le)) {
                vt_cap_add_raw_line(p, s, le); /* text that happens to hold "-->" */
            } else {
                vt_cap_drop_number_line(p);
                vt_cap_finish_cue(p);
                vt_cap_note_bad_line(p, lineno,
                                     r > 0 ? "cue ends before it starts" : "bad cue timing", t, le);
                state = SKIP;
            }
        } else if (state == CUE) {
            vt_cap_add_raw_line(p, s, le);
        } else if (state == IDLE && !*first_content) {
            *first_content = lineno; /* a cue number, or junk */
        }
        if (!nl)
            break;
        s = nl + 1;
    }
    vt_cap_finish_cue(p);
}
