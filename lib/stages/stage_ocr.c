/*
 * The ocr stage: every kept frame's JPEG read by Tesseract (ocr.c), its lines stored with
 * their confidence and box; the engine is created once per library handle, in the stage's
 * slot. When the source gave the video no chapters, the slides' titles make them
 * (text/slide_chapters.h), stored with source "slides" in the same commit.
 */
#include "base/util.h"
#include "core/library.h"
#include "text/slide_chapters.h"
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
    struct vt_chapter *chapters; /* from the slides' titles */
    size_t n_chapters;
};

/* Whether the video's stored chapters came from its source or container (not from the
 * slides): 1, 0, or a negative VT_E* code. */
static int has_source_chapters(struct vt_store *s, const char *id)
{
    struct vt_store_chapter *ch = NULL;
    size_t n = 0;
    int rc = vt_store_chapters(s, id, &ch, &n);

    if (!rc)
        rc = n && ch[0].source && strcmp(ch[0].source, VT_CHAPTERS_SLIDES) != 0;
    vt_store_chapters_free(ch, n);
    return rc;
}

/* The chapters the slides' titles make: each page read (frames[frame_index[i]]) gives a
 * title where its shot starts. Notes the rule and what it found in the model. */
static int slide_chapters(struct vt_stage_ctx *c, struct ocr_result *r,
                          const struct vt_store_frame *frames, size_t n_frames)
{
    struct vt_slide_frame *f = vt_xcalloc(r->n + 1, sizeof(*f));
    struct vt_kf_shot *shots = NULL;
    size_t n_shots = 0, k = 0, len = strlen(c->model);
    double duration = c->video->duration_s;
    int rc = vt_store_shots(c->lib->store, c->video->id, &shots, &n_shots);

    for (size_t i = 0, j = 0; !rc && i < r->n; i++) {
        while (j < n_frames && frames[j].f.index != r->frame_index[i])
            j++;
        if (j == n_frames || frames[j].f.shot < 0 || (size_t)frames[j].f.shot >= n_shots)
            continue;
        f[k].start_s = shots[frames[j].f.shot].start_s;
        f[k++].title = vt_slide_title(&r->pages[i], frames[j].f.height);
    }
    if (n_shots && shots[n_shots - 1].end_s > duration)
        duration = shots[n_shots - 1].end_s;
    if (!rc)
        vt_slide_chapters(f, k, duration, &r->chapters, &r->n_chapters);
    snprintf(c->model + len, sizeof(c->model) - len, "; chapters %s: %zu from slide titles",
             VT_SLIDE_CHAPTERS_ALGO, r->n_chapters);
    for (size_t i = 0; i < k; i++)
        free((char *)f[i].title);
    free(f);
    free(shots);
    return rc;
}

static int ocr_run(struct vt_stage_ctx *c)
{
    struct ocr_result *r = vt_xcalloc(1, sizeof(*r));
    struct vt_store_frame *frames = NULL;
    struct vt_ocr *ocr;
    char **paths = NULL;
    size_t n = 0, len;
    int rc;

    c->result = r;
    snprintf(c->model, sizeof(c->model), "tesseract");
    ocr = vt_lib_slot(c->lib, VT_STAGE_OCR);
    if (!ocr) {
        /* VT_EHERE (the language data missing here): queued again for another machine */
        ocr = vt_ocr_new(0, VT_OCR_LANG, &rc, c->err, sizeof(c->err));
        if (!ocr)
            return rc;
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
    if (!rc)
        rc = has_source_chapters(c->lib->store, c->video->id);
    if (rc > 0) { /* the source's (or the container's) chapters win */
        len = strlen(c->model);
        snprintf(c->model + len, sizeof(c->model) - len, "; chapters from the source");
        rc = 0;
    } else if (!rc) {
        rc = slide_chapters(c, r, frames, n);
    }
    if (rc < 0 && !c->err[0])
        vt_err(c->err, sizeof(c->err), rc, "%s", vt_store_errmsg(c->lib->store));
    vt_store_frames_free(frames, n);
    return rc;
}

/* The slides' chapters replace the slides' old ones (none: they go), never the source's. */
static int save_chapters(struct vt_stage_ctx *c, const struct vt_chapter *ch, size_t n)
{
    int rc = has_source_chapters(c->lib->store, c->video->id);

    if (rc)
        return rc < 0 ? rc : 0;
    rc = vt_store_chapters_replace(c->lib->store, c->video->id, ch, n, VT_CHAPTERS_SLIDES);
    return rc ? rc : vt_store_title_docs_refresh(c->lib->store, c->video->id);
}

static int ocr_save(struct vt_stage_ctx *c)
{
    struct ocr_result *r = c->result;
    int rc = vt_store_ocr_replace(c->lib->store, c->video->id, r->frame_index, r->pages, r->n);

    return rc ? rc : save_chapters(c, r->chapters, r->n_chapters);
}

static int ocr_clear(struct vt_stage_ctx *c)
{
    int rc = vt_store_ocr_clear(c->lib->store, c->video->id);

    return rc ? rc : save_chapters(c, NULL, 0);
}

/* keyframe's rows were replaced: the index's screen rows (which carry their own times) and
 * the slides' chapters stay until ocr's own commit replaces them, and so do the lines of
 * every frame still shown at the moment its old row said; the others' go */
static int ocr_clear_of(struct vt_stage_ctx *c, enum vt_stage_id in)
{
    (void)in;
    return vt_store_ocr_lines_prune(c->lib->store, c->video->id);
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
    for (size_t i = 0; i < r->n_chapters; i++)
        free(r->chapters[i].title);
    free(r->chapters);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_ocr = {
    .run = ocr_run,
    .save = ocr_save,
    .clear = ocr_clear,
    .clear_of = ocr_clear_of,
    .keeps_of = VT_BIT(KEYFRAME),
    .release = ocr_release,
};
