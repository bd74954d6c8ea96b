/*
 * The job queue (see store.h and docs/ARCHITECTURE.md, "Job queue"): the stage rows
 * are the jobs, and these verbs pick the next runnable one, extend or give back a
 * lease, and say what the queue holds. The claim itself, the run and the fenced
 * finish are the pipeline's (pipeline.c) through vt_store_stage_claim and
 * vt_store_stage_finish, the same on every path that runs a stage. The SQL is written
 * once for both backends; what differs (row locks, LISTEN/NOTIFY) is chosen with s->conn.pg.
 */
/* The SQL whose state names are written with the state macro is kept out of
 * clang-format: each use stays on one line, where test_state_sql.c reads it. */
#include "base/util.h"
#include "store/store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The stage names a query takes: one parameter per stage of the table, unused ones
 * NULL (which equals nothing), so that the SQL text is one and is prepared once. */
#define NAME_SLOTS 8
_Static_assert(VT_STAGE_COUNT <= NAME_SLOTS, "one name parameter per stage");
#define NAME_PARAMS "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8"

/* The stages that stage s reads have all settled. */
#define INPUTS_SETTLED                                                                             \
    "NOT EXISTS (SELECT 1 FROM stage_deps d JOIN stages o ON o.video_id = s.video_id"              \
    " AND o.name = d.dep WHERE d.name = s.name"                                                    \
    " AND o.state NOT IN (" VT_SQL_STATES_SETTLED "))"

/* Queued and due, or running under a lease that expired (its holder is presumed dead);
 * a running stage without a lease (lease_until 0) belongs to an in-process run on
 * SQLite, whose liveness only its own machine can tell (the owner's lock file:
 * vt_resume). The first term is the partial index stages_runnable's: it gives the rows
 * in the claim's order, so the next one is the first that passes, not a sort of every
 * queued row. */
/* clang-format off */
#define RUNNABLE_AT(now)                                                                           \
    "s.state IN (" VT_SQL_STATES_UNSETTLED ") AND (s.state = " VT_SQL_STATE(queued)                \
    " OR (s.state = " VT_SQL_STATE(running) " AND s.lease_until > 0 AND s.lease_until < " now      \
    ")) AND s.retry_at <= " now                                                                    \
    " AND " INPUTS_SETTLED
/* clang-format on */

#define NEXT_SQL                                                                                   \
    "SELECT s.video_id, s.name FROM stages s WHERE s.name IN (" NAME_PARAMS                        \
    ") AND " RUNNABLE_AT("?9") " ORDER BY s.priority DESC, s.queued_at, s.video_id, s.ord LIMIT 1"

/*
 * PostgreSQL: the pick must walk stages_runnable in its order and stop at the first
 * runnable row, however many rows are queued. The planner does so only when its
 * statistics say the queue is long; while they are stale (a table not yet analyzed, a
 * burst of new videos since autovacuum last looked) it reads every queued row, tests
 * each one's inputs and sorts them: 5 ms a pick at 2,000 queued stages, growing with the
 * queue (bench/queue_bench.sh). So the pick is planned with sorting disabled, which
 * leaves the index walk as the only cheap plan, once (a generic plan, kept by the
 * prepared statement; re-planned after an ANALYZE), and the settings are restored for
 * the rest of the transaction (a sort disabled elsewhere only adds cost, and enough of
 * it to have the query compiled by JIT). Both SET LOCAL: nothing outlives the
 * transaction, which a transaction-mode pool (pooler=transaction) requires.
 */
#define PICK_PLAN_SET_1   "SET LOCAL enable_sort = off"
#define PICK_PLAN_SET_2   "SET LOCAL plan_cache_mode = force_generic_plan"
#define PICK_PLAN_RESET_1 "SET LOCAL enable_sort TO DEFAULT"
#define PICK_PLAN_RESET_2 "SET LOCAL plan_cache_mode TO DEFAULT"

/*
 * A worker limited to some stages (--stages) picks through stages_pick: one stage's rows
 * that are unsettled and whose inputs have all settled (the ready column, migration 12),
 * in the claim's order. Walking stages_runnable instead reads every unsettled row of
 * every stage until one of its own passes: the whole queue when none does. The ready
 * rows of one stage are the runnable ones plus those running under a live lease or
 * waiting for a retry, so the walk stops after a handful of rows however long the queue.
 * INPUTS_SETTLED stays in the query: ready may only ever be the stricter of the two.
 */
#define ONE_SQL                                                                                    \
    "SELECT s.video_id, s.name, s.priority, s.queued_at, s.ord FROM stages s WHERE s.name = ?1"    \
    " AND s.ready = 1 AND " RUNNABLE_AT(                                                           \
        "?2") " ORDER BY s.priority DESC, s.queued_at, s.video_id, s.ord LIMIT 1"

/* The head of one stage's runnable rows, as the claim orders them. */
struct pick {
    char id[65], stage[32];
    long long priority, ord;
    double queued_at;
};

/* Whether a comes before b in the claim's order (priority DESC, queued_at, video, ord). */
static int pick_before(const struct pick *a, const struct pick *b)
{
    int c;

    if (a->priority != b->priority)
        return a->priority > b->priority;
    if (a->queued_at != b->queued_at)
        return a->queued_at < b->queued_at;
    c = strcmp(a->id, b->id);
    return c ? c < 0 : a->ord < b->ord;
}

/* The first runnable row of stage k into *p (*found 1), locked on PostgreSQL when lock. */
static int pick_one(struct vt_store *s, int k, double now, int lock, struct pick *p, int *found)
{
    static const char *const sql[2] = {ONE_SQL, ONE_SQL " FOR UPDATE OF s SKIP LOCKED"};
    struct db_stmt *st;
    int rc = store_prepare(s, sql[lock && s->conn.pg], &st);

    *found = 0;
    if (rc)
        return rc;
    store_bind_text(st, 1, vt_stages[k].name);
    db_bind_double(st, 2, now);
    rc = db_step(st);
    if (rc == DB_ROW) {
        snprintf(p->id, sizeof(p->id), "%s", db_col_text(st, 0));
        snprintf(p->stage, sizeof(p->stage), "%s", db_col_text(st, 1));
        p->priority = db_col_int64(st, 2);
        p->queued_at = db_col_double(st, 3);
        p->ord = db_col_int64(st, 4);
        *found = 1;
        rc = 0;
    } else {
        rc = rc == DB_DONE ? 0 : store_fail(s, "pick a queued stage");
    }
    store_finish(s, st);
    return rc;
}

/* A limited worker's pick: each of its stages' head read, the first of them in the
 * claim's order taken (locked); another worker's claim of that head meanwhile makes the
 * locked read return that stage's next row. */
static int pick_limited(struct vt_store *s, unsigned stages, double now, struct pick *p, int *found)
{
    int rc = 0, best = -1, n = 0, one;
    struct pick c;

    for (int k = 0; k < VT_STAGE_COUNT && !rc; k++)
        if (stages & (1u << k))
            n++;
    for (int k = 0; k < VT_STAGE_COUNT && !rc && n > 1; k++) {
        if (!(stages & (1u << k)))
            continue;
        rc = pick_one(s, k, now, 0, &c, &one);
        if (!rc && one && (best < 0 || pick_before(&c, p))) {
            *p = c;
            best = k;
        }
    }
    for (int k = 0; k < VT_STAGE_COUNT && n == 1; k++)
        if (stages & (1u << k))
            best = k;
    *found = 0;
    if (rc || best < 0)
        return rc;
    return pick_one(s, best, now, 1, p, found);
}

/* All of the stages, or (0) a worker limited to some. */
static int all_stages(unsigned stages)
{
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        if (!(stages & (1u << k)))
            return 0;
    return 1;
}

int vt_store_queue_next(struct vt_store *s, unsigned stages, double now, char id[65],
                        char stage[32], int *found)
{
    /* PostgreSQL: rows another worker's claim holds are passed over, not waited for */
    static const char *const sql[2] = {NEXT_SQL, NEXT_SQL " FOR UPDATE OF s SKIP LOCKED"};
    struct db_stmt *st;
    struct pick p;
    int rc, slot = 1;

    *found = 0;
    /* both sent with the statement after them, in its round trip (store_exec_later) */
    if (s->conn.pg) {
        rc = store_exec_later(s, PICK_PLAN_SET_1, "plan the pick");
        if (!rc)
            rc = store_exec_later(s, PICK_PLAN_SET_2, "plan the pick");
        if (rc)
            return rc;
    }
    if (!all_stages(stages)) {
        rc = pick_limited(s, stages, now, &p, found);
        if (!rc && *found) {
            snprintf(id, 65, "%s", p.id);
            snprintf(stage, 32, "%s", p.stage);
        }
        goto out;
    }
    rc = store_prepare(s, sql[s->conn.pg != NULL], &st);
    if (rc)
        return rc;
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        if (stages & (1u << k))
            store_bind_text(st, slot++, vt_stages[k].name);
    for (; slot <= NAME_SLOTS; slot++)
        db_bind_null(st, slot);
    db_bind_double(st, 9, now);
    rc = db_step(st);
    if (rc == DB_ROW) {
        snprintf(id, 65, "%s", db_col_text(st, 0));
        snprintf(stage, 32, "%s", db_col_text(st, 1));
        *found = 1;
        rc = 0;
    } else {
        rc = rc == DB_DONE ? 0 : store_fail(s, "pick a queued stage");
    }
    store_finish(s, st);
out:
    if (!rc && s->conn.pg)
        rc = store_exec_later(s, PICK_PLAN_RESET_1, "plan the pick");
    if (!rc && s->conn.pg)
        rc = store_exec_later(s, PICK_PLAN_RESET_2, "plan the pick");
    return rc;
}

/* Run a lease UPDATE whose parameters 1-4 are id, stage, owner, attempts: HELD when it
 * changed the row, else LOST. */
static int lease_update(struct vt_store *s, const char *sql, const char *id, const char *stage,
                        const char *owner, int attempts, double lease_until, enum vt_lease *res)
{
    struct db_stmt *st;
    int rc = store_prepare(s, sql, &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    store_bind_text(st, 2, stage);
    store_bind_text(st, 3, owner);
    db_bind_int(st, 4, attempts);
    if (lease_until > 0)
        db_bind_double(st, 5, lease_until);
    rc = store_step_done(s, st, "update a lease");
    if (!rc)
        *res = s->conn.ops->changes(&s->conn) > 0 ? VT_LEASE_HELD : VT_LEASE_LOST;
    return rc;
}

int vt_store_stage_heartbeat(struct vt_store *s, const char *id, const char *stage,
                             const char *owner, int attempts, double lease_until,
                             enum vt_lease *res)
{
    /* clang-format off */
    return lease_update(s,
                        "UPDATE stages SET lease_until = ?5 WHERE video_id = ?1 AND name = ?2"
                        " AND state = " VT_SQL_STATE(running) " AND owner = ?3 AND attempts = ?4",
                        id, stage, owner, attempts, lease_until > 0 ? lease_until : 1, res);
    /* clang-format on */
}

int vt_store_stage_give_back(struct vt_store *s, const char *id, const char *stage,
                             const char *owner, int attempts, enum vt_lease *res)
{
    /* clang-format off */
    int rc = lease_update(s,
                          "UPDATE stages SET state = " VT_SQL_STATE(queued) ", owner = NULL,"
                          " lease_until = 0, attempts = attempts - 1, retry_at = 0"
                          " WHERE video_id = ?1 AND name = ?2 AND state = " VT_SQL_STATE(running)
                          " AND owner = ?3 AND attempts = ?4",
                          id, stage, owner, attempts, 0, res);
    /* clang-format on */

    /* the stage is runnable again: another worker may take it at once */
    if (!rc && *res == VT_LEASE_HELD)
        rc = store_notify_work(s, store_woken_stages(stage, VT_STATE_QUEUED));
    return rc;
}

int vt_store_video_lock(struct vt_store *s, const char *id)
{
    struct db_stmt *st;
    int rc;

    if (!s->conn.pg)
        return 0;
    rc = store_prepare(s, "SELECT id FROM videos WHERE id = ? FOR UPDATE", &st);
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    /* nothing is read from it: it goes with the next statement, which it precedes on
     * the server, so the lock is held before that one runs (store_step_later) */
    return store_step_later(s, st, "lock video");
}

int vt_store_video_priority(struct vt_store *s, const char *id, int priority)
{
    struct db_stmt *st;
    int rc = store_prepare(s, "UPDATE stages SET priority = ? WHERE video_id = ?", &st);

    if (rc)
        return rc;
    db_bind_int(st, 1, priority);
    store_bind_text(st, 2, id);
    return store_step_done(s, st, "set a video's priority");
}

const char *vt_store_backend(const struct vt_store *s)
{
    return s->conn.ops->name;
}

#define CLOCK_RECHECK_S 60.0

double vt_store_now(struct vt_store *s)
{
    double mono = vt_monotonic_s();

    if (s->be->server_time && (!s->clock_at || mono - s->clock_at >= CLOCK_RECHECK_S)) {
        double t0 = vt_wall_s(), t, t1;

        /* a failure (the server away) keeps the last offset; the next call asks again */
        if (!s->be->server_time(s, &t)) {
            t1 = vt_wall_s();
            s->clock_offset = t - (t0 + t1) / 2;
            s->clock_at = mono;
        }
    }
    return vt_wall_s() + s->clock_offset;
}

_Static_assert(VT_STAGE_COUNT < 31, "STORE_NOTIFY_PROGRESS is above every stage's bit");

int store_notify_work(struct vt_store *s, unsigned stages)
{
    if (!s->be->notify_work)
        return 0;
    return s->be->notify_work(s, stages ? stages : STORE_NOTIFY_PROGRESS);
}

unsigned store_woken_stages(const char *name, enum vt_state state)
{
    int id = vt_stage_find(name);
    unsigned out = 0;

    if (id < 0)
        return ~0u; /* not in the table: wake everyone, as before */
    if (state == VT_STATE_QUEUED)
        return 1u << id;
    if (state == VT_STATE_RUNNING)
        return 0;
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        if ((vt_stages[k].deps | vt_stages[k].after) & (1u << id))
            out |= 1u << k;
    return out;
}

void vt_store_wait_stages(struct vt_store *s, unsigned stages)
{
    s->wake_stages = stages;
}

/* SQLite: a commit by any connection moves PRAGMA data_version; poll it. */
static int sqlite_wait_work(struct vt_store *s, double timeout_s)
{
    long long v0 = vt_store_version(s);
    double end = vt_monotonic_s() + timeout_s;

    if (v0 < 0)
        return store_fail(s, "wait for work");
    while (vt_monotonic_s() < end) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        long long v;

        nanosleep(&ts, NULL);
        v = vt_store_version(s);
        if (v < 0)
            return store_fail(s, "wait for work");
        if (v != v0)
            return 1;
    }
    return 0;
}

int vt_store_wait_work(struct vt_store *s, double timeout_s)
{
    if (timeout_s <= 0)
        return 0;
    if (s->be->wait_work)
        return s->be->wait_work(s, timeout_s);
    return sqlite_wait_work(s, timeout_s);
}

/* ---- the stage table's dependencies, as rows ---- */

static int deps_row(void *user, struct db_stmt *st)
{
    struct vt_sb *sb = user;

    vt_sb_addf(sb, "\n%s\t%s", db_col_text(st, 0), db_col_text(st, 1));
    return 0;
}

/* Whether stage_deps holds exactly the table's pairs (as a set: the order of rows
 * depends on the backend's collation). */
static int deps_current(struct vt_store *s, int *same)
{
    struct vt_sb have = {0};
    int rc = store_rows(s, "SELECT name, dep FROM stage_deps", "read stage_deps", deps_row, &have,
                        ""),
        n = 0;

    *same = 0;
    if (rc)
        goto out;
    vt_sb_addc(&have, '\n');
    *same = 1;
    for (int k = 0; k < VT_STAGE_COUNT; k++) {
        unsigned in = vt_stages[k].deps | vt_stages[k].after;

        for (int d = 0; d < VT_STAGE_COUNT; d++) {
            char pair[80];

            if (!(in & (1u << d)))
                continue;
            n++;
            snprintf(pair, sizeof(pair), "\n%s\t%s\n", vt_stages[k].name, vt_stages[d].name);
            if (!strstr(have.buf, pair))
                *same = 0;
        }
    }
    for (size_t i = 0; i < have.len; i++)
        n -= have.buf[i] == '\t';
    if (n)
        *same = 0;
out:
    vt_sb_release(&have);
    return rc;
}

int vt_store_sync_stage_deps(struct vt_store *s)
{
    struct db_stmt *st;
    int same, rc = deps_current(s, &same);

    if (rc || same)
        return rc;
    rc = vt_store_begin(s);
    /* PostgreSQL: workers starting together rewrite it one at a time, and only the
     * first finds it different (SQLite's write lock, taken by begin, does the same) */
    if (!rc && s->conn.pg)
        rc = store_exec(s, "SELECT pg_advisory_xact_lock(8532461420160577910)", "lock stage_deps");
    if (!rc)
        rc = deps_current(s, &same);
    if (!rc && same) {
        vt_store_rollback(s);
        return 0;
    }
    if (!rc)
        rc = store_exec(s, "DELETE FROM stage_deps", "write stage_deps");
    for (int k = 0; k < VT_STAGE_COUNT && !rc; k++) {
        unsigned in = vt_stages[k].deps | vt_stages[k].after;

        for (int d = 0; d < VT_STAGE_COUNT && !rc; d++) {
            if (!(in & (1u << d)))
                continue;
            rc = store_prepare(s, "INSERT INTO stage_deps (name, dep) VALUES (?, ?)", &st);
            if (rc)
                break;
            store_bind_text(st, 1, vt_stages[k].name);
            store_bind_text(st, 2, vt_stages[d].name);
            rc = store_step_done(s, st, "write stage_deps");
        }
    }
    if (!rc)
        return vt_store_commit(s);
    vt_store_rollback(s);
    return rc;
}

/* ---- what `vidtheque jobs` shows ---- */

static void read_count(struct db_stmt *st, void *item)
{
    struct vt_queue_count *c = item;

    snprintf(c->stage, sizeof(c->stage), "%s", db_col_text(st, 0));
    if (vt_state_parse(db_col_text(st, 1), &c->state))
        c->state = VT_STATE_QUEUED;
    c->n = db_col_int64(st, 2);
    c->runnable = db_col_int64(st, 3);
}

/* In the stage table's order, then the states'. */
static int count_cmp(const void *a, const void *b)
{
    const struct vt_queue_count *x = a, *y = b;
    int kx = vt_stage_find(x->stage), ky = vt_stage_find(y->stage);

    if (kx != ky)
        return (kx < 0 ? VT_STAGE_COUNT : kx) - (ky < 0 ? VT_STAGE_COUNT : ky);
    return (int)x->state - (int)y->state;
}

int vt_store_queue_counts(struct vt_store *s, double now, struct vt_queue_count **out, size_t *n)
{
    /* clang-format off */
    int rc = store_read_array(s,
                              "SELECT s.name, s.state, count(*), sum(CASE WHEN s.state = "
                              VT_SQL_STATE(queued) " AND s.retry_at <= ?1 AND " INPUTS_SETTLED
                              " THEN 1 ELSE 0 END) FROM stages s GROUP BY s.name, s.state",
                              "count the queue", sizeof(**out), read_count, NULL, (void **)out, n,
                              "d", now);
    /* clang-format on */

    if (!rc && *n)
        qsort(*out, *n, sizeof(**out), count_cmp);
    return rc;
}

static void read_job(struct db_stmt *st, void *item)
{
    struct vt_queue_job *j = item;

    snprintf(j->video_id, sizeof(j->video_id), "%s", db_col_text(st, 0));
    snprintf(j->stage, sizeof(j->stage), "%s", db_col_text(st, 1));
    j->owner = store_col_dup(st, 2);
    j->error = store_col_dup(st, 3);
    j->attempts = db_col_int(st, 4);
    j->started_at = db_col_double(st, 5);
    j->lease_until = db_col_double(st, 6);
    j->retry_at = db_col_double(st, 7);
    j->attempts_base = db_col_int(st, 8);
}

static void release_job(void *item)
{
    struct vt_queue_job *j = item;

    free(j->owner);
    free(j->error);
}

/* The columns read_job reads. */
#define JOB_COLUMNS                                                                                \
    "SELECT video_id, name, owner, error, attempts, started_at, lease_until, retry_at,"            \
    " attempts_base FROM stages"

int vt_store_queue_jobs(struct vt_store *s, int which, struct vt_queue_job **out, size_t *n)
{
    /* a retry is the only queued row with a retry time (a redo clears it) */
    static const char *const sql[3] = {
        /* clang-format off */
        JOB_COLUMNS " WHERE state = " VT_SQL_STATE(running) " ORDER BY started_at, video_id, name",
        JOB_COLUMNS " WHERE state = " VT_SQL_STATE(failed) " ORDER BY started_at DESC, video_id"
                                                           ", name",
        JOB_COLUMNS " WHERE state = " VT_SQL_STATE(queued) " AND retry_at > 0 ORDER BY retry_at"
                                                           ", video_id, name"};
    /* clang-format on */

    if (which < VT_JOBS_RUNNING || which > VT_JOBS_RETRYING)
        which = VT_JOBS_RUNNING;
    return store_read_array(s, sql[which], "list jobs", sizeof(**out), read_job, release_job,
                            (void **)out, n, "");
}

/* clang-format off */
#define OLDEST_RUNNABLE                                                                            \
    "SELECT coalesce(min(s.queued_at), 0) FROM stages s"                                           \
    " WHERE s.state = " VT_SQL_STATE(queued) " AND s.retry_at <= ?1 AND " INPUTS_SETTLED
/* clang-format on */

static void read_oldest(struct db_stmt *st, void *item)
{
    *(double *)item = db_col_double(st, 0);
}

int vt_store_queue_oldest(struct vt_store *s, double now, double *queued_at)
{
    double *v = NULL;
    size_t n = 0;
    int rc = store_read_array(s, OLDEST_RUNNABLE, "find the oldest runnable stage", sizeof(*v),
                              read_oldest, NULL, (void **)&v, &n, "d", now);

    *queued_at = !rc && n ? v[0] : 0;
    free(v);
    return rc;
}

void vt_queue_jobs_free(struct vt_queue_job *j, size_t n)
{
    for (size_t i = 0; i < n; i++)
        release_job(&j[i]);
    free(j);
}
