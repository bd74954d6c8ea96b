/*
 * The web front-end's HTML: the library page, a video's page (in the order of the
 * demo page: metadata, player, scene timeline, what was stored, provenance, frames
 * and what the machine read, transcript) and search results. Pages are rendered on
 * the server from the video document and read without JavaScript; /static/app.js
 * only adds seeking and the current cue. Every string that comes from a video is
 * escaped for where it goes; URLs are built only from validated ids and numbers,
 * or percent-encoded.
 */
#include "cli.h"
#include "stage.h"
#include "vecsearch.h"
#include "web.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- escaping (into the library's string buffer, struct vt_sb) ---- */

static void html(struct vt_sb *b, const char *s, int marks)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");

    while (*p) {
        size_t n;

        switch (*p) {
        case '&':
            vt_sb_adds(b, "&amp;");
            break;
        case '<':
            vt_sb_adds(b, "&lt;");
            break;
        case '>':
            vt_sb_adds(b, "&gt;");
            break;
        case '"':
            vt_sb_adds(b, "&quot;");
            break;
        case '\'':
            vt_sb_adds(b, "&#39;");
            break;
        default:
            if (marks && *p == (unsigned char)VT_MARK_OPEN[0]) {
                vt_sb_adds(b, "<mark>");
            } else if (marks && *p == (unsigned char)VT_MARK_CLOSE[0]) {
                vt_sb_adds(b, "</mark>");
            } else if (*p < 0x20 || *p == 0x7f) {
                vt_sb_adds(b, " "); /* line breaks of OCR text, and no control bytes */
            } else {
                n = vt_utf8_decode((const char *)p, 4, NULL); /* stops at the NUL */
                if (!n) {
                    vt_sb_adds(b, "\xef\xbf\xbd");
                    break;
                }
                vt_sb_add(b, (const char *)p, n);
                p += n;
                continue;
            }
        }
        p++;
    }
}

void web_html(struct vt_sb *b, const char *s)
{
    html(b, s, 0);
}

void web_html_marked(struct vt_sb *b, const char *s)
{
    html(b, s, 1);
}

void web_url(struct vt_sb *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            vt_sb_add(b, (const char *)p, 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};

            vt_sb_add(b, e, 3);
        }
    }
}

/* ---- the document ---- */

json_t *web_video_doc(struct vt_library *lib, const char *id, const struct vt_doc_pages *pages,
                      int *rc)
{
    char *s = NULL;
    json_t *doc;

    *rc = vt_export_json_pages(lib, id, pages, &s);
    if (*rc)
        return NULL;
    doc = json_loads(s, 0, NULL);
    free(s);
    if (!doc)
        *rc = VT_EIO;
    return doc;
}

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static double jnum(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static long long jint(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);

    return json_is_integer(v) ? (long long)json_integer_value(v) : (long long)json_number_value(v);
}

/* ---- small formats ---- */

static void put_time(struct vt_sb *b, double s)
{
    char buf[32];

    cli_fmt_duration(buf, sizeof(buf), s);
    vt_sb_adds(b, buf);
}

/* Whole seconds for ?t= links: floor, so the moment is not skipped. */
static long secs(double s)
{
    return s > 0 && s < 1e9 ? (long)floor(s) : 0;
}

/* "1,234" */
static void put_count(struct vt_sb *b, long long v)
{
    char d[32], out[48];
    int n = snprintf(d, sizeof(d), "%lld", v < 0 ? 0 : v), k = 0;

    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            out[k++] = ',';
        out[k++] = d[i];
    }
    out[k] = '\0';
    vt_sb_adds(b, out);
}

/* "2026-08-11T11:04:05Z" as "2026-08-11 11:04"; anything else escaped as it is. */
static void put_date(struct vt_sb *b, const char *iso)
{
    if (!iso) {
        vt_sb_adds(b, "—");
    } else if (strlen(iso) >= 16 && iso[10] == 'T') {
        char d[17];

        memcpy(d, iso, 16);
        d[10] = ' ';
        d[16] = '\0';
        web_html(b, d);
    } else {
        web_html(b, iso);
    }
}

static void put_took(struct vt_sb *b, double s)
{
    long t = s > 0 && s < 1e9 ? lround(s) : 0;

    if (t >= 60)
        vt_sb_addf(b, "%ldm %02lds", t / 60, t % 60);
    else
        vt_sb_addf(b, "%lds", t);
}

static void put_bytes(struct vt_sb *b, long long v)
{
    if (v >= 1000000)
        vt_sb_addf(b, "%.1f MB", v / 1e6);
    else if (v >= 1000)
        vt_sb_addf(b, "%.1f kB", v / 1e3);
    else
        vt_sb_addf(b, "%lld bytes", v < 0 ? 0 : v);
}

/* A time link: reads without JS (?t= reloads the page there), seeks with it. */
static void put_time_link(struct vt_sb *b, const char *id, double t, const char *cls)
{
    vt_sb_adds(b, "<a class=\"");
    vt_sb_adds(b, cls);
    vt_sb_adds(b, "\" href=\"");
    if (id)
        vt_sb_addf(b, "/v/%s", id);
    vt_sb_addf(b, "?t=%ld\" data-t=\"%.3f\">", secs(t), t);
    put_time(b, t);
    vt_sb_adds(b, "</a>");
}

/* The frame image's URL, when the frame has an image. */
static int put_frame_img(struct vt_sb *b, const char *id, const json_t *frame, const char *cls)
{
    if (!jstr(frame, "image") || strcmp(jstr(frame, "state") ? jstr(frame, "state") : "", "done"))
        return 0;
    vt_sb_addf(b, "<img class=\"%s\" src=\"/api/videos/%s/frames/%lld.jpg\" alt=\"frame %lld at ",
               cls, id, jint(frame, "index"), jint(frame, "index"));
    put_time(b, jnum(frame, "t_s"));
    vt_sb_adds(b, "\" loading=\"lazy\">");
    return 1;
}

/*
 * The thumbnail of the video at moment t: the kept keyframe that shows it (vt_frame_at, a
 * lookup that reads no more than it needs, not the video's document). 0 when none.
 */
static int put_thumb(struct vt_sb *b, struct vt_library *lib, const char *id, double t)
{
    int n;

    if (vt_frame_at(lib, id, t, &n) || n < 0)
        return 0;
    vt_sb_addf(b,
               "<img class=\"thumb\" src=\"/api/videos/%s/frames/%d.jpg\" alt=\"frame %d\" "
               "loading=\"lazy\">",
               id, n, n);
    return 1;
}

/* refresh_s > 0: the page reloads itself (videos still being indexed), without JS. */
static void head(struct vt_sb *b, const struct web_ctx *ctx, const char *title, const char *q,
                 int refresh_s)
{
    vt_sb_adds(b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    if (refresh_s > 0)
        vt_sb_addf(b, "<meta http-equiv=\"refresh\" content=\"%d\">", refresh_s);
    vt_sb_adds(b, "<title>");
    if (title) {
        web_html(b, title);
        vt_sb_adds(b, " — ");
    }
    vt_sb_adds(b, "vidtheque</title><link rel=\"stylesheet\" href=\"/static/app.css\">"
                  "<script src=\"/static/app.js\" defer></script></head>\n<body><header>"
                  "<a class=\"brand\" href=\"/\">vidtheque.</a>"
                  "<form class=\"search\" action=\"/search\" method=\"get\" role=\"search\">"
                  "<input type=\"search\" name=\"q\" maxlength=\"1000\" "
                  "placeholder=\"words said or shown\" aria-label=\"search\" value=\"");
    web_html(b, q ? q : "");
    vt_sb_adds(b, "\"><button>Search</button></form>");
    if (ctx->read_only)
        vt_sb_adds(b, "<p class=\"ro\">read-only demo</p>");
    vt_sb_adds(b, "</header>\n<main>\n");
}

static void foot(struct vt_sb *b)
{
    vt_sb_adds(b, "</main></body></html>\n");
}

int web_page_error(const struct web_ctx *ctx, int status, const char *msg, struct vt_sb *out)
{
    char t[16];

    snprintf(t, sizeof(t), "%d", status);
    head(out, ctx, t, NULL, 0);
    vt_sb_addf(out, "<h1>%d</h1><p class=\"error\">", status);
    web_html(out, msg);
    vt_sb_adds(out, "</p><p><a href=\"/\">Back to the videos</a></p>\n");
    foot(out);
    return status;
}

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
        head(out, ctx, "Videos", NULL, live ? 5 : 0);
    }
    vt_sb_adds(out, "<h1>Videos</h1>\n<form class=\"filter\" action=\"/\" method=\"get\">"
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
        put_time(out, x->duration_s);
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
    foot(out);
    for (size_t i = 0; i < r.n; i++)
        free(r.v[i].title);
    free(r.v);
    for (size_t i = 0; i < n_shared; i++)
        free(shared[i]);
    free(shared);
    return 200;
}

/* ---- a video's page ---- */

/*
 * The video's page on its source (YouTube, another site, a plain media URL) at
 * second t, into buf; 0 when there is one. Only http(s) addresses are ever made
 * links: the page URL came from a site and is data, not markup.
 */
static int source_link(const json_t *doc, double t, char *buf, size_t n)
{
    const json_t *src = json_object_get(doc, "source");
    const char *page = jstr(src, "page_url");

    if (!page || (strncmp(page, "https://", 8) && strncmp(page, "http://", 7)))
        return -1;
    return vt_source_url_at(page, jstr(src, "extractor"), t, buf, n) ? -1 : 0;
}

static const char *source_name(const json_t *doc)
{
    const char *x = jstr(json_object_get(doc, "source"), "extractor");

    return x && !strcmp(x, "youtube") ? "YouTube" : "the source";
}

static void video_meta(struct vt_sb *b, const struct web_ctx *ctx, const char *id,
                       const json_t *doc)
{
    const json_t *src = json_object_get(doc, "source");
    const char *s;

    vt_sb_adds(b, "<p class=\"state\"><span class=\"badge state-");
    web_html(b, jstr(doc, "index_state"));
    vt_sb_adds(b, "\">index_state ");
    web_html(b, jstr(doc, "index_state"));
    vt_sb_adds(b, "</span> <span class=\"badge\">data_status ");
    web_html(b, jstr(doc, "data_status"));
    vt_sb_adds(b, "</span></p>\n<p class=\"meta\">");
    s = jstr(doc, "channel");
    web_html(b, s ? s : "unknown channel");
    vt_sb_adds(b, " · published ");
    s = jstr(doc, "published");
    web_html(b, s ? s : "—");
    vt_sb_adds(b, " · ");
    put_time(b, jnum(doc, "duration_s"));
    vt_sb_adds(b, " · ");
    s = jstr(doc, "language");
    web_html(b, s ? s : "language unknown");
    vt_sb_adds(b, " · indexed ");
    put_date(b, jstr(doc, "indexed_at"));
    vt_sb_adds(b, "</p>\n<p class=\"source\">");
    {
        char link[4200];

        if (!source_link(doc, 0, link, sizeof(link))) {
            vt_sb_adds(b, "<a id=\"open-source\" rel=\"noopener noreferrer nofollow\" href=\"");
            web_html(b, link);
            vt_sb_addf(b, "\">Open on %s</a> ", source_name(doc));
        }
    }
    s = jstr(src, "path");
    if (s)
        vt_sb_addf(b, "<a href=\"/media/%s\">Open the file</a>", id);
    else
        vt_sb_adds(b, "<span class=\"note\">The media file was not kept.</span>");
    if (!ctx->read_only && s) {
        vt_sb_adds(b, " <code>");
        web_html(b, s);
        vt_sb_adds(b, "</code>");
    }
    vt_sb_adds(b, "</p>\n");
}

/*
 * The video page shows its long lists a page at a time, whatever the video holds:
 * ?frames=N (from 1) picks the page of frames and of shots, ?cues=N that of the transcript.
 * A page of cues is at most PAGE_CUES cues of at most VT_CUE_MAX_BYTES each (the stt stage
 * cuts longer ones; older libraries may hold more, the page still holds PAGE_CUES).
 */
#define PAGE_FRAMES    100 /* frames, and as many shots, per page */
#define PAGE_CUES      250
#define PAGE_OCR_LINES 50 /* lines shown per frame; the API has them all */

struct vpage {
    const char *id;
    long long frames, cues; /* page numbers, from 1 */
    long long n_shots, n_frames, n_cues;
};

/* A link to the video page with other page numbers, at anchor. */
static void put_page_link(struct vt_sb *b, const struct vpage *p, long long frames, long long cues,
                          const char *anchor, const char *rel, const char *label)
{
    vt_sb_addf(b, "<a rel=\"%s\" href=\"/v/%s?frames=%lld&amp;cues=%lld#%s\">%s</a>", rel, p->id,
               frames, cues, anchor, label);
}

/* "page 2 of 7" with previous and next links, for the list named what. */
static void pager(struct vt_sb *b, const struct vpage *p, int cues)
{
    long long page = cues ? p->cues : p->frames, per = cues ? PAGE_CUES : PAGE_FRAMES;
    long long total = cues ? p->n_cues : p->n_frames > p->n_shots ? p->n_frames : p->n_shots;
    long long pages = total > 0 ? (total + per - 1) / per : 1;
    const char *anchor = cues ? "transcript" : "frames";

    if (pages <= 1 && page <= 1)
        return;
    vt_sb_addf(b, "<nav class=\"pager\" aria-label=\"%s pages\">", cues ? "transcript" : "frame");
    if (page > 1)
        put_page_link(b, p, cues ? p->frames : page - 1, cues ? page - 1 : p->cues, anchor, "prev",
                      "previous");
    vt_sb_addf(b, " page %lld of %lld ", page, pages);
    if (page < pages)
        put_page_link(b, p, cues ? p->frames : page + 1, cues ? page + 1 : p->cues, anchor, "next",
                      cues ? "next cues" : "next frames");
    vt_sb_adds(b, "</nav>\n");
}

static void timeline(struct vt_sb *b, const char *id, const json_t *doc, const struct vpage *p)
{
    const json_t *shots = json_object_get(doc, "shots"), *s, *f;
    size_t i;

    vt_sb_adds(b, "<section id=\"timeline\"><h2>Scene timeline</h2>\n<ol class=\"shots\">\n");
    json_array_foreach(shots, i, s)
    {
        vt_sb_addf(b, "<li><a class=\"seek\" href=\"?t=%ld\" data-t=\"%.3f\">Shot %lld, ",
                   secs(jnum(s, "start_s")), jnum(s, "start_s"), jint(s, "index"));
        put_time(b, jnum(s, "start_s"));
        vt_sb_adds(b, " to ");
        put_time(b, jnum(s, "end_s"));
        vt_sb_addf(b, ", %lld of %lld keyframes kept</a></li>\n", jint(s, "keyframes_kept"),
                   jint(s, "keyframes_captured"));
    }
    vt_sb_adds(b, "</ol>\n<p>");
    put_count(b, p->n_shots);
    vt_sb_addf(b, " shot(s).</p>\n<div class=\"strip\" data-duration=\"%.3f\">",
               jnum(doc, "duration_s"));
    json_array_foreach(json_object_get(doc, "frames"), i, f)
    {
        if (!jstr(f, "image") || strcmp(jstr(f, "state") ? jstr(f, "state") : "", "done"))
            continue;
        vt_sb_addf(b, "<a class=\"kf seek\" href=\"?t=%ld\" data-t=\"%.3f\">", secs(jnum(f, "t_s")),
                   jnum(f, "t_s"));
        put_frame_img(b, id, f, "kf");
        vt_sb_adds(b, "<span>");
        put_time(b, jnum(f, "t_s"));
        vt_sb_adds(b, "</span></a>");
    }
    vt_sb_adds(b, "</div>");
    pager(b, p, 0);
    vt_sb_adds(b, "</section>\n");
}

static void stored_item(struct vt_sb *b, const char *name, long long v)
{
    vt_sb_addf(b, "<div><dt>%s</dt><dd class=\"n\">", name);
    put_count(b, v);
    vt_sb_adds(b, "</dd><dd>");
}

static void stored(struct vt_sb *b, const json_t *doc)
{
    const json_t *s = json_object_get(doc, "stored");
    const char *src = jstr(s, "cues_source");

    vt_sb_adds(b, "<section id=\"stored\"><h2>What was stored</h2>\n<dl class=\"stored\">");
    stored_item(b, "cues", jint(s, "cues"));
    web_html(b, src ? src : "no transcript");
    vt_sb_adds(b, "</dd></div>");
    stored_item(b, "chunks", jint(s, "chunks"));
    vt_sb_adds(b, "from ");
    put_count(b, jint(s, "cues"));
    vt_sb_adds(b, " cues</dd></div>");
    stored_item(b, "text vectors", jint(s, "text_vectors"));
    vt_sb_adds(b, "for meaning search</dd></div>");
    stored_item(b, "keyframes", jint(s, "keyframes_kept"));
    vt_sb_adds(b, "kept of ");
    put_count(b, jint(s, "keyframes_captured"));
    vt_sb_adds(b, " captured</dd></div>");
    stored_item(b, "frames with text", jint(s, "frames_with_text"));
    put_count(b, jint(s, "ocr_lines"));
    vt_sb_adds(b, " lines read</dd></div>");
    stored_item(b, "chapters", jint(s, "chapters"));
    vt_sb_adds(b, "from the source metadata</dd></div>");
    vt_sb_adds(b, "<div><dt>keyframe bytes</dt><dd class=\"n\">");
    put_bytes(b, jint(s, "keyframe_bytes"));
    vt_sb_adds(b, "</dd><dd>word timings on ");
    put_count(b, jint(s, "word_timed_cues"));
    vt_sb_adds(b, " cues</dd></div></dl></section>\n");
}

static void provenance(struct vt_sb *b, const json_t *doc)
{
    const json_t *s;
    size_t i;

    vt_sb_adds(b, "<section id=\"provenance\"><h2>Provenance</h2>\n<table class=\"prov\">"
                  "<caption>Each pipeline stage, its state and the model that produced it"
                  "</caption><thead><tr><th>stage</th><th>state</th><th>model</th>"
                  "<th>started</th><th>took</th><th>error</th></tr></thead><tbody>\n");
    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        vt_sb_adds(b, "<tr><td>");
        web_html(b, jstr(s, "name"));
        vt_sb_adds(b, "</td><td class=\"st\">");
        web_html(b, jstr(s, "state"));
        vt_sb_adds(b, "</td><td>");
        web_html(b, jstr(s, "model") ? jstr(s, "model") : "—");
        vt_sb_adds(b, "</td><td>");
        put_date(b, jstr(s, "started_at"));
        vt_sb_adds(b, "</td><td>");
        put_took(b, jnum(s, "took_s"));
        vt_sb_adds(b, "</td><td>");
        web_html(b, jstr(s, "error") ? jstr(s, "error") : "");
        vt_sb_adds(b, "</td></tr>\n");
    }
    vt_sb_adds(b, "</tbody></table></section>\n");
}

/* Whether frame_embed is done: its frames have vectors, and "more like this" answers. */
static int pictures_embedded(const json_t *doc)
{
    const json_t *s;
    size_t i;

    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        if (jstr(s, "name") && !strcmp(jstr(s, "name"), vt_stages[VT_STAGE_FRAME_EMBED].name))
            return jstr(s, "state") && !strcmp(jstr(s, "state"), "done");
    }
    return 0;
}

static void frames(struct vt_sb *b, const char *id, const json_t *doc, const struct vpage *p)
{
    const json_t *f, *l;
    size_t i, k;
    int liked = pictures_embedded(doc);

    vt_sb_adds(b, "<section id=\"frames\"><h2>Frames, and what the machine read</h2>\n");
    pager(b, p, 0);
    vt_sb_adds(b, "<ul class=\"frames\">\n");
    json_array_foreach(json_object_get(doc, "frames"), i, f)
    {
        const json_t *ocr = json_object_get(f, "ocr");
        const char *st = jstr(f, "state") ? jstr(f, "state") : "";
        int done = !strcmp(st, "done");

        vt_sb_addf(b, "<li class=\"frame\" id=\"frame-%lld\"><p class=\"fh\">", jint(f, "index"));
        put_time_link(b, NULL, jnum(f, "t_s"), "seek");
        vt_sb_addf(b, " <b>#%lld</b> <span class=\"st\">", jint(f, "index"));
        web_html(b, st);
        vt_sb_adds(b, "</span>");
        if (done)
            vt_sb_addf(b, " <span>%zu line(s)</span>", json_array_size(ocr));
        vt_sb_addf(b, "</p><p class=\"fm\">shot %lld · frame %lld", jint(f, "shot"),
                   jint(f, "frame_no"));
        if (json_is_integer(json_object_get(f, "duplicate_of"))) {
            long long d = jint(f, "duplicate_of");

            /* the frame it repeats may be on another page */
            vt_sb_addf(b,
                       " · duplicate of <a href=\"/v/%s?frames=%lld&amp;cues=%lld#frame-%lld\">"
                       "#%lld</a>",
                       id, d >= 0 ? d / PAGE_FRAMES + 1 : 1, p->cues, d, d);
        } else {
            vt_sb_addf(b, " · sharpness %.1f", jnum(f, "sharpness"));
        }
        if (liked && jstr(f, "image"))
            vt_sb_addf(b,
                       " · <a class=\"similar\" href=\"/v/%s/frames/%lld/similar\">more like "
                       "this</a>",
                       id, jint(f, "index"));
        vt_sb_adds(b, "</p>");
        if (done)
            put_frame_img(b, id, f, "frame");
        if (json_array_size(ocr)) {
            vt_sb_adds(b, "<ol class=\"ocr\">");
            json_array_foreach(ocr, k, l)
            {
                if (k == PAGE_OCR_LINES) {
                    vt_sb_addf(b, "<li>… %zu more line(s)</li>", json_array_size(ocr) - k);
                    break;
                }
                vt_sb_adds(b, "<li>");
                web_html(b, jstr(l, "text"));
                vt_sb_addf(b, " <span class=\"conf\">%.2f</span></li>", jnum(l, "conf"));
            }
            vt_sb_adds(b, "</ol>");
        }
        vt_sb_adds(b, "</li>\n");
    }
    vt_sb_adds(b, "</ul>");
    pager(b, p, 0);
    vt_sb_adds(b, "</section>\n");
}

/* Words and characters (code points) of the transcript, as the page counts them. */
static void count_text(const char *s, long long *words, long long *chars)
{
    int in_word = 0;

    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if ((*p & 0xc0) != 0x80)
            (*chars)++;
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            in_word = 0;
        } else if (!in_word) {
            in_word = 1;
            (*words)++;
        }
    }
}

static void transcript(struct vt_sb *b, const json_t *doc, const struct vpage *p)
{
    const json_t *cues = json_object_get(doc, "cues"), *c;
    long long words = 0, chars = 0, first = (p->cues - 1) * PAGE_CUES;
    size_t i;

    json_array_foreach(cues, i, c) count_text(jstr(c, "text"), &words, &chars);
    vt_sb_adds(b, "<section id=\"transcript\"><h2>Transcript</h2>\n<p>");
    put_count(b, p->n_cues);
    vt_sb_adds(b, " cues · ");
    if ((long long)json_array_size(cues) < p->n_cues) {
        /* one page of them: its own counts */
        vt_sb_adds(b, "this page: ");
        if (json_array_size(cues)) {
            vt_sb_adds(b, "cues ");
            put_count(b, first + 1);
            vt_sb_adds(b, "–");
            put_count(b, first + (long long)json_array_size(cues));
            vt_sb_adds(b, ", ");
        }
    }
    put_count(b, words);
    vt_sb_adds(b, " words · ");
    put_count(b, chars);
    vt_sb_adds(b, " chars</p>\n");
    pager(b, p, 1);
    vt_sb_addf(b, "<ol class=\"cues\" start=\"%lld\">\n", first + 1);
    json_array_foreach(cues, i, c)
    {
        vt_sb_addf(b, "<li class=\"cue\" data-t=\"%.3f\" data-end=\"%.3f\">", jnum(c, "start_s"),
                   jnum(c, "end_s"));
        put_time_link(b, NULL, jnum(c, "start_s"), "seek");
        vt_sb_adds(b, " ");
        web_html(b, jstr(c, "text"));
        vt_sb_adds(b, "</li>\n");
    }
    vt_sb_adds(b, "</ol>");
    pager(b, p, 1);
    vt_sb_adds(b, "</section>\n");
}

/* A page number from the query: absent is 1, else 1..9999999 without sign or leading zero. */
static int parse_page(const char *s, long long *page)
{
    size_t n = s ? strlen(s) : 0;

    *page = 1;
    if (!s || !*s)
        return 0;
    if (n > 7 || s[0] == '0' || strspn(s, "0123456789") != n)
        return -1;
    *page = strtoll(s, NULL, 10);
    return 0;
}

/* ?t=SECONDS: whole or decimal seconds within the video, else 0. */
static double parse_t(const char *t, double duration)
{
    char *end;
    double v;

    if (!t || !*t || strlen(t) > 16)
        return 0;
    v = strtod(t, &end);
    if (*end || !isfinite(v) || v < 0)
        return 0;
    return duration > 0 && v > duration ? duration : v;
}

/* The same footage in other videos: "0:08-0:20 also appears in TITLE at 0:07-0:19". */
static void reuse_section(struct vt_sb *b, const char *id, const json_t *doc)
{
    const json_t *r;
    size_t i;

    if (!json_array_size(json_object_get(doc, "reuse")))
        return;
    vt_sb_adds(b, "<section id=\"reuse\"><h2>The same footage in other videos</h2>\n"
                  "<ul class=\"reuse\">\n");
    json_array_foreach(json_object_get(doc, "reuse"), i, r)
    {
        const char *other = jstr(r, "video_id") ? jstr(r, "video_id") : "";

        if (!vt_id_valid(other))
            continue;
        vt_sb_adds(b, "<li class=\"reused\">");
        put_time_link(b, NULL, jnum(r, "start_s"), "seek");
        vt_sb_adds(b, "–");
        put_time(b, jnum(r, "end_s"));
        vt_sb_addf(b, " also appears in <a class=\"other\" href=\"/v/%s?t=%ld\">", other,
                   secs(jnum(r, "other_start_s")));
        web_html(b, jstr(r, "title") && *jstr(r, "title") ? jstr(r, "title") : other);
        vt_sb_adds(b, "</a> at ");
        put_time(b, jnum(r, "other_start_s"));
        vt_sb_adds(b, "–");
        put_time(b, jnum(r, "other_end_s"));
        vt_sb_addf(b, " <span class=\"conf\">%lld frame(s), similarity %.3f</span></li>\n",
                   jint(r, "frames"), jnum(r, "similarity"));
    }
    (void)id;
    vt_sb_adds(b, "</ul></section>\n");
}

int web_page_video(struct vt_library *lib, const struct web_ctx *ctx, const char *id, const char *t,
                   const char *frames_page, const char *cues_page, struct vt_sb *out)
{
    struct vt_doc_pages pages;
    struct vpage pg = {id, 1, 1, 0, 0, 0};
    const json_t *counts;
    json_t *doc;
    double t0;
    int rc;

    if (!vt_id_valid(id))
        return web_page_error(ctx, 404, "no such video", out);
    if (parse_page(frames_page, &pg.frames) || parse_page(cues_page, &pg.cues))
        return web_page_error(ctx, 400, "frames and cues are page numbers (1, 2, ...)", out);
    t0 = parse_t(t, 0);
    if (t0 > 0) {
        /* opened at a moment (a search hit): the pages that hold it, unless others are asked */
        long long cue;
        int frame;

        if ((!cues_page || !*cues_page) && !vt_cue_at(lib, id, t0, &cue) && cue >= 0)
            pg.cues = cue / PAGE_CUES + 1;
        if ((!frames_page || !*frames_page) && !vt_frame_at(lib, id, t0, &frame) && frame >= 0)
            pg.frames = frame / PAGE_FRAMES + 1;
    }
    pages.shots.offset = pages.frames.offset = (pg.frames - 1) * PAGE_FRAMES;
    pages.shots.limit = pages.frames.limit = PAGE_FRAMES;
    pages.cues.offset = (pg.cues - 1) * PAGE_CUES;
    pages.cues.limit = PAGE_CUES;
    pages.chunks.offset = pages.chunks.limit = 0; /* not shown */
    doc = web_video_doc(lib, id, &pages, &rc);
    if (!doc) {
        if (rc == VT_ENOTFOUND || rc == VT_EINVAL)
            return web_page_error(ctx, 404, "no such video", out);
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
        return web_page_error(ctx, 500, "the video cannot be read", out);
    }
    counts = json_object_get(doc, "stored");
    pg.n_shots = jint(counts, "shots");
    pg.n_frames = jint(counts, "keyframes_captured");
    pg.n_cues = jint(counts, "cues");
    t0 = parse_t(t, jnum(doc, "duration_s"));
    head(out, ctx, jstr(doc, "title"), NULL,
         strcmp(jstr(doc, "index_state") ? jstr(doc, "index_state") : "", "ready") &&
                 strcmp(jstr(doc, "index_state") ? jstr(doc, "index_state") : "", "failed")
             ? 5
             : 0);
    vt_sb_addf(out, "<nav class=\"crumbs\"><a href=\"/\">Videos</a> <span>%s</span></nav>\n", id);
    vt_sb_adds(out, "<h1>");
    web_html(out, jstr(doc, "title") ? jstr(doc, "title") : id);
    vt_sb_adds(out, "</h1>\n");
    video_meta(out, ctx, id, doc);
    if (jstr(json_object_get(doc, "source"), "path"))
        vt_sb_addf(out,
                   "<video id=\"player\" controls preload=\"metadata\" "
                   "src=\"/media/%s#t=%.3f\" data-t0=\"%.3f\"></video>\n",
                   id, t0, t0);
    timeline(out, id, doc, &pg);
    reuse_section(out, id, doc);
    stored(out, doc);
    provenance(out, doc);
    frames(out, id, doc, &pg);
    transcript(out, doc, &pg);
    vt_sb_addf(out, "<p><a id=\"open-at\" href=\"/v/%s?t=%ld\">Open at this second</a>", id,
               secs(t0));
    {
        char link[4200];

        if (!source_link(doc, t0, link, sizeof(link))) {
            vt_sb_adds(out, " · <a id=\"source-at\" rel=\"noopener noreferrer nofollow\" href=\"");
            web_html(out, link);
            vt_sb_addf(out, "\">on %s at this second</a>", source_name(doc));
        }
    }
    vt_sb_adds(out, "</p>\n");
    foot(out);
    json_decref(doc);
    return 200;
}

/* ---- more like this ---- */

/* A whole number in min..max with only digits (no sign, no leading zeros): 0, else -1. */
static int parse_uint(const char *s, long min, long max, long *out)
{
    long v = 0;
    size_t n = 0;

    for (; s && s[n] >= '0' && s[n] <= '9'; n++) {
        if (n >= 9)
            return -1;
        v = v * 10 + (s[n] - '0');
    }
    if (!n || s[n] || (n > 1 && s[0] == '0') || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int web_page_similar(struct vt_library *lib, const struct web_ctx *ctx, const char *id,
                     const char *frame, const char *limit, struct vt_sb *out)
{
    struct vt_lookalike *s = NULL;
    size_t n = 0;
    long f, k = 24;
    char err[512];
    int rc;

    if (!vt_id_valid(id))
        return web_page_error(ctx, 404, "no such video", out);
    if (parse_uint(frame, 0, 999999999L, &f))
        return web_page_error(ctx, 404, "no such frame", out);
    if (limit && *limit && parse_uint(limit, 1, VT_SIMILAR_MAX, &k))
        return web_page_error(ctx, 400, "limit is a number from 1 to 100", out);
    rc = vt_similar_frames(lib, id, (int)f, (int)k, &s, &n, err, sizeof(err));
    if (rc == VT_ENOTFOUND)
        return web_page_error(ctx, 404, err, out);
    if (rc == VT_EINVAL)
        return web_page_error(ctx, 400, err, out);
    if (rc) {
        fprintf(stderr, "vidtheque: %s\n", err);
        return web_page_error(ctx, 500, "the library cannot be read", out);
    }
    head(out, ctx, "More like this", NULL, 0);
    vt_sb_addf(out,
               "<nav class=\"crumbs\"><a href=\"/\">Videos</a> <a href=\"/v/%s#frame-%ld\">%s"
               "</a> <span>frame %ld</span></nav>\n",
               id, f, id, f);
    vt_sb_addf(out,
               "<h1>More like this</h1>\n<p><img class=\"frame\" src=\"/api/videos/%s/frames/"
               "%ld.jpg\" alt=\"frame %ld\"></p>\n",
               id, f, f);
    if (!n) {
        vt_sb_adds(out, "<p class=\"empty\">No other frame has a picture vector yet.</p>\n");
    } else {
        vt_sb_addf(out,
                   "<p class=\"count\">%zu frame(s), most alike first.</p>\n"
                   "<ol class=\"similar\">\n",
                   n);
        for (size_t i = 0; i < n; i++) {
            vt_sb_addf(out, "<li class=\"like\"><a class=\"thumb\" href=\"/v/%s?t=%ld\">",
                       s[i].video_id, secs(s[i].t_s));
            if (s[i].path)
                vt_sb_addf(
                    out,
                    "<img class=\"thumb\" src=\"/api/videos/%s/frames/%d.jpg\" alt=\"frame %d\""
                    " loading=\"lazy\">",
                    s[i].video_id, s[i].frame, s[i].frame);
            vt_sb_addf(out, "</a><div><a class=\"title\" href=\"/v/%s?t=%ld\">", s[i].video_id,
                       secs(s[i].t_s));
            web_html(out, s[i].title && *s[i].title ? s[i].title : s[i].video_id);
            vt_sb_adds(out, "</a><p class=\"meta\">");
            put_time(out, s[i].t_s);
            vt_sb_addf(out,
                       " · frame %d · similarity <span class=\"score\">%.3f</span> · "
                       "<a href=\"/v/%s/frames/%d/similar\">more like this</a></p></div></li>\n",
                       s[i].frame, s[i].score, s[i].video_id, s[i].frame);
        }
        vt_sb_adds(out, "</ol>\n");
    }
    foot(out);
    vt_lookalike_free(s, n);
    return 200;
}

/* ---- search ---- */

/* The mode's choice on the search page: a link per mode, the one shown marked. */
static void mode_links(struct vt_sb *out, const char *q, enum vt_search_mode shown)
{
    static const enum vt_search_mode modes[] = {VT_SEARCH_HYBRID, VT_SEARCH_WORDS,
                                                VT_SEARCH_MEANING};

    vt_sb_adds(out, "<p class=\"modes\">Match: ");
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        const char *name = vt_search_mode_name(modes[i]);
        if (i)
            vt_sb_adds(out, " · ");
        if (modes[i] == shown) {
            vt_sb_addf(out, "<strong class=\"mode\" data-mode=\"%s\">%s</strong>", name, name);
            continue;
        }
        vt_sb_addf(out, "<a class=\"mode\" data-mode=\"%s\" href=\"/search?mode=%s&amp;q=", name,
                   name);
        web_url(out, q);
        vt_sb_addf(out, "\">%s</a>", name);
    }
    vt_sb_adds(out, "</p>\n");
}

int web_page_search(struct vt_library *lib, const struct web_ctx *ctx, const char *q,
                    const char *mode, struct vt_sb *out)
{
    struct vt_search_opts opts = {.limit = 50};
    struct vt_search_info info = {0};
    struct vt_hit *hits = NULL;
    size_t n = 0, qlen = q ? strlen(q) : 0;
    char *done = NULL;

    head(out, ctx, q && *q ? q : "Search", q, 0);
    vt_sb_adds(out, "<h1>Search</h1>\n");
    if (!qlen) {
        vt_sb_adds(out, "<p class=\"empty\">Type words said or shown in a video: "
                        "<code>\"a phrase\"</code>, <code>-not</code>, <code>prefix*</code>, "
                        "<code>source:screen</code>.</p>\n");
        goto out;
    }
    if (qlen > 1000) {
        vt_sb_adds(out, "<p class=\"empty\">That query is too long: at most 1000 bytes.</p>\n");
        goto out;
    }
    if (mode && vt_search_mode_parse(mode, &opts.mode)) {
        vt_sb_adds(out, "<p class=\"empty\">Match words, meaning or hybrid.</p>\n");
        goto out;
    }
    if (vt_search(lib, q, qlen, &opts, &hits, &n, &info)) {
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
        vt_sb_adds(out, "<p class=\"empty\">The search could not run; try other words.</p>\n");
        goto out;
    }
    mode_links(out, q, info.mode);
    if (info.warning[0]) {
        vt_sb_adds(out, "<p class=\"warning\">");
        web_html(out, info.warning);
        vt_sb_adds(out, "</p>\n");
    }
    if (!n) {
        vt_sb_adds(out, "<p class=\"empty\">Nothing found for “");
        web_html(out, q);
        vt_sb_adds(out, "”.</p>\n");
        goto out;
    }
    vt_sb_addf(out, "<p class=\"count\">%zu moment(s)%s, %.0f ms.</p>\n", n,
               info.partial ? " (cut short: older matches may be missing)" : "", info.took_ms);
    /* grouped by video, videos in the order of their best hit */
    done = calloc(n, 1);
    if (!done)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        vt_sb_addf(out, "<section class=\"group\"><h2><a href=\"/v/%s\">", hits[i].video_id);
        web_html_marked(out, hits[i].title);
        vt_sb_adds(out, "</a></h2>\n<ol class=\"hits\">\n");
        for (size_t k = i; k < n; k++) {
            const struct vt_hit *h = &hits[k];

            if (done[k] || strcmp(h->video_id, hits[i].video_id))
                continue;
            done[k] = 1;
            vt_sb_addf(out, "<li class=\"hit\"><a class=\"thumb\" href=\"/v/%s?t=%ld\">",
                       h->video_id, secs(h->start_s));
            if (!put_thumb(out, lib, h->video_id, h->start_s))
                vt_sb_adds(out, "<span class=\"nothumb\">no frame</span>");
            vt_sb_adds(out, "</a><div><p>");
            put_time_link(out, h->video_id, h->start_s, "ts");
            vt_sb_adds(out, " <span class=\"badge src-");
            web_html(out, h->source);
            vt_sb_adds(out, "\">");
            web_html(out, h->source);
            vt_sb_adds(out, "</span>");
            if (h->approx)
                vt_sb_adds(out, " <span class=\"badge approx\">approximate</span>");
            if (h->matched & VT_MATCH_WORDS)
                vt_sb_adds(out, " <span class=\"badge sig-words\">words</span>");
            if (h->matched & VT_MATCH_MEANING)
                vt_sb_adds(out, " <span class=\"badge sig-meaning\">meaning</span>");
            if (h->matched & VT_MATCH_VISUAL)
                vt_sb_adds(out, " <span class=\"badge sig-visual\">visual</span>");
            vt_sb_adds(out, "</p><p class=\"text\">");
            web_html_marked(out, h->text);
            vt_sb_adds(out, "</p></div></li>\n");
        }
        vt_sb_adds(out, "</ol></section>\n");
    }
out:
    foot(out);
    free(done);
    vt_hits_free(hits, n);
    return 200;
}
