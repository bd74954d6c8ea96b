/*
 * The stage table's lookups: the table itself is VT_STAGE_LIST in stage.h, expanded
 * here into the array that names each stage, and the states' names. Nothing here
 * runs a stage, so the front binary (which only reads) can ask it too.
 */
#include "model/stage.h"

#include "vidtheque.h"

#include <string.h>

_Static_assert(VT_STAGE_COUNT <= 32, "deps and after are bits of an unsigned");

const struct vt_stage_info vt_stages[VT_STAGE_COUNT] = {
#define VT_STAGE_X(ID, name, retries, deps, after, flags) {#name, retries, deps, after, flags},
    VT_STAGE_LIST(VT_STAGE_X)
#undef VT_STAGE_X
};

static const char *const state_names[VT_STATE_COUNT] = {
#define VT_STATE_X(ID, name) #name,
    VT_STATE_LIST(VT_STATE_X)
#undef VT_STATE_X
};

int vt_stage_find(const char *name)
{
    for (int i = 0; i < VT_STAGE_COUNT; i++)
        if (name && !strcmp(vt_stages[i].name, name))
            return i;
    return -1;
}

int vt_stage_of_kind(unsigned flag)
{
    for (int i = 0; i < VT_STAGE_COUNT; i++)
        if (vt_stages[i].flags & flag)
            return i;
    return -1;
}

const char *vt_state_name(enum vt_state s)
{
    return (unsigned)s < VT_STATE_COUNT ? state_names[s] : "?";
}

int vt_state_parse(const char *name, enum vt_state *s)
{
    for (int i = 0; i < VT_STATE_COUNT; i++)
        if (name && !strcmp(state_names[i], name)) {
            *s = (enum vt_state)i;
            return 0;
        }
    return -1;
}

const char *const *vt_stage_names(void)
{
    static const char *const names[VT_STAGE_COUNT + 1] = {
#define VT_STAGE_X(ID, name, retries, deps, after, flags) #name,
        VT_STAGE_LIST(VT_STAGE_X)
#undef VT_STAGE_X
    };

    return names;
}

size_t vt_stage_run_order(const char **out, size_t max)
{
    const char *const *names = vt_stage_names();
    unsigned placed = 0;
    size_t n = 0;

    /* each pass places the first stage (in the table's order) whose inputs are placed */
    while (n < VT_STAGE_COUNT) {
        int k;

        for (k = 0; k < VT_STAGE_COUNT; k++)
            if (!(placed & (1u << k)) && !((vt_stages[k].deps | vt_stages[k].after) & ~placed &
                                           ((1u << VT_STAGE_COUNT) - 1)))
                break;
        if (k == VT_STAGE_COUNT)
            break; /* a cycle: the table forbids it (t0010), but never loop */
        placed |= 1u << k;
        if (n + 1 < max)
            out[n] = names[k];
        n++;
    }
    if (max)
        out[n < max ? n : max - 1] = NULL;
    return n;
}
