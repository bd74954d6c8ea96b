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
size_t vt_vindex_search(const struct vt_vindex *ix, const float *q, size_t k,
                        struct vt_vhit *hits);
/* Exact float32 top-k, for measuring recall (slow: reads every float32 vector). */
size_t vt_vindex_search_exact(const struct vt_vindex *ix, const float *q, size_t k,
                              struct vt_vhit *hits);

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
