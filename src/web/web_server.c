/*
 * web_serve: the HTTP server on libmicrohttpd, with a small pool of threads (each with
 * its own library handle, web_state.c), the indexing thread (web_jobs.c) on a writable
 * server and the connection reaper (web_conn.c). It binds, serves until SIGINT or
 * SIGTERM, then stops them in order: no more requests, the handles closed, the reaper,
 * and the indexing thread given a few seconds to finish.
 */
#include "web/web_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

enum {
    POOL_THREADS = 4,
    /* a connection with no traffic this long is closed (--idle-timeout) */
    IDLE_TIMEOUT_S = 10,
    MAX_PER_IP = 64, /* --max-per-ip; loopback benchmarks raise it */
};

/* The address to bind: both kinds are in *sa, and *ipv6 and *loopback say which and
 * whether it is a loopback one. 0, or -1 after printing why. */
static int parse_bind(const struct web_opts *opts, struct sockaddr_in *sa4,
                      struct sockaddr_in6 *sa6, int *ipv6, int *loopback)
{
    *ipv6 = strchr(opts->bind, ':') != NULL;
    memset(sa4, 0, sizeof(*sa4));
    memset(sa6, 0, sizeof(*sa6));
    if (*ipv6) {
        sa6->sin6_family = AF_INET6;
        sa6->sin6_port = htons((uint16_t)opts->port);
        if (inet_pton(AF_INET6, opts->bind, &sa6->sin6_addr) != 1) {
            fprintf(stderr, "vidtheque: '%s': not an IP address\n", opts->bind);
            return -1;
        }
        *loopback = IN6_IS_ADDR_LOOPBACK(&sa6->sin6_addr);
    } else {
        sa4->sin_family = AF_INET;
        sa4->sin_port = htons((uint16_t)opts->port);
        if (inet_pton(AF_INET, opts->bind, &sa4->sin_addr) != 1) {
            fprintf(stderr, "vidtheque: '%s': not an IP address\n", opts->bind);
            return -1;
        }
        *loopback = (ntohl(sa4->sin_addr.s_addr) >> 24) == 127;
    }
    return 0;
}

static struct MHD_Daemon *start_daemon(const struct web_opts *opts, struct sockaddr *sa, int ipv6)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME |
                     (ipv6 ? MHD_USE_IPv6 : 0);

    return MHD_start_daemon(
        flags, 0, NULL, NULL, web_handler, NULL, MHD_OPTION_SOCK_ADDR, sa,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)POOL_THREADS, MHD_OPTION_CONNECTION_TIMEOUT,
        opts->idle_timeout_s ? opts->idle_timeout_s : (unsigned)IDLE_TIMEOUT_S,
        MHD_OPTION_CONNECTION_LIMIT, web_conns_max(), MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        opts->max_per_ip ? opts->max_per_ip : (unsigned)MAX_PER_IP,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_NOTIFY_CONNECTION,
        web_on_connection, NULL, MHD_OPTION_URI_LOG_CALLBACK, web_on_request_line, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, web_completed, NULL, MHD_OPTION_UNESCAPE_CALLBACK,
        web_unescape, NULL, MHD_OPTION_END);
}

/* Serves on d until SIGINT or SIGTERM (blocked in set), then stops the daemon. */
static void serve_until_signal(struct MHD_Daemon *d, const struct web_opts *opts, int ipv6,
                               sigset_t *set)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    int sig = 0;

    fprintf(stderr, "listening on http://%s%s%s:%u\n", ipv6 ? "[" : "", opts->bind, ipv6 ? "]" : "",
            info ? (unsigned)info->port : opts->port);
    fflush(stderr);
    while (sigwait(set, &sig))
        ;
    fprintf(stderr, "vidtheque: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    web_slow_stop();      /* no connection may stay suspended when the daemon stops */
    web_slow_settle(5.0); /* nor be closed before its answer is sent */
    MHD_stop_daemon(d);
    web_libs_close();
}

int web_serve(const struct web_opts *opts)
{
    struct sockaddr_in sa4;
    struct sockaddr_in6 sa6;
    struct MHD_Daemon *d = NULL;
    sigset_t set;
    int ipv6, loopback = 0;

    web_conns_init(opts->head_timeout_s, opts->deadline_s, opts->max_connections);
    web_sessions_init();
    if (parse_bind(opts, &sa4, &sa6, &ipv6, &loopback))
        return -1;
    web_state_init(opts, loopback);

    /* every thread started from here on inherits this mask: only sigwait sees them */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (!opts->read_only && web_jobs_start(opts->library_dir))
        return -1;
    if (web_conns_start() || web_slow_start())
        goto stop;
    d = start_daemon(opts, ipv6 ? (struct sockaddr *)&sa6 : (struct sockaddr *)&sa4, ipv6);
    if (!d) {
        fprintf(stderr, "vidtheque: '%s' port %u: cannot listen (%s)\n", opts->bind, opts->port,
                strerror(errno));
        goto stop;
    }
    serve_until_signal(d, opts, ipv6, &set);

stop:
    web_slow_stop();
    web_conns_stop();
    if (!opts->read_only)
        web_jobs_stop();
    return d ? 0 : -1;
}
