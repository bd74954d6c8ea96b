/*
 * libFuzzer target for the query language: any bytes are parsed and searched with
 * (vt_store_search, which writes them as FTS5 expressions) against a small real index. SQLite must
 * never report an error (a syntax error would mean user input reached FTS5 unescaped).
 */
#include "base/util.h"
#include "store/store.h"
#include "text/query.h"

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
        struct vt_store_search r = {&q,
                                    mode == 2 ? VT_MATCH_ALL_BUT_ONE : VT_MATCH_ALL,
                                    mode ? alts : NULL,
                                    q.source,
                                    q.video,
                                    (int)(size % 2),
                                    10,
                                    0,
                                    mode == 0 && size % 3 == 0};
        struct vt_store_hit *hits = NULL;
        size_t n = 0;
        int partial;

        if (vt_store_search(store, &r, &hits, &n, &partial)) {
            fprintf(stderr, "query mode %d: %s\n", mode, vt_store_errmsg(store));
            abort();
        }
        free(hits);
    }
    vt_query_release(&q);
    return 0;
}
