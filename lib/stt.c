/*
 * The stt stage: PocketSphinx (the 0.8+5prealpha API Debian ships) in process. vt_stt_new
 * loads one decoder per worker thread once; vt_stt_run finds the pauses with an energy
 * detector on 10 ms frames and cuts the audio into segments, which the workers take from a
 * shared counter, each recognised as one utterance. Word timings come back as decoder frames
 * (10 ms) from the segment's start and are mapped onto the audio's time line; fillers are
 * dropped and the words grouped into cues (transcript.c).
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
 * Results are assembled in segment order.
 */
#include "stt.h"

#include "audio.h"
#include "util.h"

#include <math.h>
#include <pocketsphinx.h>
#include <pthread.h>
#include <sphinxbase/err.h>
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
 * Pause detector. A frame is speech when its level is well above the noise floor (the
 * 10th percentile of all frames) and above an absolute floor. Pauses shorter than
 * GAP_MERGE_S belong to speech (between words); bursts shorter than MIN_BURST_S are clicks.
 */
#define FLOOR_DB       -55.0
#define ABOVE_NOISE_DB 9.0
#define GAP_MERGE_S    0.3
#define MIN_BURST_S    0.05
/* Segments: see the top of the file. */
#define SEG_MIN_S    10.0
#define SEG_MAX_S    30.0
#define LONG_PAUSE_S 0.6
#define PAD_S        0.3

struct vt_stt {
    ps_decoder_t **decoders;
    int n_decoders;
    char model[160];
};

/* A run of frames [start, end) of speech, or of one segment (in frames, then samples). */
struct span {
    size_t start, end;
};

struct stt_seg {
    size_t start, n; /* samples */
    struct vt_word *words;
    size_t n_words, cap_words;
};

/* The state shared by the workers of one vt_stt_run call, guarded by mu. */
struct stt_job {
    const int16_t *pcm;
    struct stt_seg *segs;
    size_t n_segs;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next;         /* next segment to claim */
    size_t done_samples; /* samples of finished segments, for progress */
    size_t n_done;
    int n_running;
    int stop;
    size_t err_index; /* lowest failing segment, n_segs if none */
    int err_code;
    char err[256];
};

struct stt_worker {
    struct stt_job *job;
    ps_decoder_t *ps;
    pthread_t tid;
};

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

    config = cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-lm", lm, "-dict", dict, "-cmn",
                         "batch", "-remove_silence", "no", "-maxhmmpf", "3000", NULL);
    if (!config)
        return NULL;
    ps = ps_init(config);
    /* ps_init holds its own reference on success. */
    cmd_ln_free_r(config);
    return ps;
}

struct vt_stt *vt_stt_new(int nthreads, char *err, size_t errlen)
{
    struct vt_stt *stt = NULL;
    const char *dir = getenv("VIDTHEQUE_PS_MODEL_DIR");
    char *hmm = NULL, *lm = NULL, *dict = NULL, *mdef = NULL;
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
        ps_decoder_t *ps = decoder_new(hmm, lm, dict);

        if (!ps) {
            vt_err(err, errlen, VT_EIO, "'%s': cannot load the pocketsphinx model", dir);
            goto out;
        }
        stt->decoders[stt->n_decoders++] = ps;
    }
    snprintf(stt->model, sizeof(stt->model), "pocketsphinx %s, hmm %s, lm %s, dict %s", PS_VERSION,
             PS_HMM, PS_LM, PS_DICT);
    ok = 1;
out:
    if (!ok) {
        vt_stt_free(stt);
        stt = NULL;
    }
    free(hmm);
    free(lm);
    free(dict);
    free(mdef);
    return stt;
}

const char *vt_stt_model(const struct vt_stt *stt)
{
    return stt->model;
}

void vt_stt_free(struct vt_stt *stt)
{
    if (!stt)
        return;
    for (int i = 0; i < stt->n_decoders; i++)
        ps_free(stt->decoders[i]);
    free(stt->decoders);
    free(stt);
}

/* ---- pause detection and segmentation ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Level of every 10 ms frame in dB below full scale (digital silence is -100). */
static double *frame_levels(const int16_t *pcm, size_t n, size_t n_frames)
{
    double *db = vt_xmalloc(n_frames * sizeof(*db));

    for (size_t f = 0; f < n_frames; f++) {
        size_t s0 = f * FRAME_SAMPLES, s1 = s0 + FRAME_SAMPLES < n ? s0 + FRAME_SAMPLES : n;
        double sum = 0;

        for (size_t s = s0; s < s1; s++)
            sum += (double)pcm[s] * pcm[s];
        sum /= (double)(s1 - s0) * 32768.0 * 32768.0;
        db[f] = sum > 1e-10 ? 10 * log10(sum) : -100;
    }
    return db;
}

/*
 * Speech runs (in frames) of the audio. Runs longer than SEG_MAX_S (talk over music, no
 * pause at all) are split at their quietest frame, so that no segment has to be longer.
 */
static size_t find_speech(const double *db, size_t n_frames, struct span **out)
{
    struct span *runs = NULL;
    size_t n_runs = 0, cap = 0, f = 0;
    size_t merge = (size_t)(GAP_MERGE_S / FRAME_S), min_burst = (size_t)(MIN_BURST_S / FRAME_S);
    size_t seg_min = (size_t)(SEG_MIN_S / FRAME_S), seg_max = (size_t)(SEG_MAX_S / FRAME_S);
    double *sorted = vt_xmalloc(n_frames * sizeof(*sorted)), thr;

    memcpy(sorted, db, n_frames * sizeof(*sorted));
    qsort(sorted, n_frames, sizeof(*sorted), cmp_double);
    thr = sorted[n_frames / 10] + ABOVE_NOISE_DB;
    if (thr < FLOOR_DB)
        thr = FLOOR_DB;
    free(sorted);

    while (f < n_frames) {
        size_t start;

        if (db[f] < thr) {
            f++;
            continue;
        }
        start = f;
        while (f < n_frames && db[f] >= thr)
            f++;
        if (n_runs && start - runs[n_runs - 1].end < merge) {
            runs[n_runs - 1].end = f;
            continue;
        }
        vt_grow((void **)&runs, &cap, n_runs + 1, sizeof(*runs));
        runs[n_runs].start = start;
        runs[n_runs].end = f;
        n_runs++;
    }
    /* Drop clicks; split the over-long runs at their quietest frame. */
    {
        struct span *kept = NULL;
        size_t n_kept = 0, cap_kept = 0;

        for (size_t i = 0; i < n_runs; i++) {
            struct span r = runs[i];

            if (r.end - r.start < min_burst)
                continue;
            while (r.end - r.start > seg_max) {
                size_t cut = r.start + seg_min;

                for (size_t k = r.start + seg_min; k < r.start + seg_max; k++)
                    if (db[k] < db[cut])
                        cut = k;
                vt_grow((void **)&kept, &cap_kept, n_kept + 1, sizeof(*kept));
                kept[n_kept].start = r.start;
                kept[n_kept].end = cut;
                n_kept++;
                r.start = cut;
            }
            vt_grow((void **)&kept, &cap_kept, n_kept + 1, sizeof(*kept));
            kept[n_kept++] = r;
        }
        free(runs);
        runs = kept;
        n_runs = n_kept;
    }
    *out = runs;
    return n_runs;
}

/* Group speech runs into segments (in samples, padded into the pauses around them). */
static size_t make_segments(const struct span *runs, size_t n_runs, size_t n_frames, size_t n,
                            struct stt_seg **out)
{
    struct stt_seg *segs = NULL;
    size_t n_segs = 0, cap = 0, i = 0;
    size_t seg_min = (size_t)(SEG_MIN_S / FRAME_S), seg_max = (size_t)(SEG_MAX_S / FRAME_S);
    size_t long_pause = (size_t)(LONG_PAUSE_S / FRAME_S), pad = (size_t)(PAD_S / FRAME_S);

    while (i < n_runs) {
        size_t k = i, before, after, start_f, end_f;

        /* Take runs while the pause before the next is short and the segment not too long. */
        while (k + 1 < n_runs && runs[k + 1].start - runs[k].end < long_pause &&
               runs[k + 1].end - runs[i].start <= seg_max)
            k++;
        /* Stopped by the length limit: end at the longest pause past the minimum length. */
        if (k + 1 < n_runs && runs[k + 1].start - runs[k].end < long_pause) {
            size_t best = k, best_gap = 0;

            for (size_t m = i; m < k; m++) {
                size_t gap = runs[m + 1].start - runs[m].end;

                if (runs[m].end - runs[i].start >= seg_min && gap >= best_gap) {
                    best = m;
                    best_gap = gap;
                }
            }
            k = best;
        }
        before = i ? (runs[i].start - runs[i - 1].end) / 2 : runs[i].start;
        after = k + 1 < n_runs ? (runs[k + 1].start - runs[k].end + 1) / 2 : n_frames - runs[k].end;
        start_f = runs[i].start - (before < pad ? before : pad);
        end_f = runs[k].end + (after < pad ? after : pad);
        vt_grow((void **)&segs, &cap, n_segs + 1, sizeof(*segs));
        memset(&segs[n_segs], 0, sizeof(*segs));
        segs[n_segs].start = start_f * FRAME_SAMPLES;
        segs[n_segs].n =
            (end_f * FRAME_SAMPLES < n ? end_f * FRAME_SAMPLES : n) - segs[n_segs].start;
        n_segs++;
        i = k + 1;
    }
    *out = segs;
    return n_segs;
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
static int decode_segment(ps_decoder_t *ps, const int16_t *pcm, struct stt_seg *seg, char *err,
                          size_t errlen)
{
    logmath_t *lmath = ps_get_logmath(ps);
    double seg_start_s = (double)seg->start / VT_AUDIO_RATE_HZ;
    double seg_end_s = (double)(seg->start + seg->n) / VT_AUDIO_RATE_HZ;

    /* A new stream resets the noise estimate that would otherwise carry over. */
    if (ps_start_stream(ps) < 0 || ps_start_utt(ps) < 0)
        return vt_err(err, errlen, VT_EIO, "pocketsphinx: cannot start an utterance");
    if (ps_process_raw(ps, pcm + seg->start, seg->n, FALSE, TRUE) < 0) {
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

static void seg_release(struct stt_seg *seg)
{
    for (size_t i = 0; i < seg->n_words; i++)
        free(seg->words[i].text);
    free(seg->words);
    seg->words = NULL;
    seg->n_words = seg->cap_words = 0;
}

static void *stt_worker_main(void *arg)
{
    struct stt_worker *wk = arg;
    struct stt_job *job = wk->job;

    for (;;) {
        char err[sizeof(job->err)] = "";
        size_t i;
        int rc;

        pthread_mutex_lock(&job->mu);
        if (job->stop || job->next >= job->n_segs) {
            job->n_running--;
            pthread_cond_signal(&job->cv);
            pthread_mutex_unlock(&job->mu);
            break;
        }
        i = job->next++;
        pthread_mutex_unlock(&job->mu);

        rc = decode_segment(wk->ps, job->pcm, &job->segs[i], err, sizeof(err));

        pthread_mutex_lock(&job->mu);
        job->n_done++;
        job->done_samples += job->segs[i].n;
        /* The lowest failing segment is reported, whatever the timing. */
        if (rc < 0) {
            job->stop = 1;
            if (i < job->err_index) {
                job->err_index = i;
                job->err_code = rc;
                memcpy(job->err, err, sizeof(job->err));
            }
        }
        pthread_cond_signal(&job->cv);
        pthread_mutex_unlock(&job->mu);
    }
    return NULL;
}

/* Recognise every segment on the decoders' threads; progress from this thread only. */
static int run_workers(struct vt_stt *stt, struct stt_job *job, size_t total_samples,
                       vt_progress_fn progress, void *user, char *err, size_t errlen)
{
    struct stt_worker *workers;
    size_t n_workers, started = 0, reported = 0;
    int rc = 0;

    n_workers = (size_t)stt->n_decoders < job->n_segs ? (size_t)stt->n_decoders : job->n_segs;
    workers = vt_xcalloc(n_workers, sizeof(*workers));
    for (size_t k = 0; k < n_workers; k++) {
        workers[k].job = job;
        workers[k].ps = stt->decoders[k];
        pthread_mutex_lock(&job->mu);
        job->n_running++;
        pthread_mutex_unlock(&job->mu);
        if (pthread_create(&workers[k].tid, NULL, stt_worker_main, &workers[k])) {
            pthread_mutex_lock(&job->mu);
            job->n_running--;
            pthread_mutex_unlock(&job->mu);
            break;
        }
        started++;
    }
    /* Not even one thread: recognise everything here, with decoder 0. */
    if (started == 0) {
        pthread_mutex_lock(&job->mu);
        job->n_running++;
        pthread_mutex_unlock(&job->mu);
        stt_worker_main(&workers[0]);
    }

    pthread_mutex_lock(&job->mu);
    for (;;) {
        size_t done;
        int running;

        while (job->n_done == reported && job->n_running > 0)
            pthread_cond_wait(&job->cv, &job->mu);
        done = job->done_samples;
        running = job->n_running;
        if (job->n_done != reported && progress && !job->stop) {
            reported = job->n_done;
            pthread_mutex_unlock(&job->mu);
            progress(user, (double)done / (double)total_samples);
            pthread_mutex_lock(&job->mu);
        }
        reported = job->n_done;
        if (running == 0)
            break;
    }
    pthread_mutex_unlock(&job->mu);
    for (size_t k = 0; k < started; k++)
        pthread_join(workers[k].tid, NULL);
    if (job->err_index < job->n_segs)
        rc = vt_err(err, errlen, job->err_code, "%s", job->err);
    free(workers);
    return rc;
}

int vt_stt_run(struct vt_stt *stt, const int16_t *pcm, size_t n, struct vt_transcript *out,
               vt_progress_fn progress, void *user, char *err, size_t errlen)
{
    struct stt_job job = {.pcm = pcm};
    struct span *runs = NULL;
    struct vt_word *words = NULL;
    double *db = NULL;
    size_t n_frames = n / FRAME_SAMPLES, n_runs = 0, n_words = 0, cap_words = 0, total_samples = 0;
    int rc = 0;

    snprintf(out->model, sizeof(out->model), "%s", stt->model);
    /* Less than a frame cannot hold a word. */
    if (n_frames == 0) {
        rc = vt_err(err, errlen, VT_SKIP, "silence only");
        goto out;
    }
    db = frame_levels(pcm, n, n_frames);
    n_runs = find_speech(db, n_frames, &runs);
    if (n_runs == 0) {
        rc = vt_err(err, errlen, VT_SKIP, "silence only");
        goto out;
    }
    job.n_segs = make_segments(runs, n_runs, n_frames, n, &job.segs);
    job.err_index = job.n_segs;
    for (size_t i = 0; i < job.n_segs; i++)
        total_samples += job.segs[i].n;
    pthread_mutex_init(&job.mu, NULL);
    pthread_cond_init(&job.cv, NULL);
    rc = run_workers(stt, &job, total_samples, progress, user, err, errlen);
    pthread_cond_destroy(&job.cv);
    pthread_mutex_destroy(&job.mu);
    if (rc)
        goto out;

    /* Segment order, so the transcript never depends on which worker was faster. */
    for (size_t i = 0; i < job.n_segs; i++) {
        struct stt_seg *s = &job.segs[i];

        vt_grow((void **)&words, &cap_words, n_words + s->n_words, sizeof(*words));
        memcpy(words + n_words, s->words, s->n_words * sizeof(*words));
        n_words += s->n_words;
        /* The texts now belong to words. */
        free(s->words);
        s->words = NULL;
        s->n_words = s->cap_words = 0;
    }
    if (n_words == 0) {
        rc = vt_err(err, errlen, VT_SKIP, "silence only (no words recognised)");
        goto out;
    }
    vt_cues_from_words(words, n_words, out);
out:
    for (size_t i = 0; i < n_words; i++)
        free(words[i].text);
    free(words);
    for (size_t i = 0; i < job.n_segs; i++)
        seg_release(&job.segs[i]);
    free(job.segs);
    free(runs);
    free(db);
    return rc;
}
