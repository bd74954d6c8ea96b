/*
 * The web front-end: an HTTP server (web_server.c and the files of web_http.h, on
 * libmicrohttpd) that serves the library's pages (web_html.c and a file per page), a JSON
 * API and the media files. This header is shared by those files and cmd_serve.c.
 */
#ifndef VT_WEB_H
#define VT_WEB_H

#include "vidtheque.h"

#include <jansson.h>
#include <stddef.h>

struct web_opts {
    const char *library_dir; /* an existing library */
    const char *bind;        /* numeric IPv4 or IPv6 address */
    unsigned port;           /* 0: an ephemeral port */
    int read_only;
    const char *token;   /* bearer token for writes; NULL in read-only mode */
    unsigned max_per_ip; /* simultaneous connections from one address (0: default) */
    /* Each request's clock starts at accept or when the previous response was sent. */
    unsigned head_timeout_s;  /* to the request's head received (0: default) */
    unsigned deadline_s;      /* to the whole request received, body included (0: default) */
    unsigned idle_timeout_s;  /* a connection with no traffic this long is closed (0: default) */
    unsigned max_connections; /* open at once; the oldest waiting ones are shed (0: default) */
};

/*
 * Serve until SIGINT or SIGTERM. Prints "listening on http://HOST:PORT" on stderr
 * once the socket is bound. Returns 0, or -1 after printing why it could not start.
 */
int web_serve(const struct web_opts *opts);

/*
 * A worker's metrics server (web_metrics.c): /metrics, /healthz and /readyz of the library
 * in library_dir on bind:port (port 0: an ephemeral one), served by a thread of its own.
 * Prints "metrics on http://HOST:PORT/metrics" on stderr once bound; NULL after printing
 * why it could not. The caller blocks the stop signals first: the thread inherits its mask.
 */
struct web_metrics;
struct web_metrics *web_metrics_start(const char *library_dir, const char *bind, unsigned port);
void web_metrics_stop(struct web_metrics *m);

/* s escaped for HTML text and double- or single-quoted attribute values; invalid UTF-8 and
 * control characters are replaced. With marks, VT_MARK_OPEN/CLOSE become <mark></mark>. */
void web_html(struct vt_sb *b, const char *s);
void web_html_marked(struct vt_sb *b, const char *s);
/* s percent-encoded for a URL query component. */
void web_url(struct vt_sb *b, const char *s);

/*
 * The video's document with the given page of each long list (vt_export_json_pages
 * parsed); NULL with *rc set (VT_ENOTFOUND for an unknown video). Caller owns the
 * reference (json_decref).
 */
json_t *web_video_doc(struct vt_library *lib, const char *id, const struct vt_doc_pages *pages,
                      int *rc);

/* What every page needs to know about the server and the request it answers. */
struct web_ctx {
    int read_only;
    int signed_in; /* the request carries a live session (never in read-only mode) */
    /* the session's form token, a hidden field of every form that writes (signed_in) */
    char csrf[65];
};

/* One job of the indexing thread, as the queue page shows it (a copy). */
struct web_job {
    unsigned long no;
    const char *what;   /* "add", "index", "redo", "retry" or "remove"; static */
    char arg[4200];     /* the path or URL added, or the stage redone ("" for none) */
    char id[VT_ID_MAX]; /* the video (for an add: the first it registered, "" before) */
    int state;          /* WEB_JOB_* */
    size_t n_added;     /* an add: the videos it registered */
    char error[512];    /* why it failed ("" when it did not) */
    double queued_at, started_at, ended_at; /* seconds since the epoch; 0: not yet */
};
enum { WEB_JOB_WAITING, WEB_JOB_RUNNING, WEB_JOB_DONE, WEB_JOB_FAILED };

/*
 * The pages that manage the library (web_manage.c): sign in (status 200, or 403 with msg
 * after a wrong token), the queue (the library's videos waiting or being indexed, by any
 * worker, with their title, running stage, progress and times; then the jobs of this
 * server's indexing thread, newest first; highlight is the job just queued, 0 for none), and
 * the confirmation before a video is removed.
 */
int web_page_login(const struct web_ctx *ctx, int status, const char *msg, struct vt_sb *out);
int web_page_queue(struct vt_library *lib, const struct web_ctx *ctx, const struct web_job *jobs,
                   size_t n, unsigned long highlight, struct vt_sb *out);
int web_page_remove(struct vt_library *lib, const struct web_ctx *ctx, const char *id,
                    struct vt_sb *out);
/* The add form again after a refused add: what was typed kept, why it was refused said on
 * the form (one line); returns status. */
int web_page_add_refused(const struct web_ctx *ctx, int status, const char *value, const char *why,
                         struct vt_sb *out);

/*
 * HTML pages. Each appends a whole document to out and returns the HTTP status.
 * Query values are as received (NULL when absent); they are validated here.
 */
/* A request's query string: get(conn, key) is the value of key as received, or NULL. */
struct web_args {
    const char *(*get)(void *conn, const char *key);
    void *conn;
};
/* /: the library, a page of cards (?state= ?sort= ?reuse= ?q= ?page= ?per=). */
int web_page_library(struct vt_library *lib, const struct web_ctx *ctx, const struct web_args *a,
                     struct vt_sb *out);
/* /v/ID/frames/N/similar: the frames of the library that look like frame N (HTML). */
int web_page_similar(struct vt_library *lib, const struct web_ctx *ctx, const char *id,
                     const char *frame, const char *limit, struct vt_sb *out);
/* A search as /search and the links of its hits carry it (each NULL when absent). */
struct web_search_ask {
    const char *q, *mode, *source, *video, *channel;
};
/* The hits of search a as /search lists them: vt_search's order (the order of /api/search),
 * filtered by source, video and channel as the page filters them; 0, or -1 after logging why
 * (web_search.c). a must be checked (web_search_check) and a->q not empty. */
int web_search_run(struct vt_library *lib, const struct web_search_ask *a, struct vt_hit **h,
                   size_t *n, struct vt_search_info *info);
/* 0 when a's values are ones /search takes, else -1 with a message for the reader in *why. */
int web_search_check(const struct web_search_ask *a, const char **why);
/* /v/ID: a->q, when given, marks the hits of that search (its mode and filters) in this video. */
int web_page_video(struct vt_library *lib, const struct web_ctx *ctx, const char *id, const char *t,
                   const struct web_search_ask *a, const char *frames_page, const char *cues_page,
                   struct vt_sb *out);
/* GET /api/videos/ID/captions.vtt (the transcript as WebVTT) and /api/videos/ID/state (its
 * index_state, data_status and stage counts, JSON) into out: the HTTP status, out empty
 * unless 200 (web_video.c). */
int web_video_captions(struct vt_library *lib, const char *id, struct vt_sb *out);
int web_video_state(struct vt_library *lib, const char *id, struct vt_sb *out);
/* /search: a page of hits (?q= ?mode= ?source= ?video= ?channel= ?page= ?per=). */
int web_page_search(struct vt_library *lib, const struct web_ctx *ctx, const struct web_args *a,
                    struct vt_sb *out);
int web_page_error(const struct web_ctx *ctx, int status, const char *msg, struct vt_sb *out);

/* A file of web/ compiled into the binary (web_assets.c). */
struct web_file {
    const char *type; /* its Content-Type */
    const unsigned char *data;
    size_t size;
    const unsigned char *gz; /* the same gzip'ed at build time, or NULL */
    size_t gz_size;
    const char *version; /* a hash of the content, 16 hex digits; static */
    char etag[24];       /* the version, quoted */
    char etag_gz[28];    /* the gzip'ed bytes' ("VERSION-gz") */
};

/* The file served at url (/static/app.css, /favicon.ico, ...): 1 with *out set, else 0. */
int web_asset(const char *url, struct web_file *out);
/* The URL pages name the file at url by: with its version (/static/app.css?v=HASH), under
 * which a browser keeps it; url itself for no such file. Static. */
const char *web_asset_url(const char *url);
/* The HTML template web/NAME.html (not served): 1 with its text and size, else 0. */
int web_template(const char *name, const char **text, size_t *size);

#endif
