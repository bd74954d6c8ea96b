/*
 * Reading what yt-dlp says about a URL (its -J output or a .info.json file) and rebuilding
 * the part of it that goes back to `yt-dlp --load-info-json`. Everything yt-dlp prints is
 * controlled by the site it read, so the reader keeps only the fields the library uses,
 * each checked and cleaned (valid UTF-8, no control characters, bounded lengths and
 * counts, http(s) URLs only), and the rebuilt JSON is an allowlist of fields and formats
 * rather than an edited copy of the input.
 */
#ifndef VT_YTINFO_H
#define VT_YTINFO_H

#include <stddef.h>

struct vt_chapter;

/* Larger input is refused: a long YouTube video's info is a few MiB. */
#define VT_YTINFO_MAX_BYTES    (64u << 20)
#define VT_YTINFO_MAX_CHAPTERS 2000
#define VT_YTINFO_MAX_SUBS     2000
#define VT_YTINFO_MAX_ENTRIES  100000
#define VT_YTINFO_MAX_URL      4096

/* One caption track the site offers. */
struct vt_yt_sub {
    char *lang;     /* "en", "en-US", "pt-BR", "en-orig" ... ([A-Za-z0-9_-], at most 32 chars) */
    int automatic;  /* 1 when from automatic_captions, 0 from subtitles */
    char *ext;      /* the best format we read: "json3" preferred, else "vtt" */
    char *url;      /* http(s) only */
    int translated; /* a machine translation (YouTube: "tlang=" in the URL) */
    char *name;     /* the site's name for the track ("English (auto-generated)"), or NULL */
};

/* One entry of a playlist or channel (flat listing). */
struct vt_yt_entry {
    char *url;   /* http(s) URL of the entry */
    char *id;    /* platform id or NULL */
    char *title; /* may be NULL */
};

struct vt_ytinfo {
    int is_playlist;   /* _type playlist or multi_video */
    int is_live;       /* live now or not yet started: there is no whole video to fetch */
    char *id;          /* platform id (cleaned; NULL if missing) */
    char *extractor;   /* extractor_key lowercased, e.g. "youtube", "generic"; NULL if missing */
    char *title;       /* NULL if missing, like every string below */
    char *channel;     /* channel, else uploader */
    char *published;   /* "YYYY-MM-DD" from upload_date, else release_date, else timestamp */
    char *language;    /* "language" field; else the only manual subtitles' language; else NULL */
    char *description; /* keeps its line breaks */
    char *webpage_url; /* http(s) only */
    char *thumbnail;   /* best http(s) thumbnail URL */
    double duration_s; /* 0 when unknown or absurd (negative, more than 7 days) */
    struct vt_chapter *chapters; /* sorted, within the duration, titles cleaned */
    size_t n_chapters;
    struct vt_yt_sub *subs; /* manual tracks first, each kind in the input's order */
    size_t n_subs;
    struct vt_yt_entry *entries; /* only for playlists, in the order given */
    size_t n_entries;
};

/*
 * Parse len bytes of yt-dlp JSON (-J output or an .info.json file). Returns 0 with *out
 * filled (release it with vt_ytinfo_release), or VT_EINVAL with one line in err: not JSON,
 * not an object, larger than VT_YTINFO_MAX_BYTES. Invalid UTF-8 inside strings is repaired,
 * not refused. On failure *out is empty.
 */
int vt_ytinfo_parse(const char *data, size_t len, struct vt_ytinfo *out, char *err, size_t errlen);
/* Free what info owns and empty it; NULL and an empty info are fine. */
void vt_ytinfo_release(struct vt_ytinfo *info);

/*
 * The caption track to use for a video in language lang (NULL: unknown). With lang: the
 * manual track in that language (exact, then the same primary subtag: "en-GB" for "en"),
 * then an automatic one in that language that is not a machine translation (on YouTube the
 * original track is "<lang>-orig" or the one without "tlang=" in its URL). With lang NULL:
 * English manual, then the only manual track, then English automatic (not translated).
 * NULL when none fits. Borrowed from info.
 */
const struct vt_yt_sub *vt_ytinfo_pick_sub(const struct vt_ytinfo *info, const char *lang);

/*
 * The JSON to give `yt-dlp --load-info-json`, rebuilt from a single video's info data:
 * id, title, extractor, extractor_key, webpage_url, duration, _type "video", the formats
 * whose url is http(s) and protocol http, https, m3u8_native or http_dash_segments (DRM
 * formats left out) with only harmless keys, and the caption track keep_sub (may be NULL)
 * as the only entry of subtitles or automatic_captions. Returns 0 with *json (caller frees
 * with free()), or VT_EINVAL with one line in err: not a single video, no id, no usable
 * format, or what vt_ytinfo_parse refuses.
 */
int vt_ytinfo_clean_json(const char *data, size_t len, const struct vt_yt_sub *keep_sub,
                         char **json, char *err, size_t errlen);

/*
 * Whether url is acceptable to hand to yt-dlp: scheme http or https (any case), a host,
 * at most VT_YTINFO_MAX_URL bytes, valid UTF-8, no control characters or spaces, not
 * starting with '-'. Returns 0, or VT_EINVAL with one line saying why in err.
 */
int vt_url_check(const char *url, char *err, size_t errlen);

#endif
