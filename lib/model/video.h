/*
 * What the library knows of a video as a whole, shared by the store, the media layer
 * and the stages: its index state and data status (names in video_state.c) and its
 * chapters as the container or the source gives them.
 */
#ifndef VT_MODEL_VIDEO_H
#define VT_MODEL_VIDEO_H

/*
 * A video's index_state: queued (nothing started), processing, ready (every stage
 * finished), failed (fetch failed: nothing usable); and its data_status: ok (every
 * stage done or skipped), partial (some stage failed or is unfinished), missing (no
 * data yet, or fetch failed). The names are what the database and the JSON hold.
 */
#define VT_INDEX_STATE_LIST(X)                                                                     \
    X(QUEUED, queued) X(PROCESSING, processing) X(READY, ready) X(FAILED, failed)
#define VT_DATA_STATUS_LIST(X) X(MISSING, missing) X(PARTIAL, partial) X(OK, ok)

enum vt_index_state {
#define VT_INDEX_X(ID, name) VT_INDEX_##ID,
    VT_INDEX_STATE_LIST(VT_INDEX_X)
#undef VT_INDEX_X
        VT_INDEX_STATE_COUNT
};

enum vt_data_status {
#define VT_DATA_X(ID, name) VT_DATA_##ID,
    VT_DATA_STATUS_LIST(VT_DATA_X)
#undef VT_DATA_X
        VT_DATA_STATUS_COUNT
};

/* Names of the states ("?" for a value out of range), and back: 0, or -1 for a
 * name that is none of them (video_state.c). */
const char *vt_index_state_name(enum vt_index_state s);
int vt_index_state_parse(const char *name, enum vt_index_state *s);
const char *vt_data_status_name(enum vt_data_status s);
int vt_data_status_parse(const char *name, enum vt_data_status *s);

/* A chapter of a video, as the container (media.c) or the source's info (ytinfo.c)
 * gives it. */
struct vt_chapter {
    double start_s, end_s;
    char *title; /* owned; may be NULL */
};

/* Where a video's stored chapters come from (the chapters table's source): the source's
 * own list (ytinfo.c), the container's (media.c), or the slides' titles (the ocr stage,
 * text/slide_chapters.h) when neither gave any. */
#define VT_CHAPTERS_SOURCE_META "source metadata"
#define VT_CHAPTERS_CONTAINER   "container"
#define VT_CHAPTERS_SLIDES      "slides"

/* How chapters of that source were made, for the export and the pages: "slides" for
 * VT_CHAPTERS_SLIDES, else "source" (video_state.c). */
const char *vt_chapters_made(const char *source);

#endif
