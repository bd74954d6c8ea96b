/*
 * vidtheque migrate's check (migrate.c): a copy of the catalog (store_copy.h) proven
 * equal to the original through every video's export document.
 */
#ifndef VT_MIGRATE_H
#define VT_MIGRATE_H

#include "store/store_copy.h"

#include <stddef.h>

struct vt_library;
struct vt_store;

/*
 * Whether to, a copy of lib's catalog, gives every video's export document exactly as
 * lib's own store does, and holds no other video: 0 with *checked the videos compared,
 * or VT_EIO naming the first video that differs (another code when a store failed),
 * one line in err.
 */
int vt_library_verify_copy(struct vt_library *lib, struct vt_store *to, size_t *checked, char *err,
                           size_t errlen);

/*
 * vidtheque migrate --to: lib's catalog copied into to (a postgresql:// URL, or "sqlite"
 * for LIBRARY/library.db, which must not exist yet), proven by vt_library_verify_copy, and
 * only then named in the library's config (key db; unset for SQLite). The original
 * catalog is left untouched. 0 with *videos copied, or an error with one line in err.
 */
int vt_library_migrate(struct vt_library *lib, const char *to, vt_store_copy_fn progress,
                       void *user, size_t *videos, char *err, size_t errlen);

#endif
