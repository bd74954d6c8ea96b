/*
 * A small float32 TFLite interpreter for MobileNet-class image models, with its own
 * bounds-checked flatbuffer reader (a model file is input like any other). vt_tflite_parse
 * reads the first subgraph of a "TFL3" file: tensors (FLOAT32 only), their constant
 * buffers (copied and repacked for the kernels, so the file's bytes may be freed after),
 * the input normalisation from the model's metadata when it has some, and the operators CONV_2D,
 * DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, SQUEEZE, RESHAPE, SOFTMAX and ADD (MobileNet v2's residual
 * connections; broadcasting as TFLite does, a fused RELU, RELU6 or RELU_N1_TO_1). Every shape is
 * checked at parse time against what the operator computes, so running never meets a surprise. A
 * parsed model is read-only and may be shared by threads; each thread runs it with its own struct
 * vt_tflite_ctx (activations, scratch).
 */
#ifndef VT_TFLITE_H
#define VT_TFLITE_H

#include <stddef.h>
#include <stdint.h>

struct vt_tflite;
struct vt_tflite_ctx;

/* Largest model file read by vt_tflite_open, largest tensor (elements), most floats of
 * activations and scratch per run state (256 MB each), most multiply-adds per run: a
 * hostile model can neither take unbounded memory nor run for hours. */
#define VT_TFLITE_MAX_FILE  (256u << 20)
#define VT_TFLITE_MAX_ELEMS (1u << 28)
#define VT_TFLITE_MAX_ARENA (1u << 26)
#define VT_TFLITE_MAX_MACS  (1ull << 34)

/*
 * Parse a model held in memory (borrowed for the call only). 0 and *out (free with
 * vt_tflite_free), or VT_EINVAL with one line in err: not a TFLite file, an offset or a
 * length out of range, a tensor that is not float32, an unsupported operator ("unsupported
 * operator 'PAD'"), shapes that do not fit.
 */
int vt_tflite_parse(const uint8_t *data, size_t len, struct vt_tflite **out, char *err,
                    size_t errlen);
/* Read the file path (at most VT_TFLITE_MAX_FILE bytes) and parse it. */
int vt_tflite_open(const char *path, struct vt_tflite **out, char *err, size_t errlen);
void vt_tflite_free(struct vt_tflite *m);

/* The input image size: a [1, h, w, c] float32 tensor. */
void vt_tflite_input_shape(const struct vt_tflite *m, int *h, int *w, int *c);
/* Index of the tensor named name, or -1. */
int vt_tflite_tensor_find(const struct vt_tflite *m, const char *name);
/* Name of tensor i (borrowed from m). */
const char *vt_tflite_tensor_name(const struct vt_tflite *m, int i);
/* Element count of tensor i. */
size_t vt_tflite_tensor_count(const struct vt_tflite *m, int i);
/* Whether tensor i is computed by an operator (not a constant, not the input). */
int vt_tflite_tensor_is_activation(const struct vt_tflite *m, int i);
/* The first output of the subgraph (e.g. the softmax probabilities). */
int vt_tflite_output(const struct vt_tflite *m);
/*
 * The usual embedding of a classifier: the input of the last layer that is not a
 * SOFTMAX, RESHAPE or SQUEEZE walking back from the output (for MobileNet v1 the input of
 * the final 1x1 conv, MobilenetV1/Logits/AvgPool_1a/AvgPool); -1 when there is none.
 */
int vt_tflite_default_embedding(const struct vt_tflite *m);
/* Multiply-adds of one run (convolutions and pooling), for benchmarks. */
uint64_t vt_tflite_macs(const struct vt_tflite *m);

/* Per-thread state of runs of m (which must outlive it). */
struct vt_tflite_ctx *vt_tflite_ctx_new(const struct vt_tflite *m);
void vt_tflite_ctx_free(struct vt_tflite_ctx *c);

/*
 * Run the model on input (h * w * c floats, NHWC, see vt_tflite_input_shape) up to the
 * operator that produces tensor stop (-1: every operator). Cannot fail once parsed.
 */
void vt_tflite_run(struct vt_tflite_ctx *c, const float *input, int stop);
/* The values of activation tensor i after vt_tflite_run (borrowed until the next run). */
const float *vt_tflite_tensor_data(const struct vt_tflite_ctx *c, int i);

/*
 * The input normalisation, (v - mean[c]) / std[c] for v in 0..255: from the model's
 * metadata (NormalizationOptions of its input) when it has one (returns 1), else 127.5
 * and 127.5 (returns 0), which is [-1, 1] as float MobileNets expect.
 */
int vt_tflite_input_norm(const struct vt_tflite *m, float mean[3], float std[3]);

/*
 * Fill out (h * w * 3 floats, NHWC) from an 8-bit RGB picture (row y at rgb + y * stride)
 * of any size: the whole picture squashed to w x h (not cropped: what the TFLite task
 * library's image classifier does), by averaging integer blocks first when it is at least
 * twice as large (so that a large frame does not alias) and then a bilinear resize with
 * half-pixel centres; each value v of channel c becomes (v - mean[c]) / std[c].
 */
void vt_tflite_image_input(const uint8_t *rgb, int iw, int ih, size_t stride, int w, int h,
                           const float mean[3], const float std[3], float *out);

/* 1: use the generic 16-byte-vector kernels even where AVX2 ones could run (for tests and
 * benchmarks: set it before any run, not while one is running). */
void vt_tflite_use_generic_kernels(int on);

/* C[m][n] = A[m][k] * B[k][n], row-major and packed: the plain GEMM the convolutions use,
 * exposed for the benchmark (B is packed on every call, so time large m). */
void vt_tflite_sgemm(int m, int n, int k, const float *a, const float *b, float *c);

#endif
