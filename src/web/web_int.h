/*
 * What the page files of the web front-end (web_html.c, web_library.c, web_video.c,
 * web_similar.c, web_search.c) share, and nothing else includes: small formats and
 * the page's head and foot (web_html.c).
 */
#ifndef VT_WEB_INT_H
#define VT_WEB_INT_H

#include "web/web.h"

/* A member of a JSON object: its string (NULL if none), number (0), integer (0). */
const char *web_jstr(const json_t *o, const char *k);
double web_jnum(const json_t *o, const char *k);
long long web_jint(const json_t *o, const char *k);

/* "1:02:03" or "2:03" */
void web_put_time(struct vt_sb *b, double s);
/* A ?t= value that never lands before moment s: milliseconds rounded up, "9.067", "12". */
void web_put_t(struct vt_sb *b, double s);
/* "1,234" */
void web_put_count(struct vt_sb *b, long long v);
/* "2026-08-11T11:04:05Z" as "2026-08-11 11:04"; anything else escaped as it is. */
void web_put_date(struct vt_sb *b, const char *iso);
/* "3m 05s" */
void web_put_took(struct vt_sb *b, double s);
/* "1.2 MB" */
void web_put_bytes(struct vt_sb *b, long long v);
/* A time link: reads without JS (?t= reloads the page there), seeks with it. id may be
 * NULL (a link within the page). */
void web_put_time_link(struct vt_sb *b, const char *id, double t, const char *cls);
/* The frame's image, when it has one: 1, else 0 and nothing written. */
int web_put_frame_img(struct vt_sb *b, const char *id, const json_t *frame, const char *cls);

/*
 * Frame thumbnails: an <img> of the frame's small version (/api/videos/ID/frames/N.jpg
 * ?size=small, WEB_SMALL_W wide, written by the keyframe stage), with width and height
 * (no layout shift), loading="lazy" and decoding="async". Shown wider than half the small
 * version, a srcset offers the full frame to screens that need it. alt is escaped here.
 */
#define WEB_SMALL_W                                                                                \
    320 /* the keyframe stage's small width (VT_IMG_SMALL_W in lib/media/imgutil.h) */
struct web_thumb {
    int shown_w;       /* CSS pixels the page shows it at; 0: 160 */
    int width, height; /* the full frame's (the document's frames[].width/height); 0: 1280x720 */
    int eager;         /* the first picture of the page, in view at once: not lazy */
};
void web_put_frame_thumb(struct vt_sb *b, const char *id, long long frame_index, const char *cls,
                         const char *alt);
/* The same with options (opt may be NULL: the defaults above). */
void web_put_frame_thumb_opt(struct vt_sb *b, const char *id, long long frame_index,
                             const char *cls, const char *alt, const struct web_thumb *opt);

/*
 * The template web/NAME.html into b with the n variables (vt_tmpl_render; {{name}} values
 * escaped by web_html). A template that is missing or malformed is a defect of the build:
 * it aborts, so that any test that shows the page catches it.
 */
void web_render(struct vt_sb *b, const char *name, const struct vt_tmpl_var *v, size_t n);
#define WEB_RENDER(b, name, ...)                                                                   \
    web_render(b, name, (const struct vt_tmpl_var[]){__VA_ARGS__},                                 \
               sizeof((const struct vt_tmpl_var[]){__VA_ARGS__}) / sizeof(struct vt_tmpl_var))

/* The page's head up to <main>; refresh_s > 0 reloads the page (without JS). */
void web_head(struct vt_sb *b, const struct web_ctx *ctx, const char *title, const char *q,
              int refresh_s);
void web_foot(struct vt_sb *b);

/*
 * The controls that manage the library (web_manage.c), each empty unless the request is
 * signed in: the form that adds a URL or a server file (the library page); a video's
 * failures with their reasons and a retry button, redo of a stage and remove (the video
 * page; doc is its document). The header's "Sign in" link or "Sign out" button is
 * web_head's (web_html.c).
 */
void web_put_add_form(struct vt_sb *b, const struct web_ctx *ctx);
void web_put_video_actions(struct vt_sb *b, const struct web_ctx *ctx, const json_t *doc);
/* Signed in: a frame's button that makes it the poster of the video's card (POST
 * /v/ID/poster), or, is_poster, a word saying it is. Nothing otherwise. */
void web_put_poster_form(struct vt_sb *b, const struct web_ctx *ctx, const char *id, int frame,
                         int is_poster);

/* ---- chapters on the video page (web_chapters.c) ---- */

/* The seek bar under the player: the chapters of doc as segments of a video length s long
 * (links to their starts), a playhead, the storyboard preview's box (seekbar.js), and how
 * many chapters and how they were made. Nothing when length <= 0. */
void web_video_seekbar(struct vt_sb *b, const char *id, const json_t *doc, double length);
/* The headings to put before a transcript cue starting at cue_s: of the chapters of doc
 * starting after prev_s (the cue before it) and by cue_s; for the first cue of a page
 * (first), the heading of the chapter it is in. */
void web_transcript_chapters(struct vt_sb *b, const json_t *doc, double prev_s, double cue_s,
                             int first);

/* ---- the list pages (web_lists.c) ---- */

/* The small picture of a card or a hit: frame `frame` of video id. */
void web_put_list_img(struct vt_sb *b, const char *id, int frame);
/* A count from the query string: absent is dflt; else 1..max: 0, or -1. */
int web_arg_count(const char *s, long long dflt, long long max, long long *v);
/* Previous/next links and "Page N of M"; base is the page's URL without page= (raw). */
void web_put_pager(struct vt_sb *b, const char *base, long long page, long long pages);
/* "1 video", "1,234 videos" */
void web_put_counted(struct vt_sb *b, long long n, const char *one, const char *many);

#endif
