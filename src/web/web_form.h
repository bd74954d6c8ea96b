/*
 * The one parser of form bodies the web server has (web_form.c): fields of an
 * application/x-www-form-urlencoded body, as the browser sends the manage forms. Kept on
 * its own, without libmicrohttpd, so that tests/fuzz/fuzz_form.c can drive it.
 */
#ifndef VT_WEB_FORM_H
#define VT_WEB_FORM_H

#include <stddef.h>

/*
 * Field name of body (len bytes, not NUL-terminated), '+' and %XX decoded into out (n >= 1
 * bytes, always NUL-terminated): 1, 0 when absent, -1 when malformed (a bad %XX, %00 or
 * another control character, or a value longer than n - 1). The first occurrence counts.
 */
int web_form_get(const char *body, size_t len, const char *name, char *out, size_t n);

#endif
