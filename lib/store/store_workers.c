/*
 * The registry of queue workers (store.h, "Workers"): a row per running `vidtheque
 * worker` process, under a lease of its own that its heartbeat extends, as a stage's.
 * A worker that stops cleanly removes its row; one killed leaves it, and the row's
 * lease running out says the worker is gone. `migrate` reads it to refuse while any
 * worker may still write to the catalog (migrate.c); metrics may list it.
 */
#include "base/util.h"
#include "store/store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vt_store_worker_beat(struct vt_store *s, const struct vt_worker_rec *w)
{
    struct db_stmt *st;
    int rc = store_prepare(s,
                           "INSERT INTO workers (owner, host, pid, stages, started_at, seen_at,"
                           " lease_until) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                           " ON CONFLICT (owner) DO UPDATE SET seen_at = excluded.seen_at,"
                           " lease_until = excluded.lease_until",
                           &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, w->owner);
    store_bind_text(st, 2, w->host);
    db_bind_int64(st, 3, w->pid);
    store_bind_text(st, 4, w->stages);
    db_bind_double(st, 5, w->started_at);
    db_bind_double(st, 6, w->seen_at);
    db_bind_double(st, 7, w->lease_until);
    return store_step_done(s, st, "register the worker");
}

int vt_store_worker_gone(struct vt_store *s, const char *owner)
{
    struct db_stmt *st;
    int rc = store_prepare(s, "DELETE FROM workers WHERE owner = ?", &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, owner);
    return store_step_done(s, st, "unregister the worker");
}

static void read_worker(struct db_stmt *st, void *item)
{
    struct vt_worker_rec *w = item;

    snprintf(w->owner, sizeof(w->owner), "%s", db_col_text(st, 0));
    snprintf(w->host, sizeof(w->host), "%s", db_col_text(st, 1));
    w->pid = db_col_int64(st, 2);
    snprintf(w->stages, sizeof(w->stages), "%s", db_col_text(st, 3));
    w->started_at = db_col_double(st, 4);
    w->seen_at = db_col_double(st, 5);
    w->lease_until = db_col_double(st, 6);
}

int vt_store_workers_list(struct vt_store *s, double now, struct vt_worker_rec **out, size_t *n)
{
    return store_read_array(s,
                            "SELECT owner, host, pid, stages, started_at, seen_at, lease_until"
                            " FROM workers WHERE lease_until >= ? ORDER BY started_at, owner",
                            "list workers", sizeof(**out), read_worker, NULL, (void **)out, n, "d",
                            now);
}
