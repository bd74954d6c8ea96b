/*
 * The pipeline: the one place that knows which stages exist and how they
 * connect. Each run of a stage on a video goes through the same steps:
 *
 *   claim   (write txn) state=running, owner=this process, started_at
 *   run     (no txn)    the stage computes its result
 *   save    (write txn) outputs + state done/skipped/failed + took_s, together
 *
 * so a process killed at any moment leaves either the previous outputs and a
 * "running" stage whose owner is dead (which resume re-runs), or the new outputs
 * committed with their state. The owner is alive while it holds its lock file
 * (vt_lib_owner_lock), which the kernel releases whatever way the process ends. A
 * failed stage fails only itself and the stages that read its outputs; the others
 * run. A failure that may pass (VT_EIO: file system, database, network) is retried.
 */
#include "library.h"
#include "util.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The stages, in the order they are shown (the seed page's). They run as soon as
 * what they need has finished: one pass over the table after another until a pass
 * runs nothing, so chunk (which waits for keyframe's shots) runs after keyframe.
 */
static const struct vt_stage_def *const stages[] = {
    &vt_stage_fetch,    &vt_stage_stt, &vt_stage_chunk,       &vt_stage_text_embed,
    &vt_stage_keyframe, &vt_stage_ocr, &vt_stage_frame_embed,
};

static const char *const stage_names[] = {"fetch",    "stt", "chunk",       "text_embed",
                                          "keyframe", "ocr", "frame_embed", NULL};

const char *const *vt_stage_names(void)
{
    return stage_names;
}

static const struct vt_stage_def *find_stage(const char *name)
{
    for (size_t i = 0; i < VT_ARRAY_LEN(stages); i++)
        if (!strcmp(stages[i]->name, name))
            return stages[i];
    return NULL;
}

static struct vt_stage_rec *find_rec(struct vt_stage_rec *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, name))
            return &r[i];
    return NULL;
}

/* Does d read what stage name produces, directly or through other stages? */
static int depends_on(const struct vt_stage_def *d, const char *name)
{
    for (size_t i = 0; i < VT_ARRAY_LEN(d->deps) && d->deps[i]; i++) {
        const struct vt_stage_def *dep = find_stage(d->deps[i]);

        if (!strcmp(d->deps[i], name) || (dep && depends_on(dep, name)))
            return 1;
    }
    for (size_t i = 0; i < VT_ARRAY_LEN(d->after) && d->after[i]; i++) {
        const struct vt_stage_def *dep = find_stage(d->after[i]);

        if (!strcmp(d->after[i], name) || (dep && depends_on(dep, name)))
            return 1;
    }
    return 0;
}

int vt_pipeline_register(struct vt_library *lib, const struct vt_video_rec *v)
{
    int rc = vt_store_video_insert(lib->store, v);

    for (size_t i = 0; i < VT_ARRAY_LEN(stages) && !rc; i++) {
        struct vt_stage_rec r;

        memset(&r, 0, sizeof(r));
        snprintf(r.name, sizeof(r.name), "%s", stages[i]->name);
        snprintf(r.state, sizeof(r.state), "queued");
        rc = vt_store_stage_put(lib->store, v->id, &r);
    }
    return rc;
}

static int terminal(const char *state)
{
    return !strcmp(state, "done") || !strcmp(state, "skipped") || !strcmp(state, "failed");
}

/* Recompute index_state and data_status from the stages; inside a write txn. */
static int update_video_state(struct vt_library *lib, const char *id)
{
    struct vt_stage_rec *r;
    size_t n;
    int all_terminal = 1, any_failed = 0, any_started = 0, fetch_failed = 0;
    const char *index_state, *data_status;
    int rc = vt_store_stages(lib->store, id, &r, &n);

    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (!terminal(r[i].state))
            all_terminal = 0;
        if (strcmp(r[i].state, "queued"))
            any_started = 1;
        if (!strcmp(r[i].state, "failed")) {
            any_failed = 1;
            if (!strcmp(r[i].name, "fetch"))
                fetch_failed = 1;
        }
    }
    vt_stage_recs_free(r, n);
    if (fetch_failed) {
        index_state = all_terminal ? "failed" : "processing";
        data_status = "missing";
    } else if (all_terminal) {
        index_state = "ready";
        data_status = any_failed ? "partial" : "ok";
    } else {
        index_state = any_started ? "processing" : "queued";
        data_status = any_started ? "partial" : "missing";
    }
    if (all_terminal) {
        /* the video is indexed: a bounded step of merging the full-text index keeps
         * searches fast as the library grows */
        rc = vt_store_index_merge(lib->store, 64);
        if (rc)
            return rc;
    }
    return vt_store_video_set_state(lib->store, id, index_state, data_status,
                                    all_terminal ? vt_wall_s() : 0);
}

/* Seconds before attempt n+1 of a retried stage: 1, 4, 16 ... times the base
 * (VIDTHEQUE_RETRY_BASE seconds, 60 by default; tests make it short). */
static double retry_delay(int attempts)
{
    const char *env = getenv("VIDTHEQUE_RETRY_BASE");
    double base = env && *env ? strtod(env, NULL) : 60.0;

    if (!(base >= 0) || base > 86400)
        base = 60.0;
    for (int i = 1; i < attempts && i < 8; i++)
        base *= 4;
    return base;
}

/* Attempts of a stage before a failure that may pass is final: a full disk, an I/O
 * error or a database that cannot be written may be over by the next attempt. */
static int stage_retries(const struct vt_stage_def *d)
{
    return d->retries ? d->retries : 4;
}

/*
 * A run that failed with code: final (state failed), or, for a failure that may
 * pass (VT_EIO: network, disk full, I/O error), queued again for a later attempt
 * while attempts remain. The error is kept either way.
 */
static void settle_failure(const struct vt_stage_def *d, struct vt_stage_rec *rec, int code)
{
    if (code == VT_EIO && rec->attempts < stage_retries(d)) {
        snprintf(rec->state, sizeof(rec->state), "queued");
        rec->retry_at = vt_wall_s() + retry_delay(rec->attempts);
    } else {
        snprintf(rec->state, sizeof(rec->state), "failed");
        rec->retry_at = 0;
    }
}

int vt_pipeline_record_failure(struct vt_library *lib, const char *id, const char *stage,
                               const char *model, int code, const char *error, double started_at,
                               double took_s)
{
    const struct vt_stage_def *d = find_stage(stage);
    struct vt_stage_rec *r = NULL, *me;
    size_t n = 0;
    int rc = d ? vt_store_stages(lib->store, id, &r, &n) : VT_ENOTFOUND;

    if (!rc && !(me = find_rec(r, n, stage)))
        rc = VT_ENOTFOUND;
    if (!rc) {
        me->attempts++;
        settle_failure(d, me, code);
        free(me->model);
        free(me->error);
        me->model = vt_xstrdup(model);
        me->error = vt_xstrdup(error);
        me->started_at = started_at;
        me->took_s = took_s;
        rc = vt_store_stage_put(lib->store, id, me);
    }
    if (!rc)
        rc = update_video_state(lib, id);
    vt_stage_recs_free(r, n);
    return rc;
}

void vt_stage_progress(void *ctx, double frac)
{
    struct vt_stage_ctx *c = ctx;

    if (c->lib->cb.progress)
        c->lib->cb.progress(c->lib->cb.user, c->video->id, c->stage, frac);
}

/*
 * For the kill tests: VIDTHEQUE_TEST_STOP_AT=STAGE:claimed (or :saved) stops the
 * process (SIGSTOP) right after that commit, so a test can SIGKILL it at exactly that
 * moment. Nothing is faked: the process stops, and what follows is a real kill.
 */
static void test_stop_at(const char *stage, const char *point)
{
    const char *env = getenv("VIDTHEQUE_TEST_STOP_AT");
    size_t n = strlen(stage);

    if (env && !strncmp(env, stage, n) && env[n] == ':' && !strcmp(env + n + 1, point))
        raise(SIGSTOP);
}

/* Claim stage d of video v for this process; 1 if claimed, 0 if not ours to run. */
static int claim(struct vt_library *lib, const struct vt_video_rec *v, const struct vt_stage_def *d,
                 struct vt_stage_rec *out, char *why, size_t whylen)
{
    struct vt_stage_rec *r = NULL, *me;
    size_t n = 0;
    int rc;

    why[0] = '\0';
    rc = vt_store_begin(lib->store);
    if (rc)
        return rc;
    rc = vt_store_stages(lib->store, v->id, &r, &n);
    if (rc)
        goto out;
    me = find_rec(r, n, d->name);
    if (!me) {
        rc = VT_ENOTFOUND;
        goto out;
    }
    if (terminal(me->state) ||
        (!strcmp(me->state, "running") && !vt_lib_owner_dead(lib, me->owner)))
        goto out; /* rc 0: nothing to do here */
    if (!strcmp(me->state, "queued") && me->retry_at > vt_wall_s()) {
        char when[32];

        vt_utc_iso(when, sizeof(when), me->retry_at);
        snprintf(why, whylen, "attempt %d of %d not before %s (last error: %s)", me->attempts + 1,
                 stage_retries(d), when, me->error ? me->error : "none");
        rc = 3; /* waiting for its next attempt */
        goto out;
    }
    for (size_t i = 0; i < VT_ARRAY_LEN(d->after) && d->after[i]; i++) {
        struct vt_stage_rec *dep = find_rec(r, n, d->after[i]);

        if (dep && !terminal(dep->state))
            goto out; /* wait for it */
    }
    for (size_t i = 0; i < VT_ARRAY_LEN(d->deps) && d->deps[i]; i++) {
        struct vt_stage_rec *dep = find_rec(r, n, d->deps[i]);

        if (!dep || !terminal(dep->state))
            goto out; /* not ready yet (another process may be running it) */
        if (strcmp(dep->state, "done")) {
            /* the dependency failed or was skipped: so is this stage, without running */
            snprintf(why, whylen, "%s %s%s%s%s", d->deps[i], dep->state, dep->error ? " (" : "",
                     dep->error ? dep->error : "", dep->error ? ")" : "");
            snprintf(me->state, sizeof(me->state), "%s",
                     !strcmp(dep->state, "failed") ? "failed" : "skipped");
            free(me->error);
            me->error = vt_xasprintf("not run: %s", why);
            free(me->owner);
            me->owner = NULL;
            me->started_at = vt_wall_s();
            me->took_s = 0;
            rc = d->clear ? d->clear(&(struct vt_stage_ctx){.lib = lib, .video = (void *)v}) : 0;
            if (!rc)
                rc = vt_store_stage_put(lib->store, v->id, me);
            if (!rc)
                rc = update_video_state(lib, v->id);
            if (!rc)
                rc = vt_store_commit(lib->store);
            if (!rc)
                rc = 2; /* settled without running */
            goto done;
        }
    }
    snprintf(me->state, sizeof(me->state), "running");
    free(me->owner);
    me->owner = vt_xstrdup(lib->owner);
    free(me->error);
    me->error = NULL;
    me->started_at = vt_wall_s();
    me->took_s = 0;
    me->retry_at = 0;
    me->attempts++;
    rc = vt_store_stage_put(lib->store, v->id, me);
    if (!rc)
        rc = update_video_state(lib, v->id);
    if (!rc)
        rc = vt_store_commit(lib->store);
    if (!rc) {
        *out = *me;
        out->model = out->error = out->owner = NULL;
        rc = 1;
    }
    goto done;
out:
    vt_store_rollback(lib->store);
    vt_stage_recs_free(r, n);
    return rc;
done:
    if (rc < 0)
        vt_store_rollback(lib->store);
    vt_stage_recs_free(r, n);
    return rc;
}

/* Store the outcome of a run; the stage's outputs and its state in one transaction. */
static int finish(struct vt_library *lib, const struct vt_stage_def *d, struct vt_stage_ctx *c,
                  struct vt_stage_rec *rec, int outcome, double took_s)
{
    struct vt_stage_rec *r = NULL, *cur;
    size_t n = 0;
    int rc = vt_store_begin(lib->store);

    if (rc)
        return rc;
    rc = vt_store_stages(lib->store, c->video->id, &r, &n);
    if (rc)
        goto fail;
    cur = find_rec(r, n, d->name);
    if (!cur) {
        rc = VT_ENOTFOUND; /* the video was removed meanwhile */
        goto fail;
    }
    if (strcmp(cur->state, "running") || !cur->owner || strcmp(cur->owner, lib->owner)) {
        /* someone else took the stage over (we were presumed dead): drop our result */
        vt_log(lib, VT_LOG_WARN, "%s: %s: result dropped, stage taken over", c->video->id, d->name);
        rc = 0;
        goto fail;
    }
    if (outcome == 0 && d->save)
        rc = d->save(c);
    else if (d->clear)
        rc = d->clear(c);
    if (rc) {
        /* cannot store the result: record the failure instead */
        vt_store_rollback(lib->store);
        snprintf(c->err, sizeof(c->err), "cannot store result: %s", vt_store_errmsg(lib->store));
        vt_stage_recs_free(r, n);
        r = NULL;
        n = 0;
        rc = vt_store_begin(lib->store);
        if (rc)
            return rc;
        if (d->clear)
            d->clear(c);
        outcome = VT_EIO;
    }
    if (outcome < 0)
        settle_failure(d, rec, outcome);
    else
        snprintf(rec->state, sizeof(rec->state), "%s", outcome == 0 ? "done" : "skipped");
    rec->model = c->model[0] ? c->model : NULL;
    rec->error = outcome != 0 && c->err[0] ? c->err : NULL;
    rec->owner = NULL;
    rec->took_s = took_s;
    rc = vt_store_stage_put(lib->store, c->video->id, rec);
    rec->model = rec->error = NULL;
    if (!rc)
        rc = update_video_state(lib, c->video->id);
    if (!rc)
        rc = vt_store_commit(lib->store);
    if (rc)
        goto fail;
    vt_stage_recs_free(r, n);
    if (outcome == 0 && d->after_commit)
        d->after_commit(c);
    return 0;
fail:
    vt_store_rollback(lib->store);
    vt_stage_recs_free(r, n);
    return rc;
}

static int run_stage(struct vt_library *lib, struct vt_video_rec *v, const struct vt_stage_def *d)
{
    struct vt_stage_ctx c;
    struct vt_stage_rec rec;
    char why[600];
    double t0;
    int rc, outcome;

    memset(&c, 0, sizeof(c));
    memset(&rec, 0, sizeof(rec));
    c.lib = lib;
    c.video = v;
    c.stage = d->name;
    /* alive in the lock before our name is on any stage */
    rc = vt_lib_owner_lock(lib);
    if (rc)
        return rc;
    rc = claim(lib, v, d, &rec, why, sizeof(why));
    if (rc == 2) {
        vt_log(lib, VT_LOG_INFO, "%s: %s not run: %s", v->id, d->name, why);
        return 1;
    }
    if (rc == 3) {
        vt_log(lib, VT_LOG_INFO, "%s: %s: %s", v->id, d->name, why);
        return 0;
    }
    if (rc == VT_ENOTFOUND) /* no stage rows: the video is gone */
        return vt_lib_fail(lib, rc, "%s: removed from the library while being indexed", v->id);
    if (rc <= 0)
        return rc < 0
                   ? vt_lib_fail(lib, rc, "%s: %s: %s", v->id, d->name, vt_store_errmsg(lib->store))
                   : 0;
    test_stop_at(d->name, "claimed");
    vt_log(lib, VT_LOG_INFO, "%s: %s started", v->id, d->name);
    vt_stage_progress(&c, 0);
    t0 = vt_monotonic_s();
    outcome = d->run(&c);
    if (outcome < 0 && !c.err[0])
        snprintf(c.err, sizeof(c.err), "failed (code %d)", outcome);
    rc = finish(lib, d, &c, &rec, outcome, vt_monotonic_s() - t0);
    if (!rc)
        test_stop_at(d->name, "saved");
    vt_stage_progress(&c, -1);
    if (d->release)
        d->release(&c);
    if (rc == VT_ENOTFOUND)
        return vt_lib_fail(lib, rc, "%s: removed from the library while being indexed", v->id);
    if (rc)
        return vt_lib_fail(lib, rc, "%s: %s: %s", v->id, d->name, vt_store_errmsg(lib->store));
    if (outcome == 0)
        vt_log(lib, VT_LOG_INFO, "%s: %s done in %.1f s", v->id, d->name, vt_monotonic_s() - t0);
    else if (outcome == VT_SKIP)
        vt_log(lib, VT_LOG_INFO, "%s: %s skipped: %s", v->id, d->name, c.err);
    else if (!strcmp(rec.state, "queued"))
        vt_log(lib, VT_LOG_ERROR,
               "%s: %s failed (attempt %d of %d; 'vidtheque resume' tries again in %.0f s): %s",
               v->id, d->name, rec.attempts, stage_retries(d), rec.retry_at - vt_wall_s(), c.err);
    else
        vt_log(lib, VT_LOG_ERROR, "%s: %s failed: %s", v->id, d->name, c.err);
    return 1;
}

/*
 * Whether video id is left unfinished (1) or not (0), and why into why: a stage
 * running in another process that is alive, or a stage waiting for its next
 * attempt. ran (may be NULL) marks the stages that ran in this call: a retry they
 * wait for was reported when they failed, so why stays "" for it.
 */
static int unfinished_why(struct vt_library *lib, const char *id, const int *ran, char *why,
                          size_t n)
{
    struct vt_stage_rec *r;
    size_t nr;
    int rc = vt_store_stages(lib->store, id, &r, &nr), unfinished = 0;

    why[0] = '\0';
    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    for (size_t i = 0; i < nr; i++) {
        size_t k = 0;

        if (terminal(r[i].state))
            continue;
        unfinished = 1;
        while (k < VT_ARRAY_LEN(stages) && strcmp(stages[k]->name, r[i].name))
            k++;
        if (!strcmp(r[i].state, "running") && !vt_lib_owner_dead(lib, r[i].owner)) {
            snprintf(why, n, "%s: stage '%s' is running in process %s", id, r[i].name, r[i].owner);
            break;
        }
        if (r[i].retry_at > 0 && !why[0] && k < VT_ARRAY_LEN(stages) && !(ran && ran[k])) {
            char when[32];

            vt_utc_iso(when, sizeof(when), r[i].retry_at);
            snprintf(why, n, "%s: stage '%s' waits for attempt %d of %d, not before %s (%s)", id,
                     r[i].name, r[i].attempts + 1, stage_retries(stages[k]), when,
                     r[i].error ? r[i].error : "no error kept");
        }
    }
    vt_stage_recs_free(r, nr);
    return unfinished;
}

int vt_process(struct vt_library *lib, const char *id)
{
    struct vt_video_rec v;
    int ran[VT_ARRAY_LEN(stages)] = {0};
    int rc;

    rc = vt_lib_video(lib, id, &v);
    if (rc)
        return rc;
    for (int progress = 1; progress && !rc;) {
        progress = 0;
        for (size_t i = 0; i < VT_ARRAY_LEN(stages) && rc >= 0; i++) {
            rc = run_stage(lib, &v, stages[i]);
            if (rc > 0) {
                progress = ran[i] = 1;
                rc = 0;
            }
            if (!rc && progress && !strcmp(stages[i]->name, "fetch")) {
                /* later stages see what fetch learnt (duration, streams) */
                vt_video_rec_release(&v);
                rc = vt_lib_video(lib, id, &v);
            }
        }
    }
    if (!rc) {
        /* the video as the last pass left it: media not kept goes once it is indexed */
        vt_video_rec_release(&v);
        rc = vt_lib_video(lib, id, &v);
        if (!rc)
            vt_fetch_after_index(lib, &v);
    }
    vt_video_rec_release(&v);
    if (!rc) {
        /* left unfinished for a reason nobody was told yet: say it */
        char why[sizeof(lib->err)];

        rc = unfinished_why(lib, id, ran, why, sizeof(why));
        if (rc > 0)
            rc = why[0] ? vt_lib_fail(lib, VT_ESTATE, "%s", why) : 0;
    }
    return rc;
}

int vt_redo(struct vt_library *lib, const char *id, const char *stage)
{
    const struct vt_stage_def *target = find_stage(stage);
    struct vt_video_rec v;
    struct vt_stage_rec *r = NULL;
    size_t n = 0;
    int rc;

    if (!target)
        return vt_lib_fail(lib, VT_EINVAL, "'%s': no such stage", stage);
    rc = vt_lib_video(lib, id, &v);
    if (rc)
        return rc;
    rc = vt_store_begin(lib->store);
    if (!rc)
        rc = vt_store_stages(lib->store, id, &r, &n);
    for (size_t i = 0; i < VT_ARRAY_LEN(stages) && !rc; i++) {
        const struct vt_stage_def *d = stages[i];
        struct vt_stage_rec *x = find_rec(r, n, d->name);

        if (d != target && !depends_on(d, stage))
            continue;
        if (x && !strcmp(x->state, "running") && !vt_lib_owner_dead(lib, x->owner)) {
            rc = VT_ESTATE;
            snprintf(lib->err, sizeof(lib->err), "%s: stage '%s' is running in process %s", id,
                     d->name, x->owner);
            break;
        }
        if (!x)
            continue;
        snprintf(x->state, sizeof(x->state), "queued");
        x->retry_at = 0; /* attempts keep counting: they are the stage's history */
        free(x->error);
        free(x->owner);
        x->error = x->owner = NULL;
        rc = vt_store_stage_put(lib->store, id, x);
        if (!rc && d->clear)
            rc = d->clear(&(struct vt_stage_ctx){.lib = lib, .video = &v});
    }
    if (!rc)
        rc = update_video_state(lib, id);
    if (!rc)
        rc = vt_store_commit(lib->store);
    vt_stage_recs_free(r, n);
    if (rc) {
        vt_store_rollback(lib->store);
        vt_video_rec_release(&v);
        return rc == VT_ESTATE ? rc : vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    }
    vt_video_rec_release(&v);
    return vt_process(lib, id);
}

/* The state of video id after a run: 0 (ready), VT_ESTATE with why when unfinished,
 * or another error code; data (16 bytes) gets its data_status. */
static int settled(struct vt_library *lib, const char *id, char *data)
{
    char state[16], why[sizeof(lib->err)];
    int rc = vt_video_state(lib, id, state, data);

    if (rc || !strcmp(state, "ready"))
        return rc;
    rc = unfinished_why(lib, id, NULL, why, sizeof(why));
    if (rc < 0)
        return rc;
    if (why[0])
        return vt_lib_fail(lib, VT_ESTATE, "%s", why);
    return vt_lib_fail(lib, VT_ESTATE, "%s: not finished (its stages wait for one another)", id);
}

int vt_resume(struct vt_library *lib, int *n_videos)
{
    char **ids;
    char first_err[sizeof(lib->err)] = "", first_wait[sizeof(lib->err)] = "";
    size_t n;
    int rc = vt_store_unfinished(lib->store, &ids, &n), err_rc = 0, unfinished = 0, partial = 0;

    *n_videos = 0;
    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    vt_lib_owner_locks_sweep(lib);
    /* every video gets its turn, whatever happens to the others */
    for (size_t i = 0; i < n; i++) {
        char data[16];

        rc = vt_process(lib, ids[i]);
        if (!rc || rc == VT_ESTATE)
            rc = settled(lib, ids[i], data);
        if (rc == VT_ESTATE) {
            if (!unfinished++)
                snprintf(first_wait, sizeof(first_wait), "%s", lib->err);
        } else if (rc) {
            if (!err_rc)
                snprintf(first_err, sizeof(first_err), "%s", lib->err);
            err_rc = err_rc ? err_rc : rc;
        } else {
            (*n_videos)++;
            partial += strcmp(data, "ok") != 0;
        }
        free(ids[i]);
    }
    free(ids);
    if (err_rc)
        return vt_lib_fail(lib, err_rc, "%s", first_err);
    if (unfinished)
        return vt_lib_fail(lib, VT_ESTATE, "%d video(s) not finished: %s%s", unfinished, first_wait,
                           unfinished > 1 ? " (and more)" : "");
    if (partial)
        return vt_lib_fail(lib, VT_ESTATE,
                           "%d video(s) resumed, %d with a failed stage ('vidtheque show ID' says "
                           "why)",
                           *n_videos, partial);
    return 0;
}
