/*
 * vidtheque migrate --to URL|sqlite: the library's catalog moved between SQLite and
 * PostgreSQL (lib/run/migrate.c: copied, proven by every video's export document, and only
 * then named in the config).
 */
#include "cli/cli.h"
#include "core/library.h"
#include "run/migrate.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void progress(void *user, size_t done, size_t total, const char *id)
{
    (void)user;
    if (!cli_opts.quiet)
        fprintf(stderr, "\rcopied %zu of %zu videos (%s)", done, total, id);
    if (!cli_opts.quiet && done == total)
        fputc('\n', stderr);
}

static int own_option(int c, const char *arg, void *user)
{
    if (c != 't')
        return -1;
    *(const char **)user = arg;
    return 0;
}

int cmd_migrate(int argc, char **argv)
{
    static const struct option longs[] = {{"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"to", required_argument, NULL, 't'},
                                          {0}};
    struct vt_library *lib;
    const char *to = NULL;
    char err[1024];
    size_t videos = 0;
    int rc = cli_parse("migrate", argc, argv, "L:q", longs, own_option, &to);

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("migrate", "unexpected argument '%s'", argv[optind]);
    if (!to)
        return cli_usage_error("migrate", "where to? --to postgresql://... or --to sqlite");
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    if (vt_library_migrate(lib, to, progress, NULL, &videos, err, sizeof(err))) {
        rc = cli_error("migrate: %s", err);
    } else {
        printf("%zu %s copied and verified; the library's catalog is now %s\n", videos,
               videos == 1 ? "video" : "videos",
               strcmp(to, "sqlite") ? "in PostgreSQL" : "library.db");
        if (getenv("VIDTHEQUE_DB"))
            fprintf(stderr, "vidtheque: note: VIDTHEQUE_DB is set and overrides the config\n");
    }
    vt_library_close(lib);
    return rc;
}
