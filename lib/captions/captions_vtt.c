/*
 * Reading WebVTT by the W3C specification's parser, step by step: the signature, blocks,
 * cue timings and settings, timestamps, and the cue text tokenizer (tags, timestamp tags
 * and HTML character references).
 */
#include "captions/captions_int.h"
#include "base/util.h"

#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* WebVTT, following the parser of the W3C specification (https://w3c.github.io/webvtt/, */
/* "WebVTT parser algorithm", "collect a WebVTT block", "collect WebVTT cue timings and  */
/* settings", "collect a WebVTT timestamp" and the cue text tokenizer) step by step.    */

/* WebVTT's white space in timing lines: space, tab, line feed, form feed, carriage return */
static int vtt_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* The ASCII digits at *s: their count, *s moved on; the value saturates past 10 digits. */
static size_t vtt_digits(const char **s, const char *end, int64_t *v)
{
    const char *p = *s;
    size_t n;

    *v = 0;
    for (; p < end && is_digit(*p); p++)
        if (p - *s < 10)
            *v = *v * 10 + (*p - '0');
    n = (size_t)(p - *s);
    if (n > 10)
        *v = INT64_MAX;
    *s = p;
    return n;
}

/*
 * "Collect a WebVTT timestamp" at *p: [hours:]MM:SS.mmm where hours are 2 or more digits
 * (a first field of 2 digits at most 59 is minutes), minutes and seconds exactly 2 digits
 * up to 59 and exactly 3 fraction digits after a '.'. Its value in ms with *p moved past
 * it, or -1. Hours above MAX_HOURS are refused too, so that times stay bounded.
 */
static int64_t vtt_timestamp(const char **p, const char *end)
{
    const char *s = *p, *q;
    int64_t v1, v2, v3, v4;
    int hours = 0;

    if (s >= end || !is_digit(*s))
        return -1;
    q = s;
    vtt_digits(&s, end, &v1);
    if (s - q != 2 || v1 > 59)
        hours = 1;
    if (s >= end || *s != ':')
        return -1;
    q = ++s;
    vtt_digits(&s, end, &v2);
    if (s - q != 2)
        return -1;
    if (hours || (s < end && *s == ':')) {
        if (s >= end || *s != ':')
            return -1;
        q = ++s;
        vtt_digits(&s, end, &v3);
        if (s - q != 2)
            return -1;
    } else {
        v3 = v2;
        v2 = v1;
        v1 = 0;
    }
    if (s >= end || *s != '.')
        return -1;
    q = ++s;
    vtt_digits(&s, end, &v4);
    if (s - q != 3 || v2 > 59 || v3 > 59 || v1 > MAX_HOURS)
        return -1;
    *p = s;
    return ((v1 * 60 + v2) * 60 + v3) * 1000 + v4;
}

/*
 * "Collect WebVTT cue timings and settings" from the line s..end: 0 with the times, -1
 * when the line is no timing line. What follows the end time is cue settings (position,
 * alignment, region), which never make a cue invalid and are not kept, so it is not read:
 * "00:01.000 --> 00:02.000line:40%" is a cue.
 */
static int vtt_timing(const char *s, const char *end, int64_t *start_ms, int64_t *end_ms)
{
    while (s < end && vtt_space(*s))
        s++;
    *start_ms = vtt_timestamp(&s, end);
    if (*start_ms < 0)
        return -1;
    while (s < end && vtt_space(*s))
        s++;
    if (end - s < 3 || memcmp(s, "-->", 3))
        return -1;
    s += 3;
    while (s < end && vtt_space(*s))
        s++;
    *end_ms = vtt_timestamp(&s, end);
    return *end_ms < 0 ? -1 : 0;
}

/*
 * The cue text s..end through the WebVTT cue text tokenizer into b: text as it is, a
 * character reference decoded (the HTML list), and every tag ('<' up to the next '>' or the
 * end of the text, whether known, unknown, broken or never closed) removed; a timestamp tag
 * that holds a valid timestamp starts a timing segment. The tree the tags build only
 * styles the text, so the text in document order is the text of the cue.
 */
static void vtt_cue_text(struct cue_builder *b, const char *s, const char *end, int64_t end_ms)
{
    b->pending_nl = 1;
    while (s < end) {
        if (*s == '<') {
            const char *q = s + 1, *gt = memchr(q, '>', (size_t)(end - q)), *te = gt ? gt : end;

            if (q < te && is_digit(*q)) {
                int64_t t_ms = vtt_timestamp(&q, te);

                if (t_ms >= 0 && q == te)
                    vt_cap_cb_segment(b, t_ms, end_ms);
            }
            s = gt ? gt + 1 : end;
        } else if (*s == '&') {
            uint32_t cp[2];
            int ncp = 0;
            size_t k = vt_cap_html_charref(s, (size_t)(end - s), cp, &ncp, 0);

            if (k) {
                for (int i = 0; i < ncp; i++)
                    vt_cap_cb_codepoint(b, cp[i]);
                s += k;
            } else {
                vt_cap_cb_byte(b, s++);
            }
        } else {
            vt_cap_cb_byte(b, s++);
        }
    }
}

/*
 * "Collect a WebVTT block" from *pos (its line number *lineno), both moved past it. A block
 * is a cue when its first line, or its second after an identifier, is a valid timing line;
 * a line holding "-->" later in the block ends the block and starts the next one. Its text
 * is the lines after the timing line up to a blank line. The header (in_header) holds no
 * cue and also ends at a "-->" line. Blocks that are no cue (NOTE, STYLE, REGION, junk) are
 * skipped; a timing line that does not parse is remembered for the error message.
 */
static void vtt_block(struct cap_parser *p, const char **posp, long *lineno, const char *end,
                      int in_header)
{
    const char *pos = *posp, *prev = pos;
    long line = *lineno, prev_line = line;
    int count = 0, seen_arrow = 0, is_cue = 0;
    int64_t a_ms = 0, b_ms = 0;

    p->raw.len = 0;
    vt_sb_add(&p->raw, "", 0);
    for (;;) {
        const char *s = pos, *nl = memchr(pos, '\n', (size_t)(end - pos)), *le = nl ? nl : end;

        count++;
        pos = nl ? nl + 1 : end;
        line++;
        if (memmem(s, (size_t)(le - s), "-->", 3)) {
            if (in_header || !(count == 1 || (count == 2 && !seen_arrow))) {
                pos = prev;
                line = prev_line;
                break;
            }
            seen_arrow = 1;
            prev = pos;
            prev_line = line;
            is_cue = !vtt_timing(s, le, &a_ms, &b_ms);
            if (is_cue)
                p->raw.len = 0; /* the identifier */
            else
                vt_cap_note_bad_line(p, line - 1, "bad cue timing", s, le);
        } else if (s == le) {
            break;
        } else {
            vt_cap_add_raw_line(p, s, le);
            prev = pos;
            prev_line = line;
        }
        if (!nl)
            break;
    }
    *posp = pos;
    *lineno = line;
    if (!is_cue)
        return;
    p->in_cue = 1;
    p->start_ms = a_ms;
    /* the specification keeps a cue that ends before it starts; a transcript cue cannot */
    p->end_ms = b_ms < a_ms ? a_ms : b_ms;
    vt_cap_finish_cue(p);
}

/* Parse the normalized input buf (len bytes) as WebVTT: the "WebVTT parser algorithm". */
void vt_cap_parse_vtt(struct cap_parser *p, const char *buf, size_t len)
{
    const char *pos = buf, *end = buf + len, *nl;
    long line = 1;

    p->cue_text = vtt_cue_text;
    /* the signature line was checked by the caller: skip it */
    nl = memchr(pos, '\n', len);
    if (!nl || nl + 1 >= end)
        return;
    pos = nl + 1;
    line++;
    if (*pos != '\n') {
        vtt_block(p, &pos, &line, end, 1);
    } else {
        pos++;
        line++;
    }
    while (pos < end && *pos == '\n') {
        pos++;
        line++;
    }
    while (pos < end && !p->full) {
        vtt_block(p, &pos, &line, end, 0);
        while (pos < end && *pos == '\n') {
            pos++;
            line++;
        }
    }
}
