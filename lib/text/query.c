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

static void emit(char *out, size_t *o, size_t outlen, char c)
{
    if (c && *o + 1 < outlen)
        out[(*o)++] = c;
}

static int vowel(char c)
{
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

/*
 * Lawrence Philips' original Metaphone, enough to make "their"/"there",
 * "night"/"knight", "phone"/"fone" and the like meet. Letters only; anything
 * else is ignored.
 */
void vt_metaphone(const char *word, char *out, size_t outlen)
{
    char w[64];
    size_t n = 0, o = 0;

    for (const char *p = word; *p && n < sizeof(w) - 1; p++)
        if (isalpha((unsigned char)*p))
            w[n++] = (char)tolower((unsigned char)*p);
    w[n] = '\0';
    if (!outlen)
        return;
    out[0] = '\0';
    if (!n)
        return;
    size_t i = 0;

    /* initial exceptions */
    if ((w[0] == 'a' && w[1] == 'e') || (w[0] == 'g' && w[1] == 'n') ||
        (w[0] == 'k' && w[1] == 'n') || (w[0] == 'p' && w[1] == 'n') ||
        (w[0] == 'w' && w[1] == 'r'))
        i = 1;
    if (w[0] == 'x') {
        emit(out, &o, outlen, 's');
        i = 1;
    } else if (w[0] == 'w' && w[1] == 'h') {
        emit(out, &o, outlen, 'w');
        i = 2;
    }
    for (; i < n; i++) {
        char c = w[i], prev = i ? w[i - 1] : 0, next = w[i + 1], next2 = next ? w[i + 2] : 0;

        if (c == prev && c != 'c')
            continue;
        switch (c) {
        case 'a':
        case 'e':
        case 'i':
        case 'o':
        case 'u':
            if (i == 0)
                emit(out, &o, outlen, c);
            break;
        case 'b':
            if (!(prev == 'm' && next == 0))
                emit(out, &o, outlen, 'b');
            break;
        case 'c':
            if (next == 'i' && next2 == 'a')
                emit(out, &o, outlen, 'x');
            else if (next == 'h') {
                emit(out, &o, outlen, prev == 's' ? 'k' : 'x');
                i++;
            } else if (next == 'i' || next == 'e' || next == 'y')
                emit(out, &o, outlen, prev == 's' ? 0 : 's');
            else
                emit(out, &o, outlen, 'k');
            break;
        case 'd':
            if (next == 'g' && (next2 == 'e' || next2 == 'y' || next2 == 'i')) {
                emit(out, &o, outlen, 'j');
                i++;
            } else
                emit(out, &o, outlen, 't');
            break;
        case 'g':
            if (next == 'h' && !(i + 2 >= n || vowel(next2)))
                break; /* gh not followed by a vowel: silent */
            if (next == 'n' && (i + 2 == n || (next2 == 'e' && w[i + 3] == 'd' && i + 4 == n)))
                break;
            if (next == 'i' || next == 'e' || next == 'y')
                emit(out, &o, outlen, 'j');
            else
                emit(out, &o, outlen, 'k');
            break;
        case 'h':
            if (vowel(next) &&
                !(prev == 'c' || prev == 's' || prev == 'p' || prev == 't' || prev == 'g'))
                emit(out, &o, outlen, 'h');
            break;
        case 'k':
            if (prev != 'c')
                emit(out, &o, outlen, 'k');
            break;
        case 'p':
            if (next == 'h') {
                emit(out, &o, outlen, 'f');
                i++;
            } else
                emit(out, &o, outlen, 'p');
            break;
        case 'q':
            emit(out, &o, outlen, 'k');
            break;
        case 's':
            if (next == 'h') {
                emit(out, &o, outlen, 'x');
                i++;
            } else if (next == 'i' && (next2 == 'o' || next2 == 'a'))
                emit(out, &o, outlen, 'x');
            else
                emit(out, &o, outlen, 's');
            break;
        case 't':
            if (next == 'i' && (next2 == 'o' || next2 == 'a'))
                emit(out, &o, outlen, 'x');
            else if (next == 'h') {
                emit(out, &o, outlen, '0');
                i++;
            } else if (!(next == 'c' && next2 == 'h'))
                emit(out, &o, outlen, 't');
            break;
        case 'v':
            emit(out, &o, outlen, 'f');
            break;
        case 'w':
        case 'y':
            if (vowel(next))
                emit(out, &o, outlen, c);
            break;
        case 'x':
            emit(out, &o, outlen, 'k');
            emit(out, &o, outlen, 's');
            break;
        case 'z':
            emit(out, &o, outlen, 's');
            break;
        default: /* f j l m n r */
            emit(out, &o, outlen, c);
        }
    }
    out[o] = '\0';
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
