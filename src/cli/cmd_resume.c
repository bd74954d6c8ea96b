/*
 * resume: finish whatever interrupted runs left; retry failed downloads when due.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>

int cmd_resume(int argc, char **argv)
{
    static const struct option longs[] = {CLI_FETCH_LONGS,
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct vt_library *lib;
    int n = 0, rc = cli_parse("resume", argc, argv, "L:q", longs, NULL, NULL);

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("resume", "unexpected argument '%s'", argv[optind]);
    lib = cli_open_library(0);
    if (!lib)
        return EXIT_ERR;
    rc = vt_resume(lib, &n) ? cli_error("%s", vt_errmsg(lib)) : EXIT_OK;
    if (!rc && !cli_opts.quiet)
        fprintf(stderr, "%d video(s) resumed\n", n);
    vt_library_close(lib);
    return rc;
}
