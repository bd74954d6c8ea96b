/*
 * Unit tests of the relevance floor (lib/search/floor.c): the probes that cannot match,
 * the floor and the labels from chance scores, when a floor is stale, and, on both
 * backends, a floor measured on a library's vectors with the test text model, equal to
 * the one worked out here from the same probes, kept in memory and in
 * LIBRARY/calibration.json, measured again when the vectors changed by more than a tenth
 * or the file is not sound.
 */
#include "base/util.h"
#include "core/library.h"
#include "harness.h"
#include "ml/embed.h"
#include "pgtest.h"
#include "search/floor.h"
#include "store/store.h"
#include "vidtheque.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define M2V_DIR "tests/data/model2vec-test-vocab-quantized"

VT_TEST(floor_probes)
{
    char a[96], b[96], tiny[5];

    for (int i = 0; i < VT_FLOOR_PROBES; i++) {
        vt_floor_probe(i, a, sizeof(a));
        vt_floor_probe(i, b, sizeof(b));
        CHECK_STR(a, b); /* the same probe every time */
        CHECK(strlen(a) >= 4);
        CHECK(strspn(a, "abcdefghijklmnopqrstuvwxyz ") == strlen(a));
        CHECK(a[0] != ' ' && a[strlen(a) - 1] != ' ');
        if (i > 0) {
            vt_floor_probe(i - 1, b, sizeof(b));
            CHECK(strcmp(a, b) != 0);
        }
        vt_floor_probe(i, tiny, sizeof(tiny)); /* cut short, still a string */
        CHECK(strlen(tiny) < sizeof(tiny));
    }
}

VT_TEST(floor_from_scores)
{
    struct vt_floor f;
    const double flat[] = {0.1, 0.2, 0.3};
    double spread[48] = {0};

    memset(&f, 0, sizeof(f));
    vt_floor_from_scores(&f, flat, 3);
    CHECK_INT(f.probes, 3);
    CHECK(fabs(f.chance_mean - 0.2) < 1e-12);
    CHECK(fabs(f.chance_sd - 0.1) < 1e-12);
    CHECK(f.chance_max == 0.3);
    /* mean + 3 sd (0.5) is above the best chance score (0.3): the floor is just above that */
    CHECK(fabs(f.floor - 0.3) < 1e-12 && f.floor > 0.3);
    CHECK(fabs(f.strong - 0.475) < 1e-12);
    CHECK_INT(vt_floor_judge(&f, 0.29), VT_REL_NONE);
    CHECK_INT(vt_floor_judge(&f, 0.3), VT_REL_NONE);
    CHECK_INT(vt_floor_judge(&f, 0.31), VT_REL_WEAK);
    CHECK_INT(vt_floor_judge(&f, 0.48), VT_REL_STRONG);
    CHECK_INT(vt_floor_judge(&f, 1.0), VT_REL_STRONG);
    CHECK_INT(vt_floor_judge(&f, NAN), VT_REL_NONE);
    CHECK_STR(vt_relevance_name(VT_REL_STRONG), "strong");
    CHECK_STR(vt_relevance_name(VT_REL_WEAK), "weak");
    CHECK(vt_relevance_name(VT_REL_NONE) == NULL);
    CHECK(vt_relevance_name(7) == NULL);

    /* one probe far above the rest may be a word the library is about: not the floor */
    spread[47] = 0.9;
    vt_floor_from_scores(&f, spread, 48);
    CHECK(f.chance_max == 0.9);
    CHECK(f.floor < 0.5 && fabs(f.floor - (f.chance_mean + 3 * f.chance_sd)) < 1e-9);
    /* two lucky probes: the second best is the floor, a cosine equal to it is chance */
    spread[46] = 0.9;
    vt_floor_from_scores(&f, spread, 48);
    CHECK(f.floor > 0.9 && f.floor < 0.9 + 1e-9);
    CHECK_INT(vt_floor_judge(&f, 0.9), VT_REL_NONE);
    CHECK_INT(vt_floor_judge(&f, 0.91), VT_REL_WEAK);
    CHECK_INT(vt_floor_judge(&f, 0.93), VT_REL_STRONG);

    /* nothing measured: nothing stands above chance */
    vt_floor_from_scores(&f, NULL, 0);
    CHECK_INT(f.probes, 0);
    CHECK_INT(vt_floor_judge(&f, 1.0), VT_REL_NONE);
}

VT_TEST(floor_stale)
{
    struct vt_floor f = {.vectors = 100, .max_id = 500, .probes = 48};

    CHECK(!vt_floor_stale(&f, 100, 500));
    CHECK(!vt_floor_stale(&f, 110, 510)); /* a tenth more */
    CHECK(vt_floor_stale(&f, 111, 511));  /* more than a tenth */
    CHECK(vt_floor_stale(&f, 89, 500));   /* more than a tenth gone */
    CHECK(vt_floor_stale(&f, 100, 520));  /* as many, but 20 re-embedded */
    CHECK(vt_floor_stale(&f, 100, 400));  /* ids went back: another database */
    f.probes = 0;
    CHECK(vt_floor_stale(&f, 100, 500)); /* never measured */
    f = (struct vt_floor){.vectors = 5, .max_id = 5, .probes = 48};
    CHECK(vt_floor_stale(&f, 6, 6)); /* a small space: any change */
}

static const char *const texts[] = {
    "Today we talk about the weather in the mountains.",
    "My automobile broke down on the highway last week.",
    "The banana and the apple are sweet fruits.",
    "Thank you all for listening.",
    "Rivers carry water from the hills to the sea.",
    "The orchestra played a symphony by candlelight.",
};
#define N_TEXTS (sizeof(texts) / sizeof(*texts))

/* Put video vid with the vectors of texts[from..to) as chunks 0.. */
static int put_vectors(struct vt_library *lib, struct vt_embed *e, const char *vid, size_t from,
                       size_t to)
{
    struct vt_video_rec v = {0};
    int dim = vt_embed_dim(e);
    float *vec = vt_xcalloc(N_TEXTS * (size_t)dim, sizeof(float));
    struct vt_vec_rec recs[N_TEXTS];
    char err[256], key[80];
    int rc;

    snprintf(v.id, sizeof(v.id), "%s", vid);
    snprintf(key, sizeof(key), "k-%s", vid);
    v.content_key = key;
    v.source_kind = "file";
    v.title = "floor";
    rc = vt_embed_texts(e, (const char *const *)texts + from, to - from, vec, err, sizeof(err));
    for (size_t i = from; i < to; i++)
        recs[i - from] = (struct vt_vec_rec){.kind = VT_VEC_CHUNK,
                                             .ref = (int)(i - from),
                                             .start_s = 10.0 * (double)i,
                                             .end_s = 10.0 * (double)i + 5,
                                             .v = vec + (i - from) * (size_t)dim};
    if (!rc)
        rc = vt_store_begin(lib->store);
    if (!rc)
        rc = vt_store_video_insert(lib->store, &v);
    if (!rc)
        rc = vt_store_vectors_replace(lib->store, vid, vt_embed_id(e), dim, recs, to - from);
    if (!rc)
        rc = vt_store_commit(lib->store);
    free(vec);
    return rc;
}

/* The floor worked out here: each probe's best cosine over texts[0..n). */
static void expected_floor(struct vt_embed *e, size_t n, struct vt_floor *f)
{
    int dim = vt_embed_dim(e);
    char probe[VT_FLOOR_PROBES][96];
    const char *pp[VT_FLOOR_PROBES];
    float *pv = vt_xcalloc(VT_FLOOR_PROBES * (size_t)dim, sizeof(float));
    float *tv = vt_xcalloc(N_TEXTS * (size_t)dim, sizeof(float));
    double chance[VT_FLOOR_PROBES];
    size_t m = 0;
    char err[256];

    for (int i = 0; i < VT_FLOOR_PROBES; i++) {
        vt_floor_probe(i, probe[i], sizeof(probe[i]));
        pp[i] = probe[i];
    }
    CHECK_INT(vt_embed_texts(e, pp, VT_FLOOR_PROBES, pv, err, sizeof(err)), 0);
    CHECK_INT(vt_embed_texts(e, (const char *const *)texts, n, tv, err, sizeof(err)), 0);
    for (int i = 0; i < VT_FLOOR_PROBES; i++) {
        double best = -2, norm = 0;
        for (int d = 0; d < dim; d++)
            norm += pv[i * dim + d] * pv[i * dim + d];
        if (norm == 0)
            continue;
        for (size_t j = 0; j < n; j++) {
            double c = 0;
            for (int d = 0; d < dim; d++)
                c += pv[i * dim + d] * tv[j * (size_t)dim + (size_t)d];
            best = c > best ? c : best;
        }
        chance[m++] = best;
    }
    memset(f, 0, sizeof(*f));
    vt_floor_from_scores(f, chance, m);
    free(pv);
    free(tv);
}

VT_TEST_STORE(floor_measured_kept_and_measured_again)
{
    char dir[64], err[256];
    struct vt_library *lib = NULL;
    struct vt_embed *e = NULL;
    struct vt_embed_spec spec = {.backend = "model2vec", .model = M2V_DIR};
    struct vt_floor f, want, *listed = NULL;
    size_t n = 0;
    int measured = -1;
    char *db = NULL;

    snprintf(dir, sizeof(dir), "/tmp/vt-unit-floor.XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    db = vt_test_library_db(dir);
    lib = vt_library_open(dir, VT_OPEN_CREATE, err, sizeof(err));
    CHECK(lib != NULL);
    CHECK_INT(vt_embed_open(&spec, &e, err, sizeof(err)), 0);
    if (!lib || !e)
        goto out;
    /* no vectors yet: nothing measured, nothing passes, nothing kept */
    CHECK_INT(vt_floor_get(lib, e, &f, &measured, err, sizeof(err)), 0);
    CHECK_INT(measured, 0);
    CHECK_INT(f.probes, 0);
    CHECK_INT(vt_floor_judge(&f, 1.0), VT_REL_NONE);
    char *file = vt_xasprintf("%s/calibration.json", dir);
    CHECK(access(file, F_OK) != 0);
    free(file);
    CHECK_INT(put_vectors(lib, e, "one", 0, 4), 0);

    CHECK_INT(vt_floor_get(lib, e, &f, &measured, err, sizeof(err)), 0);
    CHECK_INT(measured, 1);
    expected_floor(e, 4, &want);
    CHECK_STR(f.space, vt_embed_id(e));
    CHECK_INT(f.vectors, 4);
    CHECK_INT(f.probes, want.probes);
    CHECK(f.probes > VT_FLOOR_PROBES / 2); /* the model knows most probes' pieces */
    /* float32 in the index, double here */
    CHECK(fabs(f.floor - want.floor) < 1e-5);
    CHECK(fabs(f.chance_mean - want.chance_mean) < 1e-5);
    CHECK(f.floor > f.chance_mean && f.strong > f.floor);

    /* kept: in memory, then in the file for another process */
    CHECK_INT(vt_floor_get(lib, e, &f, &measured, err, sizeof(err)), 0);
    CHECK_INT(measured, 0);
    CHECK_INT(vt_floor_list(dir, &listed, &n, err, sizeof(err)), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_STR(listed[0].space, vt_embed_id(e));
        CHECK(fabs(listed[0].floor - f.floor) < 1e-9);
        CHECK_INT(listed[0].vectors, 4);
    }
    free(listed);

    /* half as many vectors again: measured again, on six */
    CHECK_INT(put_vectors(lib, e, "two", 4, 6), 0);
    CHECK_INT(vt_floor_get(lib, e, &f, &measured, err, sizeof(err)), 0);
    CHECK_INT(measured, 1);
    CHECK_INT(f.vectors, 6);
    expected_floor(e, 6, &want);
    CHECK(fabs(f.floor - want.floor) < 1e-5);
    vt_library_close(lib);

    /* a file that is not sound is not believed: another handle measures again */
    char *path = vt_xasprintf("%s/calibration.json", dir);
    static const char *const bad[] = {
        "{\"spaces\": [{\"space\": \"x\"}]}", "not json", "{\"spaces\": 3}",
        "{\"spaces\": [{\"space\": \"%s\", \"vectors\": 6, \"max_id\": 1e300, \"probes\": 48, "
        "\"chance_mean\": 0, \"chance_sd\": 0, \"chance_max\": 0, \"floor\": -5, \"strong\": "
        "0, \"measured\": 0}]}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        struct vt_sb body = {0};
        const char *at = strstr(bad[i], "%s");
        vt_sb_add(&body, bad[i], at ? (size_t)(at - bad[i]) : strlen(bad[i]));
        if (at) {
            vt_sb_adds(&body, vt_embed_id(e));
            vt_sb_adds(&body, at + 2);
        }
        CHECK_INT(vt_write_file_atomic(path, body.buf, body.len, err, sizeof(err)), 0);
        vt_sb_release(&body);
        CHECK_INT(vt_floor_list(dir, &listed, &n, err, sizeof(err)), 0);
        CHECK_INT(n, 0);
        free(listed);
        /* the kept floor of this process is still good: a fresh process has none */
    }
    free(path);
    lib = vt_library_open(dir, VT_OPEN_READ, err, sizeof(err));
    CHECK(lib != NULL);
    if (lib) {
        CHECK_INT(vt_floor_get(lib, e, &f, &measured, err, sizeof(err)), 0);
        CHECK_INT(measured, 0); /* from memory: six vectors still */
        CHECK(fabs(f.floor - want.floor) < 1e-5);
    }
out:
    vt_embed_close(e);
    vt_library_close(lib);
    vt_rm_rf(dir);
    vt_test_db_free(db);
}
