/*
 * The store: the only module that speaks SQL. Everything the library keeps about
 * videos (rows, stage provenance, shots, frames, OCR lines, chapters) goes in and
 * out through these functions, as plain C structs. No sqlite3 type crosses this
 * boundary, so that another backend (PostgreSQL, for a shared catalog) can stand
 * behind the same interface.
 *
 * Writes happen between vt_store_begin (BEGIN IMMEDIATE) and vt_store_commit;
 * a caller that fails in between calls vt_store_rollback. Readers need no
 * transaction (WAL gives them a consistent snapshot per statement; the export
 * wraps its reads in one read transaction).
 *
 * A struct vt_store is used by one thread at a time. It may live as long as a server
 * does: what it keeps between calls is bounded (one prepared statement per SQL text,
 * at most 64; the term frequencies of vt_store_term_docs, at most 4096).
 */
#ifndef VT_STORE_H
#define VT_STORE_H

#include "keyframe.h"
#include "media.h"
#include "ocr.h"
#include "stage.h"
#include "transcript.h"

#include <stddef.h>
#include <stdint.h>

#define VT_STORE_SCHEMA_VERSION 4

struct vt_store;

struct vt_video_rec {
    char id[65];
    char *content_key; /* identifies the media content, for "added twice" */
    char *source_kind; /* "file" (a local file) or "url" (fetched with yt-dlp) */
    char *source_path; /* the media file: absolute, or relative to the library for
                        * downloaded media; NULL when not (or no longer) kept */
    char *source_url;  /* the URL given to add (or a list's entry URL) */
    char *page_url;    /* the source's page for this video (links open it at a second) */
    char *platform_id, *extractor, *description, *thumbnail;
    char *captions_path;  /* the source's own captions file, relative to the library */
    char *captions_model; /* e.g. "captions:youtube-manual" */
    int keep_media;       /* 0: the downloaded media is deleted once indexed */
    int64_t list_id;      /* the list it was added from, 0 when none */
    char *title, *channel, *published, *language, *container;
    char *index_state; /* queued, processing, ready, failed */
    char *data_status; /* ok, partial, missing */
    char *stt_mode;    /* auto, captions, recognize */
    double duration_s;
    double created_at, indexed_at; /* epoch seconds; 0 when not yet */
    int width, height, rotation, has_video, has_audio;
    double fps;
    int64_t size_bytes;
};

struct vt_stage_rec {
    char name[32]; /* a name of the stage table (stage.h), or of a stage it no longer has */
    enum vt_state state;
    char *model; /* NULL until it ran */
    char *error; /* error or skip reason, NULL when none */
    char *owner; /* "host:pid:nonce" of the handle running it (library.h), else NULL */
    double started_at, took_s;
    int attempts;
    double retry_at; /* a failed attempt of a retried stage: not before this time */
};

struct vt_store_chapter {
    double start_s, end_s;
    char *title;
    char *source;
};

struct vt_store_frame {
    struct vt_kf_frame f;
    char *path;             /* relative to the library directory, NULL when skipped */
    struct vt_ocr_page ocr; /* lines in reading order */
};

int vt_store_open(const char *db_path, struct vt_store **out, char *err, size_t errlen);
/*
 * vt_store_open with flags. VT_STORE_READ: the caller only reads, so a database that
 * cannot be written (a read-only mount, files or a directory without write permission)
 * is opened read-only, as immutable when its WAL index cannot be shared; writes then
 * fail with VT_ESTATE. Without it such a database fails to open with VT_ESTATE
 * ("library 'DIR' is read-only"). A writable database opens read-write either way.
 */
enum { VT_STORE_READ = 1 };
int vt_store_open_flags(const char *db_path, int flags, struct vt_store **out, char *err,
                        size_t errlen);
/* Whether s was opened read-only (VT_STORE_READ on a database that cannot be written). */
int vt_store_read_only(const struct vt_store *s);
void vt_store_close(struct vt_store *s);
/* Message of the last failure on s; borrowed until the next call. */
const char *vt_store_errmsg(const struct vt_store *s);

int vt_store_begin(struct vt_store *s);      /* write transaction */
int vt_store_begin_read(struct vt_store *s); /* read snapshot */
int vt_store_commit(struct vt_store *s);
void vt_store_rollback(struct vt_store *s);

/* A number that changes whenever anything in the database may have changed (a commit
 * by this handle or any other connection); -1 on error. */
long long vt_store_version(struct vt_store *s);

/* PRAGMA integrity_check: 0 with *ok set (1 when "ok"; else 0 and the errmsg says so),
 * or an error code when the check could not run. */
int vt_store_check(struct vt_store *s, int *ok);

/* Videos. Strings in records are owned by the record (vt_video_rec_release). */
int vt_store_video_get(struct vt_store *s, const char *id, struct vt_video_rec *v);
int vt_store_video_find_key(struct vt_store *s, const char *content_key, char id[65]);
int vt_store_video_id_taken(struct vt_store *s, const char *id);
int vt_store_video_insert(struct vt_store *s, const struct vt_video_rec *v);
/* Update the metadata fields that the fetch stage learns (title, duration, ...). */
int vt_store_video_update_meta(struct vt_store *s, const struct vt_video_rec *v);
/* Update where the media and the source's captions are and what the source said. */
int vt_store_video_update_source(struct vt_store *s, const struct vt_video_rec *v);
int vt_store_video_set_state(struct vt_store *s, const char *id, const char *index_state,
                             const char *data_status, double indexed_at);
int vt_store_video_delete(struct vt_store *s, const char *id);
/* All videos, oldest first. fn returns non-zero to stop. */
int vt_store_video_each(struct vt_store *s, int (*fn)(void *user, const struct vt_video_rec *v),
                        void *user);
void vt_video_rec_release(struct vt_video_rec *v);

/* Stages of a video, in pipeline order of insertion. *recs is caller-freed with
 * vt_stage_recs_free. */
int vt_store_stages(struct vt_store *s, const char *id, struct vt_stage_rec **recs, size_t *n);
int vt_store_stage_put(struct vt_store *s, const char *id, const struct vt_stage_rec *r);
void vt_stage_recs_free(struct vt_stage_rec *recs, size_t n);
/* Ids of videos with a stage that is queued or running, or with fewer than n_stages
 * stage rows (made before a stage existed), oldest first. */
int vt_store_unfinished(struct vt_store *s, int n_stages, char ***ids, size_t *n);

/* Outputs. The *_replace functions delete what the stage wrote before. */
int vt_store_chapters_replace(struct vt_store *s, const char *id, const struct vt_chapter *c,
                              size_t n, const char *source);
int vt_store_chapters(struct vt_store *s, const char *id, struct vt_store_chapter **out, size_t *n);
void vt_store_chapters_free(struct vt_store_chapter *c, size_t n);

/* Shots and frames of the keyframe stage; frame paths are relative to the library. */
int vt_store_keyframes_replace(struct vt_store *s, const char *id, const struct vt_kf_result *r,
                               const char *frames_rel_dir);
int vt_store_keyframes_clear(struct vt_store *s, const char *id);
int vt_store_shots(struct vt_store *s, const char *id, struct vt_kf_shot **out, size_t *n);
/* Frames with their OCR lines. */
int vt_store_frames(struct vt_store *s, const char *id, struct vt_store_frame **out, size_t *n);
/* The *_range readers read only the items whose index is in [from, to), so a reader of
 * one page of a long list does not load the rest. */
int vt_store_shots_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                         struct vt_kf_shot **out, size_t *n);
int vt_store_frames_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                          struct vt_store_frame **out, size_t *n);
void vt_store_frames_free(struct vt_store_frame *f, size_t n);

/* OCR lines for frames: pages[i] belongs to frame frame_index[i]. */
int vt_store_ocr_replace(struct vt_store *s, const char *id, const int *frame_index,
                         const struct vt_ocr_page *pages, size_t n);
int vt_store_ocr_clear(struct vt_store *s, const char *id);

/* Transcripts (cues with their words), indexed for search as source "speech". */
int vt_store_transcript_replace(struct vt_store *s, const char *id, const struct vt_transcript *t);
int vt_store_transcript_clear(struct vt_store *s, const char *id);
/* Read back; out->model is left empty (it is the stt stage's provenance). */
int vt_store_transcript(struct vt_store *s, const char *id, struct vt_transcript *out);
int vt_store_transcript_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                              struct vt_transcript *out);

struct vt_chunk {
    double start_s, end_s;
    char *text; /* owned */
    int first_cue, last_cue;
};
int vt_store_chunks_replace(struct vt_store *s, const char *id, const struct vt_chunk *c, size_t n);
int vt_store_chunks_clear(struct vt_store *s, const char *id);
int vt_store_chunks(struct vt_store *s, const char *id, struct vt_chunk **out, size_t *n);
int vt_store_chunks_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                          struct vt_chunk **out, size_t *n);

/* How much of each output a video has, without reading the outputs. */
struct vt_store_counts {
    int64_t shots, frames, kept, keyframe_bytes, frames_with_text, ocr_lines, cues, word_timed_cues,
        chunks, text_vectors;
};
int vt_store_counts(struct vt_store *s, const char *id, struct vt_store_counts *c);

/* The kept frame (with an image) that shows the moment t_s: the first of the shot that
 * contains it (a duplicate stands for the frame it repeats), else the nearest in time.
 * *frame gets its index, or -1 when the video has none. */
int vt_store_frame_at(struct vt_store *s, const char *id, double t_s, int *frame);
/* The index of the last cue that starts at or before t_s, -1 when none does. */
int vt_store_cue_at(struct vt_store *s, const char *id, double t_s, int64_t *cue);
void vt_chunks_free(struct vt_chunk *c, size_t n);

/* Re-index the video's title and chapter titles (source "title"). */
int vt_store_title_docs_refresh(struct vt_store *s, const char *id);

/* ---- search primitives (the ranking and merging live in search.c) ---- */

struct vt_fts_id {
    long long rowid;
    double score; /* higher is better (negated BM25) */
};

/*
 * Rows matching the FTS5 expression match (built by vt_query_fts), restricted to
 * source and video when non-empty: the newest `cap` matches in index order, each
 * with its BM25 score, unsorted. df[i] is the document frequency of the i-th phrase
 * of match, in order (negative: not scored), as vt_store_term_docs counts it.
 * With phrase_n > 1, rows where the first phrase_n phrases stand in sequence score
 * VT_PHRASE_BONUS more. Rows are read newest first; past deadline_s (vt_monotonic_s;
 * 0: none) the read stops with what it found and sets *partial. When fewer than cap
 * rows match this is all of them; when more match, ranking only these bounds the cost of a word
 * found everywhere. *out is caller-freed.
 */
#define VT_PHRASE_BONUS 1000.0
int vt_store_fts(struct vt_store *s, const char *match, const char *source, const char *video,
                 const double *df, size_t n_df, int phrase_n, int cap, double deadline_s,
                 int *partial, struct vt_fts_id **out, size_t *n);
/* In how many indexed rows the term occurs: exact when it is rare in the newest 20,000
 * rows, else scaled up from them. Counted once per store handle and cached (new rows
 * do not update it: it is for ranking, not for display). */
int vt_store_term_docs(struct vt_store *s, const char *term, long long *docs);

struct vt_doc {
    long long rowid;
    const char *video_id, *title, *source, *text; /* borrowed for the callback */
    int ref; /* cue, frame or chapter index; -1 for the video's title */
    double start_s, end_s;
};
/* The indexed row rowid: 0 and fn called once, or VT_ENOTFOUND. */
int vt_store_doc(struct vt_store *s, long long rowid,
                 void (*fn)(void *user, const struct vt_doc *d), void *user);

/* The words of one cue with their timings, in order; fn returns non-zero to stop. */
int vt_store_cue_words(struct vt_store *s, const char *id, int cue,
                       int (*fn)(void *user, const char *text, double start_s, double end_s),
                       void *user);

/* Merge the full-text index's segments: a bounded step (pages > 0) or all (0).
 * Inside a write transaction. */
int vt_store_index_merge(struct vt_store *s, int pages);

/* Indexed speech terms with the phonetic key (at most max); fn gets each. */
int vt_store_phonetic_terms(struct vt_store *s, const char *key, int max,
                            void (*fn)(void *user, const char *term), void *user);
/*
 * Words read on screen that may be one edit from word (they share a deletion key);
 * the caller checks the distance. Only words of VT_FUZZY_MIN_LEN..MAX_LEN-1 letters.
 */
#define VT_FUZZY_MIN_LEN 4
#define VT_FUZZY_MAX_LEN 41
int vt_store_fuzzy_terms(struct vt_store *s, const char *word,
                         void (*fn)(void *user, const char *term), void *user);

/*
 * Vectors (store_vectors.c): one per chunk and per frame with text, written by the
 * text_embed stage, each in the vector space named by the embedding's id (embed.h).
 */
enum vt_vec_kind { VT_VEC_CHUNK, VT_VEC_SCREEN };
/* "chunk" or "screen"; static. */
const char *vt_vec_kind_name(enum vt_vec_kind k);
struct vt_vec_rec {
    enum vt_vec_kind kind;
    int ref; /* chunk index or frame index */
    double start_s, end_s;
    const float *v; /* dim floats, unit length */
};
/* Replace the video's vectors (inside a write transaction); the int8 copies are made here. */
int vt_store_vectors_replace(struct vt_store *s, const char *id, const char *space, int dim,
                             const struct vt_vec_rec *recs, size_t n);
int vt_store_vectors_clear(struct vt_store *s, const char *id);
/* How many vectors of space there are and the largest key (row ids only grow). */
int vt_store_vectors_stat(struct vt_store *s, const char *space, int64_t *count, int64_t *max_id);
/* Every vector of space with a key above after_id, in key order (those of another
 * dimension skipped); v is valid during the call only; fn returns non-zero to stop. */
int vt_store_vectors_each(struct vt_store *s, const char *space, int dim, int64_t after_id,
                          int (*fn)(void *user, int64_t key, const float *v, const int8_t *q,
                                    float scale),
                          void *user);
/* Where the vector key points. VT_ENOTFOUND when it is gone. */
struct vt_vec_where {
    char video_id[65];
    enum vt_vec_kind kind;
    int ref;
    double start_s, end_s;
};
int vt_store_vector_get(struct vt_store *s, int64_t key, struct vt_vec_where *w);
/* Lists (playlists, channels) videos were added from, re-checked by update. */
struct vt_list_rec {
    int64_t id;
    char *url;  /* the list's URL, or the path of the info JSON it was read from */
    char *kind; /* "url" or "info-json" */
    char *title, *stt_mode;
    int max_entries; /* at most this many newest entries (0: all) */
    int keep_media;
    double added_at, checked_at;
};
/* Insert l, or update the list with the same url; sets l->id. */
int vt_store_list_put(struct vt_store *s, struct vt_list_rec *l);
int vt_store_lists(struct vt_store *s, struct vt_list_rec **out, size_t *n);
void vt_list_recs_free(struct vt_list_rec *l, size_t n);

#endif
