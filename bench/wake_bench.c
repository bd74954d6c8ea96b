/*
 * Waking idle workers (bench/queue_bench.sh, issue 26): WORKERS threads, each with its
 * own store handle listening as an idle `vidtheque worker` of every stage does (wait for
 * work, then pick until a pick finds nothing, the worker's loop in lib/run/worker.c),
 * while the main thread queues SETTLES one-stage videos one at a time, each only after
 * the last has settled. A woken thread claims and finishes what it picks (the store verbs
 * and transactions of the pipeline's claim and fenced finish, no work). Prints the picks
 * that found nothing per settled stage (issue 26's goal: at most 1) and the wakes per
 * settled stage.
 *   wake_bench DB WORKERS SETTLES
 */
#include "base/util.h"
#include "store/store.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* store.c reaches the PostgreSQL backend weakly: naming it links it in */
int store_pg_open(const char *url, int flags, struct vt_store **out, char *err, size_t errlen);
void *const bench_pg_backend = (void *)store_pg_open;

static const char *db;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long empty, settled, listening;
static int stop;

static void die(const char *what, struct vt_store *s)
{
    fprintf(stderr, "wake_bench: %s: %s\n", what, s ? vt_store_errmsg(s) : "");
    exit(1);
}

static void add(long *v, long d)
{
    pthread_mutex_lock(&mu);
    *v += d;
    pthread_mutex_unlock(&mu);
}

static int stopped(void)
{
    int v;

    pthread_mutex_lock(&mu);
    v = stop;
    pthread_mutex_unlock(&mu);
    return v;
}

/* One pick, and the claim and finish of what it found: 1 ran, 0 found nothing. */
static int one(struct vt_store *s, const char *owner)
{
    char id[65], stage[32];
    struct vt_stage_rec *r = NULL;
    size_t n = 0;
    enum vt_lease res;
    int found = 0;
    double now = vt_wall_s();

    if (vt_store_begin(s) ||
        vt_store_queue_next(s, (1u << VT_STAGE_COUNT) - 1, now, id, stage, &found))
        die("pick", s);
    if (!found) {
        vt_store_rollback(s);
        return 0;
    }
    if (vt_store_stages(s, id, &r, &n) || n != 1 ||
        vt_store_stage_claim(s, id, &r[0], owner, now, now + 60, &res) || res != VT_LEASE_HELD ||
        vt_store_commit(s))
        die("claim", s);
    r[0].attempts++;
    r[0].state = VT_STATE_DONE;
    free(r[0].owner);
    r[0].owner = NULL;
    if (vt_store_begin(s) || vt_store_stage_finish(s, id, &r[0], owner, &res) ||
        res != VT_LEASE_HELD || vt_store_commit(s))
        die("finish", s);
    vt_stage_recs_free(r, n);
    return 1;
}

static void *worker(void *p)
{
    struct vt_store *s;
    char err[512], owner[64];

    if (vt_store_open(db, &s, err, sizeof(err)))
        fprintf(stderr, "wake_bench: %s\n", err), exit(1);
    snprintf(owner, sizeof(owner), "bench:%p", p);
    vt_store_wait_stages(s, (1u << VT_STAGE_COUNT) - 1);
    while (one(s, owner))
        ;                                 /* the first look */
    if (vt_store_wait_work(s, 0.001) < 0) /* starts listening */
        die("wait", s);
    add(&listening, 1);
    while (!stopped()) {
        int rc = vt_store_wait_work(s, 0.2);

        if (rc < 0)
            die("wait", s);
        if (rc == 0)
            continue;
        while (one(s, owner))
            add(&settled, 1);
        add(&empty, 1);
    }
    vt_store_close(s);
    return NULL;
}

/* Whether video id's stage has settled. */
static int settled_yet(struct vt_store *s, const char *id)
{
    struct vt_stage_rec *r = NULL;
    size_t n = 0;
    int done;

    if (vt_store_stages(s, id, &r, &n) || n != 1)
        die("read the stage", s);
    done = r[0].state == VT_STATE_DONE;
    vt_stage_recs_free(r, n);
    return done;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    struct vt_store *s;
    char err[512];
    long workers, settles;
    pthread_t *th;

    if (argc != 4)
        return fprintf(stderr, "usage: wake_bench DB WORKERS SETTLES\n"), 2;
    db = argv[1];
    workers = atol(argv[2]);
    settles = atol(argv[3]);
    if (workers < 1 || workers > 200 || settles < 1)
        return fprintf(stderr, "wake_bench: bad arguments\n"), 2;
    if (vt_store_open(db, &s, err, sizeof(err)))
        return fprintf(stderr, "wake_bench: %s\n", err), 1;
    th = vt_xcalloc((size_t)workers, sizeof(*th));
    for (long i = 0; i < workers; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (;;) { /* every thread listening before the first stage is queued */
        long l;

        pthread_mutex_lock(&mu);
        l = listening;
        pthread_mutex_unlock(&mu);
        if (l == workers)
            break;
        pause_ms(10);
    }
    for (long i = 0; i < settles; i++) {
        struct vt_video_rec v;
        struct vt_stage_rec r;

        memset(&v, 0, sizeof(v));
        memset(&r, 0, sizeof(r));
        snprintf(v.id, sizeof(v.id), "w%07ld", i);
        v.content_key = v.id;
        v.source_kind = "file";
        v.created_at = 1;
        snprintf(r.name, sizeof(r.name), "fetch");
        r.state = VT_STATE_QUEUED;
        if (vt_store_begin(s) || vt_store_video_insert(s, &v) || vt_store_stage_put(s, v.id, &r) ||
            vt_store_commit(s))
            die("queue a stage", s);
        while (!settled_yet(s, v.id))
            pause_ms(2);
    }
    pause_ms(500); /* the wakes of the last settle */
    pthread_mutex_lock(&mu);
    stop = 1;
    pthread_mutex_unlock(&mu);
    for (long i = 0; i < workers; i++)
        pthread_join(th[i], NULL);
    printf("%3ld idle workers, %ld stages settled one at a time: %.2f empty picks per settled"
           " stage\n",
           workers, settled, settled ? (double)empty / (double)settled : 0);
    free(th);
    vt_store_close(s);
    return settled == settles ? 0 : 1;
}
