/*
 * The yt-dlp runner on stand-in programs (shell scripts written here): arguments
 * reach the program verbatim and never a shell, the environment and working
 * directory are ours, and the caps (time, bytes written, bytes printed) stop it.
 */
#include "base/util.h"
#include "harness.h"
#include "source/ytdlp.h"
#include "vidtheque.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct fake {
    char dir[64], prog[96], cwd[96];
};

static void fake_make(struct fake *f, const char *body)
{
    FILE *fp;

    snprintf(f->dir, sizeof(f->dir), "/tmp/vt-ytdlp-test.XXXXXX");
    if (!mkdtemp(f->dir))
        abort();
    snprintf(f->prog, sizeof(f->prog), "%s/yt-dlp", f->dir);
    snprintf(f->cwd, sizeof(f->cwd), "%s/cwd", f->dir);
    mkdir(f->cwd, 0755);
    fp = fopen(f->prog, "w");
    fprintf(fp, "#!/bin/sh\n%s\n", body);
    fclose(fp);
    chmod(f->prog, 0755);
}

static void fake_done(struct fake *f)
{
    vt_rm_rf(f->dir);
}

static struct vt_ytdlp_limits lim(double t)
{
    struct vt_ytdlp_limits l = {.max_time_s = t, .max_stdout = 1 << 20};

    return l;
}

VT_TEST(ytdlp_args_verbatim_env_cwd)
{
    struct fake f;
    const char *args[] = {"--", "https://x/$(touch pwned);touch pwned2", NULL};
    struct vt_ytdlp_limits l = lim(10);
    char err[256], *out = NULL, want[256];
    size_t len;
    int rc;

    setenv("PYTHONPATH", "/evil", 1);
    fake_make(&f, "for a in \"$@\"; do echo \"[$a]\"; done; pwd; echo \"home=$HOME\";"
                  " echo \"pp=${PYTHONPATH:-unset}\"");
    rc = vt_ytdlp_run(f.prog, args, f.cwd, &l, &out, &len, NULL, NULL, err, sizeof(err));
    CHECK_INT(rc, 0);
    CHECK(out && !strncmp(out, "[--ignore-config]\n", 18));
    CHECK(out && strstr(out, "[--no-cookies]\n"));
    CHECK(out && strstr(out, "[--]\n[https://x/$(touch pwned);touch pwned2]\n"));
    snprintf(want, sizeof(want), "\n%s\nhome=%s\n", f.cwd, f.cwd);
    CHECK(out && strstr(out, want));
    CHECK(out && strstr(out, "pp=unset"));
    CHECK(access("pwned", F_OK) && access("pwned2", F_OK));
    free(out);
    fake_done(&f);
    unsetenv("PYTHONPATH");
}

VT_TEST(ytdlp_error_line)
{
    struct fake f;
    const char *args[] = {NULL};
    struct vt_ytdlp_limits l = lim(10);
    char err[256];

    fake_make(&f, "echo 'WARNING: x' >&2; printf 'ERROR: [generic] Unable to download\\033[0m: "
                  "HTTP Error 404\\n' >&2; exit 1");
    CHECK_INT(vt_ytdlp_run(f.prog, args, f.cwd, &l, NULL, NULL, NULL, NULL, err, sizeof(err)),
              VT_EIO);
    CHECK_STR(err, "[generic] Unable to download: HTTP Error 404");
    fake_done(&f);
    fake_make(&f, "echo 'ERROR: Unsupported URL: https://example.com/' >&2; exit 1");
    CHECK_INT(vt_ytdlp_run(f.prog, args, f.cwd, &l, NULL, NULL, NULL, NULL, err, sizeof(err)),
              VT_EINVAL);
    fake_done(&f);
    fake_make(&f, "kill -9 $$");
    CHECK_INT(vt_ytdlp_run(f.prog, args, f.cwd, &l, NULL, NULL, NULL, NULL, err, sizeof(err)),
              VT_EIO);
    CHECK(strstr(err, "signal 9") != NULL);
    fake_done(&f);
    CHECK_INT(vt_ytdlp_run("/nonexistent/yt-dlp", args, "/tmp", &l, NULL, NULL, NULL, NULL, err,
                           sizeof(err)),
              VT_ENOTFOUND);
}

/* Running, as opposed to gone or a zombie nobody reaped (PID 1 in a container may not). */
static int alive(pid_t pid)
{
    char path[64], st[512] = "";
    FILE *fp;
    const char *close_paren;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    fp = fopen(path, "r");
    if (!fp)
        return 0;
    if (!fgets(st, sizeof(st), fp))
        st[0] = '\0';
    fclose(fp);
    close_paren = strrchr(st, ')');
    return close_paren && close_paren[1] == ' ' && close_paren[2] != 'Z';
}

VT_TEST(ytdlp_time_cap_kills_group)
{
    struct fake f;
    const char *args[] = {NULL};
    struct vt_ytdlp_limits l = lim(0.5);
    char err[256], pidfile[128], buf[32] = "";
    double t0 = vt_monotonic_s();
    FILE *fp;

    fake_make(&f, "sleep 30 & echo $! > ../child.pid; sleep 30");
    CHECK_INT(vt_ytdlp_run(f.prog, args, f.cwd, &l, NULL, NULL, NULL, NULL, err, sizeof(err)),
              VT_EIO);
    CHECK(strstr(err, "time cap") != NULL);
    CHECK(vt_monotonic_s() - t0 < 10);
    snprintf(pidfile, sizeof(pidfile), "%s/child.pid", f.dir);
    fp = fopen(pidfile, "r");
    CHECK(fp != NULL);
    if (fp) {
        if (!fgets(buf, sizeof(buf), fp))
            buf[0] = '\0';
        fclose(fp);
        usleep(200000);
        CHECK(!alive((pid_t)atol(buf))); /* its child went with it */
    }
    fake_done(&f);
}

VT_TEST(ytdlp_output_and_size_caps)
{
    struct fake f;
    const char *args[] = {NULL};
    struct vt_ytdlp_limits l = lim(20);
    char err[256], *out = NULL;
    int rc;

    fake_make(&f, "yes 0123456789012345678901234567890123456789");
    l.max_stdout = 100000;
    rc = vt_ytdlp_run(f.prog, args, f.cwd, &l, &out, NULL, NULL, NULL, err, sizeof(err));
    CHECK_INT(rc, VT_EINVAL);
    CHECK(out == NULL);
    fake_done(&f);

    fake_make(&f, "while :; do head -c 65536 /dev/zero >> big.part; done");
    l.max_stdout = 1000;
    l.watch_dir = f.cwd;
    l.max_bytes = 1 << 20;
    rc = vt_ytdlp_run(f.prog, args, f.cwd, &l, NULL, NULL, NULL, NULL, err, sizeof(err));
    CHECK_INT(rc, VT_EINVAL);
    CHECK(strstr(err, "size cap") != NULL);
    fake_done(&f);

    /* yt-dlp's own --max-filesize refusal exits 0 but is not a success */
    fake_make(&f, "echo '[download] File is larger than max-filesize (9 bytes > 1 bytes). "
                  "Aborting.'");
    rc = vt_ytdlp_run(f.prog, args, f.cwd, &l, NULL, NULL, NULL, NULL, err, sizeof(err));
    CHECK_INT(rc, VT_EINVAL);
    fake_done(&f);
}

static double last_frac = -1;

static void on_progress(void *ctx, double frac)
{
    (void)ctx;
    last_frac = frac;
}

VT_TEST(ytdlp_progress_lines)
{
    struct fake f;
    const char *args[] = {NULL};
    struct vt_ytdlp_limits l = lim(10);
    char err[256];

    fake_make(&f, "echo '[vtprogress] 250 1000 NA'; echo '[vtprogress] garbage'; "
                  "echo '[vtprogress] 600 NA 1000'");
    CHECK_INT(
        vt_ytdlp_run(f.prog, args, f.cwd, &l, NULL, NULL, on_progress, NULL, err, sizeof(err)), 0);
    CHECK(fabs(last_frac - 0.6) < 1e-9);
    fake_done(&f);
}
