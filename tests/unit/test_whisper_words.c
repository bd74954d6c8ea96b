/*
 * The transcribe loop with word timestamps (whisper.c with whisper_align.c and
 * whisper_timing.c) against the reference (tests/tools/whisper_align_ref.py --transcribe:
 * transcribe.py with word_timestamps True, checked against openai/whisper itself) on the
 * generated checkpoint over jfk.wav six times (66 s), without and with an initial prompt.
 * The words move the windows (seek to the last word's end, or to the last segment's end
 * when no word was timed) and trim the segments, so a wrong time shows up as different
 * windows, tokens and texts too: all must be identical, times within 1e-6 s,
 * probabilities within 1e-3.
 */
#include "harness.h"
#include "media/audio.h"
#include "ml/tiktoken.h"
#include "ml/whisper_model.h"
#include "speech/whisper.h"
#include "speech/whisper_mel.h"
#include "vidtheque.h"

#include <jansson.h>
#include <stdlib.h>

#define MODEL_DIR "tests/data/whisper-test"
#define EXPECTED  MODEL_DIR "/expected-transcribe-words.json"
#define MULTI     "tests/data/whisper-assets/multilingual.tiktoken"
#define NPZ       "tests/data/whisper-assets/mel_filters.npz"
#define JFK       "tests/data/speech/jfk.wav"
#define TIME_TOL  1e-6
#define PROB_TOL  1e-3

static double jnum(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

/* jfk.wav six times over, as whisper's load_audio reads it (s16 / 32768) */
static float *load_66s(size_t *n)
{
    char err[512] = "";
    int16_t *pcm = NULL;
    size_t k = 0;
    float *out;

    if (vt_audio_load(JFK, &pcm, &k, err, sizeof(err)) != 0) {
        fprintf(stderr, "  %s\n", err);
        return NULL;
    }
    *n = 6 * k;
    out = malloc(*n * sizeof(float));
    for (size_t i = 0; out && i < *n; i++)
        out[i] = pcm[i % k] / 32768.0f;
    free(pcm);
    return out;
}

/* One segment's words against the JSON array want (times + t0); 0 when equal. */
static int check_words(const struct vt_whisper_segment *s, json_t *want, size_t si, double t0)
{
    int before = vt_test_failures;

    CHECK_INT(s->n_words, json_array_size(want));
    for (size_t k = 0; k < s->n_words && k < json_array_size(want); k++) {
        const struct vt_whisper_word *w = &s->words[k];
        json_t *x = json_array_get(want, k);

        CHECK_STR(w->text, json_string_value(json_object_get(x, "word")));
        CHECK_NEAR(w->start, t0 + jnum(x, "start"), TIME_TOL);
        CHECK_NEAR(w->end, t0 + jnum(x, "end"), TIME_TOL);
        CHECK_NEAR(w->prob, jnum(x, "probability"), PROB_TOL);
    }
    if (vt_test_failures != before)
        fprintf(stderr, "  (segment %zu's words)\n", si);
    return vt_test_failures != before;
}

/* out's segments against the run's (times + t0): times, tokens, text, words; stops at the
 * first bad one */
static void check_run(const struct vt_whisper_result *out, json_t *want, double t0)
{
    CHECK_INT(out->n, json_array_size(want));
    for (size_t i = 0; i < out->n && i < json_array_size(want); i++) {
        const struct vt_whisper_segment *s = &out->seg[i];
        json_t *w = json_array_get(want, i), *toks = json_object_get(w, "tokens");
        int before = vt_test_failures;

        CHECK_NEAR(s->start, t0 + jnum(w, "start"), TIME_TOL);
        CHECK_NEAR(s->end, t0 + jnum(w, "end"), TIME_TOL);
        CHECK_INT(s->n_tokens, json_array_size(toks));
        for (size_t k = 0; k < s->n_tokens && k < json_array_size(toks); k++)
            CHECK_INT(s->tokens[k], json_integer_value(json_array_get(toks, k)));
        CHECK_STR(s->text, json_string_value(json_object_get(w, "text")));
        CHECK_NEAR(s->avg_logprob, jnum(w, "avg_logprob"), PROB_TOL);
        if (vt_test_failures != before)
            fprintf(stderr, "  (segment %zu: %.2f-%.2f \"%s\")\n", i, s->start, s->end, s->text);
        if (vt_test_failures != before || check_words(s, json_object_get(w, "words"), i, t0) != 0)
            return;
    }
}

VT_TEST(whisper_transcribe_words)
{
    struct vt_whisper_model *model = NULL;
    struct vt_tiktoken *tok = NULL;
    struct vt_whisper_mel *mel = NULL;
    json_t *exp = NULL, *runs;
    json_error_t jerr;
    char err[512] = "";
    size_t n = 0, n_words = 0;
    float *pcm = load_66s(&n);

    if (!pcm || vt_whisper_model_open(MODEL_DIR, 1, &model, err, sizeof(err)) != 0 ||
        vt_tiktoken_load(MULTI, 99, &tok, err, sizeof(err)) != 0 ||
        vt_whisper_mel_open(NPZ, 80, &mel, err, sizeof(err)) != 0 ||
        !(exp = json_load_file(EXPECTED, 0, &jerr))) {
        fprintf(stderr, "  %s\n", err);
        CHECK(0);
        goto out;
    }
    CHECK_INT(n, json_integer_value(json_object_get(exp, "samples")));
    runs = json_object_get(exp, "runs");
    CHECK_INT(json_array_size(runs), 2);
    /* the runs, the last again 100 s later on the caller's time line: the same words */
    for (size_t r = 0; r <= json_array_size(runs); r++) {
        struct vt_whisper_result res = {0};
        struct vt_whisper_opts o;
        json_t *run = json_array_get(runs, r < json_array_size(runs) ? r : r - 1);
        double t0 = r < json_array_size(runs) ? 0 : 100.0;

        vt_whisper_opts_default(&o);
        o.temperatures[0] = 0;
        o.n_temperatures = 1;
        o.language = "en";
        o.word_timestamps = 1;
        o.initial_prompt = json_string_value(json_object_get(run, "initial_prompt"));
        CHECK_INT(vt_whisper_transcribe(model, tok, mel, pcm, n, t0, &o, &res, err, sizeof(err)),
                  0);
        check_run(&res, json_object_get(run, "segments"), t0);
        for (size_t i = 0; i < res.n; i++)
            n_words += res.seg[i].n_words;
        if (vt_test_failures)
            fprintf(stderr, "  run %zu (prompt %s, t0 %g): %s\n", r,
                    o.initial_prompt ? o.initial_prompt : "none", t0, err);
        vt_whisper_result_release(&res);
    }
    /* the expectation is not vacuous: words were timed and compared */
    CHECK(n_words >= 10);
out:
    json_decref(exp);
    vt_whisper_model_free(model);
    vt_tiktoken_free(tok);
    vt_whisper_mel_free(mel);
    free(pcm);
}
