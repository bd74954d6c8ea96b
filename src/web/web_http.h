/*
 * What the files of the HTTP server (web_server.c and the files it uses) share, and
 * nothing else includes. From the top: web_server.c starts and stops; web_route.c
 * receives each request and dispatches it through its table to web_write.c (the routes
 * that change the library), web_api.c (the JSON API), web_media.c (media and frame
 * files) or a page (web.h); those answer through web_respond.c; web_session.c (sign-in,
 * tokens, forms), web_jobs.c (the indexing thread), web_slow.c (the search threads),
 * web_conn.c (deadlines, the connection budget, refusals written on the socket),
 * web_state.c (the settings, each thread's library handle) and web_log.c (the server's
 * stderr) are below them; web_frame.c (framing rules) stands apart, without
 * libmicrohttpd. A file calls only files below it.
 */
#ifndef VT_WEB_HTTP_H
#define VT_WEB_HTTP_H

#include "web/web.h"

#include <microhttpd.h>
#include <stdint.h>

/* ---- the server's error lines on stderr (web_log.c) ---- */

/* "vidtheque: MESSAGE\n" on stderr in one write, control characters made harmless
 * (vt_safe_char): the same line the CLI writes for an error. */
void web_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The library handles' log callback: warnings and errors as web_log_error lines. */
void web_on_log(void *user, int level, const char *msg);

/* ---- the settings and what each request thread holds (web_state.c) ---- */

/* Called once by web_serve before any thread starts; opts is borrowed until it returns.
 * loopback: bound to a loopback address (the Host header is checked). */
void web_state_init(const struct web_opts *opts, int loopback);
const struct web_opts *web_opts(void);
int web_loopback(void);
/* This thread's library handle, opened on first use; NULL after logging why. */
struct vt_library *web_lib(void);
/* Whether this thread's last failure was the database server out of reach. */
int web_db_unavailable(void);
/* A new request: what the last one failed with says nothing of it. */
void web_lib_clear_error(void);
/* Closes every thread's handle (the daemon has stopped). */
void web_libs_close(void);
/* What the pages of the request this thread answers know: reset to the server's for each
 * request (web_req_ctx_reset), signed_in and csrf then set by web_route.c. */
struct web_ctx *web_req_ctx(void);
void web_req_ctx_reset(void);

/* ---- one request, as the routes see it (web_route.c fills it) ---- */

struct web_req {
    struct MHD_Connection *c;
    const char *url, *method;
    int api;                  /* under /api: errors are JSON */
    struct vt_library *lib;   /* this thread's handle (NULL for a route that needs none) */
    const struct vt_sb *body; /* the request's body, as received */
    /* what the route's pattern captured: {id} (or {vid}), {n}, and the trailing * */
    char id[VT_ID_MAX];
    char num[16];
    const char *rest;
};

/* ---- /metrics, /healthz, /readyz (web_metrics.c) ---- */

/* A GET or HEAD of one of the three: answered (1, *ret set) before any other route, without
 * a session; else 0. */
int web_health_route(struct MHD_Connection *c, const char *url, const char *method,
                     enum MHD_Result *ret);

/* ---- responses (web_respond.c) ---- */

/* A response held instead of queued (a route run off the pool thread, web_slow.c). */
struct web_held {
    unsigned status;
    struct MHD_Response *r; /* NULL: none was made */
};
/* From now on this thread's web_queue holds its response in h (the last one made wins)
 * instead of queueing it, until called with NULL. h is borrowed until then. */
void web_hold_responses(struct web_held *h);

/* Every response goes through here: the security headers, then queued; r is destroyed. */
enum MHD_Result web_queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r);
/* Takes b's memory. */
enum MHD_Result web_send_buf(struct MHD_Connection *c, unsigned status, const char *type,
                             struct vt_sb *b);
/* Takes the reference to doc. */
enum MHD_Result web_send_json(struct MHD_Connection *c, unsigned status, json_t *doc);
/* An error as JSON (api) or the error page; a 500 with the database out of reach is a 503. */
enum MHD_Result web_send_error(struct MHD_Connection *c, int api, unsigned status, const char *code,
                               const char *msg);
/* 405 to a method other than GET or HEAD. */
enum MHD_Result web_send_405(struct MHD_Connection *c, int api);
/* 405 on a manage route, with the methods it takes. */
enum MHD_Result web_send_405_allow(struct MHD_Connection *c, const char *allow);
/* 303 to loc (a path we built), with a Set-Cookie when cookie is not NULL. */
enum MHD_Result web_send_redirect(struct MHD_Connection *c, const char *loc, const char *cookie);
/* A page of status; takes b's memory. */
enum MHD_Result web_send_page(struct MHD_Connection *c, int status, struct vt_sb *b);
/* A file of web/, revalidated by its ETag. */
enum MHD_Result web_send_asset(struct MHD_Connection *c, const struct web_file *f);
/* The document of a video the client named (with those pages of its lists), or NULL with
 * an error response already queued into *ret. Caller owns the reference. */
json_t *web_doc_or_error(struct MHD_Connection *c, struct vt_library *lib, const char *id,
                         const struct vt_doc_pages *pages, int api, enum MHD_Result *ret);

/* ---- sign-in sessions, the write token and forms (web_session.c) ---- */

void web_sessions_init(void);
/* a and b equal, in time that depends on their lengths only */
int web_secret_eq(const char *a, const char *b);
/* The request carries the write token as a bearer token. */
int web_token_ok(struct MHD_Connection *c);
/* A new session into id and csrf (65 bytes each): 0, or -1 without randomness. */
int web_session_new(char *id, char *csrf);
/* The request's live session: 1 with its CSRF token in csrf (65 bytes), else 0; drop ends it. */
int web_session_of(struct MHD_Connection *c, char *csrf, int drop);
/* The Set-Cookie value for session id (NULL: the cookie that ends it). */
void web_session_cookie(struct MHD_Connection *c, const char *id, char *out, size_t n);
/* The request comes from a page of this server. */
int web_same_origin(struct MHD_Connection *c);
/* The body is application/x-www-form-urlencoded. */
int web_form_body(struct MHD_Connection *c);

/* ---- the indexing thread and its jobs (web_jobs.c) ---- */

enum web_job_kind {
    WEB_DO_INDEX,
    WEB_DO_ADD,
    WEB_DO_REDO,
    WEB_DO_RETRY,
    WEB_DO_REMOVE,
    WEB_DO_POSTER /* arg: the frame's index, or "auto" */
};

/* Opens the thread's own handle and starts it: 0, or -1 after printing why. */
int web_jobs_start(const char *library_dir);
/* Asks it to stop and waits a little; a video being indexed is left resumable. */
void web_jobs_stop(void);
/* Queue a job (arg copied): its number (from 1), or 0 when the queue is full. */
unsigned long web_job_enqueue(enum web_job_kind kind, const char *id, const char *stage,
                              const char *arg);
/* A copy of the jobs, newest first, into *out (caller frees): how many. */
size_t web_jobs_list(struct web_job **out);

/* ---- connections: per-request deadlines and the connection budget (web_conn.c) ---- */

/* The limits (0: the default of each); called once before any thread starts. */
void web_conns_init(unsigned head_timeout_s, unsigned deadline_s, unsigned max_connections);
/* Starts the reaper thread: 0, or -1 after printing why. */
int web_conns_start(void);
/* Stops it and prints how many requests timed out and connections were shed, if any. */
void web_conns_stop(void);
unsigned web_conns_max(void);
/* The seconds a request may take to its head (body 0) or to its end (body 1). */
double web_conn_limit_s(int body);
/* MHD's notifications (MHD_OPTION_NOTIFY_CONNECTION, MHD_OPTION_URI_LOG_CALLBACK). */
void web_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe);
void *web_on_request_line(void *cls, const char *uri, struct MHD_Connection *c);
/* The handler runs: -1 when the reaper already cut the connection, else 0 with the
 * seconds since the request's clock started. */
int web_conn_busy(struct MHD_Connection *c, double *elapsed_s);
/* The handler wants more of the body: MHD_YES. */
enum MHD_Result web_conn_wants_body(struct MHD_Connection *c);
/* The response is sent: idle until the next request's first byte. */
void web_conn_idle(struct MHD_Connection *c);
/* Refuses the request being handled: "STATUS" (e.g. "400 Bad Request") with a JSON error
 * of code and msg (no quote or backslash in either) written on the socket, which is then
 * shut down whatever was read of the body. Returns MHD_NO, for the handler to return. */
enum MHD_Result web_conn_refuse(struct MHD_Connection *c, const char *status, const char *code,
                                const char *msg);

/* ---- routes that may wait on a slow dependency, off the pool (web_slow.c) ---- */

struct web_slow_job;
/* Starts the search threads: 0, or -1 after printing why. */
int web_slow_start(void);
/* Answers what waits with 503, lets the running ones finish, joins the threads; called
 * before the daemon stops (no connection may stay suspended). */
void web_slow_stop(void);
/* After web_slow_stop: waits (max_s at most) until every job's answer has been sent and the
 * request completed, so that stopping the daemon cuts none of them off. A resumed
 * connection's answer is queued by a pool thread later (web_slow_answer): stopping the
 * daemon at once closed it unanswered now and then (t1135's '000'). */
void web_slow_settle(double max_s);
/* Runs fn(r) on a search thread, the connection suspended meanwhile: MHD_YES with the job
 * in *jobp (the request's own, freed by web_slow_job_free), or an answer queued at once
 * (503: the queue is full or the server is stopping) with *jobp untouched. */
enum MHD_Result web_slow_run(enum MHD_Result (*fn)(const struct web_req *r),
                             const struct web_req *r, struct web_slow_job **jobp);
/* The handler, called again once the job resumed the connection: queues its response. */
enum MHD_Result web_slow_answer(struct MHD_Connection *c, struct web_slow_job *job);
void web_slow_job_free(struct web_slow_job *job);

/* ---- the routes (web_write.c, web_api.c, web_media.c) ---- */

/* web_write.c: sign in and out, the queue page, add, redo, retry, remove. */
enum MHD_Result web_get_login(const struct web_req *r);
enum MHD_Result web_post_login(const struct web_req *r);
enum MHD_Result web_post_logout(const struct web_req *r);
enum MHD_Result web_get_queue(const struct web_req *r);
enum MHD_Result web_get_remove(const struct web_req *r);
enum MHD_Result web_post_add(const struct web_req *r);
enum MHD_Result web_post_redo(const struct web_req *r);
enum MHD_Result web_post_retry(const struct web_req *r);
enum MHD_Result web_post_poster(const struct web_req *r);
enum MHD_Result web_post_remove(const struct web_req *r);
/* A form POST may write: the bearer token, or a live session whose CSRF token is the
 * form's, from a page of this server. */
int web_form_auth(const struct web_req *r);
/* A refused form: nothing was changed (403). */
enum MHD_Result web_send_403(struct MHD_Connection *c);

/* web_api.c */
enum MHD_Result web_api_add(const struct web_req *r);
enum MHD_Result web_api_videos(const struct web_req *r);
enum MHD_Result web_api_video(const struct web_req *r);
enum MHD_Result web_api_shots(const struct web_req *r);
enum MHD_Result web_api_frames(const struct web_req *r);
enum MHD_Result web_api_cues(const struct web_req *r);
enum MHD_Result web_api_chunks(const struct web_req *r);
enum MHD_Result web_api_search(const struct web_req *r);
enum MHD_Result web_api_similar(const struct web_req *r);
enum MHD_Result web_api_captions(const struct web_req *r);
enum MHD_Result web_api_state(const struct web_req *r);
/* web_chapters.c: GET /api/videos/ID/storyboard */
enum MHD_Result web_api_storyboard(const struct web_req *r);

/* web_media.c: /media/ID and /api/videos/ID/frames/N.jpg */
enum MHD_Result web_get_media(const struct web_req *r);
enum MHD_Result web_get_frame(const struct web_req *r);

/* ---- receiving requests (web_route.c), MHD's callbacks for web_server.c ---- */

enum MHD_Result web_handler(void *cls, struct MHD_Connection *c, const char *url,
                            const char *method, const char *version, const char *upload_data,
                            size_t *upload_data_size, void **con_cls);
void web_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                   enum MHD_RequestTerminationCode toe);
size_t web_unescape(void *cls, struct MHD_Connection *c, char *s);

#endif
