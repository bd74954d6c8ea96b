/*
 * vidtheque: a video library searchable by what is said and shown in videos.
 *
 * This is the one public header of libvidtheque. Front-ends (the command line,
 * the web server, tests) use the library only through it. The library never
 * prints to stdout and never exits; it reports through return codes (0 or a
 * negative VT_E* value), a per-library error message and optional callbacks.
 *
 * Threads: a struct vt_library is used by one thread at a time. Stages may run
 * worker threads inside a call; callbacks are always invoked on the calling thread.
 */
#ifndef VIDTHEQUE_H
#define VIDTHEQUE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VIDTHEQUE_VERSION "0.1.0"

/* Error codes (negative). */
enum {
    VT_OK = 0,
    VT_EIO = -1,       /* file system or database trouble */
    VT_EINVAL = -2,    /* bad argument or hostile/unsupported input */
    VT_ENOTFOUND = -3, /* no such video, stage or file */
    VT_EMEDIA = -4,    /* media cannot be probed or decoded */
    VT_EBUSY = -5,     /* the library is locked by another writer for too long (10 s) */
    /* not possible in the current state: a write on a read-only library, a stage held by
     * another live process, a video left unfinished (the message says why) */
    VT_ESTATE = -6,
    /* the database server cannot be reached (PostgreSQL down or restarting): try again
     * later; nothing was changed */
    VT_EUNAVAIL = -7,
    VT_ENOMEM = -8, /* out of memory (a library's own allocation, e.g. a model's weights) */
    /* something this machine lacks (the media file not readable here, a model missing
     * here): a stage failing so is queued again for any worker, not failed for good */
    VT_EHERE = -9,
};

enum vt_log_level { VT_LOG_ERROR, VT_LOG_WARN, VT_LOG_INFO, VT_LOG_DEBUG };

struct vt_library;

struct vt_callbacks {
    /* A log line without trailing newline. */
    void (*log)(void *user, int level, const char *msg);
    /* Progress of one stage of one video: frac in 0..1, or -1 when it ends. */
    void (*progress)(void *user, const char *video_id, const char *stage, double frac);
    void *user;
};

/*
 * The library directory: dir if non-empty, else $VIDTHEQUE_LIBRARY, else
 * $XDG_DATA_HOME/vidtheque (when it is absolute), else ~/.local/share/vidtheque. Writes
 * into buf; VT_EINVAL when none can be named (no $HOME) or it does not fit in n bytes.
 */
int vt_library_default_dir(const char *dir, char *buf, size_t n);

/*
 * Open the library in dir. flags: VT_OPEN_CREATE makes the directory and database
 * if missing; VT_OPEN_READ says the caller only reads, so a library that cannot be
 * written (a read-only mount or directory, database files without write permission)
 * opens read-only and every write on it fails with VT_ESTATE. Without VT_OPEN_READ
 * such a library fails to open ("library 'DIR' is read-only"). On failure returns
 * NULL and writes a message into err. The result is freed with vt_library_close.
 * A handle that runs stages marks them with its owner name and, from its first claim
 * until it is closed, holds a lock on DIR/locks/<pid>-<nonce>.lock: another process
 * takes over a running stage only once that lock is gone (its owner died).
 */
enum { VT_OPEN_CREATE = 1, VT_OPEN_READ = 2 };
struct vt_library *vt_library_open(const char *dir, int flags, char *err, size_t errlen);
void vt_library_close(struct vt_library *lib);
void vt_library_set_callbacks(struct vt_library *lib, const struct vt_callbacks *cb);
/* Message for the last failing call on lib; borrowed until the next call. */
const char *vt_errmsg(const struct vt_library *lib);
/* The VT_E* code of the failure vt_errmsg describes (0 before any, or after
 * vt_clear_error). */
int vt_errcode(const struct vt_library *lib);
/* Forget the last failure: vt_errmsg "" and vt_errcode 0. */
void vt_clear_error(struct vt_library *lib);
/* Directory of the library; borrowed for the life of lib. */
const char *vt_library_dir(const struct vt_library *lib);
/* Whether lib was opened read-only (VT_OPEN_READ on a library that cannot be written). */
int vt_library_read_only(const struct vt_library *lib);

/*
 * Register a local media file. On success id (at least VT_ID_MAX bytes) holds the
 * video's id and *is_new says whether it was new (a file already registered, found by
 * its content, keeps its id and its options; opts is then ignored). Registering does
 * not run stages. VT_ENOTFOUND when path does not exist, VT_EINVAL when it is not a
 * regular file or opts->stt is not a mode, VT_EMEDIA when it is empty or not media with
 * an audio or video stream (nothing is registered then), VT_ESTATE on a read-only library.
 */
#define VT_ID_MAX 65
struct vt_add_opts {
    /* Where the transcript comes from: "auto" (captions when the file has them, else
     * speech recognition), "captions" (only captions) or "recognize". NULL: auto. */
    const char *stt;
    int no_keep_media; /* URLs: delete the downloaded media once the video is indexed */
    /* local files: record the file where it is (its absolute path) instead of copying
     * it (or hard-linking it, on the same file system) into <library>/media/<id>/,
     * where every machine that shares the library reaches it */
    int in_place;
    int limit; /* lists: only the first (newest) N entries; 0 for all */
};
int vt_add_file(struct vt_library *lib, const char *path, const struct vt_add_opts *opts, char *id,
                int *is_new);

/* Whether s has the shape "scheme://..." (vt_add_url then takes it, or refuses it). */
int vt_is_url(const char *s);

/* Called for each video an add or update registered (is_new 1) or found already
 * there (0); non-zero stops. */
typedef int (*vt_added_fn)(void *user, const char *id, int is_new);

/*
 * Register what an http(s) URL points at, through the yt-dlp program: one video,
 * or every entry of a playlist or channel (opts->limit). Registering asks yt-dlp
 * for the metadata only; the fetch stage (vt_process) downloads. A URL yt-dlp
 * cannot read now is still registered, with that failure as its fetch stage's
 * first attempt (vt_resume retries with backoff), and VT_EIO is returned. Other
 * schemes, and anything not a URL, are refused (VT_EINVAL) before yt-dlp runs.
 */
int vt_add_url(struct vt_library *lib, const char *url, const struct vt_add_opts *opts,
               vt_added_fn fn, void *user);
/* The same from an info JSON file that yt-dlp wrote (or any tool in its format):
 * its formats and captions are downloaded, its URL is never asked again. */
int vt_add_info_json(struct vt_library *lib, const char *path, const struct vt_add_opts *opts,
                     vt_added_fn fn, void *user);
/* Re-check every list that was added and register its new entries. */
int vt_update(struct vt_library *lib, vt_added_fn fn, void *user);

struct vt_fetch_opts {
    const char *ytdlp;   /* the yt-dlp program; NULL: $VIDTHEQUE_YTDLP, else yt-dlp on PATH */
    double max_time_s;   /* per download (0: 4 hours) */
    long long max_bytes; /* per download (0: 8 GiB) */
};
void vt_library_set_fetch(struct vt_library *lib, const struct vt_fetch_opts *opts);

/* The source's page opened at second t (YouTube's &t=Ns, a media fragment #t=N for
 * a plain media URL, the page itself for sites with no known way). */
int vt_source_url_at(const char *page_url, const char *extractor, double t, char *buf, size_t n);

/* The video's index_state and data_status (each buffer at least 16 bytes). */
int vt_video_state(struct vt_library *lib, const char *id, char *index_state, char *data_status);

/* Whether s has the shape of a video id: 1..64 characters of [A-Za-z0-9_-]. */
int vt_id_valid(const char *s);

/* Run every stage of the video that is not finished (done, skipped or failed). A video
 * left unfinished for a reason not yet reported through the log (a stage held by another
 * live process, a retry not yet due) gives VT_ESTATE with that reason. */
int vt_process(struct vt_library *lib, const char *id);
/* Re-run one stage and every stage that depends on it, keeping the rest, then run the
 * video (vt_process). Their rows stay until each stage's new ones replace them, in the
 * commit that saves them (rows that point into replaced rows go with those). Each gets
 * its budget of retries afresh (a dead letter is retried again, counted from the redo);
 * its attempts in all count on. VT_EINVAL
 * for an unknown stage; VT_ESTATE, with nothing changed, when one of those stages is
 * running in another live process. */
int vt_redo(struct vt_library *lib, const char *id, const char *stage);
/* Finish whatever interrupted runs left, for every video; *n_videos gets how many are
 * now ready. VT_ESTATE (the first reason in the message) when some video could not be
 * finished (a stage held by a live process, a retry not yet due) or a stage failed. */
int vt_resume(struct vt_library *lib, int *n_videos);
/*
 * The job queue (docs/ARCHITECTURE.md, "Job queue"). Workers on any number of machines
 * run stages of any video from one queue, the library's stage rows, each stage under a
 * lease that a heartbeat extends: `vidtheque worker`.
 */
/* "sqlite" or "postgresql": where the library's catalog and queue live. */
const char *vt_library_backend(const struct vt_library *lib);
/* A comma-separated list of stage names ("stt,ocr") as a set (bit k: stage k of the
 * stage table); VT_EINVAL with a message for a name that is no stage. */
int vt_stage_set_parse(const char *list, unsigned *set, char *err, size_t errlen);
/* Set the priority of every stage of video id: higher runs first (default 0). */
int vt_video_set_priority(struct vt_library *lib, const char *id, int priority);
/* Wait until the n videos have settled (every stage done, skipped or failed), logging
 * each stage as it runs and settles; 0, or an error (a video removed meanwhile). */
int vt_wait_settled(struct vt_library *lib, char (*ids)[VT_ID_MAX], size_t n);
/* The queue as text (failed: with every dead letter and its last error) or as JSON,
 * into *out (caller frees): depth by stage and state, running stages with their owner
 * and lease, failures. */
int vt_jobs_report(struct vt_library *lib, int failed, int json, char **out);

struct vt_worker_opts {
    unsigned stages;          /* the stages it runs (vt_stage_set_parse); 0: all */
    int concurrency;          /* stage threads, each with its own handle on the library */
    double lease_s;           /* each claim's lease; the heartbeat extends it every lease_s / 3 */
    double idle_s;            /* longest wait for work before looking again (0: 1 s) */
    int drain;                /* end once no stage of the set is queued or running anywhere */
    const volatile int *stop; /* 1: claim no more, finish the running stages, return;
                               * 2: give their leases back and return at once */
    double grace_s;           /* after stop 1, give back what still runs after this long
                               * (0: wait for the stages however long they take) */
    const struct vt_callbacks *cb;
    const struct vt_fetch_opts *fetch;
};
struct vt_worker_stats {
    long ran, fenced, errors, heartbeats; /* fenced: results refused (lease lost) */
    double queue_s;        /* seconds spent claiming and recording stages, all threads */
    double overhead_p50_s; /* the same per stage run: median and 99th percentile */
    double overhead_p99_s;
};
/*
 * Run a worker on the library in dir until *stop or, with drain, until no work is
 * left: 0; 1 when it gave its leases back (stop 2) with stage threads still running,
 * so the caller must end the process at once (_exit); or an error code with err.
 */
int vt_worker_run(const char *dir, const struct vt_worker_opts *o, struct vt_worker_stats *stats,
                  char *err, size_t errlen);

/* Remove a video: database rows, then its files (frames, media downloaded or copied into
 * the library; never a file added --in-place, nor the original a copy was made from).
 * VT_EINVAL for a malformed id, VT_ENOTFOUND when the library has no such video. */
int vt_remove(struct vt_library *lib, const char *id);

/*
 * Check the library: the database's integrity, that every kept frame's image file
 * exists (and its small version, for a video that has small versions: one indexed before
 * they were written gets a VT_LOG_INFO note) and that media downloaded (and still kept) or
 * copied into the library is there. Problems are logged (VT_LOG_ERROR); *problems gets their count.
 */
int vt_check(struct vt_library *lib, int *problems);

/* Stage names in the stage table's order (the order stages are shown in); NULL-terminated,
 * static. */
const char *const *vt_stage_names(void);
/* Stage names in the order the pipeline runs them (each after the stages it reads, ties in
 * the table's order: fetch, keyframe, ocr, stt ...): at most max - 1 of them into out, then
 * NULL; returns how many stages there are. */
size_t vt_stage_run_order(const char **out, size_t max);

struct vt_video_summary {
    char id[VT_ID_MAX];
    const char *title; /* borrowed for the callback's duration */
    double duration_s;
    const char *index_state, *data_status;
};
/* Call fn for every video, oldest first. Stops early when fn returns non-zero. */
int vt_list(struct vt_library *lib, int (*fn)(void *user, const struct vt_video_summary *v),
            void *user);

/*
 * The video's document as JSON (the export format; see docs/ARCHITECTURE.md).
 * *out is caller-freed with free().
 */
int vt_export_json(struct vt_library *lib, const char *id, char **out);

/* Items [offset, offset + limit) of one of the document's lists; limit < 0: to the end. */
struct vt_doc_page {
    long long offset, limit;
};
struct vt_doc_pages {
    struct vt_doc_page shots, frames, cues, chunks;
};
/*
 * The document with only the given page of its long lists (shots, frames, cues, chunks),
 * read from the database page by page: what a reader that must stay small (the web server)
 * asks for. Each list that holds less than all its items is named in
 * "pages": {"cues": {"offset", "count", "total"}, ...}; when none is, the document is
 * exactly vt_export_json's. The "stored" counts are always the whole video's.
 * pages NULL: everything. *out is caller-freed with free(). The handle keeps the last 16
 * documents it made and answers a repeated request from them while the database is
 * unchanged (no commit by any process since).
 */
int vt_export_json_pages(struct vt_library *lib, const char *id, const struct vt_doc_pages *pages,
                         char **out);
/* What a list of videos shows of one, read without its outputs (cues, frames ...). */
#define VT_CARD_STAGES 16
struct vt_video_card {
    char *channel;   /* owned, NULL when unknown */
    int thumb_frame; /* the kept frame that shows the start (its index), -1 when none */
    size_t n_stages; /* the video's stages in pipeline order, at most VT_CARD_STAGES */
    struct {
        char name[32], state[16];
    } stages[VT_CARD_STAGES];
};
/* Fill *card (released with vt_video_card_release, also after a failure). */
int vt_video_card(struct vt_library *lib, const char *id, struct vt_video_card *card);
void vt_video_card_release(struct vt_video_card *card);
/* The kept frame that shows moment t_s of the video (the first of the shot containing it,
 * a duplicate standing for the frame it repeats, else the nearest): *frame gets its index,
 * -1 when the video has none. */
int vt_frame_at(struct vt_library *lib, const char *id, double t_s, int *frame);
/* A storyboard of the video, for previews on a seek bar: its kept frames in time order,
 * each shown from start_s until the next one's (a duplicate names the frame it repeats).
 * *out is caller-freed with free(); none when the video has no kept frame. */
struct vt_board_frame {
    double start_s;
    int frame; /* a kept frame with an image (its small version: ?size=small) */
};
int vt_storyboard(struct vt_library *lib, const char *id, struct vt_board_frame **out, size_t *n);
/* The cue said at t_s (the last that starts at or before it): *cue gets its index, -1 when
 * none does. */
int vt_cue_at(struct vt_library *lib, const char *id, double t_s, long long *cue);

/* The kept frame showing frame idx of the video (itself, or the frame it repeats): *kept
 * gets its index, -1 when there is no such frame or it has no image. A search hit from the
 * screen has its frame in ref: this is the picture to show for it. */
int vt_frame_kept(struct vt_library *lib, const char *id, int idx, int *kept);
/* The poster of the video's card set to its kept frame `frame` (one with an image, not a
 * duplicate), or with frame -1 back to the frame the library picks (a slide with text, the
 * sharpest frame of the longest shot). VT_EINVAL when the video has no such frame. */
int vt_video_set_poster(struct vt_library *lib, const char *id, int frame);

/*
 * A page of the library's videos, filtered and sorted, with what a card shows of each: read
 * in one query, never a video's outputs, so a page costs the same in a library of ten or ten
 * thousand videos.
 */
struct vt_list_opts {
    const char *state; /* "queued", "processing", "ready" or "failed"; NULL or "": any */
    const char *text;  /* title or channel contains it (ASCII letters case-blind); NULL: any */
    int reuse_only;    /* only videos sharing footage with another (frame_embed) */
    const char *id;    /* only this video (a card refreshed on its own); NULL: any */
    const char *sort;  /* "added" (oldest first, the default), "newest", "title", "duration" */
    long long offset;  /* the page: items [offset, offset + limit); limit < 0: to the end */
    long long limit;
};
struct vt_video_item {
    char id[VT_ID_MAX];
    const char *title, *channel; /* borrowed for the callback's duration; channel may be NULL */
    double duration_s;
    const char *index_state, *data_status; /* static */
    double added_at;                       /* seconds since the epoch */
    int stages_total, stages_finished;     /* finished: done, skipped or failed */
    const char *running;                   /* the stage running now, or NULL; borrowed */
    int poster_frame; /* the chosen, else a representative kept frame (its index), -1: none */
};
/* fn for each video of the page, in order (non-zero stops); *total (may be NULL) gets how
 * many videos pass the filters. VT_EINVAL for an unknown state or sort. */
int vt_list_page(struct vt_library *lib, const struct vt_list_opts *opts,
                 int (*fn)(void *user, const struct vt_video_item *v), void *user,
                 long long *total);

/* The transcript as "vtt" (WebVTT), "srt" (SubRip) or "txt"; *out caller-freed. */
int vt_export_subtitles(struct vt_library *lib, const char *id, const char *format, char **out);

/* ---- search ---- */

/* Marks around matched terms in vt_hit.text (never found in indexed text). */
#define VT_MARK_OPEN  "\x01"
#define VT_MARK_CLOSE "\x02"

struct vt_hit {
    char video_id[VT_ID_MAX];
    char *title; /* owned */
    double start_s, end_s;
    char source[8];   /* "speech", "screen", "title" or "visual" (a picture, by likeness) */
    char *text;       /* owned; matched terms between VT_MARK_OPEN and VT_MARK_CLOSE */
    double score;     /* higher is better; hits come sorted by it */
    int approx;       /* matched only through sound-alike or one-character-off terms */
    int ref;          /* cue, frame or chapter index (-1: the video's title) */
    char also[24];    /* other sources merged into this moment, comma-separated, or "" */
    unsigned matched; /* the signals that found it: VT_MATCH_WORDS | _MEANING | _VISUAL */
    /* found by meaning or pictures: the cosine, and how far it stands above its vector
     * space's relevance floor (VT_REL_WEAK or _STRONG; VT_REL_NONE for words only) */
    double similarity;
    int relevance;
};
enum { VT_MATCH_WORDS = 1, VT_MATCH_MEANING = 2, VT_MATCH_VISUAL = 4 };
enum vt_relevance { VT_REL_NONE, VT_REL_WEAK, VT_REL_STRONG };
/* "strong", "weak", or NULL for VT_REL_NONE; static. */
const char *vt_relevance_name(int relevance);

/* What a search matches on (vt_search_opts.mode). */
enum vt_search_mode {
    VT_SEARCH_AUTO,    /* hybrid when a text embedding model is configured, else words */
    VT_SEARCH_WORDS,   /* the words typed (full-text index) */
    VT_SEARCH_MEANING, /* nearest passages and screens by meaning (text_embed's vectors) */
    VT_SEARCH_HYBRID,  /* both, fused by reciprocal rank */
};

/* "auto", "words", "meaning" or "hybrid"; static. */
const char *vt_search_mode_name(enum vt_search_mode m);
/* The mode named s ("auto" too): 0, or -1 when s names none. */
int vt_search_mode_parse(const char *s, enum vt_search_mode *m);

struct vt_search_opts {
    int limit;          /* at most this many hits (default 20, at most 1000) */
    const char *video;  /* only this video, or NULL */
    const char *source; /* only "speech", "screen" or "title", or NULL */
    enum vt_search_mode mode;
    /* seconds the query's embedding may take, a model server's answers and retries
     * included (0: VT_SEARCH_EMBED_BUDGET_S); past it, a hybrid search answers with words
     * only and says why in the warning */
    double embed_budget_s;
};
#define VT_SEARCH_EMBED_BUDGET_S 5.0

struct vt_search_info {
    double took_ms;
    int partial;              /* the time budget ran out: older matches may be missing */
    enum vt_search_mode mode; /* the mode that ran (never AUTO) */
    /* why meaning was left out of a hybrid search (the model's server down...), or "" */
    char warning[256];
    /* more rows matched than the search ranks (it reads the newest few hundred per word
     * tier): the hits found are the best of those, and their count is a lower bound */
    int more;
    /* the relevance floors the search applied: [0] meaning (the text model's space), [1]
     * pictures (the frame model's); signal "" when that one did not run */
    struct vt_search_floor {
        char signal[8]; /* "meaning" or "visual" */
        char space[256];
        long long vectors; /* the space's vectors when the floor was measured */
        int probes;        /* queries that cannot match, measured */
        double chance_mean, chance_sd, chance_max; /* their best cosines */
        double floor, strong;
        int below;    /* nearest vectors left out for standing below the floor */
        int measured; /* measured by this search (else kept from before) */
    } floors[2];
};

/*
 * Search the library. Any string is a valid query (see docs/ARCHITECTURE.md for the
 * syntax); one with nothing searchable gives 0 hits. *hits is freed with
 * vt_hits_free; info (may be NULL) gets the time spent and whether it was cut short.
 */
int vt_search(struct vt_library *lib, const char *query, size_t query_len,
              const struct vt_search_opts *opts, struct vt_hit **hits, size_t *n,
              struct vt_search_info *info);
void vt_hits_free(struct vt_hit *hits, size_t n);

/*
 * The hits as the JSON document that `search --json` prints and GET /api/search answers
 * (docs/API.md): query, took_ms, partial, hits[] with times and scores rounded to
 * milliseconds and matched terms between « ». Caller frees; NULL if out of memory.
 */
char *vt_hits_json(const char *query, const struct vt_search_info *info, const struct vt_hit *hits,
                   size_t n);

/* ---- text helpers, shared with front-ends so that they hold no copy of their own ---- */

/*
 * Growable NUL-terminated string: zero-initialise, then append; buf is NULL until the
 * first append. Appending aborts when memory runs out. vt_sb_detach returns the string
 * (caller frees; "" when nothing was added) and resets sb; vt_sb_release frees it.
 */
struct vt_sb {
    char *buf;
    size_t len, cap;
};
void vt_sb_add(struct vt_sb *sb, const char *s, size_t n);
void vt_sb_adds(struct vt_sb *sb, const char *s);
void vt_sb_addf(struct vt_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vt_sb_addc(struct vt_sb *sb, char c);
char *vt_sb_detach(struct vt_sb *sb);
void vt_sb_release(struct vt_sb *sb);
/*
 * Second s as a link's seek value (?t=): milliseconds rounded up, so that a link never
 * lands before its moment (in the previous shot), without trailing zeros: "12", "9.067",
 * "2.5". Negative, NaN or absurd s is "0".
 */
void vt_sb_add_seek(struct vt_sb *sb, double s);

/*
 * Templates, for the web pages' HTML (web/NAME.html; lib/base/tmpl.c): a small subset of
 * Mustache with no logic beyond "is this set".
 *
 *   {{name}}                 the value, escaped by the caller's escape function
 *   {{{name}}}               the value as it is (HTML the caller built and escaped)
 *   {{#name}}...{{/name}}    the inside when the value is set (not NULL, not "")
 *   {{^name}}...{{/name}}    the inside when it is not
 *
 * A name is [a-z0-9_]+; a name not among the variables is unset. Templates are the
 * program's own files, values are data: a value is never read as a template.
 */
struct vt_tmpl_var {
    const char *name;
    const char *value; /* NULL: unset */
};

/*
 * Render the template t (n bytes) into out with the n_vars variables, escaping {{name}}
 * values with escape. Returns 0, or -1 when the template is malformed (a tag not closed,
 * a section without its end, a bad name): out then holds what came before the fault.
 */
int vt_tmpl_render(struct vt_sb *out, const char *t, size_t n, const struct vt_tmpl_var *vars,
                   size_t n_vars, void (*escape)(struct vt_sb *, const char *));

/*
 * The one UTF-8 decoder: the length (1..4) of the valid sequence at s, which has n > 0
 * bytes left, with its code point in *cp (cp may be NULL); 0 when it is not valid UTF-8
 * (RFC 3629: overlong forms, surrogates, code points past U+10FFFF, a sequence cut short).
 * A NUL byte is never part of a longer sequence, so on a NUL-terminated string the bytes
 * read stop at the terminator whatever n.
 */
size_t vt_utf8_decode(const char *s, size_t n, uint32_t *cp);

#ifdef __cplusplus
}
#endif
#endif
