/*
 * The Model2Vec backend of embed.h (texts): static embeddings read from a model folder
 * (model.safetensors with the tensor `embeddings`, and for vocabulary-quantized models
 * `mapping` (token to row) and `weights` (per-token scale); tokenizer.json). A text's
 * vector is the mean over its tokens of embeddings[mapping[id]] * weights[id], as
 * MinishLab's model2vec-rs computes it: the text is first cut to 512 tokens' worth of
 * characters (512 times the vocabulary's median token length), unknown tokens are
 * dropped, and at most 512 tokens are pooled. embed.c normalises the result.
 *
 * The model file is mapped, not read (safetensors.h): a row is decoded to floats when a
 * token uses it, so the memory a model costs stays close to its file's size (an int8
 * model decoded whole would take four times that).
 */
#include "base/util.h"
#include "ml/embed_int.h"
#include "ml/safetensors.h"
#include "ml/tokenizer.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define M2V_MAX_TOKENS      512
#define M2V_MAX_MODEL_BYTES ((size_t)4 << 30)
#define M2V_MAX_DIM         65536
/* bytes of the mapped file read in one go when all of it is (the finite check, the
 * hash), after which their pages are let go */
#define RELEASE_BYTES ((size_t)8 << 20)

/* where a token's vector comes from: one load per token */
struct m2v_tok {
    int32_t row;
    float scale; /* weight (1 when the model has none) */
};

struct m2v {
    struct vt_tokenizer *tok;
    struct vt_safetensors *st;     /* the mapped file */
    const struct vt_st_tensor *te; /* its embeddings, rows x dim, in st */
    float *row;                    /* one decoded row (dim floats) */
    size_t rows;
    struct m2v_tok *tok_rows; /* by token id */
    size_t n_ids;
    int32_t unk_id;
    size_t max_chars;
};

static void m2v_close(struct vt_embed *e)
{
    struct m2v *m = e->priv;
    if (!m)
        return;
    vt_tokenizer_free(m->tok);
    vt_safetensors_free(m->st);
    free(m->row);
    free(m->tok_rows);
    free(m);
    e->priv = NULL;
}

/* Byte length of the first max_chars characters of s (UTF-8, or bytes where invalid). */
static size_t cut_chars(const char *s, size_t len, size_t max_chars)
{
    size_t chars = 0;
    for (size_t i = 0; i < len; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (chars == max_chars)
                return i;
            chars++;
        }
    }
    return len;
}

/* Add row r of the embeddings, times w, to o (dim floats). */
static int add_row(struct m2v *m, size_t dim, size_t r, float w, float *o, char *err, size_t errlen)
{
    const float *row = m->row;
    int rc = vt_st_to_f32_range(m->te, (uint64_t)r * dim, dim, m->row, err, errlen);
    if (rc)
        return rc;
    size_t j = 0;
    /* blocks of 8 with a fixed trip count: the compiler vectorises them at -O2 */
    for (; j + 8 <= dim; j += 8)
        for (size_t q = 0; q < 8; q++)
            o[j + q] += row[j + q] * w;
    for (; j < dim; j++)
        o[j] += row[j] * w;
    return 0;
}

static int m2v_embed(struct vt_embed *e, const char *const *texts, size_t n, float *out, char *err,
                     size_t errlen)
{
    struct m2v *m = e->priv;
    size_t dim = (size_t)e->dim;

    for (size_t t = 0; t < n; t++) {
        if (!texts[t])
            return vt_err(err, errlen, VT_EINVAL, "text %zu is NULL", t);
        const int32_t *ids;
        size_t nids, used = 0;
        size_t len = strlen(texts[t]);
        float *o = out + t * dim;

        len = cut_chars(texts[t], len, m->max_chars);
        vt_tokenizer_encode(m->tok, texts[t], len, &ids, &nids);
        memset(o, 0, dim * sizeof(*o));
        for (size_t k = 0; k < nids && used < M2V_MAX_TOKENS; k++) {
            int32_t id = ids[k];
            if (id == m->unk_id || id < 0 || (size_t)id >= m->n_ids)
                continue;
            int rc =
                add_row(m, dim, (size_t)m->tok_rows[id].row, m->tok_rows[id].scale, o, err, errlen);
            if (rc)
                return rc;
            used++;
        }
        if (used) {
            float inv = 1.0f / (float)used;
            for (size_t j = 0; j < dim; j++)
                o[j] *= inv;
        }
    }
    return 0;
}

static int all_finite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

/* The folder must exist and be a folder: VT_ENOTFOUND when it does not. */
static int check_folder(const char *dir, char *err, size_t errlen)
{
    struct stat sb;

    if (!dir || !*dir)
        return vt_err(err, errlen, VT_EINVAL, "model2vec: no model folder given");
    if (stat(dir, &sb) != 0)
        return vt_err(err, errlen, errno == ENOENT ? VT_ENOTFOUND : VT_EIO,
                      "'%s': no such model folder", dir);
    if (!S_ISDIR(sb.st_mode))
        return vt_err(err, errlen, VT_EINVAL, "'%s': not a model folder", dir);
    return 0;
}

/* The `embeddings` tensor (or `0`) of st as m->te (rows x *dim), every row of a float
 * dtype decoded once to check it is finite (rows are decoded again when used: nothing is
 * kept). */
static int load_embeddings(struct m2v *m, const struct vt_safetensors *st, const char *path,
                           size_t *dim, char *err, size_t errlen)
{
    const struct vt_st_tensor *te = vt_safetensors_find(st, "embeddings");
    int rc = 0;

    if (!te)
        te = vt_safetensors_find(st, "0");
    if (!te || te->ndim != 2 || !te->shape[0] || !te->shape[1] || te->shape[1] > M2V_MAX_DIM)
        return vt_err(err, errlen, VT_EINVAL, "'%s': no 2-D 'embeddings' tensor", path);
    m->te = te;
    m->rows = (size_t)te->shape[0];
    *dim = (size_t)te->shape[1];
    m->row = vt_xmalloc(*dim * sizeof(*m->row));
    /* int8 rows are finite whatever they hold: the first one shows the dtype converts */
    size_t check = te->dtype == VT_ST_I8 ? 1 : m->rows, row_bytes = te->nbytes / m->rows, done = 0;
    for (size_t r = 0; !rc && r < check; r++) {
        rc = vt_st_to_f32_range(te, (uint64_t)r * *dim, *dim, m->row, err, errlen);
        if (!rc && !all_finite(m->row, *dim))
            rc = vt_err(err, errlen, VT_EINVAL, "'%s': embeddings hold NaN or infinity", path);
        if ((r + 1) * row_bytes - done >= RELEASE_BYTES || r + 1 == check) {
            vt_safetensors_release(st, te->data + done, (r + 1) * row_bytes - done);
            done = (r + 1) * row_bytes;
        }
    }
    return rc;
}

/* The optional `mapping` (token to row) into *map (caller frees), checked against the
 * vocabulary; without it every token must have its own row. */
static int load_mapping(const struct m2v *m, const struct vt_safetensors *st, const char *path,
                        int64_t **map, char *err, size_t errlen)
{
    const struct vt_st_tensor *tm = vt_safetensors_find(st, "mapping");

    if (!tm) {
        if (m->n_ids > m->rows)
            return vt_err(err, errlen, VT_EINVAL, "'%s': %zu embedding rows for %zu tokens", path,
                          m->rows, m->n_ids);
        return 0;
    }
    if (tm->ndim != 1 || tm->count < m->n_ids)
        return vt_err(err, errlen, VT_EINVAL, "'%s': 'mapping' has %llu entries for %zu tokens",
                      path, (unsigned long long)tm->count, m->n_ids);
    *map = vt_xmalloc((size_t)tm->count * sizeof(**map));
    return vt_st_to_i64(tm, *map, err, errlen);
}

/* The optional per-token `weights` into *w (caller frees; *count of them), all finite. */
static int load_weights(const struct vt_safetensors *st, const char *path, float **w, size_t *count,
                        char *err, size_t errlen)
{
    const struct vt_st_tensor *tw = vt_safetensors_find(st, "weights");
    int rc;

    if (!tw)
        return 0;
    if (tw->ndim != 1)
        return vt_err(err, errlen, VT_EINVAL, "'%s': 'weights' is not 1-D", path);
    *w = vt_xmalloc((size_t)tw->count * sizeof(**w) + 1);
    *count = (size_t)tw->count;
    rc = vt_st_to_f32(tw, *w, err, errlen);
    if (rc)
        return rc;
    if (!all_finite(*w, (size_t)tw->count))
        return vt_err(err, errlen, VT_EINVAL, "'%s': weights hold NaN or infinity", path);
    return 0;
}

/* Where each token's vector comes from (m->tok_rows): its row and its scale. */
static int load_token_rows(struct m2v *m, const struct vt_safetensors *st, const char *path,
                           char *err, size_t errlen)
{
    int64_t *map = NULL;
    float *w = NULL;
    size_t n_w = 0;
    int rc;

    m->n_ids = vt_tokenizer_vocab_size(m->tok);
    m->tok_rows = vt_xmalloc(m->n_ids * sizeof(*m->tok_rows));
    rc = load_mapping(m, st, path, &map, err, errlen);
    if (!rc)
        rc = load_weights(st, path, &w, &n_w, err, errlen);
    for (size_t id = 0; !rc && id < m->n_ids; id++) {
        int64_t row = map ? map[id] : (int64_t)id;
        if (row < 0 || (uint64_t)row >= m->rows) {
            rc = vt_err(err, errlen, VT_EINVAL, "'%s': token %zu maps to row %lld of %zu", path, id,
                        (long long)row, m->rows);
            break;
        }
        m->tok_rows[id].row = (int32_t)row;
        m->tok_rows[id].scale = w && id < n_w ? w[id] : 1.0f;
    }
    free(map);
    free(w);
    return rc;
}

/* The file's FNV-1a hash (the vector space's identity), its pages let go as it goes. */
static uint64_t hash_file(const struct vt_safetensors *st)
{
    uint64_t h = VT_FNV64_INIT;
    for (size_t off = 0; off < st->len; off += RELEASE_BYTES) {
        size_t n = st->len - off < RELEASE_BYTES ? st->len - off : RELEASE_BYTES;
        h = vt_fnv1a64(h, st->buf + off, n);
        vt_safetensors_release(st, st->buf + off, n);
    }
    return h;
}

/* A model's name for provenance: the folder's last component (no trailing slash). */
static char *folder_name(const char *dir)
{
    size_t blen = strlen(dir);
    while (blen > 1 && dir[blen - 1] == '/')
        blen--;
    size_t bstart = blen;
    while (bstart > 0 && dir[bstart - 1] != '/')
        bstart--;
    return vt_xasprintf("%.*s", (int)(blen - bstart), dir + bstart);
}

static const struct vt_embed_ops m2v_ops = {.texts = m2v_embed, .close = m2v_close};

static int m2v_open(const struct vt_embed_spec *spec, struct vt_embed **out, char *err,
                    size_t errlen)
{
    const char *dir = spec->model;
    struct vt_safetensors *st = NULL;
    struct m2v *m = NULL;
    char *path = NULL;
    size_t dim = 0;
    int rc = check_folder(dir, err, errlen);

    if (rc)
        return rc;
    m = vt_xcalloc(1, sizeof(*m));
    path = vt_xasprintf("%s/tokenizer.json", dir);
    rc = vt_tokenizer_load(path, &m->tok, err, errlen);
    if (rc)
        goto out;
    free(path);
    path = vt_xasprintf("%s/model.safetensors", dir);
    rc = vt_safetensors_map(path, M2V_MAX_MODEL_BYTES, &st, err, errlen);
    m->st = st; /* m owns it from here (m2v_close) */
    if (!rc)
        rc = load_embeddings(m, st, path, &dim, err, errlen);
    if (!rc)
        rc = load_token_rows(m, st, path, err, errlen);
    if (rc)
        goto out;
    m->unk_id = vt_tokenizer_unk_id(m->tok);
    if (m->unk_id < 0)
        m->unk_id = vt_tokenizer_token_to_id(m->tok, "[UNK]");
    m->max_chars = M2V_MAX_TOKENS * vt_tokenizer_median_token_len(m->tok);

    char *name = folder_name(dir);
    struct vt_embed *e = vt_xcalloc(1, sizeof(*e));
    e->dim = (int)dim;
    e->model = vt_xasprintf("model2vec %s (%zu d)", name, dim);
    e->id = vt_xasprintf("model2vec:%016llx", (unsigned long long)hash_file(st));
    e->ops = &m2v_ops;
    e->priv = m;
    free(name);
    m = NULL;
    *out = e;
out:
    if (m) {
        struct vt_embed tmp = {.priv = m};
        m2v_close(&tmp);
    }
    free(path);
    return rc;
}

const struct vt_embed_backend vt_embed_model2vec = {.open = m2v_open};
