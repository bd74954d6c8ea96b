/*
 * Tests of Silero inside the stt stage's streaming segmenter: the cutter (vad.h) gives
 * exactly what upstream Silero's get_speech_timestamps gives on the same probabilities
 * (a plain transcription of utils_vad.py below), whatever they are; a cut leaves the rest of
 * the segment open; and the segmenter (vt_stt_cut, stt_int.h) cuts the same segments from
 * real speech whether the audio comes in blocks of 1, 511, 513 or 64000 samples, holds a
 * few seconds of it however long the audio, and cuts speech without pauses into pieces of
 * at most 30 s, with Silero as with the energy detector.
 */
#include "base/util.h"
#include "harness.h"
#include "media/audio.h"
#include "speech/stt_int.h"
#include "speech/vad.h"
#include "vidtheque.h"

#include <stdint.h>
#include <stdlib.h>

#define VAD_FILE "tests/data/silero-vad/for-tests-silero-v6.2.0-ggml.bin"
#define JFK_FILE "tests/data/speech/jfk.wav"
#define MAX_SEG  256

/*
 * upstream's get_speech_timestamps without max_speech_duration_s, on the whole array, in
 * samples: the reference the streaming cutter must agree with
 */
static size_t upstream(const float *probs, size_t n_probs, size_t len,
                       const struct vt_vad_params *p, struct vt_vad_segment *out)
{
    size_t win = VT_VAD_WINDOW, min_speech = 16 * (size_t)p->min_speech_ms;
    size_t min_silence = 16 * (size_t)p->min_silence_ms, pad = 16 * (size_t)p->speech_pad_ms;
    size_t temp_end = 0, start = 0, n = 0;
    float neg = p->threshold - 0.15f;
    int triggered = 0;

    for (size_t i = 0; i < n_probs && n < MAX_SEG; i++) {
        if (probs[i] >= p->threshold && temp_end)
            temp_end = 0;
        if (probs[i] >= p->threshold && !triggered) {
            triggered = 1;
            start = win * i;
            continue;
        }
        if (probs[i] < neg && triggered) {
            if (!temp_end)
                temp_end = win * i;
            if (win * i - temp_end < min_silence)
                continue;
            if (temp_end - start > min_speech) {
                out[n].start = start;
                out[n++].end = temp_end;
            }
            temp_end = 0;
            triggered = 0;
        }
    }
    if (triggered && n < MAX_SEG && len - start > min_speech) {
        out[n].start = start;
        out[n++].end = len;
    }
    for (size_t i = 0; i < n; i++) {
        if (i == 0)
            out[i].start = out[i].start > pad ? out[i].start - pad : 0;
        if (i + 1 < n) {
            size_t gap = out[i + 1].start - out[i].end;

            if (gap < 2 * pad) {
                out[i].end += gap / 2;
                out[i + 1].start -= gap / 2;
            } else {
                out[i].end = out[i].end + pad < len ? out[i].end + pad : len;
                out[i + 1].start = out[i + 1].start > pad ? out[i + 1].start - pad : 0;
            }
        } else {
            out[i].end = out[i].end + pad < len ? out[i].end + pad : len;
        }
    }
    return n;
}

static size_t cutter_all(const float *probs, size_t n_probs, size_t len,
                         const struct vt_vad_params *p, struct vt_vad_segment *out)
{
    struct vt_vad_cutter c;
    size_t n = 0;

    vt_vad_cutter_init(&c, p);
    for (size_t i = 0; i < n_probs; i++) {
        size_t front = vt_vad_cutter_frontier(&c);

        if (vt_vad_cutter_push(&c, probs[i], &out[n]) && n < MAX_SEG - 1) {
            /* the frontier promised no segment would start before it */
            CHECK(out[n].start >= front);
            n++;
        }
    }
    if (vt_vad_cutter_finish(&c, len, &out[n]))
        n++;
    return n;
}

/* Probabilities with speech-like runs, dips, blips and values between the thresholds. */
static void random_probs(float *p, size_t n, uint32_t seed)
{
    float level = 0;

    for (size_t i = 0; i < n;) {
        size_t run;

        seed = seed * 1664525u + 1013904223u;
        run = 1 + (seed >> 8) % 40;
        level = (float)((seed >> 16) % 5) * 0.25f - 0.01f;
        for (; run-- && i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            p[i] = level + (float)((seed >> 20) % 100) / 1000.0f;
            if (p[i] < 0)
                p[i] = 0;
            if (p[i] > 1)
                p[i] = 1;
        }
    }
}

VT_TEST(vad_cutter_is_upstream)
{
    static const struct vt_vad_params params[] = {
        {0.5f, 250, 100, 0, 30},
        {0.6f, 100, 300, 0, 100},
        {0.3f, 0, 0, 0, 0},
    };
    static float probs[3000];
    struct vt_vad_segment want[MAX_SEG], got[MAX_SEG];
    size_t total = 0;

    for (size_t k = 0; k < VT_ARRAY_LEN(params); k++)
        for (uint32_t seed = 1; seed <= 20; seed++) {
            size_t n_probs = 500 + seed * 120, len = n_probs * VT_VAD_WINDOW - seed * 7;
            size_t nw, ng;

            random_probs(probs, n_probs, seed);
            nw = upstream(probs, n_probs, len, &params[k], want);
            ng = cutter_all(probs, n_probs, len, &params[k], got);
            CHECK_INT(ng, nw);
            total += nw;
            for (size_t i = 0; i < nw && i < ng; i++) {
                CHECK_INT(got[i].start, want[i].start);
                CHECK_INT(got[i].end, want[i].end);
            }
        }
    /* sequences with segments of every kind, not empty ones */
    CHECK(total > 60 * 10);
}

VT_TEST(vad_cutter_cut_keeps_the_rest)
{
    struct vt_vad_params p;
    struct vt_vad_cutter c;
    struct vt_vad_segment seg;
    size_t start = 0;

    vt_vad_params_default(&p);
    vt_vad_cutter_init(&c, &p);
    CHECK(!vt_vad_cutter_open(&c, &start));
    for (int i = 0; i < 10; i++)
        CHECK(!vt_vad_cutter_push(&c, 0.0f, &seg));
    for (int i = 0; i < 100; i++)
        CHECK(!vt_vad_cutter_push(&c, 0.9f, &seg));
    CHECK(vt_vad_cutter_open(&c, &start));
    CHECK_INT(start, 10 * 512 - 480); /* padded by 30 ms */
    /* not inside: refused */
    CHECK(!vt_vad_cutter_cut(&c, start, &seg));
    CHECK(!vt_vad_cutter_cut(&c, 111 * 512, &seg));
    CHECK(vt_vad_cutter_cut(&c, 100 * 512, &seg));
    CHECK_INT(seg.start, 10 * 512 - 480);
    CHECK_INT(seg.end, 100 * 512);
    CHECK_INT(vt_vad_cutter_frontier(&c), 100 * 512);
    /* the rest, 10 windows (160 ms, less than min_speech): kept, without a pad before it */
    for (int i = 0; i < 4; i++)
        CHECK(!vt_vad_cutter_push(&c, 0.0f, &seg));
    CHECK(vt_vad_cutter_push(&c, 0.0f, &seg));
    CHECK_INT(seg.start, 100 * 512);
    CHECK_INT(seg.end, 110 * 512 + 480);
    CHECK(!vt_vad_cutter_open(&c, &start));
    CHECK_INT(vt_vad_cutter_frontier(&c), 115 * 512 - 480);
    CHECK(!vt_vad_cutter_finish(&c, 115 * 512, &seg));
}

/* jfk.wav n_tiles times, each after 1 s of silence, or only its speech when tight. */
static int16_t *tiled_jfk(const struct vt_vad *vad, int n_tiles, int tight, size_t *n_out)
{
    int16_t *pcm = NULL, *out;
    size_t n = 0, n_seg = 0, len = 0, at = 0;
    struct vt_vad_segment *seg = NULL;
    float *probs = NULL;
    char err[512];

    if (vt_audio_load(JFK_FILE, &pcm, &n, err, sizeof(err)))
        return NULL;
    if (tight) {
        struct vt_vad_params p;
        size_t n_probs = vt_vad_probs(vad, pcm, n, VT_VAD_FRAMING_SILERO, &probs);

        vt_vad_params_default(&p);
        p.speech_pad_ms = 0;
        n_seg = vt_vad_segments(probs, n_probs, &p, &seg);
        for (size_t i = 0; i < n_seg; i++)
            len += seg[i].end - seg[i].start;
    } else {
        len = 16000 + n;
    }
    out = vt_xcalloc((size_t)n_tiles * len, sizeof(*out));
    for (int t = 0; t < n_tiles; t++) {
        if (!tight) {
            memcpy(out + at + 16000, pcm, n * sizeof(*pcm));
            at += len;
            continue;
        }
        for (size_t i = 0; i < n_seg; i++) {
            memcpy(out + at, pcm + seg[i].start, (seg[i].end - seg[i].start) * sizeof(*pcm));
            at += seg[i].end - seg[i].start;
        }
    }
    /* and a second voice over it, 3.3 s later: Silero's dips between clips are filled */
    for (size_t i = at; tight && i-- > 52800;)
        out[i] = (int16_t)(out[i] / 2 + out[i - 52800] / 2);
    free(seg);
    free(probs);
    free(pcm);
    *n_out = at;
    return out;
}

static void check_same_cuts(const struct vt_stt_cuts *a, const struct vt_stt_cuts *b)
{
    CHECK_INT(b->n, a->n);
    for (size_t i = 0; i < a->n && i < b->n; i++) {
        CHECK_INT(b->seg[i].start, a->seg[i].start);
        CHECK_INT(b->seg[i].end, a->seg[i].end);
    }
}

VT_TEST(stt_cut_whatever_the_blocks)
{
    static const size_t blocks[] = {1, 160, 511, 512, 513, 7919, 64000};
    struct vt_vad *vad = NULL;
    char err[512] = "";
    size_t n = 0;
    int16_t *pcm;

    CHECK_INT(vt_vad_open(VAD_FILE, &vad, err, sizeof(err)), 0);
    if (!vad)
        return;
    pcm = tiled_jfk(vad, 3, 0, &n);
    CHECK(pcm != NULL);
    for (int silero = 0; pcm && silero < 2; silero++) {
        struct vt_stt_cuts ref = {0};

        CHECK_INT(vt_stt_cut(silero ? vad : NULL, pcm, n, 64000, &ref, err, sizeof(err)), 0);
        /* each copy: "... Americans" | "ask not" | "what your country..." | "ask what..." */
        CHECK(ref.n >= 6 && ref.n <= 12);
        for (size_t i = 0; i < ref.n; i++) {
            CHECK(ref.seg[i].end > ref.seg[i].start);
            CHECK(i == 0 || ref.seg[i].start >= ref.seg[i - 1].end);
            /* no segment in the silence before the first copy's speech (1.3 s) */
            CHECK(ref.seg[i].start >= 16000 + 0.29 * 16000 - 0.31 * 16000);
        }
        for (size_t b = 0; b < VT_ARRAY_LEN(blocks); b++) {
            struct vt_stt_cuts got = {0};

            CHECK_INT(vt_stt_cut(silero ? vad : NULL, pcm, n, blocks[b], &got, err, sizeof(err)),
                      0);
            check_same_cuts(&ref, &got);
            free(got.seg);
        }
        free(ref.seg);
    }
    {
        struct vt_stt_cuts bad = {0};

        CHECK_INT(vt_stt_cut(vad, pcm, n, 0, &bad, err, sizeof(err)), VT_EINVAL);
        CHECK_INT(vt_stt_cut(vad, pcm, n, 64001, &bad, err, sizeof(err)), VT_EINVAL);
    }
    free(pcm);
    vt_vad_free(vad);
}

VT_TEST(stt_cut_silero_bounded_memory)
{
    struct vt_vad *vad = NULL;
    struct vt_stt_cuts cuts = {0};
    char err[512] = "";
    size_t n = 0;
    int16_t *pcm;

    CHECK_INT(vt_vad_open(VAD_FILE, &vad, err, sizeof(err)), 0);
    if (!vad)
        return;
    /* 192 s of talk: Silero holds a segment and a block of it, never the whole */
    pcm = tiled_jfk(vad, 16, 0, &n);
    CHECK(pcm != NULL && n == 16 * 192000);
    CHECK_INT(vt_stt_cut(vad, pcm, n, 64000, &cuts, err, sizeof(err)), 0);
    CHECK(cuts.n >= 32);
    CHECK(cuts.pcm_peak <= 40 * 16000);
    free(cuts.seg);
    free(pcm);
    vt_vad_free(vad);
}

VT_TEST(stt_cut_speech_without_pauses)
{
    struct vt_vad *vad = NULL;
    char err[512] = "";
    size_t n = 0;
    int16_t *pcm;

    CHECK_INT(vt_vad_open(VAD_FILE, &vad, err, sizeof(err)), 0);
    if (!vad)
        return;
    /* jfk's speech without its pauses, 8 times, two voices: about 65 s that never stop */
    pcm = tiled_jfk(vad, 8, 1, &n);
    CHECK(pcm != NULL && n > 60 * 16000);
    for (int silero = 0; pcm && silero < 2; silero++) {
        struct vt_stt_cuts cuts = {0}, small = {0};
        size_t covered = 0, abutting = 0;

        CHECK_INT(vt_stt_cut(silero ? vad : NULL, pcm, n, 64000, &cuts, err, sizeof(err)), 0);
        CHECK(cuts.n >= 3);
        for (size_t i = 0; i < cuts.n; i++) {
            CHECK(cuts.seg[i].end - cuts.seg[i].start <= 30 * 16000 + 2 * 4800);
            covered += cuts.seg[i].end - cuts.seg[i].start;
            abutting += i > 0 && cuts.seg[i].start == cuts.seg[i - 1].end;
        }
        /* cut where there was no pause at all */
        CHECK(abutting >= 1);
        /* speech everywhere: (nearly) all of it is in segments */
        CHECK(covered >= n * 9 / 10);
        CHECK_INT(vt_stt_cut(silero ? vad : NULL, pcm, n, 513, &small, err, sizeof(err)), 0);
        check_same_cuts(&cuts, &small);
        free(small.seg);
        free(cuts.seg);
    }
    free(pcm);
    vt_vad_free(vad);
}
