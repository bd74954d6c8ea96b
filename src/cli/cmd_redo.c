/*
 * redo: re-run a stage (and the stages that depend on it) of some videos or of all.
 */
#include "base/util.h"
#include "cli/cli.h"

#include <getopt.h>
#include <string.h>

struct redo_args {
    const char *stage;
    int all;
};

static int redo_opt(int c, const char *arg, void *u)
{
    struct redo_args *r = u;

    if (c == 'a') {
        r->all = 1;
        return 0;
    }
    if (c != 's')
        return -1;
    r->stage = arg;
    return 0;
}

static int collect_id(void *user, const struct vt_video_summary *v)
{
    struct vt_sb *ids = user;

    vt_sb_adds(ids, v->id);
    vt_sb_addc(ids, '\n');
    return 0;
}

/* Re-run the stage of one video; EXIT_ERR when it is not ok afterwards (as add: a stage
 * that failed was reported as it happened). */
static int redo_one(struct vt_library *lib, const char *id, const char *stage)
{
    char state[16], data[16];

    if (vt_redo(lib, id, stage))
        return cli_error("%s", vt_errmsg(lib));
    if (vt_video_state(lib, id, state, data) || strcmp(data, "ok"))
        return EXIT_ERR;
    return EXIT_OK;
}

int cmd_redo(int argc, char **argv)
{
    static const struct option longs[] = {{"stage", required_argument, NULL, 's'},
                                          {"all", no_argument, NULL, 'a'},
                                          CLI_FETCH_LONGS,
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct redo_args r = {0};
    struct vt_library *lib;
    int rc = cli_parse("redo", argc, argv, "L:qs:", longs, redo_opt, &r), status = EXIT_OK;

    if (rc)
        return rc;
    if (r.all ? optind != argc : optind == argc)
        return cli_usage_error("redo", r.all ? "--all or IDs, not both" : "which video?");
    if (!r.stage)
        return cli_usage_error("redo", "which stage? (--stage NAME)");
    {
        const char *const *names = vt_stage_names();
        int known = 0;

        for (int i = 0; names[i]; i++)
            known |= !strcmp(names[i], r.stage);
        if (!known)
            return cli_usage_error("redo", "'%s' is not a stage", r.stage);
    }
    lib = cli_open_library(0);
    if (!lib)
        return EXIT_ERR;
    if (r.all) {
        struct vt_sb ids = {0};
        if (vt_list(lib, collect_id, &ids))
            status = cli_error("%s", vt_errmsg(lib));
        for (char *id = ids.buf, *nl; id && (nl = strchr(id, '\n')); id = nl + 1) {
            *nl = '\0';
            if (redo_one(lib, id, r.stage))
                status = EXIT_ERR;
        }
        vt_sb_release(&ids);
    } else {
        for (int i = optind; i < argc; i++)
            if (redo_one(lib, argv[i], r.stage))
                status = EXIT_ERR;
    }
    vt_library_close(lib);
    return status;
}
