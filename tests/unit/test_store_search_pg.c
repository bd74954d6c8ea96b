/*
 * Unit tests of lib/store/pg/store_search_pg.c that need no server: the tsquery written for a
 * parsed query (quoting, hostile input, words no index holds, all-but-one groups),
 * the tsquery syntax check the fuzz target uses, and the ranking computed in C from a
 * row's text, which must give SQLite's vtrank() scores to the last bit on the same rows.
 */
#include "base/util.h"
#include "harness.h"
#include "pgtest.h"
#include "store/store_int.h"
#include "text/query.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *tsq(const char *query, int mode, char **const *alts, size_t *n_ph)
{
    struct store_phrase ph[STORE_MAX_PHRASES];
    struct vt_query q;
    size_t n = 0;
    char *t;

    vt_query_parse(query, strlen(query), &q);
    t = store_pg_tsquery(&q, mode, alts, ph, STORE_MAX_PHRASES, &n);
    if (n_ph)
        *n_ph = n;
    vt_query_release(&q);
    return t;
}

static void check_tsq(const char *query, int mode, char **const *alts, const char *want)
{
    char *t = tsq(query, mode, alts, NULL);

    if (want) {
        CHECK_STR(t, want);
        CHECK(t && store_pg_tsquery_valid(t));
    } else {
        CHECK(t == NULL);
    }
    free(t);
}

VT_TEST(store_pg_tsquery_text)
{
    char *alt[] = {"brawn", "br\xc3\xa9n", NULL};
    char *bad[] = {"ok", "\xff", NULL};
    char **alts[VT_QUERY_MAX_TERMS] = {NULL, alt};
    char **alts_bad[VT_QUERY_MAX_TERMS] = {bad, NULL, NULL};
    struct vt_sb sb = {0};
    size_t n_ph = 0;
    char *t;

    check_tsq("Quick brown", 0, NULL, "((('quick')) & (('brown')))");
    check_tsq("\"big data\" pre* -\"bad thing\" -x", 0, NULL,
              "((('big' <-> 'data')) & (('pre':*))) & !('bad' <-> 'thing') & !('x')");
    check_tsq("quick brown", 0, alts, "((('quick')) & (('brown') | ('brawn') | ('br\xc3\xa9n')))");
    /* quotes, backslashes and operators typed are never syntax: only tokens remain */
    check_tsq("it's a\\b \"'; DROP TABLE docs; --\" | ! & <-> :*", 0, NULL,
              "((('it' <-> 's')) & (('a' <-> 'b')) & (('drop' <-> 'table' <-> 'docs')))");
    /* a word that is not UTF-8 is in no index: as a term nothing matches, excluded it
     * excludes nothing, as an alternative it is dropped */
    check_tsq("\xff quick", 0, NULL, NULL);
    check_tsq("quick -\xff", 0, NULL, "((('quick')))");
    check_tsq("quick", 0, alts_bad, "((('quick') | ('ok')))");
    check_tsq("-quick", 0, NULL, NULL);
    check_tsq("", 0, NULL, NULL);
    /* all but one: a group per word left out, only for three plain words or more */
    check_tsq("a b", 2, NULL, NULL);
    check_tsq("a \"b c\" d", 2, NULL, NULL);
    check_tsq("a b c -d", 2, NULL,
              "((((('b')) & (('c'))) | ((('a')) & (('c'))) | ((('a')) & (('b'))))) & !('d')");
    check_tsq("\xff b c", 2, NULL, "((((('b')) & (('c')))))");
    check_tsq("\xff \xfe c", 2, NULL, NULL);
    /* FTS5 numbers every phrase of every group, the alternatives after their term */
    free(tsq("a b c -d", 2, alts, &n_ph));
    CHECK_INT(n_ph, 2 + 1 + 4 + 1 + 2 + 1); /* b c+2 | a c | a b+2, then -d */
    free(tsq("\xff b c", 2, NULL, &n_ph));
    CHECK_INT(n_ph, 6);
    store_pg_lexeme(&sb, "o'k\\");
    CHECK_STR(sb.buf, "'o''k\\\\'");
    CHECK(store_pg_tsquery_valid(sb.buf));
    vt_sb_release(&sb);
    t = tsq("x y z", 2, NULL, &n_ph);
    CHECK(t && store_pg_tsquery_valid(t));
    free(t);
}

VT_TEST(store_pg_tsquery_syntax)
{
    static const char *good[] = {
        "'a'",       "'a':*",   "!'a'",    "('a' | 'b') & !('c' <-> 'd':*)",
        " ( 'a' ) ", "'it''s'", "'a\\'b'", "'\xc3\xa9t\xc3\xa9'"};
    static const char *bad[] = {"",         "a",       "'a",          "'a' &", "('a'",   "''",
                                "'a' <-> ", "'a' 'b'", "'a') | ('b'", "&'a'",  "'\xff'", "'a\\",
                                "'a':",     "!"};

    for (size_t i = 0; i < VT_ARRAY_LEN(good); i++)
        CHECK(store_pg_tsquery_valid(good[i]));
    for (size_t i = 0; i < VT_ARRAY_LEN(bad); i++) {
        if (store_pg_tsquery_valid(bad[i]))
            fprintf(stderr, "  accepted: %s\n", bad[i]);
        CHECK(!store_pg_tsquery_valid(bad[i]));
    }
}

/* ---- the ranking against SQLite's ---- */

static const char *const texts[] = {
    "the quick brown fox jumps over the lazy dog", "quick quick brown and brown again",
    "a brown study in the quick of things",        "lazy afternoons and a quiet dog",
    "the quickest route is not the quick one",     "brown fox brown fox brown fox",
    "nothing to see here at all, really nothing",  "fox hunting is over; the fox won",
    "a dog, a fox and a quick brown hen",          "dogs and foxes and quicksand",
    "the lazy dog sleeps; the quick fox runs",     "brown",
    "over and over and over the lazy brown dog",   "quick brown fox quick brown fox",
};

struct count_ctx {
    const char *word;
    int hit;
    size_t n;
};

static void count_tok(void *user, const char *tok, size_t n)
{
    struct count_ctx *c = user;

    c->n++;
    if (c->word && strlen(c->word) == n && !memcmp(c->word, tok, n))
        c->hit = 1;
}

/* Rows of texts holding word; or, word NULL, the tokens of them all. */
static double fixture_count(const char *word)
{
    size_t total = 0, rows = 0;

    for (size_t i = 0; i < VT_ARRAY_LEN(texts); i++) {
        struct count_ctx c = {word, 0, 0};

        vt_tokenize(texts[i], strlen(texts[i]), count_tok, &c);
        rows += c.hit;
        total += c.n;
    }
    return (double)(word ? rows : total);
}

struct doc_text {
    char *text;
};

static void got_doc(void *user, const struct vt_doc *d)
{
    ((struct doc_text *)user)->text = vt_xstrdup(d->text);
}

/* SQLite's hits for the query, each rescored by store_pg_score: the same doubles. */
static void check_scores(struct vt_store *s, const char *query, int mode, char **const *alts,
                         int exact_phrase, int min_hits)
{
    struct store_phrase ph[STORE_MAX_PHRASES];
    double df[STORE_MAX_PHRASES];
    struct vt_query q;
    struct vt_store_search r = {
        &q, mode == 2 ? VT_MATCH_ALL_BUT_ONE : VT_MATCH_ALL, alts, "", "", exact_phrase, 100, 0, 0};
    struct vt_store_hit *hits = NULL;
    size_t n = 0, n_ph = 0, n_excl = 0, plain;
    int partial = 0, phrase_n = 0;
    char *t;

    vt_query_parse(query, strlen(query), &q);
    t = store_pg_tsquery(&q, mode, alts, ph, STORE_MAX_PHRASES, &n_ph);
    for (size_t i = 0; i < q.n_terms; i++)
        n_excl += q.terms[i].exclude != 0;
    /* the document frequencies vt_store_search counts: exact at this size, a phrase's
     * its rarest word's, excluded phrases unscored */
    for (size_t i = 0; i < n_ph; i++) {
        df[i] = i >= n_ph - n_excl ? -1 : -2;
        for (size_t k = 0; df[i] != -1 && k < ph[i].n; k++) {
            double d = fixture_count(ph[i].words[k]);

            df[i] = df[i] == -2 || d < df[i] ? d : df[i];
        }
    }
    plain = vt_query_plain_words(&q, NULL);
    if (exact_phrase && plain >= 2)
        phrase_n = (int)plain;
    CHECK_INT(vt_store_search(s, &r, &hits, &n, &partial), 0);
    if ((int)n < min_hits)
        fprintf(stderr, "  %s: %zu hits\n", query, n);
    CHECK((int)n >= min_hits);
    for (size_t i = 0; i < n && t; i++) {
        struct doc_text d = {NULL};
        double mine;

        CHECK_INT(vt_store_doc(s, hits[i].rowid, got_doc, &d), 0);
        mine = store_pg_score(d.text ? d.text : "", ph, n_ph, df, n_ph, phrase_n,
                              (double)VT_ARRAY_LEN(texts), fixture_count(NULL));
        if (fmod(mine, VT_PHRASE_BONUS) != hits[i].score ||
            (mine >= VT_PHRASE_BONUS) != hits[i].exact)
            fprintf(stderr, "  %s (mode %d) on \"%s\": %.17g, SQLite %.17g%s\n", query, mode,
                    d.text, mine, hits[i].score, hits[i].exact ? " exact" : "");
        CHECK(fmod(mine, VT_PHRASE_BONUS) == hits[i].score);
        CHECK((mine >= VT_PHRASE_BONUS) == hits[i].exact);
        free(d.text);
    }
    CHECK(t != NULL || n == 0);
    free(t);
    free(hits);
    vt_query_release(&q);
}

VT_TEST(store_pg_score_is_vtrank)
{
    char dir[] = "/tmp/vt-unit-pgscore.XXXXXX", err[256], *db;
    char *a_fox[] = {"dog", "hen", NULL}, *a_quick[] = {"quiet", NULL};
    char **alts[VT_QUERY_MAX_TERMS] = {a_quick, NULL, a_fox};
    struct vt_store *s = NULL;
    struct vt_video_rec v;
    struct vt_transcript tr;
    struct vt_cue cues[VT_ARRAY_LEN(texts)];

    CHECK(mkdtemp(dir) != NULL);
    db = vt_xasprintf("%s/library.db", dir);
    CHECK_INT(vt_store_open(db, &s, err, sizeof(err)), 0);
    free(db);
    if (!s)
        return;
    memset(&v, 0, sizeof(v));
    snprintf(v.id, sizeof(v.id), "rankvideo");
    v.content_key = "k";
    v.source_kind = "file";
    memset(cues, 0, sizeof(cues));
    for (size_t i = 0; i < VT_ARRAY_LEN(texts); i++) {
        cues[i].start_s = (double)i;
        cues[i].end_s = (double)i + 0.5;
        cues[i].text = (char *)texts[i];
    }
    memset(&tr, 0, sizeof(tr));
    tr.cues = cues;
    tr.n_cues = VT_ARRAY_LEN(texts);
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_insert(s, &v), 0);
    CHECK_INT(vt_store_transcript_replace(s, v.id, &tr), 0);
    CHECK_INT(vt_store_commit(s), 0);
    check_scores(s, "fox", 0, NULL, 1, 5);
    check_scores(s, "quick brown", 0, NULL, 1, 5);
    check_scores(s, "quick brown fox", 0, NULL, 1, 3);
    check_scores(s, "brown quick", 0, NULL, 1, 4);
    check_scores(s, "\"brown fox\" -hunting", 0, NULL, 1, 3);
    check_scores(s, "quick* dog", 0, NULL, 1, 3);
    check_scores(s, "\"quick brown\" fox -jumps", 0, NULL, 0, 2);
    check_scores(s, "over lazy", 0, NULL, 1, 2);
    check_scores(s, "quick brown fox", 0, alts, 0, 3);
    check_scores(s, "quick brown fox", 2, NULL, 0, 6);
    check_scores(s, "quick brown fox", 2, alts, 0, 8);
    check_scores(s, "quick lazy dog -afternoons", 2, NULL, 0, 4);
    vt_store_close(s);
    vt_rm_rf(dir);
}

/* ---- on a server: PostgreSQL's search gives SQLite's answers ---- */

static void fill(struct vt_store *s, const char *id, size_t from, size_t to, const char *title)
{
    struct vt_video_rec v;
    struct vt_transcript tr;
    struct vt_cue cues[VT_ARRAY_LEN(texts)];

    memset(&v, 0, sizeof(v));
    snprintf(v.id, sizeof(v.id), "%s", id);
    v.content_key = (char *)id;
    v.source_kind = "file";
    v.title = (char *)title;
    memset(cues, 0, sizeof(cues));
    for (size_t i = from; i < to; i++) {
        cues[i - from].start_s = (double)i;
        cues[i - from].end_s = (double)i + 0.5;
        cues[i - from].text = (char *)texts[i];
    }
    memset(&tr, 0, sizeof(tr));
    tr.cues = cues;
    tr.n_cues = to - from;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_insert(s, &v), 0);
    CHECK_INT(vt_store_transcript_replace(s, id, &tr), 0);
    CHECK_INT(vt_store_title_docs_refresh(s, id), 0);
    CHECK_INT(vt_store_commit(s), 0);
}

struct doc_id {
    char line[256];
};

static void got_doc_id(void *user, const struct vt_doc *d)
{
    snprintf(((struct doc_id *)user)->line, sizeof(((struct doc_id *)user)->line), "%s %s %d",
             d->video_id, d->source, d->ref);
}

/* One search on both stores: the same rows, in the same order, with the same scores (with
 * pairs: the same pairs of cues, their words starting at the same token). */
static int same_search(struct vt_store *sq, struct vt_store *pg, const char *query, int mode,
                       char **const *alts, const char *source, const char *video, int pairs)
{
    struct vt_query q;
    struct vt_store_search r = {&q,    mode == 2 ? VT_MATCH_ALL_BUT_ONE : VT_MATCH_ALL,
                                alts,  source,
                                video, mode == 1,
                                100,   0,
                                pairs};
    struct vt_store_hit *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    int partial = 0, same = 1;

    vt_query_parse(query, strlen(query), &q);
    CHECK_INT(vt_store_search(sq, &r, &a, &na, &partial), 0);
    CHECK_INT(vt_store_search(pg, &r, &b, &nb, &partial), 0);
    same = na == nb;
    for (size_t i = 0; same && i < na; i++) {
        struct doc_id da = {""}, db = {""};

        vt_store_doc(sq, a[i].rowid, got_doc_id, &da);
        vt_store_doc(pg, b[i].rowid, got_doc_id, &db);
        same = !strcmp(da.line, db.line) && a[i].score == b[i].score && a[i].exact == b[i].exact &&
               !strcmp(a[i].video_id, b[i].video_id) && a[i].start_s == b[i].start_s &&
               !a[i].next == !b[i].next && a[i].at == b[i].at;
        if (same && a[i].next) {
            vt_store_doc(sq, a[i].next, got_doc_id, &da);
            vt_store_doc(pg, b[i].next, got_doc_id, &db);
            same = !strcmp(da.line, db.line);
        }
        if (!same)
            fprintf(stderr, "  hit %zu: %s %.17g%s vs %s %.17g%s\n", i, da.line, a[i].score,
                    a[i].exact ? " exact" : "", db.line, b[i].score, b[i].exact ? " exact" : "");
    }
    if (!same)
        fprintf(stderr, "  \"%s\" mode %d source \"%s\" video \"%s\": %zu hits vs %zu\n", query,
                mode, source, video, na, nb);
    CHECK(same);
    free(a);
    free(b);
    vt_query_release(&q);
    return (int)na;
}

static void add_word(void *user, const char *term)
{
    struct vt_sb *sb = user;

    vt_sb_addf(sb, "%s ", term);
}

static void same_similar(struct vt_store *sq, struct vt_store *pg, const char *word,
                         enum vt_similar how)
{
    struct vt_sb a = {0}, b = {0};

    vt_sb_add(&a, "", 0);
    vt_sb_add(&b, "", 0);
    CHECK_INT(vt_store_similar_words(sq, word, how, 24, add_word, &a), 0);
    CHECK_INT(vt_store_similar_words(pg, word, how, 24, add_word, &b), 0);
    CHECK_STR(b.buf, a.buf);
    vt_sb_release(&a);
    vt_sb_release(&b);
}

static int same_everything(struct vt_store *sq, struct vt_store *pg)
{
    static const char *const queries[] = {
        "fox",           "quick brown", "quick brown fox", "brown quick",  "\"brown fox\"",
        "quick* dog",    "over lazy",   "fox -hunting",    "the -quick",   "\"quick brown\" fox",
        "lazy dog over", "nothing",     "brown",           "quick",        "a",
        "talk",          "dogs foxes",  "quickest route",  "fox won over", "zzz"};
    static const char *const sources[] = {"", "speech", "title"};
    static const char *const videos[] = {"", "beta"};
    char *a_fox[] = {"dog", "hen", NULL}, *a_quick[] = {"quiet", "quickest", NULL};
    char **alts[VT_QUERY_MAX_TERMS] = {a_quick, NULL, a_fox};
    int hits = 0;

    for (size_t i = 0; i < VT_ARRAY_LEN(queries); i++)
        for (int mode = 0; mode < 3; mode++)
            for (size_t k = 0; k < VT_ARRAY_LEN(sources) * VT_ARRAY_LEN(videos); k++) {
                const char *src = sources[k % VT_ARRAY_LEN(sources)];
                const char *vid = videos[k / VT_ARRAY_LEN(sources)];

                hits += same_search(sq, pg, queries[i], mode, NULL, src, vid, 0);
                hits += same_search(sq, pg, queries[i], mode, alts, src, vid, 0);
                if (mode < 2)
                    hits += same_search(sq, pg, queries[i], mode, NULL, src, vid, 1);
            }
    same_similar(sq, pg, "focks", VT_SIMILAR_SOUND);
    same_similar(sq, pg, "kwick", VT_SIMILAR_SOUND);
    same_similar(sq, pg, "brwn", VT_SIMILAR_EDIT);
    same_similar(sq, pg, "lazzy", VT_SIMILAR_EDIT);
    same_similar(sq, pg, "quikc", VT_SIMILAR_EDIT);
    return hits;
}

static void check_stats(struct vt_store *pg)
{
    struct db_stmt *st;

    /* the triggers' counts are the tokens vt_tokenize cuts (fixture_count) */
    CHECK_INT(store_prepare(pg,
                            "SELECT CAST(sum(rows) AS bigint), CAST(sum(tokens) AS bigint)"
                            " FROM docs_stats WHERE source = 'speech'",
                            &st),
              0);
    CHECK_INT(db_step(st), DB_ROW);
    CHECK_INT(db_col_int64(st, 0), (long long)VT_ARRAY_LEN(texts));
    CHECK_INT(db_col_int64(st, 1), (long long)fixture_count(NULL));
    store_finish(pg, st);
}

/* What the server makes of the tsquery text of hostile queries: always a tsquery. */
static void server_parses(struct vt_store *pg)
{
    static const char *const hostile[] = {"'; DROP TABLE docs; --",
                                          "\\",
                                          "a'b",
                                          "it''s",
                                          "((( ",
                                          "!!! & | <-> :*",
                                          "\"",
                                          "'quick':* & !'x'",
                                          "\xe9t\xe9",
                                          "caf\xc3\xa9 na\xc3\xafve",
                                          "x\xff\xfey",
                                          "-a b",
                                          "\"a b\" c* -\"d e\"",
                                          "a b c d e f g h i j k l m n o p q r s",
                                          "source:\xff quick",
                                          "video:\xff\xfe quick",
                                          "video:caf\xc3 fox"};
    char *alt[] = {"o'k", "back\\slash", "sp ace", "\xc3\xa9", NULL};
    char **alts[VT_QUERY_MAX_TERMS] = {alt, alt, alt, alt};
    struct db_stmt *st;

    CHECK_INT(store_prepare(pg, "SELECT numnode(CAST(? AS tsquery))", &st), 0);
    for (size_t i = 0; i < VT_ARRAY_LEN(hostile); i++) {
        struct store_phrase ph[STORE_MAX_PHRASES];
        struct vt_query q;
        size_t n_ph;

        vt_query_parse(hostile[i], strlen(hostile[i]), &q);
        for (int mode = 0; mode < 4; mode++) {
            char *t = store_pg_tsquery(&q, mode & 2, mode & 1 ? alts : NULL, ph, STORE_MAX_PHRASES,
                                       &n_ph);

            if (!t)
                continue;
            CHECK(store_pg_tsquery_valid(t));
            db_bind_text(st, 1, t);
            if (db_step(st) != DB_ROW)
                fprintf(stderr, "  the server refused %s: %s\n", t, vt_store_errmsg(pg));
            else
                CHECK(db_col_int64(st, 0) > 0);
            db_reset(st);
            free(t);
        }
        {
            struct vt_store_search r = {&q, VT_MATCH_ALL, alts, "", "", 1, 10, 0, 0};
            struct vt_store_search rp = {&q, VT_MATCH_ALL, NULL, "", "", 1, 10, 0, 1};
            struct vt_store_hit *h = NULL;
            size_t n = 0;
            int partial;

            CHECK_INT(vt_store_search(pg, &r, &h, &n, &partial), 0);
            free(h);
            h = NULL;
            CHECK_INT(vt_store_search(pg, &rp, &h, &n, &partial), 0);
            free(h);
        }
        vt_query_release(&q);
    }
    store_finish(pg, st);
}

/* Screen words that are not ASCII: their one-byte deletions are not UTF-8, which
 * PostgreSQL's text refuses; the same words are found one edit away on both. */
static void same_fuzzy_beyond_ascii(struct vt_store *sq, struct vt_store *pg)
{
    static const char text[] =
        "caf\xc3\xa9 na\xc3\xafve r\xc3\xa9sum\xc3\xa9 \xe2\x82\xac\xe2\x82\xac";
    static const char *const words[] = {
        "caf\xc3\xa8",      "cafe",   "naive", "r\xc3\xa9sume", "\xe2\x82\xac\xe2\x82\xac",
        "\xff\xfe\xfd\xfc", "caf\xc3"};

    for (int k = 0; k < 2; k++) {
        struct vt_store *s = k ? pg : sq;
        struct store_keyrows fc = {s, NULL, 0, 0, 0};

        CHECK_INT(vt_store_begin(s), 0);
        vt_tokenize(text, strlen(text), store_add_fuzzy, &fc);
        CHECK_INT(store_keyrows_write(&fc, "fuzzy", "del, term", "index fuzzy keys"), 0);
        CHECK_INT(vt_store_commit(s), 0);
    }
    for (size_t i = 0; i < VT_ARRAY_LEN(words); i++)
        same_similar(sq, pg, words[i], VT_SIMILAR_EDIT);
}

VT_TEST_PG_ONLY(store_pg_search_same_as_sqlite)
{
    char dir[] = "/tmp/vt-unit-pgsearch.XXXXXX", err[256], *sdb, *pdb;
    struct vt_store *sq = NULL, *pg = NULL;
    int hits;

    CHECK(mkdtemp(dir) != NULL);
    sdb = vt_xasprintf("%s/library.db", dir);
    pdb = vt_test_db(dir);
    CHECK_INT(vt_store_open(sdb, &sq, err, sizeof(err)), 0);
    CHECK(pdb && vt_store_open(pdb, &pg, err, sizeof(err)) == 0);
    if (!sq || !pg) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    for (int k = 0; k < 2; k++) {
        struct vt_store *s = k ? pg : sq;

        fill(s, "alpha", 0, 7, "A talk about the quick fox");
        fill(s, "beta", 7, VT_ARRAY_LEN(texts), "Lazy dogs talk");
    }
    /* without docs_stats the sizes are counted; with it, read: the same answers */
    hits = same_everything(sq, pg);
    CHECK(hits > 500);
    CHECK_INT(vt_store_begin(pg), 0);
    CHECK_INT(store_pg_search_schema(pg), 0);
    CHECK_INT(vt_store_commit(pg), 0);
    check_stats(pg);
    CHECK_INT(same_everything(sq, pg), hits);
    /* the triggers follow rows deleted and added */
    for (int k = 0; k < 2; k++) {
        struct vt_store *s = k ? pg : sq;

        CHECK_INT(vt_store_begin(s), 0);
        CHECK_INT(vt_store_video_delete(s, "beta"), 0);
        CHECK_INT(vt_store_commit(s), 0);
        fill(s, "beta", 7, VT_ARRAY_LEN(texts), "Lazy dogs talk");
    }
    check_stats(pg);
    CHECK_INT(same_everything(sq, pg), hits);
    server_parses(pg);
    same_fuzzy_beyond_ascii(sq, pg);
    vt_store_close(sq);
    vt_store_close(pg);
    vt_test_db_free(pdb);
    free(sdb);
    vt_rm_rf(dir);
}
