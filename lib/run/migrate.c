/*
 * vidtheque migrate: the library's catalog copied into another store (store_copy.c) and
 * verified there before anything points at it. The proof is the export document: every
 * video's document (its metadata, provenance, shots, frames with OCR lines, transcript,
 * chunks: what a user and other tools see) must come out of the copy byte for byte as it
 * comes out of the original. Media and frame files stay where they are (the library
 * directory), since both catalogs name them relative to it.
 */
#include "run/migrate.h"

#include "base/util.h"
#include "core/library.h"
#include "model/stage_config.h"
#include "run/runnable.h"
#include "store/store_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Forget the documents the handle keeps (export.c): they belong to the store it had. */
static void forget_docs(struct vt_library *lib)
{
    for (size_t i = 0; i < VT_ARRAY_LEN(lib->docs); i++) {
        free(lib->docs[i].json);
        lib->docs[i].json = NULL;
    }
}

static int count_video(void *user, const struct vt_video_rec *v)
{
    (void)v;
    ++*(size_t *)user;
    return 0;
}

/* The export document of video id as the store s gives it: 0 with *doc, or an error. */
static int doc_from(struct vt_library *lib, struct vt_store *s, const char *id, char **doc)
{
    struct vt_store *mine = lib->store;
    int rc;

    forget_docs(lib);
    lib->store = s;
    rc = vt_export_json(lib, id, doc);
    lib->store = mine;
    forget_docs(lib);
    return rc;
}

int vt_library_verify_copy(struct vt_library *lib, struct vt_store *to, size_t *checked, char *err,
                           size_t errlen)
{
    struct vt_store_ids ids;
    int rc = vt_store_ids_read(lib->store, &ids);
    size_t there = 0;

    *checked = 0;
    if (rc) {
        vt_err(err, errlen, rc, "%s", vt_store_errmsg(lib->store));
        goto out;
    }
    for (size_t i = 0; i < ids.n && !rc; i++) {
        char *a = NULL, *b = NULL;

        rc = doc_from(lib, lib->store, ids.v[i], &a);
        if (rc) {
            vt_err(err, errlen, rc, "video %s: %s", ids.v[i], vt_errmsg(lib));
        } else if ((rc = doc_from(lib, to, ids.v[i], &b))) {
            vt_err(err, errlen, rc, "video %s in the copy: %s", ids.v[i], vt_errmsg(lib));
        } else if (strcmp(a, b)) {
            rc = vt_err(err, errlen, VT_EIO,
                        "video %s: its document in the copy differs from the original", ids.v[i]);
        } else {
            ++*checked;
        }
        free(a);
        free(b);
    }
    /* and nothing more than the original's videos */
    if (!rc && (rc = vt_store_video_each(to, count_video, &there)))
        vt_err(err, errlen, rc, "the copy: %s", vt_store_errmsg(to));
    else if (!rc && there != ids.n)
        rc = vt_err(err, errlen, VT_EIO, "the copy holds %zu videos, the original %zu", there,
                    ids.n);
out:
    vt_store_ids_release(&ids);
    return rc;
}

/*
 * Whether the library is in use: a worker registered (its lease holding) or a stage
 * held (running under a lease that holds, or, on SQLite, by a process that is alive).
 * Either may write to the catalog after the copy was taken, and what it writes would
 * never reach the new one (issue 26): migrate refuses, and says which. 0 when none,
 * VT_ESTATE with the list in err, or an error.
 */
static int in_use(struct vt_library *lib, char *err, size_t errlen)
{
    struct vt_worker_rec *w = NULL;
    struct vt_queue_job *j = NULL;
    size_t nw = 0, nj = 0, held = 0;
    double now = vt_wall_s();
    struct vt_sb sb = {0};
    int rc = vt_store_workers_list(lib->store, now, &w, &nw);

    if (!rc)
        rc = vt_store_queue_jobs(lib->store, 0, &j, &nj);
    if (rc) {
        rc = vt_err(err, errlen, rc, "%s", vt_store_errmsg(lib->store));
        goto out;
    }
    for (size_t i = 0; i < nw; i++)
        vt_sb_addf(&sb, "%sworker %s (pid %lld on %s, seen %.0f s ago)", sb.len ? "; " : "",
                   w[i].owner, w[i].pid, w[i].host, now - w[i].seen_at);
    for (size_t i = 0; i < nj; i++) {
        struct vt_stage_rec r;

        memset(&r, 0, sizeof(r));
        r.owner = j[i].owner;
        r.lease_until = j[i].lease_until;
        if (vt_stage_holder_gone(lib, &r, now))
            continue;
        if (held++ < 5)
            vt_sb_addf(&sb, "%sstage %s of %s held by %s", sb.len ? "; " : "", j[i].stage,
                       j[i].video_id, j[i].owner ? j[i].owner : "?");
    }
    if (held > 5)
        vt_sb_addf(&sb, "; and %zu more stages held", held - 5);
    if (sb.len)
        rc = vt_err(err, errlen, VT_ESTATE,
                    "the library is in use: %s: stop its workers and runs first (a worker "
                    "stops on SIGTERM) and migrate again",
                    sb.buf);
out:
    vt_sb_release(&sb);
    free(w);
    vt_queue_jobs_free(j, nj);
    return rc;
}

static int is_pg_url(const char *s)
{
    return !strncmp(s, "postgresql://", 13) || !strncmp(s, "postgres://", 11);
}

int vt_library_migrate(struct vt_library *lib, const char *to, vt_store_copy_fn progress,
                       void *user, size_t *videos, char *err, size_t errlen)
{
    struct vt_config *cfg = NULL;
    struct vt_store *dest = NULL;
    char *db = NULL;
    const char *now;
    int to_sqlite = !strcmp(to, "sqlite"), rc;

    *videos = 0;
    if (!to_sqlite && !is_pg_url(to))
        return vt_err(err, errlen, VT_EINVAL,
                      "'%s': migrate --to takes a postgresql:// URL or 'sqlite'", to);
    rc = vt_config_load(lib->dir, &cfg, err, errlen);
    if (rc)
        return rc;
    now = vt_config_get(cfg, VT_KEY(DB));
    if (to_sqlite ? !now : now && !strcmp(now, to)) {
        rc = vt_err(err, errlen, VT_EINVAL, "the library is already there");
        goto out;
    }
    db = to_sqlite ? vt_xasprintf("%s/library.db", lib->dir) : vt_xstrdup(to);
    if (to_sqlite && !access(db, F_OK)) {
        rc = vt_err(err, errlen, VT_ESTATE,
                    "'%s' exists (the catalog from before a move?): move it away first", db);
        goto out;
    }
    rc = in_use(lib, err, errlen);
    if (!rc)
        rc = vt_store_open(db, &dest, err, errlen);
    if (!rc)
        rc = vt_store_copy(lib->store, dest, progress, user, err, errlen);
    if (!rc)
        rc = vt_library_verify_copy(lib, dest, videos, err, errlen);
    /* only a proven copy becomes the library's catalog; the original stays as it was */
    if (!rc)
        rc = vt_config_set(cfg, VT_KEY(DB), to_sqlite ? NULL : to, err, errlen);
out:
    vt_store_close(dest);
    vt_config_free(cfg);
    free(db);
    return rc;
}
