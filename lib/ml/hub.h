/*
 * Pulling a model from a Hugging Face-compatible hub into the library (libcurl; the
 * front binary does not link it, so `models pull` runs in vidtheque-full). The hub is
 * $HF_ENDPOINT when set (as for the official client), else https://huggingface.co;
 * $HF_TOKEN, when set, is sent to it as a Bearer token (private and gated repos).
 *
 * A pull asks the hub which commit the revision is at (GET /api/models/REPO/revision/REV)
 * and what files it holds (GET /api/models/REPO/tree/COMMIT), downloads the files a
 * Model2Vec model needs (model.safetensors, tokenizer.json, config.json; README.md,
 * LICENSE and modules.json when present), or those of an image model (its one .tflite
 * file: the one a known name says, else the only one at the top of the tree; README.md
 * and LICENSE when present), from /REPO/resolve/COMMIT/PATH, following
 * redirects to http(s) only (large files live on a CDN), into
 * LIBRARY/models/.partial/<folder>/, where an interrupted download is continued with a
 * Range request the next time (a server that ignores Range is read from the start).
 * Each file is checked against the size the hub lists and its digest (the SHA-256 of
 * an LFS file; the git blob id, a SHA-1, of a small one), a manifest.json records the
 * repo, revision, commit and every file's size and SHA-256, and the whole folder is
 * renamed into LIBRARY/models/<folder> in one step: a failed pull installs nothing. An
 * image model's manifest says "kind": "image" and, for a known name, the embedding
 * tensor frame_embed uses. A known Whisper name (models.h) fetches model.safetensors,
 * config.json and generation_config.json, and its manifest says "kind": "speech".
 */
#ifndef VT_HUB_H
#define VT_HUB_H

#include <stddef.h>
#include <stdint.h>

struct vt_hub_opts {
    const char *endpoint; /* NULL: $HF_ENDPOINT, else https://huggingface.co */
    const char *revision; /* branch, tag or commit; NULL: "main" */
    /* Bytes of file path received so far (done) out of total; called often. */
    void (*progress)(void *user, const char *path, uint64_t done, uint64_t total);
    /* An informational line ("resuming 'x' at N bytes"), without newline. */
    void (*note)(void *user, const char *msg);
    void *user;
    /* A hub that drips costs a bounded time: the whole pull is abandoned past deadline_s
     * (0: VT_HUB_DEADLINE_S), and a transfer that receives less than min_rate bytes a
     * second over any rate_window_s (0: VT_HUB_MIN_RATE, VT_HUB_RATE_WINDOW_S) too, each
     * with its reason; neither is retried. */
    double deadline_s;
    double min_rate;
    double rate_window_s;
};

#define VT_HUB_DEADLINE_S    (6 * 3600.0) /* the 2 GiB cap at 100 kB/s */
#define VT_HUB_MIN_RATE      10000.0      /* bytes a second: a 50 MiB file within 90 min */
#define VT_HUB_RATE_WINDOW_S 30.0

struct vt_hub_result {
    char repo[256];
    char folder[4096]; /* the installed folder */
    char commit[41];
    int already; /* 1: that commit was installed already, nothing was done */
    int image;   /* 1: an image model (a .tflite file), 0: a text one (Model2Vec) */
    int speech;  /* 1: a speech model (Whisper) */
    int n_files;
    uint64_t bytes;
};

/*
 * Pull model name (a repo id or a short name, models.h) into LIBRARY/models/. 0 with
 * res filled; else VT_EINVAL (bad name, a repo without the model's files, a file over
 * its size cap), VT_ENOTFOUND (no such repo or revision), VT_EIO (network, a digest
 * that does not match, the disk) or VT_EBUSY (another pull of that model is running),
 * with one line in err naming the file and the reason.
 */
int vt_hub_pull(const char *lib_dir, const char *name, const struct vt_hub_opts *opts,
                struct vt_hub_result *res, char *err, size_t errlen);

#endif
