/*
 * Strict framing of the requests the web server takes (RFC 9112): what the header fields
 * say about where a request ends, checked before it is answered. libmicrohttpd reads the
 * first Content-Length of two, prefers Transfer-Encoding to Content-Length and keeps a
 * field named "Content-Length " (space before the colon) as another field: each lets a
 * client hide a second request in a body that a proxy in front frames otherwise.
 */
#include "web/web_frame.h"

#include <string.h>
#include <strings.h>

enum {
    LENGTH_DIGITS_MAX = 18, /* below 2^63: no overflow, and far past any body we take */
};

/* RFC 9110 5.6.2: tchar */
static int is_tchar(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* RFC 3986's reg-name, IP-literal and port characters: what a Host value may hold. */
static int is_host_char(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr("-._~!$&'()*+,;=:[]%", ch));
}

static int name_is(const char *name, size_t len, const char *want)
{
    return len == strlen(want) && !strncasecmp(name, want, len);
}

void web_frame_init(struct web_frame *f)
{
    memset(f, 0, sizeof(*f));
}

static void frame_length(struct web_frame *f, const char *v, size_t len)
{
    uint64_t n = 0;

    f->n_length++;
    if (!len || len > LENGTH_DIGITS_MAX) {
        f->bad_length = 1;
        return;
    }
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') {
            f->bad_length = 1;
            return;
        }
        n = n * 10 + (uint64_t)(v[i] - '0');
    }
    f->length = n;
}

void web_frame_field(struct web_frame *f, const char *name, size_t name_len, const char *value,
                     size_t value_len)
{
    if (!value)
        value_len = 0;
    if (!name_len)
        f->bad_name = 1;
    for (size_t i = 0; i < name_len; i++)
        if (!is_tchar((unsigned char)name[i]))
            f->bad_name = 1;
    for (size_t i = 0; i < value_len; i++) {
        unsigned char ch = (unsigned char)value[i];

        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            f->bad_value = 1;
    }
    if (name_is(name, name_len, "Content-Length")) {
        frame_length(f, value, value_len);
    } else if (name_is(name, name_len, "Transfer-Encoding")) {
        f->n_coding++;
        f->chunked = value_len == 7 && !strncasecmp(value, "chunked", 7);
    } else if (name_is(name, name_len, "Host")) {
        f->n_host++;
        for (size_t i = 0; i < value_len; i++)
            if (!is_host_char((unsigned char)value[i]))
                f->bad_host = 1;
    }
}

int web_frame_verdict(const struct web_frame *f, int http11, uint64_t max_body, const char **why)
{
    *why = NULL;
    if (f->bad_name)
        *why = "a header field name is not a token";
    else if (f->bad_value)
        *why = "a header field value holds a control character";
    else if (f->n_host > 1)
        *why = "more than one Host header";
    else if (http11 && !f->n_host)
        *why = "no Host header";
    else if (f->bad_host)
        *why = "the Host header is not a host name";
    else if (f->n_length > 1)
        *why = "more than one Content-Length header";
    else if (f->n_length && f->n_coding)
        *why = "both Content-Length and Transfer-Encoding";
    else if (f->n_coding && !http11)
        *why = "Transfer-Encoding in an HTTP/1.0 request";
    else if (f->n_coding > 1)
        *why = "more than one Transfer-Encoding header";
    else if (f->bad_length)
        *why = "the Content-Length is not a number";
    if (*why)
        return 400;
    if (f->n_coding && !f->chunked) {
        *why = "a transfer coding other than chunked";
        return 501;
    }
    if (f->n_length && f->length > max_body) {
        *why = "the request body is too large";
        return 413;
    }
    return 0;
}
