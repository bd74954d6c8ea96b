/*
 * The library handle and the pipeline's internal interface. A library is a
 * directory holding the database (library.db) and the keyframe images
 * (frames/<video id>/<run>/<index>.jpg). The stage table (stage.h) names the
 * stages and says how they connect, the pipeline (pipeline.c) runs them by it;
 * the stages (lib/stages/stage_<name>.c) know how to compute and store their own
 * outputs and nothing of each other.
 */
#ifndef VT_LIBRARY_H
#define VT_LIBRARY_H

#include "model/stage.h"
#include "store/store.h"
#include "vidtheque.h"

struct vt_chapter;

/*
 * A slot of the handle: what a stage keeps between videos (its OCR engine, its speech
 * decoders, its embedding model, its downloader's settings), or the search its indexes.
 * The owner fills it on first use with the function that closes it, so the handle knows
 * no engine: vt_library_close calls close, and a binary that runs no stage (the
 * Makefile's front binary, docs/ARCHITECTURE.md) links and loads none of them.
 */
struct vt_lib_slot {
    void *state;
    void (*close)(void *state);
};

/* The slots: one per stage (enum vt_stage_id), then the search's. */
enum { VT_SLOT_SEARCH = VT_STAGE_COUNT, VT_SLOT_COUNT };

struct vt_library {
    char *dir;
    struct vt_store *store;
    struct vt_callbacks cb;
    /* "host:pid:nonce", marks stages this handle runs; alive while owner_fd holds the
     * lock on locks/<pid>-<nonce>.lock (taken before the first claim, -1 until then) */
    char owner[128];
    int owner_fd;
    /* a queue worker's handle (vt_work_one): the lease its claims take, in seconds (0:
     * not a worker's: an in-process run takes vt_lease_default_s() on PostgreSQL, none on
     * SQLite), and what it is told of its jobs */
    double lease_s;
    struct {
        /* a stage was claimed at attempt attempts / its run ended (result stored or not) */
        void (*claimed)(void *user, const char *id, const char *stage, int attempts);
        void (*released)(void *user, const char *id, const char *stage, int attempts);
        void *user;
    } job;
    double queue_s; /* seconds spent claiming and recording stages (not running, not saving) */
    long fenced;    /* results refused because the stage was taken over */
    /* what the rooms above keep between uses: each stage's engine (by its id), and the
     * search's in-memory vector indexes (VT_SLOT_SEARCH) */
    struct vt_lib_slot slots[VT_SLOT_COUNT];
    /* the last exported documents, valid while the database version is unchanged:
     * a web server thread answers the same few pages over and over */
    struct {
        char id[VT_ID_MAX];
        long long version;
        struct vt_doc_pages pages;
        char *json;
    } docs[16];
    unsigned docs_next;
    char err[1024];
    int err_code; /* the VT_E* code recorded with err (vt_lib_fail) */
};

/* vt_library_open with the failure's VT_E* code: 0 and the handle in *out, or the code
 * (VT_EUNAVAIL: the database server cannot be reached now, a later try may) with the
 * message in err and *out NULL. */
int vt_library_open_rc(const char *dir, int flags, struct vt_library **out, char *err,
                       size_t errlen);

/* Read video id into *v (released with vt_video_rec_release), or record why not
 * (not an id, no such video, database trouble) and return the code. */
int vt_lib_video(struct vt_library *lib, const char *id, struct vt_video_rec *v);

/* path itself when absolute, else the library's file at that relative path; caller frees. */
char *vt_lib_path(const struct vt_library *lib, const char *path);
/* A free id for a new video, inside a write transaction: preferred when it is a
 * usable id and free, else one from hash (another derived on a collision). */
int vt_lib_alloc_id(struct vt_library *lib, const char *preferred, uint64_t hash, char *id);

/* Take the lock that says this handle's owner is alive (once, before a first claim). */
int vt_lib_owner_lock(struct vt_library *lib);
/* Whether the process that wrote owner into a stage is gone: 1 when its lock file is
 * missing or unlocked (or owner is NULL or not of our form), 0 when it holds it or
 * that cannot be told (the stage is then left alone). */
int vt_lib_owner_dead(struct vt_library *lib, const char *owner);
/* Remove lock files nobody holds (owners killed between two stages leave them);
 * best effort, in passing. */
void vt_lib_owner_locks_sweep(struct vt_library *lib);

/* What slot (a stage id or VT_SLOT_SEARCH) holds; NULL when empty. */
void *vt_lib_slot(const struct vt_library *lib, int slot);
/* Put state in slot, with the function that closes it (called by vt_library_close);
 * what the slot held before is closed first (unless it is state itself). */
void vt_lib_slot_set(struct vt_library *lib, int slot, void *state, void (*close)(void *state));

/* Record a message for vt_errmsg and return code. */
int vt_lib_fail(struct vt_library *lib, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * End the write transaction begun with vt_store_begin: commit when rc is 0, else roll
 * back. A failure, rc's or the commit's, is recorded for vt_errmsg with the store's
 * message. Returns 0 or that failure's code.
 */
int vt_lib_end_write(struct vt_library *lib, int rc);

/* One run of one stage on one video. */
struct vt_stage_ctx {
    struct vt_library *lib;
    struct vt_video_rec *video;
    const char *stage;
    char model[160];
    char err[512];
    /* what a bound cut from a result that is otherwise done (e.g. a media past 24 h): kept
     * as the done stage's note (its error field), which makes the video's data partial */
    char cut[256];
    void *result;  /* the stage's output between run and save */
    double save_s; /* seconds its save took, inside the finishing transaction */
};

/* What a stage does; its name, inputs and kind are its line in the stage table
 * (stage.h), and its definition is vt_stage_<name>. */
struct vt_stage_def {
    /* Compute, outside any transaction: 0, VT_SKIP (reason in err) or < 0 (err). */
    int (*run)(struct vt_stage_ctx *c);
    /* Store the result; called inside the write transaction that marks it done. */
    int (*save)(struct vt_stage_ctx *c);
    /* Drop the stage's stored outputs; inside a write transaction. */
    int (*clear)(struct vt_stage_ctx *c);
    /* A stage whose rows point into its inputs' (VT_STAGE_ROWS_OF_DEPS): drop only those
     * that point into input stage in's rows, which are being replaced; inside that write
     * transaction. The others stay until the stage's own save replaces them, so that a
     * redo takes nothing away before it has something to put in its place. NULL: clear. */
    int (*clear_of)(struct vt_stage_ctx *c, enum vt_stage_id in);
    /* The inputs (VT_BIT) whose replacement leaves this stage's searchable rows in place
     * until its own save (clear_of then drops only what no longer fits the input's new
     * rows), so the rows of the stages that read this one stay too. When such an input is
     * cleared rather than replaced, this stage's rows go (clear). */
    unsigned keeps_of;
    /* After the commit that stored the result (e.g. remove superseded files). */
    void (*after_commit)(struct vt_stage_ctx *c);
    void (*release)(struct vt_stage_ctx *c);
    /* Once the video is indexed (every stage settled), e.g. drop media not kept. */
    void (*indexed)(struct vt_library *lib, const struct vt_video_rec *v);
};

#define VT_STAGE_X(ID, name, retries, deps, after, flags)                                          \
    extern const struct vt_stage_def vt_stage_##name;
VT_STAGE_LIST(VT_STAGE_X)
#undef VT_STAGE_X

/* Report progress of the running stage (a struct vt_stage_ctx) through the library's
 * callback. */
void vt_stage_progress(void *ctx, double frac);
/* 0 when the video's media file is there for a stage that decodes it, else VT_ENOTFOUND with
 * the reason in c->err (media not kept after indexing is gone until fetch runs again). */
int vt_stage_need_media(struct vt_stage_ctx *c);

/*
 * A queue worker's step: claim the next runnable stage of any video among the stages
 * of the set (VT_BIT bits), run it as vt_process would (claim, run, save with its
 * provenance, the video's state; its media dropped when the video is indexed), under
 * a lease of lib->lease_s seconds. *did: 0 nothing runnable, 1 a stage ran or settled,
 * 2 one was found but not taken (another handle was faster, or rows were added). 0 or
 * an error code (recorded for vt_errmsg).
 */
int vt_work_one(struct vt_library *lib, unsigned stages, int *did);

/* Insert a video row and its queued stages; inside a write transaction. */
int vt_pipeline_register(struct vt_library *lib, const struct vt_video_rec *v);
/* Record a failed attempt of a stage that ran outside the pipeline (fetch's first
 * look at a URL, before the video had a row); inside a write transaction. */
int vt_pipeline_record_failure(struct vt_library *lib, const char *id, enum vt_stage_id stage,
                               const char *model, int code, const char *error, double started_at,
                               double took_s);

#endif
