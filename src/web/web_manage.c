/*
 * Managing the library from the browser: the sign-in page, the queue of the indexing
 * thread, the confirmation before a video is removed, and the small forms the other
 * pages embed (add a video, a video's failures with a retry button, redo a stage,
 * remove). Every form that writes carries the session's CSRF token in a hidden field;
 * web_write.c checks it (and the session cookie, and the request's origin) before it queues
 * anything. Nothing here is shown in read-only mode or to a request that is not signed in.
 * Everything from a video or a client (titles, paths, URLs, errors) is escaped here.
 */
#include "base/util.h"
#include "web/web_int.h"

#include <stdio.h>
#include <string.h>

/* The hidden field every writing form carries. */
static void put_csrf(struct vt_sb *b, const struct web_ctx *ctx)
{
    vt_sb_adds(b, "<input type=\"hidden\" name=\"csrf\" value=\"");
    web_html(b, ctx->csrf);
    vt_sb_adds(b, "\">");
}

/* POST /login's form: the token never appears in a URL, a log line or the browser's history. */
int web_page_login(const struct web_ctx *ctx, int status, const char *msg, struct vt_sb *out)
{
    web_head(out, ctx, "Sign in", NULL, 0);
    WEB_RENDER(out, "login", {"message", msg}, {"signed_in", ctx->signed_in ? "1" : NULL});
    web_foot(out);
    return status;
}

/* The add form, with what was typed and why it was refused (both NULL: a blank form). */
static void put_add_form(struct vt_sb *b, const struct web_ctx *ctx, const char *value,
                         const char *error)
{
    if (ctx->signed_in)
        WEB_RENDER(b, "add-form", {"csrf", ctx->csrf}, {"value", value}, {"error", error},
                   {"manage_js_url", web_asset_url("/static/manage.js")});
}

void web_put_add_form(struct vt_sb *b, const struct web_ctx *ctx)
{
    put_add_form(b, ctx, NULL, NULL);
}

int web_page_add_refused(const struct web_ctx *ctx, int status, const char *value, const char *why,
                         struct vt_sb *out)
{
    web_head(out, ctx, "Add a video", NULL, 0);
    vt_sb_adds(out, "<h1>Not added</h1>\n");
    if (ctx->signed_in) {
        put_add_form(out, ctx, value, why);
    } else { /* a client with the bearer token: no form, the reason alone */
        vt_sb_adds(out, "<p class=\"error\" role=\"alert\">");
        web_html(out, why);
        vt_sb_adds(out, "</p>\n");
    }
    vt_sb_adds(out, "<p><a href=\"/\">Back to the videos</a></p>\n");
    web_foot(out);
    return status;
}

/* A stage whose last run failed: failed for good, or queued again to be retried later. */
static int stage_failed(const json_t *s)
{
    const char *st = web_jstr(s, "state");

    return st && (!strcmp(st, "failed") || (!strcmp(st, "queued") && web_jstr(s, "error")));
}

static void put_failures(struct vt_sb *b, const struct web_ctx *ctx, const char *id,
                         const json_t *doc)
{
    const json_t *s;
    size_t i, n = 0;

    json_array_foreach(json_object_get(doc, "stages"), i, s) n += stage_failed(s) != 0;
    if (!n)
        return;
    vt_sb_addf(b, "<h3>%s</h3><ul class=\"failures\">",
               n == 1 ? "A stage failed" : "Some stages failed");
    json_array_foreach(json_object_get(doc, "stages"), i, s)
    {
        long long tries = web_jint(s, "attempts");

        if (!stage_failed(s))
            continue;
        vt_sb_adds(b, "<li><strong>");
        web_html(b, web_jstr(s, "name"));
        vt_sb_adds(b, "</strong> ");
        if (!strcmp(web_jstr(s, "state"), "failed"))
            vt_sb_addf(b, " failed after %lld %s: ", tries, tries == 1 ? "attempt" : "attempts");
        else
            vt_sb_addf(b, " failed (%lld %s so far; another is due later): ", tries,
                       tries == 1 ? "attempt" : "attempts");
        vt_sb_adds(b, "<span class=\"why\">");
        web_html(b, web_jstr(s, "error") ? web_jstr(s, "error") : "no reason recorded");
        vt_sb_adds(b, "</span></li>");
    }
    vt_sb_addf(b, "</ul><form method=\"post\" action=\"/v/%s/retry\">", id);
    put_csrf(b, ctx);
    vt_sb_addf(b, "<button>Retry %s now</button></form>\n", n == 1 ? "it" : "them");
}

void web_put_video_actions(struct vt_sb *b, const struct web_ctx *ctx, const json_t *doc)
{
    const char *id = web_jstr(doc, "id");
    const char *names[32];

    /* the id is in a URL: only one of the right shape (the document's, but checked) */
    if (!ctx->signed_in || !id || !vt_id_valid(id))
        return;
    vt_sb_adds(b, "<section class=\"manage actions\" aria-labelledby=\"manage-h\">"
                  "<h2 id=\"manage-h\">Manage</h2>\n");
    put_failures(b, ctx, id, doc);
    vt_sb_addf(b, "<form method=\"post\" action=\"/v/%s/redo\" class=\"inline\">", id);
    put_csrf(b, ctx);
    vt_sb_adds(b, "<label for=\"redo-stage\">Redo a stage (and the stages that use it)</label>"
                  "<select id=\"redo-stage\" name=\"stage\" required>"
                  "<option value=\"\" selected disabled>choose a stage</option>");
    /* in the order they run, nothing chosen: a slip of the hand must not redo fetch */
    vt_stage_run_order(names, sizeof(names) / sizeof(names[0]));
    for (size_t i = 0; names[i]; i++) {
        vt_sb_adds(b, "<option>");
        web_html(b, names[i]);
        vt_sb_adds(b, "</option>");
    }
    vt_sb_adds(b, "</select><button>Redo</button></form>\n");
    /* without JS this POST shows the confirmation page; manage.js asks in a dialog */
    vt_sb_addf(b, "<form method=\"post\" action=\"/v/%s/remove\" class=\"remove\" data-confirm=\"",
               id);
    vt_sb_adds(b, "Remove “");
    web_html(b, web_jstr(doc, "title") ? web_jstr(doc, "title") : id);
    vt_sb_adds(b, "” from the library?\">");
    put_csrf(b, ctx);
    vt_sb_adds(b, "<button class=\"danger\">Remove…</button></form></section>\n"
                  "<script src=\"");
    vt_sb_adds(b, web_asset_url("/static/manage.js"));
    vt_sb_adds(b, "\" defer></script>\n");
}

int web_page_remove(struct vt_library *lib, const struct web_ctx *ctx, const char *id,
                    struct vt_sb *out)
{
    struct vt_doc_pages none = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
    json_t *doc;
    const char *title, *kind;
    int rc;

    doc = vt_id_valid(id) ? web_video_doc(lib, id, &none, &rc) : NULL;
    if (!doc)
        return web_page_error(ctx, 404, "no such video", out);
    title = web_jstr(doc, "title") ? web_jstr(doc, "title") : id;
    kind = web_jstr(json_object_get(doc, "source"), "kind");
    web_head(out, ctx, "Remove a video", NULL, 0);
    vt_sb_adds(out, "<section class=\"manage confirm\"><h1>Remove “");
    web_html(out, title);
    vt_sb_adds(out, "”?</h1>\n<p>Its transcript, frames, and what was read and found in them "
                    "are deleted from the library.");
    if (kind && !strcmp(kind, "file"))
        vt_sb_adds(out, " The file it was added from is kept.");
    else
        vt_sb_adds(out, " The media downloaded for it is deleted too.");
    vt_sb_addf(out, "</p>\n<form method=\"post\" action=\"/v/%s/remove\" class=\"inline\">", id);
    put_csrf(out, ctx);
    vt_sb_addf(out,
               "<input type=\"hidden\" name=\"confirm\" value=\"yes\">"
               "<button class=\"danger\">Remove it</button> <a href=\"/v/%s\">Cancel</a>"
               "</form></section>\n",
               id);
    web_foot(out);
    json_decref(doc);
    return 200;
}

static const char *const job_states[] = {"waiting", "running", "done", "failed"};

/* "42 s", "3 min 5 s", "2 h 10 min": a duration in words. */
static void put_span(struct vt_sb *b, double s)
{
    long long n = s > 0 && s < 1e9 ? (long long)s : 0;

    if (n < 60)
        vt_sb_addf(b, "%lld s", n);
    else if (n < 3600)
        vt_sb_addf(b, "%lld min %lld s", n / 60, n % 60);
    else
        vt_sb_addf(b, "%lld h %lld min", n / 3600, n % 3600 / 60);
}

/* "queued 2 min 3 s ago, ran 40 s" or "running for 12 s", in a <span class="times">. */
static void put_job_times(struct vt_sb *b, const struct web_job *j, double now)
{
    if (j->queued_at <= 0)
        return;
    vt_sb_adds(b, " <span class=\"times\">queued ");
    put_span(b, now - j->queued_at);
    vt_sb_adds(b, " ago");
    if (j->state == WEB_JOB_RUNNING && j->started_at > 0) {
        vt_sb_adds(b, ", running for ");
        put_span(b, now - j->started_at);
    } else if (j->started_at > 0 && j->ended_at >= j->started_at) {
        vt_sb_adds(b, ", ran ");
        put_span(b, j->ended_at - j->started_at);
    }
    vt_sb_adds(b, "</span>");
}

/* What a list of videos shows of one video, read by id (title, running stage, progress). */
struct vcard {
    char title[256];
    char running[32];
    int total, finished, found;
};

static int keep_card(void *user, const struct vt_video_item *v)
{
    struct vcard *c = user;

    snprintf(c->title, sizeof(c->title), "%s", v->title && *v->title ? v->title : v->id);
    snprintf(c->running, sizeof(c->running), "%s", v->running ? v->running : "");
    c->total = v->stages_total;
    c->finished = v->stages_finished;
    c->found = 1;
    return 0;
}

static void read_card(struct vt_library *lib, const char *id, struct vcard *c)
{
    struct vt_list_opts o = {0};

    memset(c, 0, sizeof(*c));
    o.id = id;
    o.limit = 1;
    if (vt_list_page(lib, &o, keep_card, c, NULL))
        memset(c, 0, sizeof(*c)); /* removed meanwhile, or unreadable: the id alone */
}

/* A video's progress: a bar and "3 of 7 steps done, now ocr". */
static void put_progress(struct vt_sb *b, int total, int finished, const char *running)
{
    vt_sb_addf(b,
               " <span class=\"progress\"><progress max=\"%d\" value=\"%d\" "
               "aria-label=\"Indexing progress\"></progress> %d of %d %s done",
               total, finished, finished, total, total == 1 ? "step" : "steps");
    if (running && *running) {
        vt_sb_adds(b, ", now <span class=\"stage\">");
        web_html(b, running);
        vt_sb_adds(b, "</span>");
    }
    vt_sb_adds(b, "</span>");
}

/* The job's video: its title linked, and while the job runs its stage and progress. */
static void put_job_video(struct vt_sb *b, struct vt_library *lib, const struct web_job *j)
{
    struct vcard c;

    if (!strcmp(j->what, "remove") && j->state == WEB_JOB_DONE) {
        vt_sb_addf(b, " — %s removed", j->id);
        return;
    }
    read_card(lib, j->id, &c);
    vt_sb_addf(b, " — <a class=\"title\" href=\"/v/%s\">", j->id);
    web_html(b, c.found ? c.title : j->id);
    vt_sb_adds(b, "</a>");
    if (c.found && j->state == WEB_JOB_RUNNING)
        put_progress(b, c.total, c.finished, c.running);
}

static void put_job(struct vt_sb *b, struct vt_library *lib, const struct web_job *j,
                    unsigned long highlight, double now)
{
    vt_sb_addf(b, "<li id=\"job-%lu\" class=\"job job-%s%s\"><span class=\"badge\">%s</span> ",
               j->no, job_states[j->state], j->no == highlight ? " new" : "", job_states[j->state]);
    vt_sb_adds(b, j->what);
    if (j->arg[0]) {
        vt_sb_adds(b, " <code>");
        web_html(b, j->arg);
        vt_sb_adds(b, "</code>");
    }
    if (j->id[0] && vt_id_valid(j->id))
        put_job_video(b, lib, j);
    if (j->n_added > 1)
        vt_sb_addf(b, " and %zu more %s", j->n_added - 1, j->n_added == 2 ? "video" : "videos");
    put_job_times(b, j, now);
    if (j->error[0]) {
        vt_sb_adds(b, ": <span class=\"why\">");
        web_html(b, j->error);
        vt_sb_adds(b, "</span>");
    }
    vt_sb_adds(b, "</li>\n");
}

/* The library's queue: the videos waiting or being indexed by any worker (this server's
 * thread, `vidtheque worker`s, another server), at most QUEUE_SHOWN of each state. */
#define QUEUE_SHOWN 200

struct lq {
    struct vt_sb *b;
    double now;
    size_t n;
};

static int put_queued_video(void *user, const struct vt_video_item *v)
{
    struct lq *q = user;

    vt_sb_addf(q->b, "<li class=\"qvideo\" data-id=\"%s\" data-state=\"%s\">", v->id,
               v->index_state);
    vt_sb_addf(q->b, "<span class=\"badge state-%s\">%s</span> <a class=\"title\" href=\"/v/%s\">",
               v->index_state, !strcmp(v->index_state, "queued") ? "waiting" : "indexing", v->id);
    web_html(q->b, v->title && *v->title ? v->title : v->id);
    vt_sb_adds(q->b, "</a>");
    put_progress(q->b, v->stages_total, v->stages_finished, v->running);
    vt_sb_adds(q->b, " <span class=\"times\">added ");
    put_span(q->b, q->now - v->added_at);
    vt_sb_adds(q->b, " ago</span></li>\n");
    q->n++;
    return 0;
}

/* The library's queue as a list; how many videos wait or are indexed (-1: unreadable). */
static long long library_queue(struct vt_sb *b, struct vt_library *lib, double now)
{
    static const char *const states[] = {"processing", "queued"};
    struct vt_sb items = {0};
    struct lq q = {&items, now, 0};
    long long all = 0;

    for (size_t i = 0; i < 2; i++) {
        struct vt_list_opts o = {0};
        long long total = 0;

        o.state = states[i];
        o.sort = "added";
        o.limit = QUEUE_SHOWN;
        if (vt_list_page(lib, &o, put_queued_video, &q, &total)) {
            vt_sb_release(&items);
            vt_sb_adds(b, "<p class=\"error\">The library's queue cannot be read.</p>\n");
            return -1;
        }
        all += total;
    }
    vt_sb_adds(b, "<h2>In the library</h2>\n<p>");
    if (!all)
        vt_sb_adds(b, "No video waits to be indexed.");
    else
        vt_sb_addf(b, "%lld %s waiting or being indexed (by this server or any worker)%s.", all,
                   all == 1 ? "video is" : "videos are",
                   (size_t)all > q.n ? ", the oldest shown" : "");
    vt_sb_adds(b, "</p>\n");
    if (q.n)
        vt_sb_addf(b, "<ul class=\"jobs lqueue\">\n%s</ul>\n", items.buf);
    vt_sb_release(&items);
    return all;
}

int web_page_queue(struct vt_library *lib, const struct web_ctx *ctx, const struct web_job *jobs,
                   size_t n, unsigned long highlight, struct vt_sb *out)
{
    struct vt_sb body = {0};
    double now = vt_wall_s();
    size_t pending = 0;

    for (size_t i = 0; i < n; i++)
        pending += jobs[i].state == WEB_JOB_WAITING || jobs[i].state == WEB_JOB_RUNNING;
    library_queue(&body, lib, now);
    /* reloads itself while this server's work is pending (no JS needed); not for the
     * library's queue alone: a video waiting for a later retry would reload it forever */
    web_head(out, ctx, "Queue", NULL, pending ? 5 : 0);
    vt_sb_adds(out, "<section class=\"manage queue\"><h1>Indexing queue</h1>\n");
    vt_sb_adds(out, body.buf ? body.buf : "");
    vt_sb_release(&body);
    vt_sb_adds(out, "<h2>Asked of this server</h2>\n<p>");
    if (!n)
        vt_sb_adds(out, "Nothing was asked of the indexer since the server started.");
    else if (!pending)
        vt_sb_adds(out, "Everything asked is finished.");
    else
        vt_sb_addf(out, "%zu %s waiting or running; this page reloads every 5 seconds.", pending,
                   pending == 1 ? "job is" : "jobs are");
    vt_sb_adds(out, "</p>\n");
    if (n) {
        vt_sb_adds(out, "<ul class=\"jobs\">\n");
        for (size_t i = 0; i < n; i++)
            put_job(out, lib, &jobs[i], highlight, now);
        vt_sb_adds(out, "</ul>\n");
    }
    vt_sb_adds(out, "<p><a href=\"/\">Back to the videos</a></p></section>\n");
    web_foot(out);
    return 200;
}
