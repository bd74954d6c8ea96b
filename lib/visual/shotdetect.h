/*
 * Shot boundary detection on a sequence of per-frame features, with no FFmpeg in
 * sight: keyframe.c measures the features while decoding, this module decides where
 * shots begin and which frame of each shot to keep. Pure functions on arrays, so the
 * unit tests drive them with synthetic sequences (a cut, a fade, a dissolve, noise).
 */
#ifndef VT_SHOTDETECT_H
#define VT_SHOTDETECT_H

#include <stddef.h>
#include <stdint.h>

/*
 * A coarse picture of the frame: VT_SD_GRID_W x VT_SD_GRID_H luma cell means, then
 * VT_SD_CGRID_W x VT_SD_CGRID_H means of each chroma plane (0..255). Cells average away
 * noise and the motion of small things, and a dissolve mixes them linearly, so a
 * gradual transition is told from motion by the frames around it, whatever moves.
 */
#define VT_SD_GRID_W  8
#define VT_SD_GRID_H  6
#define VT_SD_CGRID_W 4
#define VT_SD_CGRID_H 3
#define VT_SD_GRID    (VT_SD_GRID_W * VT_SD_GRID_H + 2 * VT_SD_CGRID_W * VT_SD_CGRID_H)

/* The text grid: edge pixels per cell, for text that changes inside a shot (textchange.h). */
#define VT_SD_TEXT_W 16
#define VT_SD_TEXT_H 6
#define VT_SD_TEXT   (VT_SD_TEXT_W * VT_SD_TEXT_H)

/*
 * The line grid: means of VT_SD_LINE_W x VT_SD_LINE_H cells of the thumbnail, each a few
 * pixels high, about one line of a screen's type: whether the lines of a screen stay
 * where they were (shotdetect.c's screen_change, textchange.c's distance).
 */
#define VT_SD_LINE_W 16
#define VT_SD_LINE_H 30
#define VT_SD_LINE   (VT_SD_LINE_W * VT_SD_LINE_H)

/* A pixel "changed" (vt_sd_feat.changed) when it moved by more than this many grey levels. */
#define VT_SD_CHANGED_THR 20

/* Features of one analysed frame; diffs are on a small grey thumbnail, 0..255 scale. */
struct vt_sd_feat {
    double t_s;      /* presentation time relative to the file's start */
    float mean;      /* mean luma */
    float stddev;    /* luma standard deviation */
    float sharpness; /* variance of the Laplacian */
    float d1;        /* mean abs difference with the previous analysed frame */
    float changed;   /* fraction of pixels that moved by more than VT_SD_CHANGED_THR since
                      * the previous frame */
    float dlong;     /* mean abs difference with the frame about VT_SD_LAG_S earlier */
    uint8_t key;     /* a keyframe (random access point): cheap to seek to */
    uint8_t grid[VT_SD_GRID];
    uint8_t text[VT_SD_TEXT]; /* edge pixels per text grid cell, at most 255 */
    uint8_t line[VT_SD_LINE]; /* the line grid's cell means */
};

/* Lag of the long-range difference; gradual transitions up to this long are found. */
#define VT_SD_LAG_S 1.0

enum vt_sd_kind { VT_SD_START, VT_SD_CUT, VT_SD_FADE, VT_SD_DISSOLVE };

/*
 * A shot: analysed frames [first, last]. Transitions belong to no shot's stable part:
 * [stable_first, stable_last] excludes them. kind says how the shot began, and
 * [span0, span1] are the frames of that transition (a fade's or a dissolve's mixed
 * frames, which straddle first; first alone for a cut and the start).
 */
struct vt_sd_shot {
    size_t first, last;
    size_t stable_first, stable_last;
    enum vt_sd_kind kind;
    size_t span0, span1;
    size_t chosen; /* the analysed frame to keep */
};

/*
 * Split the n features into shots. Returns the number of shots (>= 1 when n >= 1)
 * and a caller-freed array in *shots.
 */
size_t vt_sd_detect(const struct vt_sd_feat *f, size_t n, struct vt_sd_shot **shots);

/* "cut", "fade" or "dissolve" (static), NULL for VT_SD_START. */
const char *vt_sd_kind_name(enum vt_sd_kind kind);

/*
 * Whether two pictures are a screen on one ground (a terminal, an application, a slide):
 * half the cells of the line grid of both within 3 grey levels of the ground, the
 * commonest value of a's. The ground's grey level, or -1 when they are not.
 */
int vt_sd_screen_ground(const struct vt_sd_feat *a, const struct vt_sd_feat *b);

/* A line grid cell of a screen holds type this many grey levels off its ground. */
#define VT_SD_SCREEN_INK 8

/* True when a frame with these features is black (part of a fade through black), or white. */
int vt_sd_is_black(const struct vt_sd_feat *f);
int vt_sd_is_white(const struct vt_sd_feat *f);

#endif
