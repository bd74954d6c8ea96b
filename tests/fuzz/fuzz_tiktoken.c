/*
 * libFuzzer target for Whisper's tokenizer: the first byte chooses between parsing the
 * rest as a .tiktoken vocabulary (which must load or fail cleanly, and then encode a
 * probe and round-trip it) and encoding it as text with the real multilingual
 * vocabulary, where decode(encode(text)) must give back the very bytes and every id
 * must name a token.
 *
 * fuzz-sources: lib/ml/tiktoken.c lib/ml/unicode.c lib/base/util.c
 * fuzz-pkgs: jansson sqlite3
 */
#include "ml/tiktoken.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct vt_tiktoken *multi;

static void round_trip(struct vt_tiktoken *t, const uint8_t *text, size_t size)
{
    const int32_t *ids;
    size_t n, len;
    char *back;
    if (vt_tiktoken_encode(t, (const char *)text, size, &ids, &n))
        abort();
    if (vt_tiktoken_decode(t, ids, n, 0, &back, &len))
        abort();
    if (len != size || memcmp(back, text, size) != 0)
        abort();
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    if (!multi && vt_tiktoken_load("tests/data/whisper-assets/multilingual.tiktoken", 99, &multi,
                                   err, sizeof(err))) {
        fprintf(stderr, "fuzz_tiktoken: %s\n", err);
        abort();
    }
    if (!size)
        return 0;
    if (data[0] == 'V') {
        struct vt_tiktoken *t = NULL;
        if (vt_tiktoken_parse((const char *)data + 1, size - 1, (int)(size % 101), &t, err,
                              sizeof(err)) == 0) {
            const char *probe = "Hello, world! caf\xc3\xa9 \xe4\xb8\xad 's  \n";
            round_trip(t, (const uint8_t *)probe, strlen(probe));
            vt_tiktoken_free(t);
        } else if (t || !err[0]) {
            abort();
        }
        return 0;
    }
    /* one long piece merges in quadratic time, as in tiktoken: 16 KiB keep runs fast */
    round_trip(multi, data, size < 16384 ? size : 16384);
    return 0;
}
