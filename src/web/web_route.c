/*
 * Receiving requests and dispatching them: MHD's handler gathers a request's body
 * (bounded in size and in time), then route() checks the Host on loopback and looks the
 * request up in one table of routes, each a method, a URL pattern, the checks it needs
 * (a writable server, a session, a form's token) and its handler: a page (web.h), the
 * JSON API (web_api.c), the files (web_media.c) or a route that writes (web_write.c).
 */
#include "base/util.h"
#include "web/web_frame.h"
#include "web/web_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_BODY = 16 * 1024,
};

/* One request: its body, gathered over several calls of the handler. */
struct req {
    struct vt_sb body;
    struct web_slow_job *slow; /* handed to a search thread (web_slow.c) */
};

/* ---- the pages (web.h) ---- */

/* The pages' web_args: a value of the request's query string. */
static const char *query_arg(void *conn, const char *key)
{
    return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
}

static const char *arg(const struct web_req *r, const char *key)
{
    return query_arg(r->c, key);
}

/* GET /: the library, a page of cards. */
static enum MHD_Result get_library(const struct web_req *r)
{
    struct web_args a = {query_arg, r->c};
    struct vt_sb b = {0};
    int status = web_page_library(r->lib, web_req_ctx(), &a, &b);

    return web_send_page(r->c, status, &b);
}

/* GET /v/ID/frames/N/similar: the frames that look like frame N. */
static enum MHD_Result get_similar(const struct web_req *r)
{
    struct vt_sb b = {0};
    int status = web_page_similar(r->lib, web_req_ctx(), r->id, r->num, arg(r, "limit"), &b);

    return web_send_page(r->c, status, &b);
}

/* GET /v/ID: the video's page. */
static enum MHD_Result get_video(const struct web_req *r)
{
    struct web_search_ask a = {arg(r, "q"), arg(r, "mode"), arg(r, "source"), arg(r, "video"),
                               arg(r, "channel")};
    struct vt_sb b = {0};
    int status = web_page_video(r->lib, web_req_ctx(), r->rest, arg(r, "t"), &a, arg(r, "frames"),
                                arg(r, "cues"), &b);

    return web_send_page(r->c, status, &b);
}

/* GET /search: a page of hits. */
static enum MHD_Result get_search(const struct web_req *r)
{
    struct web_args a = {query_arg, r->c};
    struct vt_sb b = {0};
    int status = web_page_search(r->lib, web_req_ctx(), &a, &b);

    return web_send_page(r->c, status, &b);
}

/* ---- the table ---- */

enum {
    R_GET = 1 << 0,    /* GET and HEAD */
    R_POST = 1 << 1,   /* POST */
    R_WRITE = 1 << 2,  /* a writable server's only: never in read-only mode */
    R_MANAGE = 1 << 3, /* a manage route: another method is a 405 naming the ones it takes */
    R_SIGNED = 1 << 4, /* signed in (or the bearer token) only, else a redirect to /login */
    R_FORM = 1 << 5,   /* a form that writes: url-encoded (415), and web_form_auth (403) */
    R_LIB = 1 << 6,    /* a write route that reads the library: its handle opened first */
    R_SLOW = 1 << 7,   /* may wait on a model server: run off the pool (web_slow.c) */
    R_SLOW_Q = 1 << 8, /* the same when the query string has a non-empty q (a search) */
};

struct route {
    /*
     * Literal bytes and segments (no '/') captured into the web_req: {id} is 1 to
     * VT_ID_MAX - 1 bytes, {vid} the same and a valid video id, {n} at most 15 bytes
     * (what the route checks itself), and a final * the rest of the URL, any length.
     */
    const char *pattern;
    unsigned flags;
    enum MHD_Result (*fn)(const struct web_req *r);
};

/*
 * Every route of the server. The write routes are looked at first, on a writable server
 * only; then any method but GET and HEAD is a 405, the files of web/ are served, and the
 * read routes are tried in this order (the first that matches answers).
 */
static const struct route routes[] = {
    {"/login", R_GET | R_WRITE | R_MANAGE, web_get_login},
    {"/login", R_POST | R_WRITE | R_MANAGE, web_post_login},
    {"/logout", R_POST | R_WRITE | R_MANAGE | R_FORM, web_post_logout},
    {"/manage/add", R_POST | R_WRITE | R_MANAGE | R_FORM, web_post_add},
    {"/queue", R_GET | R_WRITE | R_MANAGE | R_SIGNED | R_LIB, web_get_queue},
    {"/v/{id}/redo", R_POST | R_WRITE | R_MANAGE | R_FORM | R_LIB, web_post_redo},
    {"/v/{id}/retry", R_POST | R_WRITE | R_MANAGE | R_FORM | R_LIB, web_post_retry},
    {"/v/{id}/poster", R_POST | R_WRITE | R_MANAGE | R_FORM | R_LIB, web_post_poster},
    {"/v/{id}/remove", R_GET | R_WRITE | R_MANAGE | R_SIGNED | R_LIB, web_get_remove},
    {"/v/{id}/remove", R_POST | R_WRITE | R_MANAGE | R_FORM | R_LIB, web_post_remove},
    {"/api/videos", R_POST | R_WRITE | R_LIB, web_api_add},

    {"/", R_GET, get_library},
    {"/v/{id}/frames/{n}/similar", R_GET, get_similar},
    {"/api/videos/{id}/frames/{n}/similar", R_GET, web_api_similar},
    {"/v/*", R_GET | R_SLOW_Q, get_video},
    {"/search", R_GET | R_SLOW, get_search},
    {"/media/*", R_GET, web_get_media},
    {"/api/videos", R_GET, web_api_videos},
    {"/api/search", R_GET | R_SLOW, web_api_search},
    {"/api/videos/*", R_GET, web_api_video},
    {"/api/videos/{vid}/frames/*", R_GET, web_get_frame},
    {"/api/videos/{id}/captions.vtt", R_GET, web_api_captions},
    {"/api/videos/{id}/state", R_GET, web_api_state},
    {"/api/videos/{id}/storyboard", R_GET, web_api_storyboard},
    /* one page of a long list of the document (web_api.c's api_lists) */
    {"/api/videos/{vid}/shots", R_GET, web_api_shots},
    {"/api/videos/{vid}/frames", R_GET, web_api_frames},
    {"/api/videos/{vid}/cues", R_GET, web_api_cues},
    {"/api/videos/{vid}/chunks", R_GET, web_api_chunks},
};

/* url against a route's pattern, its segments captured into r: 1 when it matches. */
static int match(const char *pat, const char *url, struct web_req *r)
{
    while (*pat) {
        size_t n = strcspn(url, "/");

        if (!strncmp(pat, "{id}", 4) || !strncmp(pat, "{vid}", 5)) {
            if (!n || n >= sizeof(r->id))
                return 0;
            memcpy(r->id, url, n);
            r->id[n] = '\0';
            if (pat[1] == 'v' && !vt_id_valid(r->id))
                return 0;
            pat += pat[1] == 'v' ? 5 : 4;
        } else if (!strncmp(pat, "{n}", 3)) {
            if (n >= sizeof(r->num))
                return 0;
            memcpy(r->num, url, n);
            r->num[n] = '\0';
            pat += 3;
        } else if (*pat == '*') {
            r->rest = url;
            pat++;
        } else if (*pat++ == *url) {
            url++;
            continue;
        } else {
            return 0;
        }
        url += n;
    }
    return !*url;
}

/* ---- dispatch ---- */

/* Host is 127.0.0.1, localhost or [::1], with an optional :port. */
static int host_ok(const char *h)
{
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};

    if (!h)
        return 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t n = strlen(names[i]);
        const char *p = h + n;

        if (strncasecmp(h, names[i], n))
            continue;
        if (!*p)
            return 1;
        if (*p++ != ':' || !*p || strlen(p) > 5)
            return 0;
        for (; *p; p++)
            if (*p < '0' || *p > '9')
                return 0;
        return 1;
    }
    return 0;
}

static int is_get(const char *method)
{
    return !strcmp(method, "GET") || !strcmp(method, "HEAD");
}

/* A write route: its checks (flags), then the route itself. */
static enum MHD_Result run_write(const struct route *rt, struct web_req *r)
{
    if ((rt->flags & R_SIGNED) && !web_req_ctx()->signed_in && !web_token_ok(r->c))
        return web_send_redirect(r->c, "/login", NULL);
    if ((rt->flags & R_FORM) && !web_form_body(r->c))
        return web_send_error(r->c, 0, 415, "unsupported",
                              "a form is sent as application/x-www-form-urlencoded");
    if ((rt->flags & R_FORM) && !web_form_auth(r))
        return web_send_403(r->c);
    if (rt->flags & R_LIB) {
        r->lib = web_lib();
        if (!r->lib)
            return web_send_error(r->c, r->api, 500, "internal", "the library cannot be opened");
    }
    return rt->fn(r);
}

/*
 * The write routes, on a writable server: 1 with *ret set when the request is one of
 * them or names a manage route with another method (405), else 0.
 */
static int route_write(struct web_req *r, enum MHD_Result *ret)
{
    int get = is_get(r->method), post = !strcmp(r->method, "POST");
    unsigned takes = 0; /* the methods of the manage routes at this URL */

    for (size_t i = 0; i < VT_ARRAY_LEN(routes); i++) {
        const struct route *rt = &routes[i];

        if (!(rt->flags & R_WRITE) || !match(rt->pattern, r->url, r))
            continue;
        if (((rt->flags & R_GET) && get) || ((rt->flags & R_POST) && post)) {
            *ret = run_write(rt, r);
            return 1;
        }
        if (rt->flags & R_MANAGE)
            takes |= rt->flags & (R_GET | R_POST);
    }
    if (!takes)
        return 0;
    *ret = web_send_405_allow(r->c, takes == (R_GET | R_POST) ? "GET, HEAD, POST"
                                    : takes == R_GET          ? "GET, HEAD"
                                                              : "POST");
    return 1;
}

/* Whether rt, asked as r is, may wait on a model server (web_slow.c). */
static int is_slow(const struct route *rt, const struct web_req *r)
{
    const char *q;

    if (rt->flags & R_SLOW)
        return 1;
    q = rt->flags & R_SLOW_Q ? arg(r, "q") : NULL;
    return q && *q;
}

/* The read routes, after the files of web/: the first that matches answers (a slow one on
 * a search thread, its job into *slow). */
static enum MHD_Result route_read(struct web_req *r, struct web_slow_job **slow)
{
    struct web_file file;

    if (!is_get(r->method))
        return web_send_405(r->c, r->api);
    if (web_asset(r->url, &file))
        return web_send_asset(r->c, &file);
    /* every read route reads the library: without it none answers, a 404 included */
    r->lib = web_lib();
    if (!r->lib)
        return web_send_error(r->c, r->api, 500, "internal", "the library cannot be opened");
    for (size_t i = 0; i < VT_ARRAY_LEN(routes); i++)
        if (!(routes[i].flags & R_WRITE) && match(routes[i].pattern, r->url, r))
            return is_slow(&routes[i], r) ? web_slow_run(routes[i].fn, r, slow) : routes[i].fn(r);
    return web_send_error(r->c, r->api, 404, "not_found", "nothing here");
}

static enum MHD_Result route(struct MHD_Connection *c, const char *url, const char *method,
                             struct req *rq)
{
    struct web_req r = {.c = c, .url = url, .method = method, .body = &rq->body};
    struct web_ctx *ctx = web_req_ctx();
    enum MHD_Result ret;

    r.api = !strncmp(url, "/api/", 5) || !strcmp(url, "/api");
    web_req_ctx_reset();
    ctx->signed_in = !web_opts()->read_only && web_session_of(c, ctx->csrf, 0);
    if (web_loopback() &&
        !host_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)))
        return web_send_error(c, r.api, MHD_HTTP_MISDIRECTED_REQUEST, "misdirected",
                              "this server answers to 127.0.0.1, localhost or [::1] only");
    if (web_health_route(c, url, method, &ret))
        return ret;
    if (!web_opts()->read_only && route_write(&r, &ret))
        return ret;
    return route_read(&r, &rq->slow);
}

/* ---- receiving requests ---- */

static enum MHD_Result frame_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size)
{
    web_frame_field(cls, key, key_size, value, value_size);
    return MHD_YES;
}

/*
 * The request's head against RFC 9112's framing rules (web_frame.c), before its body is
 * read or it is answered: -1 after refusing it (the connection then closes), else 0.
 */
static int check_framing(struct MHD_Connection *c, const char *version)
{
    static const char *const status_line[] = {"400 Bad Request", "413 Content Too Large",
                                              "501 Not Implemented"};
    struct web_frame f;
    const char *why;
    int status;

    web_frame_init(&f);
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, frame_field, &f);
    status = web_frame_verdict(&f, strcmp(version, MHD_HTTP_VERSION_1_0) != 0, MAX_BODY, &why);
    if (!status)
        return 0;
    web_conn_refuse(c,
                    status_line[status == 413   ? 1
                                : status == 501 ? 2
                                                : 0],
                    status == 413   ? "too_large"
                    : status == 501 ? "not_implemented"
                                    : "bad_framing",
                    why);
    return -1;
}

enum MHD_Result web_handler(void *cls, struct MHD_Connection *c, const char *url,
                            const char *method, const char *version, const char *upload_data,
                            size_t *upload_data_size, void **con_cls)
{
    struct req *rq = *con_cls;
    double elapsed_s;

    if (rq && rq->slow) /* called again once the search thread has answered */
        return web_slow_answer(c, rq->slow);
    web_req_ctx_reset(); /* no page of this request shows what the last one's session had */
    if (web_conn_busy(c, &elapsed_s))
        return MHD_NO;
    /* MHD cannot answer in the middle of a body: a late one is the reaper's (408) */
    if ((!rq || !*upload_data_size) && elapsed_s > web_conn_limit_s(rq != NULL))
        return web_send_error(c, 1, MHD_HTTP_REQUEST_TIMEOUT, "timeout",
                              "the request took too long to arrive");
    if (!rq) {
        rq = calloc(1, sizeof(*rq));
        if (!rq)
            abort();
        *con_cls = rq;
        if (check_framing(c, version))
            return MHD_NO;
        return web_conn_wants_body(c);
    }
    if (*upload_data_size) {
        /* a chunked body has no length to refuse it by before it comes */
        if (rq->body.len + *upload_data_size > MAX_BODY)
            return web_conn_refuse(c, "413 Content Too Large", "too_large",
                                   "the request body is too large");
        vt_sb_add(&rq->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return web_conn_wants_body(c);
    }
    web_lib_clear_error();
    return route(c, url, method, rq);
}

/* The response is sent (or the request abandoned): idle until the next request's first byte. */
void web_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                   enum MHD_RequestTerminationCode toe)
{
    struct req *rq = *con_cls;

    if (rq) {
        web_slow_job_free(rq->slow);
        vt_sb_release(&rq->body);
        free(rq);
        *con_cls = NULL;
    }
    web_conn_idle(c);
}

/*
 * %XX decoding, except %00: it stays as it is so a NUL never shortens a path or a
 * value (the route then matches nothing). MHD has already turned '+' into ' ' in
 * query values.
 */
size_t web_unescape(void *cls, struct MHD_Connection *c, char *s)
{
    char *w = s;

    for (const char *r = s; *r;) {
        int hi, lo;

        if (r[0] == '%' && r[1] && r[2]) {
            hi = r[1] >= '0' && r[1] <= '9'   ? r[1] - '0'
                 : r[1] >= 'a' && r[1] <= 'f' ? r[1] - 'a' + 10
                 : r[1] >= 'A' && r[1] <= 'F' ? r[1] - 'A' + 10
                                              : -1;
            lo = r[2] >= '0' && r[2] <= '9'   ? r[2] - '0'
                 : r[2] >= 'a' && r[2] <= 'f' ? r[2] - 'a' + 10
                 : r[2] >= 'A' && r[2] <= 'F' ? r[2] - 'A' + 10
                                              : -1;
            if (hi >= 0 && lo >= 0 && (hi || lo)) {
                *w++ = (char)(hi * 16 + lo);
                r += 3;
                continue;
            }
        }
        *w++ = *r++;
    }
    *w = '\0';
    return (size_t)(w - s);
}
