/*
 * libFuzzer target for the reader of whisper.cpp's ggml checkpoints: any bytes are parsed;
 * when they parse, every vocabulary word is read, every tensor converted to float (which
 * must stay inside the file) and found by name, and the Whisper model check runs.
 *
 * fuzz-sources: lib/ml/whisper_ggml.c lib/base/bytes.c lib/base/util.c
 * fuzz-pkgs: jansson sqlite3
 */
#include "ml/whisper_ggml.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vt_wggml *f = NULL;
    char err[256];
    volatile size_t sum = 0; /* the words' last bytes are read */
    size_t len;

    if (vt_wggml_parse(data, size, &f, err, sizeof(err)) != 0)
        return 0;
    for (int32_t i = 0; i < f->n_words; i++) {
        const unsigned char *w = vt_wggml_word(f, i, &len);

        sum += len && w ? w[len - 1] : 0;
    }
    for (size_t i = 0; i < f->n_tensors; i++) {
        float *v = NULL;

        if (vt_wggml_tensor_f32(f, f->tensors[i].name, &v, NULL, err, sizeof(err)) == 0)
            free(v);
    }
    vt_wggml_check_whisper(f, err, sizeof(err));
    vt_wggml_free(f);
    return 0;
}
