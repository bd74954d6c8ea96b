/*
 * check: the database's integrity and the frame files.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>

int cmd_check(int argc, char **argv)
{
    struct vt_library *lib;
    int problems = 0, rc = cli_parse("check", argc, argv, "L:q", cli_no_long, NULL, NULL);

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("check", "unexpected argument '%s'", argv[optind]);
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    if (vt_check(lib, &problems))
        rc = cli_error("%s", vt_errmsg(lib));
    else if (problems)
        rc = cli_error("%d problem(s) found", problems);
    else
        printf("ok\n");
    vt_library_close(lib);
    return rc;
}
