/*
 * libFuzzer target for the JPEG loader (imgload.h): any bytes are decoded at full size and
 * at a reduced DCT scale; libjpeg's fatal errors must come back as an error, never an
 * exit, and a picture must fill exactly the buffer it reports.
 *
 * fuzz-sources: lib/media/imgload.c lib/base/util.c
 * fuzz-pkgs: libjpeg jansson sqlite3
 */
#include "media/imgload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vt_image_buf b;
    char err[256];
    if (vt_image_decode_jpeg(data, size, &b, err, sizeof(err)) == 0) {
        volatile uint8_t sink = b.rgb[(size_t)(b.height - 1) * b.stride + b.stride - 1];
        (void)sink;
        vt_image_buf_release(&b);
    }
    if (vt_image_decode_jpeg_min(data, size, 16, 16, &b, err, sizeof(err)) == 0)
        vt_image_buf_release(&b);
    return 0;
}
