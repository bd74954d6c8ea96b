/*
 * Tests of the stt stage and its audio loading: one LibriVox clip of Debian's
 * pocketsphinx-testdata recognised in process (word error rate, timings inside the clip),
 * the same multi-segment audio giving the same transcript twice, silence and tiny inputs
 * skipped, vt_audio_load resampling a WAV written here and skipping a file without audio, and
 * two hours of audio recognised from the file in bounded memory.
 * The full word error rate comparison is tests/e2e/t0500-stt.sh.
 */
#include "base/util.h"
#include "harness.h"
#include "media/audio.h"
#include "speech/stt.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIBRIVOX "/usr/share/pocketsphinx/test/data/librivox/"
#define CLIP     LIBRIVOX "sense_and_sensibility_01_austen_64kb-0870.wav"
#define CLIP_REF                                                                                   \
    "and mister john dashwood had then leisure to consider how much there might be prudently "     \
    "in his power to do for them"

/* One stt shared by the tests of this file: loading the model takes a second per core. */
static struct vt_stt *shared;
static int tried;

static struct vt_stt *shared_stt(void)
{
    char err[256] = "";

    if (!tried) {
        tried = 1;
        shared = vt_stt_new(0, err, sizeof(err));
        if (!shared)
            fprintf(stderr, "  vt_stt_new: %s\n", err);
    }
    return shared;
}

__attribute__((destructor)) static void free_shared_stt(void)
{
    vt_stt_free(shared);
}

/* Lower-case words of s, "mr" spelled out as the reference does; caller frees each and v. */
static size_t split_words(const char *s, char ***out)
{
    char **v = NULL;
    size_t n = 0, cap = 0;

    while (*s) {
        size_t len = strcspn(s, " \n");

        if (len) {
            char *w = vt_xasprintf("%.*s", (int)len, s);

            for (char *p = w; *p; p++)
                if (*p >= 'A' && *p <= 'Z')
                    *p = (char)(*p - 'A' + 'a');
            if (!strcmp(w, "mr")) {
                free(w);
                w = vt_xstrdup("mister");
            }
            vt_grow((void **)&v, &cap, n + 1, sizeof(*v));
            v[n++] = w;
        }
        s += len;
        if (*s)
            s++;
    }
    *out = v;
    return n;
}

/* Word error rate of hyp against ref, in 0..(large). */
static double wer(const char *ref, const char *hyp)
{
    char **r, **h;
    size_t nr = split_words(ref, &r), nh = split_words(hyp, &h);
    size_t *prev = vt_xcalloc(nh + 1, sizeof(*prev)), *cur = vt_xcalloc(nh + 1, sizeof(*cur));
    double res;

    for (size_t j = 0; j <= nh; j++)
        prev[j] = j;
    for (size_t i = 1; i <= nr; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= nh; j++) {
            size_t sub = prev[j - 1] + (strcmp(r[i - 1], h[j - 1]) != 0);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (nh + 1) * sizeof(*prev));
    }
    res = nr ? (double)prev[nh] / (double)nr : 0;
    for (size_t i = 0; i < nr; i++)
        free(r[i]);
    for (size_t i = 0; i < nh; i++)
        free(h[i]);
    free(r);
    free(h);
    free(prev);
    free(cur);
    return res;
}

/* All words of t joined by spaces; caller frees. */
static char *transcript_text(const struct vt_transcript *t)
{
    struct vt_sb sb = {0};

    vt_sb_adds(&sb, "");
    for (size_t i = 0; i < t->n_cues; i++)
        for (size_t k = 0; k < t->cues[i].n_words; k++) {
            if (sb.len)
                vt_sb_addc(&sb, ' ');
            vt_sb_adds(&sb, t->cues[i].words[k].text);
        }
    return vt_sb_detach(&sb);
}

static int progress_calls;
static double progress_last;

static void on_progress(void *user, double frac)
{
    CHECK(user == &progress_calls);
    CHECK(frac >= progress_last && frac <= 1.0 + 1e-9);
    progress_last = frac;
    progress_calls++;
}

VT_TEST(stt_librivox_clip)
{
    struct vt_stt *stt = shared_stt();
    struct vt_transcript t = {0};
    int16_t *pcm = NULL;
    size_t n = 0;
    char err[256] = "", *text = NULL;
    double dur_s, prev_s = 0, w;

    CHECK(stt != NULL);
    if (!stt)
        return;
    CHECK_INT(vt_audio_load(CLIP, &pcm, &n, err, sizeof(err)), 0);
    /* The clip is 7.10 s of 16 kHz mono: no resampling, no shift. */
    CHECK(n >= 113500 && n <= 113700);
    dur_s = (double)n / VT_AUDIO_RATE_HZ;
    progress_calls = 0;
    progress_last = 0;
    CHECK_INT(vt_stt_run(stt, pcm, n, &t, on_progress, &progress_calls, err, sizeof(err)), 0);
    CHECK(progress_calls >= 1);
    CHECK(strstr(t.model, "pocketsphinx") && strstr(t.model, "en-us"));
    text = transcript_text(&t);
    w = wer(CLIP_REF, text);
    fprintf(stderr, "  wer %.1f %%: %s\n", 100 * w, text);
    /* pocketsphinx_continuous gets 31.8 % on this clip with the same model. */
    CHECK(w <= 0.45);
    for (size_t i = 0; i < t.n_cues; i++) {
        const struct vt_cue *c = &t.cues[i];

        CHECK(c->n_words > 0);
        for (size_t k = 0; k < c->n_words; k++) {
            const struct vt_word *wd = &c->words[k];

            CHECK(wd->start_s >= prev_s);
            CHECK(wd->end_s >= wd->start_s);
            CHECK(wd->end_s <= dur_s);
            CHECK(wd->conf >= 0 && wd->conf <= 1);
            CHECK(wd->text[0] && !strchr(wd->text, '(') && !strchr(wd->text, '<') &&
                  !strchr(wd->text, '['));
            prev_s = wd->start_s;
        }
    }
    free(text);
    free(pcm);
    vt_transcript_release(&t);
}

/* Two clips with pauses: two segments on two workers, the same result twice. */
VT_TEST(stt_deterministic)
{
    static const char *const clips[] = {
        LIBRIVOX "sense_and_sensibility_01_austen_64kb-0880.wav",
        LIBRIVOX "sense_and_sensibility_01_austen_64kb-0930.wav",
    };
    struct vt_stt *stt = shared_stt();
    struct vt_transcript t1 = {0}, t2 = {0};
    int16_t *all = NULL;
    size_t n_all = 0;
    char err[256] = "";

    if (!stt)
        return;
    for (size_t i = 0; i < VT_ARRAY_LEN(clips); i++) {
        int16_t *pcm = NULL;
        size_t n = 0;

        CHECK_INT(vt_audio_load(clips[i], &pcm, &n, err, sizeof(err)), 0);
        all = vt_xrealloc(all, (n_all + n + VT_AUDIO_RATE_HZ) * sizeof(*all));
        memset(all + n_all, 0, VT_AUDIO_RATE_HZ * sizeof(*all));
        if (n)
            memcpy(all + n_all + VT_AUDIO_RATE_HZ, pcm, n * sizeof(*all));
        n_all += n + VT_AUDIO_RATE_HZ;
        free(pcm);
    }
    CHECK_INT(vt_stt_run(stt, all, n_all, &t1, NULL, NULL, err, sizeof(err)), 0);
    CHECK_INT(vt_stt_run(stt, all, n_all, &t2, NULL, NULL, err, sizeof(err)), 0);
    CHECK_INT(t1.n_cues, t2.n_cues);
    CHECK(t1.n_cues >= 2);
    for (size_t i = 0; i < t1.n_cues && i < t2.n_cues; i++) {
        CHECK_STR(t1.cues[i].text, t2.cues[i].text);
        CHECK_INT(t1.cues[i].n_words, t2.cues[i].n_words);
        for (size_t k = 0; k < t1.cues[i].n_words && k < t2.cues[i].n_words; k++) {
            CHECK(t1.cues[i].words[k].start_s == t2.cues[i].words[k].start_s);
            CHECK(t1.cues[i].words[k].end_s == t2.cues[i].words[k].end_s);
            CHECK(t1.cues[i].words[k].conf == t2.cues[i].words[k].conf);
        }
    }
    vt_transcript_release(&t1);
    vt_transcript_release(&t2);
    free(all);
}

VT_TEST(stt_silence_and_tiny)
{
    struct vt_stt *stt = shared_stt();
    struct vt_transcript t = {0};
    size_t n = 5 * VT_AUDIO_RATE_HZ;
    int16_t *pcm = vt_xcalloc(n, sizeof(*pcm));
    char err[256] = "";

    if (!stt) {
        free(pcm);
        return;
    }
    CHECK_INT(vt_stt_run(stt, pcm, n, &t, NULL, NULL, err, sizeof(err)), VT_SKIP);
    CHECK(strstr(err, "silence") != NULL);
    CHECK_INT(t.n_cues, 0);
    /* Faint noise (a quiet room) is silence too. */
    srand(1);
    for (size_t i = 0; i < n; i++)
        pcm[i] = (int16_t)(rand() % 21 - 10);
    CHECK_INT(vt_stt_run(stt, pcm, n, &t, NULL, NULL, err, sizeof(err)), VT_SKIP);
    CHECK_INT(t.n_cues, 0);
    CHECK_INT(vt_stt_run(stt, pcm, 0, &t, NULL, NULL, err, sizeof(err)), VT_SKIP);
    CHECK_INT(vt_stt_run(stt, NULL, 0, &t, NULL, NULL, err, sizeof(err)), VT_SKIP);
    pcm[0] = 30000;
    CHECK_INT(vt_stt_run(stt, pcm, 1, &t, NULL, NULL, err, sizeof(err)), VT_SKIP);
    CHECK_INT(t.n_cues, 0);
    vt_transcript_release(&t);
    free(pcm);
}

static void put_le(FILE *f, uint32_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        fputc((int)((v >> (8 * i)) & 0xff), f);
}

/* 1 s of 44.1 kHz stereo: a full-scale square wave on the left, silence on the right. */
static int write_wav(const char *path)
{
    FILE *f = fopen(path, "wb");
    uint32_t rate = 44100, n = rate, bytes = n * 4;

    if (!f)
        return -1;
    fputs("RIFF", f);
    put_le(f, 36 + bytes, 4);
    fputs("WAVEfmt ", f);
    put_le(f, 16, 4);
    put_le(f, 1, 2); /* PCM */
    put_le(f, 2, 2);
    put_le(f, rate, 4);
    put_le(f, rate * 4, 4);
    put_le(f, 4, 2);
    put_le(f, 16, 2);
    fputs("data", f);
    put_le(f, bytes, 4);
    for (uint32_t i = 0; i < n; i++) {
        put_le(f, (i / 50) % 2 ? 0x6000 : 0xa000, 2);
        put_le(f, 0, 2);
    }
    return fclose(f);
}

VT_TEST(audio_load_resamples)
{
    char dir[] = "/tmp/vt-audio-test-XXXXXX", *path, err[256] = "";
    int16_t *pcm = NULL;
    size_t n = 0, loud = 0;

    CHECK(mkdtemp(dir) != NULL);
    path = vt_xasprintf("%s/a.wav", dir);
    CHECK_INT(write_wav(path), 0);
    CHECK_INT(vt_audio_load(path, &pcm, &n, err, sizeof(err)), 0);
    CHECK(n >= 15990 && n <= 16010);
    for (size_t i = 0; i < n; i++)
        loud += pcm[i] > 2000 || pcm[i] < -2000;
    /* The left channel survives the downmix. */
    CHECK(loud > n / 2);
    free(pcm);
    free(path);
    vt_rm_rf(dir);
}

VT_TEST(audio_load_no_audio)
{
    char dir[] = "/tmp/vt-audio-test-XXXXXX", *path, *cmd, err[256] = "";
    int16_t *pcm = (int16_t *)1;
    size_t n = 1;

    CHECK(mkdtemp(dir) != NULL);
    path = vt_xasprintf("%s/v.mp4", dir);
    cmd = vt_xasprintf("ffmpeg -nostdin -v error -y -f lavfi -i color=black:s=64x64:d=0.5 "
                       "-c:v libx264 -pix_fmt yuv420p '%s'",
                       path);
    CHECK_INT(system(cmd), 0);
    CHECK_INT(vt_audio_load(path, &pcm, &n, err, sizeof(err)), VT_SKIP);
    CHECK_STR(err, "no audio stream");
    CHECK(pcm == NULL && n == 0);
    CHECK(vt_audio_load(dir, &pcm, &n, err, sizeof(err)) < 0);
    free(cmd);
    free(path);
    vt_rm_rf(dir);
}

/* VmRSS or VmHWM of this process in kB, -1 when /proc does not say. */
static long proc_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t len = strlen(field);

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, field, len) && line[len] == ':')
            kb = strtol(line + len + 1, NULL, 10);
    fclose(f);
    return kb;
}

/* Make VmHWM the current RSS (Linux 4.0+); 0 if it could. */
static int reset_peak_rss(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");

    if (!f)
        return -1;
    fputs("5", f);
    return fclose(f) ? -1 : 0;
}

/*
 * Whether peak RSS says what this code holds: under AddressSanitizer freed memory waits in a
 * quarantine (256 MB by default), unless ASAN_OPTIONS turns it off.
 */
static int rss_meaningful(void)
{
#if defined(__SANITIZE_ADDRESS__)
    const char *o = getenv("ASAN_OPTIONS");

    return o && strstr(o, "quarantine_size_mb=0");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    const char *o = getenv("ASAN_OPTIONS");

    return o && strstr(o, "quarantine_size_mb=0");
#else
    return 1;
#endif
#else
    return 1;
#endif
}

/*
 * Two hours of 16 kHz mono audio, silent but for one LibriVox clip at 1:00:00, recognised
 * from the file in bounded memory: the whole track (what vt_audio_load holds, and what the
 * stage held before it streamed) is 230 MB. The WAV is sparse, so it costs no disk and
 * decodes in a blink; the words land at the clip's place on the time line.
 */
VT_TEST(stt_file_streams_in_bounded_memory)
{
    const size_t hours = 2, at_s = 3600;
    const uint32_t bytes = (uint32_t)(hours * 3600 * VT_AUDIO_RATE_HZ * 2);
    struct vt_stt *stt = shared_stt();
    struct vt_transcript t = {0};
    char dir[] = "/tmp/vt-audio-test-XXXXXX", *path, err[256] = "", *text;
    int16_t *clip = NULL;
    size_t n_clip = 0, n_words = 0;
    long rss0_kb, hwm_kb;
    FILE *f;
    int peak_ok;

    if (!stt)
        return;
    CHECK(mkdtemp(dir) != NULL);
    path = vt_xasprintf("%s/long.wav", dir);
    CHECK_INT(vt_audio_load(CLIP, &clip, &n_clip, err, sizeof(err)), 0);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        goto out;
    fputs("RIFF", f);
    put_le(f, 36 + bytes, 4);
    fputs("WAVEfmt ", f);
    put_le(f, 16, 4);
    put_le(f, 1, 2); /* PCM */
    put_le(f, 1, 2);
    put_le(f, VT_AUDIO_RATE_HZ, 4);
    put_le(f, VT_AUDIO_RATE_HZ * 2, 4);
    put_le(f, 2, 2);
    put_le(f, 16, 2);
    fputs("data", f);
    put_le(f, bytes, 4);
    CHECK_INT(fseek(f, (long)(44 + at_s * VT_AUDIO_RATE_HZ * 2), SEEK_SET), 0);
    for (size_t i = 0; i < n_clip; i++)
        put_le(f, (uint16_t)clip[i], 2);
    CHECK_INT(ftruncate(fileno(f), 44 + (off_t)bytes), 0);
    CHECK_INT(fclose(f), 0);

    peak_ok = reset_peak_rss() == 0;
    rss0_kb = proc_kb("VmRSS");
    CHECK_INT(vt_stt_run_file(stt, path, &t, NULL, NULL, err, sizeof(err)), 0);
    hwm_kb = proc_kb("VmHWM");
    if (!rss_meaningful()) {
        fprintf(stderr, "  AddressSanitizer's quarantine holds freed memory: memory not checked "
                        "(ASAN_OPTIONS=quarantine_size_mb=0 to check it)\n");
    } else if (peak_ok && rss0_kb > 0 && hwm_kb > 0) {
        fprintf(stderr, "  peak rss growth %ld kB for %zu h of audio\n", hwm_kb - rss0_kb, hours);
        CHECK(hwm_kb - rss0_kb < 64 * 1024);
    } else {
        fprintf(stderr, "  cannot reset the peak rss here: memory not checked\n");
    }
    for (size_t i = 0; i < t.n_cues; i++)
        for (size_t k = 0; k < t.cues[i].n_words; k++) {
            const struct vt_word *w = &t.cues[i].words[k];

            CHECK(w->start_s >= at_s && w->end_s <= at_s + (double)n_clip / VT_AUDIO_RATE_HZ);
            n_words++;
        }
    CHECK(n_words >= 15);
    text = transcript_text(&t);
    CHECK(wer(CLIP_REF, text) <= 0.45);
    free(text);
out:
    vt_transcript_release(&t);
    free(clip);
    free(path);
    vt_rm_rf(dir);
}
