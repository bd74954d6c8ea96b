/*
 * vidtheque: the command-line tool. main() handles the global options, then
 * dispatches to one function per subcommand from the table below (git style), each in
 * its own file (src/cli/cmd_NAME.c). This file is the top of src/cli: nothing calls
 * into it; the table is handed down to src/cli/common.c for usage lines and help.
 */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef VT_FRONT
/*
 * The front binary (`vidtheque`) links only what reading a library needs: SQLite and
 * jansson, about a dozen shared objects where FFmpeg, Tesseract and PocketSphinx bring
 * ~150 (most bound at load), which would cost listing ten videos ten times the time of
 * sqlite3 itself. The commands that run stages or serve are the same code linked with
 * everything, `vidtheque-full` beside it, which the front executes in its place.
 */
static int run_full(int argc, char **argv);
#define FULL(fn) run_full
#else
#define FULL(fn) fn
/* Backends the library references weakly so that the front binary can go without
 * libcurl (ml/embed.h) and libpq (lib/store/store.c): named here, they are linked into
 * vidtheque-full. */
#include "ml/embed.h"
struct vt_store;
int store_pg_open(const char *url, int flags, struct vt_store **out, char *err, size_t errlen);
void *const vt_full_backends[] = {(void *)&vt_embed_openai, (void *)store_pg_open};
#endif

/* `models` lists (front); `models pull` downloads with libcurl, in vidtheque-full. */
static int cmd_models_any(int argc, char **argv)
{
    for (int k = 1; k < argc && strcmp(argv[k], "--"); k++) {
        if (!strcmp(argv[k], "--revision") || !strcmp(argv[k], "-r"))
            k++;
        else if (argv[k][0] != '-')
            return !strcmp(argv[k], "pull") ? FULL(cmd_models_pull)(argc, argv)
                                            : cmd_models(argc, argv);
    }
    return cmd_models(argc, argv);
}

static const struct cli_cmd commands[] = {
    {"init", cmd_init, "[--db postgresql://...]",
     "create an empty library (its database in DIR, or on a PostgreSQL server)"},
    {"add", FULL(cmd_add),
     "[--stt=auto|captions|recognize] [--in-place] [--no-keep-media] [--limit N] [--info-json F] "
     "[--yt-dlp PATH] [--max-time S] [--max-size MIB] [--queue] [--wait] [--priority N] "
     "FILE|URL...",
     "register media files or URLs (videos, playlists, channels) and index them; prints ids"},
    {"update", FULL(cmd_update), "[--yt-dlp PATH]",
     "re-check every playlist or channel that was added, add what is new, then resume"},
    {"ls", cmd_ls, "", "list videos: id, title, duration, index_state, data_status"},
    {"show", cmd_show, "ID", "everything known about a video, as text"},
    {"search", cmd_search,
     "[--json] [--explain] [--limit N] [--video ID] [--source S] [--mode words|meaning|hybrid] "
     "QUERY",
     "find moments: words said or shown, or what they mean; \"phrases\", -not, prefix*, "
     "video:ID, source:screen"},
    {"similar", cmd_similar, "VIDEO --frame N [--limit K] [--json]",
     "more like this: the frames of the whole library that look most like frame N"},
    {"export", cmd_export, "ID [--format json|vtt|srt|txt]", "a video's document, for other tools"},
    {"rm", cmd_rm, "ID...", "remove videos: database rows and files"},
    {"redo", FULL(cmd_redo), "ID... | --all --stage NAME",
     "re-run a stage and the stages that depend on it (exit 1 when a video is not ok after)"},
    {"resume", FULL(cmd_resume), "[--yt-dlp PATH]",
     "finish whatever interrupted runs left; retry failed downloads when due"},
    {"check", cmd_check, "", "check the database's integrity and the frame files"},
    {"worker", FULL(cmd_worker),
     "[--stages NAME,...] [--concurrency N] [--lease S] [--grace S] [--drain] [--stats] "
     "[--metrics-port N [--metrics-bind ADDR]]",
     "run stages of any video from the library's queue, until stopped (SIGTERM)"},
    {"jobs", cmd_jobs, "[--failed] [--json]",
     "the queue: depth by stage and state, running stages by worker, failures"},
    {"migrate", FULL(cmd_migrate), "--to postgresql://...|sqlite",
     "move the library's catalog to PostgreSQL or back, verified video by video"},
    {"serve", FULL(cmd_serve),
     "[--bind ADDR] [--port N] [--read-only] [--token-file F] [--max-per-ip N] "
     "[--max-connections N] [--head-timeout S] [--deadline S] [--idle-timeout S]",
     "the web application: pages, JSON API and media over HTTP (docs/API.md)"},
    {"models", cmd_models_any,
     "[pull NAME [--revision REV] [--deadline S] [--min-rate B] [--rate-window S] | rm NAME...]",
     "models for search by meaning: what is configured and pulled; pull or remove one"},
    {"config", cmd_config, "[get KEY | set KEY VALUE | unset KEY]",
     "the library's settings: embedding and transcription backends, models, servers"},
    {"help", cmd_help, "[COMMAND]", "show help"},
};

static char **main_argv; /* the whole command line, for run_full */

#ifdef VT_FRONT
/*
 * Run the command in vidtheque-full, found beside this binary (symlinks resolved). The
 * process stays the same (exec, no fork): signals, exit status and the pid are the
 * command's own. libtesseract links libgomp, which reads OMP_THREAD_LIMIT once when it is
 * loaded; Tesseract's OpenMP threads only slow small machines (we run one engine per
 * core instead), so the limit is set here, before the load.
 */
static int run_full(int argc, char **argv)
{
    char self[PATH_MAX], full[PATH_MAX + 16], *slash;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    (void)argc;
    (void)argv;
    if (n <= 0)
        return cli_error("cannot find where vidtheque is installed: %s", strerror(errno));
    self[n] = '\0';
    slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(full, sizeof(full), "%s/vidtheque-full", self);
    if (!getenv("OMP_THREAD_LIMIT"))
        setenv("OMP_THREAD_LIMIT", "1", 1);
    execv(full, main_argv);
    return cli_error("cannot run '%s': %s", full, strerror(errno));
}
#else
/* As run_full does for the front, when vidtheque-full is run by hand. */
static void limit_openmp(char **argv)
{
    if (getenv("OMP_THREAD_LIMIT"))
        return;
    setenv("OMP_THREAD_LIMIT", "1", 1);
    execv("/proc/self/exe", argv);
    /* could not re-exec: carry on, only slower */
}
#endif

int main(int argc, char **argv)
{
    const struct cli_cmd *c;
    int i = 1;

#ifdef VT_FRONT
    /* a copy: commands' option parsing reorders argv in place (src/cli/options.c), and a
     * command may hand itself to vidtheque-full after parsing (cli_run_full) */
    main_argv = calloc((size_t)argc + 1, sizeof(*main_argv));
    if (!main_argv)
        return fputs("vidtheque: out of memory\n", stderr), EXIT_ERR;
    memcpy(main_argv, argv, (size_t)argc * sizeof(*argv));
#else
    main_argv = argv;
#endif
#ifdef VT_FRONT
    cli_run_full = run_full;
#endif
#ifndef VT_FRONT
    limit_openmp(argv);
#endif
    cli_set_commands(commands, sizeof(commands) / sizeof(commands[0]));
    while (i < argc && argv[i][0] == '-') {
        const char *a = argv[i];

        if (!strcmp(a, "-L") || !strcmp(a, "--library")) {
            if (i + 1 >= argc)
                return fputs("vidtheque: -L needs a directory\n", stderr), EXIT_USAGE;
            cli_opts.library = argv[i + 1];
            i += 2;
        } else if (!strncmp(a, "-L", 2)) {
            cli_opts.library = a + 2;
            i++;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            cli_opts.quiet = 1;
            i++;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_print_help(stdout);
            return EXIT_OK;
        } else if (!strcmp(a, "--version")) {
            printf("vidtheque %s\n", VIDTHEQUE_VERSION);
            return EXIT_OK;
        } else {
            cli_error("unknown option '%s' (see 'vidtheque help')", a);
            return EXIT_USAGE;
        }
    }
    if (i >= argc) {
        cli_print_help(stderr);
        return EXIT_USAGE;
    }
    c = cli_find_cmd(argv[i]);
    if (!c) {
        cli_error("'%s' is not a command (see 'vidtheque help')", argv[i]);
        return EXIT_USAGE;
    }
    for (int k = i + 1; k < argc; k++) {
        if (!strcmp(argv[k], "--"))
            break;
        if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            char *args[] = {"help", (char *)c->name, NULL};

            return cmd_help(2, args);
        }
    }
    return c->fn(argc - i, argv + i);
}
