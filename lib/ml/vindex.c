/*
 * The vector index of vindex.h: every vector kept twice in growing arrays, as float32
 * and as int8 (vt_vec_quantize, one scale per vector), rows padded with zeros to a
 * multiple of 32 so the dot-product loops have no tail. A search quantizes the query,
 * scans every int8 row (dots_i8: gcc vectorises its fixed 32-wide inner loop, and builds
 * an AVX2 clone beside the baseline one where the compiler can), keeps the best
 * max(4k, 100) candidates per scanning thread in a heap, and rescores the candidates with
 * the float32 vectors. Large indexes are scanned by a few threads, each over a contiguous
 * range of rows. A hash table from key to row makes adding an existing key a replacement
 * and removal a swap with the last row. The large arrays are mappings of their own on
 * Linux, grown with mremap and advised to use huge pages: on the virtual machine this
 * was measured on, a page fault costs tens of microseconds, and 4 KiB pages made adding
 * 1M x 256 vectors take 13 s; with 2 MiB pages it took 1 to 4 s on a loaded machine,
 * most of it the kernel zeroing fresh memory (huge pages also spare the scan TLB misses).
 */
#include "ml/vindex.h"

#include "base/util.h"
#include "vidtheque.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mman.h>
#ifdef MREMAP_MAYMOVE /* declared with _GNU_SOURCE */
#define VT_BIG_MAPS 1
#endif
#endif

#define VINDEX_MAX_DIM  8192
#define VINDEX_MAX_ROWS ((size_t)UINT32_MAX - 1)
/* Automatic threads: one per this many rows. One core scans 1M x 256 in about 15 ms of
 * CPU, within the 30 ms target; a second thread halved that on an idle machine but,
 * on a busy one, made p99 worse (a search waits for its slowest thread) and takes a
 * core from concurrent searches. */
#define ROWS_PER_THREAD ((size_t)1000000)
#define MAX_THREADS     4
#define BLOCK           512 /* rows whose int8 dots are computed before they are ranked */

#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define VT_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef VT_CLONES
#define VT_CLONES
#endif

struct slot {
    int64_t key;
    uint32_t row; /* row + 1; 0: empty */
};

/* A growing array: malloc'd while small, then (Linux) an anonymous mapping. */
struct buf {
    void *p;
    size_t size; /* bytes allocated */
    int mapped;
};

struct vt_vindex {
    int dim;
    size_t dimp; /* dim rounded up to 32: the stride of both row arrays */
    size_t n, cap;
    struct buf f32_buf, i8_buf, scale_buf, keys_buf;
    /* views of the buffers above */
    float *f32;      /* n * dimp */
    int8_t *i8;      /* n * dimp */
    float *scale;    /* n: int8 dot * scale[row] * query scale = approximate cosine */
    int64_t *keys;   /* n */
    int max_threads; /* 0: automatic */
    /* key -> row: open addressing, linear probing, one cache line per probe */
    struct slot *slot;
    size_t slots; /* a power of two, at least twice n */
};

struct cand {
    float s;
    uint32_t row;
};

/*
 * The home slot of key. Keys that differ only in their three low bits share an aligned
 * block of eight slots (two cache lines), so that loading row ids in order touches
 * memory in order; the block itself comes from a full 64-bit mix of the other bits, so
 * that no pattern of keys (strides of powers of two, ids in the high bits) piles up in a
 * few blocks.
 */
static size_t slot_home(int64_t key, size_t mask)
{
    uint64_t x = ((uint64_t)key >> 3) + 0x9e3779b97f4a7c15ULL;

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (size_t)((x & ~(uint64_t)7) | ((uint64_t)key & 7)) & mask;
}

/* The slot holding key, or the empty slot where it would go. */
static size_t slot_find(const struct vt_vindex *ix, int64_t key)
{
    size_t mask = ix->slots - 1, i = slot_home(key, mask);

    while (ix->slot[i].row && ix->slot[i].key != key)
        i = (i + 1) & mask;
    return i;
}

static int slots_grow(struct vt_vindex *ix, size_t need)
{
    size_t slots = ix->slots ? ix->slots : 64;

    while (slots < 2 * need)
        slots *= 2;
    if (slots == ix->slots)
        return 0;
    struct slot *table = calloc(slots, sizeof(*table));
    if (!table)
        return VT_EIO;
    free(ix->slot);
    ix->slot = table;
    ix->slots = slots;
    for (size_t r = 0; r < ix->n; r++) {
        size_t i = slot_find(ix, ix->keys[r]);
        ix->slot[i] = (struct slot){.key = ix->keys[r], .row = (uint32_t)r + 1};
    }
    return 0;
}

/* Remove slot i, shifting back the entries of its probe run that hashed before it. */
static void slot_delete(struct vt_vindex *ix, size_t i)
{
    size_t mask = ix->slots - 1, j = i;

    for (;;) {
        j = (j + 1) & mask;
        if (!ix->slot[j].row)
            break;
        size_t home = slot_home(ix->slot[j].key, mask);
        /* j's entry may move to i when its home is not in the cyclic range (i, j] */
        if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
            continue;
        ix->slot[i] = ix->slot[j];
        i = j;
    }
    ix->slot[i].row = 0;
}

struct vt_vindex *vt_vindex_new(int dim)
{
    struct vt_vindex *ix;

    if (dim <= 0 || dim > VINDEX_MAX_DIM)
        return NULL;
    ix = calloc(1, sizeof(*ix));
    if (!ix)
        return NULL;
    ix->dim = dim;
    ix->dimp = ((size_t)dim + 31) / 32 * 32;
    if (slots_grow(ix, 16) < 0) {
        free(ix);
        return NULL;
    }
    return ix;
}

#define BIG_BYTES ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

static void buf_release(struct buf *b)
{
#ifdef VT_BIG_MAPS
    if (b->mapped) {
        munmap(b->p, b->size);
        return;
    }
#endif
    free(b->p);
}

/* Grow b to n bytes at least, keeping its contents; 0 or VT_EIO (b unchanged). */
static int buf_grow(struct buf *b, size_t n)
{
    void *q;

    if (n <= b->size)
        return 0;
#ifdef VT_BIG_MAPS
    if (n >= BIG_BYTES) {
        size_t size;

        if (n > SIZE_MAX - HUGE_PAGE)
            return VT_EIO;
        size = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        if (b->mapped) {
            q = mremap(b->p, b->size, size, MREMAP_MAYMOVE);
        } else {
            q = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (q != MAP_FAILED && b->size)
                memcpy(q, b->p, b->size);
        }
        if (q == MAP_FAILED)
            return VT_EIO;
#ifdef MADV_HUGEPAGE
        madvise(q, size, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
#endif
        if (!b->mapped)
            free(b->p);
        b->p = q;
        b->size = size;
        b->mapped = 1;
        return 0;
    }
#endif
    q = realloc(b->p, n);
    if (!q)
        return VT_EIO;
    b->p = q;
    b->size = n;
    return 0;
}

void vt_vindex_free(struct vt_vindex *ix)
{
    if (!ix)
        return;
    buf_release(&ix->f32_buf);
    buf_release(&ix->i8_buf);
    buf_release(&ix->scale_buf);
    buf_release(&ix->keys_buf);
    free(ix->slot);
    free(ix);
}

int vt_vindex_dim(const struct vt_vindex *ix)
{
    return ix->dim;
}

size_t vt_vindex_count(const struct vt_vindex *ix)
{
    return ix->n;
}

void vt_vindex_set_threads(struct vt_vindex *ix, int max_threads)
{
    ix->max_threads = max_threads < 0 ? 0 : max_threads > MAX_THREADS ? MAX_THREADS : max_threads;
}

int vt_vindex_reserve(struct vt_vindex *ix, size_t n)
{
    int rc;

    if (n <= ix->cap)
        return 0;
    /* n * dimp * 4 cannot overflow: dimp <= 8192 and rows < 2^32 */
    if (n > VINDEX_MAX_ROWS)
        return VT_EIO;
    rc = buf_grow(&ix->f32_buf, n * ix->dimp * sizeof(float));
    if (!rc)
        rc = buf_grow(&ix->i8_buf, n * ix->dimp);
    if (!rc)
        rc = buf_grow(&ix->scale_buf, n * sizeof(float));
    if (!rc)
        rc = buf_grow(&ix->keys_buf, n * sizeof(int64_t));
    /* the views follow whatever moved, even when a later step failed; slots_grow reads
     * the keys through theirs */
    ix->f32 = ix->f32_buf.p;
    ix->i8 = ix->i8_buf.p;
    ix->scale = ix->scale_buf.p;
    ix->keys = ix->keys_buf.p;
    if (!rc)
        rc = slots_grow(ix, n);
    if (rc < 0)
        return rc;
    ix->cap = n;
    return 0;
}

/* Largest |v[i]|: sixteen running maxima, so that the loop vectorises. */
static float max_abs(const float *v, int dim)
{
    float m[16] = {0}, max;
    int i = 0;

    for (; i + 16 <= dim; i += 16)
        for (int j = 0; j < 16; j++) {
            float a = fabsf(v[i + j]);
            m[j] = a > m[j] ? a : m[j];
        }
    for (int j = 0; i < dim; i++, j++) {
        float a = fabsf(v[i]);
        m[j] = a > m[j] ? a : m[j];
    }
    max = 0;
    for (int j = 0; j < 16; j++)
        max = m[j] > max ? m[j] : max;
    return max;
}

static inline int8_t quantize_one(float x)
{
    /* round half away from zero; |x| <= 127 but for the rounding of 127 / max */
    int r = (int)(x + copysignf(0.5f, x));

    r = r > 127 ? 127 : r < -127 ? -127 : r;
    return (int8_t)r;
}

/* restrict: int8_t may alias anything, and the loop would not vectorise without it */
static void quantize_rows(const float *restrict v, int dim, float inv, int8_t *restrict out)
{
    int i = 0;

    for (; i + 16 <= dim; i += 16)
        for (int j = 0; j < 16; j++)
            out[i + j] = quantize_one(v[i + j] * inv);
    for (; i < dim; i++)
        out[i] = quantize_one(v[i] * inv);
}

float vt_vec_quantize(const float *v, int dim, int8_t *out)
{
    float max = max_abs(v, dim < 0 ? 0 : dim);

    if (!(max > 0) || !isfinite(max)) {
        memset(out, 0, (size_t)(dim > 0 ? dim : 0));
        return 0;
    }
    quantize_rows(v, dim, 127.0f / max, out);
    return max / 127.0f;
}

static int all_finite(const float *v, int dim)
{
    for (int i = 0; i < dim; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

/* The row for key: its existing row (replaced) or a new last row. */
static int row_for(struct vt_vindex *ix, int64_t key, size_t *row)
{
    size_t i = slot_find(ix, key);

    if (ix->slot[i].row) {
        *row = ix->slot[i].row - 1;
        return 0;
    }
    if (ix->n == ix->cap) {
        size_t cap = ix->cap < 1024 ? 1024 : ix->cap + ix->cap / 2;
        if (cap > VINDEX_MAX_ROWS)
            cap = VINDEX_MAX_ROWS;
        if (cap <= ix->n || vt_vindex_reserve(ix, cap) < 0)
            return VT_EIO;
        i = slot_find(ix, key); /* the table may have been rebuilt */
    }
    *row = ix->n++;
    ix->keys[*row] = key;
    ix->slot[i] = (struct slot){.key = key, .row = (uint32_t)*row + 1};
    return 0;
}

int vt_vindex_add(struct vt_vindex *ix, int64_t key, const float *v)
{
    size_t row, dimp = ix->dimp, dim = (size_t)ix->dim;
    int rc;

    if (!all_finite(v, ix->dim))
        return VT_EINVAL;
    rc = row_for(ix, key, &row);
    if (rc < 0)
        return rc;
    memcpy(ix->f32 + row * dimp, v, dim * sizeof(float));
    memset(ix->f32 + row * dimp + dim, 0, (dimp - dim) * sizeof(float));
    ix->scale[row] = vt_vec_quantize(v, ix->dim, ix->i8 + row * dimp);
    memset(ix->i8 + row * dimp + dim, 0, dimp - dim);
    return 0;
}

int vt_vindex_add_q(struct vt_vindex *ix, int64_t key, const float *v, const int8_t *q, float scale)
{
    size_t row, dimp = ix->dimp, dim = (size_t)ix->dim;
    int rc;

    if (!all_finite(v, ix->dim) || !isfinite(scale) || scale < 0)
        return VT_EINVAL;
    for (size_t i = 0; i < dim; i++)
        if (q[i] == INT8_MIN)
            return VT_EINVAL;
    rc = row_for(ix, key, &row);
    if (rc < 0)
        return rc;
    memcpy(ix->f32 + row * dimp, v, dim * sizeof(float));
    memset(ix->f32 + row * dimp + dim, 0, (dimp - dim) * sizeof(float));
    memcpy(ix->i8 + row * dimp, q, dim);
    memset(ix->i8 + row * dimp + dim, 0, dimp - dim);
    ix->scale[row] = scale;
    return 0;
}

int vt_vindex_add_blob(struct vt_vindex *ix, int64_t key, const void *blob, size_t nbytes)
{
    float buf[256], *v = buf;
    int rc;

    if (nbytes != (size_t)ix->dim * sizeof(float))
        return VT_EINVAL;
    if (ix->dim > (int)VT_ARRAY_LEN(buf)) {
        v = malloc(nbytes);
        if (!v)
            return VT_EIO;
    }
    memcpy(v, blob, nbytes); /* a blob need not be aligned for floats */
    rc = vt_vindex_add(ix, key, v);
    if (v != buf)
        free(v);
    return rc;
}

int vt_vindex_remove(struct vt_vindex *ix, int64_t key)
{
    size_t i = slot_find(ix, key), row, last, dimp = ix->dimp;

    if (!ix->slot[i].row)
        return VT_ENOTFOUND;
    row = ix->slot[i].row - 1;
    slot_delete(ix, i);
    last = --ix->n;
    if (row != last) {
        memcpy(ix->f32 + row * dimp, ix->f32 + last * dimp, dimp * sizeof(float));
        memcpy(ix->i8 + row * dimp, ix->i8 + last * dimp, dimp);
        ix->scale[row] = ix->scale[last];
        ix->keys[row] = ix->keys[last];
        ix->slot[slot_find(ix, ix->keys[row])].row = (uint32_t)row + 1;
    }
    return 0;
}

/* int8 dot products of n rows against the query widened to int16; the fixed inner
 * trip count lets gcc -O2 (whose cheap cost model refuses loops needing an epilogue)
 * vectorise it. */
VT_CLONES static void dots_i8(const int8_t *restrict x, const int16_t *restrict q, size_t dimp,
                              size_t n, int32_t *restrict out)
{
    for (size_t r = 0; r < n; r++, x += dimp) {
        int32_t s = 0;
        for (size_t b = 0; b < dimp; b += 32)
            for (int j = 0; j < 32; j++)
                s += (int32_t)x[b + j] * q[b + j];
        out[r] = s;
    }
}

/* float32 dot product over dimp (a multiple of 32) floats. Eight independent partial
 * sums, added in a fixed order: vectorisable without reassociating, and the same
 * result wherever it is called (search's rescoring and the exact scan agree). */
VT_CLONES static float dot_f32(const float *restrict a, const float *restrict b, size_t dimp)
{
    float acc[8] = {0};

    for (size_t i = 0; i < dimp; i += 8)
        for (int j = 0; j < 8; j++)
            acc[j] += a[i + j] * b[i + j];
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* Candidate order: higher score first, then lower key. */
static int better(const struct vt_vindex *ix, struct cand a, struct cand b)
{
    if (a.s != b.s)
        return a.s > b.s;
    return ix->keys[a.row] < ix->keys[b.row];
}

/* A bounded min-heap: its root is the worst candidate kept. */
struct heap {
    struct cand *c;
    size_t n, cap;
};

static void heap_sift_down(const struct vt_vindex *ix, struct heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < h->n && better(ix, h->c[m], h->c[l]))
            m = l;
        if (l + 1 < h->n && better(ix, h->c[m], h->c[l + 1]))
            m = l + 1;
        if (m == i)
            return;
        struct cand t = h->c[i];
        h->c[i] = h->c[m];
        h->c[m] = t;
        i = m;
    }
}

/* Offer c: kept when the heap has room or c is better than its worst. */
static void heap_offer(const struct vt_vindex *ix, struct heap *h, struct cand c)
{
    if (h->n < h->cap) {
        size_t i = h->n++;
        h->c[i] = c;
        while (i && better(ix, h->c[(i - 1) / 2], h->c[i])) {
            struct cand t = h->c[i];
            h->c[i] = h->c[(i - 1) / 2];
            h->c[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
        return;
    }
    if (!better(ix, c, h->c[0]))
        return;
    h->c[0] = c;
    heap_sift_down(ix, h, 0);
}

struct scan {
    const struct vt_vindex *ix;
    const float *q;     /* exact: the query padded to dimp */
    const int16_t *q16; /* int8 pass: the quantized query widened, NULL for exact */
    size_t from, to;
    vt_vindex_keep_fn keep;
    void *user;
    struct heap h;
};

static void *scan_run(void *arg)
{
    struct scan *sc = arg;
    const struct vt_vindex *ix = sc->ix;
    struct heap *h = &sc->h;
    size_t dimp = ix->dimp;
    int32_t dots[BLOCK];

    for (size_t r0 = sc->from; r0 < sc->to; r0 += BLOCK) {
        size_t nb = sc->to - r0 < BLOCK ? sc->to - r0 : BLOCK;

        if (sc->q16)
            dots_i8(ix->i8 + r0 * dimp, sc->q16, dimp, nb, dots);
        for (size_t j = 0; j < nb; j++) {
            struct cand c = {.row = (uint32_t)(r0 + j)};

            if (sc->q16)
                c.s = (float)dots[j] * ix->scale[r0 + j];
            else
                c.s = dot_f32(ix->f32 + (r0 + j) * dimp, sc->q, dimp);
            /* cheap rejection first: most rows are worse than the kept worst */
            if (h->n == h->cap && c.s < h->c[0].s)
                continue;
            if (sc->keep && !sc->keep(sc->user, ix->keys[c.row]))
                continue;
            heap_offer(ix, h, c);
        }
    }
    return NULL;
}

static int threads_for(const struct vt_vindex *ix)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t t = ix->n / ROWS_PER_THREAD;

    if (ix->max_threads) /* as many as asked, each with a row at least */
        t = (size_t)ix->max_threads;
    else if (t > (size_t)(cpus < 1 ? 1 : cpus))
        t = (size_t)(cpus < 1 ? 1 : cpus);
    if (t > MAX_THREADS)
        t = MAX_THREADS;
    if (t > ix->n)
        t = ix->n;
    return t < 1 ? 1 : (int)t;
}

struct scored {
    float s;
    int64_t key;
};

static int scored_cmp(const void *a, const void *b)
{
    const struct scored *x = a, *y = b;

    if (x->s != y->s)
        return x->s > y->s ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/*
 * Scan every row with per-thread heaps of cap candidates, then score the union in
 * float32 and write the best k. q16 NULL: the scores are already float32.
 */
static size_t scan_all(const struct vt_vindex *ix, const float *qp, const int16_t *q16, size_t cap,
                       size_t k, struct vt_vhit *hits, vt_vindex_keep_fn keep, void *user)
{
    struct scan sc[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    int nt = threads_for(ix);
    size_t total = 0, out = 0;
    struct cand *pool;
    struct scored *all;

    if (cap > ix->n)
        cap = ix->n;
    pool = malloc((size_t)nt * cap * sizeof(*pool));
    if (!pool)
        return 0;
    for (int t = 0; t < nt; t++) {
        sc[t] = (struct scan){
            .ix = ix,
            .q = qp,
            .q16 = q16,
            .from = ix->n * (size_t)t / (size_t)nt,
            .to = ix->n * (size_t)(t + 1) / (size_t)nt,
            .keep = keep,
            .user = user,
            .h = {.c = pool + (size_t)t * cap, .cap = cap},
        };
    }
    /* the calling thread takes the first range; a thread that cannot start leaves its
     * range to the calling thread too */
    for (int t = 1; t < nt; t++)
        started[t] = pthread_create(&tid[t], NULL, scan_run, &sc[t]) == 0;
    scan_run(&sc[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            scan_run(&sc[t]);
        total += sc[t].h.n;
    }
    total += sc[0].h.n;
    all = malloc((total ? total : 1) * sizeof(*all));
    if (!all) {
        free(pool);
        return 0;
    }
    for (int t = 0; t < nt; t++) {
        for (size_t i = 0; i < sc[t].h.n; i++) {
            struct cand c = sc[t].h.c[i];
            all[out].key = ix->keys[c.row];
            all[out].s = q16 ? dot_f32(ix->f32 + (size_t)c.row * ix->dimp, qp, ix->dimp) : c.s;
            out++;
        }
    }
    qsort(all, total, sizeof(*all), scored_cmp);
    if (k > total)
        k = total;
    for (size_t i = 0; i < k; i++) {
        hits[i].key = all[i].key;
        hits[i].score = all[i].s;
    }
    free(all);
    free(pool);
    return k;
}

/* The query padded with zeros to dimp floats into qp; 0 when it has a non-finite value
 * or is all zero (a text without a token: it means nothing, so it matches nothing). */
static int pad_query(const struct vt_vindex *ix, const float *q, float *qp)
{
    if (!all_finite(q, ix->dim) || !(max_abs(q, ix->dim) > 0))
        return 0;
    memcpy(qp, q, (size_t)ix->dim * sizeof(float));
    memset(qp + ix->dim, 0, (ix->dimp - (size_t)ix->dim) * sizeof(float));
    return 1;
}

size_t vt_vindex_search_keep(const struct vt_vindex *ix, const float *q, size_t k,
                             struct vt_vhit *hits, vt_vindex_keep_fn keep, void *user)
{
    size_t cap, got = 0;
    float *qp;
    int8_t *q8;
    int16_t *q16;

    if (!k || !ix->n)
        return 0;
    qp = malloc(ix->dimp * sizeof(*qp));
    q8 = malloc(ix->dimp);
    q16 = malloc(ix->dimp * sizeof(*q16));
    if (!qp || !q8 || !q16 || !pad_query(ix, q, qp))
        goto out;
    vt_vec_quantize(qp, (int)ix->dimp, q8);
    for (size_t i = 0; i < ix->dimp; i++)
        q16[i] = q8[i];
    cap = k > SIZE_MAX / 4 ? SIZE_MAX : 4 * k;
    if (cap < 100)
        cap = 100;
    got = scan_all(ix, qp, q16, cap, k, hits, keep, user);
out:
    free(qp);
    free(q8);
    free(q16);
    return got;
}

size_t vt_vindex_search(const struct vt_vindex *ix, const float *q, size_t k, struct vt_vhit *hits)
{
    return vt_vindex_search_keep(ix, q, k, hits, NULL, NULL);
}

size_t vt_vindex_search_exact(const struct vt_vindex *ix, const float *q, size_t k,
                              struct vt_vhit *hits)
{
    size_t got = 0;
    float *qp;

    if (!k || !ix->n)
        return 0;
    qp = malloc(ix->dimp * sizeof(*qp));
    if (qp && pad_query(ix, q, qp))
        got = scan_all(ix, qp, NULL, k, k, hits, NULL, NULL);
    free(qp);
    return got;
}
