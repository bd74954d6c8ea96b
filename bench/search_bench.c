/*
 * Search benchmark: builds (once) a synthetic library of many videos and cues with
 * a Zipf-like vocabulary, so some words are in every video, then times vt_search
 * for one- to three-word queries next to the plain
 * "SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? ORDER BY rank LIMIT 10"
 * on the same index. Prints p50 and p99 of both, and vt_search's CPU time (this thread's:
 * on a machine others share, wall time measures their load as much as the search), with
 * the mean CPU time by the number of words (queries of two words or more also search
 * cue pairs, words said across a cue boundary).
 *
 * usage: search_bench DIR [VIDEOS [CUES_PER_VIDEO [QUERIES]]]
 */
#include "base/util.h"
#include "bench_words.h"
#include "core/library.h"
#include "store/store.h"
#include "vidtheque.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int generate(const char *dir, int videos, int per_video)
{
    char err[512], *db = vt_xasprintf("%s/library.db", dir);
    struct vt_store *s;
    struct vt_transcript t = {0};
    int rc;

    vt_mkdir_p(dir, err, sizeof(err));
    rc = vt_store_open(db, &s, err, sizeof(err));
    free(db);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return rc;
    }
    t.cues = vt_xcalloc((size_t)per_video, sizeof(*t.cues));
    t.n_cues = (size_t)per_video;
    for (int v = 0; v < videos; v++) {
        struct vt_video_rec rec = {0};
        char key[32], title[64];

        if (v % 500 == 0) {
            if (v)
                vt_store_commit(s);
            vt_store_begin(s);
            fprintf(stderr, "\rgenerating: %d/%d videos", v, videos);
        }
        snprintf(rec.id, sizeof(rec.id), "v%010d", v);
        snprintf(key, sizeof(key), "bench:%d", v);
        snprintf(title, sizeof(title), "Talk %d about %s and %s", v, word(), word());
        rec.content_key = key;
        rec.source_kind = "file";
        rec.title = title;
        rec.duration_s = per_video * 8.0;
        rec.index_state = VT_INDEX_READY;
        rec.data_status = VT_DATA_OK;
        rc = vt_store_video_insert(s, &rec);
        for (int c = 0; c < per_video && !rc; c++) {
            struct vt_sb sb = {0};
            int n = 6 + (int)(next() % 10);

            for (int k = 0; k < n; k++) {
                if (k)
                    vt_sb_addc(&sb, ' ');
                vt_sb_adds(&sb, word());
            }
            t.cues[c].start_s = c * 8.0;
            t.cues[c].end_s = c * 8.0 + 7.0;
            t.cues[c].text = vt_sb_detach(&sb);
        }
        if (!rc)
            rc = vt_store_transcript_replace(s, rec.id, &t);
        if (!rc)
            rc = vt_store_title_docs_refresh(s, rec.id);
        for (int c = 0; c < per_video; c++) {
            free(t.cues[c].text);
            t.cues[c].text = NULL;
        }
        if (rc) {
            fprintf(stderr, "%s\n", vt_store_errmsg(s));
            break;
        }
    }
    if (!rc)
        rc = vt_store_commit(s);
    /* what a library gets from the merge step after each video, all at once */
    if (!rc && !(rc = vt_store_begin(s)) && !(rc = vt_store_maintain(s, VT_MAINTAIN_FULL)))
        rc = vt_store_commit(s);
    fprintf(stderr, "\rgenerated %d videos, %d cues\n", videos, videos * per_video);
    free(t.cues);
    vt_store_close(s);
    return rc;
}

static double cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp/vt-search-bench";
    int videos = argc > 2 ? atoi(argv[2]) : 10000, per = argc > 3 ? atoi(argv[3]) : 100;
    int nq = argc > 4 ? atoi(argv[4]) : 300;
    char err[512], *db = vt_xasprintf("%s/library.db", dir);
    struct vt_library *lib;
    sqlite3 *raw;
    sqlite3_stmt *st;
    double *ours = vt_xcalloc((size_t)nq, sizeof(double)), *base = vt_xcalloc((size_t)nq, 8);
    double *cpu = vt_xcalloc((size_t)nq, sizeof(double)), by_words[4] = {0};
    int n_words[4] = {0};
    char **queries = vt_xcalloc((size_t)nq, sizeof(char *));
    long hits_total = 0, partial = 0;

    make_vocab();
    if (access(db, F_OK) && generate(dir, videos, per))
        return 1;
    lib = vt_library_open(dir, 0, err, sizeof(err));
    if (!lib) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    /* queries: one to three words; the first of each third is a word in every video */
    for (int i = 0; i < nq; i++) {
        int k = 1 + i % 3;
        struct vt_sb sb = {0};

        for (int j = 0; j < k; j++) {
            if (j)
                vt_sb_addc(&sb, ' ');
            vt_sb_adds(&sb, i % 3 == 0 && j == 0 ? vocab[next() % 5] : word());
        }
        queries[i] = vt_sb_detach(&sb);
    }
    for (int i = 0; i < nq; i++) {
        struct vt_search_opts o = {.limit = 10};
        struct vt_hit *h;
        size_t n;
        double t0 = vt_monotonic_s(), c0 = cpu_ms();

        struct vt_search_info info;

        if (vt_search(lib, queries[i], strlen(queries[i]), &o, &h, &n, &info)) {
            fprintf(stderr, "search: %s\n", vt_errmsg(lib));
            return 1;
        }
        ours[i] = (vt_monotonic_s() - t0) * 1000;
        cpu[i] = cpu_ms() - c0;
        by_words[1 + i % 3] += cpu[i];
        n_words[1 + i % 3]++;
        hits_total += (long)n;
        partial += info.partial;
        vt_hits_free(h, n);
    }
    sqlite3_open_v2(db, &raw, SQLITE_OPEN_READONLY, NULL);
    sqlite3_prepare_v2(raw,
                       "SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? ORDER BY rank LIMIT 10",
                       -1, &st, NULL);
    for (int i = 0; i < nq; i++) {
        struct vt_sb sb = {0};
        double t0;
        char *q = vt_xstrdup(queries[i]), *save = NULL;

        for (char *w = strtok_r(q, " ", &save); w; w = strtok_r(NULL, " ", &save))
            vt_sb_addf(&sb, "%s\"%s\"", sb.len ? " AND " : "", w);
        free(q);
        t0 = vt_monotonic_s();
        sqlite3_bind_text(st, 1, sb.buf, -1, SQLITE_TRANSIENT);
        while (sqlite3_step(st) == SQLITE_ROW)
            ;
        sqlite3_reset(st);
        base[i] = (vt_monotonic_s() - t0) * 1000;
        vt_sb_release(&sb);
    }
    sqlite3_finalize(st);
    sqlite3_close(raw);
    printf("search over %d videos x %d cues, %d queries (1-3 words, a third led by a word in "
           "every video)\n",
           videos, per, nq);
    printf("  %-44s %8s %8s\n", "", "p50 ms", "p99 ms");
    printf("  %-44s %8.2f %8.2f\n", "vt_search (3 tiers, approx, highlight)", pct(ours, nq, 0.5),
           pct(ours, nq, 0.99));
    printf("  %-44s %8.2f %8.2f\n", "plain MATCH ... ORDER BY rank LIMIT 10", pct(base, nq, 0.5),
           pct(base, nq, 0.99));
    printf("  %-44s %8.2f %8.2f\n", "vt_search CPU time (this thread)", pct(cpu, nq, 0.5),
           pct(cpu, nq, 0.99));
    printf("  vt_search CPU time, mean ms: 1 word %.2f, 2 words %.2f, 3 words %.2f\n",
           n_words[1] ? by_words[1] / n_words[1] : 0, n_words[2] ? by_words[2] / n_words[2] : 0,
           n_words[3] ? by_words[3] / n_words[3] : 0);
    printf("  target: p50 < 5 ms, p99 < 50 ms; %ld hits returned in all; %ld of %d queries cut "
           "short by the time budget\n",
           hits_total, partial, nq);
    vt_library_close(lib);
    return 0;
}
