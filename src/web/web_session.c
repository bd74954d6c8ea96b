/*
 * Who may write: the bearer token of API clients (--token-file, or the one printed at
 * start), and the sign-in sessions of people, kept in memory (a cookie names one; a full
 * table drops the one closest to expiry). Every secret is compared in constant time. A
 * form that writes must also come from a page of this server (web_same_origin) and carry
 * the session's CSRF token (web_write.c checks it).
 */
#include "base/util.h"
#include "web/web_http.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

enum {
    /* sign-in sessions kept in memory; when full, the one closest to expiry goes */
    MAX_SESSIONS = 64,
    SESSION_TTL_S = 12 * 3600,
};

/* the sessions (under lock); id[0] == '\0' is a free slot */
static struct {
    pthread_mutex_t lock;
    struct session {
        char id[65], csrf[65];
        double expires_s; /* monotonic */
    } sessions[MAX_SESSIONS];
} ss;

void web_sessions_init(void)
{
    memset(&ss, 0, sizeof(ss));
    pthread_mutex_init(&ss.lock, NULL);
}

/* a and b equal, in time that depends on their lengths only (the lengths are not secret) */
int web_secret_eq(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    unsigned char diff = 0;

    if (n != m)
        return 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

/* Constant-time comparison: the token's length is not secret, its bytes are. */
int web_token_ok(struct MHD_Connection *c)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *tok = web_opts()->token;

    if (!auth || !tok || strncmp(auth, "Bearer ", 7))
        return 0;
    return web_secret_eq(auth + 7, tok);
}

/* n random bytes as 2n hex digits into out (2n + 1 bytes): 0, or -1 when getrandom fails. */
static int random_hex(char *out, size_t n)
{
    unsigned char raw[32];
    size_t got = 0;

    if (n > sizeof(raw))
        abort();
    while (got < n) {
        ssize_t r = getrandom(raw + got, n - got, 0);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* A new session into id and csrf (65 bytes each): 0, or -1 without randomness. */
int web_session_new(char *id, char *csrf)
{
    struct session *slot = NULL;
    double now = vt_monotonic_s();

    if (random_hex(id, 32) || random_hex(csrf, 32))
        return -1;
    pthread_mutex_lock(&ss.lock);
    for (size_t i = 0; i < MAX_SESSIONS; i++) {
        struct session *s = &ss.sessions[i];

        if (!s->id[0] || s->expires_s <= now) {
            slot = s;
            break;
        }
        if (!slot || s->expires_s < slot->expires_s)
            slot = s; /* full: the one closest to expiry makes room */
    }
    memcpy(slot->id, id, 65);
    memcpy(slot->csrf, csrf, 65);
    slot->expires_s = now + SESSION_TTL_S;
    pthread_mutex_unlock(&ss.lock);
    return 0;
}

/*
 * The request's live session: 1 with its CSRF token in csrf (65 bytes), else 0. Every
 * slot is compared, in constant time, so the time taken says nothing of the cookie.
 */
int web_session_of(struct MHD_Connection *c, char *csrf, int drop)
{
    const char *cookie = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "vt_session");
    double now = vt_monotonic_s();
    int found = 0;

    if (!cookie || strlen(cookie) != 64 || strspn(cookie, "0123456789abcdef") != 64)
        return 0;
    pthread_mutex_lock(&ss.lock);
    for (size_t i = 0; i < MAX_SESSIONS; i++) {
        struct session *s = &ss.sessions[i];

        if (web_secret_eq(s->id, cookie) && s->expires_s > now && !found) {
            found = 1;
            memcpy(csrf, s->csrf, 65);
            if (drop)
                memset(s, 0, sizeof(*s));
        }
    }
    pthread_mutex_unlock(&ss.lock);
    return found;
}

/*
 * The request comes from a page of this server. Sec-Fetch-Site, when the browser sends it,
 * is same-origin; Origin, when sent, is this Host's, except "null": our pages'
 * Referrer-Policy: no-referrer makes a browser send "null" for their own form posts, so
 * "null" passes only when Sec-Fetch-Site vouches for the request. Clients that send
 * neither header (curl, old browsers) pass: the CSRF token still stands in their way.
 */
int web_same_origin(struct MHD_Connection *c)
{
    const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);

    if (site && strcmp(site, "same-origin"))
        return 0;
    if (!origin)
        return 1;
    if (!strcmp(origin, "null"))
        return site != NULL;
    if (!host)
        return 0;
    if (!strncmp(origin, "http://", 7))
        origin += 7;
    else if (!strncmp(origin, "https://", 8))
        origin += 8;
    else
        return 0;
    return !strcasecmp(origin, host);
}

int web_form_body(struct MHD_Connection *c)
{
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");

    return type && !strncasecmp(type, "application/x-www-form-urlencoded", 33) &&
           (!type[33] || type[33] == ';');
}

/*
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page
 * sends it), Path=/. Secure only behind a TLS proxy that says so (X-Forwarded-Proto: https):
 * this server speaks plain HTTP, and a browser drops a Secure cookie set over http (but
 * on localhost), so with Secure always on nobody could sign in to http://HOST:PORT.
 */
void web_session_cookie(struct MHD_Connection *c, const char *id, char *out, size_t n)
{
    const char *proto = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Forwarded-Proto");

    snprintf(out, n, "vt_session=%s; HttpOnly; SameSite=Strict; Path=/; Max-Age=%d%s", id ? id : "",
             id ? SESSION_TTL_S : 0, proto && !strcasecmp(proto, "https") ? "; Secure" : "");
}
