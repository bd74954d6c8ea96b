/*
 * The routes that manage the library on a writable server: sign in and out, the queue
 * of the indexing thread, and the forms that add a video or redo, retry or remove one.
 * web_route.c lets a form POST reach these only when web_form_auth passes (a 403 changes
 * nothing); the work itself is queued for the indexing thread (web_jobs.c). The pages
 * they show are web_manage.c's.
 */
#include "web/web_form.h"
#include "web/web_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Field name of the request's form body (web_form_get). */
static int form_get(const struct vt_sb *body, const char *name, char *out, size_t n)
{
    return web_form_get(body->buf, body->len, name, out, n);
}

/*
 * Whether a form POST may write: the bearer token (an API client), or a live session
 * whose CSRF token is the form's csrf field, from a page of this server.
 */
int web_form_auth(const struct web_req *rq)
{
    struct MHD_Connection *c = rq->c;
    char field[80];

    if (web_token_ok(c))
        return 1;
    return web_same_origin(c) && web_req_ctx()->signed_in &&
           form_get(rq->body, "csrf", field, sizeof(field)) == 1 &&
           web_secret_eq(field, web_req_ctx()->csrf);
}

/* POST /login: the token from the form, never from the URL. */
enum MHD_Result web_post_login(const struct web_req *rq)
{
    struct MHD_Connection *c = rq->c;
    struct vt_sb b = {0};
    char token[512], id[65], csrf[65], cookie[200];

    if (!web_same_origin(c))
        return web_send_page(
            c, web_page_login(web_req_ctx(), 403, "this form was sent from another site", &b), &b);
    if (!web_form_body(c) || form_get(rq->body, "token", token, sizeof(token)) != 1 ||
        !web_secret_eq(token, web_opts()->token)) {
        memset(token, 0, sizeof(token));
        return web_send_page(
            c, web_page_login(web_req_ctx(), 403, "that is not the write token", &b), &b);
    }
    memset(token, 0, sizeof(token));
    if (web_session_new(id, csrf))
        return web_send_error(c, 0, 500, "internal", "no randomness for a session");
    web_session_cookie(c, id, cookie, sizeof(cookie));
    return web_send_redirect(c, "/", cookie);
}

/* A refused form: nothing was changed. */
enum MHD_Result web_send_403(struct MHD_Connection *c)
{
    return web_send_error(c, 0, 403, "forbidden",
                          web_req_ctx()->signed_in
                              ? "this form is stale or from another site: reload the "
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
        *ret = web_send_error(c, 0, 404, "not_found", "no such video");
    } else {
        web_log_error("%s", vt_errmsg(lib));
        *ret = web_send_error(c, 0, 500, "internal", "the library cannot be read");
    }
    return 0;
}

/* 303 to the queue page at job no, or 503 when the queue is full. */
static enum MHD_Result queued(struct MHD_Connection *c, unsigned long no, const char *back)
{
    char loc[VT_ID_MAX + 64];

    if (!no)
        return web_send_error(c, 0, 503, "busy", "too many jobs wait for the indexer: try later");
    if (back)
        snprintf(loc, sizeof(loc), "%s", back);
    else
        snprintf(loc, sizeof(loc), "/queue?job=%lu#job-%lu", no, no);
    return web_send_redirect(c, loc, NULL);
}

/*
 * POST /manage/add: source is an http(s) URL or the absolute path of a regular file on
 * the server. Only checked here; the indexing thread registers it (a URL's yt-dlp call
 * included) and indexes it.
 */
/* The add form again, src kept, with why it was refused. */
static enum MHD_Result add_refused(struct MHD_Connection *c, int status, const char *src,
                                   const char *why)
{
    struct vt_sb b = {0};

    return web_send_page(c, web_page_add_refused(web_req_ctx(), status, src, why, &b), &b);
}

enum MHD_Result web_post_add(const struct web_req *rq)
{
    struct MHD_Connection *c = rq->c;
    char src[4200], msg[600];
    struct stat st;
    int got = form_get(rq->body, "source", src, sizeof(src));

    if (got != 1 || !src[0])
        return add_refused(c, 400, got == 1 ? src : NULL,
                           "Say what to add: a URL or a file's path.");
    if (vt_is_url(src)) {
        if (strncasecmp(src, "http://", 7) && strncasecmp(src, "https://", 8))
            return add_refused(c, 400, src, "Only http and https URLs are fetched.");
        return queued(c, web_job_enqueue(WEB_DO_ADD, NULL, NULL, src), NULL);
    }
    if (src[0] != '/')
        return add_refused(c, 400, src,
                           "Not a URL, and a file is named by its absolute path on the server "
                           "(starting with /).");
    if (stat(src, &st)) {
        snprintf(msg, sizeof(msg), "No such file on the server: %.500s", src);
        return add_refused(c, 404, src, msg);
    }
    if (!S_ISREG(st.st_mode))
        return add_refused(c, 422, src,
                           "Not a regular file (a directory, device or pipe is refused).");
    return queued(c, web_job_enqueue(WEB_DO_ADD, NULL, NULL, src), NULL);
}

/* GET /login: the form. */
enum MHD_Result web_get_login(const struct web_req *rq)
{
    struct vt_sb b = {0};

    return web_send_page(rq->c, web_page_login(web_req_ctx(), 200, NULL, &b), &b);
}

/* POST /logout: the session ends, and its cookie. */
enum MHD_Result web_post_logout(const struct web_req *rq)
{
    char csrf[65], cookie[200];

    web_session_of(rq->c, csrf, 1);
    web_session_cookie(rq->c, NULL, cookie, sizeof(cookie));
    return web_send_redirect(rq->c, "/", cookie);
}

/* GET /queue: the indexing thread's jobs, newest first (signed in only: it shows paths). */
enum MHD_Result web_get_queue(const struct web_req *rq)
{
    const char *job = MHD_lookup_connection_value(rq->c, MHD_GET_ARGUMENT_KIND, "job");
    struct web_job *v;
    struct vt_sb b = {0};
    size_t n = web_jobs_list(&v);
    int status;

    status = web_page_queue(rq->lib, web_req_ctx(), v, n, job ? strtoul(job, NULL, 10) : 0, &b);
    free(v);
    return web_send_page(rq->c, status, &b);
}

/* GET /v/ID/remove: the confirmation before a video is removed. */
enum MHD_Result web_get_remove(const struct web_req *rq)
{
    struct vt_sb b = {0};

    return web_send_page(rq->c, web_page_remove(rq->lib, web_req_ctx(), rq->id, &b), &b);
}

/* POST /v/ID/redo: the stage (one of the pipeline's) done again. */
enum MHD_Result web_post_redo(const struct web_req *rq)
{
    enum MHD_Result ret = MHD_NO;
    const char *const *names = vt_stage_names();
    char back[VT_ID_MAX + 8], stage[40];
    int ok = 0;

    if (!video_exists(rq->c, rq->lib, rq->id, &ret))
        return ret;
    snprintf(back, sizeof(back), "/v/%s", rq->id);
    if (form_get(rq->body, "stage", stage, sizeof(stage)) == 1)
        for (size_t i = 0; names[i]; i++)
            ok |= !strcmp(names[i], stage);
    if (!ok)
        return web_send_error(rq->c, 0, 400, "bad_request",
                              "stage is one of the pipeline's stages");
    return queued(rq->c, web_job_enqueue(WEB_DO_REDO, rq->id, stage, NULL), back);
}

/* POST /v/ID/retry: the failed stages done again (the indexing thread's job_retry). */
enum MHD_Result web_post_retry(const struct web_req *rq)
{
    enum MHD_Result ret = MHD_NO;
    char back[VT_ID_MAX + 8];

    if (!video_exists(rq->c, rq->lib, rq->id, &ret))
        return ret;
    snprintf(back, sizeof(back), "/v/%s", rq->id);
    return queued(rq->c, web_job_enqueue(WEB_DO_RETRY, rq->id, NULL, NULL), back);
}

/* POST /v/ID/remove: without confirm=yes (a form sent without JS), the confirmation page. */
enum MHD_Result web_post_remove(const struct web_req *rq)
{
    enum MHD_Result ret = MHD_NO;
    char yes[8];

    if (!video_exists(rq->c, rq->lib, rq->id, &ret))
        return ret;
    if (form_get(rq->body, "confirm", yes, sizeof(yes)) != 1 || strcmp(yes, "yes"))
        return web_get_remove(rq);
    return queued(rq->c, web_job_enqueue(WEB_DO_REMOVE, rq->id, NULL, NULL), NULL);
}
