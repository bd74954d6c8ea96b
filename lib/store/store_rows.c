/*
 * The store's rows of a video's content (see store.h): chapters, shots, frames and
 * their OCR lines, transcript cues and words, chunks, and the range reads and counts
 * that a page of a video needs. Writing OCR lines or cues also writes their search
 * index rows and fuzzy/phonetic keys, through the helpers of store_search.c.
 */
#include "base/util.h"
#include "store/store_int.h"
#include "text/query.h"
#include "text/transcript.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- chapters ---- */

static int delete_where_video(struct vt_store *s, const char *table, const char *id)
{
    struct db_stmt *st;
    char sql[96];
    int rc;

    snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE video_id = ?", table);
    rc = store_prepare(s, sql, &st);
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    return store_step_done(s, st, "delete old rows");
}

int vt_store_chapters_replace(struct vt_store *s, const char *id, const struct vt_chapter *c,
                              size_t n, const char *source)
{
    struct db_stmt *st;
    int rc = delete_where_video(s, "chapters", id);

    if (rc)
        return rc;
    rc = store_prepare(s,
                       "INSERT INTO chapters (video_id, idx, start_s, end_s, title, source)"
                       " VALUES (?,?,?,?,?,?)",
                       &st);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        store_bind_text(st, 1, id);
        db_bind_int64(st, 2, (int64_t)i);
        db_bind_double(st, 3, c[i].start_s);
        db_bind_double(st, 4, c[i].end_s);
        store_bind_text(st, 5, c[i].title);
        store_bind_text(st, 6, source);
        if (db_step(st) != DB_DONE)
            rc = store_fail(s, "insert chapter");
        db_reset(st);
    }
    store_finish(s, st);
    return rc;
}

static void read_chapter(struct db_stmt *st, void *item)
{
    struct vt_store_chapter *c = item;

    c->start_s = db_col_double(st, 0);
    c->end_s = db_col_double(st, 1);
    c->title = store_col_dup(st, 2);
    c->source = store_col_dup(st, 3);
}

static void release_chapter(void *item)
{
    struct vt_store_chapter *c = item;

    free(c->title);
    free(c->source);
}

int vt_store_chapters(struct vt_store *s, const char *id, struct vt_store_chapter **out, size_t *n)
{
    return store_read_array(s,
                            "SELECT start_s, end_s, title, source FROM chapters WHERE video_id = ?"
                            " ORDER BY idx",
                            "read chapters", sizeof(**out), read_chapter, release_chapter,
                            (void **)out, n, "s", id);
}

void vt_store_chapters_free(struct vt_store_chapter *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        release_chapter(&c[i]);
    free(c);
}

/* ---- shots, frames, OCR ---- */

int vt_store_keyframes_clear(struct vt_store *s, const char *id)
{
    int rc = delete_where_video(s, "frames", id);

    if (!rc)
        rc = delete_where_video(s, "shots", id);
    return rc;
}

int vt_store_keyframes_replace(struct vt_store *s, const char *id, const struct vt_kf_result *r,
                               const char *frames_rel_dir)
{
    struct db_stmt *st = NULL;
    int rc = vt_store_keyframes_clear(s, id);

    if (rc)
        return rc;
    rc = store_prepare(s,
                       "INSERT INTO shots (video_id, idx, start_s, end_s, captured, kept,"
                       " transition, trans_start_s, trans_end_s) VALUES (?,?,?,?,?,?,?,?,?)",
                       &st);
    for (size_t i = 0; i < r->n_shots && !rc; i++) {
        const struct vt_kf_shot *x = &r->shots[i];

        store_bind_text(st, 1, id);
        db_bind_int64(st, 2, (int64_t)i);
        db_bind_double(st, 3, x->start_s);
        db_bind_double(st, 4, x->end_s);
        db_bind_int(st, 5, x->captured);
        db_bind_int(st, 6, x->kept);
        store_bind_text(st, 7, x->transition);
        if (x->transition) {
            db_bind_double(st, 8, x->trans_start_s);
            db_bind_double(st, 9, x->trans_end_s);
        } else {
            db_bind_null(st, 8);
            db_bind_null(st, 9);
        }
        if (db_step(st) != DB_DONE)
            rc = store_fail(s, "insert shot");
        db_reset(st);
    }
    store_finish(s, st);
    if (rc)
        return rc;
    rc = store_prepare(
        s,
        "INSERT INTO frames (video_id, idx, t_s, frame_no, shot, duplicate_of, sharpness,"
        " bytes, path, width, height, phash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        &st);
    for (size_t i = 0; i < r->n_frames && !rc; i++) {
        const struct vt_kf_frame *f = &r->frames[i];

        store_bind_text(st, 1, id);
        db_bind_int(st, 2, f->index);
        db_bind_double(st, 3, f->t_s);
        db_bind_int64(st, 4, f->frame_no);
        db_bind_int(st, 5, f->shot);
        if (f->duplicate_of >= 0)
            db_bind_int(st, 6, f->duplicate_of);
        else
            db_bind_null(st, 6);
        db_bind_double(st, 7, f->sharpness);
        db_bind_int64(st, 8, f->bytes);
        if (f->file[0]) {
            char *p = vt_xasprintf("%s/%s", frames_rel_dir, f->file);

            store_bind_text(st, 9, p);
            free(p);
        } else {
            db_bind_null(st, 9);
        }
        db_bind_int(st, 10, f->width);
        db_bind_int(st, 11, f->height);
        db_bind_int64(st, 12, (int64_t)f->phash);
        if (db_step(st) != DB_DONE)
            rc = store_fail(s, "insert frame");
        db_reset(st);
    }
    store_finish(s, st);
    return rc;
}

int vt_store_shots(struct vt_store *s, const char *id, struct vt_kf_shot **out, size_t *n)
{
    return vt_store_shots_range(s, id, 0, INT64_MAX, out, n);
}

static void read_shot(struct db_stmt *st, void *item)
{
    struct vt_kf_shot *v = item;

    v->start_s = db_col_double(st, 0);
    v->end_s = db_col_double(st, 1);
    v->captured = db_col_int(st, 2);
    v->kept = db_col_int(st, 3);
    v->transition = vt_kf_transition_name(db_col_text(st, 4));
    v->trans_start_s = db_col_double(st, 5);
    v->trans_end_s = db_col_double(st, 6);
}

int vt_store_shots_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                         struct vt_kf_shot **out, size_t *n)
{
    return store_read_array(s,
                            "SELECT start_s, end_s, captured, kept, transition, trans_start_s,"
                            " trans_end_s FROM shots WHERE video_id = ?"
                            " AND idx >= ? AND idx < ? ORDER BY idx",
                            "read shots", sizeof(**out), read_shot, NULL, (void **)out, n, "sII",
                            id, from, to);
}

int vt_store_frames(struct vt_store *s, const char *id, struct vt_store_frame **out, size_t *n)
{
    return vt_store_frames_range(s, id, 0, INT64_MAX, out, n);
}

static void read_frame(struct db_stmt *st, void *item)
{
    struct vt_store_frame *x = item;

    x->f.index = db_col_int(st, 0);
    x->f.t_s = db_col_double(st, 1);
    x->f.frame_no = db_col_int64(st, 2);
    x->f.shot = db_col_int(st, 3);
    x->f.duplicate_of = db_col_null(st, 4) ? -1 : db_col_int(st, 4);
    x->f.sharpness = db_col_double(st, 5);
    x->f.bytes = db_col_int64(st, 6);
    x->path = store_col_dup(st, 7);
    x->f.width = db_col_int(st, 8);
    x->f.height = db_col_int(st, 9);
    x->f.phash = (uint64_t)db_col_int64(st, 10);
}

/* OCR lines, in frame order, onto the frames read before (a.v, in index order). */
struct frame_lines {
    struct vt_store_frame *v;
    size_t len, fi, lcap;
};

static int read_frame_line(void *user, struct db_stmt *st)
{
    struct frame_lines *c = user;
    int idx = db_col_int(st, 0);
    struct vt_ocr_page *pg;
    struct vt_ocr_line *ln;

    while (c->fi < c->len && c->v[c->fi].f.index < idx) {
        c->fi++;
        c->lcap = 0;
    }
    if (c->fi == c->len || c->v[c->fi].f.index != idx)
        return 0; /* lines of a frame that no longer exists */
    pg = &c->v[c->fi].ocr;
    if (pg->n_lines == 0)
        c->lcap = 0;
    vt_grow((void **)&pg->lines, &c->lcap, pg->n_lines + 1, sizeof(*pg->lines));
    ln = &pg->lines[pg->n_lines++];
    ln->text = store_col_dup(st, 1);
    if (!ln->text)
        ln->text = vt_xstrdup("");
    ln->conf = db_col_double(st, 2);
    for (int k = 0; k < 4; k++)
        ln->box[k] = db_col_int(st, 3 + k);
    ln->noise = db_col_int(st, 7) != 0;
    return 0;
}

int vt_store_frames_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                          struct vt_store_frame **out, size_t *n)
{
    struct store_array a = STORE_ARRAY(struct vt_store_frame, read_frame);
    struct frame_lines lines = {0};
    int rc =
        store_rows(s,
                   "SELECT idx, t_s, frame_no, shot, duplicate_of, sharpness, bytes, path, width,"
                   " height, phash FROM frames WHERE video_id = ? AND idx >= ? AND idx < ?"
                   " ORDER BY idx",
                   "read frames", store_array_row, &a, "sII", id, from, to);

    *out = NULL;
    *n = 0;
    lines.v = a.v;
    lines.len = a.n;
    if (!rc)
        rc = store_rows(s,
                        "SELECT frame_idx, text, conf, x, y, w, h, noise FROM ocr_lines"
                        " WHERE video_id = ?"
                        " AND frame_idx >= ? AND frame_idx < ? ORDER BY frame_idx, line_no",
                        "read OCR lines", read_frame_line, &lines, "sII", id, from, to);
    if (rc) {
        vt_store_frames_free(a.v, a.n);
        return rc;
    }
    *out = a.v;
    *n = a.n;
    return 0;
}

void vt_store_frames_free(struct vt_store_frame *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].path);
        for (size_t k = 0; k < f[i].ocr.n_lines; k++)
            free(f[i].ocr.lines[k].text);
        free(f[i].ocr.lines);
    }
    free(f);
}

int vt_store_ocr_clear(struct vt_store *s, const char *id)
{
    int rc = store_delete_docs(s, id, "screen");

    return rc ? rc : delete_where_video(s, "ocr_lines", id);
}

int vt_store_ocr_lines_prune(struct vt_store *s, const char *id)
{
    struct db_stmt *st;
    int rc = store_prepare(s,
                           "DELETE FROM ocr_lines WHERE video_id = ?1 AND NOT EXISTS (SELECT 1"
                           " FROM frames f JOIN docs d ON d.video_id = f.video_id"
                           " AND d.source = 'screen' AND d.ref = f.idx"
                           " WHERE f.video_id = ?1 AND f.idx = ocr_lines.frame_idx"
                           " AND f.duplicate_of IS NULL AND f.t_s >= d.start_s"
                           " AND f.t_s <= d.end_s)",
                           &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    return store_step_done(s, st, "drop OCR lines of replaced frames");
}

int vt_store_screen_text(struct vt_store *s, const char *id, int ref, char **text)
{
    struct db_stmt *st;
    int rc = store_prepare(s,
                           "SELECT text FROM docs WHERE video_id = ?1 AND source = 'screen'"
                           " AND ref = ?2 ORDER BY id LIMIT 1",
                           &st);

    *text = NULL;
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    db_bind_int(st, 2, ref);
    rc = db_step(st);
    if (rc == DB_ROW)
        *text = store_col_dup(st, 0);
    rc = rc == DB_ROW ? 0 : rc == DB_DONE ? VT_ENOTFOUND : store_fail(s, "read a frame's text");
    store_finish(s, st);
    return rc;
}

int vt_store_ocr_replace(struct vt_store *s, const char *id, const int *frame_index,
                         const struct vt_ocr_page *pages, size_t n)
{
    struct db_stmt *st;
    struct store_keyrows fc = {s, NULL, 0, 0, 0};
    int rc = vt_store_ocr_clear(s, id);

    if (rc)
        return rc;
    rc =
        store_prepare(s,
                      "INSERT INTO ocr_lines (video_id, frame_idx, line_no, text, conf, x, y, w, h,"
                      " noise) VALUES (?,?,?,?,?,?,?,?,?,?)",
                      &st);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        for (size_t k = 0; k < pages[i].n_lines && !rc; k++) {
            const struct vt_ocr_line *l = &pages[i].lines[k];

            store_bind_text(st, 1, id);
            db_bind_int(st, 2, frame_index[i]);
            db_bind_int64(st, 3, (int64_t)k);
            store_bind_text(st, 4, l->text);
            db_bind_double(st, 5, l->conf);
            for (int j = 0; j < 4; j++)
                db_bind_int(st, 6 + j, l->box[j]);
            db_bind_int(st, 10, l->noise != 0);
            if (db_step(st) != DB_DONE)
                rc = store_fail(s, "insert OCR line");
            db_reset(st);
        }
    }
    store_finish(s, st);
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t k = 0; k < pages[i].n_lines; k++) {
            /* noise is never searched, so no approximate spelling may lead to it */
            if (pages[i].lines[k].noise)
                continue;
            vt_tokenize(pages[i].lines[k].text, strlen(pages[i].lines[k].text), store_add_fuzzy,
                        &fc);
        }
    if (!rc)
        rc = store_keyrows_write(&fc, "fuzzy", "del, term", "index fuzzy keys");
    store_keyrows_release(&fc);
    return rc ? rc : store_screen_docs_refresh(s, id);
}

/* ---- transcripts ---- */

int vt_store_transcript_clear(struct vt_store *s, const char *id)
{
    int rc = store_delete_docs(s, id, "speech");

    if (!rc)
        rc = delete_where_video(s, "words", id);
    if (!rc)
        rc = delete_where_video(s, "cues", id);
    return rc;
}

int vt_store_transcript_replace(struct vt_store *s, const char *id, const struct vt_transcript *t)
{
    struct db_stmt *cue = NULL, *word = NULL, *doc = NULL;
    struct store_keyrows pc = {s, NULL, 0, 0, 0};
    char *meta = store_meta_tokens("speech", id);
    int rc = vt_store_transcript_clear(s, id);

    if (!rc)
        rc = store_prepare(
            s, "INSERT INTO cues (video_id, idx, start_s, end_s, text) VALUES (?,?,?,?,?)", &cue);
    if (!rc)
        rc = store_prepare(s,
                           "INSERT INTO words (video_id, cue_idx, idx, text, start_s, end_s, conf)"
                           " VALUES (?,?,?,?,?,?,?)",
                           &word);
    if (!rc)
        rc = store_prepare(s,
                           s->conn.pg
                               ? store_pg_doc_insert_sql("speech")
                               : "INSERT INTO docs (video_id, source, ref, start_s, end_s, text,"
                                 " meta) VALUES (?1, 'speech', ?2, ?3, ?4, ?5, ?6)",
                           &doc);
    for (size_t i = 0; i < t->n_cues && !rc; i++) {
        const struct vt_cue *c = &t->cues[i];

        store_bind_text(cue, 1, id);
        db_bind_int64(cue, 2, (int64_t)i);
        db_bind_double(cue, 3, c->start_s);
        db_bind_double(cue, 4, c->end_s);
        store_bind_text(cue, 5, c->text);
        if (db_step(cue) != DB_DONE)
            rc = store_fail(s, "insert cue");
        db_reset(cue);
        for (size_t k = 0; k < c->n_words && !rc; k++) {
            const struct vt_word *w = &c->words[k];

            store_bind_text(word, 1, id);
            db_bind_int64(word, 2, (int64_t)i);
            db_bind_int64(word, 3, (int64_t)k);
            store_bind_text(word, 4, w->text);
            db_bind_double(word, 5, w->start_s);
            db_bind_double(word, 6, w->end_s);
            db_bind_double(word, 7, w->conf);
            if (db_step(word) != DB_DONE)
                rc = store_fail(s, "insert word");
            db_reset(word);
        }
        if (!rc)
            rc = store_insert_doc(s, doc, id, (int)i, c->start_s, c->end_s, c->text, meta);
        if (!rc)
            vt_tokenize(c->text, strlen(c->text), store_add_phonetic, &pc);
    }
    store_finish(s, cue);
    store_finish(s, word);
    store_finish(s, doc);
    /* the library-wide rows last, sorted: the save's locks on them are taken in one
     * order by every save, and held for the shortest time */
    if (!rc)
        rc = store_keyrows_write(&pc, "phonetic", "term, key", "index phonetic keys");
    store_keyrows_release(&pc);
    free(meta);
    return rc;
}

int vt_store_transcript(struct vt_store *s, const char *id, struct vt_transcript *out)
{
    return vt_store_transcript_range(s, id, 0, INT64_MAX, out);
}

static void read_cue(struct db_stmt *st, void *item)
{
    struct vt_cue *c = item;

    c->start_s = db_col_double(st, 0);
    c->end_s = db_col_double(st, 1);
    c->text = store_col_dup(st, 2);
}

/* Words, in cue order, onto the cues read before (cue from + i is cues[i]). */
struct cue_words {
    struct vt_transcript *t;
    int64_t from;
    size_t wcap, last;
};

static int read_cue_word(void *user, struct db_stmt *st)
{
    struct cue_words *x = user;
    size_t ci = (size_t)(db_col_int64(st, 0) - x->from);
    struct vt_cue *c;
    struct vt_word *w;

    if (ci >= x->t->n_cues)
        return 0;
    if (ci != x->last) {
        x->wcap = 0;
        x->last = ci;
    }
    c = &x->t->cues[ci];
    vt_grow((void **)&c->words, &x->wcap, c->n_words + 1, sizeof(*c->words));
    w = &c->words[c->n_words++];
    w->text = store_col_dup(st, 1);
    if (!w->text)
        w->text = vt_xstrdup("");
    w->start_s = db_col_double(st, 2);
    w->end_s = db_col_double(st, 3);
    w->conf = db_col_double(st, 4);
    return 0;
}

int vt_store_transcript_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                              struct vt_transcript *out)
{
    struct store_array a = STORE_ARRAY(struct vt_cue, read_cue);
    struct cue_words words = {out, from, 0, (size_t)-1};
    int rc;

    memset(out, 0, sizeof(*out));
    rc = store_rows(s,
                    "SELECT start_s, end_s, text FROM cues WHERE video_id = ? AND idx >= ?"
                    " AND idx < ? ORDER BY idx",
                    "read cues", store_array_row, &a, "sII", id, from, to);
    out->cues = a.v;
    out->n_cues = a.n;
    if (!rc)
        rc = store_rows(s,
                        "SELECT cue_idx, text, start_s, end_s, conf FROM words WHERE video_id = ?"
                        " AND cue_idx >= ? AND cue_idx < ? ORDER BY cue_idx, idx",
                        "read words", read_cue_word, &words, "sII", id, from, to);
    if (rc)
        vt_transcript_release(out);
    return rc;
}

/* ---- chunks ---- */

int vt_store_chunks_clear(struct vt_store *s, const char *id)
{
    return delete_where_video(s, "chunks", id);
}

int vt_store_chunks_replace(struct vt_store *s, const char *id, const struct vt_chunk *c, size_t n)
{
    struct db_stmt *st;
    int rc = vt_store_chunks_clear(s, id);

    if (!rc)
        rc = store_prepare(
            s,
            "INSERT INTO chunks (video_id, idx, start_s, end_s, text, first_cue, last_cue)"
            " VALUES (?,?,?,?,?,?,?)",
            &st);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        store_bind_text(st, 1, id);
        db_bind_int64(st, 2, (int64_t)i);
        db_bind_double(st, 3, c[i].start_s);
        db_bind_double(st, 4, c[i].end_s);
        store_bind_text(st, 5, c[i].text);
        db_bind_int(st, 6, c[i].first_cue);
        db_bind_int(st, 7, c[i].last_cue);
        if (db_step(st) != DB_DONE)
            rc = store_fail(s, "insert chunk");
        db_reset(st);
    }
    store_finish(s, st);
    return rc;
}

int vt_store_chunks(struct vt_store *s, const char *id, struct vt_chunk **out, size_t *n)
{
    return vt_store_chunks_range(s, id, 0, INT64_MAX, out, n);
}

static void read_chunk(struct db_stmt *st, void *item)
{
    struct vt_chunk *c = item;

    c->start_s = db_col_double(st, 0);
    c->end_s = db_col_double(st, 1);
    c->text = store_col_dup(st, 2);
    c->first_cue = db_col_int(st, 3);
    c->last_cue = db_col_int(st, 4);
}

static void release_chunk(void *item)
{
    free(((struct vt_chunk *)item)->text);
}

int vt_store_chunks_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                          struct vt_chunk **out, size_t *n)
{
    return store_read_array(s,
                            "SELECT start_s, end_s, text, first_cue, last_cue FROM chunks"
                            " WHERE video_id = ? AND idx >= ? AND idx < ? ORDER BY idx",
                            "read chunks", sizeof(**out), read_chunk, release_chunk, (void **)out,
                            n, "sII", id, from, to);
}

void vt_chunks_free(struct vt_chunk *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        release_chunk(&c[i]);
    free(c);
}

/* ---- counts and lookups for readers of a page of a video ---- */

int vt_store_counts(struct vt_store *s, const char *id, struct vt_store_counts *c)
{
    struct db_stmt *st;
    int rc = store_prepare(
        s,
        "SELECT (SELECT count(*) FROM shots WHERE video_id = ?1),"
        " (SELECT count(*) FROM frames WHERE video_id = ?1),"
        " (SELECT count(*) FROM frames WHERE video_id = ?1 AND duplicate_of IS NULL),"
        " (SELECT coalesce(sum(bytes), 0) FROM frames WHERE video_id = ?1 AND duplicate_of IS "
        "NULL),"
        " (SELECT count(DISTINCT frame_idx) FROM ocr_lines WHERE video_id = ?1 AND noise = 0),"
        " (SELECT count(*) FROM ocr_lines WHERE video_id = ?1 AND noise = 0),"
        " (SELECT count(*) FROM cues WHERE video_id = ?1),"
        " (SELECT count(DISTINCT cue_idx) FROM words WHERE video_id = ?1),"
        " (SELECT count(*) FROM chunks WHERE video_id = ?1),"
        " (SELECT count(*) FROM vectors WHERE video_id = ?1 AND kind IN ('speech', 'screen'))",
        &st);

    memset(c, 0, sizeof(*c));
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    rc = db_step(st);
    if (rc == DB_ROW) {
        c->shots = db_col_int64(st, 0);
        c->frames = db_col_int64(st, 1);
        c->kept = db_col_int64(st, 2);
        c->keyframe_bytes = (int64_t)db_col_double(st, 3);
        c->frames_with_text = db_col_int64(st, 4);
        c->ocr_lines = db_col_int64(st, 5);
        c->cues = db_col_int64(st, 6);
        c->word_timed_cues = db_col_int64(st, 7);
        c->chunks = db_col_int64(st, 8);
        c->text_vectors = db_col_int64(st, 9);
        rc = 0;
    } else {
        rc = store_fail(s, "count a video's outputs");
    }
    store_finish(s, st);
    return rc;
}

int vt_store_frame_at(struct vt_store *s, const char *id, double t_s, int *frame)
{
    /* the shot containing t first: of its frames (more than one where its text changed),
     * the last taken at t or before, else its first; the nearest frame in time only when
     * no shot contains t. The shot is found once (shots do not overlap), not joined to
     * every frame of the video: a search page asks this for each hit (5 times faster on a
     * 1,000-shot video, bench/page_weight_bench.sh) */
    static const char *const sql[2] = {
        "SELECT coalesce(f.duplicate_of, f.idx) FROM frames f"
        " JOIN frames g ON g.video_id = f.video_id AND g.idx = coalesce(f.duplicate_of, f.idx)"
        " WHERE f.video_id = ?1 AND f.shot = (SELECT sh.idx FROM shots sh WHERE sh.video_id = ?1"
        " AND sh.start_s <= ?2 AND ?2 < sh.end_s ORDER BY sh.idx LIMIT 1)"
        " AND g.path IS NOT NULL AND g.duplicate_of IS NULL"
        " ORDER BY CASE WHEN f.t_s <= ?2 + 1e-6 THEN -f.idx ELSE f.idx END LIMIT 1",
        "SELECT coalesce(f.duplicate_of, f.idx) FROM frames f"
        " JOIN frames g ON g.video_id = f.video_id AND g.idx = coalesce(f.duplicate_of, f.idx)"
        " WHERE f.video_id = ?1 AND g.path IS NOT NULL AND g.duplicate_of IS NULL"
        " ORDER BY abs(f.t_s - ?2), f.idx LIMIT 1",
    };
    int rc = 0;

    *frame = -1;
    for (int i = 0; i < 2 && *frame < 0 && !rc; i++) {
        struct db_stmt *st;

        rc = store_prepare(s, sql[i], &st);
        if (rc)
            return rc;
        store_bind_text(st, 1, id);
        db_bind_double(st, 2, t_s);
        rc = db_step(st);
        if (rc == DB_ROW)
            *frame = db_col_int(st, 0);
        rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, "find a frame");
        store_finish(s, st);
    }
    return rc;
}

static void read_board(struct db_stmt *st, void *item)
{
    struct vt_board_frame *b = item;

    b->frame = db_col_int(st, 0);
    /* the first frame of its shot shows it from the shot's start, as vt_store_frame_at */
    b->start_s = db_col_int(st, 3) ? db_col_double(st, 2) : db_col_double(st, 1);
}

int vt_store_storyboard(struct vt_store *s, const char *id, struct vt_board_frame **out, size_t *n)
{
    return store_read_array(
        s,
        "SELECT coalesce(f.duplicate_of, f.idx), f.t_s, sh.start_s,"
        " CASE WHEN f.idx = (SELECT min(e.idx) FROM frames e WHERE e.video_id = f.video_id"
        " AND e.shot = f.shot) THEN 1 ELSE 0 END"
        " FROM frames f"
        " JOIN shots sh ON sh.video_id = f.video_id AND sh.idx = f.shot"
        " JOIN frames g ON g.video_id = f.video_id AND g.idx = coalesce(f.duplicate_of, f.idx)"
        " WHERE f.video_id = ? AND g.path IS NOT NULL AND g.duplicate_of IS NULL"
        " ORDER BY f.idx",
        "read the storyboard", sizeof(**out), read_board, NULL, (void **)out, n, "s", id);
}

int vt_store_cue_at(struct vt_store *s, const char *id, double t_s, int64_t *cue)
{
    struct db_stmt *st;
    int rc = store_prepare(s, "SELECT max(idx) FROM cues WHERE video_id = ? AND start_s <= ?", &st);

    *cue = -1;
    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    db_bind_double(st, 2, t_s);
    rc = db_step(st);
    if (rc == DB_ROW && !db_col_null(st, 0))
        *cue = db_col_int64(st, 0);
    rc = rc == DB_ROW ? 0 : store_fail(s, "find a cue");
    store_finish(s, st);
    return rc;
}
