/*
 * The safetensors reader (safetensors.h): checks every length, offset and shape of a
 * hostile file before a tensor is handed out, and converts elements to float or int64.
 */
#include "ml/safetensors.h"

#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *name;
    enum vt_st_dtype dtype;
    size_t size;
} dtypes[] = {
    {"BOOL", VT_ST_BOOL, 1}, {"U8", VT_ST_U8, 1},   {"I8", VT_ST_I8, 1},   {"I16", VT_ST_I16, 2},
    {"I32", VT_ST_I32, 4},   {"I64", VT_ST_I64, 8}, {"F16", VT_ST_F16, 2}, {"BF16", VT_ST_BF16, 2},
    {"F32", VT_ST_F32, 4},   {"F64", VT_ST_F64, 8},
};

size_t vt_st_dtype_size(enum vt_st_dtype dtype)
{
    for (size_t i = 0; i < VT_ARRAY_LEN(dtypes); i++)
        if (dtypes[i].dtype == dtype)
            return dtypes[i].size;
    return 0;
}

const char *vt_st_dtype_name(enum vt_st_dtype dtype)
{
    for (size_t i = 0; i < VT_ARRAY_LEN(dtypes); i++)
        if (dtypes[i].dtype == dtype)
            return dtypes[i].name;
    return "?";
}

void vt_safetensors_free(struct vt_safetensors *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->n; i++)
        free(st->tensors[i].name);
    free(st->tensors);
    if (st->mapped)
        munmap(st->buf, st->len);
    else
        free(st->buf);
    free(st);
}

static int by_begin(const void *a, const void *b)
{
    const struct vt_st_tensor *x = a, *y = b;
    if (x->data != y->data)
        return x->data < y->data ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

static int get_u64(json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int parse_tensor(struct vt_safetensors *st, const char *name, json_t *info,
                        const unsigned char *data, size_t data_len, struct vt_st_tensor *t,
                        char *err, size_t errlen)
{
    json_t *dt = json_object_get(info, "dtype");
    json_t *shape = json_object_get(info, "shape");
    json_t *offs = json_object_get(info, "data_offsets");
    uint64_t begin, end, count = 1;
    size_t esize = 0;

    if (!json_is_object(info) || !json_is_string(dt) || !json_is_array(shape) ||
        !json_is_array(offs) || json_array_size(offs) != 2)
        return vt_err(err, errlen, VT_EINVAL,
                      "tensor '%s': needs dtype, shape and data_offsets [begin, end]", name);
    for (size_t i = 0; i < VT_ARRAY_LEN(dtypes); i++)
        if (strcmp(json_string_value(dt), dtypes[i].name) == 0) {
            t->dtype = dtypes[i].dtype;
            esize = dtypes[i].size;
        }
    if (!esize)
        return vt_err(err, errlen, VT_EINVAL, "tensor '%s': unsupported dtype '%.32s'", name,
                      json_string_value(dt));
    if (json_array_size(shape) > VT_ST_MAX_DIMS)
        return vt_err(err, errlen, VT_EINVAL, "tensor '%s': more than %d dimensions", name,
                      VT_ST_MAX_DIMS);
    t->ndim = (int)json_array_size(shape);
    for (int i = 0; i < t->ndim; i++) {
        uint64_t d;
        if (get_u64(json_array_get(shape, (size_t)i), &d) != 0)
            return vt_err(err, errlen, VT_EINVAL, "tensor '%s': shape is not non-negative integers",
                          name);
        t->shape[i] = d;
        if (d && count > UINT64_MAX / d)
            return vt_err(err, errlen, VT_EINVAL, "tensor '%s': shape overflows", name);
        count *= d;
    }
    if (get_u64(json_array_get(offs, 0), &begin) != 0 ||
        get_u64(json_array_get(offs, 1), &end) != 0 || begin > end || end > data_len)
        return vt_err(err, errlen, VT_EINVAL,
                      "tensor '%s': data_offsets outside the file's %zu data bytes", name,
                      data_len);
    if (count > UINT64_MAX / esize || count * esize != end - begin)
        return vt_err(err, errlen, VT_EINVAL, "tensor '%s': %llu bytes for %llu elements of %s",
                      name, (unsigned long long)(end - begin), (unsigned long long)count,
                      json_string_value(dt));
    t->count = count;
    t->data = data + begin;
    t->nbytes = (size_t)(end - begin);
    (void)st;
    return 0;
}

/* Takes buf (heap, or a mapping of len bytes when mapped) whatever happens. */
static int parse_owned(unsigned char *buf, size_t len, int mapped, struct vt_safetensors **out,
                       char *err, size_t errlen)
{
    struct vt_safetensors *st = vt_xcalloc(1, sizeof(*st));
    json_t *root = NULL;
    json_error_t jerr;
    uint64_t hlen = 0;
    int rc = 0;

    st->buf = buf;
    st->len = len;
    st->mapped = mapped;
    if (len < 8) {
        rc = vt_err(err, errlen, VT_EINVAL, "safetensors: file of %zu bytes has no header", len);
        goto out;
    }
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | buf[i];
    if (hlen > VT_ST_MAX_HEADER) {
        rc = vt_err(err, errlen, VT_EINVAL, "safetensors: header of %llu bytes (limit %u)",
                    (unsigned long long)hlen, VT_ST_MAX_HEADER);
        goto out;
    }
    if (hlen < 2 || hlen > len - 8) {
        rc = vt_err(err, errlen, VT_EINVAL,
                    "safetensors: header of %llu bytes in a file of %zu (truncated?)",
                    (unsigned long long)hlen, len);
        goto out;
    }
    root = json_loadb((const char *)buf + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(root)) {
        rc = vt_err(err, errlen, VT_EINVAL, "safetensors: header is not a JSON object (%s)",
                    root ? "not an object" : jerr.text);
        goto out;
    }
    const unsigned char *data = buf + 8 + hlen;
    size_t data_len = len - 8 - (size_t)hlen;
    st->tensors = vt_xcalloc(json_object_size(root) + 1, sizeof(*st->tensors));
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        if (strcmp(key, "__metadata__") == 0)
            continue;
        struct vt_st_tensor *t = &st->tensors[st->n];
        rc = parse_tensor(st, key, val, data, data_len, t, err, errlen);
        if (rc)
            goto out;
        t->name = vt_xstrdup(key);
        st->n++;
    }
    /* ranges must not overlap (empty tensors may sit anywhere) */
    struct vt_st_tensor *sorted = vt_xmalloc((st->n + 1) * sizeof(*sorted));
    memcpy(sorted, st->tensors, st->n * sizeof(*sorted));
    qsort(sorted, st->n, sizeof(*sorted), by_begin);
    for (size_t i = 1; i < st->n; i++)
        if (sorted[i - 1].nbytes && sorted[i].data < sorted[i - 1].data + sorted[i - 1].nbytes) {
            rc = vt_err(err, errlen, VT_EINVAL, "safetensors: tensors '%s' and '%s' overlap",
                        sorted[i - 1].name ? sorted[i - 1].name : "?",
                        sorted[i].name ? sorted[i].name : "?");
            break;
        }
    free(sorted);
out:
    json_decref(root);
    if (rc) {
        vt_safetensors_free(st);
        return rc;
    }
    *out = st;
    return 0;
}

int vt_safetensors_parse(const void *data, size_t len, struct vt_safetensors **out, char *err,
                         size_t errlen)
{
    unsigned char *buf = vt_xmalloc(len + 1);
    if (len)
        memcpy(buf, data, len);
    return parse_owned(buf, len, 0, out, err, errlen);
}

/* Name the file in front of the parser's message. */
static void name_file(const char *path, char *err, size_t errlen)
{
    char tmp[512];

    if (!err || !errlen)
        return;
    snprintf(tmp, sizeof(tmp), "%s", err);
    snprintf(err, errlen, "'%s': %s", path, tmp);
}

int vt_safetensors_open(const char *path, size_t max_bytes, struct vt_safetensors **out, char *err,
                        size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    int rc = vt_read_file_capped(path, "safetensors file", max_bytes, &data, &len, err, errlen);
    if (rc)
        return rc;
    rc = parse_owned((unsigned char *)data, len, 0, out, err, errlen);
    if (rc)
        name_file(path, err, errlen);
    return rc;
}

int vt_safetensors_map(const char *path, size_t max_bytes, struct vt_safetensors **out, char *err,
                       size_t errlen)
{
    struct stat sb;
    void *map;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return vt_err(err, errlen, errno == ENOENT ? VT_ENOTFOUND : VT_EIO,
                      "cannot open safetensors file '%s': %s", path, strerror(errno));
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size < 8 ||
        (uint64_t)sb.st_size > max_bytes) {
        close(fd);
        /* the reading path says what is wrong with it, as for any file */
        return vt_safetensors_open(path, max_bytes, out, err, errlen);
    }
    map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return vt_err(err, errlen, VT_EIO, "cannot map safetensors file '%s': %s", path,
                      strerror(errno));
    int rc = parse_owned(map, (size_t)sb.st_size, 1, out, err, errlen);
    if (rc)
        name_file(path, err, errlen);
    return rc;
}

void vt_safetensors_release(const struct vt_safetensors *st, const void *p, size_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)p, hi = lo + n, base = (uintptr_t)st->buf;

    if (!st->mapped || page <= 0 || lo < base || hi > base + st->len)
        return;
    lo = (lo + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page; /* whole pages inside */
    hi = hi / (uintptr_t)page * (uintptr_t)page;
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

const struct vt_st_tensor *vt_safetensors_find(const struct vt_safetensors *st, const char *name)
{
    for (size_t i = 0; i < st->n; i++)
        if (strcmp(st->tensors[i].name, name) == 0)
            return &st->tensors[i];
    return NULL;
}

static uint64_t le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    float f;
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24 */
        f = (float)mant * (1.0f / 16777216.0f);
        return sign ? -f : f;
    }
    if (exp == 31)
        bits = sign | 0x7f800000u | (mant << 13);
    else
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    memcpy(&f, &bits, 4);
    return f;
}

int vt_st_to_f32_range(const struct vt_st_tensor *t, uint64_t first, uint64_t n, float *out,
                       char *err, size_t errlen)
{
    if (first > t->count || n > t->count - first)
        return vt_err(err, errlen, VT_EINVAL, "tensor '%s': elements %llu..%llu of %llu", t->name,
                      (unsigned long long)first, (unsigned long long)(first + n),
                      (unsigned long long)t->count);
    const unsigned char *p = t->data + first * vt_st_dtype_size(t->dtype);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (t->dtype == VT_ST_F32) {
        memcpy(out, p, n * 4);
        return 0;
    }
#endif
    for (uint64_t i = 0; i < n; i++) {
        switch (t->dtype) {
        case VT_ST_F32: {
            uint32_t b = (uint32_t)le(p + 4 * i, 4);
            memcpy(&out[i], &b, 4);
            break;
        }
        case VT_ST_F16:
            out[i] = half_to_float((uint16_t)le(p + 2 * i, 2));
            break;
        case VT_ST_BF16: {
            uint32_t b = (uint32_t)le(p + 2 * i, 2) << 16;
            memcpy(&out[i], &b, 4);
            break;
        }
        case VT_ST_F64: {
            uint64_t b = le(p + 8 * i, 8);
            double d;
            memcpy(&d, &b, 8);
            out[i] = (float)d;
            break;
        }
        case VT_ST_I8:
            out[i] = (float)(int8_t)p[i];
            break;
        default:
            return vt_err(err, errlen, VT_EINVAL, "tensor '%s': dtype %s is not a float type",
                          t->name, vt_st_dtype_name(t->dtype));
        }
    }
    return 0;
}

int vt_st_to_f32(const struct vt_st_tensor *t, float *out, char *err, size_t errlen)
{
    return vt_st_to_f32_range(t, 0, t->count, out, err, errlen);
}

int vt_st_to_i64(const struct vt_st_tensor *t, int64_t *out, char *err, size_t errlen)
{
    size_t es = vt_st_dtype_size(t->dtype);
    for (uint64_t i = 0; i < t->count; i++) {
        uint64_t b = le(t->data + es * i, es);
        switch (t->dtype) {
        case VT_ST_U8:
            out[i] = (int64_t)b;
            break;
        case VT_ST_I8:
            out[i] = (int8_t)b;
            break;
        case VT_ST_I16:
            out[i] = (int16_t)b;
            break;
        case VT_ST_I32:
            out[i] = (int32_t)b;
            break;
        case VT_ST_I64:
            out[i] = (int64_t)b;
            break;
        default:
            return vt_err(err, errlen, VT_EINVAL, "tensor '%s': dtype %s is not an integer type",
                          t->name, vt_st_dtype_name(t->dtype));
        }
    }
    return 0;
}
