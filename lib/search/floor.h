/*
 * The relevance floor of a vector space: how near a query that cannot match comes to the
 * space's own vectors by chance, so that a hit by meaning (meaning.c) or by pictures
 * (visual.c) is kept only when it stands clearly above that.
 *
 * Calibration: VT_FLOOR_PROBES queries that cannot match (strings of random letters,
 * common words with their letters shuffled, and words of every day that a library is
 * seldom about) are embedded with the space's model, and each one's best cosine against
 * the space's vectors is its chance score. The floor is their mean plus three standard
 * deviations, but not above their best score nor below their second best (one everyday
 * word may be what the library is about); a hit from the floor to the "strong" level, a quarter of
 * the way from the floor to 1, is "weak", above it "strong". Measured once per space (a model is a
 * space: another model is another calibration) and kept in memory and in LIBRARY/calibration.json,
 * measured again when the space's vectors changed by more than a tenth (added, removed or
 * re-embedded) or the way floors are measured changed.
 */
#ifndef VT_FLOOR_H
#define VT_FLOOR_H

#include "vidtheque.h"

#include <stddef.h>
#include <stdint.h>

struct vt_library;
struct vt_embed;

#define VT_FLOOR_PROBES 96 /* queries that cannot match, per calibration */

struct vt_floor {
    char space[256];         /* the vector space (vt_embed_id) */
    char model[256];         /* the model, as people read it (vt_embed_model) */
    int64_t vectors, max_id; /* the space's vectors when measured (count, highest id) */
    int probes;              /* queries that cannot match that were measured */
    double chance_mean, chance_sd, chance_max; /* of their best cosines */
    double floor;                              /* a hit must score at least this */
    double strong;                             /* and at least this to be "strong" */
    long long measured;                        /* when (seconds since the epoch) */
};

/* Probe i (0..VT_FLOOR_PROBES-1) into buf: the same text for the same i, always. */
void vt_floor_probe(int i, char *buf, size_t len);
/* Fill f's statistics, floor and strong from the n chance scores (best cosines of the
 * probes); n of 0 gives a floor no cosine reaches. */
void vt_floor_from_scores(struct vt_floor *f, const double *chance, size_t n);
/* The relevance of cosine c (vidtheque.h): VT_REL_NONE below the floor. */
enum vt_relevance vt_floor_judge(const struct vt_floor *f, double c);
/* Whether f, measured on its vectors, must be measured again for a space now holding
 * count vectors of highest id max_id: more than a tenth of them added, gone or new. */
int vt_floor_stale(const struct vt_floor *f, int64_t count, int64_t max_id);

/*
 * The floor of e's space (whose vectors lib holds, dimension vt_embed_dim(e)) into f:
 * from memory, from LIBRARY/calibration.json, or measured now and kept in both (a
 * library that cannot be written keeps it in memory only). *measured (may be NULL) says
 * whether it was measured by this call. 0, or an error with one line in err.
 */
int vt_floor_get(struct vt_library *lib, struct vt_embed *e, struct vt_floor *f, int *measured,
                 char *err, size_t errlen);

/* The floors kept in LIBRARY/calibration.json (dir is the library's folder), in the
 * order of the file; *f is freed with free(). 0 with none when there is no file. */
int vt_floor_list(const char *dir, struct vt_floor **f, size_t *n, char *err, size_t errlen);

#endif
