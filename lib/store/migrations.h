/*
 * The schema's migrations from version 9 on: one entry per version, both dialects side
 * by side, X(version, "SQLite SQL", "PostgreSQL SQL"), each taking the schema from
 * version - 1 to version. Both backends apply them after their own lists (versions 1-8:
 * store_sqlite.c's migrations[], store_pg.c's pg_migrations[]), in the same transaction;
 * VT_STORE_SCHEMA_VERSION counts them. Add an entry at the end, number it next; never
 * edit a shipped one.
 *
 * A stage's own table is keyed by video and goes with it:
 *     X(9, "CREATE TABLE mystage_rows ("
 *          " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE, ...);",
 *          "CREATE TABLE mystage_rows ("
 *          " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE, ...);")
 * and its rows are written with vt_store_stage_rows_put / _clear (store.h).
 */
#ifndef VT_STORE_MIGRATIONS_H
#define VT_STORE_MIGRATIONS_H

/* The last version of the backends' own lists. */
#define VT_STORE_BASE_VERSION 8

/* clang-format off */
#define VT_STORE_MIGRATIONS(X) \
    /* the end of the list */
/* clang-format on */

#define VT_STORE_MIGRATION_ONE(version, sqlite, pg) +1
/* How many entries the list has. */
#define VT_STORE_N_MIGRATIONS (0 VT_STORE_MIGRATIONS(VT_STORE_MIGRATION_ONE))

#endif
