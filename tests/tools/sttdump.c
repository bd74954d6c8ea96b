/*
 * sttdump: the stt stage alone, for tests and benchmarks until the pipeline runs it.
 * Decodes FILE's audio (vt_audio_load), recognises it (vt_stt_run) and prints the
 * transcript as JSON on stdout in the export's shape:
 *   {"model": ..., "cues": [{"start_s", "end_s", "text", "words": [{"text", "start_s",
 *   "end_s", "conf"}]}]}
 * and the time spent loading the model, decoding the audio and recognising it on stderr
 * ("timing: load_s=... audio_s=... recognise_s=... duration_s=... rtf=...").
 *
 * Usage: sttdump [-j THREADS] FILE. Exit status 0, 3 when the stage would be skipped
 * (the reason on stderr, "{}" on stdout), 1 on error.
 */
#include "audio.h"
#include "stt.h"
#include "util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
    struct vt_transcript t = {0};
    struct vt_stt *stt = NULL;
    int16_t *pcm = NULL;
    size_t n = 0;
    long threads = 0;
    char err[512] = "";
    const char *path;
    double t0, t1, t2, t3;
    int rc = 1, e;

    if (argc == 4 && !strcmp(argv[1], "-j") && !vt_parse_long(argv[2], 0, 64, &threads)) {
        path = argv[3];
    } else if (argc == 2) {
        path = argv[1];
    } else {
        fprintf(stderr, "usage: sttdump [-j THREADS] FILE\n");
        return 2;
    }
    t0 = vt_monotonic_s();
    stt = vt_stt_new((int)threads, err, sizeof(err));
    if (!stt) {
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
    e = vt_stt_run(stt, pcm, n, &t, NULL, NULL, err, sizeof(err));
    t3 = vt_monotonic_s();
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
    fprintf(stderr, "timing: load_s=%.3f audio_s=%.3f recognise_s=%.3f duration_s=%.3f rtf=%.4f\n",
            t1 - t0, t2 - t1, t3 - t2, (double)n / VT_AUDIO_RATE_HZ,
            n ? (t3 - t2) / ((double)n / VT_AUDIO_RATE_HZ) : 0.0);
    rc = 0;
out:
    vt_transcript_release(&t);
    free(pcm);
    vt_stt_free(stt);
    return rc;
}
