/*
 * The library page: a grid of cards, a page at a time, filtered by words of the title or
 * channel, by state and by shared footage, and sorted. The page is one listing query
 * (vt_list_page: the card's fields and the poster frame, for that page only), so it costs
 * the same in a library of ten or ten thousand videos. A video being indexed shows its
 * progress; web/library.js keeps it current by polling /api/videos?state=processing
 * (without the script, reloading the page shows where it is).
 */
#include "web/web.h"
#include "web/web_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIB_PER     48 /* cards per page: a multiple of 2, 3, 4 and 6 columns */
#define LIB_PER_MAX 500

static const char *const sorts[] = {"added", "newest", "title", "duration", NULL};
static const char *const sort_words[] = {"Oldest first", "Newest first", "Title", "Duration", NULL};
static const char *const states[] = {"queued", "processing", "ready", "failed", NULL};
static const char *const state_words[] = {"Waiting", "Being indexed", "Ready", "Failed", NULL};

/* What the page was asked (validated). */
struct ask {
    const char *sort, *state, *text;
    int reuse;
    long long page, per;
};

static int in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; s && list[i]; i++)
        if (!strcmp(s, list[i]))
            return (int)i;
    return -1;
}

static void put_option(struct vt_sb *b, const char *v, const char *label, const char *cur)
{
    vt_sb_addf(b, "<option value=\"%s\"%s>%s</option>", v,
               cur && !strcmp(cur, v) ? " selected" : "", label);
}

/* The page's URL with its filters and sort, without page= (for the pager). */
static void ask_url(struct vt_sb *b, const struct ask *a)
{
    vt_sb_adds(b, "/?");
    if (a->text) {
        vt_sb_adds(b, "q=");
        web_url(b, a->text);
        vt_sb_adds(b, "&");
    }
    if (a->state)
        vt_sb_addf(b, "state=%s&", a->state);
    if (a->sort)
        vt_sb_addf(b, "sort=%s&", a->sort);
    if (a->reuse)
        vt_sb_adds(b, "reuse=1&");
    if (a->per != LIB_PER)
        vt_sb_addf(b, "per=%lld&", a->per);
    b->buf[--b->len] = '\0'; /* the last & (or the ? of no filter) */
}

static void filter_form(struct vt_sb *out, const struct ask *a)
{
    vt_sb_adds(out, "<form class=\"filter\" action=\"/\" method=\"get\" role=\"search\" "
                    "aria-label=\"Filter the videos\"><label>Title or channel <input "
                    "type=\"search\" name=\"q\" maxlength=\"200\" value=\"");
    web_html(out, a->text ? a->text : "");
    vt_sb_adds(out, "\"></label> <label>State <select name=\"state\">"
                    "<option value=\"\">Any</option>");
    for (size_t i = 0; states[i]; i++)
        put_option(out, states[i], state_words[i], a->state);
    vt_sb_adds(out, "</select></label> <label>Sort <select name=\"sort\">");
    for (size_t i = 0; sorts[i]; i++)
        put_option(out, sorts[i], sort_words[i], a->sort);
    vt_sb_addf(out,
               "</select></label> <label><input type=\"checkbox\" name=\"reuse\" value=\"1\"%s>"
               " Sharing footage</label>",
               a->reuse ? " checked" : "");
    if (a->per != LIB_PER)
        vt_sb_addf(out, "<input type=\"hidden\" name=\"per\" value=\"%lld\">", a->per);
    vt_sb_adds(out, " <button>Show</button></form>\n");
}

/* "2026-08-11" from seconds since the epoch (UTC). */
static void put_day(struct vt_sb *b, double epoch_s)
{
    time_t t = (time_t)epoch_s;
    struct tm tm;
    char d[16];

    if (epoch_s <= 0 || !gmtime_r(&t, &tm) || !strftime(d, sizeof(d), "%Y-%m-%d", &tm)) {
        vt_sb_adds(b, "—");
        return;
    }
    vt_sb_addf(b, "<time datetime=\"%s\">%s</time>", d, d);
}

/* The state in words, and what the data is like when it is not all there. */
static void put_state(struct vt_sb *b, const struct vt_video_item *v)
{
    int i = in_list(v->index_state, states);

    vt_sb_addf(b, "<span class=\"badge state-%s\" data-role=\"state\">%s</span>", v->index_state,
               i >= 0 ? state_words[i] : "Unknown");
    if (!strcmp(v->index_state, "ready") && strcmp(v->data_status, "ok"))
        vt_sb_addf(b, " <span class=\"badge data-%s\">%s</span>", v->data_status,
                   !strcmp(v->data_status, "partial") ? "Some parts missing" : "Nothing stored");
}

/*
 * One card (web/card.html): poster, title, channel, duration, the day it was added, its
 * state in words and, while it is indexed, how far it is as a bar and in words ("3 of 7
 * steps done, now ocr"; library.js keeps them current).
 */
static int put_card(void *user, const struct vt_video_item *v)
{
    struct vt_sb *b = user, pic = {0}, dur = {0}, day = {0}, badges = {0};
    int live = !strcmp(v->index_state, "queued") || !strcmp(v->index_state, "processing");
    char total[16], finished[16];

    snprintf(total, sizeof(total), "%d", v->stages_total);
    snprintf(finished, sizeof(finished), "%d", v->stages_finished);
    if (v->poster_frame >= 0)
        web_put_list_img(&pic, v->id, v->poster_frame);
    web_put_time(&dur, v->duration_s);
    put_day(&day, v->added_at);
    put_state(&badges, v);
    WEB_RENDER(b, "card", {"id", v->id}, {"state", v->index_state}, {"picture", pic.buf},
               {"title", *v->title ? v->title : v->id}, {"channel", v->channel},
               {"duration", dur.buf}, {"added", day.buf}, {"badges", badges.buf},
               {"live", live ? "1" : NULL}, {"total", total}, {"finished", finished},
               {"steps", v->stages_total == 1 ? "step" : "steps"}, {"running", v->running});
    vt_sb_release(&pic);
    vt_sb_release(&dur);
    vt_sb_release(&day);
    vt_sb_release(&badges);
    return 0;
}

/* The query string into a; 0, or -1 with the message of a 400 page in *why. */
static int read_ask(const struct web_args *w, struct ask *a, const char **why)
{
    const char *reuse = w->get(w->conn, "reuse");

    memset(a, 0, sizeof(*a));
    a->sort = w->get(w->conn, "sort");
    a->state = w->get(w->conn, "state");
    a->text = w->get(w->conn, "q");
    if (a->sort && !*a->sort)
        a->sort = NULL;
    if (a->state && !*a->state)
        a->state = NULL;
    if (a->text && !*a->text)
        a->text = NULL;
    if (a->sort && in_list(a->sort, sorts) < 0)
        return *why = "sort is added, newest, title or duration", -1;
    if (a->state && in_list(a->state, states) < 0)
        return *why = "state is queued, processing, ready or failed", -1;
    if (reuse && *reuse && strcmp(reuse, "0") && strcmp(reuse, "1"))
        return *why = "reuse is 1 (videos sharing footage) or 0", -1;
    if (a->text && strlen(a->text) > 200)
        return *why = "the filter's words are at most 200 bytes", -1;
    if (web_arg_count(w->get(w->conn, "page"), 1, 1000000, &a->page))
        return *why = "page is a page number", -1;
    if (web_arg_count(w->get(w->conn, "per"), LIB_PER, LIB_PER_MAX, &a->per))
        return *why = "per is how many videos a page shows, 1 to 500", -1;
    a->reuse = reuse && !strcmp(reuse, "1");
    return 0;
}

/*
 * The list of cards, with where a video added while the page is open shows up (library.js
 * polls the newest videos and adds a card for each added since data-since, an ISO time of
 * the server's clock): data-new="end" on the last page of the default order (oldest first),
 * "start" on the first page of the newest first; none when filters or another order or
 * page would not show it. An empty list is hidden until a card arrives.
 */
static void cards_list(struct vt_sb *out, const struct ask *a, long long pages,
                       const struct vt_sb *cards)
{
    const char *sort = a->sort && *a->sort ? a->sort : "added";
    const char *where = NULL;
    time_t now = time(NULL);
    struct tm tm;
    char since[32] = "";

    if (!a->text && !a->reuse && (!a->state || !strcmp(a->state, "queued"))) {
        if (!strcmp(sort, "added") && a->page >= pages)
            where = "end";
        else if (!strcmp(sort, "newest") && a->page == 1)
            where = "start";
    }
    if (gmtime_r(&now, &tm))
        strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
    vt_sb_adds(out, "<ul class=\"cards\"");
    if (where)
        vt_sb_addf(out, " data-new=\"%s\" data-since=\"%s\"", where, since);
    vt_sb_adds(out, cards->len ? ">\n" : " hidden>\n");
    vt_sb_add(out, cards->buf ? cards->buf : "", cards->len);
    vt_sb_adds(out, "</ul>\n");
}

/* No card to show: an empty library says how to add a video; filters say how to drop them. */
static void nothing(struct vt_sb *out, const struct web_ctx *ctx, const struct ask *a)
{
    WEB_RENDER(out, "library-empty", {"filtered", a->text || a->state || a->reuse ? "1" : NULL},
               {"can_sign_in", !ctx->read_only && !ctx->signed_in ? "1" : NULL});
}

int web_page_library(struct vt_library *lib, const struct web_ctx *ctx, const struct web_args *w,
                     struct vt_sb *out)
{
    struct vt_list_opts o = {0};
    struct vt_sb cards = {0}, base = {0};
    const char *why = NULL;
    long long total = 0, pages;
    struct ask a;

    if (read_ask(w, &a, &why))
        return web_page_error(ctx, 400, why, out);
    o.state = a.state;
    o.text = a.text;
    o.reuse_only = a.reuse;
    o.sort = a.sort;
    o.offset = (a.page - 1) * a.per;
    o.limit = a.per;
    if (vt_list_page(lib, &o, put_card, &cards, &total)) {
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
        vt_sb_release(&cards);
        return web_page_error(ctx, 500, "the library cannot be read", out);
    }
    pages = total ? (total + a.per - 1) / a.per : 1;
    web_head(out, ctx, "Videos", NULL, 0);
    vt_sb_adds(out, "<h1>Videos</h1>\n");
    web_put_add_form(out, ctx); /* signed in: add a URL or a server file */
    filter_form(out, &a);
    ask_url(&base, &a);
    if (!total) {
        nothing(out, ctx, &a);
        cards_list(out, &a, pages, &cards);
    } else {
        vt_sb_adds(out, "<p class=\"count\" id=\"count\">");
        web_put_counted(out, total, "video", "videos");
        vt_sb_adds(out, "</p>\n");
        web_put_pager(out, base.buf, a.page, pages);
        if (cards.len) {
            cards_list(out, &a, pages, &cards);
        } else {
            vt_sb_adds(out, "<p class=\"empty\">There is no such page. "
                            "<a href=\"/\">Back to the first page</a>.</p>\n");
        }
        web_put_pager(out, base.buf, a.page, pages);
    }
    vt_sb_addf(out, "<script src=\"%s\" defer></script>\n", web_asset_url("/static/library.js"));
    web_foot(out);
    vt_sb_release(&cards);
    vt_sb_release(&base);
    return 200;
}
