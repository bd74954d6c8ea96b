/*
 * The web pages' templates (lib/base/tmpl.c): values escaped or raw, sections shown when set,
 * inverted sections, nesting, and malformed templates refused.
 */
#include "harness.h"
#include "vidtheque.h"

#include <stdlib.h>
#include <string.h>

/* A visible escape, so a test sees which values went through it. */
static void esc(struct vt_sb *b, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            vt_sb_adds(b, "&lt;");
        else
            vt_sb_addc(b, *s);
}

static int run(const char *t, const struct vt_tmpl_var *v, size_t n, char **out)
{
    struct vt_sb b = {0};
    int rc = vt_tmpl_render(&b, t, strlen(t), v, n, esc);

    vt_sb_adds(&b, "");
    *out = vt_sb_detach(&b);
    return rc;
}

VT_TEST(tmpl_values)
{
    const struct vt_tmpl_var v[] = {{"title", "<b>x"}, {"html", "<i>y</i>"}, {"none", NULL}};
    char *s;

    CHECK_INT(run("a {{title}} b {{{html}}} c {{none}}{{missing}} d", v, 3, &s), 0);
    CHECK_STR(s, "a &lt;b>x b <i>y</i> c  d");
    free(s);
    /* a value is data: braces in it are not a template */
    const struct vt_tmpl_var w[] = {{"q", "{{title}}"}};
    CHECK_INT(run("[{{q}}]", w, 1, &s), 0);
    CHECK_STR(s, "[{{title}}]");
    free(s);
}

VT_TEST(tmpl_sections)
{
    const struct vt_tmpl_var v[] = {{"ro", "1"}, {"empty", ""}, {"t", "T"}};
    char *s;

    CHECK_INT(run("{{#ro}}R{{t}}{{/ro}}|{{^ro}}W{{/ro}}|{{#empty}}E{{/empty}}{{^empty}}e{{/empty}}"
                  "|{{#nope}}N{{/nope}}{{^nope}}n{{/nope}}",
                  v, 3, &s),
              0);
    CHECK_STR(s, "RT||e|n");
    free(s);
    CHECK_INT(run("{{#ro}}a{{#t}}b{{^empty}}c{{/empty}}{{/t}}d{{/ro}}", v, 3, &s), 0);
    CHECK_STR(s, "abcd");
    free(s);
    /* a section of the same name inside itself */
    CHECK_INT(run("{{#ro}}1{{#ro}}2{{/ro}}3{{/ro}}4", v, 3, &s), 0);
    CHECK_STR(s, "1234");
    free(s);
}

VT_TEST(tmpl_malformed)
{
    const struct vt_tmpl_var v[] = {{"a", "x"}};
    static const char *const bad[] = {"{{a",     "{{#a}}no end",  "{{/a}}",     "{{A}}",
                                      "{{a b}}", "{{{#a}}}",      "{{}}",       "{{{a}}",
                                      "{{^a}}",  "x{{#a}}{{/b}}", "{{#a}}{{/a}"};
    char *s;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_INT(run(bad[i], v, 1, &s), -1);
        free(s);
    }
    CHECK_INT(run("plain { text } {x}", v, 1, &s), 0);
    CHECK_STR(s, "plain { text } {x}");
    free(s);
}
