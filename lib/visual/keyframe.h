/*
 * The keyframe stage: shot boundaries, the sharpest frame per shot, near-duplicate
 * frames skipped, kept frames written as JPEG files. See keyframe.c.
 */
#ifndef VT_KEYFRAME_H
#define VT_KEYFRAME_H

#include "model/frames.h"
#include "model/stage.h"

#include <stddef.h>
#include <stdint.h>

/* Shots, frames and their results are model/frames.h's (the store keeps them). */

/*
 * Run on media_path, writing kept frames into out_dir (which exists). Returns 0,
 * VT_SKIP with the reason in err (e.g. no video stream) or a negative VT_E* code
 * with the message in err. res is released with vt_kf_result_release.
 */
int vt_keyframe_run(const char *media_path, const char *out_dir, struct vt_kf_result *res,
                    vt_progress_fn progress, void *user, char *err, size_t errlen);
void vt_kf_result_release(struct vt_kf_result *res);

/*
 * The name of a frame image's small version (written beside it by vt_keyframe_run, for
 * pages): "DIR/N.jpg" gives "DIR/N.small.jpg". 0, or VT_EINVAL when image does not end in
 * ".jpg" or the name does not fit in len bytes.
 */
int vt_kf_small_name(const char *image, char *out, size_t len);

struct vt_sd_feat;

/*
 * Pass 1 alone, for tools that tune shot detection (tests/tools/sdtune.c): the features
 * of every analysed frame of media_path into *feats (caller frees) and their number.
 * Returns 0 or an error as vt_keyframe_run.
 */
int vt_kf_features(const char *media_path, struct vt_sd_feat **feats, size_t *nf, char *err,
                   size_t errlen);

#endif
