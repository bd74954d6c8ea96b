/*
 * Word timings from the cross-attention of Whisper's alignment heads, past the network
 * (whisper_align.c runs the decoder): openai/whisper's timing.py (find_alignment, median_filter,
 * dtw_cpu, backtrace, merge_punctuations, add_word_timestamps) and tokenizer.py's
 * split_to_word_tokens (release 20250625), step for step, so that words and times equal the
 * reference's (tests/tools/whisper_align_ref.py). Python's semantics are kept where they change a
 * result: bytes decoded as errors="replace" does (one U+FFFD per maximal invalid subpart), `in`
 * between strings a substring test (so
 * "" is in every set of marks), round(x, 2), and the DTW's costs held in float32 as numpy's.
 */
#include "base/util.h"
#include "ml/tiktoken.h"
#include "speech/whisper_align.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEDFILT_WIDTH     7
#define TOKENS_PER_SECOND 50.0 /* audio positions per second (2 mel frames each) */

static const char PUNCTUATION[] = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"; /* string.punctuation */
static const char PREPENDED[] = "\"'“¿([{-";
static const char APPENDED[] = "\"'.。,，!！?？:：”)]}、";
static const char SENTENCE_END[] = ".。!！?？";

/* A word as timing.py's WordTiming: its text, how many tokens it took, its times. */
struct word {
    char *text;
    size_t len, n_tok;
    double start, end, prob;
};

struct words {
    struct word *w;
    size_t n, cap;
};

static void words_release(struct words *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        free(ws->w[i].text);
    free(ws->w);
    memset(ws, 0, sizeof(*ws));
}

static void words_push(struct words *ws, char *text, size_t len, size_t n_tok)
{
    vt_grow((void **)&ws->w, &ws->cap, ws->n + 1, sizeof(*ws->w));
    ws->w[ws->n++] = (struct word){.text = text, .len = len, .n_tok = n_tok};
}

/* Python's `a in b` for strings: a substring test, true for "". The texts are valid UTF-8,
 * where a byte substring is a character substring. */
static int str_in(const char *s, size_t n, const char *set)
{
    return n == 0 || memmem(set, strlen(set), s, n) != NULL;
}

/*
 * Length of the UTF-8 sequence at p (n > 0 bytes left) as Python's "replace" decoding
 * takes it: a valid character (*ok 1), or the maximal prefix of one (at least one byte),
 * which becomes one U+FFFD.
 */
static size_t utf8_step(const unsigned char *p, size_t n, int *ok)
{
    unsigned char lo = 0x80, hi = 0xbf;
    size_t len;

    *ok = 0;
    if (p[0] < 0x80) {
        *ok = 1;
        return 1;
    }
    if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        len = 2;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        len = 3;
        lo = p[0] == 0xe0 ? 0xa0 : 0x80;
        hi = p[0] == 0xed ? 0x9f : 0xbf;
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        len = 4;
        lo = p[0] == 0xf0 ? 0x90 : 0x80;
        hi = p[0] == 0xf4 ? 0x8f : 0xbf;
    } else {
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if (i >= n || p[i] < lo || p[i] > hi)
            return i;
        lo = 0x80;
        hi = 0xbf;
    }
    *ok = 1;
    return len;
}

/* ids as decode_with_timestamps renders them (special tokens by name), invalid UTF-8
 * replaced: *out valid UTF-8, caller-freed. VT_EINVAL for an id out of range. */
static int decode_replace(const struct vt_tiktoken *tok, const int32_t *ids, size_t n, char **out,
                          size_t *len)
{
    struct vt_sb sb = {0};
    char *raw = NULL;
    size_t n_raw = 0;

    if (vt_tiktoken_decode(tok, ids, n, 0, &raw, &n_raw) != 0)
        return VT_EINVAL;
    for (size_t i = 0; i < n_raw;) {
        int ok;
        size_t k = utf8_step((const unsigned char *)raw + i, n_raw - i, &ok);

        vt_sb_add(&sb, ok ? raw + i : "\xef\xbf\xbd", ok ? k : 3);
        i += k;
    }
    free(raw);
    *len = sb.len;
    *out = vt_sb_detach(&sb);
    return 0;
}

/* Number of characters of the valid UTF-8 s; *fffd the index of the first U+FFFD, or -1. */
static size_t utf8_count(const char *s, size_t len, long *fffd)
{
    size_t n = 0;

    *fffd = -1;
    for (size_t i = 0; i < len; n++) {
        uint32_t cp = 0;
        size_t k = vt_utf8_decode(s + i, len - i, &cp);

        if (k == 0) /* NUL: one character of one byte */
            k = 1;
        if (cp == 0xfffd && *fffd < 0)
            *fffd = (long)n;
        i += k;
    }
    return n;
}

/* For each character of the valid UTF-8 s, whether it is U+FFFD; *n their count. */
static unsigned char *fffd_flags(const char *s, size_t len, size_t *n)
{
    unsigned char *f = vt_xmalloc(len + 1);

    *n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp = 0;
        size_t k = vt_utf8_decode(s + i, len - i, &cp);

        f[(*n)++] = k && cp == 0xfffd;
        i += k ? k : 1;
    }
    return f;
}

/*
 * tokenizer.py's split_tokens_on_unicode: ids cut where the tokens so far decode to whole
 * characters (or where the replacement character is in the whole text too: bytes invalid
 * in any case). Tokens left over at the end (never whole) are dropped, as upstream.
 */
static int split_unicode(const struct vt_tiktoken *tok, const int32_t *ids, size_t n,
                         struct words *out)
{
    char *full = NULL;
    size_t full_len = 0, n_full = 0, start = 0, offset = 0;
    unsigned char *flag;

    if (decode_replace(tok, ids, n, &full, &full_len) != 0)
        return VT_EINVAL;
    flag = fffd_flags(full, full_len, &n_full);
    free(full);
    for (size_t i = 0; i < n; i++) {
        char *cur = NULL;
        size_t len = 0, n_cp;
        long bad;

        if (decode_replace(tok, ids + start, i + 1 - start, &cur, &len) != 0) {
            free(flag);
            return VT_EINVAL;
        }
        n_cp = utf8_count(cur, len, &bad);
        if (bad < 0 || (offset + (size_t)bad < n_full && flag[offset + (size_t)bad])) {
            words_push(out, cur, len, i + 1 - start);
            offset += n_cp;
            start = i + 1;
        } else {
            free(cur);
        }
    }
    free(flag);
    return 0;
}

/* Python's str.isspace for one character. */
static int py_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
           c == 0x202f || c == 0x205f || c == 0x3000;
}

/* w.strip() in set */
static int stripped_in(const struct word *w, const char *set)
{
    size_t a = 0, b = w->len;

    while (a < b) {
        uint32_t cp = 0;
        size_t k = vt_utf8_decode(w->text + a, b - a, &cp);

        if (!k || !py_space(cp))
            break;
        a += k;
    }
    while (b > a) {
        size_t s = b - 1;
        uint32_t cp = 0;

        while (s > a && ((unsigned char)w->text[s] & 0xc0) == 0x80)
            s--;
        if (vt_utf8_decode(w->text + s, b - s, &cp) != b - s || !py_space(cp))
            break;
        b = s;
    }
    return str_in(w->text + a, b - a, set);
}

/* tokenizer.py's split_to_word_tokens: per character (per_char), else split_tokens_on_spaces:
 * a piece starts a word when it is special, begins with a space or is punctuation. */
static int split_words(const struct vt_tiktoken *tok, const int32_t *ids, size_t n, int per_char,
                       int32_t eot, struct words *out)
{
    struct words sub = {0};
    size_t first = 0;
    int rc = split_unicode(tok, ids, n, per_char ? out : &sub);

    if (rc != 0 || per_char) {
        words_release(&sub);
        return rc;
    }
    for (size_t i = 0; i < sub.n; i++) {
        struct word *s = &sub.w[i];
        int special = ids[first] >= eot;
        int with_space = s->len > 0 && s->text[0] == ' ';

        first += s->n_tok;
        if (special || with_space || stripped_in(s, PUNCTUATION) || out->n == 0) {
            words_push(out, s->text, s->len, s->n_tok);
        } else {
            struct word *last = &out->w[out->n - 1];

            last->text = vt_xrealloc(last->text, last->len + s->len + 1);
            memcpy(last->text + last->len, s->text, s->len + 1);
            last->len += s->len;
            last->n_tok += s->n_tok;
            free(s->text);
        }
        s->text = NULL;
    }
    sub.n = 0;
    words_release(&sub);
    return 0;
}

void vt_whisper_median_filter(const double *x, int n, int width, double *out)
{
    int pad = width / 2;

    if (n <= pad || width < 1 || width > 63) {
        memmove(out, x, (size_t)(n > 0 ? n : 0) * sizeof(*x));
        return;
    }
    for (int i = 0; i < n; i++) {
        double v[63];

        for (int k = 0; k < width; k++) {
            int j = i - pad + k;

            j = j < 0 ? -j : j >= n ? 2 * (n - 1) - j : j; /* reflect, the edge not repeated */
            v[k] = x[j];
        }
        for (int k = 1; k < width; k++) { /* insertion sort, NaN last as torch.sort */
            double t = v[k];
            int m = k;

            while (m > 0 && (isnan(v[m - 1]) ? !isnan(t) : (!isnan(t) && t < v[m - 1]))) {
                v[m] = v[m - 1];
                m--;
            }
            v[m] = t;
        }
        out[i] = v[pad];
    }
}

/* One head: softmax over the frames, normalised per frame over the tokens (std_mean,
 * unbiased=False), median-filtered per token, added (divided by n_heads) into acc. */
static void matrix_head(const float *qk, int n_tok, int m, int n_heads, double *w, double *row,
                        double *acc)
{
    for (int t = 0; t < n_tok; t++) {
        const float *q = qk + (size_t)t * (size_t)m;
        double *o = w + (size_t)t * (size_t)m, mx = -INFINITY, sum = 0;

        for (int f = 0; f < m; f++)
            mx = q[f] > mx ? q[f] : mx;
        for (int f = 0; f < m; f++) {
            o[f] = exp((double)q[f] - mx);
            sum += o[f];
        }
        for (int f = 0; f < m; f++)
            o[f] /= sum;
    }
    for (int f = 0; f < m; f++) {
        double mean = 0, var = 0;

        for (int t = 0; t < n_tok; t++)
            mean += w[(size_t)t * (size_t)m + (size_t)f];
        mean /= n_tok;
        for (int t = 0; t < n_tok; t++) {
            double d = w[(size_t)t * (size_t)m + (size_t)f] - mean;

            var += d * d;
        }
        for (int t = 0; t < n_tok; t++) {
            double *v = &w[(size_t)t * (size_t)m + (size_t)f];

            *v = (*v - mean) / sqrt(var / n_tok);
        }
    }
    for (int t = 0; t < n_tok; t++) {
        vt_whisper_median_filter(w + (size_t)t * (size_t)m, m, MEDFILT_WIDTH, row);
        for (int f = 0; f < m; f++)
            acc[(size_t)t * (size_t)m + (size_t)f] += row[f] / n_heads;
    }
}

void vt_whisper_align_matrix(const float *qk, int n_heads, int n_tok, int n_frames, int n_sot,
                             float *out)
{
    size_t cells = (size_t)n_tok * (size_t)n_frames;
    double *w = vt_xcalloc(cells + 1, sizeof(double));
    double *acc = vt_xcalloc(cells + 1, sizeof(double));
    double *row = vt_xcalloc((size_t)n_frames + 1, sizeof(double));
    size_t rows = (size_t)(n_tok - n_sot - 1);

    for (int h = 0; h < n_heads; h++)
        matrix_head(qk + (size_t)h * cells, n_tok, n_frames, n_heads, w, row, acc);
    for (size_t i = 0; i < rows * (size_t)n_frames; i++)
        out[i] = (float)acc[(size_t)n_sot * (size_t)n_frames + i];
    free(w);
    free(acc);
    free(row);
}

size_t vt_whisper_dtw(const float *x, int n, int m, int32_t *ti, int32_t *tj)
{
    size_t w = (size_t)m + 1, len = 0;
    float *cost = vt_xmalloc((size_t)(n + 1) * w * sizeof(float));
    unsigned char *trace = vt_xmalloc((size_t)(n + 1) * w);
    long i = n, j = m;

    for (size_t k = 0; k < (size_t)(n + 1) * w; k++) {
        cost[k] = INFINITY;
        trace[k] = 3;
    }
    cost[0] = 0;
    for (int c = 1; c <= m; c++) {
        for (int r = 1; r <= n; r++) {
            float c0 = cost[(size_t)(r - 1) * w + (size_t)(c - 1)];
            float c1 = cost[(size_t)(r - 1) * w + (size_t)c];
            float c2 = cost[(size_t)r * w + (size_t)(c - 1)];
            float best = c2;
            unsigned char t = 2;

            if (c0 < c1 && c0 < c2) {
                best = c0;
                t = 0;
            } else if (c1 < c0 && c1 < c2) {
                best = c1;
                t = 1;
            }
            /* numpy: a float64 sum stored into the float32 array */
            cost[(size_t)r * w + (size_t)c] =
                (float)((double)x[(size_t)(r - 1) * (size_t)m + (size_t)(c - 1)] + (double)best);
            trace[(size_t)r * w + (size_t)c] = t;
        }
    }
    for (size_t c = 0; c < w; c++)
        trace[c] = 2;
    for (long r = 0; r <= n; r++)
        trace[(size_t)r * w] = 1;
    while (i > 0 || j > 0) {
        unsigned char t = trace[(size_t)i * w + (size_t)j];

        ti[len] = (int32_t)(i - 1);
        tj[len++] = (int32_t)(j - 1);
        i -= t == 0 || t == 1;
        j -= t == 0 || t == 2;
    }
    for (size_t a = 0, b = len ? len - 1 : 0; a < b; a++, b--) {
        int32_t s = ti[a];

        ti[a] = ti[b];
        ti[b] = s;
        s = tj[a];
        tj[a] = tj[b];
        tj[b] = s;
    }
    free(cost);
    free(trace);
    return len;
}

/* The segments' text tokens (below eot) in order; *n their count. VT_EINVAL for a negative
 * id (below eot, yet no token). */
static int gather_text(const struct vt_whisper_segment *seg, size_t n, int32_t eot, int32_t **text,
                       size_t *n_text, char *err, size_t errlen)
{
    size_t k = 0, total = 0;

    for (size_t s = 0; s < n; s++) {
        if (seg[s].n_tokens > 4096 || (seg[s].n_tokens && !seg[s].tokens))
            return vt_err(err, errlen, VT_EINVAL, "whisper align: segment %zu: bad tokens", s);
        total += seg[s].n_tokens;
    }
    *text = vt_xmalloc((total + 2) * sizeof(int32_t));
    for (size_t s = 0; s < n; s++)
        for (size_t i = 0; i < seg[s].n_tokens; i++) {
            int32_t id = seg[s].tokens[i];

            if (id < 0) {
                free(*text);
                *text = NULL;
                return vt_err(err, errlen, VT_EINVAL, "whisper align: token id %d", (int)id);
            }
            if (id < eot)
                (*text)[k++] = id;
        }
    *n_text = k;
    return 0;
}

/* Whether the start sequence names a language written without spaces (split per character). */
static int per_char_language(const struct vt_whisper_specials *sp, const int32_t *sot, size_t n_sot)
{
    static const char *const langs[] = {"zh", "ja", "th", "lo", "my", "yue"};

    for (size_t i = 0; i < n_sot; i++) {
        const char *code;

        if (sot[i] < sp->first_language || sot[i] >= sp->first_language + sp->n_languages)
            continue;
        code = vt_whisper_language_code(sot[i] - sp->first_language);
        for (size_t k = 0; code && k < VT_ARRAY_LEN(langs); k++)
            if (strcmp(code, langs[k]) == 0)
                return 1;
    }
    return 0;
}

/* The time (seconds in the window) at which the path enters each of the n rows. */
static double *jump_times(const float *matrix, int n, int m)
{
    size_t cells = (size_t)n * (size_t)m, len, k = 0;
    float *x = vt_xmalloc((cells + 1) * sizeof(float));
    int32_t *ti = vt_xmalloc(((size_t)n + (size_t)m + 1) * sizeof(int32_t));
    int32_t *tj = vt_xmalloc(((size_t)n + (size_t)m + 1) * sizeof(int32_t));
    double *jt = vt_xcalloc((size_t)n + 1, sizeof(double));

    for (size_t i = 0; i < cells; i++)
        x[i] = -matrix[i];
    len = vt_whisper_dtw(x, n, m, ti, tj);
    for (size_t p = 0; p < len && k < (size_t)n; p++)
        if (p == 0 || ti[p] != ti[p - 1])
            jt[k++] = tj[p] / TOKENS_PER_SECOND;
    free(x);
    free(ti);
    free(tj);
    return jt;
}

/*
 * find_alignment past the network: the words of text (n_text tokens) with their start and
 * end (seconds in the window) and mean token probability; none when the text has no word.
 */
static int find_alignment(const struct vt_tiktoken *tok, const int32_t *sot, size_t n_sot,
                          const int32_t *text, size_t n_text, const float *qk, int n_heads,
                          int n_frames, const double *probs, struct words *out)
{
    const struct vt_whisper_specials *sp = vt_tiktoken_whisper(tok);
    int n_tok = (int)(n_sot + n_text + 2), rows = (int)n_text + 1, rc;
    float *matrix = vt_xmalloc(((size_t)rows * (size_t)n_frames + 1) * sizeof(float));
    int32_t *ids = vt_xmalloc((n_text + 1) * sizeof(int32_t));
    double *jt;
    size_t b = 0;

    vt_whisper_align_matrix(qk, n_heads, n_tok, n_frames, (int)n_sot, matrix);
    jt = jump_times(matrix, rows, n_frames);
    free(matrix);
    memcpy(ids, text, n_text * sizeof(int32_t));
    ids[n_text] = sp->eot;
    rc = split_words(tok, ids, n_text + 1, per_char_language(sp, sot, n_sot), sp->eot, out);
    free(ids);
    if (rc == 0 && out->n <= 1)
        words_release(out);
    /* the last word holds <|endoftext|>: zip() leaves it out */
    for (size_t i = 0; rc == 0 && out->n && i < out->n - 1; i++) {
        struct word *w = &out->w[i];
        double sum = 0;

        w->start = jt[b < n_text ? b : n_text];
        for (size_t k = b; k < b + w->n_tok && k < n_text; k++)
            sum += probs[k];
        w->prob = sum / (double)w->n_tok;
        b += w->n_tok;
        w->end = jt[b < n_text ? b : n_text];
    }
    if (rc == 0 && out->n) {
        free(out->w[out->n - 1].text);
        out->n--;
    }
    free(jt);
    return rc;
}

/* Python's round(x, 2): the correctly rounded decimal, as printf gives it. */
static double round2(double x)
{
    char buf[64];

    if (!isfinite(x) || fabs(x) > 1e12)
        return x;
    snprintf(buf, sizeof(buf), "%.2f", x);
    return strtod(buf, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* np.median of the nonzero durations (0 when none), capped at 0.7 s. */
static double median_duration(const struct words *ws)
{
    double *d = vt_xmalloc((ws->n + 1) * sizeof(double)), med = 0;
    size_t k = 0;

    for (size_t i = 0; i < ws->n; i++)
        if (ws->w[i].end - ws->w[i].start != 0)
            d[k++] = ws->w[i].end - ws->w[i].start;
    if (k) {
        qsort(d, k, sizeof(double), cmp_double);
        med = k % 2 ? d[k / 2] : (d[k / 2 - 1] + d[k / 2]) / 2;
    }
    free(d);
    return med < 0.7 ? med : 0.7;
}

/* Words at sentence boundaries no longer than max_dur (add_word_timestamps' first hack). */
static void cut_sentence_ends(struct words *ws, double max_dur)
{
    for (size_t i = 1; i < ws->n; i++) {
        struct word *w = &ws->w[i], *prev = &ws->w[i - 1];

        if (!(w->end - w->start > max_dur))
            continue;
        if (str_in(w->text, w->len, SENTENCE_END))
            w->end = w->start + max_dur;
        else if (str_in(prev->text, prev->len, SENTENCE_END))
            w->start = w->end - max_dur;
    }
}

/* Move following's text and tokens into into (before when before, else after). */
static void merge_into(struct word *into, struct word *from, int before)
{
    char *t = vt_xmalloc(into->len + from->len + 1);

    memcpy(t, before ? from->text : into->text, before ? from->len : into->len);
    memcpy(t + (before ? from->len : into->len), before ? into->text : from->text,
           before ? into->len : from->len);
    t[into->len + from->len] = '\0';
    free(into->text);
    into->text = t;
    into->len += from->len;
    into->n_tok += from->n_tok;
    from->text[0] = '\0';
    from->len = 0;
    from->n_tok = 0;
}

/* timing.py's merge_punctuations with its default marks. */
static void merge_punctuations(struct words *ws)
{
    if (ws->n < 2)
        return;
    for (size_t i = ws->n - 1, j = ws->n - 1; i-- > 0;) {
        struct word *prev = &ws->w[i];

        if (prev->len && prev->text[0] == ' ' && stripped_in(prev, PREPENDED))
            merge_into(&ws->w[j], prev, 1);
        else
            j = i;
    }
    for (size_t i = 0, j = 1; j < ws->n; j++) {
        struct word *prev = &ws->w[i], *next = &ws->w[j];

        if (!(prev->len && prev->text[prev->len - 1] == ' ') &&
            str_in(next->text, next->len, APPENDED))
            merge_into(prev, next, 0);
        else
            i = j;
    }
}

/*
 * add_word_timestamps' second hack for one segment's words w[0..n): the first word after
 * a pause no longer than max_dur, and the segment's own timestamps preferred to a first or
 * last word that runs too long; the segment's start and end follow its words otherwise.
 */
static void fit_segment(struct vt_whisper_segment *seg, struct vt_whisper_word *w, size_t n,
                        double med, double max_dur, double *last_speech)
{
    if (n == 0)
        return;
    if (w[0].end - *last_speech > med * 4 &&
        (w[0].end - w[0].start > max_dur || (n > 1 && w[1].end - w[0].start > max_dur * 2))) {
        if (n > 1 && w[1].end - w[1].start > max_dur) {
            double boundary = fmax(w[1].end / 2, w[1].end - max_dur);

            w[0].end = w[1].start = boundary;
        }
        w[0].start = fmax(0, w[0].end - max_dur);
    }
    if (seg->start < w[0].end && seg->start - 0.5 > w[0].start)
        w[0].start = fmax(0, fmin(w[0].end - med, seg->start));
    else
        seg->start = w[0].start;
    if (seg->end > w[n - 1].start && seg->end + 0.5 < w[n - 1].end)
        w[n - 1].end = fmax(w[n - 1].start + med, seg->end);
    else
        seg->end = w[n - 1].end;
    *last_speech = seg->end;
}

/* Hand the words to the segments by their text tokens' counts, times on the caller's line. */
static void give_words(struct vt_whisper_segment *seg, size_t n, int32_t eot, struct words *ws,
                       double med, double t0)
{
    size_t wi = 0;
    double last_speech = t0;

    for (size_t s = 0; s < n; s++) {
        size_t n_text = 0, saved = 0, k = 0;

        for (size_t i = 0; i < seg[s].n_tokens; i++)
            n_text += seg[s].tokens[i] < eot;
        seg[s].words = NULL;
        seg[s].n_words = 0;
        for (size_t i = wi, sv = 0; i < ws->n && sv < n_text; i++) {
            sv += ws->w[i].n_tok;
            k += ws->w[i].len > 0;
        }
        if (k)
            seg[s].words = vt_xcalloc(k, sizeof(struct vt_whisper_word));
        while (wi < ws->n && saved < n_text) {
            struct word *w = &ws->w[wi++];

            saved += w->n_tok;
            if (!w->len)
                continue;
            seg[s].words[seg[s].n_words++] = (struct vt_whisper_word){
                .start = round2(t0 + w->start),
                .end = round2(t0 + w->end),
                .text = w->text,
                .prob = (float)w->prob,
            };
            w->text = NULL;
        }
        fit_segment(&seg[s], seg[s].words, seg[s].n_words, med, med * 2, &last_speech);
    }
}

static void clear_words(struct vt_whisper_segment *seg, size_t n)
{
    for (size_t s = 0; s < n; s++) {
        for (size_t i = 0; i < seg[s].n_words; i++)
            free(seg[s].words[i].text);
        free(seg[s].words);
        seg[s].words = NULL;
        seg[s].n_words = 0;
    }
}

int vt_whisper_align_qk(struct vt_tiktoken *tok, const int32_t *sot, size_t n_sot, const float *qk,
                        int n_heads, int n_frames, const double *probs,
                        struct vt_whisper_segment *seg, size_t n, double t0, char *err,
                        size_t errlen)
{
    const struct vt_whisper_specials *sp = vt_tiktoken_whisper(tok);
    struct words ws = {0};
    int32_t *text = NULL;
    size_t n_text = 0;
    double med;
    int rc;

    clear_words(seg, n);
    rc = gather_text(seg, n, sp->eot, &text, &n_text, err, errlen);
    if (rc != 0 || n_text == 0)
        goto out;
    rc = find_alignment(tok, sot, n_sot, text, n_text, qk, n_heads, n_frames, probs, &ws);
    if (rc != 0) {
        rc = vt_err(err, errlen, rc, "whisper align: a token cannot be decoded");
        goto out;
    }
    med = median_duration(&ws);
    if (ws.n)
        cut_sentence_ends(&ws, med * 2);
    merge_punctuations(&ws);
    give_words(seg, n, sp->eot, &ws, med, t0);
out:
    words_release(&ws);
    free(text);
    return rc;
}
