/*
 * `vidtheque models` (what the config chooses and which models are in the library) and
 * `models rm` (the front binary runs both); `models pull` is in cmd_models_pull.c.
 */
#include "base/util.h"
#include "cli/cli.h"
#include "ml/model_check.h"
#include "ml/models.h"
#include "model/stage.h"
#include "model/stage_config.h"
#include "search/floor.h"

#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* what print_model is given */
struct listing {
    const char *lib_dir;
    int count;
};

/* "ready: PATH" (0) when the model at path loads and runs on a tiny input
 * (model_check.h), else "not usable: " and what failed (-1). */
static int print_ready(enum vt_model_kind kind, const char *path, const char *tensor)
{
    char err[1024];

    if (vt_model_check(kind, path, tensor, err, sizeof(err))) {
        fputs("  not usable: ", stdout);
        cli_put_safe(stdout, err);
        return -1;
    }
    fputs("  ready: ", stdout);
    cli_put_safe(stdout, path);
    return 0;
}

/* NULL when the pulled model in folder loads and runs (an image model through its default
 * tensor, as the pull checked it: the tensor is the config's), else what failed (in err). */
static const char *pulled_problem(const char *lib_dir, const struct vt_model_info *m, char *err,
                                  size_t errlen)
{
    char path[PATH_MAX], tensor[256] = "";
    enum vt_model_kind kind = !strcmp(m->kind, "image")    ? VT_MODEL_IMAGE
                              : !strcmp(m->kind, "speech") ? VT_MODEL_SPEECH
                                                           : VT_MODEL_TEXT;

    snprintf(path, sizeof(path), "%s/models/%s", lib_dir, m->folder);
    if (kind == VT_MODEL_IMAGE && vt_models_resolve_image(lib_dir, m->folder, path, sizeof(path),
                                                          tensor, sizeof(tensor), err, errlen))
        return err;
    return vt_model_check(kind, path, NULL, err, errlen) ? err : NULL;
}

static int print_model(void *user, const struct vt_model_info *m)
{
    struct listing *ls = user;
    char size[32], err[1024];
    const char *problem = m->problem;

    ls->count++;
    cli_fmt_bytes(size, sizeof(size), m->bytes);
    fputs("  ", stdout);
    cli_put_safe(stdout, m->repo[0] ? m->repo : m->folder);
    if (m->repo[0]) {
        printf("  %s", "");
        cli_put_safe(stdout, m->revision);
        printf(" %.12s  %s, %d files%s  pulled ", m->commit, size, m->n_files,
               !strcmp(m->kind, "image")    ? ", image model"
               : !strcmp(m->kind, "speech") ? ", speech model"
                                            : "");
        cli_put_safe(stdout, m->pulled_at);
    }
    fputs("  ", stdout);
    if (problem) {
        fputs("damaged: ", stdout);
        cli_put_safe(stdout, problem);
    } else if ((problem = pulled_problem(ls->lib_dir, m, err, sizeof(err)))) {
        fputs("not usable: ", stdout);
        cli_put_safe(stdout, problem);
    } else {
        fputs("ok", stdout);
    }
    fputs("  (folder ", stdout);
    cli_put_safe(stdout, m->folder);
    fputs(")\n", stdout);
    return 0;
}

/* How many .tflite files folder holds (the tflite backend wants one). */
static int tflite_files(const char *folder)
{
    DIR *d = opendir(folder);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        n += l > 7 && !strcmp(e->d_name + l - 7, ".tflite");
    }
    if (d)
        closedir(d);
    return n;
}

/* One line for a configured backend: its settings and, for a model in-process, whether
 * the stage will find it. */
static void print_configured(const char *lib_dir, const struct vt_config *cfg, enum vt_stage_id id)
{
    const char *what = vt_stages[id].name;
    int text = id == VT_STAGE_TEXT_EMBED, image = id == VT_STAGE_FRAME_EMBED;
    char key[64], folder[PATH_MAX], err[1024], tensor[256];
    const char *backend, *model, *url, *shown;
    int inferred;

    snprintf(key, sizeof(key), "%s.backend", what);
    backend = vt_config_get(cfg, key);
    snprintf(key, sizeof(key), "%s.model", what);
    model = vt_config_get(cfg, key);
    snprintf(key, sizeof(key), "%s.url", what);
    url = vt_config_get(cfg, key);
    /* unset, the embedding backends follow from what is set (as the stages read it) */
    shown = vt_config_backend(cfg, id, &inferred);
    printf("  %-11s ", what);
    cli_put_safe(stdout, shown);
    if (!backend || !*backend)
        fputs(inferred ? " (from the model)" : " (default)", stdout);
    if (model) {
        fputs("  model ", stdout);
        cli_put_safe(stdout, model);
    }
    if (url) {
        fputs("  at ", stdout);
        cli_put_safe(stdout, url);
    }
    if (image) {
        static const char *const extra[] = {"tensor", "joint_text", "api_style", "timeout_s",
                                            "batch"};
        for (size_t i = 0; i < VT_ARRAY_LEN(extra); i++) {
            snprintf(key, sizeof(key), "%s.%s", what, extra[i]);
            const char *v = vt_config_get(cfg, key);
            if (!v)
                continue;
            printf("  %s ", extra[i]);
            cli_put_safe(stdout, v);
            if (vt_config_check(key, v, err, sizeof(err))) {
                fputs("  not usable: ", stdout);
                cli_put_safe(stdout, err);
                fputc('\n', stdout);
                return;
            }
        }
    }
    if (text && model && !strcmp(shown, "model2vec")) {
        if (vt_models_resolve(lib_dir, model, folder, sizeof(folder), err, sizeof(err))) {
            fputs("  not usable: ", stdout);
            cli_put_safe(stdout, err);
        } else {
            print_ready(VT_MODEL_TEXT, folder, NULL);
        }
    }
    if (id == VT_STAGE_STT && model && !strcmp(shown, "whisper")) {
        char name[PATH_MAX], commit[64];

        if (vt_models_resolve_speech(lib_dir, model, folder, sizeof(folder), name, sizeof(name),
                                     commit, sizeof(commit), err, sizeof(err))) {
            fputs("  not usable: ", stdout);
            cli_put_safe(stdout, err);
        } else {
            print_ready(VT_MODEL_SPEECH, folder, NULL);
        }
    }
    if (image && model && !strcmp(shown, "tflite")) {
        struct stat st;
        if (vt_models_resolve_image(lib_dir, model, folder, sizeof(folder), tensor, sizeof(tensor),
                                    err, sizeof(err))) {
            fputs("  not usable: ", stdout);
            cli_put_safe(stdout, err);
        } else if (stat(folder, &st)) {
            fputs("  not usable: no such file or folder ", stdout);
            cli_put_safe(stdout, folder);
        } else if (S_ISDIR(st.st_mode) && tflite_files(folder) != 1) {
            fputs(tflite_files(folder) ? "  not usable: several .tflite files in "
                                       : "  not usable: no .tflite file in ",
                  stdout);
            cli_put_safe(stdout, folder);
        } else {
            snprintf(key, sizeof(key), "%s.tensor", what);
            const char *t = vt_config_get(cfg, key);
            if (!print_ready(VT_MODEL_IMAGE, folder, t ? t : tensor) && tensor[0] && !t) {
                fputs(" (tensor ", stdout);
                cli_put_safe(stdout, tensor);
                fputs(")", stdout);
            }
        }
    }
    fputc('\n', stdout);
}

/* The relevance floors the searches measured (LIBRARY/calibration.json, floor.h). */
static void print_floors(const char *dir)
{
    struct vt_floor *f = NULL;
    size_t n = 0;
    char err[256];

    fputs("relevance floors (searches measure them; hits by meaning or pictures must score "
          "above them):\n",
          stdout);
    vt_floor_list(dir, &f, &n, err, sizeof(err));
    for (size_t i = 0; i < n; i++) {
        char when[32] = "?";
        time_t t = (time_t)f[i].measured;
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
        fputs("  ", stdout);
        cli_put_safe(stdout, f[i].model[0] ? f[i].model : "?");
        fputs(" [", stdout);
        cli_put_safe(stdout, f[i].space);
        printf("]: floor %.4f, strong from %.4f; chance %.4f +- %.4f, best %.4f over %d queries "
               "that cannot match; %lld vectors, measured %s\n",
               f[i].floor, f[i].strong, f[i].chance_mean, f[i].chance_sd, f[i].chance_max,
               f[i].probes, (long long)f[i].vectors, when);
    }
    if (!n)
        fputs("  none yet (the first search by meaning measures its model's)\n", stdout);
    free(f);
}

/* models rm NAME...: each removed, or an error line; a note when the config still names it */
static int models_rm(int argc, char **argv)
{
    struct vt_library *lib;
    struct vt_config *cfg = NULL;
    char err[1024], folder[PATH_MAX], used[PATH_MAX];
    int rc = EXIT_OK;

    if (argc < 2)
        return cli_usage_error("models", "'models rm' takes the names of models to remove");
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    if (vt_config_load(vt_library_dir(lib), &cfg, err, sizeof(err)))
        cfg = NULL; /* the removal does not depend on it */
    const char *model = cfg ? vt_config_get(cfg, VT_KEY(TEXT_EMBED_MODEL)) : NULL;
    const char *imodel = cfg ? vt_config_get(cfg, VT_KEY(FRAME_EMBED_MODEL)) : NULL;
    char iused[PATH_MAX], tensor[256];
    if (!model || vt_models_resolve(vt_library_dir(lib), model, used, sizeof(used), NULL, 0))
        used[0] = '\0';
    if (!imodel || vt_models_resolve_image(vt_library_dir(lib), imodel, iused, sizeof(iused),
                                           tensor, sizeof(tensor), NULL, 0))
        iused[0] = '\0';
    for (int i = 1; i < argc; i++) {
        if (vt_models_remove(vt_library_dir(lib), argv[i], folder, sizeof(folder), err,
                             sizeof(err))) {
            rc = cli_error("%s", err);
            continue;
        }
        if (!cli_opts.quiet)
            cli_info("removed '%s'", folder);
        if (used[0] && !strcmp(used, folder))
            cli_info("note: text_embed.model still names '%s'; the text_embed stage fails until "
                     "it is pulled again or the config changes",
                     model);
        if (iused[0] && !strcmp(iused, folder))
            cli_info("note: frame_embed.model still names '%s'; the frame_embed stage fails until "
                     "it is pulled again or the config changes",
                     imodel);
    }
    vt_config_free(cfg);
    vt_library_close(lib);
    return rc;
}

int cmd_models(int argc, char **argv)
{
    static const struct option longs[] = {{NULL, 0, NULL, 0}};
    struct cli_opt g;
    struct vt_library *lib;
    struct vt_config *cfg = NULL;
    char err[1024];
    int c, rc = EXIT_OK;

    cli_opt_init(&g, "models", argc, argv, "", longs);
    while ((c = cli_opt_next(&g)) != -1)
        if (c == '?')
            return EXIT_USAGE;
    if (optind < argc && !strcmp(argv[optind], "rm"))
        return models_rm(argc - optind, argv + optind);
    if (optind < argc)
        return cli_usage_error("models", "'%s' is not a models action (pull, rm)", argv[optind]);
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    if (vt_config_load(vt_library_dir(lib), &cfg, err, sizeof(err))) {
        rc = cli_error("%s", err);
        goto out;
    }
    fputs("configured:\n", stdout);
    /* the config's sections are named after the stages they choose models for */
    print_configured(vt_library_dir(lib), cfg, VT_STAGE_TEXT_EMBED);
    print_configured(vt_library_dir(lib), cfg, VT_STAGE_STT);
    print_configured(vt_library_dir(lib), cfg, VT_STAGE_FRAME_EMBED);
    fputs("pulled into ", stdout);
    cli_put_safe(stdout, vt_library_dir(lib));
    fputs("/models:\n", stdout);
    struct listing ls = {vt_library_dir(lib), 0};
    if (vt_models_list(vt_library_dir(lib), print_model, &ls, err, sizeof(err))) {
        rc = cli_error("%s", err);
        goto out;
    }
    if (!ls.count)
        fputs("  none ('vidtheque models pull potion-base-8M' fetches a text model, "
              "'vidtheque models pull mobilenet-v2-1.0-224' an image model, "
              "'vidtheque models pull whisper-base.en' a speech model)\n",
              stdout);
    print_floors(vt_library_dir(lib));
out:
    vt_config_free(cfg);
    vt_library_close(lib);
    return rc;
}
