/*
 * The names of the transitions into a shot (frames.h): one table for the shot
 * detector that finds them (shotdetect.c) and the store that reads them back.
 */
#include "model/frames.h"

#include <string.h>

static const char *const transition_names[VT_TRANSITION_COUNT] = {
#define VT_TRANSITION_X(ID, name) #name,
    VT_TRANSITION_LIST(VT_TRANSITION_X)
#undef VT_TRANSITION_X
};

const char *vt_transition_name(enum vt_transition t)
{
    return (unsigned)t < VT_TRANSITION_COUNT ? transition_names[t] : NULL;
}

const char *vt_kf_transition_name(const char *s)
{
    for (int i = 0; s && i < VT_TRANSITION_COUNT; i++)
        if (!strcmp(s, transition_names[i]))
            return transition_names[i];
    return NULL;
}
