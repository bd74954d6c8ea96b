/*
 * Shot boundaries from per-frame features. Four detectors share one feature array:
 *
 *  - fades through black: a run of black frames inside the video is one boundary, in
 *    the middle of the run (like PySceneDetect's ThresholdDetector), and the fade-out
 *    and fade-in around it belong to no shot's stable part;
 *  - dissolves on the coarse grid: a window across which the cells change a lot, whose
 *    middle frame is the half-way mix of its ends, reached in small steps, faster than
 *    the picture changes outside it (or, between two moving shots, a dip of contrast);
 *  - dissolves between two still pictures too alike for the grid (slides on one
 *    template): twin comparison (Zhang et al. 1993) of the thumbnail's differences, which
 *    add up to the net change across a mix and to more across a pointer's path, unless
 *    only the light changed or a cell went beyond both ends (a subject moving);
 *  - hard cuts: a spike of the frame difference well above the local baseline on
 *    both sides, or, for a slide change on the same background where few pixels
 *    change, a spike of the fraction of strongly changed pixels over a quiet baseline,
 *    or a spike of the grid's difference (over both sides, or over a still one).
 *
 * Thresholds are relative to local baselines so that noisy or moving shots do not
 * produce cuts. Then not_a_shot drops what real footage puts inside a shot: flashes,
 * covers (something flat over the lens, then the same picture), a change of light in one
 * step (scanned film's exposure), a screen edited under its first line of type (a terminal's
 * output, a menu; a screen whose first line is replaced is a new shot however little else
 * changes), camera motion, a subject moving
 * over a background that stays, overlays (titles, bullets), and grid mixes between moving shots
 * whose contrast never dips (a pan that speeds up, a zoom). Every pass is linear in the number of
 * frames.
 */
#include "visual/shotdetect.h"

#include "base/util.h"
#include "visual/keyframe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BASE_WIN     8    /* analysed frames on each side for local baselines */
#define MIN_SHOT_S   0.25 /* boundaries closer than this are one boundary */
#define MAX_FADE_S   3.0  /* a fade-out or fade-in longer than this is not followed */
#define MAX_DISS_S   3.0  /* longest dissolve looked for */
#define BLACK_MEAN   24.0
#define BLACK_STDDEV 10.0
#define WHITE_MEAN   (255.0 - BLACK_MEAN)

struct bound {
    size_t at;           /* first analysed frame of the new shot */
    size_t span0, span1; /* transition frames [span0, span1] */
    enum vt_sd_kind kind;
    int dip; /* a dissolve found by its contrast's dip, not by the grid's mix */
};

struct bounds {
    struct bound *v;
    size_t n, cap;
};

static void add_bound(struct bounds *b, size_t at, size_t s0, size_t s1, enum vt_sd_kind kind)
{
    vt_grow((void **)&b->v, &b->cap, b->n + 1, sizeof(*b->v));
    b->v[b->n].at = at;
    b->v[b->n].span0 = s0;
    b->v[b->n].span1 = s1;
    b->v[b->n].kind = kind;
    b->v[b->n].dip = 0;
    b->n++;
}

/* The names are the domain's (model/frames.h): the store reads them back too. */
const char *vt_sd_kind_name(enum vt_sd_kind kind)
{
    switch (kind) {
    case VT_SD_CUT:
        return vt_transition_name(VT_TRANSITION_CUT);
    case VT_SD_FADE:
        return vt_transition_name(VT_TRANSITION_FADE);
    case VT_SD_DISSOLVE:
        return vt_transition_name(VT_TRANSITION_DISSOLVE);
    default:
        return NULL;
    }
}

int vt_sd_is_black(const struct vt_sd_feat *f)
{
    return f->mean < BLACK_MEAN && f->stddev < BLACK_STDDEV;
}

int vt_sd_is_white(const struct vt_sd_feat *f)
{
    return f->mean > WHITE_MEAN && f->stddev < BLACK_STDDEV;
}

/* Mean of d1 (or changed) over [a, b), from prefix sums; 0 when empty. */
static double win_mean(const double *pre, size_t a, size_t b)
{
    return b > a ? (pre[b] - pre[a]) / (double)(b - a) : 0;
}

/*
 * The end of the fade-out before black frame k (dir -1) or of the fade-in after it
 * (dir 1): followed while the luma grows away from black (away from white: sign -1), in
 * steps no smaller than FADE_STEP of the largest yet, since a moving shot's own luma may
 * drift on the same way once the fade is over. A single stalled step is passed over:
 * pass 1 now and then shows a picture twice.
 */
#define FADE_STEP 0.25
/*
 * A fade's ramp moves the luma: the picture at its far end stands FADE_MIN_RISE grey levels
 * off its flat end at least. A slide of a few words on a near-black ground (presenterm's
 * title slide: mean 20.7, deviation 8.5) is flat by BLACK_MEAN and BLACK_STDDEV, and the cut
 * from it to the next slide on that ground (mean 21.3) is one step of 0.6: no ramp, a cut.
 */
#define FADE_MIN_RISE 3.0

static size_t follow_fade(const struct vt_sd_feat *f, size_t n, size_t k, int dir, int sign)
{
    double t0 = f[k].t_s, most = 0;

    for (;;) {
        size_t j = k + dir, j2 = j + dir;
        double thr = fmax(0.2, FADE_STEP * most), step;

        if ((dir < 0 && k == 0) || j >= n || fabs(f[j].t_s - t0) > MAX_FADE_S)
            return k;
        step = sign * (f[j].mean - f[k].mean);
        if (step <= thr &&
            (j2 >= n || (dir < 0 && j == 0) || sign * (f[j2].mean - f[j].mean) <= thr ||
             fabs(f[j2].t_s - t0) > MAX_FADE_S))
            return k;
        if (step <= thr)
            j = j2;
        most = fmax(most, sign * (f[j].mean - f[k].mean));
        k = j;
    }
}

/* Whether f is the flat end of a fade: black, or with white, white. */
static int flat_end(const struct vt_sd_feat *f, int white)
{
    return white ? vt_sd_is_white(f) : vt_sd_is_black(f);
}

/*
 * Whether the white frames [s, e], their fade-out from s0 and fade-in to e1, are a dip to
 * white between two pictures: both ramps DIP_STEPS analysed frames long at least (a flash
 * or a strobe jumps to white in one), and a picture on either side (a flat one fading to
 * white and back is no transition: PySceneDetect's fades.mp4).
 */
#define DIP_STEPS   2
#define DIP_PICTURE 20.0 /* a picture's grey levels spread this much at least (stddev) */

static int dip_to_white(const struct vt_sd_feat *f, size_t s0, size_t s, size_t e, size_t e1)
{
    return s - s0 >= DIP_STEPS && e1 - e >= DIP_STEPS && f[s0].stddev >= DIP_PICTURE &&
           f[e1].stddev >= DIP_PICTURE;
}

/* Fades through black, and dips to white (dip_to_white), into b; their frames in mask. */
static void find_fades(const struct vt_sd_feat *f, size_t n, uint8_t *mask, struct bounds *b)
{
    for (int white = 0; white <= 1; white++) {
        size_t i = 0;

        while (i < n) {
            size_t s, e, s0, e1;

            if (!flat_end(&f[i], white)) {
                i++;
                continue;
            }
            s = i;
            while (i + 1 < n && flat_end(&f[i + 1], white))
                i++;
            e = i;
            i++;
            s0 = follow_fade(f, n, s, -1, white ? -1 : 1);
            e1 = follow_fade(f, n, e, 1, white ? -1 : 1);
            /* a ramp that hardly moves the luma is a cut from a dark slide, not a fade */
            s0 = fabs(f[s0].mean - f[s].mean) < FADE_MIN_RISE ? s : s0;
            e1 = fabs(f[e1].mean - f[e].mean) < FADE_MIN_RISE ? e : e1;
            if (white && !dip_to_white(f, s0, s, e, e1))
                continue;
            for (size_t k = s0; k <= e1; k++)
                mask[k] = 1;
            /* black at the very start or end opens or closes the video: no boundary */
            if (s == 0 || e == n - 1)
                continue;
            add_bound(b, s + (e - s + 1) / 2, s0, e1, VT_SD_FADE);
        }
    }
}

/* The analysed frame whose time is nearest t (frames are in time order). */
static size_t near_idx(const struct vt_sd_feat *f, size_t n, double t)
{
    size_t lo = 0, hi = n - 1;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (f[mid].t_s < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && t - f[lo - 1].t_s < f[lo].t_s - t)
        lo--;
    return lo;
}

/* Mean abs difference of two frames' coarse grids. */
static double gdist(const struct vt_sd_feat *x, const struct vt_sd_feat *y)
{
    int s = 0;

    for (int i = 0; i < VT_SD_GRID; i++)
        s += abs((int)x->grid[i] - (int)y->grid[i]);
    return (double)s / VT_SD_GRID;
}

/* Mean abs change of two frames' chroma cells: a change of light or a screen's text keeps
 * the colours, a new picture seldom does. */
static double chroma_change(const struct vt_sd_feat *x, const struct vt_sd_feat *y)
{
    const int nl = VT_SD_GRID_W * VT_SD_GRID_H;
    double ch = 0;

    for (int k = nl; k < VT_SD_GRID; k++)
        ch += abs((int)y->grid[k] - (int)x->grid[k]);
    return ch / (VT_SD_GRID - nl);
}

/* How far frame m is from the half-way mix of frames a and b (grid mean abs). */
static double glin(const struct vt_sd_feat *m, const struct vt_sd_feat *a,
                   const struct vt_sd_feat *b)
{
    int s = 0;

    for (int i = 0; i < VT_SD_GRID; i++)
        s += abs(2 * (int)m->grid[i] - (int)a->grid[i] - (int)b->grid[i]);
    return (double)s / (2.0 * VT_SD_GRID);
}

/* Where frame i lies on the way from a's grid to b's: 0 at a, 1 at b. */
static double galpha(const struct vt_sd_feat *i, const struct vt_sd_feat *a,
                     const struct vt_sd_feat *b)
{
    double num = 0, den = 0;

    for (int k = 0; k < VT_SD_GRID; k++) {
        double v = (double)b->grid[k] - a->grid[k];

        num += ((double)i->grid[k] - a->grid[k]) * v;
        den += v * v;
    }
    return den > 0 ? num / den : 0;
}

/* Half-widths of the windows a dissolve is looked for in, and its limits. */
static const double gr_half_s[] = {0.2, 0.35, 0.6, 1.1};
#define GR_NET       6.0  /* least net change of the coarse grid across a dissolve */
#define GR_LIN       0.25 /* the middle frame is the half-way mix within this share of it */
#define GR_STILL     0.1  /* a side is still when it changes this share of the net as long */
#define GR_LIN_STILL 0.34 /* GR_LIN when one side is still (a cut: 0.5) */
#define GR_RATE      2.25 /* across it, the picture changes this much faster than outside */
#define GR_OUT_S     1.0  /* longest stretch outside compared with it */
#define GR_STEP      0.4  /* largest step of the mix between two analysed frames */
#define GR_LO        0.15 /* the ramp of a dissolve is measured between these shares */
#define GR_HI        0.85

struct grad {
    double score;
    size_t a, b; /* the frames compared, on either side of the transition */
    int dip;     /* the score is the contrast's dip (var_dip), not the grid's mix */
};

static int is_dark(const struct vt_sd_feat *f)
{
    return f->mean < 1.5 * BLACK_MEAN && f->stddev < 1.5 * BLACK_STDDEV;
}

/*
 * Whether m looks like the middle of a mix of a and b even though both move (the
 * grid's cells then follow the motion, not the mix): the mix's mean luma is the mean
 * of the ends', and two unrelated pictures mixed have less contrast than either.
 */
static int var_dip(const struct vt_sd_feat *f, size_t a, size_t m, size_t b)
{
    double lo = fmin(f[a].stddev, f[b].stddev);

    if (lo < 12 || f[m].stddev > 0.7 * lo ||
        fabs(f[m].mean - (f[a].mean + f[b].mean) / 2) > 0.1 * fabs(f[a].mean - f[b].mean) + 3)
        return 0;
    /* a bowl: down to m and up again, no frame lower than m's by much */
    for (size_t i = a; i <= b; i++)
        if (f[i].stddev < 0.9 * f[m].stddev)
            return 0;
    return 1;
}

/* Whether the mix goes from a to b in small steps: a cut jumps half-way at once. */
static int smooth_ramp(const struct vt_sd_feat *f, size_t a, size_t b)
{
    double prev = 0;

    for (size_t i = a + 1; i <= b; i++) {
        double al = galpha(&f[i], &f[a], &f[b]);

        if (fabs(al - prev) > GR_STEP)
            return 0;
        prev = al;
    }
    return 1;
}

/*
 * The rates of change of the grid just outside the window [a, b] (per second, over as
 * long as the window, up to GR_OUT_S: further the next transition may lie) into *ra
 * and *rb; 0 when too near the start or the end to tell.
 */
static int out_rates(const struct vt_sd_feat *f, size_t n, size_t a, size_t b, double *ra,
                     double *rb)
{
    double lout = fmin(f[b].t_s - f[a].t_s, GR_OUT_S);
    size_t a2 = near_idx(f, n, f[a].t_s - lout), b2 = near_idx(f, n, f[b].t_s + lout);

    if (f[a].t_s - f[a2].t_s < 0.5 * lout || f[b2].t_s - f[b].t_s < 0.5 * lout)
        return 0;
    /* as rates: a steady change over the longer window inside is as fast */
    *ra = gdist(&f[a2], &f[a]) / (f[a].t_s - f[a2].t_s);
    *rb = gdist(&f[b], &f[b2]) / (f[b2].t_s - f[b].t_s);
    return 1;
}

/*
 * The score of [a, b] as a dissolve whose half-way mix is m (lin off it), 0 when it is
 * none: a pan or a zoom changes the picture steadily, as fast before or after.
 */
static double mix_score(const struct vt_sd_feat *f, size_t n, const uint32_t *pmask, size_t a,
                        size_t b, double net, double lin)
{
    double dur = f[b].t_s - f[a].t_s, ra, rb, out;

    if (!out_rates(f, n, a, b, &ra, &rb))
        return 0;
    out = fmin(ra, rb);
    /* one side may move (a still slide dissolving into a moving shot), but
     * not faster than the dissolve changes: an accelerating zoom would */
    if (net < GR_RATE * out * dur + 2 || net < fmax(ra, rb) * dur)
        return 0;
    /* with one side still, the middle differs from the mix of the ends by half of what
     * the other side moved meanwhile: a longer window leaves more of it */
    if (lin > GR_LIN * net && (lin > GR_LIN_STILL * net || out * dur > GR_STILL * net))
        return 0;
    if ((pmask[b] != pmask[a + 1] && !is_dark(&f[a]) && !is_dark(&f[b])) || !smooth_ramp(f, a, b))
        return 0;
    return net - 1.5 * lin;
}

/*
 * The best window in which frame m is the middle of a dissolve; score 0 when none.
 * pmask: prefix sums of the frames already taken by fades, which a window may only
 * end on (a fade-in or fade-out the luma did not follow to its end, see merge_fade).
 */
static struct grad grad_at(const struct vt_sd_feat *f, size_t n, const uint32_t *pmask, size_t m)
{
    struct grad best = {0, 0, 0, 0};

    for (size_t k = 0; k < VT_ARRAY_LEN(gr_half_s); k++) {
        double h = gr_half_s[k], t = f[m].t_s, net, lin, sc = 0, ms;
        size_t a = near_idx(f, n, t - h), b = near_idx(f, n, t + h);
        int dip = 0;

        if (a >= m || b <= m || t - f[a].t_s < 0.7 * h || f[b].t_s - t < 0.7 * h)
            continue;
        net = gdist(&f[a], &f[b]);
        if (net < GR_NET)
            continue;
        lin = glin(&f[m], &f[a], &f[b]);
        /* both sides move: the contrast's dip is the evidence (a pan or a zoom keeps
         * it), weaker than the grid's mix, so it ranks below */
        if (lin > GR_LIN * net && pmask[b] == pmask[a + 1] && var_dip(f, a, m, b)) {
            sc = 0.5 * net;
            dip = 1;
        }
        if (lin <= GR_LIN_STILL * net && (ms = mix_score(f, n, pmask, a, b, net, lin)) > sc) {
            sc = ms;
            dip = 0;
        }
        if (sc > best.score) {
            best.score = sc;
            best.a = a;
            best.b = b;
            best.dip = dip;
        }
    }
    return best;
}

/*
 * A mix from or to black next to a fade through black (found first) is that fade's
 * fade-in or fade-out, which the luma alone did not follow to its end (noise, motion):
 * the fade's span grows to hold it. Returns whether it was merged.
 */
static int merge_fade(const struct vt_sd_feat *f, struct bounds *b, size_t a, size_t z, size_t s0,
                      size_t s1)
{
    if (!is_dark(&f[a]) && !is_dark(&f[z]))
        return 0;
    for (size_t i = 0; i < b->n; i++) {
        struct bound *x = &b->v[i];

        if (x->kind != VT_SD_FADE || x->span1 + 1 < a || x->span0 > z + 1)
            continue;
        x->span0 = s0 < x->span0 ? s0 : x->span0;
        x->span1 = s1 > x->span1 ? s1 : x->span1;
        return 1;
    }
    return 0;
}

/*
 * Dissolves, between still or moving shots alike: a window [a, b] across which the
 * coarse picture changes a lot, whose middle frame is the half-way mix of its ends
 * (motion gives no such mix, a cut gives one end or the other), and outside which the
 * picture changes much more slowly (a pan changes steadily). The best middle of a run
 * of such frames is the boundary; the ramp of the mix from a to b gives the span.
 */
/* Run middles by score, best first (ties: earlier first). */
static const struct grad *sort_g;

static int by_score(const void *x, const void *y)
{
    size_t i = *(const size_t *)x, j = *(const size_t *)y;

    if (sort_g[i].score != sort_g[j].score)
        return sort_g[i].score > sort_g[j].score ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* How far frame i is from the line through a's and b's grids, at its own share al. */
static double off_line(const struct vt_sd_feat *i, const struct vt_sd_feat *a,
                       const struct vt_sd_feat *b, double al)
{
    double s = 0;

    for (int k = 0; k < VT_SD_GRID; k++)
        s += fabs((double)i->grid[k] - ((1 - al) * a->grid[k] + al * b->grid[k]));
    return s / VT_SD_GRID;
}

/*
 * The window's end e (g->a, dir -1; g->b, dir 1) moved on while the frames beyond it
 * still go on along the mix (a window shorter than the dissolve ends inside it, when
 * the shot beyond moved before it began): at most as far again, and not into frames
 * other transitions took.
 */
#define GR_EXT 0.005 /* least step of the mix from one analysed frame to the next */

static size_t ramp_end(const struct vt_sd_feat *f, size_t n, const uint8_t *mask,
                       const struct grad *g, size_t e, int dir)
{
    const struct vt_sd_feat *fa = &f[g->a], *fb = &f[g->b];
    double al = dir < 0 ? 0 : 1, net = gdist(fa, fb), span = fb->t_s - fa->t_s;

    for (;;) {
        size_t j = e + dir;
        double aj;

        if ((dir < 0 && e == 0) || j >= n || mask[j] ||
            fabs(f[j].t_s - f[dir < 0 ? g->a : g->b].t_s) > span)
            return e;
        aj = galpha(&f[j], fa, fb);
        if (dir * (aj - al) < GR_EXT || off_line(&f[j], fa, fb, aj) > GR_LIN * net)
            return e;
        e = j;
        al = aj;
    }
}

/* Still pictures, for the edges of dissolves here and for find_still_mixes below */
#define QM_BASE 1.0  /* the still sides' mean frame difference, at most */
#define QM_MIN  0.15 /* a mixed frame differs this much more than the still sides */

/*
 * Where a dissolve begins (dir -1) or ends (dir 1) when the shot on that side, beyond
 * its window's end e, is still: at the first or the last frame that changes, a sharper
 * edge than the ramp's when the other side moves. s is the ramp's, kept when the
 * side moves, or when the changing frames end more than half the span dur beyond it
 * or a tenth inside (a slow mix of like pictures changes some frames too little).
 */
static size_t still_edge(const struct vt_sd_feat *f, size_t n, size_t m, size_t e, int dir,
                         size_t s, double dur)
{
    double base = 0, thr, out;
    size_t k = m, cnt = 0;

    for (size_t i = e, j = 0; j < BASE_WIN && i > 0 && i < n; j++, i += dir, cnt++)
        base += f[i].d1;
    base = cnt ? base / cnt : INFINITY;
    thr = 2 * base + QM_MIN;
    if (base > QM_BASE || f[m].d1 <= thr)
        return s;
    /* f[k].d1 is k's change from the frame before: the first mixed frame has one, and
     * so has the first frame of the shot after */
    if (dir < 0)
        while (k > 1 && f[k - 1].d1 > thr)
            k--;
    else
        while (k + 1 < n && f[k + 1].d1 > thr)
            k++;
    if (dir > 0 && k > m)
        k--;
    out = dir * (f[k].t_s - f[s].t_s);
    return out <= 0.5 * dur && out >= -0.1 * dur ? k : s;
}

/* The span [*s0, *s1] of the dissolve whose middle is m, from the ramp of its mix. */
static void grad_span(const struct vt_sd_feat *f, size_t n, const uint8_t *mask,
                      const struct grad *win, size_t m, size_t *s0, size_t *s1)
{
    struct grad g0 = {win->score, ramp_end(f, n, mask, win, win->a, -1),
                      ramp_end(f, n, mask, win, win->b, 1), win->dip},
                *g = &g0;
    const struct vt_sd_feat *fa = &f[g->a], *fb = &f[g->b];
    size_t i = m, j = m;
    double al, ah, dur, t0;

    /* the ramp between GR_LO and GR_HI, extended linearly to 0 and 1 */
    while (i > g->a + 1 && galpha(&f[i - 1], fa, fb) > GR_LO)
        i--;
    while (j + 1 < g->b && galpha(&f[j + 1], fa, fb) < GR_HI)
        j++;
    al = galpha(&f[i], fa, fb);
    ah = galpha(&f[j], fa, fb);
    dur = ah - al > 0.2 ? (f[j].t_s - f[i].t_s) / (ah - al) : f[j].t_s - f[i].t_s;
    t0 = f[i].t_s - fmax(0, al) * dur;
    /* the mix is 0 at t0 and 1 at t0 + dur: those frames are the shots', not mixed */
    *s0 = near_idx(f, n, t0);
    *s1 = near_idx(f, n, t0 + dur);
    if (f[*s0].t_s <= t0 + 1e-3 && *s0 + 1 < n)
        ++*s0;
    if (f[*s1].t_s >= t0 + dur - 1e-3 && *s1 > 0)
        --*s1;
    if (*s0 <= g->a)
        *s0 = g->a + 1;
    if (*s1 >= g->b)
        *s1 = g->b - 1;
    if (*s0 > m)
        *s0 = m;
    if (*s1 < m)
        *s1 = m;
    dur = f[*s1].t_s - f[*s0].t_s;
    *s0 = still_edge(f, n, m, g->a, -1, *s0, dur);
    *s1 = still_edge(f, n, m, g->b, 1, *s1, dur);
}

/*
 * Whether the window (a, b) holds frames a stronger dissolve took (masked now, but not
 * by a fade, pmask): its ends are then no pictures of the shots on either side, and a
 * moving shot's own contrast or mix compared with them means nothing.
 */
static int crosses_taken(const uint8_t *mask, const uint32_t *pmask, size_t a, size_t b)
{
    for (size_t k = a + 1; k < b; k++)
        if (mask[k] && pmask[k + 1] == pmask[k])
            return 1;
    return 0;
}

static void find_gradual(const struct vt_sd_feat *f, size_t n, uint8_t *mask, struct bounds *b)
{
    struct grad *g = vt_xcalloc(n, sizeof(*g));
    uint32_t *pmask = vt_xmalloc((n + 1) * sizeof(*pmask));
    size_t *runs = vt_xmalloc(n * sizeof(*runs)), n_runs = 0;

    pmask[0] = 0;
    for (size_t i = 0; i < n; i++)
        pmask[i + 1] = pmask[i] + mask[i];
    for (size_t m = 1; m + 1 < n; m++)
        if (!mask[m])
            g[m] = grad_at(f, n, pmask, m);
    /* the best middle of each run of candidates (allowing one frame's gap) */
    for (size_t m = 1; m + 1 < n; m++) {
        size_t best = m, e = m;

        if (g[m].score <= 0)
            continue;
        while (e + 1 < n && (g[e + 1].score > 0 || (e + 2 < n && g[e + 2].score > 0)))
            e++;
        for (size_t k = m; k <= e; k++)
            if (g[k].score > g[best].score)
                best = k;
        runs[n_runs++] = best;
        m = e;
    }
    /* best first: a long dissolve can give two runs, the weaker one inside the span
     * of the stronger is the same dissolve */
    sort_g = g;
    qsort(runs, n_runs, sizeof(*runs), by_score);
    for (size_t r = 0; r < n_runs; r++) {
        size_t m = runs[r], s0, s1;

        if (mask[m] || crosses_taken(mask, pmask, g[m].a, g[m].b))
            continue;
        grad_span(f, n, mask, &g[m], m, &s0, &s1);
        for (size_t k = s0 > 0 ? s0 - 1 : 0; k <= s1 + 1 && k < n; k++)
            mask[k] = 1;
        if (!merge_fade(f, b, g[m].a, g[m].b, s0, s1)) {
            add_bound(b, near_idx(f, n, (f[s0].t_s + f[s1].t_s) / 2), s0, s1, VT_SD_DISSOLVE);
            b->v[b->n - 1].dip = g[m].dip;
        }
    }
    free(runs);
    free(g);
    free(pmask);
}

/*
 * A dissolve between two still pictures that differ in little more than their text (two
 * slides on one template): too small a change for the grid's cells, but every pixel
 * moves one way, so the frame differences across it add up to the net change (twin
 * comparison, Zhang et al. 1993), while a pointer moving or a flicker adds up to more.
 * The net change is the long-range difference, whose lag (VT_SD_LAG_S) may be shorter
 * than the mix: then the differences of the frames it was taken against, in a chain
 * back to before the mix, which add up as each pixel moves one way.
 */
#define QM_STEP  0.05 /* a mixed frame differs this much more than twice the still sides */
#define QM_MAX_S 2.2  /* longest such mix, as the grid's longest window */
#define QM_NET   1.0  /* least net change (mean abs on the thumbnail) */
#define QM_TWIN  0.7  /* the net change is at least this share of the accumulated one */
#define QM_PEAK  4.0  /* no step over this many times the others' mean: a cut is one step */

/* The frame the long-range difference of j was taken against (as keyframe.c takes it:
 * the newest at least VT_SD_LAG_S older); SIZE_MAX when there is none. */
static size_t lag_of(const struct vt_sd_feat *f, size_t n, size_t j)
{
    double t = f[j].t_s - VT_SD_LAG_S + 1e-6;
    size_t k = near_idx(f, n, t);

    while (k > 0 && f[k].t_s > t)
        k--;
    return f[k].t_s <= t ? k : SIZE_MAX;
}

/* The net change from before frame s to frame j, by a chain of long-range differences;
 * 0 when the chain is too long or starts too near the beginning. */
static double chained_net(const struct vt_sd_feat *f, size_t n, size_t s, size_t j)
{
    double net = 0;

    for (int hop = 0; hop < 3; hop++) {
        size_t k = lag_of(f, n, j);

        if (k == SIZE_MAX)
            return 0;
        net += f[j].dlong;
        if (k < s)
            return net;
        j = k;
    }
    return 0;
}

/*
 * Twin comparison sees how much the thumbnail changes, not how; real footage changes a
 * still picture in small steps that add up without a change of picture (issue 24):
 *  - light: the whole picture brightens or darkens, every luma cell the same way and by
 *    a share of the mean's shift at least, and its colours stay (the exposure of scanned
 *    film flickering, a camera's settling). A new slide replaces text, which moves some
 *    cells and leaves the others, both ways; text added moves only the cells it covers;
 *  - a subject moving in a still shot (a head turning): a mix takes each cell from the
 *    value at one end to the value at the other, so no mixed frame's cell lies outside
 *    the range of the two but by noise, while a moving subject takes the cells it
 *    crosses beyond both and back.
 */
#define QM_LIGHT      0.8  /* the mean's shift is at least this share of the net change */
#define QM_LIGHT_CELL 0.25 /* every luma cell moves the mean's way by this share of it */
#define QM_LIGHT_CHR  2.0  /* largest mean change of the chroma cells */
#define QM_OVER       3    /* a mixed frame's cells lie at most this far outside the ends' */

static int light_change(const struct vt_sd_feat *a, const struct vt_sd_feat *b, double net)
{
    const int nl = VT_SD_GRID_W * VT_SD_GRID_H;
    double dm = (double)b->mean - a->mean;

    if (fabs(dm) < QM_LIGHT * net)
        return 0;
    for (int k = 0; k < nl; k++)
        if (((double)b->grid[k] - a->grid[k]) * (dm > 0 ? 1 : -1) < QM_LIGHT_CELL * fabs(dm))
            return 0;
    return chroma_change(a, b) <= QM_LIGHT_CHR;
}

/* Whether a cell of a frame in [s, e] lies beyond the range of frames s - 1 and e + 1. */
static int beyond_ends(const struct vt_sd_feat *f, size_t s, size_t e)
{
    const uint8_t *a = f[s - 1].grid, *b = f[e + 1].grid;

    for (size_t i = s; i <= e; i++)
        for (int k = 0; k < VT_SD_GRID; k++) {
            int lo = a[k] < b[k] ? a[k] : b[k], hi = a[k] < b[k] ? b[k] : a[k];

            if (f[i].grid[k] < lo - QM_OVER || f[i].grid[k] > hi + QM_OVER)
                return 1;
        }
    return 0;
}

/*
 * Whether the changes of frames [s, e] over the sides' level base come in steps of which
 * none is QM_PEAK times the others' mean (a cut is one step); *sum set to them summed.
 */
static int gradual(const struct vt_sd_feat *f, size_t s, size_t e, double base, double *sum)
{
    double peak = 0;

    *sum = 0;
    for (size_t k = s; k <= e; k++) {
        *sum += fmax(0, f[k].d1 - base);
        peak = fmax(peak, f[k].d1 - base);
    }
    return peak <= QM_PEAK * (*sum - peak) / (double)(e - s);
}

/* Whether frames [s, e] are a still mix as above, from the quiet sides' level base. */
static int still_mix(const struct vt_sd_feat *f, size_t n, size_t s, size_t e, double base)
{
    double sum, net;
    int steps;

    if (e < s + 2 || e + 1 >= n || f[e].t_s - f[s].t_s > QM_MAX_S)
        return 0;
    steps = gradual(f, s, e, base, &sum);
    /* from e + 1, after the mix, back to a frame before it */
    net = chained_net(f, n, s, e + 1);
    return net >= QM_NET && net >= QM_TWIN * sum && steps;
}

/* The last frame of the run of changing frames from s on (over thr; one frame under it
 * is passed over: with B-frames skipped, one step in two may be half as large). */
static size_t changing_run(const struct vt_sd_feat *f, size_t n, const uint8_t *mask, size_t s,
                           double thr)
{
    size_t e = s;

    for (;;) {
        if (e + 1 < n && !mask[e + 1] && f[e + 1].d1 >= thr)
            e++;
        else if (e + 2 < n && !mask[e + 1] && !mask[e + 2] && f[e + 2].d1 >= thr)
            e += 2;
        else
            return e;
    }
}

/*
 * A cut on the coarse grid: a spike of its frame difference well above both sides'.
 * Fine motion (noise, a cellular automaton, scrolling texture) raises the thumbnail's
 * difference to a cut's level but leaves the cells' means nearly still.
 */
#define GC_BUSY 0.8 /* a cut into a busy shot: at least this share of its steps */

static int grid_cut(const struct vt_sd_feat *f, size_t n, const double *pg, size_t i)
{
    size_t a0 = i > BASE_WIN ? i - BASE_WIN : 1, b1 = i + 1 + BASE_WIN < n ? i + 1 + BASE_WIN : n;
    double d = pg[i + 1] - pg[i], bb = win_mean(pg, a0, i), ba = win_mean(pg, i + 1, b1);
    double base = fmax(bb, ba), low = fmin(bb, ba);

    for (size_t k = i > 2 ? i - 2 : 1; k <= i + 2 && k < n; k++)
        if (k != i && pg[k + 1] - pg[k] >= d)
            return 0;
    /* or from cells standing still into a shot whose whole picture changes every
     * frame, whose steps are as large: no camera starts to move so in one frame */
    return d >= 8 && (d >= 4 * base + 4 || (d >= 10 * low + 5 && d >= GC_BUSY * base));
}

/*
 * Whether the jump at keyframe i is pass 1's drift going back (see find_cuts) later in a
 * shot: its group of pictures began in a transition, and the jump only shifts the
 * brightness, the same on every cell and with no change of colour (a still slide after
 * a dissolve from a moving shot drifted so by 11 grey levels in 1.4 s), as no change of
 * picture does: a cut between slides changes their colours, their text or far more. Or
 * the jump is fine detail only (the blocks of a picture whose fade was decoded without the
 * filter: a still photograph after a fade in jumped by 9.8 in the thumbnail at the next
 * keyframe, 7 frames on): the grid moved by at most DRIFT_GRID and no text grid cell moved
 * (a slide replaced by one of the same layout moves the cells its text is in). The real
 * set's cuts at keyframes move the grid by 9.7 and more.
 */
#define DRIFT_SHIFT  0.8  /* least share of the frame difference that is the mean's shift */
#define DRIFT_CELLS  0.3  /* the luma cells' shifts spread at most this share of it */
#define DRIFT_CHROMA 2.0  /* largest mean change of the chroma cells */
#define DRIFT_MAX    24.0 /* largest drift */
#define DRIFT_GRID   6.0  /* largest grid distance of a drift of fine detail */
#define DRIFT_STROKE 12   /* ... whose text grid cells moved by at most this */

static int uniform_shift(const struct vt_sd_feat *x, const struct vt_sd_feat *y)
{
    const int nl = VT_SD_GRID_W * VT_SD_GRID_H;
    double dm = (double)y->mean - x->mean, sum = 0, sq = 0;

    if (fabs(dm) < DRIFT_SHIFT * y->d1 || fabs(dm) > DRIFT_MAX)
        return 0;
    for (int k = 0; k < nl; k++) {
        double d = (double)y->grid[k] - x->grid[k];

        sum += d;
        sq += d * d;
    }
    return sqrt(fmax(0, sq / nl - (sum / nl) * (sum / nl))) <= DRIFT_CELLS * fabs(dm) &&
           chroma_change(x, y) <= DRIFT_CHROMA;
}

static int fine_only(const struct vt_sd_feat *x, const struct vt_sd_feat *y)
{
    if (gdist(x, y) > DRIFT_GRID)
        return 0;
    for (int k = 0; k < VT_SD_TEXT; k++)
        if (abs((int)x->text[k] - (int)y->text[k]) > DRIFT_STROKE)
            return 0;
    return 1;
}

static int drift_back(const struct vt_sd_feat *f, const uint8_t *mask, size_t i)
{
    if (!f[i].key || !(uniform_shift(&f[i - 1], &f[i]) || fine_only(&f[i - 1], &f[i])))
        return 0;
    for (size_t k = i - 1; k > 0; k--) {
        if (mask[k])
            return 1;
        if (f[k].key)
            return 0;
    }
    return 0;
}

static void find_cuts(const struct vt_sd_feat *f, size_t n, const double *pd1, const double *pch,
                      const double *pg, const uint8_t *mask, struct bounds *b)
{
    for (size_t i = 1; i < n; i++) {
        size_t a0 = i > BASE_WIN ? i - BASE_WIN : 0,
               b1 = i + 1 + BASE_WIN < n ? i + 1 + BASE_WIN : n;
        double bb = win_mean(pd1, a0, i), ba = win_mean(pd1, i + 1, b1);
        double base = fmax(bb, ba), low = fmin(bb, ba);
        double cbase = fmax(win_mean(pch, a0, i), win_mean(pch, i + 1, b1));
        double d = f[i].d1;
        int peak = 1, hard, soft;

        if (mask[i])
            continue;
        /* pass 1 decodes without the loop filter, so its pictures drift from the
         * encoder's until the next keyframe; most in a fade or dissolve, after which
         * the encoder often places one: the jump back is the transition's end */
        if (f[i].key && (mask[i - 1] || (i > 2 && mask[i - 2]) || (i > 3 && mask[i - 3])))
            continue;
        if (drift_back(f, mask, i))
            continue;
        if (grid_cut(f, n, pg, i)) {
            add_bound(b, i, i - 1, i, VT_SD_CUT);
            continue;
        }
        /* the strongest frame of a neighbourhood carries the cut */
        for (size_t k = i > 2 ? i - 2 : 0; k <= i + 2 && k < n; k++)
            if (k != i && (f[k].d1 > d || (f[k].d1 == d && k < i)))
                peak = 0;
        if (!peak)
            continue;
        /* well above both sides, or (between a still and a moving shot) well above
         * the quiet side and clearly above the busy one */
        hard = (d >= 6 && d >= 2.0 * base + 3) || (d >= 10 && d >= 3 * low + 5 && d >= 1.3 * base);
        soft = f[i].changed >= 0.004 && f[i].changed >= 4 * cbase + 0.002 && d >= 2.0 * base + 0.25;
        if (hard || soft)
            add_bound(b, i, i - 1, i, VT_SD_CUT);
    }
}

/*
 * Boundaries that are no change of shot, dropped after all detectors ran (fades through
 * black excepted: going through black ends a shot whatever comes back).
 *
 * A flash (a muzzle flash, a photographer's flash, a strobe, a frame or two of white) is
 * a spike of every difference that a cut also is, but the picture before it comes back
 * within a few frames: a shot shorter than MIN_SHOT_S that returns to the one before it
 * is no shot. The grids of frames on either side of the spike are compared, so a flash
 * over a moving shot still matches (the cells move little in a quarter of a second).
 */
#define FLASH_S    0.25 /* the picture before comes back within this long */
#define FLASH_SAME 0.3  /* ... to within this share of the spike's own grid change */

static int is_flash(const struct vt_sd_feat *f, size_t n, size_t i)
{
    double jump = gdist(&f[i - 1], &f[i]);

    if (jump < 2)
        return 0;
    for (size_t j = i; j-- > 0 && f[i].t_s - f[j].t_s <= FLASH_S;)
        for (size_t k = i; k < n && f[k].t_s - f[j].t_s <= FLASH_S; k++)
            if ((j + 1 < i || k > i) && gdist(&f[j], &f[k]) <= FLASH_SAME * jump)
                return 1;
    return 0;
}

/*
 * A cover: something flat passes over the lens (a wing, a back, a door, a blank card) and
 * the same picture comes back once it has gone. A flash, but longer: the frames between
 * show nothing (flat, low contrast), so no shot is there to lose. Only when the picture
 * before comes back within COVER_S, and not through black: a fade through black ends a
 * shot whatever comes back (find_fades), so a black frame is no cover.
 */
#define COVER_S  0.75 /* the picture before comes back within this long */
#define COVER_SD 4.0  /* a flat frame: its luma's standard deviation under this */

static int is_flat(const struct vt_sd_feat *f)
{
    return f->stddev < COVER_SD && !vt_sd_is_black(f);
}

static int is_cover(const struct vt_sd_feat *f, size_t n, size_t i)
{
    size_t m = SIZE_MAX;

    /* a flat frame within COVER_S: the first from the boundary on, else the last before */
    for (size_t k = i > 0 ? i - 1 : 0; k < n && f[k].t_s - f[i].t_s <= COVER_S && m == SIZE_MAX;
         k++)
        if (is_flat(&f[k]))
            m = k;
    for (size_t k = i; k-- > 0 && f[i].t_s - f[k].t_s <= COVER_S && m == SIZE_MAX;)
        if (is_flat(&f[k]))
            m = k;
    if (m == SIZE_MAX || m == 0)
        return 0;
    /* a picture before the flat run that comes back after it, across the boundary */
    for (size_t j = m; j-- > 0 && f[m].t_s - f[j].t_s <= COVER_S;) {
        double away;

        if (is_flat(&f[j]))
            continue;
        away = gdist(&f[j], &f[m]);
        if (away < 2) /* still fading into the flat frame */
            continue;
        for (size_t k = m + 1; k < n && f[k].t_s - f[j].t_s <= COVER_S; k++)
            if (k >= i && j < i && !is_flat(&f[k]) && gdist(&f[j], &f[k]) <= FLASH_SAME * away)
                return 1;
    }
    return 0;
}

/*
 * An overlay that appears or disappears over a picture that stays (a title fading in
 * over a landscape, a caption, a bullet added to a slide): the cells it covers move, the
 * rest of the grid stays, and the cells that move all move one way (text brightens the
 * cells it covers, or darkens them, all alike). A change of shot, even between two
 * slides on one template, replaces what was there: the cells the old text leaves move
 * the other way from those the new text covers. Compared across the boundary, from
 * OVL_S before it (or its span) to OVL_S after, so a fade of text counts whole.
 */
#define OVL_S     0.4   /* the pictures compared lie this far outside the boundary */
#define OVL_MOVE  4     /* a luma cell moved when it changed more than this */
#define OVL_SHARE 0.5   /* an overlay moves at most this share of the luma cells */
#define OVL_AGAIN 0.075 /* ... all one way but this share of their movement */
#define OVL_STEP  0.5   /* a cut's own step is at most this share of the overlay's change */
#define OVL_ONCE  0.02  /* ... unless the cells all move one way but this share, */
#define OVL_BAND  2     /* in at most this many adjacent rows of cells (a bullet, a line) */
#define OVL_PURE  0.25  /* ... and the cells see this share of the pixels' change at least */

static int is_overlay(const struct vt_sd_feat *f, size_t n, size_t s0, size_t s1)
{
    const int nl = VT_SD_GRID_W * VT_SD_GRID_H;
    size_t a = near_idx(f, n, f[s0].t_s - OVL_S), b = near_idx(f, n, f[s1].t_s + OVL_S);
    int moved = 0, row0 = VT_SD_GRID_H, row1 = -1;
    double up = 0, down = 0;

    if (a >= s0 || b <= s1)
        return 0;
    for (int k = 0; k < nl; k++) {
        int d = (int)f[b].grid[k] - (int)f[a].grid[k];

        if (abs(d) <= OVL_MOVE)
            continue;
        moved++;
        row0 = k / VT_SD_GRID_W < row0 ? k / VT_SD_GRID_W : row0;
        row1 = k / VT_SD_GRID_W > row1 ? k / VT_SD_GRID_W : row1;
        if (d > 0)
            up += d;
        else
            down -= d;
    }
    if (moved == 0 || moved > OVL_SHARE * nl || fmin(up, down) > OVL_AGAIN * (up + down))
        return 0;
    /* a cut between two slides on one template changes as few cells, but at once (a
     * fade of text is found as a cut only on one of its steps), and in several lines
     * (a title and the lines below it; where the old text was longer, the cells move
     * the other way); text added at once (a slide's next bullet, a typed line, a
     * caption) only adds, in one band, and every pixel it changes moves its cell the
     * same way, so the cells' change is most of the pixels' (text replaced by other text
     * of like length moves the pixels and hardly the cells: two slides on one template
     * whose grids saw 0.14 of the pixels' change were taken for a bullet) */
    return s1 > s0 + 1 || gdist(&f[s0], &f[s1]) <= OVL_STEP * gdist(&f[a], &f[b]) ||
           (fmin(up, down) <= OVL_ONCE * (up + down) && row1 - row0 < OVL_BAND &&
            gdist(&f[s0], &f[s1]) >= OVL_PURE * f[s1].d1);
}

/*
 * Camera motion (a pan, a tilt, a whip, a shake): the picture after the boundary is the
 * one before it moved, which no change of shot is. The luma grid is moved by whole and
 * fractional cells (bilinear between cells, comparing only the cells that still overlap)
 * and compared again: a mix or a new shot differs whatever the shift, a pan differs little
 * once moved. The grid averages 20 pixels of the thumbnail in a cell, so a shift of a
 * quarter cell is as fine as it can tell.
 */
#define MOT_MAX_X 2.0 /* largest shift tried, in cells */
#define MOT_MAX_Y 1.5
#define MOT_STEP  0.25
#define MOT_FIT   0.35 /* moved, the pictures differ at most this share of the unmoved */
#define MOT_NET   3.0  /* least change worth the test */
#define MOT_SEEN  0.1  /* a cut's grid change is at least this share of its thumbnail's */

/* The w x h grid a read at (sx, sy), inside it: bilinear between its four nearest cells. */
static double grid_at(const uint8_t *a, int w, int h, double sx, double sy)
{
    int x0 = (int)sx, y0 = (int)sy, x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
    double fx = sx - x0, fy = sy - y0;

    return (1 - fy) * ((1 - fx) * a[y0 * w + x0] + fx * a[y0 * w + x1]) +
           fy * ((1 - fx) * a[y1 * w + x0] + fx * a[y1 * w + x1]);
}

/* Mean abs difference of b's cells of one plane of the grid (w x h cells from off) with
 * a's moved by (dx, dy) cells; -1 when too few overlap. */
static double moved_dist(const uint8_t *a, const uint8_t *b, int w, int h, double dx, double dy)
{
    double s = 0;
    int cnt = 0;

    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double sx = x + dx, sy = y + dy;

            if (sx < 0 || sy < 0 || sx > w - 1 || sy > h - 1)
                continue;
            s += fabs(grid_at(a, w, h, sx, sy) - b[y * w + x]);
            cnt++;
        }
    return 2 * cnt >= w * h ? s / cnt : -1;
}

/* The luma and both chroma planes moved alike (a chroma cell is two luma cells wide and
 * high): motion moves the colours with the shapes; -1 when too few cells overlap. */
static double moved_all(const struct vt_sd_feat *a, const struct vt_sd_feat *b, double dx,
                        double dy, double *chroma)
{
    const int nl = VT_SD_GRID_W * VT_SD_GRID_H, nc = VT_SD_CGRID_W * VT_SD_CGRID_H;
    double l = moved_dist(a->grid, b->grid, VT_SD_GRID_W, VT_SD_GRID_H, dx, dy);
    double u = moved_dist(a->grid + nl, b->grid + nl, VT_SD_CGRID_W, VT_SD_CGRID_H, dx / 2, dy / 2);
    double v = moved_dist(a->grid + nl + nc, b->grid + nl + nc, VT_SD_CGRID_W, VT_SD_CGRID_H,
                          dx / 2, dy / 2);

    *chroma = fmax(u, v);
    return u < 0 || v < 0 ? -1 : l;
}

/* Whether the picture moves just before or just after the step into frame at: a camera
 * that pans or whips does, while two still slides (a line of text moved down a blank
 * page fits the grid moved by two cells) hold still on both sides. */
#define MOT_BESIDE 1.0 /* mean grey difference frame to frame of a picture that moves */

static int moving_beside(const struct vt_sd_feat *f, size_t n, size_t at)
{
    return (at >= 2 && f[at - 1].d1 > MOT_BESIDE) || (at + 1 < n && f[at + 1].d1 > MOT_BESIDE);
}

static int is_motion(const struct vt_sd_feat *a, const struct vt_sd_feat *b)
{
    double cstill, still = moved_all(a, b, 0, 0, &cstill), best = still, cbest = cstill;

    if (still < MOT_NET)
        return 0;
    for (double dy = -MOT_MAX_Y; dy <= MOT_MAX_Y + 1e-9; dy += MOT_STEP)
        for (double dx = -MOT_MAX_X; dx <= MOT_MAX_X + 1e-9; dx += MOT_STEP) {
            double c, d = moved_all(a, b, dx, dy, &c);

            if (d >= 0 && d < best) {
                best = d;
                cbest = c;
            }
        }
    /* moved, the colours must match as the shapes do (or have changed little anyway) */
    return best <= MOT_FIT * still && (cbest <= MOT_FIT * cstill || cbest < MOT_NET);
}

/*
 * A subject moving over a background that stays (an animated character, a bird taking
 * off, a hand across a desk): a burst of change as large as a cut's in the cells it
 * crosses, but most of the picture, shapes and colours, is the same before and after,
 * which a change of shot never leaves. Only inside a moving shot: between two still
 * pictures (slides on one template, whose margins and title stay) the cells that stay
 * say nothing, and is_overlay judges them.
 */
#define LOC_S    0.3 /* the pictures compared lie this far outside the boundary */
#define LOC_LUMA 4   /* a luma cell stayed when it changed at most this */
#define LOC_CHR  3   /* a chroma cell stayed when it changed at most this */
#define LOC_STAY 0.5 /* this share of the luma cells stayed at least, and of each chroma plane */
#define LOC_BUSY 0.5 /* the shot moves: its mean frame difference on one side at least */

static int stayed(const struct vt_sd_feat *a, const struct vt_sd_feat *b, int from, int to, int thr)
{
    int k, cnt = 0;

    for (k = from; k < to; k++)
        cnt += abs((int)a->grid[k] - (int)b->grid[k]) <= thr;
    return cnt;
}

static int is_local(const struct vt_sd_feat *f, size_t n, const double *pd1, size_t s0, size_t s1)
{
    const int nl = VT_SD_GRID_W * VT_SD_GRID_H, nc = VT_SD_CGRID_W * VT_SD_CGRID_H;
    size_t a = near_idx(f, n, f[s0].t_s - LOC_S), b = near_idx(f, n, f[s1].t_s + LOC_S);
    size_t a0 = s0 > BASE_WIN ? s0 - BASE_WIN : 0,
           b1 = s1 + 1 + BASE_WIN < n ? s1 + 1 + BASE_WIN : n;

    if (a >= s0 || b <= s1 || fmax(win_mean(pd1, a0, s0), win_mean(pd1, s1 + 1, b1)) < LOC_BUSY)
        return 0;
    /* each plane: a new background colour may move one chroma plane only */
    return stayed(&f[a], &f[b], 0, nl, LOC_LUMA) >= LOC_STAY * nl &&
           stayed(&f[a], &f[b], nl, nl + nc, LOC_CHR) >= LOC_STAY * nc &&
           stayed(&f[a], &f[b], nl + nc, VT_SD_GRID, LOC_CHR) >= LOC_STAY * nc;
}

/*
 * A pan that speeds up, or a zoom, over one picture can pass for a dissolve between two
 * moving shots on the coarse grid (the cells change faster in the window than outside,
 * and steadily), but mixing two different pictures lowers the contrast half-way (the
 * variance of a mix of unrelated pictures is half theirs), and moving the camera over
 * one picture keeps it. Only between two moving shots: from or to a still one (a slide)
 * the grid's evidence is sound and the contrast of a slide may be too low to dip. A
 * dissolve found by its dip (var_dip) has shown it already, over a wider window.
 */
#define MIXDIP_BUSY 1.0  /* each side's mean frame difference at least */
#define MIXDIP_KEEP 0.95 /* no frame of the span below this share of the lower end's */

static int motion_no_dip(const struct vt_sd_feat *f, size_t n, const double *pd1,
                         const struct bound *x)
{
    size_t a = x->span0 - 1, b = x->span1 + 1;
    size_t a0 = a > BASE_WIN ? a - BASE_WIN : 1, b1 = b + 1 + BASE_WIN < n ? b + 1 + BASE_WIN : n;
    double lo = fmin(f[a].stddev, f[b].stddev);

    if (win_mean(pd1, a0, a + 1) < MIXDIP_BUSY || win_mean(pd1, b + 1, b1) < MIXDIP_BUSY)
        return 0;
    if (x->dip)
        return 0;
    for (size_t k = a + 1; k < b; k++)
        if (f[k].stddev < MIXDIP_KEEP * lo)
            return 0;
    return 1;
}

/*
 * A change of light in one step (the exposure of scanned film jumping between two frames,
 * a camera's exposure settling, a lamp switched on): the thumbnail's difference spikes as
 * at a cut, but it is the mean's shift, every luma cell moves the same way and the colours
 * stay. A moving subject may take a few cells against it (RELIGHT_CELLS), a new shot
 * replaces the picture: its cells go both ways, or its colours change, or the mean's
 * shift is a small share of its step. (light_change, for still mixes, asks every cell.)
 * A jump of more than DRIFT_MAX grey levels is no flicker: a cut from a light slide to a
 * dark one on the same template moves every cell one way too.
 */
#define RELIGHT_MIN   3.0  /* least shift of the mean, grey levels */
#define RELIGHT_SHARE 0.4  /* the mean's shift is at least this share of the step */
#define RELIGHT_CELLS 0.85 /* this share of the luma cells moves the mean's way at least */

static int is_relight(const struct vt_sd_feat *a, const struct vt_sd_feat *b)
{
    const int nl = VT_SD_GRID_W * VT_SD_GRID_H;
    double dm = (double)b->mean - a->mean;
    int way = 0;

    if (fabs(dm) < RELIGHT_MIN || fabs(dm) > DRIFT_MAX || fabs(dm) < RELIGHT_SHARE * b->d1)
        return 0;
    for (int k = 0; k < nl; k++)
        way += ((double)b->grid[k] - a->grid[k]) * (dm > 0 ? 1 : -1) >= QM_LIGHT_CELL * fabs(dm);
    return way >= RELIGHT_CELLS * nl && chroma_change(a, b) <= QM_LIGHT_CHR;
}

/*
 * A screen edited or replaced (a terminal, an application, slides on one template): on a
 * flat ground, typing, a command's output, a menu opened or closed, a list filtered change
 * many lines at once, as a change of screen does, but the first line of type stays where
 * it was (the command, the question, the slide's title), or its start does (panes
 * reflowed beside it as another opens: the rest of its row moves), or nothing new is drawn but a
 * cursor (a screen cleared to its prompt), or the whole screen of type moved up or down (a
 * terminal scrolled): the same shot. A screen replaced by the next,
 * as a slide by the next, draws other type in its first line: a new shot, however few
 * cells change (a question replaced by the next of like length, which looks like a line
 * of text added). Judged on the line grid, whose cells are about a line of type high; the
 * ground is its commonest value.
 */
#define SCR_GROUND  0.5 /* this share of the cells is ground in both pictures at least */
#define SCR_FLAT    3   /* a cell is ground within this many grey levels of it */
#define SCR_INK     VT_SD_SCREEN_INK
#define SCR_SAME    2    /* a cell stayed when it moved at most this */
#define SCR_KEEP    0.75 /* the first line stays: this share of its type's cells stayed */
#define SCR_GONE    0.25 /* the first line is replaced: at most this share stayed */
#define SCR_MIN_INK 2    /* a first line of type has this many cells at least */
#define SCR_LINE_H  3    /* a line of type is at most this many rows of cells high */
#define SCR_CUR_W   2    /* a cursor's cells: at most this many columns */
#define SCR_CUR_H   4    /* ... and rows */
#define SCR_TALL    0.33 /* a line of type is less than this share of the screen high */
#define SCR_S       0.2  /* nothing drawn: since this long before the step */
#define SCR_START   3    /* a line's start kept: cells of its top row (start_kept) */
#define SCR_STROKE  12   /* a text grid cell's strokes moved: its count by more than this */

enum screen { SCREEN_NOT, SCREEN_EDITED, SCREEN_REPLACED };

/* The commonest value of the line grid's cells, counting each with its neighbours. */
static int line_ground(const uint8_t *c)
{
    int hist[258] = {0}, best = 1;

    for (int k = 0; k < VT_SD_LINE; k++)
        hist[c[k] + 1]++;
    for (int v = 1; v <= 256; v++)
        if (hist[v - 1] + hist[v] + hist[v + 1] > hist[best - 1] + hist[best] + hist[best + 1])
            best = v;
    return best - 1;
}

/* The cells of row r of the line grid c more than off levels from the ground g. */
static int row_off(const uint8_t *c, int r, int g, int off)
{
    int n = 0;

    for (int k = r * VT_SD_LINE_W; k < (r + 1) * VT_SD_LINE_W; k++)
        n += abs((int)c[k] - g) > off;
    return n;
}

/* The cells of row r that hold type. */
static int row_ink(const uint8_t *c, int r, int g)
{
    return row_off(c, r, g, SCR_INK);
}

/* Whether every row of the line grid c from y0 to y1 holds something off the ground g. */
static int rows_drawn(const uint8_t *c, int y0, int y1, int g)
{
    for (int y = y0; y <= y1; y++)
        if (!row_off(c, y, g, SCR_FLAT))
            return 0;
    return 1;
}

/*
 * Whether the cells drawn anew (other type than before) fit in a cursor's box: SCR_CUR_W
 * columns, and SCR_CUR_H rows or one line of type in b (no empty row between), however
 * large its type (a terminal at 42 points in a window 136 px high: a letter typed and the
 * cursor moved on are 2 columns and 8 rows of the grid).
 */
static int only_cursor(const struct vt_sd_feat *a, const struct vt_sd_feat *b, int g)
{
    int x0 = VT_SD_LINE_W, x1 = -1, y0 = VT_SD_LINE_H, y1 = -1;

    for (int k = 0; k < VT_SD_LINE; k++) {
        int x = k % VT_SD_LINE_W, y = k / VT_SD_LINE_W;

        if (abs((int)b->line[k] - g) <= SCR_FLAT ||
            abs((int)a->line[k] - (int)b->line[k]) <= SCR_SAME)
            continue;
        x0 = x < x0 ? x : x0;
        x1 = x > x1 ? x : x1;
        y0 = y < y0 ? y : y0;
        y1 = y > y1 ? y : y1;
    }
    if (x1 - x0 >= SCR_CUR_W)
        return 0;
    return y1 - y0 < SCR_CUR_H ||
           (y1 - y0 < SCR_TALL * VT_SD_LINE_H && rows_drawn(b->line, y0, y1, g));
}

/*
 * The first line of type of the line grid c on the ground g: the rows from the first that
 * holds type, while they hold as much type as half its fullest row (the tops of a line
 * below hold less), as high as a line. Its rows into *first and *last; 0 when no row holds
 * type.
 */
static int first_line(const uint8_t *c, int g, int *first, int *last)
{
    int r = 0, most;

    while (r < VT_SD_LINE_H && !row_ink(c, r, g))
        r++;
    if (r == VT_SD_LINE_H)
        return 0;
    *first = *last = r;
    most = row_ink(c, r, g);
    while (*last + 1 < VT_SD_LINE_H && *last + 1 < r + SCR_LINE_H) {
        int next = row_ink(c, *last + 1, g);

        if (next == 0 || 2 * next < most)
            break;
        most = next > most ? next : most;
        (*last)++;
    }
    return 1;
}

int vt_sd_screen_ground(const struct vt_sd_feat *a, const struct vt_sd_feat *b)
{
    int g = line_ground(a->line), ground = 0;

    for (int k = 0; k < VT_SD_LINE; k++)
        ground += abs((int)a->line[k] - g) <= SCR_FLAT && abs((int)b->line[k] - g) <= SCR_FLAT;
    return ground >= SCR_GROUND * VT_SD_LINE ? g : -1;
}

/*
 * Whether the type of line grid rows [first, last] stayed where it was in the text grid
 * (stroke counts, shotdetect.h), which sees type whatever its ground: the cells of the text
 * grid rows over them hold strokes in a and none moved by more than SCR_STROKE. A highlight
 * bar moved off a line or onto it changes the line's means, not its strokes (a split
 * editor's focus: the largest move 12); a title replaced by one of like length on one
 * template moved one cell by 40.
 */
static int type_stayed(const struct vt_sd_feat *a, const struct vt_sd_feat *b, int first, int last)
{
    int strokes = 0; /* in a */

    for (int r = first * VT_SD_TEXT_H / VT_SD_LINE_H; r <= last * VT_SD_TEXT_H / VT_SD_LINE_H; r++)
        for (int k = r * VT_SD_TEXT_W; k < (r + 1) * VT_SD_TEXT_W; k++) {
            if (abs((int)a->text[k] - (int)b->text[k]) > SCR_STROKE)
                return 0;
            strokes += a->text[k];
        }
    return strokes > 2 * SCR_STROKE;
}

/*
 * Whether the type of line grid a moved up or down as a whole into b on the ground g: a
 * terminal scrolled by a command's output (its first lines gone off the top, new ones
 * printed below, in other colours maybe). Moves are tried a quarter of a thumbnail pixel
 * apart (cells are 3 px high, type is moved by whole lines of any height), a's cells
 * interpolated: the type of a still on the screen once moved must cover SCR_SCROLL_INK of
 * the grid and SCR_SCROLL_FIT of it be found in b; b may print new type where a had none.
 * A line of a slide moved down a page is too little type. On the real set a 5-line scroll
 * matched 0.80 of 120 cells; screens redrawn or typed at most 0.46.
 */
#define SCR_SCROLL_STEP 12   /* moves tried per row of cells */
#define SCR_SCROLL_MIN  8    /* least move tried, in steps (2 px: a line of the smallest type) */
#define SCR_SCROLL_TOL  10   /* a moved cell matched within this many levels */
#define SCR_SCROLL_INK  0.08 /* the moved type covers this share of the grid at least */
#define SCR_SCROLL_FIT  0.7  /* and this share of it is matched */

static double scroll_fit(const uint8_t *a, const uint8_t *b, int g, double dy)
{
    int ink = 0, hit = 0;

    for (int y = 0; y < VT_SD_LINE_H; y++) {
        double sy = y + dy;

        if (sy < 0 || sy > VT_SD_LINE_H - 1)
            continue;
        for (int x = 0; x < VT_SD_LINE_W; x++) {
            double v = grid_at(a, VT_SD_LINE_W, VT_SD_LINE_H, x, sy);

            if (fabs(v - g) <= SCR_INK)
                continue;
            ink++;
            hit += fabs(v - b[y * VT_SD_LINE_W + x]) <= SCR_SCROLL_TOL;
        }
    }
    return ink >= SCR_SCROLL_INK * VT_SD_LINE ? (double)hit / ink : 0;
}

static int scrolled(const uint8_t *a, const uint8_t *b, int g)
{
    const int most = VT_SD_LINE_H / 2 * SCR_SCROLL_STEP;

    for (int s = -most; s <= most; s++)
        if (abs(s) >= SCR_SCROLL_MIN &&
            scroll_fit(a, b, g, (double)s / SCR_SCROLL_STEP) >= SCR_SCROLL_FIT)
            return 1;
    return 0;
}

/*
 * How many cells of row r of the line grids a and b, from the first that holds type in a,
 * hold type in a and stayed in b before the first that did not: a line's start kept.
 * SCR_START of 16 is a fifth of the screen's width, more than the first word of a title;
 * a prompt that long kept atop a screen cleared and used again is taken for an edit.
 */
static int start_kept(const uint8_t *a, const uint8_t *b, int r, int g)
{
    int n = 0;

    for (int k = r * VT_SD_LINE_W; k < (r + 1) * VT_SD_LINE_W; k++) {
        if (abs((int)a[k] - g) <= SCR_INK)
            continue;
        if (abs((int)a[k] - (int)b[k]) > SCR_SAME)
            break;
        n++;
    }
    return n;
}

/* screen_change, where the colours may change by up to max_chroma (see chroma_change) */
static enum screen screen_change_chroma(const struct vt_sd_feat *f, size_t n, size_t ia, size_t ib,
                                        double max_chroma)
{
    const struct vt_sd_feat *a = &f[ia], *b = &f[ib];
    int g = vt_sd_screen_ground(a, b), first, last, ink = 0, kept = 0;
    int x0 = VT_SD_LINE_W, x1 = -1, top_moved = 0;

    if (g >= 0 && scrolled(a->line, b->line, g))
        return SCREEN_EDITED;
    if (g < 0 || chroma_change(a, b) > max_chroma || !first_line(a->line, g, &first, &last))
        return SCREEN_NOT;
    for (int k = first * VT_SD_LINE_W; k < (last + 1) * VT_SD_LINE_W; k++) {
        int x = k % VT_SD_LINE_W;

        if (abs((int)a->line[k] - g) <= SCR_INK)
            continue;
        ink++;
        if (abs((int)a->line[k] - (int)b->line[k]) <= SCR_SAME) {
            kept++;
        } else {
            x0 = x < x0 ? x : x0;
            x1 = x > x1 ? x : x1;
            top_moved |= k / VT_SD_LINE_W == first;
        }
    }
    /* the line kept but for a cursor's column under its top row (a program run: the cursor
     * on the next row leaves, which the line's rows took in); nothing drawn but a cursor
     * since SCR_S before the step: a screen redrawn in two steps (the next text drawn beside
     * the old, then the old cleared) drew before its second */
    if ((ink >= SCR_MIN_INK &&
         (kept >= SCR_KEEP * ink ||
          (kept >= SCR_MIN_INK && kept >= ink - kept && !top_moved && x1 - x0 < SCR_CUR_W))) ||
        type_stayed(a, b, first, last) || start_kept(a->line, b->line, first, g) >= SCR_START ||
        only_cursor(&f[near_idx(f, n, a->t_s - SCR_S)], b, g))
        return SCREEN_EDITED;
    return ink >= SCR_MIN_INK && kept <= SCR_GONE * ink ? SCREEN_REPLACED : SCREEN_NOT;
}

static enum screen screen_change(const struct vt_sd_feat *f, size_t n, size_t ia, size_t ib)
{
    return screen_change_chroma(f, n, ia, ib, QM_LIGHT_CHR);
}

/* Whether the type of line grid a's first line, rows [first, last], is ground in b (half
 * its cells at least): gone, as a slide's title replaced, not darkened as one fading in. */
static int first_line_gone(const uint8_t *a, const uint8_t *b, int g, int first, int last)
{
    int ink = 0, gone = 0;

    for (int k = first * VT_SD_LINE_W; k < (last + 1) * VT_SD_LINE_W; k++)
        if (abs((int)a[k] - g) > SCR_INK) {
            ink++;
            gone += abs((int)b[k] - g) <= SCR_INK;
        }
    return ink && 2 * gone >= ink;
}

/* Whether every frame of [s, e] is a screen on the ground of frame s - 1: a mix of two
 * slides on one ground stays a slide throughout, a shot between two cards does not. */
static int screen_throughout(const struct vt_sd_feat *f, size_t s, size_t e)
{
    for (size_t k = s; k <= e; k++)
        if (vt_sd_screen_ground(&f[s - 1], &f[k]) < 0)
            return 0;
    return 1;
}

/*
 * A slide replaced by another through a short mix on one ground (a deck's cross-fade or
 * morph: Marp's, 0.5 s, a numbered badge travelling and growing as the text fades):
 * still screens on both sides, each with a first line of type, a run of changing frames
 * of at most QM_MAX_S between them that stay a screen on that ground and change in steps
 * (no cut among them), and the first line replaced (screen_change, the colours free to
 * change: a coloured badge grows), its type gone to the ground, not darkened as a card's
 * fading in on white (the trailer's first). still_mix does not take such a mix: what
 * moves inside it adds up to three times its net change, as a moving subject does.
 */
static int slides_mixed(const struct vt_sd_feat *f, size_t n, size_t s, size_t e, double base)
{
    int g = e + 1 < n ? vt_sd_screen_ground(&f[s - 1], &f[e + 1]) : -1, first, last;
    double sum;

    return e > s + 1 && g >= 0 && f[e].t_s - f[s].t_s <= QM_MAX_S && gradual(f, s, e, base, &sum) &&
           screen_throughout(f, s, e) && first_line(f[s - 1].line, g, &first, &last) &&
           first_line_gone(f[s - 1].line, f[e + 1].line, g, first, last) &&
           first_line(f[e + 1].line, g, &first, &last) &&
           screen_change_chroma(f, n, s - 1, e + 1, 255) == SCREEN_REPLACED;
}

/* Mixes between two still pictures (still_mix) and between two slides (slides_mixed). */
static void find_still_mixes(const struct vt_sd_feat *f, size_t n, const double *pd1, uint8_t *mask,
                             struct bounds *b)
{
    for (size_t s = BASE_WIN; s + 1 < n; s++) {
        double base = win_mean(pd1, s - BASE_WIN, s), after;
        size_t e;

        if (mask[s] || base > QM_BASE || f[s].d1 < 2 * base + QM_STEP)
            continue;
        e = changing_run(f, n, mask, s, 2 * base + QM_STEP);
        after = win_mean(pd1, e + 1, e + 1 + BASE_WIN < n ? e + 1 + BASE_WIN : n);
        base = fmax(base, after);
        if (after <= QM_BASE && still_mix(f, n, s, e, base)) {
            /* light or motion: no boundary, but no cut inside the change either (it
             * has no step a cut would be, else still_mix would have said no) */
            for (size_t k = s - 1; k <= e + 1 && k < n; k++)
                mask[k] = 1;
            if (!light_change(&f[s - 1], &f[e + 1], chained_net(f, n, s, e + 1)) &&
                !beyond_ends(f, s, e))
                add_bound(b, near_idx(f, n, (f[s].t_s + f[e].t_s) / 2), s, e - 1, VT_SD_DISSOLVE);
        } else if (after <= QM_BASE && slides_mixed(f, n, s, e, base)) {
            for (size_t k = s - 1; k <= e + 1; k++)
                mask[k] = 1;
            add_bound(b, near_idx(f, n, (f[s].t_s + f[e].t_s) / 2), s, e - 1, VT_SD_DISSOLVE);
        }
        s = e;
    }
}

/*
 * A mix over N analysed steps moves no pixel by more than 255 / N levels a step, so from
 * MIX_STEPS steps on (255 / 13 < VT_SD_CHANGED_THR) it changes no pixel by as much as
 * `changed` counts, but for noise. A dissolve found there whose steps change MIX_JUMPS of
 * the pixels, MIX_QUIET times the share of the frames either side, is something moving in
 * a shot that holds still around it: Apollo 15's television, where an astronaut bends and
 * steps for a second (2.7 % of the pixels a step against 0.15 % before and after), which
 * the grid took for a mix (a net change of 6.3). The real set's dissolves change 0.03 %
 * and 0.24 % (as much as either side); a dissolve between moving shots changes pixels on
 * both sides as inside, and the motion checks judge it.
 */
#define MIX_STEPS 13
#define MIX_JUMPS 0.01
#define MIX_QUIET 5.0
/* analysed frames looked at on each side, past the one next to the span (its step may
 * still be the mix's, a span being found to a frame) */
#define MIX_SIDE 4

static int jumps_in_mix(const struct vt_sd_feat *f, size_t n, const struct bound *x)
{
    size_t steps = x->span1 - x->span0, a0 = x->span0 > MIX_SIDE ? x->span0 - MIX_SIDE : 1;
    double in = 0, side = 0;

    if (steps < MIX_STEPS || x->span0 < 1 || x->span1 + 1 >= n)
        return 0;
    for (size_t k = x->span0 + 1; k <= x->span1; k++)
        in += f[k].changed;
    in /= (double)steps;
    for (int s = 0; s < 2; s++) {
        size_t lo = s ? x->span1 + 2 : a0, hi = s ? x->span1 + 1 + MIX_SIDE : x->span0 - 1;
        double sum = 0;
        size_t m = 0;

        for (size_t k = lo; k <= hi && k < n; k++, m++)
            sum += f[k].changed;
        side = m ? fmax(side, sum / (double)m) : side;
    }
    return in >= MIX_JUMPS && in >= MIX_QUIET * side;
}

/*
 * Whether cut x replaces cut y, found less than MIN_SHOT_S before it: its picture changes
 * more (the thumbnail's difference to the frame before). A shot cannot be that short, so
 * one of them is no boundary, and it is mostly the lesser change just before a cut: a
 * lower third taken off 6 frames before the cut away, a man passing the lens 5 frames
 * before the cut to the next place (paris_office: the earlier was kept, the cut lost).
 */
static int stronger_cut(const struct vt_sd_feat *f, const struct bound *x, const struct bound *y)
{
    return x->kind == VT_SD_CUT && y->kind == VT_SD_CUT && f[x->at].d1 > f[y->at].d1;
}

static int not_a_shot(const struct vt_sd_feat *f, size_t n, const double *pd1,
                      const struct bound *x)
{
    enum screen scr = SCREEN_NOT;

    if (x->kind == VT_SD_FADE)
        return 0;
    if (x->kind == VT_SD_CUT &&
        (is_flash(f, n, x->at) || is_cover(f, n, x->at) || is_relight(&f[x->at - 1], &f[x->at])))
        return 1;
    if (x->kind == VT_SD_CUT)
        scr = screen_change(f, n, x->at - 1, x->at);
    else if (x->span0 > 0 && x->span1 + 1 < n)
        scr = screen_change(f, n, x->span0 - 1, x->span1 + 1);
    if (scr != SCREEN_NOT)
        return scr == SCREEN_EDITED;
    /* a cut's own two frames, whose grids must see most of the change (two shots of one
     * test pattern differ in every pixel and hardly in the cells, nothing to move) */
    if (x->kind == VT_SD_CUT && gdist(&f[x->at - 1], &f[x->at]) >= MOT_SEEN * f[x->at].d1 &&
        moving_beside(f, n, x->at) && is_motion(&f[x->at - 1], &f[x->at]))
        return 1;
    if (x->kind == VT_SD_DISSOLVE && x->span0 > 0 && x->span1 + 1 < n &&
        (is_motion(&f[x->span0 - 1], &f[x->span1 + 1]) || motion_no_dip(f, n, pd1, x) ||
         jumps_in_mix(f, n, x)))
        return 1;
    if (x->kind == VT_SD_CUT && is_local(f, n, pd1, x->at - 1, x->at))
        return 1;
    return is_overlay(f, n, x->kind == VT_SD_CUT ? x->at - 1 : x->span0,
                      x->kind == VT_SD_CUT ? x->at : x->span1);
}

/*
 * The stable part begins after a transition's span and ends before it, with a margin
 * for gradual ones: their measured ends may fall short of the true ones (motion on
 * either side blurs the ramp), and the kept frame must show one shot only.
 */
#define SPAN_MARGIN 0.25 /* of the transition's length */

static size_t after_span(const struct vt_sd_feat *f, size_t n, const struct bound *x)
{
    size_t i = x->span1 + 1;
    double t;

    if (x->kind == VT_SD_CUT)
        return i;
    t = f[x->span1].t_s + SPAN_MARGIN * (f[x->span1].t_s - f[x->span0].t_s);
    while (i + 1 < n && f[i].t_s < t)
        i++;
    return i;
}

static size_t before_span(const struct vt_sd_feat *f, const struct bound *x)
{
    size_t i = x->span0 - 1;
    double t;

    if (x->kind == VT_SD_CUT)
        return i;
    t = f[x->span0].t_s - SPAN_MARGIN * (f[x->span1].t_s - f[x->span0].t_s);
    while (i > 0 && f[i].t_s > t)
        i--;
    return i;
}

static int by_at(const void *a, const void *b)
{
    const struct bound *x = a, *y = b;

    return x->at < y->at ? -1 : x->at > y->at;
}

static void choose_frame(const struct vt_sd_feat *f, struct vt_sd_shot *s, const size_t *last_key)
{
    size_t a = s->stable_first, z = s->stable_last, best = a;
    double maxs = 0, minstab = INFINITY;

    for (size_t j = a; j <= z; j++) {
        double st = (j > s->first ? f[j].d1 : 0) + (j < s->last ? f[j + 1].d1 : 0);

        maxs = fmax(maxs, f[j].sharpness);
        minstab = fmin(minstab, st);
    }
    /* among the sharp and still frames, the one cheapest to decode again (closest
     * after a keyframe): pass 2 seeks to the keyframe and decodes up to it */
    for (size_t j = a, best_cost = SIZE_MAX; j <= z; j++) {
        double st = (j > s->first ? f[j].d1 : 0) + (j < s->last ? f[j + 1].d1 : 0);
        size_t cost = j - last_key[j];

        if (f[j].sharpness < 0.9 * maxs || st > 2 * minstab + 1.0)
            continue;
        if (cost < best_cost || (cost == best_cost && f[j].sharpness > f[best].sharpness)) {
            best_cost = cost;
            best = j;
        }
    }
    s->chosen = best;
}

size_t vt_sd_detect(const struct vt_sd_feat *f, size_t n, struct vt_sd_shot **out)
{
    struct bounds b = {0};
    uint8_t *mask = NULL;
    double *pd1 = NULL, *pch = NULL, *pg = NULL;
    size_t *last_key = NULL, n_shots = 0, kept = 0;
    struct vt_sd_shot *shots = NULL;

    *out = NULL;
    if (n == 0)
        goto out;
    mask = vt_xcalloc(n, 1);
    pd1 = vt_xmalloc((n + 1) * sizeof(*pd1));
    pch = vt_xmalloc((n + 1) * sizeof(*pch));
    last_key = vt_xmalloc(n * sizeof(*last_key));
    pg = vt_xmalloc((n + 1) * sizeof(*pg));
    pd1[0] = pch[0] = pg[0] = pg[1] = 0;
    for (size_t i = 0; i < n; i++) {
        pd1[i + 1] = pd1[i] + f[i].d1;
        pch[i + 1] = pch[i] + f[i].changed;
        if (i)
            pg[i + 1] = pg[i] + gdist(&f[i - 1], &f[i]);
        last_key[i] = f[i].key || i == 0 ? i : last_key[i - 1];
    }
    find_fades(f, n, mask, &b);
    find_gradual(f, n, mask, &b);
    find_still_mixes(f, n, pd1, mask, &b);
    find_cuts(f, n, pd1, pch, pg, mask, &b);
    if (b.n)
        qsort(b.v, b.n, sizeof(*b.v), by_at);
    /* drop boundaries too close to the previous one, to the start or to the end (a last
     * frame that differs, as a program quitting to the shell's prompt, is no shot); of two
     * cuts too close, the one where the picture changes more (stronger_cut) */
    for (size_t i = 0; i < b.n; i++) {
        double prev_t = kept ? f[b.v[kept - 1].at].t_s : f[0].t_s, t = f[b.v[i].at].t_s;

        if (b.v[i].at == 0 || f[n - 1].t_s - t < MIN_SHOT_S || not_a_shot(f, n, pd1, &b.v[i]))
            continue;
        if (t - prev_t >= MIN_SHOT_S)
            b.v[kept++] = b.v[i];
        else if (kept && stronger_cut(f, &b.v[i], &b.v[kept - 1]) &&
                 (kept < 2 || t - f[b.v[kept - 2].at].t_s >= MIN_SHOT_S))
            b.v[kept - 1] = b.v[i];
    }
    n_shots = kept + 1;
    shots = vt_xcalloc(n_shots, sizeof(*shots));
    for (size_t k = 0; k < n_shots; k++) {
        struct vt_sd_shot *s = &shots[k];

        s->first = k ? b.v[k - 1].at : 0;
        s->last = k + 1 < n_shots ? b.v[k].at - 1 : n - 1;
        s->kind = k ? b.v[k - 1].kind : VT_SD_START;
        s->span0 = s->span1 = s->first;
        if (k && s->kind != VT_SD_CUT) {
            s->span0 = b.v[k - 1].span0;
            s->span1 = b.v[k - 1].span1;
        }
        s->stable_first = s->first;
        s->stable_last = s->last;
        if (k && b.v[k - 1].span1 + 1 > s->stable_first)
            s->stable_first = after_span(f, n, &b.v[k - 1]);
        if (k + 1 < n_shots && b.v[k].span0 > 0 && b.v[k].span0 - 1 < s->stable_last)
            s->stable_last = before_span(f, &b.v[k]);
        /* frames in a fade at the very start or end are not stable either */
        while (s->stable_first < s->stable_last && mask[s->stable_first] && k == 0)
            s->stable_first++;
        while (s->stable_last > s->stable_first && mask[s->stable_last] && k + 1 == n_shots)
            s->stable_last--;
        if (s->stable_first > s->stable_last || s->stable_first < s->first ||
            s->stable_last > s->last) {
            s->stable_first = s->first;
            s->stable_last = s->last;
        }
        choose_frame(f, s, last_key);
    }
    *out = shots;
out:
    free(b.v);
    free(mask);
    free(pd1);
    free(pch);
    free(pg);
    free(last_key);
    return n_shots;
}
