/*
 * What was shown, by likeness: the frame_embed stage and the same-footage pass that
 * follows it (the search of pictures by words is lib/search/visual.c's).
 *
 * Which image model embeds is the library's config (model/stage_config.c: frame_embed.backend,
 * .model, .tensor, .url, .api_key, .joint_text, .api_style, .timeout_s, .batch; a pulled
 * model by its name, models.h); nothing configured, the stage is skipped with "no
 * frame embedding model configured". The stage reads every kept frame's JPEG (a
 * duplicate points at its original and has no vector of its own), embeds it
 * (embed.h) and stores one vector per frame, of kind "visual", in the model's space
 * (vt_embed_id): a model change and `redo --stage frame_embed` re-embed, and spaces
 * are never compared.
 *
 * Then the video's kept frames are compared with every other video's (docs/
 * ARCHITECTURE.md, "Frames by likeness"): a pair is the same picture when the
 * perceptual hashes are within REUSE_HAMMING bits and the embeddings' cosine is at least
 * REUSE_COSINE; runs of such pairs, in order in both videos, become reuse records
 * spanning the shots they lie in (store.h, "reuse"), replaced with the vectors.
 */
#include "base/util.h"
#include "core/library.h"
#include "media/imgload.h"
#include "media/imgutil.h"
#include "ml/embed.h"
#include "ml/models.h"
#include "model/stage_config.h"
#include "stages/frame_embed.h"
#include "visual/keyframe.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EMBED_BATCH 16 /* pictures per call of the backend */

_Static_assert(VT_CONFIG_BATCH_MAX == VT_IMGEMBED_MAX_BATCH, "frame_embed.batch's check");
#define DECODE_MIN 256 /* decode JPEGs at a reduced scale down to this many pixels */
/* The thresholds, chosen on t1200's fixtures (docs/MEASUREMENTS.md, "Same-footage thresholds"):
 * a picture and its copy at a quarter of the pixels and 200 kb/s differ by 0 bits and
 * have a cosine of 0.996 to 0.998; two slides of one template with other words differ by
 * 2 to 16 bits and reach 0.987. */
#define REUSE_HAMMING    6      /* perceptual hash bits (of 64) two views of a picture differ by */
#define REUSE_COSINE     0.993f /* embedding cosine two views of a picture reach */
#define REUSE_WORDS      0.5    /* share of words read on both that two views of a slide agree on */
#define REUSE_MIN_WORDS  3      /* words read on each before the words are compared */
#define REUSE_GAP        2      /* a run may skip one kept frame on either side */
#define REUSE_MIN_FRAMES 2      /* one matching frame alone (a logo, black) is no run */
#define WORDS_MAX        256    /* words of a frame's text compared */

/* ---- the configured model ---- */

struct fe_conf {
    char backend[32];
    const char *model, *tensor, *url, *key, *api_style;
    double timeout_s; /* 0: the backend's default */
    int joint, batch;
};

static int read_conf(const struct vt_config *cf, struct fe_conf *c, char *err, size_t errlen)
{
    /* unset: implied by what is set (the key table's rule) */
    const char *b = vt_config_backend(cf, VT_STAGE_FRAME_EMBED, NULL);
    const char *j = vt_config_get(cf, VT_KEY(FRAME_EMBED_JOINT_TEXT));

    memset(c, 0, sizeof(*c));
    c->model = vt_config_get(cf, VT_KEY(FRAME_EMBED_MODEL));
    c->tensor = vt_config_get(cf, VT_KEY(FRAME_EMBED_TENSOR));
    c->url = vt_config_get(cf, VT_KEY(FRAME_EMBED_URL));
    c->key = vt_config_get(cf, VT_KEY(FRAME_EMBED_API_KEY));
    c->joint = j && (!strcmp(j, "1") || !strcmp(j, "true") || !strcmp(j, "yes"));
    snprintf(c->backend, sizeof(c->backend), "%s", b);
    if (!strcmp(b, "none"))
        return vt_err(err, errlen, VT_SKIP, "no frame embedding model configured");
    /* the server's settings: a value the file says but that cannot work fails the stage */
    static const enum vt_config_key_id shaped[] = {
        VT_KEY_FRAME_EMBED_API_STYLE, VT_KEY_FRAME_EMBED_TIMEOUT_S, VT_KEY_FRAME_EMBED_BATCH};
    for (size_t i = 0; i < VT_ARRAY_LEN(shaped); i++) {
        const char *key = vt_config_table[shaped[i]].name, *v = vt_config_get(cf, key);
        int rc = v ? vt_config_check(key, v, err, errlen) : 0;
        if (rc)
            return rc;
    }
    c->api_style = vt_config_get(cf, VT_KEY(FRAME_EMBED_API_STYLE));
    const char *t = vt_config_get(cf, VT_KEY(FRAME_EMBED_TIMEOUT_S)),
               *n = vt_config_get(cf, VT_KEY(FRAME_EMBED_BATCH));
    c->timeout_s = t ? strtod(t, NULL) : 0;
    c->batch = n ? (int)strtol(n, NULL, 10) : 0;
    if (!vt_config_allowed(VT_KEY(FRAME_EMBED_BACKEND), b))
        return vt_err(err, errlen, VT_EINVAL,
                      "frame_embed.backend '%s' is not tflite, openai or none", b);
    if (!c->model || !*c->model)
        return vt_err(err, errlen, VT_EINVAL,
                      "frame_embed.backend is %s but frame_embed.model is not set", b);
    if (!strcmp(b, "openai") && (!c->url || !*c->url))
        return vt_err(err, errlen, VT_EINVAL,
                      "frame_embed.backend is openai but frame_embed.url is not set");
    return 0;
}

/*
 * One opened model kept for the process, so that the stage for many videos loads it
 * once: a run takes it (the slot is empty meanwhile; another thread opens its own) and
 * gives it back, and a handle for another config is closed; closed at exit.
 */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vt_embed *cache_e;
static char *cache_key;

static struct vt_embed *cache_take(const char *key)
{
    struct vt_embed *e = NULL;

    pthread_mutex_lock(&cache_lock);
    if (cache_e && !strcmp(cache_key, key)) {
        e = cache_e;
        cache_e = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
    return e;
}

/* At exit: the cached model is closed (its memory is not left to the leak checkers). */
static void cache_drop(void)
{
    pthread_mutex_lock(&cache_lock);
    vt_embed_close(cache_e);
    free(cache_key);
    cache_e = NULL;
    cache_key = NULL;
    pthread_mutex_unlock(&cache_lock);
}

void vt_frame_embed_give(const char *key, struct vt_embed *e)
{
    static int registered;
    struct vt_embed *old = NULL;
    char *oldkey = NULL;

    pthread_mutex_lock(&cache_lock);
    if (!registered)
        registered = !atexit(cache_drop);
    old = cache_e;
    oldkey = cache_key;
    cache_e = e;
    cache_key = vt_xstrdup(key);
    pthread_mutex_unlock(&cache_lock);
    vt_embed_close(old);
    free(oldkey);
}

int vt_frame_embed_joint_text(struct vt_library *lib, char *err, size_t errlen)
{
    struct vt_config *cf = NULL;
    struct fe_conf c;
    int rc = vt_config_load(lib->dir, &cf, err, errlen);

    if (!rc) {
        rc = read_conf(cf, &c, err, errlen);
        if (!rc && !c.joint)
            rc = vt_err(err, errlen, VT_SKIP, "the frame model embeds no text");
        vt_config_free(cf);
    }
    return rc;
}

int vt_frame_embed_open(struct vt_library *lib, struct vt_embed **out, char **key, char *err,
                        size_t errlen)
{
    struct vt_config *cf = NULL;
    struct fe_conf c;
    char folder[4096], tensor[256] = "";
    int rc = vt_config_load(lib->dir, &cf, err, errlen);

    *out = NULL;
    *key = NULL;
    if (rc)
        return rc;
    rc = read_conf(cf, &c, err, errlen);
    if (rc)
        goto out;
    const char *model = c.model;
    /* a path as it is; a name: its folder under LIBRARY/models/ (a pulled model's
     * manifest may name the embedding tensor, which frame_embed.tensor overrides) */
    if (!strcmp(c.backend, "tflite")) {
        rc = vt_models_resolve_image(lib->dir, c.model, folder, sizeof(folder), tensor,
                                     sizeof(tensor), err, errlen);
        if (rc)
            goto out;
        model = folder;
        if (c.tensor && *c.tensor)
            tensor[0] = '\0';
    }
    if (!tensor[0] && c.tensor)
        snprintf(tensor, sizeof(tensor), "%s", c.tensor);
    *key = vt_xasprintf("%s\n%s\n%s\n%s\n%s\n%d\n%s\n%g\n%d", c.backend, model, tensor,
                        c.url ? c.url : "", c.key ? c.key : "", c.joint,
                        c.api_style ? c.api_style : "", c.timeout_s, c.batch);
    *out = cache_take(*key);
    if (*out)
        goto out;
    struct vt_embed_spec spec = {.kind = VT_EMBED_IMAGES,
                                 .backend = c.backend,
                                 .model = model,
                                 .tensor = tensor[0] ? tensor : NULL,
                                 .base_url = c.url,
                                 .api_key = c.key,
                                 .joint_text = c.joint,
                                 .api_style = c.api_style,
                                 .timeout_s = c.timeout_s,
                                 .batch = c.batch};
    rc = vt_embed_open(&spec, out, err, errlen);
    if (rc) {
        free(*key);
        *key = NULL;
    }
out:
    vt_config_free(cf);
    return rc;
}

/* ---- the same footage in other videos ---- */

/* The distinct lower-case words of 3+ letters or digits on a page, sorted, into w. */
static size_t page_words(const struct vt_ocr_page *p, char w[][32])
{
    size_t n = 0;

    for (size_t l = 0; p && l < p->n_lines; l++)
        for (const char *s = p->lines[l].noise ? "" : p->lines[l].text; *s;) {
            char word[32];
            size_t len = 0;
            while (*s && !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                           (*s >= '0' && *s <= '9')))
                s++;
            while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                   (*s >= '0' && *s <= '9')) {
                if (len < sizeof(word) - 1)
                    word[len++] = (char)(*s >= 'A' && *s <= 'Z' ? *s + 32 : *s);
                s++;
            }
            word[len] = 0;
            if (len < 3 || n >= WORDS_MAX)
                continue;
            size_t k = 0;
            while (k < n && strcmp(w[k], word) < 0)
                k++;
            if (k < n && !strcmp(w[k], word))
                continue;
            memmove(w[k + 1], w[k], (n - k) * sizeof(w[0]));
            memcpy(w[k], word, len + 1);
            n++;
        }
    return n;
}

/* Whether the words read on two frames allow them to be one picture: when both have
 * REUSE_MIN_WORDS words, they share at least REUSE_WORDS of them (Jaccard), since slides
 * of one template look alike to the hash and the model and differ in their words. */
static int words_agree(const struct vt_ocr_page *a, const struct vt_ocr_page *b)
{
    static _Thread_local char wa[WORDS_MAX][32], wb[WORDS_MAX][32];
    size_t na = page_words(a, wa), nb = page_words(b, wb), i = 0, j = 0, both = 0;

    if (na < REUSE_MIN_WORDS || nb < REUSE_MIN_WORDS)
        return 1;
    while (i < na && j < nb) {
        int c = strcmp(wa[i], wb[j]);
        both += c == 0;
        i += c <= 0;
        j += c >= 0;
    }
    return (double)both / (double)(na + nb - both) >= REUSE_WORDS;
}

static float dot(const float *a, const float *b, int dim)
{
    float s = 0;

    for (int i = 0; i < dim; i++)
        s += a[i] * b[i];
    return s;
}

struct fe_match {
    int i, j; /* positions in this video's and the other's kept frames */
    float cos;
};

/* The span of shot sh (or of the frame's own second when there is no such shot). */
static void shot_span(const struct vt_kf_shot *shots, size_t n, int sh, double t, double *a,
                      double *b)
{
    if (sh >= 0 && (size_t)sh < n) {
        *a = shots[sh].start_s;
        *b = shots[sh].end_s;
    } else {
        *a = *b = t;
    }
}

/*
 * Runs of footage this video (mine, with shots) shares with video other (its kept frames
 * oh[0..no), in one space): appended to *runs.
 */
static int reuse_with(struct vt_library *lib, const struct vt_fe_frame *mine, size_t nm,
                      const struct vt_kf_shot *my_shots, size_t n_my_shots,
                      const struct vt_frame_hash *oh, size_t no, const char *space, int dim,
                      struct vt_reuse **runs, size_t *n_runs, size_t *cap)
{
    struct fe_match *mt = NULL;
    size_t n_mt = 0, mcap = 0;
    int *refs = NULL;
    float *ov = NULL;
    size_t n_ov = 0;
    struct vt_kf_shot *shots = NULL;
    size_t n_shots = 0;
    int rc = 0;

    /* perceptual hashes first: most pairs end here without reading a vector */
    for (size_t i = 0; i < nm; i++)
        for (size_t j = 0; j < no; j++)
            if (vt_img_hamming64(mine[i].phash, oh[j].phash) <= REUSE_HAMMING) {
                vt_grow((void **)&mt, &mcap, n_mt + 1, sizeof(*mt));
                mt[n_mt++] = (struct fe_match){(int)i, (int)j, 0};
            }
    if (!n_mt)
        return 0;
    rc = vt_store_vectors_of(lib->store, oh[0].video_id, VT_VEC_VISUAL, space, dim, &refs, &ov,
                             &n_ov);
    if (rc)
        goto out;
    /* then the embeddings: the other frame's vector by its index (refs are sorted) */
    size_t kept = 0;
    for (size_t k = 0; k < n_mt; k++) {
        int want = oh[mt[k].j].idx;
        size_t lo = 0, hi = n_ov;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (refs[mid] < want)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == n_ov || refs[lo] != want)
            continue; /* not embedded in this space */
        float c = dot(mine[mt[k].i].v, ov + lo * (size_t)dim, dim);
        if (c < REUSE_COSINE)
            continue;
        struct vt_store_frame *of = NULL;
        size_t n_of = 0;
        rc = vt_store_frames_range(lib->store, oh[0].video_id, want, (int64_t)want + 1, &of, &n_of);
        int agree = !rc && n_of && words_agree(mine[mt[k].i].ocr, &of[0].ocr);
        vt_store_frames_free(of, n_of);
        if (rc)
            goto out;
        if (!agree)
            continue;
        mt[kept] = mt[k];
        mt[kept++].cos = c;
    }
    n_mt = kept;
    if (!n_mt)
        goto out;
    rc = vt_store_shots(lib->store, oh[0].video_id, &shots, &n_shots);
    if (rc)
        goto out;
    /* runs: pairs in order in both videos, each step at most REUSE_GAP frames on).
     * Matches are sorted by i then j; a greedy chain takes, for each step, the next
     * match that continues it. */
    char *used = vt_xcalloc(n_mt, 1);
    for (size_t s = 0; s < n_mt; s++) {
        if (used[s])
            continue;
        size_t chain[4096], len = 0;
        chain[len++] = s;
        used[s] = 1;
        for (size_t k = s + 1; k < n_mt && len < VT_ARRAY_LEN(chain); k++) {
            const struct fe_match *last = &mt[chain[len - 1]];
            if (used[k] || mt[k].i <= last->i || mt[k].j <= last->j)
                continue;
            if (mt[k].i - last->i > REUSE_GAP)
                break;
            if (mt[k].j - last->j > REUSE_GAP)
                continue;
            chain[len++] = k;
            used[k] = 1;
        }
        if (len < REUSE_MIN_FRAMES)
            continue;
        const struct fe_match *a = &mt[chain[0]], *b = &mt[chain[len - 1]];
        double sum = 0, x0, x1, y0, y1;
        for (size_t k = 0; k < len; k++)
            sum += mt[chain[k]].cos;
        vt_grow((void **)runs, cap, *n_runs + 1, sizeof(**runs));
        struct vt_reuse *r = &(*runs)[(*n_runs)++];
        memset(r, 0, sizeof(*r));
        snprintf(r->other_id, sizeof(r->other_id), "%s", oh[0].video_id);
        shot_span(my_shots, n_my_shots, mine[a->i].shot, mine[a->i].t_s, &r->start_s, &x1);
        shot_span(my_shots, n_my_shots, mine[b->i].shot, mine[b->i].t_s, &x0, &r->end_s);
        shot_span(shots, n_shots, oh[a->j].shot, oh[a->j].t_s, &r->other_start_s, &y1);
        shot_span(shots, n_shots, oh[b->j].shot, oh[b->j].t_s, &y0, &r->other_end_s);
        r->similarity = sum / (double)len;
        r->frames = (int)len;
    }
    free(used);
out:
    free(shots);
    free(refs);
    free(ov);
    free(mt);
    return rc;
}

int vt_find_reuse(struct vt_library *lib, const char *id, const struct vt_fe_frame *mine, size_t nm,
                  const char *space, int dim, struct vt_reuse **runs, size_t *n_runs)
{
    struct vt_frame_hash *oh = NULL;
    struct vt_kf_shot *shots = NULL;
    size_t no = 0, n_shots = 0, cap = 0;
    int rc = vt_store_frame_hashes(lib->store, NULL, id, &oh, &no);

    *runs = NULL;
    *n_runs = 0;
    if (!rc)
        rc = vt_store_shots(lib->store, id, &shots, &n_shots);
    for (size_t a = 0; !rc && a < no;) {
        size_t b = a;
        while (b < no && !strcmp(oh[b].video_id, oh[a].video_id))
            b++;
        rc = reuse_with(lib, mine, nm, shots, n_shots, oh + a, b - a, space, dim, runs, n_runs,
                        &cap);
        a = b;
    }
    free(shots);
    free(oh);
    return rc;
}

/* ---- the stage ---- */

struct fe_result {
    char space[256];
    int dim;
    struct vt_vec_rec *recs;
    float *vecs;
    size_t n;
    struct vt_reuse *runs;
    size_t n_runs;
};

static int frame_embed_run(struct vt_stage_ctx *c)
{
    struct fe_result *r = vt_xcalloc(1, sizeof(*r));
    struct vt_embed *e = NULL;
    struct vt_store_frame *frames = NULL;
    struct vt_fe_frame *mine = NULL;
    size_t n_frames = 0;
    char *key = NULL;
    int rc;

    c->result = r;
    snprintf(c->model, sizeof(c->model), "none");
    rc = vt_frame_embed_open(c->lib, &e, &key, c->err, sizeof(c->err));
    if (rc)
        return rc;
    snprintf(c->model, sizeof(c->model), "%s", vt_embed_model(e));
    snprintf(r->space, sizeof(r->space), "%s", vt_embed_id(e));
    r->dim = vt_embed_dim(e);
    rc = vt_store_frames(c->lib->store, c->video->id, &frames, &n_frames);
    if (rc) {
        rc = vt_err(c->err, sizeof(c->err), rc, "%s", vt_store_errmsg(c->lib->store));
        goto out;
    }
    r->recs = vt_xcalloc(n_frames + 1, sizeof(*r->recs));
    mine = vt_xcalloc(n_frames + 1, sizeof(*mine));
    size_t *which = vt_xcalloc(n_frames + 1, sizeof(*which));
    for (size_t i = 0; i < n_frames; i++)
        if (frames[i].f.duplicate_of < 0 && frames[i].path) /* duplicates: the original's */
            which[r->n++] = i;
    if (!r->n) {
        free(which);
        rc = vt_err(c->err, sizeof(c->err), VT_SKIP, "no kept frames to embed");
        goto out;
    }
    r->vecs = vt_xmalloc(r->n * (size_t)r->dim * sizeof(float));
    struct vt_image_buf bufs[EMBED_BATCH];
    struct vt_image imgs[EMBED_BATCH];
    memset(bufs, 0, sizeof(bufs));
    for (size_t i = 0; !rc && i < r->n; i += EMBED_BATCH) {
        size_t m = r->n - i < EMBED_BATCH ? r->n - i : EMBED_BATCH;
        for (size_t k = 0; !rc && k < m; k++) {
            const struct vt_store_frame *f = &frames[which[i + k]];
            char *path = vt_xasprintf("%s/%s", c->lib->dir, f->path);
            char err[256];
            rc = vt_image_load_jpeg_min(path, DECODE_MIN, DECODE_MIN, &bufs[k], err, sizeof(err));
            free(path);
            if (rc)
                vt_err(c->err, sizeof(c->err), rc, "frame %d: %s", f->f.index, err);
            imgs[k] = (struct vt_image){bufs[k].rgb, bufs[k].width, bufs[k].height, bufs[k].stride};
        }
        if (!rc)
            rc = vt_embed_images(e, imgs, m, r->vecs + i * (size_t)r->dim, c->err, sizeof(c->err));
        for (size_t k = 0; k < m; k++)
            vt_image_buf_release(&bufs[k]);
        vt_stage_progress(c, 0.9 * (double)(i + m) / (double)r->n);
    }
    for (size_t i = 0; !rc && i < r->n; i++) {
        const struct vt_kf_frame *f = &frames[which[i]].f;
        r->recs[i] = (struct vt_vec_rec){VT_VEC_VISUAL, f->index, f->t_s, f->t_s,
                                         r->vecs + i * (size_t)r->dim};
        mine[i] = (struct vt_fe_frame){f->index, f->shot,      f->t_s,
                                       f->phash, r->recs[i].v, &frames[which[i]].ocr};
    }
    free(which);
    if (rc)
        goto out;
    rc = vt_find_reuse(c->lib, c->video->id, mine, r->n, r->space, r->dim, &r->runs, &r->n_runs);
    if (rc) {
        rc = vt_err(c->err, sizeof(c->err), rc, "same footage: %s", vt_store_errmsg(c->lib->store));
        goto out;
    }
    size_t len = strlen(c->model);
    snprintf(c->model + len, sizeof(c->model) - len, "; %zu frame(s)", r->n);
out:
    if (e)
        vt_frame_embed_give(key, e);
    free(key);
    free(mine);
    vt_store_frames_free(frames, n_frames);
    return rc;
}

static int frame_embed_save(struct vt_stage_ctx *c)
{
    struct fe_result *r = c->result;
    int rc = vt_store_vectors_replace_kinds(c->lib->store, c->video->id, VT_VEC_VISUAL_KINDS,
                                            r->space, r->dim, r->recs, r->n);

    return rc ? rc : vt_store_reuse_replace(c->lib->store, c->video->id, r->runs, r->n_runs);
}

static int frame_embed_clear(struct vt_stage_ctx *c)
{
    int rc = vt_store_vectors_clear_kinds(c->lib->store, c->video->id, VT_VEC_VISUAL_KINDS);

    return rc ? rc : vt_store_reuse_clear(c->lib->store, c->video->id);
}

/* Frames replaced: their vectors and footage runs go. Frames' lines replaced: nothing
 * points into them (the lines only weighed in the runs, kept until the stage re-runs). */
static int frame_embed_clear_of(struct vt_stage_ctx *c, enum vt_stage_id in)
{
    return in == VT_STAGE_OCR ? 0 : frame_embed_clear(c);
}

static void frame_embed_release(struct vt_stage_ctx *c)
{
    struct fe_result *r = c->result;

    if (!r)
        return;
    free(r->recs);
    free(r->vecs);
    vt_store_reuse_free(r->runs, r->n_runs);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_frame_embed = {
    .run = frame_embed_run,
    .save = frame_embed_save,
    .clear = frame_embed_clear,
    .clear_of = frame_embed_clear_of,
    .release = frame_embed_release,
};
