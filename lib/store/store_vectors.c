/*
 * The store's vectors (store.h, "Vectors"): what the text_embed stage computed for a
 * video's chunks and the text on its frames, and what frame_embed computed for its
 * kept frames' pictures; each stage replaces only its own kinds. Each row keeps the float32 vector
 * and an int8 copy with its scale (vindex.h), so that a search loads the int8 copies without
 * quantizing again, and the vector space's id (embed.h, vt_embed_id): vectors of two
 * spaces are never compared. Row ids only grow (AUTOINCREMENT), so a reader that has
 * loaded every row up to some id knows that later rows are new.
 */
#include "store/store_int.h"
#include "base/util.h"
#include "ml/vindex.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"speech", "screen", "visual"};

const char *vt_vec_kind_name(enum vt_vec_kind k)
{
    return (unsigned)k < VT_ARRAY_LEN(kind_names) ? kind_names[k] : "?";
}

static int kind_parse(const char *s, enum vt_vec_kind *k)
{
    for (size_t i = 0; s && i < VT_ARRAY_LEN(kind_names); i++)
        if (!strcmp(s, kind_names[i])) {
            *k = (enum vt_vec_kind)i;
            return 0;
        }
    return -1;
}

/* "'speech','screen'": the names of the kinds in the set, quoted, for an IN list. */
static void kinds_list(unsigned kinds, char *out, size_t len)
{
    size_t n = 0;

    out[0] = 0;
    for (size_t k = 0; k < VT_ARRAY_LEN(kind_names); k++)
        if (kinds & (1u << k))
            n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s'%s'", n ? "," : "",
                                  kind_names[k]);
}

int vt_store_vectors_clear_kinds(struct vt_store *s, const char *id, unsigned kinds)
{
    struct db_stmt *st;
    char list[128], *sql;

    kinds_list(kinds, list, sizeof(list));
    if (!*list)
        return 0;
    sql = vt_xasprintf("DELETE FROM vectors WHERE video_id = ? AND kind IN (%s)", list);
    int rc = store_prepare(s, sql, &st);
    free(sql);
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    return store_step_done(s, st, "delete old vectors");
}

int vt_store_vectors_clear(struct vt_store *s, const char *id)
{
    return vt_store_vectors_clear_kinds(s, id, VT_VEC_TEXT_KINDS);
}

int vt_store_vectors_replace(struct vt_store *s, const char *id, const char *space, int dim,
                             const struct vt_vec_rec *recs, size_t n)
{
    return vt_store_vectors_replace_kinds(s, id, VT_VEC_TEXT_KINDS, space, dim, recs, n);
}

int vt_store_vectors_replace_kinds(struct vt_store *s, const char *id, unsigned kinds,
                                   const char *space, int dim, const struct vt_vec_rec *recs,
                                   size_t n)
{
    struct db_stmt *st;
    int8_t *q = vt_xmalloc((size_t)dim);
    int rc = vt_store_vectors_clear_kinds(s, id, kinds);

    if (!rc)
        rc = store_prepare(s,
                           "INSERT INTO vectors (video_id, kind, ref, start_s, end_s, space, dim,"
                           " f32, i8, scale) VALUES (?,?,?,?,?,?,?,?,?,?)",
                           &st);
    if (rc) {
        free(q);
        return rc;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        float scale = vt_vec_quantize(recs[i].v, dim, q);
        store_bind_text(st, 1, id);
        db_bind_text(st, 2, vt_vec_kind_name(recs[i].kind));
        db_bind_int(st, 3, recs[i].ref);
        db_bind_double(st, 4, recs[i].start_s);
        db_bind_double(st, 5, recs[i].end_s);
        store_bind_text(st, 6, space);
        db_bind_int(st, 7, dim);
        db_bind_blob(st, 8, recs[i].v, sizeof(float) * (size_t)dim);
        db_bind_blob(st, 9, q, (size_t)dim);
        db_bind_double(st, 10, scale);
        if (db_step(st) != DB_DONE)
            rc = store_fail(s, "insert vector");
        db_reset(st);
    }
    store_finish(s, st);
    free(q);
    return rc;
}

int vt_store_vectors_stat(struct vt_store *s, const char *space, int64_t *count, int64_t *max_id)
{
    struct db_stmt *st;
    int rc =
        store_prepare(s, "SELECT count(*), coalesce(max(id), 0) FROM vectors WHERE space = ?", &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, space);
    if (db_step(st) == DB_ROW) {
        *count = db_col_int64(st, 0);
        *max_id = db_col_int64(st, 1);
    } else {
        rc = store_fail(s, "count vectors");
    }
    store_finish(s, st);
    return rc;
}

int vt_store_vectors_each(struct vt_store *s, const char *space, int dim, int64_t after_id,
                          int (*fn)(void *user, int64_t key, const float *v, const int8_t *q,
                                    float scale),
                          void *user)
{
    struct db_stmt *st;
    int rc = store_prepare(s,
                           "SELECT id, f32, i8, scale FROM vectors WHERE space = ? AND id > ?"
                           " ORDER BY id",
                           &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, space);
    db_bind_int64(st, 2, after_id);
    size_t fbytes = sizeof(float) * (size_t)dim;
    float *f = vt_xmalloc(fbytes);
    int step;
    while ((step = db_step(st)) == DB_ROW) {
        size_t nf, nq;
        const void *pf = db_col_blob(st, 1, &nf), *pq = db_col_blob(st, 2, &nq);

        /* a row of another dimension (a changed server model under one name) is not
         * comparable: skipped */
        if (nf != fbytes || nq != (size_t)dim)
            continue;
        memcpy(f, pf, fbytes); /* blobs need not be aligned */
        if (fn(user, db_col_int64(st, 0), f, pq, (float)db_col_double(st, 3)))
            break;
    }
    if (step != DB_ROW && step != DB_DONE)
        rc = store_fail(s, "read vectors");
    free(f);
    store_finish(s, st);
    return rc;
}

int vt_store_vector_get(struct vt_store *s, int64_t key, struct vt_vec_where *w)
{
    struct db_stmt *st;
    int rc = store_prepare(
        s, "SELECT video_id, kind, ref, start_s, end_s FROM vectors WHERE id = ?", &st);

    if (rc)
        return rc;
    db_bind_int64(st, 1, key);
    int step = db_step(st);
    if (step == DB_ROW) {
        snprintf(w->video_id, sizeof(w->video_id), "%s", db_col_text(st, 0));
        if (kind_parse(db_col_text(st, 1), &w->kind))
            rc = VT_ENOTFOUND;
        w->ref = db_col_int(st, 2);
        w->start_s = db_col_double(st, 3);
        w->end_s = db_col_double(st, 4);
    } else if (step == DB_DONE) {
        rc = VT_ENOTFOUND;
    } else {
        rc = store_fail(s, "read a vector");
    }
    store_finish(s, st);
    return rc;
}

int vt_store_vector_find(struct vt_store *s, const char *id, enum vt_vec_kind kind, int ref,
                         int64_t *key, char *space, size_t spacelen, int *dim, float **v)
{
    struct db_stmt *st;
    int rc = store_prepare(s,
                           "SELECT id, space, dim, f32 FROM vectors WHERE video_id = ? AND kind = ?"
                           " AND ref = ? ORDER BY id DESC LIMIT 1",
                           &st);

    *v = NULL;
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    db_bind_text(st, 2, vt_vec_kind_name(kind));
    db_bind_int(st, 3, ref);
    int step = db_step(st);
    if (step == DB_ROW) {
        int d = db_col_int(st, 2);
        size_t nb;
        const void *p = db_col_blob(st, 3, &nb);
        if (d <= 0 || d > 65536 || nb != sizeof(float) * (size_t)d) {
            rc = VT_ENOTFOUND; /* a row that cannot be a vector of its dimension */
        } else {
            *key = db_col_int64(st, 0);
            snprintf(space, spacelen, "%s", db_col_text(st, 1));
            *dim = d;
            *v = vt_xmalloc(sizeof(float) * (size_t)d);
            memcpy(*v, p, sizeof(float) * (size_t)d);
        }
    } else if (step == DB_DONE) {
        rc = VT_ENOTFOUND;
    } else {
        rc = store_fail(s, "read a vector");
    }
    store_finish(s, st);
    return rc;
}

int vt_store_vectors_of(struct vt_store *s, const char *id, enum vt_vec_kind kind,
                        const char *space, int dim, int **refs, float **v, size_t *n)
{
    struct db_stmt *st;
    /* by the video's index, not a space's (the whole library): SQLite is told so with +,
     * which PostgreSQL's planner does not need (nor parse) */
    int rc = store_prepare(s,
                           s->conn.pg ? "SELECT ref, f32 FROM vectors WHERE video_id = ? AND kind = ?"
                                   " AND space = ? ORDER BY ref"
                                 : "SELECT ref, f32 FROM vectors WHERE video_id = ? AND +kind = ?"
                                   " AND +space = ? ORDER BY ref",
                           &st);
    size_t cap = 0, vcap = 0, fbytes = sizeof(float) * (size_t)dim;

    *refs = NULL;
    *v = NULL;
    *n = 0;
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    db_bind_text(st, 2, vt_vec_kind_name(kind));
    store_bind_text(st, 3, space);
    int step;
    while ((step = db_step(st)) == DB_ROW) {
        size_t nb;
        const void *p = db_col_blob(st, 1, &nb);
        if (nb != fbytes)
            continue;
        vt_grow((void **)refs, &cap, *n + 1, sizeof(**refs));
        vt_grow((void **)v, &vcap, (*n + 1) * (size_t)dim, sizeof(float));
        (*refs)[*n] = db_col_int(st, 0);
        memcpy(*v + *n * (size_t)dim, p, fbytes);
        (*n)++;
    }
    if (step != DB_DONE) {
        rc = store_fail(s, "read vectors");
        free(*refs);
        free(*v);
        *refs = NULL;
        *v = NULL;
        *n = 0;
    }
    store_finish(s, st);
    return rc;
}
