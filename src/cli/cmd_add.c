/*
 * add: register media files or URLs (videos, playlists, channels), then index them here
 * or leave them to the workers (--queue, or a library on PostgreSQL).
 */
#include "cli/added.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct add_args {
    struct vt_add_opts opts;
    const char **info_json; /* --info-json FILE, in order */
    int n_info_json;
    int queue, wait, priority; /* --queue, --wait, --priority N */
};

static int add_opt(int c, const char *arg, void *u)
{
    struct add_args *a = u;
    long n;

    switch (c) {
    case 'S':
        if (strcmp(arg, "auto") && strcmp(arg, "captions") && strcmp(arg, "recognize"))
            return -1;
        a->opts.stt = arg;
        return 0;
    case 'K':
        a->opts.no_keep_media = 1;
        return 0;
    case 'i':
        a->opts.in_place = 1;
        return 0;
    case 'N':
        if (cli_parse_long(arg, 1, 1000000, &n))
            return -1;
        a->opts.limit = (int)n;
        return 0;
    case 'I':
        a->info_json[a->n_info_json++] = arg;
        return 0;
    case 'Q':
        a->queue = 1;
        return 0;
    case 'W':
        a->wait = 1;
        return 0;
    case 'P':
        if (cli_parse_long(arg, -1000000, 1000000, &n))
            return -1;
        a->priority = (int)n;
        return 0;
    }
    return -1;
}

/* add --wait: until every queued video has settled; EXIT_ERR when one is not ok. */
static int wait_queued(struct vt_library *lib, struct cli_added *a)
{
    int status = EXIT_OK;

    if (vt_wait_settled(lib, a->queued, a->n_queued))
        return cli_error("%s", vt_errmsg(lib));
    for (size_t i = 0; i < a->n_queued; i++) {
        char state[16], data[16];

        if (vt_video_state(lib, a->queued[i], state, data) || strcmp(data, "ok"))
            status = EXIT_ERR;
    }
    return status;
}

int cmd_add(int argc, char **argv)
{
    static const struct option longs[] = {{"stt", required_argument, NULL, 'S'},
                                          {"no-keep-media", no_argument, NULL, 'K'},
                                          {"in-place", no_argument, NULL, 'i'},
                                          {"limit", required_argument, NULL, 'N'},
                                          {"info-json", required_argument, NULL, 'I'},
                                          {"queue", no_argument, NULL, 'Q'},
                                          {"wait", no_argument, NULL, 'W'},
                                          {"priority", required_argument, NULL, 'P'},
                                          CLI_FETCH_LONGS,
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct add_args a = {.info_json = calloc((size_t)argc + 1, sizeof(char *))};
    struct cli_added done = {0};
    struct vt_library *lib = NULL;
    int rc = a.info_json ? cli_parse("add", argc, argv, "L:q", longs, add_opt, &a) : EXIT_ERR;
    int status = EXIT_OK;

    if (rc)
        goto out;
    if (optind == argc && !a.n_info_json) {
        rc = cli_usage_error("add", "nothing to add");
        goto out;
    }
    lib = cli_open_library(VT_OPEN_CREATE);
    if (!lib) {
        rc = EXIT_ERR;
        goto out;
    }
    /* a library in PostgreSQL is indexed by its workers, wherever they run */
    done.queue = a.queue || !strcmp(vt_library_backend(lib), "postgresql");
    done.priority = a.priority;
    for (int i = 0; i < a.n_info_json; i++) {
        done.source = a.info_json[i];
        if (vt_add_info_json(lib, a.info_json[i], &a.opts, cli_added_note, &done))
            status = cli_error("%s", vt_errmsg(lib));
        if (cli_added_process(lib, &done))
            status = EXIT_ERR;
    }
    for (int i = optind; i < argc; i++) {
        done.source = argv[i];
        if (vt_is_url(argv[i])) {
            if (vt_add_url(lib, argv[i], &a.opts, cli_added_note, &done))
                status = cli_error("%s", vt_errmsg(lib));
        } else {
            char id[VT_ID_MAX];
            int is_new;

            if (vt_add_file(lib, argv[i], &a.opts, id, &is_new))
                status = cli_error("%s", vt_errmsg(lib));
            else
                cli_added_note(&done, id, is_new);
        }
        if (cli_added_process(lib, &done))
            status = EXIT_ERR;
    }
    if (done.queue && a.wait && wait_queued(lib, &done))
        status = EXIT_ERR;
    rc = status;
out:
    vt_library_close(lib);
    cli_added_release(&done);
    free(a.info_json);
    return rc;
}
