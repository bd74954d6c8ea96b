/*
 * The heartbeat of a stage run in-process (add, redo, resume, the server's indexer) on a
 * database that machines share: a thread of its own keeps that one lease, with a
 * connection of its own, as a queue worker's heartbeat keeps its threads' (worker.c).
 * docs/ARCHITECTURE.md, "Job queue".
 */
#include "run/lease.h"

#include "base/config.h"
#include "base/util.h"
#include "core/library.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct vt_lease_keeper {
    pthread_t th;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* on CLOCK_MONOTONIC: signalled by vt_lease_keeper_stop */
    int stop;
    char *dir;
    char id[65], stage[32], owner[128];
    int attempts;
    double lease_s;
};

double vt_lease_default_s(void)
{
    const char *env = getenv("VIDTHEQUE_LEASE");
    double v = env && *env ? strtod(env, NULL) : 60;

    return v >= 1 && v <= 86400 ? v : 60;
}

/* One heartbeat with a connection of the keeper's own (opened at the first): 0 when the
 * lease is no longer this run's (settled here, or taken over), else 1, also when the
 * database cannot be reached now (the next beat tries again). */
static int keep_beat(struct vt_lease_keeper *k, struct vt_store **s)
{
    enum vt_lease res = VT_LEASE_HELD;
    char err[512];
    char *url = NULL;

    if (!*s) {
        if (vt_config_db_url(k->dir, &url, err, sizeof(err)) || !url)
            return 1;
        vt_store_open(url, s, err, sizeof(err));
        free(url);
        if (!*s)
            return 1;
    }
    if (vt_store_stage_heartbeat(*s, k->id, k->stage, k->owner, k->attempts,
                                 vt_store_now(*s) + k->lease_s, &res))
        return 1;
    return res == VT_LEASE_HELD;
}

static void *keep_thread(void *p)
{
    struct vt_lease_keeper *k = p;
    struct vt_store *s = NULL;
    double next = vt_monotonic_s() + k->lease_s / 3;

    pthread_mutex_lock(&k->mu);
    while (!k->stop) {
        double now = vt_monotonic_s();
        int held;

        if (now < next) {
            struct timespec ts;

            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_sec += (time_t)(next - now);
            ts.tv_nsec += (long)((next - now - (double)(time_t)(next - now)) * 1e9);
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&k->cv, &k->mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&k->mu);
        held = keep_beat(k, &s);
        pthread_mutex_lock(&k->mu);
        if (!held)
            break; /* the fenced finish says the rest */
        next = vt_monotonic_s() + k->lease_s / 3;
    }
    pthread_mutex_unlock(&k->mu);
    vt_store_close(s);
    return NULL;
}

struct vt_lease_keeper *vt_lease_keep(struct vt_library *lib, const char *id, const char *stage,
                                      int attempts, double lease_s)
{
    struct vt_lease_keeper *k = vt_xcalloc(1, sizeof(*k));
    pthread_condattr_t ca;

    k->dir = vt_xstrdup(lib->dir);
    snprintf(k->id, sizeof(k->id), "%s", id);
    snprintf(k->stage, sizeof(k->stage), "%s", stage);
    snprintf(k->owner, sizeof(k->owner), "%s", lib->owner);
    k->attempts = attempts;
    k->lease_s = lease_s;
    pthread_mutex_init(&k->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&k->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&k->th, NULL, keep_thread, k)) {
        vt_lease_keeper_stop(k);
        return NULL;
    }
    k->started = 1;
    return k;
}

void vt_lease_keeper_stop(struct vt_lease_keeper *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->mu);
    k->stop = 1;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
    if (k->started)
        pthread_join(k->th, NULL);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    free(k->dir);
    free(k);
}
