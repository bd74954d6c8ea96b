/*
 * Captions: transcripts that come with the video instead of from speech recognition.
 * A sidecar file beside the media (NAME.vtt, NAME.srt, NAME.json3, NAME.<lang>.vtt ...)
 * or a text subtitle stream inside it is read into a struct vt_transcript, with word
 * timings when the format carries them (WebVTT timestamp tags, YouTube json3 offsets); and
 * a transcript is
 * written back out as WebVTT, SubRip or plain text. Caption files are untrusted input:
 * sizes and cue counts are capped, legacy encodings are detected and converted, text is
 * repaired to valid UTF-8 and cleaned of markup.
 */
#ifndef VT_CAPTIONS_H
#define VT_CAPTIONS_H

#include "model/stage.h"
#include "text/transcript.h"

#include <stddef.h>

struct vt_sb;

/* Larger caption files are refused: real ones are well under 1 MiB per hour. */
#define VT_CAPTIONS_MAX_BYTES (16u << 20)
/* More cues than this is refused: a 24 h video subtitled every second has 86400. */
#define VT_CAPTIONS_MAX_CUES 200000
/* More words (from timestamp tags) than this in one file is refused. */
#define VT_CAPTIONS_MAX_WORDS 2000000

/*
 * Parse len bytes of SubRip, WebVTT or YouTube's json3 (data need not be NUL-terminated and
 * may hold NUL bytes, a BOM, CRLF or lone CR line ends, invalid UTF-8).
 * format is "srt", "vtt", "json3" or NULL to detect: content starting with '{' (after a BOM
 * and white space) is json3; a "WEBVTT" signature always means WebVTT.
 *
 * The encoding: a BOM (UTF-8, UTF-16LE/BE), else UTF-16 without a BOM (told by its 0
 * bytes), else UTF-8 when the data is valid UTF-8 (a few bad bytes among many multi-byte
 * sequences are U+FFFD), else what libuchardet finds (Windows-1252, ISO-8859-1/-15,
 * GB18030 for GB2312/GBK, Shift-JIS, Big5 ...), converted with iconv. json3 is always
 * Unicode. NUL bytes become U+FFFD.
 *
 * *out is overwritten (its previous contents are not freed) and on success holds the cues
 * sorted by start, none empty, each end_s >= start_s; model is "captions:srt" or
 * "captions:vtt", followed by " (<encoding>)" when the file was not UTF-8, e.g.
 * "captions:srt (windows-1252)", "captions:vtt (utf-16le)". Cue text has its markup
 * removed, character references decoded (&nbsp; becomes a space, &lrm; and &rlm; nothing),
 * spaces collapsed, and its non-empty lines joined with '\n'.
 *
 * WebVTT is read by the W3C parser algorithm (https://w3c.github.io/webvtt/): the file must
 * start with a WEBVTT signature (VT_EINVAL "vtt: line 1: no WEBVTT signature" otherwise);
 * timestamps are [hh:]mm:ss.ttt exactly (two-digit minutes and seconds, three-digit
 * fraction, '.' only); white space in timing lines includes form feeds; cue settings are
 * not read and never invalidate a cue ("00:01.000 --> 00:02.000line:40%" is a cue); a cue
 * that ends before it starts is kept, ending where it starts; a line holding "-->" ends a
 * cue's text; every tag ('<' to the next '>' or the end of the cue, known or not, closed or
 * not) is removed; character references are HTML's full named list (&copy;, &notin;, the
 * legacy ones such as &eacute without ';') and numeric ones.
 *
 * SubRip is read as FFmpeg and pysrt read it: an optional number line, a timing line
 * ("HH:MM:SS,mmm --> HH:MM:SS,mmm", '.' accepted, up to 5-digit hours, anything after the
 * end time) and text up to the next timing line, blank lines within it kept; tags such as
 * <i>, <font ...>, <c.x>, <v Name> and ASS overrides ({\an8}) removed; character references
 * ending with ';' decoded. Cues with unreadable timings or end before start are dropped.
 *
 * When a cue holds WebVTT timestamp tags (<00:00:01.234>) its words[] get
 * times: the time from one tag to the next is spread evenly over the words that start in
 * between, text before the first tag starts at the cue's start, and each word lasts until
 * the next one starts (the last until the cue's end). Otherwise
 * words is NULL and n_words 0.
 *
 * json3 ({"events":[{"tStartMs":1000,"dDurationMs":2500,"segs":[{"utf8":"hi"},
 * {"utf8":" you","tOffsetMs":480}]}, ...]}): one cue per event with text, its segs joined
 * ('\n' a line break, spaces collapsed, no markup to remove), from tStartMs for dDurationMs
 * (without one, until the next event and at most 5 s) and clipped to end where the next
 * later event starts, so that cues do not overlap (events with the same start may). When
 * segs carry tOffsetMs, each starts at tStartMs + tOffsetMs and its words share the time
 * until the next seg evenly, as between WebVTT tags; otherwise words is NULL. model is
 * "captions:json3". Messages start with "json3:"; JSON that is not json3 is VT_EINVAL.
 *
 * Returns 0 (the caller releases *out with vt_transcript_release); VT_SKIP with "no cues
 * in captions" when the file holds no cue; VT_EINVAL with "<format>: line N: ..." when
 * nothing is readable, or when the input is larger than VT_CAPTIONS_MAX_BYTES or holds
 * more than VT_CAPTIONS_MAX_CUES cues. On every non-zero return *out is empty.
 */
int vt_captions_parse(const char *data, size_t len, const char *format, struct vt_transcript *out,
                      char *err, size_t errlen);

/*
 * Read and parse the caption file at path (a regular file, not followed if a symlink, at
 * most VT_CAPTIONS_MAX_BYTES). The format comes from the extension (.srt, .vtt, .json3) or,
 * when the content says WEBVTT or the extension is none of them, from the content. model
 * becomes "captions:sidecar srt", "... vtt" or "... json3", with " (<lang>)" when the file
 * name is NAME.<lang>.ext and the encoding when it is not UTF-8: "captions:sidecar srt (fr,
 * windows-1252)", "captions:sidecar srt (gb18030)". Returns like vt_captions_parse, messages
 * start with the quoted path.
 */
int vt_captions_load_file(const char *path, struct vt_transcript *out, char *err, size_t errlen);

/*
 * Look for a caption file beside media_path: NAME.vtt, then NAME.srt, then NAME.json3, then
 * NAME.<lang>.vtt / .srt / .json3 with English ("en", "en-US", "eng" ...) first, then other
 * languages in name order; lang is 2-3 letters with an optional "-XX" or "_XX" region.
 * Only regular files count (symlinks, directories and devices are ignored). Returns 1 and
 * sets *sidecar_path (caller frees), or 0 with *sidecar_path NULL when there is none.
 */
int vt_captions_find_sidecar(const char *media_path, char **sidecar_path);
/* Every caption file beside media_path that vt_captions_find_sidecar may pick (the same
 * names, regular files only), in directory order: fn gets each one's file name (not its
 * path); a non-zero return stops and is returned. 0 when all were seen (or none). */
int vt_captions_each_sidecar(const char *media_path, int (*fn)(void *user, const char *name),
                             void *user);

/*
 * Read the first text subtitle stream of media_path (subrip, mov_text, webvtt, ass, ssa,
 * text ...) through vt_media_open and FFmpeg's subtitle decoders. Times are relative to
 * the file's start; cues without a duration end at the next cue (at most 5 s later).
 * model is "captions:embedded <codec>" plus " (<lang>)" when the stream has a language.
 * Returns 0 (caller releases *out), VT_SKIP with "no text subtitle stream" (bitmap
 * subtitles are named in the reason) or "no cues in captions", or a negative VT_E* code.
 */
int vt_captions_from_stream(const char *media_path, struct vt_transcript *out, char *err,
                            size_t errlen);

/*
 * What the stt stage calls before recognition: a sidecar file if one is found and
 * readable, else the embedded text subtitle stream. Returns 0 with *out filled (caller
 * releases), or VT_SKIP with the reasons in err ("no captions: ..."), e.g. when the
 * sidecar is malformed and there is no subtitle stream; recognition then runs. Returns a
 * negative code only when the media file cannot be opened at all.
 */
int vt_captions_import(const char *media_path, struct vt_transcript *out, char *err, size_t errlen);

/*
 * Append t to *out as format "vtt" (WebVTT: "WEBVTT" header, HH:MM:SS.mmm timings, & < >
 * escaped, a timestamp tag before every word when the cue's words match its text, so that
 * vt_captions_parse reads the words back), "srt" (SubRip: numbered cues, HH:MM:SS,mmm, no
 * markup, text as it is: "a < b & c" stays so; only a '<' that would read as a tag, an '&'
 * that would read as a character reference, "{\" and the "-->" of a line that would read
 * as a timing line are written as references) or "txt" (each cue's text on one line, its
 * line break turned into a space, no times). Text is sanitised so that no cue can break the
 * format: no blank line, no control characters. Empty cues are left out. Returns 0, or
 * VT_EINVAL for an unknown format (nothing appended).
 */
int vt_captions_write(const struct vt_transcript *t, const char *format, struct vt_sb *out);

#endif
