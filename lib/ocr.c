/*
 * The ocr stage: Tesseract (through its C API) over the kept keyframe images. vt_ocr_new
 * creates one TessBaseAPI engine per worker thread, each initialised once with the language
 * and reused for every frame; vt_ocr_run hands frames to the workers of the pool (workpool.c)
 * and reports progress from the calling thread only. Tesseract's output is treated as
 * untrusted: every line is checked to be UTF-8 before it leaves this file.
 *
 * Threads: libtesseract links libgomp and its LSTM code opens OpenMP parallel regions inside
 * every recognition. With one engine per core that only adds contention, so OpenMP must be
 * limited to one thread. libgomp reads OMP_THREAD_LIMIT once, when the process loads it, so
 * setting the variable from here would be too late: the command line re-executes itself with
 * OMP_THREAD_LIMIT=1 instead. Without it this file still works, only more slowly, and says
 * nothing about it.
 */
#include "ocr.h"

#include "util.h"
#include "workpool.h"

#include <leptonica/allheaders.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <tesseract/capi.h>
#include <unistd.h>

/* More engines than this would only cost memory (tens of MB each). */
#define OCR_MAX_THREADS 256
/*
 * Images larger than this are refused before decoding: keyframes are at most 4096x4096
 * and a hostile header must not make us allocate gigabytes.
 */
#define OCR_MAX_SIDE   16384
#define OCR_MAX_PIXELS (4096L * 4096L * 2L)

struct vt_ocr {
    TessBaseAPI **engines;
    int n_engines;
    char *model;
};

/* What the workers of one vt_ocr_run call share; each frame has its own page. */
struct ocr_job {
    struct vt_ocr *ocr;
    const char *const *paths;
    struct vt_ocr_page *pages;
};

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;

/*
 * Leptonica writes its errors (e.g. for a corrupt JPEG) to stderr; we report through err
 * instead. Its severity is a process-wide setting, so it is set once.
 */
static void quiet_leptonica(void)
{
    setMsgSeverity(L_SEVERITY_NONE);
}

/* Language names as Tesseract takes them: "eng", "chi_sim", "eng+fra". No paths. */
static int lang_valid(const char *lang)
{
    size_t n = 0;

    if (!lang)
        return 0;
    for (; lang[n]; n++) {
        char c = lang[n];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '+'))
            return 0;
        if (n >= 64)
            return 0;
    }
    return n > 0;
}

struct vt_ocr *vt_ocr_new(int nthreads, const char *lang, char *err, size_t errlen)
{
    struct vt_ocr *ocr = NULL;
    int ok = 0;

    if (!lang_valid(lang)) {
        vt_err(err, errlen, VT_EINVAL, "'%s': bad ocr language", lang ? lang : "(null)");
        goto out;
    }
    if (nthreads < 0 || nthreads > OCR_MAX_THREADS) {
        vt_err(err, errlen, VT_EINVAL, "'%d': bad ocr thread count", nthreads);
        goto out;
    }
    if (nthreads == 0) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

        nthreads = ncpu < 1 ? 1 : ncpu > OCR_MAX_THREADS ? OCR_MAX_THREADS : (int)ncpu;
    }
    pthread_once(&quiet_once, quiet_leptonica);

    ocr = vt_xcalloc(1, sizeof(*ocr));
    ocr->engines = vt_xcalloc((size_t)nthreads, sizeof(*ocr->engines));
    /* Engines are initialised one after the other: Init touches global parameters. */
    for (int i = 0; i < nthreads; i++) {
        TessBaseAPI *api = TessBaseAPICreate();

        if (!api) {
            vt_err(err, errlen, VT_EIO, "cannot create tesseract engine");
            goto out;
        }
        ocr->engines[ocr->n_engines++] = api;
        /*
         * Tesseract's chatter ("Estimating resolution as ...", "Empty page!!", data file
         * errors) goes through tprintf to this file. The variable is global to the
         * process, and it is set before Init so that a failing Init is quiet too.
         */
        TessBaseAPISetVariable(api, "debug_file", "/dev/null");
        /* NULL datapath: $TESSDATA_PREFIX if set, else the compiled-in tessdata. */
        if (TessBaseAPIInit3(api, NULL, lang)) {
            vt_err(err, errlen, VT_ENOTFOUND,
                   "'%s': cannot load tesseract language data (install its tesseract-ocr-* "
                   "package or set TESSDATA_PREFIX)",
                   lang);
            goto out;
        }
        /* The tesseract command's default: page layout analysis, no orientation detection. */
        TessBaseAPISetPageSegMode(api, PSM_AUTO);
    }
    /*
     * tprintf opens debug_file on its first call, with no lock: make that first call here,
     * on one thread, rather than in two workers at once (a race and a leaked FILE). With no
     * image set, Recognize only prints "Please call SetImage..." (into /dev/null) and fails.
     */
    TessBaseAPIRecognize(ocr->engines[0], NULL);
    ocr->model = vt_xasprintf("tesseract %s %s", TessVersion(), lang);
    ok = 1;
out:
    if (!ok) {
        vt_ocr_free(ocr);
        ocr = NULL;
    }
    return ocr;
}

const char *vt_ocr_model(const struct vt_ocr *ocr)
{
    return ocr->model;
}

void vt_ocr_free(struct vt_ocr *ocr)
{
    if (!ocr)
        return;
    for (int i = 0; i < ocr->n_engines; i++) {
        TessBaseAPIEnd(ocr->engines[i]);
        TessBaseAPIDelete(ocr->engines[i]);
    }
    free(ocr->engines);
    free(ocr->model);
    free(ocr);
}

void vt_ocr_page_release(struct vt_ocr_page *page)
{
    if (!page)
        return;
    for (size_t i = 0; i < page->n_lines; i++)
        free(page->lines[i].text);
    free(page->lines);
    page->lines = NULL;
    page->n_lines = 0;
}

/*
 * A line as it may be stored: invalid UTF-8 bytes become '?', control characters become
 * spaces (a line is one line), and leading and trailing white space is cut. NULL when
 * nothing is left; otherwise caller frees.
 */
static char *clean_line(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    struct vt_sb sb = {0};
    size_t start = 0;
    char *line = NULL;

    while (*s) {
        /* the decoder stops at the terminator */
        size_t n = vt_utf8_decode((const char *)s, 4, NULL);

        if (n == 0)
            vt_sb_addc(&sb, '?');
        else if (n == 1 && (*s < 0x20 || *s == 0x7f))
            vt_sb_addc(&sb, ' ');
        else
            vt_sb_add(&sb, (const char *)s, n);
        s += n ? n : 1;
    }
    while (sb.len > 0 && sb.buf[sb.len - 1] == ' ')
        sb.buf[--sb.len] = '\0';
    while (start < sb.len && sb.buf[start] == ' ')
        start++;
    if (start < sb.len)
        line = vt_xstrdup(sb.buf + start);
    vt_sb_release(&sb);
    return line;
}

/* Read the image at path with api into page. Returns 0 or VT_EMEDIA with the message in err. */
static int ocr_page(TessBaseAPI *api, const char *path, struct vt_ocr_page *page, char *err,
                    size_t errlen)
{
    PIX *pix = NULL;
    TessResultIterator *it = NULL;
    struct vt_ocr_line *lines = NULL;
    size_t n_lines = 0, cap = 0;
    l_int32 format, w, h, bps, spp, iscmap;
    int rc = 0;

    if (pixReadHeader(path, &format, &w, &h, &bps, &spp, &iscmap) || w <= 0 || h <= 0) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': cannot read image", path);
        goto out;
    }
    if (w > OCR_MAX_SIDE || h > OCR_MAX_SIDE || (long)w * h > OCR_MAX_PIXELS) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': image too large (%dx%d)", path, w, h);
        goto out;
    }
    pix = pixRead(path);
    if (!pix) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': cannot read image", path);
        goto out;
    }
    TessBaseAPISetImage2(api, pix);
    if (TessBaseAPIRecognize(api, NULL)) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': text recognition failed", path);
        goto out;
    }
    /* No iterator means no text at all. */
    it = TessBaseAPIGetIterator(api);
    if (!it)
        goto out;
    do {
        const TessPageIterator *pit = TessResultIteratorGetPageIteratorConst(it);
        char *raw = TessResultIteratorGetUTF8Text(it, RIL_TEXTLINE);
        char *text = raw ? clean_line(raw) : NULL;
        int x0, y0, x1, y1;
        double conf;

        if (raw)
            TessDeleteText(raw);
        if (!text)
            continue;
        if (!TessPageIteratorBoundingBox(pit, RIL_TEXTLINE, &x0, &y0, &x1, &y1))
            x0 = y0 = x1 = y1 = 0;
        conf = TessResultIteratorConfidence(it, RIL_TEXTLINE) / 100.0;
        vt_grow((void **)&lines, &cap, n_lines + 1, sizeof(*lines));
        lines[n_lines].text = text;
        lines[n_lines].conf = conf < 0 ? 0 : conf > 1 ? 1 : conf;
        lines[n_lines].box[0] = x0;
        lines[n_lines].box[1] = y0;
        lines[n_lines].box[2] = x1 - x0;
        lines[n_lines].box[3] = y1 - y0;
        n_lines++;
    } while (TessResultIteratorNext(it, RIL_TEXTLINE));
out:
    if (it)
        TessResultIteratorDelete(it);
    /* Drop the image and the results now, not when the engine reads its next frame. */
    TessBaseAPIClear(api);
    pixDestroy(&pix);
    if (rc == 0) {
        page->lines = lines;
        page->n_lines = n_lines;
    } else {
        struct vt_ocr_page tmp = {lines, n_lines};

        vt_ocr_page_release(&tmp);
    }
    return rc;
}

/* One frame on one worker (a vt_pool task): worker k owns engine k. */
static int ocr_task(void *user, size_t worker, size_t i, char *err, size_t errlen)
{
    struct ocr_job *job = user;

    return ocr_page(job->ocr->engines[worker], job->paths[i], &job->pages[i], err, errlen);
}

int vt_ocr_run(struct vt_ocr *ocr, const char *const *paths, size_t n, struct vt_ocr_page *pages,
               vt_progress_fn progress, void *user, char *err, size_t errlen)
{
    struct ocr_job job = {.ocr = ocr, .paths = paths, .pages = pages};
    /* The callback runs on the caller's thread, never on a worker. */
    struct vt_pool pool = {.n_items = n,
                           .n_workers = (size_t)ocr->n_engines,
                           .task = ocr_task,
                           .user = &job,
                           .progress = progress,
                           .progress_user = user};
    int rc = vt_pool_run(&pool, err, errlen);

    if (rc < 0) {
        /* On failure the caller gets no partial result to free. */
        for (size_t i = 0; i < n; i++)
            vt_ocr_page_release(&pages[i]);
    }
    return rc;
}
