/*
 * The hub client (hub.h): libcurl easy handles, one request at a time. API answers are
 * read into memory under a cap; model files are streamed to disk, continued with a
 * Range request after an interruption, then checked whole (size, then SHA-256 or the
 * git blob id) before anything is installed. Transient failures (connection lost,
 * timeouts, 5xx, a short body) are retried a few times, each retry continuing where
 * the file stopped; the rest fail at once.
 */
#include "ml/hub.h"

#include "base/sha256.h"
#include "base/util.h"
#include "ml/model_check.h"
#include "ml/models.h"
#include "ml/tflite.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HUB_DEFAULT_ENDPOINT "https://huggingface.co"
#define API_MAX_BYTES        (16 * 1024 * 1024)
#define WEIGHTS_MAX_BYTES    (2048ULL * 1024 * 1024)
#define OTHER_MAX_BYTES      (64ULL * 1024 * 1024)
#define ATTEMPTS             3
#define CONNECT_TIMEOUT_S    15
#define API_TIMEOUT_S        60
#define LOW_SPEED_BYTES      1024 /* abort a transfer slower than this ... */
#define LOW_SPEED_TIME_S     30   /* ... for this long */

#define NAME_MAX_BYTES 128 /* a model file name the hub lists */

struct want {
    const char *path; /* NULL: the image model's file (pull.image_file) */
    int required;
    uint64_t max_bytes;
};

/* The files a Model2Vec model is made of; the first three must be there. */
static const struct want text_files[] = {
    {"model.safetensors", 1, WEIGHTS_MAX_BYTES}, {"tokenizer.json", 1, OTHER_MAX_BYTES},
    {"config.json", 1, OTHER_MAX_BYTES},         {"modules.json", 0, OTHER_MAX_BYTES},
    {"README.md", 0, OTHER_MAX_BYTES},           {"LICENSE", 0, OTHER_MAX_BYTES},
};
/* An image model: its one .tflite file (no larger than tflite.c reads), and its notes. */
static const struct want image_files[] = {
    {NULL, 1, VT_TFLITE_MAX_FILE},
    {"README.md", 0, OTHER_MAX_BYTES},
    {"LICENSE", 0, OTHER_MAX_BYTES},
};
/* A Whisper model as transformers saves it (the vocabulary is Whisper's own tiktoken file,
 * installed with vidtheque, not the checkpoint's vocab.json). */
static const struct want speech_files[] = {
    {"model.safetensors", 1, WEIGHTS_MAX_BYTES},
    {"config.json", 1, OTHER_MAX_BYTES},
    {"generation_config.json", 1, OTHER_MAX_BYTES},
    {"README.md", 0, OTHER_MAX_BYTES},
    {"LICENSE", 0, OTHER_MAX_BYTES},
};
#define N_WANTED VT_ARRAY_LEN(text_files)

struct hub_file {
    char path[NAME_MAX_BYTES + 1];
    uint64_t size, max_bytes;
    char sha256[65]; /* from the hub (LFS files), else computed */
    char git_oid[41];
    int lfs;
};

struct pull {
    const char *lib_dir;
    const struct vt_hub_opts *o;
    char endpoint[1024];
    char repo[256], folder[256], revision[256], commit[41];
    char partial[PATH_MAX]; /* LIBRARY/models/.partial/<folder> */
    char target[PATH_MAX];  /* LIBRARY/models/<folder> */
    struct hub_file files[N_WANTED];
    size_t n_files;
    enum vt_model_kind kind;
    const struct vt_model_known *known; /* NULL: a repo id we know nothing of */
    char image_file[NAME_MAX_BYTES + 1];
    char *err;
    size_t errlen;
};

static void note(const struct pull *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const struct pull *p, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (!p->o || !p->o->note)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    p->o->note(p->o->user, msg);
}

static int is_hex(const char *s, size_t n)
{
    if (!s || strlen(s) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/* Percent-encode everything but RFC 3986's unreserved characters. */
static void url_escape(struct vt_sb *sb, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~')
            vt_sb_addc(sb, (char)c);
        else
            vt_sb_addf(sb, "%%%02X", c);
    }
}

static int set_endpoint(struct pull *p)
{
    const char *e = p->o && p->o->endpoint ? p->o->endpoint : getenv("HF_ENDPOINT");
    size_t n;

    if (!e || !*e)
        e = HUB_DEFAULT_ENDPOINT;
    if (strncmp(e, "https://", 8) && strncmp(e, "http://", 7))
        return vt_err(p->err, p->errlen, VT_EINVAL, "hub endpoint '%s' is not an http(s) URL", e);
    if (strpbrk(e, " \t\r\n?#"))
        return vt_err(p->err, p->errlen, VT_EINVAL, "hub endpoint '%s' is not a base URL", e);
    n = strlen(e);
    while (n && e[n - 1] == '/')
        n--;
    if (n >= sizeof(p->endpoint))
        return vt_err(p->err, p->errlen, VT_EINVAL, "hub endpoint too long");
    memcpy(p->endpoint, e, n);
    p->endpoint[n] = '\0';
    return 0;
}

/* Options every request shares: http(s) only, redirects followed (to http(s) only),
 * a connect timeout and an abort when the transfer stalls. */
static void common_opts(CURL *c, const char *url, char *curl_err)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_S);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, (long)LOW_SPEED_BYTES);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)LOW_SPEED_TIME_S);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "vidtheque/" VIDTHEQUE_VERSION);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
    curl_err[0] = '\0';
    /* a token for private or gated repos, as the official client reads it; libcurl sends
     * it to the hub's host only, not to the CDN a file is redirected to */
    const char *token = getenv("HF_TOKEN");
    if (token && *token) {
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, token);
    }
}

static int transient_curl(CURLcode rc)
{
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT ||
           rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
           rc == CURLE_GOT_NOTHING || rc == CURLE_HTTP2 || rc == CURLE_HTTP2_STREAM ||
           rc == CURLE_SSL_CONNECT_ERROR;
}

static int transient_status(long status)
{
    return status == 429 || status >= 500;
}

/* Wait before attempt number `attempt` (1, 2, ...): 0.25 s, then doubling. */
static void backoff(int attempt)
{
    struct timespec ts = {0, 250000000L};

    for (int i = 1; i < attempt; i++) {
        ts.tv_sec *= 2;
        ts.tv_nsec *= 2;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec += 1;
            ts.tv_nsec -= 1000000000L;
        }
    }
    nanosleep(&ts, NULL);
}

/* ---- API requests: a JSON answer in memory ---- */

struct membuf {
    struct vt_sb sb;
    size_t cap;
    int over;
};

static size_t mem_write(char *ptr, size_t size, size_t nmemb, void *user)
{
    struct membuf *m = user;
    size_t n = size * nmemb;

    if (m->sb.len + n > m->cap) {
        m->over = 1;
        return 0;
    }
    vt_sb_add(&m->sb, ptr, n);
    return n;
}

/* GET url; 0 with the parsed JSON in *out (caller decrefs), else an error code. what
 * names the request in messages. A 401 or 404 gives VT_ENOTFOUND (the hub answers 401
 * for a repo that does not exist as for a private one). */
static int api_get(struct pull *p, const char *url, const char *what, json_t **out)
{
    char curl_err[CURL_ERROR_SIZE];
    int rc = VT_EIO;

    *out = NULL;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
        struct membuf m = {{NULL, 0, 0}, API_MAX_BYTES, 0};
        CURL *c = curl_easy_init();
        CURLcode cr;
        long status = 0;
        json_error_t je;

        if (!c)
            return vt_err(p->err, p->errlen, VT_EIO, "%s: cannot start libcurl", what);
        if (attempt > 1)
            backoff(attempt - 1);
        common_opts(c, url, curl_err);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)API_TIMEOUT_S);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, mem_write);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &m);
        curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
        cr = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_cleanup(c);
        if (m.over) {
            vt_sb_release(&m.sb);
            return vt_err(p->err, p->errlen, VT_EIO, "%s: answer over %d MiB ('%s')", what,
                          API_MAX_BYTES >> 20, url);
        }
        if (cr != CURLE_OK) {
            vt_sb_release(&m.sb);
            rc = vt_err(p->err, p->errlen, VT_EIO, "%s: %s ('%s')", what,
                        curl_err[0] ? curl_err : curl_easy_strerror(cr), url);
            if (transient_curl(cr))
                continue;
            return rc;
        }
        if (status == 401 || status == 404) {
            vt_sb_release(&m.sb);
            return vt_err(p->err, p->errlen, VT_ENOTFOUND,
                          "%s: not found on the hub (HTTP %ld, '%s')", what, status, url);
        }
        if (status != 200) {
            vt_sb_release(&m.sb);
            rc = vt_err(p->err, p->errlen, VT_EIO, "%s: HTTP status %ld ('%s')", what, status, url);
            if (transient_status(status))
                continue;
            return rc;
        }
        *out = json_loadb(m.sb.buf ? m.sb.buf : "", m.sb.len, 0, &je);
        vt_sb_release(&m.sb);
        if (!*out)
            return vt_err(p->err, p->errlen, VT_EIO, "%s: the hub's answer is not JSON (%s)", what,
                          je.text);
        return 0;
    }
    return rc;
}

/* The commit the revision is at. */
static int get_commit(struct pull *p)
{
    struct vt_sb url = {0};
    json_t *j = NULL;
    char what[600];
    int rc;

    vt_sb_addf(&url, "%s/api/models/%s/revision/", p->endpoint, p->repo);
    url_escape(&url, p->revision);
    snprintf(what, sizeof(what), "model '%s' at revision '%s'", p->repo, p->revision);
    rc = api_get(p, url.buf, what, &j);
    if (rc)
        goto out;
    const char *sha = json_string_value(json_object_get(j, "sha"));
    if (!is_hex(sha, 40)) {
        rc = vt_err(p->err, p->errlen, VT_EIO, "%s: the hub gave no commit id", what);
        goto out;
    }
    memcpy(p->commit, sha, 41);
out:
    json_decref(j);
    vt_sb_release(&url);
    return rc;
}

/* The top-level file of the tree named path, or NULL. */
static json_t *tree_file(json_t *tree, const char *path)
{
    json_t *e = NULL;
    for (size_t i = 0; i < json_array_size(tree); i++) {
        json_t *x = json_array_get(tree, i);
        const char *type = json_string_value(json_object_get(x, "type"));
        const char *xp = json_string_value(json_object_get(x, "path"));
        if (type && xp && !strcmp(type, "file") && !strcmp(xp, path))
            e = x;
    }
    return e;
}

/* A file name the hub lists that may become a file of ours: letters, digits, '.', '-',
 * '_', not starting with '.', ending with ".tflite". */
static int tflite_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n <= 7 || n > NAME_MAX_BYTES || s[0] == '.' || strcmp(s + n - 7, ".tflite"))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '-' || s[i] == '_'))
            return 0;
    return 1;
}

/*
 * Which kind of model the repo holds: a known name says; otherwise a Model2Vec model
 * (model.safetensors), else an image model when the top of the tree holds exactly one
 * .tflite file.
 */
static int choose_kind(struct pull *p, json_t *tree)
{
    p->known = vt_models_known_find(p->repo);
    if (p->known) {
        p->kind = p->known->kind;
        if (p->kind == VT_MODEL_IMAGE)
            snprintf(p->image_file, sizeof(p->image_file), "%s", p->known->file);
        return 0;
    }
    p->kind = VT_MODEL_TEXT;
    if (tree_file(tree, "model.safetensors"))
        return 0;
    int n = 0;
    for (size_t i = 0; i < json_array_size(tree); i++) {
        json_t *x = json_array_get(tree, i);
        const char *type = json_string_value(json_object_get(x, "type"));
        const char *xp = json_string_value(json_object_get(x, "path"));
        size_t l = xp ? strlen(xp) : 0;
        if (!type || strcmp(type, "file") || l <= 7 || strcmp(xp + l - 7, ".tflite"))
            continue;
        if (!tflite_name_ok(xp))
            return vt_err(p->err, p->errlen, VT_EINVAL,
                          "'%s' at %.12s: the model file name '%.80s' is not one to write", p->repo,
                          p->commit, xp);
        if (n++)
            return vt_err(p->err, p->errlen, VT_EINVAL,
                          "'%s' at %.12s holds several .tflite files: not one image model", p->repo,
                          p->commit);
        snprintf(p->image_file, sizeof(p->image_file), "%s", xp);
    }
    if (n == 1)
        p->kind = VT_MODEL_IMAGE;
    return 0;
}

/* The files to fetch, with sizes and digests, from the tree of the commit. */
static int get_files(struct pull *p)
{
    struct vt_sb url = {0};
    json_t *tree = NULL;
    char what[600];
    int rc;

    vt_sb_addf(&url, "%s/api/models/%s/tree/%s", p->endpoint, p->repo, p->commit);
    snprintf(what, sizeof(what), "file list of '%s' at %.12s", p->repo, p->commit);
    rc = api_get(p, url.buf, what, &tree);
    if (rc)
        goto out;
    if (!json_is_array(tree)) {
        rc = vt_err(p->err, p->errlen, VT_EIO, "%s: not a JSON array", what);
        goto out;
    }
    rc = choose_kind(p, tree);
    if (rc)
        goto out;
    const struct want *wanted = p->kind == VT_MODEL_IMAGE    ? image_files
                                : p->kind == VT_MODEL_SPEECH ? speech_files
                                                             : text_files;
    size_t n_wanted = p->kind == VT_MODEL_IMAGE    ? VT_ARRAY_LEN(image_files)
                      : p->kind == VT_MODEL_SPEECH ? VT_ARRAY_LEN(speech_files)
                                                   : VT_ARRAY_LEN(text_files);
    for (size_t w = 0; w < n_wanted; w++) {
        const char *path = wanted[w].path ? wanted[w].path : p->image_file;
        json_t *e = tree_file(tree, path);
        if (!e) {
            if (wanted[w].required) {
                rc = vt_err(p->err, p->errlen, VT_EINVAL, "'%s' at %.12s has no '%s': %s", p->repo,
                            p->commit, path,
                            p->kind == VT_MODEL_IMAGE    ? "not the image model expected"
                            : p->kind == VT_MODEL_SPEECH ? "not a Whisper model in transformers' "
                                                           "layout"
                                                         : "not a Model2Vec model (nor a TFLite "
                                                           "image model: no single .tflite file)");
                goto out;
            }
            continue;
        }
        struct hub_file *f = &p->files[p->n_files];
        json_t *lfs = json_object_get(e, "lfs");
        const char *oid = json_string_value(json_object_get(e, "oid"));
        json_t *size = json_object_get(json_is_object(lfs) ? lfs : e, "size");

        memset(f, 0, sizeof(*f));
        snprintf(f->path, sizeof(f->path), "%s", path);
        f->max_bytes = wanted[w].max_bytes;
        if (!json_is_integer(size) || json_integer_value(size) < 0) {
            rc = vt_err(p->err, p->errlen, VT_EIO, "'%s': the hub lists no size", f->path);
            goto out;
        }
        f->size = (uint64_t)json_integer_value(size);
        if (f->size > f->max_bytes) {
            rc = vt_err(p->err, p->errlen, VT_EINVAL,
                        "'%s': %llu bytes, over the cap of %llu MiB for this file", f->path,
                        (unsigned long long)f->size, (unsigned long long)(f->max_bytes >> 20));
            goto out;
        }
        if (json_is_object(lfs)) {
            const char *sha = json_string_value(json_object_get(lfs, "oid"));
            if (!is_hex(sha, 64)) {
                rc = vt_err(p->err, p->errlen, VT_EIO, "'%s': the hub lists no SHA-256", f->path);
                goto out;
            }
            memcpy(f->sha256, sha, 65);
            f->lfs = 1;
        } else if (!is_hex(oid, 40)) {
            rc = vt_err(p->err, p->errlen, VT_EIO, "'%s': the hub lists no git blob id", f->path);
            goto out;
        }
        if (oid && is_hex(oid, 40))
            memcpy(f->git_oid, oid, 41);
        p->n_files++;
    }
out:
    json_decref(tree);
    vt_sb_release(&url);
    return rc;
}

/* ---- downloading one file ---- */

struct dl {
    CURL *c;
    const struct pull *p;
    const struct hub_file *f;
    int fd;
    uint64_t have;      /* bytes in the file now */
    int asked_range;    /* a Range request was sent */
    long long cr_start; /* start of the last Content-Range seen, -1 for none */
    int started;
    long status;
    char why[512]; /* why the write callback stopped the transfer */
    int why_transient;
};

static size_t dl_header(char *buf, size_t size, size_t nitems, void *user)
{
    struct dl *d = user;
    size_t n = size * nitems;

    if (n >= 5 && !strncmp(buf, "HTTP/", 5)) {
        d->cr_start = -1; /* a new response (after a redirect) */
    } else if (n > 14 && !strncasecmp(buf, "Content-Range:", 14)) {
        char tmp[128];
        unsigned long long s;
        snprintf(tmp, sizeof(tmp), "%.*s", (int)(n - 14), buf + 14);
        if (sscanf(tmp, " bytes %llu-", &s) == 1)
            d->cr_start = (long long)s;
    }
    return n;
}

static size_t dl_write(char *ptr, size_t size, size_t nmemb, void *user)
{
    struct dl *d = user;
    size_t n = size * nmemb;
    const char *path = d->f->path;

    if (!d->started) {
        d->started = 1;
        curl_easy_getinfo(d->c, CURLINFO_RESPONSE_CODE, &d->status);
        if (d->status == 206 && d->asked_range) {
            if (d->cr_start != (long long)d->have) {
                snprintf(d->why, sizeof(d->why),
                         "the server resumed at byte %lld, not %llu as asked", d->cr_start,
                         (unsigned long long)d->have);
                return 0;
            }
        } else if (d->status == 200) {
            if (d->have) {
                note(d->p, "'%s': the server ignored the range, downloading it again", path);
                if (ftruncate(d->fd, 0) || lseek(d->fd, 0, SEEK_SET) < 0) {
                    snprintf(d->why, sizeof(d->why), "cannot truncate: %s", strerror(errno));
                    return 0;
                }
                d->have = 0;
            }
        } else {
            snprintf(d->why, sizeof(d->why), "HTTP status %ld", d->status);
            d->why_transient = transient_status(d->status);
            return 0;
        }
    }
    if (d->have + n > d->f->size) {
        snprintf(d->why, sizeof(d->why), "the server sends more than the %llu bytes the hub lists",
                 (unsigned long long)d->f->size);
        return 0;
    }
    for (size_t off = 0; off < n;) {
        ssize_t w = write(d->fd, ptr + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(d->why, sizeof(d->why), "cannot write: %s", strerror(errno));
            return 0;
        }
        off += (size_t)w;
    }
    d->have += n;
    if (d->p->o && d->p->o->progress)
        d->p->o->progress(d->p->o->user, path, d->have, d->f->size);
    return n;
}

/* One attempt at fetching the rest of f into fd (which holds *have bytes). 0 when the
 * transfer ended normally (the size is checked by the caller); else an error, with
 * *transient saying whether another attempt may pass. */
static int download_once(struct pull *p, const struct hub_file *f, int fd, uint64_t *have,
                         int *transient)
{
    char curl_err[CURL_ERROR_SIZE], range[64];
    struct vt_sb url = {0};
    struct dl d = {0};
    CURLcode cr;
    int rc = 0;
    CURL *c = curl_easy_init();

    *transient = 0;
    if (!c)
        return vt_err(p->err, p->errlen, VT_EIO, "'%s': cannot start libcurl", f->path);
    vt_sb_addf(&url, "%s/%s/resolve/%s/%s", p->endpoint, p->repo, p->commit, f->path);
    d.c = c;
    d.p = p;
    d.f = f;
    d.fd = fd;
    d.have = *have;
    d.cr_start = -1;
    common_opts(c, url.buf, curl_err);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, dl_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &d);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, dl_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &d);
    if (*have) {
        snprintf(range, sizeof(range), "%llu-", (unsigned long long)*have);
        curl_easy_setopt(c, CURLOPT_RANGE, range);
        d.asked_range = 1;
        note(p, "'%s': resuming at byte %llu of %llu", f->path, (unsigned long long)*have,
             (unsigned long long)f->size);
    }
    cr = curl_easy_perform(c);
    if (!d.started)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &d.status);
    *have = d.have;
    if (d.why[0]) {
        rc = vt_err(p->err, p->errlen, VT_EIO, "'%s': %s ('%s')", f->path, d.why, url.buf);
        *transient = d.why_transient;
    } else if (cr != CURLE_OK) {
        rc = vt_err(p->err, p->errlen, VT_EIO, "'%s': %s ('%s')", f->path,
                    curl_err[0] ? curl_err : curl_easy_strerror(cr), url.buf);
        *transient = transient_curl(cr);
    } else if (!d.started && d.status == 416 && d.asked_range) {
        rc = vt_err(p->err, p->errlen, VT_EIO,
                    "'%s': the server stops short of the %llu bytes the hub lists (HTTP 416 for "
                    "the rest from byte %llu, '%s')",
                    f->path, (unsigned long long)f->size, (unsigned long long)*have, url.buf);
    } else if (!d.started && d.status != 200 && !(d.status == 206 && d.asked_range)) {
        /* no body came: an error status, or a 416 for a range past the end */
        rc = vt_err(p->err, p->errlen, VT_EIO, "'%s': HTTP status %ld ('%s')", f->path, d.status,
                    url.buf);
        *transient = transient_status(d.status);
    }
    curl_easy_cleanup(c);
    vt_sb_release(&url);
    return rc;
}

/* SHA-256 of the file and, when git_oid is non-NULL, its git blob id (SHA-1 of
 * "blob <size>\0" and the bytes; an LFS file's blob is its pointer, so not asked for). */
static int hash_file(struct pull *p, const char *path, const char *name, char sha256[65],
                     char *git_oid)
{
    struct vt_sha256 s;
    struct vt_sha1 g;
    uint8_t buf[1 << 16], d256[32], d1[20];
    char head[64];
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n;

    if (fd < 0 || fstat(fd, &st))
        return vt_err(p->err, p->errlen, VT_EIO, "'%s': cannot read it back: %s", name,
                      strerror(errno));
    vt_sha256_init(&s);
    vt_sha1_init(&g);
    n = snprintf(head, sizeof(head), "blob %llu", (unsigned long long)st.st_size);
    vt_sha1_update(&g, head, (size_t)n + 1);
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return vt_err(p->err, p->errlen, VT_EIO, "'%s': cannot read it back: %s", name,
                          strerror(e));
        }
        vt_sha256_update(&s, buf, (size_t)n);
        if (git_oid)
            vt_sha1_update(&g, buf, (size_t)n);
    }
    close(fd);
    vt_sha256_final(&s, d256);
    vt_sha1_final(&g, d1);
    vt_hex(sha256, d256, 32);
    if (git_oid)
        vt_hex(git_oid, d1, 20);
    return 0;
}

/* Check the complete file against the hub's digest; fill f's digests. */
static int verify(struct pull *p, struct hub_file *f, const char *path)
{
    char sha256[65], oid[41];
    int rc = hash_file(p, path, f->path, sha256, f->lfs ? NULL : oid);

    if (rc)
        return rc;
    if (f->lfs && strcmp(sha256, f->sha256))
        return vt_err(p->err, p->errlen, VT_EIO,
                      "'%s': SHA-256 mismatch (the hub lists %s, the download has %s)", f->path,
                      f->sha256, sha256);
    if (!f->lfs && strcmp(oid, f->git_oid))
        return vt_err(p->err, p->errlen, VT_EIO,
                      "'%s': git blob id mismatch (the hub lists %s, the download has %s)", f->path,
                      f->git_oid, oid);
    memcpy(f->sha256, sha256, 65);
    return 0;
}

/* Fetch f into the partial folder (continuing what is there) and verify it. */
static int fetch_file(struct pull *p, struct hub_file *f)
{
    char path[PATH_MAX + 64];
    struct stat st;
    uint64_t have;
    int rc = 0, fd, restarted = 0;

    snprintf(path, sizeof(path), "%s/%s", p->partial, f->path);
again:
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 || fstat(fd, &st))
        return vt_err(p->err, p->errlen, VT_EIO, "'%s': cannot write '%s': %s", f->path, path,
                      strerror(errno));
    have = (uint64_t)st.st_size;
    if (have > f->size) {
        if (ftruncate(fd, 0)) {
            rc = vt_err(p->err, p->errlen, VT_EIO, "'%s': %s", f->path, strerror(errno));
            goto out;
        }
        have = 0;
    }
    if (lseek(fd, (off_t)have, SEEK_SET) < 0) {
        rc = vt_err(p->err, p->errlen, VT_EIO, "'%s': %s", f->path, strerror(errno));
        goto out;
    }
    int resumed = have > 0;
    for (int attempt = 1; have < f->size || (f->size == 0 && attempt == 1); attempt++) {
        int transient = 0;
        if (attempt > ATTEMPTS)
            goto out; /* rc holds the last attempt's error */
        if (attempt > 1)
            backoff(attempt - 1);
        rc = download_once(p, f, fd, &have, &transient);
        if (rc && !transient)
            goto out;
        if (!rc && have < f->size) {
            rc = vt_err(p->err, p->errlen, VT_EIO, "'%s': the server sent %llu of %llu bytes",
                        f->path, (unsigned long long)have, (unsigned long long)f->size);
        } else if (!rc) {
            break;
        }
    }
    rc = 0;
    if (fsync(fd)) {
        rc = vt_err(p->err, p->errlen, VT_EIO, "'%s': %s", f->path, strerror(errno));
        goto out;
    }
    close(fd);
    fd = -1;
    if (p->o && p->o->progress)
        p->o->progress(p->o->user, f->path, f->size, f->size);
    rc = verify(p, f, path);
    if (rc) {
        unlink(path); /* a bad file is not continued next time */
        if (resumed && !restarted) {
            note(p, "'%s': the resumed file does not check, downloading it again", f->path);
            restarted = 1;
            goto again;
        }
    }
out:
    if (fd >= 0)
        close(fd);
    return rc;
}

/* ---- manifest and install ---- */

static int write_manifest(struct pull *p, const char *dir)
{
    json_t *m = json_object(), *files = json_array();
    char when[32], path[PATH_MAX + 32];
    char *text;
    int rc;

    vt_utc_iso(when, sizeof(when), vt_wall_s());
    json_object_set_new(m, "repo", json_string(p->repo));
    json_object_set_new(m, "revision", json_string(p->revision));
    json_object_set_new(m, "commit", json_string(p->commit));
    json_object_set_new(m, "endpoint", json_string(p->endpoint));
    json_object_set_new(m, "pulled_at", json_string(when));
    json_object_set_new(m, "kind",
                        json_string(p->kind == VT_MODEL_IMAGE    ? "image"
                                    : p->kind == VT_MODEL_SPEECH ? "speech"
                                                                 : "text"));
    if (p->kind == VT_MODEL_IMAGE && p->known && p->known->tensor)
        json_object_set_new(m, "tensor", json_string(p->known->tensor));
    for (size_t i = 0; i < p->n_files; i++) {
        const struct hub_file *f = &p->files[i];
        json_array_append_new(files, json_pack("{s:s, s:I, s:s, s:s, s:b}", "path", f->path, "size",
                                               (json_int_t)f->size, "sha256", f->sha256, "git_oid",
                                               f->git_oid, "lfs", f->lfs));
    }
    json_object_set_new(m, "files", files);
    text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(m);
    snprintf(path, sizeof(path), "%s/%s", dir, VT_MODELS_MANIFEST);
    rc = vt_write_file_atomic(path, text, strlen(text), p->err, p->errlen);
    free(text);
    return rc;
}

/* Whether the target folder holds this commit already, whole. */
static int installed_already(struct pull *p)
{
    char path[PATH_MAX + 32];
    json_error_t je;
    json_t *m, *files;
    int same = 0;

    char *text = NULL;
    size_t len;

    snprintf(path, sizeof(path), "%s/%s", p->target, VT_MODELS_MANIFEST);
    if (vt_read_file_capped(path, "manifest", 1024 * 1024, &text, &len, NULL, 0))
        return 0;
    m = json_loadb(text, len, 0, &je);
    free(text);
    if (!m)
        return 0;
    const char *commit = json_string_value(json_object_get(m, "commit"));
    files = json_object_get(m, "files");
    same =
        commit && !strcmp(commit, p->commit) && json_is_array(files) && json_array_size(files) > 0;
    for (size_t i = 0; same && i < json_array_size(files); i++) {
        json_t *f = json_array_get(files, i);
        const char *fp = json_string_value(json_object_get(f, "path"));
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", p->target, fp ? fp : "");
        same = fp && !strchr(fp, '/') && !stat(path, &st) && S_ISREG(st.st_mode) &&
               (json_int_t)st.st_size == json_integer_value(json_object_get(f, "size"));
    }
    json_decref(m);
    return same;
}

/* Rename the complete folder into place; an older install is swapped out in the same
 * step (RENAME_EXCHANGE) and then removed. */
static int install(struct pull *p)
{
    struct stat st;

    if (lstat(p->target, &st) && errno == ENOENT) {
        if (rename(p->partial, p->target))
            return vt_err(p->err, p->errlen, VT_EIO, "cannot install '%s': %s", p->target,
                          strerror(errno));
        return 0;
    }
    if (renameat2(AT_FDCWD, p->partial, AT_FDCWD, p->target, RENAME_EXCHANGE) == 0) {
        vt_rm_rf(p->partial); /* now the old install */
        return 0;
    }
    /* a file system without RENAME_EXCHANGE: move the old one aside first */
    char *old = vt_xasprintf("%s.old", p->partial);
    vt_rm_rf(old);
    if (rename(p->target, old) || rename(p->partial, p->target)) {
        int e = errno;
        free(old);
        return vt_err(p->err, p->errlen, VT_EIO, "cannot install '%s': %s", p->target, strerror(e));
    }
    vt_rm_rf(old);
    free(old);
    return 0;
}

/* The partial folder for this commit: kept when it is for the same commit (its files
 * are continued), started afresh otherwise. */
static int prepare_partial(struct pull *p)
{
    char mark[PATH_MAX + 16], *old = NULL;
    size_t len;
    int rc;

    snprintf(mark, sizeof(mark), "%s/.commit", p->partial);
    if (vt_read_file_capped(mark, "commit mark", 64, &old, &len, NULL, 0) || strcmp(old, p->commit))
        vt_rm_rf(p->partial);
    free(old);
    rc = vt_mkdir_p(p->partial, p->err, p->errlen);
    if (rc)
        return rc;
    return vt_write_file_atomic(mark, p->commit, 40, p->err, p->errlen);
}

/*
 * Hold the lock file at path (*fd) for one pull: VT_EBUSY when another pull holds it. The
 * holder removes the file when it is done, whatever the outcome (a failed pull used to
 * leave it behind), so a lock taken on a file that was removed or replaced meanwhile is
 * let go and taken again on the file now at path.
 */
static int take_lock(const char *path, const char *repo, int *fd, char *err, size_t errlen)
{
    for (int tries = 0; tries < 100; tries++) {
        struct stat held, now;
        int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (f < 0)
            return vt_err(err, errlen, VT_EIO, "cannot open '%s': %s", path, strerror(errno));
        if (flock(f, LOCK_EX | LOCK_NB)) {
            close(f);
            return vt_err(err, errlen, VT_EBUSY, "another pull of '%s' is running", repo);
        }
        if (!fstat(f, &held) && !stat(path, &now) && held.st_dev == now.st_dev &&
            held.st_ino == now.st_ino) {
            *fd = f;
            return 0;
        }
        close(f);
    }
    return vt_err(err, errlen, VT_EBUSY, "another pull of '%s' is running", repo);
}

int vt_hub_pull(const char *lib_dir, const char *name, const struct vt_hub_opts *opts,
                struct vt_hub_result *res, char *err, size_t errlen)
{
    struct pull *p = vt_xcalloc(1, sizeof(*p));
    char lockpath[PATH_MAX + 16], dir[PATH_MAX];
    int rc, lockfd = -1;

    memset(res, 0, sizeof(*res));
    p->lib_dir = lib_dir;
    p->o = opts;
    p->err = err;
    p->errlen = errlen;
    rc = vt_models_name(name, p->repo, sizeof(p->repo), p->folder, sizeof(p->folder), err, errlen);
    if (rc)
        goto out;
    snprintf(p->revision, sizeof(p->revision), "%s",
             opts && opts->revision ? opts->revision : "main");
    if (!p->revision[0] || strlen(p->revision) > 200 || strpbrk(p->revision, " \t\r\n")) {
        rc = vt_err(err, errlen, VT_EINVAL, "'%s' is not a revision", p->revision);
        goto out;
    }
    rc = set_endpoint(p);
    if (rc)
        goto out;
    if ((size_t)snprintf(p->partial, sizeof(p->partial), "%s/models/.partial/%s", lib_dir,
                         p->folder) >= sizeof(p->partial) ||
        (size_t)snprintf(p->target, sizeof(p->target), "%s/models/%s", lib_dir, p->folder) >=
            sizeof(p->target)) {
        rc = vt_err(err, errlen, VT_EINVAL, "library path too long");
        goto out;
    }
    snprintf(dir, sizeof(dir), "%s/models/.partial", lib_dir);
    rc = vt_mkdir_p(dir, err, errlen);
    if (rc)
        goto out;
    snprintf(lockpath, sizeof(lockpath), "%s.lock", p->partial);
    rc = take_lock(lockpath, p->repo, &lockfd, err, errlen);
    if (rc)
        goto out;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    rc = get_commit(p);
    if (rc)
        goto out;
    snprintf(res->repo, sizeof(res->repo), "%s", p->repo);
    snprintf(res->folder, sizeof(res->folder), "%s", p->target);
    memcpy(res->commit, p->commit, 41);
    if (installed_already(p)) {
        res->already = 1;
        goto out;
    }
    rc = get_files(p);
    if (rc)
        goto out;
    rc = prepare_partial(p);
    if (rc)
        goto out;
    for (size_t i = 0; i < p->n_files; i++) {
        rc = fetch_file(p, &p->files[i]);
        if (rc)
            goto out;
        res->bytes += p->files[i].size;
    }
    res->n_files = (int)p->n_files;
    res->image = p->kind == VT_MODEL_IMAGE;
    res->speech = p->kind == VT_MODEL_SPEECH;
    /* run end to end through its default tensor: which tensor the stage takes is the
     * config's choice (frame_embed.tensor), checked by config set */
    rc = vt_model_check(p->kind, p->partial, NULL, p->err, p->errlen);
    if (rc) {
        /* the hub's bytes are what it lists, so a new pull would get them again */
        char *why = vt_xstrdup(err);
        vt_err(err, errlen, rc, "'%s' is not a usable model (nothing installed): %s", p->repo, why);
        free(why);
        vt_rm_rf(p->partial);
        goto out;
    }
    char mark[PATH_MAX + 16];
    snprintf(mark, sizeof(mark), "%s/.commit", p->partial);
    unlink(mark);
    rc = write_manifest(p, p->partial);
    if (rc)
        goto out;
    rc = install(p);
out:
    if (lockfd >= 0) { /* held: no one else uses this path (take_lock) */
        unlink(lockpath);
        close(lockfd);
    }
    free(p);
    return rc;
}
