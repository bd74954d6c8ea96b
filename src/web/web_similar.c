/*
 * "More like this": the frames of the whole library that look like one frame.
 */
#include "base/util.h"
#include "model/stage.h"
#include "search/vecsearch.h"
#include "web/web.h"
#include "web/web_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    char err[512], alt[32];
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
    web_head(out, ctx, "More like this", NULL, 0);
    vt_sb_addf(out,
               "<nav class=\"crumbs\"><a href=\"/\">Videos</a> <a href=\"/v/%s#frame-%ld\">%s"
               "</a> <span>frame %ld</span></nav>\n",
               id, f, id, f);
    vt_sb_adds(out, "<h1>More like this</h1>\n<p>");
    snprintf(alt, sizeof(alt), "frame %ld", f);
    /* the picture the page is about, at the top: not lazy */
    web_put_frame_thumb_opt(out, id, f, "frame", alt,
                            &(struct web_thumb){.shown_w = 320, .eager = 1});
    vt_sb_adds(out, "</p>\n");
    if (!n) {
        vt_sb_adds(out, "<p class=\"empty\">No other frame has a picture vector yet.</p>\n");
    } else {
        vt_sb_addf(out,
                   "<p class=\"count\">%zu frame(s), most alike first.</p>\n"
                   "<ol class=\"similar\">\n",
                   n);
        for (size_t i = 0; i < n; i++) {
            vt_sb_addf(out, "<li class=\"like\"><a class=\"thumb\" href=\"/v/%s?t=", s[i].video_id);
            web_put_t(out, s[i].t_s); /* never before the frame's moment */
            vt_sb_adds(out, "\">");
            if (s[i].path) {
                snprintf(alt, sizeof(alt), "frame %d", s[i].frame);
                web_put_frame_thumb(out, s[i].video_id, s[i].frame, "thumb", alt);
            }
            vt_sb_addf(out, "</a><div><a class=\"title\" href=\"/v/%s?t=", s[i].video_id);
            web_put_t(out, s[i].t_s);
            vt_sb_adds(out, "\">");
            web_html(out, s[i].title && *s[i].title ? s[i].title : s[i].video_id);
            vt_sb_adds(out, "</a><p class=\"meta\">");
            web_put_time(out, s[i].t_s);
            vt_sb_addf(out,
                       " · frame %d · similarity <span class=\"score\">%.3f</span> · "
                       "<a href=\"/v/%s/frames/%d/similar\">more like this</a></p></div></li>\n",
                       s[i].frame, s[i].score, s[i].video_id, s[i].frame);
        }
        vt_sb_adds(out, "</ol>\n");
    }
    web_foot(out);
    vt_lookalike_free(s, n);
    return 200;
}
