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
/* bytes of a text that are encoded; the rest is ignored (a tokenizer may allow fewer:
 * see VT_TOKENIZER_MAX_WORK) */
#define VT_TOKENIZER_MAX_TEXT (64u * 1024 * 1024)

/*
 * Bounds on what a tokenizer.json may make of a text, checked when it is loaded (a
 * tokenizer past one is refused with a line naming it, never while encoding). Each step
 * (normalizer or pre-tokenizer, counted after Sequences are flattened) has a worst-case
 * output length a * in + b; the chain's composition must stay within
 * VT_TOKENIZER_MAX_GROWTH times the input plus VT_TOKENIZER_MAX_ADDED bytes, and a chain
 * has at most VT_TOKENIZER_MAX_STEPS steps. Work per text (bytes every step reads, plus
 * the model's matching: the final length times the longest piece) is bounded by cutting
 * the input to the length whose worst case stays within VT_TOKENIZER_MAX_WORK units and
 * VT_TOKENIZER_MAX_OUT bytes; a tokenizer that cannot take VT_TOKENIZER_MIN_TEXT bytes
 * so is refused.
 */
#define VT_TOKENIZER_MAX_STEPS  64
#define VT_TOKENIZER_MAX_GROWTH 64
#define VT_TOKENIZER_MAX_ADDED  (64u * 1024)
#define VT_TOKENIZER_MAX_OUT    (16u * 1024 * 1024)
#define VT_TOKENIZER_MAX_WORK   (256u * 1024 * 1024)
#define VT_TOKENIZER_MIN_TEXT   4096

/* Load path (VT_ENOTFOUND when missing) or parse len bytes of JSON. VT_EINVAL with one
 * line in err for anything malformed or unsupported. *out caller-freed with
 * vt_tokenizer_free. */
int vt_tokenizer_load(const char *path, struct vt_tokenizer **out, char *err, size_t errlen);
int vt_tokenizer_parse(const char *json, size_t len, struct vt_tokenizer **out, char *err,
                       size_t errlen);
void vt_tokenizer_free(struct vt_tokenizer *t);

/*
 * Token ids of the len bytes of UTF-8 at text (invalid sequences count as U+FFFD; at
 * most vt_tokenizer_max_text(t) bytes are read, cut at a character's start).
 * *ids is borrowed from t until its next encode; *n its count. Never fails.
 */
void vt_tokenizer_encode(struct vt_tokenizer *t, const char *text, size_t len, const int32_t **ids,
                         size_t *n);

/* Bytes of a text that t encodes (the rest is ignored): VT_TOKENIZER_MAX_TEXT or fewer
 * so that the chain's worst case stays within VT_TOKENIZER_MAX_OUT and _MAX_WORK. */
size_t vt_tokenizer_max_text(const struct vt_tokenizer *t);

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
