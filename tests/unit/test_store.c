/* Unit tests of lib/store.c on a scratch database: migrations, rows, round trips. */
#include "harness.h"
#include "store.h"
#include "util.h"

#include <stdlib.h>
#include <unistd.h>

static struct vt_store *scratch(char *dir, size_t n)
{
    struct vt_store *s = NULL;
    char err[256], *db;

    snprintf(dir, n, "/tmp/vt-unit-store.XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    db = vt_xasprintf("%s/library.db", dir);
    if (vt_store_open(db, &s, err, sizeof(err)))
        fprintf(stderr, "  %s\n", err);
    free(db);
    return s;
}

static void video(struct vt_video_rec *v, const char *id, const char *key)
{
    memset(v, 0, sizeof(*v));
    snprintf(v->id, sizeof(v->id), "%s", id);
    v->content_key = (char *)key;
    v->source_kind = "file";
    v->source_path = "/x/y.mp4";
    v->title = "A <b>title</b>";
    v->created_at = 1000;
}

VT_TEST(store_video_roundtrip)
{
    char dir[64], id[65];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_video_rec v, got;

    CHECK(s != NULL);
    if (!s)
        return;
    video(&v, "abc", "k1");
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_insert(s, &v), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_video_get(s, "abc", &got), 0);
    CHECK_STR(got.title, "A <b>title</b>");
    CHECK_STR(got.index_state, "queued");
    vt_video_rec_release(&got);
    CHECK_INT(vt_store_video_find_key(s, "k1", id), 0);
    CHECK_STR(id, "abc");
    CHECK_INT(vt_store_video_find_key(s, "nope", id), VT_ENOTFOUND);
    CHECK_INT(vt_store_video_get(s, "zzz", &got), VT_ENOTFOUND);
    CHECK_INT(vt_store_video_id_taken(s, "abc"), 1);
    CHECK_INT(vt_store_video_id_taken(s, "abd"), 0);
    /* a second row with the same content key is refused by the schema */
    video(&v, "abd", "k1");
    CHECK_INT(vt_store_begin(s), 0);
    CHECK(vt_store_video_insert(s, &v) != 0);
    vt_store_rollback(s);
    CHECK_INT(vt_store_check(s), 0);
    vt_store_close(s);
    vt_rm_rf(dir);
}

VT_TEST(store_frames_cascade)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_video_rec v;
    struct vt_kf_shot shots[2] = {{0, 5, 1, 1}, {5, 9, 1, 0}};
    struct vt_kf_frame frames[2];
    struct vt_kf_result r;
    struct vt_ocr_line lines[2] = {{"hello", 0.9, {1, 2, 3, 4}}, {"world", 0.5, {5, 6, 7, 8}}};
    struct vt_ocr_page page = {lines, 2};
    struct vt_store_frame *got;
    struct vt_stage_rec st, *sr;
    size_t n;
    int idx = 0;

    if (!s)
        return;
    memset(frames, 0, sizeof(frames));
    frames[0] = (struct vt_kf_frame){.index = 0,
                                     .t_s = 1.5,
                                     .shot = 0,
                                     .duplicate_of = -1,
                                     .sharpness = 12.5,
                                     .bytes = 100,
                                     .file = "0.jpg"};
    frames[1] = (struct vt_kf_frame){.index = 1, .t_s = 6, .shot = 1, .duplicate_of = 0};
    memset(&r, 0, sizeof(r));
    r.shots = shots;
    r.n_shots = 2;
    r.frames = frames;
    r.n_frames = 2;
    video(&v, "vid", "k");
    memset(&st, 0, sizeof(st));
    snprintf(st.name, sizeof(st.name), "keyframe");
    snprintf(st.state, sizeof(st.state), "done");
    st.model = "m 1";
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_insert(s, &v), 0);
    CHECK_INT(vt_store_stage_put(s, "vid", &st), 0);
    CHECK_INT(vt_store_keyframes_replace(s, "vid", &r, "frames/vid/r1"), 0);
    CHECK_INT(vt_store_ocr_replace(s, "vid", &idx, &page, 1), 0);
    CHECK_INT(vt_store_commit(s), 0);

    CHECK_INT(vt_store_frames(s, "vid", &got, &n), 0);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_STR(got[0].path, "frames/vid/r1/0.jpg");
        CHECK(got[1].path == NULL);
        CHECK_INT(got[1].f.duplicate_of, 0);
        CHECK_INT(got[0].f.duplicate_of, -1);
        CHECK_INT(got[0].ocr.n_lines, 2);
        CHECK_STR(got[0].ocr.lines[1].text, "world");
        CHECK_INT(got[0].ocr.lines[1].box[3], 8);
        CHECK_INT(got[1].ocr.n_lines, 0);
    }
    vt_store_frames_free(got, n);
    CHECK_INT(vt_store_stages(s, "vid", &sr, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1)
        CHECK_STR(sr[0].model, "m 1");
    vt_stage_recs_free(sr, n);

    /* deleting the video deletes everything that hangs off it */
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_delete(s, "vid"), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_frames(s, "vid", &got, &n), 0);
    CHECK_INT(n, 0);
    vt_store_frames_free(got, n);
    CHECK_INT(vt_store_stages(s, "vid", &sr, &n), 0);
    CHECK_INT(n, 0);
    vt_stage_recs_free(sr, n);
    vt_store_close(s);
    vt_rm_rf(dir);
}

VT_TEST(store_reopen_keeps_schema)
{
    char dir[64], err[256], *db;
    struct vt_store *s = scratch(dir, sizeof(dir));

    if (!s)
        return;
    vt_store_close(s);
    db = vt_xasprintf("%s/library.db", dir);
    CHECK_INT(vt_store_open(db, &s, err, sizeof(err)), 0);
    vt_store_close(s);
    free(db);
    vt_rm_rf(dir);
}

VT_TEST(store_refuses_garbage_file)
{
    char dir[] = "/tmp/vt-unit-store.XXXXXX", err[256], *db;
    struct vt_store *s = NULL;
    FILE *f;

    if (!mkdtemp(dir))
        return;
    db = vt_xasprintf("%s/library.db", dir);
    f = fopen(db, "w");
    fputs("this is not a database, just text that is long enough to have a header........", f);
    fclose(f);
    CHECK(vt_store_open(db, &s, err, sizeof(err)) != 0);
    CHECK(s == NULL);
    CHECK(strstr(err, "library.db") != NULL);
    free(db);
    vt_rm_rf(dir);
}

/* A nested read of the same SQL, deeper than the statement cache has slots. */
static int nest_depth;

static int nest_each(void *user, const struct vt_video_rec *v)
{
    struct vt_store *s = user;

    (void)v;
    if (++nest_depth >= 500)
        return 1; /* stop: deep enough */
    return vt_store_video_each(s, nest_each, s);
}

VT_TEST(store_nested_reads_beyond_cache)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_video_rec v;

    CHECK(s != NULL);
    if (!s)
        return;
    video(&v, "abc", "k1");
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_insert(s, &v), 0);
    CHECK_INT(vt_store_commit(s), 0);
    /* twice: the second round must reuse the cache, not fill it with busy copies */
    for (int round = 0; round < 2; round++) {
        nest_depth = 0;
        vt_store_video_each(s, nest_each, s);
        CHECK_INT(nest_depth, 500);
    }
    /* and the handle still answers afterwards */
    CHECK_INT(vt_store_video_id_taken(s, "abc"), 1);
    vt_store_close(s);
    vt_rm_rf(dir);
}
