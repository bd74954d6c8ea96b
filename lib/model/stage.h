/*
 * The stage table: the one place that names the stages, says what each reads
 * (deps, after), what kind it is (flags) and the states a stage can be in. The
 * pipeline, the store, export and fetch ask it; no other file spells a stage's name.
 * Adding a stage is one line in VT_STAGE_LIST, one file lib/stages/stage_<name>.c
 * defining vt_stage_<name> (its run, save, clear), and, for a stage with tables of its
 * own, one migration (docs/ARCHITECTURE.md, "Adding a stage"). Videos made before it
 * existed get its row, queued, when the pipeline first looks at them.
 *
 * Types shared by stage implementations and the pipeline that runs them live here
 * too. A stage's run reads its inputs from the store through the library handle,
 * outside any transaction, and computes with an algorithm that knows no database; its
 * save writes the result with store calls inside the one transaction in which the
 * pipeline records the stage's state.
 */
#ifndef VT_STAGE_H
#define VT_STAGE_H

/* Kinds of stage, as flags in the table. */
enum vt_stage_flag {
    /* gets the media and learns the video's metadata: the stages after it see what it
     * learnt, and when it fails the video has no data */
    VT_STAGE_SOURCE = 1 << 0,
    /* produces the transcript: its model is the cues' source */
    VT_STAGE_SPEECH = 1 << 1,
    /* its rows point into the rows of its deps and afters: they go when those are
     * replaced */
    VT_STAGE_ROWS_OF_DEPS = 1 << 2,
};

/* A set of stages (deps, after), as bits of their ids: VT_BIT(STT) | VT_BIT(OCR). */
#define VT_BIT(ID) (1u << VT_STAGE_##ID)

/*
 * The stages, in the order they are shown (the seed page's). They run as soon as
 * what they need has finished: one pass over the table after another until a pass
 * runs nothing, so chunk (which waits for keyframe's shots) runs after keyframe, and stt
 * (which takes the slides' words as speech hints) after ocr.
 *   deps:    stages whose outputs it needs: their failure is its own
 *   after:   stages whose outputs it uses when there: they finish first
 *   retries: attempts before a failure that may pass (VT_EIO) is final
 * The second column is the stage's name (in the database, the JSON, the CLI) and
 * the name of its definition, vt_stage_<name>.
 */
/* clang-format off */
#define VT_STAGE_LIST(X) \
    /* ID          name         retries deps              after             flags */ \
    X(FETCH,       fetch,       4,      0,                0,                VT_STAGE_SOURCE) \
    X(STT,         stt,         4,      VT_BIT(FETCH),    VT_BIT(OCR),      VT_STAGE_SPEECH) \
    X(CHUNK,       chunk,       4,      VT_BIT(STT),      VT_BIT(KEYFRAME), 0) \
    X(TEXT_EMBED,  text_embed,  4,      0,                VT_BIT(CHUNK) | VT_BIT(OCR), VT_STAGE_ROWS_OF_DEPS) \
    X(KEYFRAME,    keyframe,    4,      VT_BIT(FETCH),    0,                0) \
    X(OCR,         ocr,         4,      VT_BIT(KEYFRAME), 0,                VT_STAGE_ROWS_OF_DEPS) \
    X(FRAME_EMBED, frame_embed, 4,      0,                VT_BIT(KEYFRAME) | VT_BIT(OCR), VT_STAGE_ROWS_OF_DEPS)
/* clang-format on */

enum vt_stage_id {
#define VT_STAGE_X(ID, name, retries, deps, after, flags) VT_STAGE_##ID,
    VT_STAGE_LIST(VT_STAGE_X)
#undef VT_STAGE_X
        VT_STAGE_COUNT
};

struct vt_stage_info {
    const char *name;
    int retries;
    unsigned deps, after; /* VT_BIT sets */
    unsigned flags;       /* enum vt_stage_flag */
};

/* The table, indexed by enum vt_stage_id. */
extern const struct vt_stage_info vt_stages[VT_STAGE_COUNT];

/* The stage named name, or -1 when there is none. */
int vt_stage_find(const char *name);
/* The first stage of kind flag (VT_STAGE_SOURCE ...), or -1 when there is none. */
int vt_stage_of_kind(unsigned flag);

/* The states of a stage (their names are the database's and the JSON's). */
#define VT_STATE_LIST(X)                                                                           \
    X(QUEUED, queued)                                                                              \
    X(RUNNING, running)                                                                            \
    X(DONE, done)                                                                                  \
    X(SKIPPED, skipped)                                                                            \
    X(FAILED, failed)

enum vt_state {
#define VT_STATE_X(ID, name) VT_STATE_##ID,
    VT_STATE_LIST(VT_STATE_X)
#undef VT_STATE_X
        VT_STATE_COUNT
};

/* The name of state s ("queued" ...); static. */
const char *vt_state_name(enum vt_state s);
/* The state named name; 0 with *s set, or -1 when name is no state. */
int vt_state_parse(const char *name, enum vt_state *s);
/* Whether a stage in state s has settled (done, skipped or failed). */
static inline int vt_state_terminal(enum vt_state s)
{
    return s == VT_STATE_DONE || s == VT_STATE_SKIPPED || s == VT_STATE_FAILED;
}

/*
 * A state's name as an SQL string literal, pasted into a statement's text at compile
 * time: "... WHERE state = " VT_SQL_STATE(running). A literal rather than a bound
 * parameter, so that the planner matches it against a partial index's WHERE
 * (stages_runnable). name is a name of VT_STATE_LIST; tests/unit/test_state_sql.c checks
 * every use in lib/ against the table, and that lib/ spells no state in SQL otherwise.
 */
#define VT_SQL_STATE(name) "'" #name "'"
/* The settled states (vt_state_terminal), and the others, as SQL lists for IN (...). */
#define VT_SQL_STATES_SETTLED                                                                      \
    VT_SQL_STATE(done) ", " VT_SQL_STATE(skipped) ", " VT_SQL_STATE(failed)
#define VT_SQL_STATES_UNSETTLED VT_SQL_STATE(queued) ", " VT_SQL_STATE(running)

/* Returned (positive) by a stage that cannot run for a legitimate reason; the
 * reason is in its err buffer and the pipeline records the stage as skipped. */
#define VT_SKIP 1

/* Progress callback of a stage: frac in 0..1. */
typedef void (*vt_progress_fn)(void *user, double frac);

#endif
