/*
 * What the search benches share (search_bench.c, pg_search_bench.c): the synthetic
 * vocabulary with its Zipf-like draw, so both index the same kind of cues (some words in
 * every video, most rare), and the percentile of a run's timings. Static: each bench is
 * one translation unit.
 */
#ifndef VT_BENCH_WORDS_H
#define VT_BENCH_WORDS_H

#include "base/util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VOCAB 20000

static char *vocab[VOCAB];
static uint64_t rng = 88172645463325252ULL;

/* xorshift64: the same sequence on every run, so the rows and queries are too */
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Zipf-ish: rank r has weight 1/(r+1); inverse CDF via exp of a uniform */
static const char *word(void)
{
    double u = (double)(next() % 1000000) / 1000000.0;
    size_t r = (size_t)(exp(u * log((double)VOCAB + 1)) - 1);

    return vocab[r < VOCAB ? r : VOCAB - 1];
}

/* Common English words first (in every video), then made-up words of syllables. */
static void make_vocab(void)
{
    static const char *common[] = {"the",   "and",  "of", "to",   "a",  "in",  "is",      "that",
                                   "model", "data", "we", "this", "it", "for", "training"};
    static const char syl[][4] = {"ka", "lo", "mi",  "ter", "an",  "ro", "su", "vel",
                                  "di", "on", "pra", "ne",  "qui", "ba", "zo", "tem"};

    for (size_t i = 0; i < VOCAB; i++) {
        char buf[32] = "";

        if (i < VT_ARRAY_LEN(common)) {
            vocab[i] = vt_xstrdup(common[i]);
            continue;
        }
        for (size_t x = i, k = 0; k < 3 || x; k++, x /= 16)
            strcat(buf, syl[x % 16]);
        vocab[i] = vt_xstrdup(buf);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The p-th quantile (0..1) of v[0..n-1] (left as it is: v[i] stays query i's). */
static double pct(const double *v, int n, double p)
{
    double *s = vt_xcalloc((size_t)n + 1, sizeof(*s)), q;

    memcpy(s, v, (size_t)n * sizeof(*s));
    qsort(s, (size_t)n, sizeof(*s), cmp_double);
    q = n ? s[(int)fmin(n - 1, floor(p * n))] : 0;
    free(s);
    return q;
}

#endif
