/*
 * The PostgreSQL backend of the store (see store.h): opening a library's database from
 * its libpq URL, the schema and its migrations, transactions, the change counter and
 * the integrity check. The row code (store_video.c, store_rows.c, ...) is shared with
 * SQLite through db.h; what the index needs only here is in store_pg_index.c.
 *
 * The schema holds SQLite's tables at version 7 in PostgreSQL's types, with `docs`
 * carrying a tsvector of vidtheque's own tokens (store_pg_tsv) under a GIN index
 * instead of FTS5. Its version is the one row of vt_meta; migrations run in one
 * transaction under an advisory lock, so that of many processes opening a new or old
 * database at once exactly one migrates and the others wait and see it done.
 *
 * store.c reaches store_pg_open through a weak reference: only programs that name it
 * (vidtheque-full, the unit tests) link libpq. The rest is the handle's backend hooks
 * (pg_backend, store_int.h), through which the shared files reach it.
 */
#include "base/config.h"
#include "base/util.h"
#include "store/db/db_pg.h"
#include "store/store_int.h"

#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct store_backend pg_backend;

/* pg_advisory_xact_lock key of the migrations: "vidthequ" as a big-endian int64 */
#define PG_MIGRATE_LOCK "8532461420160577909"

/* The first version a PostgreSQL database has: SQLite's schema up to then is created at once. */
#define PG_FIRST_VERSION 7

/*
 * pg_migrations[0] creates the schema at PG_FIRST_VERSION; pg_migrations[k] (k >= 1)
 * takes it from version PG_FIRST_VERSION + k - 1 to PG_FIRST_VERSION + k. Never edit a
 * shipped one. Ids and terms compare bytewise (COLLATE "C"), as SQLite's do, whatever
 * the database's locale.
 */
static const char *const pg_migrations[] = {
    "CREATE TABLE vt_meta (schema_version int NOT NULL);"
    "INSERT INTO vt_meta (schema_version) VALUES (0);"
    "CREATE TABLE videos ("
    " id text COLLATE \"C\" PRIMARY KEY,"
    " content_key text NOT NULL UNIQUE,"
    " source_kind text NOT NULL,"
    " source_path text,"
    " title text, channel text, published text, language text, container text,"
    " duration_s double precision NOT NULL DEFAULT 0,"
    " width bigint NOT NULL DEFAULT 0, height bigint NOT NULL DEFAULT 0,"
    " rotation bigint NOT NULL DEFAULT 0, fps double precision NOT NULL DEFAULT 0,"
    " has_video bigint NOT NULL DEFAULT 0, has_audio bigint NOT NULL DEFAULT 0,"
    " size_bytes bigint NOT NULL DEFAULT 0,"
    " index_state text NOT NULL DEFAULT 'queued',"
    " data_status text NOT NULL DEFAULT 'missing',"
    " created_at double precision NOT NULL, indexed_at double precision NOT NULL DEFAULT 0,"
    " seq bigint NOT NULL,"
    " stt_mode text NOT NULL DEFAULT 'auto',"
    " source_url text, page_url text, platform_id text, extractor text, description text,"
    " thumbnail text, captions_path text, captions_model text,"
    " keep_media bigint NOT NULL DEFAULT 1, list_id bigint);"
    "CREATE INDEX videos_by_seq ON videos (seq);"
    /* the order videos were added in: SQLite's max(seq) + 1 is read under its one writer;
     * here writers run at once, and each takes its own number */
    "CREATE SEQUENCE videos_seq OWNED BY videos.seq;"
    "CREATE TABLE stages ("
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " name text COLLATE \"C\" NOT NULL, ord bigint NOT NULL,"
    " state text NOT NULL, model text, error text, owner text,"
    " started_at double precision NOT NULL DEFAULT 0, took_s double precision NOT NULL DEFAULT 0,"
    " attempts bigint NOT NULL DEFAULT 0, retry_at double precision NOT NULL DEFAULT 0,"
    " PRIMARY KEY (video_id, name));"
    "CREATE TABLE chapters ("
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " idx bigint NOT NULL, start_s double precision NOT NULL, end_s double precision NOT NULL,"
    " title text, source text NOT NULL,"
    " PRIMARY KEY (video_id, idx));"
    "CREATE TABLE shots ("
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " idx bigint NOT NULL, start_s double precision NOT NULL, end_s double precision NOT NULL,"
    " captured bigint NOT NULL, kept bigint NOT NULL,"
    " transition text, trans_start_s double precision, trans_end_s double precision,"
    " PRIMARY KEY (video_id, idx));"
    "CREATE TABLE frames ("
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " idx bigint NOT NULL, t_s double precision NOT NULL, frame_no bigint NOT NULL,"
    " shot bigint NOT NULL, duplicate_of bigint, sharpness double precision NOT NULL,"
    " bytes bigint NOT NULL, path text, width bigint NOT NULL, height bigint NOT NULL,"
    " phash bigint NOT NULL,"
    " PRIMARY KEY (video_id, idx));"
    "CREATE TABLE ocr_lines ("
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " frame_idx bigint NOT NULL, line_no bigint NOT NULL,"
    " text text NOT NULL, conf double precision NOT NULL,"
    " x bigint NOT NULL, y bigint NOT NULL, w bigint NOT NULL, h bigint NOT NULL,"
    " noise bigint NOT NULL DEFAULT 0,"
    " PRIMARY KEY (video_id, frame_idx, line_no));"
    "CREATE TABLE cues ("
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " idx bigint NOT NULL, start_s double precision NOT NULL, end_s double precision NOT NULL,"
    " text text NOT NULL,"
    " PRIMARY KEY (video_id, idx));"
    "CREATE TABLE words ("
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " cue_idx bigint NOT NULL, idx bigint NOT NULL, text text NOT NULL,"
    " start_s double precision NOT NULL, end_s double precision NOT NULL,"
    " conf double precision NOT NULL,"
    " PRIMARY KEY (video_id, cue_idx, idx));"
    "CREATE TABLE chunks ("
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " idx bigint NOT NULL, start_s double precision NOT NULL, end_s double precision NOT NULL,"
    " text text NOT NULL, first_cue bigint NOT NULL, last_cue bigint NOT NULL,"
    " PRIMARY KEY (video_id, idx));"
    /* one row per searchable moment; tsv: its text as vidtheque's tokens (store_pg_tsv) */
    "CREATE TABLE docs ("
    " id bigserial PRIMARY KEY,"
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " source text COLLATE \"C\" NOT NULL, ref bigint NOT NULL,"
    " start_s double precision NOT NULL, end_s double precision NOT NULL,"
    " text text NOT NULL, meta text NOT NULL, tsv tsvector NOT NULL);"
    "CREATE INDEX docs_by_video ON docs (video_id, source);"
    "CREATE INDEX docs_tsv ON docs USING gin (tsv);"
    "CREATE TABLE phonetic (term text COLLATE \"C\" PRIMARY KEY, key text COLLATE \"C\" NOT NULL);"
    "CREATE INDEX phonetic_by_key ON phonetic (key);"
    "CREATE TABLE fuzzy (del text COLLATE \"C\" NOT NULL, term text COLLATE \"C\" NOT NULL,"
    " PRIMARY KEY (del, term));"
    "CREATE TABLE lists ("
    " id bigserial PRIMARY KEY, url text NOT NULL UNIQUE, kind text NOT NULL, title text,"
    " max_entries bigint NOT NULL DEFAULT 0, stt_mode text NOT NULL DEFAULT 'auto',"
    " keep_media bigint NOT NULL DEFAULT 1, added_at double precision NOT NULL,"
    " checked_at double precision NOT NULL DEFAULT 0);"
    "CREATE TABLE vectors ("
    " id bigserial PRIMARY KEY,"
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " kind text COLLATE \"C\" NOT NULL, ref bigint NOT NULL,"
    " start_s double precision NOT NULL, end_s double precision NOT NULL,"
    " space text COLLATE \"C\" NOT NULL, dim bigint NOT NULL,"
    " f32 bytea NOT NULL, i8 bytea NOT NULL, scale double precision NOT NULL);"
    "CREATE INDEX vectors_by_video ON vectors (video_id);"
    "CREATE INDEX vectors_by_space ON vectors (space, id);"
    "CREATE TABLE reuse ("
    " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " other_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " start_s double precision NOT NULL, end_s double precision NOT NULL,"
    " other_start_s double precision NOT NULL, other_end_s double precision NOT NULL,"
    " similarity double precision NOT NULL, frames bigint NOT NULL);"
    "CREATE INDEX reuse_by_video ON reuse (video_id, start_s);"
    "CREATE INDEX reuse_by_other ON reuse (other_id);"
    /* the index's sizes per video and source, for BM25 (store_search_pg.c) */
    STORE_PG_SEARCH_DDL,

    /* 8: the job queue (store_queue.c), as SQLite's migration 8 */
    "ALTER TABLE stages ADD COLUMN lease_until double precision NOT NULL DEFAULT 0;"
    "ALTER TABLE stages ADD COLUMN priority bigint NOT NULL DEFAULT 0;"
    "ALTER TABLE stages ADD COLUMN queued_at double precision NOT NULL DEFAULT 0;"
    "UPDATE stages SET queued_at = v.created_at FROM videos v WHERE v.id = stages.video_id;"
    "CREATE INDEX stages_runnable ON stages (priority DESC, queued_at, video_id, ord)"
    " WHERE state IN (" VT_SQL_STATES_UNSETTLED ");"
    "CREATE TABLE stage_deps (name text COLLATE \"C\" NOT NULL, dep text COLLATE \"C\" NOT NULL,"
    " PRIMARY KEY (name, dep));",
};

/* From VT_STORE_BASE_VERSION on, migrations.h's list (store_migrate_later) follows. */
_Static_assert(PG_FIRST_VERSION - 1 + VT_ARRAY_LEN(pg_migrations) == VT_STORE_BASE_VERSION,
               "one PostgreSQL migration per version from PG_FIRST_VERSION on");

/* The database's schema version (0: none yet). */
static int schema_version(struct vt_store *s, int *version)
{
    struct db_stmt *st;
    /* pg_class itself, read with the statement's snapshot: to_regclass() answers from the
     * backend's catalog cache, which may not yet have seen another process's migration */
    int rc = store_prepare(s,
                           "SELECT count(*) FROM pg_catalog.pg_class WHERE relname = 'vt_meta'"
                           " AND relnamespace = CAST(current_schema() AS regnamespace)",
                           &st),
        exists = 0;

    *version = 0;
    if (rc)
        return rc;
    rc = db_step(st);
    if (rc == DB_ROW)
        exists = db_col_int(st, 0);
    rc = rc == DB_ROW ? 0 : store_fail(s, "read the schema version");
    store_finish(s, st);
    if (rc || !exists)
        return rc;
    rc = store_prepare(s, "SELECT max(schema_version) FROM vt_meta", &st);
    if (rc)
        return rc;
    rc = db_step(st);
    if (rc == DB_ROW)
        *version = db_col_int(st, 0);
    rc = rc == DB_ROW ? 0 : store_fail(s, "read the schema version");
    store_finish(s, st);
    return rc;
}

static int too_new(struct vt_store *s, int version)
{
    snprintf(s->conn.err, sizeof(s->conn.err),
             "database: schema version %d is newer than this program (%d)", version,
             VT_STORE_SCHEMA_VERSION);
    return VT_ESTATE;
}

static int apply_migrations(struct vt_store *s, int version)
{
    char sql[96];
    int rc;

    for (int k = version ? version - PG_FIRST_VERSION + 1 : 0; k < (int)VT_ARRAY_LEN(pg_migrations);
         k++) {
        rc = store_exec(s, pg_migrations[k], "upgrade the schema");
        if (rc)
            return rc;
    }
    if (version >= VT_STORE_BASE_VERSION)
        return store_migrate_later(s, version);
    snprintf(sql, sizeof(sql), "UPDATE vt_meta SET schema_version = %d", VT_STORE_BASE_VERSION);
    rc = store_exec(s, sql, "upgrade the schema");
    return rc ? rc : store_migrate_later(s, VT_STORE_BASE_VERSION);
}

/*
 * Bring the schema to this program's version: under the advisory lock, in one
 * transaction (PostgreSQL's DDL is transactional: a migration killed half-way leaves
 * the old schema whole). The version is read again once the lock is held: another
 * process may have migrated while this one waited.
 */
static int migrate(struct vt_store *s)
{
    int version, rc = schema_version(s, &version);

    if (rc)
        return rc;
    if (version > VT_STORE_SCHEMA_VERSION)
        return too_new(s, version);
    if (version == VT_STORE_SCHEMA_VERSION)
        return 0;
    if (version && version < PG_FIRST_VERSION) {
        snprintf(s->conn.err, sizeof(s->conn.err),
                 "database: schema version %d was never a PostgreSQL one", version);
        return VT_ESTATE;
    }
    if (s->read_only) {
        snprintf(s->conn.err, sizeof(s->conn.err),
                 "database '%.300s' is read-only and needs an upgrade (schema version %d, this "
                 "program %d): open it once with a role that may write",
                 s->dir, version, VT_STORE_SCHEMA_VERSION);
        return VT_ESTATE;
    }
    rc = vt_store_begin(s);
    if (!rc)
        rc = store_exec(s, "SELECT pg_advisory_xact_lock(" PG_MIGRATE_LOCK ")",
                        "lock the schema for an upgrade");
    if (!rc)
        rc = schema_version(s, &version);
    if (!rc && version > VT_STORE_SCHEMA_VERSION)
        rc = too_new(s, version);
    if (!rc && version < VT_STORE_SCHEMA_VERSION)
        rc = apply_migrations(s, version);
    if (rc) {
        vt_store_rollback(s);
        return rc;
    }
    return vt_store_commit(s);
}

/*
 * Whether this connection may write: not a read-only session (the role's or the
 * database's default_transaction_read_only, a standby), and the rights to create the
 * schema (none yet) or to change the videos table.
 */
static int may_write(struct vt_store *s, int *yes)
{
    struct db_stmt *st;
    int rc = store_prepare(
        s,
        "SELECT current_setting('transaction_read_only') = 'off' AND NOT pg_is_in_recovery()"
        " AND CASE WHEN to_regclass('videos') IS NULL"
        "  THEN coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)"
        "  ELSE has_table_privilege('videos', 'INSERT') AND has_table_privilege('videos', 'UPDATE')"
        "   AND has_table_privilege('videos', 'DELETE') END",
        &st);

    *yes = 0;
    if (rc)
        return rc;
    rc = db_step(st);
    if (rc == DB_ROW)
        *yes = db_col_int(st, 0);
    rc = rc == DB_ROW ? 0 : store_fail(s, "look at the role's rights");
    store_finish(s, st);
    return rc;
}

int store_pg_open(const char *url, int flags, struct vt_store **out, char *err, size_t errlen)
{
    struct vt_store *s = vt_xcalloc(1, sizeof(*s));
    int rc, writable = 0;

    *out = NULL;
    s->conn.ops = &db_pg_ops;
    s->be = &pg_backend;
    s->dir = vt_config_db_redact(url);
    rc = db_pg_connect(url, &s->conn.pg, s->conn.err, sizeof(s->conn.err));
    if (rc) {
        vt_err(err, errlen, rc, "'%s': %s", s->dir, s->conn.err);
        goto fail;
    }
    rc = may_write(s, &writable);
    if (!rc && !writable) {
        if (flags & VT_STORE_READ) {
            s->read_only = 1;
        } else {
            snprintf(s->conn.err, sizeof(s->conn.err),
                     "database is read-only (the role may not write, or its sessions are "
                     "read-only)");
            rc = VT_ESTATE;
        }
    }
    if (!rc)
        rc = migrate(s);
    if (!rc && !s->read_only)
        rc = vt_store_sync_stage_deps(s);
    if (rc) {
        vt_err(err, errlen, rc, "'%s': %s", s->dir, s->conn.err);
        goto fail;
    }
    *out = s;
    return 0;
fail:
    vt_store_close(s);
    return rc;
}

static void store_pg_close(struct vt_store *s)
{
    if (!s->conn.pg)
        return; /* it never connected */
    store_pg_window_free(s);
    /* no longer waiting (a session that is gone is passed over anyway) */
    if (s->conn.pg->wait_gen) {
        struct pg_conn *c = s->conn.pg;
        PGconn *on = c->pooler ? c->listener : c->conn;
        char sql[96];

        snprintf(sql, sizeof(sql), "DELETE FROM waiters WHERE channel = '%s'", c->wait_channel);
        if (on && PQstatus(on) == CONNECTION_OK && PQtransactionStatus(on) == PQTRANS_IDLE &&
            (c->pooler || c->wait_gen == c->gen + 1))
            PQclear(PQexec(on, sql));
    }
    db_pg_disconnect(s->conn.pg);
    s->conn.pg = NULL;
}

static int start(struct vt_store *s, const char *sql, const char *what)
{
    if (s->conn.pg->in_tx) {
        /* PostgreSQL would only warn and carry on in the open one: refuse, as SQLite does */
        snprintf(s->conn.err, sizeof(s->conn.err), "database: %s: a transaction is already open",
                 what);
        return VT_ESTATE;
    }
    /* sent with the transaction's first statement, in its round trip (db_pg_begin) */
    db_pg_begin(s->conn.pg, sql);
    s->conn.pg->tx_serial++;
    return 0;
}

static int store_pg_begin(struct vt_store *s)
{
    if (s->read_only) {
        snprintf(s->conn.err, sizeof(s->conn.err), "library '%.400s' is read-only", s->dir);
        return VT_ESTATE;
    }
    return start(s, "BEGIN", "start a write");
}

static int store_pg_begin_read(struct vt_store *s)
{
    /* one snapshot for every statement of the read, as SQLite's read transaction gives */
    int rc = start(s, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "start a read");

    if (!rc)
        s->conn.pg->read_serial = s->conn.pg->tx_serial;
    return rc;
}

/*
 * NOTIFY vidtheque_jobs with the names of the stages that may have become runnable
 * (comma-separated; the stage table's names are [a-z_], nothing to quote), then tail.
 * A listener limited to some stages passes over a notification that names none of
 * them (stage_wanted); every stage, or one not in the table, is an empty payload,
 * which wakes everyone; progress only (STORE_NOTIFY_PROGRESS alone) is ".", which wakes
 * only a listener that waits for every stage (`add --wait`).
 */
static void notify_sql(char *sql, size_t n, unsigned stages, const char *tail)
{
    struct vt_sb sb = {0};
    const unsigned all = VT_STAGE_COUNT >= 32 ? ~0u : (1u << VT_STAGE_COUNT) - 1;

    vt_sb_adds(&sb, "NOTIFY vidtheque_jobs, '");
    if (stages == STORE_NOTIFY_PROGRESS)
        vt_sb_addc(&sb, '.');
    stages &= ~STORE_NOTIFY_PROGRESS;
    for (int k = 0; k < VT_STAGE_COUNT && (stages & all) != all && !(stages & ~all); k++)
        if (stages & (1u << k))
            vt_sb_addf(&sb, "%s%s", sb.buf[sb.len - 1] == '\'' ? "" : ",", vt_stages[k].name);
    vt_sb_addf(&sb, "'%s", tail);
    snprintf(sql, n, "%s", sb.buf);
    vt_sb_release(&sb);
}

/*
 * Waking (issue 26, "every settle woke every idle worker"). A handle that picks (one
 * that called vt_store_wait_stages, as each worker thread does) waits on a channel of
 * its own, vidtheque_w<server pid>, registered in waiters (migration 13) with the stages
 * it picks and the time it became idle. A transaction that queued or settled stages
 * counts, per stage it may have made runnable, how many times (wake_n); right after its
 * COMMIT, in the same round trip, vidtheque_wake looks, for each such stage, how many
 * rows of it are runnable now (at most the count) and wakes as many idle waiters that
 * pick it: oldest idle first, live sessions only (pg_stat_get_activity: a dead worker's
 * row is passed over and deleted at the next registration), taken with FOR UPDATE SKIP
 * LOCKED (two commits never choose the same one) and marked not idle. So a settle that
 * made nothing runnable (a video's last stage, stages whose other inputs still run, or
 * the stages of add's new video but its first) wakes nobody; a settle whose worker will
 * pick the next stage itself may still wake one more (at most one empty pick).
 * The wake runs after COMMIT as its own transaction, and a waiter says it is idle in a
 * transaction of its own before it looks at the queue (waiter_idle): either the wake's
 * snapshot sees it idle, or its look sees the stage: no wake is lost between them.
 * A chosen waiter that died or froze before it looked swallows that one wake (it is no
 * longer idle): the stage waits for the next look of some worker, an idle worker looks
 * every 2 s (cmd_worker.c) without being woken, and the worker that settled picks again.
 * `add --wait` (no stage set) still LISTENs on vidtheque_jobs, sent as before.
 */
static int wake_sql(struct vt_sb *sb, const unsigned short *n)
{
    int any = 0;

    vt_sb_adds(sb, "SELECT vidtheque_wake('{");
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        if (n[k])
            vt_sb_addf(sb, "%s%s", any++ ? "," : "", vt_stages[k].name);
    vt_sb_adds(sb, "}', '{");
    any = 0;
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        if (n[k])
            vt_sb_addf(sb, "%s%u", any++ ? "," : "", (unsigned)n[k]);
    vt_sb_adds(sb, "}')");
    return any;
}

/* Count the stages of a notify set in wake_n: a bit beyond the table (a stage name not in
 * it, store_woken_stages) counts for every stage. */
static void wake_count(struct pg_conn *c, unsigned stages)
{
    const unsigned all = (1u << VT_STAGE_COUNT) - 1;

    stages &= ~STORE_NOTIFY_PROGRESS;
    if (stages & ~all)
        stages = all;
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        if ((stages & (1u << k)) && c->wake_n[k] < 0xffff)
            c->wake_n[k]++;
}

static int store_pg_commit(struct vt_store *s)
{
    struct pg_conn *c = s->conn.pg;
    PGresult *r;
    int rc = 0;

    if (!c->in_tx) {
        snprintf(s->conn.err, sizeof(s->conn.err), "database: commit: no transaction is open");
        return VT_ESTATE;
    }
    if (c->lost) {
        db_pg_later_drop(c);
        c->in_tx = c->tx_sent = 0;
        snprintf(s->conn.err, sizeof(s->conn.err),
                 "database unavailable: commit: the connection was lost, nothing was committed");
        return VT_EUNAVAIL;
    }
    if (!c->tx_sent && c->nlater == c->begin_later && !c->notify) {
        /* nothing was sent but the BEGIN, which never went: nothing to commit */
        db_pg_later_drop(c);
        c->in_tx = 0;
        s->commits++;
        return 0;
    }
    /* One round trip for all, and for the statements deferred until now
     * (db_pg_exec_after_at); a NOTIFY that fails leaves COMMIT unrun (rolled back below).
     * After COMMIT: the wake, and a registered waiter that was idle (this is its claim,
     * its empty picks roll back) marks itself busy, so that wakes go to idle ones. What
     * follows COMMIT cannot undo it: only the COMMIT's result is read. */
    {
        char sql[256];
        struct vt_sb all = {0};
        int busy = c->wait_gen && !c->woken && (c->pooler || c->wait_gen == c->gen + 1);

        if (c->notify)
            notify_sql(sql, sizeof(sql), c->notify, "; COMMIT");
        else
            snprintf(sql, sizeof(sql), "COMMIT");
        vt_sb_adds(&all, sql);
        if (c->notify) {
            struct vt_sb wake = {0};

            if (wake_sql(&wake, c->wake_n))
                vt_sb_addf(&all, "; %s", wake.buf);
            vt_sb_release(&wake);
        }
        if (busy) {
            vt_sb_addf(&all, "; UPDATE waiters SET idle_since = NULL WHERE channel = '%s'",
                       c->wait_channel);
            c->woken = 1; /* the next wait says it is idle again, then looks */
        } else if (c->woken && c->notify && c->wait_gen &&
                   (c->pooler || c->wait_gen == c->gen + 1)) {
            /* a settle: its worker picks next, so it says it is idle now, before that pick,
             * after the wake (not woken by its own settle): its wait needs no look */
            vt_sb_addf(&all,
                       "; UPDATE waiters SET idle_since = extract(epoch FROM clock_timestamp())"
                       " WHERE channel = '%s'",
                       c->wait_channel);
            c->woken = 0;
        }
        rc = db_pg_exec_after_at(c, all.buf, c->notify ? 1 : 0, &r);
        vt_sb_release(&all);
    }
    c->notify = 0;
    memset(c->wake_n, 0, sizeof(c->wake_n));
    if (rc)
        store_fail(s, "commit");
    else if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        db_pg_record(c, r);
        rc = store_fail(s, "commit");
    } else if (strcmp(PQcmdStatus(r), "COMMIT")) {
        /* COMMIT of a transaction that had failed rolls it back, without an error */
        snprintf(s->conn.err, sizeof(s->conn.err),
                 "database: commit: the transaction had failed and was rolled back");
        rc = VT_EIO;
    }
    PQclear(r);
    if (rc && c->wait_gen)
        c->woken = 1; /* what followed COMMIT did not run: say idle again at the next wait */
    c->in_tx = c->tx_sent = 0;
    s->commits++;
    if (rc && PQstatus(c->conn) == CONNECTION_OK && PQtransactionStatus(c->conn) != PQTRANS_IDLE)
        PQclear(PQexec(c->conn, "ROLLBACK"));
    return rc;
}

static void store_pg_rollback(struct vt_store *s)
{
    struct pg_conn *c = s->conn.pg;

    /* a transaction never sent (db_pg_begin) has nothing to roll back */
    db_pg_later_drop(c);
    if (c->in_tx && c->tx_sent && !c->lost && PQstatus(c->conn) == CONNECTION_OK) {
        c->trips++;
        PQclear(PQexec(c->conn, "ROLLBACK"));
    }
    c->in_tx = 0;
    c->tx_sent = 0;
    c->notify = 0;
    memset(c->wake_n, 0, sizeof(c->wake_n));
}

/*
 * The server's current snapshot ("xmin:xmax:xip,...") moves whenever any transaction
 * that wrote ends (commit or abort): xmax is one past the latest completed one, and the
 * list holds those still running below it, so a commit either raises xmax or leaves the
 * list. Its hash, with this handle's own commits below it as on SQLite, changes
 * whenever anything may have changed; one round trip, no table read.
 */
static long long store_pg_version(struct vt_store *s)
{
    struct db_stmt *st;
    long long v = -1;

    if (store_prepare(s, "SELECT CAST(pg_current_snapshot() AS text)", &st))
        return -1;
    if (db_step(st) == DB_ROW && db_col_text(st, 0)) {
        const char *t = db_col_text(st, 0);
        uint64_t h = vt_fnv1a64(VT_FNV64_INIT, t, strlen(t));

        v = (long long)((h & 0xffffffffffULL) << 23) + (long long)(s->commits & 0x7fffff);
    }
    store_finish(s, st);
    return v;
}

/*
 * The server answers, and with amcheck installed in the database every B-tree index of
 * the schema is verified (bt_index_check: a lock that does not block writers). Without
 * it *ok is 1 and the message says what was not checked.
 */
static int store_pg_check(struct vt_store *s, int *ok)
{
    struct db_stmt *st;
    int rc = store_prepare(s, "SELECT count(*) FROM pg_extension WHERE extname = 'amcheck'", &st),
        amcheck = 0;

    *ok = 0;
    s->conn.err[0] = '\0';
    if (rc)
        return rc;
    rc = db_step(st);
    if (rc == DB_ROW)
        amcheck = db_col_int(st, 0) > 0;
    rc = rc == DB_ROW ? 0 : store_fail(s, "check the database");
    store_finish(s, st);
    if (rc)
        return rc;
    if (!amcheck) {
        *ok = 1;
        snprintf(s->conn.err, sizeof(s->conn.err),
                 "database: PostgreSQL answers; its indexes were not checked (install the "
                 "amcheck extension in the database to check them)");
        return 0;
    }
    rc = store_prepare(s,
                       "SELECT count(bt_index_check(i.indexrelid)) FROM pg_index i"
                       " JOIN pg_class c ON c.oid = i.indexrelid"
                       " JOIN pg_am a ON a.oid = c.relam"
                       " WHERE a.amname = 'btree' AND c.relnamespace = CAST(current_schema() AS"
                       " regnamespace)",
                       &st);
    if (rc)
        return rc;
    rc = db_step(st);
    if (rc == DB_ROW) {
        *ok = 1;
        rc = 0;
    } else if (!strcmp(s->conn.pg->state, "XX002")) {
        store_fail(s, "integrity check failed"); /* index_corrupted: the answer, not a failure */
        rc = 0;
    } else {
        rc = store_fail(s, "check the database");
    }
    store_finish(s, st);
    return rc;
}

/*
 * store_notify_work on PostgreSQL. Inside a transaction the NOTIFY is only remembered and
 * sent with the COMMIT, in the same round trip (the server delivers a notification at
 * commit either way, and sends one for any number of identical ones); outside, at once.
 */
static int store_pg_notify_work(struct vt_store *s, unsigned stages)
{
    struct pg_conn *c = s->conn.pg;
    char sql[256];
    struct vt_sb wake = {0};
    int rc;

    wake_count(c, stages);
    if (c->in_tx) {
        c->notify |= stages;
        return 0;
    }
    /* outside a transaction (the stage's change already committed): both in one */
    notify_sql(sql, sizeof(sql), stages, "");
    if (!wake_sql(&wake, c->wake_n)) {
        vt_sb_release(&wake);
        return store_exec(s, sql, "wake workers");
    }
    memset(c->wake_n, 0, sizeof(c->wake_n));
    rc = db_pg_ready(c);
    if (!rc) {
        struct vt_sb all = {0};
        PGresult *r = NULL;

        /* one round trip, as the commit's (db_pg_exec_after_at records a failure on c) */
        vt_sb_addf(&all, "%s; %s", sql, wake.buf);
        rc = db_pg_exec_after_at(c, all.buf, 1, &r);
        PQclear(r);
        vt_sb_release(&all);
    }
    if (rc)
        rc = store_fail(s, "wake workers");
    vt_sb_release(&wake);
    return rc;
}

/* Whether a notification's payload (stage names, comma-separated; empty: any) names a
 * stage in wanted (0: every stage). A name not in the table wakes too. */
static int stage_wanted(const char *payload, unsigned wanted)
{
    const char *p = payload;

    if (!wanted || !p || !*p)
        return 1;
    if (!strcmp(p, "."))
        return 0; /* progress only */
    while (*p) {
        size_t n = strcspn(p, ",");
        char name[32];
        int k;

        snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), p);
        k = vt_stage_find(name);
        if (k < 0 || (wanted & (1u << k)))
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* Take the notifications that came in on conn: whether any was on channel (a waiter's
 * own: any payload), or, channel NULL, on vidtheque_jobs for a stage in wanted. */
static int drain_notifies(PGconn *conn, const char *channel, unsigned wanted)
{
    PGnotify *n;
    int got = 0;

    while ((n = PQnotifies(conn))) {
        if (channel)
            got |= !strcmp(n->relname, channel);
        else
            got |= !strcmp(n->relname, "vidtheque_jobs") && stage_wanted(n->extra, wanted);
        PQfreemem(n);
    }
    return got;
}

/* Wait on conn's socket up to timeout_s for such a notification: 1 one came, 0 none, -1
 * the connection went away. */
static int wait_notify(PGconn *conn, const char *channel, unsigned wanted, double timeout_s)
{
    double end = vt_monotonic_s() + timeout_s, left;
    struct pollfd p;

    if (drain_notifies(conn, channel, wanted))
        return 1;
    while ((left = end - vt_monotonic_s()) > 0) {
        p = (struct pollfd){PQsocket(conn), POLLIN, 0};
        if (poll(&p, 1, (int)(left * 1000)) <= 0)
            return 0;
        if (!PQconsumeInput(conn))
            return -1;
        if (drain_notifies(conn, channel, wanted))
            return 1;
    }
    return 0;
}

/* Run sql (statements separated by ';') on conn, the handle's own connection or its
 * listener session, in one round trip: the last result when every one succeeded (the
 * caller clears it), else NULL with the first failure's message on c (a failure of the
 * handle's own connection recorded as any statement's). */
static PGresult *exec_all(struct pg_conn *c, PGconn *conn, const char *sql)
{
    PGresult *r, *last = NULL;
    int ok = PQsendQuery(conn, sql);

    c->trips++;
    if (!ok) {
        if (conn == c->conn)
            db_pg_record(c, NULL);
        else
            snprintf(c->msg, sizeof(c->msg), "%.300s", PQerrorMessage(conn));
        return NULL;
    }
    while ((r = PQgetResult(conn))) {
        ExecStatusType st = PQresultStatus(r);

        if (ok && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
            ok = 0;
            if (conn == c->conn)
                db_pg_record(c, r);
            else
                snprintf(c->msg, sizeof(c->msg), "%.300s", PQresultErrorMessage(r));
        }
        if (ok) {
            PQclear(last);
            last = r;
        } else {
            PQclear(r);
        }
    }
    if (!ok) {
        PQclear(last);
        last = NULL;
    }
    return last;
}

/*
 * A picking handle's wait (see "Waking" above): on a session not yet registered (or
 * registered for other stages), LISTEN on its channel and register; after a wake marked
 * it not idle, say it is idle again. Either is committed in a transaction of its own,
 * followed in the same round trip by a look at whether any of its stages has a runnable
 * row: then 1 at once (the caller picks), so nothing that became runnable before the
 * registration was seen is missed. Otherwise wait for a wake on the channel.
 * 1 woken or something to pick, 0 timed out, -1 the session failed (message on c).
 */
static int waiter_wait(struct vt_store *s, PGconn *conn, unsigned long sess, double timeout_s)
{
    struct pg_conn *c = s->conn.pg;
    int got;

    if (c->wait_gen != sess || c->wait_stages != s->wake_stages || c->woken) {
        struct vt_sb sql = {0}, names = {0}, look = {0};
        int fresh = c->wait_gen != sess;
        PGresult *r;

        if (fresh) {
            r = exec_all(c, conn, "SELECT pg_backend_pid()");
            if (!r)
                return -1;
            /* digits only, whatever the server sent: the name goes into SQL unquoted */
            snprintf(c->wait_channel, sizeof(c->wait_channel), "vidtheque_w%ld",
                     PQntuples(r) == 1 ? labs(atol(PQgetvalue(r, 0, 0))) : 0L);
            PQclear(r);
        }
        for (int k = 0; k < VT_STAGE_COUNT; k++)
            if (s->wake_stages & (1u << k)) {
                vt_sb_addf(&names, "%s%s", names.len ? "," : "", vt_stages[k].name);
                vt_sb_addf(&look, "%svidtheque_runnable('%s', 1)", look.len ? " + " : "",
                           vt_stages[k].name);
            }
        /* the channel's name is ours (digits after a fixed prefix): nothing to quote */
        vt_sb_addf(&sql, "BEGIN; %s%s%s", fresh ? "LISTEN " : "", fresh ? c->wait_channel : "",
                   fresh ? "; " : "");
        vt_sb_addf(&sql,
                   "INSERT INTO waiters (channel, pid, stages, idle_since) VALUES"
                   " ('%s', pg_backend_pid(), '{%s}', extract(epoch FROM clock_timestamp()))"
                   " ON CONFLICT (channel) DO UPDATE SET pid = excluded.pid,"
                   " stages = excluded.stages, idle_since = excluded.idle_since; COMMIT; ",
                   c->wait_channel, names.buf ? names.buf : "");
        if (fresh) /* the rows of sessions that are gone */
            vt_sb_adds(&sql, "DELETE FROM waiters w WHERE NOT EXISTS"
                             " (SELECT 1 FROM pg_stat_get_activity(w.pid)); ");
        vt_sb_addf(&sql, "SELECT %s", look.buf ? look.buf : "0");
        r = exec_all(c, conn, sql.buf);
        vt_sb_release(&sql);
        vt_sb_release(&names);
        vt_sb_release(&look);
        if (!r) {
            if (PQtransactionStatus(conn) == PQTRANS_INERROR)
                PQclear(PQexec(conn, "ROLLBACK"));
            return -1;
        }
        got = PQntuples(r) == 1 && atol(PQgetvalue(r, 0, 0)) > 0;
        PQclear(r);
        c->wait_gen = sess;
        c->wait_stages = s->wake_stages;
        c->woken = 0;
        if (got)
            return 1;
    }
    got = wait_notify(conn, c->wait_channel, 0, timeout_s);
    if (got > 0)
        c->woken = 1;
    return got;
}

static void sleep_s(double t)
{
    struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};

    nanosleep(&ts, NULL);
}

/*
 * Through a transaction-mode pool with no LISTEN session configured: look at the
 * database's version (store_pg_version: any transaction that wrote, one round trip)
 * every poll_step, which doubles from 50 ms to 1 s while nothing changes and drops back
 * at a change; between looks the wait only sleeps. So 100 idle workers cost at most 100
 * short statements a second, and one woken by a change looks again 50 ms later.
 */
static int poll_wait(struct vt_store *s, double timeout_s)
{
    struct pg_conn *c = s->conn.pg;
    double now = vt_monotonic_s(), wait;
    long long v;
    int changed;

    if (c->poll_step <= 0)
        c->poll_step = 0.05;
    wait = c->poll_next - now;
    if (wait >= timeout_s) {
        sleep_s(timeout_s);
        return 0;
    }
    if (wait > 0)
        sleep_s(wait);
    v = store_pg_version(s);
    if (v < 0)
        return store_fail(s, "wait for work");
    changed = c->poll_version && v != c->poll_version;
    c->poll_version = v;
    c->poll_step = changed ? 0.05 : (c->poll_step * 2 < 1.0 ? c->poll_step * 2 : 1.0);
    c->poll_next = vt_monotonic_s() + c->poll_step;
    return changed;
}

/* Through a transaction-mode pool with listen_host / listen_port: LISTEN on a session of
 * the handle's own there, opened at the first wait and again after it went away. */
static int listener_wait(struct vt_store *s, double timeout_s)
{
    struct pg_conn *c = s->conn.pg;
    int fresh, got;
    PGconn *l = db_pg_listener(c, &fresh);

    if (!l)
        return store_fail(s, "listen for work");
    if (fresh)
        c->wait_gen = 0; /* a new session: registered nowhere */
    if (s->wake_stages) {
        got = waiter_wait(s, l, 1, timeout_s);
        if (got < 0) {
            PQfinish(c->listener); /* reopened at the next wait */
            c->listener = NULL;
            return store_fail(s, "listen for work");
        }
        return got;
    }
    if (fresh) {
        PGresult *r = PQexec(l, "LISTEN vidtheque_jobs");
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;

        c->trips++;
        if (!ok)
            db_pg_record(c, r);
        PQclear(r);
        if (!ok)
            return store_fail(s, "listen for work");
        return 1; /* whatever was committed before it listened: look once */
    }
    got = wait_notify(l, NULL, s->wake_stages, timeout_s);
    if (got < 0) {
        PQfinish(c->listener); /* reopened at the next wait */
        c->listener = NULL;
        return 0;
    }
    return got;
}

/*
 * The queue's wait (store_queue.c, vt_store_wait_work): LISTEN vidtheque_jobs once per
 * session, then wait on the connection's socket for a notification (sent by NOTIFY at
 * the commit that queued or settled a stage) up to timeout_s. A notification that came
 * in while other statements ran is already queued in libpq: it returns at once. A
 * worker never waits inside a transaction, where none would be delivered. Through a
 * transaction-mode pool a LISTEN would hold a server session the pool hands to others:
 * a session of its own (listener_wait), or polling (poll_wait).
 */
static int store_pg_wait_work(struct vt_store *s, double timeout_s)
{
    struct pg_conn *c = s->conn.pg;
    int rc, got;

    if (c->pooler)
        return c->listen_host || c->listen_port ? listener_wait(s, timeout_s)
                                                : poll_wait(s, timeout_s);
    rc = db_pg_ready(c);
    if (rc)
        return store_fail(s, "wait for work");
    if (s->wake_stages) {
        got = waiter_wait(s, c->conn, c->gen + 1, timeout_s);
        if (got < 0 && (c->lost || PQstatus(c->conn) != CONNECTION_OK)) {
            c->lost = 1; /* the next statement reconnects, or says the server is away */
            return 0;
        }
        return got < 0 ? store_fail(s, "wait for work") : got;
    }
    if (c->listen_gen != c->gen + 1) {
        rc = store_exec(s, "LISTEN vidtheque_jobs", "listen for work");
        if (rc)
            return rc;
        c->listen_gen = c->gen + 1;
    }
    got = wait_notify(c->conn, NULL, s->wake_stages, timeout_s);
    if (got < 0) {
        c->lost = 1; /* the next statement reconnects, or says the server is away */
        return 0;
    }
    return got;
}

/* The server's clock: clock_timestamp(), which moves inside a transaction (now() does not). */
static int store_pg_server_time(struct vt_store *s, double *t)
{
    struct db_stmt *st;
    int rc = store_prepare(s, "SELECT extract(epoch FROM clock_timestamp())", &st);

    if (rc)
        return rc;
    rc = db_step(st);
    if (rc == DB_ROW)
        *t = db_col_double(st, 0);
    rc = rc == DB_ROW ? 0 : store_fail(s, "read the server's clock");
    store_finish(s, st);
    return rc;
}

static const struct store_backend pg_backend = {
    .close = store_pg_close,
    .begin = store_pg_begin,
    .begin_read = store_pg_begin_read,
    .commit = store_pg_commit,
    .rollback = store_pg_rollback,
    .version = store_pg_version,
    .check = store_pg_check,
    .wait_work = store_pg_wait_work,
    .notify_work = store_pg_notify_work,
    .server_time = store_pg_server_time,
    .screen_docs_refresh = store_pg_screen_docs_refresh,
    .title_docs_refresh = store_pg_title_docs_refresh,
    .maintain = store_pg_maintain,
    .terms_docs = store_pg_terms_docs,
    .rows = store_pg_rows,
};
