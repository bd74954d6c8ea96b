/*
 * Small helpers every module of the library uses: aborting allocation wrappers,
 * a growable string buffer, bounded formatting, wall and monotonic clocks and the
 * error-message convention (the innermost function that knows the cause writes
 * the message into a caller-supplied buffer and returns a negative VT_E* code).
 */
#ifndef VT_UTIL_H
#define VT_UTIL_H

#include "vidtheque.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define VT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation wrappers: abort with a message on out-of-memory, never return NULL. */
void *vt_xmalloc(size_t n);
void *vt_xcalloc(size_t nmemb, size_t size);
void *vt_xrealloc(void *p, size_t n);
char *vt_xstrdup(const char *s);
char *vt_xstrdup_or_null(const char *s); /* NULL stays NULL */
char *vt_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow *p (holding *cap elements of size elem) so that it holds at least need. */
void vt_grow(void **p, size_t *cap, size_t need, size_t elem);

/* The string buffer (struct vt_sb) and the UTF-8 decoder (vt_utf8_decode) are declared
 * in vidtheque.h: the front-ends use them too. */

/* snprintf into err (if non-NULL) and return code. For `return vt_err(...)`. */
int vt_err(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

double vt_monotonic_s(void);
/* UTC time as "YYYY-MM-DDTHH:MM:SSZ" into buf (at least 21 bytes). */
void vt_utc_iso(char *buf, size_t n, double epoch_s);
double vt_wall_s(void);

/* Strict number parsing: whole string must be a number in range; 0 on success. */
int vt_parse_long(const char *s, long min, long max, long *out);

/* s seconds as "1:02:03" or "2:03" (what the CLI and the web pages show). */
void vt_fmt_duration(char *buf, size_t n, double s);

/*
 * What to print on a terminal for the character at *s: itself, " " for a control
 * character (C0, DEL, C1), a bidirectional override or a line separator, or U+FFFD for
 * invalid UTF-8 (buf may hold it); advances *s past it. Text a video or a client controls
 * reaches a terminal or a log line only through this.
 */
const char *vt_safe_char(const char **s, char buf[8]);

/* Directory helpers. mkdir -p with mode 0755; remove a directory tree (no symlink following). */
int vt_mkdir_p(const char *path, char *err, size_t errlen);
int vt_rm_rf(const char *path);

/* Write a file atomically: tmp file in the same directory, then rename. */
int vt_write_file_atomic(const char *path, const void *data, size_t n, char *err, size_t errlen);
/* The same with the file's mode (e.g. 0600 for one holding a secret), set at its creation. */
int vt_write_file_atomic_mode(const char *path, const void *data, size_t n, unsigned mode,
                              char *err, size_t errlen);

/* Read the regular file path (a symlink is refused) if it holds at most max bytes;
 * *data is NUL-terminated after *len bytes and caller-freed. what names the file in
 * the message when it is too large ("'PATH': WHAT too large (N bytes, limit M MiB)"). */
int vt_read_file_capped(const char *path, const char *what, size_t max, char **data, size_t *len,
                        char *err, size_t errlen);

/* 64-bit FNV-1a, used for content keys. */
uint64_t vt_fnv1a64(uint64_t h, const void *data, size_t n);
#define VT_FNV64_INIT 0xcbf29ce484222325ULL

/* Encode 64 bits as 11 URL-safe base64 characters (+NUL). */
void vt_id_encode(uint64_t v, char out[12]);

/* Log through the library's callback (never stdout). */
void vt_log(struct vt_library *lib, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copy of s with every invalid UTF-8 sequence and control character other than
 * tab and newline replaced by U+FFFD. Caller frees. */
char *vt_utf8_clean(const char *s);

/*
 * Copy of the len bytes of JSON text at data, repaired so that a strict parser (jansson)
 * does not refuse a whole document for one broken string: invalid UTF-8 sequences become
 * U+FFFD and \u escapes of unpaired surrogates (which Python's json module writes) become
 * \ufffd. Everything else, NUL bytes included, is copied as it is. Caller frees; *out_len
 * gets the copy's length (a NUL follows it).
 */
char *vt_json_repair(const char *data, size_t len, size_t *out_len);
#endif
