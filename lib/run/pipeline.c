/*
 * The pipeline: runs the stages by the stage table (model/stage.h, which says which
 * stages exist and how they connect). Each run of a stage on a video goes through the same steps:
 *
 *   claim   (write txn) state=running, owner=this process, started_at
 *                       (vt_store_stage_claim: only if the row is still as read)
 *   run     (no txn)    the stage computes its result
 *   save    (write txn) outputs + state done/skipped/failed + took_s, together,
 *                       only while this process still holds the stage
 *                       (vt_store_stage_lease, vt_store_stage_finish)
 *
 * so a process killed at any moment leaves either the previous outputs and a
 * "running" stage whose owner is dead (which resume re-runs), or the new outputs
 * committed with their state. The owner is alive while it holds its lock file
 * (vt_lib_owner_lock), which the kernel releases whatever way the process ends. A
 * failed stage fails only itself and the stages that read its outputs; the others
 * run. A failure that may pass (VT_EIO: file system, database, network) is retried.
 * Which stages exist, what they read and what kind they are is the stage table's
 * (stage.h); a video made before a stage existed gets its row, queued, here.
 */
#include "base/util.h"
#include "core/library.h"
#include "run/lease.h"
#include "run/metrics.h"
#include "run/runnable.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What each stage of the table does, by id. */
static const struct vt_stage_def *const stages[VT_STAGE_COUNT] = {
#define VT_STAGE_X(ID, name, retries, deps, after, flags) [VT_STAGE_##ID] = &vt_stage_##name,
    VT_STAGE_LIST(VT_STAGE_X)
#undef VT_STAGE_X
};

static struct vt_stage_rec *find_rec(struct vt_stage_rec *r, size_t n, enum vt_stage_id id)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, vt_stages[id].name))
            return &r[i];
    return NULL;
}

/* Does stage d read what stage id produces, directly or through other stages? */
static int depends_on(enum vt_stage_id d, enum vt_stage_id id)
{
    unsigned in = vt_stages[d].deps | vt_stages[d].after;

    if (in & (1u << id))
        return 1;
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        if ((in & (1u << k)) && depends_on(k, id))
            return 1;
    return 0;
}

/*
 * The stage rows of video id, one for every stage of the table: a stage the video
 * has no row for (it was added after the video) gets one, queued. Inside a write
 * transaction; *added (may be NULL) tells whether it wrote. VT_ENOTFOUND when the
 * video has no rows at all (it is gone).
 */
static int read_stages(struct vt_library *lib, const char *id, struct vt_stage_rec **r, size_t *n,
                       int *added_out)
{
    int rc = vt_store_stages(lib->store, id, r, n), added = 0;

    if (!rc && !*n)
        rc = VT_ENOTFOUND;
    for (int k = 0; k < VT_STAGE_COUNT && !rc; k++) {
        struct vt_stage_rec x;

        if (find_rec(*r, *n, k))
            continue;
        memset(&x, 0, sizeof(x));
        snprintf(x.name, sizeof(x.name), "%s", vt_stages[k].name);
        x.state = VT_STATE_QUEUED;
        rc = vt_store_stage_put(lib->store, id, &x);
        added = 1;
    }
    if (!rc && added) {
        vt_stage_recs_free(*r, *n);
        rc = vt_store_stages(lib->store, id, r, n);
    }
    if (rc) {
        vt_stage_recs_free(*r, *n);
        *r = NULL;
        *n = 0;
    }
    if (added_out)
        *added_out = added;
    return rc;
}

/*
 * Drop what the stages whose rows point into stage id's rows (VT_STAGE_ROWS_OF_DEPS)
 * stored there, once stage id's own rows are replaced (saved: after its save, in its
 * write txn) or before they are cleared (!saved). Rows of theirs that point elsewhere stay
 * until their own save replaces them; so do all of a stage's that keeps its rows through
 * a replacement of id (keeps_of), and with them those of the stages reading it.
 */
static int clear_dependents(struct vt_library *lib, struct vt_video_rec *v, enum vt_stage_id id,
                            int saved)
{
    int rc = 0;

    for (int k = 0; k < VT_STAGE_COUNT && !rc; k++) {
        struct vt_stage_ctx c = {.lib = lib, .video = v, .stage = vt_stages[k].name};
        int keeps = saved && (stages[k]->keeps_of & (1u << id));

        if (!(vt_stages[k].flags & VT_STAGE_ROWS_OF_DEPS) ||
            !((vt_stages[k].deps | vt_stages[k].after) & (1u << id)))
            continue;
        if (!keeps)
            rc = clear_dependents(lib, v, k, saved);
        if (!rc && stages[k]->clear_of && (keeps || !(stages[k]->keeps_of & (1u << id))))
            rc = stages[k]->clear_of(&c, id);
        else if (!rc && stages[k]->clear)
            rc = stages[k]->clear(&c);
    }
    return rc;
}

/* Drop stage id's stored outputs (and those that point into them); inside a write txn. */
static int clear_outputs(struct vt_library *lib, struct vt_video_rec *v, enum vt_stage_id id)
{
    int rc = clear_dependents(lib, v, id, 0);

    if (!rc && stages[id]->clear)
        rc = stages[id]->clear(&(struct vt_stage_ctx){.lib = lib, .video = v});
    return rc;
}

int vt_pipeline_register(struct vt_library *lib, const struct vt_video_rec *v)
{
    int rc = vt_store_video_insert(lib->store, v);

    for (int k = 0; k < VT_STAGE_COUNT && !rc; k++) {
        struct vt_stage_rec r;

        memset(&r, 0, sizeof(r));
        snprintf(r.name, sizeof(r.name), "%s", vt_stages[k].name);
        r.state = VT_STATE_QUEUED;
        rc = vt_store_stage_put(lib->store, v->id, &r);
    }
    return rc;
}

/* Recompute index_state and data_status from the stages; inside a write txn. */
static int update_video_state(struct vt_library *lib, const char *id)
{
    struct vt_stage_rec *r;
    size_t n;
    int all_terminal = 1, any_failed = 0, any_started = 0, fetch_failed = 0, any_cut = 0;
    enum vt_index_state index_state;
    enum vt_data_status data_status;
    /* workers settling two stages of one video at once each read the other's row as
     * it was: the video's row lock orders them (PostgreSQL; SQLite has one writer) */
    int rc = vt_store_video_lock(lib->store, id);

    if (!rc)
        rc = vt_store_stages(lib->store, id, &r, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        int k = vt_stage_find(r[i].name);

        if (!vt_state_terminal(r[i].state))
            all_terminal = 0;
        if (r[i].state != VT_STATE_QUEUED)
            any_started = 1;
        if (r[i].state == VT_STATE_DONE && r[i].error)
            any_cut = 1; /* done, but a bound cut its result (vt_stage_ctx.cut) */
        if (r[i].state == VT_STATE_FAILED) {
            any_failed = 1;
            if (k >= 0 && (vt_stages[k].flags & VT_STAGE_SOURCE))
                fetch_failed = 1;
        }
    }
    vt_stage_recs_free(r, n);
    if (fetch_failed) {
        index_state = all_terminal ? VT_INDEX_FAILED : VT_INDEX_PROCESSING;
        data_status = VT_DATA_MISSING;
    } else if (all_terminal) {
        index_state = VT_INDEX_READY;
        data_status = any_failed || any_cut ? VT_DATA_PARTIAL : VT_DATA_OK;
    } else {
        index_state = any_started ? VT_INDEX_PROCESSING : VT_INDEX_QUEUED;
        data_status = any_started ? VT_DATA_PARTIAL : VT_DATA_MISSING;
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
static int stage_retries(enum vt_stage_id id)
{
    return vt_stages[id].retries > 0 ? vt_stages[id].retries : 1;
}

/* The attempts that count against the stage's retries: those since its last redo. Its
 * attempts in all go on counting (its history, and the fencing token that a late
 * settle or heartbeat must match), so the redo leaves them and notes them instead. */
static int attempts_now(const struct vt_stage_rec *r)
{
    return r->attempts - r->attempts_base;
}

/*
 * A run that failed with code: final (state failed), or, for a failure that may
 * pass (VT_EIO: network, disk full, I/O error) or that another machine may not have
 * (VT_EHERE: a file or model missing here), queued again for a later attempt, by any
 * worker, while attempts remain. The error is kept either way.
 */
static void settle_failure(struct vt_library *lib, enum vt_stage_id id, struct vt_stage_rec *rec,
                           int code)
{
    if ((code == VT_EIO || code == VT_EHERE) && attempts_now(rec) < stage_retries(id)) {
        rec->state = VT_STATE_QUEUED;
        /* on the database's clock, as the pick that compares it with its now (leases
         * too): a worker whose clock is off does not retry early or late */
        rec->retry_at = vt_store_now(lib->store) + retry_delay(attempts_now(rec));
    } else {
        rec->state = VT_STATE_FAILED;
        rec->retry_at = 0;
    }
}

int vt_pipeline_record_failure(struct vt_library *lib, const char *id, enum vt_stage_id stage,
                               const char *model, int code, const char *error, double started_at,
                               double took_s)
{
    struct vt_stage_rec *r = NULL, *me;
    size_t n = 0;
    int rc = (unsigned)stage < VT_STAGE_COUNT ? read_stages(lib, id, &r, &n, NULL) : VT_ENOTFOUND;

    if (!rc && !(me = find_rec(r, n, stage)))
        rc = VT_ENOTFOUND;
    if (!rc) {
        me->attempts++;
        settle_failure(lib, stage, me, code);
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

/*
 * For the kill tests: VIDTHEQUE_TEST_STOP_AT=STAGE:claimed (or :saved) stops the
 * process (SIGSTOP) right after that commit, so a test can SIGKILL it at exactly that
 * moment; STAGE:saving stops it inside the finishing transaction, its rows written and
 * locked, before the commit (a VM paused there). A trailing ":kill" (STAGE:claimed:kill)
 * kills the process instead (SIGKILL: a run that crashes its worker, every time).
 * Nothing is faked: the process stops, and what follows is a real kill.
 */
/* Count a stage's run for the process's metrics (metrics.h) by how it ended. */
static void metrics_ran(const struct vt_library *lib, const char *name, int rc, int outcome,
                        const struct vt_stage_rec *rec, long fenced, double took_s)
{
    if (rc == VT_ESTATE && lib->fenced != fenced)
        vt_metrics_stage_ran(name, "fenced", took_s);
    else if (rc)
        return; /* not recorded: the database's trouble, said by the caller */
    else if (outcome == 0)
        vt_metrics_stage_ran(name, "done", took_s);
    else if (outcome == VT_SKIP)
        vt_metrics_stage_ran(name, "skipped", took_s);
    else
        vt_metrics_stage_ran(name, rec->state == VT_STATE_QUEUED ? "retry" : "failed", took_s);
}

static void test_stop_at(const char *stage, const char *point)
{
    const char *env = getenv("VIDTHEQUE_TEST_STOP_AT");
    size_t n = strlen(stage), k = strlen(point);

    if (!env || strncmp(env, stage, n) || env[n] != ':' || strncmp(env + n + 1, point, k))
        return;
    if (!env[n + 1 + k])
        raise(SIGSTOP);
    else if (!strcmp(env + n + 1 + k, ":kill"))
        raise(SIGKILL);
}

/* What claim found a stage to be. */
enum claim {
    CLAIM_NONE,    /* not ours to run: settled, running elsewhere, or waiting for inputs */
    CLAIM_TAKEN,   /* claimed: running in this process */
    CLAIM_SETTLED, /* an input failed or was skipped: so is the stage, without running */
    CLAIM_WAITING, /* a retried stage waiting for its next attempt */
    CLAIM_DEAD,    /* its holder died on the last attempt: failed, a dead letter */
};

/*
 * The lease a claim takes, in seconds: a queue worker's (--lease); an in-process run's
 * on PostgreSQL too, whose machines cannot see each other's lock files, so that workers
 * and other machines' runs leave the stage alone while its heartbeat (vt_lease_keep)
 * extends it and take it over once it runs out; none (0) on SQLite, one machine, where
 * the owner's lock file says whether an in-process run is alive.
 */
static double claim_lease_s(struct vt_library *lib)
{
    if (lib->lease_s > 0)
        return lib->lease_s;
    return strcmp(vt_store_backend(lib->store), "postgresql") ? 0 : vt_lease_default_s();
}

/* Whether a stage of r other than me has left queued (started, whatever came of it). */
static int other_started(const struct vt_stage_rec *r, size_t n, const struct vt_stage_rec *me)
{
    for (size_t i = 0; i < n; i++)
        if (&r[i] != me && r[i].state != VT_STATE_QUEUED)
            return 1;
    return 0;
}

/* Why a retried stage waits: its next attempt, when, and the last error. */
static void retry_why(char *why, size_t whylen, enum vt_stage_id id, const struct vt_stage_rec *me)
{
    char when[32];

    vt_utc_iso(when, sizeof(when), me->retry_at);
    snprintf(why, whylen, "attempt %d of %d not before %s (last error: %s)", attempts_now(me) + 1,
             stage_retries(id), when, me->error ? me->error : "none");
}

/* End claim_in's transaction when it claims nothing: the rows read_stages added (and the
 * video's state) are kept, else nothing was written. */
static int end_unclaimed(struct vt_library *lib, const char *id, int added)
{
    int rc;

    if (!added) {
        vt_store_rollback(lib->store);
        return 0;
    }
    rc = update_video_state(lib, id);
    if (!rc)
        rc = vt_store_commit(lib->store);
    if (rc < 0)
        vt_store_rollback(lib->store);
    return rc;
}

/* Stage me of video v settled without running (its record as the caller set it): its
 * outputs go, the record and the video's state are saved. Ends claim_in's transaction. */
static int settle_unclaimed(struct vt_library *lib, struct vt_video_rec *v, enum vt_stage_id id,
                            struct vt_stage_rec *me)
{
    int rc = clear_outputs(lib, v, id);

    if (!rc)
        rc = vt_store_stage_put(lib->store, v->id, me);
    if (!rc)
        rc = update_video_state(lib, v->id);
    if (!rc)
        rc = vt_store_commit(lib->store);
    if (rc < 0)
        vt_store_rollback(lib->store);
    return rc;
}

/* Dep k of stage me (id) failed or was skipped: so is me, without running; its outputs
 * go. Ends claim_in's transaction; why says why. */
static int settle_unrun(struct vt_library *lib, struct vt_video_rec *v, enum vt_stage_id id,
                        struct vt_stage_rec *me, int k, const struct vt_stage_rec *dep, char *why,
                        size_t whylen)
{
    snprintf(why, whylen, "%s %s%s%s%s", vt_stages[k].name, vt_state_name(dep->state),
             dep->error ? " (" : "", dep->error ? dep->error : "", dep->error ? ")" : "");
    me->state = dep->state == VT_STATE_FAILED ? VT_STATE_FAILED : VT_STATE_SKIPPED;
    free(me->error);
    me->error = vt_xasprintf("not run: %s", why);
    free(me->owner);
    me->owner = NULL;
    me->started_at = vt_wall_s();
    me->took_s = 0;
    return settle_unclaimed(lib, v, id, me);
}

/*
 * Stage me of video v was running under a holder now gone (a worker killed, frozen past
 * its lease, or a run that kills its own process) on its last attempt: rather than a
 * crash loop taken over forever, the stage fails (a dead letter: `jobs --failed` lists
 * it, `redo` runs it again), its outputs go. Ends claim_in's transaction; why says why.
 */
static int settle_dead(struct vt_library *lib, struct vt_video_rec *v, enum vt_stage_id id,
                       struct vt_stage_rec *me, char *why, size_t whylen)
{
    snprintf(why, whylen,
             "attempt %d of %d did not finish: its process (%s) stopped or crashed and its "
             "lease ran out ('vidtheque redo' runs it again)",
             attempts_now(me), stage_retries(id), me->owner ? me->owner : "?");
    me->state = VT_STATE_FAILED;
    free(me->error);
    me->error = vt_xstrdup(why);
    free(me->owner);
    me->owner = NULL;
    me->lease_until = 0;
    me->retry_at = 0;
    me->took_s = vt_wall_s() - me->started_at;
    return settle_unclaimed(lib, v, id, me);
}

/* Take stage me of video v (rows r[0..n)) for this process under its lease; ends
 * claim_in's transaction. *taken: 1 with *out the running row, 0 when another handle
 * changed the row since it was read. */
static int take(struct vt_library *lib, struct vt_video_rec *v, const struct vt_stage_rec *r,
                size_t n, struct vt_stage_rec *me, int added, struct vt_stage_rec *out, int *taken)
{
    double now = vt_store_now(lib->store), lease_s = claim_lease_s(lib);
    enum vt_lease lease;
    int rc;

    *taken = 0;
    me->lease_until = lease_s > 0 ? now + lease_s : 0;
    rc = vt_store_stage_claim(lib->store, v->id, me, lib->owner, now, me->lease_until, &lease);
    if (!rc && lease != VT_LEASE_HELD) {
        vt_store_rollback(lib->store); /* not as read: another handle has it */
        return 0;
    }
    me->state = VT_STATE_RUNNING;
    me->started_at = now;
    me->took_s = 0;
    me->retry_at = 0;
    me->attempts++;
    /* a claim changes the video's state only when it starts the first of its stages: once
     * one has left queued the video is processing either way, and its row says so (every
     * change of a stage recomputes it, under the video's lock). Three round trips less. */
    if (!rc && (added || !other_started(r, n, me)))
        rc = update_video_state(lib, v->id);
    if (!rc)
        rc = vt_store_commit(lib->store);
    if (rc < 0)
        vt_store_rollback(lib->store);
    if (!rc) {
        *out = *me;
        out->model = out->error = out->owner = NULL;
        *taken = 1;
    }
    return rc;
}

/* Claim stage id of video v for this process, inside the write transaction the caller
 * began, which this ends: 0 with *res said (why says why for CLAIM_SETTLED and
 * CLAIM_WAITING), or an error code. Whether it may run is the runnable rule's
 * (runnable.c). */
static int claim_in(struct vt_library *lib, struct vt_video_rec *v, enum vt_stage_id id,
                    struct vt_stage_rec *out, enum claim *res, char *why, size_t whylen)
{
    struct vt_stage_rec *r = NULL, *me;
    size_t n = 0;
    int rc, added = 0, dep = -1, taken;

    why[0] = '\0';
    *res = CLAIM_NONE;
    rc = read_stages(lib, v->id, &r, &n, &added);
    if (rc) {
        vt_store_rollback(lib->store);
        return rc;
    }
    me = find_rec(r, n, id);
    switch (vt_stage_runnable(lib, r, n, id, vt_store_now(lib->store), &dep)) {
    case VT_RUNNABLE_RUN:
        /* a takeover counts: its attempt ended without a result, as a crash does */
        if (me->state == VT_STATE_RUNNING && attempts_now(me) >= stage_retries(id)) {
            rc = settle_dead(lib, v, id, me, why, whylen);
            if (!rc)
                *res = CLAIM_DEAD;
            break;
        }
        rc = take(lib, v, r, n, me, added, out, &taken);
        if (!rc && taken)
            *res = CLAIM_TAKEN;
        break;
    case VT_RUNNABLE_SETTLE:
        rc = settle_unrun(lib, v, id, me, dep, find_rec(r, n, dep), why, whylen);
        if (!rc)
            *res = CLAIM_SETTLED;
        break;
    case VT_RUNNABLE_RETRY:
        retry_why(why, whylen, id, me);
        *res = CLAIM_WAITING;
        rc = end_unclaimed(lib, v->id, added);
        break;
    case VT_RUNNABLE_NO:
    case VT_RUNNABLE_INPUTS:
        rc = end_unclaimed(lib, v->id, added); /* keep the rows read_stages added */
        break;
    }
    vt_stage_recs_free(r, n);
    return rc;
}

/* claim_in in a write transaction of its own. */
static int claim(struct vt_library *lib, struct vt_video_rec *v, enum vt_stage_id id,
                 struct vt_stage_rec *out, enum claim *res, char *why, size_t whylen)
{
    int rc = vt_store_begin(lib->store);

    *res = CLAIM_NONE;
    return rc ? rc : claim_in(lib, v, id, out, res, why, whylen);
}

/* Store the outcome of a run; the stage's outputs and its state in one transaction. */
static int finish(struct vt_library *lib, enum vt_stage_id id, struct vt_stage_ctx *c,
                  struct vt_stage_rec *rec, int outcome, double took_s)
{
    const struct vt_stage_def *d = stages[id];
    enum vt_lease lease;
    int rc = vt_store_begin(lib->store);

    if (rc)
        return rc;
    rc = vt_store_stage_lease(lib->store, c->video->id, vt_stages[id].name, lib->owner,
                              rec->attempts, &lease);
    if (!rc && lease == VT_LEASE_GONE)
        rc = VT_ENOTFOUND; /* the video was removed meanwhile */
    if (rc)
        goto fail;
    if (lease == VT_LEASE_LOST)
        goto lost;
    if (outcome == 0 && d->save) {
        double t0 = vt_monotonic_s();

        rc = d->save(c);
        if (!rc)
            rc = clear_dependents(lib, c->video, id, 1);
        c->save_s = vt_monotonic_s() - t0;
        if (!rc)
            test_stop_at(c->stage, "saving");
    } else {
        rc = clear_outputs(lib, c->video, id);
    }
    if (rc) {
        /* cannot store the result: record the failure instead */
        vt_store_rollback(lib->store);
        snprintf(c->err, sizeof(c->err), "cannot store result: %s", vt_store_errmsg(lib->store));
        rc = vt_store_begin(lib->store);
        if (rc)
            return rc;
        clear_outputs(lib, c->video, id);
        outcome = VT_EIO;
    }
    if (outcome < 0)
        settle_failure(lib, id, rec, outcome);
    else
        rec->state = outcome == 0 ? VT_STATE_DONE : VT_STATE_SKIPPED;
    rec->model = c->model[0] ? c->model : NULL;
    rec->error = outcome != 0 && c->err[0] ? c->err : NULL;
    if (outcome == 0 && c->cut[0])
        rec->error = c->cut;
    rec->owner = NULL;
    rec->took_s = took_s;
    rc = vt_store_stage_finish(lib->store, c->video->id, rec, lib->owner, &lease);
    rec->model = rec->error = NULL;
    if (!rc && lease != VT_LEASE_HELD)
        goto lost;
    if (!rc)
        rc = update_video_state(lib, c->video->id);
    if (!rc)
        rc = vt_store_commit(lib->store);
    if (rc)
        goto fail;
    if (outcome == 0 && d->after_commit)
        d->after_commit(c);
    return 0;
lost:
    /* someone else took the stage over (we were presumed dead): the fence refuses our
     * result, and nothing of it is written */
    rc = VT_ESTATE;
    lib->fenced++;
    snprintf(lib->err, sizeof(lib->err),
             "%s: %s: lease lost (attempt %d was taken over): result dropped", c->video->id,
             c->stage, rec->attempts);
fail:
    vt_store_rollback(lib->store);
    return rc;
}

/* Run stage id of video v if it may run now: 1 when it ran or settled, 0 when not, or
 * an error code. in_txn: the caller began the write transaction the claim runs in
 * (the queue's pick), which is ended here whatever happens. */
static int run_stage(struct vt_library *lib, struct vt_video_rec *v, enum vt_stage_id id,
                     int in_txn)
{
    const struct vt_stage_def *d = stages[id];
    const char *name = vt_stages[id].name;
    struct vt_stage_ctx c;
    struct vt_stage_rec rec;
    struct vt_lease_keeper *keeper = NULL;
    enum claim res;
    char why[600];
    double t0;
    long fenced;
    int rc, outcome;

    memset(&c, 0, sizeof(c));
    memset(&rec, 0, sizeof(rec));
    c.lib = lib;
    c.video = v;
    c.stage = name;
    /* alive in the lock before our name is on any stage */
    rc = vt_lib_owner_lock(lib);
    if (rc) {
        if (in_txn)
            vt_store_rollback(lib->store);
        return rc;
    }
    t0 = vt_monotonic_s();
    rc = in_txn ? claim_in(lib, v, id, &rec, &res, why, sizeof(why))
                : claim(lib, v, id, &rec, &res, why, sizeof(why));
    lib->queue_s += vt_monotonic_s() - t0;
    if (rc == VT_ENOTFOUND) /* no stage rows: the video is gone */
        return vt_lib_fail(lib, rc, "%s: removed from the library while being indexed", v->id);
    if (rc)
        return vt_lib_fail(lib, rc, "%s: %s: %s", v->id, name, vt_store_errmsg(lib->store));
    switch (res) {
    case CLAIM_NONE:
        return 0;
    case CLAIM_SETTLED:
        vt_log(lib, VT_LOG_INFO, "%s: %s not run: %s", v->id, name, why);
        return 1;
    case CLAIM_WAITING:
        vt_log(lib, VT_LOG_INFO, "%s: %s: %s", v->id, name, why);
        return 0;
    case CLAIM_DEAD:
        vt_log(lib, VT_LOG_ERROR, "%s: %s failed: %s", v->id, name, why);
        return 1;
    case CLAIM_TAKEN:
        break;
    }
    /* a worker's heartbeat extends its leases; an in-process run's lease has its own */
    if (lib->job.claimed)
        lib->job.claimed(lib->job.user, v->id, name, rec.attempts);
    else if (rec.lease_until > 0)
        keeper = vt_lease_keep(lib, v->id, name, rec.attempts, claim_lease_s(lib));
    test_stop_at(name, "claimed");
    vt_log(lib, VT_LOG_INFO, "%s: %s started", v->id, name);
    vt_stage_progress(&c, 0);
    t0 = vt_monotonic_s();
    outcome = d->run(&c);
    if (outcome < 0 && !c.err[0])
        snprintf(c.err, sizeof(c.err), "failed (code %d)", outcome);
    {
        double t1 = vt_monotonic_s();

        fenced = lib->fenced;
        rc = finish(lib, id, &c, &rec, outcome, t1 - t0);
        lib->queue_s += vt_monotonic_s() - t1 - c.save_s;
    }
    vt_lease_keeper_stop(keeper);
    metrics_ran(lib, name, rc, outcome, &rec, fenced, vt_monotonic_s() - t0);
    if (lib->job.released)
        lib->job.released(lib->job.user, v->id, name, rec.attempts);
    if (!rc)
        test_stop_at(name, "saved");
    vt_stage_progress(&c, -1);
    if (d->release)
        d->release(&c);
    if (rc == VT_ENOTFOUND)
        return vt_lib_fail(lib, rc, "%s: removed from the library while being indexed", v->id);
    if (rc == VT_ESTATE && lib->fenced != fenced) {
        /* fenced: the stage is another run's now; not this run's failure */
        vt_log(lib, VT_LOG_WARN, "%s", lib->err);
        return 0;
    }
    if (rc)
        return vt_lib_fail(lib, rc, "%s: %s: %s", v->id, name, vt_store_errmsg(lib->store));
    if (outcome == 0 && c.cut[0]) /* the video is partial: said as a failure is */
        vt_log(lib, VT_LOG_ERROR, "%s: %s done, but not all of it: %s", v->id, name, c.cut);
    else if (outcome == 0)
        vt_log(lib, VT_LOG_INFO, "%s: %s done in %.1f s", v->id, name, vt_monotonic_s() - t0);
    else if (outcome == VT_SKIP)
        vt_log(lib, VT_LOG_INFO, "%s: %s skipped: %s", v->id, name, c.err);
    else if (rec.state == VT_STATE_QUEUED)
        vt_log(lib, VT_LOG_ERROR,
               "%s: %s failed (attempt %d of %d; 'vidtheque resume' tries again in %.0f s): %s",
               v->id, name, attempts_now(&rec), stage_retries(id), rec.retry_at - vt_wall_s(),
               c.err);
    else
        vt_log(lib, VT_LOG_ERROR, "%s: %s failed: %s", v->id, name, c.err);
    return 1;
}

/* Why a stage that another run holds was left alone: "ID: stage 'NAME' is running in
 * process OWNER", and until when its lease holds it, when it has one. */
static void running_why(char *why, size_t n, const char *id, const struct vt_stage_rec *r)
{
    char until[32] = "";

    if (r->lease_until > 0)
        vt_utc_iso(until, sizeof(until), r->lease_until);
    snprintf(why, n, "%s: stage '%s' is running in process %s%s%s%s", id, r->name,
             r->owner ? r->owner : "?", until[0] ? " (its lease holds it until " : "", until,
             until[0] ? ")" : "");
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
        int k = vt_stage_find(r[i].name);

        if (vt_state_terminal(r[i].state))
            continue;
        unfinished = 1;
        if (r[i].state == VT_STATE_RUNNING &&
            !vt_stage_holder_gone(lib, &r[i], vt_store_now(lib->store))) {
            running_why(why, n, id, &r[i]);
            break;
        }
        if (r[i].retry_at > 0 && !why[0] && k >= 0 && !(ran && ran[k])) {
            char when[32];

            vt_utc_iso(when, sizeof(when), r[i].retry_at);
            snprintf(why, n, "%s: stage '%s' waits for attempt %d of %d, not before %s (%s)", id,
                     r[i].name, attempts_now(&r[i]) + 1, stage_retries(k), when,
                     r[i].error ? r[i].error : "no error kept");
        }
    }
    vt_stage_recs_free(r, nr);
    return unfinished;
}

int vt_process(struct vt_library *lib, const char *id)
{
    struct vt_video_rec v;
    int ran[VT_STAGE_COUNT] = {0};
    int rc;

    rc = vt_lib_video(lib, id, &v);
    if (rc)
        return rc;
    for (int progress = 1; progress && !rc;) {
        progress = 0;
        for (int k = 0; k < VT_STAGE_COUNT && rc >= 0; k++) {
            rc = run_stage(lib, &v, k, 0);
            if (rc > 0) {
                progress = ran[k] = 1;
                rc = 0;
            }
            if (!rc && progress && (vt_stages[k].flags & VT_STAGE_SOURCE)) {
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
        for (int k = 0; k < VT_STAGE_COUNT && !rc; k++)
            if (stages[k]->indexed)
                stages[k]->indexed(lib, &v);
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

/* Once video id has settled, what follows indexing (media not kept goes). */
static int after_settled(struct vt_library *lib, const char *id)
{
    struct vt_video_rec v;
    int rc = vt_lib_video(lib, id, &v);

    if (rc == VT_ENOTFOUND)
        return 0; /* removed meanwhile */
    if (rc)
        return rc;
    if (v.index_state == VT_INDEX_READY || v.index_state == VT_INDEX_FAILED)
        for (int k = 0; k < VT_STAGE_COUNT; k++)
            if (stages[k]->indexed)
                stages[k]->indexed(lib, &v);
    vt_video_rec_release(&v);
    return 0;
}

int vt_work_one(struct vt_library *lib, unsigned set, int *did)
{
    struct vt_video_rec v;
    char id[65], stage[32];
    int rc, found = 0, k;
    double t0 = vt_monotonic_s();

    *did = 0;
    rc = vt_store_begin(lib->store);
    if (!rc)
        rc = vt_store_queue_next(lib->store, set, vt_store_now(lib->store), id, stage, &found);
    if (rc || !found) {
        lib->queue_s += vt_monotonic_s() - t0;
        vt_store_rollback(lib->store);
        return rc ? vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store)) : 0;
    }
    k = vt_stage_find(stage);
    rc = k < 0 ? VT_ENOTFOUND : vt_lib_video(lib, id, &v);
    if (rc) {
        vt_store_rollback(lib->store);
        return k < 0 ? vt_lib_fail(lib, VT_EINVAL, "'%s': no such stage", stage) : rc;
    }
    lib->queue_s += vt_monotonic_s() - t0;
    /* the claim runs in the pick's transaction: on PostgreSQL the row stays locked */
    rc = run_stage(lib, &v, k, 1);
    vt_video_rec_release(&v);
    if (rc < 0)
        return rc;
    *did = rc > 0 ? 1 : 2;
    return rc > 0 ? after_settled(lib, id) : 0;
}

int vt_redo(struct vt_library *lib, const char *id, const char *stage)
{
    int target = vt_stage_find(stage);
    struct vt_video_rec v;
    struct vt_stage_rec *r = NULL;
    size_t n = 0;
    int rc;

    if (target < 0)
        return vt_lib_fail(lib, VT_EINVAL, "'%s': no such stage", stage);
    rc = vt_lib_video(lib, id, &v);
    if (rc)
        return rc;
    rc = vt_store_begin(lib->store);
    if (!rc)
        rc = read_stages(lib, id, &r, &n, NULL);
    for (int k = 0; k < VT_STAGE_COUNT && !rc; k++) {
        struct vt_stage_rec *x = find_rec(r, n, k);

        if (k != target && !depends_on(k, target))
            continue;
        if (x->state == VT_STATE_RUNNING &&
            !vt_stage_holder_gone(lib, x, vt_store_now(lib->store))) {
            rc = VT_ESTATE;
            running_why(lib->err, sizeof(lib->err), id, x);
            break;
        }
        x->state = VT_STATE_QUEUED;
        x->retry_at = 0;
        /* a fresh budget of retries: attempts keep counting (the stage's history, the
         * fencing token), the budget counts from here */
        x->attempts_base = x->attempts;
        free(x->error);
        free(x->owner);
        x->error = x->owner = NULL;
        /* its rows stay: the run's save replaces them in the commit that stores the
         * new ones, so pages and search serve the old ones until then */
        rc = vt_store_stage_put(lib->store, id, x);
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
    int rc = vt_store_unfinished(lib->store, VT_STAGE_COUNT, &ids, &n), err_rc = 0, unfinished = 0,
        partial = 0;

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
