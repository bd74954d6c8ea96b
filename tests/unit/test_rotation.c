/*
 * Rotated sources: the rotation a stream asks for (display matrix, else the old "rotate"
 * tag, whose value is hostile text) and the grey rotation that makes a keyframe's
 * perceptual hash that of the upright picture.
 */
#include "harness.h"
#include "media/imgutil.h"
#include "media/media.h"

#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <stdlib.h>

/*
 * vt_media_rotation of a stream with the tag key=value (NULL: none) and, when matrix_cw is
 * not 999, the display matrix av_display_rotation_set makes for matrix_cw: a clockwise turn
 * by its documentation, which av_display_rotation_get reads back as -matrix_cw
 * counter-clockwise, i.e. the same, and ffmpeg's autorotate turns the picture clockwise by.
 */
static int rotation_of(const char *key, const char *value, int matrix_cw)
{
    AVFormatContext *fmt = avformat_alloc_context();
    AVStream *st = avformat_new_stream(fmt, NULL);
    int r;

    if (key)
        av_dict_set(&st->metadata, key, value, 0);
    if (matrix_cw != 999) {
        uint8_t *m = av_stream_new_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));

        av_display_rotation_set((int32_t *)m, matrix_cw);
    }
    r = vt_media_rotation(st);
    avformat_free_context(fmt);
    return r;
}

VT_TEST(rotation_matrix)
{
    CHECK_INT(rotation_of(NULL, NULL, 999), 0);
    CHECK_INT(rotation_of(NULL, NULL, 0), 0);
    CHECK_INT(rotation_of(NULL, NULL, 90), 90);
    CHECK_INT(rotation_of(NULL, NULL, -90), 270);
    CHECK_INT(rotation_of(NULL, NULL, 180), 180);
    CHECK_INT(rotation_of(NULL, NULL, 88), 90); /* the nearest quarter turn */
    CHECK_INT(rotation_of(NULL, NULL, 630), 270);
    /* the matrix wins over a tag */
    CHECK_INT(rotation_of("rotate", "180", 90), 90);
}

VT_TEST(rotation_old_tag)
{
    CHECK_INT(rotation_of("rotate", "90", 999), 90);
    CHECK_INT(rotation_of("ROTATE", "270", 999), 270); /* Matroska's tag, any case */
    CHECK_INT(rotation_of("rotate", "-90", 999), 270);
    CHECK_INT(rotation_of("rotate", "450", 999), 90);
    CHECK_INT(rotation_of("rotate", "180.0", 999), 180);
    CHECK_INT(rotation_of("rotate", "0", 999), 0);
    /* hostile or meaningless values: no rotation, no overflow */
    CHECK_INT(rotation_of("rotate", "", 999), 0);
    CHECK_INT(rotation_of("rotate", "90deg", 999), 0);
    CHECK_INT(rotation_of("rotate", "abc", 999), 0);
    CHECK_INT(rotation_of("rotate", "nan", 999), 0);
    CHECK_INT(rotation_of("rotate", "inf", 999), 0);
    CHECK_INT(rotation_of("rotate", "-1e308", 999) % 90, 0);
    CHECK_INT(rotation_of("rotate", "99999999999999999999999", 999) % 90, 0);
}

VT_TEST(rotation_grey)
{
    /* 3x2, value = index: clockwise 90 puts the bottom-left on top, 270 the top-right */
    const uint8_t src[6] = {0, 1, 2, 3, 4, 5};
    uint8_t *r;
    int w, h;

    r = vt_img_rotate_grey(src, 3, 2, 3, 90, &w, &h);
    CHECK_INT(w, 2);
    CHECK_INT(h, 3);
    CHECK_INT(r[0], 3);
    CHECK_INT(r[1], 0);
    CHECK_INT(r[5], 2);
    free(r);
    r = vt_img_rotate_grey(src, 3, 2, 3, 270, &w, &h);
    CHECK_INT(r[0], 2);
    CHECK_INT(r[1], 5);
    free(r);
    r = vt_img_rotate_grey(src, 3, 2, 3, 180, &w, &h);
    CHECK_INT(w, 3);
    CHECK_INT(r[0], 5);
    free(r);
}

VT_TEST(rotation_phash_upright)
{
    /* a picture's hash, and the hash of it stored a quarter turn anticlockwise and turned
     * back: the same */
    uint8_t img[32 * 32], *stored, *back;
    int w, h;

    for (int y = 0; y < 32; y++)
        for (int x = 0; x < 32; x++)
            img[y * 32 + x] = (uint8_t)((x < 8 ? 200 : 40) + (y > 20 ? 30 : 0) + x);
    stored = vt_img_rotate_grey(img, 32, 32, 32, 270, &w, &h);
    back = vt_img_rotate_grey(stored, 32, 32, 32, 90, &w, &h);
    CHECK(vt_img_phash64(stored) != vt_img_phash64(img));
    CHECK(vt_img_phash64(back) == vt_img_phash64(img));
    free(stored);
    free(back);
}
