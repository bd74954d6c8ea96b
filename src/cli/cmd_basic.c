/*
 * The small commands: init, add, update, ls, rm, redo, resume, export.
 * Each parses its own options and calls the library; show lives in cmd_show.c.
 */
#include "cli/cli.h"
#include "model/stage_config.h"
#include "base/util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parse options common to every command (-L, -q) plus the command's own; the other
 * arguments end at argv[optind..argc). */
static int parse(const char *cmd, int argc, char **argv, const char *shortopts,
                 const struct option *longopts, int (*own)(int c, const char *arg, void *u),
                 void *user)
{
    struct cli_opt g;
    int c;

    cli_opt_init(&g, cmd, argc, argv, shortopts, longopts);
    while ((c = cli_opt_next(&g)) != -1) {
        long n;

        if (c == '?')
            return EXIT_USAGE;
        if (c == 'L')
            cli_opts.library = optarg;
        else if (c == 'q')
            cli_opts.quiet = 1;
        else if (c == 'Y')
            cli_opts.fetch.ytdlp = optarg;
        else if (c == 'T' && !cli_parse_long(optarg, 1, 7 * 86400, &n))
            cli_opts.fetch.max_time_s = (double)n;
        else if (c == 'Z' && !cli_parse_long(optarg, 1, 1L << 30, &n))
            cli_opts.fetch.max_bytes = (long long)n << 20;
        else if (c == 'T')
            return cli_opt_bad_value(&g, c, "seconds, 1 to 604800");
        else if (c == 'Z')
            return cli_opt_bad_value(&g, c, "MiB, 1 to 1073741824");
        else if (!own || own(c, optarg, user))
            return cli_opt_bad_value(&g, c,
                                     c == 'S'   ? "auto, captions or recognize"
                                     : c == 'N' ? "a number, 1 to 1000000"
                                                : NULL);
    }
    return 0;
}

static const struct option no_long[] = {{"library", required_argument, NULL, 'L'},
                                        {"quiet", no_argument, NULL, 'q'},
                                        {NULL, 0, NULL, 0}};

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

    if (vt_config_check("db", db, err, sizeof(err)))
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
    old = vt_xstrdup_or_null(vt_config_get(cf, "db"));
    if (old && strcmp(old, db))
        rc = cli_error("library '%s' already has its database elsewhere (its config's db)", dir);
    else if (!old && vt_config_set(cf, "db", db, err, sizeof(err)))
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
    int rc = parse("init", argc, argv, "L:q", longs, init_opt, &db);

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

/* Options of the commands that may fetch from URLs. */
#define FETCH_LONGS                                                                                \
    {"yt-dlp", required_argument, NULL, 'Y'}, {"max-time", required_argument, NULL, 'T'},          \
    {                                                                                              \
        "max-size", required_argument, NULL, 'Z'                                                   \
    }

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

/* The ids an add or update registered, processed once all are registered (a
 * list's entries all get rows first: an interrupted run resumes every one). */
struct added {
    char (*ids)[VT_ID_MAX];
    size_t n, cap;
    const char *source;
    /* queued for workers (add --queue, or a PostgreSQL library): not run here; the ids
     * kept for --wait */
    int queue, priority;
    char (*queued)[VT_ID_MAX];
    size_t n_queued, cap_queued;
};

static int on_added(void *user, const char *id, int is_new)
{
    struct added *a = user;

    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->ids = realloc(a->ids, a->cap * sizeof(*a->ids));
        if (!a->ids) {
            cli_error("out of memory");
            abort();
        }
    }
    snprintf(a->ids[a->n++], VT_ID_MAX, "%s", id);
    if (!is_new && a->source)
        cli_info("'%s' is already in the library as %s", a->source, id);
    printf("%s\n", id);
    fflush(stdout);
    return 0;
}

/* Leave every id in a to the workers (with its priority), kept for --wait. */
static int queue_added(struct vt_library *lib, struct added *a)
{
    int status = EXIT_OK;

    for (size_t i = 0; i < a->n; i++) {
        if (a->priority && vt_video_set_priority(lib, a->ids[i], a->priority))
            status = cli_error("%s", vt_errmsg(lib));
        if (a->n_queued == a->cap_queued) {
            a->cap_queued = a->cap_queued ? 2 * a->cap_queued : 16;
            a->queued = realloc(a->queued, a->cap_queued * sizeof(*a->queued));
            if (!a->queued) {
                cli_error("out of memory");
                abort();
            }
        }
        memcpy(a->queued[a->n_queued++], a->ids[i], VT_ID_MAX);
    }
    a->n = 0;
    return status;
}

/* add --wait: until every queued video has settled; EXIT_ERR when one is not ok. */
static int wait_queued(struct vt_library *lib, struct added *a)
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

/* Run the pipeline of every id in a; EXIT_ERR when any stage failed. */
static int process_added(struct vt_library *lib, struct added *a)
{
    int status = EXIT_OK;

    if (a->queue)
        return queue_added(lib, a);
    for (size_t i = 0; i < a->n; i++) {
        char state[16], data[16];

        /* an unfinished earlier run of the same video continues here */
        if (vt_process(lib, a->ids[i])) {
            status = cli_error("%s", vt_errmsg(lib));
            continue;
        }
        /* a failed stage was reported by the log as it happened */
        if (vt_video_state(lib, a->ids[i], state, data) || strcmp(data, "ok"))
            status = EXIT_ERR;
    }
    a->n = 0;
    return status;
}

int cmd_add(int argc, char **argv)
{
    static const struct option longs[] = {{"stt", required_argument, NULL, 'S'},
                                          {"no-keep-media", no_argument, NULL, 'K'},
                                          {"limit", required_argument, NULL, 'N'},
                                          {"info-json", required_argument, NULL, 'I'},
                                          {"queue", no_argument, NULL, 'Q'},
                                          {"wait", no_argument, NULL, 'W'},
                                          {"priority", required_argument, NULL, 'P'},
                                          FETCH_LONGS,
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct add_args a = {.info_json = calloc((size_t)argc + 1, sizeof(char *))};
    struct added done = {0};
    struct vt_library *lib = NULL;
    int rc = a.info_json ? parse("add", argc, argv, "L:q", longs, add_opt, &a) : EXIT_ERR;
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
        if (vt_add_info_json(lib, a.info_json[i], &a.opts, on_added, &done))
            status = cli_error("%s", vt_errmsg(lib));
        if (process_added(lib, &done))
            status = EXIT_ERR;
    }
    for (int i = optind; i < argc; i++) {
        done.source = argv[i];
        if (vt_is_url(argv[i])) {
            if (vt_add_url(lib, argv[i], &a.opts, on_added, &done))
                status = cli_error("%s", vt_errmsg(lib));
        } else {
            char id[VT_ID_MAX];
            int is_new;

            if (vt_add_file(lib, argv[i], &a.opts, id, &is_new))
                status = cli_error("%s", vt_errmsg(lib));
            else
                on_added(&done, id, is_new);
        }
        if (process_added(lib, &done))
            status = EXIT_ERR;
    }
    if (done.queue && a.wait && wait_queued(lib, &done))
        status = EXIT_ERR;
    rc = status;
out:
    vt_library_close(lib);
    free(done.ids);
    free(done.queued);
    free(a.info_json);
    return rc;
}

int cmd_update(int argc, char **argv)
{
    static const struct option longs[] = {FETCH_LONGS,
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct added done = {0};
    struct vt_library *lib;
    int rc = parse("update", argc, argv, "L:q", longs, NULL, NULL), status = EXIT_OK;

    if (rc)
        return rc;
    if (optind != argc)
        return cli_usage_error("update", "unexpected argument '%s'", argv[optind]);
    lib = cli_open_library(0);
    if (!lib)
        return EXIT_ERR;
    /* on PostgreSQL what is new is left to the workers, as add does */
    done.queue = !strcmp(vt_library_backend(lib), "postgresql");
    if (vt_update(lib, on_added, &done))
        status = cli_error("%s", vt_errmsg(lib));
    if (process_added(lib, &done))
        status = EXIT_ERR;
    /* what cron runs: also finish what is unfinished, retrying downloads that are due */
    {
        int n = 0;

        if (vt_resume(lib, &n))
            status = cli_error("%s", vt_errmsg(lib));
    }
    vt_library_close(lib);
    free(done.ids);
    return status;
}

static int print_row(void *user, const struct vt_video_summary *v)
{
    char dur[32];
    /* one row per video whatever its title holds: fields escaped, see 'help ls' */
    const char *field[] = {v->id, v->title, dur, v->index_state, v->data_status};

    cli_fmt_duration(dur, sizeof(dur), v->duration_s);
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
    int rc = parse("ls", argc, argv, "L:q", no_long, NULL, NULL);

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
                                          FETCH_LONGS,
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct redo_args r = {0};
    struct vt_library *lib;
    int rc = parse("redo", argc, argv, "L:qs:", longs, redo_opt, &r), status = EXIT_OK;

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

int cmd_resume(int argc, char **argv)
{
    static const struct option longs[] = {FETCH_LONGS,
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct vt_library *lib;
    int n = 0, rc = parse("resume", argc, argv, "L:q", longs, NULL, NULL);

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
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    if (strcmp(format, "json") ? vt_export_subtitles(lib, argv[optind], format, &doc)
                               : vt_export_json(lib, argv[optind], &doc)) {
        rc = cli_error("%s", vt_errmsg(lib));
    } else {
        /* a document is data for other tools, written as it is; on a terminal a person
         * reads it, and what the video controls must not drive the terminal */
        if (isatty(STDOUT_FILENO))
            cli_put_text(stdout, doc);
        else
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

int cli_parse(const char *cmd, int argc, char **argv, const char *shortopts,
              const struct option *longopts, int (*own)(int c, const char *arg, void *u),
              void *user)
{
    return parse(cmd, argc, argv, shortopts, longopts, own, user);
}
