/*
 * An example stage (not shipped: tests/e2e/t0012-example-stage.sh adds it to a copy of
 * the tree): counts the words of the video's cues once stt has settled (none when it was
 * skipped), keeps one row per cue (its index, its words) in its own table wordcount_cues
 * (made by its migration, lib/store/migrations.h), and says the total in its provenance.
 * Glue only, like every stage: its inputs from the store, its result saved by the
 * pipeline in the transaction that marks it done, through the store's verbs for a
 * stage's own rows. Its rows go with their video (the table's ON DELETE CASCADE).
 */
#include "base/util.h"
#include "core/library.h"

#include <stdio.h>
#include <stdlib.h>

struct wc_result {
    struct vt_store_value *rows; /* (idx, words) per cue */
    size_t n;
    long words;
};

static long count_words(const char *text)
{
    long n = 0;

    for (const char *p = text; *p; p++)
        n += (p == text || p[-1] == ' ') && *p != ' ';
    return n;
}

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
    r->rows = vt_xcalloc(t.n_cues ? 2 * t.n_cues : 1, sizeof(*r->rows));
    for (size_t i = 0; i < t.n_cues; i++) {
        long w = count_words(t.cues[i].text);

        r->rows[2 * i] = (struct vt_store_value){.type = VT_STORE_INT, .i = (int64_t)i};
        r->rows[2 * i + 1] = (struct vt_store_value){.type = VT_STORE_INT, .i = w};
        r->words += w;
    }
    r->n = t.n_cues;
    vt_transcript_release(&t);
    snprintf(c->model, sizeof(c->model), "wordcount 1; %ld word(s)", r->words);
    vt_stage_progress(c, 1);
    return 0;
}

static int wordcount_save(struct vt_stage_ctx *c)
{
    static const char *const columns[] = {"cue_idx", "words"};
    struct wc_result *r = c->result;
    /* a save after a run replaces what an earlier run kept */
    int rc = vt_store_stage_rows_clear(c->lib->store, "wordcount_cues", c->video->id);

    if (!rc)
        rc = vt_store_stage_rows_put(c->lib->store, "wordcount_cues", c->video->id, columns, 2,
                                     r->rows, r->n);
    return rc;
}

static int wordcount_clear(struct vt_stage_ctx *c)
{
    return vt_store_stage_rows_clear(c->lib->store, "wordcount_cues", c->video->id);
}

static void wordcount_release(struct vt_stage_ctx *c)
{
    struct wc_result *r = c->result;

    if (r)
        free(r->rows);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_wordcount = {
    .run = wordcount_run,
    .save = wordcount_save,
    .clear = wordcount_clear,
    .release = wordcount_release,
};
