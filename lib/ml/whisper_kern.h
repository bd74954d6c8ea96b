/*
 * The kernels under Whisper's network (whisper_model.c): half-float conversion, matrix
 * products against packed F16 weight matrices with F32 accumulation, LayerNorm, attention a
 * head and a block of queries at a time (memory: one block of score rows per worker, and the
 * keys packed once), and the small thread pool that splits them. Each kernel has an AVX2/FMA/F16C
 * version and a scalar one, chosen once from the CPU (vt_wk_use_generic forces the scalar ones, for
 * tests).
 */
#ifndef VT_WHISPER_KERN_H
#define VT_WHISPER_KERN_H

#include <stddef.h>
#include <stdint.h>

float vt_wk_f16_to_f32(uint16_t h);
/* Round to nearest even; values beyond F16's range become infinities. */
uint16_t vt_wk_f32_to_f16(float f);

/* 1: scalar kernels only (tests compare them with the vector ones); 0: as the CPU allows. */
void vt_wk_use_generic(int on);
/* "avx2" or "generic": the kernels in use. */
const char *vt_wk_kernels(void);

/*
 * A pool of n - 1 threads plus the caller. One pool serves one caller at a time (an encode
 * call, a vt_whisper_kv), so several pools run at once without sharing anything. NULL when
 * out of memory; a pool whose threads could not all start runs on those that did.
 */
struct vt_wk_pool;
struct vt_wk_pool *vt_wk_pool_new(int n);
void vt_wk_pool_free(struct vt_wk_pool *p);
int vt_wk_pool_size(const struct vt_wk_pool *p);

#define VT_WK_GELU 1 /* y = gelu(x W^T + b) (exact erf GELU) */
#define VT_WK_ACC  2 /* y += x W^T + b (the residual) */

/*
 * Weight matrices, F16 row-major [N][K], are packed once into the layout the products read
 * (panels of 16 rows interleaved, the last one padded with zeros): vt_wk_packed_count(N, K)
 * halves. vt_wk_pack copies a whole matrix (w need not be aligned); vt_wk_pack_put sets the
 * value at row-major index i; vt_wk_packed_get reads row n, column k, widened.
 */
size_t vt_wk_packed_count(int N, int K);
void vt_wk_pack(const void *w, int N, int K, uint16_t *out);
void vt_wk_pack_put(uint16_t *out, int K, size_t i, uint16_t h);
float vt_wk_packed_get(const uint16_t *pw, int K, int n, int k);

/*
 * y[m][n] (row stride ldy) = x[m][:K] (row stride ldx) . w[n][:K] + b[n] (b may be NULL),
 * for m < M and n < N, with flags; w is packed (vt_wk_pack) from F16 [N][K]. Split over the
 * pool's threads.
 */
void vt_wk_matmul(struct vt_wk_pool *p, const float *x, int ldx, int M, int K, const uint16_t *w,
                  const float *b, float *y, int ldy, int N, int flags);

/* LayerNorm (eps 1e-5) of M rows of n values: y = (x - mean) / sqrt(var + eps) * g + b. */
void vt_wk_layernorm(const float *x, const float *g, const float *b, float *y, int M, int n);

/*
 * Multi-head attention of n_q queries over n_kv keys: for head h, query i, the scores
 * q_i,h . k_j,h (q already scaled by d_head^-0.5), key j visible when causal < 0 or
 * j <= causal + i; softmax; out_i,h = sum_j p_j v_j,h. qk[h], when qk and qk[h] are set,
 * gets the scores [n_q][n_kv] before the softmax (-inf where masked). scratch holds
 * vt_wk_attn_scratch(pool, n_q, n_kv, n_head, d_head) floats.
 */
struct vt_wk_attn {
    const float *q, *k, *v;
    int ldq, ldk, ldv, ldo;
    int n_q, n_kv, n_head, d_head, causal;
    float *out;
    float **qk;
    float *scratch;
    const float *kt; /* the keys as vt_wk_attn_pack_keys lays them out (k unread), or NULL */
};
size_t vt_wk_attn_scratch(const struct vt_wk_pool *p, int n_q, int n_kv, int n_head, int d_head);
/*
 * Keys read by many calls (the decoder's cross-attention) packed once: head by head, panels
 * of 16 keys transposed, vt_wk_attn_keys_count(n_kv, n_head, d_head) floats into kt.
 */
size_t vt_wk_attn_keys_count(int n_kv, int n_head, int d_head);
void vt_wk_attn_pack_keys(struct vt_wk_pool *p, const float *k, int ldk, int n_kv, int n_head,
                          int d_head, float *kt);
void vt_wk_attention(struct vt_wk_pool *p, const struct vt_wk_attn *a);

#endif
