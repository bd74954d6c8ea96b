/*
 * The runnable rule (runnable.h): a stage runs once every stage it reads has settled
 * (its deps done: a dep that failed or was skipped settles it the same way), when it is
 * queued and due, or running under a holder that is gone (presumed dead: it is taken
 * over). The queue's SQL (store_queue.c) is checked against it by test_runnable.c.
 */
#include "run/runnable.h"

#include "core/library.h"

#include <string.h>

static const struct vt_stage_rec *find_rec(const struct vt_stage_rec *r, size_t n,
                                           enum vt_stage_id id)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, vt_stages[id].name))
            return &r[i];
    return NULL;
}

int vt_stage_holder_gone(struct vt_library *lib, const struct vt_stage_rec *r, double now)
{
    if (r->lease_until > 0)
        return r->lease_until < now;
    return lib ? vt_lib_owner_dead(lib, r->owner) : 0;
}

enum vt_runnable vt_stage_runnable(struct vt_library *lib, const struct vt_stage_rec *r, size_t n,
                                   enum vt_stage_id id, double now, int *dep)
{
    const struct vt_stage_info *t = &vt_stages[id];
    const struct vt_stage_rec *me = find_rec(r, n, id);

    if (vt_state_terminal(me->state) ||
        (me->state == VT_STATE_RUNNING && !vt_stage_holder_gone(lib, me, now)))
        return VT_RUNNABLE_NO;
    if (me->state == VT_STATE_QUEUED && me->retry_at > now)
        return VT_RUNNABLE_RETRY;
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        if ((t->after & (1u << k)) && !vt_state_terminal(find_rec(r, n, k)->state))
            return VT_RUNNABLE_INPUTS;
    for (int k = 0; k < VT_STAGE_COUNT; k++) {
        const struct vt_stage_rec *d = find_rec(r, n, k);

        if (!(t->deps & (1u << k)))
            continue;
        if (!vt_state_terminal(d->state))
            return VT_RUNNABLE_INPUTS; /* another process may be running it */
        if (d->state != VT_STATE_DONE) {
            if (dep)
                *dep = k;
            return VT_RUNNABLE_SETTLE;
        }
    }
    return VT_RUNNABLE_RUN;
}
