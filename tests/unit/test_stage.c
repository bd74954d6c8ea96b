/*
 * Unit tests of the stage table (lib/model/stage.h, lib/model/stage.c): names unique and found
 * back, inputs that are stages of the table and reach no cycle, kinds that the
 * pipeline and export rely on, and the states' names.
 */
#include "harness.h"
#include "model/stage.h"
#include "vidtheque.h"

#include <stdio.h>
#include <string.h>

/* Whether stage k reaches itself through its inputs (seen: stages on the path). */
static int cycles(int k, unsigned seen)
{
    unsigned in = vt_stages[k].deps | vt_stages[k].after;

    if (seen & (1u << k))
        return 1;
    for (int j = 0; j < VT_STAGE_COUNT; j++)
        if ((in & (1u << j)) && cycles(j, seen | (1u << k)))
            return 1;
    return 0;
}

VT_TEST(stage_table)
{
    const char *const *names = vt_stage_names();
    int n = 0;

    for (int k = 0; k < VT_STAGE_COUNT; k++) {
        unsigned in = vt_stages[k].deps | vt_stages[k].after;

        CHECK(vt_stages[k].name && vt_stages[k].name[0]);
        CHECK_INT(vt_stage_find(vt_stages[k].name), k);
        CHECK_STR(names[k], vt_stages[k].name);
        CHECK(vt_stages[k].retries >= 1);
        CHECK_INT(in >> VT_STAGE_COUNT, 0); /* inputs are stages of the table */
        CHECK_INT(vt_stages[k].deps & vt_stages[k].after, 0);
        CHECK(!cycles(k, 0));
    }
    while (names[n])
        n++;
    CHECK_INT(n, VT_STAGE_COUNT);
    CHECK_INT(vt_stage_find("nosuch"), -1);
    CHECK_INT(vt_stage_find(NULL), -1);
    /* one source stage, first (the others read what it learnt); one speech stage */
    CHECK_INT(vt_stage_of_kind(VT_STAGE_SOURCE), 0);
    CHECK(vt_stage_of_kind(VT_STAGE_SPEECH) > 0);
    for (int k = 0; k < VT_STAGE_COUNT; k++)
        if (vt_stages[k].flags & VT_STAGE_ROWS_OF_DEPS)
            CHECK((vt_stages[k].deps | vt_stages[k].after) != 0);
}

/* The order the pipeline runs the stages in (the redo form's): each after every stage it
 * reads, ties in the table's order; cut short, still NULL-terminated. */
VT_TEST(stage_run_order)
{
    const char *order[VT_STAGE_COUNT + 1], *few[3] = {"x", "x", "x"};
    unsigned seen = 0;
    char joined[256] = "";

    CHECK_INT(vt_stage_run_order(order, VT_STAGE_COUNT + 1), VT_STAGE_COUNT);
    CHECK(order[VT_STAGE_COUNT] == NULL);
    for (int i = 0; i < VT_STAGE_COUNT; i++) {
        int k = vt_stage_find(order[i]);

        CHECK(k >= 0);
        if (k < 0)
            return;
        CHECK_INT((vt_stages[k].deps | vt_stages[k].after) & ~seen, 0);
        CHECK_INT(seen & (1u << k), 0);
        seen |= 1u << k;
        snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s", i ? "," : "",
                 order[i]);
    }
    CHECK_STR(joined, "fetch,keyframe,ocr,stt,chunk,text_embed,frame_embed");
    CHECK_INT(vt_stage_run_order(few, 3), VT_STAGE_COUNT);
    CHECK_STR(few[0], "fetch");
    CHECK_STR(few[1], "keyframe");
    CHECK(few[2] == NULL);
    CHECK_INT(vt_stage_run_order(NULL, 0), VT_STAGE_COUNT);
}

VT_TEST(stage_states)
{
    enum vt_state s;

    for (int i = 0; i < VT_STATE_COUNT; i++) {
        CHECK_INT(vt_state_parse(vt_state_name((enum vt_state)i), &s), 0);
        CHECK_INT(s, i);
    }
    CHECK_STR(vt_state_name(VT_STATE_QUEUED), "queued");
    CHECK_STR(vt_state_name(VT_STATE_FAILED), "failed");
    CHECK_INT(vt_state_parse("processing", &s), -1);
    CHECK(vt_state_terminal(VT_STATE_DONE) && vt_state_terminal(VT_STATE_SKIPPED) &&
          vt_state_terminal(VT_STATE_FAILED));
    CHECK(!vt_state_terminal(VT_STATE_QUEUED) && !vt_state_terminal(VT_STATE_RUNNING));
}
