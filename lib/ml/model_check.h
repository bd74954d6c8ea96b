/*
 * Checking a model before it is called ready (issue 27 failure 7): a pull checks the
 * folder it downloaded before installing it (hub.c), `config set` checks the model a
 * key names before accepting it, and `models` says why a configured or pulled model
 * cannot be used. A check loads the model as its stage would (parse, shapes), and runs
 * one tiny input: the embedding models must give a finite vector, Whisper's decoder one
 * step of finite logits (on silent features: the encoder is not run, its weights are
 * checked finite when read).
 */
#ifndef VT_MODEL_CHECK_H
#define VT_MODEL_CHECK_H

#include "ml/models.h"

#include <stddef.h>

/*
 * Check the model of kind at path: a Model2Vec folder (text), a .tflite file or a folder
 * holding one (image; tensor NULL or "" for the default embedding tensor), a Whisper
 * folder or ggml file (speech: loaded, one decoder step run). 0 when usable; else the code of the
 * failing step with one line in err saying what failed.
 */
int vt_model_check(enum vt_model_kind kind, const char *path, const char *tensor, char *err,
                   size_t errlen);

#endif
