/*
 * Unit tests of the keyframe stage's pure parts: shot detection on synthetic feature
 * sequences (a cut, a fade through black, a dissolve, a noisy shot without cuts, a
 * slide change on the same background) and the image helpers (Laplacian variance,
 * perceptual hash, rotation, JPEG writing).
 */
#include "base/util.h"
#include "harness.h"
#include "media/imgutil.h"
#include "visual/shotdetect.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FPS 15.0

/* n quiet frames of a static picture: tiny compression noise only. */
static struct vt_sd_feat *quiet(size_t n)
{
    struct vt_sd_feat *f = vt_xcalloc(n, sizeof(*f));

    for (size_t i = 0; i < n; i++) {
        f[i].t_s = i / FPS;
        f[i].mean = 120;
        f[i].stddev = 40;
        f[i].sharpness = 500 + (i % 7);
        f[i].d1 = i ? 0.05f + 0.02f * (i % 3) : 0;
        f[i].dlong = 0.1f;
        f[i].key = i % 60 == 0;
    }
    return f;
}

static size_t detect(const struct vt_sd_feat *f, size_t n, struct vt_sd_shot **s)
{
    return vt_sd_detect(f, n, s);
}

/* Checks that the detector finds exactly one boundary, a hard cut at frame at. */
static void check_one_cut(const struct vt_sd_feat *f, size_t n, size_t at)
{
    struct vt_sd_shot *s = NULL;
    size_t found = detect(f, n, &s);

    CHECK_INT(found, 2);
    if (found == 2) {
        CHECK_INT(s[1].first, at);
        CHECK_INT(s[1].kind, VT_SD_CUT);
    }
    free(s);
}

VT_TEST(shotdetect_cut)
{
    struct vt_sd_feat *f = quiet(120);
    struct vt_sd_shot *s = NULL;
    size_t n;

    f[50].d1 = 40;
    f[50].changed = 0.6f;
    for (size_t i = 50; i < 65; i++)
        f[i].dlong = 40;
    n = detect(f, 120, &s);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_INT(s[1].first, 50);
        CHECK_INT(s[1].kind, VT_SD_CUT);
        CHECK(s[0].chosen <= 49 && s[1].chosen >= 50);
    }
    free(s);
    free(f);
}

VT_TEST(shotdetect_noise_no_cut)
{
    struct vt_sd_feat *f = quiet(300);
    struct vt_sd_shot *s = NULL;
    unsigned r = 7;

    /* a moving noisy shot: large differences, but no spike above its own level */
    for (size_t i = 1; i < 300; i++) {
        r = r * 1103515245u + 12345u;
        f[i].d1 = 14 + (float)(r >> 16 & 1023) / 256.0f;
        f[i].changed = 0.3f + (float)(r >> 8 & 255) / 2560.0f;
        f[i].dlong = 18;
        f[i].sharpness = 3000 + (float)(r & 255);
    }
    CHECK_INT(detect(f, 300, &s), 1);
    free(s);
    free(f);
}

VT_TEST(shotdetect_slide_change)
{
    struct vt_sd_feat *f = quiet(120);

    /* same background, new text: few pixels change, over a near-zero baseline */
    f[70].d1 = 1.2f;
    f[70].changed = 0.03f;
    check_one_cut(f, 120, 70);
    free(f);
}

/*
 * Two slides on one ground (line grid 200) mixed over frames [50, 57] (0.53 s): A's title
 * in rows 4-5 and items in rows 8-16, B's badge in rows 8-16 and title in rows 20-21;
 * what moves inside the mix (a badge travelling) makes every step as large as the net
 * change. With fade_in, B is A's own type darkened (a card fading in), not replaced.
 */
static struct vt_sd_feat *slide_mix(size_t n, int fade_in)
{
    struct vt_sd_feat *f = quiet(n);

    for (size_t i = 0; i < n; i++) {
        double k = i < 50 ? 0 : i > 57 ? 1 : (double)(i - 49) / 9.0;

        for (int c = 0; c < VT_SD_LINE; c++) {
            int r = c / VT_SD_LINE_W, x = c % VT_SD_LINE_W;
            int in_a =
                (r >= 4 && r <= 5 && x >= 1 && x <= 5) || (r >= 8 && r <= 16 && x >= 1 && x <= 4);
            int in_b = fade_in ? in_a
                               : (r >= 8 && r <= 16 && x >= 6 && x <= 9) ||
                                     (r >= 20 && r <= 21 && x >= 5 && x <= 10);
            double va = in_a ? (fade_in ? 185 : 150) : 200, vb = in_b ? 150 : 200;

            f[i].line[c] = (uint8_t)(va + k * (vb - va));
        }
        if (i >= 50 && i <= 57)
            f[i].d1 = 2.5f + 0.3f * (float)(i % 2);
    }
    return f;
}

VT_TEST(shotdetect_slides_mixed)
{
    struct vt_sd_feat *f = slide_mix(150, 0);
    struct vt_sd_shot *s = NULL;
    size_t n = detect(f, 150, &s);

    /* one boundary, a dissolve inside the mix */
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_INT(s[1].kind, VT_SD_DISSOLVE);
        CHECK(s[1].first >= 50 && s[1].first <= 57);
    }
    free(s);
    free(f);
    /* the same mix where the first line only darkens (a card fading in): none */
    f = slide_mix(150, 1);
    CHECK_INT(detect(f, 150, &s), 1);
    free(s);
    free(f);
}

VT_TEST(shotdetect_fade)
{
    struct vt_sd_feat *f = quiet(150);
    struct vt_sd_shot *s = NULL;
    size_t n;

    /* fade out over 10 frames, 4 black, fade in over 10 */
    for (size_t i = 60; i < 84; i++) {
        double m = i < 70 ? 120 - (i - 59) * 10.5 : i < 74 ? 16 : 16 + (i - 73) * 10.4;

        f[i].mean = (float)m;
        f[i].stddev = (float)(i >= 70 && i < 74 ? 1 : m / 3);
        f[i].d1 = 10;
        f[i].sharpness = (float)m;
    }
    n = detect(f, 150, &s);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK(s[1].first >= 70 && s[1].first <= 73);
        CHECK_INT(s[1].kind, VT_SD_FADE);
        CHECK(s[0].chosen < 60 && s[1].chosen >= 84);
    }
    free(s);
    free(f);
}

/*
 * A dip to white over frames 60-83 of a shot of side_sd's contrast: a fade-out over the
 * last ramp of its 10 frames (10: steps of 11.5 levels; 1: a jump), 4 white frames (mean
 * 240), a fade-in as long.
 */
static void white_dip(struct vt_sd_feat *f, size_t ramp, float side_sd)
{
    for (size_t i = 0; i < 150; i++)
        f[i].stddev = side_sd;
    for (size_t i = 60; i < 84; i++) {
        /* frames into the fade-out, or left of the fade-in; 0 for the white ones */
        size_t k = i < 70 ? i - 59 : i >= 74 ? 84 - i : 0;
        double m = !k ? 240 : k > 10 - ramp ? 120 + (double)(k - (10 - ramp)) * 115.0 / ramp : 120;

        f[i].mean = (float)m;
        f[i].stddev = (float)(m >= 235 ? 1 : side_sd * (255 - m) / 135);
        f[i].d1 = 10;
        f[i].sharpness = (float)(255 - m);
    }
}

VT_TEST(shotdetect_dip_to_white)
{
    /* a picture on each side, ramps of 10 frames: a fade through white (riot footage);
     * a flat picture on each side (PySceneDetect's fades.mp4), or a jump to white and back
     * (a flash held): none */
    static const struct {
        size_t ramp;
        float side_sd;
        int fade;
    } cases[] = {{10, 40, 1}, {10, 2, 0}, {1, 40, 0}};

    for (size_t k = 0; k < VT_ARRAY_LEN(cases); k++) {
        struct vt_sd_feat *f = quiet(150);
        struct vt_sd_shot *s = NULL;
        size_t n, fades = 0;

        white_dip(f, cases[k].ramp, cases[k].side_sd);
        n = detect(f, 150, &s);
        for (size_t i = 1; i < n; i++)
            fades += s[i].kind == VT_SD_FADE;
        CHECK_INT(fades, (size_t)cases[k].fade);
        if (cases[k].fade) {
            CHECK_INT(n, 2);
            CHECK(n == 2 && s[1].first >= 70 && s[1].first <= 73);
            CHECK(n == 2 && s[0].chosen < 60 && s[1].chosen >= 84);
        }
        free(s);
        free(f);
    }
}

VT_TEST(shotdetect_fade_at_start_is_no_boundary)
{
    struct vt_sd_feat *f = quiet(100);
    struct vt_sd_shot *s = NULL;

    for (size_t i = 0; i < 5; i++) {
        f[i].mean = 16;
        f[i].stddev = 1;
    }
    CHECK_INT(detect(f, 100, &s), 1);
    free(s);
    free(f);
}

/*
 * A deck on a near-black ground (presenterm's): its title slide, a few words, is flat enough
 * to pass for black (mean 20.7, deviation 8.5), and the next slide on that ground (mean 21.3)
 * follows it in one step of 0.6 levels. No fade moves the luma so little: a cut, where the
 * opening black's fade-in had swallowed it.
 */
VT_TEST(shotdetect_dark_title_slide_cut)
{
    struct vt_sd_feat *f = quiet(120);

    for (size_t i = 0; i < 120; i++) {
        f[i].mean = i < 70 ? 20.7f : 21.3f;
        f[i].stddev = i < 70 ? 8.5f : 10.6f;
    }
    f[70].d1 = 2.9f;
    f[70].changed = 0.036f;
    check_one_cut(f, 120, 70);
    free(f);
}

/* Two coarse pictures: a left-to-right ramp and a brighter checker, to mix. */
static double pic(int which, int k)
{
    return which ? 60 + (k % 2) * 120 + k % 5 : 30 + 2.5 * k;
}

/*
 * Frames [0, n) showing picture 0, then a linear mix to picture 1 over frames
 * [d0, d1), then picture 1; jitter > 0 adds that much motion to every cell of every
 * frame (and to the thumbnail's frame difference, as a moving shot has).
 */
static void mix_grid(struct vt_sd_feat *f, size_t n, size_t d0, size_t d1, int jitter)
{
    unsigned r = 11;

    for (size_t i = 0; i < n; i++) {
        double al = i < d0 ? 0 : i >= d1 ? 1 : (double)(i - d0 + 1) / (double)(d1 - d0 + 1);

        for (int k = 0; k < VT_SD_GRID; k++) {
            double v = (1 - al) * pic(0, k) + al * pic(1, k);

            r = r * 1103515245u + 12345u;
            if (jitter)
                v += (double)((int)(r >> 16 & 255) % (2 * jitter + 1) - jitter);
            f[i].grid[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
        if (i && jitter)
            f[i].d1 = 12 + (float)(r >> 8 & 7);
        else if (i && i >= d0 && i <= d1)
            f[i].d1 = 3.5f;
    }
}

VT_TEST(shotdetect_dissolve)
{
    struct vt_sd_feat *f = quiet(150);
    struct vt_sd_shot *s = NULL;
    size_t n;

    /* a 0.8 s dissolve between two stills: frames 60-71 mixed */
    mix_grid(f, 150, 60, 72, 0);
    n = detect(f, 150, &s);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK(s[1].first >= 63 && s[1].first <= 69);
        CHECK_INT(s[1].kind, VT_SD_DISSOLVE);
        /* the span holds the mixed frames, give or take one */
        CHECK(s[1].span0 >= 59 && s[1].span0 <= 61);
        CHECK(s[1].span1 >= 70 && s[1].span1 <= 72);
        CHECK(s[0].chosen < 60 && s[1].chosen > 72);
        CHECK(s[0].stable_last < 60 && s[1].stable_first > 71);
    }
    free(s);
    free(f);
}

VT_TEST(shotdetect_mix_with_jumps)
{
    /* a 1.3 s mix of the grid (frames 60-79, 20 steps); in case 1, 3 % of the pixels jump
     * by more than VT_SD_CHANGED_THR a step inside it while the frames around hold still,
     * which no mix that long does (a subject moving: Apollo 15's television): no boundary;
     * in case 2 they jump before and after it as well, which this rule leaves alone */
    for (int c = 0; c < 3; c++) {
        struct vt_sd_feat *f = quiet(150);
        struct vt_sd_shot *s = NULL;
        size_t n;

        mix_grid(f, 150, 60, 80, 0);
        for (size_t i = 1; c && i < 150; i++)
            f[i].changed = i >= 61 && i <= 80 ? 0.03f : c == 2 ? 0.03f : 0.0005f;
        n = detect(f, 150, &s);
        CHECK_INT(n, c == 1 ? 1 : 2);
        if (n == 2)
            CHECK_INT(s[1].kind, VT_SD_DISSOLVE);
        free(s);
        free(f);
    }
}

VT_TEST(shotdetect_dissolve_moving)
{
    struct vt_sd_feat *f = quiet(200);
    struct vt_sd_shot *s = NULL;
    size_t n;

    /* both shots move (every cell jitters, large thumbnail differences); 1.3 s mix,
     * whose contrast dips as a mix of two unrelated pictures' does (to 71 % half-way) */
    mix_grid(f, 200, 80, 100, 3);
    for (size_t i = 80; i < 100; i++) {
        double al = (double)(i - 80 + 1) / 21;

        f[i].stddev = (float)(40 * sqrt(al * al + (1 - al) * (1 - al)));
    }
    n = detect(f, 200, &s);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK(s[1].first >= 84 && s[1].first <= 96);
        CHECK_INT(s[1].kind, VT_SD_DISSOLVE);
        CHECK(s[1].span0 >= 76 && s[1].span0 <= 84);
        CHECK(s[1].span1 >= 96 && s[1].span1 <= 104);
    }
    free(s);
    /* the same cells with the contrast kept: the camera sped up over one picture (a pan,
     * a zoom), no mix of two */
    for (size_t i = 0; i < 200; i++)
        f[i].stddev = 40;
    CHECK_INT(detect(f, 200, &s), 1);
    free(s);
    free(f);
}

VT_TEST(shotdetect_moving_no_boundary)
{
    struct vt_sd_feat *f = quiet(300);
    struct vt_sd_shot *s = NULL;

    /* motion alone: the cells jitter, the thumbnail differs a lot frame to frame */
    mix_grid(f, 300, 1000, 1000, 4);
    CHECK_INT(detect(f, 300, &s), 1);
    free(s);
    free(f);
}

VT_TEST(shotdetect_pan_no_dissolve)
{
    struct vt_sd_feat *f = quiet(300);
    struct vt_sd_shot *s = NULL;

    /* a pan: every cell changes at a steady rate for 20 s, linear like a dissolve but
     * as fast before and after any window */
    for (size_t i = 0; i < 300; i++) {
        for (int k = 0; k < VT_SD_GRID; k++)
            f[i].grid[k] = (uint8_t)(20 + k + i * (1 + k % 3) / 8);
        f[i].d1 = i ? 6 : 0;
    }
    CHECK_INT(detect(f, 300, &s), 1);
    free(s);
    free(f);
}

VT_TEST(shotdetect_dissolve_both_moving_contrast_dip)
{
    struct vt_sd_feat *f = quiet(240);
    struct vt_sd_shot *s = NULL;
    size_t n;

    /* two shots whose cells all move a lot (two pans: the grid's mix is no mix), a
     * 2 s dissolve between them: the contrast dips to 60 % in its middle and comes
     * back, the mean luma stays */
    mix_grid(f, 240, 1000, 1000, 20);
    for (size_t i = 0; i < 240; i++) {
        double x = ((double)i - 120) / 15; /* -1..1 over frames 105-135 */

        f[i].stddev = (float)(fabs(x) >= 1 ? 60 : 60 * (0.6 + 0.4 * x * x));
    }
    n = detect(f, 240, &s);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK(s[1].first >= 110 && s[1].first <= 130);
        CHECK_INT(s[1].kind, VT_SD_DISSOLVE);
        CHECK(s[0].chosen < 105 && s[1].chosen > 135);
    }
    /* the same motion without the dip: nothing */
    for (size_t i = 0; i < 240; i++)
        f[i].stddev = 60;
    free(s);
    CHECK_INT(detect(f, 240, &s), 1);
    free(s);
    free(f);
}

VT_TEST(shotdetect_cut_into_fine_motion)
{
    struct vt_sd_feat *f = quiet(150);

    /* a slide, then a shot whose pixels all change every frame (a cellular automaton)
     * while its coarse cells stay nearly still: the cut's thumbnail difference is no
     * spike over the moving side, the coarse grid's is */
    mix_grid(f, 150, 1000, 1000, 0);
    for (size_t i = 70; i < 150; i++) {
        for (int k = 0; k < VT_SD_GRID; k++)
            f[i].grid[k] = (uint8_t)(pic(1, k) + (i % 2));
        f[i].d1 = i == 70 ? 90 : 75 + (float)(i % 3);
        f[i].changed = 0.8f;
    }
    check_one_cut(f, 150, 70);
    free(f);
}

VT_TEST(shotdetect_cut_into_busy_cells)
{
    struct vt_sd_feat *f = quiet(150);
    unsigned r = 5;

    /* an automaton whose cells stand still, then a zoom whose whole picture changes
     * every frame (mandelbrot's first seconds): its steps on the grid are nearly the
     * cut's, so the cut is no spike over both sides, only over the still one */
    mix_grid(f, 150, 1000, 1000, 0);
    for (size_t i = 0; i < 150; i++) {
        f[i].d1 = i ? 70 + (float)(i % 3) : 0;
        f[i].changed = 0.7f;
        for (int k = 0; k < VT_SD_GRID && i >= 70; k++) {
            r = r * 1103515245u + 12345u;
            f[i].grid[k] = (uint8_t)(128 + (int)(r >> 16 & 63) - 32);
        }
    }
    check_one_cut(f, 150, 70);
    free(f);
}

VT_TEST(shotdetect_flash_no_cut)
{
    struct vt_sd_feat *f = quiet(150);

    /* a white frame (a muzzle flash, a strobe) at 40 and two at 70-71 over one shot,
     * then a real cut at 110: the flashes spike every difference as the cut does, but
     * the picture before them comes back at once */
    mix_grid(f, 150, 110, 110, 0);
    for (size_t i = 40; i < 150; i += i == 40 ? 30 : 1) {
        if (i == 72)
            i = 110;
        for (int k = 0; k < VT_SD_GRID && i != 110; k++)
            f[i].grid[k] = (uint8_t)(k < VT_SD_GRID_W * VT_SD_GRID_H ? 240 : 128);
        f[i].d1 = f[i + 1].d1 = 60;
        f[i].changed = f[i + 1].changed = 0.9f;
        if (i == 110)
            break;
    }
    f[111].d1 = 0.05f;
    f[111].changed = 0;
    check_one_cut(f, 150, 110);
    free(f);
}

/* Frames [c0, c1) covered by something flat and dark but not black (a wing or a back
 * over the lens): every luma cell at 50, no contrast; the jumps in and out spike. */
static void cover(struct vt_sd_feat *f, size_t c0, size_t c1)
{
    for (size_t i = c0; i < c1; i++) {
        for (int k = 0; k < VT_SD_GRID; k++)
            f[i].grid[k] = (uint8_t)(k < VT_SD_GRID_W * VT_SD_GRID_H ? 50 : 128);
        f[i].mean = 50;
        f[i].stddev = 2;
        f[i].d1 = 0.05f;
        f[i].changed = 0;
    }
    f[c0].d1 = f[c1].d1 = 60;
    f[c0].changed = f[c1].changed = 0.9f;
}

VT_TEST(shotdetect_cover_no_cut)
{
    struct vt_sd_feat *f = quiet(150);

    /* a cover of 0.53 s at 40-47, too long for a flash, and the picture before it comes
     * back; then a real cut at 120 */
    mix_grid(f, 150, 120, 120, 0);
    f[120].d1 = 60;
    f[120].changed = 0.9f;
    cover(f, 40, 48);
    check_one_cut(f, 150, 120);
    free(f);
}

VT_TEST(shotdetect_cover_new_picture)
{
    struct vt_sd_feat *f = quiet(150);
    struct vt_sd_shot *s = NULL;
    size_t n;

    /* the same cover, but another picture comes out from under it: a change of shot */
    mix_grid(f, 150, 48, 48, 0);
    cover(f, 40, 48);
    n = detect(f, 150, &s);
    CHECK(n >= 2);
    if (n >= 2)
        CHECK(s[1].first >= 39 && s[n - 1].first <= 49);
    free(s);
    free(f);
}

/* Frames [0, n) of picture 0, with the luma cells of rows [r0, r1) brightened by up to
 * add over frames [d0, d1) (a title fading in), each mixed frame's difference d. */
static void title_grid(struct vt_sd_feat *f, size_t n, int r0, int r1, size_t d0, size_t d1,
                       int add, float d)
{
    mix_grid(f, n, n, n, 0);
    for (size_t i = d0; i < n; i++) {
        double al = i >= d1 ? 1 : (double)(i - d0 + 1) / (double)(d1 - d0);

        for (int k = r0 * VT_SD_GRID_W; k < r1 * VT_SD_GRID_W; k++)
            f[i].grid[k] = (uint8_t)(f[i].grid[k] + (int)(al * add));
        if (i < d1) {
            f[i].d1 = d;
            f[i].changed = 0.02f;
        }
    }
}

VT_TEST(shotdetect_title_fade_no_boundary)
{
    struct vt_sd_feat *f = quiet(150);
    struct vt_sd_shot *s = NULL;

    /* a title fades in over rows 2-3 of a still in 0.6 s: a mix, as a dissolve is, but
     * two thirds of the grid stay and the cells it covers all brighten */
    title_grid(f, 150, 2, 4, 60, 69, 50, 2.5f);
    f[64].d1 = 6; /* one uneven step, as skipped B-frames give */
    f[64].changed = 0.05f;
    CHECK_INT(detect(f, 150, &s), 1);
    free(s);
    /* the same cells changed at once: a line added (a slide's next bullet) */
    free(f);
    f = quiet(150);
    title_grid(f, 150, 2, 4, 60, 61, 50, 8);
    CHECK_INT(detect(f, 150, &s), 1);
    free(s);
    /* ... and the title's row too, as far from them: a cut between two slides on one
     * template, which change their title and their lines */
    for (size_t i = 60; i < 150; i++)
        for (int k = 0; k < VT_SD_GRID_W; k++)
            f[i].grid[k] = (uint8_t)(f[i].grid[k] + 30);
    check_one_cut(f, 150, 60);
    free(f);
}

/* A smooth picture seen from sx cells to the right (its chroma with chroma, colour c). */
static void view_grid(struct vt_sd_feat *f, double sx, int c)
{
    const int nl = VT_SD_GRID_W * VT_SD_GRID_H;

    for (int k = 0; k < nl; k++) {
        double x = k % VT_SD_GRID_W + sx, y = k / VT_SD_GRID_W;

        f->grid[k] = (uint8_t)(110 + 70 * sin(0.9 * x) + 40 * cos(1.1 * y));
    }
    for (int k = nl; k < VT_SD_GRID; k++) {
        double x = k % VT_SD_CGRID_W + sx / 2;

        f->grid[k] = (uint8_t)(128 + c + 30 * sin(1.8 * x + k / VT_SD_CGRID_W));
    }
}

VT_TEST(shotdetect_subject_motion_no_cut)
{
    struct vt_sd_feat *f = quiet(150);
    struct vt_sd_shot *s = NULL;

    /* a bird flaps in nine cells of a still background for 2 s and throws itself out of
     * frame at 65, leaving cells brighter and darker: as large a spike as a cut's, but
     * the rest of the picture stays */
    mix_grid(f, 150, 150, 150, 0);
    for (size_t i = 50; i < 150; i++) {
        int flap = i < 80 ? (int)(i % 3) : 0;

        for (int r = 1; r < 4; r++)
            for (int c = 2; c < 5; c++)
                f[i].grid[r * VT_SD_GRID_W + c] = (uint8_t)(i < 65        ? 40 + 30 * flap
                                                            : (r + c) % 2 ? 220 - 10 * flap
                                                                          : 5);
        if (i < 80) {
            f[i].d1 = i == 65 ? 25 : 3;
            f[i].changed = i == 65 ? 0.3f : 0.04f;
        }
    }
    CHECK_INT(detect(f, 150, &s), 1);
    free(s);
    /* the same spike into another picture: a cut, however much the shot moved before */
    for (size_t i = 65; i < 150; i++)
        for (int k = 0; k < VT_SD_GRID; k++)
            f[i].grid[k] = (uint8_t)(255 - f[i].grid[k]);
    f[65].d1 = 60;
    f[65].changed = 0.8f;
    check_one_cut(f, 150, 65);
    free(f);
}

VT_TEST(shotdetect_whip_pan_no_cut)
{
    struct vt_sd_feat *f = quiet(150);
    struct vt_sd_shot *s = NULL;
    size_t n;

    /* the camera jumps a cell and a half to the right between two frames (a whip pan,
     * a shaken camera), moving just before and after: every difference spikes as at a
     * cut, but moved back by as much, the picture after is the one before, colours and
     * all */
    for (size_t i = 0; i < 150; i++)
        view_grid(&f[i], i < 60 ? 0 : 1.5, 0);
    f[60].d1 = 30;
    f[60].changed = 0.5f;
    f[59].d1 = f[61].d1 = 4;
    CHECK_INT(detect(f, 150, &s), 1);
    free(s);
    /* the same jump between two pictures that hold still on both sides is a cut (a line
     * of text moved down a blank slide fits the grid moved by two cells) */
    f[59].d1 = f[61].d1 = 0;
    n = detect(f, 150, &s);
    CHECK_INT(n, 2);
    free(s);
    f[59].d1 = f[61].d1 = 4;
    CHECK_INT(detect(f, 150, &s), 1);
    free(s);
    /* the same jump with other colours: a cut to another shot of a like pattern */
    for (size_t i = 60; i < 150; i++)
        view_grid(&f[i], 1.5, 60);
    check_one_cut(f, 150, 60);
    free(f);
}

/*
 * A still picture changing its text over frames [d0, d1), each frame by step on the
 * thumbnail. As a mix (pointer 0), every pixel moves one way, so the long-range
 * difference (15 frames back) is the steps between; a pointer's path leaves the picture
 * as it was, but for the pointer drawn in two places.
 */
static void still_steps(struct vt_sd_feat *f, size_t n, size_t d0, size_t d1, float step,
                        int pointer)
{
    for (size_t i = 0; i < n; i++) {
        size_t lag = i >= (size_t)FPS ? i - (size_t)FPS : 0;
        size_t to = i < d1 ? i : d1 - 1, from = lag + 1 > d0 ? lag + 1 : d0;

        if (i >= d0 && i < d1)
            f[i].d1 = step;
        if (to >= from && i >= d0)
            f[i].dlong = pointer ? 2 * step : step * (float)(to - from + 1);
    }
}

VT_TEST(shotdetect_dissolve_same_template)
{
    struct vt_sd_feat *f = quiet(200);
    struct vt_sd_shot *s = NULL;
    size_t n;

    /* two slides on one background, 0.5 s: the grid's cells do not move, but the
     * thumbnail's differences add up to the net change */
    still_steps(f, 200, 60, 68, 0.6f, 0);
    n = detect(f, 200, &s);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_INT(s[1].kind, VT_SD_DISSOLVE);
        CHECK(s[1].first >= 62 && s[1].first <= 66);
        CHECK(s[1].span0 == 60 && s[1].span1 >= 66 && s[1].span1 <= 67);
        CHECK(s[0].chosen < 60 && s[1].chosen >= 68);
    }
    free(s);
    free(f);
    /* 2 s, longer than the long-range difference's lag: its net is chained */
    f = quiet(200);
    still_steps(f, 200, 60, 90, 0.3f, 0);
    n = detect(f, 200, &s);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_INT(s[1].kind, VT_SD_DISSOLVE);
        CHECK(s[1].span0 == 60 && s[1].span1 >= 88 && s[1].span1 <= 89);
    }
    free(s);
    free(f);
}

VT_TEST(shotdetect_pointer_no_dissolve)
{
    struct vt_sd_feat *f = quiet(200);
    struct vt_sd_shot *s = NULL;

    /* a pointer crossing a slide: as many differences, but it leaves the picture as
     * it was; and a change going on for longer than a mix */
    still_steps(f, 200, 60, 68, 0.6f, 1);
    CHECK_INT(detect(f, 200, &s), 1);
    free(s);
    free(f);
    f = quiet(200);
    still_steps(f, 200, 60, 110, 0.3f, 0);
    CHECK_INT(detect(f, 200, &s), 1);
    free(s);
    free(f);
}

/*
 * Picture 1 still (picture 0, a ramp, brightened looks moved), its thumbnail changing over
 * frames [d0, d1) as a mix does (each frame by step), and its luma cells by light over the
 * same frames: the cells of the top rows brightening, by 7 levels in the top row to 3 in
 * the bottom one (rows < VT_SD_GRID_H: the rows below stay); chroma added to every chroma
 * cell (0: the colours stay).
 */
static void light_steps(struct vt_sd_feat *f, size_t n, size_t d0, size_t d1, float step,
                        int chroma, int rows)
{
    const int nl = VT_SD_GRID_W * VT_SD_GRID_H;

    mix_grid(f, n, 0, 0, 0);
    still_steps(f, n, d0, d1, step, 0);
    for (size_t i = d0; i < n; i++) {
        double al = i >= d1 ? 1 : (double)(i - d0 + 1) / (double)(d1 - d0 + 1), sum = 0;

        for (int k = 0; k < nl; k++) {
            int add =
                k / VT_SD_GRID_W < rows ? (int)(al * (7 - 4 * (k / VT_SD_GRID_W) / 5) + 0.5) : 0;

            f[i].grid[k] = (uint8_t)(f[i].grid[k] + add);
            sum += add;
        }
        for (int k = nl; k < VT_SD_GRID; k++)
            f[i].grid[k] = (uint8_t)(f[i].grid[k] + (int)(al * chroma + 0.5));
        f[i].mean += (float)(sum / nl);
    }
}

VT_TEST(shotdetect_light_no_dissolve)
{
    struct vt_sd_feat *f = quiet(200);
    struct vt_sd_shot *s = NULL;
    size_t n;

    /* a still picture brightening by 5 levels over 3 frames, more at the top than at the
     * bottom, as scanned film's exposure flickers (Popeye, 1936): twin comparison sees the
     * thumbnail's steps add up as a mix's would, but the change is one of light */
    light_steps(f, 200, 60, 63, 1.8f, 0, VT_SD_GRID_H);
    CHECK_INT(detect(f, 200, &s), 1);
    free(s);
    free(f);
    /* the same steps and brightening with a new colour, or brightening only the upper
     * two thirds of the picture: a dissolve to another picture */
    for (int k = 0; k < 2; k++) {
        f = quiet(200);
        light_steps(f, 200, 60, 63, k ? 1.5f : 1.8f, k ? 0 : 4, k ? 4 : VT_SD_GRID_H);
        n = detect(f, 200, &s);
        CHECK_INT(n, 2);
        if (n == 2) {
            CHECK_INT(s[1].kind, VT_SD_DISSOLVE);
            CHECK_INT(s[1].span0, 60);
        }
        free(s);
        free(f);
    }
}

/*
 * A smooth picture (view_grid) with a subject flapping in four cells, and from frame 60 on
 * every luma cell but the subject's moved by up (and the mean with them, as the cells'
 * mean), each chroma cell by chroma; the luma cells of every third column by down instead
 * when down != 0. The thumbnail's difference spikes at 60 as at a cut.
 */
static void relit(struct vt_sd_feat *f, size_t n, int up, int down, int chroma)
{
    const int nl = VT_SD_GRID_W * VT_SD_GRID_H;

    for (size_t i = 0; i < n; i++) {
        double sum = 0;

        view_grid(&f[i], 0, 0);
        for (int k = 0; k < VT_SD_GRID; k++) {
            int r = k / VT_SD_GRID_W, c = k % VT_SD_GRID_W, v = f[i].grid[k];

            if (k < nl && r >= 2 && r < 4 && c >= 3 && c < 5)
                v = i % 2 ? 60 : 90; /* the subject, whatever the light */
            else if (i >= 60)
                v += k >= nl ? chroma : down && c % 3 == 0 ? down : up;
            f[i].grid[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            if (k < nl)
                sum += f[i].grid[k];
        }
        f[i].mean = (float)(sum / nl);
        f[i].d1 = i ? 3 : 0;
        f[i].changed = i ? 0.03f : 0;
    }
    f[60].d1 = 3 + (float)fabs(f[60].mean - f[59].mean);
    f[60].changed = 0.2f;
}

VT_TEST(shotdetect_relight_no_cut)
{
    struct vt_sd_feat *f = quiet(150);
    struct vt_sd_shot *s = NULL;

    /* scanned film's exposure jumps between two frames while a subject moves (Popeye,
     * 1936: a giant stomping as the picture brightens by 7 levels; a still shot by 14):
     * the thumbnail's difference spikes at 60 as at a cut, but it is the mean's shift,
     * every cell but the subject's moves one way and the colours stay */
    relit(f, 150, 10, 0, 0);
    CHECK_INT(detect(f, 150, &s), 1);
    free(s);
    /* the same step with new colours, with a third of the cells going the other way (a
     * new picture as bright on the whole), or darkening every cell by 40 (a cut from a
     * light slide to a dark one on the same template): a cut each time */
    relit(f, 150, 10, 0, 6);
    check_one_cut(f, 150, 60);
    relit(f, 150, 18, -12, 0);
    check_one_cut(f, 150, 60);
    relit(f, 150, -40, 0, 0);
    check_one_cut(f, 150, 60);
    free(f);
}

/*
 * Picture 0 still, its thumbnail changing over frames [d0, d1) as a mix does, and two of
 * its cells going from their values to 8 levels darker and 8 lighter: along a straight
 * mix, or (bump) the second beyond its end and back, as a head turning takes them.
 */
static void cells_steps(struct vt_sd_feat *f, size_t n, size_t d0, size_t d1, int bump)
{
    mix_grid(f, n, n, n, 0);
    still_steps(f, n, d0, d1, 0.6f, 0);
    for (size_t i = d0; i < n; i++) {
        double al = i >= d1 ? 1 : (double)(i - d0 + 1) / (double)(d1 - d0 + 1);
        int over = bump && i > d0 && i + 2 < d1 ? (i - d0 == (d1 - d0) / 2 ? 12 : 8) : 0;

        f[i].grid[11] = (uint8_t)(f[i].grid[11] - (int)(8 * al + 0.5));
        f[i].grid[19] = (uint8_t)(f[i].grid[19] + (int)(8 * al + 0.5) + over);
    }
}

VT_TEST(shotdetect_subject_moves_no_dissolve)
{
    struct vt_sd_feat *f = quiet(200);
    struct vt_sd_shot *s = NULL;
    size_t n;

    /* two slides on one template mixed: the cells of the text that changes go straight
     * from the old slide's values to the new one's */
    cells_steps(f, 200, 60, 65, 0);
    n = detect(f, 200, &s);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_INT(s[1].kind, VT_SD_DISSOLVE);
        CHECK_INT(s[1].span0, 60);
    }
    free(s);
    free(f);
    /* the same ends and steps, but a cell goes beyond its end and comes back: something
     * moves in a still shot (a llama turning its head, Caminandes), no mix does that */
    f = quiet(200);
    cells_steps(f, 200, 60, 65, 1);
    CHECK_INT(detect(f, 200, &s), 1);
    free(s);
    free(f);
}

/*
 * A dissolve at 60-72 into a still picture of 200 frames whose keyframe at 120 jumps by d1
 * (pass 1's drift going back); then that the jump is no cut (the dissolve only) or, with
 * cut, a cut at 120 too.
 */
static void drift_dissolve(struct vt_sd_feat *f, float d1)
{
    mix_grid(f, 200, 60, 72, 0);
    f[72].d1 = 3.5f;
    f[120].key = 1;
    f[120].d1 = d1;
    f[120].changed = 0.05f;
}

static void check_drift(const struct vt_sd_feat *f, int cut)
{
    struct vt_sd_shot *s = NULL;
    size_t n = detect(f, 200, &s);

    CHECK_INT(n, cut ? 3 : 2);
    if (n == 2 && !cut)
        CHECK_INT(s[1].kind, VT_SD_DISSOLVE);
    if (n == 3 && cut)
        CHECK_INT(s[2].first, 120);
    free(s);
}

VT_TEST(shotdetect_keyframe_drift_no_cut)
{
    struct vt_sd_feat *f = quiet(200);

    /* a dissolve into a still picture that pass 1 shows 11 levels too bright until the
     * next keyframe, which puts it right: the same shift on every cell, no new colour */
    drift_dissolve(f, 11.5f);
    for (size_t i = 72; i < 120; i++) {
        for (int k = 0; k < VT_SD_GRID_W * VT_SD_GRID_H; k++)
            f[i].grid[k] = (uint8_t)(f[i].grid[k] + 11);
        f[i].mean += 11;
    }
    check_drift(f, 0);
    /* the same jump with a change of colour is a cut */
    for (size_t i = 120; i < 200; i++)
        for (int k = VT_SD_GRID_W * VT_SD_GRID_H; k < VT_SD_GRID; k++)
            f[i].grid[k] = (uint8_t)(f[i].grid[k] + 9);
    check_drift(f, 1);
    free(f);
}

VT_TEST(shotdetect_keyframe_blocks_no_cut)
{
    struct vt_sd_feat *f = quiet(200);

    /* a dissolve into a still picture whose fine detail pass 1 decoded wrong until the next
     * keyframe (a photograph after a fade in: 9.8 levels in the thumbnail, the grid and the
     * text grid the same) */
    drift_dissolve(f, 9.8f);
    check_drift(f, 0);
    /* the same jump that moves the strokes of a line of text is a cut (a slide replaced by
     * one of the same layout) */
    for (size_t i = 120; i < 200; i++)
        for (int k = 0; k < VT_SD_TEXT_W; k++)
            f[i].text[k] = 40;
    check_drift(f, 1);
    free(f);
}

VT_TEST(shotdetect_last_frame_no_shot)
{
    struct vt_sd_feat *f = quiet(120);
    struct vt_sd_shot *s = NULL;

    /* a step into the last two frames (a program quit to the shell's prompt as the
     * recording stops) is no shot; a second earlier it is */
    for (size_t i = 118; i < 120; i++)
        memset(f[i].grid, 200, VT_SD_GRID_W * VT_SD_GRID_H);
    f[118].d1 = 40;
    f[118].changed = 0.5f;
    CHECK_INT(detect(f, 120, &s), 1);
    free(s);
    for (size_t i = 90; i < 120; i++)
        memset(f[i].grid, 200, VT_SD_GRID_W * VT_SD_GRID_H);
    f[118].d1 = 0.05f;
    f[118].changed = 0;
    f[90].d1 = 40;
    f[90].changed = 0.5f;
    check_one_cut(f, 120, 90);
    free(f);
}

VT_TEST(shotdetect_fade_into_drift)
{
    struct vt_sd_feat *f = quiet(150);
    struct vt_sd_shot *s = NULL;
    size_t n;

    /* a fade through black into a shot whose own luma then keeps rising slowly: the
     * fade-in ends where its steps do */
    for (size_t i = 60; i < 150; i++) {
        double m = i < 70   ? 120 - (i - 59) * 10.5
                   : i < 74 ? 16
                   : i < 84 ? 16 + (i - 73) * 10
                            : 116 + (i - 83) * 0.5;

        f[i].mean = (float)m;
        f[i].stddev = (float)(i >= 70 && i < 74 ? 1 : m / 3);
        f[i].d1 = 10;
    }
    n = detect(f, 150, &s);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_INT(s[1].kind, VT_SD_FADE);
        CHECK(s[1].span0 >= 59 && s[1].span0 <= 60);
        CHECK(s[1].span1 >= 82 && s[1].span1 <= 84);
    }
    free(s);
    free(f);
}

VT_TEST(shotdetect_empty)
{
    struct vt_sd_shot *s = NULL;

    CHECK_INT(vt_sd_detect(NULL, 0, &s), 0);
    CHECK(s == NULL);
}

VT_TEST(shotdetect_laplacian)
{
    uint8_t img[64 * 64];

    memset(img, 128, sizeof(img));
    CHECK_NEAR(vt_img_laplacian_var(img, 64, 64, 64), 0, 1e-9);
    for (int y = 0; y < 64; y++)
        for (int x = 0; x < 64; x++)
            img[y * 64 + x] = ((x + y) & 1) ? 255 : 0;
    CHECK(vt_img_laplacian_var(img, 64, 64, 64) > 1e5);
}

static void slide(uint8_t *img, int w, int h, int text_seed)
{
    unsigned r = (unsigned)text_seed;

    memset(img, 230, (size_t)w * h);
    /* "lines of text": dark blocks whose positions depend on the seed */
    for (int line = 0; line < 5; line++)
        for (int word = 0; word < 6; word++) {
            int x0, len;

            r = r * 1103515245u + 12345u;
            x0 = 10 + word * 25 + (int)(r >> 16) % 6;
            len = 8 + (int)(r >> 8) % 12;
            for (int y = 20 + line * 14; y < 28 + line * 14; y++)
                for (int x = x0; x < x0 + len && x < w; x++)
                    img[y * w + x] = 20;
        }
}

VT_TEST(shotdetect_phash_duplicates)
{
    enum { W = 160, H = 90 };
    uint8_t a[W * H], b[W * H], c[W * H], a32[1024], b32[1024], c32[1024];
    double mad, ch;

    slide(a, W, H, 1);
    memcpy(b, a, sizeof(a));
    for (int i = 0; i < W * H; i += 7)
        b[i] = (uint8_t)(b[i] + 2); /* re-encoding noise */
    slide(c, W, H, 2);              /* same background, other text */
    vt_img_resize_gray(a, W, H, W, a32, 32, 32);
    vt_img_resize_gray(b, W, H, W, b32, 32, 32);
    vt_img_resize_gray(c, W, H, W, c32, 32, 32);
    CHECK(vt_img_hamming64(vt_img_phash64(a32), vt_img_phash64(b32)) <= 4);
    vt_img_diff(a, b, W * H, 20, &mad, &ch);
    CHECK(mad < 1 && ch == 0);
    /* the hash may call them close; the thumbnail check must not */
    vt_img_diff(a, c, W * H, 20, &mad, &ch);
    CHECK(ch > 0.01);
}

VT_TEST(shotdetect_rotate)
{
    /* 3x2 image, pixel value = index; 90 degrees clockwise puts the bottom-left on top */
    uint8_t src[3 * 2 * 3], *r;
    int w, h;

    for (int i = 0; i < 6; i++)
        src[i * 3] = src[i * 3 + 1] = src[i * 3 + 2] = (uint8_t)i;
    r = vt_img_rotate_rgb(src, 3, 2, 9, 90, &w, &h);
    CHECK_INT(w, 2);
    CHECK_INT(h, 3);
    CHECK_INT(r[0], 3); /* top-left of the result: old bottom-left */
    CHECK_INT(r[3], 0);
    free(r);
    r = vt_img_rotate_rgb(src, 3, 2, 9, 180, &w, &h);
    CHECK_INT(r[0], 5);
    free(r);
}

VT_TEST(shotdetect_jpeg_write)
{
    char dir[] = "/tmp/vt-jpeg-XXXXXX", err[256] = "";
    uint8_t rgb[64 * 32 * 3];
    int64_t bytes = 0;
    char *path;
    FILE *fp;
    unsigned char head[3] = {0};

    CHECK(mkdtemp(dir) != NULL);
    for (size_t i = 0; i < sizeof(rgb); i++)
        rgb[i] = (uint8_t)(i * 7);
    path = vt_xasprintf("%s/0.jpg", dir);
    CHECK_INT(vt_img_write_jpeg(path, rgb, 64, 32, 64 * 3, 90, &bytes, err, sizeof(err)), 0);
    CHECK(bytes > 100);
    fp = fopen(path, "rb");
    CHECK(fp != NULL);
    if (fp) {
        CHECK_INT(fread(head, 1, 3, fp), 3);
        fseek(fp, 0, SEEK_END);
        CHECK_INT(ftell(fp), bytes);
        fclose(fp);
    }
    CHECK(head[0] == 0xff && head[1] == 0xd8 && head[2] == 0xff);
    unlink(path);
    rmdir(dir);
    free(path);
}

/*
 * A terminal on a flat ground (the line grid at 36) whose first line, the command, is in
 * row 4 of the line grid, columns 1-5; from frame 70 on, what edit draws: 0 a menu in rows
 * 8-20 under the command, 1 the command replaced by another question, 2 the screen cleared
 * to a cursor in row 4 column 1, 3 the menu under the command on a ground of a new colour,
 * 4 a line drawn in row 12 at 70 beside the command and the command cleared at 71 (a slide
 * replaced in two steps), 5 a letter typed in large type (a window 136 px high at 42 points:
 * the line is rows 11-18, a prompt in column 1, the cursor in column 2 and from 70 a letter
 * there and the cursor in column 3), 6 the same with a second line drawn at 70 in rows 21-28
 * of those columns, 7 a highlight bar moved under the command (its cells 40 levels lighter,
 * its strokes in the text grid the same), 8 the same with the strokes moved (other type on
 * the bar), 9 a screen full of type (rows 2-20, its values by row and column) scrolled up by
 * 7 rows at 70, new type printed in the rows freed, 10 the same screen replaced by other
 * type in the same rows, 11 a command two columns wide in rows 4-6 with a cursor under it in
 * column 1 (rows 5-6) that leaves it at 70 as a menu is drawn under it, 12 the command
 * replaced by other type instead, 13 a second pane beside the command (rows 4-12, columns
 * 8-12) moved two columns left at 70 as a third opens: the command's last two cells wrap
 * to row 5, its first three stay, 14 the same with the command's first two cells changed.
 * The thumbnail's difference steps at 70 as at a slide change (for 4, at 71).
 */
static void screen(struct vt_sd_feat *f, size_t n, int edit)
{
    for (size_t i = 0; i < n; i++) {
        int after = i >= 70;

        memset(f[i].line, 36, sizeof(f[i].line));
        memset(f[i].grid, 40, sizeof(f[i].grid));
        memset(f[i].text, 0, sizeof(f[i].text));
        for (int c = 1; c <= 5; c++)
            f[i].line[4 * VT_SD_LINE_W + c] =
                (uint8_t)(after && edit == 1 ? 50 + 9 * c : 90 - 5 * c);
        if (after && edit == 2) {
            memset(f[i].line, 36, sizeof(f[i].line));
            f[i].line[4 * VT_SD_LINE_W + 1] = 200;
        }
        for (int r = 8; after && (edit == 0 || edit == 3) && r <= 20; r += 2)
            for (int c = 1; c <= 4; c++)
                f[i].line[r * VT_SD_LINE_W + c] = 80;
        for (int k = VT_SD_GRID_W * VT_SD_GRID_H; after && edit == 3 && k < VT_SD_GRID; k++)
            f[i].grid[k] = 60;
        if (edit == 5 || edit == 6) /* no command in row 4 */
            memset(&f[i].line[4 * VT_SD_LINE_W], 36, VT_SD_LINE_W);
        for (int r = 11; (edit == 5 || edit == 6) && r <= 18; r++) {
            f[i].line[r * VT_SD_LINE_W + 1] = 90;
            f[i].line[r * VT_SD_LINE_W + 2] = after ? 120 : 200;
            f[i].line[r * VT_SD_LINE_W + 3] = after ? 200 : 36;
            f[i].line[(r + 10) * VT_SD_LINE_W + 2] = after && edit == 6 ? 120 : 36;
            f[i].line[(r + 10) * VT_SD_LINE_W + 3] = after && edit == 6 ? 120 : 36;
        }
        for (int c = 0; (edit == 7 || edit == 8) && c < VT_SD_TEXT_W / 2; c++)
            f[i].text[c] = (uint8_t)(after && edit == 8 && c % 2 ? 90 : 60);
        for (int c = 1; after && (edit == 7 || edit == 8) && c <= 5; c++)
            f[i].line[4 * VT_SD_LINE_W + c] = (uint8_t)(130 - 5 * c);
        for (int r = 2; edit >= 9 && edit <= 10 && r <= 20; r++)
            for (int c = 1; c <= 10; c++) {
                int v = 60 + (r * 7 + c * 13) % 90;

                if (after && edit == 9)
                    v = r + 7 <= 20 ? 60 + ((r + 7) * 7 + c * 13) % 90 : 150 - c * 5;
                else if (after)
                    v = 60 + (r * 11 + c * 5 + 37) % 90;
                f[i].line[r * VT_SD_LINE_W + c] = (uint8_t)v;
            }
        if (edit == 11 || edit == 12) { /* the command and the cursor */
            memset(&f[i].line[4 * VT_SD_LINE_W], 36, VT_SD_LINE_W);
            for (int r = 4; r <= 6; r++)
                for (int c = 1; c <= 2; c++)
                    f[i].line[r * VT_SD_LINE_W + c] =
                        (uint8_t)(r == 6 && c == 2      ? 36
                                  : after && edit == 12 ? 110 - 7 * r + 3 * c
                                                        : 80 + r + c);
            for (int r = 5; !after && r <= 6; r++)
                f[i].line[r * VT_SD_LINE_W + 1] = 200;
            for (int r = 9; after && r <= 20; r += 2)
                for (int c = 1; c <= 4; c++)
                    f[i].line[r * VT_SD_LINE_W + c] = 80;
        }
        for (int r = 4; (edit == 13 || edit == 14) && r <= 12; r++) /* the pane */
            for (int c = 8; c <= 12; c++)
                f[i].line[r * VT_SD_LINE_W + c - 2 * after] = (uint8_t)(70 + r + 9 * c);
        for (int c = 1; after && (edit == 13 || edit == 14) && c <= 5; c++) /* the wrap */
            f[i].line[4 * VT_SD_LINE_W + c] = (uint8_t)(c >= 4                 ? 36
                                                        : edit == 14 && c <= 2 ? 120
                                                                               : 90 - 5 * c);
        if (after && (edit == 13 || edit == 14))
            f[i].line[5 * VT_SD_LINE_W + 1] = 100;
        for (int c = 1; after && edit == 4 && c <= 6; c++) {
            f[i].line[12 * VT_SD_LINE_W + c] = (uint8_t)(60 + 3 * c);
            if (i > 70)
                f[i].line[4 * VT_SD_LINE_W + c] = 36;
        }
    }
    f[70].d1 = f[71].d1 = 0.05f;
    f[70].changed = f[71].changed = 0;
    f[edit == 4 ? 71 : 70].d1 = 1.2f;
    f[edit == 4 ? 71 : 70].changed = 0.03f;
}

VT_TEST(shotdetect_screen_edit_no_cut)
{
    /* each edit of screen() and the frame of its cut, 0 for the same shot */
    static const struct {
        int edit;
        size_t cut;
    } cases[] = {
        {0, 0},   /* a menu opened under the command that stays (gum, vhs: 10 false cuts) */
        {2, 0},   /* a screen cleared to its prompt */
        {1, 70},  /* the first line replaced (the next question) */
        {3, 70},  /* the ground's colour changed */
        {4, 71},  /* the next line drawn beside the old, then the old cleared */
        {5, 0},   /* a letter typed in type 8 rows high (vhs's commands/type: 18 false cuts) */
        {6, 70},  /* the same two columns over two lines */
        {7, 0},   /* a highlight bar under the same type (a split editor: 6 false cuts) */
        {8, 70},  /* other type on the bar */
        {9, 0},   /* a screen scrolled by 7 rows (neofetch's output: 1 false cut) */
        {10, 70}, /* the screen replaced by other type */
        {11, 0},  /* a program run: its cursor leaves the command (Bubble Tea's tabs) */
        {12, 70}, /* the command replaced */
        {13, 0},  /* panes reflowed, the command's start kept (a split editor: 1 false cut) */
        {14, 70}, /* the same with the command's start changed */
    };
    struct vt_sd_feat *f = quiet(120);

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct vt_sd_shot *s = NULL;

        screen(f, 120, cases[i].edit);
        if (cases[i].cut) {
            check_one_cut(f, 120, cases[i].cut);
            continue;
        }
        CHECK_INT(detect(f, 120, &s), 1);
        free(s);
    }
    free(f);
}
