/*
 * Chunking: consecutive cues grouped into passages for retrieval, about 20 to 60
 * seconds long, preferring to end where a shot or a chapter ends, or at a pause.
 */
#ifndef VT_CHUNK_H
#define VT_CHUNK_H

#include "model/transcript.h"

#include <stddef.h>

#define VT_CHUNK_MIN_S    20.0
#define VT_CHUNK_MAX_S    60.0
#define VT_CHUNK_TARGET_S 40.0

/*
 * Group t's cues into *out (caller frees with vt_chunks_free, store.h). ends[0..n_ends-1]
 * are times where a passage would rather end (shot and chapter ends), any order.
 */
void vt_chunk_cues(const struct vt_transcript *t, const double *ends, size_t n_ends,
                   struct vt_chunk **out, size_t *n);

#endif
