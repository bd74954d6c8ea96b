/*
 * The ocr stage: every kept frame's JPEG read by Tesseract (ocr.c), its lines stored with
 * their confidence and box; the engine is created once per library handle, in the stage's
 * slot.
 */
#include "base/util.h"
#include "core/library.h"
#include "visual/ocr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The engine the library keeps between videos, in the stage's slot: vt_library_close calls
 * this. */
static void ocr_close(void *ocr)
{
    vt_ocr_free(ocr);
}

struct ocr_result {
    int *frame_index;
    struct vt_ocr_page *pages;
    size_t n;
};

static int ocr_run(struct vt_stage_ctx *c)
{
    struct ocr_result *r = vt_xcalloc(1, sizeof(*r));
    struct vt_store_frame *frames = NULL;
    struct vt_ocr *ocr;
    char **paths = NULL;
    size_t n = 0;
    int rc;

    c->result = r;
    snprintf(c->model, sizeof(c->model), "tesseract");
    ocr = vt_lib_slot(c->lib, VT_STAGE_OCR);
    if (!ocr) {
        ocr = vt_ocr_new(0, "eng", c->err, sizeof(c->err));
        if (!ocr)
            return VT_ENOTFOUND;
        vt_lib_slot_set(c->lib, VT_STAGE_OCR, ocr, ocr_close);
    }
    snprintf(c->model, sizeof(c->model), "%s", vt_ocr_model(ocr));
    rc = vt_store_frames(c->lib->store, c->video->id, &frames, &n);
    if (rc)
        return vt_err(c->err, sizeof(c->err), rc, "%s", vt_store_errmsg(c->lib->store));
    paths = vt_xcalloc(n, sizeof(*paths));
    r->frame_index = vt_xcalloc(n, sizeof(*r->frame_index));
    for (size_t i = 0; i < n; i++) {
        if (!frames[i].path)
            continue; /* skipped as a duplicate: no image, nothing to read */
        paths[r->n] = vt_xasprintf("%s/%s", c->lib->dir, frames[i].path);
        r->frame_index[r->n++] = frames[i].f.index;
    }
    r->pages = vt_xcalloc(r->n, sizeof(*r->pages));
    rc = vt_ocr_run(ocr, (const char *const *)paths, r->n, r->pages, vt_stage_progress, c, c->err,
                    sizeof(c->err));
    for (size_t i = 0; i < r->n; i++)
        free(paths[i]);
    free(paths);
    vt_store_frames_free(frames, n);
    return rc;
}

static int ocr_save(struct vt_stage_ctx *c)
{
    struct ocr_result *r = c->result;

    return vt_store_ocr_replace(c->lib->store, c->video->id, r->frame_index, r->pages, r->n);
}

static int ocr_clear(struct vt_stage_ctx *c)
{
    return vt_store_ocr_clear(c->lib->store, c->video->id);
}

static void ocr_release(struct vt_stage_ctx *c)
{
    struct ocr_result *r = c->result;

    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        vt_ocr_page_release(&r->pages[i]);
    free(r->pages);
    free(r->frame_index);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_ocr = {
    .run = ocr_run,
    .save = ocr_save,
    .clear = ocr_clear,
    .release = ocr_release,
};
