/*
 * The bottom of the store (store_int.h): the handle's last error, its statement cache,
 * the one read loop, and the verbs every backend has (transactions, version, check,
 * close) passed on to the handle's backend (s->be). Nothing here calls any other file
 * of the store but db/: the verbs above call down into it, the backends and the open
 * (store.c) sit on top.
 */
#include "base/util.h"
#include "store/store_int.h"

#include <assert.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vt_store_errmsg(const struct vt_store *s)
{
    return s->conn.err;
}

/* Record the database's message for what failed and return VT_EIO. */
int store_fail(struct vt_store *s, const char *what)
{
    return s->conn.ops->fail(&s->conn, what);
}

/* Run sql; a failure says what it was doing ("database: WHAT: why"), never the SQL. */
int store_exec(struct vt_store *s, const char *sql, const char *what)
{
    return s->conn.ops->exec(&s->conn, sql, what);
}

#ifndef NDEBUG
/* Whether the cache holds a copy of sql, for the asserts: looks at every slot, so that
 * a copy after a hole (which store_prepare()'s lookup would not see) counts too. */
static int stmt_cache_holds(const struct vt_store *s, const char *sql)
{
    for (size_t i = 0; i < STMT_CACHE; i++)
        if (s->cache[i].sql && !strcmp(s->cache[i].sql, sql))
            return 1;
    return 0;
}
#endif

/*
 * Prepare sql, or reuse the statement prepared for the same text before: a handle
 * serves the same few dozen statements over and over (the web server's threads each
 * keep one). Statements are given back with store_finish(), never finalized directly. A
 * cached statement still out (a nested read of the same SQL) gets a fresh one.
 *
 * The cache's invariants, checked with assert() (NDEBUG is never set by the Makefile):
 * slots fill from the front and are emptied only by vt_store_close(); one slot per SQL
 * text; a slot's statement is out to one caller at a time, and reset (not busy) while
 * it is not out; store_finish() takes only statements store_prepare() gave, each once.
 */
int store_prepare(struct vt_store *s, const char *sql, struct db_stmt **st)
{
    size_t i;
    int cached = 0, rc;

    for (i = 0; i < STMT_CACHE && s->cache[i].sql; i++) {
        if (strcmp(s->cache[i].sql, sql))
            continue;
        cached = 1;
        /* out is ours to know: SQLite calls a statement not yet stepped "not busy" */
        if (s->cache[i].out)
            break;
        s->cache[i].out = 1;
        *st = s->cache[i].st;
        return 0;
    }
    rc = s->conn.ops->prepare(&s->conn, sql, !cached, st);
    if (rc)
        return rc;
    /*
     * One cached copy per SQL text: the copy for a nested read is finalized by store_finish(),
     * so the cache never fills with copies of a statement that was out once.
     */
    if (!cached) {
        for (; i < STMT_CACHE; i++) {
            if (!s->cache[i].sql) {
                assert(!stmt_cache_holds(s, sql));
                s->cache[i].sql = vt_xstrdup(sql);
                s->cache[i].st = *st;
                s->cache[i].out = 1;
                return 0;
            }
        }
    }
    s->uncached++; /* a nested copy, or the cache is full: store_finish() finalizes it */
    return 0;
}

/* Give back a statement from store_prepare(): reset if cached, finalized otherwise. */
void store_finish(struct vt_store *s, struct db_stmt *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < STMT_CACHE && s->cache[i].sql; i++) {
        if (s->cache[i].st == st) {
            assert(s->cache[i].out); /* given back twice, or never handed out */
            st->ops->reset(st, 1);
            s->cache[i].out = 0;
            return;
        }
    }
    assert(s->uncached > 0); /* not from store_prepare(), or finished twice */
    s->uncached--;
    st->ops->finalize(st);
}

void store_bind_text(struct db_stmt *st, int i, const char *v)
{
    db_bind_text(st, i, v);
}

char *store_col_dup(struct db_stmt *st, int i)
{
    const char *t = db_col_text(st, i);

    return t ? vt_xstrdup(t) : NULL;
}

/* Run a statement that returns no rows; finalizes it. */
int store_exec_later(struct vt_store *s, const char *sql, const char *what)
{
    return s->conn.ops->exec_later(&s->conn, sql, what);
}

int store_step_later(struct vt_store *s, struct db_stmt *st, const char *what)
{
    int rc = st->ops->step_later(st) == DB_DONE ? 0 : store_fail(s, what);

    store_finish(s, st);
    return rc;
}

int store_step_done(struct vt_store *s, struct db_stmt *st, const char *what)
{
    int rc = db_step(st) == DB_DONE ? 0 : store_fail(s, what);

    store_finish(s, st);
    return rc;
}

static int store_vrows(struct vt_store *s, const char *sql, const char *what, store_row_fn fn,
                       void *user, const char *binds, va_list ap)
{
    struct db_stmt *st;
    int rc = store_prepare(s, sql, &st), i = 1;

    if (rc)
        return rc;
    for (const char *b = binds; *b; b++, i++) {
        if (*b == 's')
            store_bind_text(st, i, va_arg(ap, const char *));
        else if (*b == 'I')
            db_bind_int64(st, i, va_arg(ap, int64_t));
        else if (*b == 'i')
            db_bind_int(st, i, va_arg(ap, int));
        else if (*b == 'd')
            db_bind_double(st, i, va_arg(ap, double));
        else
            assert(!"store_rows: unknown bind letter");
    }
    while ((rc = db_step(st)) == DB_ROW)
        if (fn(user, st))
            break;
    rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, what);
    store_finish(s, st);
    return rc;
}

int store_rows(struct vt_store *s, const char *sql, const char *what, store_row_fn fn, void *user,
               const char *binds, ...)
{
    va_list ap;
    int rc;

    va_start(ap, binds);
    rc = store_vrows(s, sql, what, fn, user, binds, ap);
    va_end(ap);
    return rc;
}

int store_read_array(struct vt_store *s, const char *sql, const char *what, size_t size,
                     void (*read)(struct db_stmt *st, void *item), void (*release)(void *item),
                     void **out, size_t *n, const char *binds, ...)
{
    struct store_array a = {NULL, 0, 0, size, read};
    va_list ap;
    int rc;

    va_start(ap, binds);
    rc = store_vrows(s, sql, what, store_array_row, &a, binds, ap);
    va_end(ap);
    *out = NULL;
    *n = 0;
    if (rc) {
        for (size_t i = 0; release && i < a.n; i++)
            release((char *)a.v + i * size);
        free(a.v);
        return rc;
    }
    *out = a.v;
    *n = a.n;
    return 0;
}

int store_array_row(void *user, struct db_stmt *st)
{
    struct store_array *a = user;
    char *item;

    vt_grow(&a->v, &a->cap, a->n + 1, a->size);
    item = (char *)a->v + a->n++ * a->size;
    memset(item, 0, a->size);
    a->read(st, item);
    return 0;
}

int vt_store_read_only(const struct vt_store *s)
{
    return s->read_only;
}

void vt_store_close(struct vt_store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < DF_CACHE; i++)
        free(s->df[i].term);
    /* first: the session's prepared statements end with it, not one DEALLOCATE each */
    if (s->be->close)
        s->be->close(s);
    /* a statement still out would keep sqlite3_close() from closing (and leak the db) */
    assert(!s->uncached);
    for (size_t i = 0; i < STMT_CACHE; i++) {
        assert(!s->cache[i].out);
        if (s->cache[i].st)
            s->cache[i].st->ops->finalize(s->cache[i].st);
        free(s->cache[i].sql);
    }
    sqlite3_close(s->conn.sqlite);
    free(s->dir);
    free(s);
}

int vt_store_begin(struct vt_store *s)
{
    return s->be->begin(s);
}

int vt_store_begin_read(struct vt_store *s)
{
    return s->be->begin_read(s);
}

long long vt_store_version(struct vt_store *s)
{
    return s->be->version(s);
}

int vt_store_commit(struct vt_store *s)
{
    return s->be->commit(s);
}

void vt_store_rollback(struct vt_store *s)
{
    s->be->rollback(s);
}

int vt_store_check(struct vt_store *s, int *ok)
{
    return s->be->check(s, ok);
}
