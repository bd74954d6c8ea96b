/*
 * Chapters on the video page: the seek bar under the player (one segment per chapter, each
 * a link to its start; /static/seekbar.js shows the storyboard preview of the moment under
 * the pointer and seeks there), the chapters' headings in the transcript, and the route
 * the preview reads, GET /api/videos/ID/storyboard (vt_storyboard: which small frame shows
 * which moment).
 */
#include "base/util.h"
#include "web/web_http.h"
#include "web/web_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "12.345%" of length, clamped */
static void put_pct(struct vt_sb *b, double t, double length)
{
    double p = length > 0 ? 100 * t / length : 0;

    vt_sb_addf(b, "%.3f%%", p < 0 ? 0 : p > 100 ? 100 : p);
}

/* "Design Problem, 0:00 to 0:09, from the slides" (escaped) */
static void put_chapter_name(struct vt_sb *b, const json_t *c)
{
    web_html(b, web_jstr(c, "title") ? web_jstr(c, "title") : "Untitled chapter");
    vt_sb_adds(b, ", ");
    web_put_time(b, web_jnum(c, "start_s"));
    vt_sb_adds(b, " to ");
    web_put_time(b, web_jnum(c, "end_s"));
    vt_sb_adds(b, web_jstr(c, "made") && !strcmp(web_jstr(c, "made"), "slides")
                      ? ", from the slides"
                      : ", from the source");
}

/* One chapter's segment: a link to its start, a hair short of the next so they part. */
static void chapter_segment(struct vt_sb *b, const json_t *c, size_t i, double length)
{
    double a = web_jnum(c, "start_s"), e = web_jnum(c, "end_s");
    double gap = length * 0.002;

    vt_sb_adds(b, "<a class=\"chap\" href=\"?t=");
    web_put_t(b, a);
    vt_sb_adds(b, "\" data-t=\"");
    web_put_t(b, a);
    vt_sb_addf(b, "\" data-end=\"%.3f\" data-title=\"", e);
    web_html(b, web_jstr(c, "title") ? web_jstr(c, "title") : "");
    vt_sb_adds(b, "\" aria-label=\"Chapter ");
    vt_sb_addf(b, "%zu: ", i + 1);
    put_chapter_name(b, c);
    vt_sb_adds(b, "\"><rect x=\"");
    put_pct(b, a, length);
    vt_sb_adds(b, "\" y=\"4\" width=\"");
    put_pct(b, e - a > gap * 2 ? e - a - gap : e - a, length);
    vt_sb_adds(b, "\" height=\"8\"><title>");
    put_chapter_name(b, c);
    vt_sb_adds(b, "</title></rect></a>");
}

void web_video_seekbar(struct vt_sb *b, const char *id, const json_t *doc, double length)
{
    const json_t *chapters = json_object_get(doc, "chapters"), *c;
    size_t i, n = json_array_size(chapters);

    if (length <= 0)
        return;
    vt_sb_addf(b,
               "<div class=\"seekbar\" id=\"seekbar\" data-board=\"/api/videos/%s/storyboard\" "
               "data-frame=\"/api/videos/%s/frames/\" data-span=\"%.3f\">",
               id, id, length);
    vt_sb_addf(b, "<svg width=\"100%%\" height=\"16\" role=\"group\" aria-label=\"%s\">",
               n ? "chapters" : "seek bar");
    vt_sb_adds(b, "<rect class=\"track\" x=\"0\" y=\"6\" width=\"100%\" height=\"4\"/>");
    json_array_foreach(chapters, i, c) chapter_segment(b, c, i, length);
    vt_sb_adds(b, "<rect class=\"ph\" x=\"0\" y=\"0\" width=\"2\" height=\"16\"/></svg>"
                  "<div class=\"sbpop\" hidden><img alt=\"\" width=\"160\" height=\"90\">"
                  "<span class=\"sbt\"></span><span class=\"sbc\"></span></div></div>\n");
    if (n) {
        vt_sb_adds(b, "<p class=\"chapnow\" id=\"chapnow\">");
        vt_sb_addf(b, "%zu chapter%s", n, n == 1 ? "" : "s");
        vt_sb_adds(b, web_jstr(json_array_get(chapters, 0), "made") &&
                              !strcmp(web_jstr(json_array_get(chapters, 0), "made"), "slides")
                          ? ", made from the slides' titles"
                          : ", from the source");
        vt_sb_adds(b, "</p>\n");
    }
}

/* Chapter c's heading in the transcript, a link to its start. */
static void chapter_head(struct vt_sb *b, const json_t *c)
{
    vt_sb_adds(b, "<li class=\"chaphead\"><h3>");
    web_put_time_link(b, NULL, web_jnum(c, "start_s"), "seek");
    vt_sb_adds(b, " ");
    web_html(b, web_jstr(c, "title") ? web_jstr(c, "title") : "Untitled chapter");
    vt_sb_adds(b, "</h3></li>\n");
}

void web_transcript_chapters(struct vt_sb *b, const json_t *doc, double prev_s, double cue_s,
                             int first)
{
    const json_t *chapters = json_object_get(doc, "chapters"), *c, *holds = NULL;
    size_t i;

    json_array_foreach(chapters, i, c)
    {
        double s = web_jnum(c, "start_s");

        if (s > cue_s)
            break;
        if (first)
            holds = c; /* the page's first cue: the chapter it is in */
        else if (s > prev_s)
            chapter_head(b, c);
    }
    if (holds)
        chapter_head(b, holds);
}

enum MHD_Result web_api_storyboard(const struct web_req *r)
{
    static const struct vt_doc_pages none = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
    struct vt_board_frame *f = NULL;
    enum MHD_Result ret;
    json_t *doc = web_doc_or_error(r->c, r->lib, r->id, &none, 1, &ret), *o, *a;
    size_t n = 0;

    if (!doc)
        return ret;
    if (vt_storyboard(r->lib, r->id, &f, &n)) {
        json_decref(doc);
        return web_send_error(r->c, 1, 500, "internal", "the storyboard cannot be read");
    }
    a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:f,s:i}", "start_s",
                                           round(f[i].start_s * 1000) / 1000, "frame", f[i].frame));
    o = json_pack("{s:s,s:f,s:o}", "video_id", r->id, "duration_s", web_jnum(doc, "duration_s"),
                  "frames", a);
    free(f);
    json_decref(doc);
    return web_send_json(r->c, 200, o);
}
