/*
 * Voice activity detection with the Silero VAD (v6) in whisper.cpp's ggml file format:
 * a reader of that format that trusts nothing in the file, the network in plain float32 C
 * (one speech probability per 512-sample window of 16 kHz audio, 32 ms), and whisper.cpp's
 * rules that turn the probabilities into speech segments.
 *
 * The file (little-endian): magic 0x67676d6c ("ggml"), the model type as an int32 length and
 * its bytes ("silero-16k"), the version (3 x int32), the window and context in samples, the
 * number of encoder layers L, then L x (in channels, out channels, kernel size), the LSTM's
 * input and hidden sizes and the final conv's in and out channels (int32 each); then tensors
 * to the end of the file: n_dims, name length, type (0 f32, 1 f16), n_dims sizes (ggml
 * order, innermost first), the name, the elements.
 */
#ifndef VT_VAD_H
#define VT_VAD_H

#include <stddef.h>
#include <stdint.h>

enum vt_ggml_type {
    VT_GGML_F32 = 0,
    VT_GGML_F16 = 1,
};

#define VT_GGML_MAX_DIMS   4
#define VT_VAD_MAX_LAYERS  8
#define VT_VAD_MAX_TENSORS 64
#define VT_VAD_MAX_NAME    128
/* A VAD model file larger than this is refused (Silero's is 0.9 MB). */
#define VT_VAD_MAX_FILE (64u * 1024 * 1024)

struct vt_ggml_tensor {
    char name[VT_VAD_MAX_NAME];
    enum vt_ggml_type type;
    int n_dims;
    int64_t ne[VT_GGML_MAX_DIMS]; /* sizes, innermost first; 1 past n_dims */
    size_t count;                 /* product of ne */
    const unsigned char *data;    /* count little-endian elements, inside the file */
    size_t nbytes;
};

struct vt_vad_file {
    unsigned char *buf; /* the whole file */
    size_t len;
    char type[64]; /* "silero-16k" */
    int32_t version[3];
    int32_t n_window, n_context;
    int32_t n_layers;
    int32_t enc_in[VT_VAD_MAX_LAYERS], enc_out[VT_VAD_MAX_LAYERS], kernel[VT_VAD_MAX_LAYERS];
    int32_t lstm_input, lstm_hidden, final_in, final_out;
    struct vt_ggml_tensor tensors[VT_VAD_MAX_TENSORS];
    size_t n_tensors;
};

/*
 * Parse len bytes at data (copied) as a ggml VAD file: every size, count and offset is
 * checked against the file, names are unique and printable. 0, or VT_EINVAL with one line
 * in err. *out is caller-freed with vt_vad_file_free.
 */
int vt_vad_file_parse(const void *data, size_t len, struct vt_vad_file **out, char *err,
                      size_t errlen);
/* The same for the file at path (VT_ENOTFOUND when missing, VT_EIO when unreadable). */
int vt_vad_file_open(const char *path, struct vt_vad_file **out, char *err, size_t errlen);
void vt_vad_file_free(struct vt_vad_file *f);
/* The tensor called name, or NULL. Borrowed from f. */
const struct vt_ggml_tensor *vt_vad_file_find(const struct vt_vad_file *f, const char *name);
/* The tensor's elements as floats into out (t->count of them). */
void vt_ggml_to_f32(const struct vt_ggml_tensor *t, float *out);

#endif
