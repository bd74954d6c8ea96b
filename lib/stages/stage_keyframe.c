/*
 * The keyframe stage: the media decoded once (keyframe.c) into shots, the sharpest frame of
 * each and its near-duplicates, the kept frames written as JPEG files under
 * frames/<id>/<run>/; a run's folder replaces the previous one after the commit.
 */
#include "base/util.h"
#include "core/library.h"
#include "visual/keyframe.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How much sooner than the file the video stream must stop for its last shot to be
 * lengthened to the file's end (seconds). */
#define SHORT_STREAM_S 0.5

struct keyframe_result {
    struct vt_kf_result kf;
    char *rel_dir; /* frames/<id>/<run>, relative to the library */
    char *abs_dir;
    int saved;
};

static int keyframe_run(struct vt_stage_ctx *c)
{
    struct keyframe_result *r = vt_xcalloc(1, sizeof(*r));
    char *video_dir;
    int rc;

    c->result = r;
    snprintf(c->model, sizeof(c->model), "vidtheque-shots");
    if (!c->video->has_video)
        return vt_err(c->err, sizeof(c->err), VT_SKIP, "no video stream");
    if (vt_stage_need_media(c))
        return VT_ENOTFOUND;
    /* each run writes into its own folder: committed frames are never overwritten */
    r->rel_dir = vt_xasprintf("frames/%s/r%lx%lx", c->video->id, (unsigned long)vt_wall_s(),
                              (unsigned long)getpid());
    r->abs_dir = vt_xasprintf("%s/%s", c->lib->dir, r->rel_dir);
    video_dir = vt_xasprintf("%s/frames/%s", c->lib->dir, c->video->id);
    rc = vt_mkdir_p(video_dir, c->err, sizeof(c->err));
    free(video_dir);
    if (!rc)
        rc = vt_mkdir_p(r->abs_dir, c->err, sizeof(c->err));
    if (rc)
        return rc;
    rc = vt_keyframe_run(c->video->source_path, r->abs_dir, &r->kf, vt_stage_progress, c, c->err,
                         sizeof(c->err));
    /* a video stream shorter than the file (a still over a talk, one frame then audio):
     * its last picture stays on screen to the end, and so does its shot. Not for the few
     * hundredths of a second containers differ by (audio packets past the last frame):
     * MPEG-TS and MP4 of one recording keep the same shots. */
    if (!rc && r->kf.n_shots &&
        c->video->duration_s > r->kf.shots[r->kf.n_shots - 1].end_s + SHORT_STREAM_S)
        r->kf.shots[r->kf.n_shots - 1].end_s = c->video->duration_s;
    if (r->kf.model[0])
        snprintf(c->model, sizeof(c->model), "%s", r->kf.model);
    return rc;
}

static int keyframe_save(struct vt_stage_ctx *c)
{
    struct keyframe_result *r = c->result;
    int rc = vt_store_keyframes_replace(c->lib->store, c->video->id, &r->kf, r->rel_dir);

    r->saved = !rc;
    return rc;
}

static int keyframe_clear(struct vt_stage_ctx *c)
{
    return vt_store_keyframes_clear(c->lib->store, c->video->id);
}

/* Remove the folders of earlier runs, now that this run's frames are committed. */
static void keyframe_after_commit(struct vt_stage_ctx *c)
{
    struct keyframe_result *r = c->result;
    char *video_dir = vt_xasprintf("%s/frames/%s", c->lib->dir, c->video->id);
    const char *mine = strrchr(r->rel_dir, '/') + 1;
    DIR *d = opendir(video_dir);
    struct dirent *e;

    while (d && (e = readdir(d))) {
        char *p;

        if (e->d_name[0] == '.' || !strcmp(e->d_name, mine))
            continue;
        p = vt_xasprintf("%s/%s", video_dir, e->d_name);
        vt_rm_rf(p);
        free(p);
    }
    if (d)
        closedir(d);
    free(video_dir);
}

static void keyframe_release(struct vt_stage_ctx *c)
{
    struct keyframe_result *r = c->result;

    if (!r)
        return;
    if (!r->saved && r->abs_dir)
        vt_rm_rf(r->abs_dir);
    vt_kf_result_release(&r->kf);
    free(r->rel_dir);
    free(r->abs_dir);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_keyframe = {
    .run = keyframe_run,
    .save = keyframe_save,
    .clear = keyframe_clear,
    .after_commit = keyframe_after_commit,
    .release = keyframe_release,
};
