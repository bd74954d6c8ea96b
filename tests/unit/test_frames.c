/*
 * Unit tests for frames by likeness: the store's vector kinds (text_embed and frame_embed
 * replace only their own), the reuse rows (both directions, replaced, removed with the
 * video), the same-footage pass (vt_find_reuse: hash, cosine and words must all agree,
 * runs of two frames or more, spans from the shots) and "more like this"
 * (vt_similar_frames: the frame itself left out, a duplicate standing for its original,
 * bad arguments).
 */
#include "base/util.h"
#include "core/library.h"
#include "harness.h"
#include "ml/embed.h"
#include "pgtest.h"
#include "search/vecsearch.h"
#include "stages/frame_embed.h"
#include "store/store.h"
#include "vidtheque.h"
#include "visual/keyframe.h"
#include "visual/ocr.h"

#include <stdlib.h>
#include <unistd.h>

#define D     8
#define SPACE "unit:visual"

static char *test_db; /* the running test's database on PostgreSQL (pgtest.h) */

static struct vt_library *scratch(char *dir, size_t n)
{
    char err[256];

    snprintf(dir, n, "/tmp/vt-unit-frames.XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    test_db = vt_test_library_db(dir);
    return vt_library_open(dir, VT_OPEN_CREATE, err, sizeof(err));
}

/* Unit vector number k (k % D on one axis, tilted by tilt on the next). */
static void vec(float *v, int k, float tilt)
{
    memset(v, 0, sizeof(float) * D);
    v[k % D] = 1;
    v[(k + 1) % D] = tilt;
    vt_vec_normalize(v, D);
}

/* A video of nf frames, frame i in shot i (10 s each, frame at 10 i + 2), hash hashes[i],
 * vector vecs[i]; frame dup (if >= 0) a duplicate of frame 0. */
static int put(struct vt_library *lib, const char *id, int nf, const uint64_t *hashes,
               const float *vecs, int dup)
{
    struct vt_video_rec rec = {0};
    struct vt_kf_result r = {0};
    struct vt_vec_rec recs[16];
    char key[64];
    int rc, nv = 0;

    snprintf(rec.id, sizeof(rec.id), "%s", id);
    snprintf(key, sizeof(key), "unit:%s", id);
    rec.content_key = key;
    rec.source_kind = "file";
    rec.title = (char *)id;
    rec.index_state = VT_INDEX_READY;
    rec.data_status = VT_DATA_OK;
    r.n_shots = r.n_frames = (size_t)nf;
    r.shots = vt_xcalloc((size_t)nf, sizeof(*r.shots));
    r.frames = vt_xcalloc((size_t)nf, sizeof(*r.frames));
    for (int i = 0; i < nf; i++) {
        r.shots[i] = (struct vt_kf_shot){
            .start_s = i * 10.0, .end_s = i * 10.0 + 10.0, .captured = 1, .kept = 1};
        r.frames[i] = (struct vt_kf_frame){.index = i,
                                           .t_s = i * 10.0 + 2,
                                           .shot = i,
                                           .duplicate_of = i == dup ? 0 : -1,
                                           .bytes = 10,
                                           .width = 64,
                                           .height = 36,
                                           .phash = hashes[i]};
        snprintf(r.frames[i].file, sizeof(r.frames[i].file), "%d.jpg", i);
        if (i != dup)
            recs[nv++] = (struct vt_vec_rec){VT_VEC_VISUAL, i, i * 10.0 + 2, i * 10.0 + 2,
                                             vecs + (size_t)i * D};
    }
    rc = vt_store_begin(lib->store);
    if (!rc)
        rc = vt_store_video_insert(lib->store, &rec);
    if (!rc)
        rc = vt_store_keyframes_replace(lib->store, id, &r, "frames/x");
    if (!rc)
        rc = vt_store_vectors_replace_kinds(lib->store, id, VT_VEC_VISUAL_KINDS, SPACE, D, recs,
                                            (size_t)nv);
    rc = rc ? (vt_store_rollback(lib->store), rc) : vt_store_commit(lib->store);
    free(r.shots);
    free(r.frames);
    return rc;
}

/* A run of reused footage is stored in both directions, replaced, removed with a video */
static void reuse_stored_both_ways(struct vt_library *lib)
{
    struct vt_reuse *runs = NULL;
    size_t n = 0;
    struct vt_reuse one = {.other_id = "o",
                           .start_s = 20,
                           .end_s = 50,
                           .other_start_s = 40,
                           .other_end_s = 70,
                           .similarity = 0.99,
                           .frames = 3};
    CHECK_INT(vt_store_begin(lib->store), 0);
    CHECK_INT(vt_store_reuse_replace(lib->store, "n", &one, 1), 0);
    CHECK_INT(vt_store_commit(lib->store), 0);
    CHECK_INT(vt_store_reuse_of(lib->store, "o", &runs, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_STR(runs[0].other_id, "n");
        CHECK_STR(runs[0].other_title, "n");
        CHECK_NEAR(runs[0].start_s, 40, 1e-9);
        CHECK_NEAR(runs[0].other_end_s, 50, 1e-9);
    }
    vt_store_reuse_free(runs, n);
    char **ids;
    size_t nid;
    CHECK_INT(vt_store_reuse_videos(lib->store, &ids, &nid), 0);
    CHECK_INT(nid, 2);
    for (size_t i = 0; i < nid; i++)
        free(ids[i]);
    free(ids);
    CHECK_INT(vt_store_begin(lib->store), 0);
    CHECK_INT(vt_store_reuse_replace(lib->store, "o", NULL, 0), 0); /* o re-ran: nothing */
    CHECK_INT(vt_store_commit(lib->store), 0);
    CHECK_INT(vt_store_reuse_of(lib->store, "n", &runs, &n), 0);
    CHECK_INT(n, 0);
    vt_store_reuse_free(runs, n);
    CHECK_INT(vt_store_begin(lib->store), 0);
    CHECK_INT(vt_store_reuse_replace(lib->store, "n", &one, 1), 0);
    CHECK_INT(vt_store_video_delete(lib->store, "o"), 0);
    CHECK_INT(vt_store_commit(lib->store), 0);
    CHECK_INT(vt_store_reuse_of(lib->store, "n", &runs, &n), 0);
    CHECK_INT(n, 0);
    vt_store_reuse_free(runs, n);
}

VT_TEST_STORE(frames_same_footage)
{
    char dir[64];
    struct vt_library *lib = scratch(dir, sizeof(dir));
    uint64_t hn[8], ho[8], hx[8];
    float vn[8 * D], vo[8 * D], vx[8 * D];

    CHECK(lib != NULL);
    if (!lib)
        return;
    for (int i = 0; i < 8; i++) {
        hn[i] = 0x1111111111111111ull * (uint64_t)(i + 1);
        ho[i] = ~hn[i];      /* far from everything of n ... */
        hx[i] = hn[i] ^ 0x3; /* 2 bits from n's: passes the hash */
        vec(vn + i * D, i, 0);
        vec(vo + i * D, i + 3, 0.5f);
        vec(vx + i * D, i, 0.2f); /* cosine 0.98 with n's: fails the embedding */
    }
    /* ... except o's frames 4, 5, 6 show n's frames 2, 3, 4 (a bit re-encoded) */
    for (int k = 0; k < 3; k++) {
        ho[4 + k] = hn[2 + k] ^ 0x10;
        vec(vo + (4 + k) * D, 2 + k, 0.01f);
    }
    /* and o's frame 1 alone shows n's frame 7: one frame is no run */
    ho[1] = hn[7];
    vec(vo + 1 * D, 7, 0);
    CHECK_INT(put(lib, "o", 8, ho, vo, -1), 0);
    CHECK_INT(put(lib, "x", 8, hx, vx, -1), 0);
    CHECK_INT(put(lib, "n", 8, hn, vn, -1), 0);

    struct vt_fe_frame mine[8];
    for (int i = 0; i < 8; i++)
        mine[i] = (struct vt_fe_frame){i, i, i * 10.0 + 2, hn[i], vn + i * D, NULL};
    struct vt_reuse *runs = NULL;
    size_t n = 0;
    CHECK_INT(vt_find_reuse(lib, "n", mine, 8, SPACE, D, &runs, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_STR(runs[0].other_id, "o");
        CHECK_NEAR(runs[0].start_s, 20, 1e-9);
        CHECK_NEAR(runs[0].end_s, 50, 1e-9);
        CHECK_NEAR(runs[0].other_start_s, 40, 1e-9);
        CHECK_NEAR(runs[0].other_end_s, 70, 1e-9);
        CHECK_INT(runs[0].frames, 3);
        CHECK(runs[0].similarity > 0.999 && runs[0].similarity <= 1.0001);
    }

    /* the words read: slides with other words are not the same picture */
    struct vt_ocr_line la = {(char *)"Results market garden window", 0.9, {0, 0, 1, 1}, 0};
    struct vt_ocr_line lb = {(char *)"Summary teacher student program", 0.9, {0, 0, 1, 1}, 0};
    struct vt_ocr_page pa = {&la, 1}, pb = {&lb, 1};
    CHECK_INT(vt_store_begin(lib->store), 0);
    CHECK_INT(vt_store_ocr_replace(lib->store, "o", (int[]){5}, &pb, 1), 0);
    CHECK_INT(vt_store_commit(lib->store), 0);
    mine[3].ocr = &pa; /* n's frame 3 reads other words than o's frame 5 */
    vt_store_reuse_free(runs, n);
    CHECK_INT(vt_find_reuse(lib, "n", mine, 8, SPACE, D, &runs, &n), 0);
    /* the pair (3, 5) is gone; (2, 4) and (4, 6) are two frames on in both: still a run */
    CHECK_INT(n, 1);
    if (n == 1)
        CHECK_INT(runs[0].frames, 2);
    vt_store_reuse_free(runs, n);
    mine[3].ocr = NULL;

    reuse_stored_both_ways(lib);
    vt_library_close(lib);
    vt_rm_rf(dir);
    vt_test_db_free(test_db);
    test_db = NULL;
}

VT_TEST_STORE(frames_vector_kinds_and_similar)
{
    char dir[64];
    struct vt_library *lib = scratch(dir, sizeof(dir));
    uint64_t h[4] = {1, 2, 3, 4};
    float v[4 * D], t[D];
    char err[256];

    CHECK(lib != NULL);
    if (!lib)
        return;
    for (int i = 0; i < 4; i++)
        vec(v + i * D, 0, 0.1f * (float)i);  /* 0 nearest 1, then 2, 3 */
    CHECK_INT(put(lib, "a", 4, h, v, 3), 0); /* frame 3 repeats frame 0 */
    CHECK_INT(put(lib, "b", 4, h, v, -1), 0);
    /* text_embed's vectors come and go without touching the pictures' */
    vec(t, 2, 0);
    struct vt_vec_rec tr = {VT_VEC_CHUNK, 0, 0, 5, t};
    CHECK_INT(vt_store_begin(lib->store), 0);
    CHECK_INT(vt_store_vectors_replace(lib->store, "a", "unit:text", D, &tr, 1), 0);
    CHECK_INT(vt_store_vectors_clear(lib->store, "a"), 0);
    CHECK_INT(vt_store_commit(lib->store), 0);
    int *refs;
    float *vs;
    size_t n;
    CHECK_INT(vt_store_vectors_of(lib->store, "a", VT_VEC_VISUAL, SPACE, D, &refs, &vs, &n), 0);
    CHECK_INT(n, 3);
    free(refs);
    free(vs);

    struct vt_lookalike *s;
    CHECK_INT(vt_similar_frames(lib, "a", 3, 10, &s, &n, err, sizeof(err)), 0);
    CHECK_INT(n, 6); /* a's 1, 2 and b's 0..3; a's frame 0 (what 3 repeats) left out */
    if (n == 6) {
        CHECK(s[0].score >= s[n - 1].score);
        CHECK_STR(s[0].video_id, "b");
        CHECK_INT(s[0].frame, 0);
        CHECK_NEAR(s[0].t_s, 2, 1e-9);
        CHECK(s[0].path && !strcmp(s[0].path, "frames/x/0.jpg"));
        for (size_t i = 0; i < n; i++)
            CHECK(!(strcmp(s[i].video_id, "a") == 0 && (s[i].frame == 0 || s[i].frame == 3)));
    }
    vt_lookalike_free(s, n);
    CHECK_INT(vt_similar_frames(lib, "a", 0, 2, &s, &n, err, sizeof(err)), 0);
    CHECK_INT(n, 2);
    vt_lookalike_free(s, n);
    CHECK_INT(vt_similar_frames(lib, "a", 4, 2, &s, &n, err, sizeof(err)), VT_ENOTFOUND);
    CHECK_INT(vt_similar_frames(lib, "zz", 0, 2, &s, &n, err, sizeof(err)), VT_ENOTFOUND);
    CHECK_INT(vt_similar_frames(lib, "a", 0, 0, &s, &n, err, sizeof(err)), VT_EINVAL);
    CHECK_INT(vt_similar_frames(lib, "a", 0, 101, &s, &n, err, sizeof(err)), VT_EINVAL);
    CHECK_INT(vt_similar_frames(lib, "a", -1, 2, &s, &n, err, sizeof(err)), VT_EINVAL);
    char *j = vt_lookalike_json("a", 0, NULL, 0);
    CHECK_STR(j, "{\"video_id\":\"a\",\"frame\":0,\"results\":[]}");
    free(j);
    vt_library_close(lib);
    vt_rm_rf(dir);
    vt_test_db_free(test_db);
    test_db = NULL;
}
