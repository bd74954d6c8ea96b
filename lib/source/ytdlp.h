/*
 * Running the yt-dlp program on untrusted URLs. It is a separate program (a site's
 * extractor changes faster than we could follow), so everything here is about
 * running it safely: an argument vector and never a shell, a clean environment, a
 * working directory that is an empty folder, no configuration files, a time cap and
 * a cap on the bytes it writes and prints, and the whole process group killed when
 * a cap is hit or when we die.
 */
#ifndef VT_YTDLP_H
#define VT_YTDLP_H

#include <stddef.h>
#include <stdint.h>

struct vt_ytdlp_limits {
    double max_time_s; /* wall-clock seconds before the child is killed */
    int64_t max_bytes; /* bytes under watch_dir before it is killed (0: no watch) */
    size_t max_stdout; /* bytes of standard output kept; more kills it */
    const char *watch_dir;
};

/* The program to run: prog if given, else $VIDTHEQUE_YTDLP, else "yt-dlp". */
const char *vt_ytdlp_program(const char *prog);

/*
 * "yt-dlp 2023.03.04" into buf (the first line of `PROG --version`). VT_ENOTFOUND
 * with one line in err when the program cannot be run.
 */
int vt_ytdlp_version(const char *prog, char *buf, size_t n, char *err, size_t errlen);

/*
 * Run prog with the options in args (NULL-terminated; "--ignore-config" and the
 * other safety options are added in front, args never reach a shell) in cwd, which
 * must be an empty directory the caller made. Standard output is returned in *out
 * (NUL-terminated, caller frees; may be NULL when not wanted) up to lim->max_stdout.
 * progress (may be NULL) gets 0..1 from yt-dlp's download progress lines.
 *
 * Returns 0 when the program exits 0. Otherwise a negative VT_E* code and one line in
 * err: yt-dlp's own last "ERROR:" line when it printed one, else what stopped it
 * (time cap, size cap, a signal, its exit status).
 */
int vt_ytdlp_run(const char *prog, const char *const *args, const char *cwd,
                 const struct vt_ytdlp_limits *lim, char **out, size_t *out_len,
                 void (*progress)(void *ctx, double frac), void *pctx, char *err, size_t errlen);

#endif
