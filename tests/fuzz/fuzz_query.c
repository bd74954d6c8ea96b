/*
 * libFuzzer target for the query language: any bytes are parsed, turned into FTS5
 * expressions and run against a small real index. SQLite must never report an
 * error (a syntax error would mean user input reached FTS5 unescaped).
 */
#include "query.h"
#include "store.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct vt_store *store;

static void setup(void)
{
    static const char *texts[] = {"the quick brown fox", "jumps over the lazy dog",
                                  "near and not or",
                                  "caf\xc3\xa9 na\xc3\xafve r\xc3\xa9sum\xc3\xa9"};
    char dir[] = "/tmp/vt-fuzz-query.XXXXXX", err[256], *db;
    struct vt_video_rec v;
    struct vt_transcript t;
    struct vt_cue cues[4];

    if (!mkdtemp(dir))
        abort();
    db = vt_xasprintf("%s/library.db", dir);
    if (vt_store_open(db, &store, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        abort();
    }
    free(db);
    memset(&v, 0, sizeof(v));
    snprintf(v.id, sizeof(v.id), "fuzzvideo01");
    v.content_key = "k";
    v.source_kind = "file";
    v.title = "A fuzzy title";
    memset(cues, 0, sizeof(cues));
    for (int i = 0; i < 4; i++) {
        cues[i].start_s = i * 2.0;
        cues[i].end_s = i * 2.0 + 1.5;
        cues[i].text = (char *)texts[i];
    }
    memset(&t, 0, sizeof(t));
    t.cues = cues;
    t.n_cues = 4;
    if (vt_store_begin(store) || vt_store_video_insert(store, &v) ||
        vt_store_transcript_replace(store, v.id, &t) || vt_store_title_docs_refresh(store, v.id) ||
        vt_store_commit(store)) {
        fprintf(stderr, "%s\n", vt_store_errmsg(store));
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vt_query q;
    char *alt[] = {"dog", "fox", NULL};
    char **alts[VT_QUERY_MAX_TERMS] = {alt, alt};

    if (!store)
        setup();
    vt_query_parse((const char *)data, size, &q);
    for (int mode = 0; mode < 3; mode++) {
        char *m = vt_query_fts(&q, mode == 1, mode == 2 ? alts : NULL);

        if (!m)
            continue;
        struct vt_fts_id *ids = NULL;
        size_t n = 0;

        double df[64] = {1, 2, 3, 4, 5, 6, 7, 8};

        int partial;

        if (vt_store_fts(store, m, q.source, q.video, df, mode == 2 ? 64 : size % 8,
                         (int)(size % 4), 10, 0, &partial, &ids, &n)) {
            fprintf(stderr, "query %s: %s\n", m, vt_store_errmsg(store));
            abort();
        }
        free(ids);
        free(m);
    }
    vt_query_release(&q);
    return 0;
}
