/*
 * Text to image: what frames show, found by the words of a search, for a joint
 * text-image frame model (frame_embed.joint_text): the query embedded by the frame
 * model (stages/frame_embed.h), the nearest pictures of its space (vecsearch.h).
 */
#include "base/util.h"
#include "core/library.h"
#include "ml/embed.h"
#include "ml/vindex.h"
#include "search/floor.h"
#include "search/search_int.h"
#include "search/vecsearch.h"
#include "stages/frame_embed.h"
#include "text/query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text read on a frame, lines joined by spaces (a hit's text); "" when none. */
static char *frame_words(struct vt_library *lib, const char *id, int frame)
{
    struct vt_store_frame *f = NULL;
    size_t n = 0;
    struct vt_sb sb = {0};

    vt_sb_adds(&sb, "");
    if (!vt_store_frames_range(lib->store, id, frame, frame + 1, &f, &n) && n)
        for (size_t i = 0; i < f[0].ocr.n_lines; i++) {
            if (f[0].ocr.lines[i].noise)
                continue;
            if (sb.len)
                vt_sb_addc(&sb, ' ');
            vt_sb_adds(&sb, f[0].ocr.lines[i].text);
        }
    vt_store_frames_free(f, n);
    return vt_sb_detach(&sb);
}

int vt_search_visual(struct vt_library *lib, const struct vt_query *q,
                     const struct vt_search_opts *opts, int limit, struct vt_hit **hits,
                     size_t *n_hits, struct vt_search_floor *used, char *err, size_t errlen)
{
    struct vt_embed *e = NULL;
    char *key = NULL, *text = NULL;
    float *qv = NULL;
    struct vt_vhit *vh = NULL;
    struct vt_hit *out = NULL;
    size_t n = 0, cap = 0, m = 0;
    const char *video = opts && opts->video ? opts->video : q->video;
    const char *source = opts && opts->source ? opts->source : q->source;
    int rc;

    *hits = NULL;
    *n_hits = 0;
    /* only a joint text-image model answers words with pictures */
    rc = vt_frame_embed_joint_text(lib, err, errlen);
    if (rc)
        return rc;
    if (*source && strcmp(source, "visual"))
        return 0;
    text = vt_query_meaning_text(q);
    if (!*text)
        goto out;
    rc = vt_frame_embed_open(lib, &e, &key, err, errlen);
    if (rc)
        goto out;
    int dim = vt_embed_dim(e);
    qv = vt_xmalloc(sizeof(float) * (size_t)dim);
    rc = vt_embed_texts(e, (const char *const *)&text, 1, qv, err, errlen);
    size_t k = (size_t)limit * (*video ? 20 : 2) + 10;
    vh = vt_xcalloc(k, sizeof(*vh));
    if (!rc)
        rc = vt_vecsearch_nearest(lib, vt_embed_id(e), dim, qv, k, NULL, NULL, vh, &m, err, errlen);
    /* the floor of the frame model's space, measured with its own text tower */
    struct vt_floor fl;
    int measured = 0;
    if (!rc)
        rc = vt_floor_get(lib, e, &fl, &measured, err, errlen);
    vt_frame_embed_give(key, e); /* keeps a copy of key */
    free(key);
    if (rc)
        goto out;
    vt_search_floor_put(used, "visual", &fl, measured);
    for (size_t i = 0; !rc && i < m && n < (size_t)limit; i++) {
        struct vt_vec_where w;
        int rel = vt_floor_judge(&fl, vh[i].score);
        if (!rel) { /* best first: the rest stand below the floor too */
            used->below = (int)(m - i);
            break;
        }
        int r = vt_store_vector_get(lib->store, vh[i].key, &w);
        if (r == VT_ENOTFOUND || (!r && w.kind != VT_VEC_VISUAL))
            continue;
        if (r) {
            rc = vt_err(err, errlen, r, "%s", vt_store_errmsg(lib->store));
            break;
        }
        if (*video && strcmp(video, w.video_id))
            continue;
        vt_grow((void **)&out, &cap, n + 1, sizeof(*out));
        struct vt_hit *h = &out[n++];
        memset(h, 0, sizeof(*h));
        snprintf(h->video_id, sizeof(h->video_id), "%s", w.video_id);
        snprintf(h->source, sizeof(h->source), "visual");
        h->start_s = w.start_s;
        h->end_s = w.end_s;
        h->ref = w.ref;
        h->text = frame_words(lib, w.video_id, w.ref);
        struct vt_video_rec v;
        memset(&v, 0, sizeof(v));
        h->title = vt_xstrdup("");
        if (!vt_store_video_get(lib->store, w.video_id, &v)) {
            free(h->title);
            h->title = vt_xstrdup(v.title ? v.title : "");
            vt_video_rec_release(&v);
        }
        h->score = h->similarity = vh[i].score;
        h->relevance = rel;
        h->matched = VT_MATCH_VISUAL;
    }
out:
    free(vh);
    free(qv);
    free(text);
    if (rc) {
        vt_hits_free(out, n);
        return rc;
    }
    *hits = out;
    *n_hits = n;
    return 0;
}
