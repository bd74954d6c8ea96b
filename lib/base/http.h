/*
 * HTTP for talking to model servers and model hubs (libcurl): one request at a time
 * per handle, with a timeout, a cap on the response's size, and retries with backoff
 * for what may pass. Only http:// and https:// URLs are accepted; redirects are
 * followed (at most 5) only to http(s).
 */
#ifndef VT_HTTP_H
#define VT_HTTP_H

#include <stddef.h>

struct vt_http_part { /* one part of a multipart/form-data body */
    const char *name;
    const char *filename; /* NULL for a plain field */
    const char *type;     /* content type of a file part, e.g. "audio/wav" */
    const void *data;
    size_t len;
};

struct vt_http_req {
    const char *method; /* "GET" or "POST" */
    const char *url;
    const char *bearer;       /* Authorization: Bearer ..., when non-NULL and non-empty */
    const char *content_type; /* of body, e.g. "application/json" */
    const void *body;
    size_t body_len;
    const struct vt_http_part *parts; /* multipart body instead of body, when n_parts > 0 */
    size_t n_parts;
    double timeout_s; /* whole request (0: 60) */
    size_t max_bytes; /* response body cap (0: 64 MB); more is an error */
    int retries;      /* attempts on connection errors, timeouts, 429 and 5xx (0: 3) */
    double backoff_s; /* first wait between attempts, doubled each time (0: 0.5) */
};

struct vt_http_resp {
    long status; /* HTTP status of the last attempt, 0 when none was received */
    char *body;  /* NUL-terminated, caller-frees (vt_http_resp_release) */
    size_t len;
    double took_s;
};

/*
 * Perform req. 0 when a response with a 2xx status arrived; else VT_EIO (could not
 * connect, timed out, 429 or 5xx after the retries, response over max_bytes) or
 * VT_EINVAL (another 4xx, a URL that is not http(s)), with one line in err naming
 * the URL and the reason (the server's own error message when its body says one).
 * resp is filled whenever a response arrived, whatever the status.
 */
int vt_http_do(const struct vt_http_req *req, struct vt_http_resp *resp, char *err, size_t errlen);
void vt_http_resp_release(struct vt_http_resp *resp);

/*
 * A deadline for every vt_http_do of the calling thread until it is set again: deadline_s
 * on vt_monotonic_s's clock (0: none). Each attempt's timeout is cut to the time left, and
 * no retry starts that would end past it. For a caller whose work has one time budget
 * while the requests are made far below it (a search embedding its query: lib/search).
 * Returns the deadline it replaces, to be set back.
 */
double vt_http_deadline_set(double deadline_s);

/* Drop "user:password@" from url in place, for a URL shown to people (provenance, logs). */
void vt_http_url_drop_userinfo(char *url);

#endif
