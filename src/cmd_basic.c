/*
 * The small commands: init, add, ls, rm, redo, resume, export.
 * Each parses its own options and calls the library; show lives in cmd_show.c.
 */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* Parse options common to every command (-L, -q) plus the command's own. */
static int parse(const char *cmd, int argc, char **argv, const char *shortopts,
                 const struct option *longopts, int (*own)(int c, const char *arg, void *u),
                 void *user)
{
    int c;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (c == 'L')
            cli_opts.library = optarg;
        else if (c == 'q')
            cli_opts.quiet = 1;
        else if (c == '?' || c == ':' || !own || own(c, optarg, user))
            return cli_usage_error(cmd, "bad option '%s'", argv[optind - 1]);
    }
    return 0;
}

static const struct option no_long[] = {{"library", required_argument, NULL, 'L'},
                                        {"quiet", no_argument, NULL, 'q'},
                                        {NULL, 0, NULL, 0}};

int cmd_init(int argc, char **argv)
{
    struct vt_library *lib;
    int rc = parse("init", argc, argv, "L:q", no_long, NULL, NULL);

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("init", "unexpected argument '%s'", argv[optind]);
    lib = cli_open_library(1);
    if (!lib)
        return EXIT_ERR;
    if (!cli_opts.quiet)
        fprintf(stderr, "library ready in %s\n", vt_library_dir(lib));
    vt_library_close(lib);
    return EXIT_OK;
}

static int add_opt(int c, const char *arg, void *u)
{
    struct vt_add_opts *o = u;

    if (c != 'S')
        return -1;
    if (strcmp(arg, "auto") && strcmp(arg, "captions") && strcmp(arg, "recognize"))
        return -1;
    o->stt = arg;
    return 0;
}

int cmd_add(int argc, char **argv)
{
    static const struct option longs[] = {{"stt", required_argument, NULL, 'S'},
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct vt_add_opts opts = {0};
    struct vt_library *lib;
    int rc = parse("add", argc, argv, "L:q", longs, add_opt, &opts);
    int status = EXIT_OK;

    if (rc)
        return rc;
    if (optind == argc)
        return cli_usage_error("add", "nothing to add");
    lib = cli_open_library(1);
    if (!lib)
        return EXIT_ERR;
    for (int i = optind; i < argc; i++) {
        char id[VT_ID_MAX];
        int is_new;

        if (vt_add_file(lib, argv[i], &opts, id, &is_new)) {
            status = cli_error("%s", vt_errmsg(lib));
            continue;
        }
        if (!is_new)
            fprintf(stderr, "'%s' is already in the library as %s\n", argv[i], id);
        printf("%s\n", id);
        fflush(stdout);
        /* an unfinished earlier run of the same file continues here */
        if (vt_process(lib, id)) {
            status = cli_error("%s", vt_errmsg(lib));
        } else {
            char state[16], data[16];

            /* a failed stage was reported by the log as it happened */
            if (vt_video_state(lib, id, state, data) || strcmp(data, "ok"))
                status = EXIT_ERR;
        }
    }
    vt_library_close(lib);
    return status;
}

static int print_row(void *user, const struct vt_video_summary *v)
{
    char dur[32];

    cli_fmt_duration(dur, sizeof(dur), v->duration_s);
    printf("%s\t%s\t%s\t%s\t%s\n", v->id, v->title, dur, v->index_state, v->data_status);
    return 0;
}

int cmd_ls(int argc, char **argv)
{
    struct vt_library *lib;
    int rc = parse("ls", argc, argv, "L:q", no_long, NULL, NULL);

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("ls", "unexpected argument '%s'", argv[optind]);
    lib = cli_open_library(0);
    if (!lib)
        return EXIT_ERR;
    rc = vt_list(lib, print_row, NULL) ? cli_error("%s", vt_errmsg(lib)) : EXIT_OK;
    vt_library_close(lib);
    return rc;
}

int cmd_rm(int argc, char **argv)
{
    struct vt_library *lib;
    int rc = parse("rm", argc, argv, "L:q", no_long, NULL, NULL);
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

static int redo_opt(int c, const char *arg, void *u)
{
    if (c != 's')
        return -1;
    *(const char **)u = arg;
    return 0;
}

int cmd_redo(int argc, char **argv)
{
    static const struct option longs[] = {{"stage", required_argument, NULL, 's'},
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    const char *stage = NULL;
    struct vt_library *lib;
    int rc = parse("redo", argc, argv, "L:qs:", longs, redo_opt, &stage);

    if (rc)
        return rc;
    if (optind != argc - 1)
        return cli_usage_error("redo", "which video?");
    if (!stage)
        return cli_usage_error("redo", "which stage? (--stage NAME)");
    {
        const char *const *names = vt_stage_names();
        int known = 0;

        for (int i = 0; names[i]; i++)
            known |= !strcmp(names[i], stage);
        if (!known)
            return cli_usage_error("redo", "'%s' is not a stage", stage);
    }
    lib = cli_open_library(0);
    if (!lib)
        return EXIT_ERR;
    rc = vt_redo(lib, argv[optind], stage) ? cli_error("%s", vt_errmsg(lib)) : EXIT_OK;
    vt_library_close(lib);
    return rc;
}

int cmd_resume(int argc, char **argv)
{
    struct vt_library *lib;
    int n = 0, rc = parse("resume", argc, argv, "L:q", no_long, NULL, NULL);

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

static int export_opt(int c, const char *arg, void *u)
{
    if (c != 'f')
        return -1;
    *(const char **)u = arg;
    return 0;
}

int cmd_export(int argc, char **argv)
{
    static const struct option longs[] = {{"format", required_argument, NULL, 'f'},
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    const char *format = "json";
    struct vt_library *lib;
    char *doc;
    int rc = parse("export", argc, argv, "L:qf:", longs, export_opt, &format);

    if (rc)
        return rc;
    if (optind != argc - 1)
        return cli_usage_error("export", "which video?");
    if (strcmp(format, "json") && strcmp(format, "vtt") && strcmp(format, "srt") &&
        strcmp(format, "txt"))
        return cli_usage_error("export", "'%s' is not a format (json, vtt, srt, txt)", format);
    lib = cli_open_library(0);
    if (!lib)
        return EXIT_ERR;
    if (strcmp(format, "json") ? vt_export_subtitles(lib, argv[optind], format, &doc)
                               : vt_export_json(lib, argv[optind], &doc)) {
        rc = cli_error("%s", vt_errmsg(lib));
    } else {
        fputs(doc, stdout);
        if (!strcmp(format, "json"))
            fputc('\n', stdout);
        free(doc);
        rc = fflush(stdout) ? cli_error("cannot write the export") : EXIT_OK;
    }
    vt_library_close(lib);
    return rc;
}

int cmd_check(int argc, char **argv)
{
    struct vt_library *lib;
    int problems = 0, rc = parse("check", argc, argv, "L:q", no_long, NULL, NULL);

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("check", "unexpected argument '%s'", argv[optind]);
    lib = cli_open_library(0);
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
