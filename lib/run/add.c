/*
 * Adding a local file: the file is recognised when it was added before (by a
 * content key, under any name), refused when it is not media, else copied (or
 * hard-linked) into <library>/media/<id>/, where every machine sharing the library
 * reaches it (--in-place: its absolute path is recorded instead), and registered
 * with its stages queued (vt_pipeline_register) for the pipeline to run. URLs are
 * added by add_url.c.
 */
#include "base/util.h"
#include "captions/captions.h"
#include "core/library.h"
#include "media/media.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A content key that recognises the same file added twice, even under another
 * name: the size and three 1 MiB samples (start, middle, end). Hashing every
 * byte of a multi-gigabyte file would cost more than probing it; the samples
 * include the container header and index, which differ between any two encodes.
 */
static int content_key(const char *path, int64_t size, char **key, uint64_t *hash, char *err,
                       size_t errlen)
{
    enum { SAMPLE = 1 << 20 };
    unsigned char *buf = vt_xmalloc(SAMPLE);
    int64_t offs[3] = {0, size / 2 - SAMPLE / 2, size - SAMPLE};
    uint64_t h = VT_FNV64_INIT;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc = 0;

    if (fd < 0) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': %s", path, strerror(errno));
        goto out;
    }
    h = vt_fnv1a64(h, &size, sizeof(size));
    for (int i = 0; i < 3; i++) {
        int64_t off = offs[i] < 0 ? 0 : offs[i];
        ssize_t got = pread(fd, buf, SAMPLE, off);

        if (got < 0) {
            rc = vt_err(err, errlen, VT_EIO, "'%s': %s", path, strerror(errno));
            goto out;
        }
        h = vt_fnv1a64(h, buf, (size_t)got);
    }
    *hash = h;
    *key = vt_xasprintf("fnv1a64s:%lld:%016llx", (long long)size, (unsigned long long)h);
out:
    if (fd >= 0)
        close(fd);
    free(buf);
    return rc;
}

/* Copy the bytes of src into the new file dst (made here; removed on failure). */
static int copy_bytes(const char *src, const char *dst, char *err, size_t errlen)
{
    enum { CHUNK = 1 << 20 };
    int in = open(src, O_RDONLY | O_CLOEXEC);
    int out = in < 0 ? -1 : open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    char *buf = NULL;
    int rc = 0;

    if (in < 0 || out < 0) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': %s", in < 0 ? src : dst, strerror(errno));
        goto out;
    }
    buf = vt_xmalloc(CHUNK);
    for (;;) {
        ssize_t got = read(in, buf, CHUNK), put = 0;

        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = vt_err(err, errlen, VT_EIO, "'%s': %s", src, strerror(errno));
            goto out;
        }
        if (got == 0)
            break;
        while (put < got) {
            ssize_t w = write(out, buf + put, (size_t)(got - put));

            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = vt_err(err, errlen, VT_EIO, "'%s': %s", dst, strerror(errno));
                goto out;
            }
            put += w;
        }
    }
    if (fsync(out))
        rc = vt_err(err, errlen, VT_EIO, "'%s': %s", dst, strerror(errno));
out:
    if (out >= 0 && close(out) && !rc)
        rc = vt_err(err, errlen, VT_EIO, "'%s': %s", dst, strerror(errno));
    if (in >= 0)
        close(in);
    if (rc && out >= 0)
        unlink(dst);
    free(buf);
    return rc;
}

/* A hard link of src at dst when they share a file system (no bytes copied), else a copy. */
static int link_or_copy(const char *src, const char *dst, char *err, size_t errlen)
{
    if (!link(src, dst))
        return 0;
    return copy_bytes(src, dst, err, errlen);
}

/* Where stage_copy puts what it stages: the folder, and the media's own folder. */
struct staging {
    const char *from_dir; /* the folder of the media added */
    const char *to_dir;   /* the staging folder */
    char *err;
    size_t errlen;
};

/* A caption file beside the media goes with it: the captions stage reads it there. */
static int stage_sidecar(void *user, const char *name)
{
    struct staging *st = user;
    char *from = vt_xasprintf("%s/%s", st->from_dir, name);
    char *to = vt_xasprintf("%s/%s", st->to_dir, name);
    int rc = link_or_copy(from, to, st->err, st->errlen);

    free(from);
    free(to);
    return rc;
}

/*
 * Put the file real, and the caption files beside it, into a staging folder of the
 * library's media folder (*tmp, caller frees; renamed to media/<id> once the id is
 * known). Done before the write transaction, which a gigabyte copy must not hold.
 */
static int stage_copy(struct vt_library *lib, const char *real, uint64_t hash, char **tmp,
                      char *err, size_t errlen)
{
    const char *base = strrchr(real, '/') + 1; /* real is absolute (realpath) */
    char *from_dir = vt_xasprintf("%.*s", (int)(base - real - 1), real), *to;
    struct staging st = {from_dir[0] ? from_dir : "/", NULL, err, errlen};
    int rc;

    *tmp = vt_xasprintf("%s/media/.add-%ld-%016llx", lib->dir, (long)getpid(),
                        (unsigned long long)hash);
    vt_rm_rf(*tmp); /* left by an add of this process id killed before its rename */
    rc = vt_mkdir_p(*tmp, err, errlen);
    to = vt_xasprintf("%s/%s", *tmp, base);
    if (!rc)
        rc = link_or_copy(real, to, err, errlen);
    st.to_dir = *tmp;
    if (!rc)
        rc = vt_captions_each_sidecar(real, stage_sidecar, &st);
    free(to);
    free(from_dir);
    return rc;
}

/* Move the staging folder to media/<id>; *rel (caller frees) is the media file's path in
 * the library, the video's source path. */
static int place_copy(struct vt_library *lib, const char *tmp, const char *id, const char *name,
                      char **rel, char *err, size_t errlen)
{
    char *to = vt_xasprintf("%s/media/%s", lib->dir, id);
    int rc = 0;

    rmdir(to); /* an empty folder left there would stop the rename */
    if (rename(tmp, to))
        rc = vt_err(err, errlen, VT_EIO, "cannot keep '%s': %s", to, strerror(errno));
    else
        *rel = vt_xasprintf("media/%s/%s", id, name);
    free(to);
    return rc;
}

int vt_add_file(struct vt_library *lib, const char *path, const struct vt_add_opts *opts, char *id,
                int *is_new)
{
    const char *stt = opts && opts->stt ? opts->stt : "auto";
    char real[PATH_MAX], err[512];
    struct vt_video_rec v = {0};
    struct vt_probe probe = {0};
    struct stat st;
    char *key = NULL, *tmp = NULL, *rel = NULL;
    const char *base;
    uint64_t hash = 0;
    int rc;

    *is_new = 0;
    if (strcmp(stt, "auto") && strcmp(stt, "captions") && strcmp(stt, "recognize"))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not an stt mode (auto, captions, recognize)",
                           stt);
    if (!realpath(path, real))
        return vt_lib_fail(lib, VT_ENOTFOUND, "'%s': %s", path, strerror(errno));
    if (stat(real, &st))
        return vt_lib_fail(lib, VT_ENOTFOUND, "'%s': %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a regular file", path);
    if (st.st_size == 0)
        return vt_lib_fail(lib, VT_EMEDIA, "'%s': empty file", path);
    rc = content_key(real, st.st_size, &key, &hash, err, sizeof(err));
    if (rc)
        return vt_lib_fail(lib, rc, "%s", err);
    rc = vt_store_video_find_key(lib->store, key, id);
    if (rc == 0)
        goto out; /* already registered: the caller resumes it if unfinished */
    if (rc != VT_ENOTFOUND) {
        rc = vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
        goto out;
    }
    /* refuse what is not media before anything is registered */
    rc = vt_media_probe(real, &probe, err, sizeof(err));
    if (rc) {
        rc = vt_lib_fail(lib, rc, "%s", err);
        goto out;
    }
    if (!probe.has_video && !probe.has_audio) {
        rc = vt_lib_fail(lib, VT_EMEDIA, "'%s': no audio or video stream", path);
        goto out;
    }
    if (!(opts && opts->in_place)) {
        rc = stage_copy(lib, real, hash, &tmp, err, sizeof(err));
        if (rc) {
            rc = vt_lib_fail(lib, rc, "cannot copy '%s' into the library: %s", path, err);
            goto out;
        }
    }
    rc = vt_store_begin(lib->store);
    if (rc) {
        rc = vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
        goto out;
    }
    rc = vt_lib_alloc_id(lib, NULL, hash, v.id);
    if (rc) {
        vt_store_rollback(lib->store);
        rc = vt_lib_fail(lib, rc, "cannot allocate an id for '%s'", path);
        goto out;
    }
    base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    /* written before the commit: a row never points at a missing file */
    if (tmp && place_copy(lib, tmp, v.id, base, &rel, err, sizeof(err))) {
        vt_store_rollback(lib->store);
        rc = vt_lib_fail(lib, VT_EIO, "%s", err);
        goto out;
    }
    v.content_key = key;
    v.source_kind = "file";
    v.source_path = rel ? rel : real;
    v.title = probe.title ? probe.title : (char *)base;
    v.duration_s = probe.duration_s;
    v.size_bytes = st.st_size;
    v.created_at = vt_wall_s();
    v.index_state = VT_INDEX_QUEUED;
    v.data_status = VT_DATA_MISSING;
    v.stt_mode = (char *)stt;
    v.keep_media = 1; /* never deleted: the user's file, or the library's only copy */
    rc = vt_pipeline_register(lib, &v);
    rc = vt_lib_end_write(lib, rc);
    if (rc) {
        if (rel) {
            char *dir = vt_xasprintf("%s/media/%s", lib->dir, v.id);

            vt_rm_rf(dir);
            free(dir);
        }
        goto out;
    }
    snprintf(id, VT_ID_MAX, "%s", v.id);
    *is_new = 1;
out:
    if (tmp)
        vt_rm_rf(tmp); /* still there when the add stopped before the rename */
    vt_probe_release(&probe);
    free(tmp);
    free(rel);
    free(key);
    return rc;
}
