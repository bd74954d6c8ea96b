/* Unit tests of lib/store*.c on a scratch database: migrations, rows, round trips. */
#include "base/util.h"
#include "harness.h"
#include "pgtest.h"
#include "store/store.h"
#include "text/query.h"
#include "text/transcript.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *scratch_db; /* the running test's database (pgtest.h) */

static struct vt_store *scratch(char *dir, size_t n)
{
    return vt_test_store("store", dir, n, &scratch_db);
}

/* Close s, remove dir and the test's database. */
static void scratch_done(struct vt_store *s, const char *dir)
{
    vt_test_store_done(s, dir, scratch_db);
    scratch_db = NULL;
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

/* video(), then the row inserted in its own transaction */
static void insert_video(struct vt_store *s, struct vt_video_rec *v, const char *id,
                         const char *key)
{
    video(v, id, key);
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_insert(s, v), 0);
    CHECK_INT(vt_store_commit(s), 0);
}

VT_TEST_STORE(store_video_roundtrip)
{
    char dir[64], id[65];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_video_rec v, got;

    CHECK(s != NULL);
    if (!s)
        return;
    insert_video(s, &v, "abc", "k1");
    CHECK_INT(vt_store_video_get(s, "abc", &got), 0);
    CHECK_STR(got.title, "A <b>title</b>");
    CHECK_STR(vt_index_state_name(got.index_state), "queued");
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
    {
        int ok = 0;

        CHECK_INT(vt_store_check(s, &ok), 0);
        CHECK_INT(ok, 1);
    }
    scratch_done(s, dir);
}

VT_TEST_STORE(store_frames_cascade)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_video_rec v;
    struct vt_kf_shot shots[2] = {{.start_s = 0, .end_s = 5, .captured = 1, .kept = 1},
                                  {5, 9, 1, 0, "dissolve", 4.5, 5.25}},
                      *sh;
    struct vt_kf_frame frames[2];
    struct vt_kf_result r;
    struct vt_ocr_line lines[2] = {{"hello", 0.9, {1, 2, 3, 4}, 0},
                                   {"world", 0.5, {5, 6, 7, 8}, 0}};
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
    st.state = VT_STATE_DONE;
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
    /* the transition into each shot: none before the first, kind and span after */
    CHECK_INT(vt_store_shots(s, "vid", &sh, &n), 0);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK(sh[0].transition == NULL);
        CHECK_STR(sh[1].transition, "dissolve");
        CHECK(sh[1].trans_start_s == 4.5 && sh[1].trans_end_s == 5.25);
    }
    free(sh);
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
    scratch_done(s, dir);
}

VT_TEST_STORE(store_reopen_keeps_schema)
{
    char dir[64], err[256];
    struct vt_store *s = scratch(dir, sizeof(dir));

    if (!s)
        return;
    vt_store_close(s);
    CHECK_INT(vt_store_open(scratch_db, &s, err, sizeof(err)), 0);
    scratch_done(s, dir);
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

VT_TEST_STORE(store_nested_reads_beyond_cache)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_video_rec v;

    CHECK(s != NULL);
    if (!s)
        return;
    insert_video(s, &v, "abc", "k1");
    /* twice: the second round must reuse the cache, not fill it with busy copies */
    for (int round = 0; round < 2; round++) {
        nest_depth = 0;
        vt_store_video_each(s, nest_each, s);
        CHECK_INT(nest_depth, 500);
    }
    /* and the handle still answers afterwards */
    CHECK_INT(vt_store_video_id_taken(s, "abc"), 1);
    scratch_done(s, dir);
}

/* A video of 3 shots, 5 frames (two duplicates), OCR on two frames, 10 cues (two with
 * words) and 4 chunks. */
static void pages_fill(struct vt_store *s)
{
    struct vt_video_rec v;
    struct vt_kf_shot shots[3] = {{.start_s = 0, .end_s = 5, .captured = 1, .kept = 1},
                                  {.start_s = 5, .end_s = 9, .captured = 2, .kept = 1},
                                  {.start_s = 9, .end_s = 12, .captured = 2, .kept = 1}};
    struct vt_kf_frame frames[5];
    struct vt_kf_result r;
    /* the last line is noise: stored and read back, never counted */
    struct vt_ocr_line lines[4] = {{"a", 0.9, {0, 0, 1, 1}, 0},
                                   {"b", 0.9, {0, 0, 1, 1}, 0},
                                   {"c", 0.9, {0, 0, 1, 1}, 0},
                                   {"aN Saks", 0.1, {2, 3, 4, 5}, 1}};
    struct vt_ocr_page pages[2] = {{lines, 2}, {lines + 2, 2}};
    int page_frames[2] = {1, 4};
    struct vt_transcript t = {0};
    struct vt_word words[2] = {{"hi", 1, 2, 1}, {"you", 2, 3, 1}};
    struct vt_chunk chunks[4] = {
        {0, 1, "x", 0, 1}, {1, 2, "y", 2, 3}, {2, 3, "z", 4, 6}, {3, 4, "w", 7, 9}};

    memset(frames, 0, sizeof(frames));
    frames[0] = (struct vt_kf_frame){
        .index = 0, .t_s = 1, .shot = 0, .duplicate_of = -1, .bytes = 10, .file = "0.jpg"};
    frames[1] = (struct vt_kf_frame){
        .index = 1, .t_s = 6, .shot = 1, .duplicate_of = -1, .bytes = 20, .file = "1.jpg"};
    frames[2] = (struct vt_kf_frame){.index = 2, .t_s = 7, .shot = 1, .duplicate_of = 0};
    frames[3] = (struct vt_kf_frame){.index = 3, .t_s = 10, .shot = 2, .duplicate_of = 1};
    frames[4] = (struct vt_kf_frame){
        .index = 4, .t_s = 11, .shot = 2, .duplicate_of = -1, .bytes = 40, .file = "4.jpg"};
    memset(&r, 0, sizeof(r));
    r.shots = shots;
    r.n_shots = 3;
    r.frames = frames;
    r.n_frames = 5;
    t.cues = vt_xcalloc(10, sizeof(*t.cues));
    t.n_cues = 10;
    for (size_t i = 0; i < 10; i++) {
        t.cues[i].start_s = (double)i;
        t.cues[i].end_s = (double)i + 1;
        t.cues[i].text = vt_xasprintf("cue %zu", i);
    }
    t.cues[3].words = words;
    t.cues[3].n_words = 2;
    t.cues[7].words = words;
    t.cues[7].n_words = 1;
    video(&v, "vid", "k");
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_insert(s, &v), 0);
    CHECK_INT(vt_store_keyframes_replace(s, "vid", &r, "frames/vid/r1"), 0);
    CHECK_INT(vt_store_ocr_replace(s, "vid", page_frames, pages, 2), 0);
    CHECK_INT(vt_store_transcript_replace(s, "vid", &t), 0);
    CHECK_INT(vt_store_chunks_replace(s, "vid", chunks, 4), 0);
    CHECK_INT(vt_store_commit(s), 0);
    t.cues[3].words = t.cues[7].words = NULL;
    t.cues[3].n_words = t.cues[7].n_words = 0;
    vt_transcript_release(&t);
}

/* Each page reads its own range: cues with their words, frames with their lines, chunks. */
static void pages_read_ranges(struct vt_store *s)
{
    struct vt_transcript got;
    struct vt_store_frame *fr;
    struct vt_chunk *ch;
    size_t n;

    CHECK_INT(vt_store_transcript_range(s, "vid", 3, 8, &got), 0);
    CHECK_INT(got.n_cues, 5);
    if (got.n_cues == 5) {
        CHECK_STR(got.cues[0].text, "cue 3");
        CHECK_INT(got.cues[0].n_words, 2);
        CHECK_INT(got.cues[1].n_words, 0);
        CHECK_INT(got.cues[4].n_words, 1);
        CHECK_STR(got.cues[4].words[0].text, "hi");
    }
    vt_transcript_release(&got);
    CHECK_INT(vt_store_transcript_range(s, "vid", 20, 30, &got), 0);
    CHECK_INT(got.n_cues, 0);
    vt_transcript_release(&got);
    CHECK_INT(vt_store_frames_range(s, "vid", 1, 3, &fr, &n), 0);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_INT(fr[0].f.index, 1);
        CHECK_INT(fr[0].ocr.n_lines, 2);
        CHECK_INT(fr[1].f.duplicate_of, 0);
    }
    vt_store_frames_free(fr, n);
    CHECK_INT(vt_store_frames_range(s, "vid", 4, 5, &fr, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_INT(fr[0].ocr.n_lines, 2);
        if (fr[0].ocr.n_lines == 2) {
            CHECK_INT(fr[0].ocr.lines[0].noise, 0);
            CHECK_STR(fr[0].ocr.lines[1].text, "aN Saks");
            CHECK_INT(fr[0].ocr.lines[1].noise, 1);
            CHECK_INT(fr[0].ocr.lines[1].box[3], 5);
        }
    }
    vt_store_frames_free(fr, n);
    CHECK_INT(vt_store_chunks_range(s, "vid", 3, INT64_MAX, &ch, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1)
        CHECK_STR(ch[0].text, "w");
    vt_chunks_free(ch, n);
}

/* The counts, and the frame and the cue at a moment. */
static void pages_counts_and_moments(struct vt_store *s)
{
    struct vt_store_counts cnt;
    int at;

    CHECK_INT(vt_store_counts(s, "vid", &cnt), 0);
    CHECK_INT(cnt.shots, 3);
    CHECK_INT(cnt.frames, 5);
    CHECK_INT(cnt.kept, 3);
    CHECK_INT(cnt.keyframe_bytes, 70);
    CHECK_INT(cnt.frames_with_text, 2);
    CHECK_INT(cnt.ocr_lines, 3);
    CHECK_INT(cnt.cues, 10);
    CHECK_INT(cnt.word_timed_cues, 2);
    CHECK_INT(cnt.chunks, 4);

    /* of the shot containing t, the last frame taken by t, else its first; a duplicate
     * standing for its original */
    CHECK_INT(vt_store_frame_at(s, "vid", 0, &at), 0);
    CHECK_INT(at, 0);
    CHECK_INT(vt_store_frame_at(s, "vid", 6.5, &at), 0);
    CHECK_INT(at, 1);
    CHECK_INT(vt_store_frame_at(s, "vid", 8.9, &at), 0);
    CHECK_INT(at, 0); /* frame 2, taken at 7 s, repeats frame 0 */
    CHECK_INT(vt_store_frame_at(s, "vid", 9.5, &at), 0);
    CHECK_INT(at, 1);
    CHECK_INT(vt_store_frame_at(s, "vid", 11.5, &at), 0);
    CHECK_INT(at, 4);
    /* past every shot: the nearest frame in time */
    CHECK_INT(vt_store_frame_at(s, "vid", 30, &at), 0);
    CHECK_INT(at, 4);
    CHECK_INT(vt_store_frame_at(s, "none", 0, &at), 0);
    CHECK_INT(at, -1);
    {
        /* the storyboard: every frame in time order, a duplicate naming its original, a
         * shot's first frame shown from the shot's start, the others from their own time:
         * the same frame as vt_store_frame_at at every moment */
        static const double start[5] = {0, 5, 7, 9, 11};
        static const int frame[5] = {0, 1, 0, 1, 4};
        struct vt_board_frame *b = NULL;
        size_t n = 0;

        CHECK_INT(vt_store_storyboard(s, "vid", &b, &n), 0);
        CHECK_INT(n, 5);
        for (size_t i = 0; i < n && i < 5; i++) {
            CHECK_NEAR(b[i].start_s, start[i], 1e-9);
            CHECK_INT(b[i].frame, frame[i]);
        }
        free(b);
        CHECK_INT(vt_store_storyboard(s, "none", &b, &n), 0);
        CHECK_INT(n, 0);
        free(b);
    }
    {
        int64_t cue;

        CHECK_INT(vt_store_cue_at(s, "vid", 3.5, &cue), 0);
        CHECK_INT(cue, 3);
        CHECK_INT(vt_store_cue_at(s, "vid", 100, &cue), 0);
        CHECK_INT(cue, 9);
        CHECK_INT(vt_store_cue_at(s, "vid", -1, &cue), 0);
        CHECK_INT(cue, -1);
    }
}

/* A page of a video's lists reads that page alone; counts and the frame at a moment come
 * from queries of their own, so a reader of one page never loads the rest. */
VT_TEST_STORE(store_pages_counts_frame_at)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));

    if (!s)
        return;
    pages_fill(s);
    pages_read_ranges(s);
    pages_counts_and_moments(s);
    scratch_done(s, dir);
}

/* In the transaction begun: keyframe's rows replaced by r's 4 frames (under folder rel) and
 * ocr's lines pruned, committed; then frame lined alone has lines, want of them. */
static void keyframes_prune_check(struct vt_store *s, const struct vt_kf_result *r, const char *rel,
                                  int lined, int want)
{
    struct vt_store_frame *fr = NULL;
    size_t n = 0;

    CHECK_INT(vt_store_keyframes_replace(s, "vid", r, rel), 0);
    CHECK_INT(vt_store_ocr_lines_prune(s, "vid"), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_frames(s, "vid", &fr, &n), 0);
    CHECK_INT(n, 4);
    for (size_t i = 0; i < n; i++)
        CHECK_INT(fr[i].ocr.n_lines, fr[i].f.index == lined ? want : 0);
    vt_store_frames_free(fr, n);
}

/* Keyframe's rows replaced under ocr's (a redo of keyframe): the lines of a frame that is
 * still a kept frame shown within its index's old screen row stay, the others go (a frame
 * moved, made a duplicate, or gone), noise lines with them. */
VT_TEST_STORE(store_ocr_lines_prune)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_kf_shot shots[3] = {{.start_s = 0, .end_s = 5, .captured = 2, .kept = 1},
                                  {.start_s = 5, .end_s = 9, .captured = 2, .kept = 1},
                                  {.start_s = 9, .end_s = 12, .captured = 2, .kept = 1}};
    struct vt_kf_frame frames[4];
    struct vt_kf_result r = {.shots = shots, .n_shots = 3, .frames = frames, .n_frames = 4};
    struct vt_ocr_line lines[2] = {{"a", 0.9, {0, 0, 1, 1}, 0}, {"c", 0.9, {0, 0, 1, 1}, 0}};
    struct vt_ocr_page pages[2] = {{lines, 1}, {lines + 1, 1}};
    char *text;

    if (!s)
        return;
    pages_fill(s); /* lines on frames 1 (shown 5 to 7) and 4 (11 to 12, one line noise) */
    memset(frames, 0, sizeof(frames));
    frames[0] = (struct vt_kf_frame){
        .index = 0, .t_s = 1, .shot = 0, .duplicate_of = -1, .bytes = 10, .file = "0.jpg"};
    frames[1] = (struct vt_kf_frame){
        .index = 1, .t_s = 6, .shot = 1, .duplicate_of = -1, .bytes = 20, .file = "1.jpg"};
    frames[2] = (struct vt_kf_frame){.index = 2, .t_s = 7, .shot = 1, .duplicate_of = 1};
    frames[3] = (struct vt_kf_frame){
        .index = 3, .t_s = 9.5, .shot = 2, .duplicate_of = -1, .bytes = 30, .file = "3.jpg"};
    CHECK_INT(vt_store_begin(s), 0);
    keyframes_prune_check(s, &r, "frames/vid/r2", 1, 2);
    /* the index's screen rows stay as they were: frame 4's text is still found */
    CHECK_INT(vt_store_screen_text(s, "vid", 4, &text), 0);
    CHECK_STR(text ? text : "(none)", "c");
    free(text);
    CHECK_INT(vt_store_screen_text(s, "vid", 0, &text), VT_ENOTFOUND);
    CHECK_INT(text == NULL, 1);
    /* read again (frames 1 and 3, 3 shown 9.5 to 12), then frame 1 made a duplicate: its
     * lines go, 3's stay */
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_ocr_replace(s, "vid", (const int[]){1, 3}, pages, 2), 0);
    frames[1].duplicate_of = 0;
    frames[1].file[0] = '\0';
    keyframes_prune_check(s, &r, "frames/vid/r3", 3, 1);
    scratch_done(s, dir);
}

/* Claiming, holding and finishing a stage change its row only while it is as the caller
 * saw it, and say what they found as an enum. */
VT_TEST_STORE(store_stage_leases)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_video_rec v;
    struct vt_stage_rec rec, *r = NULL;
    size_t n = 0;
    enum vt_lease res = VT_LEASE_GONE;

    CHECK(s != NULL);
    if (!s)
        return;
    insert_video(s, &v, "abc", "k1");
    memset(&rec, 0, sizeof(rec));
    snprintf(rec.name, sizeof(rec.name), "%s", vt_stages[0].name);
    rec.state = VT_STATE_QUEUED;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_stage_put(s, "abc", &rec), 0);
    CHECK_INT(vt_store_stage_claim(s, "abc", &rec, "h:1:a", 5, 0, &res), 0);
    CHECK_INT(res, VT_LEASE_HELD);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_stages(s, "abc", &r, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_INT(r[0].state, VT_STATE_RUNNING);
        CHECK_STR(r[0].owner, "h:1:a");
        CHECK_INT(r[0].attempts, 1);
        CHECK(r[0].started_at == 5);
    }
    vt_stage_recs_free(r, n);
    CHECK_INT(vt_store_begin(s), 0);
    /* what was seen (queued, no attempt) is no longer so: another claim loses */
    CHECK_INT(vt_store_stage_claim(s, "abc", &rec, "h:2:b", 6, 0, &res), 0);
    CHECK_INT(res, VT_LEASE_LOST);
    CHECK_INT(vt_store_stage_lease(s, "abc", rec.name, "h:1:a", 1, &res), 0);
    CHECK_INT(res, VT_LEASE_HELD);
    CHECK_INT(vt_store_stage_lease(s, "abc", rec.name, "h:2:b", 1, &res), 0);
    CHECK_INT(res, VT_LEASE_LOST);
    CHECK_INT(vt_store_stage_lease(s, "nope", rec.name, "h:1:a", 1, &res), 0);
    CHECK_INT(res, VT_LEASE_GONE);
    rec.state = VT_STATE_DONE;
    rec.attempts = 1;
    rec.took_s = 2;
    CHECK_INT(vt_store_stage_finish(s, "abc", &rec, "h:2:b", &res), 0);
    CHECK_INT(res, VT_LEASE_LOST);
    CHECK_INT(vt_store_stage_finish(s, "abc", &rec, "h:1:a", &res), 0);
    CHECK_INT(res, VT_LEASE_HELD);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_stages(s, "abc", &r, &n), 0);
    if (n == 1) {
        CHECK_INT(r[0].state, VT_STATE_DONE);
        CHECK(r[0].owner == NULL);
        CHECK(r[0].took_s == 2);
    }
    vt_stage_recs_free(r, n);
    scratch_done(s, dir);
}

static int count_hits(struct vt_store *s, const char *query, enum vt_match match, int exact_phrase,
                      struct vt_store_hit **hits)
{
    struct vt_query q;
    struct vt_store_search r = {&q, match, NULL, "", "", exact_phrase, 10, 0, 0};
    size_t n = 0;
    int partial = 0;

    vt_query_parse(query, strlen(query), &q);
    if (vt_store_search(s, &r, hits, &n, &partial))
        n = 0;
    vt_query_release(&q);
    return (int)n;
}

static void note_term(void *user, const char *term)
{
    if (!strcmp(term, "fox"))
        *(int *)user = 1;
}

/* The store's search takes the parsed query (on either backend): exact rows first,
 * excluded words never, all-but-one for three words, and words that sound alike. */
VT_TEST_STORE(store_search_parsed_query)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_video_rec v;
    struct vt_cue cues[3];
    struct vt_transcript t;
    struct vt_store_hit *h = NULL;
    const char *texts[] = {"the quick brown fox", "brown and quick", "a lazy dog"};

    CHECK(s != NULL);
    if (!s)
        return;
    insert_video(s, &v, "abc", "k1");
    memset(cues, 0, sizeof(cues));
    for (int i = 0; i < 3; i++) {
        cues[i].start_s = i * 2.0;
        cues[i].end_s = i * 2.0 + 1.5;
        cues[i].text = (char *)texts[i];
    }
    memset(&t, 0, sizeof(t));
    t.cues = cues;
    t.n_cues = 3;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_transcript_replace(s, "abc", &t), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(count_hits(s, "quick brown", VT_MATCH_ALL, 1, &h), 2);
    if (h) {
        CHECK_INT(h[0].exact, 1); /* "quick brown" as typed: the first cue */
        CHECK_INT(h[1].exact, 0);
    }
    free(h);
    CHECK_INT(count_hits(s, "quick -fox", VT_MATCH_ALL, 1, &h), 1);
    free(h);
    CHECK_INT(count_hits(s, "quick brown lazy", VT_MATCH_ALL, 0, &h), 0);
    free(h);
    CHECK_INT(count_hits(s, "quick brown lazy", VT_MATCH_ALL_BUT_ONE, 0, &h), 2);
    free(h);
    CHECK_INT(count_hits(s, "quick brown", VT_MATCH_ALL_BUT_ONE, 0, &h), 0);
    free(h);
    CHECK_INT(count_hits(s, "-quick", VT_MATCH_ALL, 0, &h), 0);
    free(h);
    {
        int found = 0;

        CHECK_INT(vt_store_similar_words(s, "focks", VT_SIMILAR_SOUND, 24, note_term, &found), 0);
        CHECK_INT(found, 1);
        found = 0;
        CHECK_INT(vt_store_similar_words(s, "focks", VT_SIMILAR_SOUND, 0, note_term, &found), 0);
        CHECK_INT(found, 0); /* at most max */
    }
    scratch_done(s, dir);
}

static void note_word(void *user, const char *term)
{
    char *want = user;

    if (!strcmp(term, want))
        want[0] = '\0'; /* found: emptied */
}

/* Whether word is among the store's similar words (how) of itself. */
static int knows(struct vt_store *s, const char *word, enum vt_similar how)
{
    char w[64];

    snprintf(w, sizeof(w), "%s", word);
    CHECK_INT(vt_store_similar_words(s, word, how, 24, note_word, w), 0);
    return w[0] == '\0';
}

/* Removing a video drops the phonetic and fuzzy keys of the words only it said or
 * showed, and keeps those another video still holds. */
VT_TEST_STORE(store_delete_forgets_own_words)
{
    char dir[64];
    struct vt_store *s = scratch(dir, sizeof(dir));
    struct vt_video_rec v;
    const char *ids[2] = {"va", "vb"};
    const char *said[2] = {"hello zebra", "hello walrus"};
    const char *shown[2] = {"Harbor Zeppelin", "Harbor Gondola"};

    if (!s)
        return;
    for (int i = 0; i < 2; i++) {
        struct vt_cue cue = {0};
        struct vt_transcript t = {0};
        struct vt_ocr_line line = {(char *)shown[i], 0.9, {0, 0, 1, 1}, 0};
        struct vt_ocr_page page = {&line, 1};
        struct vt_kf_shot shot = {.start_s = 0, .end_s = 5, .captured = 1, .kept = 1};
        struct vt_kf_frame frame = {.index = 0, .t_s = 1, .duplicate_of = -1, .file = "0.jpg"};
        struct vt_kf_result r = {0};
        int idx = 0;
        char key[16];

        cue.end_s = 1;
        cue.text = (char *)said[i];
        t.cues = &cue;
        t.n_cues = 1;
        r.shots = &shot;
        r.n_shots = 1;
        r.frames = &frame;
        r.n_frames = 1;
        snprintf(key, sizeof(key), "k%d", i);
        video(&v, ids[i], key);
        CHECK_INT(vt_store_begin(s), 0);
        CHECK_INT(vt_store_video_insert(s, &v), 0);
        CHECK_INT(vt_store_transcript_replace(s, ids[i], &t), 0);
        CHECK_INT(vt_store_keyframes_replace(s, ids[i], &r, "frames/x"), 0);
        CHECK_INT(vt_store_ocr_replace(s, ids[i], &idx, &page, 1), 0);
        CHECK_INT(vt_store_commit(s), 0);
    }
    CHECK(knows(s, "zebra", VT_SIMILAR_SOUND));
    CHECK(knows(s, "zeppelin", VT_SIMILAR_EDIT));
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_delete(s, "va"), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK(!knows(s, "zebra", VT_SIMILAR_SOUND));
    CHECK(!knows(s, "zeppelin", VT_SIMILAR_EDIT));
    CHECK(knows(s, "hello", VT_SIMILAR_SOUND)); /* vb says it too */
    CHECK(knows(s, "walrus", VT_SIMILAR_SOUND));
    CHECK(knows(s, "harbor", VT_SIMILAR_EDIT));
    CHECK(knows(s, "gondola", VT_SIMILAR_EDIT));
    scratch_done(s, dir);
}
