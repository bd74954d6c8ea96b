/*
 * The small frame images pages show: the area-average RGB scaler (pictures whose
 * downscale is known by hand), the small size and the small file's name.
 */
#include "base/util.h"
#include "harness.h"
#include "media/imgutil.h"
#include "visual/keyframe.h"

#include <stdlib.h>

static void put(uint8_t *img, int w, int x, int y, const uint8_t rgb[3])
{
    memcpy(img + ((size_t)y * w + x) * 3, rgb, 3);
}

VT_TEST(thumbs_checker_averages)
{
    /* a 2x2 checker of flat 3x3 colour squares: at 2x2 each square is its colour, at 1x1
     * the mean of the four */
    static const uint8_t col[4][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {200, 100, 40}};
    uint8_t src[6 * 6 * 3], two[2 * 2 * 3], one[3];

    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 6; x++)
            put(src, 6, x, y, col[(y / 3) * 2 + x / 3]);
    vt_img_resize_rgb(src, 6, 6, 6 * 3, two, 2, 2);
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++)
            CHECK_INT(two[i * 3 + k], col[i][k]);
    vt_img_resize_rgb(src, 6, 6, 6 * 3, one, 1, 1);
    CHECK_INT(one[0], (255 + 0 + 0 + 200 + 2) / 4); /* 113.75 rounds to 114 */
    CHECK_INT(one[1], (0 + 255 + 0 + 100 + 2) / 4); /* 88.75: 89 */
    CHECK_INT(one[2], (0 + 0 + 255 + 40 + 2) / 4);  /* 73.75: 74 */
}

VT_TEST(thumbs_fractional_cover)
{
    /* 3 pixels into 2: each output covers 1.5 inputs, the middle one shared by halves */
    uint8_t src[3 * 3] = {0, 0, 0, 90, 90, 90, 180, 180, 180}, dst[2 * 3];

    vt_img_resize_rgb(src, 3, 1, 9, dst, 2, 1);
    CHECK_INT(dst[0], 30);  /* (0 * 1 + 90 * 0.5) / 1.5 */
    CHECK_INT(dst[3], 150); /* (90 * 0.5 + 180 * 1) / 1.5 */
    /* a row stride wider than the pixels: the padding is never read into the result */
    {
        uint8_t padded[2 * 8] = {10, 20, 30, 50, 60, 70, 255, 255,
                                 10, 20, 30, 50, 60, 70, 255, 255};
        uint8_t o[3];

        vt_img_resize_rgb(padded, 2, 2, 8, o, 1, 1);
        CHECK_INT(o[0], 30);
        CHECK_INT(o[1], 40);
        CHECK_INT(o[2], 50);
    }
}

VT_TEST(thumbs_no_aliasing)
{
    /* one-pixel black and white stripes, 720p into 320x180 (a ratio of 4) and into 300x170
     * (not a whole ratio): an area average is mid grey everywhere, where nearest-neighbour
     * sampling would give solid black or white */
    int w = 1280, h = 720;
    uint8_t *src = malloc((size_t)w * h * 3), *dst = malloc(320 * 180 * 3);
    int lo = 255, hi = 0;

    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            memset(src + ((size_t)y * w + x) * 3, (x & 1) ? 255 : 0, 3);
    vt_img_resize_rgb(src, w, h, (size_t)w * 3, dst, 320, 180);
    for (int i = 0; i < 320 * 180 * 3; i++) {
        lo = dst[i] < lo ? dst[i] : lo;
        hi = dst[i] > hi ? dst[i] : hi;
    }
    CHECK_INT(lo, 128);
    CHECK_INT(hi, 128);
    lo = 255;
    hi = 0;
    vt_img_resize_rgb(src, w, h, (size_t)w * 3, dst, 300, 170);
    for (int i = 0; i < 300 * 170 * 3; i++) {
        lo = dst[i] < lo ? dst[i] : lo;
        hi = dst[i] > hi ? dst[i] : hi;
    }
    /* 4.27 pixels an output: 2 to 2.27 of them white, 119.5 to 135.5 */
    CHECK(lo >= 119 && hi <= 136);
    free(src);
    free(dst);
}

VT_TEST(thumbs_small_size_and_name)
{
    char name[64];
    int w, h;

    vt_img_small_size(1280, 720, &w, &h);
    CHECK_INT(w, 320);
    CHECK_INT(h, 180);
    vt_img_small_size(1080, 1920, &w, &h); /* portrait: the same width, its own aspect */
    CHECK_INT(w, 320);
    CHECK_INT(h, 569);
    vt_img_small_size(200, 100, &w, &h); /* never enlarged */
    CHECK_INT(w, 200);
    CHECK_INT(h, 100);
    CHECK_INT(vt_kf_small_name("frames/abc/r1/12.jpg", name, sizeof(name)), 0);
    CHECK_STR(name, "frames/abc/r1/12.small.jpg");
    CHECK_INT(vt_kf_small_name("frames/abc/r1/12.png", name, sizeof(name)), VT_EINVAL);
    CHECK_INT(vt_kf_small_name(".jp", name, sizeof(name)), VT_EINVAL);
    /* "1.jpg" needs 12 bytes for "1.small.jpg": 11 do not fit */
    CHECK_INT(vt_kf_small_name("1.jpg", name, 11), VT_EINVAL);
    CHECK_INT(vt_kf_small_name("1.jpg", name, 12), 0);
    CHECK_STR(name, "1.small.jpg");
}
