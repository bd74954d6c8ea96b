/*
 * The Whisper half of the stt stage: one segment of audio, cut by stt.c's streaming
 * segmenter (at most 30 s, cut at pauses), transcribed in process by vt_whisper_transcribe
 * (whisper.h) and its words put on the file's time line.
 *
 * One recogniser serves every worker: the model (read-only once open, shared) and the
 * filterbank are loaded once; the tokenizer keeps scratch in its encoder, so each worker
 * has its own copy (a few MB each). The vocabulary and the filterbank are not part of a
 * Hugging Face checkpoint: they come from the checkpoint's folder when it has them (a
 * .tiktoken file and mel_filters.npz), else from $VIDTHEQUE_WHISPER_ASSETS, else from what
 * `make install` puts in VT_WHISPER_ASSETS_DIR; which .tiktoken follows from the
 * vocabulary's size, as openai/whisper decides it (51864 tokens: English-only, gpt2).
 *
 * Words: transcribe.py's, timed by the cross-attention alignment, with the leading space
 * and any byte that is not valid UTF-8 or is a control character removed (a random or
 * confused model can stop inside a character); a segment that came back without word
 * timings has its words spread evenly over its span. Times are clamped into the segment.
 */
#include "base/config.h"
#include "base/util.h"
#include "ml/tiktoken.h"
#include "ml/whisper_model.h"
#include "speech/stt_hints.h"
#include "speech/stt_int.h"
#include "speech/whisper.h"
#include "speech/whisper_mel.h"
#include "vidtheque.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RATE_HZ 16000
/* No one speaks more words a second; more is a model repeating itself. */
#define MAX_WORDS_PER_S 12
#define MAX_WORD_BYTES  200
/* English-only checkpoints have this vocabulary (gpt2's 50257 and 1607 specials). */
#define N_VOCAB_ENGLISH 51864
/* n_vocab - this is the number of languages (+1 for a multilingual model): tokenizer.py's
 * specials are <|endoftext|>, <|startoftranscript|>, the languages, then 6 more and the
 * 1501 timestamps after the 50257 ranks. */
#define N_VOCAB_NO_LANG 51765

struct vt_stt_whisper {
    struct vt_whisper_model *model;
    struct vt_whisper_mel *mel;
    struct vt_tiktoken **tok; /* one per worker */
    int n_tok;
    int english_only;
    char language[8]; /* the source's, "" when unknown: detected */
    char *prompt;     /* the initial prompt, NULL: none */
};

static int is_file(const char *path)
{
    struct stat st;

    return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
    struct stat st;

    return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* The folder that holds the checkpoint (itself, or a ggml file's folder); caller frees. */
static char *checkpoint_dir(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (is_dir(path))
        return vt_xstrdup(path);
    return slash ? vt_xasprintf("%.*s", (int)(slash - path), path) : vt_xstrdup(".");
}

/* The only .tiktoken file of dir, or NULL (none, or several); caller frees. */
static char *only_tiktoken(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char *found = NULL;
    int n = 0;

    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);

        if (l > 9 && !strcmp(e->d_name + l - 9, ".tiktoken") && e->d_name[0] != '.') {
            free(found);
            found = vt_xasprintf("%s/%s", dir, e->d_name);
            n++;
        }
    }
    if (d)
        closedir(d);
    if (n != 1) {
        free(found);
        return NULL;
    }
    return found;
}

/* The first of the checkpoint's folder, $VIDTHEQUE_WHISPER_ASSETS and the installed assets
 * that holds file name; caller frees. NULL when none does. */
static char *find_asset(const char *ckpt_dir, const char *name)
{
    const char *env = getenv("VIDTHEQUE_WHISPER_ASSETS");
    const char *dirs[3] = {ckpt_dir, env && *env ? env : NULL, VT_WHISPER_ASSETS_DIR};

    for (size_t i = 0; i < VT_ARRAY_LEN(dirs); i++) {
        char *p;

        if (!dirs[i])
            continue;
        p = vt_xasprintf("%s/%s", dirs[i], name);
        if (is_file(p))
            return p;
        free(p);
    }
    return NULL;
}

/* The vocabulary for a model of n_vocab tokens, one copy per worker. */
static int load_tokenizers(struct vt_stt_whisper *w, const char *ckpt_dir, int n_workers, char *err,
                           size_t errlen)
{
    int n_vocab = vt_whisper_model_dims(w->model)->n_vocab;
    const char *name = w->english_only ? "gpt2.tiktoken" : "multilingual.tiktoken";
    int n_lang = n_vocab - N_VOCAB_NO_LANG - (w->english_only ? 0 : 1);
    char *path = only_tiktoken(ckpt_dir);
    int rc = 0;

    if (n_lang < 0 || n_lang > VT_WHISPER_MAX_LANGUAGES)
        return vt_err(err, errlen, VT_EINVAL,
                      "whisper: a vocabulary of %d tokens is not Whisper's (%d languages)", n_vocab,
                      n_lang);
    if (!path)
        path = find_asset(ckpt_dir, name);
    if (!path)
        return vt_err(err, errlen, VT_ENOTFOUND,
                      "whisper: no %s beside the model, in $VIDTHEQUE_WHISPER_ASSETS or in %s",
                      name, VT_WHISPER_ASSETS_DIR);
    w->tok = vt_xcalloc((size_t)n_workers, sizeof(*w->tok));
    for (int i = 0; i < n_workers && !rc; i++) {
        rc = vt_tiktoken_load(path, n_lang, &w->tok[i], err, errlen);
        if (!rc)
            w->n_tok++;
    }
    if (!rc && (int)vt_tiktoken_n_vocab(w->tok[0]) != n_vocab)
        rc = vt_err(err, errlen, VT_EINVAL, "whisper: '%s' gives %zu tokens, the model has %d",
                    path, vt_tiktoken_n_vocab(w->tok[0]), n_vocab);
    free(path);
    return rc;
}

int vt_stt_whisper_open(const char *path, int n_workers, int n_threads, struct vt_stt_whisper **out,
                        char *err, size_t errlen)
{
    struct vt_stt_whisper *w = vt_xcalloc(1, sizeof(*w));
    char *dir = NULL, *mel = NULL;
    int rc;

    *out = NULL;
    if (n_workers < 1 || n_workers > 64) {
        rc = vt_err(err, errlen, VT_EINVAL, "'%d': bad stt thread count", n_workers);
        goto out;
    }
    rc = vt_whisper_model_open(path, n_threads, &w->model, err, errlen);
    if (rc)
        goto out;
    w->english_only = vt_whisper_model_dims(w->model)->n_vocab == N_VOCAB_ENGLISH;
    dir = checkpoint_dir(path);
    rc = load_tokenizers(w, dir, n_workers, err, errlen);
    if (rc)
        goto out;
    mel = find_asset(dir, "mel_filters.npz");
    if (!mel) {
        rc = vt_err(err, errlen, VT_ENOTFOUND,
                    "whisper: no mel_filters.npz beside the model, in $VIDTHEQUE_WHISPER_ASSETS "
                    "or in %s",
                    VT_WHISPER_ASSETS_DIR);
        goto out;
    }
    rc = vt_whisper_mel_open(mel, vt_whisper_model_dims(w->model)->n_mels, &w->mel, err, errlen);
out:
    free(dir);
    free(mel);
    if (rc)
        vt_stt_whisper_free(w);
    else
        *out = w;
    return rc;
}

void vt_stt_whisper_free(struct vt_stt_whisper *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->n_tok; i++)
        vt_tiktoken_free(w->tok[i]);
    free(w->tok);
    vt_whisper_mel_free(w->mel);
    vt_whisper_model_free(w->model);
    free(w->prompt);
    free(w);
}

const char *vt_stt_whisper_format(const struct vt_stt_whisper *w)
{
    return vt_whisper_model_format(w->model);
}

/*
 * Containers tag streams with ISO 639-2 codes ("eng"), Whisper knows ISO 639-1 ("en"):
 * the languages of most talks (both the bibliographic and terminologic codes).
 */
static const char *const iso639_2[][2] = {
    {"eng", "en"}, {"fra", "fr"}, {"fre", "fr"}, {"deu", "de"}, {"ger", "de"}, {"spa", "es"},
    {"ita", "it"}, {"por", "pt"}, {"nld", "nl"}, {"dut", "nl"}, {"rus", "ru"}, {"zho", "zh"},
    {"chi", "zh"}, {"jpn", "ja"}, {"kor", "ko"}, {"ara", "ar"}, {"pol", "pl"}, {"tur", "tr"},
    {"swe", "sv"}, {"ukr", "uk"}, {"ces", "cs"}, {"cze", "cs"}, {"hin", "hi"}, {"ell", "el"},
    {"gre", "el"}, {"dan", "da"}, {"fin", "fi"}, {"nor", "no"}, {"heb", "he"}, {"hun", "hu"},
};

void vt_stt_whisper_set_language(struct vt_stt_whisper *w, const char *code)
{
    w->language[0] = 0;
    for (size_t i = 0; code && i < VT_ARRAY_LEN(iso639_2); i++)
        if (!strcmp(code, iso639_2[i][0]))
            code = iso639_2[i][1];
    if (code && vt_tiktoken_language(w->tok[0], code) >= 0)
        snprintf(w->language, sizeof(w->language), "%s", code);
}

/* Order of hint words in a prompt: the most frequent first, then by spelling. */
static int by_count(const void *a, const void *b)
{
    const struct vt_hint_word *x = *(const struct vt_hint_word *const *)a,
                              *y = *(const struct vt_hint_word *const *)b;

    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->text, y->text);
}

size_t vt_stt_whisper_set_prompt(struct vt_stt_whisper *w, const struct vt_stt_hints *h)
{
    /* decoding.py keeps the last n_text_ctx / 2 - 1 tokens of the prompt */
    size_t max_tokens = (size_t)vt_whisper_model_dims(w->model)->n_text_ctx / 2 - 1, used = 0,
           n = 0;
    const struct vt_hint_word **order;
    struct vt_sb sb = {0};

    free(w->prompt);
    w->prompt = NULL;
    if (!h || !h->n_words)
        return 0;
    order = vt_xcalloc(h->n_words, sizeof(*order));
    for (size_t i = 0; i < h->n_words; i++)
        order[i] = &h->words[i];
    qsort(order, h->n_words, sizeof(*order), by_count);
    /* the pre-split cuts " word" off on its own, so the tokens of the words add up */
    for (size_t i = 0; i < h->n_words; i++) {
        char *piece = vt_xasprintf(" %s", order[i]->text);
        const int32_t *ids;
        size_t k;

        if (!vt_tiktoken_encode(w->tok[0], piece, strlen(piece), &ids, &k) &&
            used + k <= max_tokens) {
            vt_sb_adds(&sb, piece);
            used += k;
            n++;
        }
        free(piece);
    }
    free(order);
    if (n)
        w->prompt = vt_xstrdup(sb.buf + 1);
    vt_sb_release(&sb);
    return n;
}

/* text without control bytes and invalid UTF-8, at most MAX_WORD_BYTES; caller frees. */
static char *clean_word(const char *text)
{
    size_t n = strlen(text), o = 0;
    char *t = vt_xmalloc(n + 1);

    for (size_t i = 0; i < n && o < MAX_WORD_BYTES;) {
        unsigned char c = (unsigned char)text[i];
        size_t len = c < 0x80             ? 1
                     : (c & 0xe0) == 0xc0 ? 2
                     : (c & 0xf0) == 0xe0 ? 3
                     : (c & 0xf8) == 0xf0 ? 4
                                          : 0;
        size_t k = 1;

        while (len && k < len && i + k < n && ((unsigned char)text[i + k] & 0xc0) == 0x80)
            k++;
        if (!len || k < len || (len > 1 && c < 0xc2) || o + len > MAX_WORD_BYTES) {
            i++; /* not a whole character */
            continue;
        }
        if (len > 1 || (c > 0x20 && c != 0x7f))
            memcpy(t + o, text + i, len), o += len;
        i += len;
    }
    t[o] = 0;
    return t;
}

struct sink {
    struct vt_word **words;
    size_t *n_words, *cap_words;
    double lo, hi;
    size_t max_words;
};

static int add_word(struct sink *s, const char *text, double start, double end, double conf,
                    char *err, size_t errlen)
{
    char *t = clean_word(text);
    struct vt_word *w;

    if (!*t) {
        free(t);
        return 0;
    }
    if (*s->n_words >= s->max_words) {
        free(t);
        return vt_err(err, errlen, VT_EIO,
                      "whisper: more than %zu words in %.1f s of audio: not a transcript",
                      s->max_words, s->hi - s->lo);
    }
    if (!isfinite(start) || !isfinite(end))
        start = end = s->lo;
    start = start < s->lo ? s->lo : start > s->hi ? s->hi : start;
    end = end < start ? start : end > s->hi ? s->hi : end;
    vt_grow((void **)s->words, s->cap_words, *s->n_words + 1, sizeof(**s->words));
    w = &(*s->words)[(*s->n_words)++];
    w->text = t;
    w->start_s = start;
    w->end_s = end;
    w->conf = !(conf >= 0) ? 0 : conf > 1 ? 1 : conf;
    return 0;
}

/* A segment without word timings: its text's words spread evenly over its span. */
static int add_spread(struct sink *s, const struct vt_whisper_segment *g, char *err, size_t errlen)
{
    size_t n = 0, k = 0;
    const char *p = g->text ? g->text : "";
    double conf = exp(g->avg_logprob), span;

    for (const char *q = p; *q;) {
        q += strspn(q, " \t\n");
        n += *q != 0;
        q += strcspn(q, " \t\n");
    }
    span = n ? (g->end - g->start) / (double)n : 0;
    while (*p) {
        size_t len;
        char *word;
        int rc;

        p += strspn(p, " \t\n");
        len = strcspn(p, " \t\n");
        if (!len)
            break;
        word = vt_xasprintf("%.*s", (int)len, p);
        rc = add_word(s, word, g->start + span * (double)k, g->start + span * (double)(k + 1), conf,
                      err, errlen);
        free(word);
        if (rc)
            return rc;
        k++;
        p += len;
    }
    return 0;
}

int vt_stt_whisper_segment(struct vt_stt_whisper *w, int worker, const int16_t *pcm, size_t n,
                           double seg_start_s, struct vt_word **words, size_t *n_words,
                           size_t *cap_words, char *err, size_t errlen)
{
    struct vt_whisper_opts o;
    struct vt_whisper_result r = {0};
    double dur_s = (double)n / RATE_HZ;
    struct sink s = {words,
                     n_words,
                     cap_words,
                     seg_start_s,
                     seg_start_s + dur_s,
                     *n_words + (size_t)(MAX_WORDS_PER_S * dur_s) + 8};
    float *x;
    int rc;

    if (worker < 0 || worker >= w->n_tok)
        return vt_err(err, errlen, VT_EINVAL, "whisper: no worker %d", worker);
    vt_whisper_opts_default(&o);
    o.language = w->english_only ? "en" : w->language[0] ? w->language : NULL;
    o.initial_prompt = w->prompt;
    o.word_timestamps = 1;
    x = vt_xmalloc((n ? n : 1) * sizeof(*x));
    for (size_t i = 0; i < n; i++)
        x[i] = (float)pcm[i] / 32768.0f;
    rc = vt_whisper_transcribe(w->model, w->tok[worker], w->mel, x, n, seg_start_s, &o, &r, err,
                               errlen);
    free(x);
    for (size_t i = 0; !rc && i < r.n; i++) {
        const struct vt_whisper_segment *g = &r.seg[i];

        if (!g->n_words) {
            rc = add_spread(&s, g, err, errlen);
            continue;
        }
        for (size_t k = 0; !rc && k < g->n_words; k++)
            rc = add_word(&s, g->words[k].text ? g->words[k].text : "", g->words[k].start,
                          g->words[k].end, g->words[k].prob, err, errlen);
    }
    vt_whisper_result_release(&r);
    return rc;
}
