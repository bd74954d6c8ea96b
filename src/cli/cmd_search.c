/*
 * `search [--json] [--explain] [--limit N] [--video ID] [--source speech|screen|title]
 * [--mode words|meaning|hybrid] QUERY`: every hit is a moment (video, start, end,
 * source) with the matched terms marked, the signals that found it and, when found by
 * meaning or pictures, how far it stands above chance ("strong", "weak"); --explain
 * prints the relevance floors first.
 */
#include "base/util.h"
#include "cli/cli.h"
#include "model/stage_config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The hit text with the library's marks turned into open/close strings. */
static char *marked(const char *text, const char *open, const char *close)
{
    size_t n = 0, cap = strlen(text) * 4 + 1;
    char *out = malloc(cap + 1);

    if (!out)
        abort();
    for (const char *p = text; *p;) {
        const char *put = NULL;
        char one[8];

        if (*p == VT_MARK_OPEN[0])
            put = open, p++;
        else if (*p == VT_MARK_CLOSE[0])
            put = close, p++;
        else
            put = cli_safe_char(&p, one); /* newlines between OCR lines, no terminal control */
        for (; *put; put++) {
            if (n + 1 >= cap) {
                cap *= 2;
                out = realloc(out, cap + 1);
                if (!out)
                    abort();
            }
            out[n++] = *put;
        }
    }
    out[n] = '\0';
    return out;
}

static void print_json(const char *query, const struct vt_search_info *info, const struct vt_hit *h,
                       size_t n)
{
    char *s = vt_hits_json(query, info, h, n);

    if (!s)
        abort();
    if (isatty(STDOUT_FILENO)) {
        /* as export: JSON for tools as it is, made safe when a person reads it */
        cli_put_text(stdout, s);
        fputc('\n', stdout);
    } else {
        puts(s);
    }
    free(s);
}

/* The signals of a hit found by more than the words, e.g. " (words+meaning)"; "" else. */
static const char *signals(unsigned m)
{
    static const char *const names[8] = {"",
                                         "",
                                         " (meaning)",
                                         " (words+meaning)",
                                         " (visual)",
                                         " (words+visual)",
                                         " (meaning+visual)",
                                         " (words+meaning+visual)"};

    return names[m & 7];
}

static void print_text(const struct vt_hit *h, size_t n)
{
    int tty = isatty(STDOUT_FILENO);

    for (size_t i = 0; i < n; i++) {
        char a[32], b[32];
        char *text = marked(h[i].text, tty ? "\033[1m" : "[", tty ? "\033[0m" : "]");
        char *title = marked(h[i].title, "", "");

        vt_fmt_duration(a, sizeof(a), h[i].start_s);
        vt_fmt_duration(b, sizeof(b), h[i].end_s);
        const char *rel = vt_relevance_name(h[i].relevance);
        printf("%s %s-%s %-6s%s%s%s%s %s\n    %s\n", h[i].video_id, a, b, h[i].source,
               h[i].approx ? " ~" : "", signals(h[i].matched), rel ? " " : "", rel ? rel : "",
               title, text);
        free(text);
        free(title);
    }
}

/* Whether a search by meaning would ask an embeddings server (over HTTP: the full
 * binary's business). */
static int needs_server(struct vt_library *lib)
{
    struct vt_config *cf = NULL;
    char err[256];
    int yes = 0;

    if (!vt_config_load(vt_library_dir(lib), &cf, err, sizeof(err))) {
        yes = !strcmp(vt_config_backend(cf, VT_STAGE_TEXT_EMBED, NULL), "openai");
        /* a joint text-image server answers words too */
        yes |= !strcmp(vt_config_backend(cf, VT_STAGE_FRAME_EMBED, NULL), "openai");
        vt_config_free(cf);
    }
    return yes;
}

/* --explain: the relevance floor each vector space gave the search, before the hits. */
static void print_floors(const struct vt_search_info *info)
{
    for (int i = 0; i < 2; i++) {
        const struct vt_search_floor *f = &info->floors[i];
        if (!f->signal[0])
            continue;
        printf("%s: floor %.4f, strong from %.4f; chance %.4f +- %.4f, best %.4f over %d "
               "queries that cannot match, %lld vectors (%s); %d nearest below the floor\n    "
               "space ",
               f->signal, f->floor, f->strong, f->chance_mean, f->chance_sd, f->chance_max,
               f->probes, f->vectors, f->measured ? "measured now" : "kept", f->below);
        cli_put_safe(stdout, f->space);
        fputc('\n', stdout);
    }
    if (info->mode == VT_SEARCH_WORDS)
        puts("words only: no relevance floor applies");
}

int cmd_search(int argc, char **argv)
{
    static const struct option longs[] = {
        {"json", no_argument, NULL, 'j'},          {"limit", required_argument, NULL, 'n'},
        {"video", required_argument, NULL, 'v'},   {"source", required_argument, NULL, 's'},
        {"library", required_argument, NULL, 'L'}, {"mode", required_argument, NULL, 'm'},
        {"explain", no_argument, NULL, 'x'},       {NULL, 0, NULL, 0}};
    struct vt_search_opts opts = {0};
    struct vt_library *lib;
    struct vt_hit *hits;
    size_t n;
    struct vt_search_info info;
    int json = 0, explain = 0, c, rc;
    char *end;

    struct cli_opt g;

    cli_opt_init(&g, "search", argc, argv, "L:jn:v:s:m:", longs);
    while ((c = cli_opt_next(&g)) != -1) {
        switch (c) {
        case 'L':
            cli_opts.library = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'x':
            explain = 1;
            break;
        case 'n':
            opts.limit = (int)strtol(optarg, &end, 10);
            if (*end || opts.limit < 1 || opts.limit > 1000)
                return cli_usage_error("search", "--limit wants 1..1000");
            break;
        case 'v':
            opts.video = optarg;
            break;
        case 's':
            if (strcmp(optarg, "speech") && strcmp(optarg, "screen") && strcmp(optarg, "title"))
                return cli_usage_error("search", "--source is speech, screen or title");
            opts.source = optarg;
            break;
        case 'm':
            if (vt_search_mode_parse(optarg, &opts.mode))
                return cli_usage_error("search", "--mode is words, meaning or hybrid");
            break;
        default:
            return EXIT_USAGE; /* cli_opt_next said why */
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("search", "one QUERY, quoted if it has spaces");
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    if (cli_run_full && opts.mode != VT_SEARCH_WORDS && needs_server(lib)) {
        vt_library_close(lib);
        return cli_run_full(argc, argv);
    }
    rc = vt_search(lib, argv[optind], strlen(argv[optind]), &opts, &hits, &n, &info);
    if (rc) {
        rc = cli_error("%s", vt_errmsg(lib));
    } else {
        if (info.warning[0])
            cli_info("warning: %s", info.warning);
        if (json) {
            print_json(argv[optind], &info, hits, n); /* its "floors" explain */
        } else {
            if (explain)
                print_floors(&info);
            print_text(hits, n);
        }
        vt_hits_free(hits, n);
        rc = fflush(stdout) ? cli_error("cannot write") : EXIT_OK;
    }
    vt_library_close(lib);
    return rc;
}
