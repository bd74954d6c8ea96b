/* Databases for the store's tests on either backend (pgtest.h). */
#include "pgtest.h"

#include "base/util.h"
#include "harness.h"
#include "model/stage_config.h"
#include "store/store.h"
#include "store/store_int.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* store.c reaches the PostgreSQL backend weakly: naming it here links it into the runner */
struct vt_store;
int store_pg_open(const char *url, int flags, struct vt_store **out, char *err, size_t errlen);
void *const vt_test_pg_backend = (void *)store_pg_open;

char *vt_test_pg_url_for(const char *url, const char *name)
{
    const char *auth = strstr(url, "://");
    const char *path, *rest;

    auth = auth ? auth + 3 : url;
    path = auth + strcspn(auth, "/?");
    rest = path + strcspn(path, "?");
    return vt_xasprintf("%.*s/%s%s", (int)(path - url), url, name, rest);
}

static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message; /* "does not exist, skipping" */
}

int vt_test_pg_exec(const char *url, const char *sql)
{
    PGconn *c = PQconnectdb(url);
    int rc = -1;

    PQsetNoticeProcessor(c, quiet, NULL);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "  cannot connect to %s: %s", url, PQerrorMessage(c));
    } else {
        PGresult *r = PQexec(c, sql);

        if (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
            rc = 0;
        else
            fprintf(stderr, "  %s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
    }
    PQfinish(c);
    return rc;
}

/* The database name in a URL made by vt_test_db. Caller frees. */
static char *db_name(const char *url)
{
    const char *auth = strstr(url, "://") + 3;
    const char *path = auth + strcspn(auth, "/?");

    if (*path != '/')
        return NULL;
    return vt_xasprintf("%.*s", (int)strcspn(path + 1, "?"), path + 1);
}

char *vt_test_db(const char *dir)
{
    static unsigned n;
    const char *server = getenv("VT_TEST_PG");
    char name[64], *sql;
    size_t k = 0;
    int rc;

    if (!vt_test_on_pg)
        return vt_xasprintf("%s/library.db", dir);
    /* vt_<test>_<pid>_<n>: letters, digits and _ only, within PostgreSQL's 63 bytes */
    k = (size_t)snprintf(name, sizeof(name), "vt_");
    for (const char *p = vt_test_name; *p && *p != '@' && k < 40; p++)
        name[k++] = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ? *p : '_';
    snprintf(name + k, sizeof(name) - k, "_%ld_%u", (long)getpid(), n++);
    sql = vt_xasprintf("CREATE DATABASE \"%s\"", name);
    rc = vt_test_pg_exec(server, sql);
    free(sql);
    if (rc) {
        vt_test_failures++;
        return NULL;
    }
    return vt_test_pg_url_for(server, name);
}

char *vt_test_library_db(const char *dir)
{
    struct vt_config *cf = NULL;
    char *db, err[256];

    if (!vt_test_on_pg)
        return NULL;
    db = vt_test_db(dir);
    if (db && (vt_config_load(dir, &cf, err, sizeof(err)) ||
               vt_config_set(cf, "db", db, err, sizeof(err)))) {
        fprintf(stderr, "  %s\n", err);
        vt_test_failures++;
    }
    vt_config_free(cf);
    return db;
}

void vt_test_db_free(char *db)
{
    if (db && !strncmp(db, "postgresql://", 13)) {
        char *name = db_name(db),
             *sql = vt_xasprintf("DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)", name ? name : "");

        if (name)
            vt_test_pg_exec(getenv("VT_TEST_PG"), sql);
        free(sql);
        free(name);
    }
    free(db);
}

struct vt_store *vt_test_store(const char *what, char *dir, size_t n, char **db)
{
    struct vt_store *s = NULL;
    char err[256];

    *db = NULL;
    snprintf(dir, n, "/tmp/vt-unit-%s.XXXXXX", what);
    if (!mkdtemp(dir))
        return NULL;
    *db = vt_test_db(dir);
    if (*db && vt_store_open(*db, &s, err, sizeof(err))) {
        fprintf(stderr, "  %s\n", err);
        vt_test_failures++;
        vt_test_db_free(*db); /* the test returns without vt_test_store_done() */
        *db = NULL;
    }
    return s;
}

void vt_test_store_done(struct vt_store *s, const char *dir, char *db)
{
    vt_store_close(s);
    vt_rm_rf(dir);
    vt_test_db_free(db);
}

void vt_test_video_add(struct vt_store *s, const char *id, const char *key, int queue_stages)
{
    struct vt_video_rec v;

    memset(&v, 0, sizeof(v));
    snprintf(v.id, sizeof(v.id), "%s", id);
    v.content_key = (char *)key;
    v.source_kind = "file";
    v.source_path = "/x/y.mp4";
    v.created_at = 1000;
    CHECK_INT(vt_store_begin(s), 0);
    CHECK_INT(vt_store_video_insert(s, &v), 0);
    for (int k = 0; queue_stages && k < VT_STAGE_COUNT; k++) {
        struct vt_stage_rec r;

        memset(&r, 0, sizeof(r));
        snprintf(r.name, sizeof(r.name), "%s", vt_stages[k].name);
        r.state = VT_STATE_QUEUED;
        CHECK_INT(vt_store_stage_put(s, id, &r), 0);
    }
    CHECK_INT(vt_store_commit(s), 0);
}

static int read_int(void *user, struct db_stmt *st)
{
    *(long long *)user = db_col_null(st, 0) ? -1 : db_col_int64(st, 0);
    return 1;
}

long long vt_test_store_int(struct vt_store *s, const char *sql, const char *arg)
{
    long long v = -2;

    CHECK_INT(store_rows(s, sql, "test", read_int, &v, "s", arg), 0);
    return v;
}

long long vt_test_schema_version(struct vt_store *s)
{
    long long v = -2;

    CHECK_INT(store_rows(s,
                         vt_test_on_pg ? "SELECT max(schema_version) FROM vt_meta"
                                       : "PRAGMA user_version",
                         "version", read_int, &v, ""),
              0);
    return v;
}
