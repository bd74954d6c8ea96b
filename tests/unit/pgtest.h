/*
 * Databases for the store's tests on either backend. A VT_TEST_STORE test asks
 * vt_test_db() for its database: SQLite's file in the test's scratch directory, or, on
 * its PostgreSQL run, a new database on the server VT_TEST_PG names (CREATE DATABASE
 * vt_<test>_<pid>_<n>), dropped by vt_test_db_free(), so tests never see each other's
 * rows.
 */
#ifndef VT_PGTEST_H
#define VT_PGTEST_H

/* dir/library.db, or a fresh PostgreSQL database's URL (NULL when it cannot be made:
 * the reason is printed and counted as a failure). Caller frees with vt_test_db_free. */
char *vt_test_db(const char *dir);
/* For a test of a library in dir: nothing on SQLite (NULL); on PostgreSQL a fresh
 * database named in dir/config (db), returned for vt_test_db_free. */
char *vt_test_library_db(const char *dir);
/* Drop the database db names (PostgreSQL) and free db. */
void vt_test_db_free(char *db);
/* Run one SQL command on the database url (tests' setup): 0, or -1 with the reason
 * printed. */
int vt_test_pg_exec(const char *url, const char *sql);
/* url with its database name replaced by name. Caller frees. */
char *vt_test_pg_url_for(const char *url, const char *name);

#include <stddef.h>

struct vt_store;
/* A store for a test of what ("store", "queue"): a new directory /tmp/vt-unit-WHAT.XXXXXX
 * into dir (n bytes) and the test's database there (vt_test_db) into *db, opened; NULL
 * when it cannot be (the reason printed and counted). */
struct vt_store *vt_test_store(const char *what, char *dir, size_t n, char **db);
/* Close s, remove dir and drop the database db (freeing it). */
void vt_test_store_done(struct vt_store *s, const char *dir, char *db);
/* A video row id (content key key, a local file /x/y.mp4) inserted into s, committed in a
 * transaction of its own; with queue_stages, every stage of the table queued in the same
 * transaction. Each step is checked. */
void vt_test_video_add(struct vt_store *s, const char *id, const char *key, int queue_stages);
/* The integer in the first column of the first row sql answers (one text parameter, arg):
 * -1 for NULL, -2 when no row; the query checked. */
long long vt_test_store_int(struct vt_store *s, const char *sql, const char *arg);
/* The schema version of s's database (PRAGMA user_version, or vt_meta's on PostgreSQL). */
long long vt_test_schema_version(struct vt_store *s);

#endif
