/*
 * `vidtheque worker`: threads that each open the library (a handle of their own, so a
 * store connection of their own) and run stages of any video from the queue with
 * vt_work_one, the pipeline's own path for one stage; and one heartbeat thread, with
 * its own handle too, that extends the leases of the stages they run every third of
 * the lease. A worker killed at any moment leaves running stages whose lease expires:
 * another worker takes them over then, and the fence (owner and attempt) refuses a
 * late result from the one presumed dead. The lease of a stage run in-process is
 * lease.c's. docs/ARCHITECTURE.md, "Job queue".
 */
#include "base/util.h"
#include "core/library.h"
#include "run/worker_check.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What a stage thread is running, for the heartbeat (one slot per thread). */
struct slot {
    int active;
    char id[65], stage[32], owner[128];
    int attempts;
};

struct worker {
    const struct vt_worker_opts *o;
    char dir[4096];
    unsigned set;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* signalled when a thread ends or a stop is asked */
    struct slot *slots;
    int running; /* stage threads not yet ended */
    struct vt_worker_stats stats;
    double *samples; /* queue overhead per stage run, seconds */
    size_t n_samples, cap_samples;
    int failed; /* a thread could not open the library */
    char err[1024];
    /* the database out of reach (db_trouble): since when (monotonic; 0: reachable),
     * the attempts that failed since, and when it was last said */
    double down_since, down_said;
    long down_attempts;
    int hb_fresh;          /* the heartbeat thread's last call reached the database */
    struct vt_library *hb; /* the heartbeat's handle: says what a thread without one finds */
};

struct thread_arg {
    struct worker *w;
    struct vt_library *lib;
    int k;
};

static void on_claimed(void *user, const char *id, const char *stage, int attempts)
{
    struct thread_arg *a = user;
    struct slot *sl = &a->w->slots[a->k];

    pthread_mutex_lock(&a->w->mu);
    snprintf(sl->id, sizeof(sl->id), "%s", id);
    snprintf(sl->stage, sizeof(sl->stage), "%s", stage);
    snprintf(sl->owner, sizeof(sl->owner), "%s", a->lib->owner);
    sl->attempts = attempts;
    sl->active = 1;
    pthread_mutex_unlock(&a->w->mu);
}

static void on_released(void *user, const char *id, const char *stage, int attempts)
{
    struct thread_arg *a = user;

    (void)id, (void)stage, (void)attempts;
    pthread_mutex_lock(&a->w->mu);
    a->w->slots[a->k].active = 0;
    pthread_mutex_unlock(&a->w->mu);
}

static int stop_level(const struct worker *w)
{
    return w->o->stop ? (int)*w->o->stop : 0;
}

static void db_trouble(struct worker *w, struct vt_library *lib, const char *msg, int fresh);
static double next_backoff(double *backoff_s, unsigned *seed);
static void pause_s(struct worker *w, double s);

/*
 * A handle of the worker's own. A stage thread (retry set) whose database cannot be
 * reached (a worker started, or a thread still opening, as an outage begins) tries again
 * with the back-off of its loop, said once with the other threads' outage, until it
 * opens or a stop is asked; any other failure, or the heartbeat's, ends the worker.
 */
static struct vt_library *open_handle(struct worker *w, int retry)
{
    char err[1024];
    struct vt_library *lib = NULL;
    double backoff_s = 0;
    unsigned seed = (unsigned)getpid() ^ (unsigned)(vt_monotonic_s() * 1e6);
    int rc;

    while ((rc = vt_library_open_rc(w->dir, 0, &lib, err, sizeof(err))) == VT_EUNAVAIL && retry &&
           !stop_level(w)) {
        db_trouble(w, w->hb, err, backoff_s == 0);
        pause_s(w, next_backoff(&backoff_s, &seed));
    }
    if (!lib && rc == VT_EUNAVAIL && retry)
        return NULL; /* stopped while the database was away: nothing to say */
    if (!lib) {
        pthread_mutex_lock(&w->mu);
        if (!w->failed++)
            snprintf(w->err, sizeof(w->err), "%s", err);
        pthread_mutex_unlock(&w->mu);
        return NULL;
    }
    if (w->o->cb)
        vt_library_set_callbacks(lib, w->o->cb);
    if (w->o->fetch)
        vt_library_set_fetch(lib, w->o->fetch);
    lib->lease_s = w->o->lease_s;
    return lib;
}

/* No stage of the worker's set is queued or running anywhere: --drain may end. */
static int drained(struct vt_library *lib, unsigned set)
{
    struct vt_queue_count *c;
    size_t n;
    long long left = 0;

    if (vt_store_queue_counts(lib->store, vt_store_now(lib->store), &c, &n))
        return 0;
    for (size_t i = 0; i < n; i++) {
        int k = vt_stage_find(c[i].stage);

        if (k >= 0 && (set & (1u << k)) &&
            (c[i].state == VT_STATE_QUEUED || c[i].state == VT_STATE_RUNNING))
            left += c[i].n;
    }
    free(c);
    return left == 0;
}

static void add_sample(struct worker *w, double s)
{
    pthread_mutex_lock(&w->mu);
    vt_grow((void **)&w->samples, &w->cap_samples, w->n_samples + 1, sizeof(*w->samples));
    w->samples[w->n_samples++] = s;
    pthread_mutex_unlock(&w->mu);
}

/* Sleep s seconds, in slices short enough that a stop is seen within a fifth of one. */
static void pause_s(struct worker *w, double s)
{
    double end = vt_monotonic_s() + s, left;

    while (!stop_level(w) && (left = end - vt_monotonic_s()) > 0) {
        struct timespec ts = {0, (long)((left < 0.2 ? left : 0.2) * 1e9)};

        nanosleep(&ts, NULL);
    }
}

/* Wait up to s seconds for work, in slices short enough that a stop signal is seen
 * within a fifth of a second (the signal cannot cut the wait itself short); an idle
 * worker told to stop leaves at once instead of after its whole wait. */
static void idle_wait(struct worker *w, struct vt_library *lib, double s)
{
    double end = vt_monotonic_s() + s, left;

    while (!stop_level(w) && (left = end - vt_monotonic_s()) > 0) {
        int rc = vt_store_wait_work(lib->store, left < 0.2 ? left : 0.2);

        if (rc > 0)
            break; /* woken: the caller looks again */
        if (rc < 0) {
            /* the database away: the caller's next look says so; no spinning here */
            pause_s(w, left);
            break;
        }
    }
}

/*
 * The database could not be reached (rc VT_EUNAVAIL) by one of the threads: said once
 * when it goes away and then once a minute with the attempts so far, not once per
 * attempt (the threads of an idle worker would write a line each a few times a second
 * for as long as an outage lasts).
 */
static void db_trouble(struct worker *w, struct vt_library *lib, const char *msg, int fresh)
{
    double now = vt_monotonic_s();
    int first, again;
    long attempts;

    pthread_mutex_lock(&w->mu);
    /* only a caller whose last call reached the database starts an outage: one still
     * backing off from the last outage (its connection not yet tried again) while
     * another thread already found the database back is not a new one */
    if (w->down_since == 0 && !fresh) {
        pthread_mutex_unlock(&w->mu);
        return;
    }
    first = w->down_since == 0;
    if (first)
        w->down_since = w->down_said = now;
    again = !first && now - w->down_said >= 60;
    if (again)
        w->down_said = now;
    attempts = ++w->down_attempts;
    pthread_mutex_unlock(&w->mu);
    if (first)
        vt_log(lib, VT_LOG_ERROR, "%s (trying again with back-off; said again when it is back)",
               msg);
    else if (again)
        vt_log(lib, VT_LOG_ERROR, "database still unavailable after %.0f s (%ld attempts): %s",
               now - w->down_since, attempts, msg);
}

/* A thread reached the database: the end of an outage db_trouble said, when there was one. */
static void db_fine(struct worker *w, struct vt_library *lib)
{
    double since;
    long attempts;

    pthread_mutex_lock(&w->mu);
    since = w->down_since;
    attempts = w->down_attempts;
    w->down_since = 0;
    w->down_attempts = 0;
    pthread_mutex_unlock(&w->mu);
    if (since > 0)
        vt_log(lib, VT_LOG_INFO, "database back after %.1f s (%ld failed attempts)",
               vt_monotonic_s() - since, attempts);
}

/* The next back-off after a failure: doubling from 0.25 s up to 5 s, and the wait drawn
 * between half and all of it (the threads and workers do not retry in step). */
static double next_backoff(double *backoff_s, unsigned *seed)
{
    double d = *backoff_s > 0 ? *backoff_s * 2 : 0.25;

    *backoff_s = d > 5 ? 5 : d;
    return *backoff_s * (0.5 + 0.5 * (double)rand_r(seed) / RAND_MAX);
}

static void *stage_thread(void *p)
{
    struct thread_arg *a = p;
    struct worker *w = a->w;
    struct vt_library *lib = open_handle(w, 1);
    long ran = 0, errors = 0;
    double backoff_s = 0;
    unsigned seed = (unsigned)getpid() ^ (unsigned)(vt_monotonic_s() * 1e6) ^ (unsigned)a->k;

    a->lib = lib;
    if (lib) {
        lib->job.claimed = on_claimed;
        lib->job.released = on_released;
        lib->job.user = a;
        /* a notification for stages this worker does not run leaves it waiting */
        vt_store_wait_stages(lib->store, w->set);
    }
    while (lib && !stop_level(w)) {
        double q0 = lib->queue_s;
        int did, rc = vt_work_one(lib, w->set, &did);

        if (rc == VT_EUNAVAIL) {
            /* the database away: said once, tried again with a growing wait */
            db_trouble(w, lib, vt_errmsg(lib), backoff_s == 0);
            errors++;
            pause_s(w, next_backoff(&backoff_s, &seed));
            continue;
        }
        if (rc) {
            /* a video removed under us and the like: say it, wait, carry on */
            vt_log(lib, VT_LOG_ERROR, "%s", vt_errmsg(lib));
            errors++;
            idle_wait(w, lib, 1.0);
            continue;
        }
        backoff_s = 0;
        db_fine(w, lib);
        if (did == 1) {
            ran++;
            add_sample(w, lib->queue_s - q0);
        } else if (did == 0) {
            if (w->o->drain && drained(lib, w->set))
                break;
            idle_wait(w, lib, w->o->idle_s > 0 ? w->o->idle_s : 1.0);
        } else {
            vt_store_wait_work(lib->store, 0.05);
        }
    }
    pthread_mutex_lock(&w->mu);
    w->stats.ran += ran;
    w->stats.errors += errors;
    if (lib) {
        w->stats.fenced += lib->fenced;
        w->stats.queue_s += lib->queue_s;
    }
    w->running--;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    vt_library_close(lib);
    return NULL;
}

/* Give back every stage the threads hold (a second stop signal: leave now). */
static void give_back_all(struct worker *w, struct vt_library *hb)
{
    for (int k = 0; k < w->o->concurrency; k++) {
        struct slot sl;
        enum vt_lease res;

        pthread_mutex_lock(&w->mu);
        sl = w->slots[k];
        pthread_mutex_unlock(&w->mu);
        if (!sl.active)
            continue;
        if (!vt_store_stage_give_back(hb->store, sl.id, sl.stage, sl.owner, sl.attempts, &res) &&
            res == VT_LEASE_HELD)
            vt_log(hb, VT_LOG_INFO, "%s: %s given back", sl.id, sl.stage);
    }
}

/* A heartbeat found the stage not held: warn when another run has it (the stage may
 * also have just settled here, between the slot's read and the heartbeat). */
static void say_lost(struct vt_library *hb, const struct slot *sl)
{
    struct vt_stage_rec *r;
    size_t n;

    if (vt_store_stages(hb->store, sl->id, &r, &n))
        return;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, sl->stage) && r[i].state == VT_STATE_RUNNING &&
            (r[i].attempts != sl->attempts || !r[i].owner || strcmp(r[i].owner, sl->owner)))
            vt_log(hb, VT_LOG_WARN, "%s: %s: lease lost: attempt %d taken over by %s", sl->id,
                   sl->stage, sl->attempts, r[i].owner ? r[i].owner : "?");
    vt_stage_recs_free(r, n);
}

/* Extend the lease of every running stage; warn of one taken over meanwhile. */
static void beat(struct worker *w, struct vt_library *hb)
{
    for (int k = 0; k < w->o->concurrency; k++) {
        struct slot sl;
        enum vt_lease res;
        int rc;

        pthread_mutex_lock(&w->mu);
        sl = w->slots[k];
        pthread_mutex_unlock(&w->mu);
        if (!sl.active)
            continue;
        rc = vt_store_stage_heartbeat(hb->store, sl.id, sl.stage, sl.owner, sl.attempts,
                                      vt_store_now(hb->store) + w->o->lease_s, &res);
        if (rc == VT_EUNAVAIL) /* said once for the whole worker, however long it lasts */
            db_trouble(w, hb, vt_store_errmsg(hb->store), w->hb_fresh);
        w->hb_fresh = rc != VT_EUNAVAIL;
        if (rc && rc != VT_EUNAVAIL)
            vt_log(hb, VT_LOG_WARN, "heartbeat: %s", vt_store_errmsg(hb->store));
        else if (res != VT_LEASE_HELD)
            say_lost(hb, &sl);
        pthread_mutex_lock(&w->mu);
        w->stats.heartbeats++;
        pthread_mutex_unlock(&w->mu);
    }
}

/*
 * Register the worker, or extend its registration's lease (store.h, "Workers"): beside
 * the stages' own leases, so that `migrate` sees a worker that holds no stage yet.
 * A failure is said, not fatal: the next heartbeat tries again.
 */
static void register_beat(struct worker *w, struct vt_library *hb, struct vt_worker_rec *me)
{
    int rc;

    me->seen_at = vt_wall_s();
    me->lease_until = me->seen_at + w->o->lease_s;
    rc = vt_store_worker_beat(hb->store, me);
    if (rc == VT_EUNAVAIL)
        db_trouble(w, hb, vt_store_errmsg(hb->store), w->hb_fresh);
    w->hb_fresh = rc != VT_EUNAVAIL;
    if (rc && rc != VT_EUNAVAIL)
        vt_log(hb, VT_LOG_WARN, "register the worker: %s", vt_store_errmsg(hb->store));
}

/* The registration's row for this process: its name (the heartbeat handle's owner). */
static void worker_rec(struct worker *w, struct vt_library *hb, struct vt_worker_rec *me)
{
    struct vt_sb sb = {0};

    memset(me, 0, sizeof(*me));
    snprintf(me->owner, sizeof(me->owner), "%s", hb->owner);
    if (gethostname(me->host, sizeof(me->host) - 1))
        snprintf(me->host, sizeof(me->host), "?");
    me->pid = (long long)getpid();
    for (int k = 0; k < VT_STAGE_COUNT && w->o->stages; k++)
        if (w->set & (1u << k))
            vt_sb_addf(&sb, "%s%s", sb.len ? "," : "", vt_stages[k].name);
    snprintf(me->stages, sizeof(me->stages), "%s", sb.buf ? sb.buf : "");
    vt_sb_release(&sb);
    me->started_at = vt_wall_s();
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void finish_stats(struct worker *w)
{
    if (w->n_samples) {
        qsort(w->samples, w->n_samples, sizeof(*w->samples), cmp_double);
        w->stats.overhead_p50_s = w->samples[(w->n_samples - 1) / 2];
        w->stats.overhead_p99_s = w->samples[(size_t)((double)(w->n_samples - 1) * 0.99)];
    }
}

int vt_worker_run(const char *dir, const struct vt_worker_opts *o, struct vt_worker_stats *stats,
                  char *err, size_t errlen)
{
    struct worker w;
    struct thread_arg *args;
    pthread_t *th;
    struct vt_library *hb;
    struct vt_worker_rec me;
    int rc = 0, gave_back = 0, started = 0;
    double next_beat = 0, stop_at = 0;

    memset(&w, 0, sizeof(w));
    memset(stats, 0, sizeof(*stats));
    w.o = o;
    w.hb_fresh = 1;
    snprintf(w.dir, sizeof(w.dir), "%s", dir);
    w.set = o->stages ? o->stages : (1u << VT_STAGE_COUNT) - 1;
    if (o->concurrency < 1 || o->concurrency > 256 || !(o->lease_s >= 1))
        return vt_err(err, errlen, VT_EINVAL, "worker: concurrency 1 to 256, lease >= 1 s");
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    hb = w.hb = open_handle(&w, 0);
    if (!hb) {
        rc = vt_err(err, errlen, VT_EIO, "%s", w.err);
        goto out;
    }
    if (vt_worker_check_here(hb, w.set)) {
        rc = vt_err(err, errlen, VT_EIO, "worker: this machine cannot work on '%s' (said above)",
                    dir);
        goto out;
    }
    worker_rec(&w, hb, &me);
    register_beat(&w, hb, &me);
    w.slots = vt_xcalloc((size_t)o->concurrency, sizeof(*w.slots));
    args = vt_xcalloc((size_t)o->concurrency, sizeof(*args));
    th = vt_xcalloc((size_t)o->concurrency, sizeof(*th));
    for (int k = 0; k < o->concurrency; k++) {
        args[k] = (struct thread_arg){&w, NULL, k};
        pthread_mutex_lock(&w.mu);
        w.running++;
        pthread_mutex_unlock(&w.mu);
        if (pthread_create(&th[k], NULL, stage_thread, &args[k])) {
            pthread_mutex_lock(&w.mu);
            w.running--;
            pthread_mutex_unlock(&w.mu);
            break;
        }
        started++;
    }
    /* the owner names are the threads' handles': the heartbeat reads them from slots */
    pthread_mutex_lock(&w.mu);
    while (w.running > 0) {
        struct timespec ts;

        /* a stop signal cannot signal the condition: look every 200 ms (the heartbeat
         * itself goes every third of the lease) */
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w.cv, &w.mu, &ts);
        pthread_mutex_unlock(&w.mu);
        if (stop_level(&w) >= 1 && stop_at == 0)
            stop_at = vt_monotonic_s();
        /* the grace is over: what still runs goes back to the queue, not lost */
        if (stop_level(&w) >= 2 ||
            (stop_at > 0 && o->grace_s > 0 && vt_monotonic_s() - stop_at >= o->grace_s)) {
            give_back_all(&w, hb);
            vt_store_worker_gone(hb->store, me.owner);
            gave_back = 1;
            pthread_mutex_lock(&w.mu);
            break;
        }
        if (vt_monotonic_s() >= next_beat) {
            register_beat(&w, hb, &me);
            beat(&w, hb);
            next_beat = vt_monotonic_s() + o->lease_s / 3;
        }
        pthread_mutex_lock(&w.mu);
    }
    pthread_mutex_unlock(&w.mu);
    if (!gave_back)
        for (int k = 0; k < started; k++)
            pthread_join(th[k], NULL);
    pthread_mutex_lock(&w.mu);
    finish_stats(&w);
    *stats = w.stats;
    if (w.failed && !rc)
        rc = vt_err(err, errlen, VT_EIO, "%s", w.err);
    pthread_mutex_unlock(&w.mu);
    /* given back: the stage threads still run; the caller ends the process at once */
    if (gave_back)
        return rc ? rc : 1;
    free(th);
    free(args);
    vt_store_worker_gone(hb->store, me.owner);
out:
    vt_library_close(hb);
    free(w.slots);
    free(w.samples);
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
    return rc;
}
