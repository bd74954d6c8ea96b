/* Unit tests of chapters from the slides (lib/text/slide_chapters.c): the title of a frame
 * from its OCR lines' boxes, and the topics rule over a talk's titles. The pages are laid
 * out as slides are (a 720-pixel frame, a title at the top, body text under it). */
#include "base/util.h"
#include "harness.h"
#include "text/slide_chapters.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct line_spec {
    const char *text;
    int x, y, w, h;
    double conf;
    int noise;
};

static struct vt_ocr_page page_of(const struct line_spec *l, size_t n)
{
    struct vt_ocr_page p = {vt_xcalloc(n, sizeof(*p.lines)), n};

    for (size_t i = 0; i < n; i++)
        p.lines[i] = (struct vt_ocr_line){
            (char *)l[i].text, l[i].conf, {l[i].x, l[i].y, l[i].w, l[i].h}, l[i].noise};
    return p;
}

/* The title vt_slide_title reads from lines on a 720-pixel frame; "" for none. */
static char *title_of(const struct line_spec *l, size_t n)
{
    struct vt_ocr_page p = page_of(l, n);
    char *t = vt_slide_title(&p, 720);

    free(p.lines);
    return t ? t : vt_xstrdup("");
}

/* The title read from the lines of array l is want ("" for none). */
#define CHECK_TITLE(l, want)                                                                       \
    do {                                                                                           \
        char *title = title_of(l, sizeof(l) / sizeof(*(l)));                                       \
        CHECK_STR(title, want);                                                                    \
        free(title);                                                                               \
    } while (0)

VT_TEST(slide_title_largest_topmost)
{
    /* body lines with descenders are as tall as the title's caps: the top one wins */
    static const struct line_spec slide[] = {
        {"Purple people supper", 100, 176, 520, 47, 0.93, 0},
        {"Methods   Harbor", 80, 60, 430, 42, 0.95, 0},
        {"Energy planet", 100, 262, 300, 45, 0.91, 0},
    };
    /* the tallest line is under small print at the very top: size first, then the top */
    static const struct line_spec small_top[] = {
        {"conference 2024 room b", 20, 10, 200, 14, 0.9, 0},
        {"Evaluation Summary", 80, 90, 500, 50, 0.9, 0},
        {"a body line here", 100, 200, 400, 24, 0.9, 0},
    };
    /* a two-line title: the second line of its size right under it continues it */
    static const struct line_spec two_lines[] = {
        {"Why search needs", 80, 60, 480, 48, 0.9, 0},
        {"a relevance floor", 80, 118, 470, 48, 0.9, 0},
        {"body text far below", 100, 260, 400, 28, 0.9, 0},
    };

    CHECK_TITLE(slide, "Methods Harbor");
    CHECK_TITLE(small_top, "Evaluation Summary");
    CHECK_TITLE(two_lines, "Why search needs a relevance floor");
}

VT_TEST(slide_title_rejects)
{
    /* the largest line is a caption in the lower part: not a slide title */
    static const struct line_spec caption[] = {
        {"Jane Doe, speaker", 60, 560, 400, 60, 0.9, 0},
        {"small", 60, 100, 100, 20, 0.9, 0},
    };
    /* noise, low confidence and too few letters do not count; the body line is left */
    static const struct line_spec junk[] = {
        {"#%@ WWWWW", 60, 40, 400, 80, 0.9, 1},
        {"Glare Ghost", 60, 50, 400, 70, 0.2, 0},
        {"- 3", 60, 60, 60, 70, 0.9, 0},
        {"Roadmap Village", 80, 150, 400, 40, 0.9, 0},
    };
    char long_text[VT_SLIDE_TITLE_MAX + 20];
    struct line_spec prose[1] = {{long_text, 80, 60, 1100, 40, 0.9, 0}};

    CHECK_TITLE(caption, "");
    CHECK_TITLE(junk, "Roadmap Village");
    memset(long_text, 'a', sizeof(long_text) - 1);
    long_text[sizeof(long_text) - 1] = '\0';
    CHECK_TITLE(prose, "");
    CHECK(vt_slide_title(NULL, 720) == NULL);
}

/* chapters of titles[i] shown from starts[i], 100 s in all */
static size_t chapters_of(const char *const *titles, const double *starts, size_t n,
                          struct vt_chapter **c)
{
    struct vt_slide_frame *f = vt_xcalloc(n, sizeof(*f));
    size_t k;

    for (size_t i = 0; i < n; i++)
        f[i] = (struct vt_slide_frame){starts[i], titles[i]};
    vt_slide_chapters(f, n, 100.0, c, &k);
    free(f);
    return k;
}

static void chapters_free(struct vt_chapter *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(c[i].title);
    free(c);
}

VT_TEST(slide_chapters_topics)
{
    /* a talk: the title slide, Results over three pages (one misread), a cutaway without
     * a title, a new topic, Results again after it (the speaker went back), a last topic */
    static const char *const titles[] = {
        "Overview  Market", "Results River", "Results River (2/3)", "Resu1ts River cont.", NULL,
        "Design Rocket",    "RESULTS RIVER", "Questions?",
    };
    static const double starts[] = {0, 12.5, 20, 31, 40, 47.25, 60, 71};
    /* the truth: where each new topic's shot starts, and its title as first shown */
    static const char *const want_t[] = {"Overview Market", "Results River", "Design Rocket",
                                         "Questions?"};
    static const double want_s[] = {0, 12.5, 47.25, 71};
    struct vt_chapter *c;
    size_t n = chapters_of(titles, starts, 8, &c);

    CHECK_INT(n, 4);
    for (size_t i = 0; i < n && i < 4; i++) {
        CHECK_STR(c[i].title, want_t[i]);
        CHECK_NEAR(c[i].start_s, want_s[i], 1e-9);
        CHECK_NEAR(c[i].end_s, i + 1 < 4 ? want_s[i + 1] : 100.0, 1e-9);
    }
    chapters_free(c, n);
}

VT_TEST(slide_chapters_edges)
{
    /* one topic all along (and a page number alone): no chapters */
    static const char *const one[] = {"Summary Ocean", "Summary Ocean 2", "12"};
    static const double one_s[] = {0, 10, 20};
    /* two frames of one shot: the second title does not open a chapter at the same time */
    static const char *const same_shot[] = {"Background Forest", "Method Castle", "Answer Kitchen"};
    static const double same_s[] = {5, 5, 30};
    /* one letter changed in a short title is another topic, not a misread */
    static const char *const short_t[] = {"Part A", "Part B"};
    static const double short_s[] = {0, 50};
    struct vt_chapter *c;
    size_t n;

    n = chapters_of(one, one_s, 3, &c);
    CHECK_INT(n, 0);
    CHECK(c == NULL);
    n = chapters_of(same_shot, same_s, 3, &c);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_STR(c[0].title, "Background Forest");
        CHECK_NEAR(c[0].end_s, 30, 1e-9);
        CHECK_STR(c[1].title, "Answer Kitchen");
    }
    chapters_free(c, n);
    n = chapters_of(short_t, short_s, 2, &c);
    CHECK_INT(n, 2);
    chapters_free(c, n);
    n = chapters_of(NULL, NULL, 0, &c);
    CHECK_INT(n, 0);
}
