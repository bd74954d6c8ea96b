/*
 * The search side of the PostgreSQL store: the parsed query (query.h) as a tsquery
 * for the docs table's GIN index, and the ranking of the rows it finds. Only the
 * finding differs from SQLite: the document-frequency estimates, the sort and the
 * order of ties are store_search.c's, shared.
 *
 * Ranking is vtrank()'s BM25 computed here in C from each candidate row's text: the
 * same tokens (vt_tokenize, which also built the row's tsvector), the same phrases in
 * the order FTS5 numbers them, the same k1, b and phrase bonus, one expression
 * (store_bm25_term) for both. ts_rank_cd would rank by another formula (cover density,
 * no document frequencies), so SQLite and PostgreSQL would order the same hits
 * differently; a cue's text is short, so tokenizing the few hundred rows a search
 * ranks costs less than the round trip. The index's row count and total length
 * (BM25's average) come from docs_stats, kept by triggers (store_pg_search_schema).
 *
 * User input never reaches PostgreSQL as syntax: the tsquery is written here from
 * the query's tokens, each a quoted lexeme, and travels as one parameter.
 */
#include "store/db/db_pg.h"
#include "text/query.h"
#include "store/store_int.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PostgreSQL's longest lexeme (MAXSTRLEN); the tokenizer's are far shorter */
#define PG_MAX_LEXEME 2047

/* ---- the tsquery ---- */

/* Can the index hold w? Words that are not valid UTF-8 (the database's encoding) or
 * longer than a lexeme never reached it, and PostgreSQL would refuse them in a query. */
static int lexeme_ok(const char *w)
{
    size_t n = strlen(w);

    if (!n || n > PG_MAX_LEXEME)
        return 0;
    for (size_t k; n; w += k, n -= k)
        if (!(k = vt_utf8_decode(w, n, NULL)))
            return 0;
    return 1;
}

void store_pg_lexeme(struct vt_sb *sb, const char *w)
{
    vt_sb_addc(sb, '\'');
    for (; *w; w++) {
        if (*w == '\'' || *w == '\\')
            vt_sb_addc(sb, *w == '\'' ? '\'' : '\\');
        vt_sb_addc(sb, *w);
    }
    vt_sb_addc(sb, '\'');
}

static int phrase_ok(const struct store_phrase *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (!lexeme_ok(p->words[i]))
            return 0;
    return p->n > 0;
}

/* 'a' <-> 'b' <-> 'c':* */
static void add_phrase(struct vt_sb *sb, const struct store_phrase *p)
{
    vt_sb_addc(sb, '(');
    for (size_t i = 0; i < p->n; i++) {
        if (i)
            vt_sb_adds(sb, " <-> ");
        store_pg_lexeme(sb, p->words[i]);
    }
    if (p->prefix)
        vt_sb_adds(sb, ":*");
    vt_sb_addc(sb, ')');
}

struct builder {
    struct store_phrase *ph;
    size_t max, n; /* phrases kept, and counted (as FTS5 numbers them) */
};

static struct store_phrase phrase_of(char *const *words, size_t n, int prefix)
{
    struct store_phrase p = {words, n, prefix, 0, 0};

    return p;
}

static void note_phrase(struct builder *b, struct store_phrase p)
{
    if (b->n < b->max)
        b->ph[b->n] = p;
    b->n++;
}

/* The term or one of its alternatives, onto sb: 0 when none of them can match. */
static int add_term(struct vt_sb *sb, struct builder *b, const struct vt_qterm *t, char *const *alt,
                    int group, int term)
{
    struct store_phrase p = phrase_of(t->words, t->n_words, t->prefix);
    size_t any = 0;

    p.group = group;
    p.term = term;
    vt_sb_addc(sb, '(');
    note_phrase(b, p);
    if (phrase_ok(&p)) {
        add_phrase(sb, &p);
        any++;
    }
    for (size_t k = 0; alt && alt[k]; k++) {
        p = phrase_of(&alt[k], 1, 0);
        p.group = group;
        p.term = term;
        note_phrase(b, p);
        if (!phrase_ok(&p))
            continue;
        if (any++)
            vt_sb_adds(sb, " | ");
        add_phrase(sb, &p);
    }
    vt_sb_addc(sb, ')');
    return any > 0;
}

/* Every positive term (mode 0) into sb: 0 when one of them can match nothing. */
static int add_all(struct vt_sb *sb, struct builder *b, const struct vt_query *q,
                   char **const *alts)
{
    size_t pos = 0;
    int ok = 1;

    for (size_t i = 0; i < q->n_terms; i++) {
        if (q->terms[i].exclude)
            continue;
        if (pos)
            vt_sb_adds(sb, " & ");
        ok &= add_term(sb, b, &q->terms[i], alts ? alts[pos] : NULL, 0, 0);
        pos++;
    }
    return ok;
}

/* All but one of three or more plain words (mode 2): the groups that can match. */
static int add_all_but_one(struct vt_sb *sb, struct builder *b, const struct vt_query *q,
                           char **const *alts)
{
    const struct vt_qterm *plain[VT_QUERY_MAX_TERMS];
    size_t np = vt_query_plain_words(q, plain), groups = 0;

    if (np < 3)
        return 0;
    vt_sb_addc(sb, '(');
    for (size_t skip = 0; skip < np; skip++) {
        struct vt_sb g = {0};
        int ok = 1;

        for (size_t i = 0, k = 0; i < np; i++) {
            if (i == skip)
                continue;
            if (k++)
                vt_sb_adds(&g, " & ");
            ok &= add_term(&g, b, plain[i], alts ? alts[i] : NULL, (int)skip + 1, (int)i + 1);
        }
        if (ok) {
            vt_sb_adds(sb, groups++ ? " | (" : "(");
            vt_sb_adds(sb, g.buf);
            vt_sb_addc(sb, ')');
        }
        vt_sb_release(&g);
    }
    vt_sb_addc(sb, ')');
    return groups > 0;
}

char *store_pg_tsquery(const struct vt_query *q, int mode, char **const *alts,
                       struct store_phrase *ph, size_t max, size_t *n_ph)
{
    struct builder b = {ph, max, 0};
    struct vt_sb sb = {0};
    int ok;

    *n_ph = 0;
    if (!vt_query_positive(q))
        return NULL;
    vt_sb_addc(&sb, '(');
    ok = mode == 2 ? add_all_but_one(&sb, &b, q, alts) : add_all(&sb, &b, q, alts);
    vt_sb_addc(&sb, ')');
    for (size_t i = 0; ok && i < q->n_terms; i++) {
        const struct vt_qterm *t = &q->terms[i];
        struct store_phrase p = phrase_of(t->words, t->n_words, t->prefix);

        if (!t->exclude)
            continue;
        note_phrase(&b, p);
        /* a phrase no index can hold excludes nothing */
        if (phrase_ok(&p)) {
            vt_sb_adds(&sb, " & !");
            add_phrase(&sb, &p);
        }
    }
    if (!ok) {
        vt_sb_release(&sb);
        return NULL;
    }
    *n_ph = b.n < max ? b.n : max;
    return vt_sb_detach(&sb);
}

/* ---- the tsquery syntax, as PostgreSQL reads it (for the fuzz target and the tests) ---- */

struct tsq_parse {
    const char *p;
    int depth;
};

static void skip_space(struct tsq_parse *t)
{
    while (*t->p == ' ' || *t->p == '\t' || *t->p == '\n' || *t->p == '\r')
        t->p++;
}

/* A quoted operand ('' and \x escape), not empty, not too long, then an optional :*. */
static int tsq_operand(struct tsq_parse *t)
{
    size_t n = 0;

    if (*t->p++ != '\'')
        return 0;
    for (;;) {
        if (!*t->p)
            return 0;
        if (*t->p == '\'' && t->p[1] == '\'') {
            t->p += 2;
        } else if (*t->p == '\'') {
            t->p++;
            break;
        } else if (*t->p == '\\') {
            if (!t->p[1])
                return 0;
            t->p += 2;
        } else {
            t->p++;
        }
        n++;
    }
    if (!n || n > PG_MAX_LEXEME)
        return 0;
    if (t->p[0] == ':' && t->p[1] == '*')
        t->p += 2;
    return 1;
}

static int tsq_or(struct tsq_parse *t);

static int tsq_unary(struct tsq_parse *t)
{
    skip_space(t);
    if (*t->p == '!') {
        t->p++;
        return tsq_unary(t);
    }
    if (*t->p == '(') {
        int ok;

        if (++t->depth > 1000)
            return 0;
        t->p++;
        ok = tsq_or(t);
        skip_space(t);
        t->depth--;
        return ok && *t->p++ == ')';
    }
    return tsq_operand(t);
}

static int tsq_phrase(struct tsq_parse *t)
{
    if (!tsq_unary(t))
        return 0;
    for (;;) {
        skip_space(t);
        if (strncmp(t->p, "<->", 3))
            return 1;
        t->p += 3;
        if (!tsq_unary(t))
            return 0;
    }
}

static int tsq_binary(struct tsq_parse *t, char op, int (*next)(struct tsq_parse *))
{
    if (!next(t))
        return 0;
    for (;;) {
        skip_space(t);
        if (*t->p != op)
            return 1;
        t->p++;
        if (!next(t))
            return 0;
    }
}

static int tsq_and(struct tsq_parse *t)
{
    return tsq_binary(t, '&', tsq_phrase);
}

static int tsq_or(struct tsq_parse *t)
{
    return tsq_binary(t, '|', tsq_and);
}

int store_pg_tsquery_valid(const char *text)
{
    struct tsq_parse t = {text, 0};
    size_t n = strlen(text);

    for (const char *w = text, *end = text + n; w < end;) {
        size_t k = vt_utf8_decode(w, (size_t)(end - w), NULL);

        if (!k)
            return 0;
        w += k;
    }
    if (!tsq_or(&t))
        return 0;
    skip_space(&t);
    return *t.p == '\0';
}

/* ---- ranking ---- */

struct tokens {
    char *buf;   /* the row's tokens, each NUL-terminated */
    size_t *off; /* where each starts in buf */
    size_t n, cap_off, len, cap;
};

static void add_token(void *user, const char *tok, size_t n)
{
    struct tokens *t = user;

    vt_grow((void **)&t->buf, &t->cap, t->len + n + 1, 1);
    vt_grow((void **)&t->off, &t->cap_off, t->n + 1, sizeof(*t->off));
    memcpy(t->buf + t->len, tok, n);
    t->buf[t->len + n] = '\0';
    t->off[t->n++] = t->len;
    t->len += n + 1;
}

static const char *token(const struct tokens *t, size_t i)
{
    return t->buf + t->off[i];
}

/* Does phrase p stand at token `at`? (FTS5's rule: the last word matches a prefix.) */
static int phrase_at(const struct tokens *t, const struct store_phrase *p, size_t at)
{
    if (at + p->n > t->n)
        return 0;
    for (size_t k = 0; k < p->n; k++) {
        const char *w = p->words[k], *tok = token(t, at + k);

        if (p->prefix && k + 1 == p->n ? strncmp(tok, w, strlen(w)) : strcmp(tok, w))
            return 0;
    }
    return 1;
}

/* vtrank's in_sequence: an instance of phrase 0 followed by one of each phrase 1..n-1. */
static int in_sequence(const struct tokens *t, const struct store_phrase *ph, size_t n_ph, size_t n)
{
    if (n > n_ph)
        return 0;
    for (size_t at = 0; at < t->n; at++) {
        size_t k = 0;

        if (!phrase_at(t, &ph[0], at))
            continue;
        for (k = 1; k < n && phrase_at(t, &ph[k], at + k);)
            k++;
        if (k == n)
            return 1;
    }
    return 0;
}

/* Does every term of the phrases' group stand in the row (one of its phrases, tf[])? */
static int group_matches(const struct store_phrase *ph, size_t n_ph, const int *tf, int group)
{
    for (size_t i = 0; i < n_ph; i++) {
        int found = 0;

        if (ph[i].group != group)
            continue;
        for (size_t k = 0; k < n_ph && !found; k++)
            found = ph[k].group == group && ph[k].term == ph[i].term && tf[k] > 0;
        if (!found)
            return 0;
    }
    return 1;
}

double store_pg_score(const char *text, const struct store_phrase *ph, size_t n_ph,
                      const double *df, size_t n_df, int phrase_n, double rows, double tokens)
{
    struct tokens t = {0};
    double avg = rows > 0 && tokens > 0 ? tokens / rows : 1, score = 0;
    int tf[STORE_MAX_PHRASES];

    if (n_ph > STORE_MAX_PHRASES)
        n_ph = STORE_MAX_PHRASES;
    vt_tokenize(text, strlen(text), add_token, &t);
    for (size_t i = 0; i < n_ph; i++) {
        tf[i] = 0;
        for (size_t at = 0; at < t.n; at++)
            tf[i] += phrase_at(&t, &ph[i], at);
    }
    /* an all-but-one group the row does not satisfy: its phrases are not counted */
    for (size_t i = 0; i < n_ph; i++)
        if (ph[i].group && tf[i] && !group_matches(ph, n_ph, tf, ph[i].group))
            for (size_t k = n_ph; k-- > i;)
                tf[k] = ph[k].group == ph[i].group ? 0 : tf[k];
    if (phrase_n > 1 && in_sequence(&t, ph, n_ph, (size_t)phrase_n))
        score = VT_PHRASE_BONUS;
    for (size_t i = 0; i < n_ph && i < n_df; i++)
        if (df[i] >= 0 && tf[i])
            score += store_bm25_term(rows, avg, (int)t.n, tf[i], df[i]);
    free(t.buf);
    free(t.off);
    return score;
}

/* ---- the statements ---- */

/*
 * A statement planned for its values at every run (PQexecParams), not through the
 * statement cache: a prepared one gets a generic plan after five runs, one plan for every
 * tsquery, which for a rare word walks the whole id window that suits a common word (or
 * the other way round); planning costs a fraction of a millisecond, a wrong plan tens.
 */
static int prepare_planned(struct vt_store *s, const char *sql, struct db_stmt **st)
{
    return s->conn.ops->prepare(&s->conn, sql, 0, st);
}

static void finish_planned(struct db_stmt *st)
{
    if (st)
        st->ops->finalize(st);
}

static int read_pair(struct vt_store *s, const char *sql, const char *what, long long *a,
                     long long *b)
{
    struct db_stmt *st;
    int rc = store_prepare(s, sql, &st);

    if (rc)
        return rc;
    rc = db_step(st);
    if (rc == DB_ROW) {
        *a = db_col_int64(st, 0);
        *b = b ? db_col_int64(st, 1) : 0;
    }
    rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, what);
    store_finish(s, st);
    return rc;
}

/* The newest row's id, and the index's row count and total length in tokens (BM25's);
 * read once per read transaction (a search's tiers ask each), whose snapshot they are. */
static int index_sizes(struct vt_store *s, long long *top, double *rows, double *tokens)
{
    struct pg_conn *c = s->conn.pg;
    struct db_stmt *st;
    long long have = 0, unused;
    int rc = 0, in_read = c->in_tx && c->read_serial == c->tx_serial;

    if (in_read && s->pg_sizes.tx == c->tx_serial) {
        *top = s->pg_sizes.top;
        *rows = s->pg_sizes.rows;
        *tokens = s->pg_sizes.tokens;
        return 0;
    }
    /* looked up once per handle: a table made later only makes this handle slower */
    if (!s->pg_stats) {
        rc = read_pair(s, "SELECT CASE WHEN to_regclass('docs_stats') IS NULL THEN 0 ELSE 1 END, 0",
                       "search statistics", &have, &unused);
        s->pg_stats = rc ? 0 : have ? 1 : -1;
    }
    /* without the table (a schema before it) the sizes are counted: right, and slow */
    if (!rc)
        rc = store_prepare(
            s,
            s->pg_stats > 0
                ? "SELECT (SELECT coalesce(max(id), 0) FROM docs), CAST(coalesce(sum(rows), 0) AS"
                  " bigint), CAST(coalesce(sum(tokens), 0) AS bigint) FROM docs_stats"
                : "SELECT coalesce(max(id), 0), count(*), "
                  "CAST(coalesce(sum(regexp_count(text, " PG_TOKEN_RE ")), 0) AS bigint) FROM docs",
            &st);
    if (rc)
        return rc;
    rc = db_step(st);
    if (rc == DB_ROW) {
        *top = db_col_int64(st, 0);
        *rows = (double)db_col_int64(st, 1);
        *tokens = (double)db_col_int64(st, 2);
    }
    rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, "search statistics");
    store_finish(s, st);
    if (!rc && in_read) {
        s->pg_sizes.tx = c->tx_serial;
        s->pg_sizes.top = *top;
        s->pg_sizes.rows = *rows;
        s->pg_sizes.tokens = *tokens;
    }
    return rc;
}

/*
 * One statement for all the terms a search tier needs, a scalar subquery each: its count in
 * the window (ids above lo), scaled up when it is 100 or more (the scaling written in C by
 * the caller's values: top and window are constants here), else counted in all rows by a
 * subquery the CASE runs only then, as SQLite reads docs_vocab. Planned with the values
 * (prepare_planned), so each count is planned for its word: the GIN index for a rare one,
 * the newest ids for a common one.
 */
static char *terms_docs_sql(size_t n, long long top, long long window)
{
    struct vt_sb sql = {0};

    vt_sb_adds(&sql, "SELECT 0");
    for (size_t i = 0; i < n; i++) {
        size_t q = i + 2;

        if (top <= window)
            vt_sb_addf(&sql, ", (SELECT count(*) FROM docs WHERE tsv @@ CAST(?%zu AS tsquery))", q);
        else
            vt_sb_addf(&sql,
                       ", (SELECT CASE WHEN w.n >= 100 THEN w.n * %lld / %lld"
                       " ELSE (SELECT count(*) FROM docs WHERE tsv @@ CAST(?%zu AS tsquery)) END"
                       " FROM (SELECT count(*) AS n FROM docs WHERE tsv @@ CAST(?%zu AS tsquery)"
                       " AND id > ?1) w)",
                       top, window, q, q);
    }
    return vt_sb_detach(&sql);
}

/*
 * The lexemes of the newest rows (ids above top - window) with how many of them hold each,
 * read once with ts_stat: a term's count in the window is then a lookup for every later
 * search on the handle, where a count per term reads the window's rows again (SQLite reads
 * a posting list; here each is a scan of 20,000 rows). Kept while the newest id stays.
 */
struct pg_lexeme {
    char *word;
    long long ndoc;
};

struct pg_window {
    long long top;
    struct pg_lexeme *v; /* sorted by word (strcmp) */
    size_t n, cap;
};

#define PG_WINDOW_TERMS 4 /* terms to count at once that make reading the window worth it */

void store_pg_window_free(struct vt_store *s)
{
    struct pg_window *w = s->pg_window;

    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i].word);
    free(w->v);
    free(w);
    s->pg_window = NULL;
}

static int by_word(const void *a, const void *b)
{
    return strcmp(((const struct pg_lexeme *)a)->word, ((const struct pg_lexeme *)b)->word);
}

static int window_word(void *user, struct db_stmt *st)
{
    struct pg_window *w = user;
    const char *word = db_col_text(st, 0);

    if (word) {
        vt_grow((void **)&w->v, &w->cap, w->n + 1, sizeof(*w->v));
        w->v[w->n].word = vt_xstrdup(word);
        w->v[w->n++].ndoc = db_col_int64(st, 1);
    }
    return 0;
}

/* Read the window's lexemes for the newest id top into s->pg_window. */
static int window_load(struct vt_store *s, long long top, long long window)
{
    struct pg_window *w = vt_xcalloc(1, sizeof(*w));
    int rc;

    store_pg_window_free(s);
    s->pg_window = w;
    w->top = top;
    /* the bound is a bigint the server formats: no text of ours becomes SQL */
    rc = store_rows(s,
                    "SELECT word, ndoc FROM ts_stat(format('SELECT tsv FROM docs WHERE id > %s',"
                    " CAST(? AS bigint)))",
                    "term statistics", window_word, w, "I", (int64_t)(top - window));
    if (rc) {
        store_pg_window_free(s);
        return rc;
    }
    if (w->n)
        qsort(w->v, w->n, sizeof(*w->v), by_word);
    return 0;
}

/* The rows of the window holding term, from s->pg_window. */
static long long window_count(const struct vt_store *s, const char *term)
{
    struct pg_lexeme key = {(char *)term, 0};
    const struct pg_lexeme *e =
        s->pg_window->n ? bsearch(&key, s->pg_window->v, s->pg_window->n, sizeof(key), by_word)
                        : NULL;

    return e ? e->ndoc : 0;
}

/* The counts of terms[0..n-1] into docs[at[i]], in one statement (terms_docs_sql(n, top,
 * window)): in the window above top - window, scaled, or in all rows when top <= window. */
static int count_terms(struct vt_store *s, const char *const *terms, const size_t *at, size_t n,
                       long long top, long long window, long long *docs)
{
    struct db_stmt *st = NULL;
    char *sql = terms_docs_sql(n, top, window);
    int rc = prepare_planned(s, sql, &st);

    free(sql);
    if (rc)
        return rc;
    db_bind_int64(st, 1, top - window);
    for (size_t i = 0; i < n; i++) {
        struct vt_sb q = {0};

        store_pg_lexeme(&q, terms[i]);
        db_bind_text(st, (int)i + 2, q.buf);
        vt_sb_release(&q);
    }
    rc = db_step(st);
    if (rc == DB_ROW)
        for (size_t i = 0; i < n; i++)
            docs[at[i]] = db_col_int64(st, (int)i + 1);
    rc = rc == DB_ROW || rc == DB_DONE ? 0 : store_fail(s, "term statistics");
    finish_planned(st);
    return rc;
}

/*
 * With the window's lexemes read (or worth reading for these many terms): a term common in
 * the window is scaled from its count there, the others are counted in all rows, in one
 * statement. 1 when done so, 0 when not worth it, or an error code.
 */
static int terms_docs_by_window(struct vt_store *s, const char *const *asked, const size_t *at,
                                size_t m, long long top, long long window, long long *docs)
{
    const char **rare = vt_xcalloc(m + 1, sizeof(*rare));
    size_t *rare_at = vt_xcalloc(m + 1, sizeof(*rare_at)), n_rare = 0;
    int rc = 0;

    if (!s->pg_window || s->pg_window->top != top) {
        if (m < PG_WINDOW_TERMS)
            goto out;
        rc = window_load(s, top, window);
        if (rc)
            goto out;
    }
    for (size_t i = 0; i < m; i++) {
        long long n = window_count(s, asked[i]);

        if (n >= 100) {
            docs[at[i]] = n * top / window;
        } else {
            rare[n_rare] = asked[i];
            rare_at[n_rare++] = at[i];
        }
    }
    /* top 0: counted in all rows */
    rc = n_rare ? count_terms(s, rare, rare_at, n_rare, 0, window, docs) : 0;
    rc = rc ? rc : 1;
out:
    free(rare);
    free(rare_at);
    return rc;
}

int store_pg_terms_docs(struct vt_store *s, const char *const *terms, size_t n, long long window,
                        long long *docs)
{
    const char **asked = vt_xcalloc(n + 1, sizeof(*asked));
    size_t *at = vt_xcalloc(n + 1, sizeof(*at)), m = 0;
    long long top = 0;
    double rows, tokens;
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        docs[i] = 0;
        if (lexeme_ok(terms[i])) {
            asked[m] = terms[i];
            at[m++] = i;
        }
    }
    if (!m)
        goto out;
    rc = index_sizes(s, &top, &rows, &tokens);
    if (!rc && top > window)
        rc = terms_docs_by_window(s, asked, at, m, top, window, docs);
    if (rc) {
        rc = rc < 0 ? rc : 0;
        goto out;
    }
    rc = count_terms(s, asked, at, m, top, window, docs);
out:
    free(asked);
    free(at);
    return rc;
}

/* The newest matches in (lo, hi], source and video filters as the caller asks. */
static const char *rows_sql(int by_source, int by_video)
{
    static const char *const sql[4] = {
        "SELECT id, video_id, start_s, text FROM docs WHERE tsv @@ CAST(? AS tsquery)"
        " AND id > ? AND id <= ? ORDER BY id DESC LIMIT ?",
        "SELECT id, video_id, start_s, text FROM docs WHERE tsv @@ CAST(? AS tsquery)"
        " AND id > ? AND id <= ? AND source = ? ORDER BY id DESC LIMIT ?",
        "SELECT id, video_id, start_s, text FROM docs WHERE tsv @@ CAST(? AS tsquery)"
        " AND id > ? AND id <= ? AND video_id = ? ORDER BY id DESC LIMIT ?",
        "SELECT id, video_id, start_s, text FROM docs WHERE tsv @@ CAST(? AS tsquery)"
        " AND id > ? AND id <= ? AND source = ? AND video_id = ? ORDER BY id DESC LIMIT ?",
    };

    return sql[(by_source ? 1 : 0) + (by_video ? 2 : 0)];
}

/* The rows a search found, with their texts until they are scored. */
struct found {
    struct fts_id *v;
    char **text;
    size_t n, cap, cap_text;
};

static void found_free(struct found *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->text[i]);
    free(f->text);
    free(f->v);
}

static void read_row(struct db_stmt *st, struct found *f)
{
    const char *id = db_col_text(st, 1), *text = db_col_text(st, 3);
    struct fts_id *v;

    vt_grow((void **)&f->v, &f->cap, f->n + 1, sizeof(*f->v));
    vt_grow((void **)&f->text, &f->cap_text, f->n + 1, sizeof(*f->text));
    v = &f->v[f->n];
    v->rowid = db_col_int64(st, 0);
    snprintf(v->video_id, sizeof(v->video_id), "%s", id ? id : "");
    v->start_s = db_col_double(st, 2);
    v->score = 0;
    f->text[f->n++] = vt_xstrdup(text ? text : "");
}

/*
 * As fts_rows: newest first in growing windows of ids, so a word found everywhere is
 * served from the first window and the deadline is looked at between windows.
 */
static int window_rows(struct vt_store *s, const struct vt_store_search *r, const char *tsq,
                       long long hi, int *partial, struct found *f)
{
    int by_source = r->source && *r->source, by_video = r->video && *r->video;
    long long window = 20000;
    struct db_stmt *st = NULL;
    int rc = prepare_planned(s, rows_sql(by_source, by_video), &st);

    while (!rc && hi > 0 && (int)f->n < r->cap) {
        long long lo = hi > window ? hi - window : 0;
        int i = 1;

        db_bind_text(st, i++, tsq);
        db_bind_int64(st, i++, lo);
        db_bind_int64(st, i++, hi);
        if (by_source)
            db_bind_text(st, i++, r->source);
        if (by_video)
            db_bind_text(st, i++, r->video);
        db_bind_int(st, i, r->cap - (int)f->n);
        while ((rc = db_step(st)) == DB_ROW)
            read_row(st, f);
        rc = rc == DB_DONE ? 0 : store_fail(s, "search");
        db_reset(st);
        hi = lo;
        window *= 4;
        if (hi > 0 && r->deadline_s > 0 && vt_monotonic_s() > r->deadline_s) {
            *partial = 1;
            break;
        }
    }
    finish_planned(st);
    return rc;
}

/* Mark in used the phrases that stand somewhere in text: only theirs are scored. */
static void mark_found(const char *text, const struct store_phrase *ph, size_t n_ph,
                       unsigned char *used)
{
    struct tokens t = {0};

    vt_tokenize(text, strlen(text), add_token, &t);
    for (size_t i = 0; i < n_ph; i++)
        for (size_t at = 0; !used[i] && at < t.n; at++)
            used[i] = (unsigned char)phrase_at(&t, &ph[i], at);
    free(t.buf);
    free(t.off);
}

int store_pg_rows(struct vt_store *s, const struct vt_store_search *r, int phrase_n, int *partial,
                  struct fts_id **out, size_t *n)
{
    struct store_phrase ph[STORE_MAX_PHRASES];
    unsigned char used[STORE_MAX_PHRASES] = {0};
    double df[STORE_MAX_PHRASES], rows = 0, tokens = 0;
    struct found f = {0};
    size_t n_ph = 0, n_df;
    char *tsq = store_pg_tsquery(r->q, r->match == VT_MATCH_ALL_BUT_ONE ? 2 : 0, r->alts, ph,
                                 STORE_MAX_PHRASES, &n_ph);
    long long top = 0;
    int rc;

    *out = NULL;
    *n = 0;
    *partial = 0;
    /* a filter that is not UTF-8 names no source or video (PostgreSQL would refuse it) */
    if ((r->source && *r->source && !lexeme_ok(r->source)) ||
        (r->video && *r->video && !lexeme_ok(r->video))) {
        free(tsq);
        return 0;
    }
    if (!tsq || r->cap <= 0) {
        free(tsq);
        return 0;
    }
    rc = index_sizes(s, &top, &rows, &tokens);
    if (!rc)
        rc = window_rows(s, r, tsq, top, partial, &f);
    free(tsq);
    if (rc || !f.n) {
        found_free(&f);
        return rc;
    }
    /*
     * The frequencies of the phrases found in these rows, counted now: a phrase in none of
     * them adds nothing to any score, and an approximate tier's alternatives are many, each
     * a count over the newest rows (what SQLite reads in its index's posting lists costs a
     * scan of rows here).
     */
    for (size_t i = 0; i < f.n; i++)
        mark_found(f.text[i], ph, n_ph, used);
    n_df = store_query_docs(s, r, used, df);
    for (size_t i = 0; i < f.n; i++)
        f.v[i].score = store_pg_score(f.text[i], ph, n_ph, df, n_df, phrase_n, rows, tokens);
    *out = f.v; /* the rows go to the caller, their texts are freed */
    *n = f.n;
    f.v = NULL;
    found_free(&f);
    return 0;
}

/* ---- the schema ---- */

int store_pg_search_schema(struct vt_store *s)
{
    return store_exec(s, STORE_PG_SEARCH_DDL, "create the search statistics");
}
