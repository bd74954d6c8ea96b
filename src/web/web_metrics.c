/*
 * /metrics (the Prometheus text of lib/run/metrics.c), /healthz (the process answers) and
 * /readyz (the library's database answers a fresh connection with the schema this program
 * reads: 200, else 503 with the reason): on `serve`, ahead of every other route (they need
 * no session and answer when the library cannot be opened), and on a worker's own small
 * server (`worker --metrics-port N`, one thread, loopback unless told otherwise).
 */
#include "run/metrics.h"
#include "web/web_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static const char text_type[] = "text/plain; version=0.0.4; charset=utf-8";

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *s)
{
    struct vt_sb b = {0};

    vt_sb_adds(&b, s);
    vt_sb_adds(&b, "\n");
    return web_send_buf(c, status, text_type, &b);
}

static enum MHD_Result send_metrics(struct MHD_Connection *c, struct vt_library *lib)
{
    struct vt_sb b = {0};

    vt_metrics_render(lib, &b);
    return web_send_buf(c, 200, text_type, &b);
}

static enum MHD_Result send_ready(struct MHD_Connection *c, const char *dir)
{
    char why[1024];

    if (vt_metrics_ready(dir, why, sizeof(why)))
        return send_text(c, 503, why);
    return send_text(c, 200, "ready");
}

/* Which of the three url is: 1 /metrics, 2 /healthz, 3 /readyz, 0 none. */
static int which(const char *url)
{
    return !strcmp(url, "/metrics")   ? 1
           : !strcmp(url, "/healthz") ? 2
           : !strcmp(url, "/readyz")  ? 3
                                      : 0;
}

int web_health_route(struct MHD_Connection *c, const char *url, const char *method,
                     enum MHD_Result *ret)
{
    int w = which(url);

    if (!w || (strcmp(method, "GET") && strcmp(method, "HEAD")))
        return 0;
    if (w == 1)
        *ret = send_metrics(c, web_lib());
    else if (w == 2)
        *ret = send_text(c, 200, "ok");
    else
        *ret = send_ready(c, web_opts()->library_dir);
    return 1;
}

/* ---- a worker's metrics server ---- */

struct web_metrics {
    struct MHD_Daemon *d;
    char *dir;
    struct vt_library *lib; /* opened at the first scrape, again after a failure */
};

static enum MHD_Result metrics_handler(void *cls, struct MHD_Connection *c, const char *url,
                                       const char *method, const char *version,
                                       const char *upload_data, size_t *upload_data_size,
                                       void **con_cls)
{
    struct web_metrics *m = cls;
    char err[1024];
    int w = which(url);

    if (!*con_cls) { /* the head: wait for the (ignored) body's end */
        *con_cls = m;
        return MHD_YES;
    }
    if (*upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return send_text(c, 405, "GET only");
    if (!w)
        return send_text(c, 404, "nothing here: /metrics, /healthz, /readyz");
    if (w == 2)
        return send_text(c, 200, "ok");
    if (w == 3)
        return send_ready(c, m->dir);
    if (!m->lib)
        m->lib = vt_library_open(m->dir, VT_OPEN_READ, err, sizeof(err));
    {
        enum MHD_Result r;
        struct vt_sb b = {0};

        if (vt_metrics_render(m->lib, &b) && m->lib) {
            vt_library_close(m->lib); /* a connection gone bad: a fresh one next time */
            m->lib = NULL;
        }
        r = web_send_buf(c, 200, text_type, &b);
        return r;
    }
}

struct web_metrics *web_metrics_start(const char *library_dir, const char *bind, unsigned port)
{
    struct web_metrics *m = vt_xcalloc(1, sizeof(*m));
    struct sockaddr_in sa4 = {0};
    struct sockaddr_in6 sa6 = {0};
    int ipv6 = strchr(bind, ':') != NULL;
    const union MHD_DaemonInfo *info;

    if (ipv6) {
        sa6.sin6_family = AF_INET6;
        sa6.sin6_port = htons((uint16_t)port);
        ipv6 = inet_pton(AF_INET6, bind, &sa6.sin6_addr) == 1 ? 1 : -1;
    } else {
        sa4.sin_family = AF_INET;
        sa4.sin_port = htons((uint16_t)port);
        ipv6 = inet_pton(AF_INET, bind, &sa4.sin_addr) == 1 ? 0 : -1;
    }
    if (ipv6 < 0) {
        fprintf(stderr, "vidtheque: --metrics-bind '%s': not an IP address\n", bind);
        free(m);
        return NULL;
    }
    m->dir = vt_xstrdup(library_dir);
    /* one thread: requests are answered one at a time, so one handle serves them */
    m->d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (ipv6 ? MHD_USE_IPv6 : 0),
                         0, NULL, NULL, metrics_handler, m, MHD_OPTION_SOCK_ADDR,
                         ipv6 ? (struct sockaddr *)&sa6 : (struct sockaddr *)&sa4,
                         MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_CONNECTION_LIMIT, 16u,
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024), MHD_OPTION_END);
    if (!m->d) {
        fprintf(stderr, "vidtheque: metrics: '%s' port %u: cannot listen (%s)\n", bind, port,
                strerror(errno));
        free(m->dir);
        free(m);
        return NULL;
    }
    info = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT);
    fprintf(stderr, "metrics on http://%s%s%s:%u/metrics\n", ipv6 ? "[" : "", bind, ipv6 ? "]" : "",
            info ? (unsigned)info->port : port);
    fflush(stderr);
    return m;
}

void web_metrics_stop(struct web_metrics *m)
{
    if (!m)
        return;
    MHD_stop_daemon(m->d);
    vt_library_close(m->lib);
    free(m->dir);
    free(m);
}
