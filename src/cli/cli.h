/*
 * Shared pieces of the command-line tool: the command table's entry type, option
 * parsing helpers and opening the library with terminal-aware reporting.
 *
 * The files call downward only: src/cli/vidtheque.c (main and the command table) calls
 * the commands, one file each (src/cli/cmd_NAME.c, as git's builtin/), which call the
 * helpers (options.c: reading options; added.c: what add and update registered;
 * common.c: opening the library, messages, text safe for a terminal).
 *
 * To add a command: write src/cli/cmd_NAME.c with `int cmd_NAME(int argc, char **argv)`,
 * declare it below and add a line to the table in src/cli/vidtheque.c.
 */
#ifndef VT_CLI_H
#define VT_CLI_H

#include "vidtheque.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes. */
enum { EXIT_OK = 0, EXIT_ERR = 1, EXIT_USAGE = 2 };

/* A line of the command table (src/cli/vidtheque.c). */
struct cli_cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *args;    /* what follows the name in its usage line */
    const char *summary; /* one line for 'help' */
};
/* main hands the table down once, before any command runs: usage lines and help read it
 * here (the commands do not reach up into main's file). */
void cli_set_commands(const struct cli_cmd *cmds, size_t n);
/* The command named name, or NULL. */
const struct cli_cmd *cli_find_cmd(const char *name);
/* The i-th command of the table, or NULL past its end. */
const struct cli_cmd *cli_cmd_at(size_t i);

struct cli_opts {
    const char *library; /* -L DIR */
    int quiet;
    struct vt_fetch_opts fetch; /* --yt-dlp, --max-time, --max-size */
};
extern struct cli_opts cli_opts;
/* In the front binary: run this command in vidtheque-full instead (it returns only when
 * that cannot be done); NULL in the full binary. For a command that finds out late that
 * it needs what only the full binary links (a model server reached over HTTP). */
extern int (*cli_run_full)(int argc, char **argv);

/* One error line on stderr: "vidtheque: <msg>", made safe as by cli_put_safe (the
 * message may quote titles, URLs, paths). Returns EXIT_ERR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: message, then "usage: ..." of the command. Returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print the command's usage to f. */
void cli_print_usage(FILE *f, const char *cmd);

/* Open the library with vt_library_open's flags (VT_OPEN_CREATE: make it; VT_OPEN_READ:
 * the command only reads, so a read-only library opens); NULL after printing the error. */
struct vt_library *cli_open_library(int flags);

/*
 * Reading a command's options (getopt_long underneath): options and arguments in any
 * order; an unknown option or a missing value is a usage error that names the
 * argument as it was typed ("add: unknown option '-rf.mp4' (a file? write
 * './-rf.mp4', or '--' before it)").
 *
 *     struct cli_opt g;
 *     cli_opt_init(&g, "add", argc, argv, "L:q", longs);
 *     while ((c = cli_opt_next(&g)) != -1)
 *         if (c == '?') return EXIT_USAGE; ...
 *     the arguments are then argv[optind..argc), in the order given
 */
struct cli_opt {
    const char *cmd;
    int argc;
    char **argv;
    char spec[64];
    const struct option *longs;
    int npos;      /* arguments read so far */
    int elem;      /* argv index of the element the last option came from */
    int longindex; /* the last option's index in longs, -1 for a short one */
};
void cli_opt_init(struct cli_opt *g, const char *cmd, int argc, char **argv, const char *shortopts,
                  const struct option *longs);
/* The next option (its value in optarg); '?' after printing a usage error (return
 * EXIT_USAGE); -1 when all are read, argv reordered as said above. */
int cli_opt_next(struct cli_opt *g);
/* Usage error for the value of option c just read (optarg); want says what is expected
 * or is NULL. Returns EXIT_USAGE. */
int cli_opt_bad_value(struct cli_opt *g, int c, const char *want);

/* The options of a command that takes only -L and -q. */
extern const struct option cli_no_long[];
/* The long options of the commands that may fetch from URLs (--yt-dlp, --max-time,
 * --max-size: 'Y', 'T', 'Z' for cli_parse). */
#define CLI_FETCH_LONGS                                                                            \
    {"yt-dlp", required_argument, NULL, 'Y'}, {"max-time", required_argument, NULL, 'T'},          \
    {                                                                                              \
        "max-size", required_argument, NULL, 'Z'                                                   \
    }

/* The options every command takes (-L, -q, and the fetch options) read as they are set, the
 * command's own handed to own (non-zero: a bad value); the arguments end at
 * argv[optind..argc). 0, or the exit code of a usage error already printed. */
int cli_parse(const char *cmd, int argc, char **argv, const char *shortopts,
              const struct option *longopts, int (*own)(int c, const char *arg, void *u),
              void *user);

/* A whole number in min..max (nothing else in s): 0, else -1. */
int cli_parse_long(const char *s, long min, long max, long *out);

/*
 * Text a video controls (titles, captions, OCR, URLs, paths, tools' messages) reaches a
 * terminal only through these: a control character (C0, DEL, C1), a bidirectional
 * override or a line separator becomes a space and invalid UTF-8 becomes U+FFFD, so it
 * cannot move the cursor, retitle the window, clear the screen or break a line.
 */
/* What to print for the character at *s (itself, " " or U+FFFD; buf may hold it);
 * advances *s past it. */
const char *cli_safe_char(const char **s, char buf[8]);
/* Print s made safe. NULL prints nothing. */
void cli_put_safe(FILE *f, const char *s);
/* Print s as one field of tab-separated output: backslash, tab, newline and carriage
 * return written \\, \t, \n and \r, the rest made safe as by cli_put_safe. */
void cli_put_field(FILE *f, const char *s);
/* Print text of several lines made safe: newlines and tabs kept, the rest as above. */
void cli_put_text(FILE *f, const char *s);
/* prefix, then the formatted message made safe, then a newline. */
void cli_vput_line(FILE *f, const char *prefix, const char *fmt, va_list ap);
/* An informational line on stderr, made safe. */
void cli_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "1.5 MiB", "12.0 KiB", "300 B" */
void cli_fmt_bytes(char *buf, size_t n, uint64_t b);

int cmd_init(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_update(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_redo(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_similar(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_models_pull(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_help(int argc, char **argv);
/* The overall help (the commands and the global options). */
void cli_print_help(FILE *f);

#endif
