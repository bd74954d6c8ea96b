/* Unit tests for lib/base/sha256.c: the FIPS 180-4 / NIST example vectors for SHA-256 and SHA-1,
 * the same digests fed in uneven pieces, and git's blob id of a small file. */
#include "base/sha256.h"
#include "harness.h"

#include <stdlib.h>

static void sha256_hex(const void *data, size_t n, size_t piece, char out[65])
{
    struct vt_sha256 s;
    uint8_t d[32];
    const uint8_t *p = data;

    vt_sha256_init(&s);
    for (size_t off = 0; off < n; off += piece)
        vt_sha256_update(&s, p + off, n - off < piece ? n - off : piece);
    vt_sha256_final(&s, d);
    vt_hex(out, d, 32);
}

static void sha1_hex(const void *data, size_t n, size_t piece, char out[41])
{
    struct vt_sha1 s;
    uint8_t d[20];
    const uint8_t *p = data;

    vt_sha1_init(&s);
    for (size_t off = 0; off < n; off += piece)
        vt_sha1_update(&s, p + off, n - off < piece ? n - off : piece);
    vt_sha1_final(&s, d);
    vt_hex(out, d, 20);
}

static const char *const msg448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
static const char *const msg896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                                  "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

VT_TEST(sha256_vectors)
{
    char h[65];

    sha256_hex("", 0, 1, h);
    CHECK_STR(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256_hex("abc", 3, 3, h);
    CHECK_STR(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_hex(msg448, strlen(msg448), 64, h);
    CHECK_STR(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    sha256_hex(msg896, strlen(msg896), 7, h);
    CHECK_STR(h, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    /* one million 'a', fed whole and in pieces that straddle blocks */
    char *m = malloc(1000000);
    memset(m, 'a', 1000000);
    sha256_hex(m, 1000000, 1000000, h);
    CHECK_STR(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    sha256_hex(m, 1000000, 65, h);
    CHECK_STR(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(m);
}

VT_TEST(sha256_padding_edges)
{
    /* 55, 56 and 64 bytes: the length fits the last block, just does not, a whole block */
    char h[65], m[64];

    memset(m, 'a', sizeof(m));
    sha256_hex(m, 55, 1, h);
    CHECK_STR(h, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    sha256_hex(m, 56, 5, h);
    CHECK_STR(h, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    sha256_hex(m, 64, 64, h);
    CHECK_STR(h, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

VT_TEST(sha1_vectors)
{
    char h[41];

    sha1_hex("", 0, 1, h);
    CHECK_STR(h, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    sha1_hex("abc", 3, 1, h);
    CHECK_STR(h, "a9993e364706816aba3e25717850c26c9cd0d89d");
    sha1_hex(msg448, strlen(msg448), 13, h);
    CHECK_STR(h, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    sha1_hex(msg896, strlen(msg896), 112, h);
    CHECK_STR(h, "a49b2446a02c645bf419f995b67091253a04a259");
    char *m = malloc(1000000);
    memset(m, 'a', 1000000);
    sha1_hex(m, 1000000, 4096, h);
    CHECK_STR(h, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    free(m);
}

VT_TEST(sha1_git_blob)
{
    /* `printf 'hello\n' | git hash-object --stdin` */
    char h[41];
    static const char blob[] = "blob 6\0hello\n";

    sha1_hex(blob, sizeof(blob) - 1, 3, h);
    CHECK_STR(h, "ce013625030ba8dba906f756967f9e9ca394464a");
}
