/*
 * The runnable rule (runnable.c): whether a stage of a video may run now, written once
 * in C for the pipeline's claim. The queue's pick says the same in SQL
 * (lib/store/store_queue.c, RUNNABLE_AT) so that the database finds the next stage
 * without reading every row; tests/unit/test_runnable.c checks the two against each
 * other on every combination of a stage's own state and its inputs' states, on both
 * backends.
 */
#ifndef VT_RUNNABLE_H
#define VT_RUNNABLE_H

#include "model/stage.h"

#include <stddef.h>

struct vt_library;
struct vt_stage_rec;

/* What the rule says of a stage. */
enum vt_runnable {
    VT_RUNNABLE_NO,     /* settled, or running under a holder that is alive */
    VT_RUNNABLE_INPUTS, /* an input (dep or after) has not settled yet */
    VT_RUNNABLE_RETRY,  /* queued for a later attempt that is not due yet */
    VT_RUNNABLE_SETTLE, /* a dep failed or was skipped: it settles so, without running */
    VT_RUNNABLE_RUN,    /* may run now: queued and due, or its holder is gone */
};

/*
 * Whether the holder of running stage r is gone at now: a stage under a lease (a queue
 * worker's, or an in-process run's on PostgreSQL) when the lease expired; one without
 * (an in-process run on SQLite) when its owner's lock file says so, which only lib's
 * machine can read. lib NULL: what the queue's SQL can know (no lease: held).
 */
int vt_stage_holder_gone(struct vt_library *lib, const struct vt_stage_rec *r, double now);

/*
 * The rule for stage id of a video whose stage rows (one per stage of the table) are
 * r[0..n), at now; lib as vt_stage_holder_gone's. *dep (may be NULL) gets the dep that
 * settles it for VT_RUNNABLE_SETTLE.
 */
enum vt_runnable vt_stage_runnable(struct vt_library *lib, const struct vt_stage_rec *r, size_t n,
                                   enum vt_stage_id id, double now, int *dep);

#endif
