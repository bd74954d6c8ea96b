/* Unit tests of lib/store/store_copy.c: a catalog copied store to store reads back the same. */
#include "base/util.h"
#include "core/library.h"
#include "harness.h"
#include "media/media.h"
#include "pgtest.h"
#include "run/migrate.h"
#include "store/store.h"
#include "store/store_copy.h"
#include "text/query.h"
#include "text/transcript.h"

#include <stdlib.h>
#include <string.h>

/* A store in a new directory: SQLite's file there (sqlite set), else the test's database
 * (pgtest.h: PostgreSQL on the @pg run), into *db for vt_test_db_free. */
/* A store in a new directory: SQLite's file there (sqlite set), else the test's database
 * (pgtest.h: PostgreSQL on the @pg run), into *db for scratch_done. */
static struct vt_store *scratch(char *dir, size_t n, int sqlite, char **db)
{
    struct vt_store *s = NULL;
    char err[256];

    if (!sqlite)
        return vt_test_store("copy", dir, n, db);
    *db = NULL;
    snprintf(dir, n, "/tmp/vt-unit-copy.XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    *db = vt_xasprintf("%s/library.db", dir);
    if (vt_store_open(*db, &s, err, sizeof(err))) {
        fprintf(stderr, "  %s\n", err);
        vt_test_failures++;
    }
    return s;
}

static void scratch_done(struct vt_store *s, const char *dir, char *db)
{
    vt_test_store_done(s, dir, db);
}

#define D 4

/* Two videos with every kind of output, the second from a list and sharing footage. */
static void fill(struct vt_store *s)
{
    struct vt_kf_shot shots[2] = {{0, 5, 1, 1, NULL, 0, 0}, {5, 9, 1, 1, "dissolve", 4.5, 5.5}};
    struct vt_kf_frame frames[3] = {
        {.index = 0, .t_s = 1, .shot = 0, .duplicate_of = -1, .bytes = 10, .file = "0.jpg"},
        {.index = 1, .t_s = 6, .shot = 1, .duplicate_of = -1, .bytes = 20, .file = "1.jpg"},
        {.index = 2, .t_s = 8, .shot = 1, .duplicate_of = 0}};
    struct vt_kf_result r = {shots, 2, frames, 3, "", 9};
    struct vt_ocr_line lines[2] = {{"Quarterly results", 0.93, {1, 2, 3, 4}, 0},
                                   {"aN Saks", 0.1, {5, 6, 7, 8}, 1}};
    struct vt_ocr_page page = {lines, 2};
    int page_frame = 1;
    struct vt_word words[2] = {{"hello", 1, 1.5, 0.9}, {"world", 1.5, 2, 0.8}};
    struct vt_cue cues[2] = {{1, 2, "hello world", words, 2}, {3, 4, "second cue", NULL, 0}};
    struct vt_transcript t = {cues, 2, ""};
    struct vt_chunk chunk = {1, 4, "hello world second cue", 0, 1};
    struct vt_chapter ch[2] = {{0, 5, "Intro"}, {5, 9, "Numbers"}};
    float vec[3][D] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 0.6f, 0.8f}};
    struct vt_vec_rec text[2] = {{VT_VEC_CHUNK, 0, 1, 4, vec[0]}, {VT_VEC_SCREEN, 1, 5, 9, vec[1]}};
    struct vt_vec_rec visual = {VT_VEC_VISUAL, 0, 0, 5, vec[2]};
    struct vt_reuse run = {"b", NULL, 0, 5, 1, 6, 0.97, 2};
    struct vt_list_rec list = {0, "https://example.org/list", "url", "A list", "auto", 3, 1, 50,
                               60};
    struct vt_stage_rec st = {.name = "keyframe",
                              .state = VT_STATE_DONE,
                              .model = "shots v3",
                              .started_at = 100,
                              .took_s = 2.5,
                              .attempts = 2,
                              .attempts_base = 1}; /* redone once, then run */
    struct vt_video_rec v;
    int ok = 0;

    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_list_put(s, &list), 0);
    for (int i = 0; i < 2; i++) {
        const char *id = i ? "b" : "a";

        memset(&v, 0, sizeof(v));
        snprintf(v.id, sizeof(v.id), "%s", id);
        v.content_key = i ? "kb" : "ka";
        v.source_kind = "file";
        v.source_path = "/x/y.mp4";
        v.title = i ? "Second talk" : "First talk";
        v.channel = "chan";
        v.duration_s = 9;
        v.width = 1280;
        v.created_at = 1000 + i;
        v.list_id = i ? list.id : 0;
        CHECK_INT(vt_store_video_insert(s, &v), 0);
        CHECK_INT(vt_store_video_set_state(s, id, VT_INDEX_READY, VT_DATA_OK, 2000 + i), 0);
        CHECK_INT(vt_store_stage_put(s, id, &st), 0);
        CHECK_INT(vt_store_chapters_replace(s, id, ch, 2, "youtube"), 0);
        CHECK_INT(vt_store_title_docs_refresh(s, id), 0);
        CHECK_INT(vt_store_keyframes_replace(s, id, &r, i ? "frames/b/r1" : "frames/a/r2"), 0);
        CHECK_INT(vt_store_ocr_replace(s, id, &page_frame, &page, 1), 0);
        CHECK_INT(vt_store_transcript_replace(s, id, &t), 0);
        CHECK_INT(vt_store_chunks_replace(s, id, &chunk, 1), 0);
        CHECK_INT(vt_store_vectors_replace(s, id, "unit:text", D, text, 2), 0);
        CHECK_INT(
            vt_store_vectors_replace_kinds(s, id, VT_VEC_VISUAL_KINDS, "unit:img", D, &visual, 1),
            0);
    }
    CHECK_INT(vt_store_reuse_replace(s, "a", &run, 1), 0);
    /* a user chose the second video's poster */
    CHECK_INT(vt_store_poster_set(s, "b", 0, &ok), 0);
    CHECK_INT(ok, 1);
    CHECK_INT(vt_store_commit(s), 0);
}

static size_t hits_for(struct vt_store *s, const char *text)
{
    struct vt_query q;
    struct vt_store_search r = {0};
    struct vt_store_hit *h = NULL;
    size_t n = 0;
    int partial = 0;

    vt_query_parse(text, strlen(text), &q);
    r.q = &q;
    r.cap = 100;
    if (vt_store_search(s, &r, &h, &n, &partial))
        n = 0;
    free(h);
    vt_query_release(&q);
    return n;
}

static void same_video(struct vt_store *a, struct vt_store *b, const char *id)
{
    struct vt_video_rec x, y;
    struct vt_store_counts cx, cy;
    struct vt_stage_rec *sx = NULL, *sy = NULL;
    struct vt_store_frame *fx = NULL, *fy = NULL;
    struct vt_transcript tx = {0}, ty = {0};
    struct vt_reuse *rx = NULL, *ry = NULL;
    size_t nsx = 0, nsy = 0, nfx = 0, nfy = 0, nrx = 0, nry = 0;
    char space[64];
    int64_t key;
    int dim, px = -2, py = -3;
    float *v = NULL;

    CHECK_INT(vt_store_video_get(a, id, &x), 0);
    if (vt_store_video_get(b, id, &y)) {
        CHECK(!"the copy has the video");
        vt_video_rec_release(&x);
        return;
    }
    CHECK_STR(y.title, x.title);
    CHECK_STR(y.content_key, x.content_key);
    CHECK_INT(y.index_state, x.index_state);
    CHECK_INT(y.data_status, x.data_status);
    CHECK_NEAR(y.indexed_at, x.indexed_at, 0);
    CHECK_NEAR(y.created_at, x.created_at, 0);
    CHECK_INT(!!y.list_id, !!x.list_id);
    vt_video_rec_release(&x);
    vt_video_rec_release(&y);
    CHECK_INT(vt_store_counts(a, id, &cx), 0);
    CHECK_INT(vt_store_counts(b, id, &cy), 0);
    CHECK(!memcmp(&cx, &cy, sizeof(cx)));
    CHECK_INT(vt_store_stages(a, id, &sx, &nsx), 0);
    CHECK_INT(vt_store_stages(b, id, &sy, &nsy), 0);
    CHECK_INT(nsy, nsx);
    if (nsx && nsy) {
        CHECK_STR(sy[0].model, sx[0].model);
        CHECK_NEAR(sy[0].took_s, sx[0].took_s, 0);
        CHECK_INT(sy[0].attempts, sx[0].attempts);
        CHECK_INT(sy[0].attempts_base, sx[0].attempts_base); /* the budget goes along */
        CHECK_INT(sy[0].attempts_base, 1);
    }
    vt_stage_recs_free(sx, nsx);
    vt_stage_recs_free(sy, nsy);
    CHECK_INT(vt_store_frames(a, id, &fx, &nfx), 0);
    CHECK_INT(vt_store_frames(b, id, &fy, &nfy), 0);
    CHECK_INT(nfy, nfx);
    for (size_t i = 0; i < nfx && i < nfy; i++) {
        CHECK_INT(fy[i].f.duplicate_of, fx[i].f.duplicate_of);
        CHECK((!fx[i].path && !fy[i].path) ||
              (fx[i].path && fy[i].path && !strcmp(fx[i].path, fy[i].path)));
        CHECK_INT(fy[i].ocr.n_lines, fx[i].ocr.n_lines);
        for (size_t k = 0; k < fx[i].ocr.n_lines && k < fy[i].ocr.n_lines; k++) {
            CHECK_STR(fy[i].ocr.lines[k].text, fx[i].ocr.lines[k].text);
            CHECK_INT(fy[i].ocr.lines[k].noise, fx[i].ocr.lines[k].noise);
        }
    }
    vt_store_frames_free(fx, nfx);
    vt_store_frames_free(fy, nfy);
    CHECK_INT(vt_store_transcript(b, id, &ty), 0);
    CHECK_INT(vt_store_transcript(a, id, &tx), 0);
    CHECK_INT(ty.n_cues, tx.n_cues);
    if (ty.n_cues && tx.n_cues) {
        CHECK_INT(ty.cues[0].n_words, tx.cues[0].n_words);
        CHECK_STR(ty.cues[0].text, tx.cues[0].text);
    }
    vt_transcript_release(&tx);
    vt_transcript_release(&ty);
    CHECK_INT(vt_store_vector_find(b, id, VT_VEC_VISUAL, 0, &key, space, sizeof(space), &dim, &v),
              0);
    CHECK_STR(space, "unit:img");
    CHECK(v && v[3] == 0.8f);
    free(v);
    v = NULL;
    CHECK_INT(vt_store_vector_find(b, id, VT_VEC_SCREEN, 1, &key, space, sizeof(space), &dim, &v),
              0);
    CHECK_STR(space, "unit:text");
    free(v);
    CHECK_INT(vt_store_poster_get(a, id, &px), 0);
    CHECK_INT(vt_store_poster_get(b, id, &py), 0);
    CHECK_INT(py, px);
    CHECK_INT(vt_store_reuse_of(a, id, &rx, &nrx), 0);
    CHECK_INT(vt_store_reuse_of(b, id, &ry, &nry), 0);
    CHECK_INT(nry, nrx);
    vt_store_reuse_free(rx, nrx);
    vt_store_reuse_free(ry, nry);
}

/* SQLite into the test's backend (PostgreSQL on the @pg run), and back into SQLite. */
VT_TEST_STORE(store_copy_everything)
{
    char da[64], db[64], dc[64], err[256] = "";
    char *ua, *ub, *uc;
    struct vt_store *a = scratch(da, sizeof(da), 1, &ua), *b = scratch(db, sizeof(db), 0, &ub);
    struct vt_store *c = scratch(dc, sizeof(dc), 1, &uc);
    struct vt_list_rec *l = NULL;
    size_t nl = 0;
    int poster = -1;

    CHECK(a && b && c);
    if (!a || !b || !c)
        return;
    fill(a);
    CHECK_INT(vt_store_copy(a, b, NULL, NULL, err, sizeof(err)), 0);
    if (err[0])
        fprintf(stderr, "  %s\n", err);
    same_video(a, b, "a");
    same_video(a, b, "b");
    CHECK_INT(vt_store_lists(b, &l, &nl), 0);
    CHECK_INT(nl, 1);
    if (nl)
        CHECK_STR(l[0].title, "A list");
    vt_list_recs_free(l, nl);
    /* the destination's own index was built: the same words find the same rows */
    CHECK_INT(hits_for(b, "quarterly"), hits_for(a, "quarterly"));
    CHECK_INT(hits_for(b, "hello world"), hits_for(a, "hello world"));
    CHECK_INT(hits_for(b, "numbers"), hits_for(a, "numbers"));
    CHECK(hits_for(b, "quarterly") > 0);
    CHECK_INT(hits_for(b, "saks"), 0); /* noise stays unindexed */
    /* a second copy into a catalog that holds videos is refused, and changes nothing */
    CHECK_INT(vt_store_copy(a, b, NULL, NULL, err, sizeof(err)), VT_ESTATE);
    CHECK(strstr(err, "already holds") != NULL);
    /* and back: what the copy holds is what the original held */
    CHECK_INT(vt_store_copy(b, c, NULL, NULL, err, sizeof(err)), 0);
    same_video(a, c, "a");
    same_video(a, c, "b");
    /* the poster a user chose went there and back */
    CHECK_INT(vt_store_poster_get(c, "b", &poster), 0);
    CHECK_INT(poster, 0);
    CHECK_INT(hits_for(c, "quarterly"), hits_for(a, "quarterly"));
    scratch_done(a, da, ua);
    scratch_done(b, db, ub);
    scratch_done(c, dc, uc);
}

/* migrate's proof: every export document equal; a copy that lost one OCR line fails it. */
VT_TEST_STORE(store_copy_verified_by_documents)
{
    char dir[64], db[64], err[256] = "";
    char *ub;
    struct vt_library *lib;
    struct vt_store *b;
    struct vt_ocr_line line = {"Quarterly results", 0.93, {1, 2, 3, 4}, 0};
    struct vt_ocr_page page = {&line, 1};
    int frame = 1;
    size_t checked = 0;

    snprintf(dir, sizeof(dir), "/tmp/vt-unit-migrate.XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    lib = vt_library_open(dir, VT_OPEN_CREATE, err, sizeof(err));
    b = scratch(db, sizeof(db), 0, &ub);
    CHECK(lib && b);
    if (!lib || !b)
        return;
    fill(lib->store);
    CHECK_INT(vt_store_copy(lib->store, b, NULL, NULL, err, sizeof(err)), 0);
    CHECK_INT(vt_library_verify_copy(lib, b, &checked, err, sizeof(err)), 0);
    CHECK_INT(checked, 2);
    /* the noise line of frame 1 dropped from the copy of b */
    CHECK_INT(vt_store_begin(b), 0);
    CHECK_INT(vt_store_ocr_replace(b, "b", &frame, &page, 1), 0);
    CHECK_INT(vt_store_commit(b), 0);
    CHECK_INT(vt_library_verify_copy(lib, b, &checked, err, sizeof(err)), VT_EIO);
    CHECK(strstr(err, "video b") != NULL);
    CHECK_INT(checked, 1);
    scratch_done(b, db, ub);
    vt_library_close(lib);
    vt_rm_rf(dir);
}
