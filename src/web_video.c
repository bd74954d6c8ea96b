/*
 * A video's page, in the order of the demo page: metadata, player, scene timeline,
 * what was stored, provenance, frames and what the machine read, transcript. It is
 * rendered on the server from the video document and reads without JavaScript;
 * /static/app.js adds seeking and the current cue.
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

/* ---- a video's page ---- */

/*
 * The video's page on its source (YouTube, another site, a plain media URL) at
 * second t, into buf; 0 when there is one. Only http(s) addresses are ever made
 * links: the page URL came from a site and is data, not markup.
 */
static int source_link(const json_t *doc, double t, char *buf, size_t n)
{
    const json_t *src = json_object_get(doc, "source");
    const char *page = web_jstr(src, "page_url");

    if (!page || (strncmp(page, "https://", 8) && strncmp(page, "http://", 7)))
        return -1;
    return vt_source_url_at(page, web_jstr(src, "extractor"), t, buf, n) ? -1 : 0;
}

static const char *source_name(const json_t *doc)
{
    const char *x = web_jstr(json_object_get(doc, "source"), "extractor");

    return x && !strcmp(x, "youtube") ? "YouTube" : "the source";
}

static void video_meta(struct vt_sb *b, const struct web_ctx *ctx, const char *id,
                       const json_t *doc)
{
    const json_t *src = json_object_get(doc, "source");
    const char *s;

    vt_sb_adds(b, "<p class=\"state\"><span class=\"badge state-");
    web_html(b, web_jstr(doc, "index_state"));
    vt_sb_adds(b, "\">index_state ");
    web_html(b, web_jstr(doc, "index_state"));
    vt_sb_adds(b, "</span> <span class=\"badge\">data_status ");
    web_html(b, web_jstr(doc, "data_status"));
    vt_sb_adds(b, "</span></p>\n<p class=\"meta\">");
    s = web_jstr(doc, "channel");
    web_html(b, s ? s : "unknown channel");
    vt_sb_adds(b, " · published ");
    s = web_jstr(doc, "published");
    web_html(b, s ? s : "—");
    vt_sb_adds(b, " · ");
    web_put_time(b, web_jnum(doc, "duration_s"));
    vt_sb_adds(b, " · ");
    s = web_jstr(doc, "language");
    web_html(b, s ? s : "language unknown");
    vt_sb_adds(b, " · indexed ");
    web_put_date(b, web_jstr(doc, "indexed_at"));
    vt_sb_adds(b, "</p>\n<p class=\"source\">");
    {
        char link[4200];

        if (!source_link(doc, 0, link, sizeof(link))) {
            vt_sb_adds(b, "<a id=\"open-source\" rel=\"noopener noreferrer nofollow\" href=\"");
            web_html(b, link);
            vt_sb_addf(b, "\">Open on %s</a> ", source_name(doc));
        }
    }
    s = web_jstr(src, "path");
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
                   web_secs(web_jnum(s, "start_s")), web_jnum(s, "start_s"), web_jint(s, "index"));
        web_put_time(b, web_jnum(s, "start_s"));
        vt_sb_adds(b, " to ");
        web_put_time(b, web_jnum(s, "end_s"));
        vt_sb_addf(b, ", %lld of %lld keyframes kept</a></li>\n", web_jint(s, "keyframes_kept"),
                   web_jint(s, "keyframes_captured"));
    }
    vt_sb_adds(b, "</ol>\n<p>");
    web_put_count(b, p->n_shots);
    vt_sb_addf(b, " shot(s).</p>\n<div class=\"strip\" data-duration=\"%.3f\">",
               web_jnum(doc, "duration_s"));
    json_array_foreach(json_object_get(doc, "frames"), i, f)
    {
        if (!web_jstr(f, "image") ||
            strcmp(web_jstr(f, "state") ? web_jstr(f, "state") : "", "done"))
            continue;
        vt_sb_addf(b, "<a class=\"kf seek\" href=\"?t=%ld\" data-t=\"%.3f\">",
                   web_secs(web_jnum(f, "t_s")), web_jnum(f, "t_s"));
        web_put_frame_img(b, id, f, "kf");
        vt_sb_adds(b, "<span>");
        web_put_time(b, web_jnum(f, "t_s"));
        vt_sb_adds(b, "</span></a>");
    }
    vt_sb_adds(b, "</div>");
    pager(b, p, 0);
    vt_sb_adds(b, "</section>\n");
}

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
    web_put_count(b, web_jint(s, "cues"));
    vt_sb_adds(b, " cues</dd></div>");
    stored_item(b, "text vectors", web_jint(s, "text_vectors"));
    vt_sb_adds(b, "for meaning search</dd></div>");
    stored_item(b, "keyframes", web_jint(s, "keyframes_kept"));
    vt_sb_adds(b, "kept of ");
    web_put_count(b, web_jint(s, "keyframes_captured"));
    vt_sb_adds(b, " captured</dd></div>");
    stored_item(b, "frames with text", web_jint(s, "frames_with_text"));
    web_put_count(b, web_jint(s, "ocr_lines"));
    vt_sb_adds(b, " lines read</dd></div>");
    stored_item(b, "chapters", web_jint(s, "chapters"));
    vt_sb_adds(b, "from the source metadata</dd></div>");
    vt_sb_adds(b, "<div><dt>keyframe bytes</dt><dd class=\"n\">");
    web_put_bytes(b, web_jint(s, "keyframe_bytes"));
    vt_sb_adds(b, "</dd><dd>word timings on ");
    web_put_count(b, web_jint(s, "word_timed_cues"));
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
    vt_sb_adds(b, "</tbody></table></section>\n");
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
        const char *st = web_jstr(f, "state") ? web_jstr(f, "state") : "";
        int done = !strcmp(st, "done");

        vt_sb_addf(b, "<li class=\"frame\" id=\"frame-%lld\"><p class=\"fh\">",
                   web_jint(f, "index"));
        web_put_time_link(b, NULL, web_jnum(f, "t_s"), "seek");
        vt_sb_addf(b, " <b>#%lld</b> <span class=\"st\">", web_jint(f, "index"));
        web_html(b, st);
        vt_sb_adds(b, "</span>");
        if (done)
            vt_sb_addf(b, " <span>%zu line(s)</span>", json_array_size(ocr));
        vt_sb_addf(b, "</p><p class=\"fm\">shot %lld · frame %lld", web_jint(f, "shot"),
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
        if (done)
            web_put_frame_img(b, id, f, "frame");
        if (json_array_size(ocr)) {
            vt_sb_adds(b, "<ol class=\"ocr\">");
            json_array_foreach(ocr, k, l)
            {
                if (k == PAGE_OCR_LINES) {
                    vt_sb_addf(b, "<li>… %zu more line(s)</li>", json_array_size(ocr) - k);
                    break;
                }
                vt_sb_adds(b, "<li>");
                web_html(b, web_jstr(l, "text"));
                vt_sb_addf(b, " <span class=\"conf\">%.2f</span></li>", web_jnum(l, "conf"));
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

    json_array_foreach(cues, i, c) count_text(web_jstr(c, "text"), &words, &chars);
    vt_sb_adds(b, "<section id=\"transcript\"><h2>Transcript</h2>\n<p>");
    web_put_count(b, p->n_cues);
    vt_sb_adds(b, " cues · ");
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
    web_put_count(b, words);
    vt_sb_adds(b, " words · ");
    web_put_count(b, chars);
    vt_sb_adds(b, " chars</p>\n");
    pager(b, p, 1);
    vt_sb_addf(b, "<ol class=\"cues\" start=\"%lld\">\n", first + 1);
    json_array_foreach(cues, i, c)
    {
        vt_sb_addf(b, "<li class=\"cue\" data-t=\"%.3f\" data-end=\"%.3f\">",
                   web_jnum(c, "start_s"), web_jnum(c, "end_s"));
        web_put_time_link(b, NULL, web_jnum(c, "start_s"), "seek");
        vt_sb_adds(b, " ");
        web_html(b, web_jstr(c, "text"));
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
        const char *other = web_jstr(r, "video_id") ? web_jstr(r, "video_id") : "";

        if (!vt_id_valid(other))
            continue;
        vt_sb_adds(b, "<li class=\"reused\">");
        web_put_time_link(b, NULL, web_jnum(r, "start_s"), "seek");
        vt_sb_adds(b, "–");
        web_put_time(b, web_jnum(r, "end_s"));
        vt_sb_addf(b, " also appears in <a class=\"other\" href=\"/v/%s?t=%ld\">", other,
                   web_secs(web_jnum(r, "other_start_s")));
        web_html(b, web_jstr(r, "title") && *web_jstr(r, "title") ? web_jstr(r, "title") : other);
        vt_sb_adds(b, "</a> at ");
        web_put_time(b, web_jnum(r, "other_start_s"));
        vt_sb_adds(b, "–");
        web_put_time(b, web_jnum(r, "other_end_s"));
        vt_sb_addf(b, " <span class=\"conf\">%lld frame(s), similarity %.3f</span></li>\n",
                   web_jint(r, "frames"), web_jnum(r, "similarity"));
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
    pg.n_shots = web_jint(counts, "shots");
    pg.n_frames = web_jint(counts, "keyframes_captured");
    pg.n_cues = web_jint(counts, "cues");
    t0 = parse_t(t, web_jnum(doc, "duration_s"));
    web_head(
        out, ctx, web_jstr(doc, "title"), NULL,
        strcmp(web_jstr(doc, "index_state") ? web_jstr(doc, "index_state") : "", "ready") &&
                strcmp(web_jstr(doc, "index_state") ? web_jstr(doc, "index_state") : "", "failed")
            ? 5
            : 0);
    vt_sb_addf(out, "<nav class=\"crumbs\"><a href=\"/\">Videos</a> <span>%s</span></nav>\n", id);
    vt_sb_adds(out, "<h1>");
    web_html(out, web_jstr(doc, "title") ? web_jstr(doc, "title") : id);
    vt_sb_adds(out, "</h1>\n");
    video_meta(out, ctx, id, doc);
    web_put_video_actions(out, ctx, doc);
    if (web_jstr(json_object_get(doc, "source"), "path"))
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
               web_secs(t0));
    {
        char link[4200];

        if (!source_link(doc, t0, link, sizeof(link))) {
            vt_sb_adds(out, " · <a id=\"source-at\" rel=\"noopener noreferrer nofollow\" href=\"");
            web_html(out, link);
            vt_sb_addf(out, "\">on %s at this second</a>", source_name(doc));
        }
    }
    vt_sb_adds(out, "</p>\n<script src=\"/static/video.js\" defer></script>\n");
    web_foot(out);
    json_decref(doc);
    return 200;
}
