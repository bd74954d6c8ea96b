/*
 * HTTP for model servers and hubs (http.h) on libcurl's easy interface: a fresh easy
 * handle per attempt, a whole-request timeout, a cap on the response enforced in the write
 * callback (it stops the transfer, so a server cannot make us hold more), only http and
 * https (also across redirects), and retries with exponential backoff for what may pass:
 * connection failures, timeouts, 429 and 5xx. A 429/503's Retry-After is honoured when it
 * is at most RETRY_AFTER_MAX_S; a longer one ends the retries (the caller's own retry, e.g.
 * the pipeline's `resume`, is the place to wait that long). The error line names the URL
 * (never the Bearer token) and, when the body is JSON with {"error": {"message": ...}},
 * {"error": "..."} or {"detail": "..."}, the server's own words.
 */
#include "base/http.h"

#include "base/util.h"
#include "vidtheque.h"

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define DEFAULT_TIMEOUT_S 60.0
#define DEFAULT_MAX_BYTES ((size_t)64 << 20)
#define DEFAULT_RETRIES   3
#define DEFAULT_BACKOFF_S 0.5
#define CONNECT_TIMEOUT_S 10.0
#define RETRY_AFTER_MAX_S 30
#define MAX_REDIRS        5
#define SERVER_MSG_MAX    200

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;
/* vt_http_deadline_set: when this thread's requests must be over (monotonic), 0 for none */
static _Thread_local double thread_deadline_s;

double vt_http_deadline_set(double deadline_s)
{
    double before = thread_deadline_s;

    thread_deadline_s = deadline_s;
    return before;
}

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct sink {
    char *buf;
    size_t len, cap, max;
    int over;
};

static size_t on_write(char *data, size_t size, size_t nmemb, void *user)
{
    struct sink *s = user;
    size_t n = size * nmemb;

    if (n > s->max - s->len) {
        s->over = 1;
        return 0; /* stops the transfer with CURLE_WRITE_ERROR */
    }
    vt_grow((void **)&s->buf, &s->cap, s->len + n + 1, 1);
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    s->buf[s->len] = 0;
    return n;
}

void vt_http_resp_release(struct vt_http_resp *resp)
{
    if (!resp)
        return;
    free(resp->body);
    memset(resp, 0, sizeof(*resp));
}

static int is_http_url(const char *url)
{
    return url && (!strncasecmp(url, "http://", 7) || !strncasecmp(url, "https://", 8));
}

/* The URL without query string or user info, for messages. */
static void url_for_msg(const char *url, char *out, size_t outlen)
{
    const char *scheme_end = strstr(url, "://");
    const char *host = scheme_end ? scheme_end + 3 : url;
    const char *at = strchr(host, '@'), *slash = strchr(host, '/');
    size_t n;

    if (at && (!slash || at < slash))
        host = at + 1;
    n = strcspn(host, "?#");
    snprintf(out, outlen, "%.*s%.*s", scheme_end ? (int)(scheme_end + 3 - url) : 0, url, (int)n,
             host);
}

/* The server's own error message in a JSON body, printable and short, into out ("" if none). */
static void server_message(const char *body, size_t len, char *out, size_t outlen)
{
    json_t *root, *e, *m = NULL;
    const char *s = NULL;
    size_t k = 0;

    out[0] = 0;
    if (!body || !len)
        return;
    root = json_loadb(body, len, 0, NULL);
    if (!root)
        return;
    e = json_object_get(root, "error");
    if (json_is_object(e))
        m = json_object_get(e, "message");
    else if (json_is_string(e))
        m = e;
    if (!m)
        m = json_object_get(root, "detail");
    if (!m)
        m = json_object_get(root, "message");
    if (json_is_string(m))
        s = json_string_value(m);
    for (; s && *s && k + 1 < outlen && k < SERVER_MSG_MAX; s++)
        out[k++] = (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s;
    out[k] = 0;
    json_decref(root);
}

static void sleep_s(double s)
{
    struct timespec ts;

    if (!(s > 0))
        return;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int transient_status(long status)
{
    return status == 429 || (status >= 500 && status <= 599);
}

/* One request's settings, defaults applied, shared by its attempts. */
struct http_call {
    const struct vt_http_req *req;
    const char *method;
    double timeout_s;
    size_t max_bytes;
    char *auth, *ctype; /* header lines, NULL when not sent */
    char where[512];    /* the URL for messages */
};

/* A POST's body on h: its parts as multipart (the mime returned, freed after the transfer), or
 * the raw body (NULL returned). */
static curl_mime *set_post_body(CURL *h, const struct vt_http_req *req)
{
    curl_mime *mime;

    if (!req->n_parts) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body ? req->body : "");
        return NULL;
    }
    mime = curl_mime_init(h);
    for (size_t i = 0; i < req->n_parts; i++) {
        const struct vt_http_part *p = &req->parts[i];
        curl_mimepart *mp = curl_mime_addpart(mime);

        curl_mime_name(mp, p->name);
        curl_mime_data(mp, p->data ? p->data : "", p->len);
        if (p->filename)
            curl_mime_filename(mp, p->filename);
        if (p->type)
            curl_mime_type(mp, p->type);
    }
    curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
    return mime;
}

/* Everything h needs for the call but the body; the header list returned, freed after the
 * transfer. */
static struct curl_slist *set_options(CURL *h, const struct http_call *c, struct sink *sink,
                                      char *cerr)
{
    struct curl_slist *headers = NULL;
    double connect_s = c->timeout_s < CONNECT_TIMEOUT_S ? c->timeout_s : CONNECT_TIMEOUT_S;

    curl_easy_setopt(h, CURLOPT_URL, c->req->url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, (long)MAX_REDIRS);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect_s * 1000));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "vidtheque");
    /* no "Expect: 100-continue" round trip before a large body */
    headers = curl_slist_append(headers, "Expect:");
    if (c->auth)
        headers = curl_slist_append(headers, c->auth);
    if (c->ctype)
        headers = curl_slist_append(headers, c->ctype);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    return headers;
}

/*
 * One attempt of the call: resp holds what came back. 0 on a 2xx; else a VT_E* code with
 * its message in err, *again set when the failure may pass (a connection failure, a
 * timeout, 429, 5xx) and *retry_after_s what the server asked to wait.
 */
static int attempt_once(const struct http_call *c, struct vt_http_resp *resp,
                        curl_off_t *retry_after_s, int *again, char *err, size_t errlen)
{
    CURL *h = curl_easy_init();
    struct curl_slist *headers;
    curl_mime *mime = NULL;
    struct sink sink = {.max = c->max_bytes};
    char cerr[CURL_ERROR_SIZE] = "", msg[SERVER_MSG_MAX + 1];
    CURLcode cc;
    long status = 0;

    *again = 0;
    if (!h)
        return vt_err(err, errlen, VT_EIO, "'%s': libcurl: cannot make a handle", c->where);
    headers = set_options(h, c, &sink, cerr);
    if (!strcmp(c->method, "POST"))
        mime = set_post_body(h, c->req);
    else
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    cc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, retry_after_s);
    curl_mime_free(mime);
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);

    vt_http_resp_release(resp);
    resp->status = status;
    resp->body = sink.buf ? sink.buf : vt_xstrdup("");
    resp->len = sink.len;
    if (sink.over)
        return vt_err(err, errlen, VT_EIO, "'%s': response over %zu bytes", c->where, c->max_bytes);
    if (cc != CURLE_OK) {
        const char *why = cerr[0] ? cerr : curl_easy_strerror(cc);

        resp->status = 0;
        *again = cc != CURLE_UNSUPPORTED_PROTOCOL && cc != CURLE_URL_MALFORMAT &&
                 cc != CURLE_TOO_MANY_REDIRECTS;
        return vt_err(err, errlen, *again ? VT_EIO : VT_EINVAL, "'%s': %s%s", c->where, why,
                      cc == CURLE_OPERATION_TIMEDOUT && !strstr(why, "imed out") ? " (timed out)"
                                                                                 : "");
    }
    if (status >= 200 && status <= 299)
        return 0;
    server_message(resp->body, resp->len, msg, sizeof(msg));
    *again = transient_status(status);
    return vt_err(err, errlen, *again ? VT_EIO : VT_EINVAL, "'%s': HTTP %ld%s%s", c->where, status,
                  msg[0] ? ": " : "", msg);
}

/* Append suffix to the message in err, cut to fit. */
static void err_append(char *err, size_t errlen, const char *suffix)
{
    size_t l = err ? strlen(err) : 0;

    if (l + 1 < errlen)
        snprintf(err + l, errlen - l, "%s", suffix);
}

/* The wait before attempt + 1: the backoff doubled per attempt, or the server's Retry-After
 * when longer. */
static double retry_wait_s(double backoff_s, int attempt, curl_off_t retry_after_s)
{
    double wait = backoff_s;

    for (int k = 1; k < attempt; k++)
        wait *= 2;
    if ((double)retry_after_s > wait)
        wait = (double)retry_after_s;
    return wait;
}

int vt_http_do(const struct vt_http_req *req, struct vt_http_resp *resp, char *err, size_t errlen)
{
    struct http_call c = {
        .req = req,
        .method = req->method ? req->method : "GET",
        .timeout_s = req->timeout_s > 0 ? req->timeout_s : DEFAULT_TIMEOUT_S,
        .max_bytes = req->max_bytes ? req->max_bytes : DEFAULT_MAX_BYTES,
    };
    int attempts = req->retries > 0 ? req->retries : DEFAULT_RETRIES;
    double backoff_s = req->backoff_s > 0 ? req->backoff_s : DEFAULT_BACKOFF_S;
    double t0 = vt_monotonic_s();
    int rc;

    memset(resp, 0, sizeof(*resp));
    if (!is_http_url(req->url))
        return vt_err(err, errlen, VT_EINVAL, "'%s': not an http(s) URL", req->url ? req->url : "");
    url_for_msg(req->url, c.where, sizeof(c.where));
    if (strcmp(c.method, "GET") && strcmp(c.method, "POST"))
        return vt_err(err, errlen, VT_EINVAL, "'%s': method '%s' not supported", c.where, c.method);
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return vt_err(err, errlen, VT_EIO, "libcurl: cannot initialise: %s",
                      curl_easy_strerror(global_rc));
    if (req->bearer && *req->bearer)
        c.auth = vt_xasprintf("Authorization: Bearer %s", req->bearer);
    if (req->content_type && !req->n_parts)
        c.ctype = vt_xasprintf("Content-Type: %s", req->content_type);

    for (int attempt = 1;; attempt++) {
        curl_off_t retry_after_s = 0;
        char note[64];
        int again;
        double left_s = thread_deadline_s > 0 ? thread_deadline_s - vt_monotonic_s() : 0;

        if (thread_deadline_s > 0 && left_s < c.timeout_s)
            c.timeout_s = left_s > 0.002 ? left_s : 0.002;
        rc = attempt_once(&c, resp, &retry_after_s, &again, err, errlen);
        if (!rc)
            break;
        if (!again || attempt >= attempts) {
            if (again && attempt > 1) {
                snprintf(note, sizeof(note), " (after %d attempts)", attempt);
                err_append(err, errlen, note);
            }
            break;
        }
        if (retry_after_s > RETRY_AFTER_MAX_S) {
            snprintf(note, sizeof(note), " (retry after %lld s)", (long long)retry_after_s);
            err_append(err, errlen, note);
            break;
        }
        if (thread_deadline_s > 0 &&
            vt_monotonic_s() + retry_wait_s(backoff_s, attempt, retry_after_s) >=
                thread_deadline_s) {
            snprintf(note, sizeof(note), " (out of time after %d attempt%s)", attempt,
                     attempt > 1 ? "s" : "");
            err_append(err, errlen, note);
            break;
        }
        sleep_s(retry_wait_s(backoff_s, attempt, retry_after_s));
    }
    resp->took_s = vt_monotonic_s() - t0;
    free(c.auth);
    free(c.ctype);
    return rc;
}

void vt_http_url_drop_userinfo(char *url)
{
    char *host = strstr(url, "://"), *at, *slash;

    if (!host)
        return;
    host += 3;
    at = strchr(host, '@');
    slash = strchr(host, '/');
    if (at && (!slash || at < slash))
        memmove(host, at + 1, strlen(at + 1) + 1);
}
