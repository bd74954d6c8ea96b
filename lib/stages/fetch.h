/*
 * The fetch stage for videos from URLs (fetch_url.c): its work in the stage (stage_fetch.c:
 * download, learn the metadata), what follows indexing, and the look at a URL
 * that adding one takes first (lib/run/add_url.c), all through the yt-dlp the handle's
 * fetch slot names (vt_library_set_fetch).
 */
#ifndef VT_FETCH_H
#define VT_FETCH_H

#include <stddef.h>

struct vt_library;
struct vt_stage_ctx;
struct vt_video_rec;
struct vt_chapter;

/* The most of an info JSON read, from yt-dlp or from a file. */
#define VT_FETCH_INFO_MAX_BYTES (64u << 20)

/* The fetch stage's work for a video from a URL (run: download, learn the metadata;
 * save: store it), and what follows indexing (drop media not kept). */
int vt_fetch_url_run(struct vt_stage_ctx *c, struct vt_video_rec *meta,
                     struct vt_chapter **chapters, size_t *n_chapters);
void vt_fetch_after_index(struct vt_library *lib, const struct vt_video_rec *v);

/* "yt-dlp 2023.03.04", asked once per library handle (the model of fetch): 0, or an error
 * with one line in err. */
int vt_fetch_ytdlp_ask_version(struct vt_library *lib, char *err, size_t errlen);
/* What vt_fetch_ytdlp_ask_version learnt ("" before). */
const char *vt_fetch_ytdlp_version(struct vt_library *lib);
/* Ask yt-dlp what url is (-J), in the empty working directory cwd: the raw JSON into
 * *json. Lists come flat when playlist. 0, or an error with one line in err. */
int vt_fetch_ask_info(struct vt_library *lib, const char *url, const char *cwd, int playlist,
                      char **json, size_t *len, char *err, size_t errlen);

#endif
