/*
 * The bounded little-endian reader (bytes.h).
 */
#include "base/bytes.h"

#include "base/util.h"

#include <string.h>

int vt_bytes_take(struct vt_bytes *c, size_t n, const unsigned char **out)
{
    if (n > c->len - c->off)
        return -1;
    *out = c->p + c->off;
    c->off += n;
    return 0;
}

int vt_bytes_i32(struct vt_bytes *c, int32_t *v)
{
    const unsigned char *b;

    if (vt_bytes_take(c, 4, &b))
        return -1;
    *v = (int32_t)vt_le32(b);
    return 0;
}

int vt_bytes_field(struct vt_bytes *c, const char *what, int32_t lo, int32_t hi, int32_t *v,
                   char *err, size_t errlen)
{
    if (vt_bytes_i32(c, v))
        return vt_err(err, errlen, VT_EINVAL, "truncated at %s (offset %zu)", what, c->off);
    if (*v < lo || *v > hi)
        return vt_err(err, errlen, VT_EINVAL, "%s %d out of range [%d, %d]", what, (int)*v, (int)lo,
                      (int)hi);
    return 0;
}

int vt_bytes_name(struct vt_bytes *c, size_t n, unsigned char first, const char *what, char *out,
                  char *err, size_t errlen)
{
    const unsigned char *b;

    if (vt_bytes_take(c, n, &b))
        return vt_err(err, errlen, VT_EINVAL, "truncated in %s", what);
    for (size_t i = 0; i < n; i++)
        if (b[i] < first || b[i] > '~')
            return vt_err(err, errlen, VT_EINVAL, "%s is not printable ASCII", what);
    memcpy(out, b, n);
    out[n] = 0;
    return 0;
}
