/*
 * Whisper's tokenizer: byte-level BPE over a tiktoken vocabulary (gpt2.tiktoken for the
 * English-only models, multilingual.tiktoken for the others), encoded exactly as tiktoken
 * does with the GPT-2 pre-split
 *     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * then merges by rank; and the special tokens openai/whisper's tokenizer.py appends after
 * the vocabulary: <|endoftext|>, <|startoftranscript|>, one per language (LANGUAGES'
 * order), <|translate|>, <|transcribe|>, <|startoflm|>, <|startofprev|>, <|nospeech|>,
 * <|notimestamps|>, then the 1501 timestamps <|0.00|> ... <|30.00|>.
 */
#ifndef VT_TIKTOKEN_H
#define VT_TIKTOKEN_H

#include <stddef.h>
#include <stdint.h>

struct vt_tiktoken;

/* .tiktoken files larger than this are refused (o200k's is 3.6 MB) */
#define VT_TIKTOKEN_MAX_BYTES (32u * 1024 * 1024)
/* at most this many ranks; a token's bytes at most VT_TIKTOKEN_MAX_TOKEN */
#define VT_TIKTOKEN_MAX_RANKS (1u << 21)
#define VT_TIKTOKEN_MAX_TOKEN 1024
/* languages Whisper knows (large-v3 has 100, the others 99) */
#define VT_WHISPER_MAX_LANGUAGES 100
/* timestamp tokens: 0.00 to 30.00 s by 0.02 s */
#define VT_WHISPER_N_TIMESTAMPS 1501

/* Ids of Whisper's special tokens (tokenizer.py's Tokenizer properties). */
struct vt_whisper_specials {
    int32_t eot, sot, first_language, translate, transcribe, sot_lm, sot_prev, no_speech,
        no_timestamps, timestamp_begin;
    int n_languages;
};

/*
 * Load path (VT_ENOTFOUND when missing) or parse len bytes of a .tiktoken file: lines
 * "BASE64 RANK", ranks 0, 1, 2 ... in order, no token twice, every single byte a token.
 * n_languages (0 to VT_WHISPER_MAX_LANGUAGES; Whisper's default is 99) language tokens
 * are added among the specials. VT_EINVAL with one line in err for anything malformed.
 * *out caller-freed with vt_tiktoken_free.
 */
int vt_tiktoken_load(const char *path, int n_languages, struct vt_tiktoken **out, char *err,
                     size_t errlen);
int vt_tiktoken_parse(const char *data, size_t len, int n_languages, struct vt_tiktoken **out,
                      char *err, size_t errlen);
void vt_tiktoken_free(struct vt_tiktoken *t);

/*
 * Token ids of the len bytes at text, as tiktoken's encode_ordinary: special tokens'
 * names in the text are plain text. Invalid UTF-8 bytes are kept, each a piece of
 * punctuation to the pre-split, so decoding gives back the very bytes. *ids is borrowed
 * from t until its next encode; *n its count. 0, or VT_EINVAL when len is over
 * VT_TIKTOKEN_MAX_BYTES. A piece's merges take time quadratic in its length, as in
 * tiktoken.
 */
int vt_tiktoken_encode(struct vt_tiktoken *t, const char *text, size_t len, const int32_t **ids,
                       size_t *n);

/* Render ids as text: a token's bytes, a special token's name ("<|en|>", "<|1.08|>");
 * with VT_TIKTOKEN_NO_TIMESTAMPS timestamps are left out (tokenizer.py's decode, where
 * decode_with_timestamps keeps them). *out is NUL-terminated, caller-freed, *len bytes
 * (it may hold invalid UTF-8: a token can be part of a character). VT_EINVAL for an id
 * out of range. */
#define VT_TIKTOKEN_NO_TIMESTAMPS 1
int vt_tiktoken_decode(const struct vt_tiktoken *t, const int32_t *ids, size_t n, int flags,
                       char **out, size_t *len);

/* Number of ids: the ranks, then the specials. */
size_t vt_tiktoken_n_vocab(const struct vt_tiktoken *t);
/* Number of ranks (the ordinary tokens, ids 0 to this - 1). */
size_t vt_tiktoken_n_ranks(const struct vt_tiktoken *t);
/* Bytes of id (a special token's name), borrowed from t, *len set; NULL out of range. */
const char *vt_tiktoken_token(const struct vt_tiktoken *t, int32_t id, size_t *len);
/* Id of an ordinary token by its bytes, or of a special token by its name; or -1. */
int32_t vt_tiktoken_find(const struct vt_tiktoken *t, const char *bytes, size_t len);
const struct vt_whisper_specials *vt_tiktoken_whisper(const struct vt_tiktoken *t);
/* Id of language code's token ("en", "yue"), or -1 when t has none. */
int32_t vt_tiktoken_language(const struct vt_tiktoken *t, const char *code);
/* Code of Whisper's language i (0 "en" ... 99 "yue"), or NULL. */
const char *vt_whisper_language_code(int i);

#endif
