/*
 * The relevance floor of a vector space (floor.h): probes that cannot match, their
 * chance scores against the space's vectors, and the floor kept in memory and in
 * LIBRARY/calibration.json.
 */
#include "search/floor.h"

#include "base/util.h"
#include "core/library.h"
#include "ml/embed.h"
#include "ml/vindex.h"
#include "search/search_int.h"
#include "search/vecsearch.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOOR_FILE     "calibration.json"
#define FLOOR_FILE_MAX (1 << 20) /* a file larger than this is not ours: measured again */
#define FLOOR_SDS      3.0       /* the floor: the chance mean plus this many deviations */
#define FLOOR_STRONG   0.25      /* "strong": this share of the way from the floor to 1 */
#define FLOOR_SPACES   64        /* spaces kept in the file (the newest) */
#define FLOOR_METHOD   3 /* how floors are measured: a file's of another method is not used */

/* Common words whose letters a probe shuffles: shuffled, they say nothing. */
static const char *const common[] = {
    "people",  "would",   "about",  "which",  "their",  "there",   "other",  "after",
    "first",   "never",   "these",  "think",  "where",  "being",   "every",  "great",
    "might",   "shall",   "still",  "those",  "while",  "should",  "house",  "world",
    "again",   "place",   "under",  "little", "water",  "called",  "number", "sound",
    "letter",  "mother",  "answer", "found",  "study",  "learn",   "plant",  "cover",
    "between", "country", "school", "father", "always", "picture", "better", "change",
};

/* Words of every day, one or two of which make a probe: what a query of real words that
 * have nothing to do with the library scores by chance. Some may be in a library: the
 * floor takes a high percentile, not the best, of the chance scores. */
static const char *const everyday[] = {
    "umbrella", "violin",   "giraffe",   "pillow",    "saddle",   "ladder",     "tennis",
    "lemonade", "chimney",  "blanket",   "carpet",    "whistle",  "parrot",     "button",
    "trumpet",  "cabbage",  "helmet",    "slipper",   "kettle",   "donkey",     "mirror",
    "sandwich", "bicycle",  "scissors",  "necklace",  "pumpkin",  "tortoise",   "lantern",
    "hammock",  "cupboard", "eyebrow",   "wardrobe",  "doughnut", "anchor",     "bracelet",
    "cushion",  "dolphin",  "envelope",  "feather",   "goggles",  "hedgehog",   "iceberg",
    "jigsaw",   "kangaroo", "lobster",   "mattress",  "napkin",   "octopus",    "penguin",
    "quilt",    "raccoon",  "spinach",   "teapot",    "unicorn",  "vinegar",    "walrus",
    "yogurt",   "zipper",   "balcony",   "cinnamon",  "dentist",  "elbow",      "flamingo",
    "gossip",   "hiccup",   "invoice",   "jellyfish", "knitting", "lullaby",    "marmalade",
    "nostril",  "omelette", "pyjamas",   "raisin",    "sneeze",   "tambourine", "toothbrush",
    "vacuum",   "waffle",   "accordion", "broccoli",  "crayon",   "dumpling",   "earring",
};

/* xorshift32, seeded per probe: the same probes on every machine */
static uint32_t next_rand(uint32_t *s)
{
    uint32_t x = *s;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

void vt_floor_probe(int i, char *buf, size_t len)
{
    uint32_t s = 2463534242u ^ (uint32_t)(i + 1) * 2654435761u;
    int words = 1 + (int)(next_rand(&s) % (i % 3 == 2 ? 2 : 3));
    size_t n = 0;

    if (!len)
        return;
    buf[0] = '\0';
    for (int w = 0; w < words; w++) {
        char word[16];
        size_t k;
        if (i % 3 == 2) { /* a word of every day */
            const char *c = everyday[next_rand(&s) % (sizeof(everyday) / sizeof(*everyday))];
            k = strlen(c) < sizeof(word) ? strlen(c) : sizeof(word) - 1;
            memcpy(word, c, k);
        } else if (i % 3 == 0) { /* random letters, 4 to 9 of them */
            k = 4 + next_rand(&s) % 6;
            for (size_t j = 0; j < k; j++)
                word[j] = (char)('a' + next_rand(&s) % 26);
        } else { /* a common word, its letters shuffled */
            const char *c = common[next_rand(&s) % (sizeof(common) / sizeof(*common))];
            k = strlen(c);
            memcpy(word, c, k);
            for (size_t j = k - 1; j > 0; j--) {
                size_t r = next_rand(&s) % (j + 1);
                char t = word[j];
                word[j] = word[r];
                word[r] = t;
            }
        }
        word[k] = '\0';
        int m = snprintf(buf + n, len - n, "%s%s", w ? " " : "", word);
        if (m < 0 || (size_t)m >= len - n)
            break;
        n += (size_t)m;
    }
}

void vt_floor_from_scores(struct vt_floor *f, const double *chance, size_t n)
{
    double sum = 0, sq = 0, top = -2, second = -2;

    for (size_t i = 0; i < n; i++) {
        sum += chance[i];
        if (chance[i] > top) {
            second = top;
            top = chance[i];
        } else if (chance[i] > second) {
            second = chance[i];
        }
    }
    f->probes = (int)n;
    f->chance_mean = n ? sum / (double)n : 0;
    for (size_t i = 0; i < n; i++)
        sq += (chance[i] - f->chance_mean) * (chance[i] - f->chance_mean);
    f->chance_sd = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
    f->chance_max = n ? top : 0;
    if (!n) { /* nothing measured: nothing stands above chance */
        f->floor = f->strong = 2;
        return;
    }
    /* the second best, not the best: an everyday word may be one the library is about */
    if (n == 1)
        second = top;
    f->floor = f->chance_mean + FLOOR_SDS * f->chance_sd;
    /* not above the best: a cosine above every probe's is above chance (in a space of few
     * dimensions chance scores spread wide, and three deviations pass 1) */
    if (f->floor > top)
        f->floor = top;
    if (second > f->floor)
        f->floor = second;
    /* a cosine equal to a chance score is chance: the floor is just above it */
    f->floor = nextafter(f->floor, 2.0);
    f->strong = f->floor < 1 ? f->floor + FLOOR_STRONG * (1 - f->floor) : f->floor;
}

enum vt_relevance vt_floor_judge(const struct vt_floor *f, double c)
{
    if (!(c >= f->floor))
        return VT_REL_NONE;
    return c >= f->strong ? VT_REL_STRONG : VT_REL_WEAK;
}

int vt_floor_stale(const struct vt_floor *f, int64_t count, int64_t max_id)
{
    int64_t tenth = f->vectors / 10;
    int64_t diff = count > f->vectors ? count - f->vectors : f->vectors - count;

    /* ids only grow: rows with an id above the measured highest came since */
    return f->probes <= 0 || diff > tenth || max_id < f->max_id || max_id - f->max_id > tenth;
}

/* ---- kept in memory and in the library's file ---- */

struct kept {
    char *key; /* the library's real path, a newline, the space */
    struct vt_floor f;
    struct kept *next;
};

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept *kept_list;

static int kept_find(const char *key, struct vt_floor *f)
{
    int found = 0;

    pthread_mutex_lock(&kept_lock);
    for (struct kept *k = kept_list; k; k = k->next)
        if (!strcmp(k->key, key)) {
            *f = k->f;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&kept_lock);
    return found;
}

static void kept_put(const char *key, const struct vt_floor *f)
{
    struct kept *k;

    pthread_mutex_lock(&kept_lock);
    for (k = kept_list; k && strcmp(k->key, key); k = k->next)
        ;
    if (!k) {
        k = vt_xcalloc(1, sizeof(*k));
        k->key = vt_xstrdup(key);
        k->next = kept_list;
        kept_list = k;
    }
    k->f = *f;
    pthread_mutex_unlock(&kept_lock);
}

/* A number of o's member name, or NAN when missing or not a number. */
static double jnum(json_t *o, const char *name)
{
    json_t *v = json_object_get(o, name);

    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One floor from its JSON object: 0, or -1 when it is not a sound one. */
static int floor_from_json(json_t *o, struct vt_floor *f)
{
    const char *space = json_string_value(json_object_get(o, "space"));
    double v[9] = {jnum(o, "vectors"),     jnum(o, "max_id"),    jnum(o, "probes"),
                   jnum(o, "chance_mean"), jnum(o, "chance_sd"), jnum(o, "chance_max"),
                   jnum(o, "floor"),       jnum(o, "strong"),    jnum(o, "measured")};

    memset(f, 0, sizeof(*f));
    if (!space || strlen(space) >= sizeof(f->space) || jnum(o, "method") != FLOOR_METHOD)
        return -1;
    for (int i = 0; i < 9; i++)
        if (!isfinite(v[i]) || fabs(v[i]) > 9e15)
            return -1;
    if (v[0] < 0 || v[1] < 0 || v[2] < 1 || v[2] > VT_FLOOR_PROBES || v[6] < -1 || v[6] > 2 ||
        v[7] < v[6] || v[7] > 2)
        return -1;
    snprintf(f->space, sizeof(f->space), "%s", space);
    const char *model = json_string_value(json_object_get(o, "model"));
    snprintf(f->model, sizeof(f->model), "%s", model ? model : "");
    f->vectors = (int64_t)v[0];
    f->max_id = (int64_t)v[1];
    f->probes = (int)v[2];
    f->chance_mean = v[3];
    f->chance_sd = v[4];
    f->chance_max = v[5];
    f->floor = v[6];
    f->strong = v[7];
    f->measured = (long long)v[8];
    return 0;
}

static json_t *floor_to_json(const struct vt_floor *f)
{
    json_t *o = json_object();

    json_object_set_new(o, "method", json_integer(FLOOR_METHOD));
    json_object_set_new(o, "space", json_string(f->space));
    json_object_set_new(o, "model", json_string(f->model));
    json_object_set_new(o, "vectors", json_integer(f->vectors));
    json_object_set_new(o, "max_id", json_integer(f->max_id));
    json_object_set_new(o, "probes", json_integer(f->probes));
    json_object_set_new(o, "chance_mean", json_real(f->chance_mean));
    json_object_set_new(o, "chance_sd", json_real(f->chance_sd));
    json_object_set_new(o, "chance_max", json_real(f->chance_max));
    json_object_set_new(o, "floor", json_real(f->floor));
    json_object_set_new(o, "strong", json_real(f->strong));
    json_object_set_new(o, "measured", json_integer(f->measured));
    return o;
}

/* The file's "spaces" array (a new reference, an empty array when there is none or it
 * is not ours). */
static json_t *file_read(const char *dir)
{
    char *path = vt_xasprintf("%s/" FLOOR_FILE, dir);
    char *data = NULL, err[256];
    size_t len = 0;
    json_t *doc = NULL, *arr;

    if (!vt_read_file_capped(path, "calibration", FLOOR_FILE_MAX, &data, &len, err, sizeof(err)))
        doc = json_loadb(data, len, 0, NULL);
    free(data);
    free(path);
    arr = json_object_get(doc, "spaces");
    arr = json_is_array(arr) ? json_incref(arr) : json_array();
    json_decref(doc);
    return arr;
}

int vt_floor_list(const char *dir, struct vt_floor **out, size_t *n, char *err, size_t errlen)
{
    json_t *arr = file_read(dir);
    size_t m = json_array_size(arr);
    struct vt_floor *f = vt_xcalloc(m + 1, sizeof(*f));

    *n = 0;
    for (size_t i = 0; i < m; i++)
        if (!floor_from_json(json_array_get(arr, i), &f[*n]))
            (*n)++;
    json_decref(arr);
    *out = f;
    return 0;
}

/* The file's floor of space into f: 0, or -1 when it holds none. */
static int file_find(const char *dir, const char *space, struct vt_floor *f)
{
    json_t *arr = file_read(dir);
    int rc = -1;

    for (size_t i = 0; rc && i < json_array_size(arr); i++) {
        json_t *o = json_array_get(arr, i);
        const char *s = json_string_value(json_object_get(o, "space"));
        if (s && !strcmp(s, space))
            rc = floor_from_json(o, f);
    }
    json_decref(arr);
    return rc;
}

/* f put in the file in place of the space's old one, the newest first; best effort (a
 * read-only library keeps its floors in memory). */
static void file_put(const char *dir, const struct vt_floor *f)
{
    json_t *old = file_read(dir), *arr = json_array(), *doc = json_object();
    char *path = vt_xasprintf("%s/" FLOOR_FILE, dir);
    char err[256];

    json_array_append_new(arr, floor_to_json(f));
    for (size_t i = 0; i < json_array_size(old) && json_array_size(arr) < FLOOR_SPACES; i++) {
        json_t *o = json_array_get(old, i);
        const char *s = json_string_value(json_object_get(o, "space"));
        if (s && strcmp(s, f->space))
            json_array_append(arr, o);
    }
    json_object_set_new(doc, "about",
                        json_string("relevance floors of the library's vector "
                                    "spaces (vidtheque measures them again "
                                    "when needed; safe to delete)"));
    json_object_set_new(doc, "spaces", arr);
    char *s = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    if (s)
        (void)vt_write_file_atomic(path, s, strlen(s), err, sizeof(err));
    free(s);
    free(path);
    json_decref(doc);
    json_decref(old);
}

/* Measure the floor of e's space, which holds count vectors up to max_id. */
static int measure(struct vt_library *lib, struct vt_embed *e, int64_t count, int64_t max_id,
                   struct vt_floor *f, char *err, size_t errlen)
{
    int dim = vt_embed_dim(e);
    char text[VT_FLOOR_PROBES][96];
    const char *texts[VT_FLOOR_PROBES];
    float *qv = vt_xmalloc(sizeof(float) * VT_FLOOR_PROBES * (size_t)dim);
    double chance[VT_FLOOR_PROBES];
    size_t n = 0;
    int rc;

    for (int i = 0; i < VT_FLOOR_PROBES; i++) {
        vt_floor_probe(i, text[i], sizeof(text[i]));
        texts[i] = text[i];
    }
    rc = vt_embed_texts(e, texts, VT_FLOOR_PROBES, qv, err, errlen);
    for (int i = 0; !rc && i < VT_FLOOR_PROBES; i++) {
        const float *v = qv + (size_t)i * (size_t)dim;
        struct vt_vhit best;
        size_t m = 0;
        float norm = 0;
        for (int d = 0; d < dim; d++)
            norm += v[d] * v[d];
        if (norm == 0) /* no token the model knows: no vector, no chance score */
            continue;
        rc = vt_vecsearch_nearest(lib, vt_embed_id(e), dim, v, 1, NULL, NULL, &best, &m, err,
                                  errlen);
        if (!rc && m)
            chance[n++] = best.score;
    }
    free(qv);
    if (rc)
        return rc;
    memset(f, 0, sizeof(*f));
    snprintf(f->space, sizeof(f->space), "%s", vt_embed_id(e));
    snprintf(f->model, sizeof(f->model), "%s", vt_embed_model(e));
    f->vectors = count;
    f->max_id = max_id;
    f->measured = (long long)vt_wall_s();
    vt_floor_from_scores(f, chance, n);
    return 0;
}

int vt_floor_get(struct vt_library *lib, struct vt_embed *e, struct vt_floor *f, int *measured,
                 char *err, size_t errlen)
{
    const char *space = vt_embed_id(e);
    char *real = realpath(lib->dir, NULL);
    char *key = vt_xasprintf("%s\n%s", real ? real : lib->dir, space);
    int64_t count = 0, max_id = 0;
    int rc = 0;

    free(real);
    if (measured)
        *measured = 0;
    if (vt_vecsearch_loaded(lib, space, vt_embed_dim(e), &count, &max_id)) {
        /* not searched yet by this handle: the database says */
        rc = vt_store_vectors_stat(lib->store, space, &count, &max_id);
        if (rc) {
            free(key);
            return vt_err(err, errlen, rc, "%s", vt_store_errmsg(lib->store));
        }
    }
    if (count == 0) { /* nothing to find: nothing to measure */
        memset(f, 0, sizeof(*f));
        snprintf(f->space, sizeof(f->space), "%s", space);
        snprintf(f->model, sizeof(f->model), "%s", vt_embed_model(e));
        vt_floor_from_scores(f, NULL, 0);
        free(key);
        return 0;
    }
    if ((kept_find(key, f) && !vt_floor_stale(f, count, max_id)) ||
        (!file_find(lib->dir, space, f) && !vt_floor_stale(f, count, max_id))) {
        kept_put(key, f);
        free(key);
        return 0;
    }
    rc = measure(lib, e, count, max_id, f, err, errlen);
    if (!rc) {
        kept_put(key, f);
        file_put(lib->dir, f);
        if (measured)
            *measured = 1;
    }
    free(key);
    return rc;
}

void vt_search_floor_put(struct vt_search_floor *out, const char *signal, const struct vt_floor *f,
                         int measured)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->signal, sizeof(out->signal), "%s", signal);
    snprintf(out->space, sizeof(out->space), "%s", f->space);
    out->vectors = f->vectors;
    out->probes = f->probes;
    out->chance_mean = f->chance_mean;
    out->chance_sd = f->chance_sd;
    out->chance_max = f->chance_max;
    out->floor = f->floor;
    out->strong = f->strong;
    out->measured = measured;
}
