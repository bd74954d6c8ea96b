/*
 * The store: the only module that speaks to the database. Everything the library
 * keeps about videos (rows, stage provenance and leases, shots, frames, OCR lines,
 * chapters, the search index) goes in and out through these verbs, as plain C
 * structs. No SQL, no sqlite3 type and no media header crosses this boundary, so
 * that another backend (PostgreSQL, for a shared catalog) can stand behind the same
 * interface: docs/ARCHITECTURE.md ("Store interface") maps each verb to SQLite and to
 * PostgreSQL. The verbs are written once (lib/store/store_*.c); the backends are
 * lib/store/sqlite/ and lib/store/pg/.
 *
 * Writes happen between vt_store_begin (a write transaction) and vt_store_commit;
 * a caller that fails in between calls vt_store_rollback. Readers need no
 * transaction (each statement sees a consistent snapshot; the export and search
 * wrap their reads in one read transaction, vt_store_begin_read).
 *
 * A struct vt_store is used by one thread at a time. It may live as long as a server
 * does: what it keeps between calls is bounded (SQLite: one prepared statement per
 * SQL text, at most 64; term frequencies for ranking, at most 4096).
 */
#ifndef VT_STORE_H
#define VT_STORE_H

#include "model/frames.h"
#include "model/stage.h"
#include "model/transcript.h"
#include "model/video.h"
#include "store/migrations.h"
#include "vidtheque.h"

#include <stddef.h>
#include <stdint.h>

/* The schema this program reads and writes: the backends' own lists, then migrations.h's. */
#define VT_STORE_SCHEMA_VERSION (VT_STORE_BASE_VERSION + VT_STORE_N_MIGRATIONS)

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
    enum vt_index_state index_state; /* 0: queued */
    enum vt_data_status data_status; /* 0: missing */
    char *stt_mode;                  /* auto, captions, recognize */
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
    int attempts;       /* claims in all (redo included): its history, the fencing token */
    int attempts_base;  /* attempts when it was last redone: its budget of retries
                         * counts attempts - attempts_base (pipeline.c) */
    double retry_at;    /* a failed attempt of a retried stage: not before this time */
    double lease_until; /* running: a queue worker holds it until then (epoch s), its
                         * heartbeat extends it; 0: no lease, the owner's lock file
                         * (one machine) says whether it is alive */
    int priority;       /* higher first in the queue */
    double queued_at;   /* when it was last queued: the queue's age order */
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

/*
 * Open (creating and migrating as needed) the database db_path: a file for SQLite, or a
 * libpq URL (postgresql://... or postgres://..., vt_store_is_url) for PostgreSQL, in
 * the programs that link it (store_pg.c; not the front binary: VT_EINVAL there). A
 * PostgreSQL server that cannot be reached gives VT_EUNAVAIL; so does any verb whose
 * connection is lost (nothing of it took effect; the next verb outside a transaction
 * reconnects).
 */
int vt_store_open(const char *db_path, struct vt_store **out, char *err, size_t errlen);
/* Whether db names a PostgreSQL database (a postgresql:// or postgres:// URL). */
int vt_store_is_url(const char *db);
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

/* SQLite: PRAGMA integrity_check; PostgreSQL: the server answers and, when the amcheck
 * extension is installed, every B-tree index is verified. 0 with *ok set (1 when sound;
 * else 0 and the errmsg says so), or an error code when the check could not run. With
 * *ok 1 the errmsg is "" or says what could not be checked. */
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
/* Set the video's states; indexed_at > 0 (it became indexed) also takes a bounded
 * step of index upkeep (vt_store_maintain). */
int vt_store_video_set_state(struct vt_store *s, const char *id, enum vt_index_state index_state,
                             enum vt_data_status data_status, double indexed_at);
int vt_store_video_delete(struct vt_store *s, const char *id);
/* All videos, oldest first. fn returns non-zero to stop. */
int vt_store_video_each(struct vt_store *s, int (*fn)(void *user, const struct vt_video_rec *v),
                        void *user);
void vt_video_rec_release(struct vt_video_rec *v);

/* Stages of a video, in pipeline order of insertion. *recs is caller-freed with
 * vt_stage_recs_free. */
int vt_store_stages(struct vt_store *s, const char *id, struct vt_stage_rec **recs, size_t *n);
/* Insert or update a stage row from r (state, model, error, owner, started_at, took_s,
 * attempts, attempts_base, retry_at). The lease is cleared (only a claim sets one); queued_at is
 * stamped when the row becomes queued; a new row takes the priority of its video's others. */
int vt_store_stage_put(struct vt_store *s, const char *id, const struct vt_stage_rec *r);
void vt_stage_recs_free(struct vt_stage_rec *recs, size_t n);
/*
 * Leases. A stage row that is running names its owner (the handle running it); these
 * verbs change a row only while it is as the caller last saw it, so two handles never
 * both hold one stage whatever the backend's locking (SQLite: its single writer;
 * PostgreSQL: the row locked FOR UPDATE). Each is inside a write transaction and says
 * what it found in *res: HELD (the caller holds the stage now), LOST (the row is not
 * as seen, or another owner holds it) or GONE (no such stage row: the video was
 * removed).
 */
enum vt_lease { VT_LEASE_HELD, VT_LEASE_LOST, VT_LEASE_GONE };
/* Claim the stage seen->name of video id for owner at time now: state running, owner,
 * started_at now, attempts + 1, error cleared, took_s and retry_at 0, the lease until
 * lease_until (0: none, liveness by the owner's lock file); only if the row still has
 * seen's state, owner and attempts. */
int vt_store_stage_claim(struct vt_store *s, const char *id, const struct vt_stage_rec *seen,
                         const char *owner, double now, double lease_until, enum vt_lease *res);
/* Whether owner still holds stage of video id at attempt attempts (running, owned by
 * owner, attempts unchanged: the fencing token); the row stays the caller's until the
 * transaction ends. */
int vt_store_stage_lease(struct vt_store *s, const char *id, const char *stage, const char *owner,
                         int attempts, enum vt_lease *res);
/* Record the outcome r of a run (state, model, error, took_s, retry_at; the owner and
 * the lease cleared), only while owner holds the stage at attempt r->attempts (fencing:
 * a worker whose lease was taken over has an older attempt or another owner). */
int vt_store_stage_finish(struct vt_store *s, const char *id, const struct vt_stage_rec *r,
                          const char *owner, enum vt_lease *res);

/*
 * The job queue (store_queue.c; docs/ARCHITECTURE.md, "Job queue"): the stage rows are
 * the jobs. A stage is runnable when it is queued (retry_at passed), or running with
 * an expired lease (its worker is presumed dead: takeover), and every stage it reads
 * (the stage table's deps and after, kept as rows in stage_deps) has settled.
 */
/* Inside a write transaction: the next runnable stage among the stages of the set
 * (VT_BIT bits) at time now, highest priority then oldest first. PostgreSQL locks its
 * row (FOR UPDATE SKIP LOCKED: two workers never pick the same row); SQLite's single
 * writer does the same. 0 with *found 1 and id, stage set; or 0 with *found 0. */
int vt_store_queue_next(struct vt_store *s, unsigned stages, double now, char id[65],
                        char stage[32], int *found);
/* Extend the lease of stage of video id to lease_until while owner holds it at attempt
 * attempts; its own transaction. *res HELD, or LOST (taken over, or settled). */
int vt_store_stage_heartbeat(struct vt_store *s, const char *id, const char *stage,
                             const char *owner, int attempts, double lease_until,
                             enum vt_lease *res);
/* Give back a stage owner holds at attempt attempts (a worker stopping): queued again
 * at once, the attempt not counted; its own transaction. *res as for heartbeat. */
int vt_store_stage_give_back(struct vt_store *s, const char *id, const char *stage,
                             const char *owner, int attempts, enum vt_lease *res);
/* Inside a write transaction: hold video id's row until it ends (PostgreSQL: FOR
 * UPDATE; SQLite's single writer already does), so that two handles settling stages of
 * one video recompute its state one after the other. */
int vt_store_video_lock(struct vt_store *s, const char *id);
/* Set the priority of every stage of video id (higher runs first). */
int vt_store_video_priority(struct vt_store *s, const char *id, int priority);
/* Wait up to timeout_s for stages to become runnable: PostgreSQL wakes on NOTIFY
 * vidtheque_jobs (sent when a stage is queued or settles); SQLite polls for a commit by
 * any process. 1 when woken, 0 when the time ran out (or nothing can wake it: it waited
 * as a poll would), or an error code. */
int vt_store_wait_work(struct vt_store *s, double timeout_s);
/* Let vt_store_wait_work wake only for stages in the set stages (VT_BIT bits; 0: all):
 * on PostgreSQL a notification names the stages that became runnable, and one for
 * other stages is passed over (a worker limited with --stages). */
void vt_store_wait_stages(struct vt_store *s, unsigned stages);
/* "sqlite" or "postgresql". */
const char *vt_store_backend(const struct vt_store *s);
/* Now on the database's clock (epoch seconds), which every lease, retry and pick time
 * is read against, so that machines whose clocks differ agree on when a lease ends:
 * this machine's clock plus the database's offset from it, measured (one round trip,
 * its middle taken) at the first call and once a minute after. SQLite: this machine's. */
double vt_store_now(struct vt_store *s);
/* Write the stage table's dependencies into stage_deps when they differ (at open). */
int vt_store_sync_stage_deps(struct vt_store *s);

/* What `vidtheque jobs` shows. */
struct vt_queue_count {
    char stage[32];
    enum vt_state state;
    long long n;
    long long runnable; /* queued ones whose inputs have settled and retry time passed */
};
struct vt_queue_job {
    char video_id[65], stage[32];
    char *owner;       /* running: the worker */
    char *error;       /* failed, retrying: the last error */
    int attempts;      /* in all */
    int attempts_base; /* attempts at its last redo: attempts - attempts_base since */
    double started_at, lease_until;
    double retry_at; /* retrying: when its next attempt may start */
};
int vt_store_queue_counts(struct vt_store *s, double now, struct vt_queue_count **out, size_t *n);
/* Running stages (which VT_JOBS_RUNNING), oldest first; failed ones (VT_JOBS_FAILED),
 * newest first; or queued ones waiting for a retry after a failure (VT_JOBS_RETRYING),
 * the next due first. */
enum { VT_JOBS_RUNNING, VT_JOBS_FAILED, VT_JOBS_RETRYING };
int vt_store_queue_jobs(struct vt_store *s, int which, struct vt_queue_job **out, size_t *n);
/* When the longest-waiting runnable stage (queued, due at now, its inputs settled) became
 * queued, in *queued_at (0 when none is runnable). */
int vt_store_queue_oldest(struct vt_store *s, double now, double *queued_at);
void vt_queue_jobs_free(struct vt_queue_job *j, size_t n);
/*
 * Workers: one row per running queue worker (store_workers.c), under a lease of its
 * own that its heartbeat extends (lease_until, wall-clock seconds); a row whose lease
 * ran out is a worker gone (killed: one that stops cleanly removes its row).
 */
struct vt_worker_rec {
    char owner[128]; /* the worker's name, "host:pid:nonce" */
    char host[128];
    long long pid;
    char stages[160]; /* the stages it runs, comma-separated ("" : all) */
    double started_at, seen_at, lease_until;
};
/* Register w, or extend its lease (seen_at, lease_until) when it is registered. */
int vt_store_worker_beat(struct vt_store *s, const struct vt_worker_rec *w);
/* Remove the row of worker owner (it stops). */
int vt_store_worker_gone(struct vt_store *s, const char *owner);
/* The workers whose lease holds at now, oldest first: 0 with *out (caller frees) and *n. */
int vt_store_workers_list(struct vt_store *s, double now, struct vt_worker_rec **out, size_t *n);

/* Ids of videos with a stage that is queued or running, or with fewer than n_stages
 * stage rows (made before a stage existed), oldest first. */
int vt_store_unfinished(struct vt_store *s, int n_stages, char ***ids, size_t *n);

/*
 * A stage's own rows, in its own table (made by a migration of migrations.h, keyed by
 * video_id, REFERENCES videos(id) ON DELETE CASCADE: the rows go with their video),
 * without store functions of its own. The table and column names are identifiers
 * (^[a-z][a-z0-9_]*$, at most 63 characters, up to VT_STORE_STAGE_COLUMNS columns,
 * video_id not among them), never data: anything else is VT_EINVAL. Every value is
 * bound. Inside a write transaction.
 */
#define VT_STORE_STAGE_COLUMNS 32
enum vt_store_type { VT_STORE_NULL, VT_STORE_INT, VT_STORE_REAL, VT_STORE_TEXT };
struct vt_store_value {
    enum vt_store_type type; /* 0: SQL NULL */
    int64_t i;               /* VT_STORE_INT */
    double d;                /* VT_STORE_REAL */
    const char *text;        /* VT_STORE_TEXT (NULL: SQL NULL) */
};
/* Insert n_rows rows for video_id: values holds them row after row, n_columns each. */
int vt_store_stage_rows_put(struct vt_store *s, const char *table, const char *video_id,
                            const char *const *columns, size_t n_columns,
                            const struct vt_store_value *values, size_t n_rows);
/* Delete the rows of video_id from table. */
int vt_store_stage_rows_clear(struct vt_store *s, const char *table, const char *video_id);

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
/* After the frames were replaced, the index's screen rows left as they were: drop the
 * lines of every frame that is gone, a duplicate now, or shown at a time outside the
 * moment of its index's old screen row (a frame without one had no text to keep). */
int vt_store_ocr_lines_prune(struct vt_store *s, const char *id);

/* The text the search index holds for frame ref (its screen row): *text (malloc'd), or
 * VT_ENOTFOUND. Between a redo of keyframe's commit and ocr's, it is the old frame's. */
int vt_store_screen_text(struct vt_store *s, const char *id, int ref, char **text);

/* Transcripts (cues with their words), indexed for search as source "speech". */
int vt_store_transcript_replace(struct vt_store *s, const char *id, const struct vt_transcript *t);
int vt_store_transcript_clear(struct vt_store *s, const char *id);
/* Read back; out->model is left empty (it is the stt stage's provenance). */
int vt_store_transcript(struct vt_store *s, const char *id, struct vt_transcript *out);
int vt_store_transcript_range(struct vt_store *s, const char *id, int64_t from, int64_t to,
                              struct vt_transcript *out);

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

/* The kept frame (with an image) that shows the moment t_s: of the shot that contains it,
 * the last frame taken at t_s or before (a shot whose text changed has several), else its
 * first (a duplicate stands for the frame it repeats); else the nearest in time.
 * *frame gets its index, or -1 when the video has none. */
int vt_store_frame_at(struct vt_store *s, const char *id, double t_s, int *frame);
/* The kept frame showing frame idx (itself, or the frame it duplicates): *kept gets its
 * index, -1 when there is no such frame or it has no image. */
int vt_store_frame_kept(struct vt_store *s, const char *id, int idx, int *kept);
/* The card's poster chosen: frame (a kept frame with an image, not a duplicate) or, with
 * frame -1, none (the representative frame again). *ok is 0, and nothing changed, when the
 * video has no such frame (or there is no such video). */
int vt_store_poster_set(struct vt_store *s, const char *id, int frame, int *ok);
/* The poster chosen for the video: *frame gets it, -1 when none was chosen. */
int vt_store_poster_get(struct vt_store *s, const char *id, int *frame);

/* The kept frames that show the video, one item per frame (a duplicate names the frame it
 * repeats) in time order, each from when it shows (its shot's start for a shot's first
 * frame, else its own time): a storyboard (struct vt_board_frame: vidtheque.h). */
int vt_store_storyboard(struct vt_store *s, const char *id, struct vt_board_frame **out, size_t *n);

/* A page of the library's listing (store_cards.c): one query, no video's outputs read. */
enum vt_store_card_sort { VT_CARDS_ADDED, VT_CARDS_NEWEST, VT_CARDS_TITLE, VT_CARDS_DURATION };
struct vt_store_cards_query {
    const enum vt_index_state *state; /* only this state, or NULL */
    const char *text;                 /* title or channel contains it (ASCII case-blind), or NULL */
    int reuse_only;                   /* only videos sharing footage with another */
    const char *id;                   /* only this video, or NULL */
    enum vt_store_card_sort sort;
    long long offset, limit; /* limit < 0: to the end; 0: count only */
};
struct vt_store_card {
    char id[VT_ID_MAX];
    const char *title, *channel, *running; /* borrowed for the callback; NULL when unknown */
    double duration_s, added_at;           /* added_at: seconds since the epoch */
    enum vt_index_state index_state;
    enum vt_data_status data_status;
    int stages_total, stages_finished; /* finished: done, skipped or failed */
    int poster_frame;                  /* the chosen or representative kept frame, -1: none */
};
/* fn for each card of the page, in order (non-zero stops); *total gets how many videos
 * match the filters, whatever the page. */
int vt_store_cards(struct vt_store *s, const struct vt_store_cards_query *q,
                   int (*fn)(void *user, const struct vt_store_card *c), void *user,
                   long long *total);
/* The index of the last cue that starts at or before t_s, -1 when none does. */
int vt_store_cue_at(struct vt_store *s, const char *id, double t_s, int64_t *cue);
void vt_chunks_free(struct vt_chunk *c, size_t n);

/* Re-index the video's title and chapter titles (source "title"). */
int vt_store_title_docs_refresh(struct vt_store *s, const char *id);

/* ---- search (tiers, merging moments and marking words live in search.c) ---- */

struct vt_query;

/* How the terms of a parsed query must match an indexed row. */
enum vt_match {
    VT_MATCH_ALL,         /* every positive term (or one of its alternatives) */
    VT_MATCH_ALL_BUT_ONE, /* all positive terms but one: queries of three plain words
                           * or more (others match nothing) */
};

#define VT_STORE_MAX_ALTS 24 /* alternatives per term a search may carry */

struct vt_store_search {
    const struct vt_query *q; /* parsed (query.h); excluded terms never match */
    enum vt_match match;
    /* per positive term, in order: extra words that also match it (a NULL-terminated
     * list of at most VT_STORE_MAX_ALTS, or NULL); NULL: none for any term */
    char **const *alts;
    const char *source, *video; /* only rows of this source / video; NULL or "": any */
    int exact_phrase;           /* flag rows where the query's plain words (two or more) stand in
                                 * sequence, as typed (see vt_store_hit.exact) */
    int cap;                    /* rank at most this many matching rows: the newest */
    double deadline_s;          /* vt_monotonic_s() past which reading stops; 0: none */
    int pairs;                  /* search cue pairs instead of rows: a speech cue and the next
                                 * cue of its video, found only when the terms (match, alts)
                                 * stand across the two and in neither alone */
};

struct vt_store_hit {
    long long rowid; /* the indexed row, for vt_store_doc */
    double score;    /* relevance of the row's text to the terms (BM25), higher is better */
    int exact;       /* the plain words stand in sequence in it (exact_phrase asked) */
    char video_id[VT_ID_MAX]; /* the row's video and start: ties are ordered by them */
    double start_s;
    long long next; /* pairs: the next cue's row (rowid is the first cue's); else 0 */
    int at;         /* pairs: the first cue's token where the matched words start */
};

/*
 * Rows matching r, best first (exact ones first, then by score, then by video and time). When
 * fewer than r->cap rows match this is all of them; when more match, only the newest
 * cap are ranked, which bounds the cost of a word found everywhere. Rows are read
 * newest first; past r->deadline_s the read stops with what it found and sets
 * *partial. A query without a positive term matches nothing. *out is caller-freed.
 */
int vt_store_search(struct vt_store *s, const struct vt_store_search *r, struct vt_store_hit **out,
                    size_t *n, int *partial);

/* vt_store_search for r->pairs (store_pairs.c): adjacent speech cues that match together
 * where neither does alone, exact first, then by video, time and row (score 0). */
int vt_store_search_pairs(struct vt_store *s, const struct vt_store_search *r,
                          struct vt_store_hit **out, size_t *n, int *partial);

/* How vt_store_similar_words compares. */
enum vt_similar {
    VT_SIMILAR_SOUND, /* spoken words that sound alike (same phonetic key; words of three
                       * letters or more) */
    VT_SIMILAR_EDIT,  /* words read on screen one edit away (insert, delete, replace or
                       * swap; words of VT_FUZZY_MIN_LEN..VT_FUZZY_MAX_LEN-1 letters) */
};
#define VT_FUZZY_MIN_LEN 4
#define VT_FUZZY_MAX_LEN 41
/* Indexed words similar to word (lowercase token), the word itself among them when
 * indexed: fn gets each; at most max for VT_SIMILAR_SOUND. */
int vt_store_similar_words(struct vt_store *s, const char *word, enum vt_similar how, int max,
                           void (*fn)(void *user, const char *term), void *user);

/* A word of a cue with its timing (vt_store_docs). */
struct vt_doc_word {
    const char *text; /* borrowed for the callback */
    double start_s, end_s;
};

struct vt_doc {
    long long rowid;
    const char *video_id, *title, *source, *text; /* borrowed for the callback */
    int ref; /* cue, frame or chapter index; -1 for the video's title */
    double start_s, end_s;
    /* vt_store_docs: a speech row's cue words, in order (none for other rows, and from
     * vt_store_doc); borrowed for the callback */
    const struct vt_doc_word *words;
    size_t n_words;
};
/* The indexed row rowid: 0 and fn called once, or VT_ENOTFOUND. */
int vt_store_doc(struct vt_store *s, long long rowid,
                 void (*fn)(void *user, const struct vt_doc *d), void *user);

/* The words of one cue with their timings, in order; fn returns non-zero to stop. */
int vt_store_cue_words(struct vt_store *s, const char *id, int cue,
                       int (*fn)(void *user, const char *text, double start_s, double end_s),
                       void *user);

/*
 * The indexed rows rowids[0..n-1] with their cue words, in one statement whatever n is
 * (a search reads a page of hits: one round trip, not two per hit, on a server): fn is
 * called once per rowid found, in the order of rowids (twice for a rowid given twice);
 * a rowid not found is skipped, as vt_store_doc says VT_ENOTFOUND. 0 or an error code,
 * before any call of fn.
 */
int vt_store_docs(struct vt_store *s, const long long *rowids, size_t n,
                  void (*fn)(void *user, const struct vt_doc *d), void *user);

/*
 * Index upkeep a backend may need as the library grows (SQLite: merging FTS5's
 * segments; a bounded step is also taken by vt_store_video_set_state when a video
 * becomes indexed, so callers need not). VT_MAINTAIN_FULL does all of it. Inside a
 * write transaction.
 */
enum vt_maintain { VT_MAINTAIN_STEP, VT_MAINTAIN_FULL };
int vt_store_maintain(struct vt_store *s, enum vt_maintain how);

/*
 * Vectors (store_vectors.c): one per chunk and per frame with text, written by the
 * text_embed stage, and one per kept frame's picture, written by frame_embed, each in
 * the vector space named by the embedding's id (embed.h, imgembed.h).
 */
enum vt_vec_kind { VT_VEC_CHUNK, VT_VEC_SCREEN, VT_VEC_VISUAL };
/* The kinds each stage writes (sets of 1u << kind): a stage replaces only its own. */
#define VT_VEC_TEXT_KINDS   ((1u << VT_VEC_CHUNK) | (1u << VT_VEC_SCREEN))
#define VT_VEC_VISUAL_KINDS (1u << VT_VEC_VISUAL)
/* "speech" (a chunk), "screen" (a frame's text) or "visual" (a frame's picture): the
 * search sources; static. */
const char *vt_vec_kind_name(enum vt_vec_kind k);
struct vt_vec_rec {
    enum vt_vec_kind kind;
    int ref; /* chunk index or frame index */
    double start_s, end_s;
    const float *v; /* dim floats, unit length */
};
/* Replace the video's text vectors (VT_VEC_TEXT_KINDS; inside a write transaction); the
 * int8 copies are made here. */
int vt_store_vectors_replace(struct vt_store *s, const char *id, const char *space, int dim,
                             const struct vt_vec_rec *recs, size_t n);
int vt_store_vectors_clear(struct vt_store *s, const char *id);
/* The same for the kinds in the set kinds (1u << kind ...); recs must be of those kinds. */
int vt_store_vectors_replace_kinds(struct vt_store *s, const char *id, unsigned kinds,
                                   const char *space, int dim, const struct vt_vec_rec *recs,
                                   size_t n);
int vt_store_vectors_clear_kinds(struct vt_store *s, const char *id, unsigned kinds);
/*
 * The stored vector of video id's item (kind, ref): its key, its space (into space,
 * spacelen bytes) and dimension, and its float32 copy (*v, malloc'd). VT_ENOTFOUND when
 * there is none.
 */
int vt_store_vector_find(struct vt_store *s, const char *id, enum vt_vec_kind kind, int ref,
                         int64_t *key, char *space, size_t spacelen, int *dim, float **v);
/* Every vector of kind in video id in space (of dimension dim): refs[i] and the float32
 * copies (n * dim) into *refs and *v (malloc'd; NULL when none), ordered by ref. */
int vt_store_vectors_of(struct vt_store *s, const char *id, enum vt_vec_kind kind,
                        const char *space, int dim, int **refs, float **v, size_t *n);
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

/*
 * Footage shared between videos (store_reuse.c), found after frame_embed: a run of
 * frames of one video that also appears, in the same order, in another. Each run is
 * stored in both directions; the rows of a video go when its frame_embed re-runs (they
 * are computed again against the whole library) and when it is removed.
 */
struct vt_reuse {
    char other_id[65];
    char *other_title;                 /* filled by vt_store_reuse_of; NULL on writing */
    double start_s, end_s;             /* the span in this video */
    double other_start_s, other_end_s; /* the span in the other */
    double similarity;                 /* mean cosine of the matched frames' pictures */
    int frames;                        /* matched frames in the run */
};
/* Replace every run involving video id (either side) with runs (from id's side; written
 * in both directions). Inside a write transaction. */
int vt_store_reuse_replace(struct vt_store *s, const char *id, const struct vt_reuse *runs,
                           size_t n);
int vt_store_reuse_clear(struct vt_store *s, const char *id);
/* The runs of video id, by start, with the other video's title. */
int vt_store_reuse_of(struct vt_store *s, const char *id, struct vt_reuse **out, size_t *n);
void vt_store_reuse_free(struct vt_reuse *r, size_t n);
/* Ids of the videos that share footage with another, sorted (free with vt_strv_free-like
 * loop: each string and the array). */
int vt_store_reuse_videos(struct vt_store *s, char ***ids, size_t *n);
/* A kept frame's perceptual hash (the frames table), for finding the same picture. */
struct vt_frame_hash {
    char video_id[65];
    int idx, shot;
    double t_s;
    uint64_t phash;
};
/* The kept frames (not duplicates) of every video except except_id (NULL: of every
 * video), ordered by video and index; or only video only_id's when only_id is set. */
int vt_store_frame_hashes(struct vt_store *s, const char *only_id, const char *except_id,
                          struct vt_frame_hash **out, size_t *n);
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
