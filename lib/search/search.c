/*
 * Search: every hit is a moment of a video. Three tiers, each a search of the
 * store's word index with the parsed query (vt_store_search, store.h), best first:
 *
 *   0  the plain words as an exact phrase (found by the tier-1 query itself: the
 *      ranking function sees the words' positions)
 *   1  all the terms, anywhere in one cue, frame text or title; then, below those rows,
 *      two adjacent cues holding the terms between them where neither does alone (words
 *      said across a pause: the store's cue pairs), starting where the words start
 *   2  approximate: terms widened to indexed words that sound alike (speech) or
 *      are one edit off (screen), for recognition and OCR errors; and, for three
 *      words or more, speech where all but one of them were recognised; each in one
 *      cue, then (speech) across two adjacent cues; only when the exact tiers do not
 *      fill the page, since these hits rank below theirs
 *
 * Within a tier, the store ranks rows by BM25 over at most VT_SCAN_CAP matching
 * rows (the newest): when fewer rows match that is exact ranking, and a word
 * present in every video costs no more than VT_SCAN_CAP rows. word_hits() gathers
 * the ranked rows of all tiers (another signal would add its own ranked rows to the
 * same candidates); vt_search then reads them best first, a batch of rows with their cue
 * words per call of the store (vt_store_docs: one statement, where a server would take
 * two round trips per hit), merges hits at the same moment of the same video, and marks
 * the matched words from the query's own words, so marking costs nothing per index size.
 * No backend syntax is written here.
 */
#include "base/util.h"
#include "core/library.h"
#include "search/search_int.h"
#include "text/query.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VT_SCAN_CAP        600
#define VT_SEARCH_BUDGET_S 0.025 /* past this, rarely-together common words stop early */
#define VT_MAX_ALTS        VT_STORE_MAX_ALTS

struct cand {
    struct vt_hit h;
    long long rowid;
    long long next; /* a pair's second cue (vt_store_search.pairs), else 0 */
    int at;         /* a pair's first matched word, a token of its first cue */
    int tier;
};

struct collect {
    struct cand *v;
    size_t n, cap;
    double deadline_s; /* stop reading more rows after this (vt_monotonic_s) */
    int partial;       /* some tier stopped at the deadline */
    int more;          /* some tier found as many rows as it ranks: others may match */
};

struct alts {
    char **v; /* NULL-terminated */
    size_t n, cap;
    const char *self;
};

/*
 * Run one tier: the store ranks the rows that match r; keep the best `keep` that no
 * better tier found. Exact rows (the words in sequence) rise to tier 0; tiers
 * dominate, the store's score orders within a tier.
 */
static int run_tier(struct vt_library *lib, struct collect *c, int tier,
                    const struct vt_store_search *r, size_t keep)
{
    struct vt_store_hit *ids;
    size_t n, kept = 0;
    int partial = 0;
    int rc = r->pairs ? vt_store_search_pairs(lib->store, r, &ids, &n, &partial)
                      : vt_store_search(lib->store, r, &ids, &n, &partial);

    if (rc)
        return rc;
    for (size_t i = 0; i < n && kept < keep; i++) {
        struct cand *x;
        size_t k;

        for (k = 0; k < c->n; k++)
            if (c->v[k].rowid == ids[i].rowid)
                break;
        if (k < c->n)
            continue; /* found by a better tier already */
        vt_grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v));
        x = &c->v[c->n++];
        memset(x, 0, sizeof(*x));
        x->rowid = ids[i].rowid;
        x->next = ids[i].next;
        x->at = ids[i].at;
        x->tier = ids[i].exact ? 0 : tier;
        x->h.score = (2 - x->tier) * 1000.0 + ids[i].score;
        x->h.approx = x->tier == 2;
        /* known before the row is read: ties are ordered by them (by_score) */
        memcpy(x->h.video_id, ids[i].video_id, sizeof(x->h.video_id));
        x->h.start_s = ids[i].start_s;
        kept++;
    }
    free(ids);
    c->partial |= partial;
    c->more |= r->cap > 0 && n >= (size_t)r->cap;
    return 0;
}

static void add_alt(struct alts *a, const char *term)
{
    if (a->n >= VT_MAX_ALTS || !strcmp(term, a->self))
        return;
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->v[i], term))
            return;
    vt_grow((void **)&a->v, &a->cap, a->n + 2, sizeof(*a->v));
    a->v[a->n++] = vt_xstrdup(term);
    a->v[a->n] = NULL;
}

/*
 * Words a recogniser writes one way and people type another (the PocketSphinx
 * dictionary spells titles as abbreviations). Each pair is searched both ways.
 */
static const char *const spellings[][2] = {
    {"mister", "mr"},      {"missus", "mrs"}, {"doctor", "dr"}, {"okay", "ok"},
    {"professor", "prof"}, {"versus", "vs"},  {"saint", "st"},  {"mount", "mt"},
};

static void add_spellings(struct alts *a, const char *w)
{
    for (size_t i = 0; i < VT_ARRAY_LEN(spellings); i++) {
        if (!strcmp(w, spellings[i][0]))
            add_alt(a, spellings[i][1]);
        else if (!strcmp(w, spellings[i][1]))
            add_alt(a, spellings[i][0]);
    }
}

static void add_similar(void *user, const char *term)
{
    add_alt(user, term);
}

static void free_alts(struct alts *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < a[i].n; k++)
            free(a[i].v[k]);
        free(a[i].v);
        memset(&a[i], 0, sizeof(a[i]));
    }
}

/* Alternatives per positive term for the approximate tier: 1 if any term has some,
 * 0 if none, or a negative error code. */
static int build_alts(struct vt_library *lib, const struct vt_query *q, int phonetic,
                      struct alts *out)
{
    size_t pos = 0;
    int any = 0, rc = 0;

    for (size_t i = 0; i < q->n_terms; i++) {
        const struct vt_qterm *t = &q->terms[i];
        struct alts *a;

        if (t->exclude)
            continue;
        a = &out[pos++];
        if (t->n_words != 1 || t->prefix)
            continue;
        a->self = t->words[0];
        if (phonetic)
            add_spellings(a, t->words[0]);
        rc = vt_store_similar_words(lib->store, t->words[0],
                                    phonetic ? VT_SIMILAR_SOUND : VT_SIMILAR_EDIT, VT_MAX_ALTS,
                                    add_similar, a);
        if (rc)
            return rc;
        any |= a->n > 0;
    }
    return any;
}

static int approx_tier(struct vt_library *lib, struct collect *c, const struct vt_query *q,
                       int phonetic, const char *source, const char *video, size_t keep,
                       struct alts *alts)
{
    char **av[VT_QUERY_MAX_TERMS];
    struct vt_store_search r = {q,           VT_MATCH_ALL,  av, source, video, 0,
                                VT_SCAN_CAP, c->deadline_s, 0};
    int rc = build_alts(lib, q, phonetic, alts);

    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < VT_QUERY_MAX_TERMS; i++)
        av[i] = alts[i].v;
    rc = run_tier(lib, c, 2, &r, keep);
    /* speech: the same across a pause (two adjacent cues), below the rows */
    r.pairs = phonetic;
    return rc || !phonetic ? rc : run_tier(lib, c, 2, &r, keep);
}

/* Speech missing one of three or more words: recognisers drop or garble a word; in one
 * cue, then across two adjacent cues ("still more / respectable", "than" misheard). */
static int all_but_one_tier(struct vt_library *lib, struct collect *c, const struct vt_query *q,
                            const char *video, size_t keep, const struct alts *alts)
{
    char **av[VT_QUERY_MAX_TERMS];
    struct vt_store_search r = {q,           VT_MATCH_ALL_BUT_ONE, av, "speech", video, 0,
                                VT_SCAN_CAP, c->deadline_s,        0};
    int rc;

    for (size_t i = 0; i < VT_QUERY_MAX_TERMS; i++)
        av[i] = alts[i].v;
    rc = run_tier(lib, c, 2, &r, keep);
    r.pairs = 1;
    return rc ? rc : run_tier(lib, c, 2, &r, keep);
}

/*
 * Words said across a cue boundary: pairs of adjacent cues that match where neither cue
 * does alone, in the exact tiers below their rows (score 0). Only for two words or more,
 * and only when some could reach the page: not when the exact rows already fill it twice.
 */
static int pair_tier(struct vt_library *lib, struct collect *c, const struct vt_query *q,
                     const char *source, const char *video, int limit, size_t keep)
{
    struct vt_store_search r = {q, VT_MATCH_ALL, NULL,          source, video,
                                1, VT_SCAN_CAP,  c->deadline_s, 1};
    size_t words = 0, exact = 0;

    for (size_t i = 0; i < q->n_terms; i++)
        words += q->terms[i].exclude ? 0 : q->terms[i].n_words;
    for (size_t i = 0; i < c->n; i++)
        exact += c->v[i].tier == 0;
    if (words < 2 || (source[0] && strcmp(source, "speech")) || exact >= (size_t)limit * 2 ||
        (vt_query_plain_words(q, NULL) < 2 && c->n >= (size_t)limit * 2))
        return 0;
    return run_tier(lib, c, 1, &r, keep);
}

/*
 * The word signal: rows of the index matching q in the tiers above, into c (each
 * with its tier's score), inside the caller's read snapshot; phon and near get the
 * alternatives the approximate tiers used (for marking). 0 or an error code.
 */
static int word_hits(struct vt_library *lib, const struct vt_query *q, const char *source,
                     const char *video, int limit, struct collect *c, struct alts *phon,
                     struct alts *near)
{
    size_t keep = (size_t)limit * 3;
    /* when every term is a plain word, their sequence is the exact phrase (tier 0) */
    struct vt_store_search r = {q, VT_MATCH_ALL, NULL,          source, video,
                                1, VT_SCAN_CAP,  c->deadline_s, 0};
    int rc = run_tier(lib, c, 1, &r, keep);

    if (!rc)
        rc = pair_tier(lib, c, q, source, video, limit, keep);
    if (!rc && c->n < (size_t)limit * 2) {
        if (!source[0] || !strcmp(source, "speech"))
            rc = approx_tier(lib, c, q, 1, "speech", video, keep, phon);
        if (!rc && (!source[0] || !strcmp(source, "screen")))
            rc = approx_tier(lib, c, q, 0, "screen", video, keep, near);
        if (!rc && c->n < (size_t)limit * 2 && (!source[0] || !strcmp(source, "speech")))
            rc = all_but_one_tier(lib, c, q, video, keep, phon);
    }
    return rc;
}

/* Best first, ties by video then time (then row): one order for every page and front-end. */
static int by_score(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    int c;

    if (x->h.score != y->h.score)
        return x->h.score < y->h.score ? 1 : -1;
    c = strcmp(x->h.video_id, y->h.video_id);
    if (c)
        return c;
    if (x->h.start_s != y->h.start_s)
        return x->h.start_s < y->h.start_s ? -1 : 1;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
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

/* The words to mark in hit texts: the query's and the alternatives it used. */
struct marks {
    const char *w[VT_QUERY_MAX_TERMS * (VT_MAX_ALTS + 8)];
    int prefix[VT_QUERY_MAX_TERMS * (VT_MAX_ALTS + 8)];
    size_t n;
};

static void marks_add(struct marks *m, const char *w, int prefix)
{
    if (m->n < VT_ARRAY_LEN(m->w)) {
        m->w[m->n] = w;
        m->prefix[m->n++] = prefix;
    }
}

static int is_marked(const struct marks *m, const char *tok, size_t n)
{
    for (size_t i = 0; i < m->n; i++) {
        size_t wl = strlen(m->w[i]);

        if (m->prefix[i] ? wl <= n && !strncmp(tok, m->w[i], wl)
                         : wl == n && !strncmp(tok, m->w[i], n))
            return 1;
    }
    return 0;
}

/* Copy of text with the marked words between VT_MARK_OPEN and VT_MARK_CLOSE. */
static char *mark_text(const char *text, const struct marks *m)
{
    struct vt_sb sb = {0};
    size_t i = 0, len = strlen(text);
    char low[128];

    vt_sb_add(&sb, "", 0);
    while (i < len) {
        unsigned char c = (unsigned char)text[i];
        size_t j = i, n = 0;

        if (!(isalnum(c) || c >= 0x80)) {
            vt_sb_addc(&sb, (char)c);
            i++;
            continue;
        }
        while (j < len && (isalnum((unsigned char)text[j]) || (unsigned char)text[j] >= 0x80)) {
            if (n < sizeof(low) - 1)
                low[n++] = (char)tolower((unsigned char)text[j]);
            j++;
        }
        low[n] = '\0';
        if (is_marked(m, low, n)) {
            vt_sb_adds(&sb, VT_MARK_OPEN);
            vt_sb_add(&sb, text + i, j - i);
            vt_sb_adds(&sb, VT_MARK_CLOSE);
        } else {
            vt_sb_add(&sb, text + i, j - i);
        }
        i = j;
    }
    return vt_sb_detach(&sb);
}

/* The moment a speech hit starts: when the first marked word of its cue was said (within
 * the cue), not when the cue began. */
static double first_marked_s(const struct vt_doc *d, const struct marks *m)
{
    for (size_t i = 0; i < d->n_words; i++) {
        char low[128];
        size_t n = 0;

        for (const char *p = d->words[i].text; *p && n < sizeof(low) - 1; p++)
            if (isalnum((unsigned char)*p) || (unsigned char)*p >= 0x80)
                low[n++] = (char)tolower((unsigned char)*p);
        low[n] = '\0';
        if (n && is_marked(m, low, n)) {
            double t = d->words[i].start_s;

            return t >= d->start_s && t < d->end_s ? t : d->start_s;
        }
    }
    return d->start_s;
}

static void count_token(void *user, const char *tok, size_t n)
{
    (void)tok;
    (void)n;
    ++*(size_t *)user;
}

/* When the cue's token `at` was said: the start of the word holding it (within the cue). */
static double token_s(const struct vt_doc *d, int at)
{
    size_t seen = 0;

    for (size_t i = 0; at >= 0 && i < d->n_words; i++) {
        vt_tokenize(d->words[i].text, strlen(d->words[i].text), count_token, &seen);
        if (seen > (size_t)at) {
            double t = d->words[i].start_s;

            return t >= d->start_s && t < d->end_s ? t : d->start_s;
        }
    }
    return d->start_s;
}

/* A batch of candidates being read (vt_store_docs hands the rows on in their order): the
 * rows asked, ids[k] the row of candidate v[who[k]] (a pair's second cue when second[k]). */
struct fill {
    struct cand *v;
    const long long *ids;
    const size_t *who;
    unsigned char *second; /* 1, then 2 once read */
    size_t n_ids, k;       /* rows up to ids[k] were handed on */
    const struct marks *m;
};

/* A pair's second cue: its text after the first's, its end the hit's. */
static void fill_second(struct vt_hit *h, const struct vt_doc *d, const struct marks *m)
{
    char *more, *both;

    if (!h->text)
        return; /* the first cue is gone: so is the pair */
    more = mark_text(d->text, m);
    both = vt_xasprintf("%s %s", h->text, more);
    free(more);
    free(h->text);
    h->text = both;
    h->end_s = d->end_s;
}

static void fill_hit(void *user, const struct vt_doc *d)
{
    struct fill *f = user;
    struct cand *c;
    struct vt_hit *h;

    while (f->k < f->n_ids && f->ids[f->k] != d->rowid)
        f->k++;
    if (f->k >= f->n_ids)
        return;
    c = &f->v[f->who[f->k]];
    h = &c->h;
    if (f->second[f->k]) {
        f->second[f->k++] = 2;
        fill_second(h, d, f->m);
        return;
    }
    f->k++;
    snprintf(h->video_id, sizeof(h->video_id), "%s", d->video_id);
    h->title = vt_xstrdup(d->title);
    h->end_s = d->end_s;
    snprintf(h->source, sizeof(h->source), "%s", d->source);
    h->ref = d->ref;
    h->text = mark_text(d->text, f->m);
    if (c->next)
        h->start_s = token_s(d, c->at); /* where the matched words start */
    else
        h->start_s =
            !strcmp(d->source, "speech") && d->ref >= 0 ? first_marked_s(d, f->m) : d->start_s;
}

/*
 * Read the rows of the candidates v[0..n-1] (title and text set; a row gone meanwhile
 * keeps text NULL) in one call of the store, not one or two statements per hit; a pair
 * reads both its cues.
 */
static int read_cands(struct vt_library *lib, struct cand *v, size_t n, const struct marks *m)
{
    long long *ids = vt_xcalloc(2 * n, sizeof(*ids));
    size_t *who = vt_xcalloc(2 * n, sizeof(*who)), k = 0;
    unsigned char *second = vt_xcalloc(2 * n, 1);
    struct fill f = {v, ids, who, second, 0, 0, m};
    int rc;

    for (size_t i = 0; i < n; i++) {
        who[k] = i;
        ids[k++] = v[i].rowid;
        if (v[i].next) {
            who[k] = i;
            second[k] = 1;
            ids[k++] = v[i].next;
        }
    }
    f.n_ids = k;
    rc = vt_store_docs(lib->store, ids, k, fill_hit, &f);
    for (size_t i = 0; i < k; i++) {
        struct vt_hit *h = &v[who[i]].h;

        if (second[i] == 1 && h->text) {
            /* the second cue is gone since the pair was found: so is the pair */
            free(h->title);
            free(h->text);
            h->title = h->text = NULL;
        }
    }
    free(ids);
    free(who);
    free(second);
    return rc;
}

int vt_search_words(struct vt_library *lib, const char *query, size_t query_len,
                    const struct vt_search_opts *opts, struct vt_hit **hits, size_t *n,
                    struct vt_search_info *info)
{
    double t0 = vt_monotonic_s();
    struct vt_query q;
    struct collect c = {0};
    struct alts phon[VT_QUERY_MAX_TERMS], near[VT_QUERY_MAX_TERMS];
    struct marks marks = {{0}, {0}, 0};
    const char *video, *source;
    int limit = opts && opts->limit > 0 ? opts->limit : 20, rc = 0;
    size_t kept = 0, at = 0, read = 0; /* c.v[at..read-1]: rows read, not yet looked at */

    *hits = NULL;
    *n = 0;
    if (limit > 1000)
        limit = 1000;
    c.deadline_s = t0 + VT_SEARCH_BUDGET_S;
    vt_query_parse(query ? query : "", query ? query_len : 0, &q);
    video = opts && opts->video ? opts->video : q.video;
    source = opts && opts->source ? opts->source : q.source;
    memset(phon, 0, sizeof(phon));
    memset(near, 0, sizeof(near));
    if (source[0] && strcmp(source, "speech") && strcmp(source, "screen") &&
        strcmp(source, "title"))
        goto out; /* a source that does not exist matches nothing */
    if (!vt_query_positive(&q))
        goto out;
    rc = vt_store_begin_read(lib->store);
    if (!rc)
        rc = word_hits(lib, &q, source, video, limit, &c, phon, near);
    if (rc) {
        rc = vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
        goto done;
    }
    for (size_t i = 0, pos = 0; i < q.n_terms; i++) {
        const struct vt_qterm *t = &q.terms[i];

        if (t->exclude)
            continue;
        for (size_t k = 0; k < t->n_words; k++)
            marks_add(&marks, t->words[k], t->prefix && k + 1 == t->n_words);
        for (size_t k = 0; k < phon[pos].n; k++)
            marks_add(&marks, phon[pos].v[k], 0);
        for (size_t k = 0; k < near[pos].n; k++)
            marks_add(&marks, near[pos].v[k], 0);
        pos++;
    }
    if (c.n)
        qsort(c.v, c.n, sizeof(*c.v), by_score);
    /* read the rows, best first, merging hits at the same moment into the better one; a
     * batch is what the page still needs and some more, since merged hits fill no place */
    for (; at < c.n && kept < (size_t)limit; at++) {
        size_t k;

        if (at == read) {
            size_t need = (size_t)limit - kept, batch = need + need / 2 + 2;

            if (batch > c.n - at)
                batch = c.n - at;
            rc = read_cands(lib, c.v + at, batch, &marks);
            read = at + batch;
            if (rc) {
                rc = vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
                goto done;
            }
        }
        if (!c.v[at].h.text)
            continue; /* removed since the tiers found it */
        for (k = 0; k < kept; k++)
            if (same_moment(&c.v[k].h, &c.v[at].h))
                break;
        if (k < kept) {
            add_also(&c.v[k].h, c.v[at].h.source);
            free(c.v[at].h.title);
            free(c.v[at].h.text);
            continue;
        }
        c.v[kept++] = c.v[at];
    }
    *hits = vt_xcalloc(kept, sizeof(**hits));
    for (size_t i = 0; i < kept; i++)
        (*hits)[i] = c.v[i].h;
    *n = kept;
    kept = 0;
done:
    vt_store_rollback(lib->store);
    for (size_t k = 0; k < kept; k++) {
        free(c.v[k].h.title);
        free(c.v[k].h.text);
    }
    for (; at < read; at++) {
        free(c.v[at].h.title);
        free(c.v[at].h.text);
    }
out:
    free(c.v);
    free_alts(phon, VT_QUERY_MAX_TERMS);
    free_alts(near, VT_QUERY_MAX_TERMS);
    vt_query_release(&q);
    if (info) {
        info->took_ms = (vt_monotonic_s() - t0) * 1000.0;
        info->partial = c.partial;
        info->more = c.more;
    }
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
