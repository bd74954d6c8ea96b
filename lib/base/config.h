/*
 * The library's config: LIBRARY/config, lines of "key = value" (git-config-like,
 * '#' starts a comment line), read whole at open and written atomically (a temporary
 * file renamed over it). Keys are dotted lower-case names from a fixed list (given
 * when the file is read); an unknown key is refused when set and kept as it is when read.
 *
 * The keys, their defaults and the values they take are the key table's (lib/model/
 * stage_config.h, which reads the file with them: vt_config_load); this file knows the
 * format only.
 */
#ifndef VT_CONFIG_H
#define VT_CONFIG_H

#include <stddef.h>

/* Where `make install` puts the data files (the Makefile's DATADIR, fixed at build time). */
#ifndef VT_DATADIR
#define VT_DATADIR "/usr/local/share/vidtheque"
#endif
/* stt.vad_model when unset: Silero VAD v6.2.0 in whisper.cpp's ggml format */
#define VT_CONFIG_VAD_MODEL VT_DATADIR "/ggml-silero-v6.2.0.bin"
/* Whisper's vocabularies (gpt2.tiktoken, multilingual.tiktoken) and mel_filters.npz, which
 * a Hugging Face checkpoint does not hold */
#define VT_WHISPER_ASSETS_DIR VT_DATADIR "/whisper"

struct vt_config;

/* Read DIR/config (a missing file is an empty config) knowing the keys keys (NULL-terminated,
 * kept by pointer: static); a line of another key is kept as it is. 0 or an error code with
 * err. */
int vt_config_read(const char *lib_dir, const char *const *keys, struct vt_config **out, char *err,
                   size_t errlen);
void vt_config_free(struct vt_config *c);
/* The value of key: the environment's VIDTHEQUE_<KEY> (capitals, '.' as '_'; not for db)
 * when set and not empty, else the file's; NULL when unset. Borrowed until the next set or
 * free (or change of the environment). */
const char *vt_config_get(const struct vt_config *c, const char *key);
/* Set (value non-NULL) or unset (NULL) key and write the file atomically.
 * VT_EINVAL for an unknown key or a value with a newline or NUL. */
int vt_config_set(struct vt_config *c, const char *key, const char *value, char *err,
                  size_t errlen);
/* Each key that is set, in file order; fn returns non-zero to stop. */
int vt_config_each(const struct vt_config *c,
                   int (*fn)(void *user, const char *key, const char *value), void *user);
/* Whether v is a libpq URL as the db key holds it: postgresql:// or postgres://, then
 * printable ASCII without spaces. */
int vt_config_db_url_ok(const char *v);

/*
 * Where the library in lib_dir keeps its database: *url gets the PostgreSQL URL
 * (VIDTHEQUE_DB when set, else the config's db key; with the password of db.password_file
 * or VIDTHEQUE_DB_PASSWORD_FILE added, when set; caller frees), or NULL for SQLite's
 * lib_dir/library.db. 0, or VT_EINVAL (a value that is not a postgresql:// URL) or the
 * config's read error, with err.
 */
int vt_config_db_url(const char *lib_dir, char **url, char *err, size_t errlen);
/* A db URL with its password (user:PASSWORD@, password=...) shown as ***, for messages
 * and listings. Caller frees. */
char *vt_config_db_redact(const char *url);

#endif
