/*
 * Tests of Whisper's word timings (speech/whisper_align.h) against timing.py as
 * tests/tools/whisper_align_ref.py runs it (tests/data/whisper-test/expected-align.json):
 * the median filter and the DTW on synthetic inputs, identical; the steps after the network
 * on synthetic q.k (punctuation, quotes, a language without spaces, bytes split inside a
 * character, windows of 6, 2 and 1 frames); the test checkpoint's jfk window from the
 * reference's own q.k and through the C network; words and times equal to 1e-6 (they are
 * multiples of 0.01 s or sums of them), probabilities to 1e-3; hostile segments refused or
 * given no words.
 */
#include "base/util.h"
#include "harness.h"
#include "ml/tiktoken.h"
#include "ml/whisper_model.h"
#include "speech/whisper_align.h"
#include "vidtheque.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#define CKPT     "tests/data/whisper-test"
#define MEL_FILE "tests/data/whisper-mel/jfk-mel80.f32"
#define VOCAB    "tests/data/whisper-assets/multilingual.tiktoken"

static json_t *expected(void)
{
    json_error_t je;
    json_t *j = json_load_file(CKPT "/expected-align.json", 0, &je);

    if (!j)
        fprintf(stderr, "  expected-align.json: %s\n", je.text);
    return j;
}

static struct vt_tiktoken *vocab(void)
{
    struct vt_tiktoken *t = NULL;
    char err[256] = "";

    if (vt_tiktoken_load(VOCAB, 99, &t, err, sizeof(err)) != 0)
        fprintf(stderr, "  %s\n", err);
    return t;
}

static float *floats(json_t *a)
{
    float *f = vt_xmalloc((json_array_size(a) + 1) * sizeof(float));

    for (size_t i = 0; i < json_array_size(a); i++)
        f[i] = (float)json_number_value(json_array_get(a, i));
    return f;
}

static int32_t *ids(json_t *a, size_t *n)
{
    int32_t *v = vt_xmalloc((json_array_size(a) + 1) * sizeof(int32_t));

    *n = json_array_size(a);
    for (size_t i = 0; i < *n; i++)
        v[i] = (int32_t)json_integer_value(json_array_get(a, i));
    return v;
}

/* The segments of a case's "segments_in" (start, end, tokens). */
static struct vt_whisper_segment *segments_in(json_t *a, size_t *n)
{
    struct vt_whisper_segment *s;

    *n = json_array_size(a);
    s = vt_xcalloc(*n + 1, sizeof(*s));
    for (size_t i = 0; i < *n; i++) {
        json_t *e = json_array_get(a, i);

        s[i].start = json_number_value(json_object_get(e, "start"));
        s[i].end = json_number_value(json_object_get(e, "end"));
        s[i].tokens = ids(json_object_get(e, "tokens"), &s[i].n_tokens);
    }
    return s;
}

static void segments_free(struct vt_whisper_segment *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < s[i].n_words; k++)
            free(s[i].words[k].text);
        free(s[i].words);
        free(s[i].tokens);
    }
    free(s);
}

/* Segments, their words and times as the reference's "segments". */
static void check_segments(const char *what, const struct vt_whisper_segment *s, size_t n,
                           json_t *want)
{
    CHECK_INT(n, json_array_size(want));
    for (size_t i = 0; i < n && i < json_array_size(want); i++) {
        json_t *e = json_array_get(want, i), *ws = json_object_get(e, "words");

        CHECK_NEAR(s[i].start, json_number_value(json_object_get(e, "start")), 1e-6);
        CHECK_NEAR(s[i].end, json_number_value(json_object_get(e, "end")), 1e-6);
        CHECK_INT(s[i].n_words, json_array_size(ws));
        for (size_t k = 0; k < s[i].n_words && k < json_array_size(ws); k++) {
            json_t *w = json_array_get(ws, k);

            CHECK_STR(s[i].words[k].text, json_string_value(json_object_get(w, "word")));
            CHECK_NEAR(s[i].words[k].start, json_number_value(json_object_get(w, "start")), 1e-6);
            CHECK_NEAR(s[i].words[k].end, json_number_value(json_object_get(w, "end")), 1e-6);
            CHECK_NEAR(s[i].words[k].prob, json_number_value(json_object_get(w, "probability")),
                       1e-3);
        }
    }
    if (vt_test_failures)
        fprintf(stderr, "  in %s\n", what);
}

VT_TEST(whisper_align_median)
{
    json_t *j = expected(), *cases = json_object_get(json_object_get(j, "synthetic"), "median");

    CHECK(json_array_size(cases) >= 5);
    for (size_t c = 0; c < json_array_size(cases); c++) {
        json_t *e = json_array_get(cases, c), *x = json_object_get(e, "x");
        json_t *want = json_object_get(e, "out");
        int n = (int)json_array_size(x);
        double *in = vt_xcalloc((size_t)n + 1, sizeof(double));
        double *out = vt_xcalloc((size_t)n + 1, sizeof(double));

        for (int i = 0; i < n; i++)
            in[i] = (float)json_number_value(json_array_get(x, (size_t)i));
        vt_whisper_median_filter(in, n, (int)json_integer_value(json_object_get(e, "width")), out);
        CHECK_INT(json_array_size(want), n);
        for (int i = 0; i < n; i++)
            CHECK(out[i] == (float)json_number_value(json_array_get(want, (size_t)i)));
        free(in);
        free(out);
    }
    json_decref(j);
}

VT_TEST(whisper_align_dtw)
{
    json_t *j = expected(), *cases = json_object_get(json_object_get(j, "synthetic"), "dtw");

    CHECK(json_array_size(cases) >= 6);
    for (size_t c = 0; c < json_array_size(cases); c++) {
        json_t *e = json_array_get(cases, c);
        int n = (int)json_integer_value(json_object_get(e, "n"));
        int m = (int)json_integer_value(json_object_get(e, "m"));
        float *x = floats(json_object_get(e, "x"));
        int32_t *ti = vt_xmalloc(((size_t)n + (size_t)m) * sizeof(int32_t));
        int32_t *tj = vt_xmalloc(((size_t)n + (size_t)m) * sizeof(int32_t));
        size_t len = vt_whisper_dtw(x, n, m, ti, tj), n_ti = 0, n_tj = 0;
        int32_t *want_i = ids(json_object_get(e, "text_indices"), &n_ti);
        int32_t *want_j = ids(json_object_get(e, "time_indices"), &n_tj);

        CHECK_INT(len, n_ti);
        for (size_t k = 0; k < len && k < n_ti; k++) {
            CHECK_INT(ti[k], want_i[k]);
            CHECK_INT(tj[k], want_j[k]);
        }
        free(x);
        free(ti);
        free(tj);
        free(want_i);
        free(want_j);
    }
    json_decref(j);
}

/* One synthetic case through vt_whisper_align_qk. */
static void pipeline_case(struct vt_tiktoken *tok, json_t *e)
{
    char err[256] = "", what[64];
    size_t n_sot = 0, n = 0;
    int32_t *sot = ids(json_object_get(e, "sot_sequence"), &n_sot);
    struct vt_whisper_segment *s = segments_in(json_object_get(e, "segments_in"), &n);
    float *qk = floats(json_object_get(e, "qk"));
    json_t *p = json_object_get(e, "probs");
    double *probs = vt_xcalloc(json_array_size(p) + 1, sizeof(double));

    for (size_t i = 0; i < json_array_size(p); i++)
        probs[i] = json_number_value(json_array_get(p, i));
    CHECK_INT(vt_whisper_align_qk(tok, sot, n_sot, qk,
                                  (int)json_integer_value(json_object_get(e, "n_heads")),
                                  (int)json_integer_value(json_object_get(e, "n_frames")), probs, s,
                                  n, json_number_value(json_object_get(e, "t0")), err, sizeof(err)),
              0);
    snprintf(what, sizeof(what), "case %s, %d frames",
             json_string_value(json_object_get(e, "language")),
             (int)json_integer_value(json_object_get(e, "num_frames")));
    check_segments(what, s, n, json_object_get(e, "segments"));
    segments_free(s, n);
    free(sot);
    free(qk);
    free(probs);
}

VT_TEST(whisper_align_synthetic)
{
    json_t *j = expected(), *cases = json_object_get(json_object_get(j, "synthetic"), "pipeline");
    struct vt_tiktoken *tok = vocab();

    CHECK(tok != NULL);
    CHECK(json_array_size(cases) >= 8);
    for (size_t c = 0; tok && c < json_array_size(cases); c++)
        pipeline_case(tok, json_array_get(cases, c));
    vt_tiktoken_free(tok);
    json_decref(j);
}
