/*
 * The names of the search modes and of a hit's relevance (vidtheque.h, enum vt_search_mode,
 * enum vt_relevance): words of the vocabulary that the search (lib/search/), export's JSON
 * (lib/run/export.c) and the front-ends share, so they live below all of them.
 */
#include "base/util.h"
#include "vidtheque.h"

#include <string.h>

static const char *const mode_names[] = {"auto", "words", "meaning", "hybrid"};

const char *vt_search_mode_name(enum vt_search_mode m)
{
    return (unsigned)m < VT_ARRAY_LEN(mode_names) ? mode_names[m] : "words";
}

int vt_search_mode_parse(const char *s, enum vt_search_mode *m)
{
    for (size_t i = 0; s && i < VT_ARRAY_LEN(mode_names); i++)
        if (!strcmp(s, mode_names[i])) {
            *m = (enum vt_search_mode)i;
            return 0;
        }
    return -1;
}

const char *vt_relevance_name(int r)
{
    return r == VT_REL_STRONG ? "strong" : r == VT_REL_WEAK ? "weak" : NULL;
}
