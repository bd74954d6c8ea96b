/*
 * Speech hints (stt_hints.h): the word list built from a video's own texts, its ARPA
 * bigram model, and pronunciations for the words PocketSphinx's dictionary lacks.
 *
 * Pronunciations come from flite's CMU lexicon: the lexicon is CMUdict's, and its
 * letter-to-sound rules were trained on CMUdict, so it answers in the very phone set of
 * PocketSphinx's en-us model (stress digits dropped, ax as AH), in process, from a Debian
 * package. Measured on every 67th CMUdict word (1762 words, letter-to-sound rules alone),
 * it gives the dictionary's first pronunciation exactly for 68 %; espeak-ng's phonemes
 * would need a second, lossy mapping from its own phoneme set to CMU's, and splitting a word
 * into dictionary parts only covers compounds.
 */
#include "speech/stt_hints.h"

#include "base/util.h"

#include <flite/cst_lexicon.h>
#include <flite/cst_val.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* flite's US English lexicon (libflite_cmulex); its header drags in the whole synthesizer. */
cst_lexicon *cmu_lex_init(void);

/* Absolute discount of the bigrams. */
#define PAIR_DISCOUNT 0.5

static int is_letter(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void add_token(struct vt_stt_hints *h, char *tok)
{
    vt_grow((void **)&h->tokens, &h->cap_tokens, h->n_tokens + 1, sizeof(*h->tokens));
    h->tokens[h->n_tokens++] = tok;
}

void vt_stt_hints_add(struct vt_stt_hints *h, const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    int any = 0;

    if (!text || h->finished)
        return;
    while (*p && h->n_tokens < VT_HINTS_MAX_TOKENS) {
        char w[VT_HINT_WORD_MAX + 1];
        size_t n = 0;
        int too_long = 0;

        if (!is_letter(*p)) {
            p++;
            continue;
        }
        /* a word: letters, with apostrophes between letters ("don't") */
        while (is_letter(*p) || (*p == '\'' && n && is_letter(p[1]))) {
            if (n < VT_HINT_WORD_MAX)
                w[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
            else
                too_long = 1;
            p++;
        }
        /* a word glued to digits or other scripts ("mp4", "naïve") is no word to say */
        if (*p >= 0x80 || (*p >= '0' && *p <= '9') || too_long || n < 2) {
            while (*p && (*p >= 0x80 || is_letter(*p) || (*p >= '0' && *p <= '9')))
                p++;
            continue;
        }
        w[n] = 0;
        add_token(h, vt_xstrdup(w));
        any = 1;
    }
    if (any)
        add_token(h, NULL);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_word(const void *a, const void *b)
{
    return strcmp(((const struct vt_hint_word *)a)->text, ((const struct vt_hint_word *)b)->text);
}

/* Most frequent first, then by spelling: which words stay when there are too many. */
static int cmp_word_count(const void *a, const void *b)
{
    const struct vt_hint_word *x = a, *y = b;

    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->text, y->text);
}

static int cmp_pair(const void *a, const void *b)
{
    const struct vt_hint_pair *x = a, *y = b;

    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    return 0;
}

long vt_stt_hints_find(const struct vt_stt_hints *h, const char *word)
{
    struct vt_hint_word key = {.text = (char *)word}, *hit;

    if (!h->n_words)
        return -1;
    hit = bsearch(&key, h->words, h->n_words, sizeof(*h->words), cmp_word);
    return hit ? (long)(hit - h->words) : -1;
}

void vt_stt_hints_finish(struct vt_stt_hints *h)
{
    char **sorted;
    size_t n = 0, cap = 0;

    if (h->finished)
        return;
    h->finished = 1;
    sorted = vt_xcalloc(h->n_tokens + 1, sizeof(*sorted));
    for (size_t i = 0; i < h->n_tokens; i++)
        if (h->tokens[i])
            sorted[n++] = h->tokens[i];
    qsort(sorted, n, sizeof(*sorted), cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (h->n_words && !strcmp(h->words[h->n_words - 1].text, sorted[i])) {
            h->words[h->n_words - 1].count++;
            continue;
        }
        vt_grow((void **)&h->words, &cap, h->n_words + 1, sizeof(*h->words));
        h->words[h->n_words].text = vt_xstrdup(sorted[i]);
        h->words[h->n_words++].count = 1;
    }
    free(sorted);
    if (h->n_words > VT_HINTS_MAX) {
        qsort(h->words, h->n_words, sizeof(*h->words), cmp_word_count);
        for (size_t i = VT_HINTS_MAX; i < h->n_words; i++)
            free(h->words[i].text);
        h->n_words = VT_HINTS_MAX;
        qsort(h->words, h->n_words, sizeof(*h->words), cmp_word);
    }
    /* the pairs of kept words that follow each other within one text */
    cap = 0;
    for (size_t i = 0; i + 1 < h->n_tokens; i++) {
        long a, b;

        if (!h->tokens[i] || !h->tokens[i + 1])
            continue;
        a = vt_stt_hints_find(h, h->tokens[i]);
        b = vt_stt_hints_find(h, h->tokens[i + 1]);
        if (a < 0 || b < 0)
            continue;
        vt_grow((void **)&h->pairs, &cap, h->n_pairs + 1, sizeof(*h->pairs));
        h->pairs[h->n_pairs++] = (struct vt_hint_pair){(unsigned)a, (unsigned)b, 1};
    }
    if (h->n_pairs > 1)
        qsort(h->pairs, h->n_pairs, sizeof(*h->pairs), cmp_pair);
    n = 0;
    for (size_t i = 0; i < h->n_pairs; i++) {
        if (n && !cmp_pair(&h->pairs[n - 1], &h->pairs[i]))
            h->pairs[n - 1].count++;
        else
            h->pairs[n++] = h->pairs[i];
    }
    h->n_pairs = n;
    for (size_t i = 0; i < h->n_tokens; i++)
        free(h->tokens[i]);
    free(h->tokens);
    h->tokens = NULL;
    h->n_tokens = h->cap_tokens = 0;
}

void vt_stt_hints_filter(struct vt_stt_hints *h, int (*keep)(const char *word, void *user),
                         void *user)
{
    size_t *map = vt_xcalloc(h->n_words + 1, sizeof(*map)), n = 0, np = 0;

    for (size_t i = 0; i < h->n_words; i++) {
        if (!keep(h->words[i].text, user)) {
            free(h->words[i].text);
            map[i] = SIZE_MAX;
            continue;
        }
        map[i] = n;
        h->words[n++] = h->words[i];
    }
    h->n_words = n;
    for (size_t k = 0; k < h->n_pairs; k++) {
        struct vt_hint_pair q = h->pairs[k];

        if (map[q.a] == SIZE_MAX || map[q.b] == SIZE_MAX)
            continue;
        q.a = (unsigned)map[q.a];
        q.b = (unsigned)map[q.b];
        h->pairs[np++] = q;
    }
    h->n_pairs = np;
    free(map);
}

void vt_stt_hints_release(struct vt_stt_hints *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n_tokens; i++)
        free(h->tokens[i]);
    free(h->tokens);
    for (size_t i = 0; i < h->n_words; i++)
        free(h->words[i].text);
    free(h->words);
    free(h->pairs);
    memset(h, 0, sizeof(*h));
}

size_t vt_stt_hints_arpa(const struct vt_stt_hints *h, struct vt_sb *out)
{
    double total = 0, ends = 0, *p_uni;
    size_t n_bigrams = h->n_pairs;

    /* every text ends once: that is </s>'s count; the words' counts are their own */
    for (size_t i = 0; i < h->n_words; i++)
        total += h->words[i].count;
    ends = total > 0 ? ceil(total / 8) : 1;
    total += ends;
    p_uni = vt_xcalloc(h->n_words + 1, sizeof(*p_uni));
    for (size_t i = 0; i < h->n_words; i++)
        p_uni[i] = h->words[i].count / total;
    vt_sb_addf(out, "\\data\\\nngram 1=%zu\nngram 2=%zu\n\n\\1-grams:\n", h->n_words + 2,
               n_bigrams);
    vt_sb_addf(out, "%.4f </s>\n-99 <s> 0.0\n", log10(ends / total));
    for (size_t i = 0, k = 0; i < h->n_words; i++) {
        double kept = 0, uni = 0;

        /* back-off weight: the discounted mass over what the unigrams give the rest */
        for (; k < h->n_pairs && h->pairs[k].a == i; k++) {
            kept += (h->pairs[k].count - PAIR_DISCOUNT) / h->words[i].count;
            uni += p_uni[h->pairs[k].b];
        }
        vt_sb_addf(out, "%.4f %s %.4f\n", log10(p_uni[i]), h->words[i].text,
                   uni < 1 && kept < 1 ? log10((1 - kept) / (1 - uni)) : 0.0);
    }
    vt_sb_adds(out, "\n\\2-grams:\n");
    for (size_t k = 0; k < h->n_pairs; k++) {
        const struct vt_hint_pair *q = &h->pairs[k];

        vt_sb_addf(out, "%.4f %s %s\n", log10((q->count - PAIR_DISCOUNT) / h->words[q->a].count),
                   h->words[q->a].text, h->words[q->b].text);
    }
    vt_sb_adds(out, "\n\\end\\\n");
    free(p_uni);
    return h->n_words + 2;
}

/* flite's phones as PocketSphinx's en-us model names them; NULL: none fits. */
static const char *cmu_phone(const char *fl, char *buf, size_t len)
{
    static const char *const known[] = {"aa", "ae", "ah", "ao", "aw", "ay", "b",  "ch", "d",  "dh",
                                        "eh", "er", "ey", "f",  "g",  "hh", "ih", "iy", "jh", "k",
                                        "l",  "m",  "n",  "ng", "ow", "oy", "p",  "r",  "s",  "sh",
                                        "t",  "th", "uh", "uw", "v",  "w",  "y",  "z",  "zh"};
    size_t n = strcspn(fl, "0123456789");

    if (n == 0 || n >= len)
        return NULL;
    memcpy(buf, fl, n);
    buf[n] = 0;
    if (!strcmp(buf, "ax"))
        return "AH";
    for (size_t i = 0; i < VT_ARRAY_LEN(known); i++)
        if (!strcmp(buf, known[i])) {
            for (size_t k = 0; k < n; k++)
                buf[k] = (char)(buf[k] - 32);
            return buf;
        }
    return NULL;
}

int vt_stt_hints_pronounce(const char *word, char *out, size_t outlen)
{
    static cst_lexicon *lex;
    cst_val *phones;
    size_t len = 0;
    int rc = -1;

    if (!lex)
        lex = cmu_lex_init();
    for (const char *c = word; *c; c++)
        if (*c < 'a' || *c > 'z')
            return -1;
    if (!lex || !*word || !outlen)
        return -1;
    phones = lex_lookup(lex, word, NULL, NULL);
    out[0] = 0;
    for (const cst_val *v = phones; v; v = val_cdr(v)) {
        char buf[8];
        const char *ph = cmu_phone(val_string(val_car(v)), buf, sizeof(buf));
        size_t n;

        if (!ph)
            goto out;
        n = strlen(ph);
        if (len + (len > 0) + n + 1 > outlen)
            goto out;
        if (len)
            out[len++] = ' ';
        memcpy(out + len, ph, n + 1);
        len += n;
    }
    rc = len ? 0 : -1;
out:
    delete_val(phones);
    if (rc)
        out[0] = 0;
    return rc;
}
