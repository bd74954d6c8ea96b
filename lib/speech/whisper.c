/*
 * The transcribe loop (openai/whisper's transcribe.py, without clip_timestamps and
 * hallucination_silence_threshold): 30 s windows of log-mel starting at seek, each
 * decoded with temperature fallback (whisper_decode.c), cut into segments at consecutive
 * timestamps, the window advancing to the last complete timestamp (or its end), the text
 * so far the prompt of the next window. One window's mel, features and cache live at a
 * time, and the prompt keeps only the tokens a window can take, so memory does not grow
 * with the audio (only the result does).
 */
#include "speech/whisper.h"

#include "base/util.h"
#include "ml/tiktoken.h"
#include "ml/whisper_model.h"
#include "speech/whisper_align.h"
#include "speech/whisper_decode.h"
#include "speech/whisper_mel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Audio longer than this (in samples: 12 hours) is refused: the stage cuts at pauses. */
#define MAX_SAMPLES ((size_t)12 * 3600 * VT_WMEL_SAMPLE_RATE)

void vt_whisper_opts_default(struct vt_whisper_opts *o)
{
    static const double temps[] = {0.0, 0.2, 0.4, 0.6, 0.8, 1.0};

    memset(o, 0, sizeof(*o));
    memcpy(o->temperatures, temps, sizeof(temps));
    o->n_temperatures = (int)VT_ARRAY_LEN(temps);
    o->compression_ratio_threshold = 2.4;
    o->logprob_threshold = -1.0;
    o->no_speech_threshold = 0.6;
    o->condition_on_previous_text = 1;
    o->word_timestamps = 1;
    o->max_initial_timestamp = 1.0;
    o->seed = 23;
}

static void segment_release(struct vt_whisper_segment *s)
{
    free(s->text);
    free(s->tokens);
    for (size_t i = 0; i < s->n_words; i++)
        free(s->words[i].text);
    free(s->words);
    memset(s, 0, sizeof(*s));
}

void vt_whisper_result_release(struct vt_whisper_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        segment_release(&r->seg[i]);
    free(r->seg);
    r->seg = NULL;
    r->n = r->cap = 0;
}

/* The state of one call, window after window. */
struct run {
    const struct vt_whisper_model *model;
    const struct vt_whisper_mel *mel;
    const struct vt_whisper_opts *o;
    struct vt_whisper_dec d;
    const float *pcm;
    size_t n;
    float max;         /* of the whole log-mel, for the clamp */
    size_t content;    /* frames of content */
    float *win, *feat; /* one window's mel and features */
    float *first;      /* the logits after the prefix */
    int32_t *prompt;   /* the last prompt tokens (at most n_text_ctx / 2) */
    size_t n_prompt;
    int32_t *initial;         /* the window's initial tokens */
    size_t n_init, sot_index; /* their count, where <|startoftranscript|> is */
    int32_t lang_token;       /* -1 for English-only models */
    int mit_index;            /* max_initial_timestamp in timestamp steps, or -1 */
    int sample_len;
    uint64_t rng;
    double t0;
    double last_speech; /* transcribe.py's last_speech_timestamp, in seconds after t0 */
};

/* Append tokens to the prompt, keeping the last n_text_ctx / 2 (more are never used). */
static void prompt_add(struct run *R, const int32_t *t, size_t n)
{
    size_t keep = (size_t)R->d.n_text_ctx / 2;

    if (n == 0) /* an emptied segment: no tokens (and maybe no array) */
        return;
    if (n >= keep) {
        memcpy(R->prompt, t + n - keep, keep * sizeof(*t));
        R->n_prompt = keep;
        return;
    }
    if (R->n_prompt + n > keep) {
        size_t drop = R->n_prompt + n - keep;
        memmove(R->prompt, R->prompt + drop, (R->n_prompt - drop) * sizeof(*t));
        R->n_prompt -= drop;
    }
    memcpy(R->prompt + R->n_prompt, t, n * sizeof(*t));
    R->n_prompt += n;
}

/* transcribe.py's language: given, "en" for English-only models, else detect_language on
 * the first 30 s of the padded spectrogram (pad_or_trim(mel, N_FRAMES): not zeroed). */
static int pick_language(struct run *R, struct vt_whisper_result *out, char *err, size_t errlen)
{
    const struct vt_whisper_dims *dims = vt_whisper_model_dims(R->model);
    struct vt_whisper_kv *kv = NULL;
    double prob;
    int rc, lang;

    R->lang_token = -1;
    if (R->d.english || R->o->language) {
        const char *code = R->o->language ? R->o->language : "en";
        snprintf(out->language, sizeof(out->language), "%s", code);
        if (R->d.english)
            return 0;
        R->lang_token = vt_tiktoken_language(R->d.tok, code);
        if (R->lang_token < 0)
            return vt_err(err, errlen, VT_EINVAL, "whisper: unknown language '%s'", code);
        return 0;
    }
    rc = vt_whisper_mel_log10(R->mel, R->pcm, R->n, VT_WMEL_N_SAMPLES, 0, VT_WMEL_N_FRAMES, R->win,
                              VT_WMEL_N_FRAMES, NULL, err, errlen);
    if (rc != 0)
        return rc;
    vt_whisper_mel_normalize(R->win, (size_t)dims->n_mels * VT_WMEL_N_FRAMES, R->max);
    rc = vt_whisper_encode(R->model, R->win, R->feat, err, errlen);
    if (rc != 0)
        return rc;
    kv = vt_whisper_kv_new(R->model, R->feat);
    if (!kv)
        return vt_err(err, errlen, VT_ENOMEM, "whisper: out of memory for the decoder cache");
    rc = vt_whisper_detect_language(&R->d, kv, &lang, &prob, err, errlen);
    vt_whisper_kv_free(kv);
    if (rc != 0)
        return rc;
    snprintf(out->language, sizeof(out->language), "%s", vt_whisper_language_code(lang));
    R->lang_token = R->d.sp->first_language + lang;
    return 0;
}

/* decode_with_fallback: the temperatures in turn until the result is neither too
 * repetitive nor too improbable (or is silence). */
static int decode_fallback(struct run *R, struct vt_whisper_kv *kv, struct vt_whisper_decoding *res,
                           char *err, size_t errlen)
{
    const struct vt_whisper_opts *o = R->o;
    double nsp = 0;
    int rc;

    R->n_init = vt_whisper_initial_tokens(&R->d, R->lang_token, o->translate, R->prompt,
                                          R->n_prompt, R->initial, &R->sot_index);
    rc = vt_whisper_prefix(&R->d, kv, R->initial, R->n_init, R->sot_index, R->first, &nsp, err,
                           errlen);
    for (int i = 0; rc == 0 && i < o->n_temperatures; i++) {
        int fallback = 0;
        rc = vt_whisper_sample(&R->d, kv, R->initial, R->n_init, R->first, nsp, o->temperatures[i],
                               R->sample_len, R->mit_index, &R->rng, res, err, errlen);
        if (rc != 0)
            break;
        if (o->compression_ratio_threshold > 0 &&
            res->compression_ratio > o->compression_ratio_threshold)
            fallback = 1;
        if (!isnan(o->logprob_threshold) && res->avg_logprob < o->logprob_threshold)
            fallback = 1;
        if (!isnan(o->no_speech_threshold) && res->no_speech_prob > o->no_speech_threshold &&
            !isnan(o->logprob_threshold) && res->avg_logprob < o->logprob_threshold)
            fallback = 0;
        if (!fallback)
            break;
    }
    return rc;
}

static void add_segment(struct run *R, struct vt_whisper_result *out, size_t seek, double start,
                        double end, const int32_t *tok, size_t n,
                        const struct vt_whisper_decoding *res)
{
    struct vt_whisper_segment *s;
    (void)seek;

    if (out->n == out->cap)
        vt_grow((void **)&out->seg, &out->cap, out->n + 1, sizeof(*out->seg));
    s = &out->seg[out->n++];
    memset(s, 0, sizeof(*s));
    s->start = start; /* from the start of the audio until the window is done */
    s->end = end;
    s->tokens = vt_xmalloc((n ? n : 1) * sizeof(*tok));
    memcpy(s->tokens, tok, n * sizeof(*tok));
    s->n_tokens = n;
    s->text = vt_whisper_text(&R->d, tok, n, 0);
    if (!s->text)
        s->text = vt_xstrdup("");
    s->avg_logprob = res->avg_logprob;
    s->compression_ratio = res->compression_ratio;
    s->no_speech_prob = res->no_speech_prob;
    s->temperature = res->temperature;
}

/* Cut one window's tokens into segments at consecutive timestamps; returns the new seek. */
static size_t cut_segments(struct run *R, struct vt_whisper_result *out, size_t seek,
                           size_t segment_size, const struct vt_whisper_decoding *res,
                           int *single_ending)
{
    const int32_t *t = res->tokens;
    size_t n = res->n_tokens, last = 0, stride = VT_WMEL_N_FRAMES / (size_t)R->d.n_audio_ctx;
    int32_t tb = R->d.sp->timestamp_begin;
    double prec = (double)stride * VT_WMEL_HOP / VT_WMEL_SAMPLE_RATE;
    double offset = (double)seek * VT_WMEL_HOP / VT_WMEL_SAMPLE_RATE;
    int any = 0;

    /* transcribe.py's timestamp_tokens[-2:] == [False, True]: needs two tokens */
    *single_ending = n >= 2 && t[n - 2] < tb && t[n - 1] >= tb;
    for (size_t i = 1; i <= n; i++) {
        int pair = i < n && t[i - 1] >= tb && t[i] >= tb;
        if (!pair && !(i == n && *single_ending && any))
            continue;
        add_segment(R, out, seek, offset + (t[last] - tb) * prec, offset + (t[i - 1] - tb) * prec,
                    t + last, i - last, res);
        last = i;
        any = 1;
    }
    if (any)
        return *single_ending ? seek + segment_size : seek + (size_t)(t[last - 1] - tb) * stride;
    {
        double duration = (double)segment_size * VT_WMEL_HOP / VT_WMEL_SAMPLE_RATE;
        for (size_t i = n; i-- > 0;)
            if (t[i] >= tb) {
                if (t[i] != tb)
                    duration = (t[i] - tb) * prec;
                break;
            }
        add_segment(R, out, seek, offset, offset + duration, t, n, res);
    }
    return seek + segment_size;
}

/* utils.py's get_end over the window's segments (first..): the end of their last word, or
 * when no word was timed the last segment's end (a window of timestamps only still moves
 * the seek and the last speech there), NAN without segments. */
static double last_word_end(const struct vt_whisper_result *out, size_t first)
{
    for (size_t i = out->n; i-- > first;)
        if (out->seg[i].n_words > 0)
            return out->seg[i].words[out->seg[i].n_words - 1].end;
    return out->n > first ? out->seg[out->n - 1].end : NAN;
}

/* Move the segments from first on, and their words, by dt seconds. */
static void shift_segments(struct vt_whisper_result *out, size_t first, double dt)
{
    for (size_t i = first; i < out->n; i++) {
        out->seg[i].start += dt;
        out->seg[i].end += dt;
        for (size_t k = 0; k < out->seg[i].n_words; k++) {
            out->seg[i].words[k].start += dt;
            out->seg[i].words[k].end += dt;
        }
    }
}

/*
 * Word timings of the window's segments (first..), and transcribe.py's seek from the last
 * word when the window did not end on a single timestamp. The segments' times are still
 * from the start of the audio, as transcribe.py's: add_word_timestamps clamps at 0 and
 * halves times (boundary = words[1].end / 2), which on the caller's time line (t0) would
 * give other words.
 */
static int time_words(struct run *R, struct vt_whisper_result *out, size_t first, size_t seek,
                      size_t segment_size, int single_ending, size_t *next_seek, char *err,
                      size_t errlen)
{
    double offset = (double)seek * VT_WMEL_HOP / VT_WMEL_SAMPLE_RATE, end;
    int rc;

    if (first == out->n)
        return 0;
    rc = vt_whisper_align(R->model, R->d.tok, R->feat, R->initial + R->sot_index,
                          R->n_init - R->sot_index, out->seg + first, out->n - first,
                          (int)segment_size, offset, R->last_speech, err, errlen);
    end = last_word_end(out, first);
    if (rc != 0)
        return rc;
    if (!isnan(end))
        R->last_speech = end;
    /* round() as Python's: halves to even */
    if (!single_ending && !isnan(end) && end > offset)
        *next_seek = (size_t)nearbyint(end * (VT_WMEL_SAMPLE_RATE / VT_WMEL_HOP));
    return 0;
}

/* The window's segments that are instantaneous or hold no text are emptied (their tokens
 * then feed no prompt); the rest extend the prompt. */
static void settle_segments(struct run *R, struct vt_whisper_result *out, size_t first)
{
    for (size_t i = first; i < out->n; i++) {
        struct vt_whisper_segment *s = &out->seg[i];
        char *stripped = vt_xstrdup(s->text);
        size_t k = strlen(stripped);

        while (k > 0 && strchr(" \t\n\r\v\f", stripped[k - 1]))
            k--;
        if (s->start == s->end || strspn(stripped, " \t\n\r\v\f") >= k) {
            double st = s->start, en = s->end, lp = s->avg_logprob, cr = s->compression_ratio;
            double ns = s->no_speech_prob, te = s->temperature;
            segment_release(s);
            s->start = st, s->end = en, s->avg_logprob = lp, s->compression_ratio = cr;
            s->no_speech_prob = ns, s->temperature = te;
            s->text = vt_xstrdup("");
        }
        free(stripped);
        prompt_add(R, s->tokens, s->n_tokens);
    }
}

/* One window at seek: decode, skip silence, cut, time words; *seek advances. */
static int window(struct run *R, struct vt_whisper_result *out, size_t *seek, char *err,
                  size_t errlen)
{
    const struct vt_whisper_opts *o = R->o;
    size_t segment_size = R->content - *seek, first = out->n, next;
    struct vt_whisper_decoding res = {0};
    struct vt_whisper_kv *kv = NULL;
    int rc, single = 0;

    if (segment_size > VT_WMEL_N_FRAMES)
        segment_size = VT_WMEL_N_FRAMES;
    rc = vt_whisper_mel_segment(R->mel, R->pcm, R->n, R->max, *seek, R->win, err, errlen);
    if (rc == 0)
        rc = vt_whisper_encode(R->model, R->win, R->feat, err, errlen);
    if (rc != 0)
        return rc;
    kv = vt_whisper_kv_new(R->model, R->feat);
    if (!kv)
        return vt_err(err, errlen, VT_ENOMEM, "whisper: out of memory for the decoder cache");
    rc = decode_fallback(R, kv, &res, err, errlen);
    vt_whisper_kv_free(kv);
    if (rc != 0)
        goto out;
    /* no voice: skipped unless the text is probable enough despite it */
    if (!isnan(o->no_speech_threshold) && res.no_speech_prob > o->no_speech_threshold &&
        !(!isnan(o->logprob_threshold) && res.avg_logprob > o->logprob_threshold)) {
        *seek += segment_size;
        goto out;
    }
    next = cut_segments(R, out, *seek, segment_size, &res, &single);
    if (o->word_timestamps)
        rc = time_words(R, out, first, *seek, segment_size, single, &next, err, errlen);
    shift_segments(out, first, R->t0); /* onto the caller's time line */
    if (rc != 0)
        goto out;
    /* upstream would loop for ever on a window that does not advance */
    *seek = next > *seek ? next : *seek + segment_size;
    settle_segments(R, out, first);
    if (!o->condition_on_previous_text || res.temperature > 0.5)
        R->n_prompt = 0;
out:
    vt_whisper_decoding_release(&res);
    return rc;
}

static int check_args(const struct vt_whisper_model *model, const struct vt_whisper_mel *mel,
                      size_t n, const struct vt_whisper_opts *o, char *err, size_t errlen)
{
    const struct vt_whisper_dims *d = vt_whisper_model_dims(model);

    if (vt_whisper_mel_n_mels(mel) != d->n_mels)
        return vt_err(err, errlen, VT_EINVAL, "whisper: a filterbank of %d bins for a model of %d",
                      vt_whisper_mel_n_mels(mel), d->n_mels);
    if (d->n_audio_ctx <= 0 || VT_WMEL_N_FRAMES % d->n_audio_ctx != 0)
        return vt_err(err, errlen, VT_EINVAL, "whisper: an audio context of %d frames",
                      d->n_audio_ctx);
    if (n > MAX_SAMPLES)
        return vt_err(err, errlen, VT_EINVAL, "whisper: %zu samples: too long", n);
    if (o->n_temperatures < 1 || o->n_temperatures > (int)VT_ARRAY_LEN(o->temperatures))
        return vt_err(err, errlen, VT_EINVAL, "whisper: %d temperatures", o->n_temperatures);
    for (int i = 0; i < o->n_temperatures; i++)
        if (!(o->temperatures[i] >= 0 && o->temperatures[i] <= 10))
            return vt_err(err, errlen, VT_EINVAL, "whisper: temperature %g", o->temperatures[i]);
    if (o->sample_len < 0)
        return vt_err(err, errlen, VT_EINVAL, "whisper: sample_len %d", o->sample_len);
    return 0;
}

/* The prompt's start: initial_prompt encoded as transcribe.py does (" " + strip()). */
static int set_initial_prompt(struct run *R, char *err, size_t errlen)
{
    const char *p = R->o->initial_prompt;
    const int32_t *ids;
    size_t len, k;
    char *s;
    int rc;

    if (!p)
        return 0;
    while (*p && strchr(" \t\n\r\v\f", *p))
        p++;
    len = strlen(p);
    while (len > 0 && strchr(" \t\n\r\v\f", p[len - 1]))
        len--;
    /* only its last n_text_ctx / 2 - 1 tokens are ever used: its tail is enough */
    if (len > 65536) {
        p += len - 65536;
        len = 65536;
    }
    s = vt_xasprintf(" %.*s", (int)len, p);
    rc = vt_tiktoken_encode(R->d.tok, s, strlen(s), &ids, &k);
    if (rc == 0)
        prompt_add(R, ids, k);
    else
        rc = vt_err(err, errlen, rc, "whisper: the initial prompt cannot be encoded");
    free(s);
    return rc;
}

int vt_whisper_transcribe(const struct vt_whisper_model *model, struct vt_tiktoken *tok,
                          const struct vt_whisper_mel *mel, const float *pcm, size_t n, double t0,
                          const struct vt_whisper_opts *opts, struct vt_whisper_result *out,
                          char *err, size_t errlen)
{
    const struct vt_whisper_dims *d = vt_whisper_model_dims(model);
    struct run R = {
        .model = model, .mel = mel, .o = opts, .pcm = pcm, .n = n, .t0 = t0, .last_speech = 0};
    size_t seek = 0;
    int rc;

    rc = check_args(model, mel, n, opts, err, errlen);
    if (rc == 0)
        rc = vt_whisper_dec_init(&R.d, tok, d->n_vocab, d->n_text_ctx, d->n_audio_ctx, err, errlen);
    if (rc != 0)
        return rc;
    R.content = vt_whisper_mel_n_frames(n, VT_WMEL_N_SAMPLES) - VT_WMEL_N_FRAMES;
    R.sample_len = opts->sample_len > 0 ? opts->sample_len : d->n_text_ctx / 2;
    /* precision CHUNK_LENGTH / n_audio_ctx; round() as Python's (halves to even) */
    R.mit_index = opts->max_initial_timestamp > 0 && opts->max_initial_timestamp <= 30
                      ? (int)nearbyint(opts->max_initial_timestamp / (30.0 / d->n_audio_ctx))
                      : -1;
    R.rng = opts->seed;
    R.win = vt_xmalloc((size_t)d->n_mels * VT_WMEL_N_FRAMES * sizeof(float));
    R.feat = vt_xmalloc((size_t)d->n_audio_ctx * d->n_audio_state * sizeof(float));
    R.first = vt_xmalloc((size_t)d->n_vocab * sizeof(float));
    R.prompt = vt_xmalloc(((size_t)d->n_text_ctx / 2 + 1) * sizeof(int32_t));
    R.initial = vt_xmalloc(((size_t)d->n_text_ctx / 2 + 8) * sizeof(int32_t));
    rc = set_initial_prompt(&R, err, errlen);
    if (rc == 0 && R.content > 0)
        rc = vt_whisper_mel_max(mel, pcm, n, &R.max, err, errlen);
    if (rc == 0 && R.content > 0)
        rc = pick_language(&R, out, err, errlen);
    while (rc == 0 && seek < R.content)
        rc = window(&R, out, &seek, err, errlen);
    free(R.win);
    free(R.feat);
    free(R.first);
    free(R.prompt);
    free(R.initial);
    vt_whisper_dec_release(&R.d);
    return rc;
}
