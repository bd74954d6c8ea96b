/*
 * The keyframe stage: shot boundaries, the sharpest frame per shot, near-duplicate
 * frames skipped, kept frames written as JPEG files. See keyframe.c.
 */
#ifndef VT_KEYFRAME_H
#define VT_KEYFRAME_H

#include "model/stage.h"

#include <stddef.h>
#include <stdint.h>

struct vt_kf_shot {
    double start_s, end_s; /* relative to the file's own start */
    int captured, kept;    /* keyframes captured and kept in this shot */
    /* The transition into the shot: "cut", "dissolve" or "fade" (static names, see
     * vt_kf_transition_name), NULL for the first shot and for shots stored before
     * transitions were recorded; [trans_start_s, trans_end_s) holds its mixed frames
     * (both start_s for a cut). */
    const char *transition;
    double trans_start_s, trans_end_s;
};

/* The static name of a transition kind named s ("cut", "dissolve", "fade"), or NULL
 * (defined in shotdetect.c, which needs no media library). */
const char *vt_kf_transition_name(const char *s);

struct vt_kf_frame {
    int index;        /* 0-based, in time order over the whole video */
    double t_s;       /* relative to the file's own start */
    int64_t frame_no; /* 0-based frame number in the stream's own frame rate */
    int shot;         /* index into shots */
    int duplicate_of; /* index of the earlier kept frame, or -1 when kept */
    double sharpness; /* variance of the Laplacian of the luma */
    int64_t bytes;    /* size of the image file, 0 when skipped */
    char file[64];    /* file name inside out_dir, "" when skipped */
    int width, height;
    uint64_t phash; /* perceptual hash */
};

struct vt_kf_result {
    struct vt_kf_shot *shots;
    size_t n_shots;
    struct vt_kf_frame *frames;
    size_t n_frames;
    char model[128];   /* algorithm name and version, for provenance */
    double duration_s; /* measured from the decoded frames, not the container */
};

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
