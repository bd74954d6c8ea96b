/*
 * Adding a local file: the file is recognised when it was added before (by a
 * content key, under any name), refused when it is not media, else registered
 * with its stages queued (vt_pipeline_register) for the pipeline to run. URLs are
 * added by add_url.c.
 */
#include "core/library.h"
#include "media/media.h"
#include "base/util.h"

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

int vt_add_file(struct vt_library *lib, const char *path, const struct vt_add_opts *opts, char *id,
                int *is_new)
{
    const char *stt = opts && opts->stt ? opts->stt : "auto";
    char real[PATH_MAX], err[512];
    struct vt_video_rec v = {0};
    struct vt_probe probe = {0};
    struct stat st;
    char *key = NULL;
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
    v.content_key = key;
    v.source_kind = "file";
    v.source_path = real;
    {
        const char *base = strrchr(real, '/');

        v.title = probe.title ? probe.title : (char *)(base ? base + 1 : real);
    }
    v.duration_s = probe.duration_s;
    v.size_bytes = st.st_size;
    v.created_at = vt_wall_s();
    v.index_state = VT_INDEX_QUEUED;
    v.data_status = VT_DATA_MISSING;
    v.stt_mode = (char *)stt;
    v.keep_media = 1; /* never deleted: it is the user's file */
    rc = vt_pipeline_register(lib, &v);
    rc = vt_lib_end_write(lib, rc);
    if (rc)
        goto out;
    snprintf(id, VT_ID_MAX, "%s", v.id);
    *is_new = 1;
out:
    vt_probe_release(&probe);
    free(key);
    return rc;
}
