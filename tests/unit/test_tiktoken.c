/*
 * Tests of Whisper's tokenizer (tiktoken.h) on the real vocabularies of
 * tests/data/whisper-assets (openai/whisper's gpt2.tiktoken and multilingual.tiktoken):
 * the ids of 30 texts (English, accented, CJK, Korean, Cyrillic, Arabic, Devanagari, Thai,
 * emoji, numbers, code, mixed whitespace) under both vocabularies must be those
 * tests/tools/tiktoken_ref.py (a pure-Python tiktoken) wrote to tiktoken-expected.tsv, and
 * decode back to the text; published ids (" the" 262, "Hello" 15496, " world" 995);
 * the special tokens' ids as tokenizer.py numbers them; rendering of specials and
 * timestamps; invalid UTF-8 kept byte for byte; and hostile vocabulary files
 * (truncated, bad base64, ranks not numbers or out of order, a token twice, a byte
 * missing, too large) refused with VT_EINVAL and one line.
 */
#include "base/util.h"
#include "harness.h"
#include "ml/tiktoken.h"
#include "vidtheque.h"

#include <stdint.h>
#include <stdlib.h>

#define ASSETS "tests/data/whisper-assets/"

static struct vt_tiktoken *load(const char *name, int n_languages)
{
    struct vt_tiktoken *t = NULL;
    char path[256], err[512] = "";
    snprintf(path, sizeof(path), ASSETS "%s.tiktoken", name);
    if (vt_tiktoken_load(path, n_languages, &t, err, sizeof(err)) != 0)
        fprintf(stderr, "  %s\n", err);
    return t;
}

/* decode(ids) == text, without timestamps dropped */
static int round_trips(struct vt_tiktoken *t, const char *text, size_t len)
{
    const int32_t *ids;
    size_t n, dlen;
    char *back;
    if (vt_tiktoken_encode(t, text, len, &ids, &n) ||
        vt_tiktoken_decode(t, ids, n, 0, &back, &dlen))
        return 0;
    int ok = dlen == len && memcmp(back, text, len) == 0;
    free(back);
    return ok;
}

static size_t unhex(const char *h, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        unsigned v;
        sscanf(h + i, "%2x", &v);
        out[k++] = (char)v;
    }
    return k;
}

/* One line of tiktoken-expected.tsv: VOCAB \t HEX \t IDS; 1 when it matches. */
static int check_expected_line(struct vt_tiktoken *t, const char *hex, size_t hexlen,
                               const char *want)
{
    char text[1024];
    const int32_t *ids;
    size_t n, len = unhex(hex, hexlen < 2 * sizeof(text) ? hexlen : 0, text);
    if (vt_tiktoken_encode(t, text, len, &ids, &n))
        return 0;
    char *end;
    for (size_t i = 0; i < n; i++, want = end)
        if (strtol(want, &end, 10) != ids[i] || end == want)
            return 0;
    while (*want == ' ')
        want++;
    return *want == 0 && round_trips(t, text, len);
}

VT_TEST(tiktoken_matches_reference)
{
    struct vt_tiktoken *gpt2 = load("gpt2", 99), *multi = load("multilingual", 99);
    char *data, err[256];
    size_t len;
    int lines = 0, bad = 0;
    CHECK(gpt2 && multi);
    CHECK_INT(vt_read_file_capped(ASSETS "tiktoken-expected.tsv", "expected ids", 1 << 20, &data,
                                  &len, err, sizeof(err)),
              0);
    if (!gpt2 || !multi || !data)
        goto out;
    for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        if (!tab2) {
            bad++;
            continue;
        }
        struct vt_tiktoken *t = strncmp(line, "gpt2\t", 5) == 0 ? gpt2 : multi;
        lines++;
        if (!check_expected_line(t, tab1 + 1, (size_t)(tab2 - tab1 - 1), tab2 + 1)) {
            fprintf(stderr, "  differs: %.*s\n", (int)(tab2 - line), line);
            bad++;
        }
    }
    CHECK_INT(lines, 60);
    CHECK_INT(bad, 0);
out:
    free(data);
    vt_tiktoken_free(gpt2);
    vt_tiktoken_free(multi);
}

static void check_ids(struct vt_tiktoken *t, const char *text, const int32_t *want, size_t nwant)
{
    const int32_t *ids;
    size_t n;
    CHECK_INT(vt_tiktoken_encode(t, text, strlen(text), &ids, &n), 0);
    CHECK_INT(n, nwant);
    for (size_t i = 0; i < n && i < nwant; i++)
        CHECK_INT(ids[i], want[i]);
}

VT_TEST(tiktoken_published_ids)
{
    struct vt_tiktoken *t = load("gpt2", 99);
    size_t len;
    CHECK(t != NULL);
    if (!t)
        return;
    check_ids(t, " the", (const int32_t[]){262}, 1);
    check_ids(t, "Hello", (const int32_t[]){15496}, 1);
    check_ids(t, "Hello world", (const int32_t[]){15496, 995}, 2);
    /* the vocabulary file itself: its first line is "IQ== 0" ('!'), rank 262 is " the" */
    const char *tok = vt_tiktoken_token(t, 0, &len);
    CHECK(tok && len == 1 && tok[0] == '!');
    tok = vt_tiktoken_token(t, 262, &len);
    CHECK(tok && len == 4 && memcmp(tok, " the", 4) == 0);
    CHECK_INT(vt_tiktoken_find(t, " gazed", 6), 50255); /* the file's last line */
    CHECK_INT(vt_tiktoken_find(t, "no such token at all", 20), -1);
    vt_tiktoken_free(t);
}

static void check_name(struct vt_tiktoken *t, int32_t id, const char *name)
{
    size_t len;
    const char *tok = vt_tiktoken_token(t, id, &len);
    CHECK(tok && len == strlen(name) && memcmp(tok, name, len) == 0);
    CHECK_INT(vt_tiktoken_find(t, name, strlen(name)), id);
}

VT_TEST(tiktoken_whisper_specials)
{
    struct vt_tiktoken *m = load("multilingual", 99), *e = load("gpt2", 99), *v3;
    CHECK(m && e);
    if (!m || !e)
        return;
    const struct vt_whisper_specials *w = vt_tiktoken_whisper(m);
    CHECK_INT(vt_tiktoken_n_ranks(m), 50257);
    CHECK_INT(vt_tiktoken_n_vocab(m), 51865);
    CHECK_INT(w->eot, 50257);
    CHECK_INT(w->sot, 50258);
    CHECK_INT(vt_tiktoken_language(m, "en"), 50259);
    CHECK_INT(vt_tiktoken_language(m, "su"), 50357);
    CHECK_INT(vt_tiktoken_language(m, "yue"), -1);
    CHECK_INT(w->translate, 50358);
    CHECK_INT(w->transcribe, 50359);
    CHECK_INT(w->sot_lm, 50360);
    CHECK_INT(w->sot_prev, 50361);
    CHECK_INT(w->no_speech, 50362);
    CHECK_INT(w->no_timestamps, 50363);
    CHECK_INT(w->timestamp_begin, 50364);
    check_name(m, 50259, "<|en|>");
    check_name(m, 50260, "<|zh|>");
    check_name(m, 50364, "<|0.00|>");
    check_name(m, 50364 + 54, "<|1.08|>");
    check_name(m, 51864, "<|30.00|>");
    CHECK(vt_tiktoken_token(m, 51865, &(size_t){0}) == NULL);

    w = vt_tiktoken_whisper(e);
    CHECK_INT(vt_tiktoken_n_ranks(e), 50256);
    CHECK_INT(vt_tiktoken_n_vocab(e), 51864);
    CHECK_INT(w->eot, 50256);
    CHECK_INT(w->sot, 50257);
    CHECK_INT(w->transcribe, 50358);
    CHECK_INT(w->no_timestamps, 50362);
    CHECK_INT(w->timestamp_begin, 50363);
    check_name(e, 50256, "<|endoftext|>");
    check_name(e, 50363, "<|0.00|>");

    /* large-v3: 100 languages, "yue" last */
    v3 = load("multilingual", 100);
    CHECK(v3 != NULL);
    if (v3) {
        CHECK_INT(vt_tiktoken_n_vocab(v3), 51866);
        CHECK_INT(vt_tiktoken_language(v3, "yue"), 50358);
        CHECK_INT(vt_tiktoken_whisper(v3)->timestamp_begin, 50365);
    }
    CHECK_STR(vt_whisper_language_code(0), "en");
    CHECK_STR(vt_whisper_language_code(99), "yue");
    CHECK(vt_whisper_language_code(100) == NULL);
    vt_tiktoken_free(v3);
    vt_tiktoken_free(m);
    vt_tiktoken_free(e);
}

VT_TEST(tiktoken_decode_renders_specials)
{
    struct vt_tiktoken *m = load("multilingual", 99);
    char *out;
    size_t len;
    CHECK(m != NULL);
    if (!m)
        return;
    const struct vt_whisper_specials *w = vt_tiktoken_whisper(m);
    const int32_t *hello;
    size_t nh;
    CHECK_INT(vt_tiktoken_encode(m, " Hello", 6, &hello, &nh), 0);
    int32_t ids[8] = {w->sot, w->first_language, w->transcribe, w->timestamp_begin};
    size_t n = 4;
    for (size_t i = 0; i < nh && n < 7; i++)
        ids[n++] = hello[i];
    ids[n++] = w->timestamp_begin + 54;
    CHECK_INT(vt_tiktoken_decode(m, ids, n, 0, &out, &len), 0);
    CHECK_STR(out, "<|startoftranscript|><|en|><|transcribe|><|0.00|> Hello<|1.08|>");
    free(out);
    CHECK_INT(vt_tiktoken_decode(m, ids, n, VT_TIKTOKEN_NO_TIMESTAMPS, &out, &len), 0);
    CHECK_STR(out, "<|startoftranscript|><|en|><|transcribe|> Hello");
    free(out);
    ids[0] = 51865;
    CHECK_INT(vt_tiktoken_decode(m, ids, 1, 0, &out, &len), VT_EINVAL);
    ids[0] = -1;
    CHECK_INT(vt_tiktoken_decode(m, ids, 1, 0, &out, &len), VT_EINVAL);
    vt_tiktoken_free(m);
}

VT_TEST(tiktoken_round_trips)
{
    static const char *const texts[] = {
        "Plain English, with punctuation!?",
        "Accents: \xc3\xa9t\xc3\xa9 \xc3\xa0 Z\xc3\xbcrich",
        "\xe4\xb8\xad\xe6\x96\x87\xe5\x92\x8c\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
        "\xf0\x9f\x98\x80\xf0\x9f\x8e\x89 party",
        " \t\n \r\n\x0b\x0c  x  \n",
        "\xe2\x80\x83\xe3\x80\x80 wide",
        "",
        /* invalid UTF-8: lone continuation, truncated sequence, overlong, surrogate */
        "bad \x80 \xe4\xb8 \xc0\xaf \xed\xa0\x80 end\xff",
    };
    const char *names[] = {"gpt2", "multilingual"};
    for (int v = 0; v < 2; v++) {
        struct vt_tiktoken *t = load(names[v], 99);
        CHECK(t != NULL);
        if (!t)
            continue;
        for (size_t i = 0; i < VT_ARRAY_LEN(texts); i++)
            if (!round_trips(t, texts[i], strlen(texts[i]))) {
                fprintf(stderr, "  %s: text %zu does not round-trip\n", names[v], i);
                vt_test_failures++;
            }
        vt_tiktoken_free(t);
    }
}

static void b64_byte(unsigned char b, char out[5])
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out[0] = a[b >> 2];
    out[1] = a[(b & 3) << 4];
    out[2] = out[3] = '=';
    out[4] = 0;
}

/* A small vocabulary: the 256 bytes, then extra (lines "BASE64 RANK\n"). */
static char *small_vocab(const char *extra)
{
    char *v = vt_xmalloc(256 * 12 + strlen(extra) + 1), b[5];
    size_t k = 0;
    for (int i = 0; i < 256; i++) {
        b64_byte((unsigned char)i, b);
        k += (size_t)sprintf(v + k, "%s %d\n", b, i);
    }
    strcpy(v + k, extra);
    return v;
}

static void check_refused(const char *data, size_t len, int n_languages, const char *what)
{
    struct vt_tiktoken *t = (struct vt_tiktoken *)1;
    char err[256] = "";
    int rc = vt_tiktoken_parse(data, len, n_languages, &t, err, sizeof(err));
    if (rc != VT_EINVAL || t != NULL || !strstr(err, "tiktoken") || strchr(err, '\n')) {
        fprintf(stderr, "  %s: rc %d, err '%s'\n", what, rc, err);
        vt_test_failures++;
    }
}

VT_TEST(tiktoken_small_vocab_merges)
{
    /* "ih" (256) ranks before "hi" (257): the lower rank merges first, wherever it is; in
     * the real vocabularies a rank is also the id, and single bytes have their own */
    char *v = small_vocab("aWg= 256\naGk= 257\n");
    struct vt_tiktoken *t = NULL;
    char err[256];
    CHECK_INT(vt_tiktoken_parse(v, strlen(v), 0, &t, err, sizeof(err)), 0);
    if (t) {
        check_ids(t, "hih", (const int32_t[]){'h', 256}, 2);
        check_ids(t, "hihi", (const int32_t[]){'h', 256, 'i'}, 3);
        check_ids(t, "hi hi", (const int32_t[]){257, ' ', 257}, 3);
        CHECK_INT(vt_tiktoken_n_vocab(t), 258 + 2 + 6 + 1501);
        CHECK_INT(vt_tiktoken_whisper(t)->n_languages, 0);
        CHECK_INT(vt_tiktoken_whisper(t)->translate, 260);
    }
    vt_tiktoken_free(t);
    free(v);
}

VT_TEST(tiktoken_hostile_files)
{
    char *data, err[256];
    size_t len;
    CHECK_INT(vt_read_file_capped(ASSETS "gpt2.tiktoken", "vocabulary", 4 << 20, &data, &len, err,
                                  sizeof(err)),
              0);
    if (data) {
        check_refused(data, len / 2, 99, "truncated mid-line");
        check_refused(data, 1000, 99, "truncated to 1000 bytes");
        check_refused(data, len, 101, "101 languages");
    }
    free(data);
    struct {
        const char *extra, *what;
    } cases[] = {
        {"I!== 256\n", "bad base64"},
        {"aGk 256\n", "base64 not padded"},
        {"aGk=== 256\n", "too much padding"},
        {"aGk= x\n", "non-numeric rank"},
        {"aGk= 256x\n", "rank with a tail"},
        {"aGk= -256\n", "negative rank"},
        {"aGk= 99999999999\n", "huge rank"},
        {"aGk= 257\n", "rank out of order"},
        {"aGk= 255\n", "rank twice"},
        {"aGk= 256\naGk= 257\n", "token twice"},
        {"aGk=256\n", "no space"},
        {"\n", "empty line"},
        {"aGk=\n", "no rank"},
    };
    for (size_t i = 0; i < VT_ARRAY_LEN(cases); i++) {
        char *v = small_vocab(cases[i].extra);
        check_refused(v, strlen(v), 0, cases[i].what);
        free(v);
    }
    /* a byte missing: the 256 single bytes without 0x41 */
    char *v = small_vocab(""), *line = strstr(v, "QQ== 65\n");
    CHECK(line != NULL);
    if (line)
        memcpy(line, "aGk=", 4);
    check_refused(v, strlen(v), 0, "byte missing");
    check_refused(v, 0, 0, "empty file");
    free(v);
    struct vt_tiktoken *t;
    CHECK_INT(vt_tiktoken_load(ASSETS "no-such.tiktoken", 99, &t, err, sizeof(err)), VT_ENOTFOUND);
    CHECK_INT(vt_tiktoken_parse("x", (size_t)VT_TIKTOKEN_MAX_BYTES + 1, 0, &t, err, sizeof(err)),
              VT_EINVAL);
    CHECK(strstr(err, "too large") != NULL);
}
