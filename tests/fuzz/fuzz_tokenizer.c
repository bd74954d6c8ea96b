/*
 * libFuzzer target for the tokenizer: the first byte chooses between parsing the rest
 * as a tokenizer.json (which must load or fail cleanly) and encoding it as text with
 * the test model's Unigram tokenizer and a small WordPiece one. Every id must name a
 * token.
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
            const char *probe = "Hello, world! caf\xc3\xa9 \xe2\x96\x81x";
            check(t, (const uint8_t *)probe, strlen(probe));
            vt_tokenizer_free(t);
        }
        return 0;
    }
    check(uni, data, size);
    check(wp, data, size);
    return 0;
}
