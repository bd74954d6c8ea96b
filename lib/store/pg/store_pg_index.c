/*
 * The write side of the search index on PostgreSQL: each `docs` row carries a tsvector
 * of its text cut by vidtheque's own tokenizer (vt_tokenize, the one queries are cut
 * by), so both backends index the same words; what SQLite computes inside one
 * INSERT ... SELECT (a frame's lines joined, a video's titles) is read here first and
 * inserted row by row with its tsvector (store_pg_docs.c). Written against db.h alone (no libpq
 * call), so the shared row code may call it in any program, including the front binary.
 */
#include "base/util.h"
#include "store/store_int.h"
#include "text/query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* store_rows callback: one index row from (ref, start_s, end_s, text) */
struct doc_rows {
    struct vt_store *s;
    struct db_stmt *ins;
    const char *id, *meta;
    int rc;
};

static int doc_row(void *user, struct db_stmt *st)
{
    struct doc_rows *d = user;
    const char *text = db_col_text(st, 3);

    d->rc = store_insert_doc(d->s, d->ins, d->id, db_col_int(st, 0), db_col_double(st, 1),
                             db_col_double(st, 2), text ? text : "", d->meta);
    return d->rc;
}

/* The rows of select (parameter ?1: the video) indexed as source. */
static int index_rows(struct vt_store *s, const char *id, const char *source, const char *select,
                      const char *what)
{
    char *meta = store_meta_tokens(source, id);
    struct doc_rows d = {s, NULL, id, meta, 0};
    int rc = store_delete_docs(s, id, source);

    if (!rc)
        rc = store_prepare(s, store_pg_doc_insert_sql(source), &d.ins);
    /* the rows come back whole before the first insert runs: no cursor stays open */
    if (!rc)
        rc = store_rows(s, select, what, doc_row, &d, "s", id);
    if (!rc)
        rc = d.rc;
    store_finish(s, d.ins);
    free(meta);
    return rc;
}

int store_pg_screen_docs_refresh(struct vt_store *s, const char *id)
{
    return index_rows(
        s, id, "screen",
        "SELECT f.idx, " STORE_SCREEN_DOC_SPAN ","
        " (SELECT string_agg(l.text, chr(10) ORDER BY l.line_no) FROM ocr_lines l"
        "  WHERE l.video_id = f.video_id AND l.frame_idx = coalesce(f.duplicate_of, f.idx)"
        "  AND l.noise = 0)"
        " FROM frames f JOIN shots sh ON sh.video_id = f.video_id AND sh.idx = f.shot"
        " WHERE f.video_id = ?1 AND EXISTS (SELECT 1 FROM ocr_lines l"
        "  WHERE l.video_id = f.video_id AND l.frame_idx = coalesce(f.duplicate_of, f.idx)"
        "  AND l.noise = 0) ORDER BY f.idx",
        "index frame text");
}

int store_pg_title_docs_refresh(struct vt_store *s, const char *id)
{
    return index_rows(
        s, id, "title",
        "SELECT -1, 0, duration_s, title FROM videos WHERE id = ?1 AND title IS NOT NULL"
        " UNION ALL"
        " SELECT idx, start_s, end_s, title FROM chapters"
        "  WHERE video_id = ?1 AND title IS NOT NULL ORDER BY 1",
        "index titles");
}

/*
 * Before video id goes: the phonetic and fuzzy keys of words that no other video's
 * index rows hold. Only the video's own words are looked at (each a GIN lookup for
 * another row holding it), where SQLite compares the whole table with FTS5's
 * vocabulary. A lexeme becomes a tsquery by quoting it as store_pg_tsv does.
 */
#define PG_ONLY_HERE(table)                                                                        \
    "DELETE FROM " table " t USING (SELECT DISTINCT w.lexeme FROM docs d, unnest(d.tsv) w"         \
    "  WHERE d.video_id = ?1) g"                                                                   \
    " WHERE t.term = g.lexeme AND NOT EXISTS (SELECT 1 FROM docs o WHERE o.video_id <> ?1"         \
    "  AND o.tsv @@ CAST(chr(39) || replace(replace(g.lexeme, chr(92), chr(92) || chr(92)),"       \
    "   chr(39), chr(39) || chr(39)) || chr(39) AS tsquery))"

int store_pg_forget_words(struct vt_store *s, const char *id)
{
    static const char *const sql[] = {PG_ONLY_HERE("phonetic"), PG_ONLY_HERE("fuzzy")};
    int rc = 0;

    for (size_t i = 0; i < VT_ARRAY_LEN(sql) && !rc; i++) {
        struct db_stmt *st;

        rc = store_prepare(s, sql[i], &st);
        if (rc)
            break;
        store_bind_text(st, 1, id);
        rc = store_step_done(s, st, "forget the removed video's words");
    }
    return rc;
}

/*
 * Index upkeep on PostgreSQL: new rows wait in the GIN index's pending list (fastupdate)
 * until autovacuum or the list's size limit moves them into the index proper, so a step
 * needs nothing; a full pass moves them now and refreshes the planner's statistics.
 */
int store_pg_maintain(struct vt_store *s, enum vt_maintain how)
{
    if (how != VT_MAINTAIN_FULL)
        return 0;
    return store_exec(s,
                      "SELECT gin_clean_pending_list(CAST('docs_tsv' AS regclass)); ANALYZE docs;"
                      "SELECT gin_clean_pending_list(CAST('pairs_tsv' AS regclass)); ANALYZE pairs",
                      "merge the search index");
}
