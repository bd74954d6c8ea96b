/*
 * What add and update registered (src/cli/added.c): the ids are printed as they are
 * registered and processed once all are (a list's entries all get rows first: an
 * interrupted run resumes every one), here or by the workers.
 */
#ifndef VT_CLI_ADDED_H
#define VT_CLI_ADDED_H

#include "vidtheque.h"

#include <stddef.h>

struct cli_added {
    char (*ids)[VT_ID_MAX];
    size_t n, cap;
    const char *source; /* the argument being added, named when it is already there */
    /* queued for workers (add --queue, or a PostgreSQL library): not run here; the ids
     * kept for --wait */
    int queue, priority;
    char (*queued)[VT_ID_MAX];
    size_t n_queued, cap_queued;
};

/* vt_add_url's and vt_update's callback (user: the struct cli_added): keeps the id and
 * prints it; says so when it was already in the library. 0. */
int cli_added_note(void *user, const char *id, int is_new);
/* Run the pipeline of every id kept, or queue them for the workers (with the priority,
 * kept for --wait) when queue is set; then none is kept. EXIT_ERR when any stage
 * failed or could not be queued. */
int cli_added_process(struct vt_library *lib, struct cli_added *a);
/* Free what a holds. */
void cli_added_release(struct cli_added *a);

#endif
