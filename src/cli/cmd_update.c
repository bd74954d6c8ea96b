/*
 * update: re-check every playlist or channel that was added, add what is new, then
 * finish what is unfinished (what cron runs).
 */
#include "cli/added.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

int cmd_update(int argc, char **argv)
{
    static const struct option longs[] = {CLI_FETCH_LONGS,
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct cli_added done = {0};
    struct vt_library *lib;
    int rc = cli_parse("update", argc, argv, "L:q", longs, NULL, NULL), status = EXIT_OK;

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("update", "unexpected argument '%s'", argv[optind]);
    lib = cli_open_library(0);
    if (!lib)
        return EXIT_ERR;
    /* on PostgreSQL what is new is left to the workers, as add does */
    done.queue = !strcmp(vt_library_backend(lib), "postgresql");
    if (vt_update(lib, cli_added_note, &done))
        status = cli_error("%s", vt_errmsg(lib));
    if (cli_added_process(lib, &done))
        status = EXIT_ERR;
    /* what cron runs: also finish what is unfinished, retrying downloads that are due */
    {
        int n = 0;

        if (vt_resume(lib, &n))
            status = cli_error("%s", vt_errmsg(lib));
    }
    vt_library_close(lib);
    cli_added_release(&done);
    return status;
}
