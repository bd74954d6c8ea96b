/*
 * Tests of Whisper's decoding and transcription (whisper_decode.c, whisper.c) against the
 * PyTorch reference (tests/tools/whisper_ref.py) on the generated checkpoint
 * tests/data/whisper-test: greedy decoding of the jfk.wav window gives expected.json's
 * tokens (identical), log-probabilities and no-speech probability (1e-3), text and
 * compression ratio; detect_language its language; transcribe on jfk.wav its segments
 * and on jfk.wav six times over (66 s, three windows, without and with an initial prompt)
 * expected-transcribe.json's segments: tokens, times and texts identical.
 */
#include "harness.h"
#include "media/audio.h"
#include "ml/tiktoken.h"
#include "ml/whisper_model.h"
#include "speech/whisper.h"
#include "speech/whisper_decode.h"
#include "speech/whisper_mel.h"
#include "vidtheque.h"

#include <jansson.h>
#include <stdlib.h>

#define MODEL_DIR  "tests/data/whisper-test"
#define EXPECTED   MODEL_DIR "/expected.json"
#define EXPECTED_T MODEL_DIR "/expected-transcribe.json"
#define MULTI      "tests/data/whisper-assets/multilingual.tiktoken"
#define NPZ        "tests/data/whisper-assets/mel_filters.npz"
#define JFK        "tests/data/speech/jfk.wav"
#define TOL        1e-3

struct fixture {
    struct vt_whisper_model *model;
    struct vt_tiktoken *tok;
    struct vt_whisper_mel *mel;
    json_t *exp;
    float *pcm;
    size_t n;
};

static void fixture_release(struct fixture *f)
{
    vt_whisper_model_free(f->model);
    vt_tiktoken_free(f->tok);
    vt_whisper_mel_free(f->mel);
    json_decref(f->exp);
    free(f->pcm);
}

/* jfk.wav repeated times times, as whisper's load_audio reads it (s16 / 32768) */
static int fixture_open(struct fixture *f, const char *expected, int times)
{
    char err[512] = "";
    int16_t *pcm = NULL;
    size_t n = 0;
    json_error_t jerr;

    memset(f, 0, sizeof(*f));
    if (vt_whisper_model_open(MODEL_DIR, 1, &f->model, err, sizeof(err)) != 0 ||
        vt_tiktoken_load(MULTI, 99, &f->tok, err, sizeof(err)) != 0 ||
        vt_whisper_mel_open(NPZ, 80, &f->mel, err, sizeof(err)) != 0 ||
        vt_audio_load(JFK, &pcm, &n, err, sizeof(err)) != 0) {
        fprintf(stderr, "  %s\n", err);
        free(pcm);
        return -1;
    }
    f->exp = json_load_file(expected, 0, &jerr);
    f->n = n * (size_t)times;
    f->pcm = malloc(f->n * sizeof(float));
    for (size_t i = 0; f->pcm && i < f->n; i++)
        f->pcm[i] = pcm[i % n] / 32768.0f;
    free(pcm);
    return f->exp && f->pcm ? 0 : -1;
}

static json_t *jget(json_t *o, const char *a, const char *b)
{
    o = json_object_get(o, a);
    return b ? json_object_get(o, b) : o;
}

/* ids equal the JSON array want */
static void check_tokens(const int32_t *ids, size_t n, json_t *want)
{
    CHECK_INT(n, json_array_size(want));
    for (size_t i = 0; i < n && i < json_array_size(want); i++)
        if (ids[i] != json_integer_value(json_array_get(want, i))) {
            fprintf(stderr, "  token %zu: %d, expected %lld\n", i, ids[i],
                    (long long)json_integer_value(json_array_get(want, i)));
            vt_test_failures++;
            break;
        }
}

/* transcribe's first window of f's audio, encoded, into a new cache */
static struct vt_whisper_kv *first_window(struct fixture *f, float **feat)
{
    const struct vt_whisper_dims *d = vt_whisper_model_dims(f->model);
    float *win = malloc((size_t)d->n_mels * VT_WMEL_N_FRAMES * sizeof(float)), max = 0;
    struct vt_whisper_kv *kv = NULL;
    char err[512] = "";

    *feat = malloc((size_t)d->n_audio_ctx * d->n_audio_state * sizeof(float));
    if (vt_whisper_mel_max(f->mel, f->pcm, f->n, &max, err, sizeof(err)) == 0 &&
        vt_whisper_mel_segment(f->mel, f->pcm, f->n, max, 0, win, err, sizeof(err)) == 0 &&
        vt_whisper_encode(f->model, win, *feat, err, sizeof(err)) == 0)
        kv = vt_whisper_kv_new(f->model, *feat);
    if (!kv)
        fprintf(stderr, "  %s\n", err);
    free(win);
    return kv;
}

VT_TEST(whisper_decode_greedy_jfk)
{
    struct fixture f;
    struct vt_whisper_dec d;
    struct vt_whisper_decoding res = {0};
    struct vt_whisper_kv *kv = NULL;
    float *feat = NULL, *first = NULL;
    char err[512] = "";
    int32_t init[300];
    size_t n_init, sot;
    double nsp = -1;
    uint64_t rng = 1;
    int lang = -1;
    json_t *g;

    if (fixture_open(&f, EXPECTED, 1) != 0) {
        CHECK(0);
        fixture_release(&f);
        return;
    }
    CHECK_INT(vt_whisper_dec_init(&d, f.tok, 51865, 448, 1500, err, sizeof(err)), 0);
    kv = first_window(&f, &feat);
    CHECK(kv != NULL);
    if (!kv)
        goto out;
    g = json_object_get(f.exp, "greedy");
    /* detect_language on the window */
    {
        double p = 0;
        CHECK_INT(vt_whisper_detect_language(&d, kv, &lang, &p, err, sizeof(err)), 0);
        CHECK_STR(vt_whisper_language_code(lang),
                  json_string_value(jget(f.exp, "detect_language", "language")));
        CHECK_INT(vt_whisper_kv_len(kv), 0);
    }
    n_init =
        vt_whisper_initial_tokens(&d, vt_tiktoken_language(f.tok, "en"), 0, NULL, 0, init, &sot);
    check_tokens(init, n_init, json_object_get(g, "initial_tokens"));
    first = malloc(51865 * sizeof(float));
    CHECK_INT(vt_whisper_prefix(&d, kv, init, n_init, sot, first, &nsp, err, sizeof(err)), 0);
    /* twice from the same prefix: the cache is rewound, the result the same */
    for (int round = 0; round < 2; round++) {
        CHECK_INT(vt_whisper_sample(&d, kv, init, n_init, first, nsp, 0.0, 224, 50, &rng, &res, err,
                                    sizeof(err)),
                  0);
        check_tokens(res.tokens, res.n_tokens, json_object_get(g, "tokens"));
        CHECK_NEAR(res.sum_logprob, json_real_value(json_object_get(g, "sum_logprob")), TOL);
        CHECK_NEAR(res.avg_logprob, json_real_value(json_object_get(g, "avg_logprob")), TOL);
        CHECK_NEAR(res.no_speech_prob, json_number_value(json_object_get(g, "no_speech_prob")),
                   TOL);
        CHECK_STR(res.text, json_string_value(json_object_get(g, "text")));
        CHECK_NEAR(res.compression_ratio,
                   json_number_value(json_object_get(g, "compression_ratio")), 1e-9);
    }
    if (vt_test_failures)
        fprintf(stderr, "  %s\n", err);
    /* sampling at a temperature: a seeded draw, different from greedy but well formed */
    CHECK_INT(vt_whisper_sample(&d, kv, init, n_init, first, nsp, 1.0, 224, 50, &rng, &res, err,
                                sizeof(err)),
              0);
    CHECK(res.n_tokens > 0 && res.tokens[0] >= d.sp->timestamp_begin &&
          res.tokens[0] <= d.sp->timestamp_begin + 50);
    CHECK(res.temperature == 1.0);
out:
    vt_whisper_decoding_release(&res);
    vt_whisper_kv_free(kv);
    vt_whisper_dec_release(&d);
    free(feat);
    free(first);
    fixture_release(&f);
}

static void opts_greedy(struct vt_whisper_opts *o)
{
    vt_whisper_opts_default(o);
    o->temperatures[0] = 0;
    o->n_temperatures = 1;
    o->language = "en";
    o->word_timestamps = 0;
}

/* out's segments against a JSON array of segments (start, end, tokens, text) */
static void check_segments(const struct vt_whisper_result *out, json_t *want, double t0)
{
    CHECK_INT(out->n, json_array_size(want));
    for (size_t i = 0; i < out->n && i < json_array_size(want); i++) {
        const struct vt_whisper_segment *s = &out->seg[i];
        json_t *w = json_array_get(want, i);
        CHECK_NEAR(s->start, t0 + json_number_value(json_object_get(w, "start")), 1e-6);
        CHECK_NEAR(s->end, t0 + json_number_value(json_object_get(w, "end")), 1e-6);
        check_tokens(s->tokens, s->n_tokens, json_object_get(w, "tokens"));
        CHECK_STR(s->text, json_string_value(json_object_get(w, "text")));
        if (json_object_get(w, "avg_logprob")) {
            CHECK_NEAR(s->avg_logprob, json_number_value(json_object_get(w, "avg_logprob")), TOL);
            CHECK_NEAR(s->no_speech_prob, json_number_value(json_object_get(w, "no_speech_prob")),
                       TOL);
            CHECK_NEAR(s->compression_ratio,
                       json_number_value(json_object_get(w, "compression_ratio")), 1e-9);
        }
    }
}

VT_TEST(whisper_transcribe_jfk)
{
    struct fixture f;
    struct vt_whisper_opts o;
    struct vt_whisper_result out = {0};
    char err[512] = "";

    if (fixture_open(&f, EXPECTED, 1) != 0) {
        CHECK(0);
        fixture_release(&f);
        return;
    }
    opts_greedy(&o);
    CHECK_INT(
        vt_whisper_transcribe(f.model, f.tok, f.mel, f.pcm, f.n, 100.0, &o, &out, err, sizeof(err)),
        0);
    check_segments(&out, json_object_get(f.exp, "segments"), 100.0);
    CHECK_STR(out.language, "en");
    vt_whisper_result_release(&out);
    /* no language given: detected from the first 30 s */
    o.language = NULL;
    memset(&out, 0, sizeof(out));
    CHECK_INT(
        vt_whisper_transcribe(f.model, f.tok, f.mel, f.pcm, f.n, 0, &o, &out, err, sizeof(err)), 0);
    CHECK(out.language[0] != '\0');
    vt_whisper_result_release(&out);
    /* word timings: each word inside the stretch, in order */
    opts_greedy(&o);
    o.word_timestamps = 1;
    memset(&out, 0, sizeof(out));
    CHECK_INT(
        vt_whisper_transcribe(f.model, f.tok, f.mel, f.pcm, f.n, 0, &o, &out, err, sizeof(err)), 0);
    for (size_t i = 0; i < out.n; i++)
        for (size_t k = 0; k < out.seg[i].n_words; k++)
            CHECK(out.seg[i].words[k].start <= out.seg[i].words[k].end &&
                  out.seg[i].words[k].end <= 11.1);
    vt_whisper_result_release(&out);
    /* decode_with_fallback: a logprob threshold no decoding meets walks every temperature
     * (the last result is kept); a no-speech threshold everything passes skips every window,
     * unless the logprob says speech */
    opts_greedy(&o);
    o.temperatures[1] = 0.4, o.temperatures[2] = 1.0, o.n_temperatures = 3;
    o.logprob_threshold = 0;
    o.no_speech_threshold = NAN;
    memset(&out, 0, sizeof(out));
    CHECK_INT(
        vt_whisper_transcribe(f.model, f.tok, f.mel, f.pcm, f.n, 0, &o, &out, err, sizeof(err)), 0);
    CHECK(out.n > 0);
    for (size_t i = 0; i < out.n; i++)
        CHECK(out.seg[i].temperature == 1.0);
    vt_whisper_result_release(&out);
    opts_greedy(&o);
    o.no_speech_threshold = -1;
    o.logprob_threshold = NAN;
    CHECK_INT(
        vt_whisper_transcribe(f.model, f.tok, f.mel, f.pcm, f.n, 0, &o, &out, err, sizeof(err)), 0);
    CHECK_INT(out.n, 0);
    o.logprob_threshold = -50;
    CHECK_INT(
        vt_whisper_transcribe(f.model, f.tok, f.mel, f.pcm, f.n, 0, &o, &out, err, sizeof(err)), 0);
    CHECK(out.n > 0);
    vt_whisper_result_release(&out);
    /* hostile settings and input */
    o.n_temperatures = 0;
    CHECK_INT(
        vt_whisper_transcribe(f.model, f.tok, f.mel, f.pcm, f.n, 0, &o, &out, err, sizeof(err)),
        VT_EINVAL);
    opts_greedy(&o);
    o.language = "xx";
    CHECK_INT(
        vt_whisper_transcribe(f.model, f.tok, f.mel, f.pcm, f.n, 0, &o, &out, err, sizeof(err)),
        VT_EINVAL);
    o.language = "en";
    CHECK_INT(
        vt_whisper_transcribe(f.model, f.tok, f.mel, f.pcm, 100, 0, &o, &out, err, sizeof(err)), 0);
    CHECK_INT(out.n, 0);
    vt_whisper_result_release(&out);
    fixture_release(&f);
}

VT_TEST(whisper_transcribe_windows)
{
    struct fixture f;
    struct vt_whisper_opts o;
    char err[512] = "";
    json_t *runs;

    if (fixture_open(&f, EXPECTED_T, 6) != 0) {
        CHECK(0);
        fixture_release(&f);
        return;
    }
    CHECK_INT(f.n, json_integer_value(json_object_get(f.exp, "samples")));
    runs = json_object_get(f.exp, "runs");
    CHECK_INT(json_array_size(runs), 2);
    for (size_t r = 0; r < json_array_size(runs); r++) {
        struct vt_whisper_result out = {0};
        json_t *run = json_array_get(runs, r);
        opts_greedy(&o);
        o.initial_prompt = json_string_value(json_object_get(run, "initial_prompt"));
        CHECK_INT(
            vt_whisper_transcribe(f.model, f.tok, f.mel, f.pcm, f.n, 0, &o, &out, err, sizeof(err)),
            0);
        check_segments(&out, json_object_get(run, "segments"), 0);
        if (vt_test_failures)
            fprintf(stderr, "  run %zu (prompt %s): %s\n", r,
                    o.initial_prompt ? o.initial_prompt : "none", err);
        vt_whisper_result_release(&out);
    }
    fixture_release(&f);
}
