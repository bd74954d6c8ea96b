/*
 * Tests of vt_cues_from_words: cues split at pauses, never longer than about 7 s or two
 * lines of about 42 characters, words never cut, and odd input (no words, one huge word,
 * equal or broken timestamps) handled.
 */
#include "base/util.h"
#include "harness.h"
#include "text/transcript.h"

#include <stdlib.h>
#include <string.h>

/* Words w0..w(n-1) with the given texts, each dur_s long, gap_s apart. */
static struct vt_word *make_words(const char *const *texts, size_t n, double t0_s, double dur_s,
                                  double gap_s)
{
    struct vt_word *w = vt_xcalloc(n, sizeof(*w));

    for (size_t i = 0; i < n; i++) {
        w[i].text = (char *)texts[i];
        w[i].start_s = t0_s + i * (dur_s + gap_s);
        w[i].end_s = w[i].start_s + dur_s;
        w[i].conf = 0.9;
    }
    return w;
}

/* Every cue (in time order if ordered): text = its words joined by ' ' or one '\n', lines <= 42
 * chars (unless a lone word is longer), duration <= 7 s (unless one word is), times from its words.
 */
static void check_cues(const struct vt_transcript *t, size_t n_words_in, int ordered)
{
    size_t n_words = 0;

    for (size_t i = 0; i < t->n_cues; i++) {
        const struct vt_cue *c = &t->cues[i];
        struct vt_sb sb = {0};
        const char *nl;

        CHECK(c->n_words > 0);
        if (!c->n_words)
            continue;
        n_words += c->n_words;
        for (size_t k = 0; k < c->n_words; k++) {
            if (k)
                vt_sb_addc(&sb, ' ');
            vt_sb_adds(&sb, c->words[k].text);
        }
        nl = strchr(c->text, '\n');
        CHECK(!nl || !strchr(nl + 1, '\n'));
        {
            /* The text with its line break made a space is the words joined. */
            char *flat = vt_xstrdup(c->text);

            for (char *p = flat; *p; p++)
                if (*p == '\n')
                    *p = ' ';
            CHECK_STR(flat, sb.buf);
            free(flat);
        }
        if (c->n_words > 1) {
            size_t first = nl ? (size_t)(nl - c->text) : strlen(c->text);
            size_t second = nl ? strlen(nl + 1) : 0;

            CHECK(first <= 42);
            CHECK(second <= 42);
            CHECK(c->end_s - c->start_s <= 7.0 + 1e-9);
        }
        CHECK_NEAR(c->start_s, c->words[0].start_s, 1e-9);
        CHECK(c->end_s >= c->words[c->n_words - 1].end_s - 1e-9);
        CHECK(c->end_s >= c->start_s);
        if (i && ordered)
            CHECK(c->start_s >= t->cues[i - 1].start_s);
        vt_sb_release(&sb);
    }
    CHECK_INT(n_words, n_words_in);
}

VT_TEST(cues_split_at_pause)
{
    static const char *const texts[] = {"one", "two", "three", "four", "five", "six"};
    struct vt_word *w = make_words(texts, 6, 1.0, 0.3, 0.1);
    struct vt_transcript t = {0};

    /* A 1.5 s silence before "four". */
    for (size_t i = 3; i < 6; i++) {
        w[i].start_s += 1.5;
        w[i].end_s += 1.5;
    }
    vt_cues_from_words(w, 6, &t);
    CHECK_INT(t.n_cues, 2);
    if (t.n_cues == 2) {
        CHECK_STR(t.cues[0].text, "one two three");
        CHECK_STR(t.cues[1].text, "four five six");
        CHECK_NEAR(t.cues[0].start_s, 1.0, 1e-9);
        CHECK_NEAR(t.cues[0].end_s, w[2].end_s, 1e-9);
        CHECK_NEAR(t.cues[1].start_s, w[3].start_s, 1e-9);
        CHECK_INT(t.cues[1].n_words, 3);
        CHECK_NEAR(t.cues[1].words[0].conf, 0.9, 1e-9);
    }
    check_cues(&t, 6, 1);
    /* Appending keeps what was there. */
    vt_cues_from_words(w, 3, &t);
    CHECK_INT(t.n_cues, 3);
    vt_transcript_release(&t);
    CHECK(t.cues == NULL && t.n_cues == 0);
    free(w);
}

VT_TEST(cues_max_duration_and_lines)
{
    static const char *const pool[] = {"a", "word", "is", "here", "and", "there", "again"};
    const char *texts[200];
    struct vt_word *w;
    struct vt_transcript t = {0};

    for (size_t i = 0; i < 200; i++)
        texts[i] = pool[i % 7];
    /* Slow speech: short words, little text, so the 7 s limit cuts. */
    w = make_words(texts, 200, 0, 0.4, 0.2);
    vt_cues_from_words(w, 200, &t);
    CHECK(t.n_cues >= 200 * 0.6 / 7);
    check_cues(&t, 200, 1);
    vt_transcript_release(&t);
    free(w);

    /* Fast speech: the two-line limit cuts, lines are balanced. */
    w = make_words(texts, 200, 0, 0.1, 0.01);
    vt_cues_from_words(w, 200, &t);
    check_cues(&t, 200, 1);
    for (size_t i = 0; i < t.n_cues; i++) {
        if (t.cues[i].n_words > 1 && strlen(t.cues[i].text) > 42)
            CHECK(strchr(t.cues[i].text, '\n') != NULL);
        CHECK(t.cues[i].end_s - t.cues[i].start_s < 7);
    }
    vt_transcript_release(&t);
    free(w);
}

VT_TEST(cues_zero_words)
{
    struct vt_transcript t = {0};

    vt_cues_from_words(NULL, 0, &t);
    CHECK_INT(t.n_cues, 0);
    CHECK(t.cues == NULL);
    vt_transcript_release(&t);
    vt_transcript_release(NULL);
    vt_cue_release(NULL);
}

VT_TEST(cues_one_huge_word)
{
    char huge[200];
    const char *texts[3] = {"before", huge, "after"};
    struct vt_word *w;
    struct vt_transcript t = {0};

    memset(huge, 'x', sizeof(huge) - 1);
    huge[sizeof(huge) - 1] = '\0';
    w = make_words(texts, 3, 0, 0.5, 0.1);
    w[1].end_s = w[1].start_s + 9; /* longer than a cue may be */
    vt_cues_from_words(w, 3, &t);
    check_cues(&t, 3, 1);
    /* The huge word stands alone and whole. */
    CHECK_INT(t.n_cues, 3);
    if (t.n_cues == 3) {
        CHECK_STR(t.cues[1].text, huge);
        CHECK_NEAR(t.cues[1].end_s - t.cues[1].start_s, 9, 1e-9);
    }
    vt_transcript_release(&t);
    free(w);
}

VT_TEST(cues_identical_timestamps)
{
    const char *texts[100];
    struct vt_word *w;
    struct vt_transcript t = {0};

    for (size_t i = 0; i < 100; i++)
        texts[i] = i % 2 ? "same" : "time";
    w = make_words(texts, 100, 5, 0, 0);
    vt_cues_from_words(w, 100, &t);
    check_cues(&t, 100, 1);
    /* Only the line limit can split them: 100 five-byte words need several cues. */
    CHECK(t.n_cues >= 100 * 5 / 84);
    for (size_t i = 0; i < t.n_cues; i++) {
        CHECK_NEAR(t.cues[i].start_s, 5, 1e-9);
        CHECK_NEAR(t.cues[i].end_s, 5, 1e-9);
    }
    vt_transcript_release(&t);
    free(w);
}

VT_TEST(cues_bad_times_and_empty_words)
{
    const char *texts[5] = {"ok", "", "nan", NULL, "back"};
    struct vt_word *w = make_words(texts, 5, 2, 0.2, 0.05);
    struct vt_transcript t = {0};

    w[2].start_s = NAN;
    w[2].end_s = -1;
    w[4].end_s = w[4].start_s - 1; /* reversed */
    vt_cues_from_words(w, 5, &t);
    /* The empty and NULL words are dropped; the rest are kept with sane times. */
    check_cues(&t, 3, 0);
    for (size_t i = 0; i < t.n_cues; i++)
        for (size_t k = 0; k < t.cues[i].n_words; k++) {
            CHECK(isfinite(t.cues[i].words[k].start_s));
            CHECK(t.cues[i].words[k].end_s >= t.cues[i].words[k].start_s);
        }
    vt_transcript_release(&t);
    free(w);
}

/* n cues, one every step_s from t0_s, each 1 s long, text "cue I". */
static void make_cues(struct vt_transcript *t, size_t n, double t0_s, double step_s)
{
    memset(t, 0, sizeof(*t));
    t->cues = vt_xcalloc(n, sizeof(*t->cues));
    t->n_cues = n;
    for (size_t i = 0; i < n; i++) {
        t->cues[i].start_s = t0_s + (double)i * step_s;
        t->cues[i].end_s = t->cues[i].start_s + 1;
        t->cues[i].text = vt_xasprintf("cue %zu", i);
    }
}

VT_TEST(bound_drops_cues_past_the_media)
{
    struct vt_transcript t;
    struct vt_bound_report rep;

    /* cues at 0, 1, 2 ... 9 s, then one 99,999 hours in, for a 4.5 s video */
    make_cues(&t, 10, 0, 1);
    t.cues[9].start_s = 99999.0 * 3600;
    t.cues[9].end_s = t.cues[9].start_s + 2;
    t.cues[4].words = vt_xcalloc(2, sizeof(*t.cues[4].words));
    t.cues[4].n_words = 2;
    t.cues[4].words[0] = (struct vt_word){vt_xstrdup("cue"), 4.0, 4.4, 1};
    t.cues[4].words[1] = (struct vt_word){vt_xstrdup("4"), 4.6, 5.0, 1};
    vt_transcript_bound(&t, 4.5, &rep);
    CHECK_INT(t.n_cues, 5);
    CHECK_INT(rep.past_end, 5);
    CHECK_INT(rep.over_rate, 0);
    CHECK_NEAR(t.cues[4].end_s, 4.5, 1e-9); /* runs past the end: ends there */
    CHECK_INT(t.cues[4].n_words, 1);        /* its word after the end is gone */
    CHECK_NEAR(t.cues[4].words[0].end_s, 4.4, 1e-9);
    CHECK_STR(t.cues[3].text, "cue 3");
    vt_transcript_release(&t);

    /* an unknown duration cuts nothing by time */
    make_cues(&t, 3, 1e6, 1);
    vt_transcript_bound(&t, 0, &rep);
    CHECK_INT(t.n_cues, 3);
    CHECK_INT(rep.past_end, 0);
    vt_transcript_release(&t);
}

VT_TEST(bound_caps_cues_per_minute)
{
    struct vt_transcript t;
    struct vt_bound_report rep;

    /* 150,000 cues in the first 5 s: the first 120 stay */
    make_cues(&t, 150000, 0, 5.0 / 150000);
    vt_transcript_bound(&t, 5, &rep);
    CHECK_INT(t.n_cues, VT_CUES_PER_MINUTE);
    CHECK_INT(rep.over_rate, 150000 - VT_CUES_PER_MINUTE);
    CHECK_STR(t.cues[VT_CUES_PER_MINUTE - 1].text, "cue 119");
    vt_transcript_release(&t);

    /* one cue a second for 10 minutes is well under the rate: all kept */
    make_cues(&t, 600, 0, 1);
    vt_transcript_bound(&t, 600, &rep);
    CHECK_INT(t.n_cues, 600);
    CHECK_INT(rep.over_rate, 0);
    vt_transcript_release(&t);

    /* 4 a second for 10 minutes: 120 in every minute, spread over the whole video */
    make_cues(&t, 2400, 0, 0.25);
    vt_transcript_bound(&t, 600, &rep);
    CHECK_INT(rep.over_rate, 2400 - t.n_cues);
    CHECK(t.n_cues >= 10 * VT_CUES_PER_MINUTE - 1 && t.n_cues <= 10 * VT_CUES_PER_MINUTE);
    for (size_t i = VT_CUES_PER_MINUTE; i < t.n_cues; i++)
        CHECK(t.cues[i].start_s - t.cues[i - VT_CUES_PER_MINUTE].start_s >= 60.0);
    CHECK(t.cues[t.n_cues - 1].start_s > 540);
    vt_transcript_release(&t);
}

VT_TEST(bound_sorts_and_cuts_long_cues)
{
    struct vt_transcript t;
    struct vt_bound_report rep;
    char *big = vt_xcalloc(1, 3 * VT_CUE_MAX_BYTES + 1);

    make_cues(&t, 3, 0, 1);
    t.cues[0].start_s = 2.5; /* out of order */
    /* "é" (2 bytes) repeated: the cut must not split one */
    for (size_t i = 0; i + 2 <= 3 * VT_CUE_MAX_BYTES - 1; i += 2)
        memcpy(big + i, "\xc3\xa9", 2);
    big[0] = 'x'; /* odd offset: the cut at VT_CUE_MAX_BYTES falls inside a character */
    memmove(big + 1, big + 2, strlen(big + 2) + 1);
    free(t.cues[1].text);
    t.cues[1].text = big;
    t.cues[1].words = vt_xcalloc(VT_CUE_MAX_WORDS + 50, sizeof(*t.cues[1].words));
    t.cues[1].n_words = VT_CUE_MAX_WORDS + 50;
    for (size_t k = 0; k < t.cues[1].n_words; k++)
        t.cues[1].words[k] = (struct vt_word){vt_xstrdup(k ? "\xc3\xa9" : "x"), 1, 1.5, 1};
    vt_transcript_bound(&t, 60, &rep);
    CHECK_INT(t.n_cues, 3);
    CHECK_INT(rep.cut, 1);
    CHECK_STR(t.cues[1].text, "cue 2");
    CHECK_STR(t.cues[2].text, "cue 0");
    CHECK(strlen(t.cues[0].text) <= VT_CUE_MAX_BYTES);
    CHECK(strlen(t.cues[0].text) >= VT_CUE_MAX_BYTES - 3);
    {
        char *clean = vt_utf8_clean(t.cues[0].text);

        CHECK_STR(clean, t.cues[0].text); /* no character cut in two */
        free(clean);
    }
    CHECK(t.cues[0].n_words <= VT_CUE_MAX_WORDS);
    CHECK(t.cues[0].n_words > 0);
    vt_transcript_release(&t);
}
