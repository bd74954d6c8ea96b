/*
 * sdtrace: the shot detector's per-frame signals over a stretch of a video, to see why a
 * boundary is missed or found where there is none. It includes lib/visual/shotdetect.c itself,
 * so it reads the very statics the detector uses and the library carries no trace.
 *   sdtrace FEATS T0 T1     FEATS as `sdtune dump` writes it; times in seconds
 * Built like bench/transitions_bench.sh builds kfdump, from the repository root:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc -o sdtrace tests/tools/sdtrace.c \
 *       build/rel/libvidtheque.a $(pkg-config --libs $PKGS) -lm -pthread
 * (PKGS as in the Makefile). Not built by `make`: a tool to look with, not a test.
 * One line per analysed frame in [T0, T1]: its features, the grid's and the thumbnail's
 * difference to the previous frame, then for each dissolve window (half-width h) the
 * ends a, b, the net change, the share off the half-way mix (lin/net), the rates outside
 * (ra, rb), and which tests pass: r(ate), s(mooth ramp), v(ariance dip); last, the
 * dissolve score grad_at gives the frame (after fades are taken) and its window.
 */
#include "../../lib/visual/shotdetect.c"

#include <stdio.h>

static void trace_window(const struct vt_sd_feat *f, size_t n, size_t m, double h)
{
    double t = f[m].t_s, net, lin, lout, ra = -1, rb = -1;
    size_t a = near_idx(f, n, t - h), b = near_idx(f, n, t + h), a2, b2;
    int rate = 0;

    if (a >= m || b <= m) {
        printf(" | h%.2f -", h);
        return;
    }
    net = gdist(&f[a], &f[b]);
    lin = glin(&f[m], &f[a], &f[b]);
    lout = fmin(f[b].t_s - f[a].t_s, GR_OUT_S);
    a2 = near_idx(f, n, f[a].t_s - lout);
    b2 = near_idx(f, n, f[b].t_s + lout);
    if (f[a].t_s > f[a2].t_s && f[b2].t_s > f[b].t_s) {
        double dur = f[b].t_s - f[a].t_s;

        ra = gdist(&f[a2], &f[a]) / (f[a].t_s - f[a2].t_s);
        rb = gdist(&f[b], &f[b2]) / (f[b2].t_s - f[b].t_s);
        rate = net >= GR_RATE * fmin(ra, rb) * dur + 2 && net >= fmax(ra, rb) * dur;
    }
    printf(" | h%.2f %zu-%zu net %5.1f lin %.2f ra %5.1f rb %5.1f %c%c%c", h, a, b, net,
           net > 0 ? lin / net : 0, ra, rb, rate ? 'r' : '.', smooth_ramp(f, a, b) ? 's' : '.',
           var_dip(f, a, m, b) ? 'v' : '.');
}

int main(int argc, char **argv)
{
    struct vt_sd_feat *f = NULL;
    size_t n = 0, cap = 0;
    double t0, t1;
    struct bounds b = {0};
    uint8_t *mask;
    uint32_t *pmask;
    FILE *fp;

    if (argc != 4) {
        fprintf(stderr, "usage: sdtrace FEATS T0 T1\n");
        return 2;
    }
    fp = fopen(argv[1], "rb");
    if (!fp) {
        fprintf(stderr, "sdtrace: cannot open '%s'\n", argv[1]);
        return 1;
    }
    for (;;) {
        vt_grow((void **)&f, &cap, n + 1, sizeof(*f));
        if (fread(&f[n], sizeof(*f), 1, fp) != 1)
            break;
        n++;
    }
    fclose(fp);
    mask = vt_xcalloc(n ? n : 1, 1);
    pmask = vt_xcalloc(n + 1, sizeof(*pmask));
    find_fades(f, n, mask, &b);
    for (size_t i = 0; i < n; i++)
        pmask[i + 1] = pmask[i] + mask[i];
    t0 = strtod(argv[2], NULL);
    t1 = strtod(argv[3], NULL);
    for (size_t m = 1; m + 1 < n; m++) {
        if (f[m].t_s < t0 || f[m].t_s > t1)
            continue;
        printf("%5zu %7.3f%c mean %5.1f sd %5.1f d1 %5.2f ch %.3f dl %5.2f gd %5.2f", m, f[m].t_s,
               f[m].key ? 'K' : ' ', f[m].mean, f[m].stddev, f[m].d1, f[m].changed, f[m].dlong,
               gdist(&f[m - 1], &f[m]));
        for (size_t k = 0; k < VT_ARRAY_LEN(gr_half_s); k++)
            trace_window(f, n, m, gr_half_s[k]);
        if (mask[m]) {
            printf(" | fade\n");
        } else {
            struct grad g = grad_at(f, n, pmask, m);

            printf(" | g %.1f %zu-%zu\n", g.score, g.a, g.b);
        }
    }
    free(b.v);
    free(mask);
    free(pmask);
    free(f);
    return 0;
}
