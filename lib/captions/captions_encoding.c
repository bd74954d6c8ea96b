/*
 * Decoding caption files into the UTF-8 the readers take: the encoding is found from a
 * BOM, from UTF-16's zero bytes, from valid UTF-8, else by libuchardet's guess (with a
 * Latin-9 check of its own), converted with iconv, then preprocessed as WebVTT prescribes
 * (NUL and invalid bytes to U+FFFD, CR and CRLF to LF). Also the HTML character
 * references that WebVTT cue text (and, ending with ';', SubRip text) may hold, from the
 * WHATWG table in lib/captions/html_entities.inc, and the UTF-8 encoder they need.
 */
#include "captions/captions_int.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uchardet.h>

/* UTF-8 encoding of cp into buf; its length. */
size_t vt_cap_utf8_put(uint32_t cp, char *buf)
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
#include "captions/html_entities.inc"

/*
 * The HTML named character reference whose name is the n bytes at s (with its ';' when it
 * has one), or NULL. The table is lib/captions/html_entities.inc, sorted bytewise.
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
size_t vt_cap_html_charref(const char *s, size_t n, uint32_t cp[2], int *ncp, int need_semicolon)
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
char *vt_cap_normalize_input(const char *data, size_t len, int unicode_only, char *enc,
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
