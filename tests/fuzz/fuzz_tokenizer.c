/*
 * libFuzzer target for the tokenizer: the first byte chooses between parsing the rest
 * as a tokenizer.json (which must load or fail cleanly), parsing it as a list of
 * normalizers ('[': spliced into a small Unigram tokenizer.json, so that mutations work
 * on the chains: corpus seeds chain-*), and encoding it as text with the test model's
 * Unigram tokenizer and a small WordPiece one. Every id must name a token; a tokenizer
 * that loads encodes a 64 KiB text into no more ids than its bounds allow
 * (VT_TOKENIZER_MAX_GROWTH times the text plus VT_TOKENIZER_MAX_ADDED), within the
 * run's memory limit.
 *
 * fuzz-sources: lib/ml/tokenizer.c lib/ml/unicode.c lib/base/util.c
 * fuzz-pkgs: jansson sqlite3
 */
#include "base/util.h"
#include "ml/tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct vt_tokenizer *uni, *wp;

static const char wp_json[] =
    "{\"normalizer\": {\"type\": \"BertNormalizer\"}, \"pre_tokenizer\": {\"type\": \"Sequence\","
    " \"pretokenizers\": [{\"type\": \"BertPreTokenizer\"}, {\"type\": \"Whitespace\"}]},"
    " \"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0, \"a\": 1, \"##b\": 2,"
    " \"\xc3\xa9t\xc3\xa9\": 3, \"##\xe4\xb8\xad\": 4}}}";

static void check(struct vt_tokenizer *t, const uint8_t *data, size_t size)
{
    const int32_t *ids;
    size_t n;
    vt_tokenizer_encode(t, (const char *)data, size, &ids, &n);
    for (size_t i = 0; i < n; i++)
        if (!vt_tokenizer_id_to_token(t, ids[i]))
            abort();
}

/* A loaded tokenizer: the probe and a 64 KiB text of letters and spaces, in bounds. */
static void check_loaded(struct vt_tokenizer *t)
{
    static char big[64 * 1024];
    const char *probe = "Hello, world! caf\xc3\xa9 \xe2\x96\x81x";
    const int32_t *ids;
    size_t n;

    check(t, (const uint8_t *)probe, strlen(probe));
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = i % 7 == 6 ? ' ' : "abcab"[i % 5];
    vt_tokenizer_encode(t, big, sizeof(big), &ids, &n);
    if (n > (size_t)VT_TOKENIZER_MAX_GROWTH * 3 * sizeof(big) + VT_TOKENIZER_MAX_ADDED)
        abort();
    if (vt_tokenizer_max_text(t) < VT_TOKENIZER_MIN_TEXT)
        abort();
}

/* data (after its '[') as the normalizers of a small Unigram tokenizer */
static void check_chain(const uint8_t *data, size_t size)
{
    static const char head[] = "{\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [";
    static const char tail[] = "}, \"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\":"
                               " \"\xe2\x96\x81\"}, \"model\": {\"type\": \"Unigram\", \"unk_id\":"
                               " 0, \"vocab\": [[\"<unk>\", 0], [\"a\", -1], [\"ab\", -1.5],"
                               " [\"\xe2\x96\x81\" \"a\", -1.2], [\"b\", -2]]}}";
    size_t len = strlen(head) + size + strlen(tail);
    char *json = malloc(len), err[256];
    struct vt_tokenizer *t = NULL;

    if (!json)
        abort();
    memcpy(json, head, strlen(head));
    memcpy(json + strlen(head), data, size);
    memcpy(json + strlen(head) + size, tail, strlen(tail));
    if (vt_tokenizer_parse(json, len, &t, err, sizeof(err)) == 0) {
        check_loaded(t);
        vt_tokenizer_free(t);
    }
    free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    if (!uni) {
        if (vt_tokenizer_load("tests/data/model2vec-test-vocab-quantized/tokenizer.json", &uni, err,
                              sizeof(err)) ||
            vt_tokenizer_parse(wp_json, strlen(wp_json), &wp, err, sizeof(err))) {
            fprintf(stderr, "fuzz_tokenizer: %s\n", err);
            abort();
        }
    }
    if (!size)
        return 0;
    if (data[0] == '{') {
        struct vt_tokenizer *t = NULL;
        if (vt_tokenizer_parse((const char *)data, size, &t, err, sizeof(err)) == 0) {
            check_loaded(t);
            vt_tokenizer_free(t);
        }
        return 0;
    }
    if (data[0] == '[') {
        check_chain(data + 1, size - 1);
        return 0;
    }
    check(uni, data, size);
    check(wp, data, size);
    return 0;
}
