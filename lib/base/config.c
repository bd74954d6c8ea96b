/*
 * The library's config file (config.h): parsed whole into a small array of key/value
 * pairs, rewritten whole on every change. The file may hold an API key, so it is
 * written readable by its owner only. Lines it does not understand are kept as they
 * are, so a config written by a newer version survives a set by an older one.
 */
#include "base/config.h"

#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_MAX_BYTES (64 * 1024)
#define CONFIG_VALUE_MAX 2048

/* A libpq URL as the db key holds it: the scheme, then printable ASCII without spaces
 * (libpq percent-decodes the rest; what it refuses is said when the library opens). */
int vt_config_db_url_ok(const char *v)
{
    if (strncmp(v, "postgresql://", 13) && strncmp(v, "postgres://", 11))
        return 0;
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p <= ' ' || *p >= 0x7f)
            return 0;
    return 1;
}

/* url with its password (user:PASSWORD@ or password=...) hidden, for messages. Caller frees. */
char *vt_config_db_redact(const char *url)
{
    const char *scheme = strstr(url, "://");
    struct vt_sb sb = {0};
    const char *p = url;

    if (scheme) {
        const char *auth = scheme + 3, *end = auth + strcspn(auth, "/?#");
        const char *at = memchr(auth, '@', (size_t)(end - auth));
        const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;

        if (colon) {
            vt_sb_add(&sb, url, (size_t)(colon + 1 - url));
            vt_sb_adds(&sb, "***");
            p = at;
        }
    }
    /* password=... and sslpassword=... among the query's parameters */
    while (*p) {
        size_t k = !strncmp(p, "password=", 9) ? 9 : !strncmp(p, "sslpassword=", 12) ? 12 : 0;

        if (k && p > url && (p[-1] == '?' || p[-1] == '&')) {
            vt_sb_add(&sb, p, k);
            vt_sb_adds(&sb, "***");
            p += k + strcspn(p + k, "&#");
        } else {
            vt_sb_addc(&sb, *p++);
        }
    }
    return vt_sb_detach(&sb);
}

/* The database password from the file at path (its first line): refused when others may
 * read the file. 0 with *pw (caller frees), or VT_EINVAL / VT_EIO with err. */
static int read_password(const char *path, char **pw, char *err, size_t errlen)
{
    char buf[1024];
    struct stat st;
    FILE *f = fopen(path, "re");
    size_t n;
    int rc = 0;

    *pw = NULL;
    if (!f)
        return vt_err(err, errlen, VT_EIO, "db.password_file '%s': %s", path, strerror(errno));
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode))
        rc = vt_err(err, errlen, VT_EINVAL, "db.password_file '%s': not a regular file", path);
    else if (st.st_mode & 07)
        rc = vt_err(err, errlen, VT_EINVAL,
                    "db.password_file '%s': readable by others (chmod 600 or 640)", path);
    else if (!fgets(buf, sizeof(buf), f))
        rc = vt_err(err, errlen, VT_EINVAL, "db.password_file '%s': empty", path);
    fclose(f);
    if (rc)
        return rc;
    n = strcspn(buf, "\r\n");
    buf[n] = '\0';
    if (!n)
        return vt_err(err, errlen, VT_EINVAL, "db.password_file '%s': empty first line", path);
    *pw = vt_xstrdup(buf);
    return 0;
}

/* url with password=PW (percent-encoded) added to its query; caller frees. */
static char *url_with_password(const char *url, const char *pw)
{
    struct vt_sb sb = {0};

    vt_sb_adds(&sb, url);
    vt_sb_adds(&sb, strchr(url, '?') ? "&password=" : "?password=");
    for (const unsigned char *p = (const unsigned char *)pw; *p; p++) {
        if (isalnum(*p) || strchr("-._~", *p))
            vt_sb_add(&sb, (const char *)p, 1);
        else
            vt_sb_addf(&sb, "%%%02X", *p);
    }
    return vt_sb_detach(&sb);
}

/* *url gains the password of db.password_file (or VIDTHEQUE_DB_PASSWORD_FILE) when set. */
static int add_password(const struct vt_config *c, char **url, char *err, size_t errlen)
{
    const char *path = vt_config_get(c, "db.password_file");
    char *pw, *redacted;
    int has;

    if (!path || !*url)
        return 0;
    redacted = vt_config_db_redact(*url);
    has = strcmp(redacted, *url) != 0;
    free(redacted);
    if (has)
        return vt_err(err, errlen, VT_EINVAL,
                      "the db URL holds a password and db.password_file is set: keep one");
    if (read_password(path, &pw, err, errlen))
        return VT_EINVAL;
    redacted = url_with_password(*url, pw);
    free(pw);
    free(*url);
    *url = redacted;
    return 0;
}

int vt_config_db_url(const char *lib_dir, char **url, char *err, size_t errlen)
{
    /* the other keys are not read here */
    static const char *const db_key[] = {"db", "db.password_file", NULL};
    const char *env = getenv("VIDTHEQUE_DB");
    struct vt_config *c = NULL;
    const char *v;
    int rc;

    *url = NULL;
    if (env && *env && !vt_config_db_url_ok(env))
        return vt_err(err, errlen, VT_EINVAL,
                      "VIDTHEQUE_DB is not a postgresql:// URL (without spaces)");
    rc = vt_config_read(lib_dir, db_key, &c, err, errlen);
    if (rc)
        return rc;
    v = env && *env ? env : vt_config_get(c, "db");
    if (v && *v && !vt_config_db_url_ok(v))
        rc = vt_err(err, errlen, VT_EINVAL,
                    "'%s/config': db is not a postgresql:// URL (without spaces)", lib_dir);
    else if (v && *v)
        *url = vt_xstrdup(v);
    if (!rc)
        rc = add_password(c, url, err, errlen);
    if (rc) {
        free(*url);
        *url = NULL;
    }
    vt_config_free(c);
    return rc;
}

struct config_line {
    char *key;   /* NULL for a line kept verbatim (comment, blank, not understood) */
    char *value; /* the value, or the verbatim line */
};

struct vt_config {
    char *path;
    const char *const *keys; /* the keys known (vt_config_read) */
    struct config_line *lines;
    size_t n, cap;
};

static int key_known(const struct vt_config *c, const char *key)
{
    for (size_t i = 0; c->keys && c->keys[i]; i++)
        if (!strcmp(c->keys[i], key))
            return 1;
    return 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static void push(struct vt_config *c, const char *key, const char *value)
{
    vt_grow((void **)&c->lines, &c->cap, c->n + 1, sizeof(*c->lines));
    c->lines[c->n].key = vt_xstrdup_or_null(key);
    c->lines[c->n].value = vt_xstrdup(value);
    c->n++;
}

/* A key line "key = value": the last one of a key wins, as in git config. */
static void parse_line(struct vt_config *c, char *line)
{
    char *verbatim = vt_xstrdup(line);
    char *eq = strchr(line, '=');
    char *t = trim(line);
    if (*t && *t != '#' && *t != ';' && eq) {
        *eq = '\0';
        char *key = trim(t), *value = trim(eq + 1);
        if (key_known(c, key)) {
            free(verbatim);
            for (size_t i = 0; i < c->n; i++)
                if (c->lines[i].key && !strcmp(c->lines[i].key, key)) {
                    free(c->lines[i].value);
                    c->lines[i].value = vt_xstrdup(value);
                    return;
                }
            push(c, key, value);
            return;
        }
    }
    push(c, NULL, verbatim);
    free(verbatim);
}

int vt_config_read(const char *lib_dir, const char *const *keys, struct vt_config **out, char *err,
                   size_t errlen)
{
    struct vt_config *c = vt_xcalloc(1, sizeof(*c));
    c->path = vt_xasprintf("%s/config", lib_dir);
    c->keys = keys;
    *out = NULL;
    char *data = NULL;
    size_t len = 0;
    struct stat st;
    if (lstat(c->path, &st) && errno == ENOENT) {
        *out = c;
        return 0;
    }
    int rc = vt_read_file_capped(c->path, "config", CONFIG_MAX_BYTES, &data, &len, err, errlen);
    if (rc) {
        vt_config_free(c);
        return rc;
    }
    if (memchr(data, '\0', len)) {
        free(data);
        vt_config_free(c);
        return vt_err(err, errlen, VT_EINVAL, "'%s/config': not a text file", lib_dir);
    }
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        parse_line(c, line);
    free(data);
    *out = c;
    return 0;
}

void vt_config_free(struct vt_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->lines[i].key);
        free(c->lines[i].value);
    }
    free(c->lines);
    free(c->path);
    free(c);
}

/* The environment's value of key: VIDTHEQUE_ and the key in capitals, '.' as '_'; NULL when
 * unset or empty, and for db, whose VIDTHEQUE_DB vt_config_db_url reads itself (a migrate
 * or an init reads the file's own). */
static const char *env_value(const char *key)
{
    char name[128] = "VIDTHEQUE_";
    size_t n = strlen(name);
    const char *v;

    if (!strcmp(key, "db"))
        return NULL;
    for (const char *p = key; *p; p++) {
        if (n + 1 >= sizeof(name))
            return NULL;
        name[n++] = *p == '.' ? '_' : (char)toupper((unsigned char)*p);
    }
    name[n] = '\0';
    v = getenv(name);
    return v && *v ? v : NULL;
}

const char *vt_config_get(const struct vt_config *c, const char *key)
{
    const char *env = env_value(key);

    if (env)
        return env;
    for (size_t i = 0; c && i < c->n; i++)
        if (c->lines[i].key && !strcmp(c->lines[i].key, key))
            return c->lines[i].value;
    return NULL;
}

static int write_config(const struct vt_config *c, char *err, size_t errlen)
{
    struct vt_sb sb = {0};
    vt_sb_adds(&sb, "");
    for (size_t i = 0; i < c->n; i++) {
        if (c->lines[i].key)
            vt_sb_addf(&sb, "%s = %s\n", c->lines[i].key, c->lines[i].value);
        else
            vt_sb_addf(&sb, "%s\n", c->lines[i].value);
    }
    int rc = vt_write_file_atomic_mode(c->path, sb.buf, sb.len, 0600, err, errlen);
    vt_sb_release(&sb);
    return rc;
}

int vt_config_set(struct vt_config *c, const char *key, const char *value, char *err, size_t errlen)
{
    if (!key_known(c, key))
        return vt_err(err, errlen, VT_EINVAL, "unknown config key '%s' (see 'vidtheque config')",
                      key);
    if (value) {
        if (strlen(value) > CONFIG_VALUE_MAX)
            return vt_err(err, errlen, VT_EINVAL, "config value for '%s' too long (max %d bytes)",
                          key, CONFIG_VALUE_MAX);
        for (const char *p = value; *p; p++)
            if (*p == '\n' || *p == '\r')
                return vt_err(err, errlen, VT_EINVAL, "config value for '%s' has a line break",
                              key);
    }
    char *copy = value ? vt_xstrdup(value) : NULL;
    const char *v = copy ? trim(copy) : NULL;
    size_t i = 0;
    while (i < c->n && !(c->lines[i].key && !strcmp(c->lines[i].key, key)))
        i++;
    if (i < c->n && !v) {
        free(c->lines[i].key);
        free(c->lines[i].value);
        memmove(c->lines + i, c->lines + i + 1, (c->n - i - 1) * sizeof(*c->lines));
        c->n--;
    } else if (i < c->n) {
        free(c->lines[i].value);
        c->lines[i].value = vt_xstrdup(v);
    } else if (v) {
        push(c, key, v);
    } else {
        return 0;
    }
    free(copy);
    return write_config(c, err, errlen);
}

int vt_config_each(const struct vt_config *c,
                   int (*fn)(void *user, const char *key, const char *value), void *user)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (c->lines[i].key) {
            int r = fn(user, c->lines[i].key, c->lines[i].value);
            if (r)
                return r;
        }
    return 0;
}
