/*
 * Helpers shared by the commands: opening the library and reporting what the
 * library does, as progress bars on a terminal and plain log lines otherwise.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
    end_bar();
    fprintf(stderr, "%s%s\n",
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

void cli_fmt_duration(char *buf, size_t n, double s)
{
    long t = s > 0 && s < 1e9 ? (long)s : 0;

    if (t >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}
