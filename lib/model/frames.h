/*
 * The pictures of a video: its shots (with the transition into each), the frames the
 * keyframe stage kept, and the lines of text the ocr stage read on them. Written by
 * lib/visual (keyframe.c, ocr.c), stored and read back by the store.
 */
#ifndef VT_MODEL_FRAMES_H
#define VT_MODEL_FRAMES_H

#include <stddef.h>
#include <stdint.h>

/* The kinds of transition into a shot; their names are the database's and the JSON's. */
#define VT_TRANSITION_LIST(X) X(CUT, cut) X(DISSOLVE, dissolve) X(FADE, fade)

enum vt_transition {
#define VT_TRANSITION_X(ID, name) VT_TRANSITION_##ID,
    VT_TRANSITION_LIST(VT_TRANSITION_X)
#undef VT_TRANSITION_X
        VT_TRANSITION_COUNT
};

/* The static name of transition t, NULL out of range (frames.c). */
const char *vt_transition_name(enum vt_transition t);
/* The static name of the transition named s ("cut", "dissolve", "fade"), or NULL. */
const char *vt_kf_transition_name(const char *s);

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

/* What the keyframe stage found (vt_keyframe_run, vt_kf_result_release: keyframe.h). */
struct vt_kf_result {
    struct vt_kf_shot *shots;
    size_t n_shots;
    struct vt_kf_frame *frames;
    size_t n_frames;
    char model[128];   /* algorithm name and version, for provenance */
    double duration_s; /* measured from the decoded frames, not the container */
};

struct vt_ocr_line {
    char *text;  /* UTF-8, owned, no trailing newline, never empty */
    double conf; /* 0..1 */
    int box[4];  /* x, y, w, h in image pixels */
    int noise;   /* 1: below the noise floor (ocr_noise.h): kept, never indexed or counted */
};

/* The lines read on one frame (vt_ocr_page_release: ocr.h). */
struct vt_ocr_page {
    struct vt_ocr_line *lines; /* owned */
    size_t n_lines;
};

#endif
