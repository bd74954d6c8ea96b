/*
 * Unit tests of lib/store/store_stage_rows.c on both backends: migrations.h's entries
 * applied past the backends' own lists (here a list of the test's own, as a build with
 * entries would), and a stage's own rows written, cleared and removed with their video.
 */
#include "harness.h"
#include "pgtest.h"
#include "store/store.h"
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

/* What a stage's migration would add: its table, keyed by video, going with it; numbered
 * past this build's own list (migrations.h), as the next entries would be. */
#define V1 (VT_STORE_SCHEMA_VERSION + 1)
#define V2 (VT_STORE_SCHEMA_VERSION + 2)

static const struct store_migration test_list[] = {
    {V1,
     "CREATE TABLE probe_rows (video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,"
     " idx INTEGER NOT NULL, words INTEGER, score REAL, note TEXT,"
     " PRIMARY KEY (video_id, idx)) WITHOUT ROWID;",
     "CREATE TABLE probe_rows (video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id)"
     " ON DELETE CASCADE, idx bigint NOT NULL, words bigint, score double precision, note text,"
     " PRIMARY KEY (video_id, idx));"},
    {V2, "CREATE INDEX probe_rows_by_words ON probe_rows (words);",
     "CREATE INDEX probe_rows_by_words ON probe_rows (words);"},
};

static void add_video(struct vt_store *s, const char *id)
{
    struct vt_video_rec v;

    memset(&v, 0, sizeof(v));
    snprintf(v.id, sizeof(v.id), "%s", id);
    v.content_key = (char *)id;
    v.source_kind = "file";
    v.created_at = 1000;
    CHECK_INT(vt_store_video_insert(s, &v), 0);
}

/* The schema at this build's version, the test's list applied in the backend's way: V1,
 * then only V2. */
static void migrate_past_base(struct vt_store *s)
{
    CHECK_INT(vt_test_schema_version(s), VT_STORE_SCHEMA_VERSION);
    CHECK_INT(VT_STORE_SCHEMA_VERSION, VT_STORE_BASE_VERSION + VT_STORE_N_MIGRATIONS);
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(store_migrate_list(s, test_list, 1, VT_STORE_SCHEMA_VERSION), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_test_schema_version(s), V1);
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(store_migrate_list(s, test_list, 2, V1), 0); /* V1 is there: V2 alone */
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_test_schema_version(s), V2);
}

static void put_rows(struct vt_store *s)
{
    static const char *const cols[] = {"idx", "words", "score", "note"};
    const struct vt_store_value vals[] = {
        {.type = VT_STORE_INT, .i = 0},
        {.type = VT_STORE_INT, .i = 3},
        {.type = VT_STORE_REAL, .d = 0.5},
        {.type = VT_STORE_TEXT, .text = "it's; DROP TABLE videos"},
        {.type = VT_STORE_INT, .i = 1},
        {.type = VT_STORE_INT, .i = 4},
        {.type = VT_STORE_NULL},
        {.type = VT_STORE_TEXT, .text = NULL},
    };

    CHECK_INT(vt_store_begin(s), 0);
    add_video(s, "v1");
    add_video(s, "v2");
    CHECK_INT(vt_store_stage_rows_put(s, "probe_rows", "v1", cols, 4, vals, 2), 0);
    CHECK_INT(vt_store_stage_rows_put(s, "probe_rows", "v2", cols, 4, vals, 2), 0);
    CHECK_INT(vt_store_stage_rows_put(s, "probe_rows", "v2", cols, 4, vals, 0), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_test_store_int(s, "SELECT sum(words) FROM probe_rows WHERE video_id = ?", "v1"),
              7);
    CHECK_INT(vt_test_store_int(s,
                                "SELECT count(*) FROM probe_rows WHERE video_id = ? AND score = 0.5"
                                " AND note = 'it''s; DROP TABLE videos'",
                                "v2"),
              1);
    CHECK_INT(
        vt_test_store_int(s,
                          "SELECT count(*) FROM probe_rows WHERE video_id = ? AND score IS NULL"
                          " AND note IS NULL",
                          "v2"),
        1);
}

/* Names that are not identifiers, refused before any SQL is written. */
static void hostile_names(struct vt_store *s)
{
    const char *cols[] = {"idx"}, *bad_cols[] = {"idx", "words) VALUES (1,1); --"},
               *video_col[] = {"video_id"};
    const struct vt_store_value v[2] = {{.type = VT_STORE_INT, .i = 5}, {.type = VT_STORE_INT}};
    const char *bad_tables[] = {"probe_rows; DROP TABLE videos",
                                "Probe_rows",
                                "_x",
                                "9x",
                                "",
                                NULL,
                                "probe-rows",
                                "\"probe_rows\"",
                                "a23456789012345678901234567890123456789012345678901234567890abcd"};

    CHECK_INT(vt_store_begin(s), 0);
    for (size_t i = 0; i < sizeof(bad_tables) / sizeof(bad_tables[0]); i++) {
        CHECK_INT(vt_store_stage_rows_put(s, bad_tables[i], "v1", cols, 1, v, 1), VT_EINVAL);
        CHECK_INT(vt_store_stage_rows_clear(s, bad_tables[i], "v1"), VT_EINVAL);
    }
    CHECK(strstr(vt_store_errmsg(s), "is not an identifier") != NULL);
    CHECK_INT(vt_store_stage_rows_put(s, "probe_rows", "v1", bad_cols, 2, v, 1), VT_EINVAL);
    CHECK_INT(vt_store_stage_rows_put(s, "probe_rows", "v1", video_col, 1, v, 1), VT_EINVAL);
    CHECK_INT(vt_store_stage_rows_put(s, "probe_rows", "v1", cols, 0, v, 1), VT_EINVAL);
    CHECK_INT(
        vt_store_stage_rows_put(s, "probe_rows", "v1", cols, VT_STORE_STAGE_COLUMNS + 1, v, 1),
        VT_EINVAL);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_test_store_int(s, "SELECT count(*) FROM probe_rows WHERE video_id = ?", "v1"), 2);
}

VT_TEST_STORE(store_stage_rows)
{
    char dir[64], err[512], want[64], *db = NULL;
    struct vt_store *s = vt_test_store("stagerows", dir, sizeof(dir), &db);

    if (!s)
        return;
    migrate_past_base(s);
    put_rows(s);
    hostile_names(s);
    /* clear: that video's rows only */
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_rows_clear(s, "probe_rows", "v2"), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_test_store_int(s, "SELECT count(*) FROM probe_rows WHERE video_id = ?", "v2"), 0);
    CHECK_INT(vt_test_store_int(s, "SELECT count(*) FROM probe_rows WHERE video_id = ?", "v1"), 2);
    /* a removed video's rows go with it, the store never naming the table */
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_delete(s, "v1"), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_test_store_int(s, "SELECT count(*) FROM probe_rows WHERE video_id = ?", "v1"), 0);
    /* this program (schema 8 + its own list) refuses the database the test's list moved on */
    vt_store_close(s);
    s = NULL;
    CHECK_INT(vt_store_open(db, &s, err, sizeof(err)), VT_ESTATE);
    CHECK(s == NULL);
    snprintf(want, sizeof(want), "schema version %d is newer than this program", V2);
    CHECK(strstr(err, want) != NULL);
    vt_test_store_done(s, dir, db);
}
