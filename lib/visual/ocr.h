/*
 * The ocr stage: Tesseract over the kept keyframe images, one engine per worker
 * thread created once and reused, frames read on all cores in parallel.
 */
#ifndef VT_OCR_H
#define VT_OCR_H

#include "model/frames.h"
#include "model/stage.h"

#include <stddef.h>

/* struct vt_ocr_line and vt_ocr_page are model/frames.h's. */

struct vt_ocr;

/* The language the ocr stage reads (Tesseract's name for its data: tesseract-ocr-eng). */
#define VT_OCR_LANG "eng"

/*
 * Create nthreads engines (0 = number of cores) for language lang ("eng"). NULL with a
 * message in err and the VT_E* code in *code (code may be NULL; 0 on success) when they
 * cannot be: VT_EHERE when this machine lacks the language's data (a worker that has it
 * may read the frames), VT_EINVAL for a bad language or thread count, VT_EIO when
 * Tesseract cannot make an engine.
 */
struct vt_ocr *vt_ocr_new(int nthreads, const char *lang, int *code, char *err, size_t errlen);
/* "tesseract 5.3.0 eng"; borrowed for the life of ocr. */
const char *vt_ocr_model(const struct vt_ocr *ocr);
/*
 * Whether lines in small type are read a second time, upscaled (on by default). Off, each
 * frame is read once as the tesseract command reads it; for benchmarks and tests. Not
 * while vt_ocr_run runs.
 */
void vt_ocr_set_small_text(struct vt_ocr *ocr, int on);
/*
 * Whether the dark parts of a light frame (a terminal window, a dark panel) are inverted in
 * place before reading (on by default). Off, only a frame dark as a whole is inverted; for
 * benchmarks and tests. Not while vt_ocr_run runs.
 */
void vt_ocr_set_dark_parts(struct vt_ocr *ocr, int on);
/*
 * Read the n image files in paths into pages[0..n-1] (zeroed by the caller).
 * Returns 0 or a negative VT_E* code with the message in err.
 */
int vt_ocr_run(struct vt_ocr *ocr, const char *const *paths, size_t n, struct vt_ocr_page *pages,
               vt_progress_fn progress, void *user, char *err, size_t errlen);
/*
 * Whether the image at path is a texture of fine specks, which the stage reads with the
 * specks whited out (docs/MEASUREMENTS.md, "OCR on textures"): 1 or 0, *specks_mpx set to its
 * specks per megapixel; or a negative VT_E* code with the message in err. Uses the first engine:
 * not while vt_ocr_run runs. For tests and benchmarks.
 */
int vt_ocr_texture(struct vt_ocr *ocr, const char *path, double *specks_mpx, char *err,
                   size_t errlen);
void vt_ocr_page_release(struct vt_ocr_page *page);

void vt_ocr_free(struct vt_ocr *ocr);

#endif
