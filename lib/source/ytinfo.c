/*
 * Reading yt-dlp's info JSON and rebuilding the part of it that yt-dlp loads back. The
 * site behind a URL writes most of what yt-dlp prints, so every field is taken only when
 * it has the type and shape yt-dlp documents (extractor/common.py's info-dict docstring),
 * strings are cleaned and capped, and counts are bounded; the input itself is bounded by
 * size, and jansson bounds its nesting depth (JSON_PARSER_MAX_DEPTH). Nothing here walks
 * the JSON recursively: only the known paths are read.
 */
#include "source/ytinfo.h"

#include "media/media.h"
#include "base/util.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_TITLE       1000
#define MAX_DESCRIPTION 20000
#define MAX_ID          256
#define MAX_LANG        32
#define MAX_SHORT       256 /* codec names, notes and other short format strings */
#define MAX_DURATION_S  (7 * 86400.0)
/* Numbers in a format beyond this are nonsense; yt-dlp multiplies some (tbr * duration). */
#define MAX_FORMAT_NUM 1e15
#define MAX_FORMATS    1000
#define MAX_FRAGMENTS  500000
#define MAX_HEADERS    64

/* ---------------------------------------------------------------------------------- */
/* Cleaning values                                                                     */

/*
 * Characters that change how text around them shows on a terminal or page rather than
 * being text: C0 and C1 controls, DEL, and the bidirectional embeddings, overrides and
 * isolates (a title could otherwise reorder what is printed after it).
 */
static int is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * The cleaned text of JSON string v: valid UTF-8 (repaired), control characters removed
 * (tabs made spaces; '\n' kept when keep_nl, else made a space), NUL bytes removed, spaces
 * trimmed at both ends, at most cap bytes (cut at a character boundary). NULL when v is not
 * a string or nothing is left. Caller frees.
 */
static char *clean_text(const json_t *v, size_t cap, int keep_nl)
{
    const unsigned char *p;
    size_t n, start;
    struct vt_sb sb = {0};

    if (!json_is_string(v))
        return NULL;
    p = (const unsigned char *)json_string_value(v);
    n = json_string_length(v);
    vt_sb_add(&sb, "", 0);
    while (n) {
        uint32_t cp = 0;
        size_t k = vt_utf8_decode((const char *)p, n, &cp);
        const char *rep = NULL;
        size_t rep_len = 0;

        if (!k) {
            rep = "\xef\xbf\xbd";
            rep_len = 3;
            k = 1;
        } else if (cp == '\n' && keep_nl) {
            rep = "\n";
            rep_len = 1;
        } else if (cp == '\t' || cp == '\n') {
            rep = " ";
            rep_len = 1;
        } else if (!is_control(cp)) {
            rep = (const char *)p;
            rep_len = k;
        }
        if (rep_len && sb.len + rep_len > cap)
            break;
        if (rep_len)
            vt_sb_add(&sb, rep, rep_len);
        p += k;
        n -= k;
    }
    while (sb.len && (sb.buf[sb.len - 1] == ' ' || sb.buf[sb.len - 1] == '\n'))
        sb.buf[--sb.len] = '\0';
    for (start = 0; start < sb.len && (sb.buf[start] == ' ' || sb.buf[start] == '\n'); start++)
        ;
    if (start == sb.len) {
        vt_sb_release(&sb);
        return NULL;
    }
    memmove(sb.buf, sb.buf + start, sb.len - start + 1);
    return vt_sb_detach(&sb);
}

/* Copy of JSON string v when it passes vt_url_check, else NULL. Caller frees. */
static char *clean_url(const json_t *v)
{
    const char *s = json_string_value(v);

    if (!s || strlen(s) != json_string_length(v) || vt_url_check(s, NULL, 0))
        return NULL;
    return vt_xstrdup(s);
}

/* Whether s is a language tag as we accept it: 1..32 of [A-Za-z0-9_-]. */
static int lang_ok(const char *s, size_t n)
{
    if (!n || n > MAX_LANG)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
            return 0;
    return 1;
}

/* JSON number v into *out when finite (jansson never makes NaN, but be sure). */
static int get_num(const json_t *v, double *out)
{
    double d;

    if (!json_is_number(v))
        return 0;
    d = json_number_value(v);
    if (!isfinite(d))
        return 0;
    *out = d;
    return 1;
}

/* Whether JSON value v counts as true the way Python's bool() would see it. */
static int truthy(const json_t *v)
{
    double d;

    if (!v || json_is_null(v) || json_is_false(v))
        return 0;
    if (get_num(v, &d))
        return d != 0;
    if (json_is_string(v))
        return json_string_length(v) > 0;
    return 1;
}

/* s lowercased when it is 1..64 of [A-Za-z0-9_:.-], else NULL. Caller frees. */
static char *extractor_name(const json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;
    char *r;

    if (!n || n > 64 || n != json_string_length(v))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || strchr("_:.-", s[i])))
            return NULL;
    r = vt_xstrdup(s);
    for (char *p = r; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return r;
}

/* "YYYYMMDD" (upload_date, release_date) as "YYYY-MM-DD", or NULL when not a plausible date. */
static char *date8(const json_t *v)
{
    const char *s = json_string_value(v);
    int month, day;

    if (!s || strlen(s) != 8 || json_string_length(v) != 8)
        return NULL;
    for (int i = 0; i < 8; i++)
        if (s[i] < '0' || s[i] > '9')
            return NULL;
    month = (s[4] - '0') * 10 + (s[5] - '0');
    day = (s[6] - '0') * 10 + (s[7] - '0');
    if (!strncmp(s, "0000", 4) || month < 1 || month > 12 || day < 1 || day > 31)
        return NULL;
    return vt_xasprintf("%.4s-%.2s-%.2s", s, s + 4, s + 6);
}

/* A Unix time (timestamp) as "YYYY-MM-DD" in UTC, for years 1900 to 9999, else NULL. */
static char *date_from_timestamp(const json_t *v)
{
    double t;
    time_t tt;
    struct tm tm;
    char buf[16];

    if (!get_num(v, &t) || t < -2208988800.0 || t > 253402300799.0)
        return NULL;
    tt = (time_t)floor(t);
    if (!gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d", &tm))
        return NULL;
    return vt_xstrdup(buf);
}

/* ---------------------------------------------------------------------------------- */
/* Loading                                                                             */

/* The JSON object in data, or NULL with the reason in err. Caller decrefs. */
static json_t *load_object(const char *data, size_t len, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root;
    char *buf, *msg;
    size_t n;

    if (len > VT_YTINFO_MAX_BYTES) {
        vt_err(err, errlen, VT_EINVAL, "info JSON too large (%zu bytes, limit %u MiB)", len,
               VT_YTINFO_MAX_BYTES >> 20);
        return NULL;
    }
    buf = vt_json_repair(data ? data : "", data ? len : 0, &n);
    /* numbers as doubles: an integer too large for 64 bits must not refuse the document */
    root = json_loadb(buf, n, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &jerr);
    free(buf);
    if (!root) {
        /* jansson quotes the input near the error: clean it and keep it on one line */
        msg = vt_utf8_clean(jerr.text);
        for (char *q = msg; *q; q++)
            if (*q == '\n' || *q == '\t')
                *q = ' ';
        vt_err(err, errlen, VT_EINVAL, "info JSON: line %d: %s", jerr.line, msg);
        free(msg);
        return NULL;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        vt_err(err, errlen, VT_EINVAL, "info JSON is not an object");
        return NULL;
    }
    return root;
}

/* ---------------------------------------------------------------------------------- */
/* Parsing                                                                             */

struct chapter_in {
    double start_s, end_s; /* end_s < 0: not given */
    size_t index;
    char *title;
};

static int cmp_chapter(const void *a, const void *b)
{
    const struct chapter_in *x = a, *y = b;

    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void parse_chapters(const json_t *arr, struct vt_ytinfo *out)
{
    struct chapter_in *in;
    size_t n = 0, i, k;
    json_t *c;

    if (!json_is_array(arr) || !json_array_size(arr))
        return;
    in = vt_xcalloc(json_array_size(arr) < VT_YTINFO_MAX_CHAPTERS ? json_array_size(arr)
                                                                  : VT_YTINFO_MAX_CHAPTERS,
                    sizeof(*in));
    json_array_foreach(arr, i, c)
    {
        double start_s, end_s = -1;

        if (n == VT_YTINFO_MAX_CHAPTERS)
            break;
        if (!get_num(json_object_get(c, "start_time"), &start_s))
            continue;
        if (start_s < 0)
            start_s = 0;
        if (start_s > MAX_DURATION_S || (out->duration_s > 0 && start_s >= out->duration_s))
            continue;
        if (!get_num(json_object_get(c, "end_time"), &end_s) || end_s < start_s)
            end_s = -1;
        in[n++] = (struct chapter_in){start_s, end_s, i,
                                      clean_text(json_object_get(c, "title"), MAX_TITLE, 0)};
    }
    qsort(in, n, sizeof(*in), cmp_chapter);
    out->chapters = n ? vt_xcalloc(n, sizeof(*out->chapters)) : NULL;
    for (k = 0; k < n; k++) {
        double limit = out->duration_s > 0 ? out->duration_s : MAX_DURATION_S;
        double end_s = in[k].end_s;

        /* a chapter without an end runs until the next one starts, or the video ends */
        if (end_s < 0)
            end_s = k + 1 < n && in[k + 1].start_s > in[k].start_s ? in[k + 1].start_s
                    : out->duration_s > 0                          ? out->duration_s
                                                                   : in[k].start_s;
        if (end_s > limit)
            end_s = limit;
        out->chapters[k] = (struct vt_chapter){in[k].start_s, end_s, in[k].title};
    }
    out->n_chapters = n;
    free(in);
}

/* Whether a caption URL asks YouTube for a machine translation (a "tlang" parameter). */
static int url_translated(const char *url)
{
    const char *q = strchr(url, '?');

    for (; q; q = strchr(q + 1, '&'))
        if (!strncmp(q + 1, "tlang=", 6))
            return 1;
    return 0;
}

/* The tracks of one subtitles or automatic_captions object: {lang: [{ext, url, name}]}. */
static void parse_subs(const json_t *obj, int automatic, struct vt_ytinfo *out, size_t *cap)
{
    const char *lang;
    json_t *list;

    if (!json_is_object(obj))
        return;
    json_object_foreach((json_t *)obj, lang, list)
    {
        const json_t *best = NULL;
        int best_rank = 0;
        size_t i;
        json_t *f;
        struct vt_yt_sub *s;

        if (out->n_subs == VT_YTINFO_MAX_SUBS)
            break;
        if (!lang_ok(lang, strlen(lang)) || !json_is_array(list))
            continue;
        /* json3 has word timings for automatic captions; vtt is the fallback */
        json_array_foreach(list, i, f)
        {
            const char *ext = json_string_value(json_object_get(f, "ext"));
            int rank = !ext ? 0 : !strcmp(ext, "json3") ? 2 : !strcmp(ext, "vtt") ? 1 : 0;
            char *url;

            if (rank <= best_rank)
                continue;
            url = clean_url(json_object_get(f, "url"));
            if (!url)
                continue;
            free(url);
            best = f;
            best_rank = rank;
        }
        if (!best)
            continue;
        vt_grow((void **)&out->subs, cap, out->n_subs + 1, sizeof(*out->subs));
        s = &out->subs[out->n_subs++];
        s->lang = vt_xstrdup(lang);
        s->automatic = automatic;
        s->ext = vt_xstrdup(best_rank == 2 ? "json3" : "vtt");
        s->url = clean_url(json_object_get(best, "url"));
        s->translated = url_translated(s->url);
        s->name = clean_text(json_object_get(best, "name"), MAX_TITLE, 0);
    }
}

/* A bare YouTube video id: 11 of [A-Za-z0-9_-]. */
static int youtube_id_ok(const char *s)
{
    return s && strlen(s) == 11 && lang_ok(s, 11);
}

static void parse_entries(const json_t *arr, struct vt_ytinfo *out)
{
    size_t i, cap = 0;
    json_t *e;

    if (!json_is_array(arr))
        return;
    json_array_foreach(arr, i, e)
    {
        const char *type = json_string_value(json_object_get(e, "_type"));
        const char *ie_key = json_string_value(json_object_get(e, "ie_key"));
        const char *bare = json_string_value(json_object_get(e, "url"));
        int reference = !type || !strcmp(type, "url") || !strcmp(type, "url_transparent");
        char *url;
        struct vt_yt_entry *y;

        if (out->n_entries == VT_YTINFO_MAX_ENTRIES)
            break;
        if (!json_is_object(e))
            continue;
        /* a reference's url is the entry's page; a full video's url is its media */
        url = clean_url(json_object_get(e, reference ? "url" : "webpage_url"));
        if (!url)
            url = clean_url(json_object_get(e, reference ? "webpage_url" : "url"));
        if (!url && ie_key && !strcmp(ie_key, "Youtube")) {
            if (!youtube_id_ok(bare))
                bare = json_string_value(json_object_get(e, "id"));
            if (youtube_id_ok(bare))
                url = vt_xasprintf("https://www.youtube.com/watch?v=%s", bare);
        }
        if (!url)
            continue;
        vt_grow((void **)&out->entries, &cap, out->n_entries + 1, sizeof(*out->entries));
        y = &out->entries[out->n_entries++];
        y->url = url;
        y->id = clean_text(json_object_get(e, "id"), MAX_ID, 0);
        y->title = clean_text(json_object_get(e, "title"), MAX_TITLE, 0);
    }
}

/* The thumbnail field, else the best of thumbnails as yt-dlp ranks them (last wins ties). */
static char *parse_thumbnail(const json_t *root)
{
    char *best = clean_url(json_object_get(root, "thumbnail"));
    double key[3] = {0};
    size_t i;
    json_t *t;

    if (best)
        return best;
    json_array_foreach(json_object_get(root, "thumbnails"), i, t)
    {
        static const char *const fields[] = {"preference", "width", "height"};
        double k[3];
        int cmp = 0;
        char *url;

        for (int f = 0; f < 3; f++)
            if (!get_num(json_object_get(t, fields[f]), &k[f]))
                k[f] = -1;
        for (int f = 0; f < 3 && !cmp; f++)
            cmp = (k[f] > key[f]) - (k[f] < key[f]);
        if (best && cmp < 0)
            continue;
        url = clean_url(json_object_get(t, "url"));
        if (!url)
            continue;
        free(best);
        best = url;
        memcpy(key, k, sizeof(key));
    }
    return best;
}

int vt_ytinfo_parse(const char *data, size_t len, struct vt_ytinfo *out, char *err, size_t errlen)
{
    json_t *root;
    const char *type, *live;
    double d;
    size_t cap_subs = 0, n_manual = 0;

    memset(out, 0, sizeof(*out));
    root = load_object(data, len, err, errlen);
    if (!root)
        return VT_EINVAL;
    type = json_string_value(json_object_get(root, "_type"));
    out->is_playlist = type && (!strcmp(type, "playlist") || !strcmp(type, "multi_video"));
    live = json_string_value(json_object_get(root, "live_status"));
    out->is_live = (live && (!strcmp(live, "is_live") || !strcmp(live, "is_upcoming"))) ||
                   json_is_true(json_object_get(root, "is_live"));
    out->id = clean_text(json_object_get(root, "id"), MAX_ID, 0);
    out->extractor = extractor_name(json_object_get(root, "extractor_key"));
    if (!out->extractor)
        out->extractor = extractor_name(json_object_get(root, "extractor"));
    out->title = clean_text(json_object_get(root, "title"), MAX_TITLE, 0);
    out->channel = clean_text(json_object_get(root, "channel"), MAX_TITLE, 0);
    if (!out->channel)
        out->channel = clean_text(json_object_get(root, "uploader"), MAX_TITLE, 0);
    out->published = date8(json_object_get(root, "upload_date"));
    if (!out->published)
        out->published = date8(json_object_get(root, "release_date"));
    if (!out->published)
        out->published = date_from_timestamp(json_object_get(root, "timestamp"));
    out->description = clean_text(json_object_get(root, "description"), MAX_DESCRIPTION, 1);
    out->webpage_url = clean_url(json_object_get(root, "webpage_url"));
    out->thumbnail = parse_thumbnail(root);
    if (get_num(json_object_get(root, "duration"), &d) && d > 0 && d <= MAX_DURATION_S)
        out->duration_s = d;
    parse_chapters(json_object_get(root, "chapters"), out);
    parse_subs(json_object_get(root, "subtitles"), 0, out, &cap_subs);
    n_manual = out->n_subs;
    parse_subs(json_object_get(root, "automatic_captions"), 1, out, &cap_subs);
    {
        const json_t *lang = json_object_get(root, "language");
        const char *s = json_string_value(lang);

        if (s && lang_ok(s, json_string_length(lang)))
            out->language = vt_xstrdup(s);
        else if (n_manual == 1)
            out->language = vt_xstrdup(out->subs[0].lang);
    }
    if (out->is_playlist)
        parse_entries(json_object_get(root, "entries"), out);
    json_decref(root);
    return 0;
}

void vt_ytinfo_release(struct vt_ytinfo *info)
{
    size_t i;

    if (!info)
        return;
    free(info->id);
    free(info->extractor);
    free(info->title);
    free(info->channel);
    free(info->published);
    free(info->language);
    free(info->description);
    free(info->webpage_url);
    free(info->thumbnail);
    for (i = 0; i < info->n_chapters; i++)
        free(info->chapters[i].title);
    free(info->chapters);
    for (i = 0; i < info->n_subs; i++) {
        free(info->subs[i].lang);
        free(info->subs[i].ext);
        free(info->subs[i].url);
        free(info->subs[i].name);
    }
    free(info->subs);
    for (i = 0; i < info->n_entries; i++) {
        free(info->entries[i].url);
        free(info->entries[i].id);
        free(info->entries[i].title);
    }
    free(info->entries);
    memset(info, 0, sizeof(*info));
}

/* ---------------------------------------------------------------------------------- */
/* Choosing a caption track                                                            */

/* Length of the primary subtag of a language tag ("en" of "en-US", "pt" of "pt_BR"). */
static size_t primary_len(const char *s)
{
    return strcspn(s, "-_");
}

static int same_primary(const char *a, const char *b)
{
    size_t n = primary_len(a);

    return n == primary_len(b) && !strncasecmp(a, b, n);
}

/* Whether sub_lang is lang itself or YouTube's "<lang>-orig" name of its original track. */
static int same_lang(const char *sub_lang, const char *lang)
{
    size_t n = strlen(lang);

    return !strcasecmp(sub_lang, lang) ||
           (!strncasecmp(sub_lang, lang, n) && !strcasecmp(sub_lang + n, "-orig"));
}

/*
 * The first track of the kind (automatic or not, never machine translations) in lang:
 * exactly (or its "-orig" track) when exact, else by primary subtag. NULL when none.
 */
static const struct vt_yt_sub *find_sub(const struct vt_ytinfo *info, int automatic,
                                        const char *lang, int exact)
{
    for (size_t i = 0; i < info->n_subs; i++) {
        const struct vt_yt_sub *s = &info->subs[i];

        if (s->automatic != automatic || s->translated)
            continue;
        if (exact ? same_lang(s->lang, lang) : same_primary(s->lang, lang))
            return s;
    }
    return NULL;
}

const struct vt_yt_sub *vt_ytinfo_pick_sub(const struct vt_ytinfo *info, const char *lang)
{
    const struct vt_yt_sub *s = NULL, *only = NULL;
    size_t n_manual = 0;

    if (!info)
        return NULL;
    if (!lang) {
        for (size_t i = 0; i < info->n_subs; i++)
            if (!info->subs[i].automatic && !info->subs[i].translated) {
                only = &info->subs[i];
                n_manual++;
            }
        lang = "en";
    }
    s = find_sub(info, 0, lang, 1);
    if (!s)
        s = find_sub(info, 0, lang, 0);
    if (!s && n_manual == 1)
        s = only;
    if (!s)
        s = find_sub(info, 1, lang, 1);
    if (!s)
        s = find_sub(info, 1, lang, 0);
    return s;
}

/* ---------------------------------------------------------------------------------- */
/* Rebuilding a single video's info for yt-dlp                                         */

/* A number as JSON: an integer when it is one (yt-dlp prints filesize 1234, not 1234.0). */
static json_t *num_json(double v)
{
    if (v == floor(v) && fabs(v) <= 9007199254740992.0)
        return json_integer((json_int_t)v);
    return json_real(v);
}

/* Copy string key of src into dst, cleaned, at most cap bytes; nothing when absent or empty. */
static void copy_text(json_t *dst, const json_t *src, const char *key, size_t cap)
{
    char *s = clean_text(json_object_get(src, key), cap, 0);

    if (s)
        json_object_set_new(dst, key, json_string(s));
    free(s);
}

static void copy_url(json_t *dst, const json_t *src, const char *key)
{
    char *s = clean_url(json_object_get(src, key));

    if (s)
        json_object_set_new(dst, key, json_string(s));
    free(s);
}

/* A fragment path relative to fragment_base_url: never a scheme, an absolute path or "\". */
static int relative_path_ok(const json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;

    if (!n || n > VT_YTINFO_MAX_URL || n != json_string_length(v) || s[0] == '/' || s[0] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f || s[i] == ':' || s[i] == '\\')
            return 0;
    return 1;
}

/* The fragments of a DASH format, each with a url or a relative path; NULL if any is bad. */
static json_t *clean_fragments(const json_t *arr, int have_base)
{
    json_t *out, *f;
    size_t i;

    if (!json_is_array(arr) || !json_array_size(arr) || json_array_size(arr) > MAX_FRAGMENTS)
        return NULL;
    out = json_array();
    json_array_foreach(arr, i, f)
    {
        json_t *o = json_object();
        char *url = clean_url(json_object_get(f, "url"));
        double d;

        if (url) {
            json_object_set_new(o, "url", json_string(url));
            free(url);
        } else if (have_base && relative_path_ok(json_object_get(f, "path"))) {
            json_object_set_new(o, "path",
                                json_string(json_string_value(json_object_get(f, "path"))));
        } else {
            /* one missing fragment would corrupt the file: give up on the format */
            json_decref(o);
            json_decref(out);
            return NULL;
        }
        if (get_num(json_object_get(f, "duration"), &d) && d >= 0 && d <= MAX_DURATION_S)
            json_object_set_new(o, "duration", num_json(d));
        if (get_num(json_object_get(f, "filesize"), &d) && d >= 0 && d <= MAX_FORMAT_NUM)
            json_object_set_new(o, "filesize", num_json(d));
        json_array_append_new(out, o);
    }
    return out;
}

/* Whether s (n bytes) is an HTTP header name: 1..128 of letters, digits and '-'. */
static int header_name_ok(const char *s, size_t n)
{
    if (!n || n > 128)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return 1;
}

/* http_headers with string values only, and none that would carry credentials. */
static json_t *clean_headers(const json_t *obj)
{
    json_t *out = json_object(), *v;
    const char *name;
    size_t n = 0;

    json_object_foreach((json_t *)obj, name, v)
    {
        char *value;

        if (n == MAX_HEADERS)
            break;
        if (!header_name_ok(name, strlen(name)) || !strcasecmp(name, "Cookie") ||
            !strcasecmp(name, "Authorization") || !strcasecmp(name, "Proxy-Authorization"))
            continue;
        value = clean_text(v, VT_YTINFO_MAX_URL, 0);
        if (!value)
            continue;
        json_object_set_new(out, name, json_string(value));
        free(value);
        n++;
    }
    return out;
}

/*
 * The protocol yt-dlp would use for format f with http(s) url, as utils.determine_protocol
 * does when the format does not say, or NULL when it is not one we let yt-dlp use.
 */
static const char *format_protocol(const json_t *f, const char *url)
{
    static const char *const allowed[] = {"http", "https", "m3u8_native", "http_dash_segments"};
    const char *p = json_string_value(json_object_get(f, "protocol"));
    size_t path_len;

    if (p) {
        for (size_t i = 0; i < VT_ARRAY_LEN(allowed); i++)
            if (!strcmp(p, allowed[i]))
                return allowed[i];
        return NULL;
    }
    path_len = strcspn(url, "?#");
    if (path_len >= 5 && !strncasecmp(url + path_len - 5, ".m3u8", 5))
        return "m3u8_native";
    if (path_len >= 4 && (!strncasecmp(url + path_len - 4, ".f4m", 4) ||
                          !strncasecmp(url + path_len - 4, ".mpd", 4)))
        return NULL;
    return !strncasecmp(url, "https:", 6) ? "https" : "http";
}

/* format_id as yt-dlp's format selector reads it: [A-Za-z0-9._-], at most 64 bytes. */
static void copy_format_id(json_t *dst, const json_t *f)
{
    const char *s = json_string_value(json_object_get(f, "format_id"));
    char buf[65];
    size_t n = 0;

    for (; s && *s && n < 64; s++)
        buf[n++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                           (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' || *s == '_'
                       ? *s
                       : '_';
    buf[n] = '\0';
    if (n)
        json_object_set_new(dst, "format_id", json_string(buf));
}

/* One format rebuilt from allowed keys, or NULL when yt-dlp must not download it. */
static json_t *clean_format(const json_t *f)
{
    static const char *const texts[] = {"vcodec",    "acodec",   "format_note",
                                        "container", "language", "dynamic_range"};
    static const char *const nums[] = {"width",
                                       "height",
                                       "fps",
                                       "tbr",
                                       "abr",
                                       "vbr",
                                       "asr",
                                       "filesize",
                                       "filesize_approx",
                                       "quality",
                                       "preference",
                                       "audio_channels",
                                       "source_preference"};
    const char *protocol, *ext;
    char *url = NULL;
    json_t *out = NULL, *frags;
    int have_base;

    if (!json_is_object(f) || truthy(json_object_get(f, "has_drm")))
        return NULL;
    url = clean_url(json_object_get(f, "url"));
    if (!url)
        return NULL;
    protocol = format_protocol(f, url);
    if (!protocol)
        goto out;
    out = json_object();
    copy_format_id(out, f);
    json_object_set_new(out, "url", json_string(url));
    json_object_set_new(out, "protocol", json_string(protocol));
    /* ext names the output file: letters and digits only */
    ext = json_string_value(json_object_get(f, "ext"));
    if (ext && *ext && strlen(ext) <= 16 && lang_ok(ext, strlen(ext)) && !strpbrk(ext, "-_"))
        json_object_set_new(out, "ext", json_string(ext));
    for (size_t i = 0; i < VT_ARRAY_LEN(texts); i++)
        copy_text(out, f, texts[i], MAX_SHORT);
    for (size_t i = 0; i < VT_ARRAY_LEN(nums); i++) {
        double d;

        if (get_num(json_object_get(f, nums[i]), &d) && fabs(d) <= MAX_FORMAT_NUM)
            json_object_set_new(out, nums[i], num_json(d));
    }
    copy_url(out, f, "manifest_url");
    copy_url(out, f, "fragment_base_url");
    have_base = json_object_get(out, "fragment_base_url") != NULL;
    if (json_object_get(f, "fragments")) {
        frags = clean_fragments(json_object_get(f, "fragments"), have_base);
        if (!frags) {
            json_decref(out);
            out = NULL;
            goto out;
        }
        json_object_set_new(out, "fragments", frags);
    } else if (!strcmp(protocol, "http_dash_segments")) {
        json_decref(out); /* DASH segments without a list of them cannot be fetched */
        out = NULL;
        goto out;
    }
    if (json_is_object(json_object_get(f, "http_headers")))
        json_object_set_new(out, "http_headers", clean_headers(json_object_get(f, "http_headers")));
out:
    free(url);
    return out;
}

/* Whether sub is a track this module could have made: checked again, it came from a caller. */
static int sub_ok(const struct vt_yt_sub *sub)
{
    return sub->lang && lang_ok(sub->lang, strlen(sub->lang)) && sub->ext &&
           (!strcmp(sub->ext, "json3") || !strcmp(sub->ext, "vtt")) && sub->url &&
           !vt_url_check(sub->url, NULL, 0);
}

/* The extractor's name and key: yt-dlp names the extractor in messages and needs it when
 * the title is missing. */
static void put_extractor(json_t *out, const json_t *root)
{
    char *s = extractor_name(json_object_get(root, "extractor"));

    if (!s)
        s = extractor_name(json_object_get(root, "extractor_key"));
    json_object_set_new(out, "extractor", json_string(s ? s : "generic"));
    free(s);
    s = extractor_name(json_object_get(root, "extractor_key"));
    if (s && !strpbrk(s, ":.-")) {
        /* yt-dlp's keys are class names: "Youtube", "Generic" */
        json_object_set_new(out, "extractor_key",
                            json_string(json_string_value(json_object_get(root, "extractor_key"))));
    } else {
        json_object_set_new(out, "extractor_key", json_string("Generic"));
    }
    free(s);
}

/* The formats yt-dlp may download (at most MAX_FORMATS), *offered how many were offered. A
 * single-format video is its own format: yt-dlp's -J then has no "formats". */
static json_t *clean_formats(const json_t *root, size_t *offered)
{
    const json_t *in_formats = json_object_get(root, "formats");
    json_t *formats = json_array(), *f;
    size_t i;

    *offered = 0;
    if (json_is_array(in_formats) && json_array_size(in_formats)) {
        json_array_foreach(in_formats, i, f)
        {
            json_t *c;

            if (json_array_size(formats) == MAX_FORMATS)
                break;
            (*offered)++;
            c = clean_format(f);
            if (c)
                json_array_append_new(formats, c);
        }
    } else if (json_object_get(root, "url")) {
        json_t *c = clean_format(root);

        *offered = 1;
        if (c)
            json_array_append_new(formats, c);
    }
    return formats;
}

/* The one caption track kept, as yt-dlp lists it: {"LANG": [{"ext", "url", "name"}]} under
 * "subtitles" or "automatic_captions". */
static void put_sub(json_t *out, const struct vt_yt_sub *keep_sub)
{
    json_t *track = json_object(), *list = json_object();

    json_object_set_new(track, "ext", json_string(keep_sub->ext));
    json_object_set_new(track, "url", json_string(keep_sub->url));
    if (keep_sub->name)
        json_object_set_new(track, "name", json_string(keep_sub->name));
    json_object_set_new(list, keep_sub->lang, json_pack("[o]", track));
    json_object_set_new(out, keep_sub->automatic ? "automatic_captions" : "subtitles", list);
}

int vt_ytinfo_clean_json(const char *data, size_t len, const struct vt_yt_sub *keep_sub,
                         char **json, char *err, size_t errlen)
{
    json_t *root, *out = NULL, *formats;
    const char *type;
    char *id = NULL, *s;
    size_t offered;
    double d;
    int rc = 0;

    *json = NULL;
    root = load_object(data, len, err, errlen);
    if (!root)
        return VT_EINVAL;
    type = json_string_value(json_object_get(root, "_type"));
    if (json_object_get(root, "_type") && (!type || strcmp(type, "video"))) {
        rc = vt_err(err, errlen, VT_EINVAL, "info JSON is not a single video");
        goto out;
    }
    id = clean_text(json_object_get(root, "id"), MAX_ID, 0);
    if (!id) {
        rc = vt_err(err, errlen, VT_EINVAL, "info JSON has no id");
        goto out;
    }
    if (keep_sub && !sub_ok(keep_sub)) {
        rc = vt_err(err, errlen, VT_EINVAL, "caption track to keep is not valid");
        goto out;
    }
    out = json_object();
    json_object_set_new(out, "id", json_string(id));
    s = clean_text(json_object_get(root, "title"), MAX_TITLE, 0);
    json_object_set_new(out, "title", json_string(s ? s : id));
    free(s);
    put_extractor(out, root);
    /* no webpage_url: after a failed download yt-dlp would extract that page afresh,
     * past this allowlist (and, for an info file, to a site the file only names) */
    if (get_num(json_object_get(root, "duration"), &d) && d > 0 && d <= MAX_DURATION_S)
        json_object_set_new(out, "duration", num_json(d));
    json_object_set_new(out, "_type", json_string("video"));

    formats = clean_formats(root, &offered);
    json_object_set_new(out, "formats", formats);
    if (!json_array_size(formats)) {
        rc = vt_err(err, errlen, VT_EINVAL,
                    "no usable format (%zu offered, none over http(s) without DRM)", offered);
        goto out;
    }
    if (keep_sub)
        put_sub(out, keep_sub);
    *json = json_dumps(out, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!*json)
        rc = vt_err(err, errlen, VT_EIO, "cannot write the cleaned info JSON: out of memory");
out:
    free(id);
    json_decref(out);
    json_decref(root);
    return rc;
}

/* ---------------------------------------------------------------------------------- */
/* URLs                                                                                */

int vt_url_check(const char *url, char *err, size_t errlen)
{
    const unsigned char *p = (const unsigned char *)url;
    size_t n, i, skip, auth_len, host_start, host_end;
    char *clean;
    int bad;

    if (!url || !*url)
        return vt_err(err, errlen, VT_EINVAL, "empty URL");
    n = strlen(url);
    if (n > VT_YTINFO_MAX_URL)
        return vt_err(err, errlen, VT_EINVAL, "URL too long (%zu bytes, limit %d)", n,
                      VT_YTINFO_MAX_URL);
    if (url[0] == '-')
        return vt_err(err, errlen, VT_EINVAL, "URL starts with '-'");
    for (i = 0; i < n; i++)
        if (p[i] <= 0x20 || p[i] == 0x7f)
            return vt_err(err, errlen, VT_EINVAL,
                          "URL has a space or control character at byte %zu", i + 1);
    clean = vt_utf8_clean(url);
    bad = strcmp(clean, url) != 0;
    free(clean);
    if (bad)
        return vt_err(err, errlen, VT_EINVAL, "URL is not valid UTF-8");
    if (!strncasecmp(url, "http://", 7))
        skip = 7;
    else if (!strncasecmp(url, "https://", 8))
        skip = 8;
    else
        return vt_err(err, errlen, VT_EINVAL, "not an http(s) URL");
    auth_len = strcspn(url + skip, "/?#");
    if (memchr(url + skip, '\\', auth_len))
        return vt_err(err, errlen, VT_EINVAL, "URL has a '\\' in its host");
    /* the host follows any user info and precedes any port */
    host_start = skip;
    for (i = skip; i < skip + auth_len; i++)
        if (url[i] == '@')
            host_start = i + 1;
    host_end = skip + auth_len;
    if (host_start < host_end && url[host_start] == '[') {
        const char *close = memchr(url + host_start, ']', host_end - host_start);

        host_end = close ? (size_t)(close - url) + 1 : host_start;
    } else {
        const char *colon = memchr(url + host_start, ':', host_end - host_start);

        if (colon)
            host_end = (size_t)(colon - url);
    }
    if (host_end <= host_start)
        return vt_err(err, errlen, VT_EINVAL, "URL has no host");
    return 0;
}
