/* Unit tests of lib/base/workpool.c: every item once, the lowest failure, progress on the caller.
 */
#include "base/util.h"
#include "base/workpool.h"
#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define N_ITEMS 500

struct pool_test {
    atomic_int runs[N_ITEMS];
    size_t fail_from; /* items from here fail */
    pthread_t caller;
    int progress_off_caller, n_progress;
    double last_frac;
};

static int pool_test_task(void *user, size_t worker, size_t i, char *err, size_t errlen)
{
    struct pool_test *t = user;

    atomic_fetch_add(&t->runs[i], 1);
    if (i >= t->fail_from)
        return vt_err(err, errlen, VT_EMEDIA, "item %zu failed", i);
    return 0;
}

static void pool_test_progress(void *user, double frac)
{
    struct pool_test *t = user;

    if (!pthread_equal(pthread_self(), t->caller))
        t->progress_off_caller = 1;
    t->n_progress++;
    t->last_frac = frac;
}

static void pool_test_run(int caller_works)
{
    static struct pool_test t;
    struct vt_pool p = {.n_items = N_ITEMS,
                        .n_workers = 4,
                        .task = pool_test_task,
                        .user = &t,
                        .caller_works = caller_works,
                        .progress = pool_test_progress,
                        .progress_user = &t};
    char err[128] = "";

    for (size_t i = 0; i < N_ITEMS; i++)
        atomic_store(&t.runs[i], 0);
    t.fail_from = N_ITEMS;
    t.caller = pthread_self();
    t.progress_off_caller = t.n_progress = 0;
    CHECK_INT(vt_pool_run(&p, err, sizeof(err)), 0);
    for (size_t i = 0; i < N_ITEMS; i++)
        CHECK_INT(atomic_load(&t.runs[i]), 1);
    CHECK(t.n_progress > 0);
    CHECK(!t.progress_off_caller);
    if (!caller_works)
        CHECK(t.last_frac == 1.0);

    /* failures from item 100 on: item 100's is the one reported, whatever the timing */
    for (size_t i = 0; i < N_ITEMS; i++)
        atomic_store(&t.runs[i], 0);
    t.fail_from = 100;
    CHECK_INT(vt_pool_run(&p, err, sizeof(err)), VT_EMEDIA);
    CHECK_STR(err, "item 100 failed");
    for (size_t i = 0; i < N_ITEMS; i++)
        CHECK(atomic_load(&t.runs[i]) == (i < 100 ? 1 : atomic_load(&t.runs[i]) ? 1 : 0));
    CHECK(!t.progress_off_caller);
}

VT_TEST(workpool_caller_waits)
{
    pool_test_run(0);
}

VT_TEST(workpool_caller_works)
{
    pool_test_run(1);
}

VT_TEST(workpool_empty)
{
    struct vt_pool p = {.n_items = 0, .task = pool_test_task};

    CHECK_INT(vt_pool_run(&p, NULL, 0), 0);
}
