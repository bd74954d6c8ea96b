/*
 * Tests of the captions reader and writers: SubRip and WebVTT as real tools write them and
 * as hostile files do (BOMs, CRLF, missing blank lines, unsorted cues, absurd timestamps,
 * markup, NUL bytes, invalid UTF-8, oversized input, millions of cues); word timings from
 * WebVTT timestamp tags; writers whose output reads back identically; sidecar discovery
 * and loading in a scratch directory; and one embedded subtitle stream made with ffmpeg.
 */
#include "base/util.h"
#include "captions/captions.h"
#include "harness.h"

#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse(const char *s, const char *format, struct vt_transcript *t, char *err,
                 size_t errlen)
{
    return vt_captions_parse(s, strlen(s), format, t, err, errlen);
}

static void check_cue(const struct vt_transcript *t, size_t i, double start_s, double end_s,
                      const char *text)
{
    CHECK(i < t->n_cues);
    if (i >= t->n_cues)
        return;
    CHECK_NEAR(t->cues[i].start_s, start_s, 1e-9);
    CHECK_NEAR(t->cues[i].end_s, end_s, 1e-9);
    CHECK_STR(t->cues[i].text, text);
}

static void check_word(const struct vt_cue *c, size_t i, const char *text, double start_s,
                       double end_s)
{
    CHECK(i < c->n_words);
    if (i >= c->n_words)
        return;
    CHECK_STR(c->words[i].text, text);
    CHECK_NEAR(c->words[i].start_s, start_s, 1e-9);
    CHECK_NEAR(c->words[i].end_s, end_s, 1e-9);
}

VT_TEST(captions_srt_basic)
{
    const char *srt = "1\n00:00:01,000 --> 00:00:02,500\nHello there.\nSecond line\n\n"
                      "2\n00:00:03,000 --> 00:00:04,000 X1:10 X2:20 Y1:1 Y2:2\nBye\n";
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(parse(srt, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 2);
    check_cue(&t, 0, 1.0, 2.5, "Hello there.\nSecond line");
    check_cue(&t, 1, 3.0, 4.0, "Bye");
    CHECK(t.cues[0].words == NULL && t.cues[0].n_words == 0);
    CHECK_STR(t.model, "captions:srt");
    vt_transcript_release(&t);
}

VT_TEST(captions_srt_hostile)
{
    /* BOM, CRLF and lone CR, no blank line between cues 1-2, unsorted and overlapping
     * cues, markup and entities, a NUL byte and invalid UTF-8 in text */
    static const char srt[] =
        "\xef\xbb\xbf"
        "1\r\n00:00:05,000 --> 00:00:06,000\r\n<i>Italic</i> and <b>bold</b>\r\n"
        "2\r\n00:00:01,000 --> 00:00:09,000\r\n<font color=\"#ff0000\">Red</font> "
        "{\\an8}top\r\n\r\n"
        "3\r00:00:02,000 --> 00:00:03,000\rTom &amp; Jerry &lt;3 &gt; a&nbsp;b&lrm;c\r\r"
        "4\n00:00:02,000 --> 00:00:02,500\nnul\0byte \xff\xfe bad\n\n"
        "5\n99:99:99,999 --> 100:00:00,000\ndropped: minutes 99\n\n"
        "6\n-00:00:01,000 --> 00:00:02,000\ndropped: negative\n\n"
        "7\n99999999999:00:00,000 --> 99999999999:00:01,000\ndropped: huge\n\n"
        "8\n00:00:07,000 --> 00:00:06,000\ndropped: ends before start\n\n"
        "9\n100:00:00,000 --> 100:00:01,5\nthree-digit hours\n\n"
        "10\n00:00:08,000 --> 00:00:08,000\n<i></i>\n\n"
        "11\n00:00:04,000 --> 00:00:04,100\na < b and c > d, x --> y\n";
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(vt_captions_parse(srt, sizeof(srt) - 1, "srt", &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 6);
    check_cue(&t, 0, 1.0, 9.0, "Red top");
    check_cue(&t, 1, 2.0, 2.5,
              "nul\xef\xbf\xbd"
              "byte \xef\xbf\xbd\xef\xbf\xbd bad");
    check_cue(&t, 2, 2.0, 3.0, "Tom & Jerry <3 > a bc");
    check_cue(&t, 3, 4.0, 4.1, "a < b and c > d, x --> y");
    check_cue(&t, 4, 5.0, 6.0, "Italic and bold");
    check_cue(&t, 5, 360000.0, 360001.5, "three-digit hours");
    vt_transcript_release(&t);
}

VT_TEST(captions_vtt_basic)
{
    const char *vtt = "WEBVTT - some title\nKind: captions\n\n"
                      "STYLE\n::cue { color: red }\n\n"
                      "NOTE this is a comment\nover two lines\n\n"
                      "intro\n00:01.000 --> 00:02.000 align:start position:10%\n"
                      "<v Roger Bingham>We are in New York City\n\n"
                      "00:00:03.000 --> 00:00:04.000\n"
                      "<c.colorE5E5E5>grey</c> <lang en>text</lang> <ruby>kan<rt>ji</rt></ruby>\n";
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(parse(vtt, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 2);
    check_cue(&t, 0, 1.0, 2.0, "We are in New York City");
    check_cue(&t, 1, 3.0, 4.0, "grey text kanji");
    CHECK_STR(t.model, "captions:vtt");
    vt_transcript_release(&t);
}

VT_TEST(captions_vtt_word_timings)
{
    /* karaoke style (tag before each word), YouTube style (tag after the word, words in
     * <c>), text before the first tag, a tag outside the cue's span, two words in one
     * segment */
    const char *vtt = "WEBVTT\n\n"
                      "00:00:01.000 --> 00:00:03.000\n"
                      "<00:00:01.000>Hello <00:00:01.500>big\n<00:00:02.000>world\n\n"
                      "00:00:10.000 --> 00:00:12.000\n"
                      "so<00:00:10.400><c> we</c><00:00:11.000><c> went</c>\n\n"
                      "00:00:20.000 --> 00:00:21.000\n"
                      "one two<00:00:25.000> late\n";
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(parse(vtt, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 3);
    check_cue(&t, 0, 1.0, 3.0, "Hello big\nworld");
    CHECK_INT(t.cues[0].n_words, 3);
    check_word(&t.cues[0], 0, "Hello", 1.0, 1.5);
    check_word(&t.cues[0], 1, "big", 1.5, 2.0);
    check_word(&t.cues[0], 2, "world", 2.0, 3.0);
    check_cue(&t, 1, 10.0, 12.0, "so we went");
    CHECK_INT(t.cues[1].n_words, 3);
    check_word(&t.cues[1], 0, "so", 10.0, 10.4);
    check_word(&t.cues[1], 1, "we", 10.4, 11.0);
    check_word(&t.cues[1], 2, "went", 11.0, 12.0);
    CHECK_INT(t.cues[2].n_words, 3);
    check_word(&t.cues[2], 0, "one", 20.0, 20.5);
    check_word(&t.cues[2], 1, "two", 20.5, 21.0);
    check_word(&t.cues[2], 2, "late", 21.0, 21.0);
    vt_transcript_release(&t);
}

VT_TEST(captions_missing_blank_lines)
{
    const char *srt = "1\n00:00:01,000 --> 00:00:02,000\nfirst\n"
                      "2\n00:00:02,000 --> 00:00:03,000\nsecond\n"
                      "00:00:03,000 --> 00:00:04,000\nthird\n";
    const char *vtt = "WEBVTT\n00:00:01.000 --> 00:00:02.000\nno blank after header\n";
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(parse(srt, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 3);
    check_cue(&t, 0, 1.0, 2.0, "first");
    check_cue(&t, 1, 2.0, 3.0, "second");
    check_cue(&t, 2, 3.0, 4.0, "third");
    vt_transcript_release(&t);
    CHECK_INT(parse(vtt, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 1);
    check_cue(&t, 0, 1.0, 2.0, "no blank after header");
    vt_transcript_release(&t);
}

VT_TEST(captions_errors)
{
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(parse("", NULL, &t, err, sizeof(err)), VT_SKIP);
    CHECK_STR(err, "no cues in captions");
    CHECK(t.n_cues == 0 && t.cues == NULL);
    CHECK_INT(parse("WEBVTT\n\nNOTE nothing here\n", NULL, &t, err, sizeof(err)), VT_SKIP);
    CHECK_INT(parse("1\n00:00:01,000 --> 00:00:02,000\n<i> </i>\n", NULL, &t, err, sizeof(err)),
              VT_SKIP);
    CHECK_INT(parse("just some prose\nwithout timings\n", NULL, &t, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "srt: line 1: no cue timing found (not SubRip or WebVTT)");
    CHECK_INT(parse("\n\n1\n00:00:01,000 -> 00:00:02,000\nx\n", "srt", &t, err, sizeof(err)),
              VT_EINVAL);
    CHECK_STR(err, "srt: line 3: no cue timing found (not SubRip or WebVTT)");
    CHECK_INT(parse("WEBVTT\n\n00:00:61.000 --> 00:00:62.000\nx\n", NULL, &t, err, sizeof(err)),
              VT_EINVAL);
    CHECK_STR(err, "vtt: line 3: bad cue timing '00:00:61.000 --> 00:00:62.000'");
    CHECK_INT(parse("x", "ass", &t, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "'ass': unknown captions format");
    CHECK(t.n_cues == 0 && t.cues == NULL);
}

VT_TEST(captions_caps)
{
    size_t big = 50u << 20, n = 0;
    char *data = vt_xmalloc(big), err[256] = "";
    struct vt_transcript t;
    struct vt_sb sb = {0};

    /* 50 MB: refused before any work */
    memset(data, 'a', big);
    CHECK_INT(vt_captions_parse(data, big, NULL, &t, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "captions too large (52428800 bytes, limit 16 MiB)");
    free(data);
    /* more than VT_CAPTIONS_MAX_CUES tiny cues */
    vt_sb_adds(&sb, "WEBVTT\n\n");
    for (n = 0; n <= VT_CAPTIONS_MAX_CUES; n++)
        vt_sb_addf(&sb, "00:01.000 --> 00:02.000\na\n\n");
    CHECK(sb.len < VT_CAPTIONS_MAX_BYTES);
    CHECK_INT(vt_captions_parse(sb.buf, sb.len, "vtt", &t, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "vtt: more than 200000 cues");
    CHECK(t.n_cues == 0 && t.cues == NULL);
    vt_sb_release(&sb);
}

VT_TEST(captions_utf16)
{
    /* "1\n00:00:01,000 --> 00:00:02,000\nCafé 😀\n" in UTF-16LE with a BOM */
    const char *text = "1\r\n00:00:01,000 --> 00:00:02,000\r\nCaf\xc3\xa9 \xf0\x9f\x98\x80\r\n";
    struct vt_sb sb = {0};
    struct vt_transcript t;
    char err[256] = "";

    vt_sb_add(&sb, "\xff\xfe", 2);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == 0xc3) {
            vt_sb_add(&sb, "\xe9\0", 2);
            p++;
        } else if (*p == 0xf0) {
            vt_sb_add(&sb, "\x3d\xd8\x00\xde", 4);
            p += 3;
        } else {
            vt_sb_addc(&sb, (char)*p);
            vt_sb_addc(&sb, '\0');
        }
    }
    CHECK_INT(vt_captions_parse(sb.buf, sb.len, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 1);
    check_cue(&t, 0, 1.0, 2.0, "Caf\xc3\xa9 \xf0\x9f\x98\x80");
    vt_transcript_release(&t);
    vt_sb_release(&sb);
}

static void compare_transcripts(const struct vt_transcript *a, const struct vt_transcript *b,
                                int with_words)
{
    CHECK_INT(a->n_cues, b->n_cues);
    for (size_t i = 0; i < a->n_cues && i < b->n_cues; i++) {
        const struct vt_cue *x = &a->cues[i], *y = &b->cues[i];

        CHECK_NEAR(x->start_s, y->start_s, 1e-9);
        CHECK_NEAR(x->end_s, y->end_s, 1e-9);
        CHECK_STR(x->text, y->text);
        if (!with_words)
            continue;
        CHECK_INT(x->n_words, y->n_words);
        for (size_t k = 0; k < x->n_words && k < y->n_words; k++)
            check_word(y, k, x->words[k].text, x->words[k].start_s, x->words[k].end_s);
    }
}

static struct vt_word word(const char *text, double start_s, double end_s)
{
    return (struct vt_word){(char *)text, start_s, end_s, 1};
}

VT_TEST(captions_round_trip)
{
    struct vt_word w0[] = {word("Hello", 1.0, 1.25), word("&", 1.25, 1.5), word("<you>", 1.5, 2),
                           word("-->", 2, 2.5), word("there", 2.5, 3.0)};
    struct vt_word w1[] = {word("Caf\xc3\xa9", 3600.001, 3600.5), word("{\\an8}", 3600.5, 3601)};
    struct vt_cue cues[] = {
        {1.0, 3.0, "Hello & <you>\n--> there", w0, VT_ARRAY_LEN(w0)},
        {0.5, 0.75, "a&amp;b &lt;i&gt; x-->y 12", NULL, 0},
        {3600.001, 3601, "Caf\xc3\xa9 {\\an8}", w1, VT_ARRAY_LEN(w1)},
        {360000.0, 360001.999, "long\n42", NULL, 0},
    };
    struct vt_transcript t = {cues, VT_ARRAY_LEN(cues), "test"};
    static const char *const formats[] = {"vtt", "srt"};

    for (size_t f = 0; f < VT_ARRAY_LEN(formats); f++) {
        struct vt_sb sb = {0};
        struct vt_transcript back;
        char err[256] = "";
        int with_words = !strcmp(formats[f], "vtt");

        CHECK_INT(vt_captions_write(&t, formats[f], &sb), 0);
        CHECK_INT(vt_captions_parse(sb.buf, sb.len, formats[f], &back, err, sizeof(err)), 0);
        /* the parser sorts: the second cue comes first */
        CHECK_INT(back.n_cues, 4);
        if (back.n_cues == 4) {
            struct vt_cue sorted[] = {cues[1], cues[0], cues[2], cues[3]};
            struct vt_transcript want = {sorted, 4, ""};

            compare_transcripts(&want, &back, with_words);
        }
        if (!with_words)
            CHECK(back.cues[1].n_words == 0);
        vt_transcript_release(&back);
        vt_sb_release(&sb);
    }
}

VT_TEST(captions_write_formats)
{
    struct vt_cue cues[] = {
        {1.5, 2.0, "first\n\n  second   line  ", NULL, 0},
        {-3, NAN, "neg and nan", NULL, 0},
        {4, 3, "ends early --> oops", NULL, 0},
        {5, 6, " \n\t\n", NULL, 0},
        {7, 8, "ctl\x01\x7f\xff", NULL, 0},
    };
    struct vt_transcript t = {cues, VT_ARRAY_LEN(cues), "test"};
    struct vt_sb sb = {0};

    CHECK_INT(vt_captions_write(&t, "srt", &sb), 0);
    CHECK_STR(sb.buf,
              "1\n00:00:01,500 --> 00:00:02,000\nfirst\nsecond line\n\n"
              "2\n00:00:00,000 --> 00:00:00,000\nneg and nan\n\n"
              "3\n00:00:04,000 --> 00:00:04,000\nends early --> oops\n\n"
              "4\n00:00:07,000 --> 00:00:08,000\nctl\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\n\n");
    vt_sb_release(&sb);
    CHECK_INT(vt_captions_write(&t, "vtt", &sb), 0);
    CHECK(!strncmp(sb.buf, "WEBVTT\n\n00:00:01.500 --> 00:00:02.000\nfirst\nsecond line\n\n", 57));
    CHECK(strstr(sb.buf, "\nends early --&gt; oops\n") != NULL);
    vt_sb_release(&sb);
    CHECK_INT(vt_captions_write(&t, "txt", &sb), 0);
    CHECK_STR(sb.buf, "first second line\nneg and nan\nends early --> oops\n"
                      "ctl\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\n");
    vt_sb_release(&sb);
    CHECK_INT(vt_captions_write(&t, "ass", &sb), VT_EINVAL);
    CHECK(sb.len == 0);
    vt_sb_release(&sb);
}

/* A fresh directory under /tmp; caller removes it with vt_rm_rf and frees. */
static char *make_dir(void)
{
    char tmpl[] = "/tmp/vt-captions-test-XXXXXX";

    if (!mkdtemp(tmpl))
        return NULL;
    return vt_xstrdup(tmpl);
}

static void put_file(const char *dir, const char *name, const char *text)
{
    char *path = vt_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "wb");

    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    free(path);
}

static void check_sidecar(const char *dir, const char *media, const char *want)
{
    char *media_path = vt_xasprintf("%s/%s", dir, media), *got = NULL;
    char *want_path = want ? vt_xasprintf("%s/%s", dir, want) : NULL;
    int found = vt_captions_find_sidecar(media_path, &got);

    CHECK_INT(found, want != NULL);
    if (want)
        CHECK_STR(got, want_path);
    else
        CHECK(got == NULL);
    free(got);
    free(want_path);
    free(media_path);
}

VT_TEST(captions_sidecar)
{
    const char *srt = "1\n00:00:01,000 --> 00:00:02,000\nhi\n";
    char *dir = make_dir(), *path, err[512] = "";
    struct vt_transcript t;

    CHECK(dir != NULL);
    if (!dir)
        return;
    put_file(dir, "talk.mp4", "");
    check_sidecar(dir, "talk.mp4", NULL);
    check_sidecar(dir, "", NULL);
    put_file(dir, "clip.srt", srt);
    check_sidecar(dir, "clip.srt", NULL);
    put_file(dir, "talk.de.srt", srt);
    check_sidecar(dir, "talk.mp4", "talk.de.srt");
    put_file(dir, "talk.fr.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nsalut\n");
    check_sidecar(dir, "talk.mp4", "talk.fr.vtt");
    put_file(dir, "talk.en-US.srt", srt);
    check_sidecar(dir, "talk.mp4", "talk.en-US.srt");
    put_file(dir, "talk.notalang.vtt", srt);
    put_file(dir, "talkative.srt", srt);
    check_sidecar(dir, "talk.mp4", "talk.en-US.srt");
    put_file(dir, "talk.srt", srt);
    check_sidecar(dir, "talk.mp4", "talk.srt");
    /* a symlink and a directory named like the best sidecar are ignored */
    path = vt_xasprintf("%s/talk.vtt", dir);
    CHECK(symlink("/etc/passwd", path) == 0);
    check_sidecar(dir, "talk.mp4", "talk.srt");
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "symbolic link") != NULL);
    unlink(path);
    CHECK(mkdir(path, 0755) == 0);
    check_sidecar(dir, "talk.mp4", "talk.srt");
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "not a regular file") != NULL);
    rmdir(path);
    free(path);
    /* a fifo is refused without blocking */
    path = vt_xasprintf("%s/pipe.srt", dir);
    CHECK(mkfifo(path, 0644) == 0);
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), VT_EINVAL);
    free(path);
    /* loading: model names the format and the language */
    path = vt_xasprintf("%s/talk.fr.vtt", dir);
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:sidecar vtt (fr)");
    check_cue(&t, 0, 1.0, 2.0, "salut");
    vt_transcript_release(&t);
    free(path);
    path = vt_xasprintf("%s/talk.srt", dir);
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:sidecar srt");
    vt_transcript_release(&t);
    free(path);
    /* a WebVTT file named .srt is read as WebVTT */
    put_file(dir, "x.srt", "WEBVTT\n\n00:01.000 --> 00:02.000\n<00:01.500>word\n");
    path = vt_xasprintf("%s/x.srt", dir);
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:sidecar vtt");
    CHECK_INT(t.n_cues ? t.cues[0].n_words : 0, 1);
    vt_transcript_release(&t);
    free(path);
    /* errors name the file */
    put_file(dir, "bad.srt", "1\n00:00:01,000 --> 00:00:xx,000\nx\n");
    path = vt_xasprintf("%s/bad.srt", dir);
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "bad.srt': line 2: bad cue timing '00:00:01,000 --> 00:00:xx,000'") != NULL);
    CHECK(truncate(path, 50 << 20) == 0);
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "bad.srt': captions file too large (52428800 bytes, limit 16 MiB)") != NULL);
    free(path);
    vt_rm_rf(dir);
    free(dir);
}

VT_TEST(captions_stream)
{
    char *dir = make_dir(), *cmd, *media, err[512] = "";
    struct vt_transcript t;

    CHECK(dir != NULL);
    if (!dir)
        return;
    put_file(dir, "in.srt",
             "1\n00:00:00,500 --> 00:00:01,500\n<i>Hello</i> world\n\n"
             "2\n00:00:02,000 --> 00:00:03,000\nSecond\nline\n");
    cmd = vt_xasprintf(
        "ffmpeg -nostdin -v error -y -f lavfi -i color=black:s=64x64:d=4 -i '%s/in.srt' "
        "-c:v mpeg4 -c:s srt -metadata:s:s:0 language=fra '%s/a.mkv' && "
        "ffmpeg -nostdin -v error -y -f lavfi -i color=black:s=64x64:d=1 -c:v mpeg4 "
        "'%s/b.mkv'",
        dir, dir, dir);
    CHECK(system(cmd) == 0);
    free(cmd);
    media = vt_xasprintf("%s/a.mkv", dir);
    CHECK_INT(vt_captions_from_stream(media, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:embedded subrip (fra)");
    CHECK_INT(t.n_cues, 2);
    check_cue(&t, 0, 0.5, 1.5, "Hello world");
    check_cue(&t, 1, 2.0, 3.0, "Second\nline");
    vt_transcript_release(&t);
    /* the import prefers the sidecar */
    put_file(dir, "a.srt", "1\n00:00:05,000 --> 00:00:06,000\nfrom the side\n");
    CHECK_INT(vt_captions_import(media, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:sidecar srt");
    vt_transcript_release(&t);
    /* a broken sidecar falls back to the stream */
    put_file(dir, "a.srt", "garbage\n");
    CHECK_INT(vt_captions_import(media, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:embedded subrip (fra)");
    vt_transcript_release(&t);
    free(media);
    media = vt_xasprintf("%s/b.mkv", dir);
    CHECK_INT(vt_captions_from_stream(media, &t, err, sizeof(err)), VT_SKIP);
    CHECK_STR(err, "no text subtitle stream");
    CHECK_INT(vt_captions_import(media, &t, err, sizeof(err)), VT_SKIP);
    CHECK_STR(err, "no captions: no text subtitle stream");
    put_file(dir, "b.vtt", "WEBVTT\n\n00:61.000 --> 00:62.000\nx\n");
    CHECK_INT(vt_captions_import(media, &t, err, sizeof(err)), VT_SKIP);
    CHECK(strstr(err, "b.vtt': line 3: bad cue timing") != NULL);
    CHECK(strstr(err, "; no text subtitle stream") != NULL);
    free(media);
    vt_rm_rf(dir);
    free(dir);
}

VT_TEST(captions_json3_words)
{
    /* automatic captions as YouTube sends them: a window definition, word offsets, an
     * "aAppend" line break, and events that overlap the next one */
    const char *j3 = "{\"wireMagic\":\"pb3\",\"pens\":[{}],\"events\":["
                     "{\"tStartMs\":0,\"dDurationMs\":5000,\"id\":1,\"wpWinPosId\":1},"
                     "{\"tStartMs\":1000,\"dDurationMs\":3000,\"wWinId\":1,\"segs\":["
                     "{\"utf8\":\"hello\",\"acAsrConf\":0},"
                     "{\"utf8\":\" big world\",\"tOffsetMs\":480,\"acAsrConf\":0},"
                     "{\"utf8\":\" again\",\"tOffsetMs\":1200}]},"
                     "{\"tStartMs\":2500,\"wWinId\":1,\"aAppend\":1,\"segs\":[{\"utf8\":\"\\n\"}]},"
                     "{\"tStartMs\":2500,\"dDurationMs\":2000,\"wWinId\":1,\"segs\":["
                     "{\"utf8\":\"next\"},{\"utf8\":\" line\",\"tOffsetMs\":500}]}]}";
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(parse(j3, NULL, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:json3");
    CHECK_INT(t.n_cues, 2);
    check_cue(&t, 0, 1.0, 2.5, "hello big world again");
    check_cue(&t, 1, 2.5, 4.5, "next line");
    if (t.n_cues == 2) {
        CHECK_INT(t.cues[0].n_words, 4);
        check_word(&t.cues[0], 0, "hello", 1.0, 1.48);
        check_word(&t.cues[0], 1, "big", 1.48, 1.84);
        check_word(&t.cues[0], 2, "world", 1.84, 2.2);
        check_word(&t.cues[0], 3, "again", 2.2, 2.5);
        CHECK_INT(t.cues[1].n_words, 2);
        check_word(&t.cues[1], 0, "next", 2.5, 3.0);
        check_word(&t.cues[1], 1, "line", 3.0, 4.5);
    }
    vt_transcript_release(&t);
}

VT_TEST(captions_json3_manual)
{
    /* manual captions: one seg per event, no offsets; a BOM and white space before '{'; the
     * text is literal (no markup), lines kept, spaces collapsed */
    const char *j3 = "\xef\xbb\xbf \n{\"events\":["
                     "{\"tStartMs\":4000,\"dDurationMs\":1000,\"segs\":[{\"utf8\":\"second\"}]},"
                     "{\"tStartMs\":500,\"dDurationMs\":1500,\"segs\":"
                     "[{\"utf8\":\"  Hello\\n\\nworld   &amp; <i>x</i>\"},{\"utf8\":\"!\"}]},"
                     "{\"tStartMs\":9000,\"segs\":[{\"utf8\":\"no duration\"}]},"
                     "{\"tStartMs\":9500,\"dDurationMs\":100,\"segs\":[{\"utf8\":\"x\"}]},"
                     "{\"tStartMs\":20000,\"segs\":[{\"utf8\":\"last, open\"}]}]}";
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(parse(j3, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 5);
    check_cue(&t, 0, 0.5, 2.0, "Hello\nworld &amp; <i>x</i>!");
    check_cue(&t, 1, 4.0, 5.0, "second");
    check_cue(&t, 2, 9.0, 9.5, "no duration");
    check_cue(&t, 3, 9.5, 9.6, "x");
    check_cue(&t, 4, 20.0, 25.0, "last, open");
    for (size_t i = 0; i < t.n_cues; i++)
        CHECK(t.cues[i].words == NULL && t.cues[i].n_words == 0);
    vt_transcript_release(&t);
    /* the hint works too, and a WebVTT file is never taken for json3 */
    CHECK_INT(parse("{\"events\":[{\"tStartMs\":1,\"dDurationMs\":1,\"segs\":[{\"utf8\":\"a\"}]}]}",
                    "json3", &t, err, sizeof(err)),
              0);
    CHECK_INT(t.n_cues, 1);
    vt_transcript_release(&t);
    CHECK_INT(parse("WEBVTT\n\n00:01.000 --> 00:02.000\n{x}\n", NULL, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:vtt");
    vt_transcript_release(&t);
}

VT_TEST(captions_json3_overlap)
{
    /* unsorted, overlapping, one inside another; cues are clipped to the next later start,
     * words clipped with them; events with the same start keep their own ends */
    const char *j3 = "{\"events\":["
                     "{\"tStartMs\":3000,\"dDurationMs\":4000,\"segs\":[{\"utf8\":\"c\"}]},"
                     "{\"tStartMs\":1000,\"dDurationMs\":9000,\"segs\":[{\"utf8\":\"a\"},"
                     "{\"utf8\":\" late\",\"tOffsetMs\":5000}]},"
                     "{\"tStartMs\":3000,\"dDurationMs\":500,\"segs\":[{\"utf8\":\"b\"}]},"
                     "{\"tStartMs\":6000,\"dDurationMs\":100,\"segs\":[{\"utf8\":\"d\"}]}]}";
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(parse(j3, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 4);
    check_cue(&t, 0, 1.0, 3.0, "a late");
    check_cue(&t, 1, 3.0, 3.5, "b");
    check_cue(&t, 2, 3.0, 6.0, "c");
    check_cue(&t, 3, 6.0, 6.1, "d");
    if (t.n_cues == 4) {
        check_word(&t.cues[0], 0, "a", 1.0, 3.0);
        check_word(&t.cues[0], 1, "late", 3.0, 3.0);
    }
    for (size_t i = 0; i + 1 < t.n_cues; i++)
        CHECK(t.cues[i].end_s <= t.cues[i + 1].start_s ||
              t.cues[i].start_s == t.cues[i + 1].start_s);
    vt_transcript_release(&t);
}

VT_TEST(captions_json3_hostile)
{
    static const char bad_utf8[] =
        "{\"events\":[{\"tStartMs\":0,\"dDurationMs\":10,\"segs\":[{\"utf8\":\"caf\xc3 \xff\\u0000"
        "\\u0007x\\ud800\\r\"},{\"utf8\":5},{\"x\":1},7,{\"utf8\":\" w\",\"tOffsetMs\":20},"
        "{\"utf8\":\" z\",\"tOffsetMs\":-5},{\"utf8\":\"!\",\"tOffsetMs\":1e300}]},"
        "{\"tStartMs\":-1,\"dDurationMs\":10,\"segs\":[{\"utf8\":\"negative\"}]},"
        "{\"tStartMs\":1e300,\"segs\":[{\"utf8\":\"huge\"}]},"
        "{\"tStartMs\":\"5\",\"segs\":[{\"utf8\":\"string time\"}]},"
        "{\"tStartMs\":50,\"dDurationMs\":-10,\"segs\":[{\"utf8\":\"negative duration\"}]},"
        "{\"tStartMs\":60,\"dDurationMs\":10,\"segs\":{\"utf8\":\"segs not an array\"}},"
        "{\"tStartMs\":70,\"dDurationMs\":10,\"segs\":[{\"utf8\":\" \\n \\t\"}]}, null, 3]}";
    struct vt_transcript t;
    struct vt_sb sb = {0};
    char err[256] = "";

    CHECK_INT(vt_captions_parse(bad_utf8, sizeof(bad_utf8) - 1, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 1);
    check_cue(&t, 0, 0, 0.01, "caf\xef\xbf\xbd \xef\xbf\xbdx\xef\xbf\xbd w z!");
    if (t.n_cues == 1) {
        /* an offset past the end is clamped to it; negative or absurd ones are no offset */
        CHECK_INT(t.cues[0].n_words, 4);
        check_word(&t.cues[0], 0, "caf\xef\xbf\xbd", 0, 0.005);
        check_word(&t.cues[0], 1, "\xef\xbf\xbdx\xef\xbf\xbd", 0.005, 0.01);
        check_word(&t.cues[0], 2, "w", 0.01, 0.01);
        check_word(&t.cues[0], 3, "z!", 0.01, 0.01);
    }
    vt_transcript_release(&t);
    CHECK_INT(parse("{not json", NULL, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(!strncmp(err, "json3: line 1: not JSON: ", 25));
    CHECK_INT(parse("{\"events\":\"a\\\n\tb\"}", NULL, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(strchr(err, '\n') == NULL && strchr(err, '\t') == NULL);
    CHECK_INT(parse("{\"events\":{}}", NULL, &t, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "json3: no \"events\" array (not json3 captions)");
    CHECK_INT(parse("[]", "json3", &t, err, sizeof(err)), VT_EINVAL);
    CHECK_INT(parse("{\"events\":[{\"tStartMs\":0,\"dDurationMs\":5000,\"id\":1}]}", NULL, &t, err,
                    sizeof(err)),
              VT_SKIP);
    CHECK_STR(err, "no cues in captions");
    CHECK(t.n_cues == 0 && t.cues == NULL);
    /* deep nesting: jansson's depth limit */
    vt_sb_adds(&sb, "{\"events\":");
    for (int i = 0; i < 100000; i++)
        vt_sb_addc(&sb, '[');
    CHECK_INT(vt_captions_parse(sb.buf, sb.len, NULL, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "depth") != NULL);
    vt_sb_release(&sb);
    /* more than VT_CAPTIONS_MAX_CUES events */
    vt_sb_adds(&sb, "{\"events\":[");
    for (int i = 0; i <= VT_CAPTIONS_MAX_CUES; i++)
        vt_sb_addf(&sb, "%s{\"tStartMs\":%d,\"segs\":[{\"utf8\":\"a\"}]}", i ? "," : "", i);
    vt_sb_adds(&sb, "]}");
    CHECK(sb.len < VT_CAPTIONS_MAX_BYTES);
    CHECK_INT(vt_captions_parse(sb.buf, sb.len, NULL, &t, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "json3: more than 200000 cues");
    CHECK(t.n_cues == 0 && t.cues == NULL);
    vt_sb_release(&sb);
}

VT_TEST(captions_json3_sidecar)
{
    const char *j3 = "{\"events\":[{\"tStartMs\":1000,\"dDurationMs\":1000,\"segs\":["
                     "{\"utf8\":\"hi\"},{\"utf8\":\" there\",\"tOffsetMs\":500}]}]}";
    char *dir = make_dir(), *path, err[512] = "";
    struct vt_transcript t;

    CHECK(dir != NULL);
    if (!dir)
        return;
    put_file(dir, "talk.mp4", "");
    put_file(dir, "talk.de.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nhallo\n");
    put_file(dir, "talk.en.json3", j3);
    check_sidecar(dir, "talk.mp4", "talk.en.json3");
    put_file(dir, "talk.en.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nhi\n");
    check_sidecar(dir, "talk.mp4", "talk.en.vtt");
    path = vt_xasprintf("%s/talk.en.json3", dir);
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:sidecar json3 (en)");
    check_cue(&t, 0, 1.0, 2.0, "hi there");
    CHECK_INT(t.n_cues ? t.cues[0].n_words : 0, 2);
    vt_transcript_release(&t);
    free(path);
    /* errors name the file */
    put_file(dir, "bad.json3", "{\"events\":");
    path = vt_xasprintf("%s/bad.json3", dir);
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "bad.json3': line 1: not JSON") != NULL);
    free(path);
    vt_rm_rf(dir);
    free(dir);
}

/* utf8 converted to enc with iconv (a BOM first when bom is given); caller frees. */
static char *encode(const char *utf8, const char *enc, const char *bom, size_t bom_len, size_t *len)
{
    iconv_t cd = iconv_open(enc, "UTF-8");
    size_t in_left = strlen(utf8), cap = in_left * 4 + 16, out_left;
    char *out = vt_xmalloc(cap), *in = (char *)utf8, *op;

    CHECK(cd != (iconv_t)-1);
    memcpy(out, bom, bom_len);
    op = out + bom_len;
    out_left = cap - bom_len;
    CHECK(cd != (iconv_t)-1 && iconv(cd, &in, &in_left, &op, &out_left) != (size_t)-1);
    if (cd != (iconv_t)-1)
        iconv_close(cd);
    *len = (size_t)(op - out);
    return out;
}

VT_TEST(captions_encodings)
{
    static const char *const fr[] = {
        "\xc3\x87"
        "a a \xc3\xa9t\xc3\xa9 l'\xc3\xa9t\xc3\xa9 le plus chaud : o\xc3\xb9 \xc3\xaates-vous ?",
        "D\xc3\xa9j\xc3\xa0 pr\xc3\xaat, na\xc3\xaf"
        "f gar\xc3\xa7on, No\xc3\xabl \xc3\xa0 F\xc3\xa9"
        "camp.",
        "\xc2\xab B\xc5\x93uf \xc3\xa0 la fran\xc3\xa7"
        "aise \xc2\xbb pour 12 \xe2\x82\xac.",
    };
    static const char *const zh[] = {
        "\xe6\x88\x91\xe4\xbb\xac\xe4\xbb\x8a\xe5\xa4\xa9\xe5\x8e\xbb\xe5\x85\xac\xe5\x9b\xad\xe6"
        "\x95\xa3\xe6\xad\xa5\xef\xbc\x8c\xe5\xa4\xa9\xe6\xb0\x94\xe5\xbe\x88\xe5\xa5\xbd\xe3\x80"
        "\x82",
        "\xe4\xbd\xa0\xe5\xa5\xbd\xe5\x90\x97\xef\xbc\x9f\xe6\x88\x91\xe5\xbe\x88\xe5\xa5\xbd\xef"
        "\xbc\x8c\xe8\xb0\xa2\xe8\xb0\xa2\xe4\xbd\xa0\xe7\x9a\x84\xe5\x85\xb3\xe5\xbf\x83\xe3\x80"
        "\x82",
        "\xe8\xbf\x99\xe9\x83\xa8\xe7\x94\xb5\xe5\xbd\xb1\xe7\x9a\x84\xe5\xad\x97\xe5\xb9\x95\xe6"
        "\x98\xaf\xe4\xb8\xad\xe6\x96\x87\xe7\x9a\x84\xe3\x80\x82",
    };
    static const char *const ja[] = {
        "\xe3\x81\x93\xe3\x82\x93\xe3\x81\xab\xe3\x81\xa1\xe3\x81\xaf\xe3\x80\x81\xe5\x85\x83\xe6"
        "\xb0\x97\xe3\x81\xa7\xe3\x81\x99\xe3\x81\x8b\xef\xbc\x9f\xe4\xbb\x8a\xe6\x97\xa5\xe3\x81"
        "\xaf\xe3\x81\x84\xe3\x81\x84\xe5\xa4\xa9\xe6\xb0\x97\xe3\x81\xa7\xe3\x81\x99\xe3\x81\xad"
        "\xe3\x80\x82",
        "\xe3\x81\x93\xe3\x81\xae\xe6\x98\xa0\xe7\x94\xbb\xe3\x81\xae\xe5\xad\x97\xe5\xb9\x95\xe3"
        "\x81\xaf\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xa7\xe3\x81\x99\xe3\x80\x82\xe3\x81"
        "\x82\xe3\x82\x8a\xe3\x81\x8c\xe3\x81\xa8\xe3\x81\x86\xe3\x80\x82",
        "\xe6\x98\x8e\xe6\x97\xa5\xe3\x81\xbe\xe3\x81\x9f\xe4\xbc\x9a\xe3\x81\x84\xe3\x81\xbe\xe3"
        "\x81\x97\xe3\x82\x87\xe3\x81\x86\xe3\x80\x82",
    };
    /* GBK beyond GB2312: U+9555 (the "rong" of Zhu Rongji) and U+7881 */
    static const char *const gbk[] = {
        "\xe6\x9c\xb1\xe9\x95\x95\xe5\x9f\xba\xe6\x80\xbb\xe7\x90\x86\xe4\xbb\x8a\xe5\xa4\xa9\xe8"
        "\xae\xb2\xe8\xaf\x9d\xe3\x80\x82",
        zh[1],
        zh[2],
    };
    static const struct {
        const char *enc, *bom, *format;
        size_t bom_len;
        const char *const *lines;
        const char *model;
    } cases[] = {
        {"WINDOWS-1252", "", NULL, 0, fr, "captions:srt (windows-1252)"},
        {"ISO-8859-15", "", NULL, 0, fr, "captions:srt (iso-8859-15)"},
        {"GB2312", "", NULL, 0, zh, "captions:srt (gb18030)"},
        {"GBK", "", NULL, 0, gbk, "captions:srt (gb18030)"},
        {"SHIFT_JIS", "", NULL, 0, ja, "captions:srt (shift_jis)"},
        {"UTF-16LE", "\xff\xfe", NULL, 2, zh, "captions:srt (utf-16le)"},
        {"UTF-16BE", "\xfe\xff", NULL, 2, fr, "captions:srt (utf-16be)"},
        {"UTF-16LE", "", NULL, 0, ja, "captions:srt (utf-16le)"},
        {"UTF-16BE", "", NULL, 0, zh, "captions:srt (utf-16be)"},
        {"UTF-16LE", "", "vtt", 0, fr, "captions:vtt (utf-16le)"},
        {"UTF-8", "\xef\xbb\xbf", NULL, 3, ja, "captions:srt"},
        {"UTF-8", "", NULL, 0, zh, "captions:srt"},
    };

    for (size_t k = 0; k < VT_ARRAY_LEN(cases); k++) {
        int vtt = cases[k].format != NULL;
        char *text = vt_xasprintf(
            "%s1\r\n00:00:01%c000 --> 00:00:03%c000\r\n%s\r\n\r\n2\r\n00:00:03%c500 --> "
            "00:00:05%c000\r\n%s\r\n\r\n3\r\n00:00:06%c000 --> 00:00:08%c000\r\n%s\r\n",
            vtt ? "WEBVTT\r\n\r\n" : "", vtt ? '.' : ',', vtt ? '.' : ',', cases[k].lines[0],
            vtt ? '.' : ',', vtt ? '.' : ',', cases[k].lines[1], vtt ? '.' : ',', vtt ? '.' : ',',
            cases[k].lines[2]);
        size_t len;
        char *data = encode(text, cases[k].enc, cases[k].bom, cases[k].bom_len, &len), err[256];
        struct vt_transcript t;

        CHECK_INT(vt_captions_parse(data, len, cases[k].format, &t, err, sizeof(err)), 0);
        CHECK_INT(t.n_cues, 3);
        check_cue(&t, 0, 1.0, 3.0, cases[k].lines[0]);
        check_cue(&t, 1, 3.5, 5.0, cases[k].lines[1]);
        check_cue(&t, 2, 6.0, 8.0, cases[k].lines[2]);
        CHECK_STR(t.model, cases[k].model);
        vt_transcript_release(&t);
        free(data);
        free(text);
    }
}

VT_TEST(captions_encoding_sidecar)
{
    /* U+2019 and U+20AC are Windows-1252 only: 0x92 and 0x80 */
    const char *line =
        "L\xe2\x80\x99\xc3\xa9t\xc3\xa9 \xc3\xa0 No\xc3\xabl, o\xc3\xb9 \xc3\xaates-vous ? "
        "\xc3\x87"
        "a va tr\xc3\xa8s bien, merci. Voil\xc3\xa0 le caf\xc3\xa9 \xc3\xa0 2 \xe2\x82\xac.";
    char *text = vt_xasprintf("1\n00:00:01,000 --> 00:00:02,000\n%s\n", line);
    char *dir = make_dir(), *path, *old, err[512] = "", *data;
    struct vt_transcript t;
    size_t len;
    FILE *f;

    CHECK(dir != NULL);
    if (!dir)
        return;
    data = encode(text, "WINDOWS-1252", "", 0, &len);
    path = vt_xasprintf("%s/talk.fr.srt", dir);
    f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, len, f) == len);
    if (f)
        fclose(f);
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:sidecar srt (fr, windows-1252)");
    check_cue(&t, 0, 1.0, 2.0, line);
    vt_transcript_release(&t);
    old = path;
    path = vt_xasprintf("%s/talk.srt", dir);
    CHECK(rename(old, path) == 0);
    free(old);
    CHECK_INT(vt_captions_load_file(path, &t, err, sizeof(err)), 0);
    CHECK_STR(t.model, "captions:sidecar srt (windows-1252)");
    vt_transcript_release(&t);
    free(path);
    free(data);
    free(text);
    vt_rm_rf(dir);
    free(dir);
}

VT_TEST(captions_vtt_spec)
{
    /* what the W3C parser keeps and drops, each a difference from the old line reader */
    static const char vtt[] =
        "WEBVTT\n\n"
        "00:00:02.000 --> 00:00:01.000\nends before it starts\n\n"
        "\f00:00:03.000\f-->\f00:00:04.000\f\nform feeds\n\n"
        "00:00:05.000 --> 00:00:06.000line:40%\nsettings without a space\n\n"
        "00:00:07.000 --> 00:00:08.000\0align:end\nNUL before a setting\n\n"
        "00:00:09.000 --> 00:00:10.000\nfirst cue\n00:00:11.000 --> 00:00:12.000\nnext cue\n\n"
        "00:00:13.000 --> 00:00:14.000\ntext\nfoo --> bar\nnot text\n\n"
        "00:00:00 --> 00:00:01.000\nno fraction\n\n"
        "00:0:00.000 --> 00:00:01.000\none-digit minutes\n\n"
        "00:00:00.00 --> 00:00:01.000\ntwo-digit fraction\n\n"
        "000:00.000 --> 00:01.000\nthree digits, no hours\n\n"
        "00:00:00,000 --> 00:00:01,000\ncomma\n\n"
        "00:00:15.000 --> 00:00:16.000\nnul\0byte <b>broken <i unclosed\n\n"
        "00:00:17.000 --> 00:00:18.000\n&copy; &notin; &eacute &amp;amp; &#x263A; a < b\n";
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(vt_captions_parse(vtt, sizeof(vtt) - 1, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 9);
    check_cue(&t, 0, 2.0, 2.0, "ends before it starts");
    check_cue(&t, 1, 3.0, 4.0, "form feeds");
    check_cue(&t, 2, 5.0, 6.0, "settings without a space");
    check_cue(&t, 3, 7.0, 8.0, "NUL before a setting");
    check_cue(&t, 4, 9.0, 10.0, "first cue");
    check_cue(&t, 5, 11.0, 12.0, "next cue");
    check_cue(&t, 6, 13.0, 14.0, "text");
    check_cue(&t, 7, 15.0, 16.0,
              "nul\xef\xbf\xbd"
              "byte broken");
    check_cue(&t, 8, 17.0, 18.0, "\xc2\xa9 \xe2\x88\x89 \xc3\xa9 &amp; \xe2\x98\xba a");
    vt_transcript_release(&t);
    /* no valid signature: not WebVTT */
    CHECK_INT(parse("WEBVTTX\n\n00:01.000 --> 00:02.000\nx\n", "vtt", &t, err, sizeof(err)),
              VT_EINVAL);
    CHECK_STR(err, "vtt: line 1: no WEBVTT signature (not WebVTT)");
    CHECK_INT(parse("00:01.000 --> 00:02.000\nx\n", "vtt", &t, err, sizeof(err)), VT_EINVAL);
    CHECK_INT(parse("\xef\xbb\xbfWEBVTT\tfile\n\n00:01.000 --> 00:02.000\nx\n", NULL, &t, err,
                    sizeof(err)),
              0);
    CHECK_STR(t.model, "captions:vtt");
    vt_transcript_release(&t);
}

VT_TEST(captions_srt_common)
{
    /* SubRip as FFmpeg and pysrt read it: text goes on after a blank line up to the next
     * number and timing line; numbers within the text stay */
    const char *srt = "1\n00:00:01,000 --> 00:00:02,000\nfirst\n\nafter a blank line\n\n\n42\n\n"
                      "2\n00:00:03,000 --> 00:00:04,000\nsecond\n\n\n"
                      "3\n00:00:05.000 --> 00:00:06.000\nthird &copy; &eacute &lt;3\n";
    struct vt_transcript t;
    char err[256] = "";

    CHECK_INT(parse(srt, NULL, &t, err, sizeof(err)), 0);
    CHECK_INT(t.n_cues, 3);
    check_cue(&t, 0, 1.0, 2.0, "first\nafter a blank line\n42");
    check_cue(&t, 1, 3.0, 4.0, "second");
    check_cue(&t, 2, 5.0, 6.0, "third \xc2\xa9 &eacute <3");
    vt_transcript_release(&t);
}

VT_TEST(captions_srt_export_raw)
{
    /* SubRip has no entities that players agree on: < > & stay as they are, except where
     * this reader would take them for markup */
    struct vt_cue cues[] = {
        {1, 2, "a < b > c, <3, 1 > 0 & x --> y", NULL, 0},
        {3, 4, "<i>literal tag</i> &amp;\n00:00:01,000 --> 00:00:02,000\n99:00 --> 5", NULL, 0},
    };
    struct vt_transcript t = {cues, VT_ARRAY_LEN(cues), "test"}, back;
    struct vt_sb sb = {0};
    char err[256] = "";

    CHECK_INT(vt_captions_write(&t, "srt", &sb), 0);
    CHECK_STR(sb.buf, "1\n00:00:01,000 --> 00:00:02,000\na < b > c, <3, 1 > 0 & x --> y\n\n"
                      "2\n00:00:03,000 --> 00:00:04,000\n"
                      "&lt;i>literal tag&lt;/i> &amp;amp;\n00:00:01,000 --&gt; 00:00:02,000\n"
                      "99:00 --&gt; 5\n\n");
    CHECK_INT(vt_captions_parse(sb.buf, sb.len, "srt", &back, err, sizeof(err)), 0);
    CHECK_INT(back.n_cues, 2);
    check_cue(&back, 0, 1, 2, cues[0].text);
    check_cue(&back, 1, 3, 4, cues[1].text);
    vt_transcript_release(&back);
    vt_sb_release(&sb);
}
