/*
 * Types shared by stage implementations and the pipeline that runs them.
 * A stage implementation knows nothing of the database: it reads its inputs from
 * arguments and returns its outputs in a result struct that the pipeline stores
 * in one transaction together with the stage's state.
 */
#ifndef VT_STAGE_H
#define VT_STAGE_H

/* Returned (positive) by a stage that cannot run for a legitimate reason; the
 * reason is in its err buffer and the pipeline records the stage as skipped. */
#define VT_SKIP 1

/* Progress callback of a stage: frac in 0..1. */
typedef void (*vt_progress_fn)(void *user, double frac);

#endif
