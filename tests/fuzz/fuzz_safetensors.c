/*
 * libFuzzer target for the safetensors reader: any bytes are parsed; when they parse,
 * every tensor is converted to float or int64, which must stay inside the buffer.
 *
 * fuzz-sources: lib/ml/safetensors.c lib/base/util.c
 * fuzz-pkgs: jansson sqlite3
 */
#include "base/util.h"
#include "ml/safetensors.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vt_safetensors *st = NULL;
    char err[256];
    if (vt_safetensors_parse(data, size, &st, err, sizeof(err)) != 0)
        return 0;
    for (size_t i = 0; i < st->n; i++) {
        const struct vt_st_tensor *t = &st->tensors[i];
        if (t->count > 1u << 20)
            continue;
        float *f = malloc((size_t)t->count * sizeof(*f) + 1);
        int64_t *v = malloc((size_t)t->count * sizeof(*v) + 1);
        vt_st_to_f32(t, f, err, sizeof(err));
        vt_st_to_i64(t, v, err, sizeof(err));
        free(f);
        free(v);
    }
    vt_safetensors_free(st);
    return 0;
}
