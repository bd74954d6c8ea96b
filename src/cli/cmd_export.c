/*
 * export: a video's document (JSON) or its subtitles (vtt, srt, txt), for other tools.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int export_opt(int c, const char *arg, void *u)
{
    if (c != 'f')
        return -1;
    *(const char **)u = arg;
    return 0;
}

int cmd_export(int argc, char **argv)
{
    static const struct option longs[] = {{"format", required_argument, NULL, 'f'},
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    const char *format = "json";
    struct vt_library *lib;
    char *doc;
    int rc = cli_parse("export", argc, argv, "L:qf:", longs, export_opt, &format);

    if (rc)
        return rc;
    if (optind != argc - 1)
        return cli_usage_error("export", "which video?");
    if (strcmp(format, "json") && strcmp(format, "vtt") && strcmp(format, "srt") &&
        strcmp(format, "txt"))
        return cli_usage_error("export", "'%s' is not a format (json, vtt, srt, txt)", format);
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    if (strcmp(format, "json") ? vt_export_subtitles(lib, argv[optind], format, &doc)
                               : vt_export_json(lib, argv[optind], &doc)) {
        rc = cli_error("%s", vt_errmsg(lib));
    } else {
        /* a document is data for other tools, written as it is; on a terminal a person
         * reads it, and what the video controls must not drive the terminal */
        if (isatty(STDOUT_FILENO))
            cli_put_text(stdout, doc);
        else
            fputs(doc, stdout);
        if (!strcmp(format, "json"))
            fputc('\n', stdout);
        free(doc);
        rc = fflush(stdout) ? cli_error("cannot write the export") : EXIT_OK;
    }
    vt_library_close(lib);
    return rc;
}
