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
