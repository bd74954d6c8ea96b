/*
 * What lets a stage keep rows of its own without store code of its own (store.h): the
 * migrations of migrations.h, applied by both backends after their own lists, and the
 * generic verbs that write and clear a stage's rows in its table. The SQL of those
 * verbs is built from identifiers checked here, never from data; every value is bound.
 */
#include "base/util.h"
#include "store/migrations.h"
#include "store/store_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define STORE_MIGRATION_ROW(v, lite, pgsql) {(v), (lite), (pgsql)},
static const struct store_migration later[] = {
    VT_STORE_MIGRATIONS(STORE_MIGRATION_ROW){0, NULL, NULL}, /* the end (the list may be empty) */
};

/* The entries are numbered from VT_STORE_BASE_VERSION + 1, one after the other. */
#define STORE_MIGRATION_AT(v, lite, pgsql) store_migration_at_##v,
enum { store_migration_base = VT_STORE_BASE_VERSION, VT_STORE_MIGRATIONS(STORE_MIGRATION_AT) };
#define STORE_MIGRATION_CHECK(v, lite, pgsql)                                                      \
    _Static_assert(store_migration_at_##v == (v), "migrations.h: entry " #v " is out of order");
VT_STORE_MIGRATIONS(STORE_MIGRATION_CHECK)
_Static_assert(VT_ARRAY_LEN(later) == VT_STORE_N_MIGRATIONS + 1, "one row per entry");

int store_migrate_list(struct vt_store *s, const struct store_migration *m, size_t n, int version)
{
    char sql[96];
    int rc;

    for (size_t k = 0; k < n; k++) {
        if (m[k].version <= version)
            continue;
        rc = store_exec(s, s->conn.pg ? m[k].pg : m[k].sqlite, "upgrade the schema");
        if (rc)
            return rc;
        snprintf(sql, sizeof(sql),
                 s->conn.pg ? "UPDATE vt_meta SET schema_version = %d" : "PRAGMA user_version = %d",
                 m[k].version);
        rc = store_exec(s, sql, "upgrade the schema");
        if (rc)
            return rc;
    }
    return 0;
}

int store_migrate_later(struct vt_store *s, int version)
{
    return store_migrate_list(s, later, VT_STORE_N_MIGRATIONS, version);
}

/* ---- a stage's own rows ---- */

/* name is an identifier we may write into SQL: ^[a-z][a-z0-9_]*$, at most 63 bytes
 * (PostgreSQL's limit), so never a keyword's quote, a comment or a second statement. */
static int identifier(const char *name)
{
    size_t n = name ? strlen(name) : 0;

    if (n == 0 || n > 63 || name[0] < 'a' || name[0] > 'z')
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
              name[i] == '_'))
            return 0;
    return 1;
}

static int refuse(struct vt_store *s, const char *what, const char *name)
{
    snprintf(s->conn.err, sizeof(s->conn.err), "stage rows: %s '%.80s' is not an identifier", what,
             name ? name : "(null)");
    return VT_EINVAL;
}

/* Check table and columns; the INSERT's SQL into sql. */
static int insert_sql(struct vt_store *s, const char *table, const char *const *columns,
                      size_t n_columns, struct vt_sb *sql)
{
    if (!identifier(table))
        return refuse(s, "table", table);
    if (n_columns == 0 || n_columns > VT_STORE_STAGE_COLUMNS) {
        snprintf(s->conn.err, sizeof(s->conn.err), "stage rows: %zu columns (1 to %d)", n_columns,
                 VT_STORE_STAGE_COLUMNS);
        return VT_EINVAL;
    }
    for (size_t c = 0; c < n_columns; c++)
        if (!identifier(columns[c]) || !strcmp(columns[c], "video_id"))
            return refuse(s, "column", columns[c]);
    vt_sb_addf(sql, "INSERT INTO %s (video_id", table);
    for (size_t c = 0; c < n_columns; c++)
        vt_sb_addf(sql, ", %s", columns[c]);
    vt_sb_adds(sql, ") VALUES (?");
    for (size_t c = 0; c < n_columns; c++)
        vt_sb_adds(sql, ", ?");
    vt_sb_adds(sql, ")");
    return 0;
}

static void bind_value(struct db_stmt *st, int i, const struct vt_store_value *v)
{
    if (v->type == VT_STORE_INT)
        db_bind_int64(st, i, v->i);
    else if (v->type == VT_STORE_REAL)
        db_bind_double(st, i, v->d);
    else if (v->type == VT_STORE_TEXT && v->text)
        store_bind_text(st, i, v->text);
    else
        db_bind_null(st, i);
}

int vt_store_stage_rows_put(struct vt_store *s, const char *table, const char *video_id,
                            const char *const *columns, size_t n_columns,
                            const struct vt_store_value *values, size_t n_rows)
{
    struct vt_sb sql = {0};
    struct db_stmt *st;
    int rc = insert_sql(s, table, columns, n_columns, &sql);

    if (!rc && n_rows)
        rc = store_prepare(s, sql.buf, &st);
    vt_sb_release(&sql);
    if (rc || !n_rows)
        return rc;
    for (size_t r = 0; r < n_rows && !rc; r++) {
        store_bind_text(st, 1, video_id);
        for (size_t c = 0; c < n_columns; c++)
            bind_value(st, (int)c + 2, &values[r * n_columns + c]);
        if (db_step(st) != DB_DONE)
            rc = store_fail(s, "insert stage rows");
        db_reset(st);
    }
    store_finish(s, st);
    return rc;
}

int vt_store_stage_rows_clear(struct vt_store *s, const char *table, const char *video_id)
{
    struct db_stmt *st;
    char sql[128];
    int rc;

    if (!identifier(table))
        return refuse(s, "table", table);
    snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE video_id = ?", table);
    rc = store_prepare(s, sql, &st);
    if (rc)
        return rc;
    store_bind_text(st, 1, video_id);
    return store_step_done(s, st, "delete stage rows");
}
