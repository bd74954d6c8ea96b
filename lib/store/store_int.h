/*
 * Internals shared by the files of the store (lib/store/, its sqlite/ and pg/), and by
 * nothing else: the handle's layout, the backend hooks (struct store_backend), the
 * statement cache's prepare/finish, the one read loop (store_rows, store_read_array) and
 * the small helpers every file of the store uses (store_stmt.c), the FTS5 form of a
 * parsed query (store_fts.c), and the index-row helpers that the row writers
 * (store_rows.c) call in the search side (store_search.c). Only the store's own files
 * (and their unit tests) include this header, since it pulls in <sqlite3.h>; the rest of
 * the program sees store.h alone.
 */
#ifndef VT_STORE_INT_H
#define VT_STORE_INT_H

#include "store/db/db.h"
#include "store/store.h"
#include "text/query.h"

#include <math.h>
#include <sqlite3.h>
#include <stddef.h>

#define DF_CACHE 4096 /* entries of the document-frequency cache (a power of two) */

struct df_entry {
    char *term;
    long long docs;
};

#define STMT_CACHE 64

struct pg_conn;   /* db_pg.c */
struct pg_window; /* store_search_pg.c */
struct fts_id;
struct store_backend;

struct vt_store {
    /* the connection (db.h): its statements (conn.ops), SQLite's (conn.sqlite) or
     * PostgreSQL's (conn.pg, store_pg.c), and the last failure's message (conn.err) */
    struct db_conn conn;
    const struct store_backend *be; /* what its backend does its own way (below) */
    /* statements prepared once and reused (parsing SQL cost more than running it) */
    struct {
        char *sql;
        struct db_stmt *st;
        int out; /* handed out by prepare(), not yet given back by finish() */
    } cache[STMT_CACHE];
    size_t uncached; /* statements from prepare() outside the cache, not yet finished */
    /* document frequencies of indexed terms, counted once per handle (see term_docs) */
    struct df_entry df[DF_CACHE];
    size_t df_used;
    unsigned long commits; /* write transactions committed through this handle */
    int pg_stats;          /* PostgreSQL: docs_stats is there (1), is not (-1), not looked (0) */
    int read_only;         /* opened by vt_store_open_flags(VT_STORE_READ) on a read-only db */
    char *dir;             /* the database's directory, for messages */
    /* PostgreSQL: the index's sizes as read in read transaction tx (pg_conn.read_serial) */
    struct {
        unsigned long tx;
        long long top;
        double rows, tokens;
    } pg_sizes;
    struct pg_window *pg_window; /* PostgreSQL: the newest rows' lexemes (store_search_pg.c) */
    /* vt_store_now: the database's clock less this machine's, and when (monotonic s) it
     * was last measured (0: never) */
    double clock_offset, clock_at;
    /* vt_store_wait_stages: the stages whose notifications wake this handle (0: all) */
    unsigned wake_stages;
};

/*
 * What a backend does its own way beyond the SQL text, set at open: SQLite's in
 * sqlite/store_sqlite.c, PostgreSQL's in pg/store_pg.c. The shared files call a backend
 * through this, never by name, so calls in the store go one way: the open (store.c) and
 * the backends on top, the verbs (store_*.c, the search) below them, the statement
 * helpers (store_stmt.c) and db/ at the bottom. A NULL hook: the shared file's own way
 * (SQLite's FTS5 for the search index, polling for work).
 */
struct store_backend {
    void (*close)(struct vt_store *s); /* first, before the statements are finalized */
    int (*begin)(struct vt_store *s);
    int (*begin_read)(struct vt_store *s);
    int (*commit)(struct vt_store *s);
    void (*rollback)(struct vt_store *s);
    long long (*version)(struct vt_store *s);
    int (*check)(struct vt_store *s, int *ok);
    int (*wait_work)(struct vt_store *s, double timeout_s);
    int (*notify_work)(struct vt_store *s, unsigned stages);
    /* the database's clock: the epoch seconds it reads now (NULL: this machine's) */
    int (*server_time)(struct vt_store *s, double *t);
    /* the search index (store_search.c) */
    int (*screen_docs_refresh)(struct vt_store *s, const char *id);
    int (*title_docs_refresh)(struct vt_store *s, const char *id);
    int (*maintain)(struct vt_store *s, enum vt_maintain how);
    int (*terms_docs)(struct vt_store *s, const char *const *terms, size_t n, long long window,
                      long long *docs);
    int (*rows)(struct vt_store *s, const struct vt_store_search *r, int phrase_n, int *partial,
                struct fts_id **out, size_t *n);
};

/* store_stmt.c: errors, the statement cache and the helpers around it */

/* Record the database's message for what failed and return VT_EIO. */
int store_fail(struct vt_store *s, const char *what);
/* Run sql; a failure says what it was doing ("database: WHAT: why"), never the SQL. */
int store_exec(struct vt_store *s, const char *sql, const char *what);
/* Prepare sql through the statement cache; give it back with store_finish(). */
int store_prepare(struct vt_store *s, const char *sql, struct db_stmt **st);
/* Give back a statement from store_prepare(): reset if cached, finalized otherwise. */
void store_finish(struct vt_store *s, struct db_stmt *st);
/* Bind v, or NULL when v is NULL. */
void store_bind_text(struct db_stmt *st, int i, const char *v);
/* Column i as a string the caller frees, or NULL. */
char *store_col_dup(struct db_stmt *st, int i);
/* Run a statement that returns no rows; gives it back with store_finish(). */
int store_step_done(struct vt_store *s, struct db_stmt *st, const char *what);
/* The same, for statements nobody waits on inside a transaction (db_ops.exec_later,
 * step_later): PostgreSQL sends them with the next statement that needs an answer, in
 * its round trip; a failure then fails that statement or the commit. SQLite runs them now. */
int store_exec_later(struct vt_store *s, const char *sql, const char *what);
int store_step_later(struct vt_store *s, struct db_stmt *st, const char *what);

/*
 * The one read loop. Run the query sql with its parameters bound from the arguments
 * after binds, one letter each: 's' a string (const char *, NULL binds NULL), 'I' an
 * int64_t, 'i' an int, 'd' a double. fn gets the statement on each row and returns
 * non-zero to stop. 0, or the prepare's error, or store_fail(what) when a step failed.
 */
typedef int (*store_row_fn)(void *user, struct db_stmt *st);
int store_rows(struct vt_store *s, const char *sql, const char *what, store_row_fn fn, void *user,
               const char *binds, ...);

/* Rows read into a growing array: store_array_row (a store_row_fn) appends one zeroed
 * item of `size` bytes per row and has read() fill it from the row's columns. On an
 * error the items read so far stay in v for the caller to free. */
struct store_array {
    void *v;
    size_t n, cap, size;
    void (*read)(struct db_stmt *st, void *item);
};
#define STORE_ARRAY(type, fn)                                                                      \
    {                                                                                              \
        NULL, 0, 0, sizeof(type), (fn)                                                             \
    }
int store_array_row(void *user, struct db_stmt *st);
/* The rows into a new array of `size`-byte items: 0 with *out (caller-freed) and *n,
 * or an error with *out NULL and *n 0 (the items read are given to release, when not
 * NULL, and freed). binds as for store_rows. */
int store_read_array(struct vt_store *s, const char *sql, const char *what, size_t size,
                     void (*read)(struct db_stmt *st, void *item), void (*release)(void *item),
                     void **out, size_t *n, const char *binds, ...);

/* store_queue.c: tell waiting workers that the stages in the set stages (VT_BIT bits) may
 * have become runnable (PostgreSQL: NOTIFY vidtheque_jobs with their names, delivered at
 * commit; nothing on SQLite, whose workers poll). An empty set is progress only (a stage
 * settled that no stage reads): it wakes those that wait for every stage (`add --wait`),
 * not the workers. */
int store_notify_work(struct vt_store *s, unsigned stages);
/* Bit of a notify_work set: progress only, no stage (VT_STAGE_COUNT < 31). */
#define STORE_NOTIFY_PROGRESS (1u << 31)
/* The stages that stage `name` becoming `state` may make runnable: itself when queued,
 * those that read it when settled (none when running: the caller notifies nothing). */
unsigned store_woken_stages(const char *name, enum vt_state state);
/* PostgreSQL's wait_work and notify_work hooks (store_pg.c) LISTEN vidtheque_jobs once,
 * then wait on the connection's socket; and NOTIFY, deferred to the commit inside a
 * transaction. */

/* store_stage_rows.c: the migrations of migrations.h, and stages' own rows */

/* One migration of migrations.h: its version and its SQL in each dialect. */
struct store_migration {
    int version;
    const char *sqlite, *pg;
};
/* Inside the backend's migration transaction, the schema at version (at least
 * VT_STORE_BASE_VERSION): apply the entries of m past it, in order, each followed by
 * recording its version (SQLite's user_version, PostgreSQL's vt_meta). */
int store_migrate_list(struct vt_store *s, const struct store_migration *m, size_t n, int version);
/* store_migrate_list over migrations.h's list. */
int store_migrate_later(struct vt_store *s, int version);

/* store_search.c: the ranking function and the rows of the search index */

/* Register vtrank() with the connection's FTS5 (at open). */
int store_register_rank(struct vt_store *s);
/* Delete the index rows of one video from one source. */
int store_delete_docs(struct vt_store *s, const char *id, const char *source);
/* The filter tokens of an index row; caller frees. */
char *store_meta_tokens(const char *source, const char *id);
/* Rebuild the "screen" index rows of a video from its frames and OCR lines. */
int store_screen_docs_refresh(struct vt_store *s, const char *id);
/*
 * The moment of frame f's text in shot sh, as start and end columns (both backends): the
 * shot's start for its first frame, else the frame's own time (text that appeared inside
 * the shot), to the shot's next frame or its end. A shot that opens with a gradual
 * transition (a dissolve, a fade) starts on two blended pictures: its first frame's moment
 * starts where the transition ends, or at the frame itself if that comes first, so a hit
 * lands on the stable slide (stage_text_embed.c's screen_span says the same for vectors).
 */
#define STORE_SCREEN_DOC_SPAN                                                                      \
    "CASE WHEN EXISTS (SELECT 1 FROM frames p WHERE p.video_id = f.video_id"                       \
    " AND p.shot = f.shot AND p.idx < f.idx) THEN f.t_s"                                           \
    " WHEN sh.trans_end_s > sh.start_s AND sh.trans_end_s < f.t_s THEN sh.trans_end_s"             \
    " WHEN sh.trans_end_s > sh.start_s THEN f.t_s ELSE sh.start_s END,"                            \
    " coalesce((SELECT min(q.t_s) FROM frames q WHERE q.video_id = f.video_id"                     \
    " AND q.shot = f.shot AND q.idx > f.idx), sh.end_s)"
/* Insert one index row with st (the docs INSERT of the caller), then reset it. */
int store_insert_doc(struct vt_store *s, struct db_stmt *st, const char *id, int ref,
                     double start_s, double end_s, const char *text, const char *meta);

/* store_fts.c: the parsed query as FTS5 text */

struct vt_query;
/*
 * FTS5 MATCH expressions for q; each caller-freed, NULL when q has no positive term.
 *  mode 0: every positive term (AND), excluded ones NOT'ed
 *  mode 1: the positive plain words as one phrase (for "exact phrase first")
 *  mode 2: all but one of the positive terms, for at least three plain words: an OR
 *          of ANDs, each leaving one term out (the terms appear in that order,
 *          term k skipped in the k-th group, each with its alternatives), excluded
 *          ones NOT'ed
 * alts, when non-NULL, gives per positive term index extra alternatives (OR'ed with
 * the term) for approximate matching: alts[i] is a NULL-terminated list or NULL.
 */
char *store_fts_match(const struct vt_query *q, int mode, char **const *alts);

/*
 * Rows (a, b) for a library-wide table (fuzzy, phonetic), gathered while a save runs
 * and written at its end by store_keyrows_write: sorted, without duplicates, in
 * batches. v holds a0, b0, a1, b1 ... (n pairs, each string malloc'd).
 */
struct store_keyrows {
    struct vt_store *s;
    char **v;
    size_t n, cap;
    int rc;
};

void store_keyrows_add(struct store_keyrows *k, const char *a, size_t an, const char *b, size_t bn);
/* Insert k's rows into table (cols: its two columns, "a, b"), conflicts skipped; what
 * names the work in an error. Frees the rows either way; 0 or an error code. */
int store_keyrows_write(struct store_keyrows *k, const char *table, const char *cols,
                        const char *what);
void store_keyrows_release(struct store_keyrows *k);

/* vt_tokenize() callback: gather the token's deletion keys, rows (del, term) of the
 * fuzzy table (user: struct store_keyrows). */
void store_add_fuzzy(void *user, const char *tok, size_t n);

/* vt_tokenize() callback: gather the token's metaphone key, a row (term, key) of the
 * phonetic table (user: struct store_keyrows). */
void store_add_phonetic(void *user, const char *tok, size_t n);

/* ---- PostgreSQL (store_pg.c, store_pg_index.c) ---- */

/* The backends' opens, which set s->be. SQLite's (sqlite/store_sqlite.c); PostgreSQL's
 * (store_pg.c) needs libpq: store.c names it through a weak reference, so only programs
 * that name store_pg_open themselves link it (not the front binary). */
int store_sqlite_open(const char *path, int flags, struct vt_store **out, char *err, size_t errlen);
int store_pg_open(const char *url, int flags, struct vt_store **out, char *err, size_t errlen);

/* store_pg_docs.c, store_pg_index.c: db.h only, callable from the shared row code in
 * any program. */

/* text as a tsvector literal: each vt_tokenize() token in order at positions 1, 2, ...
 * (at most 16383, the last repeated beyond), quoted with ' and \ escaped. Caller frees;
 * "" (the empty tsvector) for text without a token. */
char *store_pg_tsv(const char *text);
/* The docs INSERT for source ("speech", "screen", "title") that store_insert_doc binds:
 * its ?1..?6 and the tsvector as ?7. Static. */
const char *store_pg_doc_insert_sql(const char *source);
int store_pg_screen_docs_refresh(struct vt_store *s, const char *id);
int store_pg_title_docs_refresh(struct vt_store *s, const char *id);
/* Before video id is deleted: drop the phonetic and fuzzy keys only its rows hold. */
int store_pg_forget_words(struct vt_store *s, const char *id);
int store_pg_maintain(struct vt_store *s, enum vt_maintain how);

/* ---- store_pairs.c: words across two adjacent cues ---- */

/*
 * Is the pair text (a cue, a newline, the next cue; the next starts at byte split) a match
 * of r's query across the boundary: every positive term in it (r->match VT_MATCH_ALL_BUT_ONE:
 * all but one), each as typed or as one of its r->alts, no excluded one, and neither cue
 * holding as many alone? Then 1, with *exact when the phrase_n plain words stand in
 * sequence, and *at the first cue's token where the matched words start (the sequence's
 * start, else the latest token from which the rest still holds the terms found).
 */
int store_pair_check(const struct vt_store_search *r, const char *text, size_t split, int phrase_n,
                     int *exact, int *at);

/* ---- ranking, shared by both backends (SQLite's vtrank, store_search_pg.c) ---- */

#define VT_PHRASE_BONUS 1000.0 /* added to the score of a row with the phrase in sequence */

/*
 * One phrase's part of a row's BM25 score: the phrase occurs tf times in the row's text of
 * len tokens; rows rows of avg tokens are indexed, d of them hold the phrase (an estimate:
 * see term_docs). One expression for both backends, so their scores are the same doubles.
 */
static inline double store_bm25_term(double rows, double avg, int len, int tf, double d)
{
    const double k1 = 1.2, b = 0.75;
    double idf;

    if (d > rows)
        d = rows;
    idf = log((rows - d + 0.5) / (d + 0.5) + 1.0);
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg));
}

/* A row found by a search's match: its score, VT_PHRASE_BONUS on top when exact. */
struct fts_id {
    long long rowid;
    double score;
    char video_id[VT_ID_MAX]; /* and start_s: the order of rows that score the same, */
    double start_s;           /* kept only for those (tie_places); "" and 0 for the others */
};

/* ---- store_search_pg.c: the search verbs on PostgreSQL (through db.h) ---- */

/* A phrase of the match expression as FTS5 numbers them (store_fts_match's order): the
 * words (borrowed from the query or its alternatives), the last one a prefix when prefix. */
struct store_phrase {
    char *const *words;
    size_t n;
    int prefix;
    /* all-but-one: the group (1..) and term (1..) the phrase is one of the words of; a
     * group that does not match a row scores none of its phrases there (FTS5 clears
     * their positions) */
    int group, term;
};

#define STORE_MAX_PHRASES (VT_QUERY_MAX_TERMS * (VT_STORE_MAX_ALTS + 1))

/*
 * The tsquery text of q for a search (mode 0: all terms, 2: all but one, as
 * store_fts_match), lexemes quoted; caller frees. NULL when nothing can match (no
 * positive term, fewer than three plain words for mode 2, or words no index holds).
 * ph gets the phrases in FTS5's order (at most max; *n_ph how many), for ranking.
 */
char *store_pg_tsquery(const struct vt_query *q, int mode, char **const *alts,
                       struct store_phrase *ph, size_t max, size_t *n_ph);
/* A lexeme as a tsquery operand ('...', quotes and backslashes escaped) onto sb. */
void store_pg_lexeme(struct vt_sb *sb, const char *w);
/* Does text follow PostgreSQL's tsquery input syntax as this file writes it (quoted
 * operands, & | ! <-> and parentheses, :* after an operand, valid UTF-8)? */
int store_pg_tsquery_valid(const char *text);
/*
 * The score vtrank() gives a row of this text (tokenized as the index is) for phrases
 * ph with document frequencies df (n_df of them, negative: not scored) and the phrase
 * bonus when phrase_n > 1 (see store_search.c); rows and tokens: the index's sizes.
 */
double store_pg_score(const char *text, const struct store_phrase *ph, size_t n_ph,
                      const double *df, size_t n_df, int phrase_n, double rows, double tokens);
/* The document frequencies of the phrases of r's query (in FTS5's order) that used marks
 * (NULL: all; the others get 0) into df (STORE_MAX_PHRASES): how many (store_search.c). */
size_t store_query_docs(struct vt_store *s, const struct vt_store_search *r,
                        const unsigned char *used, double *df);
/* Rows matching r (see fts_rows in store_search.c), scored in C from their text with the
 * frequencies (store_query_docs) of the phrases found in them. */
int store_pg_rows(struct vt_store *s, const struct vt_store_search *r, int phrase_n, int *partial,
                  struct fts_id **out, size_t *n);
/* count_term_docs (store_search.c) on PostgreSQL for terms[0..n-1] in one statement: the
 * rows holding each among the newest `window`, scaled up when they are 100 or more, else
 * counted in all rows, into docs[0..n-1] (0 for a word no index can hold). */
int store_pg_terms_docs(struct vt_store *s, const char *const *terms, size_t n, long long window,
                        long long *docs);
/* Free what store_pg_terms_docs keeps on the handle (at close). */
void store_pg_window_free(struct vt_store *s);
/* A word of the index's tokens in the regex dialect of PostgreSQL: what vt_tokenize
 * counts as word bytes (ASCII letters and digits, anything not ASCII). */
#define PG_TOKEN_RE "'[^\\x01-/:-@[-`{-\\x7f]+'"

/*
 * docs_stats: rows and tokens per video and source, so BM25's row count and average
 * length (store_pg_rows) are a small sum, not a scan of the index. One row per (video,
 * source): the writers of different videos never wait on each other. Statement triggers
 * count what each statement inserted or deleted (its transition tables), the tokens as
 * vt_tokenize cuts them; the INSERT fills it for rows indexed before it existed. SQL for a
 * PostgreSQL migration (it may be appended to the first one's text); idempotent.
 */
#define STORE_PG_SEARCH_DDL                                                                        \
    "CREATE TABLE IF NOT EXISTS docs_stats (video_id text COLLATE \"C\" NOT NULL REFERENCES "      \
    "videos(id)"                                                                                   \
    "  ON DELETE CASCADE, source text COLLATE \"C\" NOT NULL, rows bigint NOT NULL,"               \
    "  tokens bigint NOT NULL, PRIMARY KEY (video_id, source));"                                   \
    "CREATE OR REPLACE FUNCTION docs_stats_count() RETURNS trigger LANGUAGE plpgsql AS $f$"        \
    " BEGIN"                                                                                       \
    "  IF TG_OP <> 'INSERT' THEN"                                                                  \
    "   UPDATE docs_stats t SET rows = t.rows - o.rows, tokens = t.tokens - o.tokens"              \
    "    FROM (SELECT video_id, source, count(*) AS rows,"                                         \
    "     sum(regexp_count(text, " PG_TOKEN_RE ")) AS tokens FROM old_docs GROUP BY 1, 2) o"       \
    "    WHERE t.video_id = o.video_id AND t.source = o.source;"                                   \
    "  END IF;"                                                                                    \
    "  IF TG_OP <> 'DELETE' THEN"                                                                  \
    "   INSERT INTO docs_stats AS t (video_id, source, rows, tokens)"                              \
    "    SELECT video_id, source, count(*), sum(regexp_count(text, " PG_TOKEN_RE "))"              \
    "    FROM new_docs GROUP BY 1, 2"                                                              \
    "    ON CONFLICT (video_id, source) DO UPDATE SET rows = t.rows + excluded.rows,"              \
    "     tokens = t.tokens + excluded.tokens;"                                                    \
    "  END IF;"                                                                                    \
    "  RETURN NULL;"                                                                               \
    " END $f$;"                                                                                    \
    "CREATE OR REPLACE TRIGGER docs_stats_ins AFTER INSERT ON docs REFERENCING NEW TABLE AS"       \
    " new_docs FOR EACH STATEMENT EXECUTE FUNCTION docs_stats_count();"                            \
    "CREATE OR REPLACE TRIGGER docs_stats_del AFTER DELETE ON docs REFERENCING OLD TABLE AS"       \
    " old_docs FOR EACH STATEMENT EXECUTE FUNCTION docs_stats_count();"                            \
    "CREATE OR REPLACE TRIGGER docs_stats_upd AFTER UPDATE ON docs REFERENCING OLD TABLE AS"       \
    " old_docs NEW TABLE AS new_docs FOR EACH STATEMENT EXECUTE FUNCTION docs_stats_count();"      \
    "INSERT INTO docs_stats (video_id, source, rows, tokens)"                                      \
    " SELECT video_id, source, count(*), sum(regexp_count(text, " PG_TOKEN_RE "))"                 \
    " FROM docs GROUP BY 1, 2 ON CONFLICT (video_id, source) DO UPDATE"                            \
    " SET rows = excluded.rows, tokens = excluded.tokens;"
/* Run STORE_PG_SEARCH_DDL (inside the caller's transaction). */
int store_pg_search_schema(struct vt_store *s);

#endif
