/*
 * Helpers shared by every module: allocation that aborts on out-of-memory, the
 * string buffer, clocks, strict number parsing, directories and atomic files, and the
 * one UTF-8 decoder with the repairs built on it.
 */
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void oom(size_t n)
{
    fprintf(stderr, "vidtheque: out of memory allocating %zu bytes\n", n);
    abort();
}

void *vt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p)
        oom(n);
    return p;
}

void *vt_xcalloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

    if (!p)
        oom(nmemb * size);
    return p;
}

void *vt_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (!q)
        oom(n);
    return q;
}

char *vt_xstrdup_or_null(const char *s)
{
    return s ? vt_xstrdup(s) : NULL;
}

char *vt_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = vt_xmalloc(n);

    memcpy(p, s, n);
    return p;
}

char *vt_xasprintf(const char *fmt, ...)
{
    struct vt_sb sb = {0};
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        oom(0);
    vt_grow((void **)&sb.buf, &sb.cap, (size_t)n + 1, 1);
    va_start(ap, fmt);
    vsnprintf(sb.buf, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return sb.buf;
}

void vt_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t c = *cap;

    if (need <= c)
        return;
    if (c < 8)
        c = 8;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem)
            oom(SIZE_MAX);
        c *= 2;
    }
    *p = vt_xrealloc(*p, c * elem);
    *cap = c;
}

void vt_sb_add(struct vt_sb *sb, const char *s, size_t n)
{
    vt_grow((void **)&sb->buf, &sb->cap, sb->len + n + 1, 1);
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void vt_sb_adds(struct vt_sb *sb, const char *s)
{
    vt_sb_add(sb, s, strlen(s));
}

void vt_sb_addc(struct vt_sb *sb, char c)
{
    vt_sb_add(sb, &c, 1);
}

void vt_sb_addf(struct vt_sb *sb, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    vt_grow((void **)&sb->buf, &sb->cap, sb->len + (size_t)n + 1, 1);
    va_start(ap, fmt);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void vt_sb_add_seek(struct vt_sb *sb, double s)
{
    long long ms = s > 0 && s < 1e9 ? (long long)ceil(s * 1000 - 1e-6) : 0;

    if (ms % 1000 == 0)
        vt_sb_addf(sb, "%lld", ms / 1000);
    else if (ms % 100 == 0)
        vt_sb_addf(sb, "%lld.%lld", ms / 1000, ms % 1000 / 100);
    else if (ms % 10 == 0)
        vt_sb_addf(sb, "%lld.%02lld", ms / 1000, ms % 1000 / 10);
    else
        vt_sb_addf(sb, "%lld.%03lld", ms / 1000, ms % 1000);
}

char *vt_sb_detach(struct vt_sb *sb)
{
    char *p = sb->buf ? sb->buf : vt_xstrdup("");

    sb->buf = NULL;
    sb->len = sb->cap = 0;
    return p;
}

void vt_sb_release(struct vt_sb *sb)
{
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

int vt_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

double vt_monotonic_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double vt_wall_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void vt_utc_iso(char *buf, size_t n, double epoch_s)
{
    time_t t = (time_t)epoch_s;
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int vt_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

void vt_fmt_duration(char *buf, size_t n, double s)
{
    long t = s > 0 && s < 1e9 ? (long)s : 0;

    if (t >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

const char *vt_safe_char(const char **s, char buf[8])
{
    const char *p = *s;
    uint32_t cp = 0;
    size_t n = vt_utf8_decode(p, 4, &cp); /* it stops at the terminator */

    if (!n) {
        *s += 1;
        return "\xef\xbf\xbd"; /* U+FFFD: a lone byte 0x9b is CSI to some terminals */
    }
    *s += n;
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || /* C0, DEL, C1: escapes and controls */
        (cp >= 0x202a && cp <= 0x202e) ||          /* bidirectional embeddings, overrides */
        (cp >= 0x2066 && cp <= 0x2069) ||          /* bidirectional isolates */
        cp == 0x2028 || cp == 0x2029)              /* line and paragraph separators */
        return " ";
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

int vt_mkdir_p(const char *path, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);

    if (n == 0 || n >= sizeof(buf))
        return vt_err(err, errlen, VT_EINVAL, "'%s': bad directory name", path);
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) && errno != EEXIST)
            return vt_err(err, errlen, VT_EIO, "cannot create '%s': %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0755) && errno != EEXIST)
        return vt_err(err, errlen, VT_EIO, "cannot create '%s': %s", buf, strerror(errno));
    return 0;
}

int vt_rm_rf(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    int rc = 0;

    if (lstat(path, &st))
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlink(path);
    d = opendir(path);
    if (!d)
        return -1;
    while ((e = readdir(d))) {
        char *sub;

        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        sub = vt_xasprintf("%s/%s", path, e->d_name);
        if (vt_rm_rf(sub))
            rc = -1;
        free(sub);
    }
    closedir(d);
    if (rmdir(path))
        rc = -1;
    return rc;
}

int vt_write_file_atomic(const char *path, const void *data, size_t n, char *err, size_t errlen)
{
    return vt_write_file_atomic_mode(path, data, n, 0644, err, errlen);
}

int vt_write_file_atomic_mode(const char *path, const void *data, size_t n, unsigned mode,
                              char *err, size_t errlen)
{
    char *tmp = vt_xasprintf("%s.tmp.%ld", path, (long)getpid());
    int fd;
    const char *p = data;
    int rc = 0;

    /* a fresh file, so that it has mode from its creation (a leftover keeps its own) */
    unlink(tmp);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, (mode_t)mode);

    if (fd < 0) {
        rc = vt_err(err, errlen, VT_EIO, "cannot write '%s': %s", tmp, strerror(errno));
        goto out;
    }
    while (n) {
        ssize_t w = write(fd, p, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = vt_err(err, errlen, VT_EIO, "cannot write '%s': %s", tmp, strerror(errno));
            close(fd);
            unlink(tmp);
            goto out;
        }
        p += w;
        n -= (size_t)w;
    }
    if (close(fd) || rename(tmp, path)) {
        rc = vt_err(err, errlen, VT_EIO, "cannot write '%s': %s", path, strerror(errno));
        unlink(tmp);
    }
out:
    free(tmp);
    return rc;
}

int vt_read_file_capped(const char *path, const char *what, size_t max, char **data, size_t *len,
                        char *err, size_t errlen)
{
    struct stat st;
    size_t cap = 0, n = 0;
    char *buf = NULL;
    int fd, rc = 0;

    *data = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        rc = vt_err(err, errlen,
                    errno == ENOENT  ? VT_ENOTFOUND
                    : errno == ELOOP ? VT_EINVAL
                                     : VT_EIO,
                    "'%s': %s", path,
                    errno == ELOOP ? "is a symbolic link (not followed)" : strerror(errno));
        goto out;
    }
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        rc = vt_err(err, errlen, VT_EINVAL, "'%s': not a regular file", path);
        goto out;
    }
    if ((uintmax_t)st.st_size > max) {
        rc = vt_err(err, errlen, VT_EINVAL, "'%s': %s too large (%jd bytes, limit %zu MiB)", path,
                    what, (intmax_t)st.st_size, max >> 20);
        goto out;
    }
    for (;;) {
        ssize_t r;

        /* the file may grow while we read it */
        if (n > max) {
            rc = vt_err(err, errlen, VT_EINVAL, "'%s': %s too large (limit %zu MiB)", path, what,
                        max >> 20);
            goto out;
        }
        vt_grow((void **)&buf, &cap, n + 65536, 1);
        r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = vt_err(err, errlen, VT_EIO, "'%s': %s", path, strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    buf = NULL;
out:
    if (fd >= 0)
        close(fd);
    free(buf);
    return rc;
}

uint64_t vt_fnv1a64(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;

    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

void vt_id_encode(uint64_t v, char out[12])
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    for (int i = 10; i >= 0; i--) {
        out[i] = a[v & 63];
        v >>= 6;
    }
    out[11] = '\0';
}

int vt_id_valid(const char *s)
{
    size_t n = 0;

    if (!s)
        return 0;
    for (; s[n]; n++) {
        char c = s[n];

        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return 0;
        if (n >= VT_ID_MAX - 1)
            return 0;
    }
    return n > 0;
}

size_t vt_utf8_decode(const char *s, size_t n, uint32_t *out)
{
    const unsigned char *p = (const unsigned char *)s;
    uint32_t cp;
    size_t len;

    if (n == 0)
        return 0;
    if (p[0] < 0x80) {
        if (out)
            *out = p[0];
        return 1;
    }
    if ((p[0] & 0xe0) == 0xc0) {
        len = 2;
        cp = p[0] & 0x1f;
    } else if ((p[0] & 0xf0) == 0xe0) {
        len = 3;
        cp = p[0] & 0x0f;
    } else if ((p[0] & 0xf8) == 0xf0) {
        len = 4;
        cp = p[0] & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    /* overlong forms, surrogates and out-of-range code points are invalid */
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    if (out)
        *out = cp;
    return len;
}

char *vt_utf8_clean(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    struct vt_sb sb = {0};

    vt_sb_add(&sb, "", 0);
    while (n) {
        size_t k = vt_utf8_decode((const char *)p, n, NULL);

        if (k == 0 || (k == 1 && p[0] < 0x20 && p[0] != '\t' && p[0] != '\n') || p[0] == 0x7f) {
            vt_sb_adds(&sb, "\xef\xbf\xbd");
            k = k ? k : 1;
        } else {
            vt_sb_add(&sb, (const char *)p, k);
        }
        p += k;
        n -= k;
    }
    return vt_sb_detach(&sb);
}

static int hex4(const char *s, size_t n, uint32_t *v)
{
    *v = 0;
    if (n < 4)
        return 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;

        if (d < 0)
            return 0;
        *v = *v << 4 | (uint32_t)d;
    }
    return 1;
}

char *vt_json_repair(const char *data, size_t len, size_t *out_len)
{
    const unsigned char *p = (const unsigned char *)data;
    /* an invalid byte grows to 3, everything else is copied or replaced at equal length */
    char *out = vt_xmalloc(len * 3 + 1);
    size_t i = 0, o = 0;
    int in_string = 0;

    while (i < len) {
        size_t k;
        uint32_t u, lo;

        if (p[i] >= 0x80) {
            k = vt_utf8_decode(data + i, len - i, NULL);
            if (!k) {
                memcpy(out + o, "\xef\xbf\xbd", 3);
                o += 3;
                i++;
            } else {
                memcpy(out + o, p + i, k);
                o += k;
                i += k;
            }
            continue;
        }
        if (p[i] == '"') {
            in_string = !in_string;
        } else if (in_string && p[i] == '\\' && i + 1 < len) {
            if (p[i + 1] == 'u' && hex4(data + i + 2, len - i - 2, &u) && u >= 0xd800 &&
                u <= 0xdfff) {
                /* a high surrogate escape followed by a low one is a valid pair */
                if (u <= 0xdbff && i + 12 <= len && p[i + 6] == '\\' && p[i + 7] == 'u' &&
                    hex4(data + i + 8, 4, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
                    memcpy(out + o, p + i, 12);
                    o += 12;
                    i += 12;
                } else {
                    memcpy(out + o, "\\ufffd", 6);
                    o += 6;
                    i += 6;
                }
                continue;
            }
            /* any other escape: copy both bytes so that \" does not end the string */
            out[o++] = (char)p[i++];
        }
        out[o++] = (char)p[i++];
    }
    out[o] = '\0';
    *out_len = o;
    return out;
}
