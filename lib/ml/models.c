/*
 * Naming, finding, listing and removing the models pulled into the library (models.h).
 * Reads manifests with jansson (capped at 1 MiB) and stats files.
 */
#include "ml/models.h"

#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_MAX_BYTES (1024 * 1024)

/*
 * The image model: TensorFlow's float32 MobileNet v2 1.0 (TF-Slim, converted by
 * TensorFlow's converter, so CONV_2D, DEPTHWISE_CONV_2D, ADD, AVERAGE_POOL_2D, RESHAPE and
 * SOFTMAX), as the LiteRT community (formerly TFLite) hosts it on the hub; the embedding
 * is the pooled 1280 values before the classifier. Its 14,079,072 bytes are the float
 * weights of the 1001-class Slim model (3.5M parameters) and its graph, not a Keras
 * conversion (PAD, MEAN, FULLY_CONNECTED), which would be larger.
 */
const struct vt_model_known vt_models_known[] = {
    {"potion-base-2M", "minishlab/potion-base-2M", VT_MODEL_TEXT, NULL, NULL},
    {"potion-base-4M", "minishlab/potion-base-4M", VT_MODEL_TEXT, NULL, NULL},
    {"potion-base-8M", "minishlab/potion-base-8M", VT_MODEL_TEXT, NULL, NULL},
    {"potion-base-32M", "minishlab/potion-base-32M", VT_MODEL_TEXT, NULL, NULL},
    {"potion-retrieval-32M", "minishlab/potion-retrieval-32M", VT_MODEL_TEXT, NULL, NULL},
    {"potion-multilingual-128M", "minishlab/potion-multilingual-128M", VT_MODEL_TEXT, NULL, NULL},
    /* Whisper (openai's, as transformers converted them; distil-whisper's English ones) */
    {"whisper-tiny", "openai/whisper-tiny", VT_MODEL_SPEECH, NULL, NULL},
    {"whisper-tiny.en", "openai/whisper-tiny.en", VT_MODEL_SPEECH, NULL, NULL},
    {"whisper-base", "openai/whisper-base", VT_MODEL_SPEECH, NULL, NULL},
    {"whisper-base.en", "openai/whisper-base.en", VT_MODEL_SPEECH, NULL, NULL},
    {"whisper-small", "openai/whisper-small", VT_MODEL_SPEECH, NULL, NULL},
    {"whisper-small.en", "openai/whisper-small.en", VT_MODEL_SPEECH, NULL, NULL},
    {"distil-small.en", "distil-whisper/distil-small.en", VT_MODEL_SPEECH, NULL, NULL},
    {"distil-medium.en", "distil-whisper/distil-medium.en", VT_MODEL_SPEECH, NULL, NULL},
    {"distil-large-v3", "distil-whisper/distil-large-v3", VT_MODEL_SPEECH, NULL, NULL},
    {"mobilenet-v2-1.0-224", "litert-community/MobileNet-v2", VT_MODEL_IMAGE, "mobilenet_v2.tflite",
     "MobilenetV2/Logits/AvgPool"},
    {NULL, NULL, VT_MODEL_TEXT, NULL, NULL},
};

const struct vt_model_known *vt_models_known_find(const char *name)
{
    for (size_t i = 0; name && vt_models_known[i].name; i++)
        if (!strcmp(vt_models_known[i].name, name) || !strcmp(vt_models_known[i].repo, name))
            return &vt_models_known[i];
    return NULL;
}

/* One part of a repo id as the hub allows it: letters, digits, '-', '_', '.', at most 96,
 * neither starting nor ending with '-' or '.', no "--" or "..". */
static int part_ok(const char *s, size_t n)
{
    if (n == 0 || n > 96 || s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return 0;
        if (i && (c == '-' || c == '.') && s[i - 1] == c)
            return 0;
    }
    return 1;
}

int vt_models_name(const char *name, char *repo, size_t repo_n, char *folder, size_t folder_n,
                   char *err, size_t errlen)
{
    const char *r = name, *slash;

    for (size_t i = 0; vt_models_known[i].name; i++)
        if (!strcmp(vt_models_known[i].name, name))
            r = vt_models_known[i].repo;
    slash = strchr(r, '/');
    if (!slash || !part_ok(r, (size_t)(slash - r)) || !part_ok(slash + 1, strlen(slash + 1)))
        return vt_err(err, errlen, VT_EINVAL,
                      "'%s' is not a model name (a Hugging Face repo id like "
                      "minishlab/potion-base-8M, or a known short name like potion-base-8M)",
                      name);
    if ((size_t)snprintf(repo, repo_n, "%s", r) >= repo_n ||
        (size_t)snprintf(folder, folder_n, "%.*s--%s", (int)(slash - r), r, slash + 1) >= folder_n)
        return vt_err(err, errlen, VT_EINVAL, "'%s': model name too long", name);
    return 0;
}

static int is_file(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return !stat(path, &st) && S_ISREG(st.st_mode);
}

int vt_models_resolve(const char *lib_dir, const char *name_or_path, char *folder, size_t n,
                      char *err, size_t errlen)
{
    char repo[256], sub[256];
    const char *s = name_or_path;
    struct stat st;

    if (!s || !*s)
        return vt_err(err, errlen, VT_EINVAL, "no model named");
    if (s[0] == '/' || s[0] == '.') {
        if ((size_t)snprintf(folder, n, "%s", s) >= n)
            return vt_err(err, errlen, VT_EINVAL, "'%s': path too long", s);
        if (stat(folder, &st) || !S_ISDIR(st.st_mode))
            return vt_err(err, errlen, VT_ENOTFOUND, "model folder '%s' does not exist", s);
    } else {
        /* a folder name under models/ ("owner--name") is taken as it is */
        const char *dd = strchr(s, '/') ? NULL : strstr(s, "--");
        if (dd && part_ok(s, (size_t)(dd - s)) && part_ok(dd + 2, strlen(dd + 2))) {
            snprintf(sub, sizeof(sub), "%s", s);
        } else {
            int rc = vt_models_name(s, repo, sizeof(repo), sub, sizeof(sub), err, errlen);
            if (rc)
                return rc;
        }
        if ((size_t)snprintf(folder, n, "%s/models/%s", lib_dir, sub) >= n)
            return vt_err(err, errlen, VT_EINVAL, "'%s': path too long", s);
        if (stat(folder, &st) || !S_ISDIR(st.st_mode))
            return vt_err(err, errlen, VT_ENOTFOUND,
                          "model '%s' is not in the library (run 'vidtheque models pull %s')", s,
                          s);
    }
    if (!is_file(folder, "model.safetensors") || !is_file(folder, "tokenizer.json"))
        return vt_err(err, errlen, VT_ENOTFOUND,
                      "model '%s' is incomplete: '%s' lacks model.safetensors or tokenizer.json", s,
                      folder);
    return 0;
}

/* The embedding tensor a pulled model's manifest names into tensor ("" when none). */
static void manifest_tensor(const char *folder, char *tensor, size_t tn)
{
    char path[4096], *data = NULL;
    size_t len = 0;
    json_error_t je;

    tensor[0] = '\0';
    snprintf(path, sizeof(path), "%s/%s", folder, VT_MODELS_MANIFEST);
    if (vt_read_file_capped(path, "manifest", MANIFEST_MAX_BYTES, &data, &len, NULL, 0))
        return;
    json_t *root = json_loadb(data, len, 0, &je);
    const char *t = json_string_value(json_object_get(root, "tensor"));
    /* a manifest is a file like any other: a name of printable ASCII that fits, or none */
    size_t tl = t ? strlen(t) : 0;
    int ok = tl > 0 && tl < tn;
    for (size_t i = 0; ok && i < tl; i++)
        ok = t[i] > ' ' && t[i] < 127;
    if (ok)
        memcpy(tensor, t, tl + 1);
    json_decref(root);
    free(data);
}

int vt_models_resolve_image(const char *lib_dir, const char *name_or_path, char *path, size_t n,
                            char *tensor, size_t tensor_n, char *err, size_t errlen)
{
    char repo[256], sub[256];
    const char *s = name_or_path;
    struct stat st;

    tensor[0] = '\0';
    if (!s || !*s)
        return vt_err(err, errlen, VT_EINVAL, "no image model named");
    if (strchr(s, '/') && (s[0] == '/' || s[0] == '.' || !stat(s, &st) ||
                           vt_models_name(s, repo, sizeof(repo), sub, sizeof(sub), NULL, 0))) {
        /* a path: the backend says what is wrong with it */
        if ((size_t)snprintf(path, n, "%s", s) >= n)
            return vt_err(err, errlen, VT_EINVAL, "'%s': path too long", s);
        return 0;
    }
    if (!strchr(s, '/') && (!stat(s, &st) || !strcmp(s, ".") || !strcmp(s, ".."))) {
        if ((size_t)snprintf(path, n, "%s", s) >= n)
            return vt_err(err, errlen, VT_EINVAL, "'%s': path too long", s);
        return 0;
    }
    /* a folder under models/ by its own name (one copied there, or a pulled model's
     * "owner--name"), else a model name's */
    const char *dd = strchr(s, '/') ? NULL : strstr(s, "--");
    int folder_name = dd ? part_ok(s, (size_t)(dd - s)) && part_ok(dd + 2, strlen(dd + 2))
                         : part_ok(s, strlen(s));
    if (!strchr(s, '/') && folder_name &&
        (size_t)snprintf(path, n, "%s/models/%s", lib_dir, s) < n && !stat(path, &st) &&
        S_ISDIR(st.st_mode)) {
        manifest_tensor(path, tensor, tensor_n);
        return 0;
    }
    int rc = vt_models_name(s, repo, sizeof(repo), sub, sizeof(sub), err, errlen);
    if (rc)
        return rc;
    if ((size_t)snprintf(path, n, "%s/models/%s", lib_dir, sub) >= n)
        return vt_err(err, errlen, VT_EINVAL, "'%s': path too long", s);
    if (stat(path, &st) || !S_ISDIR(st.st_mode))
        return vt_err(err, errlen, VT_ENOTFOUND,
                      "image model '%s' is not in the library (run 'vidtheque models pull %s')", s,
                      s);
    manifest_tensor(path, tensor, tensor_n);
    return 0;
}

int vt_models_remove(const char *lib_dir, const char *name, char *folder, size_t n, char *err,
                     size_t errlen)
{
    char repo[256], sub[256];
    const char *dd = strchr(name, '/') ? NULL : strstr(name, "--");
    struct stat st;
    int rc;

    if (dd && part_ok(name, (size_t)(dd - name)) && part_ok(dd + 2, strlen(dd + 2))) {
        snprintf(sub, sizeof(sub), "%s", name);
    } else {
        rc = vt_models_name(name, repo, sizeof(repo), sub, sizeof(sub), err, errlen);
        if (rc)
            return rc;
    }
    if ((size_t)snprintf(folder, n, "%s/models/%s", lib_dir, sub) >= n)
        return vt_err(err, errlen, VT_EINVAL, "'%s': path too long", name);
    if (lstat(folder, &st) || !S_ISDIR(st.st_mode))
        return vt_err(err, errlen, VT_ENOTFOUND, "model '%s' is not in the library", name);
    char *parking = vt_xasprintf("%s/models/.partial", lib_dir);
    rc = vt_mkdir_p(parking, err, errlen);
    free(parking);
    if (rc)
        return rc;
    char *gone = vt_xasprintf("%s/models/.partial/%s.removed-%ld", lib_dir, sub, (long)getpid());
    vt_rm_rf(gone);
    if (rename(folder, gone)) {
        rc = vt_err(err, errlen, VT_EIO, "cannot remove '%s': %s", folder, strerror(errno));
    } else if (vt_rm_rf(gone)) {
        rc = vt_err(err, errlen, VT_EIO, "'%s' is out of the library but not all deleted", gone);
    }
    free(gone);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *jstr(json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "";
}

/* Fill m from the manifest of folder dir; problem says what is wrong, if anything. */
static void read_manifest(const char *dir, struct vt_model_info *m, json_t **root, char *problem,
                          size_t pn)
{
    char path[4096], err[512];
    char *data = NULL;
    size_t len = 0;
    json_error_t je;
    json_t *files;

    *root = NULL;
    snprintf(path, sizeof(path), "%s/%s", dir, VT_MODELS_MANIFEST);
    if (vt_read_file_capped(path, "manifest", MANIFEST_MAX_BYTES, &data, &len, err, sizeof(err))) {
        snprintf(problem, pn, "no readable manifest (%s)", err);
        m->problem = problem;
        return;
    }
    *root = json_loadb(data, len, 0, &je);
    free(data);
    if (!json_is_object(*root)) {
        snprintf(problem, pn, "manifest is not a JSON object");
        m->problem = problem;
        return;
    }
    m->repo = jstr(*root, "repo");
    m->kind = *jstr(*root, "kind") ? jstr(*root, "kind") : "text";
    m->revision = jstr(*root, "revision");
    m->commit = jstr(*root, "commit");
    m->pulled_at = jstr(*root, "pulled_at");
    files = json_object_get(*root, "files");
    if (!json_is_array(files)) {
        snprintf(problem, pn, "manifest lists no files");
        m->problem = problem;
        return;
    }
    for (size_t i = 0; i < json_array_size(files); i++) {
        json_t *f = json_array_get(files, i);
        const char *p = jstr(f, "path");
        json_int_t size = json_integer_value(json_object_get(f, "size"));
        struct stat st;

        m->n_files++;
        m->bytes += size > 0 ? (uint64_t)size : 0;
        snprintf(path, sizeof(path), "%s/%s", dir, p);
        if (m->problem)
            continue;
        if (!*p || strstr(p, "..") || stat(path, &st) || !S_ISREG(st.st_mode)) {
            snprintf(problem, pn, "'%s' is missing", p);
            m->problem = problem;
        } else if ((json_int_t)st.st_size != size) {
            snprintf(problem, pn, "'%s' has %lld bytes, the manifest says %lld", p,
                     (long long)st.st_size, (long long)size);
            m->problem = problem;
        }
    }
}

int vt_models_list(const char *lib_dir, int (*fn)(void *user, const struct vt_model_info *m),
                   void *user, char *err, size_t errlen)
{
    char *dir = vt_xasprintf("%s/models", lib_dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    DIR *d = opendir(dir);
    int rc = 0;

    if (!d) {
        if (errno != ENOENT)
            rc = vt_err(err, errlen, VT_EIO, "cannot read '%s': %s", dir, strerror(errno));
        free(dir);
        return rc;
    }
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        vt_grow((void **)&names, &cap, n + 1, sizeof(*names));
        names[n++] = vt_xstrdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        char *sub = vt_xasprintf("%s/%s", dir, names[i]);
        struct vt_model_info m = {names[i], "", "text", "", "", "", 0, 0, NULL};
        char problem[600];
        struct stat st;
        json_t *root = NULL;
        int stop;

        if (!stat(sub, &st) && S_ISDIR(st.st_mode)) {
            read_manifest(sub, &m, &root, problem, sizeof(problem));
            stop = fn(user, &m);
        } else {
            stop = 0;
        }
        json_decref(root);
        free(sub);
        if (stop)
            break;
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(dir);
    return rc;
}

/* The pulled commit of folder's manifest into commit ("" when none). */
static void manifest_commit(const char *folder, char *commit, size_t n)
{
    char path[4096];
    char *data = NULL;
    size_t len = 0;
    json_t *root;

    commit[0] = 0;
    snprintf(path, sizeof(path), "%s/%s", folder, VT_MODELS_MANIFEST);
    if (vt_read_file_capped(path, "manifest", MANIFEST_MAX_BYTES, &data, &len, NULL, 0))
        return;
    root = json_loadb(data, len, 0, NULL);
    free(data);
    snprintf(commit, n, "%s", jstr(root, "commit"));
    json_decref(root);
}

int vt_models_resolve_speech(const char *lib_dir, const char *name_or_path, char *path, size_t n,
                             char *name, size_t name_n, char *commit, size_t commit_n, char *err,
                             size_t errlen)
{
    const char *s = name_or_path;
    char repo[256], sub[256];
    struct stat st;

    commit[0] = 0;
    if (!s || !*s)
        return vt_err(err, errlen, VT_EINVAL, "stt.model: no model named");
    if (s[0] == '/' || s[0] == '.' || !stat(s, &st)) {
        if ((size_t)snprintf(path, n, "%s", s) >= n ||
            (size_t)snprintf(name, name_n, "%s", s) >= name_n)
            return vt_err(err, errlen, VT_EINVAL, "'%s': path too long", s);
        if (stat(path, &st))
            return vt_err(err, errlen, VT_ENOTFOUND, "stt.model '%s' does not exist", s);
        if (S_ISREG(st.st_mode))
            return 0; /* a ggml file */
    } else {
        /* a folder name under models/ ("owner--name") is taken as it is */
        const char *dd = strchr(s, '/') ? NULL : strstr(s, "--");
        if (dd && part_ok(s, (size_t)(dd - s)) && part_ok(dd + 2, strlen(dd + 2))) {
            snprintf(sub, sizeof(sub), "%s", s);
            snprintf(repo, sizeof(repo), "%.*s/%s", (int)(dd - s), s, dd + 2);
        } else {
            int rc = vt_models_name(s, repo, sizeof(repo), sub, sizeof(sub), err, errlen);
            if (rc)
                return rc;
        }
        if ((size_t)snprintf(path, n, "%s/models/%s", lib_dir, sub) >= n)
            return vt_err(err, errlen, VT_EINVAL, "'%s': path too long", s);
        if (stat(path, &st) || !S_ISDIR(st.st_mode))
            return vt_err(err, errlen, VT_ENOTFOUND,
                          "model '%s' is not in the library (run 'vidtheque models pull %s')", s,
                          s);
        snprintf(name, name_n, "%s", repo);
        manifest_commit(path, commit, commit_n);
    }
    if (!is_file(path, "config.json") || !is_file(path, "model.safetensors"))
        return vt_err(err, errlen, VT_ENOTFOUND,
                      "speech model '%s' is incomplete: '%s' lacks config.json or "
                      "model.safetensors",
                      s, path);
    return 0;
}
