/*
 * Unit tests of the job queue (lib/store/store_queue.c, the fenced claim and finish of
 * lib/store/store_video.c, and the worker's step vt_work_one in lib/run/pipeline.c): which stage
 * is next (priority, age, the stage table's dependencies, retry times), leases that
 * expire and are taken over, heartbeats and give-backs that only the holder may do, and
 * a late result that the fence refuses with nothing of it written, and the wake of an
 * idle worker by a commit (never by a transaction still open or rolled back). Times are
 * passed in (a lease "expires" because the caller says it is later), never waited for.
 */
#include "base/util.h"
#include "core/library.h"
#include "harness.h"
#include "media/media.h"
#include "pgtest.h"
#include "store/store_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *scratch_db; /* the running test's database (pgtest.h) */

static struct vt_store *scratch(char *dir, size_t n)
{
    return vt_test_store("queue", dir, n, &scratch_db);
}

/* Close s, remove dir and the test's database. */
static void scratch_done(struct vt_store *s, const char *dir)
{
    vt_test_store_done(s, dir, scratch_db);
    scratch_db = NULL;
}

/* Video id with every stage of the table queued. */
static void add_video(struct vt_store *s, const char *id)
{
    vt_test_video_add(s, id, id, 1);
}

/* The row of stage of video id (caller frees its strings with vt_stage_recs_free). */
static int get_stage(struct vt_store *s, const char *id, const char *stage,
                     struct vt_stage_rec *out)
{
    struct vt_stage_rec *r;
    size_t n;
    int found = 0;

    memset(out, 0, sizeof(*out));
    if (vt_store_stages(s, id, &r, &n))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r[i].name, stage))
            continue;
        *out = r[i];
        out->model = out->error = out->owner = NULL;
        found = 1;
    }
    vt_stage_recs_free(r, n);
    return found;
}

/* Set stage of video id to state (outside any claim, as the pipeline's settle does). */
static void set_state(struct vt_store *s, const char *id, const char *stage, enum vt_state st)
{
    struct vt_stage_rec r;

    CHECK(get_stage(s, id, stage, &r));
    r.state = st;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_put(s, id, &r), 0);
    CHECK_INT(vt_store_commit(s), 0);
}

/* The next runnable stage among set at now, as "id/stage", or "" when none. */
static const char *next(struct vt_store *s, unsigned set, double now)
{
    static char buf[128];
    char id[65], stage[32];
    int found = 0;

    buf[0] = '\0';
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_queue_next(s, set, now, id, stage, &found), 0);
    vt_store_rollback(s);
    if (found)
        snprintf(buf, sizeof(buf), "%s/%s", id, stage);
    return buf;
}

#define ALL ((1u << VT_STAGE_COUNT) - 1)

/* Priority first, then age; only stages whose inputs (deps and after) have settled. */
VT_TEST_STORE(queue_order_and_dependencies)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    double now = vt_wall_s() + 10;

    CHECK(s != NULL);
    if (!s)
        return;
    add_video(s, "a1");
    add_video(s, "b2");
    /* only fetch has no inputs: the older video's first (ids break a tie of ages) */
    CHECK_STR(next(s, ALL, now), "a1/fetch");
    CHECK_STR(next(s, VT_BIT(KEYFRAME) | VT_BIT(STT), now), "");
    CHECK_INT(vt_store_video_priority(s, "b2", 5), 0);
    CHECK_STR(next(s, ALL, now), "b2/fetch");
    /* keyframe waits for fetch; stt for fetch (dep) and ocr (after) */
    set_state(s, "b2", "fetch", VT_STATE_DONE);
    CHECK_STR(next(s, VT_BIT(KEYFRAME) | VT_BIT(STT), now), "b2/keyframe");
    set_state(s, "b2", "keyframe", VT_STATE_DONE);
    CHECK_STR(next(s, VT_BIT(STT) | VT_BIT(FRAME_EMBED), now), "");
    CHECK_STR(next(s, VT_BIT(OCR), now), "b2/ocr");
    /* a failed input counts as settled: the pipeline then settles the stage itself */
    set_state(s, "b2", "ocr", VT_STATE_FAILED);
    CHECK_STR(next(s, VT_BIT(STT), now), "b2/stt");
    CHECK_STR(next(s, VT_BIT(FRAME_EMBED), now), "b2/frame_embed");
    /* a stage not in the set is never picked, whatever its priority */
    CHECK_STR(next(s, VT_BIT(FETCH), now), "a1/fetch");
    scratch_done(s, dir);
}

/* A retried stage is not runnable before its retry time; then it is. */
VT_TEST_STORE(queue_retry_time)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_stage_rec r;
    double now = vt_wall_s();

    CHECK(s != NULL);
    if (!s)
        return;
    add_video(s, "a1");
    CHECK(get_stage(s, "a1", "fetch", &r));
    r.attempts = 1;
    r.retry_at = now + 100;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_put(s, "a1", &r), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_STR(next(s, ALL, now), "");
    CHECK_STR(next(s, ALL, now + 101), "a1/fetch");
    scratch_done(s, dir);
}

/* Claim stage of id as owner at now under a lease of lease_s; its attempt after. */
static int claim_at(struct vt_store *s, const char *id, const char *stage, const char *owner,
                    double now, double lease_s)
{
    struct vt_stage_rec seen;
    enum vt_lease res = VT_LEASE_GONE;
    char *seen_owner = NULL;
    struct vt_stage_rec *r;
    size_t n;

    /* the row as read, owner included (get_stage drops the strings) */
    CHECK(get_stage(s, id, stage, &seen));
    CHECK_INT(vt_store_stages(s, id, &r, &n), 0);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, stage) && r[i].owner)
            seen_owner = vt_xstrdup(r[i].owner);
    vt_stage_recs_free(r, n);
    seen.owner = seen_owner;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_claim(s, id, &seen, owner, now, now + lease_s, &res), 0);
    CHECK_INT(res, VT_LEASE_HELD);
    CHECK_INT(vt_store_commit(s), 0);
    free(seen_owner);
    return seen.attempts + 1;
}

/*
 * A worker claims fetch under a lease and is presumed dead when the lease expires:
 * another claims it (takeover, attempt 2). The first one's late result is refused by
 * the fence (its attempt is older), and what it wrote in that transaction is rolled back
 * with it: nothing of it remains. Its heartbeat and give-back are refused too; the new
 * holder's pass.
 */
VT_TEST_STORE(queue_takeover_and_fencing)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_stage_rec r, late;
    struct vt_chapter ch = {0, 10, "late chapter"};
    struct vt_store_chapter *got = NULL;
    enum vt_lease res;
    size_t n = 0;
    double t0 = vt_wall_s();
    int a1, a2;

    CHECK(s != NULL);
    if (!s)
        return;
    add_video(s, "a1");
    a1 = claim_at(s, "a1", "fetch", "h:1:old", t0, 30);
    CHECK_INT(a1, 1);
    /* held: not runnable while the lease lasts, runnable (a takeover) once it expired */
    CHECK_STR(next(s, VT_BIT(FETCH), t0 + 29), "");
    CHECK_STR(next(s, VT_BIT(FETCH), t0 + 31), "a1/fetch");
    a2 = claim_at(s, "a1", "fetch", "h:2:new", t0 + 31, 30);
    CHECK_INT(a2, 2);
    /* the old worker's heartbeat comes late: refused, the lease stays the new one's */
    CHECK_INT(vt_store_stage_heartbeat(s, "a1", "fetch", "h:1:old", a1, t0 + 1000, &res), 0);
    CHECK_INT(res, VT_LEASE_LOST);
    /* the old worker's result: outputs and state in one transaction, refused at the fence */
    CHECK(get_stage(s, "a1", "fetch", &late));
    late.state = VT_STATE_DONE;
    late.attempts = a1;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_lease(s, "a1", "fetch", "h:1:old", a1, &res), 0);
    CHECK_INT(res, VT_LEASE_LOST);
    CHECK_INT(vt_store_chapters_replace(s, "a1", &ch, 1, "test"), 0);
    CHECK_INT(vt_store_stage_finish(s, "a1", &late, "h:1:old", &res), 0);
    CHECK_INT(res, VT_LEASE_LOST);
    CHECK(strstr(vt_store_errmsg(s), "lease lost") != NULL);
    vt_store_rollback(s);
    /* the same owner with the old attempt is refused too: the attempt is the token */
    late.attempts = a1;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_finish(s, "a1", &late, "h:2:new", &res), 0);
    CHECK_INT(res, VT_LEASE_LOST);
    vt_store_rollback(s);
    CHECK_INT(vt_store_chapters(s, "a1", &got, &n), 0);
    CHECK_INT(n, 0);
    vt_store_chapters_free(got, n);
    CHECK(get_stage(s, "a1", "fetch", &r));
    CHECK_INT(r.state, VT_STATE_RUNNING);
    CHECK_INT(r.attempts, 2);
    CHECK_NEAR(r.lease_until, t0 + 61, 1e-3);
    /* the holder's heartbeat extends the lease */
    CHECK_INT(vt_store_stage_heartbeat(s, "a1", "fetch", "h:2:new", a2, t0 + 500, &res), 0);
    CHECK_INT(res, VT_LEASE_HELD);
    CHECK(get_stage(s, "a1", "fetch", &r));
    CHECK_NEAR(r.lease_until, t0 + 500, 1e-3);
    CHECK_STR(next(s, VT_BIT(FETCH), t0 + 400), "");
    /* and its result passes the fence */
    late.attempts = a2;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_finish(s, "a1", &late, "h:2:new", &res), 0);
    CHECK_INT(res, VT_LEASE_HELD);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK(get_stage(s, "a1", "fetch", &r));
    CHECK_INT(r.state, VT_STATE_DONE);
    CHECK_INT(r.lease_until, 0);
    scratch_done(s, dir);
}

/* A stopping worker gives its stage back: queued at once, the attempt not counted; a
 * give-back from anyone else changes nothing. */
VT_TEST_STORE(queue_give_back)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_stage_rec r;
    enum vt_lease res;
    double t0 = vt_wall_s();

    CHECK(s != NULL);
    if (!s)
        return;
    add_video(s, "a1");
    CHECK_INT(claim_at(s, "a1", "fetch", "h:1:a", t0, 60), 1);
    CHECK_INT(vt_store_stage_give_back(s, "a1", "fetch", "h:9:z", 1, &res), 0);
    CHECK_INT(res, VT_LEASE_LOST);
    CHECK_INT(vt_store_stage_give_back(s, "a1", "fetch", "h:1:a", 1, &res), 0);
    CHECK_INT(res, VT_LEASE_HELD);
    CHECK(get_stage(s, "a1", "fetch", &r));
    CHECK_INT(r.state, VT_STATE_QUEUED);
    CHECK_INT(r.attempts, 0);
    CHECK_INT(r.lease_until, 0);
    CHECK_STR(next(s, VT_BIT(FETCH), t0 + 1), "a1/fetch");
    scratch_done(s, dir);
}

/* stage_deps holds the stage table's pairs, rewritten when they differ. */
VT_TEST_STORE(queue_stage_deps_synced)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_queue_count *c = NULL;
    size_t n = 0;

    CHECK(s != NULL);
    if (!s)
        return;
    add_video(s, "a1");
    CHECK_STR(next(s, VT_BIT(KEYFRAME), vt_wall_s() + 1), "");
    /* rows of another version's table (keyframe reads nothing there): runnable at once,
     * until the sync puts this table's rows back */
    CHECK_INT(store_exec(s, "DELETE FROM stage_deps WHERE name = 'keyframe'", "test"), 0);
    CHECK_STR(next(s, VT_BIT(KEYFRAME), vt_wall_s() + 1), "a1/keyframe");
    CHECK_INT(vt_store_sync_stage_deps(s), 0);
    CHECK_STR(next(s, VT_BIT(KEYFRAME), vt_wall_s() + 1), "");
    CHECK_INT(vt_store_queue_counts(s, vt_wall_s() + 1, &c, &n), 0);
    CHECK_INT(n, VT_STAGE_COUNT);
    for (size_t i = 0; i < n; i++) {
        CHECK_INT(c[i].state, VT_STATE_QUEUED);
        CHECK_INT(c[i].n, 1);
        CHECK_INT(c[i].runnable, !strcmp(c[i].stage, "fetch"));
    }
    free(c);
    scratch_done(s, dir);
}

/*
 * The worker's step on a library: a video whose file this machine cannot see (added in
 * place on another machine) fails fetch with VT_EHERE, which is queued again for any
 * worker (a retry with its reason, listed as retrying), not failed at attempt 1; once its
 * attempts are spent (retries due at once here) fetch is a dead letter with its error, and
 * the stages that read it settle as failed without running (the others run: they only use
 * fetch's outputs when there); the queue is then empty for every stage, the video failed.
 */
VT_TEST_STORE(queue_worker_dead_letter)
{
    char dir[64], err[256];
    struct vt_library *lib;
    struct vt_video_rec v;
    struct vt_queue_job *j = NULL;
    size_t n = 0;
    int did = 1, steps = 0;

    snprintf(dir, sizeof(dir), "/tmp/vt-unit-queue.XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    scratch_db = vt_test_library_db(dir);
    lib = vt_library_open(dir, VT_OPEN_CREATE, err, sizeof(err));
    CHECK(lib != NULL);
    if (!lib)
        return;
    lib->lease_s = 30;
    add_video(lib->store, "gone1");
    setenv("VIDTHEQUE_RETRY_BASE", "0", 1); /* retries due at once */
    CHECK_INT(vt_work_one(lib, ALL, &did), 0);
    CHECK_INT(did, 1);
    CHECK_INT(vt_store_queue_jobs(lib->store, VT_JOBS_RETRYING, &j, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_STR(j[0].stage, "fetch");
        CHECK_INT(j[0].attempts, 1);
        CHECK(j[0].retry_at > 0);
        CHECK(j[0].error && strstr(j[0].error, "not found on this machine"));
    }
    vt_queue_jobs_free(j, n);
    j = NULL;
    steps = 1;
    while (steps < 3 * VT_STAGE_COUNT) {
        CHECK_INT(vt_work_one(lib, ALL, &did), 0);
        if (!did)
            break;
        steps++;
    }
    unsetenv("VIDTHEQUE_RETRY_BASE");
    CHECK_INT(did, 0);
    CHECK_INT(steps, VT_STAGE_COUNT + 3); /* fetch ran 4 times */
    CHECK_INT(vt_lib_video(lib, "gone1", &v), 0);
    CHECK_INT(v.index_state, VT_INDEX_FAILED);
    vt_video_rec_release(&v);
    CHECK_INT(vt_store_queue_jobs(lib->store, VT_JOBS_FAILED, &j, &n), 0);
    /* fetch, and every stage that needs its outputs (deps, through other stages) */
    CHECK_INT(n, 5);
    for (size_t i = 0; i < n; i++) {
        CHECK(j[i].error != NULL);
        if (!strcmp(j[i].stage, "fetch"))
            CHECK_INT(j[i].attempts, 4);
        else
            CHECK(j[i].error && !strncmp(j[i].error, "not run: ", 9));
    }
    vt_queue_jobs_free(j, n);
    vt_library_close(lib);
    vt_rm_rf(dir);
    vt_test_db_free(scratch_db);
    scratch_db = NULL;
}

/* A stage queued in a transaction wakes a waiting worker once committed: not while the
 * transaction is open, not when it is rolled back (PostgreSQL: the NOTIFY goes with the
 * COMMIT; SQLite: the commit moves data_version). */
struct waiter {
    struct vt_store *s;
    volatile int done;
    int rc;
};

static void *wait_thread(void *p)
{
    struct waiter *w = p;

    w->rc = vt_store_wait_work(w->s, 60);
    w->done = 1;
    return NULL;
}

static void put_queued(struct vt_store *s, const char *id, const char *stage)
{
    struct vt_stage_rec r;

    memset(&r, 0, sizeof(r));
    snprintf(r.name, sizeof(r.name), "%s", stage);
    r.state = VT_STATE_QUEUED;
    CHECK_INT(vt_store_stage_put(s, id, &r), 0);
}

/* n videos q00000, q00001, ... each with its fetch stage queued, or every stage (all). */
static void queue_videos(struct vt_store *s, int n, int all)
{
    for (int i = 0; i < n; i++) {
        struct vt_video_rec v;
        char vid[16];

        memset(&v, 0, sizeof(v));
        snprintf(vid, sizeof(vid), "q%05d", i);
        snprintf(v.id, sizeof(v.id), "%s", vid);
        v.content_key = vid;
        v.source_kind = "file";
        v.created_at = 1000 + i;
        CHECK_INT(vt_store_video_insert(s, &v), 0);
        for (int k = 0; k < (all ? VT_STAGE_COUNT : 1); k++)
            put_queued(s, vid, all ? vt_stages[k].name : "fetch");
    }
}

VT_TEST_STORE(queue_wake_at_commit)
{
    char dir[64], err[256];
    struct vt_store *s = scratch(dir, sizeof(dir)), *s2 = NULL;
    struct waiter w = {0};
    pthread_t th;

    CHECK(s != NULL);
    if (!s)
        return;
    add_video(s, "a1");
    CHECK_INT(vt_store_open(scratch_db, &s2, err, sizeof(err)), 0);
    if (!s2)
        goto out;
    /* PostgreSQL: the first wait LISTENs; what was committed before it is not seen */
    CHECK(vt_store_wait_work(s2, 0.01) >= 0);
    CHECK_INT(vt_store_begin(s), 0);
    put_queued(s, "a1", "ocr");
    CHECK_INT(vt_store_wait_work(s2, 0.2), 0); /* not yet committed */
    vt_store_rollback(s);
    CHECK_INT(vt_store_wait_work(s2, 0.2), 0); /* rolled back: nothing to wake for */
    /* committed while the other waits (committed again until it wakes: SQLite's wait
     * compares with the version it read first, which may follow a commit) */
    w.s = s2;
    CHECK_INT(pthread_create(&th, NULL, wait_thread, &w), 0);
    for (int i = 0; i < 6000 && !w.done; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        CHECK_INT(vt_store_begin(s), 0);
        put_queued(s, "a1", "ocr");
        CHECK_INT(vt_store_commit(s), 0);
        nanosleep(&ts, NULL);
    }
    pthread_join(th, NULL);
    CHECK_INT(w.rc, 1);
out:
    vt_store_close(s2);
    scratch_done(s, dir);
}

static int read_count_row(void *user, struct db_stmt *st)
{
    *(long long *)user = db_col_int64(st, 0);
    return 0;
}

/* Rows of stages this PostgreSQL transaction has read so far. */
static long long stage_rows_read(struct vt_store *s)
{
    long long n = -1;

    CHECK_INT(store_rows(s,
                         "SELECT seq_tup_read + coalesce(idx_tup_fetch, 0)"
                         " FROM pg_stat_xact_user_tables WHERE relname = 'stages'",
                         "count rows read", read_count_row, &n, ""),
              0);
    return n;
}

/* The pick walks the runnable index to its first row, however long the queue and
 * however stale the planner's statistics: on PostgreSQL a table never analyzed (its
 * autovacuum off here) once made it read and sort every queued row. */
VT_TEST_STORE(queue_pick_walks_the_index)
{
    char dir[64], id[65], stage[32];
    struct vt_store *s = scratch(dir, sizeof(dir));
    int found = 0, pg;
    long long before = 0;

    CHECK(s != NULL);
    if (!s)
        return;
    pg = !strcmp(vt_store_backend(s), "postgresql");
    if (pg)
        CHECK_INT(store_exec(s, "ALTER TABLE stages SET (autovacuum_enabled = false)", "setup"), 0);
    CHECK_INT(vt_store_begin(s), 0);
    queue_videos(s, 3000, 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_begin(s), 0);
    if (pg)
        before = stage_rows_read(s);
    CHECK_INT(vt_store_queue_next(s, VT_BIT(FETCH), vt_wall_s() + 10, id, stage, &found), 0);
    CHECK_INT(found, 1);
    CHECK_STR(id, "q00000");
    if (pg) {
        long long read = stage_rows_read(s) - before;

        CHECK(read >= 1 && read < 20);
        if (!(read >= 1 && read < 20))
            fprintf(stderr, "  the pick read %lld rows of stages\n", read);
    }
    vt_store_rollback(s);
    scratch_done(s, dir);
}

/* Put each of stage k's inputs (deps and after) of video id in state st. */
static void put_inputs(struct vt_store *s, const char *id, int k, enum vt_state st)
{
    for (int d = 0; d < VT_STAGE_COUNT; d++) {
        struct vt_stage_rec r;

        if (!((vt_stages[k].deps | vt_stages[k].after) & (1u << d)))
            continue;
        memset(&r, 0, sizeof(r));
        snprintf(r.name, sizeof(r.name), "%s", vt_stages[d].name);
        r.state = st;
        CHECK_INT(vt_store_stage_put(s, id, &r), 0);
    }
}

/* The pick of a limited worker (--stages keyframe) in its own transaction: "" when none,
 * and on PostgreSQL the rows of stages it read into *read. */
static const char *limited_next(struct vt_store *s, unsigned set, long long *read)
{
    static char buf[128];
    char id[65], stage[32];
    int found = 0;
    long long before = -1;

    buf[0] = '\0';
    CHECK_INT(vt_store_begin(s), 0);
    if (!strcmp(vt_store_backend(s), "postgresql"))
        before = stage_rows_read(s);
    CHECK_INT(vt_store_queue_next(s, set, vt_wall_s() + 10, id, stage, &found), 0);
    *read = before < 0 ? 0 : stage_rows_read(s) - before;
    vt_store_rollback(s);
    if (found)
        snprintf(buf, sizeof(buf), "%s/%s", id, stage);
    return buf;
}

/*
 * A worker limited to some stages finds its next one, or that there is none, through
 * stages_pick (ready rows of its stages only): with 2,000 videos queued it read every
 * queued row (tens of thousands) on each pick that found nothing. The ready flag follows
 * the inputs both ways: settled makes the stage runnable, queued again (a redo) not.
 */
VT_TEST_STORE(queue_limited_pick_reads_few_rows)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    const unsigned kf = VT_BIT(KEYFRAME), two = VT_BIT(KEYFRAME) | VT_BIT(FETCH);
    long long read = 0;
    int pg;

    CHECK(s != NULL);
    if (!s)
        return;
    pg = !strcmp(vt_store_backend(s), "postgresql");
    if (pg)
        CHECK_INT(store_exec(s, "ALTER TABLE stages SET (autovacuum_enabled = false)", "setup"), 0);
    CHECK_INT(vt_store_begin(s), 0);
    queue_videos(s, 2000, 1);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_STR(limited_next(s, kf, &read), "");
    CHECK(read < 20);
    if (read >= 20)
        fprintf(stderr, "  the empty pick read %lld rows of stages\n", read);
    CHECK_INT(vt_store_begin(s), 0);
    put_inputs(s, "q01999", VT_STAGE_KEYFRAME, VT_STATE_DONE);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_STR(limited_next(s, kf, &read), "q01999/keyframe");
    CHECK(read < 20);
    if (read >= 20)
        fprintf(stderr, "  the pick read %lld rows of stages\n", read);
    /* two stages: the first in the claim's order of either's head */
    CHECK_STR(limited_next(s, two, &read), "q00000/fetch");
    CHECK(read < 40);
    CHECK_INT(vt_store_begin(s), 0);
    put_inputs(s, "q01999", VT_STAGE_KEYFRAME, VT_STATE_QUEUED);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_STR(limited_next(s, kf, &read), "");
    scratch_done(s, dir);
}

/* What an in-process run's stage looked like from another handle while it ran. */
struct inproc {
    struct vt_store *other;  /* the same database, another connection */
    struct vt_library *lib2; /* the same library, another handle (another process's) */
    int seen;
    double lease_until, extended_to;
    char owner[128];
    char runnable_now[128], runnable_later[128];
    int redo_rc;
    char redo_err[1024];
};

static void inproc_progress(void *user, const char *id, const char *stage, double frac)
{
    struct inproc *p = user;
    struct vt_stage_rec r;

    if (frac != 0 || strcmp(stage, "fetch") || p->seen++)
        return;
    if (!get_stage(p->other, id, stage, &r))
        return;
    p->lease_until = r.lease_until;
    {
        struct vt_stage_rec *all;
        size_t n;

        CHECK_INT(vt_store_stages(p->other, id, &all, &n), 0);
        for (size_t i = 0; i < n; i++)
            if (!strcmp(all[i].name, stage) && all[i].owner)
                snprintf(p->owner, sizeof(p->owner), "%s", all[i].owner);
        vt_stage_recs_free(all, n);
    }
    snprintf(p->runnable_now, sizeof(p->runnable_now), "%s",
             next(p->other, VT_BIT(FETCH), vt_wall_s()));
    snprintf(p->runnable_later, sizeof(p->runnable_later), "%s",
             next(p->other, VT_BIT(FETCH), vt_wall_s() + 3600));
    p->redo_rc = vt_redo(p->lib2, id, "fetch");
    snprintf(p->redo_err, sizeof(p->redo_err), "%s", vt_errmsg(p->lib2));
    /* the heartbeat extends the lease (every third of it): wait for one, at most 60 s */
    for (int i = 0; i < 600 && r.lease_until > 0; i++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        struct vt_stage_rec x;

        nanosleep(&ts, NULL);
        if (get_stage(p->other, id, stage, &x) && x.lease_until > r.lease_until) {
            p->extended_to = x.lease_until;
            break;
        }
    }
}

/* A stage run in-process (add, redo, resume, the server's indexer) on PostgreSQL takes a
 * lease as a worker's claim does, kept by a heartbeat: a worker passes over it until it
 * runs out, and a redo elsewhere is refused meanwhile; on SQLite it takes none (its lock
 * file says it is alive), and a redo elsewhere is refused all the same. */
VT_TEST_STORE(queue_inprocess_lease)
{
    char dir[64], err[256], *path = NULL, want[1200];
    struct vt_library *lib;
    struct inproc p;
    struct vt_callbacks cb = {NULL, inproc_progress, &p};
    struct vt_stage_rec r;
    double t0 = vt_wall_s();
    int pg;

    memset(&p, 0, sizeof(p));
    setenv("VIDTHEQUE_LEASE", "3", 1);
    snprintf(dir, sizeof(dir), "/tmp/vt-unit-queue.XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    scratch_db = vt_test_library_db(dir);
    lib = vt_library_open(dir, VT_OPEN_CREATE, err, sizeof(err));
    CHECK(lib != NULL);
    if (!lib)
        goto out;
    pg = !strcmp(vt_store_backend(lib->store), "postgresql");
    path = scratch_db ? vt_xstrdup(scratch_db) : vt_xasprintf("%s/library.db", dir);
    CHECK_INT(vt_store_open(path, &p.other, err, sizeof(err)), 0);
    p.lib2 = vt_library_open(dir, 0, err, sizeof(err));
    CHECK(p.other != NULL && p.lib2 != NULL);
    if (!p.other || !p.lib2)
        goto out;
    vt_library_set_callbacks(lib, &cb);
    add_video(lib->store, "p1");
    vt_process(lib, "p1"); /* fetch fails (no such file): only the claim matters here */
    CHECK_INT(p.seen, 1);
    CHECK_STR(p.owner, lib->owner);
    snprintf(want, sizeof(want), "p1: stage 'fetch' is running in process %s", lib->owner);
    CHECK_INT(p.redo_rc, VT_ESTATE);
    CHECK(!strncmp(p.redo_err, want, strlen(want)));
    CHECK_STR(p.runnable_now, "");
    if (pg) {
        CHECK(p.lease_until >= t0 + 3 && p.lease_until <= vt_wall_s() + 3);
        CHECK(strstr(p.redo_err, "(its lease holds it until ") != NULL);
        CHECK_STR(p.runnable_later, "p1/fetch"); /* once it runs out: taken over */
        CHECK(p.extended_to > p.lease_until);
    } else {
        CHECK_INT(p.lease_until, 0);
        CHECK_STR(p.runnable_later, ""); /* never: resume on this machine asks its lock */
    }
    /* queued again (a file missing on this machine is retried, VT_EHERE): no lease left */
    CHECK(get_stage(p.other, "p1", "fetch", &r));
    CHECK_INT(r.state, VT_STATE_QUEUED);
    CHECK_INT(r.lease_until, 0);
out:
    unsetenv("VIDTHEQUE_LEASE");
    vt_store_close(p.other);
    vt_library_close(p.lib2);
    vt_library_close(lib);
    free(path);
    vt_rm_rf(dir);
    vt_test_db_free(scratch_db);
    scratch_db = NULL;
}
/* Settle (done) every stage of video id that stage k reads, in one transaction. */
static void settle_inputs(struct vt_store *s, const char *id, int k)
{
    struct vt_stage_rec r;

    CHECK_INT(vt_store_begin(s), 0);
    for (int d = 0; d < VT_STAGE_COUNT; d++) {
        if (!((vt_stages[k].deps | vt_stages[k].after) & (1u << d)))
            continue;
        memset(&r, 0, sizeof(r));
        snprintf(r.name, sizeof(r.name), "%s", vt_stages[d].name);
        r.state = VT_STATE_DONE;
        CHECK_INT(vt_store_stage_put(s, id, &r), 0);
    }
    CHECK_INT(vt_store_commit(s), 0);
}

/* h waits for the stages of stages from now on: its first waits register it and look
 * (1 while any is runnable); it is idle once one times out. */
static void go_idle(struct vt_store *h, unsigned stages)
{
    int i = 0;

    vt_store_wait_stages(h, stages);
    while (i++ < 20 && vt_store_wait_work(h, 0.05) != 0)
        ;
    CHECK(i <= 20);
}

/* The first of h[0..n) whose wait returns 1 within about timeout_s seconds, or -1. */
static int first_woken(struct vt_store **h, int n, double timeout_s)
{
    double end = vt_monotonic_s() + timeout_s;

    while (vt_monotonic_s() < end)
        for (int i = 0; i < n; i++)
            if (vt_store_wait_work(h[i], 0.02) == 1)
                return i;
    return -1;
}

/* A video with its fetch stage queued (runnable at once). */
static void queue_fetch(struct vt_store *s, const char *id)
{
    vt_test_video_add(s, id, id, 0);
    CHECK_INT(vt_store_begin(s), 0);
    put_queued(s, id, "fetch");
    CHECK_INT(vt_store_commit(s), 0);
}

/* A handle waiting for stt only is woken by stt becoming runnable (queued with its inputs
 * settled, or its inputs settling), not by ocr queued, nor by stt queued while its
 * inputs still run, nor by a stage that no stage reads settling; a handle that waits for
 * every stage without picking (add --wait) still hears every change. */
VT_TEST_PG_ONLY(queue_wake_for_its_stages)
{
    char dir[64], err[256];
    struct vt_store *s = scratch(dir, sizeof(dir)), *s2 = NULL;
    int stt = vt_stage_find("stt"), input = -1;
    struct vt_stage_rec r;

    CHECK(s != NULL && stt >= 0);
    if (!s || stt < 0)
        return;
    for (int k = 0; k < VT_STAGE_COUNT && input < 0; k++)
        if ((vt_stages[stt].deps | vt_stages[stt].after) & (1u << k))
            input = k;
    CHECK(input >= 0);
    add_video(s, "a1");
    CHECK_INT(vt_store_open(scratch_db, &s2, err, sizeof(err)), 0);
    if (!s2 || input < 0)
        goto out;
    go_idle(s2, 1u << stt);
    CHECK_INT(vt_store_begin(s), 0);
    put_queued(s, "a1", "ocr");
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_wait_work(s2, 0.5), 0);
    CHECK_INT(vt_store_begin(s), 0);
    put_queued(s, "a1", "stt");
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_wait_work(s2, 0.5), 0); /* its inputs have not settled */
    settle_inputs(s, "a1", stt);
    CHECK_INT(vt_store_wait_work(s2, 10), 1);
    /* woken: its next wait says it is idle and looks (stt is runnable: 1 at once) */
    CHECK_INT(vt_store_wait_work(s2, 0.5), 1);
    memset(&r, 0, sizeof(r));
    snprintf(r.name, sizeof(r.name), "%s", "stt");
    r.state = VT_STATE_DONE;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_put(s, "a1", &r), 0);
    CHECK_INT(vt_store_commit(s), 0);
    go_idle(s2, 1u << stt);
    CHECK_INT(vt_store_begin(s), 0);
    put_queued(s, "a1", "stt"); /* a redo: its inputs are done */
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_wait_work(s2, 10), 1);
    /* a stage that no stage reads settles: progress only, no worker is woken by it, and
     * a handle that waits for every stage (add --wait) is */
    r.state = VT_STATE_DONE;
    for (int k = VT_STAGE_COUNT - 1; k >= 0; k--) {
        unsigned readers = 0;

        for (int j = 0; j < VT_STAGE_COUNT; j++)
            readers |= (vt_stages[j].deps | vt_stages[j].after) & (1u << k);
        if (!readers) {
            snprintf(r.name, sizeof(r.name), "%s", vt_stages[k].name);
            break;
        }
    }
    CHECK_INT(vt_store_stage_put(s, "a1", &r), 0); /* stt done again, outside a transaction */
    go_idle(s2, 1u << stt);
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_put(s, "a1", &r), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_wait_work(s2, 0.5), 0);
    vt_store_wait_stages(s2, 0);
    CHECK(vt_store_wait_work(s2, 0.05) >= 0); /* LISTENs on vidtheque_jobs */
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_put(s, "a1", &r), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_wait_work(s2, 10), 1);
    /* and by ocr queued */
    CHECK_INT(vt_store_begin(s), 0);
    put_queued(s, "a1", "ocr");
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_wait_work(s2, 10), 1);
out:
    vt_store_close(s2);
    scratch_done(s, dir);
}

/* Stage of video id running (a claim without a lease: not runnable, nothing woken). */
static void take(struct vt_store *s, const char *id, const char *stage)
{
    struct vt_stage_rec r;

    memset(&r, 0, sizeof(r));
    snprintf(r.name, sizeof(r.name), "%s", stage);
    r.state = VT_STATE_RUNNING;
    r.owner = (char *)"test";
    CHECK_INT(vt_store_stage_put(s, id, &r), 0);
}

/* Every one of h[0..n) waits 0.3 s unwoken (one woken before says it is idle again and
 * looks first: nothing is runnable; one woken twice would return at once). */
static void none_woken(struct vt_store **h, int n)
{
    for (int i = 0; i < n; i++)
        CHECK_INT(vt_store_wait_work(h[i], 0.3), 0);
}

/* Issue 26, "every settle wakes every idle worker": with four idle handles that pick
 * every stage, a runnable stage wakes exactly one of them, the one idle the longest; a
 * new video (every stage queued, only fetch runnable) one; a settle that made nothing
 * runnable none; and a handle that claims (commits) while idle is no longer chosen. */
VT_TEST_PG_ONLY(queue_wake_one_idle_worker)
{
    char dir[64], err[256];
    struct vt_store *s = scratch(dir, sizeof(dir)), *h[4] = {0};
    const unsigned all = (1u << VT_STAGE_COUNT) - 1;
    struct vt_stage_rec r;
    int n = 0;

    CHECK(s != NULL);
    if (!s)
        return;
    for (n = 0; n < 4; n++) {
        CHECK_INT(vt_store_open(scratch_db, &h[n], err, sizeof(err)), 0);
        if (!h[n])
            goto out;
        go_idle(h[n], all);
    }
    queue_fetch(s, "v1");
    CHECK_INT(first_woken(h, 4, 10), 0);
    take(s, "v1", "fetch");
    none_woken(h, 4); /* h[0] idle again: now the newest */
    queue_fetch(s, "v2");
    CHECK_INT(first_woken(h, 4, 10), 1);
    take(s, "v2", "fetch");
    none_woken(h, 4);
    add_video(s, "v3");
    CHECK_INT(first_woken(h, 4, 10), 2);
    take(s, "v3", "fetch");
    none_woken(h, 4);
    /* fetch of v1 settles; v1 has no other stage: nothing became runnable */
    memset(&r, 0, sizeof(r));
    snprintf(r.name, sizeof(r.name), "fetch");
    r.state = VT_STATE_DONE;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_put(s, "v1", &r), 0);
    CHECK_INT(vt_store_commit(s), 0);
    none_woken(h, 4);
    /* h[3], idle the longest, commits a statement (a claim, as a worker's pick that found
     * a stage; a transaction that sent nothing commits nothing): it is busy, the next stage
     * wakes h[0] */
    CHECK_INT(vt_store_begin(h[3]), 0);
    CHECK_INT(store_exec(h[3], "SELECT 1", "a claim's statement"), 0);
    CHECK_INT(vt_store_commit(h[3]), 0);
    queue_fetch(s, "v4");
    CHECK_INT(first_woken(h, 4, 10), 0);
    take(s, "v4", "fetch");
    none_woken(h, 4);
out:
    for (int i = 0; i < 4; i++)
        vt_store_close(h[i]);
    scratch_done(s, dir);
}

/* A registered waiter whose session is gone is passed over; one that is alive but does
 * not look (a frozen worker) swallows one wake, no more: the stage stays runnable for the
 * next look of another (an idle worker looks every --idle seconds unwoken), and the next
 * wake goes to another. */
VT_TEST_PG_ONLY(queue_wake_dead_waiters)
{
    char dir[64], err[256];
    struct vt_store *s = scratch(dir, sizeof(dir)), *h[3] = {0};
    const unsigned all = (1u << VT_STAGE_COUNT) - 1;
    char id[65], stage[32];
    int found = 0;

    CHECK(s != NULL);
    if (!s)
        return;
    for (int i = 0; i < 3; i++) {
        CHECK_INT(vt_store_open(scratch_db, &h[i], err, sizeof(err)), 0);
        if (!h[i])
            goto out;
        go_idle(h[i], all);
    }
    /* h[0]'s session ends (waited for: the server ends it after the call returns) without
     * it leaving the table (as a killed worker's) */
    CHECK_INT(store_exec(s,
                         "SELECT pg_terminate_backend(pid, 5000) FROM waiters"
                         " ORDER BY idle_since LIMIT 1",
                         "end a session"),
              0);
    queue_fetch(s, "v1");
    CHECK_INT(first_woken(h + 1, 2, 10), 0); /* h[1]: h[0] is passed over */
    CHECK_INT(vt_store_wait_work(h[2], 0.3), 0);
    /* h[2] is idle the longest and frozen (it never waits again): the next stage's wake is
     * its; h[3] (a new handle) is not woken, but its look finds the stage */
    {
        struct vt_store *h3 = NULL;

        CHECK_INT(vt_store_open(scratch_db, &h3, err, sizeof(err)), 0);
        if (!h3)
            goto out;
        go_idle(h3, all);
        CHECK_INT(vt_store_wait_work(h[1], 0.3), 1); /* h[1] idle again (v1 runnable) */
        CHECK_INT(vt_store_begin(h[1]), 0);          /* h[1] takes v1: busy */
        CHECK_INT(store_exec(h[1], "SELECT 1", "a claim's statement"), 0);
        CHECK_INT(vt_store_commit(h[1]), 0);
        queue_fetch(s, "v2");
        CHECK_INT(vt_store_wait_work(h3, 0.5), 0);
        CHECK_INT(vt_store_begin(h3), 0);
        CHECK_INT(vt_store_queue_next(h3, all, vt_store_now(h3), id, stage, &found), 0);
        CHECK_INT(found, 1);
        vt_store_rollback(h3);
        queue_fetch(s, "v3"); /* h[2] is no longer idle: h3 */
        CHECK_INT(vt_store_wait_work(h3, 10), 1);
        vt_store_close(h3);
    }
out:
    for (int i = 0; i < 3; i++)
        vt_store_close(h[i]);
    scratch_done(s, dir);
}
