/*
 * db.h on SQLite: each operation is the sqlite3_* call of the same name. Statements
 * are prepared for the connection c->sqlite and cached by the store (store_prepare);
 * nothing here keeps state of its own but the last failure's message, in c->err.
 */
#include "store/db/db_sqlite.h"

#include "base/util.h"
#include "vidtheque.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

struct sq_stmt {
    struct db_stmt base;
    sqlite3_stmt *st;
};

static int sq_fail(struct db_conn *c, const char *what);

static sqlite3_stmt *raw(struct db_stmt *st)
{
    return ((struct sq_stmt *)st)->st;
}

sqlite3_stmt *db_sqlite_stmt(struct db_stmt *st)
{
    return st->ops == &db_sqlite_ops ? raw(st) : NULL;
}

static int sq_prepare(struct db_conn *c, const char *sql, int persistent, struct db_stmt **out)
{
    sqlite3_stmt *st;
    struct sq_stmt *w;

    *out = NULL;
    if (sqlite3_prepare_v3(c->sqlite, sql, -1, persistent ? SQLITE_PREPARE_PERSISTENT : 0, &st,
                           NULL) != SQLITE_OK)
        return sq_fail(c, "prepare a query");
    w = vt_xcalloc(1, sizeof(*w));
    w->base.ops = &db_sqlite_ops;
    w->st = st;
    *out = &w->base;
    return 0;
}

static void sq_finalize(struct db_stmt *st)
{
    sqlite3_finalize(raw(st));
    free(st);
}

static void sq_reset(struct db_stmt *st, int clear)
{
    sqlite3_reset(raw(st));
    if (clear)
        sqlite3_clear_bindings(raw(st));
}

static void sq_bind_text(struct db_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(raw(st), i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(raw(st), i);
}

static void sq_bind_textn(struct db_stmt *st, int i, const char *v, size_t n)
{
    sqlite3_bind_text64(raw(st), i, v, n, SQLITE_TRANSIENT, SQLITE_UTF8);
}

static void sq_bind_int64(struct db_stmt *st, int i, int64_t v)
{
    sqlite3_bind_int64(raw(st), i, v);
}

static void sq_bind_double(struct db_stmt *st, int i, double v)
{
    sqlite3_bind_double(raw(st), i, v);
}

static void sq_bind_blob(struct db_stmt *st, int i, const void *p, size_t n)
{
    sqlite3_bind_blob64(raw(st), i, p, n, SQLITE_TRANSIENT);
}

static void sq_bind_null(struct db_stmt *st, int i)
{
    sqlite3_bind_null(raw(st), i);
}

static int sq_step(struct db_stmt *st)
{
    int rc = sqlite3_step(raw(st));

    if (rc == SQLITE_ROW)
        return DB_ROW;
    if (rc == SQLITE_DONE)
        return DB_DONE;
    return rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? VT_EBUSY : VT_EIO;
}

static int sq_col_null(struct db_stmt *st, int i)
{
    return sqlite3_column_type(raw(st), i) == SQLITE_NULL;
}

static int64_t sq_col_int64(struct db_stmt *st, int i)
{
    return sqlite3_column_int64(raw(st), i);
}

static double sq_col_double(struct db_stmt *st, int i)
{
    return sqlite3_column_double(raw(st), i);
}

static const char *sq_col_text(struct db_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(raw(st), i);
}

static const void *sq_col_blob(struct db_stmt *st, int i, size_t *n)
{
    const void *p = sqlite3_column_blob(raw(st), i);

    *n = (size_t)sqlite3_column_bytes(raw(st), i);
    return p;
}

static int64_t sq_changes(struct db_conn *c)
{
    return sqlite3_changes64(c->sqlite);
}

static int sq_exec(struct db_conn *c, const char *sql, const char *what)
{
    if (sqlite3_exec(c->sqlite, sql, NULL, NULL, NULL) != SQLITE_OK)
        return sq_fail(c, what);
    return 0;
}

static int sq_fail(struct db_conn *c, const char *what)
{
    int code = sqlite3_errcode(c->sqlite);

    snprintf(c->err, sizeof(c->err), "database: %.60s: %.400s", what, sqlite3_errmsg(c->sqlite));
    return code == SQLITE_BUSY || code == SQLITE_LOCKED ? VT_EBUSY : VT_EIO;
}

const struct db_ops db_sqlite_ops = {
    .name = "sqlite",
    .prepare = sq_prepare,
    .finalize = sq_finalize,
    .reset = sq_reset,
    .bind_text = sq_bind_text,
    .bind_textn = sq_bind_textn,
    .bind_int64 = sq_bind_int64,
    .bind_double = sq_bind_double,
    .bind_blob = sq_bind_blob,
    .bind_null = sq_bind_null,
    .step = sq_step,
    .col_null = sq_col_null,
    .col_int64 = sq_col_int64,
    .col_double = sq_col_double,
    .col_text = sq_col_text,
    .col_blob = sq_col_blob,
    .changes = sq_changes,
    .exec = sq_exec,
    /* SQLite runs in this process: nothing to save by waiting, they run now */
    .exec_later = sq_exec,
    .step_later = sq_step,
    .fail = sq_fail,
};
