/* Unit tests of the query language (lib/text/query.c): parsing, Metaphone, and its FTS5 form
 * (lib/store/sqlite/store_fts.c). */
#include "harness.h"
#include "store/store_int.h" /* store_fts_match: the SQLite store writes queries as FTS5 */
#include "text/query.h"

#include <stdlib.h>

static char *fts(const char *s, int mode)
{
    struct vt_query q;
    char *r;

    vt_query_parse(s, strlen(s), &q);
    r = store_fts_match(&q, mode, NULL);
    vt_query_release(&q);
    return r;
}

VT_TEST(query_plain_words)
{
    char *r = fts("Hello  World", 0);

    CHECK_STR(r, "text : (\"hello\" AND \"world\")");
    free(r);
    r = fts("hello world", 1);
    CHECK_STR(r, "text : \"hello world\"");
    free(r);
}

VT_TEST(query_operators)
{
    struct vt_query q;
    char *r;

    r = fts("\"exact phrase\" -not prefix* -\"bad thing\"", 0);
    CHECK_STR(r, "text : (\"exact phrase\" AND \"prefix\" *) NOT text : \"not\" NOT text : \"bad "
                 "thing\"");
    free(r);
    vt_query_parse("talk video:abc_-1 source:screen", 31, &q);
    CHECK_STR(q.video, "abc_-1");
    CHECK_STR(q.source, "screen");
    CHECK_INT(vt_query_positive(&q), 1);
    vt_query_release(&q);
    /* FTS5 keywords are words like any other */
    r = fts("NEAR AND NOT OR", 0);
    CHECK_STR(r, "text : (\"near\" AND \"and\" AND \"not\" AND \"or\")");
    free(r);
}

VT_TEST(query_nothing_searchable)
{
    const char *nothing[] = {
        "",         "   ",     "\"\"",          "\"",    "-", "-x", "***", "()", "^:", "-\"a b\"",
        "\" \" \"", "video:x", "source:speech", "-- - -"};

    for (size_t i = 0; i < sizeof(nothing) / sizeof(nothing[0]); i++) {
        char *r = fts(nothing[i], 0);

        if (r)
            fprintf(stderr, "  '%s' -> '%s'\n", nothing[i], r);
        CHECK(r == NULL);
        free(r);
    }
}

VT_TEST(query_hostile_bytes)
{
    char big[10000];
    struct vt_query q;
    char *r;

    memset(big, 'a', sizeof(big));
    big[5000] = ' ';
    vt_query_parse(big, sizeof(big), &q);
    r = store_fts_match(&q, 0, NULL);
    CHECK(r != NULL);
    free(r);
    vt_query_release(&q);
    vt_query_parse("a\0b \"c\0d\"", 10, &q);
    r = store_fts_match(&q, 0, NULL);
    CHECK(r != NULL && !strchr(r, '\0' + 1));
    free(r);
    vt_query_release(&q);
    /* many terms are capped */
    {
        char many[2000] = "";

        for (int i = 0; i < 100; i++)
            strcat(many, "w ");
        vt_query_parse(many, strlen(many), &q);
        CHECK_INT(q.n_terms, VT_QUERY_MAX_TERMS);
        vt_query_release(&q);
    }
}

VT_TEST(query_alternatives)
{
    struct vt_query q;
    char *alt0[] = {"there", "thier", NULL};
    char **alts[] = {alt0, NULL};
    char *r;

    vt_query_parse("their house", 11, &q);
    r = store_fts_match(&q, 0, alts);
    CHECK_STR(r, "text : ((\"their\" OR \"there\" OR \"thier\") AND \"house\")");
    free(r);
    vt_query_release(&q);
}

VT_TEST(query_metaphone)
{
    char a[16], b[16];

    vt_metaphone("their", a, sizeof(a));
    vt_metaphone("there", b, sizeof(b));
    CHECK_STR(a, b);
    vt_metaphone("knight", a, sizeof(a));
    vt_metaphone("night", b, sizeof(b));
    CHECK_STR(a, b);
    vt_metaphone("phone", a, sizeof(a));
    vt_metaphone("fone", b, sizeof(b));
    CHECK_STR(a, b);
    vt_metaphone("thumb", a, sizeof(a));
    CHECK_STR(a, "0m");
    vt_metaphone("1234", a, sizeof(a));
    CHECK_STR(a, "");
    vt_metaphone("river", a, sizeof(a));
    vt_metaphone("mountain", b, sizeof(b));
    CHECK(strcmp(a, b) != 0);
}

static void count_tok(void *user, const char *tok, size_t n)
{
    (*(int *)user)++;
    (void)tok;
    (void)n;
}

VT_TEST(query_tokenize)
{
    int n = 0;

    vt_tokenize("Don't stop: 3.14, café!", 23, count_tok, &n);
    CHECK_INT(n, 6); /* don t stop 3 14 café */
}

VT_TEST(query_all_but_one)
{
    char *r = fts("a b c -d", 2);

    CHECK_STR(r, "text : ((\"b\" AND \"c\") OR (\"a\" AND \"c\") OR (\"a\" AND \"b\")) NOT "
                 "text : \"d\"");
    free(r);
    r = fts("a b", 2);
    CHECK(r == NULL);
    free(r);
    r = fts("a b c*", 2);
    CHECK(r == NULL);
    free(r);
}
