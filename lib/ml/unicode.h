/*
 * The Unicode facts the tokenizers need (tokenizer.c, tiktoken.c), from the tables
 * scripts/gen-unicode-tables.py generates out of Python's unicodedata (Unicode 14.0).
 */
#ifndef VT_UNICODE_H
#define VT_UNICODE_H

#include <stdbool.h>
#include <stdint.h>

/* A code point's general category, by its first letter (Cs, surrogates, is OTHER). */
enum vt_uc_cat {
    VT_UC_LETTER,    /* L* */
    VT_UC_MARK,      /* M* */
    VT_UC_NUMBER,    /* N* */
    VT_UC_PUNCT,     /* P* */
    VT_UC_SYMBOL,    /* S* */
    VT_UC_SEPARATOR, /* Z*: Zs, Zl, Zp */
    VT_UC_OTHER,     /* C*: Cc, Cf, Cs, Co, Cn (unassigned) */
};
enum vt_uc_cat vt_uc_category(uint32_t cp);

/* The White_Space property (Rust's char::is_whitespace, the regex crates' \s). */
bool vt_uc_is_space(uint32_t cp);

/* The full lowercase of cp as UTF-8 (str.lower), or NULL when it is its own lowercase;
 * Hangul syllables are left out. */
const char *vt_uc_lower(uint32_t cp);
/* cp without its accents (NFD without marks) as UTF-8, or NULL when it has none. */
const char *vt_uc_strip_accents(uint32_t cp);

#endif
