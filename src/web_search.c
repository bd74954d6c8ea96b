/*
 * The search page: every hit is a moment, linked to the video at that second.
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

    web_head(out, ctx, q && *q ? q : "Search", q, 0);
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
                       h->video_id, web_secs(h->start_s));
            if (!web_put_thumb(out, lib, h->video_id, h->start_s))
                vt_sb_adds(out, "<span class=\"nothumb\">no frame</span>");
            vt_sb_adds(out, "</a><div><p>");
            web_put_time_link(out, h->video_id, h->start_s, "ts");
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
    web_foot(out);
    free(done);
    vt_hits_free(hits, n);
    return 200;
}
