/*
 * Tests of the decoding rules that need no network (whisper_rules.c): the suppress list
 * built from the real multilingual vocabulary must be the reference's 88 ids
 * (tests/data/whisper-test/expected.json); the timestamp rules on hand-made logits (the
 * first token a timestamp no later than max_initial_timestamp, pairs, monotonic
 * timestamps, text between, the probability-mass rule); the initial tokens with and
 * without a prompt; Python's UTF-8 replacement; utils.py's compression ratio.
 */
#include "harness.h"
#include "ml/tiktoken.h"
#include "speech/whisper_decode.h"
#include "vidtheque.h"

#include <jansson.h>
#include <stdlib.h>

#define MULTI    "tests/data/whisper-assets/multilingual.tiktoken"
#define EXPECTED "tests/data/whisper-test/expected.json"

static struct vt_tiktoken *tok_multi(void)
{
    struct vt_tiktoken *t = NULL;
    char err[512] = "";

    if (vt_tiktoken_load(MULTI, 99, &t, err, sizeof(err)) != 0)
        fprintf(stderr, "  %s\n", err);
    return t;
}

VT_TEST(whisper_suppress_list)
{
    struct vt_tiktoken *t = tok_multi();
    struct vt_whisper_dec d;
    json_error_t jerr;
    json_t *root = json_load_file(EXPECTED, 0, &jerr), *want;
    char err[256];

    CHECK(t && root);
    if (!t || !root)
        goto out;
    CHECK_INT(vt_whisper_dec_init(&d, t, 51865, 448, 1500, err, sizeof(err)), 0);
    want = json_object_get(json_object_get(root, "greedy"), "suppress_tokens");
    CHECK_INT(d.n_suppress, json_array_size(want));
    CHECK_INT(d.n_suppress, 88);
    for (size_t i = 0; i < d.n_suppress && i < json_array_size(want); i++)
        CHECK_INT(d.suppress[i], json_integer_value(json_array_get(want, i)));
    /* SuppressBlank: encode(" ") is 220, then <|endoftext|> */
    CHECK_INT(d.n_blank, 2);
    CHECK_INT(d.blank[0], 220);
    CHECK_INT(d.blank[1], 50257);
    CHECK(!d.english);
    vt_whisper_dec_release(&d);
    /* a vocabulary that is not the model's */
    CHECK_INT(vt_whisper_dec_init(&d, t, 51864, 448, 1500, err, sizeof(err)), VT_EINVAL);
out:
    json_decref(root);
    vt_tiktoken_free(t);
}

/* Filter a row of zeros (every token equally likely) after seq; count what is left. */
static float *filtered(const struct vt_whisper_dec *d, const int32_t *seq, size_t n,
                       size_t sample_begin)
{
    float *l = calloc((size_t)d->n_vocab, sizeof(float));

    vt_whisper_filter_logits(d, l, seq, n, sample_begin, 50);
    return l;
}

static int allowed(const float *l, int32_t a, int32_t b)
{
    int n = 0;

    for (int32_t i = a; i < b; i++)
        n += !isinf(l[i]);
    return n;
}

VT_TEST(whisper_timestamp_rules)
{
    struct vt_tiktoken *t = tok_multi();
    struct vt_whisper_dec d;
    char err[256];
    int32_t tb, eot, seq[8];
    float *l;

    if (!t || vt_whisper_dec_init(&d, t, 51865, 448, 1500, err, sizeof(err)) != 0) {
        CHECK(0);
        vt_tiktoken_free(t);
        return;
    }
    tb = d.sp->timestamp_begin;
    eot = d.sp->eot;
    seq[0] = d.sp->sot, seq[1] = d.sp->first_language, seq[2] = d.sp->transcribe;
    /* the first token: a timestamp from <|0.00|> to <|1.00|> only */
    l = filtered(&d, seq, 3, 3);
    CHECK_INT(allowed(l, 0, tb), 0);
    CHECK_INT(allowed(l, tb, d.n_vocab), 51);
    free(l);
    /* after <|0.40|>: text (no timestamps: the penultimate counts as one) */
    seq[3] = tb + 20;
    l = filtered(&d, seq, 4, 3);
    CHECK_INT(allowed(l, tb, d.n_vocab), 0);
    CHECK(allowed(l, 0, eot) > 50000);
    CHECK(isinf(l[d.sp->no_timestamps]) && isinf(l[d.sp->no_speech]) && isinf(l[220]) == 0);
    free(l);
    /* after <|0.40|> text: timestamps from <|0.42|> on, or text, or the end; but the
     * timestamps' mass (1480 of them) beats any single text token: timestamps only */
    seq[4] = 1000;
    l = filtered(&d, seq, 5, 3);
    CHECK_INT(allowed(l, tb, tb + 21), 0);
    CHECK_INT(allowed(l, tb + 21, d.n_vocab), d.n_vocab - tb - 21);
    CHECK_INT(allowed(l, 0, tb), 0);
    free(l);
    /* the same with one text token far ahead: text allowed again */
    {
        float *m = calloc((size_t)d.n_vocab, sizeof(float));
        m[1000] = 20;
        vt_whisper_filter_logits(&d, m, seq, 5, 3, 50);
        CHECK(!isinf(m[1000]) && !isinf(m[tb + 21]) && isinf(m[tb + 20]));
        free(m);
    }
    /* after <|0.40|> text <|0.80|>: a closing timestamp <|0.80|> or later, no text; the
     * end (<|endoftext|>, below the timestamps) then loses to the timestamps' mass */
    seq[5] = tb + 40;
    l = filtered(&d, seq, 6, 3);
    CHECK_INT(allowed(l, 0, eot), 0);
    CHECK(isinf(l[eot]));
    CHECK_INT(allowed(l, tb, tb + 40), 0);
    CHECK(!isinf(l[tb + 40]));
    free(l);
    /* after a complete pair <|0.80|><|0.80|>: no timestamp at all */
    seq[6] = tb + 40;
    l = filtered(&d, seq, 7, 3);
    CHECK_INT(allowed(l, tb, d.n_vocab), 0);
    CHECK(allowed(l, 0, eot) > 50000);
    free(l);
    vt_whisper_dec_release(&d);
    vt_tiktoken_free(t);
}

VT_TEST(whisper_initial_tokens)
{
    struct vt_tiktoken *t = tok_multi();
    struct vt_whisper_dec d;
    char err[256];
    int32_t prompt[300], out[300];
    size_t n, sot;

    if (!t || vt_whisper_dec_init(&d, t, 51865, 448, 1500, err, sizeof(err)) != 0) {
        CHECK(0);
        vt_tiktoken_free(t);
        return;
    }
    n = vt_whisper_initial_tokens(&d, vt_tiktoken_language(t, "fr"), 1, NULL, 0, out, &sot);
    CHECK_INT(n, 3);
    CHECK_INT(sot, 0);
    CHECK_INT(out[0], 50258);
    CHECK_INT(out[1], vt_tiktoken_language(t, "fr"));
    CHECK_INT(out[2], d.sp->translate);
    for (int i = 0; i < 300; i++)
        prompt[i] = i;
    /* <|startofprev|> and the last 223 prompt tokens */
    n = vt_whisper_initial_tokens(&d, vt_tiktoken_language(t, "en"), 0, prompt, 300, out, &sot);
    CHECK_INT(n, 1 + 223 + 3);
    CHECK_INT(sot, 224);
    CHECK_INT(out[0], d.sp->sot_prev);
    CHECK_INT(out[1], 77);
    CHECK_INT(out[223], 299);
    CHECK_INT(out[226], d.sp->transcribe);
    vt_whisper_dec_release(&d);
    vt_tiktoken_free(t);
}

VT_TEST(whisper_text_and_ratio)
{
    struct vt_tiktoken *t = tok_multi();
    struct vt_whisper_dec d;
    char err[256], *s;
    int32_t ids[6];

    if (!t || vt_whisper_dec_init(&d, t, 51865, 448, 1500, err, sizeof(err)) != 0) {
        CHECK(0);
        vt_tiktoken_free(t);
        return;
    }
    /* b"\xe4\xb8" + b"a": one U+FFFD for the cut sequence, as Python's "replace" */
    ids[0] = vt_tiktoken_find(t, "\xe4", 1);
    ids[1] = vt_tiktoken_find(t, "\xb8", 1);
    ids[2] = vt_tiktoken_find(t, "a", 1);
    ids[3] = d.sp->timestamp_begin + 5; /* left out */
    ids[4] = vt_tiktoken_find(t, "\xff", 1);
    ids[5] = vt_tiktoken_find(t, " ", 1);
    s = vt_whisper_text(&d, ids, 6, 0);
    CHECK_STR(s, "\xef\xbf\xbd"
                 "a\xef\xbf\xbd ");
    free(s);
    s = vt_whisper_text(&d, ids + 5, 1, 1);
    CHECK_STR(s, "");
    free(s);
    /* utils.py: compression_ratio("complete ?\" gualock*13owią") = 36 / 17 */
    {
        const char *txt = "complete ?\" gualocklocklocklocklocklocklocklocklocklocklocklocklock"
                          "owi\xc4\x85";
        CHECK_NEAR(vt_whisper_compression_ratio(txt, strlen(txt)), 2.1176470588235294, 1e-12);
    }
    CHECK_NEAR(vt_whisper_compression_ratio("", 0), 0, 0);
    vt_whisper_dec_release(&d);
    vt_tiktoken_free(t);
}
