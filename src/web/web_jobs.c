/*
 * The indexing thread: every write of the server (add, index, redo, retry, remove) is a
 * job queued here and run one at a time, with the thread's own library handle, so that a
 * request thread never waits for FFmpeg or the network. The queue page shows the jobs
 * waiting, the one running and the last ones finished, with why a job failed.
 */
#include "base/util.h"
#include "web/web_http.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    MAX_QUEUE = 256,
    /* the jobs the queue page shows once finished */
    JOB_HISTORY = 32,
    MAX_JOBS = MAX_QUEUE + 1 + JOB_HISTORY, /* waiting, running, finished */
};

struct job {
    enum web_job_kind kind;
    char id[VT_ID_MAX];                     /* the video; an add: the first it registered */
    char stage[32];                         /* WEB_DO_REDO */
    char *arg;                              /* WEB_DO_ADD: the path or URL; owned */
    int state;                              /* WEB_JOB_* */
    size_t n_added;                         /* WEB_DO_ADD: videos registered */
    char error[512];                        /* why it failed */
    double queued_at, started_at, ended_at; /* wall clock; 0: not yet */
};

/* job number n (from 1) is in jobs[(n - 1) % MAX_JOBS]; jobs next_run + 1 to next_no wait,
 * next_run runs or ran (all under lock) */
static struct {
    pthread_mutex_t lock;
    pthread_t worker;
    int worker_started;
    pthread_cond_t wake;
    struct job jobs[MAX_JOBS];
    unsigned long next_no, next_run;
    int stopping;
} srv;

/*
 * Queue a job (arg copied): its number, or 0 when MAX_QUEUE jobs already wait. The slot
 * it takes held a job finished long ago (at most MAX_QUEUE wait and one runs).
 */
unsigned long web_job_enqueue(enum web_job_kind kind, const char *id, const char *stage,
                              const char *arg)
{
    unsigned long no = 0;

    pthread_mutex_lock(&srv.lock);
    if (srv.next_no - srv.next_run < MAX_QUEUE) {
        struct job *j = &srv.jobs[srv.next_no % MAX_JOBS];

        free(j->arg);
        memset(j, 0, sizeof(*j));
        j->kind = kind;
        snprintf(j->id, sizeof(j->id), "%s", id ? id : "");
        snprintf(j->stage, sizeof(j->stage), "%s", stage ? stage : "");
        j->arg = arg ? strdup(arg) : NULL;
        if (arg && !j->arg)
            abort();
        j->state = WEB_JOB_WAITING;
        j->queued_at = vt_wall_s();
        no = ++srv.next_no; /* numbers start at 1 */
        pthread_cond_signal(&srv.wake);
    }
    pthread_mutex_unlock(&srv.lock);
    return no;
}

/* Job number no's slot (under lock). */
static struct job *job_at(unsigned long no)
{
    return &srv.jobs[(no - 1) % MAX_JOBS];
}

/* Job no failed for why, unless a reason was already given. */
static void job_failed(unsigned long no, const char *why)
{
    pthread_mutex_lock(&srv.lock);
    if (!job_at(no)->error[0])
        snprintf(job_at(no)->error, sizeof(job_at(no)->error), "%s", why);
    pthread_mutex_unlock(&srv.lock);
}

/* The videos an add registered, for the worker to index them. */
struct added {
    unsigned long no;
    char (*ids)[VT_ID_MAX];
    size_t n, cap;
};

static int on_added(void *user, const char *id, int is_new)
{
    struct added *a = user;

    (void)is_new;
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->ids = realloc(a->ids, a->cap * sizeof(*a->ids));
        if (!a->ids)
            abort();
    }
    snprintf(a->ids[a->n++], VT_ID_MAX, "%s", id);
    pthread_mutex_lock(&srv.lock);
    if (!job_at(a->no)->id[0])
        snprintf(job_at(a->no)->id, VT_ID_MAX, "%s", id);
    job_at(a->no)->n_added = a->n;
    pthread_mutex_unlock(&srv.lock);
    return 0;
}

/*
 * A URL (yt-dlp asks the network for its metadata: here, never in a request thread) or a
 * server file, then index what it registered. 0, or an error code with the message in lib.
 */
static int job_add(struct vt_library *lib, unsigned long no, const char *what)
{
    struct added a = {.no = no};
    int rc = 0;

    if (vt_is_url(what)) {
        rc = vt_add_url(lib, what, NULL, on_added, &a);
        if (rc)
            job_failed(no, vt_errmsg(lib)); /* the reason, before vt_process says another */
    } else {
        char id[VT_ID_MAX];
        int is_new;

        rc = vt_add_file(lib, what, NULL, id, &is_new);
        if (!rc)
            on_added(&a, id, is_new);
    }
    /* a URL that could not be read now is registered all the same, its fetch to be retried */
    for (size_t i = 0; i < a.n; i++) {
        int prc = vt_process(lib, a.ids[i]);

        if (prc && !rc)
            rc = prc;
    }
    free(a.ids);
    return rc;
}

/* A failed stage (for good, or queued again to be retried later) and its attempts. */
struct failed_stage {
    char name[32];
    long long attempts;
};

/* The video's failed stages into out (at most max): how many, or -1 (lib has why). */
static int failed_stages(struct vt_library *lib, const char *id, struct failed_stage *out,
                         size_t max)
{
    static const struct vt_doc_pages none = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
    json_t *doc, *s;
    size_t i, n = 0;
    int rc;

    doc = web_video_doc(lib, id, &none, &rc);
    if (!doc)
        return -1;
    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        const char *st = json_string_value(json_object_get(s, "state"));
        const char *name = json_string_value(json_object_get(s, "name"));

        if (!st || !name || n == max ||
            !(!strcmp(st, "failed") || (!strcmp(st, "queued") && json_object_get(s, "error") &&
                                        !json_is_null(json_object_get(s, "error")))))
            continue;
        snprintf(out[n].name, sizeof(out[n].name), "%s", name);
        out[n++].attempts = (long long)json_integer_value(json_object_get(s, "attempts"));
    }
    json_decref(doc);
    return (int)n;
}

/*
 * Retry: redo each stage that had failed (what `vidtheque redo` does), in pipeline order,
 * skipping one that an earlier redo already ran again (its attempts grew: it depended on
 * that stage). Nothing failed: the video's unfinished work is run (`resume` for one video).
 */
static int job_retry(struct vt_library *lib, const char *id)
{
    struct failed_stage before[32], now[32];
    int n = failed_stages(lib, id, before, 32), rc = 0;

    if (n < 0)
        return VT_EIO;
    if (!n)
        return vt_process(lib, id);
    for (int i = 0; i < n && !rc; i++) {
        int m = failed_stages(lib, id, now, 32), still = 0;

        for (int k = 0; k < m; k++)
            still |= !strcmp(now[k].name, before[i].name) && now[k].attempts == before[i].attempts;
        if (still)
            rc = vt_redo(lib, id, before[i].name);
    }
    return rc;
}

/*
 * After a job that indexed: VT_ESTATE with why when its video is left failed or partial
 * (a stage failed: the log said which, the video page says why), else 0.
 */
static int job_settled(struct vt_library *lib, unsigned long no)
{
    char id[VT_ID_MAX], state[16], data[16], why[VT_ID_MAX + 96];

    pthread_mutex_lock(&srv.lock);
    memcpy(id, job_at(no)->id, VT_ID_MAX);
    pthread_mutex_unlock(&srv.lock);

    if (!id[0] || vt_video_state(lib, id, state, data) || !strcmp(data, "ok"))
        return 0;
    snprintf(why, sizeof(why), "%s is %s with %s data: a stage failed (its page says why)", id,
             state, data);
    job_failed(no, why);
    return VT_ESTATE;
}

static int job_run(struct vt_library *lib, unsigned long no, const struct job *j)
{
    switch (j->kind) {
    case WEB_DO_INDEX:
        return vt_process(lib, j->id);
    case WEB_DO_ADD:
        return job_add(lib, no, j->arg);
    case WEB_DO_REDO:
        return vt_redo(lib, j->id, j->stage);
    case WEB_DO_RETRY:
        return job_retry(lib, j->id);
    case WEB_DO_REMOVE:
        return vt_remove(lib, j->id);
    }
    return VT_EINVAL;
}

/* Runs the jobs one at a time, with its own handle: every write of the server is here. */
static void *worker_main(void *arg)
{
    struct vt_library *lib = arg;

    for (;;) {
        struct job j;
        char why[sizeof(j.error)];
        unsigned long no;
        int rc;

        pthread_mutex_lock(&srv.lock);
        while (srv.next_run == srv.next_no && !srv.stopping)
            pthread_cond_wait(&srv.wake, &srv.lock);
        if (srv.stopping) {
            pthread_mutex_unlock(&srv.lock);
            break;
        }
        no = ++srv.next_run;
        job_at(no)->state = WEB_JOB_RUNNING;
        job_at(no)->started_at = vt_wall_s();
        j = *job_at(no);
        j.arg = j.arg ? strdup(j.arg) : NULL; /* the slot's stays for the queue page */
        pthread_mutex_unlock(&srv.lock);

        rc = job_run(lib, no, &j);
        free(j.arg);
        if (!rc && j.kind != WEB_DO_REMOVE)
            rc = job_settled(lib, no);
        if (rc)
            job_failed(no, vt_errmsg(lib));
        pthread_mutex_lock(&srv.lock);
        job_at(no)->state = rc ? WEB_JOB_FAILED : WEB_JOB_DONE;
        job_at(no)->ended_at = vt_wall_s();
        memcpy(why, job_at(no)->error, sizeof(why));
        pthread_mutex_unlock(&srv.lock);
        if (rc)
            web_log_error("%s", why);
    }
    vt_library_close(lib);
    return NULL;
}

int web_jobs_start(const char *library_dir)
{
    char err[1024];
    struct vt_callbacks cb = {web_on_log, NULL, NULL};
    struct vt_library *wl;

    memset(&srv, 0, sizeof(srv));
    pthread_mutex_init(&srv.lock, NULL);
    pthread_cond_init(&srv.wake, NULL);
    wl = vt_library_open(library_dir, 0, err, sizeof(err));
    if (!wl) {
        web_log_error("%s", err);
        return -1;
    }
    vt_library_set_callbacks(wl, &cb);
    if (pthread_create(&srv.worker, NULL, worker_main, wl)) {
        vt_library_close(wl);
        fprintf(stderr, "vidtheque: cannot start the indexing thread\n");
        return -1;
    }
    srv.worker_started = 1;
    return 0;
}

void web_jobs_stop(void)
{
    struct timespec until;

    if (!srv.worker_started)
        return;
    pthread_mutex_lock(&srv.lock);
    srv.stopping = 1;
    pthread_cond_signal(&srv.wake);
    pthread_mutex_unlock(&srv.lock);
    /* a video being indexed may take minutes; an interrupted run is resumable */
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    if (pthread_timedjoin_np(srv.worker, NULL, &until))
        fprintf(stderr, "vidtheque: indexing interrupted ('vidtheque resume' finishes it)\n");
}

size_t web_jobs_list(struct web_job **out)
{
    static const char *const what[] = {"index", "add", "redo", "retry", "remove"};
    struct web_job *v = calloc(MAX_JOBS, sizeof(*v));
    size_t n = 0;

    if (!v)
        abort();
    pthread_mutex_lock(&srv.lock);
    for (unsigned long no = srv.next_no; no >= 1 && n < MAX_JOBS; no--, n++) {
        const struct job *j = job_at(no);

        v[n].no = no;
        v[n].what = what[j->kind];
        snprintf(v[n].arg, sizeof(v[n].arg), "%s", j->arg ? j->arg : j->stage);
        memcpy(v[n].id, j->id, VT_ID_MAX);
        v[n].state = j->state;
        v[n].n_added = j->n_added;
        memcpy(v[n].error, j->error, sizeof(v[n].error));
        v[n].queued_at = j->queued_at;
        v[n].started_at = j->started_at;
        v[n].ended_at = j->ended_at;
    }
    pthread_mutex_unlock(&srv.lock);
    *out = v;
    return n;
}
