/*
 * Unit tests of the PostgreSQL backend's own parts (lib/store/db/db_pg.c, lib/store_pg*.c): `?`
 * placeholders as $n, the tsvector literal, bytea round trips, the schema's version and
 * its migration by two handles at once, and a server that stops and comes back. The
 * tests that need a server run only when VT_TEST_PG names one (tests/pg/cluster.sh);
 * the outage tests also need VT_TEST_PG_DIR, the cluster's directory, to stop it.
 */
#include "base/util.h"
#include "harness.h"
#include "pgtest.h"
#include "store/db/db_pg.h"
#include "store/store_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void check_convert(const char *sql, const char *want, int want_n)
{
    unsigned char *used = NULL;
    int n = -1;
    char *got = db_pg_convert(sql, &n, &used);

    CHECK_STR(got, want);
    CHECK_INT(n, want_n);
    free(got);
    free(used);
}

VT_TEST(pg_convert_placeholders)
{
    unsigned char *used = NULL;
    int n = 0;
    char *got;

    check_convert("SELECT 1", "SELECT 1", 0);
    check_convert("a = ? AND b = ?", "a = $1 AND b = $2", 2);
    /* numbered ones, and a bare ? after them is one more than the largest so far */
    check_convert("x = ?3 AND y = ?1 AND z = ?", "x = $3 AND y = $1 AND z = $4", 4);
    /* inside quotes, quoted names and comments a ? is text */
    check_convert("SELECT '?', 'it''s ?', \"a?\", ? -- what?\n, ? /* ? */ , ?",
                  "SELECT '?', 'it''s ?', \"a?\", $1 -- what?\n, $2 /* ? */ , $3", 3);
    check_convert("'unclosed ?", "'unclosed ?", 0);
    CHECK(db_pg_convert("a = ?0", &n, NULL) == NULL);
    CHECK(db_pg_convert("a = ?99999", &n, NULL) == NULL);
    /* which numbers appear: gaps are named text when prepared */
    got = db_pg_convert("?1 ?3", &n, &used);
    CHECK_INT(n, 3);
    if (used)
        CHECK(used[0] && !used[1] && used[2]);
    free(got);
    free(used);
}

VT_TEST(pg_tsv_literal)
{
    char *t = store_pg_tsv("It's O'Brien: C:\\path, café x");

    /* vidtheque's tokens, lowercase, in order; quote and backslash never inside one */
    CHECK_STR(t, "'it':1 's':2 'o':3 'brien':4 'c':5 'path':6 'café':7 'x':8");
    free(t);
    t = store_pg_tsv("");
    CHECK_STR(t, "");
    free(t);
    t = store_pg_tsv(NULL);
    CHECK_STR(t, "");
    free(t);
    {
        /* positions stop at 16383, PostgreSQL's largest */
        struct vt_sb sb = {0};

        for (int i = 0; i < 16390; i++)
            vt_sb_adds(&sb, "w ");
        t = store_pg_tsv(sb.buf);
        CHECK(strstr(t, "'w':16383 'w':16383") != NULL);
        CHECK(strstr(t, "16384") == NULL);
        free(t);
        vt_sb_release(&sb);
    }
}

/* A store on a fresh database of its own; *db gets its URL (vt_test_db_free). */
static struct vt_store *fresh(char **db)
{
    struct vt_store *s = NULL;
    char err[512];

    *db = vt_test_db("/nonexistent");
    if (*db && vt_store_open(*db, &s, err, sizeof(err))) {
        fprintf(stderr, "  %s\n", err);
        vt_test_failures++;
    }
    return s;
}

/* The first column of the first row of sql (one text parameter, may be NULL) on s, as an
 * int; -1000 when the query fails. */
static long long one_int(struct vt_store *s, const char *sql, const char *arg)
{
    struct db_stmt *st;
    long long v = -1000;

    if (store_prepare(s, sql, &st))
        return v;
    store_bind_text(st, 1, arg);
    if (db_step(st) == DB_ROW)
        v = db_col_int64(st, 0);
    store_finish(s, st);
    return v;
}

VT_TEST_PG_ONLY(pg_statements_round_trip)
{
    char *db;
    struct vt_store *s = fresh(&db);
    unsigned char bytes[256];
    struct db_stmt *st;

    if (!s)
        goto out;
    for (int i = 0; i < 256; i++)
        bytes[i] = (unsigned char)i;
    /* a ? in a string stays text; the parameter after it is $1 */
    CHECK_INT(store_prepare(s, "SELECT '?' || CAST(? AS text), CAST(? AS bytea), ?, ?, ?", &st), 0);
    store_bind_text(st, 1, "x");
    db_bind_blob(st, 2, bytes, sizeof(bytes));
    db_bind_int64(st, 3, INT64_MIN);
    db_bind_double(st, 4, 0.1);
    db_bind_null(st, 5);
    for (int round = 0; round < 2; round++) { /* prepared on the first, reused after */
        CHECK_INT(db_step(st), DB_ROW);
        CHECK_STR(db_col_text(st, 0), "?x");
        {
            size_t n = 0;
            const void *p = db_col_blob(st, 1, &n);

            CHECK_INT(n, 256);
            CHECK(p && !memcmp(p, bytes, sizeof(bytes)));
        }
        CHECK(db_col_int64(st, 2) == INT64_MIN);
        CHECK(db_col_double(st, 3) == 0.1); /* %.17g and back: the same double */
        CHECK(db_col_null(st, 4));
        CHECK(db_col_text(st, 4) == NULL);
        CHECK_INT(db_step(st), DB_DONE);
        db_reset(st);
    }
    store_finish(s, st);
    /* two blobs of one row held at once (a vector's float and int8 copies) */
    CHECK_INT(store_prepare(s, "SELECT CAST(?1 AS bytea), CAST(?2 AS bytea)", &st), 0);
    db_bind_blob(st, 1, bytes, 100);
    db_bind_blob(st, 2, bytes + 100, 50);
    if (db_step(st) == DB_ROW) {
        size_t n1 = 0, n2 = 0;
        const void *p1 = db_col_blob(st, 0, &n1), *p2 = db_col_blob(st, 1, &n2);

        CHECK(n1 == 100 && p1 && !memcmp(p1, bytes, 100));
        CHECK(n2 == 50 && p2 && !memcmp(p2, bytes + 100, 50));
    } else {
        CHECK(!"no row");
    }
    store_finish(s, st);
    /* an empty bytea, and a blob column of a vector row */
    CHECK_INT(one_int(s, "SELECT length(CAST(? AS bytea))", "\\x"), 0);
    {
        struct vt_video_rec v;
        float f[4] = {0.5f, -0.25f, 1e-30f, 0};
        struct vt_vec_rec r = {VT_VEC_CHUNK, 3, 1, 2, f};
        char space[32];
        int64_t key = 0;
        float *got = NULL;
        int dim = 0;

        memset(&v, 0, sizeof(v));
        snprintf(v.id, sizeof(v.id), "vid");
        v.content_key = "k";
        v.source_kind = "file";
        CHECK_INT(vt_store_begin(s), 0);
        CHECK_INT(vt_store_video_insert(s, &v), 0);
        CHECK_INT(vt_store_vectors_replace(s, "vid", "sp", 4, &r, 1), 0);
        CHECK_INT(vt_store_commit(s), 0);
        CHECK_INT(
            vt_store_vector_find(s, "vid", VT_VEC_CHUNK, 3, &key, space, sizeof(space), &dim, &got),
            0);
        CHECK_INT(dim, 4);
        CHECK_STR(space, "sp");
        CHECK(got && !memcmp(got, f, sizeof(f)));
        free(got);
    }
    /* a failed statement says what failed, with the server's first line */
    CHECK_INT(vt_store_begin(s), 0);
    {
        struct vt_video_rec v;

        memset(&v, 0, sizeof(v));
        snprintf(v.id, sizeof(v.id), "vid");
        v.content_key = "k2";
        v.source_kind = "file";
        CHECK_INT(vt_store_video_insert(s, &v), VT_EIO);
        CHECK(strstr(vt_store_errmsg(s), "database: insert video: duplicate key") != NULL);
    }
    vt_store_rollback(s);
    /* a nested begin is refused, as SQLite refuses it */
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_begin(s), VT_ESTATE);
    vt_store_rollback(s);
    {
        long long v1 = vt_store_version(s), v2;

        CHECK(v1 >= 0);
        CHECK_INT(vt_test_pg_exec(db, "UPDATE videos SET title = 'other' WHERE id = 'vid'"), 0);
        v2 = vt_store_version(s);
        CHECK(v2 >= 0 && v2 != v1); /* another connection's commit */
    }
    {
        int ok = 0;

        CHECK_INT(vt_store_check(s, &ok), 0);
        CHECK_INT(ok, 1);
        CHECK(strstr(vt_store_errmsg(s), "not checked") != NULL);
        CHECK_INT(vt_test_pg_exec(db, "CREATE EXTENSION IF NOT EXISTS amcheck"), 0);
        CHECK_INT(vt_store_check(s, &ok), 0);
        CHECK_INT(ok, 1);
        CHECK_STR(vt_store_errmsg(s), "");
    }
out:
    vt_store_close(s);
    vt_test_db_free(db);
}

/* Text PostgreSQL's UTF8 refuses (a hostile file's tag, a file name in Latin-1, a NUL
 * inside a counted string) is stored with U+FFFD for each bad byte, as every reader
 * shows it on SQLite; valid text, four-byte characters included, is untouched. */
VT_TEST_PG_ONLY(pg_text_not_utf8)
{
    char *db;
    struct vt_store *s = fresh(&db);
    struct db_stmt *st;
    static const struct {
        const char *in;
        size_t n;
        const char *want;
    } cases[] = {
        {"caf\xe9 cr\xe8me", 10, "caf\xef\xbf\xbd cr\xef\xbf\xbdme"},  /* Latin-1 */
        {"\xed\xa0\x80x", 4, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx"}, /* a surrogate */
        {"\xc0\xafok", 4, "\xef\xbf\xbd\xef\xbf\xbdok"},               /* overlong "/" */
        {"ab\0cd", 5,
         "ab\xef\xbf\xbd"
         "cd"},                                                         /* NUL, counted */
        {"\xf0\x9f\x8e\xac ok", 7, "\xf0\x9f\x8e\xac ok"},              /* valid */
        {"trailing \xe2\x82", 11, "trailing \xef\xbf\xbd\xef\xbf\xbd"}, /* cut short */
    };

    if (!s)
        goto out;
    CHECK_INT(store_prepare(s, "SELECT CAST(? AS text)", &st), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        db_bind_textn(st, 1, cases[i].in, cases[i].n);
        CHECK_INT(db_step(st), DB_ROW);
        CHECK_STR(db_col_text(st, 0), cases[i].want);
        db_reset(st);
    }
    store_finish(s, st);
    /* through a verb: a video whose title is not UTF-8 is stored, not refused */
    {
        struct vt_video_rec v, got;

        memset(&v, 0, sizeof(v));
        snprintf(v.id, sizeof(v.id), "latin1");
        v.content_key = "k";
        v.source_kind = "file";
        v.title = "r\xe9sum\xe9";
        CHECK_INT(vt_store_begin(s), 0);
        CHECK_INT(vt_store_video_insert(s, &v), 0);
        CHECK_INT(vt_store_commit(s), 0);
        memset(&got, 0, sizeof(got));
        CHECK_INT(vt_store_video_get(s, "latin1", &got), 0);
        CHECK_STR(got.title, "r\xef\xbf\xbdsum\xef\xbf\xbd");
        vt_video_rec_release(&got);
    }
out:
    vt_store_close(s);
    vt_test_db_free(db);
}

/* A connection that waiting will not mend (no such database, no such role) is refused
 * as such (VT_EINVAL), not as "unavailable: try again"; no server at all is unavailable. */
VT_TEST_PG_ONLY(pg_connect_failures)
{
    const char *base = getenv("VT_TEST_PG");
    char *nodb = vt_test_pg_url_for(base, "vt_no_such_database_here");
    const char *params = strchr(base, '?');
    char *norole = vt_xasprintf("postgresql://vt_no_such_role@/vidtheque%s", params ? params : "");
    struct pg_conn *c = NULL;
    char err[512];

    CHECK_INT(db_pg_connect(nodb, &c, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "does not exist") != NULL);
    CHECK(strstr(err, "unavailable") == NULL);
    CHECK(c == NULL);
    CHECK_INT(db_pg_connect(norole, &c, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "vt_no_such_role") != NULL);
    CHECK_INT(db_pg_connect("postgresql://x@/vidtheque?host=/nonexistent-vt-socket-dir", &c, err,
                            sizeof(err)),
              VT_EUNAVAIL);
    CHECK(strstr(err, "unavailable") != NULL);
    free(nodb);
    free(norole);
}

VT_TEST_PG_ONLY(pg_refuses_newer_schema)
{
    char *db, err[512];
    struct vt_store *s = fresh(&db);

    if (!s)
        goto out;
    vt_store_close(s);
    s = NULL;
    CHECK_INT(vt_test_pg_exec(db, "UPDATE vt_meta SET schema_version = 99"), 0);
    CHECK_INT(vt_store_open(db, &s, err, sizeof(err)), VT_ESTATE);
    CHECK(s == NULL);
    CHECK(strstr(err, "schema version 99 is newer than this program") != NULL);
out:
    vt_store_close(s);
    vt_test_db_free(db);
}

struct opener {
    const char *db;
    pthread_barrier_t *go;
    int rc;
    char err[512];
};

static void *open_at_once(void *user)
{
    struct opener *o = user;
    struct vt_store *s = NULL;

    pthread_barrier_wait(o->go);
    o->rc = vt_store_open(o->db, &s, o->err, sizeof(o->err));
    vt_store_close(s);
    return NULL;
}

/* Two handles opening an empty database at the same moment: one migrates under the
 * advisory lock, the other waits and finds the schema made. */
VT_TEST_PG_ONLY(pg_two_handles_migrate_at_once)
{
    char *db = vt_test_db("/nonexistent");
    pthread_barrier_t go;
    struct opener o[2];
    pthread_t t[2];
    struct vt_store *s = NULL;
    char err[512];

    if (!db)
        return;
    pthread_barrier_init(&go, NULL, 2);
    for (int i = 0; i < 2; i++) {
        o[i] = (struct opener){db, &go, -1, ""};
        pthread_create(&t[i], NULL, open_at_once, &o[i]);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        if (o[i].rc)
            fprintf(stderr, "  %s\n", o[i].err);
        CHECK_INT(o[i].rc, 0);
    }
    pthread_barrier_destroy(&go);
    CHECK_INT(vt_store_open(db, &s, err, sizeof(err)), 0);
    if (s) {
        CHECK_INT(one_int(s, "SELECT count(*) FROM vt_meta WHERE CAST(? AS text) IS NULL", NULL),
                  1);
        CHECK_INT(one_int(s,
                          "SELECT max(schema_version) FROM vt_meta WHERE CAST(? AS text) IS NULL",
                          NULL),
                  VT_STORE_SCHEMA_VERSION);
    }
    vt_store_close(s);
    vt_test_db_free(db);
}

/* tests/pg/cluster.sh CMD on the test cluster: 0 when it ran. */
static int cluster(const char *cmd)
{
    const char *dir = getenv("VT_TEST_PG_DIR");
    char *sh = vt_xasprintf("bash tests/pg/cluster.sh %s '%s' >/dev/null", cmd, dir);
    int rc = system(sh);

    free(sh);
    return rc == 0 ? 0 : -1;
}

/* A store reading its videos: 0, or the error code. */
static int read_videos(struct vt_store *s)
{
    char id[65];
    int rc = vt_store_video_find_key(s, "none", id);

    return rc == VT_ENOTFOUND ? 0 : rc;
}

/*
 * read_videos once the server is back: a lost connection is tried again no sooner than its
 * back-off allows (db_pg_ready: 0.25 s after the first failure, doubling, with jitter), so
 * a statement sent the instant the server is up may still fail; within 5 s (above the
 * back-off's 4 s) it must not. 0, or the last error code.
 */
static int read_videos_once_back(struct vt_store *s)
{
    double until = vt_monotonic_s() + 5;
    int rc;

    while ((rc = read_videos(s)) == VT_EUNAVAIL && vt_monotonic_s() < until)
        usleep(50 * 1000);
    return rc;
}

/* The server stops: statements fail with VT_EUNAVAIL and say so; once it is back the
 * handle reconnects by itself; a transaction cut by a restart fails and the next
 * statement after the rollback works. */
VT_TEST_PG_ONLY(pg_outage_and_reconnect)
{
    char *db;
    struct vt_store *s;

    if (!getenv("VT_TEST_PG_DIR")) {
        fprintf(stderr, "  (VT_TEST_PG_DIR unset: the server cannot be stopped here)\n");
        return;
    }
    s = fresh(&db);
    if (!s)
        goto out;
    CHECK_INT(read_videos(s), 0);
    CHECK_INT(cluster("stop"), 0);
    CHECK_INT(read_videos(s), VT_EUNAVAIL);
    CHECK(!strncmp(vt_store_errmsg(s), "database unavailable: ", 22));
    CHECK_INT(read_videos(s), VT_EUNAVAIL); /* the one reset tried fails too */
    CHECK(vt_store_version(s) == -1);
    CHECK_INT(cluster("start"), 0);
    CHECK_INT(read_videos_once_back(s), 0);
    /* a restart between statements: the closed socket is seen before the next one */
    CHECK_INT(cluster("restart"), 0);
    CHECK_INT(read_videos(s), 0);
    /* a restart inside a transaction: lost, refused, then fine after the rollback */
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(read_videos(s), 0);
    CHECK_INT(cluster("restart"), 0);
    CHECK_INT(read_videos(s), VT_EUNAVAIL);
    CHECK_INT(vt_store_commit(s), VT_EUNAVAIL);
    vt_store_rollback(s);
    CHECK_INT(read_videos(s), 0);
out:
    vt_store_close(s);
    cluster("start"); /* whatever happened above, the tests after this one need it */
    vt_test_db_free(db);
}

/* A role that may only read: VT_STORE_READ opens read-only (writes refused with
 * VT_ESTATE), without it the open is refused; a role whose sessions are read-only
 * (default_transaction_read_only) is read-only too. */
VT_TEST_PG_ONLY(pg_read_only_role)
{
    char *db, *sql, *url = NULL, role[48], err[512];
    struct vt_store *s = fresh(&db), *r = NULL;
    const char *at;

    if (!s)
        goto out;
    vt_store_close(s);
    s = NULL;
    snprintf(role, sizeof(role), "vt_ro_%ld", (long)getpid());
    sql = vt_xasprintf("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN;"
                       " GRANT SELECT ON ALL TABLES IN SCHEMA public TO %s",
                       role, role, role);
    CHECK_INT(vt_test_pg_exec(db, sql), 0);
    free(sql);
    /* the same URL as role */
    at = strchr(strstr(db, "://") + 3, '@');
    if (at)
        url = vt_xasprintf("postgresql://%s%s", role, at);
    CHECK(url != NULL);
    if (!url)
        goto out;
    CHECK_INT(vt_store_open(url, &r, err, sizeof(err)), VT_ESTATE);
    CHECK(strstr(err, "read-only") != NULL);
    CHECK_INT(vt_store_open_flags(url, VT_STORE_READ, &r, err, sizeof(err)), 0);
    if (r) {
        char id[65];

        CHECK_INT(vt_store_read_only(r), 1);
        CHECK_INT(vt_store_video_find_key(r, "none", id), VT_ENOTFOUND);
        CHECK_INT(vt_store_begin(r), VT_ESTATE);
        vt_store_close(r);
        r = NULL;
    }
    sql = vt_xasprintf("GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO %s;"
                       " ALTER ROLE %s SET default_transaction_read_only = on",
                       role, role);
    CHECK_INT(vt_test_pg_exec(db, sql), 0);
    free(sql);
    CHECK_INT(vt_store_open(url, &r, err, sizeof(err)), VT_ESTATE);
out:
    vt_store_close(r);
    vt_store_close(s);
    vt_test_db_free(db);
    if (url) {
        sql = vt_xasprintf("DROP ROLE IF EXISTS %s", role);
        vt_test_pg_exec(getenv("VT_TEST_PG"), sql);
        free(sql);
    }
    free(url);
}

/* The first column of the first row of sql (no parameter) on s, as text into out; ""
 * when the query fails. */
static void one_text(struct vt_store *s, const char *sql, char *out, size_t n)
{
    struct db_stmt *st;

    out[0] = '\0';
    if (store_prepare(s, sql, &st))
        return;
    if (db_step(st) == DB_ROW && db_col_text(st, 0))
        snprintf(out, n, "%s", db_col_text(st, 0));
    store_finish(s, st);
}

/* A video row "vid" on s, committed. */
static int put_video(struct vt_store *s)
{
    struct vt_video_rec v;

    memset(&v, 0, sizeof(v));
    snprintf(v.id, sizeof(v.id), "vid");
    v.content_key = "k";
    v.source_kind = "file";
    if (vt_store_begin(s) || vt_store_video_insert(s, &v))
        return -1;
    return vt_store_commit(s);
}

/*
 * Statements batched (issue 26): a transaction's BEGIN goes with its first statement,
 * and statements nobody waits on (the video's lock, its state, SET LOCAL) with the next
 * one or the COMMIT, in one round trip each; a transaction that sent nothing costs
 * none. What was deferred still runs, in order, before what follows it; a deferred
 * statement that fails fails the commit, and nothing of the transaction stays.
 */
VT_TEST_PG_ONLY(pg_batched_round_trips)
{
    char *db, text[64];
    struct vt_store *s = fresh(&db);
    struct pg_conn *c;
    unsigned long t0;

    if (!s)
        goto out;
    c = s->conn.pg;
    CHECK_INT(put_video(s), 0);
    /* begin and rollback with nothing between: nothing sent */
    t0 = c->trips;
    CHECK_INT(vt_store_begin(s), 0);
    vt_store_rollback(s);
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK(c->trips == t0);
    /* BEGIN with the first statement: one round trip; the lock and the state with the
     * COMMIT: one more */
    t0 = c->trips;
    CHECK_INT(vt_store_begin(s), 0);
    one_text(s, "SELECT CAST(txid_current_if_assigned() IS NULL AS text)", text, sizeof(text));
    CHECK_STR(text, "true"); /* inside the transaction, nothing written yet */
    CHECK_INT(vt_store_video_lock(s, "vid"), 0);
    CHECK_INT(vt_store_video_set_state(s, "vid", VT_INDEX_READY, VT_DATA_OK, 0), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK(c->trips - t0 == 2);
    one_text(s, "SELECT index_state FROM videos WHERE id = 'vid'", text, sizeof(text));
    CHECK_STR(text, "ready");
    /* a deferred write runs before the next statement, which sees it */
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_set_state(s, "vid", VT_INDEX_FAILED, VT_DATA_MISSING, 0), 0);
    one_text(s, "SELECT index_state FROM videos WHERE id = 'vid'", text, sizeof(text));
    CHECK_STR(text, "failed");
    vt_store_rollback(s);
    one_text(s, "SELECT index_state FROM videos WHERE id = 'vid'", text, sizeof(text));
    CHECK_STR(text, "ready");
    /* a deferred statement that fails fails the commit; the write before it is gone */
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_set_state(s, "vid", VT_INDEX_FAILED, VT_DATA_MISSING, 0), 0);
    CHECK_INT(store_exec_later(s, "SET LOCAL lock_timeout = 'nonsense'", "set"), 0);
    CHECK(vt_store_commit(s) != 0);
    CHECK(strstr(vt_store_errmsg(s), "lock_timeout") != NULL);
    vt_store_rollback(s);
    one_text(s, "SELECT index_state FROM videos WHERE id = 'vid'", text, sizeof(text));
    CHECK_STR(text, "ready");
    /* the session ended by the server: a transaction not sent yet goes to a new one; a
     * commit whose pipeline finds the session gone fails, and the next statement after
     * the rollback reconnects */
    {
        const char *kill = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                           " WHERE datname = current_database() AND pid <> pg_backend_pid()";

        CHECK_INT(vt_store_begin(s), 0);
        CHECK_INT(vt_test_pg_exec(db, kill), 0);
        usleep(100 * 1000);
        one_text(s, "SELECT 'new session'", text, sizeof(text));
        CHECK_STR(text, "new session");
        CHECK_INT(vt_test_pg_exec(db, kill), 0);
        usleep(100 * 1000);
        CHECK_INT(vt_store_video_set_state(s, "vid", VT_INDEX_FAILED, VT_DATA_MISSING, 0), 0);
        CHECK_INT(vt_store_commit(s), VT_EUNAVAIL);
        vt_store_rollback(s);
        one_text(s, "SELECT index_state FROM videos WHERE id = 'vid'", text, sizeof(text));
        CHECK_STR(text, "ready");
    }
    /* the claim's commit is not waited for on disk; the next transaction's is again */
    CHECK_INT(store_exec(s, "SET synchronous_commit = on", "set"), 0);
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(store_exec_later(s, "SET LOCAL synchronous_commit = off", "set"), 0);
    one_text(s, "SHOW synchronous_commit", text, sizeof(text));
    CHECK_STR(text, "off");
    CHECK_INT(vt_store_commit(s), 0);
    one_text(s, "SHOW synchronous_commit", text, sizeof(text));
    CHECK_STR(text, "on");
out:
    vt_store_close(s);
    vt_test_db_free(db);
}

/*
 * Through a transaction-mode pool (pooler=transaction) no session setting lasts, so the
 * bounds a session of our own gets once (lock_timeout, idle_in_transaction_session_timeout)
 * are set in each transaction, with its BEGIN: a pooled writer waits for a row lock no
 * longer than lock_timeout (VIDTHEQUE_PG_LOCK_TIMEOUT), then fails with VT_EBUSY.
 */
VT_TEST_PG_ONLY(pg_pooled_transaction_bounds)
{
    char *db, *url = NULL, text[64], err[512];
    struct vt_store *s = NULL, *holder = fresh(&db);

    if (!holder)
        goto out;
    CHECK_INT(put_video(holder), 0);
    url = vt_xasprintf("%s%cpooler=transaction", db, strchr(db, '?') ? '&' : '?');
    if (vt_store_open(url, &s, err, sizeof(err))) {
        fprintf(stderr, "  %s\n", err);
        vt_test_failures++;
        goto out;
    }
    one_text(s, "SHOW lock_timeout", text, sizeof(text));
    CHECK_STR(text, "0"); /* the session itself is left as the pool hands it over */
    CHECK_INT(vt_store_begin(s), 0);
    one_text(s, "SHOW lock_timeout", text, sizeof(text));
    CHECK_STR(text, "10s");
    one_text(s, "SHOW idle_in_transaction_session_timeout", text, sizeof(text));
    CHECK_STR(text, "1min");
    CHECK_INT(vt_store_commit(s), 0);
    one_text(s, "SHOW lock_timeout", text, sizeof(text));
    CHECK_STR(text, "0");
    CHECK_INT(vt_store_begin_read(s), 0);
    one_text(s, "SHOW idle_in_transaction_session_timeout", text, sizeof(text));
    CHECK_STR(text, "1min");
    vt_store_rollback(s);
    if (vt_test_failures)
        goto out; /* unbounded: the lock wait below would never end */
    /* another session holds the video's row: the pooled writer gives up */
    setenv("VIDTHEQUE_PG_LOCK_TIMEOUT", "0.2", 1);
    CHECK_INT(vt_store_begin(holder), 0);
    CHECK_INT(vt_store_video_lock(holder, "vid"), 0);
    one_text(holder, "SELECT 'held'", text, sizeof(text));
    CHECK_STR(text, "held");
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_set_state(s, "vid", VT_INDEX_FAILED, VT_DATA_MISSING, 0), 0);
    CHECK_INT(vt_store_commit(s), VT_EBUSY);
    CHECK(strstr(vt_store_errmsg(s), "lock timeout") != NULL);
    vt_store_rollback(s);
    vt_store_rollback(holder);
    unsetenv("VIDTHEQUE_PG_LOCK_TIMEOUT");
out:
    vt_store_close(s);
    vt_store_close(holder);
    free(url);
    vt_test_db_free(db);
}
