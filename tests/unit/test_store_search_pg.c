/*
 * Unit tests of lib/store_search_pg.c that need no server: the tsquery written for a
 * parsed query (quoting, hostile input, words no index holds, all-but-one groups),
 * the tsquery syntax check the fuzz target uses, and the ranking computed in C from a
 * row's text, which must give SQLite's vtrank() scores to the last bit on the same rows.
 */
#include "harness.h"
#include "query.h"
#include "store_int.h"
#include "util.h"

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
        &q, mode == 2 ? VT_MATCH_ALL_BUT_ONE : VT_MATCH_ALL, alts, "", "", exact_phrase, 100, 0};
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
