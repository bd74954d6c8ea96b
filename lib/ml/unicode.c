/*
 * Unicode categories and mappings (unicode.h): binary searches over the generated
 * tables of unicode_tables.inc, which only this file includes.
 */
#include "ml/unicode.h"

#include "base/util.h"

#include <stddef.h>

struct uc_map {
    uint32_t cp;
    const char *s;
};
#include "ml/unicode_tables.inc"

static bool in_ranges(const uint32_t (*r)[2], size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < r[mid][0])
            hi = mid;
        else if (cp > r[mid][1])
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

static const char *map_find(const struct uc_map *m, size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < m[mid].cp)
            hi = mid;
        else if (cp > m[mid].cp)
            lo = mid + 1;
        else
            return m[mid].s;
    }
    return NULL;
}

bool vt_uc_is_space(uint32_t cp)
{
    if (cp < 0x80)
        return cp == ' ' || (cp >= 9 && cp <= 13);
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

static enum vt_uc_cat ascii_category(uint32_t cp)
{
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z'))
        return VT_UC_LETTER;
    if (cp >= '0' && cp <= '9')
        return VT_UC_NUMBER;
    if (cp == ' ')
        return VT_UC_SEPARATOR;
    if (cp < 0x20 || cp == 0x7F)
        return VT_UC_OTHER;
    if (cp == '$' || cp == '+' || cp == '<' || cp == '=' || cp == '>' || cp == '^' || cp == '`' ||
        cp == '|' || cp == '~')
        return VT_UC_SYMBOL;
    return VT_UC_PUNCT;
}

/* The categories but L have tables (or, for Z, a short list); L is what remains. */
enum vt_uc_cat vt_uc_category(uint32_t cp)
{
    if (cp < 0x80)
        return ascii_category(cp);
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return VT_UC_OTHER;
    if (in_ranges(uc_mark, VT_ARRAY_LEN(uc_mark), cp))
        return VT_UC_MARK;
    if (in_ranges(uc_punct, VT_ARRAY_LEN(uc_punct), cp))
        return VT_UC_PUNCT;
    if (in_ranges(uc_symbol, VT_ARRAY_LEN(uc_symbol), cp))
        return VT_UC_SYMBOL;
    if (in_ranges(uc_other, VT_ARRAY_LEN(uc_other), cp))
        return VT_UC_OTHER;
    if (in_ranges(uc_number, VT_ARRAY_LEN(uc_number), cp))
        return VT_UC_NUMBER;
    if (cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
        cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000)
        return VT_UC_SEPARATOR;
    return VT_UC_LETTER;
}

const char *vt_uc_lower(uint32_t cp)
{
    return map_find(uc_lower, VT_ARRAY_LEN(uc_lower), cp);
}

const char *vt_uc_strip_accents(uint32_t cp)
{
    return map_find(uc_strip, VT_ARRAY_LEN(uc_strip), cp);
}
