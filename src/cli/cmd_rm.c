/*
 * rm: remove videos, their database rows and their files.
 */
#include "cli/cli.h"

#include <getopt.h>

int cmd_rm(int argc, char **argv)
{
    struct vt_library *lib;
    int rc = cli_parse("rm", argc, argv, "L:q", cli_no_long, NULL, NULL);
    int status = EXIT_OK;

    if (rc)
        return rc;
    if (optind == argc)
        return cli_usage_error("rm", "which video?");
    lib = cli_open_library(0);
    if (!lib)
        return EXIT_ERR;
    for (int i = optind; i < argc; i++)
        if (vt_remove(lib, argv[i]))
            status = cli_error("%s", vt_errmsg(lib));
    vt_library_close(lib);
    return status;
}
