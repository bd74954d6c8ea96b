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

/* ---- the network ---- */

/* Silero v6's fixed shape: 512-sample windows with 64 samples of context, 16 kHz. */
#define VT_VAD_WINDOW  512
#define VT_VAD_CONTEXT 64
#define VT_VAD_HIDDEN  128
#define VT_VAD_RATE_HZ 16000

struct vt_vad;

/*
 * How a window is framed for the STFT (640 samples, 4 frames of 256 every 128):
 * SILERO, the reference model's: the 64 samples before the window (zeros at the start),
 * the window, and its last 64 reflected; WHISPERCPP, whisper.cpp's: the window with 64
 * reflected on each side (no context).
 */
enum vt_vad_framing {
    VT_VAD_FRAMING_SILERO,
    VT_VAD_FRAMING_WHISPERCPP,
};

/* What one stream of audio carries from one window to the next. */
struct vt_vad_state {
    float h[VT_VAD_HIDDEN], c[VT_VAD_HIDDEN]; /* the LSTM's */
    float context[VT_VAD_CONTEXT];            /* the previous window's last samples */
};

/*
 * The network from a parsed file: the header and every tensor must have Silero v6's
 * shapes (VT_EINVAL naming the first that does not, or an unknown or missing tensor).
 * The weights are copied (as float32): f may be freed after. *out is freed with vt_vad_free.
 */
int vt_vad_load(const struct vt_vad_file *f, struct vt_vad **out, char *err, size_t errlen);
/* vt_vad_file_open and vt_vad_load; the message names the file. */
int vt_vad_open(const char *path, struct vt_vad **out, char *err, size_t errlen);
void vt_vad_free(struct vt_vad *vad);
/* "silero-16k 6.2.0"; borrowed for the life of vad. */
const char *vt_vad_model(const struct vt_vad *vad);

/* A new stream: zero state. */
void vt_vad_state_init(struct vt_vad_state *st);
/* The speech probability of window x (VT_VAD_WINDOW samples in [-1, 1]); updates st. */
float vt_vad_window(const struct vt_vad *vad, struct vt_vad_state *st, const float *x,
                    enum vt_vad_framing framing);
/*
 * One probability per window of n samples of 16 kHz 16-bit audio (the last window padded
 * with zeros): ceil(n / VT_VAD_WINDOW) of them into *probs (caller-freed), from a new
 * stream. Returns the count.
 */
size_t vt_vad_probs(const struct vt_vad *vad, const int16_t *pcm, size_t n,
                    enum vt_vad_framing framing, float **probs);

/* ---- segments ---- */

/* whisper.cpp's parameters (whisper_vad_default_params: 0.5, 250, 100, none, 30). */
struct vt_vad_params {
    float threshold;     /* speech at or above; ends below threshold - 0.15 */
    int min_speech_ms;   /* shorter segments are dropped */
    int min_silence_ms;  /* silence that ends a segment */
    double max_speech_s; /* longer segments are split (0: no limit) */
    int speech_pad_ms;   /* kept on either side */
};
void vt_vad_params_default(struct vt_vad_params *p);

struct vt_vad_segment {
    size_t start, end; /* samples, [start, end) */
};

/*
 * Speech segments from n_probs window probabilities by whisper.cpp's rules
 * (whisper_vad_segments_from_probs, after Silero's get_speech_timestamps): hysteresis
 * between threshold and threshold - 0.15, silences shorter than min_silence_ms bridged,
 * segments closer than 200 ms merged and shorter than min_speech_ms dropped, then padded.
 * The segments go into *out (caller-freed, NULL when none); returns their number.
 */
size_t vt_vad_segments(const float *probs, size_t n_probs, const struct vt_vad_params *p,
                       struct vt_vad_segment **out);

/*
 * The same rules as a stream, one window's probability at a time, as upstream Silero's
 * get_speech_timestamps (utils_vad.py) has them: speech starts at a window at or above
 * threshold and ends where the probability fell below threshold - 0.15, once it stayed
 * there min_silence_ms (a return above threshold in between cancels the end); segments of
 * min_speech_ms or less are dropped; each is padded by speech_pad_ms on both sides (at most
 * half of min_silence_ms, so that padded segments never touch: upstream splits the gap
 * then). No merging of close segments (whisper.cpp's addition) and no max_speech_s: a
 * caller cuts long speech itself (vt_vad_cutter_cut). Memory is this struct, whatever the
 * length of the audio, and the segments do not depend on how the windows are grouped.
 */
struct vt_vad_cutter {
    float threshold, neg;
    size_t min_speech, min_silence, pad; /* samples */
    size_t n_windows;                    /* probabilities pushed */
    int triggered;                       /* inside speech */
    int no_pad;                          /* the open segment continues a cut: no pad before */
    int quiet;                           /* inside the open segment, silence since temp_end */
    size_t start, temp_end;              /* the open segment's first sample; silence's */
};

/* A cutter with p's thresholds and durations (p->max_speech_s is not used). */
void vt_vad_cutter_init(struct vt_vad_cutter *c, const struct vt_vad_params *p);
/*
 * The probability of the next window (window i covers samples [i * VT_VAD_WINDOW, +512)).
 * 1 with *seg set (padded, samples) when this window ended a segment, else 0.
 */
int vt_vad_cutter_push(struct vt_vad_cutter *c, float prob, struct vt_vad_segment *seg);
/*
 * The end of the audio, n_samples in all: 1 with *seg for the open segment (it ends at the
 * end, as upstream's last one does), if long enough; 0 otherwise. The cutter is then empty.
 */
int vt_vad_cutter_finish(struct vt_vad_cutter *c, size_t n_samples, struct vt_vad_segment *seg);
/* The first sample a segment still to come can start at (padding included). */
size_t vt_vad_cutter_frontier(const struct vt_vad_cutter *c);
/* Whether a segment is open, and where it starts (padded) into *start. */
int vt_vad_cutter_open(const struct vt_vad_cutter *c, size_t *start);
/*
 * Cut the open segment at sample at (after its start, before the next window): *seg gets
 * its part before at, and the segment goes on from at without padding. 1, or 0 (nothing
 * open, or at not inside it).
 */
int vt_vad_cutter_cut(struct vt_vad_cutter *c, size_t at, struct vt_vad_segment *seg);

#endif
