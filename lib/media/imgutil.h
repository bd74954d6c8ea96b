/*
 * Small image helpers for the keyframe stage, free of FFmpeg so that unit tests can
 * call them on synthetic pixels: area resizing of grey images, the variance of the
 * Laplacian (our sharpness measure), a 64-bit DCT perceptual hash, a near-duplicate
 * test on small thumbnails, rotation and area resizing of RGB images and JPEG writing.
 */
#ifndef VT_IMGUTIL_H
#define VT_IMGUTIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Resize the grey image src (sw x sh, row stride sstride) into dst (dw x dh, packed)
 * by averaging the source area under each destination pixel.
 */
void vt_img_resize_gray(const uint8_t *src, int sw, int sh, int sstride, uint8_t *dst, int dw,
                        int dh);

/*
 * Box-average src (row stride sstride) by fx x fy pixels into dst (dw x dh, packed):
 * the fast path of vt_img_resize_gray for integer factors.
 */
void vt_img_box_down(const uint8_t *src, int sstride, int fx, int fy, uint8_t *dst, int dw, int dh);

/* Variance of the 4-neighbour Laplacian over the interior of a grey image; 0 if too small. */
double vt_img_laplacian_var(const uint8_t *g, int w, int h, int stride);

/* 64-bit pHash of a 32x32 grey image (packed): signs of the 8x8 low DCT terms vs their median. */
uint64_t vt_img_phash64(const uint8_t *g32);
int vt_img_hamming64(uint64_t a, uint64_t b);

/*
 * Compare two packed grey thumbnails of n pixels: *mad gets the mean absolute
 * difference, *changed the fraction of pixels differing by more than thresh.
 */
void vt_img_diff(const uint8_t *a, const uint8_t *b, size_t n, int thresh, double *mad,
                 double *changed);

/*
 * Rotate a packed RGB24 image clockwise by deg (0, 90, 180, 270). Returns a new
 * buffer (caller frees) and sets *ow, *oh.
 */
uint8_t *vt_img_rotate_rgb(const uint8_t *src, int w, int h, int stride, int deg, int *ow, int *oh);
/* The same for an 8-bit grey image. */
uint8_t *vt_img_rotate_grey(const uint8_t *src, int w, int h, int stride, int deg, int *ow,
                            int *oh);

/*
 * Write RGB24 pixels as a baseline JPEG of the given quality to path, atomically
 * (temporary file and rename). *bytes gets the file size. 0 or a negative VT_E* code.
 */
int vt_img_write_jpeg(const char *path, const uint8_t *rgb, int w, int h, int stride, int quality,
                      int64_t *bytes, char *err, size_t errlen);

/* The small version of every kept frame (pages show frames at 160 px and less: 320 px
 * wide is sharp on a 2x screen too), and its JPEG quality (a 720p slide at this size is
 * some 10-20 KB). */
#define VT_IMG_SMALL_W 320
#define VT_IMG_SMALL_Q 80

/*
 * Resize packed RGB24 src (sw x sh, row stride sstride) into dst (dw x dh, packed, row
 * stride dw * 3) by area averaging: each destination pixel is the mean of the source area
 * under it, pixels cut by its edges weighted by the part inside (a box filter of the
 * exact size, so a downscale never aliases fine text into moire).
 */
void vt_img_resize_rgb(const uint8_t *src, int sw, int sh, size_t sstride, uint8_t *dst, int dw,
                       int dh);

/* The small version's size for a w x h frame: VT_IMG_SMALL_W wide with the frame's aspect,
 * or the frame's own size when it is no wider. */
void vt_img_small_size(int w, int h, int *sw, int *sh);

#endif
