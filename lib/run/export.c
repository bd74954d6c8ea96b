/*
 * The video document: everything the library knows about one video as JSON, the
 * format of `export --format json`, of the web API and of what `show` renders.
 * The field names are an interface other tools rely on (docs/ARCHITECTURE.md).
 */
#include "base/util.h"
#include "captions/captions.h"
#include "core/library.h"
#include "visual/keyframe.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Strings come from hostile files: invalid UTF-8 is repaired, never dropped. */
static json_t *str_or_null(const char *s)
{
    json_t *j;
    char *clean;

    if (!s)
        return json_null();
    j = json_string(s);
    if (j)
        return j;
    clean = vt_utf8_clean(s);
    j = json_string(clean);
    free(clean);
    return j ? j : json_null();
}

/* A frame image's small version (vt_kf_small_name) when it is on disk: a library indexed
 * before small versions were written has none, and readers then use the image itself. */
static json_t *small_or_null(const struct vt_library *lib, const char *image)
{
    char name[PATH_MAX];
    char *abs;
    int ok;

    if (!image || vt_kf_small_name(image, name, sizeof(name)))
        return json_null();
    abs = vt_lib_path(lib, name);
    ok = !access(abs, R_OK);
    free(abs);
    return ok ? str_or_null(name) : json_null();
}

/* Round to milliseconds: the export is read by people and diffed by tests. */
static json_t *seconds(double s)
{
    return json_real(round(s * 1000.0) / 1000.0);
}

static json_t *iso_or_null(double epoch_s)
{
    char buf[32];

    if (epoch_s <= 0)
        return json_null();
    vt_utc_iso(buf, sizeof(buf), epoch_s);
    return json_string(buf);
}

/* [from, to) of a page; everything when pg is NULL. */
static void page_range(const struct vt_doc_page *pg, int64_t *from, int64_t *to)
{
    *from = pg && pg->offset > 0 ? pg->offset : 0;
    *to = !pg || pg->limit < 0 || pg->limit > INT64_MAX - *from ? INT64_MAX : *from + pg->limit;
}

/* Name the list in "pages" when the document holds less than all of it. */
static void note_page(json_t *pages, const char *name, int64_t from, size_t n, int64_t total)
{
    if (from == 0 && (int64_t)n >= total)
        return;
    json_object_set_new(pages, name,
                        json_pack("{s:I,s:I,s:I}", "offset", (json_int_t)from, "count",
                                  (json_int_t)n, "total", (json_int_t)total));
}

/* What a video document is built from, read from the store for one video and one page. */
struct doc_parts {
    struct vt_stage_rec *stages;
    struct vt_kf_shot *shots;
    struct vt_store_frame *frames;
    struct vt_store_chapter *chapters;
    struct vt_transcript tr;
    struct vt_chunk *chunks;
    struct vt_reuse *reuse;
    size_t n_stages, n_shots, n_frames, n_chapters, n_chunks, n_reuse;
    struct vt_store_counts cnt;
    int64_t shot0, shot1, frame0, frame1, cue0, cue1, chunk0, chunk1;
};

static int parts_read(struct vt_library *lib, const char *id, const struct vt_doc_pages *pg,
                      struct doc_parts *d)
{
    int rc;

    page_range(pg ? &pg->shots : NULL, &d->shot0, &d->shot1);
    page_range(pg ? &pg->frames : NULL, &d->frame0, &d->frame1);
    page_range(pg ? &pg->cues : NULL, &d->cue0, &d->cue1);
    page_range(pg ? &pg->chunks : NULL, &d->chunk0, &d->chunk1);
    rc = vt_store_stages(lib->store, id, &d->stages, &d->n_stages);
    if (!rc)
        rc = vt_store_counts(lib->store, id, &d->cnt);
    if (!rc)
        rc = vt_store_shots_range(lib->store, id, d->shot0, d->shot1, &d->shots, &d->n_shots);
    if (!rc)
        rc = vt_store_frames_range(lib->store, id, d->frame0, d->frame1, &d->frames, &d->n_frames);
    if (!rc)
        rc = vt_store_chapters(lib->store, id, &d->chapters, &d->n_chapters);
    if (!rc)
        rc = vt_store_transcript_range(lib->store, id, d->cue0, d->cue1, &d->tr);
    if (!rc)
        rc = vt_store_chunks_range(lib->store, id, d->chunk0, d->chunk1, &d->chunks, &d->n_chunks);
    if (!rc)
        rc = vt_store_reuse_of(lib->store, id, &d->reuse, &d->n_reuse);
    return rc;
}

static void parts_release(struct doc_parts *d)
{
    vt_stage_recs_free(d->stages, d->n_stages);
    free(d->shots);
    vt_store_frames_free(d->frames, d->n_frames);
    vt_store_chapters_free(d->chapters, d->n_chapters);
    vt_transcript_release(&d->tr);
    vt_chunks_free(d->chunks, d->n_chunks);
    vt_store_reuse_free(d->reuse, d->n_reuse);
}

/* Where the video came from: a file, or a URL with what the platform said of it. */
static json_t *source_json(const struct vt_video_rec *v)
{
    json_t *src = json_object();

    json_object_set_new(src, "kind", json_string(v->source_kind ? v->source_kind : "file"));
    json_object_set_new(src, "path", str_or_null(v->source_path));
    if (v->source_kind && strcmp(v->source_kind, "file")) {
        json_object_set_new(src, "url", str_or_null(v->source_url));
        json_object_set_new(src, "page_url", str_or_null(v->page_url));
        json_object_set_new(src, "platform_id", str_or_null(v->platform_id));
        json_object_set_new(src, "extractor", str_or_null(v->extractor));
        json_object_set_new(src, "keep_media", json_boolean(v->keep_media));
        json_object_set_new(src, "captions", str_or_null(v->captions_model));
    }
    return src;
}

static json_t *media_json(const struct vt_video_rec *v)
{
    json_t *m = json_object();

    json_object_set_new(m, "container", str_or_null(v->container));
    json_object_set_new(m, "width", json_integer(v->width));
    json_object_set_new(m, "height", json_integer(v->height));
    json_object_set_new(m, "rotation", json_integer(v->rotation));
    json_object_set_new(m, "fps", json_real(round(v->fps * 1000.0) / 1000.0));
    json_object_set_new(m, "has_video", json_boolean(v->has_video));
    json_object_set_new(m, "has_audio", json_boolean(v->has_audio));
    json_object_set_new(m, "size_bytes", json_integer(v->size_bytes));
    return m;
}

/* The video's own fields, in the document's order: id up to media. */
static void put_video(json_t *doc, const struct vt_video_rec *v)
{
    json_object_set_new(doc, "id", json_string(v->id));
    json_object_set_new(doc, "title", str_or_null(v->title));
    json_object_set_new(doc, "duration_s", seconds(v->duration_s));
    json_object_set_new(doc, "source", source_json(v));
    json_object_set_new(doc, "channel", str_or_null(v->channel));
    json_object_set_new(doc, "published", str_or_null(v->published));
    json_object_set_new(doc, "language", str_or_null(v->language));
    json_object_set_new(doc, "description", str_or_null(v->description));
    json_object_set_new(doc, "thumbnail", str_or_null(v->thumbnail));
    json_object_set_new(doc, "index_state", json_string(vt_index_state_name(v->index_state)));
    json_object_set_new(doc, "data_status", json_string(vt_data_status_name(v->data_status)));
    json_object_set_new(doc, "added_at", iso_or_null(v->created_at));
    json_object_set_new(doc, "indexed_at", iso_or_null(v->indexed_at));
    json_object_set_new(doc, "media", media_json(v));
}

static json_t *stages_json(const struct vt_stage_rec *stages, size_t n)
{
    json_t *a = json_array();

    for (size_t i = 0; i < n; i++) {
        json_t *s = json_object();

        json_object_set_new(s, "name", json_string(stages[i].name));
        json_object_set_new(s, "state", json_string(vt_state_name(stages[i].state)));
        json_object_set_new(s, "model", str_or_null(stages[i].model));
        json_object_set_new(s, "started_at", iso_or_null(stages[i].started_at));
        json_object_set_new(s, "took_s", seconds(stages[i].took_s));
        json_object_set_new(s, "error", str_or_null(stages[i].error));
        json_object_set_new(s, "attempts", json_integer(stages[i].attempts));
        /* those its retries count: since its last redo */
        json_object_set_new(s, "attempts_since_redo",
                            json_integer(stages[i].attempts - stages[i].attempts_base));
        json_array_append_new(a, s);
    }
    return a;
}

/* Shots from index shot0 on. */
static json_t *shots_json(const struct vt_kf_shot *shots, size_t n, int64_t shot0)
{
    json_t *a = json_array();

    for (size_t i = 0; i < n; i++) {
        json_t *s = json_object();

        json_object_set_new(s, "index", json_integer((json_int_t)(shot0 + (int64_t)i)));
        json_object_set_new(s, "start_s", seconds(shots[i].start_s));
        json_object_set_new(s, "end_s", seconds(shots[i].end_s));
        json_object_set_new(s, "keyframes_captured", json_integer(shots[i].captured));
        json_object_set_new(s, "keyframes_kept", json_integer(shots[i].kept));
        if (shots[i].transition)
            json_object_set_new(s, "transition",
                                json_pack("{s:s,s:o,s:o}", "kind", shots[i].transition, "start_s",
                                          seconds(shots[i].trans_start_s), "end_s",
                                          seconds(shots[i].trans_end_s)));
        else
            json_object_set_new(s, "transition", json_null());
        json_array_append_new(a, s);
    }
    return a;
}

static json_t *ocr_json(const struct vt_ocr_page *ocr)
{
    json_t *a = json_array();

    for (size_t k = 0; k < ocr->n_lines; k++) {
        const struct vt_ocr_line *l = &ocr->lines[k];
        json_t *line = json_object();

        json_object_set_new(line, "text", str_or_null(l->text));
        json_object_set_new(line, "conf", json_real(round(l->conf * 100.0) / 100.0));
        json_object_set_new(line, "box",
                            json_pack("[iiii]", l->box[0], l->box[1], l->box[2], l->box[3]));
        /* only where it holds, so that documents without noise keep their shape */
        if (l->noise)
            json_object_set_new(line, "noise", json_true());
        json_array_append_new(a, line);
    }
    return a;
}

static json_t *frame_json(const struct vt_library *lib, const struct vt_store_frame *f)
{
    json_t *o = json_object();

    json_object_set_new(o, "index", json_integer(f->f.index));
    json_object_set_new(o, "t_s", seconds(f->f.t_s));
    json_object_set_new(o, "frame_no", json_integer(f->f.frame_no));
    json_object_set_new(o, "shot", json_integer(f->f.shot));
    json_object_set_new(o, "state", json_string(f->f.duplicate_of >= 0 ? "skipped" : "done"));
    json_object_set_new(o, "duplicate_of",
                        f->f.duplicate_of >= 0 ? json_integer(f->f.duplicate_of) : json_null());
    json_object_set_new(o, "sharpness", json_real(round(f->f.sharpness * 10.0) / 10.0));
    json_object_set_new(o, "bytes", json_integer(f->f.bytes));
    json_object_set_new(o, "width", json_integer(f->f.width));
    json_object_set_new(o, "height", json_integer(f->f.height));
    json_object_set_new(o, "image", str_or_null(f->path));
    json_object_set_new(o, "image_small", small_or_null(lib, f->path));
    json_object_set_new(o, "ocr", ocr_json(&f->ocr));
    return o;
}

static json_t *chapters_json(const struct vt_store_chapter *chapters, size_t n)
{
    json_t *a = json_array();

    for (size_t i = 0; i < n; i++) {
        json_t *c = json_object();

        json_object_set_new(c, "start_s", seconds(chapters[i].start_s));
        json_object_set_new(c, "end_s", seconds(chapters[i].end_s));
        json_object_set_new(c, "title", str_or_null(chapters[i].title));
        json_object_set_new(c, "source", str_or_null(chapters[i].source));
        json_object_set_new(c, "made", json_string(vt_chapters_made(chapters[i].source)));
        json_array_append_new(a, c);
    }
    return a;
}

/* Footage this video shares with others (frame_embed's same-footage pass). */
static json_t *reuse_json(const struct vt_reuse *reuse, size_t n)
{
    json_t *a = json_array();

    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();

        json_object_set_new(o, "video_id", json_string(reuse[i].other_id));
        json_object_set_new(o, "title", str_or_null(reuse[i].other_title));
        json_object_set_new(o, "start_s", seconds(reuse[i].start_s));
        json_object_set_new(o, "end_s", seconds(reuse[i].end_s));
        json_object_set_new(o, "other_start_s", seconds(reuse[i].other_start_s));
        json_object_set_new(o, "other_end_s", seconds(reuse[i].other_end_s));
        json_object_set_new(o, "similarity",
                            json_real(round(reuse[i].similarity * 1000.0) / 1000.0));
        json_object_set_new(o, "frames", json_integer(reuse[i].frames));
        json_array_append_new(a, o);
    }
    return a;
}

/* A cue, index-th of the transcript, with its timed words. */
static json_t *cue_json(const struct vt_cue *cue, int64_t index)
{
    json_t *o = json_object(), *w = json_array();

    json_object_set_new(o, "index", json_integer((json_int_t)index));
    json_object_set_new(o, "start_s", seconds(cue->start_s));
    json_object_set_new(o, "end_s", seconds(cue->end_s));
    json_object_set_new(o, "text", str_or_null(cue->text));
    for (size_t k = 0; k < cue->n_words; k++) {
        json_t *x = json_object();

        json_object_set_new(x, "text", str_or_null(cue->words[k].text));
        json_object_set_new(x, "start_s", seconds(cue->words[k].start_s));
        json_object_set_new(x, "end_s", seconds(cue->words[k].end_s));
        json_object_set_new(x, "conf", json_real(round(cue->words[k].conf * 1000.0) / 1000.0));
        json_array_append_new(w, x);
    }
    json_object_set_new(o, "words", w);
    return o;
}

/* Chunks from index chunk0 on. */
static json_t *chunks_json(const struct vt_chunk *chunks, size_t n, int64_t chunk0)
{
    json_t *a = json_array();

    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();

        json_object_set_new(o, "index", json_integer((json_int_t)(chunk0 + (int64_t)i)));
        json_object_set_new(o, "start_s", seconds(chunks[i].start_s));
        json_object_set_new(o, "end_s", seconds(chunks[i].end_s));
        json_object_set_new(o, "text", str_or_null(chunks[i].text));
        json_object_set_new(o, "first_cue", json_integer(chunks[i].first_cue));
        json_object_set_new(o, "last_cue", json_integer(chunks[i].last_cue));
        json_array_append_new(a, o);
    }
    return a;
}

/* The counts of everything stored for the video, whatever page the document shows. */
static json_t *stored_json(const struct vt_video_rec *v, const struct doc_parts *d)
{
    const struct vt_store_counts *cnt = &d->cnt;
    const char *cue_source = NULL;
    json_t *s = json_object();

    for (size_t i = 0; i < d->n_stages; i++)
        if (vt_stage_find(d->stages[i].name) == vt_stage_of_kind(VT_STAGE_SPEECH) &&
            d->stages[i].state == VT_STATE_DONE)
            cue_source = d->stages[i].model;
    json_object_set_new(s, "shots", json_integer(cnt->shots));
    json_object_set_new(s, "keyframes_captured", json_integer(cnt->frames));
    json_object_set_new(s, "keyframes_kept", json_integer(cnt->kept));
    json_object_set_new(s, "keyframe_bytes", json_integer(cnt->keyframe_bytes));
    json_object_set_new(s, "frames_with_text", json_integer(cnt->frames_with_text));
    json_object_set_new(s, "ocr_lines", json_integer(cnt->ocr_lines));
    json_object_set_new(s, "chapters", json_integer((json_int_t)d->n_chapters));
    json_object_set_new(s, "cues", json_integer(cnt->cues));
    json_object_set_new(s, "cues_source", str_or_null(cue_source));
    json_object_set_new(s, "chunks", json_integer(cnt->chunks));
    json_object_set_new(s, "text_vectors", json_integer(cnt->text_vectors));
    json_object_set_new(s, "word_timed_cues", json_integer(cnt->word_timed_cues));
    json_object_set_new(s, "chapters_source",
                        json_string(d->n_chapters && d->chapters[0].source ? d->chapters[0].source
                                    : v->source_kind && strcmp(v->source_kind, "file")
                                        ? VT_CHAPTERS_SOURCE_META
                                        : VT_CHAPTERS_CONTAINER));
    return s;
}

/* "pages": which lists the document holds only part of; NULL when it holds them all. */
static json_t *pages_json(const struct doc_parts *d)
{
    json_t *pages = json_object();

    note_page(pages, "shots", d->shot0, d->n_shots, d->cnt.shots);
    note_page(pages, "frames", d->frame0, d->n_frames, d->cnt.frames);
    note_page(pages, "cues", d->cue0, d->tr.n_cues, d->cnt.cues);
    note_page(pages, "chunks", d->chunk0, d->n_chunks, d->cnt.chunks);
    if (json_object_size(pages))
        return pages;
    json_decref(pages);
    return NULL;
}

static json_t *video_doc(struct vt_library *lib, const struct vt_video_rec *v,
                         const struct vt_doc_pages *pg, int *rc)
{
    struct doc_parts d = {0};
    json_t *doc = NULL, *a, *pages;

    *rc = parts_read(lib, v->id, pg, &d);
    if (*rc)
        goto out;
    doc = json_object();
    put_video(doc, v);
    json_object_set_new(doc, "stages", stages_json(d.stages, d.n_stages));
    json_object_set_new(doc, "shots", shots_json(d.shots, d.n_shots, d.shot0));
    a = json_array();
    for (size_t i = 0; i < d.n_frames; i++)
        json_array_append_new(a, frame_json(lib, &d.frames[i]));
    json_object_set_new(doc, "frames", a);
    json_object_set_new(doc, "chapters", chapters_json(d.chapters, d.n_chapters));
    json_object_set_new(doc, "reuse", reuse_json(d.reuse, d.n_reuse));
    a = json_array();
    for (size_t i = 0; i < d.tr.n_cues; i++)
        json_array_append_new(a, cue_json(&d.tr.cues[i], d.cue0 + (int64_t)i));
    json_object_set_new(doc, "cues", a);
    json_object_set_new(doc, "chunks", chunks_json(d.chunks, d.n_chunks, d.chunk0));
    json_object_set_new(doc, "stored", stored_json(v, &d));
    pages = pages_json(&d);
    if (pages)
        json_object_set_new(doc, "pages", pages);
out:
    parts_release(&d);
    return doc;
}

int vt_export_subtitles(struct vt_library *lib, const char *id, const char *format, char **out)
{
    struct vt_transcript t;
    struct vt_sb sb = {0};
    int rc;

    *out = NULL;
    if (!vt_id_valid(id))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a video id", id);
    if (strcmp(format, "vtt") && strcmp(format, "srt") && strcmp(format, "txt"))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a subtitle format", format);
    rc = vt_store_begin_read(lib->store);
    if (!rc)
        rc = vt_store_video_id_taken(lib->store, id) == 1 ? 0 : VT_ENOTFOUND;
    if (!rc)
        rc = vt_store_transcript(lib->store, id, &t);
    vt_store_rollback(lib->store);
    if (rc == VT_ENOTFOUND)
        return vt_lib_fail(lib, rc, "no video '%s'", id);
    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    rc = vt_captions_write(&t, format, &sb);
    vt_transcript_release(&t);
    if (rc) {
        vt_sb_release(&sb);
        return vt_lib_fail(lib, rc, "cannot write the transcript as %s", format);
    }
    *out = vt_sb_detach(&sb);
    return 0;
}

int vt_export_json(struct vt_library *lib, const char *id, char **out)
{
    return vt_export_json_pages(lib, id, NULL, out);
}

int vt_export_json_pages(struct vt_library *lib, const char *id, const struct vt_doc_pages *pages,
                         char **out)
{
    static const struct vt_doc_page all = {0, -1};
    const struct vt_doc_pages everything = {all, all, all, all};
    struct vt_video_rec v;
    long long version;
    json_t *doc;
    int rc;

    *out = NULL;
    if (!pages)
        pages = &everything;
    if (!vt_id_valid(id))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a video id", id);
    /* one read snapshot, so a concurrent writer cannot tear the document */
    rc = vt_store_begin_read(lib->store);
    version = rc ? -1 : vt_store_version(lib->store);
    for (size_t i = 0; version >= 0 && i < VT_ARRAY_LEN(lib->docs); i++) {
        if (lib->docs[i].json && lib->docs[i].version == version && !strcmp(lib->docs[i].id, id) &&
            !memcmp(&lib->docs[i].pages, pages, sizeof(*pages))) {
            vt_store_rollback(lib->store);
            *out = vt_xstrdup(lib->docs[i].json);
            return 0;
        }
    }
    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    rc = vt_lib_video(lib, id, &v);
    if (rc) {
        vt_store_rollback(lib->store);
        return rc;
    }
    doc = video_doc(lib, &v, pages, &rc);
    vt_store_rollback(lib->store);
    vt_video_rec_release(&v);
    if (!doc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    *out = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(doc);
    if (!*out)
        return vt_lib_fail(lib, VT_EIO, "cannot encode the document as JSON");
    if (version >= 0) {
        unsigned slot = lib->docs_next++ % VT_ARRAY_LEN(lib->docs);

        free(lib->docs[slot].json);
        snprintf(lib->docs[slot].id, sizeof(lib->docs[slot].id), "%s", id);
        lib->docs[slot].version = version;
        lib->docs[slot].pages = *pages;
        lib->docs[slot].json = vt_xstrdup(*out);
    }
    return 0;
}

void vt_video_card_release(struct vt_video_card *card)
{
    if (!card)
        return;
    free(card->channel);
    memset(card, 0, sizeof(*card));
    card->thumb_frame = -1;
}

int vt_video_card(struct vt_library *lib, const char *id, struct vt_video_card *card)
{
    struct vt_video_rec v;
    struct vt_stage_rec *st = NULL;
    size_t n = 0;
    int rc;

    memset(card, 0, sizeof(*card));
    card->thumb_frame = -1;
    rc = vt_lib_video(lib, id, &v);
    if (rc)
        return rc;
    card->channel = vt_xstrdup_or_null(v.channel);
    vt_video_rec_release(&v);
    rc = vt_store_stages(lib->store, id, &st, &n);
    if (!rc)
        rc = vt_store_frame_at(lib->store, id, 0, &card->thumb_frame);
    if (rc) {
        vt_stage_recs_free(st, n);
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    }
    for (size_t i = 0; i < n && i < VT_CARD_STAGES; i++) {
        snprintf(card->stages[i].name, sizeof(card->stages[i].name), "%s", st[i].name);
        snprintf(card->stages[i].state, sizeof(card->stages[i].state), "%s",
                 vt_state_name(st[i].state));
        card->n_stages++;
    }
    vt_stage_recs_free(st, n);
    return 0;
}

int vt_cue_at(struct vt_library *lib, const char *id, double t_s, long long *cue)
{
    int64_t c;
    int rc;

    *cue = -1;
    if (!vt_id_valid(id))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a video id", id);
    rc = vt_store_cue_at(lib->store, id, t_s, &c);
    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    *cue = c;
    return 0;
}

int vt_frame_at(struct vt_library *lib, const char *id, double t_s, int *frame)
{
    int rc;

    *frame = -1;
    if (!vt_id_valid(id))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a video id", id);
    rc = vt_store_frame_at(lib->store, id, t_s, frame);
    return rc ? vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store)) : 0;
}

int vt_storyboard(struct vt_library *lib, const char *id, struct vt_board_frame **out, size_t *n)
{
    int rc;

    *out = NULL;
    *n = 0;
    if (!vt_id_valid(id))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a video id", id);
    rc = vt_store_storyboard(lib->store, id, out, n);
    return rc ? vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store)) : 0;
}

int vt_frame_kept(struct vt_library *lib, const char *id, int idx, int *kept)
{
    int rc;

    *kept = -1;
    if (!vt_id_valid(id))
        return vt_lib_fail(lib, VT_EINVAL, "'%s': not a video id", id);
    rc = vt_store_frame_kept(lib->store, id, idx, kept);
    return rc ? vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store)) : 0;
}

struct page_ctx {
    int (*fn)(void *user, const struct vt_video_item *v);
    void *user;
};

static int page_item(void *user, const struct vt_store_card *c)
{
    struct page_ctx *p = user;
    struct vt_video_item v;

    memset(&v, 0, sizeof(v));
    memcpy(v.id, c->id, sizeof(v.id));
    v.title = c->title ? c->title : "";
    v.channel = c->channel;
    v.duration_s = c->duration_s;
    v.index_state = vt_index_state_name(c->index_state);
    v.data_status = vt_data_status_name(c->data_status);
    v.added_at = c->added_at;
    v.stages_total = c->stages_total;
    v.stages_finished = c->stages_finished;
    v.running = c->running;
    v.poster_frame = c->poster_frame;
    return p->fn(p->user, &v);
}

static const char *const card_sorts[] = {"added", "newest", "title", "duration"};

int vt_list_page(struct vt_library *lib, const struct vt_list_opts *opts,
                 int (*fn)(void *user, const struct vt_video_item *v), void *user, long long *total)
{
    struct vt_store_cards_query q = {0};
    struct page_ctx p = {fn, user};
    enum vt_index_state state;
    long long count = 0;
    int rc;

    if (total)
        *total = 0;
    if (opts->state && *opts->state) {
        if (vt_index_state_parse(opts->state, &state))
            return vt_lib_fail(lib, VT_EINVAL, "'%s': not a state", opts->state);
        q.state = &state;
    }
    if (opts->sort && *opts->sort) {
        size_t i = 0;

        while (i < VT_ARRAY_LEN(card_sorts) && strcmp(card_sorts[i], opts->sort))
            i++;
        if (i == VT_ARRAY_LEN(card_sorts))
            return vt_lib_fail(lib, VT_EINVAL, "'%s': not a sort", opts->sort);
        q.sort = (enum vt_store_card_sort)i;
    }
    q.text = opts->text;
    q.reuse_only = opts->reuse_only;
    q.id = opts->id && *opts->id ? opts->id : NULL;
    q.offset = opts->offset;
    q.limit = opts->limit;
    rc = vt_store_cards(lib->store, &q, page_item, &p, &count);
    if (rc)
        return vt_lib_fail(lib, rc, "%s", vt_store_errmsg(lib->store));
    if (total)
        *total = count;
    return 0;
}

/* A hit's text for JSON: the library's marks become « », control bytes spaces. */
static char *hit_text(const char *text)
{
    struct vt_sb sb = {0};

    for (const char *p = text ? text : ""; *p; p++) {
        if (*p == VT_MARK_OPEN[0])
            vt_sb_adds(&sb, "\xc2\xab");
        else if (*p == VT_MARK_CLOSE[0])
            vt_sb_adds(&sb, "\xc2\xbb");
        else if ((unsigned char)*p < 0x20)
            vt_sb_addc(&sb, ' ');
        else
            vt_sb_addc(&sb, *p);
    }
    return vt_sb_detach(&sb);
}

/* The relevance floors a search applied (vt_search_info.floors), rounded to 1e-4. */
static json_t *floors_json(const struct vt_search_info *info)
{
    json_t *arr = json_array();

    for (int i = 0; i < 2; i++) {
        const struct vt_search_floor *f = &info->floors[i];
        if (!f->signal[0])
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "signal", json_string(f->signal));
        json_object_set_new(o, "space", str_or_null(f->space));
        json_object_set_new(o, "vectors", json_integer(f->vectors));
        json_object_set_new(o, "probes", json_integer(f->probes));
        json_object_set_new(o, "chance_mean", json_real(round(f->chance_mean * 1e4) / 1e4));
        json_object_set_new(o, "chance_sd", json_real(round(f->chance_sd * 1e4) / 1e4));
        json_object_set_new(o, "chance_max", json_real(round(f->chance_max * 1e4) / 1e4));
        /* rounded up: a cosine shown at the floor is never below it */
        json_object_set_new(o, "floor", json_real(ceil(f->floor * 1e4) / 1e4));
        json_object_set_new(o, "strong", json_real(ceil(f->strong * 1e4) / 1e4));
        json_object_set_new(o, "below_floor", json_integer(f->below));
        json_object_set_new(o, "measured_now", json_boolean(f->measured));
        json_array_append_new(arr, o);
    }
    return arr;
}

char *vt_hits_json(const char *query, const struct vt_search_info *info, const struct vt_hit *hits,
                   size_t n)
{
    json_t *doc = json_object(), *arr = json_array();
    char *s;

    json_object_set_new(doc, "query", str_or_null(query ? query : ""));
    json_object_set_new(doc, "took_ms", seconds(info ? info->took_ms : 0));
    json_object_set_new(doc, "partial", json_boolean(info && info->partial));
    enum vt_search_mode mode = info && info->mode ? info->mode : VT_SEARCH_WORDS;
    json_object_set_new(doc, "mode", json_string(vt_search_mode_name(mode)));
    if (info && info->warning[0])
        json_object_set_new(doc, "warning", str_or_null(info->warning));
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        char *text = hit_text(hits[i].text);

        json_object_set_new(o, "video_id", str_or_null(hits[i].video_id));
        json_object_set_new(o, "title", str_or_null(hits[i].title ? hits[i].title : ""));
        json_object_set_new(o, "start_s", seconds(hits[i].start_s));
        json_object_set_new(o, "end_s", seconds(hits[i].end_s));
        json_object_set_new(o, "source", str_or_null(hits[i].source));
        json_object_set_new(o, "text", str_or_null(text));
        /* fused and cosine scores differ in the fourth decimal: kept to 1e-6 */
        json_object_set_new(o, "score",
                            mode == VT_SEARCH_WORDS ? seconds(hits[i].score)
                                                    : json_real(round(hits[i].score * 1e6) / 1e6));
        json_t *matched = json_array();
        if (hits[i].matched & VT_MATCH_WORDS || !hits[i].matched)
            json_array_append_new(matched, json_string("words"));
        if (hits[i].matched & VT_MATCH_MEANING)
            json_array_append_new(matched, json_string("meaning"));
        if (hits[i].matched & VT_MATCH_VISUAL)
            json_array_append_new(matched, json_string("visual"));
        json_object_set_new(o, "matched", matched);
        json_object_set_new(o, "approximate", json_boolean(hits[i].approx));
        json_object_set_new(o, "ref", json_integer(hits[i].ref));
        if (hits[i].also[0])
            json_object_set_new(o, "also", str_or_null(hits[i].also));
        if (vt_relevance_name(hits[i].relevance)) {
            json_object_set_new(o, "relevance", json_string(vt_relevance_name(hits[i].relevance)));
            json_object_set_new(o, "similarity", json_real(round(hits[i].similarity * 1e4) / 1e4));
        }
        json_array_append_new(arr, o);
        free(text);
    }
    json_object_set_new(doc, "hits", arr);
    if (info && (info->floors[0].signal[0] || info->floors[1].signal[0]))
        json_object_set_new(doc, "floors", floors_json(info));
    s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(doc);
    return s;
}
