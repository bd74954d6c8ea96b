/*
 * The server's settings and what each request thread holds: its library handle (a struct
 * vt_library is single-threaded; SQLite in WAL mode keeps each read consistent while
 * `add` writes from another process), opened on first use and closed when the daemon
 * stops, and the context the pages of the request it answers see (struct web_ctx).
 */
#include "web/web_http.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { MAX_HANDLES = 64 };

static struct {
    const struct web_opts *opts;
    int loopback;
    struct web_ctx ctx; /* what a request knows before its session is looked up */

    /* one library handle per request thread, closed when the daemon stops */
    pthread_mutex_t lock;
    struct vt_library *handles[MAX_HANDLES];
    size_t n_handles;
} st;

static __thread struct vt_library *tl_lib;
/* the last open of tl_lib failed because the database server could not be reached */
static __thread int tl_open_unavailable;
static __thread struct web_ctx tl_ctx;

void web_state_init(const struct web_opts *opts, int loopback)
{
    memset(&st, 0, sizeof(st));
    st.opts = opts;
    st.loopback = loopback;
    st.ctx.read_only = opts->read_only;
    pthread_mutex_init(&st.lock, NULL);
}

const struct web_opts *web_opts(void)
{
    return st.opts;
}

int web_loopback(void)
{
    return st.loopback;
}

struct vt_library *web_lib(void)
{
    char err[1024];
    struct vt_callbacks cb = {web_on_log, NULL, NULL};

    if (tl_lib)
        return tl_lib;
    pthread_mutex_lock(&st.lock);
    if (st.n_handles < MAX_HANDLES) {
        tl_lib = vt_library_open(st.opts->library_dir, st.opts->read_only ? VT_OPEN_READ : 0, err,
                                 sizeof(err));
        if (tl_lib) {
            vt_library_set_callbacks(tl_lib, &cb);
            st.handles[st.n_handles++] = tl_lib;
        } else {
            web_log_error("%s", err);
            /* vt_library_open returns no code: the message says (db_pg.c's wording) */
            tl_open_unavailable = strstr(err, "database unavailable") != NULL;
        }
    }
    pthread_mutex_unlock(&st.lock);
    return tl_lib;
}

/*
 * Whether this thread's last failure was the database server out of reach (PostgreSQL
 * down or restarting): such a 500 is sent as a 503, which a client may retry.
 */
int web_db_unavailable(void)
{
    return tl_lib ? vt_errcode(tl_lib) == VT_EUNAVAIL : tl_open_unavailable;
}

/* what failed in this thread's last request says nothing of this one (a 503 only for a
 * database out of reach now, see web_db_unavailable) */
void web_lib_clear_error(void)
{
    if (tl_lib)
        vt_clear_error(tl_lib);
    tl_open_unavailable = 0;
}

void web_libs_close(void)
{
    for (size_t i = 0; i < st.n_handles; i++)
        vt_library_close(st.handles[i]);
    st.n_handles = 0;
}

struct web_ctx *web_req_ctx(void)
{
    return &tl_ctx;
}

void web_req_ctx_reset(void)
{
    tl_ctx = st.ctx;
}
