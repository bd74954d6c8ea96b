/*
 * What the PostgreSQL side of the store (store_pg.c, store_search_pg.c) needs from
 * db.h's statements on libpq (db_pg.c): the connection a handle holds, connecting and
 * reconnecting, whether it is inside a transaction, and `?` → `$n`. Only the store's
 * PostgreSQL files include this header (it pulls in <libpq-fe.h>).
 */
#ifndef VT_DB_PG_H
#define VT_DB_PG_H

#include "store/db/db.h"

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

struct pg_later; /* db_pg.c */

struct pg_conn {
    PGconn *conn;
    unsigned long gen;   /* bumped by each reconnection: statements prepare again */
    unsigned long names; /* prepared statements named so far on this handle */
    int in_tx;           /* BEGIN given (db_pg_begin), COMMIT or ROLLBACK not yet */
    int tx_sent;         /* the open transaction's BEGIN has gone to the server */
    /* statements whose answer nobody waits for (db_pg_begin, db_pg_later, db_ops's
     * exec_later and step_later), sent in one pipeline with the next statement that
     * needs one: a round trip each saved. begin_later: how many the BEGIN itself is. */
    struct pg_later *later;
    size_t nlater, later_cap, begin_later;
    unsigned notify; /* stages the open transaction made runnable: NOTIFY at commit */
    int lost;        /* the server went away: reconnect before the next statement */
    int fails;       /* reconnections failed in a row (db_pg_ready's back-off) */
    double retry_at; /* monotonic seconds: no reconnection before then */
    uint64_t jitter; /* the back-off's random state */
    int64_t changes; /* rows changed by the last INSERT, UPDATE or DELETE */
    /* round trips to the server so far (statements, PREPAREs, BEGIN, COMMIT, ROLLBACK):
     * what a search costs beyond SQLite is mostly these, so the benches count them */
    unsigned long trips;
    /* transactions begun on this handle, and which of them was the last read-only one:
     * within one read's snapshot what the search reads of the index's size stays */
    unsigned long tx_serial, read_serial;
    /* the last failure, for db_ops.fail: the server's message (first line), its SQLSTATE */
    char msg[400];
    char state[6];
    int code; /* its VT_E* code */
    /* store_pg.c: gen + 1 of the session that ran LISTEN vidtheque_jobs, 0 when none did
     * (a reconnection starts a session that listens to nothing) */
    unsigned long listen_gen;
    /* store_pg.c, a picking handle's wait (vt_store_wait_stages): the session registered in
     * waiters (gen + 1, or 1 for the listener session; 0: none), the stages it registered,
     * its channel, and whether a wake marked it not idle since it last said it was */
    unsigned long wait_gen;
    unsigned wait_stages;
    char wait_channel[32];
    int woken;
    /* store_pg.c's waking: how many times the open transaction named each stage (by the
     * stage table's index, saturating): vidtheque_wake after its COMMIT */
    unsigned short wake_n[32];
    /* pooler=transaction (the URL's option, db_pg_connect): every statement unnamed, no
     * session setting; each transaction may run on another server session */
    int pooler;
    /* listen_host / listen_port: where a pooled handle's LISTEN goes (a server session of
     * its own, direct or through a session-mode pool), over the URL (without our options);
     * neither set: waiting for work polls */
    char *url, *listen_host, *listen_port;
    PGconn *listener;            /* that session, opened at the first wait, or NULL */
    double poll_next, poll_step; /* polling: when to look next (monotonic s), the step now */
    long long poll_version;      /* the version the last poll saw (0: none yet) */
};

extern const struct db_ops db_pg_ops;

/* Connect with the libpq URL url (application_name and connect_timeout defaulted):
 * 0 with *out (caller frees with db_pg_disconnect), or VT_EUNAVAIL / VT_EINVAL with
 * one line in err. The URL's own options pooler=transaction|session|none, listen_host
 * and listen_port are taken out before libpq reads it (see struct pg_conn). */
int db_pg_connect(const char *url, struct pg_conn **out, char *err, size_t errlen);
void db_pg_disconnect(struct pg_conn *c);
/* A pooled handle's LISTEN session (listen_host / listen_port): opened when none is
 * open or it went away (*fresh 1: it listens to nothing yet); the connection, or NULL
 * (none configured, or it failed: the message on c). */
PGconn *db_pg_listener(struct pg_conn *c, int *fresh);
/* Before a statement: a lost connection is reset (once) when not in a transaction.
 * 0, or VT_EUNAVAIL recorded on c. */
int db_pg_ready(struct pg_conn *c);
/* Open a transaction with begin_sql ("BEGIN ..."): nothing is sent yet; the BEGIN goes
 * with the transaction's first statement, in the same round trip. Through a pool
 * (pooler=transaction) the session's bounds (lock_timeout,
 * idle_in_transaction_session_timeout) follow it as SET LOCAL: no session setting lasts
 * there. */
void db_pg_begin(struct pg_conn *c, const char *begin_sql);
/* Defer sql (one statement, no parameters, no rows wanted) to the next round trip. */
void db_pg_later(struct pg_conn *c, const char *sql);
/* Forget the deferred statements (the transaction is rolled back, or was never sent). */
void db_pg_later_drop(struct pg_conn *c);
/* Run sql (statements separated by ';', none holding one in a quoted string or a name,
 * no parameters) after the deferred statements, in one round trip: 0 with *r the
 * result of its last statement, as PQexec's (the caller reads its status and clears
 * it), or the code of a failure recorded on c. */
int db_pg_exec_after(struct pg_conn *c, const char *sql, PGresult **r);
/* The same with *r the result of statement keep of sql (counted from 0; -1 the last): a
 * statement after it that fails does not fail the call (what keep did stands). */
int db_pg_exec_after_at(struct pg_conn *c, const char *sql, int keep, PGresult **r);
/* Record a failed result (or the connection's message when r is NULL) on c: its code. */
int db_pg_record(struct pg_conn *c, PGresult *r);

/* sql with each `?` or `?NNN` outside quotes and comments as `$n` (SQLite's numbering:
 * a bare ? is one more than the largest number so far). Caller frees. *nparams gets the
 * largest number; used, when not NULL, gets a malloc'd array of nparams flags (the
 * numbers that appear; caller frees). NULL when a number is out of range (0 or > 32766). */
char *db_pg_convert(const char *sql, int *nparams, unsigned char **used);

#endif
