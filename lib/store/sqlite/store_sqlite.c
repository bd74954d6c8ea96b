/*
 * The SQLite backend of the store (see store.h): opening a database file, its schema and
 * transactions. One database per library, in WAL mode, writers take the lock up front
 * with BEGIN IMMEDIATE, and the schema moves forward through numbered migrations recorded
 * in PRAGMA user_version. The verbs themselves are the shared files' (store_*.c); what
 * SQLite does its own way is the hooks below (sqlite_backend, store_int.h).
 */
#include "store/db/db_sqlite.h"
#include "store/store_int.h"
#include "base/util.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Migration i takes the schema from version i to i+1. Never edit a shipped one. */
static const char *const migrations[] = {
    "CREATE TABLE videos ("
    " id TEXT PRIMARY KEY,"
    " content_key TEXT NOT NULL UNIQUE,"
    " source_kind TEXT NOT NULL,"
    " source_path TEXT,"
    " title TEXT, channel TEXT, published TEXT, language TEXT, container TEXT,"
    " duration_s REAL NOT NULL DEFAULT 0,"
    " width INTEGER NOT NULL DEFAULT 0, height INTEGER NOT NULL DEFAULT 0,"
    " rotation INTEGER NOT NULL DEFAULT 0, fps REAL NOT NULL DEFAULT 0,"
    " has_video INTEGER NOT NULL DEFAULT 0, has_audio INTEGER NOT NULL DEFAULT 0,"
    " size_bytes INTEGER NOT NULL DEFAULT 0,"
    " index_state TEXT NOT NULL DEFAULT 'queued',"
    " data_status TEXT NOT NULL DEFAULT 'missing',"
    " created_at REAL NOT NULL, indexed_at REAL NOT NULL DEFAULT 0,"
    " seq INTEGER NOT NULL"
    ");"
    "CREATE TABLE stages ("
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " name TEXT NOT NULL, ord INTEGER NOT NULL,"
    " state TEXT NOT NULL, model TEXT, error TEXT, owner TEXT,"
    " started_at REAL NOT NULL DEFAULT 0, took_s REAL NOT NULL DEFAULT 0,"
    " attempts INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (video_id, name)) WITHOUT ROWID;"
    "CREATE TABLE chapters ("
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, start_s REAL NOT NULL, end_s REAL NOT NULL,"
    " title TEXT, source TEXT NOT NULL,"
    " PRIMARY KEY (video_id, idx)) WITHOUT ROWID;"
    "CREATE TABLE shots ("
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, start_s REAL NOT NULL, end_s REAL NOT NULL,"
    " captured INTEGER NOT NULL, kept INTEGER NOT NULL,"
    " PRIMARY KEY (video_id, idx)) WITHOUT ROWID;"
    "CREATE TABLE frames ("
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, t_s REAL NOT NULL, frame_no INTEGER NOT NULL,"
    " shot INTEGER NOT NULL, duplicate_of INTEGER, sharpness REAL NOT NULL,"
    " bytes INTEGER NOT NULL, path TEXT, width INTEGER NOT NULL, height INTEGER NOT NULL,"
    " phash INTEGER NOT NULL,"
    " PRIMARY KEY (video_id, idx)) WITHOUT ROWID;"
    "CREATE TABLE ocr_lines ("
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " frame_idx INTEGER NOT NULL, line_no INTEGER NOT NULL,"
    " text TEXT NOT NULL, conf REAL NOT NULL,"
    " x INTEGER NOT NULL, y INTEGER NOT NULL, w INTEGER NOT NULL, h INTEGER NOT NULL,"
    " PRIMARY KEY (video_id, frame_idx, line_no)) WITHOUT ROWID;",

    /* 2: transcripts, chunks and the full-text index */
    "ALTER TABLE videos ADD COLUMN stt_mode TEXT NOT NULL DEFAULT 'auto';"
    "CREATE TABLE cues ("
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, start_s REAL NOT NULL, end_s REAL NOT NULL, text TEXT NOT NULL,"
    " PRIMARY KEY (video_id, idx)) WITHOUT ROWID;"
    "CREATE TABLE words ("
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " cue_idx INTEGER NOT NULL, idx INTEGER NOT NULL, text TEXT NOT NULL,"
    " start_s REAL NOT NULL, end_s REAL NOT NULL, conf REAL NOT NULL,"
    " PRIMARY KEY (video_id, cue_idx, idx)) WITHOUT ROWID;"
    "CREATE TABLE chunks ("
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, start_s REAL NOT NULL, end_s REAL NOT NULL, text TEXT NOT NULL,"
    " first_cue INTEGER NOT NULL, last_cue INTEGER NOT NULL,"
    " PRIMARY KEY (video_id, idx)) WITHOUT ROWID;"
    /* one row per searchable moment: a cue, a frame's text, a title or chapter title */
    "CREATE TABLE docs ("
    " id INTEGER PRIMARY KEY,"
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " source TEXT NOT NULL, ref INTEGER NOT NULL,"
    " start_s REAL NOT NULL, end_s REAL NOT NULL, text TEXT NOT NULL, meta TEXT NOT NULL);"
    "CREATE INDEX docs_by_video ON docs (video_id, source);"
    /* meta holds filter tokens (source, video) so filters are index intersections */
    "CREATE VIRTUAL TABLE docs_fts USING fts5 (text, meta, content='docs', content_rowid='id',"
    " tokenize='unicode61 remove_diacritics 2');"
    "CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN"
    " INSERT INTO docs_fts (rowid, text, meta) VALUES (new.id, new.text, new.meta); END;"
    "CREATE TRIGGER docs_ad AFTER DELETE ON docs BEGIN"
    " INSERT INTO docs_fts (docs_fts, rowid, text, meta)"
    " VALUES ('delete', old.id, old.text, old.meta); END;"
    "INSERT INTO docs_fts (docs_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)');"
    "CREATE VIRTUAL TABLE docs_vocab USING fts5vocab (docs_fts, 'row');"
    /* the phonetic key of every word ever indexed from speech */
    "CREATE TABLE phonetic (term TEXT PRIMARY KEY, key TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE INDEX phonetic_by_key ON phonetic (key);"
    /* every word read on screen under itself and each of its one-letter deletions:
     * words one edit apart share a key (symmetric delete), found by a few lookups */
    "CREATE TABLE fuzzy (del TEXT NOT NULL, term TEXT NOT NULL,"
    " PRIMARY KEY (del, term)) WITHOUT ROWID;"
    /* index what version 1 libraries already hold: titles, chapters, frame text */
    "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta)"
    " SELECT id, 'title', -1, 0, duration_s, title, 'stitle v' || lower(hex(id)) FROM videos"
    "  WHERE title IS NOT NULL;"
    "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta)"
    " SELECT video_id, 'title', idx, start_s, end_s, title, 'stitle v' || lower(hex(video_id))"
    "  FROM chapters WHERE title IS NOT NULL;"
    "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta)"
    " SELECT f.video_id, 'screen', f.idx, sh.start_s, sh.end_s,"
    "  (SELECT group_concat(text, char(10)) FROM (SELECT l.text FROM ocr_lines l"
    "    WHERE l.video_id = f.video_id AND l.frame_idx = coalesce(f.duplicate_of, f.idx)"
    "    ORDER BY l.line_no)), 'sscreen v' || lower(hex(f.video_id))"
    " FROM frames f JOIN shots sh ON sh.video_id = f.video_id AND sh.idx = f.shot"
    " WHERE EXISTS (SELECT 1 FROM ocr_lines l WHERE l.video_id = f.video_id"
    "  AND l.frame_idx = coalesce(f.duplicate_of, f.idx));",

    /* 3: videos from URLs (yt-dlp), the lists they came from, retries with backoff */
    "ALTER TABLE videos ADD COLUMN source_url TEXT;"
    "ALTER TABLE videos ADD COLUMN page_url TEXT;"
    "ALTER TABLE videos ADD COLUMN platform_id TEXT;"
    "ALTER TABLE videos ADD COLUMN extractor TEXT;"
    "ALTER TABLE videos ADD COLUMN description TEXT;"
    "ALTER TABLE videos ADD COLUMN thumbnail TEXT;"
    "ALTER TABLE videos ADD COLUMN captions_path TEXT;"
    "ALTER TABLE videos ADD COLUMN captions_model TEXT;"
    "ALTER TABLE videos ADD COLUMN keep_media INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE videos ADD COLUMN list_id INTEGER;"
    "ALTER TABLE stages ADD COLUMN retry_at REAL NOT NULL DEFAULT 0;"
    "CREATE TABLE lists ("
    " id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, title TEXT,"
    " max_entries INTEGER NOT NULL DEFAULT 0, stt_mode TEXT NOT NULL DEFAULT 'auto',"
    " keep_media INTEGER NOT NULL DEFAULT 1, added_at REAL NOT NULL,"
    " checked_at REAL NOT NULL DEFAULT 0);",

    /* 4: vectors of the text_embed stage (store_vectors.c) */
    "CREATE TABLE vectors ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " kind TEXT NOT NULL, ref INTEGER NOT NULL, start_s REAL NOT NULL, end_s REAL NOT NULL,"
    " space TEXT NOT NULL, dim INTEGER NOT NULL,"
    " f32 BLOB NOT NULL, i8 BLOB NOT NULL, scale REAL NOT NULL);"
    "CREATE INDEX vectors_by_video ON vectors (video_id);"
    "CREATE INDEX vectors_by_space ON vectors (space, id);",

    /* 5: footage shared between videos, found after frame_embed (store_reuse.c) */
    "CREATE TABLE reuse ("
    " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " other_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
    " start_s REAL NOT NULL, end_s REAL NOT NULL,"
    " other_start_s REAL NOT NULL, other_end_s REAL NOT NULL,"
    " similarity REAL NOT NULL, frames INTEGER NOT NULL);"
    "CREATE INDEX reuse_by_video ON reuse (video_id, start_s);"
    "CREATE INDEX reuse_by_other ON reuse (other_id);",

    /* 6: OCR lines below the noise floor (ocr_noise.h): kept, never indexed or counted.
     * Lines read before it are judged by confidence alone (below 0.40 is noise by any
     * rule; the rest waits for a redo of ocr), and the frames' index rows are rebuilt. */
    "ALTER TABLE ocr_lines ADD COLUMN noise INTEGER NOT NULL DEFAULT 0;"
    "UPDATE ocr_lines SET noise = 1 WHERE conf < 0.40;"
    "DELETE FROM docs WHERE source = 'screen';"
    "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta)"
    " SELECT f.video_id, 'screen', f.idx, sh.start_s, sh.end_s,"
    "  (SELECT group_concat(text, char(10)) FROM (SELECT l.text FROM ocr_lines l"
    "    WHERE l.video_id = f.video_id AND l.frame_idx = coalesce(f.duplicate_of, f.idx)"
    "    AND l.noise = 0 ORDER BY l.line_no)), 'sscreen v' || lower(hex(f.video_id))"
    " FROM frames f JOIN shots sh ON sh.video_id = f.video_id AND sh.idx = f.shot"
    " WHERE EXISTS (SELECT 1 FROM ocr_lines l WHERE l.video_id = f.video_id"
    "  AND l.frame_idx = coalesce(f.duplicate_of, f.idx) AND l.noise = 0)"
    " ORDER BY f.video_id, f.idx;",

    /* 7: the transition into each shot (cut, dissolve, fade) and its span; NULL in
     * shots stored before: their kind was not recorded */
    "ALTER TABLE shots ADD COLUMN transition TEXT;"
    "ALTER TABLE shots ADD COLUMN trans_start_s REAL;"
    "ALTER TABLE shots ADD COLUMN trans_end_s REAL;",

    /* 8: the job queue (store_queue.c): a lease a heartbeat extends, a priority, when a
     * stage was queued (the queue's age order), and the stage table's dependencies as
     * rows, so the claim's query can tell which stages may run */
    "ALTER TABLE stages ADD COLUMN lease_until REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE stages ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE stages ADD COLUMN queued_at REAL NOT NULL DEFAULT 0;"
    "UPDATE stages SET queued_at = (SELECT created_at FROM videos WHERE id = stages.video_id);"
    /* the claim's order, over the rows that may be claimed: the next is the first */
    "CREATE INDEX stages_runnable ON stages (priority DESC, queued_at, video_id, ord)"
    " WHERE state IN (" VT_SQL_STATES_UNSETTLED ");"
    "CREATE TABLE stage_deps (name TEXT NOT NULL, dep TEXT NOT NULL,"
    " PRIMARY KEY (name, dep)) WITHOUT ROWID;",
};

/* From VT_STORE_BASE_VERSION on, migrations.h's list (store_migrate_later) follows. */
_Static_assert(VT_ARRAY_LEN(migrations) == VT_STORE_BASE_VERSION, "one migration per version");

static int sqlite_begin(struct vt_store *s)
{
    if (s->read_only) {
        snprintf(s->conn.err, sizeof(s->conn.err), "library '%.400s' is read-only", s->dir);
        return VT_ESTATE;
    }
    return store_exec(s, "BEGIN IMMEDIATE", "start a write");
}

static int sqlite_begin_read(struct vt_store *s)
{
    return store_exec(s, "BEGIN", "start a read");
}

static long long sqlite_version(struct vt_store *s)
{
    struct db_stmt *st;
    long long v = -1;

    /* data_version moves when another connection commits; commits counts ours */
    if (store_prepare(s, "PRAGMA data_version", &st))
        return -1;
    if (db_step(st) == DB_ROW)
        v = db_col_int64(st, 0);
    store_finish(s, st);
    return v < 0 ? -1 : (v << 24) + (long long)(s->commits & 0xffffff);
}

static void sqlite_rollback(struct vt_store *s)
{
    if (!sqlite3_get_autocommit(s->conn.sqlite))
        sqlite3_exec(s->conn.sqlite, "ROLLBACK", NULL, NULL, NULL);
}

static int sqlite_commit(struct vt_store *s)
{
    int rc = store_exec(s, "COMMIT", "commit");

    s->commits++;
    if (rc)
        sqlite_rollback(s);
    return rc;
}

static int sqlite_check(struct vt_store *s, int *ok)
{
    struct db_stmt *st;
    int rc;

    rc = store_prepare(s, "PRAGMA integrity_check", &st);
    *ok = 0;
    s->conn.err[0] = '\0';
    if (rc)
        return rc;
    if (db_step(st) == DB_ROW && !strcmp(db_col_text(st, 0), "ok"))
        *ok = 1;
    else
        snprintf(s->conn.err, sizeof(s->conn.err), "database: integrity check failed");
    store_finish(s, st);
    return 0;
}

/* The search index, waiting and notifying: store_search.c's and store_queue.c's own way. */
static const struct store_backend sqlite_backend = {
    .begin = sqlite_begin,
    .begin_read = sqlite_begin_read,
    .commit = sqlite_commit,
    .rollback = sqlite_rollback,
    .version = sqlite_version,
    .check = sqlite_check,
};

static int migrate(struct vt_store *s)
{
    struct db_stmt *st;
    int version = 0, rc;

    rc = store_prepare(s, "PRAGMA user_version", &st);
    if (rc)
        return rc;
    if (db_step(st) == DB_ROW)
        version = db_col_int(st, 0);
    store_finish(s, st);
    if (version > VT_STORE_SCHEMA_VERSION) {
        snprintf(s->conn.err, sizeof(s->conn.err),
                 "database: schema version %d is newer than this program (%d)", version,
                 VT_STORE_SCHEMA_VERSION);
        return VT_ESTATE;
    }
    if (version == VT_STORE_SCHEMA_VERSION)
        return 0;
    if (s->read_only) {
        snprintf(s->conn.err, sizeof(s->conn.err),
                 "library '%.300s' is read-only and its database needs an upgrade (schema "
                 "version %d, this program %d): open it once where it can be written",
                 s->dir, version, VT_STORE_SCHEMA_VERSION);
        return VT_ESTATE;
    }
    rc = sqlite_begin(s);
    if (rc)
        return rc;
    /* re-read under the write lock: another process may have migrated meanwhile */
    rc = store_prepare(s, "PRAGMA user_version", &st);
    if (rc)
        goto fail;
    version = db_step(st) == DB_ROW ? db_col_int(st, 0) : 0;
    store_finish(s, st);
    for (int v = version; v < (int)VT_ARRAY_LEN(migrations); v++) {
        char pragma[64];

        rc = store_exec(s, migrations[v], "upgrade the schema");
        if (rc)
            goto fail;
        snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
        rc = store_exec(s, pragma, "upgrade the schema");
        if (rc)
            goto fail;
    }
    rc = store_migrate_later(s, version > VT_STORE_BASE_VERSION ? version : VT_STORE_BASE_VERSION);
    if (rc)
        goto fail;
    return sqlite_commit(s);
fail:
    sqlite_rollback(s);
    return rc;
}

/*
 * SQLite's memory statistics take a global mutex on every allocation, which threads
 * each with their own connection (the web server) then fight over. We never read
 * them. This must run before SQLite initialises, hence once, before the first open.
 */
static void sqlite_setup(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_initialize();
}

/*
 * Whether we may write the database: its directory (SQLite creates -wal, -shm and
 * journals there), the file itself, and its -wal and -shm when present. access()
 * also says EROFS for root on a read-only mount, where permissions do not stop root.
 */
static int db_writable(const char *db_path, const char *dir)
{
    char side[4200];
    int ok =
        !faccessat(AT_FDCWD, dir, W_OK, AT_EACCESS) &&
        (faccessat(AT_FDCWD, db_path, F_OK, 0) || !faccessat(AT_FDCWD, db_path, W_OK, AT_EACCESS));

    for (int i = 0; ok && i < 2; i++) {
        snprintf(side, sizeof(side), "%s%s", db_path, i ? "-shm" : "-wal");
        ok = faccessat(AT_FDCWD, side, F_OK, 0) || !faccessat(AT_FDCWD, side, W_OK, AT_EACCESS);
    }
    return ok;
}

/* The "file:" URI of path with query (SQLite URIs are percent-encoded). Caller frees. */
static char *file_uri(const char *path, const char *query)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(path), q = strlen(query), k = 0;
    char *uri = vt_xcalloc(1, 5 + 3 * n + 1 + q + 1);

    memcpy(uri, "file:", 5);
    k = 5;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/-._~", *p)) {
            uri[k++] = (char)*p;
        } else {
            uri[k++] = '%';
            uri[k++] = hex[*p >> 4];
            uri[k++] = hex[*p & 15];
        }
    }
    uri[k++] = '?';
    memcpy(uri + k, query, q + 1);
    return uri;
}

/* The schema is readable on s->conn.sqlite (opening is lazy: this is where a WAL database
 * without its -shm fails). */
static int schema_readable(struct vt_store *s)
{
    return sqlite3_exec(s->conn.sqlite, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL) == SQLITE_OK;
}

/*
 * Open a database we may not write. SQLite reads a WAL database read-only when its
 * -shm can be read (another process has it open, or it was left behind); a closed
 * WAL database on a read-only mount has none, and only opens as immutable (no locks,
 * no -shm: nobody can be writing a file that cannot be written). Immutable ignores a
 * -wal file, so one with content (changes not yet copied into the database, maybe a
 * half-done copy) is refused rather than read wrong.
 */
static int open_read_only(struct vt_store *s, const char *db_path)
{
    const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;
    char wal[4200];
    struct stat st;
    char *uri;
    int ok;

    s->read_only = 1;
    if (sqlite3_open_v2(db_path, &s->conn.sqlite, flags, NULL) == SQLITE_OK &&
        !sqlite3_busy_timeout(s->conn.sqlite, 10000) && schema_readable(s))
        return 0;
    sqlite3_close(s->conn.sqlite);
    s->conn.sqlite = NULL;
    snprintf(wal, sizeof(wal), "%s-wal", db_path);
    if (!stat(wal, &st) && st.st_size > 0) {
        snprintf(s->conn.err, sizeof(s->conn.err),
                 "library '%s' is read-only and its last changes are still in library.db-wal "
                 "(open it once where it can be written)",
                 s->dir);
        return VT_ESTATE;
    }
    uri = file_uri(db_path, "immutable=1");
    ok = sqlite3_open_v2(uri, &s->conn.sqlite, flags | SQLITE_OPEN_URI, NULL) == SQLITE_OK &&
         schema_readable(s);
    free(uri);
    if (!ok) {
        snprintf(s->conn.err, sizeof(s->conn.err), "'%.300s': cannot open read-only: %.150s", db_path,
                 s->conn.sqlite ? sqlite3_errmsg(s->conn.sqlite) : "out of memory");
        return VT_EIO;
    }
    return 0;
}

int store_sqlite_open(const char *db_path, int flags, struct vt_store **out, char *err,
                      size_t errlen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    struct vt_store *s;
    const char *slash = strrchr(db_path, '/');
    int rc, writable;

    pthread_once(&once, sqlite_setup);
    s = vt_xcalloc(1, sizeof(*s));
    s->conn.ops = &db_sqlite_ops;
    s->be = &sqlite_backend;
    *out = NULL;
    s->dir = vt_xstrdup(slash ? db_path : ".");
    if (slash)
        s->dir[slash == db_path ? 1 : slash - db_path] = '\0';
    writable = db_writable(db_path, s->dir);
    if (!writable && (flags & VT_STORE_READ)) {
        rc = open_read_only(s, db_path);
        if (rc) {
            vt_err(err, errlen, rc, "%s", s->conn.err);
            goto fail;
        }
    } else if (!writable) {
        rc = vt_err(err, errlen, VT_ESTATE, "library '%s' is read-only", s->dir);
        goto fail;
    } else if (sqlite3_open_v2(db_path, &s->conn.sqlite,
                               SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
                                   SQLITE_OPEN_NOFOLLOW,
                               NULL) != SQLITE_OK) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': cannot open database: %s", db_path,
                    s->conn.sqlite ? sqlite3_errmsg(s->conn.sqlite) : "out of memory");
        goto fail;
    } else if (sqlite3_db_readonly(s->conn.sqlite, "main") == 1) {
        /* SQLite fell back to reading: the file could not be opened for writing after all */
        sqlite3_close(s->conn.sqlite);
        s->conn.sqlite = NULL;
        if (!(flags & VT_STORE_READ)) {
            rc = vt_err(err, errlen, VT_ESTATE, "library '%s' is read-only", s->dir);
            goto fail;
        }
        rc = open_read_only(s, db_path);
        if (rc) {
            vt_err(err, errlen, rc, "%s", s->conn.err);
            goto fail;
        }
    }
    sqlite3_busy_timeout(s->conn.sqlite, 10000);
    sqlite3_extended_result_codes(s->conn.sqlite, 0);
    rc = s->read_only ? store_exec(s, "PRAGMA foreign_keys=ON", "set up the connection")
                      : store_exec(s,
                                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                                   " PRAGMA foreign_keys=ON;",
                                   "set up the connection");
    if (!rc)
        rc = migrate(s);
    if (!rc)
        rc = store_register_rank(s);
    if (!rc && !s->read_only)
        rc = vt_store_sync_stage_deps(s);
    if (rc) {
        vt_err(err, errlen, rc, "'%s': %s", db_path, s->conn.err);
        goto fail;
    }
    *out = s;
    return 0;
fail:
    vt_store_close(s);
    return rc;
}

