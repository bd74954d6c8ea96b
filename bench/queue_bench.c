/*
 * The job queue under load (bench/queue_bench.sh): JOBS one-stage videos queued in a
 * fresh database (SQLite path or PostgreSQL URL), then THREADS threads, each with its own
 * store handle, claim and finish them as a worker does (the same store verbs and
 * transactions as the pipeline's claim and fenced finish, the video's state included),
 * with a stub stage that sleeps SLEEP_MS instead of working. Prints jobs/s and the
 * queue's overhead per job (claim transaction + finishing transaction), p50 and p99.
 *   queue_bench DB JOBS THREADS SLEEP_MS
 */
#include "base/util.h"
#include "store/db/db_pg.h"
#include "store/store_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* store.c reaches the PostgreSQL backend weakly: naming it links it in */
int store_pg_open(const char *url, int flags, struct vt_store **out, char *err, size_t errlen);
void *const bench_pg_backend = (void *)store_pg_open;

static const char *db;
static int sleep_ms;

struct thread {
    pthread_t th;
    double *over; /* seconds of queue overhead per job */
    size_t n, cap;
    long lost, errors;
    /* what the claims and the settles sent: PostgreSQL's round trips, commits */
    unsigned long claim_trips, settle_trips, commits;
};

/* Round trips to the server so far (0 on SQLite). */
static unsigned long trips(const struct vt_store *s)
{
    return s->conn.pg ? s->conn.pg->trips : 0;
}

static void die(const char *what, struct vt_store *s)
{
    fprintf(stderr, "queue_bench: %s: %s\n", what, s ? vt_store_errmsg(s) : "");
    exit(1);
}

static void fill(long jobs)
{
    struct vt_store *s;
    char err[512];

    if (vt_store_open(db, &s, err, sizeof(err)))
        fprintf(stderr, "queue_bench: %s\n", err), exit(1);
    for (long i = 0; i < jobs;) {
        if (vt_store_begin(s))
            die("begin", s);
        for (long k = 0; k < 1000 && i < jobs; k++, i++) {
            struct vt_video_rec v;
            struct vt_stage_rec r;

            memset(&v, 0, sizeof(v));
            memset(&r, 0, sizeof(r));
            snprintf(v.id, sizeof(v.id), "job%07ld", i);
            v.content_key = v.id;
            v.source_kind = "file";
            v.created_at = 1;
            snprintf(r.name, sizeof(r.name), "fetch");
            r.state = VT_STATE_QUEUED;
            if (vt_store_video_insert(s, &v) || vt_store_stage_put(s, v.id, &r))
                die("insert", s);
        }
        if (vt_store_commit(s))
            die("commit", s);
    }
    vt_store_close(s);
}

/* One job as the pipeline runs it: 1 done, 0 none left, -1 lost or failed. */
static int one(struct vt_store *s, const char *owner, struct thread *t)
{
    char id[65], stage[32];
    struct vt_stage_rec *r = NULL;
    size_t n = 0;
    enum vt_lease res;
    int found = 0;
    double t0 = vt_monotonic_s(), now = vt_wall_s(), t1, t2;
    struct timespec ts = {sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000L};
    unsigned long k0 = trips(s), k1, c0 = s->commits;

    if (vt_store_begin(s) || vt_store_queue_next(s, 1u << VT_STAGE_FETCH, now, id, stage, &found))
        goto fail;
    if (!found) {
        vt_store_rollback(s);
        return 0;
    }
    if (vt_store_stages(s, id, &r, &n) || n != 1 ||
        vt_store_stage_claim(s, id, &r[0], owner, now, now + 60, &res) || res != VT_LEASE_HELD ||
        vt_store_video_lock(s, id) ||
        vt_store_video_set_state(s, id, VT_INDEX_PROCESSING, VT_DATA_PARTIAL, 0) ||
        vt_store_commit(s))
        goto fail;
    t1 = vt_monotonic_s();
    k1 = trips(s);
    nanosleep(&ts, NULL); /* the stub stage */
    t2 = vt_monotonic_s();
    r[0].attempts++;
    r[0].state = VT_STATE_DONE;
    free(r[0].owner);
    r[0].owner = NULL;
    if (vt_store_begin(s) || vt_store_stage_lease(s, id, "fetch", owner, r[0].attempts, &res) ||
        res != VT_LEASE_HELD || vt_store_stage_finish(s, id, &r[0], owner, &res) ||
        res != VT_LEASE_HELD || vt_store_video_lock(s, id) ||
        vt_store_video_set_state(s, id, VT_INDEX_READY, VT_DATA_OK, 0) || vt_store_commit(s))
        goto fail;
    vt_grow((void **)&t->over, &t->cap, t->n + 1, sizeof(*t->over));
    t->over[t->n++] = (t1 - t0) + (vt_monotonic_s() - t2);
    t->claim_trips += k1 - k0;
    t->settle_trips += trips(s) - k1;
    t->commits += s->commits - c0;
    vt_stage_recs_free(r, n);
    return 1;
fail:
    vt_store_rollback(s);
    vt_stage_recs_free(r, n);
    t->errors++;
    return -1;
}

static void *worker(void *p)
{
    struct thread *t = p;
    struct vt_store *s;
    char err[512], owner[64];
    int rc, misses = 0;

    if (vt_store_open(db, &s, err, sizeof(err)))
        fprintf(stderr, "queue_bench: %s\n", err), exit(1);
    snprintf(owner, sizeof(owner), "bench:%p", (void *)t);
    while ((rc = one(s, owner, t)) != 0)
        if (rc < 0 && ++misses > 1000)
            die("too many failed claims", s);
    vt_store_close(s);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long jobs, threads;
    struct thread *t;
    double *all, start, wall;
    size_t n = 0;
    long errors = 0;
    unsigned long claim_trips = 0, settle_trips = 0, commits = 0;

    if (argc != 5)
        return fprintf(stderr, "usage: queue_bench DB JOBS THREADS SLEEP_MS\n"), 2;
    db = argv[1];
    jobs = atol(argv[2]);
    threads = atol(argv[3]);
    sleep_ms = atoi(argv[4]);
    if (jobs < 1 || threads < 1 || threads > 1024 || sleep_ms < 0)
        return fprintf(stderr, "queue_bench: bad arguments\n"), 2;
    fill(jobs);
    t = vt_xcalloc((size_t)threads, sizeof(*t));
    start = vt_monotonic_s();
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i].th, NULL, worker, &t[i]);
    for (long i = 0; i < threads; i++)
        pthread_join(t[i].th, NULL);
    wall = vt_monotonic_s() - start;
    all = vt_xcalloc((size_t)jobs + 1, sizeof(*all));
    for (long i = 0; i < threads; i++) {
        memcpy(all + n, t[i].over, t[i].n * sizeof(*all));
        n += t[i].n;
        errors += t[i].errors;
        claim_trips += t[i].claim_trips;
        settle_trips += t[i].settle_trips;
        commits += t[i].commits;
        free(t[i].over);
    }
    qsort(all, n, sizeof(*all), cmp);
    printf("threads %3ld  jobs %7zu  %8.1f jobs/s  overhead p50 %6.2f ms  p99 %6.2f ms  "
           "retried claims %ld",
           threads, n, (double)n / wall, n ? all[(n - 1) / 2] * 1e3 : 0,
           n ? all[(size_t)((double)(n - 1) * 0.99)] * 1e3 : 0, errors);
    /* per stage: round trips of the claim and of the settle (PostgreSQL), commits */
    if (n && (claim_trips || settle_trips))
        printf("  round trips claim %.2f settle %.2f", (double)claim_trips / (double)n,
               (double)settle_trips / (double)n);
    if (n)
        printf("  commits %.2f", (double)commits / (double)n);
    printf("\n");
    free(all);
    free(t);
    return n == (size_t)jobs ? 0 : 1;
}
