/*
 * What an index row of PostgreSQL's `docs` is written with: its tsvector, cut by
 * vidtheque's own tokenizer (vt_tokenize, the one queries are cut by) so both backends
 * index the same words, and the INSERT that carries it. Pure functions of their
 * arguments, called by the shared row writers (store_search.c's store_insert_doc,
 * store_rows.c) and by store_pg_index.c.
 */
#include "base/util.h"
#include "store/store_int.h"
#include "text/query.h"

#include <string.h>

#define TSV_MAX_POS 16383 /* the largest position a tsvector holds */

struct tsv_ctx {
    struct vt_sb sb;
    int pos;
};

static void tsv_token(void *user, const char *tok, size_t n)
{
    struct tsv_ctx *c = user;

    if (c->sb.len)
        vt_sb_addc(&c->sb, ' ');
    vt_sb_addc(&c->sb, '\'');
    for (size_t i = 0; i < n; i++) {
        if (tok[i] == '\'' || tok[i] == '\\')
            vt_sb_addc(&c->sb, tok[i] == '\'' ? '\'' : '\\');
        vt_sb_addc(&c->sb, tok[i]);
    }
    if (c->pos < TSV_MAX_POS)
        c->pos++;
    vt_sb_addf(&c->sb, "':%d", c->pos);
}

char *store_pg_tsv(const char *text)
{
    struct tsv_ctx c = {{0}, 0};

    if (text)
        vt_tokenize(text, strlen(text), tsv_token, &c);
    return vt_sb_detach(&c.sb);
}

/* The docs INSERT of source on PostgreSQL, in store_insert_doc()'s parameter order. */
#define PG_DOC_INSERT(source)                                                                      \
    "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta, tsv)"                    \
    " VALUES (?1, '" source "', ?2, ?3, ?4, ?5, ?6, CAST(?7 AS tsvector))"

const char *store_pg_doc_insert_sql(const char *source)
{
    if (!strcmp(source, "speech"))
        return PG_DOC_INSERT("speech");
    if (!strcmp(source, "screen"))
        return PG_DOC_INSERT("screen");
    return PG_DOC_INSERT("title");
}
