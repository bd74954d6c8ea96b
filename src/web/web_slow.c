/*
 * The routes that may wait on a slow dependency (a search embedding its query on a model
 * server) run on threads of their own, so that they never hold the HTTP pool: the pool
 * thread suspends the connection and queues the job; a slow thread runs the route with its
 * own library handle, its response held rather than queued (web_hold_responses), then
 * resumes the connection; the pool thread, called again, queues the held response. A pool
 * thread serves many connections: were it to run a search that waits on a server, every
 * other request on its connections would wait too (issue 27: GET / waited 177 s).
 */
#include "web/web_http.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    SLOW_THREADS = 4,    /* searches at once; more wait in the queue */
    SLOW_QUEUE_MAX = 64, /* waiting beyond it: 503 at once */
};

/* One request handed over; owned by the request (web_route.c's), freed with it. */
struct web_slow_job {
    enum MHD_Result (*fn)(const struct web_req *r);
    struct web_req r;
    struct web_ctx ctx;
    struct web_held held; /* the response, queued by the pool thread once resumed */
    struct web_slow_job *next;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_cond_t freed; /* signalled when the last live job is freed */
    pthread_t threads[SLOW_THREADS];
    int n_started, stop;
    struct web_slow_job *head, *tail;
    size_t queued;
    size_t live; /* jobs made and not yet freed: their answers not yet sent */
} sp = {.lock = PTHREAD_MUTEX_INITIALIZER,
        .wake = PTHREAD_COND_INITIALIZER,
        .freed = PTHREAD_COND_INITIALIZER};

/* The route, on this slow thread, its response held in job; then the connection resumed
 * (after which job is the request's again, and not touched). */
static void slow_run(struct web_slow_job *job, int stopping)
{
    struct web_req *r = &job->r;

    web_hold_responses(&job->held);
    web_req_ctx_reset();
    *web_req_ctx() = job->ctx;
    web_lib_clear_error();
    if (stopping) {
        web_send_error(r->c, r->api, 503, "busy", "the server is stopping");
    } else {
        r->lib = web_lib();
        if (!r->lib)
            web_send_error(r->c, r->api, 500, "internal", "the library cannot be opened");
        else
            job->fn(r);
    }
    web_hold_responses(NULL);
    MHD_resume_connection(r->c);
}

static void *slow_main(void *arg)
{
    pthread_mutex_lock(&sp.lock);
    for (;;) {
        struct web_slow_job *job = sp.head;

        if (!job && sp.stop)
            break;
        if (!job) {
            pthread_cond_wait(&sp.wake, &sp.lock);
            continue;
        }
        sp.head = job->next;
        if (!sp.head)
            sp.tail = NULL;
        sp.queued--;
        int stopping = sp.stop;
        pthread_mutex_unlock(&sp.lock);
        slow_run(job, stopping);
        pthread_mutex_lock(&sp.lock);
    }
    pthread_mutex_unlock(&sp.lock);
    return arg;
}

int web_slow_start(void)
{
    sp.stop = 0;
    for (int i = 0; i < SLOW_THREADS; i++) {
        if (pthread_create(&sp.threads[i], NULL, slow_main, NULL)) {
            fprintf(stderr, "vidtheque: cannot start the search threads\n");
            web_slow_stop();
            return -1;
        }
        sp.n_started++;
    }
    return 0;
}

void web_slow_stop(void)
{
    pthread_mutex_lock(&sp.lock);
    sp.stop = 1;
    pthread_cond_broadcast(&sp.wake);
    pthread_mutex_unlock(&sp.lock);
    for (int i = 0; i < sp.n_started; i++)
        pthread_join(sp.threads[i], NULL);
    sp.n_started = 0;
}

enum MHD_Result web_slow_run(enum MHD_Result (*fn)(const struct web_req *r),
                             const struct web_req *r, struct web_slow_job **jobp)
{
    struct web_slow_job *job;

    pthread_mutex_lock(&sp.lock);
    if (sp.stop || !sp.n_started || sp.queued >= SLOW_QUEUE_MAX) {
        int stopping = sp.stop || !sp.n_started;

        pthread_mutex_unlock(&sp.lock);
        return web_send_error(r->c, r->api, 503, "busy",
                              stopping ? "the server is stopping"
                                       : "too many searches at once, try again");
    }
    job = calloc(1, sizeof(*job));
    if (!job)
        abort();
    sp.live++;
    job->fn = fn;
    job->r = *r;
    job->ctx = *web_req_ctx();
    *jobp = job;
    MHD_suspend_connection(r->c);
    if (sp.tail)
        sp.tail->next = job;
    else
        sp.head = job;
    sp.tail = job;
    sp.queued++;
    pthread_cond_signal(&sp.wake);
    pthread_mutex_unlock(&sp.lock);
    return MHD_YES;
}

enum MHD_Result web_slow_answer(struct MHD_Connection *c, struct web_slow_job *job)
{
    enum MHD_Result ret;

    if (!job->held.r)
        return MHD_NO; /* the route could not build its answer: the connection closes */
    ret = MHD_queue_response(c, job->held.status, job->held.r);
    MHD_destroy_response(job->held.r);
    job->held.r = NULL;
    return ret;
}

void web_slow_job_free(struct web_slow_job *job)
{
    if (!job)
        return;
    if (job->held.r)
        MHD_destroy_response(job->held.r);
    free(job);
    pthread_mutex_lock(&sp.lock);
    if (!--sp.live)
        pthread_cond_broadcast(&sp.freed);
    pthread_mutex_unlock(&sp.lock);
}

void web_slow_settle(double max_s)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)max_s;
    until.tv_nsec += (long)((max_s - (double)(time_t)max_s) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&sp.lock);
    while (sp.live && pthread_cond_timedwait(&sp.freed, &sp.lock, &until) == 0)
        ;
    pthread_mutex_unlock(&sp.lock);
}
