/*
 * Kernels of Whisper's network (see whisper_kern.h). Weights stay F16 in memory (half the
 * bytes of F32: the decoder reads every matrix once per token, so its speed is memory
 * bandwidth) and are widened to F32 in the kernel; sums are F32. The encoder's products
 * (1500 rows) widen a panel of weight rows once and reuse it over a block of input rows held
 * in cache; the decoder's (a few rows) widen as they go. Work is split over a small pool of
 * threads that each caller owns, so concurrent encodes and decodes never share state.
 */
#include "ml/whisper_kern.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define VT_WK_AVX2 1
#define KATTR      __attribute__((target("avx2,fma,f16c")))
#endif

#define MBLOCK 32 /* input rows kept in cache while the panels pass over them */
#define PANEL  12 /* weight rows widened at a time (a multiple of the tile's 3) */
#define NCHUNK 96 /* weight rows per work item (a multiple of PANEL) */
#define NSMALL 64 /* weight rows per work item for a few input rows */
#define FEW_M  8  /* fewer input rows than this: dot products straight from F16 */

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

static void init_once(void)
{
    for (uint32_t i = 0; i < 65536; i++)
        f16_table[i] = vt_wk_f16_to_f32((uint16_t)i);
#ifdef VT_WK_AVX2
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("f16c");
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

static float dot_f16_c(const float *a, const uint16_t *w, int n)
{
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;

    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * f16_table[w[i]];
        s1 += a[i + 1] * f16_table[w[i + 1]];
        s2 += a[i + 2] * f16_table[w[i + 2]];
        s3 += a[i + 3] * f16_table[w[i + 3]];
    }
    for (; i < n; i++)
        s0 += a[i] * f16_table[w[i]];
    return (s0 + s1) + (s2 + s3);
}

static void axpy_c(float a, const float *x, float *y, int n)
{
    for (int i = 0; i < n; i++)
        y[i] += a * x[i];
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

KATTR static float dot_f16_v(const float *a, const uint16_t *w, int n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    float s;

    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), load_f16(w + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), load_f16(w + i + 8), s1);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), load_f16(w + i), s0);
    s = hsum(_mm256_add_ps(s0, s1));
    for (; i < n; i++)
        s += a[i] * f16_table[w[i]];
    return s;
}

KATTR static void axpy_v(float a, const float *x, float *y, int n)
{
    __m256 va = _mm256_set1_ps(a);
    int i = 0;

    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i,
                         _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; i++)
        y[i] += a * x[i];
}

KATTR static void widen_v(const uint16_t *w, float *out, size_t n)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, load_f16(w + i));
    for (; i < n; i++)
        out[i] = f16_table[w[i]];
}

/* acc[r][c] = x row r . panel row c over K (K a multiple of 8 here), 4 x 3 at a time. */
KATTR static void tile_4x3(const float *x, int ldx, const float *p, int ldp, int K, float acc[4][3])
{
    __m256 a[4][3];
    const float *x0 = x, *x1 = x + ldx, *x2 = x + 2 * (size_t)ldx, *x3 = x + 3 * (size_t)ldx;
    const float *p0 = p, *p1 = p + ldp, *p2 = p + 2 * (size_t)ldp;

    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 3; c++)
            a[r][c] = _mm256_setzero_ps();
    for (int k = 0; k < K; k += 8) {
        __m256 w0 = _mm256_loadu_ps(p0 + k), w1 = _mm256_loadu_ps(p1 + k);
        __m256 w2 = _mm256_loadu_ps(p2 + k), v;

        v = _mm256_loadu_ps(x0 + k);
        a[0][0] = _mm256_fmadd_ps(v, w0, a[0][0]);
        a[0][1] = _mm256_fmadd_ps(v, w1, a[0][1]);
        a[0][2] = _mm256_fmadd_ps(v, w2, a[0][2]);
        v = _mm256_loadu_ps(x1 + k);
        a[1][0] = _mm256_fmadd_ps(v, w0, a[1][0]);
        a[1][1] = _mm256_fmadd_ps(v, w1, a[1][1]);
        a[1][2] = _mm256_fmadd_ps(v, w2, a[1][2]);
        v = _mm256_loadu_ps(x2 + k);
        a[2][0] = _mm256_fmadd_ps(v, w0, a[2][0]);
        a[2][1] = _mm256_fmadd_ps(v, w1, a[2][1]);
        a[2][2] = _mm256_fmadd_ps(v, w2, a[2][2]);
        v = _mm256_loadu_ps(x3 + k);
        a[3][0] = _mm256_fmadd_ps(v, w0, a[3][0]);
        a[3][1] = _mm256_fmadd_ps(v, w1, a[3][1]);
        a[3][2] = _mm256_fmadd_ps(v, w2, a[3][2]);
    }
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 3; c++)
            acc[r][c] = hsum(a[r][c]);
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

static float dot_f16(const float *a, const uint16_t *w, int n)
{
#ifdef VT_WK_AVX2
    if (avx2())
        return dot_f16_v(a, w, n);
#endif
    return dot_f16_c(a, w, n);
}

static void axpy(float a, const float *x, float *y, int n)
{
#ifdef VT_WK_AVX2
    if (avx2()) {
        axpy_v(a, x, y, n);
        return;
    }
#endif
    axpy_c(a, x, y, n);
}

/* ---- the pool ---- */

typedef void (*job_fn)(void *arg, int w, int nw);

struct vt_wk_pool {
    int n; /* threads running, the caller included */
    pthread_t *tids;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;
    int pending, quit;
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
        pthread_mutex_unlock(&p->mu);
        p->fn(p->arg, w, p->n);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
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

/* Run fn on every worker (the caller is worker 0) and return when all are done. */
static void pool_run(struct vt_wk_pool *p, job_fn fn, void *arg)
{
    if (!p || p->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->pending = p->n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0, p->n);
    pthread_mutex_lock(&p->mu);
    while (p->pending)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

/* ---- matrix products ---- */

struct mm {
    const float *x;
    const uint16_t *w;
    const float *b;
    float *y;
    int ldx, ldy, M, K, N, flags;
    int n_mb, n_nc; /* work items: n_mb row blocks x n_nc chunks of weight rows */
};

/* Rows [m0, m1) against weight rows [n0, n1), a dot product each, straight from F16. */
static void mm_direct(const struct mm *a, int m0, int m1, int n0, int n1)
{
    for (int n = n0; n < n1; n++) {
        const uint16_t *w = a->w + (size_t)n * a->K;

        for (int m = m0; m < m1; m++)
            store(a->y + (size_t)m * a->ldy + n, dot_f16(a->x + (size_t)m * a->ldx, w, a->K), a->b,
                  n, a->flags);
    }
}

#ifdef VT_WK_AVX2
/* Rows [m0, m1) against weight rows [n0, n1): panels of PANEL rows widened into buf. */
KATTR static void mm_panels(const struct mm *a, int m0, int m1, int n0, int n1, float *buf)
{
    int K = a->K;

    for (int p0 = n0; p0 < n1; p0 += PANEL) {
        int pn = n1 - p0 < PANEL ? n1 - p0 : PANEL, c0 = 0, m = m0;

        widen_v(a->w + (size_t)p0 * K, buf, (size_t)pn * K);
        for (; c0 + 3 <= pn; c0 += 3) {
            float acc[4][3];

            for (m = m0; m + 4 <= m1; m += 4) {
                tile_4x3(a->x + (size_t)m * a->ldx, a->ldx, buf + (size_t)c0 * K, K, K, acc);
                for (int r = 0; r < 4; r++)
                    for (int c = 0; c < 3; c++)
                        store(a->y + (size_t)(m + r) * a->ldy + p0 + c0 + c, acc[r][c], a->b,
                              p0 + c0 + c, a->flags);
            }
            for (int r = m; r < m1; r++) /* the rows left over */
                for (int c = 0; c < 3; c++)
                    store(a->y + (size_t)r * a->ldy + p0 + c0 + c,
                          dot_f32_v(a->x + (size_t)r * a->ldx, buf + (size_t)(c0 + c) * K, K), a->b,
                          p0 + c0 + c, a->flags);
        }
        for (; c0 < pn; c0++) /* the weight rows left over */
            for (int r = m0; r < m1; r++)
                store(a->y + (size_t)r * a->ldy + p0 + c0,
                      dot_f32_v(a->x + (size_t)r * a->ldx, buf + (size_t)c0 * K, K), a->b, p0 + c0,
                      a->flags);
    }
}
#endif

static void mm_job(void *arg, int w, int nw)
{
    const struct mm *a = arg;
    int blocked = a->M >= FEW_M;
    int mrows = blocked ? MBLOCK : a->M, nrows = blocked ? NCHUNK : NSMALL;
    float *buf = NULL;

#ifdef VT_WK_AVX2
    /* The tile reads K in whole vectors; a K that is not a multiple of 8 goes the direct way. */
    if (blocked && avx2() && a->K % 8 == 0)
        buf = malloc((size_t)PANEL * a->K * sizeof(float)); /* NULL: the direct way */
#endif
    for (int it = w; it < a->n_mb * a->n_nc; it += nw) {
        int mb = it / a->n_nc, nc = it % a->n_nc;
        int m0 = mb * mrows, m1 = m0 + mrows > a->M ? a->M : m0 + mrows;
        int n0 = nc * nrows, n1 = n0 + nrows > a->N ? a->N : n0 + nrows;

#ifdef VT_WK_AVX2
        if (buf) {
            mm_panels(a, m0, m1, n0, n1, buf);
            continue;
        }
#endif
        mm_direct(a, m0, m1, n0, n1);
    }
    free(buf);
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
    int mrows = M >= FEW_M ? MBLOCK : M, nrows = M >= FEW_M ? NCHUNK : NSMALL;

    if (M <= 0 || N <= 0)
        return;
    a.n_mb = (M + mrows - 1) / mrows;
    a.n_nc = (N + nrows - 1) / nrows;
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

/* Softmax of s[0..n) in place, scaled so that the weights sum to 1; -INFINITY stays 0. */
static void softmax(float *s, int n)
{
    float mx = -INFINITY, sum = 0;

    for (int j = 0; j < n; j++)
        mx = s[j] > mx ? s[j] : mx;
    for (int j = 0; j < n; j++) {
        s[j] = expf(s[j] - mx);
        sum += s[j];
    }
    for (int j = 0; j < n; j++)
        s[j] /= sum;
}

/* Query i's visible keys. */
static int visible(const struct vt_wk_attn *a, int i)
{
    int n = a->causal < 0 ? a->n_kv : a->causal + i + 1;

    return n > a->n_kv ? a->n_kv : n;
}

/* Scores of queries [i0, i0 + nq) of head h into s (rows of n_kv), the invisible ones
 * -INFINITY, copied to qk when asked for. */
static void scores(const struct vt_wk_attn *a, int h, int i0, int nq, float *s)
{
    int dh = a->d_head, n = visible(a, i0 + nq - 1), j = 0;
    const float *q = a->q + (size_t)i0 * a->ldq + (size_t)h * dh, *k = a->k + (size_t)h * dh;

#ifdef VT_WK_AVX2
    if (avx2() && nq == 4 && dh % 8 == 0)
        for (; j + 3 <= n; j += 3) {
            float acc[4][3];

            tile_4x3(q, a->ldq, k + (size_t)j * a->ldk, a->ldk, dh, acc);
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 3; c++)
                    s[(size_t)r * a->n_kv + j + c] = acc[r][c];
        }
#endif
    for (int r = 0; r < nq; r++)
        for (int jj = j; jj < n; jj++)
            s[(size_t)r * a->n_kv + jj] =
                dot_f32(q + (size_t)r * a->ldq, k + (size_t)jj * a->ldk, dh);
    for (int r = 0; r < nq; r++) {
        float *row = s + (size_t)r * a->n_kv;
        int vis = visible(a, i0 + r);

        for (int jj = vis; jj < a->n_kv; jj++)
            row[jj] = -INFINITY;
        if (a->qk && a->qk[h])
            memcpy(a->qk[h] + (size_t)(i0 + r) * a->n_kv, row, (size_t)a->n_kv * sizeof(float));
        softmax(row, vis);
    }
}

#ifdef VT_WK_AVX2
/* out rows [i0, i0 + 4) of head h = p . V, 16 columns at a time: each V row loaded once for
 * the four queries. */
KATTR static void weigh_4(const struct vt_wk_attn *a, int h, int i0, const float *p, int n)
{
    int dh = a->d_head;

    for (int c = 0; c < dh; c += 16) {
        __m256 o[4][2];
        const float *v = a->v + (size_t)h * dh + c;

        for (int r = 0; r < 4; r++)
            o[r][0] = o[r][1] = _mm256_setzero_ps();
        for (int j = 0; j < n; j++, v += a->ldv) {
            __m256 v0 = _mm256_loadu_ps(v), v1 = _mm256_loadu_ps(v + 8);

            for (int r = 0; r < 4; r++) {
                __m256 pr = _mm256_set1_ps(p[(size_t)r * a->n_kv + j]);

                o[r][0] = _mm256_fmadd_ps(pr, v0, o[r][0]);
                o[r][1] = _mm256_fmadd_ps(pr, v1, o[r][1]);
            }
        }
        for (int r = 0; r < 4; r++) {
            float *out = a->out + (size_t)(i0 + r) * a->ldo + (size_t)h * dh + c;

            _mm256_storeu_ps(out, o[r][0]);
            _mm256_storeu_ps(out + 8, o[r][1]);
        }
    }
}
#endif

static void weigh(const struct vt_wk_attn *a, int h, int i0, int nq, const float *p)
{
    int dh = a->d_head, n = visible(a, i0 + nq - 1);

#ifdef VT_WK_AVX2
    if (avx2() && nq == 4 && dh % 16 == 0) {
        weigh_4(a, h, i0, p, n); /* the invisible keys weigh 0 */
        return;
    }
#endif
    for (int r = 0; r < nq; r++) {
        float *o = a->out + (size_t)(i0 + r) * a->ldo + (size_t)h * dh;
        const float *pr = p + (size_t)r * a->n_kv;

        memset(o, 0, (size_t)dh * sizeof(float));
        for (int j = 0; j < visible(a, i0 + r); j++)
            axpy(pr[j], a->v + (size_t)j * a->ldv + (size_t)h * dh, o, dh);
    }
}

/* Work items: a head and a block of up to 4 queries. */
static void attn_job(void *arg, int w, int nw)
{
    const struct vt_wk_attn *a = arg;
    float *s = a->scratch + (size_t)w * 4 * a->n_kv;
    int nb = (a->n_q + 3) / 4;

    for (int it = w; it < a->n_head * nb; it += nw) {
        int h = it / nb, i0 = it % nb * 4, nq = a->n_q - i0 < 4 ? a->n_q - i0 : 4;

        scores(a, h, i0, nq, s);
        weigh(a, h, i0, nq, s);
    }
}

void vt_wk_attention(struct vt_wk_pool *p, const struct vt_wk_attn *a)
{
    pool_run(p, attn_job, (void *)a);
}
