/*
 * Model2Vec embedding throughput on one core: builds chunks of about 60 words (drawn
 * by Zipf's law from the model's own vocabulary, in its order, with some capitals and
 * punctuation), then times a tokenising-only pass (vt_tokenizer_encode) and the full
 * embedding (vt_embed_texts, batches of 64) over the same chunks. Prints chunks/s of
 * both, and the embedding of chunks of uniformly drawn words (per CPU second of this thread, so
 * that a busy machine does not count), their ratio, and whether the embedding meets the target of
 * 50,000 chunks/s.
 *
 * usage: embed_bench MODEL_DIR [CHUNKS [ROUNDS]]
 */
#include "base/util.h"
#include "ml/embed.h"
#include "ml/tokenizer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of this thread: the machine may be shared, and "one core" is what counts */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The vocabulary's pieces that are whole lowercase words (pointers into tok); *nw is
 * how many. */
static const char **vocab_words(struct vt_tokenizer *tok, size_t *nw)
{
    size_t nv = vt_tokenizer_vocab_size(tok);
    const char **words = vt_xmalloc(nv * sizeof(*words));

    *nw = 0;
    for (size_t i = 0; i < nv; i++) {
        const char *p = vt_tokenizer_id_to_token(tok, (int32_t)i);
        if (!p)
            continue;
        if (strncmp(p, "\xe2\x96\x81", 3) == 0)
            p += 3;
        size_t n = strlen(p), k;
        for (k = 0; k < n && p[k] >= 'a' && p[k] <= 'z'; k++)
            ;
        if (n >= 2 && k == n)
            words[(*nw)++] = p;
    }
    return words;
}

/* One chunk of 45..75 words (mean 60) into sb, drawn by Zipf's law or, if !zipf,
 * uniformly; returns the number of words. */
static int random_chunk(struct vt_sb *sb, const char **words, size_t nw, int zipf)
{
    int n = 45 + (int)(next() % 31); /* 45..75, mean 60 */

    for (int w = 0; w < n; w++) {
        /* Zipf's law (frequency ~ 1/rank), as in natural text: rank = nw^u - 1 */
        double u = (double)(next() % 1000000) / 1000000.0;
        size_t rank = (size_t)(pow((double)nw + 1, u) - 1);
        if (!zipf)
            rank = (size_t)(next() % nw); /* the worst case for caching: every word alike */
        const char *word = words[rank < nw ? rank : nw - 1];
        if (w)
            vt_sb_addc(sb, ' ');
        if (next() % 12 == 0) {
            vt_sb_addc(sb, (char)(word[0] - 32));
            vt_sb_adds(sb, word + 1);
        } else {
            vt_sb_adds(sb, word);
        }
        if (next() % 10 == 0)
            vt_sb_addc(sb, ",.?!"[next() % 4]);
    }
    return n;
}

/* nchunks Zipf chunks into chunks (counting their words and bytes), then as many
 * uniform ones into flat. */
static void make_chunks(const char **words, size_t nw, size_t nchunks, char **chunks, char **flat,
                        size_t *total_words, size_t *total_bytes)
{
    for (size_t c = 0; c < 2 * nchunks; c++) {
        int zipf = c < nchunks;
        struct vt_sb sb = {0};
        int n = random_chunk(&sb, words, nw, zipf);
        if (!zipf) {
            flat[c - nchunks] = vt_sb_detach(&sb);
            continue;
        }
        *total_words += (size_t)n;
        *total_bytes += sb.len;
        chunks[c] = vt_sb_detach(&sb);
    }
}

/* Tokenise every chunk; returns the number of tokens. */
static size_t tokenise_all(struct vt_tokenizer *tok, char **chunks, size_t nchunks)
{
    size_t ntokens = 0;

    for (size_t c = 0; c < nchunks; c++) {
        const int32_t *ids;
        size_t n;
        vt_tokenizer_encode(tok, chunks[c], strlen(chunks[c]), &ids, &n);
        ntokens += n;
    }
    return ntokens;
}

/* Embed every chunk in batches of 64 into out (room for 64 vectors); exits on error. */
static void embed_all(struct vt_embed *e, char **chunks, size_t nchunks, float *out)
{
    char err[512];

    for (size_t c = 0; c < nchunks; c += 64) {
        size_t n = nchunks - c < 64 ? nchunks - c : 64;
        if (vt_embed_texts(e, (const char *const *)chunks + c, n, out, err, sizeof(err))) {
            fprintf(stderr, "embed_bench: %s\n", err);
            exit(1);
        }
    }
}

/* The best CPU times of each pass over the rounds, and the tokens of a chunk set */
struct timings {
    double tok, emb, flat;
    size_t ntokens;
};

static void time_rounds(struct vt_tokenizer *tok, struct vt_embed *e, char **chunks, char **flat,
                        size_t nchunks, int rounds, struct timings *best)
{
    float *out = vt_xmalloc(64 * (size_t)vt_embed_dim(e) * sizeof(*out));

    *best = (struct timings){1e30, 1e30, 1e30, 0};
    for (int r = 0; r < rounds; r++) {
        double t0 = cpu_s();
        best->ntokens = tokenise_all(tok, chunks, nchunks);
        double t1 = cpu_s();
        embed_all(e, chunks, nchunks, out);
        double t2 = cpu_s();
        embed_all(e, flat, nchunks, out);
        double t3 = cpu_s();
        if (t3 - t2 < best->flat)
            best->flat = t3 - t2;
        if (t1 - t0 < best->tok)
            best->tok = t1 - t0;
        if (t2 - t1 < best->emb)
            best->emb = t2 - t1;
    }
    free(out);
}

static void print_report(struct vt_embed *e, size_t nchunks, int rounds, size_t total_words,
                         size_t total_bytes, const struct timings *best)
{
    double tok_rate = (double)nchunks / best->tok, emb_rate = (double)nchunks / best->emb;

    printf("model           %s\n", vt_embed_model(e));
    printf("chunks          %zu (mean %.1f words, %.0f bytes, %.1f tokens), best of %d rounds\n",
           nchunks, (double)total_words / (double)nchunks, (double)total_bytes / (double)nchunks,
           (double)best->ntokens / (double)nchunks, rounds);
    printf("%-15s %12s %12s\n", "pass", "chunks/s", "MB/s");
    printf("%-15s %12.0f %12.1f\n", "tokenise only", tok_rate,
           (double)total_bytes / best->tok / 1e6);
    printf("%-15s %12.0f %12.1f\n", "embed", emb_rate, (double)total_bytes / best->emb / 1e6);
    printf("%-15s %12.0f %12s  (words drawn uniformly: few repeat, the worst case)\n",
           "embed, uniform", (double)nchunks / best->flat, "");
    printf("ratio           embed takes %.2fx the time of tokenising alone\n",
           best->emb / best->tok);
    printf("target          >= 50000 chunks/s on one core: %s (%.0f)\n",
           emb_rate >= 50000 ? "met" : "NOT met", emb_rate);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: embed_bench MODEL_DIR [CHUNKS [ROUNDS]]\n");
        return 2;
    }
    size_t nchunks = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 20000;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    char err[512];
    char *tokp = vt_xasprintf("%s/tokenizer.json", argv[1]);
    struct vt_tokenizer *tok = NULL;
    if (vt_tokenizer_load(tokp, &tok, err, sizeof(err)) != 0) {
        fprintf(stderr, "embed_bench: %s\n", err);
        return 1;
    }
    struct vt_embed_spec spec = {.backend = "model2vec", .model = argv[1]};
    struct vt_embed *e = NULL;
    if (vt_embed_open(&spec, &e, err, sizeof(err)) != 0) {
        fprintf(stderr, "embed_bench: %s\n", err);
        return 1;
    }

    size_t nw;
    const char **words = vocab_words(tok, &nw);
    if (!nw) {
        fprintf(stderr, "embed_bench: no words in the vocabulary\n");
        return 1;
    }
    char **chunks = vt_xmalloc(nchunks * sizeof(*chunks));
    char **flat = vt_xmalloc(nchunks * sizeof(*flat));
    size_t total_words = 0, total_bytes = 0;
    make_chunks(words, nw, nchunks, chunks, flat, &total_words, &total_bytes);

    struct timings best;
    time_rounds(tok, e, chunks, flat, nchunks, rounds, &best);
    print_report(e, nchunks, rounds, total_words, total_bytes, &best);

    for (size_t c = 0; c < nchunks; c++)
        free(chunks[c]), free(flat[c]);
    free(chunks);
    free(flat);
    free(words);
    free(tokp);
    vt_embed_close(e);
    vt_tokenizer_free(tok);
    return 0;
}
