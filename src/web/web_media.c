/*
 * The files the server sends: a video's media file (/media/ID) and a frame's image
 * (/api/videos/ID/frames/N.jpg), with ETag, Last-Modified and a single HTTP range. A path
 * served never comes from the client: it is the document's, checked before use.
 */
#include "web/web_http.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
        return web_send_error(c, 1, 404, "not_found", "the file is missing");
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0) {
        close(fd);
        return web_send_error(c, 1, 404, "not_found", "the file is missing");
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
        return web_queue(c, 304, r);
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
        return web_queue(c, MHD_HTTP_RANGE_NOT_SATISFIABLE, r);
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
        return web_queue(c, MHD_HTTP_PARTIAL_CONTENT, r);
    }
    return web_queue(c, MHD_HTTP_OK, r);
}

/* The document without its long lists: what a route that needs the source or state reads. */
static const struct vt_doc_pages no_lists = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};

/* GET /media/ID: the video's own file, when it has a local one. */
enum MHD_Result web_get_media(const struct web_req *r)
{
    struct MHD_Connection *c = r->c;
    struct vt_library *lib = r->lib;
    const char *id = r->rest;
    enum MHD_Result ret = MHD_NO;
    json_t *doc = web_doc_or_error(c, lib, id, &no_lists, 1, &ret);
    const char *path;

    if (!doc)
        return ret;
    path = json_string_value(json_object_get(json_object_get(doc, "source"), "path"));
    if (!path || path[0] != '/')
        ret = web_send_error(c, 1, 404, "not_found", "this video has no local file");
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
enum MHD_Result web_get_frame(const struct web_req *r)
{
    struct MHD_Connection *c = r->c;
    struct vt_library *lib = r->lib;
    const char *id = r->id, *file = r->rest;
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
        return web_send_error(c, 1, 404, "not_found", "no such frame");
    if (size && !small && strcmp(size, "full"))
        return web_send_error(c, 1, 400, "bad_request", "size is small or full");
    one.frames.offset = n; /* that frame alone */
    one.frames.limit = 1;
    doc = web_doc_or_error(c, lib, id, &one, 1, &ret);
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
        ret = web_send_error(c, 1, 404, "not_found", "no such frame");
    else
        ret = send_file(c, path, "image/jpeg", 1);
    json_decref(doc);
    return ret;
}
