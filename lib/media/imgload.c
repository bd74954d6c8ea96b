/*
 * JPEG decoding for imgload.h with libjpeg-turbo. libjpeg reports fatal errors through
 * error_exit, which by default prints and calls exit(); here it longjmps back to the
 * decoder with the library's message, so a broken file costs one error line. Warnings
 * (a truncated file libjpeg pads with grey) are accepted, as every viewer does. A
 * progress monitor bounds the scans of a progressive file, so none decodes for minutes.
 */
#include "media/imgload.h"

#include "base/util.h"
#include "vidtheque.h"

#include <setjmp.h>
/* jpeglib.h needs FILE from stdio.h first */
/* clang-format off */
#include <stdio.h>
#include <jpeglib.h>
/* clang-format on */
#include <stdlib.h>
#include <string.h>

struct jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
};

static void on_error(j_common_ptr c)
{
    struct jerr *j = (struct jerr *)c->err;
    c->err->format_message(c, j->msg);
    longjmp(j->jump, 1);
}

/* A progressive JPEG of thousands of tiny scans decodes for minutes: stop at 500, as
 * libjpeg-turbo's own tools do. */
#define MAX_SCANS 500

static void on_progress(j_common_ptr c)
{
    struct jerr *j = (struct jerr *)c->err;
    if (c->is_decompressor && ((j_decompress_ptr)c)->input_scan_number > MAX_SCANS) {
        snprintf(j->msg, sizeof(j->msg), "more than %d scans", MAX_SCANS);
        longjmp(j->jump, 1);
    }
}

static void on_message(j_common_ptr c)
{
    (void)c; /* warnings are not printed: the library never writes to stderr */
}

void vt_image_buf_release(struct vt_image_buf *b)
{
    if (!b)
        return;
    free(b->rgb);
    memset(b, 0, sizeof(*b));
}

int vt_image_decode_jpeg(const uint8_t *data, size_t len, struct vt_image_buf *out, char *err,
                         size_t errlen)
{
    return vt_image_decode_jpeg_min(data, len, 0, 0, out, err, errlen);
}

int vt_image_decode_jpeg_min(const uint8_t *data, size_t len, int min_w, int min_h,
                             struct vt_image_buf *out, char *err, size_t errlen)
{
    struct jpeg_decompress_struct c;
    struct jerr j;
    struct jpeg_progress_mgr progress = {.progress_monitor = on_progress};
    uint8_t *volatile rgb = NULL;
    volatile int rc = 0;

    memset(out, 0, sizeof(*out));
    if (len < 4 || len > VT_IMAGE_MAX_FILE)
        return vt_err(err, errlen, VT_EMEDIA, "jpeg: %zu bytes is not a JPEG file", len);
    memset(&c, 0, sizeof(c));
    c.err = jpeg_std_error(&j.pub);
    j.pub.error_exit = on_error;
    j.pub.output_message = on_message;
    if (setjmp(j.jump)) {
        rc = vt_err(err, errlen, VT_EMEDIA, "jpeg: %s", j.msg);
        goto out;
    }
    jpeg_create_decompress(&c);
    /* a progressive file keeps every coefficient of the picture in memory: past this,
     * libjpeg would need a backing store, which it has not, and fails cleanly */
    c.mem->max_memory_to_use = VT_IMAGE_MAX_WORK;
    c.progress = &progress;
    jpeg_mem_src(&c, data, (unsigned long)len);
    jpeg_read_header(&c, TRUE);
    if (c.image_width == 0 || c.image_height == 0 || c.image_width > VT_IMAGE_MAX_SIDE ||
        c.image_height > VT_IMAGE_MAX_SIDE) {
        rc = vt_err(err, errlen, VT_EINVAL, "jpeg: %ux%u pixels (limit %dx%d)",
                    (unsigned)c.image_width, (unsigned)c.image_height, VT_IMAGE_MAX_SIDE,
                    VT_IMAGE_MAX_SIDE);
        goto out;
    }
    if (c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK) {
        rc = vt_err(err, errlen, VT_EMEDIA, "jpeg: CMYK pictures are not supported");
        goto out;
    }
    c.out_color_space = JCS_RGB;
    if (min_w > 0 && min_h > 0) {
        unsigned d = 8;
        while (d > 1 && ((c.image_width + d - 1) / d < (unsigned)min_w ||
                         (c.image_height + d - 1) / d < (unsigned)min_h))
            d /= 2;
        c.scale_num = 1;
        c.scale_denom = d;
    }
    jpeg_start_decompress(&c);
    if (c.output_components != 3) {
        rc = vt_err(err, errlen, VT_EMEDIA, "jpeg: %d components after conversion to RGB",
                    c.output_components);
        goto out;
    }
    size_t stride = (size_t)c.output_width * 3;
    if (stride * c.output_height > VT_IMAGE_MAX_PIXEL_BYTES) {
        rc = vt_err(err, errlen, VT_EINVAL, "jpeg: %ux%u pixels decoded are more than %u MiB",
                    (unsigned)c.output_width, (unsigned)c.output_height,
                    (unsigned)(VT_IMAGE_MAX_PIXEL_BYTES >> 20));
        goto out;
    }
    rgb = vt_xmalloc(stride * c.output_height);
    while (c.output_scanline < c.output_height) {
        JSAMPROW row = rgb + (size_t)c.output_scanline * stride;
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    out->rgb = rgb;
    out->width = (int)c.output_width;
    out->height = (int)c.output_height;
    out->stride = stride;
    rgb = NULL;
out:
    jpeg_destroy_decompress(&c);
    free(rgb);
    return rc;
}

int vt_image_load_jpeg(const char *path, struct vt_image_buf *out, char *err, size_t errlen)
{
    return vt_image_load_jpeg_min(path, 0, 0, out, err, errlen);
}

int vt_image_load_jpeg_min(const char *path, int min_w, int min_h, struct vt_image_buf *out,
                           char *err, size_t errlen)
{
    char *data;
    size_t len;
    char sub[256];
    memset(out, 0, sizeof(*out));
    int rc = vt_read_file_capped(path, "JPEG file", VT_IMAGE_MAX_FILE, &data, &len, err, errlen);
    if (rc)
        return rc;
    rc = vt_image_decode_jpeg_min((const uint8_t *)data, len, min_w, min_h, out, sub, sizeof(sub));
    if (rc)
        vt_err(err, errlen, rc, "'%s': %s", path, sub);
    free(data);
    return rc;
}
