/*
 * The ocr stage: Tesseract (through its C API) over the kept keyframe images. vt_ocr_new
 * creates one TessBaseAPI engine per worker thread, each initialised once with the language
 * and reused for every frame; vt_ocr_run hands frames to the workers of the pool (workpool.c)
 * and reports progress from the calling thread only. Tesseract's output is treated as
 * untrusted: every line is checked to be UTF-8 before it leaves this file.
 *
 * Small type: Tesseract reads best at an x-height of 20-30 px, and a 12-16 px caption or
 * footnote at 720p (an x-height of 6-9 px) is often misread or lost at the page's own scale.
 * After the page is read, thin strokes outside the lines read are looked for (a footnote under
 * large type is often not even taken for text) and make candidate lines (ocr_find.c finds
 * them, and columns of short pieces, and dark cells of light type); pieces of one small line
 * are merged; then every small line (box at most VT_OCR_SMALL_LINE_H tall) that is a
 * candidate, was merged or is not trusted (read below OCR_SMALL_TRUST, or with a word not in
 * the dictionary) is cropped from the frame in grey, scaled up so that its box is about
 * OCR_SMALL_TARGET_H tall and read again as one line. The better reading stays in the line's
 * place, so nothing is read twice. Columns (an editor's line numbers) and cells (reverse
 * video, read inverted) are read as blocks, their lines kept where no line read covers them.
 * Then each line is judged text or noise (ocr_noise.h).
 * Dark frames are inverted first (OCR_DARK_MEAN), so that type is mostly dark on light.
 *
 * Threads: libtesseract links libgomp and its LSTM code opens OpenMP parallel regions inside
 * every recognition. With one engine per core that only adds contention, so OpenMP must be
 * limited to one thread. libgomp reads OMP_THREAD_LIMIT once, when the process loads it, so
 * setting the variable from here would be too late: the command line re-executes itself with
 * OMP_THREAD_LIMIT=1 instead. Without it this file still works, only more slowly, and says
 * nothing about it.
 */
#include "visual/ocr.h"

#include "base/util.h"
#include "base/workpool.h"
#include "visual/ocr_find.h"
#include "visual/ocr_noise.h"

#include <ctype.h>
#include <leptonica/allheaders.h>
#include <pthread.h>
#include <stdio.h>
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
/*
 * The small-text pass (chosen on tests/fixtures/gen_small_text.sh, bench/ocr_small_bench.sh):
 * a line box VT_OCR_SMALL_LINE_H or shorter holds type of about 20 px or less; it is scaled towards
 * OCR_SMALL_TARGET_H, by at most OCR_SMALL_MAX_SCALE, with OCR_SMALL_PAD of its height
 * around it (so that no stroke is cut, and little of a neighbouring line comes in).
 */
#define OCR_SMALL_TARGET_H  48.0f
#define OCR_SMALL_MAX_SCALE 4.0f
#define OCR_SMALL_PAD       0.3f
/*
 * Pieces of one small line (Tesseract splits some at a misread letter, and a candidate
 * may hold a word it left out) are merged when their rows overlap by half the shorter
 * height and the gap is at most OCR_SMALL_GAP heights; the merged line's new reading is
 * taken from OCR_SMALL_MERGED_CONF up, even below the pieces' own confidence.
 */
#define OCR_SMALL_GAP 1.5f
/*
 * A small line the first pass read at OCR_SMALL_TRUST or more, every letter of it in
 * dictionary words or numbers, is not read again (without a dictionary: from
 * OCR_SMALL_TRUST_NODICT). On the fixtures (gen_small_text.sh seeds 1-4) every misread small
 * line of the first pass is either below 0.80 or holds a word not in the dictionary
 * ("expor", "Porton" at 0.90); a line read whole from 0.85 with dictionary words only was
 * read the same again, at 40-75 ms for nothing.
 */
#define OCR_SMALL_TRUST        0.85
#define OCR_SMALL_TRUST_NODICT 0.95
#define OCR_SMALL_MERGED_CONF  0.60
/*
 * Dark cells of light type (reverse video, ocr_find.h) are read inverted, in a margin of
 * their own ground (the OCR_CELL_GROUND_RANK rank of the inverted cell's grey: a white
 * margin around a grey ground reads as a box), scaled as a small line whose letters are
 * OCR_CELL_LETTER of its height. In control-key notation Tesseract reads the caret as 'A'
 * or 'a' (nano's ^G read AG, ^X aX); a symbol so read whose box stands OCR_CARET_RAISE of
 * the line's tallest symbol above the line's bottom, at most OCR_CARET_HIGH as tall, is a
 * caret (of the first OCR_CARET_SYMBOLS of a line).
 */
#define OCR_CELL_GROUND_RANK 0.8f
#define OCR_CELL_LETTER      0.4f
#define OCR_CARET_RAISE      0.25f
#define OCR_CARET_HIGH       0.6f
#define OCR_CARET_SYMBOLS    64
/*
 * A candidate is the stroke finder's guess, not a line of Tesseract's layout, and a
 * picture is full of strokes: its reading is text only from this confidence (the noise
 * floor's sure text), else it is kept as noise. On the fixtures (gen_small_text.sh seeds
 * 1-4, t1410's video) the candidates of slides read at 0.88-0.97, those of photo-like
 * frames at most 0.81 ("aa"; a sparrow's feathers gave "all" at 0.45, which its 3-letter
 * word made text under the noise floor alone).
 */
#define OCR_SMALL_CANDIDATE_CONF 0.85
/*
 * Textures (bench/ocr_small_bench.sh, one thread): Tesseract's page layout costs 0.1-0.5 s
 * on a slide or a photo but 17-24 s on a texture of fine specks (the rule 110 cellular
 * automaton of the fixtures: its column finder is superlinear in the blobs it does not take
 * for an image), for two lines of garbage. A speck is a component of Tesseract's own binary
 * image (computed once, and used by Recognize as well) at most OCR_SPECK_SIDE px each way.
 * Type makes few (a page filled with 12 px type: 430 per megapixel; the slides: at most 190),
 * noisy frames 2,500-8,700 (Tesseract is quick on them), the automaton 75,000, a Game of Life
 * board at 1280x720 32,000. From OCR_TEXTURE_SPECKS per megapixel the frame is read in grey
 * with everything within OCR_TEXTURE_REACH px of a speck made white: what is left is what
 * stands on a plain ground, a caption box for instance. The automaton then costs 0.15-0.2 s
 * and gives no line; a caption in a box on it is read whole ("Harvest yield by region" at
 * 0.96, where the full layout read it in three pieces in 20 s); letters drawn on the texture
 * itself go with it (the full layout did not read them either). No small-text pass there:
 * the edge of the white area is all strokes.
 */
#define OCR_SPECK_SIDE     3
#define OCR_TEXTURE_SPECKS 20000
#define OCR_TEXTURE_REACH  7
/*
 * A terminal's block cursor, drawn in the cell after the last letter typed, is read as a
 * letter of the word before it ("neofetchf", "code.ff", "./split-editorf" in vhs's
 * recordings). A component of Tesseract's binary image that is a solid block of a letter's
 * shape (OCR_BLOCK_FILL of its box on, OCR_BLOCK_MIN_H to OCR_BLOCK_MAX_H px tall, width
 * OCR_BLOCK_MIN_AR to OCR_BLOCK_MAX_AR of its height) is no letter: a bold I or l is
 * narrower, a square bullet as wide as tall, and a letter under the cursor or a key label
 * in reverse video has holes. It is made ground before the frame is read.
 */
#define OCR_BLOCK_FILL   0.9
#define OCR_BLOCK_MIN_H  8
#define OCR_BLOCK_MAX_H  64
#define OCR_BLOCK_MIN_AR 0.35
#define OCR_BLOCK_MAX_AR 0.85
/*
 * A frame whose mean grey is below this (light type on a dark ground) is inverted before
 * it is read. Tesseract 5 reads a line it reads poorly a second time inverted, so on a dark
 * slide every line cost two recognitions: the fixtures' dark slides read the same text
 * inverted at 0.62-0.76 of the time (bench/ocr_small_bench.sh), and the lines the small-text
 * pass reads again are dark on light too.
 */
#define OCR_DARK_MEAN 128
/*
 * A light frame can hold a dark part: a terminal or a dark-themed editor in a window on a
 * light desktop, a dark panel beside a light page (and, on a frame inverted as a whole, a
 * light dialog on a dark one). The frame's mean stays light, Tesseract's global threshold
 * then takes the dark ground for ink and the light type on it is lost (a 680x560 terminal
 * on a light 1280x720 page, tests/fixtures/gen_dark_ui.sh: 7 of its 40 words read). So
 * such parts are inverted in place, and the frame reads as one page of dark type on light.
 * A part is found on the frame scaled down to cells of OCR_REGION_CELL px: cells whose
 * mean grey is below OCR_REGION_DARK (dark UI grounds are 20-62: #1e1e1e to #3c3f41; a
 * cell of light type on them stays below it once the holes are closed over
 * OCR_REGION_CLOSE cells), joined, make a part when they cover OCR_REGION_MIN of the frame
 * and OCR_REGION_FILL of their bounding box (a window or a panel is a rectangle; a dark
 * photo is not), and when OCR_REGION_GROUND of the part's own pixels are that dark: a
 * ground is mostly ground (a terminal's type is a tenth of its pixels), while the cells of
 * a large bold title close into a block of which the ink is half at most, and a title
 * inverted in place is lost.
 */
#define OCR_REGION_CELL   8
#define OCR_REGION_DARK   80
#define OCR_REGION_CLOSE  5
#define OCR_REGION_MIN    0.03
#define OCR_REGION_FILL   0.80
#define OCR_REGION_GROUND 0.70
/* The word list of the noise floor for English (PocketSphinx's pronouncing dictionary). */
#define OCR_DICT_EN "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"

struct vt_ocr {
    TessBaseAPI **engines;
    int n_engines;
    char *model;
    struct vt_ocr_dict *dict; /* NULL: the noise floor uses character classes */
    int small_text;
    int dark_parts; /* invert_dark_parts */
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

struct vt_ocr *vt_ocr_new(int nthreads, const char *lang, int *code, char *err, size_t errlen)
{
    struct vt_ocr *ocr = NULL;
    int rc = 0;

    if (!lang_valid(lang)) {
        rc = vt_err(err, errlen, VT_EINVAL, "'%s': bad ocr language", lang ? lang : "(null)");
        goto out;
    }
    if (nthreads < 0 || nthreads > OCR_MAX_THREADS) {
        rc = vt_err(err, errlen, VT_EINVAL, "'%d': bad ocr thread count", nthreads);
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
            rc = vt_err(err, errlen, VT_EIO, "cannot create tesseract engine");
            goto out;
        }
        ocr->engines[ocr->n_engines++] = api;
        /*
         * Tesseract's chatter ("Estimating resolution as ...", "Empty page!!", data file
         * errors) goes through tprintf to this file. The variable is global to the
         * process, and it is set before Init so that a failing Init is quiet too.
         */
        TessBaseAPISetVariable(api, "debug_file", "/dev/null");
        /* NULL datapath: $TESSDATA_PREFIX if set, else the compiled-in tessdata. Data this
         * machine lacks (or cannot read) another may have: VT_EHERE. */
        if (TessBaseAPIInit3(api, NULL, lang)) {
            rc = vt_err(err, errlen, VT_EHERE,
                        "'%s': cannot load tesseract language data on this machine (install its "
                        "tesseract-ocr-* package or set TESSDATA_PREFIX)",
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
    ocr->small_text = 1;
    ocr->dark_parts = 1;
    /* English alone or first: its dictionary; otherwise (or if it is missing) no dictionary. */
    if (!strcmp(lang, "eng") || !strncmp(lang, "eng+", 4))
        ocr->dict = vt_ocr_dict_load(OCR_DICT_EN, NULL, 0);
out:
    if (rc) {
        vt_ocr_free(ocr);
        ocr = NULL;
    }
    if (code)
        *code = rc;
    return ocr;
}

const char *vt_ocr_model(const struct vt_ocr *ocr)
{
    return ocr->model;
}

void vt_ocr_set_small_text(struct vt_ocr *ocr, int on)
{
    ocr->small_text = on;
}

void vt_ocr_set_dark_parts(struct vt_ocr *ocr, int on)
{
    ocr->dark_parts = on;
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
    vt_ocr_dict_free(ocr->dict);
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
 * spaces (a line is one line), leading and trailing white space is cut and zeros read as
 * '@' are mended. NULL when
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
    if (start < sb.len) {
        line = vt_xstrdup(sb.buf + start);
        vt_ocr_mend_zeros(line);
    }
    vt_sb_release(&sb);
    return line;
}

/*
 * Append the lines of what api recognised last to lines[0..*n_lines-1] (capacity *cap; the
 * caller frees the texts and the array): all of them, or with all unset only the first.
 */
static void read_lines(TessBaseAPI *api, int all, struct vt_ocr_line **lines, size_t *n_lines,
                       size_t *cap)
{
    TessResultIterator *it = TessBaseAPIGetIterator(api);

    /* No iterator means no text at all. */
    if (!it)
        return;
    do {
        const TessPageIterator *pit = TessResultIteratorGetPageIteratorConst(it);
        char *raw = TessResultIteratorGetUTF8Text(it, RIL_TEXTLINE);
        char *text = raw ? clean_line(raw) : NULL;
        struct vt_ocr_line *l;
        int x0, y0, x1, y1;
        double conf;

        if (raw)
            TessDeleteText(raw);
        if (!text)
            continue;
        if (!TessPageIteratorBoundingBox(pit, RIL_TEXTLINE, &x0, &y0, &x1, &y1))
            x0 = y0 = x1 = y1 = 0;
        conf = TessResultIteratorConfidence(it, RIL_TEXTLINE) / 100.0;
        vt_grow((void **)lines, cap, *n_lines + 1, sizeof(**lines));
        l = &(*lines)[(*n_lines)++];
        l->text = text;
        l->conf = conf < 0 ? 0 : conf > 1 ? 1 : conf;
        l->box[0] = x0;
        l->box[1] = y0;
        l->box[2] = x1 - x0;
        l->box[3] = y1 - y0;
        l->noise = 0;
    } while (all && TessResultIteratorNext(it, RIL_TEXTLINE));
    TessResultIteratorDelete(it);
}

static int is_small(const struct vt_ocr_line *l)
{
    return l->box[3] > 0 && l->box[3] <= VT_OCR_SMALL_LINE_H;
}

/* Whether small line l, as the first pass read it, is good enough not to be read again. */
static int small_trusted(const struct vt_ocr_line *l, const struct vt_ocr_dict *dict)
{
    struct vt_ocr_plausibility p;

    if (!l->text)
        return 0;
    if (!dict)
        return l->conf >= OCR_SMALL_TRUST_NODICT;
    if (l->conf < OCR_SMALL_TRUST)
        return 0;
    vt_ocr_plausibility(l->text, dict, &p);
    return p.dict_ratio >= 1.0;
}

/* Whether small lines a and b stand on one row, near enough to be one line. */
static int same_row(const struct vt_ocr_line *a, const struct vt_ocr_line *b)
{
    int ax1 = a->box[0] + a->box[2], bx1 = b->box[0] + b->box[2];
    int hmax = a->box[3] > b->box[3] ? a->box[3] : b->box[3];
    int gap = (a->box[0] > b->box[0] ? a->box[0] : b->box[0]) - (ax1 < bx1 ? ax1 : bx1);

    return vt_ocr_one_row(a->box, b->box) && (float)gap <= OCR_SMALL_GAP * (float)hmax;
}

/*
 * Merge the small lines of lines[0..*n-1] that are pieces of one line (same_row) into the
 * first of them: boxes joined, texts joined left to right, the lower confidence of those
 * read. *n_read (the lines of the first pass, in front) and merged[] follow.
 */
static void merge_rows(struct vt_ocr_line *lines, size_t *n, size_t *n_read, unsigned char *merged)
{
    for (size_t i = 0; i < *n; i++) {
        for (size_t j = i + 1; j < *n; j++) {
            struct vt_ocr_line *a = &lines[i], *b = &lines[j];
            int x0, y0, x1, y1;

            if (!is_small(a) || !is_small(b) || !same_row(a, b))
                continue;
            if (a->text && b->text) {
                int b_first = b->box[0] < a->box[0];
                char *t =
                    vt_xasprintf("%s %s", b_first ? b->text : a->text, b_first ? a->text : b->text);

                free(a->text);
                a->text = t;
                a->conf = a->conf < b->conf ? a->conf : b->conf;
            } else if (b->text) {
                a->text = b->text;
                a->conf = b->conf;
                b->text = NULL;
            }
            free(b->text);
            x0 = a->box[0] < b->box[0] ? a->box[0] : b->box[0];
            y0 = a->box[1] < b->box[1] ? a->box[1] : b->box[1];
            x1 = a->box[0] + a->box[2] > b->box[0] + b->box[2] ? a->box[0] + a->box[2]
                                                               : b->box[0] + b->box[2];
            y1 = a->box[1] + a->box[3] > b->box[1] + b->box[3] ? a->box[1] + a->box[3]
                                                               : b->box[1] + b->box[3];
            a->box[0] = x0;
            a->box[1] = y0;
            a->box[2] = x1 - x0;
            a->box[3] = y1 - y0;
            merged[i] = 1;
            memmove(&lines[j], &lines[j + 1], (*n - j - 1) * sizeof(*lines));
            memmove(&merged[j], &merged[j + 1], *n - j - 1);
            if (j < *n_read)
                (*n_read)--;
            (*n)--;
            /* the line grew: look at every other one again */
            j = i;
        }
    }
}

/* The scale of a small line of height px: towards OCR_SMALL_TARGET_H, at most
 * OCR_SMALL_MAX_SCALE. */
static float small_scale(int px)
{
    float scale = OCR_SMALL_TARGET_H / (float)(px > 0 ? px : 1);

    return scale > OCR_SMALL_MAX_SCALE ? OCR_SMALL_MAX_SCALE : scale;
}

/*
 * Box (x, y, w, h) of the frame in grey with OCR_SMALL_PAD of line height px around it,
 * within the frame, in out: whether it is 2 px each way at least.
 */
static int around_line(PIX *grey, const int *box, int px, int *out)
{
    int w = pixGetWidth(grey), h = pixGetHeight(grey);
    int pad = (int)(OCR_SMALL_PAD * (float)px + 0.5f) + 1;
    int x0 = box[0] - pad < 0 ? 0 : box[0] - pad, y0 = box[1] - pad < 0 ? 0 : box[1] - pad;
    int x1 = box[0] + box[2] + pad > w ? w : box[0] + box[2] + pad;
    int y1 = box[1] + box[3] + pad > h ? h : box[1] + box[3] + pad;

    out[0] = x0;
    out[1] = y0;
    out[2] = x1 - x0;
    out[3] = y1 - y0;
    return out[2] >= 2 && out[3] >= 2;
}

/*
 * Read line l of the frame in grey again, scaled up, as a single line; keep the reading
 * with the higher confidence in l (a merged line: any reading from OCR_SMALL_MERGED_CONF).
 * A reading that fails keeps the first one.
 */
static void reread_small(TessBaseAPI *api, PIX *grey, struct vt_ocr_line *l, int merged)
{
    float scale = small_scale(l->box[3]);
    int at[4];
    BOX *box;
    PIX *crop, *big;
    struct vt_ocr_line *again = NULL;
    size_t n = 0, cap = 0;

    if (!around_line(grey, l->box, l->box[3], at))
        return;
    box = boxCreate(at[0], at[1], at[2], at[3]);
    crop = box ? pixClipRectangle(grey, box, NULL) : NULL;
    big = crop ? pixScaleGrayLI(crop, scale, scale) : NULL;
    if (big) {
        TessBaseAPISetImage2(api, big);
        if (!TessBaseAPIRecognize(api, NULL))
            read_lines(api, 0, &again, &n, &cap);
        TessBaseAPIClear(api);
    }
    /* a candidate line (conf -1, no text yet) takes any reading */
    if (n == 1 && (again[0].conf > l->conf || (merged && again[0].conf >= OCR_SMALL_MERGED_CONF))) {
        free(l->text);
        l->text = again[0].text;
        l->conf = again[0].conf;
        again[0].text = NULL;
    }
    for (size_t i = 0; i < n; i++)
        free(again[i].text);
    free(again);
    pixDestroy(&big);
    pixDestroy(&crop);
    boxDestroy(&box);
}

/* Specks (see OCR_TEXTURE_SPECKS) per megapixel of the binary image bin. */
static double specks_per_mpx(PIX *bin)
{
    BOXA *boxes = pixConnCompBB(bin, 8);
    double mpx = (double)pixGetWidth(bin) * pixGetHeight(bin) / 1e6;
    int n = boxes ? boxaGetCount(boxes) : 0, specks = 0;

    for (int i = 0; i < n; i++) {
        l_int32 x, y, w, h;

        if (!boxaGetBoxGeometry(boxes, i, &x, &y, &w, &h) && w <= OCR_SPECK_SIDE &&
            h <= OCR_SPECK_SIDE)
            specks++;
    }
    boxaDestroy(&boxes);
    return mpx > 0 ? specks / mpx : 0;
}

/*
 * The texture of the binary image bin (see OCR_TEXTURE_SPECKS): NULL when it has none, else
 * a copy of grey (caller destroys) in which the textured area (within OCR_TEXTURE_REACH px
 * of a speck) is white. NULL as well when leptonica fails (the frame is then read as it is).
 */
static PIX *blank_texture(PIX *grey, PIX *bin)
{
    PIX *only = NULL, *mask = NULL, *clean = NULL;

    if (specks_per_mpx(bin) < OCR_TEXTURE_SPECKS)
        return NULL;
    only = pixSelectBySize(bin, OCR_SPECK_SIDE, OCR_SPECK_SIDE, 8, L_SELECT_IF_BOTH,
                           L_SELECT_IF_LTE, NULL);
    mask = only ? pixDilateBrick(NULL, only, 2 * OCR_TEXTURE_REACH + 1, 2 * OCR_TEXTURE_REACH + 1)
                : NULL;
    clean = mask ? pixCopy(NULL, grey) : NULL;
    if (clean && pixSetMasked(clean, mask, 255))
        pixDestroy(&clean);
    pixDestroy(&mask);
    pixDestroy(&only);
    return clean;
}

/*
 * The block cursors of the binary image bin (see OCR_BLOCK_FILL) made white in pix (8 or
 * 32 bits) and grey, both dark type on light by now: how many.
 */
static int blank_blocks(PIX *pix, PIX *grey, PIX *bin)
{
    BOXA *boxes = pixConnCompBB(bin, 8);
    int n = 0, depth = pixGetDepth(pix);

    for (int i = 0; boxes && i < boxaGetCount(boxes); i++) {
        BOX *b = boxaGetBox(boxes, i, L_CLONE);
        l_int32 x, y, w, h, on = 0;

        boxGetGeometry(b, &x, &y, &w, &h);
        if (h >= OCR_BLOCK_MIN_H && h <= OCR_BLOCK_MAX_H && w >= OCR_BLOCK_MIN_AR * h &&
            w <= OCR_BLOCK_MAX_AR * h && !pixCountPixelsInRect(bin, b, &on, NULL) &&
            on >= OCR_BLOCK_FILL * w * h) {
            pixSetInRectArbitrary(grey, b, 255);
            if (depth == 8 || depth == 32)
                pixSetInRectArbitrary(pix, b, depth == 8 ? 255 : 0xffffff00);
            n++;
        }
        boxDestroy(&b);
    }
    boxaDestroy(&boxes);
    return n;
}

/* *pix without its alpha channel (an inverted alpha would make the frame transparent):
 * 0, or -1 when leptonica fails (*pix is then NULL). */
static int drop_alpha(PIX **pix)
{
    PIX *opaque;

    if (pixGetSpp(*pix) != 4)
        return 0;
    opaque = pixRemoveAlpha(*pix);
    pixDestroy(pix);
    *pix = opaque;
    return opaque ? 0 : -1;
}

/* Whether the rectangle of grey is a dark ground (OCR_REGION_GROUND of its pixels below
 * OCR_REGION_DARK, counted on *px_dark, made on first use): 1, 0, or -1 when leptonica fails. */
static int is_ground(PIX *grey, PIX **px_dark, int x, int y, int w, int h)
{
    BOX *b;
    l_int32 on = 0;
    int rc;

    if (!*px_dark)
        *px_dark = pixThresholdToBinary(grey, OCR_REGION_DARK); /* before any inversion */
    b = *px_dark ? boxCreate(x, y, w, h) : NULL;
    rc = !b || pixCountPixelsInRect(*px_dark, b, &on, NULL) ? -1 : on >= OCR_REGION_GROUND * w * h;
    boxDestroy(&b);
    return rc;
}

/*
 * The dark parts of a light frame (OCR_REGION_*) inverted in place, in *pix and in grey.
 * Returns how many, or -1 when leptonica fails (*pix may then be NULL). A frame less than
 * OCR_REGION_CLOSE cells on a side holds no window (and Leptonica will not scale a frame
 * of under a cell): none.
 */
static int invert_dark_parts(PIX **pix, PIX *grey)
{
    int w = pixGetWidth(grey), h = pixGetHeight(grey), n = 0;
    double min_cells = OCR_REGION_MIN * w * h / (OCR_REGION_CELL * OCR_REGION_CELL);
    PIX *cells, *dark, *closed, *px_dark = NULL;
    BOXA *parts;

    if (w < OCR_REGION_CELL * OCR_REGION_CLOSE || h < OCR_REGION_CELL * OCR_REGION_CLOSE)
        return 0;
    cells = pixScaleAreaMap(grey, 1.0f / OCR_REGION_CELL, 1.0f / OCR_REGION_CELL);
    dark = cells ? pixThresholdToBinary(cells, OCR_REGION_DARK) : NULL;
    closed = dark ? pixCloseBrick(NULL, dark, OCR_REGION_CLOSE, OCR_REGION_CLOSE) : NULL;
    parts = closed ? pixConnCompBB(closed, 8) : NULL;
    if (!parts)
        n = -1;
    for (int i = 0; n >= 0 && i < boxaGetCount(parts); i++) {
        BOX *b = boxaGetBox(parts, i, L_CLONE);
        l_int32 bx, by, bw, bh, on = 0;
        int ground;

        boxGetGeometry(b, &bx, &by, &bw, &bh);
        if (!pixCountPixelsInRect(closed, b, &on, NULL) && on >= min_cells &&
            on >= OCR_REGION_FILL * bw * bh) {
            bx *= OCR_REGION_CELL;
            by *= OCR_REGION_CELL;
            bw *= OCR_REGION_CELL;
            bh *= OCR_REGION_CELL;
            ground = is_ground(grey, &px_dark, bx, by, bw, bh);
            if (ground < 0 || (ground && !n && drop_alpha(pix))) {
                n = -1;
            } else if (ground) {
                pixRasterop(*pix, bx, by, bw, bh, PIX_NOT(PIX_DST), NULL, 0, 0);
                pixRasterop(grey, bx, by, bw, bh, PIX_NOT(PIX_DST), NULL, 0, 0);
                n++;
            }
        }
        boxDestroy(&b);
    }
    pixDestroy(&px_dark);
    boxaDestroy(&parts);
    pixDestroy(&closed);
    pixDestroy(&dark);
    pixDestroy(&cells);
    return n;
}

/*
 * Read the image at path into *pix (colour or grey, as the file has it) and *grey (caller
 * destroys both), both inverted when the frame is dark (OCR_DARK_MEAN), then, if
 * dark_parts, their dark parts (OCR_REGION_*), *n_parts set to how many (when not NULL).
 * Returns 0 or VT_EMEDIA with the message in err.
 */
static int load_frame(const char *path, int dark_parts, PIX **pix, PIX **grey, int *n_parts,
                      char *err, size_t errlen)
{
    l_int32 format, w, h, bps, spp, iscmap;
    l_float32 mean = 255;
    int parts = 0;

    if (pixReadHeader(path, &format, &w, &h, &bps, &spp, &iscmap) || w <= 0 || h <= 0)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot read image", path);
    if (w > OCR_MAX_SIDE || h > OCR_MAX_SIDE || (long)w * h > OCR_MAX_PIXELS)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': image too large (%dx%d)", path, w, h);
    *pix = pixRead(path);
    /* a palette would be inverted as indices, not colours */
    if (*pix && pixGetColormap(*pix)) {
        PIX *plain = pixRemoveColormap(*pix, REMOVE_CMAP_BASED_ON_SRC);

        pixDestroy(pix);
        *pix = plain;
    }
    *grey = *pix ? pixConvertTo8(*pix, 0) : NULL;
    if (!*grey)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot read image", path);
    if (!pixGetAverageMasked(*grey, NULL, 0, 0, 4, L_MEAN_ABSVAL, &mean) && mean < OCR_DARK_MEAN) {
        if (drop_alpha(pix))
            return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot read image", path);
        pixInvert(*pix, *pix);
        pixInvert(*grey, *grey);
    }
    if (dark_parts && (parts = invert_dark_parts(pix, *grey)) < 0)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot read image", path);
    if (n_parts)
        *n_parts = parts;
    return 0;
}

/* Whether box (x, y, w, h) lies for half its area or more in one of lines[0..n-1] (one whose
 * text holds text, when text is not NULL). */
static int covered(const int *box, const char *text, const struct vt_ocr_line *lines, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const int *o = lines[i].box;
        int w, h;

        if (!lines[i].text || (text && !strstr(lines[i].text, text)))
            continue;
        w = (box[0] + box[2] < o[0] + o[2] ? box[0] + box[2] : o[0] + o[2]) -
            (box[0] > o[0] ? box[0] : o[0]);
        h = (box[1] + box[3] < o[1] + o[3] ? box[1] + box[3] : o[1] + o[3]) -
            (box[1] > o[1] ? box[1] : o[1]);
        if (w > 0 && h > 0 && 2L * w * h >= (long)box[2] * box[3])
            return 1;
    }
    return 0;
}

/* How a block of the frame is read (read_block). */
struct ocr_block {
    int box[4];  /* x, y, w, h in the frame */
    float scale; /* at most OCR_SMALL_MAX_SCALE */
    int cell;    /* a dark cell of light type: read inverted, in a margin of its ground */
};

/*
 * Whether symbol box s (x0, y0, x1, y1) is a mark raised off its line, whose symbols reach
 * down to bottom and are at most tallest high: its bottom above the line's by
 * OCR_CARET_RAISE of tallest, and at most OCR_CARET_HIGH as tall.
 */
static int raised(const int *s, int bottom, int tallest)
{
    return bottom - s[3] >= OCR_CARET_RAISE * (float)tallest &&
           (float)(s[3] - s[1]) <= OCR_CARET_HIGH * (float)tallest;
}

/* A symbol of a line as Tesseract read it (mend_carets). */
struct ocr_symbol {
    char text[8]; /* UTF-8; empty when longer */
    int box[4];   /* x0, y0, x1, y1 */
    int word;     /* the first of a word */
};

/*
 * Line l's text with carets mended: the first symbol of a word (of the count in sym, in
 * order), followed by a letter or a digit, raised off the line (raised) whatever it was read
 * as ('A', 'a', a quote, '*'), is a caret. l's text is left as it is when it does not spell
 * the symbols.
 */
static void mend_line(struct vt_ocr_line *l, const struct ocr_symbol *sym, int count)
{
    struct vt_sb out = {0};
    const char *c = l->text;
    int bottom = 0, tallest = 0, mended = 0;

    for (int k = 0; k < count; k++) {
        bottom = sym[k].box[3] > bottom ? sym[k].box[3] : bottom;
        tallest = sym[k].box[3] - sym[k].box[1] > tallest ? sym[k].box[3] - sym[k].box[1] : tallest;
    }
    for (int k = 0; k < count && c; k++) {
        size_t len = strlen(sym[k].text);

        while (*c == ' ')
            vt_sb_addc(&out, *c++);
        if (!len || strncmp(c, sym[k].text, len) != 0) {
            c = NULL;
            break;
        }
        if (sym[k].word && k + 1 < count && !sym[k + 1].word &&
            isalnum((unsigned char)sym[k + 1].text[0]) &&
            (!isalnum((unsigned char)c[0]) || c[0] == 'A' || c[0] == 'a') &&
            raised(sym[k].box, bottom, tallest)) {
            vt_sb_addc(&out, '^');
            mended = 1;
        } else {
            vt_sb_add(&out, c, len);
        }
        c += len;
    }
    if (c && !*c && mended) {
        free(l->text);
        l->text = vt_xstrdup(out.buf);
    }
    vt_sb_release(&out);
}

/*
 * Carets mended (mend_line) in the lines that Tesseract's last recognition gave
 * (lines[0..n-1], boxes as it gave them): in control-key notation (nano's ^G) it reads the
 * caret as 'A', 'a' or a quote. Only the first OCR_CARET_SYMBOLS symbols of a line count.
 */
static void mend_carets(TessBaseAPI *api, struct vt_ocr_line *lines, size_t n)
{
    TessResultIterator *it = TessBaseAPIGetIterator(api);
    struct ocr_symbol sym[OCR_CARET_SYMBOLS];
    int line[4] = {0}, count = 0;

    if (!it)
        return;
    for (int more = 1; more;) {
        const TessPageIterator *pit = TessResultIteratorGetPageIteratorConst(it);
        char *t = TessResultIteratorGetUTF8Text(it, RIL_SYMBOL);
        struct ocr_symbol *s = &sym[count];

        if (TessPageIteratorIsAtBeginningOf(pit, RIL_TEXTLINE)) {
            count = 0;
            s = &sym[0];
            TessPageIteratorBoundingBox(pit, RIL_TEXTLINE, &line[0], &line[1], &line[2], &line[3]);
        }
        if (t && count < OCR_CARET_SYMBOLS &&
            TessPageIteratorBoundingBox(pit, RIL_SYMBOL, &s->box[0], &s->box[1], &s->box[2],
                                        &s->box[3])) {
            snprintf(s->text, sizeof(s->text), "%s", strlen(t) < sizeof(s->text) ? t : "");
            s->word = TessPageIteratorIsAtBeginningOf(pit, RIL_WORD);
            count++;
        }
        if (t)
            TessDeleteText(t);
        more = TessResultIteratorNext(it, RIL_SYMBOL);
        if (more && !TessPageIteratorIsAtBeginningOf(pit, RIL_TEXTLINE))
            continue;
        for (size_t i = 0; i < n; i++)
            if (lines[i].text && lines[i].box[0] == line[0] && lines[i].box[1] == line[1])
                mend_line(&lines[i], sym, count);
    }
    TessResultIteratorDelete(it);
}

/*
 * Read block b of the frame in grey as one block of lines and add the lines that no line of
 * *lines covers to *lines (*n_lines, capacity *cap), in frame pixels (a cell's: that no line
 * holding its text covers). Leaves the engine in PSM_SINGLE_BLOCK.
 */
static void read_block(TessBaseAPI *api, PIX *grey, const struct ocr_block *b,
                       struct vt_ocr_line **lines, size_t *n_lines, size_t *cap)
{
    int margin = b->cell ? b->box[3] / 2 + 1 : 0;
    BOX *box = boxCreate(b->box[0], b->box[1], b->box[2], b->box[3]);
    PIX *crop = box ? pixClipRectangle(grey, box, NULL) : NULL, *framed = NULL, *big = NULL;
    struct vt_ocr_line *got = NULL;
    size_t n = 0, cap_got = 0;
    l_uint32 ground = 255;

    if (crop && b->cell && pixInvert(crop, crop) &&
        !pixGetRankValue(crop, 1, OCR_CELL_GROUND_RANK, &ground))
        framed = pixAddBorder(crop, margin, ground);
    if (framed || (crop && !b->cell))
        big = pixScaleGrayLI(framed ? framed : crop, b->scale, b->scale);
    if (big) {
        TessBaseAPISetPageSegMode(api, PSM_SINGLE_BLOCK);
        TessBaseAPISetImage2(api, big);
        if (!TessBaseAPIRecognize(api, NULL)) {
            read_lines(api, 1, &got, &n, &cap_got);
            if (b->cell)
                mend_carets(api, got, n);
        }
        TessBaseAPIClear(api);
    }
    for (size_t i = 0; i < n; i++) {
        struct vt_ocr_line l = got[i];

        for (int k = 0; k < 4; k++)
            l.box[k] = (int)((float)l.box[k] / b->scale + 0.5f) - (k < 2 ? margin - b->box[k] : 0);
        if (covered(l.box, b->cell ? l.text : NULL, *lines, *n_lines)) {
            free(l.text);
            continue;
        }
        vt_grow((void **)lines, cap, *n_lines + 1, sizeof(**lines));
        (*lines)[(*n_lines)++] = l;
    }
    free(got);
    pixDestroy(&big);
    pixDestroy(&framed);
    pixDestroy(&crop);
    boxDestroy(&box);
}

/* Read column c of the frame in grey (read_block), scaled as a small line is. */
static void read_column(TessBaseAPI *api, PIX *grey, const struct vt_ocr_column *c,
                        struct vt_ocr_line **lines, size_t *n_lines, size_t *cap)
{
    struct ocr_block b = {{0}, small_scale(c->piece_h), 0};

    if (around_line(grey, c->box, c->piece_h, b.box))
        read_block(api, grey, &b, lines, n_lines, cap);
}

/* Read the dark cells of light type of tb (vt_ocr_find_reverse) inverted, each scaled by its
 * letters as a small line is (read_block). */
static void read_reverse(TessBaseAPI *api, PIX *grey, PIX *tb, struct vt_ocr_line **lines,
                         size_t *n_lines, size_t *cap)
{
    struct vt_ocr_cell cells[VT_OCR_CELL_MAX];
    size_t n = vt_ocr_find_reverse(tb, cells);

    for (size_t i = 0; i < n; i++) {
        struct ocr_block b = {{cells[i].box[0], cells[i].box[1], cells[i].box[2], cells[i].box[3]},
                              small_scale((int)((float)cells[i].letter_h / OCR_CELL_LETTER)),
                              1};

        read_block(api, grey, &b, lines, n_lines, cap);
    }
}

/*
 * The small-text pass over the n_read lines of the first pass in *lines (capacity *cap),
 * with the frame in grey and Tesseract's binary image tb of it (or NULL; screen: a dark part
 * of the frame was inverted): candidates found, pieces merged, small lines read again,
 * columns and dark cells read; lines left in reading order in *lines[0..*n_lines-1].
 */
static void small_pass(const struct vt_ocr *ocr, TessBaseAPI *api, PIX *grey, PIX *tb, int screen,
                       struct vt_ocr_line **lines, size_t *n_lines, size_t *cap)
{
    struct vt_ocr_column cols[VT_OCR_COLUMN_MAX];
    size_t n_cols = 0;
    BOXA *found = vt_ocr_find_small_text(grey, tb, screen, *lines, *n_lines, cols, &n_cols);
    size_t n_read = *n_lines;
    unsigned char *merged;
    struct vt_ocr_line *ls;

    /* the candidates become lines (read below, like the small lines of the first pass) */
    for (int i = 0; found && i < boxaGetCount(found); i++) {
        struct vt_ocr_line *l;

        vt_grow((void **)lines, cap, *n_lines + 1, sizeof(**lines));
        l = &(*lines)[(*n_lines)++];
        memset(l, 0, sizeof(*l));
        boxaGetBoxGeometry(found, i, &l->box[0], &l->box[1], &l->box[2], &l->box[3]);
        l->conf = -1;
    }
    boxaDestroy(&found);
    ls = *lines;
    merged = vt_xcalloc(*n_lines ? *n_lines : 1, 1);
    merge_rows(ls, n_lines, &n_read, merged);
    TessBaseAPISetPageSegMode(api, PSM_SINGLE_LINE);
    for (size_t i = 0; i < *n_lines; i++)
        if (is_small(&ls[i]) && (merged[i] || !small_trusted(&ls[i], ocr->dict)))
            reread_small(api, grey, &ls[i], merged[i]);
    for (size_t i = 0; i < n_cols; i++)
        read_column(api, grey, &cols[i], lines, n_lines, cap);
    if (tb)
        read_reverse(api, grey, tb, lines, n_lines, cap);
    ls = *lines;
    TessBaseAPISetPageSegMode(api, PSM_AUTO);
    free(merged);
    /*
     * Candidates where nothing was read go; the others take their place in reading order,
     * before the first line of the first pass that starts below them.
     */
    for (size_t i = n_read; i < *n_lines; i++) {
        struct vt_ocr_line l = ls[i];
        size_t at = 0;

        if (!l.text) {
            memmove(&ls[i], &ls[i + 1], (*n_lines - i - 1) * sizeof(*ls));
            (*n_lines)--;
            i--;
            continue;
        }
        l.noise = l.conf < OCR_SMALL_CANDIDATE_CONF;
        while (at < n_read && ls[at].box[1] <= l.box[1])
            at++;
        memmove(&ls[at + 1], &ls[at], (i - at) * sizeof(*ls));
        ls[at] = l;
        n_read++;
    }
}

/* Read the image at path with ocr's engine api into page. Returns 0 or VT_EMEDIA with the
 * message in err. */
static int ocr_page(const struct vt_ocr *ocr, TessBaseAPI *api, const char *path,
                    struct vt_ocr_page *page, char *err, size_t errlen)
{
    PIX *pix = NULL, *grey = NULL, *bin = NULL, *clean = NULL;
    struct vt_ocr_line *lines = NULL;
    size_t n_lines = 0, cap = 0;
    int parts = 0, rc = load_frame(path, ocr->dark_parts, &pix, &grey, &parts, err, errlen);

    if (rc)
        goto out;
    TessBaseAPISetImage2(api, pix);
    /* Tesseract's own thresholding, which Recognize then uses as it is */
    bin = TessBaseAPIGetThresholdedImage(api);
    clean = bin ? blank_texture(grey, bin) : NULL;
    if (clean)
        TessBaseAPISetImage2(api, clean);
    else if (bin && blank_blocks(pix, grey, bin))
        TessBaseAPISetImage2(api, pix);
    if (TessBaseAPIRecognize(api, NULL)) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': text recognition failed", path);
        goto out;
    }
    read_lines(api, 1, &lines, &n_lines, &cap);
    /* Drop the results now, not when the engine reads its next frame. */
    TessBaseAPIClear(api);
    /* not on a texture (OCR_TEXTURE_SPECKS): the edge of its white area is all strokes */
    if (ocr->small_text && !clean)
        small_pass(ocr, api, grey, bin, parts > 0, &lines, &n_lines, &cap);
    for (size_t i = 0; i < n_lines; i++)
        lines[i].noise =
            lines[i].noise || vt_ocr_line_is_noise(lines[i].text, lines[i].conf, ocr->dict);
out:
    TessBaseAPIClear(api);
    pixDestroy(&clean);
    pixDestroy(&bin);
    pixDestroy(&grey);
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

int vt_ocr_texture(struct vt_ocr *ocr, const char *path, double *specks_mpx, char *err,
                   size_t errlen)
{
    TessBaseAPI *api = ocr->engines[0];
    PIX *pix = NULL, *grey = NULL, *bin = NULL;
    int rc = load_frame(path, ocr->dark_parts, &pix, &grey, NULL, err, errlen);

    if (rc)
        goto out;
    TessBaseAPISetImage2(api, pix);
    bin = TessBaseAPIGetThresholdedImage(api);
    if (!bin) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': cannot threshold image", path);
        goto out;
    }
    *specks_mpx = specks_per_mpx(bin);
    rc = *specks_mpx >= OCR_TEXTURE_SPECKS;
out:
    TessBaseAPIClear(api);
    pixDestroy(&bin);
    pixDestroy(&grey);
    pixDestroy(&pix);
    return rc;
}

/* One frame on one worker (a vt_pool task): worker k owns engine k. */
static int ocr_task(void *user, size_t worker, size_t i, char *err, size_t errlen)
{
    struct ocr_job *job = user;

    return ocr_page(job->ocr, job->ocr->engines[worker], job->paths[i], &job->pages[i], err,
                    errlen);
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
