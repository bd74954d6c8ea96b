/*
 * What a process tells a Prometheus scraper (metrics.c): its own counters and histograms
 * (stage runs by outcome, stage durations, fenced results, search latency), kept in this
 * process from its start, and the queue as the database holds it (depth by stage and state,
 * runnable, running, oldest runnable age, retries pending with their reasons, dead letters),
 * read at each scrape. The text is the Prometheus exposition format, version 0.0.4.
 */
#ifndef VT_METRICS_H
#define VT_METRICS_H

#include "base/util.h"

struct vt_library;

/* A run of stage (its name) ended: outcome "done", "skipped", "retry", "failed" or
 * "fenced" (its result refused: the stage was taken over); took_s its run's seconds. */
void vt_metrics_stage_ran(const char *stage, const char *outcome, double took_s);
/* A search answered in s seconds. */
void vt_metrics_search(double s);

/* Append the exposition to out: the process's metrics, then the queue read through lib
 * (NULL: none). Returns 0, or the store's error code when the queue could not be read (then
 * vidtheque_database_up is 0 and the process's metrics are there still). */
int vt_metrics_render(struct vt_library *lib, struct vt_sb *out);

/* Whether the library in dir is ready for work: its database answers (a fresh connection)
 * and holds the schema this program reads. 0, or an error code with one line in why. */
int vt_metrics_ready(const char *dir, char *why, size_t whylen);

#endif
