/*
 * Message digests for checking downloaded files against what their publisher lists:
 * SHA-256 (FIPS 180-4; Hugging Face gives it for large, LFS-stored files) and SHA-1
 * (FIPS 180-4; git names small files by the SHA-1 of "blob <size>\0<content>"). Both
 * streaming: init, update any number of times, final. Not for secrets (no constant-time
 * care is needed: the inputs are public files).
 */
#ifndef VT_SHA256_H
#define VT_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct vt_sha256 {
    uint32_t h[8];
    uint64_t len; /* bytes hashed so far */
    uint8_t buf[64];
    size_t n; /* bytes waiting in buf */
};

void vt_sha256_init(struct vt_sha256 *s);
void vt_sha256_update(struct vt_sha256 *s, const void *data, size_t n);
/* The 32-byte digest; s must be initialised again before reuse. */
void vt_sha256_final(struct vt_sha256 *s, uint8_t out[32]);

struct vt_sha1 {
    uint32_t h[5];
    uint64_t len;
    uint8_t buf[64];
    size_t n;
};

void vt_sha1_init(struct vt_sha1 *s);
void vt_sha1_update(struct vt_sha1 *s, const void *data, size_t n);
void vt_sha1_final(struct vt_sha1 *s, uint8_t out[20]);

/* n bytes as 2n lower-case hex digits and a NUL into out (2n+1 bytes). */
void vt_hex(char *out, const uint8_t *bytes, size_t n);

#endif
