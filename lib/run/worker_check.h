/*
 * A worker's checks of this machine before its first claim (worker_check.c): the
 * library's folders read and written here, the configured models of its stages here.
 */
#ifndef VT_WORKER_CHECK_H
#define VT_WORKER_CHECK_H

struct vt_library;

/* Check what the stages of set (a bit per enum vt_stage_id) need on this machine, logging
 * one line per problem through lib. Returns how many problems stop the worker (a folder
 * it cannot read and write, a config it cannot read); a missing model is only said. */
int vt_worker_check_here(struct vt_library *lib, unsigned set);

#endif
