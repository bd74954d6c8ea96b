/*
 * Statements of either database behind the store (store_int.h), in SQLite's calling
 * shape: prepare SQL with `?` placeholders, bind by 1-based index, step through the
 * rows, read columns by 0-based index, reset and step again. The store's row code
 * (videos, stages, outputs, vectors, lists) is written once against this and runs on
 * SQLite (db_sqlite.c, a thin wrapper around sqlite3_stmt) and on PostgreSQL
 * (db_pg.c: `?` becomes `$n`, values travel as text, rows come back whole).
 *
 * SQL given here must mean the same on both: COALESCE not IFNULL, CASE not boolean
 * arithmetic, integers for flags, CAST(? AS TEXT) where a bare parameter's type cannot
 * be inferred (PostgreSQL asks). What only one backend can say lives in that backend's
 * own files (the schema, FTS5 or tsvector, PRAGMAs).
 *
 * A column read returns what the row holds until the next step or reset: strings and
 * blobs are borrowed. A NULL reads as 0, 0.0, NULL (text) or a NULL blob of 0 bytes.
 *
 * The layer knows nothing of the store above it: it works on a struct db_conn (the
 * connection and the last failure's message), which the store's handle holds and
 * reads the message from (vt_store_errmsg).
 */
#ifndef VT_DB_H
#define VT_DB_H

#include <stddef.h>
#include <stdint.h>

struct db_stmt;
struct db_ops;
struct pg_conn;
struct sqlite3;

/* A connection of either database, and what the last failure on it was. */
struct db_conn {
    const struct db_ops *ops; /* the backend's statements */
    struct sqlite3 *sqlite;   /* SQLite: the connection; NULL on PostgreSQL */
    struct pg_conn *pg;       /* PostgreSQL (db_pg.h): the connection; NULL on SQLite */
    char err[512];            /* the last failure, one line ("database: WHAT: why") */
};

/* What db_step() says besides a VT_E* error code (negative). */
enum { DB_ROW = 1, DB_DONE = 2 };

struct db_ops {
    const char *name; /* "sqlite" or "postgresql" */
    /* A new statement for sql; persistent: it will be reused many times (cached). */
    int (*prepare)(struct db_conn *c, const char *sql, int persistent, struct db_stmt **st);
    void (*finalize)(struct db_stmt *st);
    /* Ready to run again with the same bindings (clear: and without them). */
    void (*reset)(struct db_stmt *st, int clear);
    void (*bind_text)(struct db_stmt *st, int i, const char *v);            /* NULL binds NULL */
    void (*bind_textn)(struct db_stmt *st, int i, const char *v, size_t n); /* n bytes of v */
    void (*bind_int64)(struct db_stmt *st, int i, int64_t v);
    void (*bind_double)(struct db_stmt *st, int i, double v);
    void (*bind_blob)(struct db_stmt *st, int i, const void *p, size_t n); /* copied */
    void (*bind_null)(struct db_stmt *st, int i);
    int (*step)(struct db_stmt *st);
    int (*col_null)(struct db_stmt *st, int i);
    int64_t (*col_int64)(struct db_stmt *st, int i);
    double (*col_double)(struct db_stmt *st, int i);
    const char *(*col_text)(struct db_stmt *st, int i);
    const void *(*col_blob)(struct db_stmt *st, int i, size_t *n);
    /* Rows changed by the last INSERT, UPDATE or DELETE run on c. */
    int64_t (*changes)(struct db_conn *c);
    /* Run sql (one or more statements, no parameters, no rows wanted). */
    int (*exec)(struct db_conn *c, const char *sql, const char *what);
    /* Inside a transaction, where the backend can: run sql (one statement, no
     * parameters, no rows wanted) with the next statement that needs an answer, in its
     * round trip (PostgreSQL); elsewhere now. A failure is that next statement's (or the
     * commit's), which then fails and leaves the transaction to be rolled back. */
    int (*exec_later)(struct db_conn *c, const char *sql, const char *what);
    /* The same for a bound statement that returns no rows, whose count of changed rows
     * nobody reads; the statement may be reset and bound again at once. */
    int (*step_later)(struct db_stmt *st);
    /* Record the last failure on c as (into c->err) "database: WHAT: why"; the VT_E* code for it.
     */
    int (*fail)(struct db_conn *c, const char *what);
};

/* Every statement starts with its backend's operations. */
struct db_stmt {
    const struct db_ops *ops;
};

extern const struct db_ops db_sqlite_ops;

static inline void db_bind_text(struct db_stmt *st, int i, const char *v)
{
    st->ops->bind_text(st, i, v);
}
static inline void db_bind_textn(struct db_stmt *st, int i, const char *v, size_t n)
{
    st->ops->bind_textn(st, i, v, n);
}
static inline void db_bind_int64(struct db_stmt *st, int i, int64_t v)
{
    st->ops->bind_int64(st, i, v);
}
static inline void db_bind_int(struct db_stmt *st, int i, int v)
{
    st->ops->bind_int64(st, i, v);
}
static inline void db_bind_double(struct db_stmt *st, int i, double v)
{
    st->ops->bind_double(st, i, v);
}
static inline void db_bind_blob(struct db_stmt *st, int i, const void *p, size_t n)
{
    st->ops->bind_blob(st, i, p, n);
}
static inline void db_bind_null(struct db_stmt *st, int i)
{
    st->ops->bind_null(st, i);
}
/* DB_ROW (a row to read), DB_DONE, or an error (its message: db_ops.fail). */
static inline int db_step(struct db_stmt *st)
{
    return st->ops->step(st);
}
static inline void db_reset(struct db_stmt *st)
{
    st->ops->reset(st, 0);
}
static inline int db_col_null(struct db_stmt *st, int i)
{
    return st->ops->col_null(st, i);
}
static inline int64_t db_col_int64(struct db_stmt *st, int i)
{
    return st->ops->col_int64(st, i);
}
static inline int db_col_int(struct db_stmt *st, int i)
{
    return (int)st->ops->col_int64(st, i);
}
static inline double db_col_double(struct db_stmt *st, int i)
{
    return st->ops->col_double(st, i);
}
static inline const char *db_col_text(struct db_stmt *st, int i)
{
    return st->ops->col_text(st, i);
}
static inline const void *db_col_blob(struct db_stmt *st, int i, size_t *n)
{
    return st->ops->col_blob(st, i, n);
}

#endif
