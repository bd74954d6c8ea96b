/*
 * Stand-ins for the Whisper network (ml/whisper_model.c) and transcription
 * (speech/whisper.c) while they are being written on other branches, so that the stt
 * stage's whisper backend builds and fails cleanly ("not built") until they land. Each
 * half compiles to nothing once its real file exists, and is weak besides; delete this
 * file when both have landed.
 */
#include "vidtheque.h"

#include <stdint.h>

#if !__has_include("ml/whisper_model.c")
#include "base/util.h"
#include "ml/whisper_model.h"

__attribute__((weak)) int vt_whisper_model_open(const char *path, int n_threads,
                                                struct vt_whisper_model **out, char *err,
                                                size_t errlen)
{
    *out = NULL;
    return vt_err(err, errlen, VT_EUNAVAIL, "whisper: '%s': the network is not built in", path);
}

__attribute__((weak)) void vt_whisper_model_free(struct vt_whisper_model *m)
{
}

__attribute__((weak)) const struct vt_whisper_dims *
vt_whisper_model_dims(const struct vt_whisper_model *m)
{
    static const struct vt_whisper_dims none;

    return &none;
}

__attribute__((weak)) const char *vt_whisper_model_format(const struct vt_whisper_model *m)
{
    return "none";
}
#endif

#if !__has_include("speech/whisper.c")
#include "base/util.h"
#include "speech/whisper.h"

__attribute__((weak)) void vt_whisper_opts_default(struct vt_whisper_opts *o)
{
    *o = (struct vt_whisper_opts){0};
}

__attribute__((weak)) void vt_whisper_result_release(struct vt_whisper_result *r)
{
}

__attribute__((weak)) int
vt_whisper_transcribe(const struct vt_whisper_model *model, struct vt_tiktoken *tok,
                      const struct vt_whisper_mel *mel, const float *pcm, size_t n, double t0,
                      const struct vt_whisper_opts *opts, struct vt_whisper_result *out, char *err,
                      size_t errlen)
{
    return vt_err(err, errlen, VT_EUNAVAIL, "whisper: the transcription is not built in");
}
#endif
