/*
 * The fetch stage: a local file is registered in place, a URL downloaded with its metadata
 * (fetch_url.c); both are probed (media.c), and what was learnt replaces the video's
 * metadata, chapters and title index rows. What follows indexing (media not kept) is its
 * indexed hook.
 */
#include "base/util.h"
#include "core/library.h"
#include "media/media.h"
#include "stages/fetch.h"

#include <libavformat/avformat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct fetch_result {
    struct vt_video_rec v; /* owned: what fetch learnt */
    struct vt_probe probe;
    struct vt_chapter *chapters; /* the source's own chapters (URLs), owned */
    size_t n_chapters;
};

/*
 * Whether title is only the name of the file url points to: what yt-dlp's generic
 * extractor calls a direct link to a media file (the last path segment, %-decoded, without
 * its extension).
 */
static int title_is_file_name(const char *title, const char *url)
{
    const char *end, *seg;
    char name[512];
    size_t n = 0;

    if (!title || !url)
        return 0;
    end = url + strcspn(url, "?#");
    seg = end;
    while (seg > url && seg[-1] != '/')
        seg--;
    for (const char *p = seg; p < end && n + 1 < sizeof(name); p++) {
        unsigned x;

        if (*p == '%' && p + 2 < end && sscanf(p + 1, "%2x", &x) == 1) {
            name[n++] = (char)x;
            p += 2;
        } else {
            name[n++] = *p;
        }
    }
    name[n] = '\0';
    if (strrchr(name, '.'))
        *strrchr(name, '.') = '\0';
    return name[0] && !strcmp(name, title);
}

static int fetch_run(struct vt_stage_ctx *c)
{
    struct fetch_result *r = vt_xcalloc(1, sizeof(*r));
    const struct vt_video_rec *v = c->video;
    int remote = v->source_kind && strcmp(v->source_kind, "file");
    struct stat st;
    char *path = NULL;
    double measured;
    int rc;

    c->result = r;
    if (remote) {
        rc = vt_fetch_url_run(c, &r->v, &r->chapters, &r->n_chapters);
        if (rc)
            return rc;
        path = vt_xasprintf("%s/%s", c->lib->dir, r->v.source_path);
    } else {
        unsigned ver = avformat_version();

        snprintf(c->model, sizeof(c->model), "local file, libavformat %u.%u.%u", ver >> 16,
                 (ver >> 8) & 0xff, ver & 0xff);
        path = vt_xstrdup_or_null(v->source_path);
    }
    if (!path) {
        rc = vt_err(c->err, sizeof(c->err), VT_ENOTFOUND, "the video has no media file");
        goto out;
    }
    /* a file added in place may be on another machine's disk: retried, maybe there */
    if (stat(path, &st)) {
        rc = vt_err(c->err, sizeof(c->err), remote ? VT_ENOTFOUND : VT_EHERE,
                    "'%s': media file not found on this machine", path);
        goto out;
    }
    rc = vt_media_probe(path, &r->probe, c->err, sizeof(c->err));
    if (!rc)
        rc = vt_media_measure_duration(path, &measured, c->err, sizeof(c->err));
    if (rc)
        goto out;
    snprintf(r->v.id, sizeof(r->v.id), "%s", v->id);
    /* a direct link to a media file: the site's "title" is the file's name; the media's own
     * title (its container's metadata), when it has one, names it better */
    if (remote && r->probe.title && *r->probe.title &&
        title_is_file_name(r->v.title, v->source_url)) {
        free(r->v.title);
        r->v.title = vt_xstrdup_or_null(r->probe.title);
    }
    if (!r->v.title)
        r->v.title = vt_xstrdup_or_null(r->probe.title ? r->probe.title : v->title);
    if (!r->v.language)
        r->v.language = vt_xstrdup_or_null(r->probe.language);
    r->v.container = vt_xstrdup_or_null(r->probe.format);
    /* the decoded length beats what a container or a site claims */
    r->v.duration_s = measured > 0 ? measured : r->probe.duration_s;
    r->v.width = r->probe.width;
    r->v.height = r->probe.height;
    r->v.rotation = r->probe.rotation;
    r->v.fps = r->probe.fps;
    r->v.has_video = r->probe.has_video;
    r->v.has_audio = r->probe.has_audio;
    r->v.size_bytes = st.st_size;
    /* the measured length (a container's claim counts captions that run on) hit the bound */
    if (r->v.duration_s >= VT_MEDIA_MAX_DURATION_S && r->probe.claimed_s > VT_MEDIA_MAX_DURATION_S)
        snprintf(c->cut, sizeof(c->cut),
                 "cut: the media lasts %.1f h; only its first %.0f h are indexed",
                 r->probe.claimed_s / 3600, VT_MEDIA_MAX_DURATION_S / 3600);
    else if (r->v.duration_s >= VT_MEDIA_MAX_DURATION_S)
        snprintf(c->cut, sizeof(c->cut),
                 "cut: the media lasts more than %.0f h; only its first %.0f h are indexed",
                 VT_MEDIA_MAX_DURATION_S / 3600, VT_MEDIA_MAX_DURATION_S / 3600);
    if (!remote) {
        r->v.channel = vt_xstrdup_or_null(v->channel);
        r->v.published = vt_xstrdup_or_null(v->published);
    }
out:
    free(path);
    return rc;
}

/* The source's chapter list, else the container's; when neither has any, chapters the
 * slides made (the ocr stage's) stay until ocr replaces them. */
static int save_chapters(struct vt_stage_ctx *c, const struct fetch_result *r)
{
    struct vt_store_chapter *old = NULL;
    size_t n_old = 0;
    int rc;

    if (r->n_chapters)
        return vt_store_chapters_replace(c->lib->store, c->video->id, r->chapters, r->n_chapters,
                                         VT_CHAPTERS_SOURCE_META);
    if (!r->probe.n_chapters) {
        int slides;

        rc = vt_store_chapters(c->lib->store, c->video->id, &old, &n_old);
        slides = !rc && n_old && old[0].source && !strcmp(old[0].source, VT_CHAPTERS_SLIDES);
        vt_store_chapters_free(old, n_old);
        if (rc || slides)
            return rc;
    }
    return vt_store_chapters_replace(c->lib->store, c->video->id, r->probe.chapters,
                                     r->probe.n_chapters, VT_CHAPTERS_CONTAINER);
}

static int fetch_save(struct vt_stage_ctx *c)
{
    struct fetch_result *r = c->result;
    int rc = vt_store_video_update_meta(c->lib->store, &r->v);

    if (!rc && c->video->source_kind && strcmp(c->video->source_kind, "file"))
        rc = vt_store_video_update_source(c->lib->store, &r->v);
    if (!rc)
        rc = save_chapters(c, r);
    if (!rc)
        rc = vt_store_title_docs_refresh(c->lib->store, c->video->id);
    return rc;
}

static void fetch_release(struct vt_stage_ctx *c)
{
    struct fetch_result *r = c->result;

    if (!r)
        return;
    vt_probe_release(&r->probe);
    for (size_t i = 0; i < r->n_chapters; i++)
        free(r->chapters[i].title);
    free(r->chapters);
    vt_video_rec_release(&r->v);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_fetch = {
    .run = fetch_run,
    .save = fetch_save,
    .release = fetch_release,
    .indexed = vt_fetch_after_index,
};
