/*
 * The config keys' table (stage_config.h): each key's stage, default, allowed values and
 * check, and the backend inference rule. Pure data and string checks: the front binary
 * (`config`, `models`, `search`) asks it as the stages do.
 */
#include "model/stage_config.h"

#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VT_CONFIG_TIMEOUT_MAX_S 3600 /* a request to a model server */

/* A server's base URL (the .url keys). */
static int check_url(const char *key, const char *value, char *err, size_t errlen)
{
    if (strncmp(value, "http://", 7) && strncmp(value, "https://", 8))
        return vt_err(err, errlen, VT_EINVAL, "'%s' for '%s' is not an http:// or https:// URL",
                      value, key);
    return 0;
}

static int check_bool(const char *key, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "true") && strcmp(value, "false"))
        return vt_err(err, errlen, VT_EINVAL, "%s '%s' is not true or false", key, value);
    return 0;
}

static int check_vad(const char *key, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "energy") && strcmp(value, "silero"))
        return vt_err(err, errlen, VT_EINVAL, "%s '%s' is not energy or silero", key, value);
    return 0;
}

static int check_path(const char *key, const char *value, char *err, size_t errlen)
{
    if (!*value)
        return vt_err(err, errlen, VT_EINVAL, "%s is empty: a path to a file", key);
    return 0;
}

static int check_api_style(const char *key, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "openai") && strcmp(value, "jina"))
        return vt_err(err, errlen, VT_EINVAL, "%s '%s' is not openai or jina", key, value);
    return 0;
}

static int check_timeout(const char *key, const char *value, char *err, size_t errlen)
{
    char *end = NULL;
    /* decimal digits with one point at most: no sign, exponent, hex, inf or nan */
    int plain = value[0] >= '0' && value[0] <= '9' && !value[strspn(value, "0123456789.")] &&
                (!strchr(value, '.') || strchr(value, '.') == strrchr(value, '.'));
    double v = plain ? strtod(value, &end) : -1;

    if (!end || *end || !(v > 0 && v <= VT_CONFIG_TIMEOUT_MAX_S))
        return vt_err(err, errlen, VT_EINVAL,
                      "%s '%s' is not a number of seconds above 0 and at most %d", key, value,
                      VT_CONFIG_TIMEOUT_MAX_S);
    return 0;
}

static int check_batch(const char *key, const char *value, char *err, size_t errlen)
{
    long v = 0;
    size_t n = 0;

    for (; value[n] >= '0' && value[n] <= '9' && n < 4; n++)
        v = v * 10 + (value[n] - '0');
    if (!n || value[n] || v < 1 || v > VT_CONFIG_BATCH_MAX)
        return vt_err(err, errlen, VT_EINVAL, "%s '%s' is not a whole number from 1 to %d", key,
                      value, VT_CONFIG_BATCH_MAX);
    return 0;
}

static int check_db(const char *key, const char *value, char *err, size_t errlen)
{
    (void)key;
    if (!vt_config_db_url_ok(value))
        return vt_err(err, errlen, VT_EINVAL,
                      "db '%s' is not a postgresql:// or postgres:// URL (without spaces)", value);
    return 0;
}

static const char *const text_backends[] = {"model2vec", "openai", "none", NULL};
static const char *const stt_backends[] = {"pocketsphinx", "whisper", "openai", NULL};
static const char *const frame_backends[] = {"tflite", "openai", "none", NULL};

#define TEXT  VT_STAGE_TEXT_EMBED
#define STT   VT_STAGE_STT
#define FRAME VT_STAGE_FRAME_EMBED

const struct vt_config_key vt_config_table[] = {
#define VT_KEY_X(id, stage, name, dflt, allowed, in_process, check)                                \
    {name, stage, dflt, allowed, in_process, check},
    VT_CONFIG_KEY_LIST(VT_KEY_X)
#undef VT_KEY_X
        {NULL, -1, NULL, NULL, NULL, NULL},
};

const char *const vt_config_keys[] = {
#define VT_KEY_X(id, stage, name, dflt, allowed, in_process, check) name,
    VT_CONFIG_KEY_LIST(VT_KEY_X)
#undef VT_KEY_X
        NULL,
};

const struct vt_config_key *vt_config_key_find(const char *key)
{
    for (const struct vt_config_key *k = vt_config_table; key && k->name; k++)
        if (!strcmp(k->name, key))
            return k;
    return NULL;
}

int vt_config_load(const char *lib_dir, struct vt_config **out, char *err, size_t errlen)
{
    return vt_config_read(lib_dir, vt_config_keys, out, err, errlen);
}

int vt_config_allowed(const char *key, const char *value)
{
    const struct vt_config_key *k = vt_config_key_find(key);

    if (!k || !k->allowed)
        return 1;
    for (size_t i = 0; k->allowed[i]; i++)
        if (!strcmp(k->allowed[i], value))
            return 1;
    return 0;
}

int vt_config_check(const char *key, const char *value, char *err, size_t errlen)
{
    const struct vt_config_key *k = vt_config_key_find(key);

    return k && k->check ? k->check(key, value, err, errlen) : 0;
}

int vt_config_check_set(const char *key, const char *value, char *err, size_t errlen)
{
    const struct vt_config_key *k = vt_config_key_find(key);
    size_t n = strlen(key);

    if (k && k->allowed && !vt_config_allowed(key, value)) {
        struct vt_sb sb = {0};
        int rc;

        for (size_t i = 0; k->allowed[i]; i++)
            vt_sb_addf(&sb, "%s%s", i ? ", " : "", k->allowed[i]);
        rc = vt_err(err, errlen, VT_EINVAL, "'%s' is not a backend for '%s' (one of: %s)", value,
                    key, sb.buf);
        vt_sb_release(&sb);
        return rc;
    }
    if (n >= 4 && !strcmp(key + n - 4, ".url")) {
        int rc = check_url(key, value, err, errlen);

        if (rc)
            return rc;
    }
    return vt_config_check(key, value, err, errlen);
}

const char *vt_config_backend(const struct vt_config *cf, enum vt_stage_id stage, int *inferred)
{
    char key[64];
    const struct vt_config_key *k;
    const char *b, *url, *model;

    if (inferred)
        *inferred = 0;
    if ((unsigned)stage >= VT_STAGE_COUNT)
        return NULL;
    snprintf(key, sizeof(key), "%s.backend", vt_stages[stage].name);
    k = vt_config_key_find(key);
    if (!k)
        return NULL;
    b = vt_config_get(cf, key);
    if (b && *b)
        return b;
    if (k->in_process) {
        snprintf(key, sizeof(key), "%s.url", vt_stages[stage].name);
        url = vt_config_get(cf, key);
        snprintf(key, sizeof(key), "%s.model", vt_stages[stage].name);
        model = vt_config_get(cf, key);
        if (inferred)
            *inferred = (url && *url) || (model && *model);
        if (url && *url)
            return "openai";
        if (model && *model)
            return k->in_process;
    }
    return k->dflt;
}
