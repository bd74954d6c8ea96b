/*
 * Driver for bench/ocr_bench.sh: times vt_ocr_new plus vt_ocr_run over the image files
 * given on the command line, as the ocr stage would run them, and prints one line of
 * key=value pairs (per_frame_ms counts engine creation too, as the tesseract command's
 * time counts its start-up). Usage: ocr_bench THREADS IMAGE...
 */
#include "ocr.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    struct vt_ocr *ocr = NULL;
    struct vt_ocr_page *pages = NULL;
    size_t n = argc > 2 ? (size_t)argc - 2 : 0, n_lines = 0;
    char err[512] = "";
    double t0, t1, t2;
    long threads;
    int rc = 1;

    if (argc < 3 || vt_parse_long(argv[1], 0, 256, &threads)) {
        fprintf(stderr, "usage: ocr_bench THREADS IMAGE...\n");
        goto out;
    }
    pages = vt_xcalloc(n, sizeof(*pages));
    t0 = vt_monotonic_s();
    ocr = vt_ocr_new((int)threads, "eng", err, sizeof(err));
    if (!ocr) {
        fprintf(stderr, "ocr_bench: %s\n", err);
        goto out;
    }
    t1 = vt_monotonic_s();
    if (vt_ocr_run(ocr, (const char *const *)argv + 2, n, pages, NULL, NULL, err, sizeof(err))) {
        fprintf(stderr, "ocr_bench: %s\n", err);
        goto out;
    }
    t2 = vt_monotonic_s();
    for (size_t i = 0; i < n; i++)
        n_lines += pages[i].n_lines;
    printf("threads=%ld frames=%zu lines=%zu init_ms=%.1f run_ms=%.1f per_frame_ms=%.1f\n", threads,
           n, n_lines, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t2 - t0) * 1e3 / (double)n);
    rc = 0;
out:
    for (size_t i = 0; pages && i < n; i++)
        vt_ocr_page_release(&pages[i]);
    free(pages);
    vt_ocr_free(ocr);
    return rc;
}
