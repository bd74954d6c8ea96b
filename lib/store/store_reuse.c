/*
 * Footage shared between videos (store.h, "reuse"): the runs of frames that
 * frame_embed's same-footage pass found in two videos, stored once from each side so
 * that either video lists the other, and the perceptual hashes of kept frames that pass
 * reads to find candidates. A video's runs are replaced as a whole (both directions)
 * when its frame_embed re-runs, and go with the video (ON DELETE CASCADE).
 */
#include "store/store_int.h"
#include "base/util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vt_store_reuse_clear(struct vt_store *s, const char *id)
{
    struct db_stmt *st;
    int rc = store_prepare(s, "DELETE FROM reuse WHERE video_id = ?1 OR other_id = ?1", &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    return store_step_done(s, st, "delete shared footage");
}

int vt_store_reuse_replace(struct vt_store *s, const char *id, const struct vt_reuse *runs,
                           size_t n)
{
    struct db_stmt *st;
    int rc = vt_store_reuse_clear(s, id);

    if (!rc)
        rc = store_prepare(s,
                           "INSERT INTO reuse (video_id, other_id, start_s, end_s, other_start_s,"
                           " other_end_s, similarity, frames) VALUES (?,?,?,?,?,?,?,?)",
                           &st);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && !rc; i++)
        for (int side = 0; side < 2 && !rc; side++) {
            const struct vt_reuse *r = &runs[i];
            store_bind_text(st, 1, side ? r->other_id : id);
            store_bind_text(st, 2, side ? id : r->other_id);
            db_bind_double(st, 3, side ? r->other_start_s : r->start_s);
            db_bind_double(st, 4, side ? r->other_end_s : r->end_s);
            db_bind_double(st, 5, side ? r->start_s : r->other_start_s);
            db_bind_double(st, 6, side ? r->end_s : r->other_end_s);
            db_bind_double(st, 7, r->similarity);
            db_bind_int(st, 8, r->frames);
            if (db_step(st) != DB_DONE)
                rc = store_fail(s, "insert shared footage");
            db_reset(st);
        }
    store_finish(s, st);
    return rc;
}

int vt_store_reuse_of(struct vt_store *s, const char *id, struct vt_reuse **out, size_t *n)
{
    struct db_stmt *st;
    size_t cap = 0;
    int rc = store_prepare(s,
                           "SELECT r.other_id, coalesce(v.title, ''), r.start_s, r.end_s,"
                           " r.other_start_s, r.other_end_s, r.similarity, r.frames"
                           " FROM reuse r LEFT JOIN videos v ON v.id = r.other_id"
                           " WHERE r.video_id = ? ORDER BY r.start_s, r.other_id",
                           &st);

    *out = NULL;
    *n = 0;
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    int step;
    while ((step = db_step(st)) == DB_ROW) {
        vt_grow((void **)out, &cap, *n + 1, sizeof(**out));
        struct vt_reuse *r = &(*out)[(*n)++];
        memset(r, 0, sizeof(*r));
        snprintf(r->other_id, sizeof(r->other_id), "%s", db_col_text(st, 0));
        r->other_title = vt_xstrdup(db_col_text(st, 1));
        r->start_s = db_col_double(st, 2);
        r->end_s = db_col_double(st, 3);
        r->other_start_s = db_col_double(st, 4);
        r->other_end_s = db_col_double(st, 5);
        r->similarity = db_col_double(st, 6);
        r->frames = db_col_int(st, 7);
    }
    if (step != DB_DONE) {
        rc = store_fail(s, "read shared footage");
        vt_store_reuse_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    store_finish(s, st);
    return rc;
}

void vt_store_reuse_free(struct vt_reuse *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++)
        free(r[i].other_title);
    free(r);
}

int vt_store_reuse_videos(struct vt_store *s, char ***ids, size_t *n)
{
    struct db_stmt *st;
    size_t cap = 0;
    int rc = store_prepare(s, "SELECT DISTINCT video_id FROM reuse ORDER BY video_id", &st);

    *ids = NULL;
    *n = 0;
    if (rc)
        return rc;
    int step;
    while ((step = db_step(st)) == DB_ROW) {
        vt_grow((void **)ids, &cap, *n + 1, sizeof(**ids));
        (*ids)[(*n)++] = vt_xstrdup(db_col_text(st, 0));
    }
    if (step != DB_DONE)
        rc = store_fail(s, "read shared footage");
    store_finish(s, st);
    return rc;
}

int vt_store_frame_hashes(struct vt_store *s, const char *only_id, const char *except_id,
                          struct vt_frame_hash **out, size_t *n)
{
    struct db_stmt *st;
    size_t cap = 0;
    int rc = store_prepare(s,
                           "SELECT video_id, idx, t_s, phash, shot FROM frames"
                           " WHERE duplicate_of IS NULL AND path IS NOT NULL"
                           " AND (CAST(?1 AS TEXT) IS NULL OR video_id = ?1)"
                           " AND (CAST(?2 AS TEXT) IS NULL OR video_id <> ?2)"
                           " ORDER BY video_id, idx",
                           &st);

    *out = NULL;
    *n = 0;
    if (rc)
        return rc;
    store_bind_text(st, 1, only_id);
    store_bind_text(st, 2, except_id);
    int step;
    while ((step = db_step(st)) == DB_ROW) {
        vt_grow((void **)out, &cap, *n + 1, sizeof(**out));
        struct vt_frame_hash *h = &(*out)[(*n)++];
        snprintf(h->video_id, sizeof(h->video_id), "%s", db_col_text(st, 0));
        h->idx = db_col_int(st, 1);
        h->t_s = db_col_double(st, 2);
        h->phash = (uint64_t)db_col_int64(st, 3);
        h->shot = db_col_int(st, 4);
    }
    if (step != DB_DONE) {
        rc = store_fail(s, "read frame hashes");
        free(*out);
        *out = NULL;
        *n = 0;
    }
    store_finish(s, st);
    return rc;
}
