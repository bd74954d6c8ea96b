/*
 * Driver for bench/ocr_bench.sh and bench/ocr_small_bench.sh: times vt_ocr_new plus
 * vt_ocr_run over the image files given on the command line, as the ocr stage would run
 * them, and prints one line of key=value pairs (per_frame_ms counts engine creation too, as
 * the tesseract command's time counts its start-up; run_cpu_ms is the process's CPU time
 * over vt_ocr_run alone, all threads). --no-small turns the small-text pass
 * off, --no-dark-parts the inversion of a light frame's dark parts; --dump FILE writes every
 * line read as JSON ({"files": [{"file", "ocr": [{"text", "conf", "box", "noise"}]}]}, the
 * export's shape) for scoring.
 *
 * Usage: ocr_bench [--no-small] [--no-dark-parts] [--dump FILE] THREADS IMAGE...
 */
#include "base/util.h"
#include "visual/ocr.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The process's CPU time in seconds, all threads. */
static double cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int dump(const char *path, char **files, const struct vt_ocr_page *pages, size_t n)
{
    json_t *doc = json_object(), *arr = json_array();
    int rc;

    for (size_t i = 0; i < n; i++) {
        json_t *f = json_object(), *lines = json_array();

        for (size_t k = 0; k < pages[i].n_lines; k++) {
            const struct vt_ocr_line *l = &pages[i].lines[k];

            json_array_append_new(lines, json_pack("{s:s, s:f, s:[i,i,i,i], s:b}", "text", l->text,
                                                   "conf", l->conf, "box", l->box[0], l->box[1],
                                                   l->box[2], l->box[3], "noise", l->noise));
        }
        json_object_set_new(f, "file", json_string(files[i]));
        json_object_set_new(f, "ocr", lines);
        json_array_append_new(arr, f);
    }
    json_object_set_new(doc, "files", arr);
    rc = json_dump_file(doc, path, JSON_INDENT(1));
    json_decref(doc);
    return rc;
}

int main(int argc, char **argv)
{
    struct vt_ocr *ocr = NULL;
    struct vt_ocr_page *pages = NULL;
    const char *dump_path = NULL;
    size_t n, n_lines = 0, n_noise = 0;
    char err[512] = "";
    double t0, t1, t2, c1, c2;
    long threads;
    int rc = 1, small = 1, dark_parts = 1, a = 1;

    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--no-small"))
            small = 0;
        else if (!strcmp(argv[a], "--no-dark-parts"))
            dark_parts = 0;
        else if (!strcmp(argv[a], "--dump") && a + 1 < argc)
            dump_path = argv[++a];
        else
            break;
    }
    if (argc - a < 2 || vt_parse_long(argv[a], 0, 256, &threads)) {
        fprintf(stderr,
                "usage: ocr_bench [--no-small] [--no-dark-parts] [--dump FILE] THREADS IMAGE...\n");
        goto out;
    }
    n = (size_t)(argc - a - 1);
    pages = vt_xcalloc(n, sizeof(*pages));
    t0 = vt_monotonic_s();
    ocr = vt_ocr_new((int)threads, "eng", NULL, err, sizeof(err));
    if (!ocr) {
        fprintf(stderr, "ocr_bench: %s\n", err);
        goto out;
    }
    vt_ocr_set_small_text(ocr, small);
    vt_ocr_set_dark_parts(ocr, dark_parts);
    t1 = vt_monotonic_s();
    c1 = cpu_s();
    if (vt_ocr_run(ocr, (const char *const *)argv + a + 1, n, pages, NULL, NULL, err,
                   sizeof(err))) {
        fprintf(stderr, "ocr_bench: %s\n", err);
        goto out;
    }
    t2 = vt_monotonic_s();
    c2 = cpu_s();
    for (size_t i = 0; i < n; i++) {
        n_lines += pages[i].n_lines;
        for (size_t k = 0; k < pages[i].n_lines; k++)
            n_noise += pages[i].lines[k].noise;
    }
    if (dump_path && dump(dump_path, argv + a + 1, pages, n)) {
        fprintf(stderr, "ocr_bench: '%s': cannot write\n", dump_path);
        goto out;
    }
    printf("threads=%ld small=%d dark_parts=%d frames=%zu lines=%zu noise=%zu init_ms=%.1f "
           "run_ms=%.1f run_cpu_ms=%.1f per_frame_ms=%.1f\n",
           threads, small, dark_parts, n, n_lines, n_noise, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
           (c2 - c1) * 1e3, (t2 - t0) * 1e3 / (double)n);
    rc = 0;
out:
    for (size_t i = 0; pages && i < n; i++)
        vt_ocr_page_release(&pages[i]);
    free(pages);
    vt_ocr_free(ocr);
    return rc;
}
