/*
 * Templates (vidtheque.h, vt_tmpl_render): one pass over the text, sections rendered by recursion
 * over the span between their tags. Sections nest at most TMPL_DEPTH deep.
 */
#include "vidtheque.h"

#include <string.h>

#define TMPL_DEPTH 16
#define TMPL_NAME  64

struct ctx {
    struct vt_sb *out;
    const struct vt_tmpl_var *vars;
    size_t n_vars;
    void (*escape)(struct vt_sb *, const char *);
};

static const char *lookup(const struct ctx *c, const char *name, size_t len)
{
    for (size_t i = 0; i < c->n_vars; i++)
        if (strlen(c->vars[i].name) == len && !memcmp(c->vars[i].name, name, len))
            return c->vars[i].value;
    return NULL;
}

static int name_ok(const char *s, size_t len)
{
    if (!len || len >= TMPL_NAME)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

/* The first "{{/name}}" at or after p that closes this section (same-name sections nest). */
static const char *section_end(const char *p, const char *e, const char *name, size_t len)
{
    int depth = 0;

    while ((p = memmem(p, (size_t)(e - p), "{{", 2))) {
        if (p + 3 + len + 2 <= e && (p[2] == '#' || p[2] == '^' || p[2] == '/') &&
            !memcmp(p + 3, name, len) && !memcmp(p + 3 + len, "}}", 2)) {
            if (p[2] != '/')
                depth++;
            else if (depth-- == 0)
                return p;
        }
        p += 2;
    }
    return NULL;
}

static int render(const struct ctx *c, const char *p, const char *e, int depth)
{
    while (p < e) {
        const char *o = memmem(p, (size_t)(e - p), "{{", 2), *name, *close;
        size_t len;
        int raw = 0;
        char kind;

        if (!o) {
            vt_sb_add(c->out, p, (size_t)(e - p));
            return 0;
        }
        vt_sb_add(c->out, p, (size_t)(o - p));
        p = o + 2;
        if (p < e && *p == '{')
            raw = 1, p++;
        kind = p < e && (*p == '#' || *p == '^' || *p == '/') ? *p++ : 0;
        name = p;
        close = memmem(p, (size_t)(e - p), raw ? "}}}" : "}}", raw ? 3 : 2);
        if (!close)
            return -1;
        len = (size_t)(close - name);
        if (!name_ok(name, len) || (raw && kind) || kind == '/')
            return -1;
        p = close + (raw ? 3 : 2);
        if (!kind) {
            const char *v = lookup(c, name, len);

            if (v)
                raw ? vt_sb_adds(c->out, v) : c->escape(c->out, v);
            continue;
        }
        {
            const char *end = section_end(p, e, name, len), *v = lookup(c, name, len);
            int set = v && *v;

            if (!end || depth >= TMPL_DEPTH)
                return -1;
            if ((kind == '#') == set && render(c, p, end, depth + 1))
                return -1;
            p = end + 3 + len + 2;
        }
    }
    return 0;
}

int vt_tmpl_render(struct vt_sb *out, const char *t, size_t n, const struct vt_tmpl_var *vars,
                   size_t n_vars, void (*escape)(struct vt_sb *, const char *))
{
    const struct ctx c = {out, vars, n_vars, escape};

    return render(&c, t, t + n, 0);
}
