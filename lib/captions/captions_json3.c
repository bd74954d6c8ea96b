/*
 * Reading YouTube's json3 captions (what yt-dlp saves for a video's manual and automatic
 * captions): events with a start, an optional duration and text segments whose offsets
 * time the words, made cues that never overlap the next one.
 */
#include "captions/captions.h"
#include "captions/captions_int.h"
#include "base/util.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Reading YouTube's json3                                                              */

/* An event of a json3 file that holds text. */
struct j3_event {
    int64_t start_ms, dur_ms; /* dur_ms -1: not given */
    size_t index;
    const json_t *segs;
};

static int cmp_j3_event(const void *a, const void *b)
{
    const struct j3_event *x = a, *y = b;

    if (x->start_ms != y->start_ms)
        return x->start_ms < y->start_ms ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* A json3 time field in ms: 0 when it is a number in 0..MAX_TIME_MS, else -1. */
static int j3_ms(const json_t *v, int64_t *ms)
{
    double d;

    if (!json_is_number(v))
        return -1;
    d = json_number_value(v);
    if (!(d >= 0 && d <= (double)MAX_TIME_MS))
        return -1;
    *ms = llround(d);
    return 0;
}

/* Whether the segs of an event hold something other than spaces and line breaks. */
static int j3_has_text(const json_t *segs)
{
    size_t i;
    json_t *seg;

    json_array_foreach(segs, i, seg)
    {
        const json_t *u = json_object_get(seg, "utf8");
        const char *s = json_string_value(u);
        size_t n = json_string_length(u);

        for (size_t k = 0; s && k < n; k++)
            if ((unsigned char)s[k] > 0x20 && s[k] != 0x7f)
                return 1;
    }
    return 0;
}

/*
 * The text of an event's segs into b: segs concatenated, '\n' a line break, spaces
 * collapsed, control characters dropped. A seg with tOffsetMs starts a timing segment at
 * the event's start plus the offset (kept within the cue by vt_cap_cb_segment).
 */
static void j3_text(struct cue_builder *b, const json_t *segs, int64_t start_ms, int64_t end_ms)
{
    size_t i;
    json_t *seg;

    b->pending_nl = 1;
    json_array_foreach(segs, i, seg)
    {
        const json_t *u = json_object_get(seg, "utf8");
        const char *s = json_string_value(u);
        size_t n = json_string_length(u);
        int64_t off_ms;

        if (!j3_ms(json_object_get(seg, "tOffsetMs"), &off_ms))
            vt_cap_cb_segment(b, start_ms + off_ms, end_ms);
        for (size_t k = 0; s && k < n; k++) {
            unsigned char c = (unsigned char)s[k];

            if (c == '\n')
                b->pending_nl = 1;
            else if (c == ' ' || c == '\t')
                b->pending_sp = 1;
            else if (c >= 0x20 && c != 0x7f)
                vt_cap_cb_emit(b, s + k, 1);
        }
    }
}

/* buf (normalized input) as JSON into *root; the error quotes the parser's one line. */
static int j3_load(const char *buf, const char *name, json_t **root, char *err, size_t errlen)
{
    json_error_t jerr;
    size_t fixed_len;
    char *fixed = vt_json_repair(buf, strlen(buf), &fixed_len), *msg;
    int rc;

    *root = json_loadb(fixed, fixed_len, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &jerr);
    free(fixed);
    if (*root)
        return 0;
    msg = vt_utf8_clean(jerr.text); /* it may quote the input: one line */
    for (char *q = msg; *q; q++)
        if (*q == '\n' || *q == '\t')
            *q = ' ';
    rc = vt_err(err, errlen, VT_EINVAL, "%s: line %d: not JSON: %s", name, jerr.line, msg);
    free(msg);
    return rc;
}

/* The events with text and a start into *ev (*n_ev of them), sorted by start. */
static int j3_events(const json_t *events, const char *name, struct j3_event **ev, size_t *n_ev,
                     char *err, size_t errlen)
{
    size_t cap_ev = 0, i;
    json_t *e;

    json_array_foreach(events, i, e)
    {
        const json_t *segs = json_object_get(e, "segs");
        int64_t start_ms, dur_ms = -1;

        if (!json_is_array(segs) || !j3_has_text(segs) ||
            j3_ms(json_object_get(e, "tStartMs"), &start_ms))
            continue;
        if (json_object_get(e, "dDurationMs") && j3_ms(json_object_get(e, "dDurationMs"), &dur_ms))
            continue; /* a negative or absurd duration: like a cue that ends before it starts */
        if (*n_ev == VT_CAPTIONS_MAX_CUES)
            return vt_err(err, errlen, VT_EINVAL, "%s: more than %d cues", name,
                          VT_CAPTIONS_MAX_CUES);
        vt_grow((void **)ev, &cap_ev, *n_ev + 1, sizeof(**ev));
        (*ev)[(*n_ev)++] = (struct j3_event){start_ms, dur_ms, i, segs};
    }
    if (*n_ev)
        qsort(*ev, *n_ev, sizeof(**ev), cmp_j3_event);
    return 0;
}

/* next_ms[i]: the start of the first event starting after event i, or -1. Caller frees. */
static int64_t *j3_next_starts(const struct j3_event *ev, size_t n_ev)
{
    int64_t *next_ms = vt_xcalloc(n_ev + 1, sizeof(*next_ms));

    next_ms[n_ev] = -1;
    for (size_t i = n_ev; i-- > 0;)
        next_ms[i] = i + 1 < n_ev && ev[i + 1].start_ms > ev[i].start_ms ? ev[i + 1].start_ms
                                                                         : next_ms[i + 1];
    return next_ms;
}

/* The cue of event ev, from its start to end_ms, appended to out unless it has no text;
 * *n_words counts the timed words so far. */
static int j3_add_cue(struct vt_transcript *out, size_t *cap_cues, size_t *n_words,
                      const struct j3_event *ev, int64_t end_ms, const char *name, char *err,
                      size_t errlen)
{
    struct cue_builder b = {0};
    struct vt_cue c = {0};
    int rc = 0;

    vt_grow((void **)&b.seg_ms, &b.cap_seg, 1, sizeof(int64_t));
    b.seg_ms[b.n_seg++] = ev->start_ms;
    j3_text(&b, ev->segs, ev->start_ms, end_ms);
    if (b.text.len && b.n_seg > 1 && *n_words + b.n_word_seg > VT_CAPTIONS_MAX_WORDS) {
        rc = vt_err(err, errlen, VT_EINVAL, "%s: more than %d timed words", name,
                    VT_CAPTIONS_MAX_WORDS);
    } else if (b.text.len) {
        if (b.n_seg > 1) {
            *n_words += b.n_word_seg;
            vt_cap_cb_words(&b, end_ms, &c);
        }
        c.start_s = (double)ev->start_ms / 1000;
        c.end_s = (double)end_ms / 1000;
        c.text = vt_sb_detach(&b.text);
        vt_grow((void **)&out->cues, cap_cues, out->n_cues + 1, sizeof(c));
        out->cues[out->n_cues++] = c;
    }
    vt_sb_release(&b.text);
    free(b.word_seg);
    free(b.seg_ms);
    return rc;
}

/*
 * Parse buf (normalized input) as json3. Each event with text is one cue from tStartMs for
 * dDurationMs (without one, until the next event, at most STREAM_CUE_DEFAULT_MS), clipped
 * to end where the next later event starts: automatic captions keep a line on screen while
 * the next one is being spoken, and search wants each word in one cue.
 */
int vt_cap_parse_json3(const char *buf, const char *name, struct vt_transcript *out, char *err,
                       size_t errlen)
{
    struct j3_event *ev = NULL;
    int64_t *next_ms = NULL;
    size_t n_ev = 0, cap_cues = 0, n_words = 0;
    json_t *root, *events;
    int rc;

    rc = j3_load(buf, name, &root, err, errlen);
    if (rc)
        return rc;
    events = json_object_get(root, "events");
    if (!json_is_array(events)) {
        rc = vt_err(err, errlen, VT_EINVAL, "%s: no \"events\" array (not json3 captions)", name);
        goto out;
    }
    rc = j3_events(events, name, &ev, &n_ev, err, errlen);
    if (rc)
        goto out;
    next_ms = j3_next_starts(ev, n_ev);
    for (size_t i = 0; i < n_ev; i++) {
        int64_t end_ms =
            ev[i].start_ms + (ev[i].dur_ms >= 0 ? ev[i].dur_ms : STREAM_CUE_DEFAULT_MS);

        if (next_ms[i] >= 0 && next_ms[i] < end_ms)
            end_ms = next_ms[i];
        rc = j3_add_cue(out, &cap_cues, &n_words, &ev[i], end_ms, name, err, errlen);
        if (rc)
            goto out;
    }
    if (!out->n_cues) {
        rc = vt_err(err, errlen, VT_SKIP, "%s%sno cues in captions", *name == '\'' ? name : "",
                    *name == '\'' ? ": " : "");
        goto out;
    }
    vt_cap_sort_cues(out);
    snprintf(out->model, sizeof(out->model), "captions:json3");
out:
    if (rc)
        vt_transcript_release(out);
    free(next_ms);
    free(ev);
    json_decref(root);
    return rc;
}
