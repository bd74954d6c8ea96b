/*
 * The search by meaning, reading what the text_embed stage stored: the query embedded
 * with the same model (stages/text_embed.h), the nearest vectors of that space
 * (vecsearch.h: an index kept in memory per library, shared by the process's handles,
 * brought up to date when the database changed), each turned into a moment: for a
 * chunk, the cue inside it that is nearest to the query; for a frame, its shot. Then
 * vt_search itself: words (search.c), meaning, pictures (visual.c), fused by rank.
 */
#include "base/http.h"
#include "base/util.h"
#include "core/library.h"
#include "ml/embed.h"
#include "ml/vindex.h"
#include "model/stage_config.h"
#include "search/floor.h"
#include "search/search_int.h"
#include "search/vecsearch.h"
#include "stages/text_embed.h"
#include "text/query.h"
#include "text/transcript.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUE_RESCORE_MAX 4096 /* cues embedded to place a hit's moment, per search */

/* ---- search by meaning ---- */

static float dot(const float *a, const float *b, int dim)
{
    float s = 0;

    for (int i = 0; i < dim; i++)
        s += a[i] * b[i];
    return s;
}

/* The cue of chunk ref nearest to the query: its moment and text into h. */
static int place_in_chunk(struct vt_library *lib, struct vt_embed *e, const float *qv,
                          const struct vt_vec_where *w, size_t *budget, struct vt_hit *h)
{
    struct vt_chunk *ch = NULL;
    size_t n = 0;
    struct vt_transcript t = {0};
    int rc = vt_store_chunks_range(lib->store, w->video_id, w->ref, w->ref + 1, &ch, &n);

    if (rc || !n) {
        vt_chunks_free(ch, n);
        return rc ? rc : VT_ENOTFOUND;
    }
    h->start_s = ch[0].start_s;
    h->end_s = ch[0].end_s;
    h->ref = ch[0].first_cue;
    rc =
        vt_store_transcript_range(lib->store, w->video_id, ch[0].first_cue, ch[0].last_cue + 1, &t);
    size_t best = 0;
    if (!rc && t.n_cues > 1 && t.n_cues <= *budget) {
        int dim = vt_embed_dim(e);
        float *cv = vt_xmalloc(t.n_cues * (size_t)dim * sizeof(float));
        const char **texts = vt_xcalloc(t.n_cues, sizeof(*texts));
        char err[256];
        float top = -2;
        for (size_t i = 0; i < t.n_cues; i++)
            texts[i] = t.cues[i].text;
        if (!vt_text_embed_all(e, texts, t.n_cues, cv, NULL, err, sizeof(err)))
            for (size_t i = 0; i < t.n_cues; i++) {
                float d = dot(qv, cv + i * (size_t)dim, dim);
                if (d > top) {
                    top = d;
                    best = i;
                }
            }
        *budget -= t.n_cues;
        free(texts);
        free(cv);
    }
    if (!rc && t.n_cues) {
        h->start_s = t.cues[best].start_s;
        h->end_s = t.cues[best].end_s;
        h->ref = ch[0].first_cue + (int)best;
        h->text = vt_xstrdup(t.cues[best].text);
    } else {
        h->text = vt_xstrdup(ch[0].text);
    }
    snprintf(h->source, sizeof(h->source), "speech");
    vt_transcript_release(&t);
    vt_chunks_free(ch, n);
    return 0;
}

/* The text read on frame ref into h; the moment is its shot (w's span). A frame whose lines
 * are gone (a redo of keyframe moved it, until ocr's commit) reads as its index row does. */
static int place_on_screen(struct vt_library *lib, const struct vt_vec_where *w, struct vt_hit *h)
{
    struct vt_store_frame *f = NULL;
    size_t n = 0;
    int rc = vt_store_frames_range(lib->store, w->video_id, w->ref, w->ref + 1, &f, &n);

    if (!rc && n)
        h->text = vt_text_embed_frame_text(&f[0]);
    if (!rc && !h->text)
        rc = vt_store_screen_text(lib->store, w->video_id, w->ref, &h->text);
    if (rc == VT_ENOTFOUND && n)
        rc = 0;
    if (rc) {
        vt_store_frames_free(f, n);
        return rc;
    }
    if (!h->text)
        h->text = vt_xstrdup("");
    h->start_s = w->start_s;
    h->end_s = w->end_s;
    h->ref = w->ref;
    snprintf(h->source, sizeof(h->source), "screen");
    vt_store_frames_free(f, n);
    return 0;
}

/*
 * The documented order of hits: score, best first; ties by video, then time, then
 * source and row. The vectors' own order (when they were stored) must not decide: it
 * differs between libraries holding the same videos, and between the two backends.
 */
static int by_tie(const void *pa, const void *pb)
{
    const struct vt_hit *a = pa, *b = pb;
    int c;

    if (a->score != b->score)
        return a->score < b->score ? 1 : -1;
    c = strcmp(a->video_id, b->video_id);
    if (c)
        return c;
    if (a->start_s != b->start_s)
        return a->start_s < b->start_s ? -1 : 1;
    c = strcmp(a->source, b->source);
    if (c)
        return c;
    return (a->ref > b->ref) - (a->ref < b->ref);
}

/*
 * The k nearest vectors of e's space to qv into *vh (caller frees) and *m. Vectors of
 * equal score beyond the k-th would make which of them come back depend on the order
 * they were stored in: while the last one ties with the page's last place (limit; a
 * library of copies of one talk), ask for 4 times as many, up to 64 times.
 */
static int nearest(struct vt_library *lib, struct vt_embed *e, const float *qv, size_t k,
                   size_t limit, struct vt_vhit **vh, size_t *m, char *err, size_t errlen)
{
    int rc;

    *vh = NULL;
    for (size_t grow = 1;; grow *= 4) {
        size_t last;

        free(*vh);
        *vh = vt_xcalloc(k, sizeof(**vh));
        rc = vt_vecsearch_nearest(lib, vt_embed_id(e), vt_embed_dim(e), qv, k, NULL, NULL, *vh, m,
                                  err, errlen);
        last = *m < limit ? *m : limit;
        if (rc || *m < k || !last || (*vh)[*m - 1].score < (*vh)[last - 1].score || grow >= 64)
            return rc;
        k *= 4;
    }
}

int vt_search_meaning(struct vt_library *lib, const struct vt_query *q,
                      const struct vt_search_opts *opts, int limit, struct vt_hit **hits,
                      size_t *n_hits, struct vt_search_floor *used, char *err, size_t errlen)
{
    struct vt_embed *e = NULL;
    struct vt_hit *out = NULL;
    size_t n = 0, cap = 0;
    char *text = vt_query_meaning_text(q);
    float *qv = NULL;
    int rc;

    *hits = NULL;
    *n_hits = 0;
    if (!*text || !strcmp(opts && opts->source ? opts->source : q->source, "title")) {
        free(text);
        return 0;
    }
    rc = vt_lib_text_embed(lib, &e, err, errlen);
    if (rc) {
        free(text);
        return rc;
    }
    int dim = vt_embed_dim(e);
    qv = vt_xmalloc((size_t)dim * sizeof(float));
    rc = vt_embed_texts(e, (const char *const *)&text, 1, qv, err, errlen);
    free(text);
    if (rc) {
        free(qv);
        return rc;
    }
    /* filters are applied after the scan: ask for more than needed when filtering */
    const char *video = opts && opts->video ? opts->video : q->video;
    const char *source = opts && opts->source ? opts->source : q->source;
    int filtered = *video || *source;
    size_t k = (size_t)limit * (filtered ? 20 : 2) + 10;
    struct vt_vhit *vh = NULL;
    size_t m = 0;
    rc = nearest(lib, e, qv, k, (size_t)limit, &vh, &m, err, errlen);
    struct vt_floor fl;
    int measured = 0;
    if (!rc)
        rc = vt_floor_get(lib, e, &fl, &measured, err, errlen);
    if (rc) {
        free(vh);
        free(qv);
        return rc;
    }
    vt_search_floor_put(used, "meaning", &fl, measured);
    size_t budget = CUE_RESCORE_MAX;
    for (size_t i = 0; i < m; i++) {
        struct vt_vec_where w;
        int rel = vt_floor_judge(&fl, vh[i].score);
        /* the page is full: only hits that tie with its last come in, to be ordered
         * (by_tie) and cut below */
        if (n >= (size_t)limit && vh[i].score < out[n - 1].score)
            break;
        if (!rel) { /* best first: the rest stand below the floor too */
            used->below = (int)(m - i);
            break;
        }
        rc = vt_store_vector_get(lib->store, vh[i].key, &w);
        if (rc == VT_ENOTFOUND) {
            rc = 0;
            continue;
        }
        if (rc)
            break;
        if (*video && strcmp(video, w.video_id))
            continue;
        if (w.kind != VT_VEC_CHUNK && w.kind != VT_VEC_SCREEN)
            continue; /* a picture's vector in a joint text-image space: not placed here */
        const char *src = vt_vec_kind_name(w.kind);
        if (*source && strcmp(source, src))
            continue;
        vt_grow((void **)&out, &cap, n + 1, sizeof(*out));
        struct vt_hit *h = &out[n];
        memset(h, 0, sizeof(*h));
        snprintf(h->video_id, sizeof(h->video_id), "%s", w.video_id);
        rc = w.kind == VT_VEC_CHUNK ? place_in_chunk(lib, e, qv, &w, &budget, h)
                                    : place_on_screen(lib, &w, h);
        if (rc == VT_ENOTFOUND) {
            rc = 0;
            continue;
        }
        if (rc)
            break;
        struct vt_video_rec v;
        memset(&v, 0, sizeof(v));
        if (!vt_store_video_get(lib->store, w.video_id, &v)) {
            h->title = vt_xstrdup(v.title ? v.title : "");
            vt_video_rec_release(&v);
        } else {
            h->title = vt_xstrdup("");
        }
        h->score = h->similarity = vh[i].score;
        h->relevance = rel;
        h->matched = VT_MATCH_MEANING;
        n++;
    }
    free(vh);
    free(qv);
    if (rc) {
        vt_hits_free(out, n);
        return vt_err(err, errlen, rc, "%s", vt_store_errmsg(lib->store));
    }
    if (n > 1)
        qsort(out, n, sizeof(*out), by_tie);
    for (; n > (size_t)limit; n--) {
        free(out[n - 1].title);
        free(out[n - 1].text);
    }
    *hits = out;
    *n_hits = n;
    return 0;
}

/* ---- fusion ---- */

/* Whether a word hit and a meaning hit are the same moment: one video, one source, and
 * the same cue or frame, or spans that overlap. */
static int same_place(const struct vt_hit *a, const struct vt_hit *b)
{
    /* a picture found by likeness and the text read on it are one frame */
    int frames = (!strcmp(a->source, "visual") && !strcmp(b->source, "screen")) ||
                 (!strcmp(a->source, "screen") && !strcmp(b->source, "visual"));

    if (strcmp(a->video_id, b->video_id))
        return 0;
    if (frames)
        return a->ref == b->ref;
    if (strcmp(a->source, b->source))
        return 0;
    return a->ref == b->ref || (a->start_s < b->end_s && b->start_s < a->end_s);
}

/* A hit that only a vector found, not far above chance: it ranks after the others. */
static int weak_alone(const struct vt_hit *h)
{
    return !(h->matched & VT_MATCH_WORDS) && h->relevance == VT_REL_WEAK;
}

static int by_fused(const void *pa, const void *pb)
{
    const struct vt_hit *a = pa, *b = pb;
    int c;

    if (weak_alone(a) != weak_alone(b))
        return weak_alone(a) - weak_alone(b);

    /* ties by video then time, as the word hits (search.c): qsort alone is not stable */
    if (a->score != b->score)
        return a->score < b->score ? 1 : -1;
    c = strcmp(a->video_id, b->video_id);
    if (c)
        return c;
    return a->start_s < b->start_s ? -1 : a->start_s > b->start_s;
}

/*
 * Reciprocal rank fusion of two ranked lists (vindex.h, vt_rrf): a moment's score is the
 * sum over the lists that hold it of 1 / (60 + rank). A moment found by both keeps the
 * word hit (its text has the matched words marked) with both signals in matched. Hits
 * found by meaning alone and only weakly (floor.h) come after the others, whatever their
 * score. Takes ownership of both lists' hits.
 */
void vt_hits_fuse(struct vt_hit *words, size_t n_words, struct vt_hit *meaning, size_t n_meaning,
                  size_t limit, struct vt_hit **out, size_t *n_out)
{
    struct vt_hit *r = vt_xcalloc(n_words + n_meaning + 1, sizeof(*r));
    char *taken = vt_xcalloc(n_meaning + 1, 1);
    size_t n = 0;

    for (size_t i = 0; i < n_words; i++) {
        r[n] = words[i];
        r[n].matched |= VT_MATCH_WORDS;
        r[n].score = vt_rrf(i);
        for (size_t j = 0; j < n_meaning; j++)
            if (!taken[j] && same_place(&words[i], &meaning[j])) {
                taken[j] = 1;
                r[n].matched |= VT_MATCH_MEANING;
                r[n].score += vt_rrf(j);
                r[n].similarity = meaning[j].similarity;
                r[n].relevance = meaning[j].relevance;
                break;
            }
        n++;
    }
    for (size_t j = 0; j < n_meaning; j++) {
        if (taken[j]) {
            free(meaning[j].title);
            free(meaning[j].text);
            continue;
        }
        r[n] = meaning[j];
        r[n].score = vt_rrf(j);
        n++;
    }
    free(taken);
    free(words);
    free(meaning);
    qsort(r, n, sizeof(*r), by_fused);
    if (n > limit) {
        for (size_t i = limit; i < n; i++) {
            free(r[i].title);
            free(r[i].text);
        }
        n = limit;
    }
    *out = r;
    *n_out = n;
}

/* ---- the search: words, meaning or both ---- */

/* Whether a text embedding model, or a frame model that embeds words, is configured (the
 * mode auto chooses by it). */
static int meaning_configured(struct vt_library *lib)
{
    struct vt_config *cf = NULL;
    char err[256];
    int yes = 0;

    if (!vt_config_load(lib->dir, &cf, err, sizeof(err))) {
        const char *joint = vt_config_get(cf, VT_KEY(FRAME_EMBED_JOINT_TEXT));
        yes = vt_text_embed_configured(cf);
        /* or a frame model that embeds words (vt_search_visual) */
        yes |= !strcmp(vt_config_backend(cf, VT_STAGE_FRAME_EMBED, NULL), "openai") && joint &&
               strcmp(joint, "0") && strcmp(joint, "false") && strcmp(joint, "no");
        vt_config_free(cf);
    }
    return yes;
}

int vt_search(struct vt_library *lib, const char *query, size_t query_len,
              const struct vt_search_opts *opts, struct vt_hit **hits, size_t *n,
              struct vt_search_info *info)
{
    struct vt_search_opts o = opts ? *opts : (struct vt_search_opts){0};
    struct vt_search_info wi = {0};
    struct vt_hit *wh = NULL, *mh = NULL;
    size_t nw = 0, nm = 0;
    double t0 = vt_monotonic_s();
    char err[512] = "";
    int rc = 0;

    *hits = NULL;
    *n = 0;
    if (o.mode == VT_SEARCH_AUTO)
        o.mode = meaning_configured(lib) ? VT_SEARCH_HYBRID : VT_SEARCH_WORDS;
    if (o.limit <= 0)
        o.limit = 20;
    if (o.limit > 1000)
        o.limit = 1000;
    if (o.mode != VT_SEARCH_MEANING) {
        rc = vt_search_words(lib, query, query_len, &o, &wh, &nw, &wi);
        if (rc)
            return rc;
    }
    struct vt_hit *vh = NULL;
    size_t nv = 0;
    if (o.mode != VT_SEARCH_WORDS) {
        struct vt_query q;
        char verr[512] = "";
        /* one budget for the query's embedding, however many requests and retries it takes
         * (a server that never answers costs this, not 3 x 60 s) */
        double budget_s = o.embed_budget_s > 0 ? o.embed_budget_s : VT_SEARCH_EMBED_BUDGET_S;
        double outer = vt_http_deadline_set(vt_monotonic_s() + budget_s);

        vt_query_parse(query ? query : "", query ? query_len : 0, &q);
        int rm = vt_search_meaning(lib, &q, &o, o.limit, &mh, &nm, &wi.floors[0], err, sizeof(err));
        /* pictures too, when the frame model embeds words (a joint text-image model) */
        int rv =
            vt_search_visual(lib, &q, &o, o.limit, &vh, &nv, &wi.floors[1], verr, sizeof(verr));
        vt_query_release(&q);
        vt_http_deadline_set(outer);
        if (rm && o.mode == VT_SEARCH_MEANING && rv) {
            vt_hits_free(vh, nv);
            return vt_lib_fail(lib, rm < 0 ? rm : VT_EINVAL, "search by meaning: %s", err);
        }
        if (rm < 0) /* the rest still answers (VT_SKIP: no text model, nothing to say) */
            snprintf(wi.warning, sizeof(wi.warning), "meaning left out: %s", err);
        else if (rv < 0) /* a frame model that should answer did not */
            snprintf(wi.warning, sizeof(wi.warning), "pictures left out: %s", verr);
    }
    if (o.mode == VT_SEARCH_HYBRID) {
        vt_hits_fuse(wh, nw, mh, nm, (size_t)o.limit + nv, hits, n);
        if (nv)
            vt_hits_fuse_more(hits, n, vh, nv, (size_t)o.limit);
        else
            vt_hits_free(vh, nv);
    } else if (o.mode == VT_SEARCH_MEANING && nv) {
        /* passages, screens and pictures: their ranks fused as in hybrid */
        vt_hits_fuse(NULL, 0, mh, nm, (size_t)o.limit + nv, hits, n);
        vt_hits_fuse_more(hits, n, vh, nv, (size_t)o.limit);
    } else if (o.mode == VT_SEARCH_MEANING) {
        *hits = mh;
        *n = nm;
    } else {
        for (size_t i = 0; i < nw; i++)
            wh[i].matched = VT_MATCH_WORDS;
        *hits = wh;
        *n = nw;
    }
    if (info) {
        *info = wi;
        info->mode = o.mode;
        info->took_ms = (vt_monotonic_s() - t0) * 1000.0;
    }
    return 0;
}

void vt_hits_fuse_more(struct vt_hit **list, size_t *n, struct vt_hit *extra, size_t n_extra,
                       size_t limit)
{
    struct vt_hit *r = vt_xrealloc(*list, (*n + n_extra + 1) * sizeof(*r));
    size_t m = *n;

    for (size_t j = 0; j < n_extra; j++) {
        size_t i = 0;
        while (i < *n && !same_place(&r[i], &extra[j]))
            i++;
        if (i < *n) {
            r[i].matched |= extra[j].matched;
            r[i].score += vt_rrf(j);
            if (extra[j].relevance > r[i].relevance) {
                r[i].relevance = extra[j].relevance;
                r[i].similarity = extra[j].similarity;
            }
            free(extra[j].title);
            free(extra[j].text);
            continue;
        }
        r[m] = extra[j];
        r[m++].score = vt_rrf(j);
    }
    free(extra);
    qsort(r, m, sizeof(*r), by_fused);
    for (size_t i = limit; i < m; i++) {
        free(r[i].title);
        free(r[i].text);
    }
    *list = r;
    *n = m < limit ? m : limit;
}
