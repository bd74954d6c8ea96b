/*
 * One window's decoding (decoding.py with beam size 1): the initial tokens, the logit
 * filters, greedy and temperature sampling over the network's KV cache, the no-speech
 * probability, the result's log-probabilities, text and compression ratio; and language
 * detection. Each rule is written as decoding.py writes it, in the same order, so that
 * the tokens match the reference (tests/tools/whisper_ref.py) one for one.
 */
#include "speech/whisper_decode.h"

#include "base/util.h"
#include "ml/tiktoken.h"
#include "ml/whisper_model.h"

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

int vt_whisper_dec_init(struct vt_whisper_dec *d, const struct vt_whisper_model *model,
                        struct vt_tiktoken *tok, int n_vocab, int n_text_ctx, int n_audio_ctx,
                        char *err, size_t errlen)
{
    const int32_t *ids;
    size_t k;

    memset(d, 0, sizeof(*d));
    if (model) {
        const struct vt_whisper_dims *dims = vt_whisper_model_dims(model);
        n_vocab = dims->n_vocab;
        n_text_ctx = dims->n_text_ctx;
        n_audio_ctx = dims->n_audio_ctx;
    }
    if (n_vocab <= 0 || (size_t)n_vocab != vt_tiktoken_n_vocab(tok))
        return vt_err(err, errlen, VT_EINVAL, "whisper: the tokenizer has %zu tokens, the model %d",
                      vt_tiktoken_n_vocab(tok), n_vocab);
    if (n_text_ctx < 8 || n_audio_ctx < 1)
        return vt_err(err, errlen, VT_EINVAL, "whisper: a text context of %d tokens", n_text_ctx);
    d->model = model;
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

int vt_whisper_detect_language(const struct vt_whisper_dec *d, struct vt_whisper_kv *kv, int *lang,
                               double *prob, char *err, size_t errlen)
{
    const struct vt_whisper_specials *sp = d->sp;
    float *logits = vt_xmalloc((size_t)d->n_vocab * sizeof(float));
    struct vt_whisper_decode_out o = {.logits = logits};
    double mx = -INFINITY, sum = 0;
    int rc, best = -1;

    rc = vt_whisper_decode(kv, &sp->sot, 1, &o, err, errlen);
    vt_whisper_kv_rewind(kv, 0);
    if (rc != 0)
        goto out;
    for (int i = 0; i < sp->n_languages; i++)
        if (logits[sp->first_language + i] > mx) {
            mx = logits[sp->first_language + i];
            best = i;
        }
    for (int i = 0; i < sp->n_languages; i++)
        sum += exp(logits[sp->first_language + i] - mx);
    if (best < 0) {
        rc = vt_err(err, errlen, VT_EINVAL, "whisper: the vocabulary has no language tokens");
        goto out;
    }
    *lang = best;
    *prob = 1.0 / sum;
out:
    free(logits);
    return rc;
}

void vt_whisper_decoding_release(struct vt_whisper_decoding *r)
{
    free(r->tokens);
    free(r->text);
    memset(r, 0, sizeof(*r));
}

/* softmax(logits)[id] over n, in double */
static double prob_of(const float *logits, int n, int id)
{
    double mx = -INFINITY, sum = 0;

    for (int i = 0; i < n; i++)
        if (logits[i] > mx)
            mx = logits[i];
    for (int i = 0; i < n; i++)
        sum += exp(logits[i] - mx);
    return exp(logits[id] - mx) / sum;
}

int vt_whisper_prefix(const struct vt_whisper_dec *d, struct vt_whisper_kv *kv,
                      const int32_t *initial, size_t n_initial, size_t sot_index, float *first,
                      double *no_speech_prob, char *err, size_t errlen)
{
    size_t nv = (size_t)d->n_vocab;
    float *all;
    struct vt_whisper_decode_out o = {0};
    int rc;

    if (n_initial == 0 || sot_index >= n_initial || n_initial >= (size_t)d->n_text_ctx)
        return vt_err(err, errlen, VT_EINVAL, "whisper: %zu initial tokens", n_initial);
    all = vt_xmalloc(n_initial * nv * sizeof(float));
    o.logits_all = all;
    vt_whisper_kv_rewind(kv, 0);
    rc = vt_whisper_decode(kv, initial, (int)n_initial, &o, err, errlen);
    if (rc == 0) {
        *no_speech_prob = prob_of(all + sot_index * nv, d->n_vocab, d->sp->no_speech);
        memcpy(first, all + (n_initial - 1) * nv, nv * sizeof(float));
    }
    free(all);
    return rc;
}

/* splitmix64: a small seeded generator (torch's cannot be matched anyway) */
static double rng_uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* GreedyDecoder.update's choice: argmax (the first of equals, as torch), or a draw from
 * Categorical(logits / temperature); *logprob gets log_softmax(logits)[choice]. */
static int32_t choose(const float *logits, int n, int32_t eot, double temperature, uint64_t *rng,
                      double *logprob)
{
    double mx = -INFINITY, sum = 0;
    int32_t best = 0;

    for (int i = 0; i < n; i++)
        if (logits[i] > mx) {
            mx = logits[i];
            best = i;
        }
    if (mx == -INFINITY) { /* every token filtered out: nothing more can be said */
        *logprob = 0;
        return eot;
    }
    for (int i = 0; i < n; i++)
        sum += exp(logits[i] - mx);
    if (temperature > 0) {
        double tsum = 0, u, acc = 0;
        for (int i = 0; i < n; i++)
            tsum += exp((logits[i] - mx) / temperature);
        u = rng_uniform(rng) * tsum;
        for (int i = 0; i < n; i++) {
            double p = exp((logits[i] - mx) / temperature);
            if (p <= 0)
                continue;
            acc += p;
            best = i;
            if (u < acc)
                break;
        }
    }
    *logprob = (logits[best] - mx) - log(sum);
    return best;
}

static void finish(const struct vt_whisper_dec *d, const int32_t *tokens, size_t n_initial,
                   size_t n, struct vt_whisper_decoding *out)
{
    size_t len = 0;

    while (n_initial + len < n && tokens[n_initial + len] != d->sp->eot)
        len++;
    out->n_tokens = len;
    out->tokens = vt_xmalloc((len ? len : 1) * sizeof(int32_t));
    memcpy(out->tokens, tokens + n_initial, len * sizeof(int32_t));
    /* sequence ranker with no length penalty: the sum over the tokens and <|endoftext|> */
    out->avg_logprob = out->sum_logprob / (double)(len + 1);
    out->text = vt_whisper_text(d, out->tokens, len, 1);
    if (!out->text)
        out->text = vt_xstrdup("");
    out->compression_ratio = vt_whisper_compression_ratio(out->text, strlen(out->text));
}

int vt_whisper_sample(const struct vt_whisper_dec *d, struct vt_whisper_kv *kv,
                      const int32_t *initial, size_t n_initial, const float *first,
                      double no_speech_prob, double temperature, int sample_len, int mit_index,
                      uint64_t *rng, struct vt_whisper_decoding *out, char *err, size_t errlen)
{
    size_t nv = (size_t)d->n_vocab, cap = (size_t)d->n_text_ctx + 1, n = n_initial;
    int32_t *tokens = vt_xmalloc(cap * sizeof(int32_t));
    float *logits = vt_xmalloc(nv * sizeof(float));
    struct vt_whisper_decode_out o = {.logits = logits};
    int rc = 0;

    vt_whisper_decoding_release(out);
    out->temperature = temperature;
    out->no_speech_prob = no_speech_prob;
    if (n_initial == 0 || n_initial >= cap) {
        rc = vt_err(err, errlen, VT_EINVAL, "whisper: %zu initial tokens", n_initial);
        goto out;
    }
    memcpy(tokens, initial, n_initial * sizeof(int32_t));
    memcpy(logits, first, nv * sizeof(float));
    vt_whisper_kv_rewind(kv, (int)n_initial);
    for (int i = 0; i < sample_len; i++) {
        double lp;
        int32_t next;

        if (i > 0) {
            rc = vt_whisper_decode(kv, &tokens[n - 1], 1, &o, err, errlen);
            if (rc != 0)
                goto out;
        }
        vt_whisper_filter_logits(d, logits, tokens, n, n_initial, mit_index);
        next = choose(logits, d->n_vocab, d->sp->eot, temperature, rng, &lp);
        out->sum_logprob += lp;
        tokens[n++] = next;
        /* decoding.py stops past n_text_ctx: the last token is never fed */
        if (next == d->sp->eot || n > (size_t)d->n_text_ctx)
            break;
    }
    finish(d, tokens, n_initial, n, out);
out:
    free(tokens);
    free(logits);
    return rc;
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
