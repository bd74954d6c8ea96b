/*
 * The transcription-server half of the stt stage: one segment of audio, cut by stt.c's
 * streaming segmenter, sent as a 16 kHz mono 16-bit WAV to an OpenAI-compatible
 * POST {base}/v1/audio/transcriptions (whisper.cpp's server, faster-whisper/speaches,
 * LocalAI, vLLM, OpenAI) with response_format=verbose_json and word and segment
 * timestamps, and the answer turned into words on the file's time line.
 *
 * Servers differ in where they put word timings: OpenAI gives a top-level "words" array,
 * whisper.cpp and faster-whisper put "words" inside each segment; some give only segments,
 * whose words are then spread evenly over the segment's span. Times are relative to the
 * segment sent, checked against its duration: up to VT_STT_TIMING_SLACK_S outside it
 * is clamped (recognisers round word ends past the audio), more rejects the answer as
 * VT_EIO, since a server that misplaces words by seconds would put wrong moments in the
 * index, and another attempt (or a fixed server) may do better. Annotations a recogniser
 * writes for what is not speech ("[BLANK_AUDIO]", "(music)") are dropped; words keep the
 * server's case and punctuation (the search index tokenises them).
 */
#include "base/http.h"
#include "speech/stt_int.h"
#include "base/util.h"
#include "vidtheque.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RATE_HZ 16000
/* More words a second than anyone speaks is an answer about other audio. */
#define MAX_WORDS_PER_S 12
#define MAX_WORD_BYTES  200
/* A transcription answer for a 30 s segment is a few kB; far more is not one. */
#define MAX_ANSWER_BYTES ((size_t)4 << 20)

static void put_le(unsigned char *p, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* A RIFF WAVE file of the samples, caller frees. */
static unsigned char *make_wav(const int16_t *pcm, size_t n, size_t *len)
{
    size_t data = n * 2;
    unsigned char *w = vt_xmalloc(44 + data);

    memcpy(w, "RIFF", 4);
    put_le(w + 4, (uint32_t)(36 + data), 4);
    memcpy(w + 8, "WAVEfmt ", 8);
    put_le(w + 16, 16, 4);
    put_le(w + 20, 1, 2); /* PCM */
    put_le(w + 22, 1, 2); /* mono */
    put_le(w + 24, RATE_HZ, 4);
    put_le(w + 28, RATE_HZ * 2, 4);
    put_le(w + 32, 2, 2);
    put_le(w + 34, 16, 2);
    memcpy(w + 36, "data", 4);
    put_le(w + 40, (uint32_t)data, 4);
    for (size_t i = 0; i < n; i++)
        put_le(w + 44 + 2 * i, (uint16_t)pcm[i], 2);
    *len = 44 + data;
    return w;
}

struct parse {
    double seg_start_s, dur_s;
    struct vt_word **words;
    size_t *n_words, *cap_words;
    size_t max_words, added;
    char *err;
    size_t errlen;
};

/* A time of the answer, checked and clamped into [0, dur_s]. 0 or VT_EIO. */
static int answer_time(struct parse *p, json_t *v, const char *what, double *out)
{
    double t = json_number_value(v);

    if (!json_is_number(v) || !isfinite(t))
        return vt_err(p->err, p->errlen, VT_EIO, "%s: no time", what);
    if (t < -VT_STT_TIMING_SLACK_S || t > p->dur_s + VT_STT_TIMING_SLACK_S)
        return vt_err(p->err, p->errlen, VT_EIO,
                      "timings outside the segment: %s at %.2f s of a %.2f s segment", what, t,
                      p->dur_s);
    *out = t < 0 ? 0 : t > p->dur_s ? p->dur_s : t;
    return 0;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* "[BLANK_AUDIO]", "(music)": what a recogniser says about what is not speech. */
static int is_annotation(const char *s, size_t n)
{
    return n >= 2 && ((s[0] == '[' && s[n - 1] == ']') || (s[0] == '(' && s[n - 1] == ')'));
}

/* Append the whitespace-separated tokens of text, spread evenly over [start, end]. */
static int add_tokens(struct parse *p, const char *text, double start, double end, double conf)
{
    const char *s = text;
    size_t n = 0, k = 0;

    /* count first, to spread */
    for (const char *q = s; *q;) {
        size_t len;

        while (is_space(*q))
            q++;
        len = 0;
        while (q[len] && !is_space(q[len]))
            len++;
        if (len && !is_annotation(q, len))
            n++;
        q += len;
    }
    if (!n)
        return 0;
    if (p->added + n > p->max_words)
        return vt_err(p->err, p->errlen, VT_EIO,
                      "more than %zu words for a %.1f s segment: not a transcript of it",
                      p->max_words, p->dur_s);
    while (*s) {
        size_t len = 0, keep, o = 0;
        struct vt_word *w;
        char *t;

        while (is_space(*s))
            s++;
        while (s[len] && !is_space(s[len]))
            len++;
        if (!len || is_annotation(s, len)) {
            s += len;
            continue;
        }
        /* cut a word longer than MAX_WORD_BYTES at a character boundary; no control bytes */
        keep = len;
        if (keep > MAX_WORD_BYTES) {
            keep = MAX_WORD_BYTES;
            while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80)
                keep--;
        }
        t = vt_xmalloc(keep + 1);
        for (size_t i = 0; i < keep; i++)
            if ((unsigned char)s[i] >= 0x20 && s[i] != 0x7f)
                t[o++] = s[i];
        t[o] = 0;
        vt_grow((void **)p->words, p->cap_words, *p->n_words + 1, sizeof(**p->words));
        w = &(*p->words)[(*p->n_words)++];
        w->text = t;
        w->start_s = p->seg_start_s + start + (end - start) * (double)k / (double)n;
        w->end_s = p->seg_start_s + start + (end - start) * (double)(k + 1) / (double)n;
        w->conf = conf;
        k++;
        p->added++;
        s += len;
    }
    return 0;
}

/* Words given with their own timings: [{"word", "start", "end", "probability"?}]. */
static int add_timed_words(struct parse *p, json_t *arr)
{
    size_t i;
    json_t *it;

    json_array_foreach(arr, i, it)
    {
        json_t *word = json_object_get(it, "word"), *prob = json_object_get(it, "probability");
        double start, end, conf = 1;
        int rc;

        if (!json_is_string(word))
            return vt_err(p->err, p->errlen, VT_EIO, "word %zu has no text", i);
        rc = answer_time(p, json_object_get(it, "start"), "a word's start", &start);
        if (!rc)
            rc = answer_time(p, json_object_get(it, "end"), "a word's end", &end);
        if (rc)
            return rc;
        if (end < start)
            end = start;
        if (json_is_number(prob) && json_number_value(prob) >= 0 && json_number_value(prob) <= 1)
            conf = json_number_value(prob);
        rc = add_tokens(p, json_string_value(word), start, end, conf);
        if (rc)
            return rc;
    }
    return 0;
}

int vt_stt_openai_parse(const char *body, size_t len, double seg_start_s, double dur_s,
                        struct vt_word **words, size_t *n_words, size_t *cap_words, char *reported,
                        size_t reported_len, char *err, size_t errlen)
{
    struct parse p = {.seg_start_s = seg_start_s,
                      .dur_s = dur_s,
                      .words = words,
                      .n_words = n_words,
                      .cap_words = cap_words,
                      .max_words = (size_t)(MAX_WORDS_PER_S * dur_s) + 20,
                      .err = err,
                      .errlen = errlen};
    size_t had = *n_words, i;
    json_t *root, *segs, *top, *model, *text, *seg;
    json_error_t jerr;
    int rc = 0;

    if (reported_len)
        reported[0] = 0;
    root = json_loadb(body, len, 0, &jerr);
    if (!root)
        return vt_err(err, errlen, VT_EIO, "answer is not JSON (%s, at byte %d of %zu)", jerr.text,
                      jerr.position, len);
    if (!json_is_object(root)) {
        rc = vt_err(err, errlen, VT_EIO, "answer is not a verbose_json object");
        goto out;
    }
    model = json_object_get(root, "model");
    if (json_is_string(model) && reported_len) {
        size_t o = 0;

        for (const char *s = json_string_value(model); *s && o + 1 < reported_len && o < 80; s++)
            if ((unsigned char)*s >= 0x20 && *s != 0x7f)
                reported[o++] = *s;
        reported[o] = 0;
    }
    segs = json_object_get(root, "segments");
    top = json_object_get(root, "words");
    text = json_object_get(root, "text");
    if (segs && !json_is_array(segs)) {
        rc = vt_err(err, errlen, VT_EIO, "answer's \"segments\" is not an array");
        goto out;
    }
    if (json_is_array(top) && json_array_size(top)) {
        rc = add_timed_words(&p, top);
        goto out;
    }
    if (segs) {
        json_array_foreach(segs, i, seg)
        {
            json_t *sw = json_object_get(seg, "words"), *st = json_object_get(seg, "text");
            double start, end;

            if (json_is_array(sw) && json_array_size(sw)) {
                rc = add_timed_words(&p, sw);
            } else {
                if (!json_is_string(st)) {
                    rc = vt_err(err, errlen, VT_EIO, "segment %zu has no text", i);
                    goto out;
                }
                rc = answer_time(&p, json_object_get(seg, "start"), "a segment's start", &start);
                if (!rc)
                    rc = answer_time(&p, json_object_get(seg, "end"), "a segment's end", &end);
                if (!rc)
                    rc = add_tokens(&p, json_string_value(st), start, end < start ? start : end, 1);
            }
            if (rc)
                goto out;
        }
        goto out;
    }
    /* a plain "json" answer: the text without timings, spread over the segment */
    if (json_is_string(text)) {
        rc = add_tokens(&p, json_string_value(text), 0, dur_s, 1);
        goto out;
    }
    rc = vt_err(err, errlen, VT_EIO, "answer has no \"segments\", \"words\" or \"text\"");
out:
    json_decref(root);
    if (rc) {
        for (size_t k = had; k < *n_words; k++)
            free((*words)[k].text);
        *n_words = had;
    } else {
        /* in time order on the file's line, whatever the answer's order */
        for (size_t k = had + 1; k < *n_words; k++) {
            struct vt_word *w = &(*words)[k];

            if (w->start_s < w[-1].start_s)
                w->start_s = w[-1].start_s;
            if (w->end_s < w->start_s)
                w->end_s = w->start_s;
        }
    }
    return rc;
}

int vt_stt_openai_segment(const struct vt_stt_openai *cfg, const int16_t *pcm, size_t n,
                          double seg_start_s, struct vt_word **words, size_t *n_words,
                          size_t *cap_words, char *reported, size_t reported_len, char *err,
                          size_t errlen)
{
    size_t wav_len = 0;
    unsigned char *wav = make_wav(pcm, n, &wav_len);
    struct vt_http_part parts[7] = {
        {.name = "file",
         .filename = "segment.wav",
         .type = "audio/wav",
         .data = wav,
         .len = wav_len},
        {.name = "model", .data = cfg->model, .len = strlen(cfg->model)},
        {.name = "response_format", .data = "verbose_json", .len = 12},
        {.name = "timestamp_granularities[]", .data = "word", .len = 4},
        {.name = "timestamp_granularities[]", .data = "segment", .len = 7},
    };
    size_t n_parts = 5;
    struct vt_http_req req = {.method = "POST",
                              .url = cfg->url,
                              .bearer = cfg->api_key,
                              .parts = parts,
                              .timeout_s = cfg->timeout_s,
                              .max_bytes = MAX_ANSWER_BYTES,
                              .retries = cfg->retries};
    struct vt_http_resp resp = {0};
    char why[400] = "";
    int rc;

    if (cfg->language && *cfg->language) {
        parts[n_parts].name = "language";
        parts[n_parts].data = cfg->language;
        parts[n_parts++].len = strlen(cfg->language);
    }
    req.n_parts = n_parts;
    rc = vt_http_do(&req, &resp, why, sizeof(why));
    if (!rc)
        rc = vt_stt_openai_parse(resp.body, resp.len, seg_start_s, (double)n / RATE_HZ, words,
                                 n_words, cap_words, reported, reported_len, why, sizeof(why));
    if (rc)
        vt_err(err, errlen, rc, "openai-transcribe: the segment at %.2f-%.2f s: %s", seg_start_s,
               seg_start_s + (double)n / RATE_HZ, why);
    vt_http_resp_release(&resp);
    free(wav);
    return rc;
}
