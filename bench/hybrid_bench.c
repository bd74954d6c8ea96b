/*
 * Hybrid search benchmark: a copy of the search benchmark's library (10,000 videos,
 * 1,000,000 cues) given one chunk and one vector per cue (random unit vectors of the
 * model's dimension, in the model's vector space), then vt_search in hybrid, words and
 * meaning modes over the same queries. The model (a Model2Vec folder, made by
 * hybrid_bench.sh with random weights of 256 dimensions over the test model's tokenizer)
 * embeds each query in-process, as a real search does. Prints p50 and p99 of each mode
 * and the ratio of hybrid to words, plus the time to load the vectors into memory
 * (once per library handle).
 *
 * usage: hybrid_bench LIBDIR MODELDIR [QUERIES]
 */
#include "base/util.h"
#include "core/library.h"
#include "ml/embed.h"
#include "model/stage_config.h"
#include "stages/text_embed.h"
#include "store/store.h"
#include "text/transcript.h"
#include "vidtheque.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static float gauss(void)
{
    double u = ((double)(next() >> 11) + 0.5) / 9007199254740992.0;
    double v = ((double)(next() >> 11) + 0.5) / 9007199254740992.0;
    return (float)(sqrt(-2 * log(u)) * cos(2 * M_PI * v));
}

static int collect_id(void *user, const struct vt_video_rec *v)
{
    struct vt_sb *ids = user;

    vt_sb_adds(ids, v->id);
    vt_sb_addc(ids, '\n');
    return 0;
}

/* One chunk per cue and one random vector per chunk, for every video without them. */
static int fill(struct vt_library *lib, const char *space, int dim)
{
    struct vt_store *s = lib->store;
    struct vt_sb ids = {0};
    int64_t count = 0, max_id = 0;
    size_t done = 0;

    if (vt_store_vectors_stat(s, space, &count, &max_id))
        return -1;
    if (count >= 1000000)
        return 0;
    if (vt_store_video_each(s, collect_id, &ids))
        return -1;
    float *vecs = vt_xmalloc(sizeof(float) * (size_t)dim * 1000);
    struct vt_vec_rec *recs = vt_xcalloc(1000, sizeof(*recs));
    struct vt_chunk *chunks = vt_xcalloc(1000, sizeof(*chunks));
    int rc = vt_store_begin(s);
    for (char *id = ids.buf, *nl; !rc && id && (nl = strchr(id, '\n')); id = nl + 1) {
        *nl = '\0';
        struct vt_transcript t = {0};
        if ((rc = vt_store_transcript(s, id, &t)))
            break;
        size_t n = t.n_cues < 1000 ? t.n_cues : 1000;
        for (size_t i = 0; i < n; i++) {
            chunks[i] = (struct vt_chunk){t.cues[i].start_s, t.cues[i].end_s, t.cues[i].text,
                                          (int)i, (int)i};
            float *v = vecs + i * (size_t)dim;
            for (int d = 0; d < dim; d++)
                v[d] = gauss();
            vt_vec_normalize(v, dim);
            recs[i] =
                (struct vt_vec_rec){VT_VEC_CHUNK, (int)i, t.cues[i].start_s, t.cues[i].end_s, v};
        }
        rc = vt_store_chunks_replace(s, id, chunks, n);
        if (!rc)
            rc = vt_store_vectors_replace(s, id, space, dim, recs, n);
        vt_transcript_release(&t);
        if (!rc && ++done % 500 == 0) {
            rc = vt_store_commit(s);
            if (!rc)
                rc = vt_store_begin(s);
            fprintf(stderr, "\rvectors: %zu videos", done);
        }
    }
    if (!rc)
        rc = vt_store_commit(s);
    else
        vt_store_rollback(s);
    fprintf(stderr, "\rvectors: %zu videos\n", done);
    if (rc)
        fprintf(stderr, "%s\n", vt_store_errmsg(s));
    free(vecs);
    free(recs);
    free(chunks);
    vt_sb_release(&ids);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double pct(const double *v, int n, double p)
{
    double *c = vt_xmalloc(sizeof(double) * (size_t)n);

    memcpy(c, v, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(*c), cmp_double);
    double r = c[(int)fmin(n - 1, floor(p * n))];
    free(c);
    return r;
}

/* Queries: one to three words of random spoken cues. */
static char **make_queries(const char *dir, int nq)
{
    char **q = vt_xcalloc((size_t)nq, sizeof(*q));
    char *db = vt_xasprintf("%s/library.db", dir);
    sqlite3 *raw;
    sqlite3_stmt *st;
    int64_t max = 1;

    sqlite3_open_v2(db, &raw, SQLITE_OPEN_READONLY, NULL);
    sqlite3_prepare_v2(raw, "SELECT max(id) FROM docs", -1, &st, NULL);
    if (sqlite3_step(st) == SQLITE_ROW)
        max = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_prepare_v2(raw, "SELECT text FROM docs WHERE id >= ? AND source = 'speech' LIMIT 1", -1,
                       &st, NULL);
    for (int i = 0; i < nq; i++) {
        sqlite3_bind_int64(st, 1, 1 + (int64_t)(next() % (uint64_t)max));
        char *text = sqlite3_step(st) == SQLITE_ROW
                         ? vt_xstrdup((const char *)sqlite3_column_text(st, 0))
                         : vt_xstrdup("talk");
        sqlite3_reset(st);
        struct vt_sb sb = {0};
        char *save = NULL;
        int k = 1 + i % 3, j = 0;
        for (char *w = strtok_r(text, " ", &save); w && j < k; w = strtok_r(NULL, " ", &save), j++)
            vt_sb_addf(&sb, "%s%s", j ? " " : "", w);
        q[i] = sb.buf ? vt_sb_detach(&sb) : vt_xstrdup("talk");
        free(text);
    }
    sqlite3_finalize(st);
    sqlite3_close(raw);
    free(db);
    return q;
}

static int run(struct vt_library *lib, char **queries, int nq, enum vt_search_mode mode, double *ms,
               long *hits, long *both)
{
    *hits = *both = 0;
    for (int i = 0; i < nq; i++) {
        struct vt_search_opts o = {.limit = 20, .mode = mode};
        struct vt_search_info info;
        struct vt_hit *h;
        size_t n;
        double t0 = vt_monotonic_s();

        if (vt_search(lib, queries[i], strlen(queries[i]), &o, &h, &n, &info)) {
            fprintf(stderr, "search: %s\n", vt_errmsg(lib));
            return -1;
        }
        ms[i] = (vt_monotonic_s() - t0) * 1000;
        if (info.warning[0]) {
            fprintf(stderr, "search: %s\n", info.warning);
            return -1;
        }
        *hits += (long)n;
        for (size_t k = 0; k < n; k++)
            *both += h[k].matched == (VT_MATCH_WORDS | VT_MATCH_MEANING);
        vt_hits_free(h, n);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: hybrid_bench LIBDIR MODELDIR [QUERIES]\n");
        return 2;
    }
    const char *dir = argv[1], *model = argv[2];
    int nq = argc > 3 ? atoi(argv[3]) : 300;
    char err[512];
    struct vt_config *cf = NULL;
    struct vt_embed *e;

    if (vt_config_load(dir, &cf, err, sizeof(err)) ||
        vt_config_set(cf, "text_embed.model", model, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    vt_config_free(cf);
    struct vt_library *lib = vt_library_open(dir, 0, err, sizeof(err));
    if (!lib || vt_lib_text_embed(lib, &e, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (fill(lib, vt_embed_id(e), vt_embed_dim(e)))
        return 1;
    char **queries = make_queries(dir, nq);
    double *hy = vt_xcalloc((size_t)nq, sizeof(double)), *wo = vt_xcalloc((size_t)nq, 8),
           *me = vt_xcalloc((size_t)nq, 8);
    long hits_h, both, hits_w, hits_m, unused;
    /* the first search by meaning loads the vectors and measures the relevance floor
     * (lib/search/floor.c: 96 scans), unless LIBRARY/calibration.json holds it */
    double t0 = vt_monotonic_s();
    if (run(lib, queries, 1, VT_SEARCH_MEANING, me, &hits_m, &unused))
        return 1;
    double load_s = vt_monotonic_s() - t0;
    if (run(lib, queries, nq, VT_SEARCH_WORDS, wo, &hits_w, &unused) ||
        run(lib, queries, nq, VT_SEARCH_MEANING, me, &hits_m, &unused) ||
        run(lib, queries, nq, VT_SEARCH_HYBRID, hy, &hits_h, &both))
        return 1;
    int64_t count = 0, max_id = 0;
    vt_store_vectors_stat(lib->store, vt_embed_id(e), &count, &max_id);
    printf("hybrid search over 1,000,000 cues and %lld vectors of %d d (%s), %d queries of "
           "1-3 spoken words, top 20\n",
           (long long)count, vt_embed_dim(e), vt_embed_model(e), nq);
    printf("  loading the vectors into memory (once per handle; with the relevance floor when "
           "not kept): %.1f s\n",
           load_s);
    printf("  %-32s %8s %8s %8s\n", "", "p50 ms", "p99 ms", "hits");
    printf("  %-32s %8.2f %8.2f %8ld\n", "words (baseline)", pct(wo, nq, 0.5), pct(wo, nq, 0.99),
           hits_w);
    printf("  %-32s %8.2f %8.2f %8ld\n", "meaning", pct(me, nq, 0.5), pct(me, nq, 0.99), hits_m);
    printf("  %-32s %8.2f %8.2f %8ld\n", "hybrid (words + meaning, RRF)", pct(hy, nq, 0.5),
           pct(hy, nq, 0.99), hits_h);
    printf("  hybrid / words p99: %.2fx; target: hybrid p99 <= 80 ms (%s); %ld hits matched "
           "both\n",
           pct(hy, nq, 0.99) / fmax(pct(wo, nq, 0.99), 1e-3),
           pct(hy, nq, 0.99) <= 80 ? "met" : "NOT met", both);
    for (int i = 0; i < nq; i++)
        free(queries[i]);
    free(queries);
    free(hy);
    free(wo);
    free(me);
    vt_library_close(lib);
    return 0;
}
