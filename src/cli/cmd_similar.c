/*
 * `similar VIDEO --frame N [--limit K] [--json]`: more like this. The frames of the
 * whole library whose pictures look most like frame N of VIDEO, from the vectors the
 * frame_embed stage stored (vecsearch.h); no model is loaded, so the front binary
 * answers it.
 */
#include "cli/cli.h"
#include "base/util.h"
#include "search/vecsearch.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_similar(int argc, char **argv)
{
    static const struct option longs[] = {{"json", no_argument, NULL, 'j'},
                                          {"limit", required_argument, NULL, 'n'},
                                          {"frame", required_argument, NULL, 'f'},
                                          {"library", required_argument, NULL, 'L'},
                                          {NULL, 0, NULL, 0}};
    struct cli_opt g;
    long frame = -1, limit = 10;
    int json = 0, c, rc;

    cli_opt_init(&g, "similar", argc, argv, "L:jn:f:", longs);
    while ((c = cli_opt_next(&g)) != -1) {
        switch (c) {
        case 'L':
            cli_opts.library = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'n':
            if (cli_parse_long(optarg, 1, VT_SIMILAR_MAX, &limit))
                return cli_opt_bad_value(&g, c, "a number from 1 to 100");
            break;
        case 'f':
            if (cli_parse_long(optarg, 0, 1000000000L, &frame))
                return cli_opt_bad_value(&g, c, "a frame number from 0");
            break;
        default:
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("similar", "one VIDEO id");
    if (frame < 0)
        return cli_usage_error("similar", "--frame N is needed (a frame number from 0)");
    struct vt_library *lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    struct vt_lookalike *s = NULL;
    size_t n = 0;
    char err[512];
    rc = vt_similar_frames(lib, argv[optind], (int)frame, (int)limit, &s, &n, err, sizeof(err));
    if (rc) {
        rc = cli_error("%s", err);
    } else if (json) {
        char *j = vt_lookalike_json(argv[optind], (int)frame, s, n);
        if (isatty(STDOUT_FILENO)) {
            cli_put_text(stdout, j);
            fputc('\n', stdout);
        } else {
            puts(j);
        }
        free(j);
    } else {
        for (size_t i = 0; i < n; i++) {
            char t[32];
            vt_fmt_duration(t, sizeof(t), s[i].t_s);
            printf("%s %s frame %d  %.3f  ", s[i].video_id, t, s[i].frame, s[i].score);
            cli_put_safe(stdout, s[i].title);
            fputc('\n', stdout);
            if (s[i].path) {
                fputs("    ", stdout);
                cli_put_safe(stdout, vt_library_dir(lib));
                fputc('/', stdout);
                cli_put_safe(stdout, s[i].path);
                fputc('\n', stdout);
            }
        }
    }
    if (!rc && fflush(stdout))
        rc = cli_error("cannot write");
    vt_lookalike_free(s, n);
    vt_library_close(lib);
    return rc;
}
