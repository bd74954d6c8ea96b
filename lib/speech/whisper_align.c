/*
 * Word timings, the network's part: the decoder run once over the start sequence,
 * <|notimestamps|>, the window's text tokens and <|endoftext|> (timing.py's find_alignment),
 * keeping the alignment heads' q.k and the text tokens' probabilities; whisper_timing.c
 * makes words and times of them.
 */
#include "speech/whisper_align.h"

#include "base/util.h"
#include "ml/tiktoken.h"
#include "ml/whisper_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FEED_CHUNK 16 /* tokens per decoder call: the logits held stay small */
#define MAX_HEADS  256

static void drop_words(struct vt_whisper_segment *seg, size_t n)
{
    for (size_t s = 0; s < n; s++) {
        for (size_t i = 0; i < seg[s].n_words; i++)
            free(seg[s].words[i].text);
        free(seg[s].words);
        seg[s].words = NULL;
        seg[s].n_words = 0;
    }
}

/* The segments' text tokens (below eot) in order; *n_text their count. */
static int count_text(const struct vt_whisper_segment *seg, size_t n, int32_t eot, int32_t **text,
                      size_t *n_text, char *err, size_t errlen)
{
    size_t k = 0, total = 0;

    for (size_t s = 0; s < n; s++) {
        if (seg[s].n_tokens > 4096 || (seg[s].n_tokens && !seg[s].tokens))
            return vt_err(err, errlen, VT_EINVAL, "whisper align: segment %zu: bad tokens", s);
        total += seg[s].n_tokens;
    }
    *text = vt_xmalloc((total + 1) * sizeof(int32_t));
    for (size_t s = 0; s < n; s++)
        for (size_t i = 0; i < seg[s].n_tokens; i++)
            if (seg[s].tokens[i] >= 0 && seg[s].tokens[i] < eot)
                (*text)[k++] = seg[s].tokens[i];
    *n_text = k;
    return 0;
}

/*
 * The decoder once over ids (n_ids, chunk by chunk so that the logits held stay small): the
 * alignment heads' q.k over the first n_frames positions into qk ([heads][n_ids][n_frames]),
 * and for each text token (ids[n_sot + 1 + i]) its probability among the ordinary tokens at
 * the position before it.
 */
static int align_forward(const struct vt_whisper_model *model, const float *features,
                         const int32_t *ids, int n_ids, int n_sot, int n_heads, int n_frames,
                         int32_t eot, float *qk, double *probs, char *err, size_t errlen)
{
    const struct vt_whisper_dims *d = vt_whisper_model_dims(model);
    size_t ctx = (size_t)d->n_audio_ctx, vocab = (size_t)d->n_vocab;
    struct vt_whisper_kv *kv = vt_whisper_kv_new(model, features);
    struct vt_whisper_decode_out o = {0};
    int rc = 0;

    if (!kv)
        return vt_err(err, errlen, VT_ENOMEM, "whisper align: out of memory");
    o.logits_all = vt_xmalloc(FEED_CHUNK * vocab * sizeof(float));
    o.cross_qk = vt_xmalloc((size_t)n_heads * FEED_CHUNK * ctx * sizeof(float));
    for (int at = 0; at < n_ids && rc == 0; at += FEED_CHUNK) {
        int c = n_ids - at < FEED_CHUNK ? n_ids - at : FEED_CHUNK;

        rc = vt_whisper_decode(kv, ids + at, c, &o, err, errlen);
        for (int h = 0; rc == 0 && h < n_heads; h++)
            for (int t = 0; t < c; t++)
                memcpy(qk + ((size_t)h * (size_t)n_ids + (size_t)(at + t)) * (size_t)n_frames,
                       o.cross_qk + ((size_t)h * (size_t)c + (size_t)t) * ctx,
                       (size_t)n_frames * sizeof(float));
        for (int t = 0; rc == 0 && t < c; t++) {
            int g = at + t, i = g - n_sot; /* the position before text token i */
            const float *l = o.logits_all + (size_t)t * vocab;
            double mx = -INFINITY, sum = 0;

            if (i < 0 || g + 1 >= n_ids - 1)
                continue;
            for (int32_t v = 0; v < eot; v++)
                mx = l[v] > mx ? l[v] : mx;
            for (int32_t v = 0; v < eot; v++)
                sum += exp((double)l[v] - mx);
            probs[i] = exp((double)l[ids[g + 1]] - mx) / sum;
        }
    }
    free(o.logits_all);
    free(o.cross_qk);
    vt_whisper_kv_free(kv);
    return rc;
}

int vt_whisper_align(const struct vt_whisper_model *model, struct vt_tiktoken *tok,
                     const float *features, const int32_t *sot, size_t n_sot,
                     struct vt_whisper_segment *seg, size_t n, int num_frames, double t0, char *err,
                     size_t errlen)
{
    const struct vt_whisper_dims *d = model ? vt_whisper_model_dims(model) : NULL;
    const struct vt_whisper_specials *sp = tok ? vt_tiktoken_whisper(tok) : NULL;
    size_t n_heads = 0, n_text = 0;
    int32_t *text = NULL, *ids = NULL;
    float *qk = NULL;
    double *probs = NULL;
    int rc, n_ids, m;

    if (seg)
        drop_words(seg, n);
    if (!d || !sp || !features || !sot || n_sot == 0 || (n && !seg) || num_frames < 0)
        return vt_err(err, errlen, VT_EINVAL, "whisper align: bad arguments");
    vt_whisper_model_alignment_heads(model, &n_heads);
    rc = count_text(seg, n, sp->eot, &text, &n_text, err, errlen);
    if (rc != 0 || n_text == 0) { /* vt_whisper_align_qk clears the words, refuses bad ids */
        if (rc == 0)
            rc = vt_whisper_align_qk(tok, sot, n_sot, NULL, 0, 0, NULL, seg, n, t0, err, errlen);
        goto out;
    }
    if (n_heads == 0 || n_heads > MAX_HEADS || n_sot + n_text + 2 > (size_t)d->n_text_ctx) {
        rc = vt_err(err, errlen, VT_EINVAL, "whisper align: %zu tokens, %zu heads: too many",
                    n_sot + n_text + 2, n_heads);
        goto out;
    }
    n_ids = (int)(n_sot + n_text + 2);
    m = num_frames / 2 < d->n_audio_ctx ? num_frames / 2 : d->n_audio_ctx;
    ids = vt_xmalloc((size_t)n_ids * sizeof(int32_t));
    memcpy(ids, sot, n_sot * sizeof(int32_t));
    ids[n_sot] = sp->no_timestamps;
    memcpy(ids + n_sot + 1, text, n_text * sizeof(int32_t));
    ids[n_ids - 1] = sp->eot;
    qk = vt_xmalloc((n_heads * (size_t)n_ids * (size_t)m + 1) * sizeof(float));
    probs = vt_xcalloc(n_text, sizeof(double));
    rc = align_forward(model, features, ids, n_ids, (int)n_sot, (int)n_heads, m, sp->eot, qk, probs,
                       err, errlen);
    if (rc == 0)
        rc = vt_whisper_align_qk(tok, sot, n_sot, qk, (int)n_heads, m, probs, seg, n, t0, err,
                                 errlen);
out:
    free(text);
    free(ids);
    free(qk);
    free(probs);
    return rc;
}
