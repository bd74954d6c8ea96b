/*
 * Unit tests of redo's budget (lib/run/pipeline.c, vt_redo; the stages' attempts_base,
 * migration 14): a redone dead letter gets the stage's retries again, counted from the
 * redo, whether its next attempts fail (VT_EIO, VT_EHERE) or crash (a lease lost and
 * taken over), while attempts keeps counting on (the stage's history and the fencing
 * token); and a library of schema 13 is upgraded with its rows as they were. The
 * failures are real: a video whose file is not on this machine fails fetch with
 * VT_EHERE, a redo run in a child process that SIGKILLs itself right after its claim.
 */
#include "base/util.h"
#include "core/library.h"
#include "harness.h"
#include "pgtest.h"
#include "store/store_int.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ALL ((1u << VT_STAGE_COUNT) - 1)

static char *test_db; /* the running test's database on PostgreSQL (pgtest.h) */

/* A new library in dir whose video id (file /x/y.mp4, not on this machine) has every stage
 * queued. */
static struct vt_library *scratch(char *dir, size_t n, const char *id)
{
    struct vt_library *lib;
    char err[256];

    snprintf(dir, n, "/tmp/vt-unit-redo.XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    test_db = vt_test_library_db(dir);
    lib = vt_library_open(dir, VT_OPEN_CREATE, err, sizeof(err));
    if (!lib) {
        fprintf(stderr, "  %s\n", err);
        return NULL;
    }
    lib->lease_s = 30;
    vt_test_video_add(lib->store, id, id, 1);
    return lib;
}

static void scratch_done(struct vt_library *lib, const char *dir)
{
    vt_library_close(lib);
    vt_rm_rf(dir);
    vt_test_db_free(test_db);
    test_db = NULL;
}

/* Stage fetch of video id: its state, attempts and error (into err, n bytes). */
static enum vt_state fetch_row(struct vt_library *lib, const char *id, int *attempts,
                               double *retry_at, char *err, size_t n)
{
    struct vt_stage_rec *r = NULL;
    size_t nr = 0;
    enum vt_state st = VT_STATE_COUNT;

    err[0] = '\0';
    CHECK_INT(vt_store_stages(lib->store, id, &r, &nr), 0);
    for (size_t i = 0; i < nr; i++) {
        if (strcmp(r[i].name, "fetch"))
            continue;
        st = r[i].state;
        *attempts = r[i].attempts;
        *retry_at = r[i].retry_at;
        snprintf(err, n, "%s", r[i].error ? r[i].error : "");
    }
    vt_stage_recs_free(r, nr);
    return st;
}

/* Worker steps until nothing is left to run (at most 3 per stage); how many ran. */
static int drain(struct vt_library *lib)
{
    int n = 0, did = 1;

    while (did == 1 && n < 3 * VT_STAGE_COUNT) {
        CHECK_INT(vt_work_one(lib, ALL, &did), 0);
        n += did == 1;
    }
    return n;
}

/* One worker step; whether it ran or settled a stage. */
static int step(struct vt_library *lib)
{
    int did = 0;

    CHECK_INT(vt_work_one(lib, ALL, &did), 0);
    return did == 1;
}

/* A claim of fetch of video id by a worker that is gone at once: its lease ran out 70 s
 * ago (the row as a crash leaves it); the attempt it took. */
static int crashed_claim(struct vt_library *lib, const char *id)
{
    struct vt_stage_rec *r = NULL, seen;
    size_t n = 0;
    enum vt_lease res = VT_LEASE_GONE;
    double now = vt_store_now(lib->store) - 100;

    memset(&seen, 0, sizeof(seen));
    CHECK_INT(vt_store_stages(lib->store, id, &r, &n), 0);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, "fetch")) {
            seen = r[i];
            seen.model = seen.error = NULL;
            seen.owner = r[i].owner ? vt_xstrdup(r[i].owner) : NULL;
        }
    vt_stage_recs_free(r, n);
    CHECK_INT(vt_store_begin(lib->store), 0);
    CHECK_INT(
        vt_store_stage_claim(lib->store, id, &seen, "gone:1:0123456789abcdef", now, now + 30, &res),
        0);
    CHECK_INT(res, VT_LEASE_HELD);
    CHECK_INT(vt_store_commit(lib->store), 0);
    free(seen.owner);
    return seen.attempts + 1;
}

/*
 * A dead letter of failures (fetch: its file is not here, VT_EHERE, 4 attempts) is
 * redone, and the redo's own run fails again: the stage is queued for a retry after the
 * first delay of the backoff (attempt 1 of 4 since the redo), not failed for good;
 * attempts counts on (5). The control: the budget since the redo is the stage's 4
 * attempts, not more: 3 more failures and it is a dead letter again, at 8 attempts in
 * all, which no worker runs again.
 */
VT_TEST_STORE(redo_dead_letter_retried_again)
{
    char dir[64], err[512];
    struct vt_library *lib = scratch(dir, sizeof(dir), "gone1");
    struct vt_queue_job *j = NULL;
    size_t n = 0;
    double retry_at = 0, t0;
    int attempts = 0;

    CHECK(lib != NULL);
    if (!lib)
        return;
    setenv("VIDTHEQUE_RETRY_BASE", "0", 1); /* retries due at once */
    for (int i = 1; i <= 4; i++) {
        CHECK(step(lib));
        CHECK_INT(fetch_row(lib, "gone1", &attempts, &retry_at, err, sizeof(err)),
                  i < 4 ? VT_STATE_QUEUED : VT_STATE_FAILED);
        CHECK_INT(attempts, i);
    }
    CHECK(strstr(err, "not found on this machine") != NULL);
    setenv("VIDTHEQUE_RETRY_BASE", "3600", 1); /* the redo's run retries after an hour */
    t0 = vt_store_now(lib->store);
    CHECK_INT(vt_redo(lib, "gone1", "fetch"), 0);
    CHECK_INT(fetch_row(lib, "gone1", &attempts, &retry_at, err, sizeof(err)), VT_STATE_QUEUED);
    CHECK_INT(attempts, 5);
    CHECK_NEAR(retry_at - t0, 3600, 60); /* the backoff starts again: base·4^0 */
    CHECK(strstr(err, "not found on this machine") != NULL);
    /* listed as retrying, with its attempts in all and since the redo */
    CHECK_INT(vt_store_queue_jobs(lib->store, VT_JOBS_RETRYING, &j, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_STR(j[0].stage, "fetch");
        CHECK_INT(j[0].attempts, 5);
    }
    vt_queue_jobs_free(j, n);
    /* the hour passes; retries due at once from here */
    CHECK_INT(store_exec(lib->store, "UPDATE stages SET retry_at = 1 WHERE retry_at > 0", "test"),
              0);
    setenv("VIDTHEQUE_RETRY_BASE", "0", 1);
    /* the budget since the redo: attempts 6 and 7 are retried, 8 is the last */
    for (int i = 6; i <= 8; i++) {
        CHECK(step(lib));
        CHECK_INT(fetch_row(lib, "gone1", &attempts, &retry_at, err, sizeof(err)),
                  i < 8 ? VT_STATE_QUEUED : VT_STATE_FAILED);
        CHECK_INT(attempts, i);
    }
    CHECK_INT(retry_at, 0);
    drain(lib); /* its readers settle; nothing runs it again but redo */
    CHECK_INT(fetch_row(lib, "gone1", &attempts, &retry_at, err, sizeof(err)), VT_STATE_FAILED);
    CHECK_INT(attempts, 8);
    unsetenv("VIDTHEQUE_RETRY_BASE");
    scratch_done(lib, dir);
}

/*
 * A dead letter of crashes (4 attempts whose worker died, the 4th found by the claim:
 * "attempt 4 of 4 did not finish") is redone, and the redo's own run crashes (a child
 * process that SIGKILLs itself right after its claim: attempt 5). Its lease runs out and
 * a worker takes it over: a takeover on the redone stage's 1st attempt runs it (here it
 * fails, VT_EHERE, and is queued for a retry), not a dead letter. The control: two more
 * crashes make the 4th attempt since the redo, and the claim makes it a dead letter again
 * ("attempt 4 of 4 did not finish", 8 attempts in all).
 */
VT_TEST_STORE(redo_dead_letter_crash_taken_over)
{
    char dir[64], err[512];
    struct vt_library *lib = scratch(dir, sizeof(dir), "gone2");
    double retry_at = 0;
    int attempts = 0, status = 0;
    pid_t pid;

    CHECK(lib != NULL);
    if (!lib)
        return;
    setenv("VIDTHEQUE_RETRY_BASE", "0", 1);
    for (int i = 1; i <= 4; i++)
        CHECK_INT(crashed_claim(lib, "gone2"), i);
    CHECK(step(lib)); /* the claim finds the 4th crashed: a dead letter */
    CHECK_INT(fetch_row(lib, "gone2", &attempts, &retry_at, err, sizeof(err)), VT_STATE_FAILED);
    CHECK_INT(attempts, 4);
    CHECK(strstr(err, "attempt 4 of 4 did not finish") != NULL);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        struct vt_library *c = vt_library_open(dir, 0, err, sizeof(err));

        if (!c)
            _exit(1);
        c->lease_s = 0.2;
        setenv("VIDTHEQUE_TEST_STOP_AT", "fetch:claimed:kill", 1);
        vt_redo(c, "gone2", "fetch");
        _exit(2); /* not killed: the hook did not stop it */
    }
    CHECK(pid > 0);
    CHECK_INT(waitpid(pid, &status, 0), pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK_INT(fetch_row(lib, "gone2", &attempts, &retry_at, err, sizeof(err)), VT_STATE_RUNNING);
    CHECK_INT(attempts, 5);
    nanosleep(&(struct timespec){0, 400 * 1000 * 1000}, NULL); /* its lease runs out */
    CHECK(step(lib)); /* taken over and run (attempt 6): its file is not here */
    CHECK_INT(fetch_row(lib, "gone2", &attempts, &retry_at, err, sizeof(err)), VT_STATE_QUEUED);
    CHECK_INT(attempts, 6);
    CHECK(retry_at > 0);
    CHECK(strstr(err, "not found on this machine") != NULL);
    /* attempts 7 and 8 crash: the claim finds the 4th since the redo, a dead letter */
    CHECK_INT(crashed_claim(lib, "gone2"), 7);
    CHECK_INT(crashed_claim(lib, "gone2"), 8);
    CHECK(step(lib));
    CHECK_INT(fetch_row(lib, "gone2", &attempts, &retry_at, err, sizeof(err)), VT_STATE_FAILED);
    CHECK_INT(attempts, 8);
    CHECK(strstr(err, "attempt 4 of 4 did not finish") != NULL);
    drain(lib);
    CHECK_INT(fetch_row(lib, "gone2", &attempts, &retry_at, err, sizeof(err)), VT_STATE_FAILED);
    CHECK_INT(attempts, 8);
    unsetenv("VIDTHEQUE_RETRY_BASE");
    scratch_done(lib, dir);
}

/* Stage name of video m1 as a library of schema 13 had it: state, attempts, retry time. */
static void put13(struct vt_store *s, const char *name, enum vt_state st, int attempts,
                  double retry_at)
{
    struct vt_stage_rec r;

    memset(&r, 0, sizeof(r));
    snprintf(r.name, sizeof(r.name), "%s", name);
    r.state = st;
    r.attempts = attempts;
    r.retry_at = retry_at;
    r.error = st == VT_STATE_FAILED ? "disk full" : NULL;
    CHECK_INT(vt_store_stage_put(s, "m1", &r), 0);
}

/*
 * A library of schema 13 (no attempts_base) opened by this version: migration 14 adds
 * the column and every row keeps its state, attempts, error and retry time. A row queued
 * with no retry time pending (redone, given back, or never run) counts its budget from
 * its attempts so far: a dead letter redone before the upgrade gets its retries, as one
 * redone after it does; a retry waiting (retry_at set), a dead letter, a done stage count
 * from 0, as before.
 */
VT_TEST_STORE(redo_migration_14_keeps_rows)
{
    char dir[64], err[256];
    struct vt_store *s = vt_test_store("redo", dir, sizeof(dir), &test_db);
    const char *base = "SELECT attempts_base FROM stages WHERE video_id = 'm1' AND name = ?";
    const char *tries = "SELECT attempts FROM stages WHERE video_id = 'm1' AND name = ?";
    double later = vt_wall_s() + 3600;

    CHECK(s != NULL);
    if (!s)
        return;
    vt_test_video_add(s, "m1", "m1", 1);
    CHECK_INT(vt_store_begin(s), 0);
    put13(s, "fetch", VT_STATE_DONE, 1, 0);
    put13(s, "keyframe", VT_STATE_QUEUED, 4, 0); /* a dead letter redone at 13 */
    put13(s, "ocr", VT_STATE_QUEUED, 2, later);  /* a retry waiting */
    put13(s, "stt", VT_STATE_FAILED, 4, 0);      /* a dead letter */
    CHECK_INT(vt_store_commit(s), 0);
    /* back to schema 13 */
    CHECK_INT(store_exec(s, "ALTER TABLE stages DROP COLUMN attempts_base", "test"), 0);
    CHECK_INT(store_exec(s,
                         vt_test_on_pg ? "UPDATE vt_meta SET schema_version = 13"
                                       : "PRAGMA user_version = 13",
                         "test"),
              0);
    CHECK_INT(vt_test_schema_version(s), 13);
    vt_store_close(s);
    s = NULL;
    CHECK_INT(vt_store_open(test_db ? test_db : "", &s, err, sizeof(err)), 0);
    if (!s) {
        fprintf(stderr, "  %s\n", err);
        vt_rm_rf(dir);
        vt_test_db_free(test_db);
        test_db = NULL;
        return;
    }
    CHECK_INT(vt_test_schema_version(s), VT_STORE_SCHEMA_VERSION);
    CHECK_INT(vt_test_store_int(s, tries, "fetch"), 1);
    CHECK_INT(vt_test_store_int(s, tries, "keyframe"), 4);
    CHECK_INT(vt_test_store_int(s, tries, "ocr"), 2);
    CHECK_INT(vt_test_store_int(s, tries, "stt"), 4);
    CHECK_INT(vt_test_store_int(s, base, "fetch"), 0);
    CHECK_INT(vt_test_store_int(s, base, "keyframe"), 4);
    CHECK_INT(vt_test_store_int(s, base, "ocr"), 0);
    CHECK_INT(vt_test_store_int(s, base, "stt"), 0);
    CHECK_INT(vt_test_store_int(s, base, "chunk"), 0); /* queued, never run */
    CHECK_INT(vt_test_store_int(s,
                                "SELECT count(*) FROM stages WHERE video_id = 'm1' AND name = ?"
                                " AND state = 'failed' AND error = 'disk full'",
                                "stt"),
              1);
    CHECK_INT(vt_test_store_int(s, "SELECT count(*) FROM stages WHERE name <> ?", ""),
              VT_STAGE_COUNT);
    vt_test_store_done(s, dir, test_db);
    test_db = NULL;
}
