/*
 * The same-footage pass of frame_embed (stage_frame_embed.c), callable on its own so that the
 * benchmark (bench/frames_bench.c) measures exactly what the stage runs; and the stage's
 * model, for the search of pictures by words (lib/search/visual.c).
 */
#ifndef VT_FRAME_EMBED_H
#define VT_FRAME_EMBED_H

#include "store/store.h"

#include <stddef.h>
#include <stdint.h>

struct vt_library;
struct vt_ocr_page;
struct vt_embed;

/* Whether the configured frame model embeds words too (frame_embed.joint_text): 0,
 * VT_SKIP when it does not (or none is configured), or the config's error; one line in
 * err. */
int vt_frame_embed_joint_text(struct vt_library *lib, char *err, size_t errlen);
/* Open the configured model, or take it from the process's cache (one model kept for
 * the process: a run takes it, another thread meanwhile opens its own); *key gets the
 * cache key (caller frees). 0, VT_SKIP or an error with one line in err. */
int vt_frame_embed_open(struct vt_library *lib, struct vt_embed **out, char **key, char *err,
                        size_t errlen);
/* Give e back to the cache under key (a copy is kept); the model it held is closed. */
void vt_frame_embed_give(const char *key, struct vt_embed *e);

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
