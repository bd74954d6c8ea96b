/*
 * The search side of the SQLite store (see store.h): the FTS5 index rows (docs) and
 * their filter tokens, the vtrank() ranking function, the document-frequency
 * estimates cached on the handle, the fuzzy (deletion-key) and phonetic lookup
 * tables, index merging, and the search verbs that take a parsed query (the FTS5
 * text for it is written by store_fts.c).
 */
#include "base/util.h"
#include "store/db/db_sqlite.h"
#include "store/store_int.h"
#include "text/query.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * vtrank(docs_fts, df, phrase_n): BM25 over the text column where the frequency of
 * each phrase comes from the caller (a blob of doubles, one per phrase in query
 * order; negative: not scored). FTS5's own bm25() counts them by reading every
 * phrase's whole posting list on each query, which for a word in every video costs
 * more than the search; the row count and average length are kept by FTS5.
 * With phrase_n > 1, a row where the first phrase_n phrases stand in sequence (the
 * words typed, as a phrase) gets VT_PHRASE_BONUS on top.
 */
/* Do phrases 0..n-1 occur one after another somewhere in the text column? */
static int in_sequence(const Fts5ExtensionApi *api, Fts5Context *fts, int n)
{
    int count = 0;

    if (api->xInstCount(fts, &count))
        return 0;
    for (int i = 0; i < count; i++) {
        int phrase, col, off, k;

        if (api->xInst(fts, i, &phrase, &col, &off) || phrase != 0 || col != 0)
            continue;
        for (k = 1; k < n; k++) {
            int found = 0;

            for (int j = 0; j < count && !found; j++) {
                int p2, c2, o2;

                if (!api->xInst(fts, j, &p2, &c2, &o2))
                    found = p2 == k && c2 == 0 && o2 == off + k;
            }
            if (!found)
                break;
        }
        if (k == n)
            return 1;
    }
    return 0;
}

static void vtrank(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
                   sqlite3_value **val)
{
    const double *df = NULL;
    sqlite3_int64 rows = 0, total = 0;
    int ndf = 0, len = 0, nphrase = api->xPhraseCount(fts);
    double avg, score = 0;

    if (nval >= 1 && sqlite3_value_type(val[0]) == SQLITE_BLOB) {
        df = sqlite3_value_blob(val[0]);
        ndf = sqlite3_value_bytes(val[0]) / (int)sizeof(double);
    }
    if (nval >= 2 && sqlite3_value_int(val[1]) > 1 &&
        in_sequence(api, fts, sqlite3_value_int(val[1])))
        score = VT_PHRASE_BONUS;
    if (api->xRowCount(fts, &rows) || api->xColumnTotalSize(fts, 0, &total) ||
        api->xColumnSize(fts, 0, &len)) {
        sqlite3_result_error(ctx, "vtrank: cannot read index statistics", -1);
        return;
    }
    avg = rows > 0 && total > 0 ? (double)total / (double)rows : 1;
    for (int i = 0; i < nphrase && i < ndf; i++) {
        Fts5PhraseIter it;
        int col, off, tf = 0;

        if (df[i] < 0)
            continue;
        for (api->xPhraseFirst(fts, i, &it, &col, &off); col >= 0;
             api->xPhraseNext(fts, &it, &col, &off))
            tf += col == 0;
        if (tf)
            score += store_bm25_term((double)rows, avg, len, tf, df[i]);
    }
    sqlite3_result_double(ctx, score);
}

int store_register_rank(struct vt_store *s)
{
    fts5_api *api = NULL;
    struct db_stmt *st;
    int rc = store_prepare(s, "SELECT fts5(?1)", &st);

    if (rc)
        return rc;
    sqlite3_bind_pointer(db_sqlite_stmt(st), 1, (void *)&api, "fts5_api_ptr", NULL);
    db_step(st);
    store_finish(s, st);
    if (!api || api->iVersion < 2 ||
        api->xCreateFunction(api, "vtrank", NULL, vtrank, NULL) != SQLITE_OK) {
        snprintf(s->conn.err, sizeof(s->conn.err), "database: SQLite has no usable FTS5");
        return VT_EIO;
    }
    return 0;
}

int store_delete_docs(struct vt_store *s, const char *id, const char *source)
{
    struct db_stmt *st;
    int rc = store_prepare(s, "DELETE FROM docs WHERE video_id = ? AND source = ?", &st);

    if (rc)
        return rc;
    store_bind_text(st, 1, id);
    store_bind_text(st, 2, source);
    return store_step_done(s, st, "delete index rows");
}

/* The filter tokens of a row: its source and its video (hex, so one token). */
char *store_meta_tokens(const char *source, const char *id)
{
    struct vt_sb sb = {0};

    vt_sb_addf(&sb, "s%s v", source);
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        vt_sb_addf(&sb, "%02x", *p);
    return vt_sb_detach(&sb);
}

/* One index row per frame (kept or duplicate) with text: all its lines but noise, in order,
 * at its moment (STORE_SCREEN_DOC_SPAN). */
int store_screen_docs_refresh(struct vt_store *s, const char *id)
{
    struct db_stmt *st;
    char *meta;
    int rc;

    if (s->be->screen_docs_refresh)
        return s->be->screen_docs_refresh(s, id);
    rc = store_delete_docs(s, id, "screen");
    if (rc)
        return rc;
    rc =
        store_prepare(s,
                      "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta)"
                      " SELECT f.video_id, 'screen', f.idx, " STORE_SCREEN_DOC_SPAN ","
                      "  (SELECT group_concat(text, char(10)) FROM (SELECT l.text FROM ocr_lines l"
                      "    WHERE l.video_id = f.video_id AND l.frame_idx = coalesce(f.duplicate_of,"
                      "    f.idx) AND l.noise = 0 ORDER BY l.line_no)), ?2"
                      " FROM frames f JOIN shots sh ON sh.video_id = f.video_id AND sh.idx = f.shot"
                      " WHERE f.video_id = ?1 AND EXISTS (SELECT 1 FROM ocr_lines l"
                      "  WHERE l.video_id = f.video_id AND l.frame_idx = coalesce(f.duplicate_of,"
                      "  f.idx) AND l.noise = 0) ORDER BY f.idx",
                      &st);
    if (rc)
        return rc;
    meta = store_meta_tokens("screen", id);
    store_bind_text(st, 1, id);
    store_bind_text(st, 2, meta);
    free(meta);
    return store_step_done(s, st, "index frame text");
}

/*
 * Bind a deletion key. Deleting one byte of a word that is not ASCII can cut a UTF-8
 * sequence, which PostgreSQL's text refuses: there such a key is written as ~ and its
 * bytes in hex (~ is in no token, so no key of a word is taken for another), on writing
 * and on lookup alike, so both backends find the same words.
 */
/* The deletion key del (dn bytes) as the fuzzy table holds it, into key (reset first). */
static void fuzzy_key(struct vt_store *s, const char *del, size_t dn, struct vt_sb *key)
{
    size_t k = 0;

    key->len = 0;
    vt_sb_add(key, "", 0);
    for (size_t step; s->conn.pg && k < dn; k += step)
        if (!(step = vt_utf8_decode(del + k, dn - k, NULL)))
            break;
    if (!s->conn.pg || k == dn) {
        vt_sb_add(key, del, dn);
        return;
    }
    vt_sb_addc(key, '~');
    for (k = 0; k < dn; k++)
        vt_sb_addf(key, "%02x", (unsigned char)del[k]);
}

static void fuzzy_put(struct store_keyrows *c, const char *del, size_t dn, const char *term,
                      size_t tn)
{
    struct vt_sb key = {0};

    fuzzy_key(c->s, del, dn, &key);
    store_keyrows_add(c, key.buf, key.len, term, tn);
    vt_sb_release(&key);
}

void store_add_fuzzy(void *user, const char *tok, size_t n)
{
    struct store_keyrows *c = user;
    char del[VT_FUZZY_MAX_LEN];

    if (n < VT_FUZZY_MIN_LEN || n >= VT_FUZZY_MAX_LEN)
        return;
    fuzzy_put(c, tok, n, tok, n);
    for (size_t i = 0; i < n; i++) {
        memcpy(del, tok, i);
        memcpy(del + i, tok + i + 1, n - i - 1);
        fuzzy_put(c, del, n - 1, tok, n);
    }
}

static void bind_fuzzy_key(struct vt_store *s, struct db_stmt *st, int i, const char *del,
                           size_t dn)
{
    struct vt_sb key = {0};

    fuzzy_key(s, del, dn, &key);
    db_bind_textn(st, i, key.buf, key.len);
    vt_sb_release(&key);
}

/* ---- rows of the library-wide tables (fuzzy, phonetic), written sorted in batches ---- */

void store_keyrows_add(struct store_keyrows *k, const char *a, size_t an, const char *b, size_t bn)
{
    char *pa = vt_xmalloc(an + 1), *pb = vt_xmalloc(bn + 1);

    memcpy(pa, a, an);
    pa[an] = '\0';
    memcpy(pb, b, bn);
    pb[bn] = '\0';
    vt_grow((void **)&k->v, &k->cap, 2 * (k->n + 1), sizeof(*k->v));
    k->v[2 * k->n] = pa;
    k->v[2 * k->n + 1] = pb;
    k->n++;
}

/* Byte order (the tables' COLLATE "C"), first column then second. */
static int keyrow_cmp(const void *x, const void *y)
{
    const char *const *a = x, *const *b = y;
    int c = strcmp(a[0], b[0]);

    return c ? c : strcmp(a[1], b[1]);
}

void store_keyrows_release(struct store_keyrows *k)
{
    for (size_t i = 0; i < 2 * k->n; i++)
        free(k->v[i]);
    free(k->v);
    k->v = NULL;
    k->n = k->cap = 0;
}

/* The INSERT of rows pairs into table (cols), each conflict skipped. Caller frees. */
static char *keyrows_sql(const char *table, const char *cols, size_t rows)
{
    struct vt_sb sb = {0};

    vt_sb_addf(&sb, "INSERT INTO %s (%s) VALUES (?,?)", table, cols);
    for (size_t i = 1; i < rows; i++)
        vt_sb_adds(&sb, ",(?,?)");
    vt_sb_adds(&sb, " ON CONFLICT DO NOTHING");
    return vt_sb_detach(&sb);
}

/*
 * Write k's rows into table, sorted and without duplicates, KEYROWS_BATCH rows a
 * statement (fewer: KEYROWS_SMALL, a small save's), the last batch filled up with
 * copies of its last row, which the conflict clause skips (two SQL texts a table, each
 * prepared once). Sorted, because these tables are shared by every video: two saves
 * that insert the same new words wait for each other at the first word they share, in
 * the same order, and so never deadlock (unsorted, one a row at a time, two saves with
 * the same 3,000 words in opposite orders did: issue 26). Frees k's rows.
 */
#define KEYROWS_BATCH 256
#define KEYROWS_SMALL 16
int store_keyrows_write(struct store_keyrows *k, const char *table, const char *cols,
                        const char *what)
{
    size_t n = 0;
    int rc = k->rc;

    if (k->n > 1)
        qsort(k->v, k->n, 2 * sizeof(*k->v), keyrow_cmp);
    for (size_t i = 0; i < k->n; i++) /* drop duplicates: the sorted copies are adjacent */
        if (!n || keyrow_cmp(&k->v[2 * i], &k->v[2 * (n - 1)])) {
            char *a = k->v[2 * i], *b = k->v[2 * i + 1];

            k->v[2 * i] = k->v[2 * n];
            k->v[2 * i + 1] = k->v[2 * n + 1];
            k->v[2 * n] = a;
            k->v[2 * n + 1] = b;
            n++;
        }
    for (size_t at = 0; at < n && !rc;) {
        size_t rows = n - at > KEYROWS_SMALL ? KEYROWS_BATCH : KEYROWS_SMALL;
        char *sql = keyrows_sql(table, cols, rows);
        struct db_stmt *st;

        rc = store_prepare(k->s, sql, &st);
        free(sql);
        if (rc)
            break;
        for (size_t r = 0; r < rows; r++) {
            size_t i = at + r < n ? at + r : n - 1;

            store_bind_text(st, (int)(2 * r + 1), k->v[2 * i]);
            store_bind_text(st, (int)(2 * r + 2), k->v[2 * i + 1]);
        }
        rc = store_step_done(k->s, st, what);
        at += rows;
    }
    store_keyrows_release(k);
    return rc;
}

/* Damerau-Levenshtein distance of a and b is at most 1 (one insert, delete, replace or swap). */
static int within_one_edit(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b), i = 0;

    if (n > m + 1 || m > n + 1)
        return 0;
    while (i < n && i < m && a[i] == b[i])
        i++;
    if (i == n && i == m)
        return 1;
    if (n == m)
        return !strcmp(a + i + 1, b + i + 1) ||
               (i + 1 < n && a[i] == b[i + 1] && a[i + 1] == b[i] && !strcmp(a + i + 2, b + i + 2));
    return n > m ? !strcmp(a + i + 1, b + i) : !strcmp(a + i, b + i + 1);
}

/*
 * fuzzy_terms on PostgreSQL: the word's keys as one array, one round trip instead of
 * one per key, the terms in the order SQLite's loop finds them (key by key, each key's
 * terms in byte order).
 */
static int fuzzy_terms_pg(struct vt_store *s, const char *word, void (*fn)(void *u, const char *t),
                          void *user)
{
    struct vt_sb keys = {0}, key = {0};
    size_t n = strlen(word);
    char del[VT_FUZZY_MAX_LEN];
    struct db_stmt *st;
    int rc;

    vt_sb_addc(&keys, '{');
    for (size_t i = 0; i <= n; i++) {
        size_t dn = i == n ? n : n - 1;

        memcpy(del, word, i == n ? n : i);
        if (i < n)
            memcpy(del + i, word + i + 1, n - i - 1);
        fuzzy_key(s, del, dn, &key);
        vt_sb_adds(&keys, i ? ",\"" : "\"");
        for (size_t k = 0; k < key.len; k++) {
            if (key.buf[k] == '"' || key.buf[k] == '\\')
                vt_sb_addc(&keys, '\\');
            vt_sb_addc(&keys, key.buf[k]);
        }
        vt_sb_addc(&keys, '"');
    }
    vt_sb_addc(&keys, '}');
    /* = ANY: an index scan for the few keys whatever the statistics say (a join with the
     * unnested keys was planned as a scan of the whole table until fuzzy was analyzed);
     * a key given twice is found once, at its first place, as SQLite's loop finds it */
    rc = store_prepare(s,
                       "SELECT term FROM fuzzy WHERE del = ANY(CAST(?1 AS text[]))"
                       " ORDER BY array_position(CAST(?1 AS text[]), del), term",
                       &st);
    if (!rc) {
        db_bind_text(st, 1, keys.buf);
        while ((rc = db_step(st)) == DB_ROW) {
            const char *t = db_col_text(st, 0);

            if (t && within_one_edit(word, t))
                fn(user, t);
        }
        rc = rc == DB_DONE ? 0 : store_fail(s, "fuzzy lookup");
        store_finish(s, st);
    }
    vt_sb_release(&keys);
    vt_sb_release(&key);
    return rc;
}

/* Words sharing a deletion key with word that are within one edit of it. */
static int fuzzy_terms(struct vt_store *s, const char *word, void (*fn)(void *u, const char *t),
                       void *user)
{
    struct db_stmt *st;
    size_t n = strlen(word);
    char del[VT_FUZZY_MAX_LEN];
    int rc;

    if (n < VT_FUZZY_MIN_LEN || n >= VT_FUZZY_MAX_LEN)
        return 0;
    if (s->conn.pg)
        return fuzzy_terms_pg(s, word, fn, user);
    rc = store_prepare(s, "SELECT term FROM fuzzy WHERE del = ?", &st);
    if (rc)
        return rc;
    for (size_t i = 0; i <= n && !rc; i++) {
        /* i == n: the word itself (finds words one letter longer) */
        size_t dn = i == n ? n : n - 1;

        memcpy(del, word, i == n ? n : i);
        if (i < n)
            memcpy(del + i, word + i + 1, n - i - 1);
        bind_fuzzy_key(s, st, 1, del, dn);
        while ((rc = db_step(st)) == DB_ROW) {
            const char *t = db_col_text(st, 0);

            if (t && within_one_edit(word, t))
                fn(user, t);
        }
        rc = rc == DB_DONE ? 0 : store_fail(s, "fuzzy lookup");
        db_reset(st);
    }
    store_finish(s, st);
    return rc;
}

int store_insert_doc(struct vt_store *s, struct db_stmt *st, const char *id, int ref,
                     double start_s, double end_s, const char *text, const char *meta)
{
    int rc = 0;

    store_bind_text(st, 1, id);
    db_bind_int(st, 2, ref);
    db_bind_double(st, 3, start_s);
    db_bind_double(st, 4, end_s);
    store_bind_text(st, 5, text);
    store_bind_text(st, 6, meta);
    if (s->conn.pg) {
        /* PostgreSQL's rows carry their tokens (store_pg.c's docs.tsv) */
        char *tsv = store_pg_tsv(text);

        store_bind_text(st, 7, tsv);
        free(tsv);
    }
    if (db_step(st) != DB_DONE)
        rc = store_fail(s, "index row");
    db_reset(st);
    return rc;
}

void store_add_phonetic(void *user, const char *tok, size_t n)
{
    struct store_keyrows *c = user;
    char key[16];

    if (n < 2)
        return;
    vt_metaphone(tok, key, sizeof(key));
    if (!key[0])
        return;
    store_keyrows_add(c, tok, n, key, strlen(key));
}

/* ---- titles ---- */

int vt_store_title_docs_refresh(struct vt_store *s, const char *id)
{
    struct db_stmt *st;
    char *meta;
    int rc;

    if (s->be->title_docs_refresh)
        return s->be->title_docs_refresh(s, id);
    meta = store_meta_tokens("title", id);
    rc = store_delete_docs(s, id, "title");
    if (!rc)
        rc = store_prepare(s,
                           "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta)"
                           " SELECT id, 'title', -1, 0, duration_s, title, ?2 FROM videos"
                           "  WHERE id = ?1 AND title IS NOT NULL"
                           " UNION ALL"
                           " SELECT video_id, 'title', idx, start_s, end_s, title, ?2 FROM chapters"
                           "  WHERE video_id = ?1 AND title IS NOT NULL",
                           &st);
    if (!rc) {
        store_bind_text(st, 1, id);
        store_bind_text(st, 2, meta);
        rc = store_step_done(s, st, "index titles");
    }
    free(meta);
    return rc;
}

/* ---- search primitives ---- */

/*
 * Rows matching the FTS5 expression match, restricted to source and video when
 * non-empty: the newest `cap` matches in index order, each with its vtrank() score,
 * unsorted. df[i] is the document frequency of the i-th phrase of match, in order
 * (negative: not scored). With phrase_n > 1, rows where the first phrase_n phrases
 * stand in sequence score VT_PHRASE_BONUS more.
 */
static int fts_rows(struct vt_store *s, const char *match, const char *source, const char *video,
                    const double *df, size_t n_df, int phrase_n, int cap, double deadline_s,
                    int *partial, struct fts_id **out, size_t *n)
{
    struct vt_sb m = {0};
    struct fts_id *v = NULL;
    size_t vcap = 0, len = 0;
    struct db_stmt *st = NULL;
    long long hi = 0, window = 20000;
    int rc;

    *out = NULL;
    *n = 0;
    *partial = 0;
    vt_sb_addf(&m, "(%s)", match);
    if (source && *source)
        vt_sb_addf(&m, " AND meta : \"s%s\"", source);
    if (video && *video) {
        char *meta = store_meta_tokens("x", video);

        /* meta is "sx v<hex>": the video token is the part after the space */
        vt_sb_addf(&m, " AND meta : \"%s\"", strchr(meta, ' ') + 1);
        free(meta);
    }
    rc = store_prepare(s, "SELECT coalesce(max(id), 0) FROM docs", &st);
    if (!rc && db_step(st) == DB_ROW)
        hi = db_col_int64(st, 0);
    if (st)
        store_finish(s, st);
    st = NULL;
    if (!rc)
        rc = store_prepare(
            s,
            "SELECT rowid, vtrank(docs_fts, ?3, ?6) FROM docs_fts WHERE docs_fts MATCH ?1"
            " AND rowid > ?4 AND rowid <= ?5 ORDER BY rowid DESC LIMIT ?2",
            &st);
    /*
     * Newest rows first, in growing windows: a query whose matches are many is served
     * from the first window; one whose terms are common but rarely together would
     * read their whole posting lists, so past the deadline it stops with what it has.
     */
    while (!rc && hi > 0 && (int)len < cap) {
        long long lo = hi > window ? hi - window : 0;

        store_bind_text(st, 1, m.buf);
        db_bind_int(st, 2, cap - (int)len);
        db_bind_blob(st, 3, df, n_df * sizeof(*df));
        db_bind_int64(st, 4, lo);
        db_bind_int64(st, 5, hi);
        db_bind_int(st, 6, phrase_n);
        while ((rc = db_step(st)) == DB_ROW) {
            vt_grow((void **)&v, &vcap, len + 1, sizeof(*v));
            v[len].rowid = db_col_int64(st, 0);
            v[len].score = db_col_double(st, 1);
            v[len].video_id[0] = '\0';
            v[len].start_s = 0;
            len++;
        }
        rc = rc == DB_DONE ? 0 : store_fail(s, "search");
        db_reset(st);
        hi = lo;
        window *= 4;
        if (hi > 0 && deadline_s > 0 && vt_monotonic_s() > deadline_s) {
            *partial = 1;
            break;
        }
    }
    if (st)
        store_finish(s, st);
    vt_sb_release(&m);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = len;
    return 0;
}

int vt_store_doc(struct vt_store *s, long long rowid,
                 void (*fn)(void *user, const struct vt_doc *d), void *user)
{
    struct db_stmt *st;
    int rc = store_prepare(s,
                           "SELECT d.video_id, v.title, d.source, d.ref, d.start_s, d.end_s, d.text"
                           " FROM docs d JOIN videos v ON v.id = d.video_id WHERE d.id = ?",
                           &st);

    if (rc)
        return rc;
    db_bind_int64(st, 1, rowid);
    rc = db_step(st);
    if (rc == DB_ROW) {
        struct vt_doc d;

        d.rowid = rowid;
        d.video_id = db_col_text(st, 0);
        d.title = db_col_text(st, 1);
        d.source = db_col_text(st, 2);
        d.ref = db_col_int(st, 3);
        d.start_s = db_col_double(st, 4);
        d.end_s = db_col_double(st, 5);
        d.text = db_col_text(st, 6);
        d.words = NULL;
        d.n_words = 0;
        if (!d.title)
            d.title = "";
        if (!d.text)
            d.text = "";
        fn(user, &d);
        rc = 0;
    } else {
        rc = rc == DB_DONE ? VT_ENOTFOUND : store_fail(s, "read index row");
    }
    store_finish(s, st);
    return rc;
}

/* FNV-1a of a term, for the cache slot. */
static size_t df_slot(const char *term)
{
    return (size_t)vt_fnv1a64(VT_FNV64_INIT, term, strlen(term)) & (DF_CACHE - 1);
}

/*
 * Count the rows holding term. FTS5 keeps no document frequencies: counting means
 * reading the term's posting list, which for a word in every video is the whole
 * index. So count it in the newest DF_WINDOW rows first (a bounded read) and scale
 * that up when it is common there; only terms rare in the window are counted exactly,
 * which is cheap for them.
 */
#define DF_WINDOW 20000

static int count_term_docs(struct vt_store *s, const char *term, long long *docs)
{
    struct db_stmt *st;
    long long top = 0, in_window = 0;
    char *match;
    int rc;

    /* PostgreSQL: the same estimate in one statement (store_search_pg.c) */
    if (s->be->terms_docs)
        return s->be->terms_docs(s, &term, 1, DF_WINDOW, docs);
    rc = store_prepare(s, "SELECT coalesce(max(id), 0) FROM docs", &st);
    if (rc)
        return rc;
    if (db_step(st) == DB_ROW)
        top = db_col_int64(st, 0);
    store_finish(s, st);
    match = vt_xasprintf("text : \"%s\"", term); /* tokens hold no quotes */
    rc = store_prepare(s, "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?1 AND rowid > ?2",
                       &st);
    if (!rc) {
        store_bind_text(st, 1, match);
        db_bind_int64(st, 2, top - DF_WINDOW);
        rc = db_step(st);
        in_window = rc == DB_ROW ? db_col_int64(st, 0) : 0;
        rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, "term statistics");
        store_finish(s, st);
    }
    free(match);
    if (rc)
        return rc;
    if (top > DF_WINDOW && in_window >= 100) {
        *docs = in_window * top / DF_WINDOW;
        return 0;
    }
    rc = store_prepare(s, "SELECT doc FROM docs_vocab WHERE term = ?", &st);
    if (rc)
        return rc;
    store_bind_text(st, 1, term);
    rc = db_step(st);
    *docs = rc == DB_ROW ? db_col_int64(st, 0) : 0;
    rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, "term statistics");
    store_finish(s, st);
    return rc;
}

/* The cached count of term: 1 with *docs, or 0. */
static int df_cached(struct vt_store *s, const char *term, long long *docs)
{
    size_t i = df_slot(term);

    for (size_t k = 0; k < 8; k++) {
        struct df_entry *e = &s->df[(i + k) & (DF_CACHE - 1)];

        if (e->term && !strcmp(e->term, term)) {
            *docs = e->docs;
            return 1;
        }
    }
    return 0;
}

/* A frequency counted once is good enough for ranking: cached in a free slot of the probe
 * window, or in the slot the term hashes to (evicting). */
static void df_put(struct vt_store *s, const char *term, long long docs)
{
    size_t i = df_slot(term);

    for (size_t k = 0; k < 8; k++) {
        struct df_entry *e = &s->df[(i + k) & (DF_CACHE - 1)];

        if (!e->term || k == 7) {
            e = e->term ? &s->df[i] : e;
            free(e->term);
            e->term = vt_xstrdup(term);
            e->docs = docs;
            return;
        }
    }
}

/* In how many indexed rows the term occurs: exact when it is rare in the newest
 * DF_WINDOW rows, else scaled up from them. Counted once per handle and cached (new
 * rows do not update it: it is for ranking, not for display). */
static int term_docs(struct vt_store *s, const char *term, long long *docs)
{
    int rc;

    if (df_cached(s, term, docs))
        return 0;
    rc = count_term_docs(s, term, docs);
    if (!rc)
        df_put(s, term, *docs);
    return rc;
}

#define DF_BATCH 64 /* words counted in one statement at most */

struct df_batch {
    const char *w[DF_BATCH];
    size_t n;
};

static void df_want(struct vt_store *s, struct df_batch *b, const char *w)
{
    long long unused;

    if (b->n >= DF_BATCH || df_cached(s, w, &unused))
        return;
    for (size_t i = 0; i < b->n; i++)
        if (!strcmp(b->w[i], w))
            return;
    b->w[b->n++] = w;
}

/* store_rows callback: the row's first column (a term) to fn. */
struct term_fn {
    void (*fn)(void *user, const char *term);
    void *user;
};

static int term_row(void *user, struct db_stmt *st)
{
    struct term_fn *t = user;

    t->fn(t->user, db_col_text(st, 0));
    return 0;
}

static int phonetic_terms(struct vt_store *s, const char *word, int max,
                          void (*fn)(void *user, const char *term), void *user)
{
    struct term_fn t = {fn, user};
    char key[16];

    vt_metaphone(word, key, sizeof(key));
    if (!key[0] || strlen(word) < 3)
        return 0;
    return store_rows(s, "SELECT term FROM phonetic WHERE key = ? LIMIT ?", "phonetic lookup",
                      term_row, &t, "si", key, max);
}

int vt_store_similar_words(struct vt_store *s, const char *word, enum vt_similar how, int max,
                           void (*fn)(void *user, const char *term), void *user)
{
    return how == VT_SIMILAR_SOUND ? phonetic_terms(s, word, max, fn, user)
                                   : fuzzy_terms(s, word, fn, user);
}

/* Bounded merge step, in pages, when a video becomes indexed (vt_store_video_set_state). */
#define MERGE_STEP_PAGES 64

int vt_store_maintain(struct vt_store *s, enum vt_maintain how)
{
    char sql[96];
    int pages = how == VT_MAINTAIN_FULL ? 0 : MERGE_STEP_PAGES, rc = 0;

    if (s->be->maintain)
        return s->be->maintain(s, how);
    /* FTS5 answers faster from fewer, larger segments: 'merge' does a bounded amount
     * of that work (pages > 0), 'optimize' all of it; the cue pairs' index alike */
    for (int k = 0; k < 2 && !rc; k++) {
        const char *t = k ? "pairs_fts" : "docs_fts";

        if (pages > 0)
            snprintf(sql, sizeof(sql), "INSERT INTO %s (%s, rank) VALUES ('merge', %d)", t, t,
                     pages);
        else
            snprintf(sql, sizeof(sql), "INSERT INTO %s (%s) VALUES ('optimize')", t, t);
        rc = store_exec(s, sql, "merge the search index");
    }
    return rc;
}

struct word_fn {
    int (*fn)(void *user, const char *text, double start_s, double end_s);
    void *user;
};

static int word_row(void *user, struct db_stmt *st)
{
    struct word_fn *w = user;
    const char *t = db_col_text(st, 0);

    return w->fn(w->user, t ? t : "", db_col_double(st, 1), db_col_double(st, 2));
}

int vt_store_cue_words(struct vt_store *s, const char *id, int cue,
                       int (*fn)(void *user, const char *text, double start_s, double end_s),
                       void *user)
{
    struct word_fn w = {fn, user};

    return store_rows(s,
                      "SELECT text, start_s, end_s FROM words WHERE video_id = ? AND"
                      " cue_idx = ? ORDER BY idx",
                      "read words", word_row, &w, "si", id, cue);
}

/* ---- many rows at once ---- */

/* One row read by vt_store_docs, held until the rows are handed on in the caller's order. */
struct doc_buf {
    struct vt_doc d; /* its strings are the copies below */
    char *video_id, *title, *source, *text;
    struct vt_doc_word *words;
    size_t cap_words;
};

/*
 * The rows, then each speech row's words, in one statement: a row (kind 0) comes before
 * its words (kind 1, in order). The ids travel as one parameter, which each backend
 * unpacks (SQLite's json_each, PostgreSQL's bigint[]); the rest is the same SQL.
 */
#define DOCS_SQL(ids)                                                                              \
    "WITH ids(id) AS (" ids ")"                                                                    \
    " SELECT 0, d.id, d.video_id, v.title, d.source, d.ref, d.start_s, d.end_s, d.text"            \
    " FROM docs d JOIN videos v ON v.id = d.video_id WHERE d.id IN (SELECT id FROM ids)"           \
    " UNION ALL"                                                                                   \
    " SELECT 1, d.id, NULL, NULL, NULL, w.idx, w.start_s, w.end_s, w.text FROM docs d"             \
    " JOIN words w ON w.video_id = d.video_id AND w.cue_idx = d.ref"                               \
    " WHERE d.id IN (SELECT id FROM ids) AND d.source = 'speech'"                                  \
    " ORDER BY 2, 1, 6"

static char *dup_or_empty(const char *v)
{
    return vt_xstrdup(v ? v : "");
}

static void doc_buf_row(struct doc_buf *b, struct db_stmt *st)
{
    memset(b, 0, sizeof(*b));
    b->d.rowid = db_col_int64(st, 1);
    b->d.video_id = b->video_id = dup_or_empty(db_col_text(st, 2));
    b->d.title = b->title = dup_or_empty(db_col_text(st, 3));
    b->d.source = b->source = dup_or_empty(db_col_text(st, 4));
    b->d.ref = db_col_int(st, 5);
    b->d.start_s = db_col_double(st, 6);
    b->d.end_s = db_col_double(st, 7);
    b->d.text = b->text = dup_or_empty(db_col_text(st, 8));
}

static void doc_buf_word(struct doc_buf *b, struct db_stmt *st)
{
    struct vt_doc_word *w;

    vt_grow((void **)&b->words, &b->cap_words, b->d.n_words + 1, sizeof(*b->words));
    w = &b->words[b->d.n_words++];
    w->text = dup_or_empty(db_col_text(st, 8));
    w->start_s = db_col_double(st, 6);
    w->end_s = db_col_double(st, 7);
    b->d.words = b->words;
}

static void doc_bufs_free(struct doc_buf *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].video_id);
        free(v[i].title);
        free(v[i].source);
        free(v[i].text);
        for (size_t k = 0; k < v[i].d.n_words; k++)
            free((char *)v[i].words[k].text);
        free(v[i].words);
    }
    free(v);
}

static int by_doc_rowid(const void *key, const void *item)
{
    long long a = *(const long long *)key, b = ((const struct doc_buf *)item)->d.rowid;

    return a < b ? -1 : a > b;
}

int vt_store_docs(struct vt_store *s, const long long *rowids, size_t n,
                  void (*fn)(void *user, const struct vt_doc *d), void *user)
{
    struct vt_sb ids = {0};
    struct doc_buf *v = NULL;
    size_t len = 0, cap = 0;
    struct db_stmt *st;
    int rc;

    if (!n)
        return 0;
    vt_sb_addc(&ids, s->conn.pg ? '{' : '[');
    for (size_t i = 0; i < n; i++)
        vt_sb_addf(&ids, "%s%lld", i ? "," : "", rowids[i]);
    vt_sb_addc(&ids, s->conn.pg ? '}' : ']');
    rc = store_prepare(s,
                       s->conn.pg ? DOCS_SQL("SELECT unnest(CAST(? AS bigint[]))")
                                  : DOCS_SQL("SELECT value FROM json_each(?)"),
                       &st);
    if (rc) {
        vt_sb_release(&ids);
        return rc;
    }
    db_bind_text(st, 1, ids.buf);
    while ((rc = db_step(st)) == DB_ROW) {
        if (db_col_int(st, 0) == 0) {
            vt_grow((void **)&v, &cap, len + 1, sizeof(*v));
            doc_buf_row(&v[len++], st);
        } else if (len && v[len - 1].d.rowid == db_col_int64(st, 1)) {
            doc_buf_word(&v[len - 1], st);
        }
    }
    rc = rc == DB_DONE ? 0 : store_fail(s, "read index rows");
    store_finish(s, st);
    vt_sb_release(&ids);
    /* the rows came in rowid order: handed on in the caller's */
    for (size_t i = 0; i < n && !rc; i++) {
        const struct doc_buf *b =
            len ? bsearch(&rowids[i], v, len, sizeof(*v), by_doc_rowid) : NULL;

        if (b)
            fn(user, &b->d);
    }
    doc_bufs_free(v, len);
    return rc;
}

/* ---- the search verb ---- */

#define MAX_PHRASES STORE_MAX_PHRASES

/* Where the document frequencies of a query's phrases are being gathered. */
struct df_ctx {
    struct vt_store *s;
    const unsigned char *used; /* the phrases whose frequency is wanted; NULL: all */
    struct df_batch *collect;  /* not NULL: only note the words to count, into it */
};

static int wanted(const struct df_ctx *c, size_t phrase)
{
    return !c->used || c->used[phrase];
}

static double word_docs(struct df_ctx *c, const char *w)
{
    long long d = 0;

    if (c->collect) {
        df_want(c->s, c->collect, w);
        return 0;
    }
    term_docs(c->s, w, &d); /* on error d stays 0: ranking only, never a failure */
    return (double)d;
}

/* A term's document frequency: its rarest word's (a phrase is at most that common). */
static double qterm_docs(struct df_ctx *c, const struct vt_qterm *t)
{
    double best = -1;

    for (size_t k = 0; k < t->n_words; k++) {
        double d = word_docs(c, t->words[k]);

        if (best < 0 || d < best)
            best = d;
    }
    return best < 0 ? 0 : best;
}

/*
 * Document frequencies of the phrases of store_fts_match(q, 0, alts), in the order
 * that function writes them: each positive term (then its alternatives), then the
 * excluded terms, which are not scored; a phrase not wanted gets 0 (it is in no row
 * ranked, so its frequency is never used).
 */
static size_t phrase_docs(struct df_ctx *c, const struct vt_query *q, char **const *alts,
                          double *df)
{
    size_t n = 0, pos = 0;

    for (size_t i = 0; i < q->n_terms && n < MAX_PHRASES; i++) {
        if (q->terms[i].exclude)
            continue;
        df[n] = wanted(c, n) ? qterm_docs(c, &q->terms[i]) : 0;
        n++;
        for (size_t k = 0; alts && alts[pos] && alts[pos][k] && n < MAX_PHRASES; k++, n++)
            df[n] = wanted(c, n) ? word_docs(c, alts[pos][k]) : 0;
        pos++;
    }
    for (size_t i = 0; i < q->n_terms && n < MAX_PHRASES; i++)
        if (q->terms[i].exclude)
            df[n++] = -1;
    return n;
}

/* The same for store_fts_match(q, 2, alts): group k skips term k, each term followed
 * by its alternatives, then the excluded terms. */
static size_t phrase_docs_all_but_one(struct df_ctx *c, const struct vt_query *q,
                                      char **const *alts, double *df)
{
    const struct vt_qterm *pos[VT_QUERY_MAX_TERMS];
    double word[VT_QUERY_MAX_TERMS];
    int have[VT_QUERY_MAX_TERMS] = {0};
    size_t n = 0, np = 0;

    for (size_t i = 0; i < q->n_terms; i++)
        if (!q->terms[i].exclude)
            pos[np++] = &q->terms[i];
    for (size_t skip = 0; skip < np; skip++)
        for (size_t i = 0; i < np && n < MAX_PHRASES; i++) {
            if (i == skip)
                continue;
            if (wanted(c, n) && !have[i]) {
                word[i] = qterm_docs(c, pos[i]);
                have[i] = !c->collect;
            }
            df[n] = wanted(c, n) ? word[i] : 0;
            n++;
            for (size_t k = 0; alts && alts[i] && alts[i][k] && n < MAX_PHRASES; k++, n++)
                df[n] = wanted(c, n) ? word_docs(c, alts[i][k]) : 0;
        }
    for (size_t i = 0; i < q->n_terms && n < MAX_PHRASES; i++)
        if (q->terms[i].exclude)
            df[n++] = -1;
    return n;
}

/*
 * The document frequencies of the phrases of r's query that used marks (NULL: all) into
 * df: their count. On PostgreSQL the words the cache lacks are counted first in one
 * statement (one round trip and one plan for them all, not one each) and cached; SQLite
 * counts in-process, one by one. As in word_docs, a failure is not the search's.
 */
size_t store_query_docs(struct vt_store *s, const struct vt_store_search *r,
                        const unsigned char *used, double *df)
{
    int all_but_one = r->match == VT_MATCH_ALL_BUT_ONE;
    struct df_batch b = {{0}, 0};
    struct df_ctx c = {s, used, &b};
    long long docs[DF_BATCH];

    if (s->be->terms_docs) {
        if (all_but_one)
            phrase_docs_all_but_one(&c, r->q, r->alts, df);
        else
            phrase_docs(&c, r->q, r->alts, df);
        if (b.n && !s->be->terms_docs(s, b.w, b.n, DF_WINDOW, docs))
            for (size_t i = 0; i < b.n; i++)
                df_put(s, b.w[i], docs[i]);
    }
    c.collect = NULL;
    return all_but_one ? phrase_docs_all_but_one(&c, r->q, r->alts, df)
                       : phrase_docs(&c, r->q, r->alts, df);
}

/*
 * Best first; rows that score the same in video order, then by time (then by row, so the
 * order is total): the same query gives the same order on every run and every page, and
 * a tie is not decided by which video was indexed last.
 */
static int by_raw_score(const void *a, const void *b)
{
    const struct fts_id *x = a, *y = b;
    int c;

    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    c = strcmp(x->video_id, y->video_id);
    if (c)
        return c;
    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

/*
 * Rows sorted by score: the rows of each run of equal scores get their video and start and
 * are put in that order (by_raw_score). Only ties are read, so a query whose scores differ
 * costs nothing more; one whose rows all score the same (one phrase in a thousand cues)
 * costs a row lookup each.
 */
static int tie_places(struct vt_store *s, struct fts_id *v, size_t n)
{
    int rc = 0;

    for (size_t i = 0, j; i < n && !rc; i = j) {
        struct db_stmt *st = NULL;

        for (j = i + 1; j < n && v[j].score == v[i].score;)
            j++;
        if (j - i < 2) {
            /* a row of its own score has no place: what PostgreSQL's rows came with goes */
            v[i].video_id[0] = '\0';
            v[i].start_s = 0;
            continue;
        }
        if (s->conn.pg) {
            /* PostgreSQL's rows came with their place */
            qsort(v + i, j - i, sizeof(*v), by_raw_score);
            continue;
        }
        rc = store_prepare(s, "SELECT video_id, start_s FROM docs WHERE id = ?", &st);
        for (size_t k = i; k < j && !rc; k++) {
            db_bind_int64(st, 1, v[k].rowid);
            rc = db_step(st);
            if (rc == DB_ROW) {
                const char *id = db_col_text(st, 0);

                snprintf(v[k].video_id, sizeof(v[k].video_id), "%s", id ? id : "");
                v[k].start_s = db_col_double(st, 1);
            }
            rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, "search");
            db_reset(st);
        }
        if (st)
            store_finish(s, st);
        qsort(v + i, j - i, sizeof(*v), by_raw_score);
    }
    return rc;
}

int vt_store_search(struct vt_store *s, const struct vt_store_search *r, struct vt_store_hit **out,
                    size_t *n, int *partial)
{
    int all_but_one = r->match == VT_MATCH_ALL_BUT_ONE;
    char *m = s->conn.pg ? NULL : store_fts_match(r->q, all_but_one ? 2 : 0, r->alts);
    double df[MAX_PHRASES];
    struct fts_id *ids = NULL;
    size_t n_df, n_ids = 0;
    int rc, phrase_n = 0;

    *out = NULL;
    *n = 0;
    *partial = 0;
    if (!m && (!s->conn.pg || !vt_query_positive(r->q)))
        return 0;
    if (r->exact_phrase) {
        size_t plain = vt_query_plain_words(r->q, NULL);

        phrase_n = plain >= 2 ? (int)plain : 0;
    }
    /* the backends differ only in finding and scoring the rows; PostgreSQL scores in C
     * after finding them, so it counts only the frequencies of phrases found in them */
    if (s->be->rows) {
        rc = s->be->rows(s, r, phrase_n, partial, &ids, &n_ids);
    } else {
        n_df = store_query_docs(s, r, NULL, df);
        rc = fts_rows(s, m, r->source, r->video, df, n_df, phrase_n, r->cap, r->deadline_s, partial,
                      &ids, &n_ids);
    }
    free(m);
    if (rc)
        return rc;
    if (n_ids)
        qsort(ids, n_ids, sizeof(*ids), by_raw_score);
    rc = tie_places(s, ids, n_ids);
    if (rc) {
        free(ids);
        return rc;
    }
    *out = vt_xcalloc(n_ids ? n_ids : 1, sizeof(**out));
    for (size_t i = 0; i < n_ids; i++) {
        (*out)[i].rowid = ids[i].rowid;
        (*out)[i].exact = ids[i].score >= VT_PHRASE_BONUS;
        (*out)[i].score = fmod(ids[i].score, VT_PHRASE_BONUS);
        memcpy((*out)[i].video_id, ids[i].video_id, sizeof(ids[i].video_id));
        (*out)[i].start_s = ids[i].start_s;
    }
    *n = n_ids;
    free(ids);
    return 0;
}
