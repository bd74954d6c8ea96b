/*
 * The names of a video's index_state and data_status (video.h): the one table that
 * turns the enums into the words the database and the JSON hold, and back. Backend
 * neutral: any store, the CLI and the server use it.
 */
#include "model/video.h"

#include <string.h>

static const char *const index_names[VT_INDEX_STATE_COUNT] = {
#define VT_INDEX_X(ID, name) #name,
    VT_INDEX_STATE_LIST(VT_INDEX_X)
#undef VT_INDEX_X
};

static const char *const data_names[VT_DATA_STATUS_COUNT] = {
#define VT_DATA_X(ID, name) #name,
    VT_DATA_STATUS_LIST(VT_DATA_X)
#undef VT_DATA_X
};

static int find(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

const char *vt_index_state_name(enum vt_index_state s)
{
    return (unsigned)s < VT_INDEX_STATE_COUNT ? index_names[s] : "?";
}

int vt_index_state_parse(const char *name, enum vt_index_state *s)
{
    int i = find(index_names, VT_INDEX_STATE_COUNT, name);

    if (i < 0)
        return -1;
    *s = (enum vt_index_state)i;
    return 0;
}

const char *vt_data_status_name(enum vt_data_status s)
{
    return (unsigned)s < VT_DATA_STATUS_COUNT ? data_names[s] : "?";
}

int vt_data_status_parse(const char *name, enum vt_data_status *s)
{
    int i = find(data_names, VT_DATA_STATUS_COUNT, name);

    if (i < 0)
        return -1;
    *s = (enum vt_data_status)i;
    return 0;
}

const char *vt_chapters_made(const char *source)
{
    return source && !strcmp(source, VT_CHAPTERS_SLIDES) ? "slides" : "source";
}
