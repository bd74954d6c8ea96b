/* clang-format off */
/*
 * libFuzzer target for the Whisper model loader (vt_whisper_model_open), which takes a path:
 * the input is written to a per-process scratch directory, its first byte choosing the
 * format. Even: a Hugging Face folder, the rest being config.json, generation_config.json and
 * model.safetensors separated by "\n--8<--\n" (an empty or missing part: no such file). Odd:
 * a whisper.cpp ggml file. A model that opens is run once, when small: the encoder on a
 * window of ramps, then the decoder on two tokens with every output asked for.
 * The seeds (tests/tools/whisper_fuzz_seeds.py) are checkpoints of the smallest dimensions
 * the loader takes, so mutations start past the dimension checks.
 *
 * fuzz-sources: lib/ml/whisper_model.c lib/ml/whisper_ggml.c lib/ml/safetensors.c lib/base/bytes.c lib/base/util.c
 * fuzz-pkgs: jansson sqlite3
 */
/* clang-format on */
#include "ml/whisper_model.h"

#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The kernels are compiled here rather than listed above: clang 14 (Debian's, which libFuzzer
 * comes with) knows no "f16c" for __builtin_cpu_supports, which gcc does, so the question is
 * put to cpuid instead.
 */
static int fuzz_cpu_supports(const char *feature)
{
    unsigned a, b, c, d;

    if (strcmp(feature, "avx2") == 0)
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    return strcmp(feature, "fma") == 0 ? !!(c & bit_FMA)
                                       : strcmp(feature, "f16c") == 0 && (c & bit_F16C);
}
#define __builtin_cpu_supports(f) fuzz_cpu_supports(f)
#include "ml/whisper_kern.c"
#undef __builtin_cpu_supports

static const char fuzz_sep[] = "\n--8<--\n";
static char fuzz_dir[64];

static const char *fuzz_scratch(void)
{
    if (!fuzz_dir[0]) {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

        snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/vt-fuzz-wmodel-XXXXXX", base);
        if (!mkdtemp(fuzz_dir))
            abort();
    }
    return fuzz_dir;
}

/* Write len bytes to dir/name, or remove it when part is NULL. */
static void fuzz_put(const char *name, const uint8_t *part, size_t len)
{
    char path[128];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", fuzz_scratch(), name);
    unlink(path);
    if (!part)
        return;
    f = fopen(path, "wb");
    if (!f)
        abort();
    if (len && fwrite(part, 1, len, f) != len)
        abort();
    fclose(f);
}

/* The encoder on one window and the decoder on two tokens, when the model is small. */
static void fuzz_run(const struct vt_whisper_model *m)
{
    const struct vt_whisper_dims *d = vt_whisper_model_dims(m);
    size_t n_mel = (size_t)d->n_mels * 2 * d->n_audio_ctx;
    size_t n_feat = (size_t)d->n_audio_ctx * d->n_audio_state, n_align = 0;
    float *mel, *feat, *logits, *qk;
    struct vt_whisper_kv *kv;
    int32_t tok[2] = {0, d->n_vocab - 1};
    char err[256];

    vt_whisper_model_alignment_heads(m, &n_align);
    if (n_feat > 4096 || (size_t)d->n_vocab * d->n_text_state > 65536 || d->n_text_ctx < 2)
        return;
    mel = calloc(n_mel, sizeof(float));
    feat = calloc(n_feat, sizeof(float));
    logits = calloc((size_t)2 * d->n_vocab, sizeof(float));
    qk = calloc(n_align * 2 * d->n_audio_ctx, sizeof(float));
    if (!mel || !feat || !logits || !qk)
        abort();
    for (size_t i = 0; i < n_mel; i++)
        mel[i] = (float)(i % 17) / 8.0f - 1.0f;
    if (vt_whisper_encode(m, mel, feat, err, sizeof(err)) == 0) {
        kv = vt_whisper_kv_new(m, feat);
        if (kv) {
            struct vt_whisper_decode_out o = {.logits_all = logits, .cross_qk = qk};

            vt_whisper_decode(kv, tok, 2, &o, err, sizeof(err));
            vt_whisper_kv_free(kv);
        }
    }
    free(mel);
    free(feat);
    free(logits);
    free(qk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {"config.json", "generation_config.json",
                                        "model.safetensors"};
    struct vt_whisper_model *m = NULL;
    char err[512], path[128];
    const uint8_t *p, *end = data + size;
    int rc;

    if (size < 1)
        return 0;
    p = data + 1;
    fuzz_put("model.bin", NULL, 0);
    if (data[0] & 1) {
        for (int i = 0; i < 3; i++)
            fuzz_put(files[i], NULL, 0);
        fuzz_put("model.bin", p, (size_t)(end - p));
        snprintf(path, sizeof(path), "%s/model.bin", fuzz_scratch());
    } else {
        for (int i = 0; i < 3; i++) {
            const uint8_t *q =
                p < end ? memmem(p, (size_t)(end - p), fuzz_sep, sizeof(fuzz_sep) - 1) : NULL;
            const uint8_t *stop = q ? q : end;

            fuzz_put(files[i], p < stop ? p : NULL, p < stop ? (size_t)(stop - p) : 0);
            p = q ? q + sizeof(fuzz_sep) - 1 : end;
        }
        snprintf(path, sizeof(path), "%s", fuzz_scratch());
    }
    err[0] = 0;
    rc = vt_whisper_model_open(path, 1, &m, err, sizeof(err));
    if (getenv("FUZZ_VERBOSE")) /* to see where the seeds get to */
        fprintf(stderr, "open: %d %s\n", rc, rc ? err : vt_whisper_model_format(m));
    if (rc == 0) {
        fuzz_run(m);
        vt_whisper_model_free(m);
    } else if (!err[0] || strchr(err, '\n')) {
        abort(); /* a refusal says why, on one line */
    }
    return 0;
}
