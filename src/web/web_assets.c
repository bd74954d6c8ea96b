/*
 * The web front-end's files (web/: stylesheet, scripts, icons, the pages' HTML
 * templates), compiled into the
 * binary by the assembler's .incbin so nothing is installed beside it and the tree
 * holds them as real files. The Makefile makes this object depend on the files in web/.
 * Each file gets a NUL after it (the text ones are also used as C strings) that
 * is not counted in its size.
 *
 * The stylesheet, scripts and icon are also there gzip'ed, compressed once by the build
 * (VT_WEB_GZ, the Makefile's folder of them): a client that takes gzip gets those bytes,
 * and nothing is compressed while serving. Pages name them with their version, a hash of
 * their content (web_asset_url: /static/app.css?v=HASH), which a browser may keep for a
 * year; without it (or with another) they are revalidated by ETag.
 */
#include "web/web.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifndef VT_WEB_GZ
#error "VT_WEB_GZ: the folder of the gzip'ed web files (the Makefile says it)"
#endif

#define VT_INCBIN(sym, file)                                                                       \
    __asm__(".section .rodata." #sym ",\"a\",@progbits\n"                                          \
            ".global " #sym "\n"                                                                   \
            ".type " #sym ", @object\n"                                                            \
            ".balign 16\n" #sym ":\n"                                                              \
            ".incbin \"" file "\"\n"                                                               \
            ".global " #sym "_end\n" #sym "_end:\n"                                                \
            ".byte 0\n"                                                                            \
            ".previous\n");                                                                        \
    extern const unsigned char sym[], sym##_end[]

VT_INCBIN(vt_web_style_css, "web/style.css");
VT_INCBIN(vt_web_app_js, "web/app.js");
VT_INCBIN(vt_web_video_js, "web/video.js");
VT_INCBIN(vt_web_seekbar_js, "web/seekbar.js");
VT_INCBIN(vt_web_library_js, "web/library.js");
VT_INCBIN(vt_web_manage_js, "web/manage.js");
VT_INCBIN(vt_web_favicon_ico, "web/favicon.ico");
VT_INCBIN(vt_web_style_css_gz, VT_WEB_GZ "/style.css.gz");
VT_INCBIN(vt_web_app_js_gz, VT_WEB_GZ "/app.js.gz");
VT_INCBIN(vt_web_video_js_gz, VT_WEB_GZ "/video.js.gz");
VT_INCBIN(vt_web_seekbar_js_gz, VT_WEB_GZ "/seekbar.js.gz");
VT_INCBIN(vt_web_library_js_gz, VT_WEB_GZ "/library.js.gz");
VT_INCBIN(vt_web_manage_js_gz, VT_WEB_GZ "/manage.js.gz");
VT_INCBIN(vt_web_icon_svg_gz, VT_WEB_GZ "/icon.svg.gz");
VT_INCBIN(vt_web_icon_svg, "web/icon.svg");
VT_INCBIN(vt_web_head_html, "web/head.html");
VT_INCBIN(vt_web_foot_html, "web/foot.html");
VT_INCBIN(vt_web_error_html, "web/error.html");
VT_INCBIN(vt_web_session_html, "web/session.html");
VT_INCBIN(vt_web_login_html, "web/login.html");
VT_INCBIN(vt_web_add_form_html, "web/add-form.html");
VT_INCBIN(vt_web_search_hint_html, "web/search-hint.html");
VT_INCBIN(vt_web_library_empty_html, "web/library-empty.html");
VT_INCBIN(vt_web_hit_html, "web/hit.html");
VT_INCBIN(vt_web_card_html, "web/card.html");

#define ASSET(url, sym, type)                                                                      \
    {                                                                                              \
        url, type, sym, sym##_end, sym##_gz, sym##_gz_end                                          \
    }
#define ASSET_PLAIN(url, sym, type)                                                                \
    {                                                                                              \
        url, type, sym, sym##_end, NULL, NULL                                                      \
    }

static const struct {
    const char *url, *type;
    const unsigned char *start, *end;
    const unsigned char *gz, *gz_end; /* NULL: not compressed (already is: an .ico) */
} assets[] = {
    ASSET("/static/app.css", vt_web_style_css, "text/css; charset=utf-8"),
    ASSET("/static/app.js", vt_web_app_js, "text/javascript; charset=utf-8"),
    ASSET("/static/video.js", vt_web_video_js, "text/javascript; charset=utf-8"),
    ASSET("/static/seekbar.js", vt_web_seekbar_js, "text/javascript; charset=utf-8"),
    ASSET("/static/library.js", vt_web_library_js, "text/javascript; charset=utf-8"),
    ASSET("/static/manage.js", vt_web_manage_js, "text/javascript; charset=utf-8"),
    ASSET("/static/icon.svg", vt_web_icon_svg, "image/svg+xml"),
    ASSET_PLAIN("/favicon.ico", vt_web_favicon_ico, "image/x-icon"),
};
#define N_ASSETS (sizeof(assets) / sizeof(assets[0]))

/* Each asset's version (FNV-1a of its bytes, 16 hex digits) and its versioned URL, made
 * once: the bytes never change while the binary runs. */
static char versions[N_ASSETS][17];
static char urls[N_ASSETS][160];
static pthread_once_t versions_once = PTHREAD_ONCE_INIT;

static void versions_make(void)
{
    for (size_t i = 0; i < N_ASSETS; i++) {
        uint64_t h = 1469598103934665603ull;

        for (const unsigned char *p = assets[i].start; p < assets[i].end; p++)
            h = (h ^ *p) * 1099511628211ull;
        snprintf(versions[i], sizeof(versions[i]), "%016" PRIx64, h);
        snprintf(urls[i], sizeof(urls[i]), "%s?v=%s", assets[i].url, versions[i]);
    }
}

/* The pages' templates (vt_tmpl_render), by name; not served. */
static const struct {
    const char *name;
    const unsigned char *start, *end;
} templates[] = {
#define TEMPLATE(name, sym)                                                                        \
    {                                                                                              \
        name, sym, sym##_end                                                                       \
    }
    TEMPLATE("head", vt_web_head_html),
    TEMPLATE("foot", vt_web_foot_html),
    TEMPLATE("error", vt_web_error_html),
    TEMPLATE("session", vt_web_session_html),
    TEMPLATE("login", vt_web_login_html),
    TEMPLATE("add-form", vt_web_add_form_html),
    TEMPLATE("search-hint", vt_web_search_hint_html),
    TEMPLATE("library-empty", vt_web_library_empty_html),
    TEMPLATE("hit", vt_web_hit_html),
    TEMPLATE("card", vt_web_card_html),
#undef TEMPLATE
};

int web_template(const char *name, const char **text, size_t *size)
{
    for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
        if (strcmp(name, templates[i].name))
            continue;
        *text = (const char *)templates[i].start;
        *size = (size_t)(templates[i].end - templates[i].start);
        return 1;
    }
    return 0;
}

int web_asset(const char *url, struct web_file *out)
{
    pthread_once(&versions_once, versions_make);
    for (size_t i = 0; i < N_ASSETS; i++) {
        if (strcmp(url, assets[i].url))
            continue;
        out->type = assets[i].type;
        out->data = assets[i].start;
        out->size = (size_t)(assets[i].end - assets[i].start);
        out->gz = assets[i].gz;
        out->gz_size = assets[i].gz ? (size_t)(assets[i].gz_end - assets[i].gz) : 0;
        out->version = versions[i];
        snprintf(out->etag, sizeof(out->etag), "\"%s\"", versions[i]);
        snprintf(out->etag_gz, sizeof(out->etag_gz), "\"%s-gz\"", versions[i]);
        return 1;
    }
    return 0;
}

const char *web_asset_url(const char *url)
{
    pthread_once(&versions_once, versions_make);
    for (size_t i = 0; i < N_ASSETS; i++)
        if (!strcmp(url, assets[i].url))
            return urls[i];
    return url;
}
