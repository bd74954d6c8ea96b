/*
 * Probe and open media files with FFmpeg, treating every file as hostile: only the
 * containers we support, only the "file" protocol (no nested protocols, no
 * playlists or concat lists reaching other files), bounded probing, a cap on the
 * number of streams and on pixels per frame. Every module that decodes goes
 * through vt_media_open so that these rules live in one place.
 */
#ifndef VT_MEDIA_H
#define VT_MEDIA_H

#include "model/video.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#define VT_MEDIA_MAX_PIXELS     (4096 * 4096) /* 16.7 Mpx: 4K UHD and DCI 4K fit */
#define VT_MEDIA_MAX_STREAMS    16
#define VT_MEDIA_OPEN_STREAMS   1000 /* streams a demuxer may create before we count them */
#define VT_MEDIA_MAX_DURATION_S (24.0 * 3600.0)

/* struct vt_chapter is model/video.h's. */

struct vt_probe {
    char format[32];   /* demuxer name, e.g. "mov,mp4,m4a,3gp,3g2,mj2" */
    double duration_s; /* container's claim, clamped to 0..VT_MEDIA_MAX_DURATION_S; 0 unknown */
    double claimed_s;  /* the same unclamped (past the bound: the rest is not indexed) */
    double start_s;    /* container start time (timestamps are reported relative to it) */
    int has_video, has_audio, has_subtitle;
    int width, height; /* coded size of the main video stream */
    int rotation;      /* clockwise degrees to show it upright: 0, 90, 180, 270 */
    double fps;        /* average frame rate, 0 when unknown */
    char vcodec[32], acodec[32];
    char *title, *language;      /* owned; NULL when absent */
    struct vt_chapter *chapters; /* owned */
    size_t n_chapters;
};

/*
 * Open path for demuxing with the safety rules above and read stream info.
 * On success *fmt is owned by the caller (avformat_close_input).
 */
int vt_media_open(const char *path, AVFormatContext **fmt, char *err, size_t errlen);

/* Probe path into *p (caller releases with vt_probe_release). */
int vt_media_probe(const char *path, struct vt_probe *p, char *err, size_t errlen);
void vt_probe_release(struct vt_probe *p);

/*
 * Open a decoder for the best video stream of fmt with `threads` threads and the
 * pixel cap applied (the decoder refuses frames larger than the cap even if the
 * container lied). Returns 0 and sets *stream_index and *dec (caller frees with
 * avcodec_free_context), VT_ENOTFOUND when there is no video stream.
 */
int vt_media_open_video(AVFormatContext *fmt, int threads, int *stream_index, AVCodecContext **dec,
                        char *err, size_t errlen);

/*
 * Clockwise rotation in degrees (0, 90, 180, 270) that shows stream st upright: its display
 * matrix (as ffmpeg's autorotate and players read it), else its old "rotate" tag; the nearest
 * quarter turn, 0 when neither is there or the tag is no number. Flips are ignored.
 */
int vt_media_rotation(const AVStream *st);

/*
 * Measure the duration by reading every packet's timestamps (no decoding):
 * the container's own claim is not trusted. Bounded by the file's size.
 */
int vt_media_measure_duration(const char *path, double *duration_s, char *err, size_t errlen);

#endif
