/*
 * ls: one row per video, tab-separated, fields escaped ('help ls').
 */
#include "base/util.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>

static int print_row(void *user, const struct vt_video_summary *v)
{
    char dur[32];
    /* one row per video whatever its title holds: fields escaped, see 'help ls' */
    const char *field[] = {v->id, v->title, dur, v->index_state, v->data_status};

    vt_fmt_duration(dur, sizeof(dur), v->duration_s);
    for (size_t i = 0; i < sizeof(field) / sizeof(field[0]); i++) {
        if (i)
            fputc('\t', stdout);
        cli_put_field(stdout, field[i]);
    }
    fputc('\n', stdout);
    return 0;
}

int cmd_ls(int argc, char **argv)
{
    struct vt_library *lib;
    int rc = cli_parse("ls", argc, argv, "L:q", cli_no_long, NULL, NULL);

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("ls", "unexpected argument '%s'", argv[optind]);
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    rc = vt_list(lib, print_row, NULL) ? cli_error("%s", vt_errmsg(lib)) : EXIT_OK;
    vt_library_close(lib);
    return rc;
}
