/*
 * The Prometheus exposition of a process (metrics.h): counters and histograms kept here
 * under one mutex (every thread of a worker or a server adds to them), and the queue read
 * from the database at each scrape. Counters only grow while the process lives; the queue's
 * numbers are gauges. docs/ARCHITECTURE.md, "Metrics and health".
 */
#include "run/metrics.h"

#include "core/library.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds of the histograms' buckets, seconds (+Inf is implied). */
static const double stage_le[] = {0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600};
static const double search_le[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
enum { MAX_LE = 11 };

struct hist {
    unsigned long long n[MAX_LE]; /* observations <= le[i] (each counted in one bucket) */
    unsigned long long count;
    double sum;
};

static const char *const outcomes[] = {"done", "skipped", "retry", "failed", "fenced"};
enum { N_OUTCOMES = sizeof(outcomes) / sizeof(outcomes[0]) };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct hist stage_h[VT_STAGE_COUNT];
static unsigned long long runs[VT_STAGE_COUNT][N_OUTCOMES];
static struct hist search_h;

static void observe(struct hist *h, const double *le, size_t n_le, double v)
{
    size_t i = 0;

    if (!(v >= 0) || !isfinite(v))
        v = 0;
    while (i < n_le && v > le[i])
        i++;
    if (i < n_le)
        h->n[i]++;
    h->count++;
    h->sum += v;
}

void vt_metrics_stage_ran(const char *stage, const char *outcome, double took_s)
{
    int k = vt_stage_find(stage);
    size_t o = 0;

    while (o < N_OUTCOMES && strcmp(outcomes[o], outcome))
        o++;
    if (k < 0 || o == N_OUTCOMES)
        return;
    pthread_mutex_lock(&mu);
    runs[k][o]++;
    observe(&stage_h[k], stage_le, sizeof(stage_le) / sizeof(*stage_le), took_s);
    pthread_mutex_unlock(&mu);
}

void vt_metrics_search(double s)
{
    pthread_mutex_lock(&mu);
    observe(&search_h, search_le, sizeof(search_le) / sizeof(*search_le), s);
    pthread_mutex_unlock(&mu);
}

static void head(struct vt_sb *b, const char *name, const char *type, const char *help)
{
    vt_sb_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: valid UTF-8, with backslash, double quote and newline escaped. */
static void label(struct vt_sb *b, const char *s, size_t max)
{
    char *clean = vt_utf8_clean(s ? s : "");
    size_t n = 0;

    for (const char *p = clean; *p && n < max; p++, n++) {
        if (*p == '\\' || *p == '"')
            vt_sb_addf(b, "\\%c", *p);
        else if (*p == '\n')
            vt_sb_adds(b, "\\n");
        else if ((unsigned char)*p < 0x20)
            vt_sb_adds(b, " ");
        else
            vt_sb_add(b, p, 1);
    }
    free(clean);
}

/* One histogram's series (cumulative buckets, +Inf, sum, count); lbl "" or `stage="x",`. */
static void hist_lines(struct vt_sb *b, const char *name, const char *lbl, const struct hist *h,
                       const double *le, size_t n_le)
{
    unsigned long long cum = 0;

    for (size_t i = 0; i < n_le; i++) {
        cum += h->n[i];
        vt_sb_addf(b, "%s_bucket{%sle=\"%g\"} %llu\n", name, lbl, le[i], cum);
    }
    vt_sb_addf(b, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, lbl, h->count);
    if (lbl[0]) {
        size_t n = strlen(lbl);

        vt_sb_addf(b, "%s_sum{%.*s} %.6f\n%s_count{%.*s} %llu\n", name, (int)n - 1, lbl, h->sum,
                   name, (int)n - 1, lbl, h->count);
    } else {
        vt_sb_addf(b, "%s_sum %.6f\n%s_count %llu\n", name, h->sum, name, h->count);
    }
}

/* The process's own counters and histograms, copied under the mutex. */
static void render_process(struct vt_sb *b)
{
    static struct hist sh[VT_STAGE_COUNT], qh;
    static unsigned long long r[VT_STAGE_COUNT][N_OUTCOMES];
    char lbl[64];

    pthread_mutex_lock(&mu);
    memcpy(sh, stage_h, sizeof(sh));
    memcpy(r, runs, sizeof(r));
    qh = search_h;
    head(b, "vidtheque_stage_runs_total", "counter",
         "Stage runs (attempts) this process ended, by outcome (fenced: result refused).");
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        for (int o = 0; o < N_OUTCOMES; o++)
            vt_sb_addf(b, "vidtheque_stage_runs_total{stage=\"%s\",outcome=\"%s\"} %llu\n",
                       vt_stages[k].name, outcomes[o], r[k][o]);
    head(b, "vidtheque_fenced_results_total", "counter",
         "Results this process computed and the database refused: the stage was taken over.");
    {
        unsigned long long f = 0;

        for (int k = 0; k < VT_STAGE_COUNT; k++)
            f += r[k][N_OUTCOMES - 1];
        vt_sb_addf(b, "vidtheque_fenced_results_total %llu\n", f);
    }
    head(b, "vidtheque_stage_duration_seconds", "histogram",
         "Seconds a stage's run took in this process (computing and saving).");
    for (int k = 0; k < VT_STAGE_COUNT; k++) {
        snprintf(lbl, sizeof(lbl), "stage=\"%s\",", vt_stages[k].name);
        hist_lines(b, "vidtheque_stage_duration_seconds", lbl, &sh[k], stage_le,
                   sizeof(stage_le) / sizeof(*stage_le));
    }
    head(b, "vidtheque_search_duration_seconds", "histogram",
         "Seconds a search took to answer in this process.");
    hist_lines(b, "vidtheque_search_duration_seconds", "", &qh, search_le,
               sizeof(search_le) / sizeof(*search_le));
    pthread_mutex_unlock(&mu);
}

/* Retries pending, by stage and reason (the last error, cut to 120 bytes). */
static int render_retries(struct vt_library *lib, struct vt_sb *b)
{
    struct vt_queue_job *j;
    size_t n;
    int rc = vt_store_queue_jobs(lib->store, VT_JOBS_RETRYING, &j, &n);

    if (rc)
        return rc;
    head(b, "vidtheque_retries_pending", "gauge",
         "Stages queued again after a failure, waiting for their next try, by last error.");
    /* sorted by retry time: group equal (stage, reason) pairs by a scan of the ones seen */
    for (size_t i = 0; i < n; i++) {
        long long c = 0;
        size_t k;

        for (k = 0; k < i; k++)
            if (!strcmp(j[k].stage, j[i].stage) &&
                !strncmp(j[k].error ? j[k].error : "", j[i].error ? j[i].error : "", 120))
                break;
        if (k < i)
            continue; /* counted with its first */
        for (k = i; k < n; k++)
            c += !strcmp(j[k].stage, j[i].stage) &&
                 !strncmp(j[k].error ? j[k].error : "", j[i].error ? j[i].error : "", 120);
        vt_sb_addf(b, "vidtheque_retries_pending{stage=\"%s\",reason=\"", j[i].stage);
        label(b, j[i].error, 120);
        vt_sb_addf(b, "\"} %lld\n", c);
    }
    vt_queue_jobs_free(j, n);
    return 0;
}

/* The queue's gauges, read now. */
static int render_queue(struct vt_library *lib, struct vt_sb *b)
{
    struct vt_queue_count *c;
    size_t n;
    double now = vt_wall_s(), oldest = 0;
    long long depth[VT_STAGE_COUNT][VT_STATE_COUNT] = {{0}}, runnable[VT_STAGE_COUNT] = {0};
    long long running = 0;
    int rc = vt_store_queue_counts(lib->store, now, &c, &n);

    if (!rc)
        rc = vt_store_queue_oldest(lib->store, now, &oldest);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        int k = vt_stage_find(c[i].stage);

        if (k < 0)
            continue;
        depth[k][c[i].state] += c[i].n;
        runnable[k] += c[i].runnable;
    }
    free(c);
    head(b, "vidtheque_queue_stages", "gauge", "Stage rows of the queue, by stage and state.");
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        for (int s = 0; s < VT_STATE_COUNT; s++)
            vt_sb_addf(b, "vidtheque_queue_stages{stage=\"%s\",state=\"%s\"} %lld\n",
                       vt_stages[k].name, vt_state_name(s), depth[k][s]);
    head(b, "vidtheque_queue_runnable", "gauge",
         "Queued stages that may run now (inputs settled, retry due), by stage.");
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        vt_sb_addf(b, "vidtheque_queue_runnable{stage=\"%s\"} %lld\n", vt_stages[k].name,
                   runnable[k]);
    head(b, "vidtheque_running_stages", "gauge", "Stages running now, on any machine.");
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        running += depth[k][VT_STATE_RUNNING];
    vt_sb_addf(b, "vidtheque_running_stages %lld\n", running);
    head(b, "vidtheque_dead_letters", "gauge",
         "Stages failed for good (jobs --failed lists them; redo queues one again), by stage.");
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        vt_sb_addf(b, "vidtheque_dead_letters{stage=\"%s\"} %lld\n", vt_stages[k].name,
                   depth[k][VT_STATE_FAILED]);
    head(b, "vidtheque_oldest_runnable_age_seconds", "gauge",
         "Seconds the longest-waiting runnable stage has been queued (0: none).");
    vt_sb_addf(b, "vidtheque_oldest_runnable_age_seconds %.3f\n",
               oldest > 0 && now > oldest ? now - oldest : 0.0);
    return render_retries(lib, b);
}

int vt_metrics_render(struct vt_library *lib, struct vt_sb *out)
{
    struct vt_sb q = {0};
    int rc = lib ? render_queue(lib, &q) : VT_EUNAVAIL;

    render_process(out);
    head(out, "vidtheque_database_up", "gauge", "1 when this scrape could read the queue.");
    vt_sb_addf(out, "vidtheque_database_up %d\n", rc == 0);
    if (!rc)
        vt_sb_add(out, q.buf, q.len);
    free(q.buf);
    return rc;
}

int vt_metrics_ready(const char *dir, char *why, size_t whylen)
{
    struct vt_library *lib = vt_library_open(dir, VT_OPEN_READ, why, whylen);
    double oldest;
    int rc;

    if (!lib)
        return VT_EUNAVAIL; /* unreachable, or a schema this program does not read */
    rc = vt_store_queue_oldest(lib->store, vt_wall_s(), &oldest);
    if (rc)
        vt_err(why, whylen, rc, "%s", vt_store_errmsg(lib->store));
    vt_library_close(lib);
    return rc;
}
