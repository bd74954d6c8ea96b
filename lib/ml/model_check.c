/*
 * Loading a model and running one tiny input before it is trusted (model_check.h).
 */
#include "ml/model_check.h"

#include "base/util.h"
#include "ml/embed.h"
#include "ml/whisper_model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* side of the picture an image model is tried on */
#define PROBE_SIDE 32

/* Open spec, embed the probe (a text, or a grey picture) and close. */
static int try_embed(const struct vt_embed_spec *spec, char *err, size_t errlen)
{
    static const char *const texts[] = {"a small probe of the model"};
    static uint8_t grey[PROBE_SIDE * PROBE_SIDE * 3];
    struct vt_image img = {grey, PROBE_SIDE, PROBE_SIDE, PROBE_SIDE * 3};
    struct vt_embed *e = NULL;
    float *v;
    int rc = vt_embed_open(spec, &e, err, errlen);

    if (rc)
        return rc;
    memset(grey, 128, sizeof(grey));
    v = vt_xcalloc((size_t)vt_embed_dim(e), sizeof(*v));
    if (spec->kind == VT_EMBED_IMAGES)
        rc = vt_embed_images(e, &img, 1, v, err, errlen);
    else
        rc = vt_embed_texts(e, texts, 1, v, err, errlen);
    free(v);
    vt_embed_close(e);
    return rc;
}

/*
 * One decoder step of Whisper model w on silent features (zeros: the encoder, a full 30 s
 * window, costs seconds on the larger models and its weights were checked finite when
 * read): token 0's logits must be finite, which finite-but-huge decoder weights break.
 */
static int try_decode(const struct vt_whisper_model *w, char *err, size_t errlen)
{
    const struct vt_whisper_dims *d = vt_whisper_model_dims(w);
    float *features =
        vt_xcalloc((size_t)d->n_audio_ctx * (size_t)d->n_audio_state, sizeof(*features));
    float *logits = vt_xcalloc((size_t)d->n_vocab, sizeof(*logits));
    struct vt_whisper_decode_out out = {.logits = logits};
    struct vt_whisper_kv *kv = vt_whisper_kv_new(w, features);
    int32_t token = 0;
    int rc = kv ? vt_whisper_decode(kv, &token, 1, &out, err, errlen)
                : vt_err(err, errlen, VT_ENOMEM, "whisper: out of memory for one decoder step");

    for (int i = 0; !rc && i < d->n_vocab; i++)
        if (!isfinite(logits[i]))
            rc = vt_err(err, errlen, VT_EINVAL,
                        "whisper: one decoder step gives a logit that is not finite "
                        "(token %d): the weights overflow",
                        i);
    vt_whisper_kv_free(kv);
    free(logits);
    free(features);
    return rc;
}

int vt_model_check(enum vt_model_kind kind, const char *path, const char *tensor, char *err,
                   size_t errlen)
{
    struct vt_embed_spec spec = {.model = path, .threads = 1};
    struct vt_whisper_model *w = NULL;
    int rc;

    switch (kind) {
    case VT_MODEL_TEXT:
        spec.backend = "model2vec";
        return try_embed(&spec, err, errlen);
    case VT_MODEL_IMAGE:
        spec.kind = VT_EMBED_IMAGES;
        spec.backend = "tflite";
        spec.tensor = tensor && *tensor ? tensor : NULL;
        return try_embed(&spec, err, errlen);
    case VT_MODEL_SPEECH:
        rc = vt_whisper_model_open(path, 1, &w, err, errlen);
        if (!rc)
            rc = try_decode(w, err, errlen);
        vt_whisper_model_free(w);
        return rc;
    }
    return vt_err(err, errlen, VT_EINVAL, "model kind %d unknown", (int)kind);
}
