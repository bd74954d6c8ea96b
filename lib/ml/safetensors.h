/*
 * Reader of the safetensors format (Hugging Face): an 8-byte little-endian header
 * length N, N bytes of JSON naming each tensor's dtype, shape and data_offsets (begin,
 * end relative to the byte after the header), then the data. Every input is hostile:
 * the header is capped, offsets must lie inside the file, ranges must not overlap, and
 * each tensor's byte range must equal its element count times its dtype's size, with
 * overflow checked. The file is read into memory once (or mapped); tensors point into it.
 */
#ifndef VT_SAFETENSORS_H
#define VT_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

enum vt_st_dtype {
    VT_ST_BOOL,
    VT_ST_U8,
    VT_ST_I8,
    VT_ST_I16,
    VT_ST_I32,
    VT_ST_I64,
    VT_ST_F16,
    VT_ST_BF16,
    VT_ST_F32,
    VT_ST_F64,
};

#define VT_ST_MAX_DIMS 8
/* Header JSON larger than this is refused (the Rust reference uses the same cap). */
#define VT_ST_MAX_HEADER (100u * 1024 * 1024)

struct vt_st_tensor {
    char *name;
    enum vt_st_dtype dtype;
    int ndim;
    uint64_t shape[VT_ST_MAX_DIMS];
    uint64_t count;            /* product of shape (1 for a scalar) */
    const unsigned char *data; /* little-endian elements, count of them; inside the file */
    size_t nbytes;
};

struct vt_safetensors {
    unsigned char *buf; /* the whole file (read, or mapped read-only) */
    size_t len;
    int mapped; /* buf is a mapping (vt_safetensors_map) */
    struct vt_st_tensor *tensors;
    size_t n;
};

/* Read and check the file at path (at most max_bytes). VT_ENOTFOUND when it does not
 * exist, VT_EINVAL for anything malformed, VT_EIO for read trouble; one line in err.
 * *out is caller-freed with vt_safetensors_free. */
int vt_safetensors_open(const char *path, size_t max_bytes, struct vt_safetensors **out, char *err,
                        size_t errlen);
/* The same with the file mapped (read-only, private) instead of read: tensors point
 * into the mapping and pages are read as they are touched, so a large model costs
 * memory only for what is used. A file that is truncated while mapped faults (SIGBUS)
 * when a page past its new end is touched: model files are replaced by rename (hub.c),
 * never rewritten in place. */
int vt_safetensors_map(const char *path, size_t max_bytes, struct vt_safetensors **out, char *err,
                       size_t errlen);
/* Let go of the pages of a mapped file's bytes p..p+n (those whole pages inside): they are
 * read again from the file when touched. Nothing for a file read into memory. */
void vt_safetensors_release(const struct vt_safetensors *st, const void *p, size_t n);
/* The same from len bytes at data, which are copied. */
int vt_safetensors_parse(const void *data, size_t len, struct vt_safetensors **out, char *err,
                         size_t errlen);
void vt_safetensors_free(struct vt_safetensors *st);

/* The tensor called name, or NULL. Borrowed from st. */
const struct vt_st_tensor *vt_safetensors_find(const struct vt_safetensors *st, const char *name);

/* Size in bytes of one element of dtype. */
size_t vt_st_dtype_size(enum vt_st_dtype dtype);
const char *vt_st_dtype_name(enum vt_st_dtype dtype);

/* Convert t's elements into out (t->count of them): floats from F16, BF16, F32 or F64,
 * integers from I8..I64 or U8. VT_EINVAL (naming the dtype) for a dtype that cannot be
 * converted so. */
int vt_st_to_f32(const struct vt_st_tensor *t, float *out, char *err, size_t errlen);
/* The same for the n elements from element first (VT_EINVAL when they are not all in t). */
int vt_st_to_f32_range(const struct vt_st_tensor *t, uint64_t first, uint64_t n, float *out,
                       char *err, size_t errlen);
int vt_st_to_i64(const struct vt_st_tensor *t, int64_t *out, char *err, size_t errlen);

#endif
