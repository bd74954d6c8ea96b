/*
 * The W3C WebVTT parsing tests of web-platform-tests, copied into tests/data/webvtt-wpt (see
 * SOURCE there), run through vt_captions_parse:
 *  - file-parsing/NAME.test: a header, the JavaScript assertions, "===" and the file, its
 *    escapes (\x20 \x00 \t \f \r \n \uFFFD, a backslash ending a line) undone as wpt's
 *    tools/build.py does. The assertions on cues.length and on cues[i].text, .startTime and
 *    .endTime are checked (ids and settings are not kept by vidtheque);
 *  - cue-text-parsing/NAME.dat: html5lib-style cases, "#data" a cue text and
 *    "#document-fragment" its tree; the text nodes in order are the cue's text.
 * A transcript differs from a TextTrack in documented ways, applied to the expectations:
 * cue text has its markup removed and its white space collapsed (lines trimmed, empty lines
 * dropped), U+00A0 is a space and U+200E/U+200F are dropped, a cue that ends before it
 * starts ends where it starts, and cues left without text are not kept.
 */
#include "base/util.h"
#include "captions/captions.h"
#include "harness.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WPT_DIR "tests/data/webvtt-wpt"

/* What the forEach loops of two .test files assert, written out as plain assertions. */
static const struct {
    const char *name, *js;
} expanded[] = {
    {"timings-negative", "assert_equals(cues[0].text, 'text1');\n"
                         "assert_equals(cues[0].startTime, 0);\n"
                         "assert_equals(cues[0].endTime, 0);\n"
                         "assert_equals(cues[1].text, 'text2');\n"
                         "assert_equals(cues[1].startTime, 1);\n"
                         "assert_equals(cues[1].endTime, 0.999);\n"
                         "assert_equals(cues[2].text, 'text3');\n"
                         "assert_equals(cues[2].startTime, 60);\n"
                         "assert_equals(cues[2].endTime, 59.999);\n"
                         "assert_equals(cues[3].text, 'text4');\n"
                         "assert_equals(cues[3].startTime, 3600);\n"
                         "assert_equals(cues[3].endTime, 3599.999);\n"},
    {"timings-omitted-hours", "assert_equals(cues[0].text, 'text1');\n"
                              "assert_equals(cues[0].startTime, 0);\n"
                              "assert_equals(cues[0].endTime, 1);\n"
                              "assert_equals(cues[1].text, 'text2');\n"
                              "assert_equals(cues[1].startTime, 0);\n"
                              "assert_equals(cues[1].endTime, 1);\n"
                              "assert_equals(cues[2].text, 'text3');\n"
                              "assert_equals(cues[2].startTime, 0);\n"
                              "assert_equals(cues[2].endTime, 1);\n"},
};

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct vt_sb sb = {0};
    char buf[4096];
    size_t n;

    if (!f)
        return NULL;
    vt_sb_add(&sb, "", 0);
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        vt_sb_add(&sb, buf, n);
    fclose(f);
    *len = sb.len;
    return vt_sb_detach(&sb);
}

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static void put_utf8(struct vt_sb *sb, unsigned cp)
{
    if (cp < 0x80) {
        vt_sb_addc(sb, (char)cp);
    } else if (cp < 0x800) {
        vt_sb_addc(sb, (char)(0xc0 | cp >> 6));
        vt_sb_addc(sb, (char)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        vt_sb_addc(sb, (char)(0xe0 | cp >> 12));
        vt_sb_addc(sb, (char)(0x80 | ((cp >> 6) & 0x3f)));
        vt_sb_addc(sb, (char)(0x80 | (cp & 0x3f)));
    } else {
        vt_sb_addc(sb, (char)(0xf0 | cp >> 18));
        vt_sb_addc(sb, (char)(0x80 | ((cp >> 12) & 0x3f)));
        vt_sb_addc(sb, (char)(0x80 | ((cp >> 6) & 0x3f)));
        vt_sb_addc(sb, (char)(0x80 | (cp & 0x3f)));
    }
}

/* \uXXXX at s (n bytes), a surrogate pair joined: the code point and its length, or 0. */
static size_t u_escape(const char *s, size_t n, unsigned *cp)
{
    unsigned v = 0;

    if (n < 6 || s[0] != '\\' || s[1] != 'u')
        return 0;
    for (int i = 2; i < 6; i++) {
        if (hexval(s[i]) < 0)
            return 0;
        v = v * 16 + (unsigned)hexval(s[i]);
    }
    *cp = v;
    if (v >= 0xd800 && v <= 0xdbff) {
        unsigned lo;

        if (u_escape(s + 6, n - 6, &lo) == 6 && lo >= 0xdc00 && lo <= 0xdfff) {
            *cp = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
            return 12;
        }
    }
    return 6;
}

/*
 * The escapes of a .test file's WebVTT part, as its tools/build.py undoes them (Python's
 * unicode_escape; the files use no octal escapes).
 */
static char *unescape_vtt(const char *s, size_t n, size_t *out_len)
{
    struct vt_sb sb = {0};

    vt_sb_add(&sb, "", 0);
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t k;

        if (s[i] != '\\' || i + 1 >= n) {
            vt_sb_addc(&sb, s[i++]);
            continue;
        }
        switch (s[i + 1]) {
        case 'n':
            vt_sb_addc(&sb, '\n');
            break;
        case 'r':
            vt_sb_addc(&sb, '\r');
            break;
        case 't':
            vt_sb_addc(&sb, '\t');
            break;
        case 'f':
            vt_sb_addc(&sb, '\f');
            break;
        case 'v':
            vt_sb_addc(&sb, '\v');
            break;
        case '\\':
            vt_sb_addc(&sb, '\\');
            break;
        case '\n':
            break;
        case 'x':
            if (i + 3 < n && hexval(s[i + 2]) >= 0 && hexval(s[i + 3]) >= 0) {
                put_utf8(&sb, (unsigned)(hexval(s[i + 2]) * 16 + hexval(s[i + 3])));
                i += 4;
                continue;
            }
            vt_sb_addc(&sb, '\\');
            i++;
            continue;
        case 'u':
            k = u_escape(s + i, n - i, &cp);
            if (k) {
                put_utf8(&sb, cp);
                i += k;
                continue;
            }
            /* fall through */
        default:
            vt_sb_addc(&sb, '\\');
            i++;
            continue;
        }
        i += 2;
    }
    *out_len = sb.len;
    return vt_sb_detach(&sb);
}

/* The JavaScript string literal at *p ('...' or "..."): its value, *p moved past it. */
static char *js_string(const char **p)
{
    const char *s = *p;
    char q = *s++;
    struct vt_sb sb = {0};

    vt_sb_add(&sb, "", 0);
    while (*s && *s != q) {
        unsigned cp;
        size_t k = u_escape(s, strlen(s), &cp);

        if (k) {
            put_utf8(&sb, cp);
            s += k;
        } else if (*s == '\\' && s[1]) {
            vt_sb_addc(&sb, s[1] == 'n' ? '\n' : s[1]);
            s += 2;
        } else {
            vt_sb_addc(&sb, *s++);
        }
    }
    *p = *s ? s + 1 : s;
    return vt_sb_detach(&sb);
}

/*
 * Expected text as a transcript holds it: U+00A0 a space, U+200E/U+200F dropped, control
 * characters U+FFFD, each line's white space collapsed and trimmed, empty lines dropped.
 */
static char *as_transcript_text(const char *s)
{
    struct vt_sb sb = {0};
    int sp = 0, nl = 0;

    vt_sb_add(&sb, "", 0);
    for (; *s; s++) {
        if (!strncmp(s, "\xc2\xa0", 2)) {
            sp = 1;
            s++;
        } else if (!strncmp(s, "\xe2\x80\x8e", 3) || !strncmp(s, "\xe2\x80\x8f", 3)) {
            s += 2;
        } else if (*s == '\n') {
            nl = 1;
        } else if (*s == ' ' || *s == '\t' || *s == '\f' || *s == '\r' || *s == '\v') {
            sp = 1;
        } else {
            if (sb.len && (sp || nl))
                vt_sb_addc(&sb, nl ? '\n' : ' ');
            sp = nl = 0;
            if ((unsigned char)*s < 0x20 || *s == 0x7f)
                vt_sb_adds(&sb, "\xef\xbf\xbd");
            else
                vt_sb_addc(&sb, *s);
        }
    }
    return vt_sb_detach(&sb);
}

struct expect {
    long count;
    char *text[64];
    double start[64], end[64];
    int has_start[64], has_end[64];
};

/* The assertions of js that vidtheque can check, into e. */
static void read_asserts(const char *js, struct expect *e)
{
    for (const char *p = js; (p = strstr(p, "assert_equals(cues")); p++) {
        const char *q = p + strlen("assert_equals(cues");
        long i;
        char *endp;

        if (!strncmp(q, ".length, ", 9)) {
            e->count = strtol(q + 9, NULL, 10);
            continue;
        }
        if (*q != '[')
            continue;
        i = strtol(q + 1, &endp, 10);
        if (endp == q + 1 || *endp != ']' || i < 0 || i >= 64)
            continue;
        q = endp + 1;
        if (!strncmp(q, ".text, ", 7)) {
            q += 7;
            free(e->text[i]);
            e->text[i] = js_string(&q);
        } else if (!strncmp(q, ".startTime, ", 12)) {
            e->start[i] = strtod(q + 12, NULL);
            e->has_start[i] = 1;
        } else if (!strncmp(q, ".endTime, ", 10)) {
            e->end[i] = strtod(q + 10, NULL);
            e->has_end[i] = 1;
        }
    }
}

/* One file-parsing case: 1 when it agrees (a message for each difference otherwise). */
static int run_file_case(const char *name, const char *test, size_t len)
{
    const char *sep = strstr(test, "\n===\n");
    struct expect e = {.count = -1};
    struct vt_transcript t = {0};
    char err[256] = "", *js, *vtt;
    size_t vtt_len;
    int rc, ok = 1;

    if (!sep) {
        printf("  %s: no '===' line\n", name);
        return 0;
    }
    js = vt_xasprintf("%.*s", (int)(sep - test), test);
    for (size_t i = 0; i < VT_ARRAY_LEN(expanded); i++)
        if (!strcmp(name, expanded[i].name))
            read_asserts(expanded[i].js, &e);
    read_asserts(js, &e);
    vtt = unescape_vtt(sep + 5, len - (size_t)(sep + 5 - test), &vtt_len);
    rc = vt_captions_parse(vtt, vtt_len, "vtt", &t, err, sizeof(err));
    if (e.count < 0) {
        printf("  %s: no cues.length assertion\n", name);
        ok = 0;
    } else if (rc && !(e.count == 0 && rc == VT_SKIP)) {
        printf("  %s: parse failed (%d): %s\n", name, rc, err);
        ok = 0;
    } else if ((long)t.n_cues != e.count) {
        printf("  %s: %zu cues, expected %ld\n", name, t.n_cues, e.count);
        ok = 0;
    }
    for (size_t i = 0; ok && i < t.n_cues && i < 64; i++) {
        const struct vt_cue *c = &t.cues[i];
        double end_s = e.end[i] < e.start[i] ? e.start[i] : e.end[i];

        if (e.text[i]) {
            char *want = as_transcript_text(e.text[i]);

            if (strcmp(want, c->text)) {
                printf("  %s: cue %zu text \"%s\", expected \"%s\"\n", name, i, c->text, want);
                ok = 0;
            }
            free(want);
        }
        if (e.has_start[i] && (c->start_s < e.start[i] - 1e-9 || c->start_s > e.start[i] + 1e-9)) {
            printf("  %s: cue %zu starts at %.3f, expected %.3f\n", name, i, c->start_s,
                   e.start[i]);
            ok = 0;
        }
        if (e.has_end[i] && e.has_start[i] &&
            (c->end_s < end_s - 1e-9 || c->end_s > end_s + 1e-9)) {
            printf("  %s: cue %zu ends at %.3f, expected %.3f\n", name, i, c->end_s, end_s);
            ok = 0;
        }
    }
    vt_transcript_release(&t);
    for (int i = 0; i < 64; i++)
        free(e.text[i]);
    free(js);
    free(vtt);
    return ok;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the files in dir that end with ext, sorted; their count in *n. */
static char **list_dir(const char *dir, const char *ext, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t cap = 0;

    *n = 0;
    if (!d)
        return NULL;
    while ((de = readdir(d))) {
        size_t k = strlen(de->d_name), m = strlen(ext);

        if (k <= m || strcmp(de->d_name + k - m, ext))
            continue;
        vt_grow((void **)&names, &cap, *n + 1, sizeof(*names));
        names[(*n)++] = vt_xstrdup(de->d_name);
    }
    closedir(d);
    if (*n)
        qsort(names, *n, sizeof(*names), cmp_str);
    return names;
}

VT_TEST(captions_wpt_file_parsing)
{
    size_t n, passed = 0;
    char **names = list_dir(WPT_DIR "/file-parsing", ".test", &n);

    CHECK(n >= 11); /* run from the repository's root */
    for (size_t i = 0; i < n; i++) {
        char *path = vt_xasprintf("%s/file-parsing/%s", WPT_DIR, names[i]), *test;
        size_t len = 0;

        names[i][strlen(names[i]) - 5] = '\0';
        test = slurp(path, &len);
        CHECK(test != NULL);
        if (test && run_file_case(names[i], test, len))
            passed++;
        free(test);
        free(path);
        free(names[i]);
    }
    free(names);
    CHECK_INT(passed, n);
}

/* The cases of a .dat file: data and expected text, each NULL-terminated list in pairs. */
static size_t read_dat(const char *text, char ***cases)
{
    size_t n = 0, cap = 0;

    *cases = NULL;
    for (const char *p = strstr(text, "#data\n"); p; p = strstr(p, "\n#data\n")) {
        const char *data, *data_end, *frag;
        struct vt_sb want = {0};

        p = strchr(p + 1, '\n') + 1;
        data = p;
        data_end = strstr(data, "\n#errors\n");
        frag = strstr(data, "\n#document-fragment\n");
        if (!data_end || !frag)
            break;
        vt_sb_add(&want, "", 0);
        /* the text nodes: lines | "..." at any depth */
        for (const char *l = frag + strlen("\n#document-fragment\n"); *l == '|';) {
            const char *q = l + 1, *nl = strchr(l, '\n');

            while (*q == ' ')
                q++;
            if (*q == '"') {
                const char *z = nl ? nl : q + strlen(q);
                struct vt_sb lit = {0};

                /* the literal up to the line's last '"', \uXXXX decoded */
                while (z > q + 1 && z[-1] != '"')
                    z--;
                vt_sb_add(&lit, q + 1, (size_t)(z - q - 2 > 0 ? z - q - 2 : 0));
                for (size_t i = 0; lit.buf && i < lit.len;) {
                    unsigned cp;
                    size_t k = u_escape(lit.buf + i, lit.len - i, &cp);

                    if (k) {
                        put_utf8(&want, cp);
                        i += k;
                    } else {
                        vt_sb_addc(&want, lit.buf[i++]);
                    }
                }
                vt_sb_release(&lit);
            }
            if (!nl)
                break;
            l = nl + 1;
        }
        vt_grow((void **)cases, &cap, 2 * n + 2, sizeof(**cases));
        (*cases)[2 * n] = vt_xasprintf("%.*s", (int)(data_end - data), data);
        (*cases)[2 * n + 1] = vt_sb_detach(&want);
        n++;
    }
    return n;
}

VT_TEST(captions_wpt_cue_text)
{
    size_t n_files, total = 0, passed = 0, n_over;
    char **files = list_dir(WPT_DIR "/cue-text-parsing", ".dat", &n_files), **over = NULL;
    char *over_text;
    size_t len;

    /*
     * entities-html.dat holds the cases whose expectation changed when WebVTT moved to
     * HTML's character references (the copied entities.dat predates it) and more of them.
     */
    over_text = slurp(WPT_DIR "/cue-text-parsing/entities-html.dat", &len);
    CHECK(over_text != NULL);
    n_over = over_text ? read_dat(over_text, &over) : 0;
    CHECK(n_files >= 2 && n_over >= 6);
    for (size_t f = 0; f < n_files; f++) {
        char *path = vt_xasprintf("%s/cue-text-parsing/%s", WPT_DIR, files[f]), **cases = NULL;
        char *text = slurp(path, &len);
        size_t n = text ? read_dat(text, &cases) : 0;
        int is_over = !strcmp(files[f], "entities-html.dat");

        for (size_t i = 0; i < n; i++) {
            const char *data = cases[2 * i], *want = cases[2 * i + 1];
            char *vtt = vt_xasprintf("WEBVTT\n\n00:00.000 --> 00:01.000\n%s\n", data), *norm;
            struct vt_transcript t = {0};
            char err[256];
            int rc;

            for (size_t k = 0; !is_over && k < n_over; k++)
                if (!strcmp(over[2 * k], data))
                    want = over[2 * k + 1];
            norm = as_transcript_text(want);
            rc = vt_captions_parse(vtt, strlen(vtt), "vtt", &t, err, sizeof(err));
            total++;
            if (*norm ? rc == 0 && t.n_cues == 1 && !strcmp(t.cues[0].text, norm) : rc == VT_SKIP)
                passed++;
            else
                printf("  %s: \"%s\" gave \"%s\" (%d), expected \"%s\"\n", files[f], data,
                       !rc && t.n_cues ? t.cues[0].text : err, rc, norm);
            vt_transcript_release(&t);
            free(norm);
            free(vtt);
        }
        for (size_t i = 0; i < 2 * n; i++)
            free(cases[i]);
        free(cases);
        free(text);
        free(path);
        free(files[f]);
    }
    CHECK(total >= 25);
    CHECK_INT(passed, total);
    for (size_t i = 0; i < 2 * n_over; i++)
        free(over[i]);
    free(over);
    free(over_text);
    free(files);
}
