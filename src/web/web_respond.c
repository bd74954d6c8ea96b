/*
 * The responses of the server. Every one goes through web_queue, which adds the headers
 * that harden it (Content-Security-Policy, nosniff, no referrer, no framing); errors are
 * JSON under /api and the error page elsewhere, and a 500 whose cause is the database out
 * of reach is sent as a 503 that a client may retry.
 */
#include "web/web_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static __thread struct web_held *tl_held;

void web_hold_responses(struct web_held *h)
{
    tl_held = h;
}

enum MHD_Result web_queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
    enum MHD_Result ret;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self'; media-src 'self'; "
                            "script-src 'self'; style-src 'self'; object-src 'none'; "
                            "frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    if (status == 503) /* busy or the database out of reach: both pass within seconds */
        MHD_add_response_header(r, "Retry-After", "5");
    if (tl_held) {
        if (tl_held->r)
            MHD_destroy_response(tl_held->r);
        tl_held->status = status;
        tl_held->r = r;
        return MHD_YES;
    }
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* Takes b's memory. */
enum MHD_Result web_send_buf(struct MHD_Connection *c, unsigned status, const char *type,
                             struct vt_sb *b)
{
    size_t len = b->len;
    char *body = vt_sb_detach(b);
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);

    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    if (status >= 400 || strncmp(type, "text/html", 9) == 0 ||
        strncmp(type, "application/json", 16) == 0)
        MHD_add_response_header(r, "Cache-Control", "no-store");
    return web_queue(c, status, r);
}

enum MHD_Result web_send_json(struct MHD_Connection *c, unsigned status, json_t *doc)
{
    struct vt_sb b = {0};
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

    json_decref(doc);
    if (!s)
        return MHD_NO;
    vt_sb_adds(&b, s);
    vt_sb_adds(&b, "\n");
    free(s);
    return web_send_buf(c, status, "application/json; charset=utf-8", &b);
}

static const char unavailable_msg[] = "the database is unavailable: try again in a moment";

enum MHD_Result web_send_error(struct MHD_Connection *c, int api, unsigned status, const char *code,
                               const char *msg)
{
    struct vt_sb b = {0};

    if (status == 500 && web_db_unavailable()) {
        status = 503;
        code = "unavailable";
        msg = unavailable_msg;
    }
    if (api) {
        json_t *e = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);

        if (!e)
            e = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", "bad request");
        return web_send_json(c, status, e);
    }
    web_page_error(web_req_ctx(), (int)status, msg, &b);
    return web_send_buf(c, status, "text/html; charset=utf-8", &b);
}

enum MHD_Result web_send_405(struct MHD_Connection *c, int api)
{
    struct vt_sb b = {0};
    struct MHD_Response *r;
    const char *msg =
        web_opts()->read_only ? "read-only demo: only GET and HEAD" : "method not allowed here";

    if (api) {
        char *s;
        json_t *e =
            json_pack("{s:{s:s, s:s}}", "error", "code",
                      web_opts()->read_only ? "read_only" : "method_not_allowed", "message", msg);

        s = json_dumps(e, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(e);
        vt_sb_adds(&b, s ? s : "{}");
        vt_sb_adds(&b, "\n");
        free(s);
    } else {
        web_page_error(web_req_ctx(), 405, msg, &b);
    }
    r = MHD_create_response_from_buffer(b.len, b.buf, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        vt_sb_release(&b);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type",
                            api ? "application/json; charset=utf-8" : "text/html; charset=utf-8");
    MHD_add_response_header(r, "Allow", "GET, HEAD");
    return web_queue(c, 405, r);
}

/* 303 to loc (a path we built), with a Set-Cookie when cookie is not NULL. */
enum MHD_Result web_send_redirect(struct MHD_Connection *c, const char *loc, const char *cookie)
{
    struct vt_sb b = {0};
    struct MHD_Response *r;

    vt_sb_adds(&b, "<!doctype html><title>See other</title><a href=\"");
    web_html(&b, loc);
    vt_sb_adds(&b, "\">Continue</a>\n");
    r = MHD_create_response_from_buffer(b.len, b.buf, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        vt_sb_release(&b);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "Location", loc);
    if (cookie)
        MHD_add_response_header(r, "Set-Cookie", cookie);
    return web_queue(c, 303, r);
}

enum MHD_Result web_send_page(struct MHD_Connection *c, int status, struct vt_sb *b)
{
    if (status == 500 && web_db_unavailable()) {
        vt_sb_release(b);
        return web_send_error(c, 0, 500, "internal", unavailable_msg);
    }
    return web_send_buf(c, (unsigned)status, "text/html; charset=utf-8", b);
}

/* 405 on a manage route, with the methods it takes. */
enum MHD_Result web_send_405_allow(struct MHD_Connection *c, const char *allow)
{
    struct vt_sb b = {0};
    struct MHD_Response *r;

    web_page_error(web_req_ctx(), 405, "method not allowed here", &b);
    r = MHD_create_response_from_buffer(b.len, b.buf, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        vt_sb_release(&b);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "Allow", allow);
    return web_queue(c, 405, r);
}

/* Whether an Accept-Encoding header takes gzip: a "gzip" (or "x-gzip", or "*") coding
 * without q=0 (RFC 9110 12.5.3); case-blind, spaces allowed. */
static int takes_gzip(const char *ae)
{
    while (ae && *ae) {
        const char *end = ae + strcspn(ae, ","), *semi;
        size_t n;

        ae += strspn(ae, " \t");
        semi = memchr(ae, ';', (size_t)(end - ae));
        n = (size_t)((semi ? semi : end) - ae);
        while (n && (ae[n - 1] == ' ' || ae[n - 1] == '\t'))
            n--;
        if ((n == 4 && !strncasecmp(ae, "gzip", 4)) || (n == 6 && !strncasecmp(ae, "x-gzip", 6)) ||
            (n == 1 && *ae == '*')) {
            const char *q = semi;

            /* q=0, q=0.0 ... refuse it; any other weight takes it */
            while (q && q < end && (q = memchr(q, '=', (size_t)(end - q))) != NULL) {
                if ((q[-1] == 'q' || q[-1] == 'Q') && strtod(q + 1, NULL) <= 0)
                    break;
                q++;
            }
            if (!q || q >= end)
                return 1;
        }
        ae = *end ? end + 1 : end;
    }
    return 0;
}

/*
 * A file of web/: gzip'ed (built so) when the client takes it, with Vary: Accept-Encoding
 * and an ETag of its own; a year in the browser's cache when asked for by its versioned URL
 * (?v= its version, web_asset_url), else revalidated each time (If-None-Match: 304).
 */
enum MHD_Result web_send_asset(struct MHD_Connection *c, const struct web_file *f)
{
    const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "v");
    int gz =
        f->gz && takes_gzip(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding"));
    const char *etag = gz ? f->etag_gz : f->etag;
    int fresh = inm && (strstr(inm, etag) || !strcmp(inm, "*"));
    size_t size = gz ? f->gz_size : f->size;
    struct MHD_Response *r = MHD_create_response_from_buffer(
        fresh ? 0 : size, (void *)(gz ? f->gz : f->data), MHD_RESPMEM_PERSISTENT);

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", f->type);
    if (gz)
        MHD_add_response_header(r, "Content-Encoding", "gzip");
    if (f->gz)
        MHD_add_response_header(r, "Vary", "Accept-Encoding");
    MHD_add_response_header(r, "Cache-Control",
                            v && !strcmp(v, f->version) ? "public, max-age=31536000, immutable"
                                                        : "no-cache");
    MHD_add_response_header(r, "ETag", etag);
    return web_queue(c, fresh ? 304 : 200, r);
}

/* The document of a video the client named (with those pages of its lists), or an error
 * response already queued. */
json_t *web_doc_or_error(struct MHD_Connection *c, struct vt_library *lib, const char *id,
                         const struct vt_doc_pages *pages, int api, enum MHD_Result *ret)
{
    json_t *doc;
    int rc;

    if (!vt_id_valid(id)) {
        *ret = web_send_error(c, api, 404, "not_found", "no such video");
        return NULL;
    }
    doc = web_video_doc(lib, id, pages, &rc);
    if (!doc) {
        if (rc == VT_ENOTFOUND || rc == VT_EINVAL) {
            *ret = web_send_error(c, api, 404, "not_found", "no such video");
        } else {
            web_log_error("%s", vt_errmsg(lib));
            *ret = web_send_error(c, api, 500, "internal", "the video cannot be read");
        }
    }
    return doc;
}
