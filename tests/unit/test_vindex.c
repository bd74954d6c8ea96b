/*
 * Unit tests of the vector index (lib/ml/vindex.c): int8 quantization error bounds, search
 * against the exact float32 scan on small sets (equal results) and on 20,000 random
 * vectors (recall@10 at least 0.98), ties, k larger than the index, dimension checks,
 * replacement and removal of keys, the keep filter, hostile values, and vt_rrf.
 */
#include "harness.h"
#include "ml/vindex.h"
#include "vidtheque.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* a random unit vector (components: a sum of four uniforms, roughly Gaussian) */
static void random_unit(float *v, int dim)
{
    double n = 0;

    for (int i = 0; i < dim; i++) {
        uint64_t r = rng();
        v[i] = (float)((double)(r & 0xffff) + (double)((r >> 16) & 0xffff) +
                       (double)((r >> 32) & 0xffff) + (double)(r >> 48) - 2 * 65535.0);
        n += (double)v[i] * v[i];
    }
    for (int i = 0; i < dim; i++)
        v[i] = (float)(v[i] / sqrt(n));
}

static double dot(const float *a, const float *b, int dim)
{
    double s = 0;

    for (int i = 0; i < dim; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* An index of n random vectors (keys 1000 + i), which are also written to vs. */
static struct vt_vindex *random_index(int dim, size_t n, float *vs)
{
    struct vt_vindex *ix = vt_vindex_new(dim);

    for (size_t i = 0; i < n; i++) {
        random_unit(vs + i * (size_t)dim, dim);
        CHECK_INT(vt_vindex_add(ix, (int64_t)(1000 + i), vs + i * (size_t)dim), 0);
    }
    return ix;
}

static int same_hits(const struct vt_vhit *a, const struct vt_vhit *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].key != b[i].key || a[i].score != b[i].score)
            return 0;
    return 1;
}

VT_TEST(vindex_quantize_error)
{
    enum { DIM = 300 };
    float v[DIM];
    int8_t q[DIM];

    rng_state = 1;
    for (int t = 0; t < 200; t++) {
        float scale, max = 0;
        int top = 0;

        random_unit(v, DIM);
        scale = vt_vec_quantize(v, DIM, q);
        for (int i = 0; i < DIM; i++)
            max = fabsf(v[i]) > max ? fabsf(v[i]) : max;
        CHECK_NEAR(scale, max / 127.0, 1e-9);
        for (int i = 0; i < DIM; i++) {
            /* each value within half a step, the largest one exactly +-127 */
            CHECK(fabs(q[i] * (double)scale - v[i]) <= scale * 0.5 + 1e-7);
            CHECK(q[i] >= -127 && q[i] <= 127);
            top |= q[i] == 127 || q[i] == -127;
        }
        CHECK(top);
    }
    /* a dot product of two quantized unit vectors is near the float one:
     * |error| <= sum |a_i| s_b / 2 + |b_i| s_a / 2 + s_a s_b / 4 (a worst case near 0.03
     * here); the errors, of random signs, mostly cancel: the largest seen stays small */
    double worst = 0;
    for (int t = 0; t < 200; t++) {
        float w[DIM];
        int8_t qw[DIM];
        float sv, sw;
        double d8 = 0, bound = 0;

        random_unit(v, DIM);
        random_unit(w, DIM);
        sv = vt_vec_quantize(v, DIM, q);
        sw = vt_vec_quantize(w, DIM, qw);
        for (int i = 0; i < DIM; i++) {
            d8 += (double)q[i] * qw[i];
            bound += fabsf(v[i]) * sw / 2 + fabsf(w[i]) * sv / 2 + sv * sw / 4.0;
        }
        CHECK(fabs(d8 * sv * sw - dot(v, w, DIM)) <= bound);
        CHECK(bound < 0.05);
        worst = fmax(worst, fabs(d8 * sv * sw - dot(v, w, DIM)));
    }
    CHECK(worst < 0.003);
    /* all zero: scale 0, all zero out */
    memset(v, 0, sizeof(v));
    memset(q, 5, sizeof(q));
    CHECK(vt_vec_quantize(v, DIM, q) == 0);
    for (int i = 0; i < DIM; i++)
        CHECK_INT(q[i], 0);
}

VT_TEST(vindex_equals_exact_small)
{
    enum { DIM = 37 }; /* not a multiple of the padding */
    static float vs[400 * DIM];
    float q[DIM];
    struct vt_vhit a[120], b[120];

    rng_state = 2;
    /* up to 100 items every item is rescored: the results must be identical */
    for (size_t n = 1; n <= 100; n += 33) {
        struct vt_vindex *ix = random_index(DIM, n, vs);
        CHECK_INT(vt_vindex_count(ix), n);
        CHECK_INT(vt_vindex_dim(ix), DIM);
        for (int t = 0; t < 20; t++) {
            size_t k = 1 + (size_t)t % 12, ga, gb;
            random_unit(q, DIM);
            ga = vt_vindex_search(ix, q, k, a);
            gb = vt_vindex_search_exact(ix, q, k, b);
            CHECK_INT(ga, k < n ? k : n);
            CHECK_INT(gb, ga);
            CHECK(same_hits(a, b, ga));
            for (size_t i = 1; i < ga; i++)
                CHECK(a[i - 1].score >= a[i].score);
            for (size_t i = 0; i < ga; i++)
                CHECK_NEAR(a[i].score, dot(q, vs + (size_t)(a[i].key - 1000) * DIM, DIM), 1e-5);
        }
        vt_vindex_free(ix);
    }
    /* 400 items, 100 candidates for k = 10: the same here too (quantization error is far
     * smaller than the gap between the 10th and the 100th best) */
    struct vt_vindex *ix = random_index(DIM, 400, vs);
    for (int t = 0; t < 50; t++) {
        random_unit(q, DIM);
        CHECK_INT(vt_vindex_search(ix, q, 10, a), 10);
        CHECK_INT(vt_vindex_search_exact(ix, q, 10, b), 10);
        CHECK(same_hits(a, b, 10));
    }
    /* the exact scan is exact: its best is the largest dot product */
    random_unit(q, DIM);
    vt_vindex_search_exact(ix, q, 1, b);
    for (size_t i = 0; i < 400; i++)
        CHECK(dot(q, vs + i * DIM, DIM) <= b[0].score + 1e-5);
    vt_vindex_free(ix);
}

VT_TEST(vindex_ties_and_k)
{
    enum { DIM = 16 };
    float v[DIM], w[DIM];
    struct vt_vhit a[10], b[10];
    struct vt_vindex *ix = vt_vindex_new(DIM);

    rng_state = 3;
    random_unit(v, DIM);
    random_unit(w, DIM);
    /* the same vector under keys 9, 4, 7; another under 1 */
    CHECK_INT(vt_vindex_add(ix, 9, v), 0);
    CHECK_INT(vt_vindex_add(ix, 4, v), 0);
    CHECK_INT(vt_vindex_add(ix, 1, w), 0);
    CHECK_INT(vt_vindex_add(ix, 7, v), 0);
    /* k larger than the index: every item, ties broken by key */
    CHECK_INT(vt_vindex_search(ix, v, 10, a), 4);
    CHECK_INT(vt_vindex_search_exact(ix, v, 10, b), 4);
    CHECK(same_hits(a, b, 4));
    CHECK_INT(a[0].key, 4);
    CHECK_INT(a[1].key, 7);
    CHECK_INT(a[2].key, 9);
    CHECK_INT(a[3].key, 1);
    CHECK_NEAR(a[0].score, 1.0, 1e-5);
    CHECK(a[0].score == a[1].score && a[1].score == a[2].score);
    /* k cutting through the tie keeps the lower keys */
    CHECK_INT(vt_vindex_search(ix, v, 2, a), 2);
    CHECK_INT(a[0].key, 4);
    CHECK_INT(a[1].key, 7);
    CHECK_INT(vt_vindex_search(ix, v, 0, a), 0);
    vt_vindex_free(ix);

    /* many ties straddling the candidate cut (100): still the lowest keys, as exact */
    ix = vt_vindex_new(DIM);
    for (int64_t key = 500; key > 0; key--)
        CHECK_INT(vt_vindex_add(ix, key, v), 0);
    CHECK_INT(vt_vindex_search(ix, v, 5, a), 5);
    CHECK_INT(vt_vindex_search_exact(ix, v, 5, b), 5);
    CHECK(same_hits(a, b, 5));
    for (int i = 0; i < 5; i++)
        CHECK_INT(a[i].key, i + 1);
    vt_vindex_free(ix);

    /* an empty index */
    ix = vt_vindex_new(DIM);
    CHECK_INT(vt_vindex_search(ix, v, 5, a), 0);
    CHECK_INT(vt_vindex_search_exact(ix, v, 5, a), 0);
    vt_vindex_free(ix);
}

VT_TEST(vindex_dims_and_hostile_values)
{
    enum { DIM = 8 };
    float v[DIM] = {1, 0, 0, 0, 0, 0, 0, 0}, bad[DIM];
    int8_t q8[DIM];
    struct vt_vhit h[2];
    struct vt_vindex *ix;

    CHECK(vt_vindex_new(0) == NULL);
    CHECK(vt_vindex_new(-3) == NULL);
    CHECK(vt_vindex_new(1 << 20) == NULL);
    vt_vindex_free(NULL);
    ix = vt_vindex_new(DIM);
    /* a blob of another dimension is refused and changes nothing */
    CHECK_INT(vt_vindex_add_blob(ix, 1, v, 7 * sizeof(float)), VT_EINVAL);
    CHECK_INT(vt_vindex_add_blob(ix, 1, v, 9 * sizeof(float)), VT_EINVAL);
    CHECK_INT(vt_vindex_add_blob(ix, 1, v, 0), VT_EINVAL);
    CHECK_INT(vt_vindex_count(ix), 0);
    /* an unaligned blob of the right size is fine */
    {
        unsigned char buf[DIM * sizeof(float) + 1];
        memcpy(buf + 1, v, sizeof(v));
        CHECK_INT(vt_vindex_add_blob(ix, 1, buf + 1, sizeof(v)), 0);
    }
    CHECK_INT(vt_vindex_count(ix), 1);
    /* NaN and infinity refused */
    memcpy(bad, v, sizeof(v));
    bad[3] = NAN;
    CHECK_INT(vt_vindex_add(ix, 2, bad), VT_EINVAL);
    bad[3] = INFINITY;
    CHECK_INT(vt_vindex_add(ix, 2, bad), VT_EINVAL);
    CHECK_INT(vt_vindex_count(ix), 1);
    /* a query with NaN finds nothing */
    bad[3] = NAN;
    CHECK_INT(vt_vindex_search(ix, bad, 2, h), 0);
    CHECK_INT(vt_vindex_search_exact(ix, bad, 2, h), 0);
    /* add_q: bad int8 copies and scales refused */
    vt_vec_quantize(v, DIM, q8);
    CHECK_INT(vt_vindex_add_q(ix, 3, v, q8, -1.0f), VT_EINVAL);
    CHECK_INT(vt_vindex_add_q(ix, 3, v, q8, NAN), VT_EINVAL);
    q8[2] = INT8_MIN;
    CHECK_INT(vt_vindex_add_q(ix, 3, v, q8, 1.0f / 127), VT_EINVAL);
    CHECK_INT(vt_vindex_count(ix), 1);
    /* an all-zero vector is accepted (an empty text) and scores 0; as a query it
     * matches nothing */
    memset(bad, 0, sizeof(bad));
    CHECK_INT(vt_vindex_add(ix, 4, bad), 0);
    CHECK_INT(vt_vindex_search(ix, bad, 2, h), 0);
    CHECK_INT(vt_vindex_search_exact(ix, bad, 2, h), 0);
    CHECK_INT(vt_vindex_search(ix, v, 2, h), 2);
    CHECK_INT(h[0].key, 1);
    CHECK_NEAR(h[0].score, 1.0, 1e-6);
    CHECK_INT(h[1].key, 4);
    CHECK_NEAR(h[1].score, 0.0, 1e-6);
    vt_vindex_free(ix);
}

VT_TEST(vindex_replace_remove_add_q)
{
    enum { DIM = 64, N = 3000 };
    static float vs[N * DIM];
    float q[DIM];
    int8_t q8[DIM];
    struct vt_vhit a[20], b[20];
    struct vt_vindex *ix, *iq;

    rng_state = 4;
    ix = random_index(DIM, N, vs);
    /* re-adding a key replaces its vector */
    random_unit(q, DIM);
    CHECK_INT(vt_vindex_add(ix, 1000 + 17, q), 0);
    CHECK_INT(vt_vindex_count(ix), N);
    CHECK_INT(vt_vindex_search(ix, q, 1, a), 1);
    CHECK_INT(a[0].key, 1017);
    CHECK_NEAR(a[0].score, 1.0, 1e-5);
    /* removal: the key is gone, the others (one of them moved) still found */
    CHECK_INT(vt_vindex_remove(ix, 1017), 0);
    CHECK_INT(vt_vindex_remove(ix, 1017), VT_ENOTFOUND);
    CHECK_INT(vt_vindex_remove(ix, 5), VT_ENOTFOUND);
    CHECK_INT(vt_vindex_count(ix), N - 1);
    CHECK_INT(vt_vindex_search(ix, q, 20, a), 20);
    for (int i = 0; i < 20; i++)
        CHECK(a[i].key != 1017);
    for (size_t i = 0; i < N; i += 97) {
        if (i == 17)
            continue;
        CHECK_INT(vt_vindex_search(ix, vs + i * DIM, 1, a), 1);
        CHECK_INT(a[0].key, (int64_t)(1000 + i));
    }
    /* remove every other key, then search still equals exact and never returns them */
    for (size_t i = 0; i < N; i += 2)
        if (i != 17)
            CHECK_INT(vt_vindex_remove(ix, (int64_t)(1000 + i)), 0);
    CHECK_INT(vt_vindex_count(ix), N / 2 - 1);
    for (int t = 0; t < 20; t++) {
        random_unit(q, DIM);
        CHECK_INT(vt_vindex_search(ix, q, 10, a), 10);
        CHECK_INT(vt_vindex_search_exact(ix, q, 10, b), 10);
        CHECK(same_hits(a, b, 10));
        for (int i = 0; i < 10; i++)
            CHECK((a[i].key - 1000) % 2 == 1);
    }
    /* keys removed can be added again */
    CHECK_INT(vt_vindex_add(ix, 1000, vs), 0);
    CHECK_INT(vt_vindex_search(ix, vs, 1, a), 1);
    CHECK_INT(a[0].key, 1000);
    vt_vindex_free(ix);

    /* add_q with vt_vec_quantize's copy gives the same index as add */
    ix = vt_vindex_new(DIM);
    iq = vt_vindex_new(DIM);
    CHECK_INT(vt_vindex_reserve(iq, 500), 0);
    for (size_t i = 0; i < 500; i++) {
        float s = vt_vec_quantize(vs + i * DIM, DIM, q8);
        CHECK_INT(vt_vindex_add(ix, (int64_t)i, vs + i * DIM), 0);
        CHECK_INT(vt_vindex_add_q(iq, (int64_t)i, vs + i * DIM, q8, s), 0);
    }
    for (int t = 0; t < 20; t++) {
        random_unit(q, DIM);
        CHECK_INT(vt_vindex_search(ix, q, 20, a), 20);
        CHECK_INT(vt_vindex_search(iq, q, 20, b), 20);
        CHECK(same_hits(a, b, 20));
    }
    vt_vindex_free(ix);
    vt_vindex_free(iq);
}

/* Random adds, replacements and removals of keys with awkward patterns (strides of
 * powers of two, high bits, negatives), checked against a plain table of what is in. */
VT_TEST(vindex_key_table)
{
    enum { DIM = 8, NK = 3000 };
    static int64_t keys[NK];
    static float vs[NK * DIM];
    static int in[NK];
    struct vt_vhit h[1];
    struct vt_vindex *ix = vt_vindex_new(DIM);
    size_t count = 0;

    rng_state = 7;
    for (int i = 0; i < NK; i++) {
        keys[i] = i % 3 == 0   ? (int64_t)i * 8
                  : i % 3 == 1 ? (int64_t)((uint64_t)i << 40)
                               : -(int64_t)i * 1024;
        random_unit(vs + i * DIM, DIM);
    }
    for (int step = 0; step < 40000; step++) {
        int i = (int)(rng() % NK);
        if (rng() % 3) {
            CHECK_INT(vt_vindex_add(ix, keys[i], vs + i * DIM), 0);
            count += !in[i];
            in[i] = 1;
        } else {
            CHECK_INT(vt_vindex_remove(ix, keys[i]), in[i] ? 0 : VT_ENOTFOUND);
            count -= in[i];
            in[i] = 0;
        }
    }
    CHECK_INT(vt_vindex_count(ix), count);
    CHECK(count > NK / 2 && count < NK);
    /* a key present is the best match of its own vector; a removed one is no match */
    vt_vindex_set_threads(ix, 2);
    for (int i = 0; i < NK; i++) {
        CHECK_INT(vt_vindex_search(ix, vs + i * DIM, 1, h), 1);
        if (in[i]) {
            CHECK_INT(h[0].key, keys[i]);
            CHECK_NEAR(h[0].score, 1.0, 1e-5);
        } else {
            CHECK(h[0].key != keys[i]);
        }
    }
    vt_vindex_free(ix);
}

static int keep_multiple_of_3(void *user, int64_t key)
{
    (*(int *)user)++;
    return key % 3 == 0;
}

VT_TEST(vindex_keep_filter)
{
    enum { DIM = 32, N = 5000 };
    static float vs[N * DIM];
    float q[DIM];
    struct vt_vhit a[10];
    struct vt_vindex *ix;

    rng_state = 5;
    ix = random_index(DIM, N, vs);
    for (int t = 0; t < 10; t++) {
        int calls = 0;
        double best = -2;
        size_t besti = 0;

        random_unit(q, DIM);
        CHECK_INT(vt_vindex_search_keep(ix, q, 10, a, keep_multiple_of_3, &calls), 10);
        /* asked about far fewer items than the index holds */
        CHECK(calls > 0 && calls < N / 2);
        for (int i = 0; i < 10; i++)
            CHECK(a[i].key % 3 == 0);
        /* the best kept item is the true best among multiples of 3 */
        for (size_t i = 0; i < N; i++) {
            double d = dot(q, vs + i * DIM, DIM);
            if ((1000 + i) % 3 == 0 && d > best) {
                best = d;
                besti = i;
            }
        }
        CHECK_INT(a[0].key, (int64_t)(1000 + besti));
    }
    vt_vindex_free(ix);
}

VT_TEST(vindex_recall_20k)
{
    enum { DIM = 128, N = 20000, Q = 100, K = 10 };
    float *vs = malloc((size_t)N * DIM * sizeof(float));
    float q[DIM];
    struct vt_vhit a[K], b[K];
    struct vt_vindex *ix;
    size_t found = 0;

    rng_state = 6;
    ix = random_index(DIM, N, vs);
    /* one scanning thread, then three (their candidates merged) */
    for (int threads = 1; threads <= 3; threads += 2) {
        vt_vindex_set_threads(ix, threads);
        found = 0;
        for (int t = 0; t < Q; t++) {
            random_unit(q, DIM);
            if (t % 2) { /* half the queries near a stored vector */
                float *v = vs + (rng() % N) * DIM;
                for (int i = 0; i < DIM; i++)
                    q[i] += 2 * v[i];
                double n = sqrt(dot(q, q, DIM));
                for (int i = 0; i < DIM; i++)
                    q[i] = (float)(q[i] / n);
            }
            CHECK_INT(vt_vindex_search(ix, q, K, a), K);
            CHECK_INT(vt_vindex_search_exact(ix, q, K, b), K);
            for (int i = 0; i < K; i++)
                for (int j = 0; j < K; j++)
                    found += a[i].key == b[j].key;
        }
        CHECK((double)found / (Q * K) >= 0.98);
    }
    vt_vindex_free(ix);
    free(vs);
}

VT_TEST(vindex_rrf)
{
    CHECK_NEAR(vt_rrf(0), 1.0 / 61, 1e-15);
    CHECK_NEAR(vt_rrf(1), 1.0 / 62, 1e-15);
    CHECK_NEAR(vt_rrf(39), 1.0 / 100, 1e-15);
    /* first in one list beats second in two only when the lists agree less */
    CHECK(vt_rrf(0) + vt_rrf(0) > vt_rrf(1) + vt_rrf(1));
    CHECK(vt_rrf(1) + vt_rrf(1) > vt_rrf(0) + vt_rrf(100));
    for (size_t r = 0; r < 1000; r++)
        CHECK(vt_rrf(r) > vt_rrf(r + 1) && vt_rrf(r) > 0);
}
