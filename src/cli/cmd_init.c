/*
 * init: an empty library, its database in DIR (SQLite) or, with --db, on a PostgreSQL
 * server.
 */
#include "base/util.h"
#include "cli/cli.h"
#include "model/stage_config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int init_opt(int c, const char *arg, void *u)
{
    if (c != 'D')
        return -1;
    *(const char **)u = arg;
    return 0;
}

/*
 * init --db URL: the library's database is on PostgreSQL. The URL goes into DIR/config
 * (db) before the library opens (which creates the schema there); a directory that
 * already has a library on SQLite, or on another database, is refused: moving a
 * library is not a change of config.
 */
static int init_db(const char *db)
{
    char dir[4096], err[1024], *path, *old = NULL;
    struct vt_config *cf = NULL;
    int rc;

    if (vt_config_check(VT_KEY(DB), db, err, sizeof(err)))
        return cli_usage_error("init", "%s", err);
    if (cli_run_full)
        return cli_run_full(0, NULL); /* the front links no libpq */
    if (vt_library_default_dir(cli_opts.library, dir, sizeof(dir)))
        return cli_error("cannot tell where the library is: use -L DIR or set VIDTHEQUE_LIBRARY");
    path = vt_xasprintf("%s/library.db", dir);
    rc = access(path, F_OK);
    free(path);
    if (!rc)
        return cli_error("library '%s' already has its database in library.db (SQLite)", dir);
    if (vt_mkdir_p(dir, err, sizeof(err)) || vt_config_load(dir, &cf, err, sizeof(err)))
        return cli_error("%s", err);
    old = vt_xstrdup_or_null(vt_config_get(cf, VT_KEY(DB)));
    if (old && strcmp(old, db))
        rc = cli_error("library '%s' already has its database elsewhere (its config's db)", dir);
    else if (!old && vt_config_set(cf, VT_KEY(DB), db, err, sizeof(err)))
        rc = cli_error("%s", err);
    else
        rc = EXIT_OK;
    free(old);
    vt_config_free(cf);
    return rc;
}

int cmd_init(int argc, char **argv)
{
    static const struct option longs[] = {{"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"db", required_argument, NULL, 'D'},
                                          {NULL, 0, NULL, 0}};
    struct vt_library *lib;
    const char *db = NULL;
    int rc = cli_parse("init", argc, argv, "L:q", longs, init_opt, &db);

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("init", "unexpected argument '%s'", argv[optind]);
    if (db) {
        rc = init_db(db);
        if (rc)
            return rc;
    }
    lib = cli_open_library(VT_OPEN_CREATE);
    if (!lib)
        return EXIT_ERR;
    if (!cli_opts.quiet)
        cli_info("library ready in %s", vt_library_dir(lib));
    vt_library_close(lib);
    return EXIT_OK;
}
