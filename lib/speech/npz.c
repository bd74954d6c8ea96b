/*
 * The .npz reader (npz.h): the zip's end record, then its central directory walked entry
 * by entry with every length checked against the bytes left, the member's local header
 * cross-checked, its data inflated into a buffer of the announced size and its CRC-32
 * compared; then the .npy header's dictionary read field by field.
 */
#include "speech/npz.h"

#include "base/bytes.h"
#include "vidtheque.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define SIG_EOCD  0x06054b50u
#define SIG_CDIR  0x02014b50u
#define SIG_LOCAL 0x04034b50u
#define EOCD_LEN  22
#define CDIR_LEN  46
#define LOCAL_LEN 30

/* A member as the central directory describes it. */
struct zip_entry {
    unsigned method;
    uint32_t crc, csize, usize, local;
};

/* The end of central directory record: the last one, its comment running to the end. */
static int find_eocd(const unsigned char *z, size_t len, size_t *cd_off, size_t *cd_n, char *err,
                     size_t errlen)
{
    if (len < EOCD_LEN) {
        snprintf(err, errlen, "not a zip file (%zu bytes)", len);
        return VT_EINVAL;
    }
    for (size_t i = len - EOCD_LEN + 1; i-- > 0 && len - i <= EOCD_LEN + 65535;) {
        const unsigned char *e = z + i;

        if (vt_le32(e) != SIG_EOCD || (size_t)vt_le16(e + 20) != len - i - EOCD_LEN)
            continue;
        if (vt_le16(e + 4) || vt_le16(e + 6) || vt_le16(e + 8) != vt_le16(e + 10)) {
            snprintf(err, errlen, "multi-disk zip files are not supported");
            return VT_EINVAL;
        }
        if (vt_le32(e + 16) == UINT32_MAX || vt_le16(e + 10) == UINT16_MAX) {
            snprintf(err, errlen, "zip64 archives are not supported");
            return VT_EINVAL;
        }
        *cd_off = vt_le32(e + 16);
        *cd_n = vt_le16(e + 10);
        if (*cd_off > i || vt_le32(e + 12) > i - *cd_off) {
            snprintf(err, errlen, "zip central directory lies outside the file");
            return VT_EINVAL;
        }
        return 0;
    }
    snprintf(err, errlen, "not a zip file (no end of central directory record)");
    return VT_EINVAL;
}

/* Walk the central directory for member; VT_ENOTFOUND when it is not there. */
static int find_member(const unsigned char *z, size_t len, const char *member,
                       struct zip_entry *ent, char *err, size_t errlen)
{
    size_t off, n, want = strlen(member);
    int rc = find_eocd(z, len, &off, &n, err, errlen);

    for (size_t k = 0; rc == 0 && k < n; k++) {
        const unsigned char *c = z + off;
        size_t name_len, var_len;

        if (len - off < CDIR_LEN || vt_le32(c) != SIG_CDIR) {
            snprintf(err, errlen, "zip central directory entry %zu is damaged", k);
            return VT_EINVAL;
        }
        name_len = vt_le16(c + 28);
        var_len = name_len + vt_le16(c + 30) + vt_le16(c + 32);
        if (var_len > len - off - CDIR_LEN) {
            snprintf(err, errlen, "zip central directory entry %zu runs past the file", k);
            return VT_EINVAL;
        }
        if (name_len == want && memcmp(c + CDIR_LEN, member, want) == 0) {
            *ent = (struct zip_entry){vt_le16(c + 10), vt_le32(c + 16), vt_le32(c + 20),
                                      vt_le32(c + 24), vt_le32(c + 42)};
            if (vt_le16(c + 8) & 1) {
                snprintf(err, errlen, "zip member '%s' is encrypted", member);
                return VT_EINVAL;
            }
            return 0;
        }
        off += CDIR_LEN + var_len;
    }
    if (rc == 0)
        snprintf(err, errlen, "no member '%s' in the zip file", member);
    return rc ? rc : VT_ENOTFOUND;
}

/* Inflate (raw deflate) exactly out_len bytes from in. */
static int inflate_exact(const unsigned char *in, size_t in_len, unsigned char *out, size_t out_len)
{
    z_stream s;
    int zrc;

    memset(&s, 0, sizeof(s));
    if (inflateInit2(&s, -MAX_WBITS) != Z_OK)
        return -1;
    s.next_in = (Bytef *)in;
    s.avail_in = (uInt)in_len;
    s.next_out = out;
    s.avail_out = (uInt)out_len;
    zrc = inflate(&s, Z_FINISH);
    inflateEnd(&s);
    return zrc == Z_STREAM_END && s.avail_out == 0 ? 0 : -1;
}

/* The member's bytes, checked and inflated into a malloc'd buffer of ent->usize bytes. */
static int member_bytes(const unsigned char *z, size_t len, const char *member,
                        const struct zip_entry *ent, size_t max_bytes, unsigned char **out,
                        char *err, size_t errlen)
{
    size_t skip, name_len = strlen(member);
    const unsigned char *l, *data;
    unsigned char *buf;

    if (ent->method != 0 && ent->method != 8) {
        snprintf(err, errlen,
                 "zip member '%s' uses compression method %u (only stored and "
                 "deflated are read)",
                 member, ent->method);
        return VT_EINVAL;
    }
    if (ent->usize > max_bytes || ent->usize > UINT_MAX || ent->csize > UINT_MAX ||
        (ent->method == 0 && ent->csize != ent->usize)) {
        snprintf(err, errlen, "zip member '%s' claims %u bytes (limit %zu)", member, ent->usize,
                 max_bytes);
        return VT_EINVAL;
    }
    l = z + (ent->local < len ? ent->local : 0);
    if (ent->local > len || len - ent->local < LOCAL_LEN + name_len || vt_le32(l) != SIG_LOCAL ||
        vt_le16(l + 8) != ent->method || vt_le16(l + 26) != name_len ||
        memcmp(l + LOCAL_LEN, member, name_len) != 0) {
        snprintf(err, errlen, "zip local header of '%s' is missing or disagrees", member);
        return VT_EINVAL;
    }
    skip = LOCAL_LEN + (size_t)vt_le16(l + 26) + vt_le16(l + 28);
    if (skip > len - ent->local || ent->csize > len - ent->local - skip) {
        snprintf(err, errlen, "zip member '%s' runs past the end of the file", member);
        return VT_EINVAL;
    }
    data = l + skip;
    buf = malloc(ent->usize ? ent->usize : 1);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return VT_EIO;
    }
    if (ent->method == 0)
        memcpy(buf, data, ent->usize);
    if ((ent->method == 8 && inflate_exact(data, ent->csize, buf, ent->usize) != 0) ||
        crc32(0L, buf, (uInt)ent->usize) != ent->crc) {
        snprintf(err, errlen, "zip member '%s' is corrupt (%s)", member,
                 ent->method == 8 ? "inflate or CRC-32 failed" : "CRC-32 mismatch");
        free(buf);
        return VT_EINVAL;
    }
    *out = buf;
    return 0;
}

int vt_npz_read_f32(const void *zip, size_t len, const char *member, size_t max_bytes,
                    struct vt_npy_f32 *out, char *err, size_t errlen)
{
    struct zip_entry ent;
    unsigned char *buf = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = find_member(zip, len, member, &ent, err, errlen);
    if (rc == 0)
        rc = member_bytes(zip, len, member, &ent, max_bytes, &buf, err, errlen);
    if (rc == 0) {
        char tmp[256];

        rc = vt_npy_parse_f32(buf, ent.usize, out, tmp, sizeof(tmp));
        if (rc)
            snprintf(err, errlen, "'%s': %s", member, tmp);
    }
    free(buf);
    return rc;
}

/* ---- .npy ---- */

/* The value text after 'key': in the header dictionary h (NUL-terminated), or NULL. */
static const char *dict_value(const char *h, const char *key)
{
    char pat[32];
    const char *p;

    snprintf(pat, sizeof(pat), "'%s':", key);
    p = strstr(h, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    return p;
}

/* "(80, 201)" or "(5,)" or "()": the shape, each dimension at most 2^31. */
static int parse_shape(const char *p, struct vt_npy_f32 *a)
{
    if (*p++ != '(')
        return -1;
    a->n_dims = 0;
    a->count = 1;
    for (;;) {
        char *end;
        long long v;

        while (*p == ' ')
            p++;
        if (*p == ')')
            return 0;
        if (*p < '0' || *p > '9' || a->n_dims == VT_NPY_MAX_DIMS)
            return -1;
        v = strtoll(p, &end, 10);
        if (v < 0 || v > INT32_MAX || (v && a->count > SIZE_MAX / 4 / (size_t)v))
            return -1;
        a->shape[a->n_dims++] = v;
        a->count *= (size_t)v;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p != ')')
            return -1;
    }
}

/* Check the header dictionary's three fields; fills a's shape and count. */
static int parse_header(const char *h, struct vt_npy_f32 *a, char *err, size_t errlen)
{
    const char *descr = dict_value(h, "descr"), *fo = dict_value(h, "fortran_order"),
               *shape = dict_value(h, "shape");

    if (!descr || !fo || !shape || h[0] != '{') {
        snprintf(err, errlen, "npy header lacks descr, fortran_order or shape");
        return VT_EINVAL;
    }
    if (strncmp(descr, "'<f4'", 5) != 0) {
        snprintf(err, errlen, "npy array is not little-endian float32 (descr %.8s)", descr);
        return VT_EINVAL;
    }
    if (strncmp(fo, "False", 5) != 0) {
        snprintf(err, errlen, "npy array is in Fortran order");
        return VT_EINVAL;
    }
    if (parse_shape(shape, a) != 0) {
        snprintf(err, errlen, "npy shape is malformed or too large");
        return VT_EINVAL;
    }
    return 0;
}

int vt_npy_parse_f32(const void *npy, size_t len, struct vt_npy_f32 *out, char *err, size_t errlen)
{
    const unsigned char *p = npy;
    size_t hlen, start;
    char *h;
    int rc;

    memset(out, 0, sizeof(*out));
    if (len < 10 || memcmp(p, "\x93NUMPY", 6) != 0 || p[6] < 1 || p[6] > 3) {
        snprintf(err, errlen, "not an npy array of version 1 to 3");
        return VT_EINVAL;
    }
    hlen = p[6] == 1 ? vt_le16(p + 8) : (len < 12 ? SIZE_MAX : vt_le32(p + 8));
    start = p[6] == 1 ? 10 : 12;
    if (hlen > 65536 || hlen > len - start) {
        snprintf(err, errlen, "npy header runs past the data (%zu bytes)", len);
        return VT_EINVAL;
    }
    h = malloc(hlen + 1);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return VT_EIO;
    }
    memcpy(h, p + start, hlen);
    h[hlen] = '\0';
    rc = strlen(h) != hlen ? VT_EINVAL : parse_header(h, out, err, errlen);
    if (rc == VT_EINVAL && strlen(h) != hlen)
        snprintf(err, errlen, "npy header holds a NUL byte");
    free(h);
    if (rc)
        return rc;
    if (out->count * 4 != len - start - hlen) {
        snprintf(err, errlen, "npy data is %zu bytes where the shape needs %zu", len - start - hlen,
                 out->count * 4);
        return VT_EINVAL;
    }
    out->data = malloc(out->count ? out->count * 4 : 1);
    if (!out->data) {
        snprintf(err, errlen, "out of memory");
        return VT_EIO;
    }
    for (size_t i = 0; i < out->count; i++) {
        uint32_t bits = vt_le32(p + start + hlen + 4 * i);

        memcpy(&out->data[i], &bits, 4);
    }
    return 0;
}
