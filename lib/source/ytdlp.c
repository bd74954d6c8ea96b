/*
 * Running yt-dlp (see ytdlp.h): fork and execve with a prepared argument vector
 * and environment, two pipes read with poll, caps checked while it runs.
 */
#include "source/ytdlp.h"

#include "base/util.h"
#include "vidtheque.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Options in front of every call. The configuration files yt-dlp would read
 * (system, user, portable, the working directory's yt-dlp.conf) could add --exec
 * or output paths of someone else's choosing; cookies would leak a browser session. */
static const char *const fixed_args[] = {
    "--ignore-config",
    "--no-cookies",
    "--no-cache-dir",
    "--no-exec",
    "--no-colors",
    "--no-mtime",
    "--newline",
    "--retries",
    "3",
    "--fragment-retries",
    "3",
    "--extractor-retries",
    "1",
    "--socket-timeout",
    "20",
};

/* The environment the child gets: no PYTHONPATH or the like from ours, a home that
 * is the empty working directory (so no user configuration or cache is found). */
static const char *const passed_env[] = {"PATH",        "http_proxy", "https_proxy", "HTTP_PROXY",
                                         "HTTPS_PROXY", "no_proxy",   "NO_PROXY",    "TZ"};

#define STDERR_KEEP 8192

const char *vt_ytdlp_program(const char *prog)
{
    const char *env = getenv("VIDTHEQUE_YTDLP");

    if (prog && *prog)
        return prog;
    return env && *env ? env : "yt-dlp";
}

/* The program's path: as given when it holds a '/', else found on $PATH. */
static char *resolve_program(const char *prog)
{
    const char *path = getenv("PATH");
    char *copy, *save = NULL;

    if (strchr(prog, '/'))
        return access(prog, X_OK) ? NULL : vt_xstrdup(prog);
    copy = vt_xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        char *p = vt_xasprintf("%s/%s", *dir ? dir : ".", prog);
        struct stat st;

        if (!stat(p, &st) && S_ISREG(st.st_mode) && !access(p, X_OK)) {
            free(copy);
            return p;
        }
        free(p);
    }
    free(copy);
    return NULL;
}

static char **build_env(const char *home)
{
    size_t n = 0, cap = VT_ARRAY_LEN(passed_env) + 10;
    char **env = vt_xcalloc(cap, sizeof(*env));

    for (size_t i = 0; i < VT_ARRAY_LEN(passed_env); i++) {
        const char *v = getenv(passed_env[i]);

        if (v)
            env[n++] = vt_xasprintf("%s=%s", passed_env[i], v);
    }
    if (!getenv("PATH"))
        env[n++] = vt_xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
    env[n++] = vt_xasprintf("HOME=%s", home);
    env[n++] = vt_xasprintf("XDG_CONFIG_HOME=%s", home);
    env[n++] = vt_xasprintf("XDG_CACHE_HOME=%s", home);
    env[n++] = vt_xstrdup("LC_ALL=C.UTF-8");
    env[n++] = vt_xstrdup("PYTHONIOENCODING=utf-8");
    env[n++] = vt_xstrdup("PYTHONDONTWRITEBYTECODE=1");
    env[n++] = vt_xstrdup("PYTHONNOUSERSITE=1");
    return env;
}

static void free_vec(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* Bytes of the regular files under dir, a few levels deep. */
static int64_t dir_bytes(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int64_t sum = 0;

    if (!d)
        return 0;
    while ((e = readdir(d))) {
        struct stat st;

        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
            continue;
        if (S_ISREG(st.st_mode)) {
            sum += st.st_size;
        } else if (S_ISDIR(st.st_mode) && depth > 0) {
            char *sub = vt_xasprintf("%s/%s", dir, e->d_name);

            sum += dir_bytes(sub, depth - 1);
            free(sub);
        }
    }
    closedir(d);
    return sum;
}

/* yt-dlp's last "ERROR: ..." line in what it wrote to stderr, cleaned for one line. */
static void last_error_line(const char *buf, size_t len, char *out, size_t n)
{
    const char *best = NULL, *end = NULL;

    for (const char *p = buf; p < buf + len;) {
        const char *nl = memchr(p, '\n', (size_t)(buf + len - p));
        const char *e = nl ? nl : buf + len;

        if (e - p > 7 && !memcmp(p, "ERROR: ", 7)) {
            best = p + 7;
            end = e;
        }
        p = e + 1;
    }
    out[0] = '\0';
    if (!best)
        return;
    {
        char *line = vt_xmalloc((size_t)(end - best) + 1);
        char *clean;
        size_t w = 0;

        /* without terminal colour codes (ESC [ ... letter) and control characters */
        for (const char *p = best; p < end; p++) {
            if (*p == 0x1b && p + 1 < end && p[1] == '[') {
                for (p += 2; p < end && !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'));)
                    p++;
                continue;
            }
            line[w++] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
        }
        line[w] = '\0';
        /* Python's exception chain repeats what the message said */
        if (strstr(line, " (caused by "))
            *strstr(line, " (caused by ") = '\0';
        clean = vt_utf8_clean(line);
        snprintf(out, n, "%s", clean);
        free(line);
        free(clean);
    }
}

/* "[vtprogress] DONE TOTAL ESTIMATE" lines, printed through --progress-template;
 * 1 when yt-dlp says it refused the file for --max-filesize (it then exits 0). */
static int parse_progress(const char *line, void (*progress)(void *, double), void *pctx)
{
    double done, total, estimate;
    char t[32], e[32];

    if (strstr(line, "larger than max-filesize"))
        return 1;
    if (strncmp(line, "[vtprogress] ", 13) || !progress)
        return 0;
    if (sscanf(line + 13, "%lf %31s %31s", &done, t, e) != 3)
        return 0;
    total = strtod(t, NULL);
    estimate = strtod(e, NULL);
    if (!(total > 0))
        total = estimate;
    if (total > 0 && done >= 0)
        progress(pctx, done >= total ? 0.99 : done / total);
    return 0;
}

static void kill_group(pid_t pid)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

/* A running yt-dlp: the child, its pipes and what was read from them. */
struct child {
    pid_t pid;
    int outp[2], errp[2], devnull;
    struct vt_sb sout;         /* stdout, when the caller wants it */
    char errbuf[STDERR_KEEP];  /* the tail of stderr */
    size_t errused;
    char line[512];            /* the stdout line being read, for progress */
    size_t linelen;
    int too_large;             /* yt-dlp refused the file for --max-filesize */
    const char *stopped;       /* why we stopped it: "time", "size", "output", "poll" */
};

/* The argument vector: the program's path, fixed_args, the progress template, args. */
static char **build_argv(const char *path, const char *const *args, int with_progress)
{
    size_t nargs = 0, k = 0;
    char **argv;

    while (args[nargs])
        nargs++;
    argv = vt_xcalloc(VT_ARRAY_LEN(fixed_args) + nargs + 6, sizeof(*argv));
    argv[k++] = vt_xstrdup(path);
    for (size_t i = 0; i < VT_ARRAY_LEN(fixed_args); i++)
        argv[k++] = vt_xstrdup(fixed_args[i]);
    if (with_progress) {
        argv[k++] = vt_xstrdup("--progress-template");
        argv[k++] = vt_xstrdup("download:[vtprogress] %(progress.downloaded_bytes)s "
                               "%(progress.total_bytes)s %(progress.total_bytes_estimate)s");
    }
    for (size_t i = 0; i < nargs; i++)
        argv[k++] = vt_xstrdup(args[i]);
    return argv;
}

/* Start the child in cwd, its stdin /dev/null, its stdout and stderr our pipes. */
static int spawn(struct child *c, char **argv, char **env, const char *cwd, const char *prog,
                 char *err, size_t errlen)
{
    pid_t parent = getpid();

    c->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (c->devnull < 0 || pipe2(c->outp, O_CLOEXEC) || pipe2(c->errp, O_CLOEXEC))
        return vt_err(err, errlen, VT_EIO, "cannot run '%s': %s", prog, strerror(errno));
    c->pid = fork();
    if (c->pid < 0)
        return vt_err(err, errlen, VT_EIO, "cannot run '%s': %s", prog, strerror(errno));
    if (c->pid == 0) {
        /* only async-signal-safe calls until execve: everything was prepared above */
        sigset_t none;

        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed vidtheque leaves no download behind */
        if (getppid() != parent)
            _exit(127);
        setpgid(0, 0);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (chdir(cwd) || dup2(c->devnull, 0) < 0 || dup2(c->outp[1], 1) < 0 ||
            dup2(c->errp[1], 2) < 0)
            _exit(126);
        execve(argv[0], argv, env);
        _exit(127);
    }
    setpgid(c->pid, c->pid);
    close(c->outp[1]);
    close(c->errp[1]);
    c->outp[1] = c->errp[1] = -1;
    return 0;
}

/* Keep the tail of stderr: the error yt-dlp ends with is what matters. */
static void keep_stderr(struct child *c, const char *buf, size_t got)
{
    if (got >= sizeof(c->errbuf)) {
        memcpy(c->errbuf, buf + got - sizeof(c->errbuf), sizeof(c->errbuf));
        c->errused = sizeof(c->errbuf);
        return;
    }
    if (c->errused + got > sizeof(c->errbuf)) {
        size_t drop = c->errused + got - sizeof(c->errbuf);

        memmove(c->errbuf, c->errbuf + drop, c->errused - drop);
        c->errused -= drop;
    }
    memcpy(c->errbuf + c->errused, buf, got);
    c->errused += got;
}

/* Stdout: kept when want_out (within the cap, else stopped), read line by line for progress. */
static void take_stdout(struct child *c, const char *buf, size_t got, int want_out,
                        const struct vt_ytdlp_limits *lim, void (*progress)(void *, double),
                        void *pctx)
{
    if (want_out) {
        if (c->sout.len + got > lim->max_stdout) {
            c->stopped = "output";
            return;
        }
        vt_sb_add(&c->sout, buf, got);
    }
    for (size_t k = 0; k < got; k++) {
        if (buf[k] == '\n' || c->linelen + 1 == sizeof(c->line)) {
            c->line[c->linelen] = '\0';
            c->too_large |= parse_progress(c->line, progress, pctx);
            c->linelen = 0;
        } else {
            c->line[c->linelen++] = buf[k];
        }
    }
}

/* Whether the watched folder has grown over the size cap. */
static int over_size(const struct vt_ytdlp_limits *lim)
{
    return lim->watch_dir && lim->max_bytes > 0 && dir_bytes(lim->watch_dir, 3) > lim->max_bytes;
}

/* Read both pipes until the child closes them, or stop it (c->stopped says why) when it
 * goes over a cap. */
static void read_child(struct child *c, double t0, const struct vt_ytdlp_limits *lim,
                       int want_out, void (*progress)(void *, double), void *pctx)
{
    double next_watch = 0;

    while (c->outp[0] >= 0 || c->errp[0] >= 0) {
        struct pollfd pf[2] = {{c->outp[0], POLLIN, 0}, {c->errp[0], POLLIN, 0}};
        double now = vt_monotonic_s();
        char buf[16384];

        if (now - t0 > lim->max_time_s) {
            c->stopped = "time";
            break;
        }
        if (lim->watch_dir && lim->max_bytes > 0 && now >= next_watch) {
            next_watch = now + 0.2;
            if (over_size(lim)) {
                c->stopped = "size";
                break;
            }
        }
        if (poll(pf, 2, 200) < 0 && errno != EINTR) {
            c->stopped = "poll";
            break;
        }
        for (int i = 0; i < 2 && !c->stopped; i++) {
            ssize_t got;

            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            got = read(pf[i].fd, buf, sizeof(buf));
            if (got < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (got <= 0) {
                close(pf[i].fd);
                if (i == 0)
                    c->outp[0] = -1;
                else
                    c->errp[0] = -1;
            } else if (i == 1) {
                keep_stderr(c, buf, (size_t)got);
            } else {
                take_stdout(c, buf, (size_t)got, want_out, lim, progress, pctx);
            }
        }
        if (c->stopped)
            break;
    }
}

/* Wait for the child's end (killing it when stopped or past the time cap) and its group's. */
static int reap(struct child *c, double t0, const struct vt_ytdlp_limits *lim)
{
    int status = 0;

    if (c->stopped)
        kill_group(c->pid);
    for (;;) {
        pid_t w = waitpid(c->pid, &status, WNOHANG);

        if (w == c->pid || (w < 0 && errno != EINTR))
            break;
        if (w == 0 && !c->stopped && vt_monotonic_s() - t0 > lim->max_time_s) {
            c->stopped = "time"; /* it closed its output but lingers */
            kill_group(c->pid);
        }
        if (w == 0)
            usleep(20000);
    }
    /* whatever it started (ffmpeg merging formats) goes with it */
    kill(-c->pid, SIGKILL);
    /* a download faster than our look every 0.2 s, or one yt-dlp itself refused */
    if (!c->stopped && (c->too_large || over_size(lim)))
        c->stopped = "size";
    return status;
}

/* The error for a child we stopped. */
static int stopped_error(const char *stopped, const struct vt_ytdlp_limits *lim, char *err,
                         size_t errlen)
{
    if (!strcmp(stopped, "time"))
        return vt_err(err, errlen, VT_EIO, "yt-dlp stopped after %.0f s (the time cap)",
                      lim->max_time_s);
    if (!strcmp(stopped, "size"))
        return vt_err(err, errlen, VT_EINVAL, "download refused: larger than %lld MiB (the size cap)",
                      (long long)(lim->max_bytes >> 20));
    if (!strcmp(stopped, "output"))
        return vt_err(err, errlen, VT_EINVAL, "yt-dlp printed more than %zu MiB: refused",
                      lim->max_stdout >> 20);
    return vt_err(err, errlen, VT_EIO, "waiting for yt-dlp: %s", strerror(errno));
}

/* The error for a child that failed: its own last ERROR line when it wrote one. */
static int exit_error(const struct child *c, int status, const char *prog, char *err,
                      size_t errlen)
{
    char msg[400];

    last_error_line(c->errbuf, c->errused, msg, sizeof(msg));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !msg[0])
        return vt_err(err, errlen, VT_ENOTFOUND, "'%s': cannot be run", prog);
    if (msg[0])
        return vt_err(err, errlen, strstr(msg, "Unsupported URL") ? VT_EINVAL : VT_EIO, "%s", msg);
    if (WIFSIGNALED(status))
        return vt_err(err, errlen, VT_EIO, "yt-dlp killed by signal %d", WTERMSIG(status));
    return vt_err(err, errlen, VT_EIO, "yt-dlp failed (exit status %d)", WEXITSTATUS(status));
}

int vt_ytdlp_run(const char *prog, const char *const *args, const char *cwd,
                 const struct vt_ytdlp_limits *lim, char **out, size_t *out_len,
                 void (*progress)(void *ctx, double frac), void *pctx, char *err, size_t errlen)
{
    struct child c = {.outp = {-1, -1}, .errp = {-1, -1}, .devnull = -1};
    char *path = resolve_program(prog), **argv = NULL, **env = NULL;
    double t0 = vt_monotonic_s();
    int status, rc;

    if (out)
        *out = NULL;
    if (out_len)
        *out_len = 0;
    if (!path)
        return vt_err(err, errlen, VT_ENOTFOUND,
                      "'%s': program not found (install yt-dlp, or "
                      "set --yt-dlp PATH or VIDTHEQUE_YTDLP)",
                      prog);
    argv = build_argv(path, args, progress != NULL);
    env = build_env(cwd);
    rc = spawn(&c, argv, env, cwd, prog, err, errlen);
    if (rc)
        goto out;
    read_child(&c, t0, lim, out != NULL, progress, pctx);
    status = reap(&c, t0, lim);
    if (c.stopped)
        rc = stopped_error(c.stopped, lim, err, errlen);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        rc = exit_error(&c, status, prog, err, errlen);
    if (!rc && out) {
        vt_sb_addc(&c.sout, '\0');
        if (out_len)
            *out_len = c.sout.len - 1;
        *out = vt_sb_detach(&c.sout);
    }
out:
    for (int i = 0; i < 2; i++) {
        if (c.outp[i] >= 0)
            close(c.outp[i]);
        if (c.errp[i] >= 0)
            close(c.errp[i]);
    }
    if (c.devnull >= 0)
        close(c.devnull);
    vt_sb_release(&c.sout);
    free_vec(argv);
    free_vec(env);
    free(path);
    return rc;
}

int vt_ytdlp_version(const char *prog, char *buf, size_t n, char *err, size_t errlen)
{
    static const char *const args[] = {"--version", NULL};
    struct vt_ytdlp_limits lim = {.max_time_s = 30, .max_stdout = 4096};
    const char *tmp = getenv("TMPDIR");
    char *cwd = vt_xasprintf("%s/vidtheque-ytdlp-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    char *out = NULL;
    int rc;

    if (!mkdtemp(cwd)) {
        free(cwd);
        return vt_err(err, errlen, VT_EIO, "cannot make a temporary folder: %s", strerror(errno));
    }
    rc = vt_ytdlp_run(prog, args, cwd, &lim, &out, NULL, NULL, NULL, err, errlen);
    vt_rm_rf(cwd);
    free(cwd);
    if (rc)
        return rc;
    out[strcspn(out, "\r\n")] = '\0';
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            *p = '?';
    snprintf(buf, n, "yt-dlp %.40s", out);
    free(out);
    return 0;
}
