/*
 * The text_embed stage's engine (stage_text_embed.c), for the search by meaning
 * (lib/search/meaning.c) and the benchmarks: the configured text embedding model, kept
 * in the handle's slot, and the texts the stage embeds.
 */
#ifndef VT_TEXT_EMBED_H
#define VT_TEXT_EMBED_H

#include <stddef.h>

struct vt_library;
struct vt_config;
struct vt_embed;
struct vt_stage_ctx;
struct vt_store_frame;

/*
 * The library's embedding handle for the configured model, opened on first use and
 * kept while the config is unchanged. 0, VT_SKIP (nothing configured) or an error, with
 * one line in err.
 */
int vt_lib_text_embed(struct vt_library *lib, struct vt_embed **out, char *err, size_t errlen);
/* Whether cf configures a text embedding model the stage can use. */
int vt_text_embed_configured(const struct vt_config *cf);
/* Embed n texts in batches into out (n * dim), reporting progress to sc (may be NULL). */
int vt_text_embed_all(struct vt_embed *e, const char *const *texts, size_t n, float *out,
                      struct vt_stage_ctx *sc, char *err, size_t errlen);
/* The text of a frame's OCR lines but noise, one per line; NULL when it has (almost)
 * none: what the stage embeds for a frame. Caller frees. */
char *vt_text_embed_frame_text(const struct vt_store_frame *f);

#endif
