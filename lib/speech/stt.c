/*
 * The stt stage: PocketSphinx (the 0.8+5prealpha API Debian ships) in process, or an
 * OpenAI-compatible transcription server (stt_openai.c): the same streaming segmenter feeds
 * either, its workers holding a decoder each or one request in flight each. vt_stt_new
 * loads one decoder per worker thread once; vt_stt_new_server only records the server.
 * vt_stt_run_file streams: the calling thread reads the audio (audio.c) in blocks, finds the pauses
 * with an energy detector on 10 ms frames and cuts segments as soon as what follows them is known,
 * each copied into a bounded queue that the workers take from, recognised as one utterance, and
 * collected in order by the calling thread, which waits when the queue is full. Memory is thus the
 * decoders, the look-ahead (NOISE_WINDOW_S of audio, for the noise floor), the queue and
 * the words, whatever the duration. Word timings come back as decoder frames (10 ms) from
 * the segment's start and are mapped onto the audio's time line; fillers are dropped and
 * the words grouped into cues (transcript.c). vt_stt_run does the same from a buffer.
 *
 * Speech is found by that energy detector, or, after vt_stt_set_vad, by the Silero VAD: a
 * probability per 32 ms window computed as the blocks arrive (its state carried from window
 * to window), cut into speech runs by upstream Silero's rules (vad.h, vt_vad_cutter), which
 * then take the energy runs' place; the look-ahead is then only the open run, not the noise
 * window. docs/MEASUREMENTS.md ("VAD: energy against Silero") says why each number.
 *
 * Segments: a pause of LONG_PAUSE_S (0.6 s) or more always ends one, cut in its middle with
 * at most PAD_S of silence kept on either side, so long silences are never decoded. That is
 * also where pocketsphinx_continuous ends its utterances (0.5 s of silence), and short
 * utterances recognise better here than 10-30 s ones: 27 % word errors against 32 % on the
 * LibriVox set of t0500-stt.sh. Speech without such a pause is cut at its longest pause
 * between SEG_MIN_S and SEG_MAX_S (10 and 30 s) from the segment's start, and speech without
 * any pause (talk over music) at its quietest frame in that window.
 *
 * Determinism: a decoder keeps state from one utterance to the next (noise estimate, live
 * cepstral mean, voice activity), so the transcript would depend on which worker happened
 * to take which segment. Every segment therefore starts from the same state: batch
 * cepstral mean normalisation over the segment (what the model's feat.params asks for), a
 * new stream for the noise estimate, and PocketSphinx's own silence removal off (our
 * segments are already cut at pauses, and its removal would also shift word times).
 * Results are assembled in segment order. (A server keeps no state between requests.)
 */
#include "speech/stt.h"

#include "base/http.h"
#include "base/util.h"
#include "base/workpool.h"
#include "media/audio.h"
#include "speech/stt_hints.h"
#include "speech/stt_int.h"
#include "speech/vad.h"

#include <math.h>
#include <pocketsphinx.h>
#include <pthread.h>
#include <sphinxbase/ckd_alloc.h>
#include <sphinxbase/err.h>
#include <sphinxbase/logmath.h>
#include <sphinxbase/ngram_model.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Debian's libpocketsphinx-dev says "5prealpha" in pocketsphinx.pc; the API has no getter. */
#define PS_VERSION     "5prealpha"
#define PS_MODEL_DIR   "/usr/share/pocketsphinx/model/en-us"
#define PS_HMM         "en-us"
#define PS_LM          "en-us.lm.bin"
#define PS_DICT        "cmudict-en-us.dict"
#define STT_MAX_THREAD 64
/* Each decoder holds about 95 MB (mostly the language model): no more by default. */
#define STT_DEFAULT_MAX_THREADS 8

/* Analysis frame of the pause detector, equal to the decoder's frame (-frate 100). */
#define FRAME_SAMPLES (VT_AUDIO_RATE_HZ / 100)
#define FRAME_S       0.01
/*
 * Pause detector. A frame is speech when its level is well above the noise floor and above
 * an absolute floor. The noise floor is the 10th percentile of the frames within
 * NOISE_WINDOW_S before and after the frame's block of NOISE_BLOCK_S (all frames of a
 * recording up to NOISE_WINDOW_S long), so that it follows a room that changes over hours
 * and needs only that much look-ahead. Pauses shorter than GAP_MERGE_S belong to speech
 * (between words); bursts shorter than MIN_BURST_S are clicks.
 */
#define FLOOR_DB       -55.0
#define ABOVE_NOISE_DB 9.0
#define GAP_MERGE_S    0.3
#define MIN_BURST_S    0.05
#define NOISE_WINDOW_S 300.0
#define NOISE_BLOCK_S  10.0
/* Segments: see the top of the file. */
#define SEG_MIN_S    10.0
#define SEG_MAX_S    30.0
#define LONG_PAUSE_S 0.6
#define PAD_S        0.3
/* The same for Whisper (vt_stt_new_whisper): one segment fills most of a 30 s window. */
#define WHISPER_LONG_PAUSE_S 3.0
#define WHISPER_SEG_MIN_S    20.0
#define WHISPER_SEG_MAX_S    29.0
/* Audio is read in blocks of this many samples (4 s). */
#define READ_SAMPLES (4 * VT_AUDIO_RATE_HZ)
/* Segments decoded or waiting, per worker: what bounds the memory besides the look-ahead. */
#define QUEUE_PER_WORKER 2

/* Concurrent requests to a transcription server, and the limit. */
#define STT_SERVER_DEFAULT_CONCURRENCY 4
#define STT_SERVER_MAX_CONCURRENCY     16
/* Whole request for one segment (at most SEG_MAX_S of audio), unless the caller says. */
#define STT_SERVER_DEFAULT_TIMEOUT_S 300.0

struct vt_stt {
    ps_decoder_t **decoders;          /* PocketSphinx: one per worker; NULL with a server */
    int n_decoders;                   /* workers: decoders, or concurrent requests to the server */
    char model[VT_STT_MODEL_MAX];     /* the recogniser */
    char model_vad[VT_STT_MODEL_MAX]; /* model; and the segmenter: vt_stt_model */
    struct vt_stt_openai *server;     /* NULL: PocketSphinx */
    struct vt_stt_whisper *whisper;   /* NULL: PocketSphinx */
    const struct vt_vad *vad; /* borrowed: Silero finds the speech; NULL: the energy detector */
    struct vt_stt_cuts *cuts; /* tests (vt_stt_cut): the segments are noted, not recognised */
    /* the segmenter's lengths when not the defaults (0: LONG_PAUSE_S, SEG_MIN_S, SEG_MAX_S) */
    double long_pause_s, seg_min_s, seg_max_s;
};

/* A run of frames [start, end) of speech. */
struct span {
    size_t start, end;
};

/* One segment: its own copy of the audio until it is recognised, then its words. */
struct stt_seg {
    size_t start, n; /* samples */
    int16_t *pcm;
    struct vt_word *words;
    size_t n_words, cap_words;
    int done;
    char reported[96]; /* the model a server said it used, "" if none */
};

/*
 * The segments in flight, shared by the producer (the calling thread, which decodes the
 * audio, cuts it and collects the words in order) and the workers, guarded by mu. Segment
 * number i lives in slot i % cap; the producer waits before reusing a slot until the
 * segment in it has been collected, so at most cap segments exist at any time.
 */
struct stt_job {
    struct stt_seg *slots;
    size_t cap;
    pthread_mutex_t mu;
    pthread_cond_t work;      /* a segment to claim, or the end */
    pthread_cond_t done;      /* a segment recognised */
    size_t n_emitted;         /* segments handed over */
    size_t next;              /* next segment to claim */
    size_t collected;         /* segments whose words were taken, in order */
    int closed;               /* no more segments will come */
    int stop;                 /* a segment failed: stop claiming */
    struct vt_pool_fail fail; /* the lowest failing segment */
};

struct stt_worker {
    struct stt_job *job;
    struct vt_stt *stt;
    ps_decoder_t *ps; /* NULL with a server or Whisper */
    int index;        /* which worker: Whisper's tokenizer */
};

/* Where the audio comes from: a file being decoded or a buffer. */
typedef int (*stt_read_fn)(void *src, int16_t *buf, size_t max, size_t *n, char *err,
                           size_t errlen);

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;

/* The library never prints: PocketSphinx's log (stderr by default) is a process-wide
 * setting, turned off once and before the first decoder is made. */
static void quiet_sphinx(void)
{
    err_set_logfp(NULL);
}

static int readable(const char *path)
{
    return access(path, R_OK) == 0;
}

/*
 * -maxhmmpf 3000 (default 30000) caps the active HMMs per frame, CMU's first speed knob:
 * about a quarter less CPU, with the same words on the LibriVox test set (t0500-stt.sh
 * compares the word error rate with pocketsphinx_continuous at its defaults).
 */
static ps_decoder_t *decoder_new(const char *hmm, const char *lm, const char *dict)
{
    cmd_ln_t *config;
    ps_decoder_t *ps;

    /* no -lm: no search until the caller sets one (decoder_hint) */
    if (lm)
        config = cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-lm", lm, "-dict", dict, "-cmn",
                             "batch", "-remove_silence", "no", "-maxhmmpf", "3000", NULL);
    else
        config = cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-dict", dict, "-cmn", "batch",
                             "-remove_silence", "no", "-maxhmmpf", "3000", NULL);
    if (!config)
        return NULL;
    ps = ps_init(config);
    /* ps_init holds its own reference on success. */
    cmd_ln_free_r(config);
    return ps;
}

/*
 * The hints' weight in the language model: each word's probability is
 * (1 - HINT_WEIGHT) * general + HINT_WEIGHT * hints. Chosen on bench/stt_hints_bench.sh's
 * fixtures (docs/MEASUREMENTS.md, "Speech hints").
 */
#define HINT_WEIGHT 0.2
/*
 * Words the general model already expects more often than this (log10 of its unigram
 * probability: "the" -1.4, "every" -3.3, "health" -3.9, "metrics" -5.0) are left out of
 * the hints: boosting them everywhere only makes the decoder insert them, and slides are
 * full of them. Chosen on the same fixtures.
 */
#define HINT_COMMON_LOG10 -4.0
/* The search that holds the interpolated model; "_default" is PocketSphinx's own. */
#define HINT_SEARCH "vt_hints"
/* PS_DEFAULT_SEARCH of pocketsphinx_internal.h, which Debian does not ship */
#define PS_DEFAULT_SEARCH "_default"

/*
 * Give decoder ps, made without a language model, the hints: their words the dictionary
 * lacks, with flite's pronunciation, then a search whose model interpolates the general one
 * (lm, a file) with the hints' bigrams (arpa, a file). *n_new counts the words added. 0, or
 * -1 when PocketSphinx refused.
 *
 * The words are added while the decoder has no search: ps_add_word also adds a word to
 * every search's model, and the general model's trie then crashes scoring a history that
 * holds it (PocketSphinx 5prealpha). Left out of the general model, a new word gets its
 * probability from the hints alone.
 */
static int decoder_hint(ps_decoder_t *ps, const char *lm, const struct vt_stt_hints *h,
                        const char *arpa, size_t *n_new)
{
    ngram_model_t *general = NULL, *hints = NULL, *set = NULL, *models[2];
    char *names[2] = {"general", "hints"};
    float32 weights[2] = {(float32)(1 - HINT_WEIGHT), (float32)HINT_WEIGHT};
    int rc = -1;

    *n_new = 0;
    for (size_t i = 0; i < h->n_words; i++) {
        char phones[256];
        const char *w = h->words[i].text;
        char *known = ps_lookup_word(ps, w);

        if (known) {
            ckd_free(known);
            continue;
        }
        /* a word flite cannot say, or PocketSphinx refuses, is left out */
        if (vt_stt_hints_pronounce(w, phones, sizeof(phones)) ||
            ps_add_word(ps, w, phones, FALSE) < 0)
            continue;
        (*n_new)++;
    }
    general = ngram_model_read(ps_get_config(ps), lm, NGRAM_AUTO, ps_get_logmath(ps));
    hints = ngram_model_read(ps_get_config(ps), arpa, NGRAM_ARPA, ps_get_logmath(ps));
    if (!general || !hints)
        goto out;
    models[0] = general;
    models[1] = hints;
    /* the set holds its own references, the search its own of the set */
    set = ngram_model_set_init(ps_get_config(ps), models, names, weights, 2);
    if (!set || ps_set_lm(ps, HINT_SEARCH, set) < 0 || ps_set_search(ps, HINT_SEARCH) < 0)
        goto out;
    rc = 0;
out:
    ngram_model_free(set);
    ngram_model_free(hints);
    ngram_model_free(general);
    return rc;
}

/* Whether the general model of ps finds word rare (or does not know it). */
static int hint_rare(const char *word, void *user)
{
    ps_decoder_t *ps = user;
    ngram_model_t *lm = ps_get_lm(ps, PS_DEFAULT_SEARCH);
    int32 wid, used = 0;

    if (!lm)
        return 1;
    wid = ngram_wid(lm, word);
    if (wid == NGRAM_INVALID_WID || wid == ngram_unknown_wid(lm))
        return 1;
    return logmath_log_to_log10(ps_get_logmath(ps), ngram_ng_prob(lm, wid, NULL, 0, &used)) <
           HINT_COMMON_LOG10;
}

/* The hints' model into a temporary file; its path (caller unlinks and frees) or NULL. */
static char *hints_arpa_file(const struct vt_stt_hints *h, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    struct vt_sb sb = {0};
    char *path;
    FILE *f;
    int fd, ok;

    path = vt_xasprintf("%s/vidtheque-hints-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    fd = mkstemp(path);
    if (fd < 0) {
        vt_err(err, errlen, VT_EIO, "'%s': cannot create the hints' language model", path);
        free(path);
        return NULL;
    }
    vt_stt_hints_arpa(h, &sb);
    f = fdopen(fd, "w");
    ok = f && fwrite(sb.buf ? sb.buf : "", 1, sb.len, f) == sb.len;
    if (f)
        ok = !fclose(f) && ok;
    else
        close(fd);
    vt_sb_release(&sb);
    if (!ok) {
        vt_err(err, errlen, VT_EIO, "'%s': cannot write the hints' language model", path);
        unlink(path);
        free(path);
        return NULL;
    }
    return path;
}

struct vt_stt *vt_stt_new(int nthreads, char *err, size_t errlen)
{
    return vt_stt_new_hinted(nthreads, NULL, err, errlen);
}

struct vt_stt *vt_stt_new_hinted(int nthreads, struct vt_stt_hints *hints, char *err, size_t errlen)
{
    struct vt_stt *stt = NULL;
    const char *dir = getenv("VIDTHEQUE_PS_MODEL_DIR");
    char *hmm = NULL, *lm = NULL, *dict = NULL, *mdef = NULL, *arpa = NULL;
    size_t n_new = 0, n_given = 0;
    int ok = 0;

    if (nthreads < 0 || nthreads > STT_MAX_THREAD) {
        vt_err(err, errlen, VT_EINVAL, "'%d': bad stt thread count", nthreads);
        goto out;
    }
    if (nthreads == 0) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

        nthreads = ncpu < 1                         ? 1
                   : ncpu > STT_DEFAULT_MAX_THREADS ? STT_DEFAULT_MAX_THREADS
                                                    : (int)ncpu;
    }
    if (hints && !hints->n_words)
        hints = NULL;
    if (!dir || !*dir)
        dir = PS_MODEL_DIR;
    hmm = vt_xasprintf("%s/%s", dir, PS_HMM);
    lm = vt_xasprintf("%s/%s", dir, PS_LM);
    dict = vt_xasprintf("%s/%s", dir, PS_DICT);
    mdef = vt_xasprintf("%s/mdef", hmm);
    /* With its log off PocketSphinx cannot say what is missing: check the files first. */
    if (!readable(mdef) || !readable(lm) || !readable(dict)) {
        vt_err(err, errlen, VT_ENOTFOUND,
               "'%s': no pocketsphinx en-us model (install pocketsphinx-en-us or set "
               "VIDTHEQUE_PS_MODEL_DIR)",
               dir);
        goto out;
    }
    pthread_once(&quiet_once, quiet_sphinx);

    stt = vt_xcalloc(1, sizeof(*stt));
    stt->decoders = vt_xcalloc((size_t)nthreads, sizeof(*stt->decoders));
    /* One after the other: model loading touches PocketSphinx's global log state. */
    for (int i = 0; i < nthreads; i++) {
        ps_decoder_t *ps = decoder_new(hmm, hints ? NULL : lm, dict);

        /* the first plain decoder says which hint words are rare; none: it is kept */
        if (hints && i == 0) {
            ps_decoder_t *plain = decoder_new(hmm, lm, dict);

            n_given = hints->n_words;
            if (plain)
                vt_stt_hints_filter(hints, hint_rare, plain);
            if (plain && !hints->n_words) {
                hints = NULL;
                ps_free(ps);
                ps = plain;
            } else {
                ps_free(plain);
            }
        }
        if (!ps) {
            vt_err(err, errlen, VT_EIO, "'%s': cannot load the pocketsphinx model", dir);
            goto out;
        }
        stt->decoders[stt->n_decoders++] = ps;
        if (hints && !arpa) {
            arpa = hints_arpa_file(hints, err, errlen);
            if (!arpa)
                goto out;
        }
        if (hints && decoder_hint(ps, lm, hints, arpa, &n_new)) {
            vt_err(err, errlen, VT_EIO, "pocketsphinx: cannot use the %zu hint word(s)",
                   hints->n_words);
            goto out;
        }
    }
    snprintf(stt->model, sizeof(stt->model), "pocketsphinx %s, hmm %s, lm %s, dict %s", PS_VERSION,
             PS_HMM, PS_LM, PS_DICT);
    if (hints) {
        size_t len = strlen(stt->model);

        snprintf(stt->model + len, sizeof(stt->model) - len,
                 "; hints %zu rare of %zu word(s) (%zu new) at %.2f", hints->n_words, n_given,
                 n_new, HINT_WEIGHT);
    }
    vt_stt_set_vad(stt, NULL);
    ok = 1;
out:
    if (!ok) {
        vt_stt_free(stt);
        stt = NULL;
    }
    if (arpa)
        unlink(arpa);
    free(arpa);
    free(hmm);
    free(lm);
    free(dict);
    free(mdef);
    return stt;
}

const char *vt_stt_model(const struct vt_stt *stt)
{
    return stt->model_vad;
}

/* head, then which segmenter ran; head is cut rather than the segmenter's name */
static void model_with_vad(char *out, size_t n, const char *head, const struct vt_vad *vad)
{
    char tail[128];
    int room;

    snprintf(tail, sizeof(tail), "; vad %s", vad ? vt_vad_model(vad) : "energy");
    room = (int)(n - 1 - strlen(tail));
    snprintf(out, n, "%.*s%s", room > 0 ? room : 0, head, tail);
}

void vt_stt_set_vad(struct vt_stt *stt, const struct vt_vad *vad)
{
    stt->vad = vad;
    model_with_vad(stt->model_vad, sizeof(stt->model_vad), stt->model, vad);
}

static int bad_language(const char *lang)
{
    size_t n = strspn(lang, "abcdefghijklmnopqrstuvwxyz");

    return n < 2 || n > 3 || lang[n];
}

struct vt_stt *vt_stt_new_server(const struct vt_stt_server_spec *spec, char *err, size_t errlen)
{
    struct vt_stt *stt;
    struct vt_stt_openai *srv;
    char *base;
    size_t len;
    int conc = spec->concurrency ? spec->concurrency : STT_SERVER_DEFAULT_CONCURRENCY;

    if (!spec->base_url || !*spec->base_url) {
        vt_err(err, errlen, VT_EINVAL, "stt.backend is openai but stt.url is not set");
        return NULL;
    }
    if (!spec->model || !*spec->model) {
        vt_err(err, errlen, VT_EINVAL, "stt.backend is openai but stt.model is not set");
        return NULL;
    }
    if (strncmp(spec->base_url, "http://", 7) && strncmp(spec->base_url, "https://", 8)) {
        vt_err(err, errlen, VT_EINVAL, "stt.url '%s': not an http(s) URL", spec->base_url);
        return NULL;
    }
    if (conc < 1 || conc > STT_SERVER_MAX_CONCURRENCY || spec->timeout_s < 0) {
        vt_err(err, errlen, VT_EINVAL, "'%d': bad transcription concurrency", conc);
        return NULL;
    }
    base = vt_xstrdup(spec->base_url);
    len = strlen(base);
    while (len > 0 && base[len - 1] == '/')
        base[--len] = 0;
    srv = vt_xcalloc(1, sizeof(*srv));
    /* "https://api.openai.com/v1" is also how people write the base */
    srv->url = vt_xasprintf("%s%s/audio/transcriptions", base,
                            len >= 3 && !strcmp(base + len - 3, "/v1") ? "" : "/v1");
    srv->model = vt_xstrdup(spec->model);
    srv->api_key = vt_xstrdup_or_null(spec->api_key);
    srv->timeout_s = spec->timeout_s > 0 ? spec->timeout_s : STT_SERVER_DEFAULT_TIMEOUT_S;
    srv->retries = spec->retries;
    stt = vt_xcalloc(1, sizeof(*stt));
    stt->server = srv;
    vt_http_url_drop_userinfo(base);
    stt->n_decoders = conc;
    snprintf(stt->model, sizeof(stt->model), "openai-transcribe %.50s at %.60s", spec->model, base);
    vt_stt_set_vad(stt, NULL);
    free(base);
    return stt;
}

void vt_stt_set_language(struct vt_stt *stt, const char *lang)
{
    char code[8] = "";
    size_t n = 0;

    if (!stt->server && !stt->whisper)
        return;
    /* the primary subtag, lower case: "en-US" -> "en"; anything else is no hint */
    for (; lang && lang[n] && lang[n] != '-' && lang[n] != '_' && n + 1 < sizeof(code); n++)
        code[n] = (char)(lang[n] >= 'A' && lang[n] <= 'Z' ? lang[n] + 32 : lang[n]);
    code[n] = 0;
    if (stt->whisper) {
        vt_stt_whisper_set_language(stt->whisper, bad_language(code) ? NULL : code);
        return;
    }
    free(stt->server->language);
    stt->server->language = NULL;
    if (!bad_language(code))
        stt->server->language = vt_xstrdup(code);
}

/* Default workers: one per core, at most STT_DEFAULT_MAX_THREADS. */
static int default_threads(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    return ncpu < 1 ? 1 : ncpu > STT_DEFAULT_MAX_THREADS ? STT_DEFAULT_MAX_THREADS : (int)ncpu;
}

int vt_stt_new_whisper(const struct vt_stt_whisper_spec *spec, struct vt_stt **out, char *err,
                       size_t errlen)
{
    struct vt_stt *stt;
    struct vt_stt_whisper *w = NULL;
    int n = spec->nthreads ? spec->nthreads : default_threads(), rc;
    char rev[32] = "";

    *out = NULL;
    if (!spec->path || !*spec->path)
        return vt_err(err, errlen, VT_EINVAL, "stt.backend is whisper but stt.model is not set");
    if (n < 1 || n > STT_MAX_THREAD)
        return vt_err(err, errlen, VT_EINVAL, "'%d': bad stt thread count", n);
    /* one worker per core, each network call on one thread: segments run side by side */
    rc = vt_stt_whisper_open(spec->path, n, n > 1 ? 1 : 0, &w, err, errlen);
    if (rc)
        return rc;
    stt = vt_xcalloc(1, sizeof(*stt));
    stt->whisper = w;
    stt->n_decoders = n;
    /* Whisper's encoder costs a whole 30 s window whatever the segment's length: pauses
     * up to WHISPER_LONG_PAUSE_S stay inside a segment, which is cut near a window's
     * length (its pads included), not at every breath as PocketSphinx's are */
    stt->long_pause_s = WHISPER_LONG_PAUSE_S;
    stt->seg_min_s = WHISPER_SEG_MIN_S;
    stt->seg_max_s = WHISPER_SEG_MAX_S;
    if (spec->revision && *spec->revision)
        snprintf(rev, sizeof(rev), ", rev %.12s", spec->revision);
    snprintf(stt->model, sizeof(stt->model),
             "whisper %.60s (%.24s%s); greedy, temperatures 0-1.0, beam 1, word timestamps dtw",
             spec->name && *spec->name ? spec->name : spec->path, vt_stt_whisper_format(w), rev);
    vt_stt_set_vad(stt, NULL);
    *out = stt;
    return 0;
}

size_t vt_stt_set_prompt(struct vt_stt *stt, const struct vt_stt_hints *hints)
{
    return stt->whisper ? vt_stt_whisper_set_prompt(stt->whisper, hints) : 0;
}

void vt_stt_free(struct vt_stt *stt)
{
    if (!stt)
        return;
    for (int i = 0; stt->decoders && i < stt->n_decoders; i++)
        ps_free(stt->decoders[i]);
    free(stt->decoders);
    vt_stt_whisper_free(stt->whisper);
    if (stt->server) {
        free(stt->server->url);
        free(stt->server->model);
        free(stt->server->api_key);
        free(stt->server->language);
        free(stt->server);
    }
    free(stt);
}

/* ---- recognition ---- */

/* Fillers and markers: <s>, </s>, <sil>, [NOISE], [SPEECH], ++NOISE++ and the like. */
static int is_filler(const char *w)
{
    return !w[0] || w[0] == '<' || w[0] == '[' || w[0] == '+';
}

/* "read(2)" (an alternate pronunciation) is the word "read": length without the suffix. */
static size_t word_stem_len(const char *w)
{
    size_t n = strlen(w), i;

    if (n < 3 || w[n - 1] != ')')
        return n;
    i = n - 2;
    while (i > 0 && w[i] >= '0' && w[i] <= '9')
        i--;
    return w[i] == '(' && i > 0 && i < n - 2 ? i : n;
}

/* Recognise one segment as one utterance; its words go into seg. 0 or VT_EIO. */
static int decode_segment(ps_decoder_t *ps, struct stt_seg *seg, char *err, size_t errlen)
{
    logmath_t *lmath = ps_get_logmath(ps);
    double seg_start_s = (double)seg->start / VT_AUDIO_RATE_HZ;
    double seg_end_s = (double)(seg->start + seg->n) / VT_AUDIO_RATE_HZ;

    /* A new stream resets the noise estimate that would otherwise carry over. */
    if (ps_start_stream(ps) < 0 || ps_start_utt(ps) < 0)
        return vt_err(err, errlen, VT_EIO, "pocketsphinx: cannot start an utterance");
    if (ps_process_raw(ps, seg->pcm, seg->n, FALSE, TRUE) < 0) {
        ps_end_utt(ps);
        return vt_err(err, errlen, VT_EIO, "pocketsphinx: cannot decode the segment at %.2f s",
                      seg_start_s);
    }
    if (ps_end_utt(ps) < 0)
        return vt_err(err, errlen, VT_EIO, "pocketsphinx: cannot end the utterance at %.2f s",
                      seg_start_s);
    for (ps_seg_t *it = ps_seg_iter(ps); it; it = ps_seg_next(it)) {
        const char *w = ps_seg_word(it);
        int32 ascr, lscr, lback, prob;
        int sf, ef;
        struct vt_word *word;
        double conf;

        if (!w || is_filler(w))
            continue;
        ps_seg_frames(it, &sf, &ef);
        prob = ps_seg_prob(it, &ascr, &lscr, &lback);
        conf = logmath_exp(lmath, prob);
        vt_grow((void **)&seg->words, &seg->cap_words, seg->n_words + 1, sizeof(*seg->words));
        word = &seg->words[seg->n_words++];
        word->text = vt_xasprintf("%.*s", (int)word_stem_len(w), w);
        word->start_s = seg_start_s + (sf < 0 ? 0 : sf) * FRAME_S;
        word->end_s = seg_start_s + (ef + 1) * FRAME_S;
        if (word->end_s > seg_end_s)
            word->end_s = seg_end_s;
        if (word->end_s < word->start_s)
            word->end_s = word->start_s;
        word->conf = conf < 0 ? 0 : conf > 1 ? 1 : conf;
    }
    return 0;
}

/* Recognise one segment on worker number index: with its decoder, Whisper or the
 * transcription server. */
static int recognise_segment(struct vt_stt *stt, ps_decoder_t *ps, int index, struct stt_seg *seg,
                             char *err, size_t errlen)
{
    if (stt->whisper)
        return vt_stt_whisper_segment(stt->whisper, index, seg->pcm, seg->n,
                                      (double)seg->start / VT_AUDIO_RATE_HZ, &seg->words,
                                      &seg->n_words, &seg->cap_words, err, errlen);
    if (stt->server)
        return vt_stt_openai_segment(
            stt->server, seg->pcm, seg->n, (double)seg->start / VT_AUDIO_RATE_HZ, &seg->words,
            &seg->n_words, &seg->cap_words, seg->reported, sizeof(seg->reported), err, errlen);
    return decode_segment(ps, seg, err, errlen);
}

static void seg_release(struct stt_seg *seg)
{
    for (size_t i = 0; i < seg->n_words; i++)
        free(seg->words[i].text);
    free(seg->words);
    free(seg->pcm);
    memset(seg, 0, sizeof(*seg));
}

/* ---- workers ---- */

/* Record the failure of segment i; the lowest failing segment is reported, whatever the timing. */
static void job_fail(struct stt_job *job, size_t i, int rc, const char *err)
{
    job->stop = 1;
    vt_pool_fail_note(&job->fail, i, rc, err);
}

static void *stt_worker_main(void *arg)
{
    struct stt_worker *wk = arg;
    struct stt_job *job = wk->job;

    pthread_mutex_lock(&job->mu);
    for (;;) {
        char err[sizeof(job->fail.msg)] = "";
        struct stt_seg *seg;
        size_t i;
        int rc;

        while (!job->stop && !job->closed && job->next == job->n_emitted)
            pthread_cond_wait(&job->work, &job->mu);
        if (job->stop || job->next == job->n_emitted)
            break;
        i = job->next++;
        seg = &job->slots[i % job->cap];
        pthread_mutex_unlock(&job->mu);

        rc = recognise_segment(wk->stt, wk->ps, wk->index, seg, err, sizeof(err));

        pthread_mutex_lock(&job->mu);
        /* The audio is no longer needed: free it before the words wait to be collected. */
        free(seg->pcm);
        seg->pcm = NULL;
        seg->done = 1;
        if (rc < 0)
            job_fail(job, i, rc, err);
        pthread_cond_broadcast(&job->done);
    }
    pthread_mutex_unlock(&job->mu);
    return NULL;
}

/* ---- the stream: decoding, pause detection and segmentation with bounded look-ahead ---- */

/*
 * Everything is counted in absolute frames (FRAME_SAMPLES samples) or samples from the start
 * of the audio; the buffers keep only a window of it, from *_base on. Frames flow through
 * three steps, each behind the previous one:
 *   levels:    the dB level of every whole frame read (n_levels of them);
 *   runs:      frames up to pos classified as speech or not with their block's threshold
 *              (which needs NOISE_WINDOW_S of levels ahead), speech runs merged over short
 *              gaps, clicks dropped, over-long runs cut at their quietest frame;
 *   segments:  finished runs (runs[], from the first not yet in a segment) grouped into
 *              segments as soon as what follows them is known, copied out to the workers.
 * The result is that of the same rules applied to the whole recording at once, with a noise
 * floor over a sliding window rather than over everything.
 */
struct stt_stream {
    struct vt_stt *stt;
    stt_read_fn read;
    void *src;
    double duration_s; /* expected, for progress; 0 unknown */
    vt_progress_fn progress;
    void *user;
    double reported;
    size_t block; /* samples per read (READ_SAMPLES; smaller in tests) */

    int16_t *pcm; /* samples from pcm_base on */
    size_t pcm_base, pcm_n, pcm_cap;
    size_t pcm_peak; /* the most samples ever held */
    double *db;      /* levels of frames from db_base on */
    size_t db_base, db_n, db_cap;
    int eof; /* everything read: n_levels is the number of frames */

    double *scratch; /* for the noise floor's selection */
    size_t scratch_cap;
    size_t thr_block; /* block whose threshold thr is, SIZE_MAX before the first */
    double thr;

    size_t pos;     /* frames classified */
    int open, raw;  /* a run not finished; inside speech frames */
    int open_split; /* the open run was cut (too long): never a click */
    size_t os, oe;  /* the open run */

    struct span *runs; /* finished runs not yet in a segment */
    size_t n_runs, cap_runs;
    int have_prev;
    size_t prev_end; /* end of the run before runs[0] */
    size_t n_speech; /* runs ever finished */

    struct stt_job job;
    struct stt_worker *workers;
    pthread_t *tids;
    size_t n_workers; /* threads running */
    int inline_mode;  /* no thread could start: recognise on this thread */

    struct vt_word *words; /* collected, in order */
    size_t n_words, cap_words;
    char server_model[96]; /* the first model name a server reported */

    /* with stt->vad: the network's state and the cutter of its probabilities */
    struct vt_vad_state vst;
    struct vt_vad_cutter cut;
};

static size_t n_levels(const struct stt_stream *st)
{
    return st->db_base + st->db_n;
}

static double level(const struct stt_stream *st, size_t f)
{
    return st->db[f - st->db_base];
}

/* The k-th smallest of v[0..n), k < n (Wirth's selection; v is reordered). */
static double select_kth(double *v, size_t n, size_t k)
{
    long lo = 0, hi = (long)n - 1, kk = (long)k;

    while (lo < hi) {
        double pivot = v[kk];
        long i = lo, j = hi;

        do {
            while (v[i] < pivot)
                i++;
            while (pivot < v[j])
                j--;
            if (i <= j) {
                double t = v[i];

                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < kk)
            lo = i;
        if (kk < i)
            hi = j;
    }
    return v[kk];
}

/* Threshold of block b, if its window of levels is all there; 1 if set, 0 to read more. */
static int block_threshold(struct stt_stream *st, size_t b)
{
    size_t block = (size_t)(NOISE_BLOCK_S / FRAME_S), half = (size_t)(NOISE_WINDOW_S / FRAME_S);
    size_t lo = b * block > half ? b * block - half : 0, hi = (b + 1) * block + half, n;

    if (hi > n_levels(st)) {
        if (!st->eof)
            return 0;
        hi = n_levels(st);
    }
    n = hi - lo;
    vt_grow((void **)&st->scratch, &st->scratch_cap, n, sizeof(*st->scratch));
    memcpy(st->scratch, st->db + (lo - st->db_base), n * sizeof(*st->scratch));
    st->thr = select_kth(st->scratch, n, n / 10) + ABOVE_NOISE_DB;
    if (st->thr < FLOOR_DB)
        st->thr = FLOOR_DB;
    st->thr_block = b;
    return 1;
}

/*
 * Recognised segments, in order, into st->words: those ready (wait 0), waiting for at least
 * one (1) or for all (2), unless a segment failed.
 */
static void collect(struct stt_stream *st, int wait)
{
    struct stt_job *job = &st->job;

    pthread_mutex_lock(&job->mu);
    while (job->collected < job->n_emitted) {
        struct stt_seg *seg = &job->slots[job->collected % job->cap];
        double frac;

        if (!seg->done) {
            if (!wait || job->stop)
                break;
            pthread_cond_wait(&job->done, &job->mu);
            continue;
        }
        vt_grow((void **)&st->words, &st->cap_words, st->n_words + seg->n_words,
                sizeof(*st->words));
        if (seg->n_words)
            memcpy(st->words + st->n_words, seg->words, seg->n_words * sizeof(*seg->words));
        st->n_words += seg->n_words;
        if (!st->server_model[0] && seg->reported[0])
            memcpy(st->server_model, seg->reported, sizeof(st->server_model));
        /* The texts now belong to st->words. */
        seg->n_words = 0;
        frac = st->duration_s > 0
                   ? (double)(seg->start + seg->n) / VT_AUDIO_RATE_HZ / st->duration_s
                   : 0;
        seg_release(seg);
        job->collected++;
        if (wait == 1)
            wait = 0;
        if (st->progress && !job->stop) {
            pthread_mutex_unlock(&job->mu);
            st->reported = frac > 1 ? 1 : frac;
            st->progress(st->user, st->reported);
            pthread_mutex_lock(&job->mu);
        }
    }
    pthread_mutex_unlock(&job->mu);
}

/* Hand frames [start_f, end_f) to the workers (waiting for a free slot). 0 or an error. */
static int emit_segment(struct stt_stream *st, size_t start_f, size_t end_f)
{
    struct stt_job *job = &st->job;
    struct stt_seg *seg;
    size_t i;

    pthread_mutex_lock(&job->mu);
    while (!job->stop && job->n_emitted - job->collected >= job->cap) {
        pthread_mutex_unlock(&job->mu);
        collect(st, 1);
        pthread_mutex_lock(&job->mu);
    }
    if (job->stop) {
        pthread_mutex_unlock(&job->mu);
        return VT_EIO;
    }
    i = job->n_emitted;
    seg = &job->slots[i % job->cap];
    pthread_mutex_unlock(&job->mu);

    memset(seg, 0, sizeof(*seg));
    seg->start = start_f * FRAME_SAMPLES;
    seg->n = (end_f - start_f) * FRAME_SAMPLES;
    if (st->stt->cuts) {
        struct vt_stt_cuts *c = st->stt->cuts;

        vt_grow((void **)&c->seg, &c->cap, c->n + 1, sizeof(*c->seg));
        c->seg[c->n].start = seg->start;
        c->seg[c->n++].end = seg->start + seg->n;
        return 0;
    }
    seg->pcm = vt_xmalloc(seg->n * sizeof(*seg->pcm));
    memcpy(seg->pcm, st->pcm + (seg->start - st->pcm_base), seg->n * sizeof(*seg->pcm));
    if (st->inline_mode) {
        char err[sizeof(job->fail.msg)] = "";
        int rc = recognise_segment(st->stt, st->stt->decoders ? st->stt->decoders[0] : NULL, 0, seg,
                                   err, sizeof(err));

        free(seg->pcm);
        seg->pcm = NULL;
        seg->done = 1;
        if (rc < 0)
            job_fail(job, i, rc, err);
        job->n_emitted++;
    } else {
        pthread_mutex_lock(&job->mu);
        job->n_emitted++;
        pthread_cond_signal(&job->work);
        pthread_mutex_unlock(&job->mu);
    }
    collect(st, 0);
    return 0;
}

/*
 * Group the finished runs into segments while what follows them is known: the next run, or
 * a pause of LONG_PAUSE_S (frontier: no run can start before it), or the end.
 */
static int make_segments(struct stt_stream *st, size_t frontier, int at_end)
{
    const struct vt_stt *stt = st->stt;
    size_t seg_min = (size_t)((stt->seg_min_s > 0 ? stt->seg_min_s : SEG_MIN_S) / FRAME_S);
    size_t seg_max = (size_t)((stt->seg_max_s > 0 ? stt->seg_max_s : SEG_MAX_S) / FRAME_S);
    size_t long_pause =
        (size_t)((stt->long_pause_s > 0 ? stt->long_pause_s : LONG_PAUSE_S) / FRAME_S);
    size_t pad = (size_t)(PAD_S / FRAME_S);

    while (st->n_runs) {
        const struct span *runs = st->runs;
        size_t k = 0, after, before, start_f, end_f;
        int rc;

        /* Take runs while the pause before the next is short and the segment not too long. */
        while (k + 1 < st->n_runs && runs[k + 1].start - runs[k].end < long_pause &&
               runs[k + 1].end - runs[0].start <= seg_max)
            k++;
        if (k + 1 < st->n_runs) {
            size_t gap = runs[k + 1].start - runs[k].end;

            /* Stopped by the length limit: end at the longest pause past the minimum length. */
            if (gap < long_pause) {
                size_t best = k, best_gap = 0;

                for (size_t m = 0; m < k; m++) {
                    size_t g = runs[m + 1].start - runs[m].end;

                    if (runs[m].end - runs[0].start >= seg_min && g >= best_gap) {
                        best = m;
                        best_gap = g;
                    }
                }
                k = best;
            }
            after = (runs[k + 1].start - runs[k].end + 1) / 2;
        } else if (at_end) {
            after = n_levels(st) - runs[k].end;
        } else if (frontier - runs[k].end >= long_pause) {
            /* The next run is at least that far: half of it is more than the pad. */
            after = pad;
        } else {
            return 0;
        }
        before = st->have_prev ? (runs[0].start - st->prev_end) / 2 : runs[0].start;
        start_f = runs[0].start - (before < pad ? before : pad);
        end_f = runs[k].end + (after < pad ? after : pad);
        st->have_prev = 1;
        st->prev_end = runs[k].end;
        st->n_runs -= k + 1;
        memmove(st->runs, st->runs + k + 1, st->n_runs * sizeof(*st->runs));
        rc = emit_segment(st, start_f, end_f);
        if (rc)
            return rc;
    }
    return 0;
}

/* A speech run is finished: keep it unless it is a click. */
static void run_finished(struct stt_stream *st, size_t start, size_t end, int split)
{
    if (!split && end - start < (size_t)(MIN_BURST_S / FRAME_S))
        return;
    vt_grow((void **)&st->runs, &st->cap_runs, st->n_runs + 1, sizeof(*st->runs));
    st->runs[st->n_runs].start = start;
    st->runs[st->n_runs].end = end;
    st->n_runs++;
    st->n_speech++;
}

/*
 * Where speech without a pause (talk over music) that starts at frame os is cut: its
 * quietest frame from SEG_MIN_S to SEG_MAX_S in (those levels must be there).
 */
static size_t quietest_frame(const struct stt_stream *st, size_t os)
{
    size_t seg_min = (size_t)(SEG_MIN_S / FRAME_S), seg_max = (size_t)(SEG_MAX_S / FRAME_S);
    size_t cut = os + seg_min;

    for (size_t k = os + seg_min; k < os + seg_max; k++)
        if (level(st, k) < level(st, cut))
            cut = k;
    return cut;
}

/* Classify frame st->pos (its threshold known) and advance the runs. */
static void classify(struct stt_stream *st)
{
    size_t merge = (size_t)(GAP_MERGE_S / FRAME_S), f = st->pos++;
    size_t seg_max = (size_t)(SEG_MAX_S / FRAME_S);

    if (level(st, f) >= st->thr) {
        if (!st->raw) {
            st->raw = 1;
            /* Speech after a short gap continues the open run. */
            if (!st->open || f - st->oe >= merge) {
                if (st->open)
                    run_finished(st, st->os, st->oe, st->open_split);
                st->open = 1;
                st->open_split = 0;
                st->os = f;
            }
        }
        st->oe = f + 1;
        while (st->oe - st->os > seg_max) {
            size_t cut = quietest_frame(st, st->os);

            run_finished(st, st->os, cut, 1);
            st->os = cut;
            st->open_split = 1;
        }
    } else {
        st->raw = 0;
        if (st->open && f + 1 - st->oe >= merge) {
            run_finished(st, st->os, st->oe, st->open_split);
            st->open = 0;
        }
    }
}

/*
 * The first frames whose audio (*keep_f) and levels (*keep_db) may still be needed: audio
 * from where the next segment can start (with Silero, also the next window's), levels for
 * the noise window (energy only) and for cutting speech that goes on.
 */
static void keep_frames(const struct stt_stream *st, size_t *keep_f, size_t *keep_db)
{
    size_t pad = (size_t)(PAD_S / FRAME_S), half = (size_t)(NOISE_WINDOW_S / FRAME_S);
    size_t block = (size_t)(NOISE_BLOCK_S / FRAME_S), from;

    if (st->stt->vad) {
        /* the open segment's start, or before the next window: no later than pos */
        from = vt_vad_cutter_frontier(&st->cut) / FRAME_SAMPLES;
        if (from > st->pos)
            from = st->pos;
        *keep_db = from;
    } else {
        from = st->open ? st->os : st->pos;
        *keep_db = st->pos / block * block;
        *keep_db = *keep_db > half ? *keep_db - half : 0;
        if (st->open && st->os < *keep_db)
            *keep_db = st->os;
    }
    if (st->n_runs)
        from = st->runs[0].start;
    *keep_f = from > pad ? from - pad : 0;
}

/* Read the next block of audio and measure its whole frames. 0 or an error. */
static int read_more(struct stt_stream *st, char *err, size_t errlen)
{
    size_t keep_f, keep_db, got = 0, f0, f1;
    int rc;

    keep_frames(st, &keep_f, &keep_db);
    /* Compacted only once more is dropped than kept, so each sample moves at most once. */
    if (keep_f * FRAME_SAMPLES > st->pcm_base &&
        keep_f * FRAME_SAMPLES - st->pcm_base >= st->pcm_n / 2) {
        size_t drop = keep_f * FRAME_SAMPLES - st->pcm_base;

        st->pcm_n -= drop;
        memmove(st->pcm, st->pcm + drop, st->pcm_n * sizeof(*st->pcm));
        st->pcm_base += drop;
    }
    if (keep_db > st->db_base && keep_db - st->db_base >= st->db_n / 2) {
        size_t drop = keep_db - st->db_base;

        st->db_n -= drop;
        memmove(st->db, st->db + drop, st->db_n * sizeof(*st->db));
        st->db_base += drop;
    }

    vt_grow((void **)&st->pcm, &st->pcm_cap, st->pcm_n + st->block, sizeof(*st->pcm));
    rc = st->read(st->src, st->pcm + st->pcm_n, st->block, &got, err, errlen);
    if (rc)
        return rc;
    st->pcm_n += got;
    if (got < st->block)
        st->eof = 1;
    if (st->pcm_n > st->pcm_peak)
        st->pcm_peak = st->pcm_n;

    /* Level of every new whole frame in dB below full scale (digital silence is -100). */
    f0 = n_levels(st);
    f1 = (st->pcm_base + st->pcm_n) / FRAME_SAMPLES;
    vt_grow((void **)&st->db, &st->db_cap, st->db_n + (f1 - f0), sizeof(*st->db));
    for (size_t f = f0; f < f1; f++) {
        const int16_t *x = st->pcm + (f * FRAME_SAMPLES - st->pcm_base);
        double sum = 0;

        for (size_t s = 0; s < FRAME_SAMPLES; s++)
            sum += (double)x[s] * x[s];
        sum /= (double)FRAME_SAMPLES * 32768.0 * 32768.0;
        st->db[st->db_n++] = sum > 1e-10 ? 10 * log10(sum) : -100;
    }
    /* Progress through silence, where no segment reports it. */
    if (st->progress && st->duration_s > 0) {
        double frac = (double)st->pos * FRAME_S / st->duration_s;

        if (st->job.collected == st->job.n_emitted && frac > st->reported + 0.01) {
            st->reported = frac > 1 ? 1 : frac;
            st->progress(st->user, st->reported);
        }
    }
    return 0;
}

static void start_workers(struct stt_stream *st)
{
    struct stt_job *job = &st->job;
    size_t n = (size_t)st->stt->n_decoders;

    job->cap = n * QUEUE_PER_WORKER;
    job->slots = vt_xcalloc(job->cap, sizeof(*job->slots));
    vt_pool_fail_init(&job->fail);
    pthread_mutex_init(&job->mu, NULL);
    pthread_cond_init(&job->work, NULL);
    pthread_cond_init(&job->done, NULL);
    st->workers = vt_xcalloc(n, sizeof(*st->workers));
    st->tids = vt_xcalloc(n, sizeof(*st->tids));
    for (size_t k = 0; k < n; k++) {
        st->workers[k].job = job;
        st->workers[k].stt = st->stt;
        st->workers[k].ps = st->stt->decoders ? st->stt->decoders[k] : NULL;
        st->workers[k].index = (int)k;
    }
    st->n_workers =
        vt_pool_threads_start(st->tids, n, stt_worker_main, st->workers, sizeof(*st->workers));
    /* Not even one thread: recognise everything here, with decoder 0. */
    if (st->n_workers == 0)
        st->inline_mode = 1;
}

/* Wait for the workers to finish (abandon: the segments not yet claimed are dropped). */
static void stop_workers(struct stt_stream *st, int abandon)
{
    struct stt_job *job = &st->job;

    pthread_mutex_lock(&job->mu);
    job->closed = 1;
    if (abandon)
        job->stop = 1;
    pthread_cond_broadcast(&job->work);
    pthread_mutex_unlock(&job->mu);
    vt_pool_threads_join(st->tids, st->n_workers);
    for (size_t i = 0; i < job->cap; i++)
        seg_release(&job->slots[i]);
    free(job->slots);
    free(st->workers);
    free(st->tids);
    pthread_cond_destroy(&job->done);
    pthread_cond_destroy(&job->work);
    pthread_mutex_destroy(&job->mu);
}

static int stopped(struct stt_job *job)
{
    int stop;

    pthread_mutex_lock(&job->mu);
    stop = job->stop;
    pthread_mutex_unlock(&job->mu);
    return stop;
}

/* ---- Silero: speech from the VAD's probabilities, window by window as the audio comes ---- */

/* A segment Silero found (samples) is a run of whole frames: never a click, never overlapping. */
static void vad_run_found(struct stt_stream *st, const struct vt_vad_segment *seg)
{
    size_t s = seg->start / FRAME_SAMPLES, e = (seg->end + FRAME_SAMPLES - 1) / FRAME_SAMPLES;
    size_t last = st->n_runs ? st->runs[st->n_runs - 1].end : st->have_prev ? st->prev_end : 0;

    if (e > n_levels(st))
        e = n_levels(st);
    if (s < last)
        s = last;
    if (s < e)
        run_finished(st, s, e, 1);
}

/* Speech that goes on past SEG_MAX_S is cut at its quietest frame, as the energy runs are. */
static void vad_cut_long(struct stt_stream *st)
{
    size_t seg_max = (size_t)(SEG_MAX_S / FRAME_S), start, now;
    struct vt_vad_segment seg;

    /* the last window may run past the audio (zeros): only frames with a level count */
    now = st->cut.n_windows * VT_VAD_WINDOW / FRAME_SAMPLES;
    if (now > n_levels(st))
        now = n_levels(st);
    while (vt_vad_cutter_open(&st->cut, &start) && now > start / FRAME_SAMPLES &&
           now - start / FRAME_SAMPLES > seg_max) {
        size_t cut = quietest_frame(st, start / FRAME_SAMPLES);

        if (!vt_vad_cutter_cut(&st->cut, cut * FRAME_SAMPLES, &seg))
            break;
        vad_run_found(st, &seg);
    }
}

/*
 * The probability of every window whose audio is all read (last: the end, the window it
 * begins padded with zeros, as upstream pads it), its segments into the runs, and the
 * segments that are ready to the workers.
 */
static int vad_windows(struct stt_stream *st, int last)
{
    size_t total = st->pcm_base + st->pcm_n, frontier, end;
    struct vt_vad_segment seg;
    float x[VT_VAD_WINDOW];

    for (;;) {
        size_t at = st->cut.n_windows * VT_VAD_WINDOW, have;
        const int16_t *pcm;

        if (at >= total || (total - at < VT_VAD_WINDOW && !last))
            break;
        pcm = st->pcm + (at - st->pcm_base);
        have = total - at < VT_VAD_WINDOW ? total - at : VT_VAD_WINDOW;
        for (size_t k = 0; k < VT_VAD_WINDOW; k++)
            x[k] = k < have ? pcm[k] / 32768.0f : 0;
        if (vt_vad_cutter_push(
                &st->cut, vt_vad_window(st->stt->vad, &st->vst, x, VT_VAD_FRAMING_SILERO), &seg))
            vad_run_found(st, &seg);
        vad_cut_long(st);
    }
    st->pos = st->cut.n_windows * VT_VAD_WINDOW / FRAME_SAMPLES;
    if (st->pos > n_levels(st))
        st->pos = n_levels(st);
    if (!st->n_runs || last)
        return 0;
    /* no run can start before the frontier, nor before the last one ended */
    frontier = vt_vad_cutter_frontier(&st->cut) / FRAME_SAMPLES;
    end = st->runs[st->n_runs - 1].end;
    return make_segments(st, frontier > end ? frontier : end, 0);
}

/* stream_run with Silero finding the speech. */
static int vad_stream_run(struct stt_stream *st, char *err, size_t errlen)
{
    struct vt_vad_params p;
    struct vt_vad_segment seg;
    int rc;

    vt_vad_params_default(&p);
    vt_vad_cutter_init(&st->cut, &p);
    vt_vad_state_init(&st->vst);
    for (;;) {
        rc = vad_windows(st, 0);
        if (rc)
            return rc;
        if (stopped(&st->job))
            return VT_EIO;
        if (st->eof)
            break;
        rc = read_more(st, err, errlen);
        if (rc)
            return rc;
    }
    rc = vad_windows(st, 1);
    if (rc)
        return rc;
    if (vt_vad_cutter_finish(&st->cut, st->pcm_base + st->pcm_n, &seg))
        vad_run_found(st, &seg);
    rc = make_segments(st, st->pos, 1);
    if (rc)
        return rc;
    collect(st, 2);
    return 0;
}

/* Decode, cut and recognise the audio of read/src, collecting the words in order. */
static int stream_run(struct stt_stream *st, char *err, size_t errlen)
{
    size_t block = (size_t)(NOISE_BLOCK_S / FRAME_S);
    int rc;

    if (st->stt->vad)
        return vad_stream_run(st, err, errlen);

    st->thr_block = SIZE_MAX;
    for (;;) {
        size_t had = st->n_speech;

        while (st->pos < n_levels(st)) {
            size_t b = st->pos / block;

            if (b != st->thr_block && !block_threshold(st, b))
                break;
            classify(st);
            if (st->n_runs && (st->n_speech != had || !st->open)) {
                rc = make_segments(st, st->open ? st->os : st->pos, 0);
                if (rc)
                    return rc;
                had = st->n_speech;
            }
        }
        if (stopped(&st->job))
            return VT_EIO;
        if (st->eof && st->pos == n_levels(st))
            break;
        rc = read_more(st, err, errlen);
        if (rc)
            return rc;
    }
    if (st->open) {
        run_finished(st, st->os, st->oe, st->open_split);
        st->open = 0;
    }
    rc = make_segments(st, st->pos, 1);
    if (rc)
        return rc;
    collect(st, 2);
    return 0;
}

static void stream_release(struct stt_stream *st)
{
    for (size_t i = 0; i < st->n_words; i++)
        free(st->words[i].text);
    free(st->words);
    free(st->runs);
    free(st->scratch);
    free(st->db);
    free(st->pcm);
}

static int stt_run_source(struct vt_stt *stt, stt_read_fn read, void *src, double duration_s,
                          struct vt_transcript *out, vt_progress_fn progress, void *user, char *err,
                          size_t errlen)
{
    struct stt_stream st = {.stt = stt,
                            .read = read,
                            .src = src,
                            .duration_s = duration_s,
                            .progress = progress,
                            .user = user,
                            .block = READ_SAMPLES};
    char head[sizeof(out->model)];
    int rc;

    snprintf(out->model, sizeof(out->model), "%s", stt->model_vad);
    start_workers(&st);
    rc = stream_run(&st, err, errlen);
    stop_workers(&st, rc != 0);
    /* A failed segment explains a stop (the lowest one, once every worker has finished). */
    if (st.job.fail.item != SIZE_MAX)
        rc = vt_err(err, errlen, st.job.fail.code, "%s", st.job.fail.msg);
    if (rc)
        goto out;
    snprintf(head, sizeof(head), "%s", stt->model);
    if (st.server_model[0]) {
        size_t len = strlen(head);

        snprintf(head + len, sizeof(head) - len, " (server model %s)", st.server_model);
    }
    model_with_vad(out->model, sizeof(out->model), head, stt->vad);
    /* Less than a frame cannot hold a word. */
    if (st.n_speech == 0) {
        rc = vt_err(err, errlen, VT_SKIP, "silence only");
        goto out;
    }
    if (st.n_words == 0) {
        rc = vt_err(err, errlen, VT_SKIP, "silence only (no words recognised)");
        goto out;
    }
    vt_cues_from_words(st.words, st.n_words, out);
out:
    stream_release(&st);
    return rc;
}

/* A buffer as a source. */
struct mem_src {
    const int16_t *pcm;
    size_t n, off;
};

static int mem_read(void *src, int16_t *buf, size_t max, size_t *n, char *err, size_t errlen)
{
    struct mem_src *m = src;

    (void)err;
    (void)errlen;
    *n = m->n - m->off < max ? m->n - m->off : max;
    if (*n)
        memcpy(buf, m->pcm + m->off, *n * sizeof(*buf));
    m->off += *n;
    return 0;
}

int vt_stt_run(struct vt_stt *stt, const int16_t *pcm, size_t n, struct vt_transcript *out,
               vt_progress_fn progress, void *user, char *err, size_t errlen)
{
    struct mem_src m = {.pcm = pcm, .n = pcm ? n : 0};

    return stt_run_source(stt, mem_read, &m, (double)m.n / VT_AUDIO_RATE_HZ, out, progress, user,
                          err, errlen);
}

int vt_stt_cut(const struct vt_vad *vad, const int16_t *pcm, size_t n, size_t block,
               struct vt_stt_cuts *out, char *err, size_t errlen)
{
    return vt_stt_cut_for(vad, 0, pcm, n, block, out, err, errlen);
}

int vt_stt_cut_for(const struct vt_vad *vad, int whisper, const int16_t *pcm, size_t n,
                   size_t block, struct vt_stt_cuts *out, char *err, size_t errlen)
{
    struct vt_stt stt = {.n_decoders = 1, .vad = vad, .cuts = out};

    if (whisper) {
        stt.long_pause_s = WHISPER_LONG_PAUSE_S;
        stt.seg_min_s = WHISPER_SEG_MIN_S;
        stt.seg_max_s = WHISPER_SEG_MAX_S;
    }
    struct mem_src m = {.pcm = pcm, .n = pcm ? n : 0};
    struct stt_stream st = {.stt = &stt, .read = mem_read, .src = &m, .block = block};
    int rc;

    if (block < 1 || block > READ_SAMPLES)
        return vt_err(err, errlen, VT_EINVAL, "'%zu': bad block size", block);
    /* one worker, which never gets a segment */
    start_workers(&st);
    rc = stream_run(&st, err, errlen);
    stop_workers(&st, rc != 0);
    out->pcm_peak = st.pcm_peak;
    stream_release(&st);
    return rc;
}

static int file_read(void *src, int16_t *buf, size_t max, size_t *n, char *err, size_t errlen)
{
    return vt_audio_read(src, buf, max, n, err, errlen);
}

int vt_stt_run_file(struct vt_stt *stt, const char *path, struct vt_transcript *out,
                    vt_progress_fn progress, void *user, char *err, size_t errlen)
{
    struct vt_audio *a = NULL;
    int rc;

    snprintf(out->model, sizeof(out->model), "%s", stt->model_vad);
    rc = vt_audio_open(path, &a, err, errlen);
    if (rc)
        return rc;
    rc =
        stt_run_source(stt, file_read, a, vt_audio_duration_s(a), out, progress, user, err, errlen);
    vt_audio_close(a);
    return rc;
}
