/*
 * The search page: every hit is a moment, linked to the video at that moment and shown
 * with the frame it came from. The hits are in the library's one order (score, then video,
 * then time: vt_search), a page at a time, with the true count (up to the 1000 hits a search
 * reads); filters by source, video and channel; a hint of the query language; and, when
 * nothing matched, what to try instead.
 */
#include "run/metrics.h"
#include "web/web.h"
#include "web/web_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH_MAX     1000 /* hits read for the count and the pages (vt_search's most) */
#define SEARCH_PER     20   /* hits per page */
#define SEARCH_PER_MAX 100

/* What the page was asked: validated query-string values (NULL when absent). */
struct ask {
    const char *q, *mode, *source, *video, *channel;
    size_t qlen;
    long long page, per;
};

static const char *const sources[] = {"speech", "screen", "title", "visual", NULL};
static const char *const source_words[] = {"Speech", "On screen", "Titles", "Pictures", NULL};

/* The page's URL for ask with source and video replaced (NULL: none), without page=. */
static void ask_url(struct vt_sb *b, const struct ask *a, const char *source, const char *video)
{
    vt_sb_adds(b, "/search?q=");
    web_url(b, a->q);
    if (a->mode && *a->mode) {
        vt_sb_adds(b, "&mode=");
        web_url(b, a->mode);
    }
    if (source) {
        vt_sb_adds(b, "&source=");
        web_url(b, source);
    }
    if (video) {
        vt_sb_adds(b, "&video=");
        web_url(b, video);
    }
    if (a->channel) {
        vt_sb_adds(b, "&channel=");
        web_url(b, a->channel);
    }
    if (a->per != SEARCH_PER)
        vt_sb_addf(b, "&per=%lld", a->per);
}

/* A link to ask with source and video replaced, or the label alone when it is the page. */
static void facet(struct vt_sb *b, const struct ask *a, const char *source, const char *video,
                  const char *label, int current)
{
    struct vt_sb u = {0};

    if (current) {
        vt_sb_adds(b, "<strong aria-current=\"page\">");
        web_html(b, label);
        vt_sb_adds(b, "</strong>");
        return;
    }
    ask_url(&u, a, source, video);
    vt_sb_adds(b, "<a href=\"");
    web_html(b, u.buf);
    vt_sb_adds(b, "\">");
    web_html(b, label);
    vt_sb_adds(b, "</a>");
    vt_sb_release(&u);
}

/* The mode's choice: a link per mode, the one that ran marked. */
static void mode_links(struct vt_sb *out, const struct ask *a, enum vt_search_mode shown)
{
    static const enum vt_search_mode modes[] = {VT_SEARCH_HYBRID, VT_SEARCH_WORDS,
                                                VT_SEARCH_MEANING};

    vt_sb_adds(out, "<p class=\"modes\">Match: ");
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        const char *name = vt_search_mode_name(modes[i]);
        struct ask m = *a;

        if (i)
            vt_sb_adds(out, " · ");
        m.mode = name;
        vt_sb_addf(out, "<span class=\"mode\" data-mode=\"%s\">", name);
        facet(out, &m, a->source, a->video, name, modes[i] == shown);
        vt_sb_adds(out, "</span>");
    }
    vt_sb_adds(out, "</p>\n");
}

static void hint(struct vt_sb *out, int open)
{
    WEB_RENDER(out, "search-hint", {"open", open ? "1" : NULL});
}

/* The form: the words, the source, and the video and mode kept. */
static void refine_form(struct vt_sb *out, const struct ask *a)
{
    vt_sb_adds(out, "<form class=\"refine\" action=\"/search\" method=\"get\" role=\"search\">"
                    "<label for=\"sq\">Words</label> <input id=\"sq\" type=\"search\" name=\"q\" "
                    "maxlength=\"1000\" value=\"");
    web_html(out, a->q ? a->q : "");
    vt_sb_adds(out, "\"> <label for=\"ss\">Source</label> <select id=\"ss\" name=\"source\">"
                    "<option value=\"\">All</option>");
    for (size_t i = 0; sources[i]; i++)
        if (strcmp(sources[i], "visual") || (a->source && !strcmp(a->source, "visual")))
            vt_sb_addf(out, "<option value=\"%s\"%s>%s</option>", sources[i],
                       a->source && !strcmp(a->source, sources[i]) ? " selected" : "",
                       source_words[i]);
    vt_sb_adds(out, "</select>");
    if (a->video) {
        vt_sb_adds(out, "<input type=\"hidden\" name=\"video\" value=\"");
        web_html(out, a->video);
        vt_sb_adds(out, "\">");
    }
    if (a->mode && *a->mode) {
        vt_sb_adds(out, "<input type=\"hidden\" name=\"mode\" value=\"");
        web_html(out, a->mode);
        vt_sb_adds(out, "\">");
    }
    vt_sb_adds(out, " <button>Search</button></form>\n");
}

/*
 * How many hits a source has. From the hits themselves, except when the search ranked only
 * the newest rows of a word found everywhere (info->more): then speech crowds the slides and
 * titles out, and their count comes from a search of that source alone (so "Titles (0)"
 * never hides a title that says the word).
 */
static size_t source_count(struct vt_library *lib, const struct ask *a,
                           const struct vt_search_opts *opts, const struct vt_search_info *info,
                           const struct vt_hit *h, size_t n, const char *source)
{
    struct vt_search_opts o = *opts;
    struct vt_hit *own = NULL;
    size_t count = 0;

    if (!info->more || a->channel || (strcmp(source, "screen") && strcmp(source, "title"))) {
        for (size_t k = 0; k < n; k++)
            count += !strcmp(h[k].source, source);
        return count;
    }
    o.source = source;
    if (vt_search(lib, a->q, a->qlen, &o, &own, &count, NULL)) {
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
        count = 0;
    }
    vt_hits_free(own, count);
    return count;
}

/* The source filter: All · Speech · On screen · Titles (· Pictures when there are any),
 * each with its count when the hits are not filtered by source already. */
static void source_facets(struct vt_sb *out, struct vt_library *lib, const struct ask *a,
                          const struct vt_search_opts *opts, const struct vt_search_info *info,
                          const struct vt_hit *h, size_t n)
{
    vt_sb_adds(out, "<nav class=\"facets\" aria-label=\"Source\"><span>Source:</span> ");
    facet(out, a, NULL, a->video, "All", !a->source);
    for (size_t i = 0; sources[i]; i++) {
        int cur = a->source && !strcmp(a->source, sources[i]);
        size_t count = a->source ? 0 : source_count(lib, a, opts, info, h, n, sources[i]);

        if (!cur && !count && !strcmp(sources[i], "visual"))
            continue; /* only when pictures are searched (a joint text-image model) */
        vt_sb_adds(out, " · ");
        if (!a->source && !count) {
            /* nothing to find there: said, not linked */
            vt_sb_addf(out, "<span class=\"none\">%s <span class=\"n\">(0)</span></span>",
                       source_words[i]);
            continue;
        }
        facet(out, a, sources[i], a->video, source_words[i], cur);
        if (!a->source)
            vt_sb_addf(out, " <span class=\"n\">(%zu)</span>", count);
    }
    vt_sb_adds(out, "</nav>\n");
}

/* The video filter: the videos the hits are in (the first 12, by their best hit), or
 * "only in TITLE" with a way back to all of them. */
static void video_facets(struct vt_sb *out, const struct ask *a, const struct vt_hit *h, size_t n)
{
    size_t shown = 0;

    vt_sb_adds(out, "<nav class=\"facets\" aria-label=\"Video\"><span>Video:</span> ");
    facet(out, a, a->source, NULL, "All", !a->video);
    for (size_t i = 0; i < n && shown < 12; i++) {
        size_t k = 0, count = 0;

        while (k < i && strcmp(h[k].video_id, h[i].video_id))
            k++;
        if (k < i)
            continue; /* listed at its best hit already */
        for (k = i; k < n; k++)
            count += !strcmp(h[k].video_id, h[i].video_id);
        vt_sb_adds(out, " · ");
        if (a->video) {
            vt_sb_adds(out, "<strong aria-current=\"page\">");
            web_html(out, h[i].title);
            vt_sb_adds(out, "</strong>");
            break;
        }
        facet(out, a, a->source, h[i].video_id, h[i].title ? h[i].title : h[i].video_id, 0);
        vt_sb_addf(out, " <span class=\"n\">(%zu)</span>", count);
        shown++;
    }
    vt_sb_adds(out, "</nav>\n");
}

/* The channels of the hits' videos, looked up once per video (vt_list_page by id). */
struct chans {
    struct {
        char id[VT_ID_MAX];
        char *channel; /* NULL: none */
    } * v;
    size_t n;
};

static int keep_channel(void *user, const struct vt_video_item *v)
{
    char **c = user;

    free(*c);
    *c = v->channel && *v->channel ? strdup(v->channel) : NULL;
    return 0;
}

static const char *channel_of(struct vt_library *lib, struct chans *c, const char *id)
{
    struct vt_list_opts o = {0};
    char *ch = NULL;
    void *grown;

    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i].id, id))
            return c->v[i].channel;
    o.id = id;
    o.limit = 1;
    if (vt_list_page(lib, &o, keep_channel, &ch, NULL))
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
    grown = realloc(c->v, (c->n + 1) * sizeof(*c->v));
    if (!grown)
        abort();
    c->v = grown;
    snprintf(c->v[c->n].id, sizeof(c->v[c->n].id), "%s", id);
    c->v[c->n].channel = ch;
    return c->v[c->n++].channel;
}

static void chans_release(struct chans *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].channel);
    free(c->v);
}

/* Only the hits of videos of channel ch: the others are freed. */
static void keep_in_channel(struct vt_library *lib, struct chans *c, const char *ch,
                            struct vt_hit *h, size_t *n)
{
    size_t k = 0;

    for (size_t i = 0; i < *n; i++) {
        const char *hc = channel_of(lib, c, h[i].video_id);

        if (hc && !strcmp(hc, ch)) {
            h[k++] = h[i];
            continue;
        }
        free(h[i].title);
        free(h[i].text);
    }
    *n = k;
}

/* The channel filter, when the hits' videos have channels: the first 8 by their best hit. */
static void channel_facets(struct vt_sb *out, struct vt_library *lib, struct chans *c,
                           const struct ask *a, const struct vt_hit *h, size_t n)
{
    const char *seen[8];
    size_t counts[8], k = 0;
    struct ask all = *a;

    for (size_t i = 0; i < n; i++) {
        const char *ch = channel_of(lib, c, h[i].video_id);
        size_t j = 0;

        if (!ch)
            continue;
        while (j < k && strcmp(seen[j], ch))
            j++;
        if (j < k) {
            counts[j]++;
        } else if (k < 8) {
            seen[k] = ch;
            counts[k++] = 1;
        }
    }
    if (!k && !a->channel)
        return; /* no video of these hits has a channel */
    all.channel = NULL;
    vt_sb_adds(out, "<nav class=\"facets\" aria-label=\"Channel\"><span>Channel:</span> ");
    facet(out, &all, a->source, a->video, "All", !a->channel);
    for (size_t j = 0; j < k; j++) {
        struct ask one = *a;

        one.channel = seen[j];
        vt_sb_adds(out, " · ");
        facet(out, &one, a->source, a->video, seen[j], a->channel && !strcmp(a->channel, seen[j]));
        if (!a->channel)
            vt_sb_addf(out, " <span class=\"n\">(%zu)</span>", counts[j]);
    }
    vt_sb_adds(out, "</nav>\n");
}

/* The frame a hit came from: a screen hit's own frame (ref), else the one showing its start. */
static int hit_frame(struct vt_library *lib, const struct vt_hit *h)
{
    int f = -1;

    if ((!strcmp(h->source, "screen") || !strcmp(h->source, "visual")) && h->ref >= 0 &&
        !vt_frame_kept(lib, h->video_id, h->ref, &f) && f >= 0)
        return f;
    if (vt_frame_at(lib, h->video_id, h->start_s, &f))
        return -1;
    return f;
}

/* The search's part of a link to a video page: the query, its mode and its filters (the
 * video page lists, marks and walks this search's hits in that video, no other). */
static void search_args(struct vt_sb *out, const struct ask *a)
{
    vt_sb_adds(out, "q=");
    web_url(out, a->q);
    if (a->mode && *a->mode) {
        vt_sb_adds(out, "&mode=");
        web_url(out, a->mode);
    }
    if (a->source) {
        vt_sb_adds(out, "&source=");
        web_url(out, a->source);
    }
    if (a->video) {
        vt_sb_adds(out, "&video=");
        web_url(out, a->video);
    }
    if (a->channel) {
        vt_sb_adds(out, "&channel=");
        web_url(out, a->channel);
    }
}

/* The hit's moment on its video's page, with the search (the page marks its hits). */
static void hit_link(struct vt_sb *out, const struct ask *a, const struct vt_hit *h)
{
    vt_sb_addf(out, "/v/%s?t=", h->video_id);
    web_put_t(out, h->start_s);
    vt_sb_adds(out, "&");
    search_args(out, a);
}

/* One hit (web/hit.html), the rank-th of the search (from 1, the API's order): the values
 * are plain text, escaped there; the picture and the text with its marks are HTML built
 * here. */
static void hit_item(struct vt_sb *out, struct vt_library *lib, const struct ask *a,
                     const struct vt_hit *h, size_t rank)
{
    struct vt_sb start = {0}, href = {0}, time = {0}, pic = {0}, text = {0};
    const char *words = NULL;
    char frame[16], nth[24];
    int f = hit_frame(lib, h);

    snprintf(frame, sizeof(frame), "%d", f);
    snprintf(nth, sizeof(nth), "%zu", rank);
    web_put_t(&start, h->start_s);
    hit_link(&href, a, h);
    web_put_time(&time, h->start_s);
    if (f >= 0)
        web_put_list_img(&pic, h->video_id, f);
    web_html_marked(&text, h->text);
    for (size_t i = 0; sources[i]; i++)
        if (!strcmp(h->source, sources[i]))
            words = source_words[i];
    WEB_RENDER(out, "hit", {"video", h->video_id}, {"rank", nth}, {"start", start.buf},
               {"frame", frame}, {"href", href.buf}, {"picture", pic.buf}, {"time", time.buf},
               {"source", h->source}, {"source_words", words}, {"approx", h->approx ? "1" : NULL},
               {"words", h->matched & VT_MATCH_WORDS ? "1" : NULL},
               {"meaning", h->matched & VT_MATCH_MEANING ? "1" : NULL},
               {"visual", h->matched & VT_MATCH_VISUAL ? "1" : NULL},
               {"relevance", vt_relevance_name(h->relevance)},
               {"relevance_why", h->relevance == VT_REL_STRONG
                                     ? "well above what chance gives for this model"
                                     : "above what chance gives for this model, not by much"},
               {"text", text.buf});
    vt_sb_release(&start);
    vt_sb_release(&href);
    vt_sb_release(&time);
    vt_sb_release(&pic);
    vt_sb_release(&text);
}

/*
 * One page of hits h[from..to-1]: one heading per video, the videos in the order of their
 * best hit on the page, each with its moments in the search's order (data-rank keeps it).
 */
static void hit_page(struct vt_sb *out, struct vt_library *lib, const struct ask *a,
                     const struct vt_hit *h, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        struct vt_sb link = {0};
        size_t k = from;

        while (k < i && strcmp(h[k].video_id, h[i].video_id))
            k++;
        if (k < i)
            continue; /* its video's section is out already */
        vt_sb_addf(out, "<section class=\"group\"><h2><a href=\"/v/%s?", h[i].video_id);
        search_args(&link, a);
        web_html(out, link.buf);
        vt_sb_release(&link);
        vt_sb_adds(out, "\">");
        web_html(out, h[i].title);
        vt_sb_adds(out, "</a></h2>\n<ol class=\"hits\">\n");
        for (k = i; k < to; k++)
            if (!strcmp(h[k].video_id, h[i].video_id))
                hit_item(out, lib, a, &h[k], k + 1);
        vt_sb_adds(out, "</ol></section>\n");
    }
}

/* The number of distinct videos among the hits. */
static size_t n_videos(const struct vt_hit *h, size_t n)
{
    size_t v = 0;

    for (size_t i = 0; i < n; i++) {
        size_t k = 0;

        while (k < i && strcmp(h[k].video_id, h[i].video_id))
            k++;
        v += k == i;
    }
    return v;
}

/* "42 moments in 3 videos" (a lower bound said as such), and where this page is. */
static void count_line(struct vt_sb *out, const struct vt_search_info *info, size_t n,
                       size_t videos)
{
    vt_sb_adds(out, "<p class=\"count\" id=\"count\" data-total=\"");
    vt_sb_addf(out, "%zu\" data-exact=\"%d\">", n, !(info->more || n >= SEARCH_MAX));
    if (info->more || n >= SEARCH_MAX)
        vt_sb_adds(out, "At least ");
    web_put_counted(out, (long long)n, "moment", "moments");
    vt_sb_adds(out, " in ");
    web_put_counted(out, (long long)videos, "video", "videos");
    vt_sb_addf(out, ", %.0f ms.", info->took_ms);
    if (info->partial)
        vt_sb_adds(out, " The search was cut short: older matches may be missing.");
    else if (info->more || n >= SEARCH_MAX)
        vt_sb_adds(out, " These words are everywhere: add a word or a filter to see the rest.");
    vt_sb_adds(out, "</p>\n");
}

/* Whether the n bytes at s hold the byte c. */
static int has(const char *s, size_t n, char c)
{
    return memchr(s, c, n) != NULL;
}

/*
 * The words as prefixes ("amiab" → "amiab*"): each word of two letters or more, neither
 * excluded (-word) nor a filter (source:screen) nor a prefix already; NULL when nothing
 * changes or the query has a phrase (its words are meant as typed).
 */
static char *prefixed(const char *q)
{
    struct vt_sb p = {0};
    int changed = 0;

    for (const char *s = q; *s;) {
        size_t n = strcspn(s, " \t");

        if (has(s, n, '"')) {
            vt_sb_release(&p);
            return NULL;
        }
        vt_sb_add(&p, s, n);
        if (n >= 2 && s[0] != '-' && !has(s, n, ':') && !has(s, n, '*')) {
            vt_sb_addc(&p, '*');
            changed = 1;
        }
        s += n;
        while (*s == ' ' || *s == '\t')
            vt_sb_addc(&p, *s++);
    }
    if (!changed)
        vt_sb_release(&p);
    return p.buf;
}

/*
 * Nothing matched: the words as prefixes when that finds something (the approximate tiers,
 * sound-alike and one letter off, have run already: nothing near the words is indexed), and
 * the filters to drop.
 */
static void suggest(struct vt_sb *out, struct vt_library *lib, const struct ask *a,
                    const struct vt_search_opts *opts)
{
    struct vt_search_opts o = *opts;
    char *p = prefixed(a->q);
    struct vt_hit *h = NULL;
    size_t n = 0;

    o.limit = 100;
    vt_sb_adds(out, "<div class=\"suggest\"><p>Try:</p><ul>");
    if (p && !vt_search(lib, p, strlen(p), &o, &h, &n, NULL) && n) {
        struct ask s = *a;

        s.q = p;
        vt_sb_adds(out, "<li>words that start with these: ");
        facet(out, &s, a->source, a->video, p, 0);
        vt_sb_adds(out, n < (size_t)o.limit ? " (" : " (at least ");
        web_put_counted(out, (long long)n, "moment", "moments");
        vt_sb_adds(out, ")</li>");
    }
    if (a->source || a->video || a->channel) {
        struct ask all = *a;

        all.channel = NULL;
        vt_sb_adds(out, "<li>");
        facet(out, &all, NULL, NULL, "every source, in every video", 0);
        vt_sb_adds(out, "</li>");
    }
    vt_sb_adds(out, "<li>fewer words, or other words for the same thing</li></ul></div>\n");
    vt_hits_free(h, n);
    free(p);
}

/* 0 when the filters are ones the page takes, else -1 with why. */
static int filters_check(const char *source, const char *video, const char *channel,
                         const char **why)
{
    if (channel && strlen(channel) > 200)
        return *why = "channel is at most 200 bytes", -1;
    if (source) {
        size_t i = 0;

        while (sources[i] && strcmp(sources[i], source))
            i++;
        if (!sources[i])
            return *why = "source is speech, screen, title or visual", -1;
    }
    if (video && !vt_id_valid(video))
        return *why = "video is a video id", -1;
    return 0;
}

int web_search_check(const struct web_search_ask *a, const char **why)
{
    enum vt_search_mode m;

    if (a->mode && *a->mode && vt_search_mode_parse(a->mode, &m))
        return *why = "mode is words, meaning or hybrid", -1;
    return filters_check(a->source, a->video, a->channel, why);
}

/* The query string into a; 0, or -1 with the message for a 400 page in *why. */
static int read_ask(const struct web_args *w, struct ask *a, const char **why)
{
    memset(a, 0, sizeof(*a));
    a->q = w->get(w->conn, "q");
    a->qlen = a->q ? strlen(a->q) : 0;
    a->mode = w->get(w->conn, "mode");
    a->source = w->get(w->conn, "source");
    a->video = w->get(w->conn, "video");
    a->channel = w->get(w->conn, "channel");
    if (a->channel && !*a->channel)
        a->channel = NULL;
    if (a->source && !*a->source)
        a->source = NULL;
    if (a->video && !*a->video)
        a->video = NULL;
    if (filters_check(a->source, a->video, a->channel, why))
        return -1;
    if (web_arg_count(w->get(w->conn, "page"), 1, 1000, &a->page))
        return *why = "page is a page number", -1;
    if (web_arg_count(w->get(w->conn, "per"), SEARCH_PER, SEARCH_PER_MAX, &a->per))
        return *why = "per is how many hits a page shows, 1 to 100", -1;
    return 0;
}

/* The hits of source "visual" (pictures found by likeness) only: the others are freed. */
static void keep_visual(struct vt_hit *h, size_t *n)
{
    size_t k = 0;

    for (size_t i = 0; i < *n; i++) {
        if (!strcmp(h[i].source, "visual")) {
            h[k++] = h[i];
            continue;
        }
        free(h[i].title);
        free(h[i].text);
    }
    *n = k;
}

static void results(struct vt_sb *out, struct vt_library *lib, struct chans *ch,
                    const struct ask *a, struct vt_hit *h, size_t n,
                    const struct vt_search_info *info, const struct vt_search_opts *opts)
{
    long long pages = n ? ((long long)n + a->per - 1) / a->per : 1;
    long long page = a->page > pages ? pages : a->page;
    struct vt_sb base = {0};

    source_facets(out, lib, a, opts, info, h, n);
    video_facets(out, a, h, n);
    channel_facets(out, lib, ch, a, h, n);
    if (!n) {
        vt_sb_adds(out, "<p class=\"empty\">Nothing found for “");
        web_html(out, a->q);
        vt_sb_adds(out, a->source || a->video || a->channel ? "” with these filters.</p>\n"
                                                            : "”.</p>\n");
        suggest(out, lib, a, opts);
        hint(out, 1);
        return;
    }
    count_line(out, info, n, n_videos(h, n));
    ask_url(&base, a, a->source, a->video);
    web_put_pager(out, base.buf, page, pages);
    hit_page(out, lib, a, h, (size_t)((page - 1) * a->per),
             (size_t)(page * a->per < (long long)n ? page * a->per : (long long)n));
    web_put_pager(out, base.buf, page, pages);
    hint(out, 0);
    vt_sb_release(&base);
}

/* The search's options for the filters of a (source "visual" is no filter of vt_search: the
 * page keeps the pictures of a search of every source). */
static void ask_opts(const char *mode, const char *source, const char *video,
                     struct vt_search_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->limit = SEARCH_MAX;
    if (mode && *mode)
        vt_search_mode_parse(mode, &o->mode); /* checked: AUTO when it is not a mode */
    o->video = video;
    o->source = source && strcmp(source, "visual") ? source : NULL;
}

/* The hits as the page lists them: the search's, then the filters vt_search has not. */
static int run_filtered(struct vt_library *lib, struct chans *ch, const char *q, size_t qlen,
                        const struct vt_search_opts *opts, const char *source, const char *channel,
                        struct vt_hit **h, size_t *n, struct vt_search_info *info)
{
    double t0 = vt_monotonic_s();
    int rc = vt_search(lib, q, qlen, opts, h, n, info);

    vt_metrics_search(vt_monotonic_s() - t0);
    if (rc) {
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
        return -1;
    }
    if (source && !strcmp(source, "visual"))
        keep_visual(*h, n);
    if (channel)
        keep_in_channel(lib, ch, channel, *h, n);
    return 0;
}

int web_search_run(struct vt_library *lib, const struct web_search_ask *a, struct vt_hit **h,
                   size_t *n, struct vt_search_info *info)
{
    const char *source = a->source && *a->source ? a->source : NULL;
    const char *video = a->video && *a->video ? a->video : NULL;
    const char *channel = a->channel && *a->channel ? a->channel : NULL;
    struct vt_search_info own = {0};
    struct vt_search_opts opts;
    struct chans ch = {0};
    int rc;

    *h = NULL;
    *n = 0;
    ask_opts(a->mode, source, video, &opts);
    rc = run_filtered(lib, &ch, a->q, strlen(a->q), &opts, source, channel, h, n,
                      info ? info : &own);
    chans_release(&ch);
    return rc;
}

int web_page_search(struct vt_library *lib, const struct web_ctx *ctx, const struct web_args *w,
                    struct vt_sb *out)
{
    struct vt_search_opts opts = {.limit = SEARCH_MAX};
    struct vt_search_info info = {0};
    struct vt_hit *hits = NULL;
    struct chans ch = {0};
    const char *why = NULL;
    struct ask a;
    size_t n = 0;

    if (read_ask(w, &a, &why))
        return web_page_error(ctx, 400, why, out);
    web_head(out, ctx, a.qlen ? a.q : "Search", a.q, 0);
    vt_sb_adds(out, "<h1>Search</h1>\n");
    if (!a.qlen) {
        vt_sb_adds(out, "<p class=\"empty\">Type words said or shown in a video.</p>\n");
        hint(out, 1);
        goto out;
    }
    if (a.qlen > 1000) {
        vt_sb_adds(out, "<p class=\"empty\">That query is too long: at most 1000 bytes.</p>\n");
        goto out;
    }
    refine_form(out, &a);
    if (a.mode && *a.mode && vt_search_mode_parse(a.mode, &opts.mode)) {
        vt_sb_adds(out, "<p class=\"empty\">Match words, meaning or hybrid.</p>\n");
        goto out;
    }
    ask_opts(a.mode, a.source, a.video, &opts);
    if (run_filtered(lib, &ch, a.q, a.qlen, &opts, a.source, a.channel, &hits, &n, &info)) {
        vt_sb_adds(out, "<p class=\"empty\">The search could not run; try other words.</p>\n");
        goto out;
    }
    mode_links(out, &a, info.mode);
    if (info.warning[0]) {
        vt_sb_adds(out, "<p class=\"warning\">");
        web_html(out, info.warning);
        vt_sb_adds(out, "</p>\n");
    }
    results(out, lib, &ch, &a, hits, n, &info, &opts);
out:
    web_foot(out);
    vt_hits_free(hits, n);
    chans_release(&ch);
    return 200;
}
