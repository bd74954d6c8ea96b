/*
 * The SQLite store's full-text query text: a parsed query (query.h) written as an
 * FTS5 MATCH expression. User input never reaches FTS5 as syntax: only the query's
 * tokens (letters and digits), each inside an FTS5 string literal, are put together
 * with operators written here. Nothing outside the store sees this syntax.
 */
#include "text/query.h"
#include "store/store_int.h"
#include "base/util.h"

#include <stdlib.h>

/* An FTS5 string literal of the words; tokens hold only letters and digits, but
 * quotes are doubled all the same, so the literal can never be broken out of. */
static void add_literal(struct vt_sb *sb, char *const *words, size_t n, int prefix)
{
    vt_sb_addc(sb, '"');
    for (size_t i = 0; i < n; i++) {
        if (i)
            vt_sb_addc(sb, ' ');
        for (const char *p = words[i]; *p; p++) {
            if (*p == '"')
                vt_sb_addc(sb, '"');
            vt_sb_addc(sb, *p);
        }
    }
    vt_sb_addc(sb, '"');
    if (prefix)
        vt_sb_adds(sb, " *");
}

/* The term's literal, or (literal OR alternative ...) when it has alternatives. */
static void add_with_alts(struct vt_sb *sb, const struct vt_qterm *t, char *const *alt)
{
    if (!alt || !alt[0]) {
        add_literal(sb, t->words, t->n_words, t->prefix);
        return;
    }
    vt_sb_addc(sb, '(');
    add_literal(sb, t->words, t->n_words, t->prefix);
    for (size_t k = 0; alt[k]; k++) {
        vt_sb_adds(sb, " OR ");
        add_literal(sb, &alt[k], 1, 0);
    }
    vt_sb_addc(sb, ')');
}

char *store_fts_match(const struct vt_query *q, int mode, char **const *alts)
{
    struct vt_sb sb = {0};
    size_t pos = 0, n_plain = 0;

    if (!vt_query_positive(q))
        return NULL;
    if (mode == 2) {
        const struct vt_qterm *plain[VT_QUERY_MAX_TERMS];
        size_t np = vt_query_plain_words(q, plain);

        if (np < 3)
            return NULL;
        vt_sb_adds(&sb, "text : (");
        for (size_t skip = 0; skip < np; skip++) {
            size_t k = 0;

            vt_sb_adds(&sb, skip ? " OR (" : "(");
            for (size_t i = 0; i < np; i++) {
                if (i == skip)
                    continue;
                if (k++)
                    vt_sb_adds(&sb, " AND ");
                add_with_alts(&sb, plain[i], alts ? alts[i] : NULL);
            }
            vt_sb_addc(&sb, ')');
        }
        vt_sb_addc(&sb, ')');
    } else if (mode == 1) {
        /* the plain single words, in order, as one phrase */
        const struct vt_qterm *plain[VT_QUERY_MAX_TERMS];
        char *words[VT_QUERY_MAX_TERMS];

        n_plain = vt_query_plain_words(q, plain);
        for (size_t i = 0; i < n_plain; i++)
            words[i] = plain[i]->words[0];
        if (n_plain < 2)
            return NULL;
        vt_sb_adds(&sb, "text : ");
        add_literal(&sb, words, n_plain, 0);
    } else {
        vt_sb_adds(&sb, "text : (");
        for (size_t i = 0; i < q->n_terms; i++) {
            const struct vt_qterm *t = &q->terms[i];
            char **alt = alts ? alts[pos] : NULL;

            if (t->exclude)
                continue;
            if (pos++)
                vt_sb_adds(&sb, " AND ");
            add_with_alts(&sb, t, alt);
        }
        vt_sb_addc(&sb, ')');
    }
    for (size_t i = 0; i < q->n_terms; i++) {
        const struct vt_qterm *t = &q->terms[i];

        if (!t->exclude)
            continue;
        vt_sb_adds(&sb, " NOT text : ");
        add_literal(&sb, t->words, t->n_words, t->prefix);
    }
    return vt_sb_detach(&sb);
}
