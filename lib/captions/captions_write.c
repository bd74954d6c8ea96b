/*
 * Writing transcripts as WebVTT, SubRip or plain text. Times are clamped to what the
 * formats hold, and text is sanitised (valid UTF-8, no blank line, '&' and '<' escaped
 * where a reader would take them for markup, no line that reads as a timing line) so that
 * whatever a transcript holds, the output is a valid file that this reader and FFmpeg read
 * back.
 */
#include "captions/captions.h"
#include "captions/captions_int.h"
#include "base/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Writers                                                                             */

static int64_t time_ms(double t_s)
{
    if (!(t_s > 0)) /* negative and NaN */
        return 0;
    if (t_s * 1000 >= (double)MAX_TIME_MS)
        return MAX_TIME_MS;
    return llround(t_s * 1000);
}

static void add_time(struct vt_sb *out, int64_t ms, char sep)
{
    vt_sb_addf(out, "%02" PRId64 ":%02d:%02d%c%03d", ms / 3600000, (int)(ms / 60000 % 60),
               (int)(ms / 1000 % 60), sep, (int)(ms % 1000));
}

/* Whether the words of c are exactly the space- and line-separated tokens of text. */
static int words_match(const char *text, const struct vt_cue *c)
{
    const char *p = text;
    size_t i = 0;

    if (!c->words || !c->n_words)
        return 0;
    while (*p) {
        size_t len = strcspn(p, " \n");

        if (i >= c->n_words || !c->words[i].text || strlen(c->words[i].text) != len ||
            memcmp(c->words[i].text, p, len))
            return 0;
        i++;
        p += len;
        if (*p)
            p++;
    }
    return i == c->n_words;
}

/*
 * One character of text (tidy: no blank line, no control character) for the format.
 * WebVTT escapes every & < >. SubRip has no escapes that its readers agree on (most show
 * "&lt;" as it is), so text is written as it is, except what this reader would take for
 * something else: a '<' that opens a tag (gt_later: a '>' follows on the line; whether or
 * not another '<' comes first, since that one may be escaped), an '&' that starts a
 * character reference, the '\' of an ASS override "{\" and, in a line that would read as
 * a timing line (timing_line), the '>' of its "-->".
 */
static void add_text_char(struct vt_sb *out, const char *line, size_t i, size_t n, int vtt,
                          int timing_line, int gt_later)
{
    char c = line[i];
    uint32_t cp[2];
    int ncp;

    if (vtt && c == '&')
        vt_sb_adds(out, "&amp;");
    else if (vtt && c == '<')
        vt_sb_adds(out, "&lt;");
    else if (vtt && c == '>')
        vt_sb_adds(out, "&gt;");
    else if (vtt)
        vt_sb_addc(out, c);
    else if (c == '\\' && i > 0 && line[i - 1] == '{')
        vt_sb_adds(out, "&#92;");
    else if (c == '&' && vt_cap_html_charref(line + i, n - i, cp, &ncp, 1))
        vt_sb_adds(out, "&amp;");
    else if (c == '<' && gt_later && vt_cap_tag_scan(line + i, n - i, 1))
        vt_sb_adds(out, "&lt;");
    else if (c == '>' && timing_line && i >= 2 && line[i - 1] == '-' && line[i - 2] == '-')
        vt_sb_adds(out, "&gt;");
    else
        vt_sb_addc(out, c);
}

/* The cue's lines; in WebVTT with a timestamp tag before each word when words match. */
static void add_cue_text(struct vt_sb *out, const char *text, const struct vt_cue *c, int vtt,
                         int64_t start_ms, int64_t end_ms)
{
    int tagged = vtt && words_match(text, c);
    int64_t prev_ms = start_ms;
    size_t w = 0;
    const char *line = text;

    while (*line) {
        size_t n = strcspn(line, "\n");
        int timing_line = !vtt && vt_cap_timing_like(line, line + n);
        const char *last_gt = memrchr(line, '>', n);

        for (size_t i = 0; i < n; i++) {
            if (tagged && (i == 0 || line[i - 1] == ' ')) {
                int64_t t_ms = time_ms(c->words[w++].start_s);

                t_ms = t_ms < prev_ms ? prev_ms : t_ms > end_ms ? end_ms : t_ms;
                prev_ms = t_ms;
                vt_sb_addc(out, '<');
                add_time(out, t_ms, '.');
                vt_sb_addc(out, '>');
            }
            add_text_char(out, line, i, n, vtt, timing_line, last_gt && last_gt > line + i);
        }
        vt_sb_addc(out, '\n');
        line += n;
        if (*line)
            line++;
    }
}

int vt_captions_write(const struct vt_transcript *t, const char *format, struct vt_sb *out)
{
    int vtt, srt, txt, number = 0;

    vtt = format && !strcmp(format, "vtt");
    srt = format && !strcmp(format, "srt");
    txt = format && !strcmp(format, "txt");
    if (!vtt && !srt && !txt)
        return VT_EINVAL;
    vt_sb_add(out, "", 0);
    if (vtt)
        vt_sb_adds(out, "WEBVTT\n\n");
    for (size_t i = 0; i < t->n_cues; i++) {
        const struct vt_cue *c = &t->cues[i];
        char *text = vt_cap_tidy_text(c->text ? c->text : "");
        int64_t start_ms = time_ms(c->start_s), end_ms = time_ms(c->end_s);

        if (end_ms < start_ms)
            end_ms = start_ms;
        if (!*text) {
            free(text);
            continue;
        }
        if (txt) {
            for (char *p = text; *p; p++)
                if (*p == '\n')
                    *p = ' ';
            vt_sb_adds(out, text);
            vt_sb_addc(out, '\n');
            free(text);
            continue;
        }
        if (srt)
            vt_sb_addf(out, "%d\n", ++number);
        add_time(out, start_ms, vtt ? '.' : ',');
        vt_sb_adds(out, " --> ");
        add_time(out, end_ms, vtt ? '.' : ',');
        vt_sb_addc(out, '\n');
        add_cue_text(out, text, c, vtt, start_ms, end_ms);
        vt_sb_addc(out, '\n');
        free(text);
    }
    return 0;
}
