/*
 * What every page of the web front-end shares: escaping into HTML and URLs, the
 * video's document, small formats (times, counts, dates, sizes), time links and
 * frame images, and the page's head and foot. Every string that comes from a video
 * is escaped for where it goes; URLs are built only from validated ids and numbers,
 * or percent-encoded.
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

const char *web_jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

double web_jnum(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

long long web_jint(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);

    return json_is_integer(v) ? (long long)json_integer_value(v) : (long long)json_number_value(v);
}

/* ---- small formats ---- */

void web_put_time(struct vt_sb *b, double s)
{
    char buf[32];

    vt_fmt_duration(buf, sizeof(buf), s);
    vt_sb_adds(b, buf);
}

/*
 * The value of a ?t= link to moment s: seconds with milliseconds, rounded up ("9.067" for
 * 9.0666…, "12" for 12.0), so the link never lands before the moment it names (a slide
 * starting at 9.0667 s linked as 9 opened the previous shot). A thousandth of a second is
 * shorter than any moment (a frame, a word), so it never lands after it either. The
 * 1e-6 keeps a time stored as 9.067000000001 at 9.067.
 */
void web_put_t(struct vt_sb *b, double s)
{
    vt_sb_add_seek(b, s);
}

/* "1,234" */
void web_put_count(struct vt_sb *b, long long v)
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
void web_put_date(struct vt_sb *b, const char *iso)
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

void web_put_took(struct vt_sb *b, double s)
{
    long t = s > 0 && s < 1e9 ? lround(s) : 0;

    if (t >= 60)
        vt_sb_addf(b, "%ldm %02lds", t / 60, t % 60);
    else
        vt_sb_addf(b, "%lds", t);
}

void web_put_bytes(struct vt_sb *b, long long v)
{
    if (v >= 1000000)
        vt_sb_addf(b, "%.1f MB", v / 1e6);
    else if (v >= 1000)
        vt_sb_addf(b, "%.1f kB", v / 1e3);
    else
        vt_sb_addf(b, "%lld bytes", v < 0 ? 0 : v);
}

/* A time link: reads without JS (?t= reloads the page there), seeks with it. */
void web_put_time_link(struct vt_sb *b, const char *id, double t, const char *cls)
{
    vt_sb_adds(b, "<a class=\"");
    vt_sb_adds(b, cls);
    vt_sb_adds(b, "\" href=\"");
    if (id)
        vt_sb_addf(b, "/v/%s", id);
    vt_sb_adds(b, "?t=");
    web_put_t(b, t);
    vt_sb_adds(b, "\" data-t=\"");
    web_put_t(b, t);
    vt_sb_adds(b, "\">");
    web_put_time(b, t);
    vt_sb_adds(b, "</a>");
}

/* The frame's small image, when the frame has an image (img.frame is shown up to 320 px
 * wide: the full frame in its srcset for 2x screens; the strip's are small). */
int web_put_frame_img(struct vt_sb *b, const char *id, const json_t *frame, const char *cls)
{
    struct web_thumb opt = {.shown_w = strcmp(cls, "frame") ? 0 : 320,
                            .width = (int)web_jint(frame, "width"),
                            .height = (int)web_jint(frame, "height")};
    struct vt_sb alt = {0};

    if (!web_jstr(frame, "image") ||
        strcmp(web_jstr(frame, "state") ? web_jstr(frame, "state") : "", "done"))
        return 0;
    vt_sb_addf(&alt, "frame %lld at ", web_jint(frame, "index"));
    web_put_time(&alt, web_jnum(frame, "t_s"));
    web_put_frame_thumb_opt(b, id, web_jint(frame, "index"), cls, alt.buf, &opt);
    vt_sb_release(&alt);
    return 1;
}

void web_render(struct vt_sb *b, const char *name, const struct vt_tmpl_var *v, size_t n)
{
    const char *t;
    size_t len;

    if (!web_template(name, &t, &len) || vt_tmpl_render(b, t, len, v, n, web_html)) {
        fprintf(stderr, "vidtheque: the page template '%s' is missing or malformed\n", name);
        abort();
    }
}

/* The header's "Sign in" link or "Sign out" button (web/session.html): here, with the head
 * that shows it, so that web_manage.c uses the page files and they never use it. */
static void put_session(struct vt_sb *b, const struct web_ctx *ctx)
{
    if (ctx->read_only)
        return;
    WEB_RENDER(b, "session", {"signed_in", ctx->signed_in ? "1" : NULL}, {"csrf", ctx->csrf});
}

/*
 * The page up to its <main> (web/head.html): the skip link first (keyboard users jump past
 * the header), the brand, the search box ("/" focuses it, app.js), the demo notice and
 * the session's link or form. refresh_s > 0: the page reloads itself, without JS.
 */
void web_head(struct vt_sb *b, const struct web_ctx *ctx, const char *title, const char *q,
              int refresh_s)
{
    struct vt_sb session = {0};
    char refresh[16] = "";

    if (refresh_s > 0)
        snprintf(refresh, sizeof(refresh), "%d", refresh_s);
    put_session(&session, ctx);
    WEB_RENDER(b, "head", {"title", title}, {"q", q}, {"refresh", refresh},
               {"read_only", ctx->read_only ? "1" : NULL}, {"session", session.buf},
               {"icon_url", web_asset_url("/static/icon.svg")},
               {"css_url", web_asset_url("/static/app.css")},
               {"js_url", web_asset_url("/static/app.js")});
    vt_sb_release(&session);
}

void web_foot(struct vt_sb *b)
{
    web_render(b, "foot", NULL, 0);
}

int web_page_error(const struct web_ctx *ctx, int status, const char *msg, struct vt_sb *out)
{
    char t[16];

    snprintf(t, sizeof(t), "%d", status);
    web_head(out, ctx, t, NULL, 0);
    WEB_RENDER(out, "error", {"status", t}, {"message", msg});
    web_foot(out);
    return status;
}

/* ---- frame thumbnails: the small version at the size shown ---- */

/* The frame's URL; small: its small version (falls back to the image on the server). */
static void put_frame_url(struct vt_sb *b, const char *id, long long frame_index, int small)
{
    vt_sb_adds(b, "/api/videos/");
    web_html(b, id);
    vt_sb_addf(b, "/frames/%lld.jpg%s", frame_index, small ? "?size=small" : "");
}

void web_put_frame_thumb_opt(struct vt_sb *b, const char *id, long long frame_index,
                             const char *cls, const char *alt, const struct web_thumb *opt)
{
    int w = opt && opt->width > 0 ? opt->width : 1280,
        h = opt && opt->height > 0 ? opt->height : 720;
    int sw = w < WEB_SMALL_W ? w : WEB_SMALL_W, sh = (int)((long long)h * sw * 2 / w + 1) / 2;
    int shown_w = opt && opt->shown_w > 0 ? opt->shown_w : 160;

    vt_sb_adds(b, "<img class=\"");
    web_html(b, cls);
    vt_sb_adds(b, "\" src=\"");
    put_frame_url(b, id, frame_index, 1);
    /* the small version is sharp on a 2x screen up to half its width; shown larger, the
     * browser may take the full frame (sizes: the width it is shown at) */
    if (shown_w * 2 > sw && w > sw) {
        vt_sb_adds(b, "\" srcset=\"");
        put_frame_url(b, id, frame_index, 1);
        vt_sb_addf(b, " %dw, ", sw);
        put_frame_url(b, id, frame_index, 0);
        vt_sb_addf(b, " %dw\" sizes=\"%dpx", w, shown_w);
    }
    /* width and height: the box is reserved before the picture arrives (no layout shift) */
    vt_sb_addf(b, "\" width=\"%d\" height=\"%d\" alt=\"", sw, sh < 1 ? 1 : sh);
    web_html(b, alt);
    vt_sb_adds(b, opt && opt->eager ? "\" fetchpriority=\"high\" decoding=\"async\">"
                                    : "\" loading=\"lazy\" decoding=\"async\">");
}

void web_put_frame_thumb(struct vt_sb *b, const char *id, long long frame_index, const char *cls,
                         const char *alt)
{
    web_put_frame_thumb_opt(b, id, frame_index, cls, alt, NULL);
}
