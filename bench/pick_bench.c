/*
 * The pick of a worker limited to some stages (bench/queue_bench.sh, issue 26): STAGES
 * queued stage rows (STAGES / 7 videos, every stage of each queued, so each video's
 * fetch is runnable and nothing else) in a fresh database (SQLite path or PostgreSQL
 * URL), then PICKS picks of a `--stages stt` worker, each in its own transaction as the
 * worker's step runs it: first with nothing runnable for it, then with one video's stt
 * inputs settled, that video the last in the queue's order. Prints the median and p99 of
 * each, in ms, and beside them an unlimited worker's pick (its first row runnable at once).
 *   pick_bench DB STAGES PICKS
 */
#include "base/util.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* store.c reaches the PostgreSQL backend weakly: naming it links it in */
int store_pg_open(const char *url, int flags, struct vt_store **out, char *err, size_t errlen);
void *const bench_pg_backend = (void *)store_pg_open;

static void die(const char *what, struct vt_store *s)
{
    fprintf(stderr, "pick_bench: %s: %s\n", what, s ? vt_store_errmsg(s) : "");
    exit(1);
}

static void put(struct vt_store *s, const char *id, const char *name, enum vt_state state)
{
    struct vt_stage_rec r;

    memset(&r, 0, sizeof(r));
    snprintf(r.name, sizeof(r.name), "%s", name);
    r.state = state;
    if (vt_store_stage_put(s, id, &r))
        die("put a stage", s);
}

static void fill(struct vt_store *s, long videos)
{
    for (long i = 0; i < videos;) {
        if (vt_store_begin(s))
            die("begin", s);
        for (long k = 0; k < 500 && i < videos; k++, i++) {
            struct vt_video_rec v;

            memset(&v, 0, sizeof(v));
            snprintf(v.id, sizeof(v.id), "v%07ld", i);
            v.content_key = v.id;
            v.source_kind = "file";
            v.created_at = 1;
            if (vt_store_video_insert(s, &v))
                die("insert", s);
            for (int j = 0; j < VT_STAGE_COUNT; j++)
                put(s, v.id, vt_stages[j].name, VT_STATE_QUEUED);
        }
        if (vt_store_commit(s))
            die("commit", s);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* PICKS picks of stage set set: median and p99 in ms; *found what the last one found. */
static void picks(struct vt_store *s, unsigned set, long n, double *p50, double *p99, int *found)
{
    double *t = vt_xcalloc((size_t)n, sizeof(*t));
    char id[65], stage[32];

    for (long i = 0; i < n; i++) {
        double t0 = vt_monotonic_s();

        if (vt_store_begin(s) || vt_store_queue_next(s, set, vt_wall_s(), id, stage, found))
            die("pick", s);
        vt_store_rollback(s);
        t[i] = vt_monotonic_s() - t0;
    }
    qsort(t, (size_t)n, sizeof(*t), cmp);
    *p50 = t[(n - 1) / 2] * 1e3;
    *p99 = t[(size_t)((double)(n - 1) * 0.99)] * 1e3;
    free(t);
}

int main(int argc, char **argv)
{
    struct vt_store *s;
    char err[512], last[32];
    long stages, n, videos;
    double e50, e99, f50, f99, a50, a99;
    int ef, ff, af;

    if (argc != 4)
        return fprintf(stderr, "usage: pick_bench DB STAGES PICKS\n"), 2;
    stages = atol(argv[2]);
    n = atol(argv[3]);
    videos = stages / VT_STAGE_COUNT;
    if (videos < 1 || n < 1)
        return fprintf(stderr, "pick_bench: bad arguments\n"), 2;
    if (vt_store_open(argv[1], &s, err, sizeof(err)))
        return fprintf(stderr, "pick_bench: %s\n", err), 1;
    fill(s, videos);
    picks(s, VT_BIT(STT), n, &e50, &e99, &ef);
    snprintf(last, sizeof(last), "v%07ld", videos - 1);
    if (vt_store_begin(s))
        die("begin", s);
    put(s, last, "fetch", VT_STATE_DONE);
    put(s, last, "keyframe", VT_STATE_DONE);
    put(s, last, "ocr", VT_STATE_DONE);
    if (vt_store_commit(s))
        die("commit", s);
    picks(s, VT_BIT(STT), n, &f50, &f99, &ff);
    picks(s, (1u << VT_STAGE_COUNT) - 1, n, &a50, &a99, &af);
    printf("%7ld stages  --stages stt: none runnable p50 %7.3f ms p99 %7.3f ms;"
           " the last video's p50 %7.3f ms p99 %7.3f ms;  all stages p50 %7.3f ms p99 %7.3f ms\n",
           videos * VT_STAGE_COUNT, e50, e99, f50, f99, a50, a99);
    vt_store_close(s);
    return ef || !ff || !af ? 1 : 0; /* the picks found what they should */
}
