/*
 * The library's config: LIBRARY/config, lines of "key = value" (git-config-like,
 * '#' starts a comment line), read whole at open and written atomically (a temporary
 * file renamed over it). Keys are dotted lower-case names from a fixed list
 * (vt_config_keys); an unknown key is refused when set and warned about when read.
 *
 * Keys (defaults in parentheses):
 *   text_embed.backend   model2vec | openai | none          (none: stage skipped)
 *   text_embed.model     model2vec: a folder, or a name pulled into LIBRARY/models/;
 *                        openai: the server's model name
 *   text_embed.url       openai: base URL, e.g. http://127.0.0.1:11434
 *   text_embed.api_key   openai: optional Bearer token
 *   stt.backend          pocketsphinx | openai              (pocketsphinx)
 *   stt.model            openai: the server's model name, e.g. whisper-1
 *   stt.url              openai: base URL of the transcription server
 *   stt.api_key          openai: optional Bearer token
 *   stt.hints            true | false: the video's words as speech hints    (true)
 *   stt.vad              energy | silero: what finds the speech to recognise (energy)
 *   stt.vad_model        silero: the Silero VAD v6 ggml file
 *                        (VT_CONFIG_VAD_MODEL, which `make install` puts there)
 *   frame_embed.backend  tflite | openai | none             (none: stage skipped)
 *   frame_embed.model    tflite: a .tflite file, or a folder holding one (a path, or a
 *                        folder's name under LIBRARY/models/, or a pulled model's name);
 *                        openai: the server's model
 *   frame_embed.tensor   tflite: the tensor that is the embedding (default: the one a
 *                        pulled model's manifest names, else the input of the last layer)
 *   frame_embed.url      openai: base URL of the image-embedding server
 *   frame_embed.api_key  openai: optional Bearer token
 *   frame_embed.joint_text  openai: 1 when the model embeds text into the same space
 *   frame_embed.api_style   openai: openai | jina, the request's shape      (openai)
 *   frame_embed.timeout_s   openai: seconds per request, more than 0, at most 3600 (60)
 *   frame_embed.batch       openai: pictures per request, 1 to 128          (16)
 *   db                   the library's database on PostgreSQL: a libpq URL
 *                        (postgresql://USER@HOST/DB?...); unset: SQLite, DIR/library.db.
 *                        The environment's VIDTHEQUE_DB overrides it.
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

struct vt_config;

/* Read DIR/config (a missing file is an empty config). 0 or an error code with err. */
int vt_config_load(const char *lib_dir, struct vt_config **out, char *err, size_t errlen);
void vt_config_free(struct vt_config *c);
/* The value of key, NULL when unset; borrowed until the next set or free. */
const char *vt_config_get(const struct vt_config *c, const char *key);
/* Set (value non-NULL) or unset (NULL) key and write the file atomically.
 * VT_EINVAL for an unknown key or a value with a newline or NUL. */
int vt_config_set(struct vt_config *c, const char *key, const char *value, char *err,
                  size_t errlen);
/* Each key that is set, in file order; fn returns non-zero to stop. */
int vt_config_each(const struct vt_config *c,
                   int (*fn)(void *user, const char *key, const char *value), void *user);
/* The keys vidtheque knows, NULL-terminated. */
extern const char *const vt_config_keys[];

/*
 * Whether value has the form key takes, for the keys whose values have one
 * (stt.vad, stt.vad_model, frame_embed.api_style, .timeout_s, .batch): 0, or VT_EINVAL with one
 * line in err naming the key, the value and what it must be. Every other key: 0. `config set`
 * refuses such a value, and the stage fails with the same line when the file says it.
 */
int vt_config_check(const char *key, const char *value, char *err, size_t errlen);

/*
 * Where the library in lib_dir keeps its database: *url gets the PostgreSQL URL
 * (VIDTHEQUE_DB when set, else the config's db key; caller frees), or NULL for SQLite's
 * lib_dir/library.db. 0, or VT_EINVAL (a value that is not a postgresql:// URL) or the
 * config's read error, with err.
 */
int vt_config_db_url(const char *lib_dir, char **url, char *err, size_t errlen);
/* A db URL with its password (user:PASSWORD@, password=...) shown as ***, for messages
 * and listings. Caller frees. */
char *vt_config_db_redact(const char *url);

#endif
