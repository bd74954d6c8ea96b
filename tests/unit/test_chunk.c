/* Unit tests of chunking (lib/text/chunk.c) on synthetic transcripts. */
#include "base/util.h"
#include "harness.h"
#include "store/store.h"
#include "text/chunk.h"
#include "text/transcript.h"

#include <stdlib.h>

/* n cues of len_s seconds with gap_s between them */
static void make(struct vt_transcript *t, size_t n, double len_s, double gap_s)
{
    memset(t, 0, sizeof(*t));
    t->cues = vt_xcalloc(n, sizeof(*t->cues));
    t->n_cues = n;
    for (size_t i = 0; i < n; i++) {
        t->cues[i].start_s = (double)i * (len_s + gap_s);
        t->cues[i].end_s = t->cues[i].start_s + len_s;
        t->cues[i].text = vt_xasprintf("cue %zu", i);
    }
}

static void check_cover(const struct vt_transcript *t, const struct vt_chunk *c, size_t n)
{
    CHECK(n > 0);
    if (!n)
        return;
    CHECK_INT(c[0].first_cue, 0);
    CHECK_INT(c[n - 1].last_cue, (long long)t->n_cues - 1);
    for (size_t i = 0; i < n; i++) {
        CHECK(c[i].first_cue <= c[i].last_cue);
        if (i)
            CHECK_INT(c[i].first_cue, c[i - 1].last_cue + 1);
        CHECK_NEAR(c[i].start_s, t->cues[c[i].first_cue].start_s, 1e-9);
        CHECK_NEAR(c[i].end_s, t->cues[c[i].last_cue].end_s, 1e-9);
    }
}

VT_TEST(chunk_lengths)
{
    struct vt_transcript t;
    struct vt_chunk *c;
    size_t n;

    /* a 16-minute talk of 89 cues, like the seed's: about 25 passages of 20-60 s */
    make(&t, 89, 10.0, 0.8);
    vt_chunk_cues(&t, NULL, 0, &c, &n);
    check_cover(&t, c, n);
    for (size_t i = 0; i < n; i++) {
        double len = c[i].end_s - c[i].start_s;

        CHECK(len <= VT_CHUNK_MAX_S + 1e-9);
        if (i + 1 < n)
            CHECK(len >= VT_CHUNK_MIN_S - 1e-9);
    }
    CHECK(n >= 16 && n <= 48);
    CHECK(strstr(c[0].text, "cue 0 cue 1") != NULL);
    vt_chunks_free(c, n);
    vt_transcript_release(&t);
}

VT_TEST(chunk_prefers_shot_ends)
{
    struct vt_transcript t;
    struct vt_chunk *c;
    size_t n;
    double ends[] = {35.6}; /* cue 11 ends at 11 * 3 + 2.6 */

    make(&t, 40, 2.6, 0.4);
    vt_chunk_cues(&t, ends, 1, &c, &n);
    check_cover(&t, c, n);
    CHECK_INT(c[0].last_cue, 11);
    vt_chunks_free(c, n);
    vt_transcript_release(&t);
}

VT_TEST(chunk_odd_inputs)
{
    struct vt_transcript t;
    struct vt_chunk *c;
    size_t n;

    make(&t, 0, 1, 1);
    vt_chunk_cues(&t, NULL, 0, &c, &n);
    CHECK_INT(n, 0);
    vt_chunks_free(c, n);
    vt_transcript_release(&t);
    /* one cue longer than the maximum is a passage of its own */
    make(&t, 3, 100, 1);
    vt_chunk_cues(&t, NULL, 0, &c, &n);
    check_cover(&t, c, n);
    CHECK_INT(n, 3);
    vt_chunks_free(c, n);
    vt_transcript_release(&t);
    /* a short talk is one passage */
    make(&t, 3, 2, 1);
    vt_chunk_cues(&t, NULL, 0, &c, &n);
    check_cover(&t, c, n);
    CHECK_INT(n, 1);
    vt_chunks_free(c, n);
    vt_transcript_release(&t);
}
