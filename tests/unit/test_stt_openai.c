/*
 * Unit tests of the transcription server's answer parser (stt_openai.c,
 * vt_stt_openai_parse): the shapes of verbose_json servers give (top-level words, words per
 * segment, segments only, plain text), times moved onto the file's line and clamped within
 * the slack, answers rejected for timings outside the segment and for garbage, with no
 * word left behind after a rejection.
 */
#include "base/util.h"
#include "harness.h"
#include "speech/stt_int.h"
#include "vidtheque.h"

#include <stdlib.h>

struct words {
    struct vt_word *w;
    size_t n, cap;
    char model[96];
    char err[256];
};

static int parse(struct words *ws, const char *json, double start_s, double dur_s)
{
    return vt_stt_openai_parse(json, strlen(json), start_s, dur_s, &ws->w, &ws->n, &ws->cap,
                               ws->model, sizeof(ws->model), ws->err, sizeof(ws->err));
}

static void words_release(struct words *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        free(ws->w[i].text);
    free(ws->w);
    memset(ws, 0, sizeof(*ws));
}

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

VT_TEST(stt_openai_top_level_words)
{
    struct words ws = {0};
    const char *j = "{\"text\":\" And so, my\",\"model\":\"whisper-large\\u0007-v3\","
                    "\"segments\":[{\"start\":0,\"end\":2,\"text\":\" And so, my\"}],"
                    "\"words\":[{\"word\":\" And\",\"start\":0.1,\"end\":0.3,\"probability\":0.5},"
                    "{\"word\":\"so,\",\"start\":0.3,\"end\":0.6},"
                    "{\"word\":\"[BLANK_AUDIO]\",\"start\":0.6,\"end\":0.7},"
                    "{\"word\":\"my\",\"start\":0.7,\"end\":10.3}]}";

    CHECK_INT(parse(&ws, j, 100, 10), 0);
    CHECK_INT(ws.n, 3);
    if (ws.n == 3) {
        CHECK(!strcmp(ws.w[0].text, "And") && !strcmp(ws.w[1].text, "so,"));
        CHECK(!strcmp(ws.w[2].text, "my"));
        CHECK(NEAR(ws.w[0].start_s, 100.1) && NEAR(ws.w[0].end_s, 100.3));
        CHECK(NEAR(ws.w[0].conf, 0.5) && NEAR(ws.w[1].conf, 1));
        /* 0.3 s past the segment's end: within the slack, clamped */
        CHECK(NEAR(ws.w[2].end_s, 110));
    }
    CHECK(!strcmp(ws.model, "whisper-large-v3"));
    words_release(&ws);
}

VT_TEST(stt_openai_segment_words_and_spread)
{
    struct words ws = {0};
    /* whisper.cpp / faster-whisper: words inside segments; the second segment has none */
    const char *j = "{\"segments\":[{\"start\":1,\"end\":2,\"text\":\"a b\",\"words\":["
                    "{\"word\":\"a\",\"start\":1,\"end\":1.5},{\"word\":\"b\",\"start\":1.5,"
                    "\"end\":2}]},{\"start\":3,\"end\":5,\"text\":\" ask not  what  you\"}]}";

    CHECK_INT(parse(&ws, j, 0, 6), 0);
    CHECK_INT(ws.n, 6);
    if (ws.n == 6) {
        CHECK(NEAR(ws.w[1].start_s, 1.5));
        /* four words spread evenly over 3..5 s */
        CHECK(!strcmp(ws.w[2].text, "ask") && NEAR(ws.w[2].start_s, 3) && NEAR(ws.w[2].end_s, 3.5));
        CHECK(!strcmp(ws.w[5].text, "you") && NEAR(ws.w[5].start_s, 4.5) && NEAR(ws.w[5].end_s, 5));
    }
    CHECK(!ws.model[0]);
    words_release(&ws);

    /* a plain json answer: text only, spread over the segment */
    CHECK_INT(parse(&ws, "{\"text\":\"one two\"}", 10, 4), 0);
    CHECK_INT(ws.n, 2);
    if (ws.n == 2)
        CHECK(NEAR(ws.w[1].start_s, 12) && NEAR(ws.w[1].end_s, 14));
    words_release(&ws);

    /* silence: no segments, no words */
    CHECK_INT(parse(&ws, "{\"text\":\"\",\"segments\":[]}", 0, 4), 0);
    CHECK_INT(ws.n, 0);
    words_release(&ws);
}

VT_TEST(stt_openai_rejects)
{
    static const char *bad[] = {
        "",
        "{\"segments\":[{\"start\":0,\"end\":1,\"text\":\"a\"}",
        "<html>502</html>",
        "[1,2]",
        "{\"segments\":3}",
        "{\"model\":\"x\"}",
        "{\"words\":[{\"word\":\"a\",\"start\":0,\"end\":1},{\"word\":\"b\",\"start\":1,\"end\":70}"
        "]}",
        "{\"words\":[{\"word\":\"a\",\"start\":-3,\"end\":1}]}",
        "{\"words\":[{\"word\":\"a\",\"start\":\"0\",\"end\":1}]}",
        "{\"words\":[{\"start\":0,\"end\":1}]}",
        "{\"segments\":[{\"start\":0,\"end\":99,\"text\":\"a\"}]}",
        "{\"segments\":[{\"start\":0,\"end\":1}]}",
    };
    struct words ws = {0};

    for (size_t i = 0; i < VT_ARRAY_LEN(bad); i++) {
        int rc = parse(&ws, bad[i], 5, 10);

        if (rc != VT_EIO)
            fprintf(stderr, "  answer %zu: rc %d\n", i, rc);
        CHECK_INT(rc, VT_EIO);
        CHECK(ws.err[0] != 0);
        /* nothing is left of a rejected answer */
        CHECK_INT(ws.n, 0);
        words_release(&ws);
    }
    CHECK_INT(parse(&ws, "{\"words\":[{\"word\":\"a\",\"start\":0,\"end\":70}]}", 0, 10), VT_EIO);
    CHECK(strstr(ws.err, "timings outside the segment") != NULL);
    words_release(&ws);
}

VT_TEST(stt_openai_word_flood)
{
    /* more words than 12 a second (+20) for a 2 s segment: not a transcript of it */
    struct words ws = {0};
    char *j = vt_xmalloc(20000);
    size_t o = (size_t)snprintf(j, 20000, "{\"text\":\"");

    for (int i = 0; i < 60; i++)
        o += (size_t)snprintf(j + o, 20000 - o, "w%d ", i);
    snprintf(j + o, 20000 - o, "\"}");
    CHECK_INT(parse(&ws, j, 0, 2), VT_EIO);
    CHECK_INT(ws.n, 0);
    words_release(&ws);
    free(j);
}
