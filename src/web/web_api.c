/*
 * The JSON API: the videos (GET /api/videos, a card's fields), a video's document with
 * the first page of each long list and the next pages of one list, its captions and
 * state, search, look-alike frames, and POST /api/videos (the bearer token: a server file
 * to register, indexed by the indexing thread). docs/API.md is its reference.
 */
#include "run/metrics.h"
#include "search/vecsearch.h"
#include "web/web_http.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The document without its long lists. */
static const struct vt_doc_pages no_lists = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};

static json_t *jstr(const char *s)
{
    json_t *j = json_string(s ? s : "");

    return j ? j : json_string("\xef\xbf\xbd");
}

static json_t *jsec(double s)
{
    return json_real(round(s * 1000) / 1000);
}

/* One video of GET /api/videos: the summary, and what a card shows (poster, progress). */
static int list_one(void *user, const struct vt_video_item *v)
{
    json_t *o = json_object();
    char added[32], poster[VT_ID_MAX + 48];

    json_object_set_new(o, "id", json_string(v->id));
    json_object_set_new(o, "title", jstr(v->title));
    json_object_set_new(o, "duration_s", jsec(v->duration_s));
    json_object_set_new(o, "index_state", jstr(v->index_state));
    json_object_set_new(o, "data_status", jstr(v->data_status));
    json_object_set_new(o, "channel", v->channel ? jstr(v->channel) : json_null());
    {
        time_t t = (time_t)v->added_at;
        struct tm tm;

        if (v->added_at > 0 && gmtime_r(&t, &tm) &&
            strftime(added, sizeof(added), "%Y-%m-%dT%H:%M:%SZ", &tm))
            json_object_set_new(o, "added_at", json_string(added));
        else
            json_object_set_new(o, "added_at", json_null());
    }
    json_object_set_new(o, "stages_total", json_integer(v->stages_total));
    json_object_set_new(o, "stages_finished", json_integer(v->stages_finished));
    json_object_set_new(o, "running", v->running ? jstr(v->running) : json_null());
    snprintf(poster, sizeof(poster), "/api/videos/%s/frames/%d.jpg", v->id, v->poster_frame);
    json_object_set_new(o, "poster", v->poster_frame >= 0 ? json_string(poster) : json_null());
    json_array_append_new(user, o);
    return 0;
}

/* A query number: absent is dflt, else decimal digits only, at most max. */
static int query_num(struct MHD_Connection *c, const char *key, long long dflt, long long max,
                     long long *v)
{
    const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
    size_t n = s ? strlen(s) : 0;

    *v = dflt;
    if (!s)
        return 0;
    if (!n || n > 12 || strspn(s, "0123456789") != n)
        return -1;
    *v = strtoll(s, NULL, 10);
    return *v > max ? -1 : 0;
}

/*
 * GET /api/videos[?state=S][&q=WORDS][&id=ID][&sort=SORT][&offset=O][&limit=L]: the videos, oldest
 * first by default, with the fields a card shows; total is how many pass the filters.
 */
enum MHD_Result web_api_videos(const struct web_req *r)
{
    struct MHD_Connection *c = r->c;
    struct vt_library *lib = r->lib;
    struct vt_list_opts o = {0};
    long long total = 0, limit;
    json_t *a;

    o.state = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "state");
    o.text = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "q");
    o.sort = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "sort");
    o.id = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "id");
    if (o.id && *o.id && !vt_id_valid(o.id))
        return web_send_error(c, 1, 400, "bad_request", "'id' is not a video id");
    if (o.state && *o.state && strcmp(o.state, "queued") && strcmp(o.state, "processing") &&
        strcmp(o.state, "ready") && strcmp(o.state, "failed"))
        return web_send_error(c, 1, 400, "bad_request",
                              "'state' is queued, processing, ready or failed");
    if (o.sort && *o.sort && strcmp(o.sort, "added") && strcmp(o.sort, "newest") &&
        strcmp(o.sort, "title") && strcmp(o.sort, "duration"))
        return web_send_error(c, 1, 400, "bad_request",
                              "'sort' is added, newest, title or duration");
    if ((o.text && strlen(o.text) > 200) || query_num(c, "offset", 0, 999999999999LL, &o.offset) ||
        query_num(c, "limit", -1, 100000, &limit) || limit == 0)
        return web_send_error(
            c, 1, 400, "bad_request",
            "'q' is at most 200 bytes, 'offset' a whole number, 'limit' 1..100000");
    o.limit = limit;
    a = json_array();
    if (vt_list_page(lib, &o, list_one, a, &total)) {
        json_decref(a);
        web_log_error("%s", vt_errmsg(lib));
        return web_send_error(c, 1, 500, "internal", "the library cannot be read");
    }
    return web_send_json(c, 200, json_pack("{s:o,s:I}", "videos", a, "total", (json_int_t)total));
}

/*
 * The longest page of each list an answer holds (the document's first page, or one page of
 * /api/videos/ID/LIST): a video with 150,000 cues is answered in pieces, never at once.
 */
static const struct {
    const char *name;
    long long max;
} api_lists[] = {{"shots", 1000}, {"frames", 200}, {"cues", 500}, {"chunks", 200}};

/* The page of list i in a vt_doc_pages (the four lists in api_lists' order). */
static struct vt_doc_page *page_of(struct vt_doc_pages *p, size_t i)
{
    struct vt_doc_page *all[] = {&p->shots, &p->frames, &p->cues, &p->chunks};

    return all[i];
}

/* GET /api/videos/ID: the document, with the first page of each long list. */
enum MHD_Result web_api_video(const struct web_req *r)
{
    struct MHD_Connection *c = r->c;
    struct vt_library *lib = r->lib;
    const char *id = r->rest;
    struct vt_doc_pages first = no_lists;
    struct vt_sb b = {0};
    char *s = NULL;
    int rc;

    if (!vt_id_valid(id))
        return web_send_error(c, 1, 404, "not_found", "no such video");
    for (size_t i = 0; i < (sizeof(api_lists) / sizeof(api_lists[0])); i++)
        page_of(&first, i)->limit = api_lists[i].max;
    if (web_opts()->read_only) {
        /* the same document without the server's path */
        enum MHD_Result ret = MHD_NO;
        json_t *doc = web_doc_or_error(c, lib, id, &first, 1, &ret);

        if (!doc)
            return ret;
        json_object_del(json_object_get(doc, "source"), "path");
        return web_send_json(c, 200, doc);
    }
    rc = vt_export_json_pages(lib, id, &first, &s);
    if (rc == VT_ENOTFOUND || rc == VT_EINVAL)
        return web_send_error(c, 1, 404, "not_found", "no such video");
    if (rc) {
        web_log_error("%s", vt_errmsg(lib));
        return web_send_error(c, 1, 500, "internal", "the video cannot be read");
    }
    vt_sb_adds(&b, s);
    free(s);
    if (b.len && b.buf[b.len - 1] != '\n')
        vt_sb_adds(&b, "\n");
    return web_send_buf(c, 200, "application/json; charset=utf-8", &b);
}

/* GET /api/videos/ID/LIST?offset=O&limit=L: one page of a long list of the document. */
static enum MHD_Result api_video_list(struct MHD_Connection *c, struct vt_library *lib,
                                      const char *id, size_t li)
{
    struct vt_doc_pages pages = no_lists;
    enum MHD_Result ret = MHD_NO;
    long long offset, limit, total;
    const char *name = api_lists[li].name;
    json_t *doc, *list, *page, *o;

    if (query_num(c, "offset", 0, 999999999999LL, &offset) ||
        query_num(c, "limit", api_lists[li].max, api_lists[li].max, &limit) || limit < 1) {
        char msg[96];

        snprintf(msg, sizeof(msg), "offset is a whole number and limit one from 1 to %lld",
                 api_lists[li].max);
        return web_send_error(c, 1, 400, "bad_request", msg);
    }
    page_of(&pages, li)->offset = offset;
    page_of(&pages, li)->limit = limit;
    doc = web_doc_or_error(c, lib, id, &pages, 1, &ret);
    if (!doc)
        return ret;
    list = json_incref(json_object_get(doc, name));
    page = json_object_get(json_object_get(doc, "pages"), name);
    total = page ? (long long)json_integer_value(json_object_get(page, "total"))
                 : offset + (long long)json_array_size(list);
    json_decref(doc);
    o = json_pack("{s:s,s:I,s:I,s:I,s:o}", "video_id", id, "offset", (json_int_t)offset, "limit",
                  (json_int_t)limit, "total", (json_int_t)total, name, list ? list : json_array());
    if (offset + limit < total) {
        char next[VT_ID_MAX + 96];

        snprintf(next, sizeof(next), "/api/videos/%s/%s?offset=%lld&limit=%lld", id, name,
                 offset + limit, limit);
        json_object_set_new(o, "next", json_string(next));
    } else {
        json_object_set_new(o, "next", json_null());
    }
    return web_send_json(c, 200, o);
}

/* GET /api/search?q=...: the hits (vt_hits_json). */
enum MHD_Result web_api_search(const struct web_req *r)
{
    struct MHD_Connection *c = r->c;
    struct vt_library *lib = r->lib;
    const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "q");
    const char *limit = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
    const char *video = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "video");
    const char *source = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "source");
    const char *mode = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mode");
    struct vt_search_opts opts = {0};
    struct vt_search_info info = {0};
    struct vt_hit *h = NULL;
    struct vt_sb b = {0};
    size_t n = 0;
    long long offset = 0;
    size_t skip = 0;
    double t0;
    int rc;
    char *s;

    if (!q)
        return web_send_error(c, 1, 400, "bad_request", "'q' is missing");
    if (strlen(q) > 1000)
        return web_send_error(c, 1, 400, "bad_request", "'q' is longer than 1000 bytes");
    if (limit) {
        char *end;
        long v = strtol(limit, &end, 10);

        if (*end || end == limit || v < 1 || v > 1000)
            return web_send_error(c, 1, 400, "bad_request", "'limit' wants 1..1000");
        opts.limit = (int)v;
    }
    /* a later page of the same order: the hits before it are searched and left out */
    if (query_num(c, "offset", 0, 999, &offset))
        return web_send_error(c, 1, 400, "bad_request", "'offset' wants 0..999");
    if (offset) {
        skip = (size_t)offset;
        opts.limit = (int)(offset + (opts.limit ? opts.limit : 20));
        if (opts.limit > 1000)
            opts.limit = 1000;
    }
    if (video) {
        if (!vt_id_valid(video))
            return web_send_error(c, 1, 400, "bad_request", "'video' is not a video id");
        opts.video = video;
    }
    if (source) {
        if (strcmp(source, "speech") && strcmp(source, "screen") && strcmp(source, "title"))
            return web_send_error(c, 1, 400, "bad_request", "'source' is speech, screen or title");
        opts.source = source;
    }
    if (mode && vt_search_mode_parse(mode, &opts.mode))
        return web_send_error(c, 1, 400, "bad_request", "'mode' is words, meaning or hybrid");
    t0 = vt_monotonic_s();
    rc = vt_search(lib, q, strlen(q), &opts, &h, &n, &info);
    vt_metrics_search(vt_monotonic_s() - t0);
    if (rc) {
        web_log_error("%s", vt_errmsg(lib));
        return web_send_error(c, 1, 500, "internal", "the search could not run");
    }
    s = vt_hits_json(q, &info, skip < n ? h + skip : NULL, skip < n ? n - skip : 0);
    vt_hits_free(h, n);
    if (!s)
        return MHD_NO;
    vt_sb_adds(&b, s);
    vt_sb_adds(&b, "\n");
    free(s);
    return web_send_buf(c, 200, "application/json; charset=utf-8", &b);
}

/* POST /api/videos {"path": FILE}: registered now, indexed by the indexing thread. */
enum MHD_Result web_api_add(const struct web_req *rq)
{
    struct MHD_Connection *c = rq->c;
    struct vt_library *lib = rq->lib;
    struct MHD_Response *r;
    json_error_t jerr;
    json_t *body, *out;
    const char *path;
    char id[VT_ID_MAX], loc[96];
    int is_new, rc;
    enum MHD_Result ret;

    if (!web_token_ok(c)) {
        struct vt_sb b = {0};

        vt_sb_adds(&b, "{\"error\": {\"code\": \"unauthorized\", \"message\": "
                       "\"'Authorization: Bearer TOKEN' is missing or wrong\"}}\n");
        r = MHD_create_response_from_buffer(b.len, b.buf, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            vt_sb_release(&b);
            return MHD_NO;
        }
        MHD_add_response_header(r, "Content-Type", "application/json; charset=utf-8");
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
        return web_queue(c, 401, r);
    }
    body = json_loadb(rq->body->buf ? rq->body->buf : "", rq->body->len, 0, &jerr);
    path = json_string_value(json_object_get(body, "path"));
    if (!path || !*path || strlen(path) >= PATH_MAX) {
        json_decref(body);
        return web_send_error(c, 1, 400, "bad_request", "the body is not {\"path\": \"FILE\"}");
    }
    rc = vt_add_file(lib, path, NULL, id, &is_new);
    if (rc) {
        unsigned st = rc == VT_ENOTFOUND ? 404 : rc == VT_EINVAL || rc == VT_EMEDIA ? 422 : 500;

        ret = web_send_error(c, 1, st, st == 500 ? "internal" : "cannot_add", vt_errmsg(lib));
        json_decref(body);
        return ret;
    }
    json_decref(body);
    if (!web_job_enqueue(WEB_DO_INDEX, id, NULL, NULL))
        return web_send_error(c, 1, 503, "busy", "too many videos waiting to be indexed");
    out = json_pack("{s:s, s:b, s:s}", "id", id, "new", is_new, "status", "queued");
    snprintf(loc, sizeof(loc), "/api/videos/%s", id);
    {
        struct vt_sb b = {0};
        char *s = json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

        json_decref(out);
        vt_sb_adds(&b, s ? s : "{}");
        vt_sb_adds(&b, "\n");
        free(s);
        r = MHD_create_response_from_buffer(b.len, b.buf, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            vt_sb_release(&b);
            return MHD_NO;
        }
    }
    MHD_add_response_header(r, "Content-Type", "application/json; charset=utf-8");
    MHD_add_response_header(r, "Location", loc);
    return web_queue(c, 202, r);
}

/* GET /api/videos/ID/frames/N/similar?limit=K: frames of the library that look alike. */
enum MHD_Result web_api_similar(const struct web_req *r)
{
    struct MHD_Connection *c = r->c;
    struct vt_library *lib = r->lib;
    const char *id = r->id, *frame = r->num;
    const char *limit = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
    struct vt_lookalike *s = NULL;
    struct vt_sb b = {0};
    size_t n = 0, digits = 0;
    long f = 0, k = 10;
    char err[512], *j;
    int rc;

    if (!vt_id_valid(id))
        return web_send_error(c, 1, 404, "not_found", "no such video");
    for (; frame[digits] >= '0' && frame[digits] <= '9'; digits++)
        f = f * 10 + (frame[digits] - '0');
    if (!digits || digits > 9 || frame[digits] || (digits > 1 && frame[0] == '0'))
        return web_send_error(c, 1, 400, "bad_request", "the frame is a number from 0");
    if (limit) {
        char *end;
        long v = strtol(limit, &end, 10);

        if (*end || end == limit || v < 1 || v > VT_SIMILAR_MAX)
            return web_send_error(c, 1, 400, "bad_request", "'limit' wants 1..100");
        k = v;
    }
    rc = vt_similar_frames(lib, id, (int)f, (int)k, &s, &n, err, sizeof(err));
    if (rc == VT_ENOTFOUND)
        return web_send_error(c, 1, 404, "not_found", err);
    if (rc == VT_EINVAL)
        return web_send_error(c, 1, 400, "bad_request", err);
    if (rc) {
        web_log_error("%s", err);
        return web_send_error(c, 1, 500, "internal", "the library cannot be read");
    }
    j = vt_lookalike_json(id, (int)f, s, n);
    vt_lookalike_free(s, n);
    vt_sb_adds(&b, j);
    vt_sb_adds(&b, "\n");
    free(j);
    return web_send_buf(c, 200, "application/json; charset=utf-8", &b);
}

/* /api/videos/ID/captions.vtt and /api/videos/ID/state: the video page's (web_video.c). */
static enum MHD_Result route_video_extra(struct MHD_Connection *c, struct vt_library *lib,
                                         const char *id, const char *what)
{
    struct vt_sb b = {0};
    int vtt = !strcmp(what, "captions.vtt");
    int status = vtt ? web_video_captions(lib, id, &b) : web_video_state(lib, id, &b);

    if (status == 200)
        return web_send_buf(
            c, 200, vtt ? "text/vtt; charset=utf-8" : "application/json; charset=utf-8", &b);
    vt_sb_release(&b);
    if (status == 404)
        return web_send_error(c, 1, 404, "not_found", "no such video");
    return web_send_error(c, 1, 500, "internal", "the video cannot be read");
}

/* GET /api/videos/ID/LIST for each long list, in api_lists' order. */
enum MHD_Result web_api_shots(const struct web_req *r)
{
    return api_video_list(r->c, r->lib, r->id, 0);
}

enum MHD_Result web_api_frames(const struct web_req *r)
{
    return api_video_list(r->c, r->lib, r->id, 1);
}

enum MHD_Result web_api_cues(const struct web_req *r)
{
    return api_video_list(r->c, r->lib, r->id, 2);
}

enum MHD_Result web_api_chunks(const struct web_req *r)
{
    return api_video_list(r->c, r->lib, r->id, 3);
}

enum MHD_Result web_api_captions(const struct web_req *r)
{
    return route_video_extra(r->c, r->lib, r->id, "captions.vtt");
}

enum MHD_Result web_api_state(const struct web_req *r)
{
    return route_video_extra(r->c, r->lib, r->id, "state");
}
