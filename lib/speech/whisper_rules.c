/*
 * The rules of one window's decoding that need no network (decoding.py's logit filters,
 * the suppress list from the vocabulary, the initial tokens, tokenizer.py's decode with
 * errors="replace", utils.py's compression ratio): apart from whisper_decode.c, which
 * drives the network, so that they link and are tested on hand-made logits alone.
 */
#include "base/util.h"
#include "ml/tiktoken.h"
#include "speech/whisper_decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* tokenizer.py's non_speech_tokens: symbols that are no speech, alone or after a space */
static const char *const NON_SPEECH[] = {"\"",
                                         "#",
                                         "(",
                                         ")",
                                         "*",
                                         "+",
                                         "/",
                                         ":",
                                         ";",
                                         "<",
                                         "=",
                                         ">",
                                         "@",
                                         "[",
                                         "\\",
                                         "]",
                                         "^",
                                         "_",
                                         "`",
                                         "{",
                                         "|",
                                         "}",
                                         "~",
                                         "\xe3\x80\x8c",
                                         "\xe3\x80\x8d",
                                         "\xe3\x80\x8e",
                                         "\xe3\x80\x8f",
                                         "<<",
                                         ">>",
                                         "<<<",
                                         ">>>",
                                         "--",
                                         "---",
                                         "-(",
                                         "-[",
                                         "('",
                                         "(\"",
                                         "((",
                                         "))",
                                         "(((",
                                         ")))",
                                         "[[",
                                         "]]",
                                         "{{",
                                         "}}",
                                         "\xe2\x99\xaa\xe2\x99\xaa",
                                         "\xe2\x99\xaa\xe2\x99\xaa\xe2\x99\xaa"};
/* its "miscellaneous" musical signs U+2669..U+266F: their first token even when split */
static const char *const NON_SPEECH_MISC[] = {"\xe2\x99\xa9", "\xe2\x99\xaa", "\xe2\x99\xab",
                                              "\xe2\x99\xac", "\xe2\x99\xad", "\xe2\x99\xae",
                                              "\xe2\x99\xaf"};

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Append the first token of text (and of " " + text) when it is a single token, or always
 * for the musical signs. */
static void add_symbol(struct vt_tiktoken *tok, const char *sym, int misc, int32_t *out, size_t *n)
{
    char buf[32];
    const int32_t *ids;
    size_t len = strlen(sym), k;

    for (int spaced = 0; spaced < 2; spaced++) {
        snprintf(buf, sizeof(buf), "%s%s", spaced ? " " : "", sym);
        if (vt_tiktoken_encode(tok, buf, len + (size_t)spaced, &ids, &k) != 0 || k == 0)
            continue;
        if (k == 1 || misc)
            out[(*n)++] = ids[0];
    }
}

/* DecodingTask._get_suppress_tokens for the default "-1" */
static void make_suppress(struct vt_whisper_dec *d)
{
    const struct vt_whisper_specials *sp = d->sp;
    size_t cap = 2 * (VT_ARRAY_LEN(NON_SPEECH) + VT_ARRAY_LEN(NON_SPEECH_MISC)) + 8, n = 0, w;
    int32_t *s = vt_xmalloc(cap * sizeof(*s));
    const int32_t *ids;
    size_t k;

    if (vt_tiktoken_encode(d->tok, " -", 2, &ids, &k) == 0 && k > 0)
        s[n++] = ids[0];
    if (vt_tiktoken_encode(d->tok, " '", 2, &ids, &k) == 0 && k > 0)
        s[n++] = ids[0];
    for (size_t i = 0; i < VT_ARRAY_LEN(NON_SPEECH); i++)
        add_symbol(d->tok, NON_SPEECH[i], 0, s, &n);
    for (size_t i = 0; i < VT_ARRAY_LEN(NON_SPEECH_MISC); i++)
        add_symbol(d->tok, NON_SPEECH_MISC[i], 1, s, &n);
    s[n++] = sp->transcribe;
    s[n++] = sp->translate;
    s[n++] = sp->sot;
    s[n++] = sp->sot_prev;
    s[n++] = sp->sot_lm;
    s[n++] = sp->no_speech;
    qsort(s, n, sizeof(*s), cmp_i32);
    w = 0;
    for (size_t i = 0; i < n; i++)
        if (w == 0 || s[i] != s[w - 1])
            s[w++] = s[i];
    d->suppress = s;
    d->n_suppress = w;
}

int vt_whisper_dec_init(struct vt_whisper_dec *d, struct vt_tiktoken *tok, int n_vocab,
                        int n_text_ctx, int n_audio_ctx, char *err, size_t errlen)
{
    const int32_t *ids;
    size_t k;

    memset(d, 0, sizeof(*d));
    if (n_vocab <= 0 || (size_t)n_vocab != vt_tiktoken_n_vocab(tok))
        return vt_err(err, errlen, VT_EINVAL, "whisper: the tokenizer has %zu tokens, the model %d",
                      vt_tiktoken_n_vocab(tok), n_vocab);
    if (n_text_ctx < 8 || n_text_ctx > 65536 || n_audio_ctx < 1)
        return vt_err(err, errlen, VT_EINVAL, "whisper: a text context of %d tokens", n_text_ctx);
    d->tok = tok;
    d->sp = vt_tiktoken_whisper(tok);
    d->n_vocab = n_vocab;
    d->n_text_ctx = n_text_ctx;
    d->n_audio_ctx = n_audio_ctx;
    /* model.py's is_multilingual: n_vocab >= 51865 */
    d->english = n_vocab < 51865;
    if (vt_tiktoken_encode(tok, " ", 1, &ids, &k) == 0)
        for (size_t i = 0; i < k && d->n_blank < VT_ARRAY_LEN(d->blank) - 1; i++)
            d->blank[d->n_blank++] = ids[i];
    d->blank[d->n_blank++] = d->sp->eot;
    make_suppress(d);
    return 0;
}

void vt_whisper_dec_release(struct vt_whisper_dec *d)
{
    free(d->suppress);
    d->suppress = NULL;
    d->n_suppress = 0;
}

static void mask(float *logits, int32_t from, int32_t to)
{
    for (int32_t i = from; i < to; i++)
        logits[i] = -INFINITY;
}

/* ApplyTimestampRules' last rule: when the timestamps' total probability beats every text
 * token's, only a timestamp may come. */
static void timestamp_mass(const struct vt_whisper_dec *d, float *logits)
{
    int32_t tb = d->sp->timestamp_begin;
    double mx = -INFINITY, sum = 0, lse, ts_mx = -INFINITY, ts_sum = 0, text_mx = -INFINITY;

    for (int i = 0; i < d->n_vocab; i++)
        if (logits[i] > mx)
            mx = logits[i];
    if (mx == -INFINITY)
        return;
    for (int i = 0; i < d->n_vocab; i++)
        sum += exp(logits[i] - mx);
    lse = mx + log(sum);
    for (int i = tb; i < d->n_vocab; i++)
        if (logits[i] > ts_mx)
            ts_mx = logits[i];
    for (int i = 0; i < tb; i++)
        if (logits[i] > text_mx)
            text_mx = logits[i];
    if (ts_mx == -INFINITY)
        return;
    for (int i = tb; i < d->n_vocab; i++)
        ts_sum += exp(logits[i] - ts_mx);
    /* logsumexp of the timestamps' log-probabilities against the best text one */
    if (ts_mx + log(ts_sum) - lse > text_mx - lse)
        mask(logits, 0, tb);
}

void vt_whisper_filter_logits(const struct vt_whisper_dec *d, float *logits, const int32_t *tokens,
                              size_t n, size_t sample_begin, int mit_index)
{
    const struct vt_whisper_specials *sp = d->sp;
    int32_t tb = sp->timestamp_begin, last_ts = -1;
    const int32_t *seq = tokens + sample_begin;
    size_t ns = n > sample_begin ? n - sample_begin : 0;
    int last_was, penult_was;

    if (n == sample_begin) /* SuppressBlank */
        for (size_t i = 0; i < d->n_blank; i++)
            logits[d->blank[i]] = -INFINITY;
    for (size_t i = 0; i < d->n_suppress; i++) /* SuppressTokens */
        logits[d->suppress[i]] = -INFINITY;
    /* ApplyTimestampRules: <|notimestamps|> is for decoding without timestamps */
    logits[sp->no_timestamps] = -INFINITY;
    /* timestamps come in pairs, except directly before <|endoftext|> */
    last_was = ns >= 1 && seq[ns - 1] >= tb;
    penult_was = ns < 2 || seq[ns - 2] >= tb;
    if (last_was) {
        if (penult_was)
            mask(logits, tb, d->n_vocab);
        else
            mask(logits, 0, sp->eot);
    }
    for (size_t i = 0; i < ns; i++)
        if (seq[i] >= tb)
            last_ts = seq[i];
    /* timestamps never decrease, and a segment has a non-zero length */
    if (last_ts >= 0)
        mask(logits, tb, last_was && !penult_was ? last_ts : last_ts + 1);
    if (n == sample_begin) {
        /* the first token is a timestamp, no later than max_initial_timestamp */
        mask(logits, 0, tb);
        if (mit_index >= 0 && (int64_t)tb + mit_index + 1 < d->n_vocab)
            mask(logits, tb + mit_index + 1, d->n_vocab);
    }
    timestamp_mass(d, logits);
}

size_t vt_whisper_initial_tokens(const struct vt_whisper_dec *d, int32_t lang_token, int translate,
                                 const int32_t *prompt, size_t n_prompt, int32_t *out,
                                 size_t *sot_index)
{
    size_t n = 0, keep = (size_t)d->n_text_ctx / 2 - 1;

    if (n_prompt > 0) {
        out[n++] = d->sp->sot_prev;
        if (n_prompt > keep) {
            prompt += n_prompt - keep;
            n_prompt = keep;
        }
        memcpy(out + n, prompt, n_prompt * sizeof(*prompt));
        n += n_prompt;
    }
    *sot_index = n;
    out[n++] = d->sp->sot;
    if (!d->english) {
        out[n++] = lang_token >= 0 ? lang_token : d->sp->first_language;
        out[n++] = translate ? d->sp->translate : d->sp->transcribe;
    }
    return n;
}

/* Length of the maximal invalid piece at s (n > 0 bytes left), as Python's UTF-8 decoder
 * with errors="replace" sizes one U+FFFD: a lead byte and the continuation bytes that
 * could still have completed it. */
static size_t invalid_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t need, i;

    if (c >= 0xc2 && c <= 0xdf)
        need = 2;
    else if (c >= 0xe0 && c <= 0xef)
        need = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        need = 4;
    else
        return 1;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    for (i = 1; i < need && i < n; i++) {
        if (s[i] < lo || s[i] > hi)
            break;
        lo = 0x80;
        hi = 0xbf;
    }
    return i;
}

/* Python's str.isspace for the code point cp */
static int is_space(uint32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* Strip s (valid UTF-8 of len bytes) in place as str.strip(). */
static void strip_text(char *s, size_t len)
{
    size_t a = 0, b = 0, i = 0;
    int seen = 0;

    while (i < len) {
        uint32_t cp = 0;
        size_t k = vt_utf8_decode(s + i, len - i, &cp);
        if (k == 0)
            k = 1;
        if (!is_space(cp)) {
            if (!seen)
                a = i;
            seen = 1;
            b = i + k;
        }
        i += k;
    }
    if (!seen)
        a = b = 0;
    memmove(s, s + a, b - a);
    s[b - a] = '\0';
}

char *vt_whisper_text(const struct vt_whisper_dec *d, const int32_t *ids, size_t n, int strip)
{
    char *raw = NULL;
    size_t len = 0, i = 0;
    struct vt_sb sb = {0};

    if (vt_tiktoken_decode(d->tok, ids, n, VT_TIKTOKEN_NO_TIMESTAMPS, &raw, &len) != 0)
        return NULL;
    while (i < len) {
        size_t k = vt_utf8_decode(raw + i, len - i, NULL);
        if (k > 0 && raw[i] != '\0') {
            vt_sb_add(&sb, raw + i, k);
            i += k;
        } else if (raw[i] == '\0') {
            vt_sb_add(&sb, "\0", 1); /* a NUL byte token: kept (it ends the C string) */
            i++;
        } else {
            vt_sb_adds(&sb, "\xef\xbf\xbd");
            i += invalid_len((const unsigned char *)raw + i, len - i);
        }
    }
    free(raw);
    raw = vt_sb_detach(&sb);
    if (strip)
        strip_text(raw, strlen(raw));
    return raw;
}

double vt_whisper_compression_ratio(const char *text, size_t len)
{
    uLongf clen = compressBound(len);
    Bytef *buf;
    double r = 0;

    if (len == 0 || len > UINT32_MAX)
        return 0;
    buf = vt_xmalloc(clen);
    if (compress(buf, &clen, (const Bytef *)text, len) == Z_OK && clen > 0)
        r = (double)len / (double)clen;
    free(buf);
    return r;
}
