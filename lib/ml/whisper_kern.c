/*
 * Kernels of Whisper's network (see whisper_kern.h). Weights stay F16 in memory (half the
 * bytes of F32: the decoder reads every matrix once per token, so its speed is memory
 * bandwidth), packed once into panels of 16 rows, and are widened to F32 in the kernel; sums
 * are F32. Every product, the attention's included, runs through register-blocked kernels
 * that hold a 6 x 16 block of sums (for a single token, 8 sums over 16 or 64 columns), so
 * each value loaded feeds many FMAs. Work is split over a small pool of threads that each caller
 * owns (concurrent encodes and decodes never share state); items are taken from an atomic counter,
 * so a core that another process keeps busy simply takes fewer.
 */
#include "ml/whisper_kern.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define VT_WK_AVX2 1
#define KATTR      __attribute__((target("avx2,fma,f16c")))
#endif

/* ---- half floats ---- */

float vt_wk_f16_to_f32(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
    float f;

    if (e == 0) {
        f = ldexpf((float)m, -24);
        memcpy(&u, &f, 4);
        u |= s;
    } else if (e == 31) {
        u = s | 0x7f800000u | (m << 13);
    } else {
        u = s | ((e + 112) << 23) | (m << 13);
    }
    memcpy(&f, &u, 4);
    return f;
}

uint16_t vt_wk_f32_to_f16(float f)
{
    uint32_t x, a, s, r;

    memcpy(&x, &f, 4);
    s = (x >> 16) & 0x8000;
    a = x & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (uint16_t)(s | 0x7e00);
    if (a >= 0x477ff000u) /* rounds to 65520 or more: infinity */
        return (uint16_t)(s | 0x7c00);
    if (a < 0x38800000u) /* below 2^-14: a subnormal, in units of 2^-24 (rint: to even) */
        return (uint16_t)(s | (uint32_t)lrintf(fabsf(f) * 16777216.0f));
    r = a + 0xfff + ((a >> 13) & 1);
    return (uint16_t)(s | ((r - (112u << 23)) >> 13));
}

/* The scalar kernels widen through a table: 256 KB once, built on first use. */
static float f16_table[65536];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static int use_avx2;
static int force_generic;

#ifdef VT_WK_AVX2
/* CPUID leaf 1's F16C bit (clang 14's __builtin_cpu_supports does not know "f16c"). */
static int has_f16c(void)
{
    unsigned int a, b, c, d;

    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

static void init_once(void)
{
    for (uint32_t i = 0; i < 65536; i++)
        f16_table[i] = vt_wk_f16_to_f32((uint16_t)i);
#ifdef VT_WK_AVX2
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
#endif
}

static int avx2(void)
{
    pthread_once(&table_once, init_once);
    return use_avx2 && !force_generic;
}

void vt_wk_use_generic(int on)
{
    force_generic = on;
}

const char *vt_wk_kernels(void)
{
    return avx2() ? "avx2" : "generic";
}

static inline float gelu(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

static inline void store(float *y, float v, const float *b, int n, int flags)
{
    if (b)
        v += b[n];
    if (flags & VT_WK_GELU)
        v = gelu(v);
    if (flags & VT_WK_ACC)
        *y += v;
    else
        *y = v;
}

/* ---- scalar kernels ---- */

static float dot_f32_c(const float *a, const float *b, int n)
{
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;

    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

/* ---- AVX2 kernels ---- */

#ifdef VT_WK_AVX2
KATTR static inline float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* e^x for x <= 0 (Cephes' expf polynomial; below -87, about 1e-38 rather than 0). */
KATTR static inline __m256 exp_v(__m256 x)
{
    __m256 n, p, r;
    __m256i e;

    x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
    n = _mm256_floor_ps(
        _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f)));
    x = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    x = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), x);
    p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(5.0000001201e-1f));
    r = _mm256_fmadd_ps(_mm256_mul_ps(p, x), x, _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
    e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(r, _mm256_castsi256_ps(e));
}

/* gelu (below) with erf by Abramowitz and Stegun's 7.1.26 (absolute error under 1.5e-7). */
KATTR static inline __m256 gelu_v(__m256 x)
{
    __m256 z = _mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f));
    __m256 sign = _mm256_and_ps(z, _mm256_set1_ps(-0.0f)), az = _mm256_xor_ps(z, sign);
    __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f),
                             _mm256_fmadd_ps(az, _mm256_set1_ps(0.3275911f), _mm256_set1_ps(1.0f)));
    __m256 p = _mm256_set1_ps(1.061405429f), e;

    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
    p = _mm256_mul_ps(p, t);
    e = exp_v(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(az, az)));
    e = _mm256_fnmadd_ps(p, e, _mm256_set1_ps(1.0f)); /* erf(|z|) */
    e = _mm256_xor_ps(e, sign);
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x),
                         _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

/* store (above) for 8 values. */
KATTR static inline void store_v(float *y, __m256 v, const float *b, int n, int flags)
{
    if (b)
        v = _mm256_add_ps(v, _mm256_loadu_ps(b + n));
    if (flags & VT_WK_GELU)
        v = gelu_v(v);
    if (flags & VT_WK_ACC)
        v = _mm256_add_ps(v, _mm256_loadu_ps(y));
    _mm256_storeu_ps(y, v);
}

KATTR static float dot_f32_v(const float *a, const float *b, int n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    float s;

    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s = hsum(_mm256_add_ps(s0, s1));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

KATTR static inline __m256 load_f16(const uint16_t *w)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)w));
}

#endif

static float dot_f32(const float *a, const float *b, int n)
{
#ifdef VT_WK_AVX2
    if (avx2())
        return dot_f32_v(a, b, n);
#endif
    return dot_f32_c(a, b, n);
}

/* ---- the pool ---- */

/*
 * Jobs take their work items from an atomic counter, so a worker that starts late (its
 * core busy with another process) finds nothing left: the caller waits only for the workers
 * that joined the job, never for one that has not woken yet.
 */
typedef void (*job_fn)(void *arg, int w, int nw);

struct vt_wk_pool {
    int n; /* threads running, the caller included */
    pthread_t *tids;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;
    int open, active, quit; /* the job still takes workers; workers in it */
    job_fn fn;
    void *arg;
};

struct worker {
    struct vt_wk_pool *p;
    int w;
};

static void *worker_main(void *v)
{
    struct worker *me = v;
    struct vt_wk_pool *p = me->p;
    int w = me->w;
    unsigned long seen = 0;

    free(me);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        if (!p->open)
            continue; /* woke after the job ended */
        p->active++;
        pthread_mutex_unlock(&p->mu);
        p->fn(p->arg, w, p->n);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct vt_wk_pool *vt_wk_pool_new(int n)
{
    struct vt_wk_pool *p = calloc(1, sizeof(*p));

    if (!p)
        return NULL;
    if (n < 1)
        n = 1;
    p->n = 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->tids = n > 1 ? calloc((size_t)n - 1, sizeof(pthread_t)) : NULL;
    for (int i = 1; p->tids && i < n; i++) {
        struct worker *me = malloc(sizeof(*me));

        if (!me)
            break;
        me->p = p;
        me->w = i; /* workers are numbered in start order: p->n is the next */
        if (pthread_create(&p->tids[i - 1], NULL, worker_main, me) != 0) {
            free(me);
            break;
        }
        p->n++;
    }
    return p;
}

void vt_wk_pool_free(struct vt_wk_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n - 1; i++)
        pthread_join(p->tids[i], NULL);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->tids);
    free(p);
}

int vt_wk_pool_size(const struct vt_wk_pool *p)
{
    return p ? p->n : 1;
}

/* Run fn on the caller (worker 0) and the workers that wake in time; return when every one
 * that joined is done. */
static void pool_run(struct vt_wk_pool *p, job_fn fn, void *arg)
{
    if (!p || p->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->open = 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0, p->n);
    pthread_mutex_lock(&p->mu);
    p->open = 0;
    while (p->active)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

/* ---- matrix products ---- */

/*
 * Weights are packed once (vt_wk_pack) into panels of NR rows: panel p holds rows
 * [p NR, p NR + NR) interleaved, k outermost, so that one k step of a panel is NR
 * consecutive halves (two vectors). A product then streams each panel once per strip of
 * MR input rows, keeping MR x NR sums in registers: every weight loaded feeds MR FMAs and
 * every input value NR.
 */
#define NR     16 /* weight rows per panel */
#define MR     6  /* input rows per strip: 6 x 2 accumulators + 2 weights + 1 input */
#define MB     48 /* input rows per work item (8 strips) */
#define PGROUP 4  /* panels per work item */

size_t vt_wk_packed_count(int N, int K)
{
    return (size_t)((N + NR - 1) / NR) * NR * (size_t)K;
}

static inline size_t packed_index(int K, int n, int k)
{
    return ((size_t)(n / NR) * (size_t)K + (size_t)k) * NR + (size_t)(n % NR);
}

void vt_wk_pack(const void *w, int N, int K, uint16_t *out)
{
    const unsigned char *src = w;

    memset(out, 0, vt_wk_packed_count(N, K) * sizeof(uint16_t)); /* the last panel's padding */
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            memcpy(out + packed_index(K, n, k), src + ((size_t)n * K + k) * 2, 2);
}

void vt_wk_pack_put(uint16_t *out, int K, size_t i, uint16_t h)
{
    out[packed_index(K, (int)(i / (size_t)K), (int)(i % (size_t)K))] = h;
}

float vt_wk_packed_get(const uint16_t *pw, int K, int n, int k)
{
    return vt_wk_f16_to_f32(pw[packed_index(K, n, k)]);
}

struct mm {
    const float *x;
    const uint16_t *w;
    const float *b;
    float *y;
    int ldx, ldy, M, K, N, flags;
    int n_mb, n_pg; /* work items: n_pg groups of panels x n_mb blocks of input rows */
    int next;       /* the next work item (taken atomically: a busy core takes fewer) */
};

#ifdef VT_WK_AVX2
/* mm_store (below) for a whole panel. */
KATTR static void mm_store_v(const struct mm *a, int m, int rows, int n0, const float *acc)
{
    for (int r = 0; r < rows; r++) {
        float *y = a->y + (size_t)(m + r) * a->ldy + n0;

        store_v(y, _mm256_loadu_ps(acc + r * NR), a->b, n0, a->flags);
        store_v(y + 8, _mm256_loadu_ps(acc + r * NR + 8), a->b, n0 + 8, a->flags);
    }
}
#endif

/* acc (rows x NR) into y's rows [m, m + rows), columns [n0, n0 + NR) cut at N. */
static void mm_store(const struct mm *a, int m, int rows, int n0, const float *acc)
{
    int nc = a->N - n0 < NR ? a->N - n0 : NR;

#ifdef VT_WK_AVX2
    if (avx2() && nc == NR) {
        mm_store_v(a, m, rows, n0, acc);
        return;
    }
#endif
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < nc; c++)
            store(a->y + (size_t)(m + r) * a->ldy + n0 + c, acc[r * NR + c], a->b, n0 + c,
                  a->flags);
}

/* rows input rows from m against panel pn, into acc (rows x NR). */
static void strip_c(const struct mm *a, int m, int rows, int pn, float *acc)
{
    const uint16_t *p = a->w + (size_t)pn * a->K * NR;

    for (int r = 0; r < rows; r++) {
        const float *x = a->x + (size_t)(m + r) * a->ldx;
        float *o = acc + r * NR;

        for (int c = 0; c < NR; c++)
            o[c] = 0;
        for (int k = 0; k < a->K; k++)
            for (int c = 0; c < NR; c++)
                o[c] += x[k] * f16_table[p[(size_t)k * NR + c]];
    }
}

#ifdef VT_WK_AVX2
/* The 6x16 block's twelve accumulators (c<row><half>), zeroed, and their store to acc. */
#define ACC_6x16                                                                                   \
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;       \
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00
#define STORE_6x16(acc)                                                                            \
    do {                                                                                           \
        _mm256_storeu_ps((acc) + 0 * NR, c00), _mm256_storeu_ps((acc) + 0 * NR + 8, c01);          \
        _mm256_storeu_ps((acc) + 1 * NR, c10), _mm256_storeu_ps((acc) + 1 * NR + 8, c11);          \
        _mm256_storeu_ps((acc) + 2 * NR, c20), _mm256_storeu_ps((acc) + 2 * NR + 8, c21);          \
        _mm256_storeu_ps((acc) + 3 * NR, c30), _mm256_storeu_ps((acc) + 3 * NR + 8, c31);          \
        _mm256_storeu_ps((acc) + 4 * NR, c40), _mm256_storeu_ps((acc) + 4 * NR + 8, c41);          \
        _mm256_storeu_ps((acc) + 5 * NR, c50), _mm256_storeu_ps((acc) + 5 * NR + 8, c51);          \
    } while (0)

#define FMA_ROW(r)                                                                                 \
    do {                                                                                           \
        __m256 xb = _mm256_broadcast_ss(x##r + k);                                                 \
        c##r##0 = _mm256_fmadd_ps(xb, w0, c##r##0);                                                \
        c##r##1 = _mm256_fmadd_ps(xb, w1, c##r##1);                                                \
    } while (0)

/* MR input rows from m against panel pn, into acc (MR x NR). */
KATTR static void strip6_v(const struct mm *a, int m, int pn, float *acc)
{
    const uint16_t *p = a->w + (size_t)pn * a->K * NR;
    const float *x0 = a->x + (size_t)m * a->ldx, *x1 = x0 + a->ldx, *x2 = x1 + a->ldx;
    const float *x3 = x2 + a->ldx, *x4 = x3 + a->ldx, *x5 = x4 + a->ldx;
    ACC_6x16;

    for (int k = 0; k < a->K; k++, p += NR) {
        __m256 w0 = load_f16(p), w1 = load_f16(p + 8);

        FMA_ROW(0);
        FMA_ROW(1);
        FMA_ROW(2);
        FMA_ROW(3);
        FMA_ROW(4);
        FMA_ROW(5);
    }
    STORE_6x16(acc);
}
#undef FMA_ROW

/* One input row against panel pn (a matrix-vector product: memory bound, so four k at a
 * time into separate sums to keep the loads coming). */
KATTR static void strip1_v(const struct mm *a, int m, int pn, float *acc)
{
    const uint16_t *p = a->w + (size_t)pn * a->K * NR;
    const float *x = a->x + (size_t)m * a->ldx;
    __m256 s[8];
    int k = 0;

    for (int i = 0; i < 8; i++)
        s[i] = _mm256_setzero_ps();
    for (; k + 4 <= a->K; k += 4, p += 4 * NR)
        for (int j = 0; j < 4; j++) {
            __m256 xb = _mm256_broadcast_ss(x + k + j);

            s[2 * j] = _mm256_fmadd_ps(xb, load_f16(p + j * NR), s[2 * j]);
            s[2 * j + 1] = _mm256_fmadd_ps(xb, load_f16(p + j * NR + 8), s[2 * j + 1]);
        }
    for (; k < a->K; k++, p += NR) {
        __m256 xb = _mm256_broadcast_ss(x + k);

        s[0] = _mm256_fmadd_ps(xb, load_f16(p), s[0]);
        s[1] = _mm256_fmadd_ps(xb, load_f16(p + 8), s[1]);
    }
    _mm256_storeu_ps(acc, _mm256_add_ps(_mm256_add_ps(s[0], s[2]), _mm256_add_ps(s[4], s[6])));
    _mm256_storeu_ps(acc + 8, _mm256_add_ps(_mm256_add_ps(s[1], s[3]), _mm256_add_ps(s[5], s[7])));
}
#endif

/* Input rows [m0, m1) against panels [p0, p1). */
static void mm_block(const struct mm *a, int m0, int m1, int p0, int p1)
{
    float acc[MR * NR];

    for (int pn = p0; pn < p1; pn++)
        for (int m = m0; m < m1;) {
            int rows = m1 - m >= MR ? MR : 1;

#ifdef VT_WK_AVX2
            if (avx2() && rows == MR)
                strip6_v(a, m, pn, acc);
            else if (avx2())
                strip1_v(a, m, pn, acc);
            else
#endif
                strip_c(a, m, rows, pn, acc);
            mm_store(a, m, rows, pn * NR, acc);
            m += rows;
        }
}

static void mm_job(void *arg, int w, int nw)
{
    struct mm *a = arg;
    int n_panels = (a->N + NR - 1) / NR;
    int mrows = a->n_mb > 1 ? MB : a->M;

    for (;;) {
        int it = __atomic_fetch_add(&a->next, 1, __ATOMIC_RELAXED);
        int pg = it / a->n_mb, mb = it % a->n_mb;
        int m0 = mb * mrows, m1 = m0 + mrows > a->M ? a->M : m0 + mrows;
        int p0 = pg * PGROUP, p1 = p0 + PGROUP > n_panels ? n_panels : p0 + PGROUP;

        if (it >= a->n_mb * a->n_pg)
            break;
        mm_block(a, m0, m1, p0, p1);
    }
}

void vt_wk_matmul(struct vt_wk_pool *p, const float *x, int ldx, int M, int K, const uint16_t *w,
                  const float *b, float *y, int ldy, int N, int flags)
{
    struct mm a = {.x = x,
                   .w = w,
                   .b = b,
                   .y = y,
                   .ldx = ldx,
                   .ldy = ldy,
                   .M = M,
                   .K = K,
                   .N = N,
                   .flags = flags};

    if (M <= 0 || N <= 0)
        return;
    a.n_mb = (M + MB - 1) / MB;
    a.n_pg = ((N + NR - 1) / NR + PGROUP - 1) / PGROUP;
    pool_run(p, mm_job, &a);
}

void vt_wk_layernorm(const float *x, const float *g, const float *b, float *y, int M, int n)
{
    for (int m = 0; m < M; m++) {
        const float *r = x + (size_t)m * n;
        float *o = y + (size_t)m * n;
        double mean = 0, var = 0;
        float inv;

        for (int i = 0; i < n; i++)
            mean += r[i];
        mean /= n;
        for (int i = 0; i < n; i++)
            var += (r[i] - mean) * (r[i] - mean);
        inv = (float)(1.0 / sqrt(var / n + 1e-5));
        for (int i = 0; i < n; i++)
            o[i] = (float)(r[i] - mean) * inv * g[i] + b[i];
    }
}

/* ---- attention ---- */

/*
 * Attention runs as two small products per head and block of QB queries: the scores
 * P = Q K^T into a per-thread buffer, then out = P V, both through register-blocked
 * kernels over F32 (MR x NR sums). For many queries (the encoder) the keys are first
 * packed, every head at once, into panels of NR keys (k^T, so the scores' kernel reads NR
 * keys per dimension as one vector); for a few (the decoder, one token) each score is a
 * dot product straight from the cache: packing would cost as much as the scores.
 */
#define QB    24 /* queries per work item: 4 strips of MR */
#define MANYQ 48 /* queries from which the keys are packed */

static size_t kv_padded(int n_kv)
{
    return (size_t)(n_kv + NR - 1) / NR * NR;
}

size_t vt_wk_attn_scratch(const struct vt_wk_pool *p, int n_q, int n_kv, int n_head, int d_head)
{
    size_t s = (size_t)vt_wk_pool_size(p) * QB * kv_padded(n_kv);

    if (n_q >= MANYQ)
        s += (size_t)n_head * d_head * kv_padded(n_kv);
    return s;
}

/* acc[r][c] = sum over k < K of a[r][k] b[k][c] for r < rows, c < nc (b's rows ldb apart). */
static void gemm_c(const float *a, int lda, const float *b, int ldb, int K, int rows, int nc,
                   float *acc)
{
    for (int r = 0; r < rows; r++) {
        float *o = acc + r * NR;

        for (int c = 0; c < nc; c++)
            o[c] = 0;
        for (int k = 0; k < K; k++) {
            float ark = a[(size_t)r * lda + k];

            for (int c = 0; c < nc; c++)
                o[c] += ark * b[(size_t)k * ldb + c];
        }
    }
}

#ifdef VT_WK_AVX2
#define FMA_ROW(r)                                                                                 \
    do {                                                                                           \
        __m256 xb = _mm256_broadcast_ss(a##r + k);                                                 \
        c##r##0 = _mm256_fmadd_ps(xb, b0, c##r##0);                                                \
        c##r##1 = _mm256_fmadd_ps(xb, b1, c##r##1);                                                \
    } while (0)

/* gemm_c for MR rows and NR columns. */
KATTR static void gemm6_v(const float *a, int lda, const float *b, int ldb, int K, float *acc)
{
    const float *a0 = a, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda, *a4 = a3 + lda;
    const float *a5 = a4 + lda;
    ACC_6x16;

    for (int k = 0; k < K; k++, b += ldb) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);

        FMA_ROW(0);
        FMA_ROW(1);
        FMA_ROW(2);
        FMA_ROW(3);
        FMA_ROW(4);
        FMA_ROW(5);
    }
    STORE_6x16(acc);
}
#undef FMA_ROW

/* One row against 4 groups of NR columns (group g at b + g gstride): 8 sums in flight. */
KATTR static void gemm1x4_v(const float *a, const float *b, int ldb, size_t gstride, int K,
                            float *acc)
{
    const float *b1 = b + gstride, *b2 = b1 + gstride, *b3 = b2 + gstride;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0;
    __m256 s7 = s0;

    for (size_t k = 0, o = 0; k < (size_t)K; k++, o += (size_t)ldb) {
        __m256 x = _mm256_broadcast_ss(a + k);

        s0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + o), s0);
        s1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + o + 8), s1);
        s2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b1 + o), s2);
        s3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b1 + o + 8), s3);
        s4 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b2 + o), s4);
        s5 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b2 + o + 8), s5);
        s6 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b3 + o), s6);
        s7 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b3 + o + 8), s7);
    }
    _mm256_storeu_ps(acc, s0), _mm256_storeu_ps(acc + 8, s1);
    _mm256_storeu_ps(acc + 16, s2), _mm256_storeu_ps(acc + 24, s3);
    _mm256_storeu_ps(acc + 32, s4), _mm256_storeu_ps(acc + 40, s5);
    _mm256_storeu_ps(acc + 48, s6), _mm256_storeu_ps(acc + 56, s7);
}

/* gemm_c for one row and NR columns, two k at a time into separate sums. */
KATTR static void gemm1_v(const float *a, const float *b, int ldb, int K, float *acc)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int k = 0;

    for (; k + 2 <= K; k += 2, b += 2 * (size_t)ldb) {
        __m256 x0 = _mm256_broadcast_ss(a + k), x1 = _mm256_broadcast_ss(a + k + 1);

        s0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b), s0);
        s1 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b + 8), s1);
        s2 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(b + ldb), s2);
        s3 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(b + ldb + 8), s3);
    }
    if (k < K) {
        __m256 x0 = _mm256_broadcast_ss(a + k);

        s0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b), s0);
        s1 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b + 8), s1);
    }
    _mm256_storeu_ps(acc, _mm256_add_ps(s0, s2));
    _mm256_storeu_ps(acc + 8, _mm256_add_ps(s1, s3));
}

/* softmax (below) for n >= 8. */
KATTR static void softmax_v(float *s, int n)
{
    __m256 vm = _mm256_loadu_ps(s), vs = _mm256_setzero_ps(), inv;
    float mx, sum;
    int j = 8;

    for (; j + 8 <= n; j += 8)
        vm = _mm256_max_ps(vm, _mm256_loadu_ps(s + j));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vm), _mm256_extractf128_ps(vm, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    mx = _mm_cvtss_f32(m4);
    for (; j < n; j++)
        mx = s[j] > mx ? s[j] : mx;
    vm = _mm256_set1_ps(mx);
    for (j = 0; j + 8 <= n; j += 8) {
        __m256 e = exp_v(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));

        _mm256_storeu_ps(s + j, e);
        vs = _mm256_add_ps(vs, e);
    }
    sum = hsum(vs);
    for (; j < n; j++) {
        s[j] = expf(s[j] - mx);
        sum += s[j];
    }
    inv = _mm256_set1_ps(1.0f / sum);
    for (j = 0; j + 8 <= n; j += 8)
        _mm256_storeu_ps(s + j, _mm256_mul_ps(_mm256_loadu_ps(s + j), inv));
    for (; j < n; j++)
        s[j] /= sum;
}
#endif

/* Softmax of s[0..n) in place, scaled so that the weights sum to 1. */
static void softmax(float *s, int n)
{
    float mx = -INFINITY, sum = 0;

#ifdef VT_WK_AVX2
    if (avx2() && n >= 8) {
        softmax_v(s, n);
        return;
    }
#endif
    for (int j = 0; j < n; j++)
        mx = s[j] > mx ? s[j] : mx;
    for (int j = 0; j < n; j++) {
        s[j] = expf(s[j] - mx);
        sum += s[j];
    }
    for (int j = 0; j < n; j++)
        s[j] /= sum;
}

/* rows x nc of a (lda) times b (ldb) over K into acc, by the widest kernel that fits. */
static void gemm(const float *a, int lda, const float *b, int ldb, int K, int rows, int nc,
                 float *acc)
{
#ifdef VT_WK_AVX2
    if (avx2() && nc == NR && rows == MR) {
        gemm6_v(a, lda, b, ldb, K, acc);
        return;
    }
    if (avx2() && nc == NR) {
        for (int r = 0; r < rows; r++)
            gemm1_v(a + (size_t)r * lda, b, ldb, K, acc + r * NR);
        return;
    }
#endif
    gemm_c(a, lda, b, ldb, K, rows, nc, acc);
}

struct attn_run {
    const struct vt_wk_attn *a;
    const float *kt; /* the keys packed (given, or MANYQ queries or more), else NULL */
    float *pack;     /* where pack_job writes */
    size_t kvp;
    size_t s_off; /* the per-thread score rows' offset in scratch */
    int next;
};

/* Query i's visible keys. */
static int visible(const struct vt_wk_attn *a, int i)
{
    int n = a->causal < 0 ? a->n_kv : a->causal + i + 1;

    return n > a->n_kv ? a->n_kv : n;
}

/* Work items: a head and a panel of NR keys, transposed into kt (zeros past n_kv). */
static void pack_job(void *arg, int w, int nw)
{
    struct attn_run *r = arg;
    const struct vt_wk_attn *a = r->a;
    int dh = a->d_head, np = (int)(r->kvp / NR);

    for (;;) {
        int it = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
        int h = it / np, pn = it % np;
        float *o;

        if (it >= a->n_head * np)
            break;
        o = r->pack + ((size_t)h * np + pn) * dh * NR;
        for (int jj = 0; jj < NR; jj++) {
            int j = pn * NR + jj;
            const float *k = a->k + (size_t)j * a->ldk + (size_t)h * dh;

            for (int d = 0; d < dh; d++)
                o[(size_t)d * NR + jj] = j < a->n_kv ? k[d] : 0;
        }
    }
}

/* Scores of queries [i0, i0 + nq) of head h over their n visible keys into s (rows kvp
 * apart). */
static void scores(const struct attn_run *r, int h, int i0, int nq, int n, float *s)
{
    const struct vt_wk_attn *a = r->a;
    int dh = a->d_head, np = (int)(r->kvp / NR);
    const float *q = a->q + (size_t)i0 * a->ldq + (size_t)h * dh;
    float acc[MR * NR];

    if (!r->kt) {
        for (int i = 0; i < nq; i++)
            for (int j = 0; j < n; j++)
                s[(size_t)i * r->kvp + j] =
                    dot_f32(q + (size_t)i * a->ldq, a->k + (size_t)j * a->ldk + (size_t)h * dh, dh);
        return;
    }
    for (int i = 0; i < nq;) {
        int rows = nq - i >= MR ? MR : 1, pn = 0;

#ifdef VT_WK_AVX2
        for (; avx2() && rows == 1 && (pn + 4) * NR <= n; pn += 4) {
            gemm1x4_v(q + (size_t)i * a->ldq, r->kt + ((size_t)h * np + pn) * dh * NR, NR,
                      (size_t)dh * NR, dh, acc);
            memcpy(s + (size_t)i * r->kvp + pn * NR, acc, 4 * NR * sizeof(float));
        }
#endif
        for (; pn * NR < n; pn++) {
            gemm(q + (size_t)i * a->ldq, a->ldq, r->kt + ((size_t)h * np + pn) * dh * NR, NR, dh,
                 rows, NR, acc);
            for (int rr = 0; rr < rows; rr++)
                memcpy(s + (size_t)(i + rr) * r->kvp + pn * NR, acc + rr * NR, NR * sizeof(float));
        }
        i += rows;
    }
}

/* out rows [i0, i0 + nq) of head h = p . V over the n keys any of them sees. */
static void weigh(const struct attn_run *r, int h, int i0, int nq, int n, const float *p)
{
    const struct vt_wk_attn *a = r->a;
    int dh = a->d_head;
    float acc[MR * NR];

    for (int c0 = 0; c0 < dh;) {
        int nc = dh - c0 < NR ? dh - c0 : NR;

#ifdef VT_WK_AVX2
        if (avx2() && nq == 1 && dh - c0 >= 4 * NR) { /* one query: 8 sums in flight */
            gemm1x4_v(p, a->v + (size_t)h * dh + c0, a->ldv, NR, n, acc);
            memcpy(a->out + (size_t)i0 * a->ldo + (size_t)h * dh + c0, acc, 4 * NR * sizeof(float));
            c0 += 4 * NR;
            continue;
        }
#endif

        for (int i = 0; i < nq;) {
            int rows = nq - i >= MR ? MR : 1;

            gemm(p + (size_t)i * r->kvp, (int)r->kvp, a->v + (size_t)h * dh + c0, a->ldv, n, rows,
                 nc, acc);
            for (int rr = 0; rr < rows; rr++)
                memcpy(a->out + (size_t)(i0 + i + rr) * a->ldo + (size_t)h * dh + c0, acc + rr * NR,
                       (size_t)nc * sizeof(float));
            i += rows;
        }
        c0 += nc;
    }
}

/* Work items: a head and a block of up to QB queries. */
static void attn_job(void *arg, int w, int nw)
{
    struct attn_run *r = arg;
    const struct vt_wk_attn *a = r->a;
    float *s = a->scratch + r->s_off + (size_t)w * QB * r->kvp;
    int nb = (a->n_q + QB - 1) / QB;

    for (;;) {
        int it = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
        int h = it / nb, i0 = it % nb * QB, nq = a->n_q - i0 < QB ? a->n_q - i0 : QB;
        int n = visible(a, i0 + nq - 1);

        if (it >= a->n_head * nb)
            break;
        scores(r, h, i0, nq, n, s);
        for (int i = 0; i < nq; i++) {
            float *row = s + (size_t)i * r->kvp;
            int vis = visible(a, i0 + i);

            if (a->qk && a->qk[h]) {
                float *o = a->qk[h] + (size_t)(i0 + i) * a->n_kv;

                memcpy(o, row, (size_t)vis * sizeof(float));
                for (int j = vis; j < a->n_kv; j++)
                    o[j] = -INFINITY;
            }
            softmax(row, vis);
            for (int j = vis; j < n; j++) /* the block's widest row sets how many weigh */
                row[j] = 0;
        }
        weigh(r, h, i0, nq, n, s);
    }
}

size_t vt_wk_attn_keys_count(int n_kv, int n_head, int d_head)
{
    return (size_t)n_head * d_head * kv_padded(n_kv);
}

void vt_wk_attn_pack_keys(struct vt_wk_pool *p, const float *k, int ldk, int n_kv, int n_head,
                          int d_head, float *kt)
{
    struct vt_wk_attn a = {.k = k, .ldk = ldk, .n_kv = n_kv, .n_head = n_head, .d_head = d_head};
    struct attn_run r = {.a = &a, .pack = kt, .kvp = kv_padded(n_kv)};

    pool_run(p, pack_job, &r);
}

void vt_wk_attention(struct vt_wk_pool *p, const struct vt_wk_attn *a)
{
    struct attn_run r = {.a = a, .kt = a->kt, .kvp = kv_padded(a->n_kv)};

    if (a->n_q >= MANYQ)
        r.s_off = vt_wk_attn_keys_count(a->n_kv, a->n_head, a->d_head);
    if (!a->kt && a->n_q >= MANYQ) {
        r.kt = r.pack = a->scratch;
        pool_run(p, pack_job, &r);
        r.next = 0;
    }
    pool_run(p, attn_job, &r);
}
