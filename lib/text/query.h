/*
 * The search query language, parsed into a structure of normalised tokens (never
 * backend syntax): plain words (all must match), "quoted phrases", -excluded words
 * or phrases, prefix*, and the filters video:ID and source:speech|screen|title.
 * The parsed query is what the store's search verb takes (store.h); each backend
 * writes it in its own syntax (the SQLite one in store_fts.c). Any string is a
 * valid query; one with nothing searchable has no positive terms and gives no hits.
 */
#ifndef VT_QUERY_H
#define VT_QUERY_H

#include <stddef.h>

#define VT_QUERY_MAX_BYTES 4096 /* longer input is cut (at a character boundary) */
#define VT_QUERY_MAX_TERMS 16

struct vt_qterm {
    char **words; /* owned; normalised tokens (lowercase), a phrase when more than one */
    size_t n_words;
    int prefix;  /* last word is a prefix (word*) */
    int exclude; /* -word or -"phrase" */
};

struct vt_query {
    struct vt_qterm terms[VT_QUERY_MAX_TERMS];
    size_t n_terms;
    char video[65];  /* video:ID filter, "" for all */
    char source[16]; /* source:speech|screen|title filter, "" for all */
};

/* Parse any byte string (len bytes, need not be NUL-terminated). Never fails. */
void vt_query_parse(const char *s, size_t len, struct vt_query *q);
void vt_query_release(struct vt_query *q);
/* When every positive term is one plain word (no phrase, no prefix): their number, and
 * the terms in order in out (may be NULL; VT_QUERY_MAX_TERMS entries); else 0. */
size_t vt_query_plain_words(const struct vt_query *q, const struct vt_qterm **out);
/* The words of q that carry meaning (its positive terms, filters and exclusions left
 * out), space-separated, for embedding; caller frees. */
char *vt_query_meaning_text(const struct vt_query *q);
/* Number of terms that must match (not excluded). */
size_t vt_query_positive(const struct vt_query *q);

/* Split text into normalised tokens the way the index does (lowercase, ASCII letters
 * and digits plus any non-ASCII UTF-8 as word characters). Calls fn for each. */
void vt_tokenize(const char *text, size_t len, void (*fn)(void *user, const char *tok, size_t n),
                 void *user);

/* A phonetic key (Metaphone) of an ASCII-lowercase word into out (at least 16 bytes);
 * "" when the word has no letters. */
void vt_metaphone(const char *word, char *out, size_t outlen);

#endif
