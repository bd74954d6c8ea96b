/*
 * Probing and opening media files safely. FFmpeg is powerful enough to be
 * dangerous with untrusted input: a "playlist" can name other files or URLs, a
 * header can declare absurd sizes or durations. Everything that opens media goes
 * through vt_media_open, which allows only the demuxers below and only the file
 * protocol, bounds probing, streams and pixels, and never trusts a duration.
 */
#include "media/media.h"

#include "base/util.h"

#include <libavutil/display.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * Containers a video library meets in practice. Anything else, in particular
 * hls, concat, image2 sequences, ffmetadata, tee and the like, is refused.
 */
static const char allowed_demuxers[] =
    "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,mpegts,mpeg,flv,ogg,wav,mp3,flac,aac,asf,mjpeg,"
    "h264,hevc,m4v,w64,aiff,mpegvideo";

static int demuxer_allowed(const char *name)
{
    /* name may itself be a comma list (e.g. "mov,mp4,m4a,3gp,3g2,mj2"): all must match */
    const char *p = name;

    while (*p) {
        size_t n = strcspn(p, ",");
        const char *a = allowed_demuxers;
        int found = 0;

        while (*a) {
            size_t m = strcspn(a, ",");

            if (m == n && !strncmp(a, p, n))
                found = 1;
            a += m;
            if (*a)
                a++;
        }
        if (!found)
            return 0;
        p += n;
        if (*p)
            p++;
    }
    return 1;
}

static const char *averr(int e, char *buf, size_t n)
{
    av_strerror(e, buf, n);
    return buf;
}

/*
 * FFmpeg logs to stderr by default; the library never prints, and every failure that
 * matters comes back as our own one-line message. Set once, before the first file is
 * opened (every FFmpeg use starts here), so commands that never touch media never load it.
 */
static void quiet_ffmpeg(void)
{
    av_log_set_level(getenv("VIDTHEQUE_FFMPEG_LOG") ? AV_LOG_INFO : AV_LOG_QUIET);
}

/* The error for avformat_open_input's failure e on path. */
static int open_error(int e, const char *path, char *err, size_t errlen)
{
    char eb[128];

    if (e == AVERROR_INVALIDDATA || e == AVERROR(EINVAL) || e == AVERROR_DEMUXER_NOT_FOUND)
        return vt_err(err, errlen, VT_EMEDIA,
                      "'%s': not a supported media file (unknown or refused container)", path);
    if (e == AVERROR_EOF)
        return vt_err(err, errlen, VT_EMEDIA, "'%s': ends too early (truncated?)", path);
    if (e == AVERROR(ENOMEM))
        return vt_err(err, errlen, VT_EMEDIA,
                      "'%s': cannot open: too many streams (more than %d, at most %d), "
                      "or out of memory",
                      path, VT_MEDIA_OPEN_STREAMS, VT_MEDIA_MAX_STREAMS);
    /* a read error of the disk or the network mount may pass: retried (VT_EIO) */
    return vt_err(err, errlen, e == AVERROR(EIO) ? VT_EIO : VT_EMEDIA, "'%s': cannot open: %s",
                  path, averr(e, eb, sizeof(eb)));
}

/* Open path's container with our caps and allow-lists, streams not yet probed. */
static int open_input(const char *path, AVFormatContext **fmtp, char *err, size_t errlen)
{
    AVFormatContext *fmt = avformat_alloc_context();
    AVDictionary *opts = NULL;
    char *url;
    int e;

    if (!fmt)
        return vt_err(err, errlen, VT_EIO, "'%s': out of memory", path);
    /* the demuxer fails with ENOMEM past max_streams; with FFmpeg's own default cap
     * a file over ours is opened, and refused below with its count */
    fmt->max_streams = VT_MEDIA_OPEN_STREAMS;
    fmt->probesize = 8 << 20;
    fmt->max_analyze_duration = 10 * AV_TIME_BASE;
    fmt->format_probesize = 1 << 20;
    av_dict_set(&opts, "protocol_whitelist", "file", 0);
    av_dict_set(&opts, "format_whitelist", allowed_demuxers, 0);
    /* mov: never follow data references to other files */
    av_dict_set(&opts, "enable_drefs", "0", 0);
    av_dict_set(&opts, "use_absolute_path", "0", 0);
    /* "file:" prefix so a path like "concat:a|b" is never parsed as a protocol */
    url = vt_xasprintf("file:%s", path);
    e = avformat_open_input(&fmt, url, NULL, &opts);
    free(url);
    av_dict_free(&opts);
    if (e < 0) /* fmt is freed by avformat_open_input on failure */
        return open_error(e, path, err, errlen);
    *fmtp = fmt;
    return 0;
}

/* The error for a video stream whose frame is over the pixel cap (with negative_too, or has
 * a negative size); the last such stream is named. */
static int check_frame_sizes(const AVFormatContext *fmt, const char *path, int negative_too,
                             char *err, size_t errlen)
{
    int rc = 0;

    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        const AVCodecParameters *par = fmt->streams[i]->codecpar;

        if (par->codec_type == AVMEDIA_TYPE_VIDEO &&
            ((int64_t)par->width * par->height > VT_MEDIA_MAX_PIXELS ||
             (negative_too && (par->width < 0 || par->height < 0))))
            rc = vt_err(err, errlen, VT_EMEDIA, "'%s': video frame %dx%d exceeds the %d pixel cap",
                        path, par->width, par->height, VT_MEDIA_MAX_PIXELS);
    }
    return rc;
}

int vt_media_open(const char *path, AVFormatContext **out, char *err, size_t errlen)
{
    static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
    AVFormatContext *fmt = NULL;
    char eb[128];
    int rc, e;

    pthread_once(&quiet_once, quiet_ffmpeg);
    *out = NULL;
    if (!path || !*path)
        return vt_err(err, errlen, VT_EINVAL, "empty media path");
    rc = open_input(path, &fmt, err, errlen);
    if (rc)
        return rc;
    if (!fmt->iformat || !demuxer_allowed(fmt->iformat->name)) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': container '%s' is not supported", path,
                    fmt->iformat ? fmt->iformat->name : "?");
        goto out;
    }
    if (fmt->nb_streams > VT_MEDIA_MAX_STREAMS) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': too many streams (%u, at most %d)", path,
                    fmt->nb_streams, VT_MEDIA_MAX_STREAMS);
        goto out;
    }
    rc = check_frame_sizes(fmt, path, 1, err, errlen);
    if (rc)
        goto out;
    /* streams found while probing (MPEG-TS) count against our own cap */
    fmt->max_streams = VT_MEDIA_MAX_STREAMS;
    e = avformat_find_stream_info(fmt, NULL);
    if (e == AVERROR(ENOMEM) && fmt->nb_streams >= VT_MEDIA_MAX_STREAMS) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': too many streams (more than %d)", path,
                    VT_MEDIA_MAX_STREAMS);
        goto out;
    }
    if (e < 0) {
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': cannot read stream info: %s", path,
                    averr(e, eb, sizeof(eb)));
        goto out;
    }
    rc = check_frame_sizes(fmt, path, 0, err, errlen);
    if (rc)
        goto out;
    *out = fmt;
    fmt = NULL;
out:
    avformat_close_input(&fmt);
    return rc;
}

/* Clockwise degrees r as 0, 90, 180 or 270 (the nearest quarter turn); 0 when r is no number. */
static int quarter_turns(double r)
{
    long d;

    if (!isfinite(r))
        return 0;
    d = lround(fmod(r, 360.0) / 90.0) * 90 % 360;
    return (int)(d < 0 ? d + 360 : d);
}

int vt_media_rotation(const AVStream *st)
{
    const uint8_t *m = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    const AVDictionaryEntry *tag;
    char *end;
    double r;

    /* av_display_rotation_get: counter-clockwise degrees; we want clockwise */
    if (m)
        return quarter_turns(-av_display_rotation_get((const int32_t *)m));
    /*
     * No display matrix: the old "rotate" tag, clockwise degrees, which FFmpeg before 5.0
     * obeyed in any container and which Matroska files remuxed by it still carry as ROTATE
     * (av_dict_get ignores case). Anything but a plain number is no rotation.
     */
    tag = av_dict_get(st->metadata, "rotate", NULL, 0);
    if (!tag || !tag->value)
        return 0;
    r = strtod(tag->value, &end);
    if (end == tag->value || *end)
        return 0;
    return quarter_turns(r);
}

int vt_media_open_video(AVFormatContext *fmt, int threads, int *stream_index, AVCodecContext **out,
                        char *err, size_t errlen)
{
    const AVCodec *codec = NULL;
    AVCodecContext *dec = NULL;
    char eb[128];
    int idx, e;

    *out = NULL;
    idx = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (idx < 0)
        return vt_err(err, errlen, VT_ENOTFOUND, "no video stream");
    if (fmt->streams[idx]->disposition & AV_DISPOSITION_ATTACHED_PIC)
        return vt_err(err, errlen, VT_ENOTFOUND, "no video stream (only a cover picture)");
    if (!codec)
        return vt_err(err, errlen, VT_EMEDIA, "no decoder for the video stream");
    dec = avcodec_alloc_context3(codec);
    if (!dec)
        return vt_err(err, errlen, VT_EIO, "out of memory");
    e = avcodec_parameters_to_context(dec, fmt->streams[idx]->codecpar);
    if (e < 0)
        goto fail;
    dec->max_pixels = VT_MEDIA_MAX_PIXELS;
    dec->thread_count = threads;
    dec->pkt_timebase = fmt->streams[idx]->time_base;
    e = avcodec_open2(dec, codec, NULL);
    if (e < 0)
        goto fail;
    *stream_index = idx;
    *out = dec;
    return 0;
fail:
    avcodec_free_context(&dec);
    return vt_err(err, errlen, VT_EMEDIA, "cannot open the video decoder: %s",
                  averr(e, eb, sizeof(eb)));
}

/*
 * Decode the first frame of the video stream: a header can lie about the frame
 * size (the decoder's pixel cap catches it) or describe a stream that does not
 * decode at all. Reads a bounded number of packets.
 */
static int first_frame_ok(AVFormatContext *fmt, const char *path, int *w, int *h, char *err,
                          size_t errlen)
{
    AVCodecContext *dec = NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    int idx, rc, got = 0, e = 0;

    if (!pkt || !frame) {
        rc = vt_err(err, errlen, VT_EIO, "out of memory");
        goto out;
    }
    rc = vt_media_open_video(fmt, 1, &idx, &dec, err, errlen);
    if (rc)
        goto out;
    for (int n = 0; n < 2000 && !got; n++) {
        e = av_read_frame(fmt, pkt);
        if (e < 0)
            break;
        if (pkt->stream_index == idx) {
            e = avcodec_send_packet(dec, pkt);
            if (e >= 0 || e == AVERROR(EAGAIN))
                got = avcodec_receive_frame(dec, frame) >= 0;
        }
        av_packet_unref(pkt);
    }
    if (!got && avcodec_send_packet(dec, NULL) >= 0)
        got = avcodec_receive_frame(dec, frame) >= 0;
    if (!got) {
        rc = vt_err(err, errlen, VT_EMEDIA,
                    "'%s': the video stream does not decode (corrupt, or frames over the %d "
                    "pixel cap)",
                    path, VT_MEDIA_MAX_PIXELS);
        goto out;
    }
    *w = frame->width;
    *h = frame->height;
out:
    av_frame_free(&frame);
    av_packet_free(&pkt);
    avcodec_free_context(&dec);
    return rc;
}

static char *dict_dup(AVDictionary *d, const char *key)
{
    AVDictionaryEntry *e = av_dict_get(d, key, NULL, 0);

    return e && e->value && *e->value ? vt_xstrdup(e->value) : NULL;
}

int vt_media_probe(const char *path, struct vt_probe *p, char *err, size_t errlen)
{
    AVFormatContext *fmt = NULL;
    int rc, vi, ai;

    memset(p, 0, sizeof(*p));
    rc = vt_media_open(path, &fmt, err, errlen);
    if (rc)
        return rc;
    snprintf(p->format, sizeof(p->format), "%s", fmt->iformat->name);
    if (fmt->duration > 0 && fmt->duration != AV_NOPTS_VALUE)
        p->duration_s = fmin((double)fmt->duration / AV_TIME_BASE, VT_MEDIA_MAX_DURATION_S);
    if (fmt->duration > 0 && fmt->duration != AV_NOPTS_VALUE)
        p->claimed_s = (double)fmt->duration / AV_TIME_BASE;
    if (fmt->start_time != AV_NOPTS_VALUE)
        p->start_s = (double)fmt->start_time / AV_TIME_BASE;
    vi = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (vi >= 0 && !(fmt->streams[vi]->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
        const AVStream *st = fmt->streams[vi];
        AVRational fr = st->avg_frame_rate.num ? st->avg_frame_rate : st->r_frame_rate;

        p->has_video = 1;
        p->width = st->codecpar->width;
        p->height = st->codecpar->height;
        p->rotation = vt_media_rotation(st);
        if (fr.num > 0 && fr.den > 0)
            p->fps = av_q2d(fr);
        snprintf(p->vcodec, sizeof(p->vcodec), "%s", avcodec_get_name(st->codecpar->codec_id));
    }
    ai = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, NULL, 0);
    if (ai >= 0) {
        p->has_audio = 1;
        snprintf(p->acodec, sizeof(p->acodec), "%s",
                 avcodec_get_name(fmt->streams[ai]->codecpar->codec_id));
        p->language = dict_dup(fmt->streams[ai]->metadata, "language");
    }
    for (unsigned i = 0; i < fmt->nb_streams; i++)
        if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_SUBTITLE)
            p->has_subtitle = 1;
    if (p->has_video) {
        int w = 0, h = 0;

        rc = first_frame_ok(fmt, path, &w, &h, err, errlen);
        if (rc) {
            avformat_close_input(&fmt);
            vt_probe_release(p);
            return rc;
        }
        if (p->width <= 0 || p->height <= 0) {
            p->width = w;
            p->height = h;
        }
    }
    p->title = dict_dup(fmt->metadata, "title");
    if (!p->language)
        p->language = dict_dup(fmt->metadata, "language");
    if (p->language && !strcmp(p->language, "und")) {
        free(p->language);
        p->language = NULL;
    }
    if (fmt->nb_chapters > 0) {
        unsigned n = fmt->nb_chapters > 1000 ? 1000 : fmt->nb_chapters;

        p->chapters = vt_xcalloc(n, sizeof(*p->chapters));
        for (unsigned i = 0; i < n; i++) {
            const AVChapter *c = fmt->chapters[i];
            double tb = av_q2d(c->time_base);

            p->chapters[i].start_s = fmax(0, (double)c->start * tb - p->start_s);
            p->chapters[i].end_s = fmax(p->chapters[i].start_s, (double)c->end * tb - p->start_s);
            p->chapters[i].title = dict_dup(c->metadata, "title");
        }
        p->n_chapters = n;
    }
    avformat_close_input(&fmt);
    return 0;
}

void vt_probe_release(struct vt_probe *p)
{
    if (!p)
        return;
    free(p->title);
    free(p->language);
    for (size_t i = 0; i < p->n_chapters; i++)
        free(p->chapters[i].title);
    free(p->chapters);
    memset(p, 0, sizeof(*p));
}

int vt_media_measure_duration(const char *path, double *duration_s, char *err, size_t errlen)
{
    AVFormatContext *fmt = NULL;
    AVPacket *pkt = NULL;
    double first = INFINITY, last = -INFINITY;
    int rc, e;

    *duration_s = 0;
    rc = vt_media_open(path, &fmt, err, errlen);
    if (rc)
        return rc;
    pkt = av_packet_alloc();
    if (!pkt) {
        rc = vt_err(err, errlen, VT_EIO, "out of memory");
        goto out;
    }
    while ((e = av_read_frame(fmt, pkt)) >= 0) {
        const AVStream *st = fmt->streams[pkt->stream_index];
        int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;

        if (ts != AV_NOPTS_VALUE && (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO ||
                                     st->codecpar->codec_type == AVMEDIA_TYPE_AUDIO)) {
            double tb = av_q2d(st->time_base);
            double t0 = (double)ts * tb,
                   t1 = t0 + (double)(pkt->duration > 0 ? pkt->duration : 0) * tb;

            if (t0 < first)
                first = t0;
            if (t1 > last)
                last = t1;
        }
        av_packet_unref(pkt);
    }
    if (e != AVERROR_EOF && !(last > first)) {
        char eb[128];

        av_strerror(e, eb, sizeof(eb));
        rc = vt_err(err, errlen, VT_EMEDIA, "'%s': cannot read packets: %s", path, eb);
        goto out;
    }
    if (last > first)
        *duration_s = fmin(last - first, VT_MEDIA_MAX_DURATION_S);
out:
    av_packet_free(&pkt);
    avformat_close_input(&fmt);
    return rc;
}
