/*
 * The library page: every video with its state, sorted and filtered.
 */
#include "cli.h"
#include "stage.h"
#include "vecsearch.h"
#include "web.h"
#include "web_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the library page ---- */

struct row {
    char id[VT_ID_MAX];
    char *title;
    double duration_s;
    char index_state[16], data_status[16];
    size_t order;
};

struct rows {
    struct row *v;
    size_t n, cap;
};

static int collect(void *user, const struct vt_video_summary *s)
{
    struct rows *r = user;
    struct row *x;

    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 32;
        r->v = realloc(r->v, r->cap * sizeof(*r->v));
        if (!r->v)
            abort();
    }
    x = &r->v[r->n];
    memset(x, 0, sizeof(*x));
    snprintf(x->id, sizeof(x->id), "%s", s->id);
    x->title = strdup(s->title ? s->title : "");
    if (!x->title)
        abort();
    x->duration_s = s->duration_s;
    snprintf(x->index_state, sizeof(x->index_state), "%s", s->index_state);
    snprintf(x->data_status, sizeof(x->data_status), "%s", s->data_status);
    x->order = r->n++;
    return 0;
}

static int by_title(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    int c = strcasecmp(x->title, y->title);

    return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int by_duration(const void *a, const void *b)
{
    const struct row *x = a, *y = b;

    if (x->duration_s != y->duration_s)
        return x->duration_s < y->duration_s ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int by_newest(const void *a, const void *b)
{
    const struct row *x = a, *y = b;

    return (x->order < y->order) - (x->order > y->order);
}

static const char *const sorts[] = {"added", "newest", "title", "duration", NULL};
static const char *const states[] = {"queued", "processing", "ready", "failed", NULL};

static int in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; s && list[i]; i++)
        if (!strcmp(s, list[i]))
            return 1;
    return 0;
}

static void put_option(struct vt_sb *b, const char *v, const char *label, const char *cur)
{
    vt_sb_addf(b, "<option value=\"%s\"%s>%s</option>", v,
               cur && !strcmp(cur, v) ? " selected" : "", label);
}

/* Whether id is in the sorted list ids. */
static int in_sorted(char **ids, size_t n, const char *id)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(ids[mid], id);
        if (!c)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

int web_page_library(struct vt_library *lib, const struct web_ctx *ctx, const char *sort,
                     const char *state, const char *reuse, struct vt_sb *out)
{
    struct rows r = {0};
    size_t shown = 0, n_shared = 0;
    char **shared = NULL;
    int only_shared = reuse && !strcmp(reuse, "1");

    if (sort && *sort && !in_list(sort, sorts))
        return web_page_error(ctx, 400, "sort is added, newest, title or duration", out);
    if (state && *state && !in_list(state, states))
        return web_page_error(ctx, 400, "state is queued, processing, ready or failed", out);
    if (reuse && *reuse && strcmp(reuse, "0") && strcmp(reuse, "1"))
        return web_page_error(ctx, 400, "reuse is 1 (videos sharing footage) or 0", out);
    if (only_shared && vt_lib_reuse_videos(lib, &shared, &n_shared)) {
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
        return web_page_error(ctx, 500, "the library cannot be read", out);
    }
    if (vt_list(lib, collect, &r)) {
        for (size_t i = 0; i < n_shared; i++)
            free(shared[i]);
        free(shared);
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
        free(r.v);
        return web_page_error(ctx, 500, "the library cannot be read", out);
    }
    if (sort && !strcmp(sort, "title"))
        qsort(r.v, r.n, sizeof(*r.v), by_title);
    else if (sort && !strcmp(sort, "duration"))
        qsort(r.v, r.n, sizeof(*r.v), by_duration);
    else if (sort && !strcmp(sort, "newest"))
        qsort(r.v, r.n, sizeof(*r.v), by_newest);

    {
        int live = 0;

        for (size_t i = 0; i < r.n; i++)
            live |=
                !strcmp(r.v[i].index_state, "queued") || !strcmp(r.v[i].index_state, "processing");
        /* live progress: while anything is being indexed the page refreshes itself */
        web_head(out, ctx, "Videos", NULL, live ? 5 : 0);
    }
    vt_sb_adds(out, "<h1>Videos</h1>\n");
    web_put_add_form(out, ctx);
    vt_sb_adds(out, "<form class=\"filter\" action=\"/\" method=\"get\">"
                    "<label>state <select name=\"state\"><option value=\"\">any</option>");
    for (size_t i = 0; states[i]; i++)
        put_option(out, states[i], states[i], state);
    vt_sb_adds(out, "</select></label> <label>sort <select name=\"sort\">");
    put_option(out, "added", "oldest first", sort);
    put_option(out, "newest", "newest first", sort);
    put_option(out, "title", "title", sort);
    put_option(out, "duration", "duration", sort);
    vt_sb_addf(out,
               "</select></label> <label><input type=\"checkbox\" name=\"reuse\" value=\"1\"%s>"
               " sharing footage</label>",
               only_shared ? " checked" : "");
    vt_sb_adds(out, " <button>Show</button></form>\n<ul class=\"videos\">\n");
    for (size_t i = 0; i < r.n; i++) {
        const struct row *x = &r.v[i];
        struct vt_video_card card;
        int have;

        if (state && *state && strcmp(state, x->index_state))
            continue;
        if (only_shared && !in_sorted(shared, n_shared, x->id))
            continue;
        shown++;
        /* what the row shows, read on its own: never the video's whole document */
        have = !vt_video_card(lib, x->id, &card);
        vt_sb_addf(out, "<li class=\"video\"><a class=\"thumb\" href=\"/v/%s\">", x->id);
        if (have && card.thumb_frame >= 0)
            vt_sb_addf(out,
                       "<img class=\"thumb\" src=\"/api/videos/%s/frames/%d.jpg\" "
                       "alt=\"frame %d\" loading=\"lazy\">",
                       x->id, card.thumb_frame, card.thumb_frame);
        else
            vt_sb_adds(out, "<span class=\"nothumb\">no frame</span>");
        vt_sb_addf(out, "</a><div><a class=\"title\" href=\"/v/%s\">", x->id);
        web_html(out, x->title);
        vt_sb_adds(out, "</a><p class=\"meta\">");
        if (have && card.channel) {
            web_html(out, card.channel);
            vt_sb_adds(out, " · ");
        }
        web_put_time(out, x->duration_s);
        vt_sb_addf(out,
                   " · <span class=\"badge state-%s\">index_state %s</span> "
                   "<span class=\"badge data-%s\">data_status %s</span></p></div>",
                   x->index_state, x->index_state, x->data_status, x->data_status);
        if (have && (!strcmp(x->index_state, "queued") || !strcmp(x->index_state, "processing"))) {
            size_t finished = 0, n = card.n_stages;

            /* stage by stage: which are finished and which one runs */
            vt_sb_adds(out, "<p class=\"stages\">");
            for (size_t k = 0; k < n; k++) {
                const char *name = card.stages[k].name, *sts = card.stages[k].state;

                finished +=
                    !strcmp(sts, "done") || !strcmp(sts, "skipped") || !strcmp(sts, "failed");
                vt_sb_addf(out, "%s<span class=\"stage st-", k ? " · " : "");
                web_html(out, sts);
                vt_sb_adds(out, "\">");
                web_html(out, name);
                vt_sb_adds(out, " ");
                web_html(out, sts);
                vt_sb_adds(out, "</span>");
            }
            vt_sb_addf(out, " — %zu of %zu stages finished</p>", finished, n);
        }
        vt_sb_adds(out, "</li>\n");
        vt_video_card_release(&card);
    }
    vt_sb_adds(out, "</ul>\n");
    if (!shown)
        vt_sb_adds(out, r.n ? "<p class=\"empty\">No video in that state.</p>\n"
                            : "<p class=\"empty\">The library is empty.</p>\n");
    else
        vt_sb_addf(out, "<p class=\"count\">%zu video(s).</p>\n", shown);
    web_foot(out);
    for (size_t i = 0; i < r.n; i++)
        free(r.v[i].title);
    free(r.v);
    for (size_t i = 0; i < n_shared; i++)
        free(shared[i]);
    free(shared);
    return 200;
}
