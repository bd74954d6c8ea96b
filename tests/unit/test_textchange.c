/*
 * Unit tests of text that changes inside a shot (lib/visual/textchange.c) on synthetic text
 * grids: a slide build gives one frame per bullet at the moment it settled (the last too,
 * which the shot's chosen frame shows later), a fade gives its end, two names in turn in one lower
 * third both, a still slide, a moving camera or a pan drifting through states none, a scrolling
 * screen is bounded; a blinking cursor does not cut a screen's states short, and a shot's
 * only state is taken when it differs from a chosen frame caught mid-typing by a local change,
 * and states shown half a second each are taken one after the other, output scrolling past
 * without a stop is seen as it passes, a prompt's placeholder held until its cursor moves is
 * taken though it lasts under half a second, a line alone on a fade's black is taken; and the
 * grid itself
 * counts type and not a plain ground.
 */
#include "base/util.h"
#include "harness.h"
#include "visual/textchange.h"

#include <stdlib.h>
#include <string.h>

#define FPS 15.0

/* n frames of a still slide: a title in the top row of cells, a little noise. */
static struct vt_sd_feat *slide(size_t n)
{
    struct vt_sd_feat *f = vt_xcalloc(n, sizeof(*f));

    for (size_t i = 0; i < n; i++) {
        f[i].t_s = i / FPS;
        for (int c = 0; c < VT_SD_TEXT_W / 2; c++)
            f[i].text[c] = (uint8_t)(60 + (i + c) % 5);
    }
    return f;
}

/* From frame at on, row `row` of cells holds a line of text, reaching full count over ramp. */
static void add_line(struct vt_sd_feat *f, size_t n, size_t at, int row, size_t ramp)
{
    for (size_t i = at; i < n; i++) {
        double k = ramp && i - at < ramp ? (double)(i - at + 1) / (double)ramp : 1;

        for (int c = 1; c < VT_SD_TEXT_W * 3 / 4; c++)
            f[i].text[row * VT_SD_TEXT_W + c] = (uint8_t)(k * 70 + (i + c) % 4);
    }
}

static struct vt_sd_shot whole(size_t n, size_t chosen)
{
    struct vt_sd_shot s = {0};

    s.last = s.stable_last = n - 1;
    s.chosen = chosen;
    return s;
}

VT_TEST(textchange_bullets)
{
    size_t n = 240, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 230); /* the sharpest: with every bullet */

    add_line(f, n, 45, 2, 0);
    add_line(f, n, 90, 3, 0);
    add_line(f, n, 135, 4, 8); /* fades in over 8 frames */
    add_line(f, n, 180, 5, 0);
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 5);
    if (k == 5) {
        CHECK_INT(out[0], 0); /* the title alone */
        CHECK_INT(out[1], 45);
        CHECK_INT(out[2], 90);
        /* the fade's end, give or take the cell tolerance */
        CHECK(out[3] >= 140 && out[3] <= 143);
        /* the last bullet where it settled, though the chosen frame shows it later */
        CHECK_INT(out[4], 180);
    }
    free(f);
}

VT_TEST(textchange_chosen_first)
{
    size_t n = 240, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 10);

    add_line(f, n, 100, 3, 0);
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 1);
    if (k == 1)
        CHECK_INT(out[0], 100);
    free(f);
}

VT_TEST(textchange_still_and_brief)
{
    size_t n = 240, out[VT_TC_MAX_EXTRA];
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 50);

    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    /* a line shown for 0.3 s and gone: no state */
    add_line(f, 125, 120, 3, 0);
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    /* a shot shorter than 0.5 s (TC_PER_S): none, though its line holds to its end */
    s = whole(8, 0);
    add_line(f, 8, 1, 4, 0);
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    /* one frame longer, 0.53 s: the line's state is taken */
    s = whole(9, 0);
    add_line(f, 9, 1, 4, 0);
    CHECK_INT(vt_tc_extra(f, &s, out), 1);
    free(f);
}

/* A cursor in cell (row, col) that blinks: on for `per` frames, off for `per`, from frame at. */
static void blink(struct vt_sd_feat *f, size_t n, size_t at, int row, int col, size_t per)
{
    for (size_t i = at; i < n; i++)
        if ((i - at) / per % 2 == 0)
            f[i].text[row * VT_SD_TEXT_W + col] =
                (uint8_t)(f[i].text[row * VT_SD_TEXT_W + col] + 25);
}

VT_TEST(textchange_cursor_blinks)
{
    size_t n = 240, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 20);

    /* a terminal whose cursor blinks every 0.33 s (a state needs 0.5 s): no new text, none */
    blink(f, n, 0, 5, 10, 5);
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    /* a line printed at frame 90 under the blinking cursor: one frame, where it settled (the
     * cursor on or off), though no stretch between two blinks lasts 0.5 s */
    add_line(f, n, 90, 3, 0);
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 1);
    if (k == 1)
        CHECK(out[0] >= 90 && out[0] < 90 + 5);
    free(f);
}

/*
 * A prompt's placeholder shown at frame 30 of a screen, its cursor in cell (3, 0) on until
 * frame 35 (0.33 s), then off; from frame 40 an answer is typed over it in row 4, a cell
 * every 3 frames, and held from frame 64 on. Unless busy, the line grid is a screen's.
 */
static struct vt_sd_feat *prompt(size_t n, int busy)
{
    struct vt_sd_feat *f = slide(n);

    add_line(f, n, 30, 3, 0);
    for (size_t i = 30; i < 35; i++)
        f[i].text[3 * VT_SD_TEXT_W] = (uint8_t)(f[i].text[3 * VT_SD_TEXT_W] + 25);
    for (size_t i = 40; i < n; i++)
        for (int c = 0; c < VT_SD_TEXT_W && c <= (int)(i - 40) / 3; c++)
            f[i].text[4 * VT_SD_TEXT_W + c] = (uint8_t)(50 + c % 3);
    for (size_t i = 0; busy && i < n; i++)
        for (int k = 0; k < VT_SD_LINE; k++)
            f[i].line[k] = (uint8_t)(40 + (k * 37) % 100);
    return f;
}

/* Whether frame at is among the k in out. */
static int taken(const size_t *out, size_t k, size_t at)
{
    for (size_t i = 0; i < k; i++)
        if (out[i] == at)
            return 1;
    return 0;
}

VT_TEST(textchange_placeholder_typed_over)
{
    size_t n = 120, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = prompt(n, 0);
    struct vt_sd_shot s = whole(n, 100);

    /* the placeholder is held 0.33 s, then only its cursor changes until typing begins, and
     * nothing larger replaces it within 0.44 s: a state, taken where the cursor blinked off
     * (the letter under the block shows) */
    k = vt_tc_extra(f, &s, out);
    CHECK(taken(out, k, 35) && !taken(out, k, 30));
    /* the cursor moved on instead (a cell more ink at 35): where the placeholder appeared */
    for (size_t i = 35; i < n; i++)
        f[i].text[3 * VT_SD_TEXT_W + 1] = (uint8_t)(f[i].text[3 * VT_SD_TEXT_W + 1] + 25);
    k = vt_tc_extra(f, &s, out);
    CHECK(taken(out, k, 30) && !taken(out, k, 35));
    /* the same on a picture that is no screen: none */
    free(f);
    f = prompt(n, 1);
    k = vt_tc_extra(f, &s, out);
    CHECK(!taken(out, k, 30) && !taken(out, k, 35));
    /* on a screen, replaced at frame 36 by a new page (every row): none */
    free(f);
    f = prompt(n, 0);
    for (size_t i = 36; i < n; i++)
        for (int c = 0; c < VT_SD_TEXT; c++)
            f[i].text[c] = (uint8_t)(f[i].text[c] + 20 + c % 7);
    k = vt_tc_extra(f, &s, out);
    CHECK(!taken(out, k, 30) && !taken(out, k, 35));
    free(f);
}

/*
 * A shot that fades in from black (span 40-80, its first frame 66): black from 50 to 70,
 * where `typed` frames from 50 show a line of type; a picture before and after.
 */
static struct vt_sd_feat *after_black(size_t n, size_t typed, struct vt_sd_shot *s)
{
    struct vt_sd_feat *f = slide(n);

    for (size_t i = 0; i < n; i++) {
        int black = i >= 50 && i <= 70;

        f[i].mean = black ? 8.0f : 120.0f;
        f[i].stddev = black ? 4.0f : 50.0f;
        if (black)
            memset(f[i].text, 0, sizeof(f[i].text));
    }
    add_line(f, 50 + typed, 50, 3, 0);
    *s = whole(n, 100);
    s->kind = VT_SD_FADE;
    s->span0 = 40;
    s->span1 = 80;
    s->first = 66;
    s->stable_first = 81;
    return f;
}

VT_TEST(textchange_card_on_black)
{
    size_t n = 150, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_shot s;
    struct vt_sd_feat *f = after_black(n, 21, &s);

    /* a line alone on the black, held 1.4 s: the shot's first frame, on it */
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 1);
    if (k == 1)
        CHECK_INT(out[0], 66);
    /* the same shot begun by a cut: its black is no fade's, none */
    s.kind = VT_SD_CUT;
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    free(f);
    /* a black without type, or type held 0.33 s: none */
    f = after_black(n, 0, &s);
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    free(f);
    f = after_black(n, 5, &s);
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    free(f);
}

VT_TEST(textchange_only_state)
{
    size_t n = 90, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 20);

    /* a line typed a cell every 3 frames over 2 s, then held 4 s; the chosen frame, caught
     * mid-typing, shows part of it: the held line is the shot's only state */
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < VT_SD_TEXT_W && c <= (int)(i / 3); c++)
            f[i].text[3 * VT_SD_TEXT_W + c] = (uint8_t)(50 + c % 3);
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 1);
    if (k == 1)
        CHECK_INT(out[0], 45); /* the 16th and last cell typed */
    /* control: the only state differs from the chosen frame in every cell (a camera that
     * moved and stopped, not text): none */
    for (size_t i = 45; i < n; i++)
        for (int c = 0; c < VT_SD_TEXT; c++)
            f[i].text[c] = (uint8_t)(90 + (size_t)c * 7 % 60);
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    free(f);
}

VT_TEST(textchange_camera_moved)
{
    size_t n = 240, out[VT_TC_MAX_EXTRA];
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 20);

    /* the camera pans for 2 s and stops on another view: every cell changes */
    for (size_t i = 60; i < n; i++)
        for (int c = 0; c < VT_SD_TEXT; c++)
            f[i].text[c] =
                (uint8_t)(i < 90 ? (i * 7 + (size_t)c * 13) % 120 : 30 + (size_t)c * 29 % 90);
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    free(f);
}

/* Frames [from, to) show a lower third in row 5: cells 1-4 at the counts in c. */
static void lower_third(struct vt_sd_feat *f, size_t from, size_t to, const uint8_t *c)
{
    for (size_t i = from; i < to; i++)
        memcpy(&f[i].text[5 * VT_SD_TEXT_W + 1], c, 4);
}

VT_TEST(textchange_lower_thirds)
{
    static const uint8_t one[4] = {39, 29, 30, 30}, two[4] = {30, 33, 32, 20};
    size_t n = 240, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 10);

    /* two names in turn in the same band, no cell moving by more than 10: both are read */
    lower_third(f, 30, 90, one);
    lower_third(f, 130, 190, two);
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 2);
    if (k == 2) {
        CHECK_INT(out[0], 30);
        CHECK_INT(out[1], 130);
    }
    /* the same name twice: the second time repeats the first's frame (the stage marks it
     * a duplicate), at the moment it is shown again; the plain slide between takes none */
    lower_third(f, 130, 190, one);
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 2);
    if (k == 2) {
        CHECK_INT(out[0], 30);
        CHECK_INT(out[1], 130);
    }
    free(f);
}

VT_TEST(textchange_pan_drifts)
{
    size_t n = 240, out[VT_TC_MAX_EXTRA];
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 20);

    /* a slow pan over foliage: the counts of a few cells drift in steps, the picture moves */
    for (size_t i = 0; i < n; i++) {
        f[i].d1 = 3.5f;
        for (int c = 0; c < 4; c++)
            f[i].text[3 * VT_SD_TEXT_W + c] = (uint8_t)(40 + 20 * (i / 30) % 120);
    }
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    /* the same steps on a still picture are new text */
    for (size_t i = 0; i < n; i++)
        f[i].d1 = 0.3f;
    CHECK(vt_tc_extra(f, &s, out) > 0);
    free(f);
}

/* The k frames in out are each their own state, held about half a second. */
static void check_spaced(const struct vt_sd_feat *f, const size_t *out, size_t k)
{
    for (size_t i = 1; i < k; i++)
        CHECK(f[out[i]].t_s - f[out[i - 1]].t_s >= 0.4);
}

VT_TEST(textchange_scroll_bounded)
{
    size_t n = 15 * 60, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 3);

    /* a minute of a terminal: every 0.6 s one row of cells changes its text, a new state */
    for (size_t i = 0; i < n; i++)
        for (size_t step = 0; step <= i / 9; step++)
            for (int c = 0; c < VT_SD_TEXT_W; c++)
                f[i].text[(step % VT_SD_TEXT_H) * VT_SD_TEXT_W + c] =
                    (uint8_t)(10 + (step * 37) % 70 + c % 3);
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, VT_TC_MAX_EXTRA);
    check_spaced(f, out, k);
    free(f);
}

/*
 * n frames of a terminal printing a line every 3 frames (0.2 s) from frame 15 on, each line
 * 2 rows of the line grid high, columns 1-8, the screen scrolling up once full (15 lines);
 * the text grid changes with every line, so no state is held. On a flat ground (36), or,
 * with busy, on a picture whose every cell differs (no screen).
 */
static void print_lines(struct vt_sd_feat *f, size_t n, int busy)
{
    for (size_t i = 0; i < n; i++) {
        int lines = i < 15 ? 0 : (int)(i - 15) / 3 + 1, top = lines > 15 ? lines - 15 : 0;

        for (int k = 0; k < VT_SD_LINE; k++)
            f[i].line[k] = (uint8_t)(busy ? 40 + (k * 37) % 100 : 36);
        for (int l = top; l < lines; l++)
            for (int r = 0; r < 2; r++)
                for (int c = 1; c <= 8; c++)
                    f[i].line[(2 * (l - top) + r) * VT_SD_LINE_W + c] =
                        (uint8_t)(60 + (l * 17 + c * 7 + r * 5) % 80);
        for (int k = VT_SD_TEXT_W; k < VT_SD_TEXT; k++)
            f[i].text[k] = (uint8_t)(20 + (lines * 13 + k) % 50);
    }
}

VT_TEST(textchange_passing_output)
{
    size_t n = 15 * 8, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 10);

    /* output scrolling past, never held: frames as it passes, within the shot's bound */
    print_lines(f, n, 0);
    k = vt_tc_extra(f, &s, out);
    CHECK(k >= 3 && k <= (size_t)(f[n - 1].t_s / 0.5));
    for (size_t i = 0; i < k; i++) /* each at a stop, after the first lines were printed */
        CHECK(out[i] >= 15 && (out[i] - 15) % 3 != 2);
    /* the same changes in a picture that is no screen (a camera's): none */
    print_lines(f, n, 1);
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    free(f);
}

VT_TEST(textchange_grid)
{
    uint8_t img[180][320], g[VT_SD_TEXT];

    memset(img, 200, sizeof(img));
    vt_tc_grid(&img[0][0], 320, 180, 320, g);
    for (int c = 0; c < VT_SD_TEXT; c++)
        CHECK_INT(g[c], 0);
    /* strokes 2 px wide every 4 px over rows 40-49 of the first half: cells of row 1 */
    for (int y = 40; y < 50; y++)
        for (int x = 0; x < 160; x++)
            img[y][x] = x % 4 < 2 ? 20 : 200;
    vt_tc_grid(&img[0][0], 320, 180, 320, g);
    CHECK_INT(g[0], 0);
    CHECK_INT(g[VT_SD_TEXT_W], 5 * 10);    /* 5 rows of 10 steps */
    CHECK_INT(g[VT_SD_TEXT_W + 7], 5 * 9); /* the strokes end on the ground: no last step */
    CHECK_INT(g[VT_SD_TEXT_W + 8], 0);
}

VT_TEST(textchange_retyped_lines)
{
    size_t n = 240, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 50);

    /* a terminal cleared at 95 and the next command typed in the same line at 100: the
     * text grid's coarse cells count as much type as before, the line grid's cells differ */
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < VT_SD_LINE_W / 2; c++)
            f[i].line[4 * VT_SD_LINE_W + c] = (uint8_t)(i < 100 ? 60 + 4 * c : 88 - 4 * c);
    for (size_t i = 95; i < 100; i++)
        memset(f[i].text, 0, sizeof(f[i].text));
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 1);
    if (k == 1)
        CHECK_INT(out[0], 100);
    /* the same line again: nothing new */
    for (size_t i = 100; i < n; i++)
        memcpy(f[i].line, f[0].line, sizeof(f[i].line));
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    free(f);
}

VT_TEST(textchange_last_stroke)
{
    size_t n = 240, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 10);
    static const uint8_t drawn[] = {60, 66}; /* frames 100-101; 70 from 102 on */

    /* a line drawn over three frames (a terminal's line in two steps, then its last
     * letter typed), the last step less than a third of the tolerance: the frame with the
     * last letter, not the one before it, which is already that close to the state */
    for (size_t i = 100; i < n; i++)
        for (int c = 1; c < VT_SD_TEXT_W * 3 / 4; c++)
            f[i].text[3 * VT_SD_TEXT_W + c] = i < 102 ? drawn[i - 100] : 70;
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 1);
    if (k == 1)
        CHECK_INT(out[0], 102);
    free(f);
}

VT_TEST(textchange_short_states)
{
    size_t n = 70, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 60);

    /* a terminal at 25 frames a second (gum's demo): a question alone for 13 frames (shown
     * 0.52 s, its first frame to its last 0.48 s), then its options under it for 13, then
     * the answer under those until the redraw at 2.8 s, the chosen frame in that last state:
     * both short states are taken, though they follow each other within a second, and the
     * last where it settled (the chosen frame becomes its duplicate) */
    for (size_t i = 0; i < n; i++)
        f[i].t_s = i / 25.0;
    add_line(f, n, 13, 2, 0);
    add_line(f, n, 26, 3, 0);
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 3);
    if (k == 3) {
        CHECK_INT(out[0], 0);
        CHECK_INT(out[1], 13);
        CHECK_INT(out[2], 26);
    }
    free(f);
}

/*
 * A screen's box whose one line is replaced (a tab bar's pages): the text grid does not move,
 * 5 cells of the line grid do, in one frame. Pages at 0, 30, 60, 90 and back to the first at
 * 120, 1 s to 2 s each; the chosen frame at 10 shows the first: a frame at each step, the
 * page shown again too (the stage marks it a duplicate). On a picture that is no screen:
 * none.
 */
static void pages(struct vt_sd_feat *f, size_t n, int busy)
{
    static const uint8_t ink[4][5] = {
        {52, 48, 50, 46, 40}, {44, 58, 40, 52, 47}, {60, 41, 55, 40, 56}, {40, 56, 61, 52, 52}};

    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = ink[i < 120 ? i / 30 : 0];

        for (int k = 0; k < VT_SD_LINE; k++)
            f[i].line[k] = (uint8_t)(busy ? 40 + (k * 37) % 100 : 36);
        for (int c = 0; c < 5; c++)
            f[i].line[10 * VT_SD_LINE_W + 5 + c] = p[c];
    }
}

VT_TEST(textchange_screen_steps)
{
    size_t n = 150, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 10);

    pages(f, n, 0);
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, 4);
    for (size_t i = 0; i < k && k == 4; i++)
        CHECK_INT(out[i], 30 * (i + 1));
    pages(f, n, 1);
    CHECK_INT(vt_tc_extra(f, &s, out), 0);
    free(f);
}

/*
 * Twenty seconds of a screen typed on, a word every 0.6 s, each word a smaller change than
 * the one before (the largest changes all early): more states than room, so each of the
 * shot's stretches gets its largest; the last command, typed at the end, has a frame.
 */
VT_TEST(textchange_spread)
{
    size_t n = 15 * 20, out[VT_TC_MAX_EXTRA], k;
    struct vt_sd_feat *f = slide(n);
    struct vt_sd_shot s = whole(n, 3);

    for (size_t i = 0; i < n; i++)
        for (size_t w = 1; w <= i / 9; w++)
            f[i].text[(w % (VT_SD_TEXT_H - 1) + 1) * VT_SD_TEXT_W +
                      w / (VT_SD_TEXT_H - 1) % VT_SD_TEXT_W] = (uint8_t)(120 - 2 * w);
    k = vt_tc_extra(f, &s, out);
    CHECK_INT(k, VT_TC_MAX_EXTRA);
    if (k)
        CHECK(f[out[k - 1]].t_s >= 18.0);
    check_spaced(f, out, k);
    free(f);
}
