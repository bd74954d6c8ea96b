/*
 * libFuzzer target for the captions reader and writers. Any input must parse without a
 * crash, leak or undefined behaviour; when it parses, each writer must succeed, and what
 * the WebVTT and SubRip writers produce must read back as the same cues (times and text;
 * words too for WebVTT), which checks that the writers' sanitising keeps every file valid.
 * The first byte picks the format hint: none, "srt" or "vtt".
 *
 * fuzz-sources: lib/captions/*.c lib/text/transcript.c lib/base/util.c lib/media/media.c
 * fuzz-pkgs: libavformat libavcodec libavutil jansson uchardet
 */
#include "base/util.h"
#include "captions/captions.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect(int cond, const char *what, const char *out)
{
    if (cond)
        return;
    fprintf(stderr, "fuzz_captions: %s\n--- output:\n%s\n", what, out ? out : "");
    abort();
}

/* The written text read back as format must give the cues of t. */
static void check_round_trip(const struct vt_transcript *t, const struct vt_sb *sb,
                             const char *format)
{
    struct vt_transcript back;
    char err[256] = "";
    int words = !strcmp(format, "vtt");

    expect(vt_captions_parse(sb->buf, sb->len, format, &back, err, sizeof(err)) == 0,
           "written captions do not parse", sb->buf);
    expect(back.n_cues == t->n_cues, "cue count changed", sb->buf);
    for (size_t i = 0; i < t->n_cues; i++) {
        const struct vt_cue *a = &t->cues[i], *b = &back.cues[i];

        expect(fabs(a->start_s - b->start_s) < 1e-6 && fabs(a->end_s - b->end_s) < 1e-6,
               "cue times changed", sb->buf);
        expect(!strcmp(a->text, b->text), "cue text changed", sb->buf);
        if (!words)
            continue;
        expect(a->n_words == b->n_words, "word count changed", sb->buf);
        for (size_t k = 0; k < a->n_words; k++)
            expect(!strcmp(a->words[k].text, b->words[k].text) &&
                       fabs(a->words[k].start_s - b->words[k].start_s) < 1e-6 &&
                       fabs(a->words[k].end_s - b->words[k].end_s) < 1e-6,
                   "word changed", sb->buf);
    }
    vt_transcript_release(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const hints[] = {NULL, "srt", "vtt"};
    static const char *const formats[] = {"vtt", "srt", "txt"};
    const char *hint = size ? hints[data[0] % 3] : NULL;
    struct vt_transcript t;
    char err[256] = "";
    int rc;

    /* data is not NUL-terminated: the parser must never read past size */
    rc = vt_captions_parse((const char *)data, size, hint, &t, err, sizeof(err));
    expect(rc == 0 || rc == VT_SKIP || rc == VT_EINVAL, "unexpected return code", err);
    expect(rc == 0 || (t.n_cues == 0 && t.cues == NULL), "failed parse left cues", err);
    expect(rc == 0 || err[0], "failure without a message", NULL);
    if (rc)
        return 0;
    for (size_t f = 0; f < 3; f++) {
        struct vt_sb sb = {0};

        expect(vt_captions_write(&t, formats[f], &sb) == 0, "writer failed", NULL);
        if (f < 2)
            check_round_trip(&t, &sb, formats[f]);
        vt_sb_release(&sb);
    }
    vt_transcript_release(&t);
    return 0;
}
