/*
 * The runnable rule, written once in C (lib/run/runnable.c, the pipeline's claim) and
 * said again in SQL by the queue's pick (lib/store/store_queue.c) and its count of
 * runnable stages (`vidtheque jobs`): the two must agree. For every stage of the table,
 * every state of its own (queued, due or not; running under a lease that expired, that
 * holds, or none; done, skipped, failed) and every combination of its inputs' states,
 * the pick finds the stage exactly when the C rule says it runs or settles, on both
 * backends. A running stage without a lease (an in-process run on SQLite) is one the
 * queue leaves alone: only its owner's machine can tell whether it is alive (the C
 * rule asked with no library handle says the same).
 */
#include "base/util.h"
#include "core/library.h"
#include "harness.h"
#include "pgtest.h"
#include "run/runnable.h"
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

static char *scratch_db;

/* A stage's own state in a case: its state, lease and retry time relative to now. */
struct own {
    const char *what;
    enum vt_state state;
    double lease, retry; /* seconds from now; 0: none */
};

static const struct own owns[] = {
    {"queued", VT_STATE_QUEUED, 0, 0},
    {"queued, retry due", VT_STATE_QUEUED, 0, -100},
    {"queued, retry not due", VT_STATE_QUEUED, 0, 100},
    {"running, lease expired", VT_STATE_RUNNING, -10, 0},
    {"running, lease holds", VT_STATE_RUNNING, 100, 0},
    {"running, no lease", VT_STATE_RUNNING, 0, 0},
    {"done", VT_STATE_DONE, 0, 0},
    {"skipped", VT_STATE_SKIPPED, 0, 0},
    {"failed", VT_STATE_FAILED, 0, 0},
};

/* Set stage of video "v" as o says at now. */
static void set_row(struct vt_store *s, const char *stage, const struct own *o, double now)
{
    struct db_stmt *st;

    CHECK_INT(store_prepare(s,
                            "UPDATE stages SET state = ?3, lease_until = ?4, retry_at = ?5,"
                            " owner = ?6 WHERE video_id = ?1 AND name = ?2",
                            &st),
              0);
    store_bind_text(st, 1, "v");
    store_bind_text(st, 2, stage);
    store_bind_text(st, 3, vt_state_name(o->state));
    db_bind_double(st, 4, o->lease ? now + o->lease : 0);
    db_bind_double(st, 5, o->retry ? now + o->retry : 0);
    store_bind_text(st, 6, o->state == VT_STATE_RUNNING ? "elsewhere:1:1" : NULL);
    CHECK_INT(store_step_done(s, st, "set a row"), 0);
}

/* Whether the queue's pick among stage k alone finds it at now. */
static int picked(struct vt_store *s, int k, double now)
{
    char id[65], stage[32];
    int found = 0;

    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_queue_next(s, 1u << k, now, id, stage, &found), 0);
    vt_store_rollback(s);
    return found && !strcmp(id, "v") && !strcmp(stage, vt_stages[k].name);
}

/* The runnable count `vidtheque jobs` shows for stage k's queued rows at now. */
static long long counted(struct vt_store *s, int k, double now)
{
    struct vt_queue_count *c;
    size_t n;
    long long runnable = 0;

    CHECK_INT(vt_store_queue_counts(s, now, &c, &n), 0);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i].stage, vt_stages[k].name) && c[i].state == VT_STATE_QUEUED)
            runnable += c[i].runnable;
    free(c);
    return runnable;
}

/* What the C rule says of stage k of video "v" at now, as the queue would act on it. */
static int rule_runs(struct vt_store *s, int k, double now)
{
    struct vt_stage_rec *r;
    size_t n;
    enum vt_runnable verdict;

    CHECK_INT(vt_store_stages(s, "v", &r, &n), 0);
    verdict = vt_stage_runnable(NULL, r, n, k, now, NULL);
    vt_stage_recs_free(r, n);
    return verdict == VT_RUNNABLE_RUN || verdict == VT_RUNNABLE_SETTLE;
}

/* One case: stage k as o, its inputs in[0..m) in the states of combo (base 5). */
static int check_case(struct vt_store *s, int k, const struct own *o, const int *in, int m,
                      int combo, double now)
{
    char desc[256];
    int runs, pick;
    long long count;

    set_row(s, vt_stages[k].name, o, now);
    snprintf(desc, sizeof(desc), "%s %s", vt_stages[k].name, o->what);
    for (int j = 0, c = combo; j < m; j++, c /= VT_STATE_COUNT) {
        /* an input running elsewhere holds its lease: it is not settled either way */
        struct own x = {"", (enum vt_state)(c % VT_STATE_COUNT), 0, 0};

        x.lease = x.state == VT_STATE_RUNNING ? 100 : 0;
        set_row(s, vt_stages[in[j]].name, &x, now);
        snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc), " %s=%s", vt_stages[in[j]].name,
                 vt_state_name(x.state));
    }
    runs = rule_runs(s, k, now);
    pick = picked(s, k, now);
    count = counted(s, k, now);
    if (runs != pick || count != (runs && o->state == VT_STATE_QUEUED)) {
        printf("  %s: the rule says %s, the pick %s, the count %lld\n", desc,
               runs ? "runnable" : "not runnable", pick ? "takes it" : "passes", count);
        return 1;
    }
    return 0;
}

VT_TEST_STORE(runnable_rule_and_sql_agree)
{
    char dir[64];
    struct vt_store *s = vt_test_store("runnable", dir, sizeof(dir), &scratch_db);
    double now = vt_wall_s() + 1000;
    int cases = 0, differ = 0;

    CHECK(s != NULL);
    if (!s)
        return;
    vt_test_video_add(s, "v", "v", 1);
    for (int k = 0; k < VT_STAGE_COUNT; k++) {
        unsigned inputs = vt_stages[k].deps | vt_stages[k].after;
        int in[VT_STAGE_COUNT], m = 0, combos = 1;
        const struct own queued = {"", VT_STATE_QUEUED, 0, 0};

        for (int j = 0; j < VT_STAGE_COUNT; j++)
            if (inputs & (1u << j)) {
                in[m++] = j;
                combos *= VT_STATE_COUNT;
            }
        for (size_t o = 0; o < VT_ARRAY_LEN(owns); o++)
            for (int c = 0; c < combos; c++, cases++)
                differ += check_case(s, k, &owns[o], in, m, c, now);
        /* back to queued, so the next stage's inputs start as the video's would */
        set_row(s, vt_stages[k].name, &queued, now);
        for (int j = 0; j < m; j++)
            set_row(s, vt_stages[in[j]].name, &queued, now);
    }
    CHECK_INT(differ, 0);
    CHECK(cases > 9 * VT_STAGE_COUNT); /* some stages have inputs */
    vt_test_store_done(s, dir, scratch_db);
    scratch_db = NULL;
}
