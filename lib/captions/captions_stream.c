/*
 * Reading captions from a media file's first text subtitle stream (SubRip, mov_text,
 * WebVTT, ASS, ...) with FFmpeg's decoders: ASS events reduced to their text, character
 * references decoded, cues without a duration ended by the next one (at most 5 s on).
 * Bitmap subtitles are not read; the error names their codec.
 */
#include "captions/captions.h"
#include "captions/captions_int.h"
#include "media/media.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Embedded subtitle streams                                                           */

/*
 * The text of an ASS event as FFmpeg's decoders give it: "ReadOrder,Layer,Style,Name,
 * MarginL,MarginR,MarginV,Effect,Text" (or a full "Dialogue: Layer,Start,End,...,Text"
 * line from older code), with override blocks {...} removed, \N and \n made line breaks
 * and \h a space.
 */
static void add_ass_text(struct vt_sb *sb, const char *ass)
{
    const char *s = ass;
    int fields = 8, no_close = 0;

    if (!strncmp(s, "Dialogue:", 9)) {
        s += 9;
        fields = 9;
    }
    for (int i = 0; i < fields; i++) {
        s = strchr(s, ',');
        if (!s)
            return;
        s++;
    }
    while (*s) {
        if (*s == '{' && !no_close) {
            const char *e = strchr(s, '}');

            if (e) {
                s = e + 1;
                continue;
            }
            no_close = 1; /* no '}' anywhere after: every later '{' is literal too */
        }
        if (s[0] == '\\' && (s[1] == 'N' || s[1] == 'n')) {
            vt_sb_addc(sb, '\n');
            s += 2;
        } else if (s[0] == '\\' && s[1] == 'h') {
            vt_sb_addc(sb, ' ');
            s += 2;
        } else {
            vt_sb_addc(sb, *s++);
        }
    }
}

/*
 * s with character references decoded: FFmpeg's subrip and mov_text decoders pass "&amp;"
 * through as it was in the SubRip file. Caller frees.
 */
static char *decode_entities(const char *s)
{
    struct vt_sb sb = {0};
    size_t n = strlen(s);

    vt_sb_add(&sb, "", 0);
    for (size_t i = 0; i < n;) {
        uint32_t cp[2];
        int ncp = 0;
        size_t k = s[i] == '&' ? vt_cap_html_charref(s + i, n - i, cp, &ncp, 1) : 0;

        if (k) {
            for (int j = 0; j < ncp; j++) {
                char ub[4];

                /* as in cue text: &nbsp; a space, &lrm; and &rlm; nothing */
                if (cp[j] == 0xa0)
                    vt_sb_addc(&sb, ' ');
                else if (cp[j] != 0x200e && cp[j] != 0x200f)
                    vt_sb_add(&sb, ub, vt_cap_utf8_put(cp[j], ub));
            }
            i += k;
        } else {
            vt_sb_addc(&sb, s[i++]);
        }
    }
    return vt_sb_detach(&sb);
}

/* The first text subtitle stream's index, or -1 with the first bitmap one's codec name. */
static int find_text_stream(AVFormatContext *fmt, const char **bitmap_codec)
{
    *bitmap_codec = NULL;
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        const AVCodecParameters *par = fmt->streams[i]->codecpar;
        const AVCodecDescriptor *desc = avcodec_descriptor_get(par->codec_id);

        if (par->codec_type != AVMEDIA_TYPE_SUBTITLE)
            continue;
        if (desc && (desc->props & AV_CODEC_PROP_TEXT_SUB))
            return (int)i;
        if (!*bitmap_codec)
            *bitmap_codec = avcodec_get_name(par->codec_id);
    }
    return -1;
}

/* The stream's language tag, made safe for the model string; "" when absent or "und". */
static void stream_lang(const AVStream *st, char *buf, size_t n)
{
    const AVDictionaryEntry *e = av_dict_get(st->metadata, "language", NULL, 0);
    size_t k = 0;

    buf[0] = '\0';
    if (!e || !strcmp(e->value, "und"))
        return;
    for (const char *p = e->value; *p && k + 1 < n && k < 15; p++)
        if (is_alpha(*p) || is_digit(*p) || *p == '-' || *p == '_')
            buf[k++] = *p;
    buf[k] = '\0';
}

/* Give cues that had no duration an end: the next later cue's start, at most 5 s on. */
static void fix_open_ends(struct vt_transcript *t)
{
    for (size_t i = 0; i < t->n_cues; i++) {
        struct vt_cue *c = &t->cues[i];
        double end_s = c->start_s + STREAM_CUE_DEFAULT_MS / 1000.0;

        if (c->end_s >= c->start_s)
            continue;
        for (size_t j = i + 1; j < t->n_cues; j++) {
            if (t->cues[j].start_s > c->start_s) {
                end_s = fmin(end_s, t->cues[j].start_s);
                break;
            }
        }
        c->end_s = end_s;
    }
}

/*
 * Append the cue of one decoded subtitle (raw: its rects' text) to out unless it is empty;
 * dur_ms < 0 when unknown. Returns 1 when a cap is reached (nothing appended), else 0.
 */
static int add_stream_cue(struct vt_transcript *out, size_t *cap_cues, const char *raw,
                          int64_t start_ms, int64_t dur_ms, size_t *text_bytes)
{
    char *decoded = decode_entities(raw), *text = vt_cap_tidy_text(decoded);
    struct vt_cue *c;
    int rc = 0;

    if (!*text)
        goto out;
    *text_bytes += strlen(text);
    if (out->n_cues >= VT_CAPTIONS_MAX_CUES || *text_bytes > VT_CAPTIONS_MAX_BYTES) {
        rc = 1;
        goto out;
    }
    vt_grow((void **)&out->cues, cap_cues, out->n_cues + 1, sizeof(*out->cues));
    c = &out->cues[out->n_cues++];
    memset(c, 0, sizeof(*c));
    c->text = text;
    text = NULL;
    c->start_s = (double)start_ms / 1000;
    /* no duration: -1 marks the cue for fix_open_ends */
    c->end_s = dur_ms >= 0 ? (double)(start_ms + (dur_ms < MAX_TIME_MS ? dur_ms : 0)) / 1000 : -1;
out:
    free(decoded);
    free(text);
    return rc;
}

/* A timestamp in ms clamped far enough inside int64 that sums and differences stay exact. */
static int64_t clamp_ms(int64_t t_ms)
{
    return t_ms < -4 * MAX_TIME_MS  ? -4 * MAX_TIME_MS
           : t_ms > 4 * MAX_TIME_MS ? 4 * MAX_TIME_MS
                                    : t_ms;
}

/* The decoder of subtitle stream st, opened, and a packet to read with. */
static int open_decoder(const AVStream *st, const char *media_path, AVCodecContext **dec,
                        AVPacket **pkt, char *err, size_t errlen)
{
    const AVCodec *codec = avcodec_find_decoder(st->codecpar->codec_id);
    char eb[128];
    int e;

    if (!codec)
        return vt_err(err, errlen, VT_SKIP, "no decoder for the %s subtitle stream",
                      avcodec_get_name(st->codecpar->codec_id));
    *dec = avcodec_alloc_context3(codec);
    *pkt = av_packet_alloc();
    if (!*dec || !*pkt)
        return vt_err(err, errlen, VT_EIO, "'%s': out of memory", media_path);
    e = avcodec_parameters_to_context(*dec, st->codecpar);
    if (e >= 0) {
        (*dec)->pkt_timebase = st->time_base;
        e = avcodec_open2(*dec, codec, NULL);
    }
    if (e < 0) {
        av_strerror(e, eb, sizeof(eb));
        return vt_err(err, errlen, VT_EMEDIA, "'%s': cannot open the %s subtitle decoder: %s",
                      media_path, codec->name, eb);
    }
    return 0;
}

/* A decoded subtitle's text: its rects' text (the dialogue of ASS events), one a line. */
static void rects_text(struct vt_sb *sb, const AVSubtitle *sub)
{
    sb->len = 0;
    vt_sb_add(sb, "", 0);
    for (unsigned r = 0; r < sub->num_rects; r++) {
        const AVSubtitleRect *rect = sub->rects[r];

        if (sb->len)
            vt_sb_addc(sb, '\n');
        if (rect->ass)
            add_ass_text(sb, rect->ass);
        else if (rect->text)
            vt_sb_adds(sb, rect->text);
    }
}

/*
 * Decode the packet pkt of stream st (unreferenced here): 1 with the cue's raw text in sb,
 * its start (from origin_ms, within the bounds) and duration (-1 when unknown), 0 when
 * it gives no cue: another stream, no time, undecodable, too late.
 */
static int decode_cue(AVCodecContext *dec, const AVStream *st, AVPacket *pkt, int64_t origin_ms,
                      struct vt_sb *sb, int64_t *start_ms, int64_t *dur_ms)
{
    int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
    AVSubtitle sub;
    int got = 0, e;

    if (pkt->stream_index != st->index || ts == AV_NOPTS_VALUE) {
        av_packet_unref(pkt);
        return 0;
    }
    *start_ms = clamp_ms(av_rescale_q(ts, st->time_base, (AVRational){1, 1000})) - origin_ms;
    *dur_ms = -1;
    if (pkt->duration > 0)
        *dur_ms = clamp_ms(av_rescale_q(pkt->duration, st->time_base, (AVRational){1, 1000}));
    e = avcodec_decode_subtitle2(dec, &sub, &got, pkt);
    av_packet_unref(pkt);
    if (e < 0 || !got)
        return 0; /* one undecodable cue is not worth failing the import */
    rects_text(sb, &sub);
    *start_ms += sub.start_display_time;
    if (*dur_ms < 0 && sub.end_display_time > sub.start_display_time &&
        sub.end_display_time != UINT32_MAX)
        *dur_ms = sub.end_display_time - sub.start_display_time;
    avsubtitle_free(&sub);
    if (*start_ms < 0)
        *start_ms = 0;
    return *start_ms <= MAX_TIME_MS;
}

/* The error for a file without a text subtitle stream. */
static int no_text_stream(const char *bitmap, char *err, size_t errlen)
{
    if (bitmap)
        return vt_err(err, errlen, VT_SKIP, "no text subtitle stream (only bitmap subtitles: %s)",
                      bitmap);
    return vt_err(err, errlen, VT_SKIP, "no text subtitle stream");
}

int vt_captions_from_stream(const char *media_path, struct vt_transcript *out, char *err,
                            size_t errlen)
{
    AVFormatContext *fmt = NULL;
    AVCodecContext *dec = NULL;
    AVPacket *pkt = NULL;
    const char *bitmap;
    AVStream *st;
    struct vt_sb sb = {0};
    size_t cap_cues = 0, text_bytes = 0;
    int64_t origin_ms = 0, start_ms, dur_ms;
    char lang[16];
    int rc, idx;

    memset(out, 0, sizeof(*out));
    rc = vt_media_open(media_path, &fmt, err, errlen);
    if (rc)
        goto out;
    idx = find_text_stream(fmt, &bitmap);
    if (idx < 0) {
        rc = no_text_stream(bitmap, err, errlen);
        goto out;
    }
    st = fmt->streams[idx];
    rc = open_decoder(st, media_path, &dec, &pkt, err, errlen);
    if (rc)
        goto out;
    for (unsigned i = 0; i < fmt->nb_streams; i++)
        fmt->streams[i]->discard = (int)i == idx ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
    if (fmt->start_time != AV_NOPTS_VALUE)
        origin_ms = clamp_ms(av_rescale_q(fmt->start_time, AV_TIME_BASE_Q, (AVRational){1, 1000}));
    /* read errors after the first packet end the stream: keep what was read */
    while (av_read_frame(fmt, pkt) >= 0) {
        if (!decode_cue(dec, st, pkt, origin_ms, &sb, &start_ms, &dur_ms))
            continue;
        if (add_stream_cue(out, &cap_cues, sb.buf, start_ms, dur_ms, &text_bytes)) {
            rc =
                vt_err(err, errlen, VT_EINVAL, "'%s': subtitle stream has more than %s", media_path,
                       text_bytes > VT_CAPTIONS_MAX_BYTES ? "16 MiB of text" : "200000 cues");
            goto out;
        }
    }
    if (!out->n_cues) {
        rc = vt_err(err, errlen, VT_SKIP, "no cues in captions");
        goto out;
    }
    vt_cap_sort_cues(out);
    fix_open_ends(out);
    stream_lang(st, lang, sizeof(lang));
    snprintf(out->model, sizeof(out->model), "captions:embedded %s%s%s%s",
             avcodec_get_name(st->codecpar->codec_id), *lang ? " (" : "", lang, *lang ? ")" : "");
out:
    if (rc)
        vt_transcript_release(out);
    vt_sb_release(&sb);
    av_packet_free(&pkt);
    avcodec_free_context(&dec);
    avformat_close_input(&fmt);
    return rc;
}
