/*
 * sdtune: shot detection without decoding again, for tuning and the transitions bench.
 *   sdtune dump FILE FEATS    pass 1 of the keyframe stage: features into FEATS (binary)
 *   sdtune detect FEATS       shot detection on them: JSON as kfdump prints it (shots[]
 *                             with their transition, frames[] the chosen frame of each)
 * FEATS is this build's struct vt_sd_feat array as it is in memory: not a file format.
 */
#include "base/util.h"
#include "visual/keyframe.h"
#include "visual/shotdetect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"start", "cut", "fade", "dissolve"};

static int dump(const char *media, const char *path)
{
    struct vt_sd_feat *f = NULL;
    size_t n = 0;
    char err[512] = "";
    FILE *fp;
    int rc = vt_kf_features(media, &f, &n, err, sizeof(err));

    if (rc) {
        fprintf(stderr, "sdtune: %s\n", err);
        return 1;
    }
    fp = fopen(path, "wb");
    if (!fp || fwrite(f, sizeof(*f), n, fp) != n || fclose(fp)) {
        fprintf(stderr, "sdtune: cannot write '%s'\n", path);
        free(f);
        return 1;
    }
    free(f);
    return 0;
}

static int detect(const char *path)
{
    FILE *fp = fopen(path, "rb");
    struct vt_sd_feat *f = NULL;
    struct vt_sd_shot *s = NULL;
    size_t n = 0, cap = 0, ns;

    if (!fp) {
        fprintf(stderr, "sdtune: cannot open '%s'\n", path);
        return 1;
    }
    for (;;) {
        vt_grow((void **)&f, &cap, n + 1, sizeof(*f));
        if (fread(&f[n], sizeof(*f), 1, fp) != 1)
            break;
        n++;
    }
    fclose(fp);
    ns = vt_sd_detect(f, n, &s);
    printf("{\"shots\": [\n");
    for (size_t i = 0; i < ns; i++) {
        double end = i + 1 < ns ? f[s[i + 1].first].t_s : f[n - 1].t_s;
        double t0 = f[s[i].span0].t_s, t1 = f[s[i].span1].t_s;

        /* as keyframe.c records them: a gradual span ends after its last frame */
        if (s[i].kind == VT_SD_CUT)
            t0 = t1 = f[s[i].first].t_s;
        else if (s[i].span1 + 1 < n)
            t1 = f[s[i].span1 + 1].t_s;
        printf("  {\"index\": %zu, \"start_s\": %.6f, \"end_s\": %.6f, \"transition\": ", i,
               i ? f[s[i].first].t_s : 0, end);
        if (i)
            printf("{\"kind\": \"%s\", \"start_s\": %.4f, \"end_s\": %.4f}", kind_names[s[i].kind],
                   t0, t1);
        else
            printf("null");
        printf(", \"stable_s\": [%.4f, %.4f]}%s\n", f[s[i].stable_first].t_s,
               f[s[i].stable_last].t_s, i + 1 < ns ? "," : "");
    }
    printf(" ],\n \"frames\": [\n");
    for (size_t i = 0; i < ns; i++)
        printf("  {\"index\": %zu, \"t_s\": %.6f, \"shot\": %zu, \"state\": \"done\", "
               "\"duplicate_of\": null}%s\n",
               i, f[s[i].chosen].t_s, i, i + 1 < ns ? "," : "");
    printf(" ]}\n");
    free(s);
    free(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "dump"))
        return dump(argv[2], argv[3]);
    if (argc == 3 && !strcmp(argv[1], "detect"))
        return detect(argv[2]);
    fprintf(stderr, "usage: sdtune dump FILE FEATS | sdtune detect FEATS\n");
    return 2;
}
