/*
 * Nearest-neighbour search over unit vectors, behind an interface an ANN index can
 * replace: today an exact brute-force scan of an int8-quantized copy (per-vector
 * scale, dot products the compiler vectorises), whose best candidates are rescored
 * with the float32 vectors. Fits 1M x 256 in memory (256 MB int8 + 1 GB float32).
 *
 * Items are identified by a caller's 64-bit key (e.g. the store's row id). An index
 * holds vectors of one dimension, from one model (the caller checks vt_embed_id).
 * Adding is not thread-safe; searching concurrently with other searches is.
 */
#ifndef VT_VINDEX_H
#define VT_VINDEX_H

#include <stddef.h>
#include <stdint.h>

struct vt_vindex;

struct vt_vhit {
    int64_t key;
    float score; /* cosine (dot product of unit vectors), float32 rescored */
};

struct vt_vindex *vt_vindex_new(int dim);
void vt_vindex_free(struct vt_vindex *ix);
int vt_vindex_dim(const struct vt_vindex *ix);
size_t vt_vindex_count(const struct vt_vindex *ix);
/* Add one unit vector (dim floats) under key; 0 or VT_EIO when memory runs out. */
int vt_vindex_add(struct vt_vindex *ix, int64_t key, const float *v);
/*
 * The k items nearest to q (a unit vector), best first, into hits (k entries);
 * returns how many were written (fewer when the index holds fewer). Candidates
 * from the int8 pass (a few times k) are rescored in float32.
 */
size_t vt_vindex_search(const struct vt_vindex *ix, const float *q, size_t k, struct vt_vhit *hits);
/* Exact float32 top-k, for measuring recall (slow: reads every float32 vector). */
size_t vt_vindex_search_exact(const struct vt_vindex *ix, const float *q, size_t k,
                              struct vt_vhit *hits);

/*
 * Additions to the interface above.
 *
 * vt_vindex_new returns NULL for a dim outside 1..8192 (or without memory); vt_vindex_free
 * accepts NULL. Adding a key the index holds replaces its vector. Vectors with a NaN or
 * an infinity are refused (VT_EINVAL, nothing changes); a query with one, or an all-zero
 * query (a text without a token), gets no hits. Hits are ordered by score, then by key
 * (ascending) between equal scores. vt_vec_quantize of an all-zero vector (or one with a
 * non-finite value) writes zeros and returns 0. Removing, like adding, must not run while
 * a search does.
 *
 * vt_vindex_reserve: room for n vectors at least, so that loading a known number
 * of rows does not grow the arrays step by step; 0 or VT_EIO.
 * vt_vindex_add_blob: add a vector stored as nbytes of native float32 (a database blob,
 * any alignment); VT_EINVAL when nbytes is not dim * 4 (a vector of another dimension).
 * vt_vindex_add_q: add a vector with its int8 copy and scale as vt_vec_quantize made
 * them (stored beside it), without quantizing again; VT_EINVAL for a value of -128 or a
 * negative or non-finite scale.
 * vt_vindex_remove: drop key's vector (the last row moves into its place); 0 or
 * VT_ENOTFOUND.
 * vt_vindex_set_threads: max_threads threads (at most 4) scan one search; 0 (the
 * default): a thread per 1,000,000 vectors, up to the number of cores and 4.
 */
int vt_vindex_reserve(struct vt_vindex *ix, size_t n);
int vt_vindex_add_blob(struct vt_vindex *ix, int64_t key, const void *blob, size_t nbytes);
int vt_vindex_add_q(struct vt_vindex *ix, int64_t key, const float *v, const int8_t *q,
                    float scale);
int vt_vindex_remove(struct vt_vindex *ix, int64_t key);
void vt_vindex_set_threads(struct vt_vindex *ix, int max_threads);

/*
 * vt_vindex_search restricted to the keys keep accepts (keep returns non-zero). keep is
 * asked only about items good enough to enter the candidates, from the scanning threads,
 * possibly at the same time: it must be thread-safe and should be quick (e.g. a lookup in
 * a set of allowed keys). With a very selective keep, fewer than k hits may come back
 * only when fewer than k items pass it.
 */
typedef int (*vt_vindex_keep_fn)(void *user, int64_t key);
size_t vt_vindex_search_keep(const struct vt_vindex *ix, const float *q, size_t k,
                             struct vt_vhit *hits, vt_vindex_keep_fn keep, void *user);

/* Quantize a unit vector to int8 (round(v * 127 / max|v|)); returns the scale
 * (max|v| / 127) that turns int8 dot products back into floats. */
float vt_vec_quantize(const float *v, int dim, int8_t *out);

/*
 * Reciprocal rank fusion: score(item) = sum over lists of 1 / (k + rank), rank from 1.
 * Callers rank their lists, then add each item's contribution with this.
 */
#define VT_RRF_K 60
static inline double vt_rrf(size_t rank0)
{
    return 1.0 / (VT_RRF_K + (double)rank0 + 1.0);
}

#endif
