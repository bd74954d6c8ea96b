/*
 * Managing the library from the browser: the sign-in page, the queue of the indexing
 * thread, the confirmation before a video is removed, and the small forms the other
 * pages embed (add a video, a video's failures with a retry button, redo a stage,
 * remove, a frame as the poster of the video's card). Every form that writes carries the
 * session's CSRF token in a hidden field; web_write.c checks it (and the session cookie,
 * and the request's origin) before it queues anything. Nothing here is shown in read-only
 * mode or to a request that is not signed in. Everything from a video or a client
 * (titles, paths, URLs, errors) is escaped here.
 */
#include "web/web_int.h"

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

void web_put_add_form(struct vt_sb *b, const struct web_ctx *ctx)
{
    if (ctx->signed_in)
        WEB_RENDER(b, "add-form", {"csrf", ctx->csrf},
                   {"manage_js_url", web_asset_url("/static/manage.js")});
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

void web_put_poster_form(struct vt_sb *b, const struct web_ctx *ctx, const char *id, int frame,
                         int is_poster)
{
    if (!ctx->signed_in || !id || !vt_id_valid(id) || frame < 0)
        return;
    if (is_poster) {
        vt_sb_adds(b, " · <span class=\"poster\">the card's poster</span>");
        return;
    }
    vt_sb_addf(b, " <form method=\"post\" action=\"/v/%s/poster\" class=\"inline poster\">", id);
    put_csrf(b, ctx);
    vt_sb_addf(b,
               "<input type=\"hidden\" name=\"frame\" value=\"%d\">"
               "<button>Use as the card's poster</button></form>",
               frame);
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

static void put_job(struct vt_sb *b, const struct web_job *j, unsigned long highlight)
{
    vt_sb_addf(b, "<li id=\"job-%lu\" class=\"job job-%s%s\"><span class=\"badge\">%s</span> ",
               j->no, job_states[j->state], j->no == highlight ? " new" : "", job_states[j->state]);
    vt_sb_adds(b, j->what);
    if (j->arg[0]) {
        vt_sb_adds(b, " <code>");
        web_html(b, j->arg);
        vt_sb_adds(b, "</code>");
    }
    if (j->id[0] && vt_id_valid(j->id)) {
        if (!strcmp(j->what, "remove") && j->state == WEB_JOB_DONE)
            vt_sb_addf(b, " — %s removed", j->id);
        else
            vt_sb_addf(b, " — <a href=\"/v/%s\">%s</a>", j->id, j->id);
    }
    if (j->n_added > 1)
        vt_sb_addf(b, " and %zu more %s", j->n_added - 1, j->n_added == 2 ? "video" : "videos");
    if (j->error[0]) {
        vt_sb_adds(b, ": <span class=\"why\">");
        web_html(b, j->error);
        vt_sb_adds(b, "</span>");
    }
    vt_sb_adds(b, "</li>\n");
}

int web_page_queue(const struct web_ctx *ctx, const struct web_job *jobs, size_t n,
                   unsigned long highlight, struct vt_sb *out)
{
    size_t pending = 0;

    for (size_t i = 0; i < n; i++)
        pending += jobs[i].state == WEB_JOB_WAITING || jobs[i].state == WEB_JOB_RUNNING;
    /* reloads itself while work is pending, as the library page does (no JS needed) */
    web_head(out, ctx, "Queue", NULL, pending ? 5 : 0);
    vt_sb_adds(out, "<section class=\"manage queue\"><h1>Indexing queue</h1>\n<p>");
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
            put_job(out, &jobs[i], highlight);
        vt_sb_adds(out, "</ul>\n");
    }
    vt_sb_adds(out, "<p><a href=\"/\">Back to the videos</a></p></section>\n");
    web_foot(out);
    return 200;
}
