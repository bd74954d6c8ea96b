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
 * the output is a valid file that this reader (and FFmpeg) reads back.
 */
#include "captions.h"

#include "media.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <uchardet.h>
#include <unistd.h>

/* Timestamps beyond this many hours are refused by the reader and clamped by the writers. */
#define MAX_HOURS   99999
#define MAX_TIME_MS ((int64_t)(MAX_HOURS + 1) * 3600000 - 1)
/* A subtitle stream's cue without a duration lasts until the next cue, at most this. */
#define STREAM_CUE_DEFAULT_MS 5000

/* ---------------------------------------------------------------------------------- */
/* Lexical helpers shared by the reader and the writers                                */

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_blank(int c)
{
    return c == ' ' || c == '\t';
}

static char *xstrndup(const char *s, size_t n)
{
    char *p = vt_xmalloc(n + 1);

    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static int64_t parse_ts(const char **p, const char *end);

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
static size_t tag_scan(const char *s, size_t n, int gt_later)
{
    size_t i = 1;

    if (n < 3 || s[0] != '<')
        return 0;
    if (is_digit(s[1])) {
        const char *q = s + 1;

        return parse_ts(&q, s + n) >= 0 && q < s + n && *q == '>' ? (size_t)(q - s) + 1 : 0;
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

/* tag_len: the SubRip tag at s, if any */
static size_t tag_len(const char *s, size_t n)
{
    return tag_scan(s, n, 0);
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

/* UTF-8 encoding of cp into buf; its length. */
static size_t utf8_put(uint32_t cp, char *buf)
{
    if (cp < 0x80) {
        buf[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        buf[0] = (char)(0xc0 | (cp >> 6));
        buf[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        buf[0] = (char)(0xe0 | (cp >> 12));
        buf[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        buf[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    buf[0] = (char)(0xf0 | (cp >> 18));
    buf[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    buf[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    buf[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The table of HTML named character references: html_ent_names, html_ents[] */
#include "html_entities.inc"

/*
 * The HTML named character reference whose name is the n bytes at s (with its ';' when it
 * has one), or NULL. The table is lib/html_entities.inc, sorted bytewise.
 */
static const struct html_ent *ent_find(const char *s, size_t n)
{
    size_t lo = 0, hi = HTML_ENT_COUNT;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct html_ent *e = &html_ents[mid];
        size_t k = e->len < n ? e->len : n;
        int c = memcmp(html_ent_names + e->off, s, k);

        if (!c)
            c = e->len < n ? -1 : e->len > n;
        if (!c)
            return e;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/*
 * The character reference at s ('&', n bytes to the end of the text) as HTML's tokenizer
 * consumes one in text: its length, with its code points in cp[0..*ncp). 0 when the '&' is
 * literal. Named references take the longest name of the WHATWG list, the legacy ones
 * (&amp &copy &eacute ...) also without their ';'; numeric ones need a digit and take an
 * optional ';'; 0, surrogates and values beyond U+10FFFF give U+FFFD and 0x80-0x9F the
 * Windows-1252 character, as in HTML. need_semicolon (SubRip, which has no references of
 * its own) takes only references that end with ';'.
 */
static size_t html_charref(const char *s, size_t n, uint32_t cp[2], int *ncp, int need_semicolon)
{
    static const uint16_t c1[32] = {
        0x20ac, 0x81,   0x201a, 0x192,  0x201e, 0x2026, 0x2020, 0x2021, 0x2c6,  0x2030, 0x160,
        0x2039, 0x152,  0x8d,   0x17d,  0x8f,   0x90,   0x2018, 0x2019, 0x201c, 0x201d, 0x2022,
        0x2013, 0x2014, 0x2dc,  0x2122, 0x161,  0x203a, 0x153,  0x9d,   0x17e,  0x178,
    };
    const struct html_ent *e;
    size_t i = 1, run;

    if (n < 2 || s[0] != '&')
        return 0;
    if (s[1] == '#') {
        int hex = n > 2 && (s[2] == 'x' || s[2] == 'X');
        size_t first = i = hex ? 3 : 2;
        uint32_t v = 0;

        for (; i < n; i++) {
            int c = s[i], d = is_digit(c)                   ? c - '0'
                              : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                              : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                            : -1;

            if (d < 0)
                break;
            v = v > 0x10ffff ? v : v * (hex ? 16 : 10) + (uint32_t)d;
        }
        if (i == first)
            return 0;
        if (i < n && s[i] == ';')
            i++;
        else if (need_semicolon)
            return 0;
        if (v == 0 || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
            v = 0xfffd;
        else if (v >= 0x80 && v <= 0x9f)
            v = c1[v - 0x80];
        cp[0] = v;
        *ncp = 1;
        return i;
    }
    while (i < n && i - 1 < HTML_ENT_MAX_NAME && (is_alpha(s[i]) || is_digit(s[i])))
        i++;
    run = i - 1;
    if (!run)
        return 0;
    e = i < n && s[i] == ';' ? ent_find(s + 1, run + 1) : NULL;
    /* the legacy names without ';' are at most 6 letters: the longest one that is a prefix */
    for (size_t k = run < 6 ? run : 6; !e && !need_semicolon && k >= 2; k--) {
        e = ent_find(s + 1, k);
        if (e)
            run = k - 1; /* so that 1 + run + 1 below is the length */
    }
    if (!e)
        return 0;
    cp[0] = e->cp;
    cp[1] = e->cp2;
    *ncp = e->cp2 ? 2 : 1;
    return 1 + run + 1;
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
static int64_t parse_ts(const char **p, const char *end)
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

/* A cue timing line "START --> END [settings]": 0, 1 when end < start, -1 when malformed. */
static int parse_timing(const char *s, const char *end, int64_t *start_ms, int64_t *end_ms)
{
    while (s < end && is_blank(*s))
        s++;
    *start_ms = parse_ts(&s, end);
    if (*start_ms < 0)
        return -1;
    while (s < end && is_blank(*s))
        s++;
    if (end - s < 3 || memcmp(s, "-->", 3))
        return -1;
    s += 3;
    while (s < end && is_blank(*s))
        s++;
    *end_ms = parse_ts(&s, end);
    if (*end_ms < 0 || (s < end && !is_blank(*s)))
        return -1;
    return *end_ms < *start_ms ? 1 : 0;
}

/*
 * Text made fit for a cue: valid UTF-8, each line's spaces and tabs collapsed and
 * trimmed, empty lines dropped, lines joined with '\n'. Caller frees.
 */
static char *tidy_text(const char *s)
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

static void sort_cues(struct vt_transcript *t)
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
/* Reading SubRip and WebVTT                                                            */

/* Length of the UTF-8 sequence at p (n > 0 bytes left): 1-4, or 0 when it is not valid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    return vt_utf8_decode((const char *)p, n, NULL);
}

/*
 * UTF-16 without a BOM: most subtitle text is ASCII (timings, numbers), so every other
 * byte is 0. "UTF-16LE", "UTF-16BE" or NULL.
 */
static const char *sniff_utf16(const unsigned char *d, size_t len)
{
    size_t n = len < 8192 ? len : 8192, pairs = n / 2, z_even = 0, z_odd = 0;

    if (pairs < 4)
        return NULL;
    for (size_t i = 0; i + 1 < n; i += 2) {
        z_even += d[i] == 0;
        z_odd += d[i + 1] == 0;
    }
    if (z_odd >= pairs / 4 && z_even <= pairs / 50)
        return "UTF-16LE";
    if (z_even >= pairs / 4 && z_odd <= pairs / 50)
        return "UTF-16BE";
    return NULL;
}

/*
 * Whether Latin text that uchardet calls ISO-8859-1 or Windows-1252 is rather ISO-8859-15,
 * which uchardet does not tell apart: no byte in 0x80-0x9F (Windows-1252's letters and
 * punctuation there), and one of the bytes where ISO-8859-15 has a letter or the euro sign
 * and the others a symbol that subtitles hardly use (0xA4 currency sign, 0xBD one half
 * ...). 0xB4, the acute accent, often typed for an apostrophe, is no evidence.
 */
static int latin9_likely(const unsigned char *d, size_t len)
{
    int seen = 0;

    for (size_t i = 0; i < len; i++) {
        if (d[i] >= 0x80 && d[i] <= 0x9f)
            return 0;
        seen |= d[i] == 0xa4 || d[i] == 0xa6 || d[i] == 0xa8 || d[i] == 0xb8 || d[i] == 0xbc ||
                d[i] == 0xbd || d[i] == 0xbe;
    }
    return seen;
}

/*
 * The encoding of a caption file: a BOM says it (UTF-8, UTF-16LE, UTF-16BE), then UTF-16
 * sniffed from its 0 bytes, then UTF-8 if it is valid UTF-8 (or almost: a few bad bytes
 * among many good multi-byte sequences are damage, not another encoding), else what
 * uchardet finds (WINDOWS-1252, ISO-8859-1, GB18030, SHIFT_JIS ...; ISO-8859-15 by
 * latin9_likely). NULL when it must be
 * read as UTF-8 with the bad bytes replaced. *bom is the BOM's length.
 */
static const char *detect_encoding(const unsigned char *d, size_t len, size_t *bom, char *buf,
                                   size_t bufsz)
{
    size_t mb = 0, bad = 0;
    const char *cs;
    uchardet_t ud;
    int failed = 0;

    *bom = 0;
    if (len >= 3 && d[0] == 0xef && d[1] == 0xbb && d[2] == 0xbf) {
        *bom = 3;
        return "UTF-8";
    }
    if (len >= 2 && d[0] == 0xff && d[1] == 0xfe) {
        *bom = 2;
        return "UTF-16LE";
    }
    if (len >= 2 && d[0] == 0xfe && d[1] == 0xff) {
        *bom = 2;
        return "UTF-16BE";
    }
    if ((cs = sniff_utf16(d, len)))
        return cs;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_len(d + i, len - i);

        mb += k > 1;
        bad += k == 0;
        i += k ? k : 1;
    }
    if (!bad || (mb && mb >= 4 * bad))
        return "UTF-8";
    ud = uchardet_new();
    if (!ud)
        return NULL;
    cs = NULL;
    /* only the lines that hold non-ASCII bytes tell anything, and 1 MiB of them is plenty */
    for (size_t i = 0, fed = 0; i < len && fed < (1u << 20) && !failed;) {
        const unsigned char *nl = memchr(d + i, '\n', len - i);
        size_t k = nl ? (size_t)(nl - (d + i)) + 1 : len - i, j = 0;

        while (j < k && d[i + j] < 0x80)
            j++;
        if (j < k) {
            failed = uchardet_handle_data(ud, (const char *)d + i, k) != 0;
            fed += k;
        }
        i += k;
    }
    if (!failed) {
        uchardet_data_end(ud);
        if (*uchardet_get_charset(ud)) {
            snprintf(buf, bufsz, "%s", uchardet_get_charset(ud));
            cs = buf;
        }
    }
    uchardet_delete(ud);
    /* pure ASCII or UTF-8 cannot hold the bad bytes just counted */
    if (cs && (!strcasecmp(cs, "ASCII") || !strcasecmp(cs, "UTF-8")))
        cs = NULL;
    if (cs && (!strcasecmp(cs, "ISO-8859-1") || !strcasecmp(cs, "WINDOWS-1252")) &&
        latin9_likely(d, len))
        cs = "ISO-8859-15";
    return cs;
}

/*
 * len bytes in encoding enc converted to UTF-8 (NUL bytes kept): *out and *out_len, 0; or
 * -1 when iconv does not know enc. Bytes that are invalid in enc become U+FFFD.
 */
static int convert_to_utf8(const char *enc, const char *data, size_t len, char **out,
                           size_t *out_len)
{
    iconv_t cd = iconv_open("UTF-8", enc);
    size_t cap = len * 2 + 16, o = 0, unit = !strncasecmp(enc, "UTF-16", 6) ? 2 : 1;
    char *buf, *in = (char *)data;
    size_t in_left = len;

    if (cd == (iconv_t)-1)
        return -1;
    buf = vt_xmalloc(cap);
    while (in_left) {
        char *op;
        size_t o_left, r;

        /* room for iconv's output and for a U+FFFD after it */
        if (cap - o < 64) {
            cap *= 2;
            buf = vt_xrealloc(buf, cap);
        }
        op = buf + o;
        o_left = cap - o - 4;
        r = iconv(cd, &in, &in_left, &op, &o_left);
        o = (size_t)(op - buf);
        if (r != (size_t)-1)
            break;
        if (errno == E2BIG) {
            cap *= 2;
            buf = vt_xrealloc(buf, cap);
            continue;
        }
        /* EILSEQ, or EINVAL for a sequence cut short at the end */
        memcpy(buf + o, "\xef\xbf\xbd", 3);
        o += 3;
        if (in_left < unit)
            break;
        in += unit;
        in_left -= unit;
        iconv(cd, NULL, NULL, NULL, NULL);
    }
    iconv_close(cd);
    *out = buf;
    *out_len = o;
    return 0;
}

/*
 * The input as one NUL-terminated string of UTF-8 with '\n' line ends, in the steps of
 * WebVTT's decoding and preprocessing: converted from its encoding (see detect_encoding;
 * *enc is its lowercase name, "" for UTF-8), a BOM removed, NUL bytes and invalid
 * sequences made U+FFFD, CRLF and lone CR made '\n'. Other control characters are kept
 * (a form feed is white space in a timing line); the cue text builders replace them.
 * unicode_only (JSON, which is always Unicode) reads invalid UTF-8 as damage, not as a
 * legacy encoding.
 * *out_len is the length. Caller frees.
 */
static char *normalize_input(const char *data, size_t len, int unicode_only, char *enc,
                             size_t enc_len, size_t *out_len)
{
    char namebuf[64];
    size_t bom = 0, o = 0, n = len;
    const char *cs =
        detect_encoding((const unsigned char *)data, len, &bom, namebuf, sizeof(namebuf));

    if (unicode_only && cs && strncmp(cs, "UTF-", 4))
        cs = NULL;
    char *conv = NULL, *buf;
    const unsigned char *d = (const unsigned char *)data + bom;

    enc[0] = '\0';
    n -= bom;
    if (cs && strcmp(cs, "UTF-8")) {
        size_t conv_len;

        if (!convert_to_utf8(cs, (const char *)d, n, &conv, &conv_len)) {
            d = (const unsigned char *)conv;
            n = conv_len;
            snprintf(enc, enc_len, "%s", cs);
            for (char *p = enc; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        }
    }
    /* a BOM that survived conversion (UTF-16 sniffed without one has none) */
    if (n >= 3 && d[0] == 0xef && d[1] == 0xbb && d[2] == 0xbf && !bom) {
        d += 3;
        n -= 3;
    }
    /* a first pass sizes the output: a NUL or bad byte gives 3 (U+FFFD) */
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len(d + i, n - i);

        o += d[i] == 0 || !k ? 3 : k;
        i += d[i] == 0 || !k ? 1 : k;
    }
    buf = vt_xmalloc(o + 1);
    o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len(d + i, n - i);

        if (d[i] == 0 || !k) {
            memcpy(buf + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        } else if (d[i] == '\r') {
            buf[o++] = '\n';
            i += i + 1 < n && d[i + 1] == '\n' ? 2 : 1;
        } else {
            memcpy(buf + o, d + i, k);
            o += k;
            i += k;
        }
    }
    buf[o] = '\0';
    free(conv);
    *out_len = o;
    return buf;
}

/* Building one cue's text and words from its raw lines. */
struct cue_builder {
    struct vt_sb text;
    size_t *word_seg; /* for each word of text, the timing segment it starts in */
    size_t n_word_seg, cap_word_seg;
    int64_t *seg_ms; /* segment k starts at seg_ms[k]; segment 0 at the cue's start */
    size_t n_seg, cap_seg;
    int pending_sp, pending_nl;
};

static void cb_emit(struct cue_builder *b, const char *s, size_t n)
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
static void cb_segment(struct cue_builder *b, int64_t t_ms, int64_t end_ms)
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
static void cb_byte(struct cue_builder *b, const char *s)
{
    unsigned char c = (unsigned char)*s;

    if (c == '\n')
        b->pending_nl = 1;
    else if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r')
        b->pending_sp = 1;
    else if (c < 0x20 || c == 0x7f)
        cb_emit(b, "\xef\xbf\xbd", 3);
    else
        cb_emit(b, s, 1);
}

/*
 * A character from a character reference: U+00A0 (&nbsp;) becomes a plain space, since it
 * separates words for search, the invisible direction marks U+200E and U+200F (&lrm;
 * &rlm;) nothing, control characters as in cb_byte.
 */
static void cb_codepoint(struct cue_builder *b, uint32_t cp)
{
    char ub[4];

    if (cp == 0xa0)
        b->pending_sp = 1;
    else if (cp == 0x200e || cp == 0x200f)
        return;
    else if (cp < 0x80)
        cb_byte(b, &(char){(char)cp});
    else if (cp < 0xa0)
        cb_emit(b, "\xef\xbf\xbd", 3);
    else
        cb_emit(b, ub, utf8_put(cp, ub));
}

/*
 * One line of SubRip cue text: markup tags (<i>, <font ...>, <00:00:01.000>) and ASS
 * overrides ({\an8}) removed, character references that end with ';' decoded.
 */
static void cb_line(struct cue_builder *b, const char *s, const char *le, int64_t end_ms)
{
    b->pending_nl = 1;
    while (s < le) {
        size_t n = (size_t)(le - s);
        uint32_t cp[2];
        int ncp = 0;
        size_t tag = *s == '<' ? tag_len(s, n) : 0;
        size_t override = *s == '{' ? override_len(s, n) : 0;
        size_t entity = *s == '&' ? html_charref(s, n, cp, &ncp, 1) : 0;

        if (tag) {
            const char *q = s + 1;
            int64_t t_ms = parse_ts(&q, s + tag - 1);

            if (t_ms >= 0 && q == s + tag - 1)
                cb_segment(b, t_ms, end_ms);
            s += tag;
        } else if (override) {
            s += override;
        } else if (entity) {
            for (int i = 0; i < ncp; i++)
                cb_codepoint(b, cp[i]);
            s += entity;
        } else {
            cb_byte(b, s++);
        }
    }
}

/*
 * Words of b's text with times. A segment's span (from its tag to the next tag, or the
 * cue's end) is shared evenly among the words that start in it; each word then lasts until
 * the next word starts (the last until the cue's end), so that a tag in mid-word or two
 * tags in a row still give words that follow each other without gaps, which is also what
 * the WebVTT writer can express.
 */
static void cb_words(struct cue_builder *b, int64_t end_ms, struct vt_cue *c)
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

struct cap_parser {
    struct vt_transcript *out;
    size_t cap_cues, n_words;
    struct vt_sb raw;     /* the current cue's lines, '\n'-separated */
    size_t last_line_off; /* where the last of them starts */
    int in_cue;
    int64_t start_ms, end_ms;
    long bad_line; /* first line with an unreadable timing, 0 if none */
    char bad_msg[128];
    int full; /* 1: too many cues, 2: too many words */
    int vtt;  /* WebVTT: the cue text tokenizer; else SubRip's markup rules */
};

static void vtt_cue_text(struct cue_builder *b, const char *s, const char *end, int64_t end_ms);

/* Turn the collected lines into a cue; cues left empty by markup removal are dropped. */
static void finish_cue(struct cap_parser *p)
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
        vtt_cue_text(&b, s, s + p->raw.len, p->end_ms);
    } else {
        for (;;) {
            const char *nl = strchr(s, '\n'), *le = nl ? nl : s + strlen(s);

            cb_line(&b, s, le, p->end_ms);
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
        cb_words(&b, p->end_ms, &c);
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

static void add_raw_line(struct cap_parser *p, const char *s, const char *le)
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
static void drop_number_line(struct cap_parser *p)
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

static void note_bad_line(struct cap_parser *p, long lineno, const char *what, const char *s,
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
                    cb_segment(b, t_ms, end_ms);
            }
            s = gt ? gt + 1 : end;
        } else if (*s == '&') {
            uint32_t cp[2];
            int ncp = 0;
            size_t k = html_charref(s, (size_t)(end - s), cp, &ncp, 0);

            if (k) {
                for (int i = 0; i < ncp; i++)
                    cb_codepoint(b, cp[i]);
                s += k;
            } else {
                cb_byte(b, s++);
            }
        } else {
            cb_byte(b, s++);
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
                note_bad_line(p, line - 1, "bad cue timing", s, le);
        } else if (s == le) {
            break;
        } else {
            add_raw_line(p, s, le);
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
    finish_cue(p);
}

/* Parse the normalized input buf (len bytes) as WebVTT: the "WebVTT parser algorithm". */
static void parse_vtt(struct cap_parser *p, const char *buf, size_t len)
{
    const char *pos = buf, *end = buf + len, *nl;
    long line = 1;

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

/* ---------------------------------------------------------------------------------- */
/* Reading YouTube's json3                                                              */

/* An event of a json3 file that holds text. */
struct j3_event {
    int64_t start_ms, dur_ms; /* dur_ms -1: not given */
    size_t index;
    const json_t *segs;
};

static int cmp_j3_event(const void *a, const void *b)
{
    const struct j3_event *x = a, *y = b;

    if (x->start_ms != y->start_ms)
        return x->start_ms < y->start_ms ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* A json3 time field in ms: 0 when it is a number in 0..MAX_TIME_MS, else -1. */
static int j3_ms(const json_t *v, int64_t *ms)
{
    double d;

    if (!json_is_number(v))
        return -1;
    d = json_number_value(v);
    if (!(d >= 0 && d <= (double)MAX_TIME_MS))
        return -1;
    *ms = llround(d);
    return 0;
}

/* Whether the segs of an event hold something other than spaces and line breaks. */
static int j3_has_text(const json_t *segs)
{
    size_t i;
    json_t *seg;

    json_array_foreach(segs, i, seg)
    {
        const json_t *u = json_object_get(seg, "utf8");
        const char *s = json_string_value(u);
        size_t n = json_string_length(u);

        for (size_t k = 0; s && k < n; k++)
            if ((unsigned char)s[k] > 0x20 && s[k] != 0x7f)
                return 1;
    }
    return 0;
}

/*
 * The text of an event's segs into b: segs concatenated, '\n' a line break, spaces
 * collapsed, control characters dropped. A seg with tOffsetMs starts a timing segment at
 * the event's start plus the offset (kept within the cue by cb_segment).
 */
static void j3_text(struct cue_builder *b, const json_t *segs, int64_t start_ms, int64_t end_ms)
{
    size_t i;
    json_t *seg;

    b->pending_nl = 1;
    json_array_foreach(segs, i, seg)
    {
        const json_t *u = json_object_get(seg, "utf8");
        const char *s = json_string_value(u);
        size_t n = json_string_length(u);
        int64_t off_ms;

        if (!j3_ms(json_object_get(seg, "tOffsetMs"), &off_ms))
            cb_segment(b, start_ms + off_ms, end_ms);
        for (size_t k = 0; s && k < n; k++) {
            unsigned char c = (unsigned char)s[k];

            if (c == '\n')
                b->pending_nl = 1;
            else if (c == ' ' || c == '\t')
                b->pending_sp = 1;
            else if (c >= 0x20 && c != 0x7f)
                cb_emit(b, s + k, 1);
        }
    }
}

/*
 * Parse buf (normalized input) as json3. Each event with text is one cue from tStartMs for
 * dDurationMs (without one, until the next event, at most STREAM_CUE_DEFAULT_MS), clipped
 * to end where the next later event starts: automatic captions keep a line on screen while
 * the next one is being spoken, and search wants each word in one cue.
 */
static int parse_json3(const char *buf, const char *name, struct vt_transcript *out, char *err,
                       size_t errlen)
{
    struct j3_event *ev = NULL;
    int64_t *next_ms = NULL;
    size_t n_ev = 0, cap_ev = 0, cap_cues = 0, n_words = 0, i;
    json_error_t jerr;
    json_t *root, *events, *e;
    char *fixed;
    size_t fixed_len;
    int rc = 0;

    fixed = vt_json_repair(buf, strlen(buf), &fixed_len);
    root = json_loadb(fixed, fixed_len, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &jerr);
    free(fixed);
    if (!root) {
        char *msg = vt_utf8_clean(jerr.text); /* it may quote the input: one line */

        for (char *q = msg; *q; q++)
            if (*q == '\n' || *q == '\t')
                *q = ' ';
        rc = vt_err(err, errlen, VT_EINVAL, "%s: line %d: not JSON: %s", name, jerr.line, msg);
        free(msg);
        return rc;
    }
    events = json_object_get(root, "events");
    if (!json_is_array(events)) {
        rc = vt_err(err, errlen, VT_EINVAL, "%s: no \"events\" array (not json3 captions)", name);
        goto out;
    }
    json_array_foreach(events, i, e)
    {
        const json_t *segs = json_object_get(e, "segs");
        int64_t start_ms, dur_ms = -1;

        if (!json_is_array(segs) || !j3_has_text(segs) ||
            j3_ms(json_object_get(e, "tStartMs"), &start_ms))
            continue;
        if (json_object_get(e, "dDurationMs") && j3_ms(json_object_get(e, "dDurationMs"), &dur_ms))
            continue; /* a negative or absurd duration: like a cue that ends before it starts */
        if (n_ev == VT_CAPTIONS_MAX_CUES) {
            rc =
                vt_err(err, errlen, VT_EINVAL, "%s: more than %d cues", name, VT_CAPTIONS_MAX_CUES);
            goto out;
        }
        vt_grow((void **)&ev, &cap_ev, n_ev + 1, sizeof(*ev));
        ev[n_ev++] = (struct j3_event){start_ms, dur_ms, i, segs};
    }
    if (n_ev)
        qsort(ev, n_ev, sizeof(*ev), cmp_j3_event);
    /* next_ms[i]: the start of the first event starting after event i, or -1 */
    next_ms = vt_xcalloc(n_ev + 1, sizeof(*next_ms));
    next_ms[n_ev] = -1;
    for (i = n_ev; i-- > 0;)
        next_ms[i] = i + 1 < n_ev && ev[i + 1].start_ms > ev[i].start_ms ? ev[i + 1].start_ms
                                                                         : next_ms[i + 1];
    for (i = 0; i < n_ev; i++) {
        struct cue_builder b = {0};
        struct vt_cue c = {0};
        int64_t start_ms = ev[i].start_ms;
        int64_t end_ms = start_ms + (ev[i].dur_ms >= 0 ? ev[i].dur_ms : STREAM_CUE_DEFAULT_MS);

        if (next_ms[i] >= 0 && next_ms[i] < end_ms)
            end_ms = next_ms[i];
        vt_grow((void **)&b.seg_ms, &b.cap_seg, 1, sizeof(int64_t));
        b.seg_ms[b.n_seg++] = start_ms;
        j3_text(&b, ev[i].segs, start_ms, end_ms);
        if (b.text.len && b.n_seg > 1 && n_words + b.n_word_seg > VT_CAPTIONS_MAX_WORDS) {
            rc = vt_err(err, errlen, VT_EINVAL, "%s: more than %d timed words", name,
                        VT_CAPTIONS_MAX_WORDS);
        } else if (b.text.len) {
            if (b.n_seg > 1) {
                n_words += b.n_word_seg;
                cb_words(&b, end_ms, &c);
            }
            c.start_s = (double)start_ms / 1000;
            c.end_s = (double)end_ms / 1000;
            c.text = vt_sb_detach(&b.text);
            vt_grow((void **)&out->cues, &cap_cues, out->n_cues + 1, sizeof(c));
            out->cues[out->n_cues++] = c;
        }
        vt_sb_release(&b.text);
        free(b.word_seg);
        free(b.seg_ms);
        if (rc)
            goto out;
    }
    if (!out->n_cues) {
        rc = vt_err(err, errlen, VT_SKIP, "%s%sno cues in captions", *name == '\'' ? name : "",
                    *name == '\'' ? ": " : "");
        goto out;
    }
    sort_cues(out);
    snprintf(out->model, sizeof(out->model), "captions:json3");
out:
    if (rc)
        vt_transcript_release(out);
    free(next_ms);
    free(ev);
    json_decref(root);
    return rc;
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
 * Whether the line s..le (holding "-->") was meant as a timing line: a time, possibly
 * negative or out of range, before its "-->"; "x --> y" is text.
 */
static int timing_like(const char *s, const char *le)
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
static void parse_srt(struct cap_parser *p, const char *buf, size_t len, int *any_timing,
                      long *first_content)
{
    enum { IDLE, CUE, SKIP } state = IDLE;
    const char *s = buf, *end = buf + len;
    long lineno = 0;

    while (s <= end && !p->full) {
        const char *nl = memchr(s, '\n', (size_t)(end - s)), *le = nl ? nl : end, *t = s;
        int64_t a_ms, b_ms;
        int r;

        lineno++;
        while (t < le && is_blank(*t))
            t++;
        if (t == le) {
            if (state == CUE)
                add_raw_line(p, s, le); /* the cue goes on after a blank line */
            else
                state = IDLE;
        } else if (memmem(t, (size_t)(le - t), "-->", 3)) {
            r = parse_timing(t, le, &a_ms, &b_ms);
            if (r == 0) {
                *any_timing = 1;
                drop_number_line(p);
                finish_cue(p);
                p->in_cue = 1;
                p->start_ms = a_ms;
                p->end_ms = b_ms;
                state = CUE;
            } else if (r < 0 && state == CUE && !timing_like(t, le)) {
                add_raw_line(p, s, le); /* text that happens to hold "-->" */
            } else {
                drop_number_line(p);
                finish_cue(p);
                note_bad_line(p, lineno, r > 0 ? "cue ends before it starts" : "bad cue timing", t,
                              le);
                state = SKIP;
            }
        } else if (state == CUE) {
            add_raw_line(p, s, le);
        } else if (state == IDLE && !*first_content) {
            *first_content = lineno; /* a cue number, or junk */
        }
        if (!nl)
            break;
        s = nl + 1;
    }
    finish_cue(p);
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
    buf = normalize_input(
        data, len, (format && !strcmp(format, "json3")) || (!format && n < len && data[n] == '{'),
        enc, enc_len, &n);
    s = buf + strspn(buf, " \t\n");
    /* neither SubRip nor WebVTT can start with '{' (an ASS override is within a cue) */
    if ((format && !strcmp(format, "json3")) || (!format && *s == '{')) {
        *kind = "json3";
        rc = parse_json3(buf, name ? name : "json3", out, err, errlen);
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
        parse_vtt(&p, buf, n);
    else
        parse_srt(&p, buf, n, &any_timing, &first_content);
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
    sort_cues(out);
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

/* ---------------------------------------------------------------------------------- */
/* Embedded subtitle streams                                                           */

/*
 * The text of an ASS event as FFmpeg's decoders give it: "ReadOrder,Layer,Style,Name,
 * MarginL,MarginR,MarginV,Effect,Text" (or a full "Dialogue: Layer,Start,End,...,Text"
 * line from older code), with override blocks {...} removed, \N and \n made line breaks
 * and \h a space.
 */
static void add_ass_text(struct vt_sb *sb, const char *ass)
{
    const char *s = ass;
    int fields = 8, no_close = 0;

    if (!strncmp(s, "Dialogue:", 9)) {
        s += 9;
        fields = 9;
    }
    for (int i = 0; i < fields; i++) {
        s = strchr(s, ',');
        if (!s)
            return;
        s++;
    }
    while (*s) {
        if (*s == '{' && !no_close) {
            const char *e = strchr(s, '}');

            if (e) {
                s = e + 1;
                continue;
            }
            no_close = 1; /* no '}' anywhere after: every later '{' is literal too */
        }
        if (s[0] == '\\' && (s[1] == 'N' || s[1] == 'n')) {
            vt_sb_addc(sb, '\n');
            s += 2;
        } else if (s[0] == '\\' && s[1] == 'h') {
            vt_sb_addc(sb, ' ');
            s += 2;
        } else {
            vt_sb_addc(sb, *s++);
        }
    }
}

/*
 * s with character references decoded: FFmpeg's subrip and mov_text decoders pass "&amp;"
 * through as it was in the SubRip file. Caller frees.
 */
static char *decode_entities(const char *s)
{
    struct vt_sb sb = {0};
    size_t n = strlen(s);

    vt_sb_add(&sb, "", 0);
    for (size_t i = 0; i < n;) {
        uint32_t cp[2];
        int ncp = 0;
        size_t k = s[i] == '&' ? html_charref(s + i, n - i, cp, &ncp, 1) : 0;

        if (k) {
            for (int j = 0; j < ncp; j++) {
                char ub[4];

                /* as in cue text: &nbsp; a space, &lrm; and &rlm; nothing */
                if (cp[j] == 0xa0)
                    vt_sb_addc(&sb, ' ');
                else if (cp[j] != 0x200e && cp[j] != 0x200f)
                    vt_sb_add(&sb, ub, utf8_put(cp[j], ub));
            }
            i += k;
        } else {
            vt_sb_addc(&sb, s[i++]);
        }
    }
    return vt_sb_detach(&sb);
}

/* The first text subtitle stream's index, or -1 with the first bitmap one's codec name. */
static int find_text_stream(AVFormatContext *fmt, const char **bitmap_codec)
{
    *bitmap_codec = NULL;
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        const AVCodecParameters *par = fmt->streams[i]->codecpar;
        const AVCodecDescriptor *desc = avcodec_descriptor_get(par->codec_id);

        if (par->codec_type != AVMEDIA_TYPE_SUBTITLE)
            continue;
        if (desc && (desc->props & AV_CODEC_PROP_TEXT_SUB))
            return (int)i;
        if (!*bitmap_codec)
            *bitmap_codec = avcodec_get_name(par->codec_id);
    }
    return -1;
}

/* The stream's language tag, made safe for the model string; "" when absent or "und". */
static void stream_lang(const AVStream *st, char *buf, size_t n)
{
    const AVDictionaryEntry *e = av_dict_get(st->metadata, "language", NULL, 0);
    size_t k = 0;

    buf[0] = '\0';
    if (!e || !strcmp(e->value, "und"))
        return;
    for (const char *p = e->value; *p && k + 1 < n && k < 15; p++)
        if (is_alpha(*p) || is_digit(*p) || *p == '-' || *p == '_')
            buf[k++] = *p;
    buf[k] = '\0';
}

/* Give cues that had no duration an end: the next later cue's start, at most 5 s on. */
static void fix_open_ends(struct vt_transcript *t)
{
    for (size_t i = 0; i < t->n_cues; i++) {
        struct vt_cue *c = &t->cues[i];
        double end_s = c->start_s + STREAM_CUE_DEFAULT_MS / 1000.0;

        if (c->end_s >= c->start_s)
            continue;
        for (size_t j = i + 1; j < t->n_cues; j++) {
            if (t->cues[j].start_s > c->start_s) {
                end_s = fmin(end_s, t->cues[j].start_s);
                break;
            }
        }
        c->end_s = end_s;
    }
}

/*
 * Append the cue of one decoded subtitle (raw: its rects' text) to out unless it is empty;
 * dur_ms < 0 when unknown. Returns 1 when a cap is reached (nothing appended), else 0.
 */
static int add_stream_cue(struct vt_transcript *out, size_t *cap_cues, const char *raw,
                          int64_t start_ms, int64_t dur_ms, size_t *text_bytes)
{
    char *decoded = decode_entities(raw), *text = tidy_text(decoded);
    struct vt_cue *c;
    int rc = 0;

    if (!*text)
        goto out;
    *text_bytes += strlen(text);
    if (out->n_cues >= VT_CAPTIONS_MAX_CUES || *text_bytes > VT_CAPTIONS_MAX_BYTES) {
        rc = 1;
        goto out;
    }
    vt_grow((void **)&out->cues, cap_cues, out->n_cues + 1, sizeof(*out->cues));
    c = &out->cues[out->n_cues++];
    memset(c, 0, sizeof(*c));
    c->text = text;
    text = NULL;
    c->start_s = (double)start_ms / 1000;
    /* no duration: -1 marks the cue for fix_open_ends */
    c->end_s = dur_ms >= 0 ? (double)(start_ms + (dur_ms < MAX_TIME_MS ? dur_ms : 0)) / 1000 : -1;
out:
    free(decoded);
    free(text);
    return rc;
}

/* A timestamp in ms clamped far enough inside int64 that sums and differences stay exact. */
static int64_t clamp_ms(int64_t t_ms)
{
    return t_ms < -4 * MAX_TIME_MS  ? -4 * MAX_TIME_MS
           : t_ms > 4 * MAX_TIME_MS ? 4 * MAX_TIME_MS
                                    : t_ms;
}

int vt_captions_from_stream(const char *media_path, struct vt_transcript *out, char *err,
                            size_t errlen)
{
    AVFormatContext *fmt = NULL;
    AVCodecContext *dec = NULL;
    AVPacket *pkt = NULL;
    const AVCodec *codec;
    const char *bitmap;
    AVStream *st;
    struct vt_sb sb = {0};
    size_t cap_cues = 0, text_bytes = 0;
    int64_t origin_ms = 0;
    char lang[16], eb[128];
    int rc, idx, e;

    memset(out, 0, sizeof(*out));
    rc = vt_media_open(media_path, &fmt, err, errlen);
    if (rc)
        goto out;
    idx = find_text_stream(fmt, &bitmap);
    if (idx < 0) {
        if (bitmap)
            rc = vt_err(err, errlen, VT_SKIP, "no text subtitle stream (only bitmap subtitles: %s)",
                        bitmap);
        else
            rc = vt_err(err, errlen, VT_SKIP, "no text subtitle stream");
        goto out;
    }
    st = fmt->streams[idx];
    codec = avcodec_find_decoder(st->codecpar->codec_id);
    if (!codec) {
        rc = vt_err(err, errlen, VT_SKIP, "no decoder for the %s subtitle stream",
                    avcodec_get_name(st->codecpar->codec_id));
        goto out;
    }
    dec = avcodec_alloc_context3(codec);
    pkt = av_packet_alloc();
    if (!dec || !pkt) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': out of memory", media_path);
        goto out;
    }
    e = avcodec_parameters_to_context(dec, st->codecpar);
    if (e >= 0) {
        dec->pkt_timebase = st->time_base;
        e = avcodec_open2(dec, codec, NULL);
    }
    if (e < 0) {
        av_strerror(e, eb, sizeof(eb));
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': cannot open the %s subtitle decoder: %s",
                    media_path, codec->name, eb);
        goto out;
    }
    for (unsigned i = 0; i < fmt->nb_streams; i++)
        fmt->streams[i]->discard = (int)i == idx ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
    if (fmt->start_time != AV_NOPTS_VALUE)
        origin_ms = clamp_ms(av_rescale_q(fmt->start_time, AV_TIME_BASE_Q, (AVRational){1, 1000}));
    /* read errors after the first packet end the stream: keep what was read */
    while (av_read_frame(fmt, pkt) >= 0) {
        int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts, start_ms, dur_ms = -1;
        AVSubtitle sub;
        int got = 0;

        if (pkt->stream_index != idx || ts == AV_NOPTS_VALUE) {
            av_packet_unref(pkt);
            continue;
        }
        start_ms = clamp_ms(av_rescale_q(ts, st->time_base, (AVRational){1, 1000})) - origin_ms;
        if (pkt->duration > 0)
            dur_ms = clamp_ms(av_rescale_q(pkt->duration, st->time_base, (AVRational){1, 1000}));
        e = avcodec_decode_subtitle2(dec, &sub, &got, pkt);
        av_packet_unref(pkt);
        if (e < 0 || !got)
            continue; /* one undecodable cue is not worth failing the import */
        sb.len = 0;
        vt_sb_add(&sb, "", 0);
        for (unsigned r = 0; r < sub.num_rects; r++) {
            const AVSubtitleRect *rect = sub.rects[r];

            if (sb.len)
                vt_sb_addc(&sb, '\n');
            if (rect->ass)
                add_ass_text(&sb, rect->ass);
            else if (rect->text)
                vt_sb_adds(&sb, rect->text);
        }
        start_ms += sub.start_display_time;
        if (dur_ms < 0 && sub.end_display_time > sub.start_display_time &&
            sub.end_display_time != UINT32_MAX)
            dur_ms = sub.end_display_time - sub.start_display_time;
        avsubtitle_free(&sub);
        if (start_ms < 0)
            start_ms = 0;
        if (start_ms > MAX_TIME_MS)
            continue;
        if (add_stream_cue(out, &cap_cues, sb.buf, start_ms, dur_ms, &text_bytes)) {
            rc =
                vt_err(err, errlen, VT_EINVAL, "'%s': subtitle stream has more than %s", media_path,
                       text_bytes > VT_CAPTIONS_MAX_BYTES ? "16 MiB of text" : "200000 cues");
            goto out;
        }
    }
    if (!out->n_cues) {
        rc = vt_err(err, errlen, VT_SKIP, "no cues in captions");
        goto out;
    }
    sort_cues(out);
    fix_open_ends(out);
    stream_lang(st, lang, sizeof(lang));
    snprintf(out->model, sizeof(out->model), "captions:embedded %s%s%s%s",
             avcodec_get_name(st->codecpar->codec_id), *lang ? " (" : "", lang, *lang ? ")" : "");
out:
    if (rc)
        vt_transcript_release(out);
    vt_sb_release(&sb);
    av_packet_free(&pkt);
    avcodec_free_context(&dec);
    avformat_close_input(&fmt);
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
    else if (c == '&' && html_charref(line + i, n - i, cp, &ncp, 1))
        vt_sb_adds(out, "&amp;");
    else if (c == '<' && gt_later && tag_scan(line + i, n - i, 1))
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
        int timing_line = !vtt && timing_like(line, line + n);
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
        char *text = tidy_text(c->text ? c->text : "");
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
