/*
 * kfdump: run the keyframe stage on one media file and print the result as JSON on
 * stdout, in the shape of the export's shots[] and frames[] so that score_cuts.py
 * reads both. Peak memory and wall time go to stderr for the benchmark.
 *   kfdump FILE OUTDIR
 */
#include "base/util.h"
#include "visual/keyframe.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

int main(int argc, char **argv)
{
    struct vt_kf_result res;
    struct rusage ru;
    char err[512] = "";
    double t0;
    int rc;

    if (argc != 3) {
        fprintf(stderr, "usage: kfdump FILE OUTDIR\n");
        return 2;
    }
    t0 = vt_monotonic_s();
    rc = vt_keyframe_run(argv[1], argv[2], &res, NULL, NULL, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "kfdump: %s (%d)\n", err, rc);
        return rc == 1 ? 3 : 1;
    }
    printf("{\"model\": ");
    json_str(res.model);
    printf(", \"duration_s\": %.6f,\n \"shots\": [\n", res.duration_s);
    for (size_t i = 0; i < res.n_shots; i++) {
        const struct vt_kf_shot *s = &res.shots[i];

        printf("  {\"index\": %zu, \"start_s\": %.6f, \"end_s\": %.6f, \"keyframes_captured\": %d, "
               "\"keyframes_kept\": %d, \"transition\": ",
               i, s->start_s, s->end_s, s->captured, s->kept);
        if (s->transition)
            printf("{\"kind\": \"%s\", \"start_s\": %.6f, \"end_s\": %.6f}", s->transition,
                   s->trans_start_s, s->trans_end_s);
        else
            printf("null");
        printf("}%s\n", i + 1 < res.n_shots ? "," : "");
    }
    printf(" ],\n \"frames\": [\n");
    for (size_t i = 0; i < res.n_frames; i++) {
        const struct vt_kf_frame *x = &res.frames[i];

        printf("  {\"index\": %d, \"t_s\": %.6f, \"frame_no\": %lld, \"shot\": %d, \"state\": "
               "\"%s\", \"duplicate_of\": ",
               x->index, x->t_s, (long long)x->frame_no, x->shot,
               x->duplicate_of >= 0 ? "skipped" : "done");
        if (x->duplicate_of >= 0)
            printf("%d", x->duplicate_of);
        else
            printf("null");
        printf(", \"sharpness\": %.2f, \"bytes\": %lld, \"file\": ", x->sharpness,
               (long long)x->bytes);
        json_str(x->file);
        printf(", \"width\": %d, \"height\": %d, \"phash\": \"%016llx\"}%s\n", x->width, x->height,
               (unsigned long long)x->phash, i + 1 < res.n_frames ? "," : "");
    }
    printf(" ]}\n");
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr, "kfdump: %.3f s, max rss %ld kB\n", vt_monotonic_s() - t0, ru.ru_maxrss);
    vt_kf_result_release(&res);
    return 0;
}
