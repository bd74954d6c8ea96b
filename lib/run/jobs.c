/*
 * The queue as the commands see it (vidtheque.h): `vidtheque jobs` (depth by stage and
 * state, running leases by worker, stages waiting for a retry with their error and next
 * try, dead letters with their last error), the wait of
 * `add --wait` for videos that workers index, and the small settings a queued add takes
 * (priority). Reads only, plus one UPDATE: no stage runs here, so the front binary,
 * which links no media library, can run `jobs`.
 */
#include "base/util.h"
#include "core/library.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vt_stage_set_parse(const char *list, unsigned *set, char *err, size_t errlen)
{
    char name[64];
    const char *p = list;

    *set = 0;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        int k;

        if (n == 0 || n >= sizeof(name))
            return vt_err(err, errlen, VT_EINVAL, "'%s': a list of stage names, like stt,ocr",
                          list);
        memcpy(name, p, n);
        name[n] = '\0';
        k = vt_stage_find(name);
        if (k < 0)
            return vt_err(err, errlen, VT_EINVAL, "'%s': no such stage", name);
        *set |= 1u << k;
        p += n + (p[n] == ',');
    }
    if (!*set)
        return vt_err(err, errlen, VT_EINVAL, "no stage named");
    return 0;
}

const char *vt_library_backend(const struct vt_library *lib)
{
    return vt_store_backend(lib->store);
}

int vt_video_set_priority(struct vt_library *lib, const char *id, int priority)
{
    int rc = vt_store_begin(lib->store);

    if (!rc)
        rc = vt_store_video_priority(lib->store, id, priority);
    return vt_lib_end_write(lib, rc);
}

/* The queue's counts: n[stage][state], and the runnable queued ones per stage. */
struct depth {
    long long n[VT_STAGE_COUNT][VT_STATE_COUNT], runnable[VT_STAGE_COUNT];
};

static int read_depth(struct vt_library *lib, struct depth *d)
{
    struct vt_queue_count *c;
    size_t n;
    int rc = vt_store_queue_counts(lib->store, vt_store_now(lib->store), &c, &n);

    memset(d, 0, sizeof(*d));
    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    for (size_t i = 0; i < n; i++) {
        int k = vt_stage_find(c[i].stage);

        if (k < 0)
            continue; /* a stage this version no longer has */
        d->n[k][c[i].state] += c[i].n;
        d->runnable[k] += c[i].runnable;
    }
    free(c);
    return 0;
}

/* The running, retrying and failed stages (struct vt_queue_job arrays). */
struct job_lists {
    struct vt_queue_job *run, *retry, *bad;
    size_t n_run, n_retry, n_bad;
};

/* " (N since redo)" after the attempts of a job that was redone (its retries count from
 * there), else "". */
static const char *since_redo(char *buf, size_t n, const struct vt_queue_job *j)
{
    buf[0] = '\0';
    if (j->attempts_base > 0)
        snprintf(buf, n, " (%d since redo)", j->attempts - j->attempts_base);
    return buf;
}

/* Stages queued again after a failure: when the next try may start, and why. */
static void text_retrying(struct vt_sb *sb, const struct job_lists *l, double now)
{
    if (!l->n_retry)
        return;
    vt_sb_addf(sb, "\nretrying: %zu\n", l->n_retry);
    for (size_t i = 0; i < l->n_retry; i++) {
        const struct vt_queue_job *j = &l->retry[i];
        char when[32], since[48];

        vt_utc_iso(when, sizeof(when), j->retry_at);
        vt_sb_addf(sb, "  %s  %s  after attempt %d%s, next try %s (in %.0f s): %s\n", j->video_id,
                   j->stage, j->attempts, since_redo(since, sizeof(since), j), when,
                   j->retry_at > now ? j->retry_at - now : 0.0,
                   j->error ? j->error : "no error kept");
    }
}

static void text_report(struct vt_sb *sb, const struct depth *d, const struct job_lists *l,
                        int failed)
{
    const struct vt_queue_job *run = l->run, *bad = l->bad;
    size_t n_run = l->n_run, n_bad = l->n_bad;
    double now = vt_wall_s();
    long long n_failed = 0;

    vt_sb_addf(sb, "%-12s %8s %8s %8s %8s %8s %8s\n", "stage", "queued", "runnable", "running",
               "done", "skipped", "failed");
    for (int k = 0; k < VT_STAGE_COUNT; k++) {
        vt_sb_addf(sb, "%-12s %8lld %8lld %8lld %8lld %8lld %8lld\n", vt_stages[k].name,
                   d->n[k][VT_STATE_QUEUED], d->runnable[k], d->n[k][VT_STATE_RUNNING],
                   d->n[k][VT_STATE_DONE], d->n[k][VT_STATE_SKIPPED], d->n[k][VT_STATE_FAILED]);
        n_failed += d->n[k][VT_STATE_FAILED];
    }
    vt_sb_addf(sb, "\nrunning: %zu\n", n_run);
    for (size_t i = 0; i < n_run; i++) {
        const struct vt_queue_job *j = &run[i];
        char since[48];

        since_redo(since, sizeof(since), j);
        if (j->lease_until > 0)
            vt_sb_addf(sb, "  %s  %s  %s  attempt %d%s  lease %s in %.0f s\n",
                       j->owner ? j->owner : "?", j->stage, j->video_id, j->attempts, since,
                       j->lease_until < now ? "expired" : "expires",
                       j->lease_until < now ? now - j->lease_until : j->lease_until - now);
        else
            vt_sb_addf(sb, "  %s  %s  %s  attempt %d%s  in-process (no lease)\n",
                       j->owner ? j->owner : "?", j->stage, j->video_id, j->attempts, since);
    }
    text_retrying(sb, l, now);
    if (!failed) {
        if (n_failed)
            vt_sb_addf(sb, "\nfailed: %lld ('vidtheque jobs --failed' lists them)\n", n_failed);
        return;
    }
    vt_sb_addf(sb, "\nfailed: %zu\n", n_bad);
    for (size_t i = 0; i < n_bad; i++) {
        char since[48];

        vt_sb_addf(sb, "  %s  %s  after %d attempt(s)%s: %s\n", bad[i].video_id, bad[i].stage,
                   bad[i].attempts, since_redo(since, sizeof(since), &bad[i]),
                   bad[i].error ? bad[i].error : "no error kept");
    }
}

static json_t *json_str(const char *s)
{
    char *clean;
    json_t *j;

    if (!s)
        return json_null();
    clean = vt_utf8_clean(s);
    j = json_string(clean);
    free(clean);
    return j;
}

static json_t *json_retrying(const struct job_lists *l, double now)
{
    json_t *re = json_array();

    for (size_t i = 0; i < l->n_retry; i++) {
        const struct vt_queue_job *j = &l->retry[i];
        char when[32];

        vt_utc_iso(when, sizeof(when), j->retry_at);
        json_array_append_new(
            re, json_pack("{s:s, s:s, s:i, s:i, s:o, s:s, s:f}", "video", j->video_id, "stage",
                          j->stage, "attempts", j->attempts, "attempts_since_redo",
                          j->attempts - j->attempts_base, "error", json_str(j->error), "next_try",
                          when, "next_try_in_s", j->retry_at > now ? j->retry_at - now : 0.0));
    }
    return re;
}

static char *json_report(const struct depth *d, const struct job_lists *l)
{
    const struct vt_queue_job *run = l->run, *bad = l->bad;
    size_t n_run = l->n_run, n_bad = l->n_bad;
    json_t *root = json_object(), *st = json_array(), *ru = json_array(), *fa = json_array();
    double now = vt_wall_s();
    char *out;

    for (int k = 0; k < VT_STAGE_COUNT; k++) {
        json_t *o = json_pack("{s:s, s:I}", "stage", vt_stages[k].name, "runnable",
                              (json_int_t)d->runnable[k]);

        for (int s = 0; s < VT_STATE_COUNT; s++)
            json_object_set_new(o, vt_state_name(s), json_integer(d->n[k][s]));
        json_array_append_new(st, o);
    }
    for (size_t i = 0; i < n_run; i++) {
        json_t *o = json_pack("{s:o, s:s, s:s, s:i, s:i}", "owner", json_str(run[i].owner), "stage",
                              run[i].stage, "video", run[i].video_id, "attempts", run[i].attempts,
                              "attempts_since_redo", run[i].attempts - run[i].attempts_base);

        json_object_set_new(o, "expires_in_s",
                            run[i].lease_until > 0 ? json_real(run[i].lease_until - now)
                                                   : json_null());
        json_array_append_new(ru, o);
    }
    for (size_t i = 0; i < n_bad; i++)
        json_array_append_new(
            fa, json_pack("{s:s, s:s, s:i, s:i, s:o}", "video", bad[i].video_id, "stage",
                          bad[i].stage, "attempts", bad[i].attempts, "attempts_since_redo",
                          bad[i].attempts - bad[i].attempts_base, "error", json_str(bad[i].error)));
    json_object_set_new(root, "stages", st);
    json_object_set_new(root, "running", ru);
    json_object_set_new(root, "retrying", json_retrying(l, now));
    json_object_set_new(root, "failed", fa);
    out = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    return out;
}

int vt_jobs_report(struct vt_library *lib, int failed, int json, char **out)
{
    struct depth d;
    struct job_lists l = {0};
    int rc = read_depth(lib, &d);

    *out = NULL;
    if (!rc)
        rc = vt_store_queue_jobs(lib->store, VT_JOBS_RUNNING, &l.run, &l.n_run);
    if (!rc)
        rc = vt_store_queue_jobs(lib->store, VT_JOBS_RETRYING, &l.retry, &l.n_retry);
    if (!rc && (failed || json))
        rc = vt_store_queue_jobs(lib->store, VT_JOBS_FAILED, &l.bad, &l.n_bad);
    if (rc) {
        rc = lib->err[0] ? rc : vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    } else if (json) {
        *out = json_report(&d, &l);
    } else {
        struct vt_sb sb = {0};

        text_report(&sb, &d, &l, failed);
        *out = vt_sb_detach(&sb);
    }
    vt_queue_jobs_free(l.run, l.n_run);
    vt_queue_jobs_free(l.retry, l.n_retry);
    vt_queue_jobs_free(l.bad, l.n_bad);
    return rc;
}

/* Log the stages of video id that settled since *seen (one state per stage), and
 * whether the video has settled. */
static int report_video(struct vt_library *lib, const char *id, enum vt_state *seen, int *settled)
{
    struct vt_stage_rec *r;
    size_t n;
    int rc = vt_store_stages(lib->store, id, &r, &n);

    *settled = 1;
    if (rc)
        return vt_lib_fail(lib, rc, "%s: %s", id, vt_store_errmsg(lib->store));
    if (!n)
        return vt_lib_fail(lib, VT_ENOTFOUND, "%s: removed from the library while waiting", id);
    for (size_t i = 0; i < n; i++) {
        int k = vt_stage_find(r[i].name);

        if (!vt_state_terminal(r[i].state))
            *settled = 0;
        if (k < 0 || seen[k] == r[i].state)
            continue;
        seen[k] = r[i].state;
        if (r[i].state == VT_STATE_RUNNING)
            vt_log(lib, VT_LOG_INFO, "%s: %s running in %s", id, r[i].name,
                   r[i].owner ? r[i].owner : "?");
        else if (r[i].state != VT_STATE_QUEUED)
            vt_log(lib, r[i].state == VT_STATE_FAILED ? VT_LOG_ERROR : VT_LOG_INFO, "%s: %s %s%s%s",
                   id, r[i].name, vt_state_name(r[i].state), r[i].error ? ": " : "",
                   r[i].error ? r[i].error : "");
    }
    vt_stage_recs_free(r, n);
    return 0;
}

int vt_wait_settled(struct vt_library *lib, char (*ids)[VT_ID_MAX], size_t n)
{
    enum vt_state(*seen)[VT_STAGE_COUNT] = vt_xcalloc(n ? n : 1, sizeof(*seen));
    int rc = 0;

    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < VT_STAGE_COUNT; k++)
            seen[i][k] = VT_STATE_QUEUED;
    for (;;) {
        int all = 1;

        for (size_t i = 0; i < n && !rc; i++) {
            int settled;

            rc = report_video(lib, ids[i], seen[i], &settled);
            all &= settled;
        }
        if (rc || all)
            break;
        rc = vt_store_wait_work(lib->store, 1.0);
        rc = rc < 0 ? vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store)) : 0;
    }
    free(seen);
    return rc;
}
