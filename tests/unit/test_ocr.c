/*
 * Tests of the ocr stage against slides drawn at test time with ffmpeg's drawtext in
 * DejaVu Sans: the words come back with their boxes, blank slides give no lines, corrupt
 * files fail with VT_EMEDIA naming the file, two threads read what one thread reads, small
 * type is read, and a caption on a texture is read whole while the texture gives no text.
 */
#include "base/util.h"
#include "harness.h"
#include "visual/ocr.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tesseract/capi.h>
#include <unistd.h>

#define FONT      "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#define MONO_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"

/* A fresh directory under /tmp; caller removes it with vt_rm_rf and frees. */
static char *make_dir(void)
{
    char tmpl[] = "/tmp/vt-ocr-test-XXXXXX";

    if (!mkdtemp(tmpl))
        return NULL;
    return vt_xstrdup(tmpl);
}

/*
 * Draw a w x h white slide with lines[0..n-1] in black, 48 px, one every 120 px from
 * (100, 100), into dir/name as JPEG. Returns the path (caller frees) or NULL.
 */
static char *make_slide(const char *dir, const char *name, int w, int h, const char *const *lines,
                        size_t n)
{
    struct vt_sb cmd = {0};
    char *path = vt_xasprintf("%s/%s", dir, name);

    vt_sb_addf(&cmd, "ffmpeg -nostdin -v error -y -f lavfi -i color=white:s=%dx%d:d=1", w, h);
    if (n > 0) {
        vt_sb_adds(&cmd, " -vf \"");
        for (size_t i = 0; i < n; i++)
            vt_sb_addf(&cmd,
                       "%sdrawtext=fontfile=" FONT
                       ":text='%s':fontsize=48:fontcolor=black:x=100:y=%zu",
                       i ? "," : "", lines[i], 100 + 120 * i);
        vt_sb_adds(&cmd, "\"");
    }
    vt_sb_addf(&cmd, " -frames:v 1 -q:v 2 '%s'", path);
    if (system(cmd.buf) != 0) {
        free(path);
        path = NULL;
    }
    vt_sb_release(&cmd);
    return path;
}

static char *write_file(const char *dir, const char *name, const void *data, size_t n)
{
    char *path = vt_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "wb");

    if (!f || fwrite(data, 1, n, f) != n) {
        free(path);
        path = NULL;
    }
    if (f)
        fclose(f);
    return path;
}

static void release_pages(struct vt_ocr_page *pages, size_t n)
{
    for (size_t i = 0; i < n; i++)
        vt_ocr_page_release(&pages[i]);
}

VT_TEST(ocr_model)
{
    char err[256] = "";
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));
    char *want;

    CHECK(ocr != NULL);
    if (!ocr) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    want = vt_xasprintf("tesseract %s eng", TessVersion());
    CHECK_STR(vt_ocr_model(ocr), want);
    free(want);
    vt_ocr_free(ocr);
    vt_ocr_free(NULL);
}

/* A language whose data is nowhere is this machine's lack (VT_EHERE: another may have
 * it); a name that is no language, or a bad thread count, is the caller's error. */
VT_TEST(ocr_bad_language)
{
    char err[256] = "";
    int code = 0;

    CHECK(vt_ocr_new(1, "zzq", &code, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "'zzq'") != NULL);
    CHECK_INT(code, VT_EHERE);
    err[0] = '\0';
    CHECK(vt_ocr_new(1, "../eng", &code, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "'../eng'") != NULL);
    CHECK_INT(code, VT_EINVAL);
    CHECK(vt_ocr_new(1, "", NULL, err, sizeof(err)) == NULL);
    CHECK(vt_ocr_new(-1, "eng", &code, err, sizeof(err)) == NULL);
    CHECK_INT(code, VT_EINVAL);
}

/* A machine without the language's data (TESSDATA_PREFIX naming an empty folder): no
 * engine, VT_EHERE with the reason; with the variable as it was, the engine is made. */
VT_TEST(ocr_language_data_missing_here)
{
    char err[256] = "";
    char *dir = make_dir();
    const char *was = getenv("TESSDATA_PREFIX");
    char *saved = was ? vt_xstrdup(was) : NULL;
    struct vt_ocr *ocr;
    int code = 1;

    CHECK(dir != NULL);
    if (!dir)
        return;
    setenv("TESSDATA_PREFIX", dir, 1);
    ocr = vt_ocr_new(1, "eng", &code, err, sizeof(err));
    CHECK(ocr == NULL);
    CHECK_INT(code, VT_EHERE);
    CHECK(strstr(err, "'eng': cannot load tesseract language data on this machine") != NULL);
    vt_ocr_free(ocr);
    if (saved)
        setenv("TESSDATA_PREFIX", saved, 1);
    else
        unsetenv("TESSDATA_PREFIX");
    ocr = vt_ocr_new(1, "eng", &code, err, sizeof(err));
    CHECK(ocr != NULL);
    CHECK_INT(code, 0);
    vt_ocr_free(ocr);
    free(saved);
    rmdir(dir);
    free(dir);
}

VT_TEST(ocr_two_lines)
{
    static const char *const text[] = {"Quarterly revenue grew", "Costs fell by twelve percent"};
    char err[256] = "";
    char *dir = make_dir();
    char *path = dir ? make_slide(dir, "a.jpg", 1280, 720, text, 2) : NULL;
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));
    struct vt_ocr_page page = {0};
    const char *paths[1] = {path};

    CHECK(path != NULL);
    CHECK(ocr != NULL);
    if (!path || !ocr)
        goto out;
    CHECK_INT(vt_ocr_run(ocr, paths, 1, &page, NULL, NULL, err, sizeof(err)), 0);
    CHECK_INT(page.n_lines, 2);
    if (page.n_lines != 2)
        goto out;
    CHECK_STR(page.lines[0].text, "Quarterly revenue grew");
    CHECK_STR(page.lines[1].text, "Costs fell by twelve percent");
    for (size_t i = 0; i < page.n_lines; i++) {
        const struct vt_ocr_line *l = &page.lines[i];

        CHECK(l->conf >= 0.8 && l->conf <= 1.0);
        CHECK(l->box[0] >= 0 && l->box[1] >= 0 && l->box[2] > 0 && l->box[3] > 0);
        CHECK(l->box[0] + l->box[2] <= 1280 && l->box[1] + l->box[3] <= 720);
        /* drawtext puts the text's top-left corner near (100, 100 + 120 i). */
        CHECK(abs(l->box[0] - 100) < 15);
        CHECK(abs(l->box[1] - (100 + 120 * (int)i)) < 20);
        CHECK(l->box[3] > 25 && l->box[3] < 70);
    }
    CHECK(page.lines[0].box[1] + page.lines[0].box[3] < page.lines[1].box[1]);
out:
    vt_ocr_page_release(&page);
    vt_ocr_page_release(&page);
    CHECK(page.lines == NULL && page.n_lines == 0);
    vt_ocr_free(ocr);
    free(path);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

VT_TEST(ocr_blank)
{
    char err[256] = "";
    char *dir = make_dir();
    char *path = dir ? make_slide(dir, "blank.jpg", 640, 360, NULL, 0) : NULL;
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));
    struct vt_ocr_page page = {0};
    const char *paths[1] = {path};

    CHECK(path != NULL);
    CHECK(ocr != NULL);
    if (!path || !ocr)
        goto out;
    CHECK_INT(vt_ocr_run(ocr, paths, 1, &page, NULL, NULL, err, sizeof(err)), 0);
    CHECK_INT(page.n_lines, 0);
    CHECK(page.lines == NULL);
    CHECK_INT(vt_ocr_run(ocr, paths, 0, &page, NULL, NULL, err, sizeof(err)), 0);
out:
    vt_ocr_page_release(&page);
    vt_ocr_free(ocr);
    free(path);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

VT_TEST(ocr_corrupt)
{
    static const char *const text[] = {"Good slide"};
    unsigned char noise[3000];
    char err[512] = "";
    char *dir = make_dir();
    struct vt_ocr *ocr = vt_ocr_new(2, "eng", NULL, err, sizeof(err));
    char *good = NULL, *bad[5] = {NULL};
    FILE *f = NULL;
    unsigned char *jpeg = NULL;
    long jpeg_len = 0;

    CHECK(dir != NULL);
    CHECK(ocr != NULL);
    if (!dir || !ocr)
        goto out;
    good = make_slide(dir, "good.jpg", 640, 360, text, 1);
    CHECK(good != NULL);
    if (!good)
        goto out;
    /* Noise, an empty file, a JPEG cut in half, a JPEG header on noise, a missing file. */
    srand(7);
    for (size_t i = 0; i < sizeof(noise); i++)
        noise[i] = (unsigned char)rand();
    bad[0] = write_file(dir, "noise.jpg", noise, sizeof(noise));
    bad[1] = write_file(dir, "empty.jpg", "", 0);
    f = fopen(good, "rb");
    if (f && fseek(f, 0, SEEK_END) == 0)
        jpeg_len = ftell(f);
    if (f && jpeg_len > 0 && fseek(f, 0, SEEK_SET) == 0) {
        jpeg = vt_xmalloc((size_t)jpeg_len);
        if (fread(jpeg, 1, (size_t)jpeg_len, f) != (size_t)jpeg_len)
            jpeg_len = 0;
    }
    CHECK(jpeg_len > 1000);
    if (jpeg_len <= 1000)
        goto out;
    bad[2] = write_file(dir, "half.jpg", jpeg, (size_t)jpeg_len / 2);
    memcpy(noise, jpeg, 600);
    bad[3] = write_file(dir, "header.jpg", noise, sizeof(noise));
    bad[4] = vt_xasprintf("%s/missing.jpg", dir);

    for (size_t i = 0; i < VT_ARRAY_LEN(bad); i++) {
        struct vt_ocr_page page = {0};
        const char *paths[1] = {bad[i]};

        CHECK(bad[i] != NULL);
        if (!bad[i])
            continue;
        err[0] = '\0';
        CHECK_INT(vt_ocr_run(ocr, paths, 1, &page, NULL, NULL, err, sizeof(err)), VT_EMEDIA);
        CHECK(strstr(err, bad[i]) != NULL);
        CHECK(page.lines == NULL && page.n_lines == 0);
    }

    /* Among good frames, the lowest failing one is named and nothing is left to free. */
    {
        const char *paths[6] = {good, good, bad[0], good, bad[1], good};
        struct vt_ocr_page pages[6] = {{0}};

        err[0] = '\0';
        CHECK_INT(vt_ocr_run(ocr, paths, 6, pages, NULL, NULL, err, sizeof(err)), VT_EMEDIA);
        CHECK(strstr(err, "noise.jpg") != NULL);
        for (size_t i = 0; i < 6; i++)
            CHECK(pages[i].lines == NULL && pages[i].n_lines == 0);
    }

    /* The engines are still good after failures. */
    {
        const char *paths[1] = {good};
        struct vt_ocr_page page = {0};

        CHECK_INT(vt_ocr_run(ocr, paths, 1, &page, NULL, NULL, err, sizeof(err)), 0);
        CHECK_INT(page.n_lines, 1);
        if (page.n_lines == 1)
            CHECK_STR(page.lines[0].text, "Good slide");
        vt_ocr_page_release(&page);
    }
out:
    if (f)
        fclose(f);
    free(jpeg);
    for (size_t i = 0; i < VT_ARRAY_LEN(bad); i++)
        free(bad[i]);
    free(good);
    vt_ocr_free(ocr);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

struct progress_log {
    pthread_t caller;
    int calls, off_thread, backwards;
    double last;
};

static void on_progress(void *user, double frac)
{
    struct progress_log *log = user;

    log->calls++;
    if (!pthread_equal(pthread_self(), log->caller))
        log->off_thread++;
    if (frac < log->last || frac < 0 || frac > 1)
        log->backwards++;
    log->last = frac;
}

VT_TEST(ocr_threads_match)
{
    static const char *const text[][2] = {
        {"Agenda for today", "Review of the roadmap"}, {"Sales by region", "North grew fastest"},
        {"Hiring plan", "Four engineers in spring"},   {"Questions", "Thank you for listening"},
        {"Budget summary", "Travel costs are down"},
    };
    enum { N = VT_ARRAY_LEN(text) };
    char err[256] = "";
    char *dir = make_dir();
    char *paths[N] = {NULL};
    struct vt_ocr_page one[N] = {{0}}, two[N] = {{0}};
    struct vt_ocr *ocr1 = vt_ocr_new(1, "eng", NULL, err, sizeof(err));
    struct vt_ocr *ocr2 = vt_ocr_new(2, "eng", NULL, err, sizeof(err));
    struct vt_ocr *ocr0 = vt_ocr_new(0, "eng", NULL, err, sizeof(err));
    struct progress_log log = {.caller = pthread_self()};
    int ok = dir && ocr1 && ocr2 && ocr0;

    CHECK(ok);
    for (size_t i = 0; ok && i < N; i++) {
        char name[32];

        snprintf(name, sizeof(name), "s%zu.jpg", i);
        paths[i] = make_slide(dir, name, 960, 540, text[i], 2);
        CHECK(paths[i] != NULL);
        ok = paths[i] != NULL;
    }
    if (!ok)
        goto out;
    CHECK_INT(vt_ocr_run(ocr1, (const char *const *)paths, N, one, NULL, NULL, err, sizeof(err)),
              0);
    CHECK_INT(
        vt_ocr_run(ocr2, (const char *const *)paths, N, two, on_progress, &log, err, sizeof(err)),
        0);
    CHECK(log.calls >= 1 && log.calls <= N);
    CHECK_INT(log.off_thread, 0);
    CHECK_INT(log.backwards, 0);
    CHECK_NEAR(log.last, 1.0, 1e-9);
    for (size_t i = 0; i < N; i++) {
        CHECK_INT(one[i].n_lines, 2);
        CHECK_INT(two[i].n_lines, one[i].n_lines);
        if (one[i].n_lines != 2 || two[i].n_lines != 2)
            continue;
        CHECK_STR(one[i].lines[0].text, text[i][0]);
        CHECK_STR(one[i].lines[1].text, text[i][1]);
        for (size_t j = 0; j < 2; j++) {
            CHECK_STR(two[i].lines[j].text, one[i].lines[j].text);
            CHECK(two[i].lines[j].conf == one[i].lines[j].conf);
            CHECK(memcmp(two[i].lines[j].box, one[i].lines[j].box, sizeof(one[i].lines[j].box)) ==
                  0);
        }
    }
    /* Engines are reused: a second run on the same engines reads the same. */
    release_pages(two, N);
    CHECK_INT(vt_ocr_run(ocr0, (const char *const *)paths, N, two, NULL, NULL, err, sizeof(err)),
              0);
    for (size_t i = 0; i < N; i++) {
        CHECK_INT(two[i].n_lines, one[i].n_lines);
        for (size_t j = 0; j < one[i].n_lines && j < two[i].n_lines; j++)
            CHECK_STR(two[i].lines[j].text, one[i].lines[j].text);
    }
out:
    release_pages(one, N);
    release_pages(two, N);
    for (size_t i = 0; i < N; i++)
        free(paths[i]);
    vt_ocr_free(ocr0);
    vt_ocr_free(ocr1);
    vt_ocr_free(ocr2);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

/*
 * A slide in large type with a footnote and a caption in 12 and 14 px (Liberation Sans
 * Narrow, grey): with the small-text pass every word of them is read, and no word of the
 * slide is read twice (the pass replaces lines, it does not add copies).
 */
VT_TEST(ocr_small_text)
{
    static const char *const big[] = {"Harbour traffic", "Rainfall and yield"};
    static const char *const small[] = {"Source annual survey of regional wholesale prices",
                                        "Median rental income by sector and quarter"};
    static const char *const words[] = {"harbour", "traffic", "rainfall", "yield",     "source",
                                        "annual",  "survey",  "regional", "wholesale", "prices",
                                        "median",  "rental",  "income",   "sector",    "quarter"};
    char err[256] = "";
    char *dir = make_dir();
    char *path = dir ? vt_xasprintf("%s/small.jpg", dir) : NULL;
    struct vt_sb cmd = {0}, all = {0};
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));
    struct vt_ocr_page page = {0};
    const char *paths[1] = {path};

    CHECK(path != NULL);
    CHECK(ocr != NULL);
    if (!path || !ocr)
        goto out;
    vt_sb_adds(&cmd, "ffmpeg -nostdin -v error -y -f lavfi -i color=white:s=1280x720:d=1 -vf \"");
    for (size_t i = 0; i < 2; i++)
        vt_sb_addf(&cmd,
                   "drawtext=fontfile=" FONT ":text='%s':fontsize=44:fontcolor=black:x=100:y=%zu,",
                   big[i], 120 + 100 * i);
    for (size_t i = 0; i < 2; i++)
        vt_sb_addf(&cmd,
                   "%sdrawtext=fontfile=/usr/share/fonts/truetype/liberation/"
                   "LiberationSansNarrow-Regular.ttf:text='%s':fontsize=%d:fontcolor=0x505050:"
                   "x=%d:y=%zu",
                   i ? "," : "", small[i], i ? 14 : 12, i ? 600 : 100, 620 + 50 * i);
    vt_sb_addf(&cmd, "\" -frames:v 1 -q:v 3 '%s'", path);
    CHECK_INT(system(cmd.buf), 0);
    CHECK_INT(vt_ocr_run(ocr, paths, 1, &page, NULL, NULL, err, sizeof(err)), 0);
    for (size_t i = 0; i < page.n_lines; i++) {
        CHECK(!page.lines[i].noise);
        vt_sb_addf(&all, " %s ", page.lines[i].text);
    }
    for (char *c = all.buf; c && *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    for (size_t i = 0; i < VT_ARRAY_LEN(words); i++) {
        char *w = vt_xasprintf(" %s ", words[i]);
        const char *at = all.buf ? strstr(all.buf, w) : NULL;

        if (!at || strstr(at + 1, w)) {
            fprintf(stderr, "  '%s' read %s: %s\n", words[i], at ? "twice" : "never",
                    all.buf ? all.buf : "");
            vt_test_failures++;
        }
        free(w);
    }
out:
    vt_sb_release(&cmd);
    vt_sb_release(&all);
    vt_ocr_page_release(&page);
    vt_ocr_free(ocr);
    free(path);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

/* Run the command line in cmd and release cmd: 0 when it succeeded, else -1. */
static int run_ffmpeg(struct vt_sb *cmd)
{
    int rc = cmd->buf && system(cmd->buf) == 0 ? 0 : -1;

    vt_sb_release(cmd);
    return rc;
}

/* Run cmd (released), which draws the frame at path, and check that it reads as one line,
 * want. */
static void check_one_line(struct vt_ocr *ocr, struct vt_sb *cmd, const char *path,
                           const char *want)
{
    const char *paths[1] = {path};
    struct vt_ocr_page page = {0};
    char err[256] = "";

    CHECK_INT(run_ffmpeg(cmd), 0);
    CHECK_INT(vt_ocr_run(ocr, paths, 1, &page, NULL, NULL, err, sizeof(err)), 0);
    CHECK_INT(page.n_lines, 1);
    if (page.n_lines == 1)
        CHECK_STR(page.lines[0].text, want);
    vt_ocr_page_release(&page);
}

/*
 * A caption box (dark type on white) over a texture of fine specks (ffmpeg's rule 110
 * cellular automaton, whose page layout costs Tesseract 17-24 s and came out as three pieces
 * of the caption and garbage): the frame is taken for a texture, the caption comes out
 * whole as its one text line, and the texture alone (the same automaton without the box)
 * gives no line that is not noise.
 */
VT_TEST(ocr_texture_caption)
{
    static const char caption[] = "Harvest yield by region";
    char err[256] = "";
    char *dir = make_dir();
    char *boxed = dir ? vt_xasprintf("%s/boxed.jpg", dir) : NULL;
    char *bare = dir ? vt_xasprintf("%s/bare.jpg", dir) : NULL;
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));
    struct vt_ocr_page pages[2] = {{0}};
    const char *paths[2] = {boxed, bare};
    struct vt_sb cmd = {0};
    double specks = 0;
    size_t text_lines = 0;

    CHECK(dir != NULL);
    CHECK(ocr != NULL);
    if (!dir || !ocr)
        goto out;
    vt_sb_addf(&cmd,
               "ffmpeg -nostdin -v error -y -f lavfi -i cellauto=s=1280x720:rule=110:seed=1 -vf "
               "\"drawbox=x=340:y=300:w=600:h=90:color=white:t=fill,drawtext=fontfile=" FONT
               ":text='%s':fontsize=44:fontcolor=0x202020:x=380:y=322\" -frames:v 1 -q:v 2 '%s'",
               caption, boxed);
    CHECK_INT(run_ffmpeg(&cmd), 0);
    vt_sb_addf(&cmd,
               "ffmpeg -nostdin -v error -y -f lavfi -i cellauto=s=1280x720:rule=110:seed=1 "
               "-frames:v 1 -q:v 2 '%s'",
               bare);
    CHECK_INT(run_ffmpeg(&cmd), 0);
    CHECK_INT(vt_ocr_texture(ocr, boxed, &specks, err, sizeof(err)), 1);
    CHECK(specks >= 20000);
    CHECK_INT(vt_ocr_run(ocr, paths, 2, pages, NULL, NULL, err, sizeof(err)), 0);
    for (size_t i = 0; i < pages[0].n_lines; i++) {
        const struct vt_ocr_line *l = &pages[0].lines[i];

        if (l->noise)
            continue;
        text_lines++;
        CHECK_STR(l->text, caption);
        /* the line is where the box is */
        CHECK(l->box[0] >= 340 && l->box[0] + l->box[2] <= 940);
        CHECK(l->box[1] >= 300 && l->box[1] + l->box[3] <= 390);
    }
    CHECK_INT(text_lines, 1);
    for (size_t i = 0; i < pages[1].n_lines; i++) {
        if (!pages[1].lines[i].noise)
            fprintf(stderr, "  texture line read as text: '%s' (%.2f)\n", pages[1].lines[i].text,
                    pages[1].lines[i].conf);
        CHECK(pages[1].lines[i].noise);
    }
out:
    vt_sb_release(&cmd);
    release_pages(pages, 2);
    vt_ocr_free(ocr);
    free(boxed);
    free(bare);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

/*
 * The texture threshold against real pictures (tests/data/mobilenet-v1-0.25-224: a burger
 * and a sparrow, Apache-2.0), at their own size and scaled to 720p as a keyframe would be,
 * and against a generated fine texture (a Game of Life board): the pictures stay far below
 * the threshold (they are read normally), the board is above it.
 */
VT_TEST(ocr_texture_threshold)
{
    static const char *const pictures[] = {"burger-224.png", "sparrow.png"};
    char err[256] = "";
    char *dir = make_dir();
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));
    struct vt_sb cmd = {0};
    double specks = -1;
    char *path = NULL;

    CHECK(dir != NULL);
    CHECK(ocr != NULL);
    if (!dir || !ocr)
        goto out;
    for (size_t i = 0; i < VT_ARRAY_LEN(pictures); i++) {
        char *src = vt_xasprintf("tests/data/mobilenet-v1-0.25-224/%s", pictures[i]);

        free(path);
        path = vt_xasprintf("%s/pic%zu.jpg", dir, i);
        specks = -1;
        CHECK_INT(vt_ocr_texture(ocr, src, &specks, err, sizeof(err)), 0);
        CHECK(specks >= 0 && specks < 20000 / 4);
        vt_sb_addf(&cmd,
                   "ffmpeg -nostdin -v error -y -i '%s' -vf scale=1280:720:flags=bicubic "
                   "-frames:v 1 -q:v 2 '%s'",
                   src, path);
        CHECK_INT(run_ffmpeg(&cmd), 0);
        specks = -1;
        CHECK_INT(vt_ocr_texture(ocr, path, &specks, err, sizeof(err)), 0);
        CHECK(specks >= 0 && specks < 20000 / 4);
        free(src);
    }
    free(path);
    path = vt_xasprintf("%s/life.png", dir);
    vt_sb_addf(&cmd,
               "ffmpeg -nostdin -v error -y -f lavfi -i life=s=1280x720:mold=10:ratio=0.3:seed=1 "
               "-frames:v 1 '%s'",
               path);
    CHECK_INT(run_ffmpeg(&cmd), 0);
    CHECK_INT(vt_ocr_texture(ocr, path, &specks, err, sizeof(err)), 1);
    CHECK_INT(vt_ocr_texture(ocr, "/nonexistent/x.jpg", &specks, err, sizeof(err)), VT_EMEDIA);
out:
    vt_sb_release(&cmd);
    free(path);
    vt_ocr_free(ocr);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

/*
 * Light type on a dark ground, as JPEG and as PNG with an alpha channel (a frame that is read
 * inverted must not turn transparent): both read as a light slide of the same lines reads.
 */
VT_TEST(ocr_dark_slide)
{
    static const char *const text[] = {"Quarterly revenue grew", "Costs fell by twelve percent"};
    static const char *const names[] = {"dark.jpg", "dark.png"};
    char err[256] = "";
    char *dir = make_dir();
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));
    struct vt_sb cmd = {0};

    CHECK(dir != NULL);
    CHECK(ocr != NULL);
    if (!dir || !ocr)
        goto out;
    for (size_t k = 0; k < VT_ARRAY_LEN(names); k++) {
        char *path = vt_xasprintf("%s/%s", dir, names[k]);
        struct vt_ocr_page page = {0};
        const char *paths[1] = {path};

        vt_sb_adds(&cmd, "ffmpeg -nostdin -v error -y -f lavfi -i color=0x18243c:s=1280x720:d=1 "
                         "-vf \"");
        for (size_t i = 0; i < VT_ARRAY_LEN(text); i++)
            vt_sb_addf(&cmd,
                       "%sdrawtext=fontfile=" FONT
                       ":text='%s':fontsize=48:fontcolor=0xf0f0f0:x=100:y=%zu",
                       i ? "," : "", text[i], 100 + 120 * i);
        vt_sb_addf(&cmd, "%s\" -frames:v 1 '%s'", k ? ",format=rgba" : "", path);
        CHECK_INT(run_ffmpeg(&cmd), 0);
        CHECK_INT(vt_ocr_run(ocr, paths, 1, &page, NULL, NULL, err, sizeof(err)), 0);
        CHECK_INT(page.n_lines, 2);
        for (size_t i = 0; i < page.n_lines && i < 2; i++) {
            CHECK_STR(page.lines[i].text, text[i]);
            CHECK(!page.lines[i].noise);
            CHECK(abs(page.lines[i].box[1] - (100 + 120 * (int)i)) < 20);
        }
        vt_ocr_page_release(&page);
        free(path);
    }
out:
    vt_sb_release(&cmd);
    vt_ocr_free(ocr);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

/*
 * A 1280x720 frame at path: four lines of 20 px type on the left of the ground, and a window
 * (680x560 at 560,80, a terminal's size on a laptop screen) of eight lines of 16 px
 * monospaced type, every 24 px, in the window's colours (a dialog's are one colour).
 */
static int make_window_frame(const char *path, const char *const *page, const char *const *win,
                             const char *ground, const char *page_ink, const char *window,
                             const char *const *window_ink)
{
    struct vt_sb cmd = {0};

    vt_sb_addf(&cmd,
               "ffmpeg -nostdin -v error -y -f lavfi -i color=%s:s=1280x720:d=1 -vf \""
               "drawbox=x=560:y=80:w=680:h=560:color=%s:t=fill",
               ground, window);
    for (int i = 0; i < 4; i++)
        vt_sb_addf(&cmd, ",drawtext=fontfile=" FONT ":text='%s':fontsize=20:fontcolor=%s:x=40:y=%d",
                   page[i], page_ink, 110 + 44 * i);
    for (int i = 0; i < 8; i++)
        vt_sb_addf(&cmd,
                   ",drawtext=fontfile=" MONO_FONT ":text='%s':fontsize=16:fontcolor=%s:x=580:y=%d",
                   win[i], window_ink[i], 130 + 24 * i);
    vt_sb_addf(&cmd, "%s\" -frames:v 1 '%s'", strstr(path, ".png") ? ",format=rgba" : "", path);
    return run_ffmpeg(&cmd);
}

/* How many of the n lines of want are page's lines from the first one on, as they are. */
static size_t lines_in_order(const struct vt_ocr_page *page, size_t first, const char *const *want,
                             size_t n)
{
    size_t found = 0;

    for (size_t i = 0; i < n && first + i < page->n_lines; i++)
        found += !page->lines[first + i].noise && !strcmp(page->lines[first + i].text, want[i]);
    return found;
}

/*
 * Dark parts of a frame (OCR_REGION_*): a dark terminal window with light type, some of it
 * dimmed, on a light page (the frame's mean stays light), and a light dialog on a dark screen
 * (inverted as a whole, the dialog becomes the dark part), as JPEG and as PNG with an alpha
 * channel: every line is read, in reading order, where it is. Without the inversion of dark
 * parts, the terminal's are not (Tesseract 5.3: "git status clean", dimmed, loses "git" and
 * comes out of order); the dialog reads either way.
 */
VT_TEST(ocr_dark_window)
{
    static const char *const page[] = {"Annual budget", "Customer survey", "Export figures",
                                       "Mineral deposits"};
    static const char *const win[] = {"make test passed",       "git status clean",
                                      "railway survey results", "harvest yield estimate",
                                      "quarterly revenue grew", "install the package",
                                      "deploy the server",      "weekly rainfall total"};
    static const char *const term_ink[] = {"0xdcdcdc", "0x7a7a7a", "0x5fd75f", "0xdcdcdc",
                                           "0x7a7a7a", "0xdcdcdc", "0x5fd75f", "0x7a7a7a"};
    static const char *const dialog_ink[] = {"0x202020", "0x202020", "0x202020", "0x202020",
                                             "0x202020", "0x202020", "0x202020", "0x202020"};
    /* the file, ground, type on the ground, window, its type */
    static const struct {
        const char *file, *ground, *ink, *window;
        const char *const *window_ink;
    } cases[] = {{"window.jpg", "0xf0f0f0", "0x303030", "0x1a1a1a", term_ink},
                 {"window.png", "0xf0f0f0", "0x303030", "0x1a1a1a", term_ink},
                 {"dialog.jpg", "0x1e1e1e", "0xd4d4d4", "0xf8f8f8", dialog_ink}};
    char err[256] = "";
    char *dir = make_dir();
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));

    CHECK(dir != NULL);
    CHECK(ocr != NULL);
    for (size_t k = 0; dir && ocr && k < VT_ARRAY_LEN(cases); k++) {
        char *path = vt_xasprintf("%s/%s", dir, cases[k].file);
        struct vt_ocr_page got = {0};
        const char *paths[1] = {path};

        CHECK_INT(make_window_frame(path, page, win, cases[k].ground, cases[k].ink, cases[k].window,
                                    cases[k].window_ink),
                  0);
        CHECK_INT(vt_ocr_run(ocr, paths, 1, &got, NULL, NULL, err, sizeof(err)), 0);
        CHECK_INT(got.n_lines, 12);
        CHECK_INT(lines_in_order(&got, 0, page, 4), 4);
        CHECK_INT(lines_in_order(&got, 4, win, 8), 8);
        for (size_t i = 4; i < got.n_lines; i++)
            CHECK(abs(got.lines[i].box[0] - 580) < 10 &&
                  abs(got.lines[i].box[1] - (130 + 24 * ((int)i - 4))) < 10);
        vt_ocr_page_release(&got);
        if (cases[k].window_ink == term_ink) {
            vt_ocr_set_dark_parts(ocr, 0);
            CHECK_INT(vt_ocr_run(ocr, paths, 1, &got, NULL, NULL, err, sizeof(err)), 0);
            vt_ocr_set_dark_parts(ocr, 1);
            CHECK(lines_in_order(&got, 4, win, 8) < 8);
            vt_ocr_page_release(&got);
        }
        free(path);
    }
    vt_ocr_free(ocr);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

/*
 * Frames too small to hold a window (under 5 cells of OCR_REGION_CELL px on a side: a thin
 * strip, a few pixels), light and dark, with and without the inversion of dark parts: read
 * without error and without a line.
 */
VT_TEST(ocr_tiny_frames)
{
    static const char *const sizes[] = {"2x2", "8x8", "7x5", "16x2", "2x600", "39x720", "40x40"};
    static const char *const colours[] = {"black", "white", "0x1e1e1e"};
    char err[256] = "";
    char *dir = make_dir();
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));

    CHECK(dir != NULL);
    CHECK(ocr != NULL);
    for (size_t k = 0; dir && ocr && k < VT_ARRAY_LEN(sizes) * VT_ARRAY_LEN(colours); k++) {
        const char *size = sizes[k / VT_ARRAY_LEN(colours)];
        const char *colour = colours[k % VT_ARRAY_LEN(colours)];
        char *path = vt_xasprintf("%s/%zu.png", dir, k);
        const char *paths[1] = {path};
        struct vt_sb cmd = {0};

        vt_sb_addf(&cmd,
                   "ffmpeg -nostdin -v error -y -f lavfi -i color=%s:s=%s:d=1 -pix_fmt rgb24 "
                   "-frames:v 1 '%s'",
                   colour, size, path);
        CHECK_INT(run_ffmpeg(&cmd), 0);
        for (int on = 0; on < 2; on++) {
            struct vt_ocr_page page = {0};

            vt_ocr_set_dark_parts(ocr, on);
            err[0] = 0;
            if (vt_ocr_run(ocr, paths, 1, &page, NULL, NULL, err, sizeof(err)))
                fprintf(stderr, "# %s %s, dark parts %d: %s\n", size, colour, on, err);
            CHECK(!err[0]);
            CHECK_INT(page.n_lines, 0);
            vt_ocr_page_release(&page);
        }
        free(path);
    }
    vt_ocr_free(ocr);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

/*
 * Large bold titles, black on white, are read as they are: their cells close into a dark
 * block as a window's would, but they are no dark ground (a title inverted in place was
 * lost: "AUTOMOBILE" at 64 px read nothing).
 */
VT_TEST(ocr_bold_title)
{
    static const struct {
        const char *text;
        int size, x, y;
    } titles[] = {{"AUTOMOBILE", 64, 80, 140}, {"HARBOR", 96, 120, 120}, {"Budget", 120, 100, 100}};
    char err[256] = "";
    char *dir = make_dir();
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));

    CHECK(dir != NULL);
    CHECK(ocr != NULL);
    for (size_t k = 0; dir && ocr && k < VT_ARRAY_LEN(titles); k++) {
        char *path = vt_xasprintf("%s/title%zu.png", dir, k);
        struct vt_sb cmd = {0};

        vt_sb_addf(&cmd,
                   "ffmpeg -nostdin -v error -y -f lavfi -i color=white:s=640x360:d=1 -vf "
                   "\"drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf:"
                   "text='%s':fontsize=%d:fontcolor=black:x=%d:y=%d\" -frames:v 1 '%s'",
                   titles[k].text, titles[k].size, titles[k].x, titles[k].y, path);
        check_one_line(ocr, &cmd, path, titles[k].text);
        free(path);
    }
    vt_ocr_free(ocr);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

/*
 * A terminal's block cursor (OCR_BLOCK_*): a prompt with a command typed and the cursor in
 * the next cell, and a line with the cursor after a space, on a dark ground, as JPEG: each
 * line reads as typed. Without the blocks made ground first, Tesseract 5.3 reads the cursor
 * as a letter of the word before it. A bold title's I is too narrow to be taken for one
 * (ocr_bold_title reads "AUTOMOBILE").
 */
VT_TEST(ocr_block_cursor)
{
    static const struct {
        const char *text, *want;
    } lines[] = {{"> neofetch\xe2\x96\x88", "> neofetch"},
                 {"> echo quarterly revenue grew \xe2\x96\x88", "> echo quarterly revenue grew"}};
    char err[256] = "";
    char *dir = make_dir();
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));

    CHECK(dir != NULL);
    CHECK(ocr != NULL);
    for (size_t k = 0; dir && ocr && k < VT_ARRAY_LEN(lines); k++) {
        char *path = vt_xasprintf("%s/cursor%zu.jpg", dir, k);
        struct vt_sb cmd = {0};

        vt_sb_addf(&cmd,
                   "ffmpeg -nostdin -v error -y -f lavfi -i color=0x171717:s=960x540:d=1 -vf "
                   "\"drawtext=fontfile=" MONO_FONT ":text='%s':fontsize=22:fontcolor=0xdcdcdc:"
                   "x=40:y=60\" -frames:v 1 '%s'",
                   lines[k].text, path);
        check_one_line(ocr, &cmd, path, lines[k].want);
        free(path);
    }
    vt_ocr_free(ocr);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
}

/*
 * Draw one frame with ffmpeg from input (its "-f lavfi -i ..." or "-i FILE" arguments) through
 * the filter chain vf, as JPEG of quality q (ffmpeg's -q:v) in a directory of its own, and
 * read it with one engine into *page (caller releases). Returns 0, or -1 (with a failure
 * counted) when it could not be drawn or read.
 */
static int read_drawn(const char *input, const char *vf, int q, struct vt_ocr_page *page)
{
    char err[256] = "";
    char *dir = make_dir(), *path = dir ? vt_xasprintf("%s/drawn.jpg", dir) : NULL;
    struct vt_ocr *ocr = vt_ocr_new(1, "eng", NULL, err, sizeof(err));
    const char *paths[1] = {path};
    struct vt_sb cmd = {0};
    int rc = -1;

    CHECK(dir != NULL);
    CHECK(ocr != NULL);
    if (dir && ocr) {
        vt_sb_addf(&cmd, "ffmpeg -nostdin -v error -y %s -vf \"%s\" -frames:v 1 -q:v %d '%s'",
                   input, vf, q, path);
        CHECK_INT(run_ffmpeg(&cmd), 0);
        rc = vt_ocr_run(ocr, paths, 1, page, NULL, NULL, err, sizeof(err));
        CHECK_INT(rc, 0);
    }
    vt_ocr_free(ocr);
    if (dir)
        vt_rm_rf(dir);
    free(dir);
    free(path);
    return rc ? -1 : 0;
}

/* Whether a line of page holds want (and is text, not noise, if text). */
static int page_holds(const struct vt_ocr_page *page, const char *want, int text)
{
    for (size_t i = 0; i < page->n_lines; i++)
        if ((!text || !page->lines[i].noise) && strstr(page->lines[i].text, want))
            return 1;
    return 0;
}

/* Whether dim (a placeholder, 0x444444) under a bright line on a terminal's dark ground reads
 * with want in a line (that is text, if text). */
static int dim_line_reads(const char *dim, const char *want, int text)
{
    struct vt_ocr_page page = {0};
    char *vf = vt_xasprintf("drawtext=fontfile=" MONO_FONT ":text='Can you tell me a secret?':"
                            "fontsize=16:fontcolor=0xe0e0e0:x=48:y=52,drawtext=fontfile=" MONO_FONT
                            ":text='%s':fontsize=16:fontcolor=0x444444:x=72:y=110",
                            dim);
    int found = read_drawn("-f lavfi -i color=0x1a1a1a:s=720x360:d=1", vf, 3, &page) == 0 &&
                page_holds(&page, want, text);

    vt_ocr_page_release(&page);
    free(vf);
    return found;
}

/*
 * A placeholder in dim type on a terminal's dark ground (gum's and Bubble Tea's text areas:
 * grey 42 levels over the ground) under a bright line: Tesseract's layout takes the bright
 * line alone; the small-text pass looks for dim strokes on a plain ground and reads it.
 */
VT_TEST(ocr_dim_placeholder)
{
    CHECK(dim_line_reads("Describe the weather today", "weather today", 0));
}

/*
 * A dim placeholder whose two-letter words stand between longer ones (gum's "I'll keep it to
 * myself, I promise!"): Tesseract's layout takes "will keep" and "myself", the stroke finder
 * the short words, too short for a line candidate; as pieces filling the gap of a row they
 * are joined to the words beside them and read with them.
 */
VT_TEST(ocr_short_words_in_gap)
{
    CHECK(dim_line_reads("I will keep it to myself, I promise", "keep it to myself", 1));
}

/*
 * A lower third: a name and a title in white over a band of 40 % black across a busy
 * picture (the burger of tests/data/mobilenet-v1-0.25-224, Apache-2.0), softened and
 * compressed as a 360p video's frame is. The band's dark gaps between the letters are
 * strokes of the other polarity; looked for together with the light ones they joined the
 * name to the picture around it, and the name was lost (at every JPEG quality from 2 to 6;
 * read now, as text or, at some, under the noise floor).
 */
VT_TEST(ocr_lower_third)
{
    struct vt_ocr_page page = {0};

    CHECK_INT(read_drawn("-i tests/data/mobilenet-v1-0.25-224/burger-224.png",
                         "scale=640:360,drawbox=x=0:y=244:w=640:h=60:color=black@0.4:t=fill,"
                         "drawtext=fontfile=" FONT ":text='MARGOT':fontsize=17:fontcolor=white:"
                         "x=40:y=252,drawtext=fontfile=" FONT ":text='Head of Research - "
                         "Northern Europe and Africa':fontsize=13:fontcolor=white:x=40:y=278,"
                         "scale=480:270,scale=640:360",
                         5, &page),
              0);
    CHECK(page_holds(&page, "MARGOT", 0));
    CHECK(page_holds(&page, "Head of Research", 0));
    vt_ocr_page_release(&page);
}

/*
 * A code editor (VS Code's dark colours) in a window beside a light panel: its line numbers,
 * two digits of 8 px in dim grey in the gutter, are too short for a line candidate and
 * Tesseract's layout takes them for specks; as a column they are read, each as its own line,
 * and the code is read as before.
 */
VT_TEST(ocr_gutter_numbers)
{
    static const char *const code[] = {"<section id=main>", "<div class=box>",    "</div>",
                                       "</section>",        "<footer>",           "<p>Yield</p>",
                                       "</footer>",         "<script src=app.js>"};
    struct vt_ocr_page page = {0};
    struct vt_sb vf = {0};
    size_t numbers = 0, code_read = 0;

    vt_sb_adds(&vf, "drawbox=x=0:y=0:w=720:h=40:color=0xf3f3f3:t=fill,"
                    "drawbox=x=470:y=40:w=250:h=360:color=white:t=fill");
    for (size_t i = 0; i < 14; i++) {
        vt_sb_addf(&vf,
                   ",drawtext=fontfile=" MONO_FONT ":text='%zu':fontsize=11:fontcolor=0x858585:"
                   "x=29:y=%zu",
                   i + 12, 52 + 20 * i);
        if (i < VT_ARRAY_LEN(code))
            vt_sb_addf(&vf,
                       ",drawtext=fontfile=" MONO_FONT ":text='%s':fontsize=11:"
                       "fontcolor=0x9cdcfe:x=64:y=%zu",
                       code[i], 52 + 20 * i);
    }
    CHECK_INT(read_drawn("-f lavfi -i color=0x1e1e1e:s=720x400:d=1", vf.buf, 3, &page), 0);
    for (size_t i = 0; i < page.n_lines; i++) {
        const struct vt_ocr_line *l = &page.lines[i];
        char want[16];

        snprintf(want, sizeof(want), "%d", 12 + (l->box[1] - 50) / 20);
        /* a number is read where it stands, in the gutter */
        if (l->box[0] < 50 && strcmp(l->text, want) == 0)
            numbers++;
        code_read += l->box[0] >= 60 && l->box[0] < 80;
    }
    CHECK(numbers >= 12);
    CHECK(code_read >= VT_ARRAY_LEN(code) - 1);
    vt_sb_release(&vf);
    vt_ocr_page_release(&page);
}

/*
 * A terminal editor's shortcut bar (nano's): key labels in reverse video, ^G over ^X, light
 * cells of dark type on a dark screen, which Tesseract's layout leaves out (it reads the rows'
 * words, and a cell as a letter or two of garbage). Each cell is found in its binary image
 * and read inverted; the caret, which Tesseract reads as a quote, 'A' or 'a', is known by
 * standing above the line. At least 5 of the 8 labels are read whole, where they are.
 */
VT_TEST(ocr_reverse_key_labels)
{
    static const char keys[] = "GOWKXRVU";
    static const char *const names[] = {"Help", "Write Out", "Where Is", "Cut",
                                        "Exit", "Read File", "Replace",  "Paste"};
    struct vt_ocr_page page = {0};
    struct vt_sb vf = {0};
    int read = 0;

    vt_sb_adds(&vf, "drawtext=fontfile=" MONO_FONT ":text='GNU nano 7.2   notes.txt':"
                    "fontsize=14:fontcolor=0xd0d0d0:x=10:y=20");
    for (int i = 0; i < 8; i++) {
        int x = 10 + i % 4 * 112, y = 300 + i / 4 * 20;

        vt_sb_addf(
            &vf,
            ",drawbox=x=%d:y=%d:w=16:h=18:color=0xd0d0d0:t=fill,drawtext=fontfile=" MONO_FONT
            ":text='^%c':fontsize=14:fontcolor=0x101010:x=%d:y=%d,drawtext=fontfile=" MONO_FONT
            ":text='%s':fontsize=14:fontcolor=0xd0d0d0:x=%d:y=%d",
            x, y - 2, keys[i], x, y, names[i], x + 24, y);
    }
    CHECK_INT(read_drawn("-f lavfi -i color=0x101010:s=720x360:d=1", vf.buf, 3, &page), 0);
    for (size_t i = 0; i < page.n_lines; i++) {
        const struct vt_ocr_line *l = &page.lines[i];
        int col = (l->box[0] - 10 + 4) / 112, row = (l->box[1] - 298 + 4) / 20;

        if (l->text[0] != '^' || l->box[1] < 290 || col < 0 || col > 3 || row < 0 || row > 1 ||
            abs(l->box[0] - (10 + col * 112)) > 4)
            continue;
        read += toupper((unsigned char)l->text[1]) == keys[row * 4 + col];
    }
    CHECK(read >= 5);
    vt_sb_release(&vf);
    vt_ocr_page_release(&page);
}
