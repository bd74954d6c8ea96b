/*
 * The fetch stage for videos from URLs: the download through yt-dlp with the source's
 * metadata and captions, and dropping the media of videos added with --no-keep-media
 * once they are indexed. Registering what a URL points at (one video, or every entry of
 * a playlist or channel) and re-checking lists (update) is lib/run/add_url.c's, which
 * asks yt-dlp through here. What the handle keeps for fetch (the yt-dlp program, its
 * version, the caps per download) is fetch's slot (vt_library_set_fetch).
 *
 * Files of a video fetched from a URL live in <library>/media/<id>/:
 *   info.json         what yt-dlp said about the video (untrusted; parsed by ytinfo.c)
 *   load.json         the allowlisted rebuild of it handed back to yt-dlp
 *   cwd/              yt-dlp's working directory, emptied before every run
 *   dl/               yt-dlp's output; a killed download leaves its .part here and
 *                     the next attempt continues it
 *   video.<ext>       the finished media, renamed from dl/ once complete and probed
 *   captions.<kind>.<lang>.<ext>  the source's captions (kind manual or auto)
 * A file reaches video.<ext> only by rename after yt-dlp succeeded, so a partial
 * download is never registered as media.
 */
#include "stages/fetch.h"

#include "base/util.h"
#include "captions/captions.h"
#include "core/library.h"
#include "media/media.h"
#include "source/ytdlp.h"
#include "source/ytinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INFO_FRESH_S     1800.0 /* some sites' format URLs expire within hours */
#define INFO_TIME_S      300.0  /* asking for metadata (a long channel listing takes a while) */
#define DEFAULT_MAX_TIME (4 * 3600.0)
#define DEFAULT_MAX_SIZE ((int64_t)8 << 30)

/* What we accept from yt-dlp as media; everything else it leaves is ignored. */
static const char *const media_exts[] = {"mp4", "m4v",  "mov", "mkv", "webm", "m4a",
                                         "mp3", "opus", "ogg", "oga", "wav",  "flac"};

/* What a handle keeps for fetch, in its slot: the yt-dlp program, its version (asked
 * once), the caps per download. */
struct fetch_engine {
    char *ytdlp;
    char ytdlp_version[64];
    double max_time_s;
    int64_t max_bytes;
};

static void fetch_engine_close(void *state)
{
    struct fetch_engine *f = state;

    free(f->ytdlp);
    free(f);
}

/* The handle's fetch slot, made (with the defaults) on first use. */
static struct fetch_engine *engine(struct vt_library *lib)
{
    struct fetch_engine *f = vt_lib_slot(lib, VT_STAGE_FETCH);

    if (!f) {
        f = vt_xcalloc(1, sizeof(*f));
        vt_lib_slot_set(lib, VT_STAGE_FETCH, f, fetch_engine_close);
    }
    return f;
}

void vt_library_set_fetch(struct vt_library *lib, const struct vt_fetch_opts *o)
{
    struct fetch_engine *f = engine(lib);

    free(f->ytdlp);
    f->ytdlp = o && o->ytdlp && *o->ytdlp ? vt_xstrdup(o->ytdlp) : NULL;
    f->ytdlp_version[0] = '\0';
    f->max_time_s = o && o->max_time_s > 0 ? o->max_time_s : 0;
    f->max_bytes = o && o->max_bytes > 0 ? o->max_bytes : 0;
}

int vt_is_url(const char *s)
{
    size_t n = 0;

    while (s[n] &&
           ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
            (n && ((s[n] >= '0' && s[n] <= '9') || s[n] == '+' || s[n] == '-' || s[n] == '.'))))
        n++;
    return n > 1 && !strncmp(s + n, "://", 3);
}

int vt_source_url_at(const char *page_url, const char *extractor, double t, char *buf, size_t n)
{
    long s = t > 0 && t < 1e7 ? (long)t : 0;
    int w;

    if (!page_url)
        return VT_ENOTFOUND;
    if (extractor && !strcmp(extractor, "youtube") && !strchr(page_url, '#'))
        w = snprintf(buf, n, "%s%ct=%lds", page_url, strchr(page_url, '?') ? '&' : '?', s);
    else if ((!extractor || !strcmp(extractor, "generic")) && !strchr(page_url, '#'))
        w = snprintf(buf, n, "%s#t=%ld", page_url, s); /* a media fragment: the file itself */
    else
        w = snprintf(buf, n, "%s", page_url); /* no way known to say the second */
    return w < 0 || (size_t)w >= n ? VT_EINVAL : 0;
}

static const char *ytdlp_prog(struct vt_library *lib)
{
    return vt_ytdlp_program(engine(lib)->ytdlp);
}

const char *vt_fetch_ytdlp_version(struct vt_library *lib)
{
    return engine(lib)->ytdlp_version;
}

int vt_fetch_ytdlp_ask_version(struct vt_library *lib, char *err, size_t errlen)
{
    struct fetch_engine *f = engine(lib);

    if (f->ytdlp_version[0])
        return 0;
    return vt_ytdlp_version(ytdlp_prog(lib), f->ytdlp_version, sizeof(f->ytdlp_version), err,
                            errlen);
}

static struct vt_ytdlp_limits limits(struct vt_library *lib, const char *watch)
{
    struct fetch_engine *f = engine(lib);
    struct vt_ytdlp_limits l = {
        .max_time_s = f->max_time_s > 0 ? f->max_time_s : DEFAULT_MAX_TIME,
        .max_bytes = f->max_bytes > 0 ? f->max_bytes : DEFAULT_MAX_SIZE,
        .max_stdout = 1 << 20,
        .watch_dir = watch,
    };
    return l;
}

/* An empty working directory for one run of yt-dlp. */
static int fresh_dir(const char *path, char *err, size_t errlen)
{
    vt_rm_rf(path);
    return vt_mkdir_p(path, err, errlen);
}

int vt_fetch_ask_info(struct vt_library *lib, const char *url, const char *cwd, int playlist,
                      char **json, size_t *len, char *err, size_t errlen)
{
    const char *args[] = {"--dump-single-json", playlist ? "--flat-playlist" : "--no-playlist",
                          "--", url, NULL};
    struct vt_ytdlp_limits l = limits(lib, NULL);
    int rc;

    l.max_time_s = l.max_time_s < INFO_TIME_S ? l.max_time_s : INFO_TIME_S;
    l.max_stdout = VT_FETCH_INFO_MAX_BYTES;
    rc = fresh_dir(cwd, err, errlen);
    if (!rc)
        rc = vt_ytdlp_run(ytdlp_prog(lib), args, cwd, &l, json, len, NULL, NULL, err, errlen);
    vt_rm_rf(cwd);
    return rc;
}

/* ---- the fetch stage for a URL ---- */

static int is_media_ext(const char *ext)
{
    for (size_t i = 0; i < VT_ARRAY_LEN(media_exts); i++)
        if (!strcmp(ext, media_exts[i]))
            return 1;
    return 0;
}

/* The name in dir that is prefix + "." + an allowed media extension, or NULL. */
static char *find_media(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t pl = strlen(prefix);
    char *found = NULL;

    while (d && !found && (e = readdir(d))) {
        struct stat st;

        if (strncmp(e->d_name, prefix, pl) || e->d_name[pl] != '.' ||
            !is_media_ext(e->d_name + pl + 1))
            continue;
        if (!fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
            st.st_size > 0)
            found = vt_xstrdup(e->d_name);
    }
    if (d)
        closedir(d);
    return found;
}

static int file_age_ok(const char *path, double max_age)
{
    struct stat st;

    return !stat(path, &st) && vt_wall_s() - (double)st.st_mtime < max_age;
}

/* Record captions file name (captions.<manual|auto>.<lang>.<ext> in the video's media
 * folder) as the transcript's source, with its provenance: captions:youtube-manual,
 * captions:youtube-auto, or captions:<site>. */
static void keep_captions(struct vt_stage_ctx *c, struct vt_video_rec *meta, const char *name)
{
    const char *site = meta->extractor ? meta->extractor : "site";

    meta->captions_path = vt_xasprintf("media/%s/%s", c->video->id, name);
    if (!strcmp(site, "youtube"))
        meta->captions_model = vt_xasprintf(
            "captions:youtube-%s", !strncmp(name, "captions.auto.", 14) ? "auto" : "manual");
    else
        meta->captions_model = vt_xasprintf("captions:%s", site);
}

/* The source's captions for the picked track into media/<id>/captions.*; a failure
 * here is not the stage's: recognition can still run. */
static void fetch_captions(struct vt_stage_ctx *c, const char *dir, const struct vt_yt_sub *sub,
                           struct vt_video_rec *meta)
{
    struct vt_library *lib = c->lib;
    char *load = vt_xasprintf("%s/load.json", dir), *cwd = vt_xasprintf("%s/cwd", dir);
    char *dl = vt_xasprintf("%s/subs", dir), *tmpl = vt_xasprintf("%s/sub.%%(ext)s", dl);
    char *got = vt_xasprintf("%s/sub.%s.%s", dl, sub->lang, sub->ext);
    char *name =
        vt_xasprintf("captions.%s.%s.%s", sub->automatic ? "auto" : "manual", sub->lang, sub->ext);
    char *final = vt_xasprintf("%s/%s", dir, name);
    const char *args[] = {"--load-info-json",
                          load,
                          "--skip-download",
                          sub->automatic ? "--write-auto-subs" : "--write-subs",
                          "--sub-langs",
                          sub->lang,
                          "--sub-format",
                          sub->ext,
                          "-o",
                          tmpl,
                          NULL};
    struct vt_ytdlp_limits l = limits(lib, dl);
    struct vt_transcript t = {0};
    char err[512];
    int rc;

    l.max_bytes = VT_CAPTIONS_MAX_BYTES;
    l.max_time_s = l.max_time_s < INFO_TIME_S ? l.max_time_s : INFO_TIME_S;
    rc = fresh_dir(cwd, err, sizeof(err));
    if (!rc)
        rc = fresh_dir(dl, err, sizeof(err));
    if (!rc)
        rc = vt_ytdlp_run(ytdlp_prog(lib), args, cwd, &l, NULL, NULL, NULL, NULL, err, sizeof(err));
    /* keep it only if it reads as captions */
    if (!rc)
        rc = vt_captions_load_file(got, &t, err, sizeof(err));
    vt_transcript_release(&t);
    if (!rc && rename(got, final))
        rc = vt_err(err, sizeof(err), VT_EIO, "cannot keep captions: %s", strerror(errno));
    if (rc) {
        vt_log(lib, VT_LOG_WARN, "%s: the source's captions (%s) not used: %s", c->video->id,
               sub->lang, err);
    } else {
        keep_captions(c, meta, name);
    }
    vt_rm_rf(dl);
    vt_rm_rf(cwd);
    free(load);
    free(cwd);
    free(dl);
    free(tmpl);
    free(got);
    free(name);
    free(final);
}

static int download_media(struct vt_stage_ctx *c, const char *dir, char **media_name)
{
    struct vt_library *lib = c->lib;
    char *load = vt_xasprintf("%s/load.json", dir), *cwd = vt_xasprintf("%s/cwd", dir);
    char *dl = vt_xasprintf("%s/dl", dir), *tmpl = vt_xasprintf("%s/media.%%(ext)s", dl);
    struct vt_ytdlp_limits l = limits(lib, dl);
    char maxsize[32], *got = NULL, *from = NULL, *to = NULL;
    const char *args[] = {"--load-info-json", load,
                          /* one file with sound and picture; 1080p is plenty to read slides */
                          "-f", "bv*[height<=1080]+ba/b[height<=1080]/bv*+ba/b",
                          "--merge-output-format", "mp4/webm/mkv",
                          /* refused before a byte when the size is known; else our cap */
                          "--max-filesize", maxsize, "-o", tmpl, NULL};
    struct vt_probe probe = {0};
    int rc;

    snprintf(maxsize, sizeof(maxsize), "%lld", (long long)l.max_bytes);
    rc = fresh_dir(cwd, c->err, sizeof(c->err));
    if (!rc)
        rc = vt_mkdir_p(dl, c->err, sizeof(c->err)); /* kept: a .part continues */
    if (!rc)
        rc = vt_ytdlp_run(ytdlp_prog(lib), args, cwd, &l, NULL, NULL, vt_stage_progress, c, c->err,
                          sizeof(c->err));
    vt_rm_rf(cwd);
    if (rc)
        goto out;
    got = find_media(dl, "media");
    if (!got) {
        rc = vt_err(c->err, sizeof(c->err), VT_EMEDIA,
                    "yt-dlp left no media file of a kind we accept (%s ...)", media_exts[0]);
        goto out;
    }
    from = vt_xasprintf("%s/%s", dl, got);
    /* refuse what is not media before it becomes the video's file */
    rc = vt_media_probe(from, &probe, c->err, sizeof(c->err));
    vt_probe_release(&probe);
    if (rc)
        goto out;
    *media_name = vt_xasprintf("video%s", strrchr(got, '.'));
    to = vt_xasprintf("%s/%s", dir, *media_name);
    if (rename(from, to)) {
        rc = vt_err(c->err, sizeof(c->err), VT_EIO, "cannot keep '%s': %s", to, strerror(errno));
        free(*media_name);
        *media_name = NULL;
        goto out;
    }
    vt_rm_rf(dl);
out:
    free(load);
    free(cwd);
    free(dl);
    free(tmpl);
    free(got);
    free(from);
    free(to);
    return rc;
}

/* Reuse an existing captions file from an interrupted run of this stage. */
static void existing_captions(struct vt_stage_ctx *c, const char *dir, struct vt_video_rec *meta)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    while (d && (e = readdir(d))) {
        if (!strncmp(e->d_name, "captions.", 9)) {
            keep_captions(c, meta, e->d_name);
            break;
        }
    }
    if (d)
        closedir(d);
}

int vt_fetch_url_run(struct vt_stage_ctx *c, struct vt_video_rec *meta,
                     struct vt_chapter **chapters, size_t *n_chapters)
{
    struct vt_library *lib = c->lib;
    const struct vt_video_rec *v = c->video;
    char *dir = vt_xasprintf("%s/media/%s", lib->dir, v->id);
    char *info_path = vt_xasprintf("%s/info.json", dir), *cwd = vt_xasprintf("%s/cwd", dir);
    char *data = NULL, *clean = NULL, *media = NULL, *load = NULL;
    const struct vt_yt_sub *sub = NULL;
    struct vt_ytinfo info = {0};
    size_t len = 0;
    int rc, parsed = 0;

    snprintf(c->model, sizeof(c->model), "yt-dlp");
    rc = vt_fetch_ytdlp_ask_version(lib, c->err, sizeof(c->err));
    if (rc)
        goto out;
    snprintf(c->model, sizeof(c->model), "%s", engine(lib)->ytdlp_version);
    rc = vt_mkdir_p(dir, c->err, sizeof(c->err));
    if (rc)
        goto out;
    /* the metadata: kept from add while fresh (format URLs expire), else asked again;
     * a video added from an info file has only that file */
    if (!strcmp(v->source_kind, "info-json") && access(info_path, F_OK) && errno == ENOENT) {
        rc = vt_err(c->err, sizeof(c->err), VT_EINVAL,
                    "its info JSON was of a live or upcoming stream: add the video's URL once "
                    "the stream has ended");
    } else if (!strcmp(v->source_kind, "info-json") || file_age_ok(info_path, INFO_FRESH_S)) {
        rc = vt_read_file_capped(info_path, "info JSON", VT_FETCH_INFO_MAX_BYTES, &data, &len,
                                 c->err, sizeof(c->err));
    } else {
        if (!v->source_url) {
            rc = vt_err(c->err, sizeof(c->err), VT_EINVAL, "no URL to fetch");
            goto out;
        }
        rc = vt_fetch_ask_info(lib, v->source_url, cwd, 0, &data, &len, c->err, sizeof(c->err));
        if (!rc)
            rc = vt_write_file_atomic(info_path, data, len, c->err, sizeof(c->err));
    }
    if (rc)
        goto out;
    rc = vt_ytinfo_parse(data, len, &info, c->err, sizeof(c->err));
    if (rc)
        goto out;
    parsed = 1;
    if (info.is_playlist) {
        rc = vt_err(c->err, sizeof(c->err), VT_EINVAL, "the URL is a list, not a video");
        goto out;
    }
    if (info.is_live) {
        /* no whole file until it ends: a later attempt may find one, asking again (one
         * added from an info file has nothing to ask: its next attempt says so) */
        unlink(info_path);
        rc = vt_err(c->err, sizeof(c->err), VT_EIO, "a live or upcoming stream: not yet a video");
        goto out;
    }
    meta->page_url = vt_xstrdup_or_null(info.webpage_url ? info.webpage_url : v->source_url);
    meta->platform_id = vt_xstrdup_or_null(info.id);
    meta->extractor = vt_xstrdup_or_null(info.extractor);
    meta->title = vt_xstrdup_or_null(info.title);
    meta->channel = vt_xstrdup_or_null(info.channel);
    meta->published = vt_xstrdup_or_null(info.published);
    meta->language = vt_xstrdup_or_null(info.language);
    meta->description = vt_xstrdup_or_null(info.description);
    meta->thumbnail = vt_xstrdup_or_null(info.thumbnail);
    meta->duration_s = info.duration_s;
    *chapters = info.chapters;
    *n_chapters = info.n_chapters;
    info.chapters = NULL;
    info.n_chapters = 0;
    if (strcmp(v->stt_mode ? v->stt_mode : "auto", "recognize"))
        sub = vt_ytinfo_pick_sub(&info, info.language);
    rc = vt_ytinfo_clean_json(data, len, sub, &clean, c->err, sizeof(c->err));
    if (rc)
        goto out;
    load = vt_xasprintf("%s/load.json", dir);
    rc = vt_write_file_atomic(load, clean, strlen(clean), c->err, sizeof(c->err));
    if (rc)
        goto out;
    existing_captions(c, dir, meta);
    if (sub && !meta->captions_path)
        fetch_captions(c, dir, sub, meta);
    /* a complete download from an interrupted run is used as it is */
    media = find_media(dir, "video");
    if (!media)
        rc = download_media(c, dir, &media);
    if (!rc)
        meta->source_path = vt_xasprintf("media/%s/%s", v->id, media);
out:
    if (parsed)
        vt_ytinfo_release(&info);
    vt_rm_rf(cwd);
    free(dir);
    free(info_path);
    free(cwd);
    free(data);
    free(clean);
    free(media);
    free(load);
    return rc;
}

/* ---- after indexing ---- */

void vt_fetch_after_index(struct vt_library *lib, const struct vt_video_rec *v)
{
    struct vt_video_rec upd;
    int rc;

    if (v->keep_media || !v->source_kind || !strcmp(v->source_kind, "file") || !v->source_path)
        return;
    if (v->index_state != VT_INDEX_READY)
        return;
    /* the row forgets the file first: a crash in between leaves only a stray file */
    upd = *v;
    upd.source_path = NULL;
    rc = vt_store_begin(lib->store);
    if (!rc)
        rc = vt_store_video_update_source(lib->store, &upd);
    if (!rc)
        rc = vt_store_commit(lib->store);
    else
        vt_store_rollback(lib->store);
    if (rc) {
        vt_log(lib, VT_LOG_WARN, "%s: media kept: %s", v->id, vt_store_errmsg(lib->store));
        return;
    }
    unlink(v->source_path); /* absolute: v was read by vt_lib_video */
    vt_log(lib, VT_LOG_INFO, "%s: media deleted after indexing (--no-keep-media)", v->id);
}
