/*
 * The keyframe stage. Pass 1 decodes the video cheaply (non-reference frames and the
 * loop filter skipped, one small grey image per frame) and measures features per
 * frame, in parts between keyframes that run in parallel; shotdetect.c turns them
 * into shots and picks one frame per shot. Pass 2 seeks to each chosen frame (several
 * workers), decodes it at full quality and writes it as an upright JPEG file (and a
 * small one, 320 px wide, for pages to show); then
 * each is compared with the frames kept before it (perceptual hash, then a thumbnail
 * check fine enough to tell two slides on the same background apart) and the files of
 * duplicates removed. Time and memory are bounded whatever the container claims:
 * frames are counted and timed from their own timestamps, never from the declared
 * duration, which only plans the parts.
 */
#include "visual/keyframe.h"

#include "base/util.h"
#include "base/workpool.h"
#include "media/imgutil.h"
#include "media/media.h"
#include "visual/shotdetect.h"
#include "visual/textchange.h"

#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KF_MODEL "vidtheque-shots 2 (luma diff + fade + grid dissolve; laplacian; phash64)"

/* Every frame is analysed at one fixed size whatever its shape, so that thumbnails
 * are exact box averages of it (2x2 luma, 4x5 chroma) and sizes never change. Small,
 * because scaling every frame costs: the Laplacian still ranks a shot's frames. */
#define ANA_W       320
#define ANA_H       180
#define THUMB_W     160 /* thumbnail for frame differences and duplicate checks */
#define THUMB_H     90
#define THUMB_N     (THUMB_W * THUMB_H)
#define CHROMA_W    40 /* chroma thumbnails: a cut may change colour, not luma */
#define CHROMA_H    18
#define SHARP_EVERY 2 /* sharpness of every other analysed frame is enough to choose */
#define CHROMA_N    (CHROMA_W * CHROMA_H)
#define RING_N      256 /* thumbnails kept for the long-range difference */
#define OUT_MAX_W   1920
#define JPEG_Q      90
#define MAX_FRAMES  ((size_t)(VT_MEDIA_MAX_DURATION_S * 120))
#define PASS1_SHARE 0.85 /* share of the progress bar for pass 1 */
#define MAX_PARTS   4    /* pass 1 in parallel parts: one per core, at most this many */
#define MIN_PART_S  20.0 /* shorter parts gain less than their own open and seek cost */

/* a pixel "changed" when it moves more than this: the shot detector's feature */
#define CHANGE_THR VT_SD_CHANGED_THR

/*
 * Duplicate test: hash distance first, then the thumbnails must be nearly equal: at most
 * DUP_CHANGED of their pixels moved by more than CHANGE_THR. On the real set's screens a
 * page shown again moves 0-1 of the 14,400, a cursor's blink 10, a word typed or replaced
 * 16-28 (a placeholder typed over, `Hello, worl` for `Type something`: 36), so the share
 * sits between a blink and a word (at 0.002 the typed words were duplicates, never read).
 */
#define DUP_HAMMING 14
#define DUP_MAD     2.5
#define DUP_CHANGED 0.0008

struct decoder {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVStream *st;
    int vidx;
    AVPacket *pkt;
    AVFrame *frame;
    int eof_in, eof_out;
    int64_t start_pts; /* the stream's own start, in its time base */
    double tb;
    /* A part of the file (see scan): after the seek, packets before the keyframe
     * whose pts is skip_to_pts are dropped; the keyframe whose pts is stop_pts ends
     * the input, with the packets after it shown before it. AV_NOPTS_VALUE when
     * unused. */
    int64_t skip_to_pts, stop_pts;
    int stopping;  /* the keyframe stop_pts was read */
    int seam_lost; /* the keyframe skip_to_pts was not where the seek led */
};

struct thumb {
    uint8_t y[THUMB_N];
    uint8_t u[CHROMA_N], v[CHROMA_N];
};

/* Analysis image (YUV 4:2:0, the luma is our grey image) and its thumbnails. */
struct grey {
    struct SwsContext *sws;
    uint8_t *buf; /* luma ANA_W x ANA_H, then the two chroma planes */
    int w, h;
    struct thumb th;
};

static const char *averr(int e, char *buf, size_t n)
{
    av_strerror(e, buf, n);
    return buf;
}

/* Whether the video packet pkt goes to the decoder, given the part's bounds. */
static int packet_wanted(struct decoder *d, const AVPacket *pkt)
{
    int key = (pkt->flags & AV_PKT_FLAG_KEY) != 0;

    if (d->stop_pts != AV_NOPTS_VALUE && key && pkt->pts == d->stop_pts) {
        /* decoded too, for the pictures shown before it that follow it (open GOP) */
        d->stopping = 1;
        return 1;
    }
    if (d->stopping && (pkt->pts == AV_NOPTS_VALUE || pkt->pts >= d->stop_pts)) {
        d->eof_in = 1;
        avcodec_send_packet(d->dec, NULL);
        return 0;
    }
    if (d->skip_to_pts == AV_NOPTS_VALUE)
        return 1;
    if (key && pkt->pts == d->skip_to_pts) {
        d->skip_to_pts = AV_NOPTS_VALUE;
        return 1;
    }
    if (key && pkt->pts != AV_NOPTS_VALUE && pkt->pts > d->skip_to_pts) {
        d->seam_lost = 1;
        d->eof_in = 1;
        avcodec_send_packet(d->dec, NULL);
    }
    return 0;
}

/*
 * Next decoded frame into d->frame. 1 with a frame, 0 at the end of the stream,
 * negative on a read error that is not the end.
 */
static int next_frame(struct decoder *d)
{
    for (;;) {
        int e;

        if (d->eof_out)
            return 0;
        e = avcodec_receive_frame(d->dec, d->frame);
        if (e == 0)
            return 1;
        if (e == AVERROR_EOF) {
            d->eof_out = 1;
            return 0;
        }
        if (e != AVERROR(EAGAIN))
            continue; /* a broken frame: go on with the next packet */
        if (d->eof_in) {
            d->eof_out = 1;
            return 0;
        }
        e = av_read_frame(d->fmt, d->pkt);
        if (e < 0) {
            /* end of file, or a truncated file: decode what we have */
            if (d->skip_to_pts != AV_NOPTS_VALUE)
                d->seam_lost = 1;
            d->eof_in = 1;
            avcodec_send_packet(d->dec, NULL);
            continue;
        }
        if (d->pkt->stream_index == d->vidx && packet_wanted(d, d->pkt))
            avcodec_send_packet(d->dec, d->pkt); /* errors: corrupt packet, skip it */
        av_packet_unref(d->pkt);
    }
}

static double frame_time(const struct decoder *d, const AVFrame *fr, double prev_t, double fps)
{
    int64_t ts = fr->best_effort_timestamp;

    if (ts == AV_NOPTS_VALUE)
        return prev_t + (fps > 0 ? 1 / fps : 0.04);
    return (double)(ts - d->start_pts) * d->tb;
}

static void grey_release(struct grey *g)
{
    sws_freeContext(g->sws);
    g->sws = NULL;
    av_freep(&g->buf);
}

/* Scale fr to the analysis grey image and its thumbnail. */
static int grey_make(struct grey *g, const AVFrame *fr)
{
    int w = ANA_W, h = ANA_H, cw = ANA_W / 2, ch = ANA_H / 2;
    uint8_t *dst[4] = {0};
    int dst_ls[4] = {0};

    if (!g->buf)
        g->buf = av_malloc((size_t)ANA_W * ANA_H * 3 / 2);
    if (!g->buf)
        return -1;
    /* fast bilinear: aliasing matters little for differences of box averages */
    g->sws = sws_getCachedContext(g->sws, fr->width, fr->height, fr->format, w, h,
                                  AV_PIX_FMT_YUV420P, SWS_FAST_BILINEAR, NULL, NULL, NULL);
    if (!g->sws)
        return -1;
    dst[0] = g->buf;
    dst[1] = g->buf + (size_t)w * h;
    dst[2] = dst[1] + (size_t)cw * ch;
    dst_ls[0] = w;
    dst_ls[1] = dst_ls[2] = cw;
    sws_scale(g->sws, (const uint8_t *const *)fr->data, fr->linesize, 0, fr->height, dst, dst_ls);
    g->w = w;
    g->h = h;
    vt_img_box_down(dst[0], w, w / THUMB_W, h / THUMB_H, g->th.y, THUMB_W, THUMB_H);
    vt_img_box_down(dst[1], cw, cw / CHROMA_W, ch / CHROMA_H, g->th.u, CHROMA_W, CHROMA_H);
    vt_img_box_down(dst[2], cw, cw / CHROMA_W, ch / CHROMA_H, g->th.v, CHROMA_W, CHROMA_H);
    return 0;
}

/* Means of gw x gh cells of a w x h plane (w, h multiples of gw, gh) into grid. */
static void cell_means(const uint8_t *p, int w, int h, int gw, int gh, uint8_t *grid)
{
    int cw = w / gw, ch = h / gh;
    uint32_t acc[VT_SD_LINE_W] = {0};

    for (int gy = 0; gy < gh; gy++) {
        memset(acc, 0, sizeof(acc));
        for (int y = gy * ch; y < (gy + 1) * ch; y++)
            for (int gx = 0; gx < gw; gx++)
                for (int x = gx * cw; x < (gx + 1) * cw; x++)
                    acc[gx] += p[(size_t)y * w + x];
        for (int gx = 0; gx < gw; gx++)
            grid[gy * gw + gx] =
                (uint8_t)((acc[gx] + (uint32_t)(cw * ch) / 2) / (uint32_t)(cw * ch));
    }
}

/* The coarse grid of shotdetect.h from the thumbnails. */
_Static_assert(THUMB_W % VT_SD_GRID_W == 0 && THUMB_H % VT_SD_GRID_H == 0, "luma grid cells");
_Static_assert(CHROMA_W % VT_SD_CGRID_W == 0 && CHROMA_H % VT_SD_CGRID_H == 0, "chroma cells");
_Static_assert(THUMB_W % VT_SD_LINE_W == 0 && THUMB_H % VT_SD_LINE_H == 0, "line grid cells");
_Static_assert(VT_SD_CGRID_W <= VT_SD_LINE_W && VT_SD_GRID_W <= VT_SD_LINE_W,
               "one accumulator row");

static void thumb_grid(const struct thumb *th, uint8_t *grid)
{
    cell_means(th->y, THUMB_W, THUMB_H, VT_SD_GRID_W, VT_SD_GRID_H, grid);
    grid += VT_SD_GRID_W * VT_SD_GRID_H;
    cell_means(th->u, CHROMA_W, CHROMA_H, VT_SD_CGRID_W, VT_SD_CGRID_H, grid);
    grid += VT_SD_CGRID_W * VT_SD_CGRID_H;
    cell_means(th->v, CHROMA_W, CHROMA_H, VT_SD_CGRID_W, VT_SD_CGRID_H, grid);
}

static void thumb_stats(const uint8_t *t, float *mean, float *sd)
{
    uint64_t s = 0, s2 = 0;

    for (int i = 0; i < THUMB_N; i++) {
        s += t[i];
        s2 += (uint64_t)t[i] * t[i];
    }
    *mean = (float)((double)s / THUMB_N);
    *sd = (float)sqrt(fmax(0, (double)s2 / THUMB_N - (double)*mean * *mean));
}

/* Frame difference: luma mean abs difference plus that of the chroma, and the
 * fraction of luma pixels that changed by more than CHANGE_THR. */
static void thumb_diff(const struct thumb *a, const struct thumb *b, double *d, double *changed)
{
    double mu, mv, c;

    vt_img_diff(a->y, b->y, THUMB_N, CHANGE_THR, d, changed);
    vt_img_diff(a->u, b->u, CHROMA_N, CHANGE_THR, &mu, &c);
    vt_img_diff(a->v, b->v, CHROMA_N, CHANGE_THR, &mv, &c);
    *d += (mu + mv) / 2;
}

static void set_progress(vt_progress_fn progress, void *user, double frac, double *last)
{
    if (!progress || (frac - *last < 0.005 && frac < 1))
        return;
    *last = frac;
    progress(user, frac);
}

/*
 * Whether the stage takes frames where the text of a shot changes (textchange.h): yes
 * unless VIDTHEQUE_TEXT_FRAMES is "0", which gives one frame per shot and skips the text
 * grid, the stage as it was before them (bench/textchange_bench.sh's baseline).
 */
static int text_frames_wanted(void)
{
    const char *e = getenv("VIDTHEQUE_TEXT_FRAMES");

    return !e || strcmp(e, "0") != 0;
}

/* Open path's best video stream for decoding into d (zeroed) with threads threads. */
static int decoder_open(struct decoder *d, const char *path, int threads, char *err, size_t errlen)
{
    int rc;

    d->skip_to_pts = d->stop_pts = AV_NOPTS_VALUE;
    rc = vt_media_open(path, &d->fmt, err, errlen);
    if (rc)
        return rc;
    rc = vt_media_open_video(d->fmt, threads, &d->vidx, &d->dec, err, errlen);
    if (rc)
        return rc;
    d->st = d->fmt->streams[d->vidx];
    for (unsigned i = 0; i < d->fmt->nb_streams; i++)
        if ((int)i != d->vidx)
            d->fmt->streams[i]->discard = AVDISCARD_ALL;
    d->tb = av_q2d(d->st->time_base);
    d->start_pts = d->st->start_time != AV_NOPTS_VALUE ? d->st->start_time : 0;
    d->pkt = av_packet_alloc();
    d->frame = av_frame_alloc();
    if (!d->pkt || !d->frame)
        return vt_err(err, errlen, VT_EIO, "'%s': out of memory", path);
    return 0;
}

static void decoder_close(struct decoder *d)
{
    av_packet_free(&d->pkt);
    av_frame_free(&d->frame);
    avcodec_free_context(&d->dec);
    avformat_close_input(&d->fmt);
}

/*
 * Pass 1 runs in parts, each from one keyframe to the next part's with its own
 * demuxer and single-threaded decoder. Frame threads gain little here: with the
 * non-reference frames skipped, every decoded frame waits for the one before it,
 * and every skipped one holds a thread slot; independent parts keep each core busy.
 * Decoding from a keyframe gives the very same pictures, so the features are those
 * of one pass, once the first frames of each part are compared with the frames
 * before it (scan does that when all parts are done).
 */
struct scan_job {
    pthread_mutex_t mu;
    int text; /* measure the text grid (text_frames_wanted) */
    struct part *parts;
    size_t n_parts;
    double claim_s, last_p;
    vt_progress_fn progress;
    void *user;
};

struct part {
    struct scan_job *job;
    const char *path;
    int vidx, threads;
    double fps;
    int64_t from_pts, to_pts; /* keyframes starting this part and the next; AV_NOPTS_VALUE: none */
    int64_t seek_ts;          /* the seek that led to from_pts when the parts were planned */
    struct vt_sd_feat *f;     /* results: features, caller frees */
    size_t n;
    struct thumb *head, *ring; /* the first and the last RING_N thumbnails */
    double done_s;             /* seconds scanned, under job->mu */
    int rc, seam_lost;
    char err[256];
};

/*
 * Open part p's decoder and place it at the part's start (from_t, to_t: the part's bounds in
 * seconds). Non-zero when the part cannot be scanned: p->rc set, or p->seam_lost.
 */
static int part_open(struct part *p, struct decoder *d, double *from_t, double *to_t)
{
    p->rc = decoder_open(d, p->path, p->threads, p->err, sizeof(p->err));
    if (p->rc)
        return 1;
    if (d->vidx != p->vidx) {
        p->rc = vt_err(p->err, sizeof(p->err), VT_EMEDIA, "'%s': video stream changed", p->path);
        return 1;
    }
    if (p->from_pts != AV_NOPTS_VALUE) {
        *from_t = (double)(p->from_pts - d->start_pts) * d->tb;
        d->skip_to_pts = p->from_pts;
        /* the planner's very seek: seeking to the keyframe itself can land after it
         * where the demuxer searches by decoding timestamps (MPEG-TS) */
        if (av_seek_frame(d->fmt, d->vidx, p->seek_ts, AVSEEK_FLAG_BACKWARD) < 0) {
            p->seam_lost = 1;
            return 1;
        }
    }
    if (p->to_pts != AV_NOPTS_VALUE) {
        *to_t = (double)(p->to_pts - d->start_pts) * d->tb;
        d->stop_pts = p->to_pts;
    }
    d->dec->skip_frame = AVDISCARD_NONREF;
    d->dec->skip_loop_filter = AVDISCARD_ALL;
    return 0;
}

/*
 * The features of frame (at t s, grey g) into x, the part's n-th: sharpness, statistics,
 * grid, and the differences to the frame before and to one VT_SD_LAG_S before (ring_t:
 * the times of the thumbnails in p->ring).
 */
static void frame_features(struct part *p, const struct grey *g, const AVFrame *frame, double t,
                           size_t n, const double *ring_t, size_t *since_key, struct vt_sd_feat *x)
{
    double mad, ch;

    memset(x, 0, sizeof(*x));
    x->t_s = t;
    x->key = frame->key_frame || frame->pict_type == AV_PICTURE_TYPE_I;
    /* keyframes always: they are the cheapest to fetch again in pass 2; counted
     * from the keyframe, so that parts agree with one pass */
    *since_key = x->key ? 0 : *since_key + 1;
    if (*since_key % SHARP_EVERY == 0)
        x->sharpness = (float)vt_img_laplacian_var(g->buf, g->w, g->h, g->w);
    thumb_stats(g->th.y, &x->mean, &x->stddev);
    thumb_grid(&g->th, x->grid);
    cell_means(g->th.y, THUMB_W, THUMB_H, VT_SD_LINE_W, VT_SD_LINE_H, x->line);
    if (p->job->text)
        vt_tc_grid(g->buf, g->w, g->h, g->w, x->text);
    if (n) {
        size_t k = n - 1, steps = 0;

        thumb_diff(&g->th, &p->ring[(n - 1) % RING_N], &mad, &ch);
        x->d1 = (float)mad;
        x->changed = (float)ch;
        /* the newest thumbnail at least VT_SD_LAG_S old, or the oldest we have */
        while (k > 0 && steps + 1 < RING_N && ring_t[k % RING_N] > t - VT_SD_LAG_S) {
            k--;
            steps++;
        }
        thumb_diff(&g->th, &p->ring[k % RING_N], &mad, &ch);
        x->dlong = (float)mad;
    }
}

/* The part has scanned up to t s: the job's progress over all parts (reported when report). */
static void part_progress(struct part *p, double t, double from_t, int report)
{
    struct scan_job *job = p->job;
    double done = 0;

    if (!(job->claim_s > 0))
        return;
    pthread_mutex_lock(&job->mu);
    p->done_s = t - fmax(0, from_t);
    for (size_t i = 0; i < job->n_parts; i++)
        done += job->parts[i].done_s;
    pthread_mutex_unlock(&job->mu);
    if (report)
        set_progress(job->progress, job->user, PASS1_SHARE * fmin(1, done / job->claim_s),
                     &job->last_p);
}

/* Pass 1 over one part: features of every analysed frame into p->f. */
static void scan_part(struct part *p, int report)
{
    struct decoder d = {0};
    struct grey g = {0};
    size_t cap = 0;
    double ring_t[RING_N], prev_t = -1e9, from_t = -INFINITY, to_t = INFINITY;
    size_t since_key = 0;
    int e;

    p->ring = vt_xmalloc(sizeof(*p->ring) * RING_N);
    p->head = vt_xmalloc(sizeof(*p->head) * RING_N);
    if (part_open(p, &d, &from_t, &to_t))
        goto out;
    while ((e = next_frame(&d)) > 0) {
        double t = frame_time(&d, d.frame, prev_t, p->fps);
        size_t n = p->n;

        /* before the seam: pictures that lean on the previous part's frames */
        if (t < from_t || t >= to_t || t <= prev_t + 1e-6) {
            /* or timestamps going back or repeated: not a new picture for us */
            av_frame_unref(d.frame);
            continue;
        }
        if (n >= MAX_FRAMES || t > VT_MEDIA_MAX_DURATION_S)
            break;
        if (grey_make(&g, d.frame) < 0) {
            p->rc = vt_err(p->err, sizeof(p->err), VT_EMEDIA,
                           "'%s': cannot convert a %dx%d video frame", p->path, d.frame->width,
                           d.frame->height);
            goto out;
        }
        vt_grow((void **)&p->f, &cap, n + 1, sizeof(*p->f));
        frame_features(p, &g, d.frame, t, n, ring_t, &since_key, &p->f[n]);
        p->ring[n % RING_N] = g.th;
        ring_t[n % RING_N] = t;
        if (n < RING_N)
            p->head[n] = g.th;
        prev_t = t;
        p->n++;
        av_frame_unref(d.frame);
        part_progress(p, t, from_t, report);
    }
    if (d.seam_lost)
        p->seam_lost = 1;
    else if (e < 0)
        p->rc = vt_err(p->err, sizeof(p->err), VT_EMEDIA, "'%s': cannot decode: %s", p->path,
                       averr(e, (char[128]){0}, 128));
out:
    grey_release(&g);
    decoder_close(&d);
}

/* Part i on one worker of the pool (a vt_pool task): the calling thread, worker 0,
 * alone reports progress. A lost seam is no failure: the other parts go on. */
static int scan_task(void *user, size_t worker, size_t i, char *err, size_t errlen)
{
    struct scan_job *job = user;
    struct part *p = &job->parts[i];

    scan_part(p, worker == 0);
    return p->rc ? vt_err(err, errlen, p->rc, "%s", p->err) : 0;
}

/* Where a part starts: the first keyframe read after a seek to seek_ts. */
struct seam {
    int64_t seek_ts, pts;
};

/*
 * Keyframes where parts 2..n_parts start, at even shares of the claimed duration;
 * fewer when keyframes are too sparse. Moves d's read position.
 */
static size_t plan_seams(struct decoder *d, double claim_s, size_t n_parts, struct seam *seams)
{
    size_t k = 0;

    for (size_t i = 1; i < n_parts; i++) {
        int64_t ts = d->start_pts + (int64_t)(claim_s * (double)i / (double)n_parts / d->tb);
        int64_t pts = AV_NOPTS_VALUE;

        if (av_seek_frame(d->fmt, d->vidx, ts, AVSEEK_FLAG_BACKWARD) < 0)
            break;
        for (int m = 0; m < 10000 && av_read_frame(d->fmt, d->pkt) >= 0; m++) {
            int found = d->pkt->stream_index == d->vidx && (d->pkt->flags & AV_PKT_FLAG_KEY);

            if (found)
                pts = d->pkt->pts;
            av_packet_unref(d->pkt);
            if (found)
                break;
        }
        if (pts == AV_NOPTS_VALUE || pts <= d->start_pts || (k && pts <= seams[k - 1].pts))
            continue;
        seams[k].seek_ts = ts;
        seams[k++].pts = pts;
    }
    return k;
}

/* The first frames of part p (at f[off..]) against the frames before it, as one pass
 * would have compared them; hist holds the RING_N frames before off by index. */
static void fix_seam(struct vt_sd_feat *f, size_t off, const struct part *p,
                     const struct thumb *hist)
{
    for (size_t k = 0; k < p->n && k + 1 < RING_N; k++) {
        size_t at = off + k, j = at - 1, steps = 0;
        double mad, ch, t = f[at].t_s;

        if (k == 0) {
            thumb_diff(&p->head[0], &hist[j % RING_N], &mad, &ch);
            f[at].d1 = (float)mad;
            f[at].changed = (float)ch;
        }
        while (j > 0 && steps + 1 < RING_N && f[j].t_s > t - VT_SD_LAG_S) {
            j--;
            steps++;
        }
        thumb_diff(&p->head[k], j >= off ? &p->head[j - off] : &hist[j % RING_N], &mad, &ch);
        f[at].dlong = (float)mad;
    }
}

/* Pass 1: features of every analysed frame into *feats (caller frees). */
static int scan(struct decoder *d, const char *path, int ncpu, size_t max_parts, double fps,
                double claim_s, struct vt_sd_feat **feats, size_t *nf, vt_progress_fn progress,
                void *user, char *err, size_t errlen)
{
    struct scan_job job = {.claim_s = claim_s,
                           .last_p = -1,
                           .progress = progress,
                           .user = user,
                           .text = text_frames_wanted()};
    struct vt_pool pool = {.task = scan_task, .user = &job, .caller_works = 1};
    struct thumb *hist = NULL;
    struct vt_sd_feat *f = NULL;
    struct seam seams[MAX_PARTS - 1];
    size_t want = 1, n = 0;
    int rc = 0, lost = 0;

    if (claim_s >= 2 * MIN_PART_S)
        want = (size_t)fmin(fmin(ncpu, max_parts), claim_s / MIN_PART_S);
    job.n_parts = 1 + plan_seams(d, claim_s, want, seams);
    job.parts = vt_xcalloc(job.n_parts, sizeof(*job.parts));
    pthread_mutex_init(&job.mu, NULL);
    for (size_t i = 0; i < job.n_parts; i++) {
        struct part *p = &job.parts[i];

        p->job = &job;
        p->path = path;
        p->vidx = d->vidx;
        p->fps = fps;
        p->threads = job.n_parts > 1 ? (int)fmax(1, ncpu / (int)job.n_parts) : ncpu;
        p->from_pts = i ? seams[i - 1].pts : AV_NOPTS_VALUE;
        p->seek_ts = i ? seams[i - 1].seek_ts : AV_NOPTS_VALUE;
        p->to_pts = i + 1 < job.n_parts ? seams[i].pts : AV_NOPTS_VALUE;
    }
    pool.n_items = pool.n_workers = job.n_parts;
    rc = vt_pool_run(&pool, err, errlen);
    for (size_t i = 0; i < job.n_parts; i++) {
        lost |= job.parts[i].seam_lost;
        n += job.parts[i].n;
    }
    if (rc || lost)
        goto out;
    /* one array in time order; the first frames of each part see the frames before */
    f = vt_xmalloc((n ? n : 1) * sizeof(*f));
    hist = vt_xmalloc(sizeof(*hist) * RING_N);
    n = 0;
    for (size_t i = 0; i < job.n_parts; i++) {
        const struct part *p = &job.parts[i];
        size_t keep = p->n < RING_N ? p->n : RING_N;

        if (!p->n)
            continue;
        memcpy(f + n, p->f, p->n * sizeof(*f));
        if (n)
            fix_seam(f, n, p, hist);
        for (size_t j = n + p->n - keep; j < n + p->n; j++)
            hist[j % RING_N] = p->ring[(j - n) % RING_N];
        n += p->n;
    }
    if (n > MAX_FRAMES)
        n = MAX_FRAMES;
out:
    for (size_t i = 0; i < job.n_parts; i++) {
        free(job.parts[i].f);
        free(job.parts[i].head);
        free(job.parts[i].ring);
    }
    free(job.parts);
    free(hist);
    pthread_mutex_destroy(&job.mu);
    if (lost && !rc) {
        /* a part could not find its keyframe again (an odd index): one part then */
        free(f);
        return scan(d, path, ncpu, 1, fps, claim_s, feats, nf, progress, user, err, errlen);
    }
    if (rc) {
        free(f);
        f = NULL;
        n = 0;
    }
    *feats = f;
    *nf = n;
    return rc;
}

/* Seek so that the next frames decoded lead to time t_s; margin_s earlier for safety. */
static void seek_to(struct decoder *d, double t_s, double margin_s)
{
    int64_t ts = d->start_pts + (int64_t)floor(fmax(0, t_s - margin_s) / d->tb);

    /* from the very start: MPEG-TS seeks by timestamp land on any packet, even before
     * the first one, so the bytes' start it is where the container allows it */
    if (margin_s >= t_s + 1e6 && av_seek_frame(d->fmt, -1, 0, AVSEEK_FLAG_BYTE) >= 0) {
        avcodec_flush_buffers(d->dec);
        d->eof_in = d->eof_out = 0;
        return;
    }
    av_seek_frame(d->fmt, d->vidx, ts, AVSEEK_FLAG_BACKWARD);
    avcodec_flush_buffers(d->dec);
    d->eof_in = d->eof_out = 0;
}

/*
 * The small version of an upright frame (rgb, w x h) beside it at path's vt_kf_small_name:
 * what pages show, so that a page of thumbnails weighs kilobytes, not megabytes. Written
 * like the frame (temporary file and rename) into the same run folder, so it is committed,
 * replaced and removed with the frame.
 */
static int write_small(const uint8_t *rgb, int w, int h, const char *path, char *err, size_t errlen)
{
    char small[PATH_MAX];
    uint8_t *px;
    int sw, sh, rc;
    int64_t bytes;

    if (vt_kf_small_name(path, small, sizeof(small)))
        return vt_err(err, errlen, VT_EINVAL, "'%s': no name for its small version", path);
    vt_img_small_size(w, h, &sw, &sh);
    px = vt_xmalloc((size_t)sw * sh * 3);
    vt_img_resize_rgb(rgb, w, h, (size_t)w * 3, px, sw, sh);
    rc = vt_img_write_jpeg(small, px, sw, sh, sw * 3, VT_IMG_SMALL_Q, &bytes, err, errlen);
    free(px);
    return rc;
}

/* Convert fr to upright RGB at output size and write it as JPEG at path, and its small
 * version beside it. */
static int write_frame(const AVFrame *fr, int rotation, const char *path, int *ow, int *oh,
                       int64_t *bytes, char *err, size_t errlen)
{
    AVRational sar = fr->sample_aspect_ratio;
    int w = fr->width, h = fr->height, rw, rh, rc = 0;
    struct SwsContext *sws = NULL;
    uint8_t *rgb = NULL, *rot = NULL;
    uint8_t *dst[4] = {0};
    int dst_ls[4] = {0};
    const int *coef;

    /* square pixels, then at most OUT_MAX_W wide: readable slides, bounded files */
    if (sar.num > 0 && sar.den > 0 && sar.num != sar.den)
        w = (int)lround((double)w * sar.num / sar.den);
    if (w > OUT_MAX_W) {
        h = (int)lround((double)h * OUT_MAX_W / w);
        w = OUT_MAX_W;
    }
    w = w < 2 ? 2 : w & ~1;
    h = h < 2 ? 2 : h & ~1;
    sws = sws_getContext(fr->width, fr->height, fr->format, w, h, AV_PIX_FMT_RGB24,
                         SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL, NULL);
    if (!sws) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': cannot convert a %dx%d frame to RGB", path,
                    fr->width, fr->height);
        goto out;
    }
    /* HD video without colour tags is BT.709 in practice, SD is BT.601 */
    coef = sws_getCoefficients(fr->colorspace != AVCOL_SPC_UNSPECIFIED ? fr->colorspace
                               : fr->height >= 720                     ? SWS_CS_ITU709
                                                                       : SWS_CS_ITU601);
    sws_setColorspaceDetails(sws, coef, fr->color_range == AVCOL_RANGE_JPEG, coef, 1, 0, 1 << 16,
                             1 << 16);
    rgb = vt_xmalloc((size_t)w * h * 3);
    dst[0] = rgb;
    dst_ls[0] = w * 3;
    sws_scale(sws, (const uint8_t *const *)fr->data, fr->linesize, 0, fr->height, dst, dst_ls);
    rw = w;
    rh = h;
    if (rotation) {
        rot = vt_img_rotate_rgb(rgb, w, h, w * 3, rotation, &rw, &rh);
        free(rgb);
        rgb = rot;
    }
    rc = vt_img_write_jpeg(path, rgb, rw, rh, rw * 3, JPEG_Q, bytes, err, errlen);
    if (!rc)
        rc = write_small(rgb, rw, rh, path, err, errlen);
    *ow = rw;
    *oh = rh;
out:
    sws_freeContext(sws);
    free(rgb);
    return rc;
}

/*
 * Decode the keyframe at t_s alone into d->frame: its packet and nothing more, where
 * decoding on would hold it back until the frames after it are decoded (reordering,
 * frame threads). 0, or -1 when the seek does not lead to it. Leaves the decoder
 * flushed: the next frame needs a seek.
 */
static int fetch_key(struct decoder *d, double t_s, double half)
{
    int e;

    seek_to(d, t_s, 0);
    do {
        e = av_read_frame(d->fmt, d->pkt);
        if (e < 0)
            return -1;
        if (d->pkt->stream_index != d->vidx)
            av_packet_unref(d->pkt);
    } while (!d->pkt->data);
    if (!(d->pkt->flags & AV_PKT_FLAG_KEY) || d->pkt->pts == AV_NOPTS_VALUE ||
        fabs((double)(d->pkt->pts - d->start_pts) * d->tb - t_s) > half) {
        av_packet_unref(d->pkt);
        return -1;
    }
    e = avcodec_send_packet(d->dec, d->pkt);
    av_packet_unref(d->pkt);
    if (e >= 0)
        e = avcodec_send_packet(d->dec, NULL);
    if (e >= 0)
        e = avcodec_receive_frame(d->dec, d->frame);
    avcodec_flush_buffers(d->dec);
    return e < 0 ? -1 : 0;
}

/*
 * Decode the frame at time t_s (an analysed frame of pass 1) at full quality into
 * d->frame. *pos_t is the time of the last frame decoded. 0 or a negative code.
 */
static int fetch(struct decoder *d, const struct vt_sd_feat *f, size_t ci, double *pos_t,
                 double half, double fps)
{
    static const double margins_s[] = {0, 2, 10, 1e9};
    double t = f[ci].t_s, key_t = t;
    size_t m = 0;
    AVFrame *last = NULL;
    int rc = -1, e, fresh = 0;

    for (size_t k = ci; k > 0 && !f[k].key; k--)
        key_t = f[k - 1].t_s;
    /* keep decoding forward when no keyframe lies between here and the target */
    if (!(*pos_t < t - half && key_t <= *pos_t + half)) {
        if (f[ci].key && !fetch_key(d, t, half)) {
            *pos_t = -1e9;
            return 0;
        }
        seek_to(d, t, 0);
        fresh = 1;
    }
    last = av_frame_alloc();
    for (;;) {
        double ft;

        e = next_frame(d);
        if (e <= 0 && fresh && m + 1 < VT_ARRAY_LEN(margins_s)) {
            /* nothing decodable after the seek: it landed past the last keyframe before
             * the target (MPEG-TS seeks by timestamp, not to keyframes); go back further */
            seek_to(d, t, margins_s[++m]);
            continue;
        }
        if (e <= 0) {
            /* the end of the stream before the target: the last frame will do */
            if (last->buf[0]) {
                av_frame_move_ref(d->frame, last);
                rc = 0;
            }
            goto out;
        }
        ft = frame_time(d, d->frame, *pos_t, fps);
        if (fresh && ft > t + half && m + 1 < VT_ARRAY_LEN(margins_s)) {
            /* the seek landed after the target: go back further */
            av_frame_unref(d->frame);
            seek_to(d, t, margins_s[++m]);
            continue;
        }
        fresh = 0;
        *pos_t = ft;
        if (ft >= t - half) {
            rc = 0;
            goto out;
        }
        av_frame_unref(last);
        av_frame_move_ref(last, d->frame);
    }
out:
    av_frame_free(&last);
    return rc;
}

/*
 * Pass 2 runs on one worker per core, each with its own decoder, taking the chosen
 * frames in turn: fetching a frame costs a seek and the frames from its keyframe,
 * and encoding it as JPEG costs as much again. Every frame is written; the check for
 * duplicates, which needs the frames kept before, comes after and removes the files
 * of the duplicates (few, so writing them costs less than waiting for it).
 */
struct extract_job {
    const char *path, *out_dir;
    const struct vt_sd_feat *f;
    const size_t *at; /* per frame: the analysed frame it is */
    struct vt_kf_frame *frames;
    uint8_t (*thumbs)[THUMB_N]; /* per frame, for the duplicate check */
    struct extractor *w;        /* per worker of the pool */
    size_t n;                   /* frames */
    double fps, last_p;
    int vidx, rotation, threads;
    vt_progress_fn progress;
    void *user;
};

/* One worker's decoder, opened at its first frame and kept for the next ones. */
struct extractor {
    struct decoder d;
    struct grey g;
    double pos_t;
    int opened;
};

/* Fetch frame k at full quality, measure it and write it as k.jpg. */
static int extract_one(struct extract_job *job, struct decoder *d, struct grey *g, size_t k,
                       double *pos_t, char *err, size_t errlen)
{
    struct vt_kf_frame *x = &job->frames[k];
    uint8_t g32[32 * 32];
    char *path;
    int rc;

    if (fetch(d, job->f, job->at[k], pos_t, 0.5 / job->fps, job->fps) < 0)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot decode the frame at %.3f s", job->path,
                      x->t_s);
    if (grey_make(g, d->frame) < 0) {
        av_frame_unref(d->frame);
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot convert a video frame", job->path);
    }
    x->sharpness = vt_img_laplacian_var(g->buf, g->w, g->h, g->w);
    vt_img_resize_gray(g->buf, g->w, g->h, g->w, g32, 32, 32);
    if (job->rotation) { /* the hash of the upright picture, as another copy would have it */
        int rw, rh;
        uint8_t *up = vt_img_rotate_grey(g32, 32, 32, 32, job->rotation, &rw, &rh);

        memcpy(g32, up, sizeof(g32));
        free(up);
    }
    x->phash = vt_img_phash64(g32);
    memcpy(job->thumbs[k], g->th.y, THUMB_N);
    path = vt_xasprintf("%s/%d.jpg", job->out_dir, x->index);
    rc = write_frame(d->frame, job->rotation, path, &x->width, &x->height, &x->bytes, err, errlen);
    free(path);
    av_frame_unref(d->frame);
    if (!rc)
        snprintf(x->file, sizeof(x->file), "%d.jpg", x->index);
    return rc;
}

/* Frame k on one worker of the pool (a vt_pool task). */
static int extract_task(void *user, size_t worker, size_t k, char *err, size_t errlen)
{
    struct extract_job *job = user;
    struct extractor *w = &job->w[worker];
    int rc;

    if (!w->opened) {
        w->opened = 1;
        w->pos_t = -1e9;
        rc = decoder_open(&w->d, job->path, job->threads, err, errlen);
        if (rc)
            return rc;
        if (w->d.vidx != job->vidx)
            return vt_err(err, errlen, VT_EMEDIA, "'%s': video stream changed", job->path);
        w->d.dec->skip_frame = AVDISCARD_NONREF; /* chosen frames were decoded in pass 1 */
        w->d.dec->skip_loop_filter = AVDISCARD_DEFAULT;
    }
    return extract_one(job, &w->d, &w->g, k, &w->pos_t, err, errlen);
}

static void extract_progress(void *user, double frac)
{
    struct extract_job *job = user;

    set_progress(job->progress, job->user, PASS1_SHARE + (1 - PASS1_SHARE) * frac, &job->last_p);
}

/* Pass 2: every chosen frame of res->frames measured and written, then duplicates
 * marked and their files removed. */
static int extract(struct extract_job *job, int ncpu, struct vt_kf_result *res, char *err,
                   size_t errlen)
{
    size_t n_workers = job->n < (size_t)ncpu ? job->n : (size_t)ncpu, n_kept = 0;
    size_t *kept = vt_xmalloc((job->n ? job->n : 1) * sizeof(*kept));
    /* the calling thread is worker 0 and alone reports progress */
    struct vt_pool pool = {.n_items = job->n,
                           .task = extract_task,
                           .user = job,
                           .caller_works = 1,
                           .progress = extract_progress,
                           .progress_user = job};
    int rc;

    if (n_workers > MAX_PARTS)
        n_workers = MAX_PARTS;
    pool.n_workers = n_workers;
    job->threads = n_workers > 1 ? 1 : ncpu;
    job->w = vt_xcalloc(n_workers ? n_workers : 1, sizeof(*job->w));
    rc = vt_pool_run(&pool, err, errlen);
    for (size_t i = 0; i < n_workers; i++) {
        grey_release(&job->w[i].g);
        decoder_close(&job->w[i].d);
    }
    if (rc)
        goto out;
    for (size_t k = 0; k < job->n; k++) {
        struct vt_kf_frame *x = &res->frames[k];

        for (size_t j = 0; j < n_kept && x->duplicate_of < 0; j++) {
            const struct vt_kf_frame *y = &res->frames[kept[j]];
            double mad, ch;

            if (vt_img_hamming64(x->phash, y->phash) > DUP_HAMMING)
                continue;
            vt_img_diff(job->thumbs[k], job->thumbs[kept[j]], THUMB_N, CHANGE_THR, &mad, &ch);
            if (mad <= DUP_MAD && ch <= DUP_CHANGED)
                x->duplicate_of = y->index;
        }
        if (x->duplicate_of >= 0) {
            char *path = vt_xasprintf("%s/%s", job->out_dir, x->file), small[PATH_MAX];

            unlink(path);
            if (!vt_kf_small_name(path, small, sizeof(small)))
                unlink(small);
            free(path);
            x->file[0] = '\0';
            x->width = x->height = 0;
            x->bytes = 0;
        } else {
            kept[n_kept++] = k;
            res->shots[x->shot].kept++;
        }
    }
out:
    free(kept);
    free(job->w);
    job->w = NULL;
    return rc;
}

/*
 * Open media_path into d (closed by the caller) and run pass 1: features of every
 * analysed frame into *feats (caller frees), their number (>= 1) and the frame rate.
 */
static int features(struct decoder *d, const char *media_path, int ncpu, struct vt_sd_feat **feats,
                    size_t *nf, double *fps_out, vt_progress_fn progress, void *user, char *err,
                    size_t errlen)
{
    AVRational fr;
    double fps = 0, claim_s = 0;
    int rc;

    *feats = NULL;
    *nf = 0;
    /* for the container's facts and the plan: the passes decode with their own */
    rc = decoder_open(d, media_path, 1, err, errlen);
    if (rc == VT_ENOTFOUND)
        return vt_err(err, errlen, VT_SKIP, "no video stream");
    if (rc)
        return rc;
    fr = d->st->avg_frame_rate.num > 0 && d->st->avg_frame_rate.den > 0 ? d->st->avg_frame_rate
                                                                        : d->st->r_frame_rate;
    if (fr.num > 0 && fr.den > 0 && av_q2d(fr) <= 1000)
        fps = av_q2d(fr);
    if (d->fmt->duration > 0 && d->fmt->duration != AV_NOPTS_VALUE)
        claim_s = fmin((double)d->fmt->duration / AV_TIME_BASE, VT_MEDIA_MAX_DURATION_S);
    rc = scan(d, media_path, ncpu, MAX_PARTS, fps, claim_s, feats, nf, progress, user, err, errlen);
    if (rc)
        return rc;
    if (!*nf) {
        free(*feats);
        *feats = NULL;
        return vt_err(err, errlen, VT_EMEDIA, "'%s': no video frame could be decoded", media_path);
    }
    if (fps <= 0) {
        /* no usable declared rate: the smallest step between frames we saw */
        const struct vt_sd_feat *f = *feats;
        double step = 0;

        for (size_t i = 1; i < *nf; i++)
            if (f[i].t_s - f[i - 1].t_s > 1e-4 && (!step || f[i].t_s - f[i - 1].t_s < step))
                step = f[i].t_s - f[i - 1].t_s;
        fps = step > 0 ? 1 / step : 25;
    }
    *fps_out = fps;
    return 0;
}

static int cpu_count(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    return ncpu > 8 ? 8 : ncpu < 1 ? 1 : (int)ncpu;
}

int vt_kf_features(const char *media_path, struct vt_sd_feat **feats, size_t *nf, char *err,
                   size_t errlen)
{
    struct decoder d = {0};
    double fps = 0;
    int rc = features(&d, media_path, cpu_count(), feats, nf, &fps, NULL, NULL, err, errlen);

    decoder_close(&d);
    return rc;
}

/* The shots of res (duration_s set) from the n_shots shots found over f. */
static void plan_shots(const struct vt_sd_feat *f, size_t nf, const struct vt_sd_shot *shots,
                       size_t n_shots, struct vt_kf_result *res)
{
    res->shots = vt_xcalloc(n_shots, sizeof(*res->shots));
    res->n_shots = n_shots;
    for (size_t k = 0; k < n_shots; k++) {
        struct vt_kf_shot *s = &res->shots[k];

        s->start_s = k ? f[shots[k].first].t_s : 0;
        s->end_s = k + 1 < n_shots ? f[shots[k + 1].first].t_s : res->duration_s;
        if (k) {
            const struct vt_sd_shot *sh = &shots[k];

            s->transition = vt_sd_kind_name(sh->kind);
            s->trans_start_s = s->trans_end_s = s->start_s;
            if (sh->kind != VT_SD_CUT) {
                /* mixed frames [span0, span1]: the span ends where the next frame starts */
                s->trans_start_s = f[sh->span0].t_s;
                s->trans_end_s = sh->span1 + 1 < nf ? f[sh->span1 + 1].t_s : res->duration_s;
            }
        }
    }
}

/*
 * The frames of res, in time order, and the analysed frame of each into *at (caller frees):
 * each shot's chosen frame and those taken where its text changed (textchange.h).
 */
static void plan_frames(const struct vt_sd_feat *f, const struct vt_sd_shot *shots, size_t n_shots,
                        double fps, struct vt_kf_result *res, size_t **at)
{
    size_t cap = n_shots ? n_shots : 1, n = 0;
    int text = text_frames_wanted();

    res->frames = vt_xcalloc(cap, sizeof(*res->frames));
    *at = vt_xmalloc(cap * sizeof(**at));
    for (size_t k = 0; k < n_shots; k++) {
        size_t extra[VT_TC_MAX_EXTRA + 1], ne = text ? vt_tc_extra(f, &shots[k], extra) : 0, j = 0;

        /* the chosen frame among the extra ones, in time order */
        while (j < ne && extra[j] < shots[k].chosen)
            j++;
        memmove(extra + j + 1, extra + j, (ne - j) * sizeof(*extra));
        extra[j] = shots[k].chosen;
        ne++;
        vt_grow((void **)&res->frames, &cap, n + ne, sizeof(*res->frames));
        *at = vt_xrealloc(*at, cap * sizeof(**at));
        for (j = 0; j < ne; j++, n++) {
            struct vt_kf_frame *x = &res->frames[n];

            (*at)[n] = extra[j];
            x->index = (int)n;
            x->shot = (int)k;
            x->duplicate_of = -1;
            x->t_s = f[extra[j]].t_s;
            x->frame_no = llround(x->t_s * fps);
        }
        res->shots[k].captured = (int)ne;
    }
    res->n_frames = n;
}

int vt_keyframe_run(const char *media_path, const char *out_dir, struct vt_kf_result *res,
                    vt_progress_fn progress, void *user, char *err, size_t errlen)
{
    struct decoder d = {0};
    struct vt_sd_feat *f = NULL;
    struct vt_sd_shot *shots = NULL;
    struct extract_job job = {0};
    size_t nf = 0, n_shots = 0, *at = NULL;
    double fps = 0;
    int ncpu = cpu_count();
    int rc;

    memset(res, 0, sizeof(*res));
    snprintf(res->model, sizeof(res->model), "%s", KF_MODEL);
    rc = features(&d, media_path, ncpu, &f, &nf, &fps, progress, user, err, errlen);
    if (rc)
        goto out;
    res->duration_s = f[nf - 1].t_s + 1 / fps;
    n_shots = vt_sd_detect(f, nf, &shots);
    plan_shots(f, nf, shots, n_shots, res);
    plan_frames(f, shots, n_shots, fps, res, &at);
    job.path = media_path;
    job.out_dir = out_dir;
    job.f = f;
    job.at = at;
    job.frames = res->frames;
    job.thumbs = vt_xmalloc(sizeof(*job.thumbs) * (res->n_frames ? res->n_frames : 1));
    job.n = res->n_frames;
    job.fps = fps;
    job.last_p = -1;
    job.vidx = d.vidx;
    job.rotation = vt_media_rotation(d.st);
    job.progress = progress;
    job.user = user;
    rc = extract(&job, ncpu, res, err, errlen);
    if (!rc)
        set_progress(progress, user, 1, &job.last_p);
out:
    if (rc < 0)
        vt_kf_result_release(res);
    free(job.thumbs);
    free(at);
    free(shots);
    free(f);
    decoder_close(&d);
    return rc;
}

void vt_kf_result_release(struct vt_kf_result *res)
{
    if (!res)
        return;
    free(res->shots);
    free(res->frames);
    res->shots = NULL;
    res->frames = NULL;
    res->n_shots = res->n_frames = 0;
}

int vt_kf_small_name(const char *image, char *out, size_t len)
{
    size_t n = strlen(image);

    if (n < 4 || strcmp(image + n - 4, ".jpg") || n + 6 >= len)
        return VT_EINVAL;
    memcpy(out, image, n - 4);
    memcpy(out + n - 4, ".small.jpg", 11);
    return 0;
}
