/*
 * The float32 TFLite interpreter of tflite.h. The first half is a flatbuffer reader that
 * checks every offset, vtable and vector length against the file before reading (the
 * file is hostile input), and a parser that turns the model's first subgraph into a list
 * of operators whose shapes all agree. The second half runs them: convolutions as an
 * im2col (skipped for 1x1 stride-1 convolutions, whose input already is the matrix) and a
 * blocked GEMM on weights packed at parse time in panels of 16 output channels, depthwise
 * convolutions and pooling over channels (contiguous in NHWC). The kernels use GCC vector
 * types so that -O2 turns them into SIMD (tflite_kern.inc), with an AVX2+FMA build on
 * x86-64 chosen at run time, the baseline build staying plain x86-64.
 *
 * Field ids follow tensorflow/lite/schema/schema.fbs (Model, OperatorCode, SubGraph,
 * Tensor, Buffer, Operator, Conv2DOptions, DepthwiseConv2DOptions, Pool2DOptions,
 * SoftmaxOptions), and for the input normalisation tflite-support's metadata_schema.fbs
 * (ModelMetadata, SubGraphMetadata, TensorMetadata, ProcessUnit, NormalizationOptions);
 * only what the supported operators need is read.
 */
#include "ml/tflite.h"

#include "base/bytes.h"
#include "base/util.h"
#include "vidtheque.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- flatbuffer reader ---- */

struct fb {
    const uint8_t *d;
    size_t n;
};

struct fbt {      /* a table whose vtable has been checked */
    size_t pos;   /* the table's start */
    size_t vt;    /* its vtable's start */
    size_t vtlen; /* vtable bytes */
    size_t tlen;  /* table bytes (inline part) */
};

/* A table at pos: its soffset to the vtable, the vtable and the table's length fit. */
static int fb_table(const struct fb *f, size_t pos, struct fbt *t)
{
    if (pos > f->n || f->n - pos < 4)
        return -1;
    int64_t vt = (int64_t)pos - (int32_t)vt_le32(f->d + pos);
    if (vt < 0 || (uint64_t)vt > f->n || f->n - (size_t)vt < 4)
        return -1;
    size_t vtlen = vt_le16(f->d + vt), tlen = vt_le16(f->d + vt + 2);
    if (vtlen < 4 || (vtlen & 1) || vtlen > f->n - (size_t)vt || tlen < 4 || tlen > f->n - pos)
        return -1;
    t->pos = pos;
    t->vt = (size_t)vt;
    t->vtlen = vtlen;
    t->tlen = tlen;
    return 0;
}

/* Where field id of size bytes sits: 1 and *at, 0 when absent, -1 when the vtable lies. */
static int fb_field(const struct fb *f, const struct fbt *t, int id, size_t size, size_t *at)
{
    size_t slot = 4 + 2 * (size_t)id;
    if (slot + 2 > t->vtlen)
        return 0;
    size_t off = vt_le16(f->d + t->vt + slot);
    if (!off)
        return 0;
    if (off < 4 || off > t->tlen || t->tlen - off < size)
        return -1;
    *at = t->pos + off;
    return 1;
}

static int fb_u32(const struct fb *f, const struct fbt *t, int id, uint32_t def, uint32_t *v)
{
    size_t at;
    int r = fb_field(f, t, id, 4, &at);
    *v = r == 1 ? vt_le32(f->d + at) : def;
    return r < 0 ? -1 : 0;
}

static int fb_i32(const struct fb *f, const struct fbt *t, int id, int32_t def, int32_t *v)
{
    uint32_t u;
    int r = fb_u32(f, t, id, (uint32_t)def, &u);
    *v = (int32_t)u;
    return r;
}

static int fb_u8(const struct fb *f, const struct fbt *t, int id, uint8_t def, uint8_t *v)
{
    size_t at;
    int r = fb_field(f, t, id, 1, &at);
    *v = r == 1 ? f->d[at] : def;
    return r < 0 ? -1 : 0;
}

static int fb_u64(const struct fb *f, const struct fbt *t, int id, uint64_t *v)
{
    size_t at;
    int r = fb_field(f, t, id, 8, &at);
    *v = r == 1 ? (uint64_t)vt_le32(f->d + at) | (uint64_t)vt_le32(f->d + at + 4) << 32 : 0;
    return r < 0 ? -1 : 0;
}

/* Follow the uoffset at position at: 0 and *to, or -1 when it leaves the file. */
static int fb_deref(const struct fb *f, size_t at, size_t *to)
{
    if (at > f->n || f->n - at < 4)
        return -1;
    uint32_t rel = vt_le32(f->d + at);
    if (rel > f->n - at)
        return -1;
    *to = at + rel;
    return 0;
}

/* A vector field of elem-byte elements: 1 with *start and *count, 0 absent, -1 bad. */
static int fb_vec(const struct fb *f, const struct fbt *t, int id, size_t elem, size_t *start,
                  uint32_t *count)
{
    size_t at, v;
    int r = fb_field(f, t, id, 4, &at);
    if (r <= 0)
        return r;
    if (fb_deref(f, at, &v) || f->n - v < 4)
        return -1;
    uint32_t c = vt_le32(f->d + v);
    if (c > (f->n - v - 4) / elem)
        return -1;
    *start = v + 4;
    *count = c;
    return 1;
}

/* Element i of a vector of tables starting at start. */
static int fb_vec_table(const struct fb *f, size_t start, uint32_t i, struct fbt *t)
{
    size_t to;
    if (fb_deref(f, start + 4 * (size_t)i, &to))
        return -1;
    return fb_table(f, to, t);
}

/* A string field: 1 with *s (NUL-terminated in the file) and *len, 0 absent, -1 bad. */
static int fb_str(const struct fb *f, const struct fbt *t, int id, const char **s, size_t *len)
{
    size_t start;
    uint32_t n;
    int r = fb_vec(f, t, id, 1, &start, &n);
    if (r <= 0)
        return r;
    if (f->n - start - n < 1 || f->d[start + n] != 0)
        return -1;
    *s = (const char *)f->d + start;
    *len = n;
    return 1;
}

/* A table field: 1 with *sub, 0 absent, -1 bad. */
static int fb_sub(const struct fb *f, const struct fbt *t, int id, struct fbt *sub)
{
    size_t at, to;
    int r = fb_field(f, t, id, 4, &at);
    if (r <= 0)
        return r;
    if (fb_deref(f, at, &to) || fb_table(f, to, sub))
        return -1;
    return 1;
}

/* ---- the model ---- */

enum { T_FLOAT32 = 0, T_INT32 = 2 };
enum { PAD_SAME = 0, PAD_VALID = 1 };
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU_N1_TO_1 = 2, ACT_RELU6 = 3 };
enum {
    B_ADD = 0,
    B_AVERAGE_POOL_2D = 1,
    B_CONV_2D = 3,
    B_DEPTHWISE_CONV_2D = 4,
    B_RESHAPE = 22,
    B_SOFTMAX = 25,
    B_CUSTOM = 32,
    B_SQUEEZE = 43,
};
/* BuiltinOptions union members read */
enum { O_CONV = 1, O_DWCONV = 2, O_POOL = 5, O_SOFTMAX = 9, O_ADD = 11 };

enum op_kind { K_CONV, K_DWCONV, K_AVGPOOL, K_COPY, K_SOFTMAX, K_ADD };

#define MAX_RANK    8
#define MAX_TENSORS 100000
#define MAX_OPS     10000
#define NR          16 /* output channels per packed weight panel */

struct tensor {
    char *name;
    int rank, dims[MAX_RANK];
    int type;
    size_t count;
    const uint8_t *raw; /* constant bytes in the file during parsing, else NULL */
    size_t raw_len;
    int producer; /* op index, -1 */
    int is_input;
    size_t off; /* activations: offset in the context's arena (floats) */
};

struct op {
    enum op_kind kind;
    int in, out;
    int ih, iw, ic, oh, ow, oc;
    int kh, kw, sh, sw, dh, dw, pad_t, pad_l, act, mult;
    int direct;   /* conv: 1x1, stride 1, no padding: the input is the GEMM's matrix */
    float *w;     /* conv: panels [oc/NR][k][NR]; depthwise: [kh*kw][oc] */
    float *bias;  /* oc floats */
    float beta;   /* softmax */
    size_t rows;  /* softmax: count / cols */
    int cols;     /* softmax: last dimension */
    size_t count; /* copy, add: elements of the output */
    /* add: the second input; a constant operand's values (NULL: an activation); the
     * output's shape (rank, dims, right-aligned) with each input's element stride per
     * axis, 0 along an axis it is broadcast over; same: both inputs have the output's
     * shape */
    int in2;
    float *ka, *kb;
    int rank, dims[MAX_RANK];
    size_t sa[MAX_RANK], sb[MAX_RANK];
    int same;
};

struct vt_tflite {
    struct tensor *t;
    int nt;
    struct op *ops;
    int nops;
    int input, output;
    float mean[3], std[3]; /* input normalisation: (v - mean) / std per channel */
    int norm_from_metadata;
    size_t arena;   /* floats of activations */
    size_t scratch; /* floats of im2col scratch */
    uint64_t macs;
};

struct vt_tflite_ctx {
    const struct vt_tflite *m;
    float *arena, *scratch;
};

/* clang-format off */
static const char *const op_names[] = {
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D",
    "DEPTH_TO_SPACE", "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED",
    "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION",
    "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1", "RELU6",
    "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH",
    "CONCAT_EMBEDDINGS", "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD",
    "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND",
    "TRANSPOSE", "MEAN", "SUB", "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM",
    "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT", "LOG_SOFTMAX",
    "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM", "ARG_MAX",
    "MINIMUM", "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT",
    "SLICE", "SIN", "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL",
    "NOT_EQUAL", "LOG", "SUM", "SQRT", "RSQRT", "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT",
    "REDUCE_PROD", "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT",
    "UNPACK", "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL",
    "FLOOR_MOD", "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE",
    "MIRROR_PAD", "ABS", "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS",
    "WHERE", "RANK", "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG",
    "ROUND", "HARD_SWISH", "IF", "WHILE", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5",
    "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM", "BATCH_MATMUL",
};
/* clang-format on */

static const char *const type_names[] = {"FLOAT32",   "FLOAT16", "INT32",  "UINT8",
                                         "INT64",     "STRING",  "BOOL",   "INT16",
                                         "COMPLEX64", "INT8",    "FLOAT64"};

void vt_tflite_free(struct vt_tflite *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nt; i++)
        free(m->t[i].name);
    for (int i = 0; i < m->nops; i++) {
        free(m->ops[i].w);
        free(m->ops[i].bias);
        free(m->ops[i].ka);
        free(m->ops[i].kb);
    }
    free(m->t);
    free(m->ops);
    free(m);
}

#define BAD(...) vt_err(err, errlen, VT_EINVAL, __VA_ARGS__)

static int parse_tensors(const struct fb *f, const struct fbt *sg, size_t bufs, uint32_t nbufs,
                         struct vt_tflite *m, char *err, size_t errlen)
{
    size_t start;
    uint32_t n;
    if (fb_vec(f, sg, 0, 4, &start, &n) != 1)
        return BAD("tflite: subgraph tensors missing or out of range");
    if (n > MAX_TENSORS)
        return BAD("tflite: %u tensors (limit %d)", n, MAX_TENSORS);
    m->t = vt_xcalloc(n ? n : 1, sizeof(*m->t));
    m->nt = (int)n;
    for (uint32_t i = 0; i < n; i++) {
        struct tensor *t = &m->t[i];
        struct fbt tt, bt;
        size_t sstart, nlen;
        uint32_t rank, bi;
        uint8_t type;
        const char *name;
        int r;
        t->producer = -1;
        if (fb_vec_table(f, start, i, &tt))
            return BAD("tflite: tensor %u: table out of range", i);
        r = fb_str(f, &tt, 3, &name, &nlen);
        if (r < 0)
            return BAD("tflite: tensor %u: name out of range", i);
        t->name = r ? vt_xstrdup(name) : vt_xasprintf("tensor_%u", i);
        r = fb_vec(f, &tt, 0, 4, &sstart, &rank);
        if (r < 0)
            return BAD("tflite: tensor '%s': shape out of range", t->name);
        if (r == 0)
            rank = 0;
        if (rank > MAX_RANK)
            return BAD("tflite: tensor '%s': rank %u (limit %d)", t->name, rank, MAX_RANK);
        t->rank = (int)rank;
        t->count = 1;
        for (uint32_t d = 0; d < rank; d++) {
            int32_t v = (int32_t)vt_le32(f->d + sstart + 4 * (size_t)d);
            if (v <= 0 || (uint64_t)t->count * (uint64_t)v > VT_TFLITE_MAX_ELEMS)
                return BAD("tflite: tensor '%s': absurd shape (dimension %d is %d)", t->name,
                           (int)d, (int)v);
            t->dims[d] = v;
            t->count *= (size_t)v;
        }
        if (fb_u8(f, &tt, 1, 0, &type) || fb_u32(f, &tt, 2, 0, &bi))
            return BAD("tflite: tensor '%s': field out of range", t->name);
        t->type = type;
        if (bi >= nbufs)
            return BAD("tflite: tensor '%s': buffer %u of %u", t->name, bi, nbufs);
        if (fb_vec_table(f, bufs, bi, &bt))
            return BAD("tflite: buffer %u: table out of range", bi);
        size_t dstart;
        uint32_t dlen;
        uint64_t boff, bsize;
        r = fb_vec(f, &bt, 0, 1, &dstart, &dlen);
        if (r < 0 || fb_u64(f, &bt, 1, &boff) || fb_u64(f, &bt, 2, &bsize))
            return BAD("tflite: buffer %u: data out of range", bi);
        if (r == 1 && dlen) {
            t->raw = f->d + dstart;
            t->raw_len = dlen;
        } else if (boff > 1) { /* data after the flatbuffer, for models over 2 GB */
            if (boff > f->n || bsize > f->n - boff)
                return BAD("tflite: buffer %u: data out of range", bi);
            t->raw = f->d + boff;
            t->raw_len = (size_t)bsize;
        }
    }
    return 0;
}

static int is_const(const struct tensor *t)
{
    return t->raw != NULL;
}

/* Copy a constant float32 tensor's bytes into floats. */
static float *const_floats(const struct tensor *t)
{
    float *v = vt_xmalloc(t->count * sizeof(float) + 1);
    memcpy(v, t->raw, t->count * sizeof(float));
    return v;
}

/* A tensor used as data by an operator: float32, and a constant of the right size. */
static int check_data(const struct vt_tflite *m, int i, const char *opname, char *err,
                      size_t errlen)
{
    const struct tensor *t = &m->t[i];
    if (t->type != T_FLOAT32) {
        const char *tn = t->type >= 0 && (size_t)t->type < VT_ARRAY_LEN(type_names)
                             ? type_names[t->type]
                             : "unknown";
        return BAD("tflite: tensor '%s' of %s is %s (only FLOAT32 is supported)", t->name, opname,
                   tn);
    }
    if (t->raw && t->raw_len != t->count * sizeof(float))
        return BAD("tflite: tensor '%s': buffer of %zu bytes for %zu floats", t->name, t->raw_len,
                   t->count);
    return 0;
}

/* A 4-D [1, h, w, c] activation. */
static int nhwc(const struct tensor *t, int *h, int *w, int *c)
{
    if (t->rank != 4 || t->dims[0] != 1)
        return -1;
    *h = t->dims[1];
    *w = t->dims[2];
    *c = t->dims[3];
    return 0;
}

/* Output size and leading padding of one spatial axis, as TFLite computes them. */
static int axis(int in, int k, int stride, int dil, int padding, int *out, int *pad)
{
    if (k <= 0 || stride <= 0 || dil <= 0 || k > 4096 || stride > 4096 || dil > 4096)
        return -1;
    int eff = (k - 1) * dil + 1;
    int o = padding == PAD_SAME ? (in + stride - 1) / stride : (in - eff + stride) / stride;
    if (padding == PAD_VALID && in < eff)
        return -1;
    if (o <= 0)
        return -1;
    int total = (o - 1) * stride + eff - in;
    *out = o;
    *pad = total > 0 ? total / 2 : 0;
    return 0;
}

static int act_ok(int act)
{
    return act == ACT_NONE || act == ACT_RELU || act == ACT_RELU_N1_TO_1 || act == ACT_RELU6;
}

static int setup_window(struct vt_tflite *m, struct op *o, const struct fb *f,
                        const struct fbt *opt, int have_opt, int is_pool, const char *nm, char *err,
                        size_t errlen)
{
    uint8_t padding = 0, act = 0;
    int32_t sw = 1, sh = 1, dw = 1, dh = 1, mult = 1, fw = 1, fh = 1;
    int bad = 0;
    if (!have_opt)
        return BAD("tflite: %s operator without its options", nm);
    bad |= fb_u8(f, opt, 0, 0, &padding);
    bad |= fb_i32(f, opt, 1, 0, &sw);
    bad |= fb_i32(f, opt, 2, 0, &sh);
    if (o->kind == K_CONV) {
        bad |= fb_u8(f, opt, 3, 0, &act);
        bad |= fb_i32(f, opt, 4, 1, &dw);
        bad |= fb_i32(f, opt, 5, 1, &dh);
    } else if (o->kind == K_DWCONV) {
        bad |= fb_i32(f, opt, 3, 0, &mult);
        bad |= fb_u8(f, opt, 4, 0, &act);
        bad |= fb_i32(f, opt, 5, 1, &dw);
        bad |= fb_i32(f, opt, 6, 1, &dh);
    } else {
        bad |= fb_i32(f, opt, 3, 0, &fw);
        bad |= fb_i32(f, opt, 4, 0, &fh);
        bad |= fb_u8(f, opt, 5, 0, &act);
    }
    if (bad)
        return BAD("tflite: %s options out of range", nm);
    if (padding != PAD_SAME && padding != PAD_VALID)
        return BAD("tflite: %s padding %d unknown", nm, padding);
    if (!act_ok(act))
        return BAD("tflite: %s fused activation %d unsupported", nm, act);
    o->sw = sw;
    o->sh = sh;
    o->dw = dw;
    o->dh = dh;
    o->act = act;
    const struct tensor *in = &m->t[o->in], *out = &m->t[o->out];
    if (nhwc(in, &o->ih, &o->iw, &o->ic) || nhwc(out, &o->oh, &o->ow, &o->oc))
        return BAD("tflite: %s input or output is not [1, h, w, c]", nm);
    if (is_pool) {
        o->kh = fh;
        o->kw = fw;
    }
    int eoh, eow;
    if (axis(o->ih, o->kh, sh, dh, padding, &eoh, &o->pad_t) ||
        axis(o->iw, o->kw, sw, dw, padding, &eow, &o->pad_l))
        return BAD("tflite: %s window %dx%d stride %dx%d does not fit its input %dx%d", nm, o->kw,
                   o->kh, sw, sh, o->iw, o->ih);
    if (eoh != o->oh || eow != o->ow)
        return BAD("tflite: %s output %dx%d where the window gives %dx%d", nm, o->ow, o->oh, eow,
                   eoh);
    if (o->kind == K_DWCONV) {
        if (mult <= 0 || (int64_t)o->ic * mult != o->oc)
            return BAD("tflite: %s depth multiplier %d does not turn %d channels into %d", nm,
                       (int)mult, o->ic, o->oc);
        o->mult = mult;
    } else if (o->kind == K_AVGPOOL) {
        if (o->ic != o->oc)
            return BAD("tflite: %s changes channels %d to %d", nm, o->ic, o->oc);
    }
    return 0;
}

/* Bias of a conv (input 2, optional): oc floats, zeros when absent. */
static int read_bias(struct vt_tflite *m, struct op *o, const int32_t *ins, uint32_t nin,
                     const char *nm, char *err, size_t errlen)
{
    o->bias = vt_xcalloc((size_t)o->oc + 1, sizeof(float));
    if (nin < 3 || ins[2] < 0)
        return 0;
    const struct tensor *b = &m->t[ins[2]];
    if (!is_const(b) || b->count != (size_t)o->oc)
        return BAD("tflite: %s bias '%s' is not a constant of %d floats", nm, b->name, o->oc);
    memcpy(o->bias, b->raw, (size_t)o->oc * sizeof(float));
    return 0;
}

static int setup_conv(struct vt_tflite *m, struct op *o, const int32_t *ins, uint32_t nin,
                      const char *nm, char *err, size_t errlen)
{
    const struct tensor *w = &m->t[ins[1]];
    if (!is_const(w) || w->rank != 4)
        return BAD("tflite: %s filter '%s' is not a constant 4-D tensor", nm, w->name);
    const struct tensor *out = &m->t[o->out], *in = &m->t[o->in];
    if (out->rank != 4 || in->rank != 4)
        return BAD("tflite: %s input or output is not [1, h, w, c]", nm);
    if (o->kind == K_CONV) {
        if (w->dims[0] != out->dims[3] || w->dims[3] != in->dims[3])
            return BAD("tflite: %s filter '%s' does not match %d to %d channels", nm, w->name,
                       in->dims[3], out->dims[3]);
    } else if (w->dims[0] != 1 || w->dims[3] != out->dims[3]) {
        return BAD("tflite: %s filter '%s' is not [1, h, w, %d]", nm, w->name, out->dims[3]);
    }
    o->kh = w->dims[1];
    o->kw = w->dims[2];
    return 0;
}

/* Pack a conv's filter [oc][kh][kw][ic] into GEMM panels [oc/NR][k][NR] (zero padded). */
static void pack_conv(struct op *o, const struct tensor *w)
{
    size_t k = (size_t)o->kh * o->kw * o->ic, np = ((size_t)o->oc + NR - 1) / NR;
    const float *src = (const float *)(const void *)w->raw;
    float *p = vt_xcalloc(np * k * NR + 1, sizeof(float));
    for (int oc = 0; oc < o->oc; oc++)
        for (size_t j = 0; j < k; j++) {
            float v;
            memcpy(&v, (const uint8_t *)src + ((size_t)oc * k + j) * 4, 4);
            p[((size_t)(oc / NR) * k + j) * NR + oc % NR] = v;
        }
    o->w = p;
}

/*
 * ADD of two float32 tensors, as TFLite broadcasts them: shapes aligned on their last
 * axis, each axis equal or 1 in one of them, and the output has the broadcast shape
 * exactly. A constant operand is copied; the strides say where each output element's
 * operands are.
 */
static int setup_add(struct vt_tflite *m, struct op *o, const struct fb *f, const struct fbt *opt,
                     int have_opt, const int32_t *ins, const char *nm, char *err, size_t errlen)
{
    const struct tensor *a = &m->t[ins[0]], *b = &m->t[ins[1]], *out = &m->t[o->out];
    uint8_t act = 0;

    if (have_opt && fb_u8(f, opt, 0, 0, &act))
        return BAD("tflite: %s options out of range", nm);
    if (!act_ok(act))
        return BAD("tflite: %s fused activation %d unsupported", nm, act);
    o->act = act;
    o->in2 = ins[1];
    if (b->producer < 0 && !b->is_input && !is_const(b))
        return BAD("tflite: %s reads tensor '%s' before anything writes it", nm, b->name);
    int r = a->rank > b->rank ? a->rank : b->rank;
    if (out->rank != r)
        return BAD("tflite: %s of ranks %d and %d writes a tensor of rank %d", nm, a->rank, b->rank,
                   out->rank);
    size_t stra = 1, strb = 1;
    o->rank = r;
    o->same = a->rank == r && b->rank == r;
    for (int k = r - 1; k >= 0; k--) {
        int ia = k - (r - a->rank), ib = k - (r - b->rank);
        int da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        int dout = da > db ? da : db;
        if ((da != db && da != 1 && db != 1) || out->dims[k] != dout)
            return BAD("tflite: %s of '%s' and '%s': shapes do not broadcast to '%s'", nm, a->name,
                       b->name, out->name);
        o->dims[k] = dout;
        o->sa[k] = da == 1 && dout > 1 ? 0 : stra;
        o->sb[k] = db == 1 && dout > 1 ? 0 : strb;
        o->same &= da == dout && db == dout;
        stra *= (size_t)da;
        strb *= (size_t)db;
    }
    o->count = out->count;
    if (is_const(a))
        o->ka = const_floats(a);
    if (is_const(b))
        o->kb = const_floats(b);
    m->macs += o->count;
    return 0;
}

/* The kernel for builtin operator code; an error names an operator we do not run. */
static int op_kind_of(int32_t code, const char *nm, enum op_kind *kind, char *err, size_t errlen)
{
    switch (code) {
    case B_CONV_2D:
        *kind = K_CONV;
        return 0;
    case B_DEPTHWISE_CONV_2D:
        *kind = K_DWCONV;
        return 0;
    case B_AVERAGE_POOL_2D:
        *kind = K_AVGPOOL;
        return 0;
    case B_SQUEEZE:
    case B_RESHAPE:
        *kind = K_COPY;
        return 0;
    case B_SOFTMAX:
        *kind = K_SOFTMAX;
        return 0;
    case B_ADD:
        *kind = K_ADD;
        return 0;
    default:
        if (nm)
            return BAD("tflite: unsupported operator '%s'", nm);
        return BAD("tflite: unsupported operator %d", (int)code);
    }
}

/* The options table type a kernel's operator carries (a copy takes any). */
static int opt_type_fits(enum op_kind kind, uint8_t opt_type)
{
    switch (kind) {
    case K_CONV:
        return opt_type == O_CONV;
    case K_DWCONV:
        return opt_type == O_DWCONV;
    case K_AVGPOOL:
        return opt_type == O_POOL;
    case K_SOFTMAX:
        return opt_type == O_SOFTMAX;
    case K_ADD:
        return opt_type == O_ADD;
    default:
        return 1;
    }
}

/*
 * Operator i's tensors (nin input indices at istart, the output at ostart) into o and ins,
 * checked: in range, read after written, the output a fresh activation, their data sound.
 */
static int link_tensors(const struct fb *f, struct vt_tflite *m, struct op *o, uint32_t i,
                        size_t istart, uint32_t nin, size_t ostart, uint32_t nout, int32_t ins[3],
                        const char *nm, char *err, size_t errlen)
{
    uint32_t want_in = o->kind == K_CONV || o->kind == K_DWCONV || o->kind == K_ADD ? 2 : 1;
    if (nin < want_in || nin > (o->kind == K_ADD ? 2u : 3u) || nout != 1)
        return BAD("tflite: %s with %u inputs and %u outputs", nm, nin, nout);
    for (uint32_t j = 0; j < nin; j++) {
        ins[j] = (int32_t)vt_le32(f->d + istart + 4 * (size_t)j);
        if (ins[j] < -1 || ins[j] >= m->nt || (ins[j] == -1 && j < want_in))
            return BAD("tflite: %s input %u is tensor %d of %d", nm, j, (int)ins[j], m->nt);
    }
    int32_t outi = (int32_t)vt_le32(f->d + ostart);
    if (outi < 0 || outi >= m->nt)
        return BAD("tflite: %s output is tensor %d of %d", nm, (int)outi, m->nt);
    o->in = ins[0];
    o->out = outi;
    struct tensor *tin = &m->t[o->in], *tout = &m->t[o->out];
    /* data flows in order: the input is the graph's input, a constant, or made before */
    if (!tin->is_input && !is_const(tin) && tin->producer < 0)
        return BAD("tflite: %s reads tensor '%s' before anything writes it", nm, tin->name);
    if (is_const(tout) || tout->is_input || tout->producer >= 0 || o->out == o->in ||
        (o->kind == K_ADD && o->out == ins[1]))
        return BAD("tflite: %s writes tensor '%s', which is not a fresh activation", nm,
                   tout->name);
    int rc = check_data(m, o->in, nm, err, errlen);
    if (!rc)
        rc = check_data(m, o->out, nm, err, errlen);
    for (uint32_t j = 1; !rc && j < nin && o->kind != K_COPY; j++)
        if (ins[j] >= 0)
            rc = check_data(m, ins[j], nm, err, errlen);
    if (rc)
        return rc;
    tout->producer = (int)i;
    return 0;
}

/* A convolution, plain or depthwise: weights, window, bias, and for a plain one the packed
 * weights and the im2col scratch it needs. */
static int setup_conv_op(struct vt_tflite *m, struct op *o, const struct fb *f,
                         const struct fbt *opt, int have_opt, const int32_t *ins, uint32_t nin,
                         const char *nm, char *err, size_t errlen)
{
    int rc = setup_conv(m, o, ins, nin, nm, err, errlen);
    if (!rc)
        rc = setup_window(m, o, f, opt, have_opt, 0, nm, err, errlen);
    if (!rc)
        rc = read_bias(m, o, ins, nin, nm, err, errlen);
    if (rc)
        return rc;
    if (o->kind != K_CONV) {
        o->w = const_floats(&m->t[ins[1]]);
        m->macs += (uint64_t)o->oh * o->ow * o->oc * (uint64_t)(o->kh * o->kw);
        return 0;
    }
    size_t k = (size_t)o->kh * o->kw * o->ic, px = (size_t)o->oh * o->ow;
    pack_conv(o, &m->t[ins[1]]);
    o->direct =
        o->kh == 1 && o->kw == 1 && o->sh == 1 && o->sw == 1 && o->pad_t == 0 && o->pad_l == 0;
    if (!o->direct) {
        if (k * px > VT_TFLITE_MAX_ARENA)
            return BAD("tflite: %s im2col of %zu x %zu floats", nm, px, k);
        if (k * px > m->scratch)
            m->scratch = k * px;
    }
    m->macs += (uint64_t)px * k * (uint64_t)o->oc;
    return 0;
}

/* A softmax over the last dimension, with its beta (1 unless the options say). */
static int setup_softmax(struct op *o, const struct fb *f, const struct fbt *opt, int have_opt,
                         const struct tensor *tin, const struct tensor *tout, const char *nm,
                         char *err, size_t errlen)
{
    float beta = 1.0f;
    size_t at;
    int r = have_opt ? fb_field(f, opt, 0, 4, &at) : 0;
    if (r < 0)
        return BAD("tflite: %s options out of range", nm);
    if (r == 1) {
        uint32_t u = vt_le32(f->d + at);
        memcpy(&beta, &u, 4);
    }
    if (!isfinite(beta) || tin->count != tout->count || tin->rank < 1 || tout->rank != tin->rank)
        return BAD("tflite: %s beta or shapes do not fit", nm);
    o->beta = beta;
    o->cols = tin->dims[tin->rank - 1];
    o->rows = tin->count / (size_t)o->cols;
    return 0;
}

/* What o's kernel needs, from its tensors and options (have_opt: opt was read). */
static int setup_op(struct vt_tflite *m, struct op *o, const struct fb *f, const struct fbt *opt,
                    int have_opt, const int32_t *ins, uint32_t nin, const char *nm, char *err,
                    size_t errlen)
{
    const struct tensor *tin = &m->t[o->in], *tout = &m->t[o->out];

    switch (o->kind) {
    case K_CONV:
    case K_DWCONV:
        return setup_conv_op(m, o, f, opt, have_opt, ins, nin, nm, err, errlen);
    case K_AVGPOOL: {
        int rc = setup_window(m, o, f, opt, have_opt, 1, nm, err, errlen);
        if (rc)
            return rc;
        m->macs += (uint64_t)o->oh * o->ow * o->oc * (uint64_t)(o->kh * o->kw);
        return 0;
    }
    case K_COPY:
        if (tin->count != tout->count)
            return BAD("tflite: %s turns %zu values into %zu", nm, tin->count, tout->count);
        o->count = tout->count;
        return 0;
    case K_SOFTMAX:
        return setup_softmax(o, f, opt, have_opt, tin, tout, nm, err, errlen);
    case K_ADD:
        return setup_add(m, o, f, opt, have_opt, ins, nm, err, errlen);
    }
    return 0;
}

/* Operator i of the subgraph's operator vector at start, appended to m->ops. */
static int parse_op(const struct fb *f, size_t start, uint32_t i, const int32_t *codes,
                    uint32_t ncodes, struct vt_tflite *m, char *err, size_t errlen)
{
    struct fbt ot, opt;
    uint32_t opcode, nin, nout;
    size_t istart, ostart;
    uint8_t opt_type;
    int32_t ins[3] = {-1, -1, -1};
    if (fb_vec_table(f, start, i, &ot) || fb_u32(f, &ot, 0, 0, &opcode) ||
        fb_vec(f, &ot, 1, 4, &istart, &nin) != 1 || fb_vec(f, &ot, 2, 4, &ostart, &nout) != 1 ||
        fb_u8(f, &ot, 3, 0, &opt_type))
        return BAD("tflite: operator %u: table, inputs or outputs out of range", i);
    int have_opt = fb_sub(f, &ot, 4, &opt);
    if (have_opt < 0)
        return BAD("tflite: operator %u: options out of range", i);
    if (opcode >= ncodes)
        return BAD("tflite: operator %u: opcode %u of %u", i, opcode, ncodes);
    int32_t code = codes[opcode];
    const char *nm = code >= 0 && (size_t)code < VT_ARRAY_LEN(op_names) ? op_names[code] : NULL;
    struct op *o = &m->ops[m->nops];
    int rc = op_kind_of(code, nm, &o->kind, err, errlen);
    if (rc)
        return rc;
    m->nops++;
    rc = link_tensors(f, m, o, i, istart, nin, ostart, nout, ins, nm, err, errlen);
    if (rc)
        return rc;
    if (have_opt && !opt_type_fits(o->kind, opt_type))
        return BAD("tflite: %s with options of type %d", nm, opt_type);
    rc = setup_op(m, o, f, &opt, have_opt == 1, ins, nin, nm, err, errlen);
    if (rc)
        return rc;
    if (m->macs > VT_TFLITE_MAX_MACS)
        return BAD("tflite: more than %llu multiply-adds per run",
                   (unsigned long long)VT_TFLITE_MAX_MACS);
    return 0;
}

static int parse_ops(const struct fb *f, const struct fbt *sg, const int32_t *codes,
                     uint32_t ncodes, struct vt_tflite *m, char *err, size_t errlen)
{
    size_t start;
    uint32_t n;
    if (fb_vec(f, sg, 3, 4, &start, &n) != 1)
        return BAD("tflite: subgraph operators missing or out of range");
    if (n == 0 || n > MAX_OPS)
        return BAD("tflite: %u operators (1 to %d)", n, MAX_OPS);
    m->ops = vt_xcalloc(n, sizeof(*m->ops));
    for (uint32_t i = 0; i < n; i++) {
        int rc = parse_op(f, start, i, codes, ncodes, m, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

/* A float vector of 1 or 3 positive-or-any finite values into v[3]. */
static int norm_vec(const struct fb *f, const struct fbt *t, int id, int positive, float v[3])
{
    size_t start;
    uint32_t n;
    if (fb_vec(f, t, id, 4, &start, &n) != 1 || (n != 1 && n != 3))
        return -1;
    for (int c = 0; c < 3; c++) {
        uint32_t u = vt_le32(f->d + start + 4 * (size_t)(n == 3 ? c : 0));
        memcpy(&v[c], &u, 4);
        if (!isfinite(v[c]) || (positive && !(v[c] > 0)))
            return -1;
    }
    return 0;
}

/*
 * The input normalisation from the TFLite metadata (metadata_schema.fbs, identifier
 * "M001", in the buffer of the model's metadata entry "TFLITE_METADATA"): ModelMetadata
 * .subgraph_metadata[0].input_tensor_metadata[0].process_units[], the unit whose options
 * are NormalizationOptions (mean, std). 0 with m->mean/std set or left alone (none
 * there), -1 when the metadata is there but malformed.
 */
static int parse_norm(const struct fb *f, const struct fbt *model, size_t bufs, uint32_t nbufs,
                      struct vt_tflite *m)
{
    size_t start;
    uint32_t n;
    int r = fb_vec(f, model, 6, 4, &start, &n);
    if (r <= 0)
        return r;
    for (uint32_t i = 0; i < n; i++) {
        struct fbt md, bt, root, sgm, tm, pu, no;
        const char *name = NULL;
        size_t nl, dstart, at, pstart;
        uint32_t bi, dlen, nsub, nin, npu;
        if (fb_vec_table(f, start, i, &md) || fb_str(f, &md, 0, &name, &nl) < 0 ||
            fb_u32(f, &md, 1, 0, &bi))
            return -1;
        if (!name || strcmp(name, "TFLITE_METADATA") != 0)
            continue;
        if (bi >= nbufs || fb_vec_table(f, bufs, bi, &bt) ||
            fb_vec(f, &bt, 0, 1, &dstart, &dlen) != 1)
            return -1;
        struct fb g = {f->d + dstart, dlen};
        if (dlen < 8 || memcmp(g.d + 4, "M001", 4) != 0 || fb_deref(&g, 0, &at) ||
            fb_table(&g, at, &root))
            return -1;
        r = fb_vec(&g, &root, 3, 4, &pstart, &nsub);
        if (r < 0)
            return -1;
        if (r == 0 || nsub == 0)
            return 0;
        if (fb_vec_table(&g, pstart, 0, &sgm) || (r = fb_vec(&g, &sgm, 2, 4, &pstart, &nin)) < 0)
            return -1;
        if (r == 0 || nin == 0)
            return 0;
        if (fb_vec_table(&g, pstart, 0, &tm) || (r = fb_vec(&g, &tm, 4, 4, &pstart, &npu)) < 0)
            return -1;
        for (uint32_t k = 0; r == 1 && k < npu; k++) {
            uint8_t type;
            if (fb_vec_table(&g, pstart, k, &pu) || fb_u8(&g, &pu, 0, 0, &type))
                return -1;
            if (type != 1) /* NormalizationOptions */
                continue;
            if (fb_sub(&g, &pu, 1, &no) != 1 || norm_vec(&g, &no, 0, 0, m->mean) ||
                norm_vec(&g, &no, 1, 1, m->std))
                return -1;
            m->norm_from_metadata = 1;
            return 0;
        }
        return 0;
    }
    return 0;
}

int vt_tflite_input_norm(const struct vt_tflite *m, float mean[3], float std[3])
{
    memcpy(mean, m->mean, sizeof(m->mean));
    memcpy(std, m->std, sizeof(m->std));
    return m->norm_from_metadata;
}

/* The builtin code of each of the ncodes operator codes at cstart into codes (ncodes + 1). */
static int read_op_codes(const struct fb *f, size_t cstart, uint32_t ncodes, int32_t *codes,
                         char *err, size_t errlen)
{
    struct fbt ct;

    for (uint32_t i = 0; i < ncodes; i++) {
        uint8_t dep;
        int32_t code;
        if (fb_vec_table(f, cstart, i, &ct) || fb_u8(f, &ct, 0, 0, &dep) ||
            fb_i32(f, &ct, 3, 0, &code))
            return BAD("tflite: operator code %u out of range", i);
        /* schema 3a: builtin_code is new, deprecated_builtin_code is what old files set
         * (a signed byte up to 127); the real code is the larger of the two */
        codes[i] = (int8_t)dep > code ? (int8_t)dep : code;
        if (codes[i] == B_CUSTOM) {
            const char *s;
            size_t sl;
            if (fb_str(f, &ct, 1, &s, &sl) == 1)
                return BAD("tflite: unsupported operator 'CUSTOM' (%.60s)", s);
        }
    }
    return 0;
}

/* The subgraph's one input (a float32 [1, h, w, 3] image) and its output. */
static int parse_io(const struct fb *f, const struct fbt *sg, struct vt_tflite *m, char *err,
                    size_t errlen)
{
    size_t istart, ostart;
    uint32_t nin, nout;
    if (fb_vec(f, sg, 1, 4, &istart, &nin) != 1 || fb_vec(f, sg, 2, 4, &ostart, &nout) != 1 ||
        nin != 1 || nout < 1)
        return BAD("tflite: subgraph needs one input and an output");
    m->input = (int32_t)vt_le32(f->d + istart);
    m->output = (int32_t)vt_le32(f->d + ostart);
    if (m->input < 0 || m->input >= m->nt || m->output < 0 || m->output >= m->nt)
        return BAD("tflite: subgraph input or output tensor out of range");
    struct tensor *ti = &m->t[m->input];
    int h, w, c;
    if (nhwc(ti, &h, &w, &c) || c != 3 || ti->type != T_FLOAT32 || is_const(ti))
        return BAD("tflite: input '%s' is not a float32 [1, h, w, 3] image", ti->name);
    ti->is_input = 1;
    return 0;
}

/* Lay the activations out one after the other (no reuse: a few MB for MobileNet). */
static int lay_out_arena(struct vt_tflite *m, char *err, size_t errlen)
{
    for (int i = 0; i < m->nt; i++) {
        struct tensor *t = &m->t[i];
        if (t->producer >= 0 || t->is_input) {
            t->off = m->arena;
            m->arena += (t->count + 15) & ~(size_t)15;
            if (m->arena > VT_TFLITE_MAX_ARENA)
                return BAD("tflite: activations exceed %u floats", VT_TFLITE_MAX_ARENA);
        }
        t->raw = NULL; /* the file's bytes are not ours past this call */
    }
    return 0;
}

int vt_tflite_parse(const uint8_t *data, size_t len, struct vt_tflite **out, char *err,
                    size_t errlen)
{
    struct fb f = {data, len};
    struct fbt model, sg;
    struct vt_tflite *m = NULL;
    int32_t *codes = NULL;
    size_t cstart, sgstart, bstart, at;
    uint32_t ncodes, nsg, nbufs, version;
    int rc;

    if (len < 8 || memcmp(data + 4, "TFL3", 4) != 0)
        return BAD("tflite: not a TFLite model (no TFL3 identifier)");
    if (fb_deref(&f, 0, &at) || fb_table(&f, at, &model))
        return BAD("tflite: root table out of range");
    if (fb_u32(&f, &model, 0, 0, &version))
        return BAD("tflite: version out of range");
    if (version != 3)
        return BAD("tflite: schema version %u (3 is supported)", version);
    if (fb_vec(&f, &model, 1, 4, &cstart, &ncodes) != 1 ||
        fb_vec(&f, &model, 2, 4, &sgstart, &nsg) != 1 ||
        fb_vec(&f, &model, 4, 4, &bstart, &nbufs) != 1)
        return BAD("tflite: operator codes, subgraphs or buffers missing or out of range");
    if (nsg < 1)
        return BAD("tflite: no subgraph");
    codes = vt_xcalloc(ncodes + 1, sizeof(*codes));
    rc = read_op_codes(&f, cstart, ncodes, codes, err, errlen);
    if (rc)
        goto out;
    if (fb_vec_table(&f, sgstart, 0, &sg)) {
        rc = BAD("tflite: subgraph out of range");
        goto out;
    }
    m = vt_xcalloc(1, sizeof(*m));
    for (int ch = 0; ch < 3; ch++)
        m->mean[ch] = m->std[ch] = 127.5f;
    if (parse_norm(&f, &model, bstart, nbufs, m)) {
        rc = BAD("tflite: metadata (input normalisation) out of range");
        goto out;
    }
    rc = parse_tensors(&f, &sg, bstart, nbufs, m, err, errlen);
    if (!rc)
        rc = parse_io(&f, &sg, m, err, errlen);
    if (!rc)
        rc = parse_ops(&f, &sg, codes, ncodes, m, err, errlen);
    if (rc)
        goto out;
    if (m->t[m->output].producer < 0) {
        rc = BAD("tflite: output '%s' is made by no operator", m->t[m->output].name);
        goto out;
    }
    rc = lay_out_arena(m, err, errlen);
    if (rc)
        goto out;
    *out = m;
    m = NULL;
out:
    free(codes);
    vt_tflite_free(m);
    return rc;
}

int vt_tflite_open(const char *path, struct vt_tflite **out, char *err, size_t errlen)
{
    char *data;
    size_t len;
    int rc =
        vt_read_file_capped(path, "tflite model", VT_TFLITE_MAX_FILE, &data, &len, err, errlen);
    if (rc)
        return rc;
    char sub[384];
    rc = vt_tflite_parse((const uint8_t *)data, len, out, sub, sizeof(sub));
    if (rc)
        vt_err(err, errlen, rc, "'%s': %s", path, sub);
    free(data);
    return rc;
}

void vt_tflite_input_shape(const struct vt_tflite *m, int *h, int *w, int *c)
{
    const struct tensor *t = &m->t[m->input];
    *h = t->dims[1];
    *w = t->dims[2];
    *c = t->dims[3];
}

int vt_tflite_tensor_find(const struct vt_tflite *m, const char *name)
{
    for (int i = 0; i < m->nt; i++)
        if (strcmp(m->t[i].name, name) == 0)
            return i;
    return -1;
}

const char *vt_tflite_tensor_name(const struct vt_tflite *m, int i)
{
    return m->t[i].name;
}

size_t vt_tflite_tensor_count(const struct vt_tflite *m, int i)
{
    return m->t[i].count;
}

int vt_tflite_tensor_is_activation(const struct vt_tflite *m, int i)
{
    return i >= 0 && i < m->nt && m->t[i].producer >= 0;
}

int vt_tflite_output(const struct vt_tflite *m)
{
    return m->output;
}

int vt_tflite_default_embedding(const struct vt_tflite *m)
{
    int t = m->output;
    while (t >= 0 && m->t[t].producer >= 0) {
        const struct op *o = &m->ops[m->t[t].producer];
        if (o->kind != K_COPY && o->kind != K_SOFTMAX)
            return m->t[o->in].producer >= 0 ? o->in : -1;
        t = o->in;
    }
    return -1;
}

uint64_t vt_tflite_macs(const struct vt_tflite *m)
{
    return m->macs;
}

struct vt_tflite_ctx *vt_tflite_ctx_new(const struct vt_tflite *m)
{
    struct vt_tflite_ctx *c = vt_xcalloc(1, sizeof(*c));
    c->m = m;
    c->arena = vt_xcalloc(m->arena + 16, sizeof(float));
    c->scratch = vt_xcalloc(m->scratch + 16, sizeof(float));
    return c;
}

void vt_tflite_ctx_free(struct vt_tflite_ctx *c)
{
    if (!c)
        return;
    free(c->arena);
    free(c->scratch);
    free(c);
}

const float *vt_tflite_tensor_data(const struct vt_tflite_ctx *c, int i)
{
    return c->arena + c->m->t[i].off;
}

/* ---- kernels ---- */

/*
 * The hot kernels are in tflite_kern.inc, built twice: on 16-byte vectors for every CPU
 * (SSE2, NEON) and, on x86-64, on 32-byte vectors for AVX2 + FMA, picked at run time
 * when the CPU has them (about 15x faster here than 32-byte vectors lowered to SSE2 would
 * be). GCC in ISO C mode does not fuse a * b + c; the AVX2 build asks it to.
 */
typedef float vf4 __attribute__((vector_size(16)));
typedef int32_t vi4 __attribute__((vector_size(16)));

/* Loads and stores through memcpy (unaligned, no aliasing trouble); macros rather than
 * functions, since passing wide vectors by value changes the ABI (-Wpsabi). */
#define VLD(v, p) memcpy(&(v), (p), sizeof(v))
#define VST(p, v) memcpy((p), &(v), sizeof(v))
/* v = min(max(v, l), h) elementwise, l and h vectors, VI the integer vector type */
#define VCLAMP(v, l, h, VI)                                                                        \
    do {                                                                                           \
        VI m_ = (v) < (l);                                                                         \
        (v) = (__typeof__(v))(((VI)(v) & ~m_) | ((VI)(l)&m_));                                     \
        m_ = (v) > (h);                                                                            \
        (v) = (__typeof__(v))(((VI)(v) & ~m_) | ((VI)(h)&m_));                                     \
    } while (0)

#define KVF vf4
#define KVI vi4
#define KW  4
#define KATTR
#define KNAME(x) x##_v4
#include "ml/tflite_kern.inc"
#undef KVF
#undef KVI
#undef KW
#undef KATTR
#undef KNAME

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VT_TFLITE_AVX2 1
typedef float vf8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));
#define KVF vf8
#define KVI vi8
#define KW  8
#if defined(__clang__)
#define KATTR __attribute__((target("avx2,fma")))
#else
#define KATTR __attribute__((target("avx2,fma"), optimize("fp-contract=fast")))
#endif
#define KNAME(x) x##_v8
#include "ml/tflite_kern.inc"
#undef KVF
#undef KVI
#undef KW
#undef KATTR
#undef KNAME
#endif

static int generic_only;

void vt_tflite_use_generic_kernels(int on)
{
    generic_only = on;
}

static int have_avx2(void)
{
#ifdef VT_TFLITE_AVX2
    if (generic_only)
        return 0;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

static inline float act1(float v, int act)
{
    switch (act) {
    case ACT_RELU:
        return v > 0 ? v : 0;
    case ACT_RELU6:
        return v > 0 ? (v < 6 ? v : 6) : 0;
    case ACT_RELU_N1_TO_1:
        return v > -1 ? (v < 1 ? v : 1) : -1;
    default:
        return v;
    }
}

static void act_range(int act, float *lo, float *hi)
{
    *lo = act == ACT_RELU || act == ACT_RELU6 ? 0 : act == ACT_RELU_N1_TO_1 ? -1 : -INFINITY;
    *hi = act == ACT_RELU6 ? 6 : act == ACT_RELU_N1_TO_1 ? 1 : INFINITY;
}

static void gemm_packed(int m, int n, int k, const float *a, size_t lda, const float *bp,
                        const float *bias, float lo, float hi, float *c, size_t ldc)
{
#ifdef VT_TFLITE_AVX2
    if (have_avx2()) {
        gemm_v8(m, n, k, a, lda, bp, bias, lo, hi, c, ldc);
        return;
    }
#endif
    gemm_v4(m, n, k, a, lda, bp, bias, lo, hi, c, ldc);
}

/* Rows of the im2col matrix: one per output pixel, kh*kw*ic values (zeros off the edge). */
static void im2col(const struct op *o, const float *in, float *col)
{
    size_t k = (size_t)o->kh * o->kw * o->ic;
    for (int oy = 0; oy < o->oh; oy++)
        for (int ox = 0; ox < o->ow; ox++) {
            float *row = col + ((size_t)oy * o->ow + ox) * k;
            for (int ky = 0; ky < o->kh; ky++) {
                int iy = oy * o->sh - o->pad_t + ky * o->dh;
                for (int kx = 0; kx < o->kw; kx++) {
                    int ix = ox * o->sw - o->pad_l + kx * o->dw;
                    float *dst = row + ((size_t)ky * o->kw + kx) * o->ic;
                    if (iy < 0 || iy >= o->ih || ix < 0 || ix >= o->iw)
                        memset(dst, 0, (size_t)o->ic * sizeof(float));
                    else
                        memcpy(dst, in + ((size_t)iy * o->iw + ix) * o->ic,
                               (size_t)o->ic * sizeof(float));
                }
            }
        }
}

static void run_conv(const struct op *o, const float *in, float *out, float *scratch)
{
    float lo, hi;
    act_range(o->act, &lo, &hi);
    int k = o->kh * o->kw * o->ic, m = o->oh * o->ow;
    const float *a = in;
    if (!o->direct) {
        im2col(o, in, scratch);
        a = scratch;
    }
    gemm_packed(m, o->oc, k, a, (size_t)k, o->w, o->bias, lo, hi, out, (size_t)o->oc);
}

static void run_dwconv(const struct op *o, const float *in, float *out)
{
    float lo, hi;
    act_range(o->act, &lo, &hi);
#ifdef VT_TFLITE_AVX2
    if (o->mult == 1 && o->oc % 8 == 0 && have_avx2()) {
        dw_v8(o, in, out, lo, hi);
        return;
    }
#endif
    if (o->mult == 1 && o->oc % 4 == 0) {
        dw_v4(o, in, out, lo, hi);
        return;
    }
    for (int oy = 0; oy < o->oh; oy++)
        for (int ox = 0; ox < o->ow; ox++)
            for (int oc = 0; oc < o->oc; oc++) {
                int ic = oc / o->mult;
                float acc = o->bias[oc];
                for (int ky = 0; ky < o->kh; ky++) {
                    int iy = oy * o->sh - o->pad_t + ky * o->dh;
                    if (iy < 0 || iy >= o->ih)
                        continue;
                    for (int kx = 0; kx < o->kw; kx++) {
                        int ix = ox * o->sw - o->pad_l + kx * o->dw;
                        if (ix < 0 || ix >= o->iw)
                            continue;
                        acc += in[((size_t)iy * o->iw + ix) * o->ic + ic] *
                               o->w[((size_t)ky * o->kw + kx) * o->oc + oc];
                    }
                }
                out[((size_t)oy * o->ow + ox) * o->oc + oc] = act1(acc, o->act);
            }
}

/* Average over the window's cells inside the input (TFLite does not count padding). */
static void run_avgpool(const struct op *o, const float *in, float *out)
{
    int C = o->oc;
    for (int oy = 0; oy < o->oh; oy++)
        for (int ox = 0; ox < o->ow; ox++) {
            float *dst = out + ((size_t)oy * o->ow + ox) * C;
            int y0 = oy * o->sh - o->pad_t, x0 = ox * o->sw - o->pad_l, cells = 0;
            memset(dst, 0, (size_t)C * sizeof(float));
            for (int y = y0 < 0 ? 0 : y0; y < y0 + o->kh && y < o->ih; y++)
                for (int x = x0 < 0 ? 0 : x0; x < x0 + o->kw && x < o->iw; x++) {
                    const float *src = in + ((size_t)y * o->iw + x) * C;
                    for (int c = 0; c < C; c++)
                        dst[c] += src[c];
                    cells++;
                }
            float inv = cells ? 1.0f / (float)cells : 0;
            for (int c = 0; c < C; c++)
                dst[c] = act1(dst[c] * inv, o->act);
        }
}

static void run_softmax(const struct op *o, const float *in, float *out)
{
    for (size_t r = 0; r < o->rows; r++) {
        const float *x = in + r * (size_t)o->cols;
        float *y = out + r * (size_t)o->cols;
        float mx = x[0];
        for (int i = 1; i < o->cols; i++)
            mx = x[i] > mx ? x[i] : mx;
        double sum = 0;
        for (int i = 0; i < o->cols; i++) {
            y[i] = expf(o->beta * (x[i] - mx));
            sum += y[i];
        }
        float inv = sum > 0 ? (float)(1.0 / sum) : 0;
        for (int i = 0; i < o->cols; i++)
            y[i] *= inv;
    }
}

/* out = act(a + b), b (or a) broadcast along the axes where its stride is 0. */
static void run_add(const struct op *o, const float *a, const float *b, float *out)
{
    if (o->same) {
        for (size_t i = 0; i < o->count; i++)
            out[i] = act1(a[i] + b[i], o->act);
        return;
    }
    int r = o->rank, last = r - 1;
    size_t idx[MAX_RANK] = {0}, ia = 0, ib = 0, n = (size_t)o->dims[last];
    size_t la = o->sa[last], lb = o->sb[last];
    for (size_t i = 0; i < o->count; i += n) {
        for (size_t j = 0; j < n; j++)
            out[i + j] = act1(a[ia + j * la] + b[ib + j * lb], o->act);
        /* the next row: carry through the outer axes */
        for (int k = last - 1; k >= 0; k--) {
            ia += o->sa[k];
            ib += o->sb[k];
            if (++idx[k] < (size_t)o->dims[k])
                break;
            ia -= o->sa[k] * idx[k];
            ib -= o->sb[k] * idx[k];
            idx[k] = 0;
        }
    }
}

void vt_tflite_run(struct vt_tflite_ctx *c, const float *input, int stop)
{
    const struct vt_tflite *m = c->m;
    const struct tensor *ti = &m->t[m->input];
    memcpy(c->arena + ti->off, input, ti->count * sizeof(float));
    for (int i = 0; i < m->nops; i++) {
        const struct op *o = &m->ops[i];
        const float *in = c->arena + m->t[o->in].off;
        float *out = c->arena + m->t[o->out].off;
        switch (o->kind) {
        case K_CONV:
            run_conv(o, in, out, c->scratch);
            break;
        case K_DWCONV:
            run_dwconv(o, in, out);
            break;
        case K_AVGPOOL:
            run_avgpool(o, in, out);
            break;
        case K_COPY:
            memcpy(out, in, o->count * sizeof(float));
            break;
        case K_SOFTMAX:
            run_softmax(o, in, out);
            break;
        case K_ADD:
            run_add(o, o->ka ? o->ka : in, o->kb ? o->kb : c->arena + m->t[o->in2].off, out);
            break;
        }
        if (o->out == stop)
            break;
    }
}

/* Bilinear resize with half-pixel centres of RGB24 src (sw x sh) into normalised floats. */
static void bilinear(const uint8_t *rgb, int iw, int ih, size_t stride, int w, int h,
                     const float mean[3], const float std[3], float *out)
{
    float inv[3] = {1.0f / std[0], 1.0f / std[1], 1.0f / std[2]};
    float sx = (float)iw / (float)w, sy = (float)ih / (float)h;
    for (int y = 0; y < h; y++) {
        float fy = ((float)y + 0.5f) * sy - 0.5f;
        fy = fy < 0 ? 0 : fy;
        int y0 = (int)fy;
        y0 = y0 > ih - 1 ? ih - 1 : y0;
        int y1 = y0 + 1 < ih ? y0 + 1 : ih - 1;
        float wy = fy - (float)y0;
        const uint8_t *r0 = rgb + (size_t)y0 * stride, *r1 = rgb + (size_t)y1 * stride;
        for (int x = 0; x < w; x++) {
            float fx = ((float)x + 0.5f) * sx - 0.5f;
            fx = fx < 0 ? 0 : fx;
            int x0 = (int)fx;
            x0 = x0 > iw - 1 ? iw - 1 : x0;
            int x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
            float wx = fx - (float)x0;
            for (int ch = 0; ch < 3; ch++) {
                float top = r0[x0 * 3 + ch] + (r0[x1 * 3 + ch] - r0[x0 * 3 + ch]) * wx;
                float bot = r1[x0 * 3 + ch] + (r1[x1 * 3 + ch] - r1[x0 * 3 + ch]) * wx;
                float v = top + (bot - top) * wy;
                out[((size_t)y * w + x) * 3 + ch] = (v - mean[ch]) * inv[ch];
            }
        }
    }
}

void vt_tflite_image_input(const uint8_t *rgb, int iw, int ih, size_t stride, int w, int h,
                           const float mean[3], const float std[3], float *out)
{
    /* Two-tap bilinear from far above the target size would sample a few pixels and alias
     * (the same frame re-encoded at another size would embed differently): first average
     * fx x fy blocks down to less than twice the target, then resize. */
    int fx = iw / w, fy = ih / h;
    fx = fx < 1 ? 1 : fx;
    fy = fy < 1 ? 1 : fy;
    if (fx == 1 && fy == 1) {
        bilinear(rgb, iw, ih, stride, w, h, mean, std, out);
        return;
    }
    int bw = iw / fx, bh = ih / fy;
    int64_t area = (int64_t)fx * fy;
    uint8_t *box = vt_xmalloc((size_t)bw * bh * 3);
    uint64_t *acc = vt_xmalloc((size_t)bw * 3 * sizeof(*acc)); /* a 1x1 input: 2^28 * 255 */
    for (int by = 0; by < bh; by++) {
        memset(acc, 0, (size_t)bw * 3 * sizeof(*acc));
        for (int y = by * fy; y < (by + 1) * fy; y++) {
            const uint8_t *row = rgb + (size_t)y * stride;
            for (int bx = 0; bx < bw; bx++) {
                unsigned r = 0, g = 0, b = 0;
                for (int x = 0; x < fx; x++, row += 3) {
                    r += row[0];
                    g += row[1];
                    b += row[2];
                }
                acc[bx * 3] += r;
                acc[bx * 3 + 1] += g;
                acc[bx * 3 + 2] += b;
            }
        }
        for (int i = 0; i < bw * 3; i++)
            box[(size_t)by * bw * 3 + i] =
                (uint8_t)((acc[i] + (uint64_t)area / 2) / (uint64_t)area);
    }
    free(acc);
    bilinear(box, bw, bh, (size_t)bw * 3, w, h, mean, std, out);
    free(box);
}

void vt_tflite_sgemm(int m, int n, int k, const float *a, const float *b, float *c)
{
    size_t np = ((size_t)n + NR - 1) / NR;
    float *bp = vt_xcalloc(np * k * NR + 1, sizeof(float));
    float *zero = vt_xcalloc((size_t)n + NR, sizeof(float));
    for (int x = 0; x < k; x++)
        for (int j = 0; j < n; j++)
            bp[((size_t)(j / NR) * k + x) * NR + j % NR] = b[(size_t)x * n + j];
    gemm_packed(m, n, k, a, (size_t)k, bp, zero, -INFINITY, INFINITY, c, (size_t)n);
    free(bp);
    free(zero);
}
