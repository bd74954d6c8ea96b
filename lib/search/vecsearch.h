/*
 * Nearest vectors of a library, for every search that compares stored vectors: the
 * search by meaning (lib/search/meaning.c) and "more like this" over frames' pictures
 * (frame N of a video: the frames of the whole library that look most alike).
 *
 * The in-memory index of one vector space (vindex.h) is shared by every library handle
 * of the process that opened the same library directory, loaded on first use and
 * brought up to date when the database changed. A handle keeps its uses of the indexes
 * in its slot VT_SLOT_SEARCH (library.h), closed with the handle. Only sqlite3 and the
 * index are needed: a front command (src/cli/vidtheque.c) can search without any model.
 */
#ifndef VT_VECSEARCH_H
#define VT_VECSEARCH_H

#include "ml/vindex.h"

#include <stddef.h>
#include <stdint.h>

struct vt_library;

/*
 * The k vectors of space (of dimension dim) nearest to qv, best first, into vh (k
 * entries); *m gets how many. keep (may be NULL) filters keys (vindex.h,
 * vt_vindex_search_keep). 0, or an error with one line in err.
 */
int vt_vecsearch_nearest(struct vt_library *lib, const char *space, int dim, const float *qv,
                         size_t k, vt_vindex_keep_fn keep, void *user, struct vt_vhit *vh,
                         size_t *m, char *err, size_t errlen);

/* What the index of space (dimension dim) that lib's handle searched holds: its count
 * of vectors and highest key. 0, or -1 when the handle has not searched that space since
 * the database last changed. */
int vt_vecsearch_loaded(struct vt_library *lib, const char *space, int dim, int64_t *count,
                        int64_t *max_id);

/* A frame that looks like the one asked about. */
struct vt_lookalike {
    char video_id[65];
    char *title;
    int frame;    /* the frame's index in its video */
    double t_s;   /* its second */
    double score; /* cosine of the two pictures' vectors */
    char *path;   /* its picture, relative to the library; NULL when not kept */
};

#define VT_SIMILAR_MAX 100 /* most frames one query answers */

/*
 * The frames of the whole library whose pictures are nearest to frame `frame` of video
 * id (frame_embed's vectors; a duplicate frame stands for the frame it repeats), best
 * first, at most limit (1..VT_SIMILAR_MAX); the frame itself and its duplicates are not
 * among them. VT_ENOTFOUND for no such video or frame or a frame without a vector (the
 * stage has not run), VT_EINVAL for a bad limit; one line in err.
 */
int vt_similar_frames(struct vt_library *lib, const char *id, int frame, int limit,
                      struct vt_lookalike **out, size_t *n, char *err, size_t errlen);
void vt_lookalike_free(struct vt_lookalike *s, size_t n);
/*
 * The answer as JSON (docs/API.md, "Frames that look alike"): {"video_id", "frame",
 * "results": [{"video_id", "title", "frame", "t", "similarity", "thumbnail" (the frame's
 * URL under /api), "path" (relative to the library, or null), "link" (the video page at
 * that second)}]}. malloc'd.
 */
char *vt_lookalike_json(const char *id, int frame, const struct vt_lookalike *s, size_t n);

/* Whether video id shares footage with another (frame_embed's reuse records); the
 * ids of all such videos, sorted, with vt_lib_reuse_videos (free each, then the array). */
int vt_lib_reuse_videos(struct vt_library *lib, char ***ids, size_t *n);

#endif
