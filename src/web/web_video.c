/*
 * A video's page: the demo page's content, arranged to watch and read side by side.
 * Title, state and metadata; the player with the transcript beside it (below it on a
 * phone); the scene timeline as a strip of shots under the player; frames and what the
 * machine read; what was stored and provenance folded into "Details". Opened with ?q=,
 * the video's own hits of that query are listed, marked in the transcript and frames and
 * on the strip. It is rendered on the server and reads without JavaScript;
 * /static/video.js adds seeking, the current cue, the hit keys, the strip's playhead and
 * previews, and polls the state of a video still being indexed (a reload would stop the
 * player). Also the two small routes the page's script and player use: the transcript as
 * WebVTT for <track> and the video's state.
 */
#include "base/util.h"
#include "model/stage.h"
#include "search/vecsearch.h"
#include "web/web.h"
#include "web/web_int.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small formats of this page ---- */

/* "1 line", "2 lines", "1,234 moments": the count and the word that agrees with it. */
static void put_n(struct vt_sb *b, long long n, const char *one, const char *many)
{
    web_put_count(b, n);
    vt_sb_addf(b, " %s", n == 1 ? one : many);
}

/* "0:15:50": the seed shows a video's length with its hours, even when there are none. */
static void put_hms(struct vt_sb *b, double s)
{
    long t = s > 0 && s < 1e9 ? (long)s : 0;

    vt_sb_addf(b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

/* A ?t= value that lands inside the moment that starts at s: never rounded down out of it. */
static void put_t_arg(struct vt_sb *b, double s)
{
    double ms = s > 0 && s < 1e9 ? ceil(s * 1000 - 1e-6) / 1000 : 0;

    if (ms == floor(ms))
        vt_sb_addf(b, "%.0f", ms);
    else
        vt_sb_addf(b, "%.3f", ms);
}

static int str_is(const char *s, const char *want)
{
    return s && !strcmp(s, want);
}

/*
 * The frame image at the size the page shows it: the small version (320 px wide; the
 * server answers with the frame itself for a library indexed before small versions).
 */
static void put_frame_src(struct vt_sb *b, const char *id, long long frame)
{
    vt_sb_addf(b, "/api/videos/%s/frames/%lld.jpg?size=small", id, frame);
}

/* ---- the video's state, in words ---- */

/* index_state and data_status as a person reads them. */
static const char *state_words(const char *index_state)
{
    static const struct {
        const char *name, *words;
    } w[] = {{"ready", "Ready"},
             {"processing", "Being indexed"},
             {"queued", "Waiting to be indexed"},
             {"failed", "Failed"}};

    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
        if (str_is(index_state, w[i].name))
            return w[i].words;
    return "Unknown state";
}

static const char *data_words(const char *data_status, const char *index_state)
{
    if (str_is(data_status, "ok"))
        return "Complete";
    if (str_is(data_status, "partial"))
        return "Partial";
    if (str_is(data_status, "missing"))
        return str_is(index_state, "failed") ? "Nothing indexed" : "Nothing indexed yet";
    return "Unknown";
}

static int finished(const json_t *doc)
{
    return str_is(web_jstr(doc, "index_state"), "ready") ||
           str_is(web_jstr(doc, "index_state"), "failed");
}

/* The first failed stage: its name and error, the reason the page gives. NULL if none. */
static const json_t *failed_stage(const json_t *doc)
{
    const json_t *s;
    size_t i;

    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        if (str_is(web_jstr(s, "state"), "failed"))
            return s;
    }
    return NULL;
}

/* A warning for each stage done with a cut note (a bound cut its result: the media past
 * 24 h, cues past that end), so that a truncated video says so where people look. */
static void cut_warnings(struct vt_sb *b, const json_t *doc)
{
    const json_t *s;
    size_t i;

    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        if (!str_is(web_jstr(s, "state"), "done") || !web_jstr(s, "error"))
            continue;
        vt_sb_adds(b, "<p class=\"failure cut\" role=\"note\">Not all of this video is indexed (");
        web_html(b, web_jstr(s, "name"));
        vt_sb_adds(b, "): ");
        web_html(b, web_jstr(s, "error"));
        vt_sb_adds(b, ".</p>\n");
    }
}

/* Stages done or skipped of all, for "3 of 7 stages finished". */
static void stage_counts(const json_t *doc, long long *done, long long *all)
{
    const json_t *s;
    size_t i;

    *done = *all = 0;
    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        (*all)++;
        if (str_is(web_jstr(s, "state"), "done") || str_is(web_jstr(s, "state"), "skipped"))
            (*done)++;
    }
}

/*
 * The video's page on its source (YouTube, another site, a plain media URL) at second t,
 * into buf; 0 when there is one. The page URL, else the URL it was added from (a failed
 * fetch knows no page URL yet, only that one). Only http(s) addresses are ever made links:
 * they came from a site and are data, not markup.
 */
static int source_link(const json_t *doc, double t, char *buf, size_t n)
{
    const json_t *src = json_object_get(doc, "source");
    const char *page = web_jstr(src, "page_url");

    if (!page)
        page = web_jstr(src, "url");
    if (!page || (strncmp(page, "https://", 8) && strncmp(page, "http://", 7)))
        return -1;
    return vt_source_url_at(page, web_jstr(src, "extractor"), t, buf, n) ? -1 : 0;
}

static const char *source_name(const json_t *doc)
{
    const char *x = web_jstr(json_object_get(doc, "source"), "extractor");

    return x && !strcmp(x, "youtube") ? "YouTube" : "the source";
}

/* The state line: words, and while indexing a notice the script keeps up to date. */
static void video_state(struct vt_sb *b, const char *id, const json_t *doc)
{
    const char *st = web_jstr(doc, "index_state");
    const json_t *bad = failed_stage(doc);
    long long done, all;

    vt_sb_adds(b, "<p class=\"state\"><span class=\"badge state-");
    web_html(b, st ? st : "unknown");
    vt_sb_adds(b, "\" id=\"state-words\">");
    vt_sb_adds(b, state_words(st));
    vt_sb_adds(b, "</span> <span class=\"badge\" id=\"data-words\">");
    vt_sb_adds(b, data_words(web_jstr(doc, "data_status"), web_jstr(doc, "index_state")));
    vt_sb_adds(b, "</span></p>\n");
    cut_warnings(b, doc);
    if (str_is(st, "failed") && bad) {
        vt_sb_adds(b, "<p class=\"failure\" role=\"alert\">The ");
        web_html(b, web_jstr(bad, "name"));
        vt_sb_adds(b, " stage failed: ");
        web_html(b, web_jstr(bad, "error") ? web_jstr(bad, "error") : "no reason was recorded");
        vt_sb_adds(b, ".</p>\n");
    }
    if (finished(doc))
        return;
    stage_counts(doc, &done, &all);
    vt_sb_addf(b,
               "<p class=\"progress\" id=\"progress\" data-state=\"/api/videos/%s/state\" "
               "role=\"status\"><span class=\"what\">%lld of %lld stages finished.</span> "
               "<a href=\"/v/%s\">Reload</a> to see what is new.</p>\n",
               id, done, all, id);
}

static void video_meta(struct vt_sb *b, const struct web_ctx *ctx, const char *id,
                       const json_t *doc)
{
    const json_t *src = json_object_get(doc, "source");
    const char *s;
    char link[4200];

    vt_sb_adds(b, "<p class=\"meta\">");
    s = web_jstr(doc, "channel");
    web_html(b, s ? s : "unknown channel");
    vt_sb_adds(b, " · published ");
    s = web_jstr(doc, "published");
    web_html(b, s ? s : "—");
    if (web_jnum(doc, "duration_s") > 0) {
        vt_sb_adds(b, " · ");
        put_hms(b, web_jnum(doc, "duration_s"));
    }
    vt_sb_adds(b, " · ");
    s = web_jstr(doc, "language");
    web_html(b, s ? s : "language unknown");
    if (str_is(web_jstr(doc, "index_state"), "ready")) {
        vt_sb_adds(b, " · indexed ");
        web_put_date(b, web_jstr(doc, "indexed_at"));
    } else {
        vt_sb_adds(b, " · added ");
        web_put_date(b, web_jstr(doc, "added_at"));
    }
    vt_sb_adds(b, "</p>\n<p class=\"source\">");
    if (!source_link(doc, 0, link, sizeof(link))) {
        vt_sb_adds(b, "<a id=\"open-source\" rel=\"noopener noreferrer nofollow\" href=\"");
        web_html(b, link);
        vt_sb_addf(b, "\">Open on %s</a> ", source_name(doc));
    }
    s = web_jstr(src, "path");
    if (s)
        vt_sb_addf(b, "<a href=\"/media/%s\">Open the file</a>", id);
    else if (str_is(web_jstr(doc, "index_state"), "ready"))
        vt_sb_adds(b, "<span class=\"note\">The media file was not kept.</span>");
    else if (str_is(web_jstr(doc, "index_state"), "failed"))
        vt_sb_adds(b, "<span class=\"note\">There is no media file.</span>");
    else
        vt_sb_adds(b, "<span class=\"note\">There is no media file yet.</span>");
    if (!ctx->read_only && s) {
        vt_sb_adds(b, " <code>");
        web_html(b, s);
        vt_sb_adds(b, "</code>");
    }
    vt_sb_adds(b, "</p>\n");
}

/* ---- the video's hits of ?q= ---- */

#define MAX_TERMS 64

/*
 * The hits in this video of the search the page was opened with (?q= and its ?mode=,
 * ?source=, ?video=, ?channel=: what a link from /search carries), in the search's own
 * order (that of /api/search: web_search_run, the same code path as /search), and the words
 * they marked (lower case): the words the page marks in the transcript and frames, as search
 * marks them.
 */
struct vhits {
    const struct web_search_ask *a;
    const char *q;
    struct vt_hit *h;
    size_t *rank; /* each hit's place among all the search's hits, from 1 (as /search ranks) */
    size_t n;
    char *terms[MAX_TERMS];
    size_t n_terms;
};

static void add_term(struct vhits *v, const char *s, size_t n)
{
    char *t;

    if (!n || n > 127 || v->n_terms == MAX_TERMS)
        return;
    t = malloc(n + 1);
    if (!t)
        abort();
    for (size_t i = 0; i < n; i++)
        t[i] = (char)tolower((unsigned char)s[i]);
    t[n] = '\0';
    for (size_t i = 0; i < v->n_terms; i++) {
        if (!strcmp(v->terms[i], t)) {
            free(t);
            return;
        }
    }
    v->terms[v->n_terms++] = t;
}

static void collect_terms(struct vhits *v)
{
    for (size_t i = 0; i < v->n; i++) {
        const char *p = v->h[i].text ? v->h[i].text : "";

        while ((p = strchr(p, VT_MARK_OPEN[0]))) {
            const char *e = strchr(++p, VT_MARK_CLOSE[0]);

            if (!e)
                break;
            add_term(v, p, (size_t)(e - p));
            p = e + 1;
        }
    }
}

/* Only the hits of video id are kept, in their order, each with its rank in all of them. */
static void keep_video(struct vhits *v, const char *id)
{
    size_t k = 0;

    v->rank = calloc(v->n ? v->n : 1, sizeof(*v->rank));
    if (!v->rank)
        abort();
    for (size_t i = 0; i < v->n; i++) {
        if (!strcmp(v->h[i].video_id, id)) {
            v->rank[k] = i + 1;
            v->h[k++] = v->h[i];
            continue;
        }
        free(v->h[i].title);
        free(v->h[i].text);
    }
    v->n = k;
}

/* 0 with v filled (no hits for an empty or too long query); -1 after logging why not. */
static int vhits_find(struct vt_library *lib, const char *id, const struct web_search_ask *a,
                      struct vhits *v)
{
    memset(v, 0, sizeof(*v));
    v->a = a;
    v->q = a->q;
    if (!a->q || !*a->q || strlen(a->q) > 1000)
        return 0;
    if (web_search_run(lib, a, &v->h, &v->n, NULL))
        return -1;
    keep_video(v, id);
    collect_terms(v);
    return 0;
}

static void vhits_release(struct vhits *v)
{
    vt_hits_free(v->h, v->n);
    free(v->rank);
    for (size_t i = 0; i < v->n_terms; i++)
        free(v->terms[i]);
    memset(v, 0, sizeof(*v));
}

static int is_term(const struct vhits *v, const char *w, size_t n)
{
    char low[128];

    if (n >= sizeof(low))
        return 0;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)w[i]);
    low[n] = '\0';
    for (size_t i = 0; i < v->n_terms; i++)
        if (!strcmp(v->terms[i], low))
            return 1;
    return 0;
}

static int word_byte(unsigned char c)
{
    return isalnum(c) || c >= 0x80;
}

/*
 * s escaped, with the hits' words marked (<mark>). Words are cut as search cuts them
 * (letters, digits and any non-ASCII byte). Control bytes of s become spaces first, so
 * that a stray VT_MARK byte in a transcript never opens a mark of its own.
 */
static void put_text(struct vt_sb *b, const struct vhits *v, const char *s)
{
    struct vt_sb m = {0};
    size_t i = 0, len;

    if (!v || !v->n_terms || !s) {
        web_html(b, s);
        return;
    }
    len = strlen(s);
    vt_sb_add(&m, "", 0);
    while (i < len) {
        size_t j = i;

        if (!word_byte((unsigned char)s[i])) {
            vt_sb_add(&m, (unsigned char)s[i] < 0x20 ? " " : s + i, 1);
            i++;
            continue;
        }
        while (j < len && word_byte((unsigned char)s[j]))
            j++;
        if (is_term(v, s + i, j - i))
            vt_sb_adds(&m, VT_MARK_OPEN);
        vt_sb_add(&m, s + i, j - i);
        if (is_term(v, s + i, j - i))
            vt_sb_adds(&m, VT_MARK_CLOSE);
        i = j;
    }
    web_html_marked(b, m.buf);
    vt_sb_release(&m);
}

/* Where a hit came from, as the list of moments says it. */
static const char *source_words(const char *source)
{
    if (str_is(source, "speech"))
        return "said";
    if (str_is(source, "screen"))
        return "on screen";
    if (str_is(source, "title"))
        return "in the title";
    if (str_is(source, "visual"))
        return "looks alike";
    return "found";
}

/* The search's part of a link that keeps it ("" when there is none): the query, its mode
 * and its filters. */
static void put_q_arg(struct vt_sb *b, const struct vhits *v)
{
    const char *names[] = {"mode", "source", "video", "channel"};
    const char *vals[] = {v->a->mode, v->a->source, v->a->video, v->a->channel};

    if (!v->q || !*v->q)
        return;
    vt_sb_adds(b, "&amp;q=");
    web_url(b, v->q);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!vals[i] || !*vals[i])
            continue;
        vt_sb_addf(b, "&amp;%s=", names[i]);
        web_url(b, vals[i]);
    }
}

/* A hidden field of the video's search form, when it has a value. */
static void put_hidden(struct vt_sb *b, const char *name, const char *value)
{
    if (!value || !*value)
        return;
    vt_sb_addf(b, "<input type=\"hidden\" name=\"%s\" value=\"", name);
    web_html(b, value);
    vt_sb_adds(b, "\">");
}

/* How the search ran, said beside its hits: " (by meaning, on screen)" or "". */
static void put_how(struct vt_sb *b, const struct web_search_ask *a)
{
    const char *mode = a->mode && *a->mode && strcmp(a->mode, "auto") ? a->mode : NULL;
    const char *src = a->source && *a->source ? a->source : NULL;

    if (!mode && !src && !(a->channel && *a->channel))
        return;
    vt_sb_adds(b, " (");
    if (mode) {
        vt_sb_adds(b, str_is(mode, "words")     ? "by words"
                      : str_is(mode, "meaning") ? "by meaning"
                                                : "hybrid");
    }
    if (src)
        vt_sb_addf(b, "%s%s", mode ? ", " : "", source_words(src));
    if (a->channel && *a->channel) {
        vt_sb_adds(b, mode || src ? ", channel " : "channel ");
        web_html(b, a->channel);
    }
    vt_sb_adds(b, ")");
}

/* The list of the hits, in the search's order: each links to its moment, with its rank. */
static void hit_list(struct vt_sb *b, const char *id, const struct vhits *v)
{
    vt_sb_adds(b, "<ol class=\"hitlist\">");
    for (size_t i = 0; i < v->n; i++) {
        vt_sb_addf(b, "<li><a class=\"hit\" href=\"/v/%s?t=", id);
        put_t_arg(b, v->h[i].start_s);
        put_q_arg(b, v);
        vt_sb_addf(b, "\" data-t=\"%.3f\" data-end=\"%.3f\" data-rank=\"%zu\">", v->h[i].start_s,
                   v->h[i].end_s, v->rank[i]);
        web_put_time(b, v->h[i].start_s);
        vt_sb_addf(b, "</a> <span class=\"src\">%s</span></li>", source_words(v->h[i].source));
    }
    vt_sb_adds(b, "</ol>");
}

/* The search box of this video (the search's mode kept), and the moments that matched. */
static void hits_section(struct vt_sb *b, const char *id, const struct vhits *v)
{
    vt_sb_addf(b,
               "<form class=\"vsearch\" action=\"/v/%s\" method=\"get\" role=\"search\">"
               "<input type=\"search\" name=\"q\" maxlength=\"1000\" "
               "aria-label=\"search this video\" placeholder=\"search this video\" value=\"",
               id);
    web_html(b, v->q ? v->q : "");
    vt_sb_adds(b, "\">");
    put_hidden(b, "mode", v->a->mode);
    put_hidden(b, "video", id);
    vt_sb_adds(b, "<button>Search this video</button></form>\n");
    if (!v->q || !*v->q)
        return;
    vt_sb_adds(b, "<nav class=\"vhits\" aria-label=\"moments that match\"><p>");
    if (strlen(v->q) > 1000) {
        vt_sb_adds(b, "That query is too long: at most 1000 bytes.</p></nav>\n");
        return;
    }
    if (!v->n) {
        vt_sb_adds(b, "Nothing in this video matches “");
        web_html(b, v->q);
        vt_sb_adds(b, "”");
        put_how(b, v->a);
        vt_sb_addf(b, ". <a href=\"/search?q=");
        web_url(b, v->q);
        vt_sb_adds(b, "\">Search every video</a>.</p></nav>\n");
        return;
    }
    put_n(b, (long long)v->n, "moment", "moments");
    vt_sb_adds(b, " for “");
    web_html(b, v->q);
    vt_sb_adds(b, "”");
    put_how(b, v->a);
    vt_sb_adds(b, ", best first:</p>");
    hit_list(b, id, v);
    vt_sb_adds(b, "</nav>\n");
}

/* ---- the lists, a page at a time ---- */

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

/* Whether frame_embed is done: its frames have vectors, and "more like this" answers. */
static int pictures_embedded(const json_t *doc)
{
    const json_t *s;
    size_t i;

    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        if (web_jstr(s, "name") &&
            !strcmp(web_jstr(s, "name"), vt_stages[VT_STAGE_FRAME_EMBED].name))
            return web_jstr(s, "state") && !strcmp(web_jstr(s, "state"), "done");
    }
    return 0;
}

/* ---- the player, the strip of shots under it, the transcript beside it ---- */

/* The video's length as the strip measures it: the document's, else where the last shot ends. */
static double strip_length(const json_t *doc)
{
    const json_t *shots = json_object_get(doc, "shots");
    double d = web_jnum(doc, "duration_s");
    size_t n = json_array_size(shots);

    if (d <= 0 && n)
        d = web_jnum(json_array_get(shots, n - 1), "end_s");
    return d;
}

/* Percent of the length, clamped, as an SVG coordinate ("12.345%"). */
static void put_pct(struct vt_sb *b, double t, double length)
{
    double p = length > 0 ? 100 * t / length : 0;

    vt_sb_addf(b, "%.3f%%", p < 0 ? 0 : p > 100 ? 100 : p);
}

/* The first kept frame with an image in shot `shot` of this page of frames, or -1. */
static long long shot_frame(const json_t *doc, long long shot)
{
    const json_t *f;
    size_t i;

    json_array_foreach(json_object_get(doc, "frames"), i, f)
    {
        if (web_jint(f, "shot") == shot && web_jstr(f, "image") &&
            str_is(web_jstr(f, "state"), "done"))
            return web_jint(f, "index");
    }
    return -1;
}

/* The hits as marks along the video, links to their moments: under the player, on the strip. */
static void hit_marks(struct vt_sb *b, const char *id, const struct vhits *v, double length,
                      double y, double h)
{
    for (size_t i = 0; i < v->n; i++) {
        vt_sb_addf(b, "<a class=\"hit\" href=\"/v/%s?t=", id);
        put_t_arg(b, v->h[i].start_s);
        put_q_arg(b, v);
        vt_sb_addf(b, "\" data-t=\"%.3f\" data-rank=\"%zu\" aria-label=\"hit at ", v->h[i].start_s,
                   v->rank[i]);
        web_put_time(b, v->h[i].start_s);
        vt_sb_adds(b, "\"><rect x=\"");
        put_pct(b, v->h[i].start_s, length);
        vt_sb_addf(b, "\" y=\"%.0f\" width=\"0.6%%\" height=\"%.0f\"/></a>", y, h);
    }
}

/* The seek bar's share of the hits: a thin row right under the player. */
static void hitbar(struct vt_sb *b, const char *id, const struct vhits *v, double length)
{
    if (!v->n || length <= 0)
        return;
    vt_sb_addf(b,
               "<svg class=\"hitbar\" width=\"100%%\" height=\"10\" role=\"group\" "
               "aria-label=\"where the query matched\" data-length=\"%.3f\">",
               length);
    hit_marks(b, id, v, length, 0, 10);
    vt_sb_adds(b, "<rect class=\"ph\" x=\"0\" y=\"0\" width=\"2\" height=\"10\"/></svg>\n");
}

/* "Shot 1, 0:05 to 0:09" */
static void put_shot_name(struct vt_sb *b, const json_t *s)
{
    vt_sb_addf(b, "Shot %lld, ", web_jint(s, "index"));
    web_put_time(b, web_jnum(s, "start_s"));
    vt_sb_adds(b, " to ");
    web_put_time(b, web_jnum(s, "end_s"));
}

/* A shot's tile: a link to its start, its keyframe for the script's preview (data-src). */
static void shot_tile(struct vt_sb *b, const char *id, const json_t *doc, const json_t *s, size_t i,
                      double length)
{
    double a = web_jnum(s, "start_s"), e = web_jnum(s, "end_s");
    long long kf = shot_frame(doc, web_jint(s, "index"));

    vt_sb_addf(b, "<a class=\"shot\" href=\"?t=");
    put_t_arg(b, a);
    vt_sb_addf(b, "\" data-t=\"%.3f\"", a);
    if (kf >= 0) {
        vt_sb_adds(b, " data-src=\"");
        put_frame_src(b, id, kf);
        vt_sb_adds(b, "\"");
    }
    vt_sb_adds(b, " aria-label=\"");
    put_shot_name(b, s);
    vt_sb_addf(b, "\"><rect class=\"s%d\" x=\"", (int)(i % 2));
    put_pct(b, a, length);
    vt_sb_adds(b, "\" y=\"12\" width=\"");
    put_pct(b, e - a, length);
    vt_sb_adds(b, "\" height=\"36\"><title>");
    put_shot_name(b, s);
    vt_sb_adds(b, "</title></rect></a>");
}

/*
 * The scene timeline: one tile per shot, its width its share of the video, an inline SVG
 * with percentages (the CSP forbids style attributes; percentages also keep it right at any
 * width, with nothing to recompute on resize). The shots' list keeps the seed's words.
 */
static void timeline(struct vt_sb *b, const char *id, const json_t *doc, const struct vpage *p,
                     const struct vhits *v)
{
    const json_t *shots = json_object_get(doc, "shots"), *s;
    double length = strip_length(doc);
    size_t i;

    if (!json_array_size(shots))
        return;
    vt_sb_adds(b, "<section id=\"timeline\"><h2>Scene timeline</h2>\n");
    if (length > 0) {
        vt_sb_addf(b,
                   "<div class=\"strip\"><svg class=\"shots\" width=\"100%%\" height=\"48\" "
                   "role=\"group\" aria-label=\"shots\" data-length=\"%.3f\">",
                   length);
        json_array_foreach(shots, i, s) shot_tile(b, id, doc, s, i, length);
        hit_marks(b, id, v, length, 0, 10);
        vt_sb_adds(b, "<rect class=\"ph\" x=\"0\" y=\"0\" width=\"2\" height=\"48\"/></svg>"
                      "<div class=\"kfpop\" hidden><img alt=\"\"><span></span></div></div>\n");
    }
    vt_sb_adds(b, "<details class=\"shotlist\"><summary>");
    put_n(b, p->n_shots, "shot", "shots");
    vt_sb_adds(b, "</summary>\n<ol class=\"shots\">\n");
    json_array_foreach(shots, i, s)
    {
        vt_sb_adds(b, "<li><a class=\"seek\" href=\"?t=");
        put_t_arg(b, web_jnum(s, "start_s"));
        vt_sb_addf(b, "\" data-t=\"%.3f\">", web_jnum(s, "start_s"));
        put_shot_name(b, s);
        vt_sb_addf(b, ", %lld of %lld keyframes kept</a></li>\n", web_jint(s, "keyframes_kept"),
                   web_jint(s, "keyframes_captured"));
    }
    vt_sb_adds(b, "</ol></details>\n");
    pager(b, p, 0);
    vt_sb_adds(b, "</section>\n");
}

/* A language tag fit for srclang ("en", "en-US"), else NULL. */
static const char *lang_tag(const json_t *doc)
{
    const char *l = web_jstr(doc, "language");
    size_t n = l ? strlen(l) : 0;

    if (!n || n > 16 || strspn(l, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != n)
        return NULL;
    return l;
}

static void player(struct vt_sb *b, const char *id, const json_t *doc, const struct vpage *p,
                   double t0)
{
    const char *lang = lang_tag(doc);

    vt_sb_addf(b,
               "<video id=\"player\" controls preload=\"metadata\" src=\"/media/%s#t=%.3f\" "
               "data-t0=\"%.3f\">",
               id, t0, t0);
    if (p->n_cues > 0) {
        vt_sb_addf(b,
                   "<track kind=\"captions\" default label=\"Transcript\" "
                   "src=\"/api/videos/%s/captions.vtt\"",
                   id);
        if (lang)
            vt_sb_addf(b, " srclang=\"%s\"", lang);
        vt_sb_adds(b, ">");
    }
    vt_sb_adds(b, "</video>\n");
}

/* The page's keys, under the seek bar's row. */
static void put_keys(struct vt_sb *b)
{
    /* the keys are the script's: said only where it runs (it unhides this) */
    vt_sb_adds(b, "<p class=\"keys\" id=\"keys\" hidden>Keys: <kbd>k</kbd> or "
                  "<kbd>space</kbd> play and pause, <kbd>j</kbd> <kbd>l</kbd> 10 s back and "
                  "forward, <kbd>←</kbd> <kbd>→</kbd> 5 s, <kbd>n</kbd> <kbd>p</kbd> next and "
                  "previous hit, <kbd>/</kbd> search.</p>\n");
}

static void transcript(struct vt_sb *b, const json_t *doc, const struct vpage *p,
                       const struct vhits *v)
{
    const json_t *cues = json_object_get(doc, "cues"), *c;
    long long words = 0, chars = 0, first = (p->cues - 1) * PAGE_CUES;
    size_t i;

    json_array_foreach(cues, i, c) count_text(web_jstr(c, "text"), &words, &chars);
    /* .pin: beside the player, the panel is as tall as the player's column, no taller */
    vt_sb_adds(b, "<section id=\"transcript\" class=\"panel\"><div class=\"pin\">"
                  "<h2>Transcript</h2>\n<p class=\"count\">");
    put_n(b, p->n_cues, "cue", "cues");
    vt_sb_adds(b, " · ");
    if ((long long)json_array_size(cues) < p->n_cues) {
        /* one page of them: its own counts */
        vt_sb_adds(b, "this page: ");
        if (json_array_size(cues)) {
            vt_sb_adds(b, "cues ");
            web_put_count(b, first + 1);
            vt_sb_adds(b, "–");
            web_put_count(b, first + (long long)json_array_size(cues));
            vt_sb_adds(b, ", ");
        }
    }
    put_n(b, words, "word", "words");
    vt_sb_adds(b, " · ");
    put_n(b, chars, "char", "chars");
    vt_sb_adds(b, "</p>\n<p class=\"filter\" hidden><input type=\"search\" id=\"cue-filter\" "
                  "aria-label=\"filter this transcript\" placeholder=\"filter this transcript\">"
                  " <span class=\"shown\" aria-live=\"polite\"></span></p>\n");
    pager(b, p, 1);
    if (!json_array_size(cues)) {
        vt_sb_adds(b, "<p class=\"empty\">No transcript.</p></div></section>\n");
        return;
    }
    vt_sb_addf(b,
               "<div class=\"cuebox\" tabindex=\"0\" role=\"region\" aria-label=\"transcript "
               "cues\"><ol class=\"cues\" start=\"%lld\">\n",
               first + 1);
    json_array_foreach(cues, i, c)
    {
        vt_sb_addf(b, "<li class=\"cue\" data-t=\"%.3f\" data-end=\"%.3f\">",
                   web_jnum(c, "start_s"), web_jnum(c, "end_s"));
        web_put_time_link(b, NULL, web_jnum(c, "start_s"), "seek");
        vt_sb_adds(b, " <span class=\"tx\">");
        put_text(b, v, web_jstr(c, "text"));
        vt_sb_adds(b, "</span></li>\n");
    }
    vt_sb_adds(b, "</ol></div>");
    pager(b, p, 1);
    vt_sb_adds(b, "</div></section>\n");
}

/* ---- frames, and what the machine read ---- */

/* The frame's alt text: what it reads, shortened on a character boundary, else its time. */
/* A line the ocr stage judged noise (read off a picture): shown dimmed, never counted. */
static int is_noise(const json_t *line)
{
    return json_is_true(json_object_get(line, "noise"));
}

/* The lines of frame f that were read as text (not noise). */
static long long text_lines(const json_t *f)
{
    const json_t *l;
    long long n = 0;
    size_t k;

    json_array_foreach(json_object_get(f, "ocr"), k, l) n += !is_noise(l);
    return n;
}

static void put_frame_alt(struct vt_sb *b, const json_t *f)
{
    struct vt_sb t = {0};
    const json_t *l;
    size_t k;

    json_array_foreach(json_object_get(f, "ocr"), k, l)
    {
        if (t.len >= 100)
            break;
        if (is_noise(l))
            continue;
        if (t.len)
            vt_sb_adds(&t, " ");
        vt_sb_adds(&t, web_jstr(l, "text") ? web_jstr(l, "text") : "");
    }
    if (!t.len) {
        vt_sb_adds(b, "frame at ");
        web_put_time(b, web_jnum(f, "t_s"));
        return;
    }
    if (t.len > 100) {
        size_t n = 100;

        while (n && ((unsigned char)t.buf[n] & 0xc0) == 0x80)
            n--;
        t.buf[n] = '\0';
        t.len = n;
        vt_sb_adds(&t, "…");
    }
    web_html(b, t.buf);
    vt_sb_release(&t);
}

/*
 * The frame's picture: lazy (most are below the fold), sized so the page does not jump: by
 * the image's own size, which is upright where the video's coded size is not (rotation).
 */
static void frame_img(struct vt_sb *b, const char *id, const json_t *doc, const json_t *f)
{
    const json_t *media = json_object_get(doc, "media");
    long long w = web_jint(f, "width"), h = web_jint(f, "height");

    if (w <= 0 || h <= 0) {
        w = web_jint(media, "width");
        h = web_jint(media, "height");
        if (web_jint(media, "rotation") % 180 == 90) {
            long long t = w;

            w = h;
            h = t;
        }
    }

    vt_sb_adds(b, "<img class=\"frame\" src=\"");
    put_frame_src(b, id, web_jint(f, "index"));
    vt_sb_addf(b, "\" data-t=\"%.3f\" alt=\"", web_jnum(f, "t_s"));
    put_frame_alt(b, f);
    /* shown up to 320 px wide: sharp on a 2x screen only with the frame itself */
    vt_sb_adds(b, "\" srcset=\"");
    put_frame_src(b, id, web_jint(f, "index"));
    vt_sb_addf(b, " 320w, /api/videos/%s/frames/%lld.jpg 1280w\" sizes=\"320px\"", id,
               web_jint(f, "index"));
    vt_sb_adds(b, " loading=\"lazy\" decoding=\"async\"");
    if (w > 0 && h > 0 && w < 100000 && h < 100000)
        vt_sb_addf(b, " width=\"320\" height=\"%lld\"", 320 * h / w);
    vt_sb_adds(b, ">");
}

static void frame_meta(struct vt_sb *b, const char *id, const json_t *f, const struct vpage *p,
                       int liked)
{
    vt_sb_addf(b, "<p class=\"fm\">shot %lld · frame %lld", web_jint(f, "shot"),
               web_jint(f, "frame_no"));
    if (json_is_integer(json_object_get(f, "duplicate_of"))) {
        long long d = web_jint(f, "duplicate_of");

        /* the frame it repeats may be on another page */
        vt_sb_addf(b,
                   " · duplicate of <a href=\"/v/%s?frames=%lld&amp;cues=%lld#frame-%lld\">"
                   "#%lld</a>",
                   id, d >= 0 ? d / PAGE_FRAMES + 1 : 1, p->cues, d, d);
    } else {
        vt_sb_addf(b, " · sharpness %.1f", web_jnum(f, "sharpness"));
    }
    if (liked && web_jstr(f, "image"))
        vt_sb_addf(b,
                   " · <a class=\"similar\" href=\"/v/%s/frames/%lld/similar\">more like "
                   "this</a>",
                   id, web_jint(f, "index"));
    vt_sb_adds(b, "</p>");
}

static void ocr_lines(struct vt_sb *b, const json_t *f, const struct vhits *v)
{
    const json_t *ocr = json_object_get(f, "ocr"), *l;
    size_t k;

    if (!json_array_size(ocr))
        return;
    vt_sb_adds(b, "<ol class=\"ocr\">");
    json_array_foreach(ocr, k, l)
    {
        if (k == PAGE_OCR_LINES) {
            vt_sb_adds(b, "<li>… ");
            put_n(b, (long long)(json_array_size(ocr) - k), "more line", "more lines");
            vt_sb_adds(b, "</li>");
            break;
        }
        vt_sb_addf(b, "<li%s data-t=\"%.3f\">", is_noise(l) ? " class=\"noise\"" : "",
                   web_jnum(f, "t_s"));
        put_text(b, v, web_jstr(l, "text"));
        vt_sb_addf(b, " <span class=\"conf\">%.2f%s</span></li>", web_jnum(l, "conf"),
                   is_noise(l) ? ", likely noise" : "");
    }
    vt_sb_adds(b, "</ol>");
}

static void frames(struct vt_sb *b, const char *id, const json_t *doc, const struct vpage *p,
                   const struct vhits *v)
{
    const json_t *f;
    size_t i;
    int liked = pictures_embedded(doc);

    if (!json_array_size(json_object_get(doc, "frames")) && p->n_frames <= 0)
        return;
    vt_sb_adds(b, "<section id=\"frames\"><h2>Frames, and what the machine read</h2>\n");
    pager(b, p, 0);
    vt_sb_adds(b, "<ul class=\"frames\">\n");
    json_array_foreach(json_object_get(doc, "frames"), i, f)
    {
        const char *st = web_jstr(f, "state") ? web_jstr(f, "state") : "";
        int done = !strcmp(st, "done");

        vt_sb_addf(b, "<li class=\"frame\" id=\"frame-%lld\"><p class=\"fh\">",
                   web_jint(f, "index"));
        web_put_time_link(b, NULL, web_jnum(f, "t_s"), "seek");
        vt_sb_addf(b, " <b>#%lld</b> <span class=\"st\">", web_jint(f, "index"));
        web_html(b, st);
        vt_sb_adds(b, "</span>");
        if (done && text_lines(f) > 0) {
            vt_sb_adds(b, " <span>");
            put_n(b, text_lines(f), "line", "lines");
            vt_sb_adds(b, "</span>");
        } else if (done) {
            vt_sb_adds(b, " <span>no text</span>");
        }
        vt_sb_adds(b, "</p>");
        frame_meta(b, id, f, p, liked);
        if (done && web_jstr(f, "image"))
            frame_img(b, id, doc, f);
        ocr_lines(b, f, v);
        vt_sb_adds(b, "</li>\n");
    }
    vt_sb_adds(b, "</ul>");
    pager(b, p, 0);
    vt_sb_adds(b, "</section>\n");
}

/* ---- details ---- */

static void stored_item(struct vt_sb *b, const char *name, long long v)
{
    vt_sb_addf(b, "<div><dt>%s</dt><dd class=\"n\">", name);
    web_put_count(b, v);
    vt_sb_adds(b, "</dd><dd>");
}

static void stored(struct vt_sb *b, const json_t *doc)
{
    const json_t *s = json_object_get(doc, "stored");
    const char *src = web_jstr(s, "cues_source");

    vt_sb_adds(b, "<section id=\"stored\"><h2>What was stored</h2>\n<dl class=\"stored\">");
    stored_item(b, "cues", web_jint(s, "cues"));
    web_html(b, src ? src : "no transcript");
    vt_sb_adds(b, "</dd></div>");
    stored_item(b, "chunks", web_jint(s, "chunks"));
    vt_sb_adds(b, "from ");
    put_n(b, web_jint(s, "cues"), "cue", "cues");
    vt_sb_adds(b, "</dd></div>");
    stored_item(b, "text vectors", web_jint(s, "text_vectors"));
    vt_sb_adds(b, "for meaning search</dd></div>");
    stored_item(b, "keyframes", web_jint(s, "keyframes_kept"));
    vt_sb_adds(b, "kept of ");
    web_put_count(b, web_jint(s, "keyframes_captured"));
    vt_sb_adds(b, " captured</dd></div>");
    stored_item(b, "frames with text", web_jint(s, "frames_with_text"));
    put_n(b, web_jint(s, "ocr_lines"), "line", "lines");
    vt_sb_adds(b, " read</dd></div>");
    stored_item(b, "chapters", web_jint(s, "chapters"));
    vt_sb_adds(b, "from the source metadata</dd></div>");
    stored_item(b, "word-timed cues", web_jint(s, "word_timed_cues"));
    vt_sb_adds(b, "with a time for each word</dd></div>");
    vt_sb_adds(b, "<div><dt>keyframe bytes</dt><dd class=\"n\">");
    web_put_bytes(b, web_jint(s, "keyframe_bytes"));
    vt_sb_adds(b, "</dd><dd>in ");
    put_n(b, web_jint(s, "keyframes_kept"), "kept frame", "kept frames");
    vt_sb_adds(b, "</dd></div></dl></section>\n");
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
        const char *other = web_jstr(r, "video_id") ? web_jstr(r, "video_id") : "";

        if (!vt_id_valid(other))
            continue;
        vt_sb_adds(b, "<li class=\"reused\">");
        web_put_time_link(b, NULL, web_jnum(r, "start_s"), "seek");
        vt_sb_adds(b, "–");
        web_put_time(b, web_jnum(r, "end_s"));
        vt_sb_addf(b, " also appears in <a class=\"other\" href=\"/v/%s?t=", other);
        web_put_t(b, web_jnum(r, "other_start_s"));
        vt_sb_adds(b, "\">");
        web_html(b, web_jstr(r, "title") && *web_jstr(r, "title") ? web_jstr(r, "title") : other);
        vt_sb_adds(b, "</a> at ");
        web_put_time(b, web_jnum(r, "other_start_s"));
        vt_sb_adds(b, "–");
        web_put_time(b, web_jnum(r, "other_end_s"));
        vt_sb_adds(b, " <span class=\"conf\">");
        put_n(b, web_jint(r, "frames"), "frame", "frames");
        vt_sb_addf(b, ", similarity %.3f</span></li>\n", web_jnum(r, "similarity"));
    }
    (void)id;
    vt_sb_adds(b, "</ul></section>\n");
}

static void provenance(struct vt_sb *b, const json_t *doc)
{
    const json_t *s;
    size_t i;

    /* the table scrolls sideways inside its box on a phone, not the page */
    vt_sb_adds(b, "<section id=\"provenance\"><h2>Provenance</h2>\n<div class=\"scrollx\" "
                  "tabindex=\"0\" role=\"region\" aria-label=\"provenance\"><table class=\"prov\">"
                  "<caption>Each pipeline stage, its state and the model that produced it"
                  "</caption><thead><tr><th>stage</th><th>state</th><th>model</th>"
                  "<th>started</th><th>took</th><th>error</th></tr></thead><tbody>\n");
    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        vt_sb_adds(b, "<tr><td>");
        web_html(b, web_jstr(s, "name"));
        vt_sb_adds(b, "</td><td class=\"st\">");
        web_html(b, web_jstr(s, "state"));
        vt_sb_adds(b, "</td><td>");
        web_html(b, web_jstr(s, "model") ? web_jstr(s, "model") : "—");
        vt_sb_adds(b, "</td><td>");
        web_put_date(b, web_jstr(s, "started_at"));
        vt_sb_adds(b, "</td><td>");
        web_put_took(b, web_jnum(s, "took_s"));
        vt_sb_adds(b, "</td><td>");
        web_html(b, web_jstr(s, "error") ? web_jstr(s, "error") : "");
        vt_sb_adds(b, "</td></tr>\n");
    }
    vt_sb_adds(b, "</tbody></table></div></section>\n");
}

/* What was stored and provenance: open on demand, and at once when something failed. */
static void details(struct vt_sb *b, const json_t *doc)
{
    vt_sb_addf(b,
               "<details id=\"details\"%s><summary>Details: what was stored, provenance"
               "</summary>\n",
               failed_stage(doc) ? " open" : "");
    stored(b, doc);
    provenance(b, doc);
    vt_sb_adds(b, "</details>\n");
}

/*
 * "Open at this second" follows the player; without one (the media was not kept) only the
 * source's link at ?t= is left, and nothing when there is none.
 */
static void open_at(struct vt_sb *b, const char *id, const json_t *doc, double t0, int has_player)
{
    char link[4200];
    int src = !source_link(doc, t0, link, sizeof(link));

    if (!has_player && !src)
        return;
    vt_sb_adds(b, "<p class=\"openat\">");
    if (has_player) {
        vt_sb_addf(b, "<a id=\"open-at\" href=\"/v/%s?t=", id);
        web_put_t(b, t0);
        vt_sb_adds(b, "\">Open at this second</a>");
    }
    if (src) {
        vt_sb_adds(b, has_player ? " · " : "Open ");
        vt_sb_adds(b, "<a id=\"source-at\" rel=\"noopener noreferrer nofollow\" href=\"");
        web_html(b, link);
        vt_sb_addf(b, "\">on %s at this second</a>", source_name(doc));
    }
    vt_sb_adds(b, "</p>\n");
}

/* The pages of the lists to show: those asked, else those that hold moment t. */
static int pick_pages(struct vt_library *lib, const char *id, const char *t,
                      const char *frames_page, const char *cues_page, struct vpage *pg,
                      struct vt_doc_pages *pages)
{
    double t0;

    if (parse_page(frames_page, &pg->frames) || parse_page(cues_page, &pg->cues))
        return -1;
    t0 = parse_t(t, 0);
    if (t0 > 0) {
        /* opened at a moment (a search hit): the pages that hold it, unless others are asked */
        long long cue;
        int frame;

        if ((!cues_page || !*cues_page) && !vt_cue_at(lib, id, t0, &cue) && cue >= 0)
            pg->cues = cue / PAGE_CUES + 1;
        if ((!frames_page || !*frames_page) && !vt_frame_at(lib, id, t0, &frame) && frame >= 0)
            pg->frames = frame / PAGE_FRAMES + 1;
    }
    pages->shots.offset = pages->frames.offset = (pg->frames - 1) * PAGE_FRAMES;
    pages->shots.limit = pages->frames.limit = PAGE_FRAMES;
    pages->cues.offset = (pg->cues - 1) * PAGE_CUES;
    pages->cues.limit = PAGE_CUES;
    pages->chunks.offset = pages->chunks.limit = 0; /* not shown */
    return 0;
}

static void page_body(struct vt_sb *out, const struct web_ctx *ctx, const char *id,
                      const json_t *doc, const struct vpage *pg, const struct vhits *v, double t0)
{
    int has_player = web_jstr(json_object_get(doc, "source"), "path") != NULL;

    vt_sb_addf(out, "<nav class=\"crumbs\"><a href=\"/\">Videos</a> <span>%s</span></nav>\n", id);
    vt_sb_adds(out, "<div class=\"vhead\"><h1>");
    web_html(out, web_jstr(doc, "title") ? web_jstr(doc, "title") : id);
    vt_sb_adds(out, "</h1>\n");
    video_state(out, id, doc);
    video_meta(out, ctx, id, doc);
    if (has_player || pg->n_cues > 0)
        hits_section(out, id, v);
    vt_sb_adds(out, "</div>\n");
    if (has_player || pg->n_cues > 0) {
        vt_sb_addf(out, "<div class=\"watch%s\">\n<div class=\"stage\">\n",
                   has_player ? "" : " noplayer");
        if (has_player)
            player(out, id, doc, pg, t0);
        hitbar(out, id, v, strip_length(doc));
        if (has_player)
            put_keys(out);
        timeline(out, id, doc, pg, v);
        vt_sb_adds(out, "</div>\n");
        transcript(out, doc, pg, v);
        vt_sb_adds(out, "</div>\n");
    } else {
        timeline(out, id, doc, pg, v);
    }
    /* managing (signed in): under the player and the transcript, never pushing them down */
    web_put_video_actions(out, ctx, doc);
    frames(out, id, doc, pg, v);
    reuse_section(out, id, doc);
    details(out, doc);
    if (has_player || pg->n_cues > 0)
        open_at(out, id, doc, t0, has_player);
}

int web_page_video(struct vt_library *lib, const struct web_ctx *ctx, const char *id, const char *t,
                   const struct web_search_ask *a, const char *frames_page, const char *cues_page,
                   struct vt_sb *out)
{
    struct vt_doc_pages pages;
    struct vpage pg = {id, 1, 1, 0, 0, 0};
    struct vhits v;
    const char *why = NULL;
    const json_t *counts;
    json_t *doc;
    int rc;

    if (!vt_id_valid(id))
        return web_page_error(ctx, 404, "no such video", out);
    if (pick_pages(lib, id, t, frames_page, cues_page, &pg, &pages))
        return web_page_error(ctx, 400, "frames and cues are page numbers (1, 2, ...)", out);
    if (web_search_check(a, &why))
        return web_page_error(ctx, 400, why, out);
    doc = web_video_doc(lib, id, &pages, &rc);
    if (!doc) {
        if (rc == VT_ENOTFOUND || rc == VT_EINVAL)
            return web_page_error(ctx, 404, "no such video", out);
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
        return web_page_error(ctx, 500, "the video cannot be read", out);
    }
    if (vhits_find(lib, id, a, &v)) {
        json_decref(doc);
        return web_page_error(ctx, 500, "the search could not run", out);
    }
    counts = json_object_get(doc, "stored");
    pg.n_shots = web_jint(counts, "shots");
    pg.n_frames = web_jint(counts, "keyframes_captured");
    pg.n_cues = web_jint(counts, "cues");
    /* no meta refresh while indexing: it would stop the player; video.js polls instead */
    web_head(out, ctx, web_jstr(doc, "title"), NULL, 0);
    page_body(out, ctx, id, doc, &pg, &v, parse_t(t, web_jnum(doc, "duration_s")));
    vt_sb_addf(out, "<script src=\"%s\" defer></script>\n", web_asset_url("/static/video.js"));
    web_foot(out);
    vhits_release(&v);
    json_decref(doc);
    return 200;
}

/* ---- the routes the page's player and script use ---- */

int web_video_captions(struct vt_library *lib, const char *id, struct vt_sb *out)
{
    char *s = NULL;
    int rc;

    if (!vt_id_valid(id))
        return 404;
    rc = vt_export_subtitles(lib, id, "vtt", &s);
    if (rc == VT_ENOTFOUND || rc == VT_EINVAL)
        return 404;
    if (rc) {
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
        return 500;
    }
    vt_sb_adds(out, s);
    free(s);
    return 200;
}

int web_video_state(struct vt_library *lib, const char *id, struct vt_sb *out)
{
    static const struct vt_doc_pages none = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
    const json_t *bad;
    json_t *doc, *o;
    long long done, all;
    char *s;
    int rc;

    if (!vt_id_valid(id))
        return 404;
    doc = web_video_doc(lib, id, &none, &rc);
    if (!doc) {
        if (rc == VT_ENOTFOUND || rc == VT_EINVAL)
            return 404;
        fprintf(stderr, "vidtheque: %s\n", vt_errmsg(lib));
        return 500;
    }
    stage_counts(doc, &done, &all);
    bad = failed_stage(doc);
    o = json_pack("{s:s,s:s?,s:s?,s:s,s:s,s:I,s:I}", "id", id, "index_state",
                  web_jstr(doc, "index_state"), "data_status", web_jstr(doc, "data_status"),
                  "state_words", state_words(web_jstr(doc, "index_state")), "data_words",
                  data_words(web_jstr(doc, "data_status"), web_jstr(doc, "index_state")),
                  "stages_finished", (json_int_t)done, "stages", (json_int_t)all);
    if (o && bad)
        json_object_set_new(o, "error",
                            json_pack("{s:s?,s:s?}", "stage", web_jstr(bad, "name"), "error",
                                      web_jstr(bad, "error")));
    json_decref(doc);
    s = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!s)
        return 500;
    vt_sb_adds(out, s);
    vt_sb_adds(out, "\n");
    free(s);
    return 200;
}
