/*
 * Frames by likeness, measured (issue 12):
 *
 *  similar   "more like this" (vt_similar_frames) over a library of 10,000 videos of 100
 *            kept frames each: 1,000,000 random unit vectors of 256 dimensions in one
 *            picture space. p50 and p99 of the whole query (index search and resolving
 *            each hit to its video, title, second and picture) against the bare nearest-
 *            neighbour search of the same index (vt_vecsearch_nearest), and the time to
 *            load the index once.
 *  reuse     the same-footage pass frame_embed runs after embedding (vt_find_reuse) for a
 *            new video of 300 kept frames against a library of 100 videos of 300 frames,
 *            ten of which share a run of 30 frames with it (equal hashes, vectors a little
 *            apart): seconds per new video against the 2 s budget.
 *
 * usage: frames_bench DIR [QUERIES]   (libraries built once under DIR)
 */
#include "base/util.h"
#include "core/library.h"
#include "ml/embed.h"
#include "search/vecsearch.h"
#include "stages/frame_embed.h"
#include "store/store.h"
#include "vidtheque.h"
#include "visual/keyframe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIM   256
#define SPACE "bench:visual:256"

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

static void rand_unit(float *v)
{
    for (int d = 0; d < DIM; d++)
        v[d] = gauss();
    vt_vec_normalize(v, DIM);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return v[(int)fmin(n - 1, floor(p * n))];
}

/* One video of nf kept frames (one shot each, 5 s apart) with its vectors vecs (nf * DIM)
 * and hashes; inside a transaction. */
static int put_video(struct vt_store *s, const char *id, int nf, const float *vecs,
                     const uint64_t *hashes)
{
    struct vt_video_rec rec = {0};
    struct vt_kf_result r = {0};
    char key[80], title[80];
    int rc;

    snprintf(rec.id, sizeof(rec.id), "%s", id);
    snprintf(key, sizeof(key), "bench:%s", id);
    snprintf(title, sizeof(title), "Talk %s", id);
    rec.content_key = key;
    rec.source_kind = "file";
    rec.title = title;
    rec.duration_s = nf * 5.0;
    rec.index_state = VT_INDEX_READY;
    rec.data_status = VT_DATA_OK;
    rc = vt_store_video_insert(s, &rec);
    r.n_shots = r.n_frames = (size_t)nf;
    r.shots = vt_xcalloc((size_t)nf, sizeof(*r.shots));
    r.frames = vt_xcalloc((size_t)nf, sizeof(*r.frames));
    struct vt_vec_rec *recs = vt_xcalloc((size_t)nf, sizeof(*recs));
    for (int i = 0; i < nf; i++) {
        r.shots[i] = (struct vt_kf_shot){i * 5.0, i * 5.0 + 5.0, 1, 1};
        struct vt_kf_frame *f = &r.frames[i];
        f->index = i;
        f->t_s = i * 5.0 + 1.0;
        f->frame_no = (int64_t)(f->t_s * 30);
        f->shot = i;
        f->duplicate_of = -1;
        f->bytes = 1000;
        snprintf(f->file, sizeof(f->file), "%d.jpg", i);
        f->width = 1280;
        f->height = 720;
        f->phash = hashes[i];
        recs[i] = (struct vt_vec_rec){VT_VEC_VISUAL, i, f->t_s, f->t_s, vecs + (size_t)i * DIM};
    }
    char *dir = vt_xasprintf("frames/%s/r0", id);
    if (!rc)
        rc = vt_store_keyframes_replace(s, id, &r, dir);
    if (!rc)
        rc = vt_store_vectors_replace_kinds(s, id, VT_VEC_VISUAL_KINDS, SPACE, DIM, recs,
                                            (size_t)nf);
    free(dir);
    free(recs);
    free(r.shots);
    free(r.frames);
    return rc;
}

static struct vt_library *open_or_make(const char *dir, int videos, int per,
                                       int (*make)(struct vt_store *, int, int))
{
    char err[512], *db = vt_xasprintf("%s/library.db", dir);
    int fresh = access(db, F_OK) != 0;
    struct vt_library *lib;

    free(db);
    if (fresh) {
        lib = vt_library_open(dir, VT_OPEN_CREATE, err, sizeof(err));
        if (!lib || vt_store_begin(lib->store) || make(lib->store, videos, per) ||
            vt_store_commit(lib->store)) {
            fprintf(stderr, "cannot build %s: %s\n", dir, lib ? vt_store_errmsg(lib->store) : err);
            return NULL;
        }
        vt_library_close(lib);
    }
    lib = vt_library_open(dir, 0, err, sizeof(err));
    if (!lib)
        fprintf(stderr, "%s\n", err);
    return lib;
}

/* ---- similar ---- */

static int make_similar(struct vt_store *s, int videos, int per)
{
    float *vecs = vt_xmalloc(sizeof(float) * DIM * (size_t)per);
    uint64_t *h = vt_xcalloc((size_t)per, sizeof(*h));
    int rc = 0;

    for (int v = 0; v < videos && !rc; v++) {
        char id[32];
        snprintf(id, sizeof(id), "f%010d", v);
        for (int i = 0; i < per; i++) {
            rand_unit(vecs + (size_t)i * DIM);
            h[i] = next();
        }
        rc = put_video(s, id, per, vecs, h);
        if (!rc && v % 500 == 499) {
            rc = vt_store_commit(s);
            if (!rc)
                rc = vt_store_begin(s);
            fprintf(stderr, "\rsimilar library: %d/%d videos", v + 1, videos);
        }
    }
    fprintf(stderr, "\n");
    free(vecs);
    free(h);
    return rc;
}

static int bench_similar(const char *dir, int nq)
{
    struct vt_library *lib = open_or_make(dir, 10000, 100, make_similar);
    double *ours = vt_xcalloc((size_t)nq, sizeof(double)), *base = vt_xcalloc((size_t)nq, 8);
    struct vt_lookalike *s;
    size_t n;
    char err[512], id[32];

    if (!lib)
        return 1;
    double t0 = vt_monotonic_s();
    if (vt_similar_frames(lib, "f0000000000", 0, 10, &s, &n, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    double load = vt_monotonic_s() - t0;
    vt_lookalike_free(s, n);
    float *qv = vt_xmalloc(sizeof(float) * DIM);
    struct vt_vhit *vh = vt_xcalloc(10, sizeof(*vh));
    for (int i = 0; i < nq; i++) {
        snprintf(id, sizeof(id), "f%010d", (int)(next() % 10000));
        int f = (int)(next() % 100);
        t0 = vt_monotonic_s();
        if (vt_similar_frames(lib, id, f, 10, &s, &n, err, sizeof(err)) || n != 10) {
            fprintf(stderr, "query %s %d: %s\n", id, f, err);
            return 1;
        }
        ours[i] = (vt_monotonic_s() - t0) * 1000;
        vt_lookalike_free(s, n);
        rand_unit(qv);
        t0 = vt_monotonic_s();
        if (vt_vecsearch_nearest(lib, SPACE, DIM, qv, 10, NULL, NULL, vh, &n, err, sizeof(err)))
            return 1;
        base[i] = (vt_monotonic_s() - t0) * 1000;
    }
    double p50 = pct(ours, nq, 0.5), p99 = pct(ours, nq, 0.99);
    double b50 = pct(base, nq, 0.5), b99 = pct(base, nq, 0.99);
    printf("similar frames, 1,000,000 x %d d, top 10, %d queries (index loaded once in %.1f s)\n",
           DIM, nq, load);
    printf("  %-28s p50 %7.1f ms  p99 %7.1f ms\n", "similar (whole query)", p50, p99);
    printf("  %-28s p50 %7.1f ms  p99 %7.1f ms\n", "nearest only (baseline)", b50, b99);
    printf("  ratio p99 %.2f; target p99 <= 60 ms: %s\n", p99 / b99, p99 <= 60 ? "met" : "NOT MET");
    free(qv);
    free(vh);
    free(ours);
    free(base);
    vt_library_close(lib);
    return 0;
}

/* ---- reuse ---- */

#define REUSE_FRAMES 300
#define REUSE_SHARED 30

static float new_vecs[REUSE_FRAMES * DIM];
static uint64_t new_hashes[REUSE_FRAMES];

static void make_new(void)
{
    uint64_t keep = rng;

    rng = 0x1234567;
    for (int i = 0; i < REUSE_FRAMES; i++) {
        rand_unit(new_vecs + (size_t)i * DIM);
        new_hashes[i] = next();
    }
    rng = keep;
}

static int make_reuse(struct vt_store *s, int videos, int per)
{
    float *vecs = vt_xmalloc(sizeof(float) * DIM * (size_t)per);
    uint64_t *h = vt_xcalloc((size_t)per, sizeof(*h));
    int rc = 0;

    for (int v = 0; v < videos && !rc; v++) {
        char id[32];
        snprintf(id, sizeof(id), "r%010d", v);
        for (int i = 0; i < per; i++) {
            rand_unit(vecs + (size_t)i * DIM);
            h[i] = next();
        }
        if (v < 10) /* shares frames 100 + 10 v .. + 30 of the new video at 50 .. 80 */
            for (int i = 0; i < REUSE_SHARED; i++) {
                int k = 100 + 10 * v + i;
                float *o = vecs + (size_t)(50 + i) * DIM;
                for (int d = 0; d < DIM; d++)
                    o[d] = new_vecs[(size_t)k * DIM + d] + 0.004f * gauss();
                vt_vec_normalize(o, DIM);
                h[50 + i] = new_hashes[k] ^ (1ull << (next() % 64));
            }
        rc = put_video(s, id, per, vecs, h);
    }
    free(vecs);
    free(h);
    return rc;
}

static int bench_reuse(const char *dir)
{
    make_new();
    struct vt_library *lib = open_or_make(dir, 100, REUSE_FRAMES, make_reuse);
    struct vt_fe_frame mine[REUSE_FRAMES];
    double took[5];

    if (!lib)
        return 1;
    for (int i = 0; i < REUSE_FRAMES; i++)
        mine[i] = (struct vt_fe_frame){
            i, i, i * 5.0 + 1.0, new_hashes[i], new_vecs + (size_t)i * DIM, NULL};
    size_t found = 0;
    for (int k = 0; k < 5; k++) {
        struct vt_reuse *runs;
        size_t n;
        double t0 = vt_monotonic_s();
        if (vt_find_reuse(lib, "new", mine, REUSE_FRAMES, SPACE, DIM, &runs, &n)) {
            fprintf(stderr, "%s\n", vt_store_errmsg(lib->store));
            return 1;
        }
        took[k] = vt_monotonic_s() - t0;
        found = n;
        vt_store_reuse_free(runs, n);
    }
    double med = pct(took, 5, 0.5);
    printf("same footage: a new video of %d kept frames vs 100 videos of %d (10 share %d frames)\n",
           REUSE_FRAMES, REUSE_FRAMES, REUSE_SHARED);
    printf("  median %.3f s per new video, %zu runs found (10 expected); ratio to the 2 s budget "
           "%.3f: %s\n",
           med, found, med / 2.0, med <= 2.0 && found == 10 ? "met" : "NOT MET");
    vt_library_close(lib);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp/vt-frames-bench";
    int nq = argc > 2 ? atoi(argv[2]) : 300;
    char *sim = vt_xasprintf("%s/similar", dir), *reuse = vt_xasprintf("%s/reuse", dir);
    char err[256];

    if (nq < 10)
        nq = 10;
    vt_mkdir_p(dir, err, sizeof(err));
    int rc = bench_reuse(reuse) || (getenv("FRAMES_BENCH_REUSE_ONLY") ? 0 : bench_similar(sim, nq));
    free(sim);
    free(reuse);
    return rc;
}
