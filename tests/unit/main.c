/* Runner for the unit tests registered with VT_TEST (and VT_TEST_STORE's PostgreSQL runs). */
#include "harness.h"

#include <stdlib.h>

struct test {
    const char *name;
    vt_test_fn fn;
    int pg; /* run on PostgreSQL: only when VT_TEST_PG is set */
};

static struct test tests[640];
static int n_tests;
int vt_test_failures;
const char *vt_test_name;
int vt_test_on_pg;

static void add(const char *name, vt_test_fn fn, int pg)
{
    if (n_tests == (int)(sizeof(tests) / sizeof(tests[0]))) {
        fprintf(stderr, "too many tests\n");
        abort();
    }
    tests[n_tests].name = name;
    tests[n_tests].fn = fn;
    tests[n_tests].pg = pg;
    n_tests++;
}

void vt_test_register(const char *name, vt_test_fn fn)
{
    add(name, fn, 0);
}

void vt_test_register_pg(const char *name, vt_test_fn fn)
{
    size_t n = strlen(name) + 4;
    char *pg = malloc(n); /* lives as long as the runner */

    if (!pg)
        abort();
    snprintf(pg, n, "%s@pg", name);
    add(pg, fn, 1);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct test *)a)->name, ((const struct test *)b)->name);
}

int main(int argc, char **argv)
{
    const char *pg = getenv("VT_TEST_PG");
    int passed = 0, failed = 0;

    qsort(tests, (size_t)n_tests, sizeof(tests[0]), by_name);
    for (int i = 0; i < n_tests; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1]))
            continue;
        if (tests[i].pg && (!pg || !*pg))
            continue;
        vt_test_failures = 0;
        vt_test_name = tests[i].name;
        vt_test_on_pg = tests[i].pg;
        tests[i].fn();
        if (vt_test_failures) {
            printf("FAIL %s\n", tests[i].name);
            failed++;
        } else {
            printf("ok   %s\n", tests[i].name);
            passed++;
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
