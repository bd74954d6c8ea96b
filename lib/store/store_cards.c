/*
 * The library's listing as pages of cards (store.h, vt_store_cards): what a list of
 * videos shows of each one (title, channel, duration, states, date added, how many of its
 * stages are finished, its poster frame), filtered, sorted and cut to one page in a single
 * query, so a page of a library of thousands of videos reads that page's rows and no
 * video's outputs. Also the kept frame that stands for a frame (vt_store_frame_kept), and
 * the poster a user chose for a card (vt_store_poster_set / _get).
 */
#include "base/util.h"
#include "store/store_int.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ASCII case folding on PostgreSQL, as SQLite's lower(), instr() and NOCASE do (its
 * lower() would fold by the database's locale) */
#define PG_FOLD(col)                                                                               \
    "translate(" col ", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"

/* ORDER BY per sort (vt_store_cards_query.sort); seq last, so the order is total. */
static const char *order_by(const struct vt_store *s, enum vt_store_card_sort sort)
{
    switch (sort) {
    case VT_CARDS_NEWEST:
        return " ORDER BY v.seq DESC";
    case VT_CARDS_TITLE:
        return s->conn.pg ? " ORDER BY " PG_FOLD("coalesce(v.title, '')") " COLLATE \"C\", v.seq"
                          : " ORDER BY coalesce(v.title, '') COLLATE NOCASE, v.seq";
    case VT_CARDS_DURATION:
        return " ORDER BY v.duration_s, v.seq";
    case VT_CARDS_ADDED:
    default:
        return " ORDER BY v.seq";
    }
}

/* The WHERE clause; its parameters are ?1 state, ?2 text (a LIKE pattern, filter_text's,
 * or NULL), ?3 reuse, ?6 one video's id (or NULL). */
#define CARDS_WHERE                                                                                \
    " FROM videos v WHERE (?1 IS NULL OR v.index_state = ?1)"                                      \
    " AND (?2 IS NULL OR lower(coalesce(v.title, '')) LIKE ?2 ESCAPE '\\'"                         \
    "  OR lower(coalesce(v.channel, '')) LIKE ?2 ESCAPE '\\')"                                     \
    " AND (?3 = 0 OR EXISTS (SELECT 1 FROM reuse r WHERE r.video_id = v.id))"                      \
    " AND (?6 IS NULL OR v.id = ?6)"
/* The same on PostgreSQL: the parameters that may be NULL say their type; LIKE compares
 * bytes (COLLATE "C"), as SQLite's does once both sides are folded */
#define CARDS_WHERE_PG                                                                             \
    " FROM videos v WHERE (CAST(?1 AS text) IS NULL OR v.index_state = ?1)"                        \
    " AND (CAST(?2 AS text) IS NULL"                                                               \
    "  OR " PG_FOLD(                                                                               \
        "coalesce(v.title, '')") " COLLATE \"C\" LIKE ?2 ESCAPE '\\'"                              \
                                 "  OR " PG_FOLD(                                                  \
                                     "coalesce(v.channel, '')") " COLLATE \"C\" LIKE ?2 ESCAPE "   \
                                                                "'\\')"                            \
                                                                " AND (?3 = 0 OR EXISTS (SELECT "  \
                                                                "1 FROM reuse r WHERE r.video_id " \
                                                                "= v.id))"                         \
                                                                " AND (CAST(?6 AS text) IS NULL "  \
                                                                "OR v.id = ?6)"

/*
 * The poster of a card: the frame a user chose (while it is still a kept frame with an
 * image: a redo of keyframe may renumber them), else a representative one rather than the
 * first (often a grey or a test-pattern frame): a frame with text (a slide with its title)
 * before one without, then the longest shot's, then the sharpest, then the earliest. Both
 * backends: EXISTS sorts true (1) before false (0) with DESC on each.
 */
#define CARDS_POSTER                                                                               \
    "coalesce((SELECT c.idx FROM frames c WHERE c.video_id = v.id AND c.idx = v.poster_frame"      \
    "  AND c.path IS NOT NULL AND c.duplicate_of IS NULL),"                                        \
    " (SELECT f.idx FROM frames f LEFT JOIN shots sh ON sh.video_id = f.video_id"                  \
    "  AND sh.idx = f.shot WHERE f.video_id = v.id AND f.path IS NOT NULL"                         \
    "  AND f.duplicate_of IS NULL ORDER BY EXISTS (SELECT 1 FROM ocr_lines l"                      \
    "  WHERE l.video_id = f.video_id AND l.frame_idx = f.idx AND l.noise = 0) DESC,"               \
    "  coalesce(sh.end_s - sh.start_s, 0) DESC, f.sharpness DESC, f.idx LIMIT 1))"

struct cards_ctx {
    int (*fn)(void *user, const struct vt_store_card *c);
    void *user;
};

static int card_row(void *user, struct db_stmt *st)
{
    struct cards_ctx *c = user;
    struct vt_store_card k;

    memset(&k, 0, sizeof(k));
    snprintf(k.id, sizeof(k.id), "%s", db_col_text(st, 0));
    k.title = db_col_text(st, 1);
    k.channel = db_col_text(st, 2);
    k.duration_s = db_col_double(st, 3);
    if (vt_index_state_parse(db_col_text(st, 4), &k.index_state))
        k.index_state = VT_INDEX_QUEUED;
    if (vt_data_status_parse(db_col_text(st, 5), &k.data_status))
        k.data_status = VT_DATA_MISSING;
    k.added_at = db_col_double(st, 6);
    k.stages_total = db_col_int(st, 7);
    k.stages_finished = db_col_int(st, 8);
    k.poster_frame = db_col_null(st, 9) ? -1 : db_col_int(st, 9);
    k.running = db_col_text(st, 10);
    return c->fn(c->user, &k);
}

/* Whether the UTF-8 character at p separates words as search's tokenizer has it: ASCII
 * other than letters and digits, or general punctuation (U+2010 to U+2027: dashes,
 * quotes, bullets, ellipsis); *len gets its length. */
static int is_separator(const unsigned char *p, size_t *len)
{
    *len = 1;
    if (*p < 0x80)
        return !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'));
    if (p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0x90 && p[2] <= 0xa7) {
        *len = 3;
        return 1;
    }
    return 0;
}

/*
 * The filter as a LIKE pattern: its words, ASCII lowercased, in order, with anything
 * between them, so that `held out` finds "Held-out" and "held, out" (punctuation and
 * hyphens separate words, as in search). Text without a word is matched as it is
 * (lowercased, LIKE's wildcards escaped). NULL: no filter.
 */
static char *filter_text(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    struct vt_sb b = {0};
    int words = 0, in_word = 0;
    size_t len;

    if (!text || !*text)
        return NULL;
    vt_sb_addc(&b, '%');
    for (; *p; p += len) {
        if (is_separator(p, &len)) {
            in_word = 0;
            continue;
        }
        if (!in_word && words++)
            vt_sb_addc(&b, '%');
        in_word = 1;
        for (size_t i = 0; i < len && p[i]; i++)
            vt_sb_addc(&b, (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] - 'A' + 'a' : p[i]));
    }
    if (!words) {
        b.len = 1;
        for (p = (const unsigned char *)text; *p; p++) {
            if (*p == '%' || *p == '_' || *p == '\\')
                vt_sb_addc(&b, '\\');
            vt_sb_addc(&b, (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p));
        }
    }
    vt_sb_addc(&b, '%');
    return b.buf;
}

int vt_store_cards(struct vt_store *s, const struct vt_store_cards_query *q,
                   int (*fn)(void *user, const struct vt_store_card *c), void *user,
                   long long *total)
{
    const char *state = q->state ? vt_index_state_name(*q->state) : NULL;
    char *text = filter_text(q->text);
    struct cards_ctx c = {fn, user};
    struct vt_sb sql = {0};
    struct db_stmt *st;
    int rc;

    *total = 0;
    rc = store_prepare(
        s, s->conn.pg ? "SELECT count(*)" CARDS_WHERE_PG : "SELECT count(*)" CARDS_WHERE, &st);
    if (rc)
        goto out;
    store_bind_text(st, 1, state);
    store_bind_text(st, 2, text);
    db_bind_int(st, 3, q->reuse_only);
    store_bind_text(st, 6, q->id);
    rc = db_step(st);
    if (rc == DB_ROW)
        *total = db_col_int64(st, 0);
    rc = rc == DB_ROW ? 0 : store_fail(s, "count videos");
    store_finish(s, st);
    if (rc || q->limit == 0)
        goto out;
    /* the page is chosen first (filter, sort, cut: the videos table alone), and only its
     * rows are joined to their stages and frames: a page late in a long listing costs
     * what the first one does */
    vt_sb_adds(&sql, "SELECT v.id, v.title, v.channel, v.duration_s, v.index_state, v.data_status,"
                     " v.created_at,"
                     " (SELECT count(*) FROM stages g WHERE g.video_id = v.id),"
                     " (SELECT count(*) FROM stages g WHERE g.video_id = v.id"
                     "  AND g.state IN (" VT_SQL_STATES_SETTLED ")), " CARDS_POSTER ","
                     " (SELECT g.name FROM stages g WHERE g.video_id = v.id AND g.state = ");
    vt_sb_adds(&sql, VT_SQL_STATE(running) " ORDER BY g.ord LIMIT 1)"
                                           " FROM (SELECT v.id, v.title, v.channel, v.duration_s,"
                                           " v.index_state, v.data_status, v.created_at, v.seq,"
                                           " v.poster_frame");
    vt_sb_adds(&sql, s->conn.pg ? CARDS_WHERE_PG : CARDS_WHERE);
    vt_sb_adds(&sql, order_by(s, q->sort));
    /* no limit: SQLite's is -1, PostgreSQL's NULL */
    vt_sb_adds(&sql, s->conn.pg ? " LIMIT nullif(?4, -1) OFFSET ?5) v" : " LIMIT ?4 OFFSET ?5) v");
    vt_sb_adds(&sql, order_by(s, q->sort));
    rc = store_rows(s, sql.buf, "list videos", card_row, &c, "ssiIIs", state, text, q->reuse_only,
                    (int64_t)(q->limit < 0 ? -1 : q->limit),
                    (int64_t)(q->offset > 0 ? q->offset : 0), q->id);
out:
    vt_sb_release(&sql);
    free(text);
    return rc;
}

int vt_store_frame_kept(struct vt_store *s, const char *id, int idx, int *kept)
{
    struct db_stmt *st;
    int rc = store_prepare(s,
                           "SELECT g.idx FROM frames f JOIN frames g ON g.video_id = f.video_id"
                           " AND g.idx = coalesce(f.duplicate_of, f.idx)"
                           " WHERE f.video_id = ?1 AND f.idx = ?2 AND g.path IS NOT NULL",
                           &st);

    *kept = -1;
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    db_bind_int(st, 2, idx);
    rc = db_step(st);
    if (rc == DB_ROW)
        *kept = db_col_int(st, 0);
    rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, "find a frame");
    store_finish(s, st);
    return rc;
}

int vt_store_poster_set(struct vt_store *s, const char *id, int frame, int *ok)
{
    struct db_stmt *st;
    int rc;

    *ok = 0;
    rc = store_prepare(s,
                       "UPDATE videos SET poster_frame = CASE WHEN ?2 < 0 THEN NULL ELSE ?2 END"
                       " WHERE id = ?1 AND (?2 < 0 OR EXISTS (SELECT 1 FROM frames f"
                       " WHERE f.video_id = ?1 AND f.idx = ?2 AND f.path IS NOT NULL"
                       " AND f.duplicate_of IS NULL))",
                       &st);
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    db_bind_int(st, 2, frame);
    rc = store_step_done(s, st, "set the poster");
    if (!rc)
        *ok = s->conn.ops->changes(&s->conn) > 0;
    return rc;
}

int vt_store_poster_get(struct vt_store *s, const char *id, int *frame)
{
    struct db_stmt *st;
    int rc = store_prepare(s, "SELECT poster_frame FROM videos WHERE id = ?1", &st);

    *frame = -1;
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    rc = db_step(st);
    if (rc == DB_ROW && !db_col_null(st, 0))
        *frame = db_col_int(st, 0);
    rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, "read the poster");
    store_finish(s, st);
    return rc;
}
