/*
 * jobs: what the library's queue holds (lib/run/jobs.c): stages by state, the running
 * ones by worker, the failures. docs/ARCHITECTURE.md, "Job queue".
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>

struct jobs_flags {
    int failed, json;
};

static int jobs_option(int c, const char *arg, void *user)
{
    struct jobs_flags *f = user;

    (void)arg;
    if (c == 'f')
        f->failed = 1;
    else if (c == 'j')
        f->json = 1;
    else
        return -1;
    return 0;
}

int cmd_jobs(int argc, char **argv)
{
    static const struct option longs[] = {{"failed", no_argument, NULL, 'f'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct vt_library *lib;
    struct jobs_flags f = {0, 0};
    int rc = cli_parse("jobs", argc, argv, "L:q", longs, jobs_option, &f);
    char *out;

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("jobs", "unexpected argument '%s'", argv[optind]);
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    rc = vt_jobs_report(lib, f.failed, f.json, &out);
    if (rc) {
        rc = cli_error("%s", vt_errmsg(lib));
    } else {
        cli_put_text(stdout, out);
        if (f.json)
            fputc('\n', stdout);
        free(out);
        rc = EXIT_OK;
    }
    vt_library_close(lib);
    return rc;
}
