/*
 * libFuzzer target for the TFLite reader and interpreter: any bytes are parsed; when they
 * parse (the seed, tests/fuzz/corpus_tflite/tiny, is the tiny model of
 * tests/unit/test_tflite.c, written with VT_TFLITE_WRITE_SEED=PATH run-unit tflite_tiny),
 * the model is run once on a constant picture, which must stay inside its buffers.
 *
 * fuzz-sources: lib/ml/tflite.c lib/base/util.c
 * fuzz-pkgs: jansson sqlite3
 */
#include "ml/tflite.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vt_tflite *m = NULL;
    char err[256];
    if (vt_tflite_parse(data, size, &m, err, sizeof(err)) != 0)
        return 0;
    int h, w, c;
    vt_tflite_input_shape(m, &h, &w, &c);
    /* a fuzzed model may be valid and huge: run only what finishes quickly */
    if (vt_tflite_macs(m) < (1u << 24) && (size_t)h * w * c < (1u << 20)) {
        float *in = calloc((size_t)h * w * c + 1, sizeof(float));
        struct vt_tflite_ctx *cx = vt_tflite_ctx_new(m);
        for (size_t i = 0; i < (size_t)h * w * c; i++)
            in[i] = (float)(i % 7) - 3.0f;
        vt_tflite_run(cx, in, -1);
        vt_tflite_ctx_free(cx);
        free(in);
    }
    vt_tflite_free(m);
    return 0;
}
