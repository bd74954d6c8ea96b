/*
 * A bounded reader of little-endian binary files held in memory (ggml checkpoints: Whisper's
 * and Silero VAD's). Every read checks the bytes left first, so a hostile length can make a
 * read fail but never run past the buffer; a failed read moves nothing.
 */
#ifndef VT_BYTES_H
#define VT_BYTES_H

#include <stddef.h>
#include <stdint.h>

struct vt_bytes {
    const unsigned char *p;
    size_t len, off; /* off <= len always */
};

/* The little-endian uint16 at b (2 bytes the caller has checked are there). */
static inline uint16_t vt_le16(const unsigned char *b)
{
    return (uint16_t)(b[0] | b[1] << 8);
}

/* The little-endian uint32 at b (4 bytes the caller has checked are there). */
static inline uint32_t vt_le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The next n bytes into *out and past them; -1 (nothing moved) if fewer are left. */
int vt_bytes_take(struct vt_bytes *c, size_t n, const unsigned char **out);
/* A little-endian int32; -1 if fewer than 4 bytes are left. */
int vt_bytes_i32(struct vt_bytes *c, int32_t *v);
/* An int32 field in [lo, hi]; else VT_EINVAL with one line naming what in err. */
int vt_bytes_field(struct vt_bytes *c, const char *what, int32_t lo, int32_t hi, int32_t *v,
                   char *err, size_t errlen);
/* n bytes of printable ASCII from first to '~' copied into out (n + 1 bytes, NUL-ended);
 * else VT_EINVAL with one line naming what in err. */
int vt_bytes_name(struct vt_bytes *c, size_t n, unsigned char first, const char *what, char *out,
                  char *err, size_t errlen);

#endif
