/*
 * The library-wide tables (phonetic, fuzzy) under saves that run at once (issue 26
 * failure 2): two videos whose transcripts hold the same 3,000 new words in opposite
 * orders, saved by two handles at the same moment, never deadlock (the rows are written
 * sorted, in batches), and every word is indexed once.
 */
#include "base/util.h"
#include "harness.h"
#include "pgtest.h"
#include "store/store.h"
#include "store/store_int.h"
#include "text/transcript.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS   3000
#define PER_CUE 100

/* Word i of run r: letters only (a metaphone key for each), unique across runs. */
static void word(char *out, size_t n, int r, int i)
{
    int v = r * WORDS + i;
    size_t k = 0;

    out[k++] = 'b';
    out[k++] = 'r';
    do {
        out[k++] = (char)('a' + v % 26);
        v /= 26;
    } while (v && k + 1 < n);
    out[k] = '\0';
}

/* A transcript of run r's words, forwards or backwards, PER_CUE words a cue. */
static void transcript(struct vt_transcript *t, int r, int backwards)
{
    memset(t, 0, sizeof(*t));
    t->n_cues = WORDS / PER_CUE;
    t->cues = vt_xcalloc(t->n_cues, sizeof(*t->cues));
    for (size_t c = 0; c < t->n_cues; c++) {
        struct vt_sb sb = {0};

        for (int k = 0; k < PER_CUE; k++) {
            int i = (int)c * PER_CUE + k;
            char w[16];

            word(w, sizeof(w), r, backwards ? WORDS - 1 - i : i);
            vt_sb_addf(&sb, "%s%s", k ? " " : "", w);
        }
        t->cues[c].start_s = (double)c;
        t->cues[c].end_s = (double)c + 1;
        t->cues[c].text = vt_sb_detach(&sb);
    }
}

struct saver {
    const char *db, *id;
    int run, backwards;
    pthread_barrier_t *go;
    int rc;
    char err[512];
};

static void *save_at_once(void *user)
{
    struct saver *o = user;
    struct vt_store *s = NULL;
    struct vt_transcript t;

    transcript(&t, o->run, o->backwards);
    o->rc = vt_store_open(o->db, &s, o->err, sizeof(o->err));
    pthread_barrier_wait(o->go);
    if (!o->rc)
        o->rc = vt_store_begin(s);
    if (!o->rc)
        o->rc = vt_store_transcript_replace(s, o->id, &t);
    if (!o->rc)
        o->rc = vt_store_commit(s);
    if (o->rc && s) {
        snprintf(o->err, sizeof(o->err), "%s", vt_store_errmsg(s));
        vt_store_rollback(s);
    }
    vt_store_close(s);
    vt_transcript_release(&t);
    return NULL;
}

static long long count(struct vt_store *s, const char *sql)
{
    struct db_stmt *st;
    long long v = -1;

    if (store_prepare(s, sql, &st))
        return v;
    if (db_step(st) == DB_ROW)
        v = db_col_int64(st, 0);
    store_finish(s, st);
    return v;
}

VT_TEST_PG_ONLY(pg_library_rows_no_deadlock)
{
    char dir[64], *db = NULL;
    struct vt_store *s = vt_test_store("keyrows", dir, sizeof(dir), &db);
    const char *ids[2] = {"vidA", "vidB"};

    if (!s)
        return;
    for (int i = 0; i < 2; i++)
        vt_test_video_add(s, ids[i], ids[i], 0);
    /* each run with words no run had: every insert is new, so the two saves meet */
    for (int run = 0; run < 4; run++) {
        pthread_barrier_t go;
        pthread_t th[2];
        struct saver o[2];

        pthread_barrier_init(&go, NULL, 2);
        for (int i = 0; i < 2; i++) {
            o[i] = (struct saver){db, ids[i], run, i, &go, -1, ""};
            pthread_create(&th[i], NULL, save_at_once, &o[i]);
        }
        for (int i = 0; i < 2; i++) {
            pthread_join(th[i], NULL);
            if (o[i].rc)
                fprintf(stderr, "  run %d, save %d: %s\n", run, i, o[i].err);
            CHECK_INT(o[i].rc, 0);
        }
        pthread_barrier_destroy(&go);
    }
    CHECK_INT(count(s, "SELECT count(*) FROM phonetic WHERE term LIKE 'br%'"), 4 * WORDS);
    vt_test_store_done(s, dir, db);
}

/* The batches on either backend: a save of 1, 17 and 300 new words (a small batch, a
 * large one, one and a part) and one that repeats words indexes each word once. */
VT_TEST_STORE(store_library_rows_batched)
{
    char dir[64], *db = NULL;
    struct vt_store *s = vt_test_store("keyrows", dir, sizeof(dir), &db);
    const int sizes[] = {1, 17, 300};
    long long want = 0;

    if (!s)
        return;
    vt_test_video_add(s, "vidA", "k", 0);
    for (size_t k = 0; k < VT_ARRAY_LEN(sizes); k++) {
        struct vt_transcript t;
        struct vt_cue cue = {0, 1, NULL, NULL, 0};
        struct vt_sb sb = {0};

        for (int i = 0; i < sizes[k]; i++) {
            char w[16];

            word(w, sizeof(w), 10 + (int)k, i);
            vt_sb_addf(&sb, "%s %s ", w, w); /* each twice */
        }
        cue.text = sb.buf;
        memset(&t, 0, sizeof(t));
        t.cues = &cue;
        t.n_cues = 1;
        want += sizes[k];
        CHECK_INT(vt_store_begin(s), 0);
        CHECK_INT(vt_store_transcript_replace(s, "vidA", &t), 0);
        CHECK_INT(vt_store_commit(s), 0);
        vt_sb_release(&sb);
        CHECK_INT(count(s, "SELECT count(*) FROM phonetic WHERE term LIKE 'br%'"), want);
    }
    vt_test_store_done(s, dir, db);
}
