/*
 * The server's error lines on stderr. The web is below the CLI and may not use it, so it
 * writes its own lines, byte for byte the CLI's: "vidtheque: " and the message, every
 * control character made harmless (a title or a tool's message can hold escapes), in one
 * write so that the request threads never mix their lines.
 */
#include "base/util.h"
#include "web/web_http.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void web_log_error(const char *fmt, ...)
{
    static const char prefix[] = "vidtheque: ";
    char *msg = NULL, *line, buf[8];
    size_t n, cap;
    va_list ap;

    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    /* at most 3 bytes (U+FFFD) for each byte of the message */
    cap = sizeof(prefix) + 3 * (msg ? strlen(msg) : 0) + 24;
    line = malloc(cap);
    if (!line)
        abort();
    n = (size_t)snprintf(line, cap, "%s", prefix);
    for (const char *p = msg ? msg : "(out of memory)"; *p;) {
        const char *c = vt_safe_char(&p, buf);
        size_t k = strlen(c);

        memcpy(line + n, c, k);
        n += k;
    }
    line[n++] = '\n';
    line[n] = '\0';
    fputs(line, stderr);
    free(line);
    free(msg);
}

void web_on_log(void *user, int level, const char *msg)
{
    if (level <= VT_LOG_WARN)
        web_log_error("%s", msg);
}
