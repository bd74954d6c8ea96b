/*
 * Audio for the stt stage: one pass over the file's best audio stream, every frame
 * downmixed and resampled by libswresample to 16 kHz mono int16 and handed to the reader
 * in order, one decoded frame at a time, so that hours of audio take no more memory than a
 * frame. Word timings are only as good as the sample positions, so the output follows the
 * stream's timestamps rather than counting samples: silence before a stream that starts
 * late and in gaps (a count of zeros, produced as it is read), overlapping samples dropped,
 * all relative to the file's start (the container's start time), the time line every stage
 * reports on.
 */
#include "media/audio.h"

#include "media/media.h"
#include "base/util.h"

#include <libavutil/channel_layout.h>
#include <libswresample/swresample.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Timestamp jitter below this is ignored; above it, a gap is filled or an overlap cut. */
#define AUDIO_SLACK_S 0.02
/*
 * A jump forward by more than AUDIO_MAX_GAP_S or back by more than
 * AUDIO_MAX_OVERLAP_S is a timestamp discontinuity (an MPEG-TS reset, a broken or hostile
 * file), not a gap: the samples then simply follow, rather than hours of silence being
 * allocated or the rest of the audio being dropped as "already covered".
 */
#define AUDIO_MAX_GAP_S     600.0
#define AUDIO_MAX_OVERLAP_S 1.0
/* Refuse absurd parameters from a hostile header before handing them to swresample. */
#define AUDIO_MAX_RATE_HZ  768000
#define AUDIO_MAX_CHANNELS 64
/* vt_audio_load reads in blocks of this many samples (4 s). */
#define AUDIO_LOAD_BLOCK (4 * VT_AUDIO_RATE_HZ)

struct vt_audio {
    char *path;
    AVFormatContext *fmt;
    AVPacket *pkt;
    AVFrame *frame;
    int idx;
    AVCodecContext *dec;
    SwrContext *swr;
    AVChannelLayout in_layout;
    int in_rate, in_format;
    double tb, start_s; /* stream time base; file start on the stream's time line (s) */
    double pos_s;       /* time of the next input sample fed to swr, from the file start */
    double duration_s;  /* the container's claim, 0 when unknown */
    /*
     * What one decoded frame gave, in the order it plays: q[0] (samples swr held back, or
     * the whole frame), then `silence` samples of a gap, then q[1] (the frame after the gap).
     * The next frame is decoded only once all three are read, so memory is one frame's.
     */
    int16_t *q[2];
    size_t q_n[2], q_cap[2], q_off[2];
    size_t silence;
    int piece;          /* the queue convert appends to: 1 once a gap is queued */
    size_t n_out;       /* samples produced so far, queued ones included */
    size_t max_out;     /* VT_MEDIA_MAX_DURATION_S of samples */
    size_t n_frames;    /* decoded frames */
    size_t bad_packets; /* packets the decoder refused as invalid */
    int flushed, eof;
};

/* Make room for n more samples in the current queue. */
static void out_reserve(struct vt_audio *a, size_t n)
{
    int p = a->piece;

    vt_grow((void **)&a->q[p], &a->q_cap[p], a->q_n[p] + n, sizeof(*a->q[p]));
}

/* Convert nb input samples (NULL in: drain what swr holds) and queue them. */
static int convert(struct vt_audio *a, const uint8_t **in, int nb, char *err, size_t errlen)
{
    int room = swr_get_out_samples(a->swr, nb), got, p = a->piece;
    uint8_t *dst;

    if (room < 0)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot resample the audio", a->path);
    if (room == 0)
        return 0;
    out_reserve(a, (size_t)room);
    dst = (uint8_t *)(a->q[p] + a->q_n[p]);
    got = swr_convert(a->swr, &dst, room, in, in ? nb : 0);
    if (got < 0)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot resample the audio", a->path);
    /* Past the cap the samples are dropped. */
    if ((size_t)got > a->max_out - a->n_out)
        got = (int)(a->max_out - a->n_out);
    a->q_n[p] += (size_t)got;
    a->n_out += (size_t)got;
    return 0;
}

/*
 * Queue silence up to output sample `until` (first draining swr, so the order holds). The
 * silence is a count, not a buffer: a gap of minutes costs nothing until it is read.
 */
static int pad_to(struct vt_audio *a, size_t until, char *err, size_t errlen)
{
    int rc = 0;

    if (a->swr)
        rc = convert(a, NULL, 0, err, errlen);
    if (rc)
        return rc;
    if (until > a->max_out)
        until = a->max_out;
    if (until > a->n_out) {
        a->silence += until - a->n_out;
        a->n_out = until;
        a->piece = 1;
    }
    return 0;
}

/* (Re)create the resampler when the stream's format, rate or channel layout changes. */
static int swr_setup(struct vt_audio *a, const AVFrame *f, char *err, size_t errlen)
{
    AVChannelLayout mono = AV_CHANNEL_LAYOUT_MONO, in = {0};
    int rc = 0;

    if (f->sample_rate <= 0 || f->sample_rate > AUDIO_MAX_RATE_HZ ||
        f->ch_layout.nb_channels <= 0 || f->ch_layout.nb_channels > AUDIO_MAX_CHANNELS)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': bad audio parameters (%d Hz, %d channels)",
                      a->path, f->sample_rate, f->ch_layout.nb_channels);
    if (a->swr && f->sample_rate == a->in_rate && f->format == a->in_format &&
        !av_channel_layout_compare(&f->ch_layout, &a->in_layout))
        return 0;
    if (a->swr) {
        rc = convert(a, NULL, 0, err, errlen);
        if (rc)
            goto out;
        swr_free(&a->swr);
    }
    av_channel_layout_uninit(&a->in_layout);
    if (av_channel_layout_copy(&a->in_layout, &f->ch_layout) < 0) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': out of memory", a->path);
        goto out;
    }
    /* A layout without channel order ("2 channels") cannot be downmixed: take the default. */
    if (f->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC)
        av_channel_layout_default(&in, f->ch_layout.nb_channels);
    else if (av_channel_layout_copy(&in, &f->ch_layout) < 0) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': out of memory", a->path);
        goto out;
    }
    if (swr_alloc_set_opts2(&a->swr, &mono, AV_SAMPLE_FMT_S16, VT_AUDIO_RATE_HZ, &in, f->format,
                            f->sample_rate, 0, NULL) < 0 ||
        swr_init(a->swr) < 0) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': cannot resample %d Hz %d-channel audio", a->path,
                    f->sample_rate, f->ch_layout.nb_channels);
        goto out;
    }
    a->in_rate = f->sample_rate;
    a->in_format = f->format;
out:
    av_channel_layout_uninit(&in);
    if (rc)
        swr_free(&a->swr);
    return rc;
}

/* Place one decoded frame on the time line and append it. */
static int add_frame(struct vt_audio *a, const AVFrame *f, char *err, size_t errlen)
{
    int64_t pts = f->best_effort_timestamp;
    double t_s, gap_s;
    int rc;

    rc = swr_setup(a, f, err, errlen);
    if (rc)
        return rc;
    /* Frames without a timestamp follow the previous one. */
    t_s = pts == AV_NOPTS_VALUE ? a->pos_s : pts * a->tb - a->start_s;
    if (!isfinite(t_s))
        t_s = a->pos_s;
    gap_s = t_s - a->pos_s;
    if (gap_s > AUDIO_MAX_GAP_S || gap_s < -AUDIO_MAX_OVERLAP_S) {
        t_s = a->pos_s;
        gap_s = 0;
    }
    if (t_s >= VT_MEDIA_MAX_DURATION_S)
        return pad_to(a, a->max_out, err, errlen);
    /* The first frame is placed exactly; later ones only when they jump. */
    if (gap_s > (a->n_frames ? AUDIO_SLACK_S : 0.5 / VT_AUDIO_RATE_HZ)) {
        rc = pad_to(a, (size_t)llround(t_s * VT_AUDIO_RATE_HZ), err, errlen);
        if (rc)
            return rc;
    } else if (gap_s < (a->n_frames ? -AUDIO_SLACK_S : -0.5 / VT_AUDIO_RATE_HZ)) {
        /* Overlap (or a frame before the file's start): drop what was already covered. */
        if (swr_drop_output(a->swr, (int)fmin(llround(-gap_s * VT_AUDIO_RATE_HZ), INT_MAX)) < 0)
            return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot resample the audio", a->path);
    }
    a->pos_s = fmax(a->pos_s, t_s + (double)f->nb_samples / f->sample_rate);
    a->n_frames++;
    return convert(a, (const uint8_t **)f->extended_data, f->nb_samples, err, errlen);
}

static int open_decoder(struct vt_audio *a, AVFormatContext *fmt, int *idx, char *err,
                        size_t errlen)
{
    const AVCodec *codec = NULL;
    AVStream *st;

    *idx = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
    if (*idx < 0)
        return vt_err(err, errlen, VT_SKIP, "no audio stream");
    st = fmt->streams[*idx];
    if (!codec)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': no decoder for audio codec '%s'", a->path,
                      avcodec_get_name(st->codecpar->codec_id));
    a->dec = avcodec_alloc_context3(codec);
    if (!a->dec)
        return vt_err(err, errlen, VT_EIO, "'%s': out of memory", a->path);
    if (avcodec_parameters_to_context(a->dec, st->codecpar) < 0)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': bad audio stream parameters", a->path);
    a->dec->pkt_timebase = st->time_base;
    if (avcodec_open2(a->dec, codec, NULL) < 0)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot open the '%s' audio decoder", a->path,
                      codec->name);
    for (unsigned i = 0; i < fmt->nb_streams; i++)
        if ((int)i != *idx)
            fmt->streams[i]->discard = AVDISCARD_ALL;
    a->tb = av_q2d(st->time_base);
    if (fmt->start_time != AV_NOPTS_VALUE)
        a->start_s = (double)fmt->start_time / AV_TIME_BASE;
    else if (st->start_time != AV_NOPTS_VALUE)
        a->start_s = st->start_time * a->tb;
    return 0;
}

void vt_audio_close(struct vt_audio *a)
{
    if (!a)
        return;
    free(a->q[0]);
    free(a->q[1]);
    swr_free(&a->swr);
    av_channel_layout_uninit(&a->in_layout);
    avcodec_free_context(&a->dec);
    av_frame_free(&a->frame);
    av_packet_free(&a->pkt);
    avformat_close_input(&a->fmt);
    free(a->path);
    free(a);
}

int vt_audio_open(const char *path, struct vt_audio **out, char *err, size_t errlen)
{
    struct vt_audio *a = vt_xcalloc(1, sizeof(*a));
    int rc;

    *out = NULL;
    a->path = vt_xstrdup(path);
    a->max_out = (size_t)(VT_MEDIA_MAX_DURATION_S * VT_AUDIO_RATE_HZ);
    rc = vt_media_open(path, &a->fmt, err, errlen);
    if (rc)
        goto out;
    rc = open_decoder(a, a->fmt, &a->idx, err, errlen);
    if (rc)
        goto out;
    a->pkt = av_packet_alloc();
    a->frame = av_frame_alloc();
    if (!a->pkt || !a->frame) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': out of memory", path);
        goto out;
    }
    if (a->fmt->duration != AV_NOPTS_VALUE && a->fmt->duration > 0)
        a->duration_s = fmin((double)a->fmt->duration / AV_TIME_BASE, VT_MEDIA_MAX_DURATION_S);
out:
    if (rc)
        vt_audio_close(a);
    else
        *out = a;
    return rc;
}

double vt_audio_duration_s(const struct vt_audio *a)
{
    return a->duration_s;
}

/* Decode until one frame is queued or the stream ends (a->eof). */
static int fill(struct vt_audio *a, char *err, size_t errlen)
{
    int rc, e;

    for (;;) {
        if (a->n_out >= a->max_out) {
            a->eof = 1;
            return 0;
        }
        e = avcodec_receive_frame(a->dec, a->frame);
        if (e == 0) {
            rc = add_frame(a, a->frame, err, errlen);
            av_frame_unref(a->frame);
            return rc;
        }
        /* A corrupt frame costs its few milliseconds of audio, not the transcript. */
        if (e == AVERROR_INVALIDDATA)
            continue;
        if (e == AVERROR_EOF) {
            a->eof = 1;
            if (a->swr) {
                rc = convert(a, NULL, 0, err, errlen);
                if (rc)
                    return rc;
            }
            if (!a->n_frames && a->bad_packets)
                return vt_err(err, errlen, VT_EMEDIA, "'%s': the audio stream cannot be decoded",
                              a->path);
            return 0;
        }
        if (e != AVERROR(EAGAIN) || a->flushed)
            return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot decode the audio", a->path);
        /* A read error ends the stream like EOF: the audio decoded so far is still good. */
        if (av_read_frame(a->fmt, a->pkt) < 0) {
            avcodec_send_packet(a->dec, NULL);
            a->flushed = 1;
            continue;
        }
        if (a->pkt->stream_index == a->idx) {
            e = avcodec_send_packet(a->dec, a->pkt);
            if (e == AVERROR_INVALIDDATA)
                a->bad_packets++;
            else if (e < 0) {
                av_packet_unref(a->pkt);
                return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot decode the audio", a->path);
            }
        }
        av_packet_unref(a->pkt);
    }
}

int vt_audio_read(struct vt_audio *a, int16_t *buf, size_t max, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    while (*n < max) {
        size_t k;
        int rc;

        if (a->q_off[0] < a->q_n[0]) {
            k = a->q_n[0] - a->q_off[0];
            k = k < max - *n ? k : max - *n;
            memcpy(buf + *n, a->q[0] + a->q_off[0], k * sizeof(*buf));
            a->q_off[0] += k;
        } else if (a->silence) {
            k = a->silence < max - *n ? a->silence : max - *n;
            memset(buf + *n, 0, k * sizeof(*buf));
            a->silence -= k;
        } else if (a->q_off[1] < a->q_n[1]) {
            k = a->q_n[1] - a->q_off[1];
            k = k < max - *n ? k : max - *n;
            memcpy(buf + *n, a->q[1] + a->q_off[1], k * sizeof(*buf));
            a->q_off[1] += k;
        } else {
            a->q_n[0] = a->q_n[1] = a->q_off[0] = a->q_off[1] = 0;
            a->piece = 0;
            if (a->eof)
                break;
            rc = fill(a, err, errlen);
            if (rc)
                return rc;
            continue;
        }
        *n += k;
    }
    return 0;
}

int vt_audio_load(const char *path, int16_t **pcm, size_t *n_samples, char *err, size_t errlen)
{
    struct vt_audio *a = NULL;
    int16_t *out = NULL;
    size_t n_out = 0, cap = 0, got = 0;
    int rc;

    *pcm = NULL;
    *n_samples = 0;
    rc = vt_audio_open(path, &a, err, errlen);
    if (rc)
        goto out;
    do {
        vt_grow((void **)&out, &cap, n_out + AUDIO_LOAD_BLOCK, sizeof(*out));
        rc = vt_audio_read(a, out + n_out, AUDIO_LOAD_BLOCK, &got, err, errlen);
        if (rc)
            goto out;
        n_out += got;
    } while (got == AUDIO_LOAD_BLOCK);
    /* The buffer grew by doubling: give back the unused tail (it may be large). */
    if (n_out) {
        *pcm = vt_xrealloc(out, n_out * sizeof(*out));
        out = NULL;
    }
    *n_samples = n_out;
out:
    free(out);
    vt_audio_close(a);
    return rc;
}
