/*
 * Chunking (see chunk.h). Greedy and deterministic: from the first cue of a passage,
 * every cue end between VT_CHUNK_MIN_S and VT_CHUNK_MAX_S after its start is a
 * candidate, scored by how close it is to a shot or chapter end, the pause that
 * follows it and how close the length is to VT_CHUNK_TARGET_S; the best wins. A
 * single cue longer than the maximum is a passage of its own, and a short tail is
 * folded into the passage before it.
 */
#include "text/chunk.h"

#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 when t is within 1.5 s of a preferred end, fading to 0 at 4 s. */
static double near_end(double t, const double *ends, size_t n)
{
    double best = 0;

    for (size_t i = 0; i < n; i++) {
        double d = fabs(ends[i] - t), v = d <= 1.5 ? 1 : d >= 4 ? 0 : (4 - d) / 2.5;

        if (v > best)
            best = v;
    }
    return best;
}

static void emit(const struct vt_transcript *t, size_t first, size_t last, struct vt_chunk **out,
                 size_t *n, size_t *cap)
{
    struct vt_sb sb = {0};
    struct vt_chunk *c;

    for (size_t i = first; i <= last; i++) {
        const char *p = t->cues[i].text ? t->cues[i].text : "";

        if (sb.len)
            vt_sb_addc(&sb, ' ');
        for (; *p; p++)
            vt_sb_addc(&sb, *p == '\n' ? ' ' : *p);
    }
    vt_grow((void **)out, cap, *n + 1, sizeof(**out));
    c = &(*out)[(*n)++];
    c->start_s = t->cues[first].start_s;
    c->end_s = t->cues[last].end_s;
    c->text = vt_sb_detach(&sb);
    c->first_cue = (int)first;
    c->last_cue = (int)last;
}

void vt_chunk_cues(const struct vt_transcript *t, const double *ends, size_t n_ends,
                   struct vt_chunk **out, size_t *n)
{
    size_t cap = 0, first = 0;

    *out = NULL;
    *n = 0;
    while (first < t->n_cues) {
        double start = t->cues[first].start_s, best_score = -1e9;
        size_t best = first;

        for (size_t i = first; i < t->n_cues; i++) {
            double len = t->cues[i].end_s - start, gap, score;

            if (i > first && len > VT_CHUNK_MAX_S)
                break;
            best = best_score > -1e9 ? best : i; /* at least one cue */
            if (len < VT_CHUNK_MIN_S && i + 1 < t->n_cues)
                continue;
            gap = i + 1 < t->n_cues ? t->cues[i + 1].start_s - t->cues[i].end_s : 10;
            score = 2.0 * near_end(t->cues[i].end_s, ends, n_ends) + fmin(gap, 3.0) / 1.5 -
                    fabs(len - VT_CHUNK_TARGET_S) / 20.0;
            if (score > best_score) {
                best_score = score;
                best = i;
            }
        }
        /* no candidate in range (cues sparse or long): take what fits */
        if (best_score == -1e9) {
            best = first;
            while (best + 1 < t->n_cues && t->cues[best + 1].end_s - start <= VT_CHUNK_MAX_S)
                best++;
        }
        /* a short tail joins the passage before it when that stays reasonable */
        if (best + 1 == t->n_cues && *n > 0 && t->cues[best].end_s - start < VT_CHUNK_MIN_S / 2 &&
            t->cues[best].end_s - (*out)[*n - 1].start_s <= VT_CHUNK_MAX_S * 1.2) {
            struct vt_chunk *prev = &(*out)[--(*n)];

            first = (size_t)prev->first_cue;
            free(prev->text);
        }
        emit(t, first, best, out, n, &cap);
        first = best + 1;
    }
}
