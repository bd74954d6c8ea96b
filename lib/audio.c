/*
 * Audio for the stt stage: one pass over the file's best audio stream, every frame
 * downmixed and resampled by libswresample to 16 kHz mono int16 and appended to one
 * buffer. Word timings are only as good as the sample positions, so the buffer follows
 * the stream's timestamps rather than counting samples: silence before a stream that
 * starts late and in gaps, overlapping samples dropped, all relative to the file's start
 * (the container's start time), the time line every stage reports on.
 */
#include "audio.h"

#include "media.h"
#include "util.h"

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

struct audio_dec {
    const char *path;
    AVCodecContext *dec;
    SwrContext *swr;
    AVChannelLayout in_layout;
    int in_rate, in_format;
    double tb, start_s; /* stream time base; file start on the stream's time line (s) */
    double pos_s;       /* time of the next input sample fed to swr, from the file start */
    int16_t *out;
    size_t n_out, cap_out, max_out;
    size_t n_frames;
};

/* Make room for n more output samples (never past max_out). */
static void out_reserve(struct audio_dec *a, size_t n)
{
    vt_grow((void **)&a->out, &a->cap_out, a->n_out + n, sizeof(*a->out));
}

/* Convert nb input samples (NULL in: drain what swr holds) and append them. */
static int convert(struct audio_dec *a, const uint8_t **in, int nb, char *err, size_t errlen)
{
    int room = swr_get_out_samples(a->swr, nb), got;
    uint8_t *dst;

    if (room < 0)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot resample the audio", a->path);
    if (room == 0)
        return 0;
    out_reserve(a, (size_t)room);
    dst = (uint8_t *)(a->out + a->n_out);
    got = swr_convert(a->swr, &dst, room, in, in ? nb : 0);
    if (got < 0)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot resample the audio", a->path);
    a->n_out += (size_t)got;
    if (a->n_out > a->max_out)
        a->n_out = a->max_out;
    return 0;
}

/* Append silence up to output sample `until` (first draining swr, so the order holds). */
static int pad_to(struct audio_dec *a, size_t until, char *err, size_t errlen)
{
    int rc = 0;

    if (a->swr)
        rc = convert(a, NULL, 0, err, errlen);
    if (rc)
        return rc;
    if (until > a->max_out)
        until = a->max_out;
    if (until > a->n_out) {
        out_reserve(a, until - a->n_out);
        memset(a->out + a->n_out, 0, (until - a->n_out) * sizeof(*a->out));
        a->n_out = until;
    }
    return 0;
}

/* (Re)create the resampler when the stream's format, rate or channel layout changes. */
static int swr_setup(struct audio_dec *a, const AVFrame *f, char *err, size_t errlen)
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
static int add_frame(struct audio_dec *a, const AVFrame *f, char *err, size_t errlen)
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

/* Receive every frame the decoder has ready. */
static int drain(struct audio_dec *a, AVFrame *frame, char *err, size_t errlen)
{
    for (;;) {
        int e = avcodec_receive_frame(a->dec, frame), rc;

        if (e == AVERROR(EAGAIN) || e == AVERROR_EOF)
            return 0;
        /* A corrupt frame costs its few milliseconds of audio, not the transcript. */
        if (e == AVERROR_INVALIDDATA)
            continue;
        if (e < 0)
            return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot decode the audio", a->path);
        rc = add_frame(a, frame, err, errlen);
        av_frame_unref(frame);
        if (rc)
            return rc;
    }
}

static int open_decoder(struct audio_dec *a, AVFormatContext *fmt, int *idx, char *err,
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

int vt_audio_load(const char *path, int16_t **pcm, size_t *n_samples, char *err, size_t errlen)
{
    struct audio_dec a = {.path = path};
    AVFormatContext *fmt = NULL;
    AVPacket *pkt = NULL;
    AVFrame *frame = NULL;
    size_t bad_packets = 0;
    int rc, idx, e;

    *pcm = NULL;
    *n_samples = 0;
    a.max_out = (size_t)(VT_MEDIA_MAX_DURATION_S * VT_AUDIO_RATE_HZ);
    rc = vt_media_open(path, &fmt, err, errlen);
    if (rc)
        goto out;
    rc = open_decoder(&a, fmt, &idx, err, errlen);
    if (rc)
        goto out;
    pkt = av_packet_alloc();
    frame = av_frame_alloc();
    if (!pkt || !frame) {
        rc = vt_err(err, errlen, VT_EIO, "'%s': out of memory", path);
        goto out;
    }
    /* A read error ends the stream like EOF: the audio decoded so far is still good. */
    while (a.n_out < a.max_out) {
        if (av_read_frame(fmt, pkt) < 0)
            break;
        if (pkt->stream_index == idx) {
            e = avcodec_send_packet(a.dec, pkt);
            if (e == AVERROR_INVALIDDATA)
                bad_packets++;
            else if (e < 0) {
                rc = vt_err(err, errlen, VT_EMEDIA, "'%s': cannot decode the audio", path);
                goto out;
            }
            rc = drain(&a, frame, err, errlen);
            if (rc)
                goto out;
        }
        av_packet_unref(pkt);
    }
    if (a.n_out < a.max_out) {
        avcodec_send_packet(a.dec, NULL);
        rc = drain(&a, frame, err, errlen);
        if (rc)
            goto out;
    }
    if (a.swr) {
        rc = convert(&a, NULL, 0, err, errlen);
        if (rc)
            goto out;
    }
    if (!a.n_frames && bad_packets) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': the audio stream cannot be decoded", path);
        goto out;
    }
    /* The buffer grew by doubling: give back the unused tail (it may be large). */
    if (a.n_out)
        *pcm = vt_xrealloc(a.out, a.n_out * sizeof(*a.out));
    else
        free(a.out);
    a.out = NULL;
    *n_samples = a.n_out;
out:
    free(a.out);
    swr_free(&a.swr);
    av_channel_layout_uninit(&a.in_layout);
    avcodec_free_context(&a.dec);
    av_frame_free(&frame);
    av_packet_free(&pkt);
    avformat_close_input(&fmt);
    return rc;
}
