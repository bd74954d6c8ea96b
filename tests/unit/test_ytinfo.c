/*
 * Tests of the yt-dlp info reader: a YouTube-like video (chapters, manual and automatic
 * captions with machine translations, formats some of which must never reach yt-dlp), a
 * flat playlist, hostile documents (not JSON, wrong types, huge numbers, deep nesting,
 * invalid UTF-8, control characters, 10^5 chapters, non-http URLs), the choice of caption
 * track, the rebuilt JSON for --load-info-json, and the URL check.
 */
#include "base/util.h"
#include "harness.h"
#include "media/media.h"
#include "source/ytinfo.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define YT_SUB(lang, q, name)                                                                      \
    "\"" lang "\":[{\"ext\":\"srv3\",\"url\":\"https://www.youtube.com/api/timedtext?v=abc" q      \
    "&fmt=srv3\"},{\"ext\":\"json3\",\"url\":\"https://www.youtube.com/api/timedtext?v=abc" q      \
    "&fmt=json3\",\"name\":\"" name "\"},{\"ext\":\"vtt\",\"url\":\"https://www.youtube.com/api/"  \
    "timedtext?v=abc" q "&fmt=vtt\"}]"

/* What yt-dlp -J prints for a YouTube video, cut down to the fields that matter here. */
/* kept as written: clang-format spreads these string pieces around the macros */
/* clang-format off */
static const char video_json[] =
    "{\"id\":\"dQw4w9WgXcQ\",\"title\":\"  A talk\\u0007 about\\tC \\u202eevil\\n\","
    "\"channel\":\"The Channel\",\"uploader\":\"someone else\","
    "\"upload_date\":\"20230415\",\"timestamp\":1,\"duration\":212,"
    "\"extractor\":\"youtube\",\"extractor_key\":\"Youtube\","
    "\"webpage_url\":\"https://www.youtube.com/watch?v=dQw4w9WgXcQ\","
    "\"description\":\"Line one\\nLine\\u0000 two\\r\\n\","
    "\"thumbnail\":\"file:///etc/passwd\","
    "\"thumbnails\":[{\"url\":\"https://i.ytimg.com/hq.jpg\",\"preference\":-1,"
    "\"width\":480},{\"url\":\"https://i.ytimg.com/max.webp\",\"preference\":0,"
    "\"width\":1280},{\"url\":\"javascript:alert(1)\",\"preference\":5},"
    "{\"url\":\"https://i.ytimg.com/small.jpg\",\"preference\":-10}],"
    "\"chapters\":[{\"start_time\":100,\"end_time\":150,\"title\":\"Middle\"},"
    "{\"start_time\":0,\"end_time\":100,\"title\":\"Intro\\u001b[31m\"},"
    "{\"start_time\":150,\"end_time\":9999,\"title\":\"End\"},{\"start_time\":300,"
    "\"end_time\":400,\"title\":\"after the end\"},{\"start_time\":\"x\","
    "\"title\":\"bad\"}],\"subtitles\":{"
    YT_SUB("de", "&lang=de", "Deutsch")
    ",\"bad lang\":[{\"ext\":\"vtt\",\"url\":\"https://x.example/a.vtt\"}],"
    "\"fr\":[{\"ext\":\"vtt\",\"url\":\"ftp://x.example/fr.vtt\"}],"
    "\"live_chat\":[{\"ext\":\"json\",\"url\":\"https://www.youtube.com/live_chat\"}],"
    "\"en-GB\":[{\"ext\":\"vtt\",\"url\":\"https://x.example/en-GB.vtt\"},"
    "{\"ext\":\"ttml\",\"url\":\"https://x.example/en-GB.ttml\"}]},\"automatic_captions\":{"
    YT_SUB("en-orig", "&lang=en", "English (Original)")
    ","
    YT_SUB("en", "&lang=en", "English")
    ","
    YT_SUB("fr", "&lang=en&tlang=fr", "French")
    ","
    YT_SUB("de-en", "&lang=de&tlang=en", "English from German")
    "},\"formats\":[{\"format_id\":\"sb0\",\"url\":\"https://i.ytimg.com/sb/{M}.jpg\","
    "\"protocol\":\"mhtml\"},{\"format_id\":\"139\","
    "\"url\":\"https://rr1.googlevideo.com/videoplayback?itag=139\",\"protocol\":\"https\","
    "\"ext\":\"m4a\",\"acodec\":\"mp4a.40.5\",\"vcodec\":\"none\",\"abr\":48.9,"
    "\"asr\":22050,\"filesize\":1298211,\"container\":\"m4a_dash\","
    "\"http_headers\":{\"User-Agent\":\"Mozilla/5.0\",\"Cookie\":\"SID=secret\","
    "\"authorization\":\"Bearer x\",\"X-Num\":5,\"Bad Name\":\"v\"},"
    "\"_filename\":\"/tmp/evil\",\"filepath\":\"/etc/passwd\","
    "\"downloader_options\":{\"x\":1},"
    "\"fragments\":[{\"url\":\"https://rr1.googlevideo.com/frag0\",\"duration\":5}]},"
    "{\"format_id\":\"file\",\"url\":\"file:///etc/passwd\",\"protocol\":\"https\"},"
    "{\"format_id\":\"rtmp\",\"url\":\"rtmp://evil.example/live\",\"protocol\":\"rtmp\"},"
    "{\"format_id\":\"ffm\",\"url\":\"https://evil.example/x.m3u8\",\"protocol\":\"m3u8\"},"
    "{\"format_id\":\"drm\",\"url\":\"https://evil.example/drm.mp4\",\"has_drm\":true},"
    "{\"format_id\":\"hls 1/2\",\"url\":\"https://manifest.example/index.m3u8\","
    "\"ext\":\"../../mp4\",\"tbr\":1e300,\"width\":1920.0,\"fps\":29.97},"
    "{\"format_id\":\"dash\",\"url\":\"https://manifest.example/a.mpd\","
    "\"protocol\":\"http_dash_segments\",\"fragment_base_url\":\"https://cdn.example/v/\","
    "\"fragments\":[{\"path\":\"seg-1.m4s\",\"duration\":2},{\"path\":\"seg-2.m4s\"}]},"
    "{\"format_id\":\"dash-bad\",\"url\":\"https://manifest.example/b.mpd\","
    "\"protocol\":\"http_dash_segments\",\"fragment_base_url\":\"https://cdn.example/v/\","
    "\"fragments\":[{\"path\":\"seg-1.m4s\"},{\"path\":\"file:///etc/passwd\"}]},"
    "{\"format_id\":\"dash-none\",\"url\":\"https://manifest.example/c.mpd\","
    "\"protocol\":\"http_dash_segments\"},{\"format_id\":\"18\","
    "\"url\":\"HTTPS://rr2.googlevideo.com/videoplayback?itag=18\",\"ext\":\"mp4\","
    "\"width\":640,\"height\":360,\"vcodec\":\"avc1.42001E\"}],"
    "\"requested_subtitles\":{\"en\":{}},\"__postprocessors\":[],\"_filename\":\"/x\","
    "\"requested_formats\":[],\"filepath\":\"/etc/passwd\",\"_type\":\"video\"}";
/* clang-format on */

static int parse(const char *s, struct vt_ytinfo *info, char *err, size_t errlen)
{
    return vt_ytinfo_parse(s, strlen(s), info, err, errlen);
}

VT_TEST(ytinfo_video)
{
    struct vt_ytinfo info;
    char err[256] = "";

    CHECK_INT(parse(video_json, &info, err, sizeof(err)), 0);
    CHECK_INT(info.is_playlist, 0);
    CHECK_INT(info.is_live, 0);
    CHECK_STR(info.id, "dQw4w9WgXcQ");
    CHECK_STR(info.extractor, "youtube");
    CHECK_STR(info.title, "A talk about C evil");
    CHECK_STR(info.channel, "The Channel");
    CHECK_STR(info.published, "2023-04-15");
    CHECK_STR(info.description, "Line one\nLine two");
    CHECK_STR(info.webpage_url, "https://www.youtube.com/watch?v=dQw4w9WgXcQ");
    /* the thumbnail field is not http(s): the best http(s) one of thumbnails */
    CHECK_STR(info.thumbnail, "https://i.ytimg.com/max.webp");
    CHECK_NEAR(info.duration_s, 212, 0);
    /* sorted, the one past the end dropped, the last clipped to the duration */
    CHECK_INT(info.n_chapters, 3);
    if (info.n_chapters == 3) {
        CHECK_NEAR(info.chapters[0].start_s, 0, 0);
        CHECK_NEAR(info.chapters[0].end_s, 100, 0);
        CHECK_STR(info.chapters[0].title, "Intro[31m");
        CHECK_STR(info.chapters[1].title, "Middle");
        CHECK_NEAR(info.chapters[2].start_s, 150, 0);
        CHECK_NEAR(info.chapters[2].end_s, 212, 0);
    }
    /* manual: de (json3 preferred), en-GB (vtt); bad lang, ftp and json-only dropped */
    CHECK_INT(info.n_subs, 6);
    if (info.n_subs == 6) {
        CHECK_STR(info.subs[0].lang, "de");
        CHECK_STR(info.subs[0].ext, "json3");
        CHECK_STR(info.subs[0].url,
                  "https://www.youtube.com/api/timedtext?v=abc&lang=de&fmt=json3");
        CHECK_STR(info.subs[0].name, "Deutsch");
        CHECK_INT(info.subs[0].automatic, 0);
        CHECK_STR(info.subs[1].lang, "en-GB");
        CHECK_STR(info.subs[1].ext, "vtt");
        CHECK(info.subs[1].name == NULL);
        CHECK_STR(info.subs[2].lang, "en-orig");
        CHECK_INT(info.subs[2].automatic, 1);
        CHECK_INT(info.subs[2].translated, 0);
        CHECK_STR(info.subs[4].lang, "fr");
        CHECK_INT(info.subs[4].translated, 1);
        CHECK_INT(info.subs[5].translated, 1);
    }
    /* two manual tracks and no language field: unknown */
    CHECK(info.language == NULL);
    vt_ytinfo_release(&info);
    vt_ytinfo_release(&info); /* released twice is harmless */
}

VT_TEST(ytinfo_pick_sub)
{
    struct vt_ytinfo info;
    const struct vt_yt_sub *s;
    char err[256] = "";

    CHECK_INT(parse(video_json, &info, err, sizeof(err)), 0);
    s = vt_ytinfo_pick_sub(&info, "de");
    CHECK(s && !s->automatic && !strcmp(s->lang, "de"));
    /* same primary subtag: manual en-GB for en, before automatic en */
    s = vt_ytinfo_pick_sub(&info, "en");
    CHECK(s && !s->automatic && !strcmp(s->lang, "en-GB"));
    s = vt_ytinfo_pick_sub(&info, NULL);
    CHECK(s && !strcmp(s->lang, "en-GB"));
    /* French exists only as a machine translation */
    CHECK(vt_ytinfo_pick_sub(&info, "fr") == NULL);
    CHECK(vt_ytinfo_pick_sub(&info, "ja") == NULL);
    vt_ytinfo_release(&info);

    /* automatic only: the original track, never a translation */
    CHECK_INT(parse("{\"id\":\"x\",\"language\":\"en\",\"automatic_captions\":{" YT_SUB(
                        "fr", "&lang=en&tlang=fr",
                        "French") "," YT_SUB("en", "&lang=en",
                                             "English") "," YT_SUB("en-orig", "&lang=en",
                                                                   "English (Original)") "}}",
                    &info, err, sizeof(err)),
              0);
    CHECK_STR(info.language, "en");
    s = vt_ytinfo_pick_sub(&info, "en");
    CHECK(s && s->automatic && !strcmp(s->lang, "en"));
    s = vt_ytinfo_pick_sub(&info, "en-US");
    CHECK(s && s->automatic && !strcmp(s->lang, "en"));
    s = vt_ytinfo_pick_sub(&info, NULL);
    CHECK(s && s->automatic && !strcmp(s->lang, "en"));
    CHECK(vt_ytinfo_pick_sub(&info, "fr") == NULL);
    vt_ytinfo_release(&info);

    /* only "<lang>-orig" and translations */
    CHECK_INT(
        parse("{\"automatic_captions\":{" YT_SUB("es", "&lang=pt&tlang=es", "Spanish") "," YT_SUB(
                  "pt-orig", "&lang=pt", "Portuguese (Original)") "}}",
              &info, err, sizeof(err)),
        0);
    s = vt_ytinfo_pick_sub(&info, "pt");
    CHECK(s && !strcmp(s->lang, "pt-orig"));
    CHECK(vt_ytinfo_pick_sub(&info, NULL) == NULL);
    vt_ytinfo_release(&info);

    /* one manual track in another language: its language, and the pick without one */
    CHECK_INT(
        parse("{\"subtitles\":{\"pt-BR\":[{\"ext\":\"vtt\",\"url\":\"http://x.example/s\"}]},"
              "\"automatic_captions\":{\"en\":[{\"ext\":\"vtt\",\"url\":\"http://x.example/a\"}]}}",
              &info, err, sizeof(err)),
        0);
    CHECK_STR(info.language, "pt-BR");
    s = vt_ytinfo_pick_sub(&info, NULL);
    CHECK(s && !s->automatic && !strcmp(s->lang, "pt-BR"));
    s = vt_ytinfo_pick_sub(&info, "pt");
    CHECK(s && !strcmp(s->lang, "pt-BR"));
    s = vt_ytinfo_pick_sub(&info, "en");
    CHECK(s && s->automatic);
    vt_ytinfo_release(&info);
    CHECK(vt_ytinfo_pick_sub(&info, NULL) == NULL);
}

VT_TEST(ytinfo_playlist)
{
    const char *json =
        "{\"_type\":\"playlist\",\"id\":\"PL123\",\"title\":\"My list\",\"uploader\":\"Up\","
        "\"extractor_key\":\"YoutubeTab\",\"release_date\":\"20200229\","
        "\"entries\":["
        "{\"_type\":\"url\",\"ie_key\":\"Youtube\",\"id\":\"aaaaaaaaaaa\","
        "\"url\":\"https://www.youtube.com/watch?v=aaaaaaaaaaa\",\"title\":\"First\"},"
        "{\"_type\":\"url\",\"ie_key\":\"Youtube\",\"id\":\"bbbbbbbbbbb\",\"url\":\"bbbbbbbbbbb\"},"
        "{\"_type\":\"url\",\"ie_key\":\"Youtube\",\"id\":\"ccccccccccc\"},"
        "{\"_type\":\"url\",\"ie_key\":\"Youtube\",\"url\":\"-o/tmp/x\",\"id\":\"--exec rm\"},"
        "{\"_type\":\"url\",\"ie_key\":\"Generic\",\"url\":\"ddd\"},"
        "null, 42, \"https://x.example/string\","
        "{\"_type\":\"url\",\"url\":\"file:///etc/passwd\"},"
        "{\"id\":\"v\",\"title\":\"full\",\"url\":\"https://cdn.example/media.mp4\","
        "\"webpage_url\":\"https://site.example/v\",\"_type\":\"video\"},"
        "{\"_type\":\"url\",\"url\":\"http://site.example/e\"}]}";
    struct vt_ytinfo info;
    char err[256] = "";

    CHECK_INT(parse(json, &info, err, sizeof(err)), 0);
    CHECK_INT(info.is_playlist, 1);
    CHECK_STR(info.extractor, "youtubetab");
    CHECK_STR(info.channel, "Up");
    CHECK_STR(info.published, "2020-02-29");
    CHECK_INT(info.n_entries, 5);
    if (info.n_entries == 5) {
        CHECK_STR(info.entries[0].url, "https://www.youtube.com/watch?v=aaaaaaaaaaa");
        CHECK_STR(info.entries[0].title, "First");
        CHECK_STR(info.entries[1].url, "https://www.youtube.com/watch?v=bbbbbbbbbbb");
        CHECK_STR(info.entries[1].id, "bbbbbbbbbbb");
        CHECK(info.entries[1].title == NULL);
        CHECK_STR(info.entries[2].url, "https://www.youtube.com/watch?v=ccccccccccc");
        CHECK_STR(info.entries[3].url, "https://site.example/v");
        CHECK_STR(info.entries[4].url, "http://site.example/e");
    }
    vt_ytinfo_release(&info);
    /* multi_video is a playlist too; entries of a video are ignored */
    CHECK_INT(parse("{\"_type\":\"multi_video\",\"entries\":[{\"url\":\"https://a.example/\"}]}",
                    &info, err, sizeof(err)),
              0);
    CHECK_INT(info.is_playlist, 1);
    CHECK_INT(info.n_entries, 1);
    vt_ytinfo_release(&info);
    CHECK_INT(parse("{\"entries\":[{\"url\":\"https://a.example/\"}]}", &info, err, sizeof(err)),
              0);
    CHECK_INT(info.is_playlist, 0);
    CHECK_INT(info.n_entries, 0);
    vt_ytinfo_release(&info);
}

VT_TEST(ytinfo_fields)
{
    struct vt_ytinfo info;
    char err[256] = "";

    /* timestamp when there is no date; uploader when there is no channel; live */
    CHECK_INT(parse("{\"timestamp\":1700000000.5,\"uploader\":\"U\",\"live_status\":\"is_live\","
                    "\"upload_date\":\"20231399\",\"duration\":-5,\"extractor\":\"generic\"}",
                    &info, err, sizeof(err)),
              0);
    CHECK_STR(info.published, "2023-11-14");
    CHECK_STR(info.channel, "U");
    CHECK_STR(info.extractor, "generic");
    CHECK_INT(info.is_live, 1);
    CHECK_NEAR(info.duration_s, 0, 0);
    CHECK(info.id == NULL && info.title == NULL && info.thumbnail == NULL);
    vt_ytinfo_release(&info);
    /* more than 7 days, wrong types everywhere */
    CHECK_INT(parse("{\"duration\":604801,\"id\":5,\"title\":[\"x\"],\"chapters\":{},"
                    "\"subtitles\":[],\"thumbnails\":\"x\",\"language\":\"en us\","
                    "\"timestamp\":1e300,\"extractor_key\":\"You tube\"}",
                    &info, err, sizeof(err)),
              0);
    CHECK_NEAR(info.duration_s, 0, 0);
    CHECK(info.id == NULL && info.title == NULL && info.language == NULL &&
          info.published == NULL && info.extractor == NULL);
    vt_ytinfo_release(&info);
    /* chapters without ends run to the next one, then to the duration */
    CHECK_INT(parse("{\"duration\":60,\"chapters\":[{\"start_time\":-3,\"title\":\"\"},"
                    "{\"start_time\":20,\"end_time\":10},{\"start_time\":40}]}",
                    &info, err, sizeof(err)),
              0);
    CHECK_INT(info.n_chapters, 3);
    if (info.n_chapters == 3) {
        CHECK_NEAR(info.chapters[0].start_s, 0, 0);
        CHECK_NEAR(info.chapters[0].end_s, 20, 0);
        CHECK(info.chapters[0].title == NULL);
        CHECK_NEAR(info.chapters[1].end_s, 40, 0);
        CHECK_NEAR(info.chapters[2].end_s, 60, 0);
    }
    vt_ytinfo_release(&info);
}

VT_TEST(ytinfo_hostile)
{
    static const char *const bad[] = {
        "",
        "not json",
        "[1,2,3]",
        "\"a string\"",
        "42",
        "{\"a\":",
        "{\"a\":NaN}",
        "{\"a\":Infinity}",
        "{\"a\":1e999}",
        /* jansson quotes the text near the error, here a line break: still one line */
        "{\"title\":\"a\\\n\tb\"}",
    };
    struct vt_ytinfo info;
    struct vt_sb sb = {0};
    char err[256] = "", *big;
    size_t n;

    for (size_t i = 0; i < VT_ARRAY_LEN(bad); i++) {
        err[0] = '\0';
        CHECK_INT(parse(bad[i], &info, err, sizeof(err)), VT_EINVAL);
        CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
        CHECK(info.id == NULL && info.n_subs == 0);
    }
    CHECK_INT(parse("[1]", &info, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "info JSON is not an object");
    /* integers too large for 64 bits are read as doubles */
    CHECK_INT(parse("{\"id\":\"a\",\"view_count\":123456789012345678901234567890,"
                    "\"duration\":99999999999999999999999}",
                    &info, err, sizeof(err)),
              0);
    CHECK_NEAR(info.duration_s, 0, 0);
    vt_ytinfo_release(&info);
    /* 100000 nested arrays: jansson's depth limit */
    for (n = 0; n < 100000; n++)
        vt_sb_addc(&sb, '[');
    CHECK_INT(vt_ytinfo_parse(sb.buf, sb.len, &info, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "depth") != NULL);
    vt_sb_release(&sb);
    /* invalid UTF-8, a lone surrogate escape, NUL bytes and controls inside strings */
    {
        static const char s[] = "{\"id\":\"a\\u0000b\",\"title\":\"caf\xc3 \xff\\ud800x\\u0085\","
                                "\"channel\":\"\\ud83d\\ude00\",\"description\":\"\\u001b]0;x\"}";

        CHECK_INT(vt_ytinfo_parse(s, sizeof(s) - 1, &info, err, sizeof(err)), 0);
        CHECK_STR(info.id, "ab");
        CHECK_STR(info.title, "caf\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbdx");
        CHECK_STR(info.channel, "\xf0\x9f\x98\x80");
        CHECK_STR(info.description, "]0;x");
        vt_ytinfo_release(&info);
    }
    /* a raw NUL byte in the text is not JSON */
    CHECK_INT(vt_ytinfo_parse("{\"a\":\"x\0\"}", 9, &info, err, sizeof(err)), VT_EINVAL);
    /* long strings are capped at a character boundary */
    big = vt_xmalloc(70000);
    memset(big, 0, 70000);
    strcpy(big, "{\"title\":\"");
    for (n = strlen(big); n < 40000; n += 2)
        memcpy(big + n, "\xc3\xa9", 2);
    strcpy(big + n, "\",\"description\":\"");
    for (n = strlen(big); n < 69900; n++)
        big[n] = 'd';
    strcpy(big + n, "\"}");
    CHECK_INT(parse(big, &info, err, sizeof(err)), 0);
    CHECK_INT(info.title ? strlen(info.title) : 0, 1000);
    CHECK_INT(info.description ? strlen(info.description) : 0, 20000);
    vt_ytinfo_release(&info);
    free(big);
    /* too large */
    n = VT_YTINFO_MAX_BYTES + 1;
    big = vt_xmalloc(n);
    memset(big, ' ', n);
    CHECK_INT(vt_ytinfo_parse(big, n, &info, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "info JSON too large (67108865 bytes, limit 64 MiB)");
    free(big);
}

VT_TEST(ytinfo_counts)
{
    struct vt_sb sb = {0};
    struct vt_ytinfo info;
    char err[256] = "";

    /*
     * 10^5 chapters, subtitle languages and entries: capped. No clock here (the suite
     * runs on shared, noisy machines): a quadratic reader would take minutes, not
     * milliseconds, and that shows as a stalled suite.
     */
    vt_sb_adds(&sb, "{\"_type\":\"playlist\",\"chapters\":[");
    for (int i = 0; i < 100000; i++)
        vt_sb_addf(&sb, "%s{\"start_time\":%d,\"title\":\"c%d\"}", i ? "," : "", 100000 - i, i);
    vt_sb_adds(&sb, "],\"subtitles\":{");
    for (int i = 0; i < 5000; i++)
        vt_sb_addf(&sb, "%s\"l%d\":[{\"ext\":\"vtt\",\"url\":\"https://x.example/%d\"}]",
                   i ? "," : "", i, i);
    vt_sb_adds(&sb, "},\"entries\":[");
    for (int i = 0; i < 100005; i++)
        vt_sb_addf(&sb, "%s{\"url\":\"https://x.example/%d\"}", i ? "," : "", i);
    vt_sb_adds(&sb, "]}");
    CHECK_INT(vt_ytinfo_parse(sb.buf, sb.len, &info, err, sizeof(err)), 0);
    CHECK_INT(info.n_chapters, VT_YTINFO_MAX_CHAPTERS);
    /* the first 2000 given, sorted */
    if (info.n_chapters == VT_YTINFO_MAX_CHAPTERS) {
        CHECK_NEAR(info.chapters[0].start_s, 98001, 0);
        CHECK_STR(info.chapters[0].title, "c1999");
        CHECK_NEAR(info.chapters[0].end_s, 98002, 0);
    }
    CHECK_INT(info.n_subs, VT_YTINFO_MAX_SUBS);
    CHECK_INT(info.n_entries, VT_YTINFO_MAX_ENTRIES);
    vt_ytinfo_release(&info);
    vt_sb_release(&sb);
}

/* The cleaned JSON of data, parsed back with jansson; NULL with rc when it fails. */
static json_t *clean(const char *data, const struct vt_yt_sub *keep, int *rc, char *err,
                     size_t errlen)
{
    char *json = NULL;
    json_t *root;

    *rc = vt_ytinfo_clean_json(data, strlen(data), keep, &json, err, errlen);
    if (*rc)
        return NULL;
    root = json_loads(json, 0, NULL);
    CHECK(root != NULL);
    CHECK(strchr(json, '\n') == NULL);
    free(json);
    return root;
}

static const char *str_at(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

VT_TEST(ytinfo_clean_json)
{
    static const char *const allowed_top[] = {
        "id",    "title",   "extractor", "extractor_key",     "duration",
        "_type", "formats", "subtitles", "automatic_captions"};
    struct vt_ytinfo info;
    const struct vt_yt_sub *sub;
    char err[256] = "";
    json_t *root, *formats, *f, *v;
    const char *key;
    size_t i;
    int rc;

    CHECK_INT(parse(video_json, &info, err, sizeof(err)), 0);
    sub = vt_ytinfo_pick_sub(&info, "en-US");
    CHECK(sub != NULL);
    root = clean(video_json, sub, &rc, err, sizeof(err));
    CHECK_INT(rc, 0);
    if (!root) {
        vt_ytinfo_release(&info);
        return;
    }
    json_object_foreach(root, key, v)
    {
        int ok = 0;

        for (i = 0; i < VT_ARRAY_LEN(allowed_top); i++)
            ok |= !strcmp(key, allowed_top[i]);
        if (!ok)
            fprintf(stderr, "  unexpected key '%s'\n", key);
        CHECK(ok);
    }
    CHECK_STR(str_at(root, "id"), "dQw4w9WgXcQ");
    CHECK_STR(str_at(root, "title"), "A talk about C evil");
    CHECK_STR(str_at(root, "extractor"), "youtube");
    CHECK_STR(str_at(root, "extractor_key"), "Youtube");
    CHECK_STR(str_at(root, "_type"), "video");
    CHECK(json_is_integer(json_object_get(root, "duration")));
    CHECK(json_object_get(root, "automatic_captions") == NULL);
    /* the manual en-GB track is the only one */
    v = json_object_get(json_object_get(root, "subtitles"), "en-GB");
    CHECK(json_object_size(json_object_get(root, "subtitles")) == 1 && json_array_size(v) == 1);
    CHECK_STR(str_at(json_array_get(v, 0), "ext"), "vtt");
    CHECK_STR(str_at(json_array_get(v, 0), "url"), "https://x.example/en-GB.vtt");
    formats = json_object_get(root, "formats");
    CHECK_INT(json_array_size(formats), 4);
    json_array_foreach(formats, i, f)
    {
        const char *url = str_at(f, "url");

        CHECK(url && !strncasecmp(url, "http", 4));
        CHECK(json_object_get(f, "_filename") == NULL && json_object_get(f, "filepath") == NULL &&
              json_object_get(f, "downloader_options") == NULL &&
              json_object_get(f, "has_drm") == NULL);
    }
    f = json_array_get(formats, 0);
    CHECK_STR(str_at(f, "format_id"), "139");
    CHECK_STR(str_at(f, "protocol"), "https");
    CHECK_STR(str_at(f, "ext"), "m4a");
    CHECK_STR(str_at(f, "container"), "m4a_dash");
    CHECK(json_is_integer(json_object_get(f, "filesize")));
    CHECK(json_is_real(json_object_get(f, "abr")));
    v = json_object_get(f, "http_headers");
    CHECK_INT(json_object_size(v), 1);
    CHECK_STR(str_at(v, "User-Agent"), "Mozilla/5.0");
    CHECK_INT(json_array_size(json_object_get(f, "fragments")), 1);
    /* no protocol given: inferred from the .m3u8 URL; its id and ext made safe */
    f = json_array_get(formats, 1);
    CHECK_STR(str_at(f, "format_id"), "hls_1_2");
    CHECK_STR(str_at(f, "protocol"), "m3u8_native");
    CHECK(json_object_get(f, "ext") == NULL);
    CHECK(json_object_get(f, "tbr") == NULL);
    CHECK(json_is_integer(json_object_get(f, "width")));
    f = json_array_get(formats, 2);
    CHECK_STR(str_at(f, "format_id"), "dash");
    CHECK_STR(str_at(json_array_get(json_object_get(f, "fragments"), 1), "path"), "seg-2.m4s");
    f = json_array_get(formats, 3);
    CHECK_STR(str_at(f, "format_id"), "18");
    CHECK_STR(str_at(f, "protocol"), "https");
    json_decref(root);

    /* an automatic track goes under automatic_captions; no track, neither key */
    sub = vt_ytinfo_pick_sub(&info, "de");
    root = clean(video_json, &info.subs[2], &rc, err, sizeof(err));
    CHECK(root && json_object_get(root, "subtitles") == NULL);
    CHECK(root && json_object_get(json_object_get(root, "automatic_captions"), "en-orig"));
    json_decref(root);
    root = clean(video_json, NULL, &rc, err, sizeof(err));
    CHECK(root && !json_object_get(root, "subtitles") &&
          !json_object_get(root, "automatic_captions"));
    json_decref(root);
    vt_ytinfo_release(&info);
}

VT_TEST(ytinfo_clean_json_errors)
{
    struct vt_yt_sub bad_sub = {"en", 0, "srt", "https://x.example/s.srt", 0, NULL};
    char err[256] = "";
    json_t *root;
    int rc;

    root =
        clean("{\"_type\":\"playlist\",\"id\":\"x\",\"entries\":[]}", NULL, &rc, err, sizeof(err));
    CHECK_INT(rc, VT_EINVAL);
    CHECK_STR(err, "info JSON is not a single video");
    root =
        clean("{\"title\":\"t\",\"url\":\"https://x.example/a.mp4\"}", NULL, &rc, err, sizeof(err));
    CHECK_INT(rc, VT_EINVAL);
    CHECK_STR(err, "info JSON has no id");
    root = clean("{\"id\":\"x\",\"formats\":[{\"url\":\"file:///etc/passwd\"},"
                 "{\"url\":\"rtmp://a.example/b\"},{\"url\":\"https://a.example/m.f4m\"}]}",
                 NULL, &rc, err, sizeof(err));
    CHECK_INT(rc, VT_EINVAL);
    CHECK_STR(err, "no usable format (3 offered, none over http(s) without DRM)");
    root = clean("{\"id\":\"x\"}", NULL, &rc, err, sizeof(err));
    CHECK_INT(rc, VT_EINVAL);
    root = clean("{\"id\":\"x\",\"url\":\"https://a.example/v.mp4\"}", &bad_sub, &rc, err,
                 sizeof(err));
    CHECK_INT(rc, VT_EINVAL);
    CHECK(root == NULL);
    root = clean("[]", NULL, &rc, err, sizeof(err));
    CHECK_INT(rc, VT_EINVAL);
    /* a single-format video (no "formats"): the video itself is the format */
    root = clean("{\"id\":\"x/../y\",\"url\":\"https://a.example/v.mp4\",\"ext\":\"mp4\","
                 "\"extractor\":\"generic\",\"extractor_key\":\"Generic\",\"title\":\"\","
                 "\"filepath\":\"/etc/passwd\"}",
                 NULL, &rc, err, sizeof(err));
    CHECK_INT(rc, 0);
    if (root) {
        CHECK_STR(str_at(root, "title"), "x/../y");
        CHECK_INT(json_array_size(json_object_get(root, "formats")), 1);
        CHECK_STR(str_at(json_array_get(json_object_get(root, "formats"), 0), "protocol"), "https");
        CHECK(json_object_get(root, "filepath") == NULL);
        CHECK(json_object_get(root, "url") == NULL);
    }
    json_decref(root);
}

VT_TEST(ytinfo_url_check)
{
    static const char *const good[] = {
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "HTTP://example.com",
        "http://user:pw@example.com:8080/p?q#f",       "http://[::1]:8000/x",
        "https://ex\xc3\xa4mple.com/caf\xc3\xa9",
    };
    static const char *const bad[] = {
        "",
        "-o/tmp/x",
        "--exec=rm",
        "file:///etc/passwd",
        "ftp://example.com/",
        "javascript:alert(1)",
        "http://",
        "http:///path",
        "http://user@/x",
        "http://:80/",
        "https://example.com/a b",
        "https://example.com/\x01",
        "https://example.com/\x7f",
        "https://example.com/\n",
        "https://example.com/\xff",
        "https://example.com\\@evil.example/",
        "example.com",
        "ytsearch:cats",
    };
    char err[256] = "", *big;

    for (size_t i = 0; i < VT_ARRAY_LEN(good); i++) {
        CHECK_INT(vt_url_check(good[i], err, sizeof(err)), 0);
    }
    for (size_t i = 0; i < VT_ARRAY_LEN(bad); i++) {
        err[0] = '\0';
        if (vt_url_check(bad[i], err, sizeof(err)) != VT_EINVAL)
            fprintf(stderr, "  accepted bad URL %zu\n", i);
        CHECK(err[0] != '\0');
    }
    CHECK_INT(vt_url_check(NULL, err, sizeof(err)), VT_EINVAL);
    CHECK_INT(vt_url_check("-https://x.example/", err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "URL starts with '-'");
    big = vt_xmalloc(5000);
    memset(big, 'a', 4999);
    big[4999] = '\0';
    memcpy(big, "https://x.example/", 18);
    CHECK_INT(vt_url_check(big, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "URL too long (4999 bytes, limit 4096)");
    big[4096] = '\0';
    CHECK_INT(vt_url_check(big, err, sizeof(err)), 0);
    free(big);
}
