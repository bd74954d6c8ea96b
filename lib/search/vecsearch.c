/*
 * Nearest vectors of a library (vecsearch.h): the in-memory indexes of vector spaces
 * shared by the handles of a process, and "more like this" over frames' pictures.
 */
#include "search/vecsearch.h"

#include "base/util.h"
#include "core/library.h"
#include "store/store.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The in-memory indexes of vector spaces, shared by every library handle of the process
 * (a server has one handle per thread, and an index of 1M vectors is over a gigabyte):
 * one per library directory and space, counted by the handles that use it. The process
 * lock guards the list, loading and searching (a search of 1M vectors takes some 20 ms,
 * and resolving its hits, the longer part, is done outside).
 */
struct shared_index {
    char *key; /* the library's real path, a newline, the space */
    int dim;
    struct vt_vindex *ix;
    int64_t count, max_id; /* what has been loaded */
    int refs;
    struct shared_index *next;
};

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared_index *shared_list;

/* A handle's uses of shared indexes (one per space it searched): which, and the
 * database version it last checked. */
struct vt_meaning_index {
    struct shared_index *sh;
    long long version;
    struct vt_meaning_index *next;
};

/* Drop one reference; under shared_lock. */
static void shared_put(struct shared_index *sh)
{
    if (!sh || --sh->refs > 0)
        return;
    for (struct shared_index **p = &shared_list; *p; p = &(*p)->next)
        if (*p == sh) {
            *p = sh->next;
            break;
        }
    vt_vindex_free(sh->ix);
    free(sh->key);
    free(sh);
}

/* The handle's slot's close (VT_SLOT_SEARCH, the list's head): its uses all dropped. */
static void meaning_index_free(void *state)
{
    struct vt_meaning_index *mi = state;

    pthread_mutex_lock(&shared_lock);
    while (mi) {
        struct vt_meaning_index *next = mi->next;
        shared_put(mi->sh);
        free(mi);
        mi = next;
    }
    pthread_mutex_unlock(&shared_lock);
}

static int add_vec(void *user, int64_t key, const float *v, const int8_t *q, float scale)
{
    struct shared_index *sh = user;

    if (vt_vindex_add_q(sh->ix, key, v, q, scale))
        return 1;
    sh->count++;
    sh->max_id = key;
    return 0;
}

/* Bring sh up to what lib's database holds: new rows are added; when rows went (a video
 * re-embedded or removed) it is loaded again. Under shared_lock. */
static int shared_refresh(struct vt_library *lib, struct shared_index *sh, const char *space,
                          char *err, size_t errlen)
{
    int64_t count, max_id;
    int rc = vt_store_vectors_stat(lib->store, space, &count, &max_id);

    for (int pass = 0; !rc && pass < 2; pass++) {
        if (count < sh->count || max_id < sh->max_id ||
            (max_id == sh->max_id && count != sh->count) || pass) {
            vt_vindex_free(sh->ix);
            sh->ix = vt_vindex_new(sh->dim);
            sh->count = sh->max_id = 0;
        }
        if (count > sh->count && vt_vindex_reserve(sh->ix, (size_t)count))
            return vt_err(err, errlen, VT_EIO, "no memory for %lld vectors", (long long)count);
        if (max_id > sh->max_id)
            rc = vt_store_vectors_each(lib->store, space, sh->dim, sh->max_id, add_vec, sh);
        if (rc || sh->count == count)
            break;
        /* rows went and came between the count and the read: once more, from scratch */
        rc = vt_store_vectors_stat(lib->store, space, &count, &max_id);
    }
    if (rc)
        return vt_err(err, errlen, rc, "%s", vt_store_errmsg(lib->store));
    return 0;
}

int vt_vecsearch_nearest(struct vt_library *lib, const char *space, int dim, const float *qv,
                         size_t k, vt_vindex_keep_fn keep, void *user, struct vt_vhit *vh,
                         size_t *m, char *err, size_t errlen)
{
    long long version = vt_store_version(lib->store);
    char *real = realpath(lib->dir, NULL);
    char *key = vt_xasprintf("%s\n%s", real ? real : lib->dir, space);
    struct vt_meaning_index *mi;
    int rc = 0;

    free(real);
    *m = 0;
    if (dim <= 0)
        return vt_err(err, errlen, VT_EINVAL, "vectors of dimension %d", dim);
    pthread_mutex_lock(&shared_lock);
    for (mi = vt_lib_slot(lib, VT_SLOT_SEARCH); mi; mi = mi->next)
        if (!strcmp(mi->sh->key, key) && mi->sh->dim == dim)
            break;
    if (!mi) {
        struct shared_index *sh = shared_list;
        while (sh && (strcmp(sh->key, key) || sh->dim != dim))
            sh = sh->next;
        if (!sh) {
            sh = vt_xcalloc(1, sizeof(*sh));
            sh->key = key;
            key = NULL;
            sh->dim = dim;
            sh->ix = vt_vindex_new(dim);
            sh->next = shared_list;
            shared_list = sh;
        }
        sh->refs++;
        mi = vt_xcalloc(1, sizeof(*mi));
        mi->sh = sh;
        mi->version = -1;
        mi->next = vt_lib_slot(lib, VT_SLOT_SEARCH);
        lib->slots[VT_SLOT_SEARCH].state = mi; /* a new head: the list is not closed */
        lib->slots[VT_SLOT_SEARCH].close = meaning_index_free;
    }
    if (!mi->sh->ix) {
        rc = vt_err(err, errlen, VT_EIO, "no memory for an index of dimension %d", dim);
    } else if (version < 0 || version != mi->version) {
        rc = shared_refresh(lib, mi->sh, space, err, errlen);
        if (!rc)
            mi->version = version;
    }
    if (!rc)
        *m = keep ? vt_vindex_search_keep(mi->sh->ix, qv, k, vh, keep, user)
                  : vt_vindex_search(mi->sh->ix, qv, k, vh);
    pthread_mutex_unlock(&shared_lock);
    free(key);
    return rc;
}

int vt_vecsearch_loaded(struct vt_library *lib, const char *space, int dim, int64_t *count,
                        int64_t *max_id)
{
    char *real = realpath(lib->dir, NULL);
    char *key = vt_xasprintf("%s\n%s", real ? real : lib->dir, space);
    long long version = vt_store_version(lib->store);
    int rc = -1;

    free(real);
    pthread_mutex_lock(&shared_lock);
    for (struct vt_meaning_index *mi = vt_lib_slot(lib, VT_SLOT_SEARCH); mi; mi = mi->next)
        if (!strcmp(mi->sh->key, key) && mi->sh->dim == dim && version >= 0 &&
            mi->version == version) {
            *count = mi->sh->count;
            *max_id = mi->sh->max_id;
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&shared_lock);
    free(key);
    return rc;
}

/* ---- more like this ---- */

void vt_lookalike_free(struct vt_lookalike *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) {
        free(s[i].title);
        free(s[i].path);
    }
    free(s);
}

/* Not the asked frame's own vector. */
static int not_self(void *user, int64_t key)
{
    return key != *(const int64_t *)user;
}

int vt_similar_frames(struct vt_library *lib, const char *id, int frame, int limit,
                      struct vt_lookalike **out, size_t *n, char *err, size_t errlen)
{
    struct vt_video_rec v;
    struct vt_store_frame *f = NULL;
    size_t nf = 0, cap = 0;
    float *qv = NULL;
    char space[512];
    int64_t self = 0;
    int dim = 0, rc;

    *out = NULL;
    *n = 0;
    if (limit < 1 || limit > VT_SIMILAR_MAX)
        return vt_err(err, errlen, VT_EINVAL, "limit must be 1 to %d", VT_SIMILAR_MAX);
    if (frame < 0)
        return vt_err(err, errlen, VT_EINVAL, "frame must be a number from 0");
    memset(&v, 0, sizeof(v));
    rc = vt_store_video_get(lib->store, id, &v);
    vt_video_rec_release(&v);
    if (rc == VT_ENOTFOUND)
        return vt_err(err, errlen, rc, "no video '%s'", id);
    if (!rc)
        rc = vt_store_frames_range(lib->store, id, frame, (int64_t)frame + 1, &f, &nf);
    if (rc)
        return vt_err(err, errlen, rc, "%s", vt_store_errmsg(lib->store));
    if (!nf)
        return vt_err(err, errlen, VT_ENOTFOUND, "video %s has no frame %d", id, frame);
    int orig = f[0].f.duplicate_of >= 0 ? f[0].f.duplicate_of : frame;
    vt_store_frames_free(f, nf);
    rc = vt_store_vector_find(lib->store, id, VT_VEC_VISUAL, orig, &self, space, sizeof(space),
                              &dim, &qv);
    if (rc == VT_ENOTFOUND)
        return vt_err(err, errlen, rc,
                      "frame %d of video %s has no picture vector (the "
                      "frame_embed stage has not run on it)",
                      frame, id);
    if (rc)
        return vt_err(err, errlen, rc, "%s", vt_store_errmsg(lib->store));
    size_t k = (size_t)limit;
    struct vt_vhit *vh = vt_xcalloc(k, sizeof(*vh));
    size_t m = 0;
    rc = vt_vecsearch_nearest(lib, space, dim, qv, k, not_self, &self, vh, &m, err, errlen);
    free(qv);
    struct vt_lookalike *r = NULL;
    size_t nr = 0;
    for (size_t i = 0; !rc && i < m; i++) {
        struct vt_vec_where w;
        int grc = vt_store_vector_get(lib->store, vh[i].key, &w);
        if (grc == VT_ENOTFOUND || (!grc && w.kind != VT_VEC_VISUAL))
            continue; /* gone since the index was read */
        if (grc) {
            rc = vt_err(err, errlen, grc, "%s", vt_store_errmsg(lib->store));
            break;
        }
        vt_grow((void **)&r, &cap, nr + 1, sizeof(*r));
        struct vt_lookalike *s = &r[nr++];
        memset(s, 0, sizeof(*s));
        snprintf(s->video_id, sizeof(s->video_id), "%s", w.video_id);
        s->frame = w.ref;
        s->t_s = w.start_s;
        s->score = vh[i].score;
        memset(&v, 0, sizeof(v));
        s->title =
            vt_xstrdup(!vt_store_video_get(lib->store, w.video_id, &v) && v.title ? v.title : "");
        vt_video_rec_release(&v);
        if (!vt_store_frames_range(lib->store, w.video_id, w.ref, (int64_t)w.ref + 1, &f, &nf) &&
            nf) {
            s->t_s = f[0].f.t_s;
            s->path = f[0].path ? vt_xstrdup(f[0].path) : NULL;
        }
        vt_store_frames_free(f, nf);
        f = NULL;
        nf = 0;
    }
    free(vh);
    if (rc) {
        vt_lookalike_free(r, nr);
        return rc;
    }
    *out = r;
    *n = nr;
    return 0;
}

/* A JSON string, or "" when s is not valid UTF-8 (jansson refuses it). */
static json_t *jstr_or_empty(const char *s)
{
    json_t *j = json_string(s ? s : "");

    return j ? j : json_string("");
}

char *vt_lookalike_json(const char *id, int frame, const struct vt_lookalike *s, size_t n)
{
    json_t *root = json_object(), *arr = json_array();
    char buf[256];

    json_object_set_new(root, "video_id", jstr_or_empty(id));
    json_object_set_new(root, "frame", json_integer(frame));
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "video_id", json_string(s[i].video_id));
        json_object_set_new(o, "title", jstr_or_empty(s[i].title));
        json_object_set_new(o, "frame", json_integer(s[i].frame));
        json_object_set_new(o, "t", json_real(s[i].t_s));
        json_object_set_new(o, "similarity", json_real(s[i].score));
        snprintf(buf, sizeof(buf), "/api/videos/%s/frames/%d.jpg?size=small", s[i].video_id,
                 s[i].frame);
        json_object_set_new(o, "thumbnail", json_string(buf));
        json_object_set_new(o, "path", s[i].path ? jstr_or_empty(s[i].path) : json_null());
        {
            struct vt_sb link = {0};

            vt_sb_addf(&link, "/v/%s?t=", s[i].video_id);
            vt_sb_add_seek(&link, s[i].t_s); /* never before the frame: it may open a shot */
            json_object_set_new(o, "link", json_string(link.buf));
            vt_sb_release(&link);
        }
        json_array_append_new(arr, o);
    }
    json_object_set_new(root, "results", arr);
    char *out = json_dumps(root, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(root);
    if (!out)
        abort();
    return out;
}

int vt_lib_reuse_videos(struct vt_library *lib, char ***ids, size_t *n)
{
    int rc = vt_store_reuse_videos(lib->store, ids, n);

    return rc ? vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store)) : 0;
}
