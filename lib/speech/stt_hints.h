/*
 * Speech hints: the words a video shows and names (its slides' OCR lines, its title,
 * description and chapter titles), gathered into a small word list with counts and the
 * pairs of words that follow each other, for the recogniser to expect (stt.c builds a
 * language model of them, interpolated with the general one, and gives the words the
 * dictionary lacks a pronunciation). The texts are input anyone wrote: words are runs of
 * ASCII letters (an apostrophe inside one is kept), folded to lower case, 2 to
 * VT_HINT_WORD_MAX letters; anything else separates words; at most VT_HINTS_MAX distinct
 * words are kept (the most frequent, ties by spelling), whatever the texts.
 */
#ifndef VT_STT_HINTS_H
#define VT_STT_HINTS_H

#include <stddef.h>

#define VT_HINT_WORD_MAX 24
#define VT_HINTS_MAX     2000
/* Tokens read at most (a 10-hour talk with a slide every 10 s has far fewer). */
#define VT_HINTS_MAX_TOKENS 200000

struct vt_hint_word {
    char *text; /* owned, lower case */
    unsigned count;
};

struct vt_hint_pair {
    unsigned a, b; /* indexes into words[] */
    unsigned count;
};

struct vt_stt_hints {
    struct vt_hint_word *words; /* sorted by text once finished */
    size_t n_words;
    struct vt_hint_pair *pairs; /* sorted by (a, b) once finished */
    size_t n_pairs;
    /* while adding: the tokens in order, ~0u ending each text */
    char **tokens;
    size_t n_tokens, cap_tokens;
    int finished;
};

/* Add the words of text (UTF-8, NUL-terminated; NULL is nothing). Before vt_stt_hints_finish. */
void vt_stt_hints_add(struct vt_stt_hints *h, const char *text);
/* Count the words and pairs, keep the VT_HINTS_MAX most frequent words; idempotent. */
void vt_stt_hints_finish(struct vt_stt_hints *h);
/*
 * Keep only the finished words for which keep(word, user) is non-zero, and the pairs
 * between them; the order stays.
 */
void vt_stt_hints_filter(struct vt_stt_hints *h, int (*keep)(const char *word, void *user),
                         void *user);
/* The index of word in the finished list, or -1. */
long vt_stt_hints_find(const struct vt_stt_hints *h, const char *word);
/* Release what h holds and zero it (h itself is the caller's); NULL is fine. */
void vt_stt_hints_release(struct vt_stt_hints *h);

/*
 * The finished hints as an ARPA back-off bigram model (text, into buf; sb-like growth by
 * the caller's vt_sb): unigrams by count with <s> and </s>, bigrams of the pairs with
 * absolute discounting. Returns the number of unigrams written.
 */
struct vt_sb;
size_t vt_stt_hints_arpa(const struct vt_stt_hints *h, struct vt_sb *out);

/*
 * A pronunciation of word (lower case letters) in the CMU phones of PocketSphinx's en-us
 * model ("G R AH F AE N AH"), by flite's CMU lexicon and its letter-to-sound rules trained
 * on CMUdict; 0 with it in out, or -1 when none fits in outlen. Not thread-safe with
 * itself (flite's lexicon is process-wide): call it from one thread at a time.
 */
int vt_stt_hints_pronounce(const char *word, char *out, size_t outlen);

#endif
