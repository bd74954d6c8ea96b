/*
 * What add and update registered: the ids, printed as they come, then indexed here
 * or queued for the workers.
 */
#include "cli/added.h"

#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

int cli_added_note(void *user, const char *id, int is_new)
{
    struct cli_added *a = user;

    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->ids = realloc(a->ids, a->cap * sizeof(*a->ids));
        if (!a->ids) {
            cli_error("out of memory");
            abort();
        }
    }
    snprintf(a->ids[a->n++], VT_ID_MAX, "%s", id);
    if (!is_new && a->source)
        cli_info("'%s' is already in the library as %s", a->source, id);
    printf("%s\n", id);
    fflush(stdout);
    return 0;
}

/* Leave every id in a to the workers (with its priority), kept for --wait. */
static int queue_added(struct vt_library *lib, struct cli_added *a)
{
    int status = EXIT_OK;

    for (size_t i = 0; i < a->n; i++) {
        if (a->priority && vt_video_set_priority(lib, a->ids[i], a->priority))
            status = cli_error("%s", vt_errmsg(lib));
        if (a->n_queued == a->cap_queued) {
            a->cap_queued = a->cap_queued ? 2 * a->cap_queued : 16;
            a->queued = realloc(a->queued, a->cap_queued * sizeof(*a->queued));
            if (!a->queued) {
                cli_error("out of memory");
                abort();
            }
        }
        memcpy(a->queued[a->n_queued++], a->ids[i], VT_ID_MAX);
    }
    a->n = 0;
    return status;
}

int cli_added_process(struct vt_library *lib, struct cli_added *a)
{
    int status = EXIT_OK;

    if (a->queue)
        return queue_added(lib, a);
    for (size_t i = 0; i < a->n; i++) {
        char state[16], data[16];

        /* an unfinished earlier run of the same video continues here */
        if (vt_process(lib, a->ids[i])) {
            status = cli_error("%s", vt_errmsg(lib));
            continue;
        }
        /* a failed stage was reported by the log as it happened */
        if (vt_video_state(lib, a->ids[i], state, data) || strcmp(data, "ok"))
            status = EXIT_ERR;
    }
    a->n = 0;
    return status;
}

void cli_added_release(struct cli_added *a)
{
    free(a->ids);
    free(a->queued);
}
