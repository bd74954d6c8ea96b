/*
 * A Hugging Face tokenizer.json reader and encoder, enough for the static-embedding
 * models embed_m2v.c runs: the Unigram model (Viterbi over the vocabulary's scores) and
 * the WordPiece model (greedy longest match first), the normalizers (BertNormalizer,
 * Lowercase, Strip, StripAccents after NFD, Replace with a string or the "\s+" regex,
 * Prepend, NFC/NFKC taken as identity, Sequence) and pre-tokenizers (BertPreTokenizer,
 * Metaspace, Whitespace, WhitespaceSplit, Sequence) they use. Anything else is a load
 * error naming the type. Encoding adds no special tokens (as model2vec does) and does
 * not match added tokens in the input text.
 */
#ifndef VT_TOKENIZER_H
#define VT_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

struct vt_tokenizer;

/* tokenizer.json files larger than this are refused */
#define VT_TOKENIZER_MAX_BYTES (64u * 1024 * 1024)
/* bytes of a text that are encoded; the rest is ignored */
#define VT_TOKENIZER_MAX_TEXT (64u * 1024 * 1024)

/* Load path (VT_ENOTFOUND when missing) or parse len bytes of JSON. VT_EINVAL with one
 * line in err for anything malformed or unsupported. *out caller-freed with
 * vt_tokenizer_free. */
int vt_tokenizer_load(const char *path, struct vt_tokenizer **out, char *err, size_t errlen);
int vt_tokenizer_parse(const char *json, size_t len, struct vt_tokenizer **out, char *err,
                       size_t errlen);
void vt_tokenizer_free(struct vt_tokenizer *t);

/*
 * Token ids of the len bytes of UTF-8 at text (invalid sequences count as U+FFFD; at
 * most VT_TOKENIZER_MAX_TEXT bytes are read).
 * *ids is borrowed from t until its next encode; *n its count. Never fails.
 */
void vt_tokenizer_encode(struct vt_tokenizer *t, const char *text, size_t len, const int32_t **ids,
                         size_t *n);

/* Number of ids (the model's largest id + 1). */
size_t vt_tokenizer_vocab_size(const struct vt_tokenizer *t);
/* Id of token (model vocabulary, then added tokens) or -1. */
int32_t vt_tokenizer_token_to_id(const struct vt_tokenizer *t, const char *token);
/* Token of id, borrowed from t, or NULL. */
const char *vt_tokenizer_id_to_token(const struct vt_tokenizer *t, int32_t id);
/* The unknown token's id (Unigram's unk_id, WordPiece's unk_token), or -1. */
int32_t vt_tokenizer_unk_id(const struct vt_tokenizer *t);
/* Median byte length of the model vocabulary's tokens (model2vec's truncation unit). */
size_t vt_tokenizer_median_token_len(const struct vt_tokenizer *t);

#endif
