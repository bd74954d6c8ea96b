/*
 * `show ID`: a text rendering of everything the video page shows, in the same
 * order (metadata and state, scene timeline, what was stored, provenance, frames
 * with what the machine read). It renders the export document, so the page, the
 * export and this text can never disagree about the facts.
 */
#include "base/util.h"
#include "cli/cli.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Print text the video controls, made safe for the terminal. */
static void put_safe(const char *s)
{
    cli_put_safe(stdout, s);
}

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static double jnum(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static void fmt_t(char *buf, size_t n, double s)
{
    vt_fmt_duration(buf, n, s);
}

/* "2026-08-11T11:04:05Z" -> "2026-08-11 11:04" */
static void put_when(const char *iso)
{
    char when[32];

    if (!iso || strlen(iso) < 16) {
        fputs("-", stdout);
        return;
    }
    snprintf(when, sizeof(when), "%.10s %.5s", iso, iso + 11);
    put_safe(when);
}

static void put_took(double s)
{
    if (s >= 60)
        printf("%dm %02ds", (int)(s / 60), (int)fmod(s, 60));
    else if (s >= 10)
        printf("%.0fs", s);
    else
        printf("%.1fs", s);
}

static void put_bytes(double b)
{
    if (b >= 1e9)
        printf("%.1f GB", b / 1e9);
    else if (b >= 1e6)
        printf("%.1f MB", b / 1e6);
    else if (b >= 1e3)
        printf("%.1f kB", b / 1e3);
    else
        printf("%.0f B", b);
}

/* The source's page at second t, when the video came from a URL ("" otherwise). */
static void source_at(const json_t *doc, double t, char *buf, size_t n)
{
    const json_t *src = json_object_get(doc, "source");

    buf[0] = '\0';
    if (vt_source_url_at(jstr(src, "page_url"), jstr(src, "extractor"), t, buf, n))
        buf[0] = '\0';
}

static void render_transcript(const json_t *doc)
{
    const json_t *cues = json_object_get(doc, "cues"), *v;
    size_t i, words = 0, chars = 0;
    char a[32];

    json_array_foreach(cues, i, v)
    {
        const char *t = jstr(v, "text");
        int in_word = 0;

        for (const char *p = t ? t : ""; *p; p++) {
            if ((*p & 0xc0) != 0x80)
                chars++;
            if (*p == ' ' || *p == '\n')
                in_word = 0;
            else if (!in_word) {
                in_word = 1;
                words++;
            }
        }
    }
    printf("\nTranscript\n  %zu cues, %zu words, %zu characters\n", json_array_size(cues), words,
           chars);
    json_array_foreach(cues, i, v)
    {
        char link[4200];

        fmt_t(a, sizeof(a), jnum(v, "start_s"));
        printf("  [%s] ", a);
        put_safe(jstr(v, "text"));
        source_at(doc, jnum(v, "start_s"), link, sizeof(link));
        if (link[0]) {
            fputs("  ", stdout);
            put_safe(link);
        }
        fputc('\n', stdout);
    }
}

/* "warning:" for each stage done with a cut note: a bound cut what it stored. */
static void render_cuts(const json_t *doc)
{
    const json_t *s;
    size_t i;

    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        if (!jstr(s, "state") || strcmp(jstr(s, "state"), "done") || !jstr(s, "error"))
            continue;
        fputs("warning: not all of it is indexed (", stdout);
        put_safe(jstr(s, "name"));
        fputs("): ", stdout);
        put_safe(jstr(s, "error"));
        fputc('\n', stdout);
    }
}

/* Title, state, channel, duration, language, and where the video came from. */
static void render_header(const json_t *doc)
{
    char a[32];

    put_safe(jstr(doc, "title"));
    printf("\n%s  index_state %s  data_status %s\n", jstr(doc, "id"), jstr(doc, "index_state"),
           jstr(doc, "data_status"));
    render_cuts(doc);
    put_safe(jstr(doc, "channel") ? jstr(doc, "channel") : "-");
    fmt_t(a, sizeof(a), jnum(doc, "duration_s"));
    fputs(" · published ", stdout);
    put_safe(jstr(doc, "published") ? jstr(doc, "published") : "-");
    printf(" · %s · ", a);
    put_safe(jstr(doc, "language") ? jstr(doc, "language") : "-");
    fputs(" · indexed ", stdout);
    put_when(jstr(doc, "indexed_at"));
    fputs("\nsource: ", stdout);
    put_safe(jstr(json_object_get(doc, "source"), "kind"));
    fputc(' ', stdout);
    if (jstr(json_object_get(doc, "source"), "url")) {
        char link[4200];

        put_safe(jstr(json_object_get(doc, "source"), "url"));
        fputs("\nmedia: ", stdout);
        put_safe(jstr(json_object_get(doc, "source"), "path")
                     ? jstr(json_object_get(doc, "source"), "path")
                 : json_is_true(json_object_get(json_object_get(doc, "source"), "keep_media"))
                     ? "not downloaded yet"
                     : "not kept (--no-keep-media)");
        source_at(doc, 0, link, sizeof(link));
        if (link[0]) {
            fputs("\nopen on the source: ", stdout);
            put_safe(jstr(json_object_get(doc, "source"), "page_url"));
        }
    } else {
        put_safe(jstr(json_object_get(doc, "source"), "path"));
    }
}

/* The shots, each with its keyframes and the transition that led into it. */
static void render_shots(const json_t *doc)
{
    const json_t *v;
    size_t i;
    char a[32], b[32];

    fputs("\n\nScene timeline\n", stdout);
    json_array_foreach(json_object_get(doc, "shots"), i, v)
    {
        const json_t *tr = json_object_get(v, "transition");
        const char *kind = json_string_value(json_object_get(tr, "kind"));

        fmt_t(a, sizeof(a), jnum(v, "start_s"));
        fmt_t(b, sizeof(b), jnum(v, "end_s"));
        printf("  Shot %zu, %s to %s, %lld of %lld keyframes kept", i, a, b,
               json_integer_value(json_object_get(v, "keyframes_kept")),
               json_integer_value(json_object_get(v, "keyframes_captured")));
        /* the kind is one of the export's fixed names, never text from the video */
        if (kind && !strcmp(kind, "cut"))
            fputs(", after a cut", stdout);
        else if (kind)
            printf(", after a %s %.2f-%.2f s", !strcmp(kind, "fade") ? "fade" : "dissolve",
                   jnum(tr, "start_s"), jnum(tr, "end_s"));
        putchar('\n');
    }
    printf("%zu shot(s).\n", json_array_size(json_object_get(doc, "shots")));
}

/* Footage this video shares with others (nothing when it shares none). */
static void render_reuse(const json_t *doc)
{
    const json_t *v;
    size_t i;
    char a[32], b[32], c[32], d[32];

    if (!json_array_size(json_object_get(doc, "reuse")))
        return;
    fputs("\nThe same footage in other videos\n", stdout);
    json_array_foreach(json_object_get(doc, "reuse"), i, v)
    {
        fmt_t(a, sizeof(a), jnum(v, "start_s"));
        fmt_t(b, sizeof(b), jnum(v, "end_s"));
        fmt_t(c, sizeof(c), jnum(v, "other_start_s"));
        fmt_t(d, sizeof(d), jnum(v, "other_end_s"));
        printf("  %s-%s also appears in ", a, b);
        put_safe(jstr(v, "video_id"));
        printf(" at %s-%s (%lld frame(s), similarity %.3f) ", c, d,
               json_integer_value(json_object_get(v, "frames")), jnum(v, "similarity"));
        put_safe(jstr(v, "title"));
        fputc('\n', stdout);
    }
}

/* The counts of what the stages stored. */
static void render_stored(const json_t *doc)
{
    const json_t *stored = json_object_get(doc, "stored");

    fputs("\nWhat was stored\n", stdout);
    printf("  cues            %lld", json_integer_value(json_object_get(stored, "cues")));
    if (jstr(stored, "cues_source")) {
        fputs(" from ", stdout);
        put_safe(jstr(stored, "cues_source"));
    }
    fputc('\n', stdout);
    printf("  chunks          %lld from %lld cues\n",
           json_integer_value(json_object_get(stored, "chunks")),
           json_integer_value(json_object_get(stored, "cues")));
    printf("  text vectors    %lld\n", json_integer_value(json_object_get(stored, "text_vectors")));
    printf("  keyframes       %lld kept of %lld captured\n",
           json_integer_value(json_object_get(stored, "keyframes_kept")),
           json_integer_value(json_object_get(stored, "keyframes_captured")));
    printf("  frames with text %lld, %lld lines read\n",
           json_integer_value(json_object_get(stored, "frames_with_text")),
           json_integer_value(json_object_get(stored, "ocr_lines")));
    printf("  chapters        %lld from the ",
           json_integer_value(json_object_get(stored, "chapters")));
    put_safe(jstr(stored, "chapters_source") ? jstr(stored, "chapters_source") : "container");
    fputs(jstr(stored, "chapters_source") && strstr(jstr(stored, "chapters_source"), "metadata")
              ? "\n"
              : " metadata\n",
          stdout);
    fputs("  keyframe bytes  ", stdout);
    put_bytes(jnum(stored, "keyframe_bytes"));
    printf("\n  word timings on %lld cues\n",
           json_integer_value(json_object_get(stored, "word_timed_cues")));
}

/* Each stage: its state, model, when it started, how long it took, its error. */
static void render_provenance(const json_t *doc)
{
    const json_t *v;
    size_t i;

    fputs("\nProvenance\n", stdout);
    printf("  %-10s %-8s %-44s %-17s %s\n", "stage", "state", "model", "started", "took");
    json_array_foreach(json_object_get(doc, "stages"), i, v)
    {
        printf("  %-10s %-8s ", jstr(v, "name"), jstr(v, "state"));
        put_safe(jstr(v, "model") ? jstr(v, "model") : "-");
        printf("%*s ", (int)(jstr(v, "model") ? 44 - fmin(44, strlen(jstr(v, "model"))) : 43), "");
        put_when(jstr(v, "started_at"));
        fputs(jstr(v, "started_at") ? " " : "                ", stdout);
        if (strcmp(jstr(v, "state"), "queued"))
            put_took(jnum(v, "took_s"));
        fputc('\n', stdout);
        if (jstr(v, "error")) {
            fputs("             ", stdout);
            put_safe(jstr(v, "error"));
            fputc('\n', stdout);
        }
    }
}

/* One keyframe: skipped as a duplicate, or the lines OCR read on it. */
static void render_frame(const json_t *v)
{
    const json_t *ocr = json_object_get(v, "ocr"), *line;
    size_t k, n_noise = 0;
    char a[32];

    fmt_t(a, sizeof(a), jnum(v, "t_s"));
    if (!strcmp(jstr(v, "state"), "skipped")) {
        printf("  %s #%lld skipped (frame %lld)\n    shot %lld · duplicate of #%lld\n", a,
               json_integer_value(json_object_get(v, "index")),
               json_integer_value(json_object_get(v, "frame_no")),
               json_integer_value(json_object_get(v, "shot")),
               json_integer_value(json_object_get(v, "duplicate_of")));
        return;
    }
    /* noise lines (below the floor, not searchable) are listed, marked, not counted */
    json_array_foreach(ocr, k, line) n_noise += json_is_true(json_object_get(line, "noise"));
    printf("  %s #%lld done %zu line(s)", a, json_integer_value(json_object_get(v, "index")),
           json_array_size(ocr) - n_noise);
    if (n_noise)
        printf(" and %zu noise", n_noise);
    printf(" (frame %lld)\n    shot %lld · sharpness %.1f\n",
           json_integer_value(json_object_get(v, "frame_no")),
           json_integer_value(json_object_get(v, "shot")), jnum(v, "sharpness"));
    json_array_foreach(ocr, k, line)
    {
        int noise = json_is_true(json_object_get(line, "noise"));

        printf("    %zu. %s", k + 1, noise ? "~ " : "");
        put_safe(jstr(line, "text"));
        printf("  %.2f%s\n", jnum(line, "conf"), noise ? "  noise" : "");
    }
}

/* Everything but the transcript, in the order of the video page. */
static void render(const json_t *doc)
{
    const json_t *v;
    size_t i;

    render_header(doc);
    render_shots(doc);
    render_reuse(doc);
    render_stored(doc);
    render_provenance(doc);
    fputs("\nFrames, and what the machine read\n", stdout);
    json_array_foreach(json_object_get(doc, "frames"), i, v) render_frame(v);
}

int cmd_show(int argc, char **argv)
{
    static const struct option longs[] = {{"library", required_argument, NULL, 'L'},
                                          {NULL, 0, NULL, 0}};
    struct vt_library *lib;
    json_error_t jerr;
    json_t *doc;
    char *text;
    int c, rc;

    struct cli_opt g;

    cli_opt_init(&g, "show", argc, argv, "L:", longs);
    while ((c = cli_opt_next(&g)) != -1) {
        if (c != 'L')
            return EXIT_USAGE;
        cli_opts.library = optarg;
    }
    if (optind != argc - 1)
        return cli_usage_error("show", "which video?");
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    if (vt_export_json(lib, argv[optind], &text)) {
        rc = cli_error("%s", vt_errmsg(lib));
        vt_library_close(lib);
        return rc;
    }
    vt_library_close(lib);
    doc = json_loads(text, 0, &jerr);
    free(text);
    if (!doc)
        return cli_error("cannot read the video's document: %s", jerr.text);
    render(doc);
    render_transcript(doc);
    json_decref(doc);
    return fflush(stdout) ? cli_error("cannot write") : EXIT_OK;
}
