/*
 * `vidtheque check`'s walk over the files a library's rows name: the downloaded media,
 * the kept frames and their small versions (keyframe.h, vt_kf_small_name). The store's
 * own check (vt_store_check) comes first. Here rather than in the handle (core/library.c):
 * the frames' names are the keyframe stage's business, which the handle is below.
 */
#include "base/util.h"
#include "core/library.h"
#include "visual/keyframe.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct check_ctx {
    struct vt_library *lib;
    int problems;
    int rc;
};

/*
 * The small versions of the kept frames (vt_kf_small_name). A video indexed before they
 * were written has none, which is no damage (pages then show the full frames): a note. A
 * video with some has them all, else one was lost: a problem for each missing one.
 */
static void check_small(struct check_ctx *c, const char *id, const struct vt_store_frame *f,
                        size_t n)
{
    size_t kept = 0, have = 0;
    char *missing = vt_xcalloc(n ? n : 1, 1);

    for (size_t i = 0; i < n; i++) {
        char name[PATH_MAX], *p;

        if (!f[i].path)
            continue;
        kept++;
        if (vt_kf_small_name(f[i].path, name, sizeof(name))) {
            missing[i] = 1;
            continue;
        }
        p = vt_lib_path(c->lib, name);
        if (access(p, R_OK))
            missing[i] = 1;
        else
            have++;
        free(p);
    }
    if (kept && !have)
        vt_log(c->lib, VT_LOG_INFO,
               "%s: no small frame images (indexed before they were written); pages show the "
               "full frames, `redo --stage keyframe` writes them",
               id);
    for (size_t i = 0; have && i < n; i++) {
        char name[PATH_MAX];

        if (!missing[i])
            continue;
        if (vt_kf_small_name(f[i].path, name, sizeof(name)))
            snprintf(name, sizeof(name), "%s", f[i].path);
        vt_log(c->lib, VT_LOG_ERROR, "%s: frame #%d: small image '%s' is missing", id, f[i].f.index,
               name);
        c->problems++;
    }
    free(missing);
}

static int check_video(void *user, const struct vt_video_rec *v)
{
    struct check_ctx *c = user;
    struct vt_store_frame *f;
    size_t n;

    /* the library's own media: downloaded, or a local file copied in (a relative path; one
     * added --in-place is the user's, maybe on another machine's disk) */
    if (v->source_path && v->source_kind &&
        (strcmp(v->source_kind, "file") || v->source_path[0] != '/')) {
        char *p = vt_lib_path(c->lib, v->source_path);

        if (access(p, R_OK)) {
            vt_log(c->lib, VT_LOG_ERROR, "%s: the %s media '%s' is missing", v->id,
                   strcmp(v->source_kind, "file") ? "downloaded" : "copied", v->source_path);
            c->problems++;
        }
        free(p);
    }
    c->rc = vt_store_frames(c->lib->store, v->id, &f, &n);
    if (c->rc)
        return 1;
    for (size_t i = 0; i < n; i++) {
        char *p;

        if (!f[i].path)
            continue;
        p = vt_xasprintf("%s/%s", c->lib->dir, f[i].path);
        if (access(p, R_OK)) {
            vt_log(c->lib, VT_LOG_ERROR, "%s: frame #%d: image '%s' is missing", v->id,
                   f[i].f.index, f[i].path);
            c->problems++;
        }
        free(p);
    }
    check_small(c, v->id, f, n);
    vt_store_frames_free(f, n);
    return 0;
}

int vt_check(struct vt_library *lib, int *problems)
{
    struct check_ctx c = {lib, 0, 0};
    int ok, rc = vt_store_check(lib->store, &ok);

    *problems = 0;
    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    if (!ok) {
        vt_log(lib, VT_LOG_ERROR, "%s", vt_store_errmsg(lib->store));
        c.problems++;
    } else if (*vt_store_errmsg(lib->store)) {
        /* sound as far as it could be checked: what was not is said (PostgreSQL without amcheck) */
        vt_log(lib, VT_LOG_WARN, "%s", vt_store_errmsg(lib->store));
    }
    rc = vt_store_video_each(lib->store, check_video, &c);
    if (!rc)
        rc = c.rc;
    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    *problems = c.problems;
    return 0;
}
