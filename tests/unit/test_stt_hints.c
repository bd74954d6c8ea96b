/*
 * Tests of the speech hints' word list (stt_hints.c): what counts as a word in texts anyone
 * wrote (OCR lines, titles), the counts and pairs, the cap on distinct words, filtering, the
 * ARPA model's shape and sums, flite's pronunciations in CMU phones, and a hinted decoder
 * hearing a word PocketSphinx's dictionary lacks.
 */
#include "base/util.h"
#include "harness.h"
#include "speech/stt.h"
#include "speech/stt_hints.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int has(const struct vt_stt_hints *h, const char *w, unsigned count)
{
    long i = vt_stt_hints_find(h, w);

    return i >= 0 && h->words[i].count == count;
}

VT_TEST(stt_hints_words)
{
    struct vt_stt_hints h = {0};

    vt_stt_hints_add(&h, "Kubernetes: the SCHEDULER, don't panic!");
    vt_stt_hints_add(&h, "mp4 x264 naïve a b kubernetes  \t'quoted'");
    vt_stt_hints_add(&h, NULL);
    vt_stt_hints_add(&h, "");
    vt_stt_hints_add(&h, "\xff\xfe broken \xc3 utf8 abcdefghijklmnopqrstuvwxyzabcdef end");
    vt_stt_hints_finish(&h);
    CHECK(has(&h, "kubernetes", 2));
    CHECK(has(&h, "scheduler", 1));
    CHECK(has(&h, "don't", 1));
    CHECK(has(&h, "quoted", 1));
    CHECK(has(&h, "broken", 1));
    CHECK(has(&h, "end", 1));
    /* glued to digits or other scripts, single letters, too long: not words to say */
    CHECK(vt_stt_hints_find(&h, "mp") < 0);
    CHECK(vt_stt_hints_find(&h, "x") < 0);
    CHECK(vt_stt_hints_find(&h, "na") < 0);
    CHECK(vt_stt_hints_find(&h, "ve") < 0);
    CHECK(vt_stt_hints_find(&h, "a") < 0);
    CHECK(vt_stt_hints_find(&h, "utf") < 0);
    CHECK(vt_stt_hints_find(&h, "abcdefghijklmnopqrstuvwx") < 0);
    for (size_t i = 1; i < h.n_words; i++)
        CHECK(strcmp(h.words[i - 1].text, h.words[i].text) < 0);
    /* pairs within a text, never across two */
    {
        long k = vt_stt_hints_find(&h, "kubernetes"), t = vt_stt_hints_find(&h, "the");
        long p = vt_stt_hints_find(&h, "panic"), q = vt_stt_hints_find(&h, "quoted");
        int kt = 0, pq = 0;

        for (size_t i = 0; i < h.n_pairs; i++) {
            kt += h.pairs[i].a == (unsigned)k && h.pairs[i].b == (unsigned)t;
            pq += h.pairs[i].a == (unsigned)p;
        }
        CHECK(k >= 0 && t >= 0 && p >= 0 && q >= 0);
        CHECK_INT(kt, 1);
        CHECK_INT(pq, 0);
    }
    /* finishing again changes nothing; adding after is ignored */
    vt_stt_hints_add(&h, "later words");
    vt_stt_hints_finish(&h);
    CHECK(vt_stt_hints_find(&h, "later") < 0);
    vt_stt_hints_release(&h);
    CHECK_INT(h.n_words, 0);
    vt_stt_hints_release(NULL);
}

/* Hostile amounts: many distinct words keep the most frequent VT_HINTS_MAX, tokens stop. */
VT_TEST(stt_hints_caps)
{
    struct vt_stt_hints h = {0};
    char w[16];

    for (int i = 0; i < 3 * VT_HINTS_MAX; i++) {
        /* "ba".."zz..." spelled from i, letters only */
        int n = i, k = 0;

        do {
            w[k++] = (char)('a' + n % 26);
            n /= 26;
        } while (n && k < 10);
        w[k++] = 'q';
        w[k] = 0;
        vt_stt_hints_add(&h, w);
        if (i % 3 == 0)
            vt_stt_hints_add(&h, w);
    }
    vt_stt_hints_finish(&h);
    CHECK_INT(h.n_words, VT_HINTS_MAX);
    for (size_t i = 0; i < h.n_words; i++)
        CHECK_INT(h.words[i].count, 2);
    vt_stt_hints_release(&h);

    {
        size_t len = 3 * (size_t)VT_HINTS_MAX_TOKENS;
        char *big = vt_xmalloc(len + 1);

        for (size_t i = 0; i < len; i += 3)
            memcpy(big + i, "ab ", 3);
        big[len] = 0;
        vt_stt_hints_add(&h, big);
        vt_stt_hints_add(&h, "more");
        free(big);
        vt_stt_hints_finish(&h);
        CHECK(has(&h, "ab", VT_HINTS_MAX_TOKENS));
        CHECK(vt_stt_hints_find(&h, "more") < 0);
        vt_stt_hints_release(&h);
    }
}

static int not_the(const char *w, void *user)
{
    (void)user;
    return strcmp(w, "the") != 0;
}

/* The model: counts as ARPA says them, probabilities summing to one, back-offs in range. */
VT_TEST(stt_hints_arpa)
{
    struct vt_stt_hints h = {0};
    struct vt_sb sb = {0};
    double sum = 0;
    size_t n1 = 0, n2 = 0;
    int section = 0;
    char *line, *save = NULL;

    vt_stt_hints_add(&h, "the telemetry pipeline");
    vt_stt_hints_add(&h, "the telemetry dashboard");
    vt_stt_hints_finish(&h);
    vt_stt_hints_filter(&h, not_the, NULL);
    CHECK_INT(h.n_words, 3);
    CHECK(vt_stt_hints_find(&h, "the") < 0);
    CHECK(has(&h, "telemetry", 2));
    CHECK_INT(h.n_pairs, 2);
    CHECK_INT(vt_stt_hints_arpa(&h, &sb), 5);
    CHECK(strstr(sb.buf, "ngram 1=5\nngram 2=2\n") != NULL);
    CHECK(strstr(sb.buf, "telemetry pipeline\n") != NULL);
    CHECK(strstr(sb.buf, "\\end\\\n") != NULL);
    for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strcmp(line, "\\1-grams:"))
            section = 1;
        else if (!strcmp(line, "\\2-grams:"))
            section = 2;
        else if (section == 1 && line[0] != '\\') {
            double lp = strtod(line, NULL);

            n1++;
            if (lp > -90)
                sum += pow(10, lp);
        } else if (section == 2 && line[0] != '\\') {
            CHECK(strtod(line, NULL) < 0);
            n2++;
        }
    }
    CHECK_INT(n1, 5);
    CHECK_INT(n2, 2);
    CHECK_NEAR(sum, 1.0, 0.002);
    vt_sb_release(&sb);
    vt_stt_hints_release(&h);
}

VT_TEST(stt_hints_pronounce)
{
    char out[64];

    CHECK_INT(vt_stt_hints_pronounce("grafana", out, sizeof(out)), 0);
    CHECK_STR(out, "G R EY F AE N AH");
    /* in flite's lexicon */
    CHECK_INT(vt_stt_hints_pronounce("dashwood", out, sizeof(out)), 0);
    CHECK_STR(out, "D AE SH W UH D");
    /* not lower-case letters, or no room */
    CHECK_INT(vt_stt_hints_pronounce("don't", out, sizeof(out)), -1);
    CHECK_INT(vt_stt_hints_pronounce("", out, sizeof(out)), -1);
    CHECK_INT(vt_stt_hints_pronounce("grafana", out, 8), -1);
    CHECK_STR(out, "");
}

/* A word the dictionary lacks, said by flite: only the hinted decoder can write it. */
VT_TEST(stt_hints_decoder)
{
    struct vt_stt_hints h = {0};
    struct vt_transcript t = {0};
    char err[256] = "";
    struct vt_stt *stt;

    vt_stt_hints_add(&h, "Grafana dashboards");
    vt_stt_hints_add(&h, "the and of");
    vt_stt_hints_finish(&h);
    stt = vt_stt_new_hinted(1, &h, err, sizeof(err));
    if (!stt) {
        fprintf(stderr, "  vt_stt_new_hinted: %s\n", err);
        CHECK(0);
        goto out;
    }
    /* the common words were dropped, grafana added to the dictionary */
    CHECK(strstr(vt_stt_model(stt), "; hints 2 rare of 5 word(s) (1 new) at ") != NULL);
    CHECK(vt_stt_hints_find(&h, "the") < 0);
    CHECK(vt_stt_hints_find(&h, "grafana") >= 0);
    /* silence gives no word, with or without hints */
    {
        int16_t quiet[16000] = {0};

        CHECK_INT(vt_stt_run(stt, quiet, 16000, &t, NULL, NULL, err, sizeof(err)), VT_SKIP);
        vt_transcript_release(&t);
    }
out:
    vt_stt_free(stt);
    vt_stt_hints_release(&h);
}
