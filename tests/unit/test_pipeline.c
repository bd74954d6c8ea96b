/*
 * Unit tests of lib/run/pipeline.c and the stage ownership in lib/core/library.c on a scratch
 * library: which failures are retried, and when the owner of a running stage is dead.
 */
#include "base/util.h"
#include "core/library.h"
#include "harness.h"
#include "pgtest.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char *test_db; /* the running test's database on PostgreSQL (pgtest.h) */

static struct vt_library *scratch(char *dir, size_t n)
{
    struct vt_library *lib;
    char err[256];

    snprintf(dir, n, "/tmp/vt-unit-pipeline.XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    test_db = vt_test_library_db(dir);
    lib = vt_library_open(dir, 1, err, sizeof(err));
    if (!lib)
        fprintf(stderr, "  %s\n", err);
    return lib;
}

static int add_video(struct vt_library *lib, const char *id)
{
    struct vt_video_rec v;
    int rc;

    memset(&v, 0, sizeof(v));
    snprintf(v.id, sizeof(v.id), "%s", id);
    v.content_key = (char *)id;
    v.source_kind = "file";
    v.source_path = "/nowhere/x.mp4";
    v.title = "x";
    v.index_state = VT_INDEX_QUEUED;
    v.data_status = VT_DATA_MISSING;
    rc = vt_store_begin(lib->store);
    if (!rc)
        rc = vt_pipeline_register(lib, &v);
    if (!rc)
        rc = vt_store_commit(lib->store);
    else
        vt_store_rollback(lib->store);
    return rc;
}

/* Record one failed attempt of stage with code; its state and attempts after it. */
static void fail_once(struct vt_library *lib, const char *stage, int code, const char *error,
                      char *state, int *attempts, double *retry_at, char *kept, size_t kept_n)
{
    struct vt_stage_rec *r = NULL;
    size_t n = 0;

    state[0] = kept[0] = '\0';
    CHECK_INT(vt_store_begin(lib->store), 0);
    CHECK_INT(vt_pipeline_record_failure(lib, "v1", vt_stage_find(stage), "m", code, error,
                                         vt_wall_s(), 0.1),
              0);
    CHECK_INT(vt_store_commit(lib->store), 0);
    CHECK_INT(vt_store_stages(lib->store, "v1", &r, &n), 0);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r[i].name, stage))
            continue;
        snprintf(state, 16, "%s", vt_state_name(r[i].state));
        *attempts = r[i].attempts;
        *retry_at = r[i].retry_at;
        snprintf(kept, kept_n, "%s", r[i].error ? r[i].error : "");
    }
    vt_stage_recs_free(r, n);
}

/* Out of space, an I/O error, a database that cannot be written: may pass, so any stage
 * (not only fetch) is queued again with its error kept and a retry time; after the last
 * attempt it is failed. Bad media is final at once. */
VT_TEST_STORE(pipeline_io_failure_retried)
{
    char dir[64], state[16], kept[256];
    struct vt_library *lib = scratch(dir, sizeof(dir));
    const char *nospace = "cannot write 'frames/v1/r1/3.jpg': No space left on device";
    double retry_at = 0, before;
    int attempts = 0;

    CHECK(lib != NULL);
    if (!lib)
        return;
    setenv("VIDTHEQUE_RETRY_BASE", "30", 1);
    CHECK_INT(add_video(lib, "v1"), 0);
    for (const char *const *s = (const char *const[]){"keyframe", "ocr", "stt", "chunk", NULL}; *s;
         s++) {
        before = vt_wall_s();
        fail_once(lib, *s, VT_EIO, nospace, state, &attempts, &retry_at, kept, sizeof(kept));
        CHECK_STR(state, "queued");
        CHECK_INT(attempts, 1);
        CHECK_NEAR(retry_at - before, 30, 2);
        CHECK_STR(kept, nospace);
    }
    /* the fourth attempt in all is the last */
    for (int i = 2; i <= 4; i++) {
        fail_once(lib, "keyframe", VT_EIO, nospace, state, &attempts, &retry_at, kept,
                  sizeof(kept));
        CHECK_STR(state, i < 4 ? "queued" : "failed");
        CHECK_INT(attempts, i);
    }
    CHECK_INT(retry_at, 0);
    CHECK_STR(kept, nospace);
    /* media that cannot be decoded will not decode next time either */
    fail_once(lib, "frame_embed", VT_EMEDIA, "'x.mp4': cannot decode", state, &attempts, &retry_at,
              kept, sizeof(kept));
    CHECK_STR(state, "failed");
    unsetenv("VIDTHEQUE_RETRY_BASE");
    vt_library_close(lib);
    vt_rm_rf(dir);
    vt_test_db_free(test_db);
    test_db = NULL;
}

/* An owner is alive exactly while its process holds its lock: not after it exits, even
 * as a zombie, whatever its pid now names; names not of our form are no owner. */
VT_TEST_STORE(pipeline_owner_dead)
{
    char dir[64], err[256], owner[128] = "";
    struct vt_library *a = scratch(dir, sizeof(dir)), *b;
    int fds[2], status;
    pid_t pid;
    char *p;

    CHECK(a != NULL);
    if (!a)
        return;
    b = vt_library_open(dir, 0, err, sizeof(err));
    CHECK(b != NULL);
    if (!b)
        goto out;
    CHECK_INT(vt_lib_owner_dead(b, a->owner), 1); /* a never claimed: holds no lock */
    CHECK_INT(vt_lib_owner_lock(a), 0);
    CHECK_INT(vt_lib_owner_lock(a), 0); /* once */
    CHECK_INT(vt_lib_owner_dead(b, a->owner), 0);
    CHECK_INT(vt_lib_owner_dead(a, a->owner), 0);
    CHECK_INT(vt_lib_owner_dead(b, NULL), 1);
    /* the form older versions wrote, with a live pid (ours), and hostile names */
    p = vt_xasprintf("host:%ld", (long)getpid());
    CHECK_INT(vt_lib_owner_dead(b, p), 1);
    free(p);
    CHECK_INT(vt_lib_owner_dead(b, "host:1:../../../etc/x"), 1);
    CHECK_INT(vt_lib_owner_dead(b, "host:-1:0123456789abcdef"), 1);
    CHECK_INT(vt_lib_owner_dead(b, ""), 1);
    /* a sweep leaves a held lock alone */
    vt_lib_owner_locks_sweep(b);
    CHECK_INT(vt_lib_owner_dead(b, a->owner), 0);
    /* a process that dies without closing the library: dead while still a zombie */
    CHECK_INT(pipe(fds), 0);
    pid = fork();
    if (pid == 0) {
        struct vt_library *c = vt_library_open(dir, 0, err, sizeof(err));

        if (!c || vt_lib_owner_lock(c) || write(fds[1], c->owner, strlen(c->owner) + 1) < 0)
            _exit(1);
        _exit(0); /* killed, in effect: no close, the lock file stays */
    }
    close(fds[1]);
    CHECK(read(fds[0], owner, sizeof(owner) - 1) > 0);
    close(fds[0]);
    for (int i = 0; i < 200; i++) {
        char path[64], st[512] = "";
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
        f = fopen(path, "r");
        if (f && fgets(st, sizeof(st), f) && strstr(st, ") Z "))
            i = 200;
        if (f)
            fclose(f);
        if (i < 200)
            usleep(10000);
    }
    CHECK(owner[0] != '\0');
    p = vt_xasprintf("%s/locks/%ld-%s.lock", dir, (long)pid, strrchr(owner, ':') + 1);
    CHECK_INT(access(p, F_OK), 0);
    CHECK_INT(vt_lib_owner_dead(b, owner), 1);
    CHECK(access(p, F_OK) != 0); /* and its lock file is gone */
    free(p);
    CHECK_INT(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* a handle that closes takes its lock file with it */
    p = vt_xasprintf("%s/locks/%ld-%s.lock", dir, (long)getpid(), strrchr(a->owner, ':') + 1);
    CHECK_INT(access(p, F_OK), 0);
    snprintf(owner, sizeof(owner), "%s", a->owner);
    vt_library_close(a);
    a = NULL;
    CHECK(access(p, F_OK) != 0);
    CHECK_INT(vt_lib_owner_dead(b, owner), 1);
    free(p);
out:
    vt_library_close(b);
    vt_library_close(a);
    vt_rm_rf(dir);
    vt_test_db_free(test_db);
    test_db = NULL;
}
