/*
 * What only the SQLite side of the store needs from db.h's statements: the
 * sqlite3_stmt underneath, for the calls db.h does not have (binding the FTS5 API
 * pointer). Included by the SQLite-only files of the store.
 */
#ifndef VT_DB_SQLITE_H
#define VT_DB_SQLITE_H

#include "store/db/db.h"

#include <sqlite3.h>

/* The SQLite statement of st, or NULL when st is not an SQLite statement. */
sqlite3_stmt *db_sqlite_stmt(struct db_stmt *st);

#endif
