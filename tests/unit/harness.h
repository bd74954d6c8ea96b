/*
 * A tiny unit-test harness. VT_TEST(name) defines a test that registers itself
 * before main runs; CHECK* record failures and keep going. The runner (main.c)
 * runs every test, or those whose name contains argv[1], and ends with the line
 * "N passed, N failed".
 */
#ifndef VT_HARNESS_H
#define VT_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef void (*vt_test_fn)(void);
void vt_test_register(const char *name, vt_test_fn fn);
/* Register fn to run again on PostgreSQL as NAME@pg, when VT_TEST_PG names a server. */
void vt_test_register_pg(const char *name, vt_test_fn fn);
extern int vt_test_failures;     /* failures in the running test */
extern const char *vt_test_name; /* the running test's name (NAME@pg on PostgreSQL) */
extern int vt_test_on_pg;        /* the running test is the PostgreSQL run of a VT_TEST_STORE */

#define VT_TEST(name)                                                                              \
    static void test_##name(void);                                                                 \
    __attribute__((constructor)) static void register_##name(void)                                 \
    {                                                                                              \
        vt_test_register(#name, test_##name);                                                      \
    }                                                                                              \
    static void test_##name(void)

/* A test of the store: run on SQLite, and again on PostgreSQL when VT_TEST_PG is set
 * (tests/pg/cluster.sh); its database comes from vt_test_db() (pgtest.h). */
#define VT_TEST_STORE(name)                                                                        \
    static void test_##name(void);                                                                 \
    __attribute__((constructor)) static void register_##name(void)                                 \
    {                                                                                              \
        vt_test_register(#name, test_##name);                                                      \
        vt_test_register_pg(#name, test_##name);                                                   \
    }                                                                                              \
    static void test_##name(void)

/* A PostgreSQL-only test (NAME@pg, run only when VT_TEST_PG names a server). */
#define VT_TEST_PG_ONLY(name)                                                                      \
    static void test_##name(void);                                                                 \
    __attribute__((constructor)) static void register_##name(void)                                 \
    {                                                                                              \
        vt_test_register_pg(#name, test_##name);                                                   \
    }                                                                                              \
    static void test_##name(void)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);             \
            vt_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "  %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, a_,    \
                    b_);                                                                           \
            vt_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                   \
            fprintf(stderr, "  %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a,    \
                    a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                       \
            vt_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, eps)                                                                      \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (eps))) {                                                           \
            fprintf(stderr, "  %s:%d: %s == %g, expected %g +- %g\n", __FILE__, __LINE__, #a, a_,  \
                    b_, (double)(eps));                                                            \
            vt_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)

#endif
