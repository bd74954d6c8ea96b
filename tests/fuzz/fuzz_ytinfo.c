/*
 * libFuzzer target for the yt-dlp info reader. Any input must parse or be refused without
 * a crash, leak or undefined behaviour; what parses must keep the promises of ytinfo.h
 * (clean strings, http(s) URLs, sorted chapters, counts within the caps), and the JSON
 * rebuilt for yt-dlp must hold only allowed keys and http(s) URLs and read back. The input
 * is also checked as a URL.
 *
 * fuzz-sources: lib/source/ytinfo.c lib/base/util.c
 * fuzz-pkgs: jansson libavformat libavcodec libavutil
 */
#include "base/util.h"
#include "media/media.h"
#include "source/ytinfo.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect(int cond, const char *what, const char *detail)
{
    if (cond)
        return;
    fprintf(stderr, "fuzz_ytinfo: %s: %s\n", what, detail ? detail : "");
    abort();
}

/* A cleaned string: valid UTF-8 without control characters ('\n' allowed when nl). */
static void check_text(const char *s, size_t cap, int nl)
{
    char *clean;

    if (!s)
        return;
    expect(*s && strlen(s) <= cap, "empty or too long string", s);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        expect(*p >= 0x20 || (nl && *p == '\n'), "control character in a string", s);
    clean = vt_utf8_clean(s);
    expect(!strcmp(clean, s), "invalid UTF-8 in a string", s);
    free(clean);
}

static void check_url(const char *url, int may_be_null)
{
    expect(may_be_null || url, "missing URL", NULL);
    if (url)
        expect(vt_url_check(url, NULL, 0) == 0, "bad URL kept", url);
}

static void check_info(const struct vt_ytinfo *info)
{
    check_text(info->id, 256, 0);
    check_text(info->title, 1000, 0);
    check_text(info->channel, 1000, 0);
    check_text(info->description, 20000, 1);
    check_url(info->webpage_url, 1);
    check_url(info->thumbnail, 1);
    expect(info->published == NULL || strlen(info->published) == 10, "bad date", info->published);
    expect(info->duration_s >= 0 && info->duration_s <= 7 * 86400, "bad duration", NULL);
    expect(info->n_chapters <= VT_YTINFO_MAX_CHAPTERS, "too many chapters", NULL);
    for (size_t i = 0; i < info->n_chapters; i++) {
        const struct vt_chapter *c = &info->chapters[i];

        expect(c->start_s >= 0 && c->end_s >= c->start_s, "bad chapter times", c->title);
        expect(i == 0 || info->chapters[i - 1].start_s <= c->start_s, "chapters not sorted", NULL);
        expect(info->duration_s == 0 || c->end_s <= info->duration_s, "chapter past the end", NULL);
        check_text(c->title, 1000, 0);
    }
    expect(info->n_subs <= VT_YTINFO_MAX_SUBS, "too many subs", NULL);
    for (size_t i = 0; i < info->n_subs; i++) {
        const struct vt_yt_sub *s = &info->subs[i];

        expect(s->lang && strlen(s->lang) <= 32 &&
                   strspn(s->lang, "abcdefghijklmnopqrstuvwxyz"
                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789-_") == strlen(s->lang),
               "bad sub lang", s->lang);
        expect(!strcmp(s->ext, "json3") || !strcmp(s->ext, "vtt"), "bad sub ext", s->ext);
        check_url(s->url, 0);
        check_text(s->name, 1000, 0);
    }
    expect(info->is_playlist || info->n_entries == 0, "entries of a video", NULL);
    expect(info->n_entries <= VT_YTINFO_MAX_ENTRIES, "too many entries", NULL);
    for (size_t i = 0; i < info->n_entries; i++) {
        check_url(info->entries[i].url, 0);
        check_text(info->entries[i].id, 256, 0);
        check_text(info->entries[i].title, 1000, 0);
    }
}

/* The rebuilt JSON: only allowed keys at the top, http(s) format URLs, and it reads back. */
static void check_clean(const char *json)
{
    static const char *const top[] = {
        "id",       "title", "extractor", "extractor_key", "webpage_url",
        "duration", "_type", "formats",   "subtitles",     "automatic_captions"};
    json_t *root = json_loads(json, 0, NULL), *v, *f;
    struct vt_ytinfo back;
    const char *key;
    size_t i;

    expect(json_is_object(root), "cleaned JSON does not parse", json);
    json_object_foreach(root, key, v)
    {
        int ok = 0;

        for (size_t k = 0; k < VT_ARRAY_LEN(top); k++)
            ok |= !strcmp(key, top[k]);
        expect(ok, "key not in the allowlist", key);
    }
    expect(json_array_size(json_object_get(root, "formats")) > 0, "no formats", json);
    json_array_foreach(json_object_get(root, "formats"), i, f)
    {
        const char *p = json_string_value(json_object_get(f, "protocol"));

        check_url(json_string_value(json_object_get(f, "url")), 0);
        expect(p && (!strcmp(p, "http") || !strcmp(p, "https") || !strcmp(p, "m3u8_native") ||
                     !strcmp(p, "http_dash_segments")),
               "protocol not allowed", p);
    }
    expect(vt_ytinfo_parse(json, strlen(json), &back, NULL, 0) == 0, "cleaned JSON refused", json);
    vt_ytinfo_release(&back);
    json_decref(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const langs[] = {NULL, "en", "de", "pt-BR"};
    struct vt_ytinfo info;
    char err[256] = "", *json = NULL, *s;
    int rc;

    rc = vt_ytinfo_parse((const char *)data, size, &info, err, sizeof(err));
    expect(rc == 0 || rc == VT_EINVAL, "unexpected return code", err);
    expect(rc == 0 || err[0], "failure without a message", NULL);
    expect(!strchr(err, '\n'), "message over several lines", err);
    if (rc == 0) {
        const struct vt_yt_sub *sub = NULL;

        check_info(&info);
        for (size_t i = 0; i < VT_ARRAY_LEN(langs); i++) {
            const struct vt_yt_sub *p = vt_ytinfo_pick_sub(&info, langs[i]);

            expect(!p || (p >= info.subs && p < info.subs + info.n_subs), "pick outside subs",
                   NULL);
            expect(!p || !p->translated, "picked a machine translation", p ? p->url : NULL);
            if (p && !sub)
                sub = p;
        }
        rc = vt_ytinfo_clean_json((const char *)data, size, sub, &json, err, sizeof(err));
        expect(rc == 0 || rc == VT_EINVAL, "clean: unexpected return code", err);
        expect(rc == 0 || err[0], "clean: failure without a message", NULL);
        if (rc == 0)
            check_clean(json);
        free(json);
        vt_ytinfo_release(&info);
    }
    /* the same bytes as a URL */
    s = vt_xmalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    if (vt_url_check(s, err, sizeof(err)) == 0)
        expect(!strncasecmp(s, "http", 4) && strlen(s) <= VT_YTINFO_MAX_URL, "URL check", s);
    free(s);
    return 0;
}
