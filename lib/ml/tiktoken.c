/*
 * The tiktoken BPE (tiktoken.h). Every token's bytes sit in one arena, the ordinary ones
 * also in an open-addressing hash table from bytes to rank. Encoding cuts the text with
 * a hand-written scanner equivalent to the GPT-2 pattern (its alternatives tried in
 * order, as a backtracking regex does), then each piece is a token when the whole piece
 * is one, else its bytes are merged pairwise, lowest rank first and leftmost among equal
 * ranks, as tiktoken's byte_pair_merge does. Unicode classes come from unicode.h.
 */
#include "ml/tiktoken.h"

#include "base/util.h"
#include "ml/unicode.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vt_tiktoken {
    size_t n_ranks, n_vocab;
    uint32_t *off, *len; /* per id: bytes at arena + off[id], len[id] of them */
    unsigned char *arena;
    size_t arena_len, arena_cap;
    int32_t *table; /* rank + 1 per slot, 0 empty; size mask + 1 */
    size_t mask;
    struct vt_whisper_specials w;
    int32_t *ids; /* encode's result */
    size_t n_ids, cap_ids;
    size_t *starts; /* BPE scratch: part boundaries and pair ranks */
    int64_t *ranks;
    size_t cap_parts;
};

static const char *const languages[VT_WHISPER_MAX_LANGUAGES] = {
    "en", "zh", "de", "es",  "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv",
    "it", "id", "hi", "fi",  "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no",
    "th", "ur", "hr", "bg",  "lt", "la", "mi", "ml", "cy", "sk", "te", "fa", "lv", "bn", "sr",
    "az", "sl", "kn", "et",  "mk", "br", "eu", "is", "hy", "ne", "mn", "bs", "kk", "sq", "sw",
    "gl", "mr", "pa", "si",  "km", "sn", "yo", "so", "af", "oc", "ka", "be", "tg", "sd", "gu",
    "am", "yi", "lo", "uz",  "fo", "ht", "ps", "tk", "nn", "mt", "sa", "lb", "my", "bo", "tl",
    "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su", "yue"};

const char *vt_whisper_language_code(int i)
{
    return i >= 0 && i < VT_WHISPER_MAX_LANGUAGES ? languages[i] : NULL;
}

/* ---- the table of ranks ---- */

static size_t hash_bytes(const unsigned char *p, size_t n)
{
    return (size_t)vt_fnv1a64(VT_FNV64_INIT, p, n);
}

static int32_t rank_of(const struct vt_tiktoken *t, const unsigned char *p, size_t n)
{
    for (size_t h = hash_bytes(p, n) & t->mask;; h = (h + 1) & t->mask) {
        int32_t r = t->table[h];
        if (!r)
            return -1;
        r--;
        if (t->len[r] == n && memcmp(t->arena + t->off[r], p, n) == 0)
            return r;
    }
}

/* Insert rank r (its bytes already in the arena); false when its bytes are there already. */
static bool table_add(struct vt_tiktoken *t, int32_t r)
{
    const unsigned char *p = t->arena + t->off[r];
    size_t n = t->len[r];
    for (size_t h = hash_bytes(p, n) & t->mask;; h = (h + 1) & t->mask) {
        int32_t o = t->table[h];
        if (!o) {
            t->table[h] = r + 1;
            return true;
        }
        o--;
        if (t->len[o] == n && memcmp(t->arena + t->off[o], p, n) == 0)
            return false;
    }
}

static void arena_add(struct vt_tiktoken *t, size_t id, const void *p, size_t n)
{
    vt_grow((void **)&t->arena, &t->arena_cap, t->arena_len + n + 1, 1);
    memcpy(t->arena + t->arena_len, p, n);
    t->off[id] = (uint32_t)t->arena_len;
    t->len[id] = (uint32_t)n;
    t->arena_len += n;
}

/* ---- the .tiktoken file ---- */

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decode n base64 characters into out (room for n * 3 / 4 bytes); -1 when malformed.
 * A lone "=" is the empty token (multilingual.tiktoken's last line, as Python reads it). */
static long b64_decode(const char *s, size_t n, unsigned char *out)
{
    size_t data = n, pad;
    while (data > 0 && s[data - 1] == '=')
        data--;
    pad = n - data;
    if (data == 0 && pad == 1)
        return 0;
    if (pad > 2 || data % 4 == 1 || (pad && (data + pad) % 4) || (!pad && data % 4))
        return -1;
    uint32_t acc = 0;
    int bits = 0;
    long k = 0;
    for (size_t i = 0; i < data; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    return k;
}

/* One line "BASE64 RANK" (no newline) as rank expect; its token goes to the arena. */
static int parse_line(struct vt_tiktoken *t, const char *p, size_t n, size_t expect, char *err,
                      size_t errlen)
{
    unsigned char tok[VT_TIKTOKEN_MAX_TOKEN];
    size_t sp = 0, i;
    while (sp < n && p[sp] != ' ' && p[sp] != '\t')
        sp++;
    if (sp == 0 || sp == n)
        return vt_err(err, errlen, VT_EINVAL, "not \"BASE64 RANK\"");
    if (sp > VT_TIKTOKEN_MAX_TOKEN * 4 / 3 + 3)
        return vt_err(err, errlen, VT_EINVAL, "token longer than %d bytes", VT_TIKTOKEN_MAX_TOKEN);
    long k = b64_decode(p, sp, tok);
    if (k < 0)
        return vt_err(err, errlen, VT_EINVAL, "bad base64 '%.*s'", (int)(sp < 40 ? sp : 40), p);
    for (i = sp; i < n && (p[i] == ' ' || p[i] == '\t'); i++)
        ;
    size_t rank = 0, digits = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9' && digits < 10; i++, digits++)
        rank = rank * 10 + (size_t)(p[i] - '0');
    if (!digits || i != n)
        return vt_err(err, errlen, VT_EINVAL, "rank is not a number");
    if (rank != expect)
        return vt_err(err, errlen, VT_EINVAL,
                      "rank %zu where %zu was due (ranks run from 0, in order)", rank, expect);
    arena_add(t, expect, tok, (size_t)k);
    if (!table_add(t, (int32_t)expect))
        return vt_err(err, errlen, VT_EINVAL, "token of rank %zu is there already", expect);
    return 0;
}

static size_t count_lines(const char *data, size_t len)
{
    size_t n = 0;
    for (const char *p = data, *end = data + len; p < end; n++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    return n;
}

static int parse_ranks(struct vt_tiktoken *t, const char *data, size_t len, size_t lines, char *err,
                       size_t errlen)
{
    char msg[200];
    size_t line = 0;
    for (const char *p = data, *end = data + len; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        if (n && p[n - 1] == '\r')
            n--;
        int rc = parse_line(t, p, n, line, msg, sizeof(msg));
        if (rc)
            return vt_err(err, errlen, rc, "tiktoken: line %zu: %s", line + 1, msg);
        p = nl ? nl + 1 : end;
    }
    t->n_ranks = lines;
    for (int b = 0; b < 256; b++) {
        unsigned char c = (unsigned char)b;
        if (rank_of(t, &c, 1) < 0)
            return vt_err(err, errlen, VT_EINVAL, "tiktoken: the byte 0x%02X is no token", b);
    }
    return 0;
}

/* The specials after the ranks, in tokenizer.py's order. */
static void add_specials(struct vt_tiktoken *t, int n_languages)
{
    static const char *const named[] = {"<|translate|>",   "<|transcribe|>", "<|startoflm|>",
                                        "<|startofprev|>", "<|nospeech|>",   "<|notimestamps|>"};
    int32_t *w[] = {&t->w.translate, &t->w.transcribe, &t->w.sot_lm,
                    &t->w.sot_prev,  &t->w.no_speech,  &t->w.no_timestamps};
    char name[32];
    size_t id = t->n_ranks;
    t->w.eot = (int32_t)id;
    arena_add(t, id++, "<|endoftext|>", 13);
    t->w.sot = (int32_t)id;
    arena_add(t, id++, "<|startoftranscript|>", 21);
    t->w.first_language = (int32_t)id;
    t->w.n_languages = n_languages;
    for (int i = 0; i < n_languages; i++) {
        int k = snprintf(name, sizeof(name), "<|%s|>", languages[i]);
        arena_add(t, id++, name, (size_t)k);
    }
    for (size_t i = 0; i < VT_ARRAY_LEN(named); i++) {
        *w[i] = (int32_t)id;
        arena_add(t, id++, named[i], strlen(named[i]));
    }
    t->w.timestamp_begin = (int32_t)id;
    for (int i = 0; i < VT_WHISPER_N_TIMESTAMPS; i++) {
        int k = snprintf(name, sizeof(name), "<|%d.%02d|>", i * 2 / 100, i * 2 % 100);
        arena_add(t, id++, name, (size_t)k);
    }
    t->n_vocab = id;
}

int vt_tiktoken_parse(const char *data, size_t len, int n_languages, struct vt_tiktoken **out,
                      char *err, size_t errlen)
{
    *out = NULL;
    if (n_languages < 0 || n_languages > VT_WHISPER_MAX_LANGUAGES)
        return vt_err(err, errlen, VT_EINVAL, "tiktoken: %d languages (at most %d)", n_languages,
                      VT_WHISPER_MAX_LANGUAGES);
    if (len > VT_TIKTOKEN_MAX_BYTES)
        return vt_err(err, errlen, VT_EINVAL,
                      "tiktoken: vocabulary too large (%zu bytes, limit %u MiB)", len,
                      VT_TIKTOKEN_MAX_BYTES >> 20);
    size_t lines = count_lines(data, len);
    if (lines < 256 || lines > VT_TIKTOKEN_MAX_RANKS)
        return vt_err(err, errlen, VT_EINVAL, "tiktoken: %zu ranks (from 256 to %u)", lines,
                      VT_TIKTOKEN_MAX_RANKS);
    struct vt_tiktoken *t = vt_xcalloc(1, sizeof(*t));
    size_t ids = lines + 2 + (size_t)n_languages + 6 + VT_WHISPER_N_TIMESTAMPS;
    t->off = vt_xmalloc(ids * sizeof(*t->off));
    t->len = vt_xmalloc(ids * sizeof(*t->len));
    t->mask = 1;
    while (t->mask < lines * 2)
        t->mask <<= 1;
    t->table = vt_xcalloc(t->mask, sizeof(*t->table));
    t->mask--;
    int rc = parse_ranks(t, data, len, lines, err, errlen);
    if (rc) {
        vt_tiktoken_free(t);
        return rc;
    }
    add_specials(t, n_languages);
    *out = t;
    return 0;
}

int vt_tiktoken_load(const char *path, int n_languages, struct vt_tiktoken **out, char *err,
                     size_t errlen)
{
    char *data;
    size_t len;
    *out = NULL;
    int rc = vt_read_file_capped(path, "tiktoken vocabulary", VT_TIKTOKEN_MAX_BYTES, &data, &len,
                                 err, errlen);
    if (rc)
        return rc;
    rc = vt_tiktoken_parse(data, len, n_languages, out, err, errlen);
    free(data);
    return rc;
}

void vt_tiktoken_free(struct vt_tiktoken *t)
{
    if (!t)
        return;
    free(t->off);
    free(t->len);
    free(t->arena);
    free(t->table);
    free(t->ids);
    free(t->starts);
    free(t->ranks);
    free(t);
}

/* ---- the pre-split ---- */

enum cls { C_SPACE, C_LETTER, C_NUMBER, C_OTHER };

/* Class of the character at s[i] (n > i); *k its length. An invalid byte is C_OTHER. */
static enum cls class_at(const unsigned char *s, size_t n, size_t i, size_t *k)
{
    uint32_t cp;
    if (s[i] < 0x80) {
        *k = 1;
        cp = s[i];
    } else if (!(*k = vt_utf8_decode((const char *)s + i, n - i, &cp))) {
        *k = 1;
        return C_OTHER;
    }
    if (vt_uc_is_space(cp))
        return C_SPACE;
    switch (vt_uc_category(cp)) {
    case VT_UC_LETTER:
        return C_LETTER;
    case VT_UC_NUMBER:
        return C_NUMBER;
    default:
        return C_OTHER;
    }
}

/* End of the run of class c from i. */
static size_t run_end(const unsigned char *s, size_t n, size_t i, enum cls c)
{
    size_t k;
    while (i < n && class_at(s, n, i, &k) == c)
        i += k;
    return i;
}

/* 's 't 're 've 'm 'll 'd at i (s[i] == '\''): the end, or 0. */
static size_t contraction(const unsigned char *s, size_t n, size_t i)
{
    if (i + 1 < n && strchr("stmd", s[i + 1]) && s[i + 1])
        return i + 2;
    if (i + 2 < n && ((s[i + 1] == 'r' && s[i + 2] == 'e') ||
                      (s[i + 1] == 'v' && s[i + 2] == 'e') || (s[i + 1] == 'l' && s[i + 2] == 'l')))
        return i + 3;
    return 0;
}

/* End of the piece the pattern matches at i (< n). */
static size_t piece_end(const unsigned char *s, size_t n, size_t i)
{
    size_t k, e;
    if (s[i] == '\'' && (e = contraction(s, n, i)))
        return e;
    if (s[i] == ' ' && i + 1 < n) {
        enum cls c = class_at(s, n, i + 1, &k);
        if (c != C_SPACE)
            return run_end(s, n, i + 1, c); /* " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+" */
    }
    enum cls c = class_at(s, n, i, &k);
    if (c != C_SPACE)
        return run_end(s, n, i, c);
    /* "\s+(?!\S)": all the spaces but the last when a non-space follows; else "\s+" */
    size_t last = i;
    e = i;
    while (e < n && class_at(s, n, e, &k) == C_SPACE) {
        last = e;
        e += k;
    }
    if (e < n && last > i)
        return last;
    return e;
}

/* ---- BPE ---- */

static void push_id(struct vt_tiktoken *t, int32_t id)
{
    vt_grow((void **)&t->ids, &t->cap_ids, t->n_ids + 1, sizeof(*t->ids));
    t->ids[t->n_ids++] = id;
}

/* rank of the bytes from starts[i] to starts[i + 2], or INT64_MAX */
static int64_t pair_rank(const struct vt_tiktoken *t, const unsigned char *p, size_t parts,
                         size_t i)
{
    if (i + 2 > parts)
        return INT64_MAX;
    int32_t r = rank_of(t, p + t->starts[i], t->starts[i + 2] - t->starts[i]);
    return r < 0 ? INT64_MAX : r;
}

static void bpe(struct vt_tiktoken *t, const unsigned char *p, size_t n)
{
    int32_t whole = rank_of(t, p, n);
    if (whole >= 0) {
        push_id(t, whole);
        return;
    }
    vt_grow((void **)&t->starts, &t->cap_parts, n + 1, sizeof(*t->starts));
    t->ranks = vt_xrealloc(t->ranks, t->cap_parts * sizeof(*t->ranks));
    size_t parts = n; /* parts i from starts[i] to starts[i + 1] */
    for (size_t i = 0; i <= n; i++)
        t->starts[i] = i;
    for (size_t i = 0; i < parts; i++)
        t->ranks[i] = pair_rank(t, p, parts, i);
    for (;;) {
        size_t best = 0;
        for (size_t i = 1; i + 1 < parts; i++)
            if (t->ranks[i] < t->ranks[best])
                best = i;
        if (parts < 2 || t->ranks[best] == INT64_MAX)
            break;
        /* merge parts best and best + 1 */
        memmove(t->starts + best + 1, t->starts + best + 2,
                (parts - best - 1) * sizeof(*t->starts));
        memmove(t->ranks + best + 1, t->ranks + best + 2, (parts - best - 2) * sizeof(*t->ranks));
        parts--;
        t->ranks[best] = pair_rank(t, p, parts, best);
        if (best > 0)
            t->ranks[best - 1] = pair_rank(t, p, parts, best - 1);
    }
    for (size_t i = 0; i < parts; i++)
        push_id(t, rank_of(t, p + t->starts[i], t->starts[i + 1] - t->starts[i]));
}

int vt_tiktoken_encode(struct vt_tiktoken *t, const char *text, size_t len, const int32_t **ids,
                       size_t *n)
{
    const unsigned char *s = (const unsigned char *)text;
    t->n_ids = 0;
    *ids = t->ids;
    *n = 0;
    if (len > VT_TIKTOKEN_MAX_BYTES)
        return VT_EINVAL;
    for (size_t i = 0; i < len;) {
        size_t e = piece_end(s, len, i);
        bpe(t, s + i, e - i);
        i = e;
    }
    *ids = t->ids;
    *n = t->n_ids;
    return 0;
}

/* ---- ids back to text ---- */

int vt_tiktoken_decode(const struct vt_tiktoken *t, const int32_t *ids, size_t n, int flags,
                       char **out, size_t *len)
{
    size_t total = 0;
    *out = NULL;
    *len = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || (size_t)ids[i] >= t->n_vocab)
            return VT_EINVAL;
        total += t->len[ids[i]];
    }
    char *o = vt_xmalloc(total + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if ((flags & VT_TIKTOKEN_NO_TIMESTAMPS) && ids[i] >= t->w.timestamp_begin)
            continue;
        memcpy(o + k, t->arena + t->off[ids[i]], t->len[ids[i]]);
        k += t->len[ids[i]];
    }
    o[k] = 0;
    *out = o;
    *len = k;
    return 0;
}

size_t vt_tiktoken_n_vocab(const struct vt_tiktoken *t)
{
    return t->n_vocab;
}

size_t vt_tiktoken_n_ranks(const struct vt_tiktoken *t)
{
    return t->n_ranks;
}

const char *vt_tiktoken_token(const struct vt_tiktoken *t, int32_t id, size_t *len)
{
    if (id < 0 || (size_t)id >= t->n_vocab)
        return NULL;
    *len = t->len[id];
    return (const char *)t->arena + t->off[id];
}

int32_t vt_tiktoken_find(const struct vt_tiktoken *t, const char *bytes, size_t len)
{
    int32_t r = rank_of(t, (const unsigned char *)bytes, len);
    if (r >= 0)
        return r;
    for (size_t id = t->n_ranks; id < t->n_vocab; id++)
        if (t->len[id] == len && memcmp(t->arena + t->off[id], bytes, len) == 0)
            return (int32_t)id;
    return -1;
}

const struct vt_whisper_specials *vt_tiktoken_whisper(const struct vt_tiktoken *t)
{
    return &t->w;
}

int32_t vt_tiktoken_language(const struct vt_tiktoken *t, const char *code)
{
    for (int i = 0; i < t->w.n_languages; i++)
        if (strcmp(languages[i], code) == 0)
            return t->w.first_language + i;
    return -1;
}
