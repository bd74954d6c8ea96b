/*
 * libFuzzer target for the web server's form parser (src/web/web_form.c), which reads the
 * bodies of the manage routes from anyone. Any bytes as a body, for each field the routes
 * read: the answer is -1, 0 or 1, the value is NUL-terminated within the buffer and holds
 * no control character; and a value made from the input, percent-encoded as a browser
 * would, decodes back to itself, whatever fields come before it.
 * fuzz-sources: src/web/web_form.c
 * fuzz-pkgs: jansson
 */
#include "../../src/web/web_form.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_value(int rc, const char *out, size_t n)
{
    size_t len = strnlen(out, n);

    if (rc < -1 || rc > 1 || len == n)
        abort();
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
            abort();
    if (rc != 1 && len)
        abort(); /* absent or malformed: an empty value, never a part of one */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"csrf", "token", "source", "stage", "confirm"};
    static const char hex[] = "0123456789ABCDEF";
    char out[80], big[4200], *body;
    size_t n = 0, want = 0;
    char *value;

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int rc = web_form_get((const char *)data, size, names[i], out, sizeof(out));

        check_value(rc, out, sizeof(out));
        check_value(web_form_get((const char *)data, size, names[i], big, sizeof(big)), big,
                    sizeof(big));
    }

    /* round trip: the input's printable bytes as the value of "v", after the input itself
     * made harmless as a field named "x" (its '&' kept out: they would start fields) */
    body = malloc(size * 4 + 16);
    value = malloc(size + 1);
    if (!body || !value)
        abort();
    memcpy(body, "x=", 2);
    n = 2;
    for (size_t i = 0; i < size; i++)
        if (data[i] != '&')
            body[n++] = (char)data[i];
    memcpy(body + n, "&v=", 3);
    n += 3;
    for (size_t i = 0; i < size; i++) {
        unsigned char ch = data[i];

        if (ch < 0x20 || ch == 0x7f)
            continue;
        value[want++] = (char)ch;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) {
            body[n++] = (char)ch;
        } else if (ch == ' ') {
            body[n++] = '+';
        } else {
            body[n++] = '%';
            body[n++] = hex[ch >> 4];
            body[n++] = hex[ch & 15];
        }
    }
    value[want] = '\0';
    {
        char *got = malloc(want + 1);
        int rc;

        if (!got)
            abort();
        rc = web_form_get(body, n, "v", got, want + 1);
        if (rc != 1 || strcmp(got, value))
            abort();
        /* one byte short: refused, never cut */
        if (want && web_form_get(body, n, "v", got, want) != -1)
            abort();
        free(got);
    }
    free(body);
    free(value);
    return 0;
}
