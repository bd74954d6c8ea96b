/*
 * worker: run stages of any video from the library's queue (lib/run/worker.c), until
 * stopped (what the queue holds: cmd_jobs.c). docs/ARCHITECTURE.md, "Job queue".
 *
 * Stopping: the first SIGTERM or SIGINT stops claiming and lets the running stages
 * finish and commit (a stage cannot be interrupted halfway without losing its work,
 * and most take seconds) for at most --grace seconds (60; 0: no limit); then, or at a
 * second signal, their leases are given back (queued again, the attempt not counted)
 * and the worker exits at once. Either way the exit status is 0.
 *
 * --metrics-port N serves /metrics, /healthz and /readyz (src/web/web_metrics.c) on
 * 127.0.0.1 (--metrics-bind ADDR for another address) while the worker runs.
 */
#include "cli/cli.h"
#include "web/web.h"

#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int stop_level;

static void on_log(void *user, int level, const char *msg)
{
    (void)user;
    if (cli_opts.quiet && level > VT_LOG_ERROR)
        return;
    cli_info("%s%s",
             level == VT_LOG_ERROR  ? "error: "
             : level == VT_LOG_WARN ? "warning: "
                                    : "",
             msg);
}

/* Takes the stop signals (blocked in every other thread): each one moves a level up. */
static void *signal_thread(void *p)
{
    sigset_t *set = p;

    for (;;) {
        int sig;

        if (sigwait(set, &sig))
            continue;
        if (stop_level < 2)
            stop_level++;
        if (!cli_opts.quiet)
            cli_info(stop_level == 1 ? "worker: stopping: finishing the running stages "
                                       "(until the grace is over; again: give them back and "
                                       "exit now)"
                                     : "worker: giving the running stages back");
    }
    return NULL;
}

int cmd_worker(int argc, char **argv)
{
    static const struct option longs[] = {{"stages", required_argument, NULL, 's'},
                                          {"concurrency", required_argument, NULL, 'c'},
                                          {"lease", required_argument, NULL, 'l'},
                                          {"drain", no_argument, NULL, 'd'},
                                          {"stats", no_argument, NULL, 'S'},
                                          {"grace", required_argument, NULL, 'g'},
                                          {"metrics-port", required_argument, NULL, 'm'},
                                          {"metrics-bind", required_argument, NULL, 'b'},
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct vt_callbacks cb = {on_log, NULL, NULL};
    struct vt_worker_opts o = {
        .concurrency = 1, .lease_s = 60, .grace_s = 60, .stop = &stop_level, .cb = &cb};
    struct vt_worker_stats st;
    struct cli_opt g;
    char dir[PATH_MAX], err[1024];
    static sigset_t set;
    pthread_t sig_th;
    const char *metrics_bind = "127.0.0.1";
    struct web_metrics *metrics = NULL;
    int c, rc, stats = 0;
    long n, metrics_port = -1;

    cli_opt_init(&g, "worker", argc, argv, "L:q", longs);
    while ((c = cli_opt_next(&g)) != -1) {
        if (c == '?')
            return EXIT_USAGE;
        if (c == 'L')
            cli_opts.library = optarg;
        else if (c == 'q')
            cli_opts.quiet = 1;
        else if (c == 'd')
            o.drain = 1;
        else if (c == 'S')
            stats = 1;
        else if (c == 's' && vt_stage_set_parse(optarg, &o.stages, err, sizeof(err)))
            return cli_usage_error("worker", "--stages: %s", err);
        else if (c == 'c' && !cli_parse_long(optarg, 1, 256, &n))
            o.concurrency = (int)n;
        else if (c == 'l' && !cli_parse_long(optarg, 1, 86400, &n))
            o.lease_s = (double)n;
        else if (c == 'b')
            metrics_bind = optarg;
        else if (c == 'm' && !cli_parse_long(optarg, 0, 65535, &n))
            metrics_port = n;
        else if (c == 'm')
            return cli_opt_bad_value(&g, c, "a port, 0 to 65535 (0: any free one)");
        else if (c == 'g' && !cli_parse_long(optarg, 0, 86400, &n))
            o.grace_s = (double)n;
        else if (c == 'c')
            return cli_opt_bad_value(&g, c, "a number, 1 to 256");
        else if (c == 'g')
            return cli_opt_bad_value(&g, c, "seconds, 0 to 86400");
        else if (c == 'l')
            return cli_opt_bad_value(&g, c, "seconds, 1 to 86400");
    }
    if (optind != argc)
        return cli_usage_error("worker", "unexpected argument '%s'", argv[optind]);
    if (vt_library_default_dir(cli_opts.library, dir, sizeof(dir)))
        return cli_error("cannot tell where the library is: use -L DIR or set VIDTHEQUE_LIBRARY");
    o.fetch = &cli_opts.fetch;
    o.idle_s = 2;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (pthread_create(&sig_th, NULL, signal_thread, &set))
        return cli_error("cannot start the signal thread");
    pthread_detach(sig_th);
    signal(SIGPIPE, SIG_IGN);
    if (metrics_port >= 0) {
        metrics = web_metrics_start(dir, metrics_bind, (unsigned)metrics_port);
        if (!metrics)
            return EXIT_ERR;
    }
    rc = vt_worker_run(dir, &o, &st, err, sizeof(err));
    if (rc <= 0)
        web_metrics_stop(metrics); /* given back (rc 1): the process ends at once below */
    if (rc < 0)
        return cli_error("%s", err);
    if (stats || !cli_opts.quiet)
        cli_info("worker: %ld stage run(s), %ld late result(s) refused, %ld error(s)", st.ran,
                 st.fenced, st.errors);
    if (stats)
        cli_info("worker: queue overhead per stage run: p50 %.2f ms, p99 %.2f ms, total %.3f s",
                 st.overhead_p50_s * 1e3, st.overhead_p99_s * 1e3, st.queue_s);
    if (rc > 0) {
        /* leases given back while stage threads still run: leave without waiting */
        fflush(NULL);
        _exit(EXIT_OK);
    }
    return EXIT_OK;
}
