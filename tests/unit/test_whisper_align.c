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

/* The jfk window's q.k as the reference's network gave it (align-qk.f32). */
static float *jfk_qk(json_t *j, int *n_heads, int *n_tok, int *m)
{
    json_t *shape = json_object_get(json_object_get(j, "qk"), "shape");
    char *data = NULL, err[256] = "";
    size_t len = 0;
    float *qk;

    *n_heads = (int)json_integer_value(json_array_get(shape, 0));
    *n_tok = (int)json_integer_value(json_array_get(shape, 1));
    *m = (int)json_integer_value(json_array_get(shape, 2));
    if (vt_read_file_capped(CKPT "/align-qk.f32", "qk", 1u << 22, &data, &len, err, sizeof(err)) !=
            0 ||
        len != (size_t)*n_heads * (size_t)*n_tok * (size_t)*m * sizeof(float)) {
        fprintf(stderr, "  align-qk.f32: %s (%zu bytes)\n", err, len);
        free(data);
        return NULL;
    }
    qk = vt_xmalloc(len);
    memcpy(qk, data, len);
    free(data);
    return qk;
}

/* The matrix's rows and the DTW path from the reference's q.k. */
VT_TEST(whisper_align_jfk_path)
{
    json_t *j = expected(), *mx = json_object_get(j, "matrix"), *rows = json_object_get(mx, "rows");
    int n_heads, n_tok, m, n_sot = (int)json_array_size(json_object_get(j, "sot_sequence"));
    float *qk = jfk_qk(j, &n_heads, &n_tok, &m), *matrix, *x;
    size_t n_rows = (size_t)(n_tok - n_sot - 1), len, n_ti = 0, n_tj = 0;
    int32_t *ti, *tj, *want_i = ids(json_object_get(j, "text_indices"), &n_ti);
    int32_t *want_j = ids(json_object_get(j, "time_indices"), &n_tj);
    const char *key;
    json_t *row;

    CHECK(qk != NULL);
    if (!qk)
        goto out;
    matrix = vt_xmalloc(n_rows * (size_t)m * sizeof(float));
    vt_whisper_align_matrix(qk, n_heads, n_tok, m, n_sot, matrix);
    CHECK_INT(n_rows, json_integer_value(json_array_get(json_object_get(mx, "shape"), 0)));
    json_object_foreach(rows, key, row)
    {
        size_t r = strtoul(key, NULL, 10);

        for (size_t f = 0; r < n_rows && f < json_array_size(row); f++)
            CHECK_NEAR(matrix[r * (size_t)m + f], json_number_value(json_array_get(row, f)), 1e-5);
    }
    x = vt_xmalloc(n_rows * (size_t)m * sizeof(float));
    for (size_t i = 0; i < n_rows * (size_t)m; i++)
        x[i] = -matrix[i];
    ti = vt_xmalloc((n_rows + (size_t)m) * sizeof(int32_t));
    tj = vt_xmalloc((n_rows + (size_t)m) * sizeof(int32_t));
    len = vt_whisper_dtw(x, (int)n_rows, m, ti, tj);
    CHECK_INT(len, n_ti);
    for (size_t k = 0; k < len && k < n_ti; k++) {
        CHECK_INT(ti[k], want_i[k]);
        CHECK_INT(tj[k], want_j[k]);
    }
    free(matrix);
    free(x);
    free(ti);
    free(tj);
out:
    free(qk);
    free(want_i);
    free(want_j);
    json_decref(j);
}

/* The jfk window's words from the reference's q.k and probabilities. */
VT_TEST(whisper_align_jfk_qk)
{
    json_t *j = expected(), *p = json_object_get(j, "token_probs");
    struct vt_tiktoken *tok = vocab();
    int n_heads, n_tok, m;
    float *qk = jfk_qk(j, &n_heads, &n_tok, &m);
    size_t n_sot = 0, n = 0;
    int32_t *sot = ids(json_object_get(j, "sot_sequence"), &n_sot);
    struct vt_whisper_segment *s = segments_in(json_object_get(j, "segments_in"), &n);
    double *probs = vt_xcalloc(json_array_size(p) + 1, sizeof(double));
    char err[256] = "";

    for (size_t i = 0; i < json_array_size(p); i++)
        probs[i] = json_number_value(json_array_get(p, i));
    CHECK(tok && qk);
    if (tok && qk) {
        CHECK_INT(vt_whisper_align_qk(tok, sot, n_sot, qk, n_heads, m, probs, s, n, 0.0, err,
                                      sizeof(err)),
                  0);
        check_segments("jfk from the reference's q.k", s, n, json_object_get(j, "segments"));
    }
    segments_free(s, n);
    free(sot);
    free(qk);
    free(probs);
    vt_tiktoken_free(tok);
    json_decref(j);
}

/* The window: jfk's 1100 content frames ([80][1100]) then zeros to 3000 (pad_or_trim). */
static float *mel_window(void)
{
    char *data = NULL, err[256] = "";
    size_t len = 0;
    float *mel = vt_xcalloc(80 * 3000, sizeof(float));

    if (vt_read_file_capped(MEL_FILE, "mel", 1u << 20, &data, &len, err, sizeof(err)) != 0 ||
        len != 80 * 1100 * sizeof(float)) {
        fprintf(stderr, "  %s: %s (%zu bytes)\n", MEL_FILE, err, len);
        free(data);
        free(mel);
        return NULL;
    }
    for (int c = 0; c < 80; c++)
        memcpy(mel + (size_t)c * 3000, data + (size_t)c * 1100 * sizeof(float),
               1100 * sizeof(float));
    free(data);
    return mel;
}

/* The encoder output of the jfk window through the C network. */
static float *jfk_features(struct vt_whisper_model **model)
{
    char err[512] = "";
    float *mel = mel_window(), *enc = NULL;
    const struct vt_whisper_dims *d;

    *model = NULL;
    if (!mel || vt_whisper_model_open(CKPT, 2, model, err, sizeof(err)) != 0) {
        fprintf(stderr, "  %s\n", err);
        free(mel);
        return NULL;
    }
    d = vt_whisper_model_dims(*model);
    enc = vt_xmalloc((size_t)d->n_audio_ctx * (size_t)d->n_audio_state * sizeof(float));
    if (vt_whisper_encode(*model, mel, enc, err, sizeof(err)) != 0) {
        fprintf(stderr, "  %s\n", err);
        free(enc);
        enc = NULL;
    }
    free(mel);
    return enc;
}

/* The whole of it: the C network's q.k and logits give the reference's words and times. */
VT_TEST(whisper_align_jfk_model)
{
    json_t *j = expected();
    struct vt_tiktoken *tok = vocab();
    struct vt_whisper_model *model = NULL;
    float *enc = jfk_features(&model);
    size_t n_sot = 0, n = 0;
    int32_t *sot = ids(json_object_get(j, "sot_sequence"), &n_sot);
    struct vt_whisper_segment *s = segments_in(json_object_get(j, "segments_in"), &n);
    char err[256] = "";

    CHECK(tok && enc);
    if (tok && enc) {
        CHECK_INT(vt_whisper_align(model, tok, enc, sot, n_sot, s, n,
                                   (int)json_integer_value(json_object_get(j, "num_frames")), 0.0,
                                   err, sizeof(err)),
                  0);
        check_segments("jfk through the C network", s, n, json_object_get(j, "segments"));
    }
    segments_free(s, n);
    free(sot);
    free(enc);
    vt_whisper_model_free(model);
    vt_tiktoken_free(tok);
    json_decref(j);
}

/* Hostile segments: no text, only timestamps, a negative id, bad arguments. */
VT_TEST(whisper_align_hostile)
{
    struct vt_tiktoken *tok = vocab();
    struct vt_whisper_model *model = NULL;
    float *enc = jfk_features(&model);
    int32_t sot[] = {50258, 50259, 50359}, only_ts[] = {50364, 50400}, neg[] = {50364, -5, 3566};
    int32_t many[600];
    struct vt_whisper_segment s[2] = {{0}};
    char err[256] = "";

    CHECK(tok && enc);
    if (!tok || !enc)
        goto out;
    /* zero text tokens: no words, no error, times untouched */
    s[0].tokens = only_ts;
    s[0].n_tokens = 2;
    s[0].start = 1.0;
    s[0].end = 2.0;
    CHECK_INT(vt_whisper_align(model, tok, enc, sot, 3, s, 1, 1100, 0.0, err, sizeof(err)), 0);
    CHECK_INT(s[0].n_words, 0);
    CHECK(s[0].start == 1.0 && s[0].end == 2.0);
    CHECK_INT(vt_whisper_align(model, tok, enc, sot, 3, s, 0, 1100, 0.0, err, sizeof(err)), 0);
    /* a negative id: refused, no words */
    s[0].tokens = neg;
    s[0].n_tokens = 3;
    err[0] = '\0';
    CHECK_INT(vt_whisper_align(model, tok, enc, sot, 3, s, 1, 1100, 0.0, err, sizeof(err)),
              VT_EINVAL);
    CHECK(err[0] != '\0');
    CHECK_INT(s[0].n_words, 0);
    /* more tokens than the context holds */
    for (size_t i = 0; i < VT_ARRAY_LEN(many); i++)
        many[i] = 3566;
    s[0].tokens = many;
    s[0].n_tokens = VT_ARRAY_LEN(many);
    CHECK_INT(vt_whisper_align(model, tok, enc, sot, 3, s, 1, 1100, 0.0, err, sizeof(err)),
              VT_EINVAL);
    CHECK_INT(s[0].n_words, 0);
    /* num_frames 0, 1 and past the window: words, no crash */
    s[0].tokens = neg + 2;
    s[0].n_tokens = 1;
    for (int f = 0; f < 4; f++) {
        int frames[] = {0, 1, 7, 1 << 20};

        CHECK_INT(vt_whisper_align(model, tok, enc, sot, 3, s, 1, frames[f], 5.0, err, sizeof(err)),
                  0);
        CHECK_INT(s[0].n_words, 1);
        CHECK(s[0].n_words == 1 && strcmp(s[0].words[0].text, " complete") == 0);
    }
    /* bad arguments */
    CHECK_INT(vt_whisper_align(model, tok, enc, sot, 0, s, 1, 1100, 0.0, err, sizeof(err)),
              VT_EINVAL);
    CHECK_INT(vt_whisper_align(model, tok, enc, sot, 3, s, 1, -1, 0.0, err, sizeof(err)),
              VT_EINVAL);
    CHECK_INT(vt_whisper_align(NULL, tok, enc, sot, 3, s, 1, 1100, 0.0, err, sizeof(err)),
              VT_EINVAL);
    CHECK_INT(s[0].n_words, 0);
out:
    free(enc);
    vt_whisper_model_free(model);
    vt_tiktoken_free(tok);
}
