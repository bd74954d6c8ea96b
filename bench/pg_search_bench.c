/*
 * Search on PostgreSQL next to SQLite on the same rows (issue 15: p50/p99 at 1M cues).
 *
 *   pg_search_bench gen DIR URL VIDEOS CUES   the rows, once: videos through the store into
 *                                             both, the index rows straight into SQLite
 *                                             (DIR/sqlite/library.db, its triggers fill FTS5)
 *                                             and as COPY files (DIR/docs.copy...) for psql
 *   pg_search_bench run DIR URL QUERIES       the query mix through vt_search on each;
 *                                             prints p50/p99 of both and how many queries
 *                                             gave the same hits in the same order
 *
 * The cues are search_bench.c's (a Zipf-like vocabulary, some words in every video); the
 * phonetic and fuzzy tables hold the vocabulary's keys, as indexing would write them.
 */
#include "base/util.h"
#include "bench_words.h"
#include "core/library.h"
#include "store/db/db_pg.h"
#include "store/store_int.h"
#include "text/query.h"
#include "vidtheque.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* store.c opens PostgreSQL through a weak reference: named here, it is linked */
void *const pg_backend = (void *)store_pg_open;

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "pg_search_bench: %s: %s\n", what, why);
    return 1;
}

/* ---- gen ---- */

static int insert_videos(struct vt_store *s, int videos, int per_video)
{
    int rc = vt_store_begin(s);

    for (int v = 0; v < videos && !rc; v++) {
        struct vt_video_rec rec = {0};
        char key[32], title[64];

        snprintf(rec.id, sizeof(rec.id), "v%010d", v);
        snprintf(key, sizeof(key), "bench:%d", v);
        snprintf(title, sizeof(title), "Talk %d", v);
        rec.content_key = key;
        rec.source_kind = "file";
        rec.title = title;
        rec.duration_s = per_video * 8.0;
        rec.index_state = VT_INDEX_READY;
        rec.data_status = VT_DATA_OK;
        rc = vt_store_video_insert(s, &rec);
    }
    if (!rc)
        rc = vt_store_commit(s);
    return rc;
}

/* COPY's text format: \, tab, newline and carriage return escaped */
static void copy_field(FILE *f, const char *v, int last)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '\t' || *v == '\n' || *v == '\r')
            fputc('\\', f);
        fputc(*v == '\t' ? 't' : *v == '\n' ? 'n' : *v == '\r' ? 'r' : *v, f);
    }
    fputc(last ? '\n' : '\t', f);
}

static void write_keys(const char *dir, sqlite3 *db)
{
    char *pp = vt_xasprintf("%s/phonetic.copy", dir), *fp = vt_xasprintf("%s/fuzzy.copy", dir);
    FILE *pf = fopen(pp, "w"), *ff = fopen(fp, "w");
    sqlite3_stmt *ps, *fs;

    sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO phonetic (term, key) VALUES (?, ?)", -1, &ps,
                       NULL);
    sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO fuzzy (del, term) VALUES (?, ?)", -1, &fs, NULL);
    for (size_t i = 0; i < VOCAB; i++) {
        const char *w = vocab[i];
        size_t n = strlen(w);
        char key[16], del[VT_FUZZY_MAX_LEN];

        vt_metaphone(w, key, sizeof(key));
        if (key[0] && n >= 2) {
            fprintf(pf, "%s\t%s\n", w, key);
            sqlite3_bind_text(ps, 1, w, -1, SQLITE_STATIC);
            sqlite3_bind_text(ps, 2, key, -1, SQLITE_STATIC);
            sqlite3_step(ps);
            sqlite3_reset(ps);
        }
        if (n < VT_FUZZY_MIN_LEN || n >= VT_FUZZY_MAX_LEN)
            continue;
        /* each one-letter deletion, then the word itself (duplicates are dropped by the
         * tables' keys: OR IGNORE here, ON CONFLICT in the script) */
        for (size_t d = 0; d <= n; d++) {
            size_t dn = d == n ? n : n - 1;

            memcpy(del, w, d == n ? n : d);
            if (d < n)
                memcpy(del + d, w + d + 1, n - d - 1);
            del[dn] = '\0';
            fprintf(ff, "%s\t%s\n", del, w);
            sqlite3_bind_text(fs, 1, del, -1, SQLITE_STATIC);
            sqlite3_bind_text(fs, 2, w, -1, SQLITE_STATIC);
            sqlite3_step(fs);
            sqlite3_reset(fs);
        }
    }
    sqlite3_finalize(ps);
    sqlite3_finalize(fs);
    fclose(pf);
    fclose(ff);
    free(pp);
    free(fp);
}

static int gen(const char *dir, const char *url, int videos, int per_video)
{
    char err[512], *sdir = vt_xasprintf("%s/sqlite", dir), *db, *path;
    struct vt_store *sq = NULL, *pg = NULL;
    sqlite3 *raw;
    sqlite3_stmt *ins;
    FILE *f;
    int rc;

    vt_mkdir_p(sdir, err, sizeof(err));
    db = vt_xasprintf("%s/library.db", sdir);
    if (vt_store_open(db, &sq, err, sizeof(err)) || vt_store_open(url, &pg, err, sizeof(err)))
        return fail("open", err);
    if (insert_videos(sq, videos, per_video) || insert_videos(pg, videos, per_video))
        return fail("videos", vt_store_errmsg(pg));
    /* the statistics table of the search (store_pg_search_schema), if the migrations
     * have not made it */
    if (vt_store_begin(pg) || store_pg_search_schema(pg) || vt_store_commit(pg))
        return fail("docs_stats", vt_store_errmsg(pg));
    vt_store_close(sq);
    vt_store_close(pg);
    sqlite3_open(db, &raw);
    sqlite3_exec(raw, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL);
    sqlite3_prepare_v2(raw,
                       "INSERT INTO docs (video_id, source, ref, start_s, end_s, text, meta)"
                       " VALUES (?, 'speech', ?, ?, ?, ?, ?)",
                       -1, &ins, NULL);
    path = vt_xasprintf("%s/docs.copy", dir);
    f = fopen(path, "w");
    for (int v = 0; v < videos; v++) {
        char id[32], *meta;

        snprintf(id, sizeof(id), "v%010d", v);
        meta = store_meta_tokens("speech", id);
        if (v % 500 == 0)
            fprintf(stderr, "\rgenerating: %d/%d videos", v, videos);
        for (int c = 0; c < per_video; c++) {
            struct vt_sb sb = {0};
            int n = 6 + (int)(next() % 10);
            char num[64], *tsv;

            for (int k = 0; k < n; k++) {
                if (k)
                    vt_sb_addc(&sb, ' ');
                vt_sb_adds(&sb, word());
            }
            sqlite3_bind_text(ins, 1, id, -1, SQLITE_STATIC);
            sqlite3_bind_int(ins, 2, c);
            sqlite3_bind_double(ins, 3, c * 8.0);
            sqlite3_bind_double(ins, 4, c * 8.0 + 7.0);
            sqlite3_bind_text(ins, 5, sb.buf, -1, SQLITE_STATIC);
            sqlite3_bind_text(ins, 6, meta, -1, SQLITE_STATIC);
            if (sqlite3_step(ins) != SQLITE_DONE)
                return fail("sqlite", sqlite3_errmsg(raw));
            sqlite3_reset(ins);
            copy_field(f, id, 0);
            copy_field(f, "speech", 0);
            snprintf(num, sizeof(num), "%d", c);
            copy_field(f, num, 0);
            snprintf(num, sizeof(num), "%.1f", c * 8.0);
            copy_field(f, num, 0);
            snprintf(num, sizeof(num), "%.1f", c * 8.0 + 7.0);
            copy_field(f, num, 0);
            copy_field(f, sb.buf, 0);
            copy_field(f, meta, 0);
            tsv = store_pg_tsv(sb.buf);
            copy_field(f, tsv, 1);
            free(tsv);
            vt_sb_release(&sb);
        }
        free(meta);
    }
    sqlite3_finalize(ins);
    write_keys(dir, raw);
    rc = sqlite3_exec(raw, "COMMIT; INSERT INTO docs_fts (docs_fts) VALUES ('optimize')", NULL,
                      NULL, NULL);
    if (rc)
        return fail("sqlite", sqlite3_errmsg(raw));
    sqlite3_close(raw);
    fclose(f);
    fprintf(stderr, "\rgenerated %d videos, %d cues\n", videos, videos * per_video);
    free(path);
    free(db);
    free(sdir);
    return 0;
}

/* ---- run ---- */

/* The query mix: one to three words (a third led by a word in every video), a phrase,
 * a prefix, an excluded word, a misheard word (phonetic tier). */
static char *query(int i)
{
    struct vt_sb sb = {0};
    int kind = i % 8, k = kind < 3 ? 1 + kind : 0;

    for (int j = 0; j < k; j++)
        vt_sb_addf(&sb, "%s%s", j ? " " : "", i % 3 == 0 && j == 0 ? vocab[next() % 5] : word());
    if (kind == 3)
        vt_sb_addf(&sb, "\"%s %s\"", word(), word());
    else if (kind == 4)
        vt_sb_addf(&sb, "%.4s*", vocab[15 + next() % 2000]);
    else if (kind == 5)
        vt_sb_addf(&sb, "%s %s -%s", vocab[next() % 5], word(), word());
    else if (kind == 6)
        vt_sb_addf(&sb, "%sx", vocab[15 + next() % 2000]); /* not indexed: approximate tiers */
    else if (kind == 7)
        vt_sb_addf(&sb, "%s %s %s", word(), word(), word());
    return vt_sb_detach(&sb);
}

struct result {
    double *ms;
    double *stmts; /* per query: statements run (SQLite) or round trips (PostgreSQL) */
    char **hits;   /* per query: the hits, one "video start source" line each */
    int *cut;      /* per query: stopped at the time budget */
    long partial;
};

/* SQLite: every statement run (a step after a reset) is traced once */
static int count_stmt(unsigned type, void *user, void *p, void *x)
{
    (void)type;
    (void)p;
    (void)x;
    ++*(unsigned long *)user;
    return 0;
}

/* What the store has sent so far: PostgreSQL's round trips, SQLite's statements. */
static unsigned long statements(struct vt_store *s, const unsigned long *traced)
{
    return s->conn.pg ? s->conn.pg->trips : *traced;
}

static int run_on(struct vt_library *lib, char **queries, int nq, struct result *r)
{
    unsigned long traced = 0;

    r->ms = vt_xcalloc((size_t)nq, sizeof(double));
    r->stmts = vt_xcalloc((size_t)nq, sizeof(double));
    r->hits = vt_xcalloc((size_t)nq, sizeof(char *));
    r->cut = vt_xcalloc((size_t)nq, sizeof(int));
    if (lib->store->conn.sqlite)
        sqlite3_trace_v2(lib->store->conn.sqlite, SQLITE_TRACE_STMT, count_stmt, &traced);
    for (int i = 0; i < nq; i++) {
        struct vt_search_opts o = {.limit = 10};
        struct vt_search_info info;
        struct vt_sb sb = {0};
        struct vt_hit *h;
        size_t n;
        unsigned long s0 = statements(lib->store, &traced);
        double t0 = vt_monotonic_s();

        if (vt_search(lib, queries[i], strlen(queries[i]), &o, &h, &n, &info))
            return fail("search", vt_errmsg(lib));
        r->ms[i] = (vt_monotonic_s() - t0) * 1000;
        r->stmts[i] = (double)(statements(lib->store, &traced) - s0);
        r->partial += info.partial;
        r->cut[i] = info.partial;
        vt_sb_add(&sb, "", 0);
        for (size_t k = 0; k < n; k++)
            vt_sb_addf(&sb, "%s %.1f %s\n", h[k].video_id, h[k].start_s, h[k].source);
        r->hits[i] = vt_sb_detach(&sb);
        vt_hits_free(h, n);
    }
    if (lib->store->conn.sqlite)
        sqlite3_trace_v2(lib->store->conn.sqlite, 0, NULL, NULL);
    return 0;
}

static double mean(const double *v, int n)
{
    double sum = 0;

    for (int i = 0; i < n; i++)
        sum += v[i];
    return n ? sum / n : 0;
}

/* The slowest queries on PostgreSQL, for EXPLAIN ANALYZE: their time, round trips, text. */
static void print_slowest(const struct result *pg, char **queries, int nq, int most)
{
    int *order = vt_xcalloc((size_t)nq, sizeof(int));

    for (int i = 0; i < nq; i++)
        order[i] = i;
    for (int i = 0; i < nq && i < most; i++)
        for (int k = i + 1; k < nq; k++)
            if (pg->ms[order[k]] > pg->ms[order[i]]) {
                int t = order[i];

                order[i] = order[k];
                order[k] = t;
            }
    printf("  slowest on PostgreSQL (ms, round trips, query):\n");
    for (int i = 0; i < nq && i < most; i++)
        printf("    %8.2f %4.0f  %s\n", pg->ms[order[i]], pg->stmts[order[i]], queries[order[i]]);
    free(order);
}

/* The query mix on the library in sdir, its rows on SQLite (url NULL) or on PostgreSQL: the
 * same library directory (media would be on shared storage) with the store handle swapped. */
static int run_backend(const char *sdir, const char *url, char **queries, int nq, struct result *r)
{
    char err[512];
    struct vt_library *lib = vt_library_open(sdir, VT_OPEN_READ, err, sizeof(err));
    struct vt_store *ps;
    int rc;

    if (!lib)
        return fail(url ? "postgresql" : "sqlite", err);
    if (url) {
        if (vt_store_open(url, &ps, err, sizeof(err))) {
            vt_library_close(lib);
            return fail("postgresql", err);
        }
        vt_store_close(lib->store);
        lib->store = ps;
        if (getenv("VT_BENCH_PG_SET"))
            store_exec(ps, getenv("VT_BENCH_PG_SET"), "bench setting");
    }
    rc = run_on(lib, queries, nq, r);
    vt_library_close(lib);
    return rc;
}

static void result_free(struct result *r, int nq)
{
    for (int i = 0; i < nq && r->hits; i++)
        free(r->hits[i]);
    free(r->hits);
    free(r->ms);
    free(r->stmts);
    free(r->cut);
}

static int run(const char *dir, const char *url, int nq)
{
    char *sdir = vt_xasprintf("%s/sqlite", dir);
    char **queries = vt_xcalloc((size_t)nq, sizeof(char *));
    struct result sq = {0}, pg = {0};
    int same = 0, rows = 0, full = 0, same_full = 0;
    int warm = !getenv("PG_BENCH_WARM") || strcmp(getenv("PG_BENCH_WARM"), "0");

    for (int i = 0; i < nq; i++)
        queries[i] = query(i);
    /* a pass of the same queries on handles of their own first, unless PG_BENCH_WARM=0:
     * what is measured is then the page caches warm (a server that has been serving), each
     * measured handle's own term-frequency cache cold, as a new server's */
    if (warm) {
        struct result w[2] = {{0}, {0}};

        if (run_backend(sdir, NULL, queries, nq, &w[0]) ||
            run_backend(sdir, url, queries, nq, &w[1]))
            return 1;
        result_free(&w[0], nq);
        result_free(&w[1], nq);
    }
    if (run_backend(sdir, NULL, queries, nq, &sq) || run_backend(sdir, url, queries, nq, &pg))
        return 1;
    for (int i = 0; i < nq; i++) {
        int eq = !strcmp(sq.hits[i], pg.hits[i]), whole = !sq.cut[i] && !pg.cut[i];

        same += eq;
        rows += sq.hits[i][0] != '\0';
        full += whole;
        same_full += whole && eq;
        if (strcmp(sq.hits[i], pg.hits[i]) && getenv("VT_BENCH_DIFF"))
            fprintf(stderr, "differs: %s\n--- sqlite\n%s--- postgresql\n%s", queries[i], sq.hits[i],
                    pg.hits[i]);
    }
    printf("search (vt_search, 3 tiers) on the same rows, %d queries (words, phrase, prefix, "
           "excluded, misheard)%s\n",
           nq, warm ? ", after one unmeasured pass" : ", caches cold");
    printf("  %-12s %8s %8s %10s %12s %12s\n", "", "p50 ms", "p99 ms", "partial", "stmts mean",
           "stmts p99");
    printf("  %-12s %8.2f %8.2f %10ld %12.1f %12.0f\n", "SQLite", pct(sq.ms, nq, 0.5),
           pct(sq.ms, nq, 0.99), sq.partial, mean(sq.stmts, nq), pct(sq.stmts, nq, 0.99));
    printf("  %-12s %8.2f %8.2f %10ld %12.1f %12.0f\n", "PostgreSQL", pct(pg.ms, nq, 0.5),
           pct(pg.ms, nq, 0.99), pg.partial, mean(pg.stmts, nq), pct(pg.stmts, nq, 0.99));
    printf("  (stmts: statements run per query on SQLite, round trips to the server on "
           "PostgreSQL)\n");
    printf("  PostgreSQL/SQLite p99: %.2fx; goal: p99 <= 100 ms on PostgreSQL\n",
           pct(pg.ms, nq, 0.99) / fmax(pct(sq.ms, nq, 0.99), 1e-3));
    printf("  same hits in the same order: %d of %d queries (%d with hits); %d of the %d that "
           "neither backend cut at the time budget\n",
           same, nq, rows, same_full, full);
    print_slowest(&pg, queries, nq, 5);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return fail("usage", "pg_search_bench gen DIR URL VIDEOS CUES | run DIR URL QUERIES");
    make_vocab();
    if (!strcmp(argv[1], "gen") && argc >= 6)
        return gen(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
    if (!strcmp(argv[1], "run") && argc >= 5) {
        for (int i = 0; i < 1000; i++) /* the generator's words drawn: the same vocabulary */
            next();
        return run(argv[2], argv[3], atoi(argv[4]));
    }
    return fail("usage", "pg_search_bench gen DIR URL VIDEOS CUES | run DIR URL QUERIES");
}
