/*
 * Where small type is on a frame (ocr_find.h): strokes, candidate lines, gap pieces and
 * columns, found on the frame in grey after the page was read. Thresholds chosen on
 * tests/fixtures/gen_small_text.sh and bench/ocr_small_bench.sh unless said otherwise.
 */
#include "visual/ocr_find.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/*
 * Small text the page's layout analysis did not see at all (a footnote under large type is
 * taken for specks): strokes thinner than OCR_FIND_STROKE px that differ from their
 * surroundings by OCR_FIND_CONTRAST grey levels, outside the lines already read, joined
 * horizontally over OCR_FIND_JOIN px, make candidate lines of a text-like shape. More than
 * OCR_FIND_MAX candidates means a picture, not a slide: none are read.
 */
#define OCR_FIND_STROKE   9
#define OCR_FIND_CONTRAST 48
#define OCR_FIND_JOIN     9
#define OCR_FIND_MIN_H    6
#define OCR_FIND_MAX      24
/*
 * A column of short pieces: a code editor's line numbers (one or two digits, as wide as they
 * are tall or less, which the candidates' shape leaves out and Tesseract's layout takes for
 * specks), a list's numbers. OCR_COLUMN_MIN pieces or more, from a third of their height
 * wide, whose right or left edges and whose heights agree within OCR_COLUMN_ALIGN px, each
 * at most OCR_COLUMN_STEP heights below the one above, make a column, read as one block of
 * lines (scaled as a small line is); at most VT_OCR_COLUMN_MAX columns a frame.
 */
#define OCR_COLUMN_MIN   4
#define OCR_COLUMN_ALIGN 2
#define OCR_COLUMN_STEP  3
/*
 * A short piece on a row between two pieces of a line (a placeholder's "it to" between
 * "keep" and "myself", each word too short to be a candidate), or a run of them, each within
 * OCR_GAP_REACH of its height of the next, are words of that line: candidates, joined to
 * them.
 */
#define OCR_GAP_REACH  6
#define OCR_GAP_RUN    8
#define OCR_GAP_SHORTS 512
/*
 * A placeholder in a text field or a hint line is drawn in dim type, 40-50 levels off the
 * ground (gum's and Bubble Tea's grey on a terminal's near black), which Tesseract's global
 * threshold leaves with the ground and the stroke finder's contrast above does not reach.
 * On a plain ground (a screen or a slide: OCR_FLAT_SHARE of the pixels within OCR_FLAT_NEAR
 * levels of the commonest), or on a screen whose dark part was inverted (an editor beside a
 * light page: two grounds, neither half the frame), the finder takes strokes from
 * OCR_DIM_CONTRAST; a picture, with no such ground, keeps OCR_FIND_CONTRAST (its fine detail
 * would make a candidate of everything).
 */
#define OCR_DIM_CONTRAST 32
#define OCR_FLAT_NEAR    4
#define OCR_FLAT_SHARE   0.5
/*
 * Reverse video: a key's label in a terminal's shortcut bar (nano's ^G, ^X, two rows of them
 * touching as one cell), a tag, a button: light type on a dark cell, which Tesseract's binary
 * image keeps as one dark component with the letters as its holes, and which its layout
 * leaves out. A component OCR_REVERSE_MIN_H to OCR_REVERSE_MAX_H px tall (rows of at most
 * VT_OCR_SMALL_LINE_H), from half a row to OCR_REVERSE_MAX_AR rows wide, OCR_REVERSE_FILL of
 * its box dark and with a hole OCR_REVERSE_LETTER of a row high drawn in strokes (a letter:
 * at most OCR_REVERSE_STROKE of its own box light; a bold letter's counter is a solid blob)
 * and OCR_REVERSE_EDGE of its box's edge dark (a cell is a rectangle; a bold 'B' 47 px high
 * has a notch of ground between its bowls that is shaped like a letter) is a cell (a bold
 * 'o' or 'e' of small type is as holed, but below OCR_REVERSE_FILL: nano's labels 0.81-0.90,
 * letters at most 0.63).
 */
#define OCR_REVERSE_MIN_H  8
#define OCR_REVERSE_MAX_H  64
#define OCR_REVERSE_MAX_AR 6
#define OCR_REVERSE_FILL   0.7
#define OCR_REVERSE_LETTER 0.4f
#define OCR_REVERSE_STROKE 0.6
#define OCR_REVERSE_EDGE   0.9
/*
 * Dark frames are inverted before they are read (ocr.c), so type is mostly dark on light:
 * light strokes are looked for too (a second top-hat, 14 ms of the pass's 25 at 720p) only
 * when more than this share of Tesseract's binary image is dark, i.e. when there are dark
 * areas that could hold light type. The fixtures' slides: at most 0.08; photo-like frames
 * 0.06-0.49.
 */
#define OCR_FIND_DARK_SHARE 0.15

/* Whether OCR_FLAT_SHARE of grey's pixels are within OCR_FLAT_NEAR levels of its commonest
 * (a screen's or a slide's plain ground): 1, 0, or 0 when leptonica fails. */
static int flat_ground(PIX *grey)
{
    NUMA *hist = pixGetGrayHistogram(grey, 2);
    l_float32 *h = hist ? numaGetFArray(hist, L_NOCOPY) : NULL;
    double total = 0, near = 0;
    int m = 0;

    for (int v = 0; h && v < 256; v++) {
        total += h[v];
        m = h[v] > h[m] ? v : m;
    }
    for (int v = m - OCR_FLAT_NEAR; h && v <= m + OCR_FLAT_NEAR; v++)
        near += v >= 0 && v < 256 ? h[v] : 0;
    numaDestroy(&hist);
    return total > 0 && near >= OCR_FLAT_SHARE * total;
}

/*
 * The strokes of grey that stand contrast levels from their surroundings, as 1 in a binary
 * image (caller destroys; NULL when leptonica fails): dark strokes (type L_TOPHAT_BLACK) or
 * light ones (L_TOPHAT_WHITE).
 */
static PIX *find_strokes(PIX *grey, int type, int contrast)
{
    PIX *detail = pixTophat(grey, OCR_FIND_STROKE, OCR_FIND_STROKE, type);
    /* 1 where the detail is at least contrast */
    PIX *bin = detail ? pixThresholdToBinary(detail, contrast) : NULL;

    if (bin)
        pixInvert(bin, bin);
    pixDestroy(&detail);
    return bin;
}

/*
 * Add to out the candidate lines of one polarity of strokes (find_strokes' type) of grey
 * outside the n lines already read: none when there are more than OCR_FIND_MAX (a picture's
 * detail, not type); and to shorts the pieces of a line's height too short to be one (see
 * OCR_COLUMN_MIN). Returns 0, or -1 when leptonica fails.
 */
static int find_lines(PIX *grey, int type, int contrast, const struct vt_ocr_line *lines, size_t n,
                      BOXA *out, BOXA *shorts)
{
    PIX *bin = find_strokes(grey, type, contrast), *joined = NULL;
    BOXA *all = NULL, *found = boxaCreate(0);
    int count, rc = -1;

    if (!bin || !found)
        goto out;
    for (size_t i = 0; i < n; i++) {
        BOX *b = boxCreate(lines[i].box[0] - 2, lines[i].box[1] - 2, lines[i].box[2] + 4,
                           lines[i].box[3] + 4);

        if (b)
            pixClearInRect(bin, b);
        boxDestroy(&b);
    }
    joined = pixCloseBrick(NULL, bin, OCR_FIND_JOIN, 1);
    all = joined ? pixConnCompBB(joined, 8) : NULL;
    if (!all)
        goto out;
    count = boxaGetCount(all);
    for (int i = 0; i < count; i++) {
        l_int32 x, y, w, h;

        if (boxaGetBoxGeometry(all, i, &x, &y, &w, &h))
            continue;
        if (h < OCR_FIND_MIN_H || h > VT_OCR_SMALL_LINE_H || 3 * w < h)
            continue;
        if (w < 2 * h) {
            boxaAddBox(shorts, boxCreate(x, y, w, h), L_INSERT);
            continue;
        }
        if (boxaGetCount(found) == OCR_FIND_MAX) {
            boxaClear(found);
            break;
        }
        boxaAddBox(found, boxCreate(x, y, w, h), L_INSERT);
    }
    rc = boxaJoin(out, found, 0, -1) ? -1 : 0;
out:
    boxaDestroy(&found);
    boxaDestroy(&all);
    pixDestroy(&joined);
    pixDestroy(&bin);
    return rc;
}

/* Whether boxes a and b (x, y, w, h) are aligned on their right or their left edge. */
static int edges_aligned(const l_int32 *a, const l_int32 *b)
{
    return abs(a[0] + a[2] - b[0] - b[2]) <= OCR_COLUMN_ALIGN ||
           abs(a[0] - b[0]) <= OCR_COLUMN_ALIGN;
}

/* Add the columns (OCR_COLUMN_MIN) that the short pieces in shorts make to cols[*n_cols..],
 * up to VT_OCR_COLUMN_MAX in all. */
static void find_columns(BOXA *shorts, struct vt_ocr_column *cols, size_t *n_cols)
{
    BOXA *sorted = boxaSort(shorts, L_SORT_BY_Y, L_SORT_INCREASING, NULL);
    int n = sorted ? boxaGetCount(sorted) : 0;
    l_int32(*b)[4] = vt_xcalloc(n ? (size_t)n : 1, sizeof(*b));
    int *member = vt_xcalloc(n ? (size_t)n : 1, sizeof(*member));
    unsigned char *used = vt_xcalloc(n ? (size_t)n : 1, 1);

    for (int i = 0; i < n; i++)
        if (boxaGetBoxGeometry(sorted, i, &b[i][0], &b[i][1], &b[i][2], &b[i][3]))
            used[i] = 1;
    for (int i = 0; i < n && *n_cols < VT_OCR_COLUMN_MAX; i++) {
        int count = 0, last = i, x0, y0, x1, y1;

        if (used[i])
            continue;
        member[count++] = i;
        for (int j = i + 1; j < n && b[j][1] - b[last][1] <= OCR_COLUMN_STEP * b[i][3]; j++) {
            if (used[j] || b[j][1] < b[last][1] + b[last][3] / 2 || !edges_aligned(b[i], b[j]) ||
                abs(b[j][3] - b[i][3]) > OCR_COLUMN_ALIGN)
                continue;
            member[count++] = j;
            last = j;
        }
        if (count < OCR_COLUMN_MIN)
            continue;
        x0 = b[i][0], y0 = b[i][1], x1 = b[i][0] + b[i][2], y1 = b[i][1] + b[i][3];
        for (int k = 0; k < count; k++) {
            const l_int32 *m = b[member[k]];

            used[member[k]] = 1;
            x0 = m[0] < x0 ? m[0] : x0;
            x1 = m[0] + m[2] > x1 ? m[0] + m[2] : x1;
            y1 = m[1] + m[3] > y1 ? m[1] + m[3] : y1;
        }
        cols[*n_cols] = (struct vt_ocr_column){{x0, y0, x1 - x0, y1 - y0}, b[i][3]};
        (*n_cols)++;
    }
    free(used);
    free(member);
    free(b);
    boxaDestroy(&sorted);
}

int vt_ocr_one_row(const int *a, const int *b)
{
    int top = a[1] > b[1] ? a[1] : b[1];
    int bottom = a[1] + a[3] < b[1] + b[3] ? a[1] + a[3] : b[1] + b[3];

    return 2 * (bottom - top) >= (a[3] < b[3] ? a[3] : b[3]);
}

/*
 * Whether a piece of s's row (one of the n lines read, or a candidate in found) stands after
 * it (right), or before it, within OCR_GAP_REACH of its height.
 */
static int piece_beside(const l_int32 *s, int right, const struct vt_ocr_line *lines, size_t n,
                        BOXA *found)
{
    int count = boxaGetCount(found), reach = OCR_GAP_REACH * s[3];

    for (int i = 0; i < (int)n + count; i++) {
        l_int32 o[4];
        int gap;

        if (i < (int)n) {
            if (!lines[i].text)
                continue;
            memcpy(o, lines[i].box, sizeof(o));
        } else if (boxaGetBoxGeometry(found, i - (int)n, &o[0], &o[1], &o[2], &o[3])) {
            continue;
        }
        gap = right ? o[0] - (s[0] + s[2]) : s[0] - (o[0] + o[2]);
        if (vt_ocr_one_row(s, o) && gap >= -1 && gap <= reach)
            return 1;
    }
    return 0;
}

/* The short piece of shorts nearest after s on its row within OCR_GAP_REACH of its height:
 * its index, or -1. */
static int next_short(BOXA *shorts, const l_int32 *s)
{
    int best = -1, best_gap = OCR_GAP_REACH * s[3] + 1;

    for (int i = 0; i < boxaGetCount(shorts); i++) {
        l_int32 o[4];
        int gap;

        if (boxaGetBoxGeometry(shorts, i, &o[0], &o[1], &o[2], &o[3]))
            continue;
        gap = o[0] - (s[0] + s[2]);
        if (gap >= -1 && gap < best_gap && o[0] > s[0] && vt_ocr_one_row(s, o)) {
            best = i;
            best_gap = gap;
        }
    }
    return best;
}

/*
 * Add to found the runs of short pieces in shorts that fill a gap in a row: words of two or
 * three letters between two pieces of a line (OCR_GAP_REACH), which merge_rows then joins
 * to them. At most OCR_GAP_RUN pieces a run; none when shorts holds more than OCR_GAP_SHORTS
 * (a picture's detail).
 */
static void add_gap_pieces(BOXA *shorts, const struct vt_ocr_line *lines, size_t n, BOXA *found)
{
    int count = boxaGetCount(shorts), run[OCR_GAP_RUN];
    unsigned char *taken;
    BOXA *fillers;

    if (count == 0 || count > OCR_GAP_SHORTS)
        return;
    taken = vt_xcalloc((size_t)count, 1);
    fillers = boxaCreate(0);
    /* tested against the lines and the candidates, not against the other fillers */
    for (int i = 0; fillers && i < count; i++) {
        l_int32 s[4];
        int len = 0, k = i, closed = 0;

        if (taken[i] || boxaGetBoxGeometry(shorts, i, &s[0], &s[1], &s[2], &s[3]) ||
            !piece_beside(s, 0, lines, n, found))
            continue;
        while (k >= 0 && !taken[k] && len < OCR_GAP_RUN &&
               !boxaGetBoxGeometry(shorts, k, &s[0], &s[1], &s[2], &s[3])) {
            run[len++] = k;
            if ((closed = piece_beside(s, 1, lines, n, found)))
                break;
            k = next_short(shorts, s);
        }
        for (int j = 0; closed && j < len; j++) {
            BOX *b = boxaGetBox(shorts, run[j], L_COPY);

            taken[run[j]] = 1;
            if (b)
                boxaAddBox(fillers, b, L_INSERT);
        }
    }
    if (fillers)
        boxaJoin(found, fillers, 0, -1);
    boxaDestroy(&fillers);
    free(taken);
}

/* The finder (ocr_find.h): contrast from the ground (OCR_DIM_CONTRAST on a plain ground or a
 * screen), light strokes only where tb has dark areas (OCR_FIND_DARK_SHARE, or tb NULL). */
BOXA *vt_ocr_find_small_text(PIX *grey, PIX *tb, int screen, const struct vt_ocr_line *lines,
                             size_t n, struct vt_ocr_column *cols, size_t *n_cols)
{
    static const int types[2] = {L_TOPHAT_BLACK, L_TOPHAT_WHITE};
    int contrast = screen || flat_ground(grey) ? OCR_DIM_CONTRAST : OCR_FIND_CONTRAST;
    l_int32 dark_px = 0;
    int both = !tb || pixCountPixels(tb, &dark_px, NULL) ||
               dark_px > OCR_FIND_DARK_SHARE * pixGetWidth(tb) * pixGetHeight(tb);
    BOXA *out = boxaCreate(0);

    *n_cols = 0;
    for (int t = 0; t < (both ? 2 : 1) && out; t++) {
        BOXA *shorts = boxaCreate(0);

        if (!shorts || find_lines(grey, types[t], contrast, lines, n, out, shorts))
            boxaDestroy(&out);
        else {
            find_columns(shorts, cols, n_cols);
            add_gap_pieces(shorts, lines, n, out);
        }
        boxaDestroy(&shorts);
    }
    if (out && boxaGetCount(out) == 0)
        boxaDestroy(&out);
    return out;
}

/*
 * The height of the tallest hole of box (x, y, w, h) of the binary image bin that is drawn
 * with strokes (at most OCR_REVERSE_STROKE of its own box light): a light letter of a dark
 * cell, which may touch the cell's edge (the ground around a cell that is no rectangle spans
 * it); not the solid counter of a bold letter. 0 when there is none, or leptonica fails.
 */
static int tallest_hole(PIX *bin, const l_int32 *box)
{
    BOX *b = boxCreate(box[0], box[1], box[2], box[3]);
    PIX *cell = b ? pixClipRectangle(bin, b, NULL) : NULL;
    PIXA *parts = NULL;
    BOXA *holes = NULL;
    int tallest = 0;

    if (cell && pixInvert(cell, cell))
        holes = pixConnComp(cell, &parts, 8);
    for (int i = 0; holes && parts && i < boxaGetCount(holes); i++) {
        PIX *part = pixaGetPix(parts, i, L_CLONE);
        l_int32 x, y, w, h, on = 0;

        if (part && !boxaGetBoxGeometry(holes, i, &x, &y, &w, &h) && h > tallest &&
            h < box[3] - 1 && w < box[2] - 1 && !pixCountPixels(part, &on, NULL) &&
            on <= OCR_REVERSE_STROKE * w * h)
            tallest = h;
        pixDestroy(&part);
    }
    pixaDestroy(&parts);
    boxaDestroy(&holes);
    pixDestroy(&cell);
    boxDestroy(&b);
    return tallest;
}

/* The share of the edge of box (x, y, w, h) of the binary image bin that is on (a cell is a
 * rectangle, dark to its edges; a letter's box is not); 0 when leptonica fails. */
static double edge_on(PIX *bin, const l_int32 *box)
{
    const l_int32 sides[4][4] = {{box[0], box[1], box[2], 1},
                                 {box[0], box[1] + box[3] - 1, box[2], 1},
                                 {box[0], box[1], 1, box[3]},
                                 {box[0] + box[2] - 1, box[1], 1, box[3]}};
    l_int32 on = 0;

    for (int i = 0; i < 4; i++) {
        BOX *b = boxCreate(sides[i][0], sides[i][1], sides[i][2], sides[i][3]);
        l_int32 side = 0;

        if (!b || pixCountPixelsInRect(bin, b, &side, NULL)) {
            boxDestroy(&b);
            return 0;
        }
        on += side;
        boxDestroy(&b);
    }
    return (double)on / (2.0 * (box[2] + box[3]));
}

/* Whether box (x, y, w, h) of tb is a dark cell holding light type (OCR_REVERSE_*): the
 * height of its letters, or 0. */
static int reverse_cell(PIX *tb, const l_int32 *box)
{
    int rows = 1 + box[3] / (VT_OCR_SMALL_LINE_H + 1);
    float row_h = (float)box[3] / (float)rows;
    BOX *b = NULL;
    l_int32 on = 0;
    int letters = 0;

    if (box[3] < OCR_REVERSE_MIN_H || box[3] > OCR_REVERSE_MAX_H || 2.0f * (float)box[2] < row_h ||
        (float)box[2] > OCR_REVERSE_MAX_AR * row_h)
        return 0;
    b = boxCreate(box[0], box[1], box[2], box[3]);
    if (b && !pixCountPixelsInRect(tb, b, &on, NULL) && on >= OCR_REVERSE_FILL * box[2] * box[3] &&
        edge_on(tb, box) >= OCR_REVERSE_EDGE)
        letters = tallest_hole(tb, box);
    boxDestroy(&b);
    return (float)letters >= OCR_REVERSE_LETTER * row_h ? letters : 0;
}

size_t vt_ocr_find_reverse(PIX *tb, struct vt_ocr_cell *cells)
{
    BOXA *all = pixConnCompBB(tb, 8);
    size_t n = 0;

    for (int i = 0; all && i < boxaGetCount(all); i++) {
        l_int32 box[4];
        int letters;

        if (boxaGetBoxGeometry(all, i, &box[0], &box[1], &box[2], &box[3]) ||
            !(letters = reverse_cell(tb, box)))
            continue;
        if (n == VT_OCR_CELL_MAX) {
            n = 0;
            break;
        }
        cells[n++] = (struct vt_ocr_cell){{box[0], box[1], box[2], box[3]}, letters};
    }
    boxaDestroy(&all);
    return n;
}
