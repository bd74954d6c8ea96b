/*
 * capdump: the captions module alone, for the end-to-end test. Prints transcripts as JSON
 * on stdout in the export's shape (like sttdump):
 *   {"model": ..., "cues": [{"start_s", "end_s", "text", "words": [{"text", "start_s",
 *   "end_s", "conf"}]}]}
 *
 * Usage:
 *   capdump find MEDIA            {"sidecar": PATH or null}
 *   capdump load FILE             a sidecar file (vt_captions_load_file)
 *   capdump stream MEDIA          the embedded text subtitle stream
 *   capdump import MEDIA          sidecar, else stream (what the stt stage does)
 *   capdump write FORMAT FILE     load FILE, write it as vtt, srt or txt on stdout
 * Exit status 0, 3 when skipped (the reason on stderr), 1 on error (one line on stderr),
 * 2 on bad usage.
 */
#include "base/util.h"
#include "captions/captions.h"

#include <jansson.h>
#include <libavutil/log.h>
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

static void print_json(json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(1) | JSON_ENSURE_ASCII);

    puts(s ? s : "null");
    free(s);
    json_decref(j);
}

static int usage(void)
{
    fprintf(stderr, "usage: capdump find|load|stream|import FILE\n"
                    "       capdump write vtt|srt|txt FILE\n");
    return 2;
}

int main(int argc, char **argv)
{
    struct vt_transcript t = {0};
    char err[1024] = "";
    const char *cmd = argc > 1 ? argv[1] : "";
    int rc;

    /* errors are reported once, by the library's message, as the CLI does */
    av_log_set_level(AV_LOG_QUIET);
    if (argc == 3 && !strcmp(cmd, "find")) {
        char *path = NULL;

        vt_captions_find_sidecar(argv[2], &path);
        print_json(json_pack("{s:s?}", "sidecar", path));
        free(path);
        return 0;
    }
    if (argc == 3 && !strcmp(cmd, "load"))
        rc = vt_captions_load_file(argv[2], &t, err, sizeof(err));
    else if (argc == 3 && !strcmp(cmd, "stream"))
        rc = vt_captions_from_stream(argv[2], &t, err, sizeof(err));
    else if (argc == 3 && !strcmp(cmd, "import"))
        rc = vt_captions_import(argv[2], &t, err, sizeof(err));
    else if (argc == 4 && !strcmp(cmd, "write"))
        rc = vt_captions_load_file(argv[3], &t, err, sizeof(err));
    else
        return usage();
    if (rc) {
        fprintf(stderr, "capdump: %s\n", err);
        return rc == VT_SKIP ? 3 : 1;
    }
    if (!strcmp(cmd, "write")) {
        struct vt_sb sb = {0};

        rc = vt_captions_write(&t, argv[2], &sb);
        if (rc)
            fprintf(stderr, "capdump: '%s': unknown format\n", argv[2]);
        else
            fwrite(sb.buf, 1, sb.len, stdout);
        vt_sb_release(&sb);
    } else {
        print_json(transcript_json(&t));
    }
    vt_transcript_release(&t);
    return rc ? 1 : 0;
}
