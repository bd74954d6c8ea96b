/*
 * Reading pictures back from disk: the JPEG files the keyframe stage stores, decoded
 * with libjpeg-turbo into 8-bit RGB for the image-embedding backends (embed.h). A
 * JPEG file is hostile input: decoding errors become one message, never an exit, and
 * pictures larger than VT_IMAGE_MAX_SIDE on a side are refused before any pixel memory
 * is taken.
 */
#ifndef VT_IMGLOAD_H
#define VT_IMGLOAD_H

#include <stddef.h>
#include <stdint.h>

#define VT_IMAGE_MAX_SIDE 8192
/* Largest JPEG file read (bytes). */
#define VT_IMAGE_MAX_FILE (64u << 20)
/* At most this much decoded RGB (8K UHD fits), and this much of libjpeg's own working
 * memory (a progressive 4K picture needs some 25 MB). */
#define VT_IMAGE_MAX_PIXEL_BYTES (100u << 20)
#define VT_IMAGE_MAX_WORK        (128L << 20)

/* A decoded picture that owns its pixels: row y starts at rgb + y * stride. */
struct vt_image_buf {
    uint8_t *rgb;
    int width, height;
    size_t stride;
};

/*
 * Decode the JPEG file path into out (free with vt_image_buf_release). 0, or VT_ENOTFOUND
 * / VT_EIO when the file cannot be read, VT_EMEDIA when it is not a JPEG that decodes,
 * VT_EINVAL when it is larger than VT_IMAGE_MAX_SIDE; one line in err.
 */
int vt_image_load_jpeg(const char *path, struct vt_image_buf *out, char *err, size_t errlen);
/* The same from memory (data borrowed for the call). */
int vt_image_decode_jpeg(const uint8_t *data, size_t len, struct vt_image_buf *out, char *err,
                         size_t errlen);
/*
 * Decode at a reduced size when the picture is much larger than needed: libjpeg's DCT
 * scaling by 1/2, 1/4 or 1/8, the smallest that still leaves at least min_w x min_h pixels
 * (a model input of 224x224 from a 1280x720 frame decodes at 1/2, about 3 times faster).
 * min_w or min_h <= 0 means full size.
 */
int vt_image_load_jpeg_min(const char *path, int min_w, int min_h, struct vt_image_buf *out,
                           char *err, size_t errlen);
int vt_image_decode_jpeg_min(const uint8_t *data, size_t len, int min_w, int min_h,
                             struct vt_image_buf *out, char *err, size_t errlen);
/* Free the pixels and clear the struct; NULL and cleared structs are fine. */
void vt_image_buf_release(struct vt_image_buf *b);

#endif
