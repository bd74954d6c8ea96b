/* Runner for the unit tests registered with VT_TEST. */
#include "harness.h"

#include <stdlib.h>

struct test {
    const char *name;
    vt_test_fn fn;
};

static struct test tests[512];
static int n_tests;
int vt_test_failures;

void vt_test_register(const char *name, vt_test_fn fn)
{
    if (n_tests == (int)(sizeof(tests) / sizeof(tests[0]))) {
        fprintf(stderr, "too many tests\n");
        abort();
    }
    tests[n_tests].name = name;
    tests[n_tests].fn = fn;
    n_tests++;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct test *)a)->name, ((const struct test *)b)->name);
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0;

    qsort(tests, (size_t)n_tests, sizeof(tests[0]), by_name);
    for (int i = 0; i < n_tests; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1]))
            continue;
        vt_test_failures = 0;
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
