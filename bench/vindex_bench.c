/*
 * Vector search benchmark: fills a vt_vindex with N random unit vectors (xorshift from
 * a fixed seed; components are a sum of four uniforms, roughly Gaussian) and times
 * vt_vindex_search for top-50 over Q queries, half of them random unit vectors and half
 * perturbed copies of stored vectors (so that the nearest neighbours mean something).
 * Prints p50 and p99 of the search (as the index chooses its threads, one at 1M, then
 * on two threads) with the CPU time per search, recall@10 against vt_vindex_search_exact, the
 * exact float32 scan's p50 as the baseline with the ratio, the time to add the N
 * vectors, the cost of fusing two top-50 lists with vt_rrf, and the peak RSS.
 *
 * usage: vindex_bench [N [DIM [QUERIES]]]    (defaults 1000000 256 200)
 */
#include "ml/vindex.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define K         50
#define RECALL_AT 10

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void random_unit(float *v, int dim)
{
    float n = 0;

    for (int i = 0; i < dim; i++) {
        uint64_t r = rng();
        v[i] = (float)((int)(r & 0xffff) + (int)((r >> 16) & 0xffff) + (int)((r >> 32) & 0xffff) +
                       (int)(r >> 48) - 2 * 65535);
        n += v[i] * v[i];
    }
    n = 1.0f / sqrtf(n);
    for (int i = 0; i < dim; i++)
        v[i] *= n;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* the p-th percentile (0..100) of n sorted values, nearest rank */
static double pct(const double *sorted, size_t n, double p)
{
    size_t i = (size_t)ceil(p / 100.0 * (double)n);

    return sorted[i ? i - 1 : 0];
}

/* user and system CPU seconds of the process so far */
static void rusage_s(double *user, double *sys)
{
    struct rusage r;

    getrusage(RUSAGE_SELF, &r);
    *user = (double)r.ru_utime.tv_sec + (double)r.ru_utime.tv_usec * 1e-6;
    *sys = (double)r.ru_stime.tv_sec + (double)r.ru_stime.tv_usec * 1e-6;
}

static double cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Time nq searches into ms (sorted); returns the mean CPU time per search in ms, every
 * thread counted: on a busy machine the wall times include waiting for a core. */
static double timed_searches(struct vt_vindex *ix, const float *qs, int dim, size_t nq, int exact,
                             double *ms, struct vt_vhit *hits)
{
    double c0 = cpu_s();

    for (size_t i = 0; i < nq; i++) {
        double t0 = now_s();
        size_t got = exact ? vt_vindex_search_exact(ix, qs + i * (size_t)dim, K, hits + i * K)
                           : vt_vindex_search(ix, qs + i * (size_t)dim, K, hits + i * K);
        ms[i] = (now_s() - t0) * 1e3;
        if (got != K) {
            fprintf(stderr, "vindex_bench: query %zu: %zu hits, expected %d\n", i, got, K);
            exit(1);
        }
    }
    qsort(ms, nq, sizeof(*ms), cmp_double);
    return (cpu_s() - c0) * 1e3 / (double)nq;
}

struct fused {
    int64_t key;
    double score;
};

static int by_key(const void *a, const void *b)
{
    const struct fused *x = a, *y = b;

    return (x->key > y->key) - (x->key < y->key);
}

/* Fuse two ranked lists of K keys by reciprocal rank: what a hybrid search adds on top
 * of its two searches. Returns the best fused key (so the work is not optimised away). */
static int64_t rrf_fuse(const struct vt_vhit *a, const struct vt_vhit *b)
{
    struct fused all[2 * K];
    size_t n = 0, out = 0;
    int64_t best = 0;
    double best_s = -1;

    for (size_t r = 0; r < K; r++) {
        all[n++] = (struct fused){a[r].key, vt_rrf(r)};
        all[n++] = (struct fused){b[r].key, vt_rrf(r)};
    }
    qsort(all, n, sizeof(*all), by_key);
    for (size_t i = 0; i < n; i++) {
        if (out && all[out - 1].key == all[i].key)
            all[out - 1].score += all[i].score;
        else
            all[out++] = all[i];
    }
    for (size_t i = 0; i < out; i++)
        if (all[i].score > best_s) {
            best_s = all[i].score;
            best = all[i].key;
        }
    return best;
}

static int parse_size(const char *s, size_t min, size_t max, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    if (!*s || *end || v < min || v > max)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* What a run measured, for the report */
struct results {
    size_t n, dim, nq, near; /* near: the queries near a stored vector, the last ones */
    double *ms, *ms1, *msx;  /* sorted wall times: search, two threads, exact */
    double cpu, cpu1, cpux;  /* CPU ms per search, the same three */
    size_t found, found_near, found_rand;   /* of the exact top RECALL_AT, in the search's */
    double t_gen, t_add, add_user, add_sys; /* generating, and reserving plus adding */
    double rrf_us;
    int64_t sink;
};

/* Add the CPU and wall time since u0, s0, t0 to the adding's */
static void count_add(struct results *r, double t0, double u0, double s0)
{
    double u1, s1;

    rusage_s(&u1, &s1);
    r->add_user += u1 - u0;
    r->add_sys += s1 - s0;
    r->t_add += now_s() - t0;
}

/* The index, a chunk at a time, room reserved first as a loader that knows the count
 * does: generation and adding timed apart. The second half of the queries are copies of
 * every (n / (nq / 2))-th vector, perturbed later. Returns -1 (said) on failure. */
static int fill_index(struct vt_vindex *ix, float *qs, float *v, size_t chunk, struct results *r)
{
    size_t n = r->n, dim = r->dim, nq = r->nq, near = r->near, stride = n / near;
    double t0 = now_s(), u0, s0;

    rusage_s(&u0, &s0);
    if (vt_vindex_reserve(ix, n) < 0) {
        fprintf(stderr, "vindex_bench: vt_vindex_reserve failed\n");
        return -1;
    }
    count_add(r, t0, u0, s0);
    for (size_t base = 0; base < n; base += chunk) {
        size_t m = n - base < chunk ? n - base : chunk;

        t0 = now_s();
        for (size_t i = 0; i < m; i++) {
            random_unit(v + i * dim, (int)dim);
            size_t row = base + i;
            if (row % stride == 0 && row / stride < near)
                memcpy(qs + (nq - near + row / stride) * dim, v + i * dim, dim * sizeof(float));
        }
        r->t_gen += now_s() - t0;
        t0 = now_s();
        rusage_s(&u0, &s0);
        for (size_t i = 0; i < m; i++)
            if (vt_vindex_add(ix, (int64_t)(base + i), v + i * dim) < 0) {
                fprintf(stderr, "vindex_bench: vt_vindex_add failed\n");
                return -1;
            }
        count_add(r, t0, u0, s0);
    }
    return 0;
}

/* Queries: random; and stored vectors plus noise of the same norm (cosine about 0.7
 * to the vector they came from). */
static void make_queries(float *qs, size_t nq, size_t near, size_t dim)
{
    for (size_t i = 0; i < nq - near; i++)
        random_unit(qs + i * dim, (int)dim);
    for (size_t i = nq - near; i < nq; i++) {
        float *q = qs + i * dim, noise[8192], s = 0;
        random_unit(noise, (int)dim);
        for (size_t j = 0; j < dim; j++) {
            q[j] += noise[j];
            s += q[j] * q[j];
        }
        for (size_t j = 0; j < dim; j++)
            q[j] /= sqrtf(s);
    }
}

/* How many of the exact top RECALL_AT the search found, over all queries and by kind */
static void count_recall(const struct vt_vhit *hits, const struct vt_vhit *exact, struct results *r)
{
    for (size_t i = 0; i < r->nq; i++) {
        size_t f = 0;
        for (size_t a = 0; a < RECALL_AT; a++)
            for (size_t b = 0; b < RECALL_AT; b++)
                f += hits[i * K + a].key == exact[i * K + b].key;
        r->found += f;
        if (i < r->nq - r->near)
            r->found_rand += f;
        else
            r->found_near += f;
    }
}

/* The time of reciprocal rank fusion of the search's and the exact scan's lists, per query */
static void time_rrf(const struct vt_vhit *hits, const struct vt_vhit *exact, struct results *r)
{
    double t0 = now_s();

    for (int rep = 0; rep < 20; rep++)
        for (size_t i = 0; i < r->nq; i++)
            r->sink += rrf_fuse(hits + i * K, exact + i * K);
    r->rrf_us = (now_s() - t0) * 1e6 / (20.0 * (double)r->nq);
}

static void print_report(const struct results *r)
{
    struct rusage ru;
    size_t n = r->n, nq = r->nq, near = r->near;

    getrusage(RUSAGE_SELF, &ru);
    double p50 = pct(r->ms, nq, 50), p99 = pct(r->ms, nq, 99), x50 = pct(r->msx, nq, 50);
    double recall = (double)r->found / (double)(nq * RECALL_AT);
    printf("%zu vectors x %zu dims, %zu queries (%zu random, %zu near a stored vector), "
           "top-%d\n",
           n, r->dim, nq, nq - near, near, K);
    printf("%-40s %8s %8s %8s %10s\n", "run", "p50 ms", "p99 ms", "ratio", "cpu ms/q");
    printf("%-40s %8.2f %8.2f %8s %10.2f\n", "exact float32 scan (baseline)", x50,
           pct(r->msx, nq, 99), "1.00", r->cpux);
    printf("%-40s %8.2f %8.2f %8.3f %10.2f\n", "vt_vindex_search (int8 + rescoring)", p50, p99,
           p50 / x50, r->cpu);
    printf("%-40s %8.2f %8.2f %8.3f %10.2f\n", "vt_vindex_search, two threads", pct(r->ms1, nq, 50),
           pct(r->ms1, nq, 99), pct(r->ms1, nq, 50) / x50, r->cpu1);
    printf("recall@%d vs exact: %.4f (random queries %.4f, near a stored vector %.4f)\n", RECALL_AT,
           recall, (double)r->found_rand / (double)((nq - near) * RECALL_AT),
           (double)r->found_near / (double)(near * RECALL_AT));
    printf("reserving and adding %zu vectors: %.2f s (%.0f per second; CPU %.2f s user, %.2f s "
           "system, the kernel zeroing new memory; generating them took %.2f s)\n",
           n, r->t_add, (double)n / r->t_add, r->add_user, r->add_sys, r->t_gen);
    printf("reciprocal rank fusion of two top-%d lists: %.1f us per query (%.4f%% of the "
           "search's p50) [%lld]\n",
           K, r->rrf_us, r->rrf_us / 10.0 / p50, (long long)(r->sink & 1));
    printf("peak RSS: %.0f MiB\n", (double)ru.ru_maxrss / 1024.0);
    printf("targets p50 <= 30 ms: %s, p99 <= 60 ms: %s, recall@10 >= 0.98: %s\n",
           p50 <= 30 ? "met" : "NOT met", p99 <= 60 ? "met" : "NOT met",
           recall >= 0.98 ? "met" : "NOT met");
}

int main(int argc, char **argv)
{
    struct results r = {.n = 1000000, .dim = 256, .nq = 200};
    struct vt_vindex *ix;
    float *qs, *v;
    struct vt_vhit *hits, *exact;
    const size_t chunk = 4096;

    if ((argc > 1 && parse_size(argv[1], 1000, 100000000, &r.n) < 0) ||
        (argc > 2 && parse_size(argv[2], 1, 8192, &r.dim) < 0) ||
        (argc > 3 && parse_size(argv[3], 2, 100000, &r.nq) < 0) || argc > 4) {
        fprintf(stderr, "usage: vindex_bench [N >= 1000 [DIM [QUERIES]]]\n");
        return 2;
    }
    size_t dim = r.dim, nq = r.nq;
    r.near = nq / 2;
    ix = vt_vindex_new((int)dim);
    qs = malloc(nq * dim * sizeof(float));
    v = malloc(chunk * dim * sizeof(float));
    r.ms = malloc(nq * sizeof(double));
    r.ms1 = malloc(nq * sizeof(double));
    r.msx = malloc(nq * sizeof(double));
    hits = malloc(nq * K * sizeof(*hits));
    exact = malloc(nq * K * sizeof(*exact));
    if (!ix || !qs || !v || !r.ms || !r.ms1 || !r.msx || !hits || !exact) {
        fprintf(stderr, "vindex_bench: out of memory\n");
        return 1;
    }

    if (fill_index(ix, qs, v, chunk, &r) < 0)
        return 1;
    make_queries(qs, nq, r.near, dim);
    r.cpux = timed_searches(ix, qs, (int)dim, nq, 1, r.msx, exact);
    r.cpu = timed_searches(ix, qs, (int)dim, nq, 0, r.ms, hits);
    count_recall(hits, exact, &r);
    vt_vindex_set_threads(ix, 2);
    r.cpu1 = timed_searches(ix, qs, (int)dim, nq, 0, r.ms1, hits);
    vt_vindex_set_threads(ix, 0);
    time_rrf(hits, exact, &r);
    print_report(&r);

    vt_vindex_free(ix);
    free(qs);
    free(v);
    free(r.ms);
    free(r.ms1);
    free(r.msx);
    free(hits);
    free(exact);
    return 0;
}
