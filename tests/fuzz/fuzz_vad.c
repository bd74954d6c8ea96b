/*
 * libFuzzer target for the ggml VAD file reader: any bytes are parsed; when they parse,
 * every tensor is converted to float, which must stay inside the file, and the Silero
 * loader checks the header and tensors (a file that passed would run one window).
 *
 * fuzz-sources: lib/speech/vad.c lib/base/bytes.c lib/base/util.c
 * fuzz-pkgs: jansson sqlite3
 */
#include "speech/vad.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vt_vad_file *f = NULL;
    struct vt_vad *vad = NULL;
    char err[256];

    if (vt_vad_file_parse(data, size, &f, err, sizeof(err)) != 0)
        return 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        float *v = malloc(f->tensors[i].count * sizeof(*v) + 1);

        vt_ggml_to_f32(&f->tensors[i], v);
        free(v);
    }
    if (vt_vad_load(f, &vad, err, sizeof(err)) == 0) {
        struct vt_vad_state st;
        float x[VT_VAD_WINDOW] = {0};

        vt_vad_state_init(&st);
        vt_vad_window(vad, &st, x, VT_VAD_FRAMING_SILERO);
        vt_vad_free(vad);
    }
    vt_vad_file_free(f);
    return 0;
}
