/*
 * The config keys (the library's config file, base/config.h, is their format): one table
 * saying, for each key, the stage it belongs to (or none, for db), its default, the
 * values it takes and the check of their form, and the rule that infers a stage's backend
 * from what is set. `config set`, `models`, `search` and the stages all ask it; a new
 * stage's keys are lines of the table in stage_config.c.
 *
 * Keys (defaults in parentheses):
 *   text_embed.backend   model2vec | openai | none          (none: stage skipped)
 *   text_embed.model     model2vec: a folder, or a name pulled into LIBRARY/models/;
 *                        openai: the server's model name
 *   text_embed.url       openai: base URL, e.g. http://127.0.0.1:11434
 *   text_embed.api_key   openai: optional Bearer token
 *   stt.backend          pocketsphinx | whisper | openai    (pocketsphinx; whisper when
 *                        only stt.model is set, openai when stt.url is)
 *   stt.model            whisper: a checkpoint (a folder with config.json and
 *                        model.safetensors, a ggml file, or a pulled model's name);
 *                        openai: the server's model name, e.g. whisper-1
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
 *   db.password_file     a file holding the database password (its first line), kept out
 *                        of the shared config: not readable by others (mode 0600 or 0640)
 *
 * Every key may also be set in the environment, which wins over the file: VIDTHEQUE_ and
 * the key in capitals with '.' as '_' (stt.vad_model: VIDTHEQUE_STT_VAD_MODEL;
 * db.password_file: VIDTHEQUE_DB_PASSWORD_FILE); db is VIDTHEQUE_DB (base/config.h).
 */
#ifndef VT_STAGE_CONFIG_H
#define VT_STAGE_CONFIG_H

#include "base/config.h"
#include "model/stage.h"

#include <stddef.h>

/* The most pictures one request may carry (frame_embed.batch; embed.h checks it is
 * VT_IMGEMBED_MAX_BATCH). */
#define VT_CONFIG_BATCH_MAX 128

/*
 * The keys, one line each: its id (VT_KEY_<ID>), its stage (-1: the library's own), name,
 * default, the values it takes (a backend's names), the backend its .model alone implies
 * (a .url implies openai), and the check of its form. The columns after the name are
 * stage_config.c's (its lists of backends and its checks); elsewhere the list gives the
 * ids, and VT_KEY(STT_VAD) is a key's name, so no other file spells one.
 */
/* clang-format off */
#define VT_CONFIG_KEY_LIST(X) \
   /* ID                      stage  name                      default              allowed         in_process   check */ \
    X(TEXT_EMBED_BACKEND,     TEXT,  "text_embed.backend",     "none",              text_backends,  "model2vec", NULL) \
    X(TEXT_EMBED_MODEL,       TEXT,  "text_embed.model",       NULL,                NULL,           NULL,        NULL) \
    X(TEXT_EMBED_URL,         TEXT,  "text_embed.url",         NULL,                NULL,           NULL,        NULL) \
    X(TEXT_EMBED_API_KEY,     TEXT,  "text_embed.api_key",     NULL,                NULL,           NULL,        NULL) \
    X(STT_BACKEND,            STT,   "stt.backend",            "pocketsphinx",      stt_backends,   "whisper",   NULL) \
    X(STT_MODEL,              STT,   "stt.model",              NULL,                NULL,           NULL,        NULL) \
    X(STT_URL,                STT,   "stt.url",                NULL,                NULL,           NULL,        NULL) \
    X(STT_API_KEY,            STT,   "stt.api_key",            NULL,                NULL,           NULL,        NULL) \
    X(STT_HINTS,              STT,   "stt.hints",              "true",              NULL,           NULL,        check_bool) \
    X(STT_VAD,                STT,   "stt.vad",                "energy",            NULL,           NULL,        check_vad) \
    X(STT_VAD_MODEL,          STT,   "stt.vad_model",          VT_CONFIG_VAD_MODEL, NULL,           NULL,        check_path) \
    X(FRAME_EMBED_BACKEND,    FRAME, "frame_embed.backend",    "none",              frame_backends, "tflite",    NULL) \
    X(FRAME_EMBED_MODEL,      FRAME, "frame_embed.model",      NULL,                NULL,           NULL,        NULL) \
    X(FRAME_EMBED_TENSOR,     FRAME, "frame_embed.tensor",     NULL,                NULL,           NULL,        NULL) \
    X(FRAME_EMBED_URL,        FRAME, "frame_embed.url",        NULL,                NULL,           NULL,        NULL) \
    X(FRAME_EMBED_API_KEY,    FRAME, "frame_embed.api_key",    NULL,                NULL,           NULL,        NULL) \
    X(FRAME_EMBED_JOINT_TEXT, FRAME, "frame_embed.joint_text", NULL,                NULL,           NULL,        NULL) \
    X(FRAME_EMBED_API_STYLE,  FRAME, "frame_embed.api_style",  "openai",            NULL,           NULL,        check_api_style) \
    X(FRAME_EMBED_TIMEOUT_S,  FRAME, "frame_embed.timeout_s",  "60",                NULL,           NULL,        check_timeout) \
    X(FRAME_EMBED_BATCH,      FRAME, "frame_embed.batch",      "16",                NULL,           NULL,        check_batch) \
    X(DB,                     -1,    "db",                     NULL,                NULL,           NULL,        check_db) \
    X(DB_PASSWORD_FILE,       -1,    "db.password_file",       NULL,                NULL,           NULL,        check_path)
/* clang-format on */

enum vt_config_key_id {
#define VT_KEY_X(id, stage, name, dflt, allowed, in_process, check) VT_KEY_##id,
    VT_CONFIG_KEY_LIST(VT_KEY_X)
#undef VT_KEY_X
        VT_KEY_COUNT
};

/* The name of key VT_KEY_<ID>: VT_KEY(STT_VAD) is "stt.vad". */
#define VT_KEY(ID) (vt_config_table[VT_KEY_##ID].name)

/* A config key: its line of the table. */
struct vt_config_key {
    const char *name;
    int stage;                  /* enum vt_stage_id, or -1: the library's own (db) */
    const char *dflt;           /* the value when unset (NULL: none) */
    const char *const *allowed; /* the values it takes (a backend's names), NULL: any */
    /* a .backend key's inference when unset: the backend a .model alone implies (a .url
     * implies openai); NULL: nothing is implied, the default holds */
    const char *in_process;
    /* the form its values must have (NULL: any): 0, or VT_EINVAL with one line in err */
    int (*check)(const char *key, const char *value, char *err, size_t errlen);
};

/* The table, ending with a NULL name. */
extern const struct vt_config_key vt_config_table[];
/* The keys vidtheque knows, NULL-terminated (the table's names). */
extern const char *const vt_config_keys[];

/* The line of key, or NULL for a key vidtheque does not know. */
const struct vt_config_key *vt_config_key_find(const char *key);

/* Read DIR/config with the keys of the table (base/config.h, vt_config_read). */
int vt_config_load(const char *lib_dir, struct vt_config **out, char *err, size_t errlen);

/*
 * Whether value has the form key takes, for the keys whose values have one (stt.hints,
 * stt.vad, stt.vad_model, frame_embed.api_style, .timeout_s, .batch, db): 0, or VT_EINVAL
 * with one line in err naming the key, the value and what it must be. Every other key: 0.
 * `config set` refuses such a value, and the stage fails with the same line when the file
 * says it.
 */
int vt_config_check(const char *key, const char *value, char *err, size_t errlen);
/*
 * What `config set` asks of a value: one of key's allowed values ("'V' is not a backend for
 * 'K' (one of: ...)"), an http:// or https:// URL for a .url key, then vt_config_check.
 * 0, or VT_EINVAL with one line in err.
 */
int vt_config_check_set(const char *key, const char *value, char *err, size_t errlen);

/*
 * The backend cf chooses for stage (stt, text_embed, frame_embed): its .backend key when
 * set and not empty; unset, what is set implies (a .url: openai; a .model: the in-process
 * backend, model2vec, whisper or tflite); else the default. NULL for a
 * stage without backends. *inferred (may be NULL) says whether it was implied by a .url
 * or .model. Not checked against the allowed values (the stage does, with its message).
 */
const char *vt_config_backend(const struct vt_config *cf, enum vt_stage_id stage, int *inferred);
/* Whether value is one of key's allowed values (1 also for a key that has no list). */
int vt_config_allowed(const char *key, const char *value);

#endif
