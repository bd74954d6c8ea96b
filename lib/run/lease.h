/*
 * The lease of a stage run in-process on a database that machines share (the pipeline's
 * claim, lease.c): the seconds it lasts, VIDTHEQUE_LEASE (60 by default), and a thread
 * that extends it every third of that with a connection of its own, as a queue worker's
 * heartbeat does (worker.c), until vt_lease_keeper_stop (after the run's finish) or until
 * the lease is no longer the run's. Its own file so that the pipeline and the worker
 * both use it and neither calls the other back.
 */
#ifndef VT_LEASE_H
#define VT_LEASE_H

struct vt_library;
struct vt_lease_keeper;

/* The lease of an in-process run, seconds: VIDTHEQUE_LEASE, 60 by default. */
double vt_lease_default_s(void);
/* Keep the lease of stage of video id, attempt attempts, held by lib->owner, for
 * lease_s seconds at a time. NULL when no thread could be started (the lease then runs
 * out unextended). */
struct vt_lease_keeper *vt_lease_keep(struct vt_library *lib, const char *id, const char *stage,
                                      int attempts, double lease_s);
/* Stop and free k (NULL: nothing). */
void vt_lease_keeper_stop(struct vt_lease_keeper *k);

#endif
