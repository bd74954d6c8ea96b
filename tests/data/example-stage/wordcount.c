/*
 * An example stage (not shipped: tests/e2e/t0012-example-stage.sh adds it to a copy of
 * the tree): counts the words of the video's cues once stt has settled (none when it was
 * skipped), and says the count in its provenance. Glue only, like every stage: its inputs from the store, its
 * result saved by the pipeline in the transaction that marks it done.
 */
#include "core/library.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

struct wc_result {
    long words;
};

static int wordcount_run(struct vt_stage_ctx *c)
{
    struct wc_result *r = vt_xcalloc(1, sizeof(*r));
    struct vt_transcript t = {0};
    int rc;

    c->result = r;
    rc = vt_store_transcript(c->lib->store, c->video->id, &t);
    if (rc == VT_ENOTFOUND) /* no transcript: no words */
        rc = 0;
    if (rc)
        return vt_err(c->err, sizeof(c->err), rc, "%s", vt_store_errmsg(c->lib->store));
    for (size_t i = 0; i < t.n_cues; i++)
        for (const char *p = t.cues[i].text; *p; p++)
            r->words += (p == t.cues[i].text || p[-1] == ' ') && *p != ' ';
    vt_transcript_release(&t);
    snprintf(c->model, sizeof(c->model), "wordcount 1; %ld word(s)", r->words);
    vt_stage_progress(c, 1);
    return 0;
}

static int wordcount_save(struct vt_stage_ctx *c)
{
    (void)c; /* what it learnt is its provenance (c->model), stored with its state */
    return 0;
}

static void wordcount_release(struct vt_stage_ctx *c)
{
    free(c->result);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_wordcount = {
    .run = wordcount_run,
    .save = wordcount_save,
    .release = wordcount_release,
};
