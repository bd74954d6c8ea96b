/*
 * Unit tests of words across a cue boundary (lib/store/store_pairs.c and search.c's pair
 * tier), on both backends: terms and quoted phrases found across two adjacent cues, the
 * hit starting where the words are; not across cues that are not adjacent; not when one
 * cue holds every term (that cue is the hit); exclusions and filters still hold; the lines
 * of one frame read on together, two frames never.
 */
#include "base/util.h"
#include "core/library.h"
#include "harness.h"
#include "pgtest.h"
#include "store/store_int.h"
#include "text/query.h"
#include "vidtheque.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Cue c's word k is said at 10 c + k / 2 s. */
static const char *const said[] = {
    "had he married a more amiable woman he might have been made still more",
    "respectable many watts",
    "nothing to see here",
    "quite far away now respectable",
    "the end of it",
};

static int put_talk(struct vt_store *s)
{
    struct vt_video_rec v = {0};
    struct vt_cue cues[VT_ARRAY_LEN(said)];
    struct vt_word words[VT_ARRAY_LEN(said)][16];
    char buf[VT_ARRAY_LEN(said)][128];
    struct vt_transcript t = {0};
    struct vt_kf_shot shots[2] = {{.start_s = 0, .end_s = 25, .captured = 1, .kept = 1},
                                  {.start_s = 25, .end_s = 50, .captured = 1, .kept = 1}};
    struct vt_kf_frame frames[2];
    struct vt_kf_result r;
    /* a frame's lines are one index row: a phrase runs on from one line to the next */
    struct vt_ocr_line lines[4] = {{"Quarterly results", 0.9, {0, 0, 9, 9}, 0},
                                   {"revenue grew", 0.9, {0, 20, 9, 9}, 0},
                                   {"Annual report", 0.9, {0, 0, 9, 9}, 0},
                                   {"final words", 0.9, {0, 20, 9, 9}, 0}};
    struct vt_ocr_page pages[2] = {{lines, 2}, {lines + 2, 2}};
    int page_frames[2] = {0, 1};
    int rc;

    snprintf(v.id, sizeof(v.id), "talk");
    v.content_key = "k-talk";
    v.source_kind = "file";
    v.title = "Sense";
    v.duration_s = 50;
    memset(cues, 0, sizeof(cues));
    for (size_t c = 0; c < VT_ARRAY_LEN(said); c++) {
        size_t n = 0;
        char *save = NULL;

        snprintf(buf[c], sizeof(buf[c]), "%s", said[c]);
        for (char *w = strtok_r(buf[c], " ", &save); w && n < 16; w = strtok_r(NULL, " ", &save)) {
            words[c][n].text = w;
            words[c][n].start_s = 10.0 * (double)c + (double)n / 2;
            words[c][n].end_s = words[c][n].start_s + 0.4;
            words[c][n++].conf = 1;
        }
        cues[c].start_s = 10.0 * (double)c;
        cues[c].end_s = 10.0 * (double)c + 8;
        cues[c].text = (char *)said[c];
        cues[c].words = words[c];
        cues[c].n_words = n;
    }
    t.cues = cues;
    t.n_cues = VT_ARRAY_LEN(said);
    memset(frames, 0, sizeof(frames));
    frames[0] = (struct vt_kf_frame){
        .index = 0, .t_s = 1, .shot = 0, .duplicate_of = -1, .bytes = 10, .file = "0.jpg"};
    frames[1] = (struct vt_kf_frame){
        .index = 1, .t_s = 26, .shot = 1, .duplicate_of = -1, .bytes = 10, .file = "1.jpg"};
    memset(&r, 0, sizeof(r));
    r.shots = shots;
    r.n_shots = 2;
    r.frames = frames;
    r.n_frames = 2;
    rc = vt_store_begin(s);
    if (!rc)
        rc = vt_store_video_insert(s, &v);
    if (!rc)
        rc = vt_store_keyframes_replace(s, "talk", &r, "frames/talk/r1");
    if (!rc)
        rc = vt_store_ocr_replace(s, "talk", page_frames, pages, 2);
    if (!rc)
        rc = vt_store_transcript_replace(s, v.id, &t);
    if (!rc)
        rc = vt_store_commit(s);
    return rc;
}

/* The hits of query as "source start-end text" lines. */
static char *found(struct vt_library *lib, const char *query)
{
    struct vt_search_opts o = {.limit = 20};
    struct vt_hit *h = NULL;
    struct vt_sb sb = {0};
    size_t n = 0;

    vt_sb_add(&sb, "", 0);
    CHECK_INT(vt_search(lib, query, strlen(query), &o, &h, &n, NULL), 0);
    for (size_t i = 0; i < n; i++)
        vt_sb_addf(&sb, "%s %g-%g %s\n", h[i].source, h[i].start_s, h[i].end_s, h[i].text);
    vt_hits_free(h, n);
    return vt_sb_detach(&sb);
}

static void expect(struct vt_library *lib, const char *query, const char *want)
{
    char *got = found(lib, query);

    if (strcmp(got, want))
        fprintf(stderr, "  query: %s\n", query);
    CHECK_STR(got, want);
    free(got);
}

#define M(w) VT_MARK_OPEN w VT_MARK_CLOSE

static long long count_pairs(struct vt_store *s)
{
    struct db_stmt *st;
    long long n = -1;

    if (store_prepare(s, "SELECT count(*) FROM pairs", &st))
        return -1;
    if (db_step(st) == DB_ROW)
        n = db_col_int64(st, 0);
    store_finish(s, st);
    return n;
}

/* The cues written again in one statement (as COPY or INSERT ... SELECT do: PostgreSQL fires
 * the row triggers at its end, each cue's two neighbours there): still a pair per boundary. */
static void rewrite_in_one_statement(struct vt_store *s)
{
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(store_exec(s,
                         "CREATE TEMP TABLE cues_again AS SELECT * FROM docs"
                         " WHERE source = 'speech'",
                         "copy"),
              0);
    CHECK_INT(store_exec(s, "DELETE FROM docs WHERE source = 'speech'", "delete"), 0);
    CHECK_INT(count_pairs(s), 0);
    CHECK_INT(store_exec(s, "INSERT INTO docs SELECT * FROM cues_again", "insert"), 0);
    CHECK_INT(store_exec(s, "DROP TABLE cues_again", "drop"), 0);
    CHECK_INT(vt_store_commit(s), 0);
}

VT_TEST_STORE(search_across_cues)
{
    char dir[64], err[256], *db;
    struct vt_library *lib;
    /* cues 0 and 1 as one hit: from "more" (cue 0's 14th word, 6.5 s) to cue 1's end */
    const char *pair01 = "speech 6.5-18 had he married a " M(
        "more") " amiable woman he might "
                "have been made still " M("more") " " M("respectable") " many watts\n";

    snprintf(dir, sizeof(dir), "/tmp/vt-unit-pairs.XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    db = vt_test_library_db(dir);
    lib = vt_library_open(dir, VT_OPEN_CREATE, err, sizeof(err));
    CHECK(lib != NULL);
    if (!lib)
        goto out;
    CHECK_INT(put_talk(lib->store), 0);
    CHECK_INT(count_pairs(lib->store), VT_ARRAY_LEN(said) - 1);
    rewrite_in_one_statement(lib->store);
    CHECK_INT(count_pairs(lib->store), VT_ARRAY_LEN(said) - 1);
    /* the words, the quoted phrase, and a prefix: the moment of the "more" before the pause */
    expect(lib, "more respectable", pair01);
    expect(lib, "\"more respectable\"", pair01);
    expect(lib, "more respect*", pair01);
    expect(lib, "\"still more respectable many\"",
           "speech 6-18 had he married a " M("more") " amiable woman he might have been made " M(
               "still") " " M("more") " " M("respectable") " " M("many") " watts\n");
    /* terms anywhere in the two: from the latest word the rest still needs ("woman", 3 s) */
    expect(lib, "woman watts",
           "speech 3-18 had he married a more amiable " M("woman") " he might have been made "
                                                                   "still more respectable many " M(
                                                                       "watts") "\n");
    expect(lib, "watts nothing",
           "speech 11-28 respectable many " M("watts") " " M("nothing") " to see here\n");
    /* not across cues that are not adjacent (0 and 2, 1 and 3) */
    expect(lib, "amiable nothing", "");
    expect(lib, "\"watts quite\"", "");
    /* one cue holds both: that cue alone, not the pairs around it */
    expect(lib, "many respectable", "speech 10-18 " M("respectable") " " M("many") " watts\n");
    /* exclusions: a word of either cue excludes the pair; another does not */
    expect(lib, "more respectable -watts", "");
    expect(lib, "more respectable -\"many watts\"", "");
    expect(lib, "more respectable -nothing", pair01);
    /* filters */
    expect(lib, "more respectable source:screen", "");
    expect(lib, "more respectable source:speech", pair01);
    expect(lib, "more respectable video:talk", pair01);
    expect(lib, "more respectable video:other", "");
    /* the lines of one frame read on (they are one row); two frames never do */
    expect(lib, "\"results revenue\"",
           "screen 0-25 Quarterly " M("results") "\n" M("revenue") " grew\n");
    expect(lib, "quarterly grew",
           "screen 0-25 " M("Quarterly") " results\nrevenue " M("grew") "\n");
    expect(lib, "\"grew annual\"", "");
    expect(lib, "revenue annual", "");
    /* the pairs follow the cues: a new transcript, new pairs; the old ones are gone */
    {
        struct vt_cue c[2];
        struct vt_transcript t = {0};

        memset(c, 0, sizeof(c));
        c[0].start_s = 0;
        c[0].end_s = 4;
        c[0].text = "a more amiable";
        c[1].start_s = 5;
        c[1].end_s = 9;
        c[1].text = "woman indeed";
        t.cues = c;
        t.n_cues = 2;
        CHECK_INT(vt_store_begin(lib->store), 0);
        CHECK_INT(vt_store_transcript_replace(lib->store, "talk", &t), 0);
        CHECK_INT(vt_store_commit(lib->store), 0);
        expect(lib, "more respectable", "");
        /* without word timings: the first cue's start */
        expect(lib, "\"amiable woman\"",
               "speech 0-9 a more " M("amiable") " " M("woman") " indeed\n");
        CHECK_INT(vt_store_begin(lib->store), 0);
        CHECK_INT(vt_store_video_delete(lib->store, "talk"), 0);
        CHECK_INT(vt_store_commit(lib->store), 0);
        expect(lib, "\"amiable woman\"", "");
    }
    vt_library_close(lib);
out:
    vt_rm_rf(dir);
    vt_test_db_free(db);
}

static int check_as(const char *query, enum vt_match match, char **const *alts, const char *a,
                    const char *b, int phrase_n, int *exact, int *at)
{
    struct vt_query q;
    struct vt_store_search r = {&q, match, alts, "speech", NULL, 1, 100, 0, 1};
    char *text = vt_xasprintf("%s\n%s", a, b);
    int ok;

    vt_query_parse(query, strlen(query), &q);
    ok = store_pair_check(&r, text, strlen(a) + 1, phrase_n, exact, at);
    vt_query_release(&q);
    free(text);
    return ok;
}

static int check(const char *query, const char *a, const char *b, int phrase_n, int *exact, int *at)
{
    return check_as(query, VT_MATCH_ALL, NULL, a, b, phrase_n, exact, at);
}

/* The decision on one pair, from its text alone; hostile splits are no match. */
VT_TEST(search_pair_check)
{
    struct vt_query q;
    struct vt_store_search r = {NULL, VT_MATCH_ALL, NULL, "speech", NULL, 1, 100, 0, 1};
    int exact = 0, at = 0;

    CHECK(check("more respectable", "still more", "respectable many", 2, &exact, &at));
    CHECK(exact && at == 1);
    CHECK(check("respectable still", "still more", "respectable many", 2, &exact, &at));
    CHECK(!exact && at == 0);
    CHECK(check("\"more respectable\"", "more more", "respectable", 0, &exact, &at));
    CHECK(!exact && at == 1);
    CHECK(!check("more still", "still more", "respectable", 2, &exact, &at));
    CHECK(!check("many respectable", "still more", "respectable many", 2, &exact, &at));
    CHECK(!check("more respectable -many", "still more", "respectable many", 2, &exact, &at));
    CHECK(!check("more \"respectable watts\"", "still more", "respectable many", 0, &exact, &at));
    CHECK(!check("more respectable", "", "more respectable", 2, &exact, &at));
    CHECK(check("mo* res*", "still more", "respectable", 0, &exact, &at));
    CHECK(!check("", "a", "b", 0, &exact, &at));
    vt_query_parse("a b", 3, &q);
    r.q = &q;
    CHECK(!store_pair_check(&r, "a\nb", 0, 2, &exact, &at));
    CHECK(!store_pair_check(&r, "a\nb", 4, 2, &exact, &at));
    CHECK(store_pair_check(&r, "a\nb", 2, 2, &exact, &at));
    vt_query_release(&q);
}

/* The approximate tier's pairs: a term as one of its alternatives, all but one of three words
 * (the third misheard), and still neither cue alone. */
VT_TEST(search_pair_check_approx)
{
    char *then[] = {"then", NULL}, *more[] = {"moor", NULL};
    char **alts[] = {more, NULL, then};
    int exact = 0, at = 0;

    CHECK(!check("more respectable than", "still more", "respectable many", 3, &exact, &at));
    CHECK(check_as("more respectable than", VT_MATCH_ALL_BUT_ONE, NULL, "made still more",
                   "respectable many watts", 3, &exact, &at));
    CHECK(!exact && at == 2);
    /* as an alternative, every term found */
    CHECK(check_as("more respectable than", VT_MATCH_ALL, alts, "still more", "respectable then", 3,
                   &exact, &at));
    CHECK(!exact && at == 1);
    CHECK(check_as("more respectable", VT_MATCH_ALL, alts, "still moor", "respectable", 2, &exact,
                   &at));
    CHECK(!exact && at == 1);
    /* one cue holding all but one alone is that cue's hit, not the pair's */
    CHECK(!check_as("more respectable than", VT_MATCH_ALL_BUT_ONE, NULL, "more respectable",
                    "than ever", 3, &exact, &at));
    /* two of three missing is no match, nor an excluded word in the pair */
    CHECK(!check_as("more respectable than", VT_MATCH_ALL_BUT_ONE, NULL, "still more", "many", 3,
                    &exact, &at));
    CHECK(!check_as("more respectable than -many", VT_MATCH_ALL_BUT_ONE, NULL, "still more",
                    "respectable many", 3, &exact, &at));
}
