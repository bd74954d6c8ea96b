/*
 * The noise floor of the ocr stage (see ocr_noise.h): a word set loaded from a CMU-style
 * dictionary into one open-addressing table, the plausibility measures of a line, and the
 * rule that turns them and Tesseract's confidence into "noise"; and zeros read as '@' mended
 * in a line. The thresholds were chosen on the photo-like frames and slides of
 * tests/fixtures/gen_small_text.sh and gen_talk.sh; docs/MEASUREMENTS.md ("OCR noise floor")
 * has the numbers.
 */
#include "visual/ocr_noise.h"

#include "base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Below NOISE_CONF_FLOOR a line is noise whatever it says: no slide line of the fixtures is
 * read that low, and most garbage lines are. From NOISE_CONF_SURE up Tesseract is trusted
 * (names, codes and numbers on real slides). In between, a line needs a word of
 * NOISE_MIN_LETTERS letters or more (in the dictionary if there is one: on pictures
 * Tesseract finds "a", "in 4" and "gs" in any texture) and at least NOISE_PLAUSIBLE of its
 * letters in dictionary words (or, without a dictionary, of its characters in word-shaped
 * tokens). The numbers behind these: docs/MEASUREMENTS.md, "OCR noise floor".
 */
#define NOISE_CONF_FLOOR  0.40
#define NOISE_CONF_SURE   0.85
#define NOISE_PLAUSIBLE   0.80
#define NOISE_MIN_LETTERS 3
/* Words longer than this are not looked up (no dictionary word is this long). */
#define DICT_MAX_WORD 48

struct vt_ocr_dict {
    char **slots; /* open addressing, a power of two, NULL where empty */
    size_t mask, n;
    char *arena; /* every word, NUL-terminated, one after the other */
};

static uint64_t hash_word(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;

    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static void dict_put(struct vt_ocr_dict *d, char *w)
{
    size_t n = strlen(w), i = (size_t)hash_word(w, n) & d->mask;

    while (d->slots[i]) {
        if (!strcmp(d->slots[i], w))
            return;
        i = (i + 1) & d->mask;
    }
    d->slots[i] = w;
    d->n++;
}

struct vt_ocr_dict *vt_ocr_dict_load(const char *path, char *err, size_t errlen)
{
    struct vt_ocr_dict *d = NULL;
    char *data = NULL;
    size_t len = 0, lines = 0, cap = 1;
    FILE *f = fopen(path, "rb");
    long sz;

    if (!f) {
        vt_err(err, errlen, VT_ENOTFOUND, "'%s': cannot open dictionary", path);
        goto out;
    }
    if (fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
        sz > 64L * 1024 * 1024) {
        vt_err(err, errlen, VT_EIO, "'%s': cannot read dictionary", path);
        goto out;
    }
    data = vt_xmalloc((size_t)sz + 1);
    len = fread(data, 1, (size_t)sz, f);
    data[len] = '\0';
    for (size_t i = 0; i < len; i++)
        lines += data[i] == '\n';
    while (cap < 2 * (lines + 1))
        cap <<= 1;
    d = vt_xcalloc(1, sizeof(*d));
    d->slots = vt_xcalloc(cap, sizeof(*d->slots));
    d->mask = cap - 1;
    d->arena = data;
    /* Each line: the word (alternate pronunciations as "word(2)"), a space, its phones. */
    for (char *p = data; p < data + len;) {
        char *eol = memchr(p, '\n', (size_t)(data + len - p)), *w = p, *q = p;

        if (!eol)
            eol = data + len;
        while (q < eol && *q != ' ' && *q != '\t' && *q != '(' && *q != '\r')
            q++;
        p = eol + 1;
        if (q == w || q - w > DICT_MAX_WORD)
            continue;
        *q = '\0';
        for (char *c = w; *c; c++)
            *c = (char)ascii_lower(*c);
        dict_put(d, w);
    }
    data = NULL;
    if (d->n == 0) {
        vt_err(err, errlen, VT_EMEDIA, "'%s': no word in dictionary", path);
        vt_ocr_dict_free(d);
        d = NULL;
    }
out:
    if (f)
        fclose(f);
    free(data);
    return d;
}

int vt_ocr_dict_has(const struct vt_ocr_dict *d, const char *word, size_t n)
{
    char low[DICT_MAX_WORD + 1];
    size_t i;

    if (!d || n == 0 || n > DICT_MAX_WORD)
        return 0;
    for (size_t k = 0; k < n; k++)
        low[k] = (char)ascii_lower((unsigned char)word[k]);
    low[n] = '\0';
    i = (size_t)hash_word(low, n) & d->mask;
    while (d->slots[i]) {
        if (!strcmp(d->slots[i], low))
            return 1;
        i = (i + 1) & d->mask;
    }
    return 0;
}

size_t vt_ocr_dict_size(const struct vt_ocr_dict *d)
{
    return d ? d->n : 0;
}

void vt_ocr_dict_free(struct vt_ocr_dict *d)
{
    if (!d)
        return;
    free(d->slots);
    free(d->arena);
    free(d);
}

static int is_letter(unsigned char c)
{
    /* a byte of a multi-byte UTF-8 sequence counts as a letter (accents, other scripts) */
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

void vt_ocr_mend_zeros(char *line)
{
    for (char *p = strchr(line, '@'); p; p = strchr(p + 1, '@')) {
        unsigned char prev = p > line ? (unsigned char)p[-1] : ' ', next = (unsigned char)p[1];

        if (is_letter(prev) || is_letter(next))
            continue;
        if (prev == '.' || (next == '.' && is_digit((unsigned char)p[2])) ||
            (is_digit(prev) && is_digit(next)))
            *p = '0';
    }
}

/* Punctuation that may lead or trail a word without making it less of a word. */
static int is_edge_punct(unsigned char c)
{
    return c && strchr(".,:;!?()[]\"'`*-%&/", c) != NULL;
}

/* The measures of one word of a line: s[0..n-1] is a run without white space. */
struct tok_score {
    size_t long_words; /* words of NOISE_MIN_LETTERS letters or more (in d, if there is one) */
    size_t alnum;      /* letters and digits */
    size_t dict;       /* of those, in a dictionary word or a number */
    size_t chars;      /* non-space bytes */
    size_t shaped;     /* of those, in a word-shaped token */
};

/*
 * A letter run's case is that of a word: all lower, all upper, or one capital then lower.
 * "aN", "iF", "BeE" are not.
 */
static int word_case(const char *s, size_t n)
{
    size_t upper = 0;

    for (size_t i = 0; i < n; i++)
        upper += s[i] >= 'A' && s[i] <= 'Z';
    return upper == 0 || upper == n || (upper == 1 && s[0] >= 'A' && s[0] <= 'Z');
}

static void score_token(const char *s, size_t n, const struct vt_ocr_dict *d, struct tok_score *t)
{
    size_t a = 0, b = n, letters = 0, digits = 0, other = 0;

    t->chars += n;
    while (a < b && is_edge_punct((unsigned char)s[a]))
        a++;
    while (b > a && is_edge_punct((unsigned char)s[b - 1]))
        b--;
    for (size_t i = a; i < b; i++) {
        unsigned char c = (unsigned char)s[i];

        if (is_letter(c))
            letters++;
        else if (is_digit(c))
            digits++;
        else if (c != '\'' && c != '-' && c != '.' && c != ',' && c != ':' && c != '/')
            other++;
    }
    t->alnum += letters + digits;
    if (letters + digits == 0)
        return;
    /* a number: 12, 3.5, 2024-25, 10:30, 1/2, 40% */
    if (letters == 0 && other == 0) {
        t->dict += digits;
        t->shaped += n;
        return;
    }
    if (digits || other)
        return;
    /* letters, maybe with inner apostrophes and hyphens: each part is a word */
    {
        size_t parts_ok = 1, found = 0;

        for (size_t i = a; i < b;) {
            size_t j = i;

            while (j < b && is_letter((unsigned char)s[j]))
                j++;
            if (j > i) {
                /* one letter: "a", "I", or what follows an apostrophe ("it's") */
                int single_ok = j - i > 1 || s[i] == 'a' || s[i] == 'A' || s[i] == 'I' ||
                                (i > a && s[i - 1] == '\'');

                if (!word_case(s + i, j - i) || !single_ok)
                    parts_ok = 0;
                /* "it's", "don't": the dictionary holds them whole */
                if (j < b && s[j] == '\'') {
                    size_t k = j + 1;

                    while (k < b && is_letter((unsigned char)s[k]))
                        k++;
                    if (d && vt_ocr_dict_has(d, s + i, k - i)) {
                        found += k - i - 1;
                        t->long_words += k - i - 1 >= NOISE_MIN_LETTERS;
                        i = k;
                        continue;
                    }
                }
                if (d && single_ok && word_case(s + i, j - i) && vt_ocr_dict_has(d, s + i, j - i)) {
                    found += j - i;
                    t->long_words += j - i >= NOISE_MIN_LETTERS;
                } else if (!d && word_case(s + i, j - i) && j - i >= NOISE_MIN_LETTERS) {
                    t->long_words++;
                }
            }
            i = j + (j < b);
        }
        if (parts_ok)
            t->shaped += n;
        t->dict += found;
    }
}

/* Punctuation, symbols, arrows, box drawing and shapes outside ASCII: not letters. */
static int is_symbol_cp(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0xbf) || cp == 0xd7 || cp == 0xf7 ||
           (cp >= 0x2000 && cp <= 0x2bff) || (cp >= 0x3000 && cp <= 0x303f) ||
           (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff0f) || cp == 0xfffd;
}

void vt_ocr_plausibility(const char *text, const struct vt_ocr_dict *d,
                         struct vt_ocr_plausibility *p)
{
    struct tok_score t = {0};
    struct vt_sb sb = {0};
    const char *s;

    /* symbols outside ASCII become one '~' each, so that the bytes left above 0x7f are
     * letters (of accented words, other scripts) */
    vt_sb_adds(&sb, "");
    for (const char *c = text; *c;) {
        uint32_t cp = 0;
        size_t n = vt_utf8_decode(c, 4, &cp);

        if (n == 0) {
            vt_sb_addc(&sb, '~');
            c++;
        } else {
            if (n > 1 && is_symbol_cp(cp))
                vt_sb_addc(&sb, '~');
            else
                vt_sb_add(&sb, c, n);
            c += n;
        }
    }
    s = sb.buf;

    while (*s) {
        size_t n = 0;

        while (*s == ' ' || *s == '\t')
            s++;
        while (s[n] && s[n] != ' ' && s[n] != '\t')
            n++;
        if (n)
            score_token(s, n, d, &t);
        s += n;
    }
    p->letters = t.alnum;
    p->long_words = t.long_words;
    p->dict_ratio = !d ? -1 : t.alnum ? (double)t.dict / (double)t.alnum : 0;
    p->class_ratio = t.chars ? (double)t.shaped / (double)t.chars : 0;
    vt_sb_release(&sb);
}

int vt_ocr_line_is_noise(const char *text, double conf, const struct vt_ocr_dict *d)
{
    struct vt_ocr_plausibility p;

    vt_ocr_plausibility(text, d, &p);
    if (p.letters == 0 || conf < NOISE_CONF_FLOOR)
        return 1;
    if (conf >= NOISE_CONF_SURE)
        return 0;
    if (p.long_words == 0)
        return 1;
    return (d ? p.dict_ratio : p.class_ratio) < NOISE_PLAUSIBLE;
}
