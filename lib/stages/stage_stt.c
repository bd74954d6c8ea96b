/*
 * The stt stage: captions when the file has them (and the video's mode allows), else speech
 * recognised from the audio track (stt.c), with the video's own words as hints
 * (stt_hints.c) and the voice activity detector the config names (vad.c); the recogniser is
 * created once per library handle, in the stage's slot.
 */
#include "base/util.h"
#include "captions/captions.h"
#include "core/library.h"
#include "media/audio.h"
#include "media/media.h"
#include "ml/models.h"
#include "model/stage_config.h"
#include "speech/stt.h"
#include "speech/stt_hints.h"
#include "speech/vad.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The engine the library keeps between videos, in the stage's slot: vt_library_close calls
 * this. */
static void stt_close(void *stt)
{
    vt_stt_free(stt);
}

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
    const char *kind = vt_config_get(cfg, VT_KEY(STT_VAD)),
               *path = vt_config_get(cfg, VT_KEY(STT_VAD_MODEL));
    char why[384];
    int rc;

    *vad = NULL;
    if (path) {
        rc = vt_config_check(VT_KEY(STT_VAD_MODEL), path, c->err, sizeof(c->err));
        if (rc)
            return rc;
    }
    if (kind) {
        rc = vt_config_check(VT_KEY(STT_VAD), kind, c->err, sizeof(c->err));
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
 * Whisper in process: the checkpoint stt.model names (a path, or a model pulled into the
 * library), kept in the handle's slot between videos (loading it costs seconds) unless
 * another one is asked for; the video's language when the source says it (else detected)
 * and its words as the initial prompt (unless stt.hints is false).
 */
static int stt_whisper(struct vt_stage_ctx *c, struct stt_result *r, const struct vt_config *cfg,
                       const struct vt_vad *vad, int hinted)
{
    char path[PATH_MAX], name[PATH_MAX], commit[64], head[VT_STT_MODEL_MAX];
    struct vt_stt_hints hints = {0};
    struct vt_stt *stt;
    int rc = vt_models_resolve_speech(c->lib->dir, vt_config_get(cfg, VT_KEY(STT_MODEL)), path,
                                      sizeof(path), name, sizeof(name), commit, sizeof(commit),
                                      c->err, sizeof(c->err));

    if (rc == VT_ENOTFOUND)
        return VT_EHERE; /* not pulled on this machine: a worker that has it runs it */
    if (rc)
        return rc;
    stt = vt_lib_slot(c->lib, VT_STAGE_STT);
    snprintf(head, sizeof(head), "whisper %.60s (", name);
    if (!stt || strncmp(vt_stt_model(stt), head, strlen(head))) {
        struct vt_stt_whisper_spec spec = {.path = path, .name = name, .revision = commit};

        vt_lib_slot_set(c->lib, VT_STAGE_STT, NULL, NULL);
        rc = vt_stt_new_whisper(&spec, &stt, c->err, sizeof(c->err));
        if (rc)
            return rc;
        vt_lib_slot_set(c->lib, VT_STAGE_STT, stt, stt_close);
    }
    if (hinted) {
        rc = stt_hints_gather(c, &hints);
        if (rc) {
            vt_stt_hints_release(&hints);
            return rc;
        }
    }
    vt_stt_set_prompt(stt, hints.n_words ? &hints : NULL);
    vt_stt_hints_release(&hints);
    vt_stt_set_language(stt, c->video->language);
    return stt_run_vad(c, stt, vad, r);
}

/*
 * Speech recognition with the backend the library's config chooses (model/stage_config.c:
 * stt.backend pocketsphinx, the default, whisper with stt.model, or openai with stt.url,
 * stt.model, stt.api_key). A
 * server's recogniser costs nothing to make and is made per run, with the video's language as a
 * hint; PocketSphinx's decoders are kept in the handle's slot between videos.
 * VIDTHEQUE_STT_TIMEOUT_S bounds each request to a server (300 s by default).
 */
static int stt_recognise_with(struct vt_stage_ctx *c, struct stt_result *r,
                              const struct vt_config *cfg, const struct vt_vad *vad)
{
    struct vt_stt_hints hints = {0};
    const char *backend = vt_config_backend(cfg, VT_STAGE_STT, NULL);
    const char *hints_cfg = vt_config_get(cfg, VT_KEY(STT_HINTS));
    int rc;

    r->recognised = 1;
    if (!strcmp(backend, "openai")) {
        const char *tmo = getenv("VIDTHEQUE_STT_TIMEOUT_S");
        struct vt_stt_server_spec spec = {.base_url = vt_config_get(cfg, VT_KEY(STT_URL)),
                                          .model = vt_config_get(cfg, VT_KEY(STT_MODEL)),
                                          .api_key = vt_config_get(cfg, VT_KEY(STT_API_KEY)),
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
    if (!strcmp(backend, "whisper"))
        return stt_whisper(c, r, cfg, vad, !hints_cfg || strcmp(hints_cfg, "false"));
    if (!vt_config_allowed(VT_KEY(STT_BACKEND), backend))
        return vt_err(c->err, sizeof(c->err), VT_EINVAL,
                      "stt.backend '%s': not pocketsphinx, whisper or openai", backend);
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
            return VT_EHERE; /* the model this machine has: another may load */
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
    /* the slot may hold a Whisper model from a config changed since */
    if (stt && strncmp(vt_stt_model(stt), "pocketsphinx", 12)) {
        vt_lib_slot_set(c->lib, VT_STAGE_STT, NULL, NULL);
        stt = NULL;
    }
    if (!stt) {
        stt = vt_stt_new(0, c->err, sizeof(c->err));
        if (!stt)
            return VT_EHERE; /* the model this machine has: another may load */
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
    if (vt_stage_need_media(c))
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
    if (rep.past_end && c->video->duration_s >= VT_MEDIA_MAX_DURATION_S)
        snprintf(c->cut, sizeof(c->cut),
                 "cut: %zu cue(s) past the first %.0f h of the media are not indexed", rep.past_end,
                 VT_MEDIA_MAX_DURATION_S / 3600);
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
