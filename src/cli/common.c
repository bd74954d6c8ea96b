/*
 * Helpers shared by the commands: the global options and the command table main hands
 * down, opening the library, reporting what the library does (progress bars on a
 * terminal, plain log lines otherwise), making text that videos control safe to print
 * on a terminal, and the error and usage lines.
 */
#include "cli/cli.h"
#include "base/util.h"
#include "base/config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct cli_opts cli_opts;
int (*cli_run_full)(int argc, char **argv);

static const struct cli_cmd *commands;
static size_t n_commands;

void cli_set_commands(const struct cli_cmd *cmds, size_t n)
{
    commands = cmds;
    n_commands = n;
}

const struct cli_cmd *cli_cmd_at(size_t i)
{
    return i < n_commands ? &commands[i] : NULL;
}

const struct cli_cmd *cli_find_cmd(const char *name)
{
    for (size_t i = 0; i < n_commands; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

struct report {
    int tty;
    int bar_open; /* a progress bar is on the current line */
    char stage[32];
    int last_pct;
};
static struct report report;

static void end_bar(void)
{
    if (report.bar_open) {
        fputc('\n', stderr);
        report.bar_open = 0;
    }
}

static void on_log(void *user, int level, const char *msg)
{
    if (cli_opts.quiet && level > VT_LOG_ERROR)
        return;
    if (report.tty && level >= VT_LOG_INFO)
        return; /* the bars say it */
    /* log lines quote titles, URLs, paths and what tools said: one line, no control */
    cli_info("%s%s",
             level == VT_LOG_ERROR  ? "error: "
             : level == VT_LOG_WARN ? "warning: "
                                    : "",
             msg);
}

/* One bar per running stage: stages of a video run one after another. */
static void on_progress(void *user, const char *id, const char *stage, double frac)
{
    enum { WIDTH = 30 };
    char bar[WIDTH + 1];
    int pct;

    if (!report.tty || cli_opts.quiet)
        return;
    if (frac < 0) {
        if (report.bar_open && !strcmp(report.stage, stage)) {
            memset(bar, '#', WIDTH);
            bar[WIDTH] = '\0';
            fprintf(stderr, "\r%-12s %-10s [%s] done\033[K", id, stage, bar);
            end_bar();
        }
        return;
    }
    pct = (int)lround(fmin(fmax(frac, 0), 1) * 100);
    if (report.bar_open && !strcmp(report.stage, stage) && pct == report.last_pct)
        return;
    if (report.bar_open && strcmp(report.stage, stage))
        end_bar();
    snprintf(report.stage, sizeof(report.stage), "%s", stage);
    report.last_pct = pct;
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < pct * WIDTH / 100 ? '#' : '.';
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r%-12s %-10s [%s] %3d%%\033[K", id, stage, bar, pct);
    report.bar_open = 1;
}

struct vt_library *cli_open_library(int flags)
{
    char dir[PATH_MAX], err[1024];
    struct vt_library *lib;
    struct vt_callbacks cb = {on_log, on_progress, NULL};

    if (vt_library_default_dir(cli_opts.library, dir, sizeof(dir))) {
        cli_error("cannot tell where the library is: use -L DIR or set VIDTHEQUE_LIBRARY");
        return NULL;
    }
    if (cli_run_full) {
        /* the front links no libpq: a library on PostgreSQL is vidtheque-full's */
        char *url = NULL;

        if (vt_config_db_url(dir, &url, err, sizeof(err))) {
            cli_error("%s", err);
            return NULL;
        }
        if (url) {
            free(url);
            cli_run_full(0, NULL); /* returns only when it could not run */
            return NULL;
        }
    }
    lib = vt_library_open(dir, flags, err, sizeof(err));
    if (!lib) {
        cli_error("%s", err);
        return NULL;
    }
    report.tty = isatty(STDERR_FILENO);
    vt_library_set_callbacks(lib, &cb);
    vt_library_set_fetch(lib, &cli_opts.fetch);
    return lib;
}

void cli_fmt_bytes(char *buf, size_t n, uint64_t b)
{
    if (b >= 1024 * 1024)
        snprintf(buf, n, "%.1f MiB", (double)b / (1024.0 * 1024.0));
    else if (b >= 1024)
        snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
    else
        snprintf(buf, n, "%llu B", (unsigned long long)b);
}

int cli_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

const char *cli_safe_char(const char **s, char buf[8])
{
    return vt_safe_char(s, buf);
}

void cli_put_safe(FILE *f, const char *s)
{
    char buf[8];

    for (const char *p = s ? s : ""; *p;)
        fputs(cli_safe_char(&p, buf), f);
}

void cli_put_field(FILE *f, const char *s)
{
    char buf[8];

    for (const char *p = s ? s : ""; *p;) {
        const char *esc = *p == '\\'   ? "\\\\"
                          : *p == '\t' ? "\\t"
                          : *p == '\n' ? "\\n"
                          : *p == '\r' ? "\\r"
                                       : NULL;

        if (esc) {
            fputs(esc, f);
            p++;
        } else {
            fputs(cli_safe_char(&p, buf), f);
        }
    }
}

void cli_put_text(FILE *f, const char *s)
{
    char buf[8];

    for (const char *p = s ? s : ""; *p;) {
        if (*p == '\n' || *p == '\t')
            fputc(*p++, f);
        else
            fputs(cli_safe_char(&p, buf), f);
    }
}

void cli_vput_line(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
    char *msg = NULL, *line, buf[8];
    size_t n, cap;

    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    /* at most 3 bytes (U+FFFD) for each byte of the message */
    cap = strlen(prefix) + 3 * (msg ? strlen(msg) : 0) + 24;
    line = malloc(cap);
    if (!line)
        abort();
    n = (size_t)snprintf(line, cap, "%s", prefix);
    for (const char *p = msg ? msg : "(out of memory)"; *p;) {
        const char *c = cli_safe_char(&p, buf);
        size_t k = strlen(c);

        memcpy(line + n, c, k);
        n += k;
    }
    line[n++] = '\n';
    line[n] = '\0';
    end_bar();
    fputs(line, f); /* one call: the server's threads do not mix their lines */
    free(line);
    free(msg);
}

void cli_info(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cli_vput_line(stderr, "", fmt, ap);
    va_end(ap);
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
    const struct cli_cmd *c = cli_find_cmd(name);

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
