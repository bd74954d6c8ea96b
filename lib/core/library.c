/*
 * The library handle: opening a library directory, its errors and log, the locks
 * that tell a live stage owner from a dead one, listing, checking and removing
 * videos. Adding a local file is lib/run/add.c's, a URL add_url.c's; the per-video work
 * lives in lib/run/pipeline.c and lib/stages/, which call in here and never the other way.
 */
#include "core/library.h"

#include "base/config.h"
#include "base/util.h"
#include "media/media.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int vt_lib_fail(struct vt_library *lib, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(lib->err, sizeof(lib->err), fmt, ap);
    va_end(ap);
    lib->err_code = code;
    return code;
}

int vt_lib_end_write(struct vt_library *lib, int rc)
{
    if (!rc)
        rc = vt_store_commit(lib->store);
    else
        vt_store_rollback(lib->store);
    return rc ? vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store)) : 0;
}

int vt_errcode(const struct vt_library *lib)
{
    return lib->err_code;
}

void vt_clear_error(struct vt_library *lib)
{
    lib->err[0] = '\0';
    lib->err_code = 0;
}

const char *vt_errmsg(const struct vt_library *lib)
{
    return lib->err;
}

const char *vt_library_dir(const struct vt_library *lib)
{
    return lib->dir;
}

int vt_library_read_only(const struct vt_library *lib)
{
    return vt_store_read_only(lib->store);
}

void vt_library_set_callbacks(struct vt_library *lib, const struct vt_callbacks *cb)
{
    lib->cb = *cb;
}

void vt_log(struct vt_library *lib, int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    if (!lib || !lib->cb.log)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    lib->cb.log(lib->cb.user, level, buf);
}

int vt_library_default_dir(const char *dir, char *buf, size_t n)
{
    const char *env = getenv("VIDTHEQUE_LIBRARY");
    int w;

    if (dir && *dir)
        w = snprintf(buf, n, "%s", dir);
    else if (env && *env)
        w = snprintf(buf, n, "%s", env);
    else if ((env = getenv("XDG_DATA_HOME")) && *env == '/')
        w = snprintf(buf, n, "%s/vidtheque", env);
    else if ((env = getenv("HOME")) && *env)
        w = snprintf(buf, n, "%s/.local/share/vidtheque", env);
    else
        return VT_EINVAL;
    return w < 0 || (size_t)w >= n ? VT_EINVAL : 0;
}

/*
 * Stage ownership. A stage marked running names its owner, "host:pid:nonce"; the
 * owner holds an exclusive flock on LIBRARY/locks/<pid>-<nonce>.lock for as long as
 * it lives. The kernel drops the lock when the process dies, however it dies: a
 * zombie, a reused pid or a reboot cannot keep a dead owner's stage running. The file
 * gets its final name only once locked, so a lock file under that name that is not
 * locked always means its owner is gone.
 */
static char *owner_lock_path(const struct vt_library *lib, const char *owner)
{
    const char *nonce = strrchr(owner, ':'), *pid;
    long v;
    char digits[24];

    if (!nonce || strlen(nonce + 1) != 16 || strspn(nonce + 1, "0123456789abcdef") != 16)
        return NULL;
    for (pid = nonce; pid > owner && pid[-1] != ':'; pid--)
        ;
    if (pid == owner || (size_t)(nonce - pid) >= sizeof(digits))
        return NULL;
    memcpy(digits, pid, (size_t)(nonce - pid));
    digits[nonce - pid] = '\0';
    if (vt_parse_long(digits, 1, 1L << 30, &v))
        return NULL;
    return vt_xasprintf("%s/locks/%ld-%s.lock", lib->dir, v, nonce + 1);
}

void vt_lib_owner_locks_sweep(struct vt_library *lib)
{
    char *dir = vt_xasprintf("%s/locks", lib->dir);
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) && n < 1000) {
        size_t len = strlen(e->d_name);
        int is_lock = len > 5 && !strcmp(e->d_name + len - 5, ".lock");
        int is_tmp = len > 4 && !strcmp(e->d_name + len - 4, ".tmp");
        struct stat st;
        char *p;
        int fd;

        if (!is_lock && !is_tmp)
            continue;
        n++;
        p = vt_xasprintf("%s/%s", dir, e->d_name);
        fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        /* a .tmp is locked a moment after it is made: only old ones are leftovers */
        if (fd >= 0 && !fstat(fd, &st) && (is_lock || st.st_mtime < time(NULL) - 60) &&
            !flock(fd, LOCK_SH | LOCK_NB))
            unlink(p);
        if (fd >= 0)
            close(fd);
        free(p);
    }
    if (d)
        closedir(d);
    free(dir);
}

int vt_lib_owner_lock(struct vt_library *lib)
{
    char err[512];
    char *dir, *path, *tmp = NULL;
    int fd = -1, rc = 0;

    if (lib->owner_fd >= 0)
        return 0;
    dir = vt_xasprintf("%s/locks", lib->dir);
    path = owner_lock_path(lib, lib->owner);
    if (!path) {
        rc = vt_lib_fail(lib, VT_EINVAL, "'%s': not an owner name", lib->owner);
        goto out;
    }
    if (vt_mkdir_p(dir, err, sizeof(err))) {
        rc = vt_lib_fail(lib, VT_EIO, "%s", err);
        goto out;
    }
    tmp = vt_xasprintf("%.*s.tmp", (int)(strlen(path) - 5), path);
    fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        rc = vt_lib_fail(lib, VT_EIO, "cannot create '%s': %s", tmp, strerror(errno));
        goto out;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) || rename(tmp, path)) {
        rc = vt_lib_fail(lib, VT_EIO, "cannot lock '%s': %s", tmp, strerror(errno));
        unlink(tmp);
        close(fd);
        goto out;
    }
    lib->owner_fd = fd;
    vt_lib_owner_locks_sweep(lib);
out:
    free(tmp);
    free(path);
    free(dir);
    return rc;
}

int vt_lib_owner_dead(struct vt_library *lib, const char *owner)
{
    char *path;
    int fd, dead = 0;

    if (!owner)
        return 1;
    if (!strcmp(owner, lib->owner))
        return 0; /* ourselves */
    path = owner_lock_path(lib, owner);
    if (!path)
        return 1; /* not an owner this version writes: no process can hold it */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        dead = errno == ENOENT;
    } else if (!flock(fd, LOCK_SH | LOCK_NB)) {
        dead = 1;
        unlink(path);
    }
    /* else EWOULDBLOCK: alive; anything else cannot be told and leaves the stage alone */
    if (fd >= 0)
        close(fd);
    free(path);
    return dead;
}

int vt_library_open_rc(const char *dir, int flags, struct vt_library **out, char *err,
                       size_t errlen)
{
    const int create = flags & VT_OPEN_CREATE;
    struct vt_library *lib = NULL;
    struct stat st;
    char host[64] = "localhost";
    char *db = NULL, *url = NULL;
    int rc;

    *out = NULL;
    if (!dir || !*dir)
        return vt_err(err, errlen, VT_EINVAL, "no library directory");
    if (stat(dir, &st)) {
        if (!create)
            return vt_err(err, errlen, VT_ENOTFOUND, "'%s': no library here (run 'vidtheque init')",
                          dir);
        if ((rc = vt_mkdir_p(dir, err, errlen)))
            return rc;
    } else if (!S_ISDIR(st.st_mode)) {
        return vt_err(err, errlen, VT_EINVAL, "'%s': not a directory", dir);
    }
    /* the database: on PostgreSQL when the config (or VIDTHEQUE_DB) says so, and then the
     * directory holds the media and frames only */
    if ((rc = vt_config_db_url(dir, &url, err, errlen)))
        return rc;
    db = url ? url : vt_xasprintf("%s/library.db", dir);
    if (!create && !url && access(db, F_OK)) {
        rc = vt_err(err, errlen, VT_ENOTFOUND, "'%s': no library here (run 'vidtheque init')", dir);
        goto fail;
    }
    lib = vt_xcalloc(1, sizeof(*lib));
    lib->dir = vt_xstrdup(dir);
    lib->owner_fd = -1;
    rc =
        vt_store_open_flags(db, flags & VT_OPEN_READ ? VT_STORE_READ : 0, &lib->store, err, errlen);
    if (rc)
        goto fail;
    if (!vt_store_read_only(lib->store)) {
        char *frames = vt_xasprintf("%s/frames", dir);

        rc = vt_mkdir_p(frames, err, errlen);
        free(frames);
        if (rc)
            goto fail;
    }
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    {
        /* the nonce tells this handle from a dead process whose pid came back */
        uint64_t nonce;
        struct timespec ts;

        if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) != (ssize_t)sizeof(nonce)) {
            clock_gettime(CLOCK_REALTIME, &ts);
            nonce = vt_fnv1a64(VT_FNV64_INIT, &ts, sizeof(ts));
            nonce = vt_fnv1a64(nonce, &lib, sizeof(lib));
        }
        snprintf(lib->owner, sizeof(lib->owner), "%s:%ld:%016llx", host, (long)getpid(),
                 (unsigned long long)nonce);
    }
    free(db);
    *out = lib;
    return 0;
fail:
    free(db);
    vt_library_close(lib);
    return rc < 0 ? rc : VT_EIO;
}

struct vt_library *vt_library_open(const char *dir, int flags, char *err, size_t errlen)
{
    struct vt_library *lib;

    vt_library_open_rc(dir, flags, &lib, err, errlen);
    return lib;
}

void vt_library_close(struct vt_library *lib)
{
    if (!lib)
        return;
    if (lib->owner_fd >= 0) {
        char *p = owner_lock_path(lib, lib->owner);

        /* removed while still held: a checker that opened it sees it unlocked after */
        if (p)
            unlink(p);
        free(p);
        close(lib->owner_fd);
    }
    for (size_t i = 0; i < VT_ARRAY_LEN(lib->docs); i++)
        free(lib->docs[i].json);
    for (int i = 0; i < VT_SLOT_COUNT; i++)
        vt_lib_slot_set(lib, i, NULL, NULL);
    vt_store_close(lib->store);
    free(lib->dir);
    free(lib);
}

void *vt_lib_slot(const struct vt_library *lib, int slot)
{
    return slot >= 0 && slot < VT_SLOT_COUNT ? lib->slots[slot].state : NULL;
}

void vt_lib_slot_set(struct vt_library *lib, int slot, void *state, void (*close)(void *state))
{
    struct vt_lib_slot *s;

    if (slot < 0 || slot >= VT_SLOT_COUNT)
        return;
    s = &lib->slots[slot];
    if (s->state && s->state != state && s->close)
        s->close(s->state);
    s->state = state;
    s->close = state ? close : NULL;
}

void vt_stage_progress(void *ctx, double frac)
{
    struct vt_stage_ctx *c = ctx;

    if (c->lib->cb.progress)
        c->lib->cb.progress(c->lib->cb.user, c->video->id, c->stage, frac);
}

int vt_stage_need_media(struct vt_stage_ctx *c)
{
    if (!c->video->source_path)
        return vt_err(c->err, sizeof(c->err), VT_ENOTFOUND,
                      "the media file was not kept (--no-keep-media): redo --stage fetch first");
    /* another machine may see it (a file added in place): retried, not failed */
    if (access(c->video->source_path, R_OK))
        return vt_err(c->err, sizeof(c->err), VT_EHERE,
                      "'%s': media file not readable on this machine: %s", c->video->source_path,
                      strerror(errno));
    return 0;
}

char *vt_lib_path(const struct vt_library *lib, const char *path)
{
    return path[0] == '/' ? vt_xstrdup(path) : vt_xasprintf("%s/%s", lib->dir, path);
}

int vt_lib_alloc_id(struct vt_library *lib, const char *preferred, uint64_t hash, char *id)
{
    int rc = 1;

    if (preferred && vt_id_valid(preferred)) {
        snprintf(id, VT_ID_MAX, "%s", preferred);
        rc = vt_store_video_id_taken(lib->store, id);
        if (rc != 1)
            return rc;
    }
    vt_id_encode(hash, id);
    /* a different video whose hash gives the same id: derive another (vanishingly rare) */
    for (int i = 0; (rc = vt_store_video_id_taken(lib->store, id)) == 1 && i < 100; i++)
        vt_id_encode(vt_fnv1a64(hash, &i, sizeof(i)), id);
    return rc ? (rc < 0 ? rc : VT_EIO) : 0;
}

int vt_video_set_poster(struct vt_library *lib, const char *id, int frame)
{
    int ok = 0, rc;

    if (!vt_id_valid(id))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a video id", id);
    rc = vt_store_begin(lib->store);
    if (!rc)
        rc = vt_store_poster_set(lib->store, id, frame < 0 ? -1 : frame, &ok);
    rc = vt_lib_end_write(lib, rc);
    if (rc)
        return rc;
    if (!ok)
        return vt_lib_fail(lib, VT_EINVAL, "video %s: no kept frame %d to be its poster", id,
                           frame);
    return 0;
}

int vt_remove(struct vt_library *lib, const char *id)
{
    char *frames;
    int rc;

    if (!vt_id_valid(id))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a video id", id);
    rc = vt_store_begin(lib->store);
    if (!rc)
        rc = vt_store_video_delete(lib->store, id);
    rc = vt_lib_end_write(lib, rc);
    if (rc)
        return rc;
    /* files go after the rows: a crash in between leaves only unreferenced files */
    frames = vt_xasprintf("%s/frames/%s", lib->dir, id);
    vt_rm_rf(frames);
    free(frames);
    frames = vt_xasprintf("%s/media/%s", lib->dir, id);
    vt_rm_rf(frames);
    free(frames);
    return 0;
}

struct list_ctx {
    int (*fn)(void *user, const struct vt_video_summary *v);
    void *user;
};

static int list_one(void *user, const struct vt_video_rec *v)
{
    struct list_ctx *c = user;
    struct vt_video_summary s;

    memset(&s, 0, sizeof(s));
    snprintf(s.id, sizeof(s.id), "%s", v->id);
    s.title = v->title ? v->title : "";
    s.duration_s = v->duration_s;
    s.index_state = vt_index_state_name(v->index_state);
    s.data_status = vt_data_status_name(v->data_status);
    return c->fn(c->user, &s);
}

int vt_list(struct vt_library *lib, int (*fn)(void *user, const struct vt_video_summary *v),
            void *user)
{
    struct list_ctx c = {fn, user};
    int rc = vt_store_video_each(lib->store, list_one, &c);

    return rc ? vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store)) : 0;
}

int vt_lib_video(struct vt_library *lib, const char *id, struct vt_video_rec *v)
{
    int rc;

    if (!vt_id_valid(id))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a video id", id);
    rc = vt_store_video_get(lib->store, id, v);
    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    /* downloaded media lives in the library and is named relative to it */
    if (v->source_path && v->source_path[0] != '/') {
        char *abs = vt_lib_path(lib, v->source_path);

        free(v->source_path);
        v->source_path = abs;
    }
    return 0;
}

int vt_video_state(struct vt_library *lib, const char *id, char *index_state, char *data_status)
{
    struct vt_video_rec v;
    int rc = vt_lib_video(lib, id, &v);

    if (rc)
        return rc;
    snprintf(index_state, 16, "%s", vt_index_state_name(v.index_state));
    snprintf(data_status, 16, "%s", vt_data_status_name(v.data_status));
    vt_video_rec_release(&v);
    return 0;
}
