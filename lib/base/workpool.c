/*
 * The worker pool (see workpool.h): threads that take items from a shared counter,
 * a stop flag raised by the first failure, the lowest failing item kept so that the
 * reported error does not depend on timing, and progress called on the calling thread
 * only, either between its own items or while it waits for the workers.
 */
#include "base/workpool.h"

#include "base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The state of one vt_pool_run, guarded by mu. */
struct pool_run {
    const struct vt_pool *p;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* an item done or a worker gone, for the waiting caller */
    size_t next;       /* next item to take */
    size_t done;       /* items finished, well or not */
    size_t n_exited;   /* threads that have left their loop */
    int stop;          /* an item failed: take no more */
    struct vt_pool_fail fail;
};

struct pool_worker {
    struct pool_run *run;
    size_t index;
};

void vt_pool_fail_init(struct vt_pool_fail *f)
{
    f->item = SIZE_MAX;
    f->code = 0;
    f->msg[0] = '\0';
}

void vt_pool_fail_note(struct vt_pool_fail *f, size_t item, int code, const char *msg)
{
    /* Every item below the first failure was already taken and still finishes, so
     * keeping the lowest gives the same item whatever the timing. */
    if (item >= f->item)
        return;
    f->item = item;
    f->code = code;
    snprintf(f->msg, sizeof(f->msg), "%s", msg);
}

size_t vt_pool_threads_start(pthread_t *tids, size_t n, void *(*fn)(void *), void *args,
                             size_t size)
{
    size_t k = 0;

    for (; k < n; k++)
        if (pthread_create(&tids[k], NULL, fn, (char *)args + k * size))
            break;
    return k;
}

void vt_pool_threads_join(const pthread_t *tids, size_t n)
{
    for (size_t k = 0; k < n; k++)
        pthread_join(tids[k], NULL);
}

/* Take and run items until none is left or one failed; report: the calling thread. */
static void work(struct pool_run *run, size_t worker, int report)
{
    const struct vt_pool *p = run->p;
    size_t reported = SIZE_MAX;

    pthread_mutex_lock(&run->mu);
    for (;;) {
        char err[sizeof(run->fail.msg)] = "";
        size_t i;
        int rc;

        if (report && p->progress && !run->stop && run->done != reported) {
            size_t done = run->done;

            pthread_mutex_unlock(&run->mu);
            p->progress(p->progress_user, (double)done / (double)p->n_items);
            pthread_mutex_lock(&run->mu);
            reported = done;
        }
        if (run->stop || run->next >= p->n_items)
            break;
        i = run->next++;
        pthread_mutex_unlock(&run->mu);

        rc = p->task(p->user, worker, i, err, sizeof(err));

        pthread_mutex_lock(&run->mu);
        run->done++;
        if (rc < 0) {
            run->stop = 1;
            vt_pool_fail_note(&run->fail, i, rc, err);
        }
        pthread_cond_signal(&run->cv);
    }
    pthread_mutex_unlock(&run->mu);
}

static void *worker_main(void *arg)
{
    struct pool_worker *w = arg;
    struct pool_run *run = w->run;

    work(run, w->index, 0);
    pthread_mutex_lock(&run->mu);
    run->n_exited++;
    pthread_cond_signal(&run->cv);
    pthread_mutex_unlock(&run->mu);
    return NULL;
}

/* The caller waits for the started workers, reporting progress as items finish. */
static void wait_workers(struct pool_run *run, size_t started)
{
    const struct vt_pool *p = run->p;
    size_t reported = 0;

    pthread_mutex_lock(&run->mu);
    for (;;) {
        size_t done, exited;

        while (run->done == reported && run->n_exited < started)
            pthread_cond_wait(&run->cv, &run->mu);
        done = run->done;
        exited = run->n_exited;
        if (done != reported && p->progress && !run->stop) {
            pthread_mutex_unlock(&run->mu);
            p->progress(p->progress_user, (double)done / (double)p->n_items);
            pthread_mutex_lock(&run->mu);
        }
        reported = done;
        if (exited == started)
            break;
    }
    pthread_mutex_unlock(&run->mu);
}

int vt_pool_run(const struct vt_pool *p, char *err, size_t errlen)
{
    struct pool_run run = {.p = p};
    size_t n = p->n_workers ? p->n_workers : 1, first, started;
    struct pool_worker *w;
    pthread_t *tids;
    int rc = 0;

    if (p->n_items == 0)
        return 0;
    if (n > p->n_items)
        n = p->n_items;
    vt_pool_fail_init(&run.fail);
    pthread_mutex_init(&run.mu, NULL);
    pthread_cond_init(&run.cv, NULL);
    w = vt_xcalloc(n, sizeof(*w));
    tids = vt_xcalloc(n, sizeof(*tids));
    for (size_t k = 0; k < n; k++) {
        w[k].run = &run;
        w[k].index = k;
    }
    /* worker 0 is the caller's when it works; threads for the others */
    first = p->caller_works ? 1 : 0;
    started = vt_pool_threads_start(tids, n - first, worker_main, &w[first], sizeof(*w));
    if (p->caller_works || started == 0) {
        /* the items the threads that could not start would have taken are taken here */
        work(&run, 0, 1);
    }
    if (started)
        wait_workers(&run, started);
    vt_pool_threads_join(tids, started);
    if (run.fail.item != SIZE_MAX)
        rc = vt_err(err, errlen, run.fail.code, "%s", run.fail.msg);
    pthread_cond_destroy(&run.cv);
    pthread_mutex_destroy(&run.mu);
    free(tids);
    free(w);
    return rc;
}
