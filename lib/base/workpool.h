/*
 * The worker pool of the stages that spread work over cores (keyframe's scan and
 * extraction, ocr): vt_pool_run runs a task function over the items 0..n-1 on up to
 * n_workers threads that take items in turn from a shared counter, stops handing out
 * items when one fails and reports the failure of the lowest failing item, so that the
 * error does not depend on timing. Progress is reported on the calling thread only.
 * The lower pieces (starting and joining threads, keeping the lowest failure) are also
 * used by stt, whose items arrive over time through its own bounded queue.
 */
#ifndef VT_WORKPOOL_H
#define VT_WORKPOOL_H

#include <pthread.h>
#include <stddef.h>

/*
 * One item: item i on worker w (0..n_workers-1; a worker is one thread, so per-worker
 * state indexed by w needs no lock). Returns 0, or a negative VT_E* code with err set.
 */
/* Progress: frac in 0..1 (the same type as the stages' vt_progress_fn, model/stage.h). */
typedef void (*vt_progress_fn)(void *user, double frac);

typedef int (*vt_pool_task_fn)(void *user, size_t worker, size_t item, char *err, size_t errlen);

struct vt_pool {
    size_t n_items, n_workers; /* n_workers 0 counts as 1 */
    vt_pool_task_fn task;
    void *user;
    /*
     * 1: the calling thread is worker 0 and works too; 0: it waits for the workers
     * (and only becomes worker 0 when no thread could be started).
     */
    int caller_works;
    /* Called with items done / n_items on the calling thread between items, never after
     * a failure; NULL for none. */
    vt_progress_fn progress;
    void *progress_user;
};

/*
 * Run p->task over every item, or until one fails. Returns 0, or the code of the lowest
 * failing item with its message in err. Items are never run twice; after a failure, items
 * not yet taken are never run.
 */
int vt_pool_run(const struct vt_pool *p, char *err, size_t errlen);

/* The lowest failing item of a run, kept under the caller's lock. */
struct vt_pool_fail {
    size_t item; /* SIZE_MAX: none */
    int code;
    char msg[512];
};
void vt_pool_fail_init(struct vt_pool_fail *f);
/* Keep (item, code, msg) if item is lower than the one kept. */
void vt_pool_fail_note(struct vt_pool_fail *f, size_t item, int code, const char *msg);

/*
 * Start fn on args, args + size, ... for up to n threads, stopping at the first that
 * cannot be created; tids gets their ids. Returns how many started.
 */
size_t vt_pool_threads_start(pthread_t *tids, size_t n, void *(*fn)(void *), void *args,
                             size_t size);
void vt_pool_threads_join(const pthread_t *tids, size_t n);
#endif
