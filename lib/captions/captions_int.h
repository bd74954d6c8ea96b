/*
 * What the files of the captions module share, and nothing outside it includes (as
 * SQLite's btreeInt.h to btree.h): the time bounds, the character classes of the readers,
 * the cue builder that turns raw cue text into a cue's text and timed words, the cue
 * collector the SubRip and WebVTT readers feed, and the functions each captions_*.c file
 * offers the others. Calls go one way: captions.c (the entry points) to the readers
 * (captions_srt.c, captions_vtt.c, captions_json3.c) and captions_stream.c, to
 * captions_cue.c, to captions_encoding.c. The public interface is captions.h.
 */
#ifndef VT_CAPTIONS_INT_H
#define VT_CAPTIONS_INT_H

#include "text/transcript.h"
#include "base/util.h"

#include <stddef.h>
#include <stdint.h>

/* Timestamps beyond this many hours are refused by the reader and clamped by the writers. */
#define MAX_HOURS   99999
#define MAX_TIME_MS ((int64_t)(MAX_HOURS + 1) * 3600000 - 1)
/* A subtitle stream's cue without a duration lasts until the next cue, at most this. */
#define STREAM_CUE_DEFAULT_MS 5000

static inline int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static inline int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline int is_blank(int c)
{
    return c == ' ' || c == '\t';
}

/* Building one cue's text and words from its raw lines. */
struct cue_builder {
    struct vt_sb text;
    size_t *word_seg; /* for each word of text, the timing segment it starts in */
    size_t n_word_seg, cap_word_seg;
    int64_t *seg_ms; /* segment k starts at seg_ms[k]; segment 0 at the cue's start */
    size_t n_seg, cap_seg;
    int pending_sp, pending_nl;
};

/* Collecting the cues of a SubRip or WebVTT file, line by line. */
struct cap_parser {
    struct vt_transcript *out;
    size_t cap_cues, n_words;
    struct vt_sb raw;     /* the current cue's lines, '\n'-separated */
    size_t last_line_off; /* where the last of them starts */
    int in_cue;
    int64_t start_ms, end_ms;
    long bad_line; /* first line with an unreadable timing, 0 if none */
    char bad_msg[128];
    int full; /* 1: too many cues, 2: too many words */
    /* the reader's cue text reader (WebVTT's tokenizer, SubRip's markup rules), set by
     * vt_cap_parse_vtt or vt_cap_parse_srt: the collector calls it, knowing no reader */
    void (*cue_text)(struct cue_builder *b, const char *s, const char *end, int64_t end_ms);
};

/* captions_cue.c: lexical helpers, timestamps, the cue builder and the cue collector */
size_t vt_cap_tag_scan(const char *s, size_t n, int gt_later);
int64_t vt_cap_parse_ts(const char **p, const char *end);
char *vt_cap_tidy_text(const char *s);
void vt_cap_sort_cues(struct vt_transcript *t);
void vt_cap_cb_emit(struct cue_builder *b, const char *s, size_t n);
void vt_cap_cb_segment(struct cue_builder *b, int64_t t_ms, int64_t end_ms);
void vt_cap_cb_byte(struct cue_builder *b, const char *s);
void vt_cap_cb_codepoint(struct cue_builder *b, uint32_t cp);
void vt_cap_cb_words(struct cue_builder *b, int64_t end_ms, struct vt_cue *c);
void vt_cap_finish_cue(struct cap_parser *p);
void vt_cap_add_raw_line(struct cap_parser *p, const char *s, const char *le);
void vt_cap_drop_number_line(struct cap_parser *p);
void vt_cap_note_bad_line(struct cap_parser *p, long lineno, const char *what, const char *s,
                          const char *le);

/* captions_encoding.c: decoding input, character references */
size_t vt_cap_utf8_put(uint32_t cp, char *buf);
size_t vt_cap_html_charref(const char *s, size_t n, uint32_t cp[2], int *ncp, int need_semicolon);
char *vt_cap_normalize_input(const char *data, size_t len, int unicode_only, char *enc,
                             size_t enc_len, size_t *out_len);

/* captions_srt.c */
int vt_cap_timing_like(const char *s, const char *le);
void vt_cap_parse_srt(struct cap_parser *p, const char *buf, size_t len, int *any_timing,
                      long *first_content);

/* captions_vtt.c */
void vt_cap_parse_vtt(struct cap_parser *p, const char *buf, size_t len);

/* captions_json3.c */
int vt_cap_parse_json3(const char *buf, const char *name, struct vt_transcript *out, char *err,
                       size_t errlen);

#endif
