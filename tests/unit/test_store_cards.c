/* Unit tests of lib/store/store_cards.c: the library's listing as pages of cards, and the kept
 * frame standing for a frame. */
#include "base/util.h"
#include "harness.h"
#include "pgtest.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct seen {
    char ids[8][VT_ID_MAX];
    int n, calls;
    struct vt_store_card last; /* strings not kept */
    int stages_total, stages_finished, poster;
    char running[32];
};

static int see(void *user, const struct vt_store_card *c)
{
    struct seen *s = user;

    s->calls++;
    if (s->n < 8)
        snprintf(s->ids[s->n++], VT_ID_MAX, "%s", c->id);
    s->stages_total = c->stages_total;
    s->stages_finished = c->stages_finished;
    s->poster = c->poster_frame;
    snprintf(s->running, sizeof(s->running), "%s", c->running ? c->running : "");
    return 0;
}

/* The ids seen, comma-separated, into buf. */
static const char *ids(const struct seen *s, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < s->n; i++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? "," : "", s->ids[i]);
    return buf;
}

static void put_video(struct vt_store *s, const char *id, const char *title, const char *channel,
                      double duration_s)
{
    struct vt_video_rec v;
    char key[32];

    memset(&v, 0, sizeof(v));
    snprintf(v.id, sizeof(v.id), "%s", id);
    snprintf(key, sizeof(key), "key-%s", id);
    v.content_key = key;
    v.source_kind = "file";
    v.source_path = "/x/y.mp4";
    v.title = (char *)title;
    v.channel = (char *)channel;
    v.duration_s = duration_s;
    v.created_at = 1000;
    CHECK_INT(vt_store_video_insert(s, &v), 0);
}

static void put_stage(struct vt_store *s, const char *id, const char *name, enum vt_state state)
{
    struct vt_stage_rec st;

    memset(&st, 0, sizeof(st));
    snprintf(st.name, sizeof(st.name), "%s", name);
    st.state = state;
    CHECK_INT(vt_store_stage_put(s, id, &st), 0);
}

static char *library_db; /* the running test's database (pgtest.h) */

/* Close s, remove dir and the test's database. */
static void library_done(struct vt_store *s, const char *dir)
{
    vt_store_close(s);
    vt_rm_rf(dir);
    vt_test_db_free(library_db);
    library_db = NULL;
}

static struct vt_store *library(char *dir, size_t n)
{
    struct vt_store *s = NULL;
    struct vt_kf_shot shots[2] = {{.start_s = 0, .end_s = 5, .captured = 1, .kept = 1},
                                  {.start_s = 5, .end_s = 9, .captured = 1, .kept = 1}};
    struct vt_kf_frame frames[3];
    struct vt_kf_result r;
    char err[256];

    snprintf(dir, n, "/tmp/vt-unit-cards.XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    library_db = vt_test_db(dir);
    if (library_db && vt_store_open(library_db, &s, err, sizeof(err))) {
        fprintf(stderr, "  %s\n", err);
        vt_test_failures++;
        vt_test_db_free(library_db); /* the test returns without library_done() */
        library_db = NULL;
    }
    if (!s)
        return NULL;
    /* frame 0 has no image; 1 is kept; 2 repeats 1 */
    memset(frames, 0, sizeof(frames));
    frames[0] = (struct vt_kf_frame){.index = 0, .t_s = 1, .shot = 0, .duplicate_of = -1};
    frames[1] = (struct vt_kf_frame){
        .index = 1, .t_s = 5.5, .shot = 1, .duplicate_of = -1, .file = "1.jpg"};
    frames[2] = (struct vt_kf_frame){.index = 2, .t_s = 8, .shot = 1, .duplicate_of = 1};
    memset(&r, 0, sizeof(r));
    r.shots = shots;
    r.n_shots = 2;
    r.frames = frames;
    r.n_frames = 3;
    CHECK_INT(vt_store_begin(s), 0);
    put_video(s, "v1", "Banana bread", "Kitchen", 30);
    put_video(s, "v2", "apple pie", NULL, 10);
    put_video(s, "v3", "Cherry", "Orchard BANANA", 20);
    put_video(s, "v4", NULL, NULL, 5);
    put_video(s, "v5", "banana split", NULL, 40);
    put_stage(s, "v1", "probe", VT_STATE_DONE);
    put_stage(s, "v1", "keyframe", VT_STATE_RUNNING);
    put_stage(s, "v1", "ocr", VT_STATE_QUEUED);
    CHECK_INT(vt_store_keyframes_replace(s, "v1", &r, "frames/v1/r1"), 0);
    CHECK_INT(vt_store_video_set_state(s, "v1", VT_INDEX_PROCESSING, VT_DATA_PARTIAL, 0), 0);
    CHECK_INT(vt_store_video_set_state(s, "v2", VT_INDEX_READY, VT_DATA_OK, 1), 0);
    CHECK_INT(vt_store_commit(s), 0);
    return s;
}

/* cards(s, q): the ids of the page into got, the total into *total */
static void cards(struct vt_store *s, const struct vt_store_cards_query *q, struct seen *got,
                  long long *total)
{
    memset(got, 0, sizeof(*got));
    CHECK_INT(vt_store_cards(s, q, see, got, total), 0);
}

VT_TEST_STORE(store_cards_pages_sorts_filters)
{
    char dir[64], buf[128];
    struct vt_store *s = library(dir, sizeof(dir));
    struct vt_store_cards_query q;
    enum vt_index_state st = VT_INDEX_PROCESSING;
    struct seen got;
    long long total = -1;

    CHECK(s != NULL);
    if (!s)
        return;
    memset(&q, 0, sizeof(q));
    q.limit = -1;
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "v1,v2,v3,v4,v5");
    CHECK_INT(total, 5);

    q.offset = 2;
    q.limit = 2;
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "v3,v4");
    CHECK_INT(total, 5); /* the total is the filter's, not the page's */

    q.offset = 10; /* past the end: no card, the same total */
    cards(s, &q, &got, &total);
    CHECK_INT(got.calls, 0);
    CHECK_INT(total, 5);

    q.offset = 0;
    q.limit = 0; /* count only */
    cards(s, &q, &got, &total);
    CHECK_INT(got.calls, 0);
    CHECK_INT(total, 5);

    q.limit = -1;
    q.sort = VT_CARDS_NEWEST;
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "v5,v4,v3,v2,v1");
    q.sort = VT_CARDS_TITLE; /* case-blind; no title sorts first */
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "v4,v2,v1,v5,v3");
    q.sort = VT_CARDS_DURATION;
    q.offset = 1;
    q.limit = 3; /* the page is cut after sorting, then kept in that order */
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "v2,v3,v1");

    /* title or channel, ASCII case-blind; a LIKE wildcard is a plain character */
    memset(&q, 0, sizeof(q));
    q.limit = -1;
    q.text = "BANANA";
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "v1,v3,v5");
    CHECK_INT(total, 3);
    q.text = "%";
    cards(s, &q, &got, &total);
    CHECK_INT(total, 0);

    /* a state: the card's progress and poster */
    q.text = NULL;
    q.state = &st;
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "v1");
    CHECK_INT(got.stages_total, 3);
    CHECK_INT(got.stages_finished, 1);
    CHECK_STR(got.running, "keyframe");
    CHECK_INT(got.poster, 1); /* frame 0 has no image: the first kept one */

    /* one video by id; another without frames has no poster */
    q.state = NULL;
    q.id = "v2";
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "v2");
    CHECK_INT(got.poster, -1);
    CHECK_INT(got.stages_total, 0);
    CHECK_STR(got.running, "");
    q.id = "nope";
    cards(s, &q, &got, &total);
    CHECK_INT(total, 0);
    library_done(s, dir);
}

/* The filter's words as search has them: punctuation and hyphens separate words, so
 * `held out` finds "Held-out" (issue 25); the words in order; text without a word is
 * matched as it is, LIKE's wildcards plain characters. */
VT_TEST_STORE(store_cards_filter_words)
{
    char dir[64], buf[128];
    struct vt_store *s = library(dir, sizeof(dir));
    struct vt_store_cards_query q;
    struct seen got;
    long long total = -1;

    CHECK(s != NULL);
    if (!s)
        return;
    CHECK_INT(vt_store_begin(s), 0);
    put_video(s, "w1", "Held-out results", NULL, 1);
    put_video(s, "w2", "what is held, out there", NULL, 1);
    put_video(s, "w3", "Hold out", "held", 1);
    put_video(s, "w4", "50% off_now", NULL, 1);
    put_video(s, "w5", "Held\xe2\x80\x93out, with an en dash", NULL, 1);
    CHECK_INT(vt_store_commit(s), 0);
    memset(&q, 0, sizeof(q));
    q.limit = -1;
    q.text = "held out";
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "w1,w2,w5");
    CHECK_INT(total, 3);
    q.text = "HELD-OUT";
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "w1,w2,w5");
    q.text = "held\xe2\x80\x94out"; /* an em dash between */
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "w1,w2,w5");
    q.text = "  (held)  ";
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "w1,w2,w3,w5");
    q.text = "out held"; /* in order */
    cards(s, &q, &got, &total);
    CHECK_INT(total, 0);
    q.text = "BANANA";
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "v1,v3,v5");
    q.text = "%";
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "w4");
    q.text = "_";
    cards(s, &q, &got, &total);
    CHECK_STR(ids(&got, buf, sizeof(buf)), "w4");
    q.text = "%_";
    cards(s, &q, &got, &total);
    CHECK_INT(total, 0);
    q.text = "\\";
    cards(s, &q, &got, &total);
    CHECK_INT(total, 0);
    library_done(s, dir);
}

VT_TEST_STORE(store_frame_kept)
{
    char dir[64];
    struct vt_store *s = library(dir, sizeof(dir));
    int k = 99;

    CHECK(s != NULL);
    if (!s)
        return;
    CHECK_INT(vt_store_frame_kept(s, "v1", 1, &k), 0);
    CHECK_INT(k, 1);
    CHECK_INT(vt_store_frame_kept(s, "v1", 2, &k), 0); /* a duplicate: the frame it repeats */
    CHECK_INT(k, 1);
    CHECK_INT(vt_store_frame_kept(s, "v1", 0, &k), 0); /* no image */
    CHECK_INT(k, -1);
    CHECK_INT(vt_store_frame_kept(s, "v1", 7, &k), 0); /* no such frame */
    CHECK_INT(k, -1);
    CHECK_INT(vt_store_frame_kept(s, "v2", 1, &k), 0);
    CHECK_INT(k, -1);
    library_done(s, dir);
}

/*
 * A card's poster (issue 25): not the first kept frame (a grey test pattern here) but a
 * frame with text (a slide's title), else the sharpest frame of the longest shot; a frame
 * a user chose wins while it is a kept frame with an image; a duplicate, a frame without
 * an image or none at all is refused and changes nothing; -1 gives the pick back; the
 * choice is read back as it was stored.
 */
VT_TEST_STORE(store_cards_poster)
{
    char dir[64];
    struct vt_store *s = library(dir, sizeof(dir));
    struct vt_kf_shot shots[3] = {{.start_s = 0, .end_s = 1, .captured = 1, .kept = 1},
                                  {.start_s = 1, .end_s = 9, .captured = 2, .kept = 2},
                                  {.start_s = 9, .end_s = 10, .captured = 2, .kept = 1}};
    struct vt_kf_frame f[5];
    struct vt_kf_result r;
    struct vt_ocr_line title = {.text = "Quarterly results", .conf = 0.9, .noise = 0};
    struct vt_ocr_line scrap = {.text = "x7", .conf = 0.2, .noise = 1};
    struct vt_ocr_page pages[2] = {{&title, 1}, {&scrap, 1}};
    int which[2] = {3, 1};
    struct vt_store_cards_query q;
    struct seen got;
    long long total;
    int ok = -1, chosen = 7;

    CHECK(s != NULL);
    if (!s)
        return;
    memset(f, 0, sizeof(f));
    /* 0: the test pattern, sharp, first; 1 and 2 in the longest shot (2 the sharpest);
     * 3 in a short shot; 4 repeats 3 */
    f[0] = (struct vt_kf_frame){
        .index = 0, .t_s = 0.5, .shot = 0, .duplicate_of = -1, .sharpness = 900, .file = "0.jpg"};
    f[1] = (struct vt_kf_frame){
        .index = 1, .t_s = 2, .shot = 1, .duplicate_of = -1, .sharpness = 40, .file = "1.jpg"};
    f[2] = (struct vt_kf_frame){
        .index = 2, .t_s = 6, .shot = 1, .duplicate_of = -1, .sharpness = 80, .file = "2.jpg"};
    f[3] = (struct vt_kf_frame){
        .index = 3, .t_s = 9.2, .shot = 2, .duplicate_of = -1, .sharpness = 10, .file = "3.jpg"};
    f[4] = (struct vt_kf_frame){.index = 4, .t_s = 9.8, .shot = 2, .duplicate_of = 3};
    memset(&r, 0, sizeof(r));
    r.shots = shots;
    r.n_shots = 3;
    r.frames = f;
    r.n_frames = 5;
    CHECK_INT(vt_store_begin(s), 0);
    put_video(s, "p1", "Posters", NULL, 10);
    CHECK_INT(vt_store_keyframes_replace(s, "p1", &r, "frames/p1/r1"), 0);
    CHECK_INT(vt_store_commit(s), 0);
    memset(&q, 0, sizeof(q));
    q.limit = -1;
    q.id = "p1";

    /* no text on any frame: the sharpest of the longest shot, not the first frame */
    cards(s, &q, &got, &total);
    CHECK_INT(got.poster, 2);
    /* a slide's text beats sharpness and length; a frame of noise alone does not */
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_ocr_replace(s, "p1", which, pages, 2), 0);
    CHECK_INT(vt_store_commit(s), 0);
    cards(s, &q, &got, &total);
    CHECK_INT(got.poster, 3);

    /* a user's choice wins, and is read back */
    CHECK_INT(vt_store_poster_set(s, "p1", 0, &ok), 0);
    CHECK_INT(ok, 1);
    cards(s, &q, &got, &total);
    CHECK_INT(got.poster, 0);
    CHECK_INT(vt_store_poster_get(s, "p1", &chosen), 0);
    CHECK_INT(chosen, 0);
    /* refused, nothing changed: a duplicate, no such frame, no such video */
    CHECK_INT(vt_store_poster_set(s, "p1", 4, &ok), 0);
    CHECK_INT(ok, 0);
    CHECK_INT(vt_store_poster_set(s, "p1", 99, &ok), 0);
    CHECK_INT(ok, 0);
    CHECK_INT(vt_store_poster_set(s, "nope", 1, &ok), 0);
    CHECK_INT(ok, 0);
    cards(s, &q, &got, &total);
    CHECK_INT(got.poster, 0);
    /* the pick again */
    CHECK_INT(vt_store_poster_set(s, "p1", -1, &ok), 0);
    CHECK_INT(ok, 1);
    CHECK_INT(vt_store_poster_get(s, "p1", &chosen), 0);
    CHECK_INT(chosen, -1);
    cards(s, &q, &got, &total);
    CHECK_INT(got.poster, 3);
    library_done(s, dir);
}
