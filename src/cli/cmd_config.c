/*
 * `vidtheque config`: read and change the library's config file, whose keys, defaults and
 * checks are the one table of lib/model/stage_config.c (the file format is lib/base/config.c);
 * it chooses the text embedding, speech recognition and frame embedding backends. Runs in the
 * front binary (both need nothing but libc). A .model key naming a model that is here is
 * checked first (loaded and run on one tiny input, ml/model_check.h). API keys are masked when the
 * config is listed and shown only when asked for by name.
 */
#include "cli/cli.h"
#include "ml/model_check.h"
#include "ml/models.h"
#include "model/stage_config.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_secret(const char *key)
{
    size_t n = strlen(key);
    return n >= 8 && !strcmp(key + n - 8, ".api_key");
}

static int print_entry(void *user, const char *key, const char *value)
{
    (void)user;
    fputs(key, stdout);
    fputs(" = ", stdout);
    if (is_secret(key) && *value) {
        fputs("********", stdout);
    } else if (!strcmp(key, VT_KEY(DB))) {
        char *r = vt_config_db_redact(value); /* the URL, not its password */

        cli_put_safe(stdout, r);
        free(r);
    } else {
        cli_put_safe(stdout, value);
    }
    fputc('\n', stdout);
    return 0;
}

/* A value the stage could not use is refused now rather than found out while indexing
 * (the key table's check, model/stage_config.h). */
static int check_value(const char *key, const char *value)
{
    char err[512];

    if (vt_config_check_set(key, value, err, sizeof(err)))
        return cli_usage_error("config", "%s", err);
    return 0;
}

/*
 * A model a .model key names, checked as its stage would load it and run on one tiny
 * input (ml/model_check.h) when it is here and the key's backend runs in-process: one
 * that cannot work is refused now, not when the stage runs. A name not pulled yet is
 * left for `models` to report.
 */
static int check_model(const char *lib_dir, const struct vt_config *cfg, const char *key,
                       const char *value, char *err, size_t errlen)
{
    char path[PATH_MAX], tensor[256], name[PATH_MAX], commit[64];
    const char *backend;
    struct stat st;

    if (!strcmp(key, VT_KEY(TEXT_EMBED_MODEL))) {
        backend = vt_config_get(cfg, VT_KEY(TEXT_EMBED_BACKEND));
        if ((backend && strcmp(backend, "model2vec")) ||
            vt_models_resolve(lib_dir, value, path, sizeof(path), NULL, 0))
            return 0;
        return vt_model_check(VT_MODEL_TEXT, path, NULL, err, errlen);
    }
    if (!strcmp(key, VT_KEY(FRAME_EMBED_MODEL))) {
        backend = vt_config_get(cfg, VT_KEY(FRAME_EMBED_BACKEND));
        if ((backend && strcmp(backend, "tflite")) ||
            vt_models_resolve_image(lib_dir, value, path, sizeof(path), tensor, sizeof(tensor),
                                    NULL, 0) ||
            stat(path, &st))
            return 0;
        const char *t = vt_config_get(cfg, VT_KEY(FRAME_EMBED_TENSOR));
        return vt_model_check(VT_MODEL_IMAGE, path, t ? t : tensor, err, errlen);
    }
    if (!strcmp(key, VT_KEY(STT_MODEL))) {
        backend = vt_config_get(cfg, VT_KEY(STT_BACKEND));
        if ((backend && strcmp(backend, "whisper")) ||
            vt_models_resolve_speech(lib_dir, value, path, sizeof(path), name, sizeof(name), commit,
                                     sizeof(commit), NULL, 0) ||
            stat(path, &st))
            return 0;
        return vt_model_check(VT_MODEL_SPEECH, path, NULL, err, errlen);
    }
    return 0;
}

int cmd_config(int argc, char **argv)
{
    static const struct option longs[] = {{NULL, 0, NULL, 0}};
    struct cli_opt g;
    struct vt_library *lib;
    struct vt_config *cfg = NULL;
    char err[1024], abs_path[PATH_MAX];
    const char *verb, *key = NULL, *value = NULL;
    int c, nargs, rc = EXIT_OK;

    cli_opt_init(&g, "config", argc, argv, "", longs);
    while ((c = cli_opt_next(&g)) != -1)
        if (c == '?')
            return EXIT_USAGE;
    nargs = argc - optind;
    verb = nargs > 0 ? argv[optind] : "list";
    if (!strcmp(verb, "list") && nargs <= 1) {
    } else if ((!strcmp(verb, "get") || !strcmp(verb, "unset")) && nargs == 2) {
        key = argv[optind + 1];
    } else if (!strcmp(verb, "set") && nargs == 3) {
        key = argv[optind + 1];
        value = argv[optind + 2];
    } else if (strcmp(verb, "list") && strcmp(verb, "get") && strcmp(verb, "set") &&
               strcmp(verb, "unset")) {
        return cli_usage_error("config", "'%s' is not a config action (get, set, unset)", verb);
    } else {
        return cli_usage_error("config", "wrong number of arguments for 'config %s'", verb);
    }
    if (key && !vt_config_key_find(key)) {
        struct vt_sb sb = {0};
        for (size_t i = 0; vt_config_keys[i]; i++)
            vt_sb_addf(&sb, "%s%s", i ? ", " : "", vt_config_keys[i]);
        rc = cli_usage_error("config", "'%s' is not a config key (keys: %s)", key, sb.buf);
        vt_sb_release(&sb);
        return rc;
    }
    /* the database a library is in does not move by a change of config: its rows would
     * stay behind (init --db sets it, on a new library) */
    if (key && !strcmp(key, VT_KEY(DB)) && strcmp(verb, "get"))
        return cli_usage_error("config",
                               "'db' is set by 'vidtheque init --db URL' on a new library");
    if (value) {
        rc = check_value(key, value);
        if (rc)
            return rc;
        /* a model folder (or, for frame_embed, a .tflite file) given relative to here is
         * stored absolute: the stage runs from anywhere (a name like owner/repo stays a
         * name unless such a folder exists here) */
        struct stat st;
        int text = !strcmp(key, VT_KEY(TEXT_EMBED_MODEL)),
            image = !strcmp(key, VT_KEY(FRAME_EMBED_MODEL));
        if ((text || image) && (value[0] == '.' || strchr(value, '/')) && value[0] != '/' &&
            !stat(value, &st) && (S_ISDIR(st.st_mode) || (image && S_ISREG(st.st_mode))) &&
            realpath(value, abs_path))
            value = abs_path;
    }
    lib = cli_open_library(VT_OPEN_READ);
    if (!lib)
        return EXIT_ERR;
    if (vt_config_load(vt_library_dir(lib), &cfg, err, sizeof(err))) {
        rc = cli_error("%s", err);
        goto out;
    }
    if (!strcmp(verb, "list")) {
        vt_config_each(cfg, print_entry, NULL);
    } else if (!strcmp(verb, "get")) {
        const char *v = vt_config_get(cfg, key);
        if (!v) {
            rc = cli_error("'%s' is not set", key);
            goto out;
        }
        if (!strcmp(key, VT_KEY(DB))) {
            char *r = vt_config_db_redact(v); /* never the password */

            cli_put_safe(stdout, r);
            free(r);
        } else {
            cli_put_safe(stdout, v);
        }
        fputc('\n', stdout);
    } else if (check_model(vt_library_dir(lib), cfg, key, value, err, sizeof(err))) {
        rc = cli_error("%s: '%s' cannot be used: %s", key, value, err);
    } else if (vt_config_set(cfg, key, value, err, sizeof(err))) {
        rc = cli_error("%s", err);
    }
out:
    vt_config_free(cfg);
    vt_library_close(lib);
    return rc;
}
