/*
 * vidtheque: the command-line tool. main() handles the global options, then
 * dispatches to one function per subcommand from the table below (git style).
 */
#include "cli/cli.h"
#include "base/config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *args;
    const char *summary;
};

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

static const struct cmd commands[] = {
    {"init", cmd_init, "[--db postgresql://...]",
     "create an empty library (its database in DIR, or on a PostgreSQL server)"},
    {"add", FULL(cmd_add),
     "[--stt=auto|captions|recognize] [--no-keep-media] [--limit N] [--info-json F] "
     "[--yt-dlp PATH] [--max-time S] [--max-size MIB] [--queue] [--wait] [--priority N] "
     "FILE|URL...",
     "register media files or URLs (videos, playlists, channels) and index them; prints ids"},
    {"update", FULL(cmd_update), "[--yt-dlp PATH]",
     "re-check every playlist or channel that was added, add what is new, then resume"},
    {"ls", cmd_ls, "", "list videos: id, title, duration, index_state, data_status"},
    {"show", cmd_show, "ID", "everything known about a video, as text"},
    {"search", cmd_search,
     "[--json] [--limit N] [--video ID] [--source S] [--mode words|meaning|hybrid] QUERY",
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
     "[--stages NAME,...] [--concurrency N] [--lease S] [--drain] [--stats]",
     "run stages of any video from the library's queue, until stopped (SIGTERM)"},
    {"jobs", cmd_jobs, "[--failed] [--json]",
     "the queue: depth by stage and state, running stages by worker, failures"},
    {"migrate", FULL(cmd_migrate), "--to postgresql://...|sqlite",
     "move the library's catalog to PostgreSQL or back, verified video by video"},
    {"serve", FULL(cmd_serve),
     "[--bind ADDR] [--port N] [--read-only] [--token-file F] [--max-per-ip N] "
     "[--max-connections N] [--head-timeout S] [--deadline S] [--idle-timeout S]",
     "the web application: pages, JSON API and media over HTTP (docs/API.md)"},
    {"models", cmd_models_any, "[pull NAME [--revision REV] | rm NAME...]",
     "models for search by meaning: what is configured and pulled; pull or remove one"},
    {"config", cmd_config, "[get KEY | set KEY VALUE | unset KEY]",
     "the library's settings: embedding and transcription backends, models, servers"},
    {"help", cmd_help, "[COMMAND]", "show help"},
};

/* What 'help COMMAND' says after the summary. */
static const struct {
    const char *name, *text;
} more_help[] = {
    {"ls", "One row per video, fields separated by tabs. A backslash, tab, newline or carriage\n"
           "return inside a field is written \\\\, \\t, \\n or \\r; other control characters\n"
           "(which could drive the terminal) become spaces.\n"},
    {"add", "Each FILE or URL is registered (its id printed), then indexed by this process, one\n"
            "stage after another, as its stages' inputs are ready. On a library whose database is\n"
            "PostgreSQL (config key db), add only registers and queues: workers on any machine\n"
            "index (vidtheque worker). Either way:\n"
            "  --queue         only register and queue, for workers (the default on PostgreSQL)\n"
            "  --wait          with --queue: wait until every video has settled, printing each\n"
            "                  stage as it runs and ends; exit 1 when a video is not ok\n"
            "  --priority N    its stages run before those of lower priority (default 0)\n"},
    {"worker",
     "Claims the next runnable stage of any video (queued, inputs settled, retry due; or\n"
     "running under a lease that expired: its worker is presumed dead) and runs it as add\n"
     "would, in N threads. Runs on SQLite (processes on one machine) and on PostgreSQL\n"
     "(any number of machines sharing the library directory).\n"
     "  --stages LIST   only these stages (e.g. stt on a GPU box, fetch,keyframe,ocr,...)\n"
     "  --concurrency N stage threads (default 1)\n"
     "  --lease S       each claim's lease in seconds (default 60), extended every S/3 while\n"
     "                  the stage runs; a stage whose lease expires is taken over and the\n"
     "                  late result of its first worker refused\n"
     "  --drain         exit once no stage it runs is queued or running anywhere\n"
     "  --stats         print the queue's overhead per stage (p50, p99) at exit\n"
     "SIGTERM or SIGINT: claim no more and finish the running stages, then exit 0; a\n"
     "second one gives their leases back (queued again, the attempt not counted) and\n"
     "exits 0 at once.\n"},
    {"jobs",
     "Counts of stages by state (runnable: queued with every input settled and no retry\n"
     "pending), the running stages with their worker (host:pid:nonce) and when their lease\n"
     "expires, and the number of failed stages; --failed lists each with its last error\n"
     "(after its last attempt: 'vidtheque redo ID --stage NAME' queues it again).\n"},
    {"models",
     "Without arguments: the backends the config chooses (and whether the text embedding\n"
     "model is found), then the models pulled into LIBRARY/models/, each with its repo,\n"
     "revision, commit, size and whether its files are whole.\n\n"
     "pull NAME downloads a Model2Vec model from the Hugging Face hub: NAME is a repo id\n"
     "(minishlab/potion-base-8M) or a short name: potion-base-2M, potion-base-4M,\n"
     "potion-base-8M, potion-base-32M, potion-retrieval-32M, potion-multilingual-128M.\n"
     "--revision picks a branch, tag or commit (default main). Each file is checked\n"
     "against the size and SHA-256 (or git blob id) the hub lists; the model is installed\n"
     "whole or not at all, and an interrupted pull continues where it stopped when run\n"
     "again. Pulling the commit that is installed does nothing. The hub is $HF_ENDPOINT\n"
     "when set, else https://huggingface.co. Then:\n"
     "  vidtheque config set text_embed.backend model2vec\n"
     "  vidtheque config set text_embed.model potion-base-8M\n\n"
     "rm NAME... removes pulled models (by name, repo id or folder name).\n"},
    {"config",
     "Without arguments: the keys that are set (API keys masked). Keys:\n"
     "  text_embed.backend  model2vec | openai | none (default none: no vectors)\n"
     "  text_embed.model    model2vec: a pulled model's name or a folder holding\n"
     "                      model.safetensors and tokenizer.json; openai: the server's model\n"
     "  text_embed.url      openai: the server's base URL (http://127.0.0.1:11434)\n"
     "  text_embed.api_key  openai: a Bearer token, when the server wants one\n"
     "  stt.backend         pocketsphinx | openai (default pocketsphinx)\n"
     "  stt.model           openai: the server's model name (whisper-1)\n"
     "  stt.url             openai: the transcription server's base URL\n"
     "  stt.api_key         openai: a Bearer token, when the server wants one\n"
     "  stt.hints           true | false: the video's own words as speech hints (true)\n"
     "  stt.vad             energy | silero: what finds the speech (default energy;\n"
     "                      silero pays when music, applause or noise fill the pauses)\n"
     "  stt.vad_model       silero: the Silero VAD ggml file (default the installed one,\n"
     "                      " VT_CONFIG_VAD_MODEL ")\n"
     "  frame_embed.backend tflite | openai | none (default none: no picture vectors)\n"
     "  frame_embed.model   tflite: a .tflite file or a folder holding one; openai: the\n"
     "                      server's model\n"
     "  frame_embed.tensor  tflite: the tensor that is the embedding (default: the input\n"
     "                      of the last layer)\n"
     "  frame_embed.url     openai: the image-embedding server's base URL\n"
     "  frame_embed.api_key openai: a Bearer token, when the server wants one\n"
     "  frame_embed.joint_text  openai: 1 when the model embeds text into the same space\n"
     "The file is LIBRARY/config, readable by its owner only.\n"},
};

struct cli_opts cli_opts;

static const struct cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

int cli_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cli_vput_line(stderr, "vidtheque: ", fmt, ap);
    va_end(ap);
    return EXIT_ERR;
}

void cli_print_usage(FILE *f, const char *name)
{
    const struct cmd *c = find_cmd(name);

    if (c)
        fprintf(f, "usage: vidtheque [-L DIR] %s %s\n", c->name, c->args);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cli_vput_line(stderr, "vidtheque: ", fmt, ap);
    va_end(ap);
    cli_print_usage(stderr, cmd);
    return EXIT_USAGE;
}

static void print_help(FILE *f)
{
    fputs("usage: vidtheque [-L DIR] COMMAND [ARGS]\n\n"
          "A video library searchable by what is said and shown in videos.\n\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fputs("\noptions:\n"
          "  -L DIR     library directory (default $VIDTHEQUE_LIBRARY, else\n"
          "             $XDG_DATA_HOME/vidtheque, else ~/.local/share/vidtheque)\n"
          "  -q         no progress or log lines on stderr\n"
          "  --version  print the version\n\n"
          "'vidtheque COMMAND --help' tells more about a command.\n",
          f);
}

int cmd_help(int argc, char **argv)
{
    if (argc > 1) {
        const struct cmd *c = find_cmd(argv[1]);

        if (!c)
            return cli_usage_error("help", "'%s' is not a command", argv[1]);
        cli_print_usage(stdout, c->name);
        printf("\n%s\n", c->summary);
        for (size_t i = 0; i < sizeof(more_help) / sizeof(more_help[0]); i++)
            if (!strcmp(more_help[i].name, c->name))
                printf("\n%s", more_help[i].text);
        return EXIT_OK;
    }
    print_help(stdout);
    return EXIT_OK;
}

static char **main_argv; /* the whole command line, for run_full */
int (*cli_run_full)(int argc, char **argv);

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
    const struct cmd *c;
    int i = 1;

#ifdef VT_FRONT
    /* a copy: commands' option parsing reorders argv in place (src/cli/common.c), and a
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
            print_help(stdout);
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
        print_help(stderr);
        return EXIT_USAGE;
    }
    c = find_cmd(argv[i]);
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
