/* lib/models.c: model names to repo ids and folders, and how a config's model is found. */
#include "harness.h"
#include "models.h"
#include "util.h"

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
