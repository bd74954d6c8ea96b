/*
 * libFuzzer target for the PostgreSQL form of a search (store_search_pg.c): any bytes
 * are parsed as a query, with alternatives cut from the same bytes (hostile words:
 * quotes, backslashes, bytes that are not UTF-8), and written as tsquery text for all
 * terms and for all but one. The text must follow PostgreSQL's tsquery syntax
 * (store_pg_tsquery_valid, checked against the server by the VT_TEST_PG unit test), and
 * every operand must be one of the query's words or alternatives, unchanged: nothing
 * typed becomes an operator. The ranking of the bytes as a row's text must be finite.
 */
#include "base/util.h"
#include "store/store_int.h"
#include "text/query.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_word(const char *w, size_t n, const struct vt_query *q, char **const *alts)
{
    for (size_t i = 0; i < q->n_terms; i++)
        for (size_t k = 0; k < q->terms[i].n_words; k++)
            if (strlen(q->terms[i].words[k]) == n && !memcmp(q->terms[i].words[k], w, n))
                return 1;
    for (size_t i = 0; i < VT_QUERY_MAX_TERMS; i++)
        for (size_t k = 0; alts[i] && alts[i][k]; k++)
            if (strlen(alts[i][k]) == n && !memcmp(alts[i][k], w, n))
                return 1;
    return 0;
}

/* Every quoted operand of t, unescaped, is a word of q or of alts. */
static void check_operands(const char *t, const struct vt_query *q, char **const *alts)
{
    struct vt_sb w = {0};

    for (const char *p = t; *p; p++) {
        if (*p != '\'')
            continue;
        w.len = 0;
        vt_sb_add(&w, "", 0);
        for (p++; !(*p == '\'' && p[1] != '\''); p++) {
            if (*p == '\\' || *p == '\'')
                p++;
            vt_sb_addc(&w, *p);
        }
        if (!is_word(w.buf, w.len, q, alts)) {
            fprintf(stderr, "operand not typed: %s in %s\n", w.buf, t);
            abort();
        }
    }
    vt_sb_release(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const uint8_t *cut = memchr(data, '\n', size);
    size_t qn = cut ? (size_t)(cut - data) : size;
    char *words[8][4] = {{0}};
    char **alts[VT_QUERY_MAX_TERMS] = {0};
    struct store_phrase ph[STORE_MAX_PHRASES];
    double df[STORE_MAX_PHRASES];
    char *text = vt_xmalloc(size + 1);
    struct vt_query q;

    /* the bytes after the first newline: alternatives, up to 3 per term, space-separated */
    for (size_t i = qn + 1, t = 0, k = 0; cut && i < size && t < 8;) {
        size_t j = i;

        while (j < size && data[j] != ' ' && data[j] != '\n' && data[j] != '\0')
            j++;
        if (j > i && k < 3) {
            words[t][k] = vt_xmalloc(j - i + 1);
            memcpy(words[t][k], s + i, j - i);
            words[t][k++][j - i] = '\0';
        }
        if (j < size && data[j] == '\n') {
            t++;
            k = 0;
        }
        i = j + 1;
    }
    for (size_t t = 0; t < 8; t++)
        alts[t] = words[t][0] ? words[t] : NULL;
    memcpy(text, data, size);
    text[size] = '\0';
    vt_query_parse(s, qn, &q);
    for (int mode = 0; mode < 4; mode++) {
        char **const *a = mode & 1 ? alts : NULL;
        size_t n_ph = 0;
        char *t = store_pg_tsquery(&q, mode & 2, a, ph, STORE_MAX_PHRASES, &n_ph);
        double score;

        if (!t)
            continue;
        if (!store_pg_tsquery_valid(t)) {
            fprintf(stderr, "not a tsquery: %s\n", t);
            abort();
        }
        check_operands(t, &q, alts);
        for (size_t i = 0; i < n_ph; i++)
            df[i] = (double)(i % 5) - 1;
        score = store_pg_score(text, ph, n_ph, df, n_ph, (int)(size % 4), 100, 700);
        if (!(score >= 0 && score < 1e12))
            abort();
        free(t);
    }
    vt_query_release(&q);
    for (size_t t = 0; t < 8; t++)
        for (size_t k = 0; k < 4; k++)
            free(words[t][k]);
    free(text);
    return 0;
}
