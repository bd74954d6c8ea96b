/*
 * `vidtheque models pull NAME`: downloads a model from the hub with lib/ml/hub.c. It
 * needs libcurl, so src/cli/vidtheque.c sends it to vidtheque-full, and the front binary
 * drops cmd_models_pull with the other code it does not reach.
 */
#include "base/util.h"
#include "cli/cli.h"
#include "ml/hub.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pull_report {
    int tty;
    int bar_open;
    int last_pct;
    char path[64];
};

static void pull_progress(void *user, const char *path, uint64_t done, uint64_t total)
{
    struct pull_report *r = user;
    char d[32], t[32];
    int pct = total ? (int)(done * 100 / total) : 100;

    if (!r->tty)
        return;
    if (!strcmp(r->path, path) && pct == r->last_pct && (r->bar_open || done >= total))
        return; /* nothing new, or the end of a file already shown */
    if (r->bar_open && strcmp(r->path, path))
        fputc('\n', stderr);
    snprintf(r->path, sizeof(r->path), "%s", path);
    r->last_pct = pct;
    cli_fmt_bytes(d, sizeof(d), done);
    cli_fmt_bytes(t, sizeof(t), total);
    fprintf(stderr, "\r%-20s %10s of %-10s %3d%%\033[K", path, d, t, pct);
    r->bar_open = 1;
    if (done >= total) {
        fputc('\n', stderr);
        r->bar_open = 0;
    }
    fflush(stderr);
}

static void pull_note(void *user, const char *msg)
{
    struct pull_report *r = user;

    if (r->bar_open) {
        fputc('\n', stderr);
        r->bar_open = 0;
    }
    cli_info("%s", msg);
}

/* --deadline S (1 s to 30 days), --min-rate BYTES a second (0 to 1 GB/s: 0 takes any
 * but a window without a byte), --rate-window S (1 s to 1 h) into o: 0, or -1 after the usage
 * error. */
static int pace_opt(struct cli_opt *g, int c, struct vt_hub_opts *o)
{
    char *end;
    double v = strtod(optarg, &end);
    double lo = c == 'm' ? 0 : 1, hi = c == 'd' ? 30 * 86400.0 : c == 'm' ? 1e9 : 3600;

    if (end == optarg || *end || !(v >= lo && v <= hi)) {
        cli_opt_bad_value(g, c,
                          c == 'd'   ? "seconds, 1 to 2592000"
                          : c == 'm' ? "bytes a second, 0 to 1000000000"
                                     : "seconds, 1 to 3600");
        return -1;
    }
    if (c == 'd')
        o->deadline_s = v;
    else if (c == 'm')
        o->min_rate = v > 0 ? v : 1e-9; /* 0 is the default's mark: any byte will do */
    else
        o->rate_window_s = v;
    return 0;
}

int cmd_models_pull(int argc, char **argv)
{
    static const struct option longs[] = {{"revision", required_argument, NULL, 'r'},
                                          {"deadline", required_argument, NULL, 'd'},
                                          {"min-rate", required_argument, NULL, 'm'},
                                          {"rate-window", required_argument, NULL, 'w'},
                                          {NULL, 0, NULL, 0}};
    struct cli_opt g;
    struct vt_hub_opts o = {0};
    struct vt_hub_result res;
    struct pull_report rep = {0};
    struct vt_library *lib;
    char err[2048];
    int c, rc;

    /* argv[0] is "models", argv[1] "pull" (options may come before it) */
    cli_opt_init(&g, "models", argc, argv, "r:", longs);
    while ((c = cli_opt_next(&g)) != -1) {
        if (c == '?')
            return EXIT_USAGE;
        if (c == 'r')
            o.revision = optarg;
        if ((c == 'd' || c == 'm' || c == 'w') && pace_opt(&g, c, &o))
            return EXIT_USAGE;
    }
    if (argc - optind != 2 || strcmp(argv[optind], "pull"))
        return cli_usage_error("models", "'models pull' takes one model name");
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    rep.tty = isatty(STDERR_FILENO) && !cli_opts.quiet;
    o.progress = pull_progress;
    o.note = cli_opts.quiet ? NULL : pull_note;
    o.user = &rep;
    rc = vt_hub_pull(vt_library_dir(lib), argv[optind + 1], &o, &res, err, sizeof(err));
    if (rep.bar_open)
        fputc('\n', stderr);
    if (rc) {
        rc = cli_error("pull of '%s' failed: %s", argv[optind + 1], err);
    } else {
        char size[32], *msg;
        cli_fmt_bytes(size, sizeof(size), res.bytes);
        if (res.already)
            msg = vt_xasprintf("%s is already at %s in %s (nothing to do)", res.repo, res.commit,
                               res.folder);
        else
            msg = vt_xasprintf("%s at %s installed in %s (%d files, %s)", res.repo, res.commit,
                               res.folder, res.n_files, size);
        cli_put_safe(stdout, msg);
        fputc('\n', stdout);
        free(msg);
        if (res.image && !cli_opts.quiet)
            cli_info("an image model: 'vidtheque config set frame_embed.model %s' embeds frames "
                     "with it",
                     argv[optind + 1]);
        if (res.speech && !cli_opts.quiet)
            cli_info("a speech model: 'vidtheque config set stt.model %s' transcribes with it",
                     argv[optind + 1]);
    }
    vt_library_close(lib);
    return rc;
}
