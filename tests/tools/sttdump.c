/*
 * sttdump: the stt stage alone, for tests and benchmarks until the pipeline runs it.
 * Decodes FILE's audio (vt_audio_load), recognises it (vt_stt_run) and prints the
 * transcript as JSON on stdout in the export's shape:
 *   {"model": ..., "cues": [{"start_s", "end_s", "text", "words": [{"text", "start_s",
 *   "end_s", "conf"}]}]}
 * and the time spent loading the model, decoding the audio and recognising it on stderr
 * ("timing: load_s=... audio_s=... recognise_s=... duration_s=... rtf=... vad_s=...
 * recognise_cpu_s=..."; the last is the CPU time of every thread while recognising, which
 * a loaded machine's neighbours change less than the wall time).
 *
 * Usage: sttdump [-j THREADS] [--hints TEXTFILE] [--vad MODEL] FILE. With --hints, every line
 * of TEXTFILE is a text of the video's (a slide's line, its title...) given to the recogniser
 * as speech hints (stt_hints.h), as the stt stage gives its OCR lines. With --vad, the speech
 * is found by the Silero VAD of the ggml file MODEL inside the stage's streaming segmenter
 * (vt_stt_set_vad: what `stt.vad silero` does), instead of its energy detector; vad_s is the
 * network's time alone over the same audio (a separate pass, not in recognise_s, which
 * includes the stage's own). Exit status 0, 3 when the
 * stage would be skipped (the reason on stderr, "{}" on stdout), 1 on error.
 */
#include "base/util.h"
#include "media/audio.h"
#include "speech/stt.h"
#include "speech/stt_hints.h"
#include "speech/vad.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static json_t *transcript_json(const struct vt_transcript *t)
{
    json_t *cues = json_array();

    for (size_t i = 0; i < t->n_cues; i++) {
        const struct vt_cue *c = &t->cues[i];
        json_t *words = json_array();

        for (size_t k = 0; k < c->n_words; k++)
            json_array_append_new(words, json_pack("{s:s, s:f, s:f, s:f}", "text", c->words[k].text,
                                                   "start_s", c->words[k].start_s, "end_s",
                                                   c->words[k].end_s, "conf", c->words[k].conf));
        json_array_append_new(cues, json_pack("{s:f, s:f, s:s, s:o}", "start_s", c->start_s,
                                              "end_s", c->end_s, "text", c->text, "words", words));
    }
    return json_pack("{s:s, s:o}", "model", t->model, "cues", cues);
}

/* CPU seconds of the whole process (all its threads) so far. */
static double cpu_s(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
        return 0;
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    struct vt_transcript t = {0};
    struct vt_stt *stt = NULL;
    int16_t *pcm = NULL;
    size_t n = 0;
    long threads = 0;
    char err[512] = "";
    const char *path = NULL, *hints_path = NULL, *vad_path = NULL;
    struct vt_vad *vad = NULL;
    double vad_s = 0;
    struct vt_stt_hints hints = {0};
    double t0, t1, t2, t3, c2, c3;
    int rc = 1, e;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-j") && i + 1 < argc && !vt_parse_long(argv[i + 1], 0, 64, &threads))
            i++;
        else if (!strcmp(argv[i], "--hints") && i + 1 < argc)
            hints_path = argv[++i];
        else if (!strcmp(argv[i], "--vad") && i + 1 < argc)
            vad_path = argv[++i];
        else if (!path && argv[i][0] != '-')
            path = argv[i];
        else
            path = NULL, i = argc;
    }
    if (!path) {
        fprintf(stderr, "usage: sttdump [-j THREADS] [--hints TEXTFILE] [--vad MODEL] FILE\n");
        return 2;
    }
    if (hints_path) {
        FILE *f = fopen(hints_path, "r");
        char line[4096];

        if (!f) {
            fprintf(stderr, "sttdump: '%s': cannot open\n", hints_path);
            return 1;
        }
        while (fgets(line, sizeof(line), f))
            vt_stt_hints_add(&hints, line);
        fclose(f);
        vt_stt_hints_finish(&hints);
    }
    t0 = vt_monotonic_s();
    stt = vt_stt_new_hinted((int)threads, &hints, err, sizeof(err));
    if (!stt) {
        fprintf(stderr, "sttdump: %s\n", err);
        goto out;
    }
    if (vad_path && vt_vad_open(vad_path, &vad, err, sizeof(err))) {
        fprintf(stderr, "sttdump: %s\n", err);
        goto out;
    }
    t1 = vt_monotonic_s();
    e = vt_audio_load(path, &pcm, &n, err, sizeof(err));
    if (e == VT_SKIP) {
        fprintf(stderr, "sttdump: skipped: %s\n", err);
        printf("{}\n");
        rc = 3;
        goto out;
    }
    if (e) {
        fprintf(stderr, "sttdump: %s\n", err);
        goto out;
    }
    t2 = vt_monotonic_s();
    c2 = cpu_s();
    vt_stt_set_vad(stt, vad);
    e = vt_stt_run(stt, pcm, n, &t, NULL, NULL, err, sizeof(err));
    t3 = vt_monotonic_s();
    c3 = cpu_s();
    if (vad) {
        float *probs = NULL;

        vt_vad_probs(vad, pcm, n, VT_VAD_FRAMING_SILERO, &probs);
        vad_s = vt_monotonic_s() - t3;
        free(probs);
    }
    if (e == VT_SKIP) {
        fprintf(stderr, "sttdump: skipped: %s\n", err);
        printf("{}\n");
        rc = 3;
        goto out;
    }
    if (e) {
        fprintf(stderr, "sttdump: %s\n", err);
        goto out;
    }
    {
        json_t *j = transcript_json(&t);

        json_dumpf(j, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
        putchar('\n');
        json_decref(j);
    }
    fprintf(stderr,
            "timing: load_s=%.3f audio_s=%.3f recognise_s=%.3f duration_s=%.3f rtf=%.4f "
            "vad_s=%.3f recognise_cpu_s=%.3f\n",
            t1 - t0, t2 - t1, t3 - t2, (double)n / VT_AUDIO_RATE_HZ,
            n ? (t3 - t2) / ((double)n / VT_AUDIO_RATE_HZ) : 0.0, vad_s, c3 - c2);
    rc = 0;
out:
    vt_transcript_release(&t);
    free(pcm);
    vt_stt_free(stt);
    vt_vad_free(vad);
    vt_stt_hints_release(&hints);
    return rc;
}
