/*
 * Reading captions (SubRip and WebVTT files, text subtitle streams) into transcripts,
 * and writing transcripts back out as WebVTT, SubRip or plain text. Caption files come
 * from anywhere, in any encoding: the bytes are first decoded (BOM, UTF-16 sniffing, UTF-8,
 * else libuchardet's guess converted with iconv) and preprocessed as WebVTT prescribes
 * (NUL to U+FFFD, CR and CRLF to LF). WebVTT is then read by the W3C specification's
 * parser, step by step; SubRip, which has no specification, as FFmpeg and pysrt read it.
 * Both drop what they cannot read, and everything is bounded (input size, cue and word
 * counts, timestamp range) so that no file costs more than a few times its size in memory
 * or more than linear time. The writers sanitise text so that whatever a transcript holds,
 * the output is a valid file that this reader (and FFmpeg) reads back. This file holds the
 * public entry points (vt_captions_parse, the sidecar lookup, loading and importing); what
 * the readers share (timestamps, the cue builder and the cue collector) is in
 * captions_cue.c, below them; each concern has its own captions_*.c, joined by
 * captions_int.h.
 */
#include "captions/captions.h"

#include "base/util.h"
#include "captions/captions_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static char *xstrndup(const char *s, size_t n)
{
    char *p = vt_xmalloc(n + 1);

    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* The length of the run of bytes of accept at s (n bytes, which may hold NUL). */
static size_t strspn_n(const char *s, size_t n, const char *accept)
{
    size_t i = 0;

    while (i < n && s[i] && strchr(accept, s[i]))
        i++;
    return i;
}

/* Whether buf (len bytes) starts with a WebVTT signature: "WEBVTT" then the end, a space, a tab
 * or a line break. */
static int vtt_signature(const char *buf, size_t len)
{
    return len >= 6 && !memcmp(buf, "WEBVTT", 6) &&
           (len == 6 || buf[6] == ' ' || buf[6] == '\t' || buf[6] == '\n');
}

/*
 * vt_captions_parse with name as the message prefix (NULL: the format's name), the format
 * found ("srt", "vtt" or "json3") in *kind and the encoding converted from in enc ("" for
 * UTF-8).
 */
static int parse_captions(const char *data, size_t len, const char *format, const char *name,
                          struct vt_transcript *out, const char **kind, char *enc, size_t enc_len,
                          char *err, size_t errlen)
{
    struct cap_parser p = {0};
    char *buf = NULL;
    const char *s;
    size_t n;
    long first_content = 0;
    int any_timing = 0, rc = 0, is_vtt = 0;

    memset(out, 0, sizeof(*out));
    *kind = "srt";
    enc[0] = '\0';
    if (format && strcmp(format, "srt") && strcmp(format, "vtt") && strcmp(format, "json3"))
        return vt_err(err, errlen, VT_EINVAL, "'%s': unknown captions format", format);
    if (len > VT_CAPTIONS_MAX_BYTES)
        return vt_err(err, errlen, VT_EINVAL, "%s%scaptions too large (%zu bytes, limit %u MiB)",
                      name ? name : "", name ? ": " : "", len, VT_CAPTIONS_MAX_BYTES >> 20);
    if (!data)
        data = "", len = 0;
    /* JSON is Unicode: content that starts with '{' (after a BOM and white space) is json3 */
    n = len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3) ? 3 : 0;
    n += strspn_n(data + n, len - n, " \t\r\n");
    buf = vt_cap_normalize_input(
        data, len, (format && !strcmp(format, "json3")) || (!format && n < len && data[n] == '{'),
        enc, enc_len, &n);
    s = buf + strspn(buf, " \t\n");
    /* neither SubRip nor WebVTT can start with '{' (an ASS override is within a cue) */
    if ((format && !strcmp(format, "json3")) || (!format && *s == '{')) {
        *kind = "json3";
        rc = vt_cap_parse_json3(buf, name ? name : "json3", out, err, errlen);
        goto model;
    }
    /* a WEBVTT signature always means WebVTT; without one a .vtt file is no WebVTT */
    is_vtt = vtt_signature(buf, n) || (format && !strcmp(format, "vtt"));
    *kind = is_vtt ? "vtt" : "srt";
    if (!name)
        name = *kind;
    if (is_vtt && !vtt_signature(buf, n)) {
        rc = vt_err(err, errlen, VT_EINVAL, "%s: line 1: no WEBVTT signature (not WebVTT)", name);
        goto out;
    }
    p.out = out;
    if (is_vtt)
        vt_cap_parse_vtt(&p, buf, n);
    else
        vt_cap_parse_srt(&p, buf, n, &any_timing, &first_content);
    if (p.full) {
        rc = p.full == 1 ? vt_err(err, errlen, VT_EINVAL, "%s: more than %d cues", name,
                                  VT_CAPTIONS_MAX_CUES)
                         : vt_err(err, errlen, VT_EINVAL, "%s: more than %d timed words", name,
                                  VT_CAPTIONS_MAX_WORDS);
        goto out;
    }
    if (!out->n_cues) {
        if (p.bad_line)
            rc = vt_err(err, errlen, VT_EINVAL, "%s: line %ld: %s", name, p.bad_line, p.bad_msg);
        else if (!is_vtt && !any_timing && first_content)
            rc = vt_err(err, errlen, VT_EINVAL,
                        "%s: line %ld: no cue timing found (not SubRip or WebVTT)", name,
                        first_content);
        else
            rc = vt_err(err, errlen, VT_SKIP, "%s%sno cues in captions", *name == '\'' ? name : "",
                        *name == '\'' ? ": " : "");
        goto out;
    }
    vt_cap_sort_cues(out);
    snprintf(out->model, sizeof(out->model), "captions:%s", *kind);
model:
    if (!rc && *enc) {
        size_t k = strlen(out->model);

        snprintf(out->model + k, sizeof(out->model) - k, " (%s)", enc);
    }
out:
    if (rc)
        vt_transcript_release(out);
    vt_sb_release(&p.raw);
    free(buf);
    return rc;
}

int vt_captions_parse(const char *data, size_t len, const char *format, struct vt_transcript *out,
                      char *err, size_t errlen)
{
    const char *kind;
    char enc[64];

    return parse_captions(data, len, format, NULL, out, &kind, enc, sizeof(enc), err, errlen);
}

/* ---------------------------------------------------------------------------------- */
/* Sidecar files                                                                       */

static int ext_is(const char *s, const char *ext)
{
    return !strcasecmp(s, ext);
}

/* A language tag of a file name: "en", "eng", "en-US", "pt_BR", "zh-Hans". */
static int lang_valid(const char *s, size_t n)
{
    size_t i = 0, k;

    while (i < n && is_alpha(s[i]))
        i++;
    if (i < 2 || i > 3)
        return 0;
    if (i == n)
        return 1;
    if (s[i] != '-' && s[i] != '_')
        return 0;
    for (k = ++i; k < n && (is_alpha(s[k]) || is_digit(s[k])); k++)
        ;
    return k == n && n - i >= 2 && n - i <= 8;
}

static int lang_is_english(const char *s, size_t n)
{
    return (n >= 2 && !strncasecmp(s, "en", 2) && (n == 2 || s[2] == '-' || s[2] == '_')) ||
           (n == 3 && !strncasecmp(s, "eng", 3));
}

/* Preference among caption file extensions: 0 vtt, 1 srt, 2 json3, -1 none of them. */
static int ext_rank(const char *ext)
{
    return ext_is(ext, "vtt") ? 0 : ext_is(ext, "srt") ? 1 : ext_is(ext, "json3") ? 2 : -1;
}

/*
 * Preference of a sidecar whose name is NAME.rest: 0-2 NAME.vtt/.srt/.json3, 3-5 English
 * NAME.<lang>.vtt/.srt/.json3, 6-8 other languages; -1 when rest is not a caption file
 * name. json3 comes last in each group only so that a directory that already had a
 * .vtt or .srt sidecar keeps reading the same one.
 */
static int sidecar_rank(const char *rest)
{
    const char *dot = strrchr(rest, '.');
    int r;

    if (!dot)
        return ext_rank(rest);
    r = ext_rank(dot + 1);
    if (r < 0 || !lang_valid(rest, (size_t)(dot - rest)))
        return -1;
    return (lang_is_english(rest, (size_t)(dot - rest)) ? 3 : 6) + r;
}

int vt_captions_each_sidecar(const char *media_path, int (*fn)(void *user, const char *name),
                             void *user)
{
    const char *slash = strrchr(media_path, '/'), *base = slash ? slash + 1 : media_path;
    const char *dot = strrchr(base, '.');
    size_t stem_len = dot && dot > base ? (size_t)(dot - base) : strlen(base);
    char *dir = slash ? xstrndup(media_path, slash == media_path ? 1 : (size_t)(slash - media_path))
                      : vt_xstrdup(".");
    int dfd = stem_len ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1, rc = 0;
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    struct dirent *e;

    if (dfd >= 0 && !d)
        close(dfd);
    while (d && !rc && (e = readdir(d))) {
        struct stat st;

        if (strncmp(e->d_name, base, stem_len) || e->d_name[stem_len] != '.' ||
            !strcmp(e->d_name, base) || sidecar_rank(e->d_name + stem_len + 1) < 0)
            continue;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
            continue;
        rc = fn(user, e->d_name);
    }
    if (d)
        closedir(d);
    free(dir);
    return rc;
}

int vt_captions_find_sidecar(const char *media_path, char **sidecar_path)
{
    const char *slash = strrchr(media_path, '/'), *base = slash ? slash + 1 : media_path;
    const char *dot = strrchr(base, '.');
    size_t stem_len = dot && dot > base ? (size_t)(dot - base) : strlen(base);
    char *dir = slash ? xstrndup(media_path, slash == media_path ? 1 : (size_t)(slash - media_path))
                      : vt_xstrdup(".");
    char *best = NULL;
    int best_rank = INT_MAX, dfd;
    DIR *d = NULL;
    struct dirent *e;

    *sidecar_path = NULL;
    if (!stem_len)
        goto out;
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        goto out;
    d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        goto out;
    }
    while ((e = readdir(d))) {
        struct stat st;
        int rank;

        /* the media file itself never counts, whatever its name */
        if (strncmp(e->d_name, base, stem_len) || e->d_name[stem_len] != '.' ||
            !strcmp(e->d_name, base))
            continue;
        rank = sidecar_rank(e->d_name + stem_len + 1);
        if (rank < 0 || rank > best_rank || (rank == best_rank && strcmp(e->d_name, best) > 0))
            continue;
        /* only regular files: a symlink could lead anywhere, a fifo would block */
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
            continue;
        free(best);
        best = vt_xstrdup(e->d_name);
        best_rank = rank;
    }
    if (best)
        *sidecar_path =
            slash ? vt_xasprintf("%s%s%s", dir, slash == media_path ? "" : "/", best) : best;
    if (best && !slash)
        best = NULL;
out:
    if (d)
        closedir(d);
    free(best);
    free(dir);
    return *sidecar_path != NULL;
}

int vt_captions_load_file(const char *path, struct vt_transcript *out, char *err, size_t errlen)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *ext = strrchr(base, '.'), *format = NULL, *lang = NULL;
    char *data = NULL, *name = vt_xasprintf("'%s'", path);
    size_t len, lang_len = 0;
    const char *kind;
    char enc[64];
    int rc;

    memset(out, 0, sizeof(*out));
    if (ext && ext_is(ext + 1, "srt"))
        format = "srt";
    else if (ext && ext_is(ext + 1, "vtt"))
        format = "vtt";
    else if (ext && ext_is(ext + 1, "json3"))
        format = "json3";
    /* NAME.<lang>.ext: the part between the last two dots */
    if (ext && ext > base) {
        const char *p = ext;

        while (p > base && p[-1] != '.')
            p--;
        if (p > base && lang_valid(p, (size_t)(ext - p))) {
            lang = p;
            lang_len = (size_t)(ext - p);
        }
    }
    rc =
        vt_read_file_capped(path, "captions file", VT_CAPTIONS_MAX_BYTES, &data, &len, err, errlen);
    if (rc)
        goto out;
    rc = parse_captions(data, len, format, name, out, &kind, enc, sizeof(enc), err, errlen);
    if (rc)
        goto out;
    if (lang || *enc)
        snprintf(out->model, sizeof(out->model), "captions:sidecar %s (%.*s%s%s)", kind,
                 (int)lang_len, lang ? lang : "", lang && *enc ? ", " : "", enc);
    else
        snprintf(out->model, sizeof(out->model), "captions:sidecar %s", kind);
out:
    free(data);
    free(name);
    return rc;
}

int vt_captions_import(const char *media_path, struct vt_transcript *out, char *err, size_t errlen)
{
    char *sidecar = NULL;
    char side_err[512] = "", stream_err[512] = "";
    int rc;

    memset(out, 0, sizeof(*out));
    if (vt_captions_find_sidecar(media_path, &sidecar)) {
        rc = vt_captions_load_file(sidecar, out, side_err, sizeof(side_err));
        if (!rc)
            goto out;
    }
    rc = vt_captions_from_stream(media_path, out, stream_err, sizeof(stream_err));
    if (!rc)
        goto out;
    if (rc < 0 && rc != VT_EINVAL) {
        /* the media itself is unreadable: recognition would fail the same way */
        rc = vt_err(err, errlen, rc, "%s", stream_err);
        goto out;
    }
    rc = vt_err(err, errlen, VT_SKIP, "no captions: %s%s%s", side_err, *side_err ? "; " : "",
                stream_err);
out:
    free(sidecar);
    return rc;
}
