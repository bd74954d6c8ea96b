/*
 * Words across a cue boundary: the search verb on cue pairs (vt_store_search with
 * r->pairs, store.h). A speaker pauses mid-phrase and the recogniser cuts the cue there,
 * so "still more / respectable" is two rows of docs and no row holds both words. The
 * table `pairs` (migration 9, kept by triggers on docs) holds each speech cue with the
 * next cue of its video, one text, under its own index (FTS5's pairs_fts; on PostgreSQL
 * the two rows' tsvectors joined, the second's positions after the first's). A pair
 * matches as a row would (all the terms, or the approximate tier's: each term or one of its
 * alternatives, all but one of three words or more); it is kept only when the terms stand
 * across the boundary and neither cue holds as many alone (that cue is a hit of its own),
 * which is decided here in C from the pair's text, the same on both backends. It is not scored by
 * BM25 (the pair index has statistics of its own): its score is 0, exact when the plain words stand
 * in sequence, so pairs rank below the rows of their tier, in video and time order.
 */
#include "base/util.h"
#include "store/db/db.h"
#include "store/store_int.h"
#include "text/query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tokens of a pair's text: the first cue's are [0, n_first), the next cue's after. */
struct ptoks {
    char *buf;
    size_t *off;
    size_t n, len, cap, cap_off, n_first;
};

static void ptok_add(void *user, const char *tok, size_t n)
{
    struct ptoks *t = user;

    vt_grow((void **)&t->buf, &t->cap, t->len + n + 1, 1);
    vt_grow((void **)&t->off, &t->cap_off, t->n + 1, sizeof(*t->off));
    memcpy(t->buf + t->len, tok, n);
    t->buf[t->len + n] = '\0';
    t->off[t->n++] = t->len;
    t->len += n + 1;
}

/* Does term q (or one of its alternatives alt, for a single word) stand at token at,
 * wholly inside [at, end)? (A prefix ends the last word.) */
static int term_at(const struct ptoks *t, const struct vt_qterm *q, char *const *alt, size_t at,
                   size_t end)
{
    const char *tok;
    size_t k;

    if (!q->n_words || at + q->n_words > end)
        return 0;
    for (k = 0; k < q->n_words; k++) {
        const char *w = q->words[k];

        tok = t->buf + t->off[at + k];
        if (q->prefix && k + 1 == q->n_words ? strncmp(tok, w, strlen(w)) : strcmp(tok, w))
            break;
    }
    if (k == q->n_words)
        return 1;
    for (tok = t->buf + t->off[at]; alt && q->n_words == 1 && *alt; alt++)
        if (!strcmp(tok, *alt))
            return 1;
    return 0;
}

static int term_in(const struct ptoks *t, const struct vt_qterm *q, char *const *alt, size_t from,
                   size_t end)
{
    for (size_t at = from; at < end; at++)
        if (term_at(t, q, alt, at, end))
            return 1;
    return 0;
}

/* Where the last occurrence of q starts (it may run into the next cue), or -1. */
static long last_start(const struct ptoks *t, const struct vt_qterm *q, char *const *alt)
{
    for (size_t at = t->n; at-- > 0;)
        if (term_at(t, q, alt, at, t->n))
            return (long)at;
    return -1;
}

/* The plain words (phrase_n of them) in sequence, as typed, starting in the first cue:
 * where, or -1. */
static long sequence_at(const struct ptoks *t, const struct vt_query *q, int phrase_n)
{
    const struct vt_qterm *plain[VT_QUERY_MAX_TERMS];
    size_t np = vt_query_plain_words(q, plain);

    if (phrase_n < 2 || np != (size_t)phrase_n)
        return -1;
    for (size_t at = t->n_first; at-- > 0;) {
        size_t k = 0;

        while (k < np && term_at(t, plain[k], NULL, at + k, t->n))
            k++;
        if (k == np)
            return (long)at;
    }
    return -1;
}

/* The positive terms of the pair found in it, in its first cue and in the next, and the
 * latest start from which the rest still holds those found (-1: none); or -1 when an
 * excluded term is in the pair. */
struct pair_count {
    size_t pair, first, next, terms;
    long from;
};

static int count_terms(const struct ptoks *t, const struct vt_store_search *r, struct pair_count *c)
{
    size_t pos = 0;

    memset(c, 0, sizeof(*c));
    c->from = -1;
    for (size_t i = 0; i < r->q->n_terms; i++) {
        const struct vt_qterm *term = &r->q->terms[i];
        char *const *alt = !term->exclude && r->alts ? r->alts[pos] : NULL;
        long last = last_start(t, term, alt);

        if (term->exclude) {
            if (last >= 0)
                return -1;
            continue;
        }
        pos++;
        c->terms++;
        if (last < 0)
            continue;
        c->pair++;
        c->first += term_in(t, term, alt, 0, t->n_first);
        c->next += term_in(t, term, alt, t->n_first, t->n);
        if (c->from < 0 || last < c->from)
            c->from = last;
    }
    return 0;
}

int store_pair_check(const struct vt_store_search *r, const char *text, size_t split, int phrase_n,
                     int *exact, int *at)
{
    struct ptoks t = {0};
    struct pair_count c;
    size_t len = strlen(text), need;
    long seq;
    int ok;

    *exact = 0;
    *at = 0;
    if (!split || split > len || !vt_query_positive(r->q))
        return 0;
    vt_tokenize(text, split - 1, ptok_add, &t);
    t.n_first = t.n;
    vt_tokenize(text + split, len - split, ptok_add, &t);
    ok = !count_terms(&t, r, &c);
    need = r->match == VT_MATCH_ALL_BUT_ONE ? c.terms - 1 : c.terms;
    /* a cue holding the terms alone is a hit of its own, not a pair's */
    ok = ok && need && c.pair >= need && c.first < need && c.next < need && c.from >= 0 &&
         (size_t)c.from < t.n_first;
    if (ok) {
        seq = sequence_at(&t, r->q, phrase_n);
        *exact = seq >= 0;
        *at = (int)(seq >= 0 ? seq : c.from);
    }
    free(t.buf);
    free(t.off);
    return ok;
}

/* The pairs found so far. */
struct pair_found {
    struct vt_store_hit *v;
    size_t n, cap;
    int raw; /* rows the index matched, kept or not (the cap counts them) */
};

static void pair_row(struct db_stmt *st, const struct vt_store_search *r, int phrase_n,
                     struct pair_found *f)
{
    const char *text = db_col_text(st, 6), *video = db_col_text(st, 3);
    long long split = db_col_int64(st, 5);
    struct vt_store_hit *h;
    int exact, at;

    f->raw++;
    if (!text || !video || split <= 0 ||
        !store_pair_check(r, text, (size_t)split, phrase_n, &exact, &at))
        return;
    vt_grow((void **)&f->v, &f->cap, f->n + 1, sizeof(*f->v));
    h = &f->v[f->n++];
    memset(h, 0, sizeof(*h));
    h->rowid = db_col_int64(st, 1);
    h->next = db_col_int64(st, 2);
    snprintf(h->video_id, sizeof(h->video_id), "%s", video);
    h->start_s = db_col_double(st, 4);
    h->exact = exact;
    h->score = 0;
    h->at = at;
}

/*
 * The pairs' statement: the newest matches, at most a limit; on SQLite in (lo, hi], read in
 * growing windows (pair_windows), on PostgreSQL all at once, one round trip, planned for its
 * tsquery (the GIN index for rare words, the newest ids for common ones): the same rows.
 */
static const char *pair_sql(struct vt_store *s, int by_video)
{
    if (!s->conn.pg)
        return "SELECT p.id, p.doc_id, p.next_id, p.video_id, p.start_s, p.split, p.text"
               " FROM pairs_fts JOIN pairs p ON p.id = pairs_fts.rowid WHERE pairs_fts MATCH ?1"
               " AND pairs_fts.rowid > ?2 AND pairs_fts.rowid <= ?3"
               " ORDER BY pairs_fts.rowid DESC LIMIT ?4";
    return by_video ? "SELECT id, doc_id, next_id, video_id, start_s, split, text FROM pairs"
                      " WHERE tsv @@ CAST(?1 AS tsquery) AND video_id = ?3"
                      " ORDER BY id DESC LIMIT ?2"
                    : "SELECT id, doc_id, next_id, video_id, start_s, split, text FROM pairs"
                      " WHERE tsv @@ CAST(?1 AS tsquery) ORDER BY id DESC LIMIT ?2";
}

/* PostgreSQL: the newest r->cap matches in one statement. */
static int pair_rows_pg(struct vt_store *s, const struct vt_store_search *r, const char *match,
                        int phrase_n, struct pair_found *f)
{
    int by_video = r->video && *r->video, rc;
    struct db_stmt *st = NULL;

    if (s->conn.ops->prepare(&s->conn, pair_sql(s, by_video), 0, &st))
        return store_fail(s, "search pairs");
    db_bind_text(st, 1, match);
    db_bind_int(st, 2, r->cap);
    if (by_video)
        db_bind_text(st, 3, r->video);
    while ((rc = db_step(st)) == DB_ROW)
        pair_row(st, r, phrase_n, f);
    rc = rc == DB_DONE ? 0 : store_fail(s, "search pairs");
    st->ops->finalize(st);
    return rc;
}

/* The match for the pair index: FTS5's text (the video filter in it) or a tsquery. */
static char *pair_match(struct vt_store *s, const struct vt_store_search *r)
{
    struct store_phrase ph[STORE_MAX_PHRASES];
    struct vt_sb m = {0};
    size_t n_ph;
    char *fts;
    int mode = r->match == VT_MATCH_ALL_BUT_ONE ? 2 : 0;

    if (s->conn.pg)
        return store_pg_tsquery(r->q, mode, r->alts, ph, STORE_MAX_PHRASES, &n_ph);
    fts = store_fts_match(r->q, mode, r->alts);
    if (!fts)
        return NULL;
    vt_sb_addf(&m, "(%s)", fts);
    free(fts);
    if (r->video && *r->video) {
        char *meta = store_meta_tokens("x", r->video);

        vt_sb_addf(&m, " AND meta : \"%s\"", strchr(meta, ' ') + 1);
        free(meta);
    }
    return vt_sb_detach(&m);
}

/* SQLite, as fts_rows: newest first in growing windows of ids, the deadline looked at
 * between them. */
static int pair_windows(struct vt_store *s, const struct vt_store_search *r, const char *match,
                        int phrase_n, int *partial, struct pair_found *f)
{
    long long hi = 0, window = 20000;
    struct db_stmt *st = NULL;
    /* SQLite's statements from the handle's cache: preparing them cost more than a
     * rare word's match */
    int rc = store_prepare(s, "SELECT coalesce(max(id), 0) FROM pairs", &st);

    if (rc)
        return rc;
    if (db_step(st) == DB_ROW)
        hi = db_col_int64(st, 0);
    store_finish(s, st);
    st = NULL;
    rc = store_prepare(s, pair_sql(s, 0), &st);
    if (rc)
        return rc;
    while (!rc && hi > 0 && f->raw < r->cap) {
        long long lo = hi > window ? hi - window : 0;

        db_bind_text(st, 1, match);
        db_bind_int64(st, 2, lo);
        db_bind_int64(st, 3, hi);
        db_bind_int(st, 4, r->cap - f->raw);
        while ((rc = db_step(st)) == DB_ROW)
            pair_row(st, r, phrase_n, f);
        rc = rc == DB_DONE ? 0 : store_fail(s, "search pairs");
        db_reset(st);
        hi = lo;
        window *= 4;
        if (hi > 0 && r->deadline_s > 0 && vt_monotonic_s() > r->deadline_s) {
            *partial = 1;
            break;
        }
    }
    store_finish(s, st);
    return rc;
}

static int utf8_ok(const char *w)
{
    for (size_t n = strlen(w), k; n; w += k, n -= k)
        if (!(k = vt_utf8_decode(w, n, NULL)))
            return 0;
    return 1;
}

/* Exact first, then video, time and row: pairs all score the same otherwise. */
static int by_pair(const void *a, const void *b)
{
    const struct vt_store_hit *x = a, *y = b;
    int c;

    if (x->exact != y->exact)
        return x->exact ? -1 : 1;
    c = strcmp(x->video_id, y->video_id);
    if (c)
        return c;
    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

int vt_store_search_pairs(struct vt_store *s, const struct vt_store_search *r,
                          struct vt_store_hit **out, size_t *n, int *partial)
{
    struct pair_found f = {0};
    size_t plain = r->exact_phrase ? vt_query_plain_words(r->q, NULL) : 0;
    int phrase_n = plain >= 2 ? (int)plain : 0; /* as vt_store_search counts the phrase */
    char *match;
    int rc;

    *out = NULL;
    *n = 0;
    *partial = 0;
    if (!vt_query_positive(r->q))
        return 0;
    /* pairs are speech; a filter that is not UTF-8 names no video (PostgreSQL refuses it) */
    if ((r->source && *r->source && strcmp(r->source, "speech")) || r->cap <= 0)
        return 0;
    if (s->conn.pg && r->video && *r->video && !utf8_ok(r->video))
        return 0;
    match = pair_match(s, r);
    if (!match)
        return 0;
    rc = s->conn.pg ? pair_rows_pg(s, r, match, phrase_n, &f)
                    : pair_windows(s, r, match, phrase_n, partial, &f);
    free(match);
    if (rc) {
        free(f.v);
        return rc;
    }
    if (f.n)
        qsort(f.v, f.n, sizeof(*f.v), by_pair);
    *out = f.v ? f.v : vt_xcalloc(1, sizeof(**out));
    *n = f.n;
    return 0;
}
