/*
 * The states' names in SQL come from the state table (lib/model/stage.h,
 * VT_SQL_STATE): the pasted text is each state's quoted name, the lists are the settled
 * states and the others, every VT_SQL_STATE(name) in lib/ names a state of the table,
 * and no file of lib/ spells a state's name in SQL ('queued' ...) by hand.
 */
#include "harness.h"
#include "model/stage.h"

#include <ftw.h>
#include <stdlib.h>
#include <string.h>

/* "'name'" for state s. */
static const char *quoted(enum vt_state s)
{
    static char buf[VT_STATE_COUNT][32];

    snprintf(buf[s], sizeof(buf[s]), "'%s'", vt_state_name(s));
    return buf[s];
}

VT_TEST(state_sql_generated)
{
    char settled[256] = "", unsettled[256] = "";

#define VT_STATE_X(ID, name) CHECK_STR(VT_SQL_STATE(name), quoted(VT_STATE_##ID));
    VT_STATE_LIST(VT_STATE_X)
#undef VT_STATE_X
    for (int i = 0; i < VT_STATE_COUNT; i++) {
        char *list = vt_state_terminal((enum vt_state)i) ? settled : unsettled;

        snprintf(list + strlen(list), 256 - strlen(list), "%s%s", list[0] ? ", " : "",
                 quoted((enum vt_state)i));
    }
    CHECK_STR(VT_SQL_STATES_SETTLED, settled);
    CHECK_STR(VT_SQL_STATES_UNSETTLED, unsettled);
}

static int scanned, bad;

/* A line of lib/ that spells a state in SQL by hand, or pastes a name that is no state. */
static void scan_line(const char *path, int no, const char *line)
{
    const char *p;

    for (int i = 0; i < VT_STATE_COUNT; i++) {
        const char *q = quoted((enum vt_state)i);

        /* the videos' index_state shares a name ('queued') with the stages' states */
        for (p = strstr(line, q); p; p = strstr(p + 1, q))
            if (!strstr(line, "index_state")) {
                printf("  %s:%d: %s spelt by hand: VT_SQL_STATE(%s)\n", path, no, q,
                       vt_state_name((enum vt_state)i));
                bad++;
            }
    }
    for (p = strstr(line, "VT_SQL_STATE("); p; p = strstr(p + 1, "VT_SQL_STATE(")) {
        char name[32];
        enum vt_state s;
        size_t n = strcspn(p + 13, ")");

        snprintf(name, sizeof(name), "%.*s", (int)(n < 31 ? n : 31), p + 13);
        if (strcmp(name, "name") && vt_state_parse(name, &s)) {
            printf("  %s:%d: VT_SQL_STATE(%s): no such state\n", path, no, name);
            bad++;
        }
    }
}

static int scan_file(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    size_t n = strlen(path);
    char line[4096];
    FILE *f;
    int no = 0;

    (void)sb, (void)ftw;
    if (type != FTW_F || n < 2 || (strcmp(path + n - 2, ".c") && strcmp(path + n - 2, ".h")))
        return 0;
    f = fopen(path, "r");
    if (!f)
        return 0;
    scanned++;
    while (fgets(line, sizeof(line), f))
        scan_line(path, ++no, line);
    fclose(f);
    return 0;
}

VT_TEST(state_sql_no_literals_in_lib)
{
    /* the sources' lib/, found from this file's name (the runner runs from the root) */
    const char *self = __FILE__, *tail = strstr(self, "tests/unit/test_state_sql.c");
    char lib[4096];

    snprintf(lib, sizeof(lib), "%.*slib", (int)(tail ? tail - self : 0), self);
    scanned = bad = 0;
    CHECK_INT(nftw(lib, scan_file, 16, FTW_PHYS), 0);
    CHECK(scanned > 50);
    CHECK_INT(bad, 0);
}
