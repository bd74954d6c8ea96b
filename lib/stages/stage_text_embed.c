/*
 * Meaning: the text_embed stage (the search by meaning that reads what it stored is
 * lib/search/meaning.c's).
 *
 * Which model embeds is the library's config (model/stage_config.c: text_embed.backend, .model,
 * .url, .api_key); nothing configured, the stage is skipped with "no text embedding
 * model configured". The model is opened once per library handle and kept, in the
 * handle's text_embed slot, while the config says the same, so the stage for many videos,
 * and a server's searches, load a model once.
 *
 * The stage embeds every chunk (the passages of speech) and the text read on every
 * kept frame, and stores the vectors with the space they live in (vt_embed_id).
 */
#include "base/util.h"
#include "core/library.h"
#include "ml/embed.h"
#include "ml/models.h"
#include "model/stage_config.h"
#include "stages/text_embed.h"
#include "text/transcript.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMBED_BATCH     256 /* texts per call of the backend */
#define SCREEN_TEXT_MIN 3   /* bytes of OCR text worth a vector */

/* ---- the configured model ---- */

struct te_conf {
    char backend[32];
    const char *model, *url, *key;
};

/* What the config asks for: 0 (with c filled), VT_SKIP with the reason when nothing is
 * configured, or VT_EINVAL for a config that cannot work. */
static int read_conf(const struct vt_config *cf, struct te_conf *c, char *err, size_t errlen)
{
    /* unset: implied by what is set (the key table's rule) */
    const char *b = vt_config_backend(cf, VT_STAGE_TEXT_EMBED, NULL);

    memset(c, 0, sizeof(*c));
    c->model = vt_config_get(cf, VT_KEY(TEXT_EMBED_MODEL));
    c->url = vt_config_get(cf, VT_KEY(TEXT_EMBED_URL));
    c->key = vt_config_get(cf, VT_KEY(TEXT_EMBED_API_KEY));
    snprintf(c->backend, sizeof(c->backend), "%s", b);
    if (!strcmp(b, "none"))
        return vt_err(err, errlen, VT_SKIP, "no text embedding model configured");
    if (!vt_config_allowed(VT_KEY(TEXT_EMBED_BACKEND), b))
        return vt_err(err, errlen, VT_EINVAL,
                      "text_embed.backend '%s' is not model2vec, openai or none", b);
    if (!c->model || !*c->model)
        return vt_err(err, errlen, VT_EINVAL,
                      "text_embed.backend is %s but text_embed.model is "
                      "not set",
                      b);
    if (!strcmp(b, "openai") && (!c->url || !*c->url))
        return vt_err(err, errlen, VT_EINVAL,
                      "text_embed.backend is openai but text_embed.url is "
                      "not set");
    return 0;
}

int vt_text_embed_configured(const struct vt_config *cf)
{
    struct te_conf c;
    char err[256];

    return read_conf(cf, &c, err, sizeof(err)) == 0;
}

/* The handle's slot: the model opened and the key of what it was opened for. */
struct te_engine {
    struct vt_embed *e;
    char *key;
};

static void te_engine_close(void *state)
{
    struct te_engine *te = state;

    vt_embed_close(te->e);
    free(te->key);
    free(te);
}

int vt_lib_text_embed(struct vt_library *lib, struct vt_embed **out, char *err, size_t errlen)
{
    struct vt_config *cf = NULL;
    struct te_conf c;
    char folder[4096];
    int rc = vt_config_load(lib->dir, &cf, err, errlen);

    *out = NULL;
    if (rc)
        return rc;
    rc = read_conf(cf, &c, err, errlen);
    if (rc)
        goto out;
    const char *model = c.model;
    if (!strcmp(c.backend, "model2vec")) {
        rc = vt_models_resolve(lib->dir, c.model, folder, sizeof(folder), err, errlen);
        if (rc)
            goto out;
        model = folder;
    }
    char *key =
        vt_xasprintf("%s\n%s\n%s\n%s", c.backend, model, c.url ? c.url : "", c.key ? c.key : "");
    struct te_engine *te = vt_lib_slot(lib, VT_STAGE_TEXT_EMBED);
    if (te && !strcmp(te->key, key)) {
        free(key);
        *out = te->e;
        goto out;
    }
    vt_lib_slot_set(lib, VT_STAGE_TEXT_EMBED, NULL, NULL);
    te = vt_xcalloc(1, sizeof(*te));
    struct vt_embed_spec spec = {
        .backend = c.backend, .model = model, .base_url = c.url, .api_key = c.key};
    rc = vt_embed_open(&spec, &te->e, err, errlen);
    if (rc) {
        free(key);
        free(te);
        goto out;
    }
    te->key = key;
    vt_lib_slot_set(lib, VT_STAGE_TEXT_EMBED, te, te_engine_close);
    *out = te->e;
out:
    vt_config_free(cf);
    return rc;
}

int vt_text_embed_all(struct vt_embed *e, const char *const *texts, size_t n, float *out,
                      struct vt_stage_ctx *sc, char *err, size_t errlen)
{
    int dim = vt_embed_dim(e);

    for (size_t i = 0; i < n; i += EMBED_BATCH) {
        size_t m = n - i < EMBED_BATCH ? n - i : EMBED_BATCH;
        int rc = vt_embed_texts(e, texts + i, m, out + i * (size_t)dim, err, errlen);
        if (rc)
            return rc;
        if (sc)
            vt_stage_progress(sc, (double)(i + m) / (double)n);
    }
    return 0;
}

/* ---- the stage ---- */

struct te_result {
    char space[256];
    int dim;
    struct vt_vec_rec *recs;
    float *vecs;
    size_t n;
};

char *vt_text_embed_frame_text(const struct vt_store_frame *f)
{
    struct vt_sb sb = {0};

    for (size_t i = 0; i < f->ocr.n_lines; i++) {
        if (f->ocr.lines[i].noise)
            continue;
        if (sb.len)
            vt_sb_addc(&sb, '\n');
        vt_sb_adds(&sb, f->ocr.lines[i].text);
    }
    if (sb.len < SCREEN_TEXT_MIN) {
        vt_sb_release(&sb);
        return NULL;
    }
    return vt_sb_detach(&sb);
}

/*
 * The moment of frame i's text, as the word index has it (STORE_SCREEN_DOC_SPAN): the shot's
 * start for its first frame (where a gradual transition into the shot ends, or the frame's
 * own time if that comes first), else the frame's own time (text that appeared inside the
 * shot), to the shot's next frame or its end; the frame's own time when it has no shot.
 */
static void screen_span(const struct vt_store_frame *frames, size_t n, size_t i,
                        const struct vt_kf_shot *shots, size_t n_shots, double *a, double *b)
{
    int sh = frames[i].f.shot;
    double t = frames[i].f.t_s;

    *a = *b = t;
    if (sh < 0 || (size_t)sh >= n_shots)
        return;
    if (i > 0 && frames[i - 1].f.shot == sh)
        *a = t;
    else if (shots[sh].transition && shots[sh].trans_end_s > shots[sh].start_s)
        *a = shots[sh].trans_end_s < t ? shots[sh].trans_end_s : t;
    else
        *a = shots[sh].start_s;
    *b = i + 1 < n && frames[i + 1].f.shot == sh ? frames[i + 1].f.t_s : shots[sh].end_s;
}

static int text_embed_run(struct vt_stage_ctx *c)
{
    struct te_result *r = vt_xcalloc(1, sizeof(*r));
    struct vt_embed *e = NULL;
    struct vt_chunk *chunks = NULL;
    struct vt_store_frame *frames = NULL;
    struct vt_kf_shot *shots = NULL;
    size_t n_chunks = 0, n_frames = 0, n_shots = 0;
    char **owned = NULL;
    const char **texts = NULL;
    int rc;

    c->result = r;
    snprintf(c->model, sizeof(c->model), "none");
    rc = vt_lib_text_embed(c->lib, &e, c->err, sizeof(c->err));
    if (rc)
        return rc;
    snprintf(c->model, sizeof(c->model), "%s", vt_embed_model(e));
    snprintf(r->space, sizeof(r->space), "%s", vt_embed_id(e));
    r->dim = vt_embed_dim(e);
    rc = vt_store_chunks(c->lib->store, c->video->id, &chunks, &n_chunks);
    if (!rc)
        rc = vt_store_frames(c->lib->store, c->video->id, &frames, &n_frames);
    if (!rc)
        rc = vt_store_shots(c->lib->store, c->video->id, &shots, &n_shots);
    if (rc) {
        rc = vt_err(c->err, sizeof(c->err), rc, "%s", vt_store_errmsg(c->lib->store));
        goto out;
    }
    r->recs = vt_xcalloc(n_chunks + n_frames + 1, sizeof(*r->recs));
    owned = vt_xcalloc(n_frames + 1, sizeof(*owned));
    texts = vt_xcalloc(n_chunks + n_frames + 1, sizeof(*texts));
    for (size_t i = 0; i < n_chunks; i++) {
        r->recs[r->n] =
            (struct vt_vec_rec){VT_VEC_CHUNK, (int)i, chunks[i].start_s, chunks[i].end_s, NULL};
        texts[r->n++] = chunks[i].text;
    }
    for (size_t i = 0; i < n_frames; i++) {
        /* a duplicate shows what the frame it repeats shows: that one has the vector */
        if (frames[i].f.duplicate_of >= 0 || !(owned[i] = vt_text_embed_frame_text(&frames[i])))
            continue;
        r->recs[r->n] = (struct vt_vec_rec){VT_VEC_SCREEN, frames[i].f.index, 0, 0, NULL};
        screen_span(frames, n_frames, i, shots, n_shots, &r->recs[r->n].start_s,
                    &r->recs[r->n].end_s);
        texts[r->n++] = owned[i];
    }
    if (!r->n) {
        rc = vt_err(c->err, sizeof(c->err), VT_SKIP,
                    "nothing to embed: no chunks, no text on "
                    "screen");
        goto out;
    }
    r->vecs = vt_xmalloc(r->n * (size_t)r->dim * sizeof(float));
    rc = vt_text_embed_all(e, texts, r->n, r->vecs, c, c->err, sizeof(c->err));
    for (size_t i = 0; i < r->n; i++)
        r->recs[i].v = r->vecs + i * (size_t)r->dim;
    if (!rc) {
        size_t len = strlen(c->model);
        snprintf(c->model + len, sizeof(c->model) - len, "; %zu chunk(s), %zu frame(s)", n_chunks,
                 r->n - n_chunks);
    }
out:
    for (size_t i = 0; owned && i < n_frames; i++)
        free(owned[i]);
    free(owned);
    free(texts);
    free(shots);
    vt_chunks_free(chunks, n_chunks);
    vt_store_frames_free(frames, n_frames);
    return rc;
}

static int text_embed_save(struct vt_stage_ctx *c)
{
    struct te_result *r = c->result;

    return vt_store_vectors_replace(c->lib->store, c->video->id, r->space, r->dim, r->recs, r->n);
}

static int text_embed_clear(struct vt_stage_ctx *c)
{
    return vt_store_vectors_clear(c->lib->store, c->video->id);
}

/* Chunks or frames' lines replaced: only the vectors that point into them go. */
static int text_embed_clear_of(struct vt_stage_ctx *c, enum vt_stage_id in)
{
    unsigned kinds = in == VT_STAGE_CHUNK ? 1u << VT_VEC_CHUNK
                     : in == VT_STAGE_OCR ? 1u << VT_VEC_SCREEN
                                          : VT_VEC_TEXT_KINDS;

    return vt_store_vectors_clear_kinds(c->lib->store, c->video->id, kinds);
}

static void text_embed_release(struct vt_stage_ctx *c)
{
    struct te_result *r = c->result;

    if (!r)
        return;
    free(r->recs);
    free(r->vecs);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_text_embed = {
    .run = text_embed_run,
    .save = text_embed_save,
    .clear = text_embed_clear,
    .clear_of = text_embed_clear_of,
    .release = text_embed_release,
};
