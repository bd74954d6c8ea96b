/*
 * The store's rows of videos and of their stages (see store.h), and the lists
 * (playlists, channels) that videos were added from: what the queue, `show` and
 * `list` read and write about a video as a whole, as opposed to its pages of
 * content (store_rows.c) and its search index (store_search.c).
 */
/* The SQL whose state names are written with the state macro is kept out of
 * clang-format: each use stays on one line, where test_state_sql.c reads it. */
#include "base/util.h"
#include "store/store_int.h"

#include <assert.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- videos ---- */

#define VIDEO_COLS                                                                                 \
    "id, content_key, source_kind, source_path, title, channel, published, language, container, "  \
    "duration_s, width, height, rotation, fps, has_video, has_audio, size_bytes, index_state, "    \
    "data_status, created_at, indexed_at, stt_mode, source_url, page_url, platform_id, "           \
    "extractor, "                                                                                  \
    "description, thumbnail, captions_path, captions_model, keep_media, list_id"

static void video_from_row(struct db_stmt *st, struct vt_video_rec *v)
{
    memset(v, 0, sizeof(*v));
    snprintf(v->id, sizeof(v->id), "%s", db_col_text(st, 0));
    v->content_key = store_col_dup(st, 1);
    v->source_kind = store_col_dup(st, 2);
    v->source_path = store_col_dup(st, 3);
    v->title = store_col_dup(st, 4);
    v->channel = store_col_dup(st, 5);
    v->published = store_col_dup(st, 6);
    v->language = store_col_dup(st, 7);
    v->container = store_col_dup(st, 8);
    v->duration_s = db_col_double(st, 9);
    v->width = db_col_int(st, 10);
    v->height = db_col_int(st, 11);
    v->rotation = db_col_int(st, 12);
    v->fps = db_col_double(st, 13);
    v->has_video = db_col_int(st, 14);
    v->has_audio = db_col_int(st, 15);
    v->size_bytes = db_col_int64(st, 16);
    /* a state this version does not know reads as the first (queued, missing) */
    if (vt_index_state_parse(db_col_text(st, 17), &v->index_state))
        v->index_state = VT_INDEX_QUEUED;
    if (vt_data_status_parse(db_col_text(st, 18), &v->data_status))
        v->data_status = VT_DATA_MISSING;
    v->created_at = db_col_double(st, 19);
    v->indexed_at = db_col_double(st, 20);
    v->stt_mode = store_col_dup(st, 21);
    v->source_url = store_col_dup(st, 22);
    v->page_url = store_col_dup(st, 23);
    v->platform_id = store_col_dup(st, 24);
    v->extractor = store_col_dup(st, 25);
    v->description = store_col_dup(st, 26);
    v->thumbnail = store_col_dup(st, 27);
    v->captions_path = store_col_dup(st, 28);
    v->captions_model = store_col_dup(st, 29);
    v->keep_media = db_col_int(st, 30);
    v->list_id = db_col_int64(st, 31);
}

void vt_video_rec_release(struct vt_video_rec *v)
{
    if (!v)
        return;
    free(v->content_key);
    free(v->source_kind);
    free(v->source_path);
    free(v->title);
    free(v->channel);
    free(v->published);
    free(v->language);
    free(v->container);
    free(v->stt_mode);
    free(v->source_url);
    free(v->page_url);
    free(v->platform_id);
    free(v->extractor);
    free(v->description);
    free(v->thumbnail);
    free(v->captions_path);
    free(v->captions_model);
    memset(v, 0, sizeof(*v));
}

int vt_store_video_get(struct vt_store *s, const char *id, struct vt_video_rec *v)
{
    struct db_stmt *st;
    int rc = store_prepare(s, "SELECT " VIDEO_COLS " FROM videos WHERE id = ?", &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    rc = db_step(st);
    if (rc == DB_ROW) {
        video_from_row(st, v);
        rc = 0;
    } else if (rc == DB_DONE) {
        snprintf(s->conn.err, sizeof(s->conn.err), "no video '%s'", id);
        rc = VT_ENOTFOUND;
    } else {
        rc = store_fail(s, "read video");
    }
    store_finish(s, st);
    return rc;
}

static int lookup_id(struct vt_store *s, const char *sql, const char *arg, char id[65])
{
    struct db_stmt *st;
    int rc = store_prepare(s, sql, &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, arg);
    rc = db_step(st);
    if (rc == DB_ROW) {
        if (id)
            snprintf(id, 65, "%s", db_col_text(st, 0));
        rc = 0;
    } else {
        rc = rc == DB_DONE ? VT_ENOTFOUND : store_fail(s, "look up video");
    }
    store_finish(s, st);
    return rc;
}

int vt_store_video_find_key(struct vt_store *s, const char *content_key, char id[65])
{
    return lookup_id(s, "SELECT id FROM videos WHERE content_key = ?", content_key, id);
}

int vt_store_video_id_taken(struct vt_store *s, const char *id)
{
    int rc = lookup_id(s, "SELECT id FROM videos WHERE id = ?", id, NULL);

    return rc == 0 ? 1 : rc == VT_ENOTFOUND ? 0 : rc;
}

int vt_store_video_insert(struct vt_store *s, const struct vt_video_rec *v)
{
    struct db_stmt *st;
    /* seq: the order of adding (PostgreSQL's writers run at once: a sequence) */
    int rc = store_prepare(
        s,
        s->conn.pg ? "INSERT INTO videos (" VIDEO_COLS ", seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                     "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?, nextval('videos_seq'))"
                   : "INSERT INTO videos (" VIDEO_COLS ", seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                     "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                     " (SELECT coalesce(max(seq),0)+1 FROM videos))",
        &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, v->id);
    store_bind_text(st, 2, v->content_key);
    store_bind_text(st, 3, v->source_kind);
    store_bind_text(st, 4, v->source_path);
    store_bind_text(st, 5, v->title);
    store_bind_text(st, 6, v->channel);
    store_bind_text(st, 7, v->published);
    store_bind_text(st, 8, v->language);
    store_bind_text(st, 9, v->container);
    db_bind_double(st, 10, v->duration_s);
    db_bind_int(st, 11, v->width);
    db_bind_int(st, 12, v->height);
    db_bind_int(st, 13, v->rotation);
    db_bind_double(st, 14, v->fps);
    db_bind_int(st, 15, v->has_video);
    db_bind_int(st, 16, v->has_audio);
    db_bind_int64(st, 17, v->size_bytes);
    store_bind_text(st, 18, vt_index_state_name(v->index_state));
    store_bind_text(st, 19, vt_data_status_name(v->data_status));
    db_bind_double(st, 20, v->created_at);
    db_bind_double(st, 21, v->indexed_at);
    store_bind_text(st, 22, v->stt_mode ? v->stt_mode : "auto");
    store_bind_text(st, 23, v->source_url);
    store_bind_text(st, 24, v->page_url);
    store_bind_text(st, 25, v->platform_id);
    store_bind_text(st, 26, v->extractor);
    store_bind_text(st, 27, v->description);
    store_bind_text(st, 28, v->thumbnail);
    store_bind_text(st, 29, v->captions_path);
    store_bind_text(st, 30, v->captions_model);
    db_bind_int(st, 31, v->keep_media);
    if (v->list_id)
        db_bind_int64(st, 32, v->list_id);
    else
        db_bind_null(st, 32);
    return store_step_done(s, st, "insert video");
}

int vt_store_video_update_meta(struct vt_store *s, const struct vt_video_rec *v)
{
    struct db_stmt *st;
    int rc =
        store_prepare(s,
                      "UPDATE videos SET title=?, channel=?, published=?, language=?, container=?,"
                      " duration_s=?, width=?, height=?, rotation=?, fps=?, has_video=?,"
                      " has_audio=?, size_bytes=? WHERE id=?",
                      &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, v->title);
    store_bind_text(st, 2, v->channel);
    store_bind_text(st, 3, v->published);
    store_bind_text(st, 4, v->language);
    store_bind_text(st, 5, v->container);
    db_bind_double(st, 6, v->duration_s);
    db_bind_int(st, 7, v->width);
    db_bind_int(st, 8, v->height);
    db_bind_int(st, 9, v->rotation);
    db_bind_double(st, 10, v->fps);
    db_bind_int(st, 11, v->has_video);
    db_bind_int(st, 12, v->has_audio);
    db_bind_int64(st, 13, v->size_bytes);
    store_bind_text(st, 14, v->id);
    return store_step_done(s, st, "update video");
}

int vt_store_video_update_source(struct vt_store *s, const struct vt_video_rec *v)
{
    struct db_stmt *st;
    int rc =
        store_prepare(s,
                      "UPDATE videos SET source_path=?, page_url=?, platform_id=?, extractor=?,"
                      " description=?, thumbnail=?, captions_path=?, captions_model=? WHERE id=?",
                      &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, v->source_path);
    store_bind_text(st, 2, v->page_url);
    store_bind_text(st, 3, v->platform_id);
    store_bind_text(st, 4, v->extractor);
    store_bind_text(st, 5, v->description);
    store_bind_text(st, 6, v->thumbnail);
    store_bind_text(st, 7, v->captions_path);
    store_bind_text(st, 8, v->captions_model);
    store_bind_text(st, 9, v->id);
    return store_step_done(s, st, "update video source");
}

int vt_store_video_set_state(struct vt_store *s, const char *id, enum vt_index_state index_state,
                             enum vt_data_status data_status, double indexed_at)
{
    struct db_stmt *st;
    int rc = 0;

    /* the video is indexed: a bounded step of merging the full-text index keeps
     * searches fast as the library grows */
    if (indexed_at > 0)
        rc = vt_store_maintain(s, VT_MAINTAIN_STEP);
    if (!rc)
        rc = store_prepare(
            s, "UPDATE videos SET index_state=?, data_status=?, indexed_at=? WHERE id=?", &st);
    if (rc)
        return rc;
    store_bind_text(st, 1, vt_index_state_name(index_state));
    store_bind_text(st, 2, vt_data_status_name(data_status));
    db_bind_double(st, 3, indexed_at);
    store_bind_text(st, 4, id);
    /* nothing reads what it changed: it goes with the next statement or the commit */
    return store_step_later(s, st, "update video state");
}

int vt_store_video_delete(struct vt_store *s, const char *id)
{
    struct db_stmt *st;
    /* PostgreSQL: the words only this video holds are found from its rows, before they go */
    int rc = s->conn.pg ? store_pg_forget_words(s, id) : 0;

    if (!rc)
        rc = store_prepare(s, "DELETE FROM videos WHERE id = ?", &st);
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    rc = store_step_done(s, st, "delete video");
    if (!rc && s->conn.ops->changes(&s->conn) == 0) {
        snprintf(s->conn.err, sizeof(s->conn.err), "no video '%s'", id);
        rc = VT_ENOTFOUND;
    }
    /* words said or shown only in this video leave the lookup tables with it */
    if (!rc && !s->conn.pg)
        rc = store_exec(s,
                        "DELETE FROM phonetic WHERE term NOT IN (SELECT term FROM docs_vocab);"
                        "DELETE FROM fuzzy WHERE term NOT IN (SELECT term FROM docs_vocab);",
                        "forget the removed video's words");
    return rc;
}

struct each_video {
    int (*fn)(void *user, const struct vt_video_rec *v);
    void *user;
};

static int each_video_row(void *user, struct db_stmt *st)
{
    struct each_video *e = user;
    struct vt_video_rec v;
    int stop;

    video_from_row(st, &v);
    stop = e->fn(e->user, &v);
    vt_video_rec_release(&v);
    return stop;
}

int vt_store_video_each(struct vt_store *s, int (*fn)(void *user, const struct vt_video_rec *v),
                        void *user)
{
    struct each_video e = {fn, user};

    return store_rows(s, "SELECT " VIDEO_COLS " FROM videos ORDER BY seq", "list videos",
                      each_video_row, &e, "");
}

/* ---- stages ---- */

static void read_stage(struct db_stmt *st, void *item)
{
    struct vt_stage_rec *x = item;

    snprintf(x->name, sizeof(x->name), "%s", db_col_text(st, 0));
    /* a state this version does not know is run again, as queued */
    if (vt_state_parse(db_col_text(st, 1), &x->state))
        x->state = VT_STATE_QUEUED;
    x->model = store_col_dup(st, 2);
    x->error = store_col_dup(st, 3);
    x->owner = store_col_dup(st, 4);
    x->started_at = db_col_double(st, 5);
    x->took_s = db_col_double(st, 6);
    x->attempts = db_col_int(st, 7);
    x->retry_at = db_col_double(st, 8);
    x->lease_until = db_col_double(st, 9);
    x->priority = db_col_int(st, 10);
    x->queued_at = db_col_double(st, 11);
    x->attempts_base = db_col_int(st, 12);
}

static void release_stage(void *item)
{
    struct vt_stage_rec *x = item;

    free(x->model);
    free(x->error);
    free(x->owner);
}

int vt_store_stages(struct vt_store *s, const char *id, struct vt_stage_rec **recs, size_t *n)
{
    return store_read_array(
        s,
        "SELECT name, state, model, error, owner, started_at, took_s, attempts,"
        " retry_at, lease_until, priority, queued_at, attempts_base FROM stages WHERE video_id = ?"
        " ORDER BY ord",
        "read stages", sizeof(**recs), read_stage, release_stage, (void **)recs, n, "s", id);
}

void vt_stage_recs_free(struct vt_stage_rec *recs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        release_stage(&recs[i]);
    free(recs);
}

int vt_store_stage_put(struct vt_store *s, const char *id, const struct vt_stage_rec *r)
{
    struct db_stmt *st;
    /* a stage that becomes queued is stamped now (the queue's age order); the lease is
     * the claim's to set, and a put is never a claim; a new row takes the priority of
     * its video's other stages */
    /* clang-format off */
    int rc = store_prepare(
        s,
        "INSERT INTO stages (video_id, name, ord, state, model, error, owner,"
        " started_at, took_s, attempts, retry_at, lease_until, priority, queued_at,"
        " attempts_base)"
        " VALUES (?1, ?2, (SELECT count(*) FROM stages WHERE video_id = ?1), ?3, ?4, ?5, ?6,"
        " ?7, ?8, ?9, ?10, 0,"
        " (SELECT coalesce(max(priority), 0) FROM stages WHERE video_id = ?1), ?11, ?12)"
        " ON CONFLICT (video_id, name) DO UPDATE SET state=?3, model=?4,"
        " error=?5, owner=?6, started_at=?7, took_s=?8, attempts=?9, retry_at=?10,"
        " attempts_base=?12,"
        " lease_until=0, queued_at=CASE WHEN ?3 = " VT_SQL_STATE(queued)
        " AND stages.state <> " VT_SQL_STATE(queued)
        " THEN ?11 ELSE stages.queued_at END",
        &st);
    /* clang-format on */

    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    store_bind_text(st, 2, r->name);
    store_bind_text(st, 3, vt_state_name(r->state));
    store_bind_text(st, 4, r->model);
    store_bind_text(st, 5, r->error);
    store_bind_text(st, 6, r->owner);
    db_bind_double(st, 7, r->started_at);
    db_bind_double(st, 8, r->took_s);
    db_bind_int(st, 9, r->attempts);
    db_bind_double(st, 10, r->retry_at);
    db_bind_double(st, 11, vt_wall_s());
    db_bind_int(st, 12, r->attempts_base);
    rc = store_step_done(s, st, "record stage");
    /* a queued stage, or a settled one (the stages after it may run): wake workers */
    if (rc || r->state == VT_STATE_RUNNING)
        return rc;
    return store_notify_work(s, store_woken_stages(r->name, r->state));
}

/* HELD when the last UPDATE changed the row, else LOST (the row differs) or GONE. */
static int lease_after_update(struct vt_store *s, const char *id, const char *stage,
                              enum vt_lease *res)
{
    struct db_stmt *st;
    int rc;

    if (s->conn.ops->changes(&s->conn) > 0) {
        *res = VT_LEASE_HELD;
        return 0;
    }
    rc = store_prepare(s, "SELECT 1 FROM stages WHERE video_id = ? AND name = ?", &st);
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    store_bind_text(st, 2, stage);
    rc = db_step(st);
    *res = rc == DB_ROW ? VT_LEASE_LOST : VT_LEASE_GONE;
    rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, "read stage");
    store_finish(s, st);
    return rc;
}

int vt_store_stage_claim(struct vt_store *s, const char *id, const struct vt_stage_rec *seen,
                         const char *owner, double now, double lease_until, enum vt_lease *res)
{
    struct db_stmt *st;
    /* clang-format off */
    int rc = store_prepare(
        s,
        "UPDATE stages SET state = " VT_SQL_STATE(running) ", owner = ?3, started_at = ?4,"
        " took_s = 0, retry_at = 0, error = NULL, attempts = attempts + 1, lease_until = ?8"
        " WHERE video_id = ?1 AND name = ?2 AND state = ?5 AND owner IS NOT DISTINCT FROM ?6"
        " AND attempts = ?7",
        &st);
    /* clang-format on */

    if (rc)
        return rc;
    assert(owner && seen->state != VT_STATE_DONE && seen->state != VT_STATE_SKIPPED);
    store_bind_text(st, 1, id);
    store_bind_text(st, 2, seen->name);
    store_bind_text(st, 3, owner);
    db_bind_double(st, 4, now);
    store_bind_text(st, 5, vt_state_name(seen->state));
    store_bind_text(st, 6, seen->owner);
    db_bind_int(st, 7, seen->attempts);
    db_bind_double(st, 8, lease_until);
    rc = store_step_done(s, st, "claim stage");
    /*
     * PostgreSQL: the claim's commit need not wait for its WAL to reach the disk
     * (synchronous_commit off for this transaction only; the settle's stays durable).
     * A claim lost in a server crash leaves the row as it was before it (queued, or
     * running under the lease that was expiring): the stage is picked again, and the
     * worker that believed it held it is refused at its settle, whose fence (running,
     * owner, attempts) the row no longer matches; the settle's own durable commit
     * flushes the WAL up to itself, the claim's record included, so no settled stage
     * ever rests on a claim the disk does not have. What is lost is an fsync per
     * claim (bench/queue_bench.sh, section 1).
     */
    if (!rc && s->conn.pg)
        rc = store_exec_later(s, "SET LOCAL synchronous_commit = off", "claim stage");
    return rc ? rc : lease_after_update(s, id, seen->name, res);
}

int vt_store_stage_lease(struct vt_store *s, const char *id, const char *stage, const char *owner,
                         int attempts, enum vt_lease *res)
{
    struct db_stmt *st;
    int rc = store_prepare(
        s, "SELECT state, owner, attempts FROM stages WHERE video_id = ? AND name = ?", &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    store_bind_text(st, 2, stage);
    rc = db_step(st);
    if (rc == DB_ROW) {
        const char *state = db_col_text(st, 0);
        const char *o = db_col_text(st, 1);

        *res = state && !strcmp(state, vt_state_name(VT_STATE_RUNNING)) && o && !strcmp(o, owner) &&
                       db_col_int(st, 2) == attempts
                   ? VT_LEASE_HELD
                   : VT_LEASE_LOST;
        rc = 0;
    } else {
        *res = VT_LEASE_GONE;
        rc = rc == DB_DONE ? 0 : store_fail(s, "read stage");
    }
    store_finish(s, st);
    return rc;
}

int vt_store_stage_finish(struct vt_store *s, const char *id, const struct vt_stage_rec *r,
                          const char *owner, enum vt_lease *res)
{
    struct db_stmt *st;
    /* clang-format off */
    int rc = store_prepare(s,
                           "UPDATE stages SET state = ?3, model = ?4, error = ?5, owner = NULL,"
                           " took_s = ?6, retry_at = ?8, lease_until = 0,"
                           " queued_at = CASE WHEN ?3 = " VT_SQL_STATE(queued)
                           " THEN ?10 ELSE queued_at END WHERE video_id = ?1 AND name = ?2"
                           " AND state = " VT_SQL_STATE(running) " AND owner = ?9"
                           " AND attempts = ?7",
                           &st);
    /* clang-format on */

    if (rc)
        return rc;
    assert(r->state != VT_STATE_RUNNING);
    store_bind_text(st, 1, id);
    store_bind_text(st, 2, r->name);
    store_bind_text(st, 3, vt_state_name(r->state));
    store_bind_text(st, 4, r->model);
    store_bind_text(st, 5, r->error);
    db_bind_double(st, 6, r->took_s);
    db_bind_int(st, 7, r->attempts);
    db_bind_double(st, 8, r->retry_at);
    store_bind_text(st, 9, owner);
    db_bind_double(st, 10, vt_store_now(s));
    rc = store_step_done(s, st, "record stage");
    if (!rc)
        rc = lease_after_update(s, id, r->name, res);
    if (!rc && *res == VT_LEASE_LOST)
        snprintf(s->conn.err, sizeof(s->conn.err), "lease lost: stage '%s' of %s was taken over",
                 r->name, id);
    return rc || *res != VT_LEASE_HELD
               ? rc
               : store_notify_work(s, store_woken_stages(r->name, r->state));
}

static void read_id(struct db_stmt *st, void *item)
{
    *(char **)item = store_col_dup(st, 0);
}

static void release_id(void *item)
{
    free(*(char **)item);
}

int vt_store_unfinished(struct vt_store *s, int n_stages, char ***ids, size_t *n)
{
    return store_read_array(
        s,
        "SELECT id FROM videos WHERE id IN (SELECT video_id FROM stages WHERE state"
        " IN (?1, ?2)) OR index_state IN (?4, ?5)"
        " OR (SELECT count(*) FROM stages WHERE video_id = videos.id) < ?3 ORDER BY seq",
        "list unfinished videos", sizeof(**ids), read_id, release_id, (void **)ids, n, "ssiss",
        vt_state_name(VT_STATE_QUEUED), vt_state_name(VT_STATE_RUNNING), n_stages,
        vt_index_state_name(VT_INDEX_QUEUED), vt_index_state_name(VT_INDEX_PROCESSING));
}

/* ---- lists (playlists, channels) that videos were added from ---- */

int vt_store_list_put(struct vt_store *s, struct vt_list_rec *l)
{
    struct db_stmt *st;
    int rc = store_prepare(
        s,
        "INSERT INTO lists (url, kind, title, max_entries, stt_mode, keep_media,"
        " added_at, checked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
        " ON CONFLICT (url) DO UPDATE SET title=coalesce(?3, lists.title), max_entries=?4,"
        " stt_mode=?5, keep_media=?6, checked_at=?8 RETURNING id",
        &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, l->url);
    store_bind_text(st, 2, l->kind);
    store_bind_text(st, 3, l->title);
    db_bind_int(st, 4, l->max_entries);
    store_bind_text(st, 5, l->stt_mode ? l->stt_mode : "auto");
    db_bind_int(st, 6, l->keep_media);
    db_bind_double(st, 7, l->added_at);
    db_bind_double(st, 8, l->checked_at);
    rc = db_step(st);
    if (rc == DB_ROW) {
        l->id = db_col_int64(st, 0);
        rc = db_step(st) == DB_DONE ? 0 : store_fail(s, "record list");
    } else {
        rc = store_fail(s, "record list");
    }
    store_finish(s, st);
    return rc;
}

static void read_list(struct db_stmt *st, void *item)
{
    struct vt_list_rec *x = item;

    x->id = db_col_int64(st, 0);
    x->url = store_col_dup(st, 1);
    x->kind = store_col_dup(st, 2);
    x->title = store_col_dup(st, 3);
    x->max_entries = db_col_int(st, 4);
    x->stt_mode = store_col_dup(st, 5);
    x->keep_media = db_col_int(st, 6);
    x->added_at = db_col_double(st, 7);
    x->checked_at = db_col_double(st, 8);
}

static void release_list(void *item)
{
    struct vt_list_rec *l = item;

    free(l->url);
    free(l->kind);
    free(l->title);
    free(l->stt_mode);
}

int vt_store_lists(struct vt_store *s, struct vt_list_rec **out, size_t *n)
{
    return store_read_array(s,
                            "SELECT id, url, kind, title, max_entries, stt_mode, keep_media,"
                            " added_at, checked_at FROM lists ORDER BY id",
                            "read lists", sizeof(**out), read_list, release_list, (void **)out, n,
                            "");
}

void vt_list_recs_free(struct vt_list_rec *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        release_list(&l[i]);
    free(l);
}
