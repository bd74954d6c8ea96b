/*
 * vidtheque migrate: the library's catalog copied into another store (store_copy.c) and
 * verified there before anything points at it. The proof is the export document: every
 * video's document (its metadata, provenance, shots, frames with OCR lines, transcript,
 * chunks: what a user and other tools see) must come out of the copy byte for byte as it
 * comes out of the original. Media and frame files stay where they are (the library
 * directory), since both catalogs name them relative to it.
 */
#include "run/migrate.h"

#include "model/stage_config.h"
#include "core/library.h"
#include "store/store_copy.h"
#include "base/util.h"

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
