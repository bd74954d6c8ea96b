/*
 * Copying a catalog between stores of any backend (store_copy.c), for `vidtheque migrate`.
 */
#ifndef VT_STORE_COPY_H
#define VT_STORE_COPY_H

#include <stddef.h>

struct vt_store;

/* The ids of every video of a store, oldest first. */
struct vt_store_ids {
    char **v;
    size_t n, cap;
};
int vt_store_ids_read(struct vt_store *s, struct vt_store_ids *ids);
void vt_store_ids_release(struct vt_store_ids *ids);

/* Told after each video copied: done of total, and its id. */
typedef void (*vt_store_copy_fn)(void *user, size_t done, size_t total, const char *id);

/*
 * Copy every video of from (its row, stage provenance, chapters, shots, frames with their
 * OCR lines, transcript, chunks, vectors, lists and shared footage) into to, which must
 * hold no video (VT_ESTATE otherwise). One write transaction per video on to; from is
 * only read. 0, or an error with one line in err.
 */
int vt_store_copy(struct vt_store *from, struct vt_store *to, vt_store_copy_fn progress, void *user,
                  char *err, size_t errlen);

#endif
