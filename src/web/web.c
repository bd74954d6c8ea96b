/*
 * The web server: libmicrohttpd with a small pool of threads, each with its own
 * library handle (a struct vt_library is single-threaded; SQLite in WAL mode keeps
 * each read consistent while `add` writes from another process). This file owns
 * the routes, the JSON API, media and frame files (with single HTTP ranges), the
 * write endpoint and its worker thread, and the hardening that applies to every
 * response: security headers, the Host check on loopback, bounded requests, and
 * file paths that never come from the client. The HTML is in web_html.c and web_library.c,
 * web_video.c, web_similar.c, web_search.c.
 */
#include "web/web.h"

#include "cli/cli.h"
#include "search/vecsearch.h"
#include "web/web_form.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/tcp.h> /* struct tcp_info with tcpi_bytes_received */
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    POOL_THREADS = 4,
    MAX_HANDLES = 64,
    MAX_BODY = 16 * 1024,
    MAX_QUEUE = 256,
    /* a connection with no traffic this long is closed (--idle-timeout) */
    IDLE_TIMEOUT_S = 10,
    MAX_CONNECTIONS = 800, /* --max-connections; below the usual 1024 file descriptors */
    MAX_PER_IP = 64,       /* --max-per-ip; loopback benchmarks raise it */
    /* each request's clock starts when the connection is accepted or, on keep-alive, at
     * the first byte after the previous response: its head must be in within
     * HEAD_TIMEOUT_S (--head-timeout) and the whole request, body included, within
     * REQUEST_DEADLINE_S (--deadline). A client trickling a header line now and then,
     * more often than the idle timeout, is cut all the same. */
    HEAD_TIMEOUT_S = 10,
    REQUEST_DEADLINE_S = 30,
    REAPER_TICK_MS = 250,
    /* the jobs the queue page shows once finished */
    JOB_HISTORY = 32,
    MAX_JOBS = MAX_QUEUE + 1 + JOB_HISTORY, /* waiting, running, finished */
    /* sign-in sessions kept in memory; when full, the one closest to expiry goes */
    MAX_SESSIONS = 64,
    SESSION_TTL_S = 12 * 3600,
};

/* What the indexing thread is asked to do. */
enum job_kind { JOB_INDEX, JOB_ADD, JOB_REDO, JOB_RETRY, JOB_REMOVE };

struct job {
    enum job_kind kind;
    char id[VT_ID_MAX]; /* the video; an add: the first it registered */
    char stage[32];     /* JOB_REDO */
    char *arg;          /* JOB_ADD: the path or URL; owned */
    int state;          /* WEB_JOB_* */
    size_t n_added;     /* JOB_ADD: videos registered */
    char error[512];    /* why it failed */
};

/*
 * Where a connection is, as the reaper sees it. IDLE: keep-alive between requests, no
 * byte of the next one yet (MHD's idle timeout applies); WAIT: a request has begun (the
 * connection is new, or bytes came after the last response) but its line is not in;
 * HEAD: the request line is in, the headers are coming; BODY: the head is in, the body
 * is coming; BUSY: the handler runs or the response is being sent (never cut by the
 * reaper: MHD's idle timeout covers a reader that stalls).
 */
enum conn_state { CONN_IDLE, CONN_WAIT, CONN_HEAD, CONN_BODY, CONN_BUSY };

/* One open connection, in srv.conns from MHD's "started" to its "closed" notification. */
struct conn {
    int fd;
    enum conn_state state;
    int cut;                /* shut down by us; MHD will notice and close it */
    uint64_t idle_rx_bytes; /* IDLE: bytes the kernel had received when it went idle */
    /* monotonic: when the current request's clock started (IDLE: the last response) */
    double t_ready_s;
    struct conn *prev, *next;
};

struct server {
    const struct web_opts *opts;
    struct web_ctx ctx;
    int loopback; /* bound to a loopback address: check Host */
    double head_timeout_s, deadline_s;
    unsigned max_connections;

    /* one library handle per request thread, closed when the daemon stops */
    pthread_mutex_t lock;
    struct vt_library *handles[MAX_HANDLES];
    size_t n_handles;

    /* every write is a job for this worker, one at a time (under lock): job number n (from
     * 1) is in jobs[(n - 1) % MAX_JOBS]; jobs next_run + 1 to next_no wait, next_run runs
     * or ran */
    pthread_t worker;
    int worker_started;
    pthread_cond_t wake;
    struct job jobs[MAX_JOBS];
    unsigned long next_no, next_run;
    int stopping;

    /* sign-in sessions (under sessions_lock); id[0] == '\0' is a free slot */
    pthread_mutex_t sessions_lock;
    struct session {
        char id[65], csrf[65];
        double expires_s; /* monotonic */
    } sessions[MAX_SESSIONS];

    /* every open connection, for the reaper (under conns_lock) */
    pthread_mutex_t conns_lock;
    pthread_cond_t reaper_wake;
    pthread_t reaper;
    int reaper_started, reaper_stop;
    struct conn *conns;
    size_t n_conns, n_cut;
    unsigned long n_timed_out, n_shed; /* for the log line at exit */
};

static struct server srv;
static __thread struct vt_library *tl_lib;
/* the last open of tl_lib failed because the database server could not be reached */
static __thread int tl_open_unavailable;
/* What the pages of the request this thread answers know (route() fills it). */
static __thread struct web_ctx tl_ctx;

/* One request: its body, gathered over several calls of the handler. */
struct req {
    struct vt_sb body;
};

static void on_log(void *user, int level, const char *msg)
{
    if (level <= VT_LOG_WARN)
        cli_error("%s", msg);
}

/* This thread's library handle, opened on first use. NULL after logging why. */
static struct vt_library *thread_lib(void)
{
    char err[1024];
    struct vt_callbacks cb = {on_log, NULL, NULL};

    if (tl_lib)
        return tl_lib;
    pthread_mutex_lock(&srv.lock);
    if (srv.n_handles < MAX_HANDLES) {
        tl_lib = vt_library_open(srv.opts->library_dir, srv.opts->read_only ? VT_OPEN_READ : 0, err,
                                 sizeof(err));
        if (tl_lib) {
            vt_library_set_callbacks(tl_lib, &cb);
            srv.handles[srv.n_handles++] = tl_lib;
        } else {
            cli_error("%s", err);
            /* vt_library_open returns no code: the message says (db_pg.c's wording) */
            tl_open_unavailable = strstr(err, "database unavailable") != NULL;
        }
    }
    pthread_mutex_unlock(&srv.lock);
    return tl_lib;
}

/* ---- responses ---- */

static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
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
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* Takes b's memory. */
static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, const char *type,
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
    return queue(c, status, r);
}

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, json_t *doc)
{
    struct vt_sb b = {0};
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

    json_decref(doc);
    if (!s)
        return MHD_NO;
    vt_sb_adds(&b, s);
    vt_sb_adds(&b, "\n");
    free(s);
    return send_buf(c, status, "application/json; charset=utf-8", &b);
}

/*
 * Whether this thread's last failure was the database server out of reach (PostgreSQL
 * down or restarting): such a 500 is sent as a 503, which a client may retry.
 */
static int db_unavailable(void)
{
    return tl_lib ? vt_errcode(tl_lib) == VT_EUNAVAIL : tl_open_unavailable;
}

static const char unavailable_msg[] = "the database is unavailable: try again in a moment";

static enum MHD_Result send_error(struct MHD_Connection *c, int api, unsigned status,
                                  const char *code, const char *msg)
{
    struct vt_sb b = {0};

    if (status == 500 && db_unavailable()) {
        status = 503;
        code = "unavailable";
        msg = unavailable_msg;
    }
    if (api) {
        json_t *e = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);

        if (!e)
            e = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", "bad request");
        return send_json(c, status, e);
    }
    web_page_error(&tl_ctx, (int)status, msg, &b);
    return send_buf(c, status, "text/html; charset=utf-8", &b);
}

static enum MHD_Result send_405(struct MHD_Connection *c, int api)
{
    struct vt_sb b = {0};
    struct MHD_Response *r;
    const char *msg =
        srv.opts->read_only ? "read-only demo: only GET and HEAD" : "method not allowed here";

    if (api) {
        char *s;
        json_t *e =
            json_pack("{s:{s:s, s:s}}", "error", "code",
                      srv.opts->read_only ? "read_only" : "method_not_allowed", "message", msg);

        s = json_dumps(e, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(e);
        vt_sb_adds(&b, s ? s : "{}");
        vt_sb_adds(&b, "\n");
        free(s);
    } else {
        web_page_error(&tl_ctx, 405, msg, &b);
    }
    r = MHD_create_response_from_buffer(b.len, b.buf, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        vt_sb_release(&b);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type",
                            api ? "application/json; charset=utf-8" : "text/html; charset=utf-8");
    MHD_add_response_header(r, "Allow", "GET, HEAD");
    return queue(c, 405, r);
}

/* ---- files: media and frames ---- */

/* A decimal uint64 of at most 20 digits; *over set when it does not fit. */
static const char *parse_u64(const char *p, uint64_t *v, int *over)
{
    const char *start = p;

    *v = 0;
    *over = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');

        if (*v > (UINT64_MAX - d) / 10)
            *over = 1;
        else
            *v = *v * 10 + d;
    }
    return p == start ? NULL : p;
}

enum { RANGE_NONE, RANGE_ONE, RANGE_BAD };

/*
 * The Range header against a file of size bytes. RANGE_NONE: serve the whole file
 * (no header, another unit, or several ranges: we answer those with 200 and the
 * whole file rather than multipart/byteranges). RANGE_ONE: *start and *len.
 * RANGE_BAD: 416 (malformed, first byte past the end, empty suffix).
 */
static int parse_range(const char *h, uint64_t size, uint64_t *start, uint64_t *len)
{
    uint64_t a, b;
    int over_a = 0, over_b = 0;
    const char *p;

    if (!h)
        return RANGE_NONE;
    while (*h == ' ' || *h == '\t')
        h++;
    if (strncmp(h, "bytes=", 6))
        return RANGE_NONE;
    h += 6;
    if (strchr(h, ','))
        return RANGE_NONE;
    while (*h == ' ' || *h == '\t')
        h++;
    if (*h == '-') {
        /* suffix: the last b bytes */
        p = parse_u64(h + 1, &b, &over_b);
        if (!p)
            return RANGE_BAD;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p || b == 0 || size == 0)
            return RANGE_BAD;
        if (over_b || b > size)
            b = size;
        *start = size - b;
        *len = b;
        return RANGE_ONE;
    }
    p = parse_u64(h, &a, &over_a);
    if (!p || *p != '-')
        return RANGE_BAD;
    p++;
    if (*p >= '0' && *p <= '9') {
        p = parse_u64(p, &b, &over_b);
        if (over_b)
            b = UINT64_MAX;
    } else {
        b = UINT64_MAX;
    }
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p || over_a || a > b || a >= size)
        return RANGE_BAD;
    if (b >= size)
        b = size - 1;
    *start = a;
    *len = b - a + 1;
    return RANGE_ONE;
}

static const char *media_type(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".mp4", "video/mp4"},       {".m4v", "video/mp4"},        {".mov", "video/quicktime"},
        {".webm", "video/webm"},     {".mkv", "video/x-matroska"}, {".ogv", "video/ogg"},
        {".ogg", "audio/ogg"},       {".mp3", "audio/mpeg"},       {".m4a", "audio/mp4"},
        {".wav", "audio/wav"},       {".flac", "audio/flac"},      {".ts", "video/mp2t"},
        {".avi", "video/x-msvideo"},
    };
    const char *dot = strrchr(path, '.');

    for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
        if (!strcasecmp(dot, types[i].ext))
            return types[i].type;
    return "application/octet-stream";
}

/*
 * Serve the regular file at path: ETag and Last-Modified, If-None-Match (304),
 * a single Range (206 / 416; If-Range with another tag serves the whole file).
 * HEAD gets the same headers without the body (libmicrohttpd drops it).
 */
static enum MHD_Result send_file(struct MHD_Connection *c, const char *path, const char *type,
                                 int immutable)
{
    struct MHD_Response *r;
    struct stat st;
    char etag[64], lm[64], cr[96];
    const char *range, *if_range, *inm;
    uint64_t start = 0, len, size;
    struct tm tm;
    int fd, kind;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return send_error(c, 1, 404, "not_found", "the file is missing");
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0) {
        close(fd);
        return send_error(c, 1, 404, "not_found", "the file is missing");
    }
    size = (uint64_t)st.st_size;
    len = size;
    snprintf(etag, sizeof(etag), "\"%" PRIx64 "-%" PRIx64 "-%lx\"", size,
             (uint64_t)st.st_mtim.tv_sec, (unsigned long)st.st_mtim.tv_nsec);
    gmtime_r(&st.st_mtim.tv_sec, &tm);
    strftime(lm, sizeof(lm), "%a, %d %b %Y %H:%M:%S GMT", &tm);

    inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range");
    if_range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-Range");
    if (inm && (!strcmp(inm, etag) || !strcmp(inm, "*"))) {
        close(fd);
        r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        MHD_add_response_header(r, "ETag", etag);
        return queue(c, 304, r);
    }
    if (if_range && strcmp(if_range, etag) && strcmp(if_range, lm))
        range = NULL;
    kind = parse_range(range, size, &start, &len);
    if (kind == RANGE_BAD) {
        struct vt_sb b = {0};

        close(fd);
        vt_sb_adds(&b, "{\"error\": {\"code\": \"range_not_satisfiable\", \"message\": "
                       "\"the range is not within the file\"}}\n");
        r = MHD_create_response_from_buffer(b.len, b.buf, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            vt_sb_release(&b);
            return MHD_NO;
        }
        snprintf(cr, sizeof(cr), "bytes */%" PRIu64, size);
        MHD_add_response_header(r, "Content-Range", cr);
        MHD_add_response_header(r, "Content-Type", "application/json; charset=utf-8");
        MHD_add_response_header(r, "Accept-Ranges", "bytes");
        return queue(c, MHD_HTTP_RANGE_NOT_SATISFIABLE, r);
    }
    /* takes fd, closes it when done */
    r = MHD_create_response_from_fd_at_offset64(len, fd, start);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Accept-Ranges", "bytes");
    MHD_add_response_header(r, "ETag", etag);
    MHD_add_response_header(r, "Last-Modified", lm);
    MHD_add_response_header(r, "Cache-Control", immutable ? "public, max-age=86400" : "no-cache");
    if (kind == RANGE_ONE) {
        snprintf(cr, sizeof(cr), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, start, start + len - 1,
                 size);
        MHD_add_response_header(r, "Content-Range", cr);
        return queue(c, MHD_HTTP_PARTIAL_CONTENT, r);
    }
    return queue(c, MHD_HTTP_OK, r);
}

/* The document of a video the client named (with those pages of its lists), or an error
 * response already queued. */
static json_t *doc_or_error(struct MHD_Connection *c, struct vt_library *lib, const char *id,
                            const struct vt_doc_pages *pages, int api, enum MHD_Result *ret)
{
    json_t *doc;
    int rc;

    if (!vt_id_valid(id)) {
        *ret = send_error(c, api, 404, "not_found", "no such video");
        return NULL;
    }
    doc = web_video_doc(lib, id, pages, &rc);
    if (!doc) {
        if (rc == VT_ENOTFOUND || rc == VT_EINVAL) {
            *ret = send_error(c, api, 404, "not_found", "no such video");
        } else {
            cli_error("%s", vt_errmsg(lib));
            *ret = send_error(c, api, 500, "internal", "the video cannot be read");
        }
    }
    return doc;
}

/* The document without its long lists: what a route that needs the source or state reads. */
static const struct vt_doc_pages no_lists = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};

static enum MHD_Result route_media(struct MHD_Connection *c, struct vt_library *lib, const char *id)
{
    enum MHD_Result ret = MHD_NO;
    json_t *doc = doc_or_error(c, lib, id, &no_lists, 1, &ret);
    const char *path;

    if (!doc)
        return ret;
    path = json_string_value(json_object_get(json_object_get(doc, "source"), "path"));
    if (!path || path[0] != '/')
        ret = send_error(c, 1, 404, "not_found", "this video has no local file");
    else
        ret = send_file(c, path, media_type(path), 0);
    json_decref(doc);
    return ret;
}

/* A library-relative image path as the document has it: no "..", not absolute. */
static int rel_path_ok(const char *p)
{
    if (!p || !*p || p[0] == '/' || strlen(p) > 512)
        return 0;
    for (const char *s = p; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.' || *s == '/'))
            return 0;
    return !strstr(p, "..") && !strstr(p, "//");
}

/*
 * /api/videos/ID/frames/N.jpg[?size=small|full]: the frame's image, or its small version
 * (what pages show). A frame without a small version (a library indexed before they were
 * written) is answered with its image: the server never writes into the library, so a
 * read-only library and a --read-only demo answer alike, and `redo --stage keyframe`
 * makes the small versions.
 */
static enum MHD_Result route_frame(struct MHD_Connection *c, struct vt_library *lib, const char *id,
                                   const char *file)
{
    enum MHD_Result ret = MHD_NO;
    struct vt_doc_pages one = no_lists;
    json_t *doc, *f;
    const char *img = NULL, *size = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "size");
    char path[PATH_MAX];
    long n = 0;
    size_t i, digits = 0;
    int small = size && !strcmp(size, "small");

    /* N.jpg, N a small decimal integer without sign or leading zeros */
    for (; file[digits] >= '0' && file[digits] <= '9'; digits++)
        n = n * 10 + (file[digits] - '0');
    if (!digits || digits > 6 || (digits > 1 && file[0] == '0') || strcmp(file + digits, ".jpg"))
        return send_error(c, 1, 404, "not_found", "no such frame");
    if (size && !small && strcmp(size, "full"))
        return send_error(c, 1, 400, "bad_request", "size is small or full");
    one.frames.offset = n; /* that frame alone */
    one.frames.limit = 1;
    doc = doc_or_error(c, lib, id, &one, 1, &ret);
    if (!doc)
        return ret;
    json_array_foreach(json_object_get(doc, "frames"), i, f)
    {
        if (json_integer_value(json_object_get(f, "index")) == n) {
            img = json_string_value(json_object_get(f, "image"));
            if (small && json_string_value(json_object_get(f, "image_small")))
                img = json_string_value(json_object_get(f, "image_small"));
            break;
        }
    }
    if (!rel_path_ok(img) ||
        (size_t)snprintf(path, sizeof(path), "%s/%s", vt_library_dir(lib), img) >= sizeof(path))
        ret = send_error(c, 1, 404, "not_found", "no such frame");
    else
        ret = send_file(c, path, "image/jpeg", 1);
    json_decref(doc);
    return ret;
}

/* ---- JSON API ---- */

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

static int query_num(struct MHD_Connection *c, const char *key, long long dflt, long long max,
                     long long *v);

/*
 * GET /api/videos[?state=S][&q=WORDS][&id=ID][&sort=SORT][&offset=O][&limit=L]: the videos, oldest
 * first by default, with the fields a card shows; total is how many pass the filters.
 */
static enum MHD_Result api_videos(struct MHD_Connection *c, struct vt_library *lib)
{
    struct vt_list_opts o = {0};
    long long total = 0, limit;
    json_t *a;

    o.state = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "state");
    o.text = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "q");
    o.sort = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "sort");
    o.id = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "id");
    if (o.id && *o.id && !vt_id_valid(o.id))
        return send_error(c, 1, 400, "bad_request", "'id' is not a video id");
    if (o.state && *o.state && strcmp(o.state, "queued") && strcmp(o.state, "processing") &&
        strcmp(o.state, "ready") && strcmp(o.state, "failed"))
        return send_error(c, 1, 400, "bad_request",
                          "'state' is queued, processing, ready or failed");
    if (o.sort && *o.sort && strcmp(o.sort, "added") && strcmp(o.sort, "newest") &&
        strcmp(o.sort, "title") && strcmp(o.sort, "duration"))
        return send_error(c, 1, 400, "bad_request", "'sort' is added, newest, title or duration");
    if ((o.text && strlen(o.text) > 200) || query_num(c, "offset", 0, 999999999999LL, &o.offset) ||
        query_num(c, "limit", -1, 100000, &limit) || limit == 0)
        return send_error(c, 1, 400, "bad_request",
                          "'q' is at most 200 bytes, 'offset' a whole number, 'limit' 1..100000");
    o.limit = limit;
    a = json_array();
    if (vt_list_page(lib, &o, list_one, a, &total)) {
        json_decref(a);
        cli_error("%s", vt_errmsg(lib));
        return send_error(c, 1, 500, "internal", "the library cannot be read");
    }
    return send_json(c, 200, json_pack("{s:o,s:I}", "videos", a, "total", (json_int_t)total));
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

static enum MHD_Result api_video(struct MHD_Connection *c, struct vt_library *lib, const char *id)
{
    struct vt_doc_pages first = no_lists;
    struct vt_sb b = {0};
    char *s = NULL;
    int rc;

    if (!vt_id_valid(id))
        return send_error(c, 1, 404, "not_found", "no such video");
    for (size_t i = 0; i < (sizeof(api_lists) / sizeof(api_lists[0])); i++)
        page_of(&first, i)->limit = api_lists[i].max;
    if (srv.opts->read_only) {
        /* the same document without the server's path */
        enum MHD_Result ret = MHD_NO;
        json_t *doc = doc_or_error(c, lib, id, &first, 1, &ret);

        if (!doc)
            return ret;
        json_object_del(json_object_get(doc, "source"), "path");
        return send_json(c, 200, doc);
    }
    rc = vt_export_json_pages(lib, id, &first, &s);
    if (rc == VT_ENOTFOUND || rc == VT_EINVAL)
        return send_error(c, 1, 404, "not_found", "no such video");
    if (rc) {
        cli_error("%s", vt_errmsg(lib));
        return send_error(c, 1, 500, "internal", "the video cannot be read");
    }
    vt_sb_adds(&b, s);
    free(s);
    if (b.len && b.buf[b.len - 1] != '\n')
        vt_sb_adds(&b, "\n");
    return send_buf(c, 200, "application/json; charset=utf-8", &b);
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
        return send_error(c, 1, 400, "bad_request", msg);
    }
    page_of(&pages, li)->offset = offset;
    page_of(&pages, li)->limit = limit;
    doc = doc_or_error(c, lib, id, &pages, 1, &ret);
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
    return send_json(c, 200, o);
}

static enum MHD_Result api_search(struct MHD_Connection *c, struct vt_library *lib)
{
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
    char *s;

    if (!q)
        return send_error(c, 1, 400, "bad_request", "'q' is missing");
    if (strlen(q) > 1000)
        return send_error(c, 1, 400, "bad_request", "'q' is longer than 1000 bytes");
    if (limit) {
        char *end;
        long v = strtol(limit, &end, 10);

        if (*end || end == limit || v < 1 || v > 1000)
            return send_error(c, 1, 400, "bad_request", "'limit' wants 1..1000");
        opts.limit = (int)v;
    }
    /* a later page of the same order: the hits before it are searched and left out */
    if (query_num(c, "offset", 0, 999, &offset))
        return send_error(c, 1, 400, "bad_request", "'offset' wants 0..999");
    if (offset) {
        skip = (size_t)offset;
        opts.limit = (int)(offset + (opts.limit ? opts.limit : 20));
        if (opts.limit > 1000)
            opts.limit = 1000;
    }
    if (video) {
        if (!vt_id_valid(video))
            return send_error(c, 1, 400, "bad_request", "'video' is not a video id");
        opts.video = video;
    }
    if (source) {
        if (strcmp(source, "speech") && strcmp(source, "screen") && strcmp(source, "title"))
            return send_error(c, 1, 400, "bad_request", "'source' is speech, screen or title");
        opts.source = source;
    }
    if (mode && vt_search_mode_parse(mode, &opts.mode))
        return send_error(c, 1, 400, "bad_request", "'mode' is words, meaning or hybrid");
    if (vt_search(lib, q, strlen(q), &opts, &h, &n, &info)) {
        cli_error("%s", vt_errmsg(lib));
        return send_error(c, 1, 500, "internal", "the search could not run");
    }
    s = vt_hits_json(q, &info, skip < n ? h + skip : NULL, skip < n ? n - skip : 0);
    vt_hits_free(h, n);
    if (!s)
        return MHD_NO;
    vt_sb_adds(&b, s);
    vt_sb_adds(&b, "\n");
    free(s);
    return send_buf(c, 200, "application/json; charset=utf-8", &b);
}

/* a and b equal, in time that depends on their lengths only (the lengths are not secret) */
static int secret_eq(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    unsigned char diff = 0;

    if (n != m)
        return 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

/* Constant-time comparison: the token's length is not secret, its bytes are. */
static int token_ok(struct MHD_Connection *c)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *tok = srv.opts->token;

    if (!auth || !tok || strncmp(auth, "Bearer ", 7))
        return 0;
    return secret_eq(auth + 7, tok);
}

/* ---- the indexing thread and its jobs ---- */

/*
 * Queue a job (arg copied): its number, or 0 when MAX_QUEUE jobs already wait. The slot
 * it takes held a job finished long ago (at most MAX_QUEUE wait and one runs).
 */
static unsigned long enqueue(enum job_kind kind, const char *id, const char *stage, const char *arg)
{
    unsigned long no = 0;

    pthread_mutex_lock(&srv.lock);
    if (srv.next_no - srv.next_run < MAX_QUEUE) {
        struct job *j = &srv.jobs[srv.next_no % MAX_JOBS];

        free(j->arg);
        memset(j, 0, sizeof(*j));
        j->kind = kind;
        snprintf(j->id, sizeof(j->id), "%s", id ? id : "");
        snprintf(j->stage, sizeof(j->stage), "%s", stage ? stage : "");
        j->arg = arg ? strdup(arg) : NULL;
        if (arg && !j->arg)
            abort();
        j->state = WEB_JOB_WAITING;
        no = ++srv.next_no; /* numbers start at 1 */
        pthread_cond_signal(&srv.wake);
    }
    pthread_mutex_unlock(&srv.lock);
    return no;
}

/* Job number no's slot (under lock). */
static struct job *job_at(unsigned long no)
{
    return &srv.jobs[(no - 1) % MAX_JOBS];
}

static enum MHD_Result api_add(struct MHD_Connection *c, struct vt_library *lib, struct req *rq)
{
    struct MHD_Response *r;
    json_error_t jerr;
    json_t *body, *out;
    const char *path;
    char id[VT_ID_MAX], loc[96];
    int is_new, rc;
    enum MHD_Result ret;

    if (!token_ok(c)) {
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
        return queue(c, 401, r);
    }
    body = json_loadb(rq->body.buf ? rq->body.buf : "", rq->body.len, 0, &jerr);
    path = json_string_value(json_object_get(body, "path"));
    if (!path || !*path || strlen(path) >= PATH_MAX) {
        json_decref(body);
        return send_error(c, 1, 400, "bad_request", "the body is not {\"path\": \"FILE\"}");
    }
    rc = vt_add_file(lib, path, NULL, id, &is_new);
    if (rc) {
        unsigned st = rc == VT_ENOTFOUND ? 404 : rc == VT_EINVAL || rc == VT_EMEDIA ? 422 : 500;

        ret = send_error(c, 1, st, st == 500 ? "internal" : "cannot_add", vt_errmsg(lib));
        json_decref(body);
        return ret;
    }
    json_decref(body);
    if (!enqueue(JOB_INDEX, id, NULL, NULL))
        return send_error(c, 1, 503, "busy", "too many videos waiting to be indexed");
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
    return queue(c, 202, r);
}

/* Job no failed for why, unless a reason was already given. */
static void job_failed(unsigned long no, const char *why)
{
    pthread_mutex_lock(&srv.lock);
    if (!job_at(no)->error[0])
        snprintf(job_at(no)->error, sizeof(job_at(no)->error), "%s", why);
    pthread_mutex_unlock(&srv.lock);
}

/* The videos an add registered, for the worker to index them. */
struct added {
    unsigned long no;
    char (*ids)[VT_ID_MAX];
    size_t n, cap;
};

static int on_added(void *user, const char *id, int is_new)
{
    struct added *a = user;

    (void)is_new;
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->ids = realloc(a->ids, a->cap * sizeof(*a->ids));
        if (!a->ids)
            abort();
    }
    snprintf(a->ids[a->n++], VT_ID_MAX, "%s", id);
    pthread_mutex_lock(&srv.lock);
    if (!job_at(a->no)->id[0])
        snprintf(job_at(a->no)->id, VT_ID_MAX, "%s", id);
    job_at(a->no)->n_added = a->n;
    pthread_mutex_unlock(&srv.lock);
    return 0;
}

/*
 * A URL (yt-dlp asks the network for its metadata: here, never in a request thread) or a
 * server file, then index what it registered. 0, or an error code with the message in lib.
 */
static int job_add(struct vt_library *lib, unsigned long no, const char *what)
{
    struct added a = {.no = no};
    int rc = 0;

    if (vt_is_url(what)) {
        rc = vt_add_url(lib, what, NULL, on_added, &a);
        if (rc)
            job_failed(no, vt_errmsg(lib)); /* the reason, before vt_process says another */
    } else {
        char id[VT_ID_MAX];
        int is_new;

        rc = vt_add_file(lib, what, NULL, id, &is_new);
        if (!rc)
            on_added(&a, id, is_new);
    }
    /* a URL that could not be read now is registered all the same, its fetch to be retried */
    for (size_t i = 0; i < a.n; i++) {
        int prc = vt_process(lib, a.ids[i]);

        if (prc && !rc)
            rc = prc;
    }
    free(a.ids);
    return rc;
}

/* A failed stage (for good, or queued again to be retried later) and its attempts. */
struct failed_stage {
    char name[32];
    long long attempts;
};

/* The video's failed stages into out (at most max): how many, or -1 (lib has why). */
static int failed_stages(struct vt_library *lib, const char *id, struct failed_stage *out,
                         size_t max)
{
    static const struct vt_doc_pages none = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
    json_t *doc, *s;
    size_t i, n = 0;
    int rc;

    doc = web_video_doc(lib, id, &none, &rc);
    if (!doc)
        return -1;
    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        const char *st = json_string_value(json_object_get(s, "state"));
        const char *name = json_string_value(json_object_get(s, "name"));

        if (!st || !name || n == max ||
            !(!strcmp(st, "failed") || (!strcmp(st, "queued") && json_object_get(s, "error") &&
                                        !json_is_null(json_object_get(s, "error")))))
            continue;
        snprintf(out[n].name, sizeof(out[n].name), "%s", name);
        out[n++].attempts = (long long)json_integer_value(json_object_get(s, "attempts"));
    }
    json_decref(doc);
    return (int)n;
}

/*
 * Retry: redo each stage that had failed (what `vidtheque redo` does), in pipeline order,
 * skipping one that an earlier redo already ran again (its attempts grew: it depended on
 * that stage). Nothing failed: the video's unfinished work is run (`resume` for one video).
 */
static int job_retry(struct vt_library *lib, const char *id)
{
    struct failed_stage before[32], now[32];
    int n = failed_stages(lib, id, before, 32), rc = 0;

    if (n < 0)
        return VT_EIO;
    if (!n)
        return vt_process(lib, id);
    for (int i = 0; i < n && !rc; i++) {
        int m = failed_stages(lib, id, now, 32), still = 0;

        for (int k = 0; k < m; k++)
            still |= !strcmp(now[k].name, before[i].name) && now[k].attempts == before[i].attempts;
        if (still)
            rc = vt_redo(lib, id, before[i].name);
    }
    return rc;
}

/*
 * After a job that indexed: VT_ESTATE with why when its video is left failed or partial
 * (a stage failed: the log said which, the video page says why), else 0.
 */
static int job_settled(struct vt_library *lib, unsigned long no)
{
    char id[VT_ID_MAX], state[16], data[16], why[VT_ID_MAX + 96];

    pthread_mutex_lock(&srv.lock);
    memcpy(id, job_at(no)->id, VT_ID_MAX);
    pthread_mutex_unlock(&srv.lock);

    if (!id[0] || vt_video_state(lib, id, state, data) || !strcmp(data, "ok"))
        return 0;
    snprintf(why, sizeof(why), "%s is %s with %s data: a stage failed (its page says why)", id,
             state, data);
    job_failed(no, why);
    return VT_ESTATE;
}

static int job_run(struct vt_library *lib, unsigned long no, const struct job *j)
{
    switch (j->kind) {
    case JOB_INDEX:
        return vt_process(lib, j->id);
    case JOB_ADD:
        return job_add(lib, no, j->arg);
    case JOB_REDO:
        return vt_redo(lib, j->id, j->stage);
    case JOB_RETRY:
        return job_retry(lib, j->id);
    case JOB_REMOVE:
        return vt_remove(lib, j->id);
    }
    return VT_EINVAL;
}

/* Runs the jobs one at a time, with its own handle: every write of the server is here. */
static void *worker_main(void *arg)
{
    struct vt_library *lib = arg;

    for (;;) {
        struct job j;
        char why[sizeof(j.error)];
        unsigned long no;
        int rc;

        pthread_mutex_lock(&srv.lock);
        while (srv.next_run == srv.next_no && !srv.stopping)
            pthread_cond_wait(&srv.wake, &srv.lock);
        if (srv.stopping) {
            pthread_mutex_unlock(&srv.lock);
            break;
        }
        no = ++srv.next_run;
        job_at(no)->state = WEB_JOB_RUNNING;
        j = *job_at(no);
        j.arg = j.arg ? strdup(j.arg) : NULL; /* the slot's stays for the queue page */
        pthread_mutex_unlock(&srv.lock);

        rc = job_run(lib, no, &j);
        free(j.arg);
        if (!rc && j.kind != JOB_REMOVE)
            rc = job_settled(lib, no);
        if (rc)
            job_failed(no, vt_errmsg(lib));
        pthread_mutex_lock(&srv.lock);
        job_at(no)->state = rc ? WEB_JOB_FAILED : WEB_JOB_DONE;
        memcpy(why, job_at(no)->error, sizeof(why));
        pthread_mutex_unlock(&srv.lock);
        if (rc)
            cli_error("%s", why);
    }
    vt_library_close(lib);
    return NULL;
}

/* ---- sign-in sessions and forms ---- */

static double now_s(void);

/* n random bytes as 2n hex digits into out (2n + 1 bytes): 0, or -1 when getrandom fails. */
static int random_hex(char *out, size_t n)
{
    unsigned char raw[32];
    size_t got = 0;

    if (n > sizeof(raw))
        abort();
    while (got < n) {
        ssize_t r = getrandom(raw + got, n - got, 0);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* A new session into id and csrf (65 bytes each): 0, or -1 without randomness. */
static int session_new(char *id, char *csrf)
{
    struct session *slot = NULL;
    double now = now_s();

    if (random_hex(id, 32) || random_hex(csrf, 32))
        return -1;
    pthread_mutex_lock(&srv.sessions_lock);
    for (size_t i = 0; i < MAX_SESSIONS; i++) {
        struct session *s = &srv.sessions[i];

        if (!s->id[0] || s->expires_s <= now) {
            slot = s;
            break;
        }
        if (!slot || s->expires_s < slot->expires_s)
            slot = s; /* full: the one closest to expiry makes room */
    }
    memcpy(slot->id, id, 65);
    memcpy(slot->csrf, csrf, 65);
    slot->expires_s = now + SESSION_TTL_S;
    pthread_mutex_unlock(&srv.sessions_lock);
    return 0;
}

/*
 * The request's live session: 1 with its CSRF token in csrf (65 bytes), else 0. Every
 * slot is compared, in constant time, so the time taken says nothing of the cookie.
 */
static int session_of(struct MHD_Connection *c, char *csrf, int drop)
{
    const char *cookie = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "vt_session");
    double now = now_s();
    int found = 0;

    if (!cookie || strlen(cookie) != 64 || strspn(cookie, "0123456789abcdef") != 64)
        return 0;
    pthread_mutex_lock(&srv.sessions_lock);
    for (size_t i = 0; i < MAX_SESSIONS; i++) {
        struct session *s = &srv.sessions[i];

        if (secret_eq(s->id, cookie) && s->expires_s > now && !found) {
            found = 1;
            memcpy(csrf, s->csrf, 65);
            if (drop)
                memset(s, 0, sizeof(*s));
        }
    }
    pthread_mutex_unlock(&srv.sessions_lock);
    return found;
}

/* Field name of the request's form body (web_form_get). */
static int form_get(const struct vt_sb *body, const char *name, char *out, size_t n)
{
    return web_form_get(body->buf, body->len, name, out, n);
}

/*
 * The request comes from a page of this server. Sec-Fetch-Site, when the browser sends it,
 * is same-origin; Origin, when sent, is this Host's, except "null": our pages'
 * Referrer-Policy: no-referrer makes a browser send "null" for their own form posts, so
 * "null" passes only when Sec-Fetch-Site vouches for the request. Clients that send
 * neither header (curl, old browsers) pass: the CSRF token still stands in their way.
 */
static int same_origin(struct MHD_Connection *c)
{
    const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);

    if (site && strcmp(site, "same-origin"))
        return 0;
    if (!origin)
        return 1;
    if (!strcmp(origin, "null"))
        return site != NULL;
    if (!host)
        return 0;
    if (!strncmp(origin, "http://", 7))
        origin += 7;
    else if (!strncmp(origin, "https://", 8))
        origin += 8;
    else
        return 0;
    return !strcasecmp(origin, host);
}

static int form_body(struct MHD_Connection *c)
{
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");

    return type && !strncasecmp(type, "application/x-www-form-urlencoded", 33) &&
           (!type[33] || type[33] == ';');
}

/*
 * Whether a form POST may write: the bearer token (an API client), or a live session
 * whose CSRF token is the form's csrf field, from a page of this server.
 */
static int form_auth(struct MHD_Connection *c, struct req *rq)
{
    char field[80];

    if (token_ok(c))
        return 1;
    return same_origin(c) && tl_ctx.signed_in &&
           form_get(&rq->body, "csrf", field, sizeof(field)) == 1 && secret_eq(field, tl_ctx.csrf);
}

/* 303 to loc (a path we built), with a Set-Cookie when cookie is not NULL. */
static enum MHD_Result send_redirect(struct MHD_Connection *c, const char *loc, const char *cookie)
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
    return queue(c, 303, r);
}

static enum MHD_Result send_page(struct MHD_Connection *c, int status, struct vt_sb *b)
{
    if (status == 500 && db_unavailable()) {
        vt_sb_release(b);
        return send_error(c, 0, 500, "internal", unavailable_msg);
    }
    return send_buf(c, (unsigned)status, "text/html; charset=utf-8", b);
}

/* 405 on a manage route, with the methods it takes. */
static enum MHD_Result send_405_allow(struct MHD_Connection *c, const char *allow)
{
    struct vt_sb b = {0};
    struct MHD_Response *r;

    web_page_error(&tl_ctx, 405, "method not allowed here", &b);
    r = MHD_create_response_from_buffer(b.len, b.buf, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        vt_sb_release(&b);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "Allow", allow);
    return queue(c, 405, r);
}

/*
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page
 * sends it), Path=/. Secure only behind a TLS proxy that says so (X-Forwarded-Proto: https):
 * this server speaks plain HTTP, and a browser drops a Secure cookie set over http (but
 * on localhost), so with Secure always on nobody could sign in to http://HOST:PORT.
 */
static void session_cookie(struct MHD_Connection *c, const char *id, char *out, size_t n)
{
    const char *proto = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Forwarded-Proto");

    snprintf(out, n, "vt_session=%s; HttpOnly; SameSite=Strict; Path=/; Max-Age=%d%s", id ? id : "",
             id ? SESSION_TTL_S : 0, proto && !strcasecmp(proto, "https") ? "; Secure" : "");
}

/* POST /login: the token from the form, never from the URL. */
static enum MHD_Result post_login(struct MHD_Connection *c, struct req *rq)
{
    struct vt_sb b = {0};
    char token[512], id[65], csrf[65], cookie[200];

    if (!same_origin(c))
        return send_page(
            c, web_page_login(&tl_ctx, 403, "this form was sent from another site", &b), &b);
    if (!form_body(c) || form_get(&rq->body, "token", token, sizeof(token)) != 1 ||
        !secret_eq(token, srv.opts->token)) {
        memset(token, 0, sizeof(token));
        return send_page(c, web_page_login(&tl_ctx, 403, "that is not the write token", &b), &b);
    }
    memset(token, 0, sizeof(token));
    if (session_new(id, csrf))
        return send_error(c, 0, 500, "internal", "no randomness for a session");
    session_cookie(c, id, cookie, sizeof(cookie));
    return send_redirect(c, "/", cookie);
}

/* A refused form: nothing was changed. */
static enum MHD_Result send_403(struct MHD_Connection *c)
{
    return send_error(c, 0, 403, "forbidden",
                      tl_ctx.signed_in ? "this form is stale or from another site: reload the "
                                         "page and send it again"
                                       : "sign in first (the link at the top of the page)");
}

/* The video named in a write route exists: 1, else a 404 (or 500) queued into *ret. */
static int video_exists(struct MHD_Connection *c, struct vt_library *lib, const char *id,
                        enum MHD_Result *ret)
{
    char state[16], data[16];
    int rc = vt_id_valid(id) ? vt_video_state(lib, id, state, data) : VT_ENOTFOUND;

    if (!rc)
        return 1;
    if (rc == VT_ENOTFOUND || rc == VT_EINVAL) {
        *ret = send_error(c, 0, 404, "not_found", "no such video");
    } else {
        cli_error("%s", vt_errmsg(lib));
        *ret = send_error(c, 0, 500, "internal", "the library cannot be read");
    }
    return 0;
}

/* 303 to the queue page at job no, or 503 when the queue is full. */
static enum MHD_Result queued(struct MHD_Connection *c, unsigned long no, const char *back)
{
    char loc[VT_ID_MAX + 64];

    if (!no)
        return send_error(c, 0, 503, "busy", "too many jobs wait for the indexer: try later");
    if (back)
        snprintf(loc, sizeof(loc), "%s", back);
    else
        snprintf(loc, sizeof(loc), "/queue?job=%lu#job-%lu", no, no);
    return send_redirect(c, loc, NULL);
}

/*
 * POST /manage/add: source is an http(s) URL or the absolute path of a regular file on
 * the server. Only checked here; the indexing thread registers it (a URL's yt-dlp call
 * included) and indexes it.
 */
static enum MHD_Result post_add(struct MHD_Connection *c, struct req *rq)
{
    char src[4200], msg[600];
    struct stat st;
    int got = form_get(&rq->body, "source", src, sizeof(src));

    if (got != 1 || !src[0])
        return send_error(c, 0, 400, "bad_request", "say what to add: a URL or a file's path");
    if (vt_is_url(src)) {
        if (strncasecmp(src, "http://", 7) && strncasecmp(src, "https://", 8))
            return send_error(c, 0, 400, "bad_request", "only http and https URLs are fetched");
        return queued(c, enqueue(JOB_ADD, NULL, NULL, src), NULL);
    }
    if (src[0] != '/') {
        snprintf(msg, sizeof(msg), "'%.500s': a file is named by its absolute path on the server",
                 src);
        return send_error(c, 0, 400, "bad_request", msg);
    }
    if (stat(src, &st)) {
        snprintf(msg, sizeof(msg), "'%.500s': no such file on the server", src);
        return send_error(c, 0, 404, "not_found", msg);
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(msg, sizeof(msg),
                 "'%.500s': not a regular file (a directory, device or pipe is refused)", src);
        return send_error(c, 0, 422, "cannot_add", msg);
    }
    return queued(c, enqueue(JOB_ADD, NULL, NULL, src), NULL);
}

/* POST /v/ID/redo, /v/ID/retry, /v/ID/remove. */
static enum MHD_Result post_video(struct MHD_Connection *c, struct vt_library *lib, struct req *rq,
                                  const char *id, const char *action)
{
    enum MHD_Result ret = MHD_NO;
    char back[VT_ID_MAX + 8], stage[40], yes[8];

    if (!video_exists(c, lib, id, &ret))
        return ret;
    snprintf(back, sizeof(back), "/v/%s", id);
    if (!strcmp(action, "redo")) {
        const char *const *names = vt_stage_names();
        int ok = 0;

        if (form_get(&rq->body, "stage", stage, sizeof(stage)) == 1)
            for (size_t i = 0; names[i]; i++)
                ok |= !strcmp(names[i], stage);
        if (!ok)
            return send_error(c, 0, 400, "bad_request", "stage is one of the pipeline's stages");
        return queued(c, enqueue(JOB_REDO, id, stage, NULL), back);
    }
    if (!strcmp(action, "retry"))
        return queued(c, enqueue(JOB_RETRY, id, NULL, NULL), back);
    /* remove: without confirm=yes (a form sent without JS), the confirmation page */
    if (form_get(&rq->body, "confirm", yes, sizeof(yes)) != 1 || strcmp(yes, "yes")) {
        struct vt_sb b = {0};

        return send_page(c, web_page_remove(lib, &tl_ctx, id, &b), &b);
    }
    return queued(c, enqueue(JOB_REMOVE, id, NULL, NULL), NULL);
}

/* "/v/ID/ACTION" with ACTION one of the write routes: the action, with the id into id. */
static const char *video_action(const char *url, char *id, size_t idlen)
{
    static const char *const actions[] = {"redo", "retry", "remove"};
    const char *p, *slash;

    if (strncmp(url, "/v/", 3))
        return NULL;
    p = url + 3;
    slash = strchr(p, '/');
    if (!slash || slash == p || (size_t)(slash - p) >= idlen)
        return NULL;
    for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
        if (strcmp(slash + 1, actions[i]))
            continue;
        memcpy(id, p, (size_t)(slash - p));
        id[slash - p] = '\0';
        return actions[i];
    }
    return NULL;
}

/* GET /queue: the indexing thread's jobs, newest first (signed in only: it shows paths). */
static enum MHD_Result get_queue(struct MHD_Connection *c)
{
    const char *job = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "job");
    struct web_job *v = calloc(MAX_JOBS, sizeof(*v));
    static const char *const what[] = {"index", "add", "redo", "retry", "remove"};
    struct vt_sb b = {0};
    size_t n = 0;
    int status;

    if (!v)
        abort();
    pthread_mutex_lock(&srv.lock);
    for (unsigned long no = srv.next_no; no >= 1 && n < MAX_JOBS; no--, n++) {
        const struct job *j = job_at(no);

        v[n].no = no;
        v[n].what = what[j->kind];
        snprintf(v[n].arg, sizeof(v[n].arg), "%s", j->arg ? j->arg : j->stage);
        memcpy(v[n].id, j->id, VT_ID_MAX);
        v[n].state = j->state;
        v[n].n_added = j->n_added;
        memcpy(v[n].error, j->error, sizeof(v[n].error));
    }
    pthread_mutex_unlock(&srv.lock);
    status = web_page_queue(&tl_ctx, v, n, job ? strtoul(job, NULL, 10) : 0, &b);
    free(v);
    return send_page(c, status, &b);
}

/*
 * The routes that manage the library on a writable server: 1 with *ret set when url is one
 * of them, else 0. Every POST is a form checked by form_auth (403 changes nothing).
 */
static int route_manage(struct MHD_Connection *c, const char *url, const char *method,
                        struct req *rq, enum MHD_Result *ret)
{
    int post = !strcmp(method, "POST");
    struct vt_library *lib;
    struct vt_sb b = {0};
    const char *action;
    char id[VT_ID_MAX], cookie[200];

    if (!strcmp(url, "/login")) {
        if (post)
            *ret = post_login(c, rq);
        else if (!strcmp(method, "GET") || !strcmp(method, "HEAD"))
            *ret = send_page(c, web_page_login(&tl_ctx, 200, NULL, &b), &b);
        else
            *ret = send_405_allow(c, "GET, HEAD, POST");
        return 1;
    }
    action = video_action(url, id, sizeof(id));
    if (!action && strcmp(url, "/logout") && strcmp(url, "/manage/add") && strcmp(url, "/queue"))
        return 0;
    if ((!strcmp(method, "GET") || !strcmp(method, "HEAD")) &&
        (!strcmp(url, "/queue") || (action && !strcmp(action, "remove")))) {
        /* pages that show paths or lead to a write: signed in only */
        if (!tl_ctx.signed_in && !token_ok(c))
            *ret = send_redirect(c, "/login", NULL);
        else if (action)
            *ret = (lib = thread_lib())
                       ? send_page(c, web_page_remove(lib, &tl_ctx, id, &b), &b)
                       : send_error(c, 0, 500, "internal", "the library cannot be opened");
        else
            *ret = get_queue(c);
        return 1;
    }
    if (!post || !strcmp(url, "/queue")) {
        *ret = send_405_allow(c, !strcmp(url, "/queue")                ? "GET, HEAD"
                                 : action && !strcmp(action, "remove") ? "GET, HEAD, POST"
                                                                       : "POST");
        return 1;
    }
    if (!form_body(c)) {
        *ret = send_error(c, 0, 415, "unsupported",
                          "a form is sent as application/x-www-form-urlencoded");
        return 1;
    }
    if (!form_auth(c, rq)) {
        *ret = send_403(c);
        return 1;
    }
    if (!strcmp(url, "/logout")) {
        char csrf[65];

        session_of(c, csrf, 1);
        session_cookie(c, NULL, cookie, sizeof(cookie));
        *ret = send_redirect(c, "/", cookie);
        return 1;
    }
    if (!strcmp(url, "/manage/add")) {
        *ret = post_add(c, rq);
        return 1;
    }
    lib = thread_lib();
    *ret = lib ? post_video(c, lib, rq, id, action)
               : send_error(c, 0, 500, "internal", "the library cannot be opened");
    return 1;
}

/* ---- routing ---- */

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

/* "/v/ID" style: the rest of url after prefix when it has no further '/'. */
static const char *after(const char *url, const char *prefix)
{
    size_t n = strlen(prefix);

    if (strncmp(url, prefix, n) || strchr(url + n, '/'))
        return NULL;
    return url + n;
}

/* A file of web/ (web_assets.c): revalidated by its ETag, so a page costs a 304. */
static enum MHD_Result send_asset(struct MHD_Connection *c, const struct web_file *f)
{
    const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    int fresh = inm && !strcmp(inm, f->etag);
    struct MHD_Response *r = MHD_create_response_from_buffer(fresh ? 0 : f->size, (void *)f->data,
                                                             MHD_RESPMEM_PERSISTENT);

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", f->type);
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    MHD_add_response_header(r, "ETag", f->etag);
    return queue(c, fresh ? 304 : 200, r);
}

/*
 * "ID/frames/N/similar": the id into id, and N (as received, validated by the caller) in
 * a thread-local buffer returned; NULL when p is not of that shape.
 */
static const char *similar_path(const char *p, char *id, size_t idlen)
{
    static _Thread_local char num[16];
    const char *slash = strchr(p, '/'), *f, *e;
    size_t n = slash ? (size_t)(slash - p) : 0;

    if (!n || n >= idlen || strncmp(slash, "/frames/", 8))
        return NULL;
    f = slash + 8;
    e = strchr(f, '/');
    if (!e || strcmp(e, "/similar") || (size_t)(e - f) >= sizeof(num))
        return NULL;
    memcpy(id, p, n);
    id[n] = '\0';
    memcpy(num, f, (size_t)(e - f));
    num[e - f] = '\0';
    return num;
}

/* GET /api/videos/ID/frames/N/similar?limit=K: frames of the library that look alike. */
static enum MHD_Result api_similar(struct MHD_Connection *c, struct vt_library *lib, const char *id,
                                   const char *frame)
{
    const char *limit = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
    struct vt_lookalike *s = NULL;
    struct vt_sb b = {0};
    size_t n = 0, digits = 0;
    long f = 0, k = 10;
    char err[512], *j;
    int rc;

    if (!vt_id_valid(id))
        return send_error(c, 1, 404, "not_found", "no such video");
    for (; frame[digits] >= '0' && frame[digits] <= '9'; digits++)
        f = f * 10 + (frame[digits] - '0');
    if (!digits || digits > 9 || frame[digits] || (digits > 1 && frame[0] == '0'))
        return send_error(c, 1, 400, "bad_request", "the frame is a number from 0");
    if (limit) {
        char *end;
        long v = strtol(limit, &end, 10);

        if (*end || end == limit || v < 1 || v > VT_SIMILAR_MAX)
            return send_error(c, 1, 400, "bad_request", "'limit' wants 1..100");
        k = v;
    }
    rc = vt_similar_frames(lib, id, (int)f, (int)k, &s, &n, err, sizeof(err));
    if (rc == VT_ENOTFOUND)
        return send_error(c, 1, 404, "not_found", err);
    if (rc == VT_EINVAL)
        return send_error(c, 1, 400, "bad_request", err);
    if (rc) {
        cli_error("%s", err);
        return send_error(c, 1, 500, "internal", "the library cannot be read");
    }
    j = vt_lookalike_json(id, (int)f, s, n);
    vt_lookalike_free(s, n);
    vt_sb_adds(&b, j);
    vt_sb_adds(&b, "\n");
    free(j);
    return send_buf(c, 200, "application/json; charset=utf-8", &b);
}

static enum MHD_Result route_video_extra(struct MHD_Connection *c, struct vt_library *lib,
                                         const char *id, const char *what);

/* The pages' web_args: a value of the request's query string. */
static const char *query_arg(void *conn, const char *key)
{
    return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
}

static enum MHD_Result route(struct MHD_Connection *c, const char *url, const char *method,
                             struct req *rq)
{
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    int api = !strncmp(url, "/api/", 5) || !strcmp(url, "/api");
    struct vt_library *lib;
    struct vt_sb b = {0};
    const char *rest;
    char id[VT_ID_MAX];
    struct web_file file;
    enum MHD_Result ret;
    int status;

    tl_ctx = srv.ctx;
    tl_ctx.signed_in = !srv.opts->read_only && session_of(c, tl_ctx.csrf, 0);
    if (srv.loopback &&
        !host_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)))
        return send_error(c, api, MHD_HTTP_MISDIRECTED_REQUEST, "misdirected",
                          "this server answers to 127.0.0.1, localhost or [::1] only");
    if (!srv.opts->read_only && route_manage(c, url, method, rq, &ret))
        return ret;
    if (!strcmp(url, "/api/videos") && !strcmp(method, "POST") && !srv.opts->read_only) {
        lib = thread_lib();
        if (!lib)
            return send_error(c, 1, 500, "internal", "the library cannot be opened");
        return api_add(c, lib, rq);
    }
    if (!get)
        return send_405(c, api);
    if (web_asset(url, &file))
        return send_asset(c, &file);
    lib = thread_lib();
    if (!lib)
        return send_error(c, api, 500, "internal", "the library cannot be opened");
    if (!strcmp(url, "/")) {
        struct web_args a = {query_arg, c};

        status = web_page_library(lib, &tl_ctx, &a, &b);
        return send_page(c, status, &b);
    }
    if (!strncmp(url, "/v/", 3) && (rest = similar_path(url + 3, id, sizeof(id)))) {
        status =
            web_page_similar(lib, &tl_ctx, id, rest,
                             MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit"), &b);
        return send_page(c, status, &b);
    }
    if (!strncmp(url, "/api/videos/", 12) && (rest = similar_path(url + 12, id, sizeof(id))))
        return api_similar(c, lib, id, rest);
    if ((rest = after(url, "/v/"))) {
        status = web_page_video(lib, &tl_ctx, rest,
                                MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "t"),
                                MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "q"),
                                MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "frames"),
                                MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cues"), &b);
        return send_page(c, status, &b);
    }
    if (!strcmp(url, "/search")) {
        struct web_args a = {query_arg, c};

        status = web_page_search(lib, &tl_ctx, &a, &b);
        return send_page(c, status, &b);
    }
    if ((rest = after(url, "/media/")))
        return route_media(c, lib, rest);
    if (!strcmp(url, "/api/videos"))
        return api_videos(c, lib);
    if (!strcmp(url, "/api/search"))
        return api_search(c, lib);
    if ((rest = after(url, "/api/videos/")))
        return api_video(c, lib, rest);
    if (!strncmp(url, "/api/videos/", 12)) {
        /* /api/videos/ID/frames/N.jpg */
        const char *p = url + 12, *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : 0;

        if (n && n < sizeof(id) && !strncmp(slash, "/frames/", 8) && !strchr(slash + 8, '/')) {
            memcpy(id, p, n);
            id[n] = '\0';
            if (vt_id_valid(id))
                return route_frame(c, lib, id, slash + 8);
        }
        if (n && n < sizeof(id) && (!strcmp(slash, "/captions.vtt") || !strcmp(slash, "/state"))) {
            memcpy(id, p, n);
            id[n] = '\0';
            return route_video_extra(c, lib, id, slash + 1);
        }
        /* /api/videos/ID/cues (shots, frames, chunks): one page of that list */
        for (size_t i = 0; n && n < sizeof(id) && i < (sizeof(api_lists) / sizeof(api_lists[0]));
             i++) {
            if (strcmp(slash + 1, api_lists[i].name))
                continue;
            memcpy(id, p, n);
            id[n] = '\0';
            if (vt_id_valid(id))
                return api_video_list(c, lib, id, i);
        }
    }
    return send_error(c, api, 404, "not_found", "nothing here");
}

/* ---- connections: per-request deadlines and the connection budget ---- */

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci ? ci->socket_context : NULL;
}

/*
 * Written by the reaper itself, on a connection that is only being read (its handler
 * has not run), so it never mixes with a response of MHD's. Made once by web_serve.
 */
struct canned {
    char text[512];
    size_t len;
};
static struct canned reply_408, reply_503;

static void canned_init(struct canned *r, const char *status, const char *code, const char *msg)
{
    char body[256];
    int n = snprintf(body, sizeof(body), "{\"error\": {\"code\": \"%s\", \"message\": \"%s\"}}\n",
                     code, msg);

    n = snprintf(r->text, sizeof(r->text),
                 "HTTP/1.1 %s\r\nConnection: close\r\nContent-Type: application/json; "
                 "charset=utf-8\r\nCache-Control: no-store\r\nX-Content-Type-Options: "
                 "nosniff\r\nContent-Length: %d\r\n\r\n%s",
                 status, n, body);
    r->len = n > 0 && (size_t)n < sizeof(r->text) ? (size_t)n : 0;
}

/*
 * Shut k's socket down (MHD then reads the end of the stream and closes it), after
 * telling the client why unless it is idle between requests. Under conns_lock: the fd
 * stays open until MHD's "closed" notification, which takes the lock.
 */
static void conn_cut_locked(struct conn *k, const struct canned *reply)
{
    if (k->state != CONN_IDLE)
        (void)send(k->fd, reply->text, reply->len, MSG_DONTWAIT | MSG_NOSIGNAL);
    shutdown(k->fd, SHUT_RDWR);
    k->cut = 1;
    srv.n_cut++;
}

/*
 * Near the budget, shed the connections that wait longest for a request (idle keep-alive,
 * slow heads and bodies), oldest first, so a new client always finds room: above 90%
 * of --max-connections, down to 80%. Connections being answered are never shed.
 */
static void conn_shed_locked(void)
{
    size_t reserve = srv.max_connections / 10 ? srv.max_connections / 10 : 1;
    size_t high = srv.max_connections - reserve, low = high > reserve ? high - reserve : 0;
    size_t live = srv.n_conns - srv.n_cut;

    if (live < high)
        return;
    while (live > low) {
        struct conn *oldest = NULL;

        for (struct conn *k = srv.conns; k; k = k->next)
            if (!k->cut && k->state != CONN_BUSY && (!oldest || k->t_ready_s < oldest->t_ready_s))
                oldest = k;
        if (!oldest)
            break;
        conn_cut_locked(oldest, &reply_503);
        srv.n_shed++;
        live--;
    }
}

/*
 * The bytes received on fd and the seconds since the last of them (the kernel's
 * counters); -1 when the kernel does not say (before Linux 4.1).
 */
static int conn_rx(int fd, uint64_t *bytes, double *quiet_s)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);

    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) ||
        len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
        return -1;
    *bytes = ti.tcpi_bytes_received;
    *quiet_s = ti.tcpi_last_data_recv / 1000.0;
    return 0;
}

/*
 * An idle keep-alive connection that has received bytes since the last response has
 * begun a request: its clock starts at the first of them, which came after the
 * previous look, a tick ago at most.
 */
static void conn_check_idle_locked(struct conn *k, double now)
{
    uint64_t bytes;
    double quiet_s;

    if (conn_rx(k->fd, &bytes, &quiet_s) || bytes == k->idle_rx_bytes)
        return;
    k->state = CONN_WAIT;
    if (now - quiet_s > k->t_ready_s)
        k->t_ready_s = now - quiet_s;
}

/* Cuts the connections whose request is late, then sheds if near the budget. */
static void *reaper_main(void *arg)
{
    pthread_mutex_lock(&srv.conns_lock);
    while (!srv.reaper_stop) {
        struct timespec until;
        double now = now_s();

        for (struct conn *k = srv.conns; k; k = k->next) {
            double limit_s = k->state == CONN_BODY ? srv.deadline_s : srv.head_timeout_s;

            if (!k->cut && k->state == CONN_IDLE)
                conn_check_idle_locked(k, now);
            if (!k->cut && k->state != CONN_BUSY && k->state != CONN_IDLE &&
                now - k->t_ready_s > limit_s) {
                conn_cut_locked(k, &reply_408);
                srv.n_timed_out++;
            }
        }
        conn_shed_locked();
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += REAPER_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&srv.reaper_wake, &srv.conns_lock, &until);
    }
    pthread_mutex_unlock(&srv.conns_lock);
    return arg;
}

/* Keeps the table of open connections. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct conn *k = *socket_context;

    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

        if (!ci)
            return; /* untracked: MHD's idle timeout alone applies */
        k = calloc(1, sizeof(*k));
        if (!k)
            abort();
        k->fd = ci->connect_fd;
        k->state = CONN_WAIT;
        k->t_ready_s = now_s();
        pthread_mutex_lock(&srv.conns_lock);
        k->next = srv.conns;
        if (srv.conns)
            srv.conns->prev = k;
        srv.conns = k;
        srv.n_conns++;
        conn_shed_locked();
        pthread_mutex_unlock(&srv.conns_lock);
        *socket_context = k;
    } else if (k) {
        pthread_mutex_lock(&srv.conns_lock);
        if (k->prev)
            k->prev->next = k->next;
        else
            srv.conns = k->next;
        if (k->next)
            k->next->prev = k->prev;
        srv.n_conns--;
        if (k->cut)
            srv.n_cut--;
        pthread_mutex_unlock(&srv.conns_lock);
        free(k);
        *socket_context = NULL;
    }
}

/* MHD calls this when a request line is in: the headers are coming. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct conn *k = conn_of(c);

    if (k) {
        pthread_mutex_lock(&srv.conns_lock);
        if (k->state == CONN_IDLE)
            k->t_ready_s = now_s(); /* it came whole since the reaper last looked */
        if (k->state == CONN_IDLE || k->state == CONN_WAIT)
            k->state = CONN_HEAD;
        pthread_mutex_unlock(&srv.conns_lock);
    }
    return NULL; /* the handler's *con_cls starts NULL */
}

/*
 * The handler runs: the reaper keeps off the connection. Returns -1 when the reaper has
 * already cut it, else 0 with the seconds since the request's clock started.
 */
static int conn_busy(struct MHD_Connection *c, double *elapsed_s)
{
    struct conn *k = conn_of(c);
    int rc = 0;

    *elapsed_s = 0;
    if (!k)
        return 0;
    pthread_mutex_lock(&srv.conns_lock);
    if (k->cut) {
        rc = -1;
    } else {
        k->state = CONN_BUSY;
        *elapsed_s = now_s() - k->t_ready_s;
    }
    pthread_mutex_unlock(&srv.conns_lock);
    return rc;
}

/* The handler wants more of the body: the reaper holds it to the request deadline. */
static enum MHD_Result conn_wants_body(struct MHD_Connection *c)
{
    struct conn *k = conn_of(c);

    if (k) {
        pthread_mutex_lock(&srv.conns_lock);
        k->state = CONN_BODY;
        pthread_mutex_unlock(&srv.conns_lock);
    }
    return MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload_data,
                               size_t *upload_data_size, void **con_cls)
{
    struct req *rq = *con_cls;
    double elapsed_s;

    tl_ctx = srv.ctx; /* no page of this request shows what the last one's session had */
    if (conn_busy(c, &elapsed_s))
        return MHD_NO;
    /* MHD cannot answer in the middle of a body: a late one is the reaper's (408) */
    if ((!rq || !*upload_data_size) && elapsed_s > (rq ? srv.deadline_s : srv.head_timeout_s))
        return send_error(c, 1, MHD_HTTP_REQUEST_TIMEOUT, "timeout",
                          "the request took too long to arrive");
    if (!rq) {
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");

        rq = calloc(1, sizeof(*rq));
        if (!rq)
            abort();
        *con_cls = rq;
        if (cl && strtoull(cl, NULL, 10) > MAX_BODY)
            return send_error(c, 1, MHD_HTTP_CONTENT_TOO_LARGE, "too_large",
                              "the request body is too large");
        return conn_wants_body(c);
    }
    if (*upload_data_size) {
        if (rq->body.len + *upload_data_size > MAX_BODY)
            return send_error(c, 1, MHD_HTTP_CONTENT_TOO_LARGE, "too_large",
                              "the request body is too large");
        vt_sb_add(&rq->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return conn_wants_body(c);
    }
    /* what failed in this thread's last request says nothing of this one (a 503 only
     * for a database out of reach now, see db_unavailable) */
    if (tl_lib)
        vt_clear_error(tl_lib);
    tl_open_unavailable = 0;
    return route(c, url, method, rq);
}

/* The response is sent (or the request abandoned): idle until the next request's first byte. */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct req *rq = *con_cls;
    struct conn *k = conn_of(c);

    if (rq) {
        vt_sb_release(&rq->body);
        free(rq);
        *con_cls = NULL;
    }
    if (k) {
        uint64_t bytes = 0;
        double quiet_s;

        conn_rx(k->fd, &bytes, &quiet_s);
        pthread_mutex_lock(&srv.conns_lock);
        k->state = CONN_IDLE;
        k->idle_rx_bytes = bytes;
        k->t_ready_s = now_s();
        pthread_mutex_unlock(&srv.conns_lock);
    }
}

/*
 * %XX decoding, except %00: it stays as it is so a NUL never shortens a path or a
 * value (the route then matches nothing). MHD has already turned '+' into ' ' in
 * query values.
 */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
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

int web_serve(const struct web_opts *opts)
{
    struct sockaddr_in sa4;
    struct sockaddr_in6 sa6;
    struct sockaddr *sa;
    struct MHD_Daemon *d;
    const union MHD_DaemonInfo *info;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
    sigset_t set;
    int sig = 0, ipv6 = strchr(opts->bind, ':') != NULL;
    struct timespec until;

    memset(&srv, 0, sizeof(srv));
    srv.opts = opts;
    srv.ctx.read_only = opts->read_only;
    srv.deadline_s = opts->deadline_s ? opts->deadline_s : REQUEST_DEADLINE_S;
    srv.head_timeout_s = opts->head_timeout_s ? opts->head_timeout_s : HEAD_TIMEOUT_S;
    if (srv.head_timeout_s > srv.deadline_s)
        srv.head_timeout_s = srv.deadline_s;
    srv.max_connections = opts->max_connections ? opts->max_connections : MAX_CONNECTIONS;
    canned_init(&reply_408, "408 Request Timeout", "timeout",
                "the request took too long to arrive");
    canned_init(&reply_503, "503 Service Unavailable", "busy", "too many connections, try again");
    pthread_mutex_init(&srv.lock, NULL);
    pthread_mutex_init(&srv.sessions_lock, NULL);
    pthread_cond_init(&srv.wake, NULL);
    pthread_mutex_init(&srv.conns_lock, NULL);
    pthread_cond_init(&srv.reaper_wake, NULL);
    memset(&sa4, 0, sizeof(sa4));
    memset(&sa6, 0, sizeof(sa6));
    if (ipv6) {
        sa6.sin6_family = AF_INET6;
        sa6.sin6_port = htons((uint16_t)opts->port);
        if (inet_pton(AF_INET6, opts->bind, &sa6.sin6_addr) != 1) {
            fprintf(stderr, "vidtheque: '%s': not an IP address\n", opts->bind);
            return -1;
        }
        srv.loopback = IN6_IS_ADDR_LOOPBACK(&sa6.sin6_addr);
        sa = (struct sockaddr *)&sa6;
        flags |= MHD_USE_IPv6;
    } else {
        sa4.sin_family = AF_INET;
        sa4.sin_port = htons((uint16_t)opts->port);
        if (inet_pton(AF_INET, opts->bind, &sa4.sin_addr) != 1) {
            fprintf(stderr, "vidtheque: '%s': not an IP address\n", opts->bind);
            return -1;
        }
        srv.loopback = (ntohl(sa4.sin_addr.s_addr) >> 24) == 127;
        sa = (struct sockaddr *)&sa4;
    }

    /* every thread started from here on inherits this mask: only sigwait sees them */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (!opts->read_only) {
        char err[1024];
        struct vt_callbacks cb = {on_log, NULL, NULL};
        struct vt_library *wl = vt_library_open(opts->library_dir, 0, err, sizeof(err));

        if (!wl) {
            cli_error("%s", err);
            return -1;
        }
        vt_library_set_callbacks(wl, &cb);
        if (pthread_create(&srv.worker, NULL, worker_main, wl)) {
            vt_library_close(wl);
            fprintf(stderr, "vidtheque: cannot start the indexing thread\n");
            return -1;
        }
        srv.worker_started = 1;
    }
    if (pthread_create(&srv.reaper, NULL, reaper_main, NULL)) {
        fprintf(stderr, "vidtheque: cannot start the connection reaper thread\n");
        d = NULL;
        goto stop_worker;
    }
    srv.reaper_started = 1;

    d = MHD_start_daemon(
        flags, 0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)POOL_THREADS, MHD_OPTION_CONNECTION_TIMEOUT,
        opts->idle_timeout_s ? opts->idle_timeout_s : (unsigned)IDLE_TIMEOUT_S,
        MHD_OPTION_CONNECTION_LIMIT, srv.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        opts->max_per_ip ? opts->max_per_ip : (unsigned)MAX_PER_IP,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_NOTIFY_CONNECTION,
        on_connection, NULL, MHD_OPTION_URI_LOG_CALLBACK, on_request_line, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
        MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "vidtheque: '%s' port %u: cannot listen (%s)\n", opts->bind, opts->port,
                strerror(errno));
        goto stop_worker;
    }
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    fprintf(stderr, "listening on http://%s%s%s:%u\n", ipv6 ? "[" : "", opts->bind, ipv6 ? "]" : "",
            info ? (unsigned)info->port : opts->port);
    fflush(stderr);

    while (sigwait(&set, &sig))
        ;
    fprintf(stderr, "vidtheque: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    MHD_stop_daemon(d);
    for (size_t i = 0; i < srv.n_handles; i++)
        vt_library_close(srv.handles[i]);
    srv.n_handles = 0;

stop_worker:
    if (srv.reaper_started) {
        pthread_mutex_lock(&srv.conns_lock);
        srv.reaper_stop = 1;
        pthread_cond_signal(&srv.reaper_wake);
        pthread_mutex_unlock(&srv.conns_lock);
        pthread_join(srv.reaper, NULL);
        if (srv.n_timed_out || srv.n_shed)
            fprintf(stderr, "vidtheque: %lu request(s) timed out, %lu connection(s) shed\n",
                    srv.n_timed_out, srv.n_shed);
    }
    if (srv.worker_started) {
        pthread_mutex_lock(&srv.lock);
        srv.stopping = 1;
        pthread_cond_signal(&srv.wake);
        pthread_mutex_unlock(&srv.lock);
        /* a video being indexed may take minutes; an interrupted run is resumable */
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        if (pthread_timedjoin_np(srv.worker, NULL, &until))
            fprintf(stderr, "vidtheque: indexing interrupted ('vidtheque resume' finishes it)\n");
    }
    return d ? 0 : -1;
}

/* /api/videos/ID/captions.vtt and /api/videos/ID/state: the video page's (web_video.c). */
static enum MHD_Result route_video_extra(struct MHD_Connection *c, struct vt_library *lib,
                                         const char *id, const char *what)
{
    struct vt_sb b = {0};
    int vtt = !strcmp(what, "captions.vtt");
    int status = vtt ? web_video_captions(lib, id, &b) : web_video_state(lib, id, &b);

    if (status == 200)
        return send_buf(c, 200, vtt ? "text/vtt; charset=utf-8" : "application/json; charset=utf-8",
                        &b);
    vt_sb_release(&b);
    if (status == 404)
        return send_error(c, 1, 404, "not_found", "no such video");
    return send_error(c, 1, 500, "internal", "the video cannot be read");
}
