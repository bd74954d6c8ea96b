/*
 * A library's catalog copied from one store into another (vidtheque migrate: SQLite to
 * PostgreSQL and back) through the verbs of store.h alone, so it needs nothing of either
 * backend: each row is read with a store's reader and written with the other's writer,
 * which also builds the destination's own search index (FTS5 or tsvector) as the
 * pipeline would. One write transaction per video: a copy killed half way leaves whole
 * videos behind, and the source is never written.
 */
#include "store/store_copy.h"

#include "base/util.h"
#include "store/store.h"
#include "text/transcript.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int collect_id(void *user, const struct vt_video_rec *v)
{
    struct vt_store_ids *x = user;

    vt_grow((void **)&x->v, &x->cap, x->n + 1, sizeof(*x->v));
    x->v[x->n++] = vt_xstrdup(v->id);
    return 0;
}

int vt_store_ids_read(struct vt_store *s, struct vt_store_ids *ids)
{
    memset(ids, 0, sizeof(*ids));
    return vt_store_video_each(s, collect_id, ids);
}

void vt_store_ids_release(struct vt_store_ids *ids)
{
    for (size_t i = 0; i < ids->n; i++)
        free(ids->v[i]);
    free(ids->v);
    memset(ids, 0, sizeof(*ids));
}

/* The destination's copy of list id old (lists get new ids), 0 when none. */
struct list_map {
    int64_t *old, *new_id;
    size_t n;
};

static int64_t map_list(const struct list_map *m, int64_t old)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->old[i] == old)
            return m->new_id[i];
    return 0;
}

static int copy_lists(struct vt_store *from, struct vt_store *to, struct list_map *m, char *err,
                      size_t errlen)
{
    struct vt_list_rec *l = NULL;
    size_t n = 0;
    int rc = vt_store_lists(from, &l, &n);

    if (rc)
        return vt_err(err, errlen, rc, "lists: %s", vt_store_errmsg(from));
    m->old = vt_xcalloc(n ? n : 1, sizeof(*m->old));
    m->new_id = vt_xcalloc(n ? n : 1, sizeof(*m->new_id));
    rc = n ? vt_store_begin(to) : 0;
    for (size_t i = 0; i < n && !rc; i++) {
        m->old[i] = l[i].id;
        rc = vt_store_list_put(to, &l[i]);
        m->new_id[i] = l[i].id;
        m->n = i + 1;
    }
    if (n)
        rc = rc ? (vt_store_rollback(to), rc) : vt_store_commit(to);
    if (rc)
        vt_err(err, errlen, rc, "lists: %s", vt_store_errmsg(to));
    vt_list_recs_free(l, n);
    return rc;
}

static int copy_stages(struct vt_store *from, struct vt_store *to, const char *id)
{
    struct vt_stage_rec *r = NULL;
    size_t n = 0;
    int rc = vt_store_stages(from, id, &r, &n);

    for (size_t i = 0; i < n && !rc; i++)
        rc = vt_store_stage_put(to, id, &r[i]);
    /* the queue's order goes along (a put does not write the priority; all of a video's
     * stages share one) */
    if (!rc && n && r[0].priority)
        rc = vt_store_video_priority(to, id, r[0].priority);
    vt_stage_recs_free(r, n);
    return rc;
}

static int copy_chapters(struct vt_store *from, struct vt_store *to, const char *id, char *err,
                         size_t errlen)
{
    struct vt_store_chapter *c = NULL;
    struct vt_chapter *w = NULL;
    size_t n = 0;
    int rc = vt_store_chapters(from, id, &c, &n);

    if (rc || !n)
        goto out;
    w = vt_xcalloc(n, sizeof(*w));
    for (size_t i = 0; i < n; i++) {
        /* one source per video (the fetch stage writes them all at once) */
        if (strcmp(c[i].source ? c[i].source : "", c[0].source ? c[0].source : "")) {
            rc = vt_err(err, errlen, VT_EINVAL, "video %s: chapters from two sources", id);
            goto out;
        }
        w[i].start_s = c[i].start_s;
        w[i].end_s = c[i].end_s;
        w[i].title = c[i].title; /* borrowed: w is freed alone */
    }
    rc = vt_store_chapters_replace(to, id, w, n, c[0].source);
out:
    free(w);
    vt_store_chapters_free(c, n);
    return rc;
}

/* The directory part of a frame's stored path, which keyframes_replace takes once. */
static int frames_dir(const struct vt_store_frame *f, size_t n, char *dir, size_t len)
{
    dir[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *slash;
        size_t k;

        if (!f[i].path)
            continue;
        slash = strrchr(f[i].path, '/');
        k = slash ? (size_t)(slash - f[i].path) : 0;
        if (!dir[0] && k < len) {
            memcpy(dir, f[i].path, k);
            dir[k] = '\0';
        }
        if (strncmp(f[i].path, dir, k) || dir[k] ||
            strlen(slash ? slash + 1 : f[i].path) >= sizeof(f[i].f.file))
            return VT_EINVAL;
    }
    return 0;
}

static int copy_frames(struct vt_store *from, struct vt_store *to, const char *id, char *err,
                       size_t errlen)
{
    struct vt_kf_result r = {0};
    struct vt_store_frame *f = NULL;
    struct vt_ocr_page *pages = NULL;
    int *index = NULL;
    size_t n = 0, n_pages = 0;
    char dir[4096];
    int rc = vt_store_shots(from, id, &r.shots, &r.n_shots);

    if (!rc)
        rc = vt_store_frames(from, id, &f, &n);
    if (rc || (!r.n_shots && !n))
        goto out;
    if (frames_dir(f, n, dir, sizeof(dir))) {
        rc = vt_err(err, errlen, VT_EINVAL, "video %s: frame files in more than one directory", id);
        goto out;
    }
    r.frames = vt_xcalloc(n ? n : 1, sizeof(*r.frames));
    r.n_frames = n;
    pages = vt_xcalloc(n ? n : 1, sizeof(*pages));
    index = vt_xcalloc(n ? n : 1, sizeof(*index));
    for (size_t i = 0; i < n; i++) {
        r.frames[i] = f[i].f;
        r.frames[i].file[0] = '\0';
        if (f[i].path) {
            const char *slash = strrchr(f[i].path, '/');

            snprintf(r.frames[i].file, sizeof(r.frames[i].file), "%s",
                     slash ? slash + 1 : f[i].path);
        }
        if (f[i].ocr.n_lines) {
            index[n_pages] = f[i].f.index;
            pages[n_pages++] = f[i].ocr; /* borrowed */
        }
    }
    rc = vt_store_keyframes_replace(to, id, &r, dir);
    if (!rc && n_pages)
        rc = vt_store_ocr_replace(to, id, index, pages, n_pages);
out:
    free(pages);
    free(index);
    free(r.frames);
    free(r.shots);
    vt_store_frames_free(f, n);
    return rc;
}

/* The poster a user chose, after the frames it names. */
static int copy_poster(struct vt_store *from, struct vt_store *to, const char *id)
{
    int frame, ok;
    int rc = vt_store_poster_get(from, id, &frame);

    if (rc || frame < 0)
        return rc;
    return vt_store_poster_set(to, id, frame, &ok);
}

static int copy_transcript(struct vt_store *from, struct vt_store *to, const char *id)
{
    struct vt_transcript t = {0};
    struct vt_chunk *c = NULL;
    size_t n = 0;
    int rc = vt_store_transcript(from, id, &t);

    if (!rc && t.n_cues)
        rc = vt_store_transcript_replace(to, id, &t);
    vt_transcript_release(&t);
    if (!rc)
        rc = vt_store_chunks(from, id, &c, &n);
    if (!rc && n)
        rc = vt_store_chunks_replace(to, id, c, n);
    vt_chunks_free(c, n);
    return rc;
}

/* Vectors of one set of kinds (one space per kind and video: each stage replaces its own
 * kinds whole), read item by item for every chunk and frame. */
struct vecs {
    struct vt_vec_rec *v; /* each .v malloc'd here */
    size_t n, cap;
    char space[512];
    int dim;
};

static int take_vector(struct vt_store *from, const char *id, enum vt_vec_kind kind, int ref,
                       struct vecs *x)
{
    struct vt_vec_where w;
    char space[512];
    int64_t key;
    float *v = NULL;
    int dim, rc = vt_store_vector_find(from, id, kind, ref, &key, space, sizeof(space), &dim, &v);

    if (rc == VT_ENOTFOUND)
        return 0;
    if (!rc)
        rc = vt_store_vector_get(from, key, &w);
    if (!rc && x->n && (strcmp(space, x->space) || dim != x->dim))
        rc = VT_EINVAL; /* two models in one stage's vectors: not something a stage writes */
    if (rc) {
        free(v);
        return rc;
    }
    snprintf(x->space, sizeof(x->space), "%s", space);
    x->dim = dim;
    vt_grow((void **)&x->v, &x->cap, x->n + 1, sizeof(*x->v));
    x->v[x->n++] = (struct vt_vec_rec){kind, ref, w.start_s, w.end_s, v};
    return 0;
}

static int copy_vector_kinds(struct vt_store *from, struct vt_store *to, const char *id,
                             unsigned kinds, int64_t n_chunks, const struct vt_store_counts *c)
{
    struct vecs x = {0};
    int rc = 0;

    for (int k = VT_VEC_CHUNK; k <= VT_VEC_VISUAL && !rc; k++) {
        int64_t refs = k == VT_VEC_CHUNK ? n_chunks : c->frames;

        if (!(kinds & (1u << k)))
            continue;
        for (int64_t ref = 0; ref < refs && !rc; ref++)
            rc = take_vector(from, id, (enum vt_vec_kind)k, (int)ref, &x);
    }
    if (!rc && x.n)
        rc = vt_store_vectors_replace_kinds(to, id, kinds, x.space, x.dim, x.v, x.n);
    for (size_t i = 0; i < x.n; i++)
        free((void *)x.v[i].v);
    free(x.v);
    return rc;
}

static int copy_video(struct vt_store *from, struct vt_store *to, const char *id,
                      const struct list_map *lists, char *err, size_t errlen)
{
    struct vt_video_rec v;
    struct vt_store_counts c;
    int rc = vt_store_video_get(from, id, &v);

    if (rc)
        return vt_err(err, errlen, rc, "%s", vt_store_errmsg(from));
    v.list_id = v.list_id ? map_list(lists, v.list_id) : 0;
    rc = vt_store_counts(from, id, &c);
    if (!rc)
        rc = vt_store_begin(to);
    if (rc)
        goto out;
    rc = vt_store_video_insert(to, &v);
    if (!rc)
        rc = vt_store_video_set_state(to, id, v.index_state, v.data_status, v.indexed_at);
    if (!rc)
        rc = copy_stages(from, to, id);
    if (!rc)
        rc = copy_chapters(from, to, id, err, errlen);
    if (!rc)
        rc = vt_store_title_docs_refresh(to, id);
    if (!rc)
        rc = copy_frames(from, to, id, err, errlen);
    if (!rc)
        rc = copy_poster(from, to, id);
    if (!rc)
        rc = copy_transcript(from, to, id);
    if (!rc)
        rc = copy_vector_kinds(from, to, id, VT_VEC_TEXT_KINDS, c.chunks, &c);
    if (!rc)
        rc = copy_vector_kinds(from, to, id, VT_VEC_VISUAL_KINDS, c.chunks, &c);
    if (rc) {
        vt_store_rollback(to);
        goto out;
    }
    rc = vt_store_commit(to);
out:
    if (rc && (!err[0]))
        vt_err(err, errlen, rc, "video %s: %s", id, vt_store_errmsg(to));
    vt_video_rec_release(&v);
    return rc;
}

static int copy_reuse(struct vt_store *from, struct vt_store *to, const struct vt_store_ids *ids)
{
    int rc = 0;

    for (size_t i = 0; i < ids->n && !rc; i++) {
        struct vt_reuse *r = NULL;
        size_t n = 0;

        rc = vt_store_reuse_of(from, ids->v[i], &r, &n);
        if (!rc && n) {
            rc = vt_store_begin(to);
            if (!rc)
                rc = vt_store_reuse_replace(to, ids->v[i], r, n);
            rc = rc ? (vt_store_rollback(to), rc) : vt_store_commit(to);
        }
        vt_store_reuse_free(r, n);
    }
    return rc;
}

static int count_one(void *user, const struct vt_video_rec *v)
{
    (void)v;
    ++*(size_t *)user;
    return 1;
}

int vt_store_copy(struct vt_store *from, struct vt_store *to, vt_store_copy_fn progress, void *user,
                  char *err, size_t errlen)
{
    struct vt_store_ids ids = {0};
    struct list_map lists = {0};
    size_t there = 0;
    int rc;

    err[0] = '\0';
    rc = vt_store_video_each(to, count_one, &there);
    if (!rc && there)
        return vt_err(err, errlen, VT_ESTATE, "the destination already holds videos");
    if (!rc)
        rc = vt_store_ids_read(from, &ids);
    if (rc)
        vt_err(err, errlen, rc, "%s", vt_store_errmsg(there ? to : from));
    else
        rc = copy_lists(from, to, &lists, err, errlen);
    for (size_t i = 0; i < ids.n && !rc; i++) {
        rc = copy_video(from, to, ids.v[i], &lists, err, errlen);
        if (!rc && progress)
            progress(user, i + 1, ids.n, ids.v[i]);
    }
    if (!rc) {
        rc = copy_reuse(from, to, &ids);
        if (rc)
            vt_err(err, errlen, rc, "shared footage: %s", vt_store_errmsg(to));
    }
    free(lists.old);
    free(lists.new_id);
    vt_store_ids_release(&ids);
    return rc;
}
