/*
 * Opening a store (store.h): the one place that names the backends. A path is an SQLite
 * database (sqlite/store_sqlite.c), a postgresql:// URL a PostgreSQL one (pg/store_pg.c);
 * each sets the handle's backend hooks (s->be, store_int.h), through which the shared
 * files reach it, so nothing else in the store calls up into a backend.
 */
#include "base/util.h"
#include "store/store_int.h"

#include <string.h>

/*
 * PostgreSQL (store_pg.c) needs libpq, which the front binary does not link (Makefile):
 * this reference is weak, so a program links the backend only when something else
 * names it (src/cli/vidtheque.c does in vidtheque-full, and the unit tests).
 */
#pragma weak store_pg_open

int vt_store_is_url(const char *db)
{
    return db && (!strncmp(db, "postgresql://", 13) || !strncmp(db, "postgres://", 11));
}

int vt_store_open(const char *db_path, struct vt_store **out, char *err, size_t errlen)
{
    return vt_store_open_flags(db_path, 0, out, err, errlen);
}

int vt_store_open_flags(const char *db_path, int flags, struct vt_store **out, char *err,
                        size_t errlen)
{
    if (vt_store_is_url(db_path)) {
        if (!store_pg_open)
            return vt_err(err, errlen, VT_EINVAL,
                          "this program was built without PostgreSQL (vidtheque-full has it)");
        return store_pg_open(db_path, flags, out, err, errlen);
    }
    return store_sqlite_open(db_path, flags, out, err, errlen);
}
