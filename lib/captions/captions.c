/*
 * Reading captions (SubRip and WebVTT files, text subtitle streams) into transcripts,
 * and writing transcripts back out as WebVTT, SubRip or plain text. Caption files come
 * from anywhere, in any encoding: the bytes are first decoded (BOM, UTF-16 sniffing, UTF-8,
 * else libuchardet's guess converted with iconv) and preprocessed as WebVTT prescribes
 * (NUL to U+FFFD, CR and CRLF to LF). WebVTT is then read by the W3C specification's
 * parser, step by step; SubRip, which has no specification, as FFmpeg and pysrt read it.
 * Both drop what they cannot read, and everything is bounded (input size, cue and word
 * counts, timestamp range) so that no file costs more than a few times its size in memory
 * or more than linear time. The writers sanitise text so that whatever a transcript holds,
 * the output is a valid file that this reader (and FFmpeg) reads back. This file holds the
 * public entry points (vt_captions_parse, the sidecar lookup, loading and importing) and
 * what the readers share: timestamps, the cue builder and the cue collector; each concern
 * has its own captions_*.c, joined by captions_int.h.
 */
#include "captions/captions.h"

#include "captions/captions_int.h"
#include "base/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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
    if (p->vtt) {
        vt_cap_vtt_cue_text(&b, s, s + p->raw.len, p->end_ms);
    } else {
        for (;;) {
            const char *nl = strchr(s, '\n'), *le = nl ? nl : s + strlen(s);

            vt_cap_cb_line(&b, s, le, p->end_ms);
            if (!nl)
                break;
            s = nl + 1;
        }
    }
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

/* The length of the run of bytes of accept at s (n bytes, which may hold NUL). */
static size_t strspn_n(const char *s, size_t n, const char *accept)
{
    size_t i = 0;

    while (i < n && s[i] && strchr(accept, s[i]))
        i++;
    return i;
}

/* Whether buf (len bytes) starts with a WebVTT signature: "WEBVTT" then the end, a space, a tab
 * or a line break. */
static int vtt_signature(const char *buf, size_t len)
{
    return len >= 6 && !memcmp(buf, "WEBVTT", 6) &&
           (len == 6 || buf[6] == ' ' || buf[6] == '\t' || buf[6] == '\n');
}

/*
 * vt_captions_parse with name as the message prefix (NULL: the format's name), the format
 * found ("srt", "vtt" or "json3") in *kind and the encoding converted from in enc ("" for
 * UTF-8).
 */
static int parse_captions(const char *data, size_t len, const char *format, const char *name,
                          struct vt_transcript *out, const char **kind, char *enc, size_t enc_len,
                          char *err, size_t errlen)
{
    struct cap_parser p = {0};
    char *buf = NULL;
    const char *s;
    size_t n;
    long first_content = 0;
    int any_timing = 0, rc = 0, is_vtt = 0;

    memset(out, 0, sizeof(*out));
    *kind = "srt";
    enc[0] = '\0';
    if (format && strcmp(format, "srt") && strcmp(format, "vtt") && strcmp(format, "json3"))
        return vt_err(err, errlen, VT_EINVAL, "'%s': unknown captions format", format);
    if (len > VT_CAPTIONS_MAX_BYTES)
        return vt_err(err, errlen, VT_EINVAL, "%s%scaptions too large (%zu bytes, limit %u MiB)",
                      name ? name : "", name ? ": " : "", len, VT_CAPTIONS_MAX_BYTES >> 20);
    if (!data)
        data = "", len = 0;
    /* JSON is Unicode: content that starts with '{' (after a BOM and white space) is json3 */
    n = len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3) ? 3 : 0;
    n += strspn_n(data + n, len - n, " \t\r\n");
    buf = vt_cap_normalize_input(
        data, len, (format && !strcmp(format, "json3")) || (!format && n < len && data[n] == '{'),
        enc, enc_len, &n);
    s = buf + strspn(buf, " \t\n");
    /* neither SubRip nor WebVTT can start with '{' (an ASS override is within a cue) */
    if ((format && !strcmp(format, "json3")) || (!format && *s == '{')) {
        *kind = "json3";
        rc = vt_cap_parse_json3(buf, name ? name : "json3", out, err, errlen);
        goto model;
    }
    /* a WEBVTT signature always means WebVTT; without one a .vtt file is no WebVTT */
    is_vtt = vtt_signature(buf, n) || (format && !strcmp(format, "vtt"));
    *kind = is_vtt ? "vtt" : "srt";
    if (!name)
        name = *kind;
    if (is_vtt && !vtt_signature(buf, n)) {
        rc = vt_err(err, errlen, VT_EINVAL, "%s: line 1: no WEBVTT signature (not WebVTT)", name);
        goto out;
    }
    p.out = out;
    p.vtt = is_vtt;
    if (is_vtt)
        vt_cap_parse_vtt(&p, buf, n);
    else
        vt_cap_parse_srt(&p, buf, n, &any_timing, &first_content);
    if (p.full) {
        rc = p.full == 1 ? vt_err(err, errlen, VT_EINVAL, "%s: more than %d cues", name,
                                  VT_CAPTIONS_MAX_CUES)
                         : vt_err(err, errlen, VT_EINVAL, "%s: more than %d timed words", name,
                                  VT_CAPTIONS_MAX_WORDS);
        goto out;
    }
    if (!out->n_cues) {
        if (p.bad_line)
            rc = vt_err(err, errlen, VT_EINVAL, "%s: line %ld: %s", name, p.bad_line, p.bad_msg);
        else if (!is_vtt && !any_timing && first_content)
            rc = vt_err(err, errlen, VT_EINVAL,
                        "%s: line %ld: no cue timing found (not SubRip or WebVTT)", name,
                        first_content);
        else
            rc = vt_err(err, errlen, VT_SKIP, "%s%sno cues in captions", *name == '\'' ? name : "",
                        *name == '\'' ? ": " : "");
        goto out;
    }
    vt_cap_sort_cues(out);
    snprintf(out->model, sizeof(out->model), "captions:%s", *kind);
model:
    if (!rc && *enc) {
        size_t k = strlen(out->model);

        snprintf(out->model + k, sizeof(out->model) - k, " (%s)", enc);
    }
out:
    if (rc)
        vt_transcript_release(out);
    vt_sb_release(&p.raw);
    free(buf);
    return rc;
}

int vt_captions_parse(const char *data, size_t len, const char *format, struct vt_transcript *out,
                      char *err, size_t errlen)
{
    const char *kind;
    char enc[64];

    return parse_captions(data, len, format, NULL, out, &kind, enc, sizeof(enc), err, errlen);
}

/* ---------------------------------------------------------------------------------- */
/* Sidecar files                                                                       */

static int ext_is(const char *s, const char *ext)
{
    return !strcasecmp(s, ext);
}

/* A language tag of a file name: "en", "eng", "en-US", "pt_BR", "zh-Hans". */
static int lang_valid(const char *s, size_t n)
{
    size_t i = 0, k;

    while (i < n && is_alpha(s[i]))
        i++;
    if (i < 2 || i > 3)
        return 0;
    if (i == n)
        return 1;
    if (s[i] != '-' && s[i] != '_')
        return 0;
    for (k = ++i; k < n && (is_alpha(s[k]) || is_digit(s[k])); k++)
        ;
    return k == n && n - i >= 2 && n - i <= 8;
}

static int lang_is_english(const char *s, size_t n)
{
    return (n >= 2 && !strncasecmp(s, "en", 2) && (n == 2 || s[2] == '-' || s[2] == '_')) ||
           (n == 3 && !strncasecmp(s, "eng", 3));
}

/* Preference among caption file extensions: 0 vtt, 1 srt, 2 json3, -1 none of them. */
static int ext_rank(const char *ext)
{
    return ext_is(ext, "vtt") ? 0 : ext_is(ext, "srt") ? 1 : ext_is(ext, "json3") ? 2 : -1;
}

/*
 * Preference of a sidecar whose name is NAME.rest: 0-2 NAME.vtt/.srt/.json3, 3-5 English
 * NAME.<lang>.vtt/.srt/.json3, 6-8 other languages; -1 when rest is not a caption file
 * name. json3 comes last in each group only so that a directory that already had a
 * .vtt or .srt sidecar keeps reading the same one.
 */
static int sidecar_rank(const char *rest)
{
    const char *dot = strrchr(rest, '.');
    int r;

    if (!dot)
        return ext_rank(rest);
    r = ext_rank(dot + 1);
    if (r < 0 || !lang_valid(rest, (size_t)(dot - rest)))
        return -1;
    return (lang_is_english(rest, (size_t)(dot - rest)) ? 3 : 6) + r;
}

int vt_captions_find_sidecar(const char *media_path, char **sidecar_path)
{
    const char *slash = strrchr(media_path, '/'), *base = slash ? slash + 1 : media_path;
    const char *dot = strrchr(base, '.');
    size_t stem_len = dot && dot > base ? (size_t)(dot - base) : strlen(base);
    char *dir = slash ? xstrndup(media_path, slash == media_path ? 1 : (size_t)(slash - media_path))
                      : vt_xstrdup(".");
    char *best = NULL;
    int best_rank = INT_MAX, dfd;
    DIR *d = NULL;
    struct dirent *e;

    *sidecar_path = NULL;
    if (!stem_len)
        goto out;
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        goto out;
    d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        goto out;
    }
    while ((e = readdir(d))) {
        struct stat st;
        int rank;

        /* the media file itself never counts, whatever its name */
        if (strncmp(e->d_name, base, stem_len) || e->d_name[stem_len] != '.' ||
            !strcmp(e->d_name, base))
            continue;
        rank = sidecar_rank(e->d_name + stem_len + 1);
        if (rank < 0 || rank > best_rank || (rank == best_rank && strcmp(e->d_name, best) > 0))
            continue;
        /* only regular files: a symlink could lead anywhere, a fifo would block */
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
            continue;
        free(best);
        best = vt_xstrdup(e->d_name);
        best_rank = rank;
    }
    if (best)
        *sidecar_path =
            slash ? vt_xasprintf("%s%s%s", dir, slash == media_path ? "" : "/", best) : best;
    if (best && !slash)
        best = NULL;
out:
    if (d)
        closedir(d);
    free(best);
    free(dir);
    return *sidecar_path != NULL;
}

int vt_captions_load_file(const char *path, struct vt_transcript *out, char *err, size_t errlen)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *ext = strrchr(base, '.'), *format = NULL, *lang = NULL;
    char *data = NULL, *name = vt_xasprintf("'%s'", path);
    size_t len, lang_len = 0;
    const char *kind;
    char enc[64];
    int rc;

    memset(out, 0, sizeof(*out));
    if (ext && ext_is(ext + 1, "srt"))
        format = "srt";
    else if (ext && ext_is(ext + 1, "vtt"))
        format = "vtt";
    else if (ext && ext_is(ext + 1, "json3"))
        format = "json3";
    /* NAME.<lang>.ext: the part between the last two dots */
    if (ext && ext > base) {
        const char *p = ext;

        while (p > base && p[-1] != '.')
            p--;
        if (p > base && lang_valid(p, (size_t)(ext - p))) {
            lang = p;
            lang_len = (size_t)(ext - p);
        }
    }
    rc =
        vt_read_file_capped(path, "captions file", VT_CAPTIONS_MAX_BYTES, &data, &len, err, errlen);
    if (rc)
        goto out;
    rc = parse_captions(data, len, format, name, out, &kind, enc, sizeof(enc), err, errlen);
    if (rc)
        goto out;
    if (lang || *enc)
        snprintf(out->model, sizeof(out->model), "captions:sidecar %s (%.*s%s%s)", kind,
                 (int)lang_len, lang ? lang : "", lang && *enc ? ", " : "", enc);
    else
        snprintf(out->model, sizeof(out->model), "captions:sidecar %s", kind);
out:
    free(data);
    free(name);
    return rc;
}

int vt_captions_import(const char *media_path, struct vt_transcript *out, char *err, size_t errlen)
{
    char *sidecar = NULL;
    char side_err[512] = "", stream_err[512] = "";
    int rc;

    memset(out, 0, sizeof(*out));
    if (vt_captions_find_sidecar(media_path, &sidecar)) {
        rc = vt_captions_load_file(sidecar, out, side_err, sizeof(side_err));
        if (!rc)
            goto out;
    }
    rc = vt_captions_from_stream(media_path, out, stream_err, sizeof(stream_err));
    if (!rc)
        goto out;
    if (rc < 0 && rc != VT_EINVAL) {
        /* the media itself is unreadable: recognition would fail the same way */
        rc = vt_err(err, errlen, rc, "%s", stream_err);
        goto out;
    }
    rc = vt_err(err, errlen, VT_SKIP, "no captions: %s%s%s", side_err, *side_err ? "; " : "",
                stream_err);
out:
    free(sidecar);
    return rc;
}
