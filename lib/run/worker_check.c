/*
 * What a worker checks before its first claim: that this machine can read and write the
 * library's folder and its media and frames folders, and that the models the config names
 * for the worker's stages, and the ocr stage's language data, are here. Each problem is one line
 * (VT_LOG_ERROR for the folders, which no stage can do without: the worker does not start;
 * VT_LOG_WARN for a model, whose stage fails here with VT_EHERE and is retried by another worker).
 */
#include "run/worker_check.h"

#include "base/util.h"
#include "core/library.h"
#include "ml/models.h"
#include "model/stage_config.h"
#include "visual/ocr.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Folder sub of the library (made when missing) read and written here: 0, or 1 said. */
static int folder_here(struct vt_library *lib, const char *sub)
{
    char *p = sub ? vt_xasprintf("%s/%s", lib->dir, sub) : vt_xstrdup(lib->dir);
    char err[512];
    int bad = 0;

    if (sub && vt_mkdir_p(p, err, sizeof(err))) {
        vt_log(lib, VT_LOG_ERROR, "worker: cannot make the %s folder here: %s", sub, err);
        bad = 1;
    } else if (access(p, R_OK | W_OK | X_OK)) {
        vt_log(lib, VT_LOG_ERROR, "worker: cannot read and write the %s folder '%s' here: %s",
               sub ? sub : "library", p, strerror(errno));
        bad = 1;
    }
    free(p);
    return bad;
}

/* The model stage's config names is here: 0, or 1 said (a warning). */
static int model_here(struct vt_library *lib, const struct vt_config *cf, enum vt_stage_id stage)
{
    const char *b = vt_config_backend(cf, stage, NULL);
    char path[PATH_MAX], aux[256], commit[64], err[512];
    const char *m;
    int rc = 0;

    if (!b)
        return 0;
    if (stage == VT_STAGE_TEXT_EMBED && !strcmp(b, "model2vec")) {
        m = vt_config_get(cf, VT_KEY(TEXT_EMBED_MODEL));
        rc = vt_models_resolve(lib->dir, m, path, sizeof(path), err, sizeof(err));
    } else if (stage == VT_STAGE_STT && !strcmp(b, "whisper")) {
        m = vt_config_get(cf, VT_KEY(STT_MODEL));
        rc = vt_models_resolve_speech(lib->dir, m, path, sizeof(path), aux, sizeof(aux), commit,
                                      sizeof(commit), err, sizeof(err));
    } else if (stage == VT_STAGE_FRAME_EMBED && !strcmp(b, "tflite")) {
        m = vt_config_get(cf, VT_KEY(FRAME_EMBED_MODEL));
        rc = vt_models_resolve_image(lib->dir, m, path, sizeof(path), aux, sizeof(aux), err,
                                     sizeof(err));
    }
    if (rc)
        vt_log(lib, VT_LOG_WARN, "worker: %s: %s (its stage is left to other machines)",
               vt_stages[stage].name, err);
    return rc != 0;
}

/* stt.vad silero: its model file is readable here. */
static int vad_here(struct vt_library *lib, const struct vt_config *cf)
{
    const char *vad = vt_config_get(cf, VT_KEY(STT_VAD));
    const char *p = vt_config_get(cf, VT_KEY(STT_VAD_MODEL));

    if (!vad || strcmp(vad, "silero"))
        return 0;
    if (!p)
        p = VT_CONFIG_VAD_MODEL;
    if (!access(p, R_OK))
        return 0;
    vt_log(lib, VT_LOG_WARN, "worker: stt: stt.vad_model '%s' is not readable here: %s", p,
           strerror(errno));
    return 1;
}

/* ocr: Tesseract loads the language's data here (one engine, a fraction of a second). */
static int ocr_here(struct vt_library *lib)
{
    char err[512];
    struct vt_ocr *ocr = vt_ocr_new(1, VT_OCR_LANG, NULL, err, sizeof(err));

    if (ocr) {
        vt_ocr_free(ocr);
        return 0;
    }
    vt_log(lib, VT_LOG_WARN,
           "worker: ocr: %s (an ocr run here fails and waits for another machine)", err);
    return 1;
}

int vt_worker_check_here(struct vt_library *lib, unsigned set)
{
    static const enum vt_stage_id with_models[] = {VT_STAGE_STT, VT_STAGE_TEXT_EMBED,
                                                   VT_STAGE_FRAME_EMBED};
    struct vt_config *cf = NULL;
    char err[512];
    int bad = folder_here(lib, NULL);

    bad += folder_here(lib, "media");
    bad += folder_here(lib, "frames");
    if (vt_config_load(lib->dir, &cf, err, sizeof(err))) {
        vt_log(lib, VT_LOG_ERROR, "worker: %s", err);
        return 1 + bad;
    }
    for (size_t i = 0; i < sizeof(with_models) / sizeof(*with_models); i++)
        if (set & (1u << with_models[i]))
            model_here(lib, cf, with_models[i]);
    if (set & (1u << VT_STAGE_STT))
        vad_here(lib, cf);
    if (set & (1u << VT_STAGE_OCR))
        ocr_here(lib);
    vt_config_free(cf);
    return bad;
}
