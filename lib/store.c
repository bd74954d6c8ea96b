/*
 * SQLite implementation of the store (see store.h): the only file that includes
 * <sqlite3.h>. One database per library, in WAL mode, writers take the lock up
 * front with BEGIN IMMEDIATE, and the schema moves forward through numbered
 * migrations recorded in PRAGMA user_version.
 */
#include "store.h"

#include "query.h"
#include "util.h"

#include <assert.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DF_CACHE 4096 /* entries of the document-frequency cache (a power of two) */

struct df_entry {
    char *term;
    long long docs;
};

#define STMT_CACHE 64

struct vt_store {
    sqlite3 *db;
    char err[512];
    /* statements prepared once and reused (parsing SQL cost more than running it) */
    struct {
        char *sql;
        sqlite3_stmt *st;
        int out; /* handed out by prepare(), not yet given back by finish() */
    } cache[STMT_CACHE];
    size_t uncached; /* statements from prepare() outside the cache, not yet finished */
    /* document frequencies of indexed terms, counted once per handle (see term_docs) */
    struct df_entry df[DF_CACHE];
    size_t df_used;
    unsigned long commits; /* write transactions committed through this handle */
    int read_only;         /* opened by vt_store_open_flags(VT_STORE_READ) on a read-only db */
    char *dir;             /* the database's directory, for messages */
};

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
};

_Static_assert(VT_ARRAY_LEN(migrations) == VT_STORE_SCHEMA_VERSION, "one migration per version");

const char *vt_store_errmsg(const struct vt_store *s)
{
    return s->err;
}

/* Record the database's message for what failed and return VT_EIO. */
static int fail(struct vt_store *s, const char *what)
{
    int code = sqlite3_errcode(s->db);

    snprintf(s->err, sizeof(s->err), "database: %.60s: %.400s", what, sqlite3_errmsg(s->db));
    return code == SQLITE_BUSY || code == SQLITE_LOCKED ? VT_EBUSY : VT_EIO;
}

/* Run sql; a failure says what it was doing ("database: WHAT: why"), never the SQL. */
static int exec(struct vt_store *s, const char *sql, const char *what)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return fail(s, what);
    return 0;
}

#ifndef NDEBUG
/* Whether the cache holds a copy of sql, for the asserts: looks at every slot, so that
 * a copy after a hole (which prepare's lookup would not see) counts too. */
static int stmt_cache_holds(const struct vt_store *s, const char *sql)
{
    for (size_t i = 0; i < STMT_CACHE; i++)
        if (s->cache[i].sql && !strcmp(s->cache[i].sql, sql))
            return 1;
    return 0;
}
#endif

/*
 * Prepare sql, or reuse the statement prepared for the same text before: a handle
 * serves the same few dozen statements over and over (the web server's threads each
 * keep one). Statements are given back with finish(), never finalized directly. A
 * cached statement still out (a nested read of the same SQL) gets a fresh one.
 *
 * The cache's invariants, checked with assert() (NDEBUG is never set by the Makefile):
 * slots fill from the front and are emptied only by vt_store_close(); one slot per SQL
 * text; a slot's statement is out to one caller at a time, and reset (not busy) while
 * it is not out; finish() takes only statements prepare() gave, each once.
 */
static int prepare(struct vt_store *s, const char *sql, sqlite3_stmt **st)
{
    size_t i;
    int cached = 0;

    for (i = 0; i < STMT_CACHE && s->cache[i].sql; i++) {
        if (strcmp(s->cache[i].sql, sql))
            continue;
        cached = 1;
        /* out is ours to know: SQLite calls a statement not yet stepped "not busy" */
        if (s->cache[i].out)
            break;
        assert(!sqlite3_stmt_busy(s->cache[i].st));
        s->cache[i].out = 1;
        *st = s->cache[i].st;
        return 0;
    }
    if (sqlite3_prepare_v3(s->db, sql, -1, cached ? 0 : SQLITE_PREPARE_PERSISTENT, st, NULL) !=
        SQLITE_OK) {
        *st = NULL;
        return fail(s, "prepare a query");
    }
    /*
     * One cached copy per SQL text: the copy for a nested read is finalized by finish(),
     * so the cache never fills with copies of a statement that was out once.
     */
    if (!cached) {
        for (; i < STMT_CACHE; i++) {
            if (!s->cache[i].sql) {
                assert(!stmt_cache_holds(s, sql));
                s->cache[i].sql = vt_xstrdup(sql);
                s->cache[i].st = *st;
                s->cache[i].out = 1;
                return 0;
            }
        }
    }
    s->uncached++; /* a nested copy, or the cache is full: finish() finalizes it */
    return 0;
}

/* Give back a statement from prepare(): reset if cached, finalized otherwise. */
static void finish(struct vt_store *s, sqlite3_stmt *st)
{
    if (!st)
        return;
    assert(sqlite3_db_handle(st) == s->db);
    for (size_t i = 0; i < STMT_CACHE && s->cache[i].sql; i++) {
        if (s->cache[i].st == st) {
            assert(s->cache[i].out); /* given back twice, or never handed out */
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            s->cache[i].out = 0;
            return;
        }
    }
    assert(s->uncached > 0); /* not from prepare(), or finished twice */
    s->uncached--;
    sqlite3_finalize(st);
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

static char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);

    return t ? vt_xstrdup((const char *)t) : NULL;
}

/* Run a statement that returns no rows; finalizes it. */
static int step_done(struct vt_store *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(s, what);

    finish(s, st);
    return rc;
}

static int migrate(struct vt_store *s)
{
    sqlite3_stmt *st;
    int version = 0, rc;

    rc = prepare(s, "PRAGMA user_version", &st);
    if (rc)
        return rc;
    if (sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
    finish(s, st);
    if (version > (int)VT_ARRAY_LEN(migrations)) {
        snprintf(s->err, sizeof(s->err),
                 "database: schema version %d is newer than this program (%d)", version,
                 (int)VT_ARRAY_LEN(migrations));
        return VT_ESTATE;
    }
    if (version == (int)VT_ARRAY_LEN(migrations))
        return 0;
    if (s->read_only) {
        snprintf(s->err, sizeof(s->err),
                 "library '%.300s' is read-only and its database needs an upgrade (schema "
                 "version %d, this program %d): open it once where it can be written",
                 s->dir, version, (int)VT_ARRAY_LEN(migrations));
        return VT_ESTATE;
    }
    rc = vt_store_begin(s);
    if (rc)
        return rc;
    /* re-read under the write lock: another process may have migrated meanwhile */
    rc = prepare(s, "PRAGMA user_version", &st);
    if (rc)
        goto fail;
    version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    finish(s, st);
    for (int v = version; v < (int)VT_ARRAY_LEN(migrations); v++) {
        char pragma[64];

        rc = exec(s, migrations[v], "upgrade the schema");
        if (rc)
            goto fail;
        snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
        rc = exec(s, pragma, "upgrade the schema");
        if (rc)
            goto fail;
    }
    return vt_store_commit(s);
fail:
    vt_store_rollback(s);
    return rc;
}

/*
 * vtrank(docs_fts, df, phrase_n): BM25 over the text column where the frequency of
 * each phrase comes from the caller (a blob of doubles, one per phrase in query
 * order; negative: not scored). FTS5's own bm25() counts them by reading every
 * phrase's whole posting list on each query, which for a word in every video costs
 * more than the search; the row count and average length are kept by FTS5.
 * With phrase_n > 1, a row where the first phrase_n phrases stand in sequence (the
 * words typed, as a phrase) gets VT_PHRASE_BONUS on top.
 */
/* Do phrases 0..n-1 occur one after another somewhere in the text column? */
static int in_sequence(const Fts5ExtensionApi *api, Fts5Context *fts, int n)
{
    int count = 0;

    if (api->xInstCount(fts, &count))
        return 0;
    for (int i = 0; i < count; i++) {
        int phrase, col, off, k;

        if (api->xInst(fts, i, &phrase, &col, &off) || phrase != 0 || col != 0)
            continue;
        for (k = 1; k < n; k++) {
            int found = 0;

            for (int j = 0; j < count && !found; j++) {
                int p2, c2, o2;

                if (!api->xInst(fts, j, &p2, &c2, &o2))
                    found = p2 == k && c2 == 0 && o2 == off + k;
            }
            if (!found)
                break;
        }
        if (k == n)
            return 1;
    }
    return 0;
}

static void vtrank(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
                   sqlite3_value **val)
{
    const double k1 = 1.2, b = 0.75;
    const double *df = NULL;
    sqlite3_int64 rows = 0, total = 0;
    int ndf = 0, len = 0, nphrase = api->xPhraseCount(fts);
    double avg, score = 0;

    if (nval >= 1 && sqlite3_value_type(val[0]) == SQLITE_BLOB) {
        df = sqlite3_value_blob(val[0]);
        ndf = sqlite3_value_bytes(val[0]) / (int)sizeof(double);
    }
    if (nval >= 2 && sqlite3_value_int(val[1]) > 1 &&
        in_sequence(api, fts, sqlite3_value_int(val[1])))
        score = VT_PHRASE_BONUS;
    if (api->xRowCount(fts, &rows) || api->xColumnTotalSize(fts, 0, &total) ||
        api->xColumnSize(fts, 0, &len)) {
        sqlite3_result_error(ctx, "vtrank: cannot read index statistics", -1);
        return;
    }
    avg = rows > 0 && total > 0 ? (double)total / (double)rows : 1;
    for (int i = 0; i < nphrase && i < ndf; i++) {
        Fts5PhraseIter it;
        int col, off, tf = 0;
        double idf, d = df[i];

        if (d < 0)
            continue;
        for (api->xPhraseFirst(fts, i, &it, &col, &off); col >= 0;
             api->xPhraseNext(fts, &it, &col, &off))
            tf += col == 0;
        if (!tf)
            continue;
        if (d > (double)rows)
            d = (double)rows;
        idf = log(((double)rows - d + 0.5) / (d + 0.5) + 1.0);
        score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg));
    }
    sqlite3_result_double(ctx, score);
}

static int register_rank(struct vt_store *s)
{
    fts5_api *api = NULL;
    sqlite3_stmt *st;
    int rc = prepare(s, "SELECT fts5(?1)", &st);

    if (rc)
        return rc;
    sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(st);
    finish(s, st);
    if (!api || api->iVersion < 2 ||
        api->xCreateFunction(api, "vtrank", NULL, vtrank, NULL) != SQLITE_OK) {
        snprintf(s->err, sizeof(s->err), "database: SQLite has no usable FTS5");
        return VT_EIO;
    }
    return 0;
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

/* The schema is readable on s->db (opening is lazy: this is where a WAL database
 * without its -shm fails). */
static int schema_readable(struct vt_store *s)
{
    return sqlite3_exec(s->db, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL) == SQLITE_OK;
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
    if (sqlite3_open_v2(db_path, &s->db, flags, NULL) == SQLITE_OK &&
        !sqlite3_busy_timeout(s->db, 10000) && schema_readable(s))
        return 0;
    sqlite3_close(s->db);
    s->db = NULL;
    snprintf(wal, sizeof(wal), "%s-wal", db_path);
    if (!stat(wal, &st) && st.st_size > 0) {
        snprintf(s->err, sizeof(s->err),
                 "library '%s' is read-only and its last changes are still in library.db-wal "
                 "(open it once where it can be written)",
                 s->dir);
        return VT_ESTATE;
    }
    uri = file_uri(db_path, "immutable=1");
    ok = sqlite3_open_v2(uri, &s->db, flags | SQLITE_OPEN_URI, NULL) == SQLITE_OK &&
         schema_readable(s);
    free(uri);
    if (!ok) {
        snprintf(s->err, sizeof(s->err), "'%.300s': cannot open read-only: %.150s", db_path,
                 s->db ? sqlite3_errmsg(s->db) : "out of memory");
        return VT_EIO;
    }
    return 0;
}

int vt_store_open(const char *db_path, struct vt_store **out, char *err, size_t errlen)
{
    return vt_store_open_flags(db_path, 0, out, err, errlen);
}

int vt_store_open_flags(const char *db_path, int flags, struct vt_store **out, char *err,
                        size_t errlen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    struct vt_store *s;
    const char *slash = strrchr(db_path, '/');
    int rc, writable;

    pthread_once(&once, sqlite_setup);
    s = vt_xcalloc(1, sizeof(*s));
    *out = NULL;
    s->dir = vt_xstrdup(slash ? db_path : ".");
    if (slash)
        s->dir[slash == db_path ? 1 : slash - db_path] = '\0';
    writable = db_writable(db_path, s->dir);
    if (!writable && (flags & VT_STORE_READ)) {
        rc = open_read_only(s, db_path);
        if (rc) {
            vt_err(err, errlen, rc, "%s", s->err);
            goto fail;
        }
    } else if (!writable) {
        rc = vt_err(err, errlen, VT_ESTATE, "library '%s' is read-only", s->dir);
        goto fail;
    } else if (sqlite3_open_v2(db_path, &s->db,
                               SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
                                   SQLITE_OPEN_NOFOLLOW,
                               NULL) != SQLITE_OK) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': cannot open database: %s", db_path,
                    s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto fail;
    } else if (sqlite3_db_readonly(s->db, "main") == 1) {
        /* SQLite fell back to reading: the file could not be opened for writing after all */
        sqlite3_close(s->db);
        s->db = NULL;
        if (!(flags & VT_STORE_READ)) {
            rc = vt_err(err, errlen, VT_ESTATE, "library '%s' is read-only", s->dir);
            goto fail;
        }
        rc = open_read_only(s, db_path);
        if (rc) {
            vt_err(err, errlen, rc, "%s", s->err);
            goto fail;
        }
    }
    sqlite3_busy_timeout(s->db, 10000);
    sqlite3_extended_result_codes(s->db, 0);
    rc = s->read_only ? exec(s, "PRAGMA foreign_keys=ON", "set up the connection")
                      : exec(s,
                             "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                             " PRAGMA foreign_keys=ON;",
                             "set up the connection");
    if (!rc)
        rc = migrate(s);
    if (!rc)
        rc = register_rank(s);
    if (rc) {
        vt_err(err, errlen, rc, "'%s': %s", db_path, s->err);
        goto fail;
    }
    *out = s;
    return 0;
fail:
    vt_store_close(s);
    return rc;
}

int vt_store_read_only(const struct vt_store *s)
{
    return s->read_only;
}

void vt_store_close(struct vt_store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < DF_CACHE; i++)
        free(s->df[i].term);
    /* a statement still out would keep sqlite3_close() from closing (and leak the db) */
    assert(!s->uncached);
    for (size_t i = 0; i < STMT_CACHE; i++) {
        assert(!s->cache[i].out);
        sqlite3_finalize(s->cache[i].st);
        free(s->cache[i].sql);
    }
    sqlite3_close(s->db);
    free(s->dir);
    free(s);
}

int vt_store_begin(struct vt_store *s)
{
    if (s->read_only) {
        snprintf(s->err, sizeof(s->err), "library '%.400s' is read-only", s->dir);
        return VT_ESTATE;
    }
    return exec(s, "BEGIN IMMEDIATE", "start a write");
}

int vt_store_begin_read(struct vt_store *s)
{
    return exec(s, "BEGIN", "start a read");
}

long long vt_store_version(struct vt_store *s)
{
    sqlite3_stmt *st;
    long long v = -1;

    /* data_version moves when another connection commits; commits counts ours */
    if (prepare(s, "PRAGMA data_version", &st))
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    finish(s, st);
    return v < 0 ? -1 : (v << 24) + (long long)(s->commits & 0xffffff);
}

int vt_store_commit(struct vt_store *s)
{
    int rc = exec(s, "COMMIT", "commit");

    s->commits++;
    if (rc)
        vt_store_rollback(s);
    return rc;
}

void vt_store_rollback(struct vt_store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int vt_store_check(struct vt_store *s, int *ok)
{
    sqlite3_stmt *st;
    int rc = prepare(s, "PRAGMA integrity_check", &st);

    *ok = 0;
    if (rc)
        return rc;
    if (sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "ok"))
        *ok = 1;
    else
        snprintf(s->err, sizeof(s->err), "database: integrity check failed");
    finish(s, st);
    return 0;
}

/* ---- videos ---- */

#define VIDEO_COLS                                                                                 \
    "id, content_key, source_kind, source_path, title, channel, published, language, container, "  \
    "duration_s, width, height, rotation, fps, has_video, has_audio, size_bytes, index_state, "    \
    "data_status, created_at, indexed_at, stt_mode, source_url, page_url, platform_id, "           \
    "extractor, "                                                                                  \
    "description, thumbnail, captions_path, captions_model, keep_media, list_id"

static void video_from_row(sqlite3_stmt *st, struct vt_video_rec *v)
{
    memset(v, 0, sizeof(*v));
    snprintf(v->id, sizeof(v->id), "%s", (const char *)sqlite3_column_text(st, 0));
    v->content_key = col_dup(st, 1);
    v->source_kind = col_dup(st, 2);
    v->source_path = col_dup(st, 3);
    v->title = col_dup(st, 4);
    v->channel = col_dup(st, 5);
    v->published = col_dup(st, 6);
    v->language = col_dup(st, 7);
    v->container = col_dup(st, 8);
    v->duration_s = sqlite3_column_double(st, 9);
    v->width = sqlite3_column_int(st, 10);
    v->height = sqlite3_column_int(st, 11);
    v->rotation = sqlite3_column_int(st, 12);
    v->fps = sqlite3_column_double(st, 13);
    v->has_video = sqlite3_column_int(st, 14);
    v->has_audio = sqlite3_column_int(st, 15);
    v->size_bytes = sqlite3_column_int64(st, 16);
    v->index_state = col_dup(st, 17);
    v->data_status = col_dup(st, 18);
    v->created_at = sqlite3_column_double(st, 19);
    v->indexed_at = sqlite3_column_double(st, 20);
    v->stt_mode = col_dup(st, 21);
    v->source_url = col_dup(st, 22);
    v->page_url = col_dup(st, 23);
    v->platform_id = col_dup(st, 24);
    v->extractor = col_dup(st, 25);
    v->description = col_dup(st, 26);
    v->thumbnail = col_dup(st, 27);
    v->captions_path = col_dup(st, 28);
    v->captions_model = col_dup(st, 29);
    v->keep_media = sqlite3_column_int(st, 30);
    v->list_id = sqlite3_column_int64(st, 31);
}

void vt_video_rec_release(struct vt_video_rec *v)
{
    if (!v)
        return;
    free(v->content_key);
    free(v->source_kind);
    free(v->source_path);
    free(v->title);
    free(v->channel);
    free(v->published);
    free(v->language);
    free(v->container);
    free(v->index_state);
    free(v->data_status);
    free(v->stt_mode);
    free(v->source_url);
    free(v->page_url);
    free(v->platform_id);
    free(v->extractor);
    free(v->description);
    free(v->thumbnail);
    free(v->captions_path);
    free(v->captions_model);
    memset(v, 0, sizeof(*v));
}

int vt_store_video_get(struct vt_store *s, const char *id, struct vt_video_rec *v)
{
    sqlite3_stmt *st;
    int rc = prepare(s, "SELECT " VIDEO_COLS " FROM videos WHERE id = ?", &st);

    if (rc)
        return rc;
    bind_text(st, 1, id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        video_from_row(st, v);
        rc = 0;
    } else if (rc == SQLITE_DONE) {
        snprintf(s->err, sizeof(s->err), "no video '%s'", id);
        rc = VT_ENOTFOUND;
    } else {
        rc = fail(s, "read video");
    }
    finish(s, st);
    return rc;
}

static int lookup_id(struct vt_store *s, const char *sql, const char *arg, char id[65])
{
    sqlite3_stmt *st;
    int rc = prepare(s, sql, &st);

    if (rc)
        return rc;
    bind_text(st, 1, arg);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (id)
            snprintf(id, 65, "%s", (const char *)sqlite3_column_text(st, 0));
        rc = 0;
    } else {
        rc = rc == SQLITE_DONE ? VT_ENOTFOUND : fail(s, "look up video");
    }
    finish(s, st);
    return rc;
}

int vt_store_video_find_key(struct vt_store *s, const char *content_key, char id[65])
{
    return lookup_id(s, "SELECT id FROM videos WHERE content_key = ?", content_key, id);
}

int vt_store_video_id_taken(struct vt_store *s, const char *id)
{
    int rc = lookup_id(s, "SELECT id FROM videos WHERE id = ?", id, NULL);

    return rc == 0 ? 1 : rc == VT_ENOTFOUND ? 0 : rc;
}

int vt_store_video_insert(struct vt_store *s, const struct vt_video_rec *v)
{
    sqlite3_stmt *st;
    int rc = prepare(s,
                     "INSERT INTO videos (" VIDEO_COLS ", seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                     "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                     " (SELECT coalesce(max(seq),0)+1 FROM videos))",
                     &st);

    if (rc)
        return rc;
    bind_text(st, 1, v->id);
    bind_text(st, 2, v->content_key);
    bind_text(st, 3, v->source_kind);
    bind_text(st, 4, v->source_path);
    bind_text(st, 5, v->title);
    bind_text(st, 6, v->channel);
    bind_text(st, 7, v->published);
    bind_text(st, 8, v->language);
    bind_text(st, 9, v->container);
    sqlite3_bind_double(st, 10, v->duration_s);
    sqlite3_bind_int(st, 11, v->width);
    sqlite3_bind_int(st, 12, v->height);
    sqlite3_bind_int(st, 13, v->rotation);
    sqlite3_bind_double(st, 14, v->fps);
    sqlite3_bind_int(st, 15, v->has_video);
    sqlite3_bind_int(st, 16, v->has_audio);
    sqlite3_bind_int64(st, 17, v->size_bytes);
    bind_text(st, 18, v->index_state ? v->index_state : "queued");
    bind_text(st, 19, v->data_status ? v->data_status : "missing");
    sqlite3_bind_double(st, 20, v->created_at);
    sqlite3_bind_double(st, 21, v->indexed_at);
    bind_text(st, 22, v->stt_mode ? v->stt_mode : "auto");
    bind_text(st, 23, v->source_url);
    bind_text(st, 24, v->page_url);
    bind_text(st, 25, v->platform_id);
    bind_text(st, 26, v->extractor);
    bind_text(st, 27, v->description);
    bind_text(st, 28, v->thumbnail);
    bind_text(st, 29, v->captions_path);
    bind_text(st, 30, v->captions_model);
    sqlite3_bind_int(st, 31, v->keep_media);
    if (v->list_id)
        sqlite3_bind_int64(st, 32, v->list_id);
    else
        sqlite3_bind_null(st, 32);
    return step_done(s, st, "insert video");
}

int vt_store_video_update_meta(struct vt_store *s, const struct vt_video_rec *v)
{
    sqlite3_stmt *st;
    int rc = prepare(s,
                     "UPDATE videos SET title=?, channel=?, published=?, language=?, container=?,"
                     " duration_s=?, width=?, height=?, rotation=?, fps=?, has_video=?,"
                     " has_audio=?, size_bytes=? WHERE id=?",
                     &st);

    if (rc)
        return rc;
    bind_text(st, 1, v->title);
    bind_text(st, 2, v->channel);
    bind_text(st, 3, v->published);
    bind_text(st, 4, v->language);
    bind_text(st, 5, v->container);
    sqlite3_bind_double(st, 6, v->duration_s);
    sqlite3_bind_int(st, 7, v->width);
    sqlite3_bind_int(st, 8, v->height);
    sqlite3_bind_int(st, 9, v->rotation);
    sqlite3_bind_double(st, 10, v->fps);
    sqlite3_bind_int(st, 11, v->has_video);
    sqlite3_bind_int(st, 12, v->has_audio);
    sqlite3_bind_int64(st, 13, v->size_bytes);
    bind_text(st, 14, v->id);
    return step_done(s, st, "update video");
}

int vt_store_video_update_source(struct vt_store *s, const struct vt_video_rec *v)
{
    sqlite3_stmt *st;
    int rc = prepare(s,
                     "UPDATE videos SET source_path=?, page_url=?, platform_id=?, extractor=?,"
                     " description=?, thumbnail=?, captions_path=?, captions_model=? WHERE id=?",
                     &st);

    if (rc)
        return rc;
    bind_text(st, 1, v->source_path);
    bind_text(st, 2, v->page_url);
    bind_text(st, 3, v->platform_id);
    bind_text(st, 4, v->extractor);
    bind_text(st, 5, v->description);
    bind_text(st, 6, v->thumbnail);
    bind_text(st, 7, v->captions_path);
    bind_text(st, 8, v->captions_model);
    bind_text(st, 9, v->id);
    return step_done(s, st, "update video source");
}

int vt_store_video_set_state(struct vt_store *s, const char *id, const char *index_state,
                             const char *data_status, double indexed_at)
{
    sqlite3_stmt *st;
    int rc =
        prepare(s, "UPDATE videos SET index_state=?, data_status=?, indexed_at=? WHERE id=?", &st);

    if (rc)
        return rc;
    bind_text(st, 1, index_state);
    bind_text(st, 2, data_status);
    sqlite3_bind_double(st, 3, indexed_at);
    bind_text(st, 4, id);
    return step_done(s, st, "update video state");
}

int vt_store_video_delete(struct vt_store *s, const char *id)
{
    sqlite3_stmt *st;
    int rc = prepare(s, "DELETE FROM videos WHERE id = ?", &st);

    if (rc)
        return rc;
    bind_text(st, 1, id);
    rc = step_done(s, st, "delete video");
    if (!rc && sqlite3_changes(s->db) == 0) {
        snprintf(s->err, sizeof(s->err), "no video '%s'", id);
        rc = VT_ENOTFOUND;
    }
    /* words said or shown only in this video leave the lookup tables with it */
    if (!rc)
        rc = exec(s,
                  "DELETE FROM phonetic WHERE term NOT IN (SELECT term FROM docs_vocab);"
                  "DELETE FROM fuzzy WHERE term NOT IN (SELECT term FROM docs_vocab);",
                  "forget the removed video's words");
    return rc;
}

int vt_store_video_each(struct vt_store *s, int (*fn)(void *user, const struct vt_video_rec *v),
                        void *user)
{
    sqlite3_stmt *st;
    int rc = prepare(s, "SELECT " VIDEO_COLS " FROM videos ORDER BY seq", &st);

    if (rc)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct vt_video_rec v;
        int stop;

        video_from_row(st, &v);
        stop = fn(user, &v);
        vt_video_rec_release(&v);
        if (stop)
            break;
    }
    rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : fail(s, "list videos");
    finish(s, st);
    return rc;
}

/* ---- stages ---- */

int vt_store_stages(struct vt_store *s, const char *id, struct vt_stage_rec **recs, size_t *n)
{
    sqlite3_stmt *st;
    struct vt_stage_rec *r = NULL;
    size_t cap = 0, len = 0;
    int rc = prepare(s,
                     "SELECT name, state, model, error, owner, started_at, took_s, attempts,"
                     " retry_at FROM stages WHERE video_id = ? ORDER BY ord",
                     &st);

    *recs = NULL;
    *n = 0;
    if (rc)
        return rc;
    bind_text(st, 1, id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct vt_stage_rec *x;

        vt_grow((void **)&r, &cap, len + 1, sizeof(*r));
        x = &r[len++];
        memset(x, 0, sizeof(*x));
        snprintf(x->name, sizeof(x->name), "%s", (const char *)sqlite3_column_text(st, 0));
        /* a state this version does not know is run again, as queued */
        if (vt_state_parse((const char *)sqlite3_column_text(st, 1), &x->state))
            x->state = VT_STATE_QUEUED;
        x->model = col_dup(st, 2);
        x->error = col_dup(st, 3);
        x->owner = col_dup(st, 4);
        x->started_at = sqlite3_column_double(st, 5);
        x->took_s = sqlite3_column_double(st, 6);
        x->attempts = sqlite3_column_int(st, 7);
        x->retry_at = sqlite3_column_double(st, 8);
    }
    finish(s, st);
    if (rc != SQLITE_DONE) {
        vt_stage_recs_free(r, len);
        return fail(s, "read stages");
    }
    *recs = r;
    *n = len;
    return 0;
}

void vt_stage_recs_free(struct vt_stage_rec *recs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(recs[i].model);
        free(recs[i].error);
        free(recs[i].owner);
    }
    free(recs);
}

int vt_store_stage_put(struct vt_store *s, const char *id, const struct vt_stage_rec *r)
{
    sqlite3_stmt *st;
    int rc = prepare(s,
                     "INSERT INTO stages (video_id, name, ord, state, model, error, owner,"
                     " started_at, took_s, attempts, retry_at) VALUES (?1, ?2,"
                     " (SELECT count(*) FROM stages WHERE video_id = ?1), ?3, ?4, ?5, ?6, ?7, ?8,"
                     " ?9, ?10) ON CONFLICT (video_id, name) DO UPDATE SET state=?3, model=?4,"
                     " error=?5, owner=?6, started_at=?7, took_s=?8, attempts=?9, retry_at=?10",
                     &st);

    if (rc)
        return rc;
    bind_text(st, 1, id);
    bind_text(st, 2, r->name);
    bind_text(st, 3, vt_state_name(r->state));
    bind_text(st, 4, r->model);
    bind_text(st, 5, r->error);
    bind_text(st, 6, r->owner);
    sqlite3_bind_double(st, 7, r->started_at);
    sqlite3_bind_double(st, 8, r->took_s);
    sqlite3_bind_int(st, 9, r->attempts);
    sqlite3_bind_double(st, 10, r->retry_at);
    return step_done(s, st, "record stage");
}

int vt_store_unfinished(struct vt_store *s, int n_stages, char ***ids, size_t *n)
{
    sqlite3_stmt *st;
    char **v = NULL;
    size_t cap = 0, len = 0;
    int rc =
        prepare(s,
                "SELECT id FROM videos WHERE id IN (SELECT video_id FROM stages WHERE state"
                " IN (?1, ?2)) OR index_state IN ('queued','processing')"
                " OR (SELECT count(*) FROM stages WHERE video_id = videos.id) < ?3 ORDER BY seq",
                &st);

    *ids = NULL;
    *n = 0;
    if (rc)
        return rc;
    bind_text(st, 1, vt_state_name(VT_STATE_QUEUED));
    bind_text(st, 2, vt_state_name(VT_STATE_RUNNING));
    sqlite3_bind_int(st, 3, n_stages);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vt_grow((void **)&v, &cap, len + 1, sizeof(*v));
        v[len++] = col_dup(st, 0);
    }
    finish(s, st);
    if (rc != SQLITE_DONE) {
        for (size_t i = 0; i < len; i++)
            free(v[i]);
        free(v);
        return fail(s, "list unfinished videos");
    }
    *ids = v;
    *n = len;
    return 0;
}

/* ---- chapters ---- */

static int delete_where_video(struct vt_store *s, const char *table, const char *id)
{
    sqlite3_stmt *st;
    char sql[96];
    int rc;

    snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE video_id = ?", table);
    rc = prepare(s, sql, &st);
    if (rc)
        return rc;
    bind_text(st, 1, id);
    return step_done(s, st, "delete old rows");
}

int vt_store_chapters_replace(struct vt_store *s, const char *id, const struct vt_chapter *c,
                              size_t n, const char *source)
{
    sqlite3_stmt *st;
    int rc = delete_where_video(s, "chapters", id);

    if (rc)
        return rc;
    rc = prepare(s,
                 "INSERT INTO chapters (video_id, idx, start_s, end_s, title, source)"
                 " VALUES (?,?,?,?,?,?)",
                 &st);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        bind_text(st, 1, id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        sqlite3_bind_double(st, 3, c[i].start_s);
        sqlite3_bind_double(st, 4, c[i].end_s);
        bind_text(st, 5, c[i].title);
        bind_text(st, 6, source);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = fail(s, "insert chapter");
        sqlite3_reset(st);
    }
    finish(s, st);
    return rc;
}

int vt_store_chapters(struct vt_store *s, const char *id, struct vt_store_chapter **out, size_t *n)
{
    sqlite3_stmt *st;
    struct vt_store_chapter *c = NULL;
    size_t cap = 0, len = 0;
    int rc = prepare(s,
                     "SELECT start_s, end_s, title, source FROM chapters WHERE video_id = ?"
                     " ORDER BY idx",
                     &st);

    *out = NULL;
    *n = 0;
    if (rc)
        return rc;
    bind_text(st, 1, id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vt_grow((void **)&c, &cap, len + 1, sizeof(*c));
        c[len].start_s = sqlite3_column_double(st, 0);
        c[len].end_s = sqlite3_column_double(st, 1);
        c[len].title = col_dup(st, 2);
        c[len].source = col_dup(st, 3);
        len++;
    }
    finish(s, st);
    if (rc != SQLITE_DONE) {
        vt_store_chapters_free(c, len);
        return fail(s, "read chapters");
    }
    *out = c;
    *n = len;
    return 0;
}

void vt_store_chapters_free(struct vt_store_chapter *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].title);
        free(c[i].source);
    }
    free(c);
}

/* ---- shots, frames, OCR ---- */

int vt_store_keyframes_clear(struct vt_store *s, const char *id)
{
    int rc = delete_where_video(s, "frames", id);

    if (!rc)
        rc = delete_where_video(s, "shots", id);
    return rc;
}

int vt_store_keyframes_replace(struct vt_store *s, const char *id, const struct vt_kf_result *r,
                               const char *frames_rel_dir)
{
    sqlite3_stmt *st = NULL;
    int rc = vt_store_keyframes_clear(s, id);

    if (rc)
        return rc;
    rc = prepare(s,
                 "INSERT INTO shots (video_id, idx, start_s, end_s, captured, kept)"
                 " VALUES (?,?,?,?,?,?)",
                 &st);
    for (size_t i = 0; i < r->n_shots && !rc; i++) {
        const struct vt_kf_shot *x = &r->shots[i];

        bind_text(st, 1, id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        sqlite3_bind_double(st, 3, x->start_s);
        sqlite3_bind_double(st, 4, x->end_s);
        sqlite3_bind_int(st, 5, x->captured);
        sqlite3_bind_int(st, 6, x->kept);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = fail(s, "insert shot");
        sqlite3_reset(st);
    }
    finish(s, st);
    if (rc)
        return rc;
    rc = prepare(s,
                 "INSERT INTO frames (video_id, idx, t_s, frame_no, shot, duplicate_of, sharpness,"
                 " bytes, path, width, height, phash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                 &st);
    for (size_t i = 0; i < r->n_frames && !rc; i++) {
        const struct vt_kf_frame *f = &r->frames[i];

        bind_text(st, 1, id);
        sqlite3_bind_int(st, 2, f->index);
        sqlite3_bind_double(st, 3, f->t_s);
        sqlite3_bind_int64(st, 4, f->frame_no);
        sqlite3_bind_int(st, 5, f->shot);
        if (f->duplicate_of >= 0)
            sqlite3_bind_int(st, 6, f->duplicate_of);
        else
            sqlite3_bind_null(st, 6);
        sqlite3_bind_double(st, 7, f->sharpness);
        sqlite3_bind_int64(st, 8, f->bytes);
        if (f->file[0]) {
            char *p = vt_xasprintf("%s/%s", frames_rel_dir, f->file);

            bind_text(st, 9, p);
            free(p);
        } else {
            sqlite3_bind_null(st, 9);
        }
        sqlite3_bind_int(st, 10, f->width);
        sqlite3_bind_int(st, 11, f->height);
        sqlite3_bind_int64(st, 12, (sqlite3_int64)f->phash);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = fail(s, "insert frame");
        sqlite3_reset(st);
    }
    finish(s, st);
    return rc;
}

int vt_store_shots(struct vt_store *s, const char *id, struct vt_kf_shot **out, size_t *n)
{
    return vt_store_shots_range(s, id, 0, INT64_MAX, out, n);
}

int vt_store_shots_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                         struct vt_kf_shot **out, size_t *n)
{
    sqlite3_stmt *st;
    struct vt_kf_shot *v = NULL;
    size_t cap = 0, len = 0;
    int rc = prepare(s,
                     "SELECT start_s, end_s, captured, kept FROM shots WHERE video_id = ?"
                     " AND idx >= ? AND idx < ? ORDER BY idx",
                     &st);

    *out = NULL;
    *n = 0;
    if (rc)
        return rc;
    bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, to);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vt_grow((void **)&v, &cap, len + 1, sizeof(*v));
        v[len].start_s = sqlite3_column_double(st, 0);
        v[len].end_s = sqlite3_column_double(st, 1);
        v[len].captured = sqlite3_column_int(st, 2);
        v[len].kept = sqlite3_column_int(st, 3);
        len++;
    }
    finish(s, st);
    if (rc != SQLITE_DONE) {
        free(v);
        return fail(s, "read shots");
    }
    *out = v;
    *n = len;
    return 0;
}

int vt_store_frames(struct vt_store *s, const char *id, struct vt_store_frame **out, size_t *n)
{
    return vt_store_frames_range(s, id, 0, INT64_MAX, out, n);
}

int vt_store_frames_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                          struct vt_store_frame **out, size_t *n)
{
    sqlite3_stmt *st = NULL;
    struct vt_store_frame *v = NULL;
    size_t cap = 0, len = 0;
    int rc = prepare(s,
                     "SELECT idx, t_s, frame_no, shot, duplicate_of, sharpness, bytes, path, width,"
                     " height, phash FROM frames WHERE video_id = ? AND idx >= ? AND idx < ?"
                     " ORDER BY idx",
                     &st);

    *out = NULL;
    *n = 0;
    if (rc)
        return rc;
    bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, to);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct vt_store_frame *x;

        vt_grow((void **)&v, &cap, len + 1, sizeof(*v));
        x = &v[len++];
        memset(x, 0, sizeof(*x));
        x->f.index = sqlite3_column_int(st, 0);
        x->f.t_s = sqlite3_column_double(st, 1);
        x->f.frame_no = sqlite3_column_int64(st, 2);
        x->f.shot = sqlite3_column_int(st, 3);
        x->f.duplicate_of =
            sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 4);
        x->f.sharpness = sqlite3_column_double(st, 5);
        x->f.bytes = sqlite3_column_int64(st, 6);
        x->path = col_dup(st, 7);
        x->f.width = sqlite3_column_int(st, 8);
        x->f.height = sqlite3_column_int(st, 9);
        x->f.phash = (uint64_t)sqlite3_column_int64(st, 10);
    }
    finish(s, st);
    st = NULL;
    if (rc != SQLITE_DONE) {
        rc = fail(s, "read frames");
        goto fail;
    }
    rc = prepare(s,
                 "SELECT frame_idx, text, conf, x, y, w, h FROM ocr_lines WHERE video_id = ?"
                 " AND frame_idx >= ? AND frame_idx < ? ORDER BY frame_idx, line_no",
                 &st);
    if (rc)
        goto fail;
    bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, to);
    {
        size_t fi = 0, lcap = 0;

        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int idx = sqlite3_column_int(st, 0);
            struct vt_ocr_page *pg;
            struct vt_ocr_line *ln;

            while (fi < len && v[fi].f.index < idx) {
                fi++;
                lcap = 0;
            }
            if (fi == len || v[fi].f.index != idx)
                continue; /* lines of a frame that no longer exists */
            pg = &v[fi].ocr;
            if (pg->n_lines == 0)
                lcap = 0;
            vt_grow((void **)&pg->lines, &lcap, pg->n_lines + 1, sizeof(*pg->lines));
            ln = &pg->lines[pg->n_lines++];
            ln->text = col_dup(st, 1);
            if (!ln->text)
                ln->text = vt_xstrdup("");
            ln->conf = sqlite3_column_double(st, 2);
            for (int k = 0; k < 4; k++)
                ln->box[k] = sqlite3_column_int(st, 3 + k);
        }
    }
    finish(s, st);
    if (rc != SQLITE_DONE) {
        rc = fail(s, "read OCR lines");
        goto fail;
    }
    *out = v;
    *n = len;
    return 0;
fail:
    vt_store_frames_free(v, len);
    return rc;
}

void vt_store_frames_free(struct vt_store_frame *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].path);
        for (size_t k = 0; k < f[i].ocr.n_lines; k++)
            free(f[i].ocr.lines[k].text);
        free(f[i].ocr.lines);
    }
    free(f);
}

static int delete_docs(struct vt_store *s, const char *id, const char *source)
{
    sqlite3_stmt *st;
    int rc = prepare(s, "DELETE FROM docs WHERE video_id = ? AND source = ?", &st);

    if (rc)
        return rc;
    bind_text(st, 1, id);
    bind_text(st, 2, source);
    return step_done(s, st, "delete index rows");
}

/* The filter tokens of a row: its source and its video (hex, so one token). */
static char *meta_tokens(const char *source, const char *id)
{
    struct vt_sb sb = {0};

    vt_sb_addf(&sb, "s%s v", source);
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        vt_sb_addf(&sb, "%02x", *p);
    return vt_sb_detach(&sb);
}

int vt_store_ocr_clear(struct vt_store *s, const char *id)
{
    int rc = delete_docs(s, id, "screen");

    return rc ? rc : delete_where_video(s, "ocr_lines", id);
}

/* One index row per frame (kept or duplicate) with text: all its lines, in order. */
static int screen_docs_refresh(struct vt_store *s, const char *id)
{
    sqlite3_stmt *st;
    char *meta;
    int rc = delete_docs(s, id, "screen");

    if (rc)
        return rc;
    rc = prepare(s,
                 "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta)"
                 " SELECT f.video_id, 'screen', f.idx, sh.start_s, sh.end_s,"
                 "  (SELECT group_concat(text, char(10)) FROM (SELECT l.text FROM ocr_lines l"
                 "    WHERE l.video_id = f.video_id AND l.frame_idx = coalesce(f.duplicate_of,"
                 "    f.idx) ORDER BY l.line_no)), ?2"
                 " FROM frames f JOIN shots sh ON sh.video_id = f.video_id AND sh.idx = f.shot"
                 " WHERE f.video_id = ?1 AND EXISTS (SELECT 1 FROM ocr_lines l"
                 "  WHERE l.video_id = f.video_id AND l.frame_idx = coalesce(f.duplicate_of,"
                 "  f.idx)) ORDER BY f.idx",
                 &st);
    if (rc)
        return rc;
    meta = meta_tokens("screen", id);
    bind_text(st, 1, id);
    bind_text(st, 2, meta);
    free(meta);
    return step_done(s, st, "index frame text");
}

struct fuzzy_ctx {
    struct vt_store *s;
    sqlite3_stmt *st;
    int rc;
};

static void fuzzy_put(struct fuzzy_ctx *c, const char *del, size_t dn, const char *term, size_t tn)
{
    if (c->rc)
        return;
    sqlite3_bind_text(c->st, 1, del, (int)dn, SQLITE_TRANSIENT);
    sqlite3_bind_text(c->st, 2, term, (int)tn, SQLITE_TRANSIENT);
    if (sqlite3_step(c->st) != SQLITE_DONE)
        c->rc = fail(c->s, "index fuzzy key");
    sqlite3_reset(c->st);
}

static void add_fuzzy(void *user, const char *tok, size_t n)
{
    struct fuzzy_ctx *c = user;
    char del[VT_FUZZY_MAX_LEN];

    if (n < VT_FUZZY_MIN_LEN || n >= VT_FUZZY_MAX_LEN)
        return;
    fuzzy_put(c, tok, n, tok, n);
    for (size_t i = 0; i < n; i++) {
        memcpy(del, tok, i);
        memcpy(del + i, tok + i + 1, n - i - 1);
        fuzzy_put(c, del, n - 1, tok, n);
    }
}

int vt_store_fuzzy_terms(struct vt_store *s, const char *word, void (*fn)(void *u, const char *t),
                         void *user)
{
    sqlite3_stmt *st;
    size_t n = strlen(word);
    char del[VT_FUZZY_MAX_LEN];
    int rc;

    if (n < VT_FUZZY_MIN_LEN || n >= VT_FUZZY_MAX_LEN)
        return 0;
    rc = prepare(s, "SELECT term FROM fuzzy WHERE del = ?", &st);
    if (rc)
        return rc;
    for (size_t i = 0; i <= n && !rc; i++) {
        /* i == n: the word itself (finds words one letter longer) */
        size_t dn = i == n ? n : n - 1;

        memcpy(del, word, i == n ? n : i);
        if (i < n)
            memcpy(del + i, word + i + 1, n - i - 1);
        sqlite3_bind_text(st, 1, del, (int)dn, SQLITE_TRANSIENT);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            fn(user, (const char *)sqlite3_column_text(st, 0));
        rc = rc == SQLITE_DONE ? 0 : fail(s, "fuzzy lookup");
        sqlite3_reset(st);
    }
    finish(s, st);
    return rc;
}

int vt_store_ocr_replace(struct vt_store *s, const char *id, const int *frame_index,
                         const struct vt_ocr_page *pages, size_t n)
{
    sqlite3_stmt *st;
    struct fuzzy_ctx fc = {s, NULL, 0};
    int rc = vt_store_ocr_clear(s, id);

    if (rc)
        return rc;
    rc = prepare(s,
                 "INSERT INTO ocr_lines (video_id, frame_idx, line_no, text, conf, x, y, w, h)"
                 " VALUES (?,?,?,?,?,?,?,?,?)",
                 &st);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        for (size_t k = 0; k < pages[i].n_lines && !rc; k++) {
            const struct vt_ocr_line *l = &pages[i].lines[k];

            bind_text(st, 1, id);
            sqlite3_bind_int(st, 2, frame_index[i]);
            sqlite3_bind_int64(st, 3, (sqlite3_int64)k);
            bind_text(st, 4, l->text);
            sqlite3_bind_double(st, 5, l->conf);
            for (int j = 0; j < 4; j++)
                sqlite3_bind_int(st, 6 + j, l->box[j]);
            if (sqlite3_step(st) != SQLITE_DONE)
                rc = fail(s, "insert OCR line");
            sqlite3_reset(st);
        }
    }
    finish(s, st);
    if (!rc)
        rc = prepare(s, "INSERT OR IGNORE INTO fuzzy (del, term) VALUES (?, ?)", &fc.st);
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t k = 0; k < pages[i].n_lines && !rc; k++) {
            vt_tokenize(pages[i].lines[k].text, strlen(pages[i].lines[k].text), add_fuzzy, &fc);
            rc = fc.rc;
        }
    finish(s, fc.st);
    return rc ? rc : screen_docs_refresh(s, id);
}

/* ---- transcripts ---- */

static int insert_doc(struct vt_store *s, sqlite3_stmt *st, const char *id, int ref, double start_s,
                      double end_s, const char *text, const char *meta)
{
    int rc = 0;

    bind_text(st, 1, id);
    sqlite3_bind_int(st, 2, ref);
    sqlite3_bind_double(st, 3, start_s);
    sqlite3_bind_double(st, 4, end_s);
    bind_text(st, 5, text);
    bind_text(st, 6, meta);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = fail(s, "index row");
    sqlite3_reset(st);
    return rc;
}

struct phon_ctx {
    struct vt_store *s;
    sqlite3_stmt *st;
    int rc;
};

static void add_phonetic(void *user, const char *tok, size_t n)
{
    struct phon_ctx *c = user;
    char key[16];

    if (c->rc || n < 2)
        return;
    vt_metaphone(tok, key, sizeof(key));
    if (!key[0])
        return;
    sqlite3_bind_text(c->st, 1, tok, (int)n, SQLITE_TRANSIENT);
    sqlite3_bind_text(c->st, 2, key, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(c->st) != SQLITE_DONE)
        c->rc = fail(c->s, "index phonetic key");
    sqlite3_reset(c->st);
}

int vt_store_transcript_clear(struct vt_store *s, const char *id)
{
    int rc = delete_docs(s, id, "speech");

    if (!rc)
        rc = delete_where_video(s, "words", id);
    if (!rc)
        rc = delete_where_video(s, "cues", id);
    return rc;
}

int vt_store_transcript_replace(struct vt_store *s, const char *id, const struct vt_transcript *t)
{
    sqlite3_stmt *cue = NULL, *word = NULL, *doc = NULL;
    struct phon_ctx pc = {s, NULL, 0};
    char *meta = meta_tokens("speech", id);
    int rc = vt_store_transcript_clear(s, id);

    if (!rc)
        rc = prepare(s, "INSERT INTO cues (video_id, idx, start_s, end_s, text) VALUES (?,?,?,?,?)",
                     &cue);
    if (!rc)
        rc = prepare(s,
                     "INSERT INTO words (video_id, cue_idx, idx, text, start_s, end_s, conf)"
                     " VALUES (?,?,?,?,?,?,?)",
                     &word);
    if (!rc)
        rc = prepare(s,
                     "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta)"
                     " VALUES (?1, 'speech', ?2, ?3, ?4, ?5, ?6)",
                     &doc);
    if (!rc)
        rc = prepare(s, "INSERT OR IGNORE INTO phonetic (term, key) VALUES (?, ?)", &pc.st);
    for (size_t i = 0; i < t->n_cues && !rc; i++) {
        const struct vt_cue *c = &t->cues[i];

        bind_text(cue, 1, id);
        sqlite3_bind_int64(cue, 2, (sqlite3_int64)i);
        sqlite3_bind_double(cue, 3, c->start_s);
        sqlite3_bind_double(cue, 4, c->end_s);
        bind_text(cue, 5, c->text);
        if (sqlite3_step(cue) != SQLITE_DONE)
            rc = fail(s, "insert cue");
        sqlite3_reset(cue);
        for (size_t k = 0; k < c->n_words && !rc; k++) {
            const struct vt_word *w = &c->words[k];

            bind_text(word, 1, id);
            sqlite3_bind_int64(word, 2, (sqlite3_int64)i);
            sqlite3_bind_int64(word, 3, (sqlite3_int64)k);
            bind_text(word, 4, w->text);
            sqlite3_bind_double(word, 5, w->start_s);
            sqlite3_bind_double(word, 6, w->end_s);
            sqlite3_bind_double(word, 7, w->conf);
            if (sqlite3_step(word) != SQLITE_DONE)
                rc = fail(s, "insert word");
            sqlite3_reset(word);
        }
        if (!rc)
            rc = insert_doc(s, doc, id, (int)i, c->start_s, c->end_s, c->text, meta);
        if (!rc) {
            vt_tokenize(c->text, strlen(c->text), add_phonetic, &pc);
            rc = pc.rc;
        }
    }
    finish(s, cue);
    finish(s, word);
    finish(s, doc);
    finish(s, pc.st);
    free(meta);
    return rc;
}

int vt_store_transcript(struct vt_store *s, const char *id, struct vt_transcript *out)
{
    return vt_store_transcript_range(s, id, 0, INT64_MAX, out);
}

int vt_store_transcript_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                              struct vt_transcript *out)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = prepare(s,
                 "SELECT start_s, end_s, text FROM cues WHERE video_id = ? AND idx >= ?"
                 " AND idx < ? ORDER BY idx",
                 &st);
    if (rc)
        return rc;
    bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, to);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct vt_cue *c;

        vt_grow((void **)&out->cues, &cap, out->n_cues + 1, sizeof(*out->cues));
        c = &out->cues[out->n_cues++];
        memset(c, 0, sizeof(*c));
        c->start_s = sqlite3_column_double(st, 0);
        c->end_s = sqlite3_column_double(st, 1);
        c->text = col_dup(st, 2);
    }
    finish(s, st);
    if (rc != SQLITE_DONE) {
        rc = fail(s, "read cues");
        goto fail;
    }
    rc = prepare(s,
                 "SELECT cue_idx, text, start_s, end_s, conf FROM words WHERE video_id = ?"
                 " AND cue_idx >= ? AND cue_idx < ? ORDER BY cue_idx, idx",
                 &st);
    if (rc)
        goto fail;
    bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, to);
    {
        size_t wcap = 0, last = (size_t)-1;

        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            size_t ci = (size_t)(sqlite3_column_int64(st, 0) - from);
            struct vt_cue *c;
            struct vt_word *w;

            if (ci >= out->n_cues)
                continue;
            if (ci != last) {
                wcap = 0;
                last = ci;
            }
            c = &out->cues[ci];
            vt_grow((void **)&c->words, &wcap, c->n_words + 1, sizeof(*c->words));
            w = &c->words[c->n_words++];
            w->text = col_dup(st, 1);
            if (!w->text)
                w->text = vt_xstrdup("");
            w->start_s = sqlite3_column_double(st, 2);
            w->end_s = sqlite3_column_double(st, 3);
            w->conf = sqlite3_column_double(st, 4);
        }
    }
    finish(s, st);
    if (rc != SQLITE_DONE) {
        rc = fail(s, "read words");
        goto fail;
    }
    return 0;
fail:
    vt_transcript_release(out);
    return rc;
}

/* ---- chunks ---- */

int vt_store_chunks_clear(struct vt_store *s, const char *id)
{
    return delete_where_video(s, "chunks", id);
}

int vt_store_chunks_replace(struct vt_store *s, const char *id, const struct vt_chunk *c, size_t n)
{
    sqlite3_stmt *st;
    int rc = vt_store_chunks_clear(s, id);

    if (!rc)
        rc = prepare(s,
                     "INSERT INTO chunks (video_id, idx, start_s, end_s, text, first_cue, last_cue)"
                     " VALUES (?,?,?,?,?,?,?)",
                     &st);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        bind_text(st, 1, id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        sqlite3_bind_double(st, 3, c[i].start_s);
        sqlite3_bind_double(st, 4, c[i].end_s);
        bind_text(st, 5, c[i].text);
        sqlite3_bind_int(st, 6, c[i].first_cue);
        sqlite3_bind_int(st, 7, c[i].last_cue);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = fail(s, "insert chunk");
        sqlite3_reset(st);
    }
    finish(s, st);
    return rc;
}

int vt_store_chunks(struct vt_store *s, const char *id, struct vt_chunk **out, size_t *n)
{
    return vt_store_chunks_range(s, id, 0, INT64_MAX, out, n);
}

int vt_store_chunks_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                          struct vt_chunk **out, size_t *n)
{
    sqlite3_stmt *st;
    struct vt_chunk *v = NULL;
    size_t cap = 0, len = 0;
    int rc = prepare(s,
                     "SELECT start_s, end_s, text, first_cue, last_cue FROM chunks"
                     " WHERE video_id = ? AND idx >= ? AND idx < ? ORDER BY idx",
                     &st);

    *out = NULL;
    *n = 0;
    if (rc)
        return rc;
    bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, to);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vt_grow((void **)&v, &cap, len + 1, sizeof(*v));
        v[len].start_s = sqlite3_column_double(st, 0);
        v[len].end_s = sqlite3_column_double(st, 1);
        v[len].text = col_dup(st, 2);
        v[len].first_cue = sqlite3_column_int(st, 3);
        v[len].last_cue = sqlite3_column_int(st, 4);
        len++;
    }
    finish(s, st);
    if (rc != SQLITE_DONE) {
        vt_chunks_free(v, len);
        return fail(s, "read chunks");
    }
    *out = v;
    *n = len;
    return 0;
}

void vt_chunks_free(struct vt_chunk *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(c[i].text);
    free(c);
}

/* ---- counts and lookups for readers of a page of a video ---- */

int vt_store_counts(struct vt_store *s, const char *id, struct vt_store_counts *c)
{
    sqlite3_stmt *st;
    int rc =
        prepare(s,
                "SELECT (SELECT count(*) FROM shots WHERE video_id = ?1),"
                " (SELECT count(*) FROM frames WHERE video_id = ?1),"
                " (SELECT count(*) FROM frames WHERE video_id = ?1 AND duplicate_of IS NULL),"
                " (SELECT total(bytes) FROM frames WHERE video_id = ?1 AND duplicate_of IS NULL),"
                " (SELECT count(DISTINCT frame_idx) FROM ocr_lines WHERE video_id = ?1),"
                " (SELECT count(*) FROM ocr_lines WHERE video_id = ?1),"
                " (SELECT count(*) FROM cues WHERE video_id = ?1),"
                " (SELECT count(DISTINCT cue_idx) FROM words WHERE video_id = ?1),"
                " (SELECT count(*) FROM chunks WHERE video_id = ?1)",
                &st);

    memset(c, 0, sizeof(*c));
    if (rc)
        return rc;
    bind_text(st, 1, id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        c->shots = sqlite3_column_int64(st, 0);
        c->frames = sqlite3_column_int64(st, 1);
        c->kept = sqlite3_column_int64(st, 2);
        c->keyframe_bytes = (int64_t)sqlite3_column_double(st, 3);
        c->frames_with_text = sqlite3_column_int64(st, 4);
        c->ocr_lines = sqlite3_column_int64(st, 5);
        c->cues = sqlite3_column_int64(st, 6);
        c->word_timed_cues = sqlite3_column_int64(st, 7);
        c->chunks = sqlite3_column_int64(st, 8);
        rc = 0;
    } else {
        rc = fail(s, "count a video's outputs");
    }
    finish(s, st);
    return rc;
}

int vt_store_frame_at(struct vt_store *s, const char *id, double t_s, int *frame)
{
    /* the shot containing t first: its frames come early in index order, so the scan
     * stops soon; the nearest frame in time only when no shot contains t */
    static const char *const sql[2] = {
        "SELECT coalesce(f.duplicate_of, f.idx) FROM frames f"
        " JOIN shots sh ON sh.video_id = f.video_id AND sh.idx = f.shot"
        " JOIN frames g ON g.video_id = f.video_id AND g.idx = coalesce(f.duplicate_of, f.idx)"
        " WHERE f.video_id = ?1 AND sh.start_s <= ?2 AND ?2 < sh.end_s AND g.path IS NOT NULL"
        " AND g.duplicate_of IS NULL ORDER BY f.idx LIMIT 1",
        "SELECT coalesce(f.duplicate_of, f.idx) FROM frames f"
        " JOIN frames g ON g.video_id = f.video_id AND g.idx = coalesce(f.duplicate_of, f.idx)"
        " WHERE f.video_id = ?1 AND g.path IS NOT NULL AND g.duplicate_of IS NULL"
        " ORDER BY abs(f.t_s - ?2), f.idx LIMIT 1",
    };
    int rc = 0;

    *frame = -1;
    for (int i = 0; i < 2 && *frame < 0 && !rc; i++) {
        sqlite3_stmt *st;

        rc = prepare(s, sql[i], &st);
        if (rc)
            return rc;
        bind_text(st, 1, id);
        sqlite3_bind_double(st, 2, t_s);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            *frame = sqlite3_column_int(st, 0);
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(s, "find a frame");
        finish(s, st);
    }
    return rc;
}

int vt_store_cue_at(struct vt_store *s, const char *id, double t_s, int64_t *cue)
{
    sqlite3_stmt *st;
    int rc = prepare(s, "SELECT max(idx) FROM cues WHERE video_id = ? AND start_s <= ?", &st);

    *cue = -1;
    if (rc)
        return rc;
    bind_text(st, 1, id);
    sqlite3_bind_double(st, 2, t_s);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        *cue = sqlite3_column_int64(st, 0);
    rc = rc == SQLITE_ROW ? 0 : fail(s, "find a cue");
    finish(s, st);
    return rc;
}

/* ---- titles ---- */

int vt_store_title_docs_refresh(struct vt_store *s, const char *id)
{
    sqlite3_stmt *st;
    char *meta = meta_tokens("title", id);
    int rc = delete_docs(s, id, "title");

    if (!rc)
        rc = prepare(s,
                     "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta)"
                     " SELECT id, 'title', -1, 0, duration_s, title, ?2 FROM videos"
                     "  WHERE id = ?1 AND title IS NOT NULL"
                     " UNION ALL"
                     " SELECT video_id, 'title', idx, start_s, end_s, title, ?2 FROM chapters"
                     "  WHERE video_id = ?1 AND title IS NOT NULL",
                     &st);
    if (!rc) {
        bind_text(st, 1, id);
        bind_text(st, 2, meta);
        rc = step_done(s, st, "index titles");
    }
    free(meta);
    return rc;
}

/* ---- search primitives ---- */

int vt_store_fts(struct vt_store *s, const char *match, const char *source, const char *video,
                 const double *df, size_t n_df, int phrase_n, int cap, double deadline_s,
                 int *partial, struct vt_fts_id **out, size_t *n)
{
    struct vt_sb m = {0};
    struct vt_fts_id *v = NULL;
    size_t vcap = 0, len = 0;
    sqlite3_stmt *st = NULL;
    long long hi = 0, window = 20000;
    int rc;

    *out = NULL;
    *n = 0;
    *partial = 0;
    vt_sb_addf(&m, "(%s)", match);
    if (source && *source)
        vt_sb_addf(&m, " AND meta : \"s%s\"", source);
    if (video && *video) {
        char *meta = meta_tokens("x", video);

        /* meta is "sx v<hex>": the video token is the part after the space */
        vt_sb_addf(&m, " AND meta : \"%s\"", strchr(meta, ' ') + 1);
        free(meta);
    }
    rc = prepare(s, "SELECT coalesce(max(id), 0) FROM docs", &st);
    if (!rc && sqlite3_step(st) == SQLITE_ROW)
        hi = sqlite3_column_int64(st, 0);
    if (st)
        finish(s, st);
    st = NULL;
    if (!rc)
        rc = prepare(s,
                     "SELECT rowid, vtrank(docs_fts, ?3, ?6) FROM docs_fts WHERE docs_fts MATCH ?1"
                     " AND rowid > ?4 AND rowid <= ?5 ORDER BY rowid DESC LIMIT ?2",
                     &st);
    /*
     * Newest rows first, in growing windows: a query whose matches are many is served
     * from the first window; one whose terms are common but rarely together would
     * read their whole posting lists, so past the deadline it stops with what it has.
     */
    while (!rc && hi > 0 && (int)len < cap) {
        long long lo = hi > window ? hi - window : 0;

        bind_text(st, 1, m.buf);
        sqlite3_bind_int(st, 2, cap - (int)len);
        sqlite3_bind_blob(st, 3, df, (int)(n_df * sizeof(*df)), SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 4, lo);
        sqlite3_bind_int64(st, 5, hi);
        sqlite3_bind_int(st, 6, phrase_n);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            vt_grow((void **)&v, &vcap, len + 1, sizeof(*v));
            v[len].rowid = sqlite3_column_int64(st, 0);
            v[len].score = sqlite3_column_double(st, 1);
            len++;
        }
        rc = rc == SQLITE_DONE ? 0 : fail(s, "search");
        sqlite3_reset(st);
        hi = lo;
        window *= 4;
        if (hi > 0 && deadline_s > 0 && vt_monotonic_s() > deadline_s) {
            *partial = 1;
            break;
        }
    }
    if (st)
        finish(s, st);
    vt_sb_release(&m);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = len;
    return 0;
}

int vt_store_doc(struct vt_store *s, long long rowid,
                 void (*fn)(void *user, const struct vt_doc *d), void *user)
{
    sqlite3_stmt *st;
    int rc = prepare(s,
                     "SELECT d.video_id, v.title, d.source, d.ref, d.start_s, d.end_s, d.text"
                     " FROM docs d JOIN videos v ON v.id = d.video_id WHERE d.id = ?",
                     &st);

    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, rowid);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        struct vt_doc d;

        d.rowid = rowid;
        d.video_id = (const char *)sqlite3_column_text(st, 0);
        d.title = (const char *)sqlite3_column_text(st, 1);
        d.source = (const char *)sqlite3_column_text(st, 2);
        d.ref = sqlite3_column_int(st, 3);
        d.start_s = sqlite3_column_double(st, 4);
        d.end_s = sqlite3_column_double(st, 5);
        d.text = (const char *)sqlite3_column_text(st, 6);
        if (!d.title)
            d.title = "";
        if (!d.text)
            d.text = "";
        fn(user, &d);
        rc = 0;
    } else {
        rc = rc == SQLITE_DONE ? VT_ENOTFOUND : fail(s, "read index row");
    }
    finish(s, st);
    return rc;
}

/* FNV-1a of a term, for the cache slot. */
static size_t df_slot(const char *term)
{
    return (size_t)vt_fnv1a64(VT_FNV64_INIT, term, strlen(term)) & (DF_CACHE - 1);
}

/*
 * Count the rows holding term. FTS5 keeps no document frequencies: counting means
 * reading the term's posting list, which for a word in every video is the whole
 * index. So count it in the newest DF_WINDOW rows first (a bounded read) and scale
 * that up when it is common there; only terms rare in the window are counted exactly,
 * which is cheap for them.
 */
#define DF_WINDOW 20000

static int count_term_docs(struct vt_store *s, const char *term, long long *docs)
{
    sqlite3_stmt *st;
    long long top = 0, in_window = 0;
    char *match;
    int rc = prepare(s, "SELECT coalesce(max(id), 0) FROM docs", &st);

    if (rc)
        return rc;
    if (sqlite3_step(st) == SQLITE_ROW)
        top = sqlite3_column_int64(st, 0);
    finish(s, st);
    match = vt_xasprintf("text : \"%s\"", term); /* tokens hold no quotes */
    rc = prepare(s, "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?1 AND rowid > ?2", &st);
    if (!rc) {
        bind_text(st, 1, match);
        sqlite3_bind_int64(st, 2, top - DF_WINDOW);
        rc = sqlite3_step(st);
        in_window = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(s, "term statistics");
        finish(s, st);
    }
    free(match);
    if (rc)
        return rc;
    if (top > DF_WINDOW && in_window >= 100) {
        *docs = in_window * top / DF_WINDOW;
        return 0;
    }
    rc = prepare(s, "SELECT doc FROM docs_vocab WHERE term = ?", &st);
    if (rc)
        return rc;
    bind_text(st, 1, term);
    rc = sqlite3_step(st);
    *docs = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(s, "term statistics");
    finish(s, st);
    return rc;
}

int vt_store_term_docs(struct vt_store *s, const char *term, long long *docs)
{
    size_t i = df_slot(term);
    int rc;

    for (size_t k = 0; k < 8; k++) {
        struct df_entry *e = &s->df[(i + k) & (DF_CACHE - 1)];

        if (e->term && !strcmp(e->term, term)) {
            *docs = e->docs;
            return 0;
        }
    }
    rc = count_term_docs(s, term, docs);
    if (rc)
        return rc;
    /* a frequency counted once is good enough for ranking: cache it in a free slot of
     * the probe window, or evict the slot the term hashes to */
    for (size_t k = 0; k < 8; k++) {
        struct df_entry *e = &s->df[(i + k) & (DF_CACHE - 1)];

        if (!e->term || k == 7) {
            e = e->term ? &s->df[i] : e;
            free(e->term);
            e->term = vt_xstrdup(term);
            e->docs = *docs;
            break;
        }
    }
    return 0;
}

int vt_store_phonetic_terms(struct vt_store *s, const char *key, int max,
                            void (*fn)(void *user, const char *term), void *user)
{
    sqlite3_stmt *st;
    int rc = prepare(s, "SELECT term FROM phonetic WHERE key = ? LIMIT ?", &st);

    if (rc)
        return rc;
    bind_text(st, 1, key);
    sqlite3_bind_int(st, 2, max);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        fn(user, (const char *)sqlite3_column_text(st, 0));
    rc = rc == SQLITE_DONE ? 0 : fail(s, "phonetic lookup");
    finish(s, st);
    return rc;
}

int vt_store_index_merge(struct vt_store *s, int pages)
{
    char sql[96];

    /* FTS5 answers faster from fewer, larger segments: 'merge' does a bounded amount
     * of that work (pages > 0), 'optimize' all of it */
    if (pages > 0)
        snprintf(sql, sizeof(sql), "INSERT INTO docs_fts (docs_fts, rank) VALUES ('merge', %d)",
                 pages);
    else
        snprintf(sql, sizeof(sql), "INSERT INTO docs_fts (docs_fts) VALUES ('optimize')");
    return exec(s, sql, "merge the search index");
}

int vt_store_cue_words(struct vt_store *s, const char *id, int cue,
                       int (*fn)(void *user, const char *text, double start_s, double end_s),
                       void *user)
{
    sqlite3_stmt *st;
    int rc = prepare(s,
                     "SELECT text, start_s, end_s FROM words WHERE video_id = ? AND"
                     " cue_idx = ? ORDER BY idx",
                     &st);

    if (rc)
        return rc;
    bind_text(st, 1, id);
    sqlite3_bind_int(st, 2, cue);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);

        if (fn(user, t ? t : "", sqlite3_column_double(st, 1), sqlite3_column_double(st, 2)))
            break;
    }
    rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : fail(s, "read words");
    finish(s, st);
    return rc;
}

/* ---- lists (playlists, channels) that videos were added from ---- */

int vt_store_list_put(struct vt_store *s, struct vt_list_rec *l)
{
    sqlite3_stmt *st;
    int rc = prepare(s,
                     "INSERT INTO lists (url, kind, title, max_entries, stt_mode, keep_media,"
                     " added_at, checked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                     " ON CONFLICT (url) DO UPDATE SET title=coalesce(?3, title), max_entries=?4,"
                     " stt_mode=?5, keep_media=?6, checked_at=?8 RETURNING id",
                     &st);

    if (rc)
        return rc;
    bind_text(st, 1, l->url);
    bind_text(st, 2, l->kind);
    bind_text(st, 3, l->title);
    sqlite3_bind_int(st, 4, l->max_entries);
    bind_text(st, 5, l->stt_mode ? l->stt_mode : "auto");
    sqlite3_bind_int(st, 6, l->keep_media);
    sqlite3_bind_double(st, 7, l->added_at);
    sqlite3_bind_double(st, 8, l->checked_at);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        l->id = sqlite3_column_int64(st, 0);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(s, "record list");
    } else {
        rc = fail(s, "record list");
    }
    finish(s, st);
    return rc;
}

int vt_store_lists(struct vt_store *s, struct vt_list_rec **out, size_t *n)
{
    sqlite3_stmt *st;
    struct vt_list_rec *l = NULL;
    size_t cap = 0, len = 0;
    int rc = prepare(s,
                     "SELECT id, url, kind, title, max_entries, stt_mode, keep_media, added_at,"
                     " checked_at FROM lists ORDER BY id",
                     &st);

    *out = NULL;
    *n = 0;
    if (rc)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct vt_list_rec *x;

        vt_grow((void **)&l, &cap, len + 1, sizeof(*l));
        x = &l[len++];
        x->id = sqlite3_column_int64(st, 0);
        x->url = col_dup(st, 1);
        x->kind = col_dup(st, 2);
        x->title = col_dup(st, 3);
        x->max_entries = sqlite3_column_int(st, 4);
        x->stt_mode = col_dup(st, 5);
        x->keep_media = sqlite3_column_int(st, 6);
        x->added_at = sqlite3_column_double(st, 7);
        x->checked_at = sqlite3_column_double(st, 8);
    }
    finish(s, st);
    if (rc != SQLITE_DONE) {
        vt_list_recs_free(l, len);
        return fail(s, "read lists");
    }
    *out = l;
    *n = len;
    return 0;
}

void vt_list_recs_free(struct vt_list_rec *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(l[i].url);
        free(l[i].kind);
        free(l[i].title);
        free(l[i].stt_mode);
    }
    free(l);
}
