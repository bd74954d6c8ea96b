/*
 * `serve [--bind ADDR] [--port N] [--read-only] [--token-file F] [LIMITS]`: the web
 * front-end (src/web/web_server.c). This file parses the options and settles the write token: read
 * from --token-file, or made from /dev/urandom and printed once on stderr. API clients send
 * it as a bearer token; a person types it once into /login (web_session.c keeps a session). In
 * read-only mode there is no token and every write is refused. The LIMITS (--max-per-ip,
 * --max-connections, --head-timeout, --deadline, --idle-timeout) are in docs/API.md.
 */
#include "cli/cli.h"
#include "web/web.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first line of path, trimmed; at least 16 characters. Caller frees. */
static char *read_token(const char *path)
{
    char buf[512];
    size_t n;
    FILE *f = fopen(path, "r");

    if (!f) {
        cli_error("'%s': cannot read the token file", path);
        return NULL;
    }
    if (!fgets(buf, sizeof(buf), f))
        buf[0] = '\0';
    fclose(f);
    n = strcspn(buf, "\r\n");
    buf[n] = '\0';
    while (n && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        buf[--n] = '\0';
    if (n < 16) {
        cli_error("'%s': the token is shorter than 16 characters", path);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f) {
            cli_error("'%s': the token has a space or a non-ASCII character", path);
            return NULL;
        }
    }
    return strdup(buf);
}

static char *make_token(void)
{
    unsigned char raw[24];
    char *out;
    size_t got = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        cli_error("'/dev/urandom': cannot open");
        return NULL;
    }
    while (got < sizeof(raw)) {
        ssize_t r = read(fd, raw + got, sizeof(raw) - got);

        if (r <= 0) {
            close(fd);
            cli_error("'/dev/urandom': cannot read");
            return NULL;
        }
        got += (size_t)r;
    }
    close(fd);
    out = malloc(sizeof(raw) * 2 + 1);
    if (!out)
        abort();
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return out;
}

int cmd_serve(int argc, char **argv)
{
    static const struct option longs[] = {{"bind", required_argument, NULL, 'b'},
                                          {"port", required_argument, NULL, 'p'},
                                          {"read-only", no_argument, NULL, 'r'},
                                          {"token-file", required_argument, NULL, 't'},
                                          {"max-per-ip", required_argument, NULL, 'm'},
                                          {"deadline", required_argument, NULL, 'd'},
                                          {"head-timeout", required_argument, NULL, 'H'},
                                          {"idle-timeout", required_argument, NULL, 'I'},
                                          {"max-connections", required_argument, NULL, 'C'},
                                          {"library", required_argument, NULL, 'L'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {NULL, 0, NULL, 0}};
    struct web_opts o = {.bind = "127.0.0.1", .port = 8080};
    const char *token_file = NULL;
    char dir[PATH_MAX], *token = NULL, *end;
    struct vt_library *lib;
    long port;
    int c, rc;

    struct cli_opt g;

    cli_opt_init(&g, "serve", argc, argv, "L:q", longs);
    while ((c = cli_opt_next(&g)) != -1) {
        switch (c) {
        case 'L':
            cli_opts.library = optarg;
            break;
        case 'q':
            cli_opts.quiet = 1;
            break;
        case 'b':
            o.bind = optarg;
            break;
        case 'p':
            port = strtol(optarg, &end, 10);
            if (*end || end == optarg || port < 0 || port > 65535)
                return cli_usage_error("serve", "--port wants 0..65535");
            o.port = (unsigned)port;
            break;
        case 'r':
            o.read_only = 1;
            break;
        case 't':
            token_file = optarg;
            break;
        case 'm':
            port = strtol(optarg, &end, 10);
            if (*end || end == optarg || port < 1 || port > 1000)
                return cli_usage_error("serve", "--max-per-ip wants 1..1000");
            o.max_per_ip = (unsigned)port;
            break;
        case 'd':
            port = strtol(optarg, &end, 10);
            if (*end || end == optarg || port < 1 || port > 3600)
                return cli_usage_error("serve", "--deadline wants 1..3600 seconds");
            o.deadline_s = (unsigned)port;
            break;
        case 'H':
        case 'I':
            port = strtol(optarg, &end, 10);
            if (*end || end == optarg || port < 1 || port > 3600)
                return cli_usage_error("serve", "--%s wants 1..3600 seconds",
                                       c == 'H' ? "head-timeout" : "idle-timeout");
            if (c == 'H')
                o.head_timeout_s = (unsigned)port;
            else
                o.idle_timeout_s = (unsigned)port;
            break;
        case 'C':
            port = strtol(optarg, &end, 10);
            if (*end || end == optarg || port < 8 || port > 65536)
                return cli_usage_error("serve", "--max-connections wants 8..65536");
            o.max_connections = (unsigned)port;
            break;
        default:
            return EXIT_USAGE; /* cli_opt_next said why */
        }
    }
    if (optind != argc)
        return cli_usage_error("serve", "unexpected argument '%s'", argv[optind]);
    if (o.read_only && token_file)
        return cli_usage_error("serve", "--read-only takes no --token-file");
    {
        unsigned char addr[16];

        if (inet_pton(strchr(o.bind, ':') ? AF_INET6 : AF_INET, o.bind, addr) != 1)
            return cli_usage_error("serve", "'%s': --bind wants a numeric IP address", o.bind);
    }

    /* open once here so a missing library is one clear error before listening */
    lib = cli_open_library(o.read_only ? VT_OPEN_READ : 0);
    if (!lib)
        return EXIT_ERR;
    snprintf(dir, sizeof(dir), "%s", vt_library_dir(lib));
    vt_library_close(lib);
    o.library_dir = dir;

    if (!o.read_only) {
        token = token_file ? read_token(token_file) : make_token();
        if (!token)
            return EXIT_ERR;
        if (!token_file)
            fprintf(stderr, "write token: %s\n", token);
        o.token = token;
    }
    rc = web_serve(&o) ? EXIT_ERR : EXIT_OK;
    free(token);
    return rc;
}
