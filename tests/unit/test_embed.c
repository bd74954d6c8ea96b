/*
 * Tests of the text embeddings (embed.h) and what they stand on: the Model2Vec backend
 * against upstream's expected vector (tests/data/model2vec-test-vocab-quantized, from
 * MinishLab/model2vec-rs), the tokenizer (Unigram on the test model, whose expected
 * tokens were worked out by an independent Python transcription of tokenizers' Unigram;
 * WordPiece on a tiny tokenizer.json written here), hostile safetensors files, and the
 * similarity facts of the coarse test model.
 */
#include "base/util.h"
#include "harness.h"
#include "ml/embed.h"
#include "ml/safetensors.h"
#include "ml/tokenizer.h"
#include "ml/unicode.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define M2V_DIR "tests/data/model2vec-test-vocab-quantized"

static struct vt_embed *open_m2v(void)
{
    struct vt_embed_spec spec = {.backend = "model2vec", .model = M2V_DIR};
    struct vt_embed *e = NULL;
    char err[256] = "";
    int rc = vt_embed_open(&spec, &e, err, sizeof(err));
    if (rc)
        fprintf(stderr, "  open: %s\n", err);
    CHECK_INT(rc, 0);
    return e;
}

static double dot(const float *a, const float *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

VT_TEST(embed_m2v_hello_x1000_matches_upstream)
{
    struct vt_embed *e = open_m2v();
    if (!e)
        return;
    CHECK_INT(vt_embed_dim(e), 64);
    CHECK_STR(vt_embed_model(e), "model2vec model2vec-test-vocab-quantized (64 d)");
    CHECK(strncmp(vt_embed_id(e), "model2vec:", 10) == 0 && strlen(vt_embed_id(e)) == 26);

    struct vt_sb sb = {0};
    for (int i = 0; i < 1000; i++) {
        if (i)
            vt_sb_addc(&sb, ' ');
        vt_sb_adds(&sb, "hello");
    }
    const char *texts[] = {sb.buf};
    float v[64];
    char err[256];
    CHECK_INT(vt_embed_texts(e, texts, 1, v, err, sizeof(err)), 0);

    json_error_t jerr;
    json_t *exp = json_load_file(M2V_DIR "/expected-hello-x1000.json", 0, &jerr);
    json_t *row = json_array_get(exp, 0);
    CHECK_INT(json_array_size(row), 64);
    for (size_t i = 0; i < json_array_size(row) && i < 64; i++)
        CHECK_NEAR(v[i], json_number_value(json_array_get(row, i)), 1e-5);
    CHECK_NEAR(dot(v, v, 64), 1.0, 1e-5);
    json_decref(exp);
    vt_sb_release(&sb);
    vt_embed_close(e);
}

VT_TEST(embed_m2v_similarity_facts)
{
    struct vt_embed *e = open_m2v();
    if (!e)
        return;
    const char *texts[] = {"car",  "automobile", "banana", "",          "   ",   "[UNK]",
                           "film", "movie",      "doctor", "physician", "begin", "start"};
    float v[12 * 64];
    char err[256];
    CHECK_INT(vt_embed_texts(e, texts, 12, v, err, sizeof(err)), 0);
    /* more pairs it merges (a search-by-meaning fixture can use them), and one it does not */
    CHECK_NEAR(dot(v + 6 * 64, v + 7 * 64, 64), 1.0, 1e-5);
    CHECK_NEAR(dot(v + 8 * 64, v + 9 * 64, 64), 1.0, 1e-5);
    CHECK(dot(v + 10 * 64, v + 11 * 64, 64) < 0.5);
    /* the coarse test model gives car and automobile one vector, banana another */
    CHECK_NEAR(dot(v, v + 64, 64), 1.0, 1e-5);
    CHECK(dot(v, v + 128, 64) < 0.9);
    /* no token: all zero */
    for (int t = 3; t <= 4; t++)
        CHECK_NEAR(dot(v + t * 64, v + t * 64, 64), 0.0, 0.0);
    /* unknown tokens are dropped, the rest counts: "[UNK]" is punctuation and "unk" */
    CHECK_NEAR(dot(v + 5 * 64, v + 5 * 64, 64), 1.0, 1e-5);
    vt_embed_close(e);
}

VT_TEST(embed_open_errors)
{
    struct vt_embed *e = NULL;
    char err[256] = "";
    struct vt_embed_spec spec = {.backend = "model2vec", .model = "tests/data/no-such-model"};
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_ENOTFOUND);
    CHECK(strstr(err, "no-such-model") != NULL);
    spec.backend = "word2vec";
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "word2vec") != NULL);
    spec.backend = "model2vec";
    spec.model = "tests/unit"; /* a folder without a model */
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_ENOTFOUND);
    CHECK(e == NULL);
}

/* One dispatcher for both kinds: each kind's messages as the two interfaces had them. */
VT_TEST(embed_open_errors_by_kind)
{
    struct vt_embed *e = NULL;
    char err[256] = "";
    struct vt_embed_spec spec = {.backend = ""};
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "embedding backend not set");
    spec.kind = VT_EMBED_IMAGES;
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "image embedding backend not set");
    spec.backend = "model2vec";
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "image embedding backend 'model2vec' unknown (tflite or openai)");
    spec = (struct vt_embed_spec){.backend = "tflite", .model = "tests/unit"};
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    CHECK_STR(err, "embedding backend 'tflite' unknown (model2vec or openai)");
    spec.kind = (enum vt_embed_kind)7;
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), VT_EINVAL);
    CHECK(e == NULL);

    /* a text handle embeds no picture */
    spec = (struct vt_embed_spec){.backend = "model2vec", .model = M2V_DIR};
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), 0);
    if (!e)
        return;
    uint8_t px[3] = {0, 0, 0};
    struct vt_image im = {px, 1, 1, 3};
    float v[64];
    CHECK(vt_embed_has_texts(e));
    CHECK_INT(vt_embed_images(e, &im, 1, v, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "cannot embed images") != NULL);
    vt_embed_close(e);
}

VT_TEST(embed_vec_normalize)
{
    float v[3] = {3, 0, 4}, z[2] = {0, 0};
    vt_vec_normalize(v, 3);
    CHECK_NEAR(v[0], 0.6, 1e-6);
    CHECK_NEAR(v[2], 0.8, 1e-6);
    vt_vec_normalize(z, 2);
    CHECK(z[0] == 0 && z[1] == 0);
}

/* ---- tokenizer ---- */

static void check_ids(struct vt_tokenizer *t, const char *text, const int32_t *want, size_t nwant)
{
    const int32_t *ids;
    size_t n;
    vt_tokenizer_encode(t, text, strlen(text), &ids, &n);
    int same = n == nwant;
    for (size_t i = 0; same && i < n; i++)
        same = ids[i] == want[i];
    if (!same) {
        fprintf(stderr, "  tokens of \"%s\":", text);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, " %d(%s)", ids[i], vt_tokenizer_id_to_token(t, ids[i]));
        fprintf(stderr, "\n");
    }
    CHECK(same);
}

#define IDS(...) (const int32_t[]){__VA_ARGS__}, sizeof((const int32_t[]){__VA_ARGS__}) / 4

VT_TEST(tokenizer_unigram_test_model)
{
    struct vt_tokenizer *t = NULL;
    char err[256] = "";
    CHECK_INT(vt_tokenizer_load(M2V_DIR "/tokenizer.json", &t, err, sizeof(err)), 0);
    if (!t)
        return;
    CHECK_INT(vt_tokenizer_vocab_size(t), 29524);
    CHECK_INT(vt_tokenizer_unk_id(t), 1);
    CHECK_INT(vt_tokenizer_median_token_len(t), 9);
    CHECK_INT(vt_tokenizer_token_to_id(t, "\xe2\x96\x81hello"), 6594);
    check_ids(t, "hello", IDS(6594));
    check_ids(t, "Hello, World!", IDS(6594, 13, 1091, 2));
    check_ids(t, "unbelievably tokenization", IDS(60, 26700, 19808, 12333, 5323, 18206, 2991));
    check_ids(t,
              "Caf\xc3\xa9 na\xc3\xafve \xc3\x89"
              "COLE",
              IDS(6670, 14745, 11433));
    check_ids(t, "car automobile banana", IDS(1484, 8937, 14214));
    check_ids(t, "a\tb\nc", IDS(40, 41, 42));
    check_ids(t, "The quick brown fox jumps over the lazy dog.",
              IDS(999, 3250, 1831, 3421, 13525, 1061, 999, 12973, 2901, 15));
    check_ids(t, "x\xe2\x86\x92y", IDS(63, 29115, 1103));
    /* Straße, Москва */
    check_ids(t,
              "Stra\xc3\x9f"
              "e \xd0\x9c\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0",
              IDS(1360, 26809, 194, 13152, 28749, 22927, 24531, 9262));
    /* nothing left after normalizing; invalid UTF-8 and controls vanish */
    check_ids(t, "  \t ", (const int32_t[]){0}, 0);
    check_ids(t, "\xff\x01hello\xc3", IDS(6594));
    /* invalid bytes grow the text threefold (U+FFFD) before being dropped */
    check_ids(t, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff hello hello hello hello",
              IDS(6594, 6594, 6594, 6594));
    vt_tokenizer_free(t);
}

static const char wordpiece_json[] =
    "{\"normalizer\": {\"type\": \"BertNormalizer\", \"clean_text\": true,"
    " \"handle_chinese_chars\": true, \"strip_accents\": null, \"lowercase\": true},"
    " \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"},"
    " \"added_tokens\": [{\"id\": 0, \"content\": \"[UNK]\"}],"
    " \"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\","
    " \"continuing_subword_prefix\": \"##\", \"max_input_chars_per_word\": 12,"
    " \"vocab\": {\"[UNK]\": 0, \"un\": 1, \"##aff\": 2, \"##able\": 3, \"play\": 4,"
    " \"##ing\": 5, \"!\": 6, \"cafe\": 7, \"a\": 8, \"##ff\": 9, \"\xe4\xb8\xad\": 10}}}";

VT_TEST(tokenizer_wordpiece)
{
    struct vt_tokenizer *t = NULL;
    char err[256] = "";
    CHECK_INT(vt_tokenizer_parse(wordpiece_json, strlen(wordpiece_json), &t, err, sizeof(err)), 0);
    if (!t) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK_INT(vt_tokenizer_unk_id(t), 0);
    /* greedy longest match: un ##aff ##able; playing -> play ##ing; "!" split off */
    check_ids(t, "Unaffable playing!", IDS(1, 2, 3, 4, 5, 6));
    /* accents stripped with lowercase; a word with no full match is one [UNK] */
    check_ids(t, "CAF\xc3\x89 unplay", IDS(7, 0));
    /* longer than max_input_chars_per_word: [UNK] */
    check_ids(t, "unaffableunaffable a", IDS(0, 8));
    /* CJK characters are split apart */
    check_ids(t, "\xe4\xb8\xad\xe4\xb8\xad", IDS(10, 10));
    vt_tokenizer_free(t);
}

VT_TEST(tokenizer_load_errors)
{
    struct vt_tokenizer *t = NULL;
    char err[256] = "";
    const char *bpe = "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}";
    CHECK_INT(vt_tokenizer_parse(bpe, strlen(bpe), &t, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "'BPE'") != NULL);
    const char *pre = "{\"pre_tokenizer\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\":"
                      " \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"a\", -1.0]]}}";
    CHECK_INT(vt_tokenizer_parse(pre, strlen(pre), &t, err, sizeof(err)), VT_EINVAL);
    if (!strstr(err, "'ByteLevel'"))
        fprintf(stderr, "  err: %s\n", err);
    CHECK(strstr(err, "'ByteLevel'") != NULL);
    const char *norm = "{\"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \"a+\"},"
                       " \"content\": \"b\"}, \"model\": {\"type\": \"Unigram\", \"unk_id\": 0,"
                       " \"vocab\": [[\"a\", -1.0]]}}";
    CHECK_INT(vt_tokenizer_parse(norm, strlen(norm), &t, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "a+") != NULL);
    const char *unk =
        "{\"model\": {\"type\": \"Unigram\", \"unk_id\": 5, \"vocab\": [[\"a\", 1]]}}";
    CHECK_INT(vt_tokenizer_parse(unk, strlen(unk), &t, err, sizeof(err)), VT_EINVAL);
    CHECK_INT(vt_tokenizer_parse("[1", 2, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(t == NULL);
}

/* A Unigram tokenizer.json over "a" and "b" with the normalizers norms (JSON list). */
static char *chain_json(const char *norms)
{
    return vt_xasprintf("{\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [%s]},"
                        " \"model\": {\"type\": \"Unigram\", \"unk_id\": 0,"
                        " \"vocab\": [[\"<unk>\", 0], [\"a\", -1.0], [\"b\", -1.0]]}}",
                        norms);
}

static int parse_chain(const char *norms, struct vt_tokenizer **t, char *err, size_t errlen)
{
    char *j = chain_json(norms);
    int rc = vt_tokenizer_parse(j, strlen(j), t, err, errlen);
    free(j);
    return rc;
}

/* n copies of item joined by commas */
static char *repeat_items(const char *item, size_t n)
{
    size_t len = strlen(item);
    char *s = vt_xmalloc(n * (len + 1) + 1);
    for (size_t i = 0; i < n; i++) {
        memcpy(s + i * (len + 1), item, len);
        s[i * (len + 1) + len] = ',';
    }
    s[n ? n * (len + 1) - 1 : 0] = 0;
    return s;
}

/* issue 27 failures 1 and 2: chains that blow a text up, or take long, are refused when
 * loaded, with one line naming the limit; a chain within the limits encodes a huge
 * text in bounded memory */
VT_TEST(tokenizer_chain_limits)
{
    struct vt_tokenizer *t = NULL;
    char err[256] = "";
    char *a256 = vt_xmalloc(257), *item;
    memset(a256, 'a', 256);
    a256[256] = 0;
    item = vt_xasprintf("{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": "
                        "\"%s\"}",
                        a256);
    char *four = repeat_items(item, 4);
    CHECK_INT(parse_chain(four, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(t == NULL);
    CHECK(strstr(err, "times longer (the limit is 64)") != NULL);
    free(four);
    char *one = repeat_items(item, 1);
    CHECK_INT(parse_chain(one, &t, err, sizeof(err)), VT_EINVAL);
    free(one);
    free(item);

    char *prep = repeat_items("{\"type\": \"Prepend\", \"prepend\": \"x\"}", 20000);
    CHECK_INT(parse_chain(prep, &t, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "more than 64 normalizers and pre-tokenizers") != NULL);
    free(prep);
    /* 64 Prepends of 256 bytes add 16 KiB: allowed */
    item = vt_xasprintf("{\"type\": \"Prepend\", \"prepend\": \"%s\"}", a256);
    prep = repeat_items(item, 64);
    CHECK_INT(parse_chain(prep, &t, err, sizeof(err)), 0);
    vt_tokenizer_free(t);
    t = NULL;
    free(prep);
    free(item);

    /* a at 8 x 8 = 64 times: allowed, and a 64 MiB text is cut to what fits */
    item = vt_xasprintf("{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": "
                        "\"aaaaaaaa\"}");
    char *two = repeat_items(item, 2);
    CHECK_INT(parse_chain(two, &t, err, sizeof(err)), 0);
    free(two);
    free(item);
    if (t) {
        size_t max = vt_tokenizer_max_text(t);
        CHECK(max >= VT_TOKENIZER_MIN_TEXT);
        CHECK(max * 64 * 3 <= VT_TOKENIZER_MAX_OUT);
        size_t big = 64u << 20;
        char *text = vt_xmalloc(big);
        memset(text, 'a', big);
        const int32_t *ids;
        size_t n;
        vt_tokenizer_encode(t, text, big, &ids, &n);
        CHECK_INT(n, max * 64);
        free(text);
        vt_tokenizer_free(t);
        t = NULL;
    }
    /* three Replace steps of 8: 512 times, refused */
    item = vt_xasprintf("{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": "
                        "\"aaaaaaaa\"}");
    char *three = repeat_items(item, 3);
    CHECK_INT(parse_chain(three, &t, err, sizeof(err)), VT_EINVAL);
    free(three);
    free(item);
    free(a256);
}

/* BERT_GROWTH in tokenizer.c: no code point grows past 3 bytes per input byte through
 * accent stripping (or Hangul decomposition), lowercasing, or the Chinese spaces */
VT_TEST(tokenizer_bert_growth_bound)
{
    size_t worst_num = 0, worst_den = 1;
    for (uint32_t cp = 0x80; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        size_t in = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4, out = 0;
        uint32_t cps[8];
        size_t ncp = 0;
        if (cp >= 0xAC00 && cp <= 0xD7A3) {
            cps[ncp++] = 0x1100;
            cps[ncp++] = 0x1161;
            cps[ncp++] = 0x11A8;
        } else if (vt_uc_strip_accents(cp)) {
            const char *st = vt_uc_strip_accents(cp);
            size_t n = strlen(st);
            for (size_t j = 0; j < n && ncp < 8;) {
                size_t k = vt_utf8_decode(st + j, n - j, &cps[ncp++]);
                j += k ? k : 1;
            }
        } else {
            cps[ncp++] = cp;
        }
        for (size_t j = 0; j < ncp; j++) {
            const char *lo = vt_uc_lower(cps[j]);
            uint32_t c = cps[j];
            out += lo ? strlen(lo) : c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        }
        out = out > in + 2 ? out : in + 2; /* spaces around a Chinese character */
        if (out * worst_den > worst_num * in) {
            worst_num = out;
            worst_den = in;
        }
    }
    if (worst_num > 3 * worst_den)
        fprintf(stderr, "  worst growth %zu/%zu\n", worst_num, worst_den);
    CHECK(worst_num <= 3 * worst_den);
}

/* ---- safetensors ---- */

/* A safetensors file with header text hdr and n data bytes (0x11 each), lying about
 * the header length by adding lie. */
static unsigned char *st_file(const char *hdr, size_t n, int64_t lie, size_t *len)
{
    size_t h = strlen(hdr);
    unsigned char *b = vt_xmalloc(8 + h + n);
    uint64_t hl = (uint64_t)((int64_t)h + lie);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(hl >> (8 * i));
    memcpy(b + 8, hdr, h);
    memset(b + 8 + h, 0x11, n);
    *len = 8 + h + n;
    return b;
}

static int st_try(const char *hdr, size_t n, int64_t lie, char *err, size_t errlen)
{
    size_t len;
    unsigned char *b = st_file(hdr, n, lie, &len);
    struct vt_safetensors *st = NULL;
    int rc = vt_safetensors_parse(b, len, &st, err, errlen);
    vt_safetensors_free(st);
    free(b);
    return rc;
}

VT_TEST(safetensors_hostile)
{
    char err[256];
    const char *good =
        "{\"a\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 16]}}";
    CHECK_INT(st_try(good, 16, 0, err, sizeof(err)), 0);
    /* truncated data */
    CHECK_INT(st_try(good, 12, 0, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "data_offsets") != NULL);
    /* header length past the file's end, and a huge one */
    CHECK_INT(st_try(good, 16, 100, err, sizeof(err)), VT_EINVAL);
    CHECK_INT(st_try(good, 16, (int64_t)1 << 62, err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "header") != NULL);
    /* offsets that lie about the size, run backwards or overlap */
    CHECK_INT(st_try("{\"a\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 12]}}",
                     16, 0, err, sizeof(err)),
              VT_EINVAL);
    CHECK_INT(st_try("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 4]}}", 16,
                     0, err, sizeof(err)),
              VT_EINVAL);
    CHECK_INT(st_try("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
                     " \"b\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [4, 12]}}",
                     16, 0, err, sizeof(err)),
              VT_EINVAL);
    CHECK(strstr(err, "overlap") != NULL);
    /* shape whose product overflows */
    CHECK_INT(st_try("{\"a\": {\"dtype\": \"F64\", \"shape\": [4294967296, 4294967296, 16],"
                     " \"data_offsets\": [0, 16]}}",
                     16, 0, err, sizeof(err)),
              VT_EINVAL);
    /* unknown dtype, bad JSON, too short */
    CHECK_INT(st_try("{\"a\": {\"dtype\": \"Q4\", \"shape\": [4], \"data_offsets\": [0, 16]}}", 16,
                     0, err, sizeof(err)),
              VT_EINVAL);
    CHECK(strstr(err, "Q4") != NULL);
    CHECK_INT(st_try("{\"a\": ", 16, 0, err, sizeof(err)), VT_EINVAL);
    struct vt_safetensors *st = NULL;
    CHECK_INT(vt_safetensors_parse("\x02\0\0", 3, &st, err, sizeof(err)), VT_EINVAL);
    CHECK(st == NULL);
}

VT_TEST(safetensors_convert)
{
    /* F16 1.0, -2.0, 65504, a subnormal; I32 -1; F64 0.5 */
    const char *hdr = "{\"h\": {\"dtype\": \"F16\", \"shape\": [4], \"data_offsets\": [0, 8]},"
                      " \"i\": {\"dtype\": \"I32\", \"shape\": [1], \"data_offsets\": [8, 12]},"
                      " \"d\": {\"dtype\": \"F64\", \"shape\": [], \"data_offsets\": [12, 20]},"
                      " \"__metadata__\": {\"format\": \"pt\"}}";
    size_t len;
    unsigned char *b = st_file(hdr, 20, 0, &len);
    unsigned char *d = b + 8 + strlen(hdr);
    const unsigned char data[20] = {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00, 0xff, 0xff,
                                    0xff, 0xff, 0,    0,    0,    0,    0,    0,    0xe0, 0x3f};
    memcpy(d, data, 20);
    struct vt_safetensors *st = NULL;
    char err[256] = "";
    CHECK_INT(vt_safetensors_parse(b, len, &st, err, sizeof(err)), 0);
    if (st) {
        float f[4];
        int64_t i;
        const struct vt_st_tensor *h = vt_safetensors_find(st, "h");
        CHECK(h && h->count == 4);
        if (h) {
            CHECK_INT(vt_st_to_f32(h, f, err, sizeof(err)), 0);
            CHECK_NEAR(f[0], 1.0, 0);
            CHECK_NEAR(f[1], -2.0, 0);
            CHECK_NEAR(f[2], 65504.0, 0);
            CHECK_NEAR(f[3], 5.960464477539063e-08, 1e-15);
            CHECK_INT(vt_st_to_i64(h, &i, err, sizeof(err)), VT_EINVAL);
        }
        const struct vt_st_tensor *ti = vt_safetensors_find(st, "i");
        CHECK(ti && vt_st_to_i64(ti, &i, err, sizeof(err)) == 0 && i == -1);
        const struct vt_st_tensor *td = vt_safetensors_find(st, "d");
        CHECK(td && td->ndim == 0 && td->count == 1);
        CHECK(td && vt_st_to_f32(td, f, err, sizeof(err)) == 0 && f[0] == 0.5f);
        CHECK(vt_safetensors_find(st, "__metadata__") == NULL);
    }
    vt_safetensors_free(st);
    free(b);
}

/* A Model2Vec model folder in /tmp holding the test tokenizer (tokenizer.json), for a
 * test to write model.safetensors (d->model) into: 0, or -1 with the failure checked. */
struct m2v_dir {
    char dir[32];
    char *model;
};

static int m2v_dir_make(struct m2v_dir *d)
{
    char err[256], *tok;
    int rc;

    snprintf(d->dir, sizeof(d->dir), "/tmp/vt-m2v-XXXXXX");
    d->model = NULL;
    if (!mkdtemp(d->dir)) {
        CHECK(0);
        return -1;
    }
    tok = vt_xasprintf("%s/tokenizer.json", d->dir);
    rc = vt_write_file_atomic(tok, wordpiece_json, strlen(wordpiece_json), err, sizeof(err));
    CHECK_INT(rc, 0);
    free(tok);
    d->model = vt_xasprintf("%s/model.safetensors", d->dir);
    return 0;
}

static void m2v_dir_free(struct m2v_dir *d)
{
    vt_rm_rf(d->dir);
    free(d->model);
}

/* A model folder whose model.safetensors lies: each is a clean open error. */
VT_TEST(embed_m2v_hostile_model)
{
    struct m2v_dir d;
    char err[256];
    if (m2v_dir_make(&d))
        return;
    struct {
        const char *hdr;
        size_t n;
        int rc;
    } cases[] = {
        /* fine: 11 tokens, 11 rows of 2 */
        {"{\"embeddings\": {\"dtype\": \"F32\", \"shape\": [11, 2], \"data_offsets\": [0, 88]}}",
         88, 0},
        /* too few rows for the vocabulary */
        {"{\"embeddings\": {\"dtype\": \"F32\", \"shape\": [5, 2], \"data_offsets\": [0, 40]}}", 40,
         VT_EINVAL},
        /* wrong dtype for embeddings */
        {"{\"embeddings\": {\"dtype\": \"I32\", \"shape\": [11, 2], \"data_offsets\": [0, 88]}}",
         88, VT_EINVAL},
        /* a mapping pointing past the rows */
        {"{\"embeddings\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 16]},"
         " \"mapping\": {\"dtype\": \"I64\", \"shape\": [11], \"data_offsets\": [16, 104]}}",
         104, VT_EINVAL},
        /* no embeddings tensor */
        {"{\"other\": {\"dtype\": \"F32\", \"shape\": [11, 2], \"data_offsets\": [0, 88]}}", 88,
         VT_EINVAL},
        /* truncated */
        {"{\"embeddings\": {\"dtype\": \"F32\", \"shape\": [11, 2], \"data_offsets\": [0, 88]}}",
         80, VT_EINVAL},
    };
    for (size_t c = 0; c < VT_ARRAY_LEN(cases); c++) {
        size_t len;
        unsigned char *b = st_file(cases[c].hdr, cases[c].n, 0, &len);
        memset(b + len - cases[c].n, 0, cases[c].n); /* zeros: finite floats, row 0 */
        if (c == 3)
            b[len - 8] = 7; /* last token maps to row 7 */
        CHECK_INT(vt_write_file_atomic(d.model, b, len, err, sizeof(err)), 0);
        free(b);
        struct vt_embed_spec spec = {.backend = "model2vec", .model = d.dir};
        struct vt_embed *e = NULL;
        err[0] = 0;
        int rc = vt_embed_open(&spec, &e, err, sizeof(err));
        if (rc != cases[c].rc)
            fprintf(stderr, "  case %zu: %s\n", c, err);
        CHECK_INT(rc, cases[c].rc);
        CHECK(rc == 0 || (e == NULL && err[0]));
        if (e) {
            float v[2];
            const char *texts[] = {"playing"};
            CHECK_INT(vt_embed_texts(e, texts, 1, v, err, sizeof(err)), 0);
            CHECK(v[0] == 0 && v[1] == 0);
        }
        vt_embed_close(e);
    }
    m2v_dir_free(&d);
}

/* issue 27 failure 8: finite-but-huge weights (3e38) overflow when a text's tokens are
 * summed; the vector is refused with the reason, never handed back */
VT_TEST(embed_nonfinite_vectors_refused)
{
    struct m2v_dir d;
    char err[256];
    if (m2v_dir_make(&d))
        return;
    size_t len;
    unsigned char *b = st_file(
        "{\"embeddings\": {\"dtype\": \"F32\", \"shape\": [11, 2], \"data_offsets\": [0, 88]}}", 88,
        0, &len);
    for (size_t i = 0; i < 22; i++) {
        float f = 3e38f;
        memcpy(b + len - 88 + i * 4, &f, 4);
    }
    CHECK_INT(vt_write_file_atomic(d.model, b, len, err, sizeof(err)), 0);
    free(b);
    struct vt_embed_spec spec = {.backend = "model2vec", .model = d.dir};
    struct vt_embed *e = NULL;
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), 0);
    if (e) {
        float v[4] = {0};
        const char *one[] = {"a"}, *two[] = {"a", "playing"};
        CHECK_INT(vt_embed_texts(e, one, 1, v, err, sizeof(err)), 0);
        CHECK(isfinite(v[0]) && isfinite(v[1]));
        err[0] = 0;
        CHECK_INT(vt_embed_texts(e, two, 2, v, err, sizeof(err)), VT_EINVAL);
        CHECK(strstr(err, "NaN or infinity (input 2 of 2)") != NULL);
    }
    vt_embed_close(e);
    m2v_dir_free(&d);
}

/* kB of a "Name:  N kB" line of /proc/self/status, or -1 */
static long status_kb(const char *name)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(name);

    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, name, n) && line[n] == ':')
            kb = strtol(line + n + 1, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

/* issue 27 failure 9: a Model2Vec model costs memory near its file's size, not the file
 * read plus every row decoded to floats (5 times an int8 file). Peak RSS growth while a
 * 64 MiB int8 model is opened and used, against the file's size; the peak is reset first
 * (/proc/self/clear_refs 5). */
VT_TEST(embed_m2v_memory_near_file)
{
    struct m2v_dir d;
    char err[256];
    size_t rows = 262144, dim = 256, data = rows * dim;
    if (m2v_dir_make(&d))
        return;
    char *hdr = vt_xasprintf("{\"embeddings\": {\"dtype\": \"I8\", \"shape\": [%zu, %zu],"
                             " \"data_offsets\": [0, %zu]}}",
                             rows, dim, data);
    size_t hlen = strlen(hdr);
    FILE *f = fopen(d.model, "wb");
    uint64_t le = hlen;
    CHECK(f != NULL);
    if (f) {
        CHECK(fwrite(&le, 8, 1, f) == 1 && fwrite(hdr, hlen, 1, f) == 1);
        CHECK(ftruncate(fileno(f), (off_t)(8 + hlen + data)) == 0); /* rows of zeros */
        fclose(f);
    }
    free(hdr);
    FILE *clear = fopen("/proc/self/clear_refs", "w");
    long before = status_kb("VmRSS");
    if (!clear || before < 0) {
        fprintf(stderr, "  no /proc/self/clear_refs: not measured\n");
    } else {
        fputs("5", clear);
        fclose(clear);
        clear = NULL;
        struct vt_embed_spec spec = {.backend = "model2vec", .model = d.dir};
        struct vt_embed *e = NULL;
        CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), 0);
        if (e) {
            float v[256];
            const char *texts[] = {"unaffable playing a cafe"};
            CHECK_INT(vt_embed_texts(e, texts, 1, v, err, sizeof(err)), 0);
        }
        long peak = status_kb("VmHWM");
        vt_embed_close(e);
        double ratio = (double)(peak - before) / (double)(data / 1024);
        if (ratio > 1.5)
            fprintf(stderr, "  peak RSS grew %ld kB for a file of %zu kB (%.2f times)\n",
                    peak - before, data / 1024, ratio);
        CHECK(ratio <= 1.5);
    }
    if (clear)
        fclose(clear);
    m2v_dir_free(&d);
}

/* Normalizers and pre-tokenizers the test model does not use, on tiny Unigram models
 * whose expected tokens follow from tokenizers' documented behaviour. */
VT_TEST(tokenizer_pipeline_variants)
{
    const char *j1 =
        "{\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFD\"},"
        " {\"type\": \"StripAccents\"}, {\"type\": \"Lowercase\"}, {\"type\": \"Replace\","
        " \"pattern\": {\"String\": \"-\"}, \"content\": \" \"}, {\"type\": \"Strip\","
        " \"strip_left\": true, \"strip_right\": true}]},"
        " \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\":"
        " \"WhitespaceSplit\"}, {\"type\": \"Metaspace\", \"replacement\": \"\xe2\x96\x81\","
        " \"prepend_scheme\": \"first\", \"split\": true}]},"
        " \"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"<unk>\", 0],"
        " [\"\xe2\x96\x81"
        "a\", -1], [\"b\", -1], [\"\xe2\x96\x81"
        "b\", -1], [\"ab\", -1.5],"
        " [\"\xe2\x96\x81"
        "ab\", -1]]}}";
    const char *j2 =
        "{\"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"\xe2\x96\x81\","
        " \"prepend_scheme\": \"always\", \"split\": true},"
        " \"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"<unk>\", 0],"
        " [\"\xe2\x96\x81x\", -1], [\"\xe2\x96\x81y\", -1], [\"x\", -1]]}}";
    const char *j3 = "{\"pre_tokenizer\": {\"type\": \"Whitespace\"},"
                     " \"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0, \"don\": 1,"
                     " \"'\": 2, \"t\": 3, \"?!\": 4, \"go\": 5}}}";
    struct vt_tokenizer *t = NULL;
    char err[256] = "";

    CHECK_INT(vt_tokenizer_parse(j1, strlen(j1), &t, err, sizeof(err)), 0);
    if (t) {
        /* " \xc3\x81" "b-b  AB " -> "ab b  ab" -> "\xe2\x96\x81ab" (first only), "b", "ab" */
        check_ids(t,
                  " \xc3\x81"
                  "b-b  AB ",
                  IDS(5, 2, 4));
        vt_tokenizer_free(t);
    }
    CHECK_INT(vt_tokenizer_parse(j2, strlen(j2), &t, err, sizeof(err)), 0);
    if (t) {
        check_ids(t, "x y", IDS(1, 2));
        /* "\xe2\x96\x81zz" has no piece: one fused unknown */
        check_ids(t, "x zz y", IDS(1, 0, 2));
        vt_tokenizer_free(t);
    }
    CHECK_INT(vt_tokenizer_parse(j3, strlen(j3), &t, err, sizeof(err)), 0);
    if (t) {
        /* \w+|[^\w\s]+ : don ' t ?! go */
        check_ids(t, "don't?! go", IDS(1, 2, 3, 4, 5));
        vt_tokenizer_free(t);
    }
}
