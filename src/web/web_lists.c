/*
 * What the two list pages (the library, web_library.c, and search, web_search.c) share:
 * the picture of a card or a hit, page numbers from the query string, and the pager.
 */
#include "web/web.h"
#include "web/web_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The small picture of a list item: frame `frame` of the video. One place, so that when
 * small versions of the frames exist (web_put_frame_thumb) the lists switch in one line.
 * The size is given so the grid does not move as pictures arrive; alt is "" when the
 * text beside the picture already says what it links to (the title, the hit's time).
 */
void web_put_list_img(struct vt_sb *b, const char *id, int frame)
{
    const struct web_thumb shown = {.shown_w = 320};

    /* the card's title says what it is: the poster's alt is empty */
    web_put_frame_thumb_opt(b, id, frame, "thumb", "", &shown);
}

/* A page number or page size: absent is dflt, else 1..max decimal digits (no sign). */
int web_arg_count(const char *s, long long dflt, long long max, long long *v)
{
    size_t n = s ? strlen(s) : 0;

    *v = dflt;
    if (!s)
        return 0;
    if (!n || n > 9 || strspn(s, "0123456789") != n || s[0] == '0')
        return -1;
    *v = strtoll(s, NULL, 10);
    return *v > max ? -1 : 0;
}

/* One link of the pager: base is the page's URL with its query, without page=. */
static void page_link(struct vt_sb *b, const char *base, long long page, const char *rel,
                      const char *label)
{
    vt_sb_addf(b, "<a rel=\"%s\" href=\"", rel);
    web_html(b, base);
    vt_sb_addf(b, "%spage=%lld\">%s</a>", strchr(base, '?') ? "&amp;" : "?", page, label);
}

/* "← Previous · Page 2 of 9 · Next →"; nothing when everything fits on one page. */
void web_put_pager(struct vt_sb *b, const char *base, long long page, long long pages)
{
    if (pages <= 1)
        return;
    vt_sb_adds(b, "<nav class=\"pager\" aria-label=\"Pages\">");
    if (page > 1)
        page_link(b, base, page - 1, "prev", "← Previous");
    vt_sb_addf(b, " <span class=\"of\">Page %lld of %lld</span> ", page, pages);
    if (page < pages)
        page_link(b, base, page + 1, "next", "Next →");
    vt_sb_adds(b, "</nav>\n");
}

/* "1 video", "2 videos": n, and the word in the singular or the plural. */
void web_put_counted(struct vt_sb *b, long long n, const char *one, const char *many)
{
    web_put_count(b, n);
    vt_sb_addf(b, " %s", n == 1 ? one : many);
}
