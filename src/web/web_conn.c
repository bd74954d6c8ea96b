/*
 * The connections: per-request deadlines and the connection budget. MHD's idle timeout
 * closes a quiet connection, but a client trickling a header line now and then is never
 * quiet: a reaper thread looks at every open connection a few times a second and cuts one
 * whose request is late (408), and near the budget it sheds the connections that wait
 * longest for a request (503) so that a new client always finds room. A request refused
 * for its framing or size is answered the same way, on the socket, and shut down.
 */
#include "base/util.h"
#include "web/web_http.h"

#include <linux/tcp.h> /* struct tcp_info with tcpi_bytes_received */
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

enum {
    MAX_CONNECTIONS = 800, /* --max-connections; below the usual 1024 file descriptors */
    /* each request's clock starts when the connection is accepted or, on keep-alive, at
     * the first byte after the previous response: its head must be in within
     * HEAD_TIMEOUT_S (--head-timeout) and the whole request, body included, within
     * REQUEST_DEADLINE_S (--deadline). A client trickling a header line now and then,
     * more often than the idle timeout, is cut all the same. */
    HEAD_TIMEOUT_S = 10,
    REQUEST_DEADLINE_S = 30,
    REAPER_TICK_MS = 250,
};

/*
 * Where a connection is, as the reaper sees it. IDLE: keep-alive between requests, no
 * byte of the next one yet (MHD's idle timeout applies); WAIT: a request has begun (the
 * connection is new, or bytes came after the last response) but its line is not in;
 * HEAD: the request line is in, the headers are coming; BODY: the head is in, the body
 * is coming; BUSY: the handler runs or the response is being sent (never cut by the
 * reaper: MHD's idle timeout covers a reader that stalls).
 */
enum conn_state { CONN_IDLE, CONN_WAIT, CONN_HEAD, CONN_BODY, CONN_BUSY };

/* One open connection, in srv.conns from MHD's "started" to its "closed" notification. */
struct conn {
    int fd;
    enum conn_state state;
    int cut;                /* shut down by us; MHD will notice and close it */
    uint64_t idle_rx_bytes; /* IDLE: bytes the kernel had received when it went idle */
    /* monotonic: when the current request's clock started (IDLE: the last response) */
    double t_ready_s;
    struct conn *prev, *next;
};

/* every open connection, for the reaper (under conns_lock) */
static struct {
    double head_timeout_s, deadline_s;
    unsigned max_connections;
    pthread_mutex_t conns_lock;
    pthread_cond_t reaper_wake;
    pthread_t reaper;
    int reaper_started, reaper_stop;
    struct conn *conns;
    size_t n_conns, n_cut;
    unsigned long n_timed_out, n_shed, n_refused; /* for the log line at exit */
} srv;

static struct conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci ? ci->socket_context : NULL;
}

/*
 * Written by the reaper itself, on a connection that is only being read (its handler
 * has not run), so it never mixes with a response of MHD's. Made once by web_conns_init.
 */
struct canned {
    char text[512];
    size_t len;
};
static struct canned reply_408, reply_503;

static void canned_init(struct canned *r, const char *status, const char *code, const char *msg)
{
    char body[256];
    int n = snprintf(body, sizeof(body), "{\"error\": {\"code\": \"%s\", \"message\": \"%s\"}}\n",
                     code, msg);

    n = snprintf(r->text, sizeof(r->text),
                 "HTTP/1.1 %s\r\nConnection: close\r\nContent-Type: application/json; "
                 "charset=utf-8\r\nCache-Control: no-store\r\nX-Content-Type-Options: "
                 "nosniff\r\nContent-Length: %d\r\n\r\n%s",
                 status, n, body);
    r->len = n > 0 && (size_t)n < sizeof(r->text) ? (size_t)n : 0;
}

/*
 * Shut k's socket down (MHD then reads the end of the stream and closes it), after
 * telling the client why unless it is idle between requests. Under conns_lock: the fd
 * stays open until MHD's "closed" notification, which takes the lock.
 */
static void conn_cut_locked(struct conn *k, const struct canned *reply)
{
    if (k->state != CONN_IDLE)
        (void)send(k->fd, reply->text, reply->len, MSG_DONTWAIT | MSG_NOSIGNAL);
    shutdown(k->fd, SHUT_RDWR);
    k->cut = 1;
    srv.n_cut++;
}

/*
 * Near the budget, shed the connections that wait longest for a request (idle keep-alive,
 * slow heads and bodies), oldest first, so a new client always finds room: above 90%
 * of --max-connections, down to 80%. Connections being answered are never shed.
 */
static void conn_shed_locked(void)
{
    size_t reserve = srv.max_connections / 10 ? srv.max_connections / 10 : 1;
    size_t high = srv.max_connections - reserve, low = high > reserve ? high - reserve : 0;
    size_t live = srv.n_conns - srv.n_cut;

    if (live < high)
        return;
    while (live > low) {
        struct conn *oldest = NULL;

        for (struct conn *k = srv.conns; k; k = k->next)
            if (!k->cut && k->state != CONN_BUSY && (!oldest || k->t_ready_s < oldest->t_ready_s))
                oldest = k;
        if (!oldest)
            break;
        conn_cut_locked(oldest, &reply_503);
        srv.n_shed++;
        live--;
    }
}

/*
 * The bytes received on fd and the seconds since the last of them (the kernel's
 * counters); -1 when the kernel does not say (before Linux 4.1).
 */
static int conn_rx(int fd, uint64_t *bytes, double *quiet_s)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);

    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) ||
        len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
        return -1;
    *bytes = ti.tcpi_bytes_received;
    *quiet_s = ti.tcpi_last_data_recv / 1000.0;
    return 0;
}

/*
 * An idle keep-alive connection that has received bytes since the last response has
 * begun a request: its clock starts at the first of them, which came after the
 * previous look, a tick ago at most.
 */
static void conn_check_idle_locked(struct conn *k, double now)
{
    uint64_t bytes;
    double quiet_s;

    if (conn_rx(k->fd, &bytes, &quiet_s) || bytes == k->idle_rx_bytes)
        return;
    k->state = CONN_WAIT;
    if (now - quiet_s > k->t_ready_s)
        k->t_ready_s = now - quiet_s;
}

/* Cuts the connections whose request is late, then sheds if near the budget. */
static void *reaper_main(void *arg)
{
    pthread_mutex_lock(&srv.conns_lock);
    while (!srv.reaper_stop) {
        struct timespec until;
        double now = vt_monotonic_s();

        for (struct conn *k = srv.conns; k; k = k->next) {
            double limit_s = k->state == CONN_BODY ? srv.deadline_s : srv.head_timeout_s;

            if (!k->cut && k->state == CONN_IDLE)
                conn_check_idle_locked(k, now);
            if (!k->cut && k->state != CONN_BUSY && k->state != CONN_IDLE &&
                now - k->t_ready_s > limit_s) {
                conn_cut_locked(k, &reply_408);
                srv.n_timed_out++;
            }
        }
        conn_shed_locked();
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += REAPER_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&srv.reaper_wake, &srv.conns_lock, &until);
    }
    pthread_mutex_unlock(&srv.conns_lock);
    return arg;
}

/* Keeps the table of open connections. */
void web_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe)
{
    struct conn *k = *socket_context;

    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

        if (!ci)
            return; /* untracked: MHD's idle timeout alone applies */
        k = calloc(1, sizeof(*k));
        if (!k)
            abort();
        k->fd = ci->connect_fd;
        k->state = CONN_WAIT;
        k->t_ready_s = vt_monotonic_s();
        pthread_mutex_lock(&srv.conns_lock);
        k->next = srv.conns;
        if (srv.conns)
            srv.conns->prev = k;
        srv.conns = k;
        srv.n_conns++;
        conn_shed_locked();
        pthread_mutex_unlock(&srv.conns_lock);
        *socket_context = k;
    } else if (k) {
        pthread_mutex_lock(&srv.conns_lock);
        if (k->prev)
            k->prev->next = k->next;
        else
            srv.conns = k->next;
        if (k->next)
            k->next->prev = k->prev;
        srv.n_conns--;
        if (k->cut)
            srv.n_cut--;
        pthread_mutex_unlock(&srv.conns_lock);
        free(k);
        *socket_context = NULL;
    }
}

/* MHD calls this when a request line is in: the headers are coming. */
void *web_on_request_line(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct conn *k = conn_of(c);

    if (k) {
        pthread_mutex_lock(&srv.conns_lock);
        if (k->state == CONN_IDLE)
            k->t_ready_s = vt_monotonic_s(); /* it came whole since the reaper last looked */
        if (k->state == CONN_IDLE || k->state == CONN_WAIT)
            k->state = CONN_HEAD;
        pthread_mutex_unlock(&srv.conns_lock);
    }
    return NULL; /* the handler's *con_cls starts NULL */
}

/*
 * The handler runs: the reaper keeps off the connection. Returns -1 when the reaper has
 * already cut it, else 0 with the seconds since the request's clock started.
 */
int web_conn_busy(struct MHD_Connection *c, double *elapsed_s)
{
    struct conn *k = conn_of(c);
    int rc = 0;

    *elapsed_s = 0;
    if (!k)
        return 0;
    pthread_mutex_lock(&srv.conns_lock);
    if (k->cut) {
        rc = -1;
    } else {
        k->state = CONN_BUSY;
        *elapsed_s = vt_monotonic_s() - k->t_ready_s;
    }
    pthread_mutex_unlock(&srv.conns_lock);
    return rc;
}

/* The handler wants more of the body: the reaper holds it to the request deadline. */
enum MHD_Result web_conn_wants_body(struct MHD_Connection *c)
{
    struct conn *k = conn_of(c);

    if (k) {
        pthread_mutex_lock(&srv.conns_lock);
        k->state = CONN_BODY;
        pthread_mutex_unlock(&srv.conns_lock);
    }
    return MHD_YES;
}

void web_conns_init(unsigned head_timeout_s, unsigned deadline_s, unsigned max_connections)
{
    memset(&srv, 0, sizeof(srv));
    srv.deadline_s = deadline_s ? deadline_s : REQUEST_DEADLINE_S;
    srv.head_timeout_s = head_timeout_s ? head_timeout_s : HEAD_TIMEOUT_S;
    if (srv.head_timeout_s > srv.deadline_s)
        srv.head_timeout_s = srv.deadline_s;
    srv.max_connections = max_connections ? max_connections : MAX_CONNECTIONS;
    canned_init(&reply_408, "408 Request Timeout", "timeout",
                "the request took too long to arrive");
    canned_init(&reply_503, "503 Service Unavailable", "busy", "too many connections, try again");
    pthread_mutex_init(&srv.conns_lock, NULL);
    pthread_cond_init(&srv.reaper_wake, NULL);
}

unsigned web_conns_max(void)
{
    return srv.max_connections;
}

double web_conn_limit_s(int body)
{
    return body ? srv.deadline_s : srv.head_timeout_s;
}

int web_conns_start(void)
{
    if (pthread_create(&srv.reaper, NULL, reaper_main, NULL)) {
        fprintf(stderr, "vidtheque: cannot start the connection reaper thread\n");
        return -1;
    }
    srv.reaper_started = 1;
    return 0;
}

void web_conns_stop(void)
{
    if (!srv.reaper_started)
        return;
    pthread_mutex_lock(&srv.conns_lock);
    srv.reaper_stop = 1;
    pthread_cond_signal(&srv.reaper_wake);
    pthread_mutex_unlock(&srv.conns_lock);
    pthread_join(srv.reaper, NULL);
    if (srv.n_timed_out || srv.n_shed)
        fprintf(stderr, "vidtheque: %lu request(s) timed out, %lu connection(s) shed\n",
                srv.n_timed_out, srv.n_shed);
    if (srv.n_refused)
        fprintf(stderr, "vidtheque: %lu request(s) refused for their framing or size\n",
                srv.n_refused);
}

/*
 * Refuses the request whose handler runs: the answer written on the socket, then the
 * connection shut down (RFC 9112 6.3: after a framing error nothing more of it can be
 * read as a request). Written by us rather than queued, since MHD queues nothing in the
 * middle of a body; no response of MHD's has begun, as the handler has queued none.
 */
enum MHD_Result web_conn_refuse(struct MHD_Connection *c, const char *status, const char *code,
                                const char *msg)
{
    struct conn *k = conn_of(c);
    struct canned reply;

    canned_init(&reply, status, code, msg);
    if (!k) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

        if (ci) {
            (void)send(ci->connect_fd, reply.text, reply.len, MSG_DONTWAIT | MSG_NOSIGNAL);
            shutdown(ci->connect_fd, SHUT_RDWR);
        }
        return MHD_NO;
    }
    pthread_mutex_lock(&srv.conns_lock);
    if (!k->cut) {
        k->state = CONN_BUSY; /* the reply is sent whatever the state */
        conn_cut_locked(k, &reply);
        srv.n_refused++;
    }
    pthread_mutex_unlock(&srv.conns_lock);
    return MHD_NO;
}

/* The response is sent (or the request abandoned): idle until the next request's first byte. */
void web_conn_idle(struct MHD_Connection *c)
{
    struct conn *k = conn_of(c);
    uint64_t bytes = 0;
    double quiet_s;

    if (!k)
        return;
    conn_rx(k->fd, &bytes, &quiet_s);
    pthread_mutex_lock(&srv.conns_lock);
    k->state = CONN_IDLE;
    k->idle_rx_bytes = bytes;
    k->t_ready_s = vt_monotonic_s();
    pthread_mutex_unlock(&srv.conns_lock);
}
