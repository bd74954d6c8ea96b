/*
 * db.h on PostgreSQL (libpq). SQL is written with SQLite's `?` placeholders, which
 * become `$n` here. Values travel as text (the server parses them into the column's
 * type), results come back whole in text format and are parsed when read. A statement
 * the store will reuse (persistent) is prepared on the server once per connection,
 * with the parameter types of its first run's binds; others run with PQexecParams.
 * Through a transaction-mode pool (the URL's pooler=transaction) nothing outlives a
 * transaction: every statement runs with PQexecParams, the session is not SET, and each
 * transaction sets its own bounds (db_pg_begin).
 *
 * Round trips are what a statement costs beyond SQLite: a transaction's BEGIN, and the
 * statements whose answer nobody waits for, are kept (struct pg_later) and sent in one
 * libpq pipeline with the next statement that needs an answer, or with the COMMIT.
 *
 * A lost connection (the server restarted, the network dropped) fails the statement
 * with VT_EUNAVAIL and marks the handle: the next statement outside a transaction
 * tries one PQreset first. Inside a transaction nothing is retried: what it did is
 * gone with the connection, and the caller rolls back.
 */
#include "store/db/db_pg.h"

#include "base/util.h"
#include "vidtheque.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pg_fail(struct db_conn *d, const char *what);

/* PostgreSQL's type oids (server/catalog/pg_type_d.h, stable across versions) */
enum {
    OID_BOOL = 16,
    OID_BYTEA = 17,
    OID_INT8 = 20,
    OID_TEXT = 25,
    OID_FLOAT4 = 700,
    OID_FLOAT8 = 701,
    OID_NUMERIC = 1700,
};

#define PG_MAX_PARAMS 32766 /* SQLite's SQLITE_MAX_VARIABLE_NUMBER default, below libpq's */

struct pg_stmt {
    struct db_stmt base;
    struct db_conn *db; /* its connection */
    char *sql;          /* with $n */
    int nparams;
    unsigned char *used; /* which $n appear in sql */
    int persistent;
    char name[32];     /* of the server's prepared statement */
    unsigned long gen; /* the connection generation it was prepared on; 0: not prepared */
    Oid *types;        /* of the prepared statement's parameters */
    char **vals;       /* bound values as text; NULL binds NULL */
    Oid *bound;        /* the type each value was bound as */
    PGresult *res;     /* the rows of the last run */
    int row, nrows, ran;
    /* the row's bytea columns read so far, decoded (PQfreemem), one per column: a
     * caller may hold two at once; freed at the next step or reset */
    unsigned char **blobs;
    int nblobs;
};

static struct pg_stmt *ps(struct db_stmt *st)
{
    return (struct pg_stmt *)st;
}

char *db_pg_convert(const char *sql, int *nparams, unsigned char **used)
{
    struct vt_sb out = {0};
    unsigned char *u = NULL;
    size_t ucap = 0;
    int max = 0;
    const char *p = sql;

    while (*p) {
        if (*p == '\'' || *p == '"') {
            /* a quoted string or name: to its closing quote (a doubled one is inside) */
            const char q = *p;
            const char *e = p + 1;

            for (; *e; e++)
                if (*e == q && e[1] != q)
                    break;
                else if (*e == q)
                    e++;
            e += *e != '\0';
            vt_sb_add(&out, p, (size_t)(e - p));
            p = e;
        } else if (p[0] == '-' && p[1] == '-') {
            size_t n = strcspn(p, "\n");

            vt_sb_add(&out, p, n);
            p += n;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            size_t n = e ? (size_t)(e + 2 - p) : strlen(p);

            vt_sb_add(&out, p, n);
            p += n;
        } else if (*p == '?') {
            long n = max + 1;

            p++;
            if (isdigit((unsigned char)*p)) {
                char *end;

                n = strtol(p, &end, 10);
                p = end;
            }
            if (n < 1 || n > PG_MAX_PARAMS)
                goto bad;
            if (n > max)
                max = (int)n;
            if ((size_t)n > ucap) {
                size_t old = ucap;

                vt_grow((void **)&u, &ucap, (size_t)n, 1);
                memset(u + old, 0, ucap - old);
            }
            u[n - 1] = 1;
            vt_sb_addf(&out, "$%ld", n);
        } else {
            vt_sb_addc(&out, *p++);
        }
    }
    *nparams = max;
    if (used)
        *used = u ? u : vt_xcalloc(1, 1);
    else
        free(u);
    return vt_sb_detach(&out);
bad:
    free(u);
    vt_sb_release(&out);
    return NULL;
}

/* The first line of m, without libpq's "ERROR:  " style prefix, into out. */
static void first_line(char *out, size_t n, const char *m)
{
    static const char *const prefixes[] = {"ERROR:  ", "FATAL:  ", "PANIC:  "};
    size_t len;

    if (!m || !*m)
        m = "no message from the server";
    for (size_t i = 0; i < VT_ARRAY_LEN(prefixes); i++)
        if (!strncmp(m, prefixes[i], strlen(prefixes[i])))
            m += strlen(prefixes[i]);
    len = strcspn(m, "\r\n");
    snprintf(out, n, "%.*s", (int)len, m);
}

int db_pg_record(struct pg_conn *c, PGresult *r)
{
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    const char *m = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

    if (!m || !*m)
        m = r ? PQresultErrorMessage(r) : NULL;
    if (!m || !*m)
        m = PQerrorMessage(c->conn);
    first_line(c->msg, sizeof(c->msg), m);
    snprintf(c->state, sizeof(c->state), "%s", state ? state : "");
    /* class 08: connection exceptions; 57P01-3: the server shuts down or cannot take
     * connections now. Either way the statement never took effect. */
    if (PQstatus(c->conn) == CONNECTION_BAD || !strncmp(c->state, "08", 2) ||
        !strcmp(c->state, "57P01") || !strcmp(c->state, "57P02") || !strcmp(c->state, "57P03")) {
        c->lost = 1;
        c->code = VT_EUNAVAIL;
    } else if (!strcmp(c->state, "40001") || !strcmp(c->state, "40P01") ||
               !strcmp(c->state, "55P03")) {
        /* serialization failure, deadlock, or lock_timeout: the caller may retry */
        c->code = VT_EBUSY;
    } else {
        c->code = VT_EIO;
    }
    return c->code;
}

/* Record a failure of our own making (no server message). */
static int record_msg(struct pg_conn *c, int code, const char *msg)
{
    snprintf(c->msg, sizeof(c->msg), "%s", msg);
    c->state[0] = '\0';
    c->code = code;
    return code;
}

/*
 * Whether an idle connection is still there. A server that restarted or shut down has
 * sent a FATAL and closed the socket: an idle connection has nothing else to read but
 * notifications, so when poll() says there is something, it is read (the message, then
 * the end of the stream, which marks the connection bad) before a statement is lost to
 * it. One poll() when all is well.
 */
static int alive(PGconn *conn)
{
    struct pollfd p = {PQsocket(conn), POLLIN, 0};

    for (int i = 0; i < 4 && PQstatus(conn) == CONNECTION_OK; i++) {
        if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR)))
            return 1;
        if (!PQconsumeInput(conn))
            return 0;
    }
    return PQstatus(conn) == CONNECTION_OK;
}

/* Seconds from the environment variable name, def when unset or outside lo..hi. */
static double env_seconds(const char *name, double def, double lo, double hi)
{
    const char *v = getenv(name);
    char *end;
    double x;

    if (!v || !*v)
        return def;
    x = strtod(v, &end);
    return *end || !(x >= lo && x <= hi) ? def : x;
}

/*
 * What every session needs, whatever the server's and the role's defaults: text in
 * UTF-8, and floats printed so that they read back as the same double (the default
 * since PostgreSQL 12; older servers print 15 digits without it).
 *
 * And bounds, so that one stuck client cannot hold the others (issue 26): a statement
 * waits at most lock_timeout for a row or table lock (then fails with 55P03, which the
 * caller retries like a deadlock), and a session that stays idle inside a transaction
 * longer than idle_in_transaction_session_timeout (a worker frozen by a VM pause or a
 * SIGSTOP between two statements of its commit) is ended by the server, which frees
 * its locks: its stage's lease runs out and another worker takes the stage over. Every
 * transaction of ours sends its statements back to back (nothing slow is done while one
 * is open), so the defaults, 10 s and 60 s, cut nothing that works.
 * VIDTHEQUE_PG_LOCK_TIMEOUT and VIDTHEQUE_PG_IDLE_TX_TIMEOUT (seconds) change them.
 */
static long lock_timeout_ms(void)
{
    return (long)(env_seconds("VIDTHEQUE_PG_LOCK_TIMEOUT", 10, 0.1, 3600) * 1000);
}

static long idle_tx_timeout_ms(void)
{
    return (long)(env_seconds("VIDTHEQUE_PG_IDLE_TX_TIMEOUT", 60, 0.1, 86400) * 1000);
}

static int session_setup(PGconn *conn)
{
    char sql[200];
    PGresult *r;
    int ok;

    snprintf(sql, sizeof(sql),
             "SET client_encoding = 'UTF8'; SET extra_float_digits = 3;"
             " SET lock_timeout = %ld; SET idle_in_transaction_session_timeout = %ld",
             lock_timeout_ms(), idle_tx_timeout_ms());
    r = PQexec(conn, sql);
    ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok;
}

/*
 * When the next reconnection may be tried after fails failed ones in a row: 0.25 s,
 * doubling up to 4 s, each drawn between half and all of that (jitter: the clients a
 * restart cut off do not all come back in the same instant).
 */
static double reconnect_delay_s(struct pg_conn *c)
{
    double d = 0.25;

    for (int i = 1; i < c->fails && d < 4; i++)
        d *= 2;
    if (d > 4)
        d = 4;
    /* xorshift64: a thread of its own per connection, no shared state */
    c->jitter ^= c->jitter << 13;
    c->jitter ^= c->jitter >> 7;
    c->jitter ^= c->jitter << 17;
    return d * (0.5 + (double)(c->jitter >> 11) / 9007199254740992.0 / 2);
}

/*
 * A connection that was lost is reset here, once per statement, but not sooner than
 * its back-off allows (reconnect_delay_s): until then a statement fails at once with
 * the last attempt's message, so that neither an idle worker's loop nor a server's
 * requests knock on a server that is down hundreds of times a second.
 */
int db_pg_ready(struct pg_conn *c)
{
    double now;

    if (!c->lost && PQstatus(c->conn) == CONNECTION_OK && alive(c->conn))
        return 0;
    c->lost = 1;
    /* a transaction not sent yet (db_pg_begin) has lost nothing: its BEGIN goes to the
     * new session */
    if (c->in_tx && c->tx_sent)
        return record_msg(c, VT_EUNAVAIL, "the connection was lost in the middle of a transaction");
    now = vt_monotonic_s();
    if (c->fails && now < c->retry_at) {
        c->code = VT_EUNAVAIL; /* c->msg still says why the last attempt failed */
        return VT_EUNAVAIL;
    }
    PQreset(c->conn);
    if (PQstatus(c->conn) != CONNECTION_OK || (!c->pooler && !session_setup(c->conn))) {
        record_msg(c, VT_EUNAVAIL, "");
        first_line(c->msg, sizeof(c->msg), PQerrorMessage(c->conn));
        c->fails++;
        c->retry_at = vt_monotonic_s() + reconnect_delay_s(c);
        return VT_EUNAVAIL;
    }
    c->fails = 0;
    c->lost = 0;
    c->gen++; /* a new session: every statement is prepared again */
    return 0;
}

static void no_notices(void *arg, const char *message)
{
    (void)arg;
    (void)message; /* "relation exists, skipping" and the like: the library never prints */
}

/*
 * Whether a failed connection's message says something waiting will not mend: a wrong
 * password, a role or database that does not exist, no pg_hba.conf line for us. libpq
 * gives no SQLSTATE before a session exists, so the server's words are read (English,
 * its default; a server set to another language reads as unavailable, the old answer).
 * Anything else (refused, timed out, starting up, too many clients) is unavailable.
 */
static int connect_is_final(const char *msg)
{
    static const char *const final[] = {"password authentication failed",
                                        "authentication failed for user",
                                        "does not exist",
                                        "no pg_hba.conf entry",
                                        "permission denied for database",
                                        "not permitted to log in",
                                        NULL};

    for (int i = 0; final[i]; i++)
        if (strstr(msg, final[i]))
            return 1;
    return 0;
}

/* The value of a URL query parameter, percent-decoded (n bytes at v). Caller frees. */
static char *url_value(const char *v, size_t n)
{
    char *out = vt_xmalloc(n + 1), *o = out;

    for (size_t i = 0; i < n; i++) {
        if (v[i] == '%' && i + 2 < n && isxdigit((unsigned char)v[i + 1]) &&
            isxdigit((unsigned char)v[i + 2])) {
            char hex[3] = {v[i + 1], v[i + 2], '\0'};

            *o++ = (char)strtol(hex, NULL, 16);
            i += 2;
        } else {
            *o++ = v[i];
        }
    }
    *o = '\0';
    return out;
}

/* The URL's options that are vidtheque's, not libpq's (libpq refuses names it does not
 * know): pooler, listen_host, listen_port. */
struct url_opts {
    char *rest; /* the URL without them */
    int kept;   /* query parameters kept in rest */
    int pooler;
    char *listen_host, *listen_port;
};

static void url_opts_free(struct url_opts *o)
{
    free(o->rest);
    free(o->listen_host);
    free(o->listen_port);
}

/* Take one query parameter (n bytes at p): ours into o (0, or VT_EINVAL with err),
 * anyone else's onto o->rest. */
static int url_param(struct url_opts *o, struct vt_sb *rest, const char *p, size_t n, char *err,
                     size_t errlen)
{
    static const char *const ours[] = {"pooler=", "listen_host=", "listen_port="};
    size_t k = 0;
    char *v;

    while (k < VT_ARRAY_LEN(ours) && strncmp(p, ours[k], strlen(ours[k])))
        k++;
    if (k == VT_ARRAY_LEN(ours) || strlen(ours[k]) > n) {
        vt_sb_addc(rest, o->kept++ ? '&' : '?');
        vt_sb_add(rest, p, n);
        return 0;
    }
    v = url_value(p + strlen(ours[k]), n - strlen(ours[k]));
    if (k == 0) {
        if (!strcmp(v, "transaction")) {
            o->pooler = 1;
        } else if (strcmp(v, "session") && strcmp(v, "none")) {
            vt_err(err, errlen, VT_EINVAL,
                   "database: pooler=%.40s: expected transaction, session or none", v);
            free(v);
            return VT_EINVAL;
        }
        free(v);
    } else if (!*v || strcspn(v, "\r\n") != strlen(v)) {
        vt_err(err, errlen, VT_EINVAL, "database: %.*s is empty", (int)strlen(ours[k]) - 1,
               ours[k]);
        free(v);
        return VT_EINVAL;
    } else if (k == 1) {
        free(o->listen_host);
        o->listen_host = v;
    } else {
        free(o->listen_port);
        o->listen_port = v;
    }
    return 0;
}

/* Split url into libpq's URL and our options. 0, or VT_EINVAL with err. */
static int url_split(const char *url, struct url_opts *o, char *err, size_t errlen)
{
    const char *q = strchr(url, '?'), *p;
    struct vt_sb rest = {0};
    int rc = 0;

    memset(o, 0, sizeof(*o));
    if (!q) {
        o->rest = vt_xstrdup(url);
        return 0;
    }
    vt_sb_add(&rest, url, (size_t)(q - url));
    for (p = q + 1; !rc && *p;) {
        size_t n = strcspn(p, "&");

        if (n)
            rc = url_param(o, &rest, p, n, err, errlen);
        p += n + (p[n] == '&');
    }
    o->rest = vt_sb_detach(&rest);
    if (rc)
        url_opts_free(o);
    else if ((o->listen_host || o->listen_port) && !o->pooler)
        rc = vt_err(err, errlen, VT_EINVAL,
                    "database: listen_host and listen_port go with pooler=transaction");
    if (rc)
        memset(o, 0, sizeof(*o));
    return rc;
}

/* Open a session with libpq's URL url, host and port (when not NULL) over the URL's. */
static PGconn *open_session(const char *url, int pooler, const char *host, const char *port)
{
    /* ours first: what the URL says overrides them (libpq keeps the last value); a pooled
     * session's encoding is a startup parameter, which PgBouncer keeps per client. TCP
     * keepalives: a server behind a dead link (a machine gone, a network split) is known
     * gone within about a minute (30 s idle, then 3 probes 10 s apart), not after the
     * kernel's two hours, and so is a dead client on the server's side. */
    const char *keys[10] = {"application_name", "connect_timeout",     "keepalives",
                            "keepalives_idle",  "keepalives_interval", "keepalives_count"};
    const char *vals[10] = {"vidtheque", "10", "1", "30", "10", "3"};
    int n = 6;

    if (pooler) {
        keys[n] = "client_encoding";
        vals[n++] = "UTF8";
    }
    keys[n] = "dbname";
    vals[n++] = url;
    if (host) {
        keys[n] = "host";
        vals[n++] = host;
    }
    if (port) {
        keys[n] = "port";
        vals[n++] = port;
    }
    keys[n] = vals[n] = NULL;
    return PQconnectdbParams(keys, vals, 1);
}

int db_pg_connect(const char *url, struct pg_conn **out, char *err, size_t errlen)
{
    PQconninfoOption *opts;
    struct pg_conn *c;
    struct url_opts o;
    char *perr = NULL, line[400];
    int rc;

    *out = NULL;
    rc = url_split(url, &o, err, errlen);
    if (rc)
        return rc;
    opts = PQconninfoParse(o.rest, &perr);
    if (!opts) {
        first_line(line, sizeof(line), perr ? perr : "out of memory");
        PQfreemem(perr);
        url_opts_free(&o);
        return vt_err(err, errlen, VT_EINVAL, "database: not a PostgreSQL URL: %s", line);
    }
    PQconninfoFree(opts);
    c = vt_xcalloc(1, sizeof(*c));
    c->url = o.rest;
    c->pooler = o.pooler;
    c->listen_host = o.listen_host;
    c->listen_port = o.listen_port;
    c->conn = open_session(c->url, c->pooler, NULL, NULL);
    c->gen = 1;
    c->jitter = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)c ^
                (uint64_t)(vt_monotonic_s() * 1e9) ^ 0x9e3779b97f4a7c15ull;
    if (!c->conn || PQstatus(c->conn) != CONNECTION_OK) {
        const char *msg = c->conn ? PQerrorMessage(c->conn) : "out of memory";
        int final = connect_is_final(msg);

        first_line(line, sizeof(line), msg);
        db_pg_disconnect(c);
        if (final)
            return vt_err(err, errlen, VT_EINVAL, "database: cannot connect: %s", line);
        return vt_err(err, errlen, VT_EUNAVAIL, "database unavailable: cannot connect: %s", line);
    }
    PQsetNoticeProcessor(c->conn, no_notices, NULL);
    if (c->pooler && PQserverVersion(c->conn) < 120000) {
        /* what session_setup sets is the default from 12 on; a pool keeps no SET */
        db_pg_disconnect(c);
        return vt_err(err, errlen, VT_EINVAL,
                      "database: pooler=transaction needs PostgreSQL 12 or later");
    }
    if (!c->pooler && !session_setup(c->conn)) {
        first_line(line, sizeof(line), PQerrorMessage(c->conn));
        db_pg_disconnect(c);
        return vt_err(err, errlen, VT_EIO, "database: set up the session: %s", line);
    }
    *out = c;
    return 0;
}

PGconn *db_pg_listener(struct pg_conn *c, int *fresh)
{
    *fresh = 0;
    if (!c->listen_host && !c->listen_port)
        return NULL;
    if (c->listener && PQstatus(c->listener) == CONNECTION_OK)
        return c->listener;
    PQfinish(c->listener);
    c->listener = open_session(c->url, 0, c->listen_host, c->listen_port);
    if (c->listener && PQstatus(c->listener) == CONNECTION_OK) {
        *fresh = 1;
        PQsetNoticeProcessor(c->listener, no_notices, NULL);
        return c->listener;
    }
    record_msg(c, VT_EUNAVAIL, "");
    first_line(c->msg, sizeof(c->msg), c->listener ? PQerrorMessage(c->listener) : "out of memory");
    PQfinish(c->listener);
    c->listener = NULL;
    return NULL;
}

void db_pg_disconnect(struct pg_conn *c)
{
    if (!c)
        return;
    db_pg_later_drop(c);
    free(c->later);
    PQfinish(c->conn);
    PQfinish(c->listener);
    free(c->url);
    free(c->listen_host);
    free(c->listen_port);
    free(c);
}

/* ---- statements deferred to the next round trip ---- */

/* A statement sent with the next one that needs an answer (always unnamed: a
 * reconnection before it is sent loses nothing). */
struct pg_later {
    char *sql; /* with $n */
    int n;
    Oid *types;
    char **vals;
};

static void later_add(struct pg_conn *c, char *sql, int n, Oid *types, char **vals)
{
    vt_grow((void **)&c->later, &c->later_cap, c->nlater + 1, sizeof(*c->later));
    c->later[c->nlater++] = (struct pg_later){sql, n, types, vals};
}

void db_pg_later(struct pg_conn *c, const char *sql)
{
    later_add(c, vt_xstrdup(sql), 0, NULL, NULL);
}

void db_pg_later_drop(struct pg_conn *c)
{
    for (size_t i = 0; i < c->nlater; i++) {
        struct pg_later *l = &c->later[i];

        for (int k = 0; k < l->n; k++)
            free(l->vals[k]);
        free(l->vals);
        free(l->types);
        free(l->sql);
    }
    c->nlater = 0;
    c->begin_later = 0;
}

void db_pg_begin(struct pg_conn *c, const char *begin_sql)
{
    db_pg_later_drop(c);
    db_pg_later(c, begin_sql);
    if (c->pooler) {
        /* a pooled session is anyone's between transactions: the bounds session_setup
         * gives a session of our own hold for this transaction only (SET LOCAL), set
         * again by each */
        char sql[80];

        snprintf(sql, sizeof(sql), "SET LOCAL lock_timeout = %ld", lock_timeout_ms());
        db_pg_later(c, sql);
        snprintf(sql, sizeof(sql), "SET LOCAL idle_in_transaction_session_timeout = %ld",
                 idle_tx_timeout_ms());
        db_pg_later(c, sql);
    }
    c->in_tx = 1;
    c->tx_sent = 0;
    c->begin_later = c->nlater;
}

/* One query of a pipeline: a statement to run (by name when prepared), or a PREPARE. */
struct pg_query {
    const char *sql, *name;
    int prepare, n;
    const Oid *types;
    const char *const *vals;
};

/*
 * Send the deferred statements and then q[0..nq) in one pipeline, one round trip (libpq's
 * pipeline mode: every query sent, one sync, then the results in order). The deferred
 * ones are gone after it whatever happens. 0 with *last (the result of q[keep], or NULL
 * when nq is 0; the caller clears it), or the code of the first that failed up to q[keep]
 * (recorded on c; the queries after a failed one are skipped by the server, and the open
 * transaction is failed: the caller rolls back). A failure after q[keep] is not the
 * caller's: what q[keep] did stands (a COMMIT followed by the wake of workers).
 */
static int pipeline_at(struct pg_conn *c, const struct pg_query *q, int nq, int keep,
                       PGresult **last)
{
    PGconn *conn = c->conn;
    size_t total = c->nlater + (size_t)nq, c_keep = c->nlater + (size_t)keep;
    int rc = 0, sent = 1;
    PGresult *r;

    *last = NULL;
    c->trips++;
    if (c->in_tx)
        c->tx_sent = 1;
    if (!PQenterPipelineMode(conn)) {
        db_pg_later_drop(c);
        return db_pg_record(c, NULL);
    }
    for (size_t i = 0; i < c->nlater && sent; i++)
        sent = PQsendQueryParams(conn, c->later[i].sql, c->later[i].n, c->later[i].types,
                                 (const char *const *)c->later[i].vals, NULL, NULL, 0);
    for (int i = 0; i < nq && sent; i++)
        if (q[i].prepare)
            sent = PQsendPrepare(conn, q[i].name, q[i].sql, q[i].n, q[i].types);
        else if (q[i].name)
            sent = PQsendQueryPrepared(conn, q[i].name, q[i].n, q[i].vals, NULL, NULL, 0);
        else
            sent = PQsendQueryParams(conn, q[i].sql, q[i].n, q[i].types, q[i].vals, NULL, NULL, 0);
    db_pg_later_drop(c);
    if (!sent || !PQpipelineSync(conn)) {
        rc = db_pg_record(c, NULL);
        c->lost = 1; /* what was sent and what was not are unknown: a new session */
        PQexitPipelineMode(conn);
        return rc;
    }
    /* each query: its result, then NULL; then the sync's */
    for (size_t i = 0; i < total; i++) {
        int st;

        r = PQgetResult(conn);
        if (!r) {
            rc = rc ? rc : db_pg_record(c, NULL);
            c->lost = 1;
            break;
        }
        st = PQresultStatus(r);
        if (!rc && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && i <= c_keep)
            rc = db_pg_record(c, r);
        if (!rc && i == c_keep && nq)
            *last = r;
        else
            PQclear(r);
        while ((r = PQgetResult(conn)))
            PQclear(r); /* nothing more is expected: read to the query's end */
    }
    if (!c->lost) {
        r = PQgetResult(conn);
        if (!r || PQresultStatus(r) != PGRES_PIPELINE_SYNC)
            c->lost = 1;
        PQclear(r);
    }
    if (!PQexitPipelineMode(conn))
        c->lost = 1;
    if (c->lost && !rc)
        rc = record_msg(c, VT_EUNAVAIL, "the connection was lost in the middle of a transaction");
    if (rc) {
        PQclear(*last);
        *last = NULL;
    }
    return rc;
}

static int pipeline(struct pg_conn *c, const struct pg_query *q, int nq, PGresult **last)
{
    return pipeline_at(c, q, nq, nq - 1, last);
}

int db_pg_exec_after_at(struct pg_conn *c, const char *sql, int keep, PGresult **r)
{
    struct pg_query q[8];
    char *copy, *p, *next;
    int nq = 0, rc;

    if (!c->nlater && keep < 0) {
        c->trips++;
        *r = PQexec(c->conn, sql);
        return 0;
    }
    /* one query per statement: pipeline mode runs no string of several */
    copy = vt_xstrdup(sql);
    for (p = copy; p && *p; p = next) {
        next = strchr(p, ';');
        if (next)
            *next++ = '\0';
        while (*p == ' ')
            p++;
        if (!*p)
            continue;
        if (nq == (int)VT_ARRAY_LEN(q)) {
            free(copy);
            db_pg_later_drop(c);
            *r = NULL;
            return record_msg(c, VT_EINVAL, "too many statements after deferred ones");
        }
        q[nq++] = (struct pg_query){.sql = p};
    }
    rc = pipeline_at(c, q, nq, keep < 0 || keep >= nq ? nq - 1 : keep, r);
    free(copy);
    return rc;
}

int db_pg_exec_after(struct pg_conn *c, const char *sql, PGresult **r)
{
    return db_pg_exec_after_at(c, sql, -1, r);
}

/* ---- statements ---- */

static int pg_prepare(struct db_conn *d, const char *sql, int persistent, struct db_stmt **out)
{
    struct pg_stmt *st;
    unsigned char *used = NULL;
    int n = 0;
    char *conv = db_pg_convert(sql, &n, &used);

    *out = NULL;
    if (!conv) {
        record_msg(d->pg, VT_EINVAL, "a parameter number out of range");
        return pg_fail(d, "prepare a query");
    }
    st = vt_xcalloc(1, sizeof(*st));
    st->base.ops = &db_pg_ops;
    st->db = d;
    st->sql = conv;
    st->nparams = n;
    st->used = used;
    st->persistent = persistent;
    st->types = vt_xcalloc((size_t)n + 1, sizeof(*st->types));
    st->vals = vt_xcalloc((size_t)n + 1, sizeof(*st->vals));
    st->bound = vt_xcalloc((size_t)n + 1, sizeof(*st->bound));
    st->row = -1;
    *out = &st->base;
    return 0;
}

static void drop_blobs(struct pg_stmt *st)
{
    for (int i = 0; i < st->nblobs; i++) {
        PQfreemem(st->blobs[i]);
        st->blobs[i] = NULL;
    }
}

static void drop_result(struct pg_stmt *st)
{
    PQclear(st->res);
    st->res = NULL;
    drop_blobs(st);
    st->row = -1;
    st->nrows = 0;
    st->ran = 0;
}

static void clear_binds(struct pg_stmt *st)
{
    for (int i = 0; i < st->nparams; i++) {
        free(st->vals[i]);
        st->vals[i] = NULL;
        st->bound[i] = 0;
    }
}

static void pg_finalize(struct db_stmt *x)
{
    struct pg_stmt *st = ps(x);
    struct pg_conn *c = st->db->pg;

    drop_result(st);
    /* a statement finalized before its handle closes (outside the cache) would stay
     * on the server for the session's life */
    if (st->gen && c && st->gen == c->gen && PQstatus(c->conn) == CONNECTION_OK) {
        char sql[48];

        snprintf(sql, sizeof(sql), "DEALLOCATE %s", st->name);
        c->trips++;
        PQclear(PQexec(c->conn, sql));
    }
    clear_binds(st);
    free(st->sql);
    free(st->used);
    free(st->types);
    free(st->vals);
    free(st->bound);
    free(st->blobs);
    free(st);
}

static void pg_reset(struct db_stmt *x, int clear)
{
    drop_result(ps(x));
    if (clear)
        clear_binds(ps(x));
}

/* Bind text v (NULL: SQL NULL) as value i of type type; v is copied. */
static void bind_val(struct db_stmt *x, int i, char *v, Oid type)
{
    struct pg_stmt *st = ps(x);

    if (i < 1 || i > st->nparams) {
        free(v); /* SQLite ignores such a bind too (SQLITE_RANGE, unchecked) */
        return;
    }
    free(st->vals[i - 1]);
    st->vals[i - 1] = v;
    st->bound[i - 1] = v ? type : 0;
}

/*
 * A copy of the n bytes at v that PostgreSQL's UTF8 text accepts: each byte that starts
 * no valid sequence (and each NUL, which text cannot hold) becomes U+FFFD. SQLite keeps
 * such bytes as they came (a tag of a hostile file, a file name); every reader shows
 * them as U+FFFD already (the export, the pages), so both backends show the same.
 */
static char *pg_text(const char *v, size_t n)
{
    const char *p = v;
    size_t left = n, k;
    struct vt_sb sb = {0};

    /* the common case, all valid: one copy */
    while (left && (k = vt_utf8_decode(p, left, NULL)) && *p) {
        p += k;
        left -= k;
    }
    if (!left) {
        char *t = vt_xmalloc(n + 1);

        memcpy(t, v, n);
        t[n] = '\0';
        return t;
    }
    vt_sb_add(&sb, v, (size_t)(p - v));
    while (left) {
        k = vt_utf8_decode(p, left, NULL);
        if (!k || !*p) {
            vt_sb_adds(&sb, "\xef\xbf\xbd");
            k = 1;
        } else {
            vt_sb_add(&sb, p, k);
        }
        p += k;
        left -= k;
    }
    return vt_sb_detach(&sb);
}

static void pg_bind_text(struct db_stmt *x, int i, const char *v)
{
    bind_val(x, i, v ? pg_text(v, strlen(v)) : NULL, 0);
}

static void pg_bind_textn(struct db_stmt *x, int i, const char *v, size_t n)
{
    bind_val(x, i, pg_text(v, n), 0);
}

static void pg_bind_int64(struct db_stmt *x, int i, int64_t v)
{
    bind_val(x, i, vt_xasprintf("%lld", (long long)v), OID_INT8);
}

static void pg_bind_double(struct db_stmt *x, int i, double v)
{
    /* %.17g reads back as the same double; PostgreSQL reads "nan", "inf" and "-inf" */
    bind_val(x, i, vt_xasprintf("%.17g", v), OID_FLOAT8);
}

static void pg_bind_blob(struct db_stmt *x, int i, const void *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *b = p;
    char *t = vt_xmalloc(2 * n + 3);

    /* bytea's hex input form: \x then two digits a byte */
    t[0] = '\\';
    t[1] = 'x';
    for (size_t k = 0; k < n; k++) {
        t[2 + 2 * k] = hex[b[k] >> 4];
        t[3 + 2 * k] = hex[b[k] & 15];
    }
    t[2 + 2 * n] = '\0';
    bind_val(x, i, t, OID_BYTEA);
}

static void pg_bind_null(struct db_stmt *x, int i)
{
    bind_val(x, i, NULL, 0);
}

/* The parameter types to prepare with: each bound value's, text for a number that the
 * SQL never names (SQLite allows gaps; PostgreSQL must know every type). */
static void param_types(struct pg_stmt *st)
{
    for (int i = 0; i < st->nparams; i++)
        st->types[i] = st->used[i] ? st->bound[i] : OID_TEXT;
}

/* The rows the statement whose result r is changed, when it is one that changes rows. */
static void note_changes(struct pg_conn *c, PGresult *r)
{
    const char *cmd = PQcmdStatus(r);

    if (!strncmp(cmd, "INSERT", 6) || !strncmp(cmd, "UPDATE", 6) || !strncmp(cmd, "DELETE", 6) ||
        !strncmp(cmd, "MERGE", 5))
        c->changes = strtoll(PQcmdTuples(r), NULL, 10);
}

static int run(struct pg_stmt *st)
{
    struct pg_conn *c = st->db->pg;
    PGresult *r;
    int rc = db_pg_ready(c), status;
    /* through a transaction-mode pool the next transaction may run on a server session
     * that never saw the PREPARE: every statement unnamed there (parsed each run) */
    const int named = st->persistent && !c->pooler;

    if (rc)
        return rc;
    c->msg[0] = '\0';
    if (c->nlater) {
        /* what was deferred goes first, in this statement's round trip */
        struct pg_query q[2];
        int nq = 0, prep = named && st->gen != c->gen;

        param_types(st);
        if (prep) {
            snprintf(st->name, sizeof(st->name), "vt%lu", ++c->names);
            q[nq++] = (struct pg_query){.sql = st->sql,
                                        .name = st->name,
                                        .prepare = 1,
                                        .n = st->nparams,
                                        .types = st->types};
        }
        q[nq++] = (struct pg_query){.sql = st->sql,
                                    .name = named ? st->name : NULL,
                                    .n = st->nparams,
                                    .types = st->types,
                                    .vals = (const char *const *)st->vals};
        rc = pipeline(c, q, nq, &r);
        if (rc)
            return rc;
        if (prep)
            st->gen = c->gen;
        status = PQresultStatus(r);
        goto got;
    }
    if (c->in_tx)
        c->tx_sent = 1;
    if (named && st->gen != c->gen) {
        param_types(st);
        snprintf(st->name, sizeof(st->name), "vt%lu", ++c->names);
        c->trips++;
        r = PQprepare(c->conn, st->name, st->sql, st->nparams, st->types);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            rc = db_pg_record(c, r);
            PQclear(r);
            return rc;
        }
        PQclear(r);
        st->gen = c->gen;
    }
    c->trips++;
    if (named) {
        r = PQexecPrepared(c->conn, st->name, st->nparams, (const char *const *)st->vals, NULL,
                           NULL, 0);
    } else {
        param_types(st);
        r = PQexecParams(c->conn, st->sql, st->nparams, st->types, (const char *const *)st->vals,
                         NULL, NULL, 0);
    }
    status = PQresultStatus(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        rc = db_pg_record(c, r);
        PQclear(r);
        return rc;
    }
got:
    note_changes(c, r);
    st->res = r;
    st->nrows = status == PGRES_TUPLES_OK ? PQntuples(r) : 0;
    st->row = -1;
    st->ran = 1;
    return 0;
}

static int pg_step(struct db_stmt *x)
{
    struct pg_stmt *st = ps(x);

    if (!st->ran) {
        int rc = run(st);

        if (rc)
            return rc;
    }
    if (st->row + 1 < st->nrows) {
        st->row++;
        drop_blobs(st);
        return DB_ROW;
    }
    /* done: the next step runs the statement again, as SQLite's does */
    drop_result(st);
    return DB_DONE;
}

static const char *value(struct pg_stmt *st, int i)
{
    if (!st->res || st->row < 0 || i < 0 || i >= PQnfields(st->res) ||
        PQgetisnull(st->res, st->row, i))
        return NULL;
    return PQgetvalue(st->res, st->row, i);
}

static int pg_col_null(struct db_stmt *x, int i)
{
    return value(ps(x), i) == NULL;
}

static double pg_col_double(struct db_stmt *x, int i)
{
    struct pg_stmt *st = ps(x);
    const char *v = value(st, i);

    if (!v)
        return 0;
    if (PQftype(st->res, i) == OID_BOOL)
        return *v == 't';
    return strtod(v, NULL);
}

static int64_t pg_col_int64(struct db_stmt *x, int i)
{
    struct pg_stmt *st = ps(x);
    const char *v = value(st, i);
    Oid t;

    if (!v)
        return 0;
    t = PQftype(st->res, i);
    if (t == OID_BOOL)
        return *v == 't';
    if (t == OID_FLOAT8 || t == OID_FLOAT4 || t == OID_NUMERIC) {
        /* as SQLite converts a real: truncated, saturated */
        double d = strtod(v, NULL);

        if (isnan(d))
            return 0;
        if (d >= 9223372036854775807.0)
            return INT64_MAX;
        if (d <= -9223372036854775808.0)
            return INT64_MIN;
        return (int64_t)d;
    }
    return strtoll(v, NULL, 10);
}

static const char *pg_col_text(struct db_stmt *x, int i)
{
    return value(ps(x), i);
}

static const void *pg_col_blob(struct db_stmt *x, int i, size_t *n)
{
    struct pg_stmt *st = ps(x);
    const char *v = value(st, i);

    *n = 0;
    if (!v)
        return NULL;
    if (PQftype(st->res, i) != OID_BYTEA) {
        *n = (size_t)PQgetlength(st->res, st->row, i);
        return v;
    }
    if (i >= st->nblobs) {
        int k = PQnfields(st->res);

        st->blobs = vt_xrealloc(st->blobs, sizeof(*st->blobs) * (size_t)k);
        memset(st->blobs + st->nblobs, 0, sizeof(*st->blobs) * (size_t)(k - st->nblobs));
        st->nblobs = k;
    }
    PQfreemem(st->blobs[i]);
    st->blobs[i] = PQunescapeBytea((const unsigned char *)v, n);
    if (!st->blobs[i])
        *n = 0;
    return st->blobs[i];
}

static int64_t pg_changes(struct db_conn *d)
{
    return d->pg->changes;
}

static int pg_exec(struct db_conn *d, const char *sql, const char *what)
{
    struct pg_conn *c = d->pg;
    PGresult *r;
    int rc = db_pg_ready(c), status;

    if (rc)
        return pg_fail(d, what);
    c->msg[0] = '\0';
    if (c->nlater) {
        /* deferred statements without parameters go in front of sql, one round trip;
         * others in a pipeline of their own first */
        int plain = 1;

        for (size_t i = 0; i < c->nlater; i++)
            plain &= c->later[i].n == 0;
        if (plain) {
            struct vt_sb all = {0};

            for (size_t i = 0; i < c->nlater; i++)
                vt_sb_addf(&all, "%s; ", c->later[i].sql);
            vt_sb_adds(&all, sql);
            db_pg_later_drop(c);
            c->tx_sent |= c->in_tx;
            c->trips++;
            r = PQexec(c->conn, all.buf);
            vt_sb_release(&all);
            goto ran;
        }
        if (pipeline(c, NULL, 0, &r))
            return pg_fail(d, what);
    }
    c->tx_sent |= c->in_tx;
    c->trips++;
    r = PQexec(c->conn, sql);
ran:
    status = PQresultStatus(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        db_pg_record(c, r);
        PQclear(r);
        return pg_fail(d, what);
    }
    PQclear(r);
    return 0;
}

static int pg_exec_later(struct db_conn *d, const char *sql, const char *what)
{
    if (!d->pg->in_tx)
        return pg_exec(d, sql, what);
    db_pg_later(d->pg, sql);
    return 0;
}

static int pg_step_later(struct db_stmt *x)
{
    struct pg_stmt *st = ps(x);
    struct pg_conn *c = st->db->pg;
    Oid *types;
    char **vals;

    if (!c->in_tx)
        return pg_step(x);
    param_types(st);
    types = vt_xcalloc((size_t)st->nparams + 1, sizeof(*types));
    vals = vt_xcalloc((size_t)st->nparams + 1, sizeof(*vals));
    for (int i = 0; i < st->nparams; i++) {
        types[i] = st->types[i];
        vals[i] = st->vals[i] ? vt_xstrdup(st->vals[i]) : NULL;
    }
    later_add(c, vt_xstrdup(st->sql), st->nparams, types, vals);
    return DB_DONE;
}

static int pg_fail(struct db_conn *d, const char *what)
{
    struct pg_conn *c = d->pg;

    if (!c->msg[0])
        record_msg(c, VT_EIO, "the statement gave an unexpected result");
    if (c->code == VT_EUNAVAIL)
        snprintf(d->err, sizeof(d->err), "database unavailable: %.60s: %.400s", what, c->msg);
    else
        snprintf(d->err, sizeof(d->err), "database: %.60s: %.400s", what, c->msg);
    return c->code;
}

const struct db_ops db_pg_ops = {
    .name = "postgresql",
    .prepare = pg_prepare,
    .finalize = pg_finalize,
    .reset = pg_reset,
    .bind_text = pg_bind_text,
    .bind_textn = pg_bind_textn,
    .bind_int64 = pg_bind_int64,
    .bind_double = pg_bind_double,
    .bind_blob = pg_bind_blob,
    .bind_null = pg_bind_null,
    .step = pg_step,
    .col_null = pg_col_null,
    .col_int64 = pg_col_int64,
    .col_double = pg_col_double,
    .col_text = pg_col_text,
    .col_blob = pg_col_blob,
    .changes = pg_changes,
    .exec = pg_exec,
    .exec_later = pg_exec_later,
    .step_later = pg_step_later,
    .fail = pg_fail,
};
