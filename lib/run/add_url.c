/*
 * Adding videos from URLs: registering what a URL points at (one video, or every entry
 * of a playlist or channel, through yt-dlp's -J, stages/fetch.h), an info JSON file,
 * and re-checking lists (update). A URL that cannot be looked at now is registered with
 * the failure as its fetch stage's first attempt (vt_pipeline_record_failure), so that
 * resume retries it. The download itself is the fetch stage's (lib/stages/stage_fetch.c and
 * fetch_url.c).
 */
#include "base/util.h"
#include "core/library.h"
#include "source/ytdlp.h"
#include "source/ytinfo.h"
#include "stages/fetch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A content key for a URL video: its canonical page, so that the same video
 * added directly or through a list is recognised. */
static char *url_key(const char *page_url)
{
    return vt_xasprintf("url:%s", page_url);
}

struct reg {
    const char *url;  /* what yt-dlp is asked for */
    const char *kind; /* "url" or "info-json" (never asked again: the file is the source) */
    const char *platform_id, *extractor, *title;
    const char *info; /* raw info JSON to keep, or NULL */
    size_t info_len;
    int64_t list_id;
    /* a first look that failed: recorded as fetch's first attempt */
    int fail_code;
    const char *fail_msg;
    double fail_started, fail_took;
};

static int register_video(struct vt_library *lib, const struct reg *g, const struct vt_add_opts *o,
                          char *id, int *is_new)
{
    const char *stt = o && o->stt ? o->stt : "auto";
    struct vt_video_rec v = {0};
    char *key = url_key(g->url), *dir = NULL, err[512];
    uint64_t hash = vt_fnv1a64(VT_FNV64_INIT, key, strlen(key));
    int rc;

    *is_new = 0;
    rc = vt_store_begin(lib->store);
    if (rc) {
        rc = vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
        goto out;
    }
    /* looked up inside the write transaction: two adds of one URL make one row */
    rc = vt_store_video_find_key(lib->store, key, id);
    if (rc != VT_ENOTFOUND) {
        vt_store_rollback(lib->store);
        if (rc)
            rc = vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
        goto out;
    }
    /* the platform's id when it is a usable id and free, else one from the URL */
    rc = vt_lib_alloc_id(lib, g->platform_id, hash, v.id);
    if (rc) {
        vt_store_rollback(lib->store);
        rc = vt_lib_fail(lib, rc, "cannot allocate an id for '%s'", g->url);
        goto out;
    }
    v.content_key = key;
    v.source_kind = (char *)g->kind;
    v.source_url = (char *)g->url;
    v.platform_id = (char *)g->platform_id;
    v.extractor = (char *)g->extractor;
    v.title = (char *)(g->title ? g->title : g->url);
    v.created_at = vt_wall_s();
    v.index_state = VT_INDEX_QUEUED;
    v.data_status = VT_DATA_MISSING;
    v.stt_mode = (char *)stt;
    v.keep_media = !(o && o->no_keep_media);
    v.list_id = g->list_id;
    rc = vt_pipeline_register(lib, &v);
    if (!rc && g->fail_msg)
        rc = vt_pipeline_record_failure(lib, v.id, VT_STAGE_FETCH, vt_fetch_ytdlp_version(lib),
                                        g->fail_code, g->fail_msg, g->fail_started, g->fail_took);
    if (!rc && g->info) {
        /* written before the commit: a row never points at a missing info file */
        dir = vt_xasprintf("%s/media/%s", lib->dir, v.id);
        rc = vt_mkdir_p(dir, err, sizeof(err));
        if (!rc) {
            char *p = vt_xasprintf("%s/info.json", dir);

            rc = vt_write_file_atomic(p, g->info, g->info_len, err, sizeof(err));
            free(p);
        }
        if (rc) {
            vt_store_rollback(lib->store);
            rc = vt_lib_fail(lib, rc, "%s", err);
            goto out;
        }
    }
    rc = vt_lib_end_write(lib, rc);
    if (rc)
        goto out;
    snprintf(id, VT_ID_MAX, "%s", v.id);
    *is_new = 1;
out:
    free(dir);
    free(key);
    return rc;
}

static int check_stt(struct vt_library *lib, const struct vt_add_opts *o)
{
    const char *stt = o && o->stt ? o->stt : "auto";

    if (strcmp(stt, "auto") && strcmp(stt, "captions") && strcmp(stt, "recognize"))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not an stt mode (auto, captions, recognize)",
                           stt);
    return 0;
}

/* Register every entry of a list (first max of them: lists come newest first). */
static int add_entries(struct vt_library *lib, const struct vt_ytinfo *info, int64_t list_id,
                       int max, const struct vt_add_opts *o, vt_added_fn fn, void *user)
{
    size_t n = info->n_entries, added = 0, failed = 0;
    int rc = 0;

    if (max > 0 && (size_t)max < n)
        n = (size_t)max;
    for (size_t i = 0; i < n; i++) {
        const struct vt_yt_entry *e = &info->entries[i];
        struct reg g = {.url = e->url,
                        .kind = "url",
                        .platform_id = e->id,
                        .title = e->title,
                        .list_id = list_id};
        char id[VT_ID_MAX], why[512];
        int is_new = 0;

        if (!e->url || vt_url_check(e->url, why, sizeof(why))) {
            vt_log(lib, VT_LOG_WARN, "list entry %zu skipped: %s", i + 1, e->url ? why : "no URL");
            failed++;
            continue;
        }
        rc = register_video(lib, &g, o, id, &is_new);
        if (rc)
            return rc;
        added += is_new;
        if (is_new && fn && fn(user, id, 1))
            break;
    }
    vt_log(lib, VT_LOG_INFO, "list '%s': %zu entries looked at, %zu new%s",
           info->title ? info->title : "", n, added, failed ? ", some skipped" : "");
    return 0;
}

/* One info JSON (from yt-dlp -J, or a file): a list's entries, or one video. */
static int add_from_info(struct vt_library *lib, const char *url, const char *kind,
                         const char *data, size_t len, const struct vt_add_opts *o, vt_added_fn fn,
                         void *user)
{
    struct vt_ytinfo info;
    char err[512];
    int rc = vt_ytinfo_parse(data, len, &info, err, sizeof(err));

    if (rc)
        return vt_lib_fail(lib, rc, "'%s': %s", url, err);
    if (info.is_playlist) {
        struct vt_list_rec l = {.url = (char *)url,
                                .kind = (char *)kind,
                                .title = info.title,
                                .stt_mode = (char *)(o && o->stt ? o->stt : "auto"),
                                .max_entries = o ? o->limit : 0,
                                .keep_media = !(o && o->no_keep_media)};

        l.added_at = l.checked_at = vt_wall_s();
        rc = vt_store_begin(lib->store);
        if (!rc)
            rc = vt_store_list_put(lib->store, &l);
        rc = vt_lib_end_write(lib, rc);
        if (!rc)
            rc = add_entries(lib, &info, l.id, l.max_entries, o, fn, user);
    } else {
        /* the page is the canonical name; a given info file keeps its own path too */
        const char *page = !strcmp(kind, "url") && info.webpage_url ? info.webpage_url : url;
        struct reg g = {.url = page,
                        .kind = kind,
                        .platform_id = info.id,
                        .extractor = info.extractor,
                        .title = info.title,
                        .info = data,
                        .info_len = len};
        char id[VT_ID_MAX];
        int is_new;

        if (!strcmp(kind, "info-json") && info.webpage_url)
            g.url = info.webpage_url;
        rc = register_video(lib, &g, o, id, &is_new);
        if (!rc && fn)
            fn(user, id, is_new);
    }
    vt_ytinfo_release(&info);
    return rc;
}

int vt_add_url(struct vt_library *lib, const char *url, const struct vt_add_opts *o, vt_added_fn fn,
               void *user)
{
    char err[512], *json = NULL, *cwd;
    size_t len = 0;
    double t0 = vt_wall_s(), m0 = vt_monotonic_s();
    int rc = check_stt(lib, o);

    if (rc)
        return rc;
    if (vt_url_check(url, err, sizeof(err)))
        return vt_lib_fail(lib, VT_EINVAL, "'%.300s': %s", url, err);
    if (vt_fetch_ytdlp_ask_version(lib, err, sizeof(err)))
        return vt_lib_fail(lib, VT_ENOTFOUND, "%s", err);
    cwd = vt_xasprintf("%s/media/.add-%ld", lib->dir, (long)getpid());
    rc = vt_fetch_ask_info(lib, url, cwd, 1, &json, &len, err, sizeof(err));
    free(cwd);
    if (rc == 0) {
        rc = add_from_info(lib, url, "url", json, len, o, fn, user);
    } else {
        /* not reachable now (or not at all): registered, with the failure as fetch's
         * first attempt, so that resume retries it with backoff */
        struct reg g = {.url = url,
                        .kind = "url",
                        .fail_code = rc,
                        .fail_msg = err,
                        .fail_started = t0,
                        .fail_took = vt_monotonic_s() - m0};
        char id[VT_ID_MAX];
        int is_new;

        rc = register_video(lib, &g, o, id, &is_new);
        if (!rc && fn)
            fn(user, id, is_new);
        if (!rc && is_new)
            rc = vt_lib_fail(lib, VT_EIO, "%s: fetch failed%s: %s", id,
                             g.fail_code == VT_EIO ? " ('vidtheque resume' tries again later)" : "",
                             err);
    }
    free(json);
    return rc;
}

int vt_add_info_json(struct vt_library *lib, const char *path, const struct vt_add_opts *o,
                     vt_added_fn fn, void *user)
{
    char err[512], *data = NULL, real[4096];
    size_t len = 0;
    int rc = check_stt(lib, o);

    if (rc)
        return rc;
    if (!realpath(path, real))
        return vt_lib_fail(lib, VT_ENOTFOUND, "'%s': %s", path, strerror(errno));
    rc = vt_read_file_capped(real, "info JSON", VT_FETCH_INFO_MAX_BYTES, &data, &len, err,
                             sizeof(err));
    if (!rc)
        rc = vt_fetch_ytdlp_ask_version(lib, err, sizeof(err));
    if (rc) {
        free(data);
        return vt_lib_fail(lib, rc, "%s", err);
    }
    rc = add_from_info(lib, real, "info-json", data, len, o, fn, user);
    free(data);
    return rc;
}

int vt_update(struct vt_library *lib, vt_added_fn fn, void *user)
{
    struct vt_list_rec *l = NULL;
    size_t n = 0;
    int rc = vt_store_lists(lib->store, &l, &n), failed = 0;

    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    for (size_t i = 0; i < n; i++) {
        struct vt_add_opts o = {
            .stt = l[i].stt_mode, .no_keep_media = !l[i].keep_media, .limit = l[i].max_entries};
        char err[512], *data = NULL;
        size_t len = 0;
        int r;

        if (!strcmp(l[i].kind, "info-json")) {
            r = vt_read_file_capped(l[i].url, "info JSON", VT_FETCH_INFO_MAX_BYTES, &data, &len,
                                    err, sizeof(err));
        } else {
            char *cwd = vt_xasprintf("%s/media/.update-%ld", lib->dir, (long)getpid());

            r = vt_fetch_ytdlp_ask_version(lib, err, sizeof(err));
            if (!r)
                r = vt_fetch_ask_info(lib, l[i].url, cwd, 1, &data, &len, err, sizeof(err));
            free(cwd);
        }
        if (!r)
            r = add_from_info(lib, l[i].url, l[i].kind, data, len, &o, fn, user);
        else
            vt_lib_fail(lib, r, "list '%s': %s", l[i].url, err);
        if (r) {
            vt_log(lib, VT_LOG_ERROR, "%s", vt_errmsg(lib));
            failed++;
        }
        free(data);
    }
    vt_list_recs_free(l, n);
    return failed ? vt_lib_fail(lib, VT_EIO, "%d of %zu list(s) could not be checked", failed, n)
                  : 0;
}
