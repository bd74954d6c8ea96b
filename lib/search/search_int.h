/*
 * The parts of vt_search (meaning.c) found in the other files of lib/search/: the words
 * typed (search.c), the moments by meaning (meaning.c), the pictures by the words
 * (visual.c), and the fusion of their ranked lists.
 */
#ifndef VT_SEARCH_INT_H
#define VT_SEARCH_INT_H

#include "vidtheque.h"

#include <stddef.h>

struct vt_library;
struct vt_query;

/* search.c: the words typed, through the full-text index (vt_search's words mode). */
int vt_search_words(struct vt_library *lib, const char *query, size_t query_len,
                    const struct vt_search_opts *opts, struct vt_hit **hits, size_t *n,
                    struct vt_search_info *info);
/* The moments nearest to q's words by meaning, best first (score: the cosine), at most
 * limit, with opts' filters, none below the space's relevance floor (floor.h; used gets
 * the floor and how many were below it); matched is VT_MATCH_MEANING. */
int vt_search_meaning(struct vt_library *lib, const struct vt_query *q,
                      const struct vt_search_opts *opts, int limit, struct vt_hit **hits,
                      size_t *n_hits, struct vt_search_floor *used, char *err, size_t errlen);
/* visual.c: the frames whose pictures are nearest to q's words, for a joint text-image
 * frame model (source "visual", matched VT_MATCH_VISUAL), none below the frame model
 * space's relevance floor; VT_SKIP when the configured
 * frame model embeds no text (or none is configured). */
int vt_search_visual(struct vt_library *lib, const struct vt_query *q,
                     const struct vt_search_opts *opts, int limit, struct vt_hit **hits,
                     size_t *n_hits, struct vt_search_floor *used, char *err, size_t errlen);
/* A floor (floor.h) as the search reports it, for signal "meaning" or "visual". */
struct vt_floor;
void vt_search_floor_put(struct vt_search_floor *out, const char *signal, const struct vt_floor *f,
                         int measured);
/* Fuse ranked word hits and meaning hits by reciprocal rank into *out (at most limit),
 * taking ownership of both lists. */
void vt_hits_fuse(struct vt_hit *words, size_t n_words, struct vt_hit *meaning, size_t n_meaning,
                  size_t limit, struct vt_hit **out, size_t *n_out);
/* Add a third ranked list (extra, whose hits say flag) to fused hits *list (their score the
 * rank fusion's), by the same rule; sorted again, at most limit. Takes extra. */
void vt_hits_fuse_more(struct vt_hit **list, size_t *n, struct vt_hit *extra, size_t n_extra,
                       size_t limit);

#endif
