/*
 * libFuzzer target for the speech hints' word list (stt_hints.c): any bytes, cut into texts at
 * newlines as OCR lines and titles come, are read into words, finished, filtered, written as
 * an ARPA model whose counts must match what it holds, and every word is pronounced.
 * fuzz-sources: lib/speech/stt_hints.c lib/base/util.c
 * fuzz-pkgs: sqlite3
 * fuzz-libs: -lflite_cmulex -lflite
 */
#include "base/util.h"
#include "speech/stt_hints.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int odd(const char *w, void *user)
{
    (void)user;
    return strlen(w) % 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vt_stt_hints h = {0};
    struct vt_sb sb = {0};
    char *text = vt_xmalloc(size + 1), *p, *nl;
    size_t n1, n_pairs;

    memcpy(text, data, size);
    text[size] = 0;
    for (p = text; p; p = nl) {
        nl = strchr(p, '\n');
        if (nl)
            *nl++ = 0;
        vt_stt_hints_add(&h, p);
    }
    vt_stt_hints_finish(&h);
    for (size_t i = 0; i < h.n_words; i++) {
        char phones[256];
        size_t len = strlen(h.words[i].text);

        if (len < 2 || len > VT_HINT_WORD_MAX || h.words[i].count == 0 ||
            vt_stt_hints_find(&h, h.words[i].text) != (long)i)
            abort();
        vt_stt_hints_pronounce(h.words[i].text, phones, sizeof(phones));
    }
    if (size % 2)
        vt_stt_hints_filter(&h, odd, NULL);
    for (size_t k = 0; k < h.n_pairs; k++)
        if (h.pairs[k].a >= h.n_words || h.pairs[k].b >= h.n_words)
            abort();
    n_pairs = h.n_pairs;
    n1 = vt_stt_hints_arpa(&h, &sb);
    {
        char want[64];

        snprintf(want, sizeof(want), "ngram 1=%zu\nngram 2=%zu\n", n1, n_pairs);
        if (n1 != h.n_words + 2 || !strstr(sb.buf, want))
            abort();
    }
    vt_sb_release(&sb);
    vt_stt_hints_release(&h);
    free(text);
    return 0;
}
