/*
 * Reader of Whisper checkpoints in whisper.cpp's ggml file layout (ggml-tiny.en.bin and the
 * like, as whisper_model_load in whisper.cpp reads them). Little-endian throughout:
 *
 *   magic 0x67676d6c ("ggml");
 *   hparams, 11 x int32: n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer,
 *     n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype (quantisation
 *     version x 1000 + file type);
 *   mel filters: n_mel, n_fft (int32), then n_mel x n_fft float32, row by row;
 *   vocabulary: a count (int32), then that many words, each a uint32 length and its bytes
 *     (the token with that id; whisper.cpp names the ids past the count itself);
 *   tensors to the end of the file, each: n_dims, name length, type (int32), n_dims sizes
 *     (int32, ggml order: innermost first), the name, the data (no padding).
 *
 * Every input is hostile: each count is bounded before it sizes anything, each size is
 * multiplied with overflow checks and checked against the bytes left, names are printable
 * and unique. The tensor types read are F32, F16 and Q8_0 (blocks of 32 values: an f16
 * scale d and 32 int8 q, value d * q, as ggml dequantises them); any other (Q4_0, Q5_1,
 * K-quants...) is refused by name. A weightless file (header, filters and vocabulary, as
 * whisper.cpp's for-tests-*.bin) is read; asking it for a tensor says it has none.
 */
#ifndef VT_WHISPER_GGML_H
#define VT_WHISPER_GGML_H

#include <stddef.h>
#include <stdint.h>

/* ggml's numbers for the types read. */
enum vt_wggml_type {
    VT_WGGML_F32 = 0,
    VT_WGGML_F16 = 1,
    VT_WGGML_Q8_0 = 8,
};

#define VT_WGGML_MAX_DIMS 4
#define VT_WGGML_MAX_NAME 256  /* tensor names, NUL included */
#define VT_WGGML_MAX_WORD 1024 /* bytes of one vocabulary word */
#define VT_WGGML_QK8_0    32   /* values in a Q8_0 block */
/* A file larger than this is refused by vt_wggml_open (large-v3 in F32 is about 6 GB). */
#define VT_WGGML_MAX_FILE ((size_t)8 << 30)

struct vt_wggml_hparams {
    int32_t n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer;
    int32_t n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels;
    int32_t ftype; /* the file type (ftype % 1000): 0 f32, 1 f16, 7 q8_0, ... */
    int32_t qntvr; /* the quantisation version (ftype / 1000) */
};

struct vt_wggml_tensor {
    char name[VT_WGGML_MAX_NAME];
    enum vt_wggml_type type;
    int n_dims;
    int64_t ne[VT_WGGML_MAX_DIMS]; /* sizes, innermost first; 1 past n_dims */
    size_t count;                  /* product of ne */
    const unsigned char *data;     /* inside the file */
    size_t nbytes;
};

struct vt_wggml {
    unsigned char *buf; /* the whole file */
    size_t len;
    struct vt_wggml_hparams hp;
    int32_t n_mel, n_fft;
    float *filters; /* [n_mel][n_fft] */
    int32_t n_words;
    size_t *word_off; /* word i: word_len[i] bytes at buf + word_off[i] */
    uint32_t *word_len;
    struct vt_wggml_tensor *tensors;
    size_t n_tensors;
    const struct vt_wggml_tensor **by_name; /* the tensors sorted by name */
};

/* Parse len bytes at data (copied). 0, or VT_EINVAL with one line in err. *out is
 * caller-freed with vt_wggml_free. */
int vt_wggml_parse(const void *data, size_t len, struct vt_wggml **out, char *err, size_t errlen);
/* The same for the file at path, at most max_bytes (0: VT_WGGML_MAX_FILE); VT_ENOTFOUND
 * when missing, VT_EIO when unreadable; the message names the file. */
int vt_wggml_open(const char *path, size_t max_bytes, struct vt_wggml **out, char *err,
                  size_t errlen);
void vt_wggml_free(struct vt_wggml *f);

/* Bytes of vocabulary word id into *len, borrowed from f; NULL when id is not in the file's
 * vocabulary (0 <= id < f->n_words). */
const unsigned char *vt_wggml_word(const struct vt_wggml *f, int32_t id, size_t *len);

/* The tensor called name, or NULL. Borrowed from f. */
const struct vt_wggml_tensor *vt_wggml_find(const struct vt_wggml *f, const char *name);
/* "F32", "F16", "Q8_0". */
const char *vt_wggml_type_name(enum vt_wggml_type type);
/* t's values as float32 into out (t->count of them). */
void vt_wggml_to_f32(const struct vt_wggml_tensor *t, float *out);
/*
 * The tensor called name as float32: *out (caller-freed) gets its count values, *count
 * that count (count may be NULL). VT_ENOTFOUND with one line when the
 * file has no such tensor, saying so when it has no tensors at all (a weightless file).
 */
int vt_wggml_tensor_f32(const struct vt_wggml *f, const char *name, float **out, size_t *count,
                        char *err, size_t errlen);

/*
 * Whether f holds the Whisper model its hparams describe, as whisper.cpp's loader demands:
 * every tensor it expects (encoder.conv1.weight, encoder.blocks.N.attn.query.weight,
 * decoder.token_embedding.weight, ...) with its shape, and no other. 0, or VT_EINVAL with
 * one line naming the first tensor missing, misshapen or unknown (or saying the file is
 * weightless).
 */
int vt_wggml_check_whisper(const struct vt_wggml *f, char *err, size_t errlen);

#endif
