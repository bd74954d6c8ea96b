/*
 * The stages' glue: for each stage, how it gets its inputs from the library,
 * runs the algorithm (media.c, keyframe.c, ocr.c) and stores its outputs.
 * Which stage follows which is the stage table's business (stage.h), not theirs.
 */
#include "base/util.h"
#include "captions/captions.h"
#include "core/library.h"
#include "media/audio.h"
#include "media/media.h"
#include "model/stage_config.h"
#include "speech/stt.h"
#include "speech/stt_hints.h"
#include "speech/vad.h"
#include "stages/fetch.h"
#include "text/chunk.h"
#include "visual/keyframe.h"
#include "visual/ocr.h"

#include <dirent.h>
#include <libavformat/avformat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- fetch: a local file is registered, a URL downloaded (fetch.c); both probed ---- */

struct fetch_result {
    struct vt_video_rec v; /* owned: what fetch learnt */
    struct vt_probe probe;
    struct vt_chapter *chapters; /* the source's own chapters (URLs), owned */
    size_t n_chapters;
};

static int fetch_run(struct vt_stage_ctx *c)
{
    struct fetch_result *r = vt_xcalloc(1, sizeof(*r));
    const struct vt_video_rec *v = c->video;
    int remote = v->source_kind && strcmp(v->source_kind, "file");
    struct stat st;
    char *path = NULL;
    double measured;
    int rc;

    c->result = r;
    if (remote) {
        rc = vt_fetch_url_run(c, &r->v, &r->chapters, &r->n_chapters);
        if (rc)
            return rc;
        path = vt_xasprintf("%s/%s", c->lib->dir, r->v.source_path);
    } else {
        unsigned ver = avformat_version();

        snprintf(c->model, sizeof(c->model), "local file, libavformat %u.%u.%u", ver >> 16,
                 (ver >> 8) & 0xff, ver & 0xff);
        path = vt_xstrdup_or_null(v->source_path);
    }
    if (!path || stat(path, &st)) {
        rc = vt_err(c->err, sizeof(c->err), VT_ENOTFOUND, "'%s': media file is gone",
                    path ? path : "");
        goto out;
    }
    rc = vt_media_probe(path, &r->probe, c->err, sizeof(c->err));
    if (!rc)
        rc = vt_media_measure_duration(path, &measured, c->err, sizeof(c->err));
    if (rc)
        goto out;
    snprintf(r->v.id, sizeof(r->v.id), "%s", v->id);
    if (!r->v.title)
        r->v.title = vt_xstrdup_or_null(r->probe.title ? r->probe.title : v->title);
    if (!r->v.language)
        r->v.language = vt_xstrdup_or_null(r->probe.language);
    r->v.container = vt_xstrdup_or_null(r->probe.format);
    /* the decoded length beats what a container or a site claims */
    r->v.duration_s = measured > 0 ? measured : r->probe.duration_s;
    r->v.width = r->probe.width;
    r->v.height = r->probe.height;
    r->v.rotation = r->probe.rotation;
    r->v.fps = r->probe.fps;
    r->v.has_video = r->probe.has_video;
    r->v.has_audio = r->probe.has_audio;
    r->v.size_bytes = st.st_size;
    if (!remote) {
        r->v.channel = vt_xstrdup_or_null(v->channel);
        r->v.published = vt_xstrdup_or_null(v->published);
    }
out:
    free(path);
    return rc;
}

static int fetch_save(struct vt_stage_ctx *c)
{
    struct fetch_result *r = c->result;
    int rc = vt_store_video_update_meta(c->lib->store, &r->v);

    if (!rc && c->video->source_kind && strcmp(c->video->source_kind, "file"))
        rc = vt_store_video_update_source(c->lib->store, &r->v);
    /* the source's chapter list, else the container's */
    if (!rc && r->n_chapters)
        rc = vt_store_chapters_replace(c->lib->store, c->video->id, r->chapters, r->n_chapters,
                                       "source metadata");
    else if (!rc)
        rc = vt_store_chapters_replace(c->lib->store, c->video->id, r->probe.chapters,
                                       r->probe.n_chapters, "container");
    if (!rc)
        rc = vt_store_title_docs_refresh(c->lib->store, c->video->id);
    return rc;
}

static void fetch_release(struct vt_stage_ctx *c)
{
    struct fetch_result *r = c->result;

    if (!r)
        return;
    vt_probe_release(&r->probe);
    for (size_t i = 0; i < r->n_chapters; i++)
        free(r->chapters[i].title);
    free(r->chapters);
    vt_video_rec_release(&r->v);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_fetch = {
    .run = fetch_run,
    .save = fetch_save,
    .release = fetch_release,
    .indexed = vt_fetch_after_index,
};

/* ---- keyframe ---- */

/* Stages that decode the media need it; media not kept after indexing is gone. */
/* The engines a library keeps between videos, in its slots: vt_library_close calls these. */
static void ocr_close(void *ocr)
{
    vt_ocr_free(ocr);
}

static void stt_close(void *stt)
{
    vt_stt_free(stt);
}

static int need_media(struct vt_stage_ctx *c)
{
    if (c->video->source_path)
        return 0;
    return vt_err(c->err, sizeof(c->err), VT_ENOTFOUND,
                  "the media file was not kept (--no-keep-media): redo --stage fetch first");
}

struct keyframe_result {
    struct vt_kf_result kf;
    char *rel_dir; /* frames/<id>/<run>, relative to the library */
    char *abs_dir;
    int saved;
};

static int keyframe_run(struct vt_stage_ctx *c)
{
    struct keyframe_result *r = vt_xcalloc(1, sizeof(*r));
    char *video_dir;
    int rc;

    c->result = r;
    snprintf(c->model, sizeof(c->model), "vidtheque-shots");
    if (!c->video->has_video)
        return vt_err(c->err, sizeof(c->err), VT_SKIP, "no video stream");
    if (need_media(c))
        return VT_ENOTFOUND;
    /* each run writes into its own folder: committed frames are never overwritten */
    r->rel_dir = vt_xasprintf("frames/%s/r%lx%lx", c->video->id, (unsigned long)vt_wall_s(),
                              (unsigned long)getpid());
    r->abs_dir = vt_xasprintf("%s/%s", c->lib->dir, r->rel_dir);
    video_dir = vt_xasprintf("%s/frames/%s", c->lib->dir, c->video->id);
    rc = vt_mkdir_p(video_dir, c->err, sizeof(c->err));
    free(video_dir);
    if (!rc)
        rc = vt_mkdir_p(r->abs_dir, c->err, sizeof(c->err));
    if (rc)
        return rc;
    rc = vt_keyframe_run(c->video->source_path, r->abs_dir, &r->kf, vt_stage_progress, c, c->err,
                         sizeof(c->err));
    if (r->kf.model[0])
        snprintf(c->model, sizeof(c->model), "%s", r->kf.model);
    return rc;
}

static int keyframe_save(struct vt_stage_ctx *c)
{
    struct keyframe_result *r = c->result;
    int rc = vt_store_keyframes_replace(c->lib->store, c->video->id, &r->kf, r->rel_dir);

    r->saved = !rc;
    return rc;
}

static int keyframe_clear(struct vt_stage_ctx *c)
{
    return vt_store_keyframes_clear(c->lib->store, c->video->id);
}

/* Remove the folders of earlier runs, now that this run's frames are committed. */
static void keyframe_after_commit(struct vt_stage_ctx *c)
{
    struct keyframe_result *r = c->result;
    char *video_dir = vt_xasprintf("%s/frames/%s", c->lib->dir, c->video->id);
    const char *mine = strrchr(r->rel_dir, '/') + 1;
    DIR *d = opendir(video_dir);
    struct dirent *e;

    while (d && (e = readdir(d))) {
        char *p;

        if (e->d_name[0] == '.' || !strcmp(e->d_name, mine))
            continue;
        p = vt_xasprintf("%s/%s", video_dir, e->d_name);
        vt_rm_rf(p);
        free(p);
    }
    if (d)
        closedir(d);
    free(video_dir);
}

static void keyframe_release(struct vt_stage_ctx *c)
{
    struct keyframe_result *r = c->result;

    if (!r)
        return;
    if (!r->saved && r->abs_dir)
        vt_rm_rf(r->abs_dir);
    vt_kf_result_release(&r->kf);
    free(r->rel_dir);
    free(r->abs_dir);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_keyframe = {
    .run = keyframe_run,
    .save = keyframe_save,
    .clear = keyframe_clear,
    .after_commit = keyframe_after_commit,
    .release = keyframe_release,
};

/* ---- ocr ---- */

struct ocr_result {
    int *frame_index;
    struct vt_ocr_page *pages;
    size_t n;
};

static int ocr_run(struct vt_stage_ctx *c)
{
    struct ocr_result *r = vt_xcalloc(1, sizeof(*r));
    struct vt_store_frame *frames = NULL;
    struct vt_ocr *ocr;
    char **paths = NULL;
    size_t n = 0;
    int rc;

    c->result = r;
    snprintf(c->model, sizeof(c->model), "tesseract");
    ocr = vt_lib_slot(c->lib, VT_STAGE_OCR);
    if (!ocr) {
        ocr = vt_ocr_new(0, "eng", c->err, sizeof(c->err));
        if (!ocr)
            return VT_ENOTFOUND;
        vt_lib_slot_set(c->lib, VT_STAGE_OCR, ocr, ocr_close);
    }
    snprintf(c->model, sizeof(c->model), "%s", vt_ocr_model(ocr));
    rc = vt_store_frames(c->lib->store, c->video->id, &frames, &n);
    if (rc)
        return vt_err(c->err, sizeof(c->err), rc, "%s", vt_store_errmsg(c->lib->store));
    paths = vt_xcalloc(n, sizeof(*paths));
    r->frame_index = vt_xcalloc(n, sizeof(*r->frame_index));
    for (size_t i = 0; i < n; i++) {
        if (!frames[i].path)
            continue; /* skipped as a duplicate: no image, nothing to read */
        paths[r->n] = vt_xasprintf("%s/%s", c->lib->dir, frames[i].path);
        r->frame_index[r->n++] = frames[i].f.index;
    }
    r->pages = vt_xcalloc(r->n, sizeof(*r->pages));
    rc = vt_ocr_run(ocr, (const char *const *)paths, r->n, r->pages, vt_stage_progress, c, c->err,
                    sizeof(c->err));
    for (size_t i = 0; i < r->n; i++)
        free(paths[i]);
    free(paths);
    vt_store_frames_free(frames, n);
    return rc;
}

static int ocr_save(struct vt_stage_ctx *c)
{
    struct ocr_result *r = c->result;

    return vt_store_ocr_replace(c->lib->store, c->video->id, r->frame_index, r->pages, r->n);
}

static int ocr_clear(struct vt_stage_ctx *c)
{
    return vt_store_ocr_clear(c->lib->store, c->video->id);
}

static void ocr_release(struct vt_stage_ctx *c)
{
    struct ocr_result *r = c->result;

    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        vt_ocr_page_release(&r->pages[i]);
    free(r->pages);
    free(r->frame_index);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_ocr = {
    .run = ocr_run,
    .save = ocr_save,
    .clear = ocr_clear,
    .release = ocr_release,
};

/* ---- stt: captions when the file has them (and the mode allows), else recognition ---- */

struct stt_result {
    struct vt_transcript t;
    int recognised; /* from speech, not captions */
};

/*
 * Speech hints: the words of the video's title, description, chapter titles and the OCR
 * lines of its kept frames read with at least HINT_OCR_MIN_CONF (lines below are mostly
 * noise read in pictures). The stt stage runs after ocr for this (stage.h).
 */
#define HINT_OCR_MIN_CONF 0.5

static int stt_hints_gather(struct vt_stage_ctx *c, struct vt_stt_hints *h)
{
    struct vt_store_chapter *ch = NULL;
    struct vt_store_frame *fr = NULL;
    size_t n_ch = 0, n_fr = 0;
    int rc;

    vt_stt_hints_add(h, c->video->title);
    vt_stt_hints_add(h, c->video->description);
    rc = vt_store_chapters(c->lib->store, c->video->id, &ch, &n_ch);
    if (!rc)
        rc = vt_store_frames(c->lib->store, c->video->id, &fr, &n_fr);
    if (rc) {
        rc = vt_err(c->err, sizeof(c->err), rc, "%s", vt_store_errmsg(c->lib->store));
        goto out;
    }
    for (size_t i = 0; i < n_ch; i++)
        vt_stt_hints_add(h, ch[i].title);
    for (size_t i = 0; i < n_fr; i++)
        for (size_t k = 0; k < fr[i].ocr.n_lines; k++)
            if (fr[i].ocr.lines[k].conf >= HINT_OCR_MIN_CONF)
                vt_stt_hints_add(h, fr[i].ocr.lines[k].text);
    vt_stt_hints_finish(h);
out:
    vt_store_chapters_free(ch, n_ch);
    vt_store_frames_free(fr, n_fr);
    return rc;
}

/*
 * The VAD the config asks for (stt.vad: energy, the default, is none: *vad stays NULL;
 * silero loads stt.vad_model or the installed model). A model asked for that cannot be
 * loaded fails the stage: recognising with another segmenter than the one configured would
 * give a transcript nobody asked for.
 */
static int stt_vad_open(struct vt_stage_ctx *c, const struct vt_config *cfg, struct vt_vad **vad)
{
    const char *kind = vt_config_get(cfg, "stt.vad"), *path = vt_config_get(cfg, "stt.vad_model");
    char why[384];
    int rc;

    *vad = NULL;
    if (path) {
        rc = vt_config_check("stt.vad_model", path, c->err, sizeof(c->err));
        if (rc)
            return rc;
    }
    if (kind) {
        rc = vt_config_check("stt.vad", kind, c->err, sizeof(c->err));
        if (rc)
            return rc;
    }
    if (!kind || !strcmp(kind, "energy"))
        return 0;
    if (!path)
        path = VT_CONFIG_VAD_MODEL;
    rc = vt_vad_open(path, vad, why, sizeof(why));
    if (rc == VT_ENOTFOUND)
        return vt_err(c->err, sizeof(c->err), rc,
                      "stt.vad is silero but '%s' does not exist (set stt.vad_model to the "
                      "Silero VAD ggml file, or stt.vad to energy)",
                      path);
    if (rc)
        return vt_err(c->err, sizeof(c->err), rc, "stt.vad_model: %s", why);
    return 0;
}

/* Recognise the video with stt, vad (NULL: the energy detector) finding the speech. */
static int stt_run_vad(struct vt_stage_ctx *c, struct vt_stt *stt, const struct vt_vad *vad,
                       struct stt_result *r)
{
    int rc;

    vt_stt_set_vad(stt, vad);
    snprintf(c->model, sizeof(c->model), "%s", vt_stt_model(stt));
    rc = vt_stt_run_file(stt, c->video->source_path, &r->t, vt_stage_progress, c, c->err,
                         sizeof(c->err));
    /* stt may outlive vad (it is kept between videos, in the handle's slot) */
    vt_stt_set_vad(stt, NULL);
    return rc;
}

/*
 * Speech recognition with the backend the library's config chooses (config.h: stt.backend
 * pocketsphinx, the default, or openai with stt.url, stt.model, stt.api_key). A server's
 * recogniser costs nothing to make and is made per run, with the video's language as a
 * hint; PocketSphinx's decoders are kept in the handle's slot between videos.
 * VIDTHEQUE_STT_TIMEOUT_S bounds each request to a server (300 s by default).
 */
static int stt_recognise_with(struct vt_stage_ctx *c, struct stt_result *r,
                              const struct vt_config *cfg, const struct vt_vad *vad)
{
    struct vt_stt_hints hints = {0};
    const char *backend = vt_config_backend(cfg, VT_STAGE_STT, NULL);
    const char *hints_cfg = vt_config_get(cfg, "stt.hints");
    int rc;

    r->recognised = 1;
    if (!strcmp(backend, "openai")) {
        const char *tmo = getenv("VIDTHEQUE_STT_TIMEOUT_S");
        struct vt_stt_server_spec spec = {.base_url = vt_config_get(cfg, "stt.url"),
                                          .model = vt_config_get(cfg, "stt.model"),
                                          .api_key = vt_config_get(cfg, "stt.api_key"),
                                          .timeout_s = tmo && *tmo ? strtod(tmo, NULL) : 0};
        struct vt_stt *stt = vt_stt_new_server(&spec, c->err, sizeof(c->err));

        if (!stt)
            return VT_EINVAL;
        vt_stt_set_language(stt, c->video->language);
        rc = stt_run_vad(c, stt, vad, r);
        if (!rc)
            snprintf(c->model, sizeof(c->model), "%s", r->t.model);
        vt_stt_free(stt);
        return rc;
    }
    if (!vt_config_allowed("stt.backend", backend))
        return vt_err(c->err, sizeof(c->err), VT_EINVAL,
                      "stt.backend '%s': not pocketsphinx or openai", backend);
    if (!hints_cfg || strcmp(hints_cfg, "false")) {
        rc = stt_hints_gather(c, &hints);
        if (rc) {
            vt_stt_hints_release(&hints);
            return rc;
        }
    }
    if (hints.n_words) {
        struct vt_stt *stt;

        /* one set of decoders at a time: the hinted ones know this video's words */
        vt_lib_slot_set(c->lib, VT_STAGE_STT, NULL, NULL);
        stt = vt_stt_new_hinted(0, &hints, c->err, sizeof(c->err));
        if (!stt) {
            vt_stt_hints_release(&hints);
            return VT_ENOTFOUND;
        }
        rc = stt_run_vad(c, stt, vad, r);
        /* no rare word was left: these are plain decoders, kept for the next video */
        if (!hints.n_words)
            vt_lib_slot_set(c->lib, VT_STAGE_STT, stt, stt_close);
        else
            vt_stt_free(stt);
        vt_stt_hints_release(&hints);
        return rc;
    }
    struct vt_stt *stt = vt_lib_slot(c->lib, VT_STAGE_STT);
    if (!stt) {
        stt = vt_stt_new(0, c->err, sizeof(c->err));
        if (!stt)
            return VT_ENOTFOUND;
        vt_lib_slot_set(c->lib, VT_STAGE_STT, stt, stt_close);
    }
    return stt_run_vad(c, stt, vad, r);
}

/* The config, its VAD, then the recognition. */
static int stt_recognise(struct vt_stage_ctx *c, struct stt_result *r)
{
    struct vt_config *cfg = NULL;
    struct vt_vad *vad = NULL;
    int rc = vt_config_load(c->lib->dir, &cfg, c->err, sizeof(c->err));

    if (!rc)
        rc = stt_vad_open(c, cfg, &vad);
    if (!rc)
        rc = stt_recognise_with(c, r, cfg, vad);
    vt_vad_free(vad);
    vt_config_free(cfg);
    return rc;
}

/* The transcript from captions (unless the mode says recognize, or !captions), else from
 * speech recognition. */
static int stt_read(struct vt_stage_ctx *c, int captions)
{
    struct stt_result *r = vt_xcalloc(1, sizeof(*r));
    const char *mode = c->video->stt_mode ? c->video->stt_mode : "auto";
    char why[512] = "";
    int rc;

    c->result = r;
    snprintf(c->model, sizeof(c->model), "captions");
    if (captions && strcmp(mode, "recognize") && c->video->captions_path) {
        /* the source's own captions, fetched with the video */
        char *p = vt_xasprintf("%s/%s", c->lib->dir, c->video->captions_path);

        rc = vt_captions_load_file(p, &r->t, why, sizeof(why));
        free(p);
        if (rc == 0) {
            snprintf(c->model, sizeof(c->model), "%s",
                     c->video->captions_model ? c->video->captions_model : r->t.model);
            return 0;
        }
        vt_transcript_release(&r->t);
        vt_log(c->lib, VT_LOG_WARN, "%s: the source's captions: %s", c->video->id, why);
    }
    if (captions && strcmp(mode, "recognize") && c->video->source_path) {
        rc = vt_captions_import(c->video->source_path, &r->t, why, sizeof(why));
        if (rc == 0) {
            snprintf(c->model, sizeof(c->model), "%s", r->t.model);
            return 0;
        }
        if (rc < 0)
            return vt_err(c->err, sizeof(c->err), rc, "%s", why);
        vt_transcript_release(&r->t);
    }
    /* a mode the user asked for that cannot be followed is a failure, not a skip */
    if (!strcmp(mode, "captions"))
        return vt_err(c->err, sizeof(c->err), VT_ENOTFOUND, "--stt=captions: %s",
                      why[0] ? why : "no captions");
    snprintf(c->model, sizeof(c->model), "pocketsphinx");
    if (!c->video->has_audio)
        return vt_err(c->err, sizeof(c->err), !strcmp(mode, "recognize") ? VT_EMEDIA : VT_SKIP,
                      "%sno audio track", !strcmp(mode, "recognize") ? "--stt=recognize: " : "");
    if (need_media(c))
        return VT_ENOTFOUND;
    return stt_recognise(c, r);
}

static void stt_release(struct vt_stage_ctx *c);

/*
 * The transcript, whatever its source, bounded by the media: captions are files anyone
 * can write, and a 5 s video may come with 150,000 cues or cues 99,999 hours in. What was
 * dropped is said in the stage's model (its provenance) and logged. Captions with no cue
 * inside the media are no captions: unless the mode is "captions", speech is recognised.
 */
static int stt_run(struct vt_stage_ctx *c)
{
    const char *mode = c->video->stt_mode ? c->video->stt_mode : "auto";
    struct stt_result *r;
    struct vt_bound_report rep;
    size_t len;
    int rc = stt_read(c, 1);

    r = c->result;
    if (rc || !r)
        return rc;
    vt_transcript_bound(&r->t, c->video->duration_s, &rep);
    if (!r->t.n_cues && strcmp(mode, "captions") && !r->recognised) {
        /* captions with nothing inside the media are no captions: recognise the speech */
        vt_log(c->lib, VT_LOG_WARN,
               "%s: stt: no caption cue starts within the media's %.1f s (%zu past its end): "
               "recognising the speech instead",
               c->video->id, c->video->duration_s, rep.past_end);
        stt_release(c);
        memset(c->model, 0, sizeof(c->model));
        rc = stt_read(c, 0);
        r = c->result;
        if (rc || !r)
            return rc;
        vt_transcript_bound(&r->t, c->video->duration_s, &rep);
    }
    if (!rep.past_end && !rep.over_rate && !rep.cut)
        return 0;
    len = strlen(c->model);
    snprintf(c->model + len, sizeof(c->model) - len,
             "; dropped %zu cue(s) past the end, %zu over %d a minute; %zu cut", rep.past_end,
             rep.over_rate, VT_CUES_PER_MINUTE, rep.cut);
    vt_log(c->lib, VT_LOG_WARN,
           "%s: stt: %zu cue(s) start past the media's end and %zu exceed %d a minute: dropped; "
           "%zu cue(s) longer than %d bytes or %d words: cut",
           c->video->id, rep.past_end, rep.over_rate, VT_CUES_PER_MINUTE, rep.cut, VT_CUE_MAX_BYTES,
           VT_CUE_MAX_WORDS);
    if (!r->t.n_cues)
        return vt_err(c->err, sizeof(c->err), VT_SKIP, "no cues within the media's %.1f s",
                      c->video->duration_s);
    return 0;
}

static int stt_save(struct vt_stage_ctx *c)
{
    struct stt_result *r = c->result;

    return vt_store_transcript_replace(c->lib->store, c->video->id, &r->t);
}

static int stt_clear(struct vt_stage_ctx *c)
{
    return vt_store_transcript_clear(c->lib->store, c->video->id);
}

static void stt_release(struct vt_stage_ctx *c)
{
    struct stt_result *r = c->result;

    if (!r)
        return;
    vt_transcript_release(&r->t);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_stt = {
    .run = stt_run,
    .save = stt_save,
    .clear = stt_clear,
    .release = stt_release,
};

/* ---- chunk: cues grouped into passages for retrieval ---- */

struct chunk_result {
    struct vt_chunk *chunks;
    size_t n;
};

static int chunk_run(struct vt_stage_ctx *c)
{
    struct chunk_result *r = vt_xcalloc(1, sizeof(*r));
    struct vt_transcript t;
    struct vt_kf_shot *shots = NULL;
    struct vt_store_chapter *chapters = NULL;
    size_t n_shots = 0, n_chapters = 0;
    double *ends = NULL;
    int rc;

    c->result = r;
    snprintf(c->model, sizeof(c->model), "vidtheque-chunk 1 (20-60 s, ends at shot/chapter)");
    rc = vt_store_transcript(c->lib->store, c->video->id, &t);
    if (!rc)
        rc = vt_store_shots(c->lib->store, c->video->id, &shots, &n_shots);
    if (!rc)
        rc = vt_store_chapters(c->lib->store, c->video->id, &chapters, &n_chapters);
    if (rc) {
        rc = vt_err(c->err, sizeof(c->err), rc, "%s", vt_store_errmsg(c->lib->store));
        goto out;
    }
    if (!t.n_cues) {
        rc = vt_err(c->err, sizeof(c->err), VT_SKIP, "no cues");
        goto out;
    }
    /* where a passage would rather end: the ends of shots and chapters */
    ends = vt_xcalloc(n_shots + n_chapters + 1, sizeof(*ends));
    for (size_t i = 0; i < n_shots; i++)
        ends[i] = shots[i].end_s;
    for (size_t i = 0; i < n_chapters; i++)
        ends[n_shots + i] = chapters[i].end_s;
    vt_chunk_cues(&t, ends, n_shots + n_chapters, &r->chunks, &r->n);
out:
    free(ends);
    free(shots);
    vt_store_chapters_free(chapters, n_chapters);
    vt_transcript_release(&t);
    return rc;
}

static int chunk_save(struct vt_stage_ctx *c)
{
    struct chunk_result *r = c->result;

    return vt_store_chunks_replace(c->lib->store, c->video->id, r->chunks, r->n);
}

static int chunk_clear(struct vt_stage_ctx *c)
{
    return vt_store_chunks_clear(c->lib->store, c->video->id);
}

static void chunk_release(struct vt_stage_ctx *c)
{
    struct chunk_result *r = c->result;

    if (!r)
        return;
    vt_chunks_free(r->chunks, r->n);
    free(r);
    c->result = NULL;
}

const struct vt_stage_def vt_stage_chunk = {
    .run = chunk_run,
    .save = chunk_save,
    .clear = chunk_clear,
    .release = chunk_release,
};
