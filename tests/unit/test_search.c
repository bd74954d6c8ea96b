/*
 * Unit tests of reading a search's hits (lib/search/search.c over vt_store_docs), on both
 * backends: the rows of a page in one call of the store, handed on in the caller's order
 * with their cue words, and the hits built from them (the moment a matched word was
 * said, hits at the same moment merged) the same whatever the batch the page is read in.
 */
#include "base/util.h"
#include "core/library.h"
#include "harness.h"
#include "pgtest.h"
#include "store/store_int.h"
#include "vidtheque.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_CUES 12

static char *test_db; /* the running test's database on PostgreSQL (pgtest.h) */

/*
 * Video "abc": cue i at 5 i s saying "one fox here" (its words 1 s apart; "fox" at 5 i + 1),
 * and for even i a second cue 0.5 s later that overlaps it ("fox again": the same moment).
 */
static int put_video(struct vt_store *s)
{
    struct vt_video_rec v = {0};
    struct vt_cue cues[N_CUES + N_CUES / 2];
    struct vt_word words[N_CUES][3];
    struct vt_transcript t = {0};
    static char *said[] = {"one", "fox", "here"};
    size_t n = 0;
    int rc;

    snprintf(v.id, sizeof(v.id), "abc");
    v.content_key = "k-abc";
    v.source_kind = "file";
    v.title = "A fox talk";
    memset(cues, 0, sizeof(cues));
    for (int i = 0; i < N_CUES; i++) {
        for (int k = 0; k < 3; k++) {
            words[i][k].text = said[k];
            words[i][k].start_s = i * 5.0 + k;
            words[i][k].end_s = i * 5.0 + k + 0.9;
            words[i][k].conf = 1;
        }
        cues[n].start_s = i * 5.0;
        cues[n].end_s = i * 5.0 + 3;
        cues[n].text = "one fox here";
        cues[n].words = words[i];
        cues[n++].n_words = 3;
        if (i % 2 == 0) {
            cues[n].start_s = i * 5.0 + 0.5;
            cues[n].end_s = i * 5.0 + 2;
            cues[n++].text = "fox again";
        }
    }
    t.cues = cues;
    t.n_cues = n;
    rc = vt_store_begin(s);
    if (!rc)
        rc = vt_store_video_insert(s, &v);
    if (!rc)
        rc = vt_store_transcript_replace(s, v.id, &t);
    if (!rc)
        rc = vt_store_title_docs_refresh(s, v.id);
    if (!rc)
        rc = vt_store_commit(s);
    return rc;
}

static int add_id(void *user, struct db_stmt *st)
{
    struct vt_sb *sb = user;

    vt_sb_addf(sb, "%lld ", (long long)db_col_int64(st, 0));
    return 0;
}

/* The row's line without its words' (vt_store_doc's form, words appended by the caller). */
static void doc_head(struct vt_sb *sb, const struct vt_doc *d)
{
    vt_sb_addf(sb, "%lld %s %s %d %g %g %s %s:", d->rowid, d->video_id, d->source, d->ref,
               d->start_s, d->end_s, d->title, d->text);
}

/* One line per row handed on: the row, then its words. */
static void doc_line(void *user, const struct vt_doc *d)
{
    struct vt_sb *sb = user;

    doc_head(sb, d);
    for (size_t i = 0; i < d->n_words; i++)
        vt_sb_addf(sb, " %s@%g-%g", d->words[i].text, d->words[i].start_s, d->words[i].end_s);
    vt_sb_addc(sb, '\n');
}

struct one_doc {
    struct vt_sb *sb;
    char video_id[VT_ID_MAX], source[16];
    int ref;
};

static void doc_alone(void *user, const struct vt_doc *d)
{
    struct one_doc *o = user;

    CHECK_INT(d->n_words, 0);
    doc_head(o->sb, d);
    snprintf(o->video_id, sizeof(o->video_id), "%s", d->video_id);
    snprintf(o->source, sizeof(o->source), "%s", d->source);
    o->ref = d->ref;
}

static int word_alone(void *user, const char *text, double start_s, double end_s)
{
    vt_sb_addf(user, " %s@%g-%g", text, start_s, end_s);
    return 0;
}

/* What vt_store_docs must say of rowid: the row by vt_store_doc, its cue's words by
 * vt_store_cue_words (one statement each: the verbs it stands for). */
static void expect_doc(struct vt_store *s, long long rowid, struct vt_sb *want)
{
    struct one_doc o = {want, "", "", -1};

    if (vt_store_doc(s, rowid, doc_alone, &o) == VT_ENOTFOUND)
        return;
    if (!strcmp(o.source, "speech") && o.ref >= 0)
        CHECK_INT(vt_store_cue_words(s, o.video_id, o.ref, word_alone, want), 0);
    vt_sb_addc(want, '\n');
}

VT_TEST_STORE(store_docs_in_one_read)
{
    char dir[64], *db = NULL, *end;
    struct vt_store *s = vt_test_store("search", dir, sizeof(dir), &db);
    struct vt_sb ids = {0}, got = {0}, want = {0};
    long long v[64], missing;
    size_t n = 0, with_words = 0;

    CHECK(s != NULL);
    if (!s)
        return;
    CHECK_INT(put_video(s), 0);
    CHECK_INT(store_rows(s, "SELECT id FROM docs ORDER BY id", "ids", add_id, &ids, ""), 0);
    for (char *p = ids.buf; p && n < 60; p = end) {
        long long id = strtoll(p, &end, 10);

        if (end == p)
            break;
        v[n++] = id;
    }
    CHECK_INT(n, N_CUES + N_CUES / 2 + 1); /* the cues and the title */
    if (n < 4)
        goto out;
    /* newest first, then a row asked twice and one that is not there */
    missing = v[n - 1] + 1000;
    for (size_t i = 0; i < n / 2; i++) {
        long long t = v[i];

        v[i] = v[n - 1 - i];
        v[n - 1 - i] = t;
    }
    v[n] = v[1];
    v[n + 1] = missing;
    CHECK_INT(vt_store_docs(s, v, n + 2, doc_line, &got), 0);
    for (size_t i = 0; i < n + 2; i++)
        expect_doc(s, v[i], &want);
    CHECK(got.buf != NULL);
    if (got.buf && want.buf)
        CHECK_STR(got.buf, want.buf);
    /* the "one fox here" cues have their three words, the others and the title none; the
     * last cue (v[1], asked twice) is one of them */
    for (char *p = got.buf; p && *p; p = strchr(p, '\n') + 1)
        with_words += !strncmp(strchr(p, ':'), ": one@", 6);
    CHECK_INT(with_words, N_CUES + 1);
    /* nothing asked, nothing found: no call */
    vt_sb_release(&got);
    CHECK_INT(vt_store_docs(s, v, 0, doc_line, &got), 0);
    CHECK_INT(vt_store_docs(s, &missing, 1, doc_line, &got), 0);
    CHECK(got.buf == NULL);
out:
    vt_sb_release(&ids);
    vt_sb_release(&got);
    vt_sb_release(&want);
    vt_test_store_done(s, dir, db);
}

static struct vt_library *scratch_library(char *dir, size_t n)
{
    char err[256];

    snprintf(dir, n, "/tmp/vt-unit-search.XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    test_db = vt_test_library_db(dir);
    return vt_library_open(dir, VT_OPEN_CREATE, err, sizeof(err));
}

/* The hits as lines; `also` left out: a page ends when it is full, so a row that would
 * merge into one of its hits further down the list is not read for it. */
static char *hit_lines(const struct vt_hit *h, size_t n)
{
    struct vt_sb sb = {0};

    vt_sb_add(&sb, "", 0);
    for (size_t i = 0; i < n; i++)
        vt_sb_addf(&sb, "%s %g-%g %s %s\n", h[i].video_id, h[i].start_s, h[i].end_s, h[i].source,
                   h[i].text);
    return vt_sb_detach(&sb);
}

VT_TEST_STORE(search_hits_read_in_batches)
{
    char dir[64];
    struct vt_library *lib = scratch_library(dir, sizeof(dir));
    struct vt_search_opts all = {.limit = 100}, few = {.limit = 4};
    struct vt_hit *h = NULL, *h4 = NULL;
    size_t n = 0, n4 = 0, said = 0;
    char *a, *b;

    CHECK(lib != NULL);
    if (!lib)
        goto out;
    CHECK_INT(put_video(lib->store), 0);
    CHECK_INT(vt_search(lib, "fox", 3, &all, &h, &n, NULL), 0);
    CHECK_INT(vt_search(lib, "fox", 3, &few, &h4, &n4, NULL), 0);
    /* a moment each: the overlapping cues and the title at 0 s merged into one hit */
    CHECK_INT(n, N_CUES);
    CHECK_INT(n4, 4);
    for (size_t i = 0; i < n; i++) {
        /* a cue with words starts when "fox" was said, 1 s in; the others at their start */
        if (strstr(h[i].text, "here")) {
            said++;
            CHECK(h[i].start_s == (double)(int)(h[i].start_s / 5) * 5 + 1);
        } else {
            CHECK(h[i].start_s == (double)(int)(h[i].start_s / 5) * 5 + 0.5);
        }
        CHECK(strstr(h[i].text, VT_MARK_OPEN "fox" VT_MARK_CLOSE) != NULL);
    }
    CHECK_INT(said, N_CUES / 2);
    CHECK_STR(h[0].also, "title");
    /* a page of 4 is the first 4 of the whole list, whatever batches each was read in */
    a = hit_lines(h, n4 < n ? n4 : n);
    b = hit_lines(h4, n4);
    CHECK_STR(b, a);
    free(a);
    free(b);
    vt_hits_free(h, n);
    vt_hits_free(h4, n4);
    vt_library_close(lib);
out:
    vt_rm_rf(dir);
    vt_test_db_free(test_db);
    test_db = NULL;
}

#define N_ROWS 300

/*
 * Term frequencies on PostgreSQL for an index larger than the window: through the window's
 * lexemes (ts_stat, 4 terms or more) and one count per term give SQLite's estimate (scaled
 * from the window when 100 rows or more hold the word there, else exact).
 */
VT_TEST_PG_ONLY(store_pg_terms_docs_window)
{
    char dir[64], *db = NULL;
    struct vt_store *s = vt_test_store("search", dir, sizeof(dir), &db);
    struct vt_video_rec v = {0};
    struct vt_cue cues[N_ROWS];
    struct vt_transcript t = {0};
    char text[N_ROWS][64];
    /* every row, every other row, every third row (rows 0 3 6 ...), one row, none */
    const char *terms[] = {"every", "even", "third", "once", "never"};
    long long got[5], one[5], top = N_ROWS;
    /* the window is ids above top - 150: 150 rows, of which 75 even and 50 thirds */
    const long long want[5] = {150 * top / 150, 150, 100, 1, 0};

    CHECK(s != NULL);
    if (!s)
        return;
    snprintf(v.id, sizeof(v.id), "big");
    v.content_key = "k-big";
    v.source_kind = "file";
    memset(cues, 0, sizeof(cues));
    for (int i = 0; i < N_ROWS; i++) {
        snprintf(text[i], sizeof(text[i]), "every%s%s%s", i % 2 ? "" : " even",
                 i % 3 ? "" : " third", i == 7 ? " once" : "");
        cues[i].start_s = i;
        cues[i].end_s = i + 0.5;
        cues[i].text = text[i];
    }
    t.cues = cues;
    t.n_cues = N_ROWS;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_insert(s, &v), 0);
    CHECK_INT(vt_store_transcript_replace(s, v.id, &t), 0);
    CHECK_INT(vt_store_commit(s), 0);
    CHECK_INT(vt_store_begin_read(s), 0);
    CHECK_INT(store_pg_terms_docs(s, terms, 5, 150, got), 0);
    CHECK(s->pg_window != NULL); /* five terms: the window's lexemes were read */
    store_pg_window_free(s);
    for (int i = 0; i < 5; i++)
        CHECK_INT(store_pg_terms_docs(s, &terms[i], 1, 150, &one[i]), 0);
    CHECK(s->pg_window == NULL); /* one term: counted alone */
    for (int i = 0; i < 5; i++) {
        CHECK_INT(got[i], want[i]);
        CHECK_INT(one[i], want[i]);
    }
    vt_store_rollback(s);
    vt_test_store_done(s, dir, db);
}
