/*
 * Form bodies (application/x-www-form-urlencoded) for the manage routes of the web server.
 * What the decoded value may hold is narrower than the encoding: no control character
 * (NUL included) ever reaches a path, a URL or a stage name, and a value is capped by
 * the caller's buffer rather than cut short.
 */
#include "web/web_form.h"

#include <string.h>

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The value [p, stop) decoded into out: 1, or -1 when malformed or too long. */
static int decode(const char *p, const char *stop, char *out, size_t n)
{
    size_t w = 0;

    for (const char *r = p; r < stop; r++) {
        int ch = (unsigned char)*r;

        if (ch == '+') {
            ch = ' ';
        } else if (ch == '%') {
            if (stop - r < 3 || hexval(r[1]) < 0 || hexval(r[2]) < 0)
                return -1;
            ch = hexval(r[1]) * 16 + hexval(r[2]);
            r += 2;
        }
        if (ch < 0x20 || ch == 0x7f || w + 1 >= n)
            return -1;
        out[w++] = (char)ch;
    }
    out[w] = '\0';
    return 1;
}

int web_form_get(const char *body, size_t len, const char *name, char *out, size_t n)
{
    const char *p = body ? body : "", *end = p + (body ? len : 0);
    size_t klen = strlen(name);

    out[0] = '\0';
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp ? amp : end;

        /* names are ours and plain: compared as they are, not decoded */
        if ((size_t)(stop - p) > klen && !memcmp(p, name, klen) && p[klen] == '=') {
            int rc = decode(p + klen + 1, stop, out, n);

            if (rc < 0)
                out[0] = '\0';
            return rc;
        }
        p = stop + 1;
    }
    return 0;
}
