/*
 * Strict HTTP/1.1 framing (RFC 9112 sections 3.2, 6.1 to 6.3), checked on the header
 * fields libmicrohttpd has parsed, before a request is answered or its body read: a
 * request whose length could be read two ways (two Content-Length fields, Content-Length
 * with Transfer-Encoding, a field name a proxy would read otherwise) is refused, so no
 * bytes of it are ever taken for a next request. Kept without libmicrohttpd, so that
 * tests/fuzz/fuzz_frame.c can drive it.
 */
#ifndef VT_WEB_FRAME_H
#define VT_WEB_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* What the fields of one request said about its framing, fed one field at a time. */
struct web_frame {
    unsigned n_length, n_coding, n_host;
    uint64_t length; /* the Content-Length, when there is one and it is valid */
    int bad_length;  /* a Content-Length that is not 1 to 18 digits */
    int chunked;     /* the one Transfer-Encoding is exactly "chunked" */
    int bad_name;    /* a field name that is not a token (RFC 9110 5.1) */
    int bad_value;   /* a field value holding a control character other than tab */
    int bad_host;    /* a Host value with a byte no host name or address holds */
};

void web_frame_init(struct web_frame *f);
/* One header field as parsed: name and value (value NULL for none), lengths given. */
void web_frame_field(struct web_frame *f, const char *name, size_t name_len, const char *value,
                     size_t value_len);
/*
 * The verdict once every field is in: 0 when the request is well framed, else the HTTP
 * status to refuse it with (400, 413 for a declared length over max_body, 501 for a
 * transfer coding other than chunked), with *why a static sentence saying what was
 * wrong. http11: the request line says HTTP/1.1 (Host required, Transfer-Encoding
 * allowed); the connection must be closed after any refusal.
 */
int web_frame_verdict(const struct web_frame *f, int http11, uint64_t max_body, const char **why);

#endif
