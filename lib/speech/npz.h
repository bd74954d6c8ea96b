/*
 * One float32 array out of a NumPy .npz file (a zip of .npy files, as np.savez and
 * np.savez_compressed write them), for Whisper's mel filterbanks (whisper_mel.h).
 *
 * The zip is read through its central directory: each member's method (0 stored or 8
 * deflated, through zlib), sizes, CRC-32 and local header are checked against the file;
 * zip64, encryption and other methods are refused. The .npy inside must be version 1, 2 or
 * 3 with descr '<f4', fortran_order False and a shape whose bytes are exactly the data that
 * follows. Nothing in the file is trusted: every failure is one line in err.
 */
#ifndef VT_NPZ_H
#define VT_NPZ_H

#include <stddef.h>
#include <stdint.h>

#define VT_NPY_MAX_DIMS 4

struct vt_npy_f32 {
    int n_dims;
    int64_t shape[VT_NPY_MAX_DIMS];
    size_t count; /* product of shape */
    float *data;  /* count values, C order, caller-freed with free() */
};

/*
 * Find member (e.g. "mel_80.npy") in the len bytes of an .npz at zip, inflate it (at most
 * max_bytes once inflated) and parse it as a float32 .npy into *out. 0; VT_ENOTFOUND when
 * no member has that name; VT_EINVAL with one line in err for anything malformed.
 */
int vt_npz_read_f32(const void *zip, size_t len, const char *member, size_t max_bytes,
                    struct vt_npy_f32 *out, char *err, size_t errlen);

/* Parse the len bytes at npy as a float32 .npy (the rules above) into *out. */
int vt_npy_parse_f32(const void *npy, size_t len, struct vt_npy_f32 *out, char *err, size_t errlen);

#endif
