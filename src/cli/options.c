/*
 * Reading a command's options: getopt_long underneath, options and arguments in any
 * order, and usage errors that name the argument as it was typed (src/cli/cli.h).
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

const struct option cli_no_long[] = {{"library", required_argument, NULL, 'L'},
                                     {"quiet", no_argument, NULL, 'q'},
                                     {NULL, 0, NULL, 0}};

void cli_opt_init(struct cli_opt *g, const char *cmd, int argc, char **argv, const char *shortopts,
                  const struct option *longs)
{
    memset(g, 0, sizeof(*g));
    g->cmd = cmd;
    g->argc = argc;
    g->argv = argv;
    /* '-': options and other arguments in the order given (no permutation), so the
     * element an option came from is known; the others are gathered by cli_opt_next */
    snprintf(g->spec, sizeof(g->spec), "-%s", shortopts);
    g->longs = longs;
    g->longindex = -1;
    optind = 0; /* glibc: start over, reading the '-' above */
    opterr = 0;
}

/* Whether short option c exists (':' never does). */
static int short_known(const struct cli_opt *g, int c)
{
    return c && c != ':' && c != '-' && strchr(g->spec, c);
}

/* The usage error for the option getopt_long refused in argv[g->elem]. */
static int refused(struct cli_opt *g)
{
    const char *e = g->argv[g->elem];
    int is_long = !strncmp(e, "--", 2);
    int n = is_long ? (int)strcspn(e, "=") : 2;
    int known = is_long ? optopt != 0 : short_known(g, optopt);

    if (known && !is_long)
        return cli_usage_error(g->cmd, "%s: option '-%c' needs a value", g->cmd, optopt);
    if (known)
        return cli_usage_error(g->cmd, "%s: option '%.*s' needs a value", g->cmd, n, e);
    if (is_long && !strpbrk(e, "./"))
        return cli_usage_error(g->cmd, "%s: unknown option '%.*s'", g->cmd, n, e);
    if (!is_long && strlen(e) > 2 && !strpbrk(e, "./"))
        return cli_usage_error(g->cmd, "%s: unknown option '-%c' in '%s'", g->cmd, optopt, e);
    if (strpbrk(e, "./"))
        /* more likely a file named like an option: say how to give it */
        return cli_usage_error(g->cmd,
                               "%s: unknown option '%s' (a file? write './%s', or '--' before it)",
                               g->cmd, e, e);
    return cli_usage_error(g->cmd, "%s: unknown option '%s'", g->cmd, e);
}

int cli_opt_next(struct cli_opt *g)
{
    for (;;) {
        int at = optind ? optind : 1, c;

        g->longindex = -1;
        c = getopt_long(g->argc, g->argv, g->spec, g->longs, &g->longindex);
        g->elem = at; /* in order: the element being read when the call started */
        if (c == 1) {
            /* an argument: moved to the front, behind those before it (slots read) */
            g->argv[1 + g->npos++] = optarg;
            continue;
        }
        if (c == -1) {
            /* after "--", the rest are arguments too; then all go to the end */
            while (optind < g->argc)
                g->argv[1 + g->npos++] = g->argv[optind++];
            memmove(&g->argv[g->argc - g->npos], &g->argv[1], (size_t)g->npos * sizeof(char *));
            optind = g->argc - g->npos;
            return -1;
        }
        if (c == '?' || c == ':') {
            refused(g);
            return '?';
        }
        return c;
    }
}

int cli_opt_bad_value(struct cli_opt *g, int c, const char *want)
{
    char name[64];

    if (g->longindex >= 0)
        snprintf(name, sizeof(name), "--%s", g->longs[g->longindex].name);
    else
        snprintf(name, sizeof(name), "-%c", c);
    return cli_usage_error(g->cmd, "%s: bad value '%s' for %s%s%s", g->cmd, optarg ? optarg : "",
                           name, want ? ": " : "", want ? want : "");
}

int cli_parse(const char *cmd, int argc, char **argv, const char *shortopts,
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
