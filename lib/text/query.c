/*
 * The query language (see query.h). User input is cut into tokens of letters and
 * digits here; no backend syntax is written here (the SQLite store turns a parsed
 * query into FTS5 text in store_fts.c).
 */
#include "text/query.h"

#include "base/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int word_byte(unsigned char c)
{
    return isalnum(c) || c >= 0x80;
}

void vt_tokenize(const char *text, size_t len, void (*fn)(void *user, const char *tok, size_t n),
                 void *user)
{
    char buf[128];
    size_t i = 0;

    while (i < len) {
        size_t n = 0;

        while (i < len && !word_byte((unsigned char)text[i]))
            i++;
        while (i < len && word_byte((unsigned char)text[i])) {
            unsigned char c = (unsigned char)text[i++];

            if (n < sizeof(buf) - 1)
                buf[n++] = (char)tolower(c);
        }
        /* a token cut by the buffer must not end inside a UTF-8 sequence */
        while (n > 0 && (unsigned char)buf[n - 1] >= 0x80 && n == sizeof(buf) - 1)
            n--;
        if (n) {
            buf[n] = '\0';
            fn(user, buf, n);
        }
    }
}

struct tok_list {
    char **v;
    size_t n, cap;
};

static void add_tok(void *user, const char *tok, size_t n)
{
    struct tok_list *l = user;
    char *s = vt_xmalloc(n + 1);

    memcpy(s, tok, n);
    s[n] = '\0';
    if (l->n >= 64) { /* a phrase of more words than anyone types */
        free(s);
        return;
    }
    vt_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v));
    l->v[l->n++] = s;
}

static void add_term(struct vt_query *q, const char *s, size_t n, int exclude, int prefix)
{
    struct tok_list l = {0};
    struct vt_qterm *t;

    vt_tokenize(s, n, add_tok, &l);
    if (!l.n)
        return;
    if (q->n_terms == VT_QUERY_MAX_TERMS) {
        for (size_t i = 0; i < l.n; i++)
            free(l.v[i]);
        free(l.v);
        return;
    }
    t = &q->terms[q->n_terms++];
    t->words = l.v;
    t->n_words = l.n;
    t->exclude = exclude;
    t->prefix = prefix;
}

static int starts_with(const char *s, size_t n, const char *p)
{
    size_t m = strlen(p);

    return n >= m && !strncasecmp(s, p, m);
}

void vt_query_parse(const char *s, size_t len, struct vt_query *q)
{
    size_t i = 0;

    memset(q, 0, sizeof(*q));
    if (len > VT_QUERY_MAX_BYTES)
        len = VT_QUERY_MAX_BYTES;
    while (i < len) {
        int exclude = 0;
        size_t start;

        while (i < len && (isspace((unsigned char)s[i]) || s[i] == '\0'))
            i++;
        if (i >= len)
            break;
        if (s[i] == '-' && i + 1 < len && !isspace((unsigned char)s[i + 1])) {
            exclude = 1;
            i++;
        }
        if (s[i] == '"') {
            start = ++i;
            while (i < len && s[i] != '"')
                i++;
            add_term(q, s + start, i - start, exclude, 0);
            if (i < len)
                i++;
            continue;
        }
        start = i;
        while (i < len && !isspace((unsigned char)s[i]) && s[i] != '"' && s[i] != '\0')
            i++;
        if (!exclude && starts_with(s + start, i - start, "video:")) {
            size_t n = i - start - 6;

            /* an id that cannot exist still filters: it matches nothing */
            snprintf(q->video, sizeof(q->video), "%.*s", (int)(n < 64 ? n : 64), s + start + 6);
            if (!q->video[0])
                q->video[0] = '\0';
            continue;
        }
        if (!exclude && starts_with(s + start, i - start, "source:")) {
            size_t n = i - start - 7;

            snprintf(q->source, sizeof(q->source), "%.*s", (int)(n < 15 ? n : 15), s + start + 7);
            continue;
        }
        add_term(q, s + start, i - start, exclude, i > start && s[i - 1] == '*');
    }
}

void vt_query_release(struct vt_query *q)
{
    for (size_t i = 0; i < q->n_terms; i++) {
        for (size_t k = 0; k < q->terms[i].n_words; k++)
            free(q->terms[i].words[k]);
        free(q->terms[i].words);
    }
    memset(q, 0, sizeof(*q));
}

size_t vt_query_positive(const struct vt_query *q)
{
    size_t n = 0;

    for (size_t i = 0; i < q->n_terms; i++)
        n += !q->terms[i].exclude;
    return n;
}

size_t vt_query_plain_words(const struct vt_query *q, const struct vt_qterm **out)
{
    size_t n = 0;

    for (size_t i = 0; i < q->n_terms; i++) {
        const struct vt_qterm *t = &q->terms[i];

        if (t->exclude)
            continue;
        if (t->n_words != 1 || t->prefix)
            return 0;
        if (out)
            out[n] = t;
        n++;
    }
    return n;
}

/* ---- Metaphone ---- */

/* The code being written: out (outlen bytes, room kept for the NUL), o bytes so far. */
struct mp_out {
    char *out;
    size_t o, outlen;
};

static void emit(struct mp_out *m, char c)
{
    if (c && m->o + 1 < m->outlen)
        m->out[m->o++] = c;
}

static int vowel(char c)
{
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

/* The word's initial exceptions (ae, gn, kn, pn, wr, x, wh): where the letters start. */
static size_t mp_start(const char *w, struct mp_out *m)
{
    size_t i = 0;

    if ((w[0] == 'a' && w[1] == 'e') || (w[0] == 'g' && w[1] == 'n') ||
        (w[0] == 'k' && w[1] == 'n') || (w[0] == 'p' && w[1] == 'n') ||
        (w[0] == 'w' && w[1] == 'r'))
        i = 1;
    if (w[0] == 'x') {
        emit(m, 's');
        i = 1;
    } else if (w[0] == 'w' && w[1] == 'h') {
        emit(m, 'w');
        i = 2;
    }
    return i;
}

/*
 * The letters c, d and g, whose sound depends on the letters after them (soft before
 * e, i, y; silent in gh and gn). Returns the index of the last letter read.
 */
static size_t mp_cdg(const char *w, size_t n, size_t i, struct mp_out *m)
{
    char c = w[i], prev = i ? w[i - 1] : 0, next = w[i + 1], next2 = next ? w[i + 2] : 0;

    if (c == 'c') {
        if (next == 'i' && next2 == 'a')
            emit(m, 'x');
        else if (next == 'h') {
            emit(m, prev == 's' ? 'k' : 'x');
            i++;
        } else if (next == 'i' || next == 'e' || next == 'y')
            emit(m, prev == 's' ? 0 : 's');
        else
            emit(m, 'k');
    } else if (c == 'd') {
        if (next == 'g' && (next2 == 'e' || next2 == 'y' || next2 == 'i')) {
            emit(m, 'j');
            i++;
        } else
            emit(m, 't');
    } else {
        if (next == 'h' && !(i + 2 >= n || vowel(next2)))
            return i; /* gh not followed by a vowel: silent */
        if (next == 'n' && (i + 2 == n || (next2 == 'e' && w[i + 3] == 'd' && i + 4 == n)))
            return i;
        if (next == 'i' || next == 'e' || next == 'y')
            emit(m, 'j');
        else
            emit(m, 'k');
    }
    return i;
}

/* The letters p, s and t, which pair with an h (ph, sh, th) or sound x before io, ia. */
static size_t mp_pst(const char *w, size_t i, struct mp_out *m)
{
    char c = w[i], next = w[i + 1], next2 = next ? w[i + 2] : 0;

    if (c == 'p') {
        if (next == 'h') {
            emit(m, 'f');
            i++;
        } else
            emit(m, 'p');
    } else if (c == 's') {
        if (next == 'h') {
            emit(m, 'x');
            i++;
        } else if (next == 'i' && (next2 == 'o' || next2 == 'a'))
            emit(m, 'x');
        else
            emit(m, 's');
    } else {
        if (next == 'i' && (next2 == 'o' || next2 == 'a'))
            emit(m, 'x');
        else if (next == 'h') {
            emit(m, '0');
            i++;
        } else if (!(next == 'c' && next2 == 'h'))
            emit(m, 't');
    }
    return i;
}

/* The code of the letter w[i]; returns the index of the last letter read. */
static size_t mp_letter(const char *w, size_t n, size_t i, struct mp_out *m)
{
    char c = w[i], prev = i ? w[i - 1] : 0, next = w[i + 1];

    switch (c) {
    case 'a':
    case 'e':
    case 'i':
    case 'o':
    case 'u':
        if (i == 0)
            emit(m, c);
        break;
    case 'b':
        if (!(prev == 'm' && next == 0))
            emit(m, 'b');
        break;
    case 'c':
    case 'd':
    case 'g':
        return mp_cdg(w, n, i, m);
    case 'h':
        if (vowel(next) &&
            !(prev == 'c' || prev == 's' || prev == 'p' || prev == 't' || prev == 'g'))
            emit(m, 'h');
        break;
    case 'k':
        if (prev != 'c')
            emit(m, 'k');
        break;
    case 'p':
    case 's':
    case 't':
        return mp_pst(w, i, m);
    case 'q':
        emit(m, 'k');
        break;
    case 'v':
        emit(m, 'f');
        break;
    case 'w':
    case 'y':
        if (vowel(next))
            emit(m, c);
        break;
    case 'x':
        emit(m, 'k');
        emit(m, 's');
        break;
    case 'z':
        emit(m, 's');
        break;
    default: /* f j l m n r */
        emit(m, c);
    }
    return i;
}

/*
 * Lawrence Philips' original Metaphone, enough to make "their"/"there",
 * "night"/"knight", "phone"/"fone" and the like meet. Letters only; anything
 * else is ignored.
 */
void vt_metaphone(const char *word, char *out, size_t outlen)
{
    struct mp_out m = {out, 0, outlen};
    char w[64];
    size_t n = 0;

    for (const char *p = word; *p && n < sizeof(w) - 1; p++)
        if (isalpha((unsigned char)*p))
            w[n++] = (char)tolower((unsigned char)*p);
    w[n] = '\0';
    if (!outlen)
        return;
    out[0] = '\0';
    if (!n)
        return;
    for (size_t i = mp_start(w, &m); i < n; i++) {
        if (i && w[i] == w[i - 1] && w[i] != 'c')
            continue;
        i = mp_letter(w, n, i, &m);
    }
    out[m.o] = '\0';
}

char *vt_query_meaning_text(const struct vt_query *q)
{
    struct vt_sb sb = {0};

    vt_sb_adds(&sb, "");
    for (size_t i = 0; i < q->n_terms; i++) {
        if (q->terms[i].exclude)
            continue;
        for (size_t j = 0; j < q->terms[i].n_words; j++) {
            if (sb.len)
                vt_sb_addc(&sb, ' ');
            vt_sb_adds(&sb, q->terms[i].words[j]);
        }
    }
    return vt_sb_detach(&sb);
}
