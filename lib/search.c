/*
 * Search: every hit is a moment of a video. Three tiers, each a query on the
 * full-text index (store.c), best first:
 *
 *   0  the plain words as an exact phrase
 *   1  all the terms, anywhere in one cue, frame text or title
 *   2  approximate: terms widened to indexed words that sound alike (speech) or
 *      are one character off (screen), for recognition and OCR errors
 *
 * Within a tier rows are ranked by BM25. For a term present in most of the
 * library, ranking every row would cost the full hit count, so when even the
 * rarest term is that common, only the newest VT_SCAN_CAP matching rows are
 * ranked. Hits at the same moment of the same video are merged.
 */
#include "library.h"
#include "query.h"
#include "util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VT_EXACT_MAX_ROWS 20000 /* rank exactly when the rarest term is in fewer rows */
#define VT_SCAN_CAP       3000
#define VT_MAX_ALTS       24

struct cand {
    struct vt_hit h;
    long long rowid;
    int tier;
    const char *match; /* the tier's expression, for highlighting */
};

struct collect {
    struct cand *v;
    size_t n, cap;
    int tier;
    const char *match;
};

static int collect_row(void *user, const struct vt_fts_row *r)
{
    struct collect *c = user;
    struct cand *x;

    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].rowid == r->rowid)
            return 0; /* found by a better tier already */
    vt_grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v));
    x = &c->v[c->n++];
    memset(x, 0, sizeof(*x));
    x->rowid = r->rowid;
    x->tier = c->tier;
    x->match = c->match;
    snprintf(x->h.video_id, sizeof(x->h.video_id), "%s", r->video_id);
    x->h.title = vt_xstrdup(r->title);
    x->h.start_s = r->start_s;
    x->h.end_s = r->end_s;
    snprintf(x->h.source, sizeof(x->h.source), "%s", r->source);
    x->h.ref = r->ref;
    x->h.approx = c->tier == 2;
    /* tiers dominate, BM25 orders within a tier */
    x->h.score = (2 - c->tier) * 1000.0 + r->score;
    return 0;
}

/* Is the query selective enough to rank every matching row? */
static int rank_exactly(struct vt_library *lib, const struct vt_query *q)
{
    long long rarest = -1;

    for (size_t i = 0; i < q->n_terms; i++) {
        const struct vt_qterm *t = &q->terms[i];

        if (t->exclude || (t->prefix && t->n_words == 1))
            continue;
        for (size_t k = 0; k < t->n_words; k++) {
            long long n;

            if (vt_store_term_rows(lib->store, t->words[k], &n))
                return 1;
            if (rarest < 0 || n < rarest)
                rarest = n;
        }
    }
    return rarest < 0 ? 0 : rarest <= VT_EXACT_MAX_ROWS;
}

static int run_tier(struct vt_library *lib, struct collect *c, int tier, const char *match,
                    const char *source, const char *video, int limit, int exact)
{
    c->tier = tier;
    c->match = match;
    return vt_store_fts(lib->store, match, source, video, exact ? limit : VT_SCAN_CAP, exact,
                        collect_row, c);
}

struct alts {
    char **v;
    size_t n, cap;
    const char *self;
};

static void add_alt(void *user, const char *term)
{
    struct alts *a = user;

    if (a->n >= VT_MAX_ALTS || !strcmp(term, a->self))
        return;
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->v[i], term))
            return;
    vt_grow((void **)&a->v, &a->cap, a->n + 2, sizeof(*a->v));
    a->v[a->n++] = vt_xstrdup(term);
    a->v[a->n] = NULL;
}

/* Words one edit (delete, transpose, replace, insert) away from w, ASCII only. */
static char **edits1(const char *w, size_t *count)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    size_t n = strlen(w), cap = 0, len = 0;
    char **v = NULL;
    char buf[80];

    if (n < 4 || n > 40) {
        *count = 0;
        return NULL;
    }
#define PUSH()                                                                                     \
    do {                                                                                           \
        vt_grow((void **)&v, &cap, len + 1, sizeof(*v));                                           \
        v[len++] = vt_xstrdup(buf);                                                                \
    } while (0)
    for (size_t i = 0; i < n; i++) { /* deletes */
        snprintf(buf, sizeof(buf), "%.*s%s", (int)i, w, w + i + 1);
        PUSH();
    }
    for (size_t i = 0; i + 1 < n; i++) { /* transposes */
        snprintf(buf, sizeof(buf), "%s", w);
        buf[i] = w[i + 1];
        buf[i + 1] = w[i];
        PUSH();
    }
    for (size_t i = 0; i < n; i++) /* replaces */
        for (const char *l = letters; *l; l++) {
            if (*l == w[i])
                continue;
            snprintf(buf, sizeof(buf), "%s", w);
            buf[i] = *l;
            PUSH();
        }
    for (size_t i = 0; i <= n; i++) /* inserts */
        for (const char *l = letters; *l; l++) {
            snprintf(buf, sizeof(buf), "%.*s%c%s", (int)i, w, *l, w + i);
            PUSH();
        }
#undef PUSH
    *count = len;
    return v;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Alternatives per positive term for the approximate tier; 1 if any term has some. */
static int build_alts(struct vt_library *lib, const struct vt_query *q, int phonetic,
                      struct alts *out)
{
    size_t pos = 0;
    int any = 0;

    for (size_t i = 0; i < q->n_terms; i++) {
        const struct vt_qterm *t = &q->terms[i];
        struct alts *a;

        if (t->exclude)
            continue;
        a = &out[pos++];
        memset(a, 0, sizeof(*a));
        if (t->n_words != 1 || t->prefix)
            continue;
        a->self = t->words[0];
        if (phonetic) {
            char key[16];

            vt_metaphone(t->words[0], key, sizeof(key));
            if (key[0] && strlen(t->words[0]) >= 3)
                vt_store_phonetic_terms(lib->store, key, VT_MAX_ALTS, add_alt, a);
        } else {
            size_t n;
            char **cands = edits1(t->words[0], &n);

            vt_store_terms_indexed(lib->store, cands, n, add_alt, a);
            free_strv(cands, n);
        }
        any |= a->n > 0;
    }
    return any;
}

static int by_score(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    if (x->h.score != y->h.score)
        return x->h.score < y->h.score ? 1 : -1;
    if (strcmp(x->h.video_id, y->h.video_id))
        return strcmp(x->h.video_id, y->h.video_id);
    return x->h.start_s < y->h.start_s ? -1 : x->h.start_s > y->h.start_s;
}

/* Same video and the same moment: overlapping spans of one source, or starts within 1 s. */
static int same_moment(const struct vt_hit *a, const struct vt_hit *b)
{
    if (strcmp(a->video_id, b->video_id))
        return 0;
    if (!strcmp(a->source, b->source) && a->start_s < b->end_s && b->start_s < a->end_s)
        return 1;
    return fabs(a->start_s - b->start_s) < 1.0;
}

static void add_also(struct vt_hit *h, const char *source)
{
    size_t len = strlen(h->also);

    if (!strcmp(h->source, source) || strstr(h->also, source))
        return;
    snprintf(h->also + len, sizeof(h->also) - len, "%s%s", len ? "," : "", source);
}

int vt_search(struct vt_library *lib, const char *query, size_t query_len,
              const struct vt_search_opts *opts, struct vt_hit **hits, size_t *n, double *took_ms)
{
    double t0 = vt_monotonic_s();
    struct vt_query q;
    struct collect c = {0};
    struct alts alts[VT_QUERY_MAX_TERMS];
    char *m0 = NULL, *m1 = NULL, *m2s = NULL, *m2o = NULL;
    const char *video, *source;
    int limit = opts && opts->limit > 0 ? opts->limit : 20, exact, rc = 0;
    size_t kept = 0;

    *hits = NULL;
    *n = 0;
    if (limit > 1000)
        limit = 1000;
    vt_query_parse(query ? query : "", query ? query_len : 0, &q);
    video = opts && opts->video ? opts->video : q.video;
    source = opts && opts->source ? opts->source : q.source;
    memset(alts, 0, sizeof(alts));
    if (source[0] && strcmp(source, "speech") && strcmp(source, "screen") &&
        strcmp(source, "title"))
        goto out; /* a source that does not exist matches nothing */
    m1 = vt_query_fts(&q, 0, NULL);
    if (!m1)
        goto out;
    m0 = vt_query_fts(&q, 1, NULL);
    exact = rank_exactly(lib, &q);
    rc = vt_store_begin_read(lib->store);
    if (!rc && m0)
        rc = run_tier(lib, &c, 0, m0, source, video, limit * 3, exact);
    if (!rc)
        rc = run_tier(lib, &c, 1, m1, source, video, limit * 3, exact);
    if (!rc && (!source[0] || !strcmp(source, "speech")) && build_alts(lib, &q, 1, alts)) {
        char **av[VT_QUERY_MAX_TERMS];

        for (size_t i = 0; i < VT_QUERY_MAX_TERMS; i++)
            av[i] = alts[i].v;
        m2s = vt_query_fts(&q, 0, av);
        rc = run_tier(lib, &c, 2, m2s, "speech", video, limit * 2, 1);
    }
    for (size_t i = 0; i < VT_QUERY_MAX_TERMS; i++) {
        free_strv(alts[i].v, alts[i].n);
        memset(&alts[i], 0, sizeof(alts[i]));
    }
    if (!rc && (!source[0] || !strcmp(source, "screen")) && build_alts(lib, &q, 0, alts)) {
        char **av[VT_QUERY_MAX_TERMS];

        for (size_t i = 0; i < VT_QUERY_MAX_TERMS; i++)
            av[i] = alts[i].v;
        m2o = vt_query_fts(&q, 0, av);
        rc = run_tier(lib, &c, 2, m2o, "screen", video, limit * 2, 1);
    }
    if (rc) {
        rc = vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
        goto done;
    }
    qsort(c.v, c.n, sizeof(*c.v), by_score);
    /* merge hits at the same moment into the better one */
    for (size_t i = 0; i < c.n; i++) {
        size_t k;

        for (k = 0; k < kept; k++)
            if (same_moment(&c.v[k].h, &c.v[i].h))
                break;
        if (k < kept) {
            add_also(&c.v[k].h, c.v[i].h.source);
            free(c.v[i].h.title);
            continue;
        }
        if (kept == (size_t)limit) {
            free(c.v[i].h.title);
            continue;
        }
        c.v[kept++] = c.v[i];
    }
    *hits = vt_xcalloc(kept, sizeof(**hits));
    for (size_t i = 0; i < kept; i++) {
        char *text = NULL;

        if (vt_store_fts_highlight(lib->store, c.v[i].match, c.v[i].rowid, VT_MARK_OPEN,
                                   VT_MARK_CLOSE, &text))
            text = NULL;
        (*hits)[i] = c.v[i].h;
        (*hits)[i].text = text ? text : vt_xstrdup("");
    }
    *n = kept;
    c.n = 0;
done:
    vt_store_rollback(lib->store);
out:
    for (size_t i = 0; i < c.n; i++)
        free(c.v[i].h.title);
    free(c.v);
    for (size_t i = 0; i < VT_QUERY_MAX_TERMS; i++)
        free_strv(alts[i].v, alts[i].n);
    free(m0);
    free(m1);
    free(m2s);
    free(m2o);
    vt_query_release(&q);
    if (took_ms)
        *took_ms = (vt_monotonic_s() - t0) * 1000.0;
    return rc;
}

void vt_hits_free(struct vt_hit *hits, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(hits[i].title);
        free(hits[i].text);
    }
    free(hits);
}
