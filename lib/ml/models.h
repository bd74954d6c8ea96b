/*
 * Models kept in the library: LIBRARY/models/<folder>/, one folder per model pulled
 * from a hub (hub.h), each with a manifest.json saying where it came from (repo,
 * revision, commit, endpoint, pulled_at) and every file's size and SHA-256. This
 * module names, finds and lists them; it needs no network library, so the front
 * binary's `models` and `config` commands use it.
 *
 * Names: a Hugging Face repo id "owner/name", or a known short name
 * ("potion-base-8M" is "minishlab/potion-base-8M"; "mobilenet-v2-1.0-224" an image model). The
 * folder of repo "owner/name" is "owner--name" (repo ids cannot hold "--", so no two repos share a
 * folder).
 */
#ifndef VT_MODELS_H
#define VT_MODELS_H

#include <stddef.h>
#include <stdint.h>

#define VT_MODELS_MANIFEST "manifest.json"

/*
 * The repo id and folder name of a model name (a short name or "owner/name"). 0, or
 * VT_EINVAL with a message when name is neither.
 */
int vt_models_name(const char *name, char *repo, size_t repo_n, char *folder, size_t folder_n,
                   char *err, size_t errlen);

/*
 * Where the model a config names lives: name_or_path is a folder when it starts with
 * '/' or '.' (taken as it is), else a model name or a folder name under
 * LIBRARY/models/. The folder must hold model.safetensors and tokenizer.json.
 * 0 with the folder's path in folder; VT_ENOTFOUND (not pulled, or files missing) or
 * VT_EINVAL (not a name) with a message that says what to do.
 */
int vt_models_resolve(const char *lib_dir, const char *name_or_path, char *folder, size_t n,
                      char *err, size_t errlen);

/* One pulled model, as its manifest says; strings borrowed for the callback's duration. */
struct vt_model_info {
    const char *folder;    /* name of the folder under LIBRARY/models/ */
    const char *repo;      /* "" when the manifest is unreadable */
    const char *kind;      /* "text", "image" or "speech" ("text" for manifests older than kinds) */
    const char *revision;  /* as asked for at pull time, e.g. "main" */
    const char *commit;    /* the commit it resolved to */
    const char *pulled_at; /* UTC, ISO 8601 */
    int n_files;
    uint64_t bytes;
    const char *problem; /* NULL when every listed file is there with its size */
};

/*
 * Call fn for each model folder under LIBRARY/models/ (sorted by name; folders whose
 * name starts with '.' are work in progress and skipped); fn returns non-zero to stop.
 * 0 (also when there is no models folder), or VT_EIO with a message.
 */
int vt_models_list(const char *lib_dir, int (*fn)(void *user, const struct vt_model_info *m),
                   void *user, char *err, size_t errlen);

/*
 * Remove a pulled model (a model name or its folder name; never a path) from
 * LIBRARY/models/: it is renamed out of sight first, so no reader sees half of it.
 * 0 with its folder's path in folder; VT_ENOTFOUND when it is not there, VT_EINVAL for
 * a bad name, VT_EIO with a message.
 */
int vt_models_remove(const char *lib_dir, const char *name, char *folder, size_t n, char *err,
                     size_t errlen);

/* What a model is for: text embeddings (Model2Vec: model.safetensors + tokenizer.json),
 * image embeddings (one TFLite file) or speech (Whisper: config.json,
 * generation_config.json and model.safetensors, as transformers saves it). */
enum vt_model_kind { VT_MODEL_TEXT, VT_MODEL_IMAGE, VT_MODEL_SPEECH };

/* A known short name: its repo, its kind and, for an image model, the .tflite file the
 * pull fetches and the tensor frame_embed takes as the embedding. */
struct vt_model_known {
    const char *name, *repo;
    enum vt_model_kind kind;
    const char *file;   /* image: the model file in the repo */
    const char *tensor; /* image: the embedding tensor */
};

/* The known short names, ending with {NULL}. */
extern const struct vt_model_known vt_models_known[];

/* The known entry whose short name or repo id is name, or NULL. */
const struct vt_model_known *vt_models_known_find(const char *name);

/*
 * Where the image model a config names (frame_embed.model) lives: a path (with a '/', or
 * one that exists as given) is taken as it is (a .tflite file, or a folder holding one);
 * else a folder under LIBRARY/models/: the name itself, or a model name's folder (a known
 * short name or a repo id). 0 with the path in path and, in tensor, the embedding tensor
 * the pulled model's manifest names ("" when none); VT_ENOTFOUND (not pulled) or
 * VT_EINVAL (not a name) with a message that says what to do.
 */
int vt_models_resolve_image(const char *lib_dir, const char *name_or_path, char *path, size_t n,
                            char *tensor, size_t tensor_n, char *err, size_t errlen);

/*
 * Where the speech model a config names (stt.model) lives: a path (with a '/', or one that
 * exists as given) is taken as it is (a folder with config.json and model.safetensors, or
 * a whisper.cpp ggml file); else a pulled model's folder under LIBRARY/models/ (a known
 * short name like whisper-base.en, a repo id, or the folder's name). 0 with the path in
 * path, the name to show in name (the repo, or the path) and the pulled commit in commit
 * ("" when unknown); VT_ENOTFOUND (not pulled, incomplete) or VT_EINVAL (not a name)
 * with a message that says what to do.
 */
int vt_models_resolve_speech(const char *lib_dir, const char *name_or_path, char *path, size_t n,
                             char *name, size_t name_n, char *commit, size_t commit_n, char *err,
                             size_t errlen);

#endif
