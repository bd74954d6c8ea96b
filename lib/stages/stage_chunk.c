/*
 * The chunk stage: the cues grouped into passages for retrieval (chunk.c), ending where a
 * shot or a chapter ends when one is near.
 */
#include "base/util.h"
#include "core/library.h"
#include "text/chunk.h"
#include "text/transcript.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct chunk_result {
    struct vt_chunk *chunks;
    size_t n;
};

static int chunk_run(struct vt_stage_ctx *c)
{
    struct chunk_result *r = vt_xcalloc(1, sizeof(*r));
    struct vt_transcript t;
    struct vt_kf_shot *shots = NULL;
    struct vt_store_chapter *chapters = NULL;
    size_t n_shots = 0, n_chapters = 0;
    double *ends = NULL;
    int rc;

    c->result = r;
    snprintf(c->model, sizeof(c->model), "vidtheque-chunk 1 (20-60 s, ends at shot/chapter)");
    rc = vt_store_transcript(c->lib->store, c->video->id, &t);
    if (!rc)
        rc = vt_store_shots(c->lib->store, c->video->id, &shots, &n_shots);
    if (!rc)
        rc = vt_store_chapters(c->lib->store, c->video->id, &chapters, &n_chapters);
    if (rc) {
        rc = vt_err(c->err, sizeof(c->err), rc, "%s", vt_store_errmsg(c->lib->store));
        goto out;
    }
    if (!t.n_cues) {
        rc = vt_err(c->err, sizeof(c->err), VT_SKIP, "no cues");
        goto out;
    }
    /* where a passage would rather end: the ends of shots and chapters */
    ends = vt_xcalloc(n_shots + n_chapters + 1, sizeof(*ends));
    for (size_t i = 0; i < n_shots; i++)
        ends[i] = shots[i].end_s;
    for (size_t i = 0; i < n_chapters; i++)
        ends[n_shots + i] = chapters[i].end_s;
    vt_chunk_cues(&t, ends, n_shots + n_chapters, &r->chunks, &r->n);
out:
    free(ends);
    free(shots);
    vt_store_chapters_free(chapters, n_chapters);
    vt_transcript_release(&t);
    return rc;
}

static int chunk_save(struct vt_stage_ctx *c)
{
    struct chunk_result *r = c->result;

    return vt_store_chunks_replace(c->lib->store, c->video->id, r->chunks, r->n);
}

static int chunk_clear(struct vt_stage_ctx *c)
{
    return vt_store_chunks_clear(c->lib->store, c->video->id);
}

static void chunk_release(struct vt_stage_ctx *c)
{
    struct chunk_result *r = c->result;

    if (!r)
        return;
    vt_chunks_free(r->chunks, r->n);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_chunk = {
    .run = chunk_run,
    .save = chunk_save,
    .clear = chunk_clear,
    .release = chunk_release,
};
