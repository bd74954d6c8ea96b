/*
 * libFuzzer target for the web server's framing checks (src/web/web_frame.c), which judge
 * the header fields of every request from anyone. The input is a request head: the first
 * byte says HTTP/1.0 or 1.1 and the size limit, then lines "name:value" (split at the
 * first ':'; a line without one is a name alone) as libmicrohttpd hands them over. The
 * verdict is recounted here on its own: a request is accepted only if it has exactly one
 * Host (HTTP/1.1) or at most one, at most one way to tell its length, a Content-Length of
 * digits within the limit, only "chunked" as a coding, and names that are tokens.
 * fuzz-sources: src/web/web_frame.c
 * fuzz-pkgs: jansson
 */
#include "../../src/web/web_frame.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct recount {
    unsigned host, length, coding;
    int bad, chunked, long_body;
};

static int token(const char *s, size_t n)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c <= ' ' || c >= 0x7f || strchr("\"(),/:;<=>?@[\\]{}", c))
            return 0;
    }
    return 1;
}

static void recount_field(struct recount *r, const char *name, size_t nl, const char *v, size_t vl,
                          uint64_t max_body)
{
    if (!token(name, nl))
        r->bad = 1;
    for (size_t i = 0; i < vl; i++)
        if (((unsigned char)v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f)
            r->bad = 1;
    if (nl == 4 && !strncasecmp(name, "host", 4)) {
        r->host++;
        for (size_t i = 0; i < vl; i++)
            if (v[i] == ' ' || v[i] == '/' || v[i] == '@' || v[i] == '?' || v[i] == '#' ||
                (unsigned char)v[i] >= 0x7f)
                r->bad = 1;
    } else if (nl == 14 && !strncasecmp(name, "content-length", 14)) {
        uint64_t n = 0;

        r->length++;
        if (!vl || vl > 18)
            r->bad = 1;
        for (size_t i = 0; i < vl && i < 18; i++) {
            if (v[i] < '0' || v[i] > '9')
                r->bad = 1;
            else
                n = n * 10 + (uint64_t)(v[i] - '0');
        }
        r->long_body = n > max_body;
    } else if (nl == 17 && !strncasecmp(name, "transfer-encoding", 17)) {
        r->coding++;
        r->chunked = vl == 7 && !strncasecmp(v, "chunked", 7);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct web_frame f;
    struct recount r = {0};
    const char *p = (const char *)data + 1, *end = (const char *)data + size, *why = "";
    int http11, status, ok;
    uint64_t max_body;

    if (!size)
        return 0;
    http11 = data[0] & 1;
    max_body = (uint64_t)(data[0] >> 1) * 1000;
    web_frame_init(&f);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        const char *colon = memchr(p, ':', (size_t)(line_end - p));
        size_t name_len = (size_t)((colon ? colon : line_end) - p);
        const char *value = colon ? colon + 1 : NULL;
        size_t value_len = colon ? (size_t)(line_end - value) : 0;

        web_frame_field(&f, p, name_len, value, value_len);
        recount_field(&r, p, name_len, value ? value : "", value_len, max_body);
        p = line_end + 1;
    }
    status = web_frame_verdict(&f, http11, max_body, &why);
    if (status != 0 && status != 400 && status != 413 && status != 501)
        abort();
    if ((status == 0) != (why == NULL))
        abort();
    ok = !r.bad && r.host <= 1 && (!http11 || r.host == 1) && r.length <= 1 && r.coding <= 1 &&
         !(r.length && r.coding) && (!r.coding || (http11 && r.chunked)) && !r.long_body;
    if (status == 0 && !ok)
        abort(); /* accepted what the recount refuses */
    if (status == 413 && (!r.long_body || r.coding))
        abort();
    if (status == 501 && (r.chunked || !r.coding || r.length))
        abort();
    return 0;
}
