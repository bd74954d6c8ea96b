/*
 * Tests of the ocr stage's noise floor (lib/visual/ocr_noise.c): loading a CMU-style dictionary,
 * the plausibility measures of a line with and without it, and the decision on lines read
 * from real slides and from photo-like frames (tests/fixtures/gen_small_text.sh and
 * gen_talk.sh, as Tesseract 5.3 read them), with the English dictionary the stage uses; and
 * zeros read as @ inside numbers mended.
 */
#include "base/util.h"
#include "harness.h"
#include "visual/ocr_noise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMUDICT "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"

/* Write text into a fresh file under /tmp; returns its path (caller unlinks and frees). */
static char *temp_file(const char *text)
{
    char tmpl[] = "/tmp/vt-noise-test-XXXXXX";
    int fd = mkstemp(tmpl);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

    if (!f)
        return NULL;
    fputs(text, f);
    fclose(f);
    return vt_xstrdup(tmpl);
}

VT_TEST(ocr_dict_load)
{
    char *path = temp_file("hello HH AH0 L OW1\nhello(2) HH EH0 L OW1\nworld W ER1 L D\n"
                           "it's IH1 T S\r\nrevenue R EH1 V AH0 N UW2\n");
    char err[256] = "";
    struct vt_ocr_dict *d = path ? vt_ocr_dict_load(path, err, sizeof(err)) : NULL;

    CHECK(d != NULL);
    if (!d)
        goto out;
    CHECK_INT(vt_ocr_dict_size(d), 4); /* hello(2) is hello */
    CHECK(vt_ocr_dict_has(d, "hello", 5));
    CHECK(vt_ocr_dict_has(d, "Hello", 5));
    CHECK(vt_ocr_dict_has(d, "WORLD", 5));
    CHECK(vt_ocr_dict_has(d, "it's", 4));
    CHECK(vt_ocr_dict_has(d, "revenue", 7));
    CHECK(!vt_ocr_dict_has(d, "hell", 4));
    CHECK(!vt_ocr_dict_has(d, "hello(2)", 8));
    CHECK(!vt_ocr_dict_has(d, "", 0));
    CHECK(!vt_ocr_dict_has(NULL, "hello", 5));
out:
    vt_ocr_dict_free(d);
    vt_ocr_dict_free(NULL);
    if (path)
        unlink(path);
    free(path);
}

VT_TEST(ocr_dict_missing_or_empty)
{
    char err[256] = "";
    char *empty = temp_file("\n\n");

    CHECK(vt_ocr_dict_load("/nonexistent/vt-dict", err, sizeof(err)) == NULL);
    CHECK(strstr(err, "'/nonexistent/vt-dict'") != NULL);
    err[0] = '\0';
    CHECK(empty != NULL);
    if (empty) {
        CHECK(vt_ocr_dict_load(empty, err, sizeof(err)) == NULL);
        CHECK(strstr(err, "no word") != NULL);
        unlink(empty);
    }
    free(empty);
}

VT_TEST(ocr_plausibility_measures)
{
    char *path = temp_file("quarterly K\nrevenue R\ngrew G\nit's I\n");
    struct vt_ocr_dict *d = path ? vt_ocr_dict_load(path, NULL, 0) : NULL;
    struct vt_ocr_plausibility p;

    CHECK(d != NULL);
    vt_ocr_plausibility("Quarterly revenue grew", d, &p);
    CHECK_INT(p.letters, 20);
    CHECK_INT(p.long_words, 3);
    CHECK_NEAR(p.dict_ratio, 1.0, 1e-9);
    CHECK_NEAR(p.class_ratio, 1.0, 1e-9);
    /* numbers count as plausible; edge punctuation does not make a word less of a word */
    vt_ocr_plausibility("(revenue) grew 12.5% in 2024,", d, &p);
    CHECK_NEAR(p.dict_ratio, (7.0 + 4 + 3 + 4) / (7 + 4 + 2 + 3 + 4), 1e-9); /* "in" unknown */
    CHECK_NEAR(p.class_ratio, 1.0, 1e-9);
    /* mixed case inside a word is not a word's shape, and not looked up */
    vt_ocr_plausibility("aN iF GrEW", d, &p);
    CHECK_NEAR(p.dict_ratio, 0.0, 1e-9);
    CHECK_NEAR(p.class_ratio, 0.0, 1e-9);
    /* one letter: only "a" and "I" are words */
    vt_ocr_plausibility("a I t", NULL, &p);
    CHECK_INT(p.letters, 3);
    CHECK_NEAR(p.dict_ratio, -1.0, 1e-9);
    CHECK_NEAR(p.class_ratio, 2.0 / 3.0, 1e-9);
    CHECK_INT(p.long_words, 0);
    vt_ocr_plausibility("it's", d, &p);
    CHECK_NEAR(p.dict_ratio, 1.0, 1e-9);
    CHECK_INT(p.long_words, 1);
    vt_ocr_plausibility("/~_ -- .", d, &p);
    CHECK_INT(p.letters, 0);
    CHECK_NEAR(p.class_ratio, 0.0, 1e-9);
    vt_ocr_plausibility("", d, &p);
    CHECK_INT(p.letters, 0);
    vt_ocr_dict_free(d);
    if (path)
        unlink(path);
    free(path);
}

/* The decision, on lines as Tesseract read them from the fixtures. */
VT_TEST(ocr_noise_floor)
{
    static const struct {
        const char *text;
        double conf;
    } garbage[] =
        {
            {"aN Saks ett a ain t", 0.14},
            {"wait lsh, Be", 0.30},
            {"ar pe ae :", 0.36},
            {"Bee iF dai", 0.30},
            {"Soe a", 0.18},
            {".", 0.58},
            {"a", 0.51},
            {"a", 0.53},
            {"=", 0.81},
            {"gs", 0.64},
            {"—", 0.46},
            {"coer akin aye", 0.11},
            {"yudget", 0.37},
            {"> in 4", 0.56},
            {"Pa", 0.19},
            {"/~_", 0.00},
        },
      slides[] = {
          {"Figure 7: weekly yield harvest series density", 0.96},
          {"Vendor pension export landing option install", 0.87},
          {"Source: portion traffic estimate wages percent mineral", 0.94},
          {"Kitchen project future private", 0.96},
          {"Average pension volume treaty budget", 0.70},
          {"Tesseract's LSTM reads 12 px type", 0.90},
          {"Q3 2024: +12%", 0.88},
      };
    struct vt_ocr_dict *d = vt_ocr_dict_load(CMUDICT, NULL, 0);

    CHECK(d != NULL); /* Debian's pocketsphinx-en-us */
    for (size_t i = 0; i < VT_ARRAY_LEN(garbage); i++) {
        if (!vt_ocr_line_is_noise(garbage[i].text, garbage[i].conf, d)) {
            fprintf(stderr, "  garbage taken for text: '%s'\n", garbage[i].text);
            vt_test_failures++;
        }
        /* without a dictionary too */
        CHECK(vt_ocr_line_is_noise(garbage[i].text, garbage[i].conf, NULL));
    }
    for (size_t i = 0; i < VT_ARRAY_LEN(slides); i++) {
        if (vt_ocr_line_is_noise(slides[i].text, slides[i].conf, d)) {
            fprintf(stderr, "  slide line taken for noise: '%s'\n", slides[i].text);
            vt_test_failures++;
        }
        CHECK(!vt_ocr_line_is_noise(slides[i].text, slides[i].conf, NULL));
    }
    /* between the floor and the sure confidence, the words decide */
    CHECK(vt_ocr_line_is_noise("Ssae ert Bak lsh oei", 0.60, d));
    CHECK(!vt_ocr_line_is_noise("Revenue grew in every region", 0.60, d));
    CHECK(vt_ocr_line_is_noise("aN iF Bx eE", 0.60, NULL));
    CHECK(!vt_ocr_line_is_noise("Revenue grew in every region", 0.60, NULL));
    /* from the sure confidence up Tesseract is trusted; below the floor never */
    CHECK(!vt_ocr_line_is_noise("Xqzt Vwpr", 0.90, d));
    CHECK(vt_ocr_line_is_noise("Revenue grew in every region", 0.30, d));
    vt_ocr_dict_free(d);
}

VT_TEST(ocr_mend_zeros)
{
    static const char *const cases[][2] = {
        {"hojicha-2.8.@", "hojicha-2.8.0"},
        {"snow-peas-@.8.3", "snow-peas-0.8.3"},
        {"cashew-apple-2.@.@ done", "cashew-apple-2.0.0 done"},
        {"1@5 kg", "105 kg"},
        /* an address, a handle, a price and a lone sign stay */
        {"mail me@example.com", "mail me@example.com"},
        {"follow @5minutecrafts", "follow @5minutecrafts"},
        {"2 @ 3.50", "2 @ 3.50"},
        {"@", "@"},
        {"v1.2@beta", "v1.2@beta"},
    };

    for (size_t i = 0; i < VT_ARRAY_LEN(cases); i++) {
        char *s = vt_xstrdup(cases[i][0]);

        vt_ocr_mend_zeros(s);
        CHECK_STR(s, cases[i][1]);
        free(s);
    }
}
