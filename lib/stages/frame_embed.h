/*
 * The same-footage pass of frame_embed (frame_embed.c), callable on its own so that the
 * benchmark (bench/frames_bench.c) measures exactly what the stage runs.
 */
#ifndef VT_FRAME_EMBED_H
#define VT_FRAME_EMBED_H

#include "store/store.h"

#include <stddef.h>
#include <stdint.h>

struct vt_library;
struct vt_ocr_page;

/* A kept frame of the video being compared: its hash, shot, vector and what was read. */
struct vt_fe_frame {
    int idx, shot;
    double t_s;
    uint64_t phash;
    const float *v;                /* dim floats in space */
    const struct vt_ocr_page *ocr; /* may be NULL */
};

/* Compare video id's kept frames (mine[0..nm)) with every other video's: runs of the
 * same footage into *runs (vt_store_reuse_free). 0 or a store error. */
int vt_find_reuse(struct vt_library *lib, const char *id, const struct vt_fe_frame *mine, size_t nm,
                  const char *space, int dim, struct vt_reuse **runs, size_t *n_runs);

#endif
