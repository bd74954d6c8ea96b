/* lib/ml/models.c: model names to repo ids and folders, and how a config's model is found. */
#include "base/util.h"
#include "harness.h"
#include "ml/models.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

VT_TEST(models_name)
{
    char repo[256], folder[256], err[256];

    CHECK_INT(vt_models_name("potion-base-8M", repo, sizeof(repo), folder, sizeof(folder), err,
                             sizeof(err)),
              0);
    CHECK_STR(repo, "minishlab/potion-base-8M");
    CHECK_STR(folder, "minishlab--potion-base-8M");
    CHECK_INT(vt_models_name("Some-Org/my.model_v2", repo, sizeof(repo), folder, sizeof(folder),
                             err, sizeof(err)),
              0);
    CHECK_STR(folder, "Some-Org--my.model_v2");
    static const char *const bad[] = {"",     "noslash", "a/b/c",  "../x",  "a/..",
                                      "a/.x", "a--b/c",  "a/b..c", "a/b c", "/abs",
                                      "a/",   "a/b\n",   "-a/b",   NULL};
    for (size_t i = 0; bad[i]; i++) {
        int rc =
            vt_models_name(bad[i], repo, sizeof(repo), folder, sizeof(folder), err, sizeof(err));
        if (rc != VT_EINVAL)
            fprintf(stderr, "  accepted '%s'\n", bad[i]);
        CHECK_INT(rc, VT_EINVAL);
    }
    CHECK(strstr(err, "is not a model name") != NULL);
    /* a result that does not fit is refused, not cut */
    CHECK_INT(vt_models_name("owner/name", repo, 5, folder, sizeof(folder), err, sizeof(err)),
              VT_EINVAL);
}

static void touch(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs("x", f);
    fclose(f);
}

VT_TEST(models_resolve)
{
    char lib[] = "/tmp/vt-models-XXXXXX", folder[PATH_MAX], err[512], dir[PATH_MAX];

    CHECK(mkdtemp(lib) != NULL);
    snprintf(dir, sizeof(dir), "%s/models/minishlab--potion-base-8M", lib);
    CHECK_INT(vt_mkdir_p(dir, err, sizeof(err)), 0);
    /* not complete yet */
    CHECK_INT(vt_models_resolve(lib, "potion-base-8M", folder, sizeof(folder), err, sizeof(err)),
              VT_ENOTFOUND);
    CHECK(strstr(err, "is incomplete") != NULL);
    touch(dir, "model.safetensors");
    touch(dir, "tokenizer.json");
    CHECK_INT(vt_models_resolve(lib, "potion-base-8M", folder, sizeof(folder), err, sizeof(err)),
              0);
    CHECK_STR(folder, dir);
    CHECK_INT(vt_models_resolve(lib, "minishlab/potion-base-8M", folder, sizeof(folder), err,
                                sizeof(err)),
              0);
    CHECK_STR(folder, dir);
    CHECK_INT(vt_models_resolve(lib, "minishlab--potion-base-8M", folder, sizeof(folder), err,
                                sizeof(err)),
              0);
    CHECK_STR(folder, dir);
    /* a folder path is taken as it is */
    CHECK_INT(vt_models_resolve("/nonexistent", dir, folder, sizeof(folder), err, sizeof(err)), 0);
    CHECK_STR(folder, dir);
    CHECK_INT(
        vt_models_resolve(lib, "/nonexistent/model", folder, sizeof(folder), err, sizeof(err)),
        VT_ENOTFOUND);
    CHECK_INT(vt_models_resolve(lib, "other/model", folder, sizeof(folder), err, sizeof(err)),
              VT_ENOTFOUND);
    CHECK(strstr(err, "vidtheque models pull other/model") != NULL);
    CHECK_INT(vt_models_resolve(lib, "no good", folder, sizeof(folder), err, sizeof(err)),
              VT_EINVAL);
    CHECK_INT(vt_models_resolve(lib, "", folder, sizeof(folder), err, sizeof(err)), VT_EINVAL);
    CHECK_INT(vt_models_resolve(lib, "x--..", folder, sizeof(folder), err, sizeof(err)), VT_EINVAL);
    vt_rm_rf(lib);
}

VT_TEST(models_resolve_image)
{
    char lib[] = "/tmp/vt-imodels-XXXXXX", path[PATH_MAX], tensor[64], err[512], dir[PATH_MAX],
         mpath[PATH_MAX + 32];
    const struct vt_model_known *k = vt_models_known_find("mobilenet-v2-1.0-224");

    CHECK(k && k->kind == VT_MODEL_IMAGE && k->file && k->tensor);
    CHECK(vt_models_known_find("litert-community/MobileNet-v2") == k);
    CHECK(vt_models_known_find("potion-base-8M")->kind == VT_MODEL_TEXT);
    CHECK(vt_models_known_find("nobody/nothing") == NULL);
    CHECK(mkdtemp(lib) != NULL);
    /* paths are taken as they are, existing or not (the backend says what is wrong) */
    CHECK_INT(vt_models_resolve_image(lib, "/no/such.tflite", path, sizeof(path), tensor,
                                      sizeof(tensor), err, sizeof(err)),
              0);
    CHECK_STR(path, "/no/such.tflite");
    CHECK_STR(tensor, "");
    /* a known name not pulled: what to do */
    CHECK_INT(vt_models_resolve_image(lib, "mobilenet-v2-1.0-224", path, sizeof(path), tensor,
                                      sizeof(tensor), err, sizeof(err)),
              VT_ENOTFOUND);
    CHECK(strstr(err, "run 'vidtheque models pull mobilenet-v2-1.0-224'") != NULL);
    CHECK_INT(vt_models_resolve_image(lib, "not a name", path, sizeof(path), tensor, sizeof(tensor),
                                      err, sizeof(err)),
              VT_EINVAL);
    /* pulled: by short name, repo id and folder name; the manifest's tensor */
    snprintf(dir, sizeof(dir), "%s/models/litert-community--MobileNet-v2", lib);
    CHECK_INT(vt_mkdir_p(dir, err, sizeof(err)), 0);
    snprintf(mpath, sizeof(mpath), "%s/manifest.json", dir);
    FILE *f = fopen(mpath, "w");
    fputs("{\"kind\": \"image\", \"tensor\": \"MobilenetV2/Logits/AvgPool\"}", f);
    fclose(f);
    static const char *const names[] = {"mobilenet-v2-1.0-224", "litert-community/MobileNet-v2",
                                        "litert-community--MobileNet-v2"};
    for (size_t i = 0; i < 3; i++) {
        CHECK_INT(vt_models_resolve_image(lib, names[i], path, sizeof(path), tensor, sizeof(tensor),
                                          err, sizeof(err)),
                  0);
        CHECK_STR(path, dir);
        CHECK_STR(tensor, "MobilenetV2/Logits/AvgPool");
    }
    /* a manifest's tensor that does not fit, or is not a plain name, is none */
    f = fopen(mpath, "w");
    fputs("{\"tensor\": \"a\\nb\"}", f);
    fclose(f);
    CHECK_INT(vt_models_resolve_image(lib, names[0], path, sizeof(path), tensor, sizeof(tensor),
                                      err, sizeof(err)),
              0);
    CHECK_STR(tensor, "");
    CHECK_INT(
        vt_models_resolve_image(lib, names[0], path, sizeof(path), tensor, 4, err, sizeof(err)), 0);
    CHECK_STR(tensor, "");
    /* a folder copied under models/ by its own name */
    snprintf(dir, sizeof(dir), "%s/models/mine", lib);
    CHECK_INT(vt_mkdir_p(dir, err, sizeof(err)), 0);
    CHECK_INT(vt_models_resolve_image(lib, "mine", path, sizeof(path), tensor, sizeof(tensor), err,
                                      sizeof(err)),
              0);
    CHECK_STR(path, dir);
    vt_rm_rf(lib);
}

VT_TEST(models_resolve_speech)
{
    char lib[] = "/tmp/vt-models-XXXXXX", path[PATH_MAX], name[PATH_MAX], commit[64], err[512],
         dir[PATH_MAX + 32], man[PATH_MAX + 64];

    CHECK(mkdtemp(lib) != NULL);
    CHECK_STR(vt_models_known_find("whisper-base.en")->repo, "openai/whisper-base.en");
    CHECK_INT(vt_models_known_find("distil-large-v3")->kind, VT_MODEL_SPEECH);
    snprintf(dir, sizeof(dir), "%s/models/openai--whisper-base.en", lib);
    CHECK_INT(vt_mkdir_p(dir, err, sizeof(err)), 0);
    CHECK_INT(vt_models_resolve_speech(lib, "whisper-base.en", path, sizeof(path), name,
                                       sizeof(name), commit, sizeof(commit), err, sizeof(err)),
              VT_ENOTFOUND);
    CHECK(strstr(err, "lacks config.json or model.safetensors") != NULL);
    touch(dir, "model.safetensors");
    touch(dir, "config.json");
    snprintf(man, sizeof(man), "%s/manifest.json", dir);
    CHECK_INT(
        vt_write_file_atomic(man, "{\"commit\": \"0123456789abcdef0123\"}", 34, err, sizeof(err)),
        0);
    CHECK_INT(vt_models_resolve_speech(lib, "whisper-base.en", path, sizeof(path), name,
                                       sizeof(name), commit, sizeof(commit), err, sizeof(err)),
              0);
    CHECK_STR(path, dir);
    CHECK_STR(name, "openai/whisper-base.en");
    CHECK_STR(commit, "0123456789abcdef0123");
    CHECK_INT(vt_models_resolve_speech(lib, "openai--whisper-base.en", path, sizeof(path), name,
                                       sizeof(name), commit, sizeof(commit), err, sizeof(err)),
              0);
    CHECK_STR(name, "openai/whisper-base.en");
    /* a path: a folder checked for its files, a file (ggml) taken as it is, no commit */
    CHECK_INT(vt_models_resolve_speech(lib, dir, path, sizeof(path), name, sizeof(name), commit,
                                       sizeof(commit), err, sizeof(err)),
              0);
    CHECK_STR(name, dir);
    CHECK_STR(commit, "");
    snprintf(man, sizeof(man), "%s/config.json", dir);
    CHECK_INT(vt_models_resolve_speech(lib, man, path, sizeof(path), name, sizeof(name), commit,
                                       sizeof(commit), err, sizeof(err)),
              0);
    CHECK_INT(vt_models_resolve_speech(lib, "whisper-small", path, sizeof(path), name, sizeof(name),
                                       commit, sizeof(commit), err, sizeof(err)),
              VT_ENOTFOUND);
    CHECK(strstr(err, "vidtheque models pull whisper-small") != NULL);
    CHECK_INT(vt_models_resolve_speech(lib, "/nonexistent/ggml.bin", path, sizeof(path), name,
                                       sizeof(name), commit, sizeof(commit), err, sizeof(err)),
              VT_ENOTFOUND);
    CHECK_INT(vt_models_resolve_speech(lib, "no good", path, sizeof(path), name, sizeof(name),
                                       commit, sizeof(commit), err, sizeof(err)),
              VT_EINVAL);
    vt_rm_rf(lib);
}
